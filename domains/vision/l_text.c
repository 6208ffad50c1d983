/* l_text.c -- text for torch.vision.utils.draw_bounding_boxes' labels,
 * drawn with Cairo (which the project links for torch.plot) into a
 * contiguous uint8 3 x H x W CPU tensor, antialiased over the pixels there.
 * The font is a font file (TrueType/OpenType, loaded with FreeType) or a
 * fontconfig family name; the default is "sans-serif".
 *   torch.vision._text.text(img, x, y, s, r, g, b, font_or_nil, size)
 * draws s with the top left of its line box at (x, y), 0-based pixels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-ft.h>
#include <cairo.h>

#include "mtl.h"

typedef struct {
  FT_Library lib;
  FT_Face face;
} ft_font;

static void free_ft(void *p) {
  ft_font *f = p;
  FT_Done_Face(f->face);
  FT_Done_FreeType(f->lib);
  free(f);
}

static const cairo_user_data_key_t ft_key;

/* A Cairo font face for the font file at path (NULL when FreeType cannot
 * read it); the FreeType objects are freed with the face. */
static cairo_font_face_t *face_of_file(const char *path) {
  ft_font *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  if (FT_Init_FreeType(&f->lib)) {
    free(f);
    return NULL;
  }
  if (FT_New_Face(f->lib, path, 0, &f->face)) {
    FT_Done_FreeType(f->lib);
    free(f);
    return NULL;
  }
  cairo_font_face_t *cf = cairo_ft_font_face_create_for_ft_face(f->face, 0);
  if (cairo_font_face_set_user_data(cf, &ft_key, f, free_ft) != CAIRO_STATUS_SUCCESS) {
    cairo_font_face_destroy(cf);
    free_ft(f);
    return NULL;
  }
  return cf;
}

static int file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* Copies the rw x rh region at (x0, y0) of the 3 x h x w bytes p into the
 * RGB24 surface data d (to_surface) or back. */
static void copy_region(uint8_t *p, int64_t h, int64_t w, uint8_t *d, int stride, int64_t x0, int64_t y0, int64_t rw,
                        int64_t rh, int to_surface) {
  for (int64_t i = 0; i < rh; i++)
    for (int64_t j = 0; j < rw; j++) {
      int64_t at = (y0 + i) * w + x0 + j;
      uint32_t v;
      if (to_surface) {
        v = (uint32_t)p[at] << 16 | (uint32_t)p[h * w + at] << 8 | p[2 * h * w + at];
        memcpy(d + i * stride + j * 4, &v, 4);
      } else {
        memcpy(&v, d + i * stride + j * 4, 4);
        p[at] = (uint8_t)(v >> 16), p[h * w + at] = (uint8_t)(v >> 8), p[2 * h * w + at] = (uint8_t)v;
      }
    }
}

/* selects face (a font file's) or the family font (default sans-serif) at size */
static void set_font(cairo_t *cr, cairo_font_face_t *face, const char *font, double size) {
  if (face) cairo_set_font_face(cr, face);
  else cairo_select_font_face(cr, font ? font : "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

/* the font's and the text's extents */
static void measure(cairo_font_face_t *face, const char *font, double size, const char *s, cairo_font_extents_t *fe,
                    cairo_text_extents_t *te) {
  cairo_surface_t *scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t *m = cairo_create(scratch);
  set_font(m, face, font, size);
  cairo_font_extents(m, fe);
  cairo_text_extents(m, s, te);
  cairo_destroy(m);
  cairo_surface_destroy(scratch);
}

/* text(img, x, y, s, r, g, b, font_or_nil, size) */
static int l_text(lua_State *L) {
  const char *fn = "draw_bounding_boxes";
  mt_tensor *t = mtl_check_tensor(L, 1, fn);
  if (t->dtype != MT_UINT8 || t->ndim != 3 || t->shape[0] != 3 || !mt_is_contiguous(t) || mt_tdevice(t).type != MT_CPU)
    return luaL_error(L, "%s: text needs a contiguous uint8 3 x H x W CPU tensor", fn);
  double x = luaL_checknumber(L, 2), y = luaL_checknumber(L, 3);
  const char *s = luaL_checkstring(L, 4);
  double rgb[3];
  for (int k = 0; k < 3; k++) rgb[k] = (double)luaL_checkinteger(L, 5 + k) / 255.0;
  const char *font = luaL_optstring(L, 8, NULL);
  double size = luaL_checknumber(L, 9);
  int64_t h = t->shape[1], w = t->shape[2];
  if (h > 32767 || w > 32767) return luaL_error(L, "%s: the image is too large for text (%I x %I)", fn, (lua_Integer)h,
                                                (lua_Integer)w);
  cairo_font_face_t *face = NULL;
  if (font && file_exists(font)) {
    face = face_of_file(font);
    if (!face) return luaL_error(L, "%s: cannot read the font file %s", fn, font);
  }
  /* measure, then draw on a copy of the covered region only */
  cairo_font_extents_t fe;
  cairo_text_extents_t te;
  measure(face, font, size, s, &fe, &te);
  int64_t x0 = (int64_t)floor(x + fmin(te.x_bearing, 0)) - 2;
  int64_t x1 = (int64_t)ceil(x + fmax(te.x_advance, te.x_bearing + te.width)) + 2;
  int64_t y0 = (int64_t)floor(y + fmin(0, fe.ascent + te.y_bearing)) - 2, y1 = (int64_t)ceil(y + fe.ascent + fe.descent) + 2;
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > w) x1 = w;
  if (y1 > h) y1 = h;
  if (x0 >= x1 || y0 >= y1) {
    if (face) cairo_font_face_destroy(face);
    return 0;
  }
  int64_t rw = x1 - x0, rh = y1 - y0;
  cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)rw, (int)rh);
  if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
    if (face) cairo_font_face_destroy(face);
    cairo_surface_destroy(sf);
    return luaL_error(L, "%s: cannot make a drawing surface", fn);
  }
  uint8_t *p = (uint8_t *)mt_data(t), *d = cairo_image_surface_get_data(sf);
  int stride = cairo_image_surface_get_stride(sf);
  cairo_surface_flush(sf);
  copy_region(p, h, w, d, stride, x0, y0, rw, rh, 1);
  cairo_surface_mark_dirty(sf);
  cairo_t *cr = cairo_create(sf);
  set_font(cr, face, font, size);
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  cairo_move_to(cr, x - (double)x0, y - (double)y0 + fe.ascent);
  cairo_show_text(cr, s);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  if (face) cairo_font_face_destroy(face);
  cairo_surface_flush(sf);
  copy_region(p, h, w, d, stride, x0, y0, rw, rh, 0);
  cairo_surface_destroy(sf);
  if (st != CAIRO_STATUS_SUCCESS) return luaL_error(L, "%s: cannot draw the label: %s", fn, cairo_status_to_string(st));
  return 0;
}

static const mtl_reg regs[] = {
    {"text", l_text, MTL_FN, "torch.vision._text.text(img, x, y, s, r, g, b, font, size) -- internal"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._text" */
int luaopen_torch_vision__text(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
