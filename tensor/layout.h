/* layout.h -- questions about and allocations in a tensor's memory layout
 * (layout.c): dense layouts other than the contiguous one, empty tensors
 * laid out like another, and stacks that already exist in memory as one
 * strided view (the pieces of an unbind, or q/k/v read from one buffer). */
#ifndef MT_LAYOUT_H
#define MT_LAYOUT_H

#include "mt.h"

/* True when t's elements fill a block of numel elements exactly once: some
 * permutation of its dims is contiguous (size-1 dims ignored). */
bool mt_dense_layout(const mt_tensor *t);
/* An uninitialised tensor of t's shape and dtype on dev, with t's strides
 * when t is dense (mt_dense_layout), else contiguous. */
mt_status mt_empty_like_layout(const mt_tensor *t, mt_device dev, mt_tensor **out);
/* A view equal to stack(ts, dim) without copying, when the n pieces are
 * same-shape, same-dtype, same-stride views of one storage whose offsets
 * step evenly (ts[i] = base + i * step): *out = that view of ts[0]'s
 * storage (no autograd base), else *out = NULL. dim is 0-based, 0..ndim. */
mt_status mt_stack_view(const mt_tensor *const *ts, int n, int dim, mt_tensor **out);
/* n uninitialised same-shape pieces laid out as the pieces of like (which
 * mt_stack_view saw as one stacked view along dim): one dense block holding
 * all of them, each piece at its place in it. Falls back to separate
 * mt_empty_like_layout pieces when the stacked view is not dense. */
mt_status mt_empty_pieces_like(const mt_tensor *const *like, int n, mt_device dev, mt_tensor **out);

#endif
