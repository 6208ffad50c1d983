-- bench/cuda_ops.lua -- CUDA figures: cuBLAS matmul 8192^3 in float32 (full
-- precision and TF32) and bfloat16 (TFLOP/s, median of 10 after warm-up),
-- and one training step (forward, backward, Adam) of a 3-layer MLP
-- (batch 256, 1024 -> 4096 -> 4096 -> 10, float32), in ms; a ResNet-style
-- conv2d (N=32, 64 -> 64 channels, 56x56, 3x3, padding 1) forward and
-- forward + backward (input and weight gradients) in float32, bfloat16 and
-- float16 (cuDNN). `cuda_ops.lua conv` runs only the conv rows.
-- `cuda_ops.lua poolnorm` runs only the pooling and batch-norm rows:
-- ResNet-like max_pool2d and avg_pool2d (3x3, stride 2, padding 1 on
-- 64x64x112x112) and batch_norm (training, 64x256x56x56), float32 and
-- bfloat16, each on our kernels (route native), on cuDNN (route cudnn)
-- and as selected (route auto), in ms.
-- Peer: bench/peers/cuda_ops.py (same arguments).

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms

local only = arg and arg[1]

local function conv_rows()
  local flops = 2 * 32 * 64 * 56 * 56 * 64 * 9
  for _, dt in ipairs{"float32", "bfloat16", "float16"} do
    torch.manual_seed(0)
    local x = torch.randn(32, 64, 56, 56, {device = "cuda"}):to(dt)
    local w = (torch.randn(64, 64, 3, 3, {device = "cuda"}) * 0.05):to(dt)
    local g = torch.randn(32, 64, 56, 56, {device = "cuda"}):to(dt)
    local o = {padding = 1}
    local fwd = time_ms(function() torch.conv2d(x, w, nil, o) end, 20)
    local fwd10 = time_ms(function() for _ = 1, 10 do torch.conv2d(x, w, nil, o) end end, 5) / 10
    local xr, wr = x:clone():requires_grad_(), w:clone():requires_grad_()
    local both = time_ms(function()
      xr.grad, wr.grad = nil, nil
      torch.conv2d(xr, wr, nil, o):backward(g)
    end, 20)
    print(("conv2d_resnet_%s fwd %.3f ms (%.1f TFLOP/s; %.3f ms each in a run of 10), fwd+bwd %.3f ms (%.1f TFLOP/s)")
      :format(dt, fwd, flops / fwd / 1e9, fwd10, both, 3 * flops / both / 1e9))
    print("  cuDNN algorithms: " .. torch.backends.cudnn.stats().last_algorithms)
  end
end

-- ms of fn under each pooling/batch-norm route: native, cudnn, auto
local function by_route(fn)
  local r = {}
  for _, route in ipairs{"native", "cudnn", "auto"} do
    torch._cudnn{route = route}
    r[#r + 1] = ("%s %.3f"):format(route, time_ms(fn, 20))
  end
  torch._cudnn{route = "auto"}
  return table.concat(r, ", ") .. " ms"
end

local function pool_norm_rows()
  local o = {stride = 2, padding = 1}
  for _, dt in ipairs{"float32", "bfloat16"} do
    torch.manual_seed(0)
    local x = torch.randn(64, 64, 112, 112, {device = "cuda"}):to(dt)
    local g = torch.randn(64, 64, 56, 56, {device = "cuda"}):to(dt)
    local xr = x:clone():requires_grad_()
    for _, kind in ipairs{"max", "avg"} do
      local f = kind == "max" and torch.max_pool2d or torch.avg_pool2d
      print(("%s_pool2d_%s fwd: %s"):format(kind, dt, by_route(function() f(x, 3, o) end)))
      print(("%s_pool2d_%s fwd+bwd: %s"):format(kind, dt, by_route(function()
        xr.grad = nil
        f(xr, 3, o):backward(g)
      end)))
    end
    x, g, xr = nil, nil, nil
    collectgarbage()
    local b = torch.randn(64, 256, 56, 56, {device = "cuda"}):to(dt)
    local gb = torch.randn(64, 256, 56, 56, {device = "cuda"}):to(dt)
    local w, bias = torch.randn(256, {device = "cuda"}), torch.randn(256, {device = "cuda"})
    local rm, rv = torch.zeros(256, {device = "cuda"}), torch.ones(256, {device = "cuda"})
    print(("batch_norm_%s train fwd: %s"):format(dt, by_route(function()
      torch.batch_norm(b, w, bias, rm, rv, true, 0.1, 1e-5)
    end)))
    print(("batch_norm_%s eval fwd: %s"):format(dt, by_route(function()
      torch.batch_norm(b, w, bias, rm, rv, false, 0.1, 1e-5)
    end)))
    local br, wr, biasr = b:clone():requires_grad_(), w:clone():requires_grad_(), bias:clone():requires_grad_()
    print(("batch_norm_%s train fwd+bwd: %s"):format(dt, by_route(function()
      br.grad, wr.grad, biasr.grad = nil, nil, nil
      torch.batch_norm(br, wr, biasr, rm, rv, true, 0.1, 1e-5):backward(gb)
    end)))
    b, gb, br = nil, nil, nil
    collectgarbage()
  end
  local s = torch.backends.cudnn.stats()
  print(("  cuDNN pools %d, norms %d, declined %d (%s)"):format(s.pools, s.norms, s.ops_declined, s.last_ops_declined))
end

if only == "conv" then
  conv_rows()
  return
end
if only == "poolnorm" then
  pool_norm_rows()
  return
end

local N = 8192
for _, case in ipairs{{"float32", "highest"}, {"float32", "high"}, {"bfloat16", "highest"}} do
  torch.set_float32_matmul_precision(case[2])
  local a = torch.randn(N, N, {device = "cuda"}):to(case[1])
  local b = torch.randn(N, N, {device = "cuda"}):to(case[1])
  local c
  local ms = time_ms(function() c = a:matmul(b) end, 10)
  print(("matmul_%s_%s %.1f TFLOP/s (%.2f ms)"):format(case[1], case[2], 2 * N ^ 3 / ms / 1e9, ms))
end
torch.set_float32_matmul_precision("highest")

-- The MLP training step; `cuda_ops.lua mlp` runs only these rows: the
-- default (cuBLASLt bias epilogues, fused Adam), each switched off, both
-- off (the path before them), and a linear + tanh-GELU forward (eager: one
-- Lt call and the GELU kernel; compiled: one Lt call).
local function mlp_rows(all)
  local nn, F = torch.nn, torch.nn.functional
  local variants = all and {{"", true, true}, {"_lt_off", false, true}, {"_unfused_adam", true, false},
                            {"_both_off", false, false}} or {{"", true, true}}
  for _, v in ipairs(variants) do
    torch._set_cublaslt_enabled(v[2])
    torch.manual_seed(0)
    local m = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10))
      :cuda()
    local opt = torch.optim.Adam(m:parameters(), {lr = 1e-3, fused = v[3]})
    local x, y = torch.randn(256, 1024, {device = "cuda"}), torch.randint(1, 11, {256}):cuda()
    local ms = time_ms(function()
      opt:zero_grad()
      F.cross_entropy(m(x), y):backward()
      opt:step()
    end, 20)
    print(("mlp_train_step%s %.3f ms"):format(v[1], ms))
  end
  torch._set_cublaslt_enabled(true)
  if not all then return end
  for _, dt in ipairs{"float32", "bfloat16"} do
    torch.manual_seed(0)
    local x = torch.randn(256, 1024, {device = "cuda"}):to(dt)
    local w, b = (torch.randn(4096, 1024, {device = "cuda"}) * 0.03):to(dt), torch.randn(4096, {device = "cuda"}):to(dt)
    local f = function(p, q, r) return F.gelu(F.linear(p, q, r), "tanh") end
    local c = torch.compile(f)
    local eager = time_ms(function() torch.no_grad(function() f(x, w, b) end) end, 50)
    local comp = dt == "float32" and time_ms(function() torch.no_grad(function() c(x, w, b) end) end, 50)
    torch._set_cublaslt_enabled(false)
    local off = time_ms(function() torch.no_grad(function() f(x, w, b) end) end, 50)
    torch._set_cublaslt_enabled(true)
    print(("linear_gelu_fwd_%s 256x1024x4096 eager %.3f ms (Lt off %.3f)%s"):format(dt, eager, off,
          comp and (", compiled %.3f ms"):format(comp) or ""))
  end
end

if only == "mlp" then
  mlp_rows(true)
  return
end
mlp_rows(false)

conv_rows()
pool_norm_rows()
