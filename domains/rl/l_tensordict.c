/* l_tensordict.c -- torch.rl._tensordict: the per-leaf loops of
 * TensorDict.stack and TensorDict.cat in one C call (domains/rl/tensordict.lua
 * keeps the structure; this file only joins tensors). Joins record through
 * mtg_join, so autograd sees them. Nested TensorDicts are left to Lua. */
#include <string.h>

#include "graph.h"
#include "mtl.h"
#include "trace.h"

#define SMALL 64 /* lists up to this length need no allocation */

/* Stack (a new dim d) or cat (along d) of n contiguous CPU tensors of one
 * dtype that nothing records (no grad, no trace) by plain copies into a new
 * tensor *out; returns false, touching nothing, when that does not apply
 * (the caller then goes through mtg_join, which also words the errors). */
static bool fast_join(mt_tensor *const *ts, int n, int64_t d, int stack, mt_tensor **out) {
  const mt_tensor *a = ts[0];
  int nd = a->ndim;
  if (MTG_TRACING() || d < 0 || d > nd - (stack ? 0 : 1) || nd + stack > MT_MAXDIM) return false;
  for (int j = 0; j < n; j++) {
    const mt_tensor *t = ts[j];
    if (t->ndim != nd || t->dtype != a->dtype || mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t) ||
        mtg_requires_grad(t))
      return false;
    for (int i = 0; i < nd; i++)
      if (t->shape[i] != a->shape[i] && (stack || i != d)) return false;
  }
  int64_t shape[MT_MAXDIM], outer = 1, inner = (int64_t)mt_elsize(a), cat = 0;
  for (int i = 0; i < d; i++) outer *= a->shape[i], shape[i] = a->shape[i];
  for (int i = (int)d + (stack ? 0 : 1); i < nd; i++) inner *= a->shape[i];
  for (int j = 0; j < n; j++) cat += stack ? 1 : ts[j]->shape[d];
  shape[d] = cat;
  for (int i = (int)d + !stack; i < nd; i++) shape[i + stack] = a->shape[i];
  if (mt_empty(shape, nd + stack, (mt_dtype)a->dtype, mt_cpu(), out) != MT_OK) return false;
  char *dst = mt_data(*out);
  for (int64_t o = 0; o < outer; o++)
    for (int j = 0; j < n; j++) {
      size_t bytes = (size_t)(inner * (stack ? 1 : ts[j]->shape[d]));
      memcpy(dst, mt_data(ts[j]) + (size_t)o * bytes, bytes);
      dst += bytes;
    }
  return true;
}

/* join(ds, keys, dim0, stack, fname) -> out, skipped: ds is a list of n leaf tables
 * (name -> value), keys the names to join; for each key whose value in ds[1]
 * is a tensor, out[key] = stack/cat of ds[1..n][key] along the 0-based dim0.
 * Keys holding other values are skipped and counted (the caller recurses). Errors name
 * fname, the key and the position in the list. */
static int l_join(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer dim = luaL_checkinteger(L, 3);
  int stack = lua_toboolean(L, 4);
  const char *fname = luaL_checkstring(L, 5);
  int n = (int)lua_rawlen(L, 1), nk = (int)lua_rawlen(L, 2);
  if (n < 1) return luaL_error(L, "%s: expected a non-empty list of TensorDicts", fname);
  mt_tensor *small[SMALL], **ts = small;
  if (n > SMALL) ts = lua_newuserdatauv(L, sizeof *ts * (size_t)n, 0);
  luaL_checkstack(L, n + 8, fname); /* n leaf tables, then a few working slots */
  int dtab = lua_gettop(L) + 1;
  for (int j = 0; j < n; j++) lua_rawgeti(L, 1, j + 1); /* the leaf tables at dtab .. dtab+n-1 */
  lua_createtable(L, 0, nk);
  int out = lua_gettop(L), skipped = 0;
  for (int k = 1; k <= nk; k++) {
    lua_rawgeti(L, 2, k);
    int key = lua_gettop(L);
    lua_pushvalue(L, key);
    lua_rawget(L, dtab);
    ts[0] = mtl_to_tensor(L, -1);
    lua_pop(L, 1);
    if (!ts[0]) {
      lua_pop(L, 1);
      skipped++;
      continue;
    }
    for (int j = 1; j < n; j++) {
      lua_pushvalue(L, key);
      int t = lua_rawget(L, dtab + j);
      ts[j] = mtl_to_tensor(L, -1);
      lua_pop(L, 1);
      if (!ts[j])
        return luaL_error(L, "%s: key '%s' is %s in TensorDict %d of the list but a tensor in TensorDict 1", fname,
                          lua_tostring(L, key), t == LUA_TNIL ? "missing" : "not a tensor", j + 1);
    }
    mt_tensor *r = NULL;
    if (!fast_join(ts, n, (int64_t)dim, stack, &r) && mtg_join(stack ? MT_OP_stack : MT_OP_cat, ts, n, (int64_t)dim, &r) != MT_OK)
      return luaL_error(L, "%s: key '%s': %s", fname, lua_tostring(L, key), mt_errmsg());
    mtl_push_tensor(L, r);
    lua_rawset(L, out);
  }
  lua_pushinteger(L, skipped);
  return 2;
}

static const mtl_reg regs[] = {
    {"join", l_join, MTL_FN,
     "torch.rl._tensordict.join(ds, keys, dim0, stack, fname) -- internal: stack or cat the tensor leaves named by "
     "keys of the leaf tables ds along the 0-based dim0"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl._tensordict" */
int luaopen_torch_rl__tensordict(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
