-- tests/domains/vision/models_interop.lua -- moontorch's side of the
-- round trip of tests/ref/vision_models_gpu.py (see its header for the
-- three commands):
--   build/moontorch tests/domains/vision/models_interop.lua DIR [DEVICE=cpu]
-- For resnet18, mobilenet_v3_small and vit_b_16: loads DIR/NAME.safetensors
-- (torchvision's weights) with weights=, runs DIR/NAME.io.safetensors' x on
-- DEVICE and prints the max difference to torchvision's logits; then builds
-- the model with moontorch's own seeded init (constant parameters refilled,
-- BatchNorm statistics drawn), runs x and writes NAME.ours.safetensors (state
-- dict), NAME.ours_in.safetensors (x) and NAME.ours_y.safetensors (logits).
-- Exits 1 when a difference exceeds 1e-4 times max(1, largest |logit|).
local torch = require "torch"
local M = torch.vision.models

local dir, device = arg[1], arg[2] or "cpu"
if not dir then
  io.stderr:write("usage: moontorch tests/domains/vision/models_interop.lua DIR [cpu|cuda]\n")
  os.exit(2)
end

-- constant parameters made random, BatchNorm statistics drawn (as models_ref.py's randomize)
local function randomize(m)
  torch.no_grad(function()
    for name, p in m:named_parameters() do
      local flat = p:flatten()
      if p:numel() > 0 and flat:eq(flat[1]):all():item() then
        if name:match("weight$") and p:dim() == 1 then p:uniform_(0.5, 1.5) else p:normal_(0, 0.1) end
      end
    end
    for name, b in m:named_buffers() do
      if name:match("running_mean$") then b:uniform_(-0.1, 0.1)
      elseif name:match("running_var$") then b:uniform_(0.5, 1.5) end
    end
  end)
end

local failed = false
for _, name in ipairs{"resnet18", "mobilenet_v3_small", "vit_b_16"} do
  local io_ = torch.load(dir .. "/" .. name .. ".io.safetensors")
  local m = M.get_model(name, {weights = dir .. "/" .. name .. ".safetensors"}):eval():to(device)
  local y = torch.no_grad(function() return m(io_.x:to(device)) end):cpu()
  local diff, scale = (y - io_.y):abs():max():item(), math.max(1, io_.y:abs():max():item())
  local ok = diff <= 1e-4 * scale
  failed = failed or not ok
  print(("%s (torchvision -> moontorch, %s) max|dlogit|=%.3g (scale %.3g) %s"):format(name, device, diff, scale,
        ok and "ok" or "FAIL"))
  torch.manual_seed(1)
  local ours = M.get_model(name):eval()
  randomize(ours)
  torch.save(ours:state_dict(), dir .. "/" .. name .. ".ours.safetensors")
  ours:to(device)
  local yo = torch.no_grad(function() return ours(io_.x:to(device)) end):cpu()
  torch.save({x = io_.x}, dir .. "/" .. name .. ".ours_in.safetensors")
  torch.save({y = yo}, dir .. "/" .. name .. ".ours_y.safetensors")
end
if failed then os.exit(1) end
