#!/usr/bin/python3
"""gen_distributions.py -- torch 1.13 references for torch.distributions
(tests/nn/test_distributions.lua) and for torch.rl.modules' TanhNormal
(tests/domains/rl/test_rl_distributions.lua): log_prob, cdf, entropy,
moments and kl_divergence at fixed parameters and values, float64.

    cd tests/ref && /usr/bin/python3 gen_distributions.py   # writes distributions.lua

Categorical values are stored 1-based (moontorch's indices): PyTorch's
value + 1. TanhNormal follows TorchRL's definition: loc (tanh-scaled by
upscale when tanh_loc) and scale make an Independent Normal over the last
event_dims dims, pushed through tanh and the affine map of [-1, 1] onto
[low, high]; its reference is built from torch 1.13's own distributions."""
import math
import torch
import torch.distributions as D
from reflib import lua

torch.manual_seed(11)
f64 = torch.float64


def T(*shape):
    return torch.randn(*shape, dtype=f64)


out = {}

# Normal
loc, scale = T(2, 3), torch.rand(2, 3, dtype=f64) + 0.3
x = T(4, 2, 3) * 2
n = D.Normal(loc, scale)
out["normal"] = {"loc": loc, "scale": scale, "x": x, "log_prob": n.log_prob(x), "cdf": n.cdf(x),
                 "entropy": n.entropy(), "variance": n.variance}
ind = D.Independent(n, 1)
out["independent"] = {"log_prob": ind.log_prob(x), "entropy": ind.entropy()}

# Categorical from probs (unnormalized) and from logits with a -inf
probs = torch.rand(3, 4, dtype=f64) + 0.05
probs[1, 2] = 0.0
logits = T(3, 4)
logits[2, 0] = -math.inf
vals = torch.tensor([[0, 3, 1], [2, 2, 0]])  # (2, 3): sample dims then batch
cp, cl = D.Categorical(probs=probs), D.Categorical(logits=logits)
out["categorical"] = {
    "probs": probs, "logits": logits, "values": vals + 1,
    "p_log_prob": cp.log_prob(vals), "p_entropy": cp.entropy(), "p_probs": cp.probs, "p_logits": cp.logits,
    "l_log_prob": cl.log_prob(vals), "l_entropy": cl.entropy(), "l_probs": cl.probs, "l_logits": cl.logits,
    "p_mode": cp.mode + 1, "l_mode": cl.mode + 1,
}
oh = torch.nn.functional.one_hot(vals, 4).to(f64)
op = D.OneHotCategorical(probs=probs)
out["one_hot"] = {"log_prob": op.log_prob(oh), "entropy": op.entropy(), "variance": op.variance}

# Bernoulli
bp = torch.tensor([0.1, 0.5, 0.9, 0.0, 1.0, 0.3], dtype=f64)
bl = T(6)
bv = torch.tensor([[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]], dtype=f64)
b1, b2 = D.Bernoulli(probs=bp), D.Bernoulli(logits=bl)
out["bernoulli"] = {"probs": bp, "logits": bl, "values": bv, "p_log_prob": b1.log_prob(bv),
                    "p_entropy": b1.entropy(), "p_logits": b1.logits, "p_mode": b1.mode, "p_variance": b1.variance,
                    "l_log_prob": b2.log_prob(bv), "l_entropy": b2.entropy(), "l_probs": b2.probs}

# Uniform
lo = T(3)
hi = lo + torch.rand(3, dtype=f64) * 3 + 0.1
uv = lo + (hi - lo) * torch.rand(5, 3, dtype=f64)
u = D.Uniform(lo, hi)
out["uniform"] = {"low": lo, "high": hi, "x": uv, "log_prob": u.log_prob(uv), "cdf": u.cdf(uv),
                  "entropy": u.entropy(), "mean": u.mean, "stddev": u.stddev, "variance": u.variance}

# Transforms and TransformedDistribution
tx = T(2, 3)
ty = torch.tanh(T(2, 3))
aff = D.AffineTransform(torch.tensor([0.5, -1.0, 2.0], dtype=f64), torch.tensor([2.0, -0.5, 3.0], dtype=f64))
out["transforms"] = {
    "x": tx, "y": ty,
    "tanh": torch.tanh(tx), "tanh_inv": D.TanhTransform().inv(ty),
    "tanh_ladj": D.TanhTransform().log_abs_det_jacobian(tx, torch.tanh(tx)),
    "sigmoid_ladj": D.SigmoidTransform().log_abs_det_jacobian(tx, torch.sigmoid(tx)),
    "sigmoid_inv": D.SigmoidTransform().inv(torch.sigmoid(tx)),
    "exp_ladj": D.ExpTransform().log_abs_det_jacobian(tx, torch.exp(tx)),
    "affine": aff(tx), "affine_inv": aff.inv(tx), "affine_ladj": aff.log_abs_det_jacobian(tx, aff(tx)),
    "affine_ed1_ladj": D.AffineTransform(torch.tensor([0.5, -1.0, 2.0], dtype=f64),
                                         torch.tensor([2.0, -0.5, 3.0], dtype=f64),
                                         event_dim=1).log_abs_det_jacobian(tx, aff(tx)),
}
tn = D.TransformedDistribution(D.Normal(loc, scale), [D.TanhTransform()])
tv = torch.tanh(x) * 0.999
ln = D.TransformedDistribution(D.Normal(loc, scale), [D.ExpTransform()])
lv = torch.exp(x)
sa = D.TransformedDistribution(D.Independent(D.Normal(loc, scale), 1),
                               [D.SigmoidTransform(), D.AffineTransform(-1.0, 4.0)])
sv = torch.sigmoid(x) * 4 - 1
out["transformed"] = {"tanh_x": tv, "tanh_log_prob": tn.log_prob(tv), "exp_x": lv, "exp_log_prob": ln.log_prob(lv),
                      "exp_cdf": ln.cdf(lv), "sa_x": sv, "sa_log_prob": sa.log_prob(sv)}

# kl_divergence
loc2, scale2 = T(2, 3), torch.rand(2, 3, dtype=f64) + 0.3
probs2 = torch.rand(3, 4, dtype=f64) + 0.05
probs3 = probs2.clone()
probs3[0, 1] = 0.0
lo2 = lo - torch.rand(3, dtype=f64)
hi2 = hi + torch.rand(3, dtype=f64)
hi2[2] = hi[2] - 0.05
out["kl"] = {
    "loc2": loc2, "scale2": scale2, "probs2": probs2, "probs3": probs3, "low2": lo2, "high2": hi2,
    "normal": D.kl_divergence(n, D.Normal(loc2, scale2)),
    "independent": D.kl_divergence(ind, D.Independent(D.Normal(loc2, scale2), 1)),
    "categorical": D.kl_divergence(cp, D.Categorical(probs=probs2)),
    "categorical_zero": D.kl_divergence(cp, D.Categorical(probs=probs3)),
    "one_hot": D.kl_divergence(op, D.OneHotCategorical(probs=probs2)),
    "bernoulli": D.kl_divergence(D.Bernoulli(probs=bp), D.Bernoulli(logits=bl)),
    "uniform": D.kl_divergence(u, D.Uniform(lo2, hi2)),
}


# TorchRL's TanhNormal from torch 1.13's pieces
def tanh_normal(loc, scale, low, high, upscale, tanh_loc, event_dims):
    if tanh_loc:
        loc = torch.tanh(loc / upscale) * upscale
    ts = [D.TanhTransform()]
    if not (torch.all(torch.as_tensor(low) == -1) and torch.all(torch.as_tensor(high) == 1)):
        ts.append(D.AffineTransform((high + low) / 2, (high - low) / 2))
    base = D.Independent(D.Normal(loc, scale), event_dims)
    d = D.TransformedDistribution(base, ts)
    m = loc
    for t in ts:
        m = t(m)
    return d, m


tl, tsc = T(5, 2) * 3, torch.rand(5, 2, dtype=f64) + 0.2
low, high = torch.tensor([-2.0, 0.0], dtype=f64), torch.tensor([1.0, 3.0], dtype=f64)
tanh_cases = []
for name, lw, hg, up, tloc in [("default", -1.0, 1.0, 5.0, False), ("tanh_loc", -1.0, 1.0, 2.0, True),
                               ("bounds", low, high, 5.0, False), ("bounds_tanh_loc", low, high, 3.0, True)]:
    d, mode = tanh_normal(tl, tsc, lw, hg, up, tloc, 1)
    lw_t, hg_t = torch.as_tensor(lw, dtype=f64), torch.as_tensor(hg, dtype=f64)
    y = lw_t + (hg_t - lw_t) * (0.02 + 0.96 * torch.rand(3, 5, 2, dtype=f64))
    tanh_cases.append({"name": name, "low": lw_t.expand(2), "high": hg_t.expand(2), "upscale": up, "tanh_loc": tloc,
                       "y": y, "log_prob": d.log_prob(y), "mode": mode})
out["tanh_normal"] = {"loc": tl, "scale": tsc, "cases": tanh_cases}


def flat(v):
    if isinstance(v, dict):
        return {k: flat(x) for k, x in v.items()}
    if isinstance(v, list):
        return [flat(x) for x in v]
    if torch.is_tensor(v):
        return {"shape": list(v.shape), "data": v.reshape(-1)}
    return v


with open("distributions.lua", "w") as f:
    f.write("-- generated by tests/ref/gen_distributions.py (torch %s); do not edit\n" % torch.__version__)
    f.write("return " + lua(flat(out), indent="") + "\n")
