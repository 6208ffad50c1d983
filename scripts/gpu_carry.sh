#!/bin/sh
# gpu_carry.sh -- packs what the GPU machine (the device tool's `run`) needs
# beyond the working tree, which the run tool copies there itself:
# build/moontorch, build/torch.so and the shared libraries they load beyond
# the C library (Lua, oneDNN, SLEEF, Cairo ...) as lib/. Writes
# DEST/moontorch-gpu.tar.xz (DEST defaults to .carry, which git ignores; a
# run carries at most 64 MiB). The run tool sends the session's main
# checkout, so from a worktree give a DEST inside that checkout's ignored
# .carry/. Build first (make). There, in the copied tree's root (the
# binaries find the Lua packages in it: nn/, domains/, lua_bindings/):
#   tar xJf DEST/moontorch-gpu.tar.xz &&
#   LD_LIBRARY_PATH=$PWD/lib build/moontorch tests/run.lua tests/cuda/
# BUILD=build-asan packs the sanitizer build instead (as build/ in the tar;
# there run with ASAN_OPTIONS=protect_shadow_gap=0, which CUDA needs).
set -eu
cd "$(dirname "$0")/.."
dest=${1:-.carry}
b=${BUILD:-build}
[ -x $b/moontorch ] && [ -f $b/torch.so ] || { echo "gpu_carry.sh: run make first" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/build" "$dest"
# every library the loader resolves, except glibc's own and the C++/GCC
# runtimes (the GPU machine's are newer and must win)
for f in $( (ldd $b/moontorch; ldd $b/torch.so) | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$f")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
    *) cp -L "$f" "$stage/lib/" ;;
  esac
done
cp $b/moontorch $b/torch.so "$stage/build/"
tar cJf "$dest/moontorch-gpu.tar.xz" -C "$stage" build lib
ls -l "$dest/moontorch-gpu.tar.xz"
