#!/bin/sh
# gpu_carry.sh -- packs what the GPU machine (the device tool's `run`) lacks
# to run moontorch there: build/moontorch, build/torch.so and the shared
# libraries they load beyond the C library (Lua, oneDNN, SLEEF, Cairo ...),
# into .carry/moontorch-gpu.tar.xz (git-ignored; a run carries at most 64 MiB).
# Build first (make). On the GPU machine, with carry=[".carry"]:
#   tar xJf .carry/moontorch-gpu.tar.xz && \
#   LD_LIBRARY_PATH=$PWD/.carry/lib build/moontorch tests/run.lua tests/cuda/
set -eu
cd "$(dirname "$0")/.."
[ -x build/moontorch ] && [ -f build/torch.so ] || { echo "gpu_carry.sh: run make first" >&2; exit 1; }
rm -rf .carry/lib .carry/moontorch-gpu.tar.xz
mkdir -p .carry/lib
# every library the loader resolves, except glibc's own and the C++/GCC
# runtimes (the GPU machine's are newer and must win)
for f in $( (ldd build/moontorch; ldd build/torch.so) | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$f")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
    *) cp -L "$f" .carry/lib/ ;;
  esac
done
tar cJf .carry/moontorch-gpu.tar.xz build/moontorch build/torch.so .carry/lib
rm -rf .carry/lib
ls -l .carry/moontorch-gpu.tar.xz
