-- torch.vision.models.resnet -- ResNet, ResNeXt and Wide ResNet
-- (torchvision.models.resnet): BasicBlock, Bottleneck, the ResNet class and
-- the builders resnet18 ... wide_resnet101_2, with torchvision's module
-- names (conv1, layer1.0.conv1, ..., fc) so state dicts are interchangeable.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.vision.models._utils"

local Module = nn.Module
local R = {}

local function conv3x3(cin, cout, stride, groups, dilation)
  return nn.Conv2d(cin, cout, 3, {stride = stride or 1, padding = dilation or 1, groups = groups or 1, bias = false,
                                  dilation = dilation or 1})
end
local function conv1x1(cin, cout, stride) return nn.Conv2d(cin, cout, 1, {stride = stride or 1, bias = false}) end

local BLOCK_ARGS = {"stride", "downsample", "groups", "base_width", "dilation", "norm_layer"}
local BLOCK_D = {stride = 1, downsample = false, groups = 1, base_width = 64, dilation = 1}

local BasicBlock = Module:extend("BasicBlock")
BasicBlock.expansion = 1
-- BasicBlock(inplanes, planes[, stride=1, downsample=false, groups=1,
-- base_width=64, dilation=1, norm_layer=nn.BatchNorm2d]): two 3x3 convs.
function BasicBlock:__init(inplanes, planes, ...)
  local o = U.nn_args("torch.vision.models.resnet.BasicBlock", BLOCK_ARGS, BLOCK_D, ...)
  local norm = o.norm_layer or nn.BatchNorm2d
  if o.groups ~= 1 or o.base_width ~= 64 then
    error("torch.vision.models.resnet.BasicBlock: only groups=1 and base_width=64 are supported", 2)
  end
  if o.dilation > 1 then error("torch.vision.models.resnet.BasicBlock: dilation > 1 is not supported", 2) end
  self.conv1 = conv3x3(inplanes, planes, o.stride)
  self.bn1 = norm(planes)
  self.relu = nn.ReLU(true)
  self.conv2 = conv3x3(planes, planes)
  self.bn2 = norm(planes)
  if o.downsample then self.downsample = o.downsample end
  self.stride = o.stride
end
function BasicBlock:forward(x)
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  local identity = self.downsample and self.downsample(x) or x
  return self.relu(out + identity)
end
R.BasicBlock = BasicBlock

local Bottleneck = Module:extend("Bottleneck")
Bottleneck.expansion = 4
-- Bottleneck(inplanes, planes[, stride=1, downsample=false, groups=1,
-- base_width=64, dilation=1, norm_layer=nn.BatchNorm2d]): 1x1, 3x3 (stride
-- and groups here, as torchvision's ResNet V1.5), 1x1 to planes * 4.
function Bottleneck:__init(inplanes, planes, ...)
  local o = U.nn_args("torch.vision.models.resnet.Bottleneck", BLOCK_ARGS, BLOCK_D, ...)
  local norm = o.norm_layer or nn.BatchNorm2d
  local width = math.floor(planes * (o.base_width / 64.0)) * o.groups
  self.conv1 = conv1x1(inplanes, width)
  self.bn1 = norm(width)
  self.conv2 = conv3x3(width, width, o.stride, o.groups, o.dilation)
  self.bn2 = norm(width)
  self.conv3 = conv1x1(width, planes * 4)
  self.bn3 = norm(planes * 4)
  self.relu = nn.ReLU(true)
  if o.downsample then self.downsample = o.downsample end
  self.stride = o.stride
end
function Bottleneck:forward(x)
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.relu(self.bn2(self.conv2(out)))
  out = self.bn3(self.conv3(out))
  local identity = self.downsample and self.downsample(x) or x
  return self.relu(out + identity)
end
R.Bottleneck = Bottleneck

local ResNet = Module:extend("ResNet")

-- One stage: blocks blocks of planes channels, the first with stride (or
-- dilation instead, when dilate) and a 1x1 downsample where shapes change.
local function make_layer(self, block, planes, blocks, stride, dilate)
  local norm = self._norm_layer
  local previous_dilation = self.dilation
  if dilate then
    self.dilation = self.dilation * stride
    stride = 1
  end
  local exp = block.expansion
  local downsample = false
  if stride ~= 1 or self.inplanes ~= planes * exp then
    downsample = U.seq{conv1x1(self.inplanes, planes * exp, stride), norm(planes * exp)}
  end
  local layers = {block(self.inplanes, planes, {stride = stride, downsample = downsample, groups = self.groups,
                        base_width = self.base_width, dilation = previous_dilation, norm_layer = norm})}
  self.inplanes = planes * exp
  for _ = 2, blocks do
    layers[#layers + 1] = block(self.inplanes, planes, {groups = self.groups, base_width = self.base_width,
                                dilation = self.dilation, norm_layer = norm})
  end
  return U.seq(layers)
end

local RESNET_ARGS = {"num_classes", "zero_init_residual", "groups", "width_per_group", "replace_stride_with_dilation",
                     "norm_layer"}

-- ResNet(block, layers[, num_classes=1000, zero_init_residual=false,
-- groups=1, width_per_group=64, replace_stride_with_dilation={false, false,
-- false}, norm_layer=nn.BatchNorm2d]): block is BasicBlock or Bottleneck,
-- layers the number of blocks of the four stages.
function ResNet:__init(block, layers, ...)
  local fname = "torch.vision.models.ResNet"
  local o = U.nn_args(fname, RESNET_ARGS, {num_classes = 1000, zero_init_residual = false, groups = 1,
                      width_per_group = 64}, ...)
  if block ~= BasicBlock and block ~= Bottleneck then
    error(fname .. ": block must be BasicBlock or Bottleneck (torch.vision.models.resnet)", 2)
  end
  if type(layers) ~= "table" or #layers ~= 4 then error(fname .. ": layers must be a list of 4 block counts", 2) end
  U.positive(fname, "num_classes", o.num_classes)
  self._norm_layer = o.norm_layer or nn.BatchNorm2d
  self.inplanes, self.dilation = 64, 1
  local rswd = o.replace_stride_with_dilation or {false, false, false}
  if type(rswd) ~= "table" or #rswd ~= 3 then
    error(fname .. ": replace_stride_with_dilation should be false or a 3-element list, got " .. tostring(rswd), 2)
  end
  self.groups, self.base_width = o.groups, o.width_per_group
  self.conv1 = nn.Conv2d(3, self.inplanes, 7, {stride = 2, padding = 3, bias = false})
  self.bn1 = self._norm_layer(self.inplanes)
  self.relu = nn.ReLU(true)
  self.maxpool = nn.MaxPool2d(3, {stride = 2, padding = 1})
  self.layer1 = make_layer(self, block, 64, layers[1], 1, false)
  self.layer2 = make_layer(self, block, 128, layers[2], 2, rswd[1])
  self.layer3 = make_layer(self, block, 256, layers[3], 2, rswd[2])
  self.layer4 = make_layer(self, block, 512, layers[4], 2, rswd[3])
  self.avgpool = nn.AdaptiveAvgPool2d({1, 1})
  self.fc = nn.Linear(512 * block.expansion, o.num_classes)
  U.conv_init(self)
  if o.zero_init_residual then
    for _, m in ipairs(self:modules()) do
      if getmetatable(m) == Bottleneck and m.bn3.weight then nn.init.zeros_(m.bn3.weight)
      elseif getmetatable(m) == BasicBlock and m.bn2.weight then nn.init.zeros_(m.bn2.weight) end
    end
  end
end
function ResNet:forward(x)
  U.check_image("ResNet", x, 3)
  x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
  x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
  return self.fc(self.avgpool(x):flatten(2))
end
R.ResNet = ResNet

local OPTS = "num_classes zero_init_residual groups width_per_group replace_stride_with_dilation norm_layer"

-- A builder: name, block, layers and the options it fixes.
local function builder(name, block, layers, fixed)
  return function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS, nil, fixed)
    local model = ResNet(block, layers, {num_classes = o.num_classes, zero_init_residual = o.zero_init_residual,
                         groups = o.groups, width_per_group = o.width_per_group,
                         replace_stride_with_dilation = o.replace_stride_with_dilation, norm_layer = o.norm_layer})
    return U.load_weights(fname, model, o.weights)
  end
end

R.resnet18 = builder("resnet18", BasicBlock, {2, 2, 2, 2})
R.resnet34 = builder("resnet34", BasicBlock, {3, 4, 6, 3})
R.resnet50 = builder("resnet50", Bottleneck, {3, 4, 6, 3})
R.resnet101 = builder("resnet101", Bottleneck, {3, 4, 23, 3})
R.resnet152 = builder("resnet152", Bottleneck, {3, 8, 36, 3})
R.resnext50_32x4d = builder("resnext50_32x4d", Bottleneck, {3, 4, 6, 3}, {groups = 32, width_per_group = 4})
R.resnext101_32x8d = builder("resnext101_32x8d", Bottleneck, {3, 4, 23, 3}, {groups = 32, width_per_group = 8})
R.resnext101_64x4d = builder("resnext101_64x4d", Bottleneck, {3, 4, 23, 3}, {groups = 64, width_per_group = 4})
R.wide_resnet50_2 = builder("wide_resnet50_2", Bottleneck, {3, 4, 6, 3}, {width_per_group = 128})
R.wide_resnet101_2 = builder("wide_resnet101_2", Bottleneck, {3, 4, 23, 3}, {width_per_group = 128})

return R
