/* linalg_cuda.c -- torch.linalg on CUDA tensors: the factorizations run in
 * cuSOLVER (cuda/solver.c) on the column-major buffers linalg.c prepares;
 * what LAPACK did on the host around them (clearing a triangle, copying
 * reflectors, identities for the inverse) is done with engine ops on the
 * device. Failure codes (devInfo) are copied down once per call and become
 * the CPU's messages; det/slogdet copy down the LU diagonal and pivots (n
 * numbers per matrix) and finish as the CPU does. */
#include <math.h>
#include <stdio.h>

#include "cuda/mt_cuda.h"
#include "linalg_cuda.h"
#include "reduce.h"

mt_status mt_la_to_host(const mt_tensor *t, mt_tensor **out) { return mt_cuda_to_device(t, mt_cpu(), false, out); }

mt_status mt_la_move(mt_tensor **t, mt_device dev) {
  mt_tensor *r = NULL;
  mt_status st = mt_cuda_to_device(*t, dev, false, &r);
  mt_release(*t);
  *t = st ? NULL : r;
  return st;
}

static int dev_of(const mt_tensor *t) { return mt_tdevice(t).index; }
static bool dbl_of(const mt_tensor *t) { return t->dtype == MT_FLOAT64; }
static int *I(const mt_tensor *t) { return (int *)mt_data(t); } /* an int32 buffer */

static mt_status ints(const mt_tensor *like, int64_t n, mt_tensor **out) {
  return mt_empty(&n, 1, MT_INT32, mt_tdevice(like), out);
}

/* "the matrix" or "matrix 3 of the batch" (1-based), as linalg.c says it */
static const char *which(int64_t b, int64_t nb, char *buf, size_t n) {
  if (nb <= 1) return "the matrix";
  snprintf(buf, n, "matrix %lld of the batch", (long long)b + 1);
  return buf;
}

/* The first of nb device ints that is not 0: its index in *b (-1: none)
 * and value in *code (one copy to the host, which waits for the solver). */
static mt_status first_bad(const mt_tensor *info, int64_t nb, int64_t *b, int *code) {
  mt_tensor *v = NULL, *h = NULL;
  *b = -1;
  *code = 0;
  mt_status st = mt_narrow(info, 0, 0, nb, &v);
  if (!st) st = mt_la_to_host(v, &h);
  for (int64_t i = 0; !st && i < nb; i++)
    if (((const int *)mt_data(h))[i]) {
      *b = i;
      *code = ((const int *)mt_data(h))[i];
      break;
    }
  mt_release(v);
  mt_release(h);
  return st;
}

static mt_status internal(const char *op, const char *routine, int code) {
  return mt_fail(MT_ELINALG, "%s: cuSOLVER %s rejected argument %d (internal error)", op, routine, -code);
}

/* rows x cols of dt on dev: 1 where keep(r, c), else 0 (kind 0: c >= r,
 * 1: c <= r, 2: r == c), made on the host and copied. */
static mt_status mask(int64_t rows, int64_t cols, int kind, mt_dtype dt, mt_device dev, mt_tensor **out) {
  int64_t shape[2] = {rows, cols};
  mt_tensor *h = NULL;
  mt_status st = mt_zeros(shape, 2, dt, mt_cpu(), &h);
  for (int64_t r = 0; !st && r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      bool keep = kind == 0 ? c >= r : kind == 1 ? c <= r : c == r;
      if (!keep) continue;
      if (dt == MT_FLOAT64)
        ((double *)mt_data(h))[r * cols + c] = 1;
      else
        ((float *)mt_data(h))[r * cols + c] = 1;
    }
  if (!st) st = mt_cuda_to_device(h, dev, false, out);
  mt_release(h);
  return st;
}

/* dst = src * mask (the mask of kind over src's last two dims) */
static mt_status masked_copy(mt_tensor *dst, const mt_tensor *src, int kind) {
  mt_tensor *m = NULL, *p = NULL;
  mt_status st = mask(src->shape[src->ndim - 2], src->shape[src->ndim - 1], kind, (mt_dtype)src->dtype,
                      mt_tdevice(src), &m);
  if (!st) st = mt_binary(MT_OP_mul, src, m, &p);
  if (!st) st = mt_copy_(dst, p);
  mt_release(m);
  mt_release(p);
  return st;
}

mt_status mt_la_cuda_inv(const char *op, mt_tensor *f, int n, int64_t nb, mt_tensor **inv) {
  mt_tensor *eye = NULL, *eb = NULL, *B = NULL, *ipiv = NULL, *info = NULL;
  int64_t b;
  int code;
  char buf[64];
  mt_status st = mask(n, n, 2, (mt_dtype)f->dtype, mt_tdevice(f), &eye);
  if (!st) st = mt_expand(eye, f->shape, f->ndim, &eb);
  if (!st) st = mt_empty(f->shape, f->ndim, (mt_dtype)f->dtype, mt_tdevice(f), &B);
  if (!st) st = mt_copy_(B, eb);
  if (!st) st = ints(f, nb * n, &ipiv);
  if (!st) st = ints(f, 2 * nb, &info);
  if (!st) st = mt_cuda_getrf(op, dev_of(f), dbl_of(f), n, nb, mt_data(f), I(ipiv), I(info));
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code > 0)
    st = mt_fail(MT_ELINALG, "%s: %s is singular (pivot %d is zero), so it has no inverse", op,
                 which(b, nb, buf, sizeof buf), code);
  else if (!st && code < 0)
    st = internal(op, "getrf", code);
  if (!st)
    st = mt_cuda_getrs(op, dev_of(f), dbl_of(f), n, n, nb, mt_data(f), I(ipiv), mt_data(B),
                       I(info) + nb);
  mt_release(eye);
  mt_release(eb);
  mt_release(ipiv);
  mt_release(info);
  if (st) mt_release(B);
  *inv = st ? NULL : B;
  return st;
}

mt_status mt_la_cuda_lu_logdet(const char *op, mt_tensor *f, int n, int64_t nb, double *sign, double *logabs) {
  mt_tensor *ipiv = NULL, *info = NULL, *d = NULL, *hd = NULL, *hp = NULL;
  mt_status st = MT_OK;
  bool dbl = dbl_of(f);
  if (n > 0 && nb > 0) {
    st = ints(f, nb * n, &ipiv);
    if (!st) st = ints(f, nb, &info);
    if (!st) st = mt_cuda_getrf(op, dev_of(f), dbl, n, nb, mt_data(f), I(ipiv), I(info));
    if (!st) st = mt_diagonal(f, 0, f->ndim - 2, f->ndim - 1, &d);
    if (!st) st = mt_la_to_host(d, &hd);
    if (!st) st = mt_la_to_host(ipiv, &hp);
  }
  for (int64_t b = 0; !st && b < nb; b++) {
    double s = 1, l = 0;
    for (int i = 0; i < n; i++) {
      int64_t j = b * n + i;
      double v = dbl ? ((const double *)mt_data(hd))[j] : ((const float *)mt_data(hd))[j];
      if (((const int *)mt_data(hp))[j] != i + 1) s = -s;
      if (v < 0) s = -s;
      if (v == 0) s = 0;
      l += log(fabs(v));
    }
    sign[b] = s;
    logabs[b] = s == 0 ? -INFINITY : l;
  }
  mt_release(ipiv);
  mt_release(info);
  mt_release(d);
  mt_release(hd);
  mt_release(hp);
  return st;
}

mt_status mt_la_cuda_solve(const char *op, mt_tensor *fa, mt_tensor *fb, int n, int nrhs, int64_t nb) {
  mt_tensor *ipiv = NULL, *info = NULL;
  int64_t b;
  int code;
  char buf[64];
  mt_status st = ints(fa, nb * n, &ipiv);
  if (!st) st = ints(fa, 2 * nb, &info);
  if (!st) st = mt_cuda_getrf(op, dev_of(fa), dbl_of(fa), n, nb, mt_data(fa), I(ipiv), I(info));
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code > 0)
    st = mt_fail(MT_ELINALG, "%s: %s is singular (pivot %d is zero), so the system has no unique solution", op,
                 which(b, nb, buf, sizeof buf), code);
  else if (!st && code < 0)
    st = internal(op, "getrf", code);
  if (!st)
    st = mt_cuda_getrs(op, dev_of(fa), dbl_of(fa), n, nrhs, nb, mt_data(fa), I(ipiv), mt_data(fb),
                       I(info) + nb);
  mt_release(ipiv);
  mt_release(info);
  return st;
}

mt_status mt_la_cuda_cholesky(const char *op, mt_tensor *f, bool upper, int n, int64_t nb) {
  mt_tensor *info = NULL;
  int64_t b;
  int code;
  char buf[64];
  mt_status st = ints(f, nb, &info);
  if (!st) st = mt_cuda_potrf(op, dev_of(f), dbl_of(f), upper, n, nb, mt_data(f), I(info));
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code > 0)
    st = mt_fail(MT_ELINALG,
                 "%s: %s is not positive-definite (the leading minor of order %d is not positive), so it has no "
                 "Cholesky factor",
                 op, which(b, nb, buf, sizeof buf), code);
  else if (!st && code < 0)
    st = internal(op, "potrf", code);
  /* column-major (i, j) is f[..., j, i]: lower keeps i >= j, i.e. c >= r */
  if (!st) st = masked_copy(f, f, upper ? 1 : 0);
  mt_release(info);
  return st;
}

mt_status mt_la_cuda_qr(const char *op, mt_tensor *f, mt_tensor *fr, mt_tensor *fq, int m, int n, int64_t nb) {
  int nd = f->ndim, k = m < n ? m : n, rrows = (int)fr->shape[nd - 1];
  int64_t tn = nb * k;
  mt_tensor *tau = NULL, *info = NULL, *top = NULL, *fv = NULL, *qv = NULL;
  int64_t b;
  int code;
  mt_status st = mt_empty(&tn, 1, (mt_dtype)f->dtype, mt_tdevice(f), &tau);
  if (!st) st = ints(f, nb, &info);
  if (!st) st = mt_cuda_geqrf(op, dev_of(f), dbl_of(f), m, n, nb, mt_data(f), mt_data(tau), I(info));
  /* R: the first rrows rows, on and above the diagonal (c <= r in f's view) */
  if (!st) st = mt_narrow(f, nd - 1, 0, rrows, &top);
  if (!st) st = masked_copy(fr, top, 1);
  if (!st && fq) { /* Q: the reflectors' columns, made explicit */
    int qcols = (int)fq->shape[nd - 2], ncopy = qcols < n ? qcols : n;
    st = mt_narrow(f, nd - 2, 0, ncopy, &fv);
    if (!st) st = mt_narrow(fq, nd - 2, 0, ncopy, &qv);
    if (!st) st = mt_copy_(qv, fv);
    if (!st) st = mt_cuda_orgqr(op, dev_of(f), dbl_of(f), m, qcols, k, nb, mt_data(fq), mt_data(tau), I(info));
  }
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code) st = internal(op, fq ? "geqrf/orgqr" : "geqrf", code);
  mt_release(tau);
  mt_release(info);
  mt_release(top);
  mt_release(fv);
  mt_release(qv);
  return st;
}

/* A contiguous tensor of f's batch dims + (d0, d1) on f's device. */
static mt_status batch_empty(const mt_tensor *f, int64_t d0, int64_t d1, mt_tensor **out) {
  int64_t shape[MT_MAXDIM];
  int nd = f->ndim;
  for (int i = 0; i < nd - 2; i++) shape[i] = f->shape[i];
  shape[nd - 2] = d0;
  shape[nd - 1] = d1;
  return mt_empty(shape, nd, (mt_dtype)f->dtype, mt_tdevice(f), out);
}

mt_status mt_la_cuda_svd(const char *op, mt_tensor *f, bool full, mt_tensor *S, mt_tensor *fu, mt_tensor *fvt, int m,
                         int n, int64_t nb) {
  bool econ = !full || !fu;
  int k = m < n ? m : n, ucols = econ ? k : m, vcols = econ ? k : n;
  mt_tensor *U = NULL, *V = NULL, *info = NULL, *vt = NULL;
  int64_t b;
  int code;
  char buf[64];
  /* gesvdj's V (n x vcols, column-major) is Vh (vcols x n) row-major */
  mt_status st = fu ? (U = mt_retain(fu), MT_OK) : batch_empty(f, ucols, m, &U);
  if (!st) st = batch_empty(f, vcols, n, &V);
  if (!st) st = ints(f, nb, &info);
  if (!st)
    st = mt_cuda_gesvdj(op, dev_of(f), dbl_of(f), econ, m, n, nb, mt_data(f), mt_data(S), mt_data(U), mt_data(V),
                        I(info));
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code > 0)
    st = mt_fail(MT_ELINALG, "%s: the SVD of %s did not converge (does it contain NaN or inf?)", op,
                 which(b, nb, buf, sizeof buf));
  else if (!st && code < 0)
    st = internal(op, "gesvdj", code);
  if (!st && fvt) st = mt_transpose(fvt, fvt->ndim - 2, fvt->ndim - 1, &vt);
  if (!st && fvt) st = mt_copy_(vt, V);
  mt_release(U);
  mt_release(V);
  mt_release(vt);
  mt_release(info);
  return st;
}

mt_status mt_la_cuda_eigh(const char *op, mt_tensor *f, mt_tensor *W, bool vectors, char uplo, int n, int64_t nb) {
  mt_tensor *info = NULL;
  int64_t b;
  int code;
  char buf[64];
  mt_status st = ints(f, nb, &info);
  if (!st)
    st = mt_cuda_syevd(op, dev_of(f), dbl_of(f), vectors, uplo == 'U', n, nb, mt_data(f), mt_data(W), I(info));
  if (!st) st = first_bad(info, nb, &b, &code);
  if (!st && code > 0)
    st = mt_fail(MT_ELINALG, "%s: the eigenvalues of %s did not converge (does it contain NaN or inf?)", op,
                 which(b, nb, buf, sizeof buf));
  else if (!st && code < 0)
    st = internal(op, "syevd", code);
  mt_release(info);
  return st;
}
