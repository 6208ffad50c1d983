/* norm_kernels.h -- CPU loops of batch, layer and group normalization
 * (norm_kernels.c; engine-internal). Contiguous float32/float64 buffers;
 * statistics and sums in double; parameters (w, b) may be NULL. */
#ifndef MT_CPU_NORM_KERNELS_H
#define MT_CPU_NORM_KERNELS_H

#include "mt.h"

/* Batch norm: x is (N, C, S). Per channel c: mean and invstd (in double,
 * C entries each). stats: compute them (training) into mean/invstd; else
 * they are given. y = (x - mean) * invstd * w + b. */
mt_status mt_cpu_bn_fwd(mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const void *w, const void *b,
                        bool stats, double eps, double *mean, double *var, double *invstd, void *y);
/* gx (may be NULL), gw and gb (double, C entries; may be NULL). */
mt_status mt_cpu_bn_bwd(mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *gy, const void *x, const void *w,
                        const double *mean, const double *invstd, bool training, void *gx, double *gw, double *gb);

/* Row norms (layer and group norm): R rows of L contiguous elements; row
 * r's element j uses parameter ((r % G) * Cg + j / S) (layer norm: G = 1,
 * S = 1). mean/rstd: R doubles, written. */
typedef struct mt_rows_problem {
  int64_t R, L, G, Cg, S;
} mt_rows_problem;
mt_status mt_cpu_rows_fwd(mt_dtype dt, const mt_rows_problem *p, const void *x, const void *w, const void *b,
                          double eps, double *mean, double *rstd, void *y);
/* gx may be NULL; gw/gb (double, G*Cg entries) may be NULL. */
mt_status mt_cpu_rows_bwd(mt_dtype dt, const mt_rows_problem *p, const void *gy, const void *x, const void *w,
                          const double *mean, const double *rstd, void *gx, double *gw, double *gb);

#endif
