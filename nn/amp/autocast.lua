-- torch.amp.autocast -- regions of mixed precision, as torch.autocast:
--   local ac <close> = torch.autocast('cuda', torch.bfloat16)   -- a guard
--   torch.autocast('cuda', {dtype=, enabled=, cache_enabled=}, fn)  -- fn's results
-- Entering saves the device type's autocast state and sets it; closing (also
-- when an error unwinds through a <close> variable) puts it back. The ops'
-- cast policies are applied in C (lua_bindings/l_autocast.c).
local torch = require "torch"

local Autocast = {__name = "torch.autocast"}
Autocast.__index = Autocast

local function is_dtype(v)
  local mt = type(v) == "table" and getmetatable(v)
  return type(v) == "string" or (mt and mt.__name == "torch.dtype")
end

-- The arguments after the device type: a dtype, an options table and a
-- function, each optional, in that order.
local function parse(...)
  local dtype, opts, fn
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if type(a) == "function" then
      fn = a
    elseif is_dtype(a) then
      dtype = a
    elseif type(a) == "table" then
      opts = a
    elseif a ~= nil then
      error("torch.autocast: expected a dtype, an options table {dtype=, enabled=, cache_enabled=} or a function, got "
            .. type(a), 3)
    end
  end
  opts = torch._check_options("torch.autocast", opts or {}, "dtype enabled cache_enabled")
  return opts.dtype or dtype, opts.enabled, opts.cache_enabled, fn
end

local function device_type(d)
  if type(d) == "table" and d.type then d = d.type end
  if type(d) ~= "string" then
    error("torch.autocast: expected a device type ('cuda' or 'cpu') as argument #1, got " .. type(d), 3)
  end
  local t = d:match("^(%a+)")
  if t ~= "cpu" and t ~= "cuda" then
    error(("torch.autocast: unsupported device type '%s' (expected 'cpu' or 'cuda')"):format(d), 3)
  end
  return t
end

-- Enters the region now (PyTorch's __enter__).
function Autocast:__enter()
  local d = self.device
  self._prev = {torch.is_autocast_enabled(d), torch.get_autocast_dtype(d), torch.is_autocast_cache_enabled()}
  torch.set_autocast_enabled(d, self.enabled)
  torch.set_autocast_dtype(d, self.fast_dtype)
  torch.set_autocast_cache_enabled(self.cache_enabled)
  torch.autocast_increment_nesting()
  self._open = true
  return self
end

-- Leaves it: the previous state comes back; the outermost region drops the
-- cached weight casts. Closing twice does nothing.
function Autocast:__exit()
  if not self._open then return end
  self._open = false
  local p, d = self._prev, self.device
  torch.autocast_decrement_nesting()
  torch.set_autocast_enabled(d, p[1])
  torch.set_autocast_dtype(d, p[2])
  torch.set_autocast_cache_enabled(p[3])
end
Autocast.close = Autocast.__exit
Autocast.__close = Autocast.__exit

function Autocast:__tostring()
  return ("torch.autocast(device_type='%s', dtype=%s, enabled=%s%s)"):format(self.device, tostring(self.fast_dtype),
    tostring(self.enabled), self._open and "" or ", closed")
end

-- autocast(device_type[, dtype][, {dtype=, enabled=true, cache_enabled=true}][, fn])
local function autocast(device, ...)
  local d = device_type(device)
  local dtype, enabled, cache, fn = parse(...)
  if dtype ~= nil then
    -- a name such as 'bfloat16' -> the dtype (no tensor made: a compiled step would see a constant on the CPU)
    if type(dtype) == "string" then dtype = torch[(dtype:gsub("^torch%.", ""))] or dtype end
    if dtype ~= torch.float16 and dtype ~= torch.bfloat16 then
      error(("torch.autocast: the dtype must be torch.float16 or torch.bfloat16, got %s"):format(tostring(dtype)), 2)
    end
  end
  local self = setmetatable({
    device = d,
    fast_dtype = dtype or torch.get_autocast_dtype(d),
    enabled = enabled ~= false,
    cache_enabled = cache == nil and torch.is_autocast_cache_enabled() or cache and true or false,
  }, Autocast)
  self:__enter()
  if fn then
    local guard <close> = self
    return fn()
  end
  return self
end

-- a public entry point: an error raised inside the library names
-- torch.autocast at the caller's line (fn's own errors pass unchanged)
return torch._public(autocast, "torch.autocast")
