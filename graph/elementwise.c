/* elementwise.c -- recorded elementwise ops (mtg_unary, mtg_binary, and
 * mtg_ew for any elementwise row or op with extra operands: clamp, where,
 * lerp, nan_to_num) and their handling of in-place and out= forms.
 * The derivative formulas live in d_elementwise.c; this file decides what
 * to save and how a node is attached. */
#include <string.h>

#include "deriv.h"
#include "trace.h"
#include "views.h"

/* out= into a separate tensor cannot be differentiated (as in PyTorch). */
static mt_status no_out(const char *op) {
  return mt_fail(MT_EARG, "%s: out= cannot be used when an input requires grad (the result would have no "
                          "history); drop out= or use torch.no_grad()", op);
}

/* Saves what the derivative of entry e needs: slot 0..nin-1 the inputs
 * (pre-op copies for in-place ops, taken before the op), slot nin.. the
 * output. `pre` holds the inputs as they were before the op ran. */
static mt_status save_for(mtg_node *n, const mtg_deriv *e, const mt_tensor *const *pre, const uint32_t *ver, int nin,
                          mt_tensor *out) {
  mt_status st = MT_OK;
  for (int i = 0; i < nin && !st; i++)
    if ((e->saves & MTG_SAVE_IN(i)) && pre[i] && !((e->saves & MTG_SAVE_CROSS) && !mtg_needs(n, 1 - i))) {
      st = mtg_save(n, i, pre[i], false, 0);
      n->saved[i].version = ver[i]; /* as it was before the op ran */
    }
  if (!st && (e->saves & MTG_SAVE_OUT)) st = mtg_save(n, MTG_MAXSAVED - 1, out, true, 0);
  return st;
}

/* The common recording path of the elementwise ops. run() computes the
 * op into *out under the engine's out convention; ins[0..nin) are its tensor
 * operands. Handles plain calls, out= (an error when recording) and in-place
 * calls (*out == ins[0]): the leaf check, pre-op copies of saved inputs,
 * and the node that replaces the tensor's history. */
mt_status mtg_record_ew(mt_op op, const mt_tensor *const *ins, int nin, mt_tensor **out,
                        mt_status (*run)(void *ctx, mt_tensor **out), void *ctx, const double *fargs, int nf) {
  const mtg_deriv *e = mtg_deriv_of(op);
  bool inplace = *out && *out == ins[0];
  if (!mtg_any_requires_grad(ins, nin) || !e) {
    if (*out && mtg_grad_enabled() && mtg_requires_grad(*out) && !inplace) return no_out(mt_ops[op].name);
    if (inplace) {
      mt_status st = mtg_check_inplace(mt_ops[op].name, *out);
      if (st) return st;
    }
    mt_status st = run(ctx, out);
    /* an in-place write with no grad-requiring operand cuts the history */
    if (!st && inplace && mtg_grad_enabled() && mtg_grad_fn(*out)) st = mtg_detach_(*out);
    return st;
  }
  if (*out && !inplace) return no_out(mt_ops[op].name);
  mt_status st = MT_OK;
  mt_tensor *pre[4] = {0};
  if (inplace) {
    if ((st = mtg_check_inplace(mt_ops[op].name, *out))) return st;
    if ((*out)->base && (st = mtg_check_inplace(mt_ops[op].name, (*out)->base))) return st;
    if (e->saves & MTG_SAVE_IN(0)) st = mt_clone(ins[0], &pre[0]);
  } else {
    pre[0] = mt_retain((mt_tensor *)ins[0]);
  }
  for (int i = 1; i < nin; i++) pre[i] = mt_retain((mt_tensor *)ins[i]);
  uint32_t ver[4] = {0};
  for (int i = 0; i < nin; i++)
    if (pre[i]) ver[i] = pre[i]->storage->version;
  mtg_node *n = NULL;
  if (!st) st = mtg_node_new(mtg_backward_name(op), e->fn, ins, nin, NULL, 1, &n);
  if (!st) st = run(ctx, out);
  if (!st) {
    if (nf) memcpy(n->f, fargs, (size_t)nf * sizeof *fargs);
    n->i[0] = op;
    n->out[0].ndim = (*out)->ndim;
    n->out[0].dtype = (*out)->dtype;
    n->out[0].device = mt_tdevice(*out); /* a gradient that never arrives is made there as zeros */
    memcpy(n->out[0].shape, (*out)->shape, (size_t)(*out)->ndim * sizeof *(*out)->shape);
    st = save_for(n, e, (const mt_tensor *const *)pre, ver, nin, *out);
  }
  if (!st) {
    st = inplace ? mtg_attach_inplace(n, *out) : mtg_attach(n, out, 1);
    n = NULL;
  }
  mtg_node_release(n);
  for (int i = 0; i < nin; i++) mt_release(pre[i]);
  return st;
}

typedef struct {
  mt_op op;
  const mt_tensor *a, *b, *c;
  double f[3];
} ew_args;

static mt_status run_unary(void *ctx, mt_tensor **out) {
  ew_args *a = ctx;
  return mt_unary_p(a->op, a->a, a->f, out);
}

/* p: the op's number parameter (rows with one; node f[0] and trace f[0]) */
static mt_status unary_untraced(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out) {
  if (!x->autograd && !(*out && (*out)->autograd)) return mt_unary_p(op, x, p, out); /* fast path */
  ew_args a = {.op = op, .a = x, .f = {p[0]}};
  const mt_tensor *ins[1] = {x};
  return mtg_record_ew(op, ins, 1, out, run_unary, &a, a.f, 1);
}

static mt_status run_binary(void *ctx, mt_tensor **out) {
  ew_args *a = ctx;
  return mt_binary(a->op, a->a, a->b, out);
}

static mt_status binary_untraced(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  if (!a->autograd && !b->autograd && !(*out && (*out)->autograd)) return mt_binary(op, a, b, out);
  ew_args x = {.op = op, .a = a, .b = b};
  const mt_tensor *ins[2] = {a, b};
  return mtg_record_ew(op, ins, 2, out, run_binary, &x, NULL, 0);
}

/* ---- ops with extra operands or parameters: one generic path ---- */
typedef struct {
  mt_op op;
  const mt_tensor *const *ins;
  int nin;
  const mt_args *a;
} call_args;

static mt_status run_call(void *ctx, mt_tensor **out) {
  call_args *c = ctx;
  return mt_call(c->op, c->ins, c->nin, c->a, out);
}

static mt_status run_cast(void *ctx, mt_tensor **out) {
  ew_args *a = ctx;
  return mt_to_dtype(a->a, (mt_dtype)a->f[0], a->f[1] != 0, out);
}

static mt_status to_dtype_untraced(const mt_tensor *t, mt_dtype dt, bool copy, mt_tensor **out) {
  if (!t->autograd) return mt_to_dtype(t, dt, copy, out);
  if (!copy && (mt_dtype)t->dtype == dt) /* the same tensor: no node */
    return mt_deliver("to", mt_retain((mt_tensor *)t), out);
  ew_args a = {.a = t, .f = {dt, copy}};
  const mt_tensor *ins[1] = {t};
  return mtg_record_ew(MT_OP_cast, ins, 1, out, run_cast, &a, NULL, 0);
}

static mt_status run_clone(void *ctx, mt_tensor **out) {
  ew_args *a = ctx;
  return mt_clone(a->a, out);
}

static mt_status clone_untraced(const mt_tensor *t, mt_tensor **out) {
  if (!t->autograd) return mt_clone(t, out);
  ew_args a = {.a = t};
  const mt_tensor *ins[1] = {t};
  return mtg_record_ew(MT_OP_copy, ins, 1, out, run_clone, &a, NULL, 0);
}

mt_status mtg_contiguous(const mt_tensor *t, mt_tensor **out) {
  if (mt_is_contiguous(t)) {
    mt_tensor *r = mt_retain((mt_tensor *)t);
    return mt_deliver("contiguous", r, out);
  }
  return mtg_clone(t, out);
}

/* ---- the traced entry points: run, then append a trace entry (trace.h) ---- */
#define TRACED(op, call, ins, nin, iargs, ni, fargs, nf)                                                               \
  do {                                                                                                                 \
    mt_tensor *given = *out;                                                                                           \
    mt_status st = (call);                                                                                             \
    if (!st && MTG_TRACING()) mtg_trace_op((op), given, (ins), (nin), *out, (iargs), (ni), (fargs), (nf));             \
    return st;                                                                                                         \
  } while (0)

mt_status mtg_unary_p(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out) {
  const mt_tensor *ins[1] = {x};
  const double f[1] = {p ? *p : mt_ops[op].pdefault};
  TRACED(op, unary_untraced(op, x, f, out), ins, 1, NULL, 0, f, mt_ops[op].param ? 1 : 0);
}

mt_status mtg_unary(mt_op op, const mt_tensor *x, mt_tensor **out) { return mtg_unary_p(op, x, NULL, out); }

mt_status mtg_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_tensor *ins[2] = {a, b};
  TRACED(op, binary_untraced(op, a, b, out), ins, 2, NULL, 0, NULL, 0);
}

mt_status mtg_ew(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **out) {
  call_args c = {op, ins, nin, a};
  mt_tensor *given = *out;
  mt_status st = mtg_record_ew(op, ins, nin, out, run_call, &c, a ? a->f : NULL, a ? a->nf : 0);
  if (!st && MTG_TRACING())
    mtg_trace_op(op, given, ins, nin, *out, a ? a->i : NULL, a ? a->ni : 0, a ? a->f : NULL, a ? a->nf : 0);
  return st;
}

/* a conversion that returns x itself is no op for the trace */
mt_status mtg_to_dtype(const mt_tensor *t, mt_dtype dt, bool copy, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  const int64_t a[1] = {dt};
  mt_tensor *given = *out;
  mt_status st = to_dtype_untraced(t, dt, copy, out);
  if (!st && MTG_TRACING() && *out != t) mtg_trace_op(MT_OP_cast, given, ins, 1, *out, a, 1, NULL, 0);
  return st;
}

mt_status mtg_clone(const mt_tensor *t, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  TRACED(MT_OP_copy, clone_untraced(t, out), ins, 1, NULL, 0, NULL, 0);
}
