/* l_linalg.c -- Lua bindings of the linalg ops (see mtl.h for the conventions). */
#include "mtl.h"

static const mtl_reg regs[] = {{NULL, NULL, 0, NULL}};

void mtl_open_linalg(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
