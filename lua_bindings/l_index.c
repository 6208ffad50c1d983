/* l_index.c -- Lua bindings of indexing: x[key] and x[key] = v (integers
 * and ranges give views; bool and int64 tensor keys gather and scatter) and
 * the index ops (index_select, gather, scatter, index_add, masked_fill,
 * nonzero, take, ...). Dims are converted from 1-based to the engine's
 * 0-based; index values are 1-based on both sides and pass through. */
#include <string.h>

#include "cuda/mt_cuda.h"
#include "index.h"
#include "graph.h"
#include "mtl.h"

/* ---- keys of x[key] ---- */

enum { K_INT, K_RANGE, K_TENSOR, K_ELLIPSIS };

typedef struct entry {
  int kind;
  int64_t a, b, step; /* K_INT: a; K_RANGE: a..b inclusive, 1-based (negative from the end) */
  mt_tensor *t;       /* K_TENSOR: int64 or bool, borrowed from the key */
} entry;

#define MAX_ENTRIES (2 * MT_MAXDIM)
#define OWNED_MAX (MT_MAXDIM + 2)

static int64_t key_int(lua_State *L, int idx, const char *op) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) {
    if (lua_type(L, idx) == LUA_TNUMBER) luaL_error(L, "%s: index %s is not an integer", op, lua_tostring(L, idx));
    luaL_error(L, "%s: a range is written {first, last[, step]} of integers, found a %s", op, luaL_typename(L, idx));
  }
  return (int64_t)v;
}

/* {}: whole dim; {a}: a to the end; {a, b}: a..b inclusive; {a, b, step}. */
static void parse_range(lua_State *L, int idx, entry *e, const char *op) {
  int n = (int)lua_rawlen(L, idx);
  if (n > 3 || mtl_is_options(L, idx))
    luaL_error(L, "%s: a range is written {first, last[, step]}, got a table of %d entries", op, n);
  e->kind = K_RANGE;
  e->a = 1;
  e->b = -1;
  e->step = 1;
  int64_t *slot[3] = {&e->a, &e->b, &e->step};
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    *slot[i] = key_int(L, -1, op);
    lua_pop(L, 1);
  }
  if (e->step < 1) luaL_error(L, "%s: the step of a range must be positive, got %I", op, (lua_Integer)e->step);
}

/* One entry of a table key, or the whole key (value at idx). */
static void parse_entry(lua_State *L, int idx, entry *e, const char *op) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  memset(e, 0, sizeof *e);
  if (t) {
    if (t->dtype != MT_INT64 && t->dtype != MT_BOOL)
      luaL_error(L, "%s: tensors used as indices must be int64 or bool, got %s", op, mt_dtype_name((mt_dtype)t->dtype));
    e->kind = K_TENSOR;
    e->t = t;
  } else if (lua_type(L, idx) == LUA_TNUMBER) {
    e->kind = K_INT;
    e->a = key_int(L, idx, op);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    parse_range(L, idx, e, op);
  } else if (lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "...") == 0) {
    e->kind = K_ELLIPSIS;
  } else {
    luaL_error(L,
               "%s: invalid index of type %s (use an integer, a table of integers and ranges, \"...\", or a bool "
               "or int64 tensor)",
               op, luaL_typename(L, idx));
  }
}

static int dims_used(const entry *e) {
  if (e->kind == K_ELLIPSIS) return 0;
  return e->kind == K_TENSOR && e->t->dtype == MT_BOOL ? e->t->ndim : 1;
}

/* Parses the key at idx into e[]; returns the number of entries. Raises Lua
 * errors (nothing is allocated yet). */
static int parse_key(lua_State *L, int idx, const mt_tensor *x, entry *e, const char *op) {
  int n = 1;
  if (lua_type(L, idx) == LUA_TTABLE && !mtl_to_tensor(L, idx)) {
    n = (int)lua_rawlen(L, idx);
    if (mtl_is_options(L, idx))
      luaL_error(L, "%s: a key table lists integers, ranges, \"...\" and tensors; it cannot have named fields", op);
    if (n > MAX_ENTRIES) luaL_error(L, "%s: too many indices for a tensor of dimension %d (got %d)", op, x->ndim, n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, idx, i + 1);
      parse_entry(L, lua_gettop(L), &e[i], op);
      lua_pop(L, 1);
    }
  } else {
    parse_entry(L, idx, &e[0], op);
  }
  int used = 0, ell = 0, ints = 0;
  for (int i = 0; i < n; i++) {
    used += dims_used(&e[i]);
    ell += e[i].kind == K_ELLIPSIS;
    ints += e[i].kind == K_INT;
  }
  if (ell > 1) luaL_error(L, "%s: an index can only have a single ellipsis (\"...\")", op);
  if (used > x->ndim) {
    if (x->ndim == 0) luaL_error(L, "%s: cannot index a 0-dim tensor (use x:item() to read its value)", op);
    if (n == 2 && ints == 2 && x->ndim == 1)
      luaL_error(L, "%s: too many indices for a tensor of dimension 1 (got 2); a range is written x[{{%I, %I}}]", op,
                 (lua_Integer)e[0].a, (lua_Integer)e[1].a);
    luaL_error(L, "%s: too many indices for a tensor of dimension %d (got %d)", op, x->ndim, used);
  }
  return n;
}

/* Index tensors on the host used on a CUDA tensor are copied to its device
 * (as PyTorch allows); the copies live on the Lua stack until the call ends. */
static void keys_to_device(lua_State *L, const mt_tensor *x, entry *e, int n) {
  if (mt_tdevice(x).type != MT_CUDA) return;
  for (int i = 0; i < n; i++)
    if (e[i].kind == K_TENSOR && mt_tdevice(e[i].t).type != MT_CUDA) {
      mt_tensor *d = NULL;
      MTL_CHECK(L, mt_cuda_to_device(e[i].t, mt_tdevice(x), false, &d));
      mtl_push_tensor(L, d);
      e[i].t = d;
    }
}

/* Inclusive 1-based range a..b (negative from the end) of a dim of the given
 * size to a clamped half-open [start, stop), like Python slices. */
static void range_bounds(int64_t size, int64_t a, int64_t b, int64_t *start, int64_t *stop) {
  int64_t s = a >= 1 ? a - 1 : (a < 0 ? (a < -size ? 0 : size + a) : 0);
  int64_t e = b >= 1 ? b : (b < 0 ? (b < -size ? 0 : size + b + 1) : 0);
  if (s > size) s = size;
  if (e > size) e = size;
  if (e < s) e = s;
  *start = s;
  *stop = e;
}

/* The result of applying the basic entries of a key: a view of x, and the
 * tensor entries still to apply, by dim of the view. */
typedef struct applied {
  mt_tensor *view;
  mt_tensor *idx[MT_MAXDIM];   /* borrowed or in owned[] */
  int labels[MT_MAXDIM];       /* x's dim for each dim of view, for messages */
  int nidx;                    /* number of tensor entries */
  mt_tensor *owned[OWNED_MAX]; /* index tensors made here (from bool masks) */
  int nowned;
} applied;

static void applied_free(applied *ap) {
  mt_release(ap->view);
  for (int i = 0; i < ap->nowned; i++) mt_release(ap->owned[i]);
  memset(ap, 0, sizeof *ap);
}

/* Makes *nv (just produced with status st) the current view. */
static mt_status replace_view(applied *ap, mt_status st, mt_tensor **nv) {
  if (st) return st;
  mt_release(ap->view);
  ap->view = *nv;
  return MT_OK;
}

/* A bool mask over dims d.. of the view becomes one int64 index per dim
 * (the columns of its nonzero); a 0-dim mask adds a dim of size 1 or 0. */
static mt_status apply_mask(applied *ap, const mt_tensor *m, int *d, int xd, const char *op) {
  mt_status st;
  mt_tensor *v = ap->view, *nz = NULL, *nv = NULL;
  if (m->ndim == 0) {
    if ((st = replace_view(ap, mtg_unsqueeze(v, *d, &nv), &nv))) return st;
    mt_scalar on;
    if ((st = mt_item(m, &on))) return st;
    int64_t count = mt_scalar_i(on) ? 1 : 0;
    mt_tensor *ix = NULL;
    if ((st = mt_full(&count, 1, mt_sint(1), MT_INT64, mt_tdevice(nv), &ix))) return st;
    ap->owned[ap->nowned++] = ix;
    ap->idx[*d] = ix;
    ap->labels[*d] = xd;
    ap->nidx++;
    (*d)++;
    return MT_OK;
  }
  for (int j = 0; j < m->ndim; j++)
    if (m->shape[j] != v->shape[*d + j]) {
      char a[128], b[128];
      return mt_fail(
          MT_ESHAPE, "%s: the mask of shape %s does not match the indexed tensor of shape %s at dimension %d", op,
          mt_shape_str(m->shape, m->ndim, a, sizeof a), mt_shape_str(v->shape, v->ndim, b, sizeof b), xd + j + 1);
    }
  if ((st = mt_nonzero(m, &nz))) return st;
  for (int j = 0; j < m->ndim && !st; j++) {
    mt_tensor *col = NULL;
    if (!(st = mt_select(nz, 1, j, &col))) {
      ap->owned[ap->nowned++] = col;
      ap->idx[*d + j] = col;
      ap->labels[*d + j] = xd + j;
      ap->nidx++;
    }
  }
  mt_release(nz);
  *d += m->ndim;
  return st;
}

/* Applies integer and range entries to x as views, in order; collects the
 * tensor entries. On error ap is freed. */
static mt_status apply_key(const mt_tensor *x, const entry *e, int n, applied *ap, const char *op) {
  memset(ap, 0, sizeof *ap);
  ap->view = mt_retain((mt_tensor *)x);
  int used = 0, d = 0, xd = 0;
  for (int i = 0; i < n; i++) used += dims_used(&e[i]);
  mt_status st = MT_OK;
  for (int i = 0; i < n && !st; i++) {
    mt_tensor *v = ap->view, *nv = NULL;
    switch (e[i].kind) {
    case K_ELLIPSIS:
      d += x->ndim - used;
      xd += x->ndim - used;
      break;
    case K_INT: {
      int64_t size = v->shape[d], k = e[i].a;
      if (k < -size || k > size || k == 0) {
        st = mt_fail(MT_EINDEX, "%s: index %lld is out of bounds for dimension %d with size %lld%s", op, (long long)k,
                     xd + 1, (long long)size, k == 0 ? " (indices are 1-based)" : "");
        break;
      }
      st = replace_view(ap, mtg_select(v, d, k > 0 ? k - 1 : k + size, &nv), &nv);
      xd++;
      break;
    }
    case K_RANGE: {
      int64_t start, stop, size = v->shape[d];
      range_bounds(size, e[i].a, e[i].b, &start, &stop);
      /* a step past the end selects one element at most: clamp it so the
       * view's stride cannot overflow */
      int64_t step = e[i].step < size ? e[i].step : (size > 0 ? size : 1);
      st = replace_view(ap, mtg_slice(v, d, start, stop, step, &nv), &nv);
      d++;
      xd++;
      break;
    }
    default:
      if (e[i].t->dtype == MT_BOOL) {
        st = apply_mask(ap, e[i].t, &d, xd, op);
        xd += e[i].t->ndim;
      } else {
        ap->idx[d] = e[i].t;
        ap->labels[d] = xd;
        ap->nidx++;
        d++;
        xd++;
      }
    }
  }
  if (st) applied_free(ap);
  return st;
}

static bool same_shape(const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

/* x[key]: integers select (removing the dim), ranges slice, both as views;
 * bool and int64 tensors gather a copy. */
int mtl_index_get(lua_State *L) {
  const char *op = "index";
  mt_tensor *x = mtl_check_tensor(L, 1, op), *r = NULL;
  entry e[MAX_ENTRIES];
  int n = parse_key(L, 2, x, e, op);
  keys_to_device(L, x, e, n);
  if (n == 1 && e[0].kind == K_TENSOR && e[0].t->dtype == MT_BOOL && x->ndim > 0 && same_shape(e[0].t, x)) {
    MTL_CHECK(L, mtg_index_op(MT_OP_masked_select, x, e[0].t, NULL, 0, mt_sint(0), 0, &r));
    mtl_push_tensor(L, r);
    return 1;
  }
  applied ap;
  MTL_CHECK(L, apply_key(x, e, n, &ap, op));
  if (ap.nidx) {
    mt_status st = mtg_index_adv(ap.view, ap.idx, ap.view->ndim, ap.labels, NULL, false, &r);
    if (st) {
      applied_free(&ap);
      mtl_fail(L, st, NULL, NULL, NULL, NULL);
    }
  } else {
    r = mt_retain(ap.view);
  }
  applied_free(&ap);
  mtl_push_tensor(L, r);
  return 1;
}

/* The value of x[key] = v: a scalar (*s) or a tensor (returned, borrowed). */
static mt_tensor *check_value(lua_State *L, int idx, mt_scalar *s, const char *op) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) return t;
  if (lua_type(L, idx) == LUA_TBOOLEAN)
    *s = mt_sbool(lua_toboolean(L, idx));
  else if (lua_isinteger(L, idx))
    *s = mt_sint(lua_tointeger(L, idx));
  else if (lua_type(L, idx) == LUA_TNUMBER)
    *s = mt_sfloat(lua_tonumber(L, idx));
  else
    luaL_error(L, "%s: the value must be a number or a tensor, got %s", op, luaL_typename(L, idx));
  return NULL;
}

/* The mask viewed with rank nd (trailing size-1 dims added) so that a mask
 * over x's leading dims broadcasts over its last ones. */
static mt_status pad_mask(const mt_tensor *m, int nd, mt_tensor **out) {
  int64_t sh[MT_MAXDIM], st[MT_MAXDIM];
  for (int i = 0; i < nd; i++) {
    sh[i] = i < m->ndim ? m->shape[i] : 1;
    st[i] = i < m->ndim ? m->strides[i] : 0;
  }
  return mt_as_strided(m, nd, sh, st, m->offset, out);
}

/* Writes v (scalar s when NULL) into the key's selection of x: views take
 * fill_/copy_, tensor keys take index_put (accumulate adds). */
static mt_status write_key(mt_tensor *x, const entry *e, int n, mt_tensor *v, mt_scalar s, bool accumulate,
                           const char *op) {
  applied ap;
  mt_status st = apply_key(x, e, n, &ap, op);
  if (st) return st;
  mt_tensor *val = NULL, *tmp = NULL;
  if (ap.nidx) {
    if (v)
      val = mt_retain(v);
    else
      st = mt_scalar_tensor(s, (mt_dtype)x->dtype, &val);
    mt_tensor *t = ap.view;
    if (!st) st = mtg_index_adv(ap.view, ap.idx, ap.view->ndim, ap.labels, val, accumulate, &t);
  } else {
    mt_tensor *target = ap.view;
    if (v) {
      bool ok = v->ndim <= target->ndim;
      for (int i = 0; ok && i < v->ndim; i++) {
        int64_t a = v->shape[v->ndim - 1 - i];
        ok = a == 1 || a == target->shape[target->ndim - 1 - i];
      }
      if (!ok) {
        char a[128], b[128];
        st = mt_fail(MT_ESHAPE, "%s: a value of shape %s cannot be assigned to a selection of shape %s", op,
                     mt_shape_str(v->shape, v->ndim, a, sizeof a),
                     mt_shape_str(target->shape, target->ndim, b, sizeof b));
      }
    }
    if (!st && !v) {
      if (accumulate)
        st = mt_scalar_tensor(s, (mt_dtype)x->dtype, &val);
      else
        st = mtg_fill_(target, s);
    } else if (!st) {
      /* a source overlapping x is copied first */
      st = v->storage == x->storage ? mtg_clone(v, &val) : (val = mt_retain(v), MT_OK);
    }
    if (!st && val) {
      if (accumulate && !(st = mtg_binary(MT_OP_add, target, val, &tmp)))
        st = mtg_copy_(target, tmp);
      else if (!accumulate)
        st = mtg_copy_(target, val);
    }
  }
  mt_release(val);
  mt_release(tmp);
  applied_free(&ap);
  return st;
}

/* x[key] = v, v a number or a tensor broadcast to the selection. */
int mtl_index_set(lua_State *L) {
  const char *op = "index assignment";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  entry e[MAX_ENTRIES];
  int n = parse_key(L, 2, x, e, op);
  keys_to_device(L, x, e, n);
  mt_scalar s = mt_sint(0);
  mt_tensor *v = check_value(L, 3, &s, op);
  if (!v && n == 1 && e[0].kind == K_TENSOR && e[0].t->dtype == MT_BOOL && e[0].t->ndim > 0) {
    /* x[mask] = number: masked_fill_ over the mask's leading dims */
    const mt_tensor *m = e[0].t;
    bool lead = true;
    for (int i = 0; i < m->ndim; i++) lead = lead && m->shape[i] == x->shape[i];
    if (lead) {
      mt_tensor *pm = NULL;
      mt_status st = pad_mask(m, x->ndim, &pm);
      if (!st) st = mtg_index_op(MT_OP_masked_fill, x, pm, NULL, 0, s, 0, &x);
      mt_release(pm);
      MTL_CHECK(L, st);
      return 0;
    }
  }
  MTL_CHECK(L, write_key(x, e, n, v, s, false, op));
  return 0;
}

/* ---- argument helpers ---- */

static int dim_arg(lua_State *L, int idx, const mt_tensor *x, const char *op) {
  int ok;
  lua_Integer d = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "%s: argument 'dim' must be an integer, got %s", op,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return mtl_dim(L, d, x->ndim, op);
}

static mt_tensor *tensor_arg(lua_State *L, int idx, const char *op, const char *what) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (!t)
    luaL_error(L, "%s: %s must be a tensor, got %s%s", op, what, luaL_typename(L, idx),
               lua_type(L, idx) == LUA_TTABLE ? " (make one with torch.tensor{...})" : "");
  return t;
}

/* A fill value: number, boolean or 0-dim tensor. */
static mt_scalar scalar_arg(lua_State *L, int idx, const char *op, const char *what) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (t) {
    if (t->ndim != 0)
      luaL_error(L, "%s: %s must be a number or a 0-dim tensor, got a tensor with %d dimension%s", op, what, t->ndim,
                 t->ndim == 1 ? "" : "s");
    mt_scalar s;
    MTL_CHECK(L, mt_item(t, &s));
    return s;
  }
  if (lua_type(L, idx) == LUA_TBOOLEAN) return mt_sbool(lua_toboolean(L, idx));
  if (lua_isinteger(L, idx)) return mt_sint(lua_tointeger(L, idx));
  if (lua_type(L, idx) == LUA_TNUMBER) return mt_sfloat(lua_tonumber(L, idx));
  luaL_error(L, "%s: %s must be a number, got %s", op, what, luaL_typename(L, idx));
  return mt_sint(0);
}


/* The tensor a functional form (scatter, index_add, ...) writes into: out=
 * filled with x, or a recorded clone of x (so that the in-place op that
 * follows has x in its history). out= cannot be used when x or src (may
 * be NULL) requires grad. New reference; take it after the last Lua
 * argument check. */
static mt_tensor *target_of(lua_State *L, const mt_tensor *x, const mt_tensor *src, int opt, const char *op) {
  mt_tensor *out = mtl_opt_out(L, opt), *t = NULL;
  if (out) {
    if (mtg_grad_enabled() && (mtg_requires_grad(x) || (src && mtg_requires_grad(src)) || mtg_requires_grad(out)))
      luaL_error(L, "%s: out= cannot be used when an input requires grad (the result would have no history); drop "
                    "out= or use torch.no_grad()", op);
    if (!same_shape(out, x)) {
      char a[128], b[128];
      luaL_error(L, "%s: output of shape %s cannot hold the result of shape %s", op,
                 mt_shape_str(out->shape, out->ndim, a, sizeof a), mt_shape_str(x->shape, x->ndim, b, sizeof b));
    }
    if (out->dtype != x->dtype)
      luaL_error(L, "%s: output has dtype %s but the result has dtype %s", op, mt_dtype_name((mt_dtype)out->dtype),
                 mt_dtype_name((mt_dtype)x->dtype));
    if (out != x) MTL_CHECK(L, mt_copy_(out, x));
    return mt_retain(out);
  }
  MTL_CHECK(L, mtg_clone(x, &t));
  return t;
}

/* An index write (mtg_index_op's arguments): in place on x, into out=
 * (filled with x first, target_of) or into a new tensor; returns x, out= or
 * the new tensor. */
static int finish_write(lua_State *L, mt_status st, mt_tensor *t, int inplace, int opt);
static int write_op(lua_State *L, mt_op op, mt_tensor *x, const mt_tensor *index, const mt_tensor *src, int dim,
                    mt_scalar v, int flag, int inplace, int opt, const char *name) {
  if (inplace) {
    MTL_CHECK(L, mtg_index_op(op, x, index, src, dim, v, flag, &x));
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *t = mtl_opt_out(L, opt) ? target_of(L, x, src, opt, name) : NULL;
  mt_status st = mtg_index_op(op, t ? t : x, index, src, dim, v, flag, &t);
  return finish_write(L, st, t, 0, opt);
}

/* Finishes an in-place (inplace) or functional write into t: raises on
 * error (releasing t); returns x itself, out=, or the new tensor. */
static int finish_write(lua_State *L, mt_status st, mt_tensor *t, int inplace, int opt) {
  if (inplace) {
    MTL_CHECK(L, st);
    lua_settop(L, 1);
    return 1;
  }
  if (st) mtl_fail(L, st, t, NULL, NULL, NULL);
  if (mtl_opt_out(L, opt)) {
    mt_release(t);
    lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, t);
  return 1;
}

/* ---- gathers ---- */

static int l_index_select(lua_State *L) {
  const char *op = "index_select";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  int opt = mtl_options_index(L, 4);
  mt_tensor *out = mtl_opt_out(L, opt), *res = out;
  mt_status st = mtg_index_op(MT_OP_index_select, x, index, NULL, dim, mt_sint(0), 0, &res);
  return mtl_push_result(L, st, res, opt, out);
}

static int l_gather(lua_State *L) {
  const char *op = "gather";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  int opt = mtl_options_index(L, 4);
  mt_tensor *out = mtl_opt_out(L, opt), *res = out;
  mt_status st = mtg_index_op(MT_OP_gather, x, index, NULL, dim, mt_sint(0), 0, &res);
  return mtl_push_result(L, st, res, opt, out);
}

static int l_take(lua_State *L) {
  const char *op = "take";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  mt_tensor *index = tensor_arg(L, 2, op, "index");
  int opt = mtl_options_index(L, 3);
  mt_tensor *out = mtl_opt_out(L, opt), *res = out;
  mt_status st = mtg_index_op(MT_OP_take, x, index, NULL, 0, mt_sint(0), 0, &res);
  return mtl_push_result(L, st, res, opt, out);
}

static int l_masked_select(lua_State *L) {
  const char *op = "masked_select";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  mt_tensor *mask = tensor_arg(L, 2, op, "mask");
  int opt = mtl_options_index(L, 3);
  mt_tensor *out = mtl_opt_out(L, opt), *res = out;
  mt_status st = mtg_index_op(MT_OP_masked_select, x, mask, NULL, 0, mt_sint(0), 0, &res);
  return mtl_push_result(L, st, res, opt, out);
}

/* nonzero(x[, {as_tuple=}]): n x ndim 1-based positions, or one 1-D tensor
 * per dim as multiple results. */
static int nonzero_impl(lua_State *L, const char *op, int allow_tuple) {
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  int as_tuple = allow_tuple ? mtl_opt_bool(L, 2, opt ? opt - 1 : lua_gettop(L), opt, "as_tuple", 0) : 0;
  mt_tensor *out = as_tuple ? NULL : mtl_opt_out(L, opt), *res = out;
  int n = x->ndim ? x->ndim : 1;
  luaL_checkstack(L, n + 1, op);
  mt_status st = mt_nonzero(x, &res);
  if (!as_tuple) return mtl_push_result(L, st, res, opt, out);
  MTL_CHECK(L, st);
  for (int j = 0; j < n; j++) {
    mt_tensor *col = NULL;
    mt_status st = x->ndim ? mt_select(res, 1, j, &col) : mt_full(res->shape, 1, mt_sint(1), MT_INT64, mt_cpu(), &col);
    if (st) mtl_fail(L, st, res, NULL, NULL, NULL);
    mtl_push_tensor(L, col);
  }
  mt_release(res);
  return n;
}
static int l_nonzero(lua_State *L) { return nonzero_impl(L, "nonzero", 1); }
static int l_argwhere(lua_State *L) { return nonzero_impl(L, "argwhere", 0); }

/* ---- scatters ---- */

static mt_reduce reduce_arg(lua_State *L, int pos, int last, int opt, const char *op) {
  mtl_getarg(L, pos, last, opt, "reduce");
  mt_reduce r = MT_REDUCE_NONE;
  if (!lua_isnil(L, -1)) {
    const char *s = lua_tostring(L, -1);
    if (s && strcmp(s, "add") == 0)
      r = MT_REDUCE_ADD;
    else if (s && strcmp(s, "multiply") == 0)
      r = MT_REDUCE_MUL;
    else
      luaL_error(L, "%s: reduce must be 'add' or 'multiply', got %s", op,
                 s ? lua_pushfstring(L, "'%s'", s) : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return r;
}

/* scatter(x, dim, index, src|value[, reduce]) and scatter_add(x, dim, index, src) */
static int scatter_impl(lua_State *L, int inplace, int add) {
  const char *op = add ? (inplace ? "scatter_add_" : "scatter_add") : (inplace ? "scatter_" : "scatter");
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  int opt = mtl_options_index(L, 4);
  int last = opt ? opt - 1 : lua_gettop(L);
  mtl_getarg(L, 4, last, opt, "src");
  if (lua_isnil(L, -1) && !add) {
    lua_pop(L, 1);
    mtl_getarg(L, 4, last, opt, "value");
  }
  int vi = lua_gettop(L);
  if (lua_isnil(L, vi)) return luaL_error(L, "%s: expected %s as argument #4", op, add ? "src" : "src or value");
  mt_tensor *src = mtl_to_tensor(L, vi);
  mt_scalar v = mt_sint(0);
  if (!src) {
    if (add) tensor_arg(L, vi, op, "src");
    v = scalar_arg(L, vi, op, "value");
  }
  mt_reduce r = add ? MT_REDUCE_ADD : reduce_arg(L, 5, last, opt, op);
  return write_op(L, MT_OP_scatter, x, index, src, dim, v, r, inplace, opt, op);
}
static int l_scatter(lua_State *L) { return scatter_impl(L, 0, 0); }
static int l_scatter_(lua_State *L) { return scatter_impl(L, 1, 0); }
static int l_scatter_add(lua_State *L) { return scatter_impl(L, 0, 1); }
static int l_scatter_add_(lua_State *L) { return scatter_impl(L, 1, 1); }

/* index_add(x, dim, index, source[, alpha]) */
static int index_add_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "index_add_" : "index_add";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  mt_tensor *src = tensor_arg(L, 4, op, "source");
  int opt = mtl_options_index(L, 5);
  mtl_getarg(L, 5, opt ? opt - 1 : lua_gettop(L), opt, "alpha");
  mt_scalar alpha = lua_isnil(L, -1) ? mt_sint(1) : scalar_arg(L, lua_gettop(L), op, "alpha");
  lua_pop(L, 1);
  return write_op(L, MT_OP_index_add, x, index, src, dim, alpha, 0, inplace, opt, op);
}
static int l_index_add(lua_State *L) { return index_add_impl(L, 0); }
static int l_index_add_(lua_State *L) { return index_add_impl(L, 1); }

static int index_copy_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "index_copy_" : "index_copy";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  mt_tensor *src = tensor_arg(L, 4, op, "source");
  int opt = mtl_options_index(L, 5);
  return write_op(L, MT_OP_index_copy, x, index, src, dim, mt_sint(0), 0, inplace, opt, op);
}
static int l_index_copy(lua_State *L) { return index_copy_impl(L, 0); }
static int l_index_copy_(lua_State *L) { return index_copy_impl(L, 1); }

/* The value argument at idx when it is a 0-dim tensor that requires grad
 * (so that masked_fill / index_fill must pass gradients to it), else NULL. */
static mt_tensor *grad_value(lua_State *L, int idx) {
  mt_tensor *t = mtl_to_tensor(L, idx);
  return t && t->ndim == 0 && mtg_grad_enabled() && mtg_requires_grad(t) ? t : NULL;
}

/* x filled with the tensor value where the bool mask (broadcastable to x
 * in place) is true, recorded as where(mask, value, x) so that value gets
 * the gradient of the filled positions; in place the result is copied into
 * x. Returns x (in place) or the new tensor. */
static int fill_where(lua_State *L, mt_tensor *x, const mt_tensor *mask, mt_tensor *value, int inplace, int opt,
                      const char *op) {
  if (mtl_opt_out(L, opt))
    luaL_error(L, "%s: out= cannot be used when an input requires grad (the result would have no history); drop "
                  "out= or use torch.no_grad()", op);
  int64_t sh[MT_MAXDIM];
  int nd;
  MTL_CHECK(L, mt_broadcast_shape(op, x->shape, x->ndim, mask->shape, mask->ndim, sh, &nd));
  if (inplace && (nd != x->ndim || memcmp(sh, x->shape, (size_t)nd * sizeof *sh) != 0)) {
    char a[128], b[128];
    luaL_error(L, "%s: mask of shape %s cannot be broadcast to shape %s", op,
               mt_shape_str(mask->shape, mask->ndim, a, sizeof a), mt_shape_str(x->shape, x->ndim, b, sizeof b));
  }
  mt_tensor *w = NULL, *r = NULL;
  mt_status st = mtg_where(mask, value, x, &w);
  if (!st) st = mtg_to_dtype(w, (mt_dtype)x->dtype, false, &r);
  mt_release(w);
  if (!st && inplace) st = mtg_copy_(x, r);
  if (st) mtl_fail(L, st, r, NULL, NULL, NULL);
  if (inplace) {
    mt_release(r);
    lua_settop(L, 1);
    return 1;
  }
  mtl_push_tensor(L, r);
  return 1;
}

static int index_fill_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "index_fill_" : "index_fill";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  int dim = dim_arg(L, 2, x, op);
  mt_tensor *index = tensor_arg(L, 3, op, "index");
  mt_scalar v = scalar_arg(L, 4, op, "value");
  int opt = mtl_options_index(L, 5);
  mt_tensor *gv = grad_value(L, 4);
  if (gv) { /* the filled positions as a mask (the engine checks the index) */
    mt_tensor *m = NULL;
    mt_status st = mt_zeros(x->shape, x->ndim, MT_BOOL, mt_tdevice(x), &m);
    if (!st) st = mt_index_fill_(m, dim, index, mt_sbool(true));
    if (st) mtl_fail(L, st, m, NULL, NULL, NULL);
    mtl_push_tensor(L, m); /* owned by the stack from here on */
    return fill_where(L, x, m, gv, inplace, opt, op);
  }
  return write_op(L, MT_OP_index_fill, x, index, NULL, dim, v, 0, inplace, opt, op);
}
static int l_index_fill(lua_State *L) { return index_fill_impl(L, 0); }
static int l_index_fill_(lua_State *L) { return index_fill_impl(L, 1); }

/* masked_fill(x, mask, value): the functional form broadcasts x and mask. */
static int masked_fill_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "masked_fill_" : "masked_fill";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  mt_tensor *mask = tensor_arg(L, 2, op, "mask");
  mt_scalar v = scalar_arg(L, 3, op, "value");
  int opt = mtl_options_index(L, 4);
  mt_tensor *gv = grad_value(L, 3);
  if (gv) {
    if (mask->dtype != MT_BOOL) /* the engine's message */
      MTL_CHECK(L, mt_fail(MT_EDTYPE, "masked_fill: mask must be a bool tensor, got %s",
                           mt_dtype_name((mt_dtype)mask->dtype)));
    return fill_where(L, x, mask, gv, inplace, opt, op);
  }
  if (inplace) return write_op(L, MT_OP_masked_fill, x, mask, NULL, 0, v, 0, 1, opt, op);
  mt_tensor *out = mtl_opt_out(L, opt);
  int64_t sh[MT_MAXDIM];
  int nd;
  MTL_CHECK(L, mt_broadcast_shape(op, x->shape, x->ndim, mask->shape, mask->ndim, sh, &nd));
  mt_tensor *xe = NULL, *t = NULL;
  if (out && mtg_grad_enabled() && (mtg_requires_grad(x) || mtg_requires_grad(out)))
    luaL_error(L, "%s: out= cannot be used when an input requires grad (the result would have no history); drop "
                  "out= or use torch.no_grad()", op);
  MTL_CHECK(L, mtg_expand(x, sh, nd, &xe));
  mt_status st = MT_OK;
  if (out) {
    if (!same_shape(out, xe) || out->dtype != x->dtype) {
      char a[128], b[128];
      st = mt_fail(MT_ESHAPE, "%s: output of shape %s and dtype %s cannot hold the result of shape %s and dtype %s", op,
                   mt_shape_str(out->shape, out->ndim, a, sizeof a), mt_dtype_name((mt_dtype)out->dtype),
                   mt_shape_str(xe->shape, xe->ndim, b, sizeof b), mt_dtype_name((mt_dtype)x->dtype));
    } else if (out != x) {
      st = mt_copy_(out, xe);
    }
    t = mt_retain(out);
  }
  if (!st) st = mtg_index_op(MT_OP_masked_fill, t ? t : xe, mask, NULL, 0, v, 0, &t);
  mt_release(xe);
  return finish_write(L, st, t, 0, opt);
}
static int l_masked_fill(lua_State *L) { return masked_fill_impl(L, 0); }
static int l_masked_fill_(lua_State *L) { return masked_fill_impl(L, 1); }

static int masked_scatter_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "masked_scatter_" : "masked_scatter";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  mt_tensor *mask = tensor_arg(L, 2, op, "mask");
  mt_tensor *src = tensor_arg(L, 3, op, "source");
  int opt = mtl_options_index(L, 4);
  return write_op(L, MT_OP_masked_scatter, x, mask, src, 0, mt_sint(0), 0, inplace, opt, op);
}
static int l_masked_scatter(lua_State *L) { return masked_scatter_impl(L, 0); }
static int l_masked_scatter_(lua_State *L) { return masked_scatter_impl(L, 1); }

/* put(x, index, source[, accumulate]) */
static int put_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "put_" : "put";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  mt_tensor *index = tensor_arg(L, 2, op, "index");
  mt_tensor *src = tensor_arg(L, 3, op, "source");
  int opt = mtl_options_index(L, 4);
  int acc = mtl_opt_bool(L, 4, opt ? opt - 1 : lua_gettop(L), opt, "accumulate", 0);
  return write_op(L, MT_OP_put, x, index, src, 0, mt_sint(0), acc, inplace, opt, op);
}
static int l_put(lua_State *L) { return put_impl(L, 0); }
static int l_put_(lua_State *L) { return put_impl(L, 1); }

/* index_put(x, indices, values[, accumulate]): indices is a table key as in
 * x[key] (tensors, integers, ranges); values a tensor or a number. */
static int index_put_impl(lua_State *L, int inplace) {
  const char *op = inplace ? "index_put_" : "index_put";
  mt_tensor *x = mtl_check_tensor(L, 1, op);
  if (lua_type(L, 2) != LUA_TTABLE || mtl_to_tensor(L, 2))
    return luaL_error(L, "%s: indices must be a table of index tensors, got %s", op, luaL_typename(L, 2));
  entry e[MAX_ENTRIES];
  int n = parse_key(L, 2, x, e, op);
  keys_to_device(L, x, e, n);
  mt_scalar s = mt_sint(0);
  mt_tensor *v = check_value(L, 3, &s, op);
  int opt = mtl_options_index(L, 4);
  int acc = mtl_opt_bool(L, 4, opt ? opt - 1 : lua_gettop(L), opt, "accumulate", 0);
  mt_tensor *t = inplace ? x : target_of(L, x, v, opt, op);
  return finish_write(L, write_key(t, e, n, v, s, acc, op), t, inplace, opt);
}
static int l_index_put(lua_State *L) { return index_put_impl(L, 0); }
static int l_index_put_(lua_State *L) { return index_put_impl(L, 1); }

static const mtl_reg regs[] = {
    {"index_select", l_index_select, MTL_BOTH,
     "torch.index_select(x, dim, index[, {out=}]) -- the slices of x along dim at the 1-based positions in index",
     "out"},
    {"gather", l_gather, MTL_BOTH,
     "torch.gather(x, dim, index[, {out=}]) -- out[i][j] = x[i][index[i][j]] along dim (index 1-based, same rank)",
     "out"},
    {"take", l_take, MTL_BOTH,
     "torch.take(x, index[, {out=}]) -- elements of x at flat 1-based positions, shaped like index", "out"},
    {"masked_select", l_masked_select, MTL_BOTH,
     "torch.masked_select(x, mask[, {out=}]) -- 1-D tensor of the elements where the bool mask is true", "out"},
    {"nonzero", l_nonzero, MTL_BOTH,
     "torch.nonzero(x[, {as_tuple=false}]) -- n x ndim int64 1-based positions of non-zero elements (as_tuple: one "
     "tensor per dim)", "as_tuple out"},
    {"argwhere", l_argwhere, MTL_BOTH, "torch.argwhere(x) -- n x ndim int64 1-based positions of non-zero elements",
     "out"},
    {"scatter", l_scatter, MTL_BOTH,
     "torch.scatter(x, dim, index, src|value[, {reduce='add'|'multiply'}]) -- copy of x with x[i][index[i][j]] = "
     "src[i][j]", "src value reduce out"},
    {"scatter_", l_scatter_, MTL_METHOD, "x:scatter_(dim, index, src|value[, {reduce=}]) -- scatter in place",
     "src value reduce"},
    {"scatter_add", l_scatter_add, MTL_BOTH,
     "torch.scatter_add(x, dim, index, src) -- copy of x with src added at x[i][index[i][j]]", "src value reduce out"},
    {"scatter_add_", l_scatter_add_, MTL_METHOD, "x:scatter_add_(dim, index, src) -- scatter_add in place",
     "src value reduce"},
    {"index_add", l_index_add, MTL_BOTH,
     "torch.index_add(x, dim, index, source[, {alpha=1}]) -- copy of x with alpha * source's slices added at index",
     "alpha out"},
    {"index_add_", l_index_add_, MTL_METHOD, "x:index_add_(dim, index, source[, {alpha=1}]) -- index_add in place",
     "alpha"},
    {"index_copy", l_index_copy, MTL_BOTH,
     "torch.index_copy(x, dim, index, source) -- copy of x with source's slices written at index along dim", "out"},
    {"index_copy_", l_index_copy_, MTL_METHOD, "x:index_copy_(dim, index, source) -- index_copy in place"},
    {"index_fill", l_index_fill, MTL_BOTH,
     "torch.index_fill(x, dim, index, value) -- copy of x with the slices at index along dim set to value", "out"},
    {"index_fill_", l_index_fill_, MTL_METHOD, "x:index_fill_(dim, index, value) -- index_fill in place"},
    {"masked_fill", l_masked_fill, MTL_BOTH,
     "torch.masked_fill(x, mask, value) -- copy of x with value where the bool mask is true (broadcasting)", "out"},
    {"masked_fill_", l_masked_fill_, MTL_METHOD, "x:masked_fill_(mask, value) -- masked_fill in place"},
    {"masked_scatter", l_masked_scatter, MTL_BOTH,
     "torch.masked_scatter(x, mask, source) -- copy of x with source's elements, in order, where mask is true", "out"},
    {"masked_scatter_", l_masked_scatter_, MTL_METHOD, "x:masked_scatter_(mask, source) -- masked_scatter in place"},
    {"put", l_put, MTL_BOTH,
     "torch.put(x, index, source[, accumulate=false]) -- copy of x with source written at flat 1-based positions",
     "accumulate out"},
    {"put_", l_put_, MTL_METHOD, "x:put_(index, source[, accumulate=false]) -- put in place", "accumulate"},
    {"index_put", l_index_put, MTL_BOTH,
     "torch.index_put(x, indices, values[, accumulate=false]) -- copy of x with x[indices] = values (or +=)",
     "accumulate out"},
    {"index_put_", l_index_put_, MTL_METHOD, "x:index_put_(indices, values[, accumulate=false]) -- index_put in place",
     "accumulate"},
    {NULL, NULL, 0, NULL}};

void mtl_open_index(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
