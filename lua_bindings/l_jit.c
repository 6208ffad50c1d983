/* l_jit.c -- torch.compile and torch.compiler: the Lua side of the JIT.
 * A compiled function keeps entries, each a set of guards on its arguments
 * (types, tensor dtype/rank/sizes that are 1, number kinds and values) and
 * a compiled graph, or an "eager" mark with the reason. The first call with
 * a new signature runs fn eagerly under a trace, then compiles the trace;
 * later calls that pass the guards replay it without running fn. Lua numbers
 * that reach ops are runtime scalars: once a second value gives the same
 * graph, their values stop being guarded. Tensors the function reads from
 * outside its arguments (a model's parameters, an optimizer's state) are
 * found through a chain of table keys from one of its upvalues, resolved
 * again and guarded to be the same tensor on every call. A whole training
 * step compiles as one graph: the capture records the forward ops, the
 * backward pass the autograd engine runs and the optimizer's in-place
 * updates; the IR functionalizes the updates and the replay writes them
 * back, then sets each leaf's .grad. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "graph.h"
#include "profiler.h"
#include "jit.h"
#include "mtl.h"
#include "l_jit.h"

static struct {
  int64_t graph_breaks, recompiles, recaptures, compiled_calls, eager_calls, captures, fallbacks;
} lstats;
static unsigned epoch = 1;
static int jit_off = -1;

/* capture state of this thread (one capture at a time; l_jit.h) */
_Thread_local jit_capture jit_cap;

static void free_entry(jentry *e) {
  for (int i = 0; i < e->nargs; i++) free(e->arg[i].str);
  for (int i = 0; i < e->nin; i++) mt_release(e->src[i].t);
  mtj_free(e->c);
  jit_aot_release(e->aot);
  jit_split_free(e->split);
  free(e);
}

static jfn *check_fn(lua_State *L, int idx) { return luaL_checkudata(L, idx, JIT_FN); }

static int fn_gc(lua_State *L) {
  jfn *f = check_fn(L, 1);
  while (f->entries) {
    jentry *n = f->entries->next;
    free_entry(f->entries);
    f->entries = n;
  }
  return 0;
}

/* ---- hooks called by the bindings during a capture ---- */

/* Pushes "file:line:" of the innermost Lua function on the stack (the op
 * may be called through wrappers written in C). */
static void where_lua(lua_State *L) {
  lua_Debug ar;
  for (int lvl = 1; lua_getstack(L, lvl, &ar); lvl++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  lua_pushliteral(L, "");
}

void mtl_jit_sync(lua_State *L, const char *what) {
  if (jit_cap.rec) jit_rec_sync(jit_cap.rec);
  if (jit_cap.brk[0]) return;
  where_lua(L);
  const char *where = lua_tostring(L, -1);
  snprintf(jit_cap.brk, sizeof jit_cap.brk, "%s%s() reads a tensor's value on the host", where && *where ? where : "?: ",
           what);
  lua_pop(L, 1);
  if (jit_cap.fullgraph)
    luaL_error(L, "torch.compile(fullgraph=true): graph break: %s; move it out of the compiled function", jit_cap.brk);
  if (!jit_cap.rec) mtg_trace_refuse("graph break: %s", jit_cap.brk); /* captured again with op calls recorded */
}

void mtl_jit_pushed(lua_State *L, mt_tensor *t) {
  lua_Debug ar;
  char what[64] = "an op the JIT does not trace";
  if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name) snprintf(what, sizeof what, "%s", ar.name);
  mtg_trace_fresh(t, what);
}

/* ---- guards ---- */

static void describe_arg(lua_State *L, int i, jarg *a) {
  memset(a, 0, sizeof *a);
  a->type = lua_type(L, i);
  mt_tensor *t = a->type == LUA_TUSERDATA ? mtl_to_tensor(L, i) : NULL;
  if (t) {
    a->dtype = t->dtype, a->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++)
      if (t->shape[d] == 1) a->ones |= (uint16_t)(1u << d);
  } else if (a->type == LUA_TNUMBER) {
    a->isint = lua_isinteger(L, i);
    a->num = lua_tonumber(L, i);
  } else if (a->type == LUA_TBOOLEAN) {
    a->b = lua_toboolean(L, i);
  }
}

/* 1: e matches; 0: miss (reason in why); 2: only candidate number values
 * differ. A compiled e's inputs at this call are left in ins (the replay
 * uses them: paths are resolved once per call). */
static int match(lua_State *L, jentry *e, int nargs, const mt_tensor **ins, char *why, size_t n) {
  if (e->nargs != nargs) return snprintf(why, n, "%d arguments, compiled for %d", nargs, e->nargs), 0;
  bool near = false;
  for (int i = 0; i < nargs; i++) {
    jarg a;
    describe_arg(L, 2 + i, &a);
    const jarg *w = &e->arg[i];
    if (a.type != w->type) return snprintf(why, n, "argument %d is a %s", i + 1, lua_typename(L, a.type)), 0;
    if (a.type == LUA_TUSERDATA && (a.dtype != w->dtype || a.ndim != w->ndim || a.ones != w->ones))
      return snprintf(why, n, "argument %d: dtype, rank or sizes of 1 differ", i + 1), 0;
    if (a.type == LUA_TNUMBER) {
      if (a.isint != w->isint) return snprintf(why, n, "argument %d: integer vs float number", i + 1), 0;
      if (a.num != w->num && !(w->candidate && e->generalized)) {
        if (!w->candidate) return snprintf(why, n, "argument %d: the number %g, compiled for %g", i + 1, a.num, w->num), 0;
        near = true;
      }
    }
    if (a.type == LUA_TBOOLEAN && a.b != w->b) return snprintf(why, n, "argument %d: another boolean", i + 1), 0;
    if (a.type == LUA_TSTRING && strcmp(lua_tostring(L, 2 + i), w->str))
      return snprintf(why, n, "argument %d: another string", i + 1), 0;
  }
  if (e->c || e->split) {
    for (int k = 0; k < e->nin; k++) {
      ins[k] = jit_source(L, e, k);
      if (!ins[k]) return snprintf(why, n, "a captured tensor is gone"), 0;
      if (e->src[k].kind == SRC_UPV && ins[k] != e->src[k].t)
        return snprintf(why, n, "a captured tensor was replaced by another"), 0;
      for (int j = 0; j < e->src[k].nalt; j++)
        if (jit_resolve_path(L, e->src[k].alt[j]) != e->src[k].t)
          return snprintf(why, n, "a captured tensor was replaced by another"), 0;
    }
    if (e->c && !mtj_guard(e->c, ins, why, n)) return 0;
    if (mtg_grad_enabled() != e->grad_mode) return snprintf(why, n, "grad mode changed"), 0;
    if (mtl_autocast_key() != e->autocast) return snprintf(why, n, "autocast state changed"), 0;
    for (int k = 0; k < e->nin; k++)
      if (e->grad_mode && mtg_requires_grad(ins[k]) != (bool)(e->rg[k / 64] >> (k % 64) & 1))
        return snprintf(why, n, "an input's requires_grad changed"), 0;
  }
  return near ? 2 : 1;
}

/* Calls fn eagerly with the arguments; returns the number of results. */
static int call_eager(lua_State *L, int nargs) {
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  lua_call(L, nargs, LUA_MULTRET);
  return lua_gettop(L) - base;
}

static void warn(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "torch.compile: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n");
  fflush(stderr);
}

/* ---- capture ---- */

/* Builds entry e from trace tr and the results at [rbase, rbase + nres). */
static void make_entry(lua_State *L, jfn *f, jentry *e, mtg_trace *tr, int nargs, int rbase, int nres) {
  if (tr->why[0]) {
    snprintf(e->why, sizeof e->why, "%s", tr->why);
    return;
  }
  const mt_tensor *ins[MTJ_MAXIN], *outs[MTJ_MAXOUT];
  int nout = 0;
  bool split = jit_cap.rec && jit_cap.brk[0];
  if (split && jit_cap.aot) {
    snprintf(e->why, sizeof e->why, "%.200s, and its results require grad (graphs split at host reads have no autograd)",
             jit_cap.brk);
    return;
  }
  mtg_trace fwd = *tr; /* with a traced backward (jit_cap.aot): the forward part */
  if (jit_cap.aot) fwd.n = jit_aot_forward_len(jit_cap.aot);
  int nin = split ? 0 : jit_graph_inputs(&fwd, e, ins);
  if (!e->why[0] && !split) jit_locate_inputs(L, f, e, ins, nin, nargs, &fwd);
  e->detach = tr->backward_ran;
  e->grad_mode = mtg_grad_enabled();
  e->autocast = mtl_autocast_key();
  for (int k = 0; k < nin && e->grad_mode; k++)
    if (mtg_requires_grad(ins[k])) e->rg[k / 64] |= 1ull << (k % 64);
  for (int r = 0; r < nres && !e->why[0] && !split; r++) {
    int i = rbase + r, ty = lua_type(L, i);
    mt_tensor *t = ty == LUA_TUSERDATA ? mtl_to_tensor(L, i) : NULL;
    if (r >= MTJ_MAXOUT) snprintf(e->why, sizeof e->why, "it returns more than %d values", MTJ_MAXOUT);
    else if (ty == LUA_TNIL) e->ret[r].kind = RET_NIL;
    else if (ty == LUA_TBOOLEAN) e->ret[r].kind = RET_BOOL, e->ret[r].idx = lua_toboolean(L, i);
    else if (t && mtg_trace_produced(&fwd, t)) {
      if (!jit_cap.aot && !tr->backward_ran && mtg_grad_enabled() && mtg_requires_grad(t))
        snprintf(e->why, sizeof e->why,
                 "its result requires grad and compiled graphs record no autograd history (compile the whole training "
                 "step -- forward, loss:backward(), optimizer:step() -- or call it under torch.no_grad())");
      e->ret[r].kind = RET_OUT, e->ret[r].idx = nout, outs[nout++] = t;
    } else if (t) {
      int a = -1;
      for (int k = 0; k < nargs && a < 0; k++)
        if (lua_type(L, 2 + k) == LUA_TUSERDATA && mtl_to_tensor(L, 2 + k) == t) a = k;
      if (a < 0) snprintf(e->why, sizeof e->why, "it returns a tensor made outside the traced ops");
      e->ret[r].kind = RET_ARG, e->ret[r].idx = a;
    } else {
      snprintf(e->why, sizeof e->why, "it returns a Lua %s (only tensors, nil and booleans are replayed)",
               lua_typename(L, ty));
    }
  }
  e->nret = nres;
  /* gradients set on leaves: more graph outputs */
  for (int g = 0; g < tr->ngrads && !e->why[0] && !split; g++) {
    const mtg_trace_grad *x = &tr->grads[g];
    if (e->ngrads == MAXGRADS || nout == MTJ_MAXOUT) {
      snprintf(e->why, sizeof e->why, "it sets the gradients of more than %d tensors", MAXGRADS);
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
      e->grad[e->ngrads].out = nout;
      outs[nout++] = x->grad;
    }
    e->ngrads++;
  }
  if (e->why[0]) return;
  double sc[MAXARGS + MAXSCT];
  bool isint[MAXARGS + MAXSCT];
  for (int k = 0; k < nargs; k++) sc[k] = e->arg[k].type == LUA_TNUMBER ? e->arg[k].num : 0.0 / 0.0,
                                  isint[k] = e->arg[k].isint;
  e->nsct = jit_cap.nsct;
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.jit_capture_aux");
  for (int j = 0; j < jit_cap.nsct; j++) {
    lua_rawgeti(L, -1, j + 1);
    e->sct_ref[j] = jit_add_aux(L, f);
  }
  lua_pop(L, 1);
  mtj_options o = {.dynamic = f->dynamic, .sct = (const mt_tensor *const *)jit_cap.sct, .nsct = jit_cap.nsct};
  lstats.captures++;
  if (split) {
    jit_split_build(L, f, e, jit_cap.rec, tr, nargs, sc, isint, &o);
    if (!e->split) return;
    for (int k = 0; k < nargs; k++) e->arg[k].candidate = e->arg[k].type == LUA_TNUMBER;
    e->generalized = true; /* number arguments are runtime scalars; the op calls are guarded on them */
    return;
  } else if (jit_cap.aot) {
    jit_aot_compile(f, e, jit_cap.aot, tr, ins, nin, outs, nout, sc, isint, nargs, &o);
  } else if (mtj_compile(tr, ins, nin, sc, isint, nargs, outs, nout, &o, &e->c)) {
    snprintf(e->why, sizeof e->why, "%s", mt_errmsg());
    e->c = NULL;
    return;
  }
  if (!e->c) return;
  for (int k = 0; k < nargs; k++)
    if (e->arg[k].type == LUA_TNUMBER)
      e->arg[k].candidate = mtj_uses_scalar(e->c, k) || (e->aot && jit_aot_uses_scalar(e->aot, k));
}

static void cap_clear(void) {
  for (int j = 0; j < jit_cap.nsct; j++) mt_release(jit_cap.sct[j]);
  jit_cap.nsct = 0;
  jit_cap.active = false;
  jit_aot_capture_free(jit_cap.aot);
  jit_cap.aot = NULL;
  jit_rec_free(jit_cap.rec);
  jit_cap.rec = NULL;
}

/* Runs fn under a trace with the call's arguments and makes a new entry
 * (not yet linked). Leaves fn's results on the stack; returns their count. */
static int capture(lua_State *L, jfn *f, int nargs, jentry **out) {
  jentry *e = calloc(1, sizeof *e);
  if (!e) return luaL_error(L, "torch.compile: out of memory");
  e->nargs = nargs;
  e->epoch = epoch;
  for (int i = 0; i < nargs; i++) {
    describe_arg(L, 2 + i, &e->arg[i]);
    if (e->arg[i].type == LUA_TSTRING) e->arg[i].str = strdup(lua_tostring(L, 2 + i));
  }
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  mt_status st = mtg_trace_begin();
  if (st) {
    free_entry(e);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  jit_cap.fullgraph = f->fullgraph;
  jit_cap.brk[0] = jit_cap.retry[0] = 0;
  jit_cap.active = true;
  jit_cap.nsct = 0;
  jit_cap.rec = f->splits ? jit_rec_new(L, nargs) : NULL;
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.jit_capture_aux");
  mt_cuda_lazy_hold(true); /* the capture's eager ops run once: no fused kernels compiled for them */
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
  if (rc == LUA_OK && !jit_cap.retry[0] && !(jit_cap.brk[0] && !jit_cap.rec))
    jit_cap.aot = jit_aot_trace_backward(L, e, mtg_tracing, base + 1, lua_gettop(L) - base);
  mt_cuda_lazy_hold(false);
  mtg_trace *tr = mtg_trace_end();
  jit_cap.active = false;
  if (rc != LUA_OK) {
    mtg_trace_free(tr);
    free_entry(e);
    cap_clear();
    return lua_error(L);
  }
  int nres = lua_gettop(L) - base;
  if (jit_cap.rec && jit_cap.brk[0]) lua_gc(L, LUA_GCCOLLECT); /* dead temporaries drop their references (l_jit_split.c) */
  if (jit_cap.brk[0] && !f->splits) lstats.graph_breaks++; /* once per function, not per capture */
  if (jit_cap.brk[0] && !f->splits && !f->fullgraph) { /* capture again, counting op calls */
    f->splits = true;
    jit_split_install(L);
    snprintf(jit_cap.retry, sizeof jit_cap.retry, "%s", "a graph break: captured again with its op calls recorded");
  }
  if (jit_cap.retry[0]) snprintf(e->why, sizeof e->why, "%s", jit_cap.retry);
  else make_entry(L, f, e, tr, nargs, base + 1, nres);
  mtg_trace_free(tr);
  cap_clear();
  *out = e;
  return nres;
}

/* Replays entry e with graph breaks: fn runs in Lua, its op calls
 * substituted by the segments' results. */
static int run_split(lua_State *L, jentry *e, int nargs, const mt_tensor *const *ins) {
  double sc[MAXARGS + MAXSCT] = {0};
  for (int k = 0; k < nargs; k++) sc[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0;
  for (int j = 0; j < e->nsct; j++) sc[nargs + j] = jit_table_number(L, e->sct_ref[j]);
  lstats.compiled_calls++;
  return jit_split_run(L, e, nargs, ins, sc);
}

/* Replays compiled entry e on inputs ins (from match). */
static int run_entry(lua_State *L, jentry *e, int nargs, const mt_tensor *const *ins) {
  double sc[MAXARGS + MAXSCT];
  mt_tensor *outs[MTJ_MAXOUT] = {0};
  for (int k = 0; k < nargs; k++) sc[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0;
  for (int j = 0; j < e->nsct; j++) sc[nargs + j] = jit_table_number(L, e->sct_ref[j]);
  int64_t tok = mtg_profiler_begin(check_fn(L, 1)->name, ins, e->nin);
  mt_status st = mtj_run(e->c, ins, sc, outs);
  mtg_profiler_end(tok);
  if (!st && e->aot) st = jit_aot_attach(e->aot, ins, sc, outs);
  for (int g = 0; g < e->ngrads && !st; g++)
    st = mtg_set_grad((mt_tensor *)ins[e->grad[g].leaf], e->grad[g].out >= 0 ? outs[e->grad[g].out] : NULL);
  if (st) {
    for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  lstats.compiled_calls++;
  luaL_checkstack(L, e->nret, "torch.compile: too many results");
  for (int r = 0; r < e->nret; r++) {
    switch (e->ret[r].kind) {
    case RET_OUT: mtl_push_tensor(L, mt_retain(outs[e->ret[r].idx])); break;
    case RET_ARG: lua_pushvalue(L, 2 + e->ret[r].idx); break;
    case RET_NIL: lua_pushnil(L); break;
    default: lua_pushboolean(L, e->ret[r].idx);
    }
  }
  for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
  return e->nret;
}

/* True when entries a and b were captured from the same call shape: the
 * same argument kinds, dtypes, ranks and sizes of 1, inputs from the same
 * places, the same results and gradients (their sizes may differ). */
static bool same_signature(const jentry *a, const jentry *b) {
  if (a->nargs != b->nargs || a->nin != b->nin || a->nret != b->nret || a->ngrads != b->ngrads || a->nsct != b->nsct)
    return false;
  for (int i = 0; i < a->nargs; i++) {
    const jarg *x = &a->arg[i], *y = &b->arg[i];
    if (x->type != y->type || x->dtype != y->dtype || x->ndim != y->ndim || x->ones != y->ones ||
        x->isint != y->isint || (x->type == LUA_TNUMBER && x->num != y->num && !x->candidate))
      return false;
  }
  for (int k = 0; k < a->nin; k++)
    if (a->src[k].kind != b->src[k].kind || (a->src[k].kind == SRC_ARG && a->src[k].idx != b->src[k].idx) ||
        a->src[k].t != b->src[k].t)
      return false;
  return !memcmp(a->ret, b->ret, sizeof a->ret) && !memcmp(a->grad, b->grad, sizeof a->grad);
}

/* A static graph e that equals an earlier entry's but for sizes: the
 * earlier entry becomes a graph with dynamic sizes serving both (automatic
 * dynamic sizes, as PyTorch does on a second shape). True when done. */
static bool generalize_into(jfn *f, jentry *e) {
  for (jentry *o = f->entries; o; o = o->next) {
    if (o->epoch != epoch || !o->c || mtj_is_generalized(o->c) || !same_signature(o, e)) continue;
    if (mtj_generalize_compiled(o->c, e->c)) continue;
    mtj_compiled *t = o->c;
    o->c = e->c;
    e->c = t; /* freed with e */
    return true;
  }
  return false;
}

static int fn_call(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int nargs = lua_gettop(L) - 1;
  if (nargs > MAXARGS) return luaL_error(L, "torch.compile: more than %d arguments", MAXARGS);
  if (f->off || f->gave_up || jit_cap.active) return lstats.eager_calls++, call_eager(L, nargs);
  char why[200] = "no compiled graph yet";
  jentry *near = NULL;
  const mt_tensor *ins[MTJ_MAXIN];
  for (jentry *e = f->entries; e; e = e->next) {
    if (e->epoch != epoch || (e->split && jit_split_dead(e->split))) continue;
    char w[200];
    int m = match(L, e, nargs, ins, w, sizeof w);
    if (m == 1) {
      if (e->split) return run_split(L, e, nargs, ins);
      if (e->c) return run_entry(L, e, nargs, ins);
      return lstats.eager_calls++, call_eager(L, nargs);
    }
    if (m == 2 && !near && e->c) near = e;
    if (m == 0 && e == f->entries) snprintf(why, sizeof why, "%s", w);
  }
  if (!near && f->ncompiled >= f->limit) {
    f->gave_up = true;
    char lim[32];
    snprintf(lim, sizeof lim, "%d", f->limit);
    warn("recompiled %s times (last reason: %s); running this function eagerly from now on", lim, why);
    return lstats.eager_calls++, call_eager(L, nargs);
  }
  jentry *e = NULL;
  int nres = capture(L, f, nargs, &e);
  if (!e->c && jit_cap.retry[0] && f->retries < MAXRETRY) {
    f->retries++; /* state was made during this call (an optimizer's first step): capture again next time */
    free_entry(e);
    return nres;
  }
  if (near && e->c && strcmp(mtj_text(near->c), mtj_text(e->c)) == 0) {
    near->generalized = true; /* the same graph for another value: scalars are runtime values */
    lstats.recaptures++;
    free_entry(e);
    return nres;
  }
  if (e->c && f->dynamic && generalize_into(f, e)) {
    lstats.recompiles++;
    f->ncompiled++;
    snprintf(f->last_reason, sizeof f->last_reason, "%.170s (sizes made dynamic)", why);
    free_entry(e);
    return nres;
  }
  if (f->ncompiled > 0) lstats.recompiles++;
  snprintf(f->last_reason, sizeof f->last_reason, "%s", near ? "a number argument changed the graph" : why);
  f->ncompiled++;
  if (!e->c && !e->split) {
    lstats.fallbacks++;
    if (!f->quiet) warn("running eagerly for these inputs: %s%s", e->why, "");
  }
  if (e->split && !f->warned_break && !f->quiet) {
    f->warned_break = true;
    int ns = jit_split_nseg(e->split);
    char n[128];
    if (ns == 1) snprintf(n, sizeof n, "its graph runs before the read, its Lua code around it");
    else snprintf(n, sizeof n, "the function runs as %d compiled graphs with its Lua code between them", ns);
    warn("graph break: %s; %s", jit_cap.brk, n);
  }
  e->next = f->entries;
  f->entries = e;
  return nres;
}

/* torch.compiler.is_compiling() -> true while a compiled function is being captured */
static int l_is_compiling(lua_State *L) {
  lua_pushboolean(L, jit_cap.active || jit_split_replaying());
  return 1;
}

/* torch.compiler.scalar(tbl, key) -> tbl[key]: while capturing, a 0-dim
 * float64 tensor that the graph reads as a runtime scalar, re-read from
 * tbl[key] on every call (a learning rate that a scheduler changes), so a
 * new value needs no recompile. Outside a capture, the number itself. */
static int l_scalar(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  lua_gettable(L, 1);
  if (!lua_isnumber(L, 3))
    return luaL_error(L, "torch.compiler.scalar: tbl[%s] is a %s, not a number", luaL_tolstring(L, 2, NULL),
                      luaL_typename(L, 3));
  bool replaying = jit_split_replaying(); /* the code between graph breaks sees what the capture saw */
  if (!jit_cap.active && !replaying) return 1;
  if (jit_cap.active && jit_cap.nsct == MAXSCT) return 1; /* stays a constant */
  lua_Number v = lua_tonumber(L, 3);
  mt_tensor *t = NULL;
  mt_status st = mt_full(NULL, 0, mt_sfloat(v), MT_FLOAT64, mt_cpu(), &t);
  if (st) return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  if (replaying) {
    mtl_push_tensor(L, t);
    return 1;
  }
  /* the compiled function being captured is not on this stack: keep {tbl, key} in the registry list */
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.jit_capture_aux");
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 2);
  lua_rawseti(L, -2, jit_cap.nsct + 1);
  lua_pop(L, 1);
  jit_cap.sct[jit_cap.nsct++] = t;
  mtl_push_tensor(L, mt_retain(t));
  return 1;
}

/* torch.compiler.capture_again(reason): library code that changed Lua-side
 * state while being captured (an optimizer making its state on the first
 * step) asks for the capture to be redone on the next call. */
static int l_capture_again(lua_State *L) {
  const char *why = luaL_optstring(L, 1, "state was made during the capture");
  if (jit_cap.active && !jit_cap.retry[0]) snprintf(jit_cap.retry, sizeof jit_cap.retry, "%s", why);
  return 0;
}

static int fn_tostring(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int n = 0;
  for (jentry *e = f->entries; e; e = e->next) n += e->epoch == epoch;
  lua_pushfstring(L, "<compiled function: %d graph(s)%s>", n, f->off ? ", JIT off" : "");
  return 1;
}

/* torch.compile(fn[, {dynamic=true, fullgraph=false, mode='default', recompile_limit=8}]);
 * fn may be a module (any callable table or userdata): a proxy module comes back. */
static int l_compile(lua_State *L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) {
    if (!luaL_getmetafield(L, 1, "__call"))
      return luaL_error(L, "torch.compile: expected a function or a module (a callable), got a %s",
                        luaL_typename(L, 1));
    lua_pop(L, 1);
    lua_settop(L, 2);
    jit_push_lua(L);
    lua_getfield(L, -1, "compile_module");
    lua_pushcfunction(L, l_compile);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 3, 1);
    return 1;
  }
  int opt = lua_istable(L, 2) ? 2 : 0;
  jfn *f = lua_newuserdatauv(L, sizeof *f, 2);
  memset(f, 0, sizeof *f);
  f->dynamic = mtl_opt_bool(L, 0, 0, opt, "dynamic", 1);
  f->fullgraph = mtl_opt_bool(L, 0, 0, opt, "fullgraph", 0);
  f->limit = (int)mtl_opt_int(L, 0, 0, opt, "recompile_limit", 8);
  f->quiet = mtl_opt_bool(L, 0, 0, opt, "_quiet", 0); /* tests: no fallback warnings */
  if (opt && mtl_optfield(L, opt, "mode") != LUA_TNIL) /* PyTorch's modes; all compile the same way here */
    mtl_check_choice(L, -1, "compile", "mode", "default reduce-overhead max-autotune max-autotune-no-cudagraphs");
  if (opt) lua_pop(L, 1);
  if (jit_off < 0) {
    const char *v = getenv("MOONTORCH_JIT");
    jit_off = v && strcmp(v, "0") == 0;
  }
  f->off = jit_off;
  luaL_setmetatable(L, JIT_FN);
  lua_Debug ar;
  lua_pushvalue(L, 1);
  if (lua_getinfo(L, ">S", &ar)) snprintf(f->name, sizeof f->name, "compiled fn@%s:%d", ar.short_src, ar.linedefined);
  else snprintf(f->name, sizeof f->name, "compiled fn");
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, UV_FN);
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_AUX);
  return 1;
}

static int l_stats(lua_State *L) {
  mtj_stats s = mtj_get_stats();
  lua_createtable(L, 0, 16);
#define F(name, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, name))
  F("compiles", lstats.captures);
  F("recompiles", lstats.recompiles);
  F("recaptures", lstats.recaptures);
  F("graph_breaks", lstats.graph_breaks);
  F("fallbacks", lstats.fallbacks);
  F("compiled_calls", lstats.compiled_calls);
  F("eager_calls", lstats.eager_calls);
  F("cache_hits", s.mem_hits + s.disk_hits);
  F("mem_hits", s.mem_hits);
  F("disk_hits", s.disk_hits);
  F("cc_runs", s.cc_runs);
  F("corrupt_entries", s.corrupt);
  F("cuda_graph_captures", s.graph_captures);
  F("cuda_graph_replays", s.graph_replays);
  F("cuda_graph_failures", s.graph_failures);
#undef F
  lua_pushnumber(L, s.cc_seconds);
  lua_setfield(L, -2, "cc_seconds");
  lua_pushboolean(L, jit_off == 1);
  lua_setfield(L, -2, "disabled");
  return 1;
}

static int l_reset(lua_State *L) {
  mtj_reset();
  memset(&lstats, 0, sizeof lstats);
  epoch++;
  return 0;
}

/* torch.compiler.explain(fn, ...) -> text: captures fn once and describes
 * the graph, its break or the reason it would run eagerly, and its kernels. */
static int l_explain(lua_State *L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) { /* a module or another callable: explain its call */
    if (!luaL_getmetafield(L, 1, "__call"))
      return luaL_error(L, "torch.compiler.explain: expected a function or a module (a callable), got a %s",
                        luaL_typename(L, 1));
    lua_pop(L, 1);
    jit_push_lua(L);
    lua_getfield(L, -1, "as_function");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_replace(L, 1);
    lua_pop(L, 1);
  }
  int nargs = lua_gettop(L) - 1;
  lua_pushcfunction(L, l_compile);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_replace(L, 1); /* the compiled wrapper takes fn's place */
  jfn *f = check_fn(L, 1);
  jentry *e = NULL;
  int top = lua_gettop(L);
  int nres = capture(L, f, nargs, &e);
  lua_pop(L, nres);
  if (!e->c && f->splits && !e->split) { /* a graph break: the capture that records op calls */
    free_entry(e);
    nres = capture(L, f, nargs, &e);
    lua_pop(L, nres);
  }
  (void)top;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return luaL_error(L, "explain: out of memory");
  fprintf(m, "torch.compiler.explain: %s\n",
          e->aot ? "2 graphs, compiled: the forward and its backward (its results require grad)"
          : e->split ? "graphs split at host reads, compiled"
          : e->c ? "1 graph, compiled" : "no compiled graph");
  fprintf(m, "graph breaks: %s\n", jit_cap.brk[0] ? jit_cap.brk : "none");
  if (!e->c && !e->split) fprintf(m, "runs eagerly because: %s\n", e->why);
  if (f->last_reason[0]) fprintf(m, "last recompile reason: %s\n", f->last_reason);
  for (int k = 0; k < e->nargs; k++)
    if (e->arg[k].candidate) fprintf(m, "argument %d (a number) is a runtime scalar\n", k + 1);
  if (e->c) mtj_explain(e->c, m);
  if (e->aot) jit_aot_explain(e->aot, m);
  if (e->split) jit_split_explain(e->split, m);
  fclose(m);
  free_entry(e);
  lua_pushlstring(L, buf, len);
  free(buf);
  return 1;
}

void mtl_open_jit(lua_State *L, int torch_idx, int methods_idx) {
  luaL_newmetatable(L, JIT_FN);
  lua_pushcfunction(L, fn_call);
  lua_setfield(L, -2, "__call");
  lua_pushcfunction(L, fn_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, fn_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  static const mtl_reg top[] = {
      {"compile", l_compile, MTL_FN,
       "torch.compile(fn[, {dynamic=true, fullgraph=false, recompile_limit=8}]) -- fn compiled into fused C kernels "
       "on its first call per input signature", "dynamic fullgraph mode recompile_limit _quiet"},
      {NULL, NULL, 0, NULL}};
  mtl_register(L, torch_idx, methods_idx, top);
  static const mtl_reg compiler[] = {
      {"explain", l_explain, MTL_FN,
       "torch.compiler.explain(fn, ...) -- text describing fn's graph for these arguments: breaks, eager reasons, IR "
       "and generated C", MTL_DATA},
      {"reset", l_reset, MTL_FN, "torch.compiler.reset() -- forget compiled graphs and counters"},
      {"is_compiling", l_is_compiling, MTL_FN,
       "torch.compiler.is_compiling() -- true while torch.compile captures a function"},
      {"scalar", l_scalar, MTL_FN,
       "torch.compiler.scalar(tbl, key) -- tbl[key]; inside a capture a runtime scalar re-read on every call"},
      {"capture_again", l_capture_again, MTL_FN,
       "torch.compiler.capture_again([reason]) -- state was made during this capture: capture again next call"},
      {"stats", l_stats, MTL_FN,
       "torch.compiler.stats() -- counters: compiles, recompiles, recaptures, graph_breaks, cache_hits, cc_runs, ..."},
      {NULL, NULL, 0, NULL}};
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, compiler);
  lua_setfield(L, torch_idx, "compiler");
}
