/* l_autocast.c -- torch.autocast's state (per device type: enabled, dtype;
 * the weight-cast cache) and PyTorch's per-op cast policies. Registered
 * functions carry their policy from registration (mtl_autocast_flags, read
 * by the gate in l_cuda.c and by l_math.c's closures); while no autocast
 * region is active the only cost is one load of mtl_autocast_mask. The
 * region objects themselves (torch.autocast) are Lua: lua/torch/amp/. */
#include <string.h>

#include "graph.h"
#include "mtl.h"

int mtl_autocast_mask;

/* Policies (PyTorch's names): LOW runs the op in the region's dtype; FP32 in
 * float32; FP32_OPT in float32 unless a dtype= is given; PROMOTE in the
 * widest floating type among the arguments; BANNED raises. */
enum { AC_NONE = MT_AC_NONE, AC_LOW = MT_AC_LOW, AC_FP32 = MT_AC_FP32, AC_FP32_OPT = MT_AC_FP32_OPT,
       AC_PROMOTE = MT_AC_PROMOTE, AC_BANNED = MT_AC_BANNED };
#define AC_BITS MT_AC_BITS
#define AC_POLICY(flags, devtype) (((flags) >> ((devtype) * AC_BITS)) & 7)

/* Per function name: the policy on the CPU and on CUDA, after PyTorch's
 * autocast op reference (ops moontorch does not have are left out; Lua
 * functions such as the losses are wrapped by name, see _autocast_wrap).
 * Registry ops carry theirs in their row (tensor/ops.def); these are the
 * other functions. */
static const struct {
  const char *name;
  unsigned char cpu, cuda;
} policies[] = {
    /* products and convolutions: the region's low-precision dtype */
    {"linear", AC_LOW, AC_LOW}, {"conv1d", AC_LOW, AC_LOW}, {"conv2d", AC_LOW, AC_LOW}, {"conv3d", AC_LOW, AC_LOW},
    {"conv_transpose1d", AC_LOW, AC_LOW}, {"conv_transpose2d", AC_LOW, AC_LOW}, {"conv_transpose3d", AC_LOW, AC_LOW},
    {"prelu", AC_LOW, AC_LOW}, {"scaled_dot_product_attention", AC_LOW, AC_LOW},
    {"addr", AC_NONE, AC_LOW}, {"chain_matmul", AC_NONE, AC_LOW}, {"multi_dot", AC_NONE, AC_LOW},
    /* float32: transcendental functions, norms, losses (CUDA's list) */
    {"erfinv", AC_NONE, AC_FP32}, {"softplus", AC_NONE, AC_FP32}, {"rms_norm", AC_NONE, AC_FP32},
    {"normalize", AC_NONE, AC_FP32}, {"cosine_similarity", AC_NONE, AC_FP32}, {"dist", AC_NONE, AC_FP32},
    {"pdist", AC_NONE, AC_FP32}, {"renorm", AC_NONE, AC_FP32},
    {"cdist", AC_FP32, AC_FP32}, {"mse_loss", AC_FP32, AC_FP32}, {"l1_loss", AC_FP32, AC_FP32},
    {"smooth_l1_loss", AC_FP32, AC_FP32}, {"huber_loss", AC_FP32, AC_FP32}, {"nll_loss", AC_FP32, AC_FP32},
    {"cross_entropy", AC_FP32, AC_FP32}, {"kl_div", AC_FP32, AC_FP32},
    {"binary_cross_entropy_with_logits", AC_FP32, AC_FP32}, {"poisson_nll_loss", AC_FP32, AC_FP32},
    {"cosine_embedding_loss", AC_FP32, AC_FP32}, {"hinge_embedding_loss", AC_FP32, AC_FP32},
    {"margin_ranking_loss", AC_FP32, AC_FP32}, {"soft_margin_loss", AC_FP32, AC_FP32},
    {"multilabel_margin_loss", AC_FP32, AC_FP32}, {"multi_margin_loss", AC_FP32, AC_FP32},
    {"triplet_margin_loss", AC_FP32, AC_FP32}, {"ctc_loss", AC_FP32, AC_FP32},
    /* float32 on the CPU only (CPU's list: pooling in 3-D, linear algebra) */
    {"binary_cross_entropy", AC_FP32, AC_BANNED}, {"avg_pool3d", AC_FP32, AC_NONE}, {"max_pool3d", AC_FP32, AC_NONE},
    {"adaptive_avg_pool3d", AC_FP32, AC_NONE}, {"adaptive_max_pool3d", AC_FP32, AC_NONE},
    {"grid_sample", AC_FP32, AC_PROMOTE}, {"inverse", AC_FP32, AC_NONE}, {"pinverse", AC_FP32, AC_NONE},
    {"inv", AC_FP32, AC_NONE}, {"pinv", AC_FP32, AC_NONE}, {"solve", AC_FP32, AC_NONE},
    {"cholesky", AC_FP32, AC_NONE}, {"qr", AC_FP32, AC_NONE}, {"svd", AC_FP32, AC_NONE},
    {"svdvals", AC_FP32, AC_NONE}, {"eigh", AC_FP32, AC_NONE}, {"eigvalsh", AC_FP32, AC_NONE},
    {"lstsq", AC_FP32, AC_NONE}, {"matrix_rank", AC_FP32, AC_NONE}, {"trace", AC_FP32, AC_NONE},
    /* float32 unless dtype= is given */
    {"softmin", AC_NONE, AC_FP32_OPT}, {"vector_norm", AC_NONE, AC_FP32_OPT}, {"matrix_norm", AC_NONE, AC_FP32_OPT},
    /* the widest floating type among the arguments */
    {"concat", AC_PROMOTE, AC_PROMOTE}, {"concatenate", AC_PROMOTE, AC_PROMOTE}, {"hstack", AC_PROMOTE, AC_PROMOTE},
    {"vstack", AC_PROMOTE, AC_PROMOTE}, {"dstack", AC_PROMOTE, AC_PROMOTE}, {"addcmul", AC_NONE, AC_PROMOTE},
    {"addcdiv", AC_NONE, AC_PROMOTE}, {"bilinear", AC_NONE, AC_PROMOTE}, {"cross", AC_NONE, AC_PROMOTE},
    {"tensordot", AC_NONE, AC_PROMOTE},
};

int mtl_autocast_flags(const char *name) {
  int op = mt_op_find(name);
  if (op >= 0) return mt_ops[op].autocast;
  for (size_t i = 0; i < sizeof policies / sizeof *policies; i++)
    if (strcmp(policies[i].name, name) == 0) return policies[i].cpu | policies[i].cuda << AC_BITS;
  return 0;
}

/* ---- the state ---- */

typedef struct {
  bool enabled;
  mt_dtype dtype;
} ac_state;
static ac_state states[2] = {{false, MT_BFLOAT16}, {false, MT_FLOAT16}}; /* by mt_devtype */
static bool cache_enabled = true;
static int nesting;
static const char cache_key = 0; /* registry: weak-keyed table, weight userdata -> {cast, version} */

static void sync_mask(void) { mtl_autocast_mask = (states[MT_CPU].enabled ? 1 : 0) | (states[MT_CUDA].enabled ? 2 : 0); }

int mtl_autocast_key(void) {
  int k = mtl_autocast_mask;
  if (k & 1) k |= (int)states[MT_CPU].dtype << 2;
  if (k & 2) k |= (int)states[MT_CUDA].dtype << 8;
  return k;
}

/* Device type of argument idx: 'cpu', 'cuda', 'cuda:0' or a torch.device. */
static mt_devtype check_devtype(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    if (strcmp(s, "cpu") == 0) return MT_CPU;
    if (strncmp(s, "cuda", 4) == 0 && (s[4] == 0 || s[4] == ':')) return MT_CUDA;
    luaL_error(L, "%s: unsupported device type '%s' (expected 'cpu' or 'cuda')", op, s);
  }
  if (lua_type(L, idx) == LUA_TTABLE) return mtl_check_device(L, idx, op).type;
  luaL_error(L, "%s: expected a device type ('cpu' or 'cuda') as argument #%d, got %s", op, idx, luaL_typename(L, idx));
  return MT_CPU;
}

/* The device type of argument 1, or 'cuda' when it is absent (PyTorch's legacy default). */
static mt_devtype opt_devtype(lua_State *L, const char *op) {
  return lua_isnoneornil(L, 1) ? MT_CUDA : check_devtype(L, 1, op);
}

static int l_is_enabled(lua_State *L) {
  lua_pushboolean(L, states[opt_devtype(L, "is_autocast_enabled")].enabled);
  return 1;
}

static int l_set_enabled(lua_State *L) {
  mt_devtype d = lua_gettop(L) >= 2 ? check_devtype(L, 1, "set_autocast_enabled") : MT_CUDA;
  states[d].enabled = lua_toboolean(L, lua_gettop(L) >= 2 ? 2 : 1);
  sync_mask();
  return 0;
}

static int l_get_dtype(lua_State *L) {
  mtl_push_dtype(L, states[opt_devtype(L, "get_autocast_dtype")].dtype);
  return 1;
}

static int l_set_dtype(lua_State *L) {
  mt_devtype d = check_devtype(L, 1, "set_autocast_dtype");
  mt_dtype dt = mtl_check_dtype(L, 2, "set_autocast_dtype");
  if (dt != MT_FLOAT16 && dt != MT_BFLOAT16)
    return luaL_error(L, "autocast: the dtype must be torch.float16 or torch.bfloat16, got torch.%s",
                      mt_dtype_name(dt));
  states[d].dtype = dt;
  return 0;
}

static int l_is_cache_enabled(lua_State *L) {
  lua_pushboolean(L, cache_enabled);
  return 1;
}

static int l_set_cache_enabled(lua_State *L) {
  cache_enabled = lua_toboolean(L, 1);
  return 0;
}

static int l_clear_cache(lua_State *L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &cache_key);
  return 0;
}

static int l_increment_nesting(lua_State *L) {
  lua_pushinteger(L, ++nesting);
  return 1;
}

/* Leaving the outermost region drops the cached weight casts. */
static int l_decrement_nesting(lua_State *L) {
  if (nesting > 0) nesting--;
  if (nesting == 0) l_clear_cache(L);
  lua_pushinteger(L, nesting);
  return 1;
}

/* ---- casting the arguments of one call ---- */

typedef struct {
  bool found;
  mt_devtype dev;
  mt_dtype widest; /* PROMOTE: over the floating tensors */
  bool any_float;
} ac_scan;

static void note(ac_scan *s, const mt_tensor *t) {
  if (!s->found) s->found = true, s->dev = mt_tdevice(t).type;
  if (mt_is_floating((mt_dtype)t->dtype)) {
    s->widest = s->any_float ? mt_promote_types(s->widest, (mt_dtype)t->dtype) : (mt_dtype)t->dtype;
    s->any_float = true;
  }
}

static bool is_options(lua_State *L, int i) { return lua_type(L, i) == LUA_TTABLE && !lua_getmetatable(L, i); }

/* True if a dtype is among the arguments (a torch.dtype value, or dtype=
 * in an options table): FP32_OPT then leaves the call alone. */
static bool dtype_given(lua_State *L, int top) {
  for (int i = 2; i <= top; i++) {
    if (lua_type(L, i) != LUA_TTABLE) continue;
    if (!lua_getmetatable(L, i)) {
      bool has = lua_getfield(L, i, "dtype") != LUA_TNIL;
      lua_pop(L, 1);
      if (has) return true;
      continue;
    }
    lua_pop(L, 1);
    if (luaL_getmetafield(L, i, "__name") != LUA_TNIL) {
      bool is = strcmp(lua_tostring(L, -1), "torch.dtype") == 0;
      lua_pop(L, 1);
      if (is) return true;
    }
  }
  return false;
}

/* A tensor takes part: floating, not already `to`, and not float64 unless
 * promoting (PyTorch leaves float64 alone). */
static bool eligible(const mt_tensor *t, mt_dtype to, int policy) {
  mt_dtype d = (mt_dtype)t->dtype;
  return mt_is_floating(d) && d != to && (d != MT_FLOAT64 || policy == AC_PROMOTE);
}

/* Pushes the cast of the tensor at idx to `to` (differentiable: autograd
 * sees a dtype conversion). A float32 leaf weight cast to the region's low
 * dtype is taken from, or put in, the cache while cache_enabled. */
static void push_cast(lua_State *L, int idx, mt_dtype to, int policy) {
  idx = lua_absindex(L, idx);
  mt_tensor *t = mtl_to_tensor(L, idx), *o = NULL;
  bool cacheable = policy == AC_LOW && cache_enabled && (mt_dtype)t->dtype == MT_FLOAT32 && mtg_grad_enabled() &&
                   mtg_requires_grad(t) && mtg_is_leaf(t);
  if (cacheable) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &cache_key) != LUA_TTABLE) {
      lua_pop(L, 1);
      l_clear_cache(L);
      lua_rawgetp(L, LUA_REGISTRYINDEX, &cache_key);
    }
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TTABLE) {
      lua_rawgeti(L, -1, 2);
      lua_rawgeti(L, -2, 1);
      const mt_tensor *c = mtl_peek_tensor(L, -1);
      if (c && (mt_dtype)c->dtype == to && (uint32_t)lua_tointeger(L, -2) == t->storage->version) {
        lua_replace(L, -4); /* the cast where the cache was */
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 2);
    }
    lua_pop(L, 1); /* the entry; the cache table stays below */
  }
  MTL_CHECK(L, mtg_to_dtype(t, to, true, &o));
  mtl_push_tensor(L, o);
  if (cacheable) { /* stack: cache, cast */
    lua_pushvalue(L, idx);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, (lua_Integer)t->storage->version);
    lua_rawseti(L, -2, 2);
    lua_rawset(L, -4);
    lua_remove(L, -2);
  }
}

/* Replaces a list argument (torch.cat{a, b}) by a copy whose eligible
 * tensors are cast; the caller's table is never changed. */
static void cast_list(lua_State *L, int i, mt_dtype to, int policy) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, i);
  bool any = false;
  for (lua_Integer k = 1; k <= n && !any; k++) {
    lua_rawgeti(L, i, k);
    const mt_tensor *e = mtl_peek_tensor(L, -1);
    any = e && eligible(e, to, policy);
    lua_pop(L, 1);
  }
  if (!any) return;
  lua_createtable(L, (int)n, 0);
  for (lua_Integer k = 1; k <= n; k++) {
    lua_rawgeti(L, i, k);
    const mt_tensor *e = mtl_peek_tensor(L, -1);
    if (e && eligible(e, to, policy)) {
      push_cast(L, -1, to, policy);
      lua_remove(L, -2);
    }
    lua_rawseti(L, -2, k);
  }
  lua_replace(L, i);
}

/* Applies op's autocast policy (flags from mtl_autocast_flags) to the
 * arguments on the stack, in place, when a region is active for the device
 * of the first tensor argument. `name` is for BANNED's message. */
void mtl_autocast_args(lua_State *L, int flags, const char *name) {
  int top = lua_gettop(L);
  ac_scan s = {false, MT_CPU, MT_FLOAT32, false};
  for (int i = 1; i <= top; i++) {
    const mt_tensor *t = mtl_peek_tensor(L, i);
    if (t) {
      note(&s, t);
    } else if (is_options(L, i)) {
      lua_Integer n = (lua_Integer)lua_rawlen(L, i);
      for (lua_Integer k = 1; k <= n; k++) {
        lua_rawgeti(L, i, k);
        const mt_tensor *e = mtl_peek_tensor(L, -1);
        if (e) note(&s, e);
        lua_pop(L, 1);
      }
    } else if (lua_type(L, i) == LUA_TTABLE) {
      lua_pop(L, 1); /* the metatable */
    }
  }
  if (!s.found || !states[s.dev].enabled) return;
  int policy = AC_POLICY(flags, s.dev);
  mt_dtype to;
  switch (policy) {
  case AC_LOW: to = states[s.dev].dtype; break;
  case AC_FP32: to = MT_FLOAT32; break;
  case AC_FP32_OPT:
    if (dtype_given(L, top)) return;
    to = MT_FLOAT32;
    break;
  case AC_PROMOTE:
    if (!s.any_float) return;
    to = s.widest;
    break;
  case AC_BANNED:
    luaL_error(L, "%s: unsafe to autocast: it runs in the region's dtype and its gradient may overflow. Use "
                  "binary_cross_entropy_with_logits (or BCEWithLogitsLoss), which is safe, or run this call "
                  "outside the autocast region on float32 inputs",
               name);
    return;
  default: return;
  }
  for (int i = 1; i <= top; i++) {
    const mt_tensor *t = mtl_peek_tensor(L, i);
    if (t) {
      if (eligible(t, to, policy)) {
        push_cast(L, i, to, policy);
        lua_replace(L, i);
      }
    } else if (is_options(L, i)) {
      cast_list(L, i, to, policy);
    } else if (lua_type(L, i) == LUA_TTABLE) {
      lua_pop(L, 1);
    }
  }
}

/* torch._autocast_wrap(name, fn) -> fn behind name's policy (fn itself when
 * name has none): the Lua functions of torch.nn.functional (linear, the
 * losses) take part in autocast like the C ops. Inside the call autocast
 * is off, as inside a PyTorch op, so explicit dtypes given to F.softmax and
 * the ops a loss is made of are left alone. */
static int wrapped(lua_State *L) {
  if (!mtl_autocast_mask) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  mtl_autocast_args(L, (int)lua_tointeger(L, lua_upvalueindex(2)), lua_tostring(L, lua_upvalueindex(3)));
  int saved = mtl_autocast_mask;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  mtl_autocast_mask = 0;
  int st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  mtl_autocast_mask = saved;
  if (st != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}

static int l_wrap(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  int flags = mtl_autocast_flags(name);
  if (!flags || lua_iscfunction(L, 2)) { /* C functions carry their policy already */
    lua_settop(L, 2);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_pushinteger(L, flags);
  lua_pushvalue(L, 1);
  lua_pushcclosure(L, wrapped, 3);
  return 1;
}

static int l_active(lua_State *L) {
  lua_pushboolean(L, mtl_autocast_mask != 0);
  return 1;
}

static const mtl_reg regs[] = {
    {"is_autocast_enabled", l_is_enabled, MTL_FN,
     "torch.is_autocast_enabled([device_type='cuda']) -- true inside an enabled torch.autocast region"},
    {"set_autocast_enabled", l_set_enabled, MTL_FN,
     "torch.set_autocast_enabled(device_type, enabled) -- switch autocast for 'cpu' or 'cuda' (torch.autocast does it)"},
    {"get_autocast_dtype", l_get_dtype, MTL_FN,
     "torch.get_autocast_dtype(device_type) -- the low-precision dtype of autocast regions (cuda: float16, cpu: bfloat16)"},
    {"set_autocast_dtype", l_set_dtype, MTL_FN, "torch.set_autocast_dtype(device_type, dtype) -- float16 or bfloat16"},
    {"is_autocast_cache_enabled", l_is_cache_enabled, MTL_FN,
     "torch.is_autocast_cache_enabled() -- true if casts of weights are reused within an autocast region"},
    {"set_autocast_cache_enabled", l_set_cache_enabled, MTL_FN,
     "torch.set_autocast_cache_enabled(on) -- reuse casts of weights within a region (the default)"},
    {"clear_autocast_cache", l_clear_cache, MTL_FN, "torch.clear_autocast_cache() -- drop the cached weight casts"},
    {"autocast_increment_nesting", l_increment_nesting, MTL_FN,
     "torch.autocast_increment_nesting() -- entering a region (torch.autocast does it)"},
    {"autocast_decrement_nesting", l_decrement_nesting, MTL_FN,
     "torch.autocast_decrement_nesting() -- leaving one; the outermost clears the cache"},
    {"_autocast_wrap", l_wrap, MTL_FN, "torch._autocast_wrap(name, fn) -- fn under the autocast policy of op `name`"},
    {"_autocast_active", l_active, MTL_FN, "torch._autocast_active() -- true while some autocast region is enabled"},
    {NULL, NULL, 0, NULL}};

void mtl_open_autocast(lua_State *L, int torch_idx, int methods_idx) {
  l_clear_cache(L);
  mtl_register(L, torch_idx, methods_idx, regs);
}
