/* test_engine.c -- C unit tests of the engine (no Lua): dtype promotion,
 * views and strides, the broadcasting iterator, copies and conversions,
 * half-precision rounding, allocation failure and interruption, and the
 * library calls with a folded activation (matmul/conv epilogues). Prints
 * one line per failure and ends with "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linalg.h"
#include "mt.h"
#include "nn.h"

static int passed, failed;
#define CHECK(cond)                                                                                                    \
  do {                                                                                                                 \
    if (cond)                                                                                                          \
      passed++;                                                                                                        \
    else {                                                                                                             \
      failed++;                                                                                                        \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                                           \
    }                                                                                                                  \
  } while (0)

/* promotion facts from PyTorch's promote_types */
static void test_promotion(void) {
  CHECK(mt_promote_types(MT_UINT8, MT_INT8) == MT_INT16);
  CHECK(mt_promote_types(MT_BOOL, MT_UINT8) == MT_UINT8);
  CHECK(mt_promote_types(MT_UINT16, MT_INT16) == MT_INT32); /* NumPy; PyTorch 2.x raises */
  CHECK(mt_promote_types(MT_UINT16, MT_UINT8) == MT_UINT16);
  CHECK(mt_promote_types(MT_UINT16, MT_FLOAT16) == MT_FLOAT16);
  CHECK(mt_promote_types(MT_FLOAT16, MT_BFLOAT16) == MT_FLOAT32);
  CHECK(mt_promote_types(MT_INT64, MT_FLOAT16) == MT_FLOAT16);
  CHECK(mt_promote_types(MT_INT32, MT_INT64) == MT_INT64);
  CHECK(mt_promote_types(MT_FLOAT32, MT_FLOAT64) == MT_FLOAT64);
  for (int a = 0; a < MT_NDTYPE; a++)
    for (int b = 0; b < MT_NDTYPE; b++) CHECK(mt_promote_types(a, b) == mt_promote_types(b, a));
}

/* wrapped numbers and 0-dim tensors promote only across categories */
static void test_result_type(void) {
  int64_t shape[1] = {3};
  mt_tensor *i32 = NULL, *f16 = NULL, *wf = NULL, *wi = NULL, *z64 = NULL;
  mt_empty(shape, 1, MT_INT32, mt_cpu(), &i32);
  mt_empty(shape, 1, MT_FLOAT16, mt_cpu(), &f16);
  mt_scalar_tensor(mt_sfloat(2.5), MT_FLOAT64, &wf);
  wf->flags |= MT_TF_WRAPPED;
  mt_scalar_tensor(mt_sint(2), MT_INT64, &wi);
  wi->flags |= MT_TF_WRAPPED;
  mt_scalar_tensor(mt_sfloat(1), MT_FLOAT64, &z64);
  CHECK(mt_result_type(i32, wf) == MT_FLOAT32);
  CHECK(mt_result_type(i32, wi) == MT_INT32);
  CHECK(mt_result_type(f16, wf) == MT_FLOAT16);
  CHECK(mt_result_type(i32, z64) == MT_FLOAT64);
  CHECK(mt_result_type(f16, z64) == MT_FLOAT16);
  mt_release(i32), mt_release(f16), mt_release(wf), mt_release(wi), mt_release(z64);
}

static void test_views(void) {
  int64_t shape[2] = {3, 4}, nshape[2] = {4, 3}, flat[1] = {12};
  mt_tensor *t = NULL, *tt = NULL, *v = NULL, *f = NULL;
  mt_zeros(shape, 2, MT_FLOAT32, mt_cpu(), &t);
  CHECK(mt_is_contiguous(t));
  CHECK(mt_transpose(t, 0, 1, &tt) == MT_OK);
  CHECK(!mt_is_contiguous(tt));
  CHECK(tt->strides[0] == 1 && tt->strides[1] == 4);
  CHECK(mt_view(tt, flat, 1, &v) == MT_ESHAPE); /* not viewable */
  CHECK(strstr(mt_errmsg(), "view") != NULL);
  CHECK(mt_reshape(tt, flat, 1, &f) == MT_OK); /* copies */
  CHECK(f->storage != t->storage);
  mt_release(f);
  f = NULL;
  CHECK(mt_view(t, nshape, 2, &v) == MT_OK && v->storage == t->storage);
  mt_release(v), mt_release(tt), mt_release(t);
}

static void test_broadcast_copy(void) {
  int64_t s23[2] = {2, 3}, s3[1] = {3};
  mt_tensor *dst = NULL, *row = NULL;
  mt_zeros(s23, 2, MT_FLOAT64, mt_cpu(), &dst);
  mt_empty(s3, 1, MT_INT32, mt_cpu(), &row);
  int32_t *r = (int32_t *)mt_data(row);
  r[0] = 1, r[1] = -2, r[2] = 3;
  CHECK(mt_copy_(dst, row) == MT_OK);
  const double *d = (const double *)mt_data(dst);
  CHECK(d[0] == 1 && d[1] == -2 && d[2] == 3 && d[3] == 1 && d[5] == 3);
  CHECK(dst->storage->version == 1);
  int64_t s4[1] = {4};
  mt_tensor *bad = NULL;
  mt_zeros(s4, 1, MT_FLOAT32, mt_cpu(), &bad);
  CHECK(mt_copy_(dst, bad) == MT_ESHAPE);
  mt_release(bad), mt_release(row), mt_release(dst);
}

static void test_half(void) {
  CHECK(mt_half_to_float(mt_float_to_half(1.0f)) == 1.0f);
  CHECK(mt_float_to_half(65504.0f) == 0x7bff);
  CHECK(isinf(mt_half_to_float(mt_float_to_half(1e6f))));
  CHECK(mt_float_to_bf16(1.0f) == 0x3f80);
  /* 1 + 2^-8 is halfway between two bfloat16 values: ties go to even */
  CHECK(mt_float_to_bf16(1.00390625f) == 0x3f80);
  CHECK(isnan(mt_bf16_to_float(mt_float_to_bf16(NAN))));
}

static void test_alloc_failure(void) {
  int64_t huge[2] = {1000000000, 1000000};
  mt_tensor *t = NULL;
  CHECK(mt_empty(huge, 2, MT_FLOAT32, mt_cpu(), &t) == MT_ENOMEM);
  CHECK(t == NULL);
  int64_t over[3] = {INT64_MAX / 2, 4, 4};
  CHECK(mt_empty(over, 3, MT_FLOAT32, mt_cpu(), &t) == MT_ENOMEM);
  int64_t neg[1] = {-1};
  CHECK(mt_empty(neg, 1, MT_FLOAT32, mt_cpu(), &t) == MT_ESHAPE);
}

static void test_elementwise(void) {
  int64_t s[1] = {100000};
  mt_tensor *a = NULL, *b = NULL, *c = NULL;
  mt_full(s, 1, mt_sfloat(0.5), MT_FLOAT32, mt_cpu(), &a);
  CHECK(mt_unary(MT_OP_exp, a, &b) == MT_OK);
  CHECK(fabsf(((float *)mt_data(b))[99999] - expf(0.5f)) < 1e-6f);
  CHECK(mt_binary(MT_OP_add, a, b, &c) == MT_OK);
  CHECK(fabsf(((float *)mt_data(c))[12345] - (0.5f + expf(0.5f))) < 1e-6f);
  mt_release(c);
  c = NULL;
  /* integer division by zero is an error, not a crash */
  mt_tensor *i = NULL, *z = NULL;
  mt_full(s, 1, mt_sint(7), MT_INT64, mt_cpu(), &i);
  mt_scalar_tensor(mt_sint(0), MT_INT64, &z);
  CHECK(mt_binary(MT_OP_remainder, i, z, &c) == MT_EARG && c == NULL);
  mt_release(a), mt_release(b), mt_release(i), mt_release(z);
}

static void count_fn(void *ctx, int64_t b, int64_t e) { (void)ctx, (void)b, (void)e; }

static void test_interrupt(void) {
  mt_interrupt();
  CHECK(mt_parallel_for(1 << 24, 1024, count_fn, NULL) == MT_EINTR);
  mt_clear_interrupt();
  CHECK(mt_parallel_for(1 << 24, 1024, count_fn, NULL) == MT_OK);
}

/* act(v) in double, from the definitions (leaky slope 0.2) */
static double act_ref(mt_act act, double v) {
  switch (act) {
  case MT_ACT_RELU: return v > 0 ? v : 0;
  case MT_ACT_LEAKY_RELU: return v > 0 ? v : 0.2 * v;
  case MT_ACT_TANH: return tanh(v);
  case MT_ACT_SIGMOID: return 1 / (1 + exp(-v));
  case MT_ACT_SILU: return v / (1 + exp(-v));
  case MT_ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2)));
  case MT_ACT_GELU_TANH: return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  default: return v;
  }
}

/* element i of contiguous float32/float64 t */
static void set_at(mt_tensor *t, int64_t i, double v) {
  if (t->dtype == MT_FLOAT32) ((float *)mt_data(t))[i] = (float)v;
  else ((double *)mt_data(t))[i] = v;
}
static double at(const mt_tensor *t, int64_t i) {
  return t->dtype == MT_FLOAT32 ? ((const float *)mt_data(t))[i] : ((const double *)mt_data(t))[i];
}

/* mt_matmul_act (oneDNN for float32, plain ops for float64) and
 * mt_convolution_act (a 1x1 convolution is the same product) against loops */
static void test_epilogues(void) {
  enum { M = 6, K = 5, N = 4 };
  double a[M * K], w[N * K], bias[N];
  for (int i = 0; i < M * K; i++) a[i] = sin(1.3 * i) * 2;
  for (int i = 0; i < N * K; i++) w[i] = cos(0.7 * i);
  for (int i = 0; i < N; i++) bias[i] = 0.25 * i - 0.4;
  for (int dt = 0; dt < 2; dt++) {
    mt_dtype t = dt ? MT_FLOAT64 : MT_FLOAT32;
    int64_t sa[2] = {M, K}, sw[2] = {N, K}, sb[1] = {N}, sx[4] = {1, K, M, 1}, sw4[4] = {N, K, 1, 1};
    mt_tensor *ta = NULL, *tw = NULL, *tb = NULL, *wt = NULL, *x4 = NULL, *w4 = NULL, *xt = NULL;
    CHECK(mt_empty(sa, 2, t, mt_cpu(), &ta) == MT_OK && mt_empty(sw, 2, t, mt_cpu(), &tw) == MT_OK &&
          mt_empty(sb, 1, t, mt_cpu(), &tb) == MT_OK);
    for (int i = 0; i < M * K; i++) set_at(ta, i, a[i]);
    for (int i = 0; i < N * K; i++) set_at(tw, i, w[i]);
    for (int i = 0; i < N; i++) set_at(tb, i, bias[i]);
    CHECK(mt_transpose(tw, 0, 1, &wt) == MT_OK); /* (K, N), transposed layout as in x @ W^T */
    /* the conv input (1, K, M, 1): channels are the columns of a */
    CHECK(mt_transpose(ta, 0, 1, &xt) == MT_OK && mt_reshape(xt, sx, 4, &x4) == MT_OK &&
          mt_view(tw, sw4, 4, &w4) == MT_OK);
    mt_conv_opts o;
    mt_conv_opts_init(&o);
    for (int act = 0; act < MT_NACT; act++) {
      mt_tensor *y = NULL, *yc = NULL;
      CHECK(mt_matmul_act(ta, wt, tb, (mt_act)act, 0.2, &y) == MT_OK);
      CHECK(mt_convolution_act(x4, w4, tb, &o, (mt_act)act, 0.2, &yc) == MT_OK);
      double err = 0, errc = 0;
      for (int i = 0; i < M && y && yc; i++)
        for (int j = 0; j < N; j++) {
          double s = bias[j];
          for (int q = 0; q < K; q++) s += a[i * K + q] * w[j * K + q];
          double want = act_ref((mt_act)act, s);
          err = fmax(err, fabs(at(y, i * N + j) - want));
          errc = fmax(errc, fabs(at(yc, j * M + i) - want)); /* (1, N, M, 1) */
        }
      CHECK(err < (dt ? 1e-12 : 1e-5));
      CHECK(errc < (dt ? 1e-12 : 1e-5));
      if (err >= (dt ? 1e-12 : 1e-5) || errc >= (dt ? 1e-12 : 1e-5))
        printf("  %s %s: matmul error %g, conv error %g\n", mt_dtype_name(t), mt_act_name((mt_act)act), err, errc);
      mt_release(y), mt_release(yc);
    }
    mt_release(ta), mt_release(tw), mt_release(tb), mt_release(wt), mt_release(x4), mt_release(w4), mt_release(xt);
  }
}

int main(void) {
  test_promotion();
  test_result_type();
  test_views();
  test_broadcast_copy();
  test_half();
  test_alloc_failure();
  test_elementwise();
  test_interrupt();
  test_epilogues();
  mt_empty_cache();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
