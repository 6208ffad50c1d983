/* offsets.c (cuda) -- the CUDA side of tensor/index.c's offset machinery
 * (index values to element offsets, gathers and scatters at offsets) and
 * of the three-operand select behind where and masked_fill (offsets.cu).
 * Operands are laid out on one shape by their strides (0 where they
 * broadcast); size-1 dims are dropped. Elements that are only moved use a
 * kernel per element size, not per dtype. */
#include <stdio.h>
#include <string.h>

#include "cuda_index.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_offsets_cu[];

/* Matches struct mt_ageo in offsets.cu. */
typedef struct ageo {
  int32_t nd, pad;
  int64_t n;
  int64_t size[MT_MAXDIM];
  int64_t st[4][MT_MAXDIM];
} ageo;

/* Matches struct mt_oparams in offsets.cu. */
typedef struct oparams {
  int64_t size, stride;
  int32_t neg, fnd;
  int64_t fshape[MT_MAXDIM], fst[MT_MAXDIM];
} oparams;

/* g for `shape` and up to four operands (NULL: a value, strides 0), each
 * broadcast to shape by its trailing dims. */
static void make_geo(const int64_t *shape, int nd, const mt_tensor *const *ops, int nops, ageo *g) {
  memset(g, 0, sizeof *g);
  g->n = mt_checked_numel(shape, nd);
  for (int d = 0; d < nd; d++) {
    if (shape[d] == 1) continue;
    g->size[g->nd] = shape[d];
    for (int k = 0; k < nops; k++) {
      const mt_tensor *t = ops[k];
      int td = t ? d - (nd - t->ndim) : -1;
      g->st[k][g->nd] = (t && td >= 0 && t->shape[td] != 1) ? t->strides[td] : 0;
    }
    g->nd++;
  }
}

/* An unsigned type of the element size (elements only moved). */
static const char *move_type(size_t elsize) {
  return elsize == 1   ? "unsigned char"
         : elsize == 2 ? "unsigned short"
         : elsize == 4 ? "unsigned int"
                       : "unsigned long long";
}

static mt_status member(int dev, const char *tx, int accumulate, const char *add, const char *name, void **fn) {
  char defs[384];
  snprintf(defs, sizeof defs, "#define TX %s\n#define ACCUMULATE %d\n#define ADD(p, v) %s\n", tx, accumulate, add);
  return mt_cuda_family(dev, defs, mt_cuda_offsets_cu, name, fn);
}

static dptr ptr(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }

static mt_status launch(int dev, void *fn, int64_t n, void **args, const char *op) {
  return mt_cuda_launch_grid(dev, fn, (n + 255) / 256, 256, args, op);
}

mt_status mt_cuda_offsets(const char *op, mt_tensor *off, const mt_tensor *idx, const mt_offset_ctx *c, bool *bad) {
  int dev = mt_tdevice(off).index;
  *bad = false;
  if (mt_numel(off) == 0) return MT_OK;
  if (c->flat_ndim > MT_MAXDIM) return mt_fail(MT_ESHAPE, "%s: too many dimensions", op);
  ageo g;
  const mt_tensor *ops[1] = {idx};
  make_geo(off->shape, off->ndim, ops, 1, &g);
  oparams p;
  memset(&p, 0, sizeof p);
  p.size = c->size, p.stride = c->stride, p.neg = c->neg, p.fnd = c->flat_ndim;
  for (int k = 0; k < c->flat_ndim; k++) p.fshape[k] = c->flat_shape[k], p.fst[k] = c->flat_strides[k];
  int64_t one = 1;
  mt_tensor *flag = NULL;
  void *fn = NULL;
  mt_status st = mt_zeros(&one, 1, MT_INT32, mt_tdevice(off), &flag);
  if (!st) st = member(dev, "char", 0, "", "mt_offsets", &fn);
  if (!st) {
    dptr po = ptr(off), pi = ptr(idx), pf = ptr(flag);
    void *args[] = {&po, &pi, &pf, &g, &p};
    mt_bump_version(off);
    st = launch(dev, fn, g.n, args, op);
  }
  mt_scalar v;
  if (!st) st = mt_item(flag, &v);
  if (!st) *bad = mt_scalar_i(v) != 0;
  mt_release(flag);
  return st;
}

mt_status mt_cuda_gather_off(const char *op, mt_tensor *res, const mt_tensor *src_r, const mt_tensor *off_r) {
  int dev = mt_tdevice(res).index;
  if (mt_numel(res) == 0) return MT_OK;
  ageo g;
  const mt_tensor *ops[2] = {src_r, off_r};
  make_geo(res->shape, res->ndim, ops, 2, &g);
  void *fn = NULL;
  mt_status st = member(dev, move_type(mt_elsize(res)), 0, "", "mt_gather_off", &fn);
  if (st) return st;
  dptr pr = ptr(res), ps = ptr(src_r), po = ptr(off_r);
  void *args[] = {&pr, &ps, &po, &g};
  mt_bump_version(res);
  return launch(dev, fn, g.n, args, op);
}

/* The atomic p += v (mul: p *= v) for dtype dt, v of TX. */
static const char *rmw_expr(mt_dtype dt, bool mul) {
  switch (dt) {
  case MT_FLOAT32:
    return mul ? "mul_wide<float, unsigned>(p, v)" : "atomicAdd(p, v)";
  case MT_FLOAT64:
    return mul ? "mul_wide<double, unsigned long long>(p, v)" : "atomicAdd(p, v)";
  case MT_INT32:
    return mul ? "mul_wide<int, unsigned>(p, v)" : "atomicAdd(p, v)";
  case MT_INT64:
    return mul ? "mul_wide<long long, unsigned long long>(p, v)"
               : "atomicAdd((unsigned long long *)(p), (unsigned long long)(v))";
  case MT_FLOAT16:
    return mul ? "rmw_narrow(p, h2f(v), 1, true)" : "rmw_narrow(p, h2f(v), 1, false)";
  case MT_BFLOAT16:
    return mul ? "rmw_narrow(p, b2f(v), 2, true)" : "rmw_narrow(p, b2f(v), 2, false)";
  case MT_BOOL:
    return mul ? "rmw_narrow(p, (double)(v), 3, true)" : "rmw_narrow(p, (double)(v), 3, false)";
  default:
    return mul ? "rmw_narrow(p, (double)(v), 0, true)" : "rmw_narrow(p, (double)(v), 0, false)";
  }
}

/* For a plain scatter: an int32 tensor of -1s, one per element of the
 * destinations' extent [lo, hi], claimed by mt_scatter_claim (NULL when
 * there are too many positions for int32 numbers: any write may win). */
static mt_status claims(int dev, const mt_tensor *dst_r, const mt_tensor *off_r, const ageo *g, int64_t lo, int64_t hi,
                        const char *op, mt_tensor **win) {
  *win = NULL;
  if (g->n >= INT32_MAX) return MT_OK;
  int64_t span = hi - lo + 1;
  void *fn = NULL;
  mt_status st = mt_full(&span, 1, mt_sint(-1), MT_INT32, mt_tdevice(dst_r), win);
  if (!st) st = member(dev, "char", 0, "", "mt_scatter_claim", &fn);
  if (!st) {
    dptr po = ptr(off_r), pw = ptr(*win);
    long long base = lo;
    void *args[] = {&po, &pw, &base, (void *)g};
    st = launch(dev, fn, g->n, args, op);
  }
  if (st) {
    mt_release(*win);
    *win = NULL;
  }
  return st;
}

mt_status mt_cuda_scatter_off(const char *op, mt_tensor *dst_r, const mt_tensor *src, const mt_tensor *off_r, int mode,
                              int64_t lo, int64_t hi) {
  int dev = mt_tdevice(dst_r).index;
  if (mt_numel(dst_r) == 0) return MT_OK;
  mt_dtype dt = (mt_dtype)dst_r->dtype;
  ageo g;
  const mt_tensor *ops[3] = {dst_r, src, off_r};
  make_geo(dst_r->shape, dst_r->ndim, ops, 3, &g);
  void *fn = NULL;
  mt_tensor *win = NULL;
  mt_status st = mode ? member(dev, mt_cuda_dt(dt)->store, 1, rmw_expr(dt, mode == 2), "mt_scatter_off", &fn)
                      : member(dev, move_type(mt_elsize(dst_r)), 0, "", "mt_scatter_off", &fn);
  if (!st && mode == 0) st = claims(dev, dst_r, off_r, &g, lo, hi, op, &win);
  if (!st) {
    dptr pd = ptr(dst_r), ps = ptr(src), po = ptr(off_r), pw = ptr(win);
    long long base = lo;
    void *args[] = {&pd, &ps, &po, &pw, &base, &g};
    mt_bump_version(dst_r);
    st = launch(dev, fn, g.n, args, op);
  }
  mt_release(win);
  return st;
}

/* A 0-dim host tensor's bytes in the low end of a word (a by-value operand). */
static unsigned long long value_bits(const mt_tensor *t) {
  unsigned long long v = 0;
  memcpy(&v, mt_data(t), mt_elsize(t));
  return v;
}

static bool on_host(const mt_tensor *t) { return mt_tdevice(t).type != MT_CUDA; }

mt_status mt_cuda_select3(const char *op, mt_tensor *out, const mt_tensor *cond, const mt_tensor *a,
                          const mt_tensor *b) {
  int dev = mt_tdevice(out).index;
  if (mt_numel(out) == 0) return MT_OK;
  ageo g;
  const mt_tensor *ops[4] = {out, cond, on_host(a) ? NULL : a, on_host(b) ? NULL : b};
  make_geo(out->shape, out->ndim, ops, 4, &g);
  void *fn = NULL;
  mt_status st = member(dev, move_type(mt_elsize(out)), 0, "", "mt_select3", &fn);
  if (st) return st;
  dptr po = ptr(out), pc = ptr(cond), pa = ptr(ops[2]), pb = ptr(ops[3]);
  unsigned long long va = ops[2] ? 0 : value_bits(a), vb = ops[3] ? 0 : value_bits(b);
  void *args[] = {&po, &pc, &pa, &pb, &va, &vb, &g};
  mt_bump_version(out);
  return launch(dev, fn, g.n, args, op);
}

mt_status mt_cuda_tri(mt_tensor *out, const mt_tensor *in, int64_t k, bool upper) {
  int dev = mt_tdevice(out).index;
  if (mt_numel(out) == 0) return MT_OK;
  ageo g;
  const mt_tensor *ops[2] = {out, in};
  make_geo(out->shape, out->ndim, ops, 2, &g);
  void *fn = NULL;
  mt_status st = member(dev, move_type(mt_elsize(out)), 0, "", "mt_tri", &fn);
  if (st) return st;
  dptr po = ptr(out), pi = ptr(in);
  long long rows = out->shape[out->ndim - 2], cols = out->shape[out->ndim - 1], kk = k;
  int up = upper;
  void *args[] = {&po, &pi, &rows, &cols, &kk, &up, &g};
  mt_bump_version(out);
  return launch(dev, fn, g.n, args, upper ? "triu" : "tril");
}
