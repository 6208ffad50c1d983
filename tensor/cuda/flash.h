/* flash.h (cuda) -- the flash attention kernels (flash.cu) as the engine
 * calls them (tensor/attention_cuda.c): device pointers to contiguous
 * tensors and the problem's sizes. Engine-internal. */
#ifndef MT_CUDA_FLASH_H
#define MT_CUDA_FLASH_H

#include "mt.h"

typedef struct mt_cuda_flash {
  int dev;
  mt_dtype dt;                  /* MT_BFLOAT16 or MT_FLOAT16 (MT_FLOAT32: flash_f32.c) */
  int64_t nb, nkv, hq, group;   /* q items, k/v items, q heads, q heads per k/v head */
  int64_t L, S, E;              /* E: head dim of q, k and v (64, 128; 256 forward only) */
  double scale;
  bool causal;
  int mask_kind;                /* 0 none, 1 bool, 2 additive (dt) */
  const void *mask;             /* element (b, i, j) at moff[b] + i * mrs + j * mcs */
  const int64_t *moff;          /* device array of nb offsets */
  int64_t mrs, mcs;
  double dropout_p;             /* > 0: Philox key `seed`, first block `base` */
  uint64_t seed, base;
  const void *q, *k, *v;
  void *out;                    /* forward result (nb, L, E); backward: the forward's */
  float *lse;                   /* (nb, L) */
  const void *dout;             /* backward */
  float *D, *dq_acc;            /* backward scratch: (nb, L) and (nb, L, E) */
  void *dq, *dk, *dv;           /* backward results */
} mt_cuda_flash;

/* False where the kernels cannot run: the HIP build (they are PTX) and
 * GPUs before compute capability 8.0. */
bool mt_cuda_flash_available(int dev);
/* out and lse from q, k, v. */
mt_status mt_cuda_flash_fwd(const mt_cuda_flash *f);
/* dq, dk, dv from dout, q, k, v, out and lse. */
mt_status mt_cuda_flash_bwd(const mt_cuda_flash *f);
/* Lets kernel fn use `bytes` of dynamic shared memory (above the default
 * 48 KB; flash.c). */
mt_status mt_cuda_allow_smem(int dev, void *fn, int bytes, const char *op);

/* The float32 kernels (flash_f32.cu, SIMT FMA): head dims 64 and 128, no
 * mask, no dropout; f->dt is MT_FLOAT32 and the backward's dq_acc unused
 * (dq itself is the zeroed accumulator). */
mt_status mt_cuda_flash_f32_fwd(const mt_cuda_flash *f);
mt_status mt_cuda_flash_f32_bwd(const mt_cuda_flash *f);

#endif
