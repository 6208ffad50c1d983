-- torch.vision.models.vision_transformer -- the Vision Transformer
-- (torchvision.models.vision_transformer): patch embedding by a strided
-- convolution, a class token, learned position embeddings and pre-norm
-- encoder blocks whose attention is nn.MultiheadAttention (batch first,
-- through F.scaled_dot_product_attention). Module names as torchvision's
-- (encoder.layers.encoder_layer_0.self_attention.in_proj_weight, heads.head).
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"
local U = require "torch.vision.models._utils"

local Module, Parameter = nn.Module, nn.Parameter
local V = {}

local function default_norm(d) return nn.LayerNorm(d, {eps = 1e-6}) end

local MLPBlock = nn.Sequential:extend("MLPBlock")
-- MLPBlock(in_dim, mlp_dim, dropout): Linear -> GELU -> Dropout -> Linear ->
-- Dropout (children 0..4), Xavier-uniform weights, N(0, 1e-6) biases.
function MLPBlock:__init(in_dim, mlp_dim, dropout)
  misc.MLP.__init(self, in_dim, {mlp_dim, in_dim}, {activation_layer = nn.GELU, dropout = dropout})
  for _, m in ipairs(self:modules()) do
    if m:_get_name() == "Linear" then
      nn.init.xavier_uniform_(m.weight)
      if m.bias ~= nil then nn.init.normal_(m.bias, 0, 1e-6) end
    end
  end
end
V.MLPBlock = MLPBlock

local EncoderBlock = Module:extend("EncoderBlock")
-- EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout[,
-- norm_layer=LayerNorm(eps=1e-6)]): x + attn(ln_1(x)), then + mlp(ln_2(.)).
function EncoderBlock:__init(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer)
  norm_layer = norm_layer or default_norm
  self.num_heads = num_heads
  self.ln_1 = norm_layer(hidden_dim)
  self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, {dropout = attention_dropout, batch_first = true})
  self.dropout = nn.Dropout(dropout)
  self.ln_2 = norm_layer(hidden_dim)
  self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)
end
function EncoderBlock:forward(input)
  if input:dim() ~= 3 then
    error(("EncoderBlock: expected (batch_size, seq_length, hidden_dim), got %d dims"):format(input:dim()), 2)
  end
  local x = self.ln_1(input)
  x = self.self_attention(x, x, x, {need_weights = false})
  x = self.dropout(x) + input
  return x + self.mlp(self.ln_2(x))
end
V.EncoderBlock = EncoderBlock

local Encoder = Module:extend("Encoder")
-- Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
-- attention_dropout[, norm_layer]): adds pos_embedding (1 x seq x hidden,
-- N(0, 0.02)), runs layers.encoder_layer_0.. and the final norm ln.
function Encoder:__init(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer)
  norm_layer = norm_layer or default_norm
  self.pos_embedding = Parameter(torch.empty(1, seq_length, hidden_dim):normal_(0, 0.02))
  self.dropout = nn.Dropout(dropout)
  local layers = nn.Sequential()
  for i = 0, num_layers - 1 do
    layers:add_module("encoder_layer_" .. i, EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                          norm_layer))
  end
  self.layers = layers
  self.ln = norm_layer(hidden_dim)
end
function Encoder:forward(input)
  if input:dim() ~= 3 then
    error(("Encoder: expected (batch_size, seq_length, hidden_dim), got %d dims"):format(input:dim()), 2)
  end
  return self.ln(self.layers(self.dropout(input + self.pos_embedding)))
end
V.Encoder = Encoder

local VT_ARGS = {"dropout", "attention_dropout", "num_classes", "representation_size", "norm_layer",
                 "conv_stem_configs"}

-- The convolutional stem of conv_stem_configs: a list of {out_channels=,
-- kernel_size=, stride=[, norm_layer=, activation_layer=]} tables.
local function conv_stem(configs, hidden_dim)
  local s = nn.Sequential()
  local prev = 3
  for i, c in ipairs(configs) do
    s:add_module("conv_bn_relu_" .. (i - 1), misc.Conv2dNormActivation(prev, c.out_channels, {
      kernel_size = c.kernel_size, stride = c.stride, norm_layer = c.norm_layer == nil and nn.BatchNorm2d or c.norm_layer,
      activation_layer = c.activation_layer == nil and nn.ReLU or c.activation_layer}))
    prev = c.out_channels
  end
  s:add_module("conv_last", nn.Conv2d(prev, hidden_dim, 1))
  return s
end

local VisionTransformer = Module:extend("VisionTransformer")
-- VisionTransformer(image_size, patch_size, num_layers, num_heads,
-- hidden_dim, mlp_dim[, dropout=0, attention_dropout=0, num_classes=1000,
-- representation_size=false, norm_layer=LayerNorm(eps=1e-6),
-- conv_stem_configs=false])
function VisionTransformer:__init(image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, ...)
  local fname = "torch.vision.models.VisionTransformer"
  local o = U.nn_args(fname, VT_ARGS, {dropout = 0.0, attention_dropout = 0.0, num_classes = 1000}, ...)
  for i, v in ipairs{image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim} do
    U.positive(fname, ({"image_size", "patch_size", "num_layers", "num_heads", "hidden_dim", "mlp_dim"})[i], v)
  end
  U.positive(fname, "num_classes", o.num_classes)
  if image_size % patch_size ~= 0 then
    error(("%s: image_size %d is not divisible by patch_size %d"):format(fname, image_size, patch_size), 2)
  end
  local norm = o.norm_layer or default_norm
  self.image_size, self.patch_size, self.hidden_dim, self.mlp_dim = image_size, patch_size, hidden_dim, mlp_dim
  self.attention_dropout, self.dropout, self.num_classes = o.attention_dropout, o.dropout, o.num_classes
  self.representation_size = o.representation_size or false
  if o.conv_stem_configs then
    self.conv_proj = conv_stem(o.conv_stem_configs, hidden_dim)
    nn.init.normal_(self.conv_proj.conv_last.weight, 0, math.sqrt(2.0 / hidden_dim))
    nn.init.zeros_(self.conv_proj.conv_last.bias)
  else
    self.conv_proj = nn.Conv2d(3, hidden_dim, patch_size, {stride = patch_size})
    nn.init.trunc_normal_(self.conv_proj.weight, {std = math.sqrt(1 / (3 * patch_size * patch_size))})
    nn.init.zeros_(self.conv_proj.bias)
  end
  local grid = image_size // patch_size
  local seq_length = grid * grid + 1
  self.class_token = Parameter(torch.zeros(1, 1, hidden_dim))
  self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, o.dropout, o.attention_dropout, norm)
  self.seq_length = seq_length
  local heads = nn.Sequential()
  if o.representation_size then
    heads:add_module("pre_logits", nn.Linear(hidden_dim, o.representation_size))
    heads:add_module("act", nn.Tanh())
    heads:add_module("head", nn.Linear(o.representation_size, o.num_classes))
    nn.init.trunc_normal_(heads.pre_logits.weight, {std = math.sqrt(1 / hidden_dim)})
    nn.init.zeros_(heads.pre_logits.bias)
  else
    heads:add_module("head", nn.Linear(hidden_dim, o.num_classes))
  end
  nn.init.zeros_(heads.head.weight)
  nn.init.zeros_(heads.head.bias)
  self.heads = heads
end

-- N x 3 x H x W images -> N x (H/p * W/p) x hidden_dim patch embeddings.
function VisionTransformer:_process_input(x)
  local n, h, w, p = x:size(1), x:size(3), x:size(4), self.patch_size
  if h ~= self.image_size or w ~= self.image_size then
    error(("VisionTransformer: wrong image size %dx%d, expected %dx%d (the image_size it was built for)"):format(h, w,
          self.image_size, self.image_size), 3)
  end
  x = self.conv_proj(x)
  return x:reshape(n, self.hidden_dim, (h // p) * (w // p)):permute(1, 3, 2)
end

function VisionTransformer:forward(x)
  U.check_image("VisionTransformer", x, 3)
  x = self:_process_input(x)
  local n = x:size(1)
  x = torch.cat({self.class_token:expand(n, -1, -1), x}, 2)
  x = self.encoder(x)
  return self.heads(x:select(2, 1))
end
V.VisionTransformer = VisionTransformer

local OPTS = "image_size dropout attention_dropout num_classes representation_size norm_layer conv_stem_configs"

local function builder(name, patch, layers, heads, hidden, mlp)
  return function(opts)
    local fname = "torch.vision.models." .. name
    local o = U.options(fname, opts, OPTS, {image_size = 224})
    local model = VisionTransformer(o.image_size, patch, layers, heads, hidden, mlp, {dropout = o.dropout,
      attention_dropout = o.attention_dropout, num_classes = o.num_classes,
      representation_size = o.representation_size, norm_layer = o.norm_layer,
      conv_stem_configs = o.conv_stem_configs})
    return U.load_weights(fname, model, o.weights)
  end
end

-- vit_*([{weights=, image_size=224, num_classes=1000, dropout=0,
-- attention_dropout=0, representation_size=, norm_layer=, conv_stem_configs=}])
V.vit_b_16 = builder("vit_b_16", 16, 12, 12, 768, 3072)
V.vit_b_32 = builder("vit_b_32", 32, 12, 12, 768, 3072)
V.vit_l_16 = builder("vit_l_16", 16, 24, 16, 1024, 4096)
V.vit_l_32 = builder("vit_l_32", 32, 24, 16, 1024, 4096)
V.vit_h_14 = builder("vit_h_14", 14, 32, 16, 1280, 5120)

return V
