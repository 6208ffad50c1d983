# bench/peers/cuda_layernorm.py -- PyTorch peer of bench/cuda_layernorm.lua:
# the same rows, printed as "peer <row> <ms> ms" (device ms per call, CUDA
# events around 20 calls, median of 15).
import torch, torch.nn.functional as F
from benchlib import cuda_time_ms as time_ms


D = 384
for dt in ["float32", "bfloat16"]:
    torch.manual_seed(0)
    t = getattr(torch, dt)
    x = torch.randn(64, 256, D, device="cuda").to(t)
    g = torch.randn(64, 256, D, device="cuda").to(t)
    w, b = torch.randn(D, device="cuda"), torch.randn(D, device="cuda")
    # PyTorch's layer_norm wants parameters of the input's dtype
    wp, bp = w.to(t), b.to(t)
    with torch.no_grad():
        print(f"peer layer_norm_{dt} fwd {time_ms(lambda: F.layer_norm(x, (D,), wp, bp, 1e-5), 15, 20):.4f} ms")
        _, m, r = torch.ops.aten.native_layer_norm(x, (D,), wp, bp, 1e-5)
        bwd = lambda: torch.ops.aten.native_layer_norm_backward(g, x, (D,), m, r, wp, bp, [True, True, True])
        print(f"peer layer_norm_{dt} bwd {time_ms(bwd, 15, 20):.4f} ms")
    xr, wr, br = x.clone().requires_grad_(), wp.clone().requires_grad_(), bp.clone().requires_grad_()
    def both():
        xr.grad = wr.grad = br.grad = None
        F.layer_norm(xr, (D,), wr, br, 1e-5).backward(g)
    print(f"peer layer_norm_{dt} fwd+bwd {time_ms(both, 15, 20):.4f} ms")
