"""bench/peers/vision_color.py -- torchvision's side of bench/vision_color.lua:
the same ops on the same sizes, timed the same way; ColorJitter on a batch is
a loop over the images (torchvision draws one set of factors per call).
Uses transforms.v2 when the installed torchvision has it, else the v1
tensor transforms (same semantics)."""
import torch
from benchlib import report, setup, timeit

try:
    import torchvision.transforms.v2 as T
    import torchvision.transforms.v2.functional as F

    def to_float(x):
        return F.to_dtype(x, torch.float32, scale=True)
except ImportError:
    import torchvision.transforms as T
    import torchvision.transforms.functional as F

    def to_float(x):
        return F.convert_image_dtype(x, torch.float32)


def main():
    want = setup()
    torch.manual_seed(0)
    img_f = torch.rand(3, 224, 224)
    img_u = (img_f * 255).floor().to(torch.uint8)
    bat_f = torch.rand(64, 3, 224, 224)
    bat_u = (bat_f * 255).floor().to(torch.uint8)
    cj = T.ColorJitter(0.4, 0.4, 0.4, 0.1)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

    def loop(b):
        def run():
            for i in range(b.shape[0]):
                cj(b[i])
        return run

    rows = [
        ("cj_u8_img", lambda: cj(img_u), 20),
        ("cj_f32_img", lambda: cj(img_f), 20),
        ("cj_u8_b64_loop", loop(bat_u), 1),
        ("cj_u8_b64_per_sample", loop(bat_u), 1),
        ("cj_f32_b64_loop", loop(bat_f), 1),
        ("cj_f32_b64_per_sample", loop(bat_f), 1),
        ("todtype_normalize_img", lambda: F.normalize(to_float(img_u), mean, std), 50),
        ("todtype_normalize_b64", lambda: F.normalize(to_float(bat_u), mean, std), 2),
        ("equalize_u8_img", lambda: F.equalize(img_u), 20),
        ("equalize_u8_b64", lambda: F.equalize(bat_u), 1),
        ("gaussian_blur_f32_img", lambda: F.gaussian_blur(img_f, [9, 9], [2.0, 2.0]), 20),
        ("gaussian_blur_u8_b64", lambda: F.gaussian_blur(bat_u, [5, 5], [1.5, 1.5]), 1),
    ]
    for name, fn, n in rows:
        if want(name):
            report(name, timeit(fn, n, 3 if n == 1 else 5))


if __name__ == "__main__":
    with torch.no_grad():
        main()
