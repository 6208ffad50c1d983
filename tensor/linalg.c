/* linalg.c -- torch.linalg's LAPACK-based functions: inv, det, slogdet,
 * solve, cholesky, qr, svd, eigh, lstsq, pinv, matrix_rank. Each copies its
 * (batched) input into column-major buffers, calls LAPACK once per matrix
 * and copies the results back row-major. Singular or indefinite inputs and
 * non-convergence become errors that say which matrix failed and why. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/blas.h"
#include "linalg.h"
#include "linalg_cuda.h"

/* ---- helpers ---- */

static inline double get(const void *p, int64_t i, bool dbl) {
  return dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}
static inline void set(void *p, int64_t i, double v, bool dbl) {
  if (dbl)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}
static inline double eps_of(mt_dtype dt) { return dt == MT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON; }

/* a ndim >= 2 float32/float64 tensor whose matrices fit LAPACK's int */
static mt_status check_matrix(const char *op, const mt_tensor *a, bool square) {
  char s[128];
  if (a->ndim < 2)
    return mt_fail(MT_ESHAPE, "%s: expected a matrix or a batch of matrices (at least 2 dimensions), got shape %s", op,
                   mt_shape_str(a->shape, a->ndim, s, sizeof s));
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  if (square && m != n)
    return mt_fail(MT_ESHAPE, "%s: expected a square matrix or a batch of square matrices, got shape %s", op,
                   mt_shape_str(a->shape, a->ndim, s, sizeof s));
  if (a->dtype != MT_FLOAT32 && a->dtype != MT_FLOAT64)
    return mt_fail(MT_EDTYPE,
                   "%s: expected a float32 or float64 tensor, got %s (convert it with :float() or :double())", op,
                   mt_dtype_name((mt_dtype)a->dtype));
  if (m > INT_MAX / 8 || n > INT_MAX / 8 || m * n > INT_MAX)
    return mt_fail(MT_ESHAPE, "%s: a matrix of shape %lldx%lld is too large for LAPACK", op, (long long)m,
                   (long long)n);
  return MT_OK;
}

static int64_t batch_count(const mt_tensor *a, int mdims) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim - mdims; i++) n *= a->shape[i];
  return n;
}

/* "the matrix" or "matrix 3 of the batch" (1-based), for messages */
static const char *which(int64_t b, int64_t nb, char *buf, size_t n) {
  if (nb <= 1) return "the matrix";
  snprintf(buf, n, "matrix %lld of the batch", (long long)b + 1);
  return buf;
}

/* A new contiguous tensor holding each matrix of x (..., m, n) in
 * column-major order, i.e. of shape (..., n, m), in dtype dt. */
static mt_status to_fortran(const mt_tensor *x, mt_dtype dt, mt_tensor **f) {
  int nd = x->ndim;
  int64_t shape[MT_MAXDIM];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)nd);
  shape[nd - 2] = x->shape[nd - 1];
  shape[nd - 1] = x->shape[nd - 2];
  mt_tensor *v = NULL;
  mt_status st = mt_empty(shape, nd, dt, mt_tdevice(x), f);
  if (!st) st = mt_transpose(*f, nd - 2, nd - 1, &v);
  if (!st) st = mt_copy_(v, x);
  mt_release(v);
  if (st) {
    mt_release(*f);
    *f = NULL;
  }
  return st;
}

/* Zero-filled column-major buffer for matrices of rows x cols after the
 * batch dims of a (first nbd dims): shape batch + (cols, rows). */
static mt_status fortran_zeros(const mt_tensor *a, int nbd, int64_t rows, int64_t cols, mt_tensor **f) {
  int64_t shape[MT_MAXDIM];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nbd);
  shape[nbd] = cols;
  shape[nbd + 1] = rows;
  return mt_zeros(shape, nbd + 2, (mt_dtype)a->dtype, mt_tdevice(a), f);
}

/* Row-major contiguous (..., m, n) from a column-major buffer (..., n, m). */
static mt_status from_fortran(const mt_tensor *f, mt_tensor **out) {
  mt_tensor *v = NULL;
  mt_status st = mt_transpose(f, f->ndim - 2, f->ndim - 1, &v);
  if (!st) st = mt_clone(v, out);
  mt_release(v);
  return st;
}


/* LAPACK workspace size from a query's work[0], with a little slack for
 * float32 rounding of large sizes. */
static int work_size(const void *w, bool dbl) {
  double v = get(w, 0, dbl);
  v = v * (1 + 1e-6) + 1;
  return v > INT_MAX ? INT_MAX : (int)v;
}

static void *alloc_work(int64_t count, size_t es, mt_status *st, const char *op) {
  void *p = malloc((size_t)(count > 0 ? count : 1) * es);
  if (!p) *st = mt_fail(MT_ENOMEM, "%s: out of memory for LAPACK workspace", op);
  return p;
}

static mt_status lapack_error(const char *op, const char *routine, int info) {
  return mt_fail(MT_ELINALG, "%s: LAPACK %s rejected argument %d (internal error)", op, routine, -info);
}

/* Empty problems on CUDA (no matrix, or matrices with a zero dimension)
 * run on the host (their results are identities, zeros or empty), as do
 * least squares (no QR with column pivoting in cuSOLVER yet); the results
 * are moved back by mt_la_move. */
static bool cuda_empty(const mt_tensor *a) { return mt_la_on_cuda(a) && mt_numel(a) == 0; }

/* Shape of a's batch dims plus extra trailing sizes. */
static int batch_shape(const mt_tensor *a, int mdims, const int64_t *extra, int nextra, int64_t *shape) {
  int nd = a->ndim - mdims;
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < nextra; i++) shape[nd + i] = extra[i];
  return nd + nextra;
}

/* ---- inverse, determinants ---- */

/* inv of a CUDA tensor: getrf + getrs against identities (cuSOLVER has no getri) */
static mt_status cuda_inv(const char *op, const mt_tensor *a, mt_tensor **out) {
  int n = (int)a->shape[a->ndim - 1];
  int64_t nb = batch_count(a, 2);
  mt_tensor *f = NULL, *B = NULL, *r = NULL;
  mt_status st = to_fortran(a, (mt_dtype)a->dtype, &f);
  if (!st) st = n > 0 && nb > 0 ? mt_la_cuda_inv(op, f, n, nb, &B) : (B = mt_retain(f), MT_OK);
  if (!st) st = from_fortran(B, &r);
  if (!st) st = mt_deliver(op, r, out);
  mt_release(f);
  mt_release(B);
  return st;
}

mt_status mt_linalg_inv(const mt_tensor *a, mt_tensor **out) {
  const char *op = "linalg.inv";
  mt_status st = check_matrix(op, a, true);
  if (st) return st;
  if (mt_la_on_cuda(a)) return cuda_inv(op, a, out);
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int n = (int)a->shape[a->ndim - 1], lda = n > 1 ? n : 1, info = 0, lwork = -1;
  int64_t nb = batch_count(a, 2);
  mt_tensor *f = NULL, *r = NULL;
  double q[2] = {0};
  int *ipiv = NULL;
  void *work = NULL;
  if ((st = to_fortran(a, dt, &f))) return st;
  char *A = mt_data(f);
  ipiv = alloc_work(n, sizeof(int), &st, op);
  if (!st && n > 0) la->getri(&n, A, &lda, ipiv, q, &lwork, &info);
  lwork = work_size(q, dbl);
  if (!st) work = alloc_work(lwork, dbl ? 8 : 4, &st, op);
  for (int64_t b = 0; !st && b < nb && n > 0; b++) {
    char *Ab = A + b * n * n * (dbl ? 8 : 4);
    la->getrf(&n, &n, Ab, &lda, ipiv, &info);
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG, "%s: %s is singular (pivot %d is zero), so it has no inverse", op,
                   which(b, nb, buf, sizeof buf), info);
      break;
    }
    if (!info) la->getri(&n, Ab, &lda, ipiv, work, &lwork, &info);
    if (info) st = lapack_error(op, "getri", info);
  }
  if (!st) st = from_fortran(f, &r);
  if (!st) st = mt_deliver(op, r, out);
  mt_release(f);
  free(ipiv);
  free(work);
  return st;
}

/* LU of every matrix of a; writes per matrix the sign (+-1, 0 if singular)
 * and log|det| into sign[] and logabs[] (nb entries each). */
static mt_status lu_logdet(const char *op, const mt_tensor *a, double *sign, double *logabs) {
  if (mt_la_on_cuda(a)) {
    mt_tensor *f = NULL;
    mt_status st = to_fortran(a, (mt_dtype)a->dtype, &f);
    if (!st) st = mt_la_cuda_lu_logdet(op, f, (int)a->shape[a->ndim - 1], batch_count(a, 2), sign, logabs);
    mt_release(f);
    return st;
  }
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int n = (int)a->shape[a->ndim - 1], lda = n > 1 ? n : 1, info = 0;
  int64_t nb = batch_count(a, 2);
  mt_tensor *f = NULL;
  mt_status st = to_fortran(a, dt, &f);
  int *ipiv = st ? NULL : alloc_work(n, sizeof(int), &st, op);
  for (int64_t b = 0; !st && b < nb; b++) {
    char *Ab = (char *)mt_data(f) + b * n * n * (dbl ? 8 : 4);
    double s = 1, l = 0;
    if (n > 0) la->getrf(&n, &n, Ab, &lda, ipiv, &info);
    if (info < 0) st = lapack_error(op, "getrf", info);
    for (int i = 0; i < n; i++) {
      double d = get(Ab, (int64_t)i * n + i, dbl);
      if (ipiv[i] != i + 1) s = -s;
      if (d < 0) s = -s;
      if (d == 0) s = 0;
      l += log(fabs(d));
    }
    sign[b] = s;
    logabs[b] = s == 0 ? -INFINITY : l;
  }
  mt_release(f);
  free(ipiv);
  return st;
}

/* Creates a batch-shaped tensor of a's dtype from nb doubles. */
static mt_status batch_values(const mt_tensor *a, int mdims, const double *v, mt_tensor **out) {
  int64_t shape[MT_MAXDIM];
  int nd = batch_shape(a, mdims, NULL, 0, shape);
  mt_status st = mt_empty(shape, nd, (mt_dtype)a->dtype, mt_cpu(), out);
  if (st) return st;
  int64_t nb = batch_count(a, mdims);
  for (int64_t b = 0; b < nb; b++) set(mt_data(*out), b, v[b], a->dtype == MT_FLOAT64);
  return mt_la_on_cuda(a) ? mt_la_move(out, mt_tdevice(a)) : MT_OK;
}

mt_status mt_linalg_det(const mt_tensor *a, mt_tensor **out) {
  mt_status st = check_matrix("linalg.det", a, true);
  if (st) return st;
  int64_t nb = batch_count(a, 2);
  double *sign = malloc(sizeof(double) * (size_t)(2 * nb + 1)), *la = sign + nb;
  if (!sign) return mt_fail(MT_ENOMEM, "linalg.det: out of memory");
  st = lu_logdet("linalg.det", a, sign, la);
  for (int64_t b = 0; !st && b < nb; b++) sign[b] = sign[b] == 0 ? 0 : sign[b] * exp(la[b]);
  mt_tensor *r = NULL;
  if (!st) st = batch_values(a, 2, sign, &r);
  if (!st) st = mt_deliver("linalg.det", r, out);
  free(sign);
  return st;
}

mt_status mt_linalg_slogdet(const mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet) {
  mt_status st = check_matrix("linalg.slogdet", a, true);
  if (st) return st;
  int64_t nb = batch_count(a, 2);
  double *s = malloc(sizeof(double) * (size_t)(2 * nb + 1)), *la = s + nb;
  if (!s) return mt_fail(MT_ENOMEM, "linalg.slogdet: out of memory");
  st = lu_logdet("linalg.slogdet", a, s, la);
  mt_tensor *t1 = NULL, *t2 = NULL;
  if (!st) st = batch_values(a, 2, s, &t1);
  if (!st) st = batch_values(a, 2, la, &t2);
  free(s);
  if (st) {
    mt_release(t1);
    return st;
  }
  *sign = t1;
  *logabsdet = t2;
  return MT_OK;
}

/* ---- solve, cholesky ---- */

mt_status mt_linalg_solve(const mt_tensor *a, const mt_tensor *b, bool left, mt_tensor **out) {
  const char *op = "linalg.solve";
  char s1[128], s2[128];
  mt_status st = check_matrix(op, a, true);
  if (st) return st;
  if (b->dtype != a->dtype)
    return mt_fail(MT_EDTYPE, "%s: expected A and B to have the same dtype, got %s and %s", op,
                   mt_dtype_name((mt_dtype)a->dtype), mt_dtype_name((mt_dtype)b->dtype));
  bool vec = b->ndim == 1;
  if (b->ndim == a->ndim - 1) {
    vec = true;
    for (int i = 0; i < b->ndim; i++) vec = vec && b->shape[i] == a->shape[i];
  }
  if (b->ndim < 1 || (!vec && b->ndim < 2))
    return mt_fail(MT_ESHAPE, "%s: B must be a vector or a matrix, got shape %s", op,
                   mt_shape_str(b->shape, b->ndim, s1, sizeof s1));
  if (!left) { /* X A = B  <=>  A^T X^T = B^T */
    mt_tensor *at = NULL, *bt = NULL, *xt = NULL, *x = NULL;
    st = mt_transpose(a, a->ndim - 2, a->ndim - 1, &at);
    if (!st) st = vec ? (bt = mt_retain((mt_tensor *)b), MT_OK) : mt_transpose(b, b->ndim - 2, b->ndim - 1, &bt);
    if (!st) st = mt_linalg_solve(at, bt, true, &xt);
    if (!st) st = vec ? (x = mt_retain(xt), MT_OK) : mt_transpose(xt, xt->ndim - 2, xt->ndim - 1, &x);
    mt_tensor *r = NULL;
    if (!st) st = mt_clone(x, &r);
    if (!st) st = mt_deliver(op, r, out);
    mt_release(at);
    mt_release(bt);
    mt_release(xt);
    mt_release(x);
    return st;
  }
  int n = (int)a->shape[a->ndim - 1];
  mt_tensor *b2 = NULL, *ae = NULL, *be = NULL, *fa = NULL, *fb = NULL, *x = NULL, *r = NULL;
  st = vec ? mt_unsqueeze(b, b->ndim, &b2) : (b2 = mt_retain((mt_tensor *)b), MT_OK);
  if (st) return st;
  if (b2->shape[b2->ndim - 2] != n) {
    st = mt_fail(MT_ESHAPE, "%s: A of shape %s and B of shape %s do not fit (%lld ~= %d rows)", op,
                 mt_shape_str(a->shape, a->ndim, s1, sizeof s1), mt_shape_str(b->shape, b->ndim, s2, sizeof s2),
                 (long long)b2->shape[b2->ndim - 2], n);
    mt_release(b2);
    return st;
  }
  int64_t batch[MT_MAXDIM], ash[MT_MAXDIM], bsh[MT_MAXDIM];
  int nbd = 0;
  st = mt_broadcast_shape(op, a->shape, a->ndim - 2, b2->shape, b2->ndim - 2, batch, &nbd);
  if (st)
    st = mt_fail(MT_ESHAPE, "%s: the batch dimensions of A (shape %s) and B (shape %s) cannot be broadcast", op,
                 mt_shape_str(a->shape, a->ndim, s1, sizeof s1), mt_shape_str(b->shape, b->ndim, s2, sizeof s2));
  if (!st && nbd + 2 > MT_MAXDIM) st = mt_fail(MT_ESHAPE, "%s: too many dimensions", op);
  if (st) {
    mt_release(b2);
    return st;
  }
  int nrhs = (int)b2->shape[b2->ndim - 1];
  memcpy(ash, batch, sizeof(int64_t) * (size_t)nbd);
  memcpy(bsh, batch, sizeof(int64_t) * (size_t)nbd);
  ash[nbd] = ash[nbd + 1] = bsh[nbd] = n;
  bsh[nbd + 1] = nrhs;
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) st = MT_EARG;
  if (!st) st = mt_expand(a, ash, nbd + 2, &ae);
  if (!st) st = mt_expand(b2, bsh, nbd + 2, &be);
  if (!st) st = to_fortran(ae, dt, &fa);
  if (!st) st = to_fortran(be, dt, &fb);
  int *ipiv = st ? NULL : alloc_work(n, sizeof(int), &st, op);
  int64_t nb = 1;
  for (int i = 0; i < nbd; i++) nb *= batch[i];
  int lda = n > 1 ? n : 1, info = 0;
  if (!st && mt_la_on_cuda(a) && nb > 0 && n > 0 && nrhs > 0) st = mt_la_cuda_solve(op, fa, fb, n, nrhs, nb);
  for (int64_t k = 0; !st && !mt_la_on_cuda(a) && k < nb && n > 0 && nrhs > 0; k++) {
    char *A = (char *)mt_data(fa) + k * n * n * (dbl ? 8 : 4);
    char *B = (char *)mt_data(fb) + k * n * nrhs * (dbl ? 8 : 4);
    la->getrf(&n, &n, A, &lda, ipiv, &info);
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG, "%s: %s is singular (pivot %d is zero), so the system has no unique solution", op,
                   which(k, nb, buf, sizeof buf), info);
      break;
    }
    if (!info) la->getrs("N", &n, &nrhs, A, &lda, ipiv, B, &lda, &info, 1);
    if (info) st = lapack_error(op, "getrs", info);
  }
  if (!st) st = from_fortran(fb, &x);
  if (!st && vec) {
    st = mt_reshape(x, bsh, nbd + 1, &r);
    mt_release(x);
    x = r;
  }
  if (!st) {
    st = mt_deliver(op, x, out);
    x = NULL;
  }
  mt_release(x);
  mt_release(b2);
  mt_release(ae);
  mt_release(be);
  mt_release(fa);
  mt_release(fb);
  free(ipiv);
  return st;
}

mt_status mt_linalg_cholesky(const mt_tensor *a, bool upper, mt_tensor **out) {
  const char *op = "linalg.cholesky";
  mt_status st = check_matrix(op, a, true);
  if (st) return st;
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int n = (int)a->shape[a->ndim - 1], lda = n > 1 ? n : 1, info = 0;
  int64_t nb = batch_count(a, 2);
  mt_tensor *f = NULL, *r = NULL;
  if ((st = to_fortran(a, dt, &f))) return st;
  const char *uplo = upper ? "U" : "L";
  if (mt_la_on_cuda(a) && nb > 0 && n > 0) st = mt_la_cuda_cholesky(op, f, upper, n, nb);
  for (int64_t b = 0; !mt_la_on_cuda(a) && b < nb && n > 0; b++) {
    char *A = (char *)mt_data(f) + b * n * n * (dbl ? 8 : 4);
    la->potrf(uplo, &n, A, &lda, &info, 1);
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG,
                   "%s: %s is not positive-definite (the leading minor of order %d is not positive), so it has no "
                   "Cholesky factor",
                   op, which(b, nb, buf, sizeof buf), info);
      break;
    }
    if (info) {
      st = lapack_error(op, "potrf", info);
      break;
    }
    for (int j = 0; j < n; j++) /* clear the other triangle (column-major (i, j) at j*n + i) */
      for (int i = 0; i < n; i++)
        if (upper ? i > j : i < j) set(A, (int64_t)j * n + i, 0, dbl);
  }
  if (!st) st = from_fortran(f, &r);
  if (!st) st = mt_deliver(op, r, out);
  mt_release(f);
  return st;
}

/* ---- qr ---- */

mt_status mt_linalg_qr(const mt_tensor *a, const char *mode, mt_tensor **q, mt_tensor **r) {
  const char *op = "linalg.qr";
  mt_status st = check_matrix(op, a, false);
  if (st) return st;
  bool complete = strcmp(mode, "complete") == 0, ronly = strcmp(mode, "r") == 0;
  if (!complete && !ronly && strcmp(mode, "reduced") != 0)
    return mt_fail(MT_EARG, "%s: mode must be 'reduced', 'complete' or 'r', got '%s'", op, mode);
  if (cuda_empty(a)) {
    mt_tensor *h = NULL;
    if (!(st = mt_la_to_host(a, &h))) st = mt_linalg_qr(h, mode, q, r);
    mt_release(h);
    if (!st && (st = mt_la_move(q, mt_tdevice(a)))) mt_release(*r);
    if (!st && (st = mt_la_move(r, mt_tdevice(a)))) mt_release(*q);
    return st;
  }
  bool gpu = mt_la_on_cuda(a);
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  size_t es = dbl ? 8 : 4;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int m = (int)a->shape[a->ndim - 2], n = (int)a->shape[a->ndim - 1], k = m < n ? m : n;
  int rrows = complete ? m : k, qcols = complete ? m : k, lda = m > 1 ? m : 1, info = 0, lwork = -1;
  int nbd = a->ndim - 2;
  int64_t nb = batch_count(a, 2);
  mt_tensor *f = NULL, *fr = NULL, *fq = NULL, *Q = NULL, *R = NULL;
  void *tau = NULL, *work = NULL;
  double w1[2] = {0}, w2[2] = {0};
  st = to_fortran(a, dt, &f);
  if (!st) st = fortran_zeros(a, nbd, rrows, n, &fr);
  if (!st && !ronly) st = fortran_zeros(a, nbd, m, qcols, &fq);
  if (!st) tau = alloc_work(k, es, &st, op);
  if (!st && gpu) st = mt_la_cuda_qr(op, f, fr, ronly ? NULL : fq, m, n, nb);
  if (!st && k > 0 && !gpu) {
    la->geqrf(&m, &n, mt_data(f), &lda, tau, w1, &lwork, &info);
    if (!ronly) la->orgqr(&m, &qcols, &k, mt_data(fq), &lda, tau, w2, &lwork, &info);
    lwork = work_size(w1, dbl);
    if (!ronly && work_size(w2, dbl) > lwork) lwork = work_size(w2, dbl);
    work = alloc_work(lwork, es, &st, op);
  }
  for (int64_t b = 0; !st && !gpu && b < nb; b++) {
    char *A = (char *)mt_data(f) + b * m * n * (int64_t)es;
    char *Rb = (char *)mt_data(fr) + b * rrows * n * (int64_t)es;
    if (k == 0) { /* empty matrix: R is empty or zero, the complete Q an identity */
      for (int i = 0; !ronly && i < qcols; i++) set(mt_data(fq), b * m * qcols + (int64_t)i * m + i, 1, dbl);
      continue;
    }
    la->geqrf(&m, &n, A, &lda, tau, work, &lwork, &info);
    if (info) {
      st = lapack_error(op, "geqrf", info);
      break;
    }
    for (int j = 0; j < n; j++)
      for (int i = 0; i <= j && i < k; i++) set(Rb, (int64_t)j * rrows + i, get(A, (int64_t)j * m + i, dbl), dbl);
    if (ronly) continue;
    char *Qb = (char *)mt_data(fq) + b * m * qcols * (int64_t)es;
    int ncopy = qcols < n ? qcols : n;
    memcpy(Qb, A, (size_t)m * (size_t)ncopy * es);
    la->orgqr(&m, &qcols, &k, Qb, &lda, tau, work, &lwork, &info);
    if (info) st = lapack_error(op, "orgqr", info);
  }
  if (!st) st = from_fortran(fr, &R);
  if (!st && ronly) {
    int64_t zero = 0;
    st = mt_empty(&zero, 1, dt, mt_tdevice(a), &Q);
  } else if (!st) {
    st = from_fortran(fq, &Q);
  }
  mt_release(f);
  mt_release(fr);
  mt_release(fq);
  free(tau);
  free(work);
  if (st) {
    mt_release(Q);
    mt_release(R);
    return st;
  }
  *q = Q;
  *r = R;
  return MT_OK;
}

/* ---- svd, eigh ---- */

mt_status mt_linalg_svd(const mt_tensor *a, bool full_matrices, mt_tensor **u, mt_tensor **s, mt_tensor **vh) {
  const char *op = u ? "linalg.svd" : "linalg.svdvals";
  mt_status st = check_matrix(op, a, false);
  if (st) return st;
  if (cuda_empty(a)) {
    mt_tensor *h = NULL;
    mt_device d = mt_tdevice(a);
    if (!(st = mt_la_to_host(a, &h))) st = mt_linalg_svd(h, full_matrices, u, s, vh);
    mt_release(h);
    if (!st) st = mt_la_move(s, d);
    if (!st && u) st = mt_la_move(u, d);
    if (!st && u) st = mt_la_move(vh, d);
    return st; /* (a failed move leaves its siblings to the caller's error path) */
  }
  bool gpu = mt_la_on_cuda(a);
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64, vectors = u != NULL;
  size_t es = dbl ? 8 : 4;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int m = (int)a->shape[a->ndim - 2], n = (int)a->shape[a->ndim - 1], k = m < n ? m : n;
  int ucols = vectors ? (full_matrices ? m : k) : 0, vtrows = vectors ? (full_matrices ? n : k) : 0;
  int lda = m > 1 ? m : 1, ldu = vectors && m > 1 ? m : 1, ldvt = vtrows > 1 ? vtrows : 1, info = 0, lwork = -1;
  int nbd = a->ndim - 2;
  int64_t nb = batch_count(a, 2), kk = k;
  const char *jobz = !vectors ? "N" : full_matrices ? "A" : "S";
  mt_tensor *f = NULL, *fu = NULL, *fvt = NULL, *S = NULL, *U = NULL, *VH = NULL;
  int64_t sshape[MT_MAXDIM];
  int snd = batch_shape(a, 2, &kk, 1, sshape);
  int *iwork = NULL;
  void *work = NULL;
  double wq[2] = {0}, dummy[2];
  st = to_fortran(a, dt, &f);
  if (!st) st = mt_empty(sshape, snd, dt, mt_tdevice(a), &S);
  if (!st && vectors) st = fortran_zeros(a, nbd, m, ucols, &fu);
  if (!st && vectors) st = fortran_zeros(a, nbd, vtrows, n, &fvt);
  if (!st) iwork = alloc_work(8 * (int64_t)k, sizeof(int), &st, op);
  if (!st && gpu) st = mt_la_cuda_svd(op, f, full_matrices, S, fu, fvt, m, n, nb);
  if (!st && k > 0 && !gpu) {
    la->gesdd(jobz, &m, &n, mt_data(f), &lda, mt_data(S), vectors ? mt_data(fu) : (void *)dummy, &ldu,
              vectors ? mt_data(fvt) : (void *)dummy, &ldvt, wq, &lwork, iwork, &info, 1);
    lwork = work_size(wq, dbl);
    work = alloc_work(lwork, es, &st, op);
  }
  for (int64_t b = 0; !st && !gpu && b < nb; b++) {
    if (k == 0) { /* empty matrix: the full U and Vh are identities */
      for (int i = 0; vectors && i < ucols && i < m; i++) set(mt_data(fu), b * m * ucols + (int64_t)i * m + i, 1, dbl);
      for (int i = 0; vectors && i < vtrows && i < n; i++)
        set(mt_data(fvt), b * vtrows * n + (int64_t)i * vtrows + i, 1, dbl);
      continue;
    }
    char *A = (char *)mt_data(f) + b * m * n * (int64_t)es;
    char *Sb = (char *)mt_data(S) + b * k * (int64_t)es;
    char *Ub = vectors ? (char *)mt_data(fu) + b * m * ucols * (int64_t)es : (char *)dummy;
    char *Vb = vectors ? (char *)mt_data(fvt) + b * vtrows * n * (int64_t)es : (char *)dummy;
    la->gesdd(jobz, &m, &n, A, &lda, Sb, Ub, &ldu, Vb, &ldvt, work, &lwork, iwork, &info, 1);
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG, "%s: the SVD of %s did not converge (does it contain NaN or inf?)", op,
                   which(b, nb, buf, sizeof buf));
    } else if (info < 0) {
      st = lapack_error(op, "gesdd", info);
    }
  }
  if (!st && vectors) st = from_fortran(fu, &U);
  if (!st && vectors) st = from_fortran(fvt, &VH);
  mt_release(f);
  mt_release(fu);
  mt_release(fvt);
  free(iwork);
  free(work);
  if (st) {
    mt_release(S);
    mt_release(U);
    mt_release(VH);
    return st;
  }
  *s = S;
  if (vectors) {
    *u = U;
    *vh = VH;
  }
  return MT_OK;
}

mt_status mt_linalg_eigh(const mt_tensor *a, char uplo, mt_tensor **w, mt_tensor **v) {
  const char *op = v ? "linalg.eigh" : "linalg.eigvalsh";
  mt_status st = check_matrix(op, a, true);
  if (st) return st;
  if (uplo != 'L' && uplo != 'U') return mt_fail(MT_EARG, "%s: UPLO must be 'L' or 'U', got '%c'", op, uplo);
  if (cuda_empty(a)) {
    mt_tensor *h = NULL;
    if (!(st = mt_la_to_host(a, &h))) st = mt_linalg_eigh(h, uplo, w, v);
    mt_release(h);
    if (!st) st = mt_la_move(w, mt_tdevice(a));
    if (!st && v) st = mt_la_move(v, mt_tdevice(a));
    return st;
  }
  bool gpu = mt_la_on_cuda(a);
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  size_t es = dbl ? 8 : 4;
  const mt_lapack *la = mt_lapack_get(dt, op);
  if (!la) return MT_EARG;
  int n = (int)a->shape[a->ndim - 1], lda = n > 1 ? n : 1, info = 0, lwork = -1, liwork = -1, iq = 0;
  int64_t nb = batch_count(a, 2), nn = n;
  char ul[2] = {uplo, 0};
  const char *jobz = v ? "V" : "N";
  mt_tensor *f = NULL, *W = NULL, *V = NULL;
  int64_t wshape[MT_MAXDIM];
  int wnd = batch_shape(a, 2, &nn, 1, wshape);
  int *iwork = NULL;
  void *work = NULL;
  double wq[2] = {0};
  st = to_fortran(a, dt, &f);
  if (!st) st = mt_empty(wshape, wnd, dt, mt_tdevice(a), &W);
  if (!st && gpu) st = mt_la_cuda_eigh(op, f, W, v != NULL, uplo, n, nb);
  if (!st && n > 0 && !gpu) {
    la->syevd(jobz, ul, &n, mt_data(f), &lda, mt_data(W), wq, &lwork, &iq, &liwork, &info, 1, 1);
    lwork = work_size(wq, dbl);
    liwork = iq > 1 ? iq : 1;
    work = alloc_work(lwork, es, &st, op);
    if (!st) iwork = alloc_work(liwork, sizeof(int), &st, op);
  }
  for (int64_t b = 0; !st && !gpu && b < nb && n > 0; b++) {
    char *A = (char *)mt_data(f) + b * n * n * (int64_t)es;
    char *Wb = (char *)mt_data(W) + b * n * (int64_t)es;
    la->syevd(jobz, ul, &n, A, &lda, Wb, work, &lwork, iwork, &liwork, &info, 1, 1);
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG, "%s: the eigenvalues of %s did not converge (does it contain NaN or inf?)", op,
                   which(b, nb, buf, sizeof buf));
    } else if (info < 0) {
      st = lapack_error(op, "syevd", info);
    }
  }
  if (!st && v) st = from_fortran(f, &V);
  mt_release(f);
  free(iwork);
  free(work);
  if (st) {
    mt_release(W);
    return st;
  }
  *w = W;
  if (v) *v = V;
  return MT_OK;
}

/* ---- least squares, pseudo-inverse, rank ---- */

/* lstsq of CUDA tensors: on the host (see cuda_empty), the four results moved back */
static mt_status cuda_lstsq(const mt_tensor *a, const mt_tensor *b, double rcond, const char *driver,
                            mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **sv) {
  mt_device d = mt_tdevice(a);
  if (!mt_same_device(d, mt_tdevice(b))) {
    char s1[32], s2[32];
    return mt_fail(MT_EDEVICE, "linalg.lstsq: expected all tensors on the same device, got %s and %s",
                   mt_device_str(d, s1, sizeof s1), mt_device_str(mt_tdevice(b), s2, sizeof s2));
  }
  mt_tensor *ha = NULL, *hb = NULL, *r[4] = {NULL, NULL, NULL, NULL};
  mt_status st = mt_la_to_host(a, &ha);
  if (!st) st = mt_la_to_host(b, &hb);
  if (!st) st = mt_linalg_lstsq(ha, hb, rcond, driver, &r[0], &r[1], &r[2], &r[3]);
  for (int i = 0; !st && i < 4; i++) st = mt_la_move(&r[i], d);
  mt_release(ha);
  mt_release(hb);
  if (st) {
    for (int i = 0; i < 4; i++) mt_release(r[i]);
    return st;
  }
  *solution = r[0];
  *residuals = r[1];
  *rank = r[2];
  *sv = r[3];
  return MT_OK;
}

mt_status mt_linalg_lstsq(const mt_tensor *a, const mt_tensor *b, double rcond, const char *driver,
                          mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **sv) {
  const char *op = "linalg.lstsq";
  char s1[128], s2[128];
  mt_status st = check_matrix(op, a, false);
  if (st) return st;
  bool gelsd = driver && strcmp(driver, "gelsd") == 0;
  if (driver && !gelsd && strcmp(driver, "gelsy") != 0)
    return mt_fail(MT_EARG, "%s: driver must be 'gelsy' or 'gelsd', got '%s'", op, driver);
  if (mt_la_on_cuda(a) || mt_la_on_cuda(b)) return cuda_lstsq(a, b, rcond, driver, solution, residuals, rank, sv);
  if (b->dtype != a->dtype)
    return mt_fail(MT_EDTYPE, "%s: expected A and B to have the same dtype, got %s and %s", op,
                   mt_dtype_name((mt_dtype)a->dtype), mt_dtype_name((mt_dtype)b->dtype));
  bool vec = b->ndim == a->ndim - 1;
  mt_tensor *b2 = NULL;
  if (b->ndim < 1) return mt_fail(MT_ESHAPE, "%s: B must have at least one dimension", op);
  if ((st = vec ? mt_unsqueeze(b, b->ndim, &b2) : (b2 = mt_retain((mt_tensor *)b), MT_OK))) return st;
  int m = (int)a->shape[a->ndim - 2], n = (int)a->shape[a->ndim - 1], k = m < n ? m : n;
  if (b2->shape[b2->ndim - 2] != m) {
    st = mt_fail(MT_ESHAPE, "%s: A of shape %s and B of shape %s do not fit (%lld ~= %d rows)", op,
                 mt_shape_str(a->shape, a->ndim, s1, sizeof s1), mt_shape_str(b->shape, b->ndim, s2, sizeof s2),
                 (long long)b2->shape[b2->ndim - 2], m);
    mt_release(b2);
    return st;
  }
  int64_t batch[MT_MAXDIM], ash[MT_MAXDIM], bsh[MT_MAXDIM], shp[MT_MAXDIM];
  int nbd = 0;
  if (mt_broadcast_shape(op, a->shape, a->ndim - 2, b2->shape, b2->ndim - 2, batch, &nbd) || nbd + 2 > MT_MAXDIM) {
    mt_release(b2);
    return mt_fail(MT_ESHAPE, "%s: the batch dimensions of A (shape %s) and B (shape %s) cannot be broadcast", op,
                   mt_shape_str(a->shape, a->ndim, s1, sizeof s1), mt_shape_str(b->shape, b->ndim, s2, sizeof s2));
  }
  mt_dtype dt = (mt_dtype)a->dtype;
  bool dbl = dt == MT_FLOAT64;
  size_t es = dbl ? 8 : 4;
  int nrhs = (int)b2->shape[b2->ndim - 1], ldb = m > n ? m : n, lda = m > 1 ? m : 1, info = 0, lwork = -1, iq = 0;
  if (ldb < 1) ldb = 1;
  int64_t nb = 1;
  for (int i = 0; i < nbd; i++) nb *= batch[i];
  memcpy(ash, batch, sizeof(int64_t) * (size_t)nbd);
  memcpy(bsh, batch, sizeof(int64_t) * (size_t)nbd);
  ash[nbd] = bsh[nbd] = m;
  ash[nbd + 1] = n;
  bsh[nbd + 1] = nrhs;
  if (rcond < 0) rcond = eps_of(dt) * (m > n ? m : n);
  float rc32 = (float)rcond;
  const void *rc = dbl ? (const void *)&rcond : (const void *)&rc32;
  const mt_lapack *la = mt_lapack_get(dt, op);
  mt_tensor *ae = NULL, *be = NULL, *fa = NULL, *fb = NULL, *fbt = NULL, *top = NULL, *X = NULL, *RES = NULL,
            *RK = NULL, *SV = NULL;
  int *ipiv = NULL, *iwork = NULL;
  void *work = NULL;
  double wq[2] = {0};
  if (!la) st = MT_EARG;
  if (!st) st = mt_expand(a, ash, nbd + 2, &ae);
  if (!st) st = mt_expand(b2, bsh, nbd + 2, &be);
  if (!st) st = to_fortran(ae, dt, &fa);
  if (!st) { /* B padded to max(m, n) rows, column-major */
    memcpy(shp, batch, sizeof(int64_t) * (size_t)nbd);
    shp[nbd] = nrhs;
    shp[nbd + 1] = ldb;
    st = mt_zeros(shp, nbd + 2, dt, mt_tdevice(a), &fb);
  }
  if (!st) st = mt_transpose(fb, nbd, nbd + 1, &fbt);
  if (!st) st = mt_narrow(fbt, nbd, 0, m, &top);
  if (!st) st = mt_copy_(top, be);
  mt_release(top);
  top = NULL;
  if (!st) { /* rank: batch shape, int64; singular values: batch + (k) for gelsd */
    st = mt_zeros(batch, nbd, MT_INT64, mt_tdevice(a), &RK);
    int64_t zero = 0;
    shp[nbd] = k;
    if (!st) st = gelsd ? mt_zeros(shp, nbd + 1, dt, mt_tdevice(a), &SV) : mt_empty(&zero, 1, dt, mt_tdevice(a), &SV);
  }
  if (!st) ipiv = alloc_work(n, sizeof(int), &st, op);
  if (!st && m > 0 && n > 0 && nrhs > 0) {
    int rq = 0;
    if (gelsd)
      la->gelsd(&m, &n, &nrhs, mt_data(fa), &lda, mt_data(fb), &ldb, mt_data(SV), rc, &rq, wq, &lwork, &iq, &info);
    else
      la->gelsy(&m, &n, &nrhs, mt_data(fa), &lda, mt_data(fb), &ldb, ipiv, rc, &rq, wq, &lwork, &info);
    lwork = work_size(wq, dbl);
    work = alloc_work(lwork, es, &st, op);
    if (!st && gelsd) iwork = alloc_work(iq > 1 ? iq : 1, sizeof(int), &st, op);
  }
  bool full_rank = true;
  for (int64_t q = 0; !st && q < nb && m > 0 && n > 0 && nrhs > 0; q++) {
    char *A = (char *)mt_data(fa) + q * m * n * (int64_t)es;
    char *B = (char *)mt_data(fb) + q * ldb * nrhs * (int64_t)es;
    int rk = 0;
    if (gelsd) {
      char *Sq = (char *)mt_data(SV) + q * k * (int64_t)es;
      la->gelsd(&m, &n, &nrhs, A, &lda, B, &ldb, Sq, rc, &rk, work, &lwork, iwork, &info);
    } else {
      memset(ipiv, 0, sizeof(int) * (size_t)n);
      la->gelsy(&m, &n, &nrhs, A, &lda, B, &ldb, ipiv, rc, &rk, work, &lwork, &info);
    }
    if (info > 0) {
      char buf[64];
      st = mt_fail(MT_ELINALG, "%s: the SVD of %s did not converge (does it contain NaN or inf?)", op,
                   which(q, nb, buf, sizeof buf));
    } else if (info < 0) {
      st = lapack_error(op, gelsd ? "gelsd" : "gelsy", info);
    }
    ((int64_t *)mt_data(RK))[q] = rk;
    full_rank = full_rank && rk == n;
  }
  if (!st) st = mt_narrow(fbt, nbd, 0, n, &top);
  if (!st) st = mt_clone(top, &X);
  if (!st && vec) {
    mt_tensor *x1 = NULL;
    memcpy(shp, batch, sizeof(int64_t) * (size_t)nbd);
    shp[nbd] = n;
    st = mt_reshape(X, shp, nbd + 1, &x1);
    mt_release(X);
    X = x1;
  }
  if (!st) { /* residuals: squared norms of rows n..m of the LAPACK output */
    bool have = gelsd && m > n && full_rank;
    memcpy(shp, batch, sizeof(int64_t) * (size_t)nbd);
    shp[nbd] = nrhs;
    int64_t zero = 0;
    st = have ? mt_zeros(shp, nbd + (vec ? 0 : 1), dt, mt_tdevice(a), &RES)
              : mt_empty(&zero, 1, dt, mt_tdevice(a), &RES);
    for (int64_t q = 0; !st && have && q < nb; q++)
      for (int c = 0; c < nrhs; c++) {
        double acc = 0;
        const char *B = (const char *)mt_data(fb) + (q * nrhs + c) * ldb * (int64_t)es;
        for (int i = n; i < m; i++) acc += get(B, i, dbl) * get(B, i, dbl);
        set(mt_data(RES), q * nrhs + c, acc, dbl);
      }
  }
  mt_release(b2);
  mt_release(ae);
  mt_release(be);
  mt_release(fa);
  mt_release(fb);
  mt_release(fbt);
  mt_release(top);
  free(ipiv);
  free(iwork);
  free(work);
  if (st) {
    mt_release(X);
    mt_release(RES);
    mt_release(RK);
    mt_release(SV);
    return st;
  }
  *solution = X;
  *residuals = RES;
  *rank = RK;
  *sv = SV;
  return MT_OK;
}

/* Singular values (or |eigenvalues| when hermitian) and the tolerance per
 * matrix: max(atol, rtol * largest), rtol < 0 meaning PyTorch's default. */
static double default_rtol(const mt_tensor *a, double atol, double rtol) {
  if (rtol >= 0) return rtol;
  if (atol > 0) return 0;
  int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
  return eps_of((mt_dtype)a->dtype) * (double)(m > n ? m : n);
}

mt_status mt_linalg_pinv(const mt_tensor *a, double atol, double rtol, bool hermitian, mt_tensor **out) {
  const char *op = "linalg.pinv";
  mt_status st = check_matrix(op, a, hermitian);
  if (st) return st;
  rtol = default_rtol(a, atol, rtol);
  bool dbl = a->dtype == MT_FLOAT64;
  int nd = a->ndim;
  mt_tensor *U = NULL, *S = NULL, *VH = NULL, *V = NULL, *UT = NULL, *sinv = NULL, *scaled = NULL, *r = NULL;
  if (hermitian) {
    st = mt_linalg_eigh(a, 'L', &S, &U);
    if (!st) st = mt_transpose(U, nd - 2, nd - 1, &UT);
    if (!st) V = mt_retain(U);
  } else {
    st = mt_linalg_svd(a, false, &U, &S, &VH);
    if (!st) st = mt_transpose(U, nd - 2, nd - 1, &UT);
    if (!st) st = mt_transpose(VH, nd - 2, nd - 1, &V);
  }
  if (!st) st = mt_la_on_cuda(a) ? mt_la_to_host(S, &sinv) : mt_clone(S, &sinv);
  if (!st) { /* 1 / s where |s| is above the tolerance, else 0 (on the host) */
    int64_t k = S->shape[S->ndim - 1], nb = k ? mt_numel(S) / k : 0;
    char *p = mt_data(sinv);
    for (int64_t b = 0; b < nb; b++) {
      double mx = 0;
      for (int64_t i = 0; i < k; i++) mx = fmax(mx, fabs(get(p, b * k + i, dbl)));
      double tol = fmax(atol, rtol * mx);
      for (int64_t i = 0; i < k; i++) {
        double s = get(p, b * k + i, dbl);
        set(p, b * k + i, fabs(s) > tol ? 1 / s : 0, dbl);
      }
    }
  }
  mt_tensor *row = NULL;
  if (!st && mt_la_on_cuda(a)) st = mt_la_move(&sinv, mt_tdevice(a));
  if (!st) st = mt_unsqueeze(sinv, sinv->ndim - 1, &row);
  if (!st) st = mt_binary(MT_OP_mul, V, row, &scaled);
  if (!st) st = mt_matmul(scaled, UT, &r);
  if (!st) st = mt_deliver(op, r, out);
  mt_release(row);
  mt_release(U);
  mt_release(S);
  mt_release(VH);
  mt_release(V);
  mt_release(UT);
  mt_release(sinv);
  mt_release(scaled);
  return st;
}

mt_status mt_linalg_matrix_rank(const mt_tensor *a, double atol, double rtol, bool hermitian, mt_tensor **out) {
  const char *op = "linalg.matrix_rank";
  mt_status st = check_matrix(op, a, hermitian);
  if (st) return st;
  rtol = default_rtol(a, atol, rtol);
  bool dbl = a->dtype == MT_FLOAT64;
  mt_tensor *S = NULL, *r = NULL;
  st = hermitian ? mt_linalg_eigh(a, 'L', &S, NULL) : mt_linalg_svd(a, false, NULL, &S, NULL);
  if (!st && mt_la_on_cuda(a)) st = mt_la_move(&S, mt_cpu()); /* counted on the host */
  int64_t shape[MT_MAXDIM];
  int nd = batch_shape(a, 2, NULL, 0, shape);
  if (!st) st = mt_empty(shape, nd, MT_INT64, mt_cpu(), &r);
  if (!st) {
    int64_t k = S->shape[S->ndim - 1], nb = batch_count(a, 2);
    const char *p = mt_data(S);
    for (int64_t b = 0; b < nb; b++) {
      double mx = 0;
      int64_t cnt = 0;
      for (int64_t i = 0; i < k; i++) mx = fmax(mx, fabs(get(p, b * k + i, dbl)));
      double tol = fmax(atol, rtol * mx);
      for (int64_t i = 0; i < k; i++) cnt += fabs(get(p, b * k + i, dbl)) > tol;
      ((int64_t *)mt_data(r))[b] = cnt;
    }
    if (mt_la_on_cuda(a)) st = mt_la_move(&r, mt_tdevice(a));
    if (!st) st = mt_deliver(op, r, out);
  }
  mt_release(S);
  return st;
}
