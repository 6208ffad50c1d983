-- torch.vision.models.efficientnet -- EfficientNet B0-B7 and V2 S/M/L
-- (torchvision.models.efficientnet): MBConv and FusedMBConv blocks with
-- SiLU, squeeze-excitation and row-wise stochastic depth growing linearly
-- over the blocks; torchvision's module names (features.S.B.block.M).
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"
local U = require "torch.vision.models._utils"

local Module = nn.Module
local CNA = misc.Conv2dNormActivation
local E = {}

local function adjust_channels(c, width_mult, min_value) return U.make_divisible(c * width_mult, 8, min_value) end

-- MBConvConfig(expand_ratio, kernel, stride, input_channels, out_channels,
-- num_layers[, width_mult=1, depth_mult=1]) -> a plain table (channels
-- rounded to multiples of 8 after width_mult, layers ceil(n * depth_mult)).
function E.MBConvConfig(expand_ratio, kernel, stride, cin, cout, num_layers, width_mult, depth_mult)
  width_mult, depth_mult = width_mult or 1.0, depth_mult or 1.0
  return {block = "MBConv", expand_ratio = expand_ratio, kernel = kernel, stride = stride,
          input_channels = adjust_channels(cin, width_mult), out_channels = adjust_channels(cout, width_mult),
          num_layers = math.tointeger(math.ceil(num_layers * depth_mult))}
end

-- FusedMBConvConfig(expand_ratio, kernel, stride, input_channels,
-- out_channels, num_layers) -> a plain table (no rounding).
function E.FusedMBConvConfig(expand_ratio, kernel, stride, cin, cout, num_layers)
  return {block = "FusedMBConv", expand_ratio = expand_ratio, kernel = kernel, stride = stride, input_channels = cin,
          out_channels = cout, num_layers = num_layers}
end

local function check_stride(name, cnf)
  if cnf.stride ~= 1 and cnf.stride ~= 2 then
    error(("torch.vision.models.efficientnet.%s: illegal stride value %s"):format(name, tostring(cnf.stride)), 3)
  end
end

local function silu_inplace() return nn.SiLU(true) end

local MBConv = Module:extend("MBConv")
-- MBConv(cnf, stochastic_depth_prob, norm_layer): expansion 1x1, depthwise
-- kxk, squeeze-excitation (SiLU), projection 1x1; stochastic depth on the
-- residual branch.
function MBConv:__init(cnf, sd_prob, norm_layer)
  check_stride("MBConv", cnf)
  self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
  local expanded = adjust_channels(cnf.input_channels, cnf.expand_ratio)
  local layers = {}
  if expanded ~= cnf.input_channels then
    layers[#layers + 1] = CNA(cnf.input_channels, expanded, {kernel_size = 1, norm_layer = norm_layer,
                              activation_layer = nn.SiLU})
  end
  layers[#layers + 1] = CNA(expanded, expanded, {kernel_size = cnf.kernel, stride = cnf.stride, groups = expanded,
                            norm_layer = norm_layer, activation_layer = nn.SiLU})
  layers[#layers + 1] = misc.SqueezeExcitation(expanded, math.max(1, cnf.input_channels // 4),
                                               {activation = silu_inplace})
  layers[#layers + 1] = CNA(expanded, cnf.out_channels, {kernel_size = 1, norm_layer = norm_layer,
                            activation_layer = false})
  self.block = U.seq(layers)
  self.stochastic_depth = misc.StochasticDepth(sd_prob, "row")
  self.out_channels = cnf.out_channels
end
local function residual_forward(self, x)
  local r = self.block(x)
  if self.use_res_connect then r = self.stochastic_depth(r) + x end
  return r
end
MBConv.forward = residual_forward
E.MBConv = MBConv

local FusedMBConv = Module:extend("FusedMBConv")
-- FusedMBConv(cnf, stochastic_depth_prob, norm_layer): a full kxk
-- convolution expanding the channels, then a 1x1 projection (or one kxk
-- convolution when expand_ratio keeps the channels).
function FusedMBConv:__init(cnf, sd_prob, norm_layer)
  check_stride("FusedMBConv", cnf)
  self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
  local expanded = adjust_channels(cnf.input_channels, cnf.expand_ratio)
  local layers = {}
  if expanded ~= cnf.input_channels then
    layers[1] = CNA(cnf.input_channels, expanded, {kernel_size = cnf.kernel, stride = cnf.stride,
                    norm_layer = norm_layer, activation_layer = nn.SiLU})
    layers[2] = CNA(expanded, cnf.out_channels, {kernel_size = 1, norm_layer = norm_layer, activation_layer = false})
  else
    layers[1] = CNA(cnf.input_channels, cnf.out_channels, {kernel_size = cnf.kernel, stride = cnf.stride,
                    norm_layer = norm_layer, activation_layer = nn.SiLU})
  end
  self.block = U.seq(layers)
  self.stochastic_depth = misc.StochasticDepth(sd_prob, "row")
  self.out_channels = cnf.out_channels
end
FusedMBConv.forward = residual_forward
E.FusedMBConv = FusedMBConv

local BLOCKS = {MBConv = MBConv, FusedMBConv = FusedMBConv}

local EfficientNet = Module:extend("EfficientNet")
-- EfficientNet(inverted_residual_setting, dropout[, stochastic_depth_prob=0.2,
-- num_classes=1000, norm_layer=nn.BatchNorm2d, last_channel=4 * last out]):
-- the setting is a list of MBConvConfig / FusedMBConvConfig tables.
function EfficientNet:__init(setting, dropout, ...)
  local fname = "torch.vision.models.EfficientNet"
  local o = U.nn_args(fname, {"stochastic_depth_prob", "num_classes", "norm_layer", "last_channel"},
                      {stochastic_depth_prob = 0.2, num_classes = 1000}, ...)
  if type(setting) ~= "table" or #setting == 0 then error(fname .. ": the inverted_residual_setting is empty", 2) end
  for i, cnf in ipairs(setting) do
    if type(cnf) ~= "table" or not BLOCKS[cnf.block] then
      error(("%s: inverted_residual_setting[%d] is not an MBConvConfig or FusedMBConvConfig"):format(fname, i), 2)
    end
  end
  if type(dropout) ~= "number" then error(fname .. ": dropout must be a number, got " .. tostring(dropout), 2) end
  U.positive(fname, "num_classes", o.num_classes)
  local norm = o.norm_layer or nn.BatchNorm2d
  local layers = {CNA(3, setting[1].input_channels, {kernel_size = 3, stride = 2, norm_layer = norm,
                      activation_layer = nn.SiLU})}
  local total, id = 0, 0
  for _, cnf in ipairs(setting) do total = total + cnf.num_layers end
  for _, cnf in ipairs(setting) do
    local stage = {}
    for _ = 1, cnf.num_layers do
      local c = {}
      for k, v in pairs(cnf) do c[k] = v end
      if #stage > 0 then c.input_channels, c.stride = c.out_channels, 1 end
      stage[#stage + 1] = BLOCKS[c.block](c, o.stochastic_depth_prob * id / total, norm)
      id = id + 1
    end
    layers[#layers + 1] = U.seq(stage)
  end
  local last_in = setting[#setting].out_channels
  local last_out = o.last_channel or 4 * last_in
  layers[#layers + 1] = CNA(last_in, last_out, {kernel_size = 1, norm_layer = norm, activation_layer = nn.SiLU})
  self.features = U.seq(layers)
  self.avgpool = nn.AdaptiveAvgPool2d(1)
  self.classifier = U.seq{nn.Dropout(dropout, true), nn.Linear(last_out, o.num_classes)}
  U.conv_init(self)
  for _, m in ipairs(self:modules()) do
    if m:_get_name() == "Linear" then
      local r = 1.0 / math.sqrt(m.out_features)
      nn.init.uniform_(m.weight, -r, r)
      nn.init.zeros_(m.bias)
    end
  end
end
function EfficientNet:forward(x)
  U.check_image("EfficientNet", x, 3)
  return self.classifier(self.avgpool(self.features(x)):flatten(2))
end
E.EfficientNet = EfficientNet

local B_ROWS = {{1, 3, 1, 32, 16, 1}, {6, 3, 2, 16, 24, 2}, {6, 5, 2, 24, 40, 2}, {6, 3, 2, 40, 80, 3},
                {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4}, {6, 3, 1, 192, 320, 1}}
-- V2 rows: {fused?, expand_ratio, kernel, stride, in, out, layers}
local V2_ROWS = {
  s = {{true, 1, 3, 1, 24, 24, 2}, {true, 4, 3, 2, 24, 48, 4}, {true, 4, 3, 2, 48, 64, 4},
       {false, 4, 3, 2, 64, 128, 6}, {false, 6, 3, 1, 128, 160, 9}, {false, 6, 3, 2, 160, 256, 15}},
  m = {{true, 1, 3, 1, 24, 24, 3}, {true, 4, 3, 2, 24, 48, 5}, {true, 4, 3, 2, 48, 80, 5},
       {false, 4, 3, 2, 80, 160, 7}, {false, 6, 3, 1, 160, 176, 14}, {false, 6, 3, 2, 176, 304, 18},
       {false, 6, 3, 1, 304, 512, 5}},
  l = {{true, 1, 3, 1, 32, 32, 4}, {true, 4, 3, 2, 32, 64, 7}, {true, 4, 3, 2, 64, 96, 7},
       {false, 4, 3, 2, 96, 192, 10}, {false, 6, 3, 1, 192, 224, 19}, {false, 6, 3, 2, 224, 384, 25},
       {false, 6, 3, 1, 384, 640, 7}},
}

local OPTS = "num_classes stochastic_depth_prob norm_layer"

local function bn(eps, momentum)
  return function(c) return nn.BatchNorm2d(c, {eps = eps, momentum = momentum}) end
end

-- A builder of a B variant: width and depth multipliers, dropout, and the
-- norm layer it fixes (B5-B7: eps 1e-3, momentum 0.01).
local function b_builder(name, width, depth, dropout, norm)
  return function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS)
    if norm and o.norm_layer ~= nil then error(fname .. ": norm_layer is fixed by this builder", 2) end
    local setting = {}
    for _, r in ipairs(B_ROWS) do setting[#setting + 1] = E.MBConvConfig(r[1], r[2], r[3], r[4], r[5], r[6], width,
                                                                          depth) end
    local model = EfficientNet(setting, dropout, {stochastic_depth_prob = o.stochastic_depth_prob,
                               num_classes = o.num_classes, norm_layer = norm or o.norm_layer})
    return U.load_weights(fname, model, o.weights)
  end
end

local function v2_builder(name, rows, dropout)
  return function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS)
    if o.norm_layer ~= nil then error(fname .. ": norm_layer is fixed by this builder", 2) end
    local setting = {}
    for _, r in ipairs(rows) do
      local f = r[1] and E.FusedMBConvConfig or E.MBConvConfig
      setting[#setting + 1] = f(r[2], r[3], r[4], r[5], r[6], r[7])
    end
    local model = EfficientNet(setting, dropout, {stochastic_depth_prob = o.stochastic_depth_prob,
                               num_classes = o.num_classes, norm_layer = bn(1e-3), last_channel = 1280})
    return U.load_weights(fname, model, o.weights)
  end
end

-- efficientnet_bN([{weights=, num_classes=1000, stochastic_depth_prob=0.2,
-- norm_layer=}]) and efficientnet_v2_s/m/l
E.efficientnet_b0 = b_builder("efficientnet_b0", 1.0, 1.0, 0.2)
E.efficientnet_b1 = b_builder("efficientnet_b1", 1.0, 1.1, 0.2)
E.efficientnet_b2 = b_builder("efficientnet_b2", 1.1, 1.2, 0.3)
E.efficientnet_b3 = b_builder("efficientnet_b3", 1.2, 1.4, 0.3)
E.efficientnet_b4 = b_builder("efficientnet_b4", 1.4, 1.8, 0.4)
E.efficientnet_b5 = b_builder("efficientnet_b5", 1.6, 2.2, 0.4, bn(0.001, 0.01))
E.efficientnet_b6 = b_builder("efficientnet_b6", 1.8, 2.6, 0.5, bn(0.001, 0.01))
E.efficientnet_b7 = b_builder("efficientnet_b7", 2.0, 3.1, 0.5, bn(0.001, 0.01))
E.efficientnet_v2_s = v2_builder("efficientnet_v2_s", V2_ROWS.s, 0.2)
E.efficientnet_v2_m = v2_builder("efficientnet_v2_m", V2_ROWS.m, 0.3)
E.efficientnet_v2_l = v2_builder("efficientnet_v2_l", V2_ROWS.l, 0.4)

return E
