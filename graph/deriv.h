/* deriv.h -- the derivative registry shared by the recording files and
 * derivatives.c: for each op, its backward function and which of its
 * operands and results the backward needs saved. */
#ifndef MTG_DERIV_H
#define MTG_DERIV_H
#include "node.h"

#define MTG_SAVE_IN(i) (1u << (i)) /* input i, in saved slot i */
#define MTG_SAVE_OUT (1u << 7)     /* the result, in slot MTG_MAXSAVED - 1 */
#define MTG_SAVE_CROSS (1u << 8)   /* binary: each input only for the other's gradient (mul) */
#define MTG_SAVE_OUT1 (1u << 9)    /* result 1 (two-result ops), in slot MTG_MAXSAVED - 2 */
#define MTG_SAVE_IDX1                                                                                                  \
  (1u << 10) /* result 1 is indices: no gradient, kept as data in slot 0 (the node has one output) */
#define MTG_SAVE_RESULTS (1u << 11) /* each result k (when not NULL) in slot k, as output k (decompositions) */
#define MTG_NOGRAD(k)                                                                                                  \
  (1u << (12 + (k))) /* result k (k < 8) gets no history and no gradient (slogdet's sign, lstsq's rank) */
#define MTG_SLOT_OUT (MTG_MAXSAVED - 1)
#define MTG_MAXOUT 8 /* results of one recorded call */

typedef struct mtg_deriv {
  mtg_backward_fn fn;
  unsigned saves;
  /* what the saves bits cannot say (optional): saves extras made from the
   * call's inputs, arguments and results (advanced indexing packs its index
   * tensors into one saved tensor; the norms keep statistics, results 1 and
   * 2, in slots 2 and 3) into node n, after the bits' saves */
  mt_status (*save)(mtg_node *n, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor *const *outs,
                    int nout);
  /* the node's name when it depends on the call (optional; scatter's value
   * form is ScatterBackward1, as in PyTorch); else mtg_backward_name */
  const char *(*name)(const mt_tensor *const *ins, int nin);
} mtg_deriv;

/* The derivative of op, or NULL (derivatives.c: looks through the
 * families' tables below). */
const mtg_deriv *mtg_deriv_of(mt_op op);
const mtg_deriv *mtg_deriv_ew(mt_op op);     /* d_elementwise.c */
const mtg_deriv *mtg_deriv_view(mt_op op);   /* views.c */
const mtg_deriv *mtg_deriv_reduce(mt_op op); /* reduce.c */
const mtg_deriv *mtg_deriv_linalg(mt_op op);   /* linalg.c */
const mtg_deriv *mtg_deriv_movement(mt_op op); /* movement.c */
const mtg_deriv *mtg_deriv_index(mt_op op);    /* index.c */
const mtg_deriv *mtg_deriv_select(mt_op op);   /* select.c (reduce family; reached through mtg_deriv_reduce) */
const mtg_deriv *mtg_deriv_nn(mt_op op);       /* nn.c */
const mtg_deriv *mtg_deriv_attention(mt_op op); /* attention.c */
const mtg_deriv *mtg_deriv_vision(mt_op op);    /* vision.c */
const mtg_deriv *mtg_deriv_fft(mt_op op);       /* fft.c */
const mtg_deriv *mtg_deriv_audio(mt_op op);     /* audio.c */
/* "ExpBackward0" for MT_OP_exp: PyTorch's node names (derivatives.c). */
const char *mtg_backward_name(mt_op op);
/* Records an elementwise op (elementwise.c): see there. */
mt_status mtg_record_ew(mt_op op, const mt_tensor *const *ins, int nin, mt_tensor **out,
                        mt_status (*run)(void *ctx, mt_tensor **out), void *ctx, const double *fargs, int nf);
/* The gradient of a result picked among x's elements (amax, amin, max
 * and min of all elements, ...) split evenly among the elements equal to
 * it (all of the NaNs when it is NaN), as in PyTorch; i[0] the reduced
 * dims' mask, i[1] keepdim, x in slot 0, the result in the last (reduce.c). */
mt_status mtg_d_evenly(mtg_node *n, mt_tensor *const *go, mt_tensor **gin);
#endif
