-- tests/domains/rl/test_objectives.lua -- torch.rl.objectives' losses
-- (domains/rl/objectives/*.lua) against PyTorch 1.13 computations of the
-- same formulas with the same weights and inputs (tests/ref/gen_rl_losses.py)
-- and against hand computations here; gradients reach the trained
-- networks only; target updaters; value estimators; bad input.
local M, O = torch.rl.modules, torch.rl.objectives
local TD = torch.rl.TensorDict
local D = torch.distributions
local F = torch.nn.functional
local R = ref("rl_losses")
local f64 = {dtype = torch.float64}
local TOL = {atol = 1e-6, rtol = 1e-6}

local function T(c) return torch.tensor(c.data, f64):view(c.shape) end
local function I(c) return torch.tensor(c.data, {dtype = torch.int64}):view(c.shape) end
local function Bo(c) return I(c):ne(0) end

-- mlp(w[, opts]) -> an MLP with the stored weights (Linear -> Tanh -> Linear).
local function mlp(w, opts)
  local o = {in_features = w.w1.shape[2], out_features = w.w2.shape[1], num_cells = {5}}
  for k, v in pairs(opts or {}) do o[k] = v end
  local m = M.MLP(o):double()
  torch.no_grad(function()
    m[1].weight:copy_(T(w.w1)); m[1].bias:copy_(T(w.b1)); m[3].weight:copy_(T(w.w2)); m[3].bias:copy_(T(w.b2))
  end)
  return m
end

local function set_weights(m, w)
  torch.no_grad(function()
    m[1].weight:copy_(T(w.w1)); m[1].bias:copy_(T(w.b1)); m[3].weight:copy_(T(w.w2)); m[3].bias:copy_(T(w.b2))
  end)
end

local function near(x, want, what)
  check_close(torch.is_tensor(x) and x or torch.tensor(x, f64), torch.tensor(want, f64), TOL)
end

-- transitions(c, action) -> a TensorDict of B transitions.
local function transitions(c, action)
  local term = Bo(c.terminated)
  return TD({observation = T(c.obs), action = action,
             next = {observation = T(c.next_obs), reward = T(c.reward), terminated = term, done = term:clone()}},
            {c.obs.shape[1]})
end

---------------------------------------------------------------- DQN

local function dqn_setup(opts)
  local c = R.dqn
  local qa = M.QValueActor(mlp(c.q), {action_space = "categorical"})
  local loss = O.DQNLoss(qa, opts)
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = c.gamma})
  set_weights(loss.target_value_network[1].module, c.q_target)
  return loss, transitions(c, I(c.action)), c
end

test("DQNLoss equals the PyTorch reference (l2, smooth_l1, double DQN) and writes td_error", function()
  local loss, td, c = dqn_setup({loss_function = "l2"})
  near(loss(td).loss, c.loss_l2)
  check_close(td.td_error, T(c.td_error), TOL)
  loss = dqn_setup({loss_function = "smooth_l1"})
  near(loss(td).loss, c.loss_smooth_l1)
  loss = dqn_setup({double_dqn = true})
  near(loss(td).loss, c.loss_double)
end)

test("DQNLoss equals a hand computation of (Q(s,a) - r - gamma (1 - term) max Q'(s'))^2", function()
  local loss, td, c = dqn_setup()
  local q = loss.value_network[1].module(T(c.obs))
  local qt = loss.target_value_network[1].module(T(c.next_obs))
  local a = I(c.action)
  local pred = q:gather(2, a:view(-1, 1)):view(-1)
  local nf = 1 - Bo(c.terminated):double()
  local target = (T(c.reward) + nf * qt:max(2, true) * c.gamma):view(-1)
  near(loss(td).loss, ((pred - target) ^ 2):mean():item())
end)

test("DQNLoss with one-hot actions equals the categorical result", function()
  local c = R.dqn
  local qa = M.QValueActor(mlp(c.q), {action_space = "one_hot"})
  local loss = O.DQNLoss(qa, {gamma = c.gamma})
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = c.gamma})
  set_weights(loss.target_value_network[1].module, c.q_target)
  local onehot = F.one_hot(I(c.action), 3)
  near(loss(transitions(c, onehot)).loss, c.loss_l2)
end)

test("DQNLoss: gradients reach the online network only; HardUpdate copies every interval", function()
  local loss, td = dqn_setup()
  loss(td).loss:backward()
  for _, p in ipairs(loss.value_network:parameters()) do check(p.grad ~= nil and p.grad:abs():sum():item() > 0) end
  for _, p in ipairs(loss.target_value_network:parameters()) do
    check(p.grad == nil, "target parameters must get no gradient"); check(not p.requires_grad)
  end
  local up = O.HardUpdate(loss, {value_network_update_interval = 3})
  local src, tgt = loss.value_network:parameters()[1], loss.target_value_network:parameters()[1]
  check(not torch.equal(src, tgt))
  up:step(); up:step()
  check(not torch.equal(src, tgt), "no copy before the interval")
  up:step()
  check(torch.equal(src, tgt), "copied at the interval")
end)

---------------------------------------------------------------- PPO, A2C, Reinforce

local function pg_setup(with_adv)
  local c = R.pg
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(mlp(c.actor), {"observation"}, {"logits"}),
    in_keys = {"logits"}, distribution_class = D.Categorical, return_log_prob = true}
  local critic = M.ValueOperator(mlp(c.critic))
  local n = c.obs.shape[1]
  local src = {observation = T(c.obs), action = I(c.action), action_log_prob = T(c.old_log_prob),
               next = {observation = T(c.next_obs), reward = T(c.reward), terminated = Bo(c.terminated),
                       done = Bo(c.done)}}
  if with_adv then src.advantage, src.value_target = T(c.advantage), T(c.value_target) end
  return actor, critic, TD(src, {n}), c
end

local function check_entries(out, want)
  for k, v in pairs(want) do
    local got = out:get(k)
    check(got ~= nil, "missing entry " .. k)
    near(got, v, k)
  end
end

test("ClipPPOLoss with GAE equals the PyTorch reference (all entries)", function()
  local actor, critic, td, c = pg_setup(false)
  local loss = O.ClipPPOLoss(actor, critic)
  loss:make_value_estimator(O.ValueEstimators.GAE, {gamma = c.gamma, lmbda = c.lmbda})
  check_entries(loss(td), c.clip)
  check(td:get("advantage") == nil, "the loss must not write into the caller's TensorDict")
  local loss2 = O.ClipPPOLoss(actor, critic, {clip_epsilon = 0.1, entropy_coef = 0.05, critic_coef = 0.5,
                                              normalize_advantage = true})
  loss2:make_value_estimator(O.ValueEstimators.GAE, {gamma = c.gamma, lmbda = c.lmbda})
  check_entries(loss2(td), c.clip_norm)
end)

test("ClipPPOLoss equals a hand computation of -mean(min(r A, clip(r) A))", function()
  local actor, critic, td, c = pg_setup(true)
  local loss = O.ClipPPOLoss(actor, critic)
  local lp = D.Categorical({logits = actor[1].module(T(c.obs))}):log_prob(I(c.action))
  local ratio = (lp - T(c.old_log_prob)):exp():view(-1, 1)
  local A = T(c.advantage)
  local want = -torch.minimum(ratio * A, ratio:clamp(0.8, 1.2) * A):mean()
  near(loss(td).loss_objective, want:item())
end)

test("ClipPPOLoss: the objective's gradient reaches the actor only, the critic loss's the critic only", function()
  local actor, critic, td = pg_setup(false)
  local loss = O.ClipPPOLoss(actor, critic, {gamma = 0.9})
  local out = loss(td)
  out.loss_objective:backward()
  for _, p in ipairs(critic:parameters()) do check(p.grad == nil, "critic got a gradient from loss_objective") end
  for _, p in ipairs(actor:parameters()) do check(p.grad ~= nil) end
  actor:zero_grad()
  loss(td).loss_critic:backward()
  for _, p in ipairs(critic:parameters()) do check(p.grad ~= nil) end
  for _, p in ipairs(actor:parameters()) do check(p.grad == nil or p.grad:abs():sum():item() == 0) end
end)

test("KLPENPPOLoss equals the PyTorch reference and adapts beta", function()
  local c, k = R.pg, R.klpen
  local split = M.TensorDictModule(function(p)
    return p:narrow(-1, 1, 2), F.softplus(p:narrow(-1, 3, 2)) + 0.1
  end, {"p"}, {"loc", "scale"})
  local actor = M.ProbabilisticActor{module = M.TensorDictSequential(
    M.TensorDictModule(mlp(k.actor), {"observation"}, {"p"}), split), in_keys = {"loc", "scale"},
    distribution_class = M.IndependentNormal}
  local critic = M.ValueOperator(mlp(c.critic))
  local n = c.obs.shape[1]
  local td = TD({observation = T(c.obs), action = T(k.action), action_log_prob = T(k.old_log_prob),
                 loc = T(k.old_loc), scale = T(k.old_scale), advantage = T(c.advantage),
                 value_target = T(c.value_target), next = {observation = T(c.next_obs)}}, {n})
  local loss = O.KLPENPPOLoss(actor, critic)
  local out = loss(td)
  near(out.loss_objective, k.loss_objective)
  near(out.kl, k.kl)
  near(out.entropy, k.entropy)
  near(loss.beta, k.beta_after)
end)

test("A2CLoss and ReinforceLoss equal the PyTorch reference", function()
  local actor, critic, td, c = pg_setup(true)
  check_entries(O.A2CLoss(actor, critic)(td), c.a2c)
  check_entries(O.ReinforceLoss(actor, critic, {loss_critic_type = "l2"})(td), c.reinforce)
  -- the advantage computed by the estimator gives the same result
  local _, _, td2 = pg_setup(false)
  local l = O.A2CLoss(actor, critic)
  l:make_value_estimator(O.ValueEstimators.GAE, {gamma = c.gamma, lmbda = c.lmbda})
  check_entries(l(td2), c.a2c)
end)

---------------------------------------------------------------- DDPG, TD3

test("DDPGLoss equals the PyTorch reference; the actor loss leaves the critic's parameters alone", function()
  local c = R.ddpg
  local actor = M.Actor(mlp(c.actor, {activate_last_layer = true}))
  local value = M.ValueOperator(mlp(c.value), {"observation", "action"})
  local loss = O.DDPGLoss(actor, value)
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = c.gamma})
  set_weights(loss.target_value_network.module, c.value_target)
  local out = loss(transitions(c, T(c.action)))
  check_entries(out, {loss_actor = c.loss_actor, loss_value = c.loss_value, pred_value = c.pred_value,
                      target_value = c.target_value})
  out.loss_actor:backward()
  for _, p in ipairs(value:parameters()) do check(p.grad == nil, "value network got a gradient from loss_actor") end
  for _, p in ipairs(actor:parameters()) do check(p.grad ~= nil and p.grad:abs():sum():item() > 0) end
  for _, p in ipairs(value:parameters()) do check(p.requires_grad, "requires_grad restored") end
end)

local function td3_setup()
  local c, s = R.td3, R.shared
  local actor = M.Actor(mlp(c.actor, {activate_last_layer = true}))
  local q = M.ValueOperator(mlp(c.q1), {"observation", "action"})
  local loss = O.TD3Loss(actor, q, {bounds = {-1, 1}})
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = s.gamma})
  set_weights(loss.qvalue_network[2].module, c.q2)
  set_weights(loss.target_qvalue_network[1].module, c.qt1)
  set_weights(loss.target_qvalue_network[2].module, c.qt2)
  set_weights(loss.target_actor_network.module, c.actor_target)
  local noise = T(c.noise)
  rawset(loss, "_policy_noise", function() return noise end)
  return loss, transitions(s, T(s.action_c)), c
end

test("TD3Loss with fixed smoothing noise equals the PyTorch reference", function()
  local loss, td, c = td3_setup()
  local out = loss(td)
  check_entries(out, {loss_actor = c.loss_actor, loss_qvalue = c.loss_qvalue, target_value = c.target_value,
                      next_state_value = c.next_state_value})
end)

test("TD3Loss: target policy smoothing clips the noise and the action (hand computation)", function()
  local loss, _, c = td3_setup()
  local s = R.shared
  local mu = loss.target_actor_network.module(T(s.next_obs))
  local na = (mu + T(c.noise):clamp(-0.5, 0.5)):clamp(-1, 1)
  check_close(na, T(c.next_action), TOL)
  check(T(c.noise):abs():max():item() > 0.5, "the fixed noise exercises the clip")
end)

test("TD3Loss: gradients reach the actor (from loss_actor) and the online critics (loss_qvalue) only", function()
  local loss, td = td3_setup()
  local out = loss(td)
  out.loss_actor:backward()
  for _, p in ipairs(loss.qvalue_network:parameters()) do check(p.grad == nil) end
  for _, p in ipairs(loss.actor_network:parameters()) do check(p.grad ~= nil) end
  loss(td).loss_qvalue:backward()
  for _, p in ipairs(loss.qvalue_network:parameters()) do check(p.grad ~= nil) end
  for _, n in ipairs{"target_qvalue_network", "target_actor_network"} do
    for _, p in ipairs(loss[n]:parameters()) do check(p.grad == nil and not p.requires_grad) end
  end
end)

---------------------------------------------------------------- SAC

-- with_noise(list, fn): Normal rsample draws loc + scale * list[i] for the
-- i-th call (the reference's fixed reparameterization noise).
local function with_noise(list, fn)
  local N = D.Normal
  local saved = rawget(N, "_rsample")
  local i = 0
  N._rsample = function(self) i = i + 1; return self.loc + self.scale * list[i] end
  local ok, err = pcall(fn)
  N._rsample = saved
  if not ok then error(err, 0) end
  return i
end

local function sac_setup(opts)
  local c, s, t = R.sac, R.shared, R.td3
  local split = M.TensorDictModule(function(p)
    return p:narrow(-1, 1, 2), F.softplus(p:narrow(-1, 3, 2)) + 0.1
  end, {"p"}, {"loc", "scale"})
  local actor = M.ProbabilisticActor{module = M.TensorDictSequential(
    M.TensorDictModule(mlp(c.actor), {"observation"}, {"p"}), split), in_keys = {"loc", "scale"},
    distribution_class = M.TanhNormal}
  local q = M.ValueOperator(mlp(t.q1), {"observation", "action"})
  local o = {alpha_init = c.alpha}
  for k, v in pairs(opts or {}) do o[k] = v end
  local loss = O.SACLoss(actor, q, o)
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = s.gamma})
  set_weights(loss.qvalue_network[2].module, t.q2)
  set_weights(loss.target_qvalue_network[1].module, t.qt1)
  set_weights(loss.target_qvalue_network[2].module, t.qt2)
  return loss, transitions(s, T(s.action_c)), c
end

test("SACLoss with fixed noise equals the PyTorch reference (Q, actor, alpha losses)", function()
  local loss, td, c = sac_setup()
  local out
  local n = with_noise({T(c.eps_next), T(c.eps_cur)}, function() out = loss(td) end)
  check_eq(n, 2)
  check_entries(out, {loss_qvalue = c.loss_qvalue, loss_actor = c.loss_actor, loss_alpha = c.loss_alpha,
                      entropy = c.entropy, alpha = c.alpha})
  local l2 = sac_setup({loss_function = "l2"})
  with_noise({T(c.eps_next), T(c.eps_cur)}, function() out = l2(td) end)
  near(out.loss_qvalue, c.loss_qvalue_l2)
end)

test("SACLoss: the alpha loss is -log(alpha) (log pi + target_entropy), target_entropy = -action dims", function()
  local loss, td, c = sac_setup()
  local out
  with_noise({T(c.eps_next), T(c.eps_cur)}, function() out = loss(td) end)
  check_eq(loss.target_entropy, -2)
  -- entropy = -mean log pi, so loss_alpha = -log(alpha) (-entropy - 2)
  near(out.loss_alpha, -math.log(c.alpha) * (-c.entropy - 2))
end)

test("SACLoss: gradients -- actor loss to the actor only, Q loss to the online critics, alpha loss to log_alpha", function()
  local loss, td, c = sac_setup()
  local out
  with_noise({T(c.eps_next), T(c.eps_cur)}, function() out = loss(td) end)
  out.loss_actor:backward()
  for _, p in ipairs(loss.actor_network:parameters()) do check(p.grad ~= nil) end
  for _, p in ipairs(loss.qvalue_network:parameters()) do check(p.grad == nil) end
  check(loss.log_alpha.grad == nil)
  out.loss_qvalue:backward()
  for _, p in ipairs(loss.qvalue_network:parameters()) do check(p.grad ~= nil) end
  for _, p in ipairs(loss.target_qvalue_network:parameters()) do check(p.grad == nil) end
  out.loss_alpha:backward()
  near(loss.log_alpha.grad, -(-c.entropy - 2))
end)

test("ClipPPOLoss / KLPENPPOLoss: Monte-Carlo entropy and KL for a TanhNormal policy (no closed form)", function()
  torch.manual_seed(4)
  local n = 5
  local W = torch.randn(3, 4, f64)
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(function(x)
      local p = x:mm(W)
      return p:narrow(-1, 1, 2), p:narrow(-1, 3, 2):exp()
    end, {"observation"}, {"loc", "scale"}), in_keys = {"loc", "scale"}, distribution_class = M.TanhNormal}
  local critic = M.ValueOperator(M.MLP{in_features = 3, out_features = 1, num_cells = {4}}:double())
  local obs = torch.randn(n, 3, f64)
  local old_loc, old_scale = torch.randn(n, 2, f64) * 0.3, torch.rand(n, 2, f64) + 0.5
  local td = TD({observation = obs, action = torch.rand(n, 2, f64) * 1.6 - 0.8, action_log_prob = -torch.rand(n, f64),
                 loc = old_loc, scale = old_scale, advantage = torch.randn(n, 1, f64),
                 value_target = torch.randn(n, 1, f64)}, {n})
  local eps = torch.randn(1, n, 2, f64)
  local p = obs:mm(W)
  local cur = M.TanhNormal(p:narrow(-1, 1, 2), p:narrow(-1, 3, 2):exp())
  local prev = M.TanhNormal(old_loc, old_scale)
  local out
  with_noise({eps}, function() out = O.ClipPPOLoss(actor, critic)(td) end)
  local x = (p:narrow(-1, 1, 2) + p:narrow(-1, 3, 2):exp() * eps):tanh()
  near(out.entropy, -cur:log_prob(x):mean():item())
  with_noise({eps, eps}, function() out = O.KLPENPPOLoss(actor, critic, {entropy_bonus = false})(td) end)
  local xp = (old_loc + old_scale * eps):tanh()
  near(out.kl, (prev:log_prob(xp) - cur:log_prob(xp)):mean():item())
end)

test("SoftUpdate moves the targets by tau toward the sources", function()
  local loss = sac_setup()
  local src, tgt = loss.qvalue_network:parameters()[1], loss.target_qvalue_network:parameters()[1]
  local before = tgt:clone()
  O.SoftUpdate(loss, {tau = 0.1}):step()
  check_close(tgt, before * 0.9 + src * 0.1, TOL)
  local b2 = tgt:clone()
  O.SoftUpdate(loss, {eps = 0.75}):step()
  check_close(tgt, b2 * 0.75 + src * 0.25, TOL)
end)

test("DiscreteSACLoss equals the PyTorch reference", function()
  local c, s = R.dsac, R.shared
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(mlp(c.actor), {"observation"}, {"logits"}),
    in_keys = {"logits"}, distribution_class = D.Categorical}
  local q = M.TensorDictModule(mlp(c.q1), {"observation"}, {"action_value"})
  local loss = O.DiscreteSACLoss(actor, q, {num_actions = 3, action_space = "categorical", alpha_init = c.alpha})
  loss:make_value_estimator(O.ValueEstimators.TD0, {gamma = s.gamma})
  set_weights(loss.qvalue_network[2].module, c.q2)
  set_weights(loss.target_qvalue_network[1].module, c.qt1)
  set_weights(loss.target_qvalue_network[2].module, c.qt2)
  near(loss.target_entropy, c.target_entropy)
  local out = loss(transitions(s, I(c.action)))
  check_entries(out, {loss_qvalue = c.loss_qvalue, loss_actor = c.loss_actor, loss_alpha = c.loss_alpha,
                      entropy = c.entropy, alpha = c.alpha})
end)

---------------------------------------------------------------- value estimators

test("GAE / TD0 / TD(lambda) estimator modules write advantage and value_target from the critic", function()
  local actor, critic, td, c = pg_setup(false)
  local gae = torch.rl.objectives.value.GAE({gamma = c.gamma, lmbda = c.lmbda, value_network = critic})
  gae(td)
  check_close(td.advantage, T(c.advantage), TOL)
  check_close(td.value_target, T(c.value_target), TOL)
  -- TD(0): r + gamma (1 - terminated) V(s')
  local td0 = torch.rl.objectives.value.TD0Estimator({gamma = c.gamma, value_network = critic})
  local _, _, t2 = pg_setup(false)
  td0(t2)
  local nv = critic.module(T(c.next_obs))
  local want = T(c.reward) + (1 - Bo(c.terminated):double()) * nv * c.gamma
  check_close(t2.value_target, want, TOL)
  -- TD(lambda) with lmbda = 1 equals TD(1)
  local _, _, t3 = pg_setup(false)
  local _, _, t4 = pg_setup(false)
  torch.rl.objectives.value.TDLambdaEstimator({gamma = c.gamma, lmbda = 1, value_network = critic})(t3)
  torch.rl.objectives.value.TD1Estimator({gamma = c.gamma, value_network = critic})(t4)
  check_close(t3.value_target, t4.value_target, TOL)
  -- each loss has its default estimator from the start, with the loss's gamma
  local e = O.ClipPPOLoss(actor, critic, {gamma = 0.5}).value_estimator
  check(getmetatable(e) == getmetatable(gae) and e.gamma == 0.5 and e.lmbda == 0.95)
  local d = O.DQNLoss(M.QValueActor(mlp(R.dqn.q))).value_estimator
  check(getmetatable(d) == getmetatable(td0) and d.gamma == 0.99)
end)

---------------------------------------------------------------- bad input

test("bad input: missing keys, wrong options and updaters without targets give clear errors", function()
  local loss, td = dqn_setup()
  local bad = td:clone()
  bad:del("action")
  check_error(function() loss(bad) end, "DQNLoss: the TensorDict has no key 'action'")
  local nonext = td:clone()
  nonext:del("next")
  check_error(function() loss(nonext) end, "no key 'next'")
  local wrong = td:clone()
  wrong.action = torch.full({6}, 7, {dtype = torch.int64})
  check_error(function() loss(wrong) end, "actions must be 1-based indices in 1..3")
  check_error(function() O.DQNLoss(loss.value_network, {loss_function = "l3"}) end, "loss_function must be")
  check_error(function() O.DQNLoss(42) end, "value_network must be a TensorDict module")
  check_error(function() loss:make_value_estimator("VTrace") end, "value_type must be one of")
  check_error(function() loss:set_keys({rewrd = "r"}) end, "unknown key name 'rewrd'")
  local actor, critic, ptd = pg_setup(false)
  local p = O.ClipPPOLoss(actor, critic)
  local nolp = ptd:clone()
  nolp:del("action_log_prob")
  check_error(function() p(nolp) end, "ClipPPOLoss: the TensorDict has no key 'action_log_prob'")
  check_error(function() O.ClipPPOLoss(actor, critic, {clip_epsilon = 1.5}) end, "clip_epsilon must be a number in (0, 1)")
  check_error(function() O.SoftUpdate(p, {tau = 0.1}) end, "the loss has no target networks")
  check_error(function() O.SoftUpdate(loss, {tau = 0.1, eps = 0.9}) end, "pass eps or tau, not both")
  check_error(function() O.TD3Loss(M.Actor(mlp(R.td3.actor)), M.ValueOperator(mlp(R.td3.q1), {"observation", "action"})) end,
              "pass action_spec")
  check_error(function() O.SACLoss(M.Actor(mlp(R.td3.actor)), critic) end, "must be a ProbabilisticActor")
  check_error(function() O.DQNLoss(loss.value_network, {reduction = "sum"}) end, "only reduction=\"mean\" is supported")
  check_error(function() O.A2CLoss(actor, critic, {separate_losses = true}) end, "separate_losses=true is not supported")
end)

---------------------------------------------------------------- learning

-- a one-step contextual bandit: observation +-1, action 1 pays when the
-- observation is positive, action 2 when it is negative.
local function bandit(n)
  local s = torch.randint(0, 2, {n, 1}):double() * 2 - 1
  local good = s:view(-1):gt(0):long():mul(-1):add(2)
  return s, good
end
local function one_step(s, r)
  local n = s.shape[1]
  return {observation = s, reward = r, terminated = torch.ones(n, 1, {dtype = torch.bool}),
          done = torch.ones(n, 1, {dtype = torch.bool})}
end

test("DQNLoss + SoftUpdate + Adam learn a contextual bandit", function()
  torch.manual_seed(1)
  local qa = M.QValueActor(M.MLP{in_features = 1, out_features = 2, num_cells = {16}}:double(),
                           {action_space = "categorical"})
  local loss = O.DQNLoss(qa)
  local up = O.SoftUpdate(loss, {tau = 0.05})
  local opt = torch.optim.Adam(qa:parameters(), {lr = 0.02})
  for _ = 1, 150 do
    local s, good = bandit(32)
    local a = torch.randint(1, 3, {32})
    local td = TD({observation = s, action = a, next = one_step(s, a:eq(good):double():view(32, 1))}, {32})
    opt:zero_grad(); loss(td).loss:backward(); opt:step(); up:step()
  end
  local s, good = bandit(200)
  local td = TD({observation = s}, {200})
  qa(td)
  check(td.action:eq(good):double():mean():item() > 0.95)
end)

test("ClipPPOLoss with GAE learns a contextual bandit", function()
  torch.manual_seed(2)
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(M.MLP{in_features = 1, out_features = 2,
    num_cells = {16}}:double(), {"observation"}, {"logits"}), in_keys = {"logits"},
    distribution_class = D.Categorical, return_log_prob = true}
  local critic = M.ValueOperator(M.MLP{in_features = 1, out_features = 1, num_cells = {16}}:double())
  local loss = O.ClipPPOLoss(actor, critic)
  local opt = torch.optim.Adam(loss:parameters(), {lr = 0.01})
  for _ = 1, 60 do
    local s, good = bandit(64)
    local td = TD({observation = s}, {64})
    torch.no_grad(function() M.set_exploration_type(M.ExplorationType.RANDOM, function() actor(td) end) end)
    td:set("next", one_step(s, td.action:eq(good):double():view(64, 1)))
    for _ = 1, 4 do
      local o = loss(td)
      opt:zero_grad(); (o.loss_objective + o.loss_entropy + o.loss_critic):backward(); opt:step()
    end
  end
  local p = actor:get_dist(TD({observation = torch.tensor({{1.0}, {-1.0}}, f64)}, {2})).probs
  check(p[1][1]:item() > 0.95 and p[2][2]:item() > 0.95, tostring(p))
end)

test("SACLoss with automatic alpha finds the best action of a continuous bandit", function()
  torch.manual_seed(3)
  local pnet = M.TensorDictModule(M.MLP{in_features = 1, out_features = 2, num_cells = {16}}:double(),
                                  {"observation"}, {"p"})
  local split = M.TensorDictModule(function(p) return p:narrow(-1, 1, 1), F.softplus(p:narrow(-1, 2, 1)) + 1e-3 end,
                                   {"p"}, {"loc", "scale"})
  local actor = M.ProbabilisticActor{module = M.TensorDictSequential(pnet, split), in_keys = {"loc", "scale"},
                                     distribution_class = M.TanhNormal}
  local q = M.ValueOperator(M.MLP{in_features = 2, out_features = 1, num_cells = {32}}:double(), {"observation", "action"})
  local loss = O.SACLoss(actor, q)
  local up = O.SoftUpdate(loss, {tau = 0.05})
  local opt = torch.optim.Adam(loss:parameters(), {lr = 0.01})
  local alpha0 = loss.log_alpha:exp():item()
  for _ = 1, 800 do
    local s = torch.zeros(64, 1, f64)
    local a = torch.rand(64, 1, f64) * 2 - 1
    local td = TD({observation = s, action = a, next = one_step(s, -(a - 0.5):pow(2) * 10)}, {64})
    local o = loss(td)
    opt:zero_grad(); (o.loss_actor + o.loss_qvalue + o.loss_alpha):backward(); opt:step(); up:step()
  end
  local td = TD({observation = torch.zeros(1, 1, f64)}, {1})
  actor(td)
  check(math.abs(td.action:item() - 0.5) < 0.2, "action " .. td.action:item())
  check(loss.log_alpha:exp():item() < alpha0, "alpha was tuned down")
end)
