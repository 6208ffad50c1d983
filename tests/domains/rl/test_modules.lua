-- tests/domains/rl/test_modules.lua -- torch.rl.modules (domains/rl/modules/):
-- MLP against a hand computation, TensorDictModule / Sequential key
-- plumbing, Actor / ValueOperator defaults, ProbabilisticActor under each
-- exploration type, QValueModule / QValueActor (1-based categorical and
-- one-hot actions, masks), EGreedyModule's annealing schedule and
-- replacement frequency, and bad input.
local M = torch.rl.modules
local TD = torch.rl.TensorDict
local D = torch.distributions
local X = M.ExplorationType
local f64 = {dtype = torch.float64}
local TOL = {atol = 1e-10, rtol = 1e-10}

local function obs_td(n, d) return TD({observation = torch.randn(n, d, f64)}, {n}) end

-- A minimal action spec: 1-based categorical actions 1..n (as torch.rl.envs' Categorical).
local function cat_spec(n)
  return setmetatable({n = n, shape = {}}, {__name = "Categorical", __index = {
    rand = function(self, shape) return torch.randint(1, self.n + 1, shape, {dtype = torch.int64}) end}})
end

test("MLP: layer sizes, activation between layers, output equals W2 tanh(W1 x + b1) + b2", function()
  local m = M.MLP{in_features = 3, out_features = 2, num_cells = {4}}:double()
  check_eq(#m, 3)
  local x = torch.randn(5, 3, f64)
  local want = torch.tanh(x:mm(m[1].weight:t()) + m[1].bias):mm(m[3].weight:t()) + m[3].bias
  check_close(m(x), want, TOL)
  local d = M.MLP{in_features = 3, out_features = 1, num_cells = 8, depth = 2, activation_class = torch.nn.ReLU,
                  activate_last_layer = true}
  check_eq(#d, 6)
  check(tostring(d[2]):find("ReLU") ~= nil and tostring(d[6]):find("ReLU") ~= nil)
  local def = M.MLP{in_features = 3, out_features = 1}
  check_eq(#def, 7, "default: 3 hidden layers of 32")
  check_eq(def[1].weight.shape[1], 32)
end)

test("MLP concatenates several inputs and reshapes to a shape out_features", function()
  local m = M.MLP{in_features = 5, out_features = {2, 3}, num_cells = {4}}:double()
  local a, b = torch.randn(7, 3, f64), torch.randn(7, 2, f64)
  local y = m(a, b)
  check_shape(y, {7, 2, 3})
  check_close(y:reshape({7, 6}), torch.nn.Sequential.forward(m, torch.cat({a, b}, -1)), TOL)
end)

test("TensorDictModule reads in_keys, writes out_keys (nested keys too); TensorDictSequential chains", function()
  local td = obs_td(4, 3)
  local m = M.TensorDictModule(function(o) return o * 2, o:sum(-1, true) end, {"observation"},
                               {"twice", {"stats", "sum"}})
  check(m(td) == td)
  check_close(td.twice, td.observation * 2, TOL)
  check_close(td:get({"stats", "sum"}), td.observation:sum(-1, true), TOL)
  local s = M.TensorDictSequential(m, M.TensorDictModule(function(t) return t + 1 end, {"twice"}, {"plus"}))
  check_eq(s.in_keys, {"observation"})
  check_eq(#s.out_keys, 3)
  local t2 = obs_td(4, 3)
  s(t2)
  check_close(t2.plus, t2.observation * 2 + 1, TOL)
end)

test("Actor and ValueOperator use TorchRL's default keys", function()
  local a = M.Actor(M.MLP{in_features = 3, out_features = 2, num_cells = {4}}:double())
  check_eq(a.in_keys, {"observation"}); check_eq(a.out_keys, {"action"})
  local v = M.ValueOperator(M.MLP{in_features = 3, out_features = 1, num_cells = {4}}:double())
  check_eq(v.out_keys, {"state_value"})
  local q = M.ValueOperator(M.MLP{in_features = 5, out_features = 1, num_cells = {4}}:double(), {"observation", "action"})
  check_eq(q.out_keys, {"state_action_value"})
  local td = obs_td(6, 3)
  a(td); q(td)
  check_shape(td.state_action_value, {6, 1})
end)

-- a TanhNormal actor whose loc and scale are fixed functions of the observation
local function tanh_actor(opts)
  local o = {module = M.TensorDictModule(function(x) return x:narrow(-1, 1, 2), x:narrow(-1, 3, 2):exp() end,
                                         {"observation"}, {"loc", "scale"}),
             in_keys = {"loc", "scale"}, distribution_class = M.TanhNormal, return_log_prob = true}
  for k, v in pairs(opts or {}) do o[k] = v end
  return M.ProbabilisticActor(o)
end

test("ProbabilisticActor: DETERMINISTIC (default) gives tanh(loc), RANDOM samples, log_prob written", function()
  local actor = tanh_actor()
  local td = obs_td(5, 4)
  actor(td)
  check_close(td.action, td.loc:tanh(), {atol = 1e-6, rtol = 1e-6})
  local dist = M.TanhNormal(td.loc, td.scale)
  check_close(td.action_log_prob, dist:log_prob(td.action), {atol = 1e-6, rtol = 1e-6})
  torch.manual_seed(3)
  td.observation:requires_grad_(true)
  M.set_exploration_type(X.RANDOM, function() actor(td) end)
  check((td.action - td.loc:tanh()):abs():max():item() > 1e-3, "RANDOM must sample")
  check(td.action:abs():max():item() < 1)
  check(td.action.requires_grad, "RANDOM uses rsample (differentiable) when the distribution has one")
  check_close(td.action_log_prob, dist:log_prob(td.action), {atol = 1e-6, rtol = 1e-6})
end)

test("ProbabilisticActor: MODE and MEAN for a categorical policy; actions are 1-based", function()
  local logits = torch.tensor({{0.1, 2.0, -1.0}, {3.0, 0.0, 0.5}}, f64)
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(function() return logits end, {"observation"},
                                                                  {"logits"}),
                                     in_keys = {"logits"}, distribution_class = D.Categorical}
  local td = obs_td(2, 1)
  M.set_exploration_type(X.MODE, function() actor(td) end)
  check_eq(td.action:tolist(), {2, 1})
  M.set_exploration_type(X.DETERMINISTIC, function() actor(td) end)
  check_eq(td.action:tolist(), {2, 1})
  torch.manual_seed(0)
  M.set_exploration_type(X.RANDOM, function() actor(td) end)
  check(td.action:min():item() >= 1 and td.action:max():item() <= 3)
end)

test("set_exploration_type restores the previous type, also when the function raises", function()
  check(M.exploration_type() == nil)
  M.set_exploration_type(X.MODE, function()
    check_eq(M.exploration_type(), X.MODE)
    M.set_exploration_type(X.RANDOM, function() check_eq(M.exploration_type(), X.RANDOM) end)
    check_eq(M.exploration_type(), X.MODE)
  end)
  check(not pcall(M.set_exploration_type, X.MEAN, function() error("boom") end))
  check(M.exploration_type() == nil)
  check_error(function() M.set_exploration_type("sometimes", function() end) end, "unknown exploration type")
end)

test("QValueModule: categorical actions are the 1-based argmax, one-hot the argmax's one-hot, masks respected", function()
  local q = torch.tensor({{0.5, 2.0, -1.0}, {3.0, 0.0, 0.5}}, f64)
  local td = TD({action_value = q}, {2})
  M.QValueModule({action_space = "categorical"})(td)
  check_eq(td.action:tolist(), {2, 1})
  check_close(td.chosen_action_value, torch.tensor({{2.0}, {3.0}}, f64), TOL)
  M.QValueModule({action_space = "one_hot"})(td)
  check_eq(td.action:tolist(), {{0, 1, 0}, {1, 0, 0}})
  local t2 = TD({action_value = q, mask = torch.tensor({{true, false, true}, {false, true, true}})}, {2})
  M.QValueModule({action_space = "categorical", action_mask_key = "mask"})(t2)
  check_eq(t2.action:tolist(), {1, 3})
  local actor = M.QValueActor(M.MLP{in_features = 3, out_features = 4, num_cells = {5}}:double(),
                              {spec = cat_spec(4)})
  check_eq(actor.action_space, "categorical")
  local t3 = obs_td(8, 3)
  actor(t3)
  check_close(t3.action, t3.action_value:argmax(-1), TOL)
  check_error(function() M.QValueModule({action_space = "binary"}) end, "action_space must be")
end)

test("EGreedyModule: eps anneals linearly from eps_init to eps_end and stays there", function()
  local e = M.EGreedyModule(cat_spec(3), {eps_init = 0.9, eps_end = 0.1, annealing_num_steps = 8})
  check_close(e.eps, torch.tensor(0.9, {dtype = torch.float32}))
  for k = 1, 12 do
    e:step()
    local want = math.max(0.1, 0.9 - k * 0.1)
    check(math.abs(e.eps:item() - want) < 1e-6, ("step %d: eps %g, want %g"):format(k, e.eps:item(), want))
  end
  local f = M.EGreedyModule(cat_spec(3), {eps_init = 1.0, eps_end = 0.0, annealing_num_steps = 100})
  f:step(25)
  check(math.abs(f.eps:item() - 0.75) < 1e-6)
end)

test("EGreedyModule replaces about eps of the actions (RANDOM or no type) and none otherwise", function()
  torch.manual_seed(5)
  local n, eps = 20000, 0.3
  local e = M.EGreedyModule(cat_spec(4), {eps_init = eps, eps_end = eps})
  local td = TD({action = torch.full({n}, 7, {dtype = torch.int64})}, {n})
  e(td)
  local replaced = td.action:ne(7):double():mean():item()
  -- binomial: sd = sqrt(p (1 - p) / n) ~ 0.0032; 5 sd
  check(math.abs(replaced - eps) < 0.016, "replaced fraction " .. replaced)
  check(td.action:ne(7):logical_and(td.action:lt(1):logical_or(td.action:gt(4))):sum():item() == 0)
  local t2 = TD({action = torch.full({100}, 7, {dtype = torch.int64})}, {100})
  M.set_exploration_type(X.DETERMINISTIC, function() e(t2) end)
  check(t2.action:eq(7):all():item(), "no exploration outside RANDOM")
  local oh = TD({action = torch.zeros(500, 3, {dtype = torch.int64})}, {500})
  local spec = setmetatable({n = 3}, {__name = "OneHot", __index = {rand = function(_, s)
    return torch.nn.functional.one_hot(torch.randint(1, 4, s, {dtype = torch.int64}), 3) end}})
  M.EGreedyModule(spec, {eps_init = 1, eps_end = 1})(oh)
  check(oh.action:sum(-1):eq(1):all():item(), "one-hot actions are replaced whole")
end)

test("EGreedyModule with an action mask draws random actions among the allowed ones only", function()
  torch.manual_seed(6)
  local n = 3000
  local mask = torch.tensor({false, true, false, true}):expand({n, 4})
  local td = TD({action = torch.full({n}, 2, {dtype = torch.int64}), mask = mask}, {n})
  M.EGreedyModule(cat_spec(4), {eps_init = 1, eps_end = 1, action_mask_key = "mask"})(td)
  check(td.action:eq(2):logical_or(td.action:eq(4)):all():item(), "only actions 2 and 4 are allowed")
  local f4 = td.action:eq(4):double():mean():item()
  check(math.abs(f4 - 0.5) < 0.05, "uniform among the allowed: " .. f4)
end)

test("bad input: missing keys, wrong module or spec, wrong sizes give clear errors", function()
  local m = M.TensorDictModule(function(x) return x end, {"observation"}, {"y"})
  check_error(function() m(TD({obs = torch.zeros(2, 1)}, {2})) end,
              "TensorDictModule: the TensorDict has no key 'observation' (it has: obs)")
  check_error(function() M.TensorDictModule(42, {"a"}, {"b"}) end, "module must be an nn.Module or a function")
  check_error(function() M.TensorDictModule(function() end, {"a"}, {}) end, "out_keys must name at least one key")
  check_error(function() M.MLP{out_features = 2} end, "in_features is required")
  check_error(function() M.MLP{in_features = 3, out_features = 2, num_cells = {4, 4}, depth = 3} end,
              "depth (3) and the length of num_cells (2) must match")
  check_error(function() M.MLP{in_features = 3, out_features = 2}(torch.zeros(2, 4)) end,
              "the input's last dim must be in_features = 3")
  check_error(function() M.EGreedyModule(5) end, "spec must be an action spec")
  check_error(function() M.EGreedyModule(cat_spec(2), {eps_init = 0.1, eps_end = 0.5}) end, "eps_end (0.5) must not exceed")
  check_error(function() M.ProbabilisticActor(M.MLP{in_features = 3, out_features = 2}, {"loc"}) end,
              "module must be a TensorDict module")
  check_error(function() tanh_actor({distribution_class = false}) end, "distribution_class is required")
  check_error(function() tanh_actor({default_interaction_type = "greedy"}) end, "unknown exploration type greedy")
end)
