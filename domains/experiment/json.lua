-- torch.experiment.json -- the JSON of the experiment files (config.json,
-- status.json, metrics.jsonl): encode with sorted keys (lists for
-- sequences), decode into Lua tables. Like Python's json module, NaN and
-- the infinities are written and read as NaN, Infinity and -Infinity.
local M = {}

local escapes = {['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t"}

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return escapes[c] or ("\\u%04x"):format(c:byte()) end) .. '"'
end

-- The shortest of %.15g / %.17g that reads back as the same number.
local function encode_number(v)
  if v ~= v then return "NaN" end
  if v == math.huge then return "Infinity" end
  if v == -math.huge then return "-Infinity" end
  if math.type(v) == "integer" then return ("%d"):format(v) end
  local s = ("%.15g"):format(v)
  if tonumber(s) ~= v then s = ("%.17g"):format(v) end
  if not s:find("[.eEn]") then s = s .. ".0" end -- keep floats floats
  return s
end

local function is_list(t)
  local n = #t
  if n == 0 then return next(t) == nil end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

-- key_order(keys) may reorder an object's keys (default: sorted).
local function encode(v, out, key_order, depth)
  local tv = type(v)
  if tv == "nil" then out[#out + 1] = "null"
  elseif tv == "boolean" then out[#out + 1] = tostring(v)
  elseif tv == "number" then out[#out + 1] = encode_number(v)
  elseif tv == "string" then out[#out + 1] = encode_string(v)
  elseif tv == "table" then
    if depth > 64 then error("json: value nested too deeply (a cycle?)", 0) end
    if is_list(v) and next(v) ~= nil then
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = ", " end
        encode(x, out, key_order, depth + 1)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do
        if type(k) ~= "string" and math.type(k) ~= "integer" then
          error("json: cannot encode a table key of type " .. type(k), 0)
        end
        keys[#keys + 1] = tostring(k)
      end
      if key_order then key_order(keys) else table.sort(keys) end
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = ", " end
        out[#out + 1] = encode_string(k)
        out[#out + 1] = ": "
        local x = v[k]
        if x == nil then x = v[tonumber(k)] end
        encode(x, out, key_order, depth + 1)
      end
      out[#out + 1] = "}"
    end
  else
    error("json: cannot encode a " .. tv, 0)
  end
end

-- json.encode(v[, key_order]) -> one line of JSON.
function M.encode(v, key_order)
  local out = {}
  encode(v, out, key_order, 0)
  return table.concat(out)
end

local function decode_error(s, i, what)
  error(("json: %s at character %d"):format(what, i), 0)
end

local function skip(s, i)
  return s:find("[^ \t\r\n]", i) or #s + 1
end

local decode_value

local function decode_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == "" then decode_error(s, j, "unterminated string") end
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = {['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t"}
      if map[e] then
        out[#out + 1] = map[e]
        j = j + 2
      elseif e == "u" then
        local hex = s:sub(j + 2, j + 5)
        local code = hex:match("^%x%x%x%x$") and tonumber(hex, 16)
        if not code then decode_error(s, j, "bad \\u escape") end
        out[#out + 1] = utf8.char(code)
        j = j + 6
      else
        decode_error(s, j, "bad escape")
      end
    else
      local k = s:find('["\\]', j) or #s + 1
      out[#out + 1] = s:sub(j, k - 1)
      j = k
    end
  end
end

local literals = {["true"] = true, ["false"] = false, ["NaN"] = 0 / 0, ["Infinity"] = math.huge,
  ["-Infinity"] = -math.huge}

function decode_value(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return t, i + 1 end
    while true do
      if s:sub(i, i) ~= '"' then decode_error(s, i, "expected a string key") end
      local k
      k, i = decode_string(s, i)
      i = skip(s, i)
      if s:sub(i, i) ~= ":" then decode_error(s, i, "expected ':'") end
      t[k], i = decode_value(s, i + 1)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "}" then return t, i + 1 end
      if d ~= "," then decode_error(s, i, "expected ',' or '}'") end
      i = skip(s, i + 1)
    end
  elseif c == "[" then
    local t = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return t, i + 1 end
    while true do
      t[#t + 1], i = decode_value(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "]" then return t, i + 1 end
      if d ~= "," then decode_error(s, i, "expected ',' or ']'") end
      i = i + 1
    end
  elseif c == '"' then
    return decode_string(s, i)
  elseif c == "n" and s:sub(i, i + 3) == "null" then
    return nil, i + 4
  end
  for word, v in pairs(literals) do
    if s:sub(i, i + #word - 1) == word then return v, i + #word end
  end
  local num = s:match("^-?%d+%.?%d*", i)
  if num then
    num = num .. (s:match("^[eE][-+]?%d+", i + #num) or "")
    local v = tonumber(num)
    if v == nil then decode_error(s, i, "bad number") end
    if num:find("[.eE]") then v = v + 0.0 end
    return v, i + #num
  end
  decode_error(s, i, c == "" and "unexpected end" or ("unexpected '" .. c .. "'"))
end

-- json.decode(s) -> the value (raises "json: ... at character N").
function M.decode(s)
  local v, i = decode_value(s, 1)
  i = skip(s, i)
  if i <= #s then decode_error(s, i, "trailing characters") end
  return v
end

-- Reads and decodes a JSON file; nil, message if it cannot be read or parsed.
function M.read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  local ok, v = pcall(M.decode, s)
  if not ok then return nil, path .. ": " .. v end
  return v
end

-- Writes v as JSON (plus a newline) to path through a temporary file and a
-- rename, so readers never see half a file.
function M.write(path, v)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("cannot write " .. path .. ": " .. tostring(err), 0) end
  f:write(M.encode(v), "\n")
  f:close()
  local ok, rerr = os.rename(tmp, path)
  if not ok then error("cannot write " .. path .. ": " .. tostring(rerr), 0) end
end

return M
