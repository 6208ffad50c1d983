#!/usr/bin/python3
"""gen_optim.py -- PyTorch 1.13 references for tests/optim/test_optim.lua
and test_lr_scheduler.lua.

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_optim.py   # writes tests/ref/optim.lua

Optimizers: two parameters start at gen() values; each step's loss is
sum(a * p^2 + b * p) with fixed a, b (gradient 2 a p + b) and the
parameters after every step are recorded (float64 and float32).
Schedulers: the lr (and momentum / beta1) seen at each step."""
import math
import os

import torch
from reflib import lua

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 6


def gen(shape, seed, dtype):
    n = 1
    for s in shape:
        n *= s
    vals = [((37 * k + 11 * seed) % 101 - 50) / 32 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


def problem(dtype):
    p1 = gen((3, 4), 1, dtype).requires_grad_()
    p2 = gen((4,), 2, dtype).requires_grad_()
    a1, b1 = gen((3, 4), 3, dtype).abs() + 0.1, gen((3, 4), 4, dtype)
    a2, b2 = gen((4,), 5, dtype).abs() + 0.1, gen((4,), 6, dtype)

    def loss():
        return (a1 * p1 * p1 + b1 * p1).sum() + (a2 * p2 * p2 + b2 * p2).sum()
    return p1, p2, loss


def trajectory(make, groups, dtype):
    p1, p2, loss = problem(dtype)
    params = [p1, p2] if not groups else [{"params": [p1]}, {"params": [p2], **groups}]
    opt = make(params)
    traj = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss().backward()
        opt.step()
        traj.append(torch.cat([p1.detach().flatten(), p2.detach().flatten()]).double().tolist())
    return traj


O = torch.optim
optims = {
    "sgd": (lambda ps: O.SGD(ps, lr=0.1), None),
    "sgd_momentum_dampening_wd": (lambda ps: O.SGD(ps, lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1), None),
    "sgd_nesterov": (lambda ps: O.SGD(ps, lr=0.05, momentum=0.8, nesterov=True), None),
    "sgd_maximize": (lambda ps: O.SGD(ps, lr=0.01, momentum=0.5, maximize=True), None),
    "sgd_groups": (lambda ps: O.SGD(ps, lr=0.1, momentum=0.9), {"lr": 0.02, "momentum": 0.5}),
    "adam": (lambda ps: O.Adam(ps, lr=0.1), None),
    "adam_wd_amsgrad": (lambda ps: O.Adam(ps, lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.2, amsgrad=True),
                        None),
    "adam_maximize": (lambda ps: O.Adam(ps, lr=0.01, maximize=True), None),
    "adamw": (lambda ps: O.AdamW(ps, lr=0.1), None),
    "adamw_amsgrad": (lambda ps: O.AdamW(ps, lr=0.05, weight_decay=0.3, amsgrad=True), {"weight_decay": 0.0}),
    "rmsprop": (lambda ps: O.RMSprop(ps, lr=0.01), None),
    "rmsprop_centered_momentum_wd": (lambda ps: O.RMSprop(ps, lr=0.02, alpha=0.9, momentum=0.7, centered=True,
                                                          weight_decay=0.1), None),
    "adagrad": (lambda ps: O.Adagrad(ps, lr=0.1), None),
    "adagrad_decay_wd_init": (lambda ps: O.Adagrad(ps, lr=0.2, lr_decay=0.1, weight_decay=0.05,
                                                   initial_accumulator_value=0.3), None),
}
out = {"optim": {}, "sched": {}}
for name, (make, groups) in optims.items():
    out["optim"][name] = {"f64": trajectory(make, groups, torch.float64),
                          "f32": trajectory(make, groups, torch.float32)}


def lr_seq(make_opt, make_sched, n, extra=None):
    p = torch.zeros(2, requires_grad=True)
    opt = make_opt([p])
    sch = make_sched(opt)
    lrs, moms = [], []
    for _ in range(n):
        lrs.append(opt.param_groups[0]["lr"])
        if extra:
            moms.append(extra(opt.param_groups[0]))
        opt.step()
        sch.step()
    r = {"lr": lrs, "last_lr": sch.get_last_lr()[0]}
    if extra:
        r["momentum"] = moms
    return r


S = torch.optim.lr_scheduler
sgd = lambda ps: O.SGD(ps, lr=0.1, momentum=0.9)
adam = lambda ps: O.Adam(ps, lr=0.1)
out["sched"]["step"] = lr_seq(sgd, lambda o: S.StepLR(o, 3, gamma=0.5), 10)
out["sched"]["cosine"] = lr_seq(sgd, lambda o: S.CosineAnnealingLR(o, 5, eta_min=0.01), 16)
out["sched"]["linear"] = lr_seq(sgd, lambda o: S.LinearLR(o, start_factor=0.25, total_iters=4), 8)
out["sched"]["linear_down"] = lr_seq(sgd, lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                                                 total_iters=5), 8)
out["sched"]["lambda"] = lr_seq(sgd, lambda o: S.LambdaLR(o, lambda e: 0.9 ** e + 0.01 * e), 8)
out["sched"]["onecycle"] = lr_seq(sgd, lambda o: S.OneCycleLR(o, 0.5, total_steps=12), 12,
                                  lambda g: g["momentum"])
out["sched"]["onecycle_three_phase_linear"] = lr_seq(
    sgd, lambda o: S.OneCycleLR(o, 1.0, epochs=3, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear",
                                three_phase=True), 15, lambda g: g["momentum"])
out["sched"]["onecycle_adam"] = lr_seq(adam, lambda o: S.OneCycleLR(o, 0.3, total_steps=10, div_factor=10,
                                                                    final_div_factor=100), 10,
                                       lambda g: g["betas"][0])
with open(os.path.join(HERE, "optim.lua"), "w") as f:
    f.write("-- tests/ref/optim.lua -- generated by tests/ref/gen_optim.py (PyTorch %s); do not edit.\n"
            % torch.__version__)
    f.write("return " + lua(out, indent="") + "\n")
