/* backward.c -- the backward engine: finds the nodes reachable from the
 * outputs, counts their dependencies, runs them latest-first once all
 * gradients for their outputs have arrived, runs hooks, and accumulates
 * into leaves or captures the gradients autograd.grad asked for. Gradients
 * are summed out of place, so with create_graph every step is recorded. */
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "trace.h"
#include "profiler.h"

static uint64_t run_counter;


/* A growable list of nodes whose first 32 entries live in the struct
 * (small graphs allocate nothing). */
typedef struct {
  mtg_node **v;
  int n, cap;
  mtg_node *small[32];
} nodevec;

static void vec_init(nodevec *a) {
  a->v = a->small;
  a->n = 0;
  a->cap = 32;
}

static void vec_free(nodevec *a) {
  if (a->v != a->small) free(a->v);
}

static mt_status push(nodevec *a, mtg_node *x) {
  if (a->n == a->cap) {
    int cap = a->cap * 2;
    mtg_node **v = a->v == a->small ? malloc((size_t)cap * sizeof *v) : realloc(a->v, (size_t)cap * sizeof *v);
    if (!v) return mt_fail(MT_ENOMEM, "backward: out of memory");
    if (a->v == a->small) memcpy(v, a->small, sizeof a->small);
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return MT_OK;
}

/* The gradient slots of a node for this run (one output: inline). */
static mt_status alloc_buf(mtg_node *x) {
  if (x->nout == 1) {
    x->buf1 = NULL;
    x->buf = &x->buf1;
    return MT_OK;
  }
  x->buf = calloc((size_t)x->nout, sizeof *x->buf);
  return x->buf ? MT_OK : mt_fail(MT_ENOMEM, "backward: out of memory");
}

/* Max-heap on seq: the most recently created ready node runs first. */
static mt_status heap_push(nodevec *h, mtg_node *x) {
  mt_status st = push(h, x);
  if (st) return st;
  for (int i = h->n - 1; i > 0;) {
    int p = (i - 1) / 2;
    if (h->v[p]->seq >= h->v[i]->seq) break;
    mtg_node *t = h->v[p];
    h->v[p] = h->v[i];
    h->v[i] = t;
    i = p;
  }
  return MT_OK;
}

static mtg_node *heap_pop(nodevec *h) {
  mtg_node *top = h->v[0];
  h->v[0] = h->v[--h->n];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->v[l]->seq > h->v[m]->seq) m = l;
    if (r < h->n && h->v[r]->seq > h->v[m]->seq) m = r;
    if (m == i) break;
    mtg_node *t = h->v[m];
    h->v[m] = h->v[i];
    h->v[i] = t;
    i = m;
  }
  return top;
}

/* Adds g into slot *acc (consumes g). Out of place, so it is recorded. */
static mt_status accumulate(mt_tensor **acc, mt_tensor *g) {
  if (!*acc) {
    *acc = g;
    return MT_OK;
  }
  mt_tensor *s = NULL;
  mt_status st = mtg_binary(MT_OP_add, *acc, g, &s);
  mt_release(g);
  if (st) return st;
  mt_release(*acc);
  *acc = s;
  return MT_OK;
}

/* Marks every node reachable from the seeds for this run and counts how
 * many edges lead into each. */
static mt_status discover(nodevec *seeds, uint64_t run, nodevec *all) {
  nodevec stack;
  vec_init(&stack);
  mt_status st = MT_OK;
  for (int i = 0; i < seeds->n && !st; i++) {
    mtg_node *s = seeds->v[i];
    if (s->run == run) continue;
    if (s->buf) st = mt_fail(MT_EARG, "backward: re-entrant backward through the same graph is not supported");
    if (st) break;
    s->run = run;
    s->deps = 0;
    st = alloc_buf(s);
    if (!st && !(st = push(all, s))) mtg_node_retain(s);
    if (!st) st = push(&stack, s);
  }
  while (!st && stack.n) {
    mtg_node *x = stack.v[--stack.n];
    for (int i = 0; i < x->nin && !st; i++) {
      mtg_node *y = x->next[i].node;
      if (!y) continue;
      if (y->run != run) {
        if (y->buf) {
          st = mt_fail(MT_EARG, "backward: re-entrant backward through the same graph is not supported");
          break;
        }
        y->run = run;
        y->deps = 0;
        if ((st = alloc_buf(y))) break;
        if (!(st = push(all, y))) {
          mtg_node_retain(y);
          st = push(&stack, y);
        }
      }
      y->deps++;
    }
  }
  vec_free(&stack);
  return st;
}

typedef struct {
  mtg_node *node;
  int nr;
} target;

static int by_seq(const void *a, const void *b) {
  uint64_t x = (*(mtg_node *const *)a)->seq, y = (*(mtg_node *const *)b)->seq;
  return x < y ? -1 : x > y;
}

/* autograd.grad: a node's backward runs only when an edge path from it
 * leads to a node a requested gradient is read from (as PyTorch does):
 * nodes past the requested inputs are left alone. Nodes are visited by
 * creation order, so the nodes an edge leads to are decided first (leaf
 * accumulate nodes, which may be younger, lead nowhere). */
static mt_status mark_needed(nodevec *all, const target *tg, int ntg, bool everything) {
  for (int i = 0; i < all->n; i++) all->v[i]->needed = everything, all->v[i]->target = false;
  if (everything) return MT_OK;
  for (int j = 0; j < ntg; j++)
    if (tg[j].node) tg[j].node->target = true;
  mtg_node **v = malloc((size_t)all->n * sizeof *v + 1);
  if (!v) return mt_fail(MT_ENOMEM, "backward: out of memory");
  memcpy(v, all->v, (size_t)all->n * sizeof *v);
  qsort(v, (size_t)all->n, sizeof *v, by_seq);
  for (int i = 0; i < all->n; i++)
    for (int k = 0; k < v[i]->nin && !v[i]->needed; k++) {
      const mtg_node *y = v[i]->next[k].node;
      v[i]->needed = y && (y->needed || y->target);
    }
  free(v);
  return MT_OK;
}

/* Runs the hooks of output k of x on its gradient *g (replacing it when a
 * hook returns a new one) and fills .grad of retain_grad tensors. */
static mt_status run_hooks(mtg_node *x, int k, mt_tensor **g) {
  for (mtg_hook *h = x->hooks; h; h = h->next) {
    if (h->output_nr != k) continue;
    if (h->fn) {
      mt_tensor *r = NULL;
      mt_status st = h->fn(h->ctx, *g, &r);
      if (st) return st;
      if (r) {
        mt_release(*g);
        *g = r;
      }
    } else if (h->ctx) {
      mt_tensor *d = NULL;
      mt_status st = mtg_grad_enabled() ? mtg_ref(*g, &d) : mtg_detach(*g, &d);
      if (!st) st = mtg_set_grad(h->ctx, d);
      mt_release(d);
      if (st) return st;
    }
  }
  return MT_OK;
}

/* Whether gradient g may become leaf's .grad without a copy (as PyTorch's
 * AccumulateGrad steals it): held only by the node's buffer, a whole dense
 * tensor of its own storage, no autograd state, leaf's dtype, and no trace
 * running (the JIT replays the copy). */
static bool stealable(const mt_tensor *g, const mt_tensor *leaf) {
  return !MTG_TRACING() && g->refs == 1 && g->storage->refs == 1 && !g->base && !g->autograd && !g->borrowed &&
         !g->storage->borrowed && g->offset == 0 && g->dtype == leaf->dtype && mt_is_contiguous(g) &&
         mt_same_device(mt_tdevice(g), mt_tdevice(leaf));
}

/* Leaf accumulation: .grad = .grad + g (a new tensor each time, or g itself when stealable). */
static mt_status accumulate_leaf(mtg_node *x, mt_tensor *g) {
  mt_tensor *leaf = x->leaf;
  if (!leaf) return MT_OK; /* the leaf is gone */
  mt_tensor *old = mtg_grad(leaf), *sum = NULL, *d = NULL;
  mt_status st = MT_OK;
  if (!mtg_grad_enabled()) { /* a fresh tensor outside any graph */
    if (!old && stealable(g, leaf)) sum = mt_retain(g); /* nobody else sees g: it becomes .grad as it is */
    else st = old ? mtg_binary(MT_OP_add, old, g, &sum) : mtg_clone(g, &sum); /* untracked, but traced for the JIT */
  } else {
    st = old ? mtg_binary(MT_OP_add, old, g, &sum) : mtg_ref(g, &sum);
  }
  if (!st && sum->dtype != leaf->dtype) {
    st = mtg_to_dtype(sum, (mt_dtype)leaf->dtype, false, &d);
    mt_release(sum);
    sum = d;
  }
  if (!st) st = mtg_set_grad(leaf, sum);
  mt_release(sum);
  return st;
}

/* Checks the shapes of the gradients a node produced against its inputs. */
static mt_status check_grads(mtg_node *x, mt_tensor **gin) {
  for (int i = 0; i < x->nin; i++) {
    if (!gin[i] || !x->next[i].node) continue;
    const mtg_meta_shape *m = &x->in[i];
    bool same = gin[i]->ndim == m->ndim;
    for (int d = 0; same && d < m->ndim; d++) same = gin[i]->shape[d] == m->shape[d];
    if (!same) {
      char a[128], b[128];
      return mt_fail(MT_ESHAPE, "%s returned a gradient of shape %s for input %d of shape %s (internal error)",
                     x->name, mt_shape_str(gin[i]->shape, gin[i]->ndim, a, sizeof a), i + 1,
                     mt_shape_str(m->shape, m->ndim, b, sizeof b));
    }
  }
  return MT_OK;
}

/* Runs node x: hooks, captures, then its derivative, and routes the input
 * gradients to the next nodes (pushing those that become ready). */
static mt_status run_node(mtg_node *x, uint64_t run, const target *tg, int ntg, mt_tensor **results,
                          bool accumulate_leaves, bool retain_graph, nodevec *ready) {
  mt_status st = MT_OK;
  for (int k = 0; k < x->nout && !st; k++) {
    if (!x->buf[k]) continue;
    st = run_hooks(x, k, &x->buf[k]);
    for (int j = 0; j < ntg && !st; j++)
      if (tg[j].node == x && tg[j].nr == k && !results[j]) results[j] = mt_retain(x->buf[k]);
  }
  if (st || !x->needed) return st;
  if (!x->backward) { /* accumulate node */
    if (accumulate_leaves && x->buf[0]) st = accumulate_leaf(x, x->buf[0]);
    return st;
  }
  for (int k = 0; k < x->nout && !st; k++)
    if (!x->buf[k]) {
      mtg_meta_shape *m = &x->out[k];
      st = mt_zeros(m->shape, m->ndim, (mt_dtype)m->dtype, m->device, &x->buf[k]);
      if (!st) mtg_trace_full(x->buf[k], 0);
    }
  mt_tensor *stackbuf[8], **gin = x->nin <= 8 ? stackbuf : calloc((size_t)x->nin, sizeof *gin);
  if (!gin) return mt_fail(MT_ENOMEM, "backward: out of memory");
  memset(gin, 0, (size_t)x->nin * sizeof *gin);
  if (!st) st = x->backward(x, x->buf, gin);
  if (!st) st = check_grads(x, gin);
  for (int i = 0; i < x->nin; i++) {
    mtg_node *y = x->next[i].node;
    if (!y) {
      mt_release(gin[i]);
      continue;
    }
    if (!st && gin[i]) st = accumulate(&y->buf[x->next[i].input_nr], gin[i]);
    else mt_release(gin[i]);
    if (--y->deps == 0 && !st) st = heap_push(ready, y);
  }
  if (gin != stackbuf) free(gin);
  if (!retain_graph) mtg_node_release_saved(x);
  return st;
}

/* The seed gradient of output o: g (checked, cast to o's dtype) or ones
 * for a one-element output. */
static mt_status seed(const mt_tensor *o, const mt_tensor *g, int i, mt_tensor **out) {
  char a[128], b[128];
  if (!g) {
    if (mt_numel(o) != 1)
      return mt_fail(MT_EARG, "backward: a gradient can be implied only for outputs with one element; output %d "
                              "has shape %s (pass a gradient of that shape)", i + 1,
                     mt_shape_str(o->shape, o->ndim, a, sizeof a));
    if (mt_is_complex((mt_dtype)o->dtype)) /* PyTorch: the loss must be real */
      return mt_fail(MT_EARG, "backward: a gradient can be implied only for real outputs; output %d is %s (take "
                              "its real part or abs, or pass a gradient)", i + 1, mt_dtype_name((mt_dtype)o->dtype));
  {
    mt_status st = mt_full(o->shape, o->ndim, mt_sfloat(1), (mt_dtype)o->dtype, mt_tdevice(o), out);
    if (!st) mtg_trace_full(*out, 1);
    return st;
  }
  }
  bool same = g->ndim == o->ndim;
  for (int d = 0; same && d < o->ndim; d++) same = g->shape[d] == o->shape[d];
  if (!same)
    return mt_fail(MT_ESHAPE, "backward: gradient %d has shape %s but output %d has shape %s", i + 1,
                   mt_shape_str(g->shape, g->ndim, a, sizeof a), i + 1, mt_shape_str(o->shape, o->ndim, b, sizeof b));
  if (mtg_grad_enabled()) return mtg_to_dtype(g, (mt_dtype)o->dtype, false, out);
  return mt_to_dtype(g, (mt_dtype)o->dtype, false, out);
}

mt_status mtg_backward(mt_tensor *const *outputs, mt_tensor *const *grads, int n, mt_tensor *const *inputs,
                       int ninputs, mtg_backward_opts opts, mt_tensor **results) {
  uint64_t run = ++run_counter;
  nodevec seeds, all, ready;
  vec_init(&seeds);
  vec_init(&all);
  vec_init(&ready);
  target tg_small[8];
  mt_tensor *sg_small[8] = {0};
  int snr_small[8];
  target *tg = ninputs <= 8 ? tg_small : calloc((size_t)ninputs, sizeof *tg);
  mt_tensor **sg = n <= 8 ? sg_small : calloc((size_t)n, sizeof *sg);
  int *snr = n <= 8 ? snr_small : calloc((size_t)n, sizeof *snr);
  mt_status st = !tg || !sg || !snr ? mt_fail(MT_ENOMEM, "backward: out of memory") : MT_OK;
  bool prev = mtg_set_grad_enabled(opts.create_graph);
  if (mtg_tracing) mtg_tracing->backward_ran = true;
  for (int i = 0; i < ninputs; i++) results[i] = NULL;
  for (int i = 0; i < n && !st; i++) {
    mtg_edge e;
    if (!(st = mtg_edge_of(outputs[i], &e)) && !e.node)
      st = mt_fail(MT_EARG, "backward: output %d does not require grad and has no grad_fn (did you mean to set "
                            "requires_grad=true on an input, or run outside torch.no_grad?)", i + 1);
    if (!st) st = seed(outputs[i], grads ? grads[i] : NULL, i, &sg[i]);
    if (!st) st = push(&seeds, e.node);
    snr[i] = e.input_nr;
  }
  for (int i = 0; i < ninputs && !st; i++) {
    mtg_edge e;
    if (!mtg_requires_grad(inputs[i]))
      st = mt_fail(MT_EARG, "grad: input %d does not require grad", i + 1);
    else if (!(st = mtg_edge_of(inputs[i], &e))) {
      tg[i].node = e.node;
      tg[i].nr = e.input_nr;
    }
  }
  if (!st) st = discover(&seeds, run, &all);
  if (!st) st = mark_needed(&all, tg, ninputs, inputs == NULL);
  for (int i = 0; i < n && !st; i++) {
    st = accumulate(&seeds.v[i]->buf[snr[i]], sg[i]);
    sg[i] = NULL;
  }
  for (int i = 0; i < all.n && !st; i++)
    if (all.v[i]->deps == 0) st = heap_push(&ready, all.v[i]);
  while (!st && ready.n) {
    mtg_node *x = heap_pop(&ready);
    int64_t tok = MTG_PROFILING() ? mtg_prof_begin_id(mtg_prof_intern(x->name), MTG_PROF_AUTOGRAD) : -1;
    st = run_node(x, run, tg, ninputs, results, inputs == NULL, opts.retain_graph, &ready);
    if (tok >= 0) mtg_prof_end(tok);
  }
  for (int i = 0; i < all.n; i++) { /* clean up, also after an error */
    mtg_node *x = all.v[i];
    for (int k = 0; k < x->nout; k++) mt_release(x->buf[k]);
    if (x->buf != &x->buf1) free(x->buf);
    x->buf = NULL;
    x->run = 0;
    mtg_node_release(x);
  }
  for (int i = 0; i < n && sg; i++) mt_release(sg[i]);
  for (int i = 0; i < ninputs && !st; i++)
    if (!results[i] && !opts.allow_unused)
      st = mt_fail(MT_EARG, "grad: input %d is not reached from the outputs (pass allow_unused=true to get nil "
                            "for it)", i + 1);
  if (st)
    for (int i = 0; i < ninputs; i++) {
      mt_release(results[i]);
      results[i] = NULL;
    }
  mtg_set_grad_enabled(prev);
  vec_free(&seeds);
  vec_free(&all);
  vec_free(&ready);
  if (tg != tg_small) free(tg);
  if (sg != sg_small) free(sg);
  if (snr != snr_small) free(snr);
  return st;
}
