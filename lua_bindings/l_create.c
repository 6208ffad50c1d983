/* l_create.c -- tensor creation from Lua values: torch.tensor (nested
 * tables, numbers, booleans), zeros/ones/full/empty and their _like forms.
 * Options: dtype=, device=, requires_grad=. */
#include <string.h>

#include "cplx.h"
#include "graph.h"
#include "mtl.h"

void mtl_apply_requires_grad(lua_State *L, int opt, int tidx) {
  if (!opt || !mtl_opt_bool(L, 0, 0, opt, "requires_grad", 0)) return;
  MTL_CHECK(L, mtg_set_requires_grad(mtl_check_tensor(L, tidx, "requires_grad"), true));
}

/* kinds seen while scanning nested tables */
#define SEEN_BOOL 1
#define SEEN_INT 2
#define SEEN_FLOAT 4

/* In a complex dtype a list of two numbers is one complex number {re, im}
 * (what x:totable() gives back). */
static bool is_pair(lua_State *L, int idx, bool pairs) {
  if (!pairs || lua_type(L, idx) != LUA_TTABLE || mtl_to_tensor(L, idx) || lua_rawlen(L, idx) != 2) return false;
  int a = lua_rawgeti(L, idx, 1), b = lua_rawgeti(L, idx, 2);
  lua_pop(L, 2);
  return a == LUA_TNUMBER && b == LUA_TNUMBER;
}

/* Walks value at idx at depth d: records the shape from the first element
 * chain, checks every sub-list against it, and ORs the kinds of leaves. */
static void scan(lua_State *L, int idx, int d, int64_t *shape, int *ndim, int *seen, bool pairs) {
  int t = lua_type(L, idx);
  if (t == LUA_TTABLE && !mtl_to_tensor(L, idx) && !is_pair(L, idx, pairs)) {
    int64_t n = (int64_t)lua_rawlen(L, idx);
    if (d >= MT_MAXDIM) luaL_error(L, "tensor: nested tables deeper than %d levels", MT_MAXDIM);
    if (d == *ndim) {
      if (*seen) luaL_error(L, "tensor: ragged nested tables (a list where a number was expected at depth %d)", d + 1);
      shape[d] = n;
      *ndim = d + 1;
    } else if (d > *ndim || shape[d] != n) {
      luaL_error(L, "tensor: ragged nested tables (expected length %d at depth %d, got %d)",
                 d < *ndim ? (int)shape[d] : 0, d + 1, (int)n);
    }
    luaL_checkstack(L, 4, "tensor: nesting too deep");
    for (int64_t i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      scan(L, lua_gettop(L), d + 1, shape, ndim, seen, pairs);
      lua_pop(L, 1);
    }
    return;
  }
  if (d != *ndim && !(d == 0 && *ndim == 0))
    luaL_error(L, "tensor: ragged nested tables (a number where a list was expected at depth %d)", d + 1);
  if (t == LUA_TNUMBER)
    *seen |= lua_isinteger(L, idx) ? SEEN_INT : SEEN_FLOAT;
  else if (t == LUA_TTABLE && !mtl_to_tensor(L, idx))
    *seen |= SEEN_FLOAT; /* a pair */
  else if (t == LUA_TBOOLEAN)
    *seen |= SEEN_BOOL;
  else if (mtl_to_tensor(L, idx) && mt_numel(mtl_to_tensor(L, idx)) == 1)
    *seen |= mt_is_floating((mt_dtype)mtl_to_tensor(L, idx)->dtype) ? SEEN_FLOAT : SEEN_INT;
  else
    luaL_error(L, "tensor: expected numbers, booleans or nested tables, found a %s", luaL_typename(L, idx));
}

/* Writes the leaves in row-major order into a float64 or int64 buffer;
 * with pairs, two float64 (re, im) per leaf. */
static void fill(lua_State *L, int idx, int d, int ndim, double *fd, int64_t *fi, int64_t *pos, bool pairs) {
  if (d < ndim) {
    int64_t n = (int64_t)lua_rawlen(L, idx);
    for (int64_t i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      fill(L, lua_gettop(L), d + 1, ndim, fd, fi, pos, pairs);
      lua_pop(L, 1);
    }
    return;
  }
  double v;
  int64_t iv;
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (pairs) {
    double im = 0;
    if (lua_type(L, idx) == LUA_TTABLE && !t) {
      lua_rawgeti(L, idx, 1), lua_rawgeti(L, idx, 2);
      v = lua_tonumber(L, -2), im = lua_tonumber(L, -1);
      lua_pop(L, 2);
    } else if (t) {
      mt_tensor *c = NULL;
      MTL_CHECK(L, mt_to_dtype(t, MT_COMPLEX128, true, &c));
      v = ((double *)mt_data(c))[0], im = ((double *)mt_data(c))[1];
      mt_release(c);
    } else {
      v = lua_type(L, idx) == LUA_TBOOLEAN ? lua_toboolean(L, idx) : lua_tonumber(L, idx);
    }
    fd[2 * *pos] = v, fd[2 * *pos + 1] = im;
    (*pos)++;
    return;
  }
  if (t) {
    mt_scalar s;
    MTL_CHECK(L, mt_item(t, &s));
    v = mt_scalar_f(s);
    iv = mt_scalar_i(s);
  } else if (lua_type(L, idx) == LUA_TBOOLEAN) {
    iv = lua_toboolean(L, idx);
    v = (double)iv;
  } else if (lua_isinteger(L, idx)) {
    iv = lua_tointeger(L, idx);
    v = (double)iv;
  } else {
    v = lua_tonumber(L, idx);
    iv = (int64_t)0;
  }
  if (fi)
    fi[*pos] = iv;
  else
    fd[*pos] = v;
  (*pos)++;
}

/* torch.tensor(data[, {dtype=, device=, requires_grad=}]) */
static int l_tensor(lua_State *L) {
  int opt = lua_gettop(L) >= 2 && mtl_is_options(L, 2) ? 2 : 0;
  if (lua_isnoneornil(L, 1)) return luaL_error(L, "tensor: expected data (a number, boolean or nested table)");
  if (mtl_to_tensor(L, 1) && !opt) {
    mt_tensor *o = NULL;
    MTL_CHECK(L, mt_clone(mtl_to_tensor(L, 1), &o));
    mtl_push_tensor(L, o);
    return 1;
  }
  int64_t shape[MT_MAXDIM];
  int ndim = 0, seen = 0;
  mt_dtype asked = mtl_opt_dtype(L, 0, 0, opt, "dtype", MT_NDTYPE);
  bool pairs = asked != MT_NDTYPE && mt_is_complex(asked);
  scan(L, 1, 0, shape, &ndim, &seen, pairs);
  mt_dtype dflt = (seen & SEEN_FLOAT) ? mt_default_dtype()
                  : (seen & SEEN_INT) ? MT_INT64
                  : (seen & SEEN_BOOL) ? MT_BOOL
                                       : mt_default_dtype();
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", dflt);
  mt_device dev = mtl_opt_device(L, 0, 0, opt, "device");
  /* stage in int64 (exact) when all leaves are integers/bools, else float64 */
  bool ints = !(seen & SEEN_FLOAT) && !pairs;
  mt_tensor *stage = NULL, *o = NULL;
  MTL_CHECK_OP(L, "tensor", mt_empty(shape, ndim, pairs ? MT_COMPLEX128 : ints ? MT_INT64 : MT_FLOAT64, mt_cpu(), &stage));
  int64_t pos = 0;
  fill(L, 1, 0, ndim, ints ? NULL : (double *)mt_data(stage), ints ? (int64_t *)mt_data(stage) : NULL, &pos, pairs);
  mt_status st = mt_empty(shape, ndim, dt, dev, &o);
  if (!st) st = mt_copy_(o, stage);
  if (st) mtl_fail(L, st, stage, o, NULL, NULL);
  mt_release(stage);
  o->storage->version = 0;
  mtl_push_tensor(L, o);
  mtl_apply_requires_grad(L, opt, lua_gettop(L));
  return 1;
}

/* shared body of zeros/ones/full/empty: shape from args [first, last] */
static int create(lua_State *L, int first, const char *op, int kind /* 0 empty 1 zeros 2 ones 3 full */) {
  int opt = mtl_options_index(L, first);
  int last = opt ? opt - 1 : lua_gettop(L);
  mt_scalar v = mt_sint(kind == 2 ? 1 : 0);
  mt_dtype dflt = mt_default_dtype();
  double im = 0;
  bool cplx = false;
  if (kind == 3) {
    /* full(shape, value) */
    if (last < first + 1) return luaL_error(L, "full: expected a shape and a fill value");
    int vi = last--;
    if (is_pair(L, vi, true) && last >= first) { /* a complex value {re, im} */
      lua_rawgeti(L, vi, 1), lua_rawgeti(L, vi, 2);
      v = mt_sfloat(lua_tonumber(L, -2)), im = lua_tonumber(L, -1);
      lua_pop(L, 2);
      cplx = true;
      dflt = mt_complex_of(mt_default_dtype());
    } else if (lua_type(L, vi) == LUA_TBOOLEAN) {
      v = mt_sbool(lua_toboolean(L, vi));
      dflt = MT_BOOL;
    } else if (lua_isinteger(L, vi)) {
      v = mt_sint(lua_tointeger(L, vi));
      dflt = MT_INT64;
    } else if (lua_type(L, vi) == LUA_TNUMBER) {
      v = mt_sfloat(lua_tonumber(L, vi));
    } else {
      return luaL_error(L, "full: fill value must be a number or boolean, got %s", luaL_typename(L, vi));
    }
  }
  int64_t shape[MT_MAXDIM];
  int nd = mtl_size(L, first, last, shape, op);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", dflt);
  mt_device dev = mtl_opt_device(L, 0, 0, opt, "device");
  mt_tensor *o = NULL;
  if (cplx && !mt_is_complex(dt))
    return luaL_error(L, "full: a complex fill value {%f, %f} needs a complex dtype, got %s", mt_scalar_f(v), im,
                      mt_dtype_name(dt));
  if (kind == 0)
    MTL_CHECK_OP(L, op, mt_empty(shape, nd, dt, dev, &o));
  else
    MTL_CHECK_OP(L, op, mt_full(shape, nd, v, dt, dev, &o));
  if (cplx) MTL_CHECK_OP(L, op, mt_complex_fill_(o, mt_scalar_f(v), im));
  if (MTG_TRACING()) mtg_trace_full(o, mt_scalar_f(v)); /* a constant of a compiled graph (empty: zeros) */
  mtl_push_tensor(L, o);
  mtl_apply_requires_grad(L, opt, lua_gettop(L));
  return 1;
}

static int l_zeros(lua_State *L) { return create(L, 1, "zeros", 1); }
static int l_ones(lua_State *L) { return create(L, 1, "ones", 2); }
static int l_empty(lua_State *L) { return create(L, 1, "empty", 0); }
static int l_full(lua_State *L) { return create(L, 1, "full", 3); }

/* *_like(x[, value][, opts]): x's shape, dtype and device unless overridden */
static int like(lua_State *L, const char *op, int kind) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", (mt_dtype)x->dtype);
  mt_scalar v = mt_sint(kind == 2 ? 1 : 0);
  if (kind == 3) {
    if (lua_type(L, 2) == LUA_TBOOLEAN)
      v = mt_sbool(lua_toboolean(L, 2));
    else if (lua_isinteger(L, 2))
      v = mt_sint(lua_tointeger(L, 2));
    else
      v = mt_sfloat(luaL_checknumber(L, 2));
  }
  mt_tensor *o = NULL;
  if (kind == 0)
    MTL_CHECK_OP(L, op, mt_empty(x->shape, x->ndim, dt, mt_tdevice(x), &o));
  else
    MTL_CHECK_OP(L, op, mt_full(x->shape, x->ndim, v, dt, mt_tdevice(x), &o));
  if (MTG_TRACING()) mtg_trace_full(o, mt_scalar_f(v)); /* empty_like: zeros will do */
  mtl_push_tensor(L, o);
  mtl_apply_requires_grad(L, opt, lua_gettop(L));
  return 1;
}
static int l_zeros_like(lua_State *L) { return like(L, "zeros_like", 1); }
static int l_ones_like(lua_State *L) { return like(L, "ones_like", 2); }
static int l_empty_like(lua_State *L) { return like(L, "empty_like", 0); }
static int l_full_like(lua_State *L) { return like(L, "full_like", 3); }

/* x:new_zeros(shape...) etc.: x's dtype and device */
static int new_like(lua_State *L, const char *op, int kind) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  lua_remove(L, 1);
  int opt = mtl_options_index(L, 1);
  if (!opt) {
    lua_newtable(L);
    opt = lua_gettop(L);
  }
  lua_getfield(L, opt, "dtype");
  if (lua_isnil(L, -1)) {
    mtl_push_dtype(L, (mt_dtype)x->dtype);
    lua_setfield(L, opt, "dtype");
  }
  lua_pop(L, 1);
  return create(L, 1, op, kind);
}
static int m_new_zeros(lua_State *L) { return new_like(L, "new_zeros", 1); }
static int m_new_ones(lua_State *L) { return new_like(L, "new_ones", 2); }
static int m_new_empty(lua_State *L) { return new_like(L, "new_empty", 0); }
static int m_new_full(lua_State *L) { return new_like(L, "new_full", 3); }
static int m_new_tensor(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "new_tensor");
  lua_settop(L, 2);
  lua_remove(L, 1);
  lua_createtable(L, 0, 1);
  mtl_push_dtype(L, (mt_dtype)x->dtype);
  lua_setfield(L, -2, "dtype");
  return l_tensor(L);
}

static const mtl_reg regs[] = {
    {"tensor", l_tensor, MTL_FN, "torch.tensor(data[, {dtype=, device=, requires_grad=}]) -- a tensor from numbers or nested tables",
     "dtype device requires_grad"},
    {"zeros", l_zeros, MTL_FN, "torch.zeros(size...[, {dtype=, device=}]) -- a tensor of zeros",
     "dtype device requires_grad"},
    {"ones", l_ones, MTL_FN, "torch.ones(size...[, {dtype=, device=}]) -- a tensor of ones",
     "dtype device requires_grad"},
    {"empty", l_empty, MTL_FN, "torch.empty(size...[, {dtype=, device=}]) -- an uninitialised tensor",
     "dtype device requires_grad"},
    {"full", l_full, MTL_FN, "torch.full(size, value[, {dtype=, device=}]) -- a tensor filled with value",
     "dtype device requires_grad"},
    {"zeros_like", l_zeros_like, MTL_FN, "torch.zeros_like(x[, {dtype=}]) -- zeros with x's shape, dtype, device",
     "dtype requires_grad"},
    {"ones_like", l_ones_like, MTL_FN, "torch.ones_like(x[, {dtype=}]) -- ones with x's shape, dtype, device",
     "dtype requires_grad"},
    {"empty_like", l_empty_like, MTL_FN, "torch.empty_like(x[, {dtype=}]) -- uninitialised, shaped like x",
     "dtype requires_grad"},
    {"full_like", l_full_like, MTL_FN, "torch.full_like(x, value[, {dtype=}]) -- value, shaped like x",
     "dtype requires_grad"},
    {"new_zeros", m_new_zeros, MTL_METHOD, "x:new_zeros(size...) -- zeros with x's dtype and device",
     "dtype device requires_grad"},
    {"new_ones", m_new_ones, MTL_METHOD, "x:new_ones(size...) -- ones with x's dtype and device",
     "dtype device requires_grad"},
    {"new_empty", m_new_empty, MTL_METHOD, "x:new_empty(size...) -- uninitialised, x's dtype and device",
     "dtype device requires_grad"},
    {"new_full", m_new_full, MTL_METHOD, "x:new_full(size, value) -- filled, x's dtype and device",
     "dtype device requires_grad"},
    {"new_tensor", m_new_tensor, MTL_METHOD, "x:new_tensor(data) -- a tensor from data with x's dtype",
     "dtype device requires_grad"},
    {NULL, NULL, 0, NULL}};

void mtl_open_create(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
