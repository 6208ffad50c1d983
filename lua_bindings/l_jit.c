/* l_jit.c -- torch.compile and torch.compiler: the Lua side of the JIT.
 * A compiled function keeps entries, each a set of guards on its arguments
 * (types, tensor dtype/rank/sizes that are 1, number kinds and values) and
 * a compiled graph, or an "eager" mark with the reason. The first call with
 * a new signature runs fn eagerly under a trace, then compiles the trace;
 * later calls that pass the guards replay it without running fn. Lua numbers
 * that reach ops are runtime scalars: once a second value gives the same
 * graph, their values stop being guarded. Tensors captured as upvalues are
 * found by identity and guarded to stay the same tensor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "jit.h"
#include "mtl.h"

#define MAXARGS 32
#define JIT_FN "torch.CompiledFunction"

enum { SRC_ARG, SRC_UPV };
enum { RET_OUT, RET_ARG, RET_NIL, RET_BOOL };

typedef struct jarg {
  int type;       /* LUA_T* */
  bool isint;     /* numbers */
  double num;
  int b;          /* booleans */
  char *str;      /* strings (owned) */
  int8_t dtype, ndim;
  uint16_t ones;  /* tensors: dims of size 1 */
  bool candidate; /* a number feeding the graph as a scalar */
} jarg;

typedef struct jentry {
  struct jentry *next;
  int nargs;
  jarg arg[MAXARGS];
  bool generalized;
  int nin;
  struct {
    int kind, idx; /* argument index, or upvalue index */
    char *key;     /* field of an upvalue table, or NULL */
    mt_tensor *t;  /* the captured tensor (owned), SRC_UPV */
  } src[MTJ_MAXIN];
  int nret;
  struct {
    int kind, idx;
  } ret[MTJ_MAXOUT];
  mtj_compiled *c; /* NULL: runs eagerly (why) */
  char why[300];
  unsigned epoch;
} jentry;

typedef struct jfn {
  jentry *entries;
  int ncompiled; /* graphs made for this function (recompile limit) */
  bool dynamic, fullgraph, off, gave_up, warned_grad;
  int limit;
  char last_reason[200];
} jfn;

static struct {
  int64_t graph_breaks, recompiles, recaptures, compiled_calls, eager_calls, captures, fallbacks;
} lstats;
static unsigned epoch = 1;
static int jit_off = -1;

/* capture state of this thread (one capture at a time) */
static _Thread_local struct {
  bool fullgraph;
  char brk[300];
} cap;

static void free_entry(jentry *e) {
  for (int i = 0; i < e->nargs; i++) free(e->arg[i].str);
  for (int i = 0; i < e->nin; i++) free(e->src[i].key), mt_release(e->src[i].t);
  mtj_free(e->c);
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

void mtl_jit_sync(lua_State *L, const char *what) {
  if (cap.brk[0]) return;
  luaL_where(L, 1);
  const char *where = lua_tostring(L, -1);
  snprintf(cap.brk, sizeof cap.brk, "%s%s() reads a tensor's value on the host", where && *where ? where : "?: ",
           what);
  lua_pop(L, 1);
  mtg_trace_refuse("graph break: %s", cap.brk);
  if (cap.fullgraph)
    luaL_error(L, "torch.compile(fullgraph=true): graph break: %s; move it out of the compiled function", cap.brk);
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

/* The tensor of entry e's input k at this call (fn at index 1, args from 2). */
static mt_tensor *source(lua_State *L, const jentry *e, int k) {
  if (e->src[k].kind == SRC_ARG) return mtl_to_tensor(L, 2 + e->src[k].idx);
  lua_getiuservalue(L, 1, 1);
  const char *nm = lua_getupvalue(L, -1, e->src[k].idx);
  lua_remove(L, nm ? -2 : -1);
  if (!nm) return NULL;
  if (e->src[k].key) {
    if (lua_type(L, -1) != LUA_TTABLE) {
      lua_pop(L, 1);
      return NULL;
    }
    lua_getfield(L, -1, e->src[k].key);
    lua_remove(L, -2);
  }
  mt_tensor *t = lua_type(L, -1) == LUA_TUSERDATA ? mtl_to_tensor(L, -1) : NULL;
  lua_pop(L, 1);
  return t;
}

/* 1: e matches; 0: miss (reason in why); 2: only candidate number values differ. */
static int match(lua_State *L, jentry *e, int nargs, char *why, size_t n) {
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
  if (e->c) {
    const mt_tensor *ins[MTJ_MAXIN];
    for (int k = 0; k < e->nin; k++) {
      ins[k] = source(L, e, k);
      if (!ins[k]) return snprintf(why, n, "a captured tensor is gone"), 0;
      if (e->src[k].kind == SRC_UPV && ins[k] != e->src[k].t)
        return snprintf(why, n, "a captured tensor was replaced by another"), 0;
    }
    if (!mtj_guard(e->c, ins, why, n)) return 0;
  }
  return near ? 2 : 1;
}

static bool grad_needed(lua_State *L, int nargs) {
  if (!mtg_grad_enabled()) return false;
  for (int i = 0; i < nargs; i++) {
    mt_tensor *t = lua_type(L, 2 + i) == LUA_TUSERDATA ? mtl_to_tensor(L, 2 + i) : NULL;
    if (t && mtg_requires_grad(t)) return true;
  }
  return false;
}

/* Calls fn eagerly with the arguments; returns the number of results. */
static int call_eager(lua_State *L, int nargs) {
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, 1);
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

/* Finds tensor t among fn's upvalues (or one table level below). */
static bool find_upvalue(lua_State *L, const mt_tensor *t, int *idx, char **key) {
  for (int u = 1;; u++) {
    lua_getiuservalue(L, 1, 1);
    const char *name = lua_getupvalue(L, -1, u);
    lua_remove(L, name ? -2 : -1);
    if (!name) return false;
    mt_tensor *x = lua_type(L, -1) == LUA_TUSERDATA ? mtl_to_tensor(L, -1) : NULL;
    if (x == t) {
      lua_pop(L, 1);
      *idx = u, *key = NULL;
      return true;
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TUSERDATA && mtl_to_tensor(L, -1) == t) {
          *idx = u, *key = strdup(lua_tostring(L, -2));
          lua_pop(L, 3);
          return *key != NULL;
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
}

/* Builds entry e from trace tr and the results at [rbase, rbase + nres). */
static void make_entry(lua_State *L, jfn *f, jentry *e, mtg_trace *tr, int nargs, int rbase, int nres) {
  if (tr->why[0]) {
    snprintf(e->why, sizeof e->why, "%s", tr->why);
    return;
  }
  const mt_tensor *ins[MTJ_MAXIN], *outs[MTJ_MAXOUT];
  int nin = 0, nout = 0;
  /* graph inputs: operands no earlier entry made that are not wrapped numbers */
  for (int i = 0; i < tr->n && !e->why[0]; i++)
    for (int j = 0; j < tr->e[i].nin && !e->why[0]; j++) {
      const mt_tensor *t = tr->e[i].in[j];
      if (!t || (t->flags & MT_TF_WRAPPED)) continue;
      bool made = false, seen = false;
      for (int k = 0; k < i && !made; k++) made = tr->e[k].out == t;
      for (int k = 0; k < nin && !seen; k++) seen = ins[k] == t;
      if (made || seen) continue;
      for (int k = 0; k < tr->nfresh; k++)
        if (tr->fresh[k] == t)
          snprintf(e->why, sizeof e->why, "a tensor made by %s inside the function (the JIT does not replay it yet)",
                   tr->fresh_what[k]);
      if (e->why[0]) break;
      if (nin == MTJ_MAXIN) {
        snprintf(e->why, sizeof e->why, "the graph reads more than %d tensors", MTJ_MAXIN);
        break;
      }
      if (mtg_requires_grad(t)) {
        snprintf(e->why, sizeof e->why, "a tensor it reads requires grad (compiled graphs run without autograd)");
        break;
      }
      int a = -1;
      for (int k = 0; k < nargs && a < 0; k++)
        if (lua_type(L, 2 + k) == LUA_TUSERDATA && mtl_to_tensor(L, 2 + k) == t) a = k;
      if (a >= 0) {
        e->src[nin].kind = SRC_ARG, e->src[nin].idx = a;
      } else if (find_upvalue(L, t, &e->src[nin].idx, &e->src[nin].key)) {
        e->src[nin].kind = SRC_UPV;
        e->src[nin].t = mt_retain((mt_tensor *)t);
      } else {
        snprintf(e->why, sizeof e->why, "it reads a tensor that is neither an argument nor an upvalue of the function");
        break;
      }
      ins[nin++] = t;
      e->nin = nin;
    }
  for (int r = 0; r < nres && !e->why[0]; r++) {
    int i = rbase + r, ty = lua_type(L, i);
    mt_tensor *t = ty == LUA_TUSERDATA ? mtl_to_tensor(L, i) : NULL;
    if (r >= MTJ_MAXOUT) snprintf(e->why, sizeof e->why, "it returns more than %d values", MTJ_MAXOUT);
    else if (ty == LUA_TNIL) e->ret[r].kind = RET_NIL;
    else if (ty == LUA_TBOOLEAN) e->ret[r].kind = RET_BOOL, e->ret[r].idx = lua_toboolean(L, i);
    else if (t && mtg_trace_produced(tr, t)) e->ret[r].kind = RET_OUT, e->ret[r].idx = nout, outs[nout++] = t;
    else if (t) {
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
  if (e->why[0]) return;
  double sc[MAXARGS];
  bool isint[MAXARGS];
  for (int k = 0; k < nargs; k++) sc[k] = e->arg[k].type == LUA_TNUMBER ? e->arg[k].num : 0.0 / 0.0,
                                  isint[k] = e->arg[k].isint;
  mtj_options o = {.dynamic = f->dynamic};
  lstats.captures++;
  if (mtj_compile(tr, ins, nin, sc, isint, nargs, outs, nout, &o, &e->c)) {
    snprintf(e->why, sizeof e->why, "%s", mt_errmsg());
    e->c = NULL;
    return;
  }
  for (int k = 0; k < nargs; k++)
    if (e->arg[k].type == LUA_TNUMBER) e->arg[k].candidate = mtj_uses_scalar(e->c, k);
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
  lua_getiuservalue(L, 1, 1);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  mt_status st = mtg_trace_begin();
  if (st) {
    free_entry(e);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  cap.fullgraph = f->fullgraph;
  cap.brk[0] = 0;
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
  mtg_trace *tr = mtg_trace_end();
  if (rc != LUA_OK) {
    mtg_trace_free(tr);
    free_entry(e);
    return lua_error(L);
  }
  int nres = lua_gettop(L) - base;
  if (cap.brk[0]) lstats.graph_breaks++;
  make_entry(L, f, e, tr, nargs, base + 1, nres);
  mtg_trace_free(tr);
  *out = e;
  return nres;
}

static int run_entry(lua_State *L, jentry *e, int nargs) {
  const mt_tensor *ins[MTJ_MAXIN];
  double sc[MAXARGS];
  mt_tensor *outs[MTJ_MAXOUT] = {0};
  for (int k = 0; k < e->nin; k++) ins[k] = source(L, e, k);
  for (int k = 0; k < nargs; k++) sc[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0;
  mt_status st = mtj_run(e->c, ins, sc, outs);
  if (st) return mtl_fail(L, st, NULL, NULL, NULL, NULL);
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

static int fn_call(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int nargs = lua_gettop(L) - 1;
  if (nargs > MAXARGS) return luaL_error(L, "torch.compile: more than %d arguments", MAXARGS);
  if (f->off || f->gave_up) return lstats.eager_calls++, call_eager(L, nargs);
  if (grad_needed(L, nargs)) {
    if (!f->warned_grad)
      warn("%s%san argument requires grad: running eagerly (compiled graphs do not record autograd yet)", "", "");
    f->warned_grad = true;
    return lstats.eager_calls++, call_eager(L, nargs);
  }
  char why[200] = "no compiled graph yet";
  jentry *near = NULL;
  for (jentry *e = f->entries; e; e = e->next) {
    if (e->epoch != epoch) continue;
    char w[200];
    int m = match(L, e, nargs, w, sizeof w);
    if (m == 1) {
      if (e->c) return run_entry(L, e, nargs);
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
  if (near && e->c && strcmp(mtj_text(near->c), mtj_text(e->c)) == 0) {
    near->generalized = true; /* the same graph for another value: scalars are runtime values */
    lstats.recaptures++;
    free_entry(e);
    return nres;
  }
  if (f->ncompiled > 0) lstats.recompiles++;
  snprintf(f->last_reason, sizeof f->last_reason, "%s", near ? "a number argument changed the graph" : why);
  f->ncompiled++;
  if (!e->c) {
    lstats.fallbacks++;
    warn("running eagerly for these inputs: %s%s", e->why, "");
  }
  e->next = f->entries;
  f->entries = e;
  return nres;
}

static int fn_tostring(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int n = 0;
  for (jentry *e = f->entries; e; e = e->next) n += e->epoch == epoch;
  lua_pushfstring(L, "<compiled function: %d graph(s)%s>", n, f->off ? ", JIT off" : "");
  return 1;
}

/* torch.compile(fn[, {dynamic=true, fullgraph=false, mode=, recompile_limit=8}]) */
static int l_compile(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int opt = lua_istable(L, 2) ? 2 : 0;
  jfn *f = lua_newuserdatauv(L, sizeof *f, 1);
  memset(f, 0, sizeof *f);
  f->dynamic = mtl_opt_bool(L, 0, 0, opt, "dynamic", 1);
  f->fullgraph = mtl_opt_bool(L, 0, 0, opt, "fullgraph", 0);
  f->limit = (int)mtl_opt_int(L, 0, 0, opt, "recompile_limit", 8);
  if (jit_off < 0) {
    const char *v = getenv("MOONTORCH_JIT");
    jit_off = v && strcmp(v, "0") == 0;
  }
  f->off = jit_off;
  luaL_setmetatable(L, JIT_FN);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
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
  luaL_checktype(L, 1, LUA_TFUNCTION);
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
  (void)top;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return luaL_error(L, "explain: out of memory");
  fprintf(m, "torch.compiler.explain: %s\n", e->c ? "1 graph, compiled" : "no compiled graph");
  fprintf(m, "graph breaks: %s\n", cap.brk[0] ? cap.brk : "none");
  if (!e->c) fprintf(m, "runs eagerly because: %s\n", e->why);
  if (f->last_reason[0]) fprintf(m, "last recompile reason: %s\n", f->last_reason);
  for (int k = 0; k < e->nargs; k++)
    if (e->arg[k].candidate) fprintf(m, "argument %d (a number) is a runtime scalar\n", k + 1);
  if (e->c) mtj_explain(e->c, m);
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
       "on its first call per input signature"},
      {NULL, NULL, 0, NULL}};
  mtl_register(L, torch_idx, methods_idx, top);
  static const mtl_reg compiler[] = {
      {"explain", l_explain, MTL_FN,
       "torch.compiler.explain(fn, ...) -- text describing fn's graph for these arguments: breaks, eager reasons, IR "
       "and generated C"},
      {"reset", l_reset, MTL_FN, "torch.compiler.reset() -- forget compiled graphs and counters"},
      {"stats", l_stats, MTL_FN,
       "torch.compiler.stats() -- counters: compiles, recompiles, recaptures, graph_breaks, cache_hits, cc_runs, ..."},
      {NULL, NULL, 0, NULL}};
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, compiler);
  lua_setfield(L, torch_idx, "compiler");
}
