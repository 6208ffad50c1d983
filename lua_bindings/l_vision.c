/* l_vision.c -- the engine's vision ops (tensor/vision.h) as torch._vision,
 * the private layer under the Lua packages torch.vision.ops
 * (domains/vision/ops/) and, for color_jitter and image_equalize, the v2
 * color transforms; they parse the public arguments, convert box formats
 * and validate options. Every call records through mtg_call, so autograd
 * and the JIT see the ops. Arguments are positional. */
#include "graph.h"
#include "mtl.h"

static mt_args roi_args(lua_State *L, int pos, const char *op) {
  mt_args a = {.ni = 8, .nf = 1};
  a.i[0] = luaL_checkinteger(L, pos);
  a.i[1] = luaL_checkinteger(L, pos + 1);
  a.f[0] = luaL_checknumber(L, pos + 2);
  a.i[2] = luaL_optinteger(L, pos + 3, -1);
  a.i[3] = lua_toboolean(L, pos + 4);
  return a;
}

/* _vision.roi_align(input, rois, ph, pw, spatial_scale, sampling_ratio, aligned) */
static int l_roi_align(lua_State *L) {
  const char *op = "roi_align";
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op)};
  mt_args a = roi_args(L, 3, op);
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_roi_align, ins, 2, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

/* _vision.roi_align_backward(grad, rois, input_shape, ph, pw, spatial_scale, sampling_ratio, aligned) */
static int l_roi_align_backward(lua_State *L) {
  const char *op = "roi_align_backward";
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op)};
  int64_t shape[MT_MAXDIM];
  luaL_checktype(L, 3, LUA_TTABLE);
  if (mtl_size(L, 3, 3, shape, op) != 4) return luaL_error(L, "%s: input_shape must have 4 sizes", op);
  mt_args a = roi_args(L, 4, op);
  for (int k = 0; k < 4; k++) a.i[4 + k] = shape[k];
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_roi_align_backward, ins, 2, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

/* _vision.roi_pool(input, rois, ph, pw, spatial_scale) -> out, argmax */
static int l_roi_pool(lua_State *L) {
  const char *op = "roi_pool";
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op)};
  mt_args a = roi_args(L, 3, op);
  mt_tensor *outs[2] = {NULL, NULL};
  MTL_CHECK(L, mtg_call(MT_OP_roi_pool, ins, 2, &a, outs, 2));
  mtl_push_tensor(L, outs[0]);
  mtl_push_tensor(L, outs[1]);
  return 2;
}

/* _vision.roi_pool_backward(grad, argmax, input_shape) */
static int l_roi_pool_backward(lua_State *L) {
  const char *op = "roi_pool_backward";
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op)};
  int64_t shape[MT_MAXDIM];
  luaL_checktype(L, 3, LUA_TTABLE);
  if (mtl_size(L, 3, 3, shape, op) != 4) return luaL_error(L, "%s: input_shape must have 4 sizes", op);
  mt_args a = {.ni = 8, .nf = 1};
  for (int k = 0; k < 4; k++) a.i[4 + k] = shape[k];
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_roi_pool_backward, ins, 2, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

/* _vision.nms(boxes, scores, iou_threshold[, idxs]) -> keep (1-based) */
static int l_nms(lua_State *L) {
  const char *op = lua_isnoneornil(L, 4) ? "nms" : "batched_nms";
  const mt_tensor *ins[3] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op), NULL};
  mt_args a = {.nf = 1};
  a.f[0] = luaL_checknumber(L, 3);
  if (!lua_isnoneornil(L, 4)) ins[2] = mtl_check_tensor(L, 4, op);
  mt_tensor *k = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_nms, ins, ins[2] ? 3 : 2, &a, &k, 1));
  mtl_push_tensor(L, k);
  return 1;
}

/* _vision.color_jitter(x, factors, order) */
static int l_color_jitter(lua_State *L) {
  const char *op = "color_jitter";
  const mt_tensor *ins[3] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op), mtl_check_tensor(L, 3, op)};
  mt_args a = {0};
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_color_jitter, ins, 3, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

/* _vision.image_equalize(x) */
static int l_image_equalize(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "image_equalize");
  mt_args a = {0};
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_image_equalize, &x, 1, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

static const mtl_reg regs[] = {
    {"roi_align", l_roi_align, MTL_FN,
     "torch._vision.roi_align(input, rois, ph, pw, spatial_scale[, sampling_ratio=-1, aligned=false]) -- internal: "
     "RoI Align (rois K x 5, 1-based batch column)"},
    {"roi_align_backward", l_roi_align_backward, MTL_FN,
     "torch._vision.roi_align_backward(grad, rois, input_shape, ph, pw, spatial_scale[, sampling_ratio, aligned]) "
     "-- internal (autograd): gradient of roi_align wrt its input"},
    {"roi_pool", l_roi_pool, MTL_FN,
     "torch._vision.roi_pool(input, rois, ph, pw, spatial_scale) -- internal: RoI max pooling; out and argmax"},
    {"roi_pool_backward", l_roi_pool_backward, MTL_FN,
     "torch._vision.roi_pool_backward(grad, argmax, input_shape) -- internal (autograd): gradient of roi_pool"},
    {"nms", l_nms, MTL_FN,
     "torch._vision.nms(boxes, scores, iou_threshold[, idxs]) -- internal: greedy NMS, 1-based keep indices"},
    {"color_jitter", l_color_jitter, MTL_FN,
     "torch._vision.color_jitter(x, factors, order) -- internal (torch.vision's ColorJitter): images x [N, 3, H, "
     "W] (uint8 or float32, CPU) through the steps of order [N, K] (int64 codes 1 brightness, 2 contrast, 3 "
     "saturation, 4 hue, 0 none) with factors [N, 4], in one kernel"},
    {"image_equalize", l_image_equalize, MTL_FN,
     "torch._vision.image_equalize(x) -- internal (torch.vision's equalize): each plane of the uint8 image x [..., H, "
     "W] (CPU) histogram-equalized with PIL's lookup table"},
    {NULL, NULL, 0, NULL}};

void mtl_open_vision(lua_State *L, int torch_idx, int methods_idx) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, regs);
  lua_setfield(L, torch_idx, "_vision");
}
