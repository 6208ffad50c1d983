/* l_foreach.c -- torch._foreach_norm and torch._foreach_mul_ (PyTorch's
 * names): one call over a list of tensors, which clip_grad_norm_ uses so
 * that the norm of 77 gradients costs a few kernel launches on CUDA
 * (tensor/foreach.c). While autograd would record them (a tensor requires
 * grad and grad mode is on) or a torch.compile trace is capturing, they
 * run tensor by tensor through the recorded ops instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "foreach.h"
#include "graph.h"
#include "mtl.h"
#include "trace.h"

/* The tensors of the list at idx (borrowed from the Lua values); *n its length. */
static mt_tensor **list_arg(lua_State *L, int idx, const char *op, int *n) {
  if (lua_type(L, idx) != LUA_TTABLE || mtl_peek_tensor(L, idx))
    luaL_error(L, "%s: argument #%d must be a list of tensors, got %s", op, idx,
               mtl_peek_tensor(L, idx) ? "a tensor" : luaL_typename(L, idx));
  lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
  mt_tensor **ts = lua_newuserdatauv(L, (size_t)(len ? len : 1) * sizeof *ts, 0); /* freed with the call */
  for (lua_Integer k = 1; k <= len; k++) {
    lua_rawgeti(L, idx, k);
    ts[k - 1] = mtl_to_tensor(L, -1);
    if (!ts[k - 1]) luaL_error(L, "%s: element %d of the list is a %s, not a tensor", op, (int)k, luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  *n = (int)len;
  return ts;
}

/* Would the recorded ops be needed (autograd or a trace)? */
static bool recorded(mt_tensor *const *ts, int n) {
  if (MTG_TRACING()) return true;
  if (!mtg_grad_enabled()) return false;
  for (int i = 0; i < n; i++)
    if (mtg_requires_grad(ts[i])) return true;
  return false;
}

/* The recorded path of _foreach_norm: per-tensor norms, the total from their stack. */
static mt_status norms_recorded(mt_tensor *const *ts, int n, double ord, mt_tensor **norms, mt_tensor **total) {
  mt_status st = MT_OK;
  mt_dtype rt = (mt_dtype)ts[0]->dtype;
  for (int i = 0; i < n && !st; i++) {
    if (!mt_is_floating((mt_dtype)ts[i]->dtype))
      return mt_fail(MT_EDTYPE, "_foreach_norm: expected floating tensors, got %s at position %d",
                     mt_dtype_name((mt_dtype)ts[i]->dtype), i + 1);
    rt = mt_promote_types(rt, (mt_dtype)ts[i]->dtype);
  }
  for (int i = 0; i < n && !st; i++)
    st = mtg_reduce(MT_OP_linalg_vector_norm, ts[i], NULL, 0, false, -1, ord, &norms[i], 1);
  mt_tensor **cast = st ? NULL : calloc((size_t)n, sizeof *cast), *stk = NULL;
  if (!st && !cast) st = mt_fail(MT_ENOMEM, "_foreach_norm: out of memory");
  for (int i = 0; i < n && !st; i++) st = mtg_to_dtype(norms[i], rt, false, &cast[i]);
  if (!st) st = mtg_join(MT_OP_stack, cast, n, 0, &stk);
  if (!st) st = mtg_reduce(MT_OP_linalg_vector_norm, stk, NULL, 0, false, -1, ord, total, 1);
  for (int i = 0; cast && i < n; i++) mt_release(cast[i]);
  free(cast);
  mt_release(stk);
  return st;
}

/* torch._foreach_norm(tensors[, ord=2]) -> {norms...}, total */
static int l_foreach_norm(lua_State *L) {
  const char *op = "_foreach_norm";
  int n = 0;
  lua_settop(L, 2); /* the scratch arrays go above the arguments */
  mt_tensor **ts = list_arg(L, 1, op, &n);
  double ord = 2;
  if (!lua_isnoneornil(L, 2)) {
    if (lua_type(L, 2) == LUA_TSTRING && (!strcmp(lua_tostring(L, 2), "inf") || !strcmp(lua_tostring(L, 2), "-inf")))
      ord = lua_tostring(L, 2)[0] == '-' ? -INFINITY : INFINITY;
    else if (lua_type(L, 2) == LUA_TNUMBER)
      ord = lua_tonumber(L, 2);
    else
      return luaL_error(L, "%s: ord must be a number, got %s", op, luaL_typename(L, 2));
  }
  mt_tensor **norms = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *norms, 0), *total = NULL;
  for (int i = 0; i < n; i++) norms[i] = NULL;
  mt_status st = n && recorded(ts, n) ? norms_recorded(ts, n, ord, norms, &total) : mt_foreach_norm(ts, n, ord, norms, &total);
  if (st) {
    for (int i = 0; i < n; i++) mt_release(norms[i]);
    mt_release(total);
    return mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    mtl_push_tensor(L, norms[i]);
    lua_rawseti(L, -2, i + 1);
  }
  mtl_push_tensor(L, total);
  return 2;
}

/* torch._foreach_mul_(tensors, scale): scale a number or a 0-dim tensor */
static int l_foreach_mul_(lua_State *L) {
  const char *op = "_foreach_mul_";
  int n = 0;
  lua_settop(L, 2);
  mt_tensor **ts = list_arg(L, 1, op, &n);
  const mt_tensor *scale = mtl_peek_tensor(L, 2);
  if (!scale && lua_type(L, 2) != LUA_TNUMBER)
    return luaL_error(L, "%s: argument #2 must be a number or a 0-dim tensor, got %s", op, luaL_typename(L, 2));
  mt_status st = MT_OK;
  if (n && recorded(ts, n)) {
    mt_tensor *s = scale ? mtl_check_tensor(L, 2, op) : NULL;
    if (!s && !(st = mt_scalar_tensor(mt_sfloat(lua_tonumber(L, 2)), MT_FLOAT64, &s))) s->flags |= MT_TF_WRAPPED;
    else if (s) mt_retain(s);
    for (int i = 0; i < n && !st; i++) {
      mt_tensor *o = ts[i];
      st = mtg_binary(MT_OP_mul, ts[i], s, &o);
    }
    mt_release(s);
  } else {
    st = mt_foreach_mul_(ts, n, scale ? mtl_check_tensor(L, 2, op) : NULL, scale ? 0 : lua_tonumber(L, 2));
  }
  MTL_CHECK(L, st);
  lua_settop(L, 1);
  return 1;
}

static const mtl_reg regs[] = {
    {"_foreach_norm", l_foreach_norm, MTL_FN,
     "torch._foreach_norm(tensors[, ord=2]) -- {norm of each tensor} (0-dim, each in its dtype), and as a second "
     "result the ord-norm of all of them together"},
    {"_foreach_mul_", l_foreach_mul_, MTL_FN,
     "torch._foreach_mul_(tensors, scale) -- multiplies every tensor in place by a number or a 0-dim tensor "
     "(read on the device: no host sync)"},
    {NULL, NULL, 0, NULL}};

void mtl_open_foreach(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
