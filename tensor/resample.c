/* resample.c -- audio resampling (resample.h): designs torchaudio's
 * windowed-sinc polyphase filter (_get_sinc_resample_kernel's formulas, in
 * double, keeping each phase's non-zero taps only), checks the arguments
 * and runs the filter or its adjoint over the rows of [..., time]
 * (cpu/resample_kernels.c, cuda/resample.c). float16/bfloat16 are computed
 * in float32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/resample_kernels.h"
#include "cuda/cuda_audio.h"
#include "reduce_util.h"
#include "resample.h"

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* the modified Bessel function I0 (its power series, which converges
 * fast for the Kaiser betas used here) */
static double bessel_i0(double x) {
  double term = 1, sum = 1, q = x * x / 4;
  for (int k = 1; k < 500 && term > sum * 1e-17; k++) {
    term *= q / ((double)k * (double)k);
    sum += term;
  }
  return sum;
}

/* the weight at t = (idx - phase / new) * base, torchaudio's order of
 * operations in double; 0 where |t| >= lpw (its clamp, where the window
 * is 0) */
static double tap_value(const mt_resample_args *a, double t, double scale, double i0_beta) {
  double lpw = (double)a->lpw, window;
  if (!(fabs(t) < lpw)) return 0;
  if (a->method == MT_RESAMPLE_HANN) {
    double c = cos(t * M_PI / lpw / 2);
    window = c * c;
  } else { /* torchaudio holds beta, and computes I0(beta), in float32 */
    double r = t / lpw, beta = (double)(float)a->beta;
    window = bessel_i0(beta * sqrt(1 - r * r)) / i0_beta;
  }
  t *= M_PI;
  double sinc = t == 0 ? 1.0 : sin(t) / t;
  return sinc * (window * scale);
}

/* the same in float32, each step rounded as torchaudio's float32 tensors
 * round it (its functional resample designs the filter in the waveform's
 * dtype); idx = (k - width) / orig, ph: the phase */
static double tap_value_f32(const mt_resample_args *a, int64_t k, int64_t width, int64_t orig, int64_t nw,
                            int64_t ph, double base, double scale, double i0_beta) {
  float lpw = (float)a->lpw, idx = (float)(k - width) / (float)orig, window;
  float t = ((float)(-ph) / (float)nw + idx) * (float)base;
  if (!(fabsf(t) < lpw)) return 0;
  if (a->method == MT_RESAMPLE_HANN) {
    float c = cosf(t * (float)M_PI / lpw / 2.0f);
    window = c * c;
  } else {
    float r = t / lpw, beta = (float)a->beta, s = sqrtf(1.0f - r * r);
    window = (float)bessel_i0((double)(beta * s)) / (float)i0_beta;
  }
  t *= (float)M_PI;
  float sinc = t == 0 ? 1.0f : sinf(t) / t;
  return (double)(sinc * (window * (float)scale));
}

static mt_status check_args(const char *op, const mt_resample_args *a) {
  if (a->orig <= 0 || a->new_ <= 0)
    return mt_fail(MT_EARG, "%s: the frequencies must be positive, got orig_freq=%lld new_freq=%lld", op,
                   (long long)a->orig, (long long)a->new_);
  if (a->lpw <= 0) return mt_fail(MT_EARG, "%s: lowpass_filter_width must be positive, got %lld", op, (long long)a->lpw);
  if (!(a->rolloff > 0) || !isfinite(a->rolloff))
    return mt_fail(MT_EARG, "%s: rolloff must be positive, got %g", op, a->rolloff);
  if (a->method < 0 || a->method >= MT_RESAMPLE_NMETHODS)
    return mt_fail(MT_EARG, "%s: unknown resampling method %lld", op, (long long)a->method);
  if (a->method == MT_RESAMPLE_KAISER && (!isfinite(a->beta) || a->beta < 0))
    return mt_fail(MT_EARG, "%s: beta must be a non-negative number, got %g", op, a->beta);
  if (a->pad_left < 0 || a->out_len < 0)
    return mt_fail(MT_EARG, "%s: negative padding (%lld) or length (%lld)", op, (long long)a->pad_left,
                   (long long)a->out_len);
  return MT_OK;
}

mt_status mt_resample_plan_make(const mt_resample_args *a, mt_resample_plan *p) {
  memset(p, 0, sizeof *p);
  mt_status st = check_args("resample", a);
  if (st) return st;
  int64_t g = gcd64(a->orig, a->new_), orig = a->orig / g, nw = a->new_ / g;
  double base = (double)(orig < nw ? orig : nw) * a->rolloff;
  double w = ceil((double)(a->lpw * orig) / base);
  if (!(w < 1e7) || nw > 10000000)
    return mt_fail(MT_EARG, "resample: the filter of %lld -> %lld Hz is too large", (long long)a->orig,
                   (long long)a->new_);
  int64_t width = (int64_t)w, K = 2 * width + orig;
  /* I0(beta) as torchaudio has it: beta and the result in float32 */
  double i0b = a->method == MT_RESAMPLE_KAISER ? (double)(float)bessel_i0((double)(float)a->beta) : 1;
  double scale = base / (double)orig, reach = (double)a->lpw * (double)orig / base;
  /* a phase's taps are non-zero only within reach of its center: each row
   * keeps that span (stride S, a tap of margin either side for rounding),
   * not torchaudio's K taps, so 22050 -> 27562 Hz holds 11025 x 18 taps
   * rather than 11025 x 13800 */
  int64_t S = (int64_t)ceil(2 * reach) + 6;
  if (S > K) S = K;
  if ((double)S * (double)nw > 1e8)
    return mt_fail(MT_EARG, "resample: the filter of %lld -> %lld Hz (reduced %lld -> %lld) is too large",
                   (long long)a->orig, (long long)a->new_, (long long)orig, (long long)nw);
  *p = (mt_resample_plan){.orig = orig, .new_ = nw, .width = width, .ntaps = S};
  p->first = calloc((size_t)nw, sizeof(int64_t)), p->count = calloc((size_t)nw, sizeof(int64_t));
  p->taps = calloc((size_t)(S * nw), sizeof(double));
  if (!p->first || !p->count || !p->taps) {
    mt_resample_plan_free(p);
    return mt_fail(MT_ENOMEM, "resample: out of memory for the filter");
  }
  for (int64_t ph = 0; ph < nw; ph++) {
    double center = (double)width + (double)orig * (double)ph / (double)nw;
    int64_t k0 = (int64_t)floor(center - reach) - 1, k1 = (int64_t)ceil(center + reach) + 2;
    if (k0 < 0) k0 = 0;
    if (k1 > K) k1 = K;
    if (k1 - k0 > S) k1 = k0 + S;
    double *row = p->taps + ph * S;
    int64_t lo = K, hi = -1;
    for (int64_t k = k0; k < k1; k++) {
      double t = ((double)(-ph) / (double)nw + (double)(k - width) / (double)orig) * base;
      double v = row[k - k0] = a->design_f32 ? tap_value_f32(a, k, width, orig, nw, ph, base, scale, i0b)
                                             : tap_value(a, t, scale, i0b);
      if (v != 0 && k < lo) lo = k;
      if (v != 0) hi = k;
    }
    if (hi < 0) {
      p->first[ph] = 0, p->count[ph] = 0;
      continue;
    }
    memmove(row, row + (lo - k0), (size_t)(hi - lo + 1) * sizeof(double)); /* row[j] = tap lo + j */
    p->first[ph] = lo, p->count[ph] = hi - lo + 1;
  }
  return MT_OK;
}

void mt_resample_plan_free(mt_resample_plan *p) {
  free(p->first), free(p->count), free(p->taps);
  memset(p, 0, sizeof *p);
}

/* runs the filter (or the adjoint) of a from x [..., in] into a new [...,
 * n_out] tensor of x's dtype */
static mt_status run(const char *op, const mt_tensor *x, const mt_resample_args *a, bool adjoint, int64_t n_out,
                     mt_tensor **out) {
  char b[96];
  if (x->ndim < 1) return mt_fail(MT_ESHAPE, "%s: expected a waveform [..., time], got a 0-dim tensor", op);
  if (!mt_is_floating((mt_dtype)x->dtype))
    return mt_fail(MT_EDTYPE, "%s: expected a floating waveform, got %s (shape %s)", op,
                   mt_dtype_name((mt_dtype)x->dtype), mt_shape_str(x->shape, x->ndim, b, sizeof b));
  mt_resample_plan p;
  mt_status st = mt_resample_plan_make(a, &p);
  if (st) return st;
  mt_tensor *u = NULL, *c = NULL, *y = NULL, *res = NULL;
  int64_t ys[MT_MAXDIM], n_in = x->shape[x->ndim - 1], rows = 1;
  memcpy(ys, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  for (int i = 0; i < x->ndim - 1; i++) rows *= x->shape[i];
  ys[x->ndim - 1] = n_out;
  mt_rsmp_geo g = {rows, adjoint ? n_out : n_in, adjoint ? n_in : n_out, a->pad_left};
  st = mt_upcast_half(x, &u);
  if (!st) st = mt_contiguous(u, &c);
  if (!st) st = mt_empty(ys, x->ndim, (mt_dtype)c->dtype, mt_tdevice(x), &y);
  if (!st && rows > 0 && mt_tdevice(x).type == MT_CUDA) st = mt_cuda_resample(&p, &g, adjoint, c, y);
  else if (!st && rows > 0 && adjoint) st = mt_cpu_resample_adjoint((mt_dtype)c->dtype, &p, &g, mt_data(c), mt_data(y));
  else if (!st && rows > 0) st = mt_cpu_resample((mt_dtype)c->dtype, &p, &g, mt_data(c), mt_data(y));
  if (!st) st = mt_to_dtype(y, (mt_dtype)x->dtype, false, &res);
  mt_resample_plan_free(&p);
  mt_release(u), mt_release(c), mt_release(y);
  return st ? st : mt_deliver(op, res, out);
}

mt_status mt_audio_resample(const mt_tensor *x, const mt_resample_args *a, mt_tensor **out) {
  return run("resample", x, a, false, a->out_len, out);
}

mt_status mt_audio_resample_backward(const mt_tensor *g, const mt_resample_args *a, int64_t in_len,
                                     mt_tensor **out) {
  if (g->ndim >= 1 && g->shape[g->ndim - 1] != a->out_len)
    return mt_fail(MT_ESHAPE, "resample_backward: the gradient has %lld samples, expected %lld",
                   (long long)g->shape[g->ndim - 1], (long long)a->out_len);
  if (in_len < 0) return mt_fail(MT_EARG, "resample_backward: negative input length %lld", (long long)in_len);
  return run("resample_backward", g, a, true, in_len, out);
}
