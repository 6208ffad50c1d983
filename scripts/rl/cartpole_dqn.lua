-- scripts/rl/cartpole_dqn.lua -- DQN on CartPole-v1, one file to read top
-- to bottom (CleanRL's dqn.py recipe, on torch.rl's pieces).
--
--   moontorch scripts/rl/cartpole_dqn.lua [--total-frames 500000] [--seed 1]
--       [--lr 0.00025] [--buffer-size 10000] [--batch-size 128] [--gamma 0.99]
--       [--target-update 500] [--train-frequency 10] [--learning-starts 10000]
--       [--start-e 1] [--end-e 0.05] [--exploration-fraction 0.5]
--       [--eval-every 10000] [--eval-episodes 100] [--solve-return 475]
--       [--device cpu|cuda] [--compile] [--threads 1] [--checkpoint PATH]
--       [--resume] [--tensorboard DIR] [--no-stop]
--
-- The agent: a Q network (4 -> 120 -> 84 -> 2, ReLU) picks the action of the
-- larger value; with probability epsilon (annealed linearly from --start-e to
-- --end-e over the first --exploration-fraction of the frames) a random
-- action instead. Every frame goes into a replay buffer of the last
-- --buffer-size transitions; after --learning-starts frames, every
-- --train-frequency frames a batch of --batch-size transitions trains the Q
-- network towards r + gamma max_a' Q_target(s', a') (DQNLoss, Adam), and every
-- --target-update frames the target network gets a copy of the Q network.
--
-- Every --eval-every frames (after the learning starts) the greedy policy
-- plays --eval-episodes episodes on a batch of separate CartPoles; when their
-- mean return reaches --solve-return, the run is solved: it prints the frames
-- and the seconds it took and stops (--no-stop trains on to --total-frames).
-- Progress (frames, frames/s, ETA, recent episode returns) is printed as it
-- goes; metrics go to torch.experiment.log (under `moontorch sweep`) and to
-- TensorBoard with --tensorboard DIR; a checkpoint is written at every
-- evaluation and --resume continues from it. --threads defaults to 1: the
-- network is tiny, and threads only add hand-off latency to each small op.
-- --compile runs each training step (loss, backward, Adam step) and the
-- greedy action's forward pass as graphs compiled by torch.compile.
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
local o = {total_frames = 500000, seed = 1, lr = 2.5e-4, buffer_size = 10000, batch_size = 128, gamma = 0.99,
  target_update = 500, train_frequency = 10, learning_starts = 10000, start_e = 1.0, end_e = 0.05,
  exploration_fraction = 0.5, eval_every = 10000, eval_episodes = 100, solve_return = 475, device = "cpu",
  threads = 1, checkpoint = "cartpole_dqn.ckpt", resume = false, tensorboard = nil, no_stop = false, compile = false}
options.parse(arg or {}, o, {total_frames = "int", seed = "int", lr = "num", buffer_size = "int", batch_size = "int",
  gamma = "num", target_update = "int", train_frequency = "int", learning_starts = "int", start_e = "num",
  end_e = "num", exploration_fraction = "num", eval_every = "int", eval_episodes = "int", solve_return = "num",
  threads = "int"}, {resume = true, no_stop = true, compile = true},
  {tensorboard = true})
options.check_device(o)
if o.threads then torch.set_num_threads(o.threads) end
torch.manual_seed(o.seed)

-- ---- the environment, the Q network, the loss ------------------------------
-- same_step autoreset: a step that ends an episode returns the next
-- episode's first observation, and the true last one in info.final_observation
local env = envs.make("CartPole-v1", {num_envs = 1, seed = o.seed, autoreset_mode = "same_step"})
local qnet = nn.Sequential(nn.Linear(4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 2)):to(o.device)
local actor = modules.QValueActor(qnet, {in_keys = {"observation"}, action_space = "categorical"})
local loss_fn = objectives.DQNLoss(actor, {delay_value = true, gamma = o.gamma})
local target_net = loss_fn.target_value_network -- a frozen copy of actor
local target_update = objectives.HardUpdate(loss_fn, {value_network_update_interval = o.target_update})
local optimizer = optim.Adam(qnet:parameters(), {lr = o.lr})
local buffer = data.TensorDictReplayBuffer{storage = data.LazyTensorStorage(o.buffer_size, {device = o.device}),
  batch_size = o.batch_size}

-- update(batch's tensors): one step on the DQN loss (compiled with --compile)
local function update(obs, action, next_obs, reward, terminated, done)
  local batch = TensorDict({observation = obs, action = action, next = {observation = next_obs, reward = reward,
    terminated = terminated, done = done}}, {obs:size(1)})
  local loss = loss_fn(batch).loss
  optimizer:zero_grad()
  loss:backward()
  optimizer:step()
  return loss
end
local run_update = o.compile and torch.compile(update) or update

-- epsilon(frame): the exploration rate, linear from start_e to end_e
local function epsilon(frame)
  local span = o.exploration_fraction * o.total_frames
  return math.max(o.end_e, o.start_e + (o.end_e - o.start_e) * frame / span)
end

-- greedy(obs [N, 4]) -> 1-based actions [N] of the larger Q value
local function best(obs) return qnet(obs):argmax(-1) end -- argmax is 1-based
local run_best = o.compile and torch.compile(best) or best
local function greedy(obs)
  return torch.no_grad(function() return run_best(obs:to(o.device)):cpu() end)
end

-- evaluate(episodes) -> mean return of the greedy policy over that many
-- episodes, one per copy of a batched CartPole (no exploration)
local function evaluate(episodes, seed)
  -- (a copy that finishes starts over; its later episodes are not counted)
  local e = envs.make("CartPole-v1", {num_envs = episodes, seed = seed})
  local obs, total = e:reset{}, torch.zeros(episodes)
  local alive = torch.ones(episodes, {dtype = torch.bool})
  while alive:any():item() do
    local act = greedy(obs)
    local nobs, r, term, trunc = e:step(act)
    total:add_(r * alive:float())
    alive = alive:logical_and((term:logical_or(trunc)):logical_not())
    obs = nobs
  end
  return total:mean():item()
end

-- ---- checkpoints -------------------------------------------------------------
local start_frame, t_spent = 1, 0
if o.resume then
  local ck = torch.load(o.checkpoint)
  actor:load_state_dict(ck.actor)
  target_net:load_state_dict(ck.target)
  optimizer:load_state_dict(ck.optimizer)
  start_frame, t_spent = ck.frame + 1, ck.seconds
  print(("resumed from %s at frame %d (the replay buffer starts empty again)"):format(o.checkpoint, ck.frame))
end
local function save(frame, seconds)
  torch.save({actor = actor:state_dict(), target = target_net:state_dict(), optimizer = optimizer:state_dict(),
    frame = frame, seconds = seconds}, o.checkpoint)
end

local writer = o.tensorboard and torch.utils.tensorboard.SummaryWriter(o.tensorboard)
local function log(frame, fields)
  fields.step = frame
  torch.experiment.log(fields)
  if writer then
    for k, v in pairs(fields) do if k ~= "step" then writer:add_scalar(k, v, frame) end end
  end
end

-- ---- the training loop ---------------------------------------------------------
print(("DQN on CartPole-v1: %d frames, seed %d, device %s"):format(o.total_frames, o.seed, o.device))
local t0 = torch.time() - t_spent
local obs = env:reset{}
local ep_return, recent, last_print = 0, {}, torch.time()
local solved_at
for frame = start_frame, o.total_frames do
  -- act: epsilon-greedy
  local action
  if torch.rand(1):item() < epsilon(frame) then action = torch.randint(1, 3, {1}) else action = greedy(obs) end
  local nobs, reward, terminated, truncated, info = env:step(action)
  local done = terminated:logical_or(truncated)
  -- the transition's next observation is the episode's last one when it ended
  local next_obs = done[1]:item() and info.final_observation or nobs
  buffer:extend(TensorDict({observation = obs, action = action,
    next = {observation = next_obs, reward = reward:unsqueeze(-1), terminated = terminated:unsqueeze(-1),
            done = done:unsqueeze(-1)}}, {1}))
  obs = nobs
  ep_return = ep_return + reward[1]:item()
  if done[1]:item() then
    recent[#recent + 1] = ep_return
    if #recent > 20 then table.remove(recent, 1) end
    log(frame, {episode_return = ep_return})
    ep_return = 0
  end

  -- learn: a batch every train_frequency frames, the target copied every target_update
  if frame > o.learning_starts and frame % o.train_frequency == 0 then
    local b = buffer:sample():to(o.device)
    local loss = run_update(b.observation, b.action, b.next.observation, b.next.reward, b.next.terminated,
      b.next.done)
    if frame % 100 == 0 then log(frame, {loss = loss:item(), epsilon = epsilon(frame)}) end
  end
  if frame > o.learning_starts then target_update:step() end -- copies every target_update-th call

  -- evaluate, checkpoint
  if frame > o.learning_starts and frame % o.eval_every == 0 then
    local mean = evaluate(o.eval_episodes, o.seed * 1000 + frame)
    local secs = torch.time() - t0
    log(frame, {eval_return = mean})
    save(frame, secs)
    print(("frame %7d  eval mean return %6.1f over %d episodes  (%.1f s)"):format(frame, mean, o.eval_episodes, secs))
    if mean >= o.solve_return and not solved_at then
      solved_at = {frame = frame, seconds = secs, mean = mean}
      print(("solved: mean return %.1f >= %g after %d frames, %.1f s"):format(mean, o.solve_return, frame, secs))
      if not o.no_stop then break end
    end
  end
  if torch.time() - last_print > 2 then
    last_print = torch.time()
    local sum = 0
    for _, v in ipairs(recent) do sum = sum + v end
    local rate = (frame - start_frame + 1) / (torch.time() - t0 + t_spent)
    io.write(("\rframe %7d/%d  %6.0f frames/s  ETA %4.0f s  eps %.2f  return (last 20) %6.1f   "):format(frame,
      o.total_frames, rate, (o.total_frames - frame) / rate, epsilon(frame), #recent > 0 and sum / #recent or 0))
    io.flush()
  end
end
io.write("\n")
if writer then writer:close() end
if solved_at then
  print(("result: solved at frame %d in %.1f s (eval mean %.1f)"):format(solved_at.frame, solved_at.seconds,
    solved_at.mean))
else
  print(("result: not solved within %d frames (%.1f s)"):format(o.total_frames, torch.time() - t0))
end
