/* nn_replay.c -- the JIT's compact max pool: the replay functions that
 * jit/rewrite.c swaps into traced max_pool / max_pool_backward calls (the
 * pooling rows are NAMED: graph/call.c traces them with their args, the
 * words of mt_pool_words, which these functions read too). */
#include "nn.h"
#include "replay_pool.h"
#include "trace.h"

typedef mt_pool_words pool_attr;

/* The same attribute words as max_pool; the backward's carry the input
 * shape and the forward's options. */
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
