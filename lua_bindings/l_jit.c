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
 * back, then sets each leaf's .grad. This file is the Lua side: the
 * entries, their guards and graphs are jit/entry.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "partition.h"
#include "split.h"
#include "l_jit.h"

#define MAXRETRY 2 /* captures redone because state was made during them */

static struct {
  int64_t graph_breaks, recompiles, recaptures, compiled_calls, eager_calls, captures, fallbacks;
} lstats;
static unsigned epoch = 1;
static int jit_off = -1;

static jfn *check_fn(lua_State *L, int idx) { return luaL_checkudata(L, idx, JIT_FN); }

static int fn_gc(lua_State *L) {
  jfn *f = check_fn(L, 1);
  while (f->entries) {
    mtj_entry *n = f->entries->next;
    mtj_entry_free(f->entries);
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
  if (!mtj_capture_host_read()) return;
  where_lua(L);
  bool refuse = mtj_capture_break(lua_tostring(L, -1), what);
  lua_pop(L, 1);
  if (refuse)
    luaL_error(L, "torch.compile(fullgraph=true): graph break: %s; move it out of the compiled function", mtj_cap.brk);
}

void mtl_jit_pushed(lua_State *L, mt_tensor *t) {
  lua_Debug ar;
  char what[64] = "an op the JIT does not trace";
  if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name) snprintf(what, sizeof what, "%s", ar.name);
  mtg_trace_fresh(t, what);
}

/* ---- guards ---- */

_Static_assert(LUA_TNIL == MTJ_TNIL && LUA_TBOOLEAN == MTJ_TBOOLEAN && LUA_TLIGHTUSERDATA == MTJ_TLIGHTUSERDATA &&
                   LUA_TNUMBER == MTJ_TNUMBER && LUA_TSTRING == MTJ_TSTRING && LUA_TTABLE == MTJ_TTABLE &&
                   LUA_TFUNCTION == MTJ_TFUNCTION && LUA_TUSERDATA == MTJ_TUSERDATA && LUA_TTHREAD == MTJ_TTHREAD,
               "jit/entry.h numbers Lua's types as Lua does");

/* Describes the value at stack index i for the guards (a string is
 * borrowed from the stack). */
static void describe_arg(lua_State *L, int i, mtj_arg *a) {
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
  } else if (a->type == LUA_TSTRING) {
    a->str = (char *)lua_tostring(L, i);
  }
}

/* 1: e matches the call whose arguments (from stack index 2) are args;
 * 0: miss (reason in why); 2: only candidate number values differ. A
 * compiled e's inputs at this call are left in ins (the replay uses them:
 * paths are resolved once per call). */
static int match(lua_State *L, mtj_entry *e, const mtj_arg *args, int nargs, const mt_tensor **ins, char *why,
                 size_t n) {
  int m = mtj_match_args(e, args, nargs, why, n);
  if (!m || (!e->c && !e->split)) return m;
  for (int k = 0; k < e->nin; k++) {
    ins[k] = mtl_jit_source(L, e, k);
    if (!ins[k]) return snprintf(why, n, "a captured tensor is gone"), 0;
    if (e->src[k].kind == MTJ_SRC_UPV && ins[k] != e->src[k].t)
      return snprintf(why, n, "a captured tensor was replaced by another"), 0;
    for (int j = 0; j < e->src[k].nalt; j++)
      if (mtl_jit_resolve_path(L, e->src[k].alt[j]) != e->src[k].t)
        return snprintf(why, n, "a captured tensor was replaced by another"), 0;
  }
  return mtj_match_inputs(e, ins, mtl_autocast_key(), why, n) ? m : 0;
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

/* The tensor at stack index i, or NULL for another value. */
static const mt_tensor *tensor_at(lua_State *L, int i) {
  return lua_type(L, i) == LUA_TUSERDATA ? mtl_to_tensor(L, i) : NULL;
}

/* e for a function with graph breaks: its segments (jit/split.c), once
 * the tensors they read from outside are located. */
static void make_split(lua_State *L, jfn *f, mtj_entry *e, const mtg_trace *tr, int nargs, const double *sc,
                       const bool *isint, const mtj_options *o) {
  const mt_tensor *ext[MTJ_MAXIN];
  int first[MTJ_MAXIN], next = 0;
  mtj_split *s = mtj_split_build(f->name, f->quiet, e, mtj_cap.rec, tr, sc, isint, o, ext, first, &next);
  if (!s) return;
  mtl_jit_locate_inputs(L, f, e, ext, first, next, nargs, tr);
  mtj_split_attach(e, s, mtj_cap.rec, ext, next);
}

/* Builds entry e from trace tr and the results at [rbase, rbase + nres). */
static void make_entry(lua_State *L, jfn *f, mtj_entry *e, mtg_trace *tr, int nargs, int rbase, int nres) {
  if (tr->why[0]) {
    snprintf(e->why, sizeof e->why, "%s", tr->why);
    return;
  }
  const mt_tensor *ins[MTJ_MAXIN], *outs[MTJ_MAXOUT], *argt[MTJ_MAXARGS];
  int first[MTJ_MAXIN], nout = 0;
  bool split = mtj_cap.rec && mtj_cap.brk[0];
  if (split && mtj_cap.aot) {
    snprintf(e->why, sizeof e->why, "%.200s, and its results require grad (graphs split at host reads have no autograd)",
             mtj_cap.brk);
    return;
  }
  mtg_trace fwd = *tr; /* with a traced backward (mtj_cap.aot): the forward part */
  if (mtj_cap.aot) fwd.n = mtj_aot_forward_len(mtj_cap.aot);
  int nin = split ? 0 : mtj_graph_inputs(&fwd, e, ins, first);
  if (!e->why[0] && !split) mtl_jit_locate_inputs(L, f, e, ins, first, nin, nargs, &fwd);
  mtj_entry_state(e, tr, ins, nin, mtl_autocast_key());
  for (int k = 0; k < nargs; k++) argt[k] = tensor_at(L, 2 + k);
  for (int r = 0; r < nres && !e->why[0] && !split; r++) {
    int i = rbase + r, ty = lua_type(L, i);
    mtj_entry_result(e, &fwd, r, ty, ty == LUA_TBOOLEAN && lua_toboolean(L, i), tensor_at(L, i), argt, nargs, outs,
                     &nout);
  }
  e->nret = nres;
  if (!split) mtj_entry_grads(e, tr, ins, nin, outs, &nout); /* gradients set on leaves: more graph outputs */
  if (e->why[0]) return;
  double sc[MTJ_MAXARGS + MTJ_MAXSCT];
  bool isint[MTJ_MAXARGS + MTJ_MAXSCT];
  mtj_entry_scalars(e, sc, isint);
  e->nsct = mtj_cap.nsct;
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.jit_capture_aux");
  for (int j = 0; j < mtj_cap.nsct; j++) {
    lua_rawgeti(L, -1, j + 1);
    e->sct_ref[j] = mtl_jit_add_aux(L, f);
  }
  lua_pop(L, 1);
  mtj_options o = {.dynamic = f->dynamic, .sct = (const mt_tensor *const *)mtj_cap.sct, .nsct = mtj_cap.nsct};
  lstats.captures++;
  if (split) make_split(L, f, e, tr, nargs, sc, isint, &o);
  else mtj_entry_compile(e, f->name, tr, ins, nin, outs, nout, sc, isint, &o);
}

/* The recorder of a capture of fn called with nargs arguments (from
 * stack index 2): its number arguments are runtime scalars. */
static mtj_rec *new_rec(lua_State *L, int nargs) {
  double fnum[MTJ_MAXARGS];
  for (int k = 0; k < nargs && k < MTJ_MAXARGS; k++)
    fnum[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0.0 / 0.0;
  return mtj_rec_new(fnum, nargs);
}

/* After fn returned results at [rbase, rbase + nres) under the open
 * trace: the backward of those requiring grad, traced (jit/partition.c). */
static mtj_aot_capture *trace_backward(lua_State *L, mtj_entry *e, int rbase, int nres) {
  const mt_tensor **res = malloc((size_t)nres * sizeof *res + 1);
  if (!res) return NULL;
  for (int r = 0; r < nres; r++) res[r] = tensor_at(L, rbase + r);
  mtj_aot_capture *c = mtj_aot_trace_backward(e, mtg_tracing, res, nres);
  free(res);
  return c;
}

/* Runs fn under a trace with the call's arguments and makes a new entry
 * (not yet linked). Leaves fn's results on the stack; returns their count. */
static int capture(lua_State *L, jfn *f, int nargs, mtj_entry **out) {
  mtj_arg args[MTJ_MAXARGS] = {0};
  for (int i = 0; i < nargs; i++) describe_arg(L, 2 + i, &args[i]);
  mtj_entry *e = mtj_entry_new(args, nargs, epoch);
  if (!e) return luaL_error(L, "torch.compile: out of memory");
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  mt_status st = mtg_trace_begin();
  if (st) {
    mtj_entry_free(e);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  mtj_capture_begin(f->fullgraph, f->splits ? new_rec(L, nargs) : NULL);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.jit_capture_aux");
  mt_cuda_lazy_hold(true); /* the capture's eager ops run once: no fused kernels compiled for them */
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
  if (rc == LUA_OK && !mtj_cap.retry[0] && !(mtj_cap.brk[0] && !mtj_cap.rec))
    mtj_cap.aot = trace_backward(L, e, base + 1, lua_gettop(L) - base);
  mt_cuda_lazy_hold(false);
  mtg_trace *tr = mtg_trace_end();
  mtj_cap.active = false;
  if (rc != LUA_OK) {
    mtg_trace_free(tr);
    mtj_entry_free(e);
    mtj_capture_clear();
    return lua_error(L);
  }
  int nres = lua_gettop(L) - base;
  if (mtj_cap.rec && mtj_cap.brk[0]) lua_gc(L, LUA_GCCOLLECT); /* dead temporaries drop their references (jit/split.c) */
  if (mtj_cap.brk[0] && !f->splits) lstats.graph_breaks++; /* once per function, not per capture */
  if (mtj_cap.brk[0] && !f->splits && !f->fullgraph) { /* capture again, counting op calls */
    f->splits = true;
    mtl_jit_split_install(L);
    snprintf(mtj_cap.retry, sizeof mtj_cap.retry, "%s", "a graph break: captured again with its op calls recorded");
  }
  if (mtj_cap.retry[0]) snprintf(e->why, sizeof e->why, "%s", mtj_cap.retry);
  else make_entry(L, f, e, tr, nargs, base + 1, nres);
  mtg_trace_free(tr);
  mtj_capture_clear();
  *out = e;
  return nres;
}

/* The runtime scalars of a call: its number arguments, then the table
 * numbers e reads (sc has MTJ_MAXARGS + MTJ_MAXSCT entries). */
static void call_scalars(lua_State *L, const mtj_entry *e, int nargs, double *sc) {
  for (int k = 0; k < nargs; k++) sc[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0;
  for (int j = 0; j < e->nsct; j++) sc[nargs + j] = mtl_jit_table_number(L, e->sct_ref[j]);
}

/* Replays entry e with graph breaks: fn runs in Lua, its op calls
 * substituted by the segments' results. */
static int run_split(lua_State *L, mtj_entry *e, int nargs, const mt_tensor *const *ins) {
  double sc[MTJ_MAXARGS + MTJ_MAXSCT] = {0};
  call_scalars(L, e, nargs, sc);
  lstats.compiled_calls++;
  return mtl_jit_split_run(L, e, nargs, ins, sc);
}

/* Replays compiled entry e on inputs ins (from match) and pushes fn's results. */
static int run_entry(lua_State *L, mtj_entry *e, int nargs, const mt_tensor *const *ins) {
  double sc[MTJ_MAXARGS + MTJ_MAXSCT];
  mt_tensor *outs[MTJ_MAXOUT] = {0};
  call_scalars(L, e, nargs, sc);
  mt_status st = mtj_entry_run(e, check_fn(L, 1)->name, ins, sc, outs);
  if (st) {
    for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  lstats.compiled_calls++;
  luaL_checkstack(L, e->nret, "torch.compile: too many results");
  for (int r = 0; r < e->nret; r++) {
    switch (e->ret[r].kind) {
    case MTJ_RET_OUT: mtl_push_tensor(L, mt_retain(outs[e->ret[r].idx])); break;
    case MTJ_RET_ARG: lua_pushvalue(L, 2 + e->ret[r].idx); break;
    case MTJ_RET_NIL: lua_pushnil(L); break;
    default: lua_pushboolean(L, e->ret[r].idx);
    }
  }
  for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
  return e->nret;
}

/* Adds a new capture's entry e (graph, split graph or eager mark) to f,
 * or folds it into an entry f has (near: one that differs in number
 * values only; why: the first entry's miss). Counts and warns. */
static void add_entry(jfn *f, mtj_entry *e, mtj_entry *near, const char *why) {
  if (mtj_entry_same_graph(near, e)) {
    near->generalized = true; /* the same graph for another value: scalars are runtime values */
    lstats.recaptures++;
    mtj_entry_free(e);
    return;
  }
  if (e->c && f->dynamic && mtj_generalize_into(f->entries, e, epoch)) {
    lstats.recompiles++;
    f->ncompiled++;
    snprintf(f->last_reason, sizeof f->last_reason, "%.170s (sizes made dynamic)", why);
    mtj_entry_free(e);
    return;
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
    int ns = mtj_split_nseg(e->split);
    char n[128];
    if (ns == 1) snprintf(n, sizeof n, "its graph runs before the read, its Lua code around it");
    else snprintf(n, sizeof n, "the function runs as %d compiled graphs with its Lua code between them", ns);
    warn("graph break: %s; %s", mtj_cap.brk, n);
  }
  e->next = f->entries;
  f->entries = e;
}

static int fn_call(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int nargs = lua_gettop(L) - 1;
  if (nargs > MTJ_MAXARGS) return luaL_error(L, "torch.compile: more than %d arguments", MTJ_MAXARGS);
  if (f->off || f->gave_up || mtj_cap.active) return lstats.eager_calls++, call_eager(L, nargs);
  char why[200] = "no compiled graph yet";
  mtj_entry *near = NULL;
  const mt_tensor *ins[MTJ_MAXIN];
  mtj_arg args[MTJ_MAXARGS];
  for (int i = 0; i < nargs && f->entries; i++) describe_arg(L, 2 + i, &args[i]);
  for (mtj_entry *e = f->entries; e; e = e->next) {
    if (e->epoch != epoch || (e->split && mtj_split_dead(e->split))) continue;
    char w[200];
    int m = match(L, e, args, nargs, ins, w, sizeof w);
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
  mtj_entry *e = NULL;
  int nres = capture(L, f, nargs, &e);
  if (!e->c && mtj_cap.retry[0] && f->retries < MAXRETRY) {
    f->retries++; /* state was made during this call (an optimizer's first step): capture again next time */
    mtj_entry_free(e);
    return nres;
  }
  add_entry(f, e, near, why);
  return nres;
}

/* torch.compiler.is_compiling() -> true while a compiled function is being captured */
static int l_is_compiling(lua_State *L) {
  lua_pushboolean(L, mtj_cap.active || mtl_jit_split_replaying());
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
  bool replaying = mtl_jit_split_replaying(); /* the code between graph breaks sees what the capture saw */
  if (!mtj_cap.active && !replaying) return 1;
  if (mtj_cap.active && mtj_cap.nsct == MTJ_MAXSCT) return 1; /* stays a constant */
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
  lua_rawseti(L, -2, mtj_cap.nsct + 1);
  lua_pop(L, 1);
  mtj_capture_scalar(t);
  mtl_push_tensor(L, mt_retain(t));
  return 1;
}

/* torch.compiler.capture_again(reason): library code that changed Lua-side
 * state while being captured (an optimizer making its state on the first
 * step) asks for the capture to be redone on the next call. */
static int l_capture_again(lua_State *L) {
  const char *why = luaL_optstring(L, 1, "state was made during the capture");
  mtj_capture_again(why);
  return 0;
}

static int fn_tostring(lua_State *L) {
  jfn *f = check_fn(L, 1);
  int n = 0;
  for (mtj_entry *e = f->entries; e; e = e->next) n += e->epoch == epoch;
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
    mtl_jit_push_lua(L);
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
    mtl_jit_push_lua(L);
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
  mtj_entry *e = NULL;
  int top = lua_gettop(L);
  int nres = capture(L, f, nargs, &e);
  lua_pop(L, nres);
  if (!e->c && f->splits && !e->split) { /* a graph break: the capture that records op calls */
    mtj_entry_free(e);
    nres = capture(L, f, nargs, &e);
    lua_pop(L, nres);
  }
  (void)top;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return luaL_error(L, "explain: out of memory");
  mtj_entry_explain(e, mtj_cap.brk, f->last_reason, m);
  fclose(m);
  mtj_entry_free(e);
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
