/* stft_power.c -- the power spectrogram op of tensor/audio.h: argument
 * checks and the dispatch to the CPU loops (cpu/stft_power.c) or the CUDA
 * kernels (cuda/stft_power.c). Nothing here knows autograd. */
#include <stdio.h>

#include "audio.h"
#include "cpu/stft_kernels.h"
#include "cuda/cuda_audio.h"

#define OP "stft_power"

static mt_status check(const mt_tensor *x, const mt_tensor *w, int64_t hop, double power, int64_t pad) {
  char s1[96], s2[96];
  if (x->ndim != 2 || w->ndim != 1)
    return mt_fail(MT_ESHAPE, OP ": the signal must be [B, T] and the window [n_fft], got %s and %s",
                   mt_shape_str(x->shape, x->ndim, s1, sizeof s1), mt_shape_str(w->shape, w->ndim, s2, sizeof s2));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail(MT_EDTYPE, OP ": the signal must be float32 or float64, got %s", mt_dtype_name((mt_dtype)x->dtype));
  if (w->dtype != x->dtype)
    return mt_fail(MT_EDTYPE, OP ": the window is %s but the signal is %s", mt_dtype_name((mt_dtype)w->dtype),
                   mt_dtype_name((mt_dtype)x->dtype));
  if (!mt_same_device(mt_tdevice(x), mt_tdevice(w)))
    return mt_fail(MT_EDEVICE, OP ": the window and the signal are on different devices");
  int64_t T = x->shape[1], n = w->shape[0];
  if (hop < 1 || n < 1 || pad < 0 || (pad > 0 && pad >= T) || T + 2 * pad < n || !(power > 0))
    return mt_fail(MT_EARG, OP ": bad sizes (T %lld, n_fft %lld, hop %lld, reflect pad %lld, power %g)",
                   (long long)T, (long long)n, (long long)hop, (long long)pad, power);
  return MT_OK;
}

mt_status mt_stft_power(const mt_tensor *x, const mt_tensor *w, int64_t hop, double power, int64_t pad,
                        mt_tensor **out) {
  mt_status st = check(x, w, hop, power, pad);
  if (st) return st;
  mt_stft_geo g = {.B = x->shape[0], .len = x->shape[1], .nfft = w->shape[0], .hop = hop, .pad = pad,
                   .power = power};
  g.nf = (g.len + 2 * pad - g.nfft) / hop + 1, g.K = g.nfft / 2 + 1;
  int64_t shape[3] = {g.B, g.nf, g.K};
  mt_tensor *xc = NULL, *wc = NULL, *y = *out;
  if (y && (y->ndim != 3 || y->shape[0] != g.B || y->shape[1] != g.nf || y->shape[2] != g.K || y->dtype != x->dtype ||
            !mt_is_contiguous(y) || !mt_same_device(mt_tdevice(y), mt_tdevice(x))))
    return mt_fail(MT_ESHAPE, OP ": the output must be a contiguous [%lld, %lld, %lld] %s tensor on the signal's device",
                   (long long)g.B, (long long)g.nf, (long long)g.K, mt_dtype_name((mt_dtype)x->dtype));
  st = mt_contiguous(x, &xc);
  if (!st) st = mt_contiguous(w, &wc);
  if (!st && !y) st = mt_empty(shape, 3, (mt_dtype)x->dtype, mt_tdevice(x), &y);
  if (!st && g.B * g.nf > 0) {
    if (mt_tdevice(x).type == MT_CUDA) st = mt_cuda_stft_power(&g, xc, wc, y);
    else st = mt_cpu_stft_power((mt_dtype)x->dtype, &g, mt_data(xc), mt_data(wc), mt_data(y));
  }
  mt_release(xc);
  mt_release(wc);
  if (st && y != *out) mt_release(y);
  else *out = y;
  return st;
}
