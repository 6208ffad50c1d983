# bench/peers/cuda_ops.py -- PyTorch peer of bench/cuda_ops.lua (same figures).
import torch, torch.nn as nn, torch.nn.functional as F

def time_ms(fn, reps):
    fn(); fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)[(len(ts) - 1) // 2]

N = 8192
for dt, prec in [("float32", "highest"), ("float32", "high"), ("bfloat16", "highest")]:
    torch.set_float32_matmul_precision(prec)
    a = torch.randn(N, N, device="cuda").to(getattr(torch, dt))
    b = torch.randn(N, N, device="cuda").to(getattr(torch, dt))
    ms = time_ms(lambda: a @ b, 10)
    print(f"peer matmul_{dt}_{prec} {2 * N**3 / ms / 1e9:.1f} TFLOP/s ({ms:.2f} ms)")
torch.set_float32_matmul_precision("highest")
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10)).cuda()
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
x, y = torch.randn(256, 1024, device="cuda"), torch.randint(0, 10, (256,), device="cuda")
def step():
    opt.zero_grad(); F.cross_entropy(m(x), y).backward(); opt.step()
print(f"peer mlp_train_step {time_ms(step, 20):.3f} ms")
