-- torch.vision.models.mobilenetv3 -- MobileNet V3 large and small
-- (torchvision.models.mobilenetv3): inverted residual blocks with optional
-- squeeze-excitation (Hardsigmoid) and Hardswish, BatchNorm eps 1e-3 and
-- momentum 0.01, torchvision's module names (features.N.block.M).
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"
local U = require "torch.vision.models._utils"

local Module = nn.Module
local CNA = misc.Conv2dNormActivation
local V3 = {}

local function adjust(c, width_mult) return U.make_divisible(c * width_mult, 8) end

-- InvertedResidualConfig(input_channels, kernel, expanded_channels,
-- out_channels, use_se, activation ('RE' | 'HS'), stride, dilation,
-- width_mult) -> a plain table with the channels rounded by width_mult.
function V3.InvertedResidualConfig(cin, kernel, expanded, cout, use_se, activation, stride, dilation, width_mult)
  return {input_channels = adjust(cin, width_mult), kernel = kernel, expanded_channels = adjust(expanded, width_mult),
          out_channels = adjust(cout, width_mult), use_se = use_se, use_hs = activation == "HS", stride = stride,
          dilation = dilation}
end

local function se_layer(cin, squeeze)
  return misc.SqueezeExcitation(cin, squeeze, {scale_activation = nn.Hardsigmoid})
end

local InvertedResidual = Module:extend("InvertedResidual")
-- InvertedResidual(cnf, norm_layer[, se_layer]): expansion 1x1 (when the
-- channels change), depthwise kxk, squeeze-excitation, projection 1x1.
function InvertedResidual:__init(cnf, norm_layer, se)
  if cnf.stride ~= 1 and cnf.stride ~= 2 then
    error("torch.vision.models.mobilenetv3.InvertedResidual: illegal stride value " .. tostring(cnf.stride), 2)
  end
  se = se or se_layer
  self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
  local act = cnf.use_hs and nn.Hardswish or nn.ReLU
  local layers = {}
  if cnf.expanded_channels ~= cnf.input_channels then
    layers[#layers + 1] = CNA(cnf.input_channels, cnf.expanded_channels, {kernel_size = 1, norm_layer = norm_layer,
                              activation_layer = act})
  end
  layers[#layers + 1] = CNA(cnf.expanded_channels, cnf.expanded_channels, {kernel_size = cnf.kernel,
                            stride = cnf.dilation > 1 and 1 or cnf.stride, dilation = cnf.dilation,
                            groups = cnf.expanded_channels, norm_layer = norm_layer, activation_layer = act})
  if cnf.use_se then
    layers[#layers + 1] = se(cnf.expanded_channels, U.make_divisible(cnf.expanded_channels // 4, 8))
  end
  layers[#layers + 1] = CNA(cnf.expanded_channels, cnf.out_channels, {kernel_size = 1, norm_layer = norm_layer,
                            activation_layer = false})
  self.block = U.seq(layers)
  self.out_channels = cnf.out_channels
end
function InvertedResidual:forward(x)
  local r = self.block(x)
  if self.use_res_connect then r = r + x end
  return r
end
V3.InvertedResidual = InvertedResidual

local function default_norm(c) return nn.BatchNorm2d(c, {eps = 0.001, momentum = 0.01}) end

local MobileNetV3 = Module:extend("MobileNetV3")
-- MobileNetV3(inverted_residual_setting, last_channel[, num_classes=1000,
-- block=InvertedResidual, norm_layer=BatchNorm2d(eps=1e-3, momentum=0.01),
-- dropout=0.2]): the setting is a list of InvertedResidualConfig tables.
function MobileNetV3:__init(setting, last_channel, ...)
  local fname = "torch.vision.models.MobileNetV3"
  local o = U.nn_args(fname, {"num_classes", "block", "norm_layer", "dropout"}, {num_classes = 1000, dropout = 0.2},
                      ...)
  if type(setting) ~= "table" or #setting == 0 or type(setting[1]) ~= "table" or not setting[1].input_channels then
    error(fname .. ": inverted_residual_setting must be a non-empty list of InvertedResidualConfig tables", 2)
  end
  U.positive(fname, "last_channel", last_channel)
  U.positive(fname, "num_classes", o.num_classes)
  local block, norm = o.block or InvertedResidual, o.norm_layer or default_norm
  local layers = {CNA(3, setting[1].input_channels, {kernel_size = 3, stride = 2, norm_layer = norm,
                      activation_layer = nn.Hardswish})}
  for _, cnf in ipairs(setting) do layers[#layers + 1] = block(cnf, norm) end
  local last_in = setting[#setting].out_channels
  local last_out = 6 * last_in
  layers[#layers + 1] = CNA(last_in, last_out, {kernel_size = 1, norm_layer = norm, activation_layer = nn.Hardswish})
  self.features = U.seq(layers)
  self.avgpool = nn.AdaptiveAvgPool2d(1)
  self.classifier = U.seq{nn.Linear(last_out, last_channel), nn.Hardswish(true), nn.Dropout(o.dropout, true),
                          nn.Linear(last_channel, o.num_classes)}
  U.conv_init(self, 0.01)
end
function MobileNetV3:forward(x)
  U.check_image("MobileNetV3", x, 3)
  return self.classifier(self.avgpool(self.features(x)):flatten(2))
end
V3.MobileNetV3 = MobileNetV3

-- The configuration rows {in, kernel, expanded, out, use_se, act, stride, dilated?}
-- (a dilated? row takes the dilation of the `dilated` option; r: divide by
-- reduce_divider).
local LARGE = {
  {16, 3, 16, 16, false, "RE", 1}, {16, 3, 64, 24, false, "RE", 2}, {24, 3, 72, 24, false, "RE", 1},
  {24, 5, 72, 40, true, "RE", 2}, {40, 5, 120, 40, true, "RE", 1}, {40, 5, 120, 40, true, "RE", 1},
  {40, 3, 240, 80, false, "HS", 2}, {80, 3, 200, 80, false, "HS", 1}, {80, 3, 184, 80, false, "HS", 1},
  {80, 3, 184, 80, false, "HS", 1}, {80, 3, 480, 112, true, "HS", 1}, {112, 3, 672, 112, true, "HS", 1},
  {112, 5, 672, 160, true, "HS", 2, "d", "o"}, {160, 5, 960, 160, true, "HS", 1, "d", "ieo"},
  {160, 5, 960, 160, true, "HS", 1, "d", "ieo"},
}
local SMALL = {
  {16, 3, 16, 16, true, "RE", 2}, {16, 3, 72, 24, false, "RE", 2}, {24, 3, 88, 24, false, "RE", 1},
  {24, 5, 96, 40, true, "HS", 2}, {40, 5, 240, 40, true, "HS", 1}, {40, 5, 240, 40, true, "HS", 1},
  {40, 5, 120, 48, true, "HS", 1}, {48, 5, 144, 48, true, "HS", 1}, {48, 5, 288, 96, true, "HS", 2, "d", "o"},
  {96, 5, 576, 96, true, "HS", 1, "d", "ieo"}, {96, 5, 576, 96, true, "HS", 1, "d", "ieo"},
}

-- The setting and last channel of an arch (torchvision's _mobilenet_v3_conf).
local function conf(rows, last, width_mult, reduced_tail, dilated)
  local rd, dil = reduced_tail and 2 or 1, dilated and 2 or 1
  local setting = {}
  for _, r in ipairs(rows) do
    local div = r[9] or ""
    local cin = div:find("i") and r[1] // rd or r[1]
    local exp = div:find("e") and r[3] // rd or r[3]
    local cout = div:find("o") and r[4] // rd or r[4]
    setting[#setting + 1] = V3.InvertedResidualConfig(cin, r[2], exp, cout, r[5], r[6], r[7], r[8] and dil or 1,
                                                      width_mult)
  end
  return setting, adjust(last // rd, width_mult)
end

local OPTS = "num_classes block norm_layer dropout width_mult reduced_tail dilated"

local function builder(name, rows, last)
  return function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS)
    local setting, last_channel = conf(rows, last, o.width_mult or 1.0, o.reduced_tail, o.dilated)
    local model = MobileNetV3(setting, last_channel, {num_classes = o.num_classes, block = o.block,
                              norm_layer = o.norm_layer, dropout = o.dropout})
    return U.load_weights(fname, model, o.weights)
  end
end

-- mobilenet_v3_large / mobilenet_v3_small([{weights=, num_classes=1000,
-- width_mult=1, reduced_tail=false, dilated=false, dropout=0.2, ...}])
V3.mobilenet_v3_large = builder("mobilenet_v3_large", LARGE, 1280)
V3.mobilenet_v3_small = builder("mobilenet_v3_small", SMALL, 1024)

return V3
