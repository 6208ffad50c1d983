-- torch.rl.modules.probabilistic -- ProbabilisticTensorDictModule (reads
-- a distribution's parameters from a TensorDict, builds the distribution
-- and writes an action chosen by the exploration type) and
-- ProbabilisticActor (a parameter network followed by it). The action is
-- rsample()d when the distribution allows it, so losses like SAC's
-- differentiate through it.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"
local K = require "torch.rl.modules.keys"
local E = require "torch.rl.modules.exploration"
local TDM = require "torch.rl.modules.tensordict_module"

local M = {}
local PREFIX = "torch.rl.modules."
local X = E.ExplorationType

local PTM = nn.Module:extend("ProbabilisticTensorDictModule")
PTM.__prefix = PREFIX
M.ProbabilisticTensorDictModule = PTM

-- dist_keys(fname, in_keys) -> {{name=, key=}...}: a list of keys names
-- each distribution argument after its key ({"loc", "scale"}); a table
-- {loc = "my_loc", ...} maps argument names to keys.
local function dist_keys(fname, in_keys)
  if type(in_keys) == "string" then in_keys = {in_keys} end
  if type(in_keys) ~= "table" then error(fname .. ": in_keys must be a list of keys or a table {arg = key}", 3) end
  local out = {}
  if #in_keys > 0 then
    for i, k in ipairs(in_keys) do
      K.check(fname, "in_keys[" .. i .. "]", k)
      out[i] = {name = type(k) == "string" and k or k[#k], key = k}
    end
  else
    local names = {}
    for n in pairs(in_keys) do names[#names + 1] = n end
    table.sort(names)
    for i, n in ipairs(names) do out[i] = {name = n, key = K.check(fname, "in_keys." .. n, in_keys[n])} end
  end
  if #out == 0 then error(fname .. ": in_keys must name the distribution's parameters (e.g. {\"loc\", \"scale\"})", 3) end
  return out
end

-- ProbabilisticTensorDictModule{in_keys=, out_keys={"action"},
-- distribution_class=, distribution_kwargs=, return_log_prob=false,
-- log_prob_key="action_log_prob", default_interaction_type=DETERMINISTIC}.
function PTM:__init(...)
  local fname = PREFIX .. self:_get_name()
  local o = U.args(fname, {"in_keys", "out_keys", "distribution_class", "distribution_kwargs", "return_log_prob",
                           "default_interaction_type", "log_prob_key", "spec"},
                   {out_keys = {"action"}, return_log_prob = false, log_prob_key = "action_log_prob",
                    default_interaction_type = X.DETERMINISTIC}, ...)
  local cls = o.distribution_class
  if not cls then error(fname .. ": distribution_class is required (e.g. torch.rl.modules.TanhNormal)", 2) end
  self._dist = dist_keys(fname, o.in_keys)
  self.in_keys = {}
  for i, e in ipairs(self._dist) do self.in_keys[i] = e.key end
  self.out_keys = K.list(fname, "out_keys", o.out_keys)
  self.distribution_class, self.distribution_kwargs = cls, o.distribution_kwargs or {}
  self.return_log_prob, self.log_prob_key = o.return_log_prob, K.check(fname, "log_prob_key", o.log_prob_key)
  self.default_interaction_type = E._check(fname, o.default_interaction_type)
  if self.return_log_prob then self.out_keys[#self.out_keys + 1] = self.log_prob_key end
  rawset(self, "spec", o.spec)
end

-- make_dist(fname, cls, args, kwargs) -> cls built from its named arguments:
-- (loc, scale, options) for location-scale families, else one options table.
local function make_dist(fname, cls, args, kwargs)
  local opts = {}
  for k, v in pairs(kwargs) do opts[k] = v end
  if args.loc ~= nil and args.scale ~= nil then
    for k, v in pairs(args) do if k ~= "loc" and k ~= "scale" then opts[k] = v end end
    if next(opts) == nil then return cls(args.loc, args.scale) end
    return cls(args.loc, args.scale, opts)
  end
  for k, v in pairs(args) do opts[k] = v end
  local ok, d = pcall(cls, opts)
  if not ok then error(("%s: could not build the distribution: %s"):format(fname, tostring(d)), 0) end
  return d
end

-- build_dist_from_params(td) -> the distribution whose parameters are td's in_keys.
function PTM:build_dist_from_params(td)
  local fname = PREFIX .. self:_get_name()
  local args = {}
  for _, e in ipairs(self._dist) do args[e.name] = K.get(fname, td, e.key) end
  return make_dist(fname, self.distribution_class, args, self.distribution_kwargs)
end
PTM.get_dist = PTM.build_dist_from_params

-- is_discrete(d): a categorical family (its mean is not an action).
local function is_discrete(d) return d._num_events ~= nil or d._categorical ~= nil end

-- choose(dist, kind) -> an action of the distribution for the exploration type.
local function choose(self, dist, kind)
  if kind == X.RANDOM then
    if dist.has_rsample then return dist:rsample() end
    return dist:sample()
  elseif kind == X.MODE then return dist.mode
  elseif kind == X.MEAN then return dist.mean end
  local ok, v = pcall(function() return dist.deterministic_sample end)
  if ok and v ~= nil then return v end
  if is_discrete(dist) then return dist.mode end
  return dist.mean
end
M._choose = choose

-- forward(td) -> td with the action (and its log-probability when
-- return_log_prob) written.
function PTM:forward(td)
  local dist = self:build_dist_from_params(td)
  local kind = E.exploration_type() or self.default_interaction_type
  local a = choose(self, dist, kind)
  td:set(self.out_keys[1], a)
  if self.return_log_prob then td:set(self.log_prob_key, dist:log_prob(a)) end
  return td
end

---------------------------------------------------------------- ProbabilisticActor

local ProbabilisticActor = TDM.TensorDictSequential:extend("ProbabilisticActor")
ProbabilisticActor.__prefix = PREFIX
M.ProbabilisticActor = ProbabilisticActor

-- ProbabilisticActor(module, in_keys[, out_keys={"action"}, spec, ...]) or
-- ProbabilisticActor{module=, in_keys=, distribution_class=, ...}: module
-- is a TensorDict module writing the distribution's parameters (in_keys);
-- the other options are ProbabilisticTensorDictModule's.
function ProbabilisticActor:__init(module, ...)
  local fname = PREFIX .. "ProbabilisticActor"
  local o
  if U.is_options(module) then
    o = module
    module = o.module
    local c = {}
    for k, v in pairs(o) do if k ~= "module" then c[k] = v end end
    o = c
  else
    o = U.args(fname, {"in_keys", "out_keys", "spec", "distribution_class", "distribution_kwargs", "return_log_prob",
                       "default_interaction_type", "log_prob_key", "safe", "cache_dist"}, nil, ...)
  end
  o.safe, o.cache_dist = nil, nil
  if type(module) ~= "table" or type(module.out_keys) ~= "table" then
    error(fname .. ": module must be a TensorDict module (e.g. TensorDictModule(net, {\"observation\"}, "
          .. "{\"loc\", \"scale\"})) writing the distribution's parameters", 2)
  end
  if o.in_keys == nil then o.in_keys = module.out_keys end
  local p = PTM(o)
  TDM.TensorDictSequential.__init(self, module, p)
  rawset(self, "spec", o.spec)
end

function ProbabilisticActor:_prob_module() return self._modules.map["2"] end
function ProbabilisticActor:_param_module() return self._modules.map["1"] end

-- get_dist(td) -> the distribution after running the parameter module on td.
function ProbabilisticActor:get_dist(td)
  self:_param_module()(td)
  return self:_prob_module():build_dist_from_params(td)
end

-- build_dist_from_params(td) -> the distribution of the parameters already in td.
function ProbabilisticActor:build_dist_from_params(td) return self:_prob_module():build_dist_from_params(td) end

M.SafeProbabilisticModule = PTM
M.SafeProbabilisticTensorDictSequential = ProbabilisticActor
return M
