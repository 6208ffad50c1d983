/* nms.c (cuda) -- launches nms.cu's stages for tensor/nms.c: the ranking
 * of the scores (one chunk sort, then merge passes), the suppression
 * bitmask (n x ceil(n / 64) words) and the in-order walk on one block,
 * which writes the kept positions and their count on the device. Only the
 * count comes to the host, to size the result (as nonzero's does). */
#include <math.h>
#include <stdio.h>

#include "cuda_vision.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_nms_cu[];

#define WALK_SHARED 4096 /* as in nms.cu */
#define RANK_CHUNK 2048

static dptr addr(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }
static dptr at(const mt_tensor *t, size_t bytes) { return addr(t) + bytes; }

/* The threshold the mask kernel compares a float IoU with: the largest
 * float <= thr, so that ovr > it exactly when (double)ovr > thr. */
static double float_threshold(double thr) {
  float f = (float)thr;
  if ((double)f > thr) f = nextafterf(f, -INFINITY);
  return f;
}

static mt_status kernel(int dev, const char *defs, const char *name, void **fn) {
  return mt_cuda_family(dev, defs, mt_cuda_nms_cu, name, fn);
}

/* Sorts scores into the rank order; *order ends up as ixa or ixb (both n
 * ints, as keya/keyb are n keys). */
static mt_status rank(int dev, const char *defs, const mt_tensor *scores, int n, dptr keya, dptr ixa, dptr keyb,
                      dptr ixb, dptr *order) {
  void *fblock = NULL, *fmerge = NULL;
  mt_status st = kernel(dev, defs, "mt_nms_rank_block", &fblock);
  if (!st) st = kernel(dev, defs, "mt_nms_rank_merge", &fmerge);
  dptr ps = addr(scores);
  if (!st) {
    void *args[] = {&ps, &n, &keya, &ixa};
    st = mt_cuda_launch_grid(dev, fblock, (n + RANK_CHUNK - 1) / RANK_CHUNK, RANK_CHUNK / 2, args, "nms");
  }
  for (int w = RANK_CHUNK; !st && w < n; w *= 2) {
    void *args[] = {&keya, &ixa, &n, &w, &keyb, &ixb};
    st = mt_cuda_launch_grid(dev, fmerge, (n + 255) / 256, 256, args, "nms");
    dptr k = keya, i = ixa;
    keya = keyb, ixa = ixb, keyb = k, ixb = i;
  }
  *order = ixa;
  return st;
}

/* Runs the three stages into k (n kept slots) and cnt; scratch holds the
 * keys and positions (24 n bytes), then the walk's removed set if large. */
static mt_status launch(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *cls, double thr,
                        mt_tensor *mask, mt_tensor *scratch, mt_tensor *k, mt_tensor *cnt) {
  int dev = mt_tdevice(boxes).index, n = (int)boxes->shape[0], words = (n + 63) / 64;
  bool f64 = boxes->dtype == MT_FLOAT64;
  char defs[160];
  snprintf(defs, sizeof defs, "#define T %s\n#define MUL(a, b) %s((a), (b))\n#define S %s\n", f64 ? "double" : "float",
           f64 ? "__dmul_rn" : "__fmul_rn", scores->dtype == MT_FLOAT64 ? "double" : "float");
  size_t nn = (size_t)n;
  dptr order = 0;
  mt_status st = rank(dev, defs, scores, n, at(scratch, 0), at(scratch, 16 * nn), at(scratch, 8 * nn),
                      at(scratch, 20 * nn), &order);
  void *fmask = NULL, *fwalk = NULL;
  if (!st) st = kernel(dev, defs, "mt_nms_mask", &fmask);
  if (!st) st = kernel(dev, defs, "mt_nms_walk", &fwalk);
  double th = f64 ? thr : float_threshold(thr);
  dptr pb = addr(boxes), pc = addr(cls), pm = addr(mask), pk = addr(k), pn = addr(cnt), ps = at(scratch, 0);
  if (!st) {
    void *args[] = {&pb, &pc, &order, &n, &words, &th, &pm};
    st = mt_cuda_launch_grid(dev, fmask, (int64_t)((words + 1) / 2) * (words + 1), 64, args, "nms");
  }
  if (!st) { /* the walk's removed set, past WALK_SHARED words, reuses the keys' room (8 n bytes >= 8 words) */
    void *args[] = {&pm, &order, &n, &words, &pk, &pn, &ps};
    st = mt_cuda_launch_grid(dev, fwalk, 1, 1024, args, "nms");
  }
  return st;
}

mt_status mt_cuda_nms(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *cls, double thr,
                      mt_tensor **keep) {
  mt_device d = mt_tdevice(boxes);
  int64_t n = boxes->shape[0], words = (n + 63) / 64, mshape[2] = {n, words}, one = 1, sbytes = 24 * n;
  if (n == 0) {
    mt_tensor *r = NULL;
    mt_status st = mt_empty(&n, 1, MT_INT64, d, &r);
    return st ? st : mt_deliver("nms", r, keep);
  }
  if (n > INT32_MAX / 2 || n > INT64_MAX / 8 / words)
    return mt_fail(MT_ENOMEM, "nms: %lld boxes need too large a suppression mask", (long long)n);
  mt_tensor *mask = NULL, *k = NULL, *cnt = NULL, *scratch = NULL, *r = NULL;
  mt_status st = mt_empty(mshape, 2, MT_INT64, d, &mask);
  if (!st) st = mt_empty(&n, 1, MT_INT64, d, &k);
  if (!st) st = mt_empty(&one, 1, MT_INT64, d, &cnt);
  if (!st) st = mt_empty(&sbytes, 1, MT_UINT8, d, &scratch);
  if (!st) st = launch(boxes, scores, cls, thr, mask, scratch, k, cnt);
  mt_scalar v;
  if (!st) st = mt_item(cnt, &v);
  int64_t nk = st ? 0 : mt_scalar_i(v);
  if (!st) st = mt_as_strided(k, 1, &nk, &one, k->offset, &r);
  mt_release(mask), mt_release(k), mt_release(cnt), mt_release(scratch);
  if (st) return st;
  return mt_deliver("nms", r, keep);
}
