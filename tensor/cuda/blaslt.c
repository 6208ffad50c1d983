/* blaslt.c (cuda) -- matrix products with an epilogue through cuBLASLt,
 * loaded with dlopen at first use (libcublasLt.so.13, .12): a linear
 * layer's y = x w^T + b in one call (bias, optionally then ReLU or the tanh
 * GELU, whose input can be kept for the backward), and a weight gradient
 * with its bias gradient (BGRADB) in one call. mt_cuda_lt_product returns
 * MT_EARG *without a message* when Lt is absent, switched off, fails or
 * declines the problem, and the caller falls back to cuBLAS and our
 * kernels; a product Lt accepts is numerically the cuBLAS one (same compute
 * type: float32, TF32 when allowed, float32 accumulation for half types).
 * make HIP=1: compiled out (always declines). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mt_cuda.h"

#ifdef MT_HIP
mt_status mt_cuda_lt_product(const mt_tensor *a, bool ta, int64_t lda, const mt_tensor *b, bool tb, int64_t ldb,
                             mt_tensor *c, mt_lt_epi epi, const mt_tensor *vec, mt_tensor *aux) {
  (void)a, (void)ta, (void)lda, (void)b, (void)tb, (void)ldb, (void)c, (void)epi, (void)vec, (void)aux;
  return MT_EARG;
}
mt_lt_info mt_cuda_lt_stats(void) {
  mt_lt_info i = {0};
  snprintf(i.load_error, sizeof i.load_error, "cuBLASLt is not used by the HIP build");
  return i;
}
void mt_cuda_lt_set_enabled(bool on) { (void)on; }
#else

#include "cublas_api.h"
#include "cublaslt_api.h"
#include "files.h"

static struct {
#define MT_LT_FIELD(R, name, sym, params) R(*name) params;
  MT_CUBLASLT_FUNCS(MT_LT_FIELD)
#undef MT_LT_FIELD
} lt;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[300];
static bool loaded;
static _Atomic bool enabled = true;
static _Atomic int64_t n_calls, n_declined;
static cublasLtHandle_t handles[MT_CUDA_MAXDEV];

#define WORKSPACE_MAX (32u << 20)

/* $MOONTORCH_CUBLASLT, then the versioned names in the loader's path and in /usr/local/cuda. */
static void load(void) {
  static const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  static const char *dirs[] = {MT_GPU_LIB_DIRS};
  void *h = mt_dlopen_first("MOONTORCH_CUBLASLT", names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error, "cuBLASLt (libcublasLt.so.13/.12) was not found");
    return;
  }
#define MT_LT_LOAD(R, name, sym, params)                                                                               \
  if (!(*(void **)&lt.name = dlsym(h, sym))) {                                                                         \
    snprintf(load_error, sizeof load_error, "cuBLASLt lacks %s", sym);                                                 \
    return;                                                                                                            \
  }
  MT_CUBLASLT_FUNCS(MT_LT_LOAD)
#undef MT_LT_LOAD
  loaded = true;
}

static cublasLtHandle_t handle_of(int dev) {
  pthread_once(&load_once, load);
  if (!loaded) return NULL;
  pthread_mutex_lock(&lock);
  if (!handles[dev] && lt.Create(&handles[dev]) != 0) handles[dev] = NULL;
  cublasLtHandle_t h = handles[dev];
  pthread_mutex_unlock(&lock);
  return h;
}

/* ---- the algorithm cache: the heuristic's first choice per problem ---- */

typedef struct key {
  int dev, dt, compute, epi, ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  int align; /* the alignments of every pointer, 4 bits each (log2, capped at 256) */
} key;
typedef struct entry {
  key k;
  bool used;
  cublasLtMatmulAlgo_t algo;
  size_t ws;
} entry;
#define CACHE_SIZE 256
static entry cache[CACHE_SIZE];

static uint64_t key_hash(const key *k) {
  const unsigned char *p = (const unsigned char *)k;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* log2 of the largest power of two (<= 256) dividing the address */
static int align_log2(const void *p) {
  uintptr_t v = (uintptr_t)p;
  int l = 0;
  while (l < 8 && !(v >> l & 1)) l++;
  return l;
}

static int lt_type(mt_dtype dt) {
  switch (dt) {
  case MT_FLOAT32: return MT_CUDA_R_32F;
  case MT_FLOAT16: return MT_CUDA_R_16F;
  case MT_BFLOAT16: return MT_CUDA_R_16BF;
  default: return -1;
  }
}

static int lt_epilogue(mt_lt_epi e, bool aux) {
  switch (e) {
  case MT_LT_PLAIN: return MT_LT_EPI_DEFAULT;
  case MT_LT_BIAS: return MT_LT_EPI_BIAS;
  case MT_LT_BIAS_RELU: return aux ? MT_LT_EPI_RELU_AUX_BIAS : MT_LT_EPI_RELU_BIAS;
  case MT_LT_BIAS_GELU_TANH: return aux ? MT_LT_EPI_GELU_AUX_BIAS : MT_LT_EPI_GELU_BIAS;
  case MT_LT_BGRAD: return MT_LT_EPI_BGRADB;
  }
  return -1;
}

/* One Lt call, descriptors made and destroyed here. Column-major terms:
 * D (M x N, ld M) = op(A) op(B); A is stored M x K (K x M when ta), B is
 * K x N (N x K when tb). Returns false when Lt declines or fails. */
typedef struct call {
  int dev, type, compute, epi, ta, tb;
  int64_t M, N, K, lda, ldb;
  const void *A, *B, *vec;
  void *D, *aux;
  int64_t ldaux;
} call;

static bool run_call(cublasLtHandle_t h, const call *c) {
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  bool ok = lt.DescCreate(&desc, c->compute, MT_CUDA_R_32F) == 0;
  uint32_t epi = (uint32_t)c->epi;
  ok = ok && lt.DescSet(desc, MT_LT_DESC_TRANSA, &c->ta, sizeof c->ta) == 0;
  ok = ok && lt.DescSet(desc, MT_LT_DESC_TRANSB, &c->tb, sizeof c->tb) == 0;
  ok = ok && lt.DescSet(desc, MT_LT_DESC_EPILOGUE, &epi, sizeof epi) == 0;
  if (ok && c->vec) ok = lt.DescSet(desc, MT_LT_DESC_BIAS_POINTER, &c->vec, sizeof c->vec) == 0;
  if (ok && c->aux) {
    ok = lt.DescSet(desc, MT_LT_DESC_EPILOGUE_AUX_POINTER, &c->aux, sizeof c->aux) == 0;
    ok = ok && lt.DescSet(desc, MT_LT_DESC_EPILOGUE_AUX_LD, &c->ldaux, sizeof c->ldaux) == 0;
  }
  ok = ok && lt.LayoutCreate(&la, c->type, c->ta ? c->K : c->M, c->ta ? c->M : c->K, c->lda) == 0;
  ok = ok && lt.LayoutCreate(&lb, c->type, c->tb ? c->N : c->K, c->tb ? c->K : c->N, c->ldb) == 0;
  ok = ok && lt.LayoutCreate(&ld, c->type, c->M, c->N, c->M) == 0;
  key k;
  memset(&k, 0, sizeof k); /* padding too: the key is hashed and compared as bytes */
  k.dev = c->dev, k.dt = c->type, k.compute = c->compute, k.epi = c->epi, k.ta = c->ta, k.tb = c->tb;
  k.m = c->M, k.n = c->N, k.k = c->K, k.lda = c->lda, k.ldb = c->ldb, k.ldc = c->ldaux;
  k.align = align_log2(c->A) | align_log2(c->B) << 4 | align_log2(c->D) << 8 |
            (c->vec ? align_log2(c->vec) : 8) << 12 | (c->aux ? align_log2(c->aux) : 8) << 16;
  entry *e = &cache[key_hash(&k) % CACHE_SIZE];
  cublasLtMatmulAlgo_t algo;
  size_t ws = 0;
  bool hit = false;
  if (ok) {
    pthread_mutex_lock(&lock);
    if (e->used && memcmp(&e->k, &k, sizeof k) == 0) hit = true, algo = e->algo, ws = e->ws;
    pthread_mutex_unlock(&lock);
  }
  if (ok && !hit) {
    uint64_t wmax = WORKSPACE_MAX;
    ok = lt.PrefCreate(&pref) == 0 && lt.PrefSet(pref, MT_LT_PREF_MAX_WORKSPACE_BYTES, &wmax, sizeof wmax) == 0;
    const void *ptrs[4] = {c->A, c->B, c->D, c->D};
    for (int i = 0; ok && i < 4; i++) {
      uint32_t al = 1u << align_log2(ptrs[i]);
      ok = lt.PrefSet(pref, MT_LT_PREF_MIN_ALIGNMENT_A_BYTES + i, &al, sizeof al) == 0;
    }
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    memset(&res, 0, sizeof res);
    ok = ok && lt.Heuristic(h, desc, la, lb, ld, ld, pref, 1, &res, &got) == 0 && got > 0 && res.state == 0;
    if (ok) {
      algo = res.algo, ws = res.workspaceSize;
      pthread_mutex_lock(&lock);
      e->k = k, e->used = true, e->algo = algo, e->ws = ws;
      pthread_mutex_unlock(&lock);
    }
  }
  void *work = NULL;
  if (ok && ws > 0 && mt_cuda_malloc(c->dev, ws, &work) != MT_OK) ok = false;
  if (ok) {
    float one = 1.0f, zero = 0.0f;
    mt_cuda_note_launch(c->dev, "linear");
    ok = lt.Matmul(h, desc, &one, c->A, la, c->B, lb, &zero, c->D, ld, c->D, ld, &algo, work, ws,
                   mt_cuda_current_stream(c->dev).handle) == 0;
  }
  if (work) mt_cuda_free(c->dev, work);
  if (pref) lt.PrefDestroy(pref);
  if (la) lt.LayoutDestroy(la);
  if (lb) lt.LayoutDestroy(lb);
  if (ld) lt.LayoutDestroy(ld);
  if (desc) lt.DescDestroy(desc);
  return ok;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= 0x7fffffff; }

mt_status mt_cuda_lt_product(const mt_tensor *a, bool ta, int64_t lda, const mt_tensor *b, bool tb, int64_t ldb,
                             mt_tensor *c, mt_lt_epi epi, const mt_tensor *vec, mt_tensor *aux) {
  mt_dtype dt = (mt_dtype)c->dtype;
  int type = lt_type(dt);
  if (!enabled || type < 0 || a->dtype != c->dtype || b->dtype != c->dtype || c->ndim != 2 || !mt_is_contiguous(c))
    return MT_EARG;
  int64_t m = c->shape[0], n = c->shape[1], k = a->shape[1];
  if (m == 0 || n == 0 || k == 0 || !fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb))
    return MT_EARG;
  if (vec && (vec->dtype != c->dtype || !mt_is_contiguous(vec) || mt_numel(vec) != (epi == MT_LT_BGRAD ? m : n)))
    return MT_EARG;
  if ((epi != MT_LT_PLAIN) != (vec != NULL)) return MT_EARG;
  if (aux && (epi != MT_LT_BIAS_GELU_TANH || aux->dtype != c->dtype || !mt_is_contiguous(aux) ||
              mt_numel(aux) != m * n))
    return MT_EARG;
  int dev = mt_tdevice(c).index;
  cublasLtHandle_t h = handle_of(dev);
  if (!h) return MT_EARG;
  /* row-major c = a b is column-major c^T = b^T a^T: Lt's A is b, its B is a */
  call cl = {dev,
             type,
             dt == MT_FLOAT32 && mt_cuda_tf32() ? MT_CUBLAS_COMPUTE_32F_FAST_TF32 : MT_CUBLAS_COMPUTE_32F,
             lt_epilogue(epi, aux != NULL),
             tb ? MT_CUBLAS_OP_T : MT_CUBLAS_OP_N,
             ta ? MT_CUBLAS_OP_T : MT_CUBLAS_OP_N,
             n,
             m,
             k,
             ldb,
             lda,
             mt_data(b),
             mt_data(a),
             vec ? mt_data(vec) : NULL,
             mt_data(c),
             aux ? mt_data(aux) : NULL,
             n};
  n_calls++;
  if (run_call(h, &cl)) return MT_OK;
  n_declined++;
  return MT_EARG;
}

/* Counters only: loading happens at the first product, not here. */
mt_lt_info mt_cuda_lt_stats(void) {
  mt_lt_info i = {loaded, enabled, n_calls, n_declined, ""};
  snprintf(i.load_error, sizeof i.load_error, "%s", load_error);
  return i;
}

void mt_cuda_lt_set_enabled(bool on) { enabled = on; }
#endif
