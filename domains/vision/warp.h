/* warp.h -- grid sampling of image batches on the CPU for the warps of
 * torch.vision.transforms.v2 (affine, rotate, perspective, elastic): the
 * values PyTorch's grid_sample gives (zeros outside, align_corners=false)
 * plus torchvision's fill rule, in one pass. Pure C: l_warp.c binds it. */
#ifndef MTD_WARP_H
#define MTD_WARP_H

#include <stdint.h>

#include "mt.h"

/* A sampling problem: img [b, c, h, w] (contiguous; uint8, float32 or
 * float64), grid [g, oh, ow, 2] (contiguous; float32, or float64 for
 * float64 images) of (x, y) in [-1, 1], g = 1 (one grid for all) or g
 * dividing b (grid i for images i * b/g ... (i+1) * b/g - 1); out [b, c,
 * oh, ow] of img's dtype (oh, ow: the grid's, or out's for coefficients). bilinear: 1, nearest: 0. fill: NULL, or c values
 * painted outside through the sampled mask of ones (nearest: where it is <
 * 0.5; bilinear: (v - fill) * mask + fill). uint8 results are rounded
 * (half to even) and clamped. */
typedef struct mtd_warp {
  const mt_tensor *img, *grid;
  mt_tensor *out;
  int bilinear;
  const double *fill;
  int kind; /* MTD_WARP_GRID: grid as above; otherwise grid holds g rows of coefficients */
} mtd_warp;

/* The sampling positions: a grid, or per output pixel (x, y) (0-based
 * column and row) from coefficient rows c of the grid's dtype, as
 * torchvision's grids compute them:
 *   AFFINE (6): u = x - (ow - 1) / 2, v = y - (oh - 1) / 2,
 *               gx = u c0 + v c1 + c2, gy = u c3 + v c4 + c5
 *   PERSPECTIVE (8): u = x + 1/2, v = y + 1/2, d = u c6 + v c7 + 1,
 *               gx = (u c0 + v c1 + c2) / d - 1, gy = (u c3 + v c4 + c5) / d - 1
 * (c0..c5 already divided by half the output width or height). The output
 * size is out's. */
enum { MTD_WARP_GRID = 0, MTD_WARP_AFFINE, MTD_WARP_PERSPECTIVE };

/* Samples p into p->out (warp.c: an AVX2 path for uint8 and float32 images
 * with float32 grids). */
mt_status mtd_warp_sample(const mtd_warp *p);

/* The same values from the plain scalar loop (warp_ref.c), kept for the
 * tests' comparison with the fast path. */
mt_status mtd_warp_sample_ref(const mtd_warp *p);

#endif
