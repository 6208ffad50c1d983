/* index_kernels.c -- CPU kernels of the index ops: 1-based index to offset
 * conversion, gathers and scatters through an offset operand, masked fills,
 * selects and scatters. Byte-moving kernels exist per element size; scatters
 * that do arithmetic exist per dtype, integer arithmetic wrapping like
 * PyTorch's. Bounds are checked in mt_cpu_offsets, nowhere else. */
#include <string.h>

#include "cpu/dtypes.h"
#include "cpu/index_kernels.h"

void mt_cpu_offsets(char **d, const int64_t *s, int64_t n, void *ctx) {
  mt_offset_ctx *c = ctx;
  const int64_t size = c->size, stride = c->stride;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = *(const int64_t *)(d[1] + i * s[1]), p;
    if (v >= 1 && v <= size)
      p = v - 1;
    else if (c->neg && v < 0 && v >= -size)
      p = v + size;
    else {
      bad = 1;
      continue;
    }
    int64_t off = 0;
    if (c->flat_ndim) {
      for (int k = c->flat_ndim - 1; k >= 0; k--) {
        off += (p % c->flat_shape[k]) * c->flat_strides[k];
        p /= c->flat_shape[k];
      }
    } else {
      off = p * stride;
    }
    *(int64_t *)(d[0] + i * s[0]) += off;
  }
  if (bad) __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
}

/* ---- gathers and plain scatters: per element size ---- */

#define OFF(k, i) (*(const int64_t *)(d[k] + (i)*s[k]))

#define DEF_MOVE_KERNELS(T)                                                                                            \
  static void gather_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                           \
    const int64_t es = sizeof(T);                                                                                      \
    if (s[2] == 0) { /* a row at one offset */                                                                         \
      const char *src = d[1] + OFF(2, 0) * es;                                                                         \
      if (s[0] == es && s[1] == es)                                                                                    \
        memcpy(d[0], src, (size_t)(n * es));                                                                           \
      else                                                                                                             \
        for (int64_t i = 0; i < n; i++) *(T *)(d[0] + i * s[0]) = *(const T *)(src + i * s[1]);                        \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) *(T *)(d[0] + i * s[0]) = *(const T *)(d[1] + i * s[1] + OFF(2, i) * es);          \
  }                                                                                                                    \
  static void scatter_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                          \
    const int64_t es = sizeof(T);                                                                                      \
    if (s[2] == 0) { /* a row at one offset (the source never overlaps it) */                                          \
      char *dst = d[0] + OFF(2, 0) * es;                                                                               \
      if (s[0] == es && s[1] == es)                                                                                    \
        memcpy(dst, d[1], (size_t)(n * es));                                                                           \
      else                                                                                                             \
        for (int64_t i = 0; i < n; i++) *(T *)(dst + i * s[0]) = *(const T *)(d[1] + i * s[1]);                        \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) *(T *)(d[0] + i * s[0] + OFF(2, i) * es) = *(const T *)(d[1] + i * s[1]);          \
  }                                                                                                                    \
  static void mfill_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                            \
    const T v = *(const T *)d[2];                                                                                      \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      if (*(const uint8_t *)(d[1] + i * s[1])) *(T *)(d[0] + i * s[0]) = v;                                            \
  }                                                                                                                    \
  static void msel_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                             \
    char *p = *(char **)ctx;                                                                                           \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      if (*(const uint8_t *)(d[1] + i * s[1])) {                                                                       \
        *(T *)p = *(const T *)(d[0] + i * s[0]);                                                                       \
        p += sizeof(T);                                                                                                \
      }                                                                                                                \
    *(char **)ctx = p;                                                                                                 \
  }                                                                                                                    \
  static void mscat_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                            \
    const char *p = *(char **)ctx;                                                                                     \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      if (*(const uint8_t *)(d[1] + i * s[1])) {                                                                       \
        *(T *)(d[0] + i * s[0]) = *(const T *)p;                                                                       \
        p += sizeof(T);                                                                                                \
      }                                                                                                                \
    *(char **)ctx = (char *)p;                                                                                         \
  }
DEF_MOVE_KERNELS(uint8_t)
DEF_MOVE_KERNELS(uint16_t)
DEF_MOVE_KERNELS(uint32_t)
DEF_MOVE_KERNELS(uint64_t)
typedef struct { uint64_t lo, hi; } b128; /* complex128 */
DEF_MOVE_KERNELS(b128)

/* the kernel of family fam for elements of es bytes */
#define BY_SIZE(fam, es)                                                                                               \
  ((es) == 1 ? fam##_uint8_t : (es) == 2 ? fam##_uint16_t : (es) == 4 ? fam##_uint32_t : (es) == 8 ? fam##_uint64_t : fam##_b128)

mt_loop_fn mt_cpu_gather_kernel(size_t elsize) { return BY_SIZE(gather, elsize); }
mt_loop_fn mt_cpu_masked_fill_kernel(size_t elsize) { return BY_SIZE(mfill, elsize); }
mt_loop_fn mt_cpu_masked_select_kernel(size_t elsize) { return BY_SIZE(msel, elsize); }
mt_loop_fn mt_cpu_masked_scatter_kernel(size_t elsize) { return BY_SIZE(mscat, elsize); }

void mt_cpu_count_true(char **d, const int64_t *s, int64_t n, void *ctx) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += *(const uint8_t *)(d[0] + i * s[0]) != 0;
  __atomic_fetch_add((int64_t *)ctx, c, __ATOMIC_RELAXED);
}

/* ---- scatters with arithmetic: per dtype ---- */

/* EXPR combines x (the destination's old value), y (the source value) and a
 * (alpha), all in the compute type C. */
#define DEF_SCATTER_OP(name, tag, T, C, ALPHA, EXPR)                                                                   \
  static void name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                         \
    const mt_scatter_ctx *c = ctx;                                                                                     \
    const C a = (C)(ALPHA);                                                                                            \
    (void)c;                                                                                                           \
    (void)a;                                                                                                           \
    if (s[2] == 0) { /* a row at one offset: a plain loop that vectorizes */                                           \
      char *dst = d[0] + OFF(2, 0) * (int64_t)sizeof(T);                                                               \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C x = mt_ld_##tag(dst + i * s[0]), y = mt_ld_##tag(d[1] + i * s[1]);                                           \
        MT_ST_##tag(dst + i * s[0], EXPR);                                                                             \
      }                                                                                                                \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      char *p = d[0] + i * s[0] + OFF(2, i) * (int64_t)sizeof(T);                                                      \
      C x = mt_ld_##tag(p), y = mt_ld_##tag(d[1] + i * s[1]);                                                          \
      MT_ST_##tag(p, EXPR);                                                                                            \
    }                                                                                                                  \
  }
#define DEF_SCATTER_FLOAT(E, tag, T, C)                                                                                \
  DEF_SCATTER_OP(sadd, tag, T, C, c->alpha_f, x + a * y)                                                               \
  DEF_SCATTER_OP(smul, tag, T, C, 1, x *y)
/* integers wrap: the arithmetic is done in uint64_t */
#define DEF_SCATTER_INT(E, tag, T, C)                                                                                  \
  DEF_SCATTER_OP(sadd, tag, T, C, c->alpha_i, (T)((uint64_t)x + (uint64_t)a * (uint64_t)y))                            \
  DEF_SCATTER_OP(smul, tag, T, C, 1, (T)((uint64_t)x * (uint64_t)y))
MT_DTYPES_FLOAT(DEF_SCATTER_FLOAT)
MT_DTYPES_INT(DEF_SCATTER_INT)
/* bool: add is or, multiply is and */
DEF_SCATTER_OP(sadd, b8, uint8_t, uint8_t, c->alpha_i != 0, x || (a && y))
DEF_SCATTER_OP(smul, b8, uint8_t, uint8_t, 1, x &&y)

#define SADD_ENTRY(E, tag, T, C) [E] = sadd_##tag,
#define SMUL_ENTRY(E, tag, T, C) [E] = smul_##tag,
static const mt_loop_fn sadd_table[MT_NDTYPE] = {MT_DTYPES_ALL(SADD_ENTRY)};
static const mt_loop_fn smul_table[MT_NDTYPE] = {MT_DTYPES_ALL(SMUL_ENTRY)};

mt_loop_fn mt_cpu_scatter_kernel(mt_reduce r, mt_dtype dt) {
  if (dt < 0 || dt >= MT_NDTYPE) return NULL;
  if (r == MT_REDUCE_ADD) return sadd_table[dt];
  if (r == MT_REDUCE_MUL) return smul_table[dt];
  return BY_SIZE(scatter, mt_dtype_size(dt));
}
