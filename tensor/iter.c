/* iter.c -- broadcasting iteration over strided operands. It computes byte
 * strides (0 on broadcast dims), merges dimensions that are contiguous for
 * every operand, and walks ranges of the flattened index space, in parallel
 * when large. It allocates nothing. */
#include <string.h>

#include "iter.h"

mt_status mt_iter_init(mt_iter *it, mt_tensor *const *ops, int nops, const char *opname) {
  const mt_tensor *o = ops[0];
  int nd = o->ndim;
  it->nops = nops;
  it->numel = mt_numel(o);
  for (int k = 0; k < nops; k++) {
    const mt_tensor *t = ops[k];
    /* the CPU loops below would read device memory: an op without a CUDA
     * path that reaches here from C (a derivative) stops with its name */
    if (mt_tdevice(t).type != MT_CPU) return mt_fail(MT_EDEVICE, "%s: not implemented on CUDA yet", opname);
    if (t->ndim > nd) goto mismatch;
    int64_t es = (int64_t)mt_elsize(t);
    it->data[k] = mt_data(t);
    /* align t's dims to the right of o's */
    for (int d = 0; d < nd; d++) {
      int td = d - (nd - t->ndim);
      int64_t st = 0;
      if (td >= 0) {
        if (t->shape[td] == o->shape[d])
          st = t->strides[td] * es;
        else if (t->shape[td] == 1)
          st = 0;
        else
          goto mismatch;
      }
      it->strides[k][nd - 1 - d] = st;
    }
  }
  for (int d = 0; d < nd; d++) it->shape[nd - 1 - d] = o->shape[d];
  /* drop size-1 dims, then merge neighbours that are contiguous for all */
  int w = 0;
  for (int d = 0; d < nd; d++) {
    if (it->shape[d] == 1) continue;
    it->shape[w] = it->shape[d];
    for (int k = 0; k < nops; k++) it->strides[k][w] = it->strides[k][d];
    w++;
  }
  nd = w;
  if (nd > 1) {
    int m = 0;
    for (int d = 1; d < nd; d++) {
      bool can = true;
      for (int k = 0; k < nops && can; k++)
        can = it->strides[k][d] == it->strides[k][m] * it->shape[m];
      if (can) {
        it->shape[m] *= it->shape[d];
      } else {
        m++;
        it->shape[m] = it->shape[d];
        for (int k = 0; k < nops; k++) it->strides[k][m] = it->strides[k][d];
      }
    }
    nd = m + 1;
  }
  if (nd == 0) { /* a single element */
    nd = 1;
    it->shape[0] = 1;
    for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
  }
  it->ndim = nd;
  return MT_OK;
mismatch:;
  char a[128], b[128];
  for (int k = 1; k < nops; k++) {
    const mt_tensor *t = ops[k];
    bool ok = t->ndim <= o->ndim;
    for (int d = 0; ok && d < t->ndim; d++) {
      int64_t s = t->shape[t->ndim - 1 - d];
      ok = s == 1 || s == o->shape[o->ndim - 1 - d];
    }
    if (!ok)
      return mt_fail(MT_ESHAPE, "%s: shape %s cannot be broadcast to shape %s", opname,
                     mt_shape_str(t->shape, t->ndim, a, sizeof a), mt_shape_str(o->shape, o->ndim, b, sizeof b));
  }
  return mt_fail(MT_ESHAPE, "%s: output shape %s does not match", opname,
                 mt_shape_str(o->shape, o->ndim, a, sizeof a));
}

bool mt_iter_is_contiguous(const mt_iter *it, const size_t *elsizes) {
  if (it->ndim != 1) return false;
  for (int k = 0; k < it->nops; k++)
    if (it->strides[k][0] != (int64_t)elsizes[k]) return false;
  return true;
}

typedef struct {
  const mt_iter *it;
  mt_loop_fn fn;
  void *ctx;
} run_ctx;

/* Visits flat indices [begin, end): inner rows are cut at the range ends. */
static void run_range(void *p, int64_t begin, int64_t end) {
  const run_ctx *rc = p;
  const mt_iter *it = rc->it;
  int nd = it->ndim, nops = it->nops;
  int64_t idx[MT_MAXDIM];
  int64_t rem = begin;
  for (int d = 0; d < nd; d++) {
    idx[d] = rem % it->shape[d];
    rem /= it->shape[d];
  }
  char *ptr[MT_ITER_MAXOPS];
  int64_t inner[MT_ITER_MAXOPS];
  for (int k = 0; k < nops; k++) {
    char *p0 = it->data[k];
    for (int d = 0; d < nd; d++) p0 += idx[d] * it->strides[k][d];
    ptr[k] = p0;
    inner[k] = it->strides[k][0];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = it->shape[0] - idx[0];
    if (n > end - pos) n = end - pos;
    char *cur[MT_ITER_MAXOPS];
    memcpy(cur, ptr, sizeof cur);
    rc->fn(cur, inner, n, rc->ctx);
    pos += n;
    if (pos >= end) break;
    /* advance to the start of the next row */
    for (int k = 0; k < nops; k++) ptr[k] += (it->shape[0] - idx[0]) * inner[k];
    idx[0] = 0;
    for (int k = 0; k < nops; k++) ptr[k] -= it->shape[0] * inner[k];
    for (int d = 1; d < nd; d++) {
      idx[d]++;
      for (int k = 0; k < nops; k++) ptr[k] += it->strides[k][d];
      if (idx[d] < it->shape[d]) break;
      for (int k = 0; k < nops; k++) ptr[k] -= it->shape[d] * it->strides[k][d];
      idx[d] = 0;
    }
  }
}

mt_status mt_iter_run(const mt_iter *it, mt_loop_fn fn, void *ctx, int64_t grain) {
  if (it->numel == 0) return MT_OK;
  run_ctx rc = {it, fn, ctx};
  if (it->numel < 2 * grain) { /* one thread, in order; Ctrl-C is looked at between pieces */
    for (int64_t b = 0; b < it->numel; b += MT_POLL_WORK) {
      if (b > 0 && mt_interrupted()) return mt_fail(MT_EINTR, "interrupted");
      run_range(&rc, b, b + MT_POLL_WORK < it->numel ? b + MT_POLL_WORK : it->numel);
    }
    return MT_OK;
  }
  return mt_parallel_for(it->numel, grain, run_range, &rc);
}
