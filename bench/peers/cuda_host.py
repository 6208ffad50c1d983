# bench/peers/cuda_host.py -- PyTorch peer of bench/cuda_host.lua (same figures).
import time, torch

a, b = torch.randn(16, device="cuda"), torch.randn(16, device="cuda")

def host_us(fn, wall=False):
    for _ in range(1000): fn()
    ts = []
    for _ in range(100):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200): fn()
        if wall: torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) / 200 * 1e6)
    torch.cuda.synchronize()
    return sorted(ts)[50]

rows = [("add", lambda: a + b), ("mul_scalar", lambda: a * 2), ("relu", lambda: a.relu()),
        ("add_inplace", lambda: a.add_(b)), ("sum", lambda: a.sum()),
        ("chain3", lambda: (a * 2 + b).relu())]
for name, fn in rows:
    print(f"peer small_{name}_host_us {host_us(fn):.2f}")
print(f"peer small_add_wall_us {host_us(rows[0][1], True):.2f}")
print(f"peer small_chain3_wall_us {host_us(rows[5][1], True):.2f}")
