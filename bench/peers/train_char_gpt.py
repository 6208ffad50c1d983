"""bench/peers/train_char_gpt.py -- the PyTorch (1.13) version of
scripts/train_char_gpt.lua: the same GPT (names, initialisation), corpus,
byte vocabulary, 90/10 split, random-block batches, fixed validation blocks,
AdamW, warmup + cosine schedule and gradient clipping, printing the
validation loss at the same steps and tokens/s, so the two runs can be
compared. PyTorch 1.13 has no scaled_dot_product_attention: attention is the
math composition softmax(q k^T / sqrt(d) + causal mask) v.

    /usr/bin/python3 bench/peers/train_char_gpt.py [--steps 1000] [--batch-size 32]
        [--block-size 128] [--layers 4] [--heads 4] [--embed 128] [--lr 0.001]
        [--eval-every 100] [--eval-iters 20] [--threads N] [--data FILE] [--seed 0]"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_DIR = "/usr/share/games/fortunes"


def read_text(path):
    if path:
        files = [path]
    else:
        files = sorted(os.path.join(DEFAULT_DIR, f) for f in os.listdir(DEFAULT_DIR)
                       if os.path.isfile(os.path.join(DEFAULT_DIR, f)) and not os.path.islink(os.path.join(DEFAULT_DIR, f))
                       and not f.endswith(".dat") and not f.endswith(".u8"))
    data = b""
    for f in files:
        with open(f, "rb") as h:
            data += h.read()
    return data, len(files)


class Attention(nn.Module):
    def __init__(self, E, H):
        super().__init__()
        self.c_attn = nn.Linear(E, 3 * E)
        self.c_proj = nn.Linear(E, E)
        self.n_head = H

    def forward(self, x):
        B, T, E = x.shape
        H = self.n_head
        q, k, v = self.c_attn(x).view(B, T, 3, H, E // H).permute(2, 0, 3, 1, 4)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(E // H))
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        y = s.softmax(-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, E))


class MLP(nn.Module):
    def __init__(self, E):
        super().__init__()
        self.c_fc = nn.Linear(E, 4 * E)
        self.c_proj = nn.Linear(4 * E, E)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, E, H):
        super().__init__()
        self.ln_1 = nn.LayerNorm(E)
        self.attn = Attention(E, H)
        self.ln_2 = nn.LayerNorm(E)
        self.mlp = MLP(E)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, V, T, L, H, E, tied=True):
        super().__init__()
        self.wte = nn.Embedding(V, E)
        self.wpe = nn.Embedding(T, E)
        self.h = nn.ModuleList([Block(E, H) for _ in range(L)])
        self.ln_f = nn.LayerNorm(E)
        self.lm_head = None if tied else nn.Linear(E, V, bias=False)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif name.endswith("c_proj.weight"):
                    p.normal_(0, 0.02 / math.sqrt(2 * L))
                elif "ln_" not in name:
                    p.normal_(0, 0.02)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x)
        x = self.ln_f(x)
        return F.linear(x, self.lm_head.weight if self.lm_head is not None else self.wte.weight)


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("steps", 1000), ("batch-size", 32), ("block-size", 128), ("layers", 4), ("heads", 4),
                          ("embed", 128), ("warmup", 50), ("eval-every", 100), ("eval-iters", 20), ("seed", 0),
                          ("threads", 0)]:
        ap.add_argument("--" + name, type=int, default=default)
    for name, default in [("lr", 1e-3), ("min-lr", 1e-4), ("weight-decay", 0.1), ("grad-clip", 1.0)]:
        ap.add_argument("--" + name, type=float, default=default)
    ap.add_argument("--schedule", default="cosine")
    ap.add_argument("--data", default=None)
    ap.add_argument("--untied", action="store_true")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    text, nfiles = read_text(a.data)
    raw = torch.frombuffer(bytearray(text), dtype=torch.uint8).long()
    vocab = sorted(set(text))
    lut = torch.zeros(256, dtype=torch.long)
    for i, b in enumerate(vocab):
        lut[b] = i
    ids = lut[raw]
    n = len(ids)
    ntrain = int(n * 0.9)
    train, val = ids[:ntrain], ids[ntrain:]
    B, T = a.batch_size, a.block_size
    model = GPT(len(vocab), T, a.layers, a.heads, a.embed, not a.untied)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.99), weight_decay=a.weight_decay)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"corpus: {n} characters ({nfiles} files), vocabulary {len(vocab)}; {nparams} parameters; "
          f"{torch.get_num_threads()} threads")
    ar = torch.arange(T + 1)

    def blocks(split, starts):
        b = split[starts.view(-1, 1) + ar.view(1, -1)]
        return b[:, :T], b[:, 1:]

    total, last = a.eval_iters * B, len(val) - T
    starts = torch.tensor([(i * (last - 1)) // max(total - 1, 1) for i in range(total)])

    def evaluate():
        model.eval()
        tot, k = 0.0, 0
        with torch.no_grad():
            for i in range(0, len(starts), B):
                x, y = blocks(val, starts[i:i + B])
                tot += F.cross_entropy(model(x).view(-1, len(vocab)), y.reshape(-1)).item()
                k += 1
        model.train()
        return tot / k

    def lr_at(step):
        if step < a.warmup:
            return a.lr * (step + 1) / a.warmup
        if a.schedule == "constant":
            return a.lr
        t = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
        return a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * t))

    t_train, running, t0 = 0.0, None, time.perf_counter()
    for step in range(a.steps):
        ts = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = blocks(train, torch.randint(0, len(train) - T, (B,)))
        loss = F.cross_entropy(model(x).view(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if a.grad_clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        l = loss.item()
        running = l if running is None else 0.95 * running + 0.05 * l
        t_train += time.perf_counter() - ts
        done = step + 1
        if done % a.eval_every == 0 or done == a.steps:
            vl = evaluate()
            print(f"step {done}: train loss {running:.4f}, val loss {vl:.4f}, "
                  f"{done * B * T / t_train:.0f} tok/s, {time.perf_counter() - t0:.0f}s elapsed", flush=True)
    print(f"trained {a.steps} steps in {t_train:.1f} s: {a.steps * B * T / t_train:.0f} tokens/s, final val loss {vl:.4f}")


if __name__ == "__main__":
    main()
