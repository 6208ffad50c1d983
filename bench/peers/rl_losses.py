"""bench/peers/rl_losses.py -- the peer of bench/rl_losses.lua: the same
losses in plain PyTorch (CleanRL-style, TorchRL's formulas and defaults):
DQN with a target network (l2, gamma 0.99), ClipPPO with given advantages
(clip 0.2, entropy 0.01, smooth-L1 critic), SAC with a TanhNormal actor,
twin critics and target critics, automatic alpha (smooth-L1)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from benchlib import report, setup, timeit


def mlp(i, o, cells, act):
    layers, d = [], i
    for c in cells:
        layers += [nn.Linear(d, c), act()]
        d = c
    return nn.Sequential(*layers, nn.Linear(d, o))


def main():
    want = setup()
    torch.manual_seed(0)
    if want("rl_dqn_loss_b128"):
        n = 128
        q = mlp(4, 2, [120, 84], nn.ReLU)
        qt = mlp(4, 2, [120, 84], nn.ReLU)
        qt.load_state_dict(q.state_dict())
        for p in qt.parameters():
            p.requires_grad_(False)
        obs, nobs = torch.randn(n, 4), torch.randn(n, 4)
        act, r = torch.randint(0, 2, (n,)), torch.randn(n, 1)
        term = torch.zeros(n, 1, dtype=torch.bool)

        def dqn():
            pred = q(obs).gather(-1, act.unsqueeze(-1)).squeeze(-1)
            with torch.no_grad():
                tgt = (r + 0.99 * (~term).float() * qt(nobs).max(-1, keepdim=True)[0]).squeeze(-1)
            loss = F.mse_loss(pred, tgt, reduction="none").mean()
            with torch.no_grad():
                (pred - tgt).pow(2)
            loss.backward()
        report("rl_dqn_loss_b128", timeit(dqn, 50))
    if want("rl_ppo_loss_b128"):
        n = 128
        actor, critic = mlp(4, 2, [64, 64], nn.Tanh), mlp(4, 1, [64, 64], nn.Tanh)
        obs, act = torch.randn(n, 4), torch.randint(0, 2, (n,))
        old_lp, adv, vt = -torch.rand(n), torch.randn(n, 1), torch.randn(n, 1)

        def ppo():
            dist = torch.distributions.Categorical(logits=actor(obs))
            lw = (dist.log_prob(act) - old_lp).unsqueeze(-1)
            g1 = lw.exp() * adv
            lwc = lw.clamp(math.log(0.8), math.log(1.2))
            g2 = lwc.exp() * adv
            obj = -torch.min(g1, g2).mean()
            with torch.no_grad():
                l = lw.squeeze()
                (2 * l.logsumexp(0) - (2 * l).logsumexp(0)).exp() / n
                (lwc != lw).float().mean()
            ent = dist.entropy()
            crit = F.smooth_l1_loss(vt, critic(obs), reduction="none").mean()
            (obj - 0.01 * ent.mean() + crit).backward()
        report("rl_ppo_loss_b128", timeit(ppo, 50))
    if want("rl_sac_loss_b256"):
        n = 256
        actor = mlp(3, 2, [256, 256], nn.ReLU)
        qs = [mlp(4, 1, [256, 256], nn.ReLU) for _ in range(2)]
        qts = [mlp(4, 1, [256, 256], nn.ReLU) for _ in range(2)]
        for qt, q in zip(qts, qs):
            qt.load_state_dict(q.state_dict())
            for p in qt.parameters():
                p.requires_grad_(False)
        log_alpha = torch.zeros((), requires_grad=True)
        obs, nobs = torch.randn(n, 3), torch.randn(n, 3)
        act, r = torch.rand(n, 1) * 2 - 1, torch.randn(n, 1)
        term = torch.zeros(n, 1, dtype=torch.bool)

        def pi(x):
            p = actor(x)
            loc, scale = p[:, :1], F.softplus(p[:, 1:]) + 1e-4
            u = loc + scale * torch.randn_like(loc)
            lp = torch.distributions.Normal(loc, scale).log_prob(u).sum(-1) \
                - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
            return torch.tanh(u), lp

        def sac():
            alpha = log_alpha.detach().exp()
            with torch.no_grad():
                na, nlp = pi(nobs)
                x = torch.cat([nobs, na], -1)
                nv = torch.min(qts[0](x), qts[1](x)) - alpha * nlp.unsqueeze(-1)
                tgt = (r + 0.99 * (~term).float() * nv).squeeze(-1)
            x = torch.cat([obs, act], -1)
            pred = torch.stack([q(x) for q in qs]).squeeze(-1)
            lq = F.smooth_l1_loss(pred, tgt.expand_as(pred), reduction="none").sum(0).mean()
            a, lp = pi(obs)
            for q in qs:
                for p in q.parameters():
                    p.requires_grad_(False)
            xa = torch.cat([obs, a], -1)
            qmin = torch.min(qs[0](xa), qs[1](xa)).squeeze(-1)
            for q in qs:
                for p in q.parameters():
                    p.requires_grad_(True)
            la = (alpha * lp - qmin).mean()
            lal = (-log_alpha * (lp.detach() - 1)).mean()
            (la + lq + lal).backward()
        report("rl_sac_loss_b256", timeit(sac, 20))


main()
