/* equalize_kernels.c -- CPU loops of torch.vision's histogram equalization
 * (equalize_kernels.h): per uint8 plane a histogram (four interleaved
 * counts, so that runs of one value do not wait on each other), PIL's
 * lookup table, and the lookup; planes split over threads. Integer
 * arithmetic only, so the result is exact. No argument checks here. */
#include <string.h>

#include "equalize_kernels.h"

typedef struct eq_ctx {
  const mt_eq_plan *p;
} eq_ctx;

/* the histogram of plane rows (h rows of w pixels, row stride rs) */
static void histogram(const uint8_t *src, int64_t rs, int64_t h, int64_t w, int64_t *hist) {
  uint32_t part[4][256];
  memset(part, 0, sizeof part);
  memset(hist, 0, sizeof(int64_t) * 256);
  for (int64_t y = 0; y < h; y++) {
    const uint8_t *s = src + y * rs;
    int64_t x = 0;
    for (; x + 4 <= w; x += 4) part[0][s[x]]++, part[1][s[x + 1]]++, part[2][s[x + 2]]++, part[3][s[x + 3]]++;
    for (; x < w; x++) part[0][s[x]]++;
    if (y % 4096 == 4095 || y == h - 1) { /* before a count of 2^32 could wrap */
      for (int k = 0; k < 256; k++) hist[k] += (int64_t)part[0][k] + part[1][k] + part[2][k] + part[3][k];
      memset(part, 0, sizeof part);
    }
  }
}

/* lut[k] = (pixels below k + step / 2) / step, step = (pixels outside the
 * last non-empty bin) / 255 (PIL's rule); false when step is 0 (the plane
 * stays as it is) */
static bool lookup_table(const int64_t *hist, int64_t n, uint8_t *lut) {
  int last = 255;
  while (last > 0 && hist[last] == 0) last--;
  int64_t step = (n - hist[last]) / 255;
  if (step == 0) return false;
  int64_t below = 0;
  for (int k = 0; k < 256; k++) {
    int64_t v = (below + step / 2) / step;
    lut[k] = (uint8_t)(v > 255 ? 255 : v);
    below += hist[k];
  }
  return true;
}

/* planes [b, e) */
static void eq_planes(void *vc, int64_t b, int64_t e) {
  const mt_eq_plan *p = ((const eq_ctx *)vc)->p;
  int64_t hist[256];
  uint8_t lut[256];
  for (int64_t i = 0; i < e - b; i++) {
    int64_t pl = b + i;
    const uint8_t *src = p->src + pl * p->ps;
    uint8_t *dst = p->dst + pl * p->h * p->w;
    histogram(src, p->rs, p->h, p->w, hist);
    bool eq = lookup_table(hist, p->h * p->w, lut);
    for (int64_t y = 0; y < p->h; y++) {
      const uint8_t *s = src + y * p->rs;
      uint8_t *d = dst + y * p->w;
      if (eq)
        for (int64_t x = 0; x < p->w; x++) d[x] = lut[s[x]];
      else
        memcpy(d, s, (size_t)p->w);
    }
  }
}

mt_status mt_cpu_equalize(const mt_eq_plan *p) {
  eq_ctx c = {p};
  return mt_parallel_for(p->planes, 1, eq_planes, &c);
}
