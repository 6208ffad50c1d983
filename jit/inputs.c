/* inputs.c -- the external tensors a recorded trace reads or writes: its
 * graph inputs, in order of first use. Finding where each comes from at a
 * later call (an argument, a path of table keys from an upvalue) is the
 * bindings' work (lua_bindings/l_jit_inputs.c); this file only names the
 * tensors and words the message when one cannot be found. */
#include <stdio.h>

#include "entry.h"

/* True when t is among tensors a[0..n). */
static bool among(const mt_tensor *const *a, int n, const mt_tensor *t) {
  for (int k = 0; k < n; k++)
    if (a[k] == t) return true;
  return false;
}

/* The op name of trace entry e, for messages. */
static const char *entry_name(const mtg_trace_entry *e) {
  if (e->kind == MTG_TE_CALL) return e->name;
  if (e->kind == MTG_TE_OP) return mt_ops[e->op].name;
  return "fill";
}

int mtj_graph_inputs(const mtg_trace *tr, mtj_entry *e, const mt_tensor **ins, int *first) {
  int nin = 0;
  for (int i = 0; i <= tr->n && !e->why[0]; i++) {
    const mt_tensor *cand[MTG_TRACE_NIN + 1];
    int nc = 0;
    if (i < tr->n) {
      for (int j = 0; j < tr->e[i].nin; j++) cand[nc++] = tr->e[i].in[j];
      if (tr->e[i].inplace) cand[nc++] = tr->e[i].out;
    }
    for (int c = 0; c < nc && !e->why[0]; c++) {
      const mt_tensor *t = cand[c] ? mtg_trace_root(tr, cand[c]) : NULL;
      if (!t || (t->flags & MT_TF_WRAPPED) || among((const mt_tensor *const *)mtj_cap.sct, mtj_cap.nsct, t) ||
          among(ins, nin, t))
        continue;
      bool made = false;
      for (int k = 0; k < i && !made; k++) {
        const mtg_trace_entry *x = &tr->e[k];
        made =
            (x->out == t && !x->inplace) || (x->nout > 1 && among((const mt_tensor *const *)x->xout, x->nout - 1, t));
      }
      if (made) continue;
      for (int k = 0; k < tr->nfresh; k++)
        if (tr->fresh[k] == t)
          snprintf(e->why, sizeof e->why, "a tensor made by %s inside the function (the JIT does not replay it yet)",
                   tr->fresh_what[k]);
      if (e->why[0]) break;
      if (nin == MTJ_MAXIN) {
        snprintf(e->why, sizeof e->why, "the graph reads more than %d tensors", MTJ_MAXIN);
        break;
      }
      if (first) first[nin] = i;
      ins[nin++] = t;
    }
  }
  for (int g = 0; g < tr->ngrads && !e->why[0]; g++) {
    const mt_tensor *t = tr->grads[g].leaf;
    if (among(ins, nin, t)) continue;
    if (nin == MTJ_MAXIN) {
      snprintf(e->why, sizeof e->why, "the graph reads more than %d tensors", MTJ_MAXIN);
    } else {
      if (first) first[nin] = -1;
      ins[nin++] = t;
    }
  }
  return nin;
}

void mtj_unlocated(mtj_entry *e, const mtg_trace *tr, int first, const mt_tensor *t) {
  char sh[96];
  snprintf(e->why, sizeof e->why,
           "%s reads a %s tensor of shape %s that is neither an argument nor reachable from the function's "
           "upvalues through tables (made by an op the JIT does not trace?)",
           first >= 0 && first < tr->n ? entry_name(&tr->e[first]) : "a .grad", mt_dtype_name((mt_dtype)t->dtype),
           mt_shape_str(t->shape, t->ndim, sh, sizeof sh));
}
