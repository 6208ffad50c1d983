/* l_jit_split.c -- the Lua side of compiled functions with graph breaks
 * (the records, segments and replay state are jit/split.c's). Once a
 * function shows a break, every C function of the torch table, its op
 * tables, the Tensor methods and metamethods is wrapped (torch.profiler.
 * hooks, installed once). While such a function is captured, a wrapper
 * describes each call's arguments and results to the recorder; while it
 * replays, a wrapper compares the call with its record and either returns
 * the tensors its segment computed (a substituted call) or runs it.
 *
 * When the call sequence differs at replay, fn took another path (Lua
 * state the guards do not cover changed): the call finishes eagerly if no
 * segment it needs ran yet, else raises an error naming the line, and the
 * entry is dropped so the next call captures again. Shared types: l_jit.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "split.h"
#include "l_jit.h"

/* replay of this thread (NULL when no split replay runs) */
static _Thread_local mtj_splitrun *rep_now;

static int call_original(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

/* ---- recording (capture) ---- */

/* Records the numbers among call i's n arguments: plain ones and the
 * fields of option tables (no metatable, string keys). */
static void record_numbers(lua_State *L, mtj_rec *r, int i, int n) {
  for (int a = 1; a <= n && a <= MTJ_MAXCARGS; a++) {
    if (lua_type(L, a) == LUA_TNUMBER) {
      mtj_rec_number(r, i, a, "", lua_tonumber(L, a));
    } else if (lua_type(L, a) == LUA_TTABLE && !lua_getmetatable(L, a)) {
      lua_pushnil(L);
      while (lua_next(L, a)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TNUMBER && lua_rawlen(L, -2) < 22)
          mtj_rec_number(r, i, a, lua_tostring(L, -2), lua_tonumber(L, -1));
        lua_pop(L, 1);
      }
    } else if (lua_type(L, a) == LUA_TTABLE) {
      lua_pop(L, 1); /* the metatable */
    }
  }
}

/* Describes the values at [1, n] as the results of call i. */
static void record_results(lua_State *L, mtj_rec *r, int i, int n) {
  for (int k = 0; k < n; k++) {
    int idx = 1 + k, ty = lua_type(L, idx);
    const mt_tensor *t = ty == LUA_TUSERDATA ? mtl_peek_tensor(L, idx) : NULL;
    if (ty == LUA_TNIL) mtj_rec_result(r, i, k, MTJ_R_NIL, 0, NULL);
    else if (ty == LUA_TBOOLEAN) mtj_rec_result(r, i, k, MTJ_R_BOOL, lua_toboolean(L, idx), NULL);
    else if (ty == LUA_TNUMBER)
      mtj_rec_result(r, i, k, lua_isinteger(L, idx) ? MTJ_R_INT : MTJ_R_NUM, lua_tonumber(L, idx), NULL);
    else if (t) mtj_rec_result(r, i, k, MTJ_R_TENSOR, 0, mtl_to_tensor(L, idx));
    else if (ty == LUA_TTABLE && lua_rawlen(L, idx) > 0 && !lua_getmetatable(L, idx)) {
      int len = (int)lua_rawlen(L, idx);
      mtj_rec_table(r, i, k, len);
      for (int j = 1; j <= len; j++) {
        lua_rawgeti(L, idx, j);
        const mt_tensor *e = lua_type(L, -1) == LUA_TUSERDATA ? mtl_peek_tensor(L, -1) : NULL;
        mtj_rec_table_item(r, i, k, j - 1, e ? mtl_to_tensor(L, -1) : NULL);
        lua_pop(L, 1);
      }
    } else {
      if (ty == LUA_TTABLE && lua_getmetatable(L, idx)) lua_pop(L, 1);
      mtj_rec_result(r, i, k, MTJ_R_OTHER, 0, NULL);
    }
  }
}

static int record_call(lua_State *L, mtj_rec *r) {
  int n = lua_gettop(L);
  const mt_tensor *argt[MTJ_MAXCARGS];
  for (int a = 0; a < n && a < MTJ_MAXCARGS; a++)
    argt[a] = lua_type(L, a + 1) == LUA_TUSERDATA && mtl_peek_tensor(L, a + 1) ? mtl_to_tensor(L, a + 1) : NULL;
  int i = mtj_rec_open(r, lua_topointer(L, lua_upvalueindex(1)), argt, n);
  if (i < 0) return call_original(L); /* not recorded: the capture fails */
  record_numbers(L, r, i, n);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET); /* an error ends the capture: the recording is dropped with it */
  int nres = lua_gettop(L);
  mtj_rec_close(r, i, lua_toboolean(L, lua_upvalueindex(2)), nres);
  record_results(L, r, i, nres);
  return nres;
}

/* ---- replay ---- */

/* fn took another path at call i: warns once and returns when the rest of
 * the call runs eagerly (eager_ok and no segment it needs ran yet), else
 * raises an error (the entry is dropped). */
static void diverged(lua_State *L, mtj_splitrun *p, const char *why, int i, bool eager_ok) {
  bool warn;
  if (mtj_splitrun_diverge(p, i, eager_ok, &warn)) {
    if (warn) {
      luaL_where(L, 1);
      fprintf(stderr, "torch.compile: %s%s took another branch than at its capture (op call %d: %s); this call "
                      "finishes eagerly (warned once)\n", lua_tostring(L, -1), mtj_splitrun_name(p), i + 1, why);
      lua_pop(L, 1);
    }
    return;
  }
  luaL_error(L,
             "torch.compile: %s took another path than when it was captured (op call %d: %s); Lua state its "
             "guards do not cover changed. Its compiled graphs are dropped: the next call captures again",
             mtj_splitrun_name(p), i + 1, why);
}

/* diverged, then the wrapped function runs for real. */
static int diverge(lua_State *L, mtj_splitrun *p, const char *why, int i) {
  diverged(L, p, why, i, true);
  return call_original(L);
}

/* Runs the segments up to and including last. False when a segment's
 * guards fail and the call goes on eagerly instead (eager_ok; else that
 * raises). */
static bool run_segments(lua_State *L, mtj_splitrun *p, int last, bool eager_ok) {
  bool miss;
  char why[200];
  MTL_CHECK(L, mtj_splitrun_segments(p, last, &miss, why, sizeof why));
  if (miss) diverged(L, p, why, mtj_splitrun_at(p), eager_ok);
  return !miss;
}

/* Pushes the tensor of value id (x: its record). */
static void push_value(lua_State *L, mtj_splitrun *p, int id, const mtj_res *x) {
  mt_tensor *t = mtj_splitrun_result(p, id, x);
  if (!t) mtl_fail(L, MT_EARG, NULL, NULL, NULL, NULL);
  mtl_push_tensor(L, mt_retain(t));
}

static int replay_call(lua_State *L, mtj_splitrun *p) {
  if (mtj_splitrun_eager(p)) return call_original(L);
  int i;
  const char *why = NULL;
  const mtj_call *c = mtj_splitrun_next(p, lua_topointer(L, lua_upvalueindex(1)), &i, &why);
  if (!c) return diverge(L, p, why, i);
  int n = lua_gettop(L);
  for (int a = 0; a < c->nargs && a < n; a++) {
    if (c->argid[a] < 0) continue;
    const mt_tensor *t = lua_type(L, a + 1) == LUA_TUSERDATA ? mtl_peek_tensor(L, a + 1) : NULL;
    if (!t) return diverge(L, p, "a tensor argument is missing", i);
    const mt_tensor *v = mtj_splitrun_value(p, c->argid[a]);
    if (!v) mtj_splitrun_bind(p, c->argid[a], mtl_to_tensor(L, a + 1));
    else if (v != t) return diverge(L, p, "a tensor argument is not the one the capture saw", i);
  }
  for (int k = 0; k < c->nnum && c->subst; k++) {
    const mtj_num *x = &c->num[k];
    double v = 0.0 / 0.0;
    if (x->key[0]) {
      lua_getfield(L, x->arg, x->key);
      v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : v;
      lua_pop(L, 1);
    } else if (lua_type(L, x->arg) == LUA_TNUMBER) {
      v = lua_tonumber(L, x->arg);
    }
    if (!mtj_splitrun_number_ok(p, x, v)) return diverge(L, p, "a number argument differs from the capture's", i);
  }
  if (!c->subst) {
    if (c->sync && !run_segments(L, p, c->seg - 1, true)) return call_original(L);
    int nres = call_original(L);
    for (int r = 0; r < c->nres && r < nres; r++)
      if (c->res[r].kind == MTJ_R_TENSOR && c->res[r].id >= 0 && !mtj_splitrun_value(p, c->res[r].id) &&
          lua_type(L, r + 1) == LUA_TUSERDATA)
        mtj_splitrun_bind(p, c->res[r].id, mtl_to_tensor(L, r + 1));
    return nres;
  }
  if (!run_segments(L, p, c->seg, true)) return call_original(L);
  lua_settop(L, 0);
  luaL_checkstack(L, c->nres + 2, "torch.compile: too many results");
  for (int r = 0; r < c->nres; r++) {
    const mtj_res *x = &c->res[r];
    switch (x->kind) {
    case MTJ_R_NIL: lua_pushnil(L); break;
    case MTJ_R_BOOL: lua_pushboolean(L, x->num != 0); break;
    case MTJ_R_INT: lua_pushinteger(L, (lua_Integer)x->num); break;
    case MTJ_R_NUM: lua_pushnumber(L, x->num); break;
    case MTJ_R_TENSOR: push_value(L, p, x->id, x); break;
    default: /* MTJ_R_TABLE (substituted calls return no other kinds) */
      lua_createtable(L, x->nids, 0);
      for (int k = 0; k < x->nids; k++) {
        push_value(L, p, x->ids[k], &(mtj_res){.ndim = -1});
        lua_rawseti(L, -2, k + 1);
      }
    }
  }
  return c->nres;
}

/* The wrapper of a C function (upvalue 1): counted and recorded while a
 * function with breaks is captured, substituted or checked while one
 * replays, else a plain call. */
static int split_call(lua_State *L) {
  if (rep_now) return replay_call(L, rep_now);
  if (mtj_cap.active && mtj_cap.rec) return record_call(L, mtj_cap.rec);
  return call_original(L);
}

/* torch._jit_split_wrap(f, name, mode) -> the wrapper of f (hooks.install's
 * factory); upvalues: f, and whether it is __index/__newindex */
static int l_split_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  bool index = lua_type(L, 3) == LUA_TSTRING && strcmp(lua_tostring(L, 3), "index") == 0;
  lua_settop(L, 1);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, index);
  lua_pushcclosure(L, split_call, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help"); /* the wrapper keeps the original's help text */
  if (lua_istable(L, -1)) {
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
    lua_pushvalue(L, 2);
    lua_insert(L, -2);
    lua_rawset(L, -3);
  }
  lua_settop(L, 2);
  return 1;
}

void mtl_jit_split_install(lua_State *L) {
  static bool installed;
  if (installed) return;
  installed = true;
  lua_getglobal(L, "require");
  lua_pushstring(L, "torch.profiler.hooks");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "install");
  lua_pushcfunction(L, l_split_wrap);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
}

bool mtl_jit_split_replaying(void) { return rep_now != NULL; }

static int trailing(lua_State *L) {
  mtj_splitrun *p = lua_touserdata(L, 1);
  run_segments(L, p, INT_MAX, false); /* all that remain; fn returned: too late to run it eagerly */
  return 0;
}

int mtl_jit_split_run(lua_State *L, mtj_entry *e, int nargs, const mt_tensor *const *ins, const double *sc) {
  mtj_splitrun *p = mtj_splitrun_new(e, ins, sc);
  if (!p) return luaL_error(L, "torch.compile: out of memory");
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  mtj_splitrun *prev = rep_now;
  rep_now = p;
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
  rep_now = prev;
  char why[300];
  int end = rc == LUA_OK ? mtj_splitrun_end(p, why, sizeof why) : MTJ_END_DONE;
  if (end == MTJ_END_DEAD) {
    lua_settop(L, base);
    lua_pushstring(L, why);
    rc = LUA_ERRRUN;
  } else if (end == MTJ_END_TRAILING) { /* trailing segments: their calls all came before the last host read */
    lua_pushcfunction(L, trailing);
    lua_pushlightuserdata(L, p);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
      lua_insert(L, base + 1); /* the error below fn's results, which go */
      lua_settop(L, base + 1);
      rc = LUA_ERRRUN;
    }
  }
  mtj_splitrun_free(p);
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L) - base;
}
