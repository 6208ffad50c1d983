#!/bin/sh
# scripts/hip_kernels.sh FAMILY OUTDIR -- `make HIP=1`'s offline check of
# one kernel family for AMD GPUs: every member listed in
# tensor/cuda/FAMILY.samples ("sample NAME" lines, each followed by the
# #defines the host code prepends) is assembled as mt_cuda_family
# (kernels.c) does at run time -- definitions, common.cu, FAMILY.cu -- and
#  1. compiled by hipcc into a code object for each of $HIP_ARCHS, with the
#     HIP runtime header included as hiprtc includes it;
#  2. when $HIPRTC_CHECK names the built tests/hip/hiprtc_check, compiled
#     at run time by hiprtc through gpu_port.h for each of $HIP_RTC_ARCHS,
#     exactly as the HIP build's nvrtc.c will on an AMD GPU.
# Fails on the first member that does not compile, or when the family has
# no samples file. Environment: HIPCC (default hipcc), HIP_ARCHS (default
# gfx90a), HIPRTC_CHECK (default: skip step 2), HIP_RTC_ARCHS (gfx90a).
set -eu
fam=$1
out=$2
cc=${HIPCC:-hipcc}
archs=${HIP_ARCHS:-gfx90a}
rtc=${HIPRTC_CHECK:-}
rtc_archs=${HIP_RTC_ARCHS:-gfx90a}
src=tensor/cuda/$fam.cu
samples=tensor/cuda/$fam.samples
if [ ! -f "$samples" ]; then
  echo "hip_kernels: $src has no members to compile for HIP: add $samples" \
    "(\"sample NAME\" lines, each followed by the #defines the host code prepends; see elementwise.samples)" >&2
  exit 1
fi
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "hip_kernels: $cc not found: make HIP=1 needs Debian's hipcc (apt-get install hipcc)" >&2
  exit 1
fi
mkdir -p "$out"
rm -f "$out/$fam"-*.hip "$out/$fam"-*.cu "$out/$fam"-*.co
# one file per sample: its definitions, then the two sources by #include
awk -v out="$out" -v fam="$fam" -v samples="$samples" '
  function finish() { if (file != "") { print "#include \"common.cu\"\n#include \"" fam ".cu\"" > file; close(file) } }
  /^sample[ \t]/ { finish(); file = out "/" fam "-" $2 ".hip"; next }
  /^[ \t]*(\/\/.*)?$/ { next }
  { if (file == "") { print samples ": a definition before the first sample line" > "/dev/stderr"; exit 1 }
    print > file }
  END { finish() }' "$samples"
flags=""
for a in $archs; do flags="$flags --offload-arch=$a"; done
n=0
for f in "$out/$fam"-*.hip; do
  [ -f "$f" ] || { echo "hip_kernels: $samples lists no sample" >&2; exit 1; }
  # v != v, the NaN test, is tautological in the integer members: not worth a warning
  # shellcheck disable=SC2086
  if ! "$cc" -x hip -std=c++17 -include hip/hip_runtime.h -Itensor/cuda -Wno-tautological-compare $flags --genco \
    -o "${f%.hip}.co" "$f"; then
    echo "hip_kernels: $fam member $(basename "${f%.hip}" | sed "s/^$fam-//") ($f) does not compile for $archs" >&2
    exit 1
  fi
  if [ -n "$rtc" ]; then # the one source hiprtc gets: the same text, flat
    { grep -v '^#include' "$f"; cat tensor/cuda/common.cu "$src"; } >"${f%.hip}.cu"
    "$rtc" "$rtc_archs" "${f%.hip}.cu"
  fi
  n=$((n + 1))
done
if [ -n "$rtc" ]; then
  echo "hip_kernels: $fam: $n members compile for $archs (hipcc) and $rtc_archs (hiprtc)"
else
  echo "hip_kernels: $fam: $n members compile for $archs (hipcc)"
fi
