-- tests/cuda/test_cuda_jit.lua -- torch.compile on CUDA tensors: the
-- graphs run as CUDA kernels generated from the JIT's IR (jit/codegen_cuda.c)
-- and, once their calls settle, as CUDA graphs (jit/cudagraph.c). Compiled
-- results against eager CUDA results and the CPU on the same data:
-- elementwise chains (broadcast, strided, misaligned, tails, float16 and
-- bfloat16 storage, integers), reductions, softmax, log_softmax,
-- layer_norm, a compiled MLP training step, CUDA-graph replay (staged
-- inputs, in-place updates, results not overwritten) and the guards
-- (device, shape). Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; compiled CUDA graph tests skipped\n")
  return
end

local nn = require "torch.nn"
local optim = require "torch.optim"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/../jit/?.lua;" .. package.path
local J = require "jitlib"

local F32 = {atol = 2e-5, rtol = 2e-5, equal_nan = true}
local F16 = {atol = 2e-2, rtol = 2e-2}

local function cuda(t) return t:to("cuda") end

-- fn compiled (fullgraph) agrees with fn eagerly, on the GPU, over 4 calls
-- (capture, kernels, CUDA graph capture, replay); returns the compiled fn
local function same(fn, args, tol, what)
  local c = torch.compile(fn, {fullgraph = true})
  local want = {fn(table.unpack(args))}
  for call = 1, 4 do
    local got = {c(table.unpack(args))}
    for i = 1, #want do
      check(got[i].is_cuda, (what or "result") .. " stays on cuda")
      check_eq(got[i].dtype, want[i].dtype, what)
      check_close(got[i]:cpu():double(), want[i]:cpu():double(), tol or F32)
    end
  end
  return c
end

-- the text of torch.compiler.explain says the graph got CUDA kernels
local function explains_cuda(fn, ...)
  local text = torch.compiler.explain(fn, ...)
  check(text:match("generated CUDA C"), "explain shows CUDA C:\n" .. text:sub(1, 400))
  check(text:match("__global__ void __launch_bounds__%(256%) mtj_k0"), "a __global__ kernel of the JIT")
  return text
end

test("elementwise chains: gelu(x*w+b) with broadcast rows, flat chains, tails, strided and misaligned inputs", function()
  torch.compiler.reset()
  torch.manual_seed(1)
  local function gl(x, w, b) return torch.nn.functional.gelu(x * w + b) end
  local x, w, b = cuda(torch.randn(64, 96)), cuda(torch.randn(96)), cuda(torch.randn(96))
  same(gl, {x, w, b}, F32, "gelu(x*w+b)")
  -- against the CPU too
  local c = torch.compile(gl)
  check_close(c(x, w, b):cpu(), gl(x:cpu(), w:cpu(), b:cpu()), {atol = 1e-5, rtol = 1e-5})
  explains_cuda(gl, x, w, b)
  local function chain(a, y) return ((a * 2 + 1):relu() * y - a:exp() / (y:abs() + 1)):tanh() end
  for _, shape in ipairs {{7, 13}, {3}, {1000003}, {5, 1, 6}} do -- tails that are not vectors of 4
    local a, y = cuda(torch.randn(table.unpack(shape))), cuda(torch.randn(table.unpack(shape)))
    same(chain, {a, y}, F32, "chain " .. table.concat(shape, "x"))
  end
  -- strided (transposed) operand, broadcast of a column, a 0-dim operand
  local a = cuda(torch.randn(40, 24))
  same(chain, {a:t(), cuda(torch.randn(24, 1))}, F32, "transposed + column")
  same(function(p, q) return (p * q + q):sigmoid() end, {a, cuda(torch.tensor(0.5))}, F32, "0-dim")
  -- a misaligned input: a view one element into its storage (no vector loads)
  local big = cuda(torch.randn(4097))
  same(chain, {big:narrow(1, 2, 4096), cuda(torch.randn(4096))}, F32, "misaligned")
  -- number arguments as runtime scalars
  same(function(p, s) return (p * s + 1):relu() end, {a, 0.25}, F32, "scalar")
  check(torch.compiler.stats().compiled_calls > 0, "compiled calls")
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("float16 and bfloat16 storage, float64, integer and boolean chains", function()
  torch.compiler.reset()
  torch.manual_seed(2)
  local function f(x, w, b) return torch.nn.functional.gelu(x * w + b) * 0.5 + x:sigmoid() end
  for _, dt in ipairs {torch.float16, torch.bfloat16, torch.float64} do
    local x, w, b = torch.randn(33, 64):to(dt), torch.randn(64):to(dt), torch.randn(64):to(dt)
    local want = f(x:float(), w:float(), b:float())
    local c = same(f, {cuda(x), cuda(w), cuda(b)}, dt == torch.float64 and F32 or F16, tostring(dt))
    check_close(c(cuda(x), cuda(w), cuda(b)):cpu():float(), want, dt == torch.float64 and F32 or F16)
  end
  local xi, yi = cuda(torch.randint(-50, 50, {9, 31})):int(), cuda(torch.randint(1, 7, {31})):int()
  same(function(p, q) return (p * 3 + q) % q - p // q end, {xi, yi}, {atol = 0, rtol = 0}, "int32")
  same(function(p, q) return (p:abs() - q):clamp(-5, 5) + (p:lt(q)):int() end, {xi, yi}, {atol = 0, rtol = 0},
       "clamp/compare")
  same(function(p, q) return p:gt(q):logical_and(p:lt(10)) end, {xi, yi}, {atol = 0, rtol = 0}, "bool result")
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("reductions, softmax, log_softmax and layer_norm compile into row kernels", function()
  torch.compiler.reset()
  torch.manual_seed(3)
  for _, shape in ipairs {{6, 10}, {4, 3, 300}, {2, 1000}, {128, 1}} do
    local x = cuda(torch.randn(table.unpack(shape)))
    same(function(a) return a:sum(-1), a:mean(-1, true), a:amax(-1), a:amin(-1) end, {x}, {atol = 1e-4, rtol = 1e-4},
         "reduce " .. table.concat(shape, "x"))
    same(function(a) return a:softmax(-1), a:log_softmax(-1) end, {x}, F32, "softmax")
    same(function(a) return (a - a:mean(-1, true)):pow(2):sum(-1) end, {x}, {atol = 1e-4, rtol = 1e-4}, "variance")
  end
  local x = cuda(torch.randn(2, 100000))
  same(function(a) return a:sum(), a:amax() end, {x}, {atol = 1e-2, rtol = 1e-4}, "all elements")
  -- a whole-tensor reduction reading a broadcast operand (a strided load over two inner dims)
  same(function(a, b) return (a + b):pow(2):mean() end, {cuda(torch.randn(8, 4)), cuda(torch.randn(4))},
       {atol = 1e-5, rtol = 1e-5}, "mean of a broadcast sum")
  local xi = cuda(torch.randint(-9, 9, {5, 17}))
  same(function(a) return a:amax(-1), a:amin(-1), a:sum(-1) end, {xi}, {atol = 0, rtol = 0}, "int64 reductions")
  -- layer normalisation written out (one row kernel: mean, variance, normalise), then
  -- F.layer_norm where the eager op runs on CUDA (its capture runs it eagerly)
  local a, w, b = torch.randn(20, 48), torch.randn(48), torch.randn(48)
  local lnx = function(p, w_, b_)
    local d = p - p:mean(-1, true)
    return d / (d:pow(2):mean(-1, true) + 1e-5):sqrt() * w_ + b_
  end
  local ln = function(p, w_, b_) return torch.nn.functional.layer_norm(p, {48}, w_, b_, 1e-5) end
  local c = same(lnx, {cuda(a), cuda(w), cuda(b)}, {atol = 1e-4, rtol = 1e-4}, "layer norm")
  check_close(c(cuda(a), cuda(w), cuda(b)):cpu(), ln(a, w, b), {atol = 1e-4, rtol = 1e-4})
  local text = explains_cuda(lnx, cuda(a), cuda(w), cuda(b))
  -- the JIT's kernels are mtj_k<i> (the prelude's text, elementwise.cu, has kernels of its own under #if)
  check(select(2, text:gsub("__global__ void __launch_bounds__%(256%) mtj_k%d+", "")) == 1, "one kernel:\n" .. text)
  if pcall(ln, cuda(a), cuda(w), cuda(b)) then
    same(ln, {cuda(a), cuda(w), cuda(b)}, {atol = 1e-4, rtol = 1e-4}, "layer_norm")
  else
    io.write("note: layer_norm has no eager CUDA path yet; its compiled form is checked as written out\n")
  end
  same(function(p) return p:softmax(-1) end, {cuda(a):half()}, F16, "half softmax")
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("a compiled MLP training step (SGD with momentum, then Adam) on CUDA equals the eager step", function()
  for _, mk in ipairs {function(p) return optim.SGD(p, {lr = 0.05, momentum = 0.9}) end,
                       function(p) return optim.Adam(p, {lr = 1e-2}) end} do
    torch.compiler.reset()
    local function setup()
      local m, _, step = J.train_setup(function() return nn.Sequential(nn.Linear(12, 32), nn.GELU(),
                                                                   nn.Linear(32, 5)):cuda() end, mk, 7)
      return m, step
    end
    local me, se = setup()
    local mc, sc = setup()
    local c = torch.compile(sc)
    torch.manual_seed(8)
    for i = 1, 7 do
      local x, y = cuda(torch.randn(16, 12)), cuda(torch.randint(1, 6, {16}))
      local le, lc = se(x, y), c(x, y)
      check(lc.is_cuda, "loss on cuda")
      check_close(lc:cpu(), le:cpu(), {atol = 1e-5, rtol = 1e-4})
      local pe, pc = me:parameters(), mc:parameters()
      for k = 1, #pe do
        check_close(pc[k]:cpu(), pe[k]:cpu(), {atol = 1e-5, rtol = 1e-4})
        check_close(pc[k].grad:cpu(), pe[k].grad:cpu(), {atol = 1e-5, rtol = 1e-4})
      end
    end
    local s = torch.compiler.stats()
    check(s.compiled_calls >= 4, "compiled calls: " .. s.compiled_calls)
    check_eq(s.fallbacks, 0)
    check(s.cuda_graph_replays >= 1, "the step replays as a CUDA graph: " .. s.cuda_graph_replays)
  end
end)

test("a compiled AdamW step with clipping, an MSE loss and a changing learning rate on CUDA equals eager", function()
  -- AdamW's decay (1 - lr*wd) is host-scalar math on the runtime lr: it
  -- joins the CUDA graph as a scalar its kernels compute
  torch.compiler.reset()
  local function setup()
    torch.manual_seed(5)
    local m = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 4)):cuda()
    local opt = optim.AdamW(m:parameters(), {lr = 1e-2, weight_decay = 0.1})
    local function step(x, y)
      local loss = ((m(x) - y) ^ 2):mean()
      opt:zero_grad()
      loss:backward()
      nn.utils.clip_grad_norm_(m:parameters(), 0.5)
      opt:step()
      return loss
    end
    return m, opt, step
  end
  local me, oe, se = setup()
  local mc, oc, sc = setup()
  local c = torch.compile(sc)
  torch.manual_seed(9)
  for i = 1, 7 do
    for _, o in ipairs {oe, oc} do o.param_groups[1].lr = 1e-2 / i end
    local x, y = cuda(torch.randn(16, 12)), cuda(torch.randn(16, 4))
    local le, lc = se(x, y), c(x, y)
    check(lc.is_cuda, "loss on cuda")
    check_close(lc:cpu(), le:cpu(), {atol = 1e-5, rtol = 1e-4})
    local pe, pc = me:parameters(), mc:parameters()
    for k = 1, #pe do check_close(pc[k]:cpu(), pe[k]:cpu(), {atol = 1e-5, rtol = 1e-4}) end
  end
  local s = torch.compiler.stats()
  check(s.compiled_calls >= 4, "compiled calls: " .. s.compiled_calls)
  check_eq(s.fallbacks, 0)
end)

test("CUDA-graph replay: staged inputs, results not overwritten, in-place updates, shape changes", function()
  torch.compiler.reset()
  local f = torch.compile(function(x, w) return (x * w + 1):relu() end)
  local w = cuda(torch.randn(8))
  local outs, xs = {}, {}
  for i = 1, 10 do
    xs[i] = cuda(torch.randn(4, 8))
    outs[i] = f(xs[i], w)
  end
  local s = torch.compiler.stats()
  check_eq(s.cuda_graph_captures, 1)
  check_eq(s.cuda_graph_replays, 8)
  check_eq(s.cuda_graph_failures, 0)
  for i = 1, 10 do -- every call's result is its own (copies of the graph's buffers)
    check_close(outs[i]:cpu(), (xs[i]:cpu() * w:cpu() + 1):relu(), F32)
  end
  -- another shape runs the kernels (the graph keeps its sizes), then comes back
  local x6 = cuda(torch.randn(6, 8))
  check_close(f(x6, w):cpu(), (x6:cpu() * w:cpu() + 1):relu(), F32)
  local x4 = cuda(torch.randn(4, 8))
  check_close(f(x4, w):cpu(), (x4:cpu() * w:cpu() + 1):relu(), F32)
  check_eq(torch.compiler.stats().cuda_graph_replays, 9)
  -- a parameter updated in place (read in place by the graph) is seen by every replay
  for i = 1, 3 do
    w:mul_(0.5)
    check_close(f(x4, w):cpu(), (x4:cpu() * w:cpu() + 1):relu(), F32)
  end
  -- in-place updates of an argument are written back on each replay
  torch.compiler.reset()
  local g = torch.compile(function(acc, x) acc:add_(x * 2) return acc:sum(-1) end)
  local acc, ref = cuda(torch.zeros(3, 5)), torch.zeros(3, 5)
  for i = 1, 6 do
    local x = torch.randn(3, 5)
    ref:add_(x * 2)
    local r = g(acc, cuda(x))
    check_close(acc:cpu(), ref, F32)
    check_close(r:cpu(), ref:sum(-1), {atol = 1e-5, rtol = 1e-5})
  end
  check(torch.compiler.stats().cuda_graph_replays >= 3, "replays " .. torch.compiler.stats().cuda_graph_replays)
  -- a changing number argument (a runtime scalar baked into the graph) is never replayed stale
  torch.compiler.reset()
  local h = torch.compile(function(x, s) return x * s end)
  local x = cuda(torch.randn(5))
  for i = 1, 8 do
    local sv = (i % 3 == 0) and 2.5 or 1.5
    check_close(h(x, sv):cpu(), x:cpu() * sv, F32)
  end
end)

test("compiled forward and backward (autograd) on CUDA, replayed: gradients, retain_graph, saved results", function()
  torch.compiler.reset()
  torch.manual_seed(5)
  local w = cuda(torch.randn(4, 4)):requires_grad_()
  local we = w:detach():clone():requires_grad_()
  local c = torch.compile(function(x) return (x:matmul(w) * 0.5):exp() end)
  local x = cuda(torch.randn(2, 4))
  for i = 1, 5 do
    w.grad, we.grad = nil, nil
    local y = c(x)
    y:sum():backward()
    local ye = (x:matmul(we) * 0.5):exp()
    ye:sum():backward()
    check_close(w.grad:cpu(), we.grad:cpu(), {atol = 1e-5, rtol = 1e-5})
  end
  check(torch.compiler.stats().cuda_graph_replays >= 2, "replays " .. torch.compiler.stats().cuda_graph_replays)
  local y2 = c(x)
  y2:add_(1) -- exp saves its result: the backward must refuse, as eager autograd does
  check_error(function() y2:sum():backward() end, "modified by an in-place operation")
  local y3 = c(x)
  y3:sum():backward({retain_graph = true})
  y3:sum():backward()
end)

test("repeated layers give equal kernels, compiled once and each run with its own operands", function()
  torch.compiler.reset()
  torch.manual_seed(11)
  local layers = {}
  for i = 1, 4 do layers[i] = nn.Sequential(nn.LayerNorm(24), nn.Linear(24, 24), nn.GELU()):cuda() end
  local function f(x)
    for i = 1, 4 do x = x + layers[i](x) * (0.5 * i) end
    return x:softmax(-1)
  end
  same(f, {cuda(torch.randn(6, 24))}, {atol = 1e-5, rtol = 1e-5}, "4 residual blocks")
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("a compiled backward through selects and a permute keeps its gradients on the GPU", function()
  -- the select's backward scatters into zeros made at replay: on the gradient's device
  torch.compiler.reset()
  local x = cuda(torch.randn(2, 5, 3, 4)):requires_grad_()
  local xe = x:detach():clone():requires_grad_()
  local function f(a)
    local p = a:permute(3, 1, 4, 2)
    local l = (p[1] * p[2] + p[3]):pow(2):sum()
    l:backward()
    return l
  end
  local c = torch.compile(f)
  for _ = 1, 4 do
    x.grad, xe.grad = nil, nil
    c(x)
    f(xe)
    check(x.grad.is_cuda, "gradient on cuda")
    check_close(x.grad:cpu(), xe.grad:cpu(), {atol = 1e-5, rtol = 1e-5})
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("in-place writes through views of tensors made in the graph reach the result on CUDA (F.pad)", function()
  local F = require "torch.nn.functional"
  local t = cuda(torch.randn(2, 3, 6, 7))
  same(function(x)
    local o = torch.full({2, 3, 9, 9}, 0.5, {device = "cuda"})
    o:narrow(-2, 3, 6):narrow(-1, 2, 7):copy_(x * 2)
    o:select(2, 1):transpose(2, 3):narrow(2, 1, 2):fill_(-1)
    o:narrow(1, 2, 1):mul_(3)
    return o, o:sum(-1)
  end, {t}, F32, "writes through views")
  same(function(x) return F.pad(x, {1, 2, 3, 0}, "constant", 0.25) * 2 end, {t}, F32, "F.pad")
end)

test("guards: a compiled function recompiles for another device and another static shape", function()
  torch.compiler.reset()
  local f = torch.compile(function(x) return (x * 3):exp() - 1 end, {dynamic = false})
  local xc = torch.randn(8, 16)
  check_close(f(xc), (xc * 3):exp() - 1, F32)
  check_close(f(xc), (xc * 3):exp() - 1, F32)
  local xg = cuda(xc)
  local r = f(xg)
  check(r.is_cuda, "cuda result")
  check_close(r:cpu(), (xc * 3):exp() - 1, F32)
  check_close(f(xg):cpu(), (xc * 3):exp() - 1, F32)
  check_eq(torch.compiler.stats().recompiles, 1)
  local x2 = cuda(torch.randn(8, 32))
  check_close(f(x2):cpu(), (x2:cpu() * 3):exp() - 1, F32)
  check_close(f(x2):cpu(), (x2:cpu() * 3):exp() - 1, F32)
  check_eq(torch.compiler.stats().recompiles, 2)
  check(tostring(f):match("3 graph"), tostring(f))
  -- and the CPU graph still serves CPU calls
  check_close(f(xc), (xc * 3):exp() - 1, F32)
  check_eq(torch.compiler.stats().recompiles, 2)
  -- mixing devices inside one graph: the eager error, not a compiled one
  local m = torch.compile(function(a, b) return a + b end)
  local ok, err = pcall(m, cuda(torch.randn(3)), torch.randn(3))
  check(not ok and tostring(err):match("device"), tostring(err))
end)
