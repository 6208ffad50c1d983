/* l_nn.c -- Lua bindings of the convolution, pooling and normalization ops
 * (tensor/nn.h): torch.conv1d/2d/3d, conv_transpose1d/2d/3d, max_pool*,
 * avg_pool*, adaptive pools, batch_norm, layer_norm, group_norm, and their
 * backward ops in torch._backward (internal: autograd's building blocks).
 * Optional arguments come in PyTorch's positional order or by name in a
 * trailing options table; sizes are an integer or a table of them. */
#include <string.h>

#include "mtl.h"
#include "graph.h"

/* Where a call's optional arguments are: positions up to last, table opt. */
typedef struct args {
  int opt, last;
} args;

static args get_args(lua_State *L, int first) {
  args a;
  a.opt = mtl_options_index(L, first);
  a.last = a.opt ? a.opt - 1 : lua_gettop(L);
  return a;
}

/* Reads an int-or-list argument (pos / option name) into v[0..n): a number
 * repeats, a list must have n entries (or 1). Absent: dflt. */
static void sizes_arg(lua_State *L, const args *a, int pos, const char *name, const char *op, int n, int64_t dflt,
                      int64_t *v) {
  mtl_getarg(L, pos, a->last, a->opt, name);
  for (int i = 0; i < 3; i++) v[i] = dflt;
  if (lua_isinteger(L, -1)) {
    for (int i = 0; i < n; i++) v[i] = lua_tointeger(L, -1);
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    int len = (int)lua_rawlen(L, -1);
    if (len != n && len != 1) luaL_error(L, "%s: %s must be an integer or a list of %d integers, got %d", op, name, n, len);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, -1, len == 1 ? 1 : i + 1);
      if (!lua_isinteger(L, -1)) luaL_error(L, "%s: %s entries must be integers, got %s", op, name, luaL_typename(L, -1));
      v[i] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    luaL_error(L, "%s: %s must be an integer or a list of integers, got %s", op, name,
               lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

/* Optional tensor argument (pos / name): NULL when absent (borrowed). */
static mt_tensor *opt_tensor(lua_State *L, const args *a, int pos, const char *name, const char *op) {
  mtl_getarg(L, pos, a->last, a->opt, name);
  mt_tensor *t = NULL;
  if (!lua_isnil(L, -1)) {
    t = mtl_to_tensor(L, -1);
    if (!t) luaL_error(L, "%s: %s must be a tensor or nil, got %s", op, name, luaL_typename(L, -1));
  }
  lua_pop(L, 1); /* the argument or the options table keeps it alive */
  return t;
}

/* A shape argument (table of integers) at idx. */
static int shape_arg(lua_State *L, int idx, int64_t *shape, const char *op) {
  if (lua_type(L, idx) != LUA_TTABLE) luaL_error(L, "%s: expected a shape (table of integers), got %s", op, luaL_typename(L, idx));
  return mtl_size(L, idx, idx, shape, op);
}

/* ---- convolution ---- */

/* padding: integer(s), or "same" / "valid" (need the weight). */
static void padding_arg(lua_State *L, const args *a, int pos, const char *op, int nsp, const mt_tensor *w,
                        mt_conv_opts *o) {
  mtl_getarg(L, pos, a->last, a->opt, "padding");
  if (lua_type(L, -1) == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    if (strcmp(s, "valid") == 0) {
      /* zeros already */
    } else if (strcmp(s, "same") == 0) {
      MTL_CHECK(L, mt_conv_same_padding(op, w, o));
    } else {
      luaL_error(L, "%s: padding must be an integer, a list of integers, 'same' or 'valid', got '%s'", op, s);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  sizes_arg(L, a, pos, "padding", op, nsp, 0, o->pad);
  memcpy(o->pad_hi, o->pad, sizeof o->pad);
}

static int conv_nd(lua_State *L, int nsp, const char *op) {
  mt_tensor *x = mtl_check_tensor(L, 1, op), *w = mtl_check_tensor(L, 2, op);
  args a = get_args(L, 3);
  mt_tensor *bias = opt_tensor(L, &a, 3, "bias", op);
  mt_conv_opts o;
  mt_conv_opts_init(&o);
  if (w->ndim != nsp + 2)
    luaL_error(L, "%s: weight must have %d dimensions (out_channels, in_channels/groups, kernel...), got %d", op,
               nsp + 2, w->ndim);
  sizes_arg(L, &a, 4, "stride", op, nsp, 1, o.stride);
  sizes_arg(L, &a, 6, "dilation", op, nsp, 1, o.dilation);
  o.groups = mtl_opt_int(L, 7, a.last, a.opt, "groups", 1);
  padding_arg(L, &a, 5, op, nsp, w, &o);
  mt_tensor *given = mtl_opt_out(L, a.opt), *res = given;
  mt_status st = mtg_conv(MT_OP_convolution, x, w, bias, &o, NULL, 0, &res, 1);
  return mtl_push_result(L, st, res, a.opt, given);
}

static int l_conv1d(lua_State *L) { return conv_nd(L, 1, "conv1d"); }
static int l_conv2d(lua_State *L) { return conv_nd(L, 2, "conv2d"); }
static int l_conv3d(lua_State *L) { return conv_nd(L, 3, "conv3d"); }

/* conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation) */
static int conv_transpose_nd(lua_State *L, int nsp, const char *op) {
  mt_tensor *x = mtl_check_tensor(L, 1, op), *w = mtl_check_tensor(L, 2, op);
  args a = get_args(L, 3);
  mt_tensor *bias = opt_tensor(L, &a, 3, "bias", op);
  mt_conv_opts o;
  mt_conv_opts_init(&o);
  if (w->ndim != nsp + 2)
    luaL_error(L, "%s: weight must have %d dimensions (in_channels, out_channels/groups, kernel...), got %d", op,
               nsp + 2, w->ndim);
  sizes_arg(L, &a, 4, "stride", op, nsp, 1, o.stride);
  sizes_arg(L, &a, 5, "padding", op, nsp, 0, o.pad);
  memcpy(o.pad_hi, o.pad, sizeof o.pad);
  sizes_arg(L, &a, 6, "output_padding", op, nsp, 0, o.output_padding);
  o.groups = mtl_opt_int(L, 7, a.last, a.opt, "groups", 1);
  sizes_arg(L, &a, 8, "dilation", op, nsp, 1, o.dilation);
  mt_tensor *given = mtl_opt_out(L, a.opt), *res = given;
  mt_status st = mtg_conv(MT_OP_conv_transpose, x, w, bias, &o, NULL, 0, &res, 1);
  return mtl_push_result(L, st, res, a.opt, given);
}

static int l_conv_transpose1d(lua_State *L) { return conv_transpose_nd(L, 1, "conv_transpose1d"); }
static int l_conv_transpose2d(lua_State *L) { return conv_transpose_nd(L, 2, "conv_transpose2d"); }
static int l_conv_transpose3d(lua_State *L) { return conv_transpose_nd(L, 3, "conv_transpose3d"); }

/* Options of the conv backward ops: {stride=, padding=, dilation=, groups=}
 * (padding may be {lo...} with pad_hi= for asymmetric "same" padding) */
static void conv_opts_table(lua_State *L, const args *a, int nsp, const char *op, mt_conv_opts *o) {
  mt_conv_opts_init(o);
  sizes_arg(L, a, 0, "stride", op, nsp, 1, o->stride);
  sizes_arg(L, a, 0, "padding", op, nsp, 0, o->pad);
  memcpy(o->pad_hi, o->pad, sizeof o->pad);
  if (a->opt) {
    mtl_optfield(L, a->opt, "pad_hi");
    bool has = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has) sizes_arg(L, a, 0, "pad_hi", op, nsp, 0, o->pad_hi);
  }
  sizes_arg(L, a, 0, "dilation", op, nsp, 1, o->dilation);
  o->groups = a->opt ? mtl_opt_int(L, 0, 0, a->opt, "groups", 1) : 1;
}

/* _backward.conv_input(grad_out, weight, input_shape[, opts]) */
static int l_conv_backward_input(lua_State *L) {
  const char *op = "conv_backward_input";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *w = mtl_check_tensor(L, 2, op);
  int64_t shape[MT_MAXDIM];
  int nd = shape_arg(L, 3, shape, op);
  args a = get_args(L, 4);
  mt_conv_opts o;
  conv_opts_table(L, &a, w->ndim - 2 > 0 ? w->ndim - 2 : 1, op, &o);
  mt_tensor *res = NULL;
  mt_status st = mtg_conv(MT_OP_conv_backward_input, g, w, NULL, &o, shape, nd, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* _backward.conv_weight(grad_out, input, weight_shape[, opts]) -> grad_w, grad_b */
static int l_conv_backward_weight(lua_State *L) {
  const char *op = "conv_backward_weight";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *x = mtl_check_tensor(L, 2, op);
  int64_t shape[MT_MAXDIM];
  int nd = shape_arg(L, 3, shape, op);
  args a = get_args(L, 4);
  mt_conv_opts o;
  conv_opts_table(L, &a, nd - 2 > 0 ? nd - 2 : 1, op, &o);
  mt_tensor *r[2] = {NULL, NULL};
  MTL_CHECK(L, mtg_conv(MT_OP_conv_backward_weight, g, x, NULL, &o, shape, nd, r, 2));
  mtl_push_tensor(L, r[0]);
  mtl_push_tensor(L, r[1]);
  return 2;
}

/* ---- pooling ---- */

static void pool_common(lua_State *L, const args *a, int nsp, const char *op, mt_pool_opts *o, int kpos) {
  memset(o, 0, sizeof *o);
  o->nsp = nsp;
  mtl_getarg(L, kpos, a->last, a->opt, "kernel_size");
  if (lua_isnil(L, -1)) luaL_error(L, "%s: kernel_size is required", op);
  lua_pop(L, 1);
  sizes_arg(L, a, kpos, "kernel_size", op, nsp, 1, o->kernel);
  sizes_arg(L, a, kpos + 1, "stride", op, nsp, 0, o->stride);
  sizes_arg(L, a, kpos + 2, "padding", op, nsp, 0, o->pad);
}

/* max_poolNd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices) */
static int max_pool_nd(lua_State *L, int nsp, const char *op, bool with_indices) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  args a = get_args(L, 2);
  mt_pool_opts o;
  pool_common(L, &a, nsp, op, &o, 2);
  sizes_arg(L, &a, 5, "dilation", op, nsp, 1, o.dilation);
  o.ceil_mode = mtl_opt_bool(L, 6, a.last, a.opt, "ceil_mode", 0);
  bool ri = with_indices || mtl_opt_bool(L, 7, a.last, a.opt, "return_indices", 0);
  mt_tensor *r[2] = {NULL, NULL};
  MTL_CHECK(L, mtg_pool(MT_OP_max_pool, x, NULL, &o, o.nsp, NULL, 0, r, ri ? 2 : 1));
  mtl_push_tensor(L, r[0]);
  if (!ri) return 1;
  mtl_push_tensor(L, r[1]);
  return 2;
}

static int l_max_pool1d(lua_State *L) { return max_pool_nd(L, 1, "max_pool1d", false); }
static int l_max_pool2d(lua_State *L) { return max_pool_nd(L, 2, "max_pool2d", false); }
static int l_max_pool3d(lua_State *L) { return max_pool_nd(L, 3, "max_pool3d", false); }
static int l_max_pool1d_wi(lua_State *L) { return max_pool_nd(L, 1, "max_pool1d_with_indices", true); }
static int l_max_pool2d_wi(lua_State *L) { return max_pool_nd(L, 2, "max_pool2d_with_indices", true); }
static int l_max_pool3d_wi(lua_State *L) { return max_pool_nd(L, 3, "max_pool3d_with_indices", true); }

/* avg_poolNd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) */
static void avg_opts(lua_State *L, const args *a, int nsp, const char *op, mt_pool_opts *o, int kpos) {
  pool_common(L, a, nsp, op, o, kpos);
  for (int i = 0; i < 3; i++) o->dilation[i] = 1;
  o->ceil_mode = mtl_opt_bool(L, kpos + 3, a->last, a->opt, "ceil_mode", 0);
  o->count_include_pad = mtl_opt_bool(L, kpos + 4, a->last, a->opt, "count_include_pad", 1);
  mtl_getarg(L, kpos + 5, a->last, a->opt, "divisor_override");
  if (!lua_isnil(L, -1)) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) <= 0)
      luaL_error(L, "%s: divisor_override must be a positive integer, got %s", op,
                 lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
    o->divisor_override = lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
}

static int avg_pool_nd(lua_State *L, int nsp, const char *op) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  args a = get_args(L, 2);
  mt_pool_opts o;
  avg_opts(L, &a, nsp, op, &o, 2);
  mt_tensor *given = mtl_opt_out(L, a.opt), *res = given;
  mt_status st = mtg_pool(MT_OP_avg_pool, x, NULL, &o, o.nsp, NULL, 0, &res, 1);
  return mtl_push_result(L, st, res, a.opt, given);
}

static int l_avg_pool1d(lua_State *L) { return avg_pool_nd(L, 1, "avg_pool1d"); }
static int l_avg_pool2d(lua_State *L) { return avg_pool_nd(L, 2, "avg_pool2d"); }
static int l_avg_pool3d(lua_State *L) { return avg_pool_nd(L, 3, "avg_pool3d"); }

/* output_size: an integer or a list; false keeps that input size (None) */
static void output_size_arg(lua_State *L, const mt_tensor *x, int nsp, const char *op, int64_t *size) {
  if (lua_isinteger(L, 2)) {
    for (int i = 0; i < nsp; i++) size[i] = lua_tointeger(L, 2);
    return;
  }
  if (lua_type(L, 2) != LUA_TTABLE || (int)lua_rawlen(L, 2) != nsp)
    luaL_error(L, "%s: output_size must be an integer or a list of %d entries", op, nsp);
  for (int i = 0; i < nsp; i++) {
    lua_rawgeti(L, 2, i + 1);
    if (lua_isboolean(L, -1) && !lua_toboolean(L, -1)) {
      if (x->ndim < nsp) luaL_error(L, "%s: input has too few dimensions", op);
      size[i] = x->shape[x->ndim - nsp + i];
    } else if (lua_isinteger(L, -1)) {
      size[i] = lua_tointeger(L, -1);
    } else {
      luaL_error(L, "%s: output_size entries must be integers (or false for the input's size)", op);
    }
    lua_pop(L, 1);
  }
}

static int adaptive_avg_nd(lua_State *L, int nsp, const char *op) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int64_t size[3];
  output_size_arg(L, x, nsp, op, size);
  mt_tensor *res = NULL;
  mt_status st = mtg_pool(MT_OP_adaptive_avg_pool, x, NULL, NULL, nsp, size, nsp, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

static int l_adaptive_avg_pool1d(lua_State *L) { return adaptive_avg_nd(L, 1, "adaptive_avg_pool1d"); }
static int l_adaptive_avg_pool2d(lua_State *L) { return adaptive_avg_nd(L, 2, "adaptive_avg_pool2d"); }
static int l_adaptive_avg_pool3d(lua_State *L) { return adaptive_avg_nd(L, 3, "adaptive_avg_pool3d"); }

static int adaptive_max_nd(lua_State *L, int nsp, const char *op) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int64_t size[3];
  output_size_arg(L, x, nsp, op, size);
  mt_tensor *r[2] = {NULL, NULL};
  MTL_CHECK(L, mtg_pool(MT_OP_adaptive_max_pool, x, NULL, NULL, nsp, size, nsp, r, 2));
  mtl_push_tensor(L, r[0]);
  mtl_push_tensor(L, r[1]);
  return 2;
}

static int l_adaptive_max_pool1d(lua_State *L) { return adaptive_max_nd(L, 1, "adaptive_max_pool1d"); }
static int l_adaptive_max_pool2d(lua_State *L) { return adaptive_max_nd(L, 2, "adaptive_max_pool2d"); }
static int l_adaptive_max_pool3d(lua_State *L) { return adaptive_max_nd(L, 3, "adaptive_max_pool3d"); }

static int nsp_arg(lua_State *L, int idx, const char *op) {
  lua_Integer n = luaL_checkinteger(L, idx);
  if (n < 1 || n > 3) luaL_error(L, "%s: the number of spatial dims must be 1, 2 or 3, got %d", op, (int)n);
  return (int)n;
}

/* _backward.max_pool(grad_out, indices, input_shape, nsp) */
static int l_max_pool_backward(lua_State *L) {
  const char *op = "max_pool_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *ix = mtl_check_tensor(L, 2, op);
  int64_t shape[MT_MAXDIM];
  int nd = shape_arg(L, 3, shape, op), nsp = nsp_arg(L, 4, op);
  mt_tensor *res = NULL;
  mt_status st = mtg_pool(MT_OP_max_pool_backward, g, ix, NULL, nsp, shape, nd, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* _backward.avg_pool(grad_out, input_shape, nsp, kernel_size[, stride, padding, ceil_mode, count_include_pad,
 * divisor_override]) */
static int l_avg_pool_backward(lua_State *L) {
  const char *op = "avg_pool_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op);
  int64_t shape[MT_MAXDIM];
  int nd = shape_arg(L, 2, shape, op), nsp = nsp_arg(L, 3, op);
  args a = get_args(L, 4);
  mt_pool_opts o;
  avg_opts(L, &a, nsp, op, &o, 4);
  mt_tensor *res = NULL;
  mt_status st = mtg_pool(MT_OP_avg_pool_backward, g, NULL, &o, nsp, shape, nd, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* _backward.adaptive_avg_pool(grad_out, input_shape, nsp) */
static int l_adaptive_avg_pool_backward(lua_State *L) {
  const char *op = "adaptive_avg_pool_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op);
  int64_t shape[MT_MAXDIM];
  int nd = shape_arg(L, 2, shape, op), nsp = nsp_arg(L, 3, op);
  mt_tensor *res = NULL;
  mt_status st = mtg_pool(MT_OP_adaptive_avg_pool_backward, g, NULL, NULL, nsp, shape, nd, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* ---- image resampling (tensor/resize.h), torch.vision's resize ---- */

static int mode_arg(lua_State *L, int idx, const char *op) {
  static const char *const names[] = {"nearest", "nearest-exact", "bilinear", "bicubic", NULL};
  const char *m = luaL_checkstring(L, idx);
  for (int i = 0; names[i]; i++)
    if (strcmp(m, names[i]) == 0) return i;
  return luaL_error(L, "%s: unknown interpolation mode '%s' (nearest, nearest-exact, bilinear, bicubic)", op, m);
}

/* the call of op on ins with i = {a, b, mode, antialias} from args first.. */
static int resize_call(lua_State *L, mt_op op, const char *name, mt_tensor **ins, int nin, int first) {
  mt_args a = {.i = {luaL_checkinteger(L, first), luaL_checkinteger(L, first + 1), mode_arg(L, first + 2, name),
                     lua_toboolean(L, first + 3)},
               .ni = 4};
  mt_tensor *res = NULL;
  mt_status st = mtg_call(op, (const mt_tensor *const *)ins, nin, &a, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* _image_resize(x, oh, ow, mode, antialias) */
static int l_image_resize(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "resize");
  return resize_call(L, MT_OP_image_resize, "resize", &x, 1, 2);
}

/* _backward.image_resize(g, ih, iw, mode, antialias) */
static int l_image_resize_backward(lua_State *L) {
  mt_tensor *g = mtl_check_tensor(L, 1, "resize_backward");
  return resize_call(L, MT_OP_image_resize_backward, "resize_backward", &g, 1, 2);
}

/* _image_crop_resize(x, boxes, oh, ow, mode, antialias) */
static int l_image_crop_resize(lua_State *L) {
  mt_tensor *in[2] = {mtl_check_tensor(L, 1, "crop_resize"), mtl_check_tensor(L, 2, "crop_resize")};
  return resize_call(L, MT_OP_image_crop_resize, "crop_resize", in, 2, 3);
}

/* ---- normalization ---- */

/* batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) -> y, save_mean, save_invstd */
static int l_batch_norm(lua_State *L) {
  const char *op = "batch_norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  args a = get_args(L, 2);
  mt_tensor *w = opt_tensor(L, &a, 2, "weight", op), *b = opt_tensor(L, &a, 3, "bias", op);
  mt_tensor *rm = opt_tensor(L, &a, 4, "running_mean", op), *rv = opt_tensor(L, &a, 5, "running_var", op);
  int training = mtl_opt_bool(L, 6, a.last, a.opt, "training", 0);
  double momentum = mtl_opt_num(L, 7, a.last, a.opt, "momentum", 0.1), eps = mtl_opt_num(L, 8, a.last, a.opt, "eps", 1e-5);
  mt_tensor *y = NULL, *m = NULL, *inv = NULL;
  MTL_CHECK(L, mtg_batch_norm(x, w, b, rm, rv, training, momentum, eps, &y, &m, &inv));
  mtl_push_tensor(L, y);
  mtl_push_tensor(L, m);
  mtl_push_tensor(L, inv);
  return 3;
}

static void push3(lua_State *L, mt_tensor *a, mt_tensor *b, mt_tensor *c) {
  mt_tensor *t[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (t[i])
      mtl_push_tensor(L, t[i]);
    else
      lua_pushnil(L);
}

/* _backward.batch_norm(grad_out, input, weight, save_mean, save_invstd, training) -> gx, gw, gb */
static int l_batch_norm_backward(lua_State *L) {
  const char *op = "batch_norm_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *x = mtl_check_tensor(L, 2, op);
  args a = get_args(L, 3);
  mt_tensor *w = opt_tensor(L, &a, 3, "weight", op), *m = opt_tensor(L, &a, 4, "save_mean", op);
  mt_tensor *inv = opt_tensor(L, &a, 5, "save_invstd", op);
  int training = mtl_opt_bool(L, 6, a.last, a.opt, "training", 1);
  mt_tensor *gx = NULL, *gw = NULL, *gb = NULL;
  MTL_CHECK(L, mtg_norm_backward(MT_OP_batch_norm_backward, g, x, w, m, inv, training, &gx, &gw, &gb));
  push3(L, gx, gw, gb);
  return 3;
}

/* normalized_shape: an integer or a list; must match x's trailing dims */
static int nnorm_arg(lua_State *L, int idx, const mt_tensor *x, const char *op) {
  int64_t shape[MT_MAXDIM];
  int n;
  if (lua_isinteger(L, idx)) {
    shape[0] = lua_tointeger(L, idx);
    n = 1;
  } else {
    n = shape_arg(L, idx, shape, op);
  }
  char a[96], b[96];
  bool ok = n >= 1 && n <= x->ndim;
  for (int i = 0; ok && i < n; i++) ok = x->shape[x->ndim - n + i] == shape[i];
  if (!ok)
    luaL_error(L, "%s: normalized_shape %s does not match the trailing dims of input %s", op,
               mt_shape_str(shape, n, a, sizeof a), mt_shape_str(x->shape, x->ndim, b, sizeof b));
  return n;
}

/* layer_norm(input, normalized_shape, weight, bias, eps) -> y, mean, rstd */
static int l_layer_norm(lua_State *L) {
  const char *op = "layer_norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int n = nnorm_arg(L, 2, x, op);
  args a = get_args(L, 3);
  mt_tensor *w = opt_tensor(L, &a, 3, "weight", op), *b = opt_tensor(L, &a, 4, "bias", op);
  double eps = mtl_opt_num(L, 5, a.last, a.opt, "eps", 1e-5);
  mt_tensor *y = NULL, *m = NULL, *r = NULL;
  MTL_CHECK(L, mtg_norm(MT_OP_layer_norm, x, n, w, b, eps, &y, &m, &r));
  push3(L, y, m, r);
  return 3;
}

/* _backward.layer_norm(grad_out, input, normalized_shape, mean, rstd, weight) -> gx, gw, gb */
static int l_layer_norm_backward(lua_State *L) {
  const char *op = "layer_norm_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *x = mtl_check_tensor(L, 2, op);
  int n = nnorm_arg(L, 3, x, op);
  mt_tensor *m = mtl_check_tensor(L, 4, op), *r = mtl_check_tensor(L, 5, op);
  args a = get_args(L, 6);
  mt_tensor *w = opt_tensor(L, &a, 6, "weight", op);
  mt_tensor *gx = NULL, *gw = NULL, *gb = NULL;
  MTL_CHECK(L, mtg_norm_backward(MT_OP_layer_norm_backward, g, x, w, m, r, n, &gx, &gw, &gb));
  push3(L, gx, gw, gb);
  return 3;
}

/* group_norm(input, num_groups, weight, bias, eps) -> y, mean, rstd */
static int l_group_norm(lua_State *L) {
  const char *op = "group_norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  lua_Integer groups = luaL_checkinteger(L, 2);
  args a = get_args(L, 3);
  mt_tensor *w = opt_tensor(L, &a, 3, "weight", op), *b = opt_tensor(L, &a, 4, "bias", op);
  double eps = mtl_opt_num(L, 5, a.last, a.opt, "eps", 1e-5);
  mt_tensor *y = NULL, *m = NULL, *r = NULL;
  MTL_CHECK(L, mtg_norm(MT_OP_group_norm, x, groups, w, b, eps, &y, &m, &r));
  push3(L, y, m, r);
  return 3;
}

/* _backward.group_norm(grad_out, input, num_groups, mean, rstd, weight) -> gx, gw, gb */
static int l_group_norm_backward(lua_State *L) {
  const char *op = "group_norm_backward";
  mt_tensor *g = mtl_check_tensor(L, 1, op), *x = mtl_check_tensor(L, 2, op);
  lua_Integer groups = luaL_checkinteger(L, 3);
  mt_tensor *m = mtl_check_tensor(L, 4, op), *r = mtl_check_tensor(L, 5, op);
  args a = get_args(L, 6);
  mt_tensor *w = opt_tensor(L, &a, 6, "weight", op);
  mt_tensor *gx = NULL, *gw = NULL, *gb = NULL;
  MTL_CHECK(L, mtg_norm_backward(MT_OP_group_norm_backward, g, x, w, m, r, groups, &gx, &gw, &gb));
  push3(L, gx, gw, gb);
  return 3;
}

/* torch._conv_algorithm(input, weight[, {stride=, padding=, dilation=, groups=}]) */
static int l_conv_algorithm(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "_conv_algorithm"), *w = mtl_check_tensor(L, 2, "_conv_algorithm");
  args a = get_args(L, 3);
  mt_conv_opts o;
  conv_opts_table(L, &a, w->ndim > 2 ? w->ndim - 2 : 1, "_conv_algorithm", &o);
  const char *s = mt_conv_algorithm(x, w, &o);
  if (!s) MTL_CHECK(L, MT_EARG);
  lua_pushstring(L, s);
  return 1;
}

#define CONV_HELP(n, d)                                                                                                \
  "torch.conv" n "(input, weight[, bias, stride=1, padding=0, dilation=1, groups=1]) -- " d                            \
  " convolution; padding may be 'same' or 'valid'; options by name in a trailing table"
#define CONVT_HELP(n)                                                                                                  \
  "torch.conv_transpose" n "(input, weight[, bias, stride=1, padding=0, output_padding=0, groups=1, dilation=1]) "    \
  "-- transposed convolution (weight: in, out/groups, kernel...)"
#define MAXP_HELP(n)                                                                                                   \
  "torch.max_pool" n "(input, kernel_size[, stride=kernel_size, padding=0, dilation=1, ceil_mode=false, "              \
  "return_indices=false]) -- max pooling; indices are 1-based positions in each plane"
#define AVGP_HELP(n)                                                                                                   \
  "torch.avg_pool" n "(input, kernel_size[, stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true, " \
  "divisor_override]) -- average pooling"

static const mtl_reg regs[] = {
    {"conv1d", l_conv1d, MTL_FN, CONV_HELP("1d", "1-D"), "bias stride padding dilation groups out"},
    {"conv2d", l_conv2d, MTL_FN, CONV_HELP("2d", "2-D"), "bias stride padding dilation groups out"},
    {"conv3d", l_conv3d, MTL_FN, CONV_HELP("3d", "3-D"), "bias stride padding dilation groups out"},
    {"conv_transpose1d", l_conv_transpose1d, MTL_FN, CONVT_HELP("1d"),
     "bias stride padding output_padding groups dilation out"},
    {"conv_transpose2d", l_conv_transpose2d, MTL_FN, CONVT_HELP("2d"),
     "bias stride padding output_padding groups dilation out"},
    {"conv_transpose3d", l_conv_transpose3d, MTL_FN, CONVT_HELP("3d"),
     "bias stride padding output_padding groups dilation out"},
    {"max_pool1d", l_max_pool1d, MTL_FN, MAXP_HELP("1d"),
     "kernel_size stride padding dilation ceil_mode return_indices"},
    {"max_pool2d", l_max_pool2d, MTL_FN, MAXP_HELP("2d"),
     "kernel_size stride padding dilation ceil_mode return_indices"},
    {"max_pool3d", l_max_pool3d, MTL_FN, MAXP_HELP("3d"),
     "kernel_size stride padding dilation ceil_mode return_indices"},
    {"max_pool1d_with_indices", l_max_pool1d_wi, MTL_FN,
     "torch.max_pool1d_with_indices(input, kernel_size, ...) -- max_pool1d returning values and 1-based indices",
     "kernel_size stride padding dilation ceil_mode"},
    {"max_pool2d_with_indices", l_max_pool2d_wi, MTL_FN,
     "torch.max_pool2d_with_indices(input, kernel_size, ...) -- max_pool2d returning values and 1-based indices",
     "kernel_size stride padding dilation ceil_mode"},
    {"max_pool3d_with_indices", l_max_pool3d_wi, MTL_FN,
     "torch.max_pool3d_with_indices(input, kernel_size, ...) -- max_pool3d returning values and 1-based indices",
     "kernel_size stride padding dilation ceil_mode"},
    {"avg_pool1d", l_avg_pool1d, MTL_FN, AVGP_HELP("1d"),
     "kernel_size stride padding ceil_mode count_include_pad divisor_override out"},
    {"avg_pool2d", l_avg_pool2d, MTL_FN, AVGP_HELP("2d"),
     "kernel_size stride padding ceil_mode count_include_pad divisor_override out"},
    {"avg_pool3d", l_avg_pool3d, MTL_FN, AVGP_HELP("3d"),
     "kernel_size stride padding ceil_mode count_include_pad divisor_override out"},
    {"adaptive_avg_pool1d", l_adaptive_avg_pool1d, MTL_FN,
     "torch.adaptive_avg_pool1d(input, output_size) -- average pooling to a given output length"},
    {"adaptive_avg_pool2d", l_adaptive_avg_pool2d, MTL_FN,
     "torch.adaptive_avg_pool2d(input, output_size) -- average pooling to a given size (an entry false keeps the "
     "input's)"},
    {"adaptive_avg_pool3d", l_adaptive_avg_pool3d, MTL_FN,
     "torch.adaptive_avg_pool3d(input, output_size) -- average pooling to a given 3-D size"},
    {"adaptive_max_pool1d", l_adaptive_max_pool1d, MTL_FN,
     "torch.adaptive_max_pool1d(input, output_size) -- max pooling to a given length: values, 1-based indices"},
    {"adaptive_max_pool2d", l_adaptive_max_pool2d, MTL_FN,
     "torch.adaptive_max_pool2d(input, output_size) -- max pooling to a given size: values, 1-based indices"},
    {"adaptive_max_pool3d", l_adaptive_max_pool3d, MTL_FN,
     "torch.adaptive_max_pool3d(input, output_size) -- max pooling to a given 3-D size: values, 1-based indices"},
    {"batch_norm", l_batch_norm, MTL_FN,
     "torch.batch_norm(input, weight, bias, running_mean, running_var[, training=false, momentum=0.1, eps=1e-5]) -- "
     "y, save_mean, save_invstd; training updates the running stats in place",
     "weight bias running_mean running_var training momentum eps"},
    {"layer_norm", l_layer_norm, MTL_FN,
     "torch.layer_norm(input, normalized_shape[, weight, bias, eps=1e-5]) -- y, mean, rstd over the trailing dims",
     "weight bias eps"},
    {"group_norm", l_group_norm, MTL_FN,
     "torch.group_norm(input, num_groups[, weight, bias, eps=1e-5]) -- y, mean, rstd per (sample, group)",
     "weight bias eps"},
    {"_conv_algorithm", l_conv_algorithm, MTL_FN,
     "torch._conv_algorithm(input, weight[, {stride=, padding=, dilation=, groups=}]) -- internal: how a conv of "
     "these shapes runs ('direct', 'gemm', 'winograd' or 'ref')", "stride padding pad_hi dilation groups"},
    {"_image_resize", l_image_resize, MTL_FN,
     "torch._image_resize(x, oh, ow, mode, antialias) -- internal (torch.vision): x [..., H, W] resampled to oh x ow "
     "(mode nearest, nearest-exact, bilinear or bicubic)"},
    {"_image_crop_resize", l_image_crop_resize, MTL_FN,
     "torch._image_crop_resize(x, boxes, oh, ow, mode, antialias) -- internal (torch.vision): image n of x [N, ..., H, "
     "W] cropped to boxes[n] = {top, left, height, width} (int64, 0-based) and resampled to oh x ow"},
    {NULL, NULL, 0, NULL}};

static const mtl_reg backward_regs[] = {
    {"conv_input", l_conv_backward_input, MTL_FN,
     "torch._backward.conv_input(grad_out, weight, input_shape[, {stride=, padding=, pad_hi=, dilation=, groups=}]) "
     "-- internal (autograd): gradient of a convolution wrt its input", "stride padding pad_hi dilation groups"},
    {"conv_weight", l_conv_backward_weight, MTL_FN,
     "torch._backward.conv_weight(grad_out, input, weight_shape[, {stride=, padding=, pad_hi=, dilation=, groups=}]) "
     "-- internal (autograd): gradients wrt weight and bias", "stride padding pad_hi dilation groups"},
    {"max_pool", l_max_pool_backward, MTL_FN,
     "torch._backward.max_pool(grad_out, indices, input_shape, nsp) -- internal (autograd): scatters grad_out to the "
     "max positions (max and adaptive max pools)"},
    {"avg_pool", l_avg_pool_backward, MTL_FN,
     "torch._backward.avg_pool(grad_out, input_shape, nsp, kernel_size[, stride, padding, ceil_mode, "
     "count_include_pad, divisor_override]) -- internal (autograd): gradient of avg_pool",
     "kernel_size stride padding ceil_mode count_include_pad divisor_override"},
    {"adaptive_avg_pool", l_adaptive_avg_pool_backward, MTL_FN,
     "torch._backward.adaptive_avg_pool(grad_out, input_shape, nsp) -- internal (autograd): gradient of "
     "adaptive_avg_pool"},
    {"image_resize", l_image_resize_backward, MTL_FN,
     "torch._backward.image_resize(grad_out, ih, iw, mode, antialias) -- internal (autograd): gradient of "
     "torch._image_resize"},
    {"batch_norm", l_batch_norm_backward, MTL_FN,
     "torch._backward.batch_norm(grad_out, input, weight, save_mean, save_invstd[, training=true]) -- internal "
     "(autograd): grad input, grad weight, grad bias", "weight save_mean save_invstd training"},
    {"layer_norm", l_layer_norm_backward, MTL_FN,
     "torch._backward.layer_norm(grad_out, input, normalized_shape, mean, rstd[, weight]) -- internal (autograd): "
     "grad input, grad weight, grad bias", "weight"},
    {"group_norm", l_group_norm_backward, MTL_FN,
     "torch._backward.group_norm(grad_out, input, num_groups, mean, rstd[, weight]) -- internal (autograd): grad "
     "input, grad weight, grad bias", "weight"},
    {NULL, NULL, 0, NULL}};

void mtl_open_nn(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_getfield(L, torch_idx, "_backward"); /* shared with other binding groups */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, torch_idx, "_backward");
  }
  mtl_register(L, lua_gettop(L), methods_idx, backward_regs);
  lua_pop(L, 1);
}
