/* dtypes.h -- per-dtype load/store helpers for CPU kernels (engine-internal).
 * Each dtype has a tag, a storage type and a compute type; half types compute
 * in float. X-macro lists let kernels be written once per dtype family. */
#ifndef MT_CPU_DTYPES_H
#define MT_CPU_DTYPES_H

#include <stdint.h>

#include "mt.h"

/* X(enum, tag, storage type, compute type) */
#define MT_DTYPES_FLOAT(X)                                                                                             \
  X(MT_FLOAT32, f32, float, float)                                                                                     \
  X(MT_FLOAT64, f64, double, double)                                                                                   \
  X(MT_FLOAT16, f16, uint16_t, float)                                                                                  \
  X(MT_BFLOAT16, bf16, uint16_t, float)
#define MT_DTYPES_INT(X)                                                                                               \
  X(MT_INT8, i8, int8_t, int8_t)                                                                                       \
  X(MT_INT16, i16, int16_t, int16_t)                                                                                   \
  X(MT_INT32, i32, int32_t, int32_t)                                                                                   \
  X(MT_INT64, i64, int64_t, int64_t)                                                                                   \
  X(MT_UINT8, u8, uint8_t, uint8_t)                                                                                    \
  X(MT_UINT16, u16, uint16_t, uint16_t)
#define MT_DTYPES_BOOL(X) X(MT_BOOL, b8, uint8_t, uint8_t)
#define MT_DTYPES_ALL(X) MT_DTYPES_FLOAT(X) MT_DTYPES_INT(X) MT_DTYPES_BOOL(X)
/* A second copy of the list, for nested expansions (cast tables). */
#define MT_DTYPES_ALL2(X)                                                                                              \
  X(MT_FLOAT32, f32, float, float)                                                                                     \
  X(MT_FLOAT64, f64, double, double)                                                                                   \
  X(MT_FLOAT16, f16, uint16_t, float)                                                                                  \
  X(MT_BFLOAT16, bf16, uint16_t, float)                                                                                \
  X(MT_INT8, i8, int8_t, int8_t)                                                                                       \
  X(MT_INT16, i16, int16_t, int16_t)                                                                                   \
  X(MT_INT32, i32, int32_t, int32_t)                                                                                   \
  X(MT_INT64, i64, int64_t, int64_t)                                                                                   \
  X(MT_UINT8, u8, uint8_t, uint8_t)                                                                                    \
  X(MT_UINT16, u16, uint16_t, uint16_t)                                                                                \
  X(MT_BOOL, b8, uint8_t, uint8_t)

/* tag -> enum, for building tables inside X-macro expansions */
#define E_f32 MT_FLOAT32
#define E_f64 MT_FLOAT64
#define E_f16 MT_FLOAT16
#define E_bf16 MT_BFLOAT16
#define E_i8 MT_INT8
#define E_i16 MT_INT16
#define E_i32 MT_INT32
#define E_i64 MT_INT64
#define E_u8 MT_UINT8
#define E_u16 MT_UINT16
#define E_b8 MT_BOOL

static inline float mt_ld_f32(const void *p) { return *(const float *)p; }
static inline double mt_ld_f64(const void *p) { return *(const double *)p; }
static inline float mt_ld_f16(const void *p) { return mt_half_to_float(*(const uint16_t *)p); }
static inline float mt_ld_bf16(const void *p) { return mt_bf16_to_float(*(const uint16_t *)p); }
static inline int8_t mt_ld_i8(const void *p) { return *(const int8_t *)p; }
static inline int16_t mt_ld_i16(const void *p) { return *(const int16_t *)p; }
static inline int32_t mt_ld_i32(const void *p) { return *(const int32_t *)p; }
static inline int64_t mt_ld_i64(const void *p) { return *(const int64_t *)p; }
static inline uint8_t mt_ld_u8(const void *p) { return *(const uint8_t *)p; }
static inline uint16_t mt_ld_u16(const void *p) { return *(const uint16_t *)p; }
static inline uint8_t mt_ld_b8(const void *p) { return *(const uint8_t *)p != 0; }

/* Stores take any arithmetic value; bool stores test for non-zero; float to
 * integer conversion saturates NaN/inf to 0/limits instead of being UB. */
#define MT_ST_f32(p, v) (*(float *)(p) = (float)(v))
#define MT_ST_f64(p, v) (*(double *)(p) = (double)(v))
#define MT_ST_f16(p, v) (*(uint16_t *)(p) = mt_float_to_half((float)(v)))
#define MT_ST_bf16(p, v) (*(uint16_t *)(p) = mt_float_to_bf16((float)(v)))
#define MT_ST_i8(p, v) (*(int8_t *)(p) = (int8_t)mt_to_i64(v))
#define MT_ST_i16(p, v) (*(int16_t *)(p) = (int16_t)mt_to_i64(v))
#define MT_ST_i32(p, v) (*(int32_t *)(p) = (int32_t)mt_to_i64(v))
#define MT_ST_i64(p, v) (*(int64_t *)(p) = mt_to_i64(v))
#define MT_ST_u8(p, v) (*(uint8_t *)(p) = (uint8_t)mt_to_i64(v))
#define MT_ST_u16(p, v) (*(uint16_t *)(p) = (uint16_t)mt_to_i64(v))
#define MT_ST_b8(p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))

/* Float to int64 without undefined behaviour (NaN -> 0, out of range clamps);
 * integers pass through unchanged. */
static inline int64_t mt_f2i(double d) {
  if (d != d) return 0;
  if (d >= 9.2233720368547758e18) return INT64_MAX;
  if (d <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)d;
}
#define mt_to_i64(v)                                                                                                   \
  _Generic((v), float: mt_f2i((double)(v)), double: mt_f2i((double)(v)), default: (int64_t)(v))

#endif
