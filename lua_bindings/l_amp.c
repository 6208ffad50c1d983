/* l_amp.c -- the C op under torch.amp.GradScaler (lua/torch/amp/):
 * unscaling every gradient of a device and checking it for inf/NaN in one
 * pass each, with the verdict left in a device tensor (tensor/amp.c). */
#include "amp.h"
#include "mtl.h"

/* torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale):
 * grads a list of tensors on found_inf's device, inv_scale a number. */
static int l_unscale(lua_State *L) {
  const char *op = "_amp_foreach_non_finite_check_and_unscale_";
  luaL_checktype(L, 1, LUA_TTABLE);
  mt_tensor *found = mtl_check_tensor(L, 2, op);
  double inv = luaL_checknumber(L, 3);
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  for (lua_Integer k = 1; k <= n; k++) {
    lua_rawgeti(L, 1, k);
    mt_tensor *g = mtl_to_tensor(L, -1);
    if (!g) return luaL_error(L, "%s: element %d of the list is a %s, not a tensor", op, (int)k, luaL_typename(L, -1));
    MTL_CHECK(L, mt_amp_unscale_(g, inv, found));
    lua_pop(L, 1);
  }
  return 0;
}

static const mtl_reg regs[] = {
    {"_amp_foreach_non_finite_check_and_unscale_", l_unscale, MTL_FN,
     "torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale) -- grads *= inv_scale in "
     "place; found_inf (float32, one element) becomes 1 if any result is inf or NaN"},
    {NULL, NULL, 0, NULL}};

void mtl_open_amp(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
