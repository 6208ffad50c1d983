# bench/peers/cuda_gpt_parts.py -- PyTorch peer of bench/cuda_gpt_parts.lua:
# gelu's backward on 16384 x 1536 bfloat16 (aten's fused gelu_backward and
# the GeluBackward0 node through autograd.grad) and clip_grad_norm_ (foreach,
# PyTorch's default on CUDA) over the gradient shapes that the Lua bench
# wrote to /tmp/gpt_grad_shapes.txt (77 float32 tensors of the char GPT).
import time

import torch
from benchlib import cuda_time_ms as time_ms

torch.manual_seed(0)
x = torch.randn(16384, 1536, device="cuda").bfloat16()
g = torch.randn(16384, 1536, device="cuda").bfloat16()
fused = time_ms(lambda: torch.ops.aten.gelu_backward(g, x), 21, 10)
tanh = time_ms(lambda: torch.ops.aten.gelu_backward(g, x, approximate="tanh"), 21, 10)
xr = x.clone().requires_grad_()
node = time_ms(lambda: torch.autograd.grad([torch.nn.functional.gelu(xr)], [xr], [g]), 21, 5)
print(f"peer gelu_backward_bf16 16384x1536: fused {fused:.3f} ms ({3 * x.numel() * 2 / fused / 1e6:.0f} GB/s), "
      f"tanh form {tanh:.3f} ms; gelu forward+GeluBackward0 via autograd.grad {node:.3f} ms")

shapes = [tuple(int(v) for v in line.split()) for line in open("/tmp/gpt_grad_shapes.txt") if line.strip()]
ps = [torch.nn.Parameter(torch.randn(*s, device="cuda")) for s in shapes]
for p in ps: p.grad = torch.randn_like(p) * 1e-3
new = time_ms(lambda: torch.nn.utils.clip_grad_norm_(ps, 1.0), 21, 10)
norm_only = time_ms(lambda: torch._foreach_norm([p.grad for p in ps]), 21, 10)
t0 = time.perf_counter()
for _ in range(100): torch.nn.utils.clip_grad_norm_(ps, 1.0)
host = (time.perf_counter() - t0) / 100 * 1e3
torch.cuda.synchronize()
print(f"peer clip_grad_norm {len(ps)} grads ({sum(p.numel() for p in ps)} elements, float32): foreach {new:.3f} ms "
      f"(host {host:.3f} ms/call; _foreach_norm alone {norm_only:.3f} ms)")
