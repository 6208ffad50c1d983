/* tensor_ud.c -- the Tensor userdata: creation from engine tensors, checks,
 * error raising, metamethods (arithmetic, __index/__newindex dispatch,
 * __gc/__close, __len), properties (shape, dtype, device, T) and the core
 * methods (size, dim, numel, stride, item, totable, to, clone, ...). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "graph.h"
#include "mtl.h"

/* GC accounting. Lua sees a tensor as a few bytes of userdata, so on its
 * own it would let dropped tensors pile up. Whenever the bytes held by live
 * tensors reach twice what they were after the last full collection (and at
 * least a floor), a full collection runs. This bounds memory at about twice
 * the live data in either collector mode; a per-allocation step does not in
 * generational mode, where a result still in a stack slot when its step runs
 * is promoted to old and survives until the next major collection. The
 * floor is 16 MB, or 256 MB while CUDA tensors hold device memory: a GPU
 * step over small live data churns tens of MB of temporaries, and a full
 * collection per call (a fraction of a millisecond) would cost more than
 * its kernels; the caching allocator serves the next call from what one
 * collection frees. */
#define GC_FLOOR ((int64_t)16 << 20)
#define GC_FLOOR_CUDA ((int64_t)256 << 20)
static int64_t gc_threshold = GC_FLOOR;

/* CPU and GPU bytes together: dropped GPU tensors are collected as promptly. */
static int64_t bytes_in_use(void) { return mt_cpu_bytes_in_use() + mt_cuda_bytes_in_use(); }

static void account(lua_State *L) {
  if (bytes_in_use() < gc_threshold) return;
  lua_gc(L, LUA_GCCOLLECT);
  int64_t live = bytes_in_use(), floor = mt_cuda_bytes_in_use() > 0 ? GC_FLOOR_CUDA : GC_FLOOR;
  gc_threshold = live * 2 > floor ? live * 2 : floor;
}

/* A tensor userdata is {magic, tensor*}. Checking the tag is several times
 * cheaper than comparing metatables, and every op checks its operands; Lua
 * code cannot forge userdata contents, and other libraries' userdata do not
 * start with this tag. The metatable is also kept under a pointer key. */
#define UD_MAGIC 0x6d74656e736f7221ull /* "mtensor!" */
typedef struct {
  uint64_t magic;
  mt_tensor *t;
} tensor_ud;

static const char mt_key = 0;

static mt_tensor **udata(lua_State *L, int idx) {
  tensor_ud *u = lua_touserdata(L, idx);
  if (!u || lua_rawlen(L, idx) < sizeof *u || u->magic != UD_MAGIC) return NULL;
  return &u->t;
}

/* Small results of plain arithmetic are "inline" tensors: the tensor, its
 * storage and its data live inside the userdata, whose metatable has no
 * __gc, so making and collecting one costs one Lua allocation and no
 * finalizer. Only the arithmetic metamethods, which keep no reference to
 * their operands, see an inline tensor as it is; every other use goes
 * through mtl_to_tensor, which first moves it to an ordinary tensor and
 * gives the userdata the ordinary metatable (promote). */
#define INLINE_BYTES 64
typedef struct {
  tensor_ud h;
  mt_tensor t;
  mt_storage s;
  double data[INLINE_BYTES / sizeof(double)];
} inline_ud;

static const char inline_key = 0;

#ifdef MT_SANITIZE
/* Sanitizer builds check that nothing kept a reference to an inline tensor
 * when Lua frees it (such a reference would dangle). */
static int inline_gc(lua_State *L) {
  inline_ud *u = lua_touserdata(L, 1);
  if (u->h.t == &u->t && !mt_borrowed_unshared(&u->t)) {
    fprintf(stderr, "moontorch: an inline tensor was still referenced when collected\n");
    abort();
  }
  return 0;
}
#endif

/* The metatable of inline tensors: the tensor metatable without __gc, made
 * on first use (after every module has added its metamethods). */
static void push_inline_meta(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &inline_key) != LUA_TNIL) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -5);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, -2, "__gc");
#ifdef MT_SANITIZE
  lua_pushcfunction(L, inline_gc);
  lua_setfield(L, -2, "__gc");
#endif
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &inline_key);
}

/* Pushes a fresh inline tensor of `like`'s shape and dtype and returns it,
 * or returns NULL (pushing nothing) when it would not fit. */
static mt_tensor *push_inline(lua_State *L, const mt_tensor *like) {
  int64_t n = mt_numel(like);
  if (n * (int64_t)mt_elsize(like) > INLINE_BYTES) return NULL;
  inline_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->h.magic = UD_MAGIC;
  u->h.t = &u->t;
  mt_init_borrowed(&u->t, &u->s, u->data, like->shape, like->ndim, (mt_dtype)like->dtype);
  push_inline_meta(L);
  lua_setmetatable(L, -2);
  return &u->t;
}

/* Moves the inline tensor of the userdata at idx to an ordinary tensor. */
static void promote(lua_State *L, int idx, mt_tensor **ud) {
  idx = lua_absindex(L, idx);
  mt_tensor *c = NULL;
  MTL_CHECK(L, mt_clone(*ud, &c));
  *ud = c;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
  lua_setmetatable(L, idx);
  account(L);
}

void mtl_push_tensor(lua_State *L, mt_tensor *t) {
  tensor_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
  ud->magic = UD_MAGIC;
  ud->t = t;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
  lua_setmetatable(L, -2);
  account(L);
  if (MTG_TRACING()) mtl_jit_pushed(L, t);
}

mt_tensor *mtl_to_tensor(lua_State *L, int idx) {
  mt_tensor **ud = udata(L, idx);
  if (!ud) return NULL;
  if (!*ud) luaL_error(L, "this tensor was closed (used after its <close> scope ended)");
  if ((*ud)->borrowed) promote(L, idx, ud);
  return *ud;
}

const mt_tensor *mtl_peek_tensor(lua_State *L, int idx) {
  mt_tensor **ud = udata(L, idx);
  return ud ? *ud : NULL;
}

mt_tensor *mtl_check_tensor(lua_State *L, int idx, const char *op) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (!t) {
    if (lua_isnone(L, idx)) luaL_error(L, "%s: expected a tensor as argument #%d, got nothing", op, idx);
    luaL_error(L, "%s: expected a tensor as argument #%d, got %s", op, idx, luaL_typename(L, idx));
  }
  return t;
}

void mtl_check_operand(lua_State *L, int idx, const char *op) {
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER || t == LUA_TBOOLEAN || mtl_to_tensor(L, idx)) return;
  luaL_error(L, "%s: expected a tensor or a number as argument #%d, got %s", op, idx, luaL_typename(L, idx));
}

mt_tensor *mtl_tensor_or_scalar(lua_State *L, int idx, const char *op) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) return mt_retain(t);
  mt_scalar s;
  mt_dtype dt;
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      s = mt_sint(lua_tointeger(L, idx));
      dt = MT_INT64;
    } else {
      s = mt_sfloat(lua_tonumber(L, idx));
      dt = MT_FLOAT64;
    }
    break;
  case LUA_TBOOLEAN:
    s = mt_sbool(lua_toboolean(L, idx));
    dt = MT_BOOL;
    break;
  default:
    luaL_error(L, "%s: expected a tensor or a number as argument #%d, got %s", op, idx, luaL_typename(L, idx));
    return NULL;
  }
  mt_tensor *w = NULL;
  MTL_CHECK(L, mt_scalar_tensor(s, dt, &w));
  w->flags |= MT_TF_WRAPPED;
  return w;
}

int mtl_fail(lua_State *L, mt_status st, mt_tensor *o1, mt_tensor *o2, mt_tensor *o3, mt_tensor *o4) {
  mt_release(o1);
  mt_release(o2);
  mt_release(o3);
  mt_release(o4);
  (void)st;
  /* the allocator's message cannot know the op: the running function names it */
  const mtl_reg *r = mtl_running(L);
  if (r && strncmp(mt_errmsg(), "out of memory", 13) == 0) return luaL_error(L, "%s: %s", r->name, mt_errmsg());
  return luaL_error(L, "%s", mt_errmsg());
}

int mtl_push_result(lua_State *L, mt_status st, mt_tensor *res, int opt, const mt_tensor *given) {
  MTL_CHECK(L, st);
  if (given) {
    lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, res);
  return 1;
}

/* ---- dtype and device objects ---- */

void mtl_push_dtype(lua_State *L, mt_dtype dt) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.dtypes");
  lua_rawgeti(L, -1, (int)dt + 1);
  lua_remove(L, -2);
}

void mtl_push_device(lua_State *L, mt_device d) {
  char buf[32];
  mt_device_str(d, buf, sizeof buf);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.devices");
  if (lua_getfield(L, -1, buf) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, d.type == MT_CPU ? "cpu" : "cuda");
    lua_setfield(L, -2, "type");
    if (d.type != MT_CPU) {
      lua_pushinteger(L, d.index);
      lua_setfield(L, -2, "index");
    }
    lua_pushstring(L, buf);
    lua_setfield(L, -2, "_str");
    luaL_setmetatable(L, "torch.device");
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, buf);
  }
  lua_remove(L, -2);
}

static int dtype_tostring(lua_State *L) {
  lua_getfield(L, 1, "name");
  lua_pushfstring(L, "torch.%s", lua_tostring(L, -1));
  return 1;
}

static int device_tostring(lua_State *L) {
  lua_getfield(L, 1, "_str");
  return 1;
}

static int device_eq(lua_State *L) {
  lua_getfield(L, 1, "_str");
  lua_getfield(L, 2, "_str");
  lua_pushboolean(L, lua_rawequal(L, -1, -2) || (lua_isstring(L, -1) && lua_isstring(L, -2) &&
                                                  strcmp(lua_tostring(L, -1), lua_tostring(L, -2)) == 0));
  return 1;
}

static int size_tostring(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "torch.Size({");
  int n = (int)lua_rawlen(L, 1);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    luaL_addvalue(&b);
    if (i < n) luaL_addstring(&b, ", ");
  }
  luaL_addstring(&b, "})");
  luaL_pushresult(&b);
  return 1;
}

/* Creates torch.float32 ... objects and the registry tables behind them. */
static void open_dtypes(lua_State *L, int torch_idx) {
  luaL_newmetatable(L, "torch.dtype");
  lua_pushcfunction(L, dtype_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  luaL_newmetatable(L, "torch.device");
  lua_pushcfunction(L, device_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, device_eq);
  lua_setfield(L, -2, "__eq");
  lua_pop(L, 1);
  luaL_newmetatable(L, "torch.Size");
  lua_pushcfunction(L, size_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.devices");
  lua_createtable(L, MT_NDTYPE, 0);
  for (int i = 0; i < MT_NDTYPE; i++) {
    lua_createtable(L, 0, 5);
    lua_pushstring(L, mt_dtype_name((mt_dtype)i));
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "_id");
    lua_pushboolean(L, mt_is_floating((mt_dtype)i));
    lua_setfield(L, -2, "is_floating_point");
    lua_pushinteger(L, (lua_Integer)mt_dtype_size((mt_dtype)i));
    lua_setfield(L, -2, "itemsize");
    luaL_setmetatable(L, "torch.dtype");
    lua_pushvalue(L, -1);
    lua_setfield(L, torch_idx, mt_dtype_name((mt_dtype)i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.dtypes");
  static const struct { const char *alias; mt_dtype d; } al[] = {
      {"float", MT_FLOAT32}, {"double", MT_FLOAT64}, {"half", MT_FLOAT16}, {"long", MT_INT64},
      {"int", MT_INT32},     {"short", MT_INT16},    {"byte", MT_UINT8}, {"cfloat", MT_COMPLEX64},
      {"cdouble", MT_COMPLEX128}};
  for (size_t i = 0; i < sizeof al / sizeof *al; i++) {
    mtl_push_dtype(L, al[i].d);
    lua_setfield(L, torch_idx, al[i].alias);
  }
}

/* ---- metamethods ---- */

/* __gc and __close: only tensors have this metatable, but __close may be
 * called by hand with anything, so the tag is still checked. */
static int t_gc(lua_State *L) {
  mt_tensor **ud = udata(L, 1);
  if (ud && *ud) {
    mt_release(*ud);
    *ud = NULL;
  }
  return 0;
}

static int binop(lua_State *L, mt_op op) {
  mt_tensor **ua = udata(L, 1), **ub = ua ? udata(L, 2) : NULL;
  if (ua && ub && *ua && *ub) { /* two tensors: no wrapping, no extra references */
    mt_tensor *a = *ua, *b = *ub, *o = NULL;
    if (!MTG_TRACING() && !a->autograd && !b->autograd && mt_binary_is_plain(op, a, b) &&
        (o = push_inline(L, a))) {
      MTL_CHECK(L, mt_binary_small_into(op, a, b, o));
      return 1;
    }
    /* autograd or a trace may keep its operands: an inline one must first
     * become an ordinary tensor, or it would dangle once Lua frees it */
    if ((*ua)->borrowed) promote(L, 1, ua);
    if ((*ub)->borrowed) promote(L, 2, ub);
    a = *ua, b = *ub;
    MTL_CHECK(L, mtg_binary(op, a, b, &o));
    mtl_push_tensor(L, o);
    return 1;
  }
  mtl_check_operand(L, 1, mt_ops[op].name);
  mtl_check_operand(L, 2, mt_ops[op].name);
  return mtl_push_binary(L, op, mt_ops[op].name, false);
}

int mtl_push_binary(lua_State *L, mt_op op, const char *name, bool need_tensor) {
  mt_tensor *a = mtl_tensor_or_scalar(L, 1, name), *b = mtl_tensor_or_scalar(L, 2, name), *o = NULL;
  if (need_tensor && (a->flags & MT_TF_WRAPPED) && (b->flags & MT_TF_WRAPPED)) {
    mt_release(a);
    mt_release(b);
    return luaL_error(L, "%s: at least one argument must be a tensor", name);
  }
  mt_status st = mtg_binary(op, a, b, &o);
  if (st) mtl_fail(L, st, a, b, NULL, NULL);
  mt_release(a);
  mt_release(b);
  mtl_push_tensor(L, o);
  return 1;
}

static int t_add(lua_State *L) { return binop(L, MT_OP_add); }
static int t_sub(lua_State *L) { return binop(L, MT_OP_sub); }
static int t_mul(lua_State *L) { return binop(L, MT_OP_mul); }
static int t_div(lua_State *L) { return binop(L, MT_OP_div); }
static int t_mod(lua_State *L) { return binop(L, MT_OP_remainder); }
/* a ^ b is pow, also for autocast (float32 on CUDA) */
static int t_pow(lua_State *L) {
  static int flags = -1;
  if (mtl_autocast_mask) {
    if (flags < 0) flags = mtl_autocast_flags("pow");
    MTL_AUTOCAST(L, flags, "pow");
  }
  return binop(L, MT_OP_pow);
}
static int t_idiv(lua_State *L) { return binop(L, MT_OP_floor_divide); }
static int t_band(lua_State *L) { return binop(L, MT_OP_bitwise_and); }
static int t_bor(lua_State *L) { return binop(L, MT_OP_bitwise_or); }
static int t_bxor(lua_State *L) { return binop(L, MT_OP_bitwise_xor); }
static int t_shl(lua_State *L) { return binop(L, MT_OP_bitwise_left_shift); }
static int t_shr(lua_State *L) { return binop(L, MT_OP_bitwise_right_shift); }

static int unop(lua_State *L, mt_op op) {
  mt_tensor *x = mtl_check_tensor(L, 1, mt_ops[op].name), *o = NULL;
  MTL_CHECK(L, mtg_unary(op, x, &o));
  mtl_push_tensor(L, o);
  return 1;
}
static int t_unm(lua_State *L) { return unop(L, MT_OP_neg); }
static int t_bnot(lua_State *L) { return unop(L, MT_OP_bitwise_not); }

static int t_len(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "#");
  if (t->ndim == 0) return luaL_error(L, "#: a 0-dim tensor has no length (use x:item() or x:numel())");
  lua_pushinteger(L, (lua_Integer)t->shape[0]);
  return 1;
}

static int t_compare_error(lua_State *L) {
  return luaL_error(L, "tensors cannot be ordered with < or <= (Lua needs a single boolean); use x:lt(y), "
                       "x:le(y), x:gt(y) or x:ge(y) for elementwise comparisons");
}

/* The fields __index serves besides methods: shape, dtype, ... here and the
 * autograd ones of mtl_autograd_getprop. The metatable's __properties lists
 * them for the REPL's completion (which never calls __index). */
static const char *const properties[] = {"shape", "dtype",   "device",  "ndim",    "is_cuda",      "T", "mT",
                                         "requires_grad", "grad", "grad_fn", "is_leaf", "retains_grad", "real", NULL};
/* x.imag is served too (t_index), but is no listed property: on the real
 * tensors completion probes it is an error, as in PyTorch */

/* ---- attributes ----
 * A tensor may carry a table of named attributes (a tv_tensor's kind, a
 * BoundingBoxes' format and canvas_size): a weak-keyed registry table maps
 * the userdata to it, so tensors without attributes pay nothing. __index
 * answers a name that is no method or property from it. */
static const char attrs_key = 0;

/* Pushes the registry's attribute map, creating it on first use. */
static void push_attr_map(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &attrs_key) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &attrs_key);
}

bool mtl_push_attrs(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &attrs_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) != LUA_TTABLE) {
    lua_pop(L, 2);
    return false;
  }
  lua_remove(L, -2);
  return true;
}

void mtl_set_attrs(lua_State *L, int tidx, int aidx) {
  tidx = lua_absindex(L, tidx), aidx = lua_absindex(L, aidx);
  push_attr_map(L);
  lua_pushvalue(L, tidx);
  lua_pushvalue(L, aidx);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* torch._attrs(x[, attrs]): x's attribute table (nil when none); with a
 * second argument, sets it (nil or false clears) and returns x. */
static int m_attrs(lua_State *L) {
  mtl_check_tensor(L, 1, "_attrs");
  if (lua_gettop(L) < 2) {
    if (!mtl_push_attrs(L, 1)) lua_pushnil(L);
    return 1;
  }
  if (!lua_isnoneornil(L, 2) && !lua_toboolean(L, 2)) lua_pushnil(L), lua_replace(L, 2);
  if (!lua_isnil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  push_attr_map(L);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_rawset(L, -3);
  lua_settop(L, 1);
  return 1;
}

/* __index: methods by name, then properties, then attributes, then indexing
 * (l_index.c). */
static int t_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2); /* upvalue 1 is the method table */
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    const char *k = lua_tostring(L, 2);
    mt_tensor *t = mtl_check_tensor(L, 1, k);
    if (strcmp(k, "shape") == 0) {
      mtl_push_shape(L, t->shape, t->ndim);
      return 1;
    }
    if (strcmp(k, "dtype") == 0) {
      mtl_push_dtype(L, (mt_dtype)t->dtype);
      return 1;
    }
    if (strcmp(k, "device") == 0) {
      mtl_push_device(L, mt_tdevice(t));
      return 1;
    }
    if (strcmp(k, "ndim") == 0) {
      lua_pushinteger(L, t->ndim);
      return 1;
    }
    if (strcmp(k, "is_cuda") == 0) {
      lua_pushboolean(L, mt_tdevice(t).type == MT_CUDA);
      return 1;
    }
    if (strcmp(k, "T") == 0 || strcmp(k, "mT") == 0) {
      mt_tensor *o = NULL;
      if (k[0] == 'm' || t->ndim <= 2) {
        if (t->ndim < 2 && k[0] == 'm') return luaL_error(L, "mT: tensor must have at least 2 dimensions");
        MTL_CHECK(L, mtg_transpose(t, t->ndim < 2 ? 0 : t->ndim - 2, t->ndim < 2 ? 0 : t->ndim - 1, &o));
      } else {
        int perm[MT_MAXDIM];
        for (int i = 0; i < t->ndim; i++) perm[i] = t->ndim - 1 - i;
        MTL_CHECK(L, mtg_permute(t, perm, t->ndim, &o));
      }
      mtl_push_tensor(L, o);
      return 1;
    }
    if (strcmp(k, "real") == 0 || strcmp(k, "imag") == 0) { /* PyTorch's attributes: views of the parts */
      mt_tensor *o = NULL;
      MTL_CHECK_OP(L, k, mtg_complex_part(t, k[0] == 'i', &o));
      mtl_push_tensor(L, o);
      return 1;
    }
    if (mtl_autograd_getprop(L, t, k)) return 1;
    if (mtl_push_attrs(L, 1)) {
      lua_pushvalue(L, 2);
      lua_rawget(L, -2);
      return 1;
    }
    lua_pushnil(L);
    return 1;
  }
  return mtl_index_get(L);
}

static int t_newindex(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    mt_tensor *t = mtl_check_tensor(L, 1, "__newindex");
    if (mtl_autograd_setprop(L, t, lua_tostring(L, 2), 3)) return 0;
    return luaL_error(L, "cannot set field '%s' of a tensor", lua_tostring(L, 2));
  }
  return mtl_index_set(L);
}

/* ---- core methods ---- */

static int m_size(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "size");
  if (lua_isnoneornil(L, 2)) {
    mtl_push_shape(L, t->shape, t->ndim);
    return 1;
  }
  int d = mtl_dim(L, luaL_checkinteger(L, 2), t->ndim, "size");
  lua_pushinteger(L, t->ndim ? (lua_Integer)t->shape[d] : 1);
  return 1;
}

static int m_stride(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "stride");
  if (lua_isnoneornil(L, 2)) {
    mtl_push_shape(L, t->strides, t->ndim);
    lua_pushnil(L);
    lua_setmetatable(L, -2);
    return 1;
  }
  int d = mtl_dim(L, luaL_checkinteger(L, 2), t->ndim, "stride");
  lua_pushinteger(L, t->ndim ? (lua_Integer)t->strides[d] : 1);
  return 1;
}

static int m_dim(lua_State *L) {
  lua_pushinteger(L, mtl_check_tensor(L, 1, "dim")->ndim);
  return 1;
}

static int m_numel(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_numel(mtl_check_tensor(L, 1, "numel")));
  return 1;
}

static int m_element_size(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_elsize(mtl_check_tensor(L, 1, "element_size")));
  return 1;
}

static int m_is_contiguous(lua_State *L) {
  lua_pushboolean(L, mt_is_contiguous(mtl_check_tensor(L, 1, "is_contiguous")));
  return 1;
}

static int m_is_floating_point(lua_State *L) {
  lua_pushboolean(L, mt_is_floating((mt_dtype)mtl_check_tensor(L, 1, "is_floating_point")->dtype));
  return 1;
}

static void push_scalar(lua_State *L, mt_scalar s) {
  if (s.kind == MT_SK_FLOAT)
    lua_pushnumber(L, s.v.f);
  else if (s.kind == MT_SK_BOOL)
    lua_pushboolean(L, (int)s.v.i);
  else
    lua_pushinteger(L, (lua_Integer)s.v.i);
}

/* A complex value as the table {re, im} (totable's and item's form). */
static void push_complex(lua_State *L, double re, double im) {
  lua_createtable(L, 2, 0);
  lua_pushnumber(L, re);
  lua_rawseti(L, -2, 1);
  lua_pushnumber(L, im);
  lua_rawseti(L, -2, 2);
}

static void push_complex_at(lua_State *L, const mt_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
  const char *p = mt_data(t) + off * (int64_t)mt_elsize(t);
  if (t->dtype == MT_COMPLEX64)
    push_complex(L, ((const float *)p)[0], ((const float *)p)[1]);
  else
    push_complex(L, ((const double *)p)[0], ((const double *)p)[1]);
}

static int m_item(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "item");
  MTL_JIT_SYNC(L, "item");
  if (mt_is_complex((mt_dtype)t->dtype)) { /* {re, im} */
    if (mt_numel(t) != 1) {
      mt_scalar s;
      MTL_CHECK(L, mt_item(t, &s)); /* its error */
    }
    mt_tensor *h = NULL;
    MTL_CHECK(L, mt_to_dtype(t, MT_COMPLEX128, true, &h));
    if (mt_tdevice(h).type != MT_CPU) {
      mt_tensor *c = NULL;
      mt_status st = mt_cuda_to_device(h, mt_cpu(), false, &c);
      mt_release(h);
      MTL_CHECK(L, st);
      h = c;
    }
    push_complex(L, ((const double *)mt_data(h))[0], ((const double *)mt_data(h))[1]);
    mt_release(h);
    return 1;
  }
  mt_scalar s;
  MTL_CHECK(L, mt_item(t, &s));
  push_scalar(L, s);
  return 1;
}

/* Pushes element at linear position idx[] of t as a Lua value. */
static void push_elem(lua_State *L, const mt_tensor *t, const int64_t *idx) {
  if (mt_is_complex((mt_dtype)t->dtype)) {
    push_complex_at(L, t, idx);
    return;
  }
  if (t->dtype == MT_INT64) {
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    lua_pushinteger(L, ((const int64_t *)mt_data(t))[off]);
    return;
  }
  double v = mt_get_f64(t, idx);
  if (t->dtype == MT_BOOL)
    lua_pushboolean(L, v != 0);
  else if (mt_is_floating((mt_dtype)t->dtype))
    lua_pushnumber(L, v);
  else
    lua_pushinteger(L, (lua_Integer)v);
}

static void totable_rec(lua_State *L, const mt_tensor *t, int64_t *idx, int d) {
  if (d == t->ndim) {
    push_elem(L, t, idx);
    return;
  }
  luaL_checkstack(L, 4, "totable: tensor too deep");
  lua_createtable(L, (int)t->shape[d], 0);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    idx[d] = i;
    totable_rec(L, t, idx, d + 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int m_totable(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "totable");
  MTL_JIT_SYNC(L, "totable");
  if (mt_tdevice(t).type != MT_CPU) { /* read a host copy */
    mt_tensor *h = NULL;
    MTL_CHECK(L, mt_cuda_to_device(t, mt_cpu(), false, &h));
    mtl_push_tensor(L, h);
    lua_replace(L, 1);
    t = h;
  }
  int64_t idx[MT_MAXDIM] = {0};
  totable_rec(L, t, idx, 0);
  return 1;
}

static int is_device(lua_State *L, int i) {
  if (lua_type(L, i) != LUA_TTABLE || !lua_getmetatable(L, i)) return 0;
  luaL_getmetatable(L, "torch.device");
  int eq = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return eq;
}

/* A string argument of x:to at i: a device ('cpu', 'cuda', 'cuda:1') or a
 * dtype name ('float64', 'torch.float64', 'double'); raises naming the
 * closest of them when it is neither. */
static void to_string_arg(lua_State *L, int i, mt_dtype *dt, mt_device *dev) {
  const char *s = lua_tostring(L, i);
  if (strcmp(s, "cpu") == 0 || strncmp(s, "cuda", 4) == 0) {
    *dev = mtl_check_device(L, i, "to");
    return;
  }
  int d = mtl_dtype_from_string(s);
  if (d >= 0) {
    *dt = (mt_dtype)d;
    return;
  }
  char near[32];
  mtl_push_dtype_names(L);
  lua_pushstring(L, "cpu cuda");
  lua_concat(L, 2);
  if (mtl_closest_word(lua_tostring(L, -1), s, strlen(s), near, sizeof near))
    luaL_error(L, "to: '%s' is neither a dtype nor a device (did you mean '%s'?)", s, near);
  luaL_error(L, "to: '%s' is neither a dtype (torch.float32, 'float64', ...) nor a device ('cpu', 'cuda', "
                "'cuda:1')", s);
}

/* x:to(dtype | device | tensor [, {copy=}]) */
static int m_to(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "to");
  int opt = mtl_options_index(L, 2);
  mt_dtype dt = (mt_dtype)t->dtype;
  mt_device dev = mt_tdevice(t);
  int last = opt ? opt - 1 : lua_gettop(L);
  for (int i = 2; i <= last; i++) {
    mt_tensor *other = mtl_to_tensor(L, i);
    if (other) {
      dt = (mt_dtype)other->dtype;
      dev = mt_tdevice(other);
    } else if (lua_type(L, i) == LUA_TSTRING) {
      to_string_arg(L, i, &dt, &dev);
    } else if (is_device(L, i)) {
      dev = mtl_check_device(L, i, "to");
    } else if (lua_isnil(L, i)) {
      return luaL_error(L, "to: expected a dtype, a device or a tensor, got nil (a misspelled name such as "
                           "torch.float77 is nil; dtypes are torch.float32, torch.float64, ...)");
    } else {
      dt = mtl_check_dtype(L, i, "to");
    }
  }
  if (opt) {
    dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", dt);
    mtl_optfield(L, opt, "device");
    if (!lua_isnil(L, -1)) dev = mtl_check_device(L, -1, "to");
    lua_pop(L, 1);
  }
  int copy = opt ? mtl_opt_bool(L, 0, 0, opt, "copy", 0) : 0;
  if (!mt_same_device(dev, mt_tdevice(t))) {
    int nb = opt ? mtl_opt_bool(L, 0, 0, opt, "non_blocking", 0) : 0;
    mt_tensor *m = NULL, *o = NULL;
    MTL_CHECK(L, mt_cuda_check_device(dev, "to"));
    MTL_CHECK(L, mt_cuda_to_device(t, dev, nb, &m));
    mt_status st = (mt_dtype)m->dtype == dt ? MT_OK : mt_to_dtype(m, dt, false, &o);
    if (st) mtl_fail(L, st, m, NULL, NULL, NULL);
    if (o) mt_release(m);
    mtl_push_tensor(L, o ? o : m);
    return 1;
  }
  if ((mt_dtype)t->dtype == dt && !copy) {
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *o = NULL;
  MTL_CHECK(L, mtg_to_dtype(t, dt, true, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int convert_to(lua_State *L, mt_dtype dt) {
  mt_tensor *t = mtl_check_tensor(L, 1, mt_dtype_name(dt));
  if ((mt_dtype)t->dtype == dt) {
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *o = NULL;
  MTL_CHECK(L, mtg_to_dtype(t, dt, true, &o));
  mtl_push_tensor(L, o);
  return 1;
}
static int m_float(lua_State *L) { return convert_to(L, MT_FLOAT32); }
static int m_double(lua_State *L) { return convert_to(L, MT_FLOAT64); }
static int m_half(lua_State *L) { return convert_to(L, MT_FLOAT16); }
static int m_bfloat16(lua_State *L) { return convert_to(L, MT_BFLOAT16); }
static int m_long(lua_State *L) { return convert_to(L, MT_INT64); }
static int m_int(lua_State *L) { return convert_to(L, MT_INT32); }
static int m_short(lua_State *L) { return convert_to(L, MT_INT16); }
static int m_char(lua_State *L) { return convert_to(L, MT_INT8); }
static int m_byte(lua_State *L) { return convert_to(L, MT_UINT8); }
static int m_bool(lua_State *L) { return convert_to(L, MT_BOOL); }

/* Moves t (argument 1) to dev; non_blocking from an options table at opt. */
static int move_to(lua_State *L, mt_device dev, int opt, const char *op) {
  mt_tensor *t = mtl_check_tensor(L, 1, op), *o = NULL;
  if (mt_same_device(mt_tdevice(t), dev)) {
    lua_settop(L, 1);
    return 1;
  }
  int nb = opt ? mtl_opt_bool(L, 0, 0, opt, "non_blocking", 0) : 0;
  MTL_CHECK(L, mt_cuda_check_device(dev, op));
  MTL_CHECK(L, mt_cuda_to_device(t, dev, nb, &o));
  mtl_push_tensor(L, o);
  return 1;
}

/* x:cpu([{non_blocking=}]) */
static int m_cpu(lua_State *L) { return move_to(L, mt_cpu(), mtl_options_index(L, 2), "cpu"); }

/* x:cuda([device][, {non_blocking=}]) */
static int m_cuda(lua_State *L) {
  int opt = mtl_options_index(L, 2);
  mt_device dev = {MT_CUDA, (int8_t)mt_cuda_current_device()};
  if (lua_isinteger(L, 2)) {
    lua_Integer i = lua_tointeger(L, 2);
    dev.index = (int8_t)(i < 0 || i > 127 ? 127 : i);
  } else if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TTABLE) {
    dev = mtl_check_device(L, 2, "cuda");
  }
  return move_to(L, dev, opt, "cuda");
}

static int m_type(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "type");
  if (lua_isnoneornil(L, 2)) {
    static const char *names[MT_NDTYPE] = {"torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor",
                                           "torch.BFloat16Tensor", "torch.CharTensor", "torch.ShortTensor",
                                           "torch.IntTensor", "torch.LongTensor", "torch.ByteTensor",
                                           "torch.BoolTensor", "torch.UInt16Tensor",
                                           "torch.ComplexFloatTensor", "torch.ComplexDoubleTensor"};
    lua_pushstring(L, names[t->dtype]);
    return 1;
  }
  return convert_to(L, mtl_check_dtype(L, 2, "type"));
}

static int m_clone(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "clone"), *o = NULL;
  MTL_CHECK(L, mtg_clone(t, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int m_contiguous(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "contiguous"), *o = NULL;
  if (mt_is_contiguous(t)) {
    lua_settop(L, 1);
    return 1;
  }
  MTL_CHECK(L, mtg_contiguous(t, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int m_copy_(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "copy_");
  mt_tensor *s = mtl_tensor_or_scalar(L, 2, "copy_");
  mt_status st = mtg_copy_(t, s);
  mt_release(s);
  MTL_CHECK(L, st);
  lua_settop(L, 1);
  return 1;
}

static mt_scalar check_scalar(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) == LUA_TBOOLEAN) return mt_sbool(lua_toboolean(L, idx));
  if (lua_isinteger(L, idx)) return mt_sint(lua_tointeger(L, idx));
  if (lua_type(L, idx) == LUA_TNUMBER) return mt_sfloat(lua_tonumber(L, idx));
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) {
    mt_scalar s;
    MTL_CHECK(L, mt_item(t, &s));
    return s;
  }
  luaL_error(L, "%s: expected a number, got %s", op, luaL_typename(L, idx));
  return mt_sint(0);
}

static int m_fill_(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "fill_");
  MTL_CHECK(L, mtg_fill_(t, check_scalar(L, 2, "fill_")));
  lua_settop(L, 1);
  return 1;
}

static int m_zero_(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "zero_");
  MTL_CHECK(L, mtg_fill_(t, mt_sint(0)));
  lua_settop(L, 1);
  return 1;
}

static int m_is_tensor(lua_State *L) {
  lua_pushboolean(L, udata(L, 1) != NULL);
  return 1;
}

static int m_data_version(lua_State *L) {
  lua_pushinteger(L, mtl_check_tensor(L, 1, "_version")->storage->version);
  return 1;
}

static const mtl_reg core[] = {
    {"size", m_size, MTL_METHOD, "x:size([dim]) -- the shape as a table, or the size of one dimension"},
    {"stride", m_stride, MTL_METHOD, "x:stride([dim]) -- strides in elements, all or of one dimension"},
    {"dim", m_dim, MTL_METHOD, "x:dim() -- number of dimensions"},
    {"ndimension", m_dim, MTL_METHOD, "x:ndimension() -- number of dimensions (= dim)"},
    {"numel", m_numel, MTL_BOTH, "torch.numel(x) -- number of elements"},
    {"nelement", m_numel, MTL_METHOD, "x:nelement() -- number of elements (= numel)"},
    {"element_size", m_element_size, MTL_METHOD, "x:element_size() -- bytes per element"},
    {"is_contiguous", m_is_contiguous, MTL_METHOD, "x:is_contiguous() -- true if laid out densely in row-major order"},
    {"is_floating_point", m_is_floating_point, MTL_BOTH, "x:is_floating_point() -- true for float dtypes"},
    {"item", m_item, MTL_METHOD, "x:item() -- the value of a one-element tensor as a Lua number/boolean"},
    {"totable", m_totable, MTL_METHOD, "x:totable() -- nested Lua tables of the values"},
    {"tolist", m_totable, MTL_METHOD, "x:tolist() -- nested Lua tables of the values (= totable)"},
    {"to", m_to, MTL_METHOD, "x:to(dtype|device|tensor[, {copy=}]) -- convert dtype and/or move device",
     "dtype device copy non_blocking"},
    {"float", m_float, MTL_METHOD, "x:float() -- as float32"},
    {"double", m_double, MTL_METHOD, "x:double() -- as float64"},
    {"half", m_half, MTL_METHOD, "x:half() -- as float16"},
    {"bfloat16", m_bfloat16, MTL_METHOD, "x:bfloat16() -- as bfloat16"},
    {"long", m_long, MTL_METHOD, "x:long() -- as int64"},
    {"int", m_int, MTL_METHOD, "x:int() -- as int32"},
    {"short", m_short, MTL_METHOD, "x:short() -- as int16"},
    {"char", m_char, MTL_METHOD, "x:char() -- as int8"},
    {"byte", m_byte, MTL_METHOD, "x:byte() -- as uint8"},
    {"bool", m_bool, MTL_METHOD, "x:bool() -- as bool"},
    {"cpu", m_cpu, MTL_METHOD, "x:cpu() -- the tensor on the CPU", "non_blocking"},
    {"cuda", m_cuda, MTL_METHOD, "x:cuda([device]) -- the tensor on a CUDA device", "non_blocking"},
    {"type", m_type, MTL_METHOD, "x:type([dtype]) -- the tensor type name, or a converted copy"},
    {"clone", m_clone, MTL_BOTH, "torch.clone(x) -- a copy with its own storage"},
    {"contiguous", m_contiguous, MTL_METHOD, "x:contiguous() -- x if contiguous, else a contiguous copy"},
    {"copy_", m_copy_, MTL_METHOD, "x:copy_(src) -- copy src (broadcast, converted) into x in place"},
    {"fill_", m_fill_, MTL_METHOD, "x:fill_(v) -- set every element to v"},
    {"zero_", m_zero_, MTL_METHOD, "x:zero_() -- set every element to 0"},
    {"is_tensor", m_is_tensor, MTL_FN, "torch.is_tensor(v) -- true if v is a tensor", MTL_DATA},
    {"_version", m_data_version, MTL_METHOD, "x:_version() -- in-place modification counter of x's storage"},
    {"_attrs", m_attrs, MTL_FN, "torch._attrs(x[, attrs]) -- x's attribute table, or set it (nil clears)", MTL_DATA},
    {NULL, NULL, 0, NULL}};

void mtl_open_tensor(lua_State *L, int torch_idx, int methods_idx) {
  open_dtypes(L, torch_idx);
  luaL_newmetatable(L, MTL_TENSOR);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &mt_key);
  static const luaL_Reg meta[] = {
      {"__gc", t_gc},      {"__close", t_gc},   {"__add", t_add},    {"__sub", t_sub},     {"__mul", t_mul},
      {"__div", t_div},    {"__mod", t_mod},    {"__pow", t_pow},    {"__unm", t_unm},     {"__idiv", t_idiv},
      {"__band", t_band},  {"__bor", t_bor},    {"__bxor", t_bxor},  {"__shl", t_shl},     {"__shr", t_shr},
      {"__bnot", t_bnot},  {"__len", t_len},    {"__lt", t_compare_error}, {"__le", t_compare_error},
      {"__newindex", t_newindex}, {NULL, NULL}};
  luaL_setfuncs(L, meta, 0);
  lua_pushvalue(L, methods_idx);
  lua_pushcclosure(L, t_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, methods_idx);
  lua_setfield(L, -2, "__methods");
  lua_createtable(L, 0, (int)(sizeof properties / sizeof *properties));
  for (int i = 0; properties[i]; i++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, properties[i]);
  }
  lua_setfield(L, -2, "__properties");
  lua_pop(L, 1);
  mtl_register(L, torch_idx, methods_idx, core);
}
