/* layout.c -- dense layouts, tensors laid out like others, and stacks
 * that are already one strided view (see layout.h). */
#include "layout.h"

#include <string.h>

/* A view of t's storage with this geometry that is not an autograd view
 * (no base): a value of its own, as a fresh tensor would be. */
static mt_status plain_view(const mt_tensor *t, int nd, const int64_t *shape, const int64_t *strides, int64_t offset,
                            mt_tensor **out) {
  mt_status st = mt_as_strided(t, nd, shape, strides, offset, out);
  if (st) return st;
  mt_release((*out)->base);
  (*out)->base = NULL;
  return MT_OK;
}

/* The dims of size > 1 ordered by stride, smallest first; their count. */
static int by_stride(const int64_t *shape, const int64_t *strides, int nd, int order[MT_MAXDIM]) {
  int m = 0;
  for (int i = 0; i < nd; i++) {
    if (shape[i] <= 1) continue;
    int j = m++;
    while (j > 0 && strides[order[j - 1]] > strides[i]) order[j] = order[j - 1], j--;
    order[j] = i;
  }
  return m;
}

/* No two index tuples reach the same element (strides positive, each dim
 * beyond the reach of the smaller ones). */
static bool non_overlapping(const int64_t *shape, const int64_t *strides, int nd) {
  int order[MT_MAXDIM], m = by_stride(shape, strides, nd, order);
  int64_t reach = 0; /* largest offset the smaller dims reach */
  for (int j = 0; j < m; j++) {
    int i = order[j];
    if (strides[i] <= reach) return false;
    reach += (shape[i] - 1) * strides[i];
  }
  return true;
}

static bool dense(const int64_t *shape, const int64_t *strides, int nd) {
  int order[MT_MAXDIM], m = by_stride(shape, strides, nd, order);
  for (int i = 0; i < nd; i++)
    if (shape[i] == 0) return true;
  int64_t want = 1;
  for (int j = 0; j < m; j++) {
    if (strides[order[j]] != want) return false;
    want *= shape[order[j]];
  }
  return true;
}

bool mt_dense_layout(const mt_tensor *t) { return dense(t->shape, t->strides, t->ndim); }

/* A fresh block of n elements of dt on dev viewed with shape and strides
 * (dense) from element off. */
static mt_status block_view(int64_t n, mt_dtype dt, mt_device dev, int nd, const int64_t *shape, const int64_t *strides,
                            int64_t off, mt_tensor **out) {
  mt_tensor *b = NULL;
  mt_status st = mt_empty(&n, 1, dt, dev, &b);
  if (!st) st = plain_view(b, nd, shape, strides, b->offset + off, out);
  mt_release(b);
  return st;
}

mt_status mt_empty_like_layout(const mt_tensor *t, mt_device dev, mt_tensor **out) {
  if (mt_is_contiguous(t) || !mt_dense_layout(t) || mt_numel(t) == 0)
    return mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, dev, out);
  return block_view(mt_numel(t), (mt_dtype)t->dtype, dev, t->ndim, t->shape, t->strides, 0, out);
}

mt_status mt_stack_view(const mt_tensor *const *ts, int n, int dim, mt_tensor **out) {
  *out = NULL;
  if (n < 2) return MT_OK;
  const mt_tensor *a = ts[0];
  int nd = a->ndim;
  if (nd + 1 > MT_MAXDIM || dim < 0 || dim > nd) return MT_OK;
  int64_t step = ts[1]->offset - a->offset;
  for (int i = 1; i < n; i++) {
    const mt_tensor *t = ts[i];
    if (t->storage != a->storage || t->dtype != a->dtype || t->ndim != nd || t->offset != a->offset + i * step ||
        memcmp(t->shape, a->shape, sizeof(int64_t) * nd) || memcmp(t->strides, a->strides, sizeof(int64_t) * nd))
      return MT_OK;
  }
  int64_t shape[MT_MAXDIM], strides[MT_MAXDIM];
  for (int i = 0, j = 0; i <= nd; i++) {
    if (i == dim) shape[i] = n, strides[i] = step;
    else shape[i] = a->shape[j], strides[i] = a->strides[j], j++;
  }
  for (int i = 0; i <= nd; i++)
    if (shape[i] > 1 && strides[i] <= 0) return MT_OK; /* broadcast or reversed: not a plain stack */
  if (!non_overlapping(shape, strides, nd + 1)) return MT_OK;
  return plain_view(a, nd + 1, shape, strides, a->offset, out);
}

mt_status mt_empty_pieces_like(const mt_tensor *const *like, int n, mt_device dev, mt_tensor **out) {
  mt_tensor *sv = NULL;
  mt_status st = mt_stack_view(like, n, 0, &sv);
  for (int i = 0; i < n; i++) out[i] = NULL;
  if (!st && sv && dense(sv->shape, sv->strides, sv->ndim) && mt_numel(sv) > 0) {
    mt_tensor *b = NULL;
    int64_t total = mt_numel(sv);
    st = mt_empty(&total, 1, (mt_dtype)sv->dtype, dev, &b);
    for (int i = 0; i < n && !st; i++)
      st = plain_view(b, sv->ndim - 1, sv->shape + 1, sv->strides + 1, b->offset + i * sv->strides[0], &out[i]);
    mt_release(b);
  } else {
    for (int i = 0; i < n && !st; i++) st = mt_empty_like_layout(like[i], dev, &out[i]);
  }
  mt_release(sv);
  if (st)
    for (int i = 0; i < n; i++) mt_release(out[i]), out[i] = NULL;
  return st;
}
