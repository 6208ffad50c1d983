-- scripts/rl/cartpole_ppo.lua -- PPO on CartPole-v1, one file to read top
-- to bottom (CleanRL's ppo.py recipe, on torch.rl's pieces).
--
--   moontorch scripts/rl/cartpole_ppo.lua [--total-frames 500000] [--seed 1]
--       [--num-envs 4] [--num-steps 128] [--lr 0.00025] [--gamma 0.99]
--       [--gae-lambda 0.95] [--num-minibatches 4] [--update-epochs 4]
--       [--clip-coef 0.2] [--ent-coef 0.01] [--vf-coef 0.5] [--max-grad-norm 0.5]
--       [--eval-every 20480] [--eval-episodes 100] [--solve-return 475]
--       [--device cpu|cuda] [--compile] [--threads 1] [--checkpoint PATH]
--       [--resume] [--tensorboard DIR] [--no-stop]
--
-- The agent: an actor (4 -> 64 -> 64 -> 2 logits, tanh) samples actions from
-- a Categorical; a critic (4 -> 64 -> 64 -> 1) estimates state values. Each
-- iteration plays --num-steps steps on --num-envs CartPoles at once, computes
-- advantages by GAE (gamma, lambda), then trains both networks for
-- --update-epochs passes over the batch in --num-minibatches minibatches on
-- the clipped PPO objective plus the value loss and an entropy bonus
-- (ClipPPOLoss), the gradient norm clipped and the learning rate annealed to
-- 0 over the run.
--
-- Every --eval-every frames the greedy policy (the likeliest action) plays
-- --eval-episodes episodes on a batch of separate CartPoles; when their mean
-- return reaches --solve-return the run is solved: it prints the frames and
-- seconds it took and stops (--no-stop trains on). Progress, metrics
-- (torch.experiment.log, TensorBoard with --tensorboard DIR), a checkpoint per
-- evaluation and --resume work as in cartpole_dqn.lua. --threads defaults to
-- 1: the networks are tiny, and threads only add hand-off latency.
-- --compile runs each minibatch's update (loss, backward, clipping, Adam
-- step) as one graph compiled by torch.compile.
local torch = require "torch"
local here = arg and arg[0] and arg[0]:match("^(.*)/") or "."
package.path = here .. "/../?.lua;" .. package.path -- train_options.lua
local options = require "train_options"
local nn = require "torch.nn"
local optim = require "torch.optim"
local rl = torch.rl
local envs, modules, objectives = rl.envs, rl.modules, rl.objectives
local TensorDict = rl.TensorDict

-- ---- options -------------------------------------------------------------
local o = {total_frames = 500000, seed = 1, num_envs = 4, num_steps = 128, lr = 2.5e-4, gamma = 0.99,
  gae_lambda = 0.95, num_minibatches = 4, update_epochs = 4, clip_coef = 0.2, ent_coef = 0.01, vf_coef = 0.5,
  max_grad_norm = 0.5, eval_every = 20480, eval_episodes = 100, solve_return = 475, device = "cpu", threads = 1,
  checkpoint = "cartpole_ppo.ckpt", resume = false, tensorboard = nil, no_stop = false, compile = false}
options.parse(arg or {}, o, {total_frames = "int", seed = "int", num_envs = "int", num_steps = "int", lr = "num",
  gamma = "num", gae_lambda = "num", num_minibatches = "int", update_epochs = "int", clip_coef = "num",
  ent_coef = "num", vf_coef = "num", max_grad_norm = "num", eval_every = "int", eval_episodes = "int",
  solve_return = "num", threads = "int"}, {resume = true, no_stop = true, compile = true},
  {tensorboard = true})
options.check_device(o)
torch.set_num_threads(o.threads)
torch.manual_seed(o.seed)

-- ---- networks and loss -------------------------------------------------------
-- layer(i, o, std): a Linear with CleanRL's orthogonal init
local function layer(nin, nout, std)
  local l = nn.Linear(nin, nout)
  nn.init.orthogonal_(l.weight, std)
  nn.init.constant_(l.bias, 0)
  return l
end
local policy_net = nn.Sequential(layer(4, 64, math.sqrt(2)), nn.Tanh(), layer(64, 64, math.sqrt(2)), nn.Tanh(),
  layer(64, 2, 0.01)):to(o.device)
local value_net = nn.Sequential(layer(4, 64, math.sqrt(2)), nn.Tanh(), layer(64, 64, math.sqrt(2)), nn.Tanh(),
  layer(64, 1, 1.0)):to(o.device)
local actor = modules.ProbabilisticActor{
  module = modules.TensorDictModule(policy_net, {"observation"}, {"logits"}), in_keys = {"logits"},
  distribution_class = torch.distributions.Categorical, return_log_prob = true}
local critic = modules.ValueOperator(value_net, {in_keys = {"observation"}})
local loss_fn = objectives.ClipPPOLoss(actor, critic, {clip_epsilon = o.clip_coef, entropy_coef = o.ent_coef,
  critic_coef = o.vf_coef, loss_critic_type = "l2", normalize_advantage = true})
loss_fn:make_value_estimator(objectives.ValueEstimators.GAE, {gamma = o.gamma, lmbda = o.gae_lambda})
local params = {}
for _, p in ipairs(policy_net:parameters()) do params[#params + 1] = p end
for _, p in ipairs(value_net:parameters()) do params[#params + 1] = p end
local optimizer = optim.Adam(params, {lr = o.lr, eps = 1e-5})

local env = envs.make("CartPole-v1", {num_envs = o.num_envs, seed = o.seed, autoreset_mode = "same_step"})
local batch_frames = o.num_envs * o.num_steps
local iterations = o.total_frames // batch_frames
local minibatch = batch_frames // o.num_minibatches

-- update(obs, action, log_prob, advantage, value_target): one minibatch step
-- on the PPO loss (compiled as one graph with --compile)
local function update(obs, action, log_prob, advantage, value_target)
  local mb = TensorDict({observation = obs, action = action, action_log_prob = log_prob, advantage = advantage,
    value_target = value_target}, {obs:size(1)})
  local out = loss_fn(mb)
  local loss = out.loss_objective + out.loss_critic + out.loss_entropy
  optimizer:zero_grad()
  loss:backward()
  nn.utils.clip_grad_norm_(params, o.max_grad_norm)
  optimizer:step()
  return loss
end
local run_update = o.compile and torch.compile(update) or update

-- greedy(obs [N, 4]) -> the likeliest actions [N] (1-based)
local function greedy(obs)
  return torch.no_grad(function() return policy_net(obs:to(o.device)):argmax(-1):cpu() end)
end

-- evaluate(episodes, seed) -> mean return of the greedy policy, one episode
-- per copy of a batched CartPole (a copy that finishes starts over; its later
-- episodes are not counted)
local function evaluate(episodes, seed)
  local e = envs.make("CartPole-v1", {num_envs = episodes, seed = seed})
  local obs, total = e:reset{}, torch.zeros(episodes)
  local alive = torch.ones(episodes, {dtype = torch.bool})
  while alive:any():item() do
    local nobs, r, term, trunc = e:step(greedy(obs))
    total:add_(r * alive:float())
    alive = alive:logical_and(term:logical_or(trunc):logical_not())
    obs = nobs
  end
  return total:mean():item()
end

-- ---- checkpoints and logging -------------------------------------------------------
local start_iter, t_spent = 1, 0
if o.resume then
  local ck = torch.load(o.checkpoint)
  policy_net:load_state_dict(ck.policy)
  value_net:load_state_dict(ck.value)
  optimizer:load_state_dict(ck.optimizer)
  start_iter, t_spent = ck.iteration + 1, ck.seconds
  print(("resumed from %s after iteration %d"):format(o.checkpoint, ck.iteration))
end
local function save(iter, seconds)
  torch.save({policy = policy_net:state_dict(), value = value_net:state_dict(), optimizer = optimizer:state_dict(),
    iteration = iter, seconds = seconds}, o.checkpoint)
end
local writer = o.tensorboard and torch.utils.tensorboard.SummaryWriter(o.tensorboard)
local function log(frame, fields)
  fields.step = frame
  torch.experiment.log(fields)
  if writer then
    for k, v in pairs(fields) do if k ~= "step" then writer:add_scalar(k, v, frame) end end
  end
end

-- ---- the training loop -----------------------------------------------------------
print(("PPO on CartPole-v1: %d frames (%d iterations of %d), seed %d, device %s"):format(iterations * batch_frames,
  iterations, batch_frames, o.seed, o.device))
local t0 = torch.time() - t_spent
local obs = env:reset{}
local ep_returns, finished, last_print = torch.zeros(o.num_envs), {}, 0
local next_eval, solved_at = o.eval_every, nil
for iter = start_iter, iterations do
  optimizer.param_groups[1].lr = o.lr * (1 - (iter - 1) / iterations) -- annealed to 0

  -- collect num_steps steps of every env, sampling the actions
  local steps = {}
  modules.set_exploration_type(modules.ExplorationType.RANDOM, function()
    torch.no_grad(function()
      for t = 1, o.num_steps do
        local td = actor(TensorDict({observation = obs}, {o.num_envs}))
        local nobs, reward, terminated, truncated, info = env:step(td.action)
        local done = terminated:logical_or(truncated)
        -- where an episode ended the next observation is its last one
        local last = done:any():item() and torch.where(done:unsqueeze(-1), info.final_observation, nobs) or nobs
        td:set("next", TensorDict({observation = last, reward = reward:unsqueeze(-1),
          terminated = terminated:unsqueeze(-1), done = done:unsqueeze(-1)}, {o.num_envs}))
        steps[t] = td
        obs = nobs
        ep_returns:add_(reward)
        if done:any():item() then
          for i = 1, o.num_envs do
            if done[i]:item() then finished[#finished + 1] = ep_returns[i]:item(); ep_returns[i] = 0 end
          end
        end
      end
    end)
  end)
  local batch = TensorDict.stack(steps, 2):to(o.device) -- [num_envs, num_steps]: time last, as GAE wants
  torch.no_grad(function() loss_fn.value_estimator(batch) end) -- advantage, value_target
  local flat = batch:reshape(batch_frames)

  -- update_epochs passes over the batch in minibatches
  local last_loss
  for _ = 1, o.update_epochs do
    local perm = torch.randperm(batch_frames)
    for m = 1, o.num_minibatches do
      local mb = flat:index(perm:narrow(1, (m - 1) * minibatch + 1, minibatch))
      last_loss = run_update(mb.observation, mb.action, mb.action_log_prob, mb.advantage, mb.value_target)
    end
  end

  local frame = iter * batch_frames
  if #finished > 0 then
    local sum = 0
    for _, v in ipairs(finished) do sum = sum + v end
    log(frame, {episode_return = sum / #finished, loss = last_loss:item()})
  end
  if torch.time() - last_print > 2 then
    last_print = torch.time()
    local recent, n = 0, math.min(#finished, 20)
    for i = #finished - n + 1, #finished do recent = recent + finished[i] end
    local rate = (frame - (start_iter - 1) * batch_frames) / (torch.time() - t0 - t_spent + 1e-9)
    io.write(("\rframe %7d/%d  %6.0f frames/s  ETA %4.0f s  return (last %d) %6.1f   "):format(frame,
      iterations * batch_frames, rate, (iterations * batch_frames - frame) / rate, n, n > 0 and recent / n or 0))
    io.flush()
  end
  if #finished > 100 then finished = {table.unpack(finished, #finished - 99)} end

  if frame >= next_eval then
    next_eval = next_eval + o.eval_every
    local mean = evaluate(o.eval_episodes, o.seed * 1000 + iter)
    local secs = torch.time() - t0
    log(frame, {eval_return = mean})
    save(iter, secs)
    print(("\nframe %7d  eval mean return %6.1f over %d episodes  (%.1f s)"):format(frame, mean, o.eval_episodes,
      secs))
    if mean >= o.solve_return and not solved_at then
      solved_at = {frame = frame, seconds = secs, mean = mean}
      print(("solved: mean return %.1f >= %g after %d frames, %.1f s"):format(mean, o.solve_return, frame, secs))
      if not o.no_stop then break end
    end
  end
end
io.write("\n")
if writer then writer:close() end
if solved_at then
  print(("result: solved at frame %d in %.1f s (eval mean %.1f)"):format(solved_at.frame, solved_at.seconds,
    solved_at.mean))
else
  print(("result: not solved within %d frames (%.1f s)"):format(iterations * batch_frames, torch.time() - t0))
end
