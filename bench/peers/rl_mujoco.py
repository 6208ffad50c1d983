"""bench/peers/rl_mujoco.py -- the Python side of bench/rl_mujoco.lua: the
same 64 humanoid copies (frame_skip 5, episodes of 200 steps, reset noise
0.01, random actions) stepped as Gymnasium's SyncVectorEnv steps its
MujocoEnvs: a Python loop over the copies, each writing data.ctrl and
calling mj_step frame_skip times, its observation concat(qpos, qvel) as a
float64 numpy array, stacked into a torch tensor. MuJoCo's Python bindings
are not installable here, so the same libmujoco is called through ctypes
(the field offsets of mjData come from compiling offsetof() with cc). The
loop is sequential: both thread rows get the same peer. The arm26 row:
the tendon arm of libmujoco-samples, actions in its ctrlrange [0, 1]."""
import ctypes
import os
import subprocess
import tempfile

import numpy as np
import torch
from benchlib import report, setup, timeit

MODELS = "/usr/share/mujoco/model/"
ROWS = [("humanoid", "humanoid/humanoid.xml", 1, -1.0, 1.0), ("humanoid", "humanoid/humanoid.xml", 2, -1.0, 1.0),
        ("arm26", "tendon_arm/arm26.xml", 1, 0.0, 1.0)]
N, STEPS, FRAME_SKIP, MAX_STEPS, NOISE = 64, 20, 5, 200, 0.01

OFFSETS_C = r"""
#include <stddef.h>
#include <stdio.h>
#include <mujoco/mujoco.h>
int main(void) {
  printf("%zu %zu %zu %zu %zu %zu\n", offsetof(mjModel, nq), offsetof(mjModel, nv), offsetof(mjModel, nu),
         offsetof(mjData, qpos), offsetof(mjData, qvel), offsetof(mjData, ctrl));
  return 0;
}
"""


def offsets():
    """(model nq, nv, nu; data qpos, qvel, ctrl) byte offsets, from the installed header."""
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "o.c"), os.path.join(d, "o")
        with open(src, "w") as f:
            f.write(OFFSETS_C)
        subprocess.run(["cc", "-o", exe, src], check=True)
        return [int(v) for v in subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()]


class Copy:
    """One MujocoEnv: its mjData and numpy views of qpos, qvel and ctrl."""

    def __init__(self, lib, model, nq, nv, nu, off, rng):
        self.lib, self.model, self.rng = lib, model, rng
        self.data = lib.mj_makeData(model)
        base = ctypes.cast(self.data, ctypes.POINTER(ctypes.c_char))

        def field(o, n):
            ptr = ctypes.c_void_p.from_address(ctypes.addressof(base.contents) + o).value
            return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_double)), shape=(n,))

        self.qpos, self.qvel, self.ctrl = field(off[3], nq), field(off[4], nv), field(off[5], nu)
        self.qpos0 = self.qpos.copy()
        self.nq, self.nv, self.elapsed, self.done = nq, nv, 0, False
        self.reset()

    def reset(self):
        self.lib.mj_resetData(self.model, self.data)
        self.qpos[:] = self.qpos0 + self.rng.uniform(-NOISE, NOISE, self.nq)
        self.qvel[:] = self.rng.uniform(-NOISE, NOISE, self.nv)
        self.lib.mj_forward(self.model, self.data)
        self.elapsed, self.done = 0, False
        return np.concatenate([self.qpos, self.qvel])

    def step(self, a):
        if self.done:  # Gymnasium's next-step autoreset
            return self.reset(), False
        self.ctrl[:] = a
        for _ in range(FRAME_SKIP):
            self.lib.mj_step(self.model, self.data)
        self.elapsed += 1
        self.done = self.elapsed >= MAX_STEPS
        return np.concatenate([self.qpos, self.qvel]), self.done


def main():
    want = setup()
    off = offsets()
    lib = ctypes.CDLL("libmujoco.so")
    lib.mj_loadXML.restype = ctypes.c_void_p
    lib.mj_loadXML.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.mj_makeData.restype = ctypes.c_void_p
    lib.mj_makeData.argtypes = [ctypes.c_void_p]
    for fn in ("mj_step", "mj_forward", "mj_resetData"):
        getattr(lib, fn).argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    err = ctypes.create_string_buffer(1000)
    for model_name, file, threads, lo, hi in ROWS:
        name = f"mujoco_{model_name}_n{N}_t{threads}"
        if not want(name):
            continue
        model = lib.mj_loadXML((MODELS + file).encode(), None, err, 1000)
        ints = lambda o: ctypes.c_int.from_address(model + o).value
        nq, nv, nu = ints(off[0]), ints(off[1]), ints(off[2])
        copies = [Copy(lib, model, nq, nv, nu, off, np.random.default_rng(i)) for i in range(N)]
        g = torch.Generator().manual_seed(0)
        acts = [(lo + (hi - lo) * torch.rand(N, nu, generator=g)).numpy() for _ in range(16)]
        k = [0]

        def batch():
            for _ in range(STEPS):
                k[0] = k[0] % 16 + 1
                a = acts[k[0] - 1]
                res = [c.step(a[i]) for i, c in enumerate(copies)]
                torch.from_numpy(np.stack([r[0] for r in res]).astype(np.float32))

        secs = timeit(batch, 3, 5) / STEPS
        report(name, secs, N / secs, "env-steps/s")


if __name__ == "__main__":
    main()
