/* l_io.c -- the C half of torch.vision.io (domains/vision/io.lua): readers
 * of image and data-set files into tensors. File formats live beside it
 * (idx.c, idx_read.c, png.c); this file only moves values between Lua and
 * them. Errors name the function and the file. */
#include "idx.h"
#include "mtl.h"

static int l_read_idx(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    return luaL_error(L, "torch.vision.io.read_idx: argument #1 must be a file path (a string), got a %s",
                      luaL_typename(L, 1));
  const char *path = lua_tostring(L, 1);
  mt_tensor *t = NULL;
  if (mtd_idx_read(path, &t) != MT_OK) return luaL_error(L, "torch.vision.io.read_idx: %s: %s", path, mt_errmsg());
  mtl_push_tensor(L, t);
  return 1;
}

static const mtl_reg regs[] = {
    {"read_idx", l_read_idx, MTL_FN,
     "torch.vision.io.read_idx(path) -- read an idx file (MNIST format, plain or .gz) into a tensor of its dtype "
     "and shape"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._io" */
int luaopen_torch_vision__io(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
