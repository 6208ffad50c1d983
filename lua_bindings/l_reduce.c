/* l_reduce.c -- Lua bindings of reductions, scans, sorting and softmax
 * (tensor/reduce.h). Optional arguments come positionally in PyTorch's
 * order or in a trailing options table; dims are 1-based here and 0-based
 * in the engine; index results are 1-based on both sides and pass through.
 * Ops with two results (max along a dim, sort, topk, ...) return two values.
 * Differentiable ops call the recorded (mtg_) versions, so results get a
 * grad_fn when an input requires grad. */
#include <math.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"
#include "reduce.h"

/* Where a call's arguments are: x at 1, optional arguments 2..last, the
 * options table at opt (0 if none). */
typedef struct args {
  mt_tensor *x;
  int opt, last;
} args;

static args get_args(lua_State *L, const char *op) {
  args a;
  a.x = mtl_check_tensor(L, 1, op);
  a.opt = mtl_options_index(L, 2);
  a.last = a.opt ? a.opt - 1 : lua_gettop(L);
  return a;
}

/* Reads the dims value on top of the stack (nil, a number or a list of
 * numbers, 1-based) into 0-based dims and pops it. Returns the count; 0
 * means every dim, and *given tells whether dims were written at all. */
static int pop_dims(lua_State *L, int rank, const char *op, int *dims, bool *given) {
  int n = 0;
  *given = !lua_isnil(L, -1);
  if (lua_isinteger(L, -1)) {
    dims[n++] = mtl_dim(L, lua_tointeger(L, -1), rank, op);
  } else if (lua_type(L, -1) == LUA_TTABLE && !lua_getmetatable(L, -1)) {
    int len = (int)lua_rawlen(L, -1);
    if (len > MT_MAXDIM) luaL_error(L, "%s: at most %d dims can be listed, got %d", op, MT_MAXDIM, len);
    for (int i = 1; i <= len; i++) {
      lua_rawgeti(L, -1, i);
      if (!lua_isinteger(L, -1))
        luaL_error(L, "%s: dims must be integers, got %s", op,
                   lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
      dims[n++] = mtl_dim(L, lua_tointeger(L, -1), rank, op);
      lua_pop(L, 1);
    }
  } else if (*given) {
    luaL_error(L, "%s: dim must be an integer or a list of integers, got %s", op,
               lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return n;
}

/* dims argument at position pos or option "dim" */
static int get_dims(lua_State *L, const args *a, int pos, const char *op, int *dims, bool *given) {
  mtl_getarg(L, pos, a->last, a->opt, "dim");
  return pop_dims(L, a->x->ndim, op, dims, given);
}

/* A single dim (1-based in Lua) at pos / option "dim"; dflt (0-based, or
 * INT32_MIN for "required") when absent. */
static int get_dim(lua_State *L, const args *a, int pos, const char *op, int dflt) {
  mtl_getarg(L, pos, a->last, a->opt, "dim");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    if (dflt == INT32_MIN) luaL_error(L, "%s: dim is required (e.g. %s(x, -1) for the last one)", op, op);
    return dflt;
  }
  if (!lua_isinteger(L, -1))
    luaL_error(L, "%s: dim must be an integer, got %s", op,
               lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
  int d = mtl_dim(L, lua_tointeger(L, -1), a->x->ndim, op);
  lua_pop(L, 1);
  return d;
}

/* dtype at pos (0: options only) / option "dtype"; -1 when absent */
static int get_dtype(lua_State *L, const args *a, int pos, const char *op) {
  mtl_getarg(L, pos, a->last, a->opt, "dtype");
  int d = lua_isnil(L, -1) ? -1 : (int)mtl_check_dtype(L, -1, op);
  lua_pop(L, 1);
  return d;
}


/* out={values, indices} for ops with two results (borrowed; NULLs if none) */
static void get_out2(lua_State *L, const args *a, const char *op, mt_tensor **v, mt_tensor **i) {
  *v = *i = NULL;
  if (!a->opt) return;
  mtl_optfield(L, a->opt, "out");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TTABLE || lua_rawlen(L, -1) != 2)
      luaL_error(L, "%s: out= must be a list of two tensors {values, indices}", op);
    lua_rawgeti(L, -1, 1);
    *v = mtl_check_tensor(L, -1, op);
    lua_rawgeti(L, -2, 2);
    *i = mtl_check_tensor(L, -1, op);
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

/* Runs op, which picks values along dim with their indices (args {dim,
 * keepdim, e2, e3, e4}), through the generic path into (*v, *i). */
static mt_status pick(mt_op op, const mt_tensor *x, int dim, bool keepdim, int64_t e2, int64_t e3, int64_t e4,
                      mt_tensor **v, mt_tensor **i) {
  mt_args args = {.i = {x->ndim && dim < 0 ? dim + x->ndim : dim, keepdim, e2, e3, e4}, .ni = 5};
  mt_tensor *outs[2] = {*v, *i};
  mt_status st = mtg_call(op, &x, 1, &args, outs, 2);
  *v = outs[0], *i = outs[1];
  return st;
}

/* Runs a two-result op's outcome: pushes both (out= tensors when given). */
static int push_pair(lua_State *L, const args *a, mt_tensor *gv, mt_tensor *v, mt_tensor *i) {
  if (gv) {
    lua_getfield(L, a->opt, "out");
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    return 2;
  }
  mtl_push_tensor(L, v);
  mtl_push_tensor(L, i);
  return 2;
}

/* ---- sum, prod, mean, nansum, nanmean: (dim, keepdim, {dtype=}) ---- */
static int sumlike(lua_State *L, mt_op op) {
  const char *name = mt_ops[op].name;
  args a = get_args(L, name);
  int dims[MT_MAXDIM];
  bool given;
  int nd = get_dims(L, &a, 2, name, dims, &given);
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  int dtype = get_dtype(L, &a, 0, name);
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  MTL_CHECK(L, mtg_reduce(op, a.x, dims, nd, keepdim, dtype, 0, &res, 1));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}
static int l_sum(lua_State *L) { return sumlike(L, MT_OP_sum); }
static int l_prod(lua_State *L) { return sumlike(L, MT_OP_prod); }
static int l_mean(lua_State *L) { return sumlike(L, MT_OP_mean); }
static int l_nansum(lua_State *L) { return sumlike(L, MT_OP_nansum); }
static int l_nanmean(lua_State *L) { return sumlike(L, MT_OP_nanmean); }

/* ---- amax, amin, logsumexp (recorded), all, any: (dim, keepdim) ---- */
typedef mt_status (*dimsred_fn)(const mt_tensor *, const int *, int, bool, mt_tensor **);

/* op: a recorded reduction, or MT_NOPS and fn an engine one */
static int dimsred(lua_State *L, const char *name, mt_op op, dimsred_fn fn) {
  args a = get_args(L, name);
  int dims[MT_MAXDIM];
  bool given;
  int nd = get_dims(L, &a, 2, name, dims, &given);
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  MTL_CHECK(L, op < MT_NOPS ? mtg_reduce(op, a.x, dims, nd, keepdim, -1, 0, &res, 1) : fn(a.x, dims, nd, keepdim, &res));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}
static int l_amax(lua_State *L) { return dimsred(L, "amax", MT_OP_amax, NULL); }
static int l_amin(lua_State *L) { return dimsred(L, "amin", MT_OP_amin, NULL); }
static int l_all(lua_State *L) { return dimsred(L, "all", MT_NOPS, mt_all); }
static int l_any(lua_State *L) { return dimsred(L, "any", MT_NOPS, mt_any); }
static int l_logsumexp(lua_State *L) { return dimsred(L, "logsumexp", MT_OP_logsumexp, NULL); }

static int l_count_nonzero(lua_State *L) {
  args a = get_args(L, "count_nonzero");
  int dims[MT_MAXDIM];
  bool given;
  int nd = get_dims(L, &a, 2, "count_nonzero", dims, &given);
  mt_tensor *res = NULL;
  MTL_CHECK(L, mt_count_nonzero(a.x, dims, nd, &res));
  mtl_push_tensor(L, res);
  return 1;
}

/* ---- max, min: (), (dim, keepdim) -> values, indices, or (other) ---- */
static int minmax(lua_State *L, bool is_max) {
  const char *op = is_max ? "max" : "min";
  args a = get_args(L, op);
  mt_tensor *other = a.last >= 2 ? mtl_to_tensor(L, 2) : NULL;
  if (other) { /* torch.max(a, b): elementwise */
    mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
    MTL_CHECK(L, mtg_binary(is_max ? MT_OP_maximum : MT_OP_minimum, a.x, other, &res));
    return mtl_push_result(L, MT_OK, res, a.opt, o);
  }
  mtl_getarg(L, 2, a.last, a.opt, "dim");
  bool has_dim = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!has_dim) {
    mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
    MTL_CHECK(L, mtg_all_elements(is_max ? MT_OP_max : MT_OP_min, a.x, &res));
    return mtl_push_result(L, MT_OK, res, a.opt, o);
  }
  int dim = get_dim(L, &a, 2, op, 0);
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *gv, *gi;
  get_out2(L, &a, op, &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(is_max ? MT_OP_max : MT_OP_min, a.x, dim, keepdim, 0, 0, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}
static int l_max(lua_State *L) { return minmax(L, true); }
static int l_min(lua_State *L) { return minmax(L, false); }

/* argmax/argmin: (dim=nil, keepdim) */
static int argext(lua_State *L, bool is_max) {
  const char *op = is_max ? "argmax" : "argmin";
  args a = get_args(L, op);
  mtl_getarg(L, 2, a.last, a.opt, "dim");
  bool has_dim = !lua_isnil(L, -1);
  lua_pop(L, 1);
  int dim = has_dim ? get_dim(L, &a, 2, op, 0) : 0;
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  if (a.x->ndim == 0) /* a 0-dim x takes dim 0 or -1, which a dim mask cannot say */
    MTL_CHECK(L, (is_max ? mt_argmax : mt_argmin)(a.x, has_dim ? &dim : NULL, keepdim, &res));
  else /* recorded: torch.compile replays it */
    MTL_CHECK(L, mtg_reduce(is_max ? MT_OP_argmax : MT_OP_argmin, a.x, &dim, has_dim ? 1 : 0, keepdim, -1, 0, &res, 1));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}
static int l_argmax(lua_State *L) { return argext(L, true); }
static int l_argmin(lua_State *L) { return argext(L, false); }

static int l_aminmax(lua_State *L) {
  args a = get_args(L, "aminmax");
  mtl_getarg(L, 2, a.last, a.opt, "dim");
  bool has_dim = !lua_isnil(L, -1);
  lua_pop(L, 1);
  int dim = has_dim ? get_dim(L, &a, 2, "aminmax", 0) : 0;
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *r[2] = {NULL, NULL};
  MTL_CHECK(L, mtg_reduce(MT_OP_aminmax, a.x, &dim, has_dim ? 1 : 0, keepdim, -1, 0, r, 2));
  mtl_push_tensor(L, r[0]);
  mtl_push_tensor(L, r[1]);
  return 2;
}

/* ---- var, std (+ _mean): (dim, unbiased, keepdim, {correction=}) or (unbiased) ---- */
static int varlike(lua_State *L, mt_op op) {
  const char *name = mt_ops[op].name;
  args a = get_args(L, name);
  int dims[MT_MAXDIM], nd = 0, p = 2;
  bool given = false;
  if (lua_type(L, 2) != LUA_TBOOLEAN || a.last < 2) nd = get_dims(L, &a, p++, name, dims, &given);
  int unbiased = mtl_opt_bool(L, p, a.last, a.opt, "unbiased", 1);
  bool keepdim = mtl_opt_bool(L, p + 1, a.last, a.opt, "keepdim", 0);
  double correction = mtl_opt_num(L, 0, a.last, a.opt, "correction", unbiased ? 1 : 0);
  if (op == MT_OP_var_mean || op == MT_OP_std_mean) {
    mt_tensor *r[2] = {NULL, NULL};
    MTL_CHECK(L, mtg_reduce(op, a.x, dims, nd, keepdim, -1, correction, r, 2));
    mtl_push_tensor(L, r[0]);
    mtl_push_tensor(L, r[1]);
    return 2;
  }
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  MTL_CHECK(L, mtg_reduce(op, a.x, dims, nd, keepdim, -1, correction, &res, 1));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}
static int l_var(lua_State *L) { return varlike(L, MT_OP_var); }
static int l_std(lua_State *L) { return varlike(L, MT_OP_std); }
static int l_var_mean(lua_State *L) { return varlike(L, MT_OP_var_mean); }
static int l_std_mean(lua_State *L) { return varlike(L, MT_OP_std_mean); }

/* norm: (p='fro', dim, keepdim, {dtype=}); p a number (math.huge for inf) */
static int l_norm(lua_State *L) {
  args a = get_args(L, "norm");
  double p = 2;
  mtl_getarg(L, 2, a.last, a.opt, "p");
  if (lua_type(L, -1) == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    if (strcmp(s, "fro") != 0)
      luaL_error(L, "norm: p = '%s' is not supported here (use 'fro' or a number; 'nuc' is in torch.linalg)", s);
  } else if (lua_type(L, -1) == LUA_TNUMBER) {
    p = lua_tonumber(L, -1);
  } else if (!lua_isnil(L, -1)) {
    luaL_error(L, "norm: p must be a number or 'fro', got %s", luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  int dims[MT_MAXDIM];
  bool given;
  int nd = get_dims(L, &a, 3, "norm", dims, &given);
  bool keepdim = mtl_opt_bool(L, 4, a.last, a.opt, "keepdim", 0);
  int dtype = get_dtype(L, &a, 0, "norm");
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  MTL_CHECK(L, mtg_reduce(MT_OP_norm, a.x, dims, nd, keepdim, dtype, p, &res, 1));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}

/* ---- scans: cumsum, cumprod (dim, {dtype=}); cummax, cummin (dim) ---- */
/* ops of (x, dim[, dtype]): dtype_pos is where dtype may come positionally
 * (0: only as dtype=); shared by the scans and softmax/log_softmax */
static int dim_dtype_op(lua_State *L, mt_op op, int dtype_pos) {
  const char *name = mt_ops[op].name;
  args a = get_args(L, name);
  int dim = get_dim(L, &a, 2, name, INT32_MIN);
  int dtype = get_dtype(L, &a, dtype_pos, name);
  mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
  MTL_CHECK(L, mtg_along(op, a.x, dim, dtype, &res));
  return mtl_push_result(L, MT_OK, res, a.opt, o);
}
static int l_cumsum(lua_State *L) { return dim_dtype_op(L, MT_OP_cumsum, 0); }
static int l_cumprod(lua_State *L) { return dim_dtype_op(L, MT_OP_cumprod, 0); }

static int cumext(lua_State *L, mt_op op) {
  const char *name = mt_ops[op].name;
  args a = get_args(L, name);
  int dim = get_dim(L, &a, 2, name, INT32_MIN);
  mt_tensor *gv, *gi;
  get_out2(L, &a, name, &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(op, a.x, dim, true, 0, 0, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}
static int l_cummax(lua_State *L) { return cumext(L, MT_OP_cummax); }
static int l_cummin(lua_State *L) { return cumext(L, MT_OP_cummin); }

/* ---- sorting ---- */
static int l_sort(lua_State *L) {
  args a = get_args(L, "sort");
  int dim = get_dim(L, &a, 2, "sort", a.x->ndim ? a.x->ndim - 1 : 0);
  bool desc = mtl_opt_bool(L, 3, a.last, a.opt, "descending", 0);
  bool stable = mtl_opt_bool(L, 0, a.last, a.opt, "stable", 0);
  mt_tensor *gv, *gi;
  get_out2(L, &a, "sort", &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(MT_OP_sort, a.x, dim, true, desc, stable, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}

static int l_argsort(lua_State *L) {
  args a = get_args(L, "argsort");
  int dim = get_dim(L, &a, 2, "argsort", a.x->ndim ? a.x->ndim - 1 : 0);
  bool desc = mtl_opt_bool(L, 3, a.last, a.opt, "descending", 0);
  bool stable = mtl_opt_bool(L, 0, a.last, a.opt, "stable", 0);
  mt_tensor *res = NULL;
  MTL_CHECK(L, mt_argsort(a.x, dim, desc, stable, &res));
  mtl_push_tensor(L, res);
  return 1;
}

static int64_t get_k(lua_State *L, const args *a, const char *op) {
  mtl_getarg(L, 2, a->last, a->opt, "k");
  if (!lua_isinteger(L, -1))
    luaL_error(L, "%s: k must be an integer, got %s", op,
               lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
  int64_t k = (int64_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return k;
}

static int l_topk(lua_State *L) {
  args a = get_args(L, "topk");
  int64_t k = get_k(L, &a, "topk");
  int dim = get_dim(L, &a, 3, "topk", a.x->ndim ? a.x->ndim - 1 : 0);
  bool largest = mtl_opt_bool(L, 4, a.last, a.opt, "largest", 1);
  bool sorted = mtl_opt_bool(L, 5, a.last, a.opt, "sorted", 1);
  mt_tensor *gv, *gi;
  get_out2(L, &a, "topk", &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(MT_OP_topk, a.x, dim, true, k, largest, sorted, &v, &i));
  return push_pair(L, &a, gv, v, i);
}

static int l_kthvalue(lua_State *L) {
  args a = get_args(L, "kthvalue");
  int64_t k = get_k(L, &a, "kthvalue");
  int dim = get_dim(L, &a, 3, "kthvalue", a.x->ndim ? a.x->ndim - 1 : 0);
  bool keepdim = mtl_opt_bool(L, 4, a.last, a.opt, "keepdim", 0);
  mt_tensor *gv, *gi;
  get_out2(L, &a, "kthvalue", &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(MT_OP_kthvalue, a.x, dim, keepdim, k, 0, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}

/* median/nanmedian: () -> value; (dim, keepdim) -> values, indices */
static int medianlike(lua_State *L, const char *op, bool ignore_nan) {
  args a = get_args(L, op);
  mtl_getarg(L, 2, a.last, a.opt, "dim");
  bool has_dim = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!has_dim) {
    mt_tensor *o = mtl_opt_out(L, a.opt), *res = o;
    MTL_CHECK(L, mtg_all_elements(ignore_nan ? MT_OP_nanmedian : MT_OP_median, a.x, &res));
    return mtl_push_result(L, MT_OK, res, a.opt, o);
  }
  int dim = get_dim(L, &a, 2, op, 0);
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *gv, *gi;
  get_out2(L, &a, op, &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(ignore_nan ? MT_OP_nanmedian : MT_OP_median, a.x, dim, keepdim, 0, 0, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}
static int l_median(lua_State *L) { return medianlike(L, "median", false); }
static int l_nanmedian(lua_State *L) { return medianlike(L, "nanmedian", true); }

static int l_mode(lua_State *L) {
  args a = get_args(L, "mode");
  int dim = get_dim(L, &a, 2, "mode", a.x->ndim ? a.x->ndim - 1 : 0);
  bool keepdim = mtl_opt_bool(L, 3, a.last, a.opt, "keepdim", 0);
  mt_tensor *gv, *gi;
  get_out2(L, &a, "mode", &gv, &gi);
  mt_tensor *v = gv, *i = gi;
  MTL_CHECK(L, pick(MT_OP_mode, a.x, dim, keepdim, 0, 0, 0, &v, &i));
  return push_pair(L, &a, gv, v, i);
}

/* unique(sorted=true, return_inverse=false, return_counts=false, dim=nil)
 * -> values[, inverse][, counts] */
static int l_unique(lua_State *L) {
  args a = get_args(L, "unique");
  (void)mtl_opt_bool(L, 2, a.last, a.opt, "sorted", 1); /* results are always sorted */
  bool inv = mtl_opt_bool(L, 3, a.last, a.opt, "return_inverse", 0);
  bool cnt = mtl_opt_bool(L, 4, a.last, a.opt, "return_counts", 0);
  mtl_getarg(L, 5, a.last, a.opt, "dim");
  bool has_dim = !lua_isnil(L, -1);
  lua_pop(L, 1);
  int dim = has_dim ? get_dim(L, &a, 5, "unique", 0) : 0;
  mt_tensor *v = NULL, *i = NULL, *c = NULL;
  MTL_CHECK(L, mt_unique(a.x, has_dim ? &dim : NULL, &v, inv ? &i : NULL, cnt ? &c : NULL));
  mtl_push_tensor(L, v);
  if (inv) mtl_push_tensor(L, i);
  if (cnt) mtl_push_tensor(L, c);
  return 1 + inv + cnt;
}

/* ---- softmax, log_softmax: (dim, dtype) ---- */
static int l_softmax(lua_State *L) { return dim_dtype_op(L, MT_OP_softmax, 3); }
static int l_log_softmax(lua_State *L) { return dim_dtype_op(L, MT_OP_log_softmax, 3); }

static const mtl_reg regs[] = {
    {"sum", l_sum, MTL_BOTH, "torch.sum(x[, dim, keepdim, {dtype=}]) -- sum over all or some dims (ints give int64)",
     "dim keepdim dtype out"},
    {"prod", l_prod, MTL_BOTH, "torch.prod(x[, dim, keepdim, {dtype=}]) -- product over all or some dims",
     "dim keepdim dtype out"},
    {"mean", l_mean, MTL_BOTH, "torch.mean(x[, dim, keepdim, {dtype=}]) -- mean over all or some dims (floats only)",
     "dim keepdim dtype out"},
    {"nansum", l_nansum, MTL_BOTH, "torch.nansum(x[, dim, keepdim, {dtype=}]) -- sum treating NaN as 0",
     "dim keepdim dtype out"},
    {"nanmean", l_nanmean, MTL_BOTH, "torch.nanmean(x[, dim, keepdim, {dtype=}]) -- mean of the non-NaN values",
     "dim keepdim dtype out"},
    {"var", l_var, MTL_BOTH, "torch.var(x[, dim, unbiased, keepdim, {correction=1}]) -- variance",
     "dim unbiased keepdim correction out"},
    {"std", l_std, MTL_BOTH, "torch.std(x[, dim, unbiased, keepdim, {correction=1}]) -- standard deviation",
     "dim unbiased keepdim correction out"},
    {"var_mean", l_var_mean, MTL_BOTH, "torch.var_mean(x[, dim, unbiased, keepdim, {correction=}]) -- var, mean",
     "dim unbiased keepdim correction"},
    {"std_mean", l_std_mean, MTL_BOTH, "torch.std_mean(x[, dim, unbiased, keepdim, {correction=}]) -- std, mean",
     "dim unbiased keepdim correction"},
    {"norm", l_norm, MTL_BOTH,
     "torch.norm(x[, p=2, dim, keepdim, {dtype=}]) -- p-norm (p a number, math.huge or 'fro')",
     "p dim keepdim dtype out"},
    {"logsumexp", l_logsumexp, MTL_BOTH, "torch.logsumexp(x[, dim, keepdim]) -- log(sum(exp(x))), computed stably",
     "dim keepdim out"},
    {"amax", l_amax, MTL_BOTH, "torch.amax(x[, dim, keepdim]) -- maximum over all or some dims (NaN propagates)",
     "dim keepdim out"},
    {"amin", l_amin, MTL_BOTH, "torch.amin(x[, dim, keepdim]) -- minimum over all or some dims (NaN propagates)",
     "dim keepdim out"},
    {"aminmax", l_aminmax, MTL_BOTH, "torch.aminmax(x[, {dim=, keepdim=}]) -- min, max", "dim keepdim"},
    {"max", l_max, MTL_BOTH,
     "torch.max(x[, dim, keepdim]) -- largest value, or values, indices along dim; "
     "max(a, b) is elementwise", "dim keepdim out"},
    {"min", l_min, MTL_BOTH,
     "torch.min(x[, dim, keepdim]) -- smallest value, or values, indices along dim; "
     "min(a, b) is elementwise", "dim keepdim out"},
    {"argmax", l_argmax, MTL_BOTH,
     "torch.argmax(x[, dim, keepdim]) -- 1-based index of the maximum (flat without dim)", "dim keepdim out"},
    {"argmin", l_argmin, MTL_BOTH,
     "torch.argmin(x[, dim, keepdim]) -- 1-based index of the minimum (flat without dim)", "dim keepdim out"},
    {"all", l_all, MTL_BOTH, "torch.all(x[, dim, keepdim]) -- true if every element is non-zero", "dim keepdim out"},
    {"any", l_any, MTL_BOTH, "torch.any(x[, dim, keepdim]) -- true if some element is non-zero", "dim keepdim out"},
    {"count_nonzero", l_count_nonzero, MTL_BOTH, "torch.count_nonzero(x[, dim]) -- number of non-zero elements", "dim"},
    {"cumsum", l_cumsum, MTL_BOTH, "torch.cumsum(x, dim[, {dtype=}]) -- running sum along dim", "dim dtype out"},
    {"cumprod", l_cumprod, MTL_BOTH, "torch.cumprod(x, dim[, {dtype=}]) -- running product along dim", "dim dtype out"},
    {"cummax", l_cummax, MTL_BOTH, "torch.cummax(x, dim) -- running maximum and its 1-based index", "dim out"},
    {"cummin", l_cummin, MTL_BOTH, "torch.cummin(x, dim) -- running minimum and its 1-based index", "dim out"},
    {"sort", l_sort, MTL_BOTH, "torch.sort(x[, dim=-1, descending, {stable=}]) -- sorted values, 1-based indices",
     "dim descending stable out"},
    {"argsort", l_argsort, MTL_BOTH, "torch.argsort(x[, dim=-1, descending, {stable=}]) -- 1-based sorting indices",
     "dim descending stable"},
    {"topk", l_topk, MTL_BOTH, "torch.topk(x, k[, dim=-1, largest=true, sorted=true]) -- k largest values, indices",
     "k dim largest sorted out"},
    {"kthvalue", l_kthvalue, MTL_BOTH, "torch.kthvalue(x, k[, dim=-1, keepdim]) -- k-th smallest value, index",
     "k dim keepdim out"},
    {"median", l_median, MTL_BOTH, "torch.median(x[, dim, keepdim]) -- lower median, or values, indices along dim",
     "dim keepdim out"},
    {"nanmedian", l_nanmedian, MTL_BOTH, "torch.nanmedian(x[, dim, keepdim]) -- median ignoring NaN",
     "dim keepdim out"},
    {"mode", l_mode, MTL_BOTH, "torch.mode(x[, dim=-1, keepdim]) -- most frequent value and its 1-based index",
     "dim keepdim out"},
    {"unique", l_unique, MTL_BOTH,
     "torch.unique(x[, sorted, return_inverse, return_counts, dim]) -- sorted distinct "
     "values[, inverse][, counts]", "sorted return_inverse return_counts dim"},
    {"softmax", l_softmax, MTL_BOTH, "torch.softmax(x, dim[, dtype]) -- exp(x) / sum(exp(x)) along dim, stable",
     "dim dtype out"},
    {"log_softmax", l_log_softmax, MTL_BOTH, "torch.log_softmax(x, dim[, dtype]) -- log(softmax(x)), stable",
     "dim dtype out"},
    {NULL, NULL, 0, NULL}};

void mtl_open_reduce(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
