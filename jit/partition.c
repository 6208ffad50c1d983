/* partition.c -- compiled functions whose results require grad (a model's
 * forward called in an eager training loop: `model = torch.compile(model)`).
 *
 * Capture: after fn ran under the trace, the autograd engine runs from the
 * results that require grad, seeded with placeholder gradients, towards
 * every graph input that requires grad (as torch.autograd.grad: nothing
 * accumulates), so the trace also records the backward. The trace is then
 * split: entries before that point are the forward graph, the rest the
 * backward graph. Tensors the backward reads from the forward part are
 * residuals, extra outputs of the forward graph; its other inputs are
 * forward inputs (weights) and the gradients of the results.
 *
 * Call: the forward graph runs, and one autograd node (mtg_record_custom)
 * becomes the history of the results, with the inputs requiring grad as
 * its inputs. It keeps the residuals, the forward inputs the backward
 * reads (with their storage versions, checked as eager autograd does) and
 * the call's runtime scalars; its backward runs the compiled backward
 * graph. Nothing here calls Lua: the bindings hand over fn's results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "profiler.h"

enum { BIN_FWD, BIN_RESID, BIN_GOUT }; /* where an input of the backward graph comes from */

/* The capture's state between tracing the backward and building the entry. */
struct mtj_aot_capture {
  int kf;                      /* trace entries [0, kf) are the forward */
  int nres;                    /* results requiring grad */
  int res_r[MTJ_MAXOUT];       /* their index among fn's results */
  mt_tensor *res[MTJ_MAXOUT];  /* owned */
  mt_tensor *gout[MTJ_MAXOUT]; /* placeholder gradients of the results (owned) */
  int ndiff;
  mt_tensor *diff[MTJ_MAXIN]; /* forward inputs requiring grad (owned) */
  mt_tensor *grad[MTJ_MAXIN]; /* their gradients in the traced backward (owned, NULL: unreached) */
};

/* What an entry keeps: shared with the autograd nodes of its calls. */
struct mtj_aot {
  int refs;
  mtj_compiled *bwd;
  char name[112]; /* the node's name, the profiler's name of the backward */
  int nuser;      /* the forward graph's outputs before its residuals */
  int nresid;
  int nout;               /* node outputs: fn's results requiring grad */
  int out_of[MTJ_MAXOUT]; /* node output j: forward graph output index */
  int ndiff;              /* node inputs: forward graph inputs requiring grad */
  int diff[MTJ_MAXIN];    /* node input d: forward graph input index */
  int grad_of[MTJ_MAXIN]; /* node input d: backward graph output index, -1: none */
  int nbin;               /* backward graph inputs */
  struct {
    int kind, idx;
  } bin[MTJ_MAXIN];
  int nsc;
};

/* One call's saved state: the node's context. */
typedef struct aot_ctx {
  mtj_aot *a;
  mt_tensor **fin;   /* [nbin]: forward inputs the backward reads (NULL elsewhere) */
  uint32_t *fver;    /* their storage versions at the call */
  mt_tensor **resid; /* [nresid] */
  uint32_t *rver;
  double sc[MTJ_MAXARGS + MTJ_MAXSCT];
} aot_ctx;

void mtj_aot_release(mtj_aot *a) {
  if (!a || --a->refs > 0) return;
  mtj_free(a->bwd);
  free(a);
}

void mtj_aot_capture_free(mtj_aot_capture *c) {
  if (!c) return;
  for (int r = 0; r < c->nres; r++) mt_release(c->res[r]), mt_release(c->gout[r]);
  for (int d = 0; d < c->ndiff; d++) mt_release(c->diff[d]), mt_release(c->grad[d]);
  free(c);
}

static bool among(const mt_tensor *const *a, int n, const mt_tensor *t, int *at) {
  for (int k = 0; k < n; k++)
    if (a[k] == t) return *at = k, true;
  return false;
}

/* ---- capture ---- */

int mtj_aot_forward_len(const mtj_aot_capture *c) { return c->kf; }

bool mtj_aot_uses_scalar(const mtj_aot *a, int k) { return mtj_uses_scalar(a->bwd, k); }

mtj_aot_capture *mtj_aot_trace_backward(mtj_entry *e, mtg_trace *tr, const mt_tensor *const *res, int nres) {
  if (tr->why[0] || tr->backward_ran || !mtg_grad_enabled()) return NULL;
  mtj_aot_capture *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->kf = tr->n;
  for (int r = 0; r < nres; r++) {
    mt_tensor *t = (mt_tensor *)res[r];
    if (!t || !mtg_requires_grad(t) || !mtg_trace_produced(tr, t)) continue;
    int dup;
    if (among((const mt_tensor *const *)c->res, c->nres, t, &dup) || c->nres == MTJ_MAXOUT) {
      snprintf(e->why, sizeof e->why,
               "its results that require grad repeat a tensor (the JIT compiles the "
               "backward of distinct results only)");
      break;
    }
    c->res_r[c->nres] = r;
    c->res[c->nres] = mt_retain(t);
    mt_status st = mt_full(t->shape, t->ndim, mt_sfloat(1), (mt_dtype)t->dtype, mt_tdevice(t), &c->gout[c->nres]);
    c->nres++;
    if (st) {
      snprintf(e->why, sizeof e->why, "%s", mt_errmsg());
      break;
    }
  }
  if (!c->nres || e->why[0]) {
    mtj_aot_capture_free(c);
    return NULL;
  }
  const mt_tensor *ins[MTJ_MAXIN];
  int nin = mtj_graph_inputs(tr, e, ins, NULL);
  for (int k = 0; k < nin && !e->why[0]; k++)
    if (mtg_requires_grad(ins[k])) c->diff[c->ndiff++] = mt_retain((mt_tensor *)ins[k]);
  if (!e->why[0] && !c->ndiff)
    snprintf(e->why, sizeof e->why,
             "its result requires grad but none of the tensors it reads does (a tensor made "
             "with requires_grad inside the function?)");
  if (e->why[0]) {
    mtj_aot_capture_free(c);
    return NULL;
  }
  mtg_backward_opts o = {.retain_graph = true, .allow_unused = true};
  mt_status st = mtg_backward(c->res, c->gout, c->nres, c->diff, c->ndiff, o, c->grad);
  tr->backward_ran = false; /* traced on purpose: the results keep their history */
  if (st) {
    snprintf(e->why, sizeof e->why, "its backward cannot be traced: %s", mt_errmsg());
    mtj_aot_capture_free(c);
    return NULL;
  }
  return c;
}

/* The trace entries [b, b + n) of tr as a trace of their own (no .grad
 * side effects; the other fields are shared, not owned). */
static mtg_trace part(const mtg_trace *tr, int b, int n) {
  mtg_trace p = *tr;
  p.e = tr->e + b, p.n = n, p.cap = n;
  p.grads = NULL, p.ngrads = 0;
  return p;
}

/* Builds e->aot and e->c (the forward graph): ins[0..nin) are the forward
 * graph's inputs, outs[0..*nout) fn's returned tensors; residuals are
 * appended to outs. */
void mtj_aot_compile(const char *name, mtj_entry *e, mtj_aot_capture *c, const mtg_trace *tr,
                     const mt_tensor *const *ins, int nin, const mt_tensor **outs, int nout, const double *sc,
                     const bool *isint, int nsc, const mtj_options *o) {
  mtj_aot *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(e->why, sizeof e->why, "out of memory");
    return;
  }
  a->refs = 1, a->nuser = nout, a->nsc = nsc + o->nsct;
  snprintf(a->name, sizeof a->name, "%s backward", name);
  for (int j = 0; j < c->nres; j++) /* the results requiring grad: RET_OUT entries by construction */
    a->out_of[a->nout++] = e->ret[c->res_r[j]].idx;
  for (int d = 0; d < c->ndiff; d++) {
    int k = -1;
    among(ins, nin, c->diff[d], &k);
    a->diff[a->ndiff++] = k;
  }
  mtg_trace fwd = part(tr, 0, c->kf), bwd = part(tr, c->kf, tr->n - c->kf);
  const mt_tensor *bins[MTJ_MAXIN], *bouts[MTJ_MAXIN];
  a->nbin = mtj_graph_inputs(&bwd, e, bins, NULL);
  for (int k = 0; k < a->nbin && !e->why[0]; k++) {
    int at;
    if (among(ins, nin, bins[k], &at))
      a->bin[k].kind = BIN_FWD, a->bin[k].idx = at;
    else if (among((const mt_tensor *const *)c->gout, c->nres, bins[k], &at))
      a->bin[k].kind = BIN_GOUT, a->bin[k].idx = at;
    else if (mtg_trace_produced(&fwd, bins[k]) && nout < MTJ_MAXOUT) {
      a->bin[k].kind = BIN_RESID, a->bin[k].idx = a->nresid++;
      outs[nout++] = bins[k];
    } else {
      snprintf(e->why, sizeof e->why, "its backward reads a tensor the forward neither reads nor makes");
    }
  }
  int nbout = 0;
  for (int d = 0; d < c->ndiff && !e->why[0]; d++) {
    a->grad_of[d] = -1;
    if (!c->grad[d]) continue;
    int at;
    if (!mtg_trace_produced(&bwd, c->grad[d]) && !among(bins, a->nbin, c->grad[d], &at)) {
      snprintf(e->why, sizeof e->why, "its backward returns a gradient made outside the traced ops");
      break;
    }
    a->grad_of[d] = nbout;
    bouts[nbout++] = c->grad[d];
  }
  if (!e->why[0] && mtj_compile(&fwd, ins, nin, sc, isint, nsc, outs, nout, o, &e->c))
    snprintf(e->why, sizeof e->why, "%s", mt_errmsg());
  if (!e->why[0] && mtj_compile(&bwd, bins, a->nbin, sc, isint, nsc, bouts, nbout, o, &a->bwd))
    snprintf(e->why, sizeof e->why, "its backward: %s", mt_errmsg());
  if (e->why[0]) {
    mtj_free(e->c);
    e->c = NULL;
    mtj_aot_release(a);
    return;
  }
  e->aot = a;
}

void mtj_aot_explain(const mtj_aot *a, FILE *f) {
  fprintf(f, "\n---- the compiled backward (%d inputs: %d residuals saved by the forward; %d gradients) ----\n",
          a->nbin, a->nresid, a->ndiff);
  mtj_explain(a->bwd, f);
}

/* ---- calls ---- */

static void ctx_free(void *p) {
  aot_ctx *x = p;
  for (int k = 0; k < x->a->nbin; k++) mt_release(x->fin[k]);
  for (int r = 0; r < x->a->nresid; r++) mt_release(x->resid[r]);
  mtj_aot_release(x->a);
  free(x->fin);
  free(x->fver);
  free(x->resid);
  free(x->rver);
  free(x);
}

/* A saved tensor changed in place since the call: eager autograd's error. */
static mt_status changed(const mtj_aot *a, const char *what, const mt_tensor *t, uint32_t was) {
  char b[96];
  return mt_fail(MT_EARG,
                 "a tensor needed for gradient computation was modified by an in-place operation: %s of "
                 "%s (shape %s, %s) is at version %u; expected version %u (clone it before modifying it "
                 "in place)",
                 what, a->name, mt_shape_str(t->shape, t->ndim, b, sizeof b), mt_dtype_name((mt_dtype)t->dtype),
                 t->storage->version, was);
}

static mt_status aot_backward(void *p, mt_tensor *const *gout, int nout, mt_tensor **gin, int nin) {
  aot_ctx *x = p;
  mtj_aot *a = x->a;
  if (mtg_grad_enabled())
    return mt_fail(MT_EARG,
                   "%s: create_graph=true (a gradient of a gradient) through a compiled function is not "
                   "supported; call the function uncompiled for higher-order gradients",
                   a->name);
  const mt_tensor *bins[MTJ_MAXIN];
  for (int k = 0; k < a->nbin; k++) {
    int i = a->bin[k].idx;
    if (a->bin[k].kind == BIN_FWD) {
      if (x->fin[k]->storage->version != x->fver[k]) return changed(a, "an input", x->fin[k], x->fver[k]);
      bins[k] = x->fin[k];
    } else if (a->bin[k].kind == BIN_RESID) {
      if (x->resid[i]->storage->version != x->rver[i]) return changed(a, "a result", x->resid[i], x->rver[i]);
      bins[k] = x->resid[i];
    } else {
      bins[k] = gout[i];
    }
  }
  char why[200];
  if (!mtj_guard(a->bwd, bins, why, sizeof why))
    return mt_fail(MT_EARG, "%s: the gradients do not fit the compiled backward (%s)", a->name, why);
  mt_tensor *outs[MTJ_MAXIN] = {0};
  int64_t tok = mtg_profiler_begin(a->name, bins, a->nbin);
  mt_status st = mtj_run(a->bwd, bins, x->sc, outs);
  mtg_profiler_end(tok);
  for (int d = 0; d < nin && d < a->ndiff; d++) {
    int b = a->grad_of[d];
    gin[d] = !st && b >= 0 ? mt_retain(outs[b]) : NULL;
  }
  for (int k = 0; k < MTJ_MAXIN; k++) mt_release(outs[k]);
  (void)nout;
  return st;
}

mt_status mtj_aot_attach(mtj_aot *a, const mt_tensor *const *ins, const double *sc, mt_tensor **outs) {
  aot_ctx *x = calloc(1, sizeof *x);
  if (!x) return mt_fail(MT_ENOMEM, "torch.compile: out of memory");
  x->a = a;
  a->refs++;
  x->fin = calloc((size_t)a->nbin + 1, sizeof *x->fin);
  x->fver = calloc((size_t)a->nbin + 1, sizeof *x->fver);
  x->resid = calloc((size_t)a->nresid + 1, sizeof *x->resid);
  x->rver = calloc((size_t)a->nresid + 1, sizeof *x->rver);
  if (!x->fin || !x->fver || !x->resid || !x->rver) {
    ctx_free(x);
    return mt_fail(MT_ENOMEM, "torch.compile: out of memory");
  }
  memcpy(x->sc, sc, (size_t)a->nsc * sizeof *sc);
  for (int k = 0; k < a->nbin; k++)
    if (a->bin[k].kind == BIN_FWD) {
      x->fin[k] = mt_retain((mt_tensor *)ins[a->bin[k].idx]);
      x->fver[k] = x->fin[k]->storage->version;
    }
  mt_status st = MT_OK;
  /* aliases without autograd state: a residual that is also a result would
   * otherwise hold the node that holds it (a cycle) */
  for (int r = 0; r < a->nresid && !st; r++) {
    st = mt_alias(outs[a->nuser + r], &x->resid[r]);
    if (!st) x->rver[r] = x->resid[r]->storage->version;
  }
  const mt_tensor *nins[MTJ_MAXIN];
  mt_tensor *nouts[MTJ_MAXOUT];
  for (int d = 0; d < a->ndiff; d++) nins[d] = ins[a->diff[d]];
  for (int j = 0; j < a->nout && !st; j++) {
    mt_tensor **o = &outs[a->out_of[j]];
    for (int i = 0; i < j && !st; i++)
      if (nouts[i] == *o) { /* two results the graph computes as one: each gets its own tensor */
        mt_tensor *t = NULL;
        st = mt_alias(*o, &t);
        mt_release(*o);
        *o = t;
      }
    nouts[j] = *o;
  }
  if (st) {
    ctx_free(x);
    return st;
  }
  return mtg_record_custom(a->name, aot_backward, x, ctx_free, nins, a->ndiff, nouts, a->nout);
}
