/* generalize.c -- automatic dynamic sizes for static graphs. Graphs with
 * extern calls (convolutions, pooling, a training step) are built with
 * static sizes. When a second capture of the same function gives the same
 * graph with other sizes (a new batch size), the two graphs are compared
 * node by node: every size that differs becomes a symbol read from the
 * input dim whose (old, new) sizes are the same pair, integer attributes of
 * extern calls that differ (the input shape a backward op is told) are
 * patched from their symbol at run time, and constants that differ (1/N
 * of a mean over the batch) become runtime scalars computed from their
 * symbol. Anything else that differs, or a size no input explains, keeps
 * the graphs static. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Symbol whose input dims went from a to b, or -1. */
static int sym_of(const mtj_graph *g1, const mtj_graph *g2, int64_t a, int64_t b, const int *in_sym) {
  for (int k = 0; k < g2->nin; k++)
    for (int d = 0; d < g2->in[k].ndim; d++) {
      int s = in_sym[k * MT_MAXDIM + d];
      if (s >= 0 && g1->in[k].shape[d] == a && g2->in[k].shape[d] == b) return s;
    }
  return -1;
}

/* Same op, operands and attributes apart from sizes. */
static bool same_node(const mtj_node *x, const mtj_node *y) {
  return x->kind == y->kind && x->op == y->op && x->dtype == y->dtype && x->cdt == y->cdt && x->ndim == y->ndim &&
         !memcmp(x->a, y->a, sizeof x->a) && x->slot == y->slot && x->nattr == y->nattr && x->fn == y->fn &&
         x->inplace == y->inplace && x->live == y->live && !memcmp(x->f, y->f, sizeof x->f) && x->act == y->act &&
         (x->kind != JN_EXTERN || x->c == y->c);
}

static bool add_patch(mtj_graph *g, int node, int word, int sym) {
  if (g->npatch == MTJ_MAXPATCH) return false;
  g->patch[g->npatch].node = node, g->patch[g->npatch].word = word, g->patch[g->npatch].sym = sym;
  g->npatch++;
  return true;
}

/* A constant that differs: a runtime scalar from its symbol (N or 1/N). */
static bool const_scalar(mtj_graph *g, mtj_node *y, double c1, double c2, const mtj_graph *g1, const int *in_sym) {
  for (int inv = 0; inv < 2; inv++)
    for (int k = 0; k < g->nin; k++)
      for (int d = 0; d < g->in[k].ndim; d++) {
        int s = in_sym[k * MT_MAXDIM + d];
        if (s < 0) continue;
        double a = (double)g1->in[k].shape[d], b = (double)g->in[k].shape[d];
        if (inv) a = 1 / a, b = 1 / b;
        if (a == c1 && b == c2 && g->nxs < MTJ_MAXXS) {
          g->xs_sym[g->nxs] = s, g->xs_inv[g->nxs] = inv;
          y->kind = JN_SCALAR;
          y->slot = g->xs_base + g->nxs++;
          y->c = 0;
          return true;
        }
      }
  return false;
}

mt_status mtj_generalize(const mtj_graph *g1, mtj_graph *g2) {
  if (!g1->is_static || !g2->is_static || g1->nn != g2->nn || g1->nin != g2->nin || g1->nsc != g2->nsc ||
      g1->nout != g2->nout || g1->nwb != g2->nwb || memcmp(g1->out, g2->out, sizeof g1->out) ||
      memcmp(g1->wb, g2->wb, sizeof g1->wb))
    return mt_fail(MT_EARG, "the graph changed with the sizes");
  int in_sym[MTJ_MAXIN * MT_MAXDIM];
  for (int k = 0; k < MTJ_MAXIN * MT_MAXDIM; k++) in_sym[k] = -1;
  mtj_graph *g = g2;
  g->nsym = 0;
  for (int k = 0; k < g->nin; k++)
    for (int d = 0; d < MT_MAXDIM; d++) {
      int64_t a = d < g1->in[k].ndim ? g1->in[k].shape[d] : 0, b = d < g->in[k].ndim ? g->in[k].shape[d] : 0;
      if (d >= g->in[k].ndim || a == b) continue;
      if (a == 1 || b == 1) return mt_fail(MT_EARG, "a size changed to or from 1");
      int s = sym_of(g1, g, a, b, in_sym); /* an earlier dim with the same pair: same class */
      int n = g->nsym++;
      g->sym_in[n] = k, g->sym_dim[n] = d, g->sym_parent[n] = s >= 0 ? s : n;
      in_sym[k * MT_MAXDIM + d] = n;
    }
  if (!g->nsym) return mt_fail(MT_EARG, "no size changed");
  g->npatch = g->nxs = 0;
  for (int i = 0; i < g->nn; i++) {
    const mtj_node *x = &g1->n[i];
    mtj_node *y = &g->n[i];
    if (!same_node(x, y)) return mt_fail(MT_EARG, "the graph changed with the sizes");
    for (int d = 0; d < y->ndim; d++) {
      if (x->shape[d].c == y->shape[d].c) continue;
      int s = sym_of(g1, g, x->shape[d].c, y->shape[d].c, in_sym);
      if (s < 0) return mt_fail(MT_EARG, "a size no input explains changed");
      y->shape[d] = (mtj_dim){s, 0};
    }
    for (int w = 0; w < y->nattr; w++) {
      if (x->attr[w] == y->attr[w]) continue;
      int s = sym_of(g1, g, x->attr[w], y->attr[w], in_sym);
      if (s < 0 || !y->fn || !add_patch(g, i, w, s)) return mt_fail(MT_EARG, "an attribute changed with the sizes");
    }
    if (x->kind == JN_CONST && x->c != y->c && !const_scalar(g, y, x->c, y->c, g1, in_sym))
      return mt_fail(MT_EARG, "a constant changed with the sizes");
  }
  for (int k = 0; k < g->nin; k++) /* the input nodes' own dims */
    for (int i = 0; i < g->nn; i++)
      if (g->n[i].kind == JN_INPUT && g->n[i].slot == k)
        for (int d = 0; d < g->n[i].ndim; d++)
          if (in_sym[k * MT_MAXDIM + d] >= 0) g->n[i].shape[d] = (mtj_dim){in_sym[k * MT_MAXDIM + d], 0};
  g->is_static = false;
  g->generalized = true;
  /* fusion again over the symbolic sizes */
  free(g->k), g->k = NULL, g->nk = 0;
  free(g->steps), g->steps = NULL, g->nsteps = 0;
  free(g->text), g->text = NULL;
  return MT_OK;
}
