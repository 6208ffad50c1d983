/* trace.c -- the trace buffer behind graph/trace.h. It holds references to
 * every tensor an entry names so that identities stay valid until the JIT
 * has read them; it never interprets ops. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

_Thread_local mtg_trace *mtg_tracing;

mt_status mtg_trace_begin(void) {
  if (mtg_tracing) return mt_fail(MT_EARG, "torch.compile: a compiled function is already being captured");
  mtg_trace *t = calloc(1, sizeof *t);
  if (!t) return mt_fail(MT_ENOMEM, "torch.compile: out of memory");
  mtg_tracing = t;
  return MT_OK;
}

mtg_trace *mtg_trace_end(void) {
  mtg_trace *t = mtg_tracing;
  mtg_tracing = NULL;
  return t;
}

void mtg_trace_free(mtg_trace *t) {
  if (!t) return;
  for (int k = 0; k < t->n; k++) {
    for (int j = 0; j < t->e[k].nin; j++) mt_release(t->e[k].in[j]);
    mt_release(t->e[k].out);
  }
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

void mtg_trace_op(int op, const mt_tensor *given, const mt_tensor *const *ins, int nin, const mt_tensor *out,
                  const int64_t *iargs, int ni, const double *f, int nf) {
  mtg_trace *t = mtg_tracing;
  if (!t) return;
  if (given) {
    mtg_trace_refuse("%s writes in place or into out=, which the JIT does not replay yet", mt_ops[op].name);
    return;
  }
  if (nin > MTG_TRACE_NIN || ni > MTG_TRACE_NI || nf > 3) {
    mtg_trace_refuse("%s has more operands than a trace entry holds", mt_ops[op].name);
    return;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 64;
    mtg_trace_entry *e = realloc(t->e, (size_t)cap * sizeof *e);
    if (!e) {
      mtg_trace_refuse("out of memory while capturing");
      return;
    }
    t->e = e, t->cap = cap;
  }
  mtg_trace_entry *e = &t->e[t->n++];
  memset(e, 0, sizeof *e);
  e->op = op;
  e->nin = nin;
  e->cdt = -1;
  for (int k = 0; k < nin; k++) e->in[k] = ins[k] ? mt_retain((mt_tensor *)ins[k]) : NULL;
  e->out = mt_retain((mt_tensor *)out);
  if (ni) memcpy(e->i, iargs, (size_t)ni * sizeof *iargs);
  e->ni = ni;
  if (nf) memcpy(e->f, f, (size_t)nf * sizeof *f);
  if (mt_ops[op].kind == MT_K_COMPARE && nin == 2) e->cdt = (int8_t)mt_result_type(ins[0], ins[1]);
}

bool mtg_trace_produced(const mtg_trace *tr, const mt_tensor *t) {
  for (int k = tr->n - 1; k >= 0; k--)
    if (tr->e[k].out == t) return true;
  return false;
}

void mtg_trace_fresh(const mt_tensor *x, const char *what) {
  mtg_trace *t = mtg_tracing;
  if (!t || mtg_trace_produced(t, x)) return;
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
