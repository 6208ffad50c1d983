/* codegen_cuda.c -- CUDA C for a fused graph, from the same IR, fusion and
 * kernel walker as the C generator (cg.h): one __global__ function per
 * kernel,
 *   extern "C" __global__ void mtj_k<i>(const mj_a<i> A)
 * whose one argument, passed by value, holds the buffers (read, then
 * written), z (rows, inner length, the sizes of F, the strides of strided
 * buffers, then the vector flag) and the runtime scalars s. NVRTC compiles
 * the file for the device's exact architecture (tensor/cuda/nvrtc.c).
 *
 * Two skeletons:
 * - elementwise kernels (no reduction): a flat grid over the n elements,
 *   4 consecutive elements per thread; when the runtime says the buffers
 *   allow it (z's last word), full and inner operands are read and the
 *   results written as one aligned vector of 4 (float4 for float32), so
 *   a chain streams at the memory's rate. Indices are 32-bit when n fits.
 * - row kernels (reductions, softmax, layer_norm): a block per row; each
 *   reduction phase is a strided loop over the row's inner elements whose
 *   accumulators the block then combines in shared memory, so every
 *   thread holds the row's value for the next loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

extern const char mt_cuda_common_cu[];
extern const char mt_cuda_elementwise_cu[];

/* The functions the expressions of codegen_c.c name, for the device, after
 * the elementwise dialect of tensor/ops.def's expressions (the m_ functions
 * of elementwise.cu, which comes first): CUDA's own float math replaces the
 * C generator's vectorisable polynomials (mj_expf, mj_erff, ...), gelu is
 * the engine's formula. */
static const char *prelude =
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;\n"
    "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t; typedef unsigned long long uint64_t;\n"
    "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n"
    "#define MJ_D __device__ __forceinline__\n"
    "MJ_D float mj_rh(float x){return h2f(f2h(x));}\n"
    "MJ_D float mj_rb(float x){return b2f(f2b(x));}\n"
    "#define mj_expf expf\n#define mj_expf_le0 expf\n#define mj_logf logf\n#define mj_tanhf tanhf\n#define mj_erff erff\n"
    "/* offset within a row of a strided load: index t over dims hi..lo (sizes z[2+d], strides z[st+d]) */\n"
    "MJ_D int64_t mj_inner(const int64_t *z, int64_t t, int hi, int lo, int st) {\n"
    "  int64_t o = 0; for (int d = hi; d >= lo; d--) { o += t % z[2 + d] * z[st + d]; t /= z[2 + d]; } return o; }\n"
    "MJ_D float mj_geluf(float x){return 0.5f*x*(1.0f+erff(x*0.70710678118654752440f));}\n"
    "#define MJ_FMAX(a,b) (((a)!=(a)||(b)!=(b))?(a)+(b):((a)>(b)?(a):(b)))\n"
    "#define MJ_FMIN(a,b) (((a)!=(a)||(b)!=(b))?(a)+(b):((a)<(b)?(a):(b)))\n"
    "template <class T> struct alignas(4 * sizeof(T)) mjv4 { T v[4]; };\n"
    "struct mj_add { template <class T> MJ_D T operator()(T a, T b) const { return a + b; } };\n"
    "struct mj_mul { template <class T> MJ_D T operator()(T a, T b) const { return a * b; } };\n"
    "struct mj_max { template <class T> MJ_D T operator()(T a, T b) const { return MJ_FMAX(a, b); } };\n"
    "struct mj_min { template <class T> MJ_D T operator()(T a, T b) const { return MJ_FMIN(a, b); } };\n"
    "/* v combined over the block (blockDim.x a power of two <= 256); every thread gets the result */\n"
    "template <class T, class F> MJ_D T mj_bred(T v, F f) {\n"
    "  __shared__ unsigned long long mj_sh[256];\n"
    "  T *s = (T *)mj_sh;\n"
    "  s[threadIdx.x] = v; __syncthreads();\n"
    "  for (unsigned o = blockDim.x >> 1; o > 0; o >>= 1) {\n"
    "    if (threadIdx.x < o) s[threadIdx.x] = f(s[threadIdx.x], s[threadIdx.x + o]);\n"
    "    __syncthreads();\n  }\n"
    "  T r = s[0]; __syncthreads(); return r;\n}\n";

/* Storage type of dtype dt in device memory. */
static const char *stype(int dt) {
  return dt == MT_FLOAT16 ? "mt_half" : dt == MT_BFLOAT16 ? "mt_bf16" : mtj_ctype(dt);
}

/* The conversion of a register value to dtype dt's storage. */
static const char *wconv(int dt) { return dt == MT_FLOAT16 ? "f2h" : dt == MT_BFLOAT16 ? "f2b" : ""; }

/* z words of kernel c: rows, I, F's sizes, strides per load, the vector flag. */
static int nz_of(const mtj_cg *c) { return 2 + c->ndim + c->a.nload * c->ndim + 1; }

/* The kernel's views of its argument: z, the scalars, the typed buffers. */
static void emit_head(mtj_cg *c) {
  mtj_graph *g = c->g;
  mtj_buf *b = c->b;
  mtj_put(b, "  const int64_t *z __attribute__((unused)) = A.z;\n  const double *s __attribute__((unused)) = A.s;\n");
  for (int l = 0; l < c->a.nload; l++) {
    const char *T = stype(g->n[c->a.load[l]].dtype);
    mtj_put(b, "  const %s *b%d = (const %s *)A.a[%d];\n", T, l, T, l);
  }
  for (int l = 0; l < c->a.nstore; l++) {
    const char *T = stype(g->n[c->a.store[l]].dtype);
    mtj_put(b, "  %s *w%d = (%s *)A.a[%d];\n", T, l, T, c->a.nload + l);
  }
}

/* Offsets of general (strided) loads: o<l> for the row, mj_inner<l>(j) within it. */
static void emit_general_row(mtj_cg *c) {
  for (int l = 0; l < c->a.nload; l++)
    if (c->a.cls[l] == MTJ_LD_GENERAL) {
      int st = 2 + c->ndim + l * c->ndim;
      mtj_put(c->b, "    int64_t o%d = 0; { int64_t t_ = (int64_t)row; for (int d_ = %d; d_ >= 0; d_--) { o%d += t_ %% z[2 + d_] * "
                    "z[%d + d_]; t_ /= z[2 + d_]; } }\n", l, c->p - 1, l, st);
    }
}

/* NVRTC has no GNU statement expressions: mj_inner<l>(j) calls the prelude's mj_inner. */
static void emit_general_macros(mtj_cg *c) {
  for (int l = 0; l < c->a.nload; l++)
    if (c->a.cls[l] == MTJ_LD_GENERAL && c->ndim - c->p > 1) {
      int st = 2 + c->ndim + l * c->ndim;
      mtj_put(c->b, "#define mj_inner%d(j) mj_inner(z, (int64_t)(j), %d, %d, %d)\n", l, c->ndim - 1, c->p, st);
    }
}

/* The stores of an elementwise kernel for one element (vector lane e_ when vec). */
static void emit_stores(mtj_cg *c, bool vec) {
  memset(c->loop_done, 0, (size_t)c->g->nn);
  c->vec = vec;
  for (int l = 0; l < c->a.nstore; l++) {
    int st = c->a.store[l];
    mtj_cg_emit(c, st, true);
    char o[64];
    mtj_cg_opnd(c, st, o, sizeof o);
    if (vec) mtj_put(c->b, "      s%d.v[e_] = %s(%s);\n", l, wconv(c->g->n[st].dtype), o);
    else mtj_put(c->b, "      w%d[i] = %s(%s);\n", l, wconv(c->g->n[st].dtype), o);
  }
  c->vec = false;
}

/* An elementwise kernel: 4 elements per thread, vectors when z's flag says so. */
static void gen_elementwise(mtj_cg *c) {
  mtj_graph *g = c->g;
  mtj_buf *b = c->b;
  int k = c->k, nz = nz_of(c);
  bool general = false;
  for (int l = 0; l < c->a.nload; l++) general |= c->a.cls[l] == MTJ_LD_GENERAL;
  emit_general_macros(c);
  mtj_put(b, "template <class IX> MJ_D void mtj_b%d(const mj_a%d &A) {\n", k, k);
  emit_head(c);
  mtj_put(b, "  const IX I = (IX)z[1], n = (IX)z[0] * I; (void)I;\n  const bool vec = z[%d] != 0; (void)vec;\n", nz - 1);
  mtj_put(b, "  const IX step = (IX)gridDim.x * blockDim.x;\n"
             "  for (IX g_ = (IX)blockIdx.x * blockDim.x + threadIdx.x; g_ < (n + 3) / 4; g_ += step) {\n"
             "    const IX i0 = g_ * 4;\n");
  if (!general) { /* vector path */
    mtj_put(b, "    if (vec && i0 + 4 <= n) {\n");
    if (!c->a.flat) mtj_put(b, "      const IX row = i0 / I, j0 = i0 - row * I; (void)row; (void)j0;\n");
    for (int l = 0; l < c->a.nload; l++) {
      const char *T = stype(g->n[c->a.load[l]].dtype);
      if (c->a.cls[l] == MTJ_LD_FULL)
        mtj_put(b, "      const mjv4<%s> l%d = *(const mjv4<%s> *)(b%d + i0);\n", T, l, T, l);
      else if (c->a.cls[l] == MTJ_LD_INNER)
        mtj_put(b, "      const mjv4<%s> l%d = *(const mjv4<%s> *)(b%d + j0);\n", T, l, T, l);
    }
    for (int l = 0; l < c->a.nstore; l++) mtj_put(b, "      mjv4<%s> s%d;\n", stype(g->n[c->a.store[l]].dtype), l);
    mtj_put(b, "#pragma unroll\n      for (int e_ = 0; e_ < 4; e_++) {\n");
    if (!c->a.flat) mtj_put(b, "      const IX j = j0 + e_; (void)j;\n");
    emit_stores(c, true);
    mtj_put(b, "      }\n");
    for (int l = 0; l < c->a.nstore; l++)
      mtj_put(b, "      *(mjv4<%s> *)(w%d + i0) = s%d;\n", stype(g->n[c->a.store[l]].dtype), l, l);
    mtj_put(b, "      continue;\n    }\n");
  }
  mtj_put(b, "    for (int e_ = 0; e_ < 4; e_++) {\n      const IX i = i0 + e_;\n      if (i >= n) break;\n");
  if (!c->a.flat) mtj_put(b, "      const IX row = i / I, j = i - row * I; (void)row; (void)j;\n");
  emit_general_row(c);
  emit_stores(c, false);
  mtj_put(b, "    }\n  }\n}\n");
  /* index type: 32-bit where the sizes allow; both forms only where a size is symbolic (halves compile time) */
  const mtj_kernel *K = &g->k[k];
  int64_t n = 1;
  for (int d = 0; d < K->ndim && n >= 0; d++) n = K->F[d].sym >= 0 ? -1 : n * K->F[d].c;
  mtj_put(b, "extern \"C\" __global__ void __launch_bounds__(256) mtj_k%d(const mj_a%d A) {\n", k, k);
  if (n >= 0) mtj_put(b, "  mtj_b%d<%s>(A);\n}\n", k, n < 2147483647LL - 1024 ? "unsigned" : "long long");
  else
    mtj_put(b, "  if (A.z[0] * A.z[1] < 2147483647LL - 1024) mtj_b%d<unsigned>(A); else mtj_b%d<long long>(A);\n}\n", k, k);
}

/* Is node i a live reduction of this kernel whose input has phase q? */
static bool reduce_of(mtj_cg *c, int i, int q, int *memo) {
  const mtj_node *x = &c->g->n[i];
  return mtj_cg_in_kernel(c, i) && x->live && x->kind == JN_REDUCE && mtj_cg_phase(c, x->a[0], memo) == q;
}

static bool is_float(int dt) { return dt == MT_FLOAT32 || dt == MT_FLOAT64 || dt == MT_FLOAT16 || dt == MT_BFLOAT16; }

/* The body of phase q's loop over j: reductions updated, stores of phase q. */
static void row_body(mtj_cg *c, int q, int *memo) {
  mtj_graph *g = c->g;
  memset(c->loop_done, 0, (size_t)g->nn);
  for (int i = 0; i < g->nn; i++) {
    if (!reduce_of(c, i, q, memo)) continue;
    const mtj_node *x = &g->n[i];
    mtj_cg_emit(c, x->a[0], true);
    char o[64];
    mtj_cg_opnd(c, x->a[0], o, sizeof o);
    bool fl = is_float(x->dtype);
    if (x->op == MT_OP_amax) mtj_put(c->b, fl ? "      acc%d = MJ_FMAX(acc%d, %s);\n" : "      acc%d = acc%d > %s ? acc%d : %s;\n", i, i, o, i, o);
    else if (x->op == MT_OP_amin) mtj_put(c->b, fl ? "      acc%d = MJ_FMIN(acc%d, %s);\n" : "      acc%d = acc%d < %s ? acc%d : %s;\n", i, i, o, i, o);
    else mtj_put(c->b, "      acc%d %s= %s;\n", i, x->op == MT_OP_prod ? "*" : "+", o);
  }
  for (int l = 0; l < c->a.nstore; l++) {
    int st = c->a.store[l];
    if (!mtj_cg_is_row(c, st) && mtj_cg_phase(c, st, memo) == q) {
      mtj_cg_emit(c, st, true);
      char o[64];
      mtj_cg_opnd(c, st, o, sizeof o);
      mtj_put(c->b, "      w%d[row*I+j] = %s(%s);\n", l, wconv(g->n[st].dtype), o);
    }
  }
}

/* A row kernel: a block per row, one strided loop per reduction phase. */
static void gen_rows(mtj_cg *c) {
  mtj_graph *g = c->g;
  mtj_buf *b = c->b;
  int k = c->k;
  int *memo = malloc((size_t)g->nn * sizeof *memo);
  if (!memo) return mtj_cg_fail("out of memory");
  for (int i = 0; i < g->nn; i++) memo[i] = -1;
  emit_general_macros(c);
  mtj_put(b, "extern \"C\" __global__ void __launch_bounds__(256) mtj_k%d(const mj_a%d A) {\n", k, k);
  emit_head(c);
  mtj_put(b, "  const int64_t rows = z[0], I = z[1]; (void)I;\n");
  mtj_put(b, "  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {\n");
  emit_general_row(c);
  int maxq = -1;
  for (int i = 0; i < g->nn; i++)
    if (mtj_cg_in_kernel(c, i) && g->n[i].live && g->n[i].kind == JN_REDUCE) {
      int q = mtj_cg_phase(c, g->n[i].a[0], memo);
      if (q > maxq) maxq = q;
    }
  for (int l = 0; l < c->a.nstore; l++)
    if (!mtj_cg_is_row(c, c->a.store[l])) {
      int q = mtj_cg_phase(c, c->a.store[l], memo);
      if (q > maxq) maxq = q;
    }
  for (int q = 0; q <= maxq; q++) {
    for (int i = 0; i < g->nn; i++)
      if (reduce_of(c, i, q, memo)) mtj_cg_row_deps(c, g->n[i].a[0]);
    for (int l = 0; l < c->a.nstore; l++)
      if (!mtj_cg_is_row(c, c->a.store[l]) && mtj_cg_phase(c, c->a.store[l], memo) == q)
        mtj_cg_row_deps(c, c->a.store[l]);
    for (int i = 0; i < g->nn; i++) {
      if (!reduce_of(c, i, q, memo)) continue;
      const mtj_node *x = &g->n[i];
      const char *T = mtj_cg_rtype(x->dtype);
      bool fl = is_float(x->dtype);
      if (!fl && (x->op == MT_OP_amax || x->op == MT_OP_amin)) { /* integer extrema start from the row's first element */
        mtj_put(b, "    %s acc%d; { const int64_t j = 0; (void)j;\n", T, i);
        memset(c->loop_done, 0, (size_t)g->nn);
        mtj_cg_emit(c, x->a[0], true);
        char o[64];
        mtj_cg_opnd(c, x->a[0], o, sizeof o);
        mtj_put(b, "      acc%d = %s; }\n", i, o);
      } else {
        const char *init = x->op == MT_OP_prod ? "1" : x->op == MT_OP_amax ? "-INFINITY" : x->op == MT_OP_amin ? "INFINITY" : "0";
        mtj_put(b, "    %s acc%d = (%s)%s;\n", T, i, T, init);
      }
    }
    mtj_put(b, "    for (int64_t j = threadIdx.x; j < I; j += blockDim.x) {\n");
    row_body(c, q, memo);
    mtj_put(b, "    }\n");
    for (int i = 0; i < g->nn; i++) {
      if (!reduce_of(c, i, q, memo)) continue;
      const mtj_node *x = &g->n[i];
      const char *T = mtj_cg_rtype(x->dtype);
      const char *f = x->op == MT_OP_prod ? "mj_mul" : x->op == MT_OP_amax ? "mj_max" : x->op == MT_OP_amin ? "mj_min" : "mj_add";
      const char *r = x->dtype == MT_FLOAT16 ? "mj_rh" : x->dtype == MT_BFLOAT16 ? "mj_rb" : "";
      mtj_put(b, "    acc%d = mj_bred(acc%d, %s());\n", i, i, f);
      if (x->op == MT_OP_mean) mtj_put(b, "    const %s v%d = %s(acc%d / (%s)I);\n", T, i, r, i, T);
      else mtj_put(b, "    const %s v%d = %s(acc%d);\n", T, i, r, i);
      c->row_done[i] = 1;
    }
  }
  for (int l = 0; l < c->a.nstore; l++)
    if (mtj_cg_is_row(c, c->a.store[l])) {
      int st = c->a.store[l];
      mtj_cg_emit(c, st, false);
      char o[64];
      mtj_cg_opnd(c, st, o, sizeof o);
      mtj_put(b, "    if (threadIdx.x == 0) w%d[row] = %s(%s);\n", l, wconv(g->n[st].dtype), o);
    }
  mtj_put(b, "  }\n}\n");
  free(memo);
}

static void gen_kernel(mtj_graph *g, int k, mtj_buf *b) {
  mtj_cg C_ = {.g = g, .k = k, .b = b, .cuda = true}, *c = &C_;
  if (mtj_kernel_args(g, k, &c->a)) return mtj_cg_fail("a kernel with too many operands");
  c->ndim = g->k[k].ndim, c->p = c->a.p;
  int na = c->a.nload + c->a.nstore, nz = nz_of(c), ns = g->xs_base + g->nxs;
  if ((size_t)(na + nz + ns + 1) * 8 > 4000) return mtj_cg_fail("a CUDA kernel whose arguments exceed 4 KB");
  c->row_done = calloc((size_t)g->nn, 1);
  c->loop_done = calloc((size_t)g->nn, 1);
  c->rc_done = calloc((size_t)g->nn, 1);
  c->spill = malloc((size_t)g->nn * sizeof *c->spill);
  if (c->row_done && c->loop_done && c->rc_done && c->spill) {
    for (int i = 0; i < g->nn; i++) c->spill[i] = -1;
    mtj_put(b, "\nstruct mj_a%d { const void *a[%d]; int64_t z[%d]; double s[%d]; };\n", k, na > 0 ? na : 1, nz,
            ns > 0 ? ns : 1);
    if (g->k[k].p < 0) gen_elementwise(c);
    else gen_rows(c);
    for (int l = 0; l < c->a.nload; l++)
      if (c->a.cls[l] == MTJ_LD_GENERAL && c->ndim - c->p > 1) mtj_put(b, "#undef mj_inner%d\n", l);
  } else {
    mtj_cg_fail("out of memory");
  }
  free(c->row_done);
  free(c->loop_done);
  free(c->rc_done);
  free(c->spill);
}

char *mtj_codegen_cuda(const mtj_graph *cg_, size_t **ends) {
  mtj_graph *g = (mtj_graph *)cg_;
  mtj_buf b = {0};
  size_t *e = ends ? malloc((size_t)(g->nk + 1) * sizeof *e) : NULL;
  if (ends && !(*ends = e)) return NULL;
  mtj_cg_reset();
  mtj_put(&b, "/* generated by moontorch's JIT (CUDA) */\n// MT_FAST_COMPILE\n%s%s%s", mt_cuda_common_cu,
          mt_cuda_elementwise_cu, prelude);
  if (e) e[0] = b.n;
  for (int k = 0; k < g->nk; k++) {
    gen_kernel(g, k, &b);
    if (e) e[k + 1] = b.n;
  }
  if (mtj_cg_failed()) {
    free(b.s);
    if (ends) free(e), *ends = NULL;
    return NULL;
  }
  return b.s;
}
