/* init.c -- luaopen_torch: builds the torch module table and the Tensor
 * method table from every binding group, and keeps the help texts of all
 * registered functions (help() reads them). */
#include <stdio.h>
#include <string.h>

#include "mtl.h"

void mtl_set_help(lua_State *L, const char *text) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help");
  lua_pushvalue(L, -2);
  lua_pushstring(L, text);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void mtl_register(lua_State *L, int torch_idx, int methods_idx, const mtl_reg *regs) {
  for (; regs->name; regs++) {
    mtl_push_gated(L, regs); /* l_cuda.c: the device check in front of every function */
    if (regs->help) mtl_set_help(L, regs->help);
    if (regs->where & MTL_FN) {
      lua_pushvalue(L, -1);
      lua_setfield(L, torch_idx, regs->name);
    }
    if (regs->where & MTL_METHOD) {
      lua_pushvalue(L, -1);
      lua_setfield(L, methods_idx, regs->name);
    }
    lua_pop(L, 1);
  }
}

/* __index(t, k) of a package table (upvalue 1: its module name, e.g.
 * "torch"): the module <name>.<k> (torch.nn, torch.utils.data, ...) loaded
 * by require on first use and kept in the table; nil when the tree has no
 * such package (an ordinary missing field). Errors inside an existing
 * module propagate. */
static int package_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  const char *k = lua_tostring(L, 2), *pkg = lua_tostring(L, lua_upvalueindex(1));
  if (k[0] == '_' || strchr(k, '.')) return 0;
  const char *name = lua_pushfstring(L, "%s.%s", pkg, k);
  if (!mtl_package_exists(name)) return 0;
  lua_getglobal(L, "require");
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 1);
  return 1;
}

/* Gives the table at idx a metatable whose __index loads <name>.<k>. Its
 * __package field holds the name: the REPL's completion reads it to offer
 * the sub-packages not loaded yet (without calling __index). */
static void make_package(lua_State *L, int idx, const char *name) {
  idx = lua_absindex(L, idx);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, name);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "__package");
  lua_pushcclosure(L, package_index, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, idx);
}

/* torch._package(name[, t]) -> t (or a new table) that loads the modules
 * name.<k> on first use: the entry point of a Lua package directory. */
static int l_package(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (lua_isnoneornil(L, 2)) lua_newtable(L);
  else luaL_checktype(L, 2, LUA_TTABLE), lua_pushvalue(L, 2);
  make_package(L, -1, name);
  return 1;
}

void mtl_new_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close) {
  if (luaL_newmetatable(L, name)) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    if (close) {
      lua_pushcfunction(L, close);
      lua_setfield(L, -2, "__gc");
      lua_pushcfunction(L, close);
      lua_setfield(L, -2, "__close");
    }
  }
  lua_pop(L, 1);
}

int luaopen_torch(lua_State *L) {
  lua_newtable(L); /* weak-keyed help table: function -> text */
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.help");

  lua_newtable(L);
  int torch_idx = lua_gettop(L);
  lua_newtable(L);
  int methods_idx = lua_gettop(L);
  lua_pushvalue(L, methods_idx);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.methods");

  mtl_open_tensor(L, torch_idx, methods_idx);
  mtl_open_options(L, torch_idx, methods_idx); /* the Lua parts below use these two */
  mtl_open_public(L, torch_idx, methods_idx);
  mtl_open_create(L, torch_idx, methods_idx);
  mtl_open_math(L, torch_idx, methods_idx);
  mtl_open_shape(L, torch_idx, methods_idx);
  mtl_open_index(L, torch_idx, methods_idx);
  mtl_open_reduce(L, torch_idx, methods_idx);
  mtl_open_linalg(L, torch_idx, methods_idx);
  mtl_open_random(L, torch_idx, methods_idx);
  mtl_open_print(L, torch_idx, methods_idx);
  mtl_open_pprint(L, torch_idx, methods_idx);
  mtl_open_misc(L, torch_idx, methods_idx);
  mtl_open_cuda(L, torch_idx, methods_idx);
  mtl_open_nn(L, torch_idx, methods_idx);
  mtl_open_vision(L, torch_idx, methods_idx);
  mtl_open_fft(L, torch_idx, methods_idx);
  mtl_open_attention(L, torch_idx, methods_idx);
  mtl_open_autograd(L, torch_idx, methods_idx);
  mtl_open_serialize(L, torch_idx, methods_idx);
  mtl_open_jit(L, torch_idx, methods_idx);
  mtl_open_profiler(L, torch_idx, methods_idx);
  mtl_open_autocast(L, torch_idx, methods_idx);
  mtl_open_amp(L, torch_idx, methods_idx);
  mtl_open_foreach(L, torch_idx, methods_idx);
  mtl_open_fused(L, torch_idx, methods_idx);
  mtl_open_complex(L, torch_idx, methods_idx);

  lua_pushvalue(L, methods_idx);
  lua_setfield(L, torch_idx, "Tensor");
  lua_pushstring(L, MT_VERSION);
  lua_setfield(L, torch_idx, "version");
  mtl_open_packages(L, torch_idx);
  make_package(L, torch_idx, "torch");
  lua_getfield(L, torch_idx, "cuda"); /* torch.cuda.amp */
  make_package(L, -1, "torch.cuda");
  lua_pop(L, 1);
  lua_newtable(L); /* torch.utils.data, torch.utils.tensorboard */
  lua_pushstring(L, "torch.utils -- utilities: torch.utils.data, torch.utils.tensorboard");
  lua_setfield(L, -2, "__help");
  make_package(L, -1, "torch.utils");
  lua_setfield(L, torch_idx, "utils");
  lua_pushcfunction(L, l_package);
  mtl_set_help(L, "torch._package(name[, t]) -- a table that loads the Lua modules name.<k> on first use");
  lua_setfield(L, torch_idx, "_package");
  lua_pushvalue(L, torch_idx);
  return 1;
}
