/* l_draw.c -- the rasterizer behind torch.vision.utils' drawing functions
 * (utils.lua checks the arguments): rectangle outlines of a width, filled
 * rectangles blended with an alpha, filled disks and wide lines, drawn in
 * place into a contiguous uint8 3 x H x W CPU tensor with the pixel rules
 * of PIL's ImageDraw where they are simple (rectangles exactly; disks and
 * wide lines by pixel centres, which can differ from PIL on edges).
 * Coordinates are 0-based pixel indices; everything is clipped.
 *   torch.vision._draw.rect(img, x0, y0, x1, y1, r, g, b, width)
 *   torch.vision._draw.fill_rect(img, x0, y0, x1, y1, r, g, b, alpha)
 *   torch.vision._draw.disk(img, cx, cy, radius, r, g, b)
 *   torch.vision._draw.line(img, x0, y0, x1, y1, r, g, b, width) */
#include <math.h>
#include <stdlib.h>

#include "mtl.h"

typedef struct {
  uint8_t *p;
  int64_t h, w;
} canvas;

static canvas check_canvas(lua_State *L, const char *fn) {
  mt_tensor *t = mtl_check_tensor(L, 1, fn);
  if (t->dtype != MT_UINT8 || t->ndim != 3 || t->shape[0] != 3 || !mt_is_contiguous(t) ||
      mt_tdevice(t).type != MT_CPU)
    luaL_error(L, "%s: expected a contiguous uint8 3 x H x W CPU tensor", fn);
  canvas c = {(uint8_t *)mt_data(t), t->shape[1], t->shape[2]};
  return c;
}

static int check_byte(lua_State *L, int idx) {
  lua_Integer v = luaL_checkinteger(L, idx);
  return v < 0 ? 0 : v > 255 ? 255 : (int)v;
}

/* sets pixel (x, y) to rgb when inside */
static void point(canvas *c, int64_t x, int64_t y, const int *rgb) {
  if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
  for (int k = 0; k < 3; k++) c->p[(k * c->h + y) * c->w + x] = (uint8_t)rgb[k];
}

/* the row y from x0 to x1 (either order), clipped */
static void hline(canvas *c, int64_t x0, int64_t y, int64_t x1, const int *rgb) {
  if (x0 > x1) {
    int64_t t = x0;
    x0 = x1, x1 = t;
  }
  if (y < 0 || y >= c->h || x1 < 0 || x0 >= c->w) return;
  if (x0 < 0) x0 = 0;
  if (x1 >= c->w) x1 = c->w - 1;
  for (int64_t x = x0; x <= x1; x++) point(c, x, y, rgb);
}

/* the column x from ya towards yb, yb itself excluded (as PIL's line of a
 * rectangle's sides, which can run upwards in boxes thinner than 2 widths) */
static void vline(canvas *c, int64_t x, int64_t ya, int64_t yb, const int *rgb) {
  int64_t lo = ya <= yb ? ya : yb + 1, hi = ya <= yb ? yb - 1 : ya;
  if (lo < 0) lo = 0;
  if (hi >= c->h) hi = c->h - 1;
  for (int64_t y = lo; y <= hi; y++) point(c, x, y, rgb);
}

/* rect(img, x0, y0, x1, y1, r, g, b, width): the outline as PIL draws it,
 * width nested one-pixel rectangles inside the corners (x0, y0), (x1, y1) */
static int l_rect(lua_State *L) {
  canvas c = check_canvas(L, "draw.rect");
  int64_t x0 = luaL_checkinteger(L, 2), y0 = luaL_checkinteger(L, 3);
  int64_t x1 = luaL_checkinteger(L, 4), y1 = luaL_checkinteger(L, 5);
  int rgb[3] = {check_byte(L, 6), check_byte(L, 7), check_byte(L, 8)};
  int64_t width = luaL_checkinteger(L, 9);
  if (y0 > y1) {
    int64_t t = y0;
    y0 = y1, y1 = t;
  }
  if (width < 1) width = 1;
  int64_t limit = c.h + c.w + 2; /* wider bands cover the picture anyway */
  if (width > limit) width = limit;
  for (int64_t i = 0; i < width; i++) {
    hline(&c, x0, y0 + i, x1, rgb);
    hline(&c, x0, y1 - i, x1, rgb);
    vline(&c, x1 - i, y0 + width, y1 - width + 1, rgb);
    vline(&c, x0 + i, y0 + width, y1 - width + 1, rgb);
  }
  return 0;
}

/* PIL's rounding division by 255 of a blend */
static uint8_t blend(int under, int over, int alpha) {
  int v = under * (255 - alpha) + over * alpha + 128;
  return (uint8_t)(((v >> 8) + v) >> 8);
}

/* fill_rect(img, x0, y0, x1, y1, r, g, b, alpha): every pixel of the
 * rectangle, corners included, blended with rgb at alpha (0..255) */
static int l_fill_rect(lua_State *L) {
  canvas c = check_canvas(L, "draw.fill_rect");
  int64_t x0 = luaL_checkinteger(L, 2), y0 = luaL_checkinteger(L, 3);
  int64_t x1 = luaL_checkinteger(L, 4), y1 = luaL_checkinteger(L, 5);
  int rgb[3] = {check_byte(L, 6), check_byte(L, 7), check_byte(L, 8)}, alpha = check_byte(L, 9);
  if (x0 > x1) {
    int64_t t = x0;
    x0 = x1, x1 = t;
  }
  if (y0 > y1) {
    int64_t t = y0;
    y0 = y1, y1 = t;
  }
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 >= c.w) x1 = c.w - 1;
  if (y1 >= c.h) y1 = c.h - 1;
  for (int k = 0; k < 3; k++)
    for (int64_t y = y0; y <= y1; y++)
      for (int64_t x = x0; x <= x1; x++) {
        uint8_t *q = &c.p[(k * c.h + y) * c.w + x];
        *q = blend(*q, rgb[k], alpha);
      }
  return 0;
}

/* disk(img, cx, cy, radius, r, g, b): the pixels (x, y) with
 * (x - cx)^2 + (y - cy)^2 <= (radius + 0.4)^2, which is PIL's filled circle
 * of the box [cx - radius, cx + radius] for radii up to 9 (PIL walks the
 * ellipse in integer steps; larger disks differ in a few edge pixels) */
static int l_disk(lua_State *L) {
  canvas c = check_canvas(L, "draw.disk");
  int64_t cx = luaL_checkinteger(L, 2), cy = luaL_checkinteger(L, 3), r = luaL_checkinteger(L, 4);
  int rgb[3] = {check_byte(L, 5), check_byte(L, 6), check_byte(L, 7)};
  if (r < 0) return 0;
  double lim = (r + 0.4) * (r + 0.4);
  int64_t ylo = cy - r < 0 ? 0 : cy - r, yhi = cy + r >= c.h ? c.h - 1 : cy + r;
  int64_t xlo = cx - r < 0 ? 0 : cx - r, xhi = cx + r >= c.w ? c.w - 1 : cx + r;
  for (int64_t y = ylo; y <= yhi; y++) {
    for (int64_t x = xlo; x <= xhi; x++) {
      double dx = (double)(x - cx), dy = (double)(y - cy);
      if (dx * dx + dy * dy <= lim) point(&c, x, y, rgb);
    }
  }
  return 0;
}

/* PIL's rounding helpers of wide lines */
static int round_up(double f) { return (int)(f >= 0.0 ? floor(f + 0.5) : -floor(fabs(f) + 0.5)); }
static int round_down(double f) { return (int)(f >= 0.0 ? ceil(f - 0.5) : -ceil(fabs(f) - 0.5)); }

/* the 1-pixel line from (x0, y0) to (x1, y1), both ends included (Bresenham) */
static void thin_line(canvas *c, int64_t x0, int64_t y0, int64_t x1, int64_t y1, const int *rgb) {
  int64_t dx = llabs(x1 - x0), dy = -llabs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
  for (;;) {
    point(c, x0, y0, rgb);
    if (x0 == x1 && y0 == y1) return;
    int64_t e2 = 2 * e;
    if (e2 >= dy) e += dy, x0 += sx;
    if (e2 <= dx) e += dx, y0 += sy;
  }
}

/* Keeps a segment with an end far outside the picture (farther than
 * 4 (w + h) + width) drawable in time: clips it (Liang-Barsky) to the
 * picture grown by that margin and rounds the new ends; segments within the
 * margin are left exact. False when nothing of it is near the picture. */
static int clip_segment(const canvas *c, int64_t width, int64_t *x0, int64_t *y0, int64_t *x1, int64_t *y1) {
  double m = 4.0 * (double)(c->w + c->h) + (double)width, lo[2] = {-m, -m}, hi[2] = {(double)c->w + m, (double)c->h + m};
  double p0[2] = {(double)*x0, (double)*y0}, d[2] = {(double)(*x1 - *x0), (double)(*y1 - *y0)};
  int inside = 1;
  for (int k = 0; k < 2; k++) {
    double e = k ? (double)*y1 : (double)*x1;
    if (p0[k] < lo[k] || p0[k] > hi[k] || e < lo[k] || e > hi[k]) inside = 0;
  }
  if (inside) return 1;
  double t0 = 0, t1 = 1;
  for (int k = 0; k < 2; k++) {
    double q[2] = {p0[k] - lo[k], hi[k] - p0[k]}, pk[2] = {-d[k], d[k]};
    for (int j = 0; j < 2; j++) {
      if (pk[j] == 0) {
        if (q[j] < 0) return 0;
      } else {
        double t = q[j] / pk[j];
        if (pk[j] < 0) t0 = fmax(t0, t);
        else t1 = fmin(t1, t);
      }
    }
  }
  if (t0 > t1) return 0;
  *x1 = llround(p0[0] + t1 * d[0]), *y1 = llround(p0[1] + t1 * d[1]);
  *x0 = llround(p0[0] + t0 * d[0]), *y0 = llround(p0[1] + t0 * d[1]);
  return 1;
}

/* line(img, x0, y0, x1, y1, r, g, b, width): width 1 is a Bresenham line;
 * wider lines fill the quadrilateral PIL computes (its corner rounding)
 * row by row as PIL fills polygons */
static int l_line(lua_State *L) {
  canvas c = check_canvas(L, "draw.line");
  int64_t x0 = luaL_checkinteger(L, 2), y0 = luaL_checkinteger(L, 3);
  int64_t x1 = luaL_checkinteger(L, 4), y1 = luaL_checkinteger(L, 5);
  int rgb[3] = {check_byte(L, 6), check_byte(L, 7), check_byte(L, 8)};
  int64_t width = luaL_checkinteger(L, 9);
  if (width > c.h + c.w) width = c.h + c.w; /* wider covers the picture anyway */
  if (!clip_segment(&c, width, &x0, &y0, &x1, &y1)) return 0;
  int64_t dx = x1 - x0, dy = y1 - y0;
  if (width <= 1 || (dx == 0 && dy == 0)) {
    thin_line(&c, x0, y0, x1, y1, rgb);
    return 0;
  }
  double len = hypot((double)dx, (double)dy), half = (width - 1) / 2.0;
  double rmax = round_up(half) / len, rmin = round_down(half) / len;
  int64_t dxmin = round_down(rmin * dy), dxmax = round_down(rmax * dy);
  int64_t dymin = round_down(rmin * dx), dymax = round_down(rmax * dx);
  double vx[4] = {x0 - dxmin, x1 - dxmin, x1 + dxmax, x0 + dxmax};
  double vy[4] = {y0 + dymax, y1 + dymax, y1 - dymin, y0 - dymin};
  /* scan the rows: the span between the outermost edge crossings, its
   * ends rounded inwards half-way as PIL's polygon filler does */
  double by0 = vy[0], by1 = vy[0];
  for (int k = 1; k < 4; k++) by0 = fmin(by0, vy[k]), by1 = fmax(by1, vy[k]);
  by0 = fmax(by0, 0), by1 = fmin(by1, (double)c.h - 1);
  for (int64_t y = (int64_t)by0; y <= (int64_t)by1; y++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 4; k++) {
      int n = (k + 1) % 4;
      double ya = vy[k], yb = vy[n];
      if ((double)y < fmin(ya, yb) || (double)y > fmax(ya, yb)) continue;
      if (ya == yb) {
        lo = fmin(lo, fmin(vx[k], vx[n])), hi = fmax(hi, fmax(vx[k], vx[n]));
      } else {
        double x = vx[k] + ((double)y - ya) * (vx[n] - vx[k]) / (yb - ya);
        lo = fmin(lo, x), hi = fmax(hi, x);
      }
    }
    if (lo <= hi) hline(&c, round_up(lo), y, round_down(hi), rgb);
  }
  return 0;
}

static const mtl_reg regs[] = {
    {"rect", l_rect, MTL_FN, "torch.vision._draw.rect(img, x0, y0, x1, y1, r, g, b, width) -- internal"},
    {"fill_rect", l_fill_rect, MTL_FN, "torch.vision._draw.fill_rect(img, x0, y0, x1, y1, r, g, b, alpha) -- internal"},
    {"disk", l_disk, MTL_FN, "torch.vision._draw.disk(img, cx, cy, radius, r, g, b) -- internal"},
    {"line", l_line, MTL_FN, "torch.vision._draw.line(img, x0, y0, x1, y1, r, g, b, width) -- internal"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._draw" */
int luaopen_torch_vision__draw(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
