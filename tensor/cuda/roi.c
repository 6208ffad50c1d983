/* roi.c (cuda) -- launches roi.cu's RoI Align and RoI pooling kernels for
 * tensor/roi.c, which checked the arguments and made every operand
 * contiguous in float32 or float64. */
#include <stdio.h>
#include <string.h>

#include "cuda_vision.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_roi_cu[];

#define ROI_CPT 8 /* as in roi.cu */

/* Matches struct mt_rgeo in roi.cu. */
typedef struct rgeo {
  int64_t K, N, C, H, W, ph, pw, sr;
  int32_t aligned, small;
  double scale;
} rgeo;

static dptr addr(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }

mt_status mt_cuda_roi(int kind, const mt_roi_geo *g, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                      mt_tensor *argmax) {
  static const char *const names[] = {"mt_roi_align_fwd", "mt_roi_align_bwd", "mt_roi_pool_fwd", "mt_roi_pool_bwd"};
  static const char *const ops[] = {"roi_align", "roi_align_backward", "roi_pool", "roi_pool_backward"};
  int dev = mt_tdevice(a).index;
  rgeo r = {g->K, g->N, g->C, g->H, g->W, g->ph, g->pw, g->sr, g->aligned, 0, g->scale};
  mt_status st = kind == 1 || kind == 3 ? mt_fill_(y, mt_sint(0)) : MT_OK;
  int64_t n = g->K * g->C * g->ph * g->pw;
  if (st || n == 0) return st;
  char defs[128];
  bool f64 = a->dtype == MT_FLOAT64;
  snprintf(defs, sizeof defs, "#define T %s\n#define MUL(a, b) %s((a), (b))\n", f64 ? "double" : "float",
           f64 ? "__dmul_rn" : "__fmul_rn");
  void *fn = NULL;
  if ((st = mt_cuda_family(dev, defs, mt_cuda_roi_cu, names[kind], &fn))) return st;
  dptr pa = addr(a), pb = addr(b), py = addr(y), pi = addr(argmax);
  void *args3[] = {&pa, &pb, &py, &r};
  void *args4[] = {&pa, &pb, &py, &pi, &r};
  /* RoI Align: a thread per ROI_CPT channels of a bin */
  if (kind <= 1) n = g->K * ((g->C + ROI_CPT - 1) / ROI_CPT) * g->ph * g->pw;
  r.small = n <= UINT32_MAX;
  int64_t blocks = (n + 255) / 256;
  return mt_cuda_launch_grid(dev, fn, blocks < 65536 ? blocks : 65536, 256, kind == 2 ? args4 : args3, ops[kind]);
}
