/* elementwise.c -- dispatch of elementwise ops: PyTorch type promotion,
 * dtype checks from the op registry flags, output allocation or `out=`
 * checks, then one iterator run of the CPU kernel found for (op, dtype).
 * Also the elementwise ops that take extra operands or parameters. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cplx.h"
#include "cpu/dtypes.h"
#include "cpu/kernels.h"
#include "cuda/cuda_index.h"
#include "cuda/mt_cuda.h"
#include "reduce.h"

#define UNDEF (-1)

/* PyTorch: a lower-priority group (0-dim tensors, then wrapped numbers) only
 * raises the result when it belongs to a higher category; a complex one
 * over a floating one keeps the floating one's width (complex64 for the
 * 16-bit floats, which have no complex dtype here). */
static int combine(int higher, int lower) {
  if (higher != UNDEF && mt_is_complex((mt_dtype)higher)) return higher;
  if (lower != UNDEF && mt_is_complex((mt_dtype)lower)) {
    if (higher != UNDEF && mt_is_floating((mt_dtype)higher)) return (int)mt_complex_of((mt_dtype)higher);
    return lower;
  }
  if (higher != UNDEF && mt_is_floating((mt_dtype)higher)) return higher;
  if (lower == UNDEF) return higher;
  if (higher == MT_BOOL || mt_is_floating((mt_dtype)lower))
    return higher == UNDEF ? lower : (int)mt_promote_types((mt_dtype)higher, (mt_dtype)lower);
  return higher != UNDEF ? higher : lower;
}

static void add_to_state(const mt_tensor *t, int *dim, int *zero, int *wrapped) {
  int *slot = (t->flags & MT_TF_WRAPPED) ? wrapped : (t->ndim == 0 ? zero : dim);
  mt_dtype d = (mt_dtype)t->dtype;
  if ((t->flags & MT_TF_WRAPPED) && mt_is_floating(d)) d = mt_default_dtype();
  *slot = *slot == UNDEF ? (int)d : (int)mt_promote_types((mt_dtype)*slot, d);
}

static mt_dtype result_type_n(const mt_tensor *const *ts, int n) {
  int dim = UNDEF, zero = UNDEF, wrapped = UNDEF;
  for (int i = 0; i < n; i++)
    if (ts[i]) add_to_state(ts[i], &dim, &zero, &wrapped);
  int r = combine(dim, combine(zero, wrapped));
  return r == UNDEF ? mt_default_dtype() : (mt_dtype)r;
}

mt_dtype mt_result_type(const mt_tensor *a, const mt_tensor *b) {
  const mt_tensor *ts[2] = {a, b};
  return result_type_n(ts, 2);
}

/* PyTorch's can_cast: no float -> integer, no non-bool -> bool. */
static bool can_cast(mt_dtype from, mt_dtype to) {
  return mt_dtype_category(from) <= mt_dtype_category(to);
}

/* Broadcasts the inputs, prepares the output (new, or *out checked), and
 * runs kernel k over (out, ins...). Inputs already have the kernel's dtype. */
static mt_status run_ew(const char *name, mt_loop_fn k, void *ctx, mt_dtype outdt, mt_tensor *const *ins, int nin,
                        mt_tensor **out) {
  int64_t shape[MT_MAXDIM];
  int nd = ins[0]->ndim;
  memcpy(shape, ins[0]->shape, sizeof(int64_t) * (size_t)nd);
  for (int i = 1; i < nin; i++) {
    mt_status st = mt_broadcast_shape(name, shape, nd, ins[i]->shape, ins[i]->ndim, shape, &nd);
    if (st) return st;
  }
  mt_tensor *o = *out, *tmp = NULL;
  mt_status st;
  if (o) {
    bool same = o->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = o->shape[i] == shape[i];
    if (!same) {
      char a[128], b[128];
      return mt_fail(MT_ESHAPE, "%s: out= has shape %s but the result has shape %s", name,
                     mt_shape_str(o->shape, o->ndim, a, sizeof a), mt_shape_str(shape, nd, b, sizeof b));
    }
    if (o->dtype != (int8_t)outdt) {
      if (!can_cast(outdt, (mt_dtype)o->dtype))
        return mt_fail(MT_EDTYPE, "%s: result type %s can't be cast to the output's dtype %s", name,
                       mt_dtype_name(outdt), mt_dtype_name((mt_dtype)o->dtype));
      if ((st = mt_empty(shape, nd, outdt, mt_tdevice(o), &tmp))) return st;
    }
  } else {
    if ((st = mt_empty(shape, nd, outdt, mt_tdevice(ins[0]), &o))) return st;
  }
  mt_tensor *target = tmp ? tmp : o;
  mt_tensor *ops[MT_ITER_MAXOPS] = {target};
  for (int i = 0; i < nin; i++) ops[i + 1] = ins[i];
  mt_iter it;
  if (!(st = mt_iter_init(&it, ops, nin + 1, name))) st = mt_iter_run(&it, k, ctx, 1 << 15);
  if (!st && tmp) st = mt_copy_(o, tmp);
  mt_release(tmp);
  if (st) {
    if (!*out) mt_release(o);
    return st;
  }
  if (*out)
    mt_bump_version(o);
  else
    *out = o;
  return MT_OK;
}

static mt_status no_kernel(const char *name, mt_dtype dt) {
  return mt_fail(MT_EDTYPE, "%s: not supported for %s tensors", name, mt_dtype_name(dt));
}


static bool is_predicate(mt_op op) { return mt_ops[op].flags & MT_F_PRED; }

/* Unary counterpart of fast_binary: a small contiguous floating input and a
 * fresh output of the same dtype (predicates excepted) skip the iterator. */
static bool fast_unary(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out, mt_status *st) {
  if (*out || x->flags || !mt_is_floating((mt_dtype)x->dtype) || is_predicate(op) ||
      x->storage->device.type != MT_CPU || !mt_is_contiguous(x))
    return false;
  int64_t n = mt_numel(x);
  if (n >= (1 << 15)) return false;
  mt_loop_fn k = mt_cpu_unary_kernel(op, (mt_dtype)x->dtype);
  if (!k) return false;
  mt_tensor *o = NULL;
  if ((*st = mt_empty(x->shape, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &o))) return true;
  char *data[2] = {mt_data(o), mt_data(x)};
  int64_t es = (int64_t)mt_elsize(x), strides[2] = {es, es};
  k(data, strides, n, (void *)p);
  *out = o;
  return true;
}

/* The engine's complex gate for elementwise ops (every device passes here):
 * an op without complex kernels refuses complex operands by name. */
static mt_status complex_cdt(mt_op op, mt_dtype dt) {
  if (mt_complex_op(op)) return MT_OK;
  return mt_fail(MT_EDTYPE, "%s: %s tensors are not supported", mt_ops[op].name, mt_dtype_name(dt));
}

mt_status mt_unary_cdt(mt_op op, mt_dtype dt, mt_dtype *cdt) {
  const mt_opinfo *info = &mt_ops[op];
  *cdt = dt;
  if (mt_is_complex(dt)) return complex_cdt(op, dt);
  if ((info->flags & MT_F_INTONLY) && mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: only integer and bool tensors are supported, got %s", info->name,
                   mt_dtype_name(dt));
  if ((info->flags & MT_F_NOBOOL) && dt == MT_BOOL)
    return mt_fail(MT_EDTYPE, "%s: not supported for bool tensors%s", info->name,
                   op == MT_OP_neg ? " (use logical_not)" : "");
  if ((info->flags & MT_F_FLOATOUT) && !mt_is_floating(dt)) *cdt = mt_default_dtype();
  return MT_OK;
}

mt_status mt_binary_cdt(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_dtype *cdt) {
  const mt_opinfo *info = &mt_ops[op];
  mt_dtype rt = mt_result_type(a, b);
  *cdt = rt;
  if (mt_is_complex(rt)) return complex_cdt(op, rt);
  if ((info->flags & MT_F_INTONLY) && mt_is_floating(rt))
    return mt_fail(MT_EDTYPE, "%s: only integer and bool tensors are supported, got %s and %s", info->name,
                   mt_dtype_name((mt_dtype)a->dtype), mt_dtype_name((mt_dtype)b->dtype));
  if ((info->flags & MT_F_NOBOOL) && rt == MT_BOOL)
    return mt_fail(MT_EDTYPE, "%s: not supported for two bool tensors%s", info->name,
                   op == MT_OP_sub ? " (use logical_xor)" : "");
  if ((info->flags & MT_F_FLOATOUT) && !mt_is_floating(rt)) *cdt = mt_default_dtype();
  return MT_OK;
}

mt_status mt_unary_p(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out) {
  bool cuda = mt_tdevice(x).type == MT_CUDA || (*out && mt_tdevice(*out).type == MT_CUDA);
  if (cuda && mt_is_complex((mt_dtype)x->dtype)) { /* by parts, through the real kernels */
    mt_dtype cdt;
    mt_status cst = mt_unary_cdt(op, (mt_dtype)x->dtype, &cdt);
    return cst ? cst : mt_complex_ew_parts(op, x, NULL, out);
  }
  if (cuda) return mt_cuda_unary(op, x, p, out);
  mt_status fst;
  if (fast_unary(op, x, p, out, &fst)) return fst;
  const mt_opinfo *info = &mt_ops[op];
  mt_dtype dt = (mt_dtype)x->dtype, cdt;
  mt_status cst = mt_unary_cdt(op, dt, &cdt);
  if (cst) return cst;
  mt_loop_fn k = mt_cpu_unary_kernel(op, cdt);
  if (!k) return no_kernel(info->name, cdt);
  mt_tensor *xin;
  mt_status st = mt_to_dtype(x, cdt, false, &xin);
  if (st) return st;
  mt_dtype odt = is_predicate(op) ? MT_BOOL : (op == MT_OP_abs || op == MT_OP_angle) ? mt_complex_part(cdt) : cdt;
  if (odt != cdt && mt_is_complex(cdt) && *out && mt_is_complex((mt_dtype)(*out)->dtype)) {
    mt_release(xin);
    return mt_fail(MT_EDTYPE, "%s: the result is real; in-place %s is not supported for complex tensors", info->name,
                   info->name);
  }
  st = run_ew(info->name, k, (void *)p, odt, &xin, 1, out);
  mt_release(xin);
  return st;
}

mt_status mt_unary(mt_op op, const mt_tensor *x, mt_tensor **out) { return mt_unary_p(op, x, NULL, out); }

/* *any: some element of b compares true with 0 by cmp (eq, lt); on a
 * device one reduction and one value down. */
static mt_status any_vs_zero(mt_op cmp, const mt_tensor *b, bool *any) {
  mt_tensor *z = NULL, *zero = NULL, *r = NULL;
  mt_scalar v = mt_sbool(false);
  mt_status st = mt_scalar_tensor(mt_sint(0), (mt_dtype)b->dtype, &zero);
  if (!st) st = mt_binary(cmp, b, zero, &z);
  if (!st) st = mt_any(z, NULL, 0, false, &r);
  if (!st) st = mt_item(r, &v);
  mt_release(r), mt_release(z), mt_release(zero);
  *any = mt_scalar_i(v) != 0;
  return st;
}

/* Integer division/modulo by zero and integers to negative powers are
 * errors, as in PyTorch's CPU path; b is in the compute dtype cdt. */
static mt_status check_int_operands(mt_op op, mt_dtype cdt, const mt_tensor *b) {
  bool div = op == MT_OP_floor_divide || op == MT_OP_fmod || op == MT_OP_remainder;
  if (mt_is_inexact(cdt) || !(div || op == MT_OP_pow)) return MT_OK;
  bool any = false;
  mt_status st = any_vs_zero(div ? MT_OP_eq : MT_OP_lt, b, &any);
  if (st || !any) return st;
  if (div) return mt_fail(MT_EARG, "%s: integer division by zero", mt_ops[op].name);
  return mt_fail(MT_EARG, "pow: integers to negative integer powers are not allowed");
}

bool mt_binary_is_plain(mt_op op, const mt_tensor *a, const mt_tensor *b) {
  const mt_opinfo *info = &mt_ops[op];
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->flags || b->flags || info->kind != MT_K_BINARY ||
      (info->flags & (MT_F_FLOATOUT | MT_F_INTONLY)) || !mt_is_floating((mt_dtype)a->dtype) ||
      a->storage->device.type != MT_CPU || b->storage->device.type != MT_CPU)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return mt_is_contiguous(a) && mt_is_contiguous(b);
}

/* A given out= qualifies for the fast path when it is a contiguous tensor
 * of the result's dtype and shape with storage of its own. */
static bool plain_out(const mt_tensor *o, const mt_tensor *a, const mt_tensor *b) {
  if (o->dtype != a->dtype || o->ndim != a->ndim || o->storage == a->storage || o->storage == b->storage ||
      o->storage->device.type != MT_CPU)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (o->shape[i] != a->shape[i]) return false;
  return mt_is_contiguous(o);
}

/* Runs the kernel of a plain pair (mt_binary_is_plain) into o, a contiguous
 * tensor of their shape and dtype that aliases neither. */
static mt_status run_plain(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor *o) {
  mt_loop_fn k = mt_cpu_binary_kernel(op, (mt_dtype)a->dtype);
  if (!k) return no_kernel(mt_ops[op].name, (mt_dtype)a->dtype);
  int64_t es = (int64_t)mt_elsize(a), strides[3] = {es, es, es};
  char *data[3] = {mt_data(o), mt_data(a), mt_data(b)};
  k(data, strides, mt_numel(a), NULL);
  mt_bump_version(o);
  return MT_OK;
}

mt_status mt_binary_small_into(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor *out) {
  return run_plain(op, a, b, out);
}

/* The common case of eager code (mt_binary_is_plain) skips promotion and the
 * iterator; the result is identical to the general path. */
static bool fast_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out, mt_status *st) {
  if (!mt_binary_is_plain(op, a, b) || (*out && !plain_out(*out, a, b))) return false;
  if (mt_numel(a) >= (1 << 15) || !mt_cpu_binary_kernel(op, (mt_dtype)a->dtype))
    return false; /* large: let the iterator parallelise */
  mt_tensor *o = *out;
  if (!o && (*st = mt_empty(a->shape, a->ndim, (mt_dtype)a->dtype, mt_cpu(), &o))) return true;
  *st = run_plain(op, a, b, o);
  *out = o;
  return true;
}

mt_status mt_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  if (mt_tdevice(a).type == MT_CUDA || mt_tdevice(b).type == MT_CUDA || (*out && mt_tdevice(*out).type == MT_CUDA)) {
    mt_dtype cdt; /* the integer checks need the compute dtype; other ops leave it to mt_cuda_binary */
    if (mt_is_complex(mt_result_type(a, b))) { /* by parts, through the real kernels */
      mt_status cst = mt_binary_cdt(op, a, b, &cdt);
      return cst ? cst : mt_complex_ew_parts(op, a, b, out);
    }
    bool checked = op == MT_OP_floor_divide || op == MT_OP_fmod || op == MT_OP_remainder || op == MT_OP_pow;
    mt_status st = checked ? mt_binary_cdt(op, a, b, &cdt) : MT_OK;
    if (checked && !st) st = check_int_operands(op, cdt, b);
    return st ? st : mt_cuda_binary(op, a, b, out);
  }
  mt_status fst;
  if (fast_binary(op, a, b, out, &fst)) return fst;
  const mt_opinfo *info = &mt_ops[op];
  mt_dtype cdt;
  if (!mt_same_device(mt_tdevice(a), mt_tdevice(b)) && !(a->flags & MT_TF_WRAPPED) && !(b->flags & MT_TF_WRAPPED)) {
    char x[32], y[32];
    return mt_fail(MT_EDEVICE, "%s: tensors are on different devices (%s and %s)", info->name,
                   mt_device_str(mt_tdevice(a), x, sizeof x), mt_device_str(mt_tdevice(b), y, sizeof y));
  }
  mt_status cst = mt_binary_cdt(op, a, b, &cdt);
  if (cst) return cst;
  mt_loop_fn k = info->kind == MT_K_COMPARE || info->kind == MT_K_BINARY ? mt_cpu_binary_kernel(op, cdt) : NULL;
  if (!k) return no_kernel(info->name, cdt);
  mt_tensor *ain = NULL, *bin = NULL;
  mt_status st = mt_to_dtype(a, cdt, false, &ain);
  if (!st) st = mt_to_dtype(b, cdt, false, &bin);
  if (!st) st = check_int_operands(op, cdt, bin);
  if (!st) {
    mt_tensor *ins[2] = {ain, bin};
    st = run_ew(info->name, k, NULL, info->kind == MT_K_COMPARE ? MT_BOOL : cdt, ins, 2, out);
  }
  mt_release(ain);
  mt_release(bin);
  return st;
}

/* ---- ops with extra operands ---- */

mt_status mt_clamp(const mt_tensor *x, const mt_tensor *lo, const mt_tensor *hi, mt_tensor **out) {
  if (!lo && !hi) return mt_fail(MT_EARG, "clamp: at least one of min and max must be given");
  const mt_tensor *ts[3] = {x, lo, hi};
  mt_dtype rt = result_type_n(ts, 3);
  if (rt == MT_BOOL) return mt_fail(MT_EDTYPE, "clamp: not supported for bool tensors");
  mt_tensor *xc = NULL, *t1 = NULL;
  mt_status st = mt_to_dtype(x, rt, false, &xc);
  if (st) return st;
  if (lo && hi) {
    if (!(st = mt_binary(MT_OP_maximum, xc, lo, &t1))) st = mt_binary(MT_OP_minimum, t1, hi, out);
  } else {
    st = mt_binary(lo ? MT_OP_maximum : MT_OP_minimum, xc, lo ? lo : hi, out);
  }
  mt_release(xc);
  mt_release(t1);
  return st;
}

#define DEF_SELECT(T)                                                                                                  \
  static void select_##T(char **d, const int64_t *s, int64_t n, void *ctx) {                                           \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      *(T *)(d[0] + i * s[0]) = *(const uint8_t *)(d[1] + i * s[1]) ? *(const T *)(d[2] + i * s[2])                   \
                                                                     : *(const T *)(d[3] + i * s[3]);                  \
  }
DEF_SELECT(uint8_t)
DEF_SELECT(uint16_t)
DEF_SELECT(uint32_t)
DEF_SELECT(uint64_t)
typedef struct { uint64_t lo, hi; } pair128; /* complex128 */
DEF_SELECT(pair128)

/* where on CUDA: every operand but 0-dim host ones (values) on one device;
 * a and b already in the result dtype. */
static mt_status where_cuda(const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_tensor *ts[3] = {cond, a, b};
  mt_device dev = {MT_CPU, 0};
  for (int i = 0; i < 3; i++)
    if (mt_tdevice(ts[i]).type == MT_CUDA) dev = mt_tdevice(ts[i]);
  for (int i = 0; i < 3; i++)
    if (!mt_same_device(mt_tdevice(ts[i]), dev) && !(ts[i]->ndim == 0 && mt_tdevice(ts[i]).type == MT_CPU)) {
      char x[32], y[32];
      return mt_fail(MT_EDEVICE, "where: expected all tensors on the same device, got %s and %s",
                     mt_device_str(dev, x, sizeof x), mt_device_str(mt_tdevice(ts[i]), y, sizeof y));
    }
  int64_t shape[MT_MAXDIM];
  int nd = cond->ndim;
  memcpy(shape, cond->shape, sizeof(int64_t) * (size_t)nd);
  mt_status st = MT_OK;
  for (int i = 1; i < 3 && !st; i++) st = mt_broadcast_shape("where", shape, nd, ts[i]->shape, ts[i]->ndim, shape, &nd);
  mt_tensor *c = NULL, *r = NULL;
  if (!st) st = mt_cuda_to_device(cond, dev, false, &c);
  if (!st) st = mt_empty(shape, nd, (mt_dtype)a->dtype, dev, &r);
  if (!st) st = mt_cuda_select3("where", r, c, a, b);
  mt_release(c);
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver("where", r, out);
}

/* *t, when a 0-dim CPU tensor, replaced by its copy on dev (reference passed on). */
static mt_status host_value_to(mt_tensor **t, mt_device dev) {
  if ((*t)->ndim != 0 || mt_tdevice(*t).type != MT_CPU) return MT_OK;
  mt_tensor *moved = NULL;
  mt_status st = mt_cuda_to_device(*t, dev, false, &moved);
  if (!st) mt_release(*t), *t = moved;
  return st;
}

mt_status mt_where(const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  if (cond->dtype != MT_BOOL && cond->dtype != MT_UINT8)
    return mt_fail(MT_EDTYPE, "where: condition must be a bool tensor, got %s", mt_dtype_name((mt_dtype)cond->dtype));
  mt_dtype rt = mt_result_type(a, b);
  mt_tensor *ac = NULL, *bc = NULL;
  mt_status st = mt_to_dtype(a, rt, false, &ac);
  if (!st) st = mt_to_dtype(b, rt, false, &bc);
  bool cuda = mt_tdevice(cond).type == MT_CUDA || mt_tdevice(a).type == MT_CUDA || mt_tdevice(b).type == MT_CUDA;
  if (!st && cuda && mt_is_complex(rt)) { /* by parts: the CUDA kernels know the real dtypes */
    mt_tensor *pa = NULL, *pb = NULL, *c2 = NULL, *pr = NULL, *r = NULL;
    mt_device dev = mt_tdevice(mt_tdevice(cond).type == MT_CUDA ? cond : mt_tdevice(a).type == MT_CUDA ? a : b);
    st = host_value_to(&ac, dev); /* a 0-dim host value's pairs are 1-D: move it first */
    if (!st) st = host_value_to(&bc, dev);
    if (!st) st = mt_complex_pairs(ac, &pa);
    if (!st) st = mt_complex_pairs(bc, &pb);
    if (!st) st = mt_unsqueeze(cond, cond->ndim, &c2);
    if (!st) st = where_cuda(c2, pa, pb, &pr);
    mt_tensor *prc = NULL;
    if (!st) st = mt_contiguous(pr, &prc);
    if (!st) st = mt_view_as_complex(prc, &r);
    if (!st) mt_release(r->base), r->base = NULL, st = mt_deliver("where", r, out);
    mt_release(pa), mt_release(pb), mt_release(c2), mt_release(pr), mt_release(prc);
  } else if (!st && cuda) {
    st = where_cuda(cond, ac, bc, out);
  } else if (!st) {
    static const mt_loop_fn by_size[17] = {[1] = select_uint8_t, [2] = select_uint16_t, [4] = select_uint32_t,
                                           [8] = select_uint64_t, [16] = select_pair128};
    mt_tensor *ins[3] = {(mt_tensor *)cond, ac, bc};
    st = run_ew("where", by_size[mt_dtype_size(rt)], NULL, rt, ins, 3, out);
  }
  mt_release(ac);
  mt_release(bc);
  return st;
}

/* lerp = a + w (b - a) for w < 0.5, b - (b - a)(1 - w) otherwise (exact at
 * both ends, as in PyTorch); built from elementwise ops. */
mt_status mt_lerp(const mt_tensor *a, const mt_tensor *b, const mt_tensor *w, mt_tensor **out) {
  const mt_tensor *ts[3] = {a, b, w};
  mt_dtype rt = result_type_n(ts, 3);
  if (!mt_is_floating((mt_dtype)a->dtype) || !mt_is_floating((mt_dtype)b->dtype))
    return mt_fail(MT_EDTYPE, "lerp: only floating tensors are supported, got %s and %s",
                   mt_dtype_name((mt_dtype)a->dtype), mt_dtype_name((mt_dtype)b->dtype));
  mt_tensor *diff = NULL, *lo = NULL, *hi = NULL, *t = NULL, *one = NULL, *omw = NULL, *half = NULL, *aw = NULL,
            *small = NULL, *ac = NULL, *bc = NULL;
  mt_status st = mt_to_dtype(a, rt, false, &ac);
  if (!st) st = mt_to_dtype(b, rt, false, &bc);
  if (!st) st = mt_binary(MT_OP_sub, bc, ac, &diff);
  if (!st) st = mt_binary(MT_OP_mul, w, diff, &t);
  if (!st) st = mt_binary(MT_OP_add, ac, t, &lo);
  if (!st) st = mt_scalar_tensor(mt_sfloat(1), rt, &one);
  if (!st) st = mt_binary(MT_OP_sub, one, w, &omw);
  mt_release(t);
  t = NULL;
  if (!st) st = mt_binary(MT_OP_mul, diff, omw, &t);
  if (!st) st = mt_binary(MT_OP_sub, bc, t, &hi);
  if (!st) st = mt_unary(MT_OP_abs, w, &aw);
  if (!st) st = mt_scalar_tensor(mt_sfloat(0.5), rt, &half);
  if (!st) st = mt_binary(MT_OP_lt, aw, half, &small);
  if (!st) st = mt_where(small, lo, hi, out);
  mt_tensor *all[] = {diff, lo, hi, t, one, omw, half, aw, small, ac, bc};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_release(all[i]);
  return st;
}

/* ---- nan_to_num's kernels: three parameters, defaults by dtype ---- */
typedef struct {
  double nan, posinf, neginf;
} fparams;

#define DEF_PARAM_KERNELS(E, tag, T, C)                                                                                \
  static void nan2num_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                        \
    const fparams *p = ctx;                                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      C x = mt_ld_##tag(d[1] + i * s[1]);                                                                              \
      C y = x != x ? (C)p->nan : (isinf(x) ? (x > 0 ? (C)p->posinf : (C)p->neginf) : x);                               \
      MT_ST_##tag(d[0] + i * s[0], y);                                                                                 \
    }                                                                                                                  \
  }
MT_DTYPES_FLOAT(DEF_PARAM_KERNELS)

/* Runs a parameterised kernel (ctx = the fparams) over (out, x). */
static mt_status run_param(const char *name, mt_loop_fn fn, fparams p, const mt_tensor *x, mt_tensor **out) {
  mt_tensor *o = *out;
  mt_status st;
  if (!o && (st = mt_empty_like(x, &o))) return st;
  mt_tensor *ops[2] = {o, (mt_tensor *)x};
  mt_iter it;
  if ((o->dtype != x->dtype && (st = mt_fail(MT_EDTYPE, "%s: output dtype %s does not match input dtype %s", name,
                                            mt_dtype_name((mt_dtype)o->dtype), mt_dtype_name((mt_dtype)x->dtype)))) ||
      (st = mt_iter_init(&it, ops, 2, name)) || (st = mt_iter_run(&it, fn, &p, 1 << 15))) {
    if (!*out) mt_release(o);
    return st;
  }
  if (*out)
    mt_bump_version(o);
  else
    *out = o;
  return MT_OK;
}

#define PICK(fam)                                                                                                      \
  (dt == MT_FLOAT32 ? fam##_f32 : dt == MT_FLOAT64 ? fam##_f64 : dt == MT_FLOAT16 ? fam##_f16 : fam##_bf16)

mt_status mt_nan_to_num(const mt_tensor *x, double nan, double posinf, double neginf, mt_tensor **out) {
  mt_dtype dt = (mt_dtype)x->dtype;
  if (!mt_is_floating(dt)) return mt_clone(x, out);
  double big = dt == MT_FLOAT64 ? DBL_MAX : dt == MT_FLOAT32 ? FLT_MAX : dt == MT_FLOAT16 ? 65504.0 : 3.3895313892515355e38;
  fparams p = {nan, isinf(posinf) ? big : posinf, isinf(neginf) ? -big : neginf};
  if (mt_tdevice(x).type == MT_CUDA) return mt_cuda_nan_to_num(x, p.nan, p.posinf, p.neginf, out);
  return run_param("nan_to_num", PICK(nan2num), p, x, out);
}

/* leaky_relu is a registry row with a parameter (ops.def) */
mt_status mt_leaky_relu(const mt_tensor *x, double slope, mt_tensor **out) {
  return mt_unary_p(MT_OP_leaky_relu, x, &slope, out);
}

const char *mt_act_name(mt_act act) {
  static const char *names[MT_NACT] = {"", "relu", "leaky_relu", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh"};
  return act >= 0 && act < MT_NACT ? names[act] : "?";
}

mt_status mt_activation(const mt_tensor *x, mt_act act, double alpha, mt_tensor **out) {
  static const mt_op ops[MT_NACT] = {[MT_ACT_RELU] = MT_OP_relu, [MT_ACT_TANH] = MT_OP_tanh,
                                     [MT_ACT_SIGMOID] = MT_OP_sigmoid, [MT_ACT_SILU] = MT_OP_silu,
                                     [MT_ACT_GELU] = MT_OP_gelu, [MT_ACT_GELU_TANH] = MT_OP_gelu_tanh};
  switch (act) {
  case MT_ACT_NONE: return *out = mt_retain((mt_tensor *)x), MT_OK;
  case MT_ACT_LEAKY_RELU: return mt_leaky_relu(x, alpha, out);
  case MT_ACT_RELU: case MT_ACT_TANH: case MT_ACT_SIGMOID: case MT_ACT_SILU: case MT_ACT_GELU: case MT_ACT_GELU_TANH:
    return mt_unary(ops[act], x, out);
  default: return mt_fail(MT_EARG, "internal: activation %d is not known", (int)act);
  }
}
