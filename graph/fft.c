/* fft.c -- derivatives of the transforms (tensor/fft.h), each a transform:
 * c2c's adjoint is the opposite-sign c2c with the same scale; r2c's is
 * the gradient zero-padded to the full spectrum, a backward c2c, its real
 * part; c2r's is r2c of the gradient with the bins that stand for two
 * (all but the self-conjugate ones) doubled, as in PyTorch. Written with
 * recorded ops, so higher orders work. */
#include "deriv.h"
#include "graph.h"

#define LIVE(s) ((s)->st == MT_OK)

/* The highest dim of a mask (the last transformed dim). */
static int last_dim(int64_t mask) {
  int d = 0;
  while (mask >> (d + 1)) d++;
  return d;
}

static mt_tensor *narrow(mtg_scope *s, const mt_tensor *x, int dim, int64_t start, int64_t len) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_narrow(x, dim, start, len, &r);
  return mtg_track(s, st, r);
}

static mt_tensor *cat(mtg_scope *s, mt_tensor *const *ts, int n, int dim) {
  if (!LIVE(s)) return NULL;
  for (int i = 0; i < n; i++)
    if (!ts[i]) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_join(MT_OP_cat, ts, n, dim, &r);
  return mtg_track(s, st, r);
}

/* fft_c2c: i = {mask, forward, norm} */
static mt_status d_c2c(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_args a = {.i = {n->i[0], !n->i[1], n->i[2]}, .ni = 3};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_fft_c2c, (const mt_tensor *[]){go[0]}, 1, &a));
  return mtg_scope_end(s, gin, n->nin);
}

/* fft_r2c: i = {mask, norm, two-sided}; x's last transformed dim has n
 * points, the gradient's n / 2 + 1 bins (n when two-sided: no padding) */
static mt_status d_r2c(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) {
    int d = last_dim(n->i[0]);
    int64_t full = n->in[0].shape[d], half = go[0]->shape[d];
    mt_tensor *g = go[0];
    if (full > half) {
      mtg_meta_shape m = {.ndim = go[0]->ndim, .dtype = go[0]->dtype, .device = mt_tdevice(go[0])};
      for (int k = 0; k < m.ndim; k++) m.shape[k] = go[0]->shape[k];
      m.shape[d] = full - half;
      g = cat(s, (mt_tensor *[]){go[0], mtg_d_zeros(s, &m)}, 2, d);
    }
    mt_args a = {.i = {n->i[0], 0, n->i[1]}, .ni = 3};
    mt_tensor *c = mtg_d_call(s, MT_OP_fft_c2c, (const mt_tensor *[]){g}, 1, &a), *re = NULL;
    if (c) {
      mt_status st = mtg_select(c, c->ndim - 1, 0, &re);
      re = mtg_track(s, st, re);
    }
    gin[0] = mtg_keep(s, re);
  }
  return mtg_scope_end(s, gin, n->nin);
}

/* fft_c2r: i = {mask, lastn, norm}: bins 1 .. lastn - (lastn / 2 + 1) count twice */
static mt_status d_c2r(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) {
    int d = last_dim(n->i[0]);
    int64_t lastn = n->i[1], half = lastn / 2 + 1, twice = lastn - half;
    mt_args a = {.i = {n->i[0], n->i[2], 0}, .ni = 3};
    mt_tensor *r = mtg_d_call(s, MT_OP_fft_r2c, (const mt_tensor *[]){go[0]}, 1, &a);
    if (twice > 0) {
      mt_tensor *parts[3] = {narrow(s, r, d, 0, 1), mtg_d_scale(s, narrow(s, r, d, 1, twice), 2), NULL};
      int np = 2;
      if (half - 1 - twice > 0) parts[np++] = narrow(s, r, d, 1 + twice, half - 1 - twice);
      r = cat(s, parts, np, d);
    }
    gin[0] = mtg_keep(s, r);
  }
  return mtg_scope_end(s, gin, n->nin);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_fft_c2c] = {d_c2c, 0},
    [MT_OP_fft_r2c] = {d_r2c, 0},
    [MT_OP_fft_c2r] = {d_c2r, 0},
};

const mtg_deriv *mtg_deriv_fft(mt_op op) { return table[op].fn ? &table[op] : NULL; }
