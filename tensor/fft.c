/* fft.c -- the engine's transforms (fft.h): argument checks, shapes and
 * scales, contiguous operands, then one FFTW (CPU) or cuFFT (CUDA) run.
 * Sizes of the n=/s= options (trimming, zero padding) are the caller's
 * business: these ops transform exactly the sizes they are given. */
#include <math.h>

#include "cpu/fft_kernels.h"
#include "fft.h"
#include "shape.h"

/* Checks x and fills p's shapes (complex side: x's dims but the last) and
 * transformed dims from mask. cplx: x is a real view [..., 2]. */
static mt_status setup(const char *op, const mt_tensor *x, int64_t mask, bool cplx, mt_fft_problem *p) {
  mt_dtype dt = (mt_dtype)x->dtype;
  if (dt != MT_FLOAT32 && dt != MT_FLOAT64)
    return mt_fail(MT_EDTYPE, "%s: expected float32 or float64 data, got %s", op, mt_dtype_name(dt));
  if (cplx && (x->ndim < 1 || x->shape[x->ndim - 1] != 2))
    return mt_fail(MT_ESHAPE, "%s: expected a complex tensor's real view (last dim of size 2)", op);
  p->dbl = dt == MT_FLOAT64;
  p->ndim = x->ndim - (cplx ? 1 : 0);
  p->nt = 0;
  if (mask == 0 || mask >> p->ndim) return mt_fail(MT_EINDEX, "%s: dims out of range for a %d-d signal", op, p->ndim);
  for (int d = 0; d < p->ndim; d++) {
    p->ishape[d] = p->oshape[d] = x->shape[d];
    if (mask >> d & 1) {
      p->tdims[p->nt++] = d;
      if (x->shape[d] < 1)
        return mt_fail(MT_ESHAPE, "%s: invalid number of data points (%lld) specified", op, (long long)x->shape[d]);
    }
  }
  return MT_OK;
}

/* n: the product of the logical sizes of the transformed dims */
static double scale_of(const mt_fft_problem *p, mt_fft_norm norm) {
  if (norm == MT_FFT_NORM_NONE) return 1;
  double n = 1;
  for (int t = 0; t < p->nt; t++) {
    int d = p->tdims[t];
    n *= (double)(p->kind == MT_FFT_C2R ? p->oshape[d] : p->ishape[d]);
  }
  return norm == MT_FFT_NORM_SQRT ? 1 / sqrt(n) : 1 / n;
}

/* Runs p on x into a new tensor of p's output shape (+ [2] when complex).
 * c2r's input is copied (the transform overwrites it). */
static mt_status run_into(const char *op, const mt_tensor *x, mt_fft_problem *p, mt_tensor **res) {
  int64_t shape[MT_MAXDIM];
  int nd = p->ndim;
  for (int d = 0; d < nd; d++) shape[d] = p->oshape[d];
  if (p->kind != MT_FFT_C2R) {
    if (nd + 1 > MT_MAXDIM) return mt_fail(MT_ESHAPE, "%s: at most %d dims", op, MT_MAXDIM - 1);
    shape[nd++] = 2;
  }
  mt_tensor *xc = NULL, *r = NULL;
  mt_status st = p->kind == MT_FFT_C2R ? mt_clone(x, &xc) : mt_contiguous(x, &xc);
  if (!st && !mt_is_contiguous(xc)) {
    mt_tensor *t = xc;
    xc = NULL;
    st = mt_contiguous(t, &xc);
    mt_release(t);
  }
  if (!st) st = mt_empty(shape, nd, (mt_dtype)x->dtype, mt_tdevice(x), &r);
  if (!st) {
    if (mt_tdevice(x).type == MT_CUDA) st = mt_fft_cuda_run(p, mt_data(xc), mt_data(r), mt_tdevice(x));
    else st = mt_fft_cpu_run(p, mt_data(xc), mt_data(r));
  }
  if (xc) mt_release(xc);
  if (st && r) mt_release(r);
  *res = st ? NULL : r;
  return st;
}

/* CUDA: cuFFT wants the transformed dims innermost: x is permuted so (its
 * complex pair kept last), transformed, and the result permuted back; the
 * scale is one multiplication on the device. */
static mt_status run_cuda(const char *op, const mt_tensor *x, mt_fft_problem *p, mt_tensor **res) {
  int perm[MT_MAXDIM], inv[MT_MAXDIM], k = 0, nd = p->ndim;
  bool is_t[MT_MAXDIM] = {false};
  for (int t = 0; t < p->nt; t++) is_t[p->tdims[t]] = true;
  for (int d = 0; d < nd; d++)
    if (!is_t[d]) perm[k++] = d;
  for (int t = 0; t < p->nt; t++) perm[k++] = p->tdims[t];
  mt_fft_problem q = *p;
  for (int d = 0; d < nd; d++) {
    q.ishape[d] = p->ishape[perm[d]], q.oshape[d] = p->oshape[perm[d]];
    inv[perm[d]] = d;
  }
  for (int t = 0; t < p->nt; t++) q.tdims[t] = nd - p->nt + t;
  perm[nd] = inv[nd] = nd; /* the complex pair */
  int xr = x->ndim, rr = p->kind == MT_FFT_C2R ? nd : nd + 1;
  mt_tensor *xp = NULL, *r = NULL, *rp = NULL, *sc = NULL;
  mt_status st = mt_permute(x, perm, xr, &xp);
  if (!st) st = run_into(op, xp, &q, &r);
  if (xp) mt_release(xp);
  if (!st) st = mt_permute(r, inv, rr, &rp);
  if (r) mt_release(r);
  if (!st && p->scale != 1) {
    mt_tensor *t = rp;
    rp = NULL;
    st = mt_scalar_tensor(mt_sfloat(p->scale), (mt_dtype)x->dtype, &sc);
    if (!st) sc->flags |= MT_TF_WRAPPED, st = mt_binary(MT_OP_mul, t, sc, &rp);
    if (sc) mt_release(sc);
    mt_release(t);
  }
  *res = st ? NULL : rp;
  return st;
}

static mt_status run(const char *op, const mt_tensor *x, mt_fft_problem *p, mt_fft_norm norm, mt_tensor **out) {
  p->scale = scale_of(p, norm);
  mt_tensor *r = NULL;
  mt_status st = mt_tdevice(x).type == MT_CUDA ? run_cuda(op, x, p, &r) : run_into(op, x, p, &r);
  return st ? st : mt_deliver(op, r, out);
}

/* CUDA's two-sided r2c: x with a zero imaginary part through c2c */
static mt_status full_cuda(const mt_tensor *x, int64_t mask, mt_fft_norm norm, mt_tensor **out) {
  mt_tensor *z = NULL, *xr = NULL;
  mt_status st = mt_zeros(x->shape, x->ndim, (mt_dtype)x->dtype, mt_tdevice(x), &z);
  if (!st) st = mt_stack((mt_tensor *const[]){(mt_tensor *)x, z}, 2, x->ndim, &xr);
  if (z) mt_release(z);
  if (!st) st = mt_fft_c2c(xr, mask, true, norm, out);
  if (xr) mt_release(xr);
  return st;
}

mt_status mt_fft_c2c(const mt_tensor *x, int64_t mask, bool forward, mt_fft_norm norm, mt_tensor **out) {
  mt_fft_problem p = {.kind = MT_FFT_C2C, .sign = forward ? -1 : 1};
  mt_status st = setup("fft_c2c", x, mask, true, &p);
  return st ? st : run("fft_c2c", x, &p, norm, out);
}

mt_status mt_fft_r2c(const mt_tensor *x, int64_t mask, mt_fft_norm norm, bool full, mt_tensor **out) {
  mt_fft_problem p = {.kind = MT_FFT_R2C, .sign = -1};
  mt_status st = setup("fft_r2c", x, mask, false, &p);
  if (st) return st;
  if (full && mt_tdevice(x).type == MT_CUDA) return full_cuda(x, mask, norm, out);
  int last = p.tdims[p.nt - 1];
  p.full = full;
  if (!full) p.oshape[last] = p.ishape[last] / 2 + 1;
  return run("fft_r2c", x, &p, norm, out);
}

mt_status mt_fft_c2r(const mt_tensor *x, int64_t mask, int64_t lastn, mt_fft_norm norm, mt_tensor **out) {
  mt_fft_problem p = {.kind = MT_FFT_C2R, .sign = 1};
  mt_status st = setup("fft_c2r", x, mask, true, &p);
  if (st) return st;
  int last = p.tdims[p.nt - 1];
  if (lastn < 1) return mt_fail(MT_ESHAPE, "fft_c2r: invalid number of data points (%lld) specified", (long long)lastn);
  if (p.ishape[last] != lastn / 2 + 1)
    return mt_fail(MT_ESHAPE, "fft_c2r: %lld output points need %lld input bins along dim %d, got %lld",
                   (long long)lastn, (long long)(lastn / 2 + 1), last + 1, (long long)p.ishape[last]);
  p.oshape[last] = lastn;
  return run("fft_c2r", x, &p, norm, out);
}
