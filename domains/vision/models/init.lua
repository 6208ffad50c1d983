-- torch.vision.models -- torchvision's classification models: ResNet and
-- its variants, MobileNet V2/V3, EfficientNet B0-B7, Vision Transformer and
-- ConvNeXt, with torchvision's module names (identical state_dict keys) and
-- defaults. Builders take {weights=PATH.safetensors, num_classes=, ...};
-- nothing is downloaded. get_model(name, opts) and list_models() find them.
local torch = require "torch"

local models = {}

-- The family files and the builders each one gives (in list_models order).
local FAMILIES = {
  {"resnet", {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d",
              "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2"}, {"ResNet", "BasicBlock", "Bottleneck"}},
  {"mobilenetv2", {"mobilenet_v2"}, {"MobileNetV2"}},
  {"mobilenetv3", {"mobilenet_v3_large", "mobilenet_v3_small"}, {"MobileNetV3"}},
  {"efficientnet", {"efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3", "efficientnet_b4",
                    "efficientnet_b5", "efficientnet_b6", "efficientnet_b7", "efficientnet_v2_s",
                    "efficientnet_v2_m", "efficientnet_v2_l"}, {"EfficientNet"}},
  {"vision_transformer", {"vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"}, {"VisionTransformer"}},
  {"convnext", {"convnext_tiny", "convnext_small", "convnext_base", "convnext_large"}, {"ConvNeXt"}},
}

local BUILDERS, NAMES, FAMILY = {}, {}, {}
for _, fam in ipairs(FAMILIES) do
  local mod = require("torch.vision.models." .. fam[1])
  models[fam[1]] = mod -- the family module (torchvision.models.resnet, ...): blocks and configs
  for _, name in ipairs(fam[2]) do
    -- a public entry point: errors inside are raised at the caller's line
    local b = torch._public(mod[name], "torch.vision.models." .. name)
    models[name], BUILDERS[name], FAMILY[name] = b, b, mod
    NAMES[#NAMES + 1] = name
  end
  for _, cls in ipairs(fam[3]) do models[cls] = mod[cls] end
end
table.sort(NAMES)

-- list_models([{module=, include=, exclude=}]) -> the sorted names of the
-- builders (of one family module, e.g. models.resnet, when given);
-- include / exclude are Lua patterns (or lists of them) matched against
-- the whole name ('resnet.*'), as torchvision's fnmatch filters.
function models.list_models(opts)
  opts = opts or {}
  torch._check_options("torch.vision.models.list_models", opts, "include exclude module")
  local function list(v) return type(v) == "table" and v or (v and {v} or nil) end
  local inc, exc = list(opts.include), list(opts.exclude)
  local function hit(name, pats)
    for _, p in ipairs(pats) do
      if name:match("^" .. p .. "$") then return true end
    end
    return false
  end
  local out = {}
  for _, name in ipairs(NAMES) do
    if (not inc or hit(name, inc)) and not (exc and hit(name, exc)) and (not opts.module or FAMILY[name] == opts.module)
    then
      out[#out + 1] = name
    end
  end
  return out
end

-- get_model_builder(name) -> the builder function of a model name.
function models.get_model_builder(name)
  local b = type(name) == "string" and BUILDERS[name:lower()]
  if not b then
    error(("torch.vision.models.get_model_builder: unknown model '%s' (list_models() names them: %s)"):format(
          tostring(name), table.concat(NAMES, ", ")), 2)
  end
  return b
end

-- get_model(name[, opts]) -> the model built by the builder `name` with opts
-- ({weights=, num_classes=, ...}).
function models.get_model(name, opts)
  local b = type(name) == "string" and BUILDERS[name:lower()]
  if not b then
    error(("torch.vision.models.get_model: unknown model '%s' (list_models() names them: %s)"):format(
          tostring(name), table.concat(NAMES, ", ")), 2)
  end
  return b(opts)
end

for _, k in ipairs{"list_models", "get_model_builder", "get_model"} do
  models[k] = torch._public(models[k], "torch.vision.models." .. k)
end

return models
