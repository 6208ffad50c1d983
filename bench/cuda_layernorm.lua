-- bench/cuda_layernorm.lua -- layer norm on the GPU at the char GPT's shape
-- (16384 rows of 384: x of 64x256x384, weight and bias of 384), float32 and
-- bfloat16: forward (no grad), the backward op alone (input, weight and bias
-- gradients from saved statistics) and forward + backward through autograd,
-- ms per call (CUDA events around 20 calls, median of 15), the bandwidth
-- that means (bytes of x, y, dy, dx), and the host's us per call (20 calls
-- sent without waiting: where it is near the ms, the host bounds the row). Runs the PyTorch peer
-- (bench/peers/cuda_layernorm.py, same rows) when its Python is there
-- ($PEER_PYTHON, default /opt/torch/.venv/bin/python) and prints both and
-- the ratio ours / PyTorch (below 1: we are faster).
package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local torch = require "torch"
if not torch.cuda.is_available() then print("cuda_layernorm: no CUDA GPU here; skipped") return end
local time_ms = require("common").cuda_ms

local R, D = 16384, 384
local ours, host, order = {}, {}, {}
local function row(name, fn, bytes)
  ours[name] = time_ms(fn, 15, 20)
  torch.cuda.synchronize()
  local t0 = torch.time()
  for _ = 1, 20 do fn() end
  host[name] = (torch.time() - t0) / 20 * 1e6
  torch.cuda.synchronize()
  order[#order + 1] = {name, bytes}
end

for _, dt in ipairs{"float32", "bfloat16"} do
  torch.manual_seed(0)
  local el = dt == "float32" and 4 or 2
  local x = torch.randn(64, 256, D, {device = "cuda"}):to(dt)
  local g = torch.randn(64, 256, D, {device = "cuda"}):to(dt)
  local w, b = torch.randn(D, {device = "cuda"}):to(dt), torch.randn(D, {device = "cuda"}):to(dt) -- as the peer's
  row("layer_norm_" .. dt .. " fwd", function() torch.layer_norm(x, {D}, w, b, 1e-5) end, 2 * R * D * el)
  local _, m, r = torch.layer_norm(x, {D}, w, b, 1e-5)
  row("layer_norm_" .. dt .. " bwd", function() torch._backward.layer_norm(g, x, {D}, m, r, w) end, 3 * R * D * el)
  local xr, wr, br = x:clone():requires_grad_(), w:clone():requires_grad_(), b:clone():requires_grad_()
  row("layer_norm_" .. dt .. " fwd+bwd", function()
    xr.grad, wr.grad, br.grad = nil, nil, nil
    torch.layer_norm(xr, {D}, wr, br, 1e-5):backward(g)
  end, 5 * R * D * el)
end

local peer = {}
local py = os.getenv("PEER_PYTHON") or "/opt/torch/.venv/bin/python"
local dir = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench"
local f = io.open(py) and io.popen(py .. " " .. dir .. "/peers/cuda_layernorm.py 2>&1")
if f then
  for line in f:lines() do
    local name, ms = line:match("^peer (.-) ([%d.]+) ms")
    if name then peer[name] = tonumber(ms) else print("peer: " .. line) end
  end
  f:close()
end
print(("%-30s %10s %8s %12s %12s %8s"):format("row (16384x384)", "ours ms", "GB/s", "host us/call", "PyTorch ms",
                                             "ratio"))
for _, o in ipairs(order) do
  local name, ms, p = o[1], ours[o[1]], peer[o[1]]
  print(("%-30s %10.4f %8.0f %12.1f %12s %8s"):format(name, ms, o[2] / ms / 1e6, host[name],
                                                      p and ("%.4f"):format(p) or "-", p and ("%.2f"):format(ms / p) or "-"))
end
