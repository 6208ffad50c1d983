/* nms.c (cuda) -- launches nms.cu's two NMS kernels for tensor/nms.c: the
 * suppression bitmask (n x ceil(n / 64) words), then the in-order walk on
 * one block, which writes the kept positions and their count on the
 * device. Only the count comes to the host, to size the result (as
 * nonzero's does). */
#include <stdio.h>

#include "cuda_vision.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_nms_cu[];

#define WALK_SHARED 4096 /* as in nms.cu */

static dptr addr(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }

/* Launches the mask and walk kernels into mask, k (n kept slots), cnt. */
static mt_status launch(const mt_tensor *boxes, const mt_tensor *cls, const mt_tensor *order, double thr,
                        mt_tensor *mask, mt_tensor *k, mt_tensor *cnt, mt_tensor *scratch) {
  int dev = mt_tdevice(boxes).index;
  long long n = boxes->shape[0], words = (n + 63) / 64;
  bool f64 = boxes->dtype == MT_FLOAT64;
  char defs[128];
  snprintf(defs, sizeof defs, "#define T %s\n#define MUL(a, b) %s((a), (b))\n", f64 ? "double" : "float",
           f64 ? "__dmul_rn" : "__fmul_rn");
  void *fmask = NULL, *fwalk = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_nms_cu, "mt_nms_mask", &fmask);
  if (!st) st = mt_cuda_family(dev, defs, mt_cuda_nms_cu, "mt_nms_walk", &fwalk);
  dptr pb = addr(boxes), pc = addr(cls), pm = addr(mask), po = addr(order), pk = addr(k), pn = addr(cnt);
  dptr ps = addr(scratch);
  if (!st) {
    void *args[] = {&pb, &pc, &n, &words, &thr, &pm};
    st = mt_cuda_launch_grid(dev, fmask, words * words, 64, args, "nms");
  }
  if (!st) {
    void *args[] = {&pm, &n, &words, &po, &pk, &pn, &ps};
    st = mt_cuda_launch_grid(dev, fwalk, 1, 1024, args, "nms");
  }
  return st;
}

mt_status mt_cuda_nms(const mt_tensor *boxes, const mt_tensor *cls, const mt_tensor *order, double thr,
                      mt_tensor **keep) {
  mt_device d = mt_tdevice(boxes);
  int64_t n = boxes->shape[0], words = (n + 63) / 64, mshape[2] = {n, words}, one = 1;
  if (n == 0) {
    mt_tensor *r = NULL;
    mt_status st = mt_empty(&n, 1, MT_INT64, d, &r);
    return st ? st : mt_deliver("nms", r, keep);
  }
  if (words > 0 && n > INT64_MAX / 8 / words)
    return mt_fail(MT_ENOMEM, "nms: %lld boxes need too large a suppression mask", (long long)n);
  mt_tensor *mask = NULL, *k = NULL, *cnt = NULL, *scratch = NULL, *r = NULL;
  int64_t sw = words > WALK_SHARED ? words : 1;
  mt_status st = mt_empty(mshape, 2, MT_INT64, d, &mask);
  if (!st) st = mt_empty(&n, 1, MT_INT64, d, &k);
  if (!st) st = mt_empty(&one, 1, MT_INT64, d, &cnt);
  if (!st) st = mt_empty(&sw, 1, MT_INT64, d, &scratch);
  if (!st) st = launch(boxes, cls, order, thr, mask, k, cnt, scratch);
  mt_scalar v;
  if (!st) st = mt_item(cnt, &v);
  int64_t nk = st ? 0 : mt_scalar_i(v);
  if (!st) st = mt_as_strided(k, 1, &nk, &one, k->offset, &r);
  mt_release(mask), mt_release(k), mt_release(cnt), mt_release(scratch);
  if (st) return st;
  return mt_deliver("nms", r, keep);
}
