/* views.h -- views as graph/ describes them (views.c): an int64 argument
 * list a[] whose a[0] is the view's op (MT_OP_slice, MT_OP_select,
 * MT_OP_diagonal, MT_OP_unfold, MT_OP_permute) or MTG_VK_AS_STRIDED. */
#ifndef MTG_VIEWS_H
#define MTG_VIEWS_H
#include "node.h"
#include "trace.h"

/* a = {MTG_VK_AS_STRIDED, ndim, offset relative to the input, shape..., strides...} */
#define MTG_VK_AS_STRIDED MT_NOPS
/* the same on the [..., 2] real pairs of a complex tensor (a write through
 * x.real or x.imag): the offset and strides count real elements */
#define MTG_VK_AS_STRIDED_PARTS (MT_NOPS + 1)

/* Applies view a to t (engine only, not recorded). */
mt_status mtg_apply_view(const int64_t *a, const mt_tensor *t, mt_tensor **out);
/* Applies view a to t and records it. */
mt_status mtg_view_op(const int64_t *a, const mt_tensor *t, mt_tensor **out);
/* Zeros of m's shape with g written into the view a of them (recorded). */
mt_status mtg_view_scatter(const mtg_meta_shape *m, const int64_t *a, const mt_tensor *g, mt_tensor **out);
/* The JIT's replays of views at an offset (trace.h's mtg_replay_fn): the
 * view's value (in[0] viewed by a), and the write through it (out[0], a
 * private copy of the base in[0], with in[1] copied into its view a). */
extern const mtg_replay_fn mtg_rp_view, mtg_rp_view_write;
/* Attaches the node f of an in-place op on v (CopySlices for views). */
mt_status mtg_attach_inplace(mtg_node *f, mt_tensor *v);
#endif
