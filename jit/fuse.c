/* fuse.c -- partition of the live IR into steps: fused kernels and the
 * single VIEW/EXTERN nodes between them. Elementwise nodes join the kernel
 * of their operands when their shape is the kernel's iteration space F or
 * its per-row shape; a reduction over F's trailing dims joins the kernel of
 * its input (producers fused into the reduction), and elementwise consumers
 * at the reduced shape or at F follow it. A node joins only a kernel that
 * runs after everything else it reads, so steps in creation order are a
 * valid schedule. Values read across steps are materialized. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static bool compute(const mtj_node *x) {
  return x->kind == JN_UNARY || x->kind == JN_BINARY || x->kind == JN_WHERE || x->kind == JN_CAST ||
         x->kind == JN_REDUCE;
}

static bool same_shape(mtj_graph *g, const mtj_dim *a, int na, const mtj_dim *b, int nb) {
  if (na != nb) return false;
  for (int d = 0; d < na; d++)
    if (!mtj_dim_eq(g, a[d], b[d])) return false;
  return true;
}

/* Is shape (sh, nd) the per-row shape of kernel k (dims [0, p) of F, then 1s)? */
static bool row_shaped(mtj_graph *g, const mtj_kernel *k, const mtj_dim *sh, int nd) {
  if (k->p < 0 || nd != k->ndim) return false;
  for (int d = 0; d < nd; d++) {
    if (d < k->p && !mtj_dim_eq(g, sh[d], k->F[d])) return false;
    if (d >= k->p && !(sh[d].sym < 0 && sh[d].c == 1)) return false;
  }
  return true;
}

static int new_step(mtj_graph *g, int kernel, int node) {
  mtj_step *s = realloc(g->steps, (size_t)(g->nsteps + 1) * sizeof *s);
  if (!s) return -1;
  g->steps = s;
  s[g->nsteps] = (mtj_step){kernel, node};
  return g->nsteps++;
}

static int new_kernel(mtj_graph *g, const mtj_dim *F, int nd, int p) {
  mtj_kernel *k = realloc(g->k, (size_t)(g->nk + 1) * sizeof *k);
  if (!k) return -1;
  g->k = k;
  memset(&k[g->nk], 0, sizeof *k);
  k[g->nk].ndim = nd, k[g->nk].p = p;
  memcpy(k[g->nk].F, F, (size_t)nd * sizeof *F);
  k[g->nk].step = new_step(g, g->nk, -1);
  if (k[g->nk].step < 0) return -1;
  return g->nk++;
}

/* The step a node's value comes from (-1: a graph input, scalar or constant). */
static int step_of(mtj_graph *g, int i) {
  const mtj_node *x = &g->n[i];
  if (x->kind == JN_VIEW || x->kind == JN_EXTERN || x->kind == JN_XOUT) return x->step;
  if (compute(x)) return g->k[x->kernel].step;
  return -1;
}

static bool fits(mtj_graph *g, const mtj_node *x, const mtj_kernel *k) {
  if (x->kind == JN_REDUCE) {
    const mtj_node *in = &g->n[x->a[0]];
    int p = in->ndim - (int)x->attr[0];
    return same_shape(g, in->shape, in->ndim, k->F, k->ndim) && (k->p < 0 || k->p == p);
  }
  return same_shape(g, x->shape, x->ndim, k->F, k->ndim) || row_shaped(g, k, x->shape, x->ndim);
}

mt_status mtj_fuse(mtj_graph *g) {
  for (int i = 0; i < g->nn; i++) {
    mtj_node *x = &g->n[i];
    x->kernel = -1, x->step = -1, x->mat = false;
    if (!x->live) continue;
    if (x->kind == JN_VIEW || x->kind == JN_EXTERN || x->kind == JN_XOUT) {
      x->step = new_step(g, -1, i);
      if (x->step < 0) return mt_fail(MT_ENOMEM, "out of memory");
      continue;
    }
    if (!compute(x)) continue;
    /* the latest kernel among compute operands, and the latest step read otherwise */
    int best = -1;
    for (int k = 0; k < MTJ_NA; k++)
      if (x->a[k] >= 0 && compute(&g->n[x->a[k]])) {
        int kk = g->n[x->a[k]].kernel;
        if (best < 0 || g->k[kk].step > g->k[best].step) best = kk;
      }
    int need = -1; /* steps that must run before x's kernel */
    for (int k = 0; k < MTJ_NA; k++)
      if (x->a[k] >= 0) {
        const mtj_node *o = &g->n[x->a[k]];
        if (compute(o) && o->kernel == best) continue;
        int s = step_of(g, x->a[k]);
        if (s > need) need = s;
      }
    int kid = -1;
    if (best >= 0 && g->k[best].step > need && fits(g, x, &g->k[best]) && g->k[best].nnodes < MTJ_KNODES) kid = best;
    if (kid < 0 && best < 0 && x->kind != JN_REDUCE) /* horizontal: a later kernel of the same space */
      for (int k = g->nk - 1; k >= 0 && g->k[k].step > need; k--)
        if (same_shape(g, x->shape, x->ndim, g->k[k].F, g->k[k].ndim) && g->k[k].nnodes < MTJ_KNODES) {
          kid = k;
          break;
        }
    if (kid < 0) {
      if (x->kind == JN_REDUCE) {
        const mtj_node *in = &g->n[x->a[0]];
        kid = new_kernel(g, in->shape, in->ndim, in->ndim - (int)x->attr[0]);
      } else {
        kid = new_kernel(g, x->shape, x->ndim, -1);
      }
      if (kid < 0) return mt_fail(MT_ENOMEM, "out of memory");
    }
    if (x->kind == JN_REDUCE) g->k[kid].p = g->n[x->a[0]].ndim - (int)x->attr[0];
    x->kernel = kid;
    g->k[kid].nnodes++;
  }
  /* materialize values read by another step, and the outputs */
  for (int i = 0; i < g->nn; i++) {
    mtj_node *x = &g->n[i];
    if (!x->live) continue;
    x->last_step = -1;
    for (int k = 0; k < MTJ_NA; k++) {
      if (x->a[k] < 0) continue;
      mtj_node *o = &g->n[x->a[k]];
      int here = x->kernel >= 0 ? g->k[x->kernel].step : x->step;
      if (compute(o) && (x->kernel < 0 || o->kernel != x->kernel)) o->mat = true;
      if (here > o->last_step) o->last_step = here;
    }
  }
  for (int k = 0; k < g->nout + g->nwb; k++) {
    mtj_node *o = &g->n[k < g->nout ? g->out[k] : g->wb[k - g->nout]];
    if (compute(o)) o->mat = true;
    o->last_step = g->nsteps; /* outputs and written-back values outlive every step */
  }
  /* a materialized value must be stored at F or per row */
  for (int i = 0; i < g->nn; i++) {
    mtj_node *x = &g->n[i];
    if (x->live && x->mat && x->kind != JN_REDUCE && !fits(g, x, &g->k[x->kernel]))
      return mt_fail(MT_EARG, "internal: a fused value cannot be stored");
  }
  return MT_OK;
}
