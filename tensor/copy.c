/* copy.c -- copying between tensors of any dtypes and layouts (with
 * broadcasting of the source), fills, contiguous copies and dtype
 * conversion. One generated kernel per (dst, src) dtype pair. */
#include <string.h>

#include "cplx.h"
#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "iter.h"

/* dense runs take a loop of constant strides that the compiler vectorizes
 * (omp simd: this file is built at -O2, whose cost model would not) */
#define CAST_KERNEL(SE, stag, ST, SC, DE, dtag, DT, DC)                                                                \
  static void cast_##dtag##_##stag(char **d, const int64_t *s, int64_t n, void *ctx) {                                \
    char *o = d[0];                                                                                                    \
    const char *x = d[1];                                                                                              \
    if (s[0] == (int64_t)sizeof(DT) && s[1] == (int64_t)sizeof(ST)) {                                                  \
      DT *od = (DT *)(void *)o;                                                                                        \
      const ST *xs = (const ST *)(const void *)x;                                                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++) MT_ST_##dtag(od + i, mt_ld_##stag(xs + i));                  \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) MT_ST_##dtag(o + i * s[0], mt_ld_##stag(x + i * s[1]));                            \
  }
/* every (dst, src) pair: DEF_CASTS_FOR expands one row of the table */
#define DEF_CASTS_FOR(DE, dtag, DT, DC)                                                                                \
  CAST_KERNEL(MT_FLOAT32, f32, float, float, DE, dtag, DT, DC)                                                         \
  CAST_KERNEL(MT_FLOAT64, f64, double, double, DE, dtag, DT, DC)                                                       \
  CAST_KERNEL(MT_FLOAT16, f16, uint16_t, float, DE, dtag, DT, DC)                                                      \
  CAST_KERNEL(MT_BFLOAT16, bf16, uint16_t, float, DE, dtag, DT, DC)                                                    \
  CAST_KERNEL(MT_INT8, i8, int8_t, int8_t, DE, dtag, DT, DC)                                                           \
  CAST_KERNEL(MT_INT16, i16, int16_t, int16_t, DE, dtag, DT, DC)                                                       \
  CAST_KERNEL(MT_INT32, i32, int32_t, int32_t, DE, dtag, DT, DC)                                                       \
  CAST_KERNEL(MT_INT64, i64, int64_t, int64_t, DE, dtag, DT, DC)                                                       \
  CAST_KERNEL(MT_UINT8, u8, uint8_t, uint8_t, DE, dtag, DT, DC)                                                        \
  CAST_KERNEL(MT_UINT16, u16, uint16_t, uint16_t, DE, dtag, DT, DC)                                                    \
  CAST_KERNEL(MT_BOOL, b8, uint8_t, uint8_t, DE, dtag, DT, DC)
MT_DTYPES_ALL(DEF_CASTS_FOR)

#define CAST_ENTRY(DE, dtag, DT, DC)                                                                                   \
  [DE] = {cast_##dtag##_f32, cast_##dtag##_f64, cast_##dtag##_f16, cast_##dtag##_bf16, cast_##dtag##_i8,              \
          cast_##dtag##_i16, cast_##dtag##_i32, cast_##dtag##_i64, cast_##dtag##_u8,  cast_##dtag##_b8,                \
          cast_##dtag##_u16},
/* cast_table[dst][src] */
static const mt_loop_fn cast_table[MT_NDTYPE][MT_NDTYPE] = {MT_DTYPES_ALL(CAST_ENTRY)};

/* Same-dtype copy: memcpy rows when both sides are dense, else strided. */
static void copy_same(char **d, const int64_t *s, int64_t n, void *ctx) {
  size_t es = *(const size_t *)ctx;
  if (s[0] == (int64_t)es && s[1] == (int64_t)es) {
    memcpy(d[0], d[1], (size_t)n * es);
    return;
  }
  switch (es) {
  case 1: for (int64_t i = 0; i < n; i++) d[0][i * s[0]] = d[1][i * s[1]]; break;
  case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(d[0] + i * s[0]) = *(uint16_t *)(d[1] + i * s[1]); break;
  case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(d[0] + i * s[0]) = *(uint32_t *)(d[1] + i * s[1]); break;
  case 8: for (int64_t i = 0; i < n; i++) *(uint64_t *)(d[0] + i * s[0]) = *(uint64_t *)(d[1] + i * s[1]); break;
  default: for (int64_t i = 0; i < n; i++) memcpy(d[0] + i * s[0], d[1] + i * s[1], es); break;
  }
}

/* Whether a copy goes by parts (complex.c): casts to or from complex, and
 * complex copies on a device (whose kernels know the real dtypes). */
static bool by_parts(const mt_tensor *dst, const mt_tensor *src) {
  bool cd = mt_is_complex((mt_dtype)dst->dtype), cs = mt_is_complex((mt_dtype)src->dtype);
  if (!cd && !cs) return false;
  return dst->dtype != src->dtype || mt_tdevice(dst).type == MT_CUDA || mt_tdevice(src).type == MT_CUDA;
}

mt_status mt_copy_nb_(mt_tensor *dst, const mt_tensor *src, bool non_blocking) {
  if (by_parts(dst, src)) return mt_complex_copy_(dst, src, non_blocking);
  if (mt_tdevice(dst).type == MT_CUDA || mt_tdevice(src).type == MT_CUDA)
    return mt_cuda_copy_(dst, src, non_blocking);
  return mt_copy_(dst, src);
}

mt_status mt_copy_(mt_tensor *dst, const mt_tensor *src) {
  if (by_parts(dst, src)) return mt_complex_copy_(dst, src, false);
  if (mt_tdevice(dst).type == MT_CUDA || mt_tdevice(src).type == MT_CUDA) return mt_cuda_copy_(dst, src, false);
  if (!mt_same_device(mt_tdevice(dst), mt_tdevice(src))) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "copy_: cannot copy from %s to %s in this build",
                   mt_device_str(mt_tdevice(src), a, sizeof a), mt_device_str(mt_tdevice(dst), b, sizeof b));
  }
  mt_tensor *ops[2] = {dst, (mt_tensor *)src};
  mt_iter it;
  mt_status st = mt_iter_init(&it, ops, 2, "copy_");
  if (st) return st;
  mt_bump_version(dst);
  if (dst->dtype == src->dtype) {
    size_t es = mt_elsize(dst);
    return mt_iter_run(&it, copy_same, &es, 1 << 16);
  }
  return mt_iter_run(&it, cast_table[dst->dtype][src->dtype], NULL, 1 << 15);
}

#define FILL_CASE(DE, tag, T, C)                                                                                       \
  case DE: {                                                                                                           \
    char v[8];                                                                                                         \
    if (s.kind == MT_SK_FLOAT)                                                                                         \
      MT_ST_##tag(v, s.v.f);                                                                                           \
    else                                                                                                               \
      MT_ST_##tag(v, s.v.i);                                                                                           \
    memcpy(pat, v, sizeof(T));                                                                                         \
    break;                                                                                                             \
  }

/* fill: makes a one-element source of the right bytes and broadcasts it */
mt_status mt_fill_(mt_tensor *dst, mt_scalar s) {
  if (mt_is_complex((mt_dtype)dst->dtype)) return mt_complex_fill_(dst, mt_scalar_f(s), 0);
  if (mt_tdevice(dst).type == MT_CUDA) return mt_cuda_fill_(dst, s);
  char pat[8];
  switch ((mt_dtype)dst->dtype) {
    MT_DTYPES_ALL(FILL_CASE)
  default: return mt_fail(MT_EDTYPE, "fill_: bad dtype");
  }
  mt_bump_version(dst);
  size_t es = mt_elsize(dst);
  if (mt_is_contiguous(dst)) {
    char *p = mt_data(dst);
    int64_t n = mt_numel(dst);
    bool zero = true;
    for (size_t i = 0; i < es; i++) zero = zero && pat[i] == 0;
    if (zero) {
      memset(p, 0, (size_t)n * es);
      return MT_OK;
    }
    switch (es) {
    case 1: memset(p, pat[0], (size_t)n); break;
    case 2: { uint16_t v; memcpy(&v, pat, 2); for (int64_t i = 0; i < n; i++) ((uint16_t *)p)[i] = v; } break;
    case 4: { uint32_t v; memcpy(&v, pat, 4); for (int64_t i = 0; i < n; i++) ((uint32_t *)p)[i] = v; } break;
    default: { uint64_t v; memcpy(&v, pat, 8); for (int64_t i = 0; i < n; i++) ((uint64_t *)p)[i] = v; } break;
    }
    return MT_OK;
  }
  mt_storage fake = {.data = pat, .nbytes = es, .refs = 1, .device = {MT_CPU, 0}, .borrowed = 1};
  mt_tensor one = {.storage = &fake, .refs = 1, .ndim = 0, .dtype = dst->dtype};
  mt_tensor *ops[2] = {dst, &one};
  mt_iter it;
  mt_status st = mt_iter_init(&it, ops, 2, "fill_");
  if (st) return st;
  return mt_iter_run(&it, copy_same, &es, 1 << 16);
}

mt_status mt_clone(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *o = NULL;
  mt_status st = mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), &o);
  if (st) return st;
  if ((st = mt_copy_(o, t))) {
    mt_release(o);
    return st;
  }
  o->storage->version = 0;
  *out = o;
  return MT_OK;
}

mt_status mt_contiguous(const mt_tensor *t, mt_tensor **out) {
  if (mt_is_contiguous(t)) {
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  return mt_clone(t, out);
}

mt_status mt_to_dtype(const mt_tensor *t, mt_dtype dt, bool copy, mt_tensor **out) {
  if ((mt_dtype)t->dtype == dt && !copy) {
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  mt_tensor *o = NULL;
  mt_status st = mt_empty(t->shape, t->ndim, dt, mt_tdevice(t), &o);
  if (st) return st;
  if ((st = mt_copy_(o, t))) {
    mt_release(o);
    return st;
  }
  o->storage->version = 0;
  o->flags = t->flags;
  *out = o;
  return MT_OK;
}

mt_status mt_deliver(const char *op, mt_tensor *r, mt_tensor **out) {
  if (!*out) {
    *out = r;
    return MT_OK;
  }
  mt_tensor *o = *out;
  bool same = o->ndim == r->ndim;
  for (int i = 0; same && i < r->ndim; i++) same = o->shape[i] == r->shape[i];
  mt_status st = MT_OK;
  if (!same) {
    char a[128], b[128];
    st = mt_fail(MT_ESHAPE, "%s: out= has shape %s but the result has shape %s", op,
                 mt_shape_str(o->shape, o->ndim, a, sizeof a), mt_shape_str(r->shape, r->ndim, b, sizeof b));
  } else {
    st = mt_copy_(o, r);
  }
  mt_release(r);
  return st;
}
