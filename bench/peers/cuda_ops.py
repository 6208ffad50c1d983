# bench/peers/cuda_ops.py -- PyTorch peer of bench/cuda_ops.lua (same figures).
import sys, torch, torch.nn as nn, torch.nn.functional as F

from benchlib import cuda_time_ms as time_ms

only = sys.argv[1] if len(sys.argv) > 1 else None

def conv_rows():
    # full float32 as ours (PyTorch allows TF32 in cuDNN convs by default);
    # deterministic algorithms as ours where deterministic=True
    torch.backends.cudnn.allow_tf32 = False
    flops = 2 * 32 * 64 * 56 * 56 * 64 * 9
    for dt in ["float32", "bfloat16", "float16"]:
        for det in [False, True]:
            torch.backends.cudnn.deterministic = det
            torch.manual_seed(0)
            x = torch.randn(32, 64, 56, 56, device="cuda").to(getattr(torch, dt))
            w = (torch.randn(64, 64, 3, 3, device="cuda") * 0.05).to(getattr(torch, dt))
            g = torch.randn(32, 64, 56, 56, device="cuda").to(getattr(torch, dt))
            with torch.no_grad():
                fwd = time_ms(lambda: F.conv2d(x, w, None, padding=1), 20)
                fwd10 = time_ms(lambda: [F.conv2d(x, w, None, padding=1) for _ in range(10)], 5) / 10
            xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
            def both():
                xr.grad = wr.grad = None
                F.conv2d(xr, wr, None, padding=1).backward(g)
            b = time_ms(both, 20)
            print(f"peer conv2d_resnet_{dt}{'_deterministic' if det else ''} fwd {fwd:.3f} ms "
                  f"({flops / fwd / 1e9:.1f} TFLOP/s; {fwd10:.3f} ms each in a run of 10), fwd+bwd {b:.3f} ms ({3 * flops / b / 1e9:.1f} TFLOP/s)")
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.allow_tf32 = True

def pool_norm_rows():
    for dt in ["float32", "bfloat16"]:
        t = getattr(torch, dt)
        torch.manual_seed(0)
        x = torch.randn(64, 64, 112, 112, device="cuda").to(t)
        g = torch.randn(64, 64, 56, 56, device="cuda").to(t)
        xr = x.clone().requires_grad_()
        for kind, f in [("max", F.max_pool2d), ("avg", F.avg_pool2d)]:
            with torch.no_grad():
                fwd = time_ms(lambda: f(x, 3, 2, 1), 20)
            def both():
                xr.grad = None
                f(xr, 3, 2, 1).backward(g)
            print(f"peer {kind}_pool2d_{dt} fwd {fwd:.3f} ms, fwd+bwd {time_ms(both, 20):.3f} ms")
        del x, g, xr
        b = torch.randn(64, 256, 56, 56, device="cuda").to(t)
        gb = torch.randn(64, 256, 56, 56, device="cuda").to(t)
        w, bias = torch.randn(256, device="cuda"), torch.randn(256, device="cuda")
        rm, rv = torch.zeros(256, device="cuda"), torch.ones(256, device="cuda")
        with torch.no_grad():
            tr = time_ms(lambda: F.batch_norm(b, rm, rv, w, bias, True, 0.1, 1e-5), 20)
            ev = time_ms(lambda: F.batch_norm(b, rm, rv, w, bias, False, 0.1, 1e-5), 20)
        br, wr, biasr = b.clone().requires_grad_(), w.clone().requires_grad_(), bias.clone().requires_grad_()
        def bn_both():
            br.grad = wr.grad = biasr.grad = None
            F.batch_norm(br, rm, rv, wr, biasr, True, 0.1, 1e-5).backward(gb)
        print(f"peer batch_norm_{dt} train fwd {tr:.3f} ms, eval fwd {ev:.3f} ms, train fwd+bwd {time_ms(bn_both, 20):.3f} ms")
        del b, gb, br

if only == "conv":
    conv_rows()
    sys.exit(0)
if only == "poolnorm":
    pool_norm_rows()
    sys.exit(0)

N = 8192
for dt, prec in [("float32", "highest"), ("float32", "high"), ("bfloat16", "highest")]:
    torch.set_float32_matmul_precision(prec)
    a = torch.randn(N, N, device="cuda").to(getattr(torch, dt))
    b = torch.randn(N, N, device="cuda").to(getattr(torch, dt))
    ms = time_ms(lambda: a @ b, 10)
    print(f"peer matmul_{dt}_{prec} {2 * N**3 / ms / 1e9:.1f} TFLOP/s ({ms:.2f} ms)")
torch.set_float32_matmul_precision("highest")

def mlp_rows(all_rows):
    # PyTorch's default Adam on CUDA is foreach; fused=True is its one-kernel step
    for name, fused in ([("", None), ("_fused_adam", True)] if all_rows else [("", None)]):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10)).cuda()
        opt = torch.optim.Adam(m.parameters(), lr=1e-3, fused=fused)
        x, y = torch.randn(256, 1024, device="cuda"), torch.randint(0, 10, (256,), device="cuda")
        def step():
            opt.zero_grad(); F.cross_entropy(m(x), y).backward(); opt.step()
        print(f"peer mlp_train_step{name} {time_ms(step, 20):.3f} ms")
    if not all_rows:
        return
    for dt in ["float32", "bfloat16"]:
        torch.manual_seed(0)
        x = torch.randn(256, 1024, device="cuda").to(getattr(torch, dt))
        w = (torch.randn(4096, 1024, device="cuda") * 0.03).to(getattr(torch, dt))
        b = torch.randn(4096, device="cuda").to(getattr(torch, dt))
        with torch.no_grad():
            eager = time_ms(lambda: F.gelu(F.linear(x, w, b), approximate="tanh"), 50)
        print(f"peer linear_gelu_fwd_{dt} 256x1024x4096 eager {eager:.3f} ms")

if only == "mlp":
    mlp_rows(True)
    sys.exit(0)
mlp_rows(False)
conv_rows()
pool_norm_rows()
