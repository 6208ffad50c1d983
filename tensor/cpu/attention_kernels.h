/* attention_kernels.h -- CPU kernels of the flash attention ops (engine-
 * internal; attention.c prepares a job and runs items in parallel). q, k, v,
 * out and the gradients are contiguous (batch, rows, features) blocks; the
 * mask is read through per-item offsets and row/column strides. */
#ifndef MT_CPU_ATTENTION_KERNELS_H
#define MT_CPU_ATTENTION_KERNELS_H

#include "mt.h"

enum { MT_SDPA_NOMASK, MT_SDPA_ADDMASK, MT_SDPA_BOOLMASK };

typedef struct mt_sdpa_job {
  mt_dtype dt;              /* float32 or float64 */
  int64_t nb;               /* batch items of q (heads included) */
  int64_t hq, group;        /* q heads per outer index; q heads per k/v head */
  int64_t L, S, E, Ev;
  int64_t bq, bk;           /* tile sizes */
  double scale;
  bool causal;
  int mask_kind;
  const char *mask;         /* base of the mask's data */
  const int64_t *moff;      /* [nb] element offset of each item's mask plane */
  int64_t mrs, mcs;         /* mask row and column strides (elements; 0: broadcast) */
  const char *q, *k, *v;    /* inputs */
  char *out, *lse;          /* forward results; read by the backward */
  const char *dout;         /* backward: incoming gradient */
  char *dq, *dk, *dv, *D;   /* backward results; D[nb * L] = rowsum(dout * out) */
} mt_sdpa_job;

/* Bytes of scratch one call of the functions below needs. */
size_t mt_cpu_sdpa_scratch(const mt_sdpa_job *j);
/* Forward of query block qb of item b. */
void mt_cpu_sdpa_fwd(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch);
/* D for item b (all its rows). */
void mt_cpu_sdpa_rowdot(const mt_sdpa_job *j, int64_t b);
/* dk and dv of key block kb of k/v item kvb (sums over its GQA group). */
void mt_cpu_sdpa_bwd_kv(const mt_sdpa_job *j, int64_t kvb, int64_t kb, void *scratch);
/* dq of query block qb of item b. */
void mt_cpu_sdpa_bwd_q(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch);

#endif
