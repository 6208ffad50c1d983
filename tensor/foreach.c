/* foreach.c -- norms and in-place scaling of a list of tensors
 * (torch._foreach_norm, torch._foreach_mul_; see foreach.h). The list is
 * split by dtype; a CUDA group goes through the multi-tensor kernels of
 * cuda/foreach.c, anything else tensor by tensor through the ordinary
 * engine ops (the CPU path, other orders, non-contiguous tensors to
 * scale). */
#include <math.h>
#include <stdlib.h>

#include "cuda/mt_cuda.h"
#include "foreach.h"
#include "linalg.h"

static const mt_dtype floats[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_BFLOAT16};

/* Every tensor on ts[0]'s device (and floating when need_float). */
static mt_status check_list(const char *op, mt_tensor *const *ts, int n, bool need_float) {
  for (int i = 0; i < n; i++) {
    if (!ts[i]) return mt_fail(MT_EARG, "%s: element %d of the list is not a tensor", op, i + 1);
    if (need_float && !mt_is_floating((mt_dtype)ts[i]->dtype))
      return mt_fail(MT_EDTYPE, "%s: expected floating tensors, got %s at position %d", op,
                     mt_dtype_name((mt_dtype)ts[i]->dtype), i + 1);
    if (!mt_same_device(mt_tdevice(ts[i]), mt_tdevice(ts[0]))) {
      char a[32], b[32];
      return mt_fail(MT_EDEVICE, "%s: expected all tensors on the same device, got %s (position 1) and %s (position %d)",
                     op, mt_device_str(mt_tdevice(ts[0]), a, sizeof a), mt_device_str(mt_tdevice(ts[i]), b, sizeof b),
                     i + 1);
    }
  }
  return MT_OK;
}

/* The kernels' mode for ord (-1: none). */
static int kernel_mode(double ord) { return ord == 2 ? 0 : ord == 1 ? 1 : ord == INFINITY ? 2 : -1; }

/* *acc joined with norm c (already in the accumulating dtype) for ord;
 * *acc NULL starts it. Steals nothing. */
static mt_status join(mt_tensor **acc, const mt_tensor *c, double ord) {
  mt_tensor *term = NULL, *p = NULL, *r = NULL;
  mt_status st = MT_OK;
  bool maxlike = isinf(ord), plain = ord == 0 || ord == 1;
  if (maxlike || plain) {
    term = mt_retain((mt_tensor *)c);
  } else if (ord == 2) {
    st = mt_binary(MT_OP_mul, c, c, &term);
  } else if (!(st = mt_scalar_tensor(mt_sfloat(ord), (mt_dtype)c->dtype, &p))) {
    p->flags |= MT_TF_WRAPPED;
    st = mt_binary(MT_OP_pow, c, p, &term);
  }
  mt_release(p);
  if (st) return st;
  if (!*acc) {
    *acc = term;
    return MT_OK;
  }
  st = mt_binary(maxlike ? (ord > 0 ? MT_OP_maximum : MT_OP_minimum) : MT_OP_add, *acc, term, &r);
  mt_release(term);
  if (st) return st;
  mt_release(*acc);
  *acc = r;
  return MT_OK;
}

/* The ord-norm of norms parts[0..np) (each the norm of a disjoint part),
 * computed in acc and returned in dtype rt. */
static mt_status combine(mt_tensor **parts, int np, double ord, mt_dtype acc, mt_dtype rt, mt_tensor **out) {
  mt_tensor *sum = NULL, *r = NULL;
  mt_status st = MT_OK;
  if (np == 1) return mt_to_dtype(parts[0], rt, false, out);
  for (int i = 0; i < np && !st; i++) {
    mt_tensor *c = NULL;
    st = mt_to_dtype(parts[i], acc, false, &c);
    if (!st) st = join(&sum, c, ord);
    mt_release(c);
  }
  if (!st && !isinf(ord) && ord != 0 && ord != 1) {
    mt_tensor *p = NULL;
    if (ord == 2) {
      st = mt_unary(MT_OP_sqrt, sum, &r);
    } else if (!(st = mt_scalar_tensor(mt_sfloat(1 / ord), acc, &p))) {
      p->flags |= MT_TF_WRAPPED;
      st = mt_binary(MT_OP_pow, sum, p, &r);
    }
    mt_release(p);
  } else if (!st) {
    r = mt_retain(sum);
  }
  if (!st) st = mt_to_dtype(r, rt, false, out);
  mt_release(sum);
  mt_release(r);
  return st;
}

/* One CUDA dtype group idx[0..k) through the kernels: its norms, and its
 * total (float32/float64) appended to parts. */
static mt_status norm_group_cuda(mt_tensor *const *ts, const int *idx, int k, int mode, mt_tensor **norms,
                                 mt_tensor **parts, int *np) {
  mt_dtype dt = (mt_dtype)ts[idx[0]]->dtype;
  mt_device dev = mt_tdevice(ts[idx[0]]);
  mt_tensor **work = calloc((size_t)k, sizeof *work), *buf = NULL, *tot = NULL;
  if (!work) return mt_fail(MT_ENOMEM, "_foreach_norm: out of memory");
  mt_status st = MT_OK;
  for (int j = 0; j < k && !st; j++) {
    const mt_tensor *t = ts[idx[j]];
    if (mt_is_contiguous(t)) work[j] = mt_retain((mt_tensor *)t);
    else st = mt_contiguous(t, &work[j]);
  }
  int64_t kk = k;
  if (!st) st = mt_empty(&kk, 1, dt, dev, &buf);
  if (!st) st = mt_empty(&kk, 0, dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32, dev, &tot); /* 0-dim */
  if (!st) st = mt_cuda_foreach_norm(work, k, mode, buf, tot);
  for (int j = 0; j < k && !st; j++) st = mt_select(buf, 0, j, &norms[idx[j]]);
  if (!st) parts[(*np)++] = mt_retain(tot);
  for (int j = 0; j < k; j++) mt_release(work[j]);
  free(work);
  mt_release(buf);
  mt_release(tot);
  return st;
}

mt_status mt_foreach_norm(mt_tensor *const *ts, int n, double ord, mt_tensor **norms, mt_tensor **total) {
  const char *op = "_foreach_norm";
  mt_status st = check_list(op, ts, n, true);
  if (st) return st;
  if (n == 0) return total ? mt_scalar_tensor(mt_sfloat(0), MT_FLOAT32, total) : MT_OK;
  int *idx = malloc((size_t)n * sizeof *idx);
  mt_tensor **parts = calloc((size_t)n, sizeof *parts);
  if (!idx || !parts) {
    free(idx);
    free(parts);
    return mt_fail(MT_ENOMEM, "%s: out of memory", op);
  }
  int np = 0, mode = kernel_mode(ord);
  bool cuda = mt_tdevice(ts[0]).type == MT_CUDA;
  mt_dtype rt = (mt_dtype)ts[0]->dtype;
  for (size_t f = 0; f < sizeof floats / sizeof *floats && !st; f++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if ((mt_dtype)ts[i]->dtype == floats[f]) idx[k++] = i;
    if (!k) continue;
    rt = mt_promote_types(rt, floats[f]);
    bool empty = false; /* the inf-norm of nothing is an error, as linalg.vector_norm says */
    for (int j = 0; j < k; j++) empty |= mt_numel(ts[idx[j]]) == 0;
    if (cuda && mode >= 0 && !(mode == 2 && empty)) {
      st = norm_group_cuda(ts, idx, k, mode, norms, parts, &np);
      continue;
    }
    for (int j = 0; j < k && !st; j++) {
      st = mt_linalg_vector_norm(ts[idx[j]], ord, NULL, 0, false, -1, &norms[idx[j]]);
      if (!st) parts[np++] = mt_retain(norms[idx[j]]);
    }
  }
  mt_dtype acc = rt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  if (!st && total) st = combine(parts, np, ord, acc, rt, total);
  for (int i = 0; i < np; i++) mt_release(parts[i]);
  if (st)
    for (int i = 0; i < n; i++) {
      mt_release(norms[i]);
      norms[i] = NULL;
    }
  free(idx);
  free(parts);
  return st;
}

/* ts[i] *= s through the elementwise op, in place. */
static mt_status scale_one(mt_tensor *t, const mt_tensor *s) {
  mt_tensor *o = t;
  return mt_binary(MT_OP_mul, t, s, &o);
}

/* Does ts[i] share storage with an earlier tensor of the list? (the
 * kernel would then scale it twice at once) */
static bool shares(mt_tensor *const *ts, int i) {
  for (int j = 0; j < i; j++)
    if (ts[j]->storage == ts[i]->storage) return true;
  return false;
}

mt_status mt_foreach_mul_(mt_tensor *const *ts, int n, const mt_tensor *scale, double sv) {
  const char *op = "_foreach_mul_";
  mt_status st = check_list(op, ts, n, false);
  if (st || n == 0) return st;
  mt_device dev = mt_tdevice(ts[0]);
  if (scale && scale->ndim != 0)
    return mt_fail(MT_EARG, "%s: the scale must be a number or a 0-dim tensor, got %d dimensions", op, scale->ndim);
  if (scale && mt_tdevice(scale).type != MT_CPU && !mt_same_device(mt_tdevice(scale), dev)) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "%s: the scale is on device %s, the tensors on device %s", op,
                   mt_device_str(mt_tdevice(scale), a, sizeof a), mt_device_str(dev, b, sizeof b));
  }
  mt_tensor *s = NULL;
  if (scale) {
    s = mt_retain((mt_tensor *)scale);
  } else if (sv == floor(sv) && fabs(sv) < 9e15 ? !(st = mt_scalar_tensor(mt_sint((int64_t)sv), MT_INT64, &s))
                                                 : !(st = mt_scalar_tensor(mt_sfloat(sv), MT_FLOAT64, &s))) {
    s->flags |= MT_TF_WRAPPED;
  }
  bool dev_scale = scale && mt_tdevice(scale).type == MT_CUDA;
  if (!st && dev.type == MT_CUDA && scale && !dev_scale) { /* a CPU 0-dim scale: its value, as a number */
    mt_scalar v;
    if (!(st = mt_item(scale, &v))) sv = mt_scalar_f(v);
  }
  mt_tensor **group = st ? NULL : calloc((size_t)n, sizeof *group);
  if (!st && !group) st = mt_fail(MT_ENOMEM, "%s: out of memory", op);
  for (size_t f = 0; f < sizeof floats / sizeof *floats && !st && dev.type == MT_CUDA; f++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if ((mt_dtype)ts[i]->dtype == floats[f] && mt_is_contiguous(ts[i]) && !shares(ts, i)) group[k++] = ts[i];
    if (k) st = mt_cuda_foreach_scale_(group, k, dev_scale ? scale : NULL, sv);
    for (int j = 0; j < k && !st; j++) mt_bump_version(group[j]);
  }
  for (int i = 0; i < n && !st; i++) { /* the rest, one by one */
    bool done = dev.type == MT_CUDA && mt_is_floating((mt_dtype)ts[i]->dtype) && mt_is_contiguous(ts[i]) && !shares(ts, i);
    if (!done) st = scale_one(ts[i], s);
  }
  free(group);
  mt_release(s);
  return st;
}
