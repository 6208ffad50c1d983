/* trace.c -- the trace buffer behind graph/trace.h. It holds references to
 * every tensor an entry names so that identities stay valid until the JIT
 * has read them; it never interprets ops. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "creation.h"
#include "random.h"
#include "trace.h"

_Thread_local mtg_trace *mtg_tracing;
static void check_versions(mtg_trace *t);

mt_status mtg_trace_begin(void) {
  if (mtg_tracing) return mt_fail(MT_EARG, "torch.compile: a compiled function is already being captured");
  mtg_trace *t = calloc(1, sizeof *t);
  if (!t) return mt_fail(MT_ENOMEM, "torch.compile: out of memory");
  mtg_tracing = t;
  return MT_OK;
}

mtg_trace *mtg_trace_end(void) {
  mtg_trace *t = mtg_tracing;
  if (t) check_versions(t); /* refuses through mtg_tracing: still set */
  mtg_tracing = NULL;
  return t;
}

void mtg_trace_free(mtg_trace *t) {
  if (!t) return;
  for (int k = 0; k < t->n; k++) {
    for (int j = 0; j < t->e[k].nin; j++) mt_release(t->e[k].in[j]);
    mt_release(t->e[k].out);
    for (int j = 0; j < MTG_TRACE_NOUT - 1; j++) mt_release(t->e[k].xout[j]);
  }
  for (int k = 0; k < t->ngrads; k++) mt_release(t->grads[k].leaf), mt_release(t->grads[k].grad);
  free(t->grads);
  for (int k = 0; k < 2 * t->nalias; k++) mt_release(t->alias[k]);
  free(t->alias);
  free(t->ver);
  for (int k = 0; k < t->nfresh; k++) mt_release(t->fresh[k]);
  free(t->e);
  free(t->fresh);
  free(t->fresh_what);
  free(t);
}

void mtg_trace_refuse(const char *fmt, ...) {
  mtg_trace *t = mtg_tracing;
  if (!t || t->why[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->why, sizeof t->why, fmt, ap);
  va_end(ap);
}

/* The recorded version of storage s (NULL if the trace has not seen it). */
static struct mtg_trace_ver *ver_of(mtg_trace *t, const mt_storage *s) {
  for (int k = t->nver - 1; k >= 0; k--)
    if (t->ver[k].s == s) return &t->ver[k];
  return NULL;
}

/* Notes that x was read (check: no untraced write since the last traced
 * use) or written by a traced op (only the new version is kept). */
static void see(mtg_trace *t, const mt_tensor *x, bool written) {
  if (!x || (x->flags & MT_TF_WRAPPED)) return;
  if (mt_is_complex((mt_dtype)x->dtype)) /* every traced value passes here: the JIT's complex gate */
    mtg_trace_refuse("complex tensors (%s) are not compiled by the JIT", mt_dtype_name((mt_dtype)x->dtype));
  struct mtg_trace_ver *v = ver_of(t, x->storage);
  if (v) {
    if (!written && v->v != x->storage->version)
      mtg_trace_refuse("a tensor the function uses was written in place by an op the JIT does not trace");
    v->v = x->storage->version;
    return;
  }
  if (t->nver == t->capver) {
    int cap = t->capver ? 2 * t->capver : 64;
    struct mtg_trace_ver *n = realloc(t->ver, (size_t)cap * sizeof *n);
    if (!n) {
      mtg_trace_refuse("out of memory while capturing");
      return;
    }
    t->ver = n, t->capver = cap;
  }
  t->ver[t->nver].s = x->storage;
  t->ver[t->nver++].v = x->storage->version;
}

/* Called when the trace ends: a write after the last traced use. */
static void check_versions(mtg_trace *t) {
  for (int k = 0; k < t->nver; k++)
    if (t->ver[k].v != t->ver[k].s->version) {
      mtg_trace_refuse("a tensor the function uses was written in place by an op the JIT does not trace");
      return;
    }
}

/* A new zeroed entry at the end of the active trace, or NULL (refused). */
static mtg_trace_entry *append(mtg_trace *t) {
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    mtg_trace_entry *e = realloc(t->e, (size_t)cap * sizeof *e);
    if (!e) {
      mtg_trace_refuse("out of memory while capturing");
      return NULL;
    }
    t->e = e, t->cap = cap;
  }
  mtg_trace_entry *e = &t->e[t->n++];
  memset(e, 0, sizeof *e);
  e->cdt = -1;
  e->nout = 1;
  return e;
}

void mtg_trace_op(int op, const mt_tensor *given, const mt_tensor *const *ins, int nin, const mt_tensor *out,
                  const int64_t *iargs, int ni, const double *f, int nf) {
  mtg_trace *t = mtg_tracing;
  if (!t) return;
  if (nin > MTG_TRACE_NIN || ni > MTG_TRACE_NI || nf > 3) {
    mtg_trace_refuse("%s has more operands than a trace entry holds", mt_ops[op].name);
    return;
  }
  mtg_trace_entry *e = append(t);
  if (!e) return;
  e->op = op;
  e->kind = MTG_TE_OP;
  e->nin = nin;
  e->inplace = given != NULL;
  for (int k = 0; k < nin; k++)
    if (!(e->inplace && ins[k] && ins[k]->storage == out->storage)) see(t, ins[k], false);
  see(t, out, true);
  for (int k = 0; k < nin; k++) e->in[k] = ins[k] ? mt_retain((mt_tensor *)ins[k]) : NULL;
  e->out = mt_retain((mt_tensor *)out);
  if (ni) memcpy(e->i, iargs, (size_t)ni * sizeof *iargs);
  e->ni = ni;
  if (nf) memcpy(e->f, f, (size_t)nf * sizeof *f);
  if (mt_ops[op].kind == MT_K_COMPARE && nin == 2) e->cdt = (int8_t)mt_result_type(ins[0], ins[1]);
}

void mtg_trace_call(const char *name, mtg_replay_fn fn, bool inplace, const mt_tensor *const *ins, int nin,
                    mt_tensor *const *outs, int nout, const void *args, size_t nbytes, const double *f, int nf) {
  mtg_trace *t = mtg_tracing;
  if (!t) return;
  if (nin > MTG_TRACE_NIN || nout > MTG_TRACE_NOUT || nbytes > sizeof t->e->i || nf > 3) {
    mtg_trace_refuse("%s has more operands or attributes than a trace entry holds", name);
    return;
  }
  mtg_trace_entry *e = append(t);
  if (!e) return;
  for (int k = 0; k < nin; k++)
    if (!(inplace && k == 0)) see(t, ins[k], false);
  for (int k = 0; k < nout; k++) see(t, outs[k], true);
  e->kind = MTG_TE_CALL;
  e->op = -1;
  e->name = name;
  e->fn = fn;
  e->inplace = inplace;
  e->nin = nin;
  for (int k = 0; k < nin; k++) e->in[k] = ins[k] ? mt_retain((mt_tensor *)ins[k]) : NULL;
  e->out = mt_retain(outs[0]);
  for (int k = 1; k < nout; k++) e->xout[k - 1] = outs[k] ? mt_retain(outs[k]) : NULL;
  e->nout = nout;
  if (nbytes) memcpy(e->i, args, nbytes);
  e->ni = (int)((nbytes + 7) / 8);
  if (nf) memcpy(e->f, f, (size_t)nf * sizeof *f);
}

void mtg_trace_full(const mt_tensor *x, double v) {
  mtg_trace *t = mtg_tracing;
  if (!t || !x) return;
  mtg_trace_entry *e = append(t);
  if (!e) return;
  see(t, x, true);
  e->kind = MTG_TE_FULL;
  e->op = -1;
  e->out = mt_retain((mt_tensor *)x);
  e->f[0] = v;
}

void mtg_trace_alias(const mt_tensor *dst, const mt_tensor *src) {
  mtg_trace *t = mtg_tracing;
  if (!t || !dst || !src) return;
  if (t->nalias == t->capalias) {
    int cap = t->capalias ? 2 * t->capalias : 32;
    mt_tensor **a = realloc(t->alias, (size_t)cap * 2 * sizeof *a);
    if (!a) {
      mtg_trace_refuse("out of memory while capturing");
      return;
    }
    t->alias = a, t->capalias = cap;
  }
  t->alias[2 * t->nalias] = mt_retain((mt_tensor *)dst);
  t->alias[2 * t->nalias + 1] = mt_retain((mt_tensor *)src);
  t->nalias++;
}

const mt_tensor *mtg_trace_root(const mtg_trace *tr, const mt_tensor *t) {
  for (int k = tr->nalias - 1; k >= 0; k--)
    if (tr->alias[2 * k] == t) return mtg_trace_root(tr, tr->alias[2 * k + 1]);
  return t;
}

typedef struct arange_attr {
  mt_scalar start, end, step;
  int64_t dtype;
} arange_attr;

static mt_status rp_arange(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  const arange_attr *a = (const arange_attr *)w;
  return mt_arange(a->start, a->end, a->step, (mt_dtype)a->dtype, mt_cpu(), &out[0]);
}

void mtg_trace_arange(const mt_tensor *t, mt_scalar start, mt_scalar end, mt_scalar step) {
  if (!mtg_tracing) return;
  arange_attr a;
  memset(&a, 0, sizeof a);
  a.start = start, a.end = end, a.step = step, a.dtype = t->dtype;
  mt_tensor *o = (mt_tensor *)t;
  mtg_trace_call("arange", rp_arange, false, NULL, 0, &o, 1, &a, sizeof a, NULL, 0);
}

static mt_status rp_bernoulli_(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  return mt_bernoulli_(out[0], f[0], NULL); /* the generator of the tensor's device, as eager */
}

void mtg_trace_bernoulli_(const mt_tensor *t, double p) {
  if (!mtg_tracing) return;
  mt_tensor *o = (mt_tensor *)t;
  mtg_trace_call("bernoulli_", rp_bernoulli_, true, &t, 1, &o, 1, NULL, 0, &p, 1);
  if (mtg_tracing->n) mtg_tracing->e[mtg_tracing->n - 1].impure = true;
}

void mtg_trace_set_grad(const mt_tensor *leaf, const mt_tensor *grad) {
  mtg_trace *t = mtg_tracing;
  if (!t) return;
  for (int k = 0; k < t->ngrads; k++)
    if (t->grads[k].leaf == leaf) {
      mt_release(t->grads[k].grad);
      t->grads[k].grad = grad ? mt_retain((mt_tensor *)grad) : NULL;
      return;
    }
  if (t->ngrads == t->capgrads) {
    int cap = t->capgrads ? 2 * t->capgrads : 16;
    mtg_trace_grad *g = realloc(t->grads, (size_t)cap * sizeof *g);
    if (!g) {
      mtg_trace_refuse("out of memory while capturing");
      return;
    }
    t->grads = g, t->capgrads = cap;
  }
  t->grads[t->ngrads].leaf = mt_retain((mt_tensor *)leaf);
  t->grads[t->ngrads].grad = grad ? mt_retain((mt_tensor *)grad) : NULL;
  t->ngrads++;
}

bool mtg_trace_produced(const mtg_trace *tr, const mt_tensor *t) {
  t = mtg_trace_root(tr, t);
  for (int k = tr->n - 1; k >= 0; k--) {
    if (tr->e[k].out == t && !tr->e[k].inplace) return true;
    for (int j = 0; j < tr->e[k].nout - 1; j++)
      if (tr->e[k].xout[j] == t) return true;
  }
  return false;
}

/* True when x is named by an entry of tr (as an operand or a result). */
static bool named(const mtg_trace *tr, const mt_tensor *x) {
  for (int k = 0; k < 2 * tr->nalias; k++)
    if (tr->alias[k] == x) return true;
  for (int k = tr->n - 1; k >= 0; k--) {
    const mtg_trace_entry *e = &tr->e[k];
    if (e->out == x) return true;
    for (int j = 0; j < e->nin; j++)
      if (e->in[j] == x) return true;
    for (int j = 0; j < e->nout - 1; j++)
      if (e->xout[j] == x) return true;
  }
  return false;
}

void mtg_trace_fresh(const mt_tensor *x, const char *what) {
  mtg_trace *t = mtg_tracing;
  if (!t || named(t, x)) return;
  for (int k = 0; k < t->nfresh; k++)
    if (t->fresh[k] == x) return;
  if (t->nfresh == t->capfresh) {
    int cap = t->capfresh ? 2 * t->capfresh : 16;
    mt_tensor **f = realloc(t->fresh, (size_t)cap * sizeof *f);
    if (f) t->fresh = f;
    char(*w)[64] = realloc(t->fresh_what, (size_t)cap * sizeof *w);
    if (w) t->fresh_what = w;
    if (!f || !w) {
      mtg_trace_refuse("out of memory while capturing");
      return;
    }
    t->capfresh = cap;
  }
  t->fresh[t->nfresh] = mt_retain((mt_tensor *)x);
  snprintf(t->fresh_what[t->nfresh], 64, "%s", what ? what : "an untraced op");
  t->nfresh++;
}
