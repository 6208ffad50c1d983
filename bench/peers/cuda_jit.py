# bench/peers/cuda_jit.py -- PyTorch peer of bench/cuda_jit.lua (same figures):
# torch.compile of gelu(x * w + b) over 64M float32 against the device copy,
# a flat 5-op chain, and the host cost of a small compiled graph (default
# mode and mode="reduce-overhead", which replays CUDA graphs).
import time, torch, torch.nn.functional as F
from benchlib import cuda_time_ms as time_ms


M, N = 65536, 1024
n = M * N
nbytes = 2 * 4 * n
torch.manual_seed(0)
x = torch.randn(M, N, device="cuda")
w, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
y = torch.empty(M, N, device="cuda")
copy_ms = time_ms(lambda: y.copy_(x), 10, 5)
copy_gbs = nbytes / copy_ms / 1e6
print(f"peer copy_64M_f32 {copy_gbs:.1f} GB/s ({copy_ms:.3f} ms)")

def f(a, w_, b_): return F.gelu(a * w_ + b_)
cf = torch.compile(f)
ms = time_ms(lambda: cf(x, w, b), 10, 5)
gbs = nbytes / ms / 1e6
print(f"peer jit_gelu_xwb_64M_f32 {gbs:.1f} GB/s ({ms:.3f} ms) {100 * gbs / copy_gbs:.1f}% of copy")
ems = time_ms(lambda: f(x, w, b), 10, 5)
print(f"peer eager_gelu_xwb_64M_f32 {nbytes / ems / 1e6:.1f} GB/s ({ems:.3f} ms)")

def chain(a): return ((a * 1.5 + 0.5).relu() - a).sigmoid() * a
cc = torch.compile(chain)
cms = time_ms(lambda: cc(x), 10, 5)
print(f"peer jit_chain5_64M_f32 {nbytes / cms / 1e6:.1f} GB/s ({cms:.3f} ms) {100 * nbytes / cms / 1e6 / copy_gbs:.1f}% of copy")

xs, ws = torch.randn(4, 4, device="cuda"), torch.randn(4, device="cuda")
def small(a, w_):
    t = (a * w_ + 1).tanh()
    return t.softmax(-1).sum(-1) + t.amax(-1)

def host_us(fn, calls):
    for _ in range(50): fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls): fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best

cs = torch.compile(small)
print(f"peer jit_small_graph {host_us(lambda: cs(xs, ws), 5000):.1f} us/call (torch.compile default)")
cr = torch.compile(small, mode="reduce-overhead")
print(f"peer jit_small_graph_replay {host_us(lambda: cr(xs, ws), 5000):.1f} us/call (mode=reduce-overhead, CUDA graphs)")
print(f"peer eager_small_graph {host_us(lambda: small(xs, ws), 5000):.1f} us/call")
