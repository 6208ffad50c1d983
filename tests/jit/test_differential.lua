-- tests/jit/test_differential.lua -- the op tests and the nn tests run both
-- eagerly and under torch.compile on fresh random inputs, results compared
-- per dtype. Op cases are the gradcheck specs of every differentiable op in
-- the registry (tests/graph/specs_*.lua): each case's fn is compiled, called
-- once on one draw of inputs (the capture), then compiled and eager results
-- are compared on a second, fresh draw. nn cases run a module's forward
-- under no_grad, and whole training steps (forward, backward, SGD) of small
-- models. A child process with MOONTORCH_JIT=0 checks that compiled
-- functions then give bit-identical eager results.
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
package.path = "tests/jit/?.lua;tests/graph/?.lua;" .. package.path
local J = require "jitlib"

local TOL = {
  [torch.float64] = {atol = 1e-10, rtol = 1e-9, equal_nan = true},
  [torch.float32] = {atol = 1e-5, rtol = 1e-4, equal_nan = true},
}

local function detach_all(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = torch.is_tensor(v) and v:detach():clone() or v end
  return out
end

-- compares two results (tensors, numbers, tables of them)
local function compare(got, want, what)
  if torch.is_tensor(want) then
    check(torch.is_tensor(got), what .. ": compiled result is not a tensor")
    local tol = TOL[want.dtype] or {atol = 0, rtol = 0}
    check_close(got, want, tol)
  elseif type(want) == "table" then
    for k, v in pairs(want) do compare(got[k], v, what .. "[" .. tostring(k) .. "]") end
  else
    check_eq(got, want)
  end
end

local specs = {}
for _, family in ipairs({"elementwise", "views", "reduce", "movement", "index", "linalg", "nn", "attention"}) do
  local ok, t = pcall(require, "specs_" .. family)
  if ok then
    for op, cases in pairs(t) do specs[op] = cases end
  end
end

local counts = {cases = 0, compiled = 0}

for _, op in ipairs(torch._ops()) do
  for k, case in ipairs(specs[op.name] or {}) do
    test(("compiled vs eager: %s #%d"):format(op.name, k), function()
      local c = torch.compile(case.fn, {_quiet = true})
      torch.manual_seed(500 + k)
      local before = torch.compiler.stats().compiled_calls
      torch.no_grad(function()
        c(table.unpack(detach_all(case.inputs())))
        local args = detach_all(case.inputs()) -- a fresh draw
        local want = table.pack(case.fn(table.unpack(args)))
        local got = table.pack(c(table.unpack(args)))
        check_eq(got.n, want.n)
        for i = 1, want.n do compare(got[i], want[i], op.name) end
      end)
      counts.cases = counts.cases + 1
      if torch.compiler.stats().compiled_calls > before then counts.compiled = counts.compiled + 1 end
    end)
  end
end

-- nn modules: forward under no_grad on fresh inputs
local modules = {
  {"Linear", function() return nn.Linear(6, 4) end, {3, 6}},
  {"Bilinear", function() return nn.Bilinear(3, 4, 2) end, {5, 3}, {5, 4}},
  {"Conv1d", function() return nn.Conv1d(2, 3, 3, {padding = 1}) end, {2, 2, 7}},
  {"Conv2d", function() return nn.Conv2d(2, 3, 3, {stride = 2}) end, {2, 2, 7, 7}},
  {"ConvTranspose2d", function() return nn.ConvTranspose2d(2, 3, 3, {stride = 2}) end, {1, 2, 4, 4}},
  {"MaxPool2d", function() return nn.MaxPool2d(2) end, {2, 3, 6, 6}},
  {"AvgPool2d", function() return nn.AvgPool2d(3, {stride = 2, padding = 1}) end, {2, 3, 7, 7}},
  {"AdaptiveAvgPool2d", function() return nn.AdaptiveAvgPool2d(3) end, {2, 3, 7, 5}},
  {"BatchNorm1d (eval)", function() return nn.BatchNorm1d(4):eval() end, {5, 4}},
  {"LayerNorm", function() return nn.LayerNorm(8) end, {3, 5, 8}},
  {"GroupNorm", function() return nn.GroupNorm(2, 4) end, {3, 4, 5}},
  {"ReLU", function() return nn.ReLU() end, {4, 9}},
  {"GELU", function() return nn.GELU() end, {4, 9}},
  {"SiLU", function() return nn.SiLU() end, {4, 9}},
  {"Tanh", function() return nn.Tanh() end, {4, 9}},
  {"Sigmoid", function() return nn.Sigmoid() end, {4, 9}},
  {"LeakyReLU", function() return nn.LeakyReLU(0.1) end, {4, 9}},
  {"ELU", function() return nn.ELU() end, {4, 9}},
  {"Softplus", function() return nn.Softplus() end, {4, 9}},
  {"Softmax", function() return nn.Softmax(-1) end, {4, 9}},
  {"LogSoftmax", function() return nn.LogSoftmax(2) end, {4, 9}},
  {"Flatten", function() return nn.Flatten() end, {2, 3, 4}},
  {"Dropout (eval)", function() return nn.Dropout(0.5):eval() end, {4, 9}},
  {"Embedding", function() return nn.Embedding(10, 4) end, "tokens"},
  {"Sequential MLP", function() return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)) end, {5, 6}},
  {"MultiheadAttention", function() return nn.MultiheadAttention(8, 2, {batch_first = true}) end, "mha"},
  {"TransformerEncoderLayer (eval)", function()
    return nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, batch_first = true}):eval()
  end, {2, 5, 8}},
  {"LSTM", function() return nn.LSTM(4, 5, {batch_first = true}) end, {2, 3, 4}},
}

local function draw(spec, extra)
  if spec == "tokens" then return {torch.randint(1, 11, {3, 5})} end
  if spec == "mha" then local q = torch.randn(2, 5, 8) return {q, q, q} end
  local args = {torch.randn(spec)}
  if extra then args[2] = torch.randn(extra) end
  return args
end

for _, m in ipairs(modules) do
  test("compiled vs eager nn: " .. m[1], function()
    torch.manual_seed(7)
    local mod = m[2]()
    local c = torch.compile(function(...) return mod(...) end, {_quiet = true})
    torch.no_grad(function()
      c(table.unpack(draw(m[3], m[4])))
      local args = draw(m[3], m[4])
      local want = table.pack(mod(table.unpack(args)))
      local got = table.pack(c(table.unpack(args)))
      for i = 1, want.n do compare(got[i], want[i], m[1]) end
    end)
  end)
end

-- whole training steps of small models on fresh batches
local steps = {
  {"MLP", function() return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)) end, {5, 6}},
  {"CNN", function()
    return nn.Sequential(nn.Conv2d(1, 3, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(12, 3))
  end, {4, 1, 4, 4}},
  {"LayerNorm+GELU", function() return nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3)) end,
   {5, 6}},
}

for _, s in ipairs(steps) do
  test("compiled vs eager training step: " .. s[1], function()
    local function make()
      local m, _, step = J.train_setup(s[2], function(p) return optim.SGD(p, {lr = 0.1, momentum = 0.5}) end, 11)
      return m, step
    end
    local me, se = make()
    local mc, sc = make()
    local c = torch.compile(sc, {_quiet = true})
    for i = 1, 5 do
      torch.manual_seed(100 + i)
      local x, y = torch.randn(s[3]), torch.randint(1, 4, {s[3][1]})
      compare(c(x, y), se(x, y), s[1] .. " loss")
      local pe, pc = me:parameters(), mc:parameters()
      for k = 1, #pe do compare(pc[k], pe[k], s[1] .. " parameter " .. k) end
    end
    check(torch.compiler.stats().compiled_calls > 0, "no step was compiled")
  end)
end

test("coverage: most op cases compile (the rest fall back to eager with a reason)", function()
  io.stderr:write(("  differential: %d of %d op cases ran compiled on the fresh draw\n"):format(counts.compiled, counts.cases))
  check(counts.cases > 150, "cases: " .. counts.cases)
  check(counts.compiled >= counts.cases // 4, ("%d of %d cases compiled"):format(counts.compiled, counts.cases))
end)

test("MOONTORCH_JIT=0: compiled functions give bit-identical eager results", function()
  local out = J.child("MOONTORCH_JIT=0", [[
    local torch = require "torch"
    local nn = require "torch.nn"
    torch.manual_seed(3)
    local m = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))
    local fns = {
      function(a, b) return (a * b + 1):softmax(-1) end,
      function(a) return a:gelu():sum(-1) end,
      function(a) return m(a) end,
    }
    local same = 0
    for _, f in ipairs(fns) do
      local c = torch.compile(f)
      for _ = 1, 3 do
        local a, b = torch.randn(5, 6), torch.randn(6)
        if torch.equal(c(a, b), f(a, b)) then same = same + 1 end
      end
    end
    print("identical", same, torch.compiler.stats().compiled_calls)
  ]])
  check(out:match("identical%s+9%s+0"), out)
end)
