/* l_attention.c -- Lua bindings of scaled dot product attention: the public
 * op (backend picked by graph/attention.c), the backends called directly
 * (tests, benchmarks), the flash backward op, and the backend switches that
 * lua/torch/backends.lua wraps in torch.backends.sdp_kernel. */
#include <math.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"

typedef struct sdpa_args {
  mt_tensor *q, *k, *v, *mask;
  mt_sdpa_opts o;
} sdpa_args;

/* (q, k, v[, attn_mask, dropout_p, is_causal, scale, enable_gqa]) with the
 * optional ones by position or in a trailing options table from `first`. */
static void sdpa_opts(lua_State *L, int first, int pos0, const char *op, sdpa_args *a) {
  a->o = (mt_sdpa_opts){0}; /* fields set below; the rest (dropout's stream) start unset */
  int opt = mtl_options_index(L, first);
  if (!opt && lua_gettop(L) == first && lua_type(L, first) == LUA_TTABLE && !mtl_to_tensor(L, first))
    opt = first; /* an empty options table */
  int last = opt ? opt - 1 : lua_gettop(L);
  mtl_getarg(L, pos0, last, opt, "attn_mask");
  a->mask = NULL;
  if (!lua_isnil(L, -1)) {
    a->mask = mtl_to_tensor(L, -1);
    if (!a->mask) luaL_error(L, "%s: attn_mask must be a tensor or nil, got %s", op, luaL_typename(L, -1));
  }
  lua_pop(L, 1); /* the argument or the options table keeps it alive */
  a->o.dropout_p = mtl_opt_num(L, pos0 + 1, last, opt, "dropout_p", 0);
  a->o.is_causal = mtl_opt_bool(L, pos0 + 2, last, opt, "is_causal", 0);
  mtl_getarg(L, pos0 + 3, last, opt, "scale");
  a->o.scale = lua_isnil(L, -1) ? 0 : luaL_checknumber(L, -1);
  lua_pop(L, 1);
  if (!(a->o.scale >= 0) || isinf(a->o.scale))
    luaL_error(L, "%s: scale must be a positive number or nil (1/sqrt(E)), got %f", op, a->o.scale);
  a->o.enable_gqa = mtl_opt_bool(L, pos0 + 4, last, opt, "enable_gqa", 0);
}

static void sdpa_inputs(lua_State *L, const char *op, sdpa_args *a) {
  a->q = mtl_check_tensor(L, 1, op), a->k = mtl_check_tensor(L, 2, op), a->v = mtl_check_tensor(L, 3, op);
  sdpa_opts(L, 4, 4, op, a);
}

/* scaled_dot_product_attention(q, k, v[, {attn_mask=, dropout_p=, is_causal=, scale=, enable_gqa=}]) */
static int l_sdpa(lua_State *L) {
  sdpa_args a;
  sdpa_inputs(L, "scaled_dot_product_attention", &a);
  mt_tensor *r = NULL;
  MTL_CHECK(L, mtg_sdpa(a.q, a.k, a.v, a.mask, &a.o, &r));
  mtl_push_tensor(L, r);
  return 1;
}

static int l_sdpa_math(lua_State *L) {
  sdpa_args a;
  sdpa_inputs(L, "_sdpa_math", &a);
  mt_tensor *r = NULL;
  MTL_CHECK(L, mtg_sdpa_math(a.q, a.k, a.v, a.mask, &a.o, &r));
  mtl_push_tensor(L, r);
  return 1;
}

/* name(q, k, v[, opts]) -> out, lse through the fused backend op */
static int fused_forward(lua_State *L, const char *name, mt_op op) {
  sdpa_args a;
  sdpa_inputs(L, name, &a);
  mt_tensor *r = NULL, *lse = NULL;
  MTL_CHECK(L, mtg_sdpa_fused(op, a.q, a.k, a.v, a.mask, &a.o, &r, &lse));
  mtl_push_tensor(L, r);
  mtl_push_tensor(L, lse);
  return 2;
}

/* op(grad_out, q, k, v, out, lse[, {attn_mask=, is_causal=, scale=, enable_gqa=}]) -> dq, dk, dv */
static int fused_backward(lua_State *L, mt_op op) {
  const char *name = mt_ops[op].name;
  mt_tensor *g = mtl_check_tensor(L, 1, name);
  sdpa_args a;
  a.q = mtl_check_tensor(L, 2, name), a.k = mtl_check_tensor(L, 3, name), a.v = mtl_check_tensor(L, 4, name);
  mt_tensor *out = mtl_check_tensor(L, 5, name), *lse = mtl_check_tensor(L, 6, name);
  sdpa_opts(L, 7, 7, name, &a);
  mt_tensor *dq = NULL, *dk = NULL, *dv = NULL;
  MTL_CHECK(L, mtg_sdpa_fused_backward(op, g, a.q, a.k, a.v, a.mask, out, lse, &a.o, &dq, &dk, &dv));
  mtl_push_tensor(L, dq);
  mtl_push_tensor(L, dk);
  mtl_push_tensor(L, dv);
  return 3;
}

static int l_sdpa_flash(lua_State *L) { return fused_forward(L, "_sdpa_flash", MT_OP_sdpa_flash); }
static int l_sdpa_flash_backward(lua_State *L) { return fused_backward(L, MT_OP_sdpa_flash_backward); }
/* _sdpa_cudnn: through cuDNN (lse float32) */
static int l_sdpa_cudnn(lua_State *L) { return fused_forward(L, "_sdpa_cudnn", MT_OP_sdpa_cudnn); }
static int l_sdpa_cudnn_backward(lua_State *L) { return fused_backward(L, MT_OP_sdpa_cudnn_backward); }

static const char *backend_name(int b) {
  return b == MTG_SDPA_CUDNN ? "cudnn" : b == MTG_SDPA_FLASH ? "flash" : "math";
}

/* -> the backend's name and a list of "backend: why" notes for the
 * backends preferred to it that were passed over */
static int l_sdp_selected(lua_State *L) {
  sdpa_args a;
  sdpa_inputs(L, "sdp_selected", &a);
  int b = 0;
  char notes[800];
  MTL_CHECK(L, mtg_sdpa_select_notes(a.q, a.k, a.v, a.mask, &a.o, &b, notes, sizeof notes));
  lua_pushstring(L, backend_name(b));
  lua_newtable(L);
  int n = 0;
  for (char *line = notes; *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    lua_pushlstring(L, line, len);
    lua_rawseti(L, -2, ++n);
    line += len + (end != NULL);
  }
  return 2;
}

static const char *const KEYS[3] = {"flash", "math", "cudnn"};
static const unsigned FLAGS[3] = {MTG_SDPA_FLASH, MTG_SDPA_MATH, MTG_SDPA_CUDNN};

static void push_enabled(lua_State *L, unsigned bits) {
  lua_createtable(L, 0, 3);
  for (int i = 0; i < 3; i++) {
    lua_pushboolean(L, (bits & FLAGS[i]) != 0);
    lua_setfield(L, -2, KEYS[i]);
  }
}

/* _sdp_enabled([{flash=, math=, cudnn=}]) -> the previous {flash=, math=,
 * cudnn=}; absent keys keep their setting. */
static int l_sdp_enabled(lua_State *L) {
  unsigned bits = mtg_sdpa_enabled();
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *const *keys = KEYS;
    const unsigned *flags = FLAGS;
    unsigned now = bits;
    for (int i = 0; i < 3; i++) {
      mtl_optfield(L, 1, keys[i]);
      if (!lua_isnil(L, -1)) now = lua_toboolean(L, -1) ? now | flags[i] : now & ~flags[i];
      lua_pop(L, 1);
    }
    mtg_sdpa_set_enabled(now);
  }
  push_enabled(L, bits);
  return 1;
}

static int l_sdpa_blocks(lua_State *L) {
  int64_t bq, bk;
  mt_sdpa_get_blocks(&bq, &bk);
  if (!lua_isnoneornil(L, 1)) mt_sdpa_set_blocks(luaL_checkinteger(L, 1), luaL_optinteger(L, 2, 0));
  lua_pushinteger(L, bq);
  lua_pushinteger(L, bk);
  return 2;
}

#define SDPA_OPTS "{attn_mask=, dropout_p=0, is_causal=false, scale=1/sqrt(E), enable_gqa=false}"

static const mtl_reg regs[] = {
    {"scaled_dot_product_attention", l_sdpa, MTL_FN,
     "torch.scaled_dot_product_attention(q, k, v[, " SDPA_OPTS "]) -- softmax(q k^T * scale + mask) v; "
     "torch.backends.sdp_kernel picks the backends", "attn_mask dropout_p is_causal scale enable_gqa"},
    {"_sdpa_math", l_sdpa_math, MTL_FN,
     "torch._sdpa_math(q, k, v[, " SDPA_OPTS "]) -- internal: attention through the math backend (recorded ops)",
     "attn_mask dropout_p is_causal scale enable_gqa"},
    {"_sdpa_flash", l_sdpa_flash, MTL_FN,
     "torch._sdpa_flash(q, k, v[, " SDPA_OPTS "]) -- internal: out, lse through the flash backend (no dropout)",
     "attn_mask dropout_p is_causal scale enable_gqa"},
    {"_sdpa_cudnn", l_sdpa_cudnn, MTL_FN,
     "torch._sdpa_cudnn(q, k, v[, " SDPA_OPTS "]) -- internal: out, lse (float32) through cuDNN (CUDA float16 and "
     "bfloat16)", "attn_mask dropout_p is_causal scale enable_gqa"},
    {"_sdp_selected", l_sdp_selected, MTL_FN,
     "torch._sdp_selected(q, k, v[, " SDPA_OPTS "]) -- internal: 'cudnn', 'flash' or 'math', the backend that would "
     "run, and a list of 'backend: why' notes for the ones passed over",
     "attn_mask dropout_p is_causal scale enable_gqa"},
    {"_sdp_enabled", l_sdp_enabled, MTL_FN,
     "torch._sdp_enabled([{flash=, math=, cudnn=}]) -- internal: sets the attention backends of this thread; "
     "returns the previous {flash=, math=, cudnn=}", "flash math cudnn"},
    {"_sdpa_blocks", l_sdpa_blocks, MTL_FN,
     "torch._sdpa_blocks([bq, bk]) -- internal: the flash tile sizes (queries, keys) before setting new ones "
     "(0: default 64)"},
    {NULL, NULL, 0, NULL}};

static const mtl_reg backward_regs[] = {
    {"sdpa_flash", l_sdpa_flash_backward, MTL_FN,
     "torch._backward.sdpa_flash(grad_out, q, k, v, out, lse[, {attn_mask=, is_causal=, scale=, enable_gqa=}]) -- "
     "internal (autograd): dq, dk, dv of the flash backend", "attn_mask dropout_p is_causal scale enable_gqa"},
    {"sdpa_cudnn", l_sdpa_cudnn_backward, MTL_FN,
     "torch._backward.sdpa_cudnn(grad_out, q, k, v, out, lse[, {attn_mask=, is_causal=, scale=, enable_gqa=}]) -- "
     "internal (autograd): dq, dk, dv of the cuDNN backend", "attn_mask dropout_p is_causal scale enable_gqa"},
    {NULL, NULL, 0, NULL}};

void mtl_open_attention(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_getfield(L, torch_idx, "_backward"); /* made by mtl_open_nn, which runs first */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, torch_idx, "_backward");
  }
  mtl_register(L, lua_gettop(L), methods_idx, backward_regs);
  lua_pop(L, 1);
}
