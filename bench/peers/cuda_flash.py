# bench/peers/cuda_flash.py -- PyTorch peer of bench/cuda_flash.lua (same
# rows): F.scaled_dot_product_attention in bfloat16 with the flash backend
# forced, and each other backend PyTorch has for the input; "best" is the
# fastest of them.
import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

from benchlib import cuda_time_ms as time_ms

only = sys.argv[1] if len(sys.argv) > 1 else None
backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]

def row(name, B, H, L, E, causal, backward):
    torch.manual_seed(0)
    mk = lambda: torch.randn(B, H, L, E, device="cuda").to(torch.bfloat16)
    q, k, v, g = mk(), mk(), mk(), mk()
    fl = 4 * B * H * L * L * E * (0.5 if causal else 1)
    res = {}
    for bn, be in backends:
        try:
            with sdpa_kernel(be):
                with torch.no_grad():
                    fwd = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 10)
                both = None
                if backward:
                    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
                    def step():
                        qr.grad = kr.grad = vr.grad = None
                        F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal).backward(g)
                    both = time_ms(step, 10)
            res[bn] = (fwd, both)
        except Exception as e:
            res[bn] = None
    for bn, r in res.items():
        if r is None:
            print(f"peer flash_{name} [{bn}] unavailable")
            continue
        line = f"peer flash_{name} [{bn}] fwd {r[0]:.3f} ms ({fl / r[0] / 1e9:.1f} TFLOP/s)"
        if r[1] is not None:
            line += f", fwd+bwd {r[1]:.3f} ms ({3.5 * fl / r[1] / 1e9:.1f} TFLOP/s)"
        print(line)
    ok = [r for r in res.values() if r]
    bf = min(r[0] for r in ok)
    line = f"peer flash_{name} [best] fwd {bf:.3f} ms ({fl / bf / 1e9:.1f} TFLOP/s)"
    if backward:
        bb = min(r[1] for r in ok if r[1] is not None)
        line += f", fwd+bwd {bb:.3f} ms ({3.5 * fl / bb / 1e9:.1f} TFLOP/s)"
    print(line)

bwd = only != "fwd"
row("b4h16_l2048_e128", 4, 16, 2048, 128, False, bwd)
row("b4h16_l2048_e128_causal", 4, 16, 2048, 128, True, bwd)
row("b4h16_l2048_e64", 4, 16, 2048, 64, False, bwd)
row("b4h16_l8192_e128", 4, 16, 8192, 128, False, False)
