-- torch.profiler.hooks -- installs and removes op wrappers: every C
-- function of the torch table, its op sub-tables (linalg, ...), the Tensor
-- method table and the Tensor metamethods is replaced by a wrapper. While
-- a profile runs they are recording wrappers (torch._profiler.wrap); stop
-- puts the originals back, so profiling costs nothing when off. The JIT
-- installs its own (install(make), never removed) once a compiled function
-- has a graph break: they count and substitute the op calls of its Lua
-- code (lua_bindings/l_jit_split.c). Functions saved in a local variable
-- before the wrappers went in are not seen.
local torch = require "torch"
local C = torch._profiler

local M = {}

-- not ops: queries, settings, printing, memory management
local SKIP = {
  is_tensor = true, time = true, Timer = true, help = true, set_num_threads = true, get_num_threads = true,
  manual_seed = true, seed = true, initial_seed = true, get_rng_state = true, set_rng_state = true,
  set_default_dtype = true, get_default_dtype = true, set_default_device = true, is_grad_enabled = true,
  set_grad_enabled = true, compile = true, size = true, dim = true, ndimension = true, numel = true, nelement = true,
  stride = true, is_contiguous = true, _version = true, type = true, element_size = true, data_ptr = true,
  is_floating_point = true, is_complex = true, storage_offset = true, register_hook = true, retain_grad = true,
  requires_grad_ = true, __gc = true, __close = true, __tostring = true, __len = true, __name = true, __lt = true,
  __le = true, __eq = true, __metatable = true, __concat = true, __call = true, __mode = true,
}

local META = {
  __add = "add", __sub = "sub", __mul = "mul", __div = "div", __mod = "remainder", __pow = "pow", __unm = "neg",
  __idiv = "floor_divide", __band = "bitwise_and", __bor = "bitwise_or", __bxor = "bitwise_xor",
  __shl = "bitwise_left_shift", __shr = "bitwise_right_shift", __bnot = "bitwise_not",
  __index = "index", __newindex = "index_put_",
}

-- sub-tables of torch holding ops, and the prefix of their op names
local SUBTABLES = {linalg = "linalg_", autograd = "autograd_", _backward = "backward_"}

local installed -- list of {table, key, original, wrapper}
local wrapper_of -- original C function -> its wrapper

-- Kept across profiles (weak): whether a function is a C function, and
-- the wrapper made for it by name, so a second profile starts quickly.
local c_of = setmetatable({}, {__mode = "k"})
local made = setmetatable({}, {__mode = "k"}) -- original -> {name -> wrapper}

local function is_c(f)
  if type(f) ~= "function" then return false end
  local c = c_of[f]
  if c == nil then
    c = debug.getinfo(f, "S").what == "C"
    c_of[f] = c
  end
  return c
end

local function profiler_wrapper(f, name, mode)
  local byname = made[f]
  if not byname then
    byname = {}
    made[f] = byname
  end
  local w = byname[name]
  if not w then
    w = C.wrap(f, name, mode)
    byname[name] = w
  end
  return w
end

-- A function registered under several names (neg, negative) is named by
-- the shortest, then the first in alphabetical order.
local function better(a, b)
  if a == nil then return b end
  if #a ~= #b then return #a < #b and a or b end
  return a < b and a or b
end

local canonical -- C function -> its name, from the torch and Tensor tables

local function collect_names()
  canonical = {}
  for _, t in ipairs{torch, torch.Tensor} do
    for k, f in pairs(t) do
      if type(k) == "string" and not SKIP[k] and is_c(f) then canonical[f] = better(canonical[f], k) end
    end
  end
end

local make_wrapper -- the factory of the installation being made
local original = setmetatable({}, {__mode = "k"}) -- a lasting wrapper -> the C function it wraps

-- Wraps the C functions of t (named prefix..key, or by names[key]).
local function wrap_table(t, prefix, names)
  local seen = {}
  for k, f in pairs(t) do
    if type(k) == "string" and not SKIP[k] and (names == nil or names[k]) and is_c(f) then
      seen[#seen + 1] = k
    end
  end
  for _, k in ipairs(seen) do
    local f = rawget(t, k)
    local name = names and names[k] or (prefix == "" and (canonical[original[f] or f] or k) or prefix .. k)
    local w = wrapper_of[f]
    if not w or names then w = make_wrapper(f, name, (k == "__index" or k == "__newindex") and "index" or "op") end
    wrapper_of[f] = wrapper_of[f] or w
    rawset(t, k, w)
    if make_wrapper ~= profiler_wrapper then original[w] = original[f] or f end
    installed[#installed + 1] = {t, k, f, w}
  end
end

-- Replaces the fields of loaded torch.* package tables that alias a
-- wrapped function.
local function wrap_aliases()
  for pkg, t in pairs(package.loaded) do
    if type(pkg) == "string" and pkg:match("^torch%.") and type(t) == "table" and t ~= torch then
      local hits = {}
      for k, f in pairs(t) do
        if wrapper_of[f] and rawget(t, k) == f then hits[#hits + 1] = k end
      end
      for _, k in ipairs(hits) do
        local f = rawget(t, k)
        rawset(t, k, wrapper_of[f])
        installed[#installed + 1] = {t, k, f, wrapper_of[f]}
      end
    end
  end
end

-- install([make]) -> handle: make(f, name, mode) makes the wrapper of C
-- function f (mode "index" for __index/__newindex); the profiler's by
-- default. remove(handle) puts the originals back.
function M.install(make)
  make_wrapper = make or profiler_wrapper
  installed, wrapper_of = {}, {}
  if not canonical then collect_names() end
  local meta = debug.getmetatable(torch.empty(0))
  -- small results of tensor arithmetic are "inline" tensors with a copy of
  -- the metatable (lua_bindings/tensor_ud.c); the probe makes it first
  local one = torch.ones(1)
  local inline_meta = debug.getmetatable(one + one)
  wrap_table(torch, "")
  for sub, prefix in pairs(SUBTABLES) do
    if type(rawget(torch, sub)) == "table" then wrap_table(rawget(torch, sub), prefix) end
  end
  wrap_table(torch.Tensor, "")
  wrap_table(meta, "", META)
  if inline_meta ~= meta then wrap_table(inline_meta, "", META) end
  wrap_aliases()
  local handle = installed
  installed, wrapper_of = nil, nil
  return handle
end

function M.remove(handle)
  if not handle then return end
  for i = #handle, 1, -1 do
    local e = handle[i]
    if rawget(e[1], e[2]) == e[4] then rawset(e[1], e[2], e[3]) end
  end
end

return M
