#!/usr/bin/python3
"""gen_transformer.py -- PyTorch 1.13 reference values for
tests/nn/test_transformer.lua (MultiheadAttention, the encoder/decoder layers
and stacks, Transformer).

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_transformer.py   # writes tests/ref/nn_transformer.lua

Float64, eval mode (dropout off). Each case wraps the module in W, whose
forward calls it with the case's arguments; masks come in as inputs and are
detached (they get no gradient). Parameters are overwritten with gen()
values; the upstream gradient of output k is gen(shape, 99 + k). State dict
keys are stored with 1-based ModuleList names (lua_name)."""
import os

import torch
import torch.nn as nn
from reflib import lua

torch.set_default_dtype(torch.float64)
HERE = os.path.dirname(os.path.abspath(__file__))


def gen(shape, seed):
    n = 1
    for s in shape:
        n *= s
    vals = [((37 * k + 11 * seed) % 101 - 50) / 32 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape)


def T(t):
    t = t.detach()
    d = {"shape": list(t.shape), "data": t.flatten().tolist()}
    if t.dtype == torch.bool:
        d["dtype"] = "bool"
    return d


def lua_name(k):
    return ".".join(str(int(p) + 1) if p.isdigit() else p for p in k.split("."))


class W(nn.Module):
    def __init__(self, m, fn):
        super().__init__()
        self.m, self.fn = m, fn

    def forward(self, *ins):
        return self.fn(self.m, *ins)


def flat(out):
    if out is None:
        return []
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res += flat(o)
    return res


CASES = {}


def case(name, mod, fn, inputs, seed, scale=0.4):
    w = W(mod, fn)
    with torch.no_grad():
        for i, (n, p) in enumerate(w.named_parameters()):
            p.copy_(gen(tuple(p.shape), seed + 10 + i) * scale)
    w.eval()
    ins = []
    for x in inputs:
        x = x.clone()
        if x.is_floating_point():
            x.requires_grad_()
        ins.append(x)
    outs = flat(w(*ins))
    loss = sum((o * gen(tuple(o.shape), 99 + k)).sum() for k, o in enumerate(outs))
    loss.backward()
    CASES[name] = {
        "inputs": [T(x) for x in inputs],
        "outputs": [T(o) for o in outs],
        "gin": [T(x.grad) if x.grad is not None else False for x in ins],
        "state": {lua_name(k): T(v) for k, v in w.state_dict().items()},
        "gparams": {lua_name(n): T(p.grad) for n, p in w.named_parameters() if p.grad is not None},
    }


def causal_float(n):
    return torch.triu(torch.full((n, n), -1e9), diagonal=1)


def kpm(n, s, pads):
    m = torch.zeros(n, s, dtype=torch.bool)
    for b, k in pads:
        m[b, k] = True
    return m


E, H = 8, 2
x = gen((5, 3, E), 1)
case("mha_self_weights", nn.MultiheadAttention(E, H), lambda m, x: m(x, x, x), [x], 1)
case("mha_self_no_weights", nn.MultiheadAttention(E, H), lambda m, x: m(x, x, x, need_weights=False)[0], [x], 2)
case("mha_kdim_vdim_kpm_per_head",
     nn.MultiheadAttention(E, H, kdim=4, vdim=6),
     lambda m, q, k, v, p: m(q, k, v, key_padding_mask=p, average_attn_weights=False),
     [x, gen((7, 3, 4), 3), gen((7, 3, 6), 4), kpm(3, 7, [(0, 6), (2, 0), (2, 3)])], 3)
case("mha_batch_first_float_mask_kpm",
     nn.MultiheadAttention(E, H, batch_first=True),
     lambda m, x, am, p: m(x, x, x, attn_mask=am.detach(), key_padding_mask=p, need_weights=False)[0],
     [gen((3, 5, E), 5), causal_float(5) + gen((5, 5), 6) * 0.1, kpm(3, 5, [(1, 4)])], 5)
case("mha_batch_first_float_mask_kpm_weights",
     nn.MultiheadAttention(E, H, batch_first=True),
     lambda m, x, am, p: m(x, x, x, attn_mask=am.detach(), key_padding_mask=p),
     [gen((3, 5, E), 5), causal_float(5) + gen((5, 5), 6) * 0.1, kpm(3, 5, [(1, 4)])], 5)
bool3 = torch.zeros(3 * H, 5, 4, dtype=torch.bool)
bool3[0, 1, 2] = bool3[3, 4, 0] = bool3[5, 2, 3] = bool3[5, 2, 1] = True
case("mha_bool_3d_mask_cross",
     nn.MultiheadAttention(E, H),
     lambda m, q, kv, am: m(q, kv, kv, attn_mask=am),
     [x, gen((4, 3, E), 7), bool3], 7)
case("mha_bool_3d_mask_cross_no_weights",
     nn.MultiheadAttention(E, H),
     lambda m, q, kv, am: m(q, kv, kv, attn_mask=am, need_weights=False)[0],
     [x, gen((4, 3, E), 7), bool3], 7)
case("mha_unbatched_kpm", nn.MultiheadAttention(E, H),
     lambda m, x, p: m(x, x, x, key_padding_mask=p),
     [gen((5, E), 8), torch.tensor([False, False, True, False, False])], 8)
case("mha_bias_kv_zero_attn", nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True),
     lambda m, x, p: m(x, x, x, key_padding_mask=p),
     [x, kpm(3, 5, [(0, 1)])], 9)
case("mha_nobias_4heads", nn.MultiheadAttention(E, 4, bias=False),
     lambda m, x: m(x, x, x, need_weights=False)[0], [x], 10)

src, tgt = gen((5, 3, E), 20), gen((4, 3, E), 21)
smask = kpm(3, 5, [(0, 4), (2, 1)])
case("enc_layer_post_relu", nn.TransformerEncoderLayer(E, H, dim_feedforward=16),
     lambda m, s, am, p: m(s, src_mask=am.detach(), src_key_padding_mask=p),
     [src, causal_float(5), smask], 20)
case("enc_layer_pre_gelu_batch_first",
     nn.TransformerEncoderLayer(E, H, dim_feedforward=16, activation="gelu", batch_first=True, norm_first=True),
     lambda m, s: m(s), [src.transpose(0, 1).contiguous()], 21)
case("dec_layer_post_relu", nn.TransformerDecoderLayer(E, H, dim_feedforward=16),
     lambda m, t, mem, tm, p: m(t, mem, tgt_mask=tm.detach(), memory_key_padding_mask=p),
     [tgt, src, causal_float(4), smask], 22)
case("dec_layer_pre_gelu_batch_first",
     nn.TransformerDecoderLayer(E, H, dim_feedforward=16, activation="gelu", batch_first=True, norm_first=True),
     lambda m, t, mem, tm: m(t, mem, tgt_mask=tm),
     [tgt.transpose(0, 1).contiguous(), src.transpose(0, 1).contiguous(),
      torch.ones(4, 4, dtype=torch.bool).triu(1)], 23)
case("encoder_2_layers_norm",
     nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, dim_feedforward=16), 2, norm=nn.LayerNorm(E)),
     lambda m, s, p: m(s, src_key_padding_mask=p), [src, smask], 24)
case("decoder_2_layers",
     nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, dim_feedforward=16, norm_first=True), 2),
     lambda m, t, mem: m(t, mem), [tgt, src], 25)
case("transformer_full",
     nn.Transformer(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16),
     lambda m, s, t, tm, p: m(s, t, tgt_mask=tm.detach(), src_key_padding_mask=p, memory_key_padding_mask=p),
     [src, tgt, nn.Transformer.generate_square_subsequent_mask(4).clamp(min=-1e9), smask], 26, scale=0.3)

with open(os.path.join(HERE, "nn_transformer.lua"), "w") as f:
    f.write("-- tests/ref/nn_transformer.lua -- generated by tests/ref/gen_transformer.py (PyTorch %s); do not edit.\n"
            % torch.__version__)
    f.write("return " + lua(CASES, indent="") + "\n")
