-- tests/domains/vision/test_models.lua -- torch.vision.models and the
-- torch.vision.ops.misc layers against torchvision: logits of models whose
-- whole state dict is a formula both sides compute (tests/ref/
-- vision_models.lua, made by gen_vision_models.py), state_dict names,
-- weights= loading and its errors, train/eval behaviour, stochastic depth
-- statistics, finite-difference gradients; and, when /usr/bin/python3 has
-- torchvision, a live round trip of seeded random weights both ways
-- (models_ref.py): torchvision state dict -> ours, ours -> torchvision.
local R = ref("vision_models")
local M = torch.vision.models
local misc = require "torch.vision.ops.misc"

-- gen_vision_models.py's formula(): the i-th key in sorted order, flat
-- position j gets u = ((37 j + 11 i) % 101 - 50) / 50 scaled by its role.
local function formula(model)
  local sd = model:state_dict()
  local keys = {}
  for k in pairs(sd) do keys[#keys + 1] = k end
  table.sort(keys)
  torch.no_grad(function()
    for i, k in ipairs(keys) do
      local t = sd[k]
      if not t:is_floating_point() then
        t:zero_()
      else
        local n = t:numel()
        local u = ((torch.arange(0, n, {dtype = torch.int64}) * 37 + 11 * i) % 101 - 50):double() / 50
        local v
        if k:match("running_var$") then v = u / 2 + 1
        elseif k:match("running_mean$") then v = u / 10
        elseif t:dim() <= 1 then v = k:match("weight$") and (u / 5 + 1) or u / 10
        else v = u * math.sqrt(1.0 / (n // t:size(1))) end
        t:copy_(v:reshape(t:size()):to(t.dtype))
      end
    end
  end)
  return model
end

-- gen_vision_models.py's gen(): ((37 k + 11 seed) % 101 - 50) / 32.
local function gen(shape, seed)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local k = torch.arange(0, n, {dtype = torch.int64})
  return (((k * 37 + 11 * seed) % 101 - 50):double() / 32):float():reshape(shape)
end

local function count_params(m)
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end

local function logits(m, x) return torch.no_grad(function() return m(x) end) end

local MODEL_CASES = {"resnet18", "resnet50", "resnext50_32x4d", "mobilenet_v2", "mobilenet_v3_small",
                     "mobilenet_v3_large", "efficientnet_b0", "efficientnet_v2_s", "vit_b_16", "vit_small_repr",
                     "convnext_tiny"}

-- the models built by the cases, reused by later tests (building is the slow part)
local BUILT = {}

for _, key in ipairs(MODEL_CASES) do
  test("torchvision logits with formula weights: " .. key, function()
    local c = R[key]
    local m
    if c.model == "VisionTransformer" then
      local o = c.opts
      m = M.VisionTransformer(o.image_size, o.patch_size, o.num_layers, o.num_heads, o.hidden_dim, o.mlp_dim,
                              {num_classes = o.num_classes, representation_size = o.representation_size})
    else
      m = M.get_model(c.model, c.opts)
    end
    BUILT[key] = m
    check_eq(#m:state_dict_keys(), c.nkeys, "number of state_dict entries")
    check_eq(count_params(m), c.nparams, "number of parameters")
    formula(m):eval()
    local y = logits(m, gen({2, 3, c.size, c.size}, 7))
    check_shape(y, c.shape)
    check_close(y, c.y, {atol = 1e-4, rtol = 1e-5})
  end)
end

test("state_dict keys are torchvision's", function()
  local want = {
    resnet18 = {"conv1.weight", "bn1.running_var", "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
                "layer2.0.downsample.1.num_batches_tracked", "layer4.1.bn2.bias", "fc.weight", "fc.bias"},
    resnet50 = {"layer1.0.conv3.weight", "layer1.0.bn3.weight", "layer4.2.conv3.weight"},
    mobilenet_v2 = {"features.0.0.weight", "features.0.1.running_mean", "features.1.conv.0.0.weight",
                    "features.2.conv.3.weight", "features.18.0.weight", "classifier.1.weight"},
    mobilenet_v3_small = {"features.1.block.1.fc1.weight", "features.1.block.1.fc2.bias", "classifier.0.weight",
                          "classifier.3.bias"},
    efficientnet_b0 = {"features.1.0.block.1.fc1.weight", "features.2.1.block.3.1.weight", "features.8.0.weight",
                       "classifier.1.weight"},
    vit_b_16 = {"class_token", "conv_proj.weight", "encoder.pos_embedding",
                "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                "encoder.layers.encoder_layer_0.self_attention.out_proj.bias",
                "encoder.layers.encoder_layer_11.mlp.3.weight", "encoder.layers.encoder_layer_0.ln_1.weight",
                "encoder.ln.bias", "heads.head.weight"},
    convnext_tiny = {"features.0.0.weight", "features.0.1.weight", "features.1.0.layer_scale",
                     "features.1.0.block.0.weight", "features.1.0.block.2.weight", "features.1.0.block.3.weight",
                     "features.2.0.weight", "features.2.1.weight", "classifier.0.weight", "classifier.2.weight"},
  }
  for name, keys in pairs(want) do
    local sd = (BUILT[name] or M.get_model(name)):state_dict()
    for _, k in ipairs(keys) do check(sd[k] ~= nil, name .. " lacks " .. k) end
  end
  local sd = BUILT.vit_b_16:state_dict() -- image_size 32: 2 x 2 patches + the class token
  check_shape(sd["encoder.pos_embedding"], {1, 5, 768})
  check_shape(sd["class_token"], {1, 1, 768})
  check(sd["encoder.layers.encoder_layer_0.self_attention.q_proj_weight"] == nil, "no separate q projection")
end)

test("list_models, get_model and get_model_builder", function()
  local all = M.list_models()
  check(#all >= 30, "only " .. #all .. " models")
  for _, n in ipairs{"resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
                     "efficientnet_b0", "efficientnet_b7", "vit_b_16", "vit_l_16", "convnext_tiny", "convnext_base",
                     "wide_resnet50_2", "resnext50_32x4d"} do
    check(M[n] ~= nil and M.get_model_builder(n) == M[n], n)
  end
  for i = 2, #all do check(all[i - 1] < all[i], "sorted") end
  check_eq(M.list_models{include = "vit.*"}, {"vit_b_16", "vit_b_32", "vit_h_14", "vit_l_16", "vit_l_32"})
  check_eq(M.list_models{include = "resnet.*", exclude = {"resnet1.*"}}, {"resnet34", "resnet50"})
  check_eq(M.list_models{module = M.mobilenetv3}, {"mobilenet_v3_large", "mobilenet_v3_small"})
  check_eq(#M.list_models{module = M.resnet}, 10)
  local m = M.get_model("resnet18", {num_classes = 10})
  check_eq(m.fc.out_features, 10)
  check_error(function() M.get_model("resnet19") end, "unknown model 'resnet19'")
  check_error(function() M.get_model_builder(3) end, "unknown model")
end)

test("builder options: defaults, fixed values and unknown names", function()
  check_eq(BUILT.resnet18.fc.out_features, 1000)
  check_eq(BUILT.resnext50_32x4d.layer1[1].conv2.groups, 32)
  check_eq(BUILT.resnext50_32x4d.layer1[1].conv2.out_channels, 128) -- 32 groups x 4
  check_eq(BUILT.mobilenet_v2.classifier[1].p, 0.2)
  check_eq(M.efficientnet_b2().classifier[1].p, 0.3)
  check_eq(BUILT.mobilenet_v3_large.features[1][2].momentum, 0.01)
  check_eq(BUILT.mobilenet_v3_large.features[1][2].eps, 0.001)
  check_close(BUILT.convnext_tiny.features[8][3].stochastic_depth.p, 0.1, {atol = 1e-12})
  check_close(BUILT.convnext_tiny.features[2][2].stochastic_depth.p, 0.1 / 17, {atol = 1e-12})
  check_close(BUILT.efficientnet_b0.features[3][1].stochastic_depth.p, 0.2 * 1 / 16, {atol = 1e-12})
  check_eq(BUILT.vit_small_repr.seq_length, 17)
  check_eq(BUILT.vit_small_repr.heads.pre_logits.out_features, 24)
  check_eq(M.mobilenet_v3_small{reduced_tail = true}.classifier[1].out_features, 512)
  check_eq(M.mobilenet_v3_small{width_mult = 0.5}.features[2].block[1][1].out_channels, 8)
  check_error(function() M.resnet18{replace_stride_with_dilation = {false, false, true}} end,
              "dilation > 1 is not supported")
  local dil = M.ResNet(M.Bottleneck, {1, 1, 1, 2}, {replace_stride_with_dilation = {false, false, true}, num_classes = 2})
  check_eq(dil.layer4[1].conv2.stride, {1, 1})
  check_eq(dil.layer4[1].conv2.dilation, {1, 1})
  check_eq(dil.layer4[2].conv2.dilation, {2, 2})
  check_eq(dil.layer4[2].conv2.padding, {2, 2})
  check_shape(logits(dil:eval(), torch.randn(1, 3, 64, 64)), {1, 2})
  check_error(function() M.wide_resnet50_2{width_per_group = 64} end, "width_per_group is fixed")
  check_error(function() M.resnet18{num_clases = 10} end, "num_clases")
  check_error(function() M.resnext50_32x4d{groups = 4} end, "groups is fixed")
  check_error(function() M.efficientnet_b6{norm_layer = nn.BatchNorm2d} end, "norm_layer is fixed")
  check_error(function() M.resnet18("x") end, "options table")
  check_error(function() M.resnet18{num_classes = 0} end, "num_classes must be a positive integer")
  check_error(function() M.vit_b_16{image_size = 100} end, "not divisible by patch_size")
end)

test("the model classes take custom configurations (the family modules' config helpers)", function()
  local E, C, V3 = M.efficientnet, M.convnext, M.mobilenetv3
  local x = torch.randn(2, 3, 32, 32)
  local e = M.EfficientNet({E.MBConvConfig(1, 3, 1, 32, 16, 1), E.FusedMBConvConfig(4, 3, 2, 16, 24, 2)}, 0.1,
                           {num_classes = 3, last_channel = 40})
  check_shape(logits(e:eval(), x), {2, 3})
  check_eq(e.features[4][1].out_channels, 40)
  local c = M.ConvNeXt({C.CNBlockConfig(8, 16, 1), C.CNBlockConfig(16, false, 2)}, {num_classes = 4})
  check_shape(logits(c:eval(), x), {2, 4})
  local cfg = {V3.InvertedResidualConfig(16, 3, 16, 16, true, "RE", 2, 1, 1.0),
               V3.InvertedResidualConfig(16, 5, 40, 24, false, "HS", 1, 1, 1.0)}
  local v = M.MobileNetV3(cfg, 64, {num_classes = 5})
  check_shape(logits(v:eval(), x), {2, 5})
  check_eq(v.classifier[1].out_features, 64)
  check_error(function() M.EfficientNet({}, 0.2) end, "inverted_residual_setting is empty")
  check_error(function() M.ConvNeXt({{1, 2}}) end, "block_setting[1] is not a CNBlockConfig")
  check_error(function() M.MobileNetV3({}, 10) end, "non-empty list of InvertedResidualConfig")
  check_error(function() M.ResNet(nn.Linear, {2, 2, 2, 2}) end, "block must be BasicBlock or Bottleneck")
  check_shape(logits(M.MobileNetV2({num_classes = 2, width_mult = 0.25}):eval(), x), {2, 2})
end)

test("forward rejects bad inputs with the model's name", function()
  local m = M.resnet18():eval()
  check_error(function() m(torch.randn(3, 32, 32)) end, "ResNet: expected a floating (N, C, H, W)")
  -- the channel count is the stem's (a replaced stem takes others)
  check_error(function() m(torch.randn(1, 1, 32, 32)) end, "expected input of shape (N, 3, H, W)")
  m.conv1 = nn.Conv2d(1, 64, 3, {padding = 1, bias = false})
  check_shape(m(torch.randn(2, 1, 28, 28)), {2, 1000})
  check_error(function() m(torch.zeros(1, 3, 32, 32, {dtype = torch.int64})) end, "int64")
  check_error(function() m("x") end, "ResNet: expected an image batch tensor")
  local v = M.vit_b_32():eval()
  check_error(function() v(torch.randn(1, 3, 64, 64)) end, "wrong image size 64x64, expected 224x224")
end)

test("weights= loads a safetensors file strictly", function()
  local dir = os.tmpname()
  os.remove(dir)
  local path = dir .. "_r18.safetensors"
  local src = formula(M.resnet18{num_classes = 10}):eval()
  torch.save(src:state_dict(), path)
  local m = M.resnet18{weights = path, num_classes = 10}:eval()
  local x = gen({1, 3, 32, 32}, 2)
  check_close(logits(m, x), logits(src, x), {atol = 0, rtol = 0})
  check_error(function() M.resnet18{weights = path} end, "size mismatch for fc.weight")
  check_error(function() M.resnet34{weights = path, num_classes = 10} end, "Missing key(s)")
  check_error(function() M.resnet18{weights = "/nonexistent/w.safetensors"} end, "not found")
  check_error(function() M.resnet18{weights = 3} end, "weights must be")
  -- a state dict with one key missing and one extra
  local sd = src:state_dict()
  sd["fc.bias"], sd["fc.extra"] = nil, torch.zeros(1)
  torch.save(sd, path)
  local ok, err = pcall(M.resnet18, {weights = path, num_classes = 10})
  check(not ok and err:find('"fc.bias"', 1, true) and err:find('"fc.extra"', 1, true), tostring(err))
  local f = io.open(path, "wb")
  f:write("not a safetensors file")
  f:close()
  check_error(function() M.resnet18{weights = path} end, "cannot read weights")
  os.remove(path)
end)

test("eval is deterministic; train mode runs dropout, stochastic depth and batch statistics", function()
  local m = M.efficientnet_b0{num_classes = 5, stochastic_depth_prob = 0.5}
  local x = gen({2, 3, 32, 32}, 1)
  m:eval()
  check_close(logits(m, x), logits(m, x), {atol = 0, rtol = 0})
  m:train()
  local a, b = logits(m, x), logits(m, x)
  check((a - b):abs():max():item() > 1e-6, "train mode should be random (dropout, stochastic depth)")
  local bn = m.features[1][2]
  check_eq(bn.num_batches_tracked:item(), 2)
  check(bn.running_mean:abs():sum():item() > 0, "running statistics were updated")
  m:eval()
  check(not m.features[3][2].stochastic_depth.training, "eval reaches every submodule")
end)

test("gradients flow to every parameter of a model", function()
  local m = M.mobilenet_v3_small{num_classes = 4}
  local y = m(gen({2, 3, 32, 32}, 4))
  y:sum():backward()
  local missing = 0
  for _, p in ipairs(m:parameters()) do if p.grad == nil then missing = missing + 1 end end
  check_eq(missing, 0)
end)

------------------------------------------------------------------------ layers

local LAYERS = R._layers

local function layer_check(key, mod, shape)
  local c = LAYERS[key]
  local keys = mod:state_dict_keys()
  table.sort(keys)
  check_eq(keys, c.keys, key .. ": state_dict keys")
  formula(mod):eval()
  local y = torch.no_grad(function() return mod(gen(shape, 3)) end)
  check_shape(y, c.shape)
  check_close(y, c.y, {atol = 1e-5, rtol = 1e-5})
end

test("ops.misc layers match torchvision.ops", function()
  layer_check("cna_default", misc.Conv2dNormActivation(3, 8), {2, 3, 7, 6})
  layer_check("cna_rect_dilated", misc.Conv2dNormActivation(4, 6, {kernel_size = {3, 5}, stride = 2,
              dilation = {1, 2}, groups = 2, activation_layer = nn.Hardswish}), {1, 4, 9, 11})
  layer_check("cna_no_norm", misc.Conv2dNormActivation(3, 5, 1, {norm_layer = false, activation_layer = false}),
              {2, 3, 4, 4})
  layer_check("cna_bias_pad", misc.Conv2dNormActivation(3, 4, 3, 1, 0, {bias = true, activation_layer = nn.SiLU}),
              {1, 3, 6, 6})
  layer_check("cna3d", misc.Conv3dNormActivation(2, 4, {kernel_size = 3, stride = {1, 2, 2}}), {1, 2, 4, 6, 6})
  layer_check("se", misc.SqueezeExcitation(8, 3), {2, 8, 5, 4})
  layer_check("se_hard", misc.SqueezeExcitation(6, 2, nn.SiLU, nn.Hardsigmoid), {2, 6, 3, 3})
  layer_check("mlp", misc.MLP(6, {10, 8, 4}), {3, 6})
  layer_check("mlp_norm_nobias", misc.MLP(5, {7, 3}, {norm_layer = nn.LayerNorm, activation_layer = nn.GELU,
              bias = false, dropout = 0.5}), {2, 4, 5})
  layer_check("frozen_bn", misc.FrozenBatchNorm2d(5, 1e-3), {2, 5, 3, 4})
end)

test("ops.misc layer arguments", function()
  local c = misc.Conv2dNormActivation(3, 8, 5, {dilation = 2})
  check_eq(c[1].padding, {4, 4})
  check(c[1].bias == nil, "no conv bias under a norm layer")
  check_eq(c.out_channels, 8)
  check_eq(#c, 3)
  check_eq(#misc.Conv2dNormActivation(3, 8, {norm_layer = false}), 2)
  check(misc.Conv2dNormActivation(3, 8, {norm_layer = false})[1].bias ~= nil, "bias without a norm layer")
  check_eq(misc.Conv2dNormActivation(3, 8, {padding = "same"})[1].padding, "same")
  check_error(function() misc.Conv2dNormActivation(3, 8, {norm = false}) end, "norm")
  check_error(function() misc.Conv2dNormActivation(0, 8) end, "in_channels must be a positive integer")
  check_error(function() misc.Conv2dNormActivation(3, 8, {norm_layer = 3}) end, "norm_layer must be an nn class")
  check_error(function() misc.MLP(4, {}) end, "hidden_channels must be a non-empty list")
  check_error(function() misc.SqueezeExcitation(4, 2, {activation = "relu"}) end, "activation must be an nn class")
  check_error(function() misc.SqueezeExcitation(4, 2)(torch.randn(4)) end, "SqueezeExcitation: expected")
  check_error(function() misc.StochasticDepth(1.5, "row") end, "between 0 and 1")
  check_error(function() misc.StochasticDepth(0.5, "col") end, "mode has to be either 'batch' or 'row'")
  check_error(function() misc.stochastic_depth(torch.ones(2), 0.5, "rows") end, "mode has to be")
  check_error(function() misc.stochastic_depth(3, 0.5, "row") end, "input must be a tensor")
  check_eq(tostring(misc.StochasticDepth(0.25, "row")), "StochasticDepth(p=0.25, mode=row)")
  check_eq(misc.Permute({1, 3, 2})(torch.zeros(2, 3, 4)).shape, {2, 4, 3})
end)

test("stochastic_depth: identity in eval, rows or the whole batch dropped with probability p, survivors scaled", function()
  local x = torch.ones(20000, 3)
  check(misc.stochastic_depth(x, 0.3, "row", false) == x, "not training: the input itself")
  check(misc.stochastic_depth(x, 0.0, "row") == x, "p = 0: the input itself")
  torch.manual_seed(5)
  local y = misc.stochastic_depth(x, 0.3, "row")
  local zero = y:select(2, 1):eq(0):double():mean():item()
  check(math.abs(zero - 0.3) < 0.015, "dropped fraction " .. zero) -- 4.6 standard deviations
  check_close(y:select(2, 1):max(), 1 / 0.7, {atol = 1e-6})
  check_close((y:select(2, 1) - y:select(2, 3)):abs():max(), 0) -- a row is dropped whole
  local kept = y:gt(0):sum():item()
  check_eq(kept + y:eq(0):sum():item(), 60000) -- every value is 0 or 1/(1-p)
  check_close(misc.stochastic_depth(x, 1.0, "batch"):abs():sum(), 0)
  local n0 = 0
  for _ = 1, 200 do
    local b = misc.stochastic_depth(torch.ones(4, 2), 0.5, "batch")
    local s = b:sum():item()
    check(s == 0 or math.abs(s - 16) < 1e-5, "batch mode drops everything or nothing, sum " .. s)
    if s == 0 then n0 = n0 + 1 end
  end
  check(n0 > 60 and n0 < 140, "batch drops " .. n0 .. " of 200")
  local sd = misc.StochasticDepth(0.5, "row")
  sd:eval()
  check(sd(x) == x, "StochasticDepth in eval mode")
end)

test("finite-difference gradients of the ops.misc layers (float64)", function()
  torch.manual_seed(1)
  local se = misc.SqueezeExcitation(4, 2):double()
  check(torch.autograd.gradcheck(function(x) return se(x) end, {torch.randn(2, 4, 3, 3, {dtype = torch.float64,
        requires_grad = true})}))
  local cna = misc.Conv2dNormActivation(2, 3, 3, {activation_layer = nn.SiLU}):double():eval()
  check(torch.autograd.gradcheck(function(x) return cna(x) end, {torch.randn(1, 2, 4, 4, {dtype = torch.float64,
        requires_grad = true})}))
  local mlp = misc.MLP(3, {5, 2}, {activation_layer = nn.Tanh}):double()
  check(torch.autograd.gradcheck(function(x) return mlp(x) end, {torch.randn(4, 3, {dtype = torch.float64,
        requires_grad = true})}))
end)

------------------------------------------------------------------------ live round trip

-- The Lua side of models_ref.py's randomize(): constant parameters made
-- random, BatchNorm running statistics drawn.
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

-- "vit_b_16,image_size=64:64" -> name, opts, size (as models_ref.py's parse)
local function parse(spec)
  local body, size = spec:match("^(.-):(%d+)$")
  body, size = body or spec, tonumber(size) or 64
  local name, opts = body:match("^([^,]+)"), {}
  for k, v in body:gmatch(",([%w_]+)=([^,]+)") do opts[k] = tonumber(v) end
  return name, opts, size
end

-- the models of the live check (NAME[,option=value...][:image size]): one
-- per family and block type (the formula cases above cover more against
-- the stored references); MOONTORCH_VISION_MODELS_ALL=1 checks every builder
local LIVE = {"resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "vit_b_32:224", "convnext_tiny"}
if os.getenv("MOONTORCH_VISION_MODELS_ALL") then
  LIVE = {}
  for _, n in ipairs(M.list_models()) do
    LIVE[#LIVE + 1] = n:match("^vit") and (n .. ",image_size=" .. (n:match("14$") and 56 or 64)) or n
  end
end

local function torchvision_available()
  if not io.open("/usr/bin/python3") then return false, "no /usr/bin/python3" end
  local p = io.popen("cd /tmp && /usr/bin/python3 -c 'import torchvision' 2>&1")
  local out = p:read("a")
  p:close()
  if out ~= "" then return false, "/usr/bin/python3 has no torchvision" end
  return true
end

-- Logits agree to 1e-4 of their largest magnitude (at least 1): seeded
-- random weights without trained statistics give some models logits in
-- the hundreds, where float32 sums differ in the 5th digit.
local function close(what, y, want)
  local scale = math.max(1, want:abs():max():item())
  local ok, err = pcall(check_close, y, want, {atol = 1e-4 * scale, rtol = 0})
  if not ok then error(what .. ": " .. tostring(err), 2) end
end

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

test("live round trip with torchvision: its seeded weights -> ours, ours -> its load_state_dict(strict=True)", function()
  local ok, why = torchvision_available()
  if not ok then return print("  (" .. why .. ": live cross-check skipped)") end
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  if here:sub(1, 1) ~= "/" then here = (os.getenv("PWD") or ".") .. "/" .. here end
  local script = here .. "/models_ref.py"
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  local quoted = {}
  for i, s in ipairs(LIVE) do quoted[i] = "'" .. s .. "'" end
  local specs = table.concat(quoted, " ")
  local done, out = sh(("cd /tmp && /usr/bin/python3 '%s' export '%s' %s"):format(script, dir, specs))
  check(done, "models_ref.py export failed:\n" .. out)
  local worst, ours_y = {}, {}
  for _, spec in ipairs(LIVE) do
    local tag = spec:match("^[^:]+")
    local name, opts, size = parse(spec)
    -- torchvision -> ours
    opts.weights = dir .. "/" .. tag .. ".safetensors"
    local m = M.get_model(name, opts):eval()
    local io_ = torch.load(dir .. "/" .. tag .. ".io.safetensors")
    local y = logits(m, io_.x)
    close(tag, y, io_.y)
    worst[#worst + 1] = ("%s %.1e"):format(tag, (y - io_.y):abs():max():item())
    os.remove(opts.weights)
    -- ours -> torchvision
    opts.weights = nil
    torch.manual_seed(1)
    local ours = M.get_model(name, opts):eval()
    randomize(ours)
    torch.save(ours:state_dict(), dir .. "/" .. tag .. ".ours.safetensors")
    local x = gen({2, 3, size, size}, 9)
    torch.save({x = x}, dir .. "/" .. tag .. ".ours_in.safetensors")
    ours_y[spec] = logits(ours, x)
  end
  done, out = sh(("cd /tmp && /usr/bin/python3 '%s' check '%s' %s"):format(script, dir, specs))
  check(done, "models_ref.py check failed:\n" .. out)
  for _, spec in ipairs(LIVE) do
    local tag = spec:match("^[^:]+")
    local y = torch.load(dir .. "/" .. tag .. ".ours_out.safetensors").y
    close(tag .. " (ours -> torchvision)", ours_y[spec], y)
    worst[#worst + 1] = ("%s(back) %.1e"):format(tag, (ours_y[spec] - y):abs():max():item())
  end
  os.execute("rm -rf '" .. dir .. "'")
  print("  (max |logit difference|: " .. table.concat(worst, ", ") .. ")")
end)
