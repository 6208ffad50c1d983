-- torch.rl.modules.actors -- value-based actors: QValueModule (action
-- values -> greedy action, its value), QValueActor (a Q network followed
-- by it) and EGreedyModule (epsilon-greedy exploration with linear
-- annealing). Categorical actions are 1-based indices; one-hot actions
-- are int64 vectors.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"
local F = require "torch.nn.functional"
local K = require "torch.rl.modules.keys"
local E = require "torch.rl.modules.exploration"
local TDM = require "torch.rl.modules.tensordict_module"
local D = require "torch.distributions"

local M = {}
local PREFIX = "torch.rl.modules."

-- space_of(fname, action_space, spec) -> "categorical" or "one_hot".
local function space_of(fname, action_space, spec)
  if action_space == nil and spec ~= nil then
    local name = tostring(getmetatable(spec) and getmetatable(spec).__name or "")
    if name:find("OneHot") then action_space = "one_hot"
    elseif name:find("Categorical") then action_space = "categorical" end
  end
  action_space = action_space or "one_hot"
  if action_space == "one-hot" then action_space = "one_hot" end
  if action_space ~= "categorical" and action_space ~= "one_hot" then
    error(("%s: action_space must be \"categorical\" or \"one_hot\", got %s"):format(fname, tostring(action_space)), 3)
  end
  return action_space
end
M._space_of = space_of

local QValueModule = nn.Module:extend("QValueModule")
QValueModule.__prefix = PREFIX
M.QValueModule = QValueModule

-- QValueModule{action_space=, action_value_key="action_value",
-- out_keys={"action", "action_value", "chosen_action_value"}, spec=,
-- action_mask_key=}: argmax of the action values (masked-out actions
-- never chosen); chosen_action_value is [..., 1].
function QValueModule:__init(...)
  local fname = PREFIX .. "QValueModule"
  local o = U.args(fname, {"action_space", "action_value_key", "action_mask_key", "out_keys", "var_nums", "spec"},
                   {action_value_key = "action_value"}, ...)
  self.action_space = space_of(fname, o.action_space, o.spec)
  self.action_value_key = K.check(fname, "action_value_key", o.action_value_key)
  self.action_mask_key = o.action_mask_key
  self.out_keys = K.list(fname, "out_keys", o.out_keys, {"action", self.action_value_key, "chosen_action_value"})
  if #self.out_keys ~= 3 then error(fname .. ": out_keys must name 3 keys (action, action values, chosen value)", 2) end
  self.in_keys = {self.action_value_key}
  if o.action_mask_key then self.in_keys[2] = o.action_mask_key end
  rawset(self, "spec", o.spec)
end

function QValueModule:forward(td)
  local fname = PREFIX .. "QValueModule"
  local q = K.get(fname, td, self.action_value_key)
  local qa = q
  if self.action_mask_key then
    local mask = K.get(fname, td, self.action_mask_key)
    qa = q:masked_fill(mask:logical_not(), -math.huge)
  end
  local idx = qa:argmax(-1)
  local action, chosen
  if self.action_space == "categorical" then
    action = idx
    chosen = q:gather(-1, idx:unsqueeze(-1))
  else
    action = F.one_hot(idx, q.shape[q:dim()]):to(torch.int64)
    chosen = (q * action:to(q.dtype)):sum(-1, true)
  end
  td:set(self.out_keys[1], action)
  td:set(self.out_keys[2], q)
  td:set(self.out_keys[3], chosen)
  return td
end

local QValueActor = TDM.TensorDictSequential:extend("QValueActor")
QValueActor.__prefix = PREFIX
M.QValueActor = QValueActor

-- QValueActor(module[, in_keys={"observation"}, spec, action_space,
-- action_value_key="action_value", action_mask_key]) or
-- QValueActor{module=, ...}: module maps the observation to action
-- values [..., n_actions] (wrapped in a TensorDictModule unless it is one).
function QValueActor:__init(module, ...)
  local fname = PREFIX .. "QValueActor"
  local o
  if U.is_options(module) then o = module; module = o.module
  else
    o = U.args(fname, {"in_keys", "spec", "safe", "action_space", "action_value_key", "action_mask_key"}, nil, ...)
  end
  local avk = o.action_value_key or "action_value"
  if type(module) ~= "table" or type(module.out_keys) ~= "table" then
    module = TDM.TensorDictModule(module, o.in_keys or {"observation"}, {avk})
  end
  local q = QValueModule({action_space = o.action_space, action_value_key = avk, spec = o.spec,
                          action_mask_key = o.action_mask_key})
  TDM.TensorDictSequential.__init(self, module, q)
  self.action_space = q.action_space
  rawset(self, "spec", o.spec)
end

---------------------------------------------------------------- EGreedyModule

local EGreedy = nn.Module:extend("EGreedyModule")
EGreedy.__prefix = PREFIX
M.EGreedyModule = EGreedy

-- EGreedyModule(spec[, eps_init=1, eps_end=0.1, annealing_num_steps=1000,
-- action_key="action", action_mask_key]): under RANDOM exploration (or
-- none set) each batch element's action is replaced, with probability
-- eps, by spec:rand() (with action_mask_key, by a uniform draw among the
-- allowed actions). step(frames=1) lowers eps linearly to eps_end over
-- annealing_num_steps frames.
function EGreedy:__init(spec, ...)
  local fname = PREFIX .. "EGreedyModule"
  local o = U.args(fname, {"eps_init", "eps_end", "annealing_num_steps", "action_key", "action_mask_key", "device"},
                   {eps_init = 1.0, eps_end = 0.1, annealing_num_steps = 1000, action_key = "action"}, ...)
  if U.is_options(spec) then o = U.args(fname, {"spec", "eps_init", "eps_end", "annealing_num_steps", "action_key",
                                                "action_mask_key", "device"},
                                        {eps_init = 1.0, eps_end = 0.1, annealing_num_steps = 1000,
                                         action_key = "action"}, spec); spec = o.spec end
  if type(spec) ~= "table" or type(spec.rand) ~= "function" then
    error(fname .. ": spec must be an action spec with a rand(shape) method (e.g. env.action_spec), got "
          .. type(spec), 2)
  end
  U.number(fname, "eps_init", o.eps_init); U.number(fname, "eps_end", o.eps_end)
  if o.eps_end > o.eps_init then
    error(("%s: eps_end (%g) must not exceed eps_init (%g)"):format(fname, o.eps_end, o.eps_init), 2)
  end
  U.size(fname, "annealing_num_steps", o.annealing_num_steps, 1)
  rawset(self, "spec", spec)
  self.eps_init, self.eps_end, self.annealing_num_steps = o.eps_init, o.eps_end, o.annealing_num_steps
  self:register_buffer("eps", torch.tensor(o.eps_init, {dtype = torch.float32}))
  self.action_key, self.action_mask_key = K.check(fname, "action_key", o.action_key), o.action_mask_key
  self.in_keys, self.out_keys = {self.action_key}, {self.action_key}
end

-- step(frames=1): eps <- max(eps_end, eps - frames (eps_init - eps_end) / annealing_num_steps).
function EGreedy:step(frames)
  frames = frames or 1
  U.number(PREFIX .. "EGreedyModule:step", "frames", frames)
  local e = self.eps:item() - frames * (self.eps_init - self.eps_end) / self.annealing_num_steps
  self.eps:fill_(math.max(self.eps_end, e))
end

function EGreedy:forward(td)
  local kind = E.exploration_type()
  if kind ~= nil and kind ~= E.ExplorationType.RANDOM then return td end
  local fname = PREFIX .. "EGreedyModule"
  local action = K.get(fname, td, self.action_key)
  local bs = {}
  for i, s in ipairs(td.batch_size) do bs[i] = s end
  local cond = torch.rand(bs, {device = action.device}):lt(self.eps:item())
  for _ = #bs + 1, action:dim() do cond = cond:unsqueeze(-1) end
  local r
  if self.action_mask_key then
    -- a random action among the allowed ones (1-based; one-hot when the action is)
    local mask = K.get(fname, td, self.action_mask_key)
    local n = mask.shape[mask:dim()]
    r = D.Categorical({probs = mask:to(torch.float32)}):sample()
    if action:dim() > #bs then r = F.one_hot(r, n) end
  else
    r = self.spec:rand(bs)
  end
  td:set(self.action_key, torch.where(cond:expand_as(action), r:to(action.dtype):to(action.device), action))
  return td
end

function EGreedy:extra_repr()
  return ("eps_init=%g, eps_end=%g, annealing_num_steps=%d"):format(self.eps_init, self.eps_end, self.annealing_num_steps)
end

return M
