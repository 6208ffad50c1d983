"""bench/peers/vision_models.py -- torchvision's side of bench/vision_models.lua:
resnet50, mobilenet_v3_small and vit_b_16 inference, batch 8 x 3 x 224 x 224,
eval mode under no_grad, timed the same way."""
import torch
import torchvision
from benchlib import report, setup, timeit


def main():
    want = setup()
    for name in ["resnet50", "mobilenet_v3_small", "vit_b_16"]:
        row = name + "_b8_fwd"
        if want(row):
            torch.manual_seed(0)
            m = torchvision.models.get_model(name).eval()
            x = torch.randn(8, 3, 224, 224)
            t = timeit(lambda: m(x), 1, 3)
            report(row, t, 8 / t, "img/s")


if __name__ == "__main__":
    with torch.no_grad():
        main()
