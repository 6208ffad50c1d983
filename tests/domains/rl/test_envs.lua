-- test_envs.lua -- torch.rl.envs' classic-control envs: trajectories
-- against bench/peers/rl_envs_ref.py (Gymnasium's published dynamics in
-- Python/NumPy) on our own reset states and random actions (live, with
-- /usr/bin/python3) and on the stored cases of tests/ref/rl_envs.lua; the
-- autoreset modes, seeding, batched vs single env and thread counts, the
-- tensor-op versions against the C envs (eager and compiled), specs, and
-- errors on bad input.
local envs = torch.rl.envs
local ops = envs.tensor_ops
local R = ref("rl_envs")

local HAVE_PY = io.open("/usr/bin/python3") ~= nil
local IDS = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"}
local DISCRETE = {["CartPole-v1"] = 2, ["Acrobot-v1"] = 3, ["MountainCar-v0"] = 3}
-- float32 observations: an ulp of the largest (Acrobot's 9 pi) is 1.9e-6
local TOL = {atol = 1e-6, rtol = 2.4e-7}

-- random actions for n envs: 1-based indices, or [n, 1] in the action box
local function rand_actions(id, n, gen)
  local k = DISCRETE[id]
  if k then return torch.randint(1, k + 1, {n}, {generator = gen}) end
  local hi = id == "Pendulum-v1" and 2.0 or 1.0
  return (torch.rand({n, 1}, {generator = gen}) * (2 * hi) - hi):to(torch.float32)
end

local function action_str(id, a)
  if DISCRETE[id] then return tostring(a - 1) end -- Gymnasium's 0-based action
  return ("%.9g"):format(a)
end

local function state_str(row)
  local t = {}
  for k, v in ipairs(row) do t[k] = ("%.17g"):format(v) end
  return table.concat(t, " ")
end

-- Runs the reference on episodes {id, elapsed0, state (table), actions
-- (Lua values)}; returns its results (a list, one per episode).
local function run_ref(episodes)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  for _, e in ipairs(episodes) do
    local acts = {}
    for k, a in ipairs(e.actions) do acts[k] = action_str(e.id, a) end
    f:write(e.id, " ", e.elapsed0 or 0, " ", state_str(e.state), " | ", table.concat(acts, " "), "\n")
  end
  f:close()
  local p = io.popen("/usr/bin/python3 bench/peers/rl_envs_ref.py < " .. path .. " 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(path)
  local chunk = load(out, "rl_envs_ref", "t", {})
  if not chunk then error("rl_envs_ref.py failed: " .. out:sub(1, 2000)) end
  return chunk()
end

-- Steps env (num_envs n, same_step autoreset) for T steps of random actions,
-- splits each copy's record into episodes and checks them all against the
-- reference: every step's final observation, reward, terminated and
-- truncated, and the observation of every reset state. Returns the number
-- of episodes checked.
local function check_against_reference(id, n, T, seed)
  local env = envs.make(id, {num_envs = n, seed = seed, autoreset_mode = "same_step"})
  local gen = torch.Generator()
  gen:manual_seed(seed)
  local obs0 = env:reset()
  local state0 = env:state():totable()
  local rec = {}
  for t = 1, T do
    local a = rand_actions(id, n, gen)
    local obs, r, term, trunc, info = env:step(a)
    rec[t] = {a = a:totable(), obs = obs:totable(), final = info.final_observation:totable(), r = r:totable(),
              term = term:totable(), trunc = trunc:totable(), state = env:state():totable()}
  end
  -- episodes per copy
  local episodes, owners = {}, {}
  for i = 1, n do
    local e = {id = id, state = state0[i], actions = {}, first = 1, copy = i, obs0 = obs0[i]}
    for t = 1, T do
      local a = rec[t].a[i]
      e.actions[#e.actions + 1] = type(a) == "table" and a[1] or a
      if rec[t].term[i] or rec[t].trunc[i] or t == T then
        episodes[#episodes + 1], owners[#owners + 1] = e, e
        e.last = t
        if t < T then
          e = {id = id, state = rec[t].state[i], actions = {}, first = t + 1, copy = i, obs0 = rec[t].obs[i]}
        end
      end
    end
  end
  local res = run_ref(episodes)
  check_eq(#res, #episodes, id .. ": reference episodes")
  for k, e in ipairs(episodes) do
    local r, i = res[k], e.copy
    local where = ("%s: env %d, steps %d..%d"):format(id, i, e.first, e.last)
    local ok, err = pcall(check_close, e.obs0, r.obs0, TOL)
    check(ok, where .. ": reset observation: " .. tostring(err))
    check_eq(#r.obs, e.last - e.first + 1, where .. ": episode length")
    for s = 1, #r.obs do
      local t = e.first + s - 1
      ok, err = pcall(check_close, rec[t].final[i], r.obs[s], TOL)
      check(ok, ("%s: step %d: observation: %s"):format(where, t, tostring(err)))
      check(math.abs(rec[t].r[i] - r.reward[s]) <= 1e-6 + 2.4e-7 * math.abs(r.reward[s]),
            ("%s: step %d: reward %.9g, reference %.9g"):format(where, t, rec[t].r[i], r.reward[s]))
      check_eq(rec[t].term[i], r.terminated[s], ("%s: step %d: terminated"):format(where, t))
      check_eq(rec[t].trunc[i], r.truncated[s], ("%s: step %d: truncated"):format(where, t))
    end
  end
  return #episodes
end

local LIVE = {
  {"CartPole-v1", 4, 300},
  {"Acrobot-v1", 3, 620},
  {"MountainCar-v0", 3, 450},
  {"MountainCarContinuous-v0", 2, 1100},
  {"Pendulum-v1", 3, 450},
}

for _, c in ipairs(LIVE) do
  test(c[1] .. " trajectories (same_step autoreset, random actions) equal the reference's to 1e-6", function()
    if not HAVE_PY then return print("  (no /usr/bin/python3: live reference skipped)") end
    local n = check_against_reference(c[1], c[2], c[3], 11)
    check(n >= c[2] + 1, c[1] .. ": at least one autoreset per env was checked, episodes: " .. n)
  end)
end

-- ---- the stored cases (tests/ref/rl_envs.lua, from tests/ref/gen_rl_envs.py) ----

test("stored reference cases: set_state, then the actions until done (every env, truncation included)", function()
  local count = 0
  for _, c in ipairs(R.cases) do
    local env = envs.make(c.id, {num_envs = 1, seed = 0, autoreset_mode = "disabled"})
    env:reset()
    env:set_state(torch.tensor({c.state}, {dtype = torch.float64}), torch.tensor({c.elapsed0}))
    for s = 1, #c.obs do
      local a = c.actions[s]
      local at = DISCRETE[c.id] and torch.tensor({a}) or torch.tensor({{a}}, {dtype = torch.float32})
      local obs, r, term, trunc = env:step(at)
      local where = ("%s case %d step %d"):format(c.id, c.case, s)
      local ok, err = pcall(check_close, obs[1], c.obs[s], TOL)
      check(ok, where .. ": " .. tostring(err))
      check(math.abs(r[1]:item() - c.reward[s]) <= 1e-6 + 2.4e-7 * math.abs(c.reward[s]), where .. ": reward")
      check_eq(term[1]:item(), c.terminated[s], where .. ": terminated")
      check_eq(trunc[1]:item(), c.truncated[s], where .. ": truncated")
      count = count + 1
    end
    check(c.terminated[#c.obs] or c.truncated[#c.obs], c.id .. ": each stored case ends")
  end
  check(count > 1000, "steps checked: " .. count)
end)

-- ---- autoreset modes ----

test("next_step autoreset: the step after a done one returns the reset observation, reward 0, not done", function()
  local n, T = 6, 200
  local a_env = envs.CartPoleEnv{num_envs = n, seed = 5, autoreset_mode = "next_step"}
  local b_env = envs.CartPoleEnv{num_envs = n, seed = 5, autoreset_mode = "same_step"}
  a_env:reset(); b_env:reset()
  local gen = torch.Generator()
  gen:manual_seed(3)
  local pending = {} -- copies of a_env due for their reset step
  local resets = 0
  for _ = 1, T do
    local act = torch.randint(1, 3, {n}, {generator = gen})
    local obs, r, term, trunc = a_env:step(act)
    local st = a_env:state()
    for i = 1, n do
      if pending[i] then
        check_eq(r[i]:item(), 0.0, "reward of the reset step")
        check(not term[i]:item() and not trunc[i]:item(), "the reset step is not done")
        check_close(obs[i], st[i]:float(), {atol = 0, rtol = 0})
        check_eq(a_env:elapsed()[i]:item(), 0, "elapsed restarts at the reset step")
        resets = resets + 1
      end
      pending[i] = term[i]:item() or trunc[i]:item()
    end
  end
  check(resets >= n, "reset steps seen: " .. resets)
  -- reset states come from the same counter-based draws in both modes
  local fresh_a, fresh_b = {}, {}
  local ga, gb = torch.Generator(), torch.Generator()
  local ea = envs.CartPoleEnv{num_envs = 1, seed = 9, autoreset_mode = "next_step"}
  local eb = envs.CartPoleEnv{num_envs = 1, seed = 9, autoreset_mode = "same_step"}
  ea:reset(); eb:reset()
  ga:manual_seed(1); gb:manual_seed(1)
  local done_a = false
  for _ = 1, 400 do
    local _, _, t, tr = ea:step(torch.randint(1, 3, {1}, {generator = ga}))
    if done_a then fresh_a[#fresh_a + 1] = ea:state()[1]:totable() end
    done_a = t[1]:item() or tr[1]:item()
  end
  for _ = 1, 400 do
    local _, _, t, tr = eb:step(torch.randint(1, 3, {1}, {generator = gb}))
    if t[1]:item() or tr[1]:item() then fresh_b[#fresh_b + 1] = eb:state()[1]:totable() end
  end
  check(#fresh_a >= 3 and #fresh_b >= 3, "episodes")
  check_close(fresh_a[1], fresh_b[1], {atol = 0, rtol = 0})
end)

test("same_step autoreset: the done step returns the reset observation and keeps the last one apart", function()
  local env = envs.PendulumEnv{num_envs = 3, seed = 2, autoreset_mode = "same_step"}
  env:reset()
  local act = torch.zeros(3, 1)
  for t = 1, 200 do
    local before = env:state()
    local obs, _, term, trunc, info = env:step(act)
    if t < 200 then
      check(not trunc:any():item(), "Pendulum truncates at 200 steps")
      check_close(info.final_observation, obs, {atol = 0, rtol = 0})
    else
      check(trunc:all():item() and not term:any():item(), "truncated, never terminated")
      -- obs is the reset state's observation; the final one is the stepped state's
      local reset_state = env:state()
      check_close(obs, ops.stack(ops.pendulum.observe(ops.columns(reset_state))), {atol = 1e-6})
      local stepped = ops.pendulum.step(ops.columns(before), torch.zeros(3))
      check_close(info.final_observation, ops.stack(ops.pendulum.observe(stepped)), {atol = 1e-6})
      check(info.final_observation:sub(obs):abs():max():item() > 1e-3, "final observation differs from the reset one")
      check_eq(env:elapsed():sum():item(), 0, "elapsed restarts")
    end
  end
end)

test("disabled autoreset: stepping a done env is an error until reset; reset_mask resets some copies", function()
  local env = envs.MountainCarEnv{num_envs = 2, seed = 1, autoreset_mode = "disabled"}
  env:reset()
  local a = torch.tensor({2, 2})
  for _ = 1, 200 do env:step(a) end -- truncated at 200
  check_error(function() env:step(a) end, "MountainCar-v0: env 1 ended (terminated or truncated) and autoreset is disabled")
  local s_before = env:state()
  local obs = env:reset{reset_mask = torch.tensor({false, true})}
  check_error(function() env:step(a) end, "env 1 ended")
  local s = env:state()
  check_close(s[1], s_before[1], {atol = 0, rtol = 0})
  check(s[2][2]:item() == 0 and s[2][1]:item() >= -0.6 and s[2][1]:item() < -0.4, "copy 2 was reset")
  check_close(obs[2], s[2]:float(), {atol = 0, rtol = 0})
  env:reset()
  env:step(a)
  check_eq(env:elapsed():totable(), {1, 1}, "elapsed after a full reset")
end)

-- ---- seeding, batching, threads ----

test("env i of a batch seeded s equals a single env seeded s + i - 1 (same actions)", function()
  for _, id in ipairs(IDS) do
    local n, seed = 5, 40
    local batch = envs.make(id, {num_envs = n, seed = seed, autoreset_mode = "same_step"})
    local singles = {}
    for i = 1, n do singles[i] = envs.make(id, {num_envs = 1, seed = seed + i - 1, autoreset_mode = "same_step"}) end
    local ob = batch:reset()
    for i = 1, n do check_close(singles[i]:reset(), ob:narrow(1, i, 1), {atol = 0, rtol = 0}) end
    local gen = torch.Generator()
    gen:manual_seed(8)
    for _ = 1, 260 do
      local a = rand_actions(id, n, gen)
      local o, r, t, tr = batch:step(a)
      for i = 1, n do
        local o1, r1, t1, tr1 = singles[i]:step(a:narrow(1, i, 1))
        check_close(o1, o:narrow(1, i, 1), {atol = 0, rtol = 0})
        check_close(r1, r:narrow(1, i, 1), {atol = 0, rtol = 0})
        check_eq(t1[1]:item(), t[i]:item(), id .. " terminated")
        check_eq(tr1[1]:item(), tr[i]:item(), id .. " truncated")
      end
    end
  end
end)

test("results do not depend on the thread count (5000 CartPoles, 1 and 2 threads)", function()
  local old = torch.get_num_threads()
  local function run(threads)
    torch.set_num_threads(threads)
    local env = envs.CartPoleEnv{num_envs = 5000, seed = 123, autoreset_mode = "same_step"}
    local gen = torch.Generator()
    gen:manual_seed(4)
    env:reset()
    local o, r, t
    for _ = 1, 60 do o, r, t = env:step(torch.randint(1, 3, {5000}, {generator = gen})) end
    return o, env:state(), t
  end
  local o1, s1, t1 = run(1)
  local o2, s2, t2 = run(2)
  torch.set_num_threads(old)
  check(o1:eq(o2):all():item() and s1:eq(s2):all():item() and t1:eq(t2):all():item(), "identical")
end)

test("seeds: the same seed gives the same resets, reset{seed=} reseeds, another seed differs", function()
  local a = envs.AcrobotEnv{num_envs = 4, seed = 3}
  local b = envs.AcrobotEnv{num_envs = 4, seed = 3}
  local c = envs.AcrobotEnv{num_envs = 4, seed = 4}
  local oa, ob, oc = a:reset(), b:reset(), c:reset()
  check(oa:eq(ob):all():item(), "same seed")
  check(not oa:eq(oc):all():item(), "other seed")
  local again = a:reset()
  check(not again:eq(oa):all():item(), "a later reset draws anew")
  check(a:reset{seed = 3}:eq(oa):all():item(), "reset{seed=} restarts the draws")
  -- copy i+1 of seed 3 is copy i of seed 4
  check(oa[{{2, 4}}]:eq(oc[{{1, 3}}]):all():item(), "env i draws from seed + i - 1")
  torch.manual_seed(77)
  local d1 = envs.CartPoleEnv{num_envs = 2}:reset()
  torch.manual_seed(77)
  local d2 = envs.CartPoleEnv{num_envs = 2}:reset()
  check(d1:eq(d2):all():item(), "without seed=, torch.manual_seed decides")
end)

test("reset distributions are Gymnasium's uniform ranges", function()
  local n = 20000
  local function states(id) local e = envs.make(id, {num_envs = n, seed = 1}); e:reset(); return e:state() end
  local s = states("CartPole-v1")
  check(s:min():item() >= -0.05 and s:max():item() < 0.05, "CartPole in [-0.05, 0.05)")
  check(s:mean(1):abs():max():item() < 0.002 and math.abs(s:std():item() - 0.1 / math.sqrt(12)) < 0.001, "uniform")
  s = states("Acrobot-v1")
  check(s:min():item() >= -0.1 and s:max():item() <= 0.1, "Acrobot in [-0.1, 0.1]")
  check(s:float():double():eq(s):all():item(), "Acrobot's initial state is float32")
  s = states("MountainCar-v0")
  check(s[{{}, 1}]:min():item() >= -0.6 and s[{{}, 1}]:max():item() < -0.4 and s[{{}, 2}]:abs():max():item() == 0,
        "MountainCar position in [-0.6, -0.4), velocity 0")
  check(math.abs(s[{{}, 1}]:mean():item() + 0.5) < 0.002, "uniform position")
  s = states("Pendulum-v1")
  check(s[{{}, 1}]:abs():max():item() <= math.pi and s[{{}, 2}]:abs():max():item() <= 1, "Pendulum ranges")
  check(math.abs(s[{{}, 1}]:std():item() - 2 * math.pi / math.sqrt(12)) < 0.03, "uniform angle")
end)

-- ---- tensor ops ----

-- C steps from the given states/actions, in disabled mode
local function c_step(id, state, a)
  local env = envs.make(id, {num_envs = state.shape[1], seed = 0, autoreset_mode = "disabled"})
  env:reset()
  env:set_state(state, torch.zeros(state.shape[1], {dtype = torch.int64}))
  local obs, r, t = env:step(a)
  return env:state(), obs, r, t
end

test("tensor_ops step equals the C step (every env, 1e-6, 40 steps from reset states)", function()
  for _, id in ipairs(IDS) do
    local def = ops.by_name[id]
    local n = 64
    local env = envs.make(id, {num_envs = n, seed = 6})
    env:reset()
    local s = env:state()
    local gen = torch.Generator()
    gen:manual_seed(2)
    for step = 1, 40 do
      local a = rand_actions(id, n, gen)
      local cs, cobs, cr, ct = c_step(id, s, a)
      local ts, tr, tt = def.step(ops.columns(s), DISCRETE[id] and a or a:select(2, 1):contiguous())
      check_close(ops.stack(ts), cs, {atol = 1e-9, rtol = 1e-9})
      check_close(ops.stack(def.observe(ts)), cobs, TOL)
      check_close(tr:float(), cr, {atol = 1e-6, rtol = 1e-6})
      check(tt:eq(ct):all():item(), id .. " terminated at step " .. step)
      s = cs
    end
  end
end)

test("tensor_ops batch steps compile as one graph (fullgraph) and equal eager", function()
  for _, id in ipairs(IDS) do
    local def, ns, n = ops.by_name[id], ops.by_name[id].nstate, 32
    -- flat arguments and results: (elapsed, done, action, state..., fresh...)
    local fn = function(elapsed, done, a, ...)
      local args = {...}
      local st = {state = {table.unpack(args, 1, ns)}, elapsed = elapsed, done = done}
      local out, obs, r, term, trunc = ops.batch_step(def, st, a, {table.unpack(args, ns + 1, 2 * ns)}, "next_step")
      local res = {out.elapsed, out.done, r, term, trunc}
      for k = 1, ns do res[#res + 1] = out.state[k] end
      for k = 1, #obs do res[#res + 1] = obs[k] end
      return table.unpack(res)
    end
    torch.compiler.reset()
    local cfn = torch.compile(fn, {fullgraph = true})
    local env = envs.make(id, {num_envs = n, seed = 12})
    env:reset()
    local state = ops.columns(env:state())
    local elapsed, done = torch.full({n}, 195, {dtype = torch.int64}), torch.zeros(n, {dtype = torch.bool})
    local gen = torch.Generator()
    gen:manual_seed(5)
    for _ = 1, 8 do
      local a = rand_actions(id, n, gen)
      if not DISCRETE[id] then a = a:select(2, 1):contiguous() end
      local u = {}
      for k = 1, ns do u[k] = torch.rand({n}, {dtype = torch.float64, generator = gen}) end
      local fresh = def.reset(u)
      local args = {elapsed, done, a}
      for k = 1, ns do args[#args + 1] = state[k] end
      for k = 1, ns do args[#args + 1] = fresh[k] end
      local e = {fn(table.unpack(args))}
      local c = {cfn(table.unpack(args))}
      check_eq(#c, #e, id .. ": results")
      for k = 1, #e do
        local ok, err = pcall(check_close, c[k], e[k], {atol = 1e-9, rtol = 1e-9})
        check(ok, id .. ": result " .. k .. ": " .. tostring(err))
      end
      elapsed, done = e[1], e[2]
      for k = 1, ns do state[k] = e[5 + k] end
    end
    local st = torch.compiler.stats()
    check(st.compiled_calls >= 6 and st.eager_calls == 0 and st.fallbacks == 0,
          ("%s: compiled calls %d, eager %d, fallbacks %d"):format(id, st.compiled_calls, st.eager_calls, st.fallbacks))
  end
end)

test("the tensor backend (device or backend='tensor') follows the C env from the same state", function()
  local devs = {"cpu"}
  if torch.cuda.is_available() then devs[2] = "cuda" end
  for _, dev in ipairs(devs) do
    for _, id in ipairs(IDS) do
      local n = 8
      local c = envs.make(id, {num_envs = n, seed = 3, autoreset_mode = "disabled"})
      local t = envs.make(id, {num_envs = n, seed = 3, autoreset_mode = "disabled", device = dev, backend = "tensor"})
      c:reset(); t:reset()
      t:set_state(c:state())
      local gen = torch.Generator()
      gen:manual_seed(1)
      for _ = 1, 15 do
        local a = rand_actions(id, n, gen)
        local co, cr, ct, ctr = c:step(a)
        local to, tr, tt, ttr = t:step(a:to(dev))
        check_close(to:cpu(), co, TOL)
        check_close(tr:cpu(), cr, {atol = 1e-6, rtol = 1e-6})
        check(tt:cpu():eq(ct):all():item() and ttr:cpu():eq(ctr):all():item(), id .. " flags on " .. dev)
        if ct:any():item() then break end
      end
    end
  end
end)

test("the tensor backend with compile=true (one compiled graph a step) equals the C env", function()
  for _, mode in ipairs{"same_step", "next_step"} do
    for _, id in ipairs(IDS) do
      local n = 16
      local c = envs.make(id, {num_envs = n, seed = 3, autoreset_mode = "disabled"})
      local t = envs.make(id, {num_envs = n, seed = 3, autoreset_mode = mode, backend = "tensor", compile = true})
      c:reset(); t:reset()
      t:set_state(c:state())
      local gen = torch.Generator()
      gen:manual_seed(1)
      torch.compiler.reset()
      for _ = 1, 12 do
        local a = rand_actions(id, n, gen)
        local co, cr, ct = c:step(a)
        local to, tr, tt, _, info = t:step(a)
        if ct:any():item() then break end -- the C env (disabled) stops at the first end
        check_close(to, co, TOL)
        check_close(tr, cr, {atol = 1e-6, rtol = 1e-6})
        check(tt:eq(ct):all():item(), id .. " terminated")
        if mode == "same_step" then check_close(info.final_observation, co, TOL) end
      end
      local st = torch.compiler.stats()
      check(st.compiled_calls >= 5 and st.eager_calls == 0, id .. " " .. mode .. ": compiled calls " .. st.compiled_calls)
    end
  end
  check_error(function() envs.CartPoleEnv{compile = true} end, "compile=true compiles the tensor ops")
end)

test("the tensor backend autoresets (next_step) and truncates like the C env", function()
  local t = envs.PendulumEnv{num_envs = 4, seed = 2, backend = "tensor"}
  t:reset()
  local a = torch.zeros(4, 1)
  local o, r, term, trunc
  for _ = 1, 200 do o, r, term, trunc = t:step(a) end
  check(trunc:all():item() and not term:any():item(), "truncated at 200")
  o, r, term, trunc = t:step(a)
  check(r:eq(0):all():item() and not trunc:any():item(), "reset step")
  check_eq(t:elapsed():totable(), {0, 0, 0, 0}, "elapsed")
end)

test("step{out=} writes into the given tensors and equals a step that allocates", function()
  for _, mode in ipairs{"same_step", "next_step"} do
    local a_env = envs.AcrobotEnv{num_envs = 5, seed = 4, autoreset_mode = mode}
    local b_env = envs.AcrobotEnv{num_envs = 5, seed = 4, autoreset_mode = mode}
    a_env:reset(); b_env:reset()
    local out = {torch.empty(5, 6), torch.empty(5), torch.empty(5, {dtype = torch.bool}), torch.empty(5, {dtype = torch.bool})}
    if mode == "same_step" then out[5] = torch.empty(5, 6) end
    local gen = torch.Generator()
    gen:manual_seed(9)
    for _ = 1, 30 do
      local act = torch.randint(1, 4, {5}, {generator = gen})
      local o1, r1, t1, tr1, i1 = a_env:step(act)
      local o2, r2, t2, tr2, i2 = b_env:step(act, {out = out})
      check(rawequal(o2, out[1]) and rawequal(r2, out[2]) and rawequal(t2, out[3]) and rawequal(tr2, out[4]),
            "the out tensors are returned")
      check(o1:eq(o2):all():item() and r1:eq(r2):all():item() and t1:eq(t2):all():item() and tr1:eq(tr2):all():item(),
            mode .. ": same results")
      if mode == "same_step" then check(rawequal(i2.final_observation, out[5]), "final observation in out[5]") end
    end
    check_error(function() b_env:step(torch.tensor({1, 1, 1, 1, 1}), {out = {out[1]}}) end, "out must be a list of")
    local bad = {out[1], out[2], torch.empty(5), out[4], out[5]}
    check_error(function() b_env:step(torch.tensor({1, 1, 1, 1, 1}), {out = bad}) end,
                "out[3] (terminated) must be a contiguous torch.bool tensor of shape [5]")
  end
end)

-- ---- specs ----

test("specs: Gymnasium's observation boxes and actions (1-based Categorical, Bounded torques)", function()
  local e = envs.CartPoleEnv{num_envs = 3, seed = 0}
  local os_ = e.observation_spec
  check_eq(os_.shape, {3, 4}, "observation shape")
  check_close(os_.high[1], {4.8, 3.4028234663852886e38, 12 * 2 * math.pi / 360 * 2, 3.4028234663852886e38},
              {rtol = 1e-7, atol = 0})
  check(getmetatable(e.action_spec) == envs.Categorical and e.action_spec.n == 2, "Categorical(2)")
  check(e.action_spec:is_in(torch.tensor({1, 2, 2})), "1..2 in the spec")
  check(not e.action_spec:is_in(torch.tensor({0, 1, 2})), "0 is not an action")
  local a = e:rand_action()
  check(e.action_spec:is_in(a) and a.dtype == torch.int64, "rand_action in the spec")
  check(os_:is_in(e:reset()), "reset observation in the observation spec")
  local p = envs.PendulumEnv{num_envs = 2, seed = 0}
  check(getmetatable(p.action_spec) == envs.Bounded, "Bounded torque")
  check_close(p.action_spec.high, {{2}, {2}}, {atol = 0})
  check_close(p.observation_spec.high[1], {1, 1, 8}, {atol = 0})
  check(p.action_spec:is_in(p:rand_action()), "rand_action in the box")
  local ac = envs.AcrobotEnv{num_envs = 1, seed = 0}
  check_close(ac.observation_spec.high[1], {1, 1, 1, 1, 4 * math.pi, 9 * math.pi}, {rtol = 1e-7, atol = 0})
  check(ac.action_spec.n == 3, "Acrobot has 3 actions")
  local mc = envs.MountainCarContinuousEnv{num_envs = 1, seed = 0}
  check_close(mc.observation_spec.low[1], {-1.2, -0.07}, {rtol = 1e-7, atol = 0})
  check_eq(e.reward_spec.shape, {3}, "reward shape")
  check(e.done_spec:get("terminated").dtype == torch.bool, "done spec")
  check(envs.OneHot(3):is_in(torch.tensor({0, 0, 1})) and not envs.OneHot(3):is_in(torch.tensor({1, 0, 1})), "OneHot")
  check(tostring(e.action_spec):find("values 1..2", 1, true), "Categorical prints its 1-based range")
  check_error(function() envs.Categorical(0) end, "Categorical: n must be a positive integer, got 0")
  check_error(function() envs.Bounded{low = 1, high = 0, shape = {2}} end, "Bounded: low must not exceed high")
  check_error(function() envs.Bounded{high = 1} end, "Bounded: low is required")
  check_error(function() envs.Unbounded{shap = {2}} end, "shape")
end)

test("make() and the classes agree; TimeLimits are Gymnasium's", function()
  local limits = {["CartPole-v1"] = 500, ["Acrobot-v1"] = 500, ["MountainCar-v0"] = 200,
                  ["MountainCarContinuous-v0"] = 999, ["Pendulum-v1"] = 200}
  for id, lim in pairs(limits) do check_eq(envs.make(id).max_episode_steps, lim, id) end
  check(tostring(envs.make("CartPole-v1", {num_envs = 2, seed = 1})):find("CartPoleEnv", 1, true), "tostring")
  -- CartPole truncates at 500 even while balanced: start at step 498
  local e = envs.CartPoleEnv{num_envs = 1, seed = 0, autoreset_mode = "disabled"}
  e:reset()
  e:set_state(torch.zeros(1, 4, {dtype = torch.float64}), torch.tensor({498}))
  local _, _, t, tr = e:step(torch.tensor({1}))
  check(not tr[1]:item(), "step 499")
  _, _, t, tr = e:step(torch.tensor({2}))
  check(tr[1]:item() and not t[1]:item(), "truncated at 500, not terminated")
end)

-- ---- bad input ----

test("bad input: clear errors naming the env and the values", function()
  local e = envs.CartPoleEnv{num_envs = 3, seed = 0}
  check_error(function() e:step(torch.tensor({1, 2, 1})) end, "CartPole-v1: step before reset")
  e:reset()
  check_error(function() e:step(torch.tensor({1, 3, 1})) end,
              "CartPole-v1: action 3 of env 2 is outside the action spec (1 to 2; actions are 1-based)")
  check_error(function() e:step(torch.tensor({0, 1, 1})) end, "action 0 of env 1")
  check_error(function() e:step(torch.tensor({1, 2})) end, "CartPole-v1: step: actions must have shape [3] (3 envs), got [2]")
  check_error(function() e:step(torch.tensor({{1}, {2}, {1}})) end, "must have shape [3]")
  check_error(function() e:step(torch.tensor({1.0, 2.0, 1.0})) end, "actions must be integer indices 1..2")
  check_error(function() e:step({1, 2, 1}) end, "actions must be a tensor")
  local p = envs.PendulumEnv{num_envs = 2, seed = 0}
  p:reset()
  check_error(function() p:step(torch.tensor({{0.5}, {2.5}})) end,
              "Pendulum-v1: action 2.5 of env 2 is outside the action spec [-2, 2]")
  check_error(function() p:step(torch.tensor({{0.5}, {0 / 0}})) end, "of env 2 is outside the action spec")
  check_error(function() p:step(torch.tensor({0.5, 1.0})) end, "must have shape [2, 1]")
  check_error(function() p:step(torch.tensor({{1}, {1}})) end, "actions must be floating point")
  check_error(function() envs.make("CartPole-v0") end, "unknown environment 'CartPole-v0'")
  check_error(function() envs.CartPoleEnv{num_env = 2} end, "num_envs")
  check_error(function() envs.CartPoleEnv{num_envs = 0} end, "num_envs must be a positive integer")
  check_error(function() envs.CartPoleEnv{autoreset_mode = "next"} end, "autoreset_mode")
  check_error(function() envs.CartPoleEnv{device = "cuda:0", backend = "c"} end, "backend 'c' runs on the CPU")
  check_error(function() e:reset{reset_mask = torch.tensor({true})} end, "reset_mask must be a bool tensor of shape [3]")
  check_error(function() e:set_state(torch.zeros(2, 4)) end, "set_state: the state must be a tensor of shape [3, 4]")
  -- errors name the caller's line, not the library's
  local err = check_error(function() e:step(torch.tensor({9, 1, 1})) end, "action 9")
  check(not err:find("rl/envs/init.lua", 1, true) and err:find("test_envs.lua", 1, true), "error positioned at the caller: " .. err)
  -- the env stays usable after errors
  local obs = e:step(torch.tensor({1, 1, 1}))
  check_eq(obs.shape, {3, 4}, "usable after errors")
end)
