-- torch.rl.envs.MujocoEnv -- a MuJoCo model (MJCF XML) as a batched
-- environment: num_envs copies stepped in one C call on the engine's
-- threads (torch.rl._mujoco, libmujoco 2.2). Gymnasium's MujocoEnv
-- semantics: the action is written to ctrl as given (MuJoCo clamps it to
-- ctrlrange where ctrllimited), then frame_skip physics steps; reset is
-- qpos0 and zero velocity plus U(-reset_noise_scale, reset_noise_scale).
-- Observations are concat(qpos, qvel). Rewards and terminations come from
-- the user's reward_fn / done_fn over the batch (default: 0, never).
-- Truncation after max_episode_steps, kept apart from termination; a
-- finished copy restarts as Gymnasium's vector envs do (autoreset_mode).
local torch = require "torch"
local specs = require "torch.rl.envs._mujoco_specs"

local M = {}

local E = {}
E.__index = E
E.__name = "torch.rl.envs.MujocoEnv"

local OPTIONS = {num_envs = true, frame_skip = true, seed = true, reset_noise_scale = true, reward_fn = true,
                 done_fn = true, max_episode_steps = true, dtype = true, autoreset_mode = true}
local MODES = {next_step = true, same_step = true}

-- errors name the user's line: the first caller outside this file
local HERE = debug.getinfo(1, "S").source
local function fail(fmt, ...)
  local where = ""
  for level = 3, 12 do
    local i = debug.getinfo(level, "Sl")
    if not i then break end
    if i.source ~= HERE and i.currentline > 0 then
      where = i.short_src .. ":" .. i.currentline .. ": "
      break
    end
  end
  error(where .. "MujocoEnv: " .. fmt:format(...), 0)
end

-- sim:method(...), its errors raised again at the user's line
local function call(sim, method, ...)
  local ok, err = pcall(sim[method], sim, ...)
  if not ok then fail("%s", (tostring(err):gsub("^.-MujocoEnv[.:]%s*", "", 1))) end
end

local function check_fn(v, name)
  if v ~= nil and type(v) ~= "function" then fail("%s must be a function, got %s", name, type(v)) end
  return v
end

-- MujocoEnv(xml_path, {num_envs=1, frame_skip=1, seed=nil,
-- reset_noise_scale=0, reward_fn=nil, done_fn=nil, max_episode_steps=1000,
-- dtype=torch.float64, autoreset_mode="next_step"})
local function new(xml_path, opts)
  if type(xml_path) ~= "string" then fail("xml_path must be a string (a MuJoCo XML file), got %s", type(xml_path)) end
  opts = opts or {}
  if type(opts) ~= "table" then fail("options must be a table, got %s", type(opts)) end
  for k in pairs(opts) do
    if not OPTIONS[k] then
      local names = {}
      for n in pairs(OPTIONS) do names[#names + 1] = n end
      table.sort(names)
      fail("unknown option '%s' (expected one of %s)", tostring(k), table.concat(names, ", "))
    end
  end
  local function int_opt(name, dflt, lo)
    local v = opts[name]
    if v == nil then return dflt end
    if math.type(v) ~= "integer" or v < lo then fail("%s must be an integer >= %d, got %s", name, lo, tostring(v)) end
    return v
  end
  local n = int_opt("num_envs", 1, 1)
  local frame_skip = int_opt("frame_skip", 1, 1)
  local max_steps = int_opt("max_episode_steps", 1000, 0)
  local noise = opts.reset_noise_scale or 0
  if type(noise) ~= "number" or not (noise >= 0) or noise == math.huge then
    fail("reset_noise_scale must be a finite number >= 0, got %s", tostring(noise))
  end
  local dtype = opts.dtype or torch.float64
  if dtype ~= torch.float64 and dtype ~= torch.float32 then
    fail("dtype must be torch.float32 or torch.float64, got %s", tostring(dtype))
  end
  local mode = opts.autoreset_mode or "next_step"
  if not MODES[mode] then fail("autoreset_mode must be 'next_step' or 'same_step', got '%s'", tostring(mode)) end
  if opts.seed ~= nil and math.type(opts.seed) ~= "integer" then
    fail("seed must be an integer, got %s", tostring(opts.seed))
  end
  local f = io.open(xml_path, "r")
  if not f then fail("cannot open the model file '%s'", xml_path) end
  f:close()

  local sim = require("torch.rl._mujoco").open(xml_path, n, frame_skip, max_steps, noise)
  local info = sim:info()
  local self = setmetatable({
    _sim = sim, _info = info, num_envs = n, batch_size = {n}, frame_skip = frame_skip, max_episode_steps = max_steps,
    reset_noise_scale = noise, dtype = dtype, autoreset_mode = mode, xml_path = xml_path, _seed = opts.seed,
    reward_fn = check_fn(opts.reward_fn, "reward_fn"), done_fn = check_fn(opts.done_fn, "done_fn"),
    dt = info.timestep * frame_skip,
  }, E)
  local nobs = info.nq + info.nv
  self.observation_spec = specs.Unbounded({n, nobs}, {dtype = dtype})
  local lo, hi = {}, {}
  for i, r in ipairs(info.ctrlrange) do lo[i], hi[i] = r[1], r[2] end
  self.action_spec = specs.Bounded(torch.tensor(lo, {dtype = torch.float64}), torch.tensor(hi, {dtype = torch.float64}),
    {n, info.nu}, {dtype = torch.float32})
  self.reward_spec = specs.Unbounded({n}, {dtype = dtype})
  return self
end

-- model_info() -> {nq, nv, nu, na, nbody, timestep, frame_skip, dt,
-- bodies = {names}, actuators = {names}, ctrlrange = {{lo, hi}...},
-- qpos0, gravity, mujoco_version}
function E:model_info()
  local t = {}
  for k, v in pairs(self._info) do t[k] = v end
  t.dt = self.dt
  return t
end

-- reset{seed=} -> obs [num_envs, nq + nv]. A seed reseeds copy i with
-- seed + i - 1 (so copy i of a batch draws what a lone env seeded
-- seed + i - 1 draws); without one the streams continue (the first reset
-- uses the constructor's seed, else 0, 1, ...).
function E:reset(opts)
  opts = opts or {}
  if type(opts) ~= "table" then fail("reset takes an options table {seed=}, got %s", type(opts)) end
  for k in pairs(opts) do
    if k ~= "seed" then fail("reset: unknown option '%s' (expected 'seed')", tostring(k)) end
  end
  local seed = opts.seed
  if seed == nil and not self._started then seed = self._seed end
  if seed ~= nil and math.type(seed) ~= "integer" then fail("reset: seed must be an integer, got %s", tostring(seed)) end
  local obs = torch.empty({self.num_envs, self._info.nq + self._info.nv}, {dtype = self.dtype})
  call(self._sim, "reset", obs, seed)
  self._started = true
  self._obs = obs
  return obs
end

-- actions as a contiguous CPU float32/float64 tensor [num_envs, nu]
function E:_check_actions(a)
  local nu = self._info.nu
  if not torch.is_tensor(a) then fail("step: actions must be a tensor [%d, %d], got %s", self.num_envs, nu, type(a)) end
  local sh = a.shape
  if #sh ~= 2 or sh[1] ~= self.num_envs or sh[2] ~= nu then
    fail("step: actions must have shape [%d, %d] (num_envs, nu), got [%s]", self.num_envs, nu, table.concat(sh, ", "))
  end
  if a.dtype == torch.bool or a:is_complex() then fail("step: actions must be real numbers, got %s", tostring(a.dtype)) end
  a = a:detach()
  if a.device.type ~= "cpu" then a = a:cpu() end
  if a.dtype ~= torch.float32 and a.dtype ~= torch.float64 then a = a:to(torch.float64) end
  return a:contiguous()
end

-- a [num_envs] tensor returned by a user callback
local function check_out(v, what, n)
  if not torch.is_tensor(v) then fail("step: %s must return a tensor of shape [%d], got %s", what, n, type(v)) end
  local sh = v.shape
  if #sh ~= 1 or sh[1] ~= n then
    fail("step: %s must return a tensor of shape [%d] (num_envs), got [%s]", what, n, table.concat(sh, ", "))
  end
  return v
end

-- step(actions [num_envs, nu]) -> obs, reward, terminated, truncated, info.
-- next_step autoreset: a copy that finished at the previous step is reset
-- now (its action ignored; reward 0, not terminated, not truncated;
-- info.reset marks those copies). same_step: a finished copy is reset at
-- once; obs holds its new episode's first observation and
-- info.final_obs the last of the old (rows of finished copies only
-- matter). reward_fn(obs, actions, next_obs, env) -> [num_envs];
-- done_fn(next_obs, env) -> bool [num_envs].
function E:step(actions)
  if not self._started then fail("step: call reset() before the first step") end
  local n = self.num_envs
  local a = self:_check_actions(actions)
  local prev = self._obs
  local obs = torch.empty({n, self._info.nq + self._info.nv}, {dtype = self.dtype})
  local truncated, was_reset = torch.empty({n}, {dtype = torch.bool}), torch.empty({n}, {dtype = torch.bool})
  call(self._sim, "step", a, obs, truncated, was_reset)
  local reward, terminated
  if self.reward_fn then
    reward = check_out(self.reward_fn(prev, actions, obs, self), "reward_fn", n):to(self.dtype):masked_fill(was_reset, 0)
  else
    reward = torch.zeros({n}, {dtype = self.dtype})
  end
  if self.done_fn then
    terminated = check_out(self.done_fn(obs, self), "done_fn", n):to(torch.bool):logical_and(was_reset:logical_not())
  else
    terminated = torch.zeros({n}, {dtype = torch.bool})
  end
  local done = terminated:logical_or(truncated)
  local info = {reset = was_reset}
  if self.autoreset_mode == "next_step" then
    self._sim:set_done(done)
  elseif done:any():item() then
    info.final_obs = obs:clone()
    call(self._sim, "reset", obs, nil, done)
  end
  self._obs = obs
  return obs, reward, terminated, truncated, info
end

-- set_state(qpos [num_envs, nq], qvel [num_envs, nv]) -> obs: Gymnasium's
-- set_state (then mj_forward) on every copy
function E:set_state(qpos, qvel)
  local info = self._info
  local function prep(t, k, name)
    if not torch.is_tensor(t) or #t.shape ~= 2 or t.shape[1] ~= self.num_envs or t.shape[2] ~= k then
      fail("set_state: %s must be a tensor [%d, %d]", name, self.num_envs, k)
    end
    return t:detach():cpu():to(torch.float64):contiguous()
  end
  local obs = torch.empty({self.num_envs, info.nq + info.nv}, {dtype = self.dtype})
  call(self._sim, "set_state", prep(qpos, info.nq, "qpos"), prep(qvel, info.nv, "qvel"), obs)
  self._started = true
  self._obs = obs
  return obs
end

-- data(field) -> float64 [num_envs, k]: each copy's "qpos", "qvel",
-- "ctrl", "xpos" (body positions, nbody x 3 flattened) or "time" (k = 1)
function E:data(field)
  local info = self._info
  local k = ({qpos = info.nq, qvel = info.nv, ctrl = info.nu, xpos = 3 * info.nbody, time = 1})[field]
  if not k then fail("data: unknown field '%s' (expected qpos, qvel, ctrl, xpos or time)", tostring(field)) end
  local out = torch.empty({self.num_envs, k}, {dtype = torch.float64})
  self._sim:get(field, out)
  return out
end

function E:close() self._sim:close() end

function E:__tostring()
  return ("MujocoEnv('%s', num_envs=%d, nq=%d, nv=%d, nu=%d, frame_skip=%d)"):format(self.xml_path, self.num_envs,
    self._info.nq, self._info.nv, self._info.nu, self.frame_skip)
end

M.MujocoEnv = setmetatable(E, {__call = function(_, xml_path, opts) return new(xml_path, opts) end})

return M
