-- torch.nn.util -- small helpers shared by the nn, functional and optim
-- packages: optional-argument parsing (positional in PyTorch's order or a
-- trailing options table by name), shape strings, help texts. No tensors math.
local torch = require "torch"

local U = {}

local is_tensor = torch.is_tensor

-- True if v is an options table: a plain table (no metatable) with a string key.
function U.is_options(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return false end
  for k in next, v do
    if type(k) == "string" then return true end
  end
  return false
end
local is_options = U.is_options

-- opts(fname, v, names): true if v is an options table, after checking its
-- keys against names (see U.check); for a parameter that may be given
-- positionally or in a table: if U.opts("f", x, "x") then x = x.x end
function U.opts(fname, v, names)
  if not is_options(v) then return false end
  torch._check_options(fname, v, names)
  return true
end

-- The one option checker (lua_bindings/args.c, shared with the C
-- functions): check(fname, opts, names) raises on a key of the table opts
-- that is not among names (a list or a space-separated string), naming
-- fname and the closest valid name; returns opts.
U.check = torch._check_options
local check_options = U.check

-- choice(fname, what, value, choices): value must be one of the
-- space-separated choices ("unknown mode 'x' (did you mean ...?)").
U.choice = torch._check_choice

-- public(fn, name): fn as a public entry point: an error raised inside the
-- library during the call is raised at the caller's line, naming `name` (a
-- string, or a function of the call's first argument giving it); errors of
-- the user's own code pass unchanged (lua_bindings/l_public.c).
U.public = torch._public

-- Wraps every function field of table t whose name does not start with "_"
-- with U.public, named prefix .. key ("F." .. "mse_loss").
function U.public_table(t, prefix)
  for k, v in pairs(t) do
    if type(v) == "function" and type(k) == "string" and k:sub(1, 1) ~= "_" then t[k] = U.public(v, prefix .. k) end
  end
  return t
end

-- Optional arguments of fname: names lists them in PyTorch's order; they come
-- positionally (...) and/or in one trailing options table. Returns a table
-- name -> value with defaults filled in. Unknown names raise an error.
function U.args(fname, names, defaults, ...)
  local n = select("#", ...)
  local o = {}
  local last = n > 0 and select(n, ...) or nil
  if is_options(last) or (type(last) == "table" and getmetatable(last) == nil and next(last) == nil) then
    n = n - 1
  else
    last = nil
  end
  if n > #names then
    error(("%s: expected at most %d optional arguments, got %d"):format(fname, #names, n), 3)
  end
  for i = 1, n do o[names[i]] = (select(i, ...)) end
  if last then
    check_options(fname, last, names)
    for k, v in pairs(last) do
      if o[k] == nil then o[k] = v end
    end
  end
  if defaults then
    for k, v in pairs(defaults) do if o[k] == nil then o[k] = v end end
  end
  return o
end

-- Creation options for an optional dtype and device (never an empty table,
-- which the engine would read as a size list).
function U.topts(dtype, device) return {dtype = dtype, device = device, requires_grad = false} end

-- size(fname, what, v[, min=0]): v must be an integer >= min (a layer's
-- in_features, channels, ...); returns it. The message names fname and the
-- argument: "nn.Linear: in_features must be a non-negative integer, got -1".
function U.size(fname, what, v, min)
  min = min or 0
  if math.type(v) ~= "integer" or v < min then
    local want = min == 0 and "a non-negative integer" or min == 1 and "a positive integer" or "an integer >= " .. min
    error(("%s: %s must be %s, got %s"):format(fname, what, want, type(v) == "number" and tostring(v) or type(v)), 3)
  end
  return v
end

-- number(fname, what, v): v must be a number; returns it.
function U.number(fname, what, v)
  if type(v) ~= "number" then error(("%s: %s must be a number, got %s"):format(fname, what, type(v)), 3) end
  return v
end

-- "32x100" for a tensor or a size table; "scalar" for 0-dim.
function U.shape_str(t)
  local s = is_tensor(t) and t:size() or t
  if #s == 0 then return "scalar" end
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return table.concat(parts, "x")
end

-- A list of n copies of v, or v itself (checked) if it is already a list.
function U.ntuple(v, n, what)
  if type(v) == "table" then
    if #v == 1 and n > 1 then local r = {} for i = 1, n do r[i] = v[1] end return r end
    if #v ~= n then error(("%s must be a number or a list of %d numbers"):format(what or "size", n), 3) end
    return v
  end
  local r = {}
  for i = 1, n do r[i] = v end
  return r
end

-- Writes a value like PyTorch's repr of module arguments: (3, 3), true, 'zeros'.
function U.repr(v)
  if type(v) == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = U.repr(v[i]) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  elseif type(v) == "string" then
    return "'" .. v .. "'"
  elseif math.type(v) == "float" then
    local s = ("%g"):format(v)
    if not s:find("[%.e]") and not s:find("n") then s = s .. ".0" end
    return s
  end
  return tostring(v)
end

local help = debug.getregistry()["mtl.help"]

-- Attaches one-line help texts: tbl[name] = text for each function of fns.
function U.doc(fns, texts)
  if not help then return end
  for name, text in pairs(texts) do
    local f = fns[name]
    if type(f) == "function" then help[f] = text end
  end
end

-- Reduces an elementwise loss by reduction ('mean' | 'sum' | 'none').
function U.reduce(loss, reduction, fname)
  if reduction == "mean" then return loss:mean()
  elseif reduction == "sum" then return loss:sum()
  elseif reduction == "none" then return loss end
  U.choice(fname, "reduction", reduction, "mean sum none")
end

-- The positive (1-based) form of dim for a tensor of ndim dims.
function U.dim(d, ndim, fname)
  local r = d < 0 and ndim + d + 1 or d
  if r < 1 or r > ndim then
    error(("%s: dim %d is out of range for a tensor of %d dimensions"):format(fname or "dim", d, ndim), 3)
  end
  return r
end

return U
