/* audio.c -- derivatives of the audio ops (tensor/resample.h).
 * audio_resample is linear in its waveform: its derivative is its adjoint,
 * audio_resample_backward, whose derivative is audio_resample again; each
 * is the other applied to the incoming gradient, with the lengths read
 * from the node. Written with recorded ops, so higher orders work. */
#include "deriv.h"

/* The node's arguments with out_len (i[5]) and in_len (i[6]) set. */
static mt_args args_of(const mtg_node *n, int64_t out_len, int64_t in_len) {
  mt_args a = {.ni = 8, .nf = 2};
  for (int k = 0; k < 5; k++) a.i[k] = n->i[k];
  a.i[5] = out_len, a.i[6] = in_len, a.i[7] = n->i[7];
  a.f[0] = n->f[0], a.f[1] = n->f[1];
  return a;
}

static int64_t last_dim(const mtg_meta_shape *m) { return m->shape[m->ndim - 1]; }

/* audio_resample (x): the adjoint of the gradient, x's length */
static mt_status d_audio_resample(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_args a = args_of(n, last_dim(&n->out[0]), last_dim(&n->in[0]));
  const mt_tensor *ins[1] = {go[0]};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_audio_resample_backward, ins, 1, &a));
  return mtg_scope_end(s, gin, n->nin);
}

/* audio_resample_backward (g): the filter of the gradient, g's length */
static mt_status d_audio_resample_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_args a = args_of(n, last_dim(&n->in[0]), last_dim(&n->out[0]));
  const mt_tensor *ins[1] = {go[0]};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_audio_resample, ins, 1, &a));
  return mtg_scope_end(s, gin, n->nin);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_audio_resample] = {d_audio_resample, 0},
    [MT_OP_audio_resample_backward] = {d_audio_resample_backward, 0},
};

const mtg_deriv *mtg_deriv_audio(mt_op op) { return table[op].fn ? &table[op] : NULL; }
