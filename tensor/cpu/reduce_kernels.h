/* reduce_kernels.h -- CPU kernels of the primitive reductions (engine-
 * internal). A kernel folds contiguous elements of one dtype into an
 * accumulator: a double for floating dtypes, an int64 for integers and
 * bool, plus an index for the arg kinds. float16/bfloat16 have no kernels
 * (callers convert to float32 first). */
#ifndef MT_CPU_REDUCE_KERNELS_H
#define MT_CPU_REDUCE_KERNELS_H

#include "mt.h"

typedef enum mt_rkind { MT_R_SUM, MT_R_PROD, MT_R_MAX, MT_R_MIN, MT_R_ARGMAX, MT_R_ARGMIN, MT_R_NKINDS } mt_rkind;

typedef struct mt_racc {
  union {
    double f;
    int64_t i;
  } v;
  int64_t idx; /* arg kinds: position of the extreme, -1 while empty */
} mt_racc;

typedef struct mt_rkernel {
  bool is_float;    /* accumulates in v.f (else v.i) */
  mt_racc identity; /* the start value of every accumulator */
  /* Folds x[0..n) into *a; arg kinds record positions counted from x. */
  void (*row)(const void *x, int64_t n, mt_racc *a);
  /* *a = *a (+) *b where b's elements follow a's. */
  void (*combine)(mt_racc *a, const mt_racc *b);
  /* acc[j] = acc[j] (+) x[j] for j < n; acc holds doubles or int64s as
   * is_float says. NULL for the arg kinds. */
  void (*col)(void *acc, const void *x, int64_t n);
} mt_rkernel;

/* The kernel of (kind, dtype), or NULL (float16, bfloat16). */
const mt_rkernel *mt_cpu_reduce_kernel(mt_rkind kind, mt_dtype dt);

#endif
