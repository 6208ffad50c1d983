/* blas.c (cuda) -- matrix products on CUDA tensors through cuBLAS, loaded
 * with dlopen at first use (libcublas.so.13, .12). tensor/matmul.c checks
 * shapes and lays out the operands; here row-major products become cuBLAS's
 * column-major ones (C^T = B^T A^T), and batches become strided-batched
 * calls over the innermost batch dim (a stride of 0 broadcasts). float32
 * runs in full float32 unless TF32 is allowed (set_float32_matmul_precision). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cublas_api.h"
#include "files.h"
#include "mt_cuda.h"

static struct {
#define MT_CUBLAS_FIELD(R, name, sym, params) R(*name) params;
  MT_CUBLAS_FUNCS(MT_CUBLAS_FIELD)
#undef MT_CUBLAS_FIELD
} cb;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[300];
static bool loaded;
static cublasHandle_t handles[MT_CUDA_MAXDEV];
static _Atomic bool allow_tf32;

void mt_cuda_set_tf32(bool allow) { allow_tf32 = allow; }
bool mt_cuda_tf32(void) { return allow_tf32; }

/* $MOONTORCH_CUBLAS, then the versioned names in the loader's path and in
 * /usr/local/cuda (libcublas finds its libcublasLt beside itself); with
 * make HIP=1, hipBLAS (gpu_port.h). */
static void load(void) {
  static const char *names[] = {MT_GPU_BLAS_LIBS};
  static const char *dirs[] = {MT_GPU_LIB_DIRS};
  void *h = mt_dlopen_first(MT_GPU_BLAS_ENV, names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             MT_GPU_BLAS_DESC " was not found; install it or set " MT_GPU_BLAS_ENV " to its path");
    return;
  }
#define MT_CUBLAS_LOAD(R, name, sym, params)                                                                           \
  if (!(*(void **)&cb.name = dlsym(h, MT_SYM(sym)))) {                                                                 \
    snprintf(load_error, sizeof load_error, MT_GPU_BLAS_DESC " lacks %s", MT_SYM(sym));                               \
    return;                                                                                                            \
  }
  MT_CUBLAS_FUNCS(MT_CUBLAS_LOAD)
#undef MT_CUBLAS_LOAD
  loaded = true;
}

static mt_status check(cublasStatus_t s, const char *op) {
  if (s == 0) return MT_OK;
  return mt_fail(MT_EARG, "%s: cuBLAS failed: %s (status %d)", op, cb.GetStatusString(s), s);
}

/* dev's handle (created on first use, dev current), bound to its current stream. */
static mt_status handle_of(int dev, cublasHandle_t *out) {
  pthread_once(&load_once, load);
  if (!loaded) return mt_fail(MT_EDEVICE, "matmul: %s", load_error);
  mt_status st = MT_OK;
  pthread_mutex_lock(&lock);
  if (!handles[dev]) st = check(cb.Create(&handles[dev]), "matmul");
  pthread_mutex_unlock(&lock);
  if (st) return st;
  *out = handles[dev];
  return check(cb.SetStream(*out, mt_cuda_current_stream(dev).handle), "matmul");
}

static int cuda_type(mt_dtype dt) {
  switch (dt) {
  case MT_FLOAT32: return MT_CUDA_R_32F;
  case MT_FLOAT64: return MT_CUDA_R_64F;
  case MT_FLOAT16: return MT_CUDA_R_16F;
  case MT_BFLOAT16: return MT_CUDA_R_16BF;
  default: return -1;
  }
}

/* Element offset of batch element i over the batch dims [0, nb) of t. */
static int64_t batch_offset(const mt_tensor *t, int nb, int64_t i) {
  int64_t off = 0;
  for (int d = nb - 1; d >= 0; d--) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return off;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= 0x7fffffff; }

/* How many trailing batch dims of t (expanded to c's batch shape) one
 * stride steps through: a strided-batched call can take them at once. */
static int uniform_dims(const mt_tensor *t, const mt_tensor *c, int nb) {
  int n = nb > 0 ? 1 : 0;
  for (int d = nb - 1; d > 0 && t->strides[d - 1] == t->strides[d] * c->shape[d]; d--) n++;
  return n;
}

/* t as a dense copy (batch..., rows, cols), when one strided-batched call
 * cannot step through its batch dims: one copy costs far less than a call
 * per outer batch element, each too small to fill the GPU. */
static mt_status dense_operand(const mt_tensor *t, const mt_tensor *c, int nb, mt_tensor **copy, bool *trans,
                               int64_t *ld) {
  *copy = NULL;
  if (uniform_dims(t, c, nb) == nb) return MT_OK;
  mt_status st = mt_contiguous(t, copy);
  if (!st) *trans = false, *ld = t->shape[nb + 1];
  return st;
}

mt_status mt_cuda_gemm(const mt_tensor *a, bool ta, int64_t lda, const mt_tensor *b, bool tb, int64_t ldb, mt_tensor *c,
                       int nb, double alpha, double beta) {
  const char *op = "matmul";
  mt_dtype dt = (mt_dtype)c->dtype;
  int ty = cuda_type(dt);
  if (ty < 0) return mt_fail(MT_EDTYPE, "matmul: not supported for %s tensors on CUDA yet", mt_dtype_name(dt));
  int dev = mt_tdevice(c).index;
  int64_t m = c->shape[nb], n = c->shape[nb + 1], k = a->shape[nb + 1];
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb))
    return mt_fail(MT_ESHAPE, "matmul: matrices with more than 2^31 rows or columns are not supported on CUDA");
  cublasHandle_t h = NULL;
  mt_status st = handle_of(dev, &h);
  if (st) return st;
  int compute = dt == MT_FLOAT64 ? MT_CUBLAS_COMPUTE_64F
                : (dt == MT_FLOAT32 && allow_tf32) ? MT_CUBLAS_COMPUTE_32F_FAST_TF32
                                                   : MT_CUBLAS_COMPUTE_32F;
  double al64 = alpha, be64 = beta;
  float al32 = (float)alpha, be32 = (float)beta;
  const void *pal = dt == MT_FLOAT64 ? (const void *)&al64 : (const void *)&al32;
  const void *pbe = dt == MT_FLOAT64 ? (const void *)&be64 : (const void *)&be32;
  size_t es = mt_elsize(c);
  int64_t nbatch = 1, inner = 1, sa = 0, sb = 0;
  for (int d = 0; d < nb; d++) nbatch *= c->shape[d];
  if (nbatch == 0 || m == 0 || n == 0) return MT_OK;
  mt_tensor *ac = NULL, *bc = NULL; /* dense copies, when the batch dims need them */
  if (nbatch > c->shape[nb > 0 ? nb - 1 : 0] &&
      ((st = dense_operand(a, c, nb, &ac, &ta, &lda)) || (st = dense_operand(b, c, nb, &bc, &tb, &ldb)))) {
    mt_release(ac);
    return st;
  }
  if (ac) a = ac;
  if (bc) b = bc;
  if (nb > 0) { /* the batch dims one stride covers in a, b (and c, dense) go to one strided-batched call */
    int u = uniform_dims(a, c, nb) < uniform_dims(b, c, nb) ? uniform_dims(a, c, nb) : uniform_dims(b, c, nb);
    for (int d = nb - u; d < nb; d++) inner *= c->shape[d];
    sa = a->strides[nb - 1];
    sb = b->strides[nb - 1];
  }
  int opa = ta ? MT_CUBLAS_OP_T : MT_CUBLAS_OP_N, opb = tb ? MT_CUBLAS_OP_T : MT_CUBLAS_OP_N;
  mt_cuda_note_launch(dev, op);
  for (int64_t outer = 0; outer < nbatch / inner && !st; outer++) {
    /* batch element outer * inner: offsets over all batch dims */
    int64_t i = outer * inner;
    const char *A = mt_data(a) + batch_offset(a, nb, i) * (int64_t)es;
    const char *B = mt_data(b) + batch_offset(b, nb, i) * (int64_t)es;
    char *C = mt_data(c) + i * m * n * (int64_t)es;
    if (inner == 1)
      st = check(cb.GemmEx(h, opb, opa, (int)n, (int)m, (int)k, pal, B, ty, (int)ldb, A, ty, (int)lda, pbe, C, ty,
                           (int)n, compute, MT_CUBLAS_GEMM_DEFAULT),
                 op);
    else
      st = check(cb.GemmStridedBatchedEx(h, opb, opa, (int)n, (int)m, (int)k, pal, B, ty, (int)ldb, sb, A, ty,
                                         (int)lda, sa, pbe, C, ty, (int)n, m * n, (int)inner, compute,
                                         MT_CUBLAS_GEMM_DEFAULT),
                 op);
  }
  mt_release(ac), mt_release(bc);
  return st;
}
