/* meta.c -- the autograd state attached to tensors (mt_tensor.autograd):
 * grad mode, requires_grad, .grad, the producing node, leaves' accumulate
 * nodes, hooks, detach. Tensors outside any graph carry no state at all. */
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "trace.h"

static _Thread_local bool grad_off; /* grad mode is on unless set */

/* autograd states are recycled through a per-thread free list */
#define KEEP_METAS 4096
static _Thread_local void *meta_pool;
static _Thread_local int meta_count;

bool mtg_grad_enabled(void) { return !grad_off; }

bool mtg_set_grad_enabled(bool on) {
  bool prev = !grad_off;
  grad_off = !on;
  return prev;
}

mtg_meta *mtg_meta_of(const mt_tensor *t) { return (mtg_meta *)t->autograd; }

/* Clears every weak pointer to t (accumulate node, retain_grad entries)
 * and drops t's references; installed as the engine's free hook. */
static void meta_free(mt_tensor *t) {
  mtg_meta *m = t->autograd;
  t->autograd = NULL;
  if (m->grad_fn)
    for (mtg_hook *h = m->grad_fn->hooks; h; h = h->next)
      if (!h->fn && h->ctx == t) h->ctx = NULL;
  if (m->accum) {
    m->accum->leaf = NULL;
    for (mtg_hook *h = m->accum->hooks; h; h = h->next)
      if (!h->fn && h->ctx == t) h->ctx = NULL;
    mtg_node_release(m->accum);
  }
  mtg_node_release(m->grad_fn);
  mt_release(m->grad);
  if (meta_count < KEEP_METAS) {
    *(void **)m = meta_pool;
    meta_pool = m;
    meta_count++;
  } else {
    free(m);
  }
}

mt_status mtg_meta_get(mt_tensor *t, mtg_meta **out) {
  if (!t->autograd) {
    mtg_meta *m = meta_pool;
    if (m) {
      meta_pool = *(void **)m;
      meta_count--;
      memset(m, 0, sizeof *m);
    } else if (!(m = calloc(1, sizeof *m))) {
      return mt_fail(MT_ENOMEM, "out of memory (autograd state)");
    }
    mt_autograd_free_hook = meta_free;
    t->autograd = m;
  }
  *out = t->autograd;
  return MT_OK;
}

bool mtg_requires_grad(const mt_tensor *t) {
  const mtg_meta *m = t->autograd;
  return m && m->requires_grad;
}

bool mtg_is_leaf(const mt_tensor *t) {
  const mtg_meta *m = t->autograd;
  return !m || !m->grad_fn;
}

mt_status mtg_set_requires_grad(mt_tensor *t, bool on) {
  mtg_meta *m = t->autograd;
  if (m && m->grad_fn) {
    if (on) return MT_OK;
    return mt_fail(MT_EARG, "requires_grad: only leaf tensors can stop requiring grad; this one comes from %s "
                            "(use x:detach() for a copy outside the graph)", m->grad_fn->name);
  }
  if (on && !mt_is_inexact((mt_dtype)t->dtype))
    return mt_fail(MT_EDTYPE, "requires_grad: only floating point tensors can require gradients (and complex ones), got %s",
                   mt_dtype_name((mt_dtype)t->dtype));
  if (!m && !on) return MT_OK;
  mt_status st = mtg_meta_get(t, &m);
  if (st) return st;
  m->requires_grad = on;
  return MT_OK;
}

mt_tensor *mtg_grad(const mt_tensor *t) {
  const mtg_meta *m = t->autograd;
  return m ? m->grad : NULL;
}

mt_status mtg_set_grad(mt_tensor *t, mt_tensor *g) {
  mtg_meta *m;
  if (!g && !t->autograd) return MT_OK;
  if (g) {
    bool same = g->ndim == t->ndim && g->dtype == t->dtype;
    for (int i = 0; same && i < t->ndim; i++) same = g->shape[i] == t->shape[i];
    if (!same) {
      char a[128], b[128];
      return mt_fail(MT_ESHAPE, "grad: assigned gradient has shape %s (%s) but the tensor has shape %s (%s)",
                     mt_shape_str(g->shape, g->ndim, a, sizeof a), mt_dtype_name((mt_dtype)g->dtype),
                     mt_shape_str(t->shape, t->ndim, b, sizeof b), mt_dtype_name((mt_dtype)t->dtype));
    }
  }
  mt_status st = mtg_meta_get(t, &m);
  if (st) return st;
  mt_retain(g);
  mt_release(m->grad);
  m->grad = g;
  if (MTG_TRACING()) mtg_trace_set_grad(t, g);
  return MT_OK;
}

mtg_node *mtg_grad_fn(const mt_tensor *t) {
  const mtg_meta *m = t->autograd;
  return m ? m->grad_fn : NULL;
}

const char *mtg_node_name(const mtg_node *n) { return n->name; }

/* The accumulate node of leaf t (made on first use; owned by t's state). */
static mt_status accum_of(mt_tensor *t, mtg_node **out) {
  mtg_meta *m = t->autograd;
  if (!m->accum) {
    mt_status st = mtg_node_new("AccumulateGrad", NULL, NULL, 0, &t, 1, &m->accum);
    if (st) return st;
    m->accum->leaf = t;
  }
  *out = m->accum;
  return MT_OK;
}

mt_status mtg_edge_of(const mt_tensor *t, mtg_edge *e) {
  mtg_meta *m = t->autograd;
  e->node = NULL;
  e->input_nr = 0;
  if (!m || !m->requires_grad) return MT_OK;
  if (m->grad_fn) {
    e->node = m->grad_fn;
    e->input_nr = m->output_nr;
    return MT_OK;
  }
  return accum_of((mt_tensor *)t, &e->node);
}

mt_status mtg_set_history(mt_tensor *t, mtg_node *n, int nr) {
  mtg_meta *m;
  mt_status st = mtg_meta_get(t, &m);
  if (st) return st;
  mtg_node_retain(n);
  mtg_node_release(m->grad_fn);
  m->grad_fn = n;
  m->output_nr = nr;
  m->requires_grad = true;
  return MT_OK;
}

mt_status mtg_retain_grad(mt_tensor *t) {
  mtg_meta *m = t->autograd;
  if (!m || !m->requires_grad)
    return mt_fail(MT_EARG, "retain_grad: the tensor does not require grad");
  if (!m->grad_fn || m->retains_grad) return MT_OK; /* leaves keep .grad anyway */
  mtg_hook *h = calloc(1, sizeof *h);
  if (!h) return mt_fail(MT_ENOMEM, "out of memory");
  h->output_nr = m->output_nr;
  h->ctx = t;
  mtg_hook **p = &m->grad_fn->hooks;
  while (*p) p = &(*p)->next;
  *p = h;
  m->retains_grad = true;
  return MT_OK;
}

bool mtg_retains_grad(const mt_tensor *t) {
  const mtg_meta *m = t->autograd;
  return m && m->retains_grad;
}

mt_status mtg_register_hook(mt_tensor *t, mtg_hook_fn fn, void *ctx, void (*free_ctx)(void *)) {
  mtg_meta *m = t->autograd;
  if (!m || !m->requires_grad)
    return mt_fail(MT_EARG, "register_hook: cannot register a hook on a tensor that does not require grad");
  mtg_node *n = m->grad_fn;
  int nr = m->output_nr;
  if (!n) {
    mt_status st = accum_of(t, &n);
    if (st) return st;
    nr = 0;
  }
  mtg_hook *h = calloc(1, sizeof *h);
  if (!h) return mt_fail(MT_ENOMEM, "out of memory");
  h->output_nr = nr;
  h->fn = fn;
  h->ctx = ctx;
  h->free_ctx = free_ctx;
  mtg_hook **p = &n->hooks;
  while (*p) p = &(*p)->next;
  *p = h;
  return MT_OK;
}

mt_status mtg_detach(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_alias(t, &r);
  if (st) return st;
  if (MTG_TRACING()) mtg_trace_alias(r, t);
  return mt_deliver("detach", r, out);
}

mt_status mtg_detach_(mt_tensor *t) {
  mtg_meta *m = t->autograd;
  if (!m) return MT_OK;
  mtg_node_release(m->grad_fn);
  m->grad_fn = NULL;
  m->requires_grad = false;
  return MT_OK;
}
