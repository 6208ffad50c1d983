/* l_resample.c -- the C half of torch.audio's sinc resampling
 * (functional/_resampling.lua): the engine op audio_resample and its
 * adjoint, recorded for autograd and the JIT, and the filter's width (the
 * zeros torchaudio pads before the waveform, which streaming needs). The
 * Lua side builds the arguments; this file checks them again. */
#include "graph.h"
#include "mtl.h"
#include "resample.h"

#define FN "torch.audio._resample"

/* the method's name at idx: "sinc_interp_hann" or "sinc_interp_kaiser" */
static int64_t method_arg(lua_State *L, int idx) {
  return mtl_check_choice(L, idx, FN, "resampling_method", "sinc_interp_hann sinc_interp_kaiser");
}

/* args from (orig, new, lpw, method, pad_left, out_len, rolloff, beta,
 * design_f32) at first.. */
static mt_args call_args(lua_State *L, int first) {
  mt_args a = {.ni = 8, .nf = 2};
  for (int k = 0; k < 6; k++) a.i[k] = k == 3 ? method_arg(L, first + 3) : luaL_checkinteger(L, first + k);
  a.f[0] = luaL_checknumber(L, first + 6), a.f[1] = luaL_checknumber(L, first + 7);
  a.i[7] = lua_toboolean(L, first + 8);
  return a;
}

/* audio_resample(x, orig, new, lpw, method, pad_left, out_len, rolloff, beta, design_f32) */
static int l_resample(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, FN ".audio_resample");
  mt_args a = call_args(L, 2);
  mt_tensor *res = NULL;
  mt_status st = mtg_call(MT_OP_audio_resample, (const mt_tensor *const *)&x, 1, &a, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* audio_resample_backward(g, orig, new, lpw, method, pad_left, out_len, rolloff, beta, design_f32, in_len) */
static int l_resample_backward(lua_State *L) {
  mt_tensor *g = mtl_check_tensor(L, 1, FN ".audio_resample_backward");
  mt_args a = call_args(L, 2);
  a.i[6] = luaL_checkinteger(L, 11);
  mt_tensor *res = NULL;
  mt_status st = mtg_call(MT_OP_audio_resample_backward, (const mt_tensor *const *)&g, 1, &a, &res, 1);
  return mtl_push_result(L, st, res, 0, NULL);
}

/* width(orig, new, lpw, rolloff) -> width, reduced orig, reduced new */
static int l_width(lua_State *L) {
  mt_resample_args a = {luaL_checkinteger(L, 1), luaL_checkinteger(L, 2), luaL_checkinteger(L, 3),
                        MT_RESAMPLE_HANN, 0, 0, luaL_checknumber(L, 4), 0, 0};
  mt_resample_plan p;
  MTL_CHECK(L, mt_resample_plan_make(&a, &p));
  lua_pushinteger(L, p.width), lua_pushinteger(L, p.orig), lua_pushinteger(L, p.new_);
  mt_resample_plan_free(&p);
  return 3;
}

static const mtl_reg regs[] = {
    {"audio_resample", l_resample, MTL_FN,
     "torch.audio._resample.audio_resample(x, orig, new, lowpass_filter_width, method, pad_left, out_len, rolloff, "
     "beta, design_f32) -- internal (torch.audio.functional.resample): torchaudio's polyphase sinc filter over x [..., "
     "time] with pad_left zeros before it, out_len samples kept"},
    {"audio_resample_backward", l_resample_backward, MTL_FN,
     "torch.audio._resample.audio_resample_backward(g, orig, new, lpw, method, pad_left, out_len, rolloff, beta, "
     "design_f32, in_len) -- internal (autograd): the adjoint of audio_resample"},
    {"width", l_width, MTL_FN,
     "torch.audio._resample.width(orig, new, lowpass_filter_width, rolloff) -- internal: the filter's width "
     "(zeros padded before the waveform) and the rates reduced by their gcd"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._resample" */
int luaopen_torch_audio__resample(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
