/* ops.c -- the op registry table built from ops.def, and lookup by name.
 * Dispatch elsewhere indexes tables by mt_op; nothing switches on names. */
#include <string.h>

#include "mt.h"

const mt_opinfo mt_ops[MT_NOPS] = {
#define MT_OP(name, kind, arity, flags) {#name, kind, arity, flags},
#include "ops.def"
#undef MT_OP
};

int mt_op_find(const char *name) {
  for (int i = 0; i < MT_NOPS; i++)
    if (strcmp(mt_ops[i].name, name) == 0) return i;
  return -1;
}
