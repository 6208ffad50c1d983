/* norm.c (cuda) -- batch, layer and group normalization on CUDA tensors
 * through the kernel family norm.cu. tensor/norm.c checks the arguments,
 * converts to the compute dtype (float32 or float64, contiguous) and makes
 * the results on the device; these functions take the same device pointers
 * the CPU loops take host pointers (cpu/norm_kernels.h) and launch one block
 * per channel or row. */
#include <stdio.h>

#include "../cpu/norm_kernels.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_norm_cu[];

static mt_status kernel(int dev, mt_dtype dt, const char *name, void **fn) {
  char defs[64];
  snprintf(defs, sizeof defs, "#define T %s\n", dt == MT_FLOAT64 ? "double" : "float");
  return mt_cuda_family(dev, defs, mt_cuda_norm_cu, name, fn);
}

static dptr P(const void *p) { return (dptr)(uintptr_t)p; }

/* Threads per block for n elements per block (a power of two, 32 to 256). */
static int threads_for(int64_t n) {
  int t = 32;
  while (t < 256 && t < n) t *= 2;
  return t;
}

static int64_t grid(int64_t blocks) { return blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535; }

mt_status mt_cuda_bn_fwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const void *w,
                         const void *b, bool stats, double eps, double *mean, double *var, double *invstd, void *y) {
  void *fn = NULL;
  mt_status st = kernel(dev, dt, "mt_bn_fwd", &fn);
  if (st || C == 0) return st;
  dptr px = P(x), pw = P(w), pb = P(b), pm = P(mean), pv = P(var), pi = P(invstd), py = P(y);
  long long n = N, c = C, s = S;
  int sflag = stats;
  void *args[] = {&px, &pw, &pb, &n, &c, &s, &sflag, &eps, &pm, &pv, &pi, &py};
  return mt_cuda_launch_grid(dev, fn, grid(C), threads_for(N * S), args, "batch_norm");
}

mt_status mt_cuda_bn_bwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *gy, const void *x,
                         const void *w, const double *mean, const double *invstd, bool training, void *gx, double *gw,
                         double *gb) {
  void *fn = NULL;
  mt_status st = kernel(dev, dt, "mt_bn_bwd", &fn);
  if (st || C == 0) return st;
  dptr pg = P(gy), px = P(x), pw = P(w), pm = P(mean), pi = P(invstd), pgx = P(gx), pgw = P(gw), pgb = P(gb);
  long long n = N, c = C, s = S;
  int tr = training;
  void *args[] = {&pg, &px, &pw, &pm, &pi, &n, &c, &s, &tr, &pgx, &pgw, &pgb};
  return mt_cuda_launch_grid(dev, fn, grid(C), threads_for(N * S), args, "batch_norm_backward");
}

mt_status mt_cuda_bn_invstd(int dev, int64_t C, const double *var, double eps, double *invstd) {
  void *fn = NULL;
  mt_status st = kernel(dev, MT_FLOAT64, "mt_bn_invstd", &fn);
  if (st || C == 0) return st;
  dptr pv = P(var), pi = P(invstd);
  long long c = C;
  void *args[] = {&pv, &eps, &pi, &c};
  return mt_cuda_launch_grid(dev, fn, grid((C + 255) / 256), 256, args, "batch_norm");
}

mt_status mt_cuda_bn_running(int dev, int64_t C, double *run, const double *stat, double momentum, bool unbias,
                             double cnt) {
  void *fn = NULL;
  mt_status st = kernel(dev, MT_FLOAT64, "mt_bn_running", &fn);
  if (st || C == 0) return st;
  dptr pr = P(run), ps = P(stat);
  long long c = C;
  int u = unbias;
  void *args[] = {&pr, &ps, &c, &momentum, &u, &cnt};
  return mt_cuda_launch_grid(dev, fn, grid((C + 255) / 256), 256, args, "batch_norm");
}

mt_status mt_cuda_rows_fwd(int dev, mt_dtype dt, const struct mt_rows_problem *p, const void *x, const void *w,
                           const void *b, double eps, double *mean, double *rstd, void *y) {
  void *fn = NULL;
  mt_status st = kernel(dev, dt, "mt_rows_fwd", &fn);
  if (st || p->R == 0) return st;
  dptr px = P(x), pw = P(w), pb = P(b), pm = P(mean), pr = P(rstd), py = P(y);
  long long R = p->R, L = p->L, G = p->G, Cg = p->Cg, S = p->S;
  void *args[] = {&px, &pw, &pb, &R, &L, &G, &Cg, &S, &eps, &pm, &pr, &py};
  return mt_cuda_launch_grid(dev, fn, grid(R), threads_for(L), args, "layer_norm");
}

mt_status mt_cuda_rows_bwd(int dev, mt_dtype dt, const struct mt_rows_problem *p, const void *gy, const void *x,
                           const void *w, const double *mean, const double *rstd, void *gx, double *gw, double *gb) {
  void *fn = NULL;
  mt_status st = MT_OK;
  dptr pg = P(gy), px = P(x), pw = P(w), pm = P(mean), pr = P(rstd), pgx = P(gx), pgw = P(gw), pgb = P(gb);
  long long R = p->R, L = p->L, G = p->G, Cg = p->Cg, S = p->S;
  if (gx && R > 0) {
    void *args[] = {&pg, &px, &pw, &pm, &pr, &R, &L, &G, &Cg, &S, &pgx};
    if (!(st = kernel(dev, dt, "mt_rows_bwd", &fn)))
      st = mt_cuda_launch_grid(dev, fn, grid(R), threads_for(L), args, "layer_norm_backward");
  }
  if (!st && (gw || gb) && G * Cg > 0) {
    void *args[] = {&pg, &px, &pm, &pr, &R, &L, &G, &Cg, &S, &pgw, &pgb};
    if (!(st = kernel(dev, dt, "mt_rows_param", &fn)))
      st = mt_cuda_launch_grid(dev, fn, grid(G * Cg), threads_for(R / G * S), args, "layer_norm_backward");
  }
  return st;
}
