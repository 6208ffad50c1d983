-- bench/jit.lua -- the JIT against PyTorch eager: gelu(x * w + b) on 4M
-- floats compiled (GB/s next to the copy bandwidth of the same run; 4M
-- floats in and out, 32 MB, stay in a 32 MB L3, so the 16M rows repeat both
-- where DRAM bandwidth is the limit),
-- layer_norm and softmax forward on 4096x1024 compiled, and the cold compile
-- and warm (disk cache) start of the gelu graph, measured in child processes
-- with a fresh cache directory. Results are `<close>`d, so their memory is
-- back in the allocator before the next call (as PyTorch's refcounting does
-- for its side) instead of waiting for Lua's collector: otherwise each call
-- writes into another, cache-cold 16 MB block.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

local R, C = 4096, 1024
local N = R * C
local x, w, b = torch.randn(R, C), torch.randn(C), torch.randn(C)

if want("jit_copy4M") then
  local out = torch.empty(R, C)
  local s = B.time(function() out:copy_(x) end, 20)
  B.report("jit_copy4M", s, 2 * 4 * N / s / 1e9, "GB/s")
end

local function gelu_fn(a, g, h) return (a * g + h):gelu() end
if want("jit_gelu4M") then
  local f = torch.compile(gelu_fn, {fullgraph = true})
  f(x, w, b)
  local s = B.time(function() local _ <close> = f(x, w, b) end, 20)
  B.report("jit_gelu4M", s, 2 * 4 * N / s / 1e9, "GB/s")
end
if want("jit_copy16M") or want("jit_gelu16M") then
  local x16, out = torch.randn(4 * R, C), torch.empty(4 * R, C)
  if want("jit_copy16M") then
    local s = B.time(function() out:copy_(x16) end, 5)
    B.report("jit_copy16M", s, 2 * 4 * 4 * N / s / 1e9, "GB/s")
  end
  if want("jit_gelu16M") then
    local f = torch.compile(gelu_fn, {fullgraph = true})
    f(x16, w, b)
    local s = B.time(function() local _ <close> = f(x16, w, b) end, 5)
    B.report("jit_gelu16M", s, 2 * 4 * 4 * N / s / 1e9, "GB/s")
  end
end
if want("jit_gelu4M_eager") then
  local s = B.time(function() local _ <close> = gelu_fn(x, w, b) end, 10)
  B.report("jit_gelu4M_eager", s, 2 * 4 * N / s / 1e9, "GB/s")
end
if want("jit_layer_norm4096x1024") then
  local f = torch.compile(function(a, g, h) return (torch.layer_norm(a, {C}, g, h)) end, {fullgraph = true})
  f(x, w, b)
  local s = B.time(function() local _ <close> = f(x, w, b) end, 20)
  B.report("jit_layer_norm4096x1024", s, 2 * 4 * N / s / 1e9, "GB/s")
end
if want("jit_softmax4096x1024") then
  local f = torch.compile(function(a) return a:softmax(-1) end, {fullgraph = true})
  f(x)
  local s = B.time(function() local _ <close> = f(x) end, 20)
  B.report("jit_softmax4096x1024", s, 2 * 4 * N / s / 1e9, "GB/s")
end

-- compile latency: a child process times the first call (capture + compile,
-- minus one eager run of the same function) with an empty cache, then again
-- with the cache the first child filled (a warm start from disk). The inputs
-- are 8x1024 (sizes are symbolic: the same graph and kernel as 4096x1024),
-- so the eager part is microseconds and its noise does not hide the rest.
if want("jit_cold_compile") or want("jit_warm_start") then
  local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or "build/moontorch"
  local dir = io.popen("mktemp -d /tmp/mt-jit-bench.XXXXXX"):read("l")
  local code = [[
    local torch = require "torch"
    local x, w, b = torch.randn(8, 1024), torch.randn(1024), torch.randn(1024)
    local fn = function(a, g, h) return (a * g + h):gelu() end
    for _ = 1, 3 do fn(x, w, b) end
    local t0 = torch.time(); fn(x, w, b); local eager = torch.time() - t0
    local f = torch.compile(fn)
    t0 = torch.time(); f(x, w, b); local first = torch.time() - t0
    print(string.format("JIT %.9g", math.max(first - eager, 1e-6)))
  ]]
  local src = os.tmpname()
  local h = io.open(src, "w"); h:write(code); h:close()
  local function run()
    local p = io.popen("XDG_CACHE_HOME=" .. dir .. " '" .. exe .. "' " .. src)
    local out = p:read("a"); p:close()
    return tonumber(out:match("JIT (%S+)"))
  end
  local cold = run()
  local warm = {}
  for i = 1, 5 do warm[i] = run() end
  table.sort(warm)
  if want("jit_cold_compile") and cold then B.report("jit_cold_compile", cold) end
  if want("jit_warm_start") and warm[3] then B.report("jit_warm_start", warm[3]) end
  os.remove(src)
  os.execute("rm -rf '" .. dir .. "'")
end

-- epilogues (jit/rewrite.c): the Fashion-MNIST CNN's second conv (+ bias +
-- relu) and its first linear layer (64x3136 @ 3136x128 + bias + relu), and an
-- MLP layer (128x784 @ 784x256 + bias + relu), compiled for inference with
-- the bias and relu folded into the library call, against the same graphs
-- with MOONTORCH_JIT_EPILOGUE=0 (a fused kernel after the call). The peer
-- column (SELFPEER) is the latter, timed in a child process; rounds of the
-- two alternate so that a busy machine disturbs both alike.
local EPI_CODE = [[
  local torch = require "torch"
  local nn, F = torch.nn, torch.nn.functional
  local name = ...
  torch.manual_seed(0)
  local m, x
  if name == "jit_epi_conv_relu" then
    m, x = nn.Conv2d(32, 64, 3, {padding = 1}), torch.randn(64, 32, 14, 14)
  elseif name == "jit_epi_linear_relu" then
    m, x = nn.Linear(3136, 128), torch.randn(64, 3136)
  else
    m, x = nn.Linear(784, 256), torch.randn(128, 784)
  end
  local f = torch.compile(function(t) return F.relu(m(t)) end)
  local min = os.getenv("BENCH_STAT") == "min" -- the fastest single call instead of the median batch
  return torch.no_grad(function()
    for _ = 1, 20 do local _ <close> = f(x) end
    local ts, best = {}, math.huge
    for r = 1, 5 do
      local t0 = torch.time()
      for _ = 1, 40 do
        local t1 = torch.time()
        local _ <close> = f(x)
        best = math.min(best, torch.time() - t1)
      end
      ts[r] = (torch.time() - t0) / 40
    end
    table.sort(ts)
    return min and best or ts[3]
  end)
]]
for _, name in ipairs({"jit_epi_conv_relu", "jit_epi_linear_relu", "jit_epi_mlp_relu"}) do
  if want(name) then
    local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or "build/moontorch"
    local src = os.tmpname()
    local h = io.open(src, "w")
    h:write("print(string.format('T %.9g', (function(...) " .. EPI_CODE .. " end)(...)))")
    h:close()
    local ours, peer = {}, {}
    for r = 1, 5 do
      ours[r] = load(EPI_CODE)(name)
      local p = io.popen("MOONTORCH_JIT_EPILOGUE=0 '" .. exe .. "' " .. src .. " " .. name)
      peer[r] = tonumber(p:read("a"):match("T (%S+)"))
      p:close()
    end
    os.remove(src)
    table.sort(ours)
    table.sort(peer)
    B.report(name, ours[3])
    if peer[3] then print(("SELFPEER %s %.9g"):format(name, peer[3])) end
  end
end
