/* index.c -- the engine's index ops (see index.h). Each op checks its
 * arguments, turns its index tensor into int64 element offsets (checking
 * every index and reporting the first bad one), and builds restrided views
 * of the data so that one iterator run of a gather or scatter kernel does
 * the work. Gathers run in parallel; scatters run serially, so that
 * duplicate indices apply in order. Index values are 1-based. On CUDA the
 * same steps run as kernels (cuda/offsets.c, cuda/masks.c); a bad index is
 * found on the device and reported from a host copy of the index. */
#include <string.h>

#include "cuda/cuda_index.h"
#include "cuda/mt_cuda.h"

#include "cpu/index_kernels.h"

#define GATHER_GRAIN ((int64_t)1 << 14)
#define SERIAL ((int64_t)1 << 60) /* a grain that keeps a run on one thread */

/* ---- argument checks ---- */

static mt_status check_index(const char *op, const char *what, const mt_tensor *idx, const mt_tensor *x) {
  if (idx->dtype != MT_INT64)
    return mt_fail(MT_EDTYPE, "%s: %s must be an int64 tensor of 1-based indices, got %s", op, what,
                   mt_dtype_name((mt_dtype)idx->dtype));
  if (!mt_same_device(mt_tdevice(idx), mt_tdevice(x))) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "%s: %s is on %s but the input is on %s", op, what,
                   mt_device_str(mt_tdevice(idx), a, sizeof a), mt_device_str(mt_tdevice(x), b, sizeof b));
  }
  return MT_OK;
}

static mt_status check_vector(const char *op, const mt_tensor *idx) {
  char a[128];
  if (idx->ndim > 1)
    return mt_fail(MT_ESHAPE, "%s: index must be 1-D or 0-dim, got shape %s", op,
                   mt_shape_str(idx->shape, idx->ndim, a, sizeof a));
  return MT_OK;
}

static mt_status check_same_dtype(const char *op, const char *what, const mt_tensor *x, const mt_tensor *src) {
  if (src->dtype != x->dtype)
    return mt_fail(MT_EDTYPE, "%s: %s has dtype %s but the input has dtype %s", op, what,
                   mt_dtype_name((mt_dtype)src->dtype), mt_dtype_name((mt_dtype)x->dtype));
  if (!mt_same_device(mt_tdevice(src), mt_tdevice(x))) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "%s: %s is on %s but the input is on %s", op, what,
                   mt_device_str(mt_tdevice(src), a, sizeof a), mt_device_str(mt_tdevice(x), b, sizeof b));
  }
  return MT_OK;
}

static mt_status check_dim(const char *op, const mt_tensor *x, int dim) {
  int n = x->ndim ? x->ndim : 1;
  if (dim < 0 || dim >= n)
    return mt_fail(MT_EINDEX, "%s: dimension %d out of range (tensor has %d dimension%s)", op, dim + 1, x->ndim,
                   x->ndim == 1 ? "" : "s");
  return MT_OK;
}

static mt_status check_mask(const char *op, const mt_tensor *mask, const mt_tensor *x) {
  if (mask->dtype != MT_BOOL)
    return mt_fail(MT_EDTYPE, "%s: mask must be a bool tensor, got %s", op, mt_dtype_name((mt_dtype)mask->dtype));
  if (!mt_same_device(mt_tdevice(mask), mt_tdevice(x))) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "%s: mask is on %s but the input is on %s", op,
                   mt_device_str(mt_tdevice(mask), a, sizeof a), mt_device_str(mt_tdevice(x), b, sizeof b));
  }
  return MT_OK;
}

/* t's shape must broadcast to shape (without changing it). */
static mt_status check_broadcast_to(const char *op, const char *what, const mt_tensor *t, const int64_t *shape,
                                    int nd) {
  bool ok = t->ndim <= nd;
  for (int i = 0; ok && i < t->ndim; i++) {
    int64_t s = t->shape[t->ndim - 1 - i];
    ok = s == 1 || s == shape[nd - 1 - i];
  }
  if (ok) return MT_OK;
  char a[128], b[128];
  return mt_fail(MT_ESHAPE, "%s: %s of shape %s cannot be broadcast to shape %s", op, what,
                 mt_shape_str(t->shape, t->ndim, a, sizeof a), mt_shape_str(shape, nd, b, sizeof b));
}

/* ---- index tensors to offsets ---- */

/* Finds the first out-of-range value of idx (row-major) and reports it.
 * dim: the dimension named in the message, or -1 for a flat index. */
static mt_status bad_index(const char *op, const mt_tensor *idx, const mt_offset_ctx *c, int dim) {
  int64_t n = mt_numel(idx), pos[MT_MAXDIM] = {0}, v = 0;
  const int64_t *base = (const int64_t *)mt_data(idx);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < idx->ndim; d++) off += pos[d] * idx->strides[d];
    v = base[off];
    if (!((v >= 1 && v <= c->size) || (c->neg && v < 0 && v >= -c->size))) break;
    for (int d = idx->ndim - 1; d >= 0; d--) {
      if (++pos[d] < idx->shape[d]) break;
      pos[d] = 0;
    }
  }
  const char *hint =
      v == 0 ? " (indices are 1-based)" : (v < 0 && !c->neg ? " (negative indices are not allowed here)" : "");
  if (dim < 0)
    return mt_fail(MT_EINDEX, "%s: index %lld is out of bounds for a tensor of %lld elements%s", op, (long long)v,
                   (long long)c->size, hint);
  return mt_fail(MT_EINDEX, "%s: index %lld is out of bounds for dimension %d with size %lld%s", op, (long long)v,
                 dim + 1, (long long)c->size, hint);
}

/* off (int64, contiguous) += the offsets of idx, which broadcasts to off's
 * shape; dim as in bad_index. */
static mt_status add_offsets(const char *op, mt_tensor *off, const mt_tensor *idx, mt_offset_ctx *c, int dim) {
  if (mt_tdevice(off).type == MT_CUDA) {
    bool bad = false;
    mt_tensor *h = NULL;
    mt_status st = mt_cuda_offsets(op, off, idx, c, &bad);
    if (st || !bad) return st;
    if (!(st = mt_cuda_to_device(idx, mt_cpu(), false, &h))) st = bad_index(op, h, c, dim);
    mt_release(h);
    return st;
  }
  mt_tensor *ops[2] = {off, (mt_tensor *)idx};
  mt_iter it;
  mt_status st = mt_iter_init(&it, ops, 2, op);
  if (!st) st = mt_iter_run(&it, mt_cpu_offsets, c, GATHER_GRAIN);
  if (!st && c->bad) st = bad_index(op, idx, c, dim);
  return st;
}

/* New int64 tensor of idx's shape: offsets (in elements) of idx's positions
 * along a dim of the given size and stride. */
static mt_status dim_offsets(const char *op, const mt_tensor *idx, int64_t size, int64_t stride, bool neg, int dim,
                             mt_tensor **off) {
  mt_status st = mt_zeros(idx->shape, idx->ndim, MT_INT64, mt_tdevice(idx), off);
  if (st) return st;
  mt_offset_ctx c = {.size = size, .stride = stride, .neg = neg};
  if ((st = add_offsets(op, *off, idx, &c, dim))) {
    mt_release(*off);
    *off = NULL;
  }
  return st;
}

/* Same for flat (row-major) positions into x; negative ones count from the end. */
static mt_status flat_offsets(const char *op, const mt_tensor *x, const mt_tensor *idx, mt_tensor **off) {
  mt_status st = mt_zeros(idx->shape, idx->ndim, MT_INT64, mt_tdevice(idx), off);
  if (st) return st;
  mt_offset_ctx c = {.size = mt_numel(x), .stride = 1, .neg = true};
  if (!mt_is_contiguous(x)) {
    c.flat_ndim = x->ndim;
    c.flat_shape = x->shape;
    c.flat_strides = x->strides;
  }
  if ((st = add_offsets(op, *off, idx, &c, -1))) {
    mt_release(*off);
    *off = NULL;
  }
  return st;
}

/* ---- running gathers and scatters ---- */


/* scatter_run on CUDA: src made a device tensor of dst's dtype not sharing
 * its memory and scaled by alpha first; x (of which dst_r is a restriding)
 * bounds the destinations. */
static mt_status cuda_scatter_run(const char *op, const mt_tensor *x, mt_tensor *dst_r, const mt_tensor *src,
                                  const mt_tensor *off_r, mt_reduce r, mt_scalar alpha) {
  int64_t lo = 0, hi = 0; /* the extent of x: every destination lies in it */
  for (int d = 0; d < x->ndim; d++) {
    int64_t e = (x->shape[d] - 1) * x->strides[d];
    if (e < 0)
      lo += e;
    else
      hi += e;
  }
  mt_tensor *s = NULL, *a = NULL, *t = NULL;
  mt_status st = MT_OK;
  bool unit = alpha.kind == MT_SK_FLOAT ? alpha.v.f == 1 : mt_scalar_i(alpha) == 1;
  if (mt_tdevice(src).type != MT_CUDA)
    st = mt_cuda_to_device(src, mt_tdevice(dst_r), false, &s);
  else if (src->storage == dst_r->storage)
    st = mt_clone(src, &s);
  else
    s = mt_retain((mt_tensor *)src);
  if (!st && r == MT_REDUCE_ADD && !unit && !(st = mt_scalar_tensor(alpha, (mt_dtype)dst_r->dtype, &a)) &&
      !(st = mt_binary(MT_OP_mul, s, a, &t))) {
    mt_release(s);
    s = t;
  }
  int mode = r == MT_REDUCE_NONE ? 0 : r == MT_REDUCE_ADD ? 1 : 2;
  if (!st) st = mt_cuda_scatter_off(op, dst_r, s, off_r, mode, lo, hi);
  mt_release(s);
  mt_release(a);
  return st;
}

/* Gathers res[i] = src_r[i] at off_r[i] elements further (both of the
 * result's shape) and delivers res. */
static mt_status gather_run(const char *op, const mt_tensor *src_r, const mt_tensor *off_r, mt_tensor **out) {
  mt_tensor *res = NULL;
  mt_status st = mt_empty(src_r->shape, src_r->ndim, (mt_dtype)src_r->dtype, mt_tdevice(src_r), &res);
  if (st) return st;
  mt_tensor *ops[3] = {res, (mt_tensor *)src_r, (mt_tensor *)off_r};
  mt_iter it;
  if (mt_tdevice(res).type == MT_CUDA)
    st = mt_cuda_gather_off(op, res, src_r, off_r);
  else if (!(st = mt_iter_init(&it, ops, 3, op)))
    st = mt_iter_run(&it, mt_cpu_gather_kernel(mt_elsize(res)), NULL, GATHER_GRAIN);
  if (st) {
    mt_release(res);
    return st;
  }
  return mt_deliver(op, res, out);
}

/* dst_r[i] at off_r[i] elements further (op)= src[i]; src broadcasts to
 * dst_r's shape and has its dtype; dst_r restrides x from x's offset. A src
 * sharing dst's storage is copied first. Bumps dst's version. */
static mt_status scatter_run(const char *op, const mt_tensor *x, mt_tensor *dst_r, const mt_tensor *src,
                             const mt_tensor *off_r, mt_reduce r, mt_scalar alpha) {
  if (mt_tdevice(dst_r).type == MT_CUDA) return cuda_scatter_run(op, x, dst_r, src, off_r, r, alpha);
  mt_loop_fn k = mt_cpu_scatter_kernel(r, (mt_dtype)dst_r->dtype);
  if (!k) return mt_fail(MT_EDTYPE, "%s: not supported for %s tensors", op, mt_dtype_name((mt_dtype)dst_r->dtype));
  mt_tensor *s = NULL;
  mt_status st = src->storage == dst_r->storage ? mt_clone(src, &s) : MT_OK;
  if (st) return st;
  mt_tensor *ops[3] = {dst_r, s ? s : (mt_tensor *)src, (mt_tensor *)off_r};
  mt_iter it;
  mt_scatter_ctx c = {mt_scalar_f(alpha), mt_scalar_i(alpha)};
  if (!(st = mt_iter_init(&it, ops, 3, op))) {
    mt_bump_version(dst_r);
    st = mt_iter_run(&it, k, &c, SERIAL);
  }
  mt_release(s);
  return st;
}

/* ---- index_select, gather, take ---- */

mt_status mt_index_select(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out) {
  const char *op = "index_select";
  mt_status st;
  if ((st = check_dim(op, x, dim)) || (st = check_index(op, "index", index, x)) || (st = check_vector(op, index)))
    return st;
  int nd = x->ndim;
  int64_t k = mt_numel(index);
  if (nd == 0 && k != 1)
    return mt_fail(MT_ESHAPE, "index_select: a 0-dim input needs an index of one element, got %lld", (long long)k);
  mt_tensor *off = NULL, *src_r = NULL, *off_r = NULL;
  if ((st = dim_offsets(op, index, nd ? x->shape[dim] : 1, nd ? x->strides[dim] : 0, false, dim, &off))) return st;
  int64_t sh[MT_MAXDIM], xs[MT_MAXDIM], os[MT_MAXDIM] = {0};
  memcpy(sh, x->shape, sizeof sh);
  memcpy(xs, x->strides, sizeof xs);
  if (nd) {
    sh[dim] = k;
    xs[dim] = 0;
    os[dim] = 1;
  }
  if (!(st = mt_as_strided(x, nd, sh, xs, x->offset, &src_r)) && !(st = mt_as_strided(off, nd, sh, os, 0, &off_r)))
    st = gather_run(op, src_r, off_r, out);
  mt_release(off);
  mt_release(src_r);
  mt_release(off_r);
  return st;
}

/* index may exceed x only along dim (gather and scatter). */
static mt_status check_fits(const char *op, const mt_tensor *index, const mt_tensor *x, int dim) {
  char a[128], b[128];
  for (int d = 0; d < index->ndim; d++)
    if (d != dim && index->shape[d] > x->shape[d])
      return mt_fail(MT_ESHAPE,
                     "%s: index of shape %s is larger than the input of shape %s at dimension %d (only dimension %d "
                     "may be larger)",
                     op, mt_shape_str(index->shape, index->ndim, a, sizeof a),
                     mt_shape_str(x->shape, x->ndim, b, sizeof b), d + 1, dim + 1);
  return MT_OK;
}

static mt_status check_same_rank(const char *op, const char *what, const mt_tensor *t, const mt_tensor *x) {
  if (t->ndim != x->ndim)
    return mt_fail(MT_ESHAPE, "%s: %s must have as many dimensions as the input (%d), got %d", op, what, x->ndim,
                   t->ndim);
  return MT_OK;
}

mt_status mt_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out) {
  const char *op = "gather";
  mt_status st;
  if ((st = check_dim(op, x, dim)) || (st = check_index(op, "index", index, x)) ||
      (st = check_same_rank(op, "index", index, x)) || (st = check_fits(op, index, x, dim)))
    return st;
  if (mt_tdevice(x).type == MT_CUDA) return mt_cuda_gather(x, dim, index, out);
  int nd = x->ndim;
  mt_tensor *off = NULL, *src_r = NULL;
  if ((st = dim_offsets(op, index, nd ? x->shape[dim] : 1, nd ? x->strides[dim] : 0, false, dim, &off))) return st;
  int64_t xs[MT_MAXDIM];
  memcpy(xs, x->strides, sizeof xs);
  if (nd) xs[dim] = 0;
  if (!(st = mt_as_strided(x, nd, index->shape, xs, x->offset, &src_r))) st = gather_run(op, src_r, off, out);
  mt_release(off);
  mt_release(src_r);
  return st;
}

mt_status mt_take(const mt_tensor *x, const mt_tensor *index, mt_tensor **out) {
  const char *op = "take";
  mt_status st;
  if ((st = check_index(op, "index", index, x))) return st;
  mt_tensor *off = NULL, *src_r = NULL;
  if ((st = flat_offsets(op, x, index, &off))) return st;
  int64_t zero[MT_MAXDIM] = {0};
  if (!(st = mt_as_strided(x, index->ndim, index->shape, zero, x->offset, &src_r)))
    st = gather_run(op, src_r, off, out);
  mt_release(off);
  mt_release(src_r);
  return st;
}

/* ---- scatter, index_add/copy/fill, put ---- */

/* Shared by the tensor and value forms; src is a 0-dim tensor of x's dtype
 * for the value form. */
static mt_status scatter_impl(const char *op, mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src,
                              bool value, mt_reduce r) {
  mt_status st;
  if ((st = check_dim(op, x, dim)) || (st = check_index(op, "index", index, x)) ||
      (st = check_same_rank(op, "index", index, x)) || (st = check_fits(op, index, x, dim)))
    return st;
  if (!value) {
    if ((st = check_same_dtype(op, "src", x, src)) || (st = check_same_rank(op, "src", src, x))) return st;
    for (int d = 0; d < index->ndim; d++)
      if (index->shape[d] > src->shape[d]) {
        char a[128], b[128];
        return mt_fail(MT_ESHAPE, "%s: index of shape %s is larger than src of shape %s at dimension %d", op,
                       mt_shape_str(index->shape, index->ndim, a, sizeof a),
                       mt_shape_str(src->shape, src->ndim, b, sizeof b), d + 1);
      }
  }
  mt_dtype dt = (mt_dtype)x->dtype;
  bool wide =
      dt == MT_FLOAT32 || dt == MT_FLOAT64 || dt == MT_FLOAT16 || dt == MT_BFLOAT16 || dt == MT_INT32 || dt == MT_INT64;
  /* scatter_add of the wide dtypes in one kernel (cuda/index.c); the rest
   * (plain scatters keep the last write, products, narrow dtypes) below */
  if (mt_tdevice(x).type == MT_CUDA && r == MT_REDUCE_ADD && wide) return mt_cuda_scatter_(x, dim, index, src, true);
  int nd = x->ndim;
  mt_tensor *off = NULL, *dst_r = NULL, *src_v = NULL;
  if ((st = dim_offsets(op, index, nd ? x->shape[dim] : 1, nd ? x->strides[dim] : 0, false, dim, &off))) return st;
  int64_t xs[MT_MAXDIM];
  memcpy(xs, x->strides, sizeof xs);
  if (nd) xs[dim] = 0;
  if (!(st = mt_as_strided(x, nd, index->shape, xs, x->offset, &dst_r))) {
    if (value)
      src_v = mt_retain((mt_tensor *)src);
    else
      st = mt_as_strided(src, nd, index->shape, src->strides, src->offset, &src_v);
  }
  if (!st) st = scatter_run(op, x, dst_r, src_v, off, r, mt_sint(1));
  mt_release(off);
  mt_release(dst_r);
  mt_release(src_v);
  return st;
}

static const char *scatter_name(mt_reduce r) { return r == MT_REDUCE_ADD ? "scatter_add" : "scatter"; }

mt_status mt_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_reduce r) {
  return scatter_impl(scatter_name(r), x, dim, index, src, false, r);
}

mt_status mt_scatter_value_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v, mt_reduce r) {
  mt_tensor *s = NULL;
  mt_status st = mt_scalar_tensor(v, (mt_dtype)x->dtype, &s);
  if (!st) st = scatter_impl(scatter_name(r), x, dim, index, s, true, r);
  mt_release(s);
  return st;
}

/* index_add_, index_copy_ and index_fill_: writes along dim at the positions
 * of a 1-D index. src is the source slices (x's shape with size(dim) =
 * numel(index)) or, with value, a 0-dim tensor of x's dtype. */
static mt_status index_write(const char *op, mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src,
                             bool value, mt_reduce r, mt_scalar alpha) {
  mt_status st;
  if ((st = check_dim(op, x, dim)) || (st = check_index(op, "index", index, x)) || (st = check_vector(op, index)))
    return st;
  int nd = x->ndim;
  int64_t k = mt_numel(index), sh[MT_MAXDIM];
  memcpy(sh, x->shape, sizeof sh);
  if (nd) sh[dim] = k;
  if (!value) {
    if ((st = check_same_dtype(op, "source", x, src))) return st;
    bool ok = nd ? src->ndim == nd : mt_numel(src) == 1 && k == 1;
    for (int d = 0; ok && d < nd; d++) ok = src->shape[d] == sh[d];
    if (!ok) {
      char a[128], b[128];
      if (nd == 0) return mt_fail(MT_ESHAPE, "%s: a 0-dim input needs an index and a source of one element each", op);
      return mt_fail(MT_ESHAPE,
                     "%s: source must have shape %s (the input's, with dimension %d as long as the index), got %s", op,
                     mt_shape_str(sh, nd, a, sizeof a), dim + 1, mt_shape_str(src->shape, src->ndim, b, sizeof b));
    }
  } else if (nd == 0 && k > 1) {
    return mt_fail(MT_ESHAPE, "%s: a 0-dim input needs an index of at most one element, got %lld", op, (long long)k);
  }
  if (r == MT_REDUCE_ADD && alpha.kind == MT_SK_FLOAT && !mt_is_floating((mt_dtype)x->dtype))
    return mt_fail(MT_EARG, "%s: alpha must be an integer for %s tensors, got %g", op,
                   mt_dtype_name((mt_dtype)x->dtype), alpha.v.f);
  mt_tensor *off = NULL, *dst_r = NULL, *off_r = NULL, *src_v = NULL;
  if ((st = dim_offsets(op, index, nd ? x->shape[dim] : 1, nd ? x->strides[dim] : 0, value, dim, &off))) return st;
  int64_t xs[MT_MAXDIM], os[MT_MAXDIM] = {0};
  memcpy(xs, x->strides, sizeof xs);
  if (nd) {
    xs[dim] = 0;
    os[dim] = 1;
  }
  if (nd == 0 && k == 0) {
    st = MT_OK; /* nothing selected */
  } else if (!(st = mt_as_strided(x, nd, sh, xs, x->offset, &dst_r)) &&
             !(st = mt_as_strided(off, nd, sh, os, 0, &off_r))) {
    if (value || nd)
      src_v = mt_retain((mt_tensor *)src);
    else
      st = mt_as_strided(src, 0, NULL, NULL, src->offset, &src_v);
    if (!st) st = scatter_run(op, x, dst_r, src_v, off_r, r, alpha);
  }
  mt_release(off);
  mt_release(dst_r);
  mt_release(off_r);
  mt_release(src_v);
  return st;
}

mt_status mt_index_add_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_scalar alpha) {
  return index_write("index_add", x, dim, index, src, false, MT_REDUCE_ADD, alpha);
}

mt_status mt_index_copy_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src) {
  return index_write("index_copy", x, dim, index, src, false, MT_REDUCE_NONE, mt_sint(1));
}

mt_status mt_index_fill_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v) {
  mt_tensor *s = NULL;
  mt_status st = mt_scalar_tensor(v, (mt_dtype)x->dtype, &s);
  if (!st) st = index_write("index_fill", x, dim, index, s, true, MT_REDUCE_NONE, mt_sint(1));
  mt_release(s);
  return st;
}

mt_status mt_put_(mt_tensor *x, const mt_tensor *index, const mt_tensor *src, bool accumulate) {
  const char *op = "put";
  mt_status st;
  if ((st = check_index(op, "index", index, x)) || (st = check_same_dtype(op, "source", x, src))) return st;
  if (mt_numel(src) != mt_numel(index))
    return mt_fail(MT_ESHAPE, "put: source has %lld elements but index has %lld", (long long)mt_numel(src),
                   (long long)mt_numel(index));
  mt_tensor *off = NULL, *dst_r = NULL, *src_v = NULL;
  if ((st = flat_offsets(op, x, index, &off))) return st;
  int64_t zero[MT_MAXDIM] = {0};
  if (!(st = mt_as_strided(x, index->ndim, index->shape, zero, x->offset, &dst_r)) &&
      !(st = mt_reshape(src, index->shape, index->ndim, &src_v)))
    st = scatter_run(op, x, dst_r, src_v, off, accumulate ? MT_REDUCE_ADD : MT_REDUCE_NONE, mt_sint(1));
  mt_release(off);
  mt_release(dst_r);
  mt_release(src_v);
  return st;
}

/* ---- advanced indexing ---- */

/* The layout of an advanced index: the result's shape, x's strides and the
 * offsets tensor's strides laid out on it (0 where they broadcast). */
typedef struct adv {
  int nd;
  int64_t shape[MT_MAXDIM], xstrides[MT_MAXDIM], ostrides[MT_MAXDIM];
  mt_tensor *off; /* owned: offsets, of the broadcast index shape */
} adv;

/* Appends a dim to the result: its size, x's stride and the offsets' stride. */
static bool put_dim(adv *a, int64_t size, int64_t xstride, int64_t ostride) {
  if (a->nd >= MT_MAXDIM) return false;
  a->shape[a->nd] = size;
  a->xstrides[a->nd] = xstride;
  a->ostrides[a->nd++] = ostride;
  return true;
}

/* Appends the broadcast index shape b (x does not move along it). */
static bool put_index_dims(adv *a, const int64_t *b, int nb) {
  int64_t st[MT_MAXDIM];
  mt_contiguous_strides(b, nb, st);
  for (int j = 0; j < nb; j++)
    if (!put_dim(a, b[j], 0, st[j])) return false;
  return true;
}

static mt_status adv_prepare(const char *op, const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels,
                             adv *a) {
  mt_status st;
  a->off = NULL;
  if (n > x->ndim)
    return mt_fail(MT_EINDEX, "%s: too many indices for a tensor of dimension %d (got %d)", op, x->ndim, n);
  int64_t b[MT_MAXDIM];
  int nb = 0, first = -1, last = -1, m = 0;
  for (int d = 0; d < n; d++) {
    if (!indices[d]) continue;
    if ((st = check_index(op, "an index", indices[d], x))) return st;
    if ((st = mt_broadcast_shape(op, b, nb, indices[d]->shape, indices[d]->ndim, b, &nb))) return st;
    if (first < 0) first = d;
    last = d;
    m++;
  }
  if (m == 0) return mt_fail(MT_EARG, "%s: no index tensor given", op);
  bool adjacent = last - first + 1 == m;
  a->nd = 0;
  bool ok = adjacent || put_index_dims(a, b, nb);
  for (int d = 0; ok && d < x->ndim; d++) {
    if (d >= n || !indices[d])
      ok = put_dim(a, x->shape[d], x->strides[d], 0);
    else if (adjacent && d == first)
      ok = put_index_dims(a, b, nb);
  }
  if (!ok) return mt_fail(MT_ESHAPE, "%s: the result would have more than %d dimensions", op, MT_MAXDIM);
  if ((st = mt_zeros(b, nb, MT_INT64, mt_tdevice(x), &a->off))) return st;
  for (int d = 0; d < n; d++) {
    if (!indices[d]) continue;
    mt_offset_ctx c = {.size = x->shape[d], .stride = x->strides[d], .neg = true};
    if ((st = add_offsets(op, a->off, indices[d], &c, labels ? labels[d] : d))) {
      mt_release(a->off);
      a->off = NULL;
      return st;
    }
  }
  return MT_OK;
}

mt_status mt_index(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, mt_tensor **out) {
  const char *op = "index";
  adv a;
  mt_status st = adv_prepare(op, x, indices, n, labels, &a);
  if (st) return st;
  mt_tensor *src_r = NULL, *off_r = NULL;
  if (!(st = mt_as_strided(x, a.nd, a.shape, a.xstrides, x->offset, &src_r)) &&
      !(st = mt_as_strided(a.off, a.nd, a.shape, a.ostrides, 0, &off_r)))
    st = gather_run(op, src_r, off_r, out);
  mt_release(a.off);
  mt_release(src_r);
  mt_release(off_r);
  return st;
}

mt_status mt_index_put_(mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, const mt_tensor *values,
                        bool accumulate) {
  const char *op = "index_put";
  bool host_value = values->ndim == 0 && mt_tdevice(values).type == MT_CPU;
  if (!mt_same_device(mt_tdevice(values), mt_tdevice(x)) && !host_value) {
    char d1[32], d2[32];
    return mt_fail(MT_EDEVICE, "%s: values are on %s but the input is on %s", op,
                   mt_device_str(mt_tdevice(values), d1, sizeof d1), mt_device_str(mt_tdevice(x), d2, sizeof d2));
  }
  adv a;
  mt_status st = adv_prepare(op, x, indices, n, labels, &a);
  if (st) return st;
  mt_tensor *dst_r = NULL, *off_r = NULL, *v = NULL;
  if (!(st = check_broadcast_to(op, "values", values, a.shape, a.nd)) &&
      !(st = mt_to_dtype(values, (mt_dtype)x->dtype, false, &v)) &&
      !(st = mt_as_strided(x, a.nd, a.shape, a.xstrides, x->offset, &dst_r)) &&
      !(st = mt_as_strided(a.off, a.nd, a.shape, a.ostrides, 0, &off_r)))
    st = scatter_run(op, x, dst_r, v, off_r, accumulate ? MT_REDUCE_ADD : MT_REDUCE_NONE, mt_sint(1));
  mt_release(a.off);
  mt_release(dst_r);
  mt_release(off_r);
  mt_release(v);
  return st;
}

/* ---- masks ---- */

mt_status mt_masked_fill_(mt_tensor *x, const mt_tensor *mask, mt_scalar v) {
  const char *op = "masked_fill";
  mt_status st;
  if ((st = check_mask(op, mask, x)) || (st = check_broadcast_to(op, "mask", mask, x->shape, x->ndim))) return st;
  mt_tensor *val = NULL;
  if ((st = mt_scalar_tensor(v, (mt_dtype)x->dtype, &val))) return st;
  mt_tensor *ops[3] = {x, (mt_tensor *)mask, val};
  mt_iter it;
  if (mt_tdevice(x).type == MT_CUDA) {
    st = mt_cuda_select3(op, x, mask, val, x);
  } else if (!(st = mt_iter_init(&it, ops, 3, op))) {
    mt_bump_version(x);
    st = mt_iter_run(&it, mt_cpu_masked_fill_kernel(mt_elsize(x)), NULL, (int64_t)1 << 15);
  }
  mt_release(val);
  return st;
}

/* Number of true values of a bool tensor. */
static mt_status count_true(const char *op, const mt_tensor *mask, int64_t *count) {
  mt_tensor *ops[1] = {(mt_tensor *)mask};
  mt_iter it;
  *count = 0;
  if (mt_tdevice(mask).type == MT_CUDA) {
    mt_tensor *counts = NULL;
    mt_status st = mt_cuda_mask_count(op, mask, &counts, count);
    mt_release(counts);
    return st;
  }
  mt_status st = mt_iter_init(&it, ops, 1, op);
  if (!st) st = mt_iter_run(&it, mt_cpu_count_true, count, (int64_t)1 << 16);
  return st;
}

mt_status mt_masked_select(const mt_tensor *x, const mt_tensor *mask, mt_tensor **out) {
  const char *op = "masked_select";
  int64_t sh[MT_MAXDIM], count;
  int nd;
  mt_status st;
  if ((st = check_mask(op, mask, x)) ||
      (st = mt_broadcast_shape(op, x->shape, x->ndim, mask->shape, mask->ndim, sh, &nd)))
    return st;
  mt_tensor *xe = NULL, *me = NULL, *res = NULL, *counts = NULL;
  bool cuda = mt_tdevice(x).type == MT_CUDA;
  if ((st = mt_expand(x, sh, nd, &xe)) || (st = mt_expand(mask, sh, nd, &me)) ||
      (st = cuda ? mt_cuda_mask_count(op, me, &counts, &count) : count_true(op, me, &count)) ||
      (st = mt_empty(&count, 1, (mt_dtype)x->dtype, mt_tdevice(x), &res)))
    goto done;
  mt_tensor *ops[2] = {xe, me};
  mt_iter it;
  char *cursor = mt_data(res);
  if (cuda)
    st = mt_cuda_mask_apply(op, 0, me, counts, xe, res);
  else if (!(st = mt_iter_init(&it, ops, 2, op)))
    st = mt_iter_run(&it, mt_cpu_masked_select_kernel(mt_elsize(x)), &cursor, SERIAL);
  if (!st) {
    st = mt_deliver(op, res, out);
    res = NULL;
  }
done:
  mt_release(xe);
  mt_release(me);
  mt_release(res);
  mt_release(counts);
  return st;
}

mt_status mt_masked_scatter_(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src) {
  const char *op = "masked_scatter";
  int64_t count;
  mt_status st;
  if ((st = check_mask(op, mask, x)) || (st = check_same_dtype(op, "source", x, src)) ||
      (st = check_broadcast_to(op, "mask", mask, x->shape, x->ndim)))
    return st;
  mt_tensor *me = NULL, *sc = NULL, *counts = NULL;
  bool cuda = mt_tdevice(x).type == MT_CUDA;
  if ((st = mt_expand(mask, x->shape, x->ndim, &me)) ||
      (st = cuda ? mt_cuda_mask_count(op, me, &counts, &count) : count_true(op, me, &count)))
    goto done;
  if (mt_numel(src) < count) {
    st = mt_fail(MT_ESHAPE, "masked_scatter: source has %lld elements but the mask selects %lld",
                 (long long)mt_numel(src), (long long)count);
    goto done;
  }
  if ((st = src->storage == x->storage ? mt_clone(src, &sc) : mt_contiguous(src, &sc))) goto done;
  mt_tensor *ops[2] = {x, me};
  mt_iter it;
  char *cursor = mt_data(sc);
  if (cuda) {
    st = mt_cuda_mask_apply(op, 1, me, counts, x, sc);
  } else if (!(st = mt_iter_init(&it, ops, 2, op))) {
    mt_bump_version(x);
    st = mt_iter_run(&it, mt_cpu_masked_scatter_kernel(mt_elsize(x)), &cursor, SERIAL);
  }
done:
  mt_release(me);
  mt_release(sc);
  mt_release(counts);
  return st;
}

/* ---- nonzero ---- */

mt_status mt_nonzero(const mt_tensor *x, mt_tensor **out) {
  const char *op = "nonzero";
  mt_tensor *b = NULL, *bc = NULL, *res = NULL, *counts = NULL;
  int64_t count = 0;
  int nd = x->ndim;
  bool cuda = mt_tdevice(x).type == MT_CUDA;
  mt_status st;
  if ((st = mt_to_dtype(x, MT_BOOL, false, &b)) || (st = mt_contiguous(b, &bc)) ||
      (st = cuda ? mt_cuda_mask_count(op, bc, &counts, &count) : count_true(op, bc, &count)))
    goto done;
  int64_t sh[2] = {count, nd};
  if ((st = mt_empty(sh, 2, MT_INT64, mt_tdevice(x), &res))) goto done;
  if (cuda) {
    if (!(st = mt_cuda_mask_apply(op, 2, bc, counts, NULL, res))) {
      st = mt_deliver(op, res, out);
      res = NULL;
    }
    goto done;
  }
  const uint8_t *p = (const uint8_t *)mt_data(bc);
  int64_t *o = (int64_t *)mt_data(res), pos[MT_MAXDIM] = {0}, n = mt_numel(bc);
  for (int64_t i0 = 0; i0 < n; i0 += MT_POLL_WORK) { /* Ctrl-C is looked at between pieces */
    if (i0 > 0 && mt_interrupted()) {
      st = mt_fail(MT_EINTR, "interrupted");
      goto done;
    }
    for (int64_t i = i0, i1 = i0 + MT_POLL_WORK < n ? i0 + MT_POLL_WORK : n; i < i1; i++) {
      if (p[i])
        for (int d = 0; d < nd; d++) *o++ = pos[d] + 1;
      for (int d = nd - 1; d >= 0; d--) {
        if (++pos[d] < x->shape[d]) break;
        pos[d] = 0;
      }
    }
  }
  st = mt_deliver(op, res, out);
  res = NULL;
done:
  mt_release(b);
  mt_release(bc);
  mt_release(res);
  mt_release(counts);
  return st;
}
