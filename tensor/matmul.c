/* matmul.c -- matrix products: matmul (PyTorch's 1-D/2-D/batched rules with
 * broadcast batch dims), mm, bmm, mv, dot, inner, outer, the addmm family and
 * kron. Shapes and dtypes are checked here; every product then runs one
 * batched GEMM over cpu/blas.c (floats) or a plain loop (integers). Views
 * that are transposed reach the library as transpose flags, not copies. */
#include <stdio.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "linalg.h"

/* A batch runs in parallel over its matrices (one thread per product) when
 * the products are small or there are many of them; otherwise the matrices
 * run one after another, each with all threads. */
#define SMALL_PRODUCT (1 << 20)
#define BATCH_PER_THREAD 4
#define PRODUCT_GRAIN (1 << 18)

/* How BLAS reads the matrix in the last two dims of t: row-major (ld = row
 * stride) or transposed (column-major, ld = column stride); !ok: copy first. */
typedef struct layout {
  bool ok, trans;
  int64_t ld;
} layout;

static layout matrix_layout(const mt_tensor *t) {
  int nd = t->ndim;
  int64_t r = t->shape[nd - 2], c = t->shape[nd - 1], sr = t->strides[nd - 2], sc = t->strides[nd - 1];
  int64_t maxr = r > 1 ? r : 1, maxc = c > 1 ? c : 1;
  layout l = {false, false, 0};
  if ((c == 1 || sc == 1) && (r == 1 || sr >= maxc)) {
    l.ok = true;
    l.ld = r == 1 ? maxc : sr;
  } else if ((r == 1 || sr == 1) && (c == 1 || sc >= maxr)) {
    l.ok = l.trans = true;
    l.ld = c == 1 ? maxr : sc;
  }
  return l;
}

/* One batched product: c[i] = alpha * a[i] @ b[i] + beta * c[i] for every
 * index i of the nb batch dims (a and b expanded to c's batch shape). */
typedef struct prod {
  const mt_tensor *a, *b;
  mt_tensor *c;
  int nb;
  int64_t m, n, k;
  layout la, lb;
  double alpha, beta;
  int failed;
} prod;

static int64_t batch_offset(const mt_tensor *t, int nb, int64_t i) {
  int64_t off = 0;
  for (int d = nb - 1; d >= 0; d--) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return off;
}

/* Integer products: a plain loop over rows [r0, r1), wrapping on overflow
 * like PyTorch (accumulated in unsigned 64-bit arithmetic). */
#define INT_MM(E, tag, T, C)                                                                                           \
  static void imm_##tag(const prod *p, const char *A, const char *B, char *Cp, int64_t r0, int64_t r1) {               \
    int nd = p->a->ndim;                                                                                               \
    int64_t es = sizeof(T), sar = p->a->strides[nd - 2] * es, sac = p->a->strides[nd - 1] * es;                        \
    int64_t sbr = p->b->strides[nd - 2] * es, sbc = p->b->strides[nd - 1] * es;                                        \
    uint64_t alpha = (uint64_t)(int64_t)p->alpha, beta = (uint64_t)(int64_t)p->beta;                                   \
    for (int64_t i = r0; i < r1; i++)                                                                                  \
      for (int64_t j = 0; j < p->n; j++) {                                                                             \
        uint64_t acc = 0;                                                                                              \
        for (int64_t q = 0; q < p->k; q++)                                                                             \
          acc += (uint64_t)(int64_t)mt_ld_##tag(A + i * sar + q * sac) *                                               \
                 (uint64_t)(int64_t)mt_ld_##tag(B + q * sbr + j * sbc);                                                \
        T *c = (T *)(Cp + (i * p->n + j) * es);                                                                        \
        uint64_t v = acc * alpha;                                                                                      \
        if (p->beta != 0) v += (uint64_t)(int64_t)*c * beta;                                                           \
        *c = (T)(int64_t)v;                                                                                            \
      }                                                                                                                \
  }
MT_DTYPES_INT(INT_MM)
#undef INT_MM

typedef void (*imm_fn)(const prod *, const char *, const char *, char *, int64_t, int64_t);
#define IMM_ENTRY(E, tag, T, C) [E] = imm_##tag,
static const imm_fn imm_table[MT_NDTYPE] = {MT_DTYPES_INT(IMM_ENTRY)};
#undef IMM_ENTRY

/* Rows [r0, r1) of batch element i. */
static mt_status one_product(const prod *p, int64_t i, int64_t r0, int64_t r1) {
  size_t es = mt_elsize(p->c);
  const char *A = mt_data(p->a) + batch_offset(p->a, p->nb, i) * (int64_t)es;
  const char *B = mt_data(p->b) + batch_offset(p->b, p->nb, i) * (int64_t)es;
  char *C = mt_data(p->c) + i * p->m * p->n * (int64_t)es;
  mt_dtype dt = (mt_dtype)p->c->dtype;
  if (dt == MT_FLOAT32 || dt == MT_FLOAT64)
    return mt_blas_gemm(dt, p->la.trans, p->lb.trans, p->m, p->n, p->k, p->alpha, A, p->la.ld, B, p->lb.ld, p->beta, C,
                        p->n);
  imm_table[dt](p, A, B, C, r0, r1);
  return MT_OK;
}

static void batch_range(void *ctx, int64_t i0, int64_t i1) {
  prod *p = ctx;
  for (int64_t i = i0; i < i1; i++)
    if (one_product(p, i, 0, p->m)) __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
}

/* Rows [r0, r1) of batch element i in blocks, looking at the interrupt
 * flag between them: an integer product is our own loop and may be long
 * (a float one is a single library call). Stops on Ctrl-C; the caller
 * sees the flag. */
static mt_status polled_rows(const prod *p, int64_t i, int64_t r0, int64_t r1) {
  int64_t per = mt_poll_items(p->n * (p->k > 0 ? p->k : 1));
  mt_status st = MT_OK;
  for (int64_t r = r0; r < r1 && !st && !(r > r0 && mt_interrupted()); r += per)
    st = one_product(p, i, r, r1 - r > per ? r + per : r1);
  return st;
}

static void int_rows(void *ctx, int64_t r0, int64_t r1) {
  prod *p = ctx;
  polled_rows(p, 0, r0, r1);
}

/* Runs the batched product; a (batch..., m, k) and b (batch..., k, n) are in
 * c's dtype (float32, float64 or an integer type), float ones in a BLAS
 * layout; c is contiguous (batch..., m, n). */
static mt_status product(const mt_tensor *a, const mt_tensor *b, mt_tensor *c, int nb, double alpha, double beta) {
  prod p = {a,     b,    c, nb, c->shape[nb], c->shape[nb + 1], a->shape[nb + 1], matrix_layout(a), matrix_layout(b),
            alpha, beta, 0};
  int64_t nbatch = 1;
  for (int d = 0; d < nb; d++) nbatch *= c->shape[d];
  if (nbatch == 0 || p.m == 0 || p.n == 0) return MT_OK;
  if (mt_tdevice(c).type == MT_CUDA && !mt_is_floating((mt_dtype)c->dtype))
    return mt_cuda_int_gemm(a, b, c, nb, alpha, beta);
  if (mt_tdevice(c).type == MT_CUDA)
    return mt_cuda_gemm(a, p.la.trans, p.la.ld, b, p.lb.trans, p.lb.ld, c, nb, alpha, beta);
  bool is_float = c->dtype == MT_FLOAT32 || c->dtype == MT_FLOAT64;
  double work = (double)p.m * (double)p.n * (double)(p.k > 0 ? p.k : 1);
  mt_status st = MT_OK;
  if (nbatch == 1 && is_float) return one_product(&p, 0, 0, p.m);
  if (nbatch == 1) {
    int64_t per_row = p.n * (p.k > 0 ? p.k : 1);
    return mt_parallel_for(p.m, PRODUCT_GRAIN / per_row + 1, int_rows, &p);
  }
  if (work >= SMALL_PRODUCT && nbatch < BATCH_PER_THREAD * mt_get_num_threads()) {
    for (int64_t i = 0; i < nbatch && !st; i++) {
      if (mt_interrupted()) return mt_fail(MT_EINTR, "interrupted");
      st = is_float ? one_product(&p, i, 0, p.m) : polled_rows(&p, i, 0, p.m);
    }
    return !st && mt_interrupted() ? mt_fail(MT_EINTR, "interrupted") : st;
  }
  if (is_float) mt_blas_load();
  st = mt_parallel_for(nbatch, (int64_t)(PRODUCT_GRAIN / work) + 1, batch_range, &p);
  if (!st && p.failed) st = mt_fail(MT_EARG, "matmul: the BLAS library failed on a batch element");
  return st;
}

/* ---- shapes, dtypes and the output ---- */

static mt_status check_pair(const char *op, const mt_tensor *a, const mt_tensor *b) {
  if (!mt_same_device(mt_tdevice(a), mt_tdevice(b))) {
    char da[32], db[32];
    return mt_fail(MT_EDEVICE, "%s: operands are on different devices (%s and %s)", op,
                   mt_device_str(mt_tdevice(a), da, sizeof da), mt_device_str(mt_tdevice(b), db, sizeof db));
  }
  if (a->dtype != b->dtype)
    return mt_fail(MT_EDTYPE, "%s: expected both operands to have the same dtype, got %s and %s", op,
                   mt_dtype_name((mt_dtype)a->dtype), mt_dtype_name((mt_dtype)b->dtype));
  if (a->dtype == MT_BOOL)
    return mt_fail(MT_EDTYPE, "%s: bool tensors are not supported (convert them with :int() or :float())", op);
  return MT_OK;
}

static mt_status mismatch(const char *op, const mt_tensor *a, const mt_tensor *b, int64_t ka, int64_t kb) {
  char sa[128], sb[128], dv[48] = "";
  if (mt_tdevice(a).type != MT_CPU) { /* name the device where it is not the usual one */
    char d[32];
    snprintf(dv, sizeof dv, " (both on %s)", mt_device_str(mt_tdevice(a), d, sizeof d));
  }
  return mt_fail(MT_ESHAPE, "%s: shapes %s and %s cannot be multiplied (%lld ~= %lld)%s", op,
                 mt_shape_str(a->shape, a->ndim, sa, sizeof sa), mt_shape_str(b->shape, b->ndim, sb, sizeof sb),
                 (long long)ka, (long long)kb, dv);
}

static mt_status want_dims(const char *op, const mt_tensor *a, int na, const mt_tensor *b, int nb) {
  if (a->ndim == na && b->ndim == nb) return MT_OK;
  char sa[128], sb[128];
  return mt_fail(MT_ESHAPE, "%s: expected %d-D and %d-D tensors, got shapes %s and %s", op, na, nb,
                 mt_shape_str(a->shape, a->ndim, sa, sizeof sa), mt_shape_str(b->shape, b->ndim, sb, sizeof sb));
}

static bool same_shape(const mt_tensor *t, const int64_t *shape, int nd) {
  if (t->ndim != nd) return false;
  for (int i = 0; i < nd; i++)
    if (t->shape[i] != shape[i]) return false;
  return true;
}

/* ---- cuBLASLt epilogues (CUDA; cuda/blaslt.c declines -> the plain path) ---- */

/* c (m, n) = a @ b + bias (1-D of n, c's dtype) in one cuBLASLt call (addmm
 * and F.linear on CUDA); false when Lt declines. */
static bool lt_bias(const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, mt_lt_epi epi, mt_tensor *c) {
  layout la = matrix_layout(a), lb = matrix_layout(b);
  if (!bias || bias->ndim != 1 || bias->shape[0] != c->shape[1] || bias->dtype != c->dtype || !la.ok || !lb.ok ||
      !mt_same_device(mt_tdevice(bias), mt_tdevice(c)))
    return false;
  return mt_cuda_lt_product(a, la.trans, la.ld, b, lb.trans, lb.ld, c, epi, bias, NULL) == MT_OK;
}

mt_status mt_linear_wgrad(const mt_tensor *g, const mt_tensor *x, mt_tensor **gw, mt_tensor **gb) {
  if (g->ndim != 2 || x->ndim != 2 || g->shape[0] != x->shape[0] || g->dtype != x->dtype ||
      mt_tdevice(g).type != MT_CUDA || !mt_same_device(mt_tdevice(g), mt_tdevice(x)))
    return MT_EARG;
  int64_t ws[2] = {g->shape[1], x->shape[1]};
  mt_tensor *gt = NULL, *w = NULL, *b = NULL;
  mt_status st = mt_transpose(g, 0, 1, &gt);
  layout la = st ? (layout){0} : matrix_layout(gt), lb = matrix_layout(x);
  if (!st && (!la.ok || !lb.ok)) st = MT_EARG;
  if (!st) st = mt_empty(ws, 2, (mt_dtype)g->dtype, mt_tdevice(g), &w);
  if (!st) st = mt_empty(ws, 1, (mt_dtype)g->dtype, mt_tdevice(g), &b);
  if (!st) st = mt_cuda_lt_product(gt, la.trans, la.ld, x, lb.trans, lb.ld, w, MT_LT_BGRAD, b, NULL);
  if (!st) *gw = w, *gb = b, w = b = NULL;
  mt_release(gt), mt_release(w), mt_release(b);
  return st;
}

/* act(a @ b + bias) on CUDA: one Lt call for no activation, relu and tanh
 * GELU; exact GELU adds the bias in the call and runs the activation after;
 * MT_EARG (no message) when Lt declines. */
static mt_status matmul_act_lt(const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, mt_act act,
                               double alpha, mt_tensor **out) {
  int nd = a->ndim;
  if (mt_tdevice(a).type != MT_CUDA || !bias || nd < 2 || b->ndim != 2 || a->shape[nd - 1] != b->shape[0] ||
      !(act == MT_ACT_NONE || act == MT_ACT_RELU || act == MT_ACT_GELU || act == MT_ACT_GELU_TANH))
    return MT_EARG;
  int64_t k = b->shape[0], n = b->shape[1], m = 1, shape[MT_MAXDIM];
  for (int d = 0; d < nd - 1; d++) m *= a->shape[d], shape[d] = a->shape[d];
  shape[nd - 1] = n;
  int64_t s2[2] = {m, k}, c2[2] = {m, n};
  mt_tensor *a2 = NULL, *c = NULL, *cv = NULL;
  mt_status st = mt_reshape(a, s2, 2, &a2);
  if (!st) st = mt_empty(c2, 2, (mt_dtype)a->dtype, mt_tdevice(a), &c);
  mt_lt_epi epi = act == MT_ACT_RELU ? MT_LT_BIAS_RELU : act == MT_ACT_GELU_TANH ? MT_LT_BIAS_GELU_TANH : MT_LT_BIAS;
  if (!st && !lt_bias(a2, b, bias, epi, c)) st = MT_EARG;
  if (!st) st = mt_view(c, shape, nd, &cv);
  (void)alpha; /* none of these activations has a parameter */
  if (!st && act == MT_ACT_GELU)
    st = mt_activation(cv, act, 0, out);
  else if (!st)
    *out = cv, cv = NULL;
  mt_release(a2), mt_release(c), mt_release(cv);
  return st;
}

/* Makes a float operand readable by BLAS (copying only when its last two
 * dims are neither row- nor column-major), converting half types to float32.
 * Returns a new reference. */
static mt_status blas_operand(const mt_tensor *x, mt_dtype cdt, mt_tensor **out) {
  if (x->dtype != (int8_t)cdt) return mt_to_dtype(x, cdt, false, out); /* a fresh contiguous copy */
  if (mt_is_floating(cdt) && !matrix_layout(x).ok) return mt_clone(x, out);
  *out = mt_retain((mt_tensor *)x);
  return MT_OK;
}

/* The driver behind every product: a2 (..., m, k) @ b2 (..., k, n) with the
 * batch dims broadcast to batch[nbatch]; the result, of shape batch + (m, n),
 * is returned viewed as fshape[fnd] per the output convention. init, when
 * given and beta != 0, is broadcast to fshape and added times beta. */
static mt_status run_product(const char *op, const mt_tensor *a2, const mt_tensor *b2, const int64_t *batch, int nbatch,
                             const int64_t *fshape, int fnd, const mt_tensor *init, double beta, double alpha,
                             mt_tensor **out) {
  mt_dtype dt = (mt_dtype)a2->dtype;
  bool cuda = mt_tdevice(a2).type == MT_CUDA; /* cuBLAS takes half types as they are */
  mt_dtype cdt = (dt == MT_FLOAT16 || dt == MT_BFLOAT16) && !cuda ? MT_FLOAT32 : dt;
  int64_t m = a2->shape[a2->ndim - 2], k = a2->shape[a2->ndim - 1], n = b2->shape[b2->ndim - 1];
  int64_t full[MT_MAXDIM], ashape[MT_MAXDIM], bshape[MT_MAXDIM], strides[MT_MAXDIM];
  char s1[128], s2[128];
  if (nbatch + 2 > MT_MAXDIM) return mt_fail(MT_ESHAPE, "%s: tensors have at most %d dimensions", op, MT_MAXDIM);
  for (int i = 0; i < nbatch; i++) full[i] = ashape[i] = bshape[i] = batch[i];
  full[nbatch] = ashape[nbatch] = m;
  full[nbatch + 1] = bshape[nbatch + 1] = n;
  ashape[nbatch + 1] = bshape[nbatch] = k;
  if (mt_checked_numel(full, nbatch + 2) < 0) return mt_fail(MT_ENOMEM, "%s: the result is too large", op);
  if (init && beta != 0) {
    bool fits = init->ndim <= fnd;
    for (int i = 0; fits && i < init->ndim; i++) {
      int64_t s = init->shape[init->ndim - 1 - i];
      fits = s == 1 || s == fshape[fnd - 1 - i];
    }
    if (!fits)
      return mt_fail(MT_ESHAPE, "%s: input of shape %s cannot be broadcast to the product's shape %s", op,
                     mt_shape_str(init->shape, init->ndim, s1, sizeof s1), mt_shape_str(fshape, fnd, s2, sizeof s2));
  } else {
    beta = 0;
  }
  mt_tensor *o = *out, *res = NULL, *resf = NULL, *a = NULL, *b = NULL, *ae = NULL, *be = NULL;
  mt_status st = MT_OK;
  if (o && !same_shape(o, fshape, fnd))
    return mt_fail(MT_ESHAPE, "%s: output of shape %s cannot hold the result of shape %s", op,
                   mt_shape_str(o->shape, o->ndim, s1, sizeof s1), mt_shape_str(fshape, fnd, s2, sizeof s2));
  mt_contiguous_strides(full, nbatch + 2, strides);
  bool direct = o && o->dtype == (int8_t)cdt && mt_is_contiguous(o) && o->storage != a2->storage &&
                o->storage != b2->storage && (beta == 0 || o->storage != init->storage);
  if (direct)
    st = mt_as_strided(o, nbatch + 2, full, strides, o->offset, &res);
  else
    st = mt_empty(full, nbatch + 2, cdt, mt_tdevice(a2), &res);
  if (!st) st = mt_view(res, fshape, fnd, &resf);
  if (!st) st = blas_operand(a2, cdt, &a);
  if (!st) st = blas_operand(b2, cdt, &b);
  bool fused = !st && cuda && nbatch == 0 && beta == 1 && alpha == 1 && lt_bias(a, b, init, MT_LT_BIAS, res);
  if (!st && beta != 0 && !fused) st = mt_copy_(resf, init);
  if (!st) st = mt_expand(a, ashape, nbatch + 2, &ae);
  if (!st) st = mt_expand(b, bshape, nbatch + 2, &be);
  if (!st && !fused) st = product(ae, be, res, nbatch, alpha, beta);
  if (!st) {
    if (direct) {
      mt_bump_version(o);
    } else if (o) {
      st = mt_copy_(o, resf);
    } else if (cdt != dt) {
      st = mt_to_dtype(resf, dt, false, out);
    } else {
      *out = mt_retain(resf);
    }
  }
  mt_release(res);
  mt_release(resf);
  mt_release(a);
  mt_release(b);
  mt_release(ae);
  mt_release(be);
  return st;
}

/* ---- the public products ---- */

mt_status mt_matmul(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  char sa[128], sb[128];
  mt_status st = check_pair("matmul", a, b);
  if (st) return st;
  if (a->ndim == 0 || b->ndim == 0)
    return mt_fail(MT_ESHAPE, "matmul: both operands need at least 1 dimension, got shapes %s and %s",
                   mt_shape_str(a->shape, a->ndim, sa, sizeof sa), mt_shape_str(b->shape, b->ndim, sb, sizeof sb));
  int64_t ka = a->shape[a->ndim - 1], kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
  if (ka != kb) return mismatch("matmul", a, b, ka, kb);
  mt_tensor *a2 = NULL, *b2 = NULL;
  int64_t batch[MT_MAXDIM], fshape[MT_MAXDIM];
  int nbatch = 0, fnd = 0;
  bool fold = a->ndim >= 3 && b->ndim <= 2;
  if (fold) { /* (..., m, k) @ (k, n): one (prod(...) * m, k) product */
    int64_t two[2] = {1, ka};
    for (int i = 0; i < a->ndim - 1; i++) two[0] *= fshape[fnd++] = a->shape[i];
    st = mt_reshape(a, two, 2, &a2);
  } else if (a->ndim == 1) {
    st = mt_unsqueeze(a, 0, &a2);
  } else {
    a2 = mt_retain((mt_tensor *)a);
  }
  if (!st) st = b->ndim == 1 ? mt_unsqueeze(b, 1, &b2) : (b2 = mt_retain((mt_tensor *)b), MT_OK);
  if (!st && !fold) {
    st = mt_broadcast_shape("matmul", a2->shape, a2->ndim - 2, b2->shape, b2->ndim - 2, batch, &nbatch);
    if (st)
      st = mt_fail(MT_ESHAPE, "matmul: the batch dimensions of shapes %s and %s cannot be broadcast together",
                   mt_shape_str(a->shape, a->ndim, sa, sizeof sa), mt_shape_str(b->shape, b->ndim, sb, sizeof sb));
    for (int i = 0; i < nbatch; i++) fshape[fnd++] = batch[i];
    if (a->ndim >= 2) fshape[fnd++] = a->shape[a->ndim - 2];
  }
  if (b->ndim >= 2) fshape[fnd++] = b->shape[b->ndim - 1];
  if (!st) st = run_product("matmul", a2, b2, batch, nbatch, fshape, fnd, NULL, 0, 1, out);
  mt_release(a2);
  mt_release(b2);
  return st;
}

mt_status mt_mm(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_status st = check_pair("mm", a, b);
  if (!st) st = want_dims("mm", a, 2, b, 2);
  if (st) return st;
  if (a->shape[1] != b->shape[0]) return mismatch("mm", a, b, a->shape[1], b->shape[0]);
  int64_t fshape[2] = {a->shape[0], b->shape[1]};
  return run_product("mm", a, b, NULL, 0, fshape, 2, NULL, 0, 1, out);
}

/* bmm and baddbmm: two 3-D operands with equal batch sizes */
static mt_status check_bmm(const char *op, const mt_tensor *a, const mt_tensor *b) {
  mt_status st = check_pair(op, a, b);
  if (!st) st = want_dims(op, a, 3, b, 3);
  if (st) return st;
  if (a->shape[0] != b->shape[0]) {
    char sa[128], sb[128];
    return mt_fail(MT_ESHAPE, "%s: batch sizes of shapes %s and %s differ (%lld ~= %lld)", op,
                   mt_shape_str(a->shape, 3, sa, sizeof sa), mt_shape_str(b->shape, 3, sb, sizeof sb),
                   (long long)a->shape[0], (long long)b->shape[0]);
  }
  if (a->shape[2] != b->shape[1]) return mismatch(op, a, b, a->shape[2], b->shape[1]);
  return MT_OK;
}

mt_status mt_bmm(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_status st = check_bmm("bmm", a, b);
  if (st) return st;
  int64_t fshape[3] = {a->shape[0], a->shape[1], b->shape[2]};
  return run_product("bmm", a, b, fshape, 1, fshape, 3, NULL, 0, 1, out);
}

/* mv and addmv: a matrix times a vector viewed as one column */
static mt_status matvec(const char *op, const mt_tensor *init, const mt_tensor *a, const mt_tensor *v, double beta,
                        double alpha, mt_tensor **out) {
  mt_status st = check_pair(op, a, v);
  if (!st) st = want_dims(op, a, 2, v, 1);
  if (st) return st;
  if (a->shape[1] != v->shape[0]) return mismatch(op, a, v, a->shape[1], v->shape[0]);
  mt_tensor *v2 = NULL;
  if ((st = mt_unsqueeze(v, 1, &v2))) return st;
  st = run_product(op, a, v2, NULL, 0, a->shape, 1, init, beta, alpha, out);
  mt_release(v2);
  return st;
}

mt_status mt_mv(const mt_tensor *a, const mt_tensor *v, mt_tensor **out) { return matvec("mv", NULL, a, v, 0, 1, out); }

mt_status mt_addmv(const mt_tensor *input, const mt_tensor *mat, const mt_tensor *vec, double beta, double alpha,
                   mt_tensor **out) {
  return matvec("addmv", input, mat, vec, beta, alpha, out);
}

mt_status mt_dot(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_status st = check_pair("dot", a, b);
  if (!st) st = want_dims("dot", a, 1, b, 1);
  if (st) return st;
  if (a->shape[0] != b->shape[0]) {
    char sa[128], sb[128];
    return mt_fail(MT_ESHAPE, "dot: expected 1-D tensors of the same size, got shapes %s and %s",
                   mt_shape_str(a->shape, 1, sa, sizeof sa), mt_shape_str(b->shape, 1, sb, sizeof sb));
  }
  mt_tensor *a2 = NULL, *b2 = NULL;
  st = mt_unsqueeze(a, 0, &a2);
  if (!st) st = mt_unsqueeze(b, 1, &b2);
  if (!st) st = run_product("dot", a2, b2, NULL, 0, NULL, 0, NULL, 0, 1, out);
  mt_release(a2);
  mt_release(b2);
  return st;
}

mt_status mt_inner(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  if (a->ndim == 0 || b->ndim == 0) return mt_binary(MT_OP_mul, a, b, out);
  mt_status st = check_pair("inner", a, b);
  if (st) return st;
  int64_t k = a->shape[a->ndim - 1];
  if (k != b->shape[b->ndim - 1]) return mismatch("inner", a, b, k, b->shape[b->ndim - 1]);
  if (a->ndim + b->ndim - 2 > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "inner: the result would have more than %d dimensions", MT_MAXDIM);
  int64_t fshape[MT_MAXDIM], ta[2] = {1, k}, tb[2] = {1, k};
  int fnd = 0;
  for (int i = 0; i < a->ndim - 1; i++) ta[0] *= fshape[fnd++] = a->shape[i];
  for (int i = 0; i < b->ndim - 1; i++) tb[0] *= fshape[fnd++] = b->shape[i];
  mt_tensor *a2 = NULL, *b2 = NULL, *bt = NULL;
  st = mt_reshape(a, ta, 2, &a2);
  if (!st) st = mt_reshape(b, tb, 2, &b2);
  if (!st) st = mt_transpose(b2, 0, 1, &bt);
  if (!st) st = run_product("inner", a2, bt, NULL, 0, fshape, fnd, NULL, 0, 1, out);
  mt_release(a2);
  mt_release(b2);
  mt_release(bt);
  return st;
}

mt_status mt_outer(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_status st = want_dims("outer", a, 1, b, 1);
  if (st) return st;
  mt_tensor *col = NULL;
  if ((st = mt_unsqueeze(a, 1, &col))) return st;
  st = mt_binary(MT_OP_mul, col, b, out);
  mt_release(col);
  return st;
}

mt_status mt_addmm(const mt_tensor *input, const mt_tensor *m1, const mt_tensor *m2, double beta, double alpha,
                   mt_tensor **out) {
  mt_status st = check_pair("addmm", m1, m2);
  if (!st) st = want_dims("addmm", m1, 2, m2, 2);
  if (st) return st;
  if (m1->shape[1] != m2->shape[0]) return mismatch("addmm", m1, m2, m1->shape[1], m2->shape[0]);
  int64_t fshape[2] = {m1->shape[0], m2->shape[1]};
  return run_product("addmm", m1, m2, NULL, 0, fshape, 2, input, beta, alpha, out);
}

mt_status mt_baddbmm(const mt_tensor *input, const mt_tensor *b1, const mt_tensor *b2, double beta, double alpha,
                     mt_tensor **out) {
  mt_status st = check_bmm("baddbmm", b1, b2);
  if (st) return st;
  int64_t fshape[3] = {b1->shape[0], b1->shape[1], b2->shape[2]};
  return run_product("baddbmm", b1, b2, fshape, 1, fshape, 3, input, beta, alpha, out);
}

/* addbmm: the batch folds into the inner dimension, (m, B*k) @ (B*k, n) */
mt_status mt_addbmm(const mt_tensor *input, const mt_tensor *b1, const mt_tensor *b2, double beta, double alpha,
                    mt_tensor **out) {
  mt_status st = check_bmm("addbmm", b1, b2);
  if (st) return st;
  int64_t nb = b1->shape[0], m = b1->shape[1], k = b1->shape[2], n = b2->shape[2];
  int64_t ash[2] = {m, nb * k}, bsh[2] = {nb * k, n}, fshape[2] = {m, n};
  int perm[3] = {1, 0, 2};
  mt_tensor *p = NULL, *a2 = NULL, *c2 = NULL;
  st = mt_permute(b1, perm, 3, &p);
  if (!st) st = mt_reshape(p, ash, 2, &a2);
  if (!st) st = mt_reshape(b2, bsh, 2, &c2);
  if (!st) st = run_product("addbmm", a2, c2, NULL, 0, fshape, 2, input, beta, alpha, out);
  mt_release(p);
  mt_release(a2);
  mt_release(c2);
  return st;
}

/* kron: a viewed as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...),
 * then the pairs of dims merged */
mt_status mt_kron(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (nd > MT_MAXDIM / 2) return mt_fail(MT_ESHAPE, "kron: at most %d dimensions are supported", MT_MAXDIM / 2);
  int64_t ash[MT_MAXDIM], ast[MT_MAXDIM], bsh[MT_MAXDIM], bst[MT_MAXDIM], rsh[MT_MAXDIM];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    ash[2 * i] = ia >= 0 ? a->shape[ia] : 1;
    ast[2 * i] = ia >= 0 ? a->strides[ia] : 0;
    ash[2 * i + 1] = 1;
    ast[2 * i + 1] = 0;
    bsh[2 * i] = 1;
    bst[2 * i] = 0;
    bsh[2 * i + 1] = ib >= 0 ? b->shape[ib] : 1;
    bst[2 * i + 1] = ib >= 0 ? b->strides[ib] : 0;
    rsh[i] = ash[2 * i] * bsh[2 * i + 1];
  }
  mt_tensor *av = NULL, *bv = NULL, *prod4 = NULL;
  mt_status st = mt_as_strided(a, 2 * nd, ash, ast, a->offset, &av);
  if (!st) st = mt_as_strided(b, 2 * nd, bsh, bst, b->offset, &bv);
  if (!st) st = mt_binary(MT_OP_mul, av, bv, &prod4);
  if (!st && *out) {
    mt_tensor *v = NULL;
    st = mt_view(prod4, rsh, nd, &v);
    if (!st && !same_shape(*out, rsh, nd)) {
      char s1[128], s2[128];
      st = mt_fail(MT_ESHAPE, "kron: output of shape %s cannot hold the result of shape %s",
                   mt_shape_str((*out)->shape, (*out)->ndim, s1, sizeof s1), mt_shape_str(rsh, nd, s2, sizeof s2));
    }
    if (!st) st = mt_copy_(*out, v);
    mt_release(v);
  } else if (!st) {
    st = mt_view(prod4, rsh, nd, out);
  }
  mt_release(av);
  mt_release(bv);
  mt_release(prod4);
  return st;
}

/* ---- products with an epilogue (the JIT's folded bias and activation) ---- */

/* One oneDNN matmul primitive for float32 act(a @ b + bias); MT_EARG (no
 * message needed) when the operands do not fit it. */
static mt_status matmul_act_dnnl(const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, mt_act act,
                                 double alpha, mt_tensor **out) {
  int nd = a->ndim;
  if (a->dtype != MT_FLOAT32 || b->dtype != MT_FLOAT32 || nd < 2 || b->ndim != 2 || mt_tdevice(a).type != MT_CPU ||
      mt_tdevice(b).type != MT_CPU || a->shape[nd - 1] != b->shape[0] ||
      (bias && (bias->dtype != MT_FLOAT32 || bias->ndim != 1 || bias->shape[0] != b->shape[1] ||
                mt_tdevice(bias).type != MT_CPU)))
    return MT_EARG;
  int64_t k = b->shape[0], n = b->shape[1], m = 1, shape[MT_MAXDIM];
  for (int d = 0; d < nd - 1; d++) m *= a->shape[d], shape[d] = a->shape[d];
  shape[nd - 1] = n;
  if (m == 0 || n == 0 || k == 0 || !matrix_layout(b).ok) return MT_EARG;
  int64_t s2[2] = {m, k};
  mt_tensor *a2 = NULL, *bc = NULL, *c = NULL;
  mt_status st = mt_reshape(a, s2, 2, &a2);
  if (!st && !matrix_layout(a2).ok) st = MT_EARG;
  if (!st && bias) st = mt_contiguous(bias, &bc);
  if (!st) st = mt_empty(shape, nd, MT_FLOAT32, mt_cpu(), &c);
  if (!st) {
    int64_t sa[2] = {a2->strides[0], a2->strides[1]}, sb[2] = {b->strides[0], b->strides[1]};
    st = mt_dnnl_linear(m, n, k, (const float *)mt_data(a2), sa, (const float *)mt_data(b), sb,
                        bc ? (const float *)mt_data(bc) : NULL, act, alpha, (float *)mt_data(c));
  }
  if (!st) *out = c, c = NULL;
  mt_release(a2), mt_release(bc), mt_release(c);
  return st;
}

mt_status mt_matmul_act(const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, mt_act act, double alpha,
                        mt_tensor **out) {
  mt_status st = matmul_act_dnnl(a, b, bias, act, alpha, out);
  if (st == MT_EARG) st = matmul_act_lt(a, b, bias, act, alpha, out);
  if (st != MT_EARG) return st;
  mt_tensor *y = NULL, *z = NULL; /* oneDNN declined: the same ops one after another */
  st = mt_matmul(a, b, &y);
  if (!st && bias) st = mt_binary(MT_OP_add, y, bias, &z);
  if (!st) st = mt_activation(z ? z : y, act, alpha, out);
  mt_release(y), mt_release(z);
  return st;
}
