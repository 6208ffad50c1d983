-- torch.rl.modules.keys -- TensorDict keys as TorchRL writes them: a
-- string ("action") or a nested path ({"next", "reward"}). Checking,
-- printing and reading keys with errors that name the caller; no tensors.
local M = {}

-- str(key) -> "action" or "(next, reward)".
function M.str(key)
  if type(key) == "table" then return "(" .. table.concat(key, ", ") .. ")" end
  return tostring(key)
end

-- check(fname, what, key) -> key, after checking it is a string or a list of strings.
function M.check(fname, what, key)
  if type(key) == "string" then return key end
  if type(key) == "table" and #key > 0 then
    local ok = true
    for _, k in ipairs(key) do ok = ok and type(k) == "string" end
    if ok then return key end
  end
  error(("%s: %s must be a key (a string or a list of strings such as {\"next\", \"reward\"}), got %s")
        :format(fname, what, type(key) == "table" and "a table" or tostring(key)), 3)
end

-- list(fname, what, keys[, default]) -> a list of keys (one key becomes a list of one).
function M.list(fname, what, keys, default)
  if keys == nil then keys = default end
  if type(keys) == "string" then return {keys} end
  if type(keys) ~= "table" then
    error(("%s: %s must be a list of keys, got %s"):format(fname, what, type(keys)), 3)
  end
  -- a single nested key {"next", "obs"} is ambiguous with a list of two keys: lists of strings are lists of keys
  local out = {}
  for i, k in ipairs(keys) do out[i] = M.check(fname, what .. "[" .. i .. "]", k) end
  return out
end

-- equal(a, b): the same key.
function M.equal(a, b)
  if type(a) == "string" or type(b) == "string" then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- get(fname, td, key) -> td's value at key; a clear error when td is not a
-- TensorDict or lacks the key.
function M.get(fname, td, key)
  if type(td) ~= "table" or type(td.get) ~= "function" then
    error(("%s: expected a TensorDict, got %s"):format(fname, type(td)), 3)
  end
  local v = td:get(key)
  if v == nil then
    local have = {}
    for _, k in ipairs(td:keys({include_nested = true, leaves_only = true})) do have[#have + 1] = M.str(k) end
    error(("%s: the TensorDict has no key '%s' (it has: %s)"):format(fname, M.str(key), table.concat(have, ", ")), 3)
  end
  return v
end

-- nested(prefix, key) -> {prefix, key...}: key inside the sub-TensorDict prefix.
function M.nested(prefix, key)
  if type(key) == "string" then return {prefix, key} end
  local t = {prefix}
  for _, k in ipairs(key) do t[#t + 1] = k end
  return t
end

return M
