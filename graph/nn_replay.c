/* nn_replay.c -- the public pooling entry points (convolution goes through
 * the generic path, call.c, as a NAMED row): each runs
 * the recorded op (nn.c) and, while a JIT trace is active, appends an
 * extern entry whose replay function calls the engine op again with the
 * attributes packed into the entry's int words. */
#include <string.h>

#include "nn_internal.h"
#include "trace.h"
#include "replay_pool.h"

/* Attributes of the ops below, packed as int64 words. */
typedef struct pool_attr {
  mt_pool_opts o;
  int64_t nsp, ndim, shape[5]; /* backward ops: the input shape; adaptive: the output size */
} pool_attr;

static pool_attr pool_of(const mt_pool_opts *o, int nsp, const int64_t *shape, int ndim) {
  pool_attr a;
  memset(&a, 0, sizeof a);
  if (o) a.o = *o;
  a.nsp = nsp, a.ndim = ndim;
  for (int d = 0; d < ndim && d < 5; d++) a.shape[d] = shape[d];
  return a;
}

/* ---- replay functions (mtg_replay_fn) ---- */

static mt_status rp_max_pool(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  return mt_max_pool(in[0], &((const pool_attr *)w)->o, &out[0], &out[1]);
}
static mt_status rp_max_pool_backward(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  const pool_attr *a = (const pool_attr *)w;
  return mt_max_pool_backward(in[0], in[1], a->shape, (int)a->ndim, (int)a->nsp, &out[0]);
}
/* The JIT's compact max pool (jit/rewrite.c swaps these in): the same
 * attribute words as max_pool; the backward's carry the input shape and
 * the forward's options. */
static mt_status rp_max_pool_local(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  return mt_max_pool_local(in[0], &((const pool_attr *)w)->o, &out[0], &out[1]);
}
static mt_status rp_max_pool_local_backward(const int64_t *w, const double *f, const mt_tensor *const *in,
                                            mt_tensor **out) {
  const pool_attr *a = (const pool_attr *)w;
  return mt_max_pool_local_backward(in[0], in[1], a->shape, (int)a->ndim, &a->o, &out[0]);
}
const mtg_replay_fn mtg_rp_max_pool_local = rp_max_pool_local;
const mtg_replay_fn mtg_rp_max_pool_local_backward = rp_max_pool_local_backward;

bool mtg_pool_tiles(const int64_t *fwd) {
  const mt_pool_opts *o = &((const pool_attr *)fwd)->o;
  if (o->nsp != 2 || o->ceil_mode) return false;
  for (int i = 0; i < 2; i++)
    if ((o->stride[i] && o->stride[i] != o->kernel[i]) || o->pad[i] || o->dilation[i] != 1) return false;
  return o->kernel[0] * o->kernel[1] <= 256;
}

void mtg_pool_local_backward_attrs(const int64_t *fwd, int64_t *bwd) {
  ((pool_attr *)bwd)->o = ((const pool_attr *)fwd)->o;
}

static mt_status rp_avg_pool(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  return mt_avg_pool(in[0], &((const pool_attr *)w)->o, &out[0]);
}
static mt_status rp_avg_pool_backward(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  const pool_attr *a = (const pool_attr *)w;
  return mt_avg_pool_backward(in[0], a->shape, (int)a->ndim, &a->o, &out[0]);
}
static mt_status rp_adaptive_avg_pool(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  const pool_attr *a = (const pool_attr *)w;
  return mt_adaptive_avg_pool(in[0], (int)a->nsp, a->shape, &out[0]);
}
static mt_status rp_adaptive_avg_pool_backward(const int64_t *w, const double *f, const mt_tensor *const *in,
                                               mt_tensor **out) {
  const pool_attr *a = (const pool_attr *)w;
  return mt_adaptive_avg_pool_backward(in[0], a->shape, (int)a->ndim, (int)a->nsp, &out[0]);
}

/* Appends the entry unless the call wrote into a caller's out= tensor. */
static void trace(const char *name, mtg_replay_fn fn, bool given, const mt_tensor *const *ins, int nin,
                  mt_tensor *const *outs, int nout, const void *a, size_t n) {
  if (given) mtg_trace_refuse("%s with out= is not replayed by the JIT", name);
  else mtg_trace_call(name, fn, false, ins, nin, outs, nout, a, n, NULL, 0);
}

/* ---- the public entry points ---- */

mt_status mtg_max_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **indices) {
  bool given = *out != NULL || (indices && *indices);
  mt_tensor *ix = NULL;
  mt_status st = mtg_untraced_max_pool(x, o, out, indices ? indices : (MTG_TRACING() ? &ix : NULL));
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(o, o->nsp, NULL, 0);
    mt_tensor *outs[2] = {*out, indices ? *indices : ix};
    trace("max_pool", rp_max_pool, given, &x, 1, outs, 2, &a, sizeof a);
  }
  mt_release(ix);
  return st;
}

mt_status mtg_max_pool_backward(const mt_tensor *grad_out, const mt_tensor *indices, const int64_t *input_shape,
                                int ndim, int nsp, mt_tensor **grad_in) {
  bool given = *grad_in != NULL;
  mt_status st = mtg_untraced_max_pool_backward(grad_out, indices, input_shape, ndim, nsp, grad_in);
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(NULL, nsp, input_shape, ndim);
    const mt_tensor *ins[2] = {grad_out, indices};
    trace("max_pool_backward", rp_max_pool_backward, given, ins, 2, grad_in, 1, &a, sizeof a);
  }
  return st;
}

mt_status mtg_avg_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out) {
  bool given = *out != NULL;
  mt_status st = mtg_untraced_avg_pool(x, o, out);
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(o, o->nsp, NULL, 0);
    trace("avg_pool", rp_avg_pool, given, &x, 1, out, 1, &a, sizeof a);
  }
  return st;
}

mt_status mtg_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim, const mt_pool_opts *o,
                                mt_tensor **grad_in) {
  bool given = *grad_in != NULL;
  mt_status st = mtg_untraced_avg_pool_backward(grad_out, input_shape, ndim, o, grad_in);
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(o, o->nsp, input_shape, ndim);
    trace("avg_pool_backward", rp_avg_pool_backward, given, &grad_out, 1, grad_in, 1, &a, sizeof a);
  }
  return st;
}

mt_status mtg_adaptive_avg_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out) {
  bool given = *out != NULL;
  mt_status st = mtg_untraced_adaptive_avg_pool(x, nsp, output_size, out);
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(NULL, nsp, output_size, nsp);
    trace("adaptive_avg_pool", rp_adaptive_avg_pool, given, &x, 1, out, 1, &a, sizeof a);
  }
  return st;
}

mt_status mtg_adaptive_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim, int nsp,
                                         mt_tensor **grad_in) {
  bool given = *grad_in != NULL;
  mt_status st = mtg_untraced_adaptive_avg_pool_backward(grad_out, input_shape, ndim, nsp, grad_in);
  if (!st && MTG_TRACING()) {
    pool_attr a = pool_of(NULL, nsp, input_shape, ndim);
    trace("adaptive_avg_pool_backward", rp_adaptive_avg_pool_backward, given, &grad_out, 1, grad_in, 1, &a, sizeof a);
  }
  return st;
}
