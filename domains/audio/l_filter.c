/* l_filter.c -- torch.audio._filter: the engine's audio filter ops
 * (tensor/audio.h) for torch.audio.functional's filters
 * (functional/_filtering.lua), which reshape the waveform and coefficients
 * into the ops' layouts. Every call records through mtg_call, so autograd
 * sees the ops. Arguments are positional. */
#include "graph.h"
#include "mtl.h"

/* _filter.lfilter(x, a, b[, zi, mode, reverse]) */
static int l_lfilter(lua_State *L) {
  const char *op = "lfilter";
  const mt_tensor *ins[4] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op), mtl_check_tensor(L, 3, op),
                             NULL};
  if (!lua_isnoneornil(L, 4)) ins[3] = mtl_check_tensor(L, 4, op);
  mt_args a = {.ni = 2};
  a.i[0] = luaL_optinteger(L, 5, 0);
  a.i[1] = lua_toboolean(L, 6);
  if (a.i[0] < 0 || a.i[0] > 2) return luaL_error(L, "%s: mode must be 0, 1 or 2, got %d", op, (int)a.i[0]);
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_lfilter, ins, ins[3] ? 4 : 3, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

/* _filter.lfilter_corr(w, x, K[, reverse]) */
static int l_lfilter_corr(lua_State *L) {
  const char *op = "lfilter_corr";
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, op), mtl_check_tensor(L, 2, op)};
  mt_args a = {.ni = 2};
  a.i[0] = luaL_checkinteger(L, 3);
  a.i[1] = lua_toboolean(L, 4);
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(MT_OP_lfilter_corr, ins, 2, &a, &y, 1));
  mtl_push_tensor(L, y);
  return 1;
}

static const mtl_reg regs[] = {
    {"lfilter", l_lfilter, MTL_FN,
     "torch.audio._filter.lfilter(x, a, b[, zi, mode=0, reverse=false]) -- internal: x [N, C, T] through filter c of "
     "a, b [C, K] on channel c, from the direct-form-I state zi [N, C, 2(K-1)] (nil: zeros); mode 1 FIR only, 2 "
     "IIR only; reverse: time runs backwards"},
    {"lfilter_corr", l_lfilter_corr, MTL_FN,
     "torch.audio._filter.lfilter_corr(w, x, K[, reverse]) -- internal (autograd of lfilter): [C, K] sums of w[n, c, "
     "t] x[n, c, t - k]"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._filter" */
int luaopen_torch_audio__filter(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
