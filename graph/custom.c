/* custom.c -- autograd nodes whose backward is a callback with an opaque
 * context (graph.h, mtg_record_custom): the node of a compiled forward
 * graph, whose backward runs the compiled backward graph. */
#include <stdlib.h>

#include "node.h"

typedef struct custom {
  mtg_custom_fn fn;
  void *ctx;
  void (*ctx_free)(void *);
} custom;

static void custom_free(void *p) {
  custom *c = p;
  if (c->ctx_free) c->ctx_free(c->ctx);
  free(c);
}

static mt_status custom_backward(mtg_node *n, mt_tensor *const *gout, mt_tensor **gin) {
  if (n->released || !n->ext)
    return mt_fail(MT_EARG, "backward through %s a second time: its saved tensors were freed by the first backward "
                            "(pass retain_graph=true to the first backward to keep them)", n->name);
  custom *c = n->ext;
  mt_status st = c->fn(c->ctx, gout, n->nout, gin, n->nin);
  for (int i = 0; i < n->nin && !st; i++)
    if (!mtg_needs(n, i)) {
      mt_release(gin[i]);
      gin[i] = NULL;
    }
  return st;
}

mt_status mtg_record_custom(const char *name, mtg_custom_fn fn, void *ctx, void (*ctx_free)(void *),
                            const mt_tensor *const *ins, int nin, mt_tensor *const *outs, int nout) {
  custom *c = malloc(sizeof *c);
  if (!c) {
    if (ctx_free) ctx_free(ctx);
    return mt_fail(MT_ENOMEM, "%s: out of memory", name);
  }
  *c = (custom){fn, ctx, ctx_free};
  mtg_node *n = NULL;
  mt_status st = mtg_node_new(name, custom_backward, ins, nin, outs, nout, &n);
  if (st) {
    custom_free(c);
    return st;
  }
  n->ext = c, n->ext_free = custom_free;
  return mtg_attach(n, outs, nout);
}
