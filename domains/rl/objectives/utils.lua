-- torch.rl.objectives.utils -- target-network updaters: SoftUpdate
-- (Polyak averaging, target <- eps target + (1 - eps) source) and
-- HardUpdate (copy every value_network_update_interval steps), over the
-- target copies a loss made (LossModule:target_pairs()).
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.rl.objectives.common"

local M = {}
local PREFIX = C.PREFIX

-- pairs_of(fname, loss) -> the loss's {source, target} parameter and buffer lists.
local function pairs_of(fname, loss)
  if type(loss) ~= "table" or type(loss.target_pairs) ~= "function" then
    error(fname .. ": loss_module must be a torch.rl.objectives loss, got " .. type(loss), 3)
  end
  local tp = loss:target_pairs()
  if #tp == 0 then
    error(fname .. ": the loss has no target networks (create it with delay_value / delay_qvalue / delay_actor = true)", 3)
  end
  local out = {}
  for _, p in ipairs(tp) do
    local s, t = p.source:parameters(), p.target:parameters()
    for i = 1, #s do out[#out + 1] = {s[i], t[i]} end
    local sb, tb = p.source:buffers(), p.target:buffers()
    for i = 1, #sb do out[#out + 1] = {sb[i], tb[i]} end
  end
  return out
end

local Updater = {}
Updater.__index = Updater

-- init_() -> self: copies the sources into the targets.
function Updater:init_()
  torch.no_grad(function() for _, p in ipairs(self._pairs) do p[2]:copy_(p[1]) end end)
  return self
end

-- SoftUpdate(loss_module[, {eps=, tau=}]): step() sets every target
-- parameter to eps * target + (1 - eps) * source (tau = 1 - eps; eps
-- defaults to 0.999).
local SoftUpdate = setmetatable({}, {__index = Updater})
SoftUpdate.__index = SoftUpdate
SoftUpdate.__name = PREFIX .. "SoftUpdate"
M.SoftUpdate = SoftUpdate
setmetatable(SoftUpdate, {__index = Updater, __call = function(cls, loss, ...)
  local fname = PREFIX .. "SoftUpdate"
  local o = U.args(fname, {"eps", "tau"}, nil, ...)
  if o.eps ~= nil and o.tau ~= nil then error(fname .. ": pass eps or tau, not both", 2) end
  local eps = o.eps or (o.tau and 1 - o.tau) or 0.999
  if type(eps) ~= "number" or eps < 0 or eps > 1 then
    error(("%s: eps must be in [0, 1] (tau = 1 - eps), got %s"):format(fname, tostring(eps)), 2)
  end
  return setmetatable({eps = eps, _pairs = pairs_of(fname, loss), loss_module = loss}, cls)
end})

-- step() -> self.
function SoftUpdate:step()
  local eps = self.eps
  torch.no_grad(function()
    for _, p in ipairs(self._pairs) do p[2]:mul_(eps):add_(p[1], {alpha = 1 - eps}) end
  end)
  return self
end

-- HardUpdate(loss_module[, {value_network_update_interval=1000}]):
-- step() copies the sources into the targets every interval-th call.
local HardUpdate = setmetatable({}, {__index = Updater})
HardUpdate.__index = HardUpdate
HardUpdate.__name = PREFIX .. "HardUpdate"
M.HardUpdate = HardUpdate
setmetatable(HardUpdate, {__index = Updater, __call = function(cls, loss, ...)
  local fname = PREFIX .. "HardUpdate"
  local o = U.args(fname, {"value_network_update_interval"}, {value_network_update_interval = 1000}, ...)
  U.size(fname, "value_network_update_interval", o.value_network_update_interval, 1)
  return setmetatable({value_network_update_interval = o.value_network_update_interval, counter = 0,
                       _pairs = pairs_of(fname, loss), loss_module = loss}, cls)
end})

function HardUpdate:step()
  self.counter = self.counter + 1
  if self.counter == self.value_network_update_interval then
    self.counter = 0
    self:init_()
  end
  return self
end

return M
