/* l_text.c -- text for torch.vision.utils.draw_bounding_boxes' labels,
 * drawn with Cairo (which the project links for torch.plot) into a
 * contiguous uint8 3 x H x W CPU tensor, antialiased over the pixels there.
 * The font is a font file (TrueType/OpenType, loaded with FreeType) or a
 * fontconfig family name; the default is "sans-serif".
 *   torch.vision._text.text(img, x, y, s, r, g, b, font_or_nil, size)
 * draws s with the top left of its line box at (x, y), 0-based pixels. */
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
  cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
  if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
    if (face) cairo_font_face_destroy(face);
    cairo_surface_destroy(sf);
    return luaL_error(L, "%s: cannot make a drawing surface", fn);
  }
  uint8_t *p = (uint8_t *)mt_data(t), *d = cairo_image_surface_get_data(sf);
  int stride = cairo_image_surface_get_stride(sf);
  cairo_surface_flush(sf);
  for (int64_t i = 0; i < h; i++)
    for (int64_t j = 0; j < w; j++) {
      uint32_t v = (uint32_t)p[i * w + j] << 16 | (uint32_t)p[(h + i) * w + j] << 8 | p[(2 * h + i) * w + j];
      memcpy(d + i * stride + j * 4, &v, 4);
    }
  cairo_surface_mark_dirty(sf);
  cairo_t *cr = cairo_create(sf);
  if (face) cairo_set_font_face(cr, face);
  else cairo_select_font_face(cr, font ? font : "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
  cairo_move_to(cr, x, y + fe.ascent);
  cairo_show_text(cr, s);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  if (face) cairo_font_face_destroy(face);
  cairo_surface_flush(sf);
  for (int64_t i = 0; i < h; i++)
    for (int64_t j = 0; j < w; j++) {
      uint32_t v;
      memcpy(&v, d + i * stride + j * 4, 4);
      p[i * w + j] = (uint8_t)(v >> 16), p[(h + i) * w + j] = (uint8_t)(v >> 8), p[(2 * h + i) * w + j] = (uint8_t)v;
    }
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
