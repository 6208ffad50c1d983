-- tests/cuda/test_vision_models.lua -- torch.vision.models on CUDA against
-- the CPU: the same seeded weights give the same logits (eval, float32), a
-- train-mode step (dropout, stochastic depth, batch statistics) runs and
-- gets gradients. Skips without a GPU; the torchvision round trip on the GPU
-- is tests/ref/vision_models_gpu.py.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU vision model tests skipped\n")
  return
end

local M = torch.vision.models

-- max |g - c| <= 1e-4 * max(1, max |c|) (cuDNN's algorithms sum in other orders)
local function close(what, g, c)
  local scale = math.max(1, c:abs():max():item())
  local d = (g:cpu() - c):abs():max():item()
  check(d <= 1e-4 * scale, ("%s: max difference %.3g (scale %.3g)"):format(what, d, scale))
end

for _, spec in ipairs{{"resnet18", {}, 64}, {"mobilenet_v3_small", {}, 64}, {"efficientnet_b0", {}, 64},
                      {"vit_b_16", {image_size = 64}, 64}, {"convnext_tiny", {}, 64}} do
  local name, opts, size = spec[1], spec[2], spec[3]
  test(name .. " gives the CPU's logits on CUDA", function()
    torch.manual_seed(3)
    local m = M.get_model(name, opts):eval()
    local x = torch.randn(2, 3, size, size)
    local want = torch.no_grad(function() return m(x) end)
    m:cuda()
    local got = torch.no_grad(function() return m(x:cuda()) end)
    check_eq(got.device, "cuda:0")
    close(name, got, want)
  end)
end

test("a training step on CUDA: dropout and stochastic depth run, every parameter gets a gradient", function()
  torch.manual_seed(4)
  local m = M.efficientnet_b0{num_classes = 7, stochastic_depth_prob = 0.5}:cuda():train()
  local x = torch.randn(2, 3, 64, 64, {device = "cuda"})
  local y = m(x)
  F.cross_entropy(y, torch.tensor({1, 7}, {dtype = torch.int64, device = "cuda"})):backward()
  for name, p in m:named_parameters() do check(p.grad ~= nil, name .. " has no gradient") end
  local a = torch.no_grad(function() return m(x) end)
  local b = torch.no_grad(function() return m(x) end)
  check((a - b):abs():max():item() > 0, "train mode is random")
end)
