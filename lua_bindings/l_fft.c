/* l_fft.c -- the engine's transforms (tensor/fft.h) as torch._fft, the
 * private layer under torch.fft (lua_bindings/fft/), and the entries
 * torch.stft, torch.istft and the window functions, which call their Lua
 * implementations in that package. Calls record through mtg_call, so
 * autograd and the JIT see the ops. Arguments are positional; dims come
 * as a mask over the complex dims (bit d: 0-based dim d). */
#include "cpu/fft_kernels.h"
#include "fft.h"
#include "graph.h"
#include "mtl.h"

static mt_tensor *one(lua_State *L, mt_op op, const mt_tensor *x, const mt_args *a) {
  mt_tensor *y = NULL;
  MTL_CHECK(L, mtg_call(op, &x, 1, a, &y, 1));
  return y;
}

static int norm_arg(lua_State *L, int idx) {
  lua_Integer n = luaL_checkinteger(L, idx);
  if (n < 0 || n > 2) luaL_error(L, "fft: norm code %d out of range 0..2 (internal)", (int)n);
  return (int)n;
}

/* _fft.fft_c2c(x_real_view, mask, forward, norm) */
static int l_c2c(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "fft_c2c");
  mt_args a = {.i = {luaL_checkinteger(L, 2), lua_toboolean(L, 3), norm_arg(L, 4)}, .ni = 3};
  mtl_push_tensor(L, one(L, MT_OP_fft_c2c, x, &a));
  return 1;
}

/* _fft.fft_r2c(x, mask, norm[, two_sided]) */
static int l_r2c(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "fft_r2c");
  mt_args a = {.i = {luaL_checkinteger(L, 2), norm_arg(L, 3), lua_toboolean(L, 4)}, .ni = 3};
  mtl_push_tensor(L, one(L, MT_OP_fft_r2c, x, &a));
  return 1;
}

/* _fft.fft_c2r(x_real_view, mask, lastn, norm) */
static int l_c2r(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "fft_c2r");
  mt_args a = {.i = {luaL_checkinteger(L, 2), luaL_checkinteger(L, 3), norm_arg(L, 4)}, .ni = 3};
  mtl_push_tensor(L, one(L, MT_OP_fft_c2r, x, &a));
  return 1;
}

/* _fft.set_measure(on) -> the plans cached so far; on: FFTW_MEASURE for new plans */
static int l_set_measure(lua_State *L) {
  int n = mt_fft_plan_count();
  if (!lua_isnone(L, 1)) {
    mt_fft_clear_plans();
    mt_fft_set_measure(lua_toboolean(L, 1));
  }
  lua_pushinteger(L, n);
  return 1;
}

/* A torch.<name> entry that runs require(module)[name](...): the Lua
 * implementation loads on first use. Upvalues: module, name. */
static int trampoline(lua_State *L) {
  int n = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 1, 1);
  lua_getfield(L, -1, lua_tostring(L, lua_upvalueindex(2)));
  lua_insert(L, 1);
  lua_pop(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

static const mtl_reg regs[] = {
    {"fft_c2c", l_c2c, MTL_FN,
     "torch._fft.fft_c2c(x, mask, forward, norm) -- internal: complex-to-complex transform of a real view [..., 2] "
     "over the 0-based dims of mask; norm 0 none, 1 1/sqrt(n), 2 1/n"},
    {"fft_r2c", l_r2c, MTL_FN,
     "torch._fft.fft_r2c(x, mask, norm[, two_sided]) -- internal: real-to-complex transform, onesided unless "
     "two_sided; a real view [..., 2]"},
    {"fft_c2r", l_c2r, MTL_FN,
     "torch._fft.fft_c2r(x, mask, lastn, norm) -- internal: Hermitian-half real view to a real signal of lastn "
     "points along the last transformed dim"},
    {"set_measure", l_set_measure, MTL_FN,
     "torch._fft.set_measure([on]) -- internal: the number of cached FFTW plans; with on, drops them and plans "
     "new ones with FFTW_MEASURE (true) or FFTW_ESTIMATE (false, the default)"},
    {NULL, NULL, 0, NULL}};

/* torch.<name> entries implemented in Lua, with their help lines */
static const struct {
  const char *name, *module, *help;
} lua_entries[] = {
    {"stft", "torch.fft._stft",
     "torch.stft(x, n_fft[, {hop_length=, win_length=, window=, center=true, pad_mode='reflect', normalized=false, "
     "onesided=, return_complex=}]) -- short-time Fourier transform: [..., n_fft/2+1, frames] complex"},
    {"istft", "torch.fft._stft",
     "torch.istft(spec, n_fft[, {hop_length=, win_length=, window=, center=true, normalized=false, onesided=, "
     "length=, return_complex=false}]) -- inverse short-time Fourier transform (overlap-add)"},
    {"hann_window", "torch.fft._windows",
     "torch.hann_window(n[, periodic=true][, {dtype=, device=, requires_grad=}]) -- Hann window"},
    {"hamming_window", "torch.fft._windows",
     "torch.hamming_window(n[, periodic=true, alpha=0.54, beta=0.46][, {dtype=, device=}]) -- Hamming window"},
    {"blackman_window", "torch.fft._windows",
     "torch.blackman_window(n[, periodic=true][, {dtype=, device=}]) -- Blackman window"},
    {"bartlett_window", "torch.fft._windows",
     "torch.bartlett_window(n[, periodic=true][, {dtype=, device=}]) -- Bartlett (triangular) window"},
    {"kaiser_window", "torch.fft._windows",
     "torch.kaiser_window(n[, periodic=true, beta=12.0][, {dtype=, device=}]) -- Kaiser window"},
};

void mtl_open_fft(lua_State *L, int torch_idx, int methods_idx) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, regs);
  lua_setfield(L, torch_idx, "_fft");
  for (size_t i = 0; i < sizeof lua_entries / sizeof *lua_entries; i++) {
    lua_pushstring(L, lua_entries[i].module);
    lua_pushstring(L, lua_entries[i].name);
    lua_pushcclosure(L, trampoline, 2);
    mtl_set_help(L, lua_entries[i].help);
    lua_setfield(L, torch_idx, lua_entries[i].name);
  }
}
