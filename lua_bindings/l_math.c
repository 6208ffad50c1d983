/* l_math.c -- Lua bindings of the elementwise ops. Unary, binary and
 * comparison ops are registered by walking the op registry, each as
 * torch.name, x:name() and the in-place x:name_(), with their rows' help
 * texts; ops with extra arguments (add/sub alpha, div rounding_mode,
 * clamp, where, lerp, ...) have their own functions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"

/* upvalue 1: op id; upvalue 2: in-place flag; upvalue 3: autocast policy.
 * An op with a number parameter (its row's param) takes it as argument 2
 * or as the option of that name. */
static int l_unary(lua_State *L) {
  mt_op op = (mt_op)lua_tointeger(L, lua_upvalueindex(1));
  int inplace = lua_toboolean(L, lua_upvalueindex(2));
  const mt_opinfo *info = &mt_ops[op];
  MTL_AUTOCAST(L, (int)lua_tointeger(L, lua_upvalueindex(3)), info->name);
  mt_tensor *x = mtl_check_tensor(L, 1, info->name);
  int opt = mtl_options_index(L, 2);
  if (opt) { /* these closures are not gated: their options are checked here */
    char names[64], fname[64];
    snprintf(names, sizeof names, "%s %s", inplace ? "" : "out", info->param ? info->param : "");
    snprintf(fname, sizeof fname, "%s%s", info->name, inplace ? "_" : "");
    mtl_check_options(L, opt, fname, names);
  }
  double p = info->param ? mtl_opt_num(L, 2, opt ? opt - 1 : lua_gettop(L), opt, info->param, info->pdefault) : 0;
  mt_tensor *o = inplace ? x : mtl_opt_out(L, opt);
  mt_tensor *res = o;
  MTL_CHECK(L, mtg_unary_p(op, x, info->param ? &p : NULL, &res));
  if (o) {
    if (inplace)
      lua_settop(L, 1);
    else
      lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, res);
  return 1;
}

/* b scaled by the alpha at stack index idx (add/sub; 0: none): returns a
 * new reference */
static mt_tensor *scaled(lua_State *L, mt_tensor *b, int idx, const char *name) {
  if (!idx) return b;
  mt_tensor *alpha = mtl_tensor_or_scalar(L, idx, name), *r = NULL;
  mt_status st = mtg_binary(MT_OP_mul, b, alpha, &r);
  mt_release(alpha);
  if (st) mtl_fail(L, st, b, NULL, NULL, NULL);
  mt_release(b);
  return r;
}

static int l_binary(lua_State *L) {
  mt_op op = (mt_op)lua_tointeger(L, lua_upvalueindex(1));
  int inplace = lua_toboolean(L, lua_upvalueindex(2));
  const char *name = mt_ops[op].name;
  MTL_AUTOCAST(L, (int)lua_tointeger(L, lua_upvalueindex(3)), name);
  int opt = mtl_options_index(L, 3);
  if (opt) /* these closures are not gated: their options are checked here */
    mtl_check_options(L, opt, name,
                      op == MT_OP_add || op == MT_OP_sub ? (inplace ? "alpha" : "alpha out")
                      : op == MT_OP_div                  ? (inplace ? "rounding_mode" : "rounding_mode out")
                                                         : (inplace ? NULL : "out"));
  if (lua_gettop(L) < 2) return luaL_error(L, "%s: expected two arguments", name);
  mt_tensor *self = inplace ? mtl_check_tensor(L, 1, name) : NULL;
  mtl_check_operand(L, 1, name);
  mtl_check_operand(L, 2, name);
  /* alpha (add, sub): positional argument 3 or alpha= in the options */
  int alpha = 0, third = lua_gettop(L) >= 3 && opt != 3 && !lua_isnil(L, 3);
  if (op == MT_OP_add || op == MT_OP_sub) {
    if (third) {
      alpha = 3;
    } else if (opt && mtl_optfield(L, opt, "alpha") != LUA_TNIL) {
      alpha = lua_gettop(L);
    } else if (opt) {
      lua_pop(L, 1);
    }
    if (alpha) mtl_check_operand(L, alpha, name);
  } else if (third) {
    return luaL_error(L, "%s: unexpected argument #3 (%s); options go in a table", name, luaL_typename(L, 3));
  }
  mt_tensor *a = mtl_tensor_or_scalar(L, 1, name);
  mt_tensor *b = mtl_tensor_or_scalar(L, 2, name);
  if ((a->flags & MT_TF_WRAPPED) && (b->flags & MT_TF_WRAPPED)) {
    mt_release(a);
    mt_release(b);
    return luaL_error(L, "%s: at least one argument must be a tensor", name);
  }
  if (alpha) b = scaled(L, b, alpha, name);
  mt_op run = op;
  if (op == MT_OP_div && opt) {
    mtl_optfield(L, opt, "rounding_mode");
    const char *mode = lua_tostring(L, -1);
    if (mode && strcmp(mode, "floor") == 0)
      run = MT_OP_floor_divide;
    else if (mode && strcmp(mode, "trunc") == 0)
      run = MT_NOPS; /* handled below */
    else if (mode)
      return mtl_fail(L, mt_fail(MT_EARG, "div: rounding_mode must be 'floor', 'trunc' or nil, got '%s'", mode), a, b,
                      NULL, NULL);
    lua_pop(L, 1);
  }
  mt_tensor *out = inplace ? self : mtl_opt_out(L, opt);
  mt_tensor *res = out;
  mt_status st;
  if (run == MT_NOPS) { /* trunc division: trunc(a / b), integer inputs keep their dtype */
    mt_tensor *q = NULL, *t = NULL;
    mt_dtype rt = mt_result_type(a, b);
    st = mtg_binary(MT_OP_div, a, b, &q);
    if (!st) st = mtg_unary(MT_OP_trunc, q, mt_is_floating(rt) ? &res : &t);
    if (!st && t) {
      if (res) {
        st = mtg_copy_(res, t);
      } else {
        st = mtg_to_dtype(t, rt, false, &res);
      }
    }
    mt_release(q);
    mt_release(t);
  } else {
    st = mtg_binary(run, a, b, &res);
  }
  if (st) mtl_fail(L, st, a, b, NULL, NULL);
  mt_release(a);
  mt_release(b);
  if (out) {
    if (inplace) {
      lua_settop(L, 1);
    } else {
      lua_getfield(L, opt, "out");
    }
    return 1;
  }
  mtl_push_tensor(L, res);
  return 1;
}

static void register_op(lua_State *L, int torch_idx, int methods_idx, int op, int inplace, lua_CFunction fn) {
  const char *name = mt_ops[op].name;
  lua_pushinteger(L, op);
  lua_pushboolean(L, inplace);
  lua_pushinteger(L, inplace ? 0 : mtl_autocast_flags(name)); /* in-place ops keep their dtype */
  lua_pushcclosure(L, fn, 3);
  const mt_opinfo *info = &mt_ops[op];
  char sig[64], text[320];
  if (info->param)
    snprintf(sig, sizeof sig, inplace ? "_([%s])" : "(x[, %s])", info->param);
  else if (inplace)
    snprintf(sig, sizeof sig, "%s", info->arity == 1 ? "_()" : "_(b)");
  else
    snprintf(sig, sizeof sig, "%s", info->arity == 1 ? "(x)" : "(a, b)");
  snprintf(text, sizeof text, "%s%s%s -- %s%s", inplace ? "x:" : "torch.", name, sig, info->help,
           inplace ? ", in place" : "");
  mtl_set_help(L, text);
  char buf[64];
  snprintf(buf, sizeof buf, "%s%s", name, inplace ? "_" : "");
  if (!inplace) {
    lua_pushvalue(L, -1);
    lua_setfield(L, torch_idx, buf);
  }
  lua_setfield(L, methods_idx, buf);
}

/* ---- ops with extra arguments ---- */

/* torch.clamp(x, min, max) / x:clamp{min=, max=}; min/max numbers or tensors */
static int clamp_impl(lua_State *L, int inplace) {
  mt_tensor *x = mtl_check_tensor(L, 1, "clamp");
  int opt = mtl_options_index(L, 2);
  int last = opt ? opt - 1 : lua_gettop(L);
  mt_tensor *lo = NULL, *hi = NULL;
  mtl_getarg(L, 2, last, opt, "min");
  mtl_getarg(L, 3, last, opt, "max");
  if (!lua_isnil(L, -2)) mtl_check_operand(L, -2, "clamp");
  if (!lua_isnil(L, -1)) mtl_check_operand(L, -1, "clamp");
  lua_pop(L, 2);
  mtl_getarg(L, 2, last, opt, "min");
  if (!lua_isnil(L, -1)) lo = mtl_tensor_or_scalar(L, -1, "clamp");
  mtl_getarg(L, 3, last, opt, "max");
  if (!lua_isnil(L, -1)) hi = mtl_tensor_or_scalar(L, -1, "clamp");
  lua_pop(L, 2);
  mt_tensor *res = inplace ? x : mtl_opt_out(L, opt);
  mt_tensor *given = res;
  const mt_tensor *ins[3] = {x, lo, hi};
  mt_status st = mtg_ew(MT_OP_clamp, ins, 3, NULL, &res);
  if (st) mtl_fail(L, st, lo, hi, NULL, NULL);
  mt_release(lo);
  mt_release(hi);
  if (given) {
    lua_settop(L, 1);
    if (!inplace) lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, res);
  return 1;
}
static int l_clamp(lua_State *L) { return clamp_impl(L, 0); }
static int l_clamp_(lua_State *L) { return clamp_impl(L, 1); }

static int l_where(lua_State *L) {
  mt_tensor *c = mtl_check_tensor(L, 1, "where");
  if (lua_gettop(L) == 1) {
    lua_getfield(L, LUA_REGISTRYINDEX, "mtl.methods");
    lua_getfield(L, -1, "nonzero");
    if (lua_isnil(L, -1)) return luaL_error(L, "where: the one-argument form needs nonzero");
    lua_pushvalue(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "as_tuple");
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L) - 2;
  }
  mtl_check_operand(L, 2, "where");
  mtl_check_operand(L, 3, "where");
  mt_tensor *a = mtl_tensor_or_scalar(L, 2, "where"), *b = mtl_tensor_or_scalar(L, 3, "where"), *o = NULL;
  mt_status st = mtg_where(c, a, b, &o);
  if (st) mtl_fail(L, st, a, b, NULL, NULL);
  mt_release(a);
  mt_release(b);
  mtl_push_tensor(L, o);
  return 1;
}

static int lerp_impl(lua_State *L, int inplace) {
  mt_tensor *a = mtl_check_tensor(L, 1, "lerp");
  mtl_check_operand(L, 2, "lerp");
  mtl_check_operand(L, 3, "lerp");
  mt_tensor *b = mtl_tensor_or_scalar(L, 2, "lerp"), *w = mtl_tensor_or_scalar(L, 3, "lerp"), *o = NULL;
  const mt_tensor *ins[3] = {a, b, w};
  mt_status st = mtg_ew(MT_OP_lerp, ins, 3, NULL, &o);
  if (!st && inplace) st = mtg_copy_(a, o);
  if (st) mtl_fail(L, st, b, w, o, NULL);
  mt_release(b);
  mt_release(w);
  if (inplace) {
    mt_release(o);
    lua_settop(L, 1);
    return 1;
  }
  mtl_push_tensor(L, o);
  return 1;
}
static int l_lerp(lua_State *L) { return lerp_impl(L, 0); }
static int l_lerp_(lua_State *L) { return lerp_impl(L, 1); }

static int l_nan_to_num(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "nan_to_num"), *o = NULL;
  int opt = mtl_options_index(L, 2);
  int last = opt ? opt - 1 : lua_gettop(L);
  double nan = mtl_opt_num(L, 2, last, opt, "nan", 0.0);
  double pinf = mtl_opt_num(L, 3, last, opt, "posinf", HUGE_VAL);
  double ninf = mtl_opt_num(L, 4, last, opt, "neginf", -HUGE_VAL);
  mt_args args = {.f = {nan, pinf, ninf}, .nf = 3};
  MTL_CHECK(L, mtg_ew(MT_OP_nan_to_num, (const mt_tensor *const *)&x, 1, &args, &o));
  mtl_push_tensor(L, o);
  return 1;
}

/* torch.gelu_backward(grad, x[, approximate='none'|'tanh']): grad * gelu'(x)
 * in one fused op (the registry's gelu_backward / gelu_tanh_backward) */
static int l_gelu_backward(lua_State *L) {
  const char *name = "gelu_backward";
  int opt = mtl_options_index(L, 3);
  mtl_check_operand(L, 1, name);
  mtl_check_operand(L, 2, name);
  mtl_getarg(L, 3, opt ? opt - 1 : lua_gettop(L), opt, "approximate");
  int ty = lua_type(L, -1);
  const char *ap = ty == LUA_TNIL ? "none" : ty == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!ap || (strcmp(ap, "none") && strcmp(ap, "tanh")))
    return luaL_error(L, "%s: approximate must be 'none' or 'tanh', got %s%s%s", name, ap ? "'" : "",
                      ap ? ap : luaL_typename(L, -1), ap ? "'" : "");
  mt_op op = strcmp(ap, "tanh") ? MT_OP_gelu_backward : MT_OP_gelu_tanh_backward;
  lua_pop(L, 1);
  return mtl_push_binary(L, op, name, true);
}

/* isclose: |a - b| <= atol + rtol * |b|, NaNs equal only with equal_nan */
static mt_status isclose(const mt_tensor *a, const mt_tensor *b, double rtol, double atol, int equal_nan,
                         mt_tensor **out) {
  mt_tensor *d = NULL, *ad = NULL, *ab = NULL, *tol = NULL, *r = NULL, *at = NULL, *rt = NULL, *close = NULL,
            *eq = NULL, *n1 = NULL, *n2 = NULL, *nn = NULL, *tmp = NULL;
  mt_status st = mt_scalar_tensor(mt_sfloat(rtol), MT_FLOAT64, &rt);
  if (!st) rt->flags |= MT_TF_WRAPPED, st = mt_scalar_tensor(mt_sfloat(atol), MT_FLOAT64, &at);
  if (!st) at->flags |= MT_TF_WRAPPED, st = mtg_binary(MT_OP_sub, a, b, &d);
  if (!st) st = mtg_unary(MT_OP_abs, d, &ad);
  if (!st) st = mtg_unary(MT_OP_abs, b, &ab);
  if (!st) st = mtg_binary(MT_OP_mul, ab, rt, &r);
  if (!st) st = mtg_binary(MT_OP_add, r, at, &tol);
  if (!st) st = mtg_binary(MT_OP_le, ad, tol, &close);
  if (!st) st = mtg_binary(MT_OP_eq, a, b, &eq); /* exact equality covers infinities */
  if (!st) st = mtg_binary(MT_OP_logical_or, close, eq, equal_nan ? &tmp : out);
  if (!st && equal_nan) {
    if (!(st = mtg_unary(MT_OP_isnan, a, &n1)) && !(st = mtg_unary(MT_OP_isnan, b, &n2)) &&
        !(st = mtg_binary(MT_OP_logical_and, n1, n2, &nn)))
      st = mtg_binary(MT_OP_logical_or, tmp, nn, out);
  }
  mt_tensor *all[] = {d, ad, ab, tol, r, at, rt, close, eq, n1, n2, nn, tmp};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_release(all[i]);
  return st;
}

static int close_args(lua_State *L, const char *op, mt_tensor **out) {
  mt_tensor *a = mtl_check_tensor(L, 1, op);
  mtl_check_operand(L, 2, op);
  int opt = mtl_options_index(L, 3);
  int last = opt ? opt - 1 : lua_gettop(L);
  double rtol = mtl_opt_num(L, 3, last, opt, "rtol", 1e-5);
  double atol = mtl_opt_num(L, 4, last, opt, "atol", 1e-8);
  int equal_nan = mtl_opt_bool(L, 5, last, opt, "equal_nan", 0);
  mt_tensor *b = mtl_tensor_or_scalar(L, 2, op);
  mt_status st = isclose(a, b, rtol, atol, equal_nan, out);
  if (st) mtl_fail(L, st, b, NULL, NULL, NULL);
  mt_release(b);
  return 0;
}

static int l_isclose(lua_State *L) {
  mt_tensor *o = NULL;
  close_args(L, "isclose", &o);
  mtl_push_tensor(L, o);
  return 1;
}

static bool all_true(const mt_tensor *t) {
  if (mt_tdevice(t).type != MT_CPU) { /* one reduction there, one value down */
    mt_tensor *r = NULL;
    mt_scalar v = mt_sbool(false);
    if (!mt_all(t, NULL, 0, false, &r)) mt_item(r, &v);
    mt_release(r);
    return mt_scalar_i(v) != 0;
  }
  int64_t idx[MT_MAXDIM] = {0};
  int64_t n = mt_numel(t);
  for (int64_t k = 0; k < n; k++) {
    if (mt_get_f64(t, idx) == 0) return false;
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

static int l_allclose(lua_State *L) {
  mt_tensor *o = NULL;
  close_args(L, "allclose", &o);
  lua_pushboolean(L, all_true(o));
  mt_release(o);
  return 1;
}

/* torch.equal(a, b): same shape and all elements equal */
static int l_equal(lua_State *L) {
  mt_tensor *a = mtl_check_tensor(L, 1, "equal"), *b = mtl_check_tensor(L, 2, "equal"), *o = NULL;
  bool same = a->ndim == b->ndim;
  for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
  if (!same) {
    lua_pushboolean(L, 0);
    return 1;
  }
  MTL_CHECK(L, mtg_binary(MT_OP_eq, a, b, &o));
  lua_pushboolean(L, all_true(o));
  mt_release(o);
  return 1;
}

static int l_result_type(lua_State *L) {
  mtl_check_operand(L, 1, "result_type");
  mtl_check_operand(L, 2, "result_type");
  mt_tensor *a = mtl_tensor_or_scalar(L, 1, "result_type"), *b = mtl_tensor_or_scalar(L, 2, "result_type");
  mt_dtype d = mt_result_type(a, b);
  mt_release(a);
  mt_release(b);
  mtl_push_dtype(L, d);
  return 1;
}

static int l_promote_types(lua_State *L) {
  mtl_push_dtype(L, mt_promote_types(mtl_check_dtype(L, 1, "promote_types"), mtl_check_dtype(L, 2, "promote_types")));
  return 1;
}

static const mtl_reg extra[] = {
    {"clamp", l_clamp, MTL_BOTH, "torch.clamp(x, min, max) -- limit values to [min, max] (either may be nil)",
     "min max out"},
    {"clip", l_clamp, MTL_BOTH, "torch.clip(x, min, max) -- alias of clamp", "min max out"},
    {"clamp_", l_clamp_, MTL_METHOD, "x:clamp_(min, max) -- clamp in place", "min max"},
    {"where", l_where, MTL_BOTH, "torch.where(cond, a, b) -- a where cond is true, else b (broadcasting)"},
    {"lerp", l_lerp, MTL_BOTH, "torch.lerp(a, b, w) -- a + w * (b - a)"},
    {"lerp_", l_lerp_, MTL_METHOD, "x:lerp_(b, w) -- lerp in place"},
    {"nan_to_num", l_nan_to_num, MTL_BOTH, "torch.nan_to_num(x[, nan, posinf, neginf]) -- replace NaN and infinities",
     "nan posinf neginf"},
    {"gelu_backward", l_gelu_backward, MTL_FN,
     "torch.gelu_backward(grad, x[, approximate='none'|'tanh']) -- grad * gelu'(x) in one pass (gelu's backward)",
     "approximate"},
    {"isclose", l_isclose, MTL_BOTH, "torch.isclose(a, b[, {rtol=1e-5, atol=1e-8, equal_nan=false}]) -- elementwise closeness",
     "rtol atol equal_nan"},
    {"allclose", l_allclose, MTL_BOTH, "torch.allclose(a, b[, {rtol=, atol=, equal_nan=}]) -- true if all elements are close",
     "rtol atol equal_nan"},
    {"equal", l_equal, MTL_BOTH, "torch.equal(a, b) -- true if same shape and all elements equal"},
    {"result_type", l_result_type, MTL_FN, "torch.result_type(a, b) -- dtype of a binary op on a and b"},
    {"promote_types", l_promote_types, MTL_FN, "torch.promote_types(d1, d2) -- the promoted dtype"},
    {NULL, NULL, 0, NULL}};

static const struct {
  const char *alias, *op;
} aliases[] = {{"absolute", "abs"}, {"negative", "neg"}, {"multiply", "mul"}, {"divide", "div"},
               {"true_divide", "div"}, {"subtract", "sub"}, {"greater", "gt"}, {"greater_equal", "ge"},
               {"less", "lt"}, {"less_equal", "le"}, {"not_equal", "ne"}, {"arctan2", "atan2"},
               {"fix", "trunc"}, {"max_elementwise", "maximum"}};

/* Registers every elementwise row with a help text (tensor/ops.def) as
 * torch.name, x:name() and x:name_(), then the functions above. */
void mtl_open_math(lua_State *L, int torch_idx, int methods_idx) {
  for (int op = 0; op < MT_NOPS; op++) {
    mt_opkind k = mt_ops[op].kind;
    if (!mt_ops[op].help) continue;
    if (k == MT_K_UNARY) {
      register_op(L, torch_idx, methods_idx, op, 0, l_unary);
      register_op(L, torch_idx, methods_idx, op, 1, l_unary);
    } else if (k == MT_K_BINARY || k == MT_K_COMPARE) {
      register_op(L, torch_idx, methods_idx, op, 0, l_binary);
      register_op(L, torch_idx, methods_idx, op, 1, l_binary);
    }
  }
  mtl_register(L, torch_idx, methods_idx, extra);
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) {
    lua_getfield(L, methods_idx, aliases[i].op);
    lua_pushvalue(L, -1);
    lua_setfield(L, methods_idx, aliases[i].alias);
    lua_setfield(L, torch_idx, aliases[i].alias);
  }
}
