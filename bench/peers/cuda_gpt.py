# bench/peers/cuda_gpt.py -- PyTorch peer of bench/cuda_gpt.lua (same rows):
# the same GPT (causal attention through F.scaled_dot_product_attention,
# which picks PyTorch's fastest backend), float32 at full matmul precision
# ('highest', PyTorch's default) and bfloat16 autocast, eager and with
# torch.compile of the model (the optimizer step stays eager, as usual).
import math, sys, time, torch, torch.nn as nn, torch.nn.functional as F

B, T, V, L, H, E = 64, 256, 65, 6, 6, 384
torch.set_float32_matmul_precision("highest")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(E), nn.LayerNorm(E)
        self.c_attn, self.a_proj = nn.Linear(E, 3 * E), nn.Linear(E, E)
        self.c_fc, self.c_proj = nn.Linear(E, 4 * E), nn.Linear(4 * E, E)

    def forward(self, x):
        b, t, e = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).view(b, t, 3, H, e // H).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.a_proj(y.transpose(1, 2).reshape(b, t, e))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, E), nn.Embedding(T, E)
        self.h = nn.ModuleList([Block() for _ in range(L)])
        self.ln_f = nn.LayerNorm(E)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"): p.zero_()
                elif name.endswith("proj.weight"): p.normal_(0, 0.02 / math.sqrt(2 * L))
                elif "ln_" not in name: p.normal_(0, 0.02)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.h: x = b(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def run(name, compile, amp):
    only = sys.argv[1] if len(sys.argv) > 1 else None
    profile = only == "profile_" + name  # where the GPU time of 3 steps goes, as bench/cuda_gpt.lua prints it
    if only and only != name and not profile: return
    torch.manual_seed(0)
    m = GPT().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    fm = torch.compile(m) if compile else m
    x = torch.randint(0, V, (B, T), device="cuda")
    y = torch.randint(0, V, (B, T), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(fm(x).view(-1, V).float(), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        return loss

    if profile:
        for _ in range(5): step()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(3): step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=30))
        return
    t0 = time.perf_counter(); l0 = step().item(); first = time.perf_counter() - t0
    for _ in range(5): step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20): l = step()
    last = l.item()
    s = (time.perf_counter() - t0) / 20
    print(f"peer {name} {B * T / s:.0f} tokens/s ({s * 1e3:.2f} ms/step, first step {first:.2f} s, loss {l0:.3f} -> {last:.3f})")


run("gpt_fp32_eager", False, False)
run("gpt_fp32_compiled", True, False)
run("gpt_bf16_eager", False, True)
run("gpt_bf16_compiled", True, True)
