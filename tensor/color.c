/* color.c -- torch.vision's color ops in the engine (vision.h): the color
 * jitter as one op (checks the images, the per-image factors and step
 * orders, reads them on the host into a plan for cpu/color_kernels.c) and
 * histogram equalization (cpu/equalize_kernels.c). CPU only: the Lua
 * package takes CUDA images op by op. No pixel math here. */
#include <stdlib.h>

#include "cpu/color_kernels.h"
#include "cpu/equalize_kernels.h"
#include "vision.h"

static const char *const STEP[] = {"none", "brightness", "contrast", "saturation", "hue"};

static char *shp(const mt_tensor *t, char *buf) { return mt_shape_str(t->shape, t->ndim, buf, 96); }

/* x [N, 3, H, W] uint8 or float32 on the CPU; factors [N, 4] floating;
 * order [N, K] int64 with 1 <= K <= 4 */
static mt_status check(const char *op, const mt_tensor *x, const mt_tensor *factors, const mt_tensor *order) {
  char a[96];
  if (x->ndim != 4 || x->shape[1] != 3)
    return mt_fail(MT_ESHAPE, "%s: expected RGB images [N, 3, H, W], got shape %s", op, shp(x, a));
  if (x->dtype != MT_UINT8 && x->dtype != MT_FLOAT32)
    return mt_fail(MT_EDTYPE, "%s: expected uint8 or float32 images, got %s", op, mt_dtype_name((mt_dtype)x->dtype));
  const mt_tensor *ts[3] = {x, factors, order};
  for (int k = 0; k < 3; k++)
    if (mt_tdevice(ts[k]).type != MT_CPU)
      return mt_fail(MT_EDEVICE, "%s: runs on the CPU only (CUDA images go op by op)", op);
  int64_t n = x->shape[0];
  if (factors->ndim != 2 || factors->shape[0] != n || factors->shape[1] != 4 ||
      !mt_is_floating((mt_dtype)factors->dtype))
    return mt_fail(MT_ESHAPE,
                   "%s: factors must be a floating tensor [%lld, 4] (brightness, contrast, saturation, "
                   "hue per image), got %s of shape %s",
                   op, (long long)n, mt_dtype_name((mt_dtype)factors->dtype), shp(factors, a));
  if (order->ndim != 2 || order->shape[0] != n || order->shape[1] < 1 || order->shape[1] > 4 ||
      order->dtype != MT_INT64)
    return mt_fail(MT_ESHAPE,
                   "%s: order must be an int64 tensor [%lld, K] with K in 1..4 (step codes per image), "
                   "got %s of shape %s",
                   op, (long long)n, mt_dtype_name((mt_dtype)order->dtype), shp(order, a));
  return MT_OK;
}

/* image i's steps from its order row o (k codes) and factor row f: codes
 * in 0..4 (0: no step), each at most once, factors in range */
static mt_status read_image(const char *op, int64_t i, const int64_t *o, int64_t k, const double *f, mt_cj_image *im) {
  im->nsteps = 0, im->split = -1, im->term = 0;
  bool seen[5] = {false};
  for (int64_t j = 0; j < k; j++) {
    int64_t c = o[j];
    if (c < 0 || c > 4)
      return mt_fail(MT_EARG,
                     "%s: image %lld: step code %lld is not one of 0 (none), 1 (brightness), 2 (contrast), "
                     "3 (saturation), 4 (hue)",
                     op, (long long)i + 1, (long long)c);
    if (c == 0) continue;
    if (seen[c]) return mt_fail(MT_EARG, "%s: image %lld: the order lists %s twice", op, (long long)i + 1, STEP[c]);
    seen[c] = true;
    double v = f[c - 1];
    bool ok = c == MT_CJ_HUE ? v >= -0.5 && v <= 0.5 : v >= 0;
    if (!ok)
      return mt_fail(MT_EARG, "%s: image %lld: the %s factor must be %s, got %g", op, (long long)i + 1, STEP[c],
                     c == MT_CJ_HUE ? "in [-0.5, 0.5]" : "a non-negative number", v);
    if (c == MT_CJ_CONTRAST) im->split = im->nsteps;
    im->steps[im->nsteps++] = (int8_t)c;
    im->f[c] = (float)v, im->om[c] = (float)(1.0 - v);
  }
  if (im->split < 0) im->split = im->nsteps;
  return MT_OK;
}

/* the plan's images from factors and order (read on the host) */
static mt_status read_images(const char *op, const mt_tensor *factors, const mt_tensor *order, int64_t n,
                             mt_cj_image *img) {
  mt_tensor *fd = NULL, *fc = NULL, *oc = NULL;
  mt_status st = mt_to_dtype(factors, MT_FLOAT64, false, &fd);
  if (!st) st = mt_contiguous(fd, &fc);
  if (!st) st = mt_contiguous(order, &oc);
  int64_t k = order->shape[1];
  for (int64_t i = 0; i < n && !st; i++)
    st = read_image(op, i, (const int64_t *)(void *)mt_data(oc) + i * k, k, (const double *)(void *)mt_data(fc) + i * 4,
                    &img[i]);
  mt_release(fd), mt_release(fc), mt_release(oc);
  return st;
}

mt_status mt_color_jitter(const mt_tensor *x, const mt_tensor *factors, const mt_tensor *order, mt_tensor **out) {
  const char *op = "color_jitter";
  mt_status st = check(op, x, factors, order);
  if (st) return st;
  int64_t n = x->shape[0], h = x->shape[2], w = x->shape[3];
  mt_tensor *xc = NULL, *y = NULL;
  mt_cj_image *img = malloc(sizeof(mt_cj_image) * (size_t)(n + 1));
  double *rowsum = malloc(sizeof(double) * (size_t)(n * h + 1));
  if (!img || !rowsum) st = mt_fail(MT_ENOMEM, "%s: out of memory", op);
  if (!st) st = read_images(op, factors, order, n, img);
  /* rows must hold their pixels contiguously; any other layout is copied */
  if (!st) st = x->strides[3] == 1 || w <= 1 ? (xc = mt_retain((mt_tensor *)x), MT_OK) : mt_contiguous(x, &xc);
  if (!st) st = mt_empty(x->shape, 4, (mt_dtype)x->dtype, mt_cpu(), &y);
  if (!st && n * h * w > 0) {
    mt_cj_plan p = {.n = n,
                    .h = h,
                    .w = w,
                    .u8 = x->dtype == MT_UINT8,
                    .src = mt_data(xc),
                    .sn = xc->strides[0],
                    .sc = xc->strides[1],
                    .sh = xc->strides[2],
                    .dst = mt_data(y),
                    .img = img,
                    .rowsum = rowsum};
    st = mt_cpu_color_jitter(&p);
  }
  free(img), free(rowsum);
  mt_release(xc);
  if (st) {
    mt_release(y);
    return st;
  }
  return mt_deliver(op, y, out);
}

/* the stride between the planes [H, W] of x when its leading dims step
 * through memory evenly (a view [P, H, W] exists), else -1 */
static int64_t plane_stride(const mt_tensor *x) {
  int64_t ps = x->shape[x->ndim - 2] * x->strides[x->ndim - 2];
  for (int d = x->ndim - 3; d >= 0; d--) {
    if (x->shape[d] == 1) continue;
    if (x->strides[d] != ps) return -1;
    ps = x->strides[d] * x->shape[d];
  }
  for (int d = x->ndim - 3; d >= 0; d--)
    if (x->shape[d] != 1) return x->strides[d];
  return x->shape[x->ndim - 2] * x->strides[x->ndim - 2];
}

mt_status mt_image_equalize(const mt_tensor *x, mt_tensor **out) {
  const char *op = "image_equalize";
  char a[96];
  if (x->ndim < 2) return mt_fail(MT_ESHAPE, "%s: expected planes [..., H, W], got shape %s", op, shp(x, a));
  if (x->dtype != MT_UINT8)
    return mt_fail(MT_EDTYPE, "%s: expected a uint8 image, got %s", op, mt_dtype_name((mt_dtype)x->dtype));
  if (mt_tdevice(x).type != MT_CPU) return mt_fail(MT_EDEVICE, "%s: runs on the CPU only", op);
  int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1], planes = h * w > 0 ? mt_numel(x) / (h * w) : 0;
  mt_tensor *xc = NULL, *y = NULL;
  mt_status st = MT_OK;
  if ((x->strides[x->ndim - 1] == 1 || w <= 1) && plane_stride(x) >= 0)
    xc = mt_retain((mt_tensor *)x);
  else
    st = mt_contiguous(x, &xc);
  if (!st) st = mt_empty(x->shape, x->ndim, MT_UINT8, mt_cpu(), &y);
  if (!st && planes > 0) {
    mt_eq_plan p = {.planes = planes,
                    .h = h,
                    .w = w,
                    .src = (const uint8_t *)mt_data(xc),
                    .ps = plane_stride(xc),
                    .rs = xc->strides[xc->ndim - 2],
                    .dst = (uint8_t *)mt_data(y)};
    st = mt_cpu_equalize(&p);
  }
  mt_release(xc);
  if (st) {
    mt_release(y);
    return st;
  }
  return mt_deliver(op, y, out);
}
