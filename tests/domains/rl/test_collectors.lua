-- tests/domains/rl/test_collectors.lua -- torch.rl.collectors: frame
-- counts and batch shapes, trajectory ids against the done flags, batches
-- equal to a rollout of the same env, split_trajs padding and masks, random
-- frames before the policy, the exploration type the policy sees,
-- reset_at_each_iter, and bad input by its message.
cpu_only("GymEnv runs the C classic-control envs")
local E = torch.rl.envs
local C = torch.rl.collectors

local function cartpole(n, seed) return E.GymEnv("CartPole-v1", {num_envs = n, seed = seed}) end

test("batches hold frames_per_batch frames as [N, T] until total_frames", function()
  local c = C.SyncDataCollector(function() return cartpole(4, 1) end, nil, {frames_per_batch = 32, total_frames = 96})
  local count = 0
  for batch in c do
    count = count + 1
    check_eq(batch.batch_size, {4, 8})
    check_eq(batch:numel(), 32)
    check_shape(batch.next.observation, {4, 8, 4})
  end
  check_eq(count, 3)
  check_eq(c:frames(), 96)
  check(c:next_batch() == nil, "nothing after total_frames")
  -- total_frames rounds up to whole batches, as TorchRL
  local c2 = C.SyncDataCollector(cartpole(2, 1), nil, {frames_per_batch = 10, total_frames = 25})
  local n2 = 0
  for _ in c2:iter() do n2 = n2 + 1 end
  check_eq(n2, 3)
  -- an unbatched env: [T]
  local c3 = C.SyncDataCollector(E.GymEnv("Pendulum-v1", {seed = 1}), nil, {frames_per_batch = 7, total_frames = 7})
  check_eq(c3:next_batch().batch_size, {7})
end)

test("a collector batch equals the env's rollout with the same seed and actions", function()
  local acts = {}
  torch.manual_seed(5)
  for t = 1, 50 do acts[t] = torch.randint(1, 3, {3}, {dtype = torch.int64}) end
  local function policy()
    local t = 0
    return function(td) t = t + 1; td:set("action", acts[t]); return td end
  end
  local c = C.SyncDataCollector(cartpole(3, 8), policy(), {frames_per_batch = 150, total_frames = 150})
  local b = c:next_batch()
  local r = cartpole(3, 8):rollout(50, policy(), {break_when_any_done = false})
  check(torch.equal(b.observation, r.observation) and torch.equal(b.next.observation, r.next.observation),
    "observations")
  check(torch.equal(b.action, r.action) and torch.equal(b.next.done, r.next.done), "actions and dones")
end)

test("trajectory ids change exactly after a done step, and are new each time", function()
  local c = C.SyncDataCollector(cartpole(3, 2), nil, {frames_per_batch = 300, total_frames = 600})
  local seen, last_id = {}, nil
  local b1, b2 = c:next_batch(), c:next_batch()
  for _, b in ipairs({b1, b2}) do
    local ids, done = b.collector.traj_ids, b.next.done:squeeze(3)
    for i = 1, 3 do
      for t = 1, 99 do
        local same = ids[i][t]:item() == ids[i][t + 1]:item()
        check(same ~= done[i][t]:item(), ("copy %d step %d: id changes iff done"):format(i, t))
        if not same then
          local new = ids[i][t + 1]:item()
          check(not seen[new], "a fresh id")
          seen[new] = true
        end
      end
      seen[ids[i][1]:item()] = true
    end
  end
  -- ids carry over between batches
  for i = 1, 3 do
    local carried = b1.collector.traj_ids[i][100]:item()
    last_id = b1.next.done[i][100][1]:item() and nil or carried
    if last_id then check_eq(b2.collector.traj_ids[i][1]:item(), last_id) end
  end
  check(b1.next.done:sum():item() >= 3, "several episodes ended")
end)

test("split_trajs pads each trajectory with zeros and masks the real steps", function()
  local c = C.SyncDataCollector(cartpole(2, 6), nil, {frames_per_batch = 80, total_frames = 80})
  torch.manual_seed(12) -- random actions come from torch's generator
  local flat = c:next_batch()
  local s = C.split_trajectories(flat)
  local mask = s.collector.mask
  check_eq(mask:sum():item(), 80)
  local ids = flat.collector.traj_ids
  local ntraj = 0
  local present = {}
  for i = 1, ids:numel() do
    local v = ids:reshape({-1})[i]:item()
    if not present[v] then present[v] = true; ntraj = ntraj + 1 end
  end
  check_eq(s.batch_size[1], ntraj)
  for j = 1, ntraj do
    local len = mask[j]:sum():item()
    local id = s.collector.traj_ids[j][1]:item()
    check_eq(ids:eq(id):sum():item(), len)
    check(mask[j]:narrow(1, 1, len):all():item(), "mask leads with the steps")
    if len < mask:size(2) then
      check(s.next.observation[j]:narrow(1, len + 1, mask:size(2) - len):eq(0):all():item(), "zero padding")
    end
    -- the piece is the steps of that id, in order
    local rows = ids:eq(id):reshape({-1})
    local want = flat.next.observation:reshape({-1, 4})[rows]
    check(torch.equal(s.next.observation[j]:narrow(1, 1, len), want), "trajectory " .. j)
    check(not s.next.done[j]:narrow(1, 1, len - 1):any():item(), "done only at a trajectory's end")
  end
  local c2 = C.SyncDataCollector(cartpole(2, 6), nil, {frames_per_batch = 80, total_frames = 80, split_trajs = true})
  torch.manual_seed(12)
  local s2 = c2:next_batch()
  check(torch.equal(s2.collector.mask, mask) and torch.equal(s2.next.observation, s.next.observation),
    "split_trajs option = split_trajectories")
end)

test("init_random_frames: random actions first, then the policy under exploration_type", function()
  local calls, modes = 0, {}
  local function policy(td)
    calls = calls + 1
    modes[E.exploration_type()] = true
    td:set("action", torch.full({2}, 2, {dtype = torch.int64}))
    return td
  end
  local c = C.SyncDataCollector(cartpole(2, 3), policy, {frames_per_batch = 20, total_frames = 60,
    init_random_frames = 40, exploration_type = "deterministic"})
  local b1, b2, b3 = c:next_batch(), c:next_batch(), c:next_batch()
  check_eq(calls, 10)
  check(b1.action:eq(1):any():item() and b2.action:eq(1):any():item(), "random actions in the first 40 frames")
  check(b3.action:eq(2):all():item(), "the policy's actions after")
  check(modes.deterministic and not modes.random, "the policy ran under 'deterministic'")
  check(E.exploration_type() == nil, "the type is restored after each policy call")
end)

test("torch.rl.modules policies see the collector's exploration type (QValueActor + EGreedyModule)", function()
  local M, nn = torch.rl.modules, torch.nn
  torch.manual_seed(0)
  local env = cartpole(4, 1)
  local q = M.QValueActor(nn.Linear(4, 2), {in_keys = {"observation"}, spec = env.action_spec})
  local one = env:action_spec_unbatched() -- EGreedyModule draws spec:rand(batch_size)
  check_eq(one.shape, {})
  local policy = M.TensorDictSequential(q, M.EGreedyModule(one, {eps_init = 1, eps_end = 1}))
  local det = C.SyncDataCollector(env, policy, {frames_per_batch = 200, exploration_type = "deterministic"})
  local b = det:next_batch()
  check(torch.equal(b.action, b.action_value:argmax(-1)), "deterministic: the greedy actions (EGreedy off)")
  local rnd = C.SyncDataCollector(cartpole(4, 1), policy, {frames_per_batch = 200})
  local r = rnd:next_batch()
  local agree = r.action:eq(r.action_value:argmax(-1)):to(torch.float64):mean():item()
  check(agree > 0.3 and agree < 0.7, "random with eps 1: about half the actions are the greedy one, got " .. agree)
end)

test("reset_at_each_iter restarts every batch; device moves the batch; shutdown ends", function()
  local env = E.TransformedEnv(cartpole(2, 1), E.StepCounter())
  local c = C.SyncDataCollector(env, nil, {frames_per_batch = 10, total_frames = 30, reset_at_each_iter = true,
    device = "cpu"})
  for b in c do check(b.step_count:select(2, 1):eq(0):all():item(), "each batch starts at a reset") end
  local c2 = C.SyncDataCollector(E.TransformedEnv(cartpole(2, 1), E.StepCounter()), nil,
    {frames_per_batch = 10, total_frames = -1, max_frames_per_traj = 3})
  local b = c2:next_batch()
  check(b.next.step_count:le(3):all():item() and b.next.truncated:any():item(), "max_frames_per_traj truncates")
  c2:update_policy_weights_()
  c2:shutdown()
  check(c2:next_batch() == nil, "no batches after shutdown")
end)

test("bad input: the collector names itself and the values", function()
  check_error(function() C.SyncDataCollector(cartpole(3, 1), nil, {frames_per_batch = 10}) end,
    "frames_per_batch (10) must be a multiple of the env's 3 copies (batch size [3])")
  check_error(function() C.SyncDataCollector(cartpole(1, 1), 5, {frames_per_batch = 10}) end,
    "policy must be callable")
  check_error(function() C.SyncDataCollector(cartpole(1, 1), nil, {}) end,
    "frames_per_batch must be a positive integer, got nil")
  check_error(function() C.SyncDataCollector(cartpole(1, 1), nil, {frames_per_batch = 4, total_frames = 0}) end,
    "total_frames must be a positive integer or -1")
  check_error(function() C.SyncDataCollector(7, nil, {frames_per_batch = 4}) end, "expected an env")
  check_error(function() C.SyncDataCollector(cartpole(1, 1), nil, {frames_per_batch = 4, exploration_type = "x"}) end,
    "exploration_type")
  check_error(function() C.SyncDataCollector(cartpole(1, 1), nil, {frames_per_batch = 4, frame_per_batch = 4}) end,
    "frame_per_batch")
  check_error(function() C.split_trajectories(cartpole(1, 1):rollout(3)) end, "no trajectory ids")
  local c = C.SyncDataCollector(cartpole(1, 1), function(td) return td end, {frames_per_batch = 4})
  check_error(function() c:next_batch() end, "no 'action' entry")
end)
