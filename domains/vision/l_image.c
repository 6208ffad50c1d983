/* l_image.c -- the C half of torch.vision.io's image functions (io.lua):
 * files to byte tensors and back, PNG/JPEG/WebP bytes to C x H x W tensors
 * (image_decode.c; JPEG on CUDA: jpeg_cuda.c) and back (png.c, jpeg.c).
 * This file moves values between Lua and them, and frees what it owns
 * before raising. */
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

/* Decodes the bytes as `format` (MTD_ANY: sniffed) and pushes the image as
 * a C x H x W tensor (a view of the decoder's H x W x C pixels unless turned
 * upright); errors read "fn: [path: ]reason". */
static int decode(lua_State *L, const unsigned char *p, size_t n, int format, int mode, int orient, const char *fn,
                  const char *path) {
  /* large baseline JPEGs are decoded in parts on torch.get_num_threads()
   * threads (docs/image_decode.md); DataLoader workers run on one */
  int nt = mt_get_num_threads();
  mt_tensor *t = NULL;
  mt_status st = mtd_decode_tensor(p, n, format, mode, orient, nt, MAX_BYTES, &t);
  if (st) return luaL_error(L, "%s: %s%s%s", fn, path ? path : "", path ? ": " : "", mt_errmsg());
  mtl_push_tensor(L, t);
  return 1;
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

static int l_decode_png(lua_State *L) { return decode_fn(L, MTD_PNG, FN "decode_png"); }
static int l_decode_png_libpng(lua_State *L) { return decode_fn(L, MTD_PNG_LIBPNG, FN "_decode_png_libpng"); }
static int l_decode_webp(lua_State *L) { return decode_fn(L, MTD_WEBP, FN "decode_webp"); }

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
static int l_decode_image(lua_State *L) { return decode_fn(L, MTD_ANY, FN "decode_image"); }

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
  static const unsigned char how[9] = {0, 0, 4, 6, 2, 1, 3, 7, 5}; /* as image_decode.c's source_of */
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
    return decode(L, p, n, MTD_JPEG, mode, orient, fn, NULL);
  }
  int count = (int)lua_rawlen(L, 1);
  lua_createtable(L, count, 0);
  int res = lua_gettop(L);
  for (int i = 1; i <= count; i++) {
    const unsigned char *p = list_item(L, i, &n, fn);
    decode(L, p, n, MTD_JPEG, mode, orient, fn, NULL);
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
  return decode(L, (const unsigned char *)s, n, MTD_ANY, mode, orient, fn, path);
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

/* The C x H x W CPU tensor at idx (uint8, or uint16 when wide is set) as
 * HWC samples in a userdata pushed on the stack (freed by the GC even if a
 * later step raises); C must be a bit of `chans` (bit c set: c channels
 * allowed). *depth: 8 or 16 bits per sample. */
static const void *check_image(lua_State *L, int idx, unsigned chans, int wide, const char *fn, int64_t *h, int64_t *w,
                               int *c, int *depth) {
  mt_tensor *t = mtl_check_tensor(L, idx, fn);
  bool ok = t->dtype == MT_UINT8 || (wide && t->dtype == MT_UINT16);
  if (!ok || t->ndim != 3 || mt_tdevice(t).type != MT_CPU)
    luaL_error(L, "%s: the image must be a %s CPU tensor of shape C x H x W, got a %d-D %s tensor", fn,
               wide ? "uint8 or uint16" : "uint8", t->ndim, mt_dtype_name(t->dtype));
  int64_t C = t->shape[0], H = t->shape[1], W = t->shape[2];
  if (C < 1 || C > 4 || !(chans & (1u << C)))
    luaL_error(L, "%s: the image has %I channels (expected %s)", fn, (lua_Integer)C,
               chans == 0x1e ? "1, 2, 3 or 4" : "1 or 3");
  if (H < 1 || W < 1) luaL_error(L, "%s: the image has no pixels (%I x %I)", fn, (lua_Integer)H, (lua_Integer)W);
  size_t es = mt_dtype_size((mt_dtype)t->dtype);
  if (mt_checked_numel(t->shape, 3) < 0 || (uint64_t)mt_numel(t) * es > MAX_BYTES)
    luaL_error(L, "%s: the image is too large", fn);
  char *out = lua_newuserdatauv(L, (size_t)mt_numel(t) * es, 0);
  const char *src = mt_data(t);
  for (int64_t k = 0; k < C; k++)
    for (int64_t y = 0; y < H; y++)
      for (int64_t x = 0; x < W; x++)
        memcpy(out + ((y * W + x) * C + k) * (int64_t)es,
               src + (k * t->strides[0] + y * t->strides[1] + x * t->strides[2]) * (int64_t)es, es);
  *h = H, *w = W, *c = (int)C, *depth = (int)es * 8;
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
  int c, depth;
  const void *pix = check_image(L, 1, jpeg ? 0x0a : 0x1e, !jpeg, fn, &h, &w, &c, &depth);
  unsigned char *out = NULL;
  size_t n = 0;
  mt_status st = jpeg ? mtd_jpeg_encode(pix, h, w, c, (int)param, &out, &n)
                      : mtd_png_encode_depth(pix, h, w, c, depth, (int)param, &out, &n);
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
     "(uint8 1-D) to a C x H x W uint8 image (uint16 for 16-bit PNGs)",
     "mode apply_exif_orientation"},
    {"decode_jpeg", l_decode_jpeg, MTL_FN,
     "torch.vision.io.decode_jpeg(data[, mode=ImageReadMode.UNCHANGED, device='cpu', apply_exif_orientation=false]) "
     "-- JPEG bytes (uint8 1-D CPU tensor, or a list of them: a list back) to a C x H x W uint8 image; "
     "device='cuda' decodes with nvJPEG (lists as batches)",
     "mode device apply_exif_orientation"},
    {"decode_webp", l_decode_webp, MTL_FN,
     "torch.vision.io.decode_webp(data[, mode=ImageReadMode.UNCHANGED]) -- WebP bytes (uint8 1-D; lossy or "
     "lossless, no animation) to a 3 x H x W RGB (4: RGBA when the file has alpha) uint8 image",
     "mode apply_exif_orientation"},
    {"decode_image", l_decode_image, MTL_FN,
     "torch.vision.io.decode_image(data[, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=false]) -- PNG, "
     "JPEG or WebP bytes (told apart by their signature) to a C x H x W image",
     "mode apply_exif_orientation"},
    {"read_image", l_read_image, MTL_FN,
     "torch.vision.io.read_image(path[, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=false]) -- read a "
     "PNG, JPEG or WebP file into a C x H x W image",
     "mode apply_exif_orientation"},
    {"encode_png", l_encode_png, MTL_FN,
     "torch.vision.io.encode_png(img[, compression_level=6]) -- a uint8 (8-bit PNG) or uint16 (16-bit PNG) C x H x "
     "W image (C = 1..4) as PNG bytes (uint8 1-D)",
     "compression_level"},
    {"write_png", l_write_png, MTL_FN,
     "torch.vision.io.write_png(img, path[, compression_level=6]) -- write a uint8 or uint16 C x H x W image as a "
     "PNG file (16-bit for uint16)",
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
