/* stft_power.c (cuda) -- the power spectrogram of tensor/audio.h on CUDA
 * tensors: one launch frames and windows the signal into a scratch
 * [B * frames, n_fft], cuFFT's r2c (fft_cufft.c) transforms it, one launch
 * takes |X|^power. Inputs are contiguous float32 or float64 (checked by
 * tensor/stft_power.c); the scratch goes back to the caching allocator. */
#include "../fft.h"
#include "cuda_audio.h"
#include "mt_cuda.h"

typedef unsigned long long dptr;

extern const char mt_cuda_stft_power_cu[];

/* Matches struct mt_stftgeo in stft_power.cu. */
typedef struct stftgeo {
  int64_t B, len, nfft, hop, nf, K, pad;
  double power;
} stftgeo;

static dptr addr(const mt_tensor *t) { return (dptr)(uintptr_t)mt_data(t); }

mt_status mt_cuda_stft_power(const mt_stft_geo *g, const mt_tensor *x, const mt_tensor *w, mt_tensor *out) {
  mt_device d = mt_tdevice(x);
  bool f64 = x->dtype == MT_FLOAT64;
  const char *defs = f64 ? "#define T double\n" : "#define T float\n";
  stftgeo r = {g->B, g->len, g->nfft, g->hop, g->nf, g->K, g->pad, g->power};
  int64_t rows = g->B * g->nf, fshape[2] = {rows, g->nfft}, sshape[3] = {rows, g->K, 2};
  mt_tensor *frames = NULL, *spec = NULL;
  void *fn = NULL;
  mt_status st = mt_empty(fshape, 2, (mt_dtype)x->dtype, d, &frames);
  if (!st) st = mt_empty(sshape, 3, (mt_dtype)x->dtype, d, &spec);
  if (!st) st = mt_cuda_family(d.index, defs, mt_cuda_stft_power_cu, "mt_stft_frames", &fn);
  if (!st) {
    dptr px = addr(x), pw = addr(w), pf = addr(frames);
    void *args[] = {&px, &pw, &pf, &r};
    st = mt_cuda_launch_grid(d.index, fn, (rows * g->nfft + 255) / 256, 256, args, "stft_power");
  }
  if (!st) {
    mt_fft_problem p = {.kind = MT_FFT_R2C, .dbl = f64, .sign = -1, .ndim = 2, .nt = 1,
                        .ishape = {rows, g->nfft}, .oshape = {rows, g->K}, .tdims = {1}, .scale = 1.0};
    st = mt_fft_cuda_run(&p, mt_data(frames), mt_data(spec), d);
  }
  if (!st) st = mt_cuda_family(d.index, defs, mt_cuda_stft_power_cu, "mt_stft_pow", &fn);
  if (!st) {
    dptr ps = addr(spec), po = addr(out);
    void *args[] = {&ps, &po, &r};
    st = mt_cuda_launch_grid(d.index, fn, (rows * g->K + 255) / 256, 256, args, "stft_power");
  }
  mt_release(frames);
  mt_release(spec);
  return st;
}
