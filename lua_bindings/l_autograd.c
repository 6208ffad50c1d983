/* l_autograd.c -- autograd from Lua: the tensor properties requires_grad,
 * grad, grad_fn, is_leaf; backward, detach, hooks; torch.autograd.grad,
 * no_grad/enable_grad (function and <close> forms); gradcheck (Lua source
 * in autograd.lua, compiled in). */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"

/* ---- grad_fn objects ---- */
#define NODE_MT "torch.autograd.Node"

static int node_tostring(lua_State *L) {
  lua_getiuservalue(L, 1, 1);
  lua_pushfstring(L, "<%s>", lua_tostring(L, -1));
  return 1;
}

static int node_index(lua_State *L) {
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "name") == 0) {
    lua_getiuservalue(L, 1, 1);
    return 1;
  }
  lua_pushnil(L);
  return 1;
}

static int node_eq(lua_State *L) {
  void **a = luaL_testudata(L, 1, NODE_MT), **b = luaL_testudata(L, 2, NODE_MT);
  lua_pushboolean(L, a && b && *a == *b);
  return 1;
}

/* A grad_fn value: the node's identity (not a reference: it may outlive
 * the node, and only its name and identity are read) and its name. */
static void push_node(lua_State *L, mtg_node *n) {
  void **u = lua_newuserdatauv(L, sizeof *u, 1);
  *u = n;
  lua_pushstring(L, mtg_node_name(n));
  lua_setiuservalue(L, -2, 1);
  if (luaL_newmetatable(L, NODE_MT)) {
    lua_pushcfunction(L, node_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, node_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, node_eq);
    lua_setfield(L, -2, "__eq");
  }
  lua_setmetatable(L, -2);
}

/* ---- properties (called from tensor_ud.c's __index / __newindex) ---- */

int mtl_autograd_getprop(lua_State *L, mt_tensor *t, const char *k) {
  if (strcmp(k, "requires_grad") == 0) {
    lua_pushboolean(L, mtg_requires_grad(t));
  } else if (strcmp(k, "grad") == 0) {
    mt_tensor *g = mtg_grad(t);
    if (g) mtl_push_tensor(L, mt_retain(g));
    else lua_pushnil(L);
  } else if (strcmp(k, "grad_fn") == 0) {
    mtg_node *n = mtg_grad_fn(t);
    if (n) push_node(L, n);
    else lua_pushnil(L);
  } else if (strcmp(k, "is_leaf") == 0) {
    lua_pushboolean(L, mtg_is_leaf(t));
  } else if (strcmp(k, "retains_grad") == 0) {
    lua_pushboolean(L, mtg_retains_grad(t));
  } else {
    return 0;
  }
  return 1;
}

int mtl_autograd_setprop(lua_State *L, mt_tensor *t, const char *k, int v) {
  if (strcmp(k, "requires_grad") == 0) {
    if (!lua_isboolean(L, v)) luaL_error(L, "requires_grad: expected a boolean, got %s", luaL_typename(L, v));
    MTL_CHECK(L, mtg_set_requires_grad(t, lua_toboolean(L, v)));
  } else if (strcmp(k, "grad") == 0) {
    mt_tensor *g = lua_isnil(L, v) ? NULL : mtl_to_tensor(L, v);
    if (!lua_isnil(L, v) && !g) luaL_error(L, "grad: expected a tensor or nil, got %s", luaL_typename(L, v));
    MTL_CHECK(L, mtg_set_grad(t, g));
  } else {
    return 0;
  }
  return 1;
}

void mtl_autograd_suffix(lua_State *L, mt_tensor *t, luaL_Buffer *b) {
  mtg_node *n = mtg_grad_fn(t);
  if (n) {
    luaL_addstring(b, ", grad_fn=<");
    luaL_addstring(b, mtg_node_name(n));
    luaL_addstring(b, ">");
  } else if (mtg_requires_grad(t)) {
    luaL_addstring(b, ", requires_grad=true");
  }
}

/* ---- methods ---- */

static int m_requires_grad_(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "requires_grad_");
  int on = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
  MTL_CHECK(L, mtg_set_requires_grad(t, on));
  lua_settop(L, 1);
  return 1;
}

static int m_detach(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "detach"), *r = NULL;
  MTL_CHECK(L, mtg_detach(t, &r));
  mtl_push_tensor(L, r);
  return 1;
}

static int m_detach_(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "detach_");
  MTL_CHECK(L, mtg_detach_(t));
  lua_settop(L, 1);
  return 1;
}

static int m_retain_grad(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "retain_grad");
  MTL_CHECK(L, mtg_retain_grad(t));
  return 0;
}

/* Reads a tensor or a list of tensors at idx into ts (up to max);
 * returns the count. Entries are borrowed from the Lua values. */
static int tensor_list(lua_State *L, int idx, mt_tensor **ts, int max, const char *op, const char *what) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) {
    ts[0] = t;
    return 1;
  }
  if (!lua_istable(L, idx)) luaL_error(L, "%s: %s must be a tensor or a list of tensors, got %s", op, what,
                                       luaL_typename(L, idx));
  int n = (int)lua_rawlen(L, idx);
  if (n > max) luaL_error(L, "%s: at most %d %s", op, max, what);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    ts[i] = mtl_to_tensor(L, -1);
    if (!ts[i]) luaL_error(L, "%s: %s[%d] must be a tensor, got %s", op, what, i + 1, luaL_typename(L, -1));
    lua_pop(L, 1); /* still referenced by the list */
  }
  return n;
}

#define MAXT 256

/* y:backward([gradient][, {retain_graph=, create_graph=}]) */
static int m_backward(lua_State *L) {
  mt_tensor *y = mtl_check_tensor(L, 1, "backward");
  int opt = mtl_options_index(L, 2);
  mt_tensor *g = NULL;
  if (!lua_isnoneornil(L, 2) && lua_gettop(L) >= 2 && opt != 2) {
    g = mtl_to_tensor(L, 2);
    if (!g) return luaL_error(L, "backward: gradient must be a tensor, got %s", luaL_typename(L, 2));
  }
  if (!g && opt) {
    mtl_optfield(L, opt, "gradient");
    g = lua_isnil(L, -1) ? NULL : mtl_check_tensor(L, -1, "backward");
    lua_pop(L, 1);
  }
  mtg_backward_opts o = {0};
  o.create_graph = opt && mtl_opt_bool(L, 0, 0, opt, "create_graph", 0);
  o.retain_graph = opt ? mtl_opt_bool(L, 0, 0, opt, "retain_graph", o.create_graph) : 0;
  MTL_CHECK(L, mtg_backward(&y, g ? &g : NULL, 1, NULL, 0, o, NULL));
  return 0;
}

/* torch.autograd.grad(outputs, inputs[, {grad_outputs=, retain_graph=,
 * create_graph=, allow_unused=}]) -> list of gradients */
static int l_grad(lua_State *L) {
  mt_tensor *outs[MAXT], *ins[MAXT], *gos[MAXT], *res[MAXT];
  int no = tensor_list(L, 1, outs, MAXT, "grad", "outputs");
  int ni = tensor_list(L, 2, ins, MAXT, "grad", "inputs");
  int opt = lua_istable(L, 3) ? 3 : 0;
  bool have_go = false;
  if (opt) {
    mtl_optfield(L, opt, "grad_outputs");
    if (!lua_isnil(L, -1)) {
      int ng = tensor_list(L, lua_gettop(L), gos, MAXT, "grad", "grad_outputs");
      if (ng != no) return luaL_error(L, "grad: %d grad_outputs for %d outputs", ng, no);
      have_go = true;
    }
    lua_pop(L, 1);
  }
  mtg_backward_opts o = {0};
  o.create_graph = opt && mtl_opt_bool(L, 0, 0, opt, "create_graph", 0);
  o.retain_graph = opt ? mtl_opt_bool(L, 0, 0, opt, "retain_graph", o.create_graph) : 0;
  o.allow_unused = opt && mtl_opt_bool(L, 0, 0, opt, "allow_unused", 0);
  MTL_CHECK(L, mtg_backward(outs, have_go ? gos : NULL, no, ins, ni, o, res));
  lua_createtable(L, ni, 0);
  for (int i = 0; i < ni; i++) {
    if (!res[i]) continue;
    mtl_push_tensor(L, res[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- hooks ---- */
/* A hook's context: the Lua state and the key of its function in the
 * registry table "mtl.hooks" (removed by handle:remove()). */
typedef struct {
  lua_State *L;
  lua_Integer id;
} hook_ctx;

static lua_Integer next_hook_id;

static mt_status call_hook(void *ctx, const mt_tensor *grad, mt_tensor **replace) {
  hook_ctx *h = ctx;
  lua_State *L = h->L;
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.hooks");
  if (lua_rawgeti(L, -1, h->id) == LUA_TNIL) {
    lua_pop(L, 2);
    return MT_OK;
  }
  mtl_push_tensor(L, mt_retain((mt_tensor *)grad));
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    mt_status st = mt_fail(MT_EARG, "hook: %s", lua_tostring(L, -1));
    lua_pop(L, 2);
    return st;
  }
  mt_status st = MT_OK;
  if (!lua_isnil(L, -1)) {
    mt_tensor *r = mtl_to_tensor(L, -1);
    if (!r) st = mt_fail(MT_EARG, "hook: must return a tensor or nil, got %s", luaL_typename(L, -1));
    else *replace = mt_retain(r);
  }
  lua_pop(L, 2);
  return st;
}

static void free_hook(void *ctx) {
  hook_ctx *h = ctx;
  lua_State *L = h->L;
  if (lua_getfield(L, LUA_REGISTRYINDEX, "mtl.hooks") == LUA_TTABLE) {
    lua_pushnil(L);
    lua_rawseti(L, -2, h->id);
  }
  lua_pop(L, 1);
  free(h);
}

static int handle_remove(lua_State *L) {
  lua_getfield(L, 1, "id");
  lua_Integer id = lua_tointeger(L, -1);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.hooks");
  lua_pushnil(L);
  lua_rawseti(L, -2, id);
  return 0;
}

/* x:register_hook(fn) -> handle with :remove(); fn(grad) may return a
 * replacement gradient. */
static int m_register_hook(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "register_hook");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  hook_ctx *h = malloc(sizeof *h);
  if (!h) return luaL_error(L, "register_hook: out of memory");
  h->L = L;
  h->id = ++next_hook_id;
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.hooks");
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, h->id);
  lua_pop(L, 1);
  mt_status st = mtg_register_hook(t, call_hook, h, free_hook);
  if (st) {
    free_hook(h);
    return luaL_error(L, "%s", mt_errmsg());
  }
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, h->id);
  lua_setfield(L, -2, "id");
  lua_pushcfunction(L, handle_remove);
  lua_setfield(L, -2, "remove");
  return 1;
}

/* ---- grad mode ---- */

static int guard_close(lua_State *L) {
  lua_getfield(L, 1, "prev");
  mtg_set_grad_enabled(lua_toboolean(L, -1));
  return 0;
}

/* Runs fn (at 1) with grad mode `on`, restoring the previous mode even if
 * it fails; or, without fn, returns a guard whose __close restores it. */
static int with_grad_mode(lua_State *L, bool on) {
  bool prev = mtg_set_grad_enabled(on);
  if (lua_isnoneornil(L, 1)) {
    lua_createtable(L, 0, 1);
    lua_pushboolean(L, prev);
    lua_setfield(L, -2, "prev");
    if (luaL_newmetatable(L, "torch.autograd.GradMode")) {
      lua_pushcfunction(L, guard_close);
      lua_setfield(L, -2, "__close");
      lua_pushvalue(L, -1);
      lua_setfield(L, -2, "__index");
      lua_pushcfunction(L, guard_close);
      lua_setfield(L, -2, "exit");
    }
    lua_setmetatable(L, -2);
    return 1;
  }
  if (!lua_isfunction(L, 1)) {
    mtg_set_grad_enabled(prev);
    return luaL_error(L, "%s: expected a function or nothing, got %s", on ? "enable_grad" : "no_grad",
                      luaL_typename(L, 1));
  }
  int st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  mtg_set_grad_enabled(prev);
  if (st != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}

static int l_no_grad(lua_State *L) { return with_grad_mode(L, false); }
static int l_enable_grad(lua_State *L) { return with_grad_mode(L, true); }

static int l_set_grad_enabled(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  mtg_set_grad_enabled(lua_toboolean(L, 1));
  return 0;
}

static int l_is_grad_enabled(lua_State *L) {
  lua_pushboolean(L, mtg_grad_enabled());
  return 1;
}

/* torch._derivative_status(name) -> 1 | 0, why | -1 (registry test) */
static int l_derivative_status(lua_State *L) {
  int op = mt_op_find(luaL_checkstring(L, 1));
  if (op < 0) return luaL_error(L, "_derivative_status: no op named '%s'", lua_tostring(L, 1));
  const char *why = NULL;
  lua_pushinteger(L, mtg_derivative_status((mt_op)op, &why));
  lua_pushstring(L, why);
  return 2;
}

/* torch._ops() -> list of {name=, kind=, arity=, differentiable=} from the
 * engine's op registry (tensor/ops.def) */
static int l_ops(lua_State *L) {
  static const char *kinds[] = {"unary", "binary", "compare", "ternary", "reduce", "scan",
                                "movement", "index", "extern", "random", "creation"};
  lua_createtable(L, MT_NOPS, 0);
  for (int i = 0; i < MT_NOPS; i++) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, mt_ops[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, kinds[mt_ops[i].kind]);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, mt_ops[i].arity);
    lua_setfield(L, -2, "arity");
    lua_pushboolean(L, (mt_ops[i].flags & MT_F_DIFF) != 0);
    lua_setfield(L, -2, "differentiable");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static const mtl_reg regs[] = {
    {"_ops", l_ops, MTL_FN, "torch._ops() -- the engine's op registry: {name=, kind=, arity=, differentiable=} per op"},
    {"requires_grad_", m_requires_grad_, MTL_METHOD,
     "x:requires_grad_([flag=true]) -- make leaf x record operations for autograd; returns x"},
    {"detach", m_detach, MTL_METHOD, "x:detach() -- a tensor sharing x's data, outside any graph"},
    {"detach_", m_detach_, MTL_METHOD, "x:detach_() -- cut x out of its graph in place"},
    {"retain_grad", m_retain_grad, MTL_METHOD, "x:retain_grad() -- keep .grad of a non-leaf x after backward"},
    {"backward", m_backward, MTL_METHOD,
     "y:backward([gradient][, {retain_graph=, create_graph=}]) -- accumulate dy/dleaf into each leaf's .grad",
     "gradient retain_graph create_graph"},
    {"register_hook", m_register_hook, MTL_METHOD,
     "x:register_hook(fn) -- fn(grad) runs when x's gradient is computed and may return a replacement; "
     "returns a handle with :remove()"},
    {"no_grad", l_no_grad, MTL_FN,
     "torch.no_grad([fn, ...]) -- run fn without recording; without fn, a guard: local g <close> = torch.no_grad()",
     MTL_DATA},
    {"enable_grad", l_enable_grad, MTL_FN, "torch.enable_grad([fn, ...]) -- like no_grad, but turns recording on",
     MTL_DATA},
    {"set_grad_enabled", l_set_grad_enabled, MTL_FN, "torch.set_grad_enabled(flag) -- turn recording on or off"},
    {"is_grad_enabled", l_is_grad_enabled, MTL_FN, "torch.is_grad_enabled() -- is recording on?"},
    {"_derivative_status", l_derivative_status, MTL_FN,
     "torch._derivative_status(op) -- 1: has a derivative, 0: explicitly none (and why), -1: missing (internal)"},
    {NULL, NULL, 0, NULL}};

static const mtl_reg autograd_regs[] = {
    {"grad", l_grad, MTL_FN,
     "torch.autograd.grad(outputs, inputs[, {grad_outputs=, retain_graph=, create_graph=, allow_unused=}]) -- "
     "the gradients of outputs with respect to inputs, as a list",
     "grad_outputs retain_graph create_graph allow_unused"},
    {"no_grad", l_no_grad, MTL_FN, "torch.autograd.no_grad([fn]) -- same as torch.no_grad", MTL_DATA},
    {"enable_grad", l_enable_grad, MTL_FN, "torch.autograd.enable_grad([fn]) -- same as torch.enable_grad", MTL_DATA},
    {NULL, NULL, 0, NULL}};

extern const char mtl_autograd_lua[];

void mtl_open_autograd(lua_State *L, int torch_idx, int methods_idx) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.hooks");
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_newtable(L);
  int ag = lua_gettop(L);
  mtl_register(L, ag, methods_idx, autograd_regs);
  /* gradcheck and friends, written in Lua: the chunk gets (torch, autograd) */
  if (luaL_loadbuffer(L, mtl_autograd_lua, strlen(mtl_autograd_lua), "=torch/autograd.lua") != LUA_OK)
    lua_error(L);
  mtl_mark_library(L, -1);
  lua_pushvalue(L, torch_idx);
  lua_pushvalue(L, ag);
  lua_call(L, 2, 0);
  lua_pushvalue(L, ag);
  lua_setfield(L, torch_idx, "autograd");
  lua_pop(L, 1);
}
