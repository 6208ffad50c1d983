/* l_index.c -- Lua bindings of the index ops (see mtl.h for the conventions). */
#include "mtl.h"

static const mtl_reg regs[] = {{NULL, NULL, 0, NULL}};

void mtl_open_index(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }

int mtl_index_get(lua_State *L) { return luaL_error(L, "indexing: not available yet"); }
int mtl_index_set(lua_State *L) { return luaL_error(L, "indexing: not available yet"); }
