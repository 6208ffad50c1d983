/* ops.c -- the op registry table built from ops.def, and lookup by name.
 * Dispatch elsewhere indexes tables by mt_op; nothing switches on names. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mt.h"

_Static_assert(MT_NOPS < 32768, "op indices fit a short");

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

/* The ops in name order, for a binary search: registering the Lua
 * functions looks every one of them up (a linear scan cost startup 2 ms). */
static short by_name[MT_NOPS];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static int cmp_name(const void *a, const void *b) {
  return strcmp(mt_ops[*(const short *)a].name, mt_ops[*(const short *)b].name);
}

static void sort_names(void) {
  for (int i = 0; i < MT_NOPS; i++) by_name[i] = (short)i;
  qsort(by_name, MT_NOPS, sizeof *by_name, cmp_name);
}

int mt_op_find(const char *name) {
  pthread_once(&by_name_once, sort_names);
  int lo = 0, hi = MT_NOPS - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = strcmp(mt_ops[by_name[mid]].name, name);
    if (c == 0) return by_name[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}
