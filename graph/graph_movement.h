/* graph_movement.h -- recorded ops of the movement family (graph/movement.c), with the
 * engine's signatures (tensor/shape.h); included by graph.h. The copying ops
 * (cat, stack, flip, roll, tril/triu, diag, diag_embed, repeat) record a node
 * of their own; the composites (hstack, rot90, tile, movedim, meshgrid, ...)
 * are built from recorded ops, so they are differentiable too. */
#ifndef MTG_GRAPH_MOVEMENT_H
#define MTG_GRAPH_MOVEMENT_H

mt_status mtg_cat(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out);
mt_status mtg_stack(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out);
mt_status mtg_hstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_vstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_dstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_flip(const mt_tensor *t, const int *dims, int n, mt_tensor **out);
mt_status mtg_roll(const mt_tensor *t, const int64_t *shifts, const int *dims, int n, mt_tensor **out);
mt_status mtg_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out);
/* *out == t: in place (the history of t is rewritten) */
mt_status mtg_tril(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
mt_status mtg_triu(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
mt_status mtg_diag(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
mt_status mtg_diag_embed(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out);
mt_status mtg_repeat(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out);
mt_status mtg_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out);
/* views */
mt_status mtg_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out);
mt_status mtg_squeeze_dims(const mt_tensor *t, const int *dims, int n, mt_tensor **out);
mt_status mtg_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out);
mt_status mtg_atleast(const mt_tensor *t, int rank, mt_tensor **out);
mt_status mtg_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out);
mt_status mtg_meshgrid(mt_tensor *const *ts, int n, bool xy, mt_tensor **outs);

#endif
