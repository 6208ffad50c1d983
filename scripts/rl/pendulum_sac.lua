-- scripts/rl/pendulum_sac.lua -- SAC on Pendulum-v1, one file to read top
-- to bottom (CleanRL's sac_continuous_action.py recipe, on torch.rl's pieces).
--
--   moontorch scripts/rl/pendulum_sac.lua [--total-steps 50000] [--seed 1]
--       [--buffer-size 1000000] [--batch-size 256] [--gamma 0.99] [--tau 0.005]
--       [--learning-starts 5000] [--policy-lr 0.0003] [--q-lr 0.001]
--       [--eval-every 5000] [--eval-episodes 10] [--solve-return -200]
--       [--device cpu|cuda] [--compile] [--threads 1] [--checkpoint PATH]
--       [--resume] [--tensorboard DIR] [--no-stop]
--
-- The agent: a policy network (3 -> 256 -> 256 -> mean and log-std) whose
-- actions are a Normal squashed by tanh onto Pendulum's [-2, 2] (TanhNormal);
-- two Q networks (state and action -> 256 -> 256 -> 1) with slowly following
-- target copies (SoftUpdate, tau). The first --learning-starts steps act at
-- random; then every step samples --batch-size transitions from the replay
-- buffer and takes one step on each of SACLoss's terms: the Q networks
-- towards r + gamma (min Q'(s', a') - alpha log pi(a'|s')), the policy
-- towards min Q(s, a~) - alpha log pi(a~|s), and the temperature alpha
-- towards the target entropy (minus the action's size).
--
-- Every --eval-every steps the deterministic policy (the squashed mean) plays
-- --eval-episodes episodes on a batch of separate Pendulums; when their mean
-- return exceeds --solve-return the run is solved: it prints the steps and
-- seconds it took and stops (--no-stop trains on). Progress, metrics
-- (torch.experiment.log, TensorBoard with --tensorboard DIR), a checkpoint per
-- evaluation and --resume work as in cartpole_dqn.lua; --threads defaults to 1.
-- --compile is not supported here yet: the update draws the policy's noise
-- (rsample), which torch.compile does not replay yet; it is an error.
local torch = require "torch"
local here = arg and arg[0] and arg[0]:match("^(.*)/") or "."
package.path = here .. "/../?.lua;" .. package.path -- train_options.lua
local options = require "train_options"
local nn = require "torch.nn"
local optim = require "torch.optim"
local rl = torch.rl
local envs, data, modules, objectives = rl.envs, rl.data, rl.modules, rl.objectives
local TensorDict = rl.TensorDict

-- ---- options -------------------------------------------------------------
local o = {total_steps = 50000, seed = 1, buffer_size = 1000000, batch_size = 256, gamma = 0.99, tau = 0.005,
  learning_starts = 5000, policy_lr = 3e-4, q_lr = 1e-3, eval_every = 5000, eval_episodes = 10, solve_return = -200,
  device = "cpu", threads = 1, checkpoint = "pendulum_sac.ckpt", resume = false, tensorboard = nil, no_stop = false, compile = false}
options.parse(arg or {}, o, {total_steps = "int", seed = "int", buffer_size = "int", batch_size = "int",
  gamma = "num", tau = "num", learning_starts = "int", policy_lr = "num", q_lr = "num", eval_every = "int",
  eval_episodes = "int", solve_return = "num", threads = "int"}, {resume = true, no_stop = true, compile = true},
  {tensorboard = true})
options.check_device(o)
if o.compile then
  error("--compile is not supported by pendulum_sac.lua yet: SAC's update draws the policy's noise (rsample), which "
    .. "torch.compile does not replay yet; run without it", 0)
end
torch.set_num_threads(o.threads)
torch.manual_seed(o.seed)

-- ---- networks and loss -------------------------------------------------------
-- PolicyNet: obs -> (loc, scale) of the Normal before the tanh; the log-std
-- is squashed into [-5, 2] as CleanRL does
local PolicyNet = nn.Module:extend("PolicyNet")
function PolicyNet:__init()
  self.body = nn.Sequential(nn.Linear(3, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2))
end
function PolicyNet:forward(obs)
  local h = self.body(obs)
  local log_std = torch.tanh(h:narrow(-1, 2, 1))
  log_std = -5 + 0.5 * (2 - -5) * (log_std + 1)
  return h:narrow(-1, 1, 1), log_std:exp()
end

local policy_net = PolicyNet():to(o.device)

local actor = modules.ProbabilisticActor{
  module = modules.TensorDictModule(policy_net, {"observation"}, {"loc", "scale"}), in_keys = {"loc", "scale"},
  distribution_class = modules.TanhNormal, distribution_kwargs = {low = -2.0, high = 2.0}, return_log_prob = false}
local qnet = modules.MLP{in_features = 4, out_features = 1, num_cells = {256, 256}, activation_class = nn.ReLU}
local critic = modules.ValueOperator(qnet:to(o.device), {in_keys = {"observation", "action"}})
local loss_fn = objectives.SACLoss(actor, critic, {num_qvalue_nets = 2, loss_function = "l2", gamma = o.gamma,
  alpha_init = 1.0})
local target_update = objectives.SoftUpdate(loss_fn, {tau = o.tau})

-- the three optimizers: the Q networks, the policy, the temperature
local actor_params, is_actor = {}, {}
for _, p in ipairs(policy_net:parameters()) do actor_params[#actor_params + 1] = p; is_actor[p] = true end
local q_params = {}
for _, p in ipairs(loss_fn:parameters()) do
  if p.requires_grad and not is_actor[p] and p ~= loss_fn.log_alpha then q_params[#q_params + 1] = p end
end
local q_opt = optim.Adam(q_params, {lr = o.q_lr})
local actor_opt = optim.Adam(actor_params, {lr = o.policy_lr})
local alpha_opt = optim.Adam({loss_fn.log_alpha}, {lr = o.q_lr})

local env = envs.make("Pendulum-v1", {num_envs = 1, seed = o.seed, autoreset_mode = "same_step"})
local buffer = data.TensorDictReplayBuffer{storage = data.LazyTensorStorage(o.buffer_size, {device = o.device}),
  batch_size = o.batch_size}

-- update(batch's tensors) -> the loss terms: one step of each optimizer
local function update(obs, action, next_obs, reward, terminated, done)
  local out = loss_fn(TensorDict({observation = obs, action = action, next = {observation = next_obs,
    reward = reward, terminated = terminated, done = done}}, {obs:size(1)}))
  q_opt:zero_grad(); actor_opt:zero_grad(); alpha_opt:zero_grad()
  ;(out.loss_qvalue + out.loss_actor + out.loss_alpha):backward()
  q_opt:step(); actor_opt:step(); alpha_opt:step()
  return out.loss_qvalue, out.loss_actor, out.alpha
end
local run_update = update

-- act(obs [N, 3]) -> actions [N, 1]: sampled (explore) or the squashed mean
local function act(obs, explore)
  local kind = explore and modules.ExplorationType.RANDOM or modules.ExplorationType.DETERMINISTIC
  return modules.set_exploration_type(kind, function()
    return torch.no_grad(function()
      return actor(TensorDict({observation = obs:to(o.device)}, {obs:size(1)})).action:cpu()
    end)
  end)
end

-- evaluate(episodes, seed) -> mean return of the deterministic policy over
-- one 200-step episode on each copy of a batched Pendulum
local function evaluate(episodes, seed)
  local e = envs.make("Pendulum-v1", {num_envs = episodes, seed = seed})
  local obs, total = e:reset{}, torch.zeros(episodes)
  for _ = 1, 200 do
    local nobs, r = e:step(act(obs, false))
    total:add_(r)
    obs = nobs
  end
  return total:mean():item()
end

-- ---- checkpoints and logging -------------------------------------------------------
local start_step, t_spent = 1, 0
if o.resume then
  local ck = torch.load(o.checkpoint)
  loss_fn:load_state_dict(ck.loss)
  q_opt:load_state_dict(ck.q_opt)
  actor_opt:load_state_dict(ck.actor_opt)
  alpha_opt:load_state_dict(ck.alpha_opt)
  start_step, t_spent = ck.step + 1, ck.seconds
  print(("resumed from %s at step %d (the replay buffer starts empty again)"):format(o.checkpoint, ck.step))
end
local function save(step, seconds)
  torch.save({loss = loss_fn:state_dict(), q_opt = q_opt:state_dict(), actor_opt = actor_opt:state_dict(),
    alpha_opt = alpha_opt:state_dict(), step = step, seconds = seconds}, o.checkpoint)
end
local writer = o.tensorboard and torch.utils.tensorboard.SummaryWriter(o.tensorboard)
local function log(step, fields)
  fields.step = step
  torch.experiment.log(fields)
  if writer then
    for k, v in pairs(fields) do if k ~= "step" then writer:add_scalar(k, v, step) end end
  end
end

-- ---- the training loop -----------------------------------------------------------
print(("SAC on Pendulum-v1: %d steps, seed %d, device %s"):format(o.total_steps, o.seed, o.device))
local t0 = torch.time() - t_spent
local obs = env:reset{}
local ep_return, recent, last_print, solved_at = 0, {}, 0, nil
local learn_from = math.max(o.learning_starts, start_step)
for step = start_step, o.total_steps do
  local action = step <= learn_from and torch.rand(1, 1) * 4 - 2 or act(obs, true)
  local nobs, reward, terminated, truncated, info = env:step(action)
  local done = terminated:logical_or(truncated)
  local last = done[1]:item() and info.final_observation or nobs -- the episode's last observation
  buffer:extend(TensorDict({observation = obs, action = action, next = {observation = last,
    reward = reward:unsqueeze(-1), terminated = terminated:unsqueeze(-1), done = done:unsqueeze(-1)}}, {1}))
  obs = nobs
  ep_return = ep_return + reward[1]:item()
  if done[1]:item() then
    recent[#recent + 1] = ep_return
    if #recent > 10 then table.remove(recent, 1) end
    log(step, {episode_return = ep_return})
    ep_return = 0
  end

  if step > learn_from then
    local b = buffer:sample():to(o.device)
    local lq, la, alpha = run_update(b.observation, b.action, b.next.observation, b.next.reward, b.next.terminated,
      b.next.done)
    target_update:step()
    if step % 100 == 0 then log(step, {loss_qvalue = lq:item(), loss_actor = la:item(), alpha = alpha:item()}) end
  end

  if step > learn_from and step % o.eval_every == 0 then
    local mean = evaluate(o.eval_episodes, o.seed * 1000 + step)
    local secs = torch.time() - t0
    log(step, {eval_return = mean})
    save(step, secs)
    print(("\nstep %6d  eval mean return %7.1f over %d episodes  (%.1f s)"):format(step, mean, o.eval_episodes, secs))
    if mean > o.solve_return and not solved_at then
      solved_at = {step = step, seconds = secs, mean = mean}
      print(("solved: mean return %.1f > %g after %d steps, %.1f s"):format(mean, o.solve_return, step, secs))
      if not o.no_stop then break end
    end
  end
  if torch.time() - last_print > 2 then
    last_print = torch.time()
    local sum = 0
    for _, v in ipairs(recent) do sum = sum + v end
    local rate = (step - start_step + 1) / (torch.time() - t0 - t_spent + 1e-9)
    io.write(("\rstep %6d/%d  %5.0f steps/s  ETA %5.0f s  return (last %d) %7.1f   "):format(step, o.total_steps,
      rate, (o.total_steps - step) / rate, #recent, #recent > 0 and sum / #recent or 0))
    io.flush()
  end
end
io.write("\n")
if writer then writer:close() end
if solved_at then
  print(("result: solved at step %d in %.1f s (eval mean %.1f)"):format(solved_at.step, solved_at.seconds,
    solved_at.mean))
else
  print(("result: not solved within %d steps (%.1f s)"):format(o.total_steps, torch.time() - t0))
end
