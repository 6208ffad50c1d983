/* call.c -- the generic recording path: mtg_call runs any op with an
 * engine entry (tensor/call.c) and records it the one way every such op is
 * recorded: a node whose backward is the op's derivative (deriv.h) with
 * the call's arguments and the tensors that derivative saves, and, while a
 * JIT trace is active, a trace entry with the same arguments. Per-op
 * record-and-trace wrappers are not needed for these ops. */
#include <string.h>

#include "deriv.h"
#include "trace.h"

/* Makes the node of a call that ran: its arguments, saved inputs and
 * outputs (per d->saves), then attaches the outputs that get a gradient.
 * Non-floating results that would get one (dtype=int64) are not
 * differentiable: no node. */
static mt_status record(mt_op op, const mtg_deriv *d, const mt_tensor *const *ins, int nin, const mt_args *a,
                        mt_tensor *const *outs, int nout) {
  const mt_tensor *idx = NULL;
  if ((d->saves & MTG_SAVE_IDX1) && nout > 1) /* values and their indices: only the values get a gradient */
    idx = outs[1], nout = 1;
  if (nout > MTG_MAXOUT) return mt_fail(MT_EARG, "%s: too many results to record (internal)", mt_ops[op].name);
  mt_tensor *att[MTG_MAXOUT];
  for (int k = 0; k < nout; k++) {
    att[k] = d->saves & MTG_NOGRAD(k) ? NULL : outs[k];
    if (att[k] && !mt_is_inexact((mt_dtype)att[k]->dtype)) return MT_OK;
  }
  mtg_node *n = NULL;
  mt_status st = mtg_node_new(d->name ? d->name(ins, nin) : mtg_backward_name(op), d->fn, ins, nin, outs, nout, &n);
  if (st) return st;
  if (a) {
    memcpy(n->i, a->i, sizeof n->i < sizeof a->i ? sizeof n->i : sizeof a->i);
    memcpy(n->f, a->f, sizeof a->f);
  }
  for (int i = 0; i < nin && i < MTG_MAXSAVED - 2 && !st; i++)
    if ((d->saves & MTG_SAVE_IN(i)) && ins[i]) st = mtg_save(n, i, ins[i], false, 0);
  if (!st && (d->saves & MTG_SAVE_OUT)) st = mtg_save(n, MTG_SLOT_OUT, outs[0], true, 0);
  if (!st && (d->saves & MTG_SAVE_OUT1) && nout > 1) st = mtg_save(n, MTG_SLOT_OUT - 1, outs[1], true, 1);
  for (int k = 0; k < nout && k < MTG_MAXSAVED && !st && (d->saves & MTG_SAVE_RESULTS); k++)
    if (outs[k]) st = mtg_save(n, k, outs[k], true, k);
  if (!st && idx) st = mtg_save(n, 0, idx, false, 0);
  if (!st && d->save) st = d->save(n, ins, nin, a, outs, nout);
  if (st) {
    mtg_node_release(n);
    return st;
  }
  return mtg_attach(n, att, nout);
}

/* Runs op into outs[0..nout) (engine out convention) and records it when
 * grad mode is on and an input requires grad (*recorded then true); out=
 * is then an error, except in place on input 0 (addmm_): the op out of
 * place, then a recorded copy_. */
static mt_status call_recorded(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **outs,
                               int nout, bool *recorded) {
  const mtg_deriv *d = mtg_deriv_of(op);
  if (!d || !mtg_any_requires_grad(ins, nin)) return mt_call(op, ins, nin, a, outs);
  *recorded = true;
  mt_tensor *inplace = nout == 1 && nin > 0 && outs[0] == ins[0] ? outs[0] : NULL;
  if (inplace) { /* a leaf that requires grad: the error names the op */
    mt_status st = mtg_check_inplace(mt_ops[op].name, inplace);
    if (st) return st;
    outs[0] = NULL;
  }
  for (int k = 0; k < nout; k++)
    if (outs[k])
      return mt_fail(MT_EARG, "%s: out= cannot be used when an input requires grad (the result would have no "
                              "history); drop out= or use torch.no_grad()", mt_ops[op].name);
  mt_status st = mt_call(op, ins, nin, a, outs);
  if (!st) st = record(op, d, ins, nin, a, outs, nout);
  if (!st && inplace) {
    st = mtg_copy_(inplace, outs[0]);
    mt_release(outs[0]);
    outs[0] = inplace;
    return st;
  }
  if (st)
    for (int k = 0; k < nout; k++) {
      mt_release(outs[k]);
      outs[k] = inplace && k == 0 ? inplace : NULL;
    }
  return st;
}

/* The replay of a NAMED row's trace entry: words 0..MT_NARGI the call's
 * args, then the op and the operand count; f its numbers (the JIT may set
 * an activation there, jit/rewrite.c). */
static mt_status rp_engine(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  mt_args a = {.ni = MT_NARGI, .nf = 3};
  memcpy(a.i, w, sizeof a.i);
  memcpy(a.f, f, sizeof a.f);
  return mt_call((mt_op)w[MT_NARGI], in, (int)w[MT_NARGI + 1], &a, out);
}

/* Traces a NAMED row's call as a named engine call (trace.h) with up to
 * nout results; out= is refused (the JIT replays fresh results). */
static void trace_named(mt_op op, bool given, const mt_tensor *const *ins, int nin, const mt_args *a,
                        mt_tensor *const *outs, int nout) {
  if (given) {
    mtg_trace_refuse("%s with out= is not replayed by the JIT", mt_ops[op].name);
    return;
  }
  int64_t w[MT_NARGI + 2] = {0};
  if (a) memcpy(w, a->i, sizeof a->i);
  w[MT_NARGI] = op;
  w[MT_NARGI + 1] = nin;
  double f[3] = {0};
  if (a) memcpy(f, a->f, sizeof f);
  mtg_trace_call(mt_ops[op].name, rp_engine, false, ins, nin, outs, nout, w, sizeof w, f, 3);
}

mt_status mtg_call(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **outs, int nout) {
  mt_tensor *given = outs[0];
  bool any_given = false; /* read only while tracing */
  for (int k = 0; k < nout && MTG_TRACING(); k++) any_given |= outs[k] != NULL;
  bool recorded = false;
  mt_status st = call_recorded(op, ins, nin, a, outs, nout, &recorded);
  /* only what the JIT can lower is traced: the rest is refused as a tensor
   * made inside the function. A lowered op is traced with its first result;
   * when its node also keeps the others (layer_norm's statistics), they
   * must be trace values too: then it is traced as a named engine call. */
  if (!st && MTG_TRACING()) {
    int lower = MT_J_LOWER(mt_ops[op].jit);
    if (lower == MT_J_NAMED || (lower != MT_J_NONE && recorded && nout > 1))
      trace_named(op, any_given, ins, nin, a, outs, nout);
    else if (lower != MT_J_NONE)
      mtg_trace_op(op, given, ins, nin, outs[0], a ? a->i : NULL, a ? a->ni : 0, a ? a->f : NULL, a ? a->nf : 0);
    else if (given) /* a write the trace would miss */
      mtg_trace_refuse("%s in place or with out= is not replayed by the JIT yet", mt_ops[op].name);
  }
  return st;
}

mt_status mtg_call_wanted(mt_op op, const mt_tensor *const *ins, int nin, mt_args *a, int first,
                          mt_tensor **const *want, int nwant) {
  mt_tensor *r[8] = {NULL};
  int n = 0;
  if (nwant > 8 || first + nwant > MT_NARGI)
    return mt_fail(MT_EARG, "%s: too many wanted results (internal)", mt_ops[op].name);
  for (int k = 0; k < nwant; k++)
    if ((a->i[first + k] = want[k] != NULL)) r[n++] = *want[k];
  if (!n) return MT_OK;
  mt_status st = mtg_call(op, ins, nin, a, r, n);
  if (st) return st;
  for (int k = 0, j = 0; k < nwant; k++)
    if (want[k]) *want[k] = r[j++];
  return MT_OK;
}

mt_status mtg_reduce(mt_op op, const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, double num,
                     mt_tensor **outs, int nout) {
  mt_args a = {.i = {0, keepdim, dtype, ndims == 0}, .f = {num}, .ni = 4, .nf = 1};
  mt_status st = mt_dim_mask(mt_ops[op].name, dims, ndims, x->ndim, &a.i[0]);
  return st ? st : mtg_call(op, &x, 1, &a, outs, nout);
}

mt_status mtg_along(mt_op op, const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  mt_args a = {.i = {x->ndim && dim < 0 ? dim + x->ndim : dim, dtype}, .ni = 2};
  return mtg_call(op, &x, 1, &a, out, 1);
}
