-- torch.rl.envs -- Gymnasium's classic-control environments, batched:
-- CartPoleEnv, AcrobotEnv, MountainCarEnv, MountainCarContinuousEnv,
-- PendulumEnv (and make("CartPole-v1", opts)). An env holds num_envs
-- copies stepped in one call: in C on the CPU (envs/batch.c), or as tensor
-- ops (envs/tensor_ops.lua) on other devices. The API is at the tensor
-- level: reset{} -> obs [N, nobs]; step(actions) -> obs, reward,
-- terminated, truncated, info. Discrete actions are 1-based int64 [N]
-- (CartPole's 1 is Gymnasium's 0, "push left"); continuous ones [N, 1].
local torch = require "torch"
local specs = require "torch.rl.envs.specs"
local ops = require "torch.rl.envs.tensor_ops"

local E = {specs = specs, tensor_ops = ops}
E.Bounded, E.Unbounded, E.Categorical, E.OneHot, E.Composite =
  specs.Bounded, specs.Unbounded, specs.Categorical, specs.OneHot, specs.Composite

local core -- torch.rl.envs._core, loaded with the first C env
local function C()
  core = core or require "torch.rl.envs._core"
  return core
end

local OPTS = "num_envs seed device autoreset_mode backend compile"
local MODES = "next_step same_step disabled"

local ClassicEnv = {}
ClassicEnv.__index = ClassicEnv
ClassicEnv.__name = "torch.rl.envs.ClassicEnv"

local function shape_str(shape) return "[" .. table.concat(shape, ", ") .. "]" end

-- A seed from torch's default generator (torch.manual_seed decides it).
local function fresh_seed() return torch.randint(0, 2 ^ 53, {1}, {dtype = torch.int64}):item() end

local function new_env(id, cls_name, opts)
  local fname = "torch.rl.envs." .. cls_name
  opts = torch._check_options(fname, opts or {}, OPTS)
  local def = ops.by_name[id]
  local self = setmetatable({}, ClassicEnv)
  self.id, self._def = id, def
  local n = opts.num_envs or 1
  if math.type(n) ~= "integer" or n < 1 then
    error(("%s: num_envs must be a positive integer, got %s"):format(fname, tostring(n)), 3)
  end
  local seed = opts.seed
  if seed ~= nil and math.type(seed) ~= "integer" then
    error(("%s: seed must be an integer, got %s"):format(fname, tostring(seed)), 3)
  end
  self.num_envs, self.batch_size = n, {n}
  self.autoreset_mode = torch._check_choice(fname, "autoreset_mode", opts.autoreset_mode or "next_step", MODES)
  self.device = tostring(opts.device or "cpu")
  local backend = opts.backend or (self.device == "cpu" and "c" or "tensor")
  torch._check_choice(fname, "backend", backend, "c tensor")
  if backend == "c" and self.device ~= "cpu" then
    error(("%s: backend 'c' runs on the CPU (device %s asks for backend 'tensor')"):format(fname, self.device), 3)
  end
  self.backend = backend
  if opts.compile and backend ~= "tensor" then
    error(("%s: compile=true compiles the tensor ops (backend 'tensor'); the C env needs no compiling"):format(fname), 3)
  end
  self._compile = opts.compile and true or false
  self.max_episode_steps = def.max_episode_steps
  seed = seed or fresh_seed()
  if backend == "c" then
    self._c = C().new(id, n, self.autoreset_mode, seed)
  else
    self._gen = torch.Generator()
    self._gen:manual_seed(seed)
    self._state = ops.columns(torch.zeros(n, def.nstate, {dtype = torch.float64, device = self.device}))
    self._elapsed = torch.zeros(n, {dtype = torch.int64, device = self.device})
    self._done = torch.zeros(n, {dtype = torch.bool, device = self.device})
  end
  self._need_reset = true
  local info = C().info(id)
  local dev = self.device
  self.observation_spec = specs.Bounded{low = info.obs_low, high = info.obs_high, shape = {n, def.nobs},
                                        dtype = torch.float32, device = dev}
  if def.n_actions then
    self.action_spec = specs.Categorical(def.n_actions, {shape = {n}, dtype = torch.int64, device = dev})
  else
    self.action_spec = specs.Bounded{low = def.action_low, high = def.action_high, shape = {n, def.action_dim},
                                     dtype = torch.float32, device = dev}
  end
  self.reward_spec = specs.Unbounded{shape = {n}, dtype = torch.float32, device = dev}
  self.done_spec = specs.Composite({terminated = specs.Unbounded{shape = {n}, dtype = torch.bool, device = dev},
                                    truncated = specs.Unbounded{shape = {n}, dtype = torch.bool, device = dev}},
                                   {shape = {n}, device = dev})
  return self
end

function ClassicEnv:__tostring()
  return ("%s(id=%s, num_envs=%d, device=%s, backend=%s, autoreset_mode=%s)"):format(self._cls, self.id,
    self.num_envs, self.device, self.backend, self.autoreset_mode)
end

-- the state columns a reset would give each copy (tensor backend): the
-- uniforms come from the env's CPU generator
function ClassicEnv:_fresh()
  local u = {}
  for k = 1, self._def.nstate do
    u[k] = torch.rand({self.num_envs}, {dtype = torch.float64, generator = self._gen}):to(self.device)
  end
  return self._def.reset(u)
end

-- reset{seed=, reset_mask=} -> obs [N, nobs] float32. seed: env i (1-based)
-- draws from seed + i - 1 from now on, as Gymnasium's vector envs seed
-- their copies; reset_mask: a bool [N] tensor choosing the copies to reset
-- (the others keep their state; their observation is returned as is).
function ClassicEnv:reset(opts)
  local fname = self.id .. ": reset"
  opts = torch._check_options(fname, opts or {}, "seed reset_mask")
  local seed, mask = opts.seed, opts.reset_mask
  if seed ~= nil and math.type(seed) ~= "integer" then
    error(("%s: seed must be an integer, got %s"):format(fname, tostring(seed)), 2)
  end
  if mask ~= nil then
    if not torch.is_tensor(mask) or mask.dtype ~= torch.bool or #mask.shape ~= 1 or mask.shape[1] ~= self.num_envs then
      error(("%s: reset_mask must be a bool tensor of shape [%d], got %s"):format(fname, self.num_envs,
        torch.is_tensor(mask) and (tostring(mask.dtype) .. " " .. shape_str(mask.shape)) or type(mask)), 2)
    end
    if self._need_reset and not mask:all():item() then
      error(fname .. ": the first reset must reset every env (reset_mask all true)", 2)
    end
  end
  self._need_reset = false
  if self._c then
    return self._c:reset(seed, mask and mask:cpu():contiguous())
  end
  if seed ~= nil then self._gen:manual_seed(seed) end
  local fresh = self:_fresh()
  if mask then
    local m = mask:to(self.device)
    for k = 1, #fresh do self._state[k] = torch.where(m, fresh[k], self._state[k]) end
    self._elapsed = torch.where(m, 0, self._elapsed)
    self._done = self._done:logical_and(m:logical_not())
  else
    self._state, self._elapsed, self._done = fresh, torch.zeros_like(self._elapsed), torch.zeros_like(self._done)
  end
  return ops.stack(self._def.observe(self._state))
end

-- The actions as the stepper takes them, or an error naming the env.
function ClassicEnv:_check_actions(a)
  local def, n = self._def, self.num_envs
  local want = def.n_actions and {n} or {n, def.action_dim}
  local fname = self.id .. ": step"
  if not torch.is_tensor(a) then
    error(("%s: actions must be a tensor of shape %s, got a %s"):format(fname, shape_str(want), type(a)), 3)
  end
  local ok = #a.shape == #want
  for i = 1, #want do ok = ok and a.shape[i] == want[i] end
  if not ok then
    error(("%s: actions must have shape %s (%d envs), got %s"):format(fname, shape_str(want), n, shape_str(a.shape)), 3)
  end
  if tostring(a.device) ~= self.device then
    error(("%s: actions are on %s but the env is on %s"):format(fname, tostring(a.device), self.device), 3)
  end
  if def.n_actions then
    if a.dtype.is_floating_point or a.dtype == torch.bool or a.dtype.is_complex then
      error(("%s: actions must be integer indices 1..%d (int64), got %s"):format(fname, def.n_actions,
        tostring(a.dtype)), 3)
    end
    a = a:to(torch.int64)
  else
    if not a.dtype.is_floating_point then
      error(("%s: actions must be floating point in [%g, %g], got %s"):format(fname, def.action_low,
        def.action_high, tostring(a.dtype)), 3)
    end
    if a.dtype ~= torch.float32 and a.dtype ~= torch.float64 then a = a:to(torch.float32) end
  end
  return a:contiguous()
end

-- The out list of step{out=}: the tensors the results are written into,
-- each of the right shape, dtype and device, or an error naming the env.
function ClassicEnv:_check_out(out)
  local seen = self._out_seen -- the last list checked, and its tensors then
  if seen and seen.list == out then
    local same = #out == #seen
    for k = 1, #seen do same = same and rawequal(out[k], seen[k]) end
    if same then return out end
  end
  local fname = self.id .. ": step"
  local n, nobs = self.num_envs, self._def.nobs
  local want = {{{n, nobs}, torch.float32, "obs"}, {{n}, torch.float32, "reward"}, {{n}, torch.bool, "terminated"},
                {{n}, torch.bool, "truncated"}}
  if self.autoreset_mode == "same_step" then want[5] = {{n, nobs}, torch.float32, "final_observation"} end
  if type(out) ~= "table" or #out ~= #want then
    error(("%s: out must be a list of %d tensors (obs, reward, terminated, truncated%s)"):format(fname, #want,
      #want == 5 and ", final_observation" or ""), 3)
  end
  for k, w in ipairs(want) do
    local t = out[k]
    local ok = torch.is_tensor(t) and t.dtype == w[2] and tostring(t.device) == self.device and t:is_contiguous()
      and #t.shape == #w[1]
    for d = 1, #w[1] do ok = ok and t.shape[d] == w[1][d] end
    if not ok then
      error(("%s: out[%d] (%s) must be a contiguous %s tensor of shape %s on %s"):format(fname, k, w[3],
        tostring(w[2]), shape_str(w[1]), self.device), 3)
    end
  end
  self._out_seen = {list = out, table.unpack(out)}
  return out
end

-- step(actions[, {out=}]) -> obs [N, nobs] float32, reward [N] float32,
-- terminated [N] bool, truncated [N] bool, info. Gymnasium's TimeLimit sets
-- truncated; info.final_observation (same_step mode) holds each copy's
-- observation before the reset (equal to obs where the copy did not end).
-- out: the list of tensors to write the results into (as PyTorch's out=
-- of a function with several results), so a loop allocates nothing.
function ClassicEnv:step(actions, opts)
  if self._need_reset then
    error(self.id .. ": step before reset: call env:reset() first", 2)
  end
  local out
  if opts ~= nil then
    opts = torch._check_options(self.id .. ": step", opts, "out")
    out = opts.out and self:_check_out(opts.out)
  end
  if self._c then
    local obs, r, term, trunc, final = self._c:step(actions, out)
    if obs == false then -- not int64 / float [N, ...] on the CPU: check and convert
      obs, r, term, trunc, final = self._c:step(self:_check_actions(actions), out)
    end
    return obs, r, term, trunc, {final_observation = final}
  end
  local a = self:_check_actions(actions)
  local def = self._def
  if def.n_actions then
    if a:lt(1):logical_or(a:gt(def.n_actions)):any():item() then
      error(("%s: an action is outside the action spec (1 to %d; actions are 1-based)"):format(self.id, def.n_actions), 2)
    end
  elseif a:lt(def.action_low):logical_or(a:gt(def.action_high)):logical_or(a:isnan()):any():item() then
    error(("%s: an action is outside the action spec [%g, %g]"):format(self.id, def.action_low, def.action_high), 2)
  end
  if self.autoreset_mode == "disabled" and self._done:any():item() then
    error(("%s: an env ended (terminated or truncated) and autoreset is disabled: call reset() (or " ..
      "reset{reset_mask=...}) before stepping it again"):format(self.id), 2)
  end
  local act = def.n_actions and a or a:select(2, 1):contiguous()
  local nst, obs, r, term, trunc, final
  if self._compile then -- one compiled graph (tensor_ops.compiled_step)
    self._cstep = self._cstep or ops.compiled_step(def, self.autoreset_mode)
    local args, ns, nobs = {self._elapsed, self._done, act}, def.nstate, def.nobs
    for k = 1, ns do args[#args + 1] = self._state[k] end
    for _, col in ipairs(self:_fresh()) do args[#args + 1] = col end
    local res = {self._cstep(table.unpack(args))}
    nst = {elapsed = res[1], done = res[2], state = {table.unpack(res, 6, 5 + ns)}}
    r, term, trunc = res[3], res[4], res[5]
    obs = {table.unpack(res, 6 + ns, 5 + ns + nobs)}
    if self.autoreset_mode == "same_step" then final = {table.unpack(res, 6 + ns + nobs, 5 + ns + 2 * nobs)} end
  else
    local st = {state = self._state, elapsed = self._elapsed, done = self._done}
    nst, obs, r, term, trunc, final = ops.batch_step(def, st, act, self:_fresh(), self.autoreset_mode)
  end
  self._state, self._elapsed, self._done = nst.state, nst.elapsed, nst.done
  local res = {ops.stack(obs), r, term, trunc, final and ops.stack(final)}
  if out then
    for k = 1, #out do out[k]:copy_(res[k]) end
    res = out
  end
  return res[1], res[2], res[3], res[4], {final_observation = res[5]}
end

-- rand_action() -> actions drawn uniformly from the action spec
function ClassicEnv:rand_action() return self.action_spec:rand() end

-- state() -> float64 [N, nstate]: each copy's Gymnasium state (env.state)
function ClassicEnv:state()
  if self._c then return self._c:state() end
  return ops.stack(self._state)
end

-- set_state(s[, elapsed]): s float64 [N, nstate], elapsed int64 [N] (the
-- TimeLimit counts; default: kept). The copies become steppable (tests, and
-- wrappers that restore a snapshot).
function ClassicEnv:set_state(s, elapsed)
  local fname = self.id .. ": set_state"
  local want = {self.num_envs, self._def.nstate}
  if not torch.is_tensor(s) or #s.shape ~= 2 or s.shape[1] ~= want[1] or s.shape[2] ~= want[2] then
    error(("%s: the state must be a tensor of shape %s"):format(fname, shape_str(want)), 2)
  end
  if elapsed ~= nil and (not torch.is_tensor(elapsed) or #elapsed.shape ~= 1 or elapsed.shape[1] ~= want[1]) then
    error(("%s: elapsed must be a tensor of shape [%d]"):format(fname, want[1]), 2)
  end
  self._need_reset = false
  if self._c then
    return self._c:set_state(s:to(torch.float64):cpu():contiguous(),
                             elapsed and elapsed:to(torch.int64):cpu():contiguous())
  end
  self._state = ops.columns(s:to(torch.float64):to(self.device))
  if elapsed then self._elapsed = elapsed:to(torch.int64):to(self.device):clone() end
  self._done = torch.zeros_like(self._done)
end

-- elapsed() -> int64 [N]: steps since each copy's reset (TimeLimit's count)
function ClassicEnv:elapsed()
  if self._c then return self._c:elapsed() end
  return self._elapsed:clone()
end

function ClassicEnv:close()
  if self._c then self._c:close() end
end

local CLASSES = {
  {"CartPoleEnv", "CartPole-v1"},
  {"AcrobotEnv", "Acrobot-v1"},
  {"MountainCarEnv", "MountainCar-v0"},
  {"MountainCarContinuousEnv", "MountainCarContinuous-v0"},
  {"PendulumEnv", "Pendulum-v1"},
}
local BY_ID = {}
for _, c in ipairs(CLASSES) do
  local cls_name, id = c[1], c[2]
  BY_ID[id] = cls_name
  E[cls_name] = function(opts)
    local env = new_env(id, cls_name, opts)
    env._cls = cls_name
    return env
  end
end
-- public entry points: errors raised inside name the caller's line
for _, m in ipairs{"reset", "step", "set_state", "state", "elapsed", "rand_action", "close"} do
  ClassicEnv[m] = torch._public(ClassicEnv[m], function(self)
    return (type(self) == "table" and self.id or "torch.rl.envs") .. "." .. m
  end)
end
for _, c in ipairs(CLASSES) do E[c[1]] = torch._public(E[c[1]], "torch.rl.envs." .. c[1]) end
E.Continuous_MountainCarEnv = E.MountainCarContinuousEnv -- Gymnasium's class name
E.ClassicEnv = ClassicEnv

-- make(id, opts): the env registered under Gymnasium's id
E.make = function(id, opts)
  local cls = BY_ID[id]
  if not cls then
    local ids = {}
    for _, c in ipairs(CLASSES) do ids[#ids + 1] = c[2] end
    error(("torch.rl.envs.make: unknown environment '%s' (known: %s)"):format(tostring(id), table.concat(ids, ", ")), 2)
  end
  return E[cls](opts)
end
E.make = torch._public(E.make, "torch.rl.envs.make")

-- the other families: MuJoCo (envs/_mujoco.lua) and the TensorDict-level
-- envs, transforms and helpers (envs/_td_level.lua); a name defined twice
-- is an error
for _, family in ipairs({"_mujoco", "_td_level"}) do
  for name, v in pairs(require("torch.rl.envs." .. family)) do
    if E[name] ~= nil then error("torch.rl.envs: " .. name .. " defined twice") end
    E[name] = v
  end
end

return E
