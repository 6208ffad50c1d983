/* l_jit_inputs.c -- where a compiled function's graph inputs come from:
 * the external tensors a trace reads or writes (jit_graph_inputs), found
 * among the arguments or through table-key paths from the function's
 * upvalues (jit_locate_inputs, with jit.lua's breadth-first search), kept
 * in the function's aux table and resolved again on every call
 * (jit_source); and Lua numbers read from tables as runtime scalars
 * (jit_table_number). Shared state and types: l_jit.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "jit.h"
#include "mtl.h"
#include "l_jit.h"

/* Pushes aux[i] of the compiled function at index 1. */
void jit_push_aux(lua_State *L, int i) {
  lua_getiuservalue(L, 1, UV_AUX);
  lua_rawgeti(L, -1, i);
  lua_remove(L, -2);
}

/* Stores the value on top of the stack (popped) as a new aux entry; returns its index. */
int jit_add_aux(lua_State *L, jfn *f) {
  lua_getiuservalue(L, 1, UV_AUX);
  lua_insert(L, -2);
  lua_rawseti(L, -2, ++f->naux);
  lua_pop(L, 1);
  return f->naux;
}

/* Follows path aux[i] = {upvalue, key1, ...} from fn; NULL if it no longer
 * leads to a tensor. */
mt_tensor *jit_resolve_path(lua_State *L, int i) {
  jit_push_aux(L, i);
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
mt_tensor *jit_source(lua_State *L, const jentry *e, int k) {
  if (e->src[k].kind == SRC_ARG) return mtl_to_tensor(L, 2 + e->src[k].idx);
  return jit_resolve_path(L, e->src[k].idx);
}

/* The number aux[i] = {table, key} holds now (NaN if it is not a number). */
double jit_table_number(lua_State *L, int i) {
  jit_push_aux(L, i);
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
void jit_push_lua(lua_State *L) {
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
static void jit_find_paths(lua_State *L, jfn *f, const mt_tensor *const *want, int n, int (*idx)[4], int *nidx) {
  for (int k = 0; k < n; k++) nidx[k] = 0;
  if (!n) return;
  jit_push_lua(L);
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
      idx[k][nidx[k]++] = jit_add_aux(L, f);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

/* True when t is among tensors a[0..n). */
static bool among(const mt_tensor *const *a, int n, const mt_tensor *t) {
  for (int k = 0; k < n; k++)
    if (a[k] == t) return true;
  return false;
}

/* The external tensors trace tr reads or writes, in order of first use:
 * operands no earlier entry made, tensors written in place, leaves whose
 * .grad was set. Sets e->why on a tensor made by untraced code. */
static int first_reader[MTJ_MAXIN]; /* per graph input: the entry that first names it (for messages) */

/* The op name of trace entry e, for messages. */
static const char *entry_name(const mtg_trace_entry *e) {
  if (e->kind == MTG_TE_CALL) return e->name;
  if (e->kind == MTG_TE_OP) return mt_ops[e->op].name;
  return "fill";
}

int jit_graph_inputs(const mtg_trace *tr, jentry *e, const mt_tensor **ins) {
  int nin = 0;
  for (int i = 0; i <= tr->n && !e->why[0]; i++) {
    const mt_tensor *cand[MTG_TRACE_NIN + 1];
    int nc = 0;
    if (i < tr->n) {
      for (int j = 0; j < tr->e[i].nin; j++) cand[nc++] = tr->e[i].in[j];
      if (tr->e[i].inplace) cand[nc++] = tr->e[i].out;
    }
    for (int c = 0; c < nc && !e->why[0]; c++) {
      const mt_tensor *t = cand[c] ? mtg_trace_root(tr, cand[c]) : NULL;
      if (!t || (t->flags & MT_TF_WRAPPED) || among((const mt_tensor *const *)jit_cap.sct, jit_cap.nsct, t) || among(ins, nin, t)) continue;
      bool made = false;
      for (int k = 0; k < i && !made; k++) {
        const mtg_trace_entry *x = &tr->e[k];
        made = (x->out == t && !x->inplace) || (x->nout > 1 && among((const mt_tensor *const *)x->xout, x->nout - 1, t));
      }
      if (made) continue;
      for (int k = 0; k < tr->nfresh; k++)
        if (tr->fresh[k] == t)
          snprintf(e->why, sizeof e->why, "a tensor made by %s inside the function (the JIT does not replay it yet)",
                   tr->fresh_what[k]);
      if (e->why[0]) break;
      if (nin == MTJ_MAXIN) {
        snprintf(e->why, sizeof e->why, "the graph reads more than %d tensors", MTJ_MAXIN);
        break;
      }
      first_reader[nin] = i;
      ins[nin++] = t;
    }
  }
  for (int g = 0; g < tr->ngrads && !e->why[0]; g++) {
    const mt_tensor *t = tr->grads[g].leaf;
    if (among(ins, nin, t)) continue;
    if (nin == MTJ_MAXIN) snprintf(e->why, sizeof e->why, "the graph reads more than %d tensors", MTJ_MAXIN);
    else first_reader[nin] = -1, ins[nin++] = t;
  }
  return nin;
}

/* Where each graph input comes from at a later call: an argument, or a
 * path of table keys from an upvalue. */
void jit_locate_inputs(lua_State *L, jfn *f, jentry *e, const mt_tensor **ins, int nin, int nargs,
                          const mtg_trace *tr) {
  const mt_tensor *rest[MTJ_MAXIN];
  int where[MTJ_MAXIN], nrest = 0, found[MTJ_MAXIN][4], nfound[MTJ_MAXIN];
  for (int k = 0; k < nin; k++) {
    int a = -1;
    for (int j = 0; j < nargs && a < 0; j++)
      if (lua_type(L, 2 + j) == LUA_TUSERDATA && mtl_to_tensor(L, 2 + j) == ins[k]) a = j;
    e->src[k].kind = a >= 0 ? SRC_ARG : SRC_UPV;
    e->src[k].idx = a;
    if (a < 0) rest[nrest] = ins[k], where[nrest++] = k;
  }
  e->nin = nin;
  jit_find_paths(L, f, rest, nrest, found, nfound);
  for (int r = 0; r < nrest; r++) {
    int k = where[r];
    if (!nfound[r]) {
      char sh[96];
      snprintf(e->why, sizeof e->why,
               "%s reads a %s tensor of shape %s that is neither an argument nor reachable from the function's "
               "upvalues through tables (made by an op the JIT does not trace?)",
               first_reader[k] >= 0 ? entry_name(&tr->e[first_reader[k]]) : "a .grad",
               mt_dtype_name((mt_dtype)ins[k]->dtype), mt_shape_str(ins[k]->shape, ins[k]->ndim, sh, sizeof sh));
      return;
    }
    e->src[k].idx = found[r][0];
    for (int j = 1; j < nfound[r]; j++) e->src[k].alt[e->src[k].nalt++] = found[r][j];
    e->src[k].t = mt_retain((mt_tensor *)ins[k]);
  }
}

