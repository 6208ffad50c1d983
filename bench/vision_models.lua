-- bench/vision_models.lua -- inference of torch.vision.models on the CPU:
-- resnet50, mobilenet_v3_small and vit_b_16, batch 8 x 3 x 224 x 224,
-- eval mode under no_grad (seeded random weights; logits `<close>`d).
-- Extra column: images per second. Peer: bench/peers/vision_models.py.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
if only == "all" then only = nil end

for _, name in ipairs{"resnet50", "mobilenet_v3_small", "vit_b_16"} do
  local row = name .. "_b8_fwd"
  if not only or only == row then
    torch.manual_seed(0)
    local m = torch.vision.models.get_model(name):eval()
    local x = torch.randn(8, 3, 224, 224)
    local t = torch.no_grad(function()
      return B.time(function() local _ <close> = m(x) end, 1, 3)
    end)
    B.report(row, t, 8 / t, "img/s")
  end
end
