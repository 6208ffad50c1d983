"""bench/peers/autograd.py -- PyTorch's side of bench/autograd.lua: the same
graphs, timed the same way."""
import torch
from benchlib import report, setup, timeit


def main():
    want = setup()
    if want("backward_small16"):
        w = torch.randn(16, requires_grad=True)
        a, b = torch.randn(16), torch.randn(16)
        report("backward_small16", timeit(lambda: (w * a + b).sum().backward(), 20000))
    if want("mlp_fwd_bwd"):
        torch.manual_seed(0)
        n, d, h, c = 128, 784, 256, 10
        x = torch.randn(n, d)
        w1 = (torch.randn(d, h) * 0.05).requires_grad_()
        b1 = torch.zeros(h, requires_grad=True)
        w2 = (torch.randn(h, c) * 0.05).requires_grad_()
        b2 = torch.zeros(c, requires_grad=True)
        onehot = torch.zeros(n, c)
        for i in range(n):
            onehot[i, (i + 1) % c] = 1

        def step():
            logits = torch.relu(x @ w1 + b1) @ w2 + b2
            loss = -(torch.log_softmax(logits, 1) * onehot).sum() / n
            loss.backward()

        s = timeit(step, 50)
        report("mlp_fwd_bwd", s, n / s, "samples/s")


if __name__ == "__main__":
    main()
