/* guard.c -- which entry of a compiled function serves a call: the guards
 * on its arguments (types, tensor dtype/rank/sizes of 1, number kinds and
 * values, booleans, strings), on its graph inputs and on the state it was
 * captured in; and automatic dynamic sizes, where a second entry that
 * differs only in sizes folds into the first. The bindings describe the
 * call's Lua values; nothing here reads Lua. */
#include <stdio.h>
#include <string.h>

#include "entry.h"

const char *mtj_type_name(int t) {
  static const char *const names[] = {"nil",   "boolean",  "userdata", "number", "string",
                                      "table", "function", "userdata", "thread"};
  return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "no value";
}

int mtj_match_args(const mtj_entry *e, const mtj_arg *args, int nargs, char *why, size_t n) {
  if (e->nargs != nargs) return snprintf(why, n, "%d arguments, compiled for %d", nargs, e->nargs), 0;
  bool near = false;
  for (int i = 0; i < nargs; i++) {
    const mtj_arg *a = &args[i], *w = &e->arg[i];
    if (a->type != w->type) return snprintf(why, n, "argument %d is a %s", i + 1, mtj_type_name(a->type)), 0;
    if (a->type == MTJ_TUSERDATA && (a->dtype != w->dtype || a->ndim != w->ndim || a->ones != w->ones))
      return snprintf(why, n, "argument %d: dtype, rank or sizes of 1 differ", i + 1), 0;
    if (a->type == MTJ_TNUMBER) {
      if (a->isint != w->isint) return snprintf(why, n, "argument %d: integer vs float number", i + 1), 0;
      if (a->num != w->num && !(w->candidate && e->generalized)) {
        if (!w->candidate)
          return snprintf(why, n, "argument %d: the number %g, compiled for %g", i + 1, a->num, w->num), 0;
        near = true;
      }
    }
    if (a->type == MTJ_TBOOLEAN && a->b != w->b) return snprintf(why, n, "argument %d: another boolean", i + 1), 0;
    if (a->type == MTJ_TSTRING && strcmp(a->str, w->str))
      return snprintf(why, n, "argument %d: another string", i + 1), 0;
  }
  return near ? 2 : 1;
}

bool mtj_match_inputs(const mtj_entry *e, const mt_tensor *const *ins, int autocast, char *why, size_t n) {
  if (e->c && !mtj_guard(e->c, ins, why, n)) return false;
  if (mtg_grad_enabled() != e->grad_mode) return snprintf(why, n, "grad mode changed"), false;
  if (autocast != e->autocast) return snprintf(why, n, "autocast state changed"), false;
  for (int k = 0; k < e->nin; k++)
    if (e->grad_mode && mtg_requires_grad(ins[k]) != (bool)(e->rg[k / 64] >> (k % 64) & 1))
      return snprintf(why, n, "an input's requires_grad changed"), false;
  return true;
}

/* True when entries a and b were captured from the same call shape: the
 * same argument kinds, dtypes, ranks and sizes of 1, inputs from the same
 * places, the same results and gradients (their sizes may differ). */
static bool same_signature(const mtj_entry *a, const mtj_entry *b) {
  if (a->nargs != b->nargs || a->nin != b->nin || a->nret != b->nret || a->ngrads != b->ngrads || a->nsct != b->nsct)
    return false;
  for (int i = 0; i < a->nargs; i++) {
    const mtj_arg *x = &a->arg[i], *y = &b->arg[i];
    if (x->type != y->type || x->dtype != y->dtype || x->ndim != y->ndim || x->ones != y->ones ||
        x->isint != y->isint || (x->type == MTJ_TNUMBER && x->num != y->num && !x->candidate))
      return false;
  }
  for (int k = 0; k < a->nin; k++)
    if (a->src[k].kind != b->src[k].kind || (a->src[k].kind == MTJ_SRC_ARG && a->src[k].idx != b->src[k].idx) ||
        a->src[k].t != b->src[k].t)
      return false;
  return !memcmp(a->ret, b->ret, sizeof a->ret) && !memcmp(a->grad, b->grad, sizeof a->grad);
}

bool mtj_generalize_into(mtj_entry *list, mtj_entry *e, unsigned epoch) {
  for (mtj_entry *o = list; o; o = o->next) {
    if (o->epoch != epoch || !o->c || mtj_is_generalized(o->c) || !same_signature(o, e)) continue;
    if (mtj_generalize_compiled(o->c, e->c)) continue;
    mtj_compiled *t = o->c;
    o->c = e->c;
    e->c = t; /* freed with e */
    return true;
  }
  return false;
}
