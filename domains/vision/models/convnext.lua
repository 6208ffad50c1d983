-- torch.vision.models.convnext -- ConvNeXt tiny/small/base/large
-- (torchvision.models.convnext): 7x7 depthwise convolutions, channels-last
-- LayerNorm and MLP, a learned per-channel layer scale and row-wise
-- stochastic depth; torchvision's module names (features.S.B.block.M,
-- features.S.B.layer_scale, classifier.2).
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"
local U = require "torch.vision.models._utils"

local Module, Parameter = nn.Module, nn.Parameter
local C = {}

local LayerNorm2d = nn.LayerNorm:extend("LayerNorm2d")
-- LayerNorm2d(num_channels[, eps=1e-5, ...]): nn.LayerNorm over the channels
-- of an N x C x H x W tensor (dim 2).
function LayerNorm2d:forward(x)
  return nn.LayerNorm.forward(self, x:permute(1, 3, 4, 2)):permute(1, 4, 2, 3)
end
C.LayerNorm2d = LayerNorm2d

local function ln2d(c) return LayerNorm2d(c, {eps = 1e-6}) end
local function ln(c) return nn.LayerNorm(c, {eps = 1e-6}) end

local CNBlock = Module:extend("CNBlock")
-- CNBlock(dim, layer_scale, stochastic_depth_prob[, norm_layer=LayerNorm(eps=1e-6)]):
-- x + stochastic_depth(layer_scale * block(x)), block = depthwise 7x7 ->
-- channels last -> norm -> Linear(dim, 4 dim) -> GELU -> Linear -> channels first.
function CNBlock:__init(dim, layer_scale, sd_prob, norm_layer)
  norm_layer = norm_layer or ln
  self.block = U.seq{nn.Conv2d(dim, dim, 7, {padding = 3, groups = dim}), misc.Permute({1, 3, 4, 2}),
                     norm_layer(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                     misc.Permute({1, 4, 2, 3})}
  self.layer_scale = Parameter(torch.ones(dim, 1, 1) * layer_scale)
  self.stochastic_depth = misc.StochasticDepth(sd_prob, "row")
end
function CNBlock:forward(x)
  return self.stochastic_depth(self.layer_scale * self.block(x)) + x
end
C.CNBlock = CNBlock

-- CNBlockConfig(input_channels, out_channels (false: the last stage), num_layers)
function C.CNBlockConfig(input_channels, out_channels, num_layers)
  return {input_channels = input_channels, out_channels = out_channels or false, num_layers = num_layers}
end

local ConvNeXt = Module:extend("ConvNeXt")
-- ConvNeXt(block_setting[, stochastic_depth_prob=0, layer_scale=1e-6,
-- num_classes=1000, block=CNBlock, norm_layer=LayerNorm2d(eps=1e-6)]): a
-- 4x4 stride-4 stem, stages of blocks with 2x2 stride-2 downsampling between.
function ConvNeXt:__init(block_setting, ...)
  local fname = "torch.vision.models.ConvNeXt"
  local o = U.nn_args(fname, {"stochastic_depth_prob", "layer_scale", "num_classes", "block", "norm_layer"},
                      {stochastic_depth_prob = 0.0, layer_scale = 1e-6, num_classes = 1000}, ...)
  if type(block_setting) ~= "table" or #block_setting == 0 then error(fname .. ": the block_setting is empty", 2) end
  for i, c in ipairs(block_setting) do
    if type(c) ~= "table" or not c.input_channels or not c.num_layers then
      error(("%s: block_setting[%d] is not a CNBlockConfig"):format(fname, i), 2)
    end
  end
  U.positive(fname, "num_classes", o.num_classes)
  local block, norm = o.block or CNBlock, o.norm_layer or ln2d
  local layers = {misc.Conv2dNormActivation(3, block_setting[1].input_channels, {kernel_size = 4, stride = 4,
                  padding = 0, norm_layer = norm, activation_layer = false, bias = true})}
  local total, id = 0, 0
  for _, c in ipairs(block_setting) do total = total + c.num_layers end
  for _, c in ipairs(block_setting) do
    local stage = {}
    for _ = 1, c.num_layers do
      stage[#stage + 1] = block(c.input_channels, o.layer_scale, o.stochastic_depth_prob * id / (total - 1.0))
      id = id + 1
    end
    layers[#layers + 1] = U.seq(stage)
    if c.out_channels then
      layers[#layers + 1] = U.seq{norm(c.input_channels), nn.Conv2d(c.input_channels, c.out_channels, 2, {stride = 2})}
    end
  end
  self.features = U.seq(layers)
  self.avgpool = nn.AdaptiveAvgPool2d(1)
  local last = block_setting[#block_setting]
  local last_out = last.out_channels or last.input_channels
  self.classifier = U.seq{norm(last_out), nn.Flatten(2), nn.Linear(last_out, o.num_classes)}
  for _, m in ipairs(self:modules()) do
    local name = m:_get_name()
    if name == "Conv2d" or name == "Linear" then
      nn.init.trunc_normal_(m.weight, {std = 0.02})
      if m.bias ~= nil then nn.init.zeros_(m.bias) end
    end
  end
end
function ConvNeXt:forward(x)
  U.check_image("ConvNeXt", x, 3)
  return self.classifier(self.avgpool(self.features(x)))
end
C.ConvNeXt = ConvNeXt

local SETTINGS = {
  convnext_tiny = {{96, 192, 3}, {192, 384, 3}, {384, 768, 9}, {768, false, 3}, sd = 0.1},
  convnext_small = {{96, 192, 3}, {192, 384, 3}, {384, 768, 27}, {768, false, 3}, sd = 0.4},
  convnext_base = {{128, 256, 3}, {256, 512, 3}, {512, 1024, 27}, {1024, false, 3}, sd = 0.5},
  convnext_large = {{192, 384, 3}, {384, 768, 3}, {768, 1536, 27}, {1536, false, 3}, sd = 0.5},
}

local OPTS = "stochastic_depth_prob layer_scale num_classes block norm_layer"

-- convnext_*([{weights=, num_classes=1000, stochastic_depth_prob=0.1 (tiny)
-- / 0.4 (small) / 0.5, layer_scale=1e-6, block=, norm_layer=}])
for name, rows in pairs(SETTINGS) do
  C[name] = function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS, {stochastic_depth_prob = rows.sd})
    local setting = {}
    for i, r in ipairs(rows) do setting[i] = C.CNBlockConfig(r[1], r[2], r[3]) end
    local model = ConvNeXt(setting, {stochastic_depth_prob = o.stochastic_depth_prob, layer_scale = o.layer_scale,
                           num_classes = o.num_classes, block = o.block, norm_layer = o.norm_layer})
    return U.load_weights(fname, model, o.weights)
  end
end

return C
