-- tests/cuda/test_cuda_fused_adam.lua -- the fused Adam/AdamW step on CUDA
-- (tensor/cuda/adam.cu through torch._fused_adam_, the default of
-- torch.optim.Adam/AdamW there) against the unfused CPU optimizer over
-- several steps: every floating dtype, weight decay, amsgrad, maximize,
-- AdamW, parameter groups, odd shapes, a parameter without a gradient and a
-- non-contiguous one (which falls back to the ops); the fused/foreach
-- options; bad input to torch._fused_adam_. The CPU loop (fused = true on
-- the CPU) against the ops runs everywhere; the rest skips without a GPU.
local optim = require "torch.optim"

local function close(got, want, tol, what)
  local ok, err = pcall(check_close, got, want, tol)
  if not ok then error((what or "") .. ": " .. tostring(err), 2) end
end

test("fused = true on the CPU (float32/float64) matches the ops; fused with foreach is an error", function()
  for _, dt in ipairs{torch.float32, torch.float64} do
    for _, o in ipairs{{lr = 0.1}, {lr = 0.05, weight_decay = 0.2, amsgrad = true, maximize = true}} do
      for _, Opt in ipairs{optim.Adam, optim.AdamW} do
        local function run(fused)
          torch.manual_seed(7)
          local ps = {torch.randn(5, 3, {dtype = dt}):requires_grad_(), torch.randn(4, {dtype = dt}):requires_grad_()}
          local oo = {fused = fused}
          for k, v in pairs(o) do oo[k] = v end
          local opt = Opt(ps, oo)
          for _ = 1, 4 do
            for _, p in ipairs(ps) do p.grad = torch.randn(p.shape, {dtype = dt}) end
            opt:step()
          end
          return ps
        end
        local a, b = run(true), run(false)
        local tol = dt == torch.float32 and {atol = 1e-6, rtol = 1e-6} or {atol = 1e-14, rtol = 1e-14}
        for i = 1, #a do close(a[i], b[i], tol, ("%s %s param %d"):format(tostring(dt), tostring(o.amsgrad), i)) end
      end
    end
  end
  local p = torch.zeros(3):requires_grad_()
  check_error(function() optim.Adam({p}, {fused = true, foreach = true}) end, "cannot be `true` together")
end)

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; fused Adam tests on the GPU skipped\n")
  return
end


local SHAPES = {{33, 77}, {19}, {1}, {4, 5, 6}}

-- params (CPU, float64) and per-step gradients, fixed by seed
local function problem(seed, nsteps)
  torch.manual_seed(seed)
  local ps, grads = {}, {}
  for i, s in ipairs(SHAPES) do ps[i] = torch.randn(table.unpack(s)):double() end
  for k = 1, nsteps do
    grads[k] = {}
    for i, s in ipairs(SHAPES) do grads[k][i] = torch.randn(table.unpack(s)):double() end
  end
  return ps, grads
end

-- runs nsteps of make(params) on dev in dt; returns the params and the optimizer
local function trajectory(make, dev, dt, ps0, grads, opts)
  local ps = {}
  for i, p in ipairs(ps0) do ps[i] = p:clone():to(dt):to(dev):requires_grad_() end
  local opt = make(ps, opts)
  for k = 1, #grads do
    for i, p in ipairs(ps) do p.grad = grads[k][i]:to(dt):to(dev) end
    opt:step()
  end
  return ps, opt
end

local TOL = {[torch.float64] = {atol = 1e-12, rtol = 1e-12}, [torch.float32] = {atol = 2e-6, rtol = 2e-6},
             [torch.float16] = {atol = 4e-3, rtol = 2e-3}, [torch.bfloat16] = {atol = 3e-2, rtol = 1e-2}}

local CASES = {
  {"adam", optim.Adam, {lr = 0.01}},
  {"adam wd", optim.Adam, {lr = 0.01, weight_decay = 0.1, betas = {0.8, 0.95}, eps = 1e-6}},
  {"adam amsgrad", optim.Adam, {lr = 0.02, amsgrad = true}},
  {"adam maximize wd", optim.Adam, {lr = 0.01, maximize = true, weight_decay = 0.05}},
  {"adamw", optim.AdamW, {lr = 0.01}},
  {"adamw amsgrad maximize", optim.AdamW, {lr = 0.01, weight_decay = 0.3, amsgrad = true, maximize = true}},
}

test("fused Adam/AdamW on CUDA match the unfused CPU step over 6 steps, every dtype and option", function()
  for _, case in ipairs(CASES) do
    local ps0, grads = problem(1, 6)
    local make = function(ps, o) return case[2](ps, o) end
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      local got, gopt = trajectory(make, "cuda", dt, ps0, grads, case[3])
      -- half types compute in float32 and round once per step (the unfused
      -- ops round after each op, and eps = 1e-8 is 0 in float16): the
      -- reference is the float32 CPU step from the same rounded values
      local rdt = (dt == torch.float16 or dt == torch.bfloat16) and torch.float32 or dt
      local rps, rgrads = {}, {}
      for i, p in ipairs(ps0) do rps[i] = p:to(dt):double() end
      for k, gk in ipairs(grads) do
        rgrads[k] = {}
        for i, g in ipairs(gk) do rgrads[k][i] = g:to(dt):double() end
      end
      local want, wopt = trajectory(make, "cpu", rdt, rps, rgrads, case[3])
      for i = 1, #got do
        local what = ("%s %s param %d"):format(case[1], tostring(dt), i)
        check(got[i].is_cuda and got[i].dtype == dt, what)
        close(got[i]:cpu():double(), want[i]:double(), TOL[dt], what)
        local gs, ws = gopt.state[got[i]], wopt.state[want[i]]
        check_eq(gs.step, 6, what .. " step count")
        close(gs.exp_avg:cpu():double(), ws.exp_avg:double(), TOL[dt], what .. " exp_avg")
        close(gs.exp_avg_sq:cpu():double(), ws.exp_avg_sq:double(), TOL[dt], what .. " exp_avg_sq")
        if case[3].amsgrad then
          close(gs.max_exp_avg_sq:cpu():double(), ws.max_exp_avg_sq:double(), TOL[dt], what .. " max_exp_avg_sq")
        end
      end
    end
  end
end)

test("the fused step makes no temporaries; fused=false and foreach=true run the ops", function()
  local ps0, grads = problem(2, 3)
  local function allocs_per_step(o)
    local ps = {}
    for i, p in ipairs(ps0) do ps[i] = p:float():cuda():requires_grad_() end
    for i, p in ipairs(ps) do p.grad = grads[1][i]:float():cuda() end
    local opt = optim.Adam(ps, o)
    opt:step() -- makes the state
    local a0 = torch.cuda.memory_stats().num_allocs
    opt:step()
    return torch.cuda.memory_stats().num_allocs - a0
  end
  check_eq(allocs_per_step({lr = 0.01}), 0, "fused by default on CUDA")
  check_eq(allocs_per_step({lr = 0.01, fused = true}), 0, "fused = true")
  check(allocs_per_step({lr = 0.01, fused = false}) > 0, "fused = false runs the ops")
  check(allocs_per_step({lr = 0.01, foreach = true}) > 0, "foreach = true runs the ops")
  check_error(function() optim.Adam({torch.zeros(2):cuda():requires_grad_()}, {fused = true, foreach = true}) end,
              "cannot be `true` together")
  check_error(function() optim.AdamW({torch.zeros(2):cuda():requires_grad_()}, {fused = true, differentiable = true}) end,
              "differentiable")
end)

test("groups, a parameter without a gradient and a non-contiguous parameter", function()
  torch.manual_seed(3)
  local base = {torch.randn(7, 5):double(), torch.randn(5, 7):double(), torch.randn(9):double()}
  local g = {torch.randn(7, 5):double(), torch.randn(7, 5):double(), torch.randn(9):double()}
  local function run(dev)
    local a = base[1]:clone():to(dev):requires_grad_()
    local b = base[2]:clone():to(dev):t():requires_grad_() -- a transposed leaf: the unfused ops
    local c = base[3]:clone():to(dev):requires_grad_() -- never gets a gradient
    local opt = optim.AdamW({{params = {a}}, {params = {b, c}, lr = 0.05, amsgrad = true}}, {lr = 0.02})
    for _ = 1, 4 do
      a.grad, b.grad = g[1]:to(dev), g[2]:to(dev)
      opt:step()
    end
    return a, b, c, opt
  end
  local a, b, c, opt = run("cuda")
  local ra, rb, rc = run("cpu")
  close(a:cpu(), ra, {atol = 1e-12, rtol = 1e-12}, "contiguous param")
  close(b:cpu(), rb, {atol = 1e-12, rtol = 1e-12}, "transposed param")
  close(c:cpu(), rc, {atol = 0, rtol = 0}, "param without a gradient is untouched")
  check(opt.state[c] == nil, "no state for a parameter that never had a gradient")
  check_eq(opt.state[a].step, 4)
  check_eq(opt.state[b].step, 4)
end)

test("torch._fused_adam_ rejects bad input with clear errors", function()
  local p, gr = torch.zeros(4):cuda(), torch.ones(4):cuda()
  local m, v = torch.zeros(4):cuda(), torch.zeros(4):cuda()
  local o = {lr = 0.1}
  torch._fused_adam_({p}, {gr}, {m}, {v}, nil, {1}, o)
  close(p:cpu(), torch.full({4}, -0.1), {atol = 1e-6}, "one step")
  check_error(function() torch._fused_adam_({p}, {gr:double()}, {m}, {v}, nil, {2}, o) end, "gradient is float64")
  check_error(function() torch._fused_adam_({p}, {torch.ones(5):cuda()}, {m}, {v}, nil, {2}, o) end, "shape")
  check_error(function() torch._fused_adam_({p}, {gr}, {m}, {v}, nil, {0}, o) end, "start at 1")
  check_error(function() torch._fused_adam_({p}, {gr}, {m}, {v}, nil, {2}, {amsgrad = true}) end, "max_exp_avg_sqs")
  check_error(function() torch._fused_adam_({p}, {gr, gr}, {m}, {v}, nil, {2}, o) end, "one entry per parameter")
  check_error(function() torch._fused_adam_({p}, {gr}, {m}, {v}, nil, {2}, {lr = "x"}) end, "number")
  check_error(function() torch._fused_adam_({p}, {gr:cpu()}, {m}, {v}, nil, {2}, o) end, "cpu")
  check_error(function()
    torch._fused_adam_({torch.zeros(4, {dtype = torch.float16})}, {torch.ones(4, {dtype = torch.float16})},
                       {torch.zeros(4, {dtype = torch.float16})}, {torch.zeros(4, {dtype = torch.float16})}, nil, {1}, o)
  end, "on the CPU are not supported")
  check_error(function() torch._fused_adam_({p:int()}, {gr:int()}, {m:int()}, {v:int()}, nil, {2}, o) end,
              "floating")
end)
