/* view.c -- ops that return views sharing storage: view/reshape, permute,
 * expand, squeeze/unsqueeze, narrow/select/slice, flatten, unfold, diagonal.
 * Dims are 0-based here; the Lua layer converts from 1-based. */
#include <string.h>

#include "mt.h"

mt_status mt_wrap_dim(const char *op, int64_t dim, int ndim, int *out) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return mt_fail(MT_EINDEX, "%s: dimension %lld out of range (tensor has %d dimension%s)", op,
                   (long long)(dim >= 0 ? dim + 1 : dim), ndim, ndim == 1 ? "" : "s");
  *out = (int)(dim < 0 ? dim + n : dim);
  return MT_OK;
}

mt_status mt_broadcast_shape(const char *op, const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                             int *nout) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      char sa[128], sb[128];
      return mt_fail(MT_ESHAPE, "%s: shapes %s and %s cannot be broadcast together (%lld ~= %lld at dimension %d)",
                     op, mt_shape_str(a, na, sa, sizeof sa), mt_shape_str(b, nb, sb, sizeof sb), (long long)x,
                     (long long)y, n - i);
    }
    out[n - 1 - i] = x == 1 ? y : x;
  }
  *nout = n;
  return MT_OK;
}

/* Strides for viewing t with a new shape without copying, or false when the
 * memory layout does not allow it (PyTorch's rule: each group of old dims
 * that maps onto a group of new dims must be contiguous within itself). */
static bool view_strides(const mt_tensor *t, const int64_t *shape, int nd, int64_t *strides) {
  if (mt_numel(t) == 0 || t->ndim == 0) {
    mt_contiguous_strides(shape, nd, strides);
    return true;
  }
  int vd = nd - 1;
  int64_t base = t->strides[t->ndim - 1], tnum = 1, vnum = 1;
  for (int td = t->ndim - 1; td >= 0; td--) {
    tnum *= t->shape[td];
    bool chunk_end = td == 0 || (t->shape[td - 1] != 1 && t->strides[td - 1] != tnum * base);
    if (!chunk_end) continue;
    while (vd >= 0 && (vnum < tnum || shape[vd] == 1)) {
      strides[vd] = vnum * base;
      vnum *= shape[vd];
      vd--;
    }
    if (vnum != tnum) return false;
    if (td > 0) {
      base = t->strides[td - 1];
      tnum = vnum = 1;
    }
  }
  return vd == -1;
}

/* Resolves a -1 in shape from numel; checks the product matches. */
static mt_status infer_shape(const char *op, const mt_tensor *t, const int64_t *shape, int nd, int64_t *out) {
  int64_t numel = mt_numel(t), known = 1;
  int infer = -1;
  char a[128], b[128];
  if (nd > MT_MAXDIM) return mt_fail(MT_ESHAPE, "%s: at most %d dimensions, got %d", op, MT_MAXDIM, nd);
  for (int i = 0; i < nd; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) return mt_fail(MT_ESHAPE, "%s: only one dimension can be -1", op);
      infer = i;
    } else if (shape[i] < 0) {
      return mt_fail(MT_ESHAPE, "%s: invalid size %lld in shape", op, (long long)shape[i]);
    } else {
      known *= shape[i];
    }
    out[i] = shape[i];
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      return mt_fail(MT_ESHAPE, "%s: shape %s is invalid for a tensor of %lld elements (shape %s)", op,
                     mt_shape_str(shape, nd, a, sizeof a), (long long)numel,
                     mt_shape_str(t->shape, t->ndim, b, sizeof b));
    out[infer] = numel / known;
  } else if (known != numel) {
    return mt_fail(MT_ESHAPE, "%s: shape %s is invalid for a tensor of %lld elements (shape %s)", op,
                   mt_shape_str(shape, nd, a, sizeof a), (long long)numel,
                   mt_shape_str(t->shape, t->ndim, b, sizeof b));
  }
  return MT_OK;
}

mt_status mt_view(const mt_tensor *t, const int64_t *shape, int nd, mt_tensor **out) {
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  mt_status s = infer_shape("view", t, shape, nd, sh);
  if (s) return s;
  if (!view_strides(t, sh, nd, st)) {
    char a[128], b[128];
    return mt_fail(MT_ESHAPE,
                   "view: shape %s is not compatible with the input's layout (shape %s, not contiguous); use "
                   "reshape, which copies when needed",
                   mt_shape_str(sh, nd, a, sizeof a), mt_shape_str(t->shape, t->ndim, b, sizeof b));
  }
  return mt_as_strided(t, nd, sh, st, t->offset, out);
}

mt_status mt_reshape(const mt_tensor *t, const int64_t *shape, int nd, mt_tensor **out) {
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  mt_status s = infer_shape("reshape", t, shape, nd, sh);
  if (s) return s;
  if (view_strides(t, sh, nd, st)) return mt_as_strided(t, nd, sh, st, t->offset, out);
  mt_tensor *c = NULL;
  if ((s = mt_clone(t, &c))) return s;
  mt_contiguous_strides(sh, nd, st);
  s = mt_as_strided(c, nd, sh, st, 0, out);
  mt_release(c);
  return s;
}

mt_status mt_permute(const mt_tensor *t, const int *perm, int n, mt_tensor **out) {
  if (n != t->ndim)
    return mt_fail(MT_ESHAPE, "permute: got %d dimensions for a tensor with %d dimensions", n, t->ndim);
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  bool seen[MT_MAXDIM] = {0};
  for (int i = 0; i < n; i++) {
    int d = perm[i];
    if (d < 0 || d >= n) return mt_fail(MT_EINDEX, "permute: dimension %d out of range (tensor has %d)", d + 1, n);
    if (seen[d]) return mt_fail(MT_EARG, "permute: dimension %d appears twice", d + 1);
    seen[d] = true;
    sh[i] = t->shape[d];
    st[i] = t->strides[d];
  }
  return mt_as_strided(t, n, sh, st, t->offset, out);
}

mt_status mt_transpose(const mt_tensor *t, int d0, int d1, mt_tensor **out) {
  int perm[MT_MAXDIM];
  for (int i = 0; i < t->ndim; i++) perm[i] = i;
  if (t->ndim == 0) return mt_as_strided(t, 0, NULL, NULL, t->offset, out);
  perm[d0] = d1;
  perm[d1] = d0;
  return mt_permute(t, perm, t->ndim, out);
}

mt_status mt_expand(const mt_tensor *t, const int64_t *shape, int nd, mt_tensor **out) {
  char a[128], b[128];
  if (nd < t->ndim || nd > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "expand: cannot expand shape %s to %s (fewer dimensions)",
                   mt_shape_str(t->shape, t->ndim, a, sizeof a), mt_shape_str(shape, nd, b, sizeof b));
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  for (int i = nd - 1; i >= 0; i--) {
    int ti = i - (nd - t->ndim);
    int64_t want = shape[i];
    if (ti >= 0) {
      int64_t have = t->shape[ti];
      if (want == -1) want = have;
      if (have == want) {
        sh[i] = have;
        st[i] = t->strides[ti];
      } else if (have == 1 && want >= 0) {
        sh[i] = want;
        st[i] = 0;
      } else {
        return mt_fail(MT_ESHAPE, "expand: cannot expand shape %s to %s (size %lld ~= %lld at dimension %d)",
                       mt_shape_str(t->shape, t->ndim, a, sizeof a), mt_shape_str(shape, nd, b, sizeof b),
                       (long long)have, (long long)want, i + 1);
      }
    } else {
      if (want < 0)
        return mt_fail(MT_ESHAPE, "expand: size -1 not allowed for a new leading dimension %d", i + 1);
      sh[i] = want;
      st[i] = 0;
    }
  }
  return mt_as_strided(t, nd, sh, st, t->offset, out);
}

mt_status mt_squeeze(const mt_tensor *t, int dim, mt_tensor **out) {
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] == 1 && (dim < 0 || dim == i)) continue;
    sh[n] = t->shape[i];
    st[n++] = t->strides[i];
  }
  return mt_as_strided(t, n, sh, st, t->offset, out);
}

mt_status mt_unsqueeze(const mt_tensor *t, int dim, mt_tensor **out) {
  if (t->ndim >= MT_MAXDIM) return mt_fail(MT_ESHAPE, "unsqueeze: tensors have at most %d dimensions", MT_MAXDIM);
  if (dim < 0 || dim > t->ndim)
    return mt_fail(MT_EINDEX, "unsqueeze: dimension %d out of range (allowed 1..%d)", dim + 1, t->ndim + 1);
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i <= t->ndim; i++) {
    if (i == dim) {
      sh[n] = 1;
      st[n++] = i < t->ndim ? t->strides[i] * t->shape[i] : 1;
    }
    if (i < t->ndim) {
      sh[n] = t->shape[i];
      st[n++] = t->strides[i];
    }
  }
  return mt_as_strided(t, n, sh, st, t->offset, out);
}

mt_status mt_slice(const mt_tensor *t, int dim, int64_t start, int64_t stop, int64_t step, mt_tensor **out) {
  if (step <= 0) return mt_fail(MT_EARG, "slice: step must be positive, got %lld", (long long)step);
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->strides, sizeof st);
  int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  sh[dim] = len;
  st[dim] = t->strides[dim] * step;
  return mt_as_strided(t, t->ndim, sh, st, t->offset + (len > 0 ? start * t->strides[dim] : 0), out);
}

mt_status mt_narrow(const mt_tensor *t, int dim, int64_t start, int64_t len, mt_tensor **out) {
  if (t->ndim == 0) return mt_fail(MT_ESHAPE, "narrow: cannot narrow a 0-dim tensor");
  if (start < 0 || len < 0 || start + len > t->shape[dim])
    return mt_fail(MT_EINDEX, "narrow: range [%lld, %lld] is out of bounds for dimension %d of size %lld",
                   (long long)start + 1, (long long)(start + len), dim + 1, (long long)t->shape[dim]);
  return mt_slice(t, dim, start, start + len, 1, out);
}

mt_status mt_select(const mt_tensor *t, int dim, int64_t index, mt_tensor **out) {
  if (t->ndim == 0) return mt_fail(MT_EINDEX, "select: cannot index a 0-dim tensor");
  int64_t size = t->shape[dim];
  if (index < -size || index >= size)
    return mt_fail(MT_EINDEX, "select: index %lld is out of bounds for dimension %d with size %lld",
                   (long long)(index >= 0 ? index + 1 : index), dim + 1, (long long)size);
  if (index < 0) index += size;
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == dim) continue;
    sh[n] = t->shape[i];
    st[n++] = t->strides[i];
  }
  return mt_as_strided(t, n, sh, st, t->offset + index * t->strides[dim], out);
}

mt_status mt_flatten(const mt_tensor *t, int start, int end, mt_tensor **out) {
  if (t->ndim == 0) {
    int64_t one = 1;
    return mt_reshape(t, &one, 1, out);
  }
  if (start > end) return mt_fail(MT_EARG, "flatten: start_dim %d comes after end_dim %d", start + 1, end + 1);
  int64_t sh[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < start; i++) sh[n++] = t->shape[i];
  int64_t m = 1;
  for (int i = start; i <= end; i++) m *= t->shape[i];
  sh[n++] = m;
  for (int i = end + 1; i < t->ndim; i++) sh[n++] = t->shape[i];
  return mt_reshape(t, sh, n, out);
}

mt_status mt_unfold(const mt_tensor *t, int dim, int64_t size, int64_t step, mt_tensor **out) {
  int64_t len = t->ndim ? t->shape[dim] : 1;
  if (size < 0 || size > len)
    return mt_fail(MT_EARG, "unfold: size %lld is larger than dimension %d of size %lld", (long long)size, dim + 1,
                   (long long)len);
  if (step <= 0) return mt_fail(MT_EARG, "unfold: step must be positive, got %lld", (long long)step);
  if (t->ndim >= MT_MAXDIM) return mt_fail(MT_ESHAPE, "unfold: tensors have at most %d dimensions", MT_MAXDIM);
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int n = t->ndim;
  memcpy(sh, t->shape, sizeof sh);
  memcpy(st, t->strides, sizeof st);
  if (n == 0) {
    sh[0] = size;
    st[0] = 1;
    return mt_as_strided(t, 1, sh, st, t->offset, out);
  }
  sh[dim] = (len - size) / step + 1;
  st[dim] = t->strides[dim] * step;
  sh[n] = size;
  st[n] = t->strides[dim];
  return mt_as_strided(t, n + 1, sh, st, t->offset, out);
}

mt_status mt_diagonal(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out) {
  if (d0 == d1) return mt_fail(MT_EARG, "diagonal: dimensions must differ, both are %d", d0 + 1);
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == d0 || i == d1) continue;
    sh[n] = t->shape[i];
    st[n++] = t->strides[i];
  }
  int64_t off = t->offset, len;
  if (offset >= 0) {
    len = t->shape[d1] - offset < t->shape[d0] ? t->shape[d1] - offset : t->shape[d0];
    off += offset * t->strides[d1];
  } else {
    len = t->shape[d0] + offset < t->shape[d1] ? t->shape[d0] + offset : t->shape[d1];
    off -= offset * t->strides[d0];
  }
  if (len <= 0) {
    len = 0;
    off = t->offset;
  }
  sh[n] = len;
  st[n++] = t->strides[d0] + t->strides[d1];
  return mt_as_strided(t, n, sh, st, off, out);
}
