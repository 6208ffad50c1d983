/* l_random.c -- Lua bindings of the random number generators (manual_seed,
 * seed, get/set_rng_state, torch.Generator), the random ops (rand, randn,
 * randint, randperm, normal, bernoulli, multinomial, x:uniform_() ...) and
 * the creation ops arange, linspace, logspace and eye. Draws on a CUDA
 * tensor run on its device (tensor/cuda/random.c). An RNG state is a
 * uint8 tensor of 16 bytes (seed, then offset). Index values are 1-based. */
#include <string.h>

#include "creation.h"
#include "cuda/mt_cuda.h"
#include "mtl.h"
#include "random.h"
#include "reduce_util.h" /* mt_deliver */

#define GEN_MT "torch.Generator"

/* A Generator userdata points at its own state, or at the default one. */
typedef struct gen_ud {
  mt_generator *g;
  mt_generator own;
  mt_device dev; /* reported as g.device; a generator serves draws on any device */
} gen_ud;

/* ---- shared argument helpers ---- */

/* Pushes res (owned), or copies it into the out= tensor and pushes that.
 * Arguments that may raise are read before res is made, except out=. */
/* Ranges (arange, linspace, eye) are made on the host and copied to
 * device= by push_result; random draws are made on device= itself, from its
 * generator (cuda/random.c), by draw_device. */
static mt_device host_device(lua_State *L, int opt) {
  mt_device d = mtl_opt_device(L, 0, 0, opt, "device");
  if (d.type == MT_CUDA) MTL_CHECK(L, mt_cuda_check_device(d, "device="));
  return mt_cpu();
}

static mt_device draw_device(lua_State *L, int opt) {
  mt_device d = mtl_opt_device(L, 0, 0, opt, "device");
  if (d.type == MT_CUDA) MTL_CHECK(L, mt_cuda_check_device(d, "device="));
  return d;
}

static int push_result(lua_State *L, int opt, mt_tensor *res, const char *op) {
  mt_tensor *o = NULL;
  mt_device dev = mtl_opt_device(L, 0, 0, opt, "device"); /* where the result goes */
  if (dev.type == MT_CUDA && mt_tdevice(res).type == MT_CPU) { /* drawn on the host, then copied */
    mt_tensor *d = NULL;
    mt_status st = mt_cuda_to_device(res, dev, false, &d);
    mt_release(res);
    MTL_CHECK(L, st);
    res = d;
  }
  if (opt && mtl_optfield(L, opt, "out") != LUA_TNIL && !(o = mtl_to_tensor(L, -1))) {
    mt_release(res);
    return luaL_error(L, "%s: out= must be a tensor, got %s", op, luaL_typename(L, -1));
  }
  lua_pop(L, opt ? 1 : 0);
  if (o) {
    MTL_CHECK(L, mt_deliver(op, res, &o));
    lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, res);
  mtl_apply_requires_grad(L, opt, lua_gettop(L));
  return 1;
}

/* generator= option: NULL (the default generator) when absent */
static mt_generator *opt_gen(lua_State *L, int opt) {
  if (!opt) return NULL;
  mt_generator *g = NULL;
  if (mtl_optfield(L, opt, "generator") != LUA_TNIL) {
    gen_ud *u = luaL_testudata(L, -1, GEN_MT);
    if (!u) luaL_error(L, "generator= must be a torch.Generator, got %s", luaL_typename(L, -1));
    g = u->g;
  }
  lua_pop(L, 1);
  return g;
}

/* A number (or one-element tensor) at idx as a scalar; sets *is_float. */
static mt_scalar check_num(lua_State *L, int idx, const char *op, const char *what, bool *is_float) {
  mt_scalar s;
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) {
    MTL_CHECK(L, mt_item(t, &s));
  } else if (lua_isinteger(L, idx)) {
    s = mt_sint(lua_tointeger(L, idx));
  } else if (lua_type(L, idx) == LUA_TNUMBER) {
    s = mt_sfloat(lua_tonumber(L, idx));
  } else {
    luaL_error(L, "%s: %s must be a number, got %s", op, what, luaL_typename(L, idx));
    return mt_sint(0);
  }
  if (is_float) *is_float = *is_float || s.kind == MT_SK_FLOAT;
  return s;
}

/* An integer argument (integral floats accepted). */
static int64_t check_int(lua_State *L, int idx, const char *op, const char *what) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "%s: %s must be an integer, got %s", op, what,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return (int64_t)v;
}

static int is_size(lua_State *L, int idx) { return lua_type(L, idx) == LUA_TTABLE && !mtl_is_options(L, idx); }

static void need_float_dtype(lua_State *L, mt_dtype dt, const char *op) {
  if (!mt_is_floating(dt))
    luaL_error(L, "%s: dtype %s is not a floating point type (use randint for integers)", op, mt_dtype_name(dt));
}

/* A new tensor of the shape in args [first, last] with dtype= (else dflt)
 * and device= from the options. */
static mt_tensor *new_sized(lua_State *L, int first, int last, int opt, mt_dtype dflt, const char *op) {
  int64_t shape[MT_MAXDIM];
  int nd = mtl_size(L, first, last, shape, op);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", dflt);
  mt_device dev = draw_device(L, opt);
  mt_tensor *t = NULL;
  MTL_CHECK_OP(L, op, mt_empty(shape, nd, dt, dev, &t));
  return t;
}

/* A new tensor shaped like x (dtype= overrides x's). */
static mt_tensor *new_like(lua_State *L, mt_tensor *x, int opt) {
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", (mt_dtype)x->dtype);
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_empty(x->shape, x->ndim, dt, mt_tdevice(x), &t));
  return t;
}

/* Raises unless [low, high) is non-empty and fits dt. */
static void check_range(lua_State *L, const char *op, int64_t low, int64_t high, mt_dtype dt) {
  int64_t lo, hi;
  mt_random_bounds(dt, &lo, &hi);
  if (low >= high) luaL_error(L, "%s: low (%I) must be less than high (%I)", op, (lua_Integer)low, (lua_Integer)high);
  if (low < lo || high - 1 > hi)
    luaL_error(L, "%s: range [%I, %I) does not fit in %s (values %I..%I)", op, (lua_Integer)low, (lua_Integer)high,
               mt_dtype_name(dt), (lua_Integer)lo, (lua_Integer)hi);
}

/* ---- generators ---- */

static gen_ud *push_gen(lua_State *L) {
  gen_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->g = &u->own;
  u->dev = mt_cpu();
  mt_generator_seed(&u->own, MT_DEFAULT_SEED);
  luaL_setmetatable(L, GEN_MT);
  return u;
}

static mt_generator *check_gen(lua_State *L, int idx) { return ((gen_ud *)luaL_checkudata(L, idx, GEN_MT))->g; }

static uint64_t check_seed(lua_State *L, int idx, const char *op) { return (uint64_t)check_int(L, idx, op, "seed"); }

static void push_state(lua_State *L, mt_generator *g) {
  int64_t n = MT_RNG_STATE_BYTES;
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_empty(&n, 1, MT_UINT8, mt_cpu(), &t));
  mt_generator_get_state(g, (uint8_t *)mt_data(t));
  mtl_push_tensor(L, t);
}

static void set_state(lua_State *L, mt_generator *g, int idx, const char *op) {
  mt_tensor *t = mtl_check_tensor(L, idx, op), *c = NULL;
  if (t->dtype != MT_UINT8 || mt_numel(t) != MT_RNG_STATE_BYTES)
    luaL_error(L,
               "%s: expected the uint8 tensor of %d bytes that get_rng_state returns, got a %s tensor of %I elements",
               op, MT_RNG_STATE_BYTES, mt_dtype_name((mt_dtype)t->dtype), (lua_Integer)mt_numel(t));
  if (mt_tdevice(t).type != MT_CPU) MTL_CHECK(L, mt_cuda_to_device(t, mt_cpu(), false, &c)); /* read on the host */
  else MTL_CHECK(L, mt_contiguous(t, &c));
  mt_generator_set_state(g, (const uint8_t *)mt_data(c));
  mt_release(c);
}

static void push_default_gen(lua_State *L) { lua_getfield(L, LUA_REGISTRYINDEX, "mtl.default_generator"); }

/* torch.manual_seed and torch.seed seed every device's generator too */
static int l_manual_seed(lua_State *L) {
  uint64_t s = check_seed(L, 1, "manual_seed");
  mt_generator_seed(mt_default_generator(), s);
  mt_cuda_seed_all(s);
  push_default_gen(L);
  return 1;
}

static int l_seed(lua_State *L) {
  uint64_t s = mt_nondeterministic_seed();
  mt_generator_seed(mt_default_generator(), s);
  mt_cuda_seed_all(s);
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}

static int l_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_default_generator()->seed);
  return 1;
}

static int l_get_rng_state(lua_State *L) {
  push_state(L, mt_default_generator());
  return 1;
}

static int l_set_rng_state(lua_State *L) {
  set_state(L, mt_default_generator(), 1, "set_rng_state");
  return 0;
}

/* torch.Generator([device]) */
static int l_generator(lua_State *L) {
  mt_device d = mt_cpu();
  if (!lua_isnoneornil(L, 1)) {
    d = mtl_check_device(L, 1, "Generator");
    if (d.type == MT_CUDA) {
      if (d.index < 0) d.index = (int8_t)mt_cuda_current_device();
      MTL_CHECK(L, mt_cuda_check_device(d, "Generator"));
    }
  }
  push_gen(L)->dev = d;
  return 1;
}

static int g_manual_seed(lua_State *L) {
  mt_generator_seed(check_gen(L, 1), check_seed(L, 2, "manual_seed"));
  lua_settop(L, 1);
  return 1;
}

static int g_seed(lua_State *L) {
  mt_generator *g = check_gen(L, 1);
  uint64_t s = mt_nondeterministic_seed();
  mt_generator_seed(g, s);
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}

static int g_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_gen(L, 1)->seed);
  return 1;
}

static int g_get_state(lua_State *L) {
  push_state(L, check_gen(L, 1));
  return 1;
}

static int g_set_state(lua_State *L) {
  set_state(L, check_gen(L, 1), 2, "set_state");
  lua_settop(L, 1);
  return 1;
}

static int g_tostring(lua_State *L) {
  mt_generator *g = check_gen(L, 1);
  lua_pushfstring(L, "torch.Generator(seed=%I, offset=%I)", (lua_Integer)g->seed, (lua_Integer)g->offset);
  return 1;
}

/* methods by name; `device` is a property */
static int g_index(lua_State *L) {
  check_gen(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "device") == 0) {
    mtl_push_device(L, ((gen_ud *)lua_touserdata(L, 1))->dev);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

/* torch._philox(ctr, key): one raw block {4 words} from {4 words}, {2 words}
 * (for known-answer tests of the generator) */
static int l_philox(lua_State *L) {
  uint32_t ctr[4], key[2], out[4];
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  for (int i = 0; i < 6; i++) {
    lua_rawgeti(L, i < 4 ? 1 : 2, i < 4 ? i + 1 : i - 3);
    uint32_t v = (uint32_t)check_int(L, -1, "_philox", "a counter or key word");
    if (i < 4)
      ctr[i] = v;
    else
      key[i - 4] = v;
    lua_pop(L, 1);
  }
  mt_philox4x32_10(ctr, key, out);
  lua_createtable(L, 4, 0);
  for (int i = 0; i < 4; i++) {
    lua_pushinteger(L, out[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- random tensors ---- */

/* rand / randn(size...[, opts]) */
static int rand_sized(lua_State *L, const char *op, bool normal) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  mt_generator *g = opt_gen(L, opt);
  need_float_dtype(L, mtl_opt_dtype(L, 0, 0, opt, "dtype", mt_default_dtype()), op);
  mt_tensor *t = new_sized(L, 1, last, opt, mt_default_dtype(), op);
  mt_status st = normal ? mt_normal_(t, 0, 1, g) : mt_uniform_(t, 0, 1, g);
  if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
  return push_result(L, opt, t, op);
}
static int l_rand(lua_State *L) { return rand_sized(L, "rand", false); }
static int l_randn(lua_State *L) { return rand_sized(L, "randn", true); }

/* rand_like / randn_like(x[, opts]) */
static int rand_like(lua_State *L, const char *op, bool normal) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  mt_generator *g = opt_gen(L, opt);
  need_float_dtype(L, mtl_opt_dtype(L, 0, 0, opt, "dtype", (mt_dtype)x->dtype), op);
  mt_tensor *t = new_like(L, x, opt);
  mt_status st = normal ? mt_normal_(t, 0, 1, g) : mt_uniform_(t, 0, 1, g);
  if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
  return push_result(L, opt, t, op);
}
static int l_rand_like(lua_State *L) { return rand_like(L, "rand_like", false); }
static int l_randn_like(lua_State *L) { return rand_like(L, "randn_like", true); }

/* Fills t (owned; [low, high) already checked against its dtype) with
 * integers on [low, high) and pushes it. */
static int randint_fill(lua_State *L, int opt, mt_generator *g, mt_tensor *t, int64_t low, int64_t high,
                        const char *op) {
  mt_status st = mt_random_(t, low, high - 1, g);
  if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
  return push_result(L, opt, t, op);
}

/* randint(high, size[, opts]) or randint(low, high, size[, opts]) */
static int l_randint(lua_State *L) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  int sz = is_size(L, 2) ? 2 : is_size(L, 3) ? 3 : 0;
  if (!sz || last != sz)
    return luaL_error(L, "randint: expected randint(high, size) or randint(low, high, size) with size a table "
                         "such as {2, 3}");
  int64_t low = sz == 3 ? check_int(L, 1, "randint", "low") : 0;
  int64_t high = check_int(L, sz - 1, "randint", "high");
  check_range(L, "randint", low, high, mtl_opt_dtype(L, 0, 0, opt, "dtype", MT_INT64));
  mt_generator *g = opt_gen(L, opt);
  return randint_fill(L, opt, g, new_sized(L, sz, sz, opt, MT_INT64, "randint"), low, high, "randint");
}

/* randint_like(x, high[, opts]) or randint_like(x, low, high[, opts]) */
static int l_randint_like(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "randint_like");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  if (last != 2 && last != 3) return luaL_error(L, "randint_like: expected randint_like(x, high) or (x, low, high)");
  int64_t low = last == 3 ? check_int(L, 2, "randint_like", "low") : 0;
  int64_t high = check_int(L, last, "randint_like", "high");
  check_range(L, "randint_like", low, high, mtl_opt_dtype(L, 0, 0, opt, "dtype", (mt_dtype)x->dtype));
  mt_generator *g = opt_gen(L, opt);
  return randint_fill(L, opt, g, new_like(L, x, opt), low, high, "randint_like");
}

/* randperm(n[, opts]) */
static int l_randperm(lua_State *L) {
  int opt = mtl_options_index(L, 2);
  int64_t n = check_int(L, 1, "randperm", "n");
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", MT_INT64);
  mt_device dev = draw_device(L, opt);
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_randperm(n, dt, dev, opt_gen(L, opt), &t));
  return push_result(L, opt, t, "randperm");
}

/* normal(mean, std, size[, opts]) with numbers, or normal(mean, std[, opts])
 * where mean and/or std are tensors (std defaults to 1) */
static int l_normal(lua_State *L) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  mt_generator *g = opt_gen(L, opt);
  if (!mtl_to_tensor(L, 1) && !mtl_to_tensor(L, 2)) {
    bool f = false;
    double mean = mt_scalar_f(check_num(L, 1, "normal", "mean", &f));
    double std = lua_isnoneornil(L, 2) ? 1.0 : mt_scalar_f(check_num(L, 2, "normal", "std", &f));
    if (last < 3)
      return luaL_error(L, "normal: with numbers for mean and std, give a size: torch.normal(0, 1, {2, 3})");
    need_float_dtype(L, mtl_opt_dtype(L, 0, 0, opt, "dtype", mt_default_dtype()), "normal");
    mt_tensor *t = new_sized(L, 3, last, opt, mt_default_dtype(), "normal");
    mt_status st = std >= 0 ? mt_normal_(t, mean, std, g) : mt_fail(MT_EARG, "normal: std must be >= 0, got %g", std);
    if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
    return push_result(L, opt, t, "normal");
  }
  if (last > 2) return luaL_error(L, "normal: a size is only taken when mean and std are numbers");
  for (int i = 1; i <= 2; i++)
    if (!mtl_to_tensor(L, i) && lua_type(L, i) != LUA_TNUMBER && !(i == 2 && lua_isnoneornil(L, i)))
      return luaL_error(L, "normal: %s must be a number or a tensor, got %s", i == 1 ? "mean" : "std",
                        luaL_typename(L, i));
  mt_tensor *mean = mtl_tensor_or_scalar(L, 1, "normal");
  mt_tensor *std = NULL, *o = NULL;
  if (lua_isnoneornil(L, 2) || last < 2) {
    mt_status st = mt_scalar_tensor(mt_sfloat(1.0), MT_FLOAT64, &std);
    if (st) mtl_fail(L, st, mean, NULL, NULL, NULL);
    std->flags |= MT_TF_WRAPPED;
  } else {
    std = mtl_tensor_or_scalar(L, 2, "normal");
  }
  mt_status st = mt_normal_tensor(mean, std, g, &o);
  mt_release(mean);
  mt_release(std);
  MTL_CHECK(L, st);
  return push_result(L, opt, o, "normal");
}

/* bernoulli(x[, p][, opts]): 0/1 shaped and typed like x, with probability
 * x (elementwise) or the number p */
static int l_bernoulli(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "bernoulli");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  mt_generator *g = opt_gen(L, opt);
  bool scalar_p = last >= 2 && !lua_isnil(L, 2);
  double p = scalar_p ? mt_scalar_f(check_num(L, 2, "bernoulli", "p", NULL)) : 0;
  mt_tensor *t = new_like(L, x, opt);
  mt_status st = scalar_p ? mt_bernoulli_(t, p, g) : mt_bernoulli_tensor_(t, x, g);
  if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
  return push_result(L, opt, t, "bernoulli");
}

/* multinomial(probs, num_samples[, replacement][, opts]) */
static int l_multinomial(lua_State *L) {
  mt_tensor *p = mtl_check_tensor(L, 1, "multinomial"), *o = NULL;
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  mtl_getarg(L, 2, last, opt, "num_samples");
  if (lua_isnil(L, -1)) return luaL_error(L, "multinomial: expected the number of samples as argument #2");
  int64_t n = check_int(L, -1, "multinomial", "num_samples");
  lua_pop(L, 1);
  bool repl = mtl_opt_bool(L, 3, last, opt, "replacement", 0);
  MTL_CHECK(L, mt_multinomial(p, n, repl, opt_gen(L, opt), &o));
  return push_result(L, opt, o, "multinomial");
}

/* ---- in-place draws: x:uniform_(from, to) ... return x ---- */

static int m_uniform_(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "uniform_");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  double a = mtl_opt_num(L, 2, last, opt, "from", 0), b = mtl_opt_num(L, 3, last, opt, "to", 1);
  MTL_CHECK(L, mt_uniform_(x, a, b, opt_gen(L, opt)));
  lua_settop(L, 1);
  return 1;
}

static int m_normal_(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "normal_");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  double mean = mtl_opt_num(L, 2, last, opt, "mean", 0), std = mtl_opt_num(L, 3, last, opt, "std", 1);
  MTL_CHECK(L, mt_normal_(x, mean, std, opt_gen(L, opt)));
  lua_settop(L, 1);
  return 1;
}

static int m_exponential_(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "exponential_");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  MTL_CHECK(L, mt_exponential_(x, mtl_opt_num(L, 2, last, opt, "lambd", 1), opt_gen(L, opt)));
  lua_settop(L, 1);
  return 1;
}

/* x:bernoulli_([p]) with p a number (default 0.5) or a tensor */
static int m_bernoulli_(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "bernoulli_");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  mt_generator *g = opt_gen(L, opt);
  mtl_getarg(L, 2, last, opt, "p");
  mt_tensor *p = mtl_to_tensor(L, -1);
  if (p) {
    MTL_CHECK(L, mt_bernoulli_tensor_(x, p, g));
    if (MTG_TRACING()) mtg_trace_refuse("bernoulli_ with a tensor of probabilities is not replayed by the JIT");
  } else {
    double pv = lua_isnil(L, -1) ? 0.5 : mt_scalar_f(check_num(L, -1, "bernoulli_", "p", NULL));
    MTL_CHECK(L, mt_bernoulli_(x, pv, g));
    if (MTG_TRACING() && (!g || g == mt_default_generator())) mtg_trace_bernoulli_(x, pv); /* dropout mask */
    else if (MTG_TRACING()) mtg_trace_refuse("bernoulli_ with its own generator is not replayed by the JIT");
  }
  lua_settop(L, 1);
  return 1;
}

/* x:random_() / x:random_(to) / x:random_(from, to): integers on [from, to);
 * with no bounds, [0, max] of x's dtype (2^digits for floats) */
static int m_random_(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "random_");
  int opt = mtl_options_index(L, 2), last = opt ? opt - 1 : lua_gettop(L);
  mt_generator *g = opt_gen(L, opt);
  int64_t lo, hi;
  mt_random_bounds((mt_dtype)x->dtype, &lo, &hi);
  if (last >= 2) {
    int64_t low = last >= 3 ? check_int(L, 2, "random_", "from") : 0;
    int64_t high = check_int(L, last >= 3 ? 3 : 2, "random_", "to");
    check_range(L, "random_", low, high, (mt_dtype)x->dtype);
    lo = low, hi = high - 1;
  } else {
    lo = 0;
  }
  MTL_CHECK(L, mt_random_(x, lo, hi, g));
  lua_settop(L, 1);
  return 1;
}

/* ---- creation ---- */

/* arange(end) / arange(start, end[, step])[, opts] */
static int l_arange(lua_State *L) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  if (last < 1 || last > 3) return luaL_error(L, "arange: expected arange(end) or arange(start, end[, step])");
  bool f = false;
  mt_scalar start = mt_sint(0), end, step = mt_sint(1);
  if (last == 1) {
    end = check_num(L, 1, "arange", "end", &f);
  } else {
    start = check_num(L, 1, "arange", "start", &f);
    end = check_num(L, 2, "arange", "end", &f);
  }
  mtl_getarg(L, 3, last, opt, "step");
  if (!lua_isnil(L, -1)) step = check_num(L, -1, "arange", "step", &f);
  lua_pop(L, 1);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", f ? mt_default_dtype() : MT_INT64);
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_arange(start, end, step, dt, host_device(L, opt), &t));
  if (MTG_TRACING()) mtg_trace_arange(t, start, end, step);
  return push_result(L, opt, t, "arange");
}

/* linspace(start, end, steps) and logspace(start, end, steps[, base]) */
static int space(lua_State *L, const char *op, bool log) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  mt_scalar start = check_num(L, 1, op, "start", NULL), end = check_num(L, 2, op, "end", NULL);
  mtl_getarg(L, 3, last, opt, "steps");
  if (lua_isnil(L, -1)) return luaL_error(L, "%s: expected the number of steps as argument #3", op);
  int64_t steps = check_int(L, -1, op, "steps");
  lua_pop(L, 1);
  double base = log ? mtl_opt_num(L, 4, last, opt, "base", 10) : 0;
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", mt_default_dtype());
  mt_device dev = host_device(L, opt);
  mt_tensor *t = NULL;
  MTL_CHECK(L, log ? mt_logspace(start, end, steps, base, dt, dev, &t) : mt_linspace(start, end, steps, dt, dev, &t));
  return push_result(L, opt, t, op);
}
static int l_linspace(lua_State *L) { return space(L, "linspace", false); }
static int l_logspace(lua_State *L) { return space(L, "logspace", true); }

/* eye(n[, m][, opts]) */
static int l_eye(lua_State *L) {
  int opt = mtl_options_index(L, 1), last = opt ? opt - 1 : lua_gettop(L);
  int64_t n = check_int(L, 1, "eye", "n");
  int64_t m = mtl_opt_int(L, 2, last, opt, "m", n);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", mt_default_dtype());
  mt_tensor *t = NULL;
  MTL_CHECK(L, mt_eye(n, m, dt, host_device(L, opt), &t));
  return push_result(L, opt, t, "eye");
}

static const mtl_reg regs[] = {
    {"manual_seed", l_manual_seed, MTL_FN,
     "torch.manual_seed(n) -- seed the default generator (rewinds it); returns it"},
    {"seed", l_seed, MTL_FN, "torch.seed() -- reseed the default generator from the OS; returns the seed"},
    {"initial_seed", l_initial_seed, MTL_FN, "torch.initial_seed() -- the seed of the default generator"},
    {"get_rng_state", l_get_rng_state, MTL_FN,
     "torch.get_rng_state() -- the default generator's state, a 16-byte uint8 tensor"},
    {"set_rng_state", l_set_rng_state, MTL_FN, "torch.set_rng_state(s) -- restore a state from get_rng_state"},
    {"_philox", l_philox, MTL_FN, "torch._philox(ctr, key) -- internal: one Philox4x32-10 block (4 words) for tests"},
    {"Generator", l_generator, MTL_FN,
     "torch.Generator(['cpu'|'cuda']) -- a generator with its own state, for {generator=g}"},
    {"rand", l_rand, MTL_FN,
     "torch.rand(size...[, {dtype=, device=, generator=, requires_grad=}]) -- uniform on [0, 1)",
     "dtype device requires_grad generator out"},
    {"randn", l_randn, MTL_FN,
     "torch.randn(size...[, {dtype=, device=, generator=, requires_grad=}]) -- standard normal",
     "dtype device requires_grad generator out"},
    {"rand_like", l_rand_like, MTL_FN,
     "torch.rand_like(x[, {dtype=, generator=}]) -- uniform on [0, 1), shaped like x",
     "dtype device requires_grad generator out"},
    {"randn_like", l_randn_like, MTL_FN,
     "torch.randn_like(x[, {dtype=, generator=}]) -- standard normal, shaped like x",
     "dtype device requires_grad generator out"},
    {"randint", l_randint, MTL_FN,
     "torch.randint([low,] high, size[, {dtype=, generator=}]) -- integers on [low, high), int64",
     "dtype device requires_grad generator out"},
    {"randint_like", l_randint_like, MTL_FN,
     "torch.randint_like(x, [low,] high) -- integers on [low, high), shaped like x",
     "dtype device requires_grad generator out"},
    {"randperm", l_randperm, MTL_FN,
     "torch.randperm(n[, {dtype=, generator=}]) -- a random permutation of 1..n (int64)",
     "dtype device requires_grad generator out"},
    {"normal", l_normal, MTL_FN,
     "torch.normal(mean, std[, size][, {generator=}]) -- normal draws; mean/std numbers or tensors",
     "dtype device requires_grad generator out"},
    {"bernoulli", l_bernoulli, MTL_BOTH,
     "torch.bernoulli(x[, p][, {generator=}]) -- 0/1 draws with probability x (or p), like x",
     "p dtype device requires_grad generator out"},
    {"multinomial", l_multinomial, MTL_BOTH,
     "torch.multinomial(probs, n[, replacement]) -- n 1-based category indices per row",
     "num_samples replacement generator out device requires_grad"},
    {"uniform_", m_uniform_, MTL_METHOD,
     "x:uniform_([from=0, to=1][, {generator=}]) -- fill x uniformly on [from, to)", "from to generator"},
    {"normal_", m_normal_, MTL_METHOD, "x:normal_([mean=0, std=1][, {generator=}]) -- fill x with normal draws",
     "mean std generator"},
    {"exponential_", m_exponential_, MTL_METHOD,
     "x:exponential_([lambd=1][, {generator=}]) -- fill x with exponential draws", "lambd generator"},
    {"bernoulli_", m_bernoulli_, MTL_METHOD,
     "x:bernoulli_([p=0.5][, {generator=}]) -- fill x with 0/1; p a number or tensor", "p generator"},
    {"random_", m_random_, MTL_METHOD,
     "x:random_([from,] [to]) -- fill x with integers on [from, to) (default [0, max])", "generator"},
    {"arange", l_arange, MTL_FN,
     "torch.arange([start,] end[, step][, {dtype=, device=}]) -- values start, start+step, ... < end",
     "step dtype device requires_grad out"},
    {"linspace", l_linspace, MTL_FN,
     "torch.linspace(start, end, steps[, {dtype=, device=}]) -- steps evenly spaced values",
     "steps dtype device requires_grad out"},
    {"logspace", l_logspace, MTL_FN,
     "torch.logspace(start, end, steps[, base=10]) -- base ^ linspace(start, end, steps)",
     "steps base dtype device requires_grad out"},
    {"eye", l_eye, MTL_FN, "torch.eye(n[, m][, {dtype=, device=}]) -- identity matrix, n x m",
     "m dtype device requires_grad out"},
    {NULL, NULL, 0, NULL}};

static const mtl_reg gen_methods[] = {
    {"manual_seed", g_manual_seed, MTL_FN, "g:manual_seed(n) -- seed this generator (rewinds it); returns g"},
    {"seed", g_seed, MTL_FN, "g:seed() -- reseed from the OS; returns the seed"},
    {"initial_seed", g_initial_seed, MTL_FN, "g:initial_seed() -- this generator's seed"},
    {"get_state", g_get_state, MTL_FN, "g:get_state() -- the state, a 16-byte uint8 tensor"},
    {"set_state", g_set_state, MTL_FN, "g:set_state(s) -- restore a state from get_state; returns g"},
    {NULL, NULL, 0, NULL}};

void mtl_open_random(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  luaL_newmetatable(L, GEN_MT);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, gen_methods);
  lua_pushcclosure(L, g_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, g_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  /* the default generator as a userdata that points at the engine's */
  gen_ud *u = push_gen(L);
  u->g = mt_default_generator();
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.default_generator");
  lua_setfield(L, torch_idx, "default_generator");
}
