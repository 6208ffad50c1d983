-- tests/nn/test_transformer.lua -- MultiheadAttention (masks, kdim/vdim,
-- batch_first, unbatched, need_weights, bias_kv/zero_attn), the encoder and
-- decoder layers (post/pre norm, relu/gelu), the stacks and Transformer
-- against PyTorch 1.13 outputs and gradients (tests/ref/nn_transformer.lua,
-- from gen_transformer.py), float64, eval mode; names, errors, the SDPA path.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
R.use(_ENV)
local nn = require "torch.nn"
local refs = ref("nn_transformer")

-- W(m, fn): the module m under the name "m", called as fn(m, inputs...)
-- (gen_transformer.py's wrapper, so the state dict keys agree).
local W = nn.Module:extend("W")
function W:__init(m, fn) self.m = m; self.fn = fn end
function W:forward(...) return self.fn(self.m, ...) end

local E, H = 8, 2
local function mha(...) local a = {...}; return function() return nn.MultiheadAttention(E, H, table.unpack(a)) end end
local function d(t) return t:detach() end

local cases = {
  mha_self_weights = {mha(), function(m, x) return m(x, x, x) end},
  mha_self_no_weights = {mha(), function(m, x) return (m(x, x, x, {need_weights = false})) end},
  mha_kdim_vdim_kpm_per_head = {mha{kdim = 4, vdim = 6},
    function(m, q, k, v, p) return m(q, k, v, {key_padding_mask = p, average_attn_weights = false}) end},
  mha_batch_first_float_mask_kpm = {mha{batch_first = true}, function(m, x, am, p)
    return (m(x, x, x, {attn_mask = d(am), key_padding_mask = p, need_weights = false})) end},
  mha_batch_first_float_mask_kpm_weights = {mha{batch_first = true},
    function(m, x, am, p) return m(x, x, x, {attn_mask = d(am), key_padding_mask = p}) end},
  mha_bool_3d_mask_cross = {mha(), function(m, q, kv, am) return m(q, kv, kv, {attn_mask = am}) end},
  mha_bool_3d_mask_cross_no_weights = {mha(),
    function(m, q, kv, am) return (m(q, kv, kv, {attn_mask = am, need_weights = false})) end},
  mha_unbatched_kpm = {mha(), function(m, x, p) return m(x, x, x, {key_padding_mask = p}) end},
  mha_bias_kv_zero_attn = {mha{add_bias_kv = true, add_zero_attn = true},
    function(m, x, p) return m(x, x, x, {key_padding_mask = p}) end},
  mha_nobias_4heads = {function() return nn.MultiheadAttention(E, 4, {bias = false}) end,
    function(m, x) return (m(x, x, x, {need_weights = false})) end},
  enc_layer_post_relu = {function() return nn.TransformerEncoderLayer(E, H, 16) end,
    function(m, s, am, p) return m(s, {src_mask = d(am), src_key_padding_mask = p}) end},
  enc_layer_pre_gelu_batch_first = {function()
    return nn.TransformerEncoderLayer(E, H, {dim_feedforward = 16, activation = "gelu", batch_first = true,
                                             norm_first = true}) end,
    function(m, s) return m(s) end},
  dec_layer_post_relu = {function() return nn.TransformerDecoderLayer(E, H, 16) end,
    function(m, t, mem, tm, p) return m(t, mem, {tgt_mask = d(tm), memory_key_padding_mask = p}) end},
  dec_layer_pre_gelu_batch_first = {function()
    return nn.TransformerDecoderLayer(E, H, {dim_feedforward = 16, activation = "gelu", batch_first = true,
                                             norm_first = true}) end,
    function(m, t, mem, tm) return m(t, mem, {tgt_mask = tm}) end},
  encoder_2_layers_norm = {function()
    return nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 16), 2, nn.LayerNorm(E)) end,
    function(m, s, p) return m(s, {src_key_padding_mask = p}) end},
  decoder_2_layers = {function()
    return nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, {dim_feedforward = 16, norm_first = true}), 2) end,
    function(m, t, mem) return m(t, mem) end},
  transformer_full = {function()
    return nn.Transformer{d_model = E, nhead = H, num_encoder_layers = 2, num_decoder_layers = 1,
                          dim_feedforward = 16} end,
    function(m, s, t, tm, p)
      return m(s, t, {tgt_mask = d(tm), src_key_padding_mask = p, memory_key_padding_mask = p})
    end},
}

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  local c = cases[name]
  -- every case runs in eval mode (the reference's dropout is off)
  refs[name .. "_eval"] = refs[name]
  R.module_tests(refs, name .. "_eval", function() return W(c[1](), c[2]) end)
end

test("state_dict keys are PyTorch's (1-based layer indices)", function()
  local t = nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1,
                           dim_feedforward = 16}
  local keys = {}
  for k in pairs(t:state_dict()) do keys[k] = true end
  for _, k in ipairs{"encoder.layers.1.self_attn.in_proj_weight", "encoder.layers.1.self_attn.in_proj_bias",
                     "encoder.layers.1.self_attn.out_proj.weight", "encoder.layers.1.linear1.weight",
                     "encoder.layers.1.linear2.bias", "encoder.layers.1.norm2.weight", "encoder.norm.weight",
                     "decoder.layers.1.multihead_attn.in_proj_weight", "decoder.layers.1.norm3.bias",
                     "decoder.norm.bias"} do
    check(keys[k], "missing key " .. k)
  end
  local n = 0
  for _ in pairs(keys) do n = n + 1 end
  check_eq(n, 12 + 2 + 18 + 2)
  local m = nn.MultiheadAttention(8, 2, {kdim = 3, vdim = 5})
  local sd = m:state_dict()
  check_shape(sd.q_proj_weight, {8, 8}); check_shape(sd.k_proj_weight, {8, 3}); check_shape(sd.v_proj_weight, {8, 5})
  check(sd.in_proj_weight == nil, "no in_proj_weight when kdim/vdim differ")
end)

test("the stacks hold deep copies: equal initial weights, separate tensors", function()
  torch.manual_seed(0)
  local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 3)
  local a, b = enc.layers[1].linear1.weight, enc.layers[3].linear1.weight
  check(torch.equal(a, b), "copies start equal")
  torch.no_grad(function() a:add_(1) end)
  check(not torch.equal(a, b), "copies do not share storage")
  check_eq(#enc:parameters(), 3 * 12)
end)

test("need_weights=false (SDPA) and the explicit composition agree in float32, with masks and causal", function()
  torch.manual_seed(1)
  local m = nn.MultiheadAttention(16, 4, {batch_first = true})
  local x = torch.randn(2, 9, 16)
  local kpm = torch.zeros(2, 9, {dtype = torch.bool}); kpm[{1, 9}] = true
  local causal = torch.ones(9, 9, {dtype = torch.bool}):triu(1)
  local o1 = m(x, x, x, {key_padding_mask = kpm, attn_mask = causal})
  local o2 = m(x, x, x, {key_padding_mask = kpm, attn_mask = causal, need_weights = false})
  check_close(o2, o1, {atol = 1e-5, rtol = 1e-4})
  local o3 = m(x, x, x, {is_causal = true, need_weights = false})
  local o4 = m(x, x, x, {attn_mask = causal})
  check_close(o3, o4, {atol = 1e-5, rtol = 1e-4})
  local _, w = m(x, x, x, {is_causal = true})
  check_close(w:sum(-1), torch.ones(2, 9), {atol = 1e-5})
  check_eq(w[{1, 1, 2}]:item(), 0)
end)

test("generate_square_subsequent_mask is -inf above the diagonal", function()
  local mk = nn.Transformer.generate_square_subsequent_mask(3)
  check_eq(mk:totable(), {{0, -math.huge, -math.huge}, {0, 0, -math.huge}, {0, 0, 0}})
end)

test("bad arguments are clear errors", function()
  check_error(function() nn.MultiheadAttention(10, 3) end, "embed_dim (10) must be divisible by num_heads (3)")
  check_error(function() nn.MultiheadAttention(8, 0) end, "must be positive integers")
  local m = nn.MultiheadAttention(8, 2)
  local x = torch.randn(5, 3, 8)
  check_error(function() m(torch.randn(5, 3, 6), x, x) end, "expected query with last dimension embed_dim=8")
  check_error(function() m(x, torch.randn(4, 3, 8), torch.randn(5, 3, 8)) end, "one sequence length")
  check_error(function() m(x, x, x, {attn_mask = torch.zeros(4, 5)}) end,
              "attn_mask must have shape (L, S) = 5x5 or (batch*num_heads, L, S) = 6x5x5, got 4x5")
  check_error(function() m(x, x, x, {attn_mask = torch.zeros(3, 5, 5)}) end, "got 3x5x5")
  check_error(function() m(x, x, x, {key_padding_mask = torch.zeros(5, 3, {dtype = torch.bool})}) end,
              "key_padding_mask must have shape (batch, source length) = 3x5, got 5x3")
  check_error(function() m(x, x, x, {attn_mask = torch.zeros(5, 5, {dtype = torch.int64})}) end,
              "attn_mask must be bool (true = masked out) or torch.float32")
  check_error(function() m(x, x, x, {attn_mask = torch.zeros(5, 5, {dtype = torch.float64})}) end,
              "got torch.float64")
  check_error(function() m(x:double(), x, x) end, "must share one floating dtype")
  check_error(function() m(x, x, x, {need_weight = true}) end, "unknown option 'need_weight'")
  check_error(function() nn.TransformerEncoderLayer(8, 2, {activation = "tanh"}) end,
              "activation must be 'relu', 'gelu', a function or a module")
  local t = nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1,
                           dim_feedforward = 16}
  check_error(function() t(x, torch.randn(4, 2, 8)) end, "same batch size")
  check_error(function() nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 0) end,
              "num_layers must be a positive integer")
end)

test("a fully masked row gives NaN, as in PyTorch", function()
  local m = nn.MultiheadAttention(4, 1)
  local x = torch.randn(3, 1, 4)
  local kpm = torch.ones(1, 3, {dtype = torch.bool})
  local o = m(x, x, x, {key_padding_mask = kpm, need_weights = false})
  check(o:isnan():all():item(), "all-NaN output")
end)

test("training with dropout changes outputs; eval is deterministic", function()
  torch.manual_seed(3)
  local l = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0.5})
  local x = torch.randn(4, 2, 8)
  local a, b = l(x), l(x)
  check(not torch.equal(a, b), "dropout is active in training")
  l:eval()
  check(torch.equal(l(x), l(x)), "eval mode is deterministic")
end)
