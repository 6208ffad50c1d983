-- tests/jit/test_epilogue.lua -- jit/rewrite.c's epilogues: the activation
-- after a convolution and the bias add (+ activation) after a large float32
-- matmul are folded into the library call (oneDNN post-ops). Compiled
-- results are checked against eager ones, the fold against the IR text of
-- torch.compiler.explain, and the cases where the pre-activation value is
-- read elsewhere (gelu's backward, a second output) must not fold.
cpu_only("oneDNN epilogues of the CPU backend")
local torch = require "torch"
local nn = require "torch.nn"
local F = require "torch.nn.functional"
local optim = require "torch.optim"
package.path = "tests/jit/?.lua;" .. package.path
local J = require "jitlib"

local TOL = {atol = 2e-5, rtol = 1e-4}

-- activation name in the IR text -> the function applying it
local ACTS = {
  {"relu", F.relu}, {"leaky_relu", function(x) return F.leaky_relu(x, 0.2) end}, {"tanh", torch.tanh},
  {"sigmoid", torch.sigmoid}, {"silu", F.silu}, {"gelu", F.gelu},
  {"gelu_tanh", function(x) return F.gelu(x, "tanh") end},
}

local function has(txt, s) return txt:find(s, 1, true) ~= nil end

-- compiled fn against eager fn on args (under no_grad); returns the explain text
local function agree(fn, args, tol)
  return torch.no_grad(function()
    local c = torch.compile(fn)
    local want = {fn(table.unpack(args))}
    for _ = 1, 2 do
      local got = {c(table.unpack(args))}
      for i = 1, #want do check_close(got[i], want[i], tol or TOL) end
    end
    return torch.compiler.explain(fn, table.unpack(args))
  end)
end

test("conv2d + each oneDNN activation: one call with the activation as a post-op, equal to eager", function()
  torch.compiler.reset()
  torch.manual_seed(1)
  local conv = nn.Conv2d(3, 8, 3, {padding = 1})
  local x = torch.randn(4, 3, 12, 12)
  for _, a in ipairs(ACTS) do
    local txt = agree(function(t) return a[2](conv(t)) end, {x})
    check(has(txt, "extern.convolution+" .. a[1] .. " "), a[1] .. ": " .. txt:sub(1, 600))
    check(has(txt, "0 kernel(s)"), a[1] .. ": no kernel left")
  end
  -- without bias, 1-D and strided convolutions fold too
  local c1 = nn.Conv1d(4, 6, 3, {bias = false})
  check(has(agree(function(t) return F.relu(c1(t)) end, {torch.randn(2, 4, 10)}), "extern.convolution+relu"), "conv1d")
  local c2 = nn.Conv2d(3, 5, 3, {stride = 2})
  check(has(agree(function(t) return F.silu(c2(t)) end, {x}), "extern.convolution+silu"), "strided")
end)

test("linear (128x784 @ 784x256) + bias + each activation: one oneDNN matmul call, equal to eager", function()
  torch.compiler.reset()
  torch.manual_seed(2)
  local lin = nn.Linear(784, 256)
  local x = torch.randn(128, 784)
  for _, a in ipairs(ACTS) do
    local txt = agree(function(t) return a[2](lin(t)) end, {x})
    check(has(txt, "extern.matmul+bias+" .. a[1] .. " "), a[1] .. ": " .. txt:sub(1, 600))
    check(has(txt, "0 kernel(s)"), a[1] .. ": no kernel left")
  end
  local txt = agree(function(t) return lin(t) end, {x})
  check(has(txt, "extern.matmul+bias "), "bias alone: " .. txt:sub(1, 600))
  -- a batch of sequences: (8, 16, 784) @ (784, 256)
  txt = agree(function(t) return F.gelu(lin(t)) end, {torch.randn(8, 16, 784)})
  check(has(txt, "extern.matmul+bias+gelu"), "3-D input")
end)

test("the folded matmul serves other batch sizes of a dynamic graph", function()
  torch.compiler.reset()
  torch.manual_seed(3)
  local lin = nn.Linear(3136, 128)
  local f = function(t) return F.relu(lin(t)) end
  torch.no_grad(function()
    local c = torch.compile(f)
    for _, bs in ipairs({64, 32, 100, 64, 7}) do
      local x = torch.randn(bs, 3136)
      check_close(c(x), f(x), TOL)
    end
  end)
  check_eq(torch.compiler.stats().recompiles, 0)
  check(has(torch.no_grad(function() return torch.compiler.explain(f, torch.randn(64, 3136)) end),
    "extern.matmul+bias+relu"), "folded")
end)

test("small products keep OpenBLAS and the fused kernel (64x128 @ 128x10)", function()
  torch.compiler.reset()
  local lin = nn.Linear(128, 10)
  local txt = agree(function(t) return F.relu(lin(t)) end, {torch.randn(64, 128)})
  check(not has(txt, "+bias"), txt:sub(1, 600))
  check(has(txt, "extern.matmul "), "plain matmul")
end)

test("a pre-activation value read elsewhere is not folded, and results still agree", function()
  torch.compiler.reset()
  torch.manual_seed(4)
  local conv, lin = nn.Conv2d(3, 8, 3), nn.Linear(784, 256)
  local x, y = torch.randn(2, 3, 10, 10), torch.randn(128, 784)
  local txt = agree(function(t) local p = conv(t) return F.relu(p), p end, {x})
  check(not has(txt, "convolution+"), "conv output returned: " .. txt:sub(1, 600))
  txt = agree(function(t) local p = conv(t) return F.gelu(p) + p:sum() end, {x})
  check(not has(txt, "convolution+"), "conv output read twice")
  txt = agree(function(t) local p = lin(t) return torch.sigmoid(p), p:mean() end, {y})
  check(not has(txt, "+sigmoid"), "pre-activation read by a mean: " .. txt:sub(1, 600))
  check(has(txt, "extern.matmul+bias "), "the bias still folds")
  txt = agree(function(t) local m = t:matmul(lin.weight:t()) return F.relu(m + lin.bias), m end, {y})
  check(not has(txt, "+bias"), "product returned: " .. txt:sub(1, 600))
  -- a part of the decomposition read elsewhere: sigmoid(x) inside silu is also returned
  txt = agree(function(t) local p = conv(t) return F.silu(p), torch.sigmoid(p) end, {x})
  check(not has(txt, "convolution+"), "silu's sigmoid returned: " .. txt:sub(1, 600))
end)

-- one model trained eagerly and compiled from the same seed; returns the
-- explain text of the compiled step
local function train_agree(make, x, y, n)
  local function setup()
    local m, _, step = J.train_setup(make, function(p) return optim.SGD(p, {lr = 0.05, momentum = 0.9}) end, 11)
    return m, step
  end
  local me, se = setup()
  local mc, sc = setup()
  local c = torch.compile(sc)
  for _ = 1, n do
    check_close(c(x, y), se(x, y), TOL)
    local pe, pc = me:parameters(), mc:parameters()
    for k = 1, #pe do
      check_close(pc[k], pe[k], TOL)
      check_close(pc[k].grad, pe[k].grad, TOL)
    end
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
  return torch.compiler.explain(sc, x, y) -- after the comparisons: it runs a step
end

test("training steps: conv+relu and linear+bias+relu fold (relu's backward reads the output), match eager", function()
  torch.compiler.reset()
  local txt = train_agree(function()
    return nn.Sequential(nn.Conv2d(1, 8, 3, {padding = 1}), nn.ReLU(), nn.Conv2d(8, 4, 3, {stride = 2}), nn.Tanh(),
      nn.Flatten(), nn.Linear(4 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, 5))
  end, torch.randn(32, 1, 16, 16), torch.randint(1, 6, {32}), 4)
  check(has(txt, "extern.convolution+relu"), txt:sub(1, 3000))
  check(has(txt, "extern.convolution+tanh"), "tanh's backward reads its output")
  check(has(txt, "extern.matmul+bias+relu"), "linear + relu")
end)

test("training steps: gelu's backward reads its input, so only the bias folds; results match eager", function()
  torch.compiler.reset()
  local txt = train_agree(function()
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.GELU(), nn.Flatten(), nn.Linear(4 * 14 * 14, 256), nn.GELU(),
      nn.Linear(256, 5))
  end, torch.randn(32, 1, 16, 16), torch.randint(1, 6, {32}), 3)
  check(not has(txt, "+gelu"), txt:sub(1, 3000))
  check(has(txt, "extern.matmul+bias "), "bias folded")
end)

test("relu before max_pool: training graphs move the relu after the pool, inference graphs fold it", function()
  torch.compiler.reset()
  local make = function()
    return nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
      nn.Linear(4 * 8 * 8, 5))
  end
  local x = torch.randn(8, 1, 16, 16)
  local txt = train_agree(make, x, torch.randint(1, 6, {8}), 3)
  check(not has(txt, "convolution+relu"), "training: the pool swap applies instead")
  check(has(txt, "extern.max_pool_local %") and has(txt, "unary.relu"), "relu after the pool")
  check(has(txt, "extern.max_pool_local_backward %"), "the compact pool's backward")
  torch.manual_seed(5)
  local m = make()
  txt = agree(function(t) return m(t) end, {x})
  check(has(txt, "extern.convolution+relu"), "inference: " .. txt:sub(1, 600))
end)

test("MOONTORCH_JIT_EPILOGUE=0 and MOONTORCH_JIT_REWRITE=0 keep the activation in a kernel", function()
  local code = [[
    local torch = require "torch"
    local nn, F = torch.nn, torch.nn.functional
    local conv, lin = nn.Conv2d(3, 8, 3), nn.Linear(784, 256)
    torch.no_grad(function()
      print(torch.compiler.explain(function(x) return F.relu(conv(x)) end, torch.randn(2, 3, 8, 8)))
      print(torch.compiler.explain(function(x) return F.gelu(lin(x)) end, torch.randn(128, 784)))
    end)
  ]]
  local dir = J.tmpdir()
  local on = J.child("XDG_CACHE_HOME=" .. dir, code)
  check(has(on, "extern.convolution+relu") and has(on, "extern.matmul+bias+gelu"), on:sub(1, 400))
  for _, env in ipairs({"MOONTORCH_JIT_EPILOGUE=0", "MOONTORCH_JIT_REWRITE=0"}) do
    local off = J.child("XDG_CACHE_HOME=" .. dir .. " " .. env, code)
    check(has(off, "extern.convolution ") and has(off, "unary.relu"), env .. ": " .. off:sub(1, 400))
    check(has(off, "extern.matmul ") and not has(off, "+bias"), env)
  end
  os.execute("rm -rf '" .. dir .. "'")
end)

test("compact max pools (window positions for indices) give eager's values and gradients: ties, NaN, -inf, big planes", function()
  torch.compiler.reset()
  local F = require "torch.nn.functional"
  torch.manual_seed(3)
  local cases = {
    {{4, 6, 14, 14}, {2, 2}}, -- stacked small planes
    {{2, 3, 9, 12}, {3, 3}},  -- rows the windows do not tile: one by one
    {{1, 2, 4, 2050}, {1, 2}}, -- rows longer than a tile
    {{2, 2, 8, 9}, {2, 3}},
  }
  for _, cs in ipairs(cases) do
    local shape, k = cs[1], cs[2]
    for _, dt in ipairs{torch.float32, torch.float64} do
      local function f(x, g)
        local y = F.max_pool2d(x, k)
        local gx = torch.autograd.grad({(y * g):sum()}, {x})[1]
        return y, gx
      end
      local c = torch.compile(f, {_quiet = true})
      local txt = torch.compiler.explain(f, torch.randn(shape, {dtype = dt, requires_grad = true}),
                                         torch.randn(F.max_pool2d(torch.randn(shape), k).shape, {dtype = dt}))
      check(txt:find("extern.max_pool_local_backward", 1, true), "compact form used for " .. table.concat(shape, "x"))
      for _ = 1, 2 do
        local x = (torch.randn(shape, {dtype = dt}) * 2):floor() -- ties in most windows
        x = x:masked_fill(torch.rand(shape):lt(0.03), 0 / 0):masked_fill(torch.rand(shape):lt(0.03), -1 / 0)
        x:requires_grad_(true)
        local g = torch.randn(F.max_pool2d(x:detach(), k).shape, {dtype = dt})
        local ye, ge = f(x, g)
        local yc, gc = c(x, g)
        check_close(yc, ye, {atol = 0, rtol = 0, equal_nan = true})
        check_close(gc, ge, {atol = 0, rtol = 0, equal_nan = true})
      end
    end
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
end)
