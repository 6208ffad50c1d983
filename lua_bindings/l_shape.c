/* l_shape.c -- Lua bindings of the shape ops (see mtl.h for the conventions). */
#include "mtl.h"

static const mtl_reg regs[] = {{NULL, NULL, 0, NULL}};

void mtl_open_shape(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
