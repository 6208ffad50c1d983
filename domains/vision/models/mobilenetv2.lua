-- torch.vision.models.mobilenetv2 -- MobileNet V2 (torchvision.models.
-- mobilenetv2): inverted residual blocks of Conv2dNormActivation layers with
-- ReLU6, torchvision's module names (features.N.conv.M, classifier.1).
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"
local U = require "torch.vision.models._utils"

local Module = nn.Module
local CNA = misc.Conv2dNormActivation
local V2 = {}

local InvertedResidual = Module:extend("InvertedResidual")
-- InvertedResidual(inp, oup, stride, expand_ratio[, norm_layer=nn.BatchNorm2d]):
-- 1x1 expansion (unless expand_ratio is 1), depthwise 3x3, linear 1x1
-- projection; the input is added back when stride is 1 and inp == oup.
function InvertedResidual:__init(inp, oup, stride, expand_ratio, norm_layer)
  if stride ~= 1 and stride ~= 2 then
    error("torch.vision.models.mobilenetv2.InvertedResidual: stride should be 1 or 2, got " .. tostring(stride), 2)
  end
  norm_layer = norm_layer or nn.BatchNorm2d
  local hidden = U.round(inp * expand_ratio)
  self.stride = stride
  self.use_res_connect = stride == 1 and inp == oup
  local layers = {}
  if expand_ratio ~= 1 then
    layers[#layers + 1] = CNA(inp, hidden, {kernel_size = 1, norm_layer = norm_layer, activation_layer = nn.ReLU6})
  end
  layers[#layers + 1] = CNA(hidden, hidden, {stride = stride, groups = hidden, norm_layer = norm_layer,
                            activation_layer = nn.ReLU6})
  layers[#layers + 1] = nn.Conv2d(hidden, oup, 1, {bias = false})
  layers[#layers + 1] = norm_layer(oup)
  self.conv = U.seq(layers)
  self.out_channels = oup
end
function InvertedResidual:forward(x)
  if self.use_res_connect then return x + self.conv(x) end
  return self.conv(x)
end
V2.InvertedResidual = InvertedResidual

local SETTING = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                 {6, 320, 1, 1}}

local MobileNetV2 = Module:extend("MobileNetV2")
local ARGS = {"num_classes", "width_mult", "inverted_residual_setting", "round_nearest", "block", "norm_layer", "dropout"}

-- MobileNetV2([num_classes=1000, width_mult=1, inverted_residual_setting
-- (rows {t, c, n, s}), round_nearest=8, block=InvertedResidual,
-- norm_layer=nn.BatchNorm2d, dropout=0.2])
function MobileNetV2:__init(...)
  local fname = "torch.vision.models.MobileNetV2"
  local o = U.nn_args(fname, ARGS, {num_classes = 1000, width_mult = 1.0, round_nearest = 8, dropout = 0.2}, ...)
  U.positive(fname, "num_classes", o.num_classes)
  local block, norm = o.block or InvertedResidual, o.norm_layer or nn.BatchNorm2d
  local setting = o.inverted_residual_setting or SETTING
  if type(setting) ~= "table" or #setting == 0 or type(setting[1]) ~= "table" or #setting[1] ~= 4 then
    error(fname .. ": inverted_residual_setting should be a non-empty list of 4-element lists", 2)
  end
  local input_channel = U.make_divisible(32 * o.width_mult, o.round_nearest)
  self.last_channel = U.make_divisible(1280 * math.max(1.0, o.width_mult), o.round_nearest)
  local features = {CNA(3, input_channel, {stride = 2, norm_layer = norm, activation_layer = nn.ReLU6})}
  for _, row in ipairs(setting) do
    local t, c, n, s = row[1], row[2], row[3], row[4]
    local output_channel = U.make_divisible(c * o.width_mult, o.round_nearest)
    for i = 1, n do
      features[#features + 1] = block(input_channel, output_channel, i == 1 and s or 1, t, norm)
      input_channel = output_channel
    end
  end
  features[#features + 1] = CNA(input_channel, self.last_channel, {kernel_size = 1, norm_layer = norm,
                                activation_layer = nn.ReLU6})
  self.features = U.seq(features)
  self.classifier = U.seq{nn.Dropout(o.dropout), nn.Linear(self.last_channel, o.num_classes)}
  U.conv_init(self, 0.01)
end
function MobileNetV2:forward(x)
  U.check_image("MobileNetV2", x, 3)
  x = torch.adaptive_avg_pool2d(self.features(x), {1, 1})
  return self.classifier(x:flatten(2))
end
V2.MobileNetV2 = MobileNetV2

-- mobilenet_v2([{weights=, num_classes=1000, width_mult=1, dropout=0.2, ...}])
function V2.mobilenet_v2(opts)
  local fname = "torch.vision.models.mobilenet_v2"
  local o = U.options(fname, opts, "num_classes width_mult inverted_residual_setting round_nearest block norm_layer "
                      .. "dropout")
  local model = MobileNetV2({num_classes = o.num_classes, width_mult = o.width_mult,
                             inverted_residual_setting = o.inverted_residual_setting, round_nearest = o.round_nearest,
                             block = o.block, norm_layer = o.norm_layer, dropout = o.dropout})
  return U.load_weights(fname, model, o.weights)
end

return V2
