-- torch.rl.collectors -- TorchRL's SyncDataCollector and
-- split_trajectories: a policy stepping an env (TensorDict level) and
-- handing out batches of frames_per_batch frames, [*env_batch, T]. The env
-- does the stepping and resets (step_and_maybe_reset); this file keeps the
-- frame counts and the trajectory ids.
local torch = require "torch"
local TensorDict = require("torch.rl.tensordict").TensorDict
local common = require "torch.rl.envs.common"

local M = {}
local fmt = string.format

local function numel(bs)
  local n = 1
  for _, v in ipairs(bs) do n = n * v end
  return n
end

local function callable(f)
  return type(f) == "function" or (type(f) == "table" and (getmetatable(f) or {}).__call ~= nil)
end

---------------------------------------------------------------------------
-- split_trajectories

-- split_trajectories(td[, {traj_key={"collector","traj_ids"}}]) -> a
-- TensorDict [num_trajs, max_len]: td ([*batch, T], the last dim time) cut
-- where the trajectory id changes, each piece padded with zeros to the
-- longest, in order of trajectory id; ("collector", "mask") is true on the
-- real steps.
function M.split_trajectories(td, opts)
  opts = torch._check_options("split_trajectories", opts or {}, "traj_key")
  local key = opts.traj_key or {"collector", "traj_ids"}
  local ids = td:get(key)
  if ids == nil then
    error("split_trajectories: the TensorDict has no trajectory ids at ('collector', 'traj_ids')", 2)
  end
  local bs = td.batch_size
  local T = bs[#bs]
  local rows = numel(bs) // T
  local flat = td:reshape(rows, T)
  local fid = ids:reshape({rows, T})
  local pieces = {}
  for r = 1, rows do
    local row = fid[r]
    local start = 1
    for t = 2, T + 1 do
      if t == T + 1 or row[t]:item() ~= row[t - 1]:item() then
        pieces[#pieces + 1] = {r = r, from = start, len = t - start, id = row[start]:item()}
        start = t
      end
    end
  end
  table.sort(pieces, function(a, b) return a.id < b.id end)
  local L = 0
  for _, p in ipairs(pieces) do L = math.max(L, p.len) end
  local out, masks = {}, {}
  for i, p in ipairs(pieces) do
    local idx = torch.full({L}, p.from, {dtype = torch.int64})
    idx:narrow(1, 1, p.len):copy_(torch.arange(p.from, p.from + p.len, {dtype = torch.int64}))
    local seg = flat:index(p.r):index(idx)
    if p.len < L then
      seg = seg:apply(function(v) v:narrow(1, p.len + 1, L - p.len):zero_(); return v end)
    end
    out[i] = seg
    local m = torch.zeros(L, {dtype = torch.bool})
    m:narrow(1, 1, p.len):fill_(true)
    masks[i] = m
  end
  local res = TensorDict.stack(out, 1)
  res:set({"collector", "mask"}, torch.stack(masks, 1))
  return res
end

---------------------------------------------------------------------------
-- SyncDataCollector

local SyncDataCollector = common.class("SyncDataCollector")
M.SyncDataCollector = SyncDataCollector

local OPTS = "frames_per_batch total_frames init_random_frames exploration_type split_trajs device " ..
  "reset_at_each_iter max_frames_per_traj"

-- SyncDataCollector(create_env_fn | env, policy, {frames_per_batch=,
-- total_frames=-1, init_random_frames=0, exploration_type="random",
-- split_trajs=false, device=, reset_at_each_iter=false,
-- max_frames_per_traj=}): policy is a callable td -> td writing "action"
-- (nil: random actions); it runs without gradients under
-- exploration_type. frames_per_batch must be a multiple of the env's
-- batch numel. Iterate with `for batch in collector do ... end`.
function SyncDataCollector:__init(env, policy, opts)
  local fname = "SyncDataCollector"
  opts = torch._check_options(fname, opts or {}, OPTS)
  if type(env) == "function" then env = env() end
  if type(env) ~= "table" or type(env.step_and_maybe_reset) ~= "function" then
    error(fmt("%s: expected an env (EnvBase) or a function creating one, got a %s", fname, type(env)), 3)
  end
  if policy ~= nil and not callable(policy) then
    error(fmt("%s: policy must be callable (td -> td) or nil, got a %s", fname, type(policy)), 3)
  end
  local fpb = opts.frames_per_batch
  local n = numel(env.batch_size)
  if math.type(fpb) ~= "integer" or fpb < 1 then
    error(fmt("%s: frames_per_batch must be a positive integer, got %s", fname, tostring(fpb)), 3)
  end
  if fpb % n ~= 0 then
    error(fmt("%s: frames_per_batch (%d) must be a multiple of the env's %d copies (batch size %s)", fname, fpb, n,
      common.shape_str(env.batch_size)), 3)
  end
  local total = opts.total_frames or -1
  if math.type(total) ~= "integer" or (total < 1 and total ~= -1) then
    error(fmt("%s: total_frames must be a positive integer or -1 (no end), got %s", fname, tostring(total)), 3)
  end
  if opts.max_frames_per_traj then
    local envs = require "torch.rl.envs"
    env = envs.TransformedEnv(env, envs.StepCounter(opts.max_frames_per_traj))
  end
  self.env, self.policy = env, policy
  self.frames_per_batch, self.total_frames = fpb, total
  if total > 0 and total % fpb ~= 0 then self.total_frames = (total // fpb + 1) * fpb end -- as TorchRL: whole batches
  self.init_random_frames = opts.init_random_frames or 0
  self.exploration_type = torch._check_choice(fname, "exploration_type", opts.exploration_type or "random",
    "random deterministic mode mean") -- torch.rl.modules.ExplorationType's values
  self.split_trajs = opts.split_trajs == true
  self.device = opts.device and tostring(opts.device)
  self.reset_at_each_iter = opts.reset_at_each_iter == true
  self._steps_per_batch = fpb // n
  self._frames = 0
  self._td = nil
end

function SyncDataCollector:__repr()
  return fmt("SyncDataCollector(env=%s, frames_per_batch=%d, total_frames=%d, frames=%d)", tostring(self.env),
    self.frames_per_batch, self.total_frames, self._frames)
end

-- the frames collected so far
function SyncDataCollector:frames() return self._frames end

-- (re)starts every copy and gives fresh trajectory ids
function SyncDataCollector:reset()
  local env = self.env
  self._td = env:reset()
  local n, start = numel(env.batch_size), self._next_id or 1
  self._ids = torch.arange(start, start + n, {dtype = torch.int64}):reshape(common.with_batch(env.batch_size))
  self._next_id = start + n
end

-- one step of the policy (or random actions) on td
function SyncDataCollector:_act(td)
  if self.policy == nil or self._frames < self.init_random_frames then
    return self.env:rand_action(td)
  end
  local policy = self.policy
  return common.set_exploration_type(self.exploration_type, function()
    return torch.no_grad(function() return policy(td) or td end)
  end)
end

-- next_batch() -> the next TensorDict of frames_per_batch frames, or nil
-- once total_frames are collected
function SyncDataCollector:next_batch()
  if self.total_frames > 0 and self._frames >= self.total_frames then return nil end
  if self._td == nil or self.reset_at_each_iter then self:reset() end
  local env, steps = self.env, {}
  local key = {"collector", "traj_ids"}
  local td = self._td
  for t = 1, self._steps_per_batch do
    td:set(key, self._ids)
    td = self:_act(td)
    local cur, nxt = env:step_and_maybe_reset(td)
    steps[t] = cur
    local done = cur:get({"next", "done"}):reshape(common.with_batch(env.batch_size))
    if done:any():item() then
      local fresh = done:reshape({-1}):to(torch.int64):cumsum(1):reshape(done.shape) + (self._next_id - 1)
      self._ids = torch.where(done, fresh, self._ids)
      self._next_id = self._next_id + done:sum():item()
    end
    nxt:del("collector")
    td = nxt
  end
  self._td = td
  self._frames = self._frames + self.frames_per_batch
  local batch = TensorDict.stack(steps, #env.batch_size + 1)
  if self.split_trajs then batch = M.split_trajectories(batch) end
  if self.device then batch = batch:to(self.device) end
  return batch
end

-- iter() -> an iterator over the batches: for batch in c:iter() do ... end
function SyncDataCollector:iter()
  return function() return self:next_batch() end
end
SyncDataCollector.__call = function(self) return self:next_batch() end

-- update_policy_weights_([weights]): the policy lives in this process and
-- is shared, so nothing to copy unless weights (a state dict) are given.
function SyncDataCollector:update_policy_weights_(weights)
  if weights ~= nil then
    if type(self.policy) ~= "table" or type(self.policy.load_state_dict) ~= "function" then
      error("SyncDataCollector.update_policy_weights_: the policy has no load_state_dict for the given weights", 2)
    end
    self.policy:load_state_dict(weights)
  end
end

-- set_seed(seed) -> the next seed (the env's)
function SyncDataCollector:set_seed(seed) return self.env:set_seed(seed) end

-- shutdown(): closes the env; the collector yields nothing afterwards
function SyncDataCollector:shutdown()
  self.env:close()
  self.total_frames, self._frames = 1, 1
end

return M
