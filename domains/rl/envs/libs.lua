-- torch.rl.envs.libs -- GymEnv and SerialEnv: TensorDict-level envs over
-- the C classic-control envs (torch.rl.envs.make) and over copies of any
-- EnvBase. GymEnv never autoresets: EnvBase's partial resets ("_reset")
-- restart the copies that ended, as TorchRL's do.
local torch = require "torch"
local specs = require "torch.rl.envs.specs"
local common = require "torch.rl.envs.common"
local TensorDict = require("torch.rl.tensordict").TensorDict

local M = {}
local fmt = string.format
local with_batch = common.with_batch

---------------------------------------------------------------------------
-- GymEnv

local GymEnv = common.GymLikeEnv:extend("GymEnv")
M.GymEnv = GymEnv

-- A leaf spec of the C env (shape [N, ...]) for the wrapper's batch size
-- (the leading N dropped when the env is not batched).
local function rebatch(sp, batched, dev)
  local shape = {}
  for i = batched and 1 or 2, #sp.shape do shape[#shape + 1] = sp.shape[i] end
  local mt = getmetatable(sp)
  if mt == specs.Categorical then return specs.Categorical(sp.n, {shape = shape, dtype = sp.dtype, device = dev}) end
  if mt == specs.Bounded then
    local lo, hi = sp.low, sp.high
    if not batched then lo, hi = lo[1], hi[1] end
    return specs.Bounded{low = lo, high = hi, shape = shape, dtype = sp.dtype, device = dev}
  end
  return specs.Unbounded{shape = shape, dtype = sp.dtype, device = dev}
end

-- GymEnv(env_name, {num_envs=, seed=, device=, backend=}): Gymnasium's
-- classic-control env at the TensorDict level. Without num_envs the batch
-- size is [] (one env); with it, [num_envs]. Keys: "observation" float32,
-- "action" (1-based int64 indices, or float32 [..., 1]), "reward" [..., 1].
function GymEnv:__init(env_name, opts)
  opts = torch._check_options("GymEnv", opts or {}, "num_envs seed device backend")
  local envs = require "torch.rl.envs"
  local batched = opts.num_envs ~= nil
  self._env = envs.make(env_name, {num_envs = opts.num_envs or 1, seed = opts.seed, device = opts.device,
                                   backend = opts.backend, autoreset_mode = "disabled"})
  local e = self._env
  common.GymLikeEnv.__init(self, {batch_size = batched and {e.num_envs} or {}, device = e.device})
  self.env_name, self._batched = env_name, batched
  self.observation_spec = rebatch(e.observation_spec, batched, self.device)
  self.action_spec = rebatch(e.action_spec, batched, self.device)
  self.max_episode_steps = e.max_episode_steps
  self._validate_actions = false -- the C env checks actions and names itself
  self:_obs_composite()
end

function GymEnv:__repr()
  return fmt("GymEnv(env=%s, batch_size=%s, device=%s)", self.env_name, common.shape_str(self.batch_size), self.device)
end

function GymEnv:_reset(mask)
  local seed = self._seed
  self._seed = nil
  if mask ~= nil and not self._batched then mask = mask:reshape({1}) end
  local obs = self._env:reset{seed = seed, reset_mask = mask}
  if not self._batched then obs = obs[1] end
  return obs
end

function GymEnv:_step(action)
  if not self._batched then
    if not torch.is_tensor(action) then
      error(fmt("GymEnv(%s).step: the action must be a tensor, got a %s", self.env_name, type(action)), 3)
    end
    action = action:reshape(with_batch({1}, table.unpack(self.action_spec.shape)))
  end
  local ok, obs, r, term, trunc = pcall(self._env.step, self._env, action)
  if not ok then -- the C env's message, without its position, at the caller of env:step
    error(fmt("GymEnv(%s).step: %s", self.env_name, (tostring(obs):gsub("^[^\n]-:%d+: ", ""))), 4)
  end
  if not self._batched then obs = obs[1] end
  return obs, r, term, trunc
end

function GymEnv:close() self._env:close() end

-- state() -> float64 [N, nstate]: the Gymnasium states of the copies
function GymEnv:state() return self._env:state() end

---------------------------------------------------------------------------
-- SerialEnv

local SerialEnv = common.EnvBase:extend("SerialEnv")
M.SerialEnv = SerialEnv

-- expand(spec, n) -> the spec with a leading dim n
local function expand(sp, n, dev)
  return specs.respec(sp, function(shape)
    local out = {n}
    for _, v in ipairs(shape) do out[#out + 1] = v end
    return out
  end, function(t, shape) return t:unsqueeze(1):expand(shape) end, dev)
end
M.expand_spec = expand

-- SerialEnv(num_workers, create_env_fn[, {create_env_kwargs=}]): n copies
-- of create_env_fn(kwargs) stepped one after the other in this process;
-- batch size [n, *sub_batch]. Copy i is seeded with seed + i - 1 ... .
function SerialEnv:__init(n, create_env_fn, opts)
  if math.type(n) ~= "integer" or n < 1 then
    error(fmt("SerialEnv: num_workers must be a positive integer, got %s", tostring(n)), 3)
  end
  if type(create_env_fn) ~= "function" then
    error(fmt("SerialEnv: create_env_fn must be a function returning an env, got a %s", type(create_env_fn)), 3)
  end
  opts = torch._check_options("SerialEnv", opts or {}, "create_env_kwargs")
  self.envs = {}
  for i = 1, n do
    local e = create_env_fn(opts.create_env_kwargs)
    if type(e) ~= "table" or type(e.step) ~= "function" or e.batch_size == nil then
      error(fmt("SerialEnv: create_env_fn returned a %s, not an env", type(e)), 3)
    end
    self.envs[i] = e
  end
  local first = self.envs[1]:_finish_specs()
  common.EnvBase.__init(self, {batch_size = with_batch({n}, table.unpack(first.batch_size)), device = first.device})
  self.num_workers = n
  self.observation_spec = expand(first.observation_spec, n, self.device)
  self.action_spec = expand(first.action_spec, n, self.device)
  self.reward_spec = expand(first.reward_spec, n, self.device)
  self.done_spec = expand(first.done_spec, n, self.device)
  self._validate_actions = false -- each copy checks its own
end

function SerialEnv:__repr()
  return fmt("SerialEnv(num_workers=%d, env=%s, batch_size=%s)", self.num_workers, tostring(self.envs[1]),
    common.shape_str(self.batch_size))
end

function SerialEnv:_reset(td)
  local mask = self:_reset_mask(td)
  local outs = {}
  for i, e in ipairs(self.envs) do
    local sub = td and td:index(i):exclude("_reset", "next")
    if mask == nil then
      outs[i] = e:reset()
    elseif mask[i]:any():item() then
      sub:set("_reset", mask[i])
      outs[i] = e:reset(sub)
    else
      outs[i] = self._last[i]
    end
  end
  self._last = outs
  return TensorDict.stack(outs, 1)
end

function SerialEnv:_step(td)
  local nexts = {}
  for i, e in ipairs(self.envs) do
    nexts[i] = e:step(td:index(i)):get("next")
  end
  self._last = {}
  for i, n in ipairs(nexts) do self._last[i] = n:exclude("reward") end
  return TensorDict.stack(nexts, 1)
end

function SerialEnv:_set_seed(seed)
  for _, e in ipairs(self.envs) do seed = e:set_seed(seed) end
end

function SerialEnv:close()
  for _, e in ipairs(self.envs) do e:close() end
end

return M
