/* l_plot.c -- a small drawing surface over Cairo for torch.plot (whose
 * layout lives in domains/experiment/plot/): lines, polylines with gaps, rectangles,
 * dots and text on an RGB image, saved as PNG. It knows nothing about axes
 * or data; coordinates are pixels from the top-left corner, 0-based.
 *   c = torch.plot._canvas.new(width, height)      c = torch.plot._canvas.read(path.png)
 *   c:color(r, g, b[, a])  c:line_width(w)  c:dash([on, off])
 *   c:line(x1, y1, x2, y2)  c:polyline(xs, ys)  c:rect(x, y, w, h[, fill])
 *   c:circle(x, y, r)  c:clip(x, y, w, h)  c:unclip()
 *   c:font(size[, bold])  c:text(s, x, y[, ax, ay, angle])  c:measure(s)
 *   c:save(path)  c:pixel(x, y)  c:size()  c:close() */
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#include "mtl.h"

#define CANVAS_MT "torch.Canvas"
#define MAX_SIDE 16384 /* pixels: larger pictures are a mistake, not a plot */

typedef struct canvas {
  cairo_surface_t *surface;
  cairo_t *cr;
} canvas;

/* Cairo and fontconfig keep font caches for the process; freeing them at
 * exit keeps leak checkers quiet about memory that is not lost. */
static void free_font_caches(void) {
  cairo_debug_reset_static_data();
  FcFini();
}

static canvas *check_canvas(lua_State *L) {
  canvas *c = luaL_checkudata(L, 1, CANVAS_MT);
  if (c->cr == NULL) luaL_error(L, "canvas: used after close()");
  return c;
}

static void release(canvas *c) {
  if (c->cr) cairo_destroy(c->cr);
  if (c->surface) cairo_surface_destroy(c->surface);
  c->cr = NULL;
  c->surface = NULL;
}

/* Pushes a canvas userdata owning surface (an image surface; stolen). */
static canvas *push_canvas(lua_State *L, cairo_surface_t *surface) {
  static int cleanup_registered;
  if (!cleanup_registered) {
    cleanup_registered = 1;
    atexit(free_font_caches);
  }
  canvas *c = lua_newuserdatauv(L, sizeof *c, 0);
  c->surface = surface;
  c->cr = cairo_create(surface);
  luaL_setmetatable(L, CANVAS_MT);
  if (cairo_status(c->cr) != CAIRO_STATUS_SUCCESS) {
    const char *msg = cairo_status_to_string(cairo_status(c->cr));
    release(c);
    luaL_error(L, "canvas: %s", msg);
  }
  cairo_select_font_face(c->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(c->cr, 12);
  cairo_set_line_join(c->cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(c->cr, CAIRO_LINE_CAP_ROUND);
  return c;
}

/* torch.plot._canvas.new(width, height): a white RGB canvas. */
static int l_canvas(lua_State *L) {
  lua_Integer w = luaL_checkinteger(L, 1), h = luaL_checkinteger(L, 2);
  if (w < 16 || h < 16 || w > MAX_SIDE || h > MAX_SIDE)
    return luaL_error(L, "canvas: size %dx%d out of range (16 to %d pixels a side)", (int)w, (int)h, MAX_SIDE);
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    const char *msg = cairo_status_to_string(cairo_surface_status(s));
    cairo_surface_destroy(s);
    return luaL_error(L, "canvas: %s", msg);
  }
  canvas *c = push_canvas(L, s);
  cairo_set_source_rgb(c->cr, 1, 1, 1);
  cairo_paint(c->cr);
  cairo_set_source_rgb(c->cr, 0, 0, 0);
  return 1;
}

/* torch.plot._canvas.read(path): a canvas holding the PNG file's picture. */
static int l_canvas_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  FILE *f = fopen(path, "rb");
  if (f == NULL) return luaL_error(L, "canvas: cannot read %s: %s", path, strerror(errno));
  fclose(f);
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    const char *msg = cairo_status_to_string(cairo_surface_status(s));
    cairo_surface_destroy(s);
    return luaL_error(L, "canvas: cannot read %s: %s", path, msg);
  }
  push_canvas(L, s);
  return 1;
}

static int c_color(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_set_source_rgba(c->cr, luaL_checknumber(L, 2), luaL_checknumber(L, 3), luaL_checknumber(L, 4),
                        luaL_optnumber(L, 5, 1.0));
  return 0;
}

static int c_line_width(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_set_line_width(c->cr, luaL_checknumber(L, 2));
  return 0;
}

/* c:dash(on, off) sets a dash pattern in pixels; c:dash() a solid line. */
static int c_dash(lua_State *L) {
  canvas *c = check_canvas(L);
  if (lua_isnoneornil(L, 2)) {
    cairo_set_dash(c->cr, NULL, 0, 0);
  } else {
    double d[2] = {luaL_checknumber(L, 2), luaL_checknumber(L, 3)};
    cairo_set_dash(c->cr, d, 2, 0);
  }
  return 0;
}

static int c_line(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_move_to(c->cr, luaL_checknumber(L, 2), luaL_checknumber(L, 3));
  cairo_line_to(c->cr, luaL_checknumber(L, 4), luaL_checknumber(L, 5));
  cairo_stroke(c->cr);
  return 0;
}

/* Number at t[i], or NaN when it is missing or not a number. */
static double coord(lua_State *L, int t, lua_Integer i) {
  lua_rawgeti(L, t, i);
  double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
  lua_pop(L, 1);
  return v;
}

/* c:polyline(xs, ys): strokes the line through the points (xs[i], ys[i]),
 * i = 1..#xs; a non-finite coordinate breaks the line there. */
static int c_polyline(lua_State *L) {
  canvas *c = check_canvas(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 2);
  int pen_down = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    double x = coord(L, 2, i), y = coord(L, 3, i);
    if (!isfinite(x) || !isfinite(y)) {
      pen_down = 0;
      continue;
    }
    if (pen_down)
      cairo_line_to(c->cr, x, y);
    else
      cairo_move_to(c->cr, x, y);
    pen_down = 1;
  }
  cairo_stroke(c->cr);
  return 0;
}

static int c_rect(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_rectangle(c->cr, luaL_checknumber(L, 2), luaL_checknumber(L, 3), luaL_checknumber(L, 4),
                  luaL_checknumber(L, 5));
  if (lua_toboolean(L, 6))
    cairo_fill(c->cr);
  else
    cairo_stroke(c->cr);
  return 0;
}

static int c_circle(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_new_sub_path(c->cr);
  cairo_arc(c->cr, luaL_checknumber(L, 2), luaL_checknumber(L, 3), luaL_checknumber(L, 4), 0, 2 * M_PI);
  cairo_fill(c->cr);
  return 0;
}

static int c_clip(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_reset_clip(c->cr);
  cairo_rectangle(c->cr, luaL_checknumber(L, 2), luaL_checknumber(L, 3), luaL_checknumber(L, 4),
                  luaL_checknumber(L, 5));
  cairo_clip(c->cr);
  return 0;
}

static int c_unclip(lua_State *L) {
  cairo_reset_clip(check_canvas(L)->cr);
  return 0;
}

static int c_font(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_select_font_face(c->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         lua_toboolean(L, 3) ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(c->cr, luaL_checknumber(L, 2));
  return 0;
}

/* c:measure(s) -> width, height of s in the current font (height: the
 * font's ascent + descent, the same for every string). */
static int c_measure(lua_State *L) {
  canvas *c = check_canvas(L);
  cairo_text_extents_t te;
  cairo_font_extents_t fe;
  cairo_text_extents(c->cr, luaL_checkstring(L, 2), &te);
  cairo_font_extents(c->cr, &fe);
  lua_pushnumber(L, te.x_advance);
  lua_pushnumber(L, fe.ascent + fe.descent);
  return 2;
}

/* c:text(s, x, y[, ax, ay, angle]): draws s so that the point (x, y) is at
 * fraction ax of its width (0 left .. 1 right) and ay of its height (0 top
 * .. 1 bottom); angle in degrees, counter-clockwise, turns it about (x, y). */
static int c_text(lua_State *L) {
  canvas *c = check_canvas(L);
  const char *s = luaL_checkstring(L, 2);
  double x = luaL_checknumber(L, 3), y = luaL_checknumber(L, 4);
  double ax = luaL_optnumber(L, 5, 0), ay = luaL_optnumber(L, 6, 0), angle = luaL_optnumber(L, 7, 0);
  cairo_text_extents_t te;
  cairo_font_extents_t fe;
  cairo_text_extents(c->cr, s, &te);
  cairo_font_extents(c->cr, &fe);
  cairo_save(c->cr);
  cairo_translate(c->cr, x, y);
  cairo_rotate(c->cr, -angle * M_PI / 180);
  cairo_move_to(c->cr, -ax * te.x_advance, -ay * (fe.ascent + fe.descent) + fe.ascent);
  cairo_show_text(c->cr, s);
  cairo_restore(c->cr);
  return 0;
}

/* fwrite as Cairo's PNG stream callback; closure is the FILE. */
static cairo_status_t write_chunk(void *closure, const unsigned char *data, unsigned int n) {
  return fwrite(data, 1, n, closure) == n ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* c:save(path): writes a PNG to path.tmp and renames it into place, so a
 * reader never sees half a picture. Raises "cannot write PATH: reason". */
static int c_save(lua_State *L) {
  canvas *c = check_canvas(L);
  const char *path = luaL_checkstring(L, 2);
  const char *tmp = lua_pushfstring(L, "%s.tmp", path);
  cairo_surface_flush(c->surface);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) return luaL_error(L, "cannot write %s: %s", path, strerror(errno));
  cairo_status_t st = cairo_surface_write_to_png_stream(c->surface, write_chunk, f);
  int err = ferror(f) ? errno : 0;
  if (fclose(f) != 0 && err == 0) err = errno;
  if (st != CAIRO_STATUS_SUCCESS || err != 0) {
    remove(tmp);
    return luaL_error(L, "cannot write %s: %s", path, err ? strerror(err) : cairo_status_to_string(st));
  }
  if (rename(tmp, path) != 0) {
    err = errno;
    remove(tmp);
    return luaL_error(L, "cannot write %s: %s", path, strerror(err));
  }
  return 0;
}

/* c:pixel(x, y) -> r, g, b (0..255) of the pixel in column x, row y
 * (0-based, like the drawing coordinates); raises outside the picture. */
static int c_pixel(lua_State *L) {
  canvas *c = check_canvas(L);
  lua_Integer x = luaL_checkinteger(L, 2), y = luaL_checkinteger(L, 3);
  int w = cairo_image_surface_get_width(c->surface), h = cairo_image_surface_get_height(c->surface);
  if (x < 0 || y < 0 || x >= w || y >= h)
    return luaL_error(L, "canvas: pixel (%d, %d) outside the %dx%d picture", (int)x, (int)y, w, h);
  cairo_surface_flush(c->surface);
  const unsigned char *row = cairo_image_surface_get_data(c->surface) + y * cairo_image_surface_get_stride(c->surface);
  uint32_t px;
  memcpy(&px, row + 4 * x, 4); /* native-endian 0xAARRGGBB (premultiplied: opaque here) */
  lua_pushinteger(L, (px >> 16) & 255);
  lua_pushinteger(L, (px >> 8) & 255);
  lua_pushinteger(L, px & 255);
  return 3;
}

static int c_size(lua_State *L) {
  canvas *c = check_canvas(L);
  lua_pushinteger(L, cairo_image_surface_get_width(c->surface));
  lua_pushinteger(L, cairo_image_surface_get_height(c->surface));
  return 2;
}

static int c_close(lua_State *L) {
  release(luaL_checkudata(L, 1, CANVAS_MT));
  return 0;
}

static const luaL_Reg canvas_methods[] = {
    {"color", c_color}, {"line_width", c_line_width}, {"dash", c_dash},   {"line", c_line},
    {"polyline", c_polyline}, {"rect", c_rect},       {"circle", c_circle}, {"clip", c_clip},
    {"unclip", c_unclip}, {"font", c_font},           {"measure", c_measure}, {"text", c_text},
    {"save", c_save},   {"pixel", c_pixel},           {"size", c_size},     {"close", c_close},
    {NULL, NULL}};

static const mtl_reg regs[] = {
    {"new", l_canvas, MTL_FN, "torch.plot._canvas.new(width, height) -- a white Cairo drawing surface (torch.plot's)"},
    {"read", l_canvas_read, MTL_FN, "torch.plot._canvas.read(path) -- a canvas holding a PNG file's picture"},
    {NULL, NULL, 0, NULL}};

/* require "torch.plot._canvas" -> {new=, read=} */
int luaopen_torch_plot__canvas(lua_State *L) {
  mtl_new_class(L, CANVAS_MT, canvas_methods, c_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
