-- torch.nn.transformer -- MultiheadAttention and the Transformer family
-- (encoder/decoder layers and stacks, the full encoder-decoder) with
-- PyTorch's argument names, defaults and state_dict keys, so weights carry
-- over. Attention runs through F.scaled_dot_product_attention unless the
-- attention weights are asked for (need_weights), which takes the explicit
-- softmax(q kᵀ) composition: the flash kernel never forms the weights.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point
local init = require "torch.nn.initializers"
local L = require "torch.nn.linear"
local N = require "torch.nn.normalization"
local Misc = require "torch.nn.misc"
local C = require "torch.nn.container"

local Module, Parameter = M.Module, M.Parameter
local T = {}

local is_tensor = torch.is_tensor
local shape_str = U.shape_str

-- A deep copy of module m: new parameters and buffers (clones of m's), the
-- same class and plain fields. PyTorch's copy.deepcopy, which the stacks use.
local function clone_module(m, memo)
  memo = memo or {}
  if memo[m] then return memo[m] end
  local function copy(v, is_param)
    if is_tensor(v) then
      if memo[v] then return memo[v] end
      local c
      if is_param then c = Parameter(v:detach():clone(), v.requires_grad) else c = v:clone() end
      memo[v] = c
      return c
    elseif M.is_module(v) then
      return clone_module(v, memo)
    elseif type(v) == "table" and getmetatable(v) == nil then
      if memo[v] then return memo[v] end
      local t = {}
      memo[v] = t
      for k, x in pairs(v) do t[k] = copy(x) end
      return t
    end
    return v
  end
  local r = setmetatable({}, getmetatable(m))
  memo[m] = r
  for k, v in pairs(m) do
    if k == "_parameters" then
      local reg = {names = {}, has = {}, map = {}}
      for i, n in ipairs(v.names) do reg.names[i] = n; reg.has[n] = true; reg.map[n] = copy(v.map[n], true) end
      rawset(r, k, reg)
    else
      rawset(r, k, copy(v))
    end
  end
  return r
end
T._clone_module = clone_module

local function check_mask_dtype(fname, what, mask, dtype)
  if mask == nil then return end
  if not is_tensor(mask) then error(("%s: %s must be a tensor, got %s"):format(fname, what, type(mask)), 4) end
  if mask.dtype ~= torch.bool and mask.dtype ~= dtype then
    error(("%s: %s must be bool (true = masked out) or %s like the query (added to the scores), got %s"):format(
          fname, what, tostring(dtype), tostring(mask.dtype)), 4)
  end
end

-- Float form of a bool "masked out" mask: -inf where true, 0 elsewhere.
local function to_float_mask(m, dtype)
  if m.dtype ~= torch.bool then return m end
  return torch.zeros(m:size(), {dtype = dtype}):masked_fill(m, -math.huge)
end

-- Joins two masks (nil, bool = masked out, or float = added) into one.
local function merge_masks(a, b, dtype)
  if a == nil then return b end
  if b == nil then return a end
  if a.dtype == torch.bool and b.dtype == torch.bool then return a:logical_or(b) end
  return to_float_mask(a, dtype) + to_float_mask(b, dtype)
end

------------------------------------------------------------------------
-- MultiheadAttention
------------------------------------------------------------------------

local MHA = Module:extend("MultiheadAttention")
local MHA_ARGS = {"dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim", "batch_first", "device", "dtype"}

-- MultiheadAttention(embed_dim, num_heads[, dropout=0, bias=true,
-- add_bias_kv=false, add_zero_attn=false, kdim=embed_dim, vdim=embed_dim,
-- batch_first=false, dtype=])
function MHA:__init(embed_dim, num_heads, ...)
  local o = U.args("nn.MultiheadAttention", MHA_ARGS, {dropout = 0.0, bias = true, add_bias_kv = false,
                   add_zero_attn = false, batch_first = false}, ...)
  if math.type(embed_dim) ~= "integer" or embed_dim <= 0 or math.type(num_heads) ~= "integer" or num_heads <= 0 then
    error(("nn.MultiheadAttention(embed_dim, num_heads): both must be positive integers, got %s and %s"):format(
          tostring(embed_dim), tostring(num_heads)), 2)
  end
  if embed_dim % num_heads ~= 0 then
    error(("nn.MultiheadAttention: embed_dim (%d) must be divisible by num_heads (%d)"):format(embed_dim, num_heads), 2)
  end
  local kdim, vdim = o.kdim or embed_dim, o.vdim or embed_dim
  self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
  self.kdim, self.vdim, self.dropout, self.batch_first = kdim, vdim, o.dropout, o.batch_first
  self._qkv_same_embed_dim = kdim == embed_dim and vdim == embed_dim
  self.add_zero_attn = o.add_zero_attn
  local topts = U.topts(o.dtype, o.device)
  if self._qkv_same_embed_dim then
    self.in_proj_weight = Parameter(torch.empty(3 * embed_dim, embed_dim, topts))
    self:register_parameter("q_proj_weight", nil)
    self:register_parameter("k_proj_weight", nil)
    self:register_parameter("v_proj_weight", nil)
  else
    self.q_proj_weight = Parameter(torch.empty(embed_dim, embed_dim, topts))
    self.k_proj_weight = Parameter(torch.empty(embed_dim, kdim, topts))
    self.v_proj_weight = Parameter(torch.empty(embed_dim, vdim, topts))
    self:register_parameter("in_proj_weight", nil)
  end
  if o.bias then self.in_proj_bias = Parameter(torch.empty(3 * embed_dim, topts))
  else self:register_parameter("in_proj_bias", nil) end
  self.out_proj = L.Linear(embed_dim, embed_dim, {bias = o.bias, dtype = o.dtype})
  if o.add_bias_kv then
    self.bias_k = Parameter(torch.empty(1, 1, embed_dim, topts))
    self.bias_v = Parameter(torch.empty(1, 1, embed_dim, topts))
  end
  self:_reset_parameters()
end

function MHA:_reset_parameters()
  if self._qkv_same_embed_dim then init.xavier_uniform_(self.in_proj_weight)
  else
    init.xavier_uniform_(self.q_proj_weight)
    init.xavier_uniform_(self.k_proj_weight)
    init.xavier_uniform_(self.v_proj_weight)
  end
  torch.no_grad(function()
    if self.in_proj_bias ~= nil then self.in_proj_bias:zero_(); self.out_proj.bias:zero_() end
  end)
  if self.bias_k ~= nil then init.xavier_normal_(self.bias_k); init.xavier_normal_(self.bias_v) end
end

function MHA:extra_repr()
  return ("embed_dim=%d, num_heads=%d, batch_first=%s"):format(self.embed_dim, self.num_heads,
                                                              tostring(self.batch_first))
end

local FWD_ARGS = {"key_padding_mask", "need_weights", "attn_mask", "average_attn_weights", "is_causal"}

-- Projects query, key, value (batch first: N x L x E, N x S x kdim,
-- N x S x vdim) to q, k, v of N x L x E, N x S x E.
local function in_projection(self, query, key, value, same)
  local E, w, b = self.embed_dim, self.in_proj_weight, self.in_proj_bias
  local function bias(i) return b and b:narrow(1, (i - 1) * E + 1, E) or nil end
  if self._qkv_same_embed_dim then
    if same then
      local qkv = F.linear(query, w, b):chunk(3, -1)
      return qkv[1], qkv[2], qkv[3]
    end
    return F.linear(query, w:narrow(1, 1, E), bias(1)), F.linear(key, w:narrow(1, E + 1, E), bias(2)),
           F.linear(value, w:narrow(1, 2 * E + 1, E), bias(3))
  end
  return F.linear(query, self.q_proj_weight, bias(1)), F.linear(key, self.k_proj_weight, bias(2)),
         F.linear(value, self.v_proj_weight, bias(3))
end

-- forward(query, key, value[, key_padding_mask, need_weights=true,
-- attn_mask, average_attn_weights=true, is_causal=false]) -> output,
-- weights (nil unless need_weights). Masks: bool = true is masked out, float
-- = added to the scores. key_padding_mask is N x S (S unbatched); attn_mask
-- is L x S or (N*num_heads) x L x S. is_causal without attn_mask masks the
-- future (key j > query i); with attn_mask it is a hint, as in PyTorch 2.
function MHA:forward(query, key, value, ...)
  local o = U.args("MultiheadAttention:forward", FWD_ARGS, {need_weights = true, average_attn_weights = true,
                   is_causal = false}, ...)
  local name = self:_label()
  key, value = key or query, value or key or query
  for i, t in ipairs{query, key, value} do
    if not is_tensor(t) then
      error(("%s: %s must be a tensor, got %s"):format(name, ({"query", "key", "value"})[i], type(t)), 2)
    end
  end
  local same = rawequal(query, key) and rawequal(key, value)
  local nd = query:dim()
  if nd ~= 2 and nd ~= 3 then
    error(("%s: expected a 3-D (batched) or 2-D (unbatched) query, got shape %s"):format(name, shape_str(query)), 2)
  end
  if key:dim() ~= nd or value:dim() ~= nd then
    error(("%s: query, key and value must have the same rank, got shapes %s, %s and %s"):format(name,
          shape_str(query), shape_str(key), shape_str(value)), 2)
  end
  local dtype = query.dtype
  if not query:is_floating_point() or key.dtype ~= dtype or value.dtype ~= dtype then
    error(("%s: query, key and value must share one floating dtype, got %s, %s and %s"):format(name,
          tostring(query.dtype), tostring(key.dtype), tostring(value.dtype)), 2)
  end
  check_mask_dtype(name, "key_padding_mask", o.key_padding_mask, dtype)
  check_mask_dtype(name, "attn_mask", o.attn_mask, dtype)
  local batched = nd == 3
  local kpm, amask = o.key_padding_mask, o.attn_mask
  if not batched then
    query, key, value = query:unsqueeze(1), key:unsqueeze(1), value:unsqueeze(1)
    if kpm ~= nil then
      if kpm:dim() ~= 1 then
        error(("%s: key_padding_mask of an unbatched query must be 1-D (S), got shape %s"):format(name,
              shape_str(kpm)), 2)
      end
      kpm = kpm:unsqueeze(1)
    end
  elseif not self.batch_first then
    query, key, value = query:transpose(1, 2), key:transpose(1, 2), value:transpose(1, 2)
  end
  -- from here on: batch first, N x L x E
  local Nb, Lq, E = query:size(1), query:size(2), query:size(3)
  local S = key:size(2)
  local H, hd = self.num_heads, self.head_dim
  if E ~= self.embed_dim then
    error(("%s: expected query with last dimension embed_dim=%d, got shape %s"):format(name, self.embed_dim,
          shape_str(query)), 2)
  end
  if key:size(3) ~= self.kdim or value:size(3) ~= self.vdim then
    error(("%s: expected key and value with last dimensions kdim=%d and vdim=%d, got shapes %s and %s"):format(name,
          self.kdim, self.vdim, shape_str(key), shape_str(value)), 2)
  end
  if key:size(1) ~= Nb or value:size(1) ~= Nb or value:size(2) ~= S then
    error(("%s: key and value must have the query's batch size (%d) and one sequence length, got shapes %s and %s"
          ):format(name, Nb, shape_str(key), shape_str(value)), 2)
  end
  if kpm ~= nil and (kpm:dim() ~= 2 or kpm:size(1) ~= Nb or kpm:size(2) ~= S) then
    error(("%s: key_padding_mask must have shape (batch, source length) = %dx%d, got %s"):format(name, Nb, S,
          shape_str(kpm)), 2)
  end
  if amask ~= nil then
    local ok = (amask:dim() == 2 and amask:size(1) == Lq and amask:size(2) == S)
               or (amask:dim() == 3 and amask:size(1) == Nb * H and amask:size(2) == Lq and amask:size(3) == S)
    if not ok then
      error(("%s: attn_mask must have shape (L, S) = %dx%d or (batch*num_heads, L, S) = %dx%dx%d, got %s"):format(
            name, Lq, S, Nb * H, Lq, S, shape_str(amask)), 2)
    end
    if amask:dim() == 3 then amask = amask:reshape(Nb, H, Lq, S) end
  end
  local causal = o.is_causal and amask == nil
  local q, k, v = in_projection(self, query, key, value, same)
  if self.bias_k ~= nil then
    k = torch.cat({k, self.bias_k:expand(Nb, 1, E)}, 2)
    v = torch.cat({v, self.bias_v:expand(Nb, 1, E)}, 2)
    if amask ~= nil then amask = F.pad(amask, {0, 1}) end
    if kpm ~= nil then kpm = F.pad(kpm, {0, 1}) end
    S = S + 1
  end
  q = q:reshape(Nb, Lq, H, hd):transpose(2, 3)
  k = k:reshape(Nb, S, H, hd):transpose(2, 3)
  v = v:reshape(Nb, S, H, hd):transpose(2, 3)
  if self.add_zero_attn then
    local z = torch.zeros(Nb, H, 1, hd, {dtype = dtype})
    k, v = torch.cat({k, z}, 3), torch.cat({v, z}, 3)
    if amask ~= nil then amask = F.pad(amask, {0, 1}) end
    if kpm ~= nil then kpm = F.pad(kpm, {0, 1}) end
    S = S + 1
  end
  if causal and (kpm ~= nil or o.need_weights or self.bias_k ~= nil or self.add_zero_attn) then
    amask = torch.ones(Lq, S, {dtype = torch.bool}):triu(1)
    causal = false
  end
  local mask = merge_masks(amask, kpm and kpm:reshape(Nb, 1, 1, S) or nil, dtype)
  local p_drop = rawget(self, "training") and self.dropout or 0.0
  local out, weights
  if o.need_weights then
    -- the explicit composition (PyTorch 1.13's math path): the weights are its softmax
    local s = (q * (1 / math.sqrt(hd))):matmul(k:transpose(-2, -1))
    if mask ~= nil then
      if mask.dtype == torch.bool then s = s:masked_fill(mask, -math.huge) else s = s + mask end
    end
    -- as in PyTorch, the weights returned are those applied (after dropout)
    weights = s:softmax(-1)
    if p_drop > 0 then weights = F.dropout(weights, p_drop) end
    out = weights:matmul(v)
    if o.average_attn_weights then weights = weights:mean(2) end
    if not batched then weights = weights:squeeze(1) end
  else
    if mask ~= nil and mask.dtype == torch.bool then mask = mask:logical_not() end
    out = F.scaled_dot_product_attention(q, k, v, {attn_mask = mask, dropout_p = p_drop, is_causal = causal})
  end
  out = self.out_proj(out:transpose(2, 3):reshape(Nb, Lq, E))
  if not batched then out = out:squeeze(1)
  elseif not self.batch_first then out = out:transpose(1, 2) end
  return out, weights
end

------------------------------------------------------------------------
-- Encoder and decoder layers
------------------------------------------------------------------------

local function activation_fn(fname, a)
  if a == nil or a == "relu" then return F.relu, "relu" end
  if a == "gelu" then return F.gelu, "gelu" end
  if type(a) == "function" then return a, "function" end
  if M.is_module(a) then return nil, "module" end
  error(("%s: activation must be 'relu', 'gelu', a function or a module, got %s"):format(fname, tostring(a)), 4)
end

local LAYER_ARGS = {"dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first", "norm_first",
                    "device", "dtype"}
local LAYER_DEF = {dim_feedforward = 2048, dropout = 0.1, layer_norm_eps = 1e-5, batch_first = false,
                   norm_first = false}

-- The feed-forward block and norms shared by both layer kinds.
local function layer_init(self, fname, d_model, nhead, nnorm, ...)
  local o = U.args(fname, LAYER_ARGS, LAYER_DEF, ...)
  local dt = o.dtype
  self.self_attn = MHA(d_model, nhead, {dropout = o.dropout, batch_first = o.batch_first, dtype = dt})
  if nnorm == 3 then
    self.multihead_attn = MHA(d_model, nhead, {dropout = o.dropout, batch_first = o.batch_first, dtype = dt})
  end
  self.linear1 = L.Linear(d_model, o.dim_feedforward, {dtype = dt})
  self.dropout = Misc.Dropout(o.dropout)
  self.linear2 = L.Linear(o.dim_feedforward, d_model, {dtype = dt})
  self.norm_first, self.batch_first = o.norm_first, o.batch_first
  for i = 1, nnorm do self["norm" .. i] = N.LayerNorm(d_model, {eps = o.layer_norm_eps, dtype = dt}) end
  for i = 1, nnorm do self["dropout" .. i] = Misc.Dropout(o.dropout) end
  if M.is_module(o.activation) then self.activation = o.activation end
  self._act, self._act_name = activation_fn(fname, o.activation)
  self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, o.dim_feedforward
end

local function ff_block(self, x, drop)
  local act = self._act or self.activation
  return drop(self.linear2(self.dropout(act(self.linear1(x)))))
end

local function sa_block(self, attn, drop, x, mem, mask, kpm, causal)
  local out = attn(x, mem or x, mem or x, {attn_mask = mask, key_padding_mask = kpm, need_weights = false,
                                           is_causal = causal})
  return drop(out)
end

local EncoderLayer = Module:extend("TransformerEncoderLayer")
-- TransformerEncoderLayer(d_model, nhead[, dim_feedforward=2048, dropout=0.1,
-- activation='relu' | 'gelu' | function | module, layer_norm_eps=1e-5,
-- batch_first=false, norm_first=false])
function EncoderLayer:__init(d_model, nhead, ...)
  layer_init(self, "nn.TransformerEncoderLayer", d_model, nhead, 2, ...)
end
function EncoderLayer:extra_repr()
  return ("d_model=%d, nhead=%d, dim_feedforward=%d, activation=%s, norm_first=%s"):format(self.d_model, self.nhead,
          self.dim_feedforward, self._act_name, tostring(self.norm_first))
end
local ENC_FWD = {"src_mask", "src_key_padding_mask", "is_causal"}
-- forward(src[, src_mask, src_key_padding_mask, is_causal])
function EncoderLayer:forward(src, ...)
  local o = U.args("TransformerEncoderLayer:forward", ENC_FWD, {is_causal = false}, ...)
  local x = src
  if self.norm_first then
    x = x + sa_block(self, self.self_attn, self.dropout1, self.norm1(x), nil, o.src_mask, o.src_key_padding_mask,
                     o.is_causal)
    x = x + ff_block(self, self.norm2(x), self.dropout2)
  else
    x = self.norm1(x + sa_block(self, self.self_attn, self.dropout1, x, nil, o.src_mask, o.src_key_padding_mask,
                                o.is_causal))
    x = self.norm2(x + ff_block(self, x, self.dropout2))
  end
  return x
end

local DecoderLayer = Module:extend("TransformerDecoderLayer")
-- TransformerDecoderLayer(d_model, nhead[, dim_feedforward=2048, dropout=0.1,
-- activation, layer_norm_eps=1e-5, batch_first=false, norm_first=false])
function DecoderLayer:__init(d_model, nhead, ...)
  layer_init(self, "nn.TransformerDecoderLayer", d_model, nhead, 3, ...)
end
DecoderLayer.extra_repr = EncoderLayer.extra_repr
local DEC_FWD = {"tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask", "tgt_is_causal",
                 "memory_is_causal"}
-- forward(tgt, memory[, tgt_mask, memory_mask, tgt_key_padding_mask,
-- memory_key_padding_mask, tgt_is_causal, memory_is_causal])
function DecoderLayer:forward(tgt, memory, ...)
  local o = U.args("TransformerDecoderLayer:forward", DEC_FWD, {tgt_is_causal = false, memory_is_causal = false}, ...)
  if not is_tensor(memory) then
    error(self:_get_name() .. ": forward(tgt, memory): memory (the encoder output) must be a tensor", 2)
  end
  local x = tgt
  if self.norm_first then
    x = x + sa_block(self, self.self_attn, self.dropout1, self.norm1(x), nil, o.tgt_mask, o.tgt_key_padding_mask,
                     o.tgt_is_causal)
    x = x + sa_block(self, self.multihead_attn, self.dropout2, self.norm2(x), memory, o.memory_mask,
                     o.memory_key_padding_mask, o.memory_is_causal)
    x = x + ff_block(self, self.norm3(x), self.dropout3)
  else
    x = self.norm1(x + sa_block(self, self.self_attn, self.dropout1, x, nil, o.tgt_mask, o.tgt_key_padding_mask,
                                o.tgt_is_causal))
    x = self.norm2(x + sa_block(self, self.multihead_attn, self.dropout2, x, memory, o.memory_mask,
                                o.memory_key_padding_mask, o.memory_is_causal))
    x = self.norm3(x + ff_block(self, x, self.dropout3))
  end
  return x
end

------------------------------------------------------------------------
-- Stacks and the full model
------------------------------------------------------------------------

local function stack_init(self, fname, layer, num_layers, norm)
  if not M.is_module(layer) then error(fname .. ": the first argument must be a layer module", 3) end
  if math.type(num_layers) ~= "integer" or num_layers < 1 then
    error(fname .. ": num_layers must be a positive integer, got " .. tostring(num_layers), 3)
  end
  local list = {}
  for i = 1, num_layers do list[i] = clone_module(layer) end
  self.layers = C.ModuleList(list)
  self.num_layers = num_layers
  if U.opts("nn.TransformerEncoder", norm, "norm") then norm = norm.norm end
  if norm ~= nil then self.norm = norm else self:add_module("norm", nil) end
end

local Encoder = Module:extend("TransformerEncoder")
-- TransformerEncoder(encoder_layer, num_layers[, norm]): num_layers deep
-- copies of encoder_layer (equal initial weights, as in PyTorch), then norm.
function Encoder:__init(layer, num_layers, norm) stack_init(self, "nn.TransformerEncoder", layer, num_layers, norm) end
-- forward(src[, mask, src_key_padding_mask, is_causal])
function Encoder:forward(src, ...)
  local o = U.args("TransformerEncoder:forward", {"mask", "src_key_padding_mask", "is_causal"}, {}, ...)
  local x = src
  for _, layer in ipairs(self.layers) do
    x = layer(x, {src_mask = o.mask, src_key_padding_mask = o.src_key_padding_mask, is_causal = o.is_causal})
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

local Decoder = Module:extend("TransformerDecoder")
-- TransformerDecoder(decoder_layer, num_layers[, norm])
function Decoder:__init(layer, num_layers, norm) stack_init(self, "nn.TransformerDecoder", layer, num_layers, norm) end
-- forward(tgt, memory[, tgt_mask, memory_mask, tgt_key_padding_mask,
-- memory_key_padding_mask, tgt_is_causal, memory_is_causal])
function Decoder:forward(tgt, memory, ...)
  local o = U.args("TransformerDecoder:forward", DEC_FWD, {}, ...)
  local x = tgt
  for _, layer in ipairs(self.layers) do x = layer(x, memory, o) end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

local Transformer = Module:extend("Transformer")
local TF_ARGS = {"d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward", "dropout",
                 "activation", "custom_encoder", "custom_decoder", "layer_norm_eps", "batch_first", "norm_first",
                 "device", "dtype"}
-- Transformer([d_model=512, nhead=8, num_encoder_layers=6,
-- num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, activation='relu',
-- custom_encoder, custom_decoder, layer_norm_eps=1e-5, batch_first=false,
-- norm_first=false])
function Transformer:__init(...)
  local o = U.args("nn.Transformer", TF_ARGS, {d_model = 512, nhead = 8, num_encoder_layers = 6,
                   num_decoder_layers = 6, dim_feedforward = 2048, dropout = 0.1, layer_norm_eps = 1e-5,
                   batch_first = false, norm_first = false}, ...)
  local lo = {dim_feedforward = o.dim_feedforward, dropout = o.dropout, activation = o.activation,
              layer_norm_eps = o.layer_norm_eps, batch_first = o.batch_first, norm_first = o.norm_first,
              dtype = o.dtype}
  local nopts = {eps = o.layer_norm_eps, dtype = o.dtype}
  self.encoder = o.custom_encoder or Encoder(EncoderLayer(o.d_model, o.nhead, lo), o.num_encoder_layers,
                                             N.LayerNorm(o.d_model, nopts))
  self.decoder = o.custom_decoder or Decoder(DecoderLayer(o.d_model, o.nhead, lo), o.num_decoder_layers,
                                             N.LayerNorm(o.d_model, nopts))
  self.d_model, self.nhead, self.batch_first = o.d_model, o.nhead, o.batch_first
  for _, p in ipairs(self:parameters()) do
    if p:dim() > 1 then init.xavier_uniform_(p) end
  end
end

-- forward(src, tgt[, src_mask, tgt_mask, memory_mask, src_key_padding_mask,
-- tgt_key_padding_mask, memory_key_padding_mask])
function Transformer:forward(src, tgt, ...)
  local o = U.args("Transformer:forward", {"src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
                   "tgt_key_padding_mask", "memory_key_padding_mask"}, {}, ...)
  local bdim = self.batch_first and 1 or 2
  if src:dim() ~= tgt:dim() then
    error(("Transformer: src and tgt must have the same rank, got shapes %s and %s"):format(shape_str(src),
          shape_str(tgt)), 2)
  end
  if src:dim() == 3 and src:size(bdim) ~= tgt:size(bdim) then
    error(("Transformer: src and tgt must have the same batch size (dim %d), got shapes %s and %s"):format(bdim,
          shape_str(src), shape_str(tgt)), 2)
  end
  if src:size(-1) ~= self.d_model or tgt:size(-1) ~= self.d_model then
    error(("Transformer: src and tgt must have d_model=%d features, got shapes %s and %s"):format(self.d_model,
          shape_str(src), shape_str(tgt)), 2)
  end
  local memory = self.encoder(src, {mask = o.src_mask, src_key_padding_mask = o.src_key_padding_mask})
  return self.decoder(tgt, memory, {tgt_mask = o.tgt_mask, memory_mask = o.memory_mask,
                      tgt_key_padding_mask = o.tgt_key_padding_mask,
                      memory_key_padding_mask = o.memory_key_padding_mask})
end

-- Transformer.generate_square_subsequent_mask(sz[, dtype]): sz x sz float
-- mask, -inf above the diagonal (future positions) and 0 elsewhere.
function Transformer.generate_square_subsequent_mask(sz, dtype)
  if rawequal(sz, Transformer) or M.is_module(sz) then sz, dtype = dtype, nil end
  if math.type(sz) ~= "integer" or sz < 0 then
    error("Transformer.generate_square_subsequent_mask(sz): sz must be a non-negative integer", 2)
  end
  local m = dtype and torch.full({sz, sz}, -math.huge, {dtype = dtype}) or torch.full({sz, sz}, -math.huge)
  return m:triu(1)
end

T.MultiheadAttention, T.TransformerEncoderLayer, T.TransformerDecoderLayer = MHA, EncoderLayer, DecoderLayer
T.TransformerEncoder, T.TransformerDecoder, T.Transformer = Encoder, Decoder, Transformer
return T
