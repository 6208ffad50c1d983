/* l_warp.c -- the C half of the v2 warps' CPU fast path
 * (transforms/v2/functional/_warp_geom.lua): sample(img, grid, bilinear,
 * fill) over warp.c. The Lua side passes contiguous CPU tensors of the
 * dtypes warp.h names and takes the engine-op path otherwise (CUDA,
 * autograd, torch.compile); this file checks them again and never crashes
 * on bad input. */
#include <string.h>

#include "mtl.h"
#include "warp.h"

#define FN "torch.vision._warp.sample"

/* The tensor at idx: a contiguous CPU tensor of rank ndim. */
static mt_tensor *check_t(lua_State *L, int idx, int ndim, const char *what) {
  mt_tensor *t = mtl_check_tensor(L, idx, FN);
  if (t->ndim != ndim || mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t))
    luaL_error(L, "%s: the %s must be a contiguous %d-D CPU tensor", FN, what, ndim);
  return t;
}

/* The fill at idx (nil: none) as c values in buf. */
static const double *check_fill(lua_State *L, int idx, int64_t c, double *buf) {
  if (lua_isnoneornil(L, idx)) return NULL;
  luaL_checktype(L, idx, LUA_TTABLE);
  if (c > 64 || (int64_t)lua_rawlen(L, idx) != c)
    luaL_error(L, "%s: fill must hold one value per channel (%I, at most 64)", FN, (lua_Integer)c);
  for (int64_t k = 0; k < c; k++) {
    lua_rawgeti(L, idx, (lua_Integer)k + 1);
    buf[k] = luaL_checknumber(L, -1);
    lua_pop(L, 1);
  }
  return buf;
}

/* sample(img [B, C, H, W], grid, bilinear, fill[, kind, oh, ow]) -> [B, C, oh, ow]:
 * kind "grid" (default; grid [G, oh, ow, 2]), "affine" (grid [G, 6]) or
 * "perspective" (grid [G, 8]), the coefficient rows of warp.h; fn: the
 * fast sampler or the reference */
static int sample_with(lua_State *L, mt_status (*fn)(const mtd_warp *)) {
  mt_tensor *img = check_t(L, 1, 4, "image");
  int kind = MTD_WARP_GRID;
  if (!lua_isnoneornil(L, 5)) kind = mtl_check_choice(L, 5, FN, "kind", "grid affine perspective");
  mt_tensor *grid = check_t(L, 2, kind == MTD_WARP_GRID ? 4 : 2, "grid");
  int bilinear = lua_toboolean(L, 3);
  int64_t B = img->shape[0], C = img->shape[1], G = grid->shape[0];
  int64_t oh, ow;
  if (kind == MTD_WARP_GRID) {
    if (grid->shape[3] != 2) luaL_error(L, "%s: the grid must be G x OH x OW x 2", FN);
    oh = grid->shape[1], ow = grid->shape[2];
  } else {
    if (grid->shape[1] != (kind == MTD_WARP_AFFINE ? 6 : 8))
      luaL_error(L, "%s: expected %d coefficients per row", FN, kind == MTD_WARP_AFFINE ? 6 : 8);
    oh = luaL_checkinteger(L, 6), ow = luaL_checkinteger(L, 7);
    if (oh < 1 || ow < 1) luaL_error(L, "%s: the output size must be positive", FN);
  }
  if (G < 1 || B % G != 0) luaL_error(L, "%s: %I grids do not divide the batch of %I", FN, (lua_Integer)G,
                                      (lua_Integer)B);
  double buf[64];
  const double *fp = check_fill(L, 4, C, buf);
  int64_t shape[4] = {B, C, oh, ow};
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, FN, mt_empty(shape, 4, (mt_dtype)img->dtype, mt_cpu(), &out));
  mtd_warp p = {.img = img, .grid = grid, .out = out, .bilinear = bilinear, .fill = fp, .kind = kind};
  mt_status st = fn(&p);
  if (st != MT_OK) mtl_fail(L, st, out, NULL, NULL, NULL);
  mtl_push_tensor(L, out);
  return 1;
}

static int l_sample(lua_State *L) { return sample_with(L, mtd_warp_sample); }
static int l_sample_ref(lua_State *L) { return sample_with(L, mtd_warp_sample_ref); }

static const mtl_reg regs[] = {
    {"sample", l_sample, MTL_FN,
     "torch.vision._warp.sample(img, grid, bilinear, fill[, kind, oh, ow]) -- grid sampling of a contiguous CPU "
     "image batch (uint8, float32, float64) at a grid or affine/perspective coefficients, with torchvision's fill rule"},
    {"sample_ref", l_sample_ref, MTL_FN,
     "torch.vision._warp.sample_ref(...) -- sample's values from the plain scalar loop, for tests comparing the two"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._warp" */
int luaopen_torch_vision__warp(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
