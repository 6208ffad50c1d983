/* dtype.c -- dtype facts: sizes, names, categories, PyTorch's promotion
 * lattice, the default dtype, and half/bfloat16 conversions. */
#include <string.h>

#include "mt.h"

static const char *const names[MT_NDTYPE] = {
    [MT_FLOAT32] = "float32", [MT_FLOAT64] = "float64", [MT_FLOAT16] = "float16", [MT_BFLOAT16] = "bfloat16",
    [MT_INT8] = "int8",       [MT_INT16] = "int16",     [MT_INT32] = "int32",     [MT_INT64] = "int64",
    [MT_UINT8] = "uint8",     [MT_BOOL] = "bool",       [MT_UINT16] = "uint16",   [MT_COMPLEX64] = "complex64",
    [MT_COMPLEX128] = "complex128",
};

const uint8_t mt_dtype_sizes[MT_NDTYPE] = {
    [MT_FLOAT32] = 4, [MT_FLOAT64] = 8, [MT_FLOAT16] = 2, [MT_BFLOAT16] = 2, [MT_INT8] = 1,
    [MT_INT16] = 2,   [MT_INT32] = 4,   [MT_INT64] = 8,   [MT_UINT8] = 1,    [MT_BOOL] = 1,     [MT_UINT16] = 2,
    [MT_COMPLEX64] = 8, [MT_COMPLEX128] = 16,
};
const uint8_t mt_dtype_categories[MT_NDTYPE] = {
    [MT_FLOAT32] = 2, [MT_FLOAT64] = 2, [MT_FLOAT16] = 2, [MT_BFLOAT16] = 2, [MT_INT8] = 1,
    [MT_INT16] = 1,   [MT_INT32] = 1,   [MT_INT64] = 1,   [MT_UINT8] = 1,    [MT_BOOL] = 0,     [MT_UINT16] = 1,
    [MT_COMPLEX64] = 3, [MT_COMPLEX128] = 3,
};
bool mt_complex_seen;
const char *mt_dtype_name(mt_dtype d) { return (unsigned)d < MT_NDTYPE ? names[d] : "?"; }
bool mt_is_integral(mt_dtype d) { return mt_dtype_categories[d] == 1; }
int mt_dtype_category(mt_dtype d) { return mt_dtype_categories[d]; }

int mt_dtype_from_name(const char *name) {
  for (int i = 0; i < MT_NDTYPE; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

/* PyTorch's promote_types table, restricted to our dtypes. Order of rows and
 * columns: f32 f64 f16 bf16 i8 i16 i32 i64 u8 bool u16 c64 c128 (enum order).
 * Complex is above floating: complex with a real dtype gives the complex
 * dtype whose parts hold the real one (complex64 + float64 -> complex128).
 * uint16: PyTorch 2.x (c10 promoteTypes) promotes it only with a floating
 * dtype (-> that float) and raises for any other pair; we complete the row
 * with NumPy's rules instead (the smallest type holding both ranges:
 * u16+u8/bool -> u16, u16+i8/i16 -> i32, u16+i32 -> i32, u16+i64 -> i64). */
#define F4 MT_FLOAT32
#define F8 MT_FLOAT64
#define F2 MT_FLOAT16
#define BF MT_BFLOAT16
#define I1 MT_INT8
#define I2 MT_INT16
#define I4 MT_INT32
#define I8 MT_INT64
#define U1 MT_UINT8
#define B1 MT_BOOL
#define U2 MT_UINT16
#define C8 MT_COMPLEX64
#define CG MT_COMPLEX128
static const int8_t promo[MT_NDTYPE][MT_NDTYPE] = {
    /*        f32 f64 f16 bf16 i8  i16 i32 i64 u8  bool u16 c64 c128 */
    /* f32 */ {F4, F8, F4, F4, F4, F4, F4, F4, F4, F4, F4, C8, CG},
    /* f64 */ {F8, F8, F8, F8, F8, F8, F8, F8, F8, F8, F8, CG, CG},
    /* f16 */ {F4, F8, F2, F4, F2, F2, F2, F2, F2, F2, F2, C8, CG},
    /* bf16*/ {F4, F8, F4, BF, BF, BF, BF, BF, BF, BF, BF, C8, CG},
    /* i8  */ {F4, F8, F2, BF, I1, I2, I4, I8, I2, I1, I4, C8, CG},
    /* i16 */ {F4, F8, F2, BF, I2, I2, I4, I8, I2, I2, I4, C8, CG},
    /* i32 */ {F4, F8, F2, BF, I4, I4, I4, I8, I4, I4, I4, C8, CG},
    /* i64 */ {F4, F8, F2, BF, I8, I8, I8, I8, I8, I8, I8, C8, CG},
    /* u8  */ {F4, F8, F2, BF, I2, I2, I4, I8, U1, U1, U2, C8, CG},
    /* bool*/ {F4, F8, F2, BF, I1, I2, I4, I8, U1, B1, U2, C8, CG},
    /* u16 */ {F4, F8, F2, BF, I4, I4, I4, I8, U2, U2, U2, C8, CG},
    /* c64 */ {C8, CG, C8, C8, C8, C8, C8, C8, C8, C8, C8, C8, CG},
    /* c128*/ {CG, CG, CG, CG, CG, CG, CG, CG, CG, CG, CG, CG, CG},
};

mt_dtype mt_promote_types(mt_dtype a, mt_dtype b) { return (mt_dtype)promo[a][b]; }

mt_dtype mt_complex_part(mt_dtype d) {
  return d == MT_COMPLEX64 ? MT_FLOAT32 : d == MT_COMPLEX128 ? MT_FLOAT64 : d;
}

mt_dtype mt_complex_of(mt_dtype d) { return (mt_dtype)promo[d][MT_COMPLEX64]; }

static mt_dtype default_dtype = MT_FLOAT32;
mt_dtype mt_default_dtype(void) { return default_dtype; }
mt_status mt_set_default_dtype(mt_dtype d) {
  if (!mt_is_floating(d))
    return mt_fail(MT_EDTYPE, "set_default_dtype: only floating dtypes can be the default, got %s",
                   mt_dtype_name(d));
  default_dtype = d;
  return MT_OK;
}

float mt_half_to_float(uint16_t h) {
  _Float16 x;
  memcpy(&x, &h, 2);
  return (float)x;
}

uint16_t mt_float_to_half(float f) {
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
}

float mt_bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Round to nearest even, keeping NaN a NaN. */
uint16_t mt_float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
