/* binary.c -- CPU kernels of elementwise binary and comparison ops, for all
 * dtypes, built from the rows of tensor/ops.def. Loops have fast paths for
 * dense operands and for a broadcast scalar operand so the compiler
 * vectorizes them; integer arithmetic that could overflow is done in
 * unsigned (wrapping, like PyTorch). */
#include <string.h>

#include "cpu/dtypes.h"
#include "cpu/ewmath.h"
#include "cplx.h"
#include "cpu/kernels.h"

/* One kernel per registry row and dtype from the row's expression
 * (tensor/ops.def, in the dialect of cpu/ewmath.h): d[0] = out, d[1] = a,
 * d[2] = b; a and b hold the compute type T. Comparisons (MT_K_COMPARE)
 * write bool. */
#define DEF_BIN_KERNEL(name, tag, S, C, EXPR)                                                                          \
  static void k_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                     \
    typedef C T;                                                                                                       \
    const int64_t es = sizeof(S);                                                                                      \
    char *o = d[0];                                                                                                    \
    const char *pa = d[1], *pb = d[2];                                                                                 \
    if (s[0] == es && s[1] == es && s[2] == es) {                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(pa + i * es), b = mt_ld_##tag(pb + i * es);                                                  \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else if (s[0] == es && s[1] == es && s[2] == 0) {                                                               \
      const T b = mt_ld_##tag(pb);                                                                                     \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(pa + i * es);                                                                                \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else if (s[0] == es && s[1] == 0 && s[2] == es) {                                                               \
      const T a = mt_ld_##tag(pa);                                                                                     \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T b = mt_ld_##tag(pb + i * es);                                                                                \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(pa + i * s[1]), b = mt_ld_##tag(pb + i * s[2]);                                              \
        MT_ST_##tag(o + i * s[0], EXPR);                                                                               \
      }                                                                                                                \
    }                                                                                                                  \
  }
#define DEF_CMP_KERNEL(name, tag, S, C, EXPR)                                                                          \
  static void k_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                     \
    typedef C T;                                                                                                       \
    const int64_t es = sizeof(S);                                                                                      \
    if (s[0] == 1 && s[1] == es && s[2] == es) {                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(d[1] + i * es), b = mt_ld_##tag(d[2] + i * es);                                              \
        ((uint8_t *)d[0])[i] = (uint8_t)((EXPR) != 0);                                                                 \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(d[1] + i * s[1]), b = mt_ld_##tag(d[2] + i * s[2]);                                          \
        *(uint8_t *)(d[0] + i * s[0]) = (uint8_t)((EXPR) != 0);                                                        \
      }                                                                                                                \
    }                                                                                                                  \
  }
#define FOR_FLOAT(K, name, e)                                                                                          \
  K(name, f32, float, float, e) K(name, f64, double, double, e) K(name, f16, uint16_t, float, e)                       \
  K(name, bf16, uint16_t, float, e)
#define FOR_INT(K, name, e)                                                                                            \
  K(name, i8, int8_t, int8_t, e) K(name, i16, int16_t, int16_t, e) K(name, i32, int32_t, int32_t, e)                   \
  K(name, i64, int64_t, int64_t, e) K(name, u8, uint8_t, uint8_t, e) K(name, b8, uint8_t, uint8_t, e)                  \
  K(name, u16, uint16_t, uint16_t, e)

/* kernels of absent expressions (MT_NOEXPR, never tabled) leave a and b unused */
#pragma GCC diagnostic ignored "-Wunused-variable"
#define MT_OP(...)
#define MT_UNARY_P(...)
#define MT_BINARY(name, flags, ac, jit, fexpr, iexpr, help)                                                            \
  FOR_FLOAT(DEF_BIN_KERNEL, name, fexpr) FOR_INT(DEF_BIN_KERNEL, name, iexpr)
#define MT_COMPARE(name, flags, ac, expr, help) FOR_FLOAT(DEF_CMP_KERNEL, name, expr) FOR_INT(DEF_CMP_KERNEL, name, expr)
#include "ops.def"
#undef MT_BINARY
#undef MT_COMPARE

static mt_loop_fn table[MT_NOPS][MT_NDTYPE];
#define SET(name, tag, S, C, e) table[MT_OP_##name][E_##tag] = k_##name##_##tag;
#define MT_BINARY(name, flags, ac, jit, fexpr, iexpr, help)                                                            \
  if (strcmp(#fexpr, "MT_NOEXPR")) {                                                                                   \
    FOR_FLOAT(SET, name, _)                                                                                            \
  }                                                                                                                    \
  if (strcmp(#iexpr, "MT_NOEXPR")) {                                                                                   \
    FOR_INT(SET, name, _)                                                                                              \
    if ((flags) & MT_F_NOBOOL) table[MT_OP_##name][MT_BOOL] = NULL;                                                    \
  }
#define MT_COMPARE(name, flags, ac, expr, help) FOR_FLOAT(SET, name, _) FOR_INT(SET, name, _)

static void init_table(void) {
#include "ops.def"
}
#undef MT_OP
#undef MT_UNARY_P
#undef MT_BINARY
#undef MT_COMPARE

mt_loop_fn mt_cpu_binary_kernel(mt_op op, mt_dtype dt) {
  if (mt_is_complex(dt)) return mt_cpu_complex_kernel(op, dt);
  static int ready;
  if (!ready) {
    init_table();
    ready = 1;
  }
  return table[op][dt];
}
