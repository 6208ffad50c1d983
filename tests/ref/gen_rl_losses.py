#!/usr/bin/python3
"""gen_rl_losses.py -- references for torch.rl.objectives' losses
(tests/domains/rl/test_objectives.lua), computed here in float64 with
torch 1.13 from the published formulas as TorchRL implements them: DQN
(+ double DQN), ClipPPO and KLPENPPO (with GAE), A2C, Reinforce, DDPG,
TD3 (target policy smoothing with fixed noise), SAC (fixed
reparameterization noise) and discrete SAC.

    cd tests/ref && /usr/bin/python3 gen_rl_losses.py   # writes rl_losses.lua

Every network is Linear(in, 5) -> Tanh -> Linear(5, out); its weights are
stored (w1, b1, w2, b2) with the inputs, so the Lua test builds the same
networks. Discrete actions are stored 1-based (PyTorch's index + 1)."""
import math
import torch
import torch.nn.functional as F
import torch.distributions as D
from reflib import lua

torch.manual_seed(2026)
f64 = torch.float64
H = 5
B, OBS, ACT, NA = 6, 3, 2, 3


def net(i, o):
    """Weights of a Linear(i, H) -> Tanh -> Linear(H, o) network."""
    return {"w1": torch.randn(H, i, dtype=f64) * 0.6, "b1": torch.randn(H, dtype=f64) * 0.2,
            "w2": torch.randn(o, H, dtype=f64) * 0.6, "b2": torch.randn(o, dtype=f64) * 0.2}


def run(w, *xs):
    x = torch.cat(xs, -1)
    return torch.tanh(x @ w["w1"].T + w["b1"]) @ w["w2"].T + w["b2"]


def dist_loss(a, b, kind):
    if kind == "l2":
        return (a - b) ** 2
    if kind == "l1":
        return (a - b).abs()
    return F.smooth_l1_loss(a, b, reduction="none")


def T(x):
    return {"shape": list(x.shape), "data": x.reshape(-1).tolist()}


def NET(w):
    return {k: T(v) for k, v in w.items()}


def transitions():
    obs, nobs = torch.randn(B, OBS, dtype=f64), torch.randn(B, OBS, dtype=f64)
    r = torch.randn(B, 1, dtype=f64)
    term = torch.tensor([0, 0, 1, 0, 0, 1], dtype=torch.bool).view(B, 1)
    return obs, nobs, r, term


out = {}

# ---------------------------------------------------------------- DQN
obs, nobs, r, term = transitions()
qw, qtw = net(OBS, NA), net(OBS, NA)
act = torch.randint(0, NA, (B,))
gamma = 0.9
q = run(qw, obs)
pred = q.gather(-1, act.unsqueeze(-1)).squeeze(-1)
qt_next, qo_next = run(qtw, nobs), run(qw, nobs)
nf = (~term).to(f64)
tgt_plain = (r + gamma * nf * qt_next.max(-1, keepdim=True)[0]).squeeze(-1)
tgt_double = (r + gamma * nf * qt_next.gather(-1, qo_next.argmax(-1, keepdim=True))).squeeze(-1)
out["dqn"] = {"obs": T(obs), "next_obs": T(nobs), "reward": T(r), "terminated": T(term.int()), "action": T(act + 1),
              "q": NET(qw), "q_target": NET(qtw), "gamma": gamma,
              "loss_l2": dist_loss(pred, tgt_plain, "l2").mean().item(),
              "loss_smooth_l1": dist_loss(pred, tgt_plain, "smooth_l1").mean().item(),
              "loss_double": dist_loss(pred, tgt_double, "l2").mean().item(),
              "td_error": T((pred - tgt_plain) ** 2)}

# ---------------------------------------------------------------- PPO / A2C / Reinforce (discrete, GAE)
Tn = 6
obs, nobs = torch.randn(Tn, OBS, dtype=f64), torch.randn(Tn, OBS, dtype=f64)
r = torch.randn(Tn, 1, dtype=f64)
term = torch.tensor([0, 0, 1, 0, 0, 0], dtype=torch.bool).view(Tn, 1)
done = torch.tensor([0, 0, 1, 0, 1, 0], dtype=torch.bool).view(Tn, 1)
aw, cw = net(OBS, NA), net(OBS, 1)
act = torch.randint(0, NA, (Tn,))
old_lp = -torch.rand(Tn, dtype=f64) * 2 - 0.2
gamma, lmbda = 0.9, 0.8


def gae(v, nv):
    adv = torch.zeros_like(v)
    a = torch.zeros(1, dtype=f64)
    for t in reversed(range(Tn)):
        delta = r[t] + gamma * (1 - term[t].to(f64)) * nv[t] - v[t]
        a = delta + gamma * lmbda * (1 - done[t].to(f64)) * a
        adv[t] = a
    return adv, adv + v


v, nv = run(cw, obs), run(cw, nobs)
adv, vt = gae(v, nv)
dist = D.Categorical(logits=run(aw, obs))
lp = dist.log_prob(act)
ent = dist.entropy()
crit = dist_loss(vt, v, "smooth_l1").mean()


def clip_ppo(adv, eps=0.2, ent_coef=0.01, crit_coef=1.0):
    lw = (lp - old_lp).unsqueeze(-1)
    g1 = lw.exp() * adv
    lwc = lw.clamp(math.log(1 - eps), math.log(1 + eps))
    g2 = lwc.exp() * adv
    l = lw.squeeze(-1)
    ess = (2 * l.logsumexp(0) - (2 * l).logsumexp(0)).exp() / Tn
    return {"loss_objective": -torch.minimum(g1, g2).mean().item(), "clip_fraction": (lwc != lw).to(f64).mean().item(),
            "ESS": ess.item(), "entropy": ent.mean().item(), "loss_entropy": -ent_coef * ent.mean().item(),
            "loss_critic": crit_coef * crit.item(), "kl_approx": (old_lp - lp).mean().item()}


norm_adv = (adv - adv.mean()) / adv.std().clamp_min(1e-6)
out["pg"] = {"obs": T(obs), "next_obs": T(nobs), "reward": T(r), "terminated": T(term.int()), "done": T(done.int()),
             "action": T(act + 1), "old_log_prob": T(old_lp), "actor": NET(aw), "critic": NET(cw), "gamma": gamma,
             "lmbda": lmbda, "advantage": T(adv), "value_target": T(vt),
             "clip": clip_ppo(adv), "clip_norm": clip_ppo(norm_adv, 0.1, 0.05, 0.5),
             "a2c": {"loss_objective": -(lp.unsqueeze(-1) * adv).mean().item(), "entropy": ent.mean().item(),
                     "loss_entropy": -0.01 * ent.mean().item(), "loss_critic": crit.item()},
             "reinforce": {"loss_actor": -(lp.unsqueeze(-1) * adv).mean().item(),
                           "loss_value": dist_loss(vt, v, "l2").mean().item()}}

# ---------------------------------------------------------------- KLPEN (IndependentNormal)
kw = net(OBS, 2 * ACT)
act_c = torch.randn(Tn, ACT, dtype=f64)
old_loc, old_scale = torch.randn(Tn, ACT, dtype=f64) * 0.3, torch.rand(Tn, ACT, dtype=f64) + 0.5
p = run(kw, obs)
loc, scale = p[:, :ACT], F.softplus(p[:, ACT:]) + 0.1
cur = D.Independent(D.Normal(loc, scale), 1)
prev = D.Independent(D.Normal(old_loc, old_scale), 1)
old_lp_c = prev.log_prob(act_c)
lw = (cur.log_prob(act_c) - old_lp_c).unsqueeze(-1)
kl = D.kl_divergence(prev, cur).unsqueeze(-1)
beta0 = 1.0
neg = lw.exp() * adv - beta0 * kl
klm = kl.mean().item()
dtarg = 0.01
beta1 = beta0 * (2.0 if klm > dtarg * 1.5 else (0.5 if klm < dtarg / 1.5 else 1.0))
out["klpen"] = {"actor": NET(kw), "action": T(act_c), "old_loc": T(old_loc), "old_scale": T(old_scale),
                "old_log_prob": T(old_lp_c), "loss_objective": -neg.mean().item(), "kl": klm, "beta_after": beta1,
                "entropy": cur.entropy().mean().item()}

# ---------------------------------------------------------------- DDPG
obs, nobs, r, term = transitions()
pw, vw, vtw = net(OBS, ACT), net(OBS + ACT, 1), net(OBS + ACT, 1)
act_c = torch.rand(B, ACT, dtype=f64) * 2 - 1
gamma = 0.95


def mu(w, x):
    return torch.tanh(run(w, x))


loss_actor = -run(vw, obs, mu(pw, obs)).mean()
pred = run(vw, obs, act_c).squeeze(-1)
tgt = (r + gamma * (~term).to(f64) * run(vtw, nobs, mu(pw, nobs))).squeeze(-1)
out["ddpg"] = {"obs": T(obs), "next_obs": T(nobs), "reward": T(r), "terminated": T(term.int()), "action": T(act_c),
               "actor": NET(pw), "value": NET(vw), "value_target": NET(vtw), "gamma": gamma,
               "loss_actor": loss_actor.item(), "loss_value": dist_loss(pred, tgt, "l2").mean().item(),
               "pred_value": pred.mean().item(), "target_value": tgt.mean().item()}

# ---------------------------------------------------------------- TD3
pw, ptw = net(OBS, ACT), net(OBS, ACT)
q1, q2, qt1, qt2 = (net(OBS + ACT, 1) for _ in range(4))
noise = torch.randn(B, ACT, dtype=f64) * 0.4  # the already scaled N(0, policy_noise^2) draw
policy_noise, noise_clip = 0.2, 0.5
loss_actor = -run(q1, obs, mu(pw, obs)).mean()
na = (mu(ptw, nobs) + noise.clamp(-noise_clip, noise_clip)).clamp(-1, 1)
nv = torch.minimum(run(qt1, nobs, na), run(qt2, nobs, na))
tgt = (r + gamma * (~term).to(f64) * nv).squeeze(-1)
preds = torch.stack([run(q1, obs, act_c), run(q2, obs, act_c)]).squeeze(-1)
loss_q = dist_loss(preds, tgt.expand_as(preds), "smooth_l1").sum(0).mean()
out["td3"] = {"actor": NET(pw), "actor_target": NET(ptw), "q1": NET(q1), "q2": NET(q2), "qt1": NET(qt1),
              "qt2": NET(qt2), "noise": T(noise), "next_action": T(na), "loss_actor": loss_actor.item(),
              "loss_qvalue": loss_q.item(), "target_value": tgt.mean().item(), "next_state_value": nv.mean().item()}

# ---------------------------------------------------------------- SAC (TanhNormal, fixed noise)
sw = net(OBS, 2 * ACT)
eps_next, eps_cur = torch.randn(B, ACT, dtype=f64), torch.randn(B, ACT, dtype=f64)
alpha = 0.7


def tanh_normal(x, eps):
    p = run(sw, x)
    loc, scale = p[:, :ACT], F.softplus(p[:, ACT:]) + 0.1
    u = loc + scale * eps
    a = torch.tanh(u)
    lp = D.Normal(loc, scale).log_prob(u).sum(-1) - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
    return a, lp


na, nlp = tanh_normal(nobs, eps_next)
nv = torch.minimum(run(qt1, nobs, na), run(qt2, nobs, na)) - alpha * nlp.unsqueeze(-1)
tgt = (r + gamma * (~term).to(f64) * nv).squeeze(-1)
preds = torch.stack([run(q1, obs, act_c), run(q2, obs, act_c)]).squeeze(-1)
a, lp = tanh_normal(obs, eps_cur)
qmin = torch.minimum(run(q1, obs, a), run(q2, obs, a)).squeeze(-1)
target_entropy = -ACT
log_alpha = math.log(alpha)
out["sac"] = {"actor": NET(sw), "eps_next": T(eps_next), "eps_cur": T(eps_cur), "alpha": alpha,
              "loss_qvalue": dist_loss(preds, tgt.expand_as(preds), "smooth_l1").sum(0).mean().item(),
              "loss_qvalue_l2": dist_loss(preds, tgt.expand_as(preds), "l2").sum(0).mean().item(),
              "loss_actor": (alpha * lp - qmin).mean().item(),
              "loss_alpha": (-log_alpha * (lp + target_entropy)).mean().item(),
              "entropy": -lp.mean().item(), "target": T(tgt)}

# ---------------------------------------------------------------- discrete SAC
aw = net(OBS, NA)
dq1, dq2, dqt1, dqt2 = (net(OBS, NA) for _ in range(4))
act = torch.randint(0, NA, (B,))
alpha = 0.5


def pl(x):
    pr = torch.softmax(run(aw, x), -1)
    return pr, torch.log(torch.where(pr == 0, torch.full_like(pr, 1e-8), pr))


npr, nlp = pl(nobs)
nq = torch.minimum(run(dqt1, nobs), run(dqt2, nobs))
nv = (npr * (nq - alpha * nlp)).sum(-1, keepdim=True)
tgt = (r + gamma * (~term).to(f64) * nv).squeeze(-1)
preds = torch.stack([run(dq1, obs), run(dq2, obs)]).gather(-1, act.view(1, B, 1).expand(2, B, 1)).squeeze(-1)
pr, lpr = pl(obs)
qmin = torch.minimum(run(dq1, obs), run(dq2, obs))
wlp = (pr * lpr).sum(-1)
te = -math.log(1.0 / NA) * 0.98
out["dsac"] = {"actor": NET(aw), "q1": NET(dq1), "q2": NET(dq2), "qt1": NET(dqt1), "qt2": NET(dqt2),
               "action": T(act + 1), "alpha": alpha, "target_entropy": te,
               "loss_qvalue": dist_loss(preds, tgt.expand_as(preds), "smooth_l1").sum(0).mean().item(),
               "loss_actor": (pr * (alpha * lpr - qmin)).sum(-1).mean().item(),
               "loss_alpha": (-math.log(alpha) * (wlp + te)).mean().item(), "entropy": -wlp.mean().item()}
out["shared"] = {"obs": T(obs), "next_obs": T(nobs), "reward": T(r), "terminated": T(term.int()),
                 "action_c": T(act_c), "gamma": gamma}

with open("rl_losses.lua", "w") as f:
    f.write("-- generated by tests/ref/gen_rl_losses.py (torch %s); do not edit\n" % torch.__version__)
    f.write("return " + lua(out, indent="") + "\n")
