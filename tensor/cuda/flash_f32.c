/* flash_f32.c (cuda) -- launches the float32 flash attention family
 * (flash_f32.cu): one member per (head dim, causal, direction, tile shape).
 * Tiles (measured on an H100, docs/cuda.md) may be overridden for tuning by
 * MOONTORCH_FLASH32_{BQ,BK,MINB} (forward) and MOONTORCH_FLASH32_{BKB,BQB,
 * BMINB,NBUF} (backward). */
#include <stdio.h>
#include <stdlib.h>

#include "cu_api.h"
#include "flash.h"
#include "mt_cuda.h"

extern const char mt_cuda_flash_f32_cu[];

typedef unsigned long long dptr;

/* flash_f32.cu's struct f32_params, field for field. */
typedef struct {
  dptr q, k, v, out, lse, dout, D, dq, dk, dv;
  int L, S, hq, group, nb;
  float scale, scale_log2;
} params;

static dptr P(const void *p) { return (dptr)(uintptr_t)p; }

static params params_of(const mt_cuda_flash *f) {
  return (params){P(f->q), P(f->k), P(f->v), P(f->out), P(f->lse), P(f->dout), P(f->D), P(f->dq), P(f->dk),
                  P(f->dv), (int)f->L, (int)f->S, (int)f->hq, (int)f->group, (int)f->nb, (float)f->scale,
                  (float)(f->scale * 1.4426950408889634)};
}

/* A tile size from the environment when it is a positive multiple of 16
 * (at most 128), else dflt. */
static int tile_env(const char *name, int dflt) {
  const char *s = getenv(name);
  int v = s ? atoi(s) : 0;
  return v > 0 && v <= 128 && v % 16 == 0 ? v : dflt;
}

static int small_env(const char *name, int dflt) {
  const char *s = getenv(name);
  int v = s ? atoi(s) : 0;
  return v >= 1 && v <= 4 ? v : dflt;
}

/* Tile shape: forward queries per block and keys per tile, backward keys
 * per block and queries per tile, the blocks per SM the registers are
 * budgeted for (minb forward, bminb backward), and the backward's query
 * tile buffers (2: the next tile is fetched during this one). */
typedef struct {
  int bq, bk, minb, bkb, bqb, bminb, nbuf;
} shape;

static shape shape_of(int64_t E) {
  shape s = E == 64 ? (shape){64, 64, 2, 64, 64, 2, 1} : (shape){128, 32, 1, 64, 64, 1, 1};
  s.bq = tile_env("MOONTORCH_FLASH32_BQ", s.bq), s.bk = tile_env("MOONTORCH_FLASH32_BK", s.bk);
  s.minb = small_env("MOONTORCH_FLASH32_MINB", s.minb);
  s.bkb = tile_env("MOONTORCH_FLASH32_BKB", s.bkb), s.bqb = tile_env("MOONTORCH_FLASH32_BQB", s.bqb);
  s.bminb = small_env("MOONTORCH_FLASH32_BMINB", s.bminb);
  s.nbuf = small_env("MOONTORCH_FLASH32_NBUF", s.nbuf) > 1 ? 2 : 1;
  return s;
}

static mt_status member(const mt_cuda_flash *f, shape s, int part, const char *name, void **fn) {
  char defs[220];
  snprintf(defs, sizeof defs,
           "#define HD %d\n#define BQ %d\n#define BK %d\n#define BKB %d\n#define BQB %d\n#define CAUSAL %d\n"
           "#define PART %d\n#define MINB %d\n#define NBUF %d\n",
           (int)f->E, part ? 0 : s.bq, part ? 0 : s.bk, part ? s.bkb : 0, part ? s.bqb : 0, f->causal, part,
           part ? s.bminb : s.minb, part ? s.nbuf : 0);
  return mt_cuda_family(f->dev, defs, mt_cuda_flash_f32_cu, name, fn);
}

static mt_status launch(int dev, void *fn, unsigned gx, unsigned gy, unsigned gz, int smem, params *pp,
                        const char *op) {
  mt_status st = smem > 48 * 1024 ? mt_cuda_allow_smem(dev, fn, smem, op) : MT_OK;
  if (st || gx == 0 || gy == 0 || gz == 0) return st;
  void *args[] = {pp};
  mt_cuda_note_launch(dev, op);
  return mt_cuda_check(mt_cu.LaunchKernel((CUfunction)fn, gx, gy, gz, 256, 1, 1, (unsigned)smem,
                                       mt_cuda_current_stream(dev).handle, args, NULL),
                       dev, op);
}

mt_status mt_cuda_flash_f32_fwd(const mt_cuda_flash *f) {
  const char *op = "scaled_dot_product_attention";
  shape s = shape_of(f->E);
  void *fn = NULL;
  mt_status st = member(f, s, 0, "mt_flash32_fwd", &fn);
  if (st) return st;
  params p = params_of(f);
  int qs = (int)f->E + 4, smem = (int)((s.bq * qs + 2 * s.bk * qs + s.bq * (s.bk + 16)) * 4);
  if (smem > 227 * 1024)
    return mt_fail(MT_EARG, "%s: float32 flash tiles of %d queries x %d keys need %d bytes of shared memory", op, s.bq,
                   s.bk, smem);
  int64_t gy = f->nb < 65535 ? f->nb : 65535, gz = (f->nb + gy - 1) / gy;
  return launch(f->dev, fn, (unsigned)((f->L + s.bq - 1) / s.bq), (unsigned)gy, (unsigned)gz, smem, &p, op);
}

mt_status mt_cuda_flash_f32_bwd(const mt_cuda_flash *f) {
  const char *op = "scaled_dot_product_attention_backward";
  shape s = shape_of(f->E);
  void *pre = NULL, *main = NULL;
  mt_status st = member(f, s, 1, "mt_flash32_bwd_pre", &pre);
  if (!st) st = member(f, s, 1, "mt_flash32_bwd", &main);
  if (st) return st;
  params p = params_of(f);
  int64_t blocks = (f->nb * f->L + 15) / 16; /* 16 rows of 16 lanes per block */
  if ((st = launch(f->dev, pre, (unsigned)(blocks < 65536 ? blocks : 65536), 1, 1, 0, &p, op))) return st;
  int qs = (int)f->E + 4;
  int smem = (int)((2 * s.bkb * qs + s.nbuf * 2 * s.bqb * qs + 2 * s.bkb * (s.bqb + 16) + s.nbuf * 2 * s.bqb) * 4);
  if (smem > 227 * 1024)
    return mt_fail(MT_EARG, "%s: float32 flash tiles of %d keys x %d queries (%d buffers) need %d bytes of shared memory",
                   op, s.bkb, s.bqb, s.nbuf, smem);
  return launch(f->dev, main, (unsigned)f->nkv, (unsigned)((f->S + s.bkb - 1) / s.bkb), 1, smem, &p, op);
}
