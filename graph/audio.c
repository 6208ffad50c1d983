/* audio.c -- derivatives of the audio ops: resampling (tensor/resample.h)
 * and linear filters (tensor/audio.h).
 *
 * audio_resample is linear in its waveform: its derivative is its adjoint,
 * audio_resample_backward, whose derivative is audio_resample again; each
 * is the other applied to the incoming gradient, with the lengths read
 * from the node.
 *
 * lfilter is y = R A^-1 B R x (A, B the lower-triangular Toeplitz matrices
 * of a and b, R the time reversal when the op runs backwards). A and B
 * commute and Toeplitz matrices are persymmetric, so the adjoint of the
 * filter is the filter run the other way: gx = lfilter(g) reversed. The
 * coefficients' gradients correlate u = A^-T g (the IIR part run
 * backwards) with x (for b) and with -y (for a): lfilter_corr, whose own
 * derivatives are FIR filters of the other operand. A call that started
 * from a stream's state (zi) has the waveform's only (the state adds a
 * term that does not depend on x).
 *
 * Every derivative is written with recorded ops, so higher orders work. */
#include "audio.h"
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

/* lfilter's words: i = {mode, reverse} */
static mt_args lf_args(int64_t mode, int64_t reverse) {
  mt_args a = {.ni = 2};
  a.i[0] = mode, a.i[1] = reverse;
  return a;
}

static mt_tensor *filt(mtg_scope *s, const mt_tensor *x, const mt_tensor *a, const mt_tensor *b, int64_t mode,
                       int64_t reverse) {
  const mt_tensor *ins[3] = {x, a, b};
  mt_args w = lf_args(mode, reverse);
  return mtg_d_call(s, MT_OP_lfilter, ins, 3, &w);
}

static mt_tensor *corr(mtg_scope *s, const mt_tensor *u, const mt_tensor *x, int64_t K, int64_t reverse) {
  const mt_tensor *ins[2] = {u, x};
  mt_args w = lf_args(K, reverse);
  return mtg_d_call(s, MT_OP_lfilter_corr, ins, 2, &w);
}

/* lfilter (x, a, b): x, a, b in slots 0..2, y in the last */
static mt_status d_lfilter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (n->nin > 3 && (mtg_needs(n, 1) || mtg_needs(n, 2) || mtg_needs(n, 3)))
    return mt_fail(MT_EARG, "lfilter: no gradient wrt the coefficients or the state of a call that starts from a "
                            "stream's state (zi); filter the whole signal to differentiate them");
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int64_t mode = n->i[0], rev = n->i[1];
  mt_tensor *a = mtg_d_saved(s, 1), *b = mtg_d_saved(s, 2);
  int64_t K = n->in[1].shape[1];
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, filt(s, go[0], a, b, mode, !rev));
  bool ga = mtg_needs(n, 1) && mode != MT_LF_FIR, gb = mtg_needs(n, 2) && mode != MT_LF_IIR;
  mt_tensor *u = mode == MT_LF_FIR ? go[0] : (ga || gb) ? filt(s, go[0], a, b, MT_LF_IIR, !rev) : NULL;
  if (gb) gin[2] = mtg_keep(s, corr(s, u, mtg_d_saved(s, 0), K, rev));
  if (ga) gin[1] = mtg_keep(s, mtg_d_neg(s, corr(s, u, mtg_d_saved(s, MTG_SLOT_OUT), K, rev)));
  return mtg_scope_end(s, gin, n->nin);
}

/* lfilter_corr (w, x), both saved: out[c, k] = sum w[t] x[t -+ k] */
static mt_status d_lfilter_corr(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int64_t rev = n->i[1];
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, filt(s, mtg_d_saved(s, 1), go[0], go[0], MT_LF_FIR, rev));
  if (mtg_needs(n, 1)) gin[1] = mtg_keep(s, filt(s, mtg_d_saved(s, 0), go[0], go[0], MT_LF_FIR, !rev));
  return mtg_scope_end(s, gin, n->nin);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_audio_resample] = {d_audio_resample, 0},
    [MT_OP_audio_resample_backward] = {d_audio_resample_backward, 0},
    [MT_OP_lfilter] = {d_lfilter, MTG_SAVE_IN(0) | MTG_SAVE_IN(1) | MTG_SAVE_IN(2) | MTG_SAVE_OUT},
    [MT_OP_lfilter_corr] = {d_lfilter_corr, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
};

const mtg_deriv *mtg_deriv_audio(mt_op op) { return table[op].fn ? &table[op] : NULL; }
