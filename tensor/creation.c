/* creation.c -- arange, linspace, logspace and eye, with values equal to
 * PyTorch's CPU kernels bit for bit. Those kernels fill contiguous output
 * two vectors of V = 32 / elsize lanes at a time, each vector as base + k*step
 * from the scalar formula at its first lane, then the tail (n mod 2V) with the
 * scalar formula; we reproduce that per element, so any thread split works. */
#include <math.h>

#include "cpu/dtypes.h"
#include "creation.h"
#include "cuda/mt_cuda.h"

/* a * b rounded on its own: the empty asm stops the compiler from fusing the
 * product with a following add into an FMA, which rounds once and would
 * differ from PyTorch's (unfused) reference kernels. */
static inline double mul_d(double a, double b) {
  double p = a * b;
  __asm__("" : "+x"(p));
  return p;
}
static inline float mul_f(float a, float b) {
  float p = a * b;
  __asm__("" : "+x"(p));
  return p;
}
#define MUL(a, b) _Generic((a) * (b), float : mul_f, default : mul_d)(a, b)

/* rounding to the storage type after each operation (halfs compute in float) */
#define R_f32(x) (x)
#define R_f64(x) (x)
#define R_f16(x) mt_half_to_float(mt_float_to_half(x))
#define R_bf16(x) mt_bf16_to_float(mt_float_to_bf16(x))
/* arange accumulates in double for float32/64, in float for the halfs */
#define ACC_f32 double
#define ACC_f64 double
#define ACC_f16 float
#define ACC_bf16 float

typedef struct fill_ctx {
  char *out;
  int64_t n, half;   /* elements; linspace switches formula at half = n / 2 */
  int64_t lanes, nv; /* PyTorch's vector width; end of its vector region */
  double start, end, step, base;
  int64_t istart, iend, istep;
} fill_ctx;

/* ---- arange ---- */

#define ARANGE_F(DE, tag, T, C)                                                                                        \
  static void arange_##tag(void *p, int64_t b, int64_t e) {                                                            \
    const fill_ctx *c = p;                                                                                             \
    const ACC_##tag start = (ACC_##tag)c->start, step = (ACC_##tag)c->step;                                            \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      ACC_##tag v;                                                                                                     \
      if (i < c->nv) {                                                                                                 \
        int64_t g = i - i % c->lanes;                                                                                  \
        T base;                                                                                                        \
        MT_ST_##tag(&base, start + MUL(step, (ACC_##tag)g));                                                           \
        v = (ACC_##tag)mt_ld_##tag(&base) + MUL((ACC_##tag)(i - g), step);                                             \
      } else {                                                                                                         \
        v = start + MUL(step, (ACC_##tag)i);                                                                           \
      }                                                                                                                \
      MT_ST_##tag((T *)c->out + i, v);                                                                                 \
    }                                                                                                                  \
  }
/* integers are exact (modulo the width, as in PyTorch) */
#define ARANGE_I(DE, tag, T, C)                                                                                        \
  static void arange_##tag(void *p, int64_t b, int64_t e) {                                                            \
    const fill_ctx *c = p;                                                                                             \
    for (int64_t i = b; i < e; i++) ((T *)c->out)[i] = (T)((uint64_t)c->istart + (uint64_t)c->istep * (uint64_t)i);    \
  }
MT_DTYPES_FLOAT(ARANGE_F)
MT_DTYPES_INT(ARANGE_I)

/* ---- linspace ---- */

/* floats: PyTorch computes in the storage type */
#define LINSPACE_F(DE, tag, T, C)                                                                                      \
  static inline C lin_##tag(const fill_ctx *c, C st, C en, C step, int64_t i) {                                        \
    if (i < c->half) return R_##tag(st + R_##tag(MUL(step, R_##tag((C)i))));                                           \
    return R_##tag(en - R_##tag(MUL(step, R_##tag((C)(c->n - i - 1)))));                                               \
  }                                                                                                                    \
  static void linspace_##tag(void *p, int64_t b, int64_t e) {                                                          \
    const fill_ctx *c = p;                                                                                             \
    const C st = R_##tag((C)c->start), en = R_##tag((C)c->end);                                                        \
    const C step = R_##tag(R_##tag(en - st) / R_##tag((C)(c->n - 1)));                                                 \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      C v;                                                                                                             \
      if (i < c->nv) {                                                                                                 \
        int64_t g = i - i % c->lanes;                                                                                  \
        v = R_##tag(lin_##tag(c, st, en, step, g) + R_##tag(MUL(R_##tag((C)(i - g)), step)));                          \
      } else {                                                                                                         \
        v = lin_##tag(c, st, en, step, i);                                                                             \
      }                                                                                                                \
      MT_ST_##tag((T *)c->out + i, v);                                                                                 \
    }                                                                                                                  \
  }

/* integers: a double step; values truncate toward zero */
static inline double lin_int(const fill_ctx *c, double st, double en, double step, int64_t i) {
  return i < c->half ? st + MUL(step, (double)i) : en - MUL(step, (double)(c->n - i - 1));
}
#define LINSPACE_I(DE, tag, T, C)                                                                                      \
  static void linspace_##tag(void *p, int64_t b, int64_t e) {                                                          \
    const fill_ctx *c = p;                                                                                             \
    const T st = (T)c->istart, en = (T)c->iend;                                                                        \
    const double step = ((double)en - (double)st) / (double)(c->n - 1);                                                \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      double v;                                                                                                        \
      if (i < c->nv) {                                                                                                 \
        int64_t g = i - i % c->lanes;                                                                                  \
        T base = (T)mt_f2i(lin_int(c, st, en, step, g));                                                               \
        v = (double)base + MUL((double)(i - g), step);                                                                 \
      } else {                                                                                                         \
        v = lin_int(c, st, en, step, i);                                                                               \
      }                                                                                                                \
      MT_ST_##tag((T *)c->out + i, v);                                                                                 \
    }                                                                                                                  \
  }
MT_DTYPES_FLOAT(LINSPACE_F)
MT_DTYPES_INT(LINSPACE_I)

/* ---- logspace: base ^ x with x from the two-sided formula in double ---- */

#define LOGSPACE_F(DE, tag, T, C)                                                                                      \
  static void logspace_##tag(void *p, int64_t b, int64_t e) {                                                          \
    const fill_ctx *c = p;                                                                                             \
    const C st = R_##tag((C)c->start), en = R_##tag((C)c->end);                                                        \
    const double step = (double)R_##tag(en - st) / (double)(c->n - 1);                                                 \
    for (int64_t i = b; i < e; i++)                                                                                    \
      MT_ST_##tag((T *)c->out + i, pow(c->base, lin_int(c, (double)st, (double)en, step, i)));                         \
  }
#define LOGSPACE_I(DE, tag, T, C)                                                                                      \
  static void logspace_##tag(void *p, int64_t b, int64_t e) {                                                          \
    const fill_ctx *c = p;                                                                                             \
    const T st = (T)c->istart, en = (T)c->iend;                                                                        \
    const double step = (double)((int64_t)en - (int64_t)st) / (double)(c->n - 1);                                      \
    for (int64_t i = b; i < e; i++)                                                                                    \
      MT_ST_##tag((T *)c->out + i, pow(c->base, lin_int(c, (double)st, (double)en, step, i)));                         \
  }
MT_DTYPES_FLOAT(LOGSPACE_F)
MT_DTYPES_INT(LOGSPACE_I)

/* kernel tables by dtype (bool has none) */
#define ARANGE_ENTRY(DE, tag, T, C) [DE] = arange_##tag,
#define LINSPACE_ENTRY(DE, tag, T, C) [DE] = linspace_##tag,
#define LOGSPACE_ENTRY(DE, tag, T, C) [DE] = logspace_##tag,
static const mt_range_fn arange_fns[MT_NDTYPE] = {MT_DTYPES_FLOAT(ARANGE_ENTRY) MT_DTYPES_INT(ARANGE_ENTRY)};
static const mt_range_fn linspace_fns[MT_NDTYPE] = {MT_DTYPES_FLOAT(LINSPACE_ENTRY) MT_DTYPES_INT(LINSPACE_ENTRY)};
static const mt_range_fn logspace_fns[MT_NDTYPE] = {MT_DTYPES_FLOAT(LOGSPACE_ENTRY) MT_DTYPES_INT(LOGSPACE_ENTRY)};

/* ---- entry points ---- */

/* Allocates the 1-D result, runs fn over it (lanes and the vector region
 * set from dt) and delivers it. */
static mt_status fill_1d(const char *op, mt_range_fn fn, fill_ctx *c, mt_dtype dt, mt_device dev, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_empty(&c->n, 1, dt, mt_cpu(), &r); /* made on the host; copied to a CUDA dev below */
  if (st) return st;
  c->out = mt_data(r);
  c->half = c->n / 2;
  c->lanes = 32 / (int64_t)mt_dtype_size(dt);
  c->nv = c->n / (2 * c->lanes) * (2 * c->lanes);
  if ((st = mt_parallel_for(c->n, 1 << 15, fn, c))) {
    mt_release(r);
    return st;
  }
  if (dev.type == MT_CUDA) {
    mt_tensor *h = r;
    r = NULL;
    st = mt_cuda_to_device(h, dev, false, &r);
    mt_release(h);
    if (st) return st;
  }
  return mt_deliver(op, r, out);
}

/* Scalar::to<int64_t>: floats truncate toward zero */
static int64_t to_i64(mt_scalar s) { return s.kind == MT_SK_FLOAT ? mt_f2i(s.v.f) : s.v.i; }

mt_status mt_arange(mt_scalar start, mt_scalar end, mt_scalar step, mt_dtype dt, mt_device dev, mt_tensor **out) {
  if (dt == MT_BOOL) return mt_fail(MT_EDTYPE, "arange: dtype bool is not supported");
  double s = mt_scalar_f(start), e = mt_scalar_f(end), d = mt_scalar_f(step), size;
  fill_ctx c = {.start = s, .step = d};
  bool up, down;
  if (mt_is_floating(dt)) {
    if (!isfinite(s) || !isfinite(e))
      return mt_fail(MT_EARG, "arange: start and end must be finite, got %g and %g", s, e);
    up = d > 0 && e >= s, down = d < 0 && e <= s;
    size = ceil((e - s) / d);
  } else {
    c.istart = to_i64(start), c.istep = to_i64(step);
    int64_t ie = to_i64(end), diff;
    up = c.istep > 0 && ie >= c.istart, down = c.istep < 0 && ie <= c.istart;
    if (dt != MT_INT64)
      size = ceil((e - s) / d);
    else if (__builtin_sub_overflow(ie, c.istart, &diff))
      return mt_fail(MT_EARG, "arange: the range %lld to %lld is too large", (long long)c.istart, (long long)ie);
    else
      size = ceil((double)diff / (double)c.istep);
    d = (double)c.istep;
  }
  if (d == 0)
    return mt_fail(MT_EARG, "arange: step must be nonzero (got %g for dtype %s)", mt_scalar_f(step), mt_dtype_name(dt));
  if (!up && !down)
    return mt_fail(MT_EARG, "arange: step %g moves away from end (start %g, end %g)", mt_scalar_f(step), s, e);
  if (!(size >= 0 && size < 9.2e18)) return mt_fail(MT_EARG, "arange: size %g is too large", size);
  c.n = (int64_t)size;
  return fill_1d("arange", arange_fns[dt], &c, dt, dev, out);
}

/* Shared checks of linspace and logspace; integer dtypes need start and end
 * to fit (PyTorch's Scalar conversion). */
static mt_status space_args(const char *op, mt_scalar start, mt_scalar end, int64_t steps, mt_dtype dt, fill_ctx *c) {
  if (dt == MT_BOOL) return mt_fail(MT_EDTYPE, "%s: dtype bool is not supported", op);
  if (steps < 0) return mt_fail(MT_EARG, "%s: number of steps must be non-negative, got %lld", op, (long long)steps);
  c->n = steps;
  c->start = mt_scalar_f(start), c->end = mt_scalar_f(end);
  c->istart = to_i64(start), c->iend = to_i64(end);
  if (!mt_is_floating(dt)) {
    static const int64_t lim[MT_NDTYPE][2] = {[MT_INT8] = {INT8_MIN, INT8_MAX},
                                              [MT_INT16] = {INT16_MIN, INT16_MAX},
                                              [MT_INT32] = {INT32_MIN, INT32_MAX},
                                              [MT_INT64] = {INT64_MIN, INT64_MAX},
                                              [MT_UINT8] = {0, UINT8_MAX},
                                              [MT_UINT16] = {0, UINT16_MAX}};
    for (int k = 0; k < 2; k++) {
      int64_t v = k ? c->iend : c->istart;
      if (v < lim[dt][0] || v > lim[dt][1])
        return mt_fail(MT_EARG, "%s: %s %lld does not fit in %s", op, k ? "end" : "start", (long long)v,
                       mt_dtype_name(dt));
    }
  }
  return MT_OK;
}

mt_status mt_linspace(mt_scalar start, mt_scalar end, int64_t steps, mt_dtype dt, mt_device dev, mt_tensor **out) {
  fill_ctx c = {0};
  mt_status st = space_args("linspace", start, end, steps, dt, &c);
  if (st) return st;
  if (steps == 1) {
    mt_tensor *r = NULL;
    if ((st = mt_full(&steps, 1, start, dt, dev, &r))) return st;
    return mt_deliver("linspace", r, out);
  }
  return fill_1d("linspace", linspace_fns[dt], &c, dt, dev, out);
}

mt_status mt_logspace(mt_scalar start, mt_scalar end, int64_t steps, double base, mt_dtype dt, mt_device dev,
                      mt_tensor **out) {
  fill_ctx c = {.base = base};
  mt_status st = space_args("logspace", start, end, steps, dt, &c);
  if (st) return st;
  if (steps == 1) {
    mt_tensor *r = NULL;
    if ((st = mt_full(&steps, 1, mt_sfloat(pow(base, c.start)), dt, dev, &r))) return st;
    return mt_deliver("logspace", r, out);
  }
  return fill_1d("logspace", logspace_fns[dt], &c, dt, dev, out);
}

mt_status mt_eye(int64_t n, int64_t m, mt_dtype dt, mt_device dev, mt_tensor **out) {
  if (n < 0 || m < 0)
    return mt_fail(MT_EARG, "eye: sizes must be non-negative, got n=%lld, m=%lld", (long long)n, (long long)m);
  int64_t shape[2] = {n, m};
  mt_tensor *r = NULL, *d = NULL;
  mt_status st = mt_zeros(shape, 2, dt, dev, &r);
  if (!st) st = mt_diagonal(r, 0, 0, 1, &d);
  if (!st) st = mt_fill_(d, mt_sint(1));
  mt_release(d);
  if (st) {
    mt_release(r);
    return st;
  }
  r->storage->version = 0;
  return mt_deliver("eye", r, out);
}
