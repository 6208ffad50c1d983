/* flash.c (cuda) -- launches the flash attention family (flash.cu): one
 * member per (dtype, head dim, causal, mask kind, dropout, tile shape).
 * Blocks use more than 48 KB of dynamic shared memory, which the driver
 * grants only after cuFuncSetAttribute raises the kernel's limit; that entry
 * point is looked up here (the driver is already loaded by device.c). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "flash.h"
#include "mt_cuda.h"

extern const char mt_cuda_flash_cu[];

typedef unsigned long long dptr;

/* flash.cu's struct flash_params, field for field. */
typedef struct {
  dptr q, k, v, mask, moff;
  long long mrs, mcs;
  dptr out, lse, dout, D, dq, dk, dv;
  int L, S, hq, group, nb;
  float scale_log2;
  unsigned k0, k1;
  unsigned long long base, thr;
  float drop_scale;
} params;

static dptr P(const void *p) { return (dptr)(uintptr_t)p; }

/* Tile shape: warps per block, 16-row tiles per warp (forward), keys per
 * forward tile, queries per backward tile. MOONTORCH_FLASH_{NW,FM,BK} and
 * MOONTORCH_FLASH_BWD_{NW,BQ} override them (tuning). */
typedef struct {
  int nw, fm, bk, bq;
  bool wg; /* the forward on wgmma (mt_flash_fwd_wg, sm_90a) */
} shape;

static int env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  return s && atoi(s) > 0 ? atoi(s) : dflt;
}

/* Hopper (sm_90): wgmma is there (compiled for sm_90a). */
static bool hopper(int dev) {
  char arch[64];
  return !mt_cuda_arch(dev, arch, sizeof arch) && !strcmp(arch, "sm_90");
}

/* The wgmma kernels: on Hopper, head dims 64 and 128, unless
 * MOONTORCH_FLASH_WG=0 (then the mma.sync ones run everywhere). */
static bool use_wg(int dev, int64_t E) {
  const char *w = getenv("MOONTORCH_FLASH_WG");
  return E <= 128 && hopper(dev) && !(w && w[0] == '0');
}

/* Measured on an H100 (docs/cuda.md): wgmma with two warpgroups (128 query
 * rows) for E=128, one for E=64 and causal; mma.sync with two 16-row tiles
 * per warp elsewhere. */
static shape fwd_shape(int dev, int64_t E, bool causal) {
  shape s = {4, E == 256 ? 1 : 2, 32, 32, false};
  if (use_wg(dev, E)) {
    s = (shape){env_int("MOONTORCH_FLASH_WG_NW", E == 64 || causal ? 4 : 8), 1, 64, 32, true};
    return s;
  }
  s.nw = env_int("MOONTORCH_FLASH_NW", s.nw);
  s.fm = env_int("MOONTORCH_FLASH_FM", s.fm);
  s.bk = env_int("MOONTORCH_FLASH_BK", s.bk);
  return s;
}

static shape bwd_shape(int dev, int64_t E) {
  shape s = {4, 1, 64, E == 64 ? 64 : 32, false};
  if (use_wg(dev, E)) return (shape){8, 1, 64, 64, true};
  s.nw = env_int("MOONTORCH_FLASH_BWD_NW", s.nw);
  s.bq = env_int("MOONTORCH_FLASH_BWD_BQ", s.bq);
  return s;
}

static mt_status member(const mt_cuda_flash *f, shape s, const char *name, void **fn) {
  char defs[440];
  bool bf = f->dt == MT_BFLOAT16;
  snprintf(defs, sizeof defs,
           "#define TX %s\n#define BF16 %d\n#define HD %d\n#define NW %d\n#define FM %d\n#define BK %d\n#define BQ %d\n"
           "#define CAUSAL %d\n#define MASK %d\n#define DROPOUT %d\n#define PART %d\n#define WG %d\n"
           "#define MNSWAP %d\n%s",
           bf ? "mt_bf16" : "mt_half", bf, (int)f->E, s.nw, s.fm, s.bk, s.bq, f->causal, f->mask_kind, f->dropout_p > 0,
           strstr(name, "bwd") != NULL, s.wg, s.wg && env_int("MOONTORCH_FLASH_WG_SWAP", 0),
           s.wg ? "// MT_ARCH_90A\n" : "");
  return mt_cuda_family(f->dev, defs, mt_cuda_flash_cu, name, fn);
}

#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* Declared in flash.h (flash_f32.c uses it too). */
mt_status mt_cuda_allow_smem(int dev, void *fn, int bytes, const char *op) {
#ifdef MT_HIP
  (void)dev, (void)fn, (void)bytes, (void)op;
  return MT_OK;
#else
  typedef CUresult (*set_attr_fn)(CUfunction, int, int);
  static set_attr_fn set_attr;
  if (!set_attr) {
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h) *(void **)&set_attr = dlsym(h, "cuFuncSetAttribute");
    if (!set_attr) return mt_fail(MT_EDEVICE, "%s: cuFuncSetAttribute not found in the CUDA driver", op);
  }
  return mt_cuda_check(set_attr((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes), dev, op);
#endif
}

static mt_status launch(int dev, void *fn, unsigned gx, unsigned gy, unsigned gz, int threads, int smem, params *pp,
                        const char *op) {
  mt_status st = smem > 48 * 1024 ? mt_cuda_allow_smem(dev, fn, smem, op) : MT_OK;
  if (st || gx == 0 || gy == 0 || gz == 0) return st;
  void *args[] = {pp};
  mt_cuda_note_launch(dev, op);
  return mt_cuda_check(mt_cu.LaunchKernel((CUfunction)fn, gx, gy, gz, (unsigned)threads, 1, 1, (unsigned)smem,
                                       mt_cuda_current_stream(dev).handle, args, NULL),
                       dev, op);
}

static params params_of(const mt_cuda_flash *f) {
  params p = {P(f->q), P(f->k), P(f->v), P(f->mask), P(f->moff), f->mrs, f->mcs, P(f->out), P(f->lse), P(f->dout),
              P(f->D), P(f->dq_acc), P(f->dk), P(f->dv), (int)f->L, (int)f->S, (int)f->hq, (int)f->group, (int)f->nb,
              (float)(f->scale * 1.4426950408889634), (uint32_t)f->seed, (uint32_t)(f->seed >> 32), f->base,
              (unsigned long long)((1 - f->dropout_p) * 4294967296.0), (float)(1 / (1 - f->dropout_p))};
  return p;
}

bool mt_cuda_flash_available(int dev) {
#ifdef MT_HIP
  (void)dev;
  return false;
#else
  char arch[64];
  int cc = 0; /* mma.sync bf16/f16, ldmatrix and cp.async need sm_80 */
  return !mt_cuda_arch(dev, arch, sizeof arch) && sscanf(arch, "sm_%d", &cc) == 1 && cc >= 80;
#endif
}

mt_status mt_cuda_flash_fwd(const mt_cuda_flash *f) {
  const char *op = "scaled_dot_product_attention";
  if (!mt_cuda_flash_available(f->dev)) return mt_cuda_unsupported("the flash attention kernel on this GPU");
  shape s = fwd_shape(f->dev, f->E, f->causal);
  void *fn = NULL;
  mt_status st = member(f, s, s.wg ? "mt_flash_fwd_wg" : "mt_flash_fwd", &fn);
  if (st) return st;
  params p = params_of(f);
  int bq = 16 * s.nw * s.fm, smem = (bq + 4 * s.bk) * (int)f->E * 2;
  int64_t gy = f->nb < 65535 ? f->nb : 65535, gz = (f->nb + gy - 1) / gy;
  return launch(f->dev, fn, (unsigned)((f->L + bq - 1) / bq), (unsigned)gy, (unsigned)gz, 32 * s.nw, smem, &p, op);
}

mt_status mt_cuda_flash_bwd(const mt_cuda_flash *f) {
  const char *op = "scaled_dot_product_attention_backward";
  if (!mt_cuda_flash_available(f->dev)) return mt_cuda_unsupported("the flash attention kernel on this GPU");
  shape s = bwd_shape(f->dev, f->E);
  void *pre = NULL, *main = NULL, *post = NULL;
  mt_status st = member(f, s, "mt_flash_bwd_pre", &pre);
  if (!st) st = member(f, s, s.wg ? "mt_flash_bwd_wg" : "mt_flash_bwd", &main);
  if (!st) st = member(f, s, "mt_flash_bwd_post", &post);
  if (st) return st;
  params p = params_of(f);
  int64_t rows = f->nb * f->L, bkb = 16 * s.nw;
  int64_t pre_blocks = (rows + 7) / 8;
  if (pre_blocks > 65536) pre_blocks = 65536;
  if (!st) st = launch(f->dev, pre, (unsigned)pre_blocks, 1, 1, 256, 0, &p, op);
  if (s.wg) bkb = 64 * (s.nw / 4);
  int dsw = s.wg ? s.bq : s.bq + 8; /* dS^T row stride: padded for ldmatrix, swizzled for wgmma */
  int smem = (int)((2 * bkb * f->E + 4 * s.bq * f->E + bkb * dsw) * 2 + 4 * s.bq * 4);
  if (!st) st = launch(f->dev, main, (unsigned)f->nkv, (unsigned)((f->S + bkb - 1) / bkb), 1, 32 * s.nw, smem, &p, op);
  if (!st && f->dq) {
    dptr acc = P(f->dq_acc), dq = P(f->dq);
    long long n = rows * f->E;
    float scale = (float)f->scale;
    void *args[] = {&acc, &dq, &n, &scale};
    st = mt_cuda_launch_grid(f->dev, post, (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536, 256, args, op);
  }
  return st;
}
