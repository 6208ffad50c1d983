#!/bin/sh
# scripts/setup.sh -- installs the Debian 12 packages moontorch needs to build,
# test and benchmark (only those missing). Needs root or sudo and access to
# Debian's package archive. Safe to run again.
set -e
# zlib1g-dev: gzip'ed idx files; libpng-dev: PNG images (tensorboard, torch.vision.io); libjpeg62-turbo-dev: JPEG (torch.vision.io); clang + libclang-rt-14-dev: `make fuzz` (libFuzzer);
# dataset-fashion-mnist: real idx files for tests/io/test_idx.lua; fortunes: the text corpus of
# scripts/train_char_gpt.lua; libcairo2-dev: torch.plot's PNG pictures; libwebp-dev: WebP (torch.vision.io); libdeflate-dev: PNG inflate (torch.vision.io's fast path);
# tuxpaint-stamps-default: PNG folders for the ImageFolder tests; python3-skimage: sample photos (vision tests);
# libsndfile1-dev: sound files (torch.audio.load/save); libmpg123-dev: MP3 reading (quiet, beside libsndfile); libfftw3-dev: torch.fft on the CPU; libsoxr-dev: Resample's soxr_hq;
# espeak-ng + flite: the spoken digits of scripts/train_spoken_digits.lua and the audio tests; python3-torchaudio: reference values;
# sox: resampling the synthesized speech to 16 kHz (scripts/audio/make_spoken_digits.lua, audio tests);
# asterisk-core-sounds-en-wav: a real human voice (telephone prompts: the digits) the spoken-digit model is checked on;
# libmujoco-dev: torch.rl.envs.MujocoEnv (MuJoCo 2.2's C API); libmujoco-samples: its models for the tests and bench (/usr/share/mujoco/model)
PKGS="build-essential pkg-config lua5.4 liblua5.4-dev libopenblas-dev liblapacke-dev libdnnl-dev \
libsleef-dev libedit-dev python3 python3-torch valgrind zlib1g-dev libpng-dev libjpeg62-turbo-dev clang libclang-rt-14-dev \
dataset-fashion-mnist fortunes libcairo2-dev libwebp-dev libdeflate-dev tuxpaint-stamps-default python3-skimage \
libsndfile1-dev libmpg123-dev libfftw3-dev libsoxr-dev espeak-ng flite python3-torchaudio asterisk-core-sounds-en-wav sox \
libmujoco-dev libmujoco-samples"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
