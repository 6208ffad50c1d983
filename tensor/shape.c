/* shape.c -- movement ops that build their result from views of the inputs
 * and mt_copy_ (no loops of their own): cat/stack, flip, roll, rot90,
 * tril/triu, diag, repeat/tile, plus small view helpers. Dims are 0-based;
 * messages print them 1-based, as the Lua user sees them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_index.h"
#include "shape.h"

static char *shp(const mt_tensor *t, char *buf, size_t n) { return mt_shape_str(t->shape, t->ndim, buf, n); }

/* The tensor the result goes into: the caller's *out (whose shape must be
 * `shape`) or a new one of dtype dt. */
static mt_status out_prepare(const char *op, const int64_t *shape, int nd, mt_dtype dt, mt_device dev, mt_tensor **out,
                             mt_tensor **res) {
  if (!*out) {
    mt_status st = mt_empty(shape, nd, dt, dev, res);
    if (st) { /* name the op in the allocator's message */
      char msg[256];
      snprintf(msg, sizeof msg, "%s", mt_errmsg());
      return mt_fail(st, "%s: %s", op, msg);
    }
    return MT_OK;
  }
  bool same = (*out)->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = (*out)->shape[i] == shape[i];
  if (!same) {
    char a[128], b[128];
    return mt_fail(MT_ESHAPE, "%s: out= has shape %s but the result has shape %s", op, shp(*out, a, sizeof a),
                   mt_shape_str(shape, nd, b, sizeof b));
  }
  *res = *out;
  return MT_OK;
}

/* Ends an op writing into res: on failure releases res unless it is the
 * caller's tensor; on success hands it out through *out. */
static mt_status out_finish(mt_status st, mt_tensor **out, mt_tensor *res) {
  if (st) {
    if (res != *out) mt_release(res);
    return st;
  }
  *out = res;
  return MT_OK;
}

/* An out= tensor sharing memory with an input would be read while written. */
static mt_status check_alias(const char *op, mt_tensor *const *out, const mt_tensor *in) {
  if (*out && (*out)->storage == in->storage)
    return mt_fail(MT_EARG, "%s: out= must not share memory with an input", op);
  return MT_OK;
}

/* Copies the view src into a new tensor (or the caller's *out). */
static mt_status copy_result(const char *op, const mt_tensor *src, mt_tensor **out) {
  mt_tensor *o = NULL;
  mt_status st = out_prepare(op, src->shape, src->ndim, (mt_dtype)src->dtype, mt_tdevice(src), out, &o);
  if (st) return st;
  return out_finish(mt_copy_(o, src), out, o);
}

static mt_status check_dim(const char *op, int d, int ndim) {
  if (d < 0 || d >= ndim)
    return mt_fail(MT_EINDEX, "%s: dimension %d out of range (tensor has %d dimension%s)", op, d + 1, ndim,
                   ndim == 1 ? "" : "s");
  return MT_OK;
}

/* ---- cat and stack ---- */

/* Promoted dtype of all inputs; all must be on one device. */
static mt_status common_dtype(const char *op, mt_tensor *const *ts, int n, mt_dtype *dt) {
  *dt = (mt_dtype)ts[0]->dtype;
  for (int i = 1; i < n; i++) {
    if (!mt_same_device(mt_tdevice(ts[i]), mt_tdevice(ts[0]))) {
      char a[32], b[32];
      return mt_fail(MT_EDEVICE,
                     "%s: expected all tensors on the same device, got %s at position 1 and %s at "
                     "position %d",
                     op, mt_device_str(mt_tdevice(ts[0]), a, sizeof a), mt_device_str(mt_tdevice(ts[i]), b, sizeof b),
                     i + 1);
    }
    *dt = mt_promote_types(*dt, (mt_dtype)ts[i]->dtype);
  }
  return MT_OK;
}

static bool legacy_empty(const mt_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

static mt_status cat_impl(const char *op, mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) {
  char a[128], b[128];
  if (n <= 0) return mt_fail(MT_EARG, "%s: expected a non-empty list of tensors", op);
  int r = -1;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 0)
      return mt_fail(MT_ESHAPE, "%s: zero-dimensional tensor (at position %d) cannot be concatenated", op, i + 1);
    if (r < 0 && !legacy_empty(ts[i])) r = i;
  }
  if (r < 0) r = 0; /* all are 1-D and empty */
  const mt_tensor *ref = ts[r];
  int d;
  mt_dtype dt;
  mt_status st = mt_wrap_dim(op, dim, ref->ndim, &d);
  if (!st) st = common_dtype(op, ts, n, &dt);
  if (st) return st;
  int64_t shape[MT_MAXDIM];
  memcpy(shape, ref->shape, sizeof shape);
  shape[d] = 0;
  for (int i = 0; i < n; i++) {
    const mt_tensor *t = ts[i];
    if (legacy_empty(t) && ref->ndim != 1) continue; /* PyTorch skips these */
    if (t->ndim != ref->ndim)
      return mt_fail(MT_ESHAPE,
                     "%s: tensors must have the same number of dimensions: tensor %d has shape %s, "
                     "tensor %d has shape %s",
                     op, r + 1, shp(ref, a, sizeof a), i + 1, shp(t, b, sizeof b));
    for (int j = 0; j < t->ndim; j++)
      if (j != d && t->shape[j] != ref->shape[j])
        return mt_fail(MT_ESHAPE,
                       "%s: sizes must match except in dimension %d: tensor %d has shape %s, tensor %d "
                       "has shape %s (size %lld ~= %lld at dimension %d)",
                       op, d + 1, r + 1, shp(ref, a, sizeof a), i + 1, shp(t, b, sizeof b), (long long)ref->shape[j],
                       (long long)t->shape[j], j + 1);
    shape[d] += t->shape[d];
  }
  for (int i = 0; i < n; i++)
    if ((st = check_alias(op, out, ts[i]))) return st;
  mt_tensor *o = NULL;
  if ((st = out_prepare(op, shape, ref->ndim, dt, mt_tdevice(ref), out, &o))) return st;
  int64_t off = 0;
  for (int i = 0; i < n && !st; i++) {
    const mt_tensor *t = ts[i];
    if ((legacy_empty(t) && ref->ndim != 1) || t->shape[d] == 0) continue;
    mt_tensor *v = NULL;
    st = mt_slice(o, d, off, off + t->shape[d], 1, &v);
    if (!st) st = mt_copy_(v, t);
    mt_release(v);
    off += t->shape[d];
  }
  return out_finish(st, out, o);
}

mt_status mt_cat(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) { return cat_impl("cat", ts, n, dim, out); }

mt_status mt_stack(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) {
  char a[128], b[128];
  if (n <= 0) return mt_fail(MT_EARG, "stack: expected a non-empty list of tensors");
  const mt_tensor *ref = ts[0];
  int nd = ref->ndim;
  for (int i = 1; i < n; i++) {
    bool same = ts[i]->ndim == nd;
    for (int j = 0; same && j < nd; j++) same = ts[i]->shape[j] == ref->shape[j];
    if (!same)
      return mt_fail(MT_ESHAPE,
                     "stack: expects each tensor to be equal size, but got %s at position 1 and %s at "
                     "position %d",
                     shp(ref, a, sizeof a), shp(ts[i], b, sizeof b), i + 1);
  }
  if (nd + 1 > MT_MAXDIM) return mt_fail(MT_ESHAPE, "stack: the result would have more than %d dimensions", MT_MAXDIM);
  if (dim < -(nd + 1) || dim > nd)
    return mt_fail(MT_EINDEX, "stack: dimension %lld out of range (the result has %d dimensions; use 1..%d or -%d..-1)",
                   (long long)(dim >= 0 ? dim + 1 : dim), nd + 1, nd + 1, nd + 1);
  int d = (int)(dim < 0 ? dim + nd + 1 : dim);
  mt_dtype dt;
  mt_status st = common_dtype("stack", ts, n, &dt);
  for (int i = 0; i < n && !st; i++) st = check_alias("stack", out, ts[i]);
  if (st) return st;
  int64_t shape[MT_MAXDIM];
  for (int i = 0, j = 0; i <= nd; i++) shape[i] = i == d ? n : ref->shape[j++];
  mt_tensor *o = NULL;
  if ((st = out_prepare("stack", shape, nd + 1, dt, mt_tdevice(ref), out, &o))) return st;
  for (int i = 0; i < n && !st; i++) {
    mt_tensor *v = NULL;
    st = mt_select(o, d, i, &v);
    if (!st) st = mt_copy_(v, ts[i]);
    mt_release(v);
  }
  return out_finish(st, out, o);
}

/* cat of the inputs raised to at least `rank` dims; dim < 0: hstack's rule
 * (dim 1, or dim 0 when the inputs are 1-D). */
static mt_status cat_atleast(const char *op, mt_tensor *const *ts, int n, int rank, int dim, mt_tensor **out) {
  if (n <= 0) return mt_fail(MT_EARG, "%s: expected a non-empty list of tensors", op);
  mt_tensor **tmp = calloc((size_t)n, sizeof *tmp);
  if (!tmp) return mt_fail(MT_ENOMEM, "%s: out of memory", op);
  mt_status st = MT_OK;
  for (int i = 0; i < n && !st; i++) st = mt_atleast(ts[i], rank, &tmp[i]);
  if (!st) st = cat_impl(op, tmp, n, dim >= 0 ? dim : tmp[0]->ndim == 1 ? 0 : 1, out);
  for (int i = 0; i < n; i++) mt_release(tmp[i]);
  free(tmp);
  return st;
}

mt_status mt_hstack(mt_tensor *const *ts, int n, mt_tensor **out) { return cat_atleast("hstack", ts, n, 1, -1, out); }
mt_status mt_vstack(mt_tensor *const *ts, int n, mt_tensor **out) { return cat_atleast("vstack", ts, n, 2, 0, out); }
mt_status mt_dstack(mt_tensor *const *ts, int n, mt_tensor **out) { return cat_atleast("dstack", ts, n, 3, 2, out); }

/* ---- flip, roll, rot90 ---- */

/* A view of t walking dims backwards (negative strides). Engine-internal:
 * such views are only ever copied from, never handed out. */
static mt_status flipped_view(const char *op, const mt_tensor *t, const int *dims, int n, mt_tensor **v) {
  bool seen[MT_MAXDIM] = {0};
  int64_t st[MT_MAXDIM], off = t->offset;
  memcpy(st, t->strides, sizeof st);
  for (int i = 0; i < n; i++) {
    int d = dims[i];
    if (t->ndim == 0 && d == 0) continue;
    mt_status s = check_dim(op, d, t->ndim);
    if (s) return s;
    if (seen[d]) return mt_fail(MT_EARG, "%s: dimension %d appears more than once in dims", op, d + 1);
    seen[d] = true;
    if (t->shape[d] > 1) {
      off += (t->shape[d] - 1) * t->strides[d];
      st[d] = -t->strides[d];
    }
  }
  return mt_as_strided(t, t->ndim, t->shape, st, off, v);
}

mt_status mt_flip(const mt_tensor *t, const int *dims, int n, mt_tensor **out) {
  mt_tensor *v = NULL;
  mt_status st = check_alias("flip", out, t);
  if (!st) st = flipped_view("flip", t, dims, n, &v);
  if (!st) st = copy_result("flip", v, out);
  mt_release(v);
  return st;
}

/* dst = src rolled along dims[k..n) by sh[k..n) (each in 1..size-1): two
 * copies of matching narrows per dim, recursively. */
static mt_status roll_rec(mt_tensor *dst, const mt_tensor *src, const int *dims, const int64_t *sh, int k, int n) {
  if (k == n) return mt_copy_(dst, src);
  int d = dims[k];
  int64_t size = src->shape[d], s = sh[k];
  mt_tensor *a = NULL, *b = NULL;
  mt_status st = mt_slice(dst, d, s, size, 1, &a);
  if (!st) st = mt_slice(src, d, 0, size - s, 1, &b);
  if (!st) st = roll_rec(a, b, dims, sh, k + 1, n);
  mt_release(a);
  mt_release(b);
  a = b = NULL;
  if (!st) st = mt_slice(dst, d, 0, s, 1, &a);
  if (!st) st = mt_slice(src, d, size - s, size, 1, &b);
  if (!st) st = roll_rec(a, b, dims, sh, k + 1, n);
  mt_release(a);
  mt_release(b);
  return st;
}

/* roll of the flattened tensor, shaped back like t */
static mt_status roll_flat(const mt_tensor *t, int64_t shift, mt_tensor **out) {
  int64_t numel = mt_numel(t);
  int zero = 0;
  mt_tensor *flat = NULL, *r = NULL, *v = NULL;
  mt_status st = mt_reshape(t, &numel, 1, &flat);
  if (!st) st = mt_roll(flat, &shift, &zero, 1, &r);
  if (!st) st = mt_view(r, t->shape, t->ndim, &v);
  if (!st && !*out) {
    *out = v;
    v = NULL;
  } else if (!st) {
    st = copy_result("roll", v, out);
  }
  mt_release(flat);
  mt_release(r);
  mt_release(v);
  return st;
}

mt_status mt_roll(const mt_tensor *t, const int64_t *shifts, const int *dims, int n, mt_tensor **out) {
  mt_status st = check_alias("roll", out, t);
  if (st) return st;
  if (n == 0) return roll_flat(t, shifts[0], out);
  int64_t acc[MT_MAXDIM] = {0};
  for (int i = 0; i < n; i++) {
    if ((st = check_dim("roll", dims[i], t->ndim))) return st;
    int64_t size = t->shape[dims[i]];
    if (size > 0) acc[dims[i]] = (acc[dims[i]] + shifts[i] % size + size) % size;
  }
  int ud[MT_MAXDIM], m = 0;
  int64_t us[MT_MAXDIM];
  for (int d = 0; d < t->ndim; d++)
    if (acc[d]) ud[m] = d, us[m++] = acc[d];
  mt_tensor *o = NULL;
  if ((st = out_prepare("roll", t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), out, &o))) return st;
  return out_finish(roll_rec(o, t, ud, us, 0, m), out, o);
}

mt_status mt_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out) {
  char a[128];
  if (t->ndim < 2)
    return mt_fail(MT_ESHAPE, "rot90: expected a tensor with at least 2 dimensions, got shape %s", shp(t, a, sizeof a));
  mt_status st = check_dim("rot90", d0, t->ndim);
  if (!st) st = check_dim("rot90", d1, t->ndim);
  if (!st && d0 == d1) st = mt_fail(MT_EARG, "rot90: the two rotation dimensions must differ, both are %d", d0 + 1);
  if (!st) st = check_alias("rot90", out, t);
  if (st) return st;
  k = ((k % 4) + 4) % 4;
  int both[2] = {d0, d1};
  mt_tensor *v = NULL, *w = NULL;
  if (k == 0) st = flipped_view("rot90", t, NULL, 0, &v);
  if (k == 1) st = flipped_view("rot90", t, &d1, 1, &v);
  if (k == 2) st = flipped_view("rot90", t, both, 2, &v);
  if (k == 3) st = flipped_view("rot90", t, &d0, 1, &v);
  if (!st && (k == 1 || k == 3)) st = mt_transpose(v, d0, d1, &w);
  if (!st) st = copy_result("rot90", w ? w : v, out);
  mt_release(v);
  mt_release(w);
  return st;
}

/* ---- triangles and diagonals ---- */

/* Zeroes, row by row of the last two dims, the part outside the triangle. */
static mt_status tri(const char *op, const mt_tensor *t, int64_t k, bool upper, mt_tensor **out) {
  char a[128];
  int nd = t->ndim;
  if (nd < 2)
    return mt_fail(MT_ESHAPE, "%s: expected a tensor with at least 2 dimensions, got shape %s", op,
                   shp(t, a, sizeof a));
  bool inplace = *out == t;
  mt_status st = inplace ? MT_OK : check_alias(op, out, t);
  mt_tensor *o = NULL;
  if (!st) st = out_prepare(op, t->shape, nd, (mt_dtype)t->dtype, mt_tdevice(t), out, &o);
  if (st) return st;
  if (mt_tdevice(t).type == MT_CUDA && o->dtype == t->dtype) return out_finish(mt_cuda_tri(o, t, k, upper), out, o);
  if (!inplace) st = mt_copy_(o, t);
  int64_t rows = t->shape[nd - 2], cols = t->shape[nd - 1];
  if (k < -rows - 1) k = -rows - 1; /* keeps i + k from overflowing */
  if (k > cols + 1) k = cols + 1;
  for (int64_t i = 0; i < rows && !st; i++) {
    int64_t lo = upper ? 0 : i + k + 1, hi = upper ? i + k : cols;
    if (lo < 0) lo = 0;
    if (hi > cols) hi = cols;
    if (lo >= hi) continue;
    mt_tensor *row = NULL, *seg = NULL;
    st = mt_select(o, nd - 2, i, &row);
    if (!st) st = mt_slice(row, nd - 2, lo, hi, 1, &seg);
    if (!st) st = mt_fill_(seg, mt_sint(0));
    mt_release(row);
    mt_release(seg);
  }
  return out_finish(st, out, o);
}

mt_status mt_tril(const mt_tensor *t, int64_t diagonal, mt_tensor **out) {
  return tri("tril", t, diagonal, false, out);
}
mt_status mt_triu(const mt_tensor *t, int64_t diagonal, mt_tensor **out) { return tri("triu", t, diagonal, true, out); }

/* Zero tensor of `shape` (or the caller's *out, zeroed) with t copied into
 * its diagonal `offset` in the plane (d0, d1). */
static mt_status embed(const char *op, const mt_tensor *t, const int64_t *shape, int nd, int64_t offset, int d0, int d1,
                       mt_tensor **out) {
  mt_tensor *o = NULL, *dv = NULL;
  mt_status st = check_alias(op, out, t);
  if (!st) st = out_prepare(op, shape, nd, (mt_dtype)t->dtype, mt_tdevice(t), out, &o);
  if (st) return st;
  st = mt_fill_(o, mt_sint(0));
  if (!st) st = mt_diagonal(o, offset, d0, d1, &dv);
  if (!st) st = mt_copy_(dv, t);
  mt_release(dv);
  return out_finish(st, out, o);
}

/* |v| for offsets already checked by too_far (so -v cannot overflow) */
static int64_t iabs(int64_t v) { return v < 0 ? -v : v; }
static bool too_far(int64_t v) { return v > (int64_t)1 << 40 || v < -((int64_t)1 << 40); }

mt_status mt_diag(const mt_tensor *t, int64_t diagonal, mt_tensor **out) {
  char a[128];
  if (t->ndim == 1) {
    if (too_far(diagonal)) return mt_fail(MT_ENOMEM, "diag: diagonal %lld is too large", (long long)diagonal);
    int64_t n = t->shape[0] + iabs(diagonal), shape[2] = {n, n};
    return embed("diag", t, shape, 2, diagonal, 0, 1, out);
  }
  if (t->ndim != 2) return mt_fail(MT_ESHAPE, "diag: expected a 1-D or 2-D tensor, got shape %s", shp(t, a, sizeof a));
  mt_tensor *dv = NULL;
  mt_status st = check_alias("diag", out, t);
  if (!st) st = mt_diagonal(t, diagonal, 0, 1, &dv);
  if (!st) st = copy_result("diag", dv, out);
  mt_release(dv);
  return st;
}

mt_status mt_diag_embed(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out) {
  int nd = t->ndim + 1;
  if (t->ndim < 1)
    return mt_fail(MT_ESHAPE, "diag_embed: expected a tensor with at least 1 dimension, got a 0-dim one");
  if (nd > MT_MAXDIM) return mt_fail(MT_ESHAPE, "diag_embed: the result would have more than %d dimensions", MT_MAXDIM);
  mt_status st = check_dim("diag_embed", d0, nd);
  if (!st) st = check_dim("diag_embed", d1, nd);
  if (!st && d0 == d1) st = mt_fail(MT_EARG, "diag_embed: dim1 and dim2 must differ, both are %d", d0 + 1);
  if (!st && too_far(offset)) st = mt_fail(MT_ENOMEM, "diag_embed: offset %lld is too large", (long long)offset);
  if (st) return st;
  int64_t shape[MT_MAXDIM], n = t->shape[t->ndim - 1] + iabs(offset);
  for (int i = 0, j = 0; i < nd; i++) shape[i] = i == d0 || i == d1 ? n : t->shape[j++];
  return embed("diag_embed", t, shape, nd, offset, d0, d1, out);
}

/* ---- repeat and tile ---- */

/* Copies t into the leading block of the result, then doubles the filled
 * part along each repeated dim (log2(reps) copies per dim). */
static mt_status repeat_impl(const char *op, const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  if (n < t->ndim)
    return mt_fail(MT_EARG, "%s: the number of repeats (%d) cannot be smaller than the number of dimensions (%d)", op,
                   n, t->ndim);
  if (n > MT_MAXDIM) return mt_fail(MT_ESHAPE, "%s: at most %d repeats, got %d", op, MT_MAXDIM, n);
  int lead = n - t->ndim;
  int64_t ps[MT_MAXDIM], pst[MT_MAXDIM], osh[MT_MAXDIM];
  for (int i = 0; i < n; i++) {
    if (reps[i] < 0)
      return mt_fail(MT_EARG, "%s: repeats must be non-negative, got %lld at position %d", op, (long long)reps[i],
                     i + 1);
    ps[i] = i < lead ? 1 : t->shape[i - lead];
    pst[i] = i < lead ? 0 : t->strides[i - lead];
    if (ps[i] && reps[i] > INT64_MAX / ps[i]) return mt_fail(MT_ENOMEM, "%s: the result is too large", op);
    osh[i] = ps[i] * reps[i];
  }
  mt_tensor *o = NULL;
  mt_status st = check_alias(op, out, t);
  if (!st) st = out_prepare(op, osh, n, (mt_dtype)t->dtype, mt_tdevice(t), out, &o);
  if (st) return st;
  if (mt_numel(o) == 0) return out_finish(MT_OK, out, o);
  mt_tensor *src = NULL, *blk = NULL;
  st = mt_as_strided(t, n, ps, pst, t->offset, &src);
  if (!st) st = mt_as_strided(o, n, ps, o->strides, o->offset, &blk);
  if (!st) st = mt_copy_(blk, src);
  mt_release(src);
  mt_release(blk);
  int64_t cur[MT_MAXDIM];
  memcpy(cur, ps, sizeof cur);
  for (int d = 0; d < n && !st; d++) {
    for (int64_t filled = ps[d]; filled < osh[d] && !st;) {
      int64_t len = filled < osh[d] - filled ? filled : osh[d] - filled;
      mt_tensor *from = NULL, *to = NULL;
      cur[d] = len;
      st = mt_as_strided(o, n, cur, o->strides, o->offset, &from);
      if (!st) st = mt_as_strided(o, n, cur, o->strides, o->offset + filled * o->strides[d], &to);
      if (!st) st = mt_copy_(to, from);
      mt_release(from);
      mt_release(to);
      filled += len;
    }
    cur[d] = osh[d];
  }
  return out_finish(st, out, o);
}

mt_status mt_repeat(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  return repeat_impl("repeat", t, reps, n, out);
}

mt_status mt_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  if (n >= t->ndim) return repeat_impl("tile", t, reps, n, out);
  int64_t r[MT_MAXDIM];
  int lead = t->ndim - n;
  for (int i = 0; i < t->ndim; i++) r[i] = i < lead ? 1 : reps[i - lead];
  return repeat_impl("tile", t, r, t->ndim, out);
}

/* ---- views ---- */

mt_status mt_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out) {
  int nd = t->ndim, perm[MT_MAXDIM];
  bool used_src[MT_MAXDIM] = {0};
  mt_status st;
  for (int i = 0; i < nd; i++) perm[i] = -1;
  for (int i = 0; i < n; i++) {
    if (nd == 0 && src[i] == 0 && dst[i] == 0) continue;
    if ((st = check_dim("movedim", src[i], nd)) || (st = check_dim("movedim", dst[i], nd))) return st;
    if (used_src[src[i]]) return mt_fail(MT_EARG, "movedim: dimension %d repeated in source", src[i] + 1);
    if (perm[dst[i]] >= 0) return mt_fail(MT_EARG, "movedim: dimension %d repeated in destination", dst[i] + 1);
    perm[dst[i]] = src[i];
    used_src[src[i]] = true;
  }
  for (int p = 0, j = 0; p < nd; p++) {
    if (perm[p] >= 0) continue;
    while (used_src[j]) j++;
    perm[p] = j++;
  }
  return mt_permute(t, perm, nd, out);
}

mt_status mt_squeeze_dims(const mt_tensor *t, const int *dims, int n, mt_tensor **out) {
  bool drop[MT_MAXDIM] = {0};
  for (int i = 0; i < n; i++) {
    if (t->ndim == 0 && dims[i] == 0) continue;
    mt_status st = check_dim("squeeze", dims[i], t->ndim);
    if (st) return st;
    drop[dims[i]] = t->shape[dims[i]] == 1;
  }
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int m = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (drop[i]) continue;
    sh[m] = t->shape[i];
    st[m++] = t->strides[i];
  }
  return mt_as_strided(t, m, sh, st, t->offset, out);
}

mt_status mt_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out) {
  char a[128], b[128];
  if (t->ndim == 0) return mt_fail(MT_ESHAPE, "unflatten: cannot unflatten a 0-dim tensor");
  mt_status st = check_dim("unflatten", dim, t->ndim);
  if (st) return st;
  if (n < 1) return mt_fail(MT_EARG, "unflatten: sizes must not be empty");
  if (t->ndim - 1 + n > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "unflatten: the result would have more than %d dimensions", MT_MAXDIM);
  int64_t sz[MT_MAXDIM], known = 1, size = t->shape[dim];
  int infer = -1;
  for (int i = 0; i < n; i++) {
    sz[i] = sizes[i];
    if (sizes[i] == -1) {
      if (infer >= 0) return mt_fail(MT_EARG, "unflatten: only one size can be -1");
      infer = i;
    } else if (sizes[i] < 0) {
      return mt_fail(MT_EARG, "unflatten: invalid size %lld", (long long)sizes[i]);
    } else if (sizes[i] != 0 && known > INT64_MAX / sizes[i]) {
      return mt_fail(MT_ESHAPE, "unflatten: sizes %s are too large", mt_shape_str(sizes, n, a, sizeof a));
    } else {
      known *= sizes[i];
    }
  }
  if (infer >= 0 && known != 0 && size % known == 0) {
    sz[infer] = size / known;
    known *= sz[infer];
  }
  if (known != size || (infer >= 0 && sz[infer] < 0))
    return mt_fail(MT_ESHAPE, "unflatten: sizes %s don't multiply up to the size of dimension %d (%lld) of shape %s",
                   mt_shape_str(sizes, n, a, sizeof a), dim + 1, (long long)size, shp(t, b, sizeof b));
  int64_t shape[MT_MAXDIM];
  int m = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i != dim) {
      shape[m++] = t->shape[i];
      continue;
    }
    for (int j = 0; j < n; j++) shape[m++] = sz[j];
  }
  return mt_view(t, shape, m, out);
}

mt_status mt_atleast(const mt_tensor *t, int rank, mt_tensor **out) {
  if (t->ndim >= rank) {
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  int64_t sh[3] = {1, 1, 1};
  if (t->ndim == 1) sh[1] = t->shape[0];                      /* (1, n) or (1, n, 1) */
  if (t->ndim == 2) sh[0] = t->shape[0], sh[1] = t->shape[1]; /* (a, b, 1) */
  return mt_reshape(t, sh, rank, out);
}

mt_status mt_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out) {
  char a[128], b[128];
  if (n < t->ndim || n > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "broadcast_to: cannot broadcast shape %s to %s (%s dimensions)", shp(t, a, sizeof a),
                   mt_shape_str(shape, n, b, sizeof b), n < t->ndim ? "fewer" : "too many");
  for (int i = 0; i < n; i++) {
    int ti = i - (n - t->ndim);
    int64_t want = shape[i];
    if (ti < 0 && want < 0)
      return mt_fail(MT_ESHAPE, "broadcast_to: size %lld is not allowed for the new dimension %d of %s",
                     (long long)want, i + 1, mt_shape_str(shape, n, b, sizeof b));
    if (ti >= 0 && want != -1 && want != t->shape[ti] && (t->shape[ti] != 1 || want < 0))
      return mt_fail(MT_ESHAPE, "broadcast_to: cannot broadcast shape %s to %s (size %lld ~= %lld at dimension %d)",
                     shp(t, a, sizeof a), mt_shape_str(shape, n, b, sizeof b), (long long)t->shape[ti], (long long)want,
                     i + 1);
  }
  return mt_expand(t, shape, n, out);
}

mt_status mt_meshgrid(mt_tensor *const *ts, int n, bool xy, mt_tensor **outs) {
  char a[128];
  if (n <= 0) return mt_fail(MT_EARG, "meshgrid: expected at least one tensor");
  if (n > MT_MAXDIM) return mt_fail(MT_ESHAPE, "meshgrid: at most %d tensors, got %d", MT_MAXDIM, n);
  int64_t shape[MT_MAXDIM];
  int pos[MT_MAXDIM];
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim > 1)
      return mt_fail(MT_ESHAPE, "meshgrid: expected 0-D or 1-D tensors, got shape %s at position %d",
                     shp(ts[i], a, sizeof a), i + 1);
    if (ts[i]->dtype != ts[0]->dtype)
      return mt_fail(MT_EDTYPE,
                     "meshgrid: expected all tensors to have the same dtype, got %s at position 1 and %s "
                     "at position %d",
                     mt_dtype_name((mt_dtype)ts[0]->dtype), mt_dtype_name((mt_dtype)ts[i]->dtype), i + 1);
    shape[i] = mt_numel(ts[i]);
    pos[i] = i;
  }
  if (xy && n >= 2) {
    int64_t s = shape[0];
    shape[0] = shape[1];
    shape[1] = s;
    pos[0] = 1;
    pos[1] = 0;
  }
  for (int i = 0; i < n; i++) {
    int64_t st[MT_MAXDIM] = {0};
    st[pos[i]] = ts[i]->ndim ? ts[i]->strides[0] : 0;
    mt_status s = mt_as_strided(ts[i], n, shape, st, ts[i]->offset, &outs[i]);
    if (s) {
      for (int j = 0; j < i; j++) {
        mt_release(outs[j]);
        outs[j] = NULL;
      }
      return s;
    }
  }
  return MT_OK;
}
