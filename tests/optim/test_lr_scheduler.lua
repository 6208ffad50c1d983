-- tests/optim/test_lr_scheduler.lua -- the lr (and momentum / beta1)
-- sequences of StepLR, CosineAnnealingLR, LinearLR, LambdaLR and OneCycleLR
-- (cos, linear, three_phase) against PyTorch 1.13 (tests/ref/optim.lua).
local optim = require "torch.optim"
local S = optim.lr_scheduler
local refs = ref("optim").sched

local sgd = function(ps) return optim.SGD(ps, {lr = 0.1, momentum = 0.9}) end
local adam = function(ps) return optim.Adam(ps, {lr = 0.1}) end

local cases = {
  step = {sgd, function(o) return S.StepLR(o, 3, {gamma = 0.5}) end},
  cosine = {sgd, function(o) return S.CosineAnnealingLR(o, 5, {eta_min = 0.01}) end},
  linear = {sgd, function(o) return S.LinearLR(o, {start_factor = 0.25, total_iters = 4}) end},
  linear_down = {sgd, function(o) return S.LinearLR(o, 1.0, 0.1, 5) end},
  lambda = {sgd, function(o) return S.LambdaLR(o, function(e) return 0.9 ^ e + 0.01 * e end) end},
  onecycle = {sgd, function(o) return S.OneCycleLR(o, 0.5, {total_steps = 12}) end,
              function(g) return g.momentum end},
  onecycle_three_phase_linear = {sgd, function(o)
    return S.OneCycleLR(o, 1.0, {epochs = 3, steps_per_epoch = 5, pct_start = 0.25, anneal_strategy = "linear",
                                 three_phase = true})
  end, function(g) return g.momentum end},
  onecycle_adam = {adam, function(o)
    return S.OneCycleLR(o, 0.3, {total_steps = 10, div_factor = 10, final_div_factor = 100})
  end, function(g) return g.betas[1] end},
}

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  test(name .. ": lr sequence matches PyTorch", function()
    local c, want = cases[name], refs[name]
    local p = torch.zeros(2, {requires_grad = true})
    local opt = c[1]({p})
    local sch = c[2](opt)
    local lrs, moms = {}, {}
    for i = 1, #want.lr do
      lrs[i] = opt.param_groups[1].lr
      if c[3] then moms[i] = c[3](opt.param_groups[1]) end
      opt:step()
      sch:step()
    end
    check_close(lrs, want.lr, {atol = 1e-15, rtol = 1e-12})
    check_close(sch:get_last_lr()[1], want.last_lr, {atol = 1e-15, rtol = 1e-12})
    if c[3] then check_close(moms, want.momentum, {atol = 1e-15, rtol = 1e-12}) end
  end)
end

test("every reference schedule has a test", function()
  for k in pairs(refs) do check(cases[k] ~= nil, "no test for " .. k) end
end)

test("OneCycleLR refuses to step past total_steps; LambdaLR takes one function per group", function()
  local p = torch.zeros(1, {requires_grad = true})
  local opt = optim.SGD({p}, {lr = 0.1, momentum = 0.9})
  local sch = S.OneCycleLR(opt, 1.0, {total_steps = 2})
  sch:step(); sch:step()
  check_error(function() sch:step() end, "tried to step 3 times; the specified number of total steps is 2")
  local q = torch.zeros(1, {requires_grad = true})
  local opt2 = optim.SGD({{params = {p}}, {params = {q}, lr = 1.0}}, {lr = 0.1})
  local l = S.LambdaLR(opt2, {function(e) return e + 1 end, function(e) return 0.5 end})
  l:step()
  check_close(l:get_last_lr(), {0.2, 0.5}, {atol = 1e-15})
  check_error(function() S.LambdaLR(opt2, {function() return 1 end}) end, "expected 2 lr_lambdas, got 1")
end)

test("scheduler state_dict round trip resumes the schedule", function()
  local p = torch.zeros(1, {requires_grad = true})
  local opt = optim.SGD({p}, {lr = 0.1})
  local sch = S.StepLR(opt, 2, {gamma = 0.5})
  for _ = 1, 3 do opt:step(); sch:step() end
  local sd = sch:state_dict()
  local opt2 = optim.SGD({p}, {lr = 0.1})
  local sch2 = S.StepLR(opt2, 2, {gamma = 0.5})
  sch2:load_state_dict(sd)
  check_eq(sch2.last_epoch, 3)
  check_eq(sch2:get_last_lr(), sch:get_last_lr())
end)
