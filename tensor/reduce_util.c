/* reduce_util.c -- small helpers of the reduction family: dims to masks,
 * reduced shapes, result delivery under the `out` convention, and the
 * "move one dim last" layout used by scans, sorting and softmax.
 * No kernels here. */
#include <string.h>

#include "reduce_util.h"

mt_status mt_dims_mask(const char *op, const int *dims, int ndims, int rank, uint32_t *mask) {
  uint32_t m = 0;
  if (ndims == 0) {
    *mask = rank > 0 ? (uint32_t)((1u << rank) - 1) : 0;
    return MT_OK;
  }
  for (int i = 0; i < ndims; i++) {
    int d;
    mt_status st = mt_wrap_dim(op, dims[i], rank, &d);
    if (st) return st;
    if (rank == 0) continue; /* a 0-dim tensor accepts dim 0 / -1 and reduces nothing */
    if (m & (1u << d)) return mt_fail(MT_EARG, "%s: dimension %d appears more than once in dims", op, d + 1);
    m |= 1u << d;
  }
  *mask = m;
  return MT_OK;
}

int mt_reduced_shape(const mt_tensor *x, uint32_t mask, bool keepdim, int64_t *shape) {
  int n = 0;
  for (int d = 0; d < x->ndim; d++) {
    if (mask & (1u << d)) {
      if (keepdim) shape[n++] = 1;
    } else {
      shape[n++] = x->shape[d];
    }
  }
  return n;
}


mt_status mt_reshape_new(mt_tensor *x, const int64_t *shape, int ndim, mt_tensor **out) {
  int64_t strides[MT_MAXDIM];
  mt_contiguous_strides(shape, ndim, strides);
  return mt_as_strided(x, ndim, shape, strides, x->offset, out);
}

mt_status mt_rows_of(const mt_tensor *x, int dim, mt_tensor **rows) {
  if (x->ndim == 0) {
    int64_t one = 1;
    return mt_as_strided(x, 1, &one, &one, x->offset, rows);
  }
  if (dim == x->ndim - 1) return mt_contiguous(x, rows);
  int perm[MT_MAXDIM], n = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != dim) perm[n++] = d;
  perm[n++] = dim;
  mt_tensor *v = NULL;
  mt_status st = mt_permute(x, perm, n, &v);
  if (st) return st;
  st = mt_contiguous(v, rows);
  mt_release(v);
  return st;
}

mt_status mt_unrows(mt_tensor *r, int dim, int rank, mt_tensor **out) {
  mt_status st;
  if (rank == 0) {
    st = mt_reshape_new(r, NULL, 0, out);
    mt_release(r);
    return st;
  }
  if (dim == rank - 1) {
    *out = r;
    return MT_OK;
  }
  /* o has the final shape; its permuted view matches r's row layout */
  int64_t shape[MT_MAXDIM];
  int perm[MT_MAXDIM], n = 0;
  for (int d = 0; d < rank; d++)
    if (d != dim) perm[n++] = d;
  perm[n++] = dim;
  for (int i = 0; i < rank; i++) shape[perm[i]] = r->shape[i];
  mt_tensor *o = NULL, *v = NULL;
  if (!(st = mt_empty(shape, rank, (mt_dtype)r->dtype, mt_tdevice(r), &o)) && !(st = mt_permute(o, perm, rank, &v)))
    st = mt_copy_(v, r);
  mt_release(v);
  mt_release(r);
  if (st) {
    mt_release(o);
    return st;
  }
  *out = o;
  return MT_OK;
}

mt_status mt_upcast_half(const mt_tensor *x, mt_tensor **out) {
  mt_dtype dt = (mt_dtype)x->dtype;
  return mt_to_dtype(x, dt == MT_FLOAT16 || dt == MT_BFLOAT16 ? MT_FLOAT32 : dt, false, out);
}

void mt_push_dim(int64_t *size, int64_t *stride, int *n, int64_t sz, int64_t st) {
  if (*n > 0 && stride[*n - 1] == st * sz) {
    size[*n - 1] *= sz;
    stride[*n - 1] = st;
    return;
  }
  size[*n] = sz;
  stride[*n] = st;
  (*n)++;
}
