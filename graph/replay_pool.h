/* replay_pool.h -- for jit/rewrite.c: the replay functions of the compact
 * max pool (graph/nn_replay.c; mt_max_pool_local in tensor/nn.h) and the
 * attribute words they read. */
#ifndef MTG_REPLAY_POOL_H
#define MTG_REPLAY_POOL_H
#include "trace.h"

extern const mtg_replay_fn mtg_rp_max_pool_local, mtg_rp_max_pool_local_backward;
/* True when a traced max_pool call with attribute words fwd has windows
 * that tile the plane (2-D, stride == kernel, no padding, dilation or
 * ceil_mode, at most 256 window positions). */
bool mtg_pool_tiles(const int64_t *fwd);
/* Gives the attribute words of a traced max_pool_backward (bwd: the input
 * shape) the options of its forward call (fwd). */
void mtg_pool_local_backward_attrs(const int64_t *fwd, int64_t *bwd);

#endif
