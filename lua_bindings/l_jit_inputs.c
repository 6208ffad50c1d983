/* l_jit_inputs.c -- where a compiled function's graph inputs come from at
 * a later call: among the arguments or through table-key paths from the
 * function's upvalues (mtl_jit_locate_inputs, with jit.lua's breadth-first
 * search), kept in the function's aux table and resolved again on every
 * call (mtl_jit_source); and Lua numbers read from tables as runtime
 * scalars (mtl_jit_table_number). Which tensors are inputs is jit/inputs.c's
 * work. Shared types: l_jit.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_jit.h"

/* Pushes aux[i] of the compiled function at index 1. */
static void push_aux(lua_State *L, int i) {
  lua_getiuservalue(L, 1, UV_AUX);
  lua_rawgeti(L, -1, i);
  lua_remove(L, -2);
}

/* Stores the value on top of the stack (popped) as a new aux entry; returns its index. */
int mtl_jit_add_aux(lua_State *L, jfn *f) {
  lua_getiuservalue(L, 1, UV_AUX);
  lua_insert(L, -2);
  lua_rawseti(L, -2, ++f->naux);
  lua_pop(L, 1);
  return f->naux;
}

/* Follows path aux[i] = {upvalue, key1, ...} from fn; NULL if it no longer
 * leads to a tensor. */
mt_tensor *mtl_jit_resolve_path(lua_State *L, int i) {
  push_aux(L, i);
  int path = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  lua_rawgeti(L, path, 1);
  const char *nm = lua_getupvalue(L, -2, (int)lua_tointeger(L, -1));
  if (!nm) {
    lua_settop(L, path - 1);
    return NULL;
  }
  lua_Integer n = luaL_len(L, path);
  for (lua_Integer k = 2; k <= n; k++) {
    if (lua_type(L, -1) != LUA_TTABLE && lua_type(L, -1) != LUA_TUSERDATA) {
      lua_settop(L, path - 1);
      return NULL;
    }
    lua_rawgeti(L, path, k);
    lua_gettable(L, -2);
  }
  mt_tensor *t = lua_type(L, -1) == LUA_TUSERDATA ? mtl_to_tensor(L, -1) : NULL;
  lua_settop(L, path - 1);
  return t;
}

/* The tensor of entry e's input k at this call (fn at index 1, args from 2). */
mt_tensor *mtl_jit_source(lua_State *L, const mtj_entry *e, int k) {
  if (e->src[k].kind == MTJ_SRC_ARG) return mtl_to_tensor(L, 2 + e->src[k].idx);
  return mtl_jit_resolve_path(L, e->src[k].idx);
}

/* The number aux[i] = {table, key} holds now (NaN if it is not a number). */
double mtl_jit_table_number(lua_State *L, int i) {
  push_aux(L, i);
  lua_rawgeti(L, -1, 1);
  lua_rawgeti(L, -2, 2);
  lua_gettable(L, -2);
  double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : 0.0 / 0.0;
  lua_pop(L, 3);
  return v;
}

static void push_tensor_id(lua_State *L, const mt_tensor *t) { lua_pushlightuserdata(L, (void *)t); }

/* torch tensor -> light userdata naming it (nil for other values); the
 * find_paths helper of jit.lua compares tensors through it. */
static int l_tensor_id(lua_State *L) {
  mt_tensor *t = lua_type(L, 1) == LUA_TUSERDATA ? mtl_to_tensor(L, 1) : NULL;
  if (t) push_tensor_id(L, t);
  else lua_pushnil(L);
  return 1;
}

extern const char mtl_jit_lua[];

/* Pushes the table of jit.lua's helpers (loaded once). */
void mtl_jit_push_lua(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.jit_lua");
  if (!lua_isnil(L, -1)) return;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, mtl_jit_lua, strlen(mtl_jit_lua), "=torch/jit.lua") != LUA_OK) lua_error(L);
  mtl_mark_library(L, -1);
  lua_pushcfunction(L, l_tensor_id);
  lua_call(L, 1, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.jit_lua");
}

/* Finds paths from fn's upvalues to tensors want[0..n) and stores them in
 * the aux table: idx[k][0..nidx[k]) their indices (none: no path). */
static void find_paths(lua_State *L, jfn *f, const mt_tensor *const *want, int n, int (*idx)[4], int *nidx) {
  for (int k = 0; k < n; k++) nidx[k] = 0;
  if (!n) return;
  mtl_jit_push_lua(L);
  lua_getfield(L, -1, "find_paths");
  lua_getiuservalue(L, 1, UV_FN);
  lua_createtable(L, 0, n);
  for (int k = 0; k < n; k++) {
    push_tensor_id(L, want[k]);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_call(L, 2, 1);
  for (int k = 0; k < n; k++) {
    push_tensor_id(L, want[k]);
    lua_rawget(L, -2);
    for (int j = 1; j <= 4 && lua_istable(L, -1); j++) {
      if (lua_rawgeti(L, -1, j) != LUA_TTABLE) {
        lua_pop(L, 1);
        break;
      }
      idx[k][nidx[k]++] = mtl_jit_add_aux(L, f);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

/* Where each graph input comes from at a later call: an argument, or a
 * path of table keys from an upvalue. */
void mtl_jit_locate_inputs(lua_State *L, jfn *f, mtj_entry *e, const mt_tensor **ins, const int *first, int nin,
                           int nargs, const mtg_trace *tr) {
  const mt_tensor *rest[MTJ_MAXIN];
  int where[MTJ_MAXIN], nrest = 0, found[MTJ_MAXIN][4], nfound[MTJ_MAXIN];
  for (int k = 0; k < nin; k++) {
    int a = -1;
    for (int j = 0; j < nargs && a < 0; j++)
      if (lua_type(L, 2 + j) == LUA_TUSERDATA && mtl_to_tensor(L, 2 + j) == ins[k]) a = j;
    e->src[k].kind = a >= 0 ? MTJ_SRC_ARG : MTJ_SRC_UPV;
    e->src[k].idx = a;
    if (a < 0) rest[nrest] = ins[k], where[nrest++] = k;
  }
  e->nin = nin;
  find_paths(L, f, rest, nrest, found, nfound);
  for (int r = 0; r < nrest; r++) {
    int k = where[r];
    if (!nfound[r]) {
      mtj_unlocated(e, tr, first[k], ins[k]);
      return;
    }
    e->src[k].idx = found[r][0];
    for (int j = 1; j < nfound[r]; j++) e->src[k].alt[e->src[k].nalt++] = found[r][j];
    e->src[k].t = mt_retain((mt_tensor *)ins[k]);
  }
}
