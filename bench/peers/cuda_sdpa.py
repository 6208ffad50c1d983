# bench/peers/cuda_sdpa.py -- PyTorch peer of bench/cuda_sdpa.lua (same rows):
# each of PyTorch's fused SDPA backends (cudnn, flash, efficient) and the best.
# `cuda_sdpa.py f32`: the float32 rows of `cuda_sdpa.lua f32` on PyTorch's
# default backend for float32 (memory-efficient), full fp32 matmul precision.
import sys, time, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

from benchlib import cuda_time_ms as time_ms

ROWS = [("b4_h16_l2048_e128", 4, 16, 2048, 128, False, True),
        ("b4_h16_l2048_e128_causal", 4, 16, 2048, 128, True, True),
        ("b4_h16_l2048_e64", 4, 16, 2048, 64, False, True),
        ("b4_h16_l8192_e128", 4, 16, 8192, 128, False, False)]
BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
            ("efficient", SDPBackend.EFFICIENT_ATTENTION)]

F32_ROWS = [("gpt_b64_h6_l256_e64_causal", 64, 6, 256, 64, True), ("b4_h16_l2048_e64", 4, 16, 2048, 64, False),
            ("b4_h16_l2048_e64_causal", 4, 16, 2048, 64, True), ("b4_h16_l2048_e128", 4, 16, 2048, 128, False)]

def f32_rows():
    for name, B, H, L, E, causal in F32_ROWS:
        torch.manual_seed(0)
        q, k, v, gy = (torch.randn(B, H, L, E, device="cuda") for _ in range(4))
        flops = 4 * B * H * L * L * E / (2 if causal else 1)
        with torch.no_grad():
            f = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 20)
        qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
        def both():
            qr.grad = kr.grad = vr.grad = None
            F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal).backward(gy)
        b = time_ms(both, 20)
        print(f"peer sdpa_f32_{name} [default] fwd {f:.3f} ms ({flops / f / 1e9:.1f} TFLOP/s), "
              f"fwd+bwd {b:.3f} ms ({3.5 * flops / b / 1e9:.1f} TFLOP/s; bwd alone {b - f:.3f} ms)")

if sys.argv[1:] == ["f32"]:
    torch.backends.cuda.matmul.allow_tf32 = False
    f32_rows()
    sys.exit(0)

print(f"peer torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
for name, B, H, L, E, causal, bwd in ROWS:
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, L, E, device="cuda").bfloat16() for _ in range(3))
    gy = torch.randn(B, H, L, E, device="cuda").bfloat16()
    flops = 4 * B * H * L * L * E / (2 if causal else 1)
    best_f, best_b = None, None
    for bname, be in BACKENDS:
        try:
            with sdpa_kernel(be):
                with torch.no_grad():
                    torch.cuda.synchronize(); t0 = time.perf_counter()
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    torch.cuda.synchronize(); first = (time.perf_counter() - t0) * 1e3
                    f = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 20)
                line = f"peer sdpa_{name} [{bname}] fwd {f:.3f} ms ({flops / f / 1e9:.0f} TFLOP/s; first call {first:.0f} ms)"
                best_f = min(best_f or f, f)
                if bwd:
                    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
                    def both():
                        qr.grad = kr.grad = vr.grad = None
                        F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal).backward(gy)
                    b = time_ms(both, 20)
                    line += f", fwd+bwd {b:.3f} ms ({3.5 * flops / b / 1e9:.0f} TFLOP/s)"
                    best_b = min(best_b or b, b)
                print(line)
        except RuntimeError as e:
            print(f"peer sdpa_{name} [{bname}] unavailable: {str(e).splitlines()[0][:100]}")
    line = f"peer sdpa_{name} [best] fwd {best_f:.3f} ms ({flops / best_f / 1e9:.0f} TFLOP/s)"
    if bwd: line += f", fwd+bwd {best_b:.3f} ms ({3.5 * flops / best_b / 1e9:.0f} TFLOP/s)"
    print(line)
