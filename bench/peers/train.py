"""bench/peers/train.py -- PyTorch's side of bench/train.lua."""
import torch
import torch.nn as nn
from benchlib import report, setup, timeit


def bench(name, model, opt, bs, shape, steps):
    x = torch.randn(shape)
    y = torch.randint(0, 10, (bs,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    s = timeit(step, steps, 5)
    report(name, s, bs / s, "samples/s")


def main():
    want = setup()
    if want("train_cnn"):
        torch.manual_seed(0)
        m = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
        bench("train_cnn", m, torch.optim.Adam(m.parameters(), lr=1e-3), 64, (64, 1, 28, 28), 20)
    if want("train_mlp"):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        bench("train_mlp", m, torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9), 128, (128, 784), 50)


if __name__ == "__main__":
    main()
