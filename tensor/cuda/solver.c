/* solver.c (cuda) -- dense factorizations on CUDA tensors through cuSOLVER
 * (libcusolver.so.12/.11, loaded with dlopen at first use as blas.c loads
 * cuBLAS). Each entry point runs one routine over nb column-major matrices
 * laid one after another in device memory (float32 or float64), on the
 * device's current stream, with one workspace sized for them all; results
 * codes go to nb device ints (LAPACK's info) that the caller copies down.
 * tensor/linalg_cuda.c prepares the buffers and reads the codes. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cusolver_api.h"
#include "files.h"
#include "mt_cuda.h"

static struct {
#define MT_CUSOLVER_FIELD(R, name, sym, params) R(*name) params;
  MT_CUSOLVER_FUNCS(MT_CUSOLVER_FIELD)
#undef MT_CUSOLVER_FIELD
#define MT_CUSOLVER_TFIELD(R, name, s, d, params) R(*name[2]) params;
  MT_CUSOLVER_TYPED(MT_CUSOLVER_TFIELD)
#undef MT_CUSOLVER_TFIELD
} cs;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[300];
static bool loaded;
static cusolverDnHandle_t handles[MT_CUDA_MAXDEV];

static bool sym(void *h, void **slot, const char *name) {
  if ((*slot = dlsym(h, name))) return true;
  snprintf(load_error, sizeof load_error, "cuSOLVER lacks %s", name);
  return false;
}

/* $MOONTORCH_CUSOLVER, then the versioned names on the loader's path and in
 * /usr/local/cuda (CUDA 13 still ships libcusolver.so.12). */
static void load(void) {
  static const char *names[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so.13", "libcusolver.so"};
  static const char *dirs[] = {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                               "/usr/lib/x86_64-linux-gnu/"};
  void *h =
      mt_dlopen_first("MOONTORCH_CUSOLVER", names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "cuSOLVER (libcusolver.so.12/.11) was not found; install CUDA's cuSOLVER or set MOONTORCH_CUSOLVER to "
             "its path");
    return;
  }
#define MT_CUSOLVER_LOAD(R, name, s, params)                                                                           \
  if (!sym(h, (void **)&cs.name, s)) return;
  MT_CUSOLVER_FUNCS(MT_CUSOLVER_LOAD)
#undef MT_CUSOLVER_LOAD
#define MT_CUSOLVER_TLOAD(R, name, s, d, params)                                                                       \
  if (!sym(h, (void **)&cs.name[0], s) || !sym(h, (void **)&cs.name[1], d)) return;
  MT_CUSOLVER_TYPED(MT_CUSOLVER_TLOAD)
#undef MT_CUSOLVER_TLOAD
  loaded = true;
}

static mt_status check(cusolverStatus_t s, const char *op, const char *routine) {
  if (s == 0) return MT_OK;
  return mt_fail(MT_EDEVICE, "%s: cuSOLVER %s failed (status %d)", op, routine, s);
}

/* dev's handle (created on first use), bound to dev's current stream. */
static mt_status handle_of(int dev, const char *op, cusolverDnHandle_t *out) {
  pthread_once(&load_once, load);
  if (!loaded) return mt_fail(MT_EDEVICE, "%s: %s", op, load_error);
  mt_status st = mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)dev}, op);
  if (st) return st;
  pthread_mutex_lock(&lock);
  if (!handles[dev]) st = check(cs.Create(&handles[dev]), op, "create");
  pthread_mutex_unlock(&lock);
  if (st) return st;
  *out = handles[dev];
  mt_cuda_note_launch(dev, op);
  return check(cs.SetStream(*out, mt_cuda_current_stream(dev).handle), op, "set stream");
}

static int fits(int64_t v) { return v > 1 ? (int)v : 1; } /* a leading dimension */
#define ES(dbl) ((size_t)((dbl) ? 8 : 4))
#define AT(p, i, dbl) ((char *)(p) + (size_t)(i) * ES(dbl))

/* A device workspace of lwork elements (at least one). */
static mt_status workspace(int dev, int lwork, bool dbl, void **w) {
  return mt_cuda_malloc(dev, (size_t)(lwork > 0 ? lwork : 1) * ES(dbl), w);
}

mt_status mt_cuda_getrf(const char *op, int dev, bool dbl, int n, int64_t nb, void *A, int *ipiv, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl;
  void *w = NULL;
  if (!st) st = check(cs.getrf_size[t](h, n, n, A, fits(n), &lwork), op, "getrf");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.getrf[t](h, n, n, AT(A, b * n * n, dbl), fits(n), w, ipiv + b * n, info + b), op, "getrf");
  mt_cuda_free(dev, w);
  return st;
}

mt_status mt_cuda_getrs(const char *op, int dev, bool dbl, int n, int nrhs, int64_t nb, const void *A,
                        const int *ipiv, void *B, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.getrs[dbl](h, MT_CUSOLVER_OP_N, n, nrhs, AT(A, b * n * n, dbl), fits(n), ipiv + b * n,
                             AT(B, b * n * nrhs, dbl), fits(n), info + b),
               op, "getrs");
  return st;
}

mt_status mt_cuda_potrf(const char *op, int dev, bool dbl, bool upper, int n, int64_t nb, void *A, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl, uplo = upper ? MT_CUSOLVER_FILL_UPPER : MT_CUSOLVER_FILL_LOWER;
  void *w = NULL;
  if (!st) st = check(cs.potrf_size[t](h, uplo, n, A, fits(n), &lwork), op, "potrf");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.potrf[t](h, uplo, n, AT(A, b * n * n, dbl), fits(n), w, lwork, info + b), op, "potrf");
  mt_cuda_free(dev, w);
  return st;
}

mt_status mt_cuda_geqrf(const char *op, int dev, bool dbl, int m, int n, int64_t nb, void *A, void *tau, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl, k = m < n ? m : n;
  void *w = NULL;
  if (!st) st = check(cs.geqrf_size[t](h, m, n, A, fits(m), &lwork), op, "geqrf");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.geqrf[t](h, m, n, AT(A, b * m * n, dbl), fits(m), AT(tau, b * k, dbl), w, lwork, info + b), op,
               "geqrf");
  mt_cuda_free(dev, w);
  return st;
}

mt_status mt_cuda_orgqr(const char *op, int dev, bool dbl, int m, int ncols, int k, int64_t nb, void *Q,
                        const void *tau, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl;
  void *w = NULL;
  if (!st) st = check(cs.orgqr_size[t](h, m, ncols, k, Q, fits(m), tau, &lwork), op, "orgqr");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.orgqr[t](h, m, ncols, k, AT(Q, b * m * ncols, dbl), fits(m), AT(tau, b * k, dbl), w, lwork,
                           info + b),
               op, "orgqr");
  mt_cuda_free(dev, w);
  return st;
}

mt_status mt_cuda_syevd(const char *op, int dev, bool dbl, bool vectors, bool upper, int n, int64_t nb, void *A,
                        void *W, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl, uplo = upper ? MT_CUSOLVER_FILL_UPPER : MT_CUSOLVER_FILL_LOWER;
  int jobz = vectors ? MT_CUSOLVER_EIG_VECTOR : MT_CUSOLVER_EIG_NOVECTOR;
  void *w = NULL;
  if (!st) st = check(cs.syevd_size[t](h, jobz, uplo, n, A, fits(n), W, &lwork), op, "syevd");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.syevd[t](h, jobz, uplo, n, AT(A, b * n * n, dbl), fits(n), AT(W, b * n, dbl), w, lwork, info + b),
               op, "syevd");
  mt_cuda_free(dev, w);
  return st;
}

mt_status mt_cuda_gesvdj(const char *op, int dev, bool dbl, bool econ, int m, int n, int64_t nb, void *A, void *S,
                         void *U, void *V, int *info) {
  cusolverDnHandle_t h;
  mt_status st = handle_of(dev, op, &h);
  int lwork = 0, t = dbl, k = m < n ? m : n, ucols = econ ? k : m, vcols = econ ? k : n;
  void *w = NULL;
  gesvdjInfo_t params = NULL;
  if (!st) st = check(cs.CreateGesvdjInfo(&params), op, "gesvdj");
  if (!st)
    st = check(cs.gesvdj_size[t](h, MT_CUSOLVER_EIG_VECTOR, econ, m, n, A, fits(m), S, U, fits(m), V, fits(n), &lwork,
                                 params),
               op, "gesvdj");
  if (!st) st = workspace(dev, lwork, dbl, &w);
  for (int64_t b = 0; !st && b < nb; b++)
    st = check(cs.gesvdj[t](h, MT_CUSOLVER_EIG_VECTOR, econ, m, n, AT(A, b * m * n, dbl), fits(m), AT(S, b * k, dbl),
                            AT(U, b * m * ucols, dbl), fits(m), AT(V, b * n * vcols, dbl), fits(n), w, lwork,
                            info + b, params),
               op, "gesvdj");
  mt_cuda_free(dev, w);
  if (params) cs.DestroyGesvdjInfo(params);
  return st;
}
