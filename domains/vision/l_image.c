/* l_image.c -- the C half of torch.vision.io's image functions (io.lua):
 * files to byte tensors and back, PNG/JPEG bytes to C x H x W tensors and
 * back. The formats live in png.c, png_decode.c and jpeg.c; this file moves
 * values between Lua and them, and frees what it owns before raising. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "jpeg_cuda.h"
#include "mtl.h"
#include "png.h"

#define MAX_BYTES ((size_t)1 << 30) /* decoded images larger than 1 GiB are refused */
#define FN "torch.vision.io."

/* The ImageReadMode at argument pos or option `mode` (a number 0..4 of
 * ImageReadMode or its name); UNCHANGED when absent. */
static int check_mode(lua_State *L, int pos, int last, int opt, const char *fn) {
  mtl_getarg(L, pos, last, opt, "mode");
  int mode = MTD_UNCHANGED;
  if (lua_type(L, -1) == LUA_TSTRING) {
    mode = mtl_check_choice(L, -1, fn, "mode", "UNCHANGED GRAY GRAY_ALPHA RGB RGB_ALPHA");
  } else if (!lua_isnil(L, -1)) {
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 0 || v > 4)
      luaL_error(L, "%s: mode must be a value of torch.vision.io.ImageReadMode (or its name), got %s", fn,
                 luaL_tolstring(L, -1, NULL));
    mode = (int)v;
  }
  lua_pop(L, 1);
  return mode;
}

/* The bytes of a uint8 1-D CPU tensor at idx (a view kept alive by the
 * stack: a contiguous copy is pushed when needed). */
static const unsigned char *check_bytes(lua_State *L, int idx, size_t *n, const char *fn) {
  mt_tensor *t = mtl_check_tensor(L, idx, fn);
  if (t->dtype != MT_UINT8 || t->ndim != 1 || mt_tdevice(t).type != MT_CPU)
    luaL_error(L, "%s: data must be a 1-D uint8 CPU tensor of file bytes (read_file gives one)", fn);
  if (!mt_is_contiguous(t)) {
    mt_tensor *c = NULL;
    MTL_CHECK_OP(L, fn, mt_contiguous(t, &c));
    mtl_push_tensor(L, c);
    t = c;
  }
  *n = (size_t)t->shape[0];
  return (const unsigned char *)mt_data(t);
}

/* Source pixel (y, x) of output pixel (i, j) of an h x w image shown in
 * EXIF orientation o (2..8 flip and/or rotate it; 5..8 swap its sides). */
static void source_of(int o, int64_t h, int64_t w, int64_t i, int64_t j, int64_t *y, int64_t *x) {
  /* per orientation: 1 = swap the sides, 2 = flip rows, 4 = flip columns */
  static const unsigned char how[9] = {0, 0, 4, 6, 2, 1, 3, 7, 5};
  int f = o >= 1 && o <= 8 ? how[o] : 0;
  *y = f & 1 ? j : i, *x = f & 1 ? i : j;
  if (f & 2) *y = h - 1 - *y;
  if (f & 4) *x = w - 1 - *x;
}

/* Where a decoder's pixels go: 8-bit images straight into an H x W x C
 * uint8 tensor (returned as a C x H x W view of it, as torchvision does),
 * 16-bit ones into a malloc'ed buffer (widened to int32 afterwards). */
typedef struct sink {
  mt_tensor *t;
  void *heap;
} sink;

static void *sink_alloc(mtd_image *img, size_t n) {
  sink *k = img->ctx;
  if (img->depth == 16) {
    k->heap = malloc(n);
    if (!k->heap) mt_fail(MT_ENOMEM, "out of memory");
    return k->heap;
  }
  int64_t shape[3] = {img->h, img->w, img->c};
  return mt_empty(shape, 3, MT_UINT8, mt_cpu(), &k->t) ? NULL : mt_data(k->t);
}

static void sink_free(sink *k) {
  if (k->t) mt_release(k->t);
  free(k->heap);
  k->t = NULL, k->heap = NULL;
}

/* A new contiguous C x H x W tensor of img's pixels shown in orientation o
 * (1: as stored), uint8 or (16 bits) int32. */
static mt_status reorder(const mtd_image *img, int o, mt_tensor **out) {
  int64_t H = o >= 5 ? img->w : img->h, W = o >= 5 ? img->h : img->w, shape[3] = {img->c, H, W};
  mt_status st = mt_empty(shape, 3, img->depth == 16 ? MT_INT32 : MT_UINT8, mt_cpu(), out);
  if (st) return st;
  int64_t c = img->c, hw = H * W;
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++) {
      int64_t y, x;
      source_of(o, img->h, img->w, i, j, &y, &x);
      int64_t s = (y * img->w + x) * c, d = i * W + j;
      for (int64_t k = 0; k < c; k++) {
        if (img->depth == 16)
          ((int32_t *)mt_data(*out))[k * hw + d] = ((uint16_t *)img->pix)[s + k];
        else
          ((uint8_t *)mt_data(*out))[k * hw + d] = ((uint8_t *)img->pix)[s + k];
      }
    }
  return MT_OK;
}

/* Pushes the image decoded into k (freed here) as a C x H x W tensor: a
 * strided view of the H x W x C pixels when 8-bit and upright, else a
 * copy turned upright (when orient is set) and widened to int32 (16 bits). */
static int push_image(lua_State *L, const mtd_image *img, sink *k, int orient, const char *fn) {
  int o = orient ? img->orientation : 1;
  mt_tensor *r = NULL;
  mt_status st;
  if (img->depth == 8 && o == 1) {
    int64_t shape[3] = {img->c, img->h, img->w}, strides[3] = {1, img->w * img->c, img->c};
    if (img->c == 1) strides[0] = img->h * img->w;
    st = mt_as_strided(k->t, 3, shape, strides, 0, &r);
  } else {
    st = reorder(img, o, &r);
  }
  sink_free(k);
  MTL_CHECK_OP(L, fn, st);
  mtl_push_tensor(L, r);
  return 1;
}

enum { ANY, PNG, JPEG, PNG_LIBPNG };

/* Decodes the bytes at idx as `format` (ANY: sniffed) and pushes the image;
 * errors read "fn: [path: ]reason". */
static int decode(lua_State *L, const unsigned char *p, size_t n, int format, int mode, int orient, const char *fn,
                  const char *path) {
  if (format == ANY) {
    if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8))
      format = PNG;
    else if (n >= 3 && !memcmp(p, "\xff\xd8\xff", 3))
      format = JPEG;
    else
      return luaL_error(L, "%s: %s%snot a PNG or JPEG file (unknown signature)", fn, path ? path : "",
                        path ? ": " : "");
  }
  sink k = {NULL, NULL};
  /* split JPEG decoding only with threads to spare: on 2 cores shared with
   * other work, the helper's slices cost more than they give (docs/image_decode.md) */
  int nt = mt_get_num_threads();
  mtd_image img = {.alloc = sink_alloc, .ctx = &k, .threads = nt >= 4 ? nt : 1};
  mt_status st = format == PNG          ? mtd_png_decode(p, n, mode, MAX_BYTES, &img)
                 : format == PNG_LIBPNG ? mtd_png_decode_libpng(p, n, mode, MAX_BYTES, &img)
                                        : mtd_jpeg_decode(p, n, mode, MAX_BYTES, &img);
  if (st) {
    sink_free(&k);
    return luaL_error(L, "%s: %s%s%s", fn, path ? path : "", path ? ": " : "", mt_errmsg());
  }
  return push_image(L, &img, &k, orient, fn);
}

/* decode_png / decode_jpeg / decode_image (data[, mode[, apply_exif_orientation]]) */
static int decode_fn(lua_State *L, int format, const char *fn) {
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  size_t n;
  const unsigned char *p = check_bytes(L, 1, &n, fn);
  int mode = check_mode(L, 2, last, opt, fn);
  int orient = mtl_opt_bool(L, 3, last, opt, "apply_exif_orientation", 0);
  return decode(L, p, n, format, mode, orient, fn, NULL);
}

static int l_decode_png(lua_State *L) { return decode_fn(L, PNG, FN "decode_png"); }
static int l_decode_png_libpng(lua_State *L) { return decode_fn(L, PNG_LIBPNG, FN "_decode_png_libpng"); }

/* _png_fast(data[, mode]) -> whether png_fast.c decodes the file (tests) */
static int l_png_fast(lua_State *L) {
  size_t n;
  const unsigned char *p = check_bytes(L, 1, &n, FN "_png_fast");
  int mode = check_mode(L, 2, lua_gettop(L), 0, FN "_png_fast");
  mtd_image img = {0};
  mt_status st;
  int took = mtd_png_fast(p, n, mode, MAX_BYTES, &img, &st);
  if (took) free(img.pix);
  lua_pushboolean(L, took && !st);
  return 1;
}
static int l_decode_image(lua_State *L) { return decode_fn(L, ANY, FN "decode_image"); }

/* Pushes item i of the list at index 1 and returns its bytes (check_bytes). */
static const unsigned char *list_item(lua_State *L, int i, size_t *n, const char *fn) {
  lua_rawgeti(L, 1, i);
  if (!mtl_peek_tensor(L, -1))
    luaL_error(L, "%s: data[%d] must be a 1-D uint8 CPU tensor of file bytes, got a %s", fn, i, luaL_typename(L, -1));
  return check_bytes(L, lua_gettop(L), n, fn);
}

/* Replaces the tensor on top of the stack by x:name(a[, b]) (1-based dims). */
static void call_method(lua_State *L, const char *name, int a, int b) {
  lua_getfield(L, -1, name);
  lua_insert(L, -2);
  lua_pushinteger(L, a);
  if (b) lua_pushinteger(L, b);
  lua_call(L, b ? 3 : 2, 1);
}

/* Turns the C x H x W tensor on top of the stack upright for EXIF
 * orientation o by tensor ops (any device; the result is contiguous). */
static void orient_tensor(lua_State *L, int o) {
  static const unsigned char how[9] = {0, 0, 4, 6, 2, 1, 3, 7, 5}; /* as source_of */
  int f = o >= 1 && o <= 8 ? how[o] : 0;
  if (f & 2) call_method(L, "flip", 2, 0);
  if (f & 4) call_method(L, "flip", 3, 0);
  if (f & 1) call_method(L, "transpose", 2, 3);
  if (f) call_method(L, "contiguous", 0, 0);
}

/* decode_jpeg's CUDA path: the byte tensors of the list at index 1 (or the
 * one tensor there) decoded by nvJPEG on device dev; pushes a list of
 * tensors (list) or the one tensor. */
static int decode_cuda(lua_State *L, int list, int mode, int dev, int orient, const char *fn) {
  int count = list ? (int)lua_rawlen(L, 1) : 1;
  luaL_checkstack(L, 2 * count + 8, "too many images");
  const unsigned char **data = lua_newuserdatauv(L, (count + 1) * sizeof *data, 0);
  size_t *n = lua_newuserdatauv(L, (count + 1) * sizeof *n, 0);
  mt_tensor **out = lua_newuserdatauv(L, (count + 1) * sizeof *out, 0);
  for (int i = 0; i < count; i++) /* the tensors (or copies) stay on the stack */
    data[i] = list ? list_item(L, i + 1, &n[i], fn) : check_bytes(L, 1, &n[i], fn);
  mt_status st = mtd_jpeg_decode_cuda(data, n, count, mode, dev, MAX_BYTES, out);
  if (st) return luaL_error(L, "%s: %s", fn, mt_errmsg());
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) { /* pushed before anything can raise */
    mtl_push_tensor(L, out[i]);
    lua_rawseti(L, -2, i + 1);
  }
  for (int i = 0; i < count && orient; i++) {
    lua_rawgeti(L, -1, i + 1);
    orient_tensor(L, mtd_jpeg_orientation(data[i], n[i]));
    lua_rawseti(L, -2, i + 1);
  }
  if (!list) lua_rawgeti(L, -1, 1);
  return 1;
}

/* decode_jpeg(data or {data, ...}[, mode[, device='cpu'[, apply_exif_orientation]]]):
 * a list in gives a list out; device='cuda' decodes with nvJPEG. */
static int l_decode_jpeg(lua_State *L) {
  const char *fn = FN "decode_jpeg";
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  int mode = check_mode(L, 2, last, opt, fn);
  mtl_getarg(L, 3, last, opt, "device");
  mt_device dev = lua_isnil(L, -1) ? mt_cpu() : mtl_check_device(L, -1, fn);
  lua_pop(L, 1);
  int orient = mtl_opt_bool(L, 4, last, opt, "apply_exif_orientation", 0);
  int list = lua_type(L, 1) == LUA_TTABLE;
  if (dev.type == MT_CUDA) return decode_cuda(L, list, mode, dev.index, orient, fn);
  size_t n;
  if (!list) {
    const unsigned char *p = check_bytes(L, 1, &n, fn);
    return decode(L, p, n, JPEG, mode, orient, fn, NULL);
  }
  int count = (int)lua_rawlen(L, 1);
  lua_createtable(L, count, 0);
  int res = lua_gettop(L);
  for (int i = 1; i <= count; i++) {
    const unsigned char *p = list_item(L, i, &n, fn);
    decode(L, p, n, JPEG, mode, orient, fn, NULL);
    lua_rawseti(L, res, i);
    lua_settop(L, res);
  }
  return 1;
}

/* Pushes the contents of the file at path as a Lua string. */
static void slurp(lua_State *L, const char *path, const char *fn) {
  FILE *f = fopen(path, "rb");
  if (!f) luaL_error(L, "%s: %s: %s", fn, path, strerror(errno));
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t got;
  do {
    char *dst = luaL_prepbuffer(&b);
    got = fread(dst, 1, LUAL_BUFFERSIZE, f);
    luaL_addsize(&b, got);
  } while (got == LUAL_BUFFERSIZE);
  int bad = ferror(f);
  fclose(f);
  if (bad) luaL_error(L, "%s: %s: read error", fn, path);
  luaL_pushresult(&b);
}

static const char *check_path(lua_State *L, int idx, const char *fn) {
  if (lua_type(L, idx) != LUA_TSTRING)
    luaL_error(L, "%s: argument #%d must be a file path (a string), got a %s", fn, idx, luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

/* read_image(path[, mode[, apply_exif_orientation]]) */
static int l_read_image(lua_State *L) {
  const char *fn = FN "read_image", *path = check_path(L, 1, fn);
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  int mode = check_mode(L, 2, last, opt, fn);
  int orient = mtl_opt_bool(L, 3, last, opt, "apply_exif_orientation", 0);
  slurp(L, path, fn);
  size_t n;
  const char *s = lua_tolstring(L, -1, &n);
  return decode(L, (const unsigned char *)s, n, ANY, mode, orient, fn, path);
}

/* read_file(path) -> uint8 1-D tensor of its bytes */
static int l_read_file(lua_State *L) {
  const char *fn = FN "read_file", *path = check_path(L, 1, fn);
  slurp(L, path, fn);
  size_t n;
  const char *s = lua_tolstring(L, -1, &n);
  int64_t shape[1] = {(int64_t)n};
  mt_tensor *t = NULL;
  MTL_CHECK_OP(L, fn, mt_empty(shape, 1, MT_UINT8, mt_cpu(), &t));
  if (n) memcpy(mt_data(t), s, n);
  mtl_push_tensor(L, t);
  return 1;
}

/* Writes n bytes to path or raises naming fn and path. */
static void spill(lua_State *L, const char *path, const void *p, size_t n, const char *fn) {
  FILE *f = fopen(path, "wb");
  if (!f) luaL_error(L, "%s: %s: %s", fn, path, strerror(errno));
  int bad = fwrite(p, 1, n, f) != n;
  if (fclose(f) != 0) bad = 1;
  if (bad) luaL_error(L, "%s: %s: write error", fn, path);
}

/* write_file(path, data) */
static int l_write_file(lua_State *L) {
  const char *fn = FN "write_file", *path = check_path(L, 1, fn);
  size_t n;
  const unsigned char *p = check_bytes(L, 2, &n, fn);
  spill(L, path, p, n, fn);
  return 0;
}

/* The uint8 C x H x W CPU tensor at idx as HWC bytes in a userdata pushed
 * on the stack (freed by the GC even if a later step raises); C must be a
 * bit of `chans` (bit c set: c channels allowed). */
static const uint8_t *check_image(lua_State *L, int idx, unsigned chans, const char *fn, int64_t *h, int64_t *w,
                                  int *c) {
  mt_tensor *t = mtl_check_tensor(L, idx, fn);
  if (t->dtype != MT_UINT8 || t->ndim != 3 || mt_tdevice(t).type != MT_CPU)
    luaL_error(L, "%s: the image must be a uint8 CPU tensor of shape C x H x W, got a %d-D %s tensor", fn, t->ndim,
               mt_dtype_name(t->dtype));
  int64_t C = t->shape[0], H = t->shape[1], W = t->shape[2];
  if (C < 1 || C > 4 || !(chans & (1u << C)))
    luaL_error(L, "%s: the image has %I channels (expected %s)", fn, (lua_Integer)C,
               chans == 0x1e ? "1, 2, 3 or 4" : "1 or 3");
  if (H < 1 || W < 1) luaL_error(L, "%s: the image has no pixels (%I x %I)", fn, (lua_Integer)H, (lua_Integer)W);
  if (mt_checked_numel(t->shape, 3) < 0 || (uint64_t)mt_numel(t) > MAX_BYTES)
    luaL_error(L, "%s: the image is too large", fn);
  uint8_t *out = lua_newuserdatauv(L, (size_t)mt_numel(t), 0);
  const uint8_t *src = (const uint8_t *)mt_data(t);
  for (int64_t k = 0; k < C; k++)
    for (int64_t y = 0; y < H; y++)
      for (int64_t x = 0; x < W; x++)
        out[(y * W + x) * C + k] = src[k * t->strides[0] + y * t->strides[1] + x * t->strides[2]];
  *h = H, *w = W, *c = (int)C;
  return out;
}

/* Pushes the n bytes at p (malloc'ed; freed here) as a uint8 1-D tensor. */
static void push_bytes(lua_State *L, unsigned char *p, size_t n, const char *fn) {
  int64_t shape[1] = {(int64_t)n};
  mt_tensor *t = NULL;
  mt_status st = mt_empty(shape, 1, MT_UINT8, mt_cpu(), &t);
  if (!st) memcpy(mt_data(t), p, n);
  free(p);
  MTL_CHECK_OP(L, fn, st);
  mtl_push_tensor(L, t);
}

/* Encodes the image at argument 1 (PNG with level, or JPEG with quality)
 * and pushes its bytes as a tensor. */
static void encode(lua_State *L, int jpeg, int64_t param, const char *fn) {
  int64_t h, w;
  int c;
  const uint8_t *pix = check_image(L, 1, jpeg ? 0x0a : 0x1e, fn, &h, &w, &c);
  unsigned char *out = NULL;
  size_t n = 0;
  mt_status st = jpeg ? mtd_jpeg_encode(pix, h, w, c, (int)param, &out, &n)
                      : mtd_png_encode_level(pix, h, w, c, (int)param, &out, &n);
  if (st) luaL_error(L, "%s: %s", fn, mt_errmsg());
  push_bytes(L, out, n, fn);
}

static int64_t check_level(lua_State *L, int pos, int last, int opt, const char *fn) {
  int64_t v = mtl_opt_int(L, pos, last, opt, "compression_level", 6);
  if (v < 0 || v > 9) luaL_error(L, "%s: compression_level must be in 0..9, got %I", fn, (lua_Integer)v);
  return v;
}

static int64_t check_quality(lua_State *L, int pos, int last, int opt, const char *fn) {
  int64_t v = mtl_opt_int(L, pos, last, opt, "quality", 75);
  if (v < 1 || v > 100) luaL_error(L, "%s: quality must be in 1..100, got %I", fn, (lua_Integer)v);
  return v;
}

/* encode_png(img[, compression_level]) / encode_jpeg(img[, quality]) */
static int l_encode_png(lua_State *L) {
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  encode(L, 0, check_level(L, 2, last, opt, FN "encode_png"), FN "encode_png");
  return 1;
}

static int l_encode_jpeg(lua_State *L) {
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  encode(L, 1, check_quality(L, 2, last, opt, FN "encode_jpeg"), FN "encode_jpeg");
  return 1;
}

/* write_png(img, path[, compression_level]) / write_jpeg(img, path[, quality]) */
static int write_fn(lua_State *L, int jpeg, const char *fn) {
  const char *path = check_path(L, 2, fn);
  int opt = mtl_options_index(L, 3), last = opt ? opt - 1 : lua_gettop(L);
  int64_t param = jpeg ? check_quality(L, 3, last, opt, fn) : check_level(L, 3, last, opt, fn);
  encode(L, jpeg, param, fn);
  mt_tensor *t = mtl_check_tensor(L, -1, fn);
  spill(L, path, mt_data(t), (size_t)t->shape[0], fn);
  return 0;
}

static int l_write_png(lua_State *L) { return write_fn(L, 0, FN "write_png"); }
static int l_write_jpeg(lua_State *L) { return write_fn(L, 1, FN "write_jpeg"); }

/* _jpeg_orientation(data) -> the EXIF orientation the CUDA path reads */
static int l_jpeg_orientation(lua_State *L) {
  size_t n;
  const unsigned char *p = check_bytes(L, 1, &n, FN "_jpeg_orientation");
  lua_pushinteger(L, mtd_jpeg_orientation(p, n));
  return 1;
}

/* _nvjpeg_version() -> nvJPEG's version (major * 1000 + minor * 10 +
 * patch), or nil and the reason it does not load */
static int l_nvjpeg_version(lua_State *L) {
  const char *why;
  int v = mtd_nvjpeg_version(&why);
  if (v) {
    lua_pushinteger(L, v);
    return 1;
  }
  lua_pushnil(L);
  lua_pushstring(L, why);
  return 2;
}

static const mtl_reg regs[] = {
    {"_decode_png_libpng", l_decode_png_libpng, MTL_FN,
     "torch.vision.io._decode_png_libpng(data[, mode]) -- decode_png by libpng alone (tests; internal)", "mode"},
    {"_png_fast", l_png_fast, MTL_FN,
     "torch.vision.io._png_fast(data[, mode]) -- whether the fast PNG path decodes these bytes (tests; internal)"},
    {"_jpeg_orientation", l_jpeg_orientation, MTL_FN,
     "torch.vision.io._jpeg_orientation(data) -- the EXIF orientation 1..8 of JPEG bytes (1 when none; internal)"},
    {"_nvjpeg_version", l_nvjpeg_version, MTL_FN,
     "torch.vision.io._nvjpeg_version() -- nvJPEG's version as major*1000+minor*10+patch, or nil and why it does "
     "not load (internal)"},
    {"read_file", l_read_file, MTL_FN, "torch.vision.io.read_file(path) -- the bytes of a file as a uint8 1-D tensor"},
    {"write_file", l_write_file, MTL_FN,
     "torch.vision.io.write_file(path, data) -- write a uint8 1-D tensor's bytes to a file"},
    {"decode_png", l_decode_png, MTL_FN,
     "torch.vision.io.decode_png(data[, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=false]) -- PNG bytes "
     "(uint8 1-D) to a C x H x W uint8 image (int32 for 16-bit PNGs)",
     "mode apply_exif_orientation"},
    {"decode_jpeg", l_decode_jpeg, MTL_FN,
     "torch.vision.io.decode_jpeg(data[, mode=ImageReadMode.UNCHANGED, device='cpu', apply_exif_orientation=false]) "
     "-- JPEG bytes (uint8 1-D CPU tensor, or a list of them: a list back) to a C x H x W uint8 image; "
     "device='cuda' decodes with nvJPEG (lists as batches)",
     "mode device apply_exif_orientation"},
    {"decode_image", l_decode_image, MTL_FN,
     "torch.vision.io.decode_image(data[, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=false]) -- PNG or "
     "JPEG bytes (told apart by their signature) to a C x H x W image",
     "mode apply_exif_orientation"},
    {"read_image", l_read_image, MTL_FN,
     "torch.vision.io.read_image(path[, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=false]) -- read a "
     "PNG or JPEG file into a C x H x W image",
     "mode apply_exif_orientation"},
    {"encode_png", l_encode_png, MTL_FN,
     "torch.vision.io.encode_png(img[, compression_level=6]) -- a uint8 C x H x W image (C = 1..4) as PNG bytes "
     "(uint8 1-D)",
     "compression_level"},
    {"write_png", l_write_png, MTL_FN,
     "torch.vision.io.write_png(img, path[, compression_level=6]) -- write a uint8 C x H x W image as a PNG file",
     "compression_level"},
    {"encode_jpeg", l_encode_jpeg, MTL_FN,
     "torch.vision.io.encode_jpeg(img[, quality=75]) -- a uint8 C x H x W image (C = 1 or 3) as JPEG bytes "
     "(uint8 1-D)",
     "quality"},
    {"write_jpeg", l_write_jpeg, MTL_FN,
     "torch.vision.io.write_jpeg(img, path[, quality=75]) -- write a uint8 C x H x W image as a JPEG file", "quality"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._image" */
int luaopen_torch_vision__image(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
