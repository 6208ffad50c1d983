-- torch.amp.GradScaler -- loss scaling for float16 training, as PyTorch's:
--   local scaler = torch.amp.GradScaler('cuda')
--   scaler:scale(loss):backward(); scaler:step(opt); scaler:update()
-- The loss is multiplied by the scale so that small float16 gradients do
-- not flush to zero; step() unscales the gradients and skips the update
-- when any is inf or NaN; update() halves the scale after such a step and
-- doubles it after growth_interval clean ones. The check is one fused C op
-- per device (torch._amp_foreach_non_finite_check_and_unscale_) leaving its
-- verdict in a device tensor, read once per step. The scale itself is kept
-- on the host: step() has read the verdict anyway.
local torch = require "torch"

local GradScaler = {__name = "GradScaler"}
GradScaler.__index = GradScaler

local READY, UNSCALED, STEPPED = 0, 1, 2
local DEFAULTS = {init_scale = 2.0 ^ 16, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000,
                  enabled = true}

local function fail(msg, level) error("GradScaler: " .. msg, (level or 1) + 1) end

-- GradScaler([device='cuda'][, {init_scale=65536, growth_factor=2, backoff_factor=0.5,
-- growth_interval=2000, enabled=true}])
local function new(device, opts)
  if type(device) == "table" and getmetatable(device) == nil then device, opts = nil, device end
  if type(device) == "table" and device.type then device = device.type end
  device = device or "cuda"
  if type(device) ~= "string" or not (device:match("^cuda") or device == "cpu") then
    fail("unsupported device " .. tostring(device) .. " (expected 'cuda' or 'cpu')", 2)
  end
  local o = {}
  for k, v in pairs(DEFAULTS) do o[k] = v end
  torch._check_options("GradScaler", opts or {}, "init_scale growth_factor backoff_factor growth_interval enabled")
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.growth_factor <= 1 then fail("the growth factor must be > 1.0", 2) end
  if o.backoff_factor >= 1 then fail("the backoff factor must be < 1.0", 2) end
  if math.type(o.growth_interval) ~= "integer" or o.growth_interval < 1 then
    fail("growth_interval must be a positive integer", 2)
  end
  local enabled = o.enabled and true or false
  if enabled and device:match("^cuda") and not torch.cuda.is_available() then
    io.stderr:write("GradScaler: CUDA is not available; the scaler is disabled (scale() and step() pass through)\n")
    enabled = false
  end
  return setmetatable({
    device = device:match("^(%a+)"), _enabled = enabled, _scale = o.init_scale, _init_scale = o.init_scale,
    _growth_factor = o.growth_factor, _backoff_factor = o.backoff_factor, _growth_interval = o.growth_interval,
    _growth_tracker = 0, _states = setmetatable({}, {__mode = "k"}),
  }, GradScaler)
end

function GradScaler:is_enabled() return self._enabled end

-- The optimizer's state for this iteration: stage and verdicts per device.
function GradScaler:_state(optimizer)
  local s = self._states[optimizer]
  if not s then
    s = {stage = READY, found_inf = {}}
    self._states[optimizer] = s
  end
  return s
end

local function scale_all(v, s)
  if torch.is_tensor(v) then return v * s end
  if type(v) == "table" then
    local r = {}
    for k, e in pairs(v) do r[k] = scale_all(e, s) end
    return r
  end
  fail("scale: expected a tensor or a table of tensors, got " .. type(v), 3)
end

-- scale(outputs): outputs (a tensor, or a table of them) times the scale.
function GradScaler:scale(outputs)
  if not self._enabled then return outputs end
  return scale_all(outputs, self._scale)
end

-- unscale_(optimizer): divides the optimizer's gradients by the scale in
-- place and records, per device, whether any is inf or NaN. Optional
-- before step() (to clip gradients); at most once per update().
function GradScaler:unscale_(optimizer)
  if not self._enabled then return end
  local st = self:_state(optimizer)
  if st.stage == UNSCALED then fail("unscale_() has already been called on this optimizer since the last update()", 2) end
  if st.stage == STEPPED then fail("unscale_() is being called after step()", 2) end
  local by_device, order = {}, {}
  for _, g in ipairs(optimizer.param_groups) do
    for _, p in ipairs(g.params) do
      local grad = p.grad
      if grad ~= nil then
        if grad.dtype == torch.float16 then fail("attempting to unscale float16 gradients (keep the parameters in float32)", 2) end
        local key = tostring(grad.device)
        if not by_device[key] then
          by_device[key] = {}
          order[#order + 1] = key
        end
        local list = by_device[key]
        list[#list + 1] = grad
      end
    end
  end
  local inv = 1.0 / self._scale
  for _, key in ipairs(order) do
    local list = by_device[key]
    local found = torch.zeros(1, {device = list[1].device})
    torch.no_grad(function() torch._amp_foreach_non_finite_check_and_unscale_(list, found, inv) end)
    st.found_inf[key] = found
  end
  st.stage = UNSCALED
end

-- The number of devices whose gradients held an inf or NaN (one host read each).
local function count_found(st)
  if st.found_count == nil then
    local n = 0
    for _, f in pairs(st.found_inf) do n = n + f:item() end
    st.found_count = n
  end
  return st.found_count
end

-- step(optimizer, ...): unscales (unless unscale_ was called) and runs
-- optimizer:step(...) only if every gradient is finite; returns its result.
function GradScaler:step(optimizer, ...)
  if not self._enabled then return optimizer:step(...) end
  if select("#", ...) > 0 and type((...)) == "function" then
    fail("closure use is not currently supported if GradScaler is enabled", 2)
  end
  local st = self:_state(optimizer)
  if st.stage == STEPPED then fail("step() has already been called since the last update()", 2) end
  if st.stage == READY then self:unscale_(optimizer) end
  local ret
  if next(st.found_inf) == nil then
    fail("no inf checks were recorded for this optimizer (it has no gradients)", 2)
  end
  if count_found(st) == 0 then ret = optimizer:step(...) end
  st.stage = STEPPED
  return ret
end

-- update([new_scale]): the scale for the next iteration. With no argument:
-- times backoff_factor if a step found inf/NaN, times growth_factor after
-- growth_interval clean steps in a row. new_scale (a number or a
-- one-element tensor) sets it directly.
function GradScaler:update(new_scale)
  if not self._enabled then return end
  if new_scale ~= nil then
    if torch.is_tensor(new_scale) then
      if new_scale:numel() ~= 1 then fail("update: new_scale must be a number or a one-element tensor", 2) end
      new_scale = new_scale:item()
    elseif type(new_scale) ~= "number" then
      fail("update: new_scale must be a number or a one-element tensor, got " .. type(new_scale), 2)
    end
    self._scale = new_scale
  else
    local any, found = false, 0
    for _, st in pairs(self._states) do
      if next(st.found_inf) ~= nil then
        any = true
        found = found + count_found(st)
      end
    end
    if not any then fail("no inf checks were recorded prior to update()", 2) end
    if found > 0 then
      self._scale = self._scale * self._backoff_factor
      self._growth_tracker = 0
    else
      self._growth_tracker = self._growth_tracker + 1
      if self._growth_tracker == self._growth_interval then
        local s = self._scale * self._growth_factor
        if s < math.huge then self._scale = s end
        self._growth_tracker = 0
      end
    end
  end
  self._states = setmetatable({}, {__mode = "k"})
end

function GradScaler:get_scale() return self._enabled and self._scale or 1.0 end
function GradScaler:get_growth_factor() return self._growth_factor end
function GradScaler:set_growth_factor(v) self._growth_factor = v end
function GradScaler:get_backoff_factor() return self._backoff_factor end
function GradScaler:set_backoff_factor(v) self._backoff_factor = v end
function GradScaler:get_growth_interval() return self._growth_interval end
function GradScaler:set_growth_interval(v) self._growth_interval = v end
function GradScaler:_get_growth_tracker() return self._growth_tracker end

-- state_dict(): {scale, growth_factor, backoff_factor, growth_interval,
-- _growth_tracker} (PyTorch's keys); empty when disabled.
function GradScaler:state_dict()
  if not self._enabled then return {} end
  return {scale = self._scale, growth_factor = self._growth_factor, backoff_factor = self._backoff_factor,
          growth_interval = self._growth_interval, _growth_tracker = self._growth_tracker}
end

function GradScaler:load_state_dict(sd)
  if not self._enabled then return end
  if type(sd) ~= "table" or next(sd) == nil then
    fail("load_state_dict: the state dict is empty, possibly because it was saved from a disabled GradScaler", 2)
  end
  local function num(k)
    local v = sd[k]
    if torch.is_tensor(v) then v = v:item() end
    if type(v) ~= "number" then fail("load_state_dict: missing or bad '" .. k .. "'", 3) end
    return v
  end
  self._scale = num("scale")
  self._growth_factor = num("growth_factor")
  self._backoff_factor = num("backoff_factor")
  self._growth_interval = math.tointeger(num("growth_interval")) or num("growth_interval")
  self._growth_tracker = math.tointeger(num("_growth_tracker")) or num("_growth_tracker")
end

function GradScaler:__tostring()
  return ("GradScaler(device='%s', scale=%g, enabled=%s)"):format(self.device, self:get_scale(), tostring(self._enabled))
end

-- The constructor and the methods are public entry points: an error raised
-- inside the library names GradScaler at the caller's line.
for k, f in pairs(GradScaler) do
  if type(f) == "function" and k:sub(1, 1) ~= "_" then GradScaler[k] = torch._public(f, "GradScaler." .. k) end
end

return setmetatable(GradScaler, {__call = torch._public(function(_, ...) return new(...) end, "GradScaler")})
