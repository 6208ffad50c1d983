/* l_cuda_random.c -- torch.cuda's generator functions: manual_seed,
 * manual_seed_all, seed, seed_all, initial_seed, get/set_rng_state(_all).
 * Each device has its own Philox generator (tensor/cuda/random.c); a state
 * is the same 16-byte uint8 CPU tensor as torch.get_rng_state's (seed, then
 * offset). None of these needs a GPU: the generators are host data. */
#include "cuda/mt_cuda.h"
#include "mtl.h"
#include "random.h"

/* The device index at idx (a number, 'cuda:i' or a device), default current. */
static int dev_arg(lua_State *L, int idx, const char *op) {
  int i;
  if (lua_isnoneornil(L, idx)) {
    i = mt_cuda_current_device();
  } else if (lua_isinteger(L, idx)) {
    i = (int)lua_tointeger(L, idx);
  } else {
    mt_device d = mtl_check_device(L, idx, op);
    if (d.type != MT_CUDA) luaL_error(L, "%s: expected a CUDA device, got 'cpu'", op);
    i = d.index;
  }
  if (i < 0 || i >= MT_CUDA_MAXDEV) luaL_error(L, "%s: device index %d is out of range", op, i);
  return i;
}

static uint64_t seed_arg(lua_State *L, int idx, const char *op) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) luaL_error(L, "%s: seed must be an integer, got %s", op, luaL_typename(L, idx));
  return (uint64_t)v;
}

static int c_manual_seed(lua_State *L) {
  mt_generator_seed(mt_cuda_generator(mt_cuda_current_device()), seed_arg(L, 1, "cuda.manual_seed"));
  return 0;
}

static int c_manual_seed_all(lua_State *L) {
  mt_cuda_seed_all(seed_arg(L, 1, "cuda.manual_seed_all"));
  return 0;
}

static int c_seed(lua_State *L) {
  uint64_t s = mt_nondeterministic_seed();
  mt_generator_seed(mt_cuda_generator(mt_cuda_current_device()), s);
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}

static int c_seed_all(lua_State *L) {
  uint64_t s = mt_nondeterministic_seed();
  mt_cuda_seed_all(s);
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}

static int c_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_cuda_generator(mt_cuda_current_device())->seed);
  return 1;
}

static void push_state(lua_State *L, int dev) {
  int64_t n = MT_RNG_STATE_BYTES;
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_empty(&n, 1, MT_UINT8, mt_cpu(), &t));
  mt_generator_get_state(mt_cuda_generator(dev), (uint8_t *)mt_data(t));
  mtl_push_tensor(L, t);
}

static void set_state(lua_State *L, int idx, int dev, const char *op) {
  mt_tensor *t = mtl_check_tensor(L, idx, op), *c = NULL;
  if (t->dtype != MT_UINT8 || mt_numel(t) != MT_RNG_STATE_BYTES || mt_tdevice(t).type != MT_CPU)
    luaL_error(L, "%s: expected the uint8 CPU tensor of %d bytes that get_rng_state returns, got a %s tensor of %I "
               "elements", op, MT_RNG_STATE_BYTES, mt_dtype_name((mt_dtype)t->dtype), (lua_Integer)mt_numel(t));
  MTL_CHECK(L, mt_contiguous(t, &c));
  mt_generator_set_state(mt_cuda_generator(dev), (const uint8_t *)mt_data(c));
  mt_release(c);
}

static int c_get_rng_state(lua_State *L) {
  push_state(L, dev_arg(L, 1, "cuda.get_rng_state"));
  return 1;
}

static int c_set_rng_state(lua_State *L) {
  set_state(L, 1, dev_arg(L, 2, "cuda.set_rng_state"), "cuda.set_rng_state");
  return 0;
}

static int c_get_rng_state_all(lua_State *L) {
  int n = mt_cuda_device_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n && i < MT_CUDA_MAXDEV; i++) {
    push_state(L, i);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int c_set_rng_state_all(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  for (lua_Integer i = 1; i <= n && i <= MT_CUDA_MAXDEV; i++) {
    lua_rawgeti(L, 1, i);
    set_state(L, lua_gettop(L), (int)i - 1, "cuda.set_rng_state_all");
    lua_pop(L, 1);
  }
  return 0;
}

static const mtl_reg regs[] = {
    {"manual_seed", c_manual_seed, MTL_FN, "torch.cuda.manual_seed(n) -- seed the current device's generator"},
    {"manual_seed_all", c_manual_seed_all, MTL_FN, "torch.cuda.manual_seed_all(n) -- seed every device's generator"},
    {"seed", c_seed, MTL_FN, "torch.cuda.seed() -- reseed the current device's generator from the OS"},
    {"seed_all", c_seed_all, MTL_FN, "torch.cuda.seed_all() -- reseed every device's generator from the OS"},
    {"initial_seed", c_initial_seed, MTL_FN, "torch.cuda.initial_seed() -- the current device generator's seed"},
    {"get_rng_state", c_get_rng_state, MTL_FN,
     "torch.cuda.get_rng_state([device]) -- a device generator's state, a 16-byte uint8 tensor"},
    {"set_rng_state", c_set_rng_state, MTL_FN, "torch.cuda.set_rng_state(s[, device]) -- restore a device's state"},
    {"get_rng_state_all", c_get_rng_state_all, MTL_FN, "torch.cuda.get_rng_state_all() -- one state per device"},
    {"set_rng_state_all", c_set_rng_state_all, MTL_FN, "torch.cuda.set_rng_state_all(t) -- restore them"},
    {NULL, NULL, 0, NULL}};

void mtl_open_cuda_random(lua_State *L, int cuda_idx, int methods_idx) { mtl_register(L, cuda_idx, methods_idx, regs); }
