/* ops.c -- the op registry table built from ops.def, and lookup by name.
 * Dispatch elsewhere indexes tables by mt_op; nothing switches on names. */
#include <string.h>

#include "mt.h"

/* An elementwise row's expression as text; MT_NOEXPR (no kernel) is NULL. */
#define EXPR_TEXT(e) (sizeof(#e) == sizeof("MT_NOEXPR") && #e[0] == 'M' ? NULL : #e)

const mt_opinfo mt_ops[MT_NOPS] = {
#define MT_OP(name, kind, arity, flags, dev, ac, jit, entry) {#name, kind, arity, flags, dev, ac, jit, NULL, NULL, NULL, NULL, 0},
#define MT_UNARY_P(name, flags, ac, jit, param, dflt, fexpr, iexpr, help)                                              \
  {#name, MT_K_UNARY, 1, flags, MT_DEV_CUDA, ac, jit, EXPR_TEXT(fexpr), EXPR_TEXT(iexpr), help, param, dflt},
#define MT_BINARY(name, flags, ac, jit, fexpr, iexpr, help)                                                            \
  {#name, MT_K_BINARY, 2, flags, MT_DEV_CUDA, ac, jit, EXPR_TEXT(fexpr), EXPR_TEXT(iexpr), help, NULL, 0},
#define MT_COMPARE(name, flags, ac, expr, help)                                                                        \
  {#name, MT_K_COMPARE, 2, flags, MT_DEV_CUDA, ac, MT_J(EXPR, SAME), #expr, #expr, help, NULL, 0},
#include "ops.def"
#undef MT_OP
#undef MT_UNARY_P
#undef MT_BINARY
#undef MT_COMPARE
};

int mt_op_find(const char *name) {
  for (int i = 0; i < MT_NOPS; i++)
    if (strcmp(mt_ops[i].name, name) == 0) return i;
  return -1;
}
