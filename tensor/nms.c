/* nms.c -- non-maximum suppression (vision.h): checks, then on the CPU one
 * stable sort of the scores (equal scores keep their input order) and the
 * greedy pass (cpu/nms_kernels.c); on the GPU (cuda/nms.c) both, with the
 * same order. The result holds 1-based positions into the input boxes. */
#include <stdio.h>

#include "cuda/cuda_vision.h"
#include "cpu/nms_kernels.h"
#include "index.h"
#include "reduce.h"
#include "vision.h"

static char *shp(const int64_t *s, int nd, char *buf) { return mt_shape_str(s, nd, buf, 96); }

static mt_status check(const char *op, const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *idxs,
                       double thr) {
  char a[96], b[96];
  if (boxes->ndim != 2 || boxes->shape[1] != 4)
    return mt_fail(MT_ESHAPE, "%s: boxes must be an N x 4 tensor (x1, y1, x2, y2), got %s", op,
                   shp(boxes->shape, boxes->ndim, a));
  if (scores->ndim != 1 || scores->shape[0] != boxes->shape[0])
    return mt_fail(MT_ESHAPE, "%s: scores must be a 1-D tensor of N = %lld scores, got %s", op,
                   (long long)boxes->shape[0], shp(scores->shape, scores->ndim, b));
  if (!mt_is_floating((mt_dtype)boxes->dtype) || !mt_is_floating((mt_dtype)scores->dtype))
    return mt_fail(MT_EDTYPE, "%s: boxes and scores must be floating, got %s and %s", op,
                   mt_dtype_name((mt_dtype)boxes->dtype), mt_dtype_name((mt_dtype)scores->dtype));
  if (!mt_same_device(mt_tdevice(boxes), mt_tdevice(scores)))
    return mt_fail(MT_EDEVICE, "%s: boxes and scores must be on the same device", op);
  if (idxs && (idxs->ndim != 1 || idxs->shape[0] != boxes->shape[0]))
    return mt_fail(MT_ESHAPE, "%s: idxs must be a 1-D tensor of N = %lld category ids, got %s", op,
                   (long long)boxes->shape[0], shp(idxs->shape, idxs->ndim, b));
  if (idxs && (mt_is_floating((mt_dtype)idxs->dtype) || !mt_same_device(mt_tdevice(idxs), mt_tdevice(boxes))))
    return mt_fail(MT_EDTYPE, "%s: idxs must be an integer tensor on the boxes' device, got %s", op,
                   mt_dtype_name((mt_dtype)idxs->dtype));
  if (thr != thr) return mt_fail(MT_EARG, "%s: iou_threshold is NaN", op);
  return MT_OK;
}

/* The rows of t (contiguous, dtype dt) in the order `order` (1-based). */
static mt_status gather(const mt_tensor *t, mt_dtype dt, const mt_tensor *order, mt_tensor **out) {
  mt_tensor *c = NULL, *s = NULL;
  mt_status st = mt_to_dtype(t, dt, false, &c);
  if (!st) st = mt_index_select(c, 0, order, &s);
  if (!st) st = mt_contiguous(s, out);
  mt_release(c), mt_release(s);
  return st;
}

/* CPU: the kept rows' original positions, in rank order. */
static mt_status nms_cpu(const mt_tensor *sb, const mt_tensor *sc, const mt_tensor *order, double thr,
                         mt_tensor **keep) {
  int64_t n = sb->shape[0], nk = 0;
  mt_tensor *flags = NULL, *r = NULL;
  mt_status st = mt_empty(&n, 1, MT_UINT8, mt_tdevice(sb), &flags);
  if (!st) st = mt_cpu_nms((mt_dtype)sb->dtype, mt_data(sb), sc ? (const int64_t *)mt_data(sc) : NULL, n, thr,
                           (uint8_t *)mt_data(flags));
  const uint8_t *f = st ? NULL : (const uint8_t *)mt_data(flags);
  for (int64_t i = 0; f && i < n; i++) nk += f[i];
  if (!st) st = mt_empty(&nk, 1, MT_INT64, mt_tdevice(sb), &r);
  if (!st) {
    const int64_t *o = (const int64_t *)mt_data(order);
    int64_t *k = (int64_t *)mt_data(r);
    for (int64_t i = 0, j = 0; i < n; i++)
      if (f[i]) k[j++] = o[i];
  }
  mt_release(flags);
  if (st) return st;
  return mt_deliver("nms", r, keep);
}

/* CUDA: boxes and scores in their compute dtypes, classes int64, all
 * contiguous; the GPU ranks them itself (cuda/nms.c). */
static mt_status nms_cuda(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *idxs, double thr,
                          mt_tensor **keep) {
  mt_dtype cdt = boxes->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  mt_dtype sdt = scores->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32; /* exact: the order is kept */
  mt_tensor *t[3] = {NULL, NULL, NULL}, *c[3] = {NULL, NULL, NULL};
  mt_status st = mt_to_dtype(boxes, cdt, false, &t[0]);
  if (!st) st = mt_to_dtype(scores, sdt, false, &t[1]);
  if (!st && idxs) st = mt_to_dtype(idxs, MT_INT64, false, &t[2]);
  for (int i = 0; i < 3 && !st; i++)
    if (t[i]) st = mt_contiguous(t[i], &c[i]);
  if (!st) st = mt_cuda_nms(c[0], c[1], c[2], thr, keep);
  for (int i = 0; i < 3; i++) mt_release(t[i]), mt_release(c[i]);
  return st;
}

mt_status mt_nms(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *idxs, double iou_threshold,
                 mt_tensor **keep) {
  const char *op = idxs ? "batched_nms" : "nms";
  mt_status st = check(op, boxes, scores, idxs, iou_threshold);
  if (st) return st;
  if (mt_tdevice(boxes).type == MT_CUDA) return nms_cuda(boxes, scores, idxs, iou_threshold, keep);
  mt_dtype cdt = boxes->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  mt_tensor *order = NULL, *oc = NULL, *sb = NULL, *sc = NULL;
  st = mt_argsort(scores, 0, true, true, &order);
  if (!st) st = mt_contiguous(order, &oc);
  if (!st) st = gather(boxes, cdt, oc, &sb);
  if (!st && idxs) st = gather(idxs, MT_INT64, oc, &sc);
  if (!st) st = nms_cpu(sb, sc, oc, iou_threshold, keep);
  mt_release(order), mt_release(oc), mt_release(sb), mt_release(sc);
  return st;
}
