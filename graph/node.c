/* node.c -- graph nodes: creation when an op is recorded, edges to the
 * nodes of the inputs, saved tensors with their version check, reference
 * counting. A node owns its edges' nodes, its saved tensors and its hooks;
 * outputs own their node, never the other way round (no cycles). */
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "trace.h"

static _Thread_local uint64_t next_seq;

/* Nodes with up to SMALL_IN inputs and one output come from a per-thread
 * free list: eager training makes and frees a few per op. */
#define SMALL_IN 3
#define SMALL_SIZE (sizeof(mtg_node) + SMALL_IN * (sizeof(mtg_edge) + sizeof(mtg_meta_shape)) + sizeof(mtg_meta_shape))
#define KEEP_NODES 4096
static _Thread_local void *node_free;
static _Thread_local int node_count;

static size_t node_size(int nin, int nout) {
  return sizeof(mtg_node) + (size_t)nin * (sizeof(mtg_edge) + sizeof(mtg_meta_shape)) +
         (size_t)nout * sizeof(mtg_meta_shape);
}

static bool small_node(int nin, int nout) { return nin <= SMALL_IN && nout <= 1; }

static mtg_node *node_alloc(int nin, int nout) {
  if (!small_node(nin, nout)) return calloc(1, node_size(nin, nout));
  void *p = node_free;
  if (!p) return calloc(1, SMALL_SIZE);
  node_free = *(void **)p;
  node_count--;
  memset(p, 0, SMALL_SIZE);
  return p;
}

static void node_dealloc(mtg_node *n) {
  if (!small_node(n->nin, n->nout) || node_count >= KEEP_NODES) {
    free(n);
    return;
  }
  *(void **)n = node_free;
  node_free = n;
  node_count++;
}

bool mtg_any_requires_grad(const mt_tensor *const *ts, int n) {
  if (!mtg_grad_enabled()) return false;
  for (int i = 0; i < n; i++)
    if (ts[i] && mtg_requires_grad(ts[i])) return true;
  return false;
}

static void shape_of(mtg_meta_shape *m, const mt_tensor *t) {
  m->ndim = t->ndim;
  m->dtype = t->dtype;
  m->device = mt_tdevice(t);
  if (t->ndim) memcpy(m->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
}

mt_status mtg_node_new(const char *name, mtg_backward_fn fn, const mt_tensor *const *ins, int nin,
                       mt_tensor *const *outs, int nout, mtg_node **out) {
  mtg_node *n = node_alloc(nin, nout);
  if (!n) return mt_fail(MT_ENOMEM, "out of memory (graph node)");
  n->in = (mtg_meta_shape *)(n + 1);
  n->out = n->in + nin;
  n->next = (mtg_edge *)(n->out + nout);
  n->refs = 1;
  n->name = name;
  n->backward = fn;
  n->seq = ++next_seq;
  n->nin = nin;
  n->nout = nout;
  for (int i = 0; i < nin; i++) {
    if (!ins[i]) continue;
    shape_of(&n->in[i], ins[i]);
    mt_status st = mtg_edge_of(ins[i], &n->next[i]);
    if (st) {
      mtg_node_release(n);
      return st;
    }
    mtg_node_retain(n->next[i].node);
  }
  for (int k = 0; outs && k < nout; k++)
    if (outs[k]) shape_of(&n->out[k], outs[k]);
  *out = n;
  return MT_OK;
}

mt_status mtg_attach(mtg_node *n, mt_tensor *const *outs, int nout) {
  mt_status st = MT_OK;
  for (int k = 0; k < nout && !st; k++)
    if (outs[k]) st = mtg_set_history(outs[k], n, k);
  mtg_node_release(n);
  return st;
}

mtg_node *mtg_record1(const char *name, mtg_backward_fn fn, const mt_tensor *const *ins, int nin, mt_tensor *out,
                      mt_status *st) {
  mtg_node *n = NULL;
  if ((*st = mtg_node_new(name, fn, ins, nin, &out, 1, &n))) return NULL;
  if ((*st = mtg_set_history(out, n, 0))) {
    mtg_node_release(n);
    return NULL;
  }
  mtg_node_release(n); /* out holds it now */
  return n;
}

mtg_node *mtg_node_retain(mtg_node *n) {
  if (n) n->refs++;
  return n;
}

void mtg_node_release_saved(mtg_node *n) {
  for (int k = 0; k < MTG_MAXSAVED; k++) {
    mt_release(n->saved[k].t);
    n->saved[k].t = NULL;
  }
  n->released = true;
  if (n->sub) mtg_node_release_saved(n->sub);
  if (n->ext_free) n->ext_free(n->ext); /* a custom node's saved state goes with the saved tensors */
  n->ext = NULL, n->ext_free = NULL;
}

/* Nodes are freed iteratively: a long chain (an RNN unrolled over many
 * steps) would otherwise recurse once per node. */
void mtg_node_release(mtg_node *n) {
  static _Thread_local mtg_node *pending;
  static _Thread_local bool draining;
  if (!n || --n->refs > 0) return;
  n->buf = (mt_tensor **)pending; /* reuse the scratch field as a list link */
  pending = n;
  if (draining) return;
  draining = true;
  while (pending) {
    mtg_node *x = pending;
    pending = (mtg_node *)x->buf;
    for (int k = 0; k < MTG_MAXSAVED; k++) mt_release(x->saved[k].t);
    for (mtg_hook *h = x->hooks, *nx; h; h = nx) {
      nx = h->next;
      if (h->free_ctx) h->free_ctx(h->ctx);
      free(h);
    }
    for (int i = 0; i < x->nin; i++) mtg_node_release(x->next[i].node);
    mtg_node_release(x->sub);
    if (x->ext_free) x->ext_free(x->ext);
    node_dealloc(x);
  }
  draining = false;
}

mt_status mtg_save(mtg_node *n, int k, const mt_tensor *t, bool is_output, int nr) {
  mtg_saved *s = &n->saved[k];
  mt_release(s->t);
  s->t = NULL;
  if (is_output) { /* an alias without autograd state: no cycle back to n */
    mt_status st = mt_alias(t, &s->t);
    if (!st) mtg_trace_alias(s->t, t);
    if (st) return st;
  } else {
    s->t = mt_retain((mt_tensor *)t);
  }
  s->version = t->storage->version;
  s->is_output = is_output;
  s->output_nr = nr;
  if (k >= n->nsaved) n->nsaved = k + 1;
  return MT_OK;
}

mt_status mtg_unpack(mtg_node *n, int k, mt_tensor **out) {
  mtg_saved *s = &n->saved[k];
  if (n->released)
    return mt_fail(MT_EARG, "backward through %s a second time: its saved tensors were freed by the first backward "
                            "(pass retain_graph=true to the first backward to keep them)", n->name);
  if (!s->t) return mt_fail(MT_EARG, "%s: saved tensor %d is missing (internal error)", n->name, k);
  if (s->t->storage->version != s->version) {
    char b[128];
    return mt_fail(MT_EARG, "a tensor needed for gradient computation was modified by an in-place operation: "
                            "saved tensor %d of %s (shape %s, %s) is at version %u; expected version %u "
                            "(clone it before modifying it in place)", k, n->name,
                   mt_shape_str(s->t->shape, s->t->ndim, b, sizeof b), mt_dtype_name((mt_dtype)s->t->dtype),
                   s->t->storage->version, s->version);
  }
  if (s->is_output && mtg_grad_enabled()) { /* create_graph: re-attach the output's history */
    mt_tensor *a = NULL;
    mt_status st = mt_alias(s->t, &a);
    if (!st) mtg_trace_alias(a, s->t);
    if (!st) st = mtg_set_history(a, n, s->output_nr);
    if (st) {
      mt_release(a);
      return st;
    }
    *out = a;
    return MT_OK;
  }
  *out = mt_retain(s->t);
  return MT_OK;
}

mt_status mtg_check_inplace(const char *op, const mt_tensor *t) {
  if (!mtg_grad_enabled()) return MT_OK;
  const mtg_meta *m = mtg_meta_of(t);
  if (m && m->requires_grad && !m->grad_fn)
    return mt_fail(MT_EARG, "%s: a leaf tensor that requires grad cannot be modified in place while grad mode is on "
                            "(wrap the update in torch.no_grad, or work on x:detach())", op);
  return MT_OK;
}
