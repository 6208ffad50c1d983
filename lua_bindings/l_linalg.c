/* l_linalg.c -- Lua bindings of the matrix products (torch.matmul, mm, bmm,
 * mv, dot, outer, addmm, ..., einsum, kron) and of the torch.linalg table
 * (inv, det, solve, cholesky, qr, svd, eigh, norms, lstsq, pinv, ...).
 * Dims are 1-based here and converted; multi-output functions return
 * several values (local U, S, Vh = torch.linalg.svd(A)). */
#include <math.h>
#include <string.h>

#include "graph.h"
#include "linalg.h"
#include "mtl.h"


static int last_positional(lua_State *L, int opt) { return opt ? opt - 1 : lua_gettop(L); }

/* ---- products ---- */

/* a product of two tensors through the generic path (op < MT_NOPS) or fn */
typedef mt_status (*binary_fn)(const mt_tensor *, const mt_tensor *, mt_tensor **);

static int product2(lua_State *L, const char *name, mt_op op, binary_fn fn) {
  mt_tensor *a = mtl_check_tensor(L, 1, name), *b = mtl_check_tensor(L, 2, name);
  int opt = mtl_options_index(L, 3);
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  const mt_tensor *ins[2] = {a, b};
  mt_args args = {.i = {a->ndim > b->ndim ? a->ndim : b->ndim}, .ni = op == MT_OP_kron};
  mt_status st;
  if (op == MT_OP_inner && (a->ndim == 0 || b->ndim == 0)) /* a number times a tensor, as the engine does */
    st = mtg_binary(MT_OP_mul, a, b, &res);
  else
    st = op < MT_NOPS ? mtg_call(op, ins, 2, &args, &res, 1) : fn(a, b, &res);
  return mtl_push_result(L, st, res, opt, o);
}

#define PRODUCT2(name, op, fn)                                                                                         \
  static int l_##name(lua_State *L) { return product2(L, #name, op, fn); }
PRODUCT2(matmul, MT_NOPS, mtg_matmul)
PRODUCT2(mm, MT_OP_mm, NULL)
PRODUCT2(bmm, MT_OP_bmm, NULL)
PRODUCT2(mv, MT_OP_mv, NULL)
PRODUCT2(dot, MT_OP_dot, NULL)
PRODUCT2(vdot, MT_OP_dot, NULL)
PRODUCT2(inner, MT_OP_inner, NULL)
PRODUCT2(outer, MT_OP_outer, NULL)
PRODUCT2(kron, MT_OP_kron, NULL)
#undef PRODUCT2

/* torch.addmm(input, m1, m2[, beta, alpha | {beta=, alpha=, out=}]) and the
 * in-place method input:addmm_(m1, m2, ...) */
static int add_product(lua_State *L, const char *name, mt_op op, int inplace) {
  mt_tensor *self = inplace ? mtl_check_tensor(L, 1, name) : NULL;
  mt_tensor *m1 = mtl_check_tensor(L, 2, name), *m2 = mtl_check_tensor(L, 3, name);
  int opt = mtl_options_index(L, 4), last = last_positional(L, opt);
  double beta = mtl_opt_num(L, 4, last, opt, "beta", 1), alpha = mtl_opt_num(L, 5, last, opt, "alpha", 1);
  mt_tensor *input = mtl_tensor_or_scalar(L, 1, name);
  mt_tensor *o = inplace ? self : mtl_opt_out(L, opt), *res = o;
  const mt_tensor *ins[3] = {inplace ? self : input, m1, m2};
  mt_args args = {.f = {beta, alpha}, .nf = 2};
  mt_status st = mtg_call(op, ins, 3, &args, &res, 1);
  mt_release(input);
  if (inplace) {
    MTL_CHECK(L, st);
    lua_settop(L, 1);
    return 1;
  }
  return mtl_push_result(L, st, res, opt, o);
}

#define ADD_PRODUCT(name)                                                                                              \
  static int l_##name(lua_State *L) { return add_product(L, #name, MT_OP_##name, 0); }                                 \
  static int l_##name##_(lua_State *L) { return add_product(L, #name "_", MT_OP_##name, 1); }
ADD_PRODUCT(addmm)
ADD_PRODUCT(addmv)
ADD_PRODUCT(baddbmm)
ADD_PRODUCT(addbmm)
#undef ADD_PRODUCT

/* torch.einsum(equation, a, b, ...[, {out=}]) or torch.einsum(equation, {a, b, ...}[, {out=}]) */
static int l_einsum(lua_State *L) {
  const char *eq = luaL_checkstring(L, 1);
  int opt = mtl_options_index(L, 3), last = last_positional(L, opt);
  mt_tensor *ops[64];
  int n = 0;
  if (lua_type(L, 2) == LUA_TTABLE && !mtl_to_tensor(L, 2)) {
    n = (int)lua_rawlen(L, 2);
    if (n > 64) return luaL_error(L, "einsum: at most 64 operands are supported, got %d", n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, 2, i + 1);
      ops[i] = mtl_check_tensor(L, -1, "einsum");
      lua_pop(L, 1); /* the table keeps it alive */
    }
  } else {
    n = last - 1;
    if (n > 64) return luaL_error(L, "einsum: at most 64 operands are supported, got %d", n);
    for (int i = 0; i < n; i++) ops[i] = mtl_check_tensor(L, i + 2, "einsum");
  }
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = mtg_einsum(eq, ops, n, &res);
  return mtl_push_result(L, st, res, opt, o);
}

/* ---- torch.linalg ---- */

/* op of (a[, {out=}]) or (a, b[, {out=}]) (nin tensors) with args a through
 * the generic path */
static int linalg_call(lua_State *L, const char *name, mt_op op, int nin, const mt_args *args, int opt) {
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, name), nin > 1 ? mtl_check_tensor(L, 2, name) : NULL};
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = mtg_call(op, ins, nin, args, &res, 1);
  return mtl_push_result(L, st, res, opt, o);
}

static int l_inv(lua_State *L) {
  return linalg_call(L, "linalg.inv", MT_OP_linalg_inv, 1, NULL, mtl_options_index(L, 2));
}
static int l_det(lua_State *L) {
  return linalg_call(L, "linalg.det", MT_OP_linalg_det, 1, NULL, mtl_options_index(L, 2));
}

/* Pushes outs[0..n) (new references) after a successful call. */
static int push_results(lua_State *L, mt_status st, mt_tensor **outs, int n) {
  MTL_CHECK(L, st);
  for (int k = 0; k < n; k++) mtl_push_tensor(L, outs[k]);
  return n;
}

/* Does a call on a record a node? (then the vectors of svdvals and
 * eigvalsh are computed: their derivatives need them) */
static bool recorded(const mt_tensor *a) { return mtg_grad_enabled() && mtg_requires_grad(a); }

static int l_slogdet(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.slogdet");
  mt_tensor *r[2] = {NULL, NULL};
  return push_results(L, mtg_call(MT_OP_linalg_slogdet, &a, 1, NULL, r, 2), r, 2);
}

/* logdet = log|det| + log(sign): NaN for a negative determinant */
static int l_logdet(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "logdet");
  mt_tensor *sl[2] = {NULL, NULL}, *ls = NULL, *r = NULL;
  mt_status st = mtg_call(MT_OP_linalg_slogdet, &a, 1, NULL, sl, 2);
  mt_tensor *s = sl[0], *l = sl[1];
  if (!st) st = mtg_unary(MT_OP_log, s, &ls);
  if (!st) st = mtg_binary(MT_OP_add, l, ls, &r);
  if (st) mtl_fail(L, st, s, l, ls, NULL);
  mt_release(s);
  mt_release(l);
  mt_release(ls);
  mtl_push_tensor(L, r);
  return 1;
}

static int l_solve(lua_State *L) {
  int opt = mtl_options_index(L, 3);
  mt_args args = {.i = {mtl_opt_bool(L, 3, last_positional(L, opt), opt, "left", 1)}, .ni = 1};
  return linalg_call(L, "linalg.solve", MT_OP_linalg_solve, 2, &args, opt);
}

static int l_cholesky(lua_State *L) {
  int opt = mtl_options_index(L, 2);
  mt_args args = {.i = {mtl_opt_bool(L, 2, last_positional(L, opt), opt, "upper", 0)}, .ni = 1};
  return linalg_call(L, "linalg.cholesky", MT_OP_linalg_cholesky, 1, &args, opt);
}

static const char *opt_string(lua_State *L, int pos, int last, int opt, const char *name, const char *dflt) {
  mtl_getarg(L, pos, last, opt, name);
  const char *s = dflt;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "argument '%s' must be a string, got %s", name, luaL_typename(L, -1));
    s = lua_tostring(L, -1); /* stays valid: the value is also an argument or a field of opt */
  }
  lua_pop(L, 1);
  return s;
}

static int l_qr(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.qr");
  int opt = mtl_options_index(L, 2);
  const char *mode = opt_string(L, 2, last_positional(L, opt), opt, "mode", "reduced");
  mt_args args = {.i = {strcmp(mode, "complete") == 0 ? 1 : strcmp(mode, "r") == 0 ? 2 : 0}, .ni = 1};
  if (!args.i[0] && strcmp(mode, "reduced") != 0)
    MTL_CHECK(L, mt_fail(MT_EARG, "linalg.qr: mode must be 'reduced', 'complete' or 'r', got '%s'", mode));
  mt_tensor *r[2] = {NULL, NULL};
  return push_results(L, mtg_call(MT_OP_linalg_qr, &a, 1, &args, r, 2), r, 2);
}

static int l_svd(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.svd");
  int opt = mtl_options_index(L, 2);
  mt_args args = {.i = {mtl_opt_bool(L, 2, last_positional(L, opt), opt, "full_matrices", 1)}, .ni = 2};
  mt_tensor *r[3] = {NULL, NULL, NULL};
  return push_results(L, mtg_call(MT_OP_linalg_svd, &a, 1, &args, r, 3), r, 3);
}

/* the singular values; the vectors only when recording */
static int l_svdvals(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.svdvals");
  mt_args args = {.i = {0, !recorded(a)}, .ni = 2};
  mt_tensor *r[3] = {NULL, NULL, NULL};
  mt_status st = mtg_call(MT_OP_linalg_svd, &a, 1, &args, r, 3);
  mt_release(r[0]);
  mt_release(r[2]);
  return push_results(L, st, &r[1], 1);
}

static char uplo_arg(lua_State *L, int opt) {
  const char *u = opt_string(L, 2, last_positional(L, opt), opt, "UPLO", "L");
  if (opt && mtl_optfield(L, opt, "uplo") == LUA_TSTRING) u = lua_tostring(L, -1);
  if (opt) lua_pop(L, 1);
  if (strcmp(u, "L") != 0 && strcmp(u, "U") != 0) luaL_error(L, "linalg.eigh: UPLO must be 'L' or 'U', got '%s'", u);
  return u[0];
}

static int l_eigh(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.eigh");
  mt_args args = {.i = {uplo_arg(L, mtl_options_index(L, 2))}, .ni = 2};
  mt_tensor *r[2] = {NULL, NULL};
  return push_results(L, mtg_call(MT_OP_linalg_eigh, &a, 1, &args, r, 2), r, 2);
}

/* the eigenvalues; the vectors only when recording */
static int l_eigvalsh(lua_State *L) {
  const mt_tensor *a = mtl_check_tensor(L, 1, "linalg.eigvalsh");
  mt_args args = {.i = {uplo_arg(L, mtl_options_index(L, 2)), !recorded(a)}, .ni = 2};
  mt_tensor *r[2] = {NULL, NULL};
  mt_status st = mtg_call(MT_OP_linalg_eigh, &a, 1, &args, r, 2);
  mt_release(r[1]);
  return push_results(L, st, r, 1);
}

static int l_lstsq(lua_State *L) {
  const mt_tensor *ins[2] = {mtl_check_tensor(L, 1, "linalg.lstsq"), mtl_check_tensor(L, 2, "linalg.lstsq")};
  int opt = mtl_options_index(L, 3), last = last_positional(L, opt);
  mt_args args = {.f = {mtl_opt_num(L, 3, last, opt, "rcond", -1)}, .ni = 1, .nf = 1};
  const char *driver = opt_string(L, 4, last, opt, "driver", NULL);
  args.i[0] = !driver ? 0 : strcmp(driver, "gelsy") == 0 ? 1 : strcmp(driver, "gelsd") == 0 ? 2 : -1;
  if (args.i[0] < 0)
    MTL_CHECK(L, mt_fail(MT_EARG, "linalg.lstsq: driver must be 'gelsy' or 'gelsd', got '%s'", driver));
  mt_tensor *r[4] = {NULL, NULL, NULL, NULL};
  return push_results(L, mtg_call(MT_OP_linalg_lstsq, ins, 2, &args, r, 4), r, 4);
}

/* pinv / matrix_rank tolerances: {atol=, rtol=, hermitian=} plus the legacy
 * positional rcond/tol and hermitian */
static void tolerances(lua_State *L, int legacy_is_atol, double *atol, double *rtol, int *herm, int *opt_out) {
  int opt = mtl_options_index(L, 2), last = last_positional(L, opt);
  double legacy = mtl_opt_num(L, 2, last, 0, "tol", -1);
  if (opt) {
    mtl_optfield(L, opt, legacy_is_atol ? "tol" : "rcond");
    if (lua_isnumber(L, -1)) legacy = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  *herm = mtl_opt_bool(L, 3, last, opt, "hermitian", 0);
  *atol = mtl_opt_num(L, 0, 0, opt, "atol", 0);
  *rtol = mtl_opt_num(L, 0, 0, opt, "rtol", -1);
  if (legacy >= 0) {
    if (legacy_is_atol) {
      *atol = legacy;
      *rtol = 0;
    } else {
      *rtol = legacy;
    }
  }
  *opt_out = opt;
}

static int l_pinv(lua_State *L) {
  mtl_check_tensor(L, 1, "linalg.pinv");
  double atol, rtol;
  int herm, opt;
  tolerances(L, 0, &atol, &rtol, &herm, &opt);
  mt_args args = {.i = {herm}, .f = {atol, rtol}, .ni = 1, .nf = 2};
  return linalg_call(L, "linalg.pinv", MT_OP_linalg_pinv, 1, &args, opt);
}

static int l_matrix_rank(lua_State *L) {
  mt_tensor *a = mtl_check_tensor(L, 1, "linalg.matrix_rank");
  double atol, rtol;
  int herm, opt;
  tolerances(L, 1, &atol, &rtol, &herm, &opt);
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = mt_linalg_matrix_rank(a, atol, rtol, herm, &res);
  return mtl_push_result(L, st, res, opt, o);
}

/* ord: nil (default), a number (math.huge for inf) or 'fro' / 'nuc' / 'inf' / '-inf' */
static void ord_arg(lua_State *L, int pos, int last, int opt, int *has, double *ord, const char **sord) {
  mtl_getarg(L, pos, last, opt, "ord");
  *has = 0;
  *sord = NULL;
  if (lua_type(L, -1) == LUA_TNUMBER) {
    *has = 1;
    *ord = lua_tonumber(L, -1);
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    *has = 1;
    if (strcmp(s, "inf") == 0) {
      *ord = INFINITY;
    } else if (strcmp(s, "-inf") == 0) {
      *ord = -INFINITY;
    } else if (strcmp(s, "fro") == 0) {
      *sord = "fro";
    } else if (strcmp(s, "nuc") == 0) {
      *sord = "nuc";
    } else {
      luaL_error(L, "norm: ord must be a number, 'fro', 'nuc', 'inf' or '-inf', got '%s'", s);
    }
  } else if (!lua_isnil(L, -1)) {
    luaL_error(L, "norm: ord must be a number or a string, got %s", luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

/* dim: nil, a number or a table of numbers (1-based); returns the count or
 * -1 when absent */
static int dims_arg(lua_State *L, int pos, int last, int opt, int ndim, int *dims, const char *op) {
  mtl_getarg(L, pos, last, opt, "dim");
  int n = -1;
  if (lua_isinteger(L, -1)) {
    dims[0] = mtl_dim(L, lua_tointeger(L, -1), ndim, op);
    n = 1;
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    n = (int)lua_rawlen(L, -1);
    if (n > MT_MAXDIM) luaL_error(L, "%s: too many dims", op);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, -1, i + 1);
      if (!lua_isinteger(L, -1)) luaL_error(L, "%s: dim entries must be integers", op);
      dims[i] = mtl_dim(L, lua_tointeger(L, -1), ndim, op);
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    luaL_error(L, "%s: dim must be an integer or a table of integers, got %s", op, luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return n;
}

/* linalg.vector_norm through the generic path (the reductions' layout, f[0]
 * the ord); dt -1: x's dtype */
static mt_status vector_norm(const mt_tensor *x, double ord, const int *dims, int nd, bool keepdim, int dt,
                             mt_tensor **out) {
  return mtg_reduce(MT_OP_linalg_vector_norm, x, dims, nd, keepdim, dt, ord, out, 1);
}

/* linalg.matrix_norm over (d0, d1) through the generic path: sord 'fro',
 * 'nuc' or NULL (the number ord) */
static mt_status matrix_norm(const mt_tensor *x, const char *sord, double ord, int d0, int d1, bool keepdim,
                             mt_tensor **out) {
  int kind = !sord ? 2 : strcmp(sord, "fro") == 0 ? 0 : strcmp(sord, "nuc") == 0 ? 1 : -1;
  if (kind < 0) return mt_fail(MT_EARG, "linalg.matrix_norm: ord must be 'fro', 'nuc' or a number, got '%s'", sord);
  mt_args a = {.i = {d0, d1, keepdim, kind}, .f = {ord}, .ni = 4, .nf = 1};
  return mtg_call(MT_OP_linalg_matrix_norm, &x, 1, &a, out, 1);
}

/* torch.linalg.norm: the engine's dispatch (mt_linalg_norm) to the recorded
 * norms when x is recorded; the engine reports the errors. */
static mt_status norm(const mt_tensor *x, bool has_ord, const char *sord, double ord, const int *dims, int ndims,
                      bool keepdim, mt_tensor **out) {
  if (!recorded(x) || ndims > 2) return mt_linalg_norm(x, has_ord, sord, ord, dims, ndims, keepdim, out);
  if (!has_ord && !sord) return vector_norm(x, 2, dims, ndims, keepdim, -1, out);
  if (ndims == 0) {
    if (x->ndim == 2) return matrix_norm(x, sord, ord, 0, 1, keepdim, out);
    if (x->ndim == 1 && !sord) return vector_norm(x, ord, NULL, 0, keepdim, -1, out);
    return mt_linalg_norm(x, has_ord, sord, ord, dims, ndims, keepdim, out);
  }
  if (ndims == 2) return matrix_norm(x, sord, ord, dims[0], dims[1], keepdim, out);
  if (sord) return mt_linalg_norm(x, has_ord, sord, ord, dims, ndims, keepdim, out);
  return vector_norm(x, ord, dims, 1, keepdim, -1, out);
}

static int l_vector_norm(lua_State *L) {
  const char *op = "linalg.vector_norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2), last = last_positional(L, opt), has, dims[MT_MAXDIM];
  double ord = 2;
  const char *sord;
  ord_arg(L, 2, last, opt, &has, &ord, &sord);
  if (!has) ord = 2;
  if (sord) return luaL_error(L, "%s: ord must be a number, got '%s'", op, sord);
  int nd = dims_arg(L, 3, last, opt, x->ndim, dims, op);
  int keepdim = mtl_opt_bool(L, 4, last, opt, "keepdim", 0);
  mt_dtype dt = mtl_opt_dtype(L, 0, 0, opt, "dtype", MT_NDTYPE);
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = vector_norm(x, ord, dims, nd < 0 ? 0 : nd, keepdim, dt == MT_NDTYPE ? -1 : (int)dt, &res);
  return mtl_push_result(L, st, res, opt, o);
}

static int l_matrix_norm(lua_State *L) {
  const char *op = "linalg.matrix_norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2), last = last_positional(L, opt), has, dims[MT_MAXDIM];
  double ord = 0;
  const char *sord;
  ord_arg(L, 2, last, opt, &has, &ord, &sord);
  if (!has) sord = "fro";
  int nd = dims_arg(L, 3, last, opt, x->ndim, dims, op);
  if (nd < 0) {
    if (x->ndim < 2) return luaL_error(L, "%s: expected at least 2 dimensions, got %d", op, x->ndim);
    dims[0] = x->ndim - 2;
    dims[1] = x->ndim - 1;
  } else if (nd != 2) {
    return luaL_error(L, "%s: dim must name two dimensions, got %d", op, nd);
  }
  int keepdim = mtl_opt_bool(L, 4, last, opt, "keepdim", 0);
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = matrix_norm(x, sord, ord, dims[0], dims[1], keepdim, &res);
  return mtl_push_result(L, st, res, opt, o);
}

static int l_norm(lua_State *L) {
  const char *op = "linalg.norm";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2), last = last_positional(L, opt), has, dims[MT_MAXDIM];
  double ord = 0;
  const char *sord;
  ord_arg(L, 2, last, opt, &has, &ord, &sord);
  int nd = dims_arg(L, 3, last, opt, x->ndim, dims, op);
  int keepdim = mtl_opt_bool(L, 4, last, opt, "keepdim", 0);
  mt_tensor *o = mtl_opt_out(L, opt), *res = o;
  mt_status st = norm(x, has && !sord, sord, ord, dims, nd < 0 ? 0 : nd, keepdim, &res);
  return mtl_push_result(L, st, res, opt, o);
}

/* linalg.cross(a, b[, dim=-1]); torch.cross's default dim is the first of size 3 */
static int cross_impl(lua_State *L, int legacy) {
  const char *op = legacy ? "cross" : "linalg.cross";
  mt_tensor *a = mtl_check_tensor(L, 1, op), *b = mtl_check_tensor(L, 2, op);
  int opt = mtl_options_index(L, 3), last = last_positional(L, opt);
  mtl_getarg(L, 3, last, opt, "dim");
  int dim;
  if (lua_isnil(L, -1) && legacy) {
    dim = -1;
    for (int i = 0; i < a->ndim && dim < 0; i++)
      if (a->shape[i] == 3) dim = i;
    if (dim < 0) return luaL_error(L, "cross: no dimension of size 3 in the input");
    dim -= a->ndim; /* from the end, so that broadcasting keeps it */
  } else {
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    dim = lua_isnil(L, -1) ? -1 : mtl_dim(L, luaL_checkinteger(L, -1), nd, op) - nd;
  }
  lua_pop(L, 1);
  mt_args args = {.i = {dim}, .ni = 1};
  return linalg_call(L, op, MT_OP_linalg_cross, 2, &args, opt);
}
static int l_linalg_cross(lua_State *L) { return cross_impl(L, 0); }
static int l_cross(lua_State *L) { return cross_impl(L, 1); }

static int l_blas_info(lua_State *L) {
  lua_pushstring(L, mt_blas_info());
  return 1;
}

static const mtl_reg regs[] = {
    {"matmul", l_matmul, MTL_BOTH,
     "torch.matmul(a, b) -- matrix product with PyTorch's 1-D/2-D/batched broadcasting rules", "out"},
    {"mm", l_mm, MTL_BOTH, "torch.mm(a, b) -- product of two matrices (2-D only)", "out"},
    {"bmm", l_bmm, MTL_BOTH, "torch.bmm(a, b) -- batched product of (b, n, m) and (b, m, p) tensors", "out"},
    {"mv", l_mv, MTL_BOTH, "torch.mv(m, v) -- matrix times vector", "out"},
    {"dot", l_dot, MTL_BOTH, "torch.dot(a, b) -- dot product of two 1-D tensors (0-dim result)", "out"},
    {"vdot", l_vdot, MTL_BOTH, "torch.vdot(a, b) -- dot product (same as dot for real tensors)", "out"},
    {"inner", l_inner, MTL_BOTH, "torch.inner(a, b) -- inner product over the last dimensions", "out"},
    {"outer", l_outer, MTL_BOTH, "torch.outer(a, b) -- outer product of two 1-D tensors", "out"},
    {"ger", l_outer, MTL_BOTH, "torch.ger(a, b) -- outer product (old name of outer)", "out"},
    {"kron", l_kron, MTL_BOTH, "torch.kron(a, b) -- Kronecker product", "out"},
    {"addmm", l_addmm, MTL_BOTH, "torch.addmm(input, m1, m2[, {beta=1, alpha=1}]) -- beta * input + alpha * (m1 @ m2)",
     "beta alpha out"},
    {"addmm_", l_addmm_, MTL_METHOD, "x:addmm_(m1, m2[, {beta=, alpha=}]) -- addmm in place", "beta alpha"},
    {"addmv", l_addmv, MTL_BOTH, "torch.addmv(input, m, v[, {beta=1, alpha=1}]) -- beta * input + alpha * (m @ v)",
     "beta alpha out"},
    {"addmv_", l_addmv_, MTL_METHOD, "x:addmv_(m, v[, {beta=, alpha=}]) -- addmv in place", "beta alpha"},
    {"baddbmm", l_baddbmm, MTL_BOTH,
     "torch.baddbmm(input, b1, b2[, {beta=1, alpha=1}]) -- beta * input + alpha * bmm(b1, b2)", "beta alpha out"},
    {"baddbmm_", l_baddbmm_, MTL_METHOD, "x:baddbmm_(b1, b2[, {beta=, alpha=}]) -- baddbmm in place", "beta alpha"},
    {"addbmm", l_addbmm, MTL_BOTH,
     "torch.addbmm(input, b1, b2[, {beta=1, alpha=1}]) -- beta * input + alpha * sum of b1[i] @ b2[i]",
     "beta alpha out"},
    {"addbmm_", l_addbmm_, MTL_METHOD, "x:addbmm_(b1, b2[, {beta=, alpha=}]) -- addbmm in place", "beta alpha"},
    {"einsum", l_einsum, MTL_FN,
     "torch.einsum(equation, a, b, ...) -- Einstein summation, e.g. 'bij,bjk->bik' or '...ii'", "out"},
    {"det", l_det, MTL_BOTH, "torch.det(A) -- determinant (= torch.linalg.det)", "out"},
    {"logdet", l_logdet, MTL_BOTH, "torch.logdet(A) -- log of the determinant (NaN if negative)"},
    {"slogdet", l_slogdet, MTL_BOTH, "torch.slogdet(A) -- sign and log|det| as two values"},
    {"inverse", l_inv, MTL_BOTH, "torch.inverse(A) -- matrix inverse (= torch.linalg.inv)", "out"},
    {"pinverse", l_pinv, MTL_BOTH, "torch.pinverse(A[, rcond]) -- pseudo-inverse (= torch.linalg.pinv)",
     "rcond atol rtol hermitian out"},
    {"cross", l_cross, MTL_BOTH,
     "torch.cross(a, b[, dim]) -- cross product of 3-vectors (default: first dim of size 3)", "dim out"},
    {"_blas_info", l_blas_info, MTL_FN, "torch._blas_info() -- which BLAS/LAPACK libraries matmul and linalg use"},
    {NULL, NULL, 0, NULL}};

static const mtl_reg linalg_regs[] = {
    {"matmul", l_matmul, MTL_FN, "torch.linalg.matmul(a, b) -- same as torch.matmul", "out"},
    {"inv", l_inv, MTL_FN, "torch.linalg.inv(A) -- inverse of a square matrix (or batch); errors if singular", "out"},
    {"det", l_det, MTL_FN, "torch.linalg.det(A) -- determinant of a square matrix (or batch)", "out"},
    {"slogdet", l_slogdet, MTL_FN, "torch.linalg.slogdet(A) -- sign, log|det| (two values)"},
    {"solve", l_solve, MTL_FN, "torch.linalg.solve(A, B[, {left=true}]) -- X with A X = B (B a matrix or vector)",
     "left out"},
    {"cholesky", l_cholesky, MTL_FN,
     "torch.linalg.cholesky(A[, {upper=false}]) -- L with A = L L^T (A positive-definite)", "upper out"},
    {"qr", l_qr, MTL_FN, "torch.linalg.qr(A[, mode='reduced'|'complete'|'r']) -- Q, R with A = Q R", "mode"},
    {"svd", l_svd, MTL_FN, "torch.linalg.svd(A[, full_matrices=true]) -- U, S, Vh with A = U diag(S) Vh",
     "full_matrices"},
    {"svdvals", l_svdvals, MTL_FN, "torch.linalg.svdvals(A) -- singular values, descending"},
    {"eigh", l_eigh, MTL_FN,
     "torch.linalg.eigh(A[, UPLO='L']) -- eigenvalues (ascending), eigenvectors of a symmetric A", "UPLO uplo"},
    {"eigvalsh", l_eigvalsh, MTL_FN, "torch.linalg.eigvalsh(A[, UPLO='L']) -- eigenvalues of a symmetric A, ascending",
     "UPLO uplo"},
    {"norm", l_norm, MTL_FN,
     "torch.linalg.norm(A[, ord, dim, keepdim]) -- vector or matrix norm (default 2 / Frobenius)",
     "ord dim keepdim out"},
    {"vector_norm", l_vector_norm, MTL_FN,
     "torch.linalg.vector_norm(x[, ord=2, dim, keepdim, {dtype=}]) -- (sum |x|^ord)^(1/ord)",
     "ord dim keepdim dtype out"},
    {"matrix_norm", l_matrix_norm, MTL_FN,
     "torch.linalg.matrix_norm(A[, ord='fro', dim={-2,-1}, keepdim]) -- 'fro', 'nuc', +-1, +-2, +-inf",
     "ord dim keepdim out"},
    {"lstsq", l_lstsq, MTL_FN,
     "torch.linalg.lstsq(A, B[, rcond, {driver='gelsy'|'gelsd'}]) -- solution, residuals, rank, singular_values",
     "rcond driver"},
    {"pinv", l_pinv, MTL_FN, "torch.linalg.pinv(A[, {atol=, rtol=, hermitian=false}]) -- Moore-Penrose pseudo-inverse",
     "rcond atol rtol hermitian out"},
    {"matrix_rank", l_matrix_rank, MTL_FN,
     "torch.linalg.matrix_rank(A[, {atol=, rtol=, hermitian=false}]) -- numerical rank (int64)",
     "tol atol rtol hermitian out"},
    {"cross", l_linalg_cross, MTL_FN, "torch.linalg.cross(a, b[, dim=-1]) -- cross product of 3-vectors", "dim out"},
    {NULL, NULL, 0, NULL}};

void mtl_open_linalg(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_newtable(L);
  int linalg_idx = lua_gettop(L);
  mtl_register(L, linalg_idx, methods_idx, linalg_regs);
  lua_setfield(L, torch_idx, "linalg");
}
