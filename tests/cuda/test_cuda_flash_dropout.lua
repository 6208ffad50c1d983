-- tests/cuda/test_cuda_flash_dropout.lua -- dropout in the CUDA flash
-- kernels: against the math backend drawing the same keep mask from the
-- same seed (forward and gradients, flashlib.lua), the keep rate, and the
-- recorded gradients under create_graph drawing the mask again. Skips
-- without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU flash attention tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local L = require "flashlib"
L.use({check = check, check_eq = check_eq})
local F = require("torch.nn").functional
local inputs, close, compare = L.inputs, L.close, L.compare

test("flash with dropout equals math drawing the same mask from the same seed, forward and backward", function()
  for _, dt in ipairs({torch.bfloat16, torch.float16}) do
    for _, c in ipairs({{L = 100, S = 77, E = 64}, {L = 128, S = 128, E = 128, causal = true},
                        {L = 33, S = 45, E = 64, mask = "add", H = 4, Hk = 2, gqa = true}}) do
      c.drop, c.grad = 0.3, true
      compare(dt, c)
    end
  end
end)

test("flash dropout keeps about 1 - p of the probabilities, each draw anew", function()
  local B, H, L, S, E, p = 2, 4, 256, 256, 64, 0.25
  local q = torch.zeros(B, H, L, E, {dtype = torch.bfloat16}):to("cuda")
  local v = torch.ones(B, H, S, E, {dtype = torch.bfloat16}):to("cuda")
  -- uniform attention: each output = (kept keys / S) / (1 - p)
  local y1 = F.scaled_dot_product_attention(q, q, v, {dropout_p = p})
  local y2 = F.scaled_dot_product_attention(q, q, v, {dropout_p = p})
  local rate = (y1:float():mean() * (1 - p)):item()
  check(math.abs(rate - (1 - p)) < 0.01, ("keep rate %.4f, want %.2f"):format(rate, 1 - p))
  check(not torch.equal(y1, y2), "two calls draw different masks")
end)

test("flash dropout under create_graph draws the forward's mask again (recorded math gradients)", function()
  local x = inputs(torch.bfloat16, 1, 2, 2, 40, 50, 64, true)
  local g = torch.randn(1, 2, 40, 64):to(torch.bfloat16):to("cuda")
  torch.manual_seed(11)
  local y = F.scaled_dot_product_attention(x[1], x[2], x[3], {dropout_p = 0.4})
  local a = torch.autograd.grad({y}, {x[1], x[2], x[3]}, {grad_outputs = {g}, retain_graph = true})
  local b = torch.autograd.grad({y}, {x[1], x[2], x[3]}, {grad_outputs = {g}, create_graph = true})
  for i, n in ipairs({"dq", "dk", "dv"}) do close(b[i], a[i], n .. " recorded vs kernel", 2e-2) end
end)
