"""bench/peers/vision_io.py -- torchvision's side of bench/vision_io.lua:
torchvision.io.decode_jpeg / decode_png / read_image on the files the Lua
side wrote to $TMPDIR/moontorch_bench_vision_io/ (run it first), timed the
same way. With a GPU: decode_jpeg(device='cuda') of one image and of a list
of 64 (torchvision >= 0.19 decodes a list as a batch; older ones get a loop,
said on stderr)."""
import os
import sys

import torch
import torchvision.io as io
from benchlib import report, setup, timeit

DIR = os.path.join(os.environ.get("TMPDIR", "/tmp"), "moontorch_bench_vision_io")

ROWS = [("jpeg_astro512", "astro512.jpg", io.decode_jpeg), ("jpeg_astro2000", "astro2000x1500.jpg", io.decode_jpeg),
        ("jpeg_rocket", "rocket.jpg", io.decode_jpeg), ("jpeg_retina", "retina.jpg", io.decode_jpeg),
        ("png_astronaut", "astronaut.png", io.decode_png), ("png_chelsea", "chelsea.png", io.decode_png),
        ("png_coffee", "coffee.png", io.decode_png), ("png_camera_gray", "camera.png", io.decode_png),
        ("png_palette", "green_palette.png", io.decode_png)]


def cuda_rows(want):
    def wall(fn, n):
        return timeit(lambda: (fn(), torch.cuda.synchronize()), n)

    if want("nvjpeg_astro2000"):
        data = io.read_file(os.path.join(DIR, "astro2000x1500.jpg"))
        t = wall(lambda: io.decode_jpeg(data, device="cuda"), 10)
        report("nvjpeg_astro2000", t, 3.0 / t, "Mpix/s")
    if want("nvjpeg_batch64"):
        data = io.read_file(os.path.join(DIR, "astro512.jpg"))
        batch = [data] * 64
        try:
            io.decode_jpeg(batch, device="cuda")
            fn = lambda: io.decode_jpeg(batch, device="cuda")
        except Exception:
            sys.stderr.write("vision_io.py: this torchvision decodes no lists on CUDA; timing a loop\n")
            fn = lambda: [io.decode_jpeg(d, device="cuda") for d in batch]
        t = wall(fn, 3)
        report("nvjpeg_batch64", t, 64 * 512 * 512 / 1e6 / t, "Mpix/s")


def main():
    want = setup()
    for name, f, dec in ROWS:
        if want(name) and os.path.exists(os.path.join(DIR, f)):
            data = io.read_file(os.path.join(DIR, f))
            img = dec(data)
            mpix = img.shape[1] * img.shape[2] / 1e6
            t = timeit(lambda: dec(data), max(2, int(0.05 / mpix)))
            report(name, t, mpix / t, "Mpix/s")
    if want("read_image_astro512"):
        path = os.path.join(DIR, "astro512.jpg")
        t = timeit(lambda: io.read_image(path), 20)
        report("read_image_astro512", t, 512 * 512 / 1e6 / t, "Mpix/s")
    if torch.cuda.is_available():
        cuda_rows(want)


if __name__ == "__main__":
    main()
