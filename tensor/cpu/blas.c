/* blas.c -- glue to the math libraries: GEMM through oneDNN (dnnl_sgemm,
 * linked) or OpenBLAS (cblas_?gemm, dlopened), chosen per shape from the
 * measurements in docs/matmul.md, and OpenBLAS's LAPACK symbols. OpenBLAS is
 * loaded on first use, after OPENBLAS_CORETYPE names this CPU's kernels (its
 * own detection picks slow Haswell kernels on AVX-512 Zen). No Lua here. */
#define _GNU_SOURCE
#include "blas.h"
#include "linalg.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

/* float32 products with m*n*k up to this go to OpenBLAS when it is loaded
 * (less call overhead); larger ones to oneDNN (faster kernels, threading).
 * Inside a parallel region (one thread per call, the batch loop of
 * matmul.c) OpenBLAS wins up to about 100^3. */
#define SMALL_SIDE 64
#define SMALL_SGEMM (SMALL_SIDE * SMALL_SIDE * SMALL_SIDE)
#define SMALL_SGEMM_NESTED (1 << 20)
/* OpenBLAS without OpenMP runs single-threaded; products above this many
 * multiply-adds are then split over our threads by rows or columns. */
#define SPLIT_WORK (1 << 21)

enum { CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 };
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                               float *, int);
typedef void (*cblas_dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                               double *, int);
typedef void (*cblas_sgemv_fn)(int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
typedef void (*cblas_dgemv_fn)(int, int, int, int, double, const double *, int, const double *, int, double, double *,
                               int);

static struct {
  pthread_once_t once;
  void *handle;        /* OpenBLAS, or NULL */
  void *lapack_handle; /* where LAPACK symbols come from (OpenBLAS or liblapack.so.3) */
  cblas_sgemm_fn sgemm;
  cblas_dgemm_fn dgemm;
  cblas_sgemv_fn sgemv;
  cblas_dgemv_fn dgemv;
  bool omp;            /* OpenBLAS threads through OpenMP (our runtime) */
  mt_lapack lapack[2]; /* [0] float32, [1] float64 */
  bool have_lapack[2];
  char info[512];
  char why[256]; /* why OpenBLAS / LAPACK is missing */
} lib = {.once = PTHREAD_ONCE_INIT};

/* The OpenBLAS core type for this CPU, or NULL to let OpenBLAS decide.
 * MOONTORCH_OPENBLAS_CORETYPE overrides the choice. */
static const char *pick_coretype(void) {
  const char *user = getenv("MOONTORCH_OPENBLAS_CORETYPE");
  if (user && *user) return user;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return "SKYLAKEX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "HASWELL";
#endif
  return NULL;
}

/* dlopens the first OpenBLAS found: an explicit MOONTORCH_OPENBLAS, then the
 * OpenMP builds (Fedora's soname, Debian/Ubuntu's alternative directory),
 * then whatever the system's libopenblas.so.0 is ("none" loads nothing). The
 * core type variable is set only around the dlopen; the user's value is
 * restored afterwards. */
static void *open_openblas(bool *preloaded) {
  const char *want = getenv("MOONTORCH_OPENBLAS");
  *preloaded = false;
  if (want && strcmp(want, "none") == 0) { /* for tests of the fallbacks */
    snprintf(lib.why, sizeof lib.why, "OpenBLAS disabled by MOONTORCH_OPENBLAS=none");
    return NULL;
  }
  const char *cands[] = {
    want,
    "libopenblaso.so.0",
#if defined(__x86_64__) && defined(__linux__)
    "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
#elif defined(__aarch64__) && defined(__linux__)
    "/usr/lib/aarch64-linux-gnu/openblas-openmp/libopenblas.so.0",
#endif
    "libopenblas.so.0",
    "libopenblas.so",
  };
  size_t n = sizeof cands / sizeof *cands;
  for (size_t i = 0; i < n; i++) { /* already in the process: use it as it is */
    void *h = cands[i] && *cands[i] ? dlopen(cands[i], RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h) {
      *preloaded = true;
      return h;
    }
  }
  const char *core = pick_coretype();
  char *saved = NULL;
  if (core) {
    const char *old = getenv("OPENBLAS_CORETYPE");
    if (old) saved = strdup(old);
    setenv("OPENBLAS_CORETYPE", core, 1);
  }
  void *h = NULL;
  for (size_t i = 0; i < n && !h; i++)
    if (cands[i] && *cands[i]) h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) snprintf(lib.why, sizeof lib.why, "could not load OpenBLAS (libopenblas.so.0): %s", dlerror());
  if (core) {
    if (saved)
      setenv("OPENBLAS_CORETYPE", saved, 1);
    else
      unsetenv("OPENBLAS_CORETYPE");
  }
  free(saved);
  return h;
}

static const char *lib_path(void *h) {
  struct link_map *lm = NULL;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) return lm->l_name;
  return "?";
}

/* Fills one precision's LAPACK table from handle h (prefix 's' or 'd'). */
static bool load_lapack(void *h, char p, mt_lapack *t) {
  char name[16];
#define SYM(field, base) (snprintf(name, sizeof name, "%c" base "_", p), *(void **)&t->field = dlsym(h, name))
  SYM(getrf, "getrf");
  SYM(getri, "getri");
  SYM(getrs, "getrs");
  SYM(potrf, "potrf");
  SYM(geqrf, "geqrf");
  SYM(orgqr, "orgqr");
  SYM(gesdd, "gesdd");
  SYM(syevd, "syevd");
  SYM(gelsy, "gelsy");
  SYM(gelsd, "gelsd");
#undef SYM
  return t->getrf && t->getri && t->getrs && t->potrf && t->geqrf && t->orgqr && t->gesdd && t->syevd && t->gelsy &&
         t->gelsd;
}

static void load(void) {
  bool preloaded;
  lib.handle = open_openblas(&preloaded);
  const char *core = "?";
  if (lib.handle) {
    lib.sgemm = (cblas_sgemm_fn)dlsym(lib.handle, "cblas_sgemm");
    lib.dgemm = (cblas_dgemm_fn)dlsym(lib.handle, "cblas_dgemm");
    lib.sgemv = (cblas_sgemv_fn)dlsym(lib.handle, "cblas_sgemv");
    lib.dgemv = (cblas_dgemv_fn)dlsym(lib.handle, "cblas_dgemv");
    int (*parallel)(void) = (int (*)(void))dlsym(lib.handle, "openblas_get_parallel");
    char *(*corename)(void) = (char *(*)(void))dlsym(lib.handle, "openblas_get_corename");
    void (*set_threads)(int) = (void (*)(int))dlsym(lib.handle, "openblas_set_num_threads");
    lib.omp = parallel && parallel() == 2;
    /* a pthreads build would start its own spinning threads beside ours */
    if (!lib.omp && set_threads) set_threads(1);
    if (corename) core = corename();
    if (!lib.sgemm || !lib.dgemm || !lib.sgemv || !lib.dgemv) {
      snprintf(lib.why, sizeof lib.why, "%s has no cblas_sgemm/dgemm/sgemv/dgemv", lib_path(lib.handle));
      lib.sgemm = NULL;
    }
  }
  void *lh = lib.handle;
  for (int pass = 0; pass < 2 && !(lib.have_lapack[0] && lib.have_lapack[1]); pass++) {
    if (pass == 1) lh = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lh) continue;
    lib.have_lapack[0] = load_lapack(lh, 's', &lib.lapack[0]);
    lib.have_lapack[1] = load_lapack(lh, 'd', &lib.lapack[1]);
    if (lib.have_lapack[0] && lib.have_lapack[1]) lib.lapack_handle = lh;
  }
  if (!lib.lapack_handle && !lib.why[0]) snprintf(lib.why, sizeof lib.why, "no LAPACK library could be loaded");
  const dnnl_version_t *v = dnnl_version();
  const char *rt = v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "not OpenMP";
  if (lib.sgemm)
    snprintf(lib.info, sizeof lib.info,
             "oneDNN %d.%d.%d (%s) for float32 GEMM above %d^3; OpenBLAS %s (%s, %s%s) for smaller or "
             "batched float32, float64 and LAPACK",
             v->major, v->minor, v->patch, rt, SMALL_SIDE, lib_path(lib.handle), core,
             lib.omp ? "OpenMP" : "own threads off", preloaded ? ", loaded before moontorch" : "");
  else
    snprintf(lib.info, sizeof lib.info,
             "oneDNN %d.%d.%d (%s) for float32 GEMM; %s; float64 GEMM by a plain loop; LAPACK from %s", v->major,
             v->minor, v->patch, rt, lib.why, lib.lapack_handle ? lib_path(lib.lapack_handle) : "nowhere");
}

static void ensure_loaded(void) { pthread_once(&lib.once, load); }

void mt_blas_load(void) { ensure_loaded(); }

const char *mt_blas_info(void) {
  ensure_loaded();
  return lib.info;
}

const mt_lapack *mt_lapack_get(mt_dtype dt, const char *op) {
  ensure_loaded();
  int i = dt == MT_FLOAT64;
  if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
    mt_fail(MT_EDTYPE, "%s: LAPACK works on float32 and float64, got %s", op, mt_dtype_name(dt));
    return NULL;
  }
  if (!lib.have_lapack[i]) {
    mt_fail(MT_EARG, "%s: LAPACK is not available: %s", op, lib.why);
    return NULL;
  }
  return &lib.lapack[i];
}

/* ---- GEMM ---- */

typedef struct gemm_args {
  mt_dtype dt;
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
  const char *a, *b;
  char *c;
} gemm_args;

/* Plain loop for when no library applies: rows of C in [i0, i1). */
static void gemm_loop(const gemm_args *g, int64_t i0, int64_t i1) {
#define LOOP(T)                                                                                                        \
  {                                                                                                                    \
    const T *A = (const T *)g->a, *B = (const T *)g->b;                                                                \
    T *C = (T *)g->c;                                                                                                  \
    for (int64_t i = i0; i < i1; i++) {                                                                                \
      T *c = C + i * g->ldc;                                                                                           \
      for (int64_t j = 0; j < g->n; j++) c[j] = g->beta == 0 ? (T)0 : (T)(g->beta * c[j]);                             \
      for (int64_t p = 0; p < g->k; p++) {                                                                             \
        T av = (T)(g->alpha * (g->ta ? A[p * g->lda + i] : A[i * g->lda + p]));                                        \
        if (g->tb)                                                                                                     \
          for (int64_t j = 0; j < g->n; j++) c[j] += av * B[j * g->ldb + p];                                           \
        else                                                                                                           \
          for (int64_t j = 0; j < g->n; j++) c[j] += av * B[p * g->ldb + j];                                           \
      }                                                                                                                \
    }                                                                                                                  \
  }
  if (g->dt == MT_FLOAT32)
    LOOP(float)
  else
    LOOP(double)
#undef LOOP
}

/* One OpenBLAS call on the block rows [i0, i1) x columns [j0, j1) of C. */
static void gemm_openblas(const gemm_args *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  size_t es = g->dt == MT_FLOAT32 ? 4 : 8;
  const char *a = g->a + (size_t)(g->ta ? i0 : i0 * g->lda) * es;
  const char *b = g->b + (size_t)(g->tb ? j0 * g->ldb : j0) * es;
  char *c = g->c + (size_t)(i0 * g->ldc + j0) * es;
  int ta = g->ta ? CblasTrans : CblasNoTrans, tb = g->tb ? CblasTrans : CblasNoTrans;
  int m = (int)(i1 - i0), n = (int)(j1 - j0);
  if (g->dt == MT_FLOAT32)
    lib.sgemm(CblasRowMajor, ta, tb, m, n, (int)g->k, (float)g->alpha, (const float *)a, (int)g->lda, (const float *)b,
              (int)g->ldb, (float)g->beta, (float *)c, (int)g->ldc);
  else
    lib.dgemm(CblasRowMajor, ta, tb, m, n, (int)g->k, g->alpha, (const double *)a, (int)g->lda, (const double *)b,
              (int)g->ldb, g->beta, (double *)c, (int)g->ldc);
}

/* A product with one row or one column of C as an OpenBLAS gemv (its gemm
 * is slow for these shapes). */
static void gemv_openblas(const gemm_args *g) {
  int trans, rows, cols, lda, incx, incy;
  const char *mat, *vec;
  if (g->n == 1) { /* C[:, 0] = op(A) b */
    mat = g->a;
    lda = (int)g->lda;
    trans = g->ta ? CblasTrans : CblasNoTrans;
    rows = (int)(g->ta ? g->k : g->m);
    cols = (int)(g->ta ? g->m : g->k);
    vec = g->b;
    incx = g->tb ? 1 : (int)g->ldb;
    incy = (int)g->ldc;
  } else { /* C[0, :] = op(B)^T a */
    mat = g->b;
    lda = (int)g->ldb;
    trans = g->tb ? CblasNoTrans : CblasTrans;
    rows = (int)(g->tb ? g->n : g->k);
    cols = (int)(g->tb ? g->k : g->n);
    vec = g->a;
    incx = g->ta ? (int)g->lda : 1;
    incy = 1;
  }
  if (g->dt == MT_FLOAT32)
    lib.sgemv(CblasRowMajor, trans, rows, cols, (float)g->alpha, (const float *)mat, lda, (const float *)vec, incx,
              (float)g->beta, (float *)g->c, incy);
  else
    lib.dgemv(CblasRowMajor, trans, rows, cols, g->alpha, (const double *)mat, lda, (const double *)vec, incx, g->beta,
              (double *)g->c, incy);
}

static void rows_openblas(void *ctx, int64_t i0, int64_t i1) {
  const gemm_args *g = ctx;
  gemm_openblas(g, i0, i1, 0, g->n);
}
static void cols_openblas(void *ctx, int64_t j0, int64_t j1) {
  const gemm_args *g = ctx;
  gemm_openblas(g, 0, g->m, j0, j1);
}
static void rows_loop(void *ctx, int64_t i0, int64_t i1) { gemm_loop(ctx, i0, i1); }

static bool fits_int(const gemm_args *g) {
  return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX && g->ldb <= INT_MAX &&
         g->ldc <= INT_MAX;
}

mt_status mt_blas_gemm(mt_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                       int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  gemm_args g = {dt, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c};
  if (m <= 0 || n <= 0) return MT_OK;
  if (k == 0) { /* no products: C = beta * C (libraries reject lda = 0) */
    g.alpha = 0;
    gemm_loop(&g, 0, m);
    return MT_OK;
  }
  ensure_loaded(); /* a no-op after the first call */
  double work = (double)m * (double)n * (double)k;
  bool nested = omp_in_parallel(), have = lib.sgemm && fits_int(&g);
  if (dt == MT_FLOAT32 && (!have || work > (nested ? SMALL_SGEMM_NESTED : SMALL_SGEMM))) {
    dnnl_status_t s = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, (float)alpha, (const float *)a, lda,
                                 (const float *)b, ldb, (float)beta, (float *)c, ldc);
    if (s != dnnl_success) return mt_fail(MT_EARG, "matmul: oneDNN sgemm failed (status %d)", (int)s);
    return MT_OK;
  }
  if (!have) return mt_parallel_for(m, work > SPLIT_WORK ? 1 : m, rows_loop, &g);
  if (m == 1 || n == 1) {
    gemv_openblas(&g);
    return MT_OK;
  }
  int nt = mt_get_num_threads();
  if (lib.omp || nested || nt == 1 || work <= SPLIT_WORK) {
    gemm_openblas(&g, 0, m, 0, n);
    return MT_OK;
  }
  /* single-threaded OpenBLAS: one block of rows (or columns) per thread */
  if (m >= n) return mt_parallel_for(m, (m + nt - 1) / nt, rows_openblas, &g);
  return mt_parallel_for(n, (n + nt - 1) / nt, cols_openblas, &g);
}
