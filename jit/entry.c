/* entry.c -- one entry of a compiled function, built from a capture: the
 * state it was captured in, its results and the gradients it set as graph
 * outputs, its compiled graph (or the forward and backward pair of
 * partition.c); and its replay on the inputs of a later call. The bindings
 * describe the call's Lua values and push the results; nothing here reads
 * or writes Lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "partition.h"
#include "profiler.h"
#include "split.h"

mtj_entry *mtj_entry_new(const mtj_arg *a, int nargs, unsigned epoch) {
  mtj_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->nargs = nargs;
  e->epoch = epoch;
  for (int i = 0; i < nargs; i++) {
    e->arg[i] = a[i];
    e->arg[i].str = a[i].type == MTJ_TSTRING ? strdup(a[i].str) : NULL;
  }
  return e;
}

void mtj_entry_free(mtj_entry *e) {
  if (!e) return;
  for (int i = 0; i < e->nargs; i++) free(e->arg[i].str);
  for (int i = 0; i < e->nin; i++) mt_release(e->src[i].t);
  mtj_free(e->c);
  mtj_aot_release(e->aot);
  mtj_split_free(e->split);
  free(e);
}

void mtj_entry_state(mtj_entry *e, const mtg_trace *tr, const mt_tensor *const *ins, int nin, int autocast) {
  e->detach = tr->backward_ran;
  e->grad_mode = mtg_grad_enabled();
  e->autocast = autocast;
  for (int k = 0; k < nin && e->grad_mode; k++)
    if (mtg_requires_grad(ins[k])) e->rg[k / 64] |= 1ull << (k % 64);
}

void mtj_entry_result(mtj_entry *e, const mtg_trace *fwd, int r, int type, bool b, const mt_tensor *t,
                      const mt_tensor *const *argt, int nargs, const mt_tensor **outs, int *nout) {
  if (r >= MTJ_MAXOUT) {
    snprintf(e->why, sizeof e->why, "it returns more than %d values", MTJ_MAXOUT);
  } else if (type == MTJ_TNIL) {
    e->ret[r].kind = MTJ_RET_NIL;
  } else if (type == MTJ_TBOOLEAN) {
    e->ret[r].kind = MTJ_RET_BOOL, e->ret[r].idx = b;
  } else if (t && mtg_trace_produced(fwd, t)) {
    if (!mtj_cap.aot && !fwd->backward_ran && mtg_grad_enabled() && mtg_requires_grad(t))
      snprintf(e->why, sizeof e->why,
               "its result requires grad and compiled graphs record no autograd history (compile the whole training "
               "step -- forward, loss:backward(), optimizer:step() -- or call it under torch.no_grad())");
    e->ret[r].kind = MTJ_RET_OUT, e->ret[r].idx = *nout, outs[(*nout)++] = t;
  } else if (t) {
    int a = -1;
    for (int k = 0; k < nargs && a < 0; k++)
      if (argt[k] == t) a = k;
    if (a < 0) snprintf(e->why, sizeof e->why, "it returns a tensor made outside the traced ops");
    e->ret[r].kind = MTJ_RET_ARG, e->ret[r].idx = a;
  } else {
    snprintf(e->why, sizeof e->why, "it returns a Lua %s (only tensors, nil and booleans are replayed)",
             mtj_type_name(type));
  }
}

void mtj_entry_grads(mtj_entry *e, const mtg_trace *tr, const mt_tensor *const *ins, int nin, const mt_tensor **outs,
                     int *nout) {
  for (int g = 0; g < tr->ngrads && !e->why[0]; g++) {
    const mtg_trace_grad *x = &tr->grads[g];
    if (e->ngrads == MTJ_MAXGRADS || *nout == MTJ_MAXOUT) {
      snprintf(e->why, sizeof e->why, "it sets the gradients of more than %d tensors", MTJ_MAXGRADS);
      break;
    }
    int leaf = -1;
    for (int k = 0; k < nin && leaf < 0; k++)
      if (ins[k] == x->leaf) leaf = k;
    e->grad[e->ngrads].leaf = leaf;
    e->grad[e->ngrads].out = -1;
    if (x->grad) {
      if (!mtg_trace_produced(tr, x->grad)) {
        snprintf(e->why, sizeof e->why, "it sets a .grad to a tensor made outside the traced ops");
        break;
      }
      e->grad[e->ngrads].out = *nout;
      outs[(*nout)++] = x->grad;
    }
    e->ngrads++;
  }
}

void mtj_entry_scalars(const mtj_entry *e, double *sc, bool *isint) {
  for (int k = 0; k < e->nargs; k++) {
    sc[k] = e->arg[k].type == MTJ_TNUMBER ? e->arg[k].num : 0.0 / 0.0;
    isint[k] = e->arg[k].isint;
  }
}

void mtj_entry_compile(mtj_entry *e, const char *name, const mtg_trace *tr, const mt_tensor *const *ins, int nin,
                       const mt_tensor **outs, int nout, const double *sc, const bool *isint, const mtj_options *o) {
  if (mtj_cap.aot) {
    mtj_aot_compile(name, e, mtj_cap.aot, tr, ins, nin, outs, nout, sc, isint, e->nargs, o);
  } else if (mtj_compile(tr, ins, nin, sc, isint, e->nargs, outs, nout, o, &e->c)) {
    snprintf(e->why, sizeof e->why, "%s", mt_errmsg());
    e->c = NULL;
    return;
  }
  if (!e->c) return;
  for (int k = 0; k < e->nargs; k++)
    if (e->arg[k].type == MTJ_TNUMBER)
      e->arg[k].candidate = mtj_uses_scalar(e->c, k) || (e->aot && mtj_aot_uses_scalar(e->aot, k));
}

bool mtj_entry_same_graph(const mtj_entry *near, const mtj_entry *e) {
  return near && near->c && e->c && strcmp(mtj_text(near->c), mtj_text(e->c)) == 0;
}

mt_status mtj_entry_run(const mtj_entry *e, const char *name, const mt_tensor *const *ins, const double *sc,
                        mt_tensor **outs) {
  int64_t tok = mtg_profiler_begin(name, ins, e->nin);
  mt_status st = mtj_run(e->c, ins, sc, outs);
  mtg_profiler_end(tok);
  if (!st && e->aot) st = mtj_aot_attach(e->aot, ins, sc, outs);
  for (int g = 0; g < e->ngrads && !st; g++)
    st = mtg_set_grad((mt_tensor *)ins[e->grad[g].leaf], e->grad[g].out >= 0 ? outs[e->grad[g].out] : NULL);
  return st;
}

void mtj_entry_explain(const mtj_entry *e, const char *brk, const char *last, FILE *m) {
  fprintf(m, "torch.compiler.explain: %s\n",
          e->aot     ? "2 graphs, compiled: the forward and its backward (its results require grad)"
          : e->split ? "graphs split at host reads, compiled"
          : e->c     ? "1 graph, compiled"
                     : "no compiled graph");
  fprintf(m, "graph breaks: %s\n", brk[0] ? brk : "none");
  if (!e->c && !e->split) fprintf(m, "runs eagerly because: %s\n", e->why);
  if (last[0]) fprintf(m, "last recompile reason: %s\n", last);
  for (int k = 0; k < e->nargs; k++)
    if (e->arg[k].candidate) fprintf(m, "argument %d (a number) is a runtime scalar\n", k + 1);
  if (e->c) mtj_explain(e->c, m);
  if (e->aot) mtj_aot_explain(e->aot, m);
  if (e->split) mtj_split_explain(e->split, m);
}
