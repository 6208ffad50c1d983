/* l_shape.c -- Lua bindings of the shape and movement ops: views (view,
 * reshape, permute, squeeze, narrow, select, ...), cat/stack, flip, roll,
 * tril/triu, diag, repeat/tile, split/chunk. Converts 1-based Lua dims and
 * indices to the engine's 0-based ones; the work is done in tensor/. Ops that
 * give a data-dependent number of pieces (split, chunk, unbind) return a Lua
 * sequence; ops with one result per input (meshgrid, atleast_1d, ...) return
 * multiple values. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"
#include "shape.h"

/* ---- argument helpers ---- */

static int last_pos(lua_State *L, int opt) { return opt ? opt - 1 : lua_gettop(L); }

static lua_Integer check_int(lua_State *L, int idx, const char *op, const char *what) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "%s: %s must be an integer, got %s", op, what,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return v;
}

/* Optional integer argument `name` (positional at pos or in the options). */
static lua_Integer opt_int(lua_State *L, int pos, int last, int opt, const char *name, lua_Integer dflt,
                           const char *op) {
  mtl_getarg(L, pos, last, opt, name);
  lua_Integer v = lua_isnil(L, -1) ? dflt : check_int(L, -1, op, name);
  lua_pop(L, 1);
  return v;
}

/* A 1-based Lua dim for an engine function that wraps dims itself:
 * d > 0 -> d - 1, negative unchanged, 0 rejected. */
static int64_t raw_dim(lua_State *L, lua_Integer d, const char *op) {
  if (d == 0) luaL_error(L, "%s: dimension 0 is invalid (dimensions count from 1; negative ones from the end)", op);
  return d > 0 ? d - 1 : d;
}

/* A 1-based dim where a new dim may be inserted (1..ndim+1, or negative). */
static int insert_dim(lua_State *L, lua_Integer d, int ndim, const char *op) {
  int n = ndim + 1;
  if (d == 0 || d > n || d < -n)
    luaL_error(L, "%s: dimension %I out of range (tensor has %d dimension%s; use 1..%d or -%d..-1)", op, d, ndim,
               ndim == 1 ? "" : "s", n, n);
  return (int)(d > 0 ? d - 1 : d + n);
}

/* Integers from a table at idx, or from varargs idx..last; returns count. */
static int int_list(lua_State *L, int idx, int last, int64_t *v, int max, const char *op, const char *what) {
  int n = 0;
  if (idx <= last && lua_type(L, idx) == LUA_TTABLE) {
    n = (int)lua_rawlen(L, idx);
    if (n > max) luaL_error(L, "%s: at most %d %s, got %d", op, max, what, n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, idx, i + 1);
      v[i] = check_int(L, -1, op, what);
      lua_pop(L, 1);
    }
    return n;
  }
  for (int i = idx; i <= last; i++) {
    if (n >= max) luaL_error(L, "%s: at most %d %s, got %d", op, max, what, last - idx + 1);
    v[n++] = check_int(L, i, op, what);
  }
  return n;
}

/* Like int_list, converting 1-based dims of a rank-ndim tensor to 0-based. */
static int dim_list(lua_State *L, int idx, int last, int ndim, int *dims, const char *op) {
  int64_t v[MT_MAXDIM];
  int n = int_list(L, idx, last, v, MT_MAXDIM, op, "dims");
  for (int i = 0; i < n; i++) dims[i] = mtl_dim(L, v[i], ndim, op);
  return n;
}

/* The tensors of the sequence at idx (or, if varargs, of idx..last) as a
 * borrowed array kept in a userdata pushed on the stack. */
static mt_tensor **tensor_list(lua_State *L, int idx, int last, int varargs, const char *op, int *n) {
  int table = lua_type(L, idx) == LUA_TTABLE;
  if (!table && !varargs)
    luaL_error(L, "%s: expected a table of tensors as argument #1, got %s", op,
               mtl_to_tensor(L, idx) ? "a tensor (write {a, b})" : luaL_typename(L, idx));
  int cnt = table ? (int)lua_rawlen(L, idx) : last - idx + 1;
  if (cnt < 0) cnt = 0;
  mt_tensor **ts = lua_newuserdatauv(L, (size_t)(cnt ? cnt : 1) * sizeof *ts, 0);
  for (int i = 0; i < cnt; i++) {
    if (table) {
      lua_rawgeti(L, idx, i + 1);
      ts[i] = mtl_to_tensor(L, -1);
      if (!ts[i])
        luaL_error(L, "%s: expected a tensor at position %d of the list, got %s", op, i + 1, luaL_typename(L, -1));
      lua_pop(L, 1);
    } else {
      ts[i] = mtl_to_tensor(L, idx + i);
      if (!ts[i])
        luaL_error(L, "%s: expected a tensor as argument #%d, got %s", op, idx + i, luaL_typename(L, idx + i));
    }
  }
  *n = cnt;
  return ts;
}

/* Returns the result: the out= tensor when one was given, else res. */
static int push_out(lua_State *L, mt_tensor *res, mt_tensor *given, int opt) {
  if (given) {
    lua_getfield(L, opt, "out");
    return 1;
  }
  mtl_push_tensor(L, res);
  return 1;
}

/* Pushes *res once st is known to be MT_OK (res is read after the call
 * that fills it has run: C leaves argument evaluation order open). */
static int push_view(lua_State *L, mt_status st, mt_tensor **res) {
  MTL_CHECK(L, st);
  mtl_push_tensor(L, *res);
  return 1;
}

/* ---- views ---- */

static int view_impl(lua_State *L, const char *op, int copy_ok) {
  mt_tensor *t = mtl_check_tensor(L, 1, op), *o = NULL;
  if (lua_type(L, 2) == LUA_TTABLE && luaL_getmetafield(L, 2, "__name") != LUA_TNIL) {
    if (strcmp(lua_tostring(L, -1), "torch.dtype") == 0)
      luaL_error(L, "%s: viewing a tensor as another dtype is not supported; use x:to(dtype)", op);
    lua_pop(L, 1);
  }
  int64_t shape[MT_MAXDIM];
  int n = mtl_shape(L, 2, lua_gettop(L), shape, op);
  return push_view(L, copy_ok ? mtg_reshape(t, shape, n, &o) : mtg_view(t, shape, n, &o), &o);
}
static int l_view(lua_State *L) { return view_impl(L, "view", 0); }
static int l_reshape(lua_State *L) { return view_impl(L, "reshape", 1); }

static int as_impl(lua_State *L, const char *op, int copy_ok) {
  mt_tensor *t = mtl_check_tensor(L, 1, op), *other = mtl_check_tensor(L, 2, op), *o = NULL;
  mt_status st = copy_ok ? mtg_reshape(t, other->shape, other->ndim, &o) : mtg_view(t, other->shape, other->ndim, &o);
  return push_view(L, st, &o);
}
static int l_view_as(lua_State *L) { return as_impl(L, "view_as", 0); }
static int l_reshape_as(lua_State *L) { return as_impl(L, "reshape_as", 1); }

static int l_flatten(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "flatten"), *o = NULL;
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt);
  int s = mtl_dim(L, opt_int(L, 2, last, opt, "start_dim", 1, "flatten"), t->ndim, "flatten");
  int e = mtl_dim(L, opt_int(L, 3, last, opt, "end_dim", -1, "flatten"), t->ndim, "flatten");
  return push_view(L, mtg_flatten(t, s, e, &o), &o);
}

static int l_ravel(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "ravel"), *o = NULL;
  int64_t n = mt_numel(t);
  return push_view(L, mtg_reshape(t, &n, 1, &o), &o);
}

static int l_unflatten(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "unflatten"), *o = NULL;
  int d = mtl_dim(L, check_int(L, 2, "unflatten", "dim"), t->ndim, "unflatten");
  int64_t sizes[MT_MAXDIM];
  if (lua_isnone(L, 3)) luaL_error(L, "unflatten: expected sizes (a table of integers) as argument #3");
  int n = int_list(L, 3, lua_gettop(L), sizes, MT_MAXDIM, "unflatten", "sizes");
  return push_view(L, mtg_unflatten(t, d, sizes, n, &o), &o);
}

static int l_squeeze(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "squeeze"), *o = NULL;
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt);
  mtl_getarg(L, 2, last, opt, "dim");
  if (lua_isnil(L, -1)) return push_view(L, mtg_squeeze(t, -1, &o), &o);
  int dims[MT_MAXDIM], idx = lua_gettop(L);
  int n = dim_list(L, idx, idx, t->ndim, dims, "squeeze");
  return push_view(L, mtg_squeeze_dims(t, dims, n, &o), &o);
}

static int l_unsqueeze(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "unsqueeze"), *o = NULL;
  int opt = mtl_options_index(L, 2);
  mtl_getarg(L, 2, last_pos(L, opt), opt, "dim");
  if (lua_isnil(L, -1)) luaL_error(L, "unsqueeze: expected a dimension as argument #2");
  int d = insert_dim(L, check_int(L, -1, "unsqueeze", "dim"), t->ndim, "unsqueeze");
  return push_view(L, mtg_unsqueeze(t, d, &o), &o);
}

static int l_permute(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "permute"), *o = NULL;
  int dims[MT_MAXDIM];
  int n = dim_list(L, 2, lua_gettop(L), t->ndim, dims, "permute");
  return push_view(L, mtg_permute(t, dims, n, &o), &o);
}

static int l_transpose(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "transpose"), *o = NULL;
  int d0 = mtl_dim(L, check_int(L, 2, "transpose", "dim0"), t->ndim, "transpose");
  int d1 = mtl_dim(L, check_int(L, 3, "transpose", "dim1"), t->ndim, "transpose");
  return push_view(L, mtg_transpose(t, d0, d1, &o), &o);
}

static int l_t(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "t"), *o = NULL;
  if (t->ndim > 2) {
    char b[128];
    luaL_error(L, "t: expects a tensor with at most 2 dimensions, got shape %s; use transpose or permute",
               mt_shape_str(t->shape, t->ndim, b, sizeof b));
  }
  return push_view(L, mtg_transpose(t, 0, t->ndim == 2 ? 1 : 0, &o), &o);
}

static int l_movedim(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "movedim"), *o = NULL;
  int src[MT_MAXDIM], dst[MT_MAXDIM];
  if (lua_isnoneornil(L, 2) || lua_isnoneornil(L, 3))
    luaL_error(L, "movedim: expected source and destination dims (numbers or tables)");
  int ns = dim_list(L, 2, 2, t->ndim, src, "movedim");
  int nd = dim_list(L, 3, 3, t->ndim, dst, "movedim");
  if (ns != nd)
    luaL_error(L, "movedim: source and destination must have the same number of dims, got %d and %d", ns, nd);
  return push_view(L, mtg_movedim(t, src, dst, ns, &o), &o);
}

static int l_expand(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "expand"), *o = NULL;
  int64_t shape[MT_MAXDIM];
  int n = mtl_shape(L, 2, lua_gettop(L), shape, "expand");
  return push_view(L, mtg_expand(t, shape, n, &o), &o);
}

static int l_expand_as(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "expand_as"), *other = mtl_check_tensor(L, 2, "expand_as"), *o = NULL;
  return push_view(L, mtg_expand(t, other->shape, other->ndim, &o), &o);
}

static int l_broadcast_to(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "broadcast_to"), *o = NULL;
  int64_t shape[MT_MAXDIM];
  int n = mtl_shape(L, 2, lua_gettop(L), shape, "broadcast_to");
  return push_view(L, mtg_broadcast_to(t, shape, n, &o), &o);
}

/* torch.broadcast_tensors(a, b, ...) or ({a, b, ...}) -> one value each */
static int l_broadcast_tensors(lua_State *L) {
  int n, top = lua_gettop(L);
  mt_tensor **ts = tensor_list(L, 1, top, 1, "broadcast_tensors", &n);
  int64_t shape[MT_MAXDIM];
  int nd = 0;
  for (int i = 0; i < n; i++)
    MTL_CHECK(L, mt_broadcast_shape("broadcast_tensors", shape, nd, ts[i]->shape, ts[i]->ndim, shape, &nd));
  luaL_checkstack(L, n, "broadcast_tensors: too many tensors");
  for (int i = 0; i < n; i++) {
    mt_tensor *o = NULL;
    push_view(L, mtg_expand(ts[i], shape, nd, &o), &o);
  }
  return n;
}

/* x:repeat(counts) (tile: counts padded to x's rank, a composite) */
static int repeat_impl(lua_State *L, const char *op, int tile) {
  const mt_tensor *t = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  mt_args a = {0};
  int n = mtl_shape(L, 2, last_pos(L, opt), &a.i[1], op);
  a.i[0] = n;
  a.ni = 1 + n;
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  MTL_CHECK(L, tile ? mtg_tile(t, &a.i[1], n, &res) : mtg_call(MT_OP_repeat, &t, 1, &a, &res, 1));
  return push_out(L, res, given, opt);
}
static int l_tile(lua_State *L) { return repeat_impl(L, "tile", 1); }
static int l_repeat(lua_State *L) { return repeat_impl(L, "repeat", 0); }

static int l_narrow(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "narrow"), *o = NULL;
  int d = mtl_dim(L, check_int(L, 2, "narrow", "dim"), t->ndim, "narrow");
  lua_Integer start = check_int(L, 3, "narrow", "start"), len = check_int(L, 4, "narrow", "length");
  int64_t size = t->ndim ? t->shape[d] : 1;
  if (start == 0) luaL_error(L, "narrow: start 0 is invalid (starts are 1-based; negative ones count from the end)");
  if (start < -size || start > size + 1)
    luaL_error(L, "narrow: start %I out of range for dimension %d of size %I", start, d + 1, (lua_Integer)size);
  if (len < 0 || len > size)
    luaL_error(L, "narrow: length %I out of range for dimension %d of size %I", len, d + 1, (lua_Integer)size);
  return push_view(L, mtg_narrow(t, d, start > 0 ? start - 1 : start + size, len, &o), &o);
}

static int l_select(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "select"), *o = NULL;
  int d = mtl_dim(L, check_int(L, 2, "select", "dim"), t->ndim, "select");
  lua_Integer i = check_int(L, 3, "select", "index");
  if (i == 0) luaL_error(L, "select: index 0 is invalid (indices are 1-based; negative ones count from the end)");
  return push_view(L, mtg_select(t, d, i > 0 ? i - 1 : i, &o), &o);
}

static int l_unfold(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "unfold"), *o = NULL;
  int d = mtl_dim(L, check_int(L, 2, "unfold", "dimension"), t->ndim, "unfold");
  lua_Integer size = check_int(L, 3, "unfold", "size"), step = check_int(L, 4, "unfold", "step");
  return push_view(L, mtg_unfold(t, d, size, step, &o), &o);
}

/* ---- pieces: split, chunk, tensor_split, unbind (Lua sequences) ---- */

/* Appends t[start:start+len] along d to the table at the top. */
static void add_piece(lua_State *L, const mt_tensor *t, int d, int64_t start, int64_t len) {
  mt_tensor *o = NULL;
  MTL_CHECK(L, mtg_slice(t, d, start, start + len, 1, &o));
  mtl_push_tensor(L, o);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

/* The tensor and its 0-based split dim (argument dim_pos, default 1). */
static mt_tensor *split_args(lua_State *L, const char *op, int dim_pos, int *d) {
  mt_tensor *t = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, dim_pos);
  if (t->ndim == 0) luaL_error(L, "%s: expects a tensor with at least 1 dimension, got a 0-dim one", op);
  *d = mtl_dim(L, opt_int(L, dim_pos, last_pos(L, opt), opt, "dim", 1, op), t->ndim, op);
  return t;
}

/* Pieces of size `each` (the last one smaller); at least one piece. */
static void split_even(lua_State *L, const mt_tensor *t, int d, int64_t each, const char *op) {
  int64_t size = t->shape[d];
  if (each < 0) luaL_error(L, "%s: split size must be non-negative, got %I", op, (lua_Integer)each);
  if (each == 0 && size != 0)
    luaL_error(L, "%s: split size can only be 0 if the dimension size is 0, but dimension %d has size %I", op, d + 1,
               (lua_Integer)size);
  int64_t n = each ? size / each + (size % each != 0) : 1;
  if (n < 1) n = 1;
  lua_createtable(L, n < 1 << 20 ? (int)n : 0, 0);
  for (int64_t i = 0; i < n; i++) add_piece(L, t, d, i * each, i < n - 1 ? each : size - i * each);
}

static int l_split(lua_State *L) {
  int d;
  mt_tensor *t = split_args(L, "split", 3, &d);
  int64_t size = t->shape[d];
  if (lua_type(L, 2) == LUA_TNUMBER) {
    split_even(L, t, d, check_int(L, 2, "split", "split_size"), "split");
    return 1;
  }
  if (lua_type(L, 2) != LUA_TTABLE)
    luaL_error(L, "split: expected a size or a table of sizes as argument #2, got %s", luaL_typename(L, 2));
  int n = (int)lua_rawlen(L, 2);
  int64_t sum = 0; /* capped at size + 1: no overflow */
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    lua_Integer s = check_int(L, -1, "split", "split sizes");
    lua_pop(L, 1);
    if (s < 0) luaL_error(L, "split: split sizes must be non-negative, got %I at position %d", s, i);
    sum = s > size - sum ? size + 1 : sum + s;
  }
  if (sum != size)
    luaL_error(L, "split: split sizes add up to %s%I but dimension %d has size %I", sum > size ? "more than " : "",
               (lua_Integer)(sum > size ? size : sum), d + 1, (lua_Integer)size);
  lua_createtable(L, n, 0);
  int64_t off = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    int64_t s = lua_tointeger(L, -1);
    lua_pop(L, 1);
    add_piece(L, t, d, off, s);
    off += s;
  }
  return 1;
}

static int l_chunk(lua_State *L) {
  int d;
  mt_tensor *t = split_args(L, "chunk", 3, &d);
  lua_Integer chunks = check_int(L, 2, "chunk", "chunks");
  if (chunks <= 0) luaL_error(L, "chunk: number of chunks must be positive, got %I", chunks);
  int64_t size = t->shape[d], each = size / chunks + (size % chunks != 0);
  if (size == 0) { /* PyTorch gives `chunks` empty pieces */
    lua_createtable(L, 0, 0);
    for (lua_Integer i = 0; i < chunks && i < (1 << 20); i++) add_piece(L, t, d, 0, 0);
    return 1;
  }
  split_even(L, t, d, each, "chunk");
  return 1;
}

/* Python slice [a, b) clamped into 0..size (negatives from the end). */
static int64_t clamp_index(int64_t i, int64_t size) {
  if (i < 0) i += size;
  return i < 0 ? 0 : i > size ? size : i;
}

static int l_tensor_split(lua_State *L) {
  int d;
  mt_tensor *t = split_args(L, "tensor_split", 3, &d);
  int64_t size = t->shape[d];
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_Integer n = check_int(L, 2, "tensor_split", "sections");
    if (n <= 0) luaL_error(L, "tensor_split: number of sections must be positive, got %I", n);
    int64_t base = size / n, extra = size % n, off = 0;
    lua_createtable(L, n < (1 << 20) ? (int)n : 0, 0);
    for (int64_t i = 0; i < n; i++) {
      int64_t len = base + (i < extra);
      add_piece(L, t, d, off, len);
      off += len;
    }
    return 1;
  }
  if (lua_type(L, 2) != LUA_TTABLE)
    luaL_error(L, "tensor_split: expected a number of sections or a table of indices as argument #2, got %s",
               luaL_typename(L, 2));
  int n = (int)lua_rawlen(L, 2);
  lua_createtable(L, n + 1, 0);
  int64_t start = 0;
  for (int i = 1; i <= n + 1; i++) {
    int64_t end = size;
    if (i <= n) {
      lua_rawgeti(L, 2, i);
      lua_Integer k = check_int(L, -1, "tensor_split", "indices");
      lua_pop(L, 1);
      if (k == 0)
        luaL_error(L, "tensor_split: index 0 is invalid (indices are 1-based; negative ones count from the end)");
      end = clamp_index(k > 0 ? k - 1 : k, size);
    }
    add_piece(L, t, d, start, end > start ? end - start : 0);
    start = end; /* as PyTorch: a smaller index gives an empty piece, then restarts there */
  }
  return 1;
}

static int l_unbind(lua_State *L) {
  int d;
  mt_tensor *t = split_args(L, "unbind", 2, &d);
  int64_t n = t->shape[d];
  mt_tensor **o = n ? calloc((size_t)n, sizeof *o) : NULL;
  if (n && !o) luaL_error(L, "unbind: out of memory");
  mt_status st = mtg_unbind(t, d, o);
  if (st) {
    free(o);
    MTL_CHECK(L, st);
  }
  lua_createtable(L, n < (1 << 20) ? (int)n : 0, 0);
  for (int64_t i = 0; i < n; i++) { /* each push takes its reference; on a Lua error the rest leak */
    mtl_push_tensor(L, o[i]);
    o[i] = NULL;
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  free(o);
  return 1;
}

/* ---- cat and friends ---- */

/* torch.cat(tensors[, dim=1][, {out=}]) also written torch.cat{a, b, dim=2} */
static int cat_impl(lua_State *L, const char *op, int stack) {
  int opt = mtl_options_index(L, 2);
  if (!opt && mtl_is_options(L, 1)) opt = 1;
  int last = last_pos(L, opt), n;
  lua_Integer dim = opt_int(L, 2, last, opt, "dim", 1, op);
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  mt_tensor **ts = tensor_list(L, 1, 0, 0, op, &n);
  if (n == 0) luaL_error(L, "%s: expected a non-empty table of tensors", op);
  int64_t d = raw_dim(L, dim, op);
  MTL_CHECK(L, mtg_join(stack ? MT_OP_stack : MT_OP_cat, ts, n, d, &res));
  return push_out(L, res, given, opt);
}
static int l_cat(lua_State *L) { return cat_impl(L, "cat", 0); }
static int l_concat(lua_State *L) { return cat_impl(L, "concat", 0); }
static int l_stack(lua_State *L) { return cat_impl(L, "stack", 1); }

static int xstack_impl(lua_State *L, const char *op, mt_status (*fn)(mt_tensor *const *, int, mt_tensor **)) {
  int opt = mtl_options_index(L, 2), n;
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  mt_tensor **ts = tensor_list(L, 1, 0, 0, op, &n);
  if (n == 0) luaL_error(L, "%s: expected a non-empty table of tensors", op);
  MTL_CHECK(L, fn(ts, n, &res));
  return push_out(L, res, given, opt);
}
static int l_hstack(lua_State *L) { return xstack_impl(L, "hstack", mtg_hstack); }
static int l_vstack(lua_State *L) { return xstack_impl(L, "vstack", mtg_vstack); }
static int l_dstack(lua_State *L) { return xstack_impl(L, "dstack", mtg_dstack); }

/* ---- flip, roll, rot90 ---- */

static int flip_dims(lua_State *L, const char *op, const int *dims, int n) {
  const mt_tensor *t = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  mt_args a = {.i = {n}, .ni = 1 + n};
  for (int j = 0; j < n && j < MT_NARGI - 1; j++) a.i[1 + j] = dims[j];
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  MTL_CHECK(L, mtg_call(MT_OP_flip, &t, 1, &a, &res, 1));
  return push_out(L, res, given, opt);
}

static int l_flip(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "flip");
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt), dims[MT_MAXDIM];
  if (last < 2 && !opt) luaL_error(L, "flip: expected dims (a number or a table of dimensions) as argument #2");
  int n;
  if (last >= 2) {
    n = dim_list(L, 2, last, t->ndim, dims, "flip");
  } else {
    mtl_optfield(L, opt, "dims");
    if (lua_isnil(L, -1)) luaL_error(L, "flip: expected dims (a number or a table of dimensions)");
    int idx = lua_gettop(L);
    n = dim_list(L, idx, idx, t->ndim, dims, "flip");
  }
  return flip_dims(L, "flip", dims, n);
}

static int l_fliplr(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "fliplr");
  if (t->ndim < 2) luaL_error(L, "fliplr: expected a tensor with at least 2 dimensions, got %d", t->ndim);
  int d = 1;
  return flip_dims(L, "fliplr", &d, 1);
}

static int l_flipud(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "flipud");
  if (t->ndim < 1) luaL_error(L, "flipud: expected a tensor with at least 1 dimension, got a 0-dim one");
  int d = 0;
  return flip_dims(L, "flipud", &d, 1);
}

static int l_roll(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "roll");
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt), dims[MT_MAXDIM];
  int64_t shifts[MT_MAXDIM], dv[MT_MAXDIM];
  mtl_getarg(L, 2, last, opt, "shifts");
  if (lua_isnil(L, -1)) luaL_error(L, "roll: expected shifts (a number or a table) as argument #2");
  int top = lua_gettop(L);
  int ns = int_list(L, top, top, shifts, MT_MAXDIM, "roll", "shifts");
  mtl_getarg(L, 3, last, opt, "dims");
  int nd = 0;
  if (!lua_isnil(L, -1)) {
    top = lua_gettop(L);
    nd = int_list(L, top, top, dv, MT_MAXDIM, "roll", "dims");
    if (nd != ns) luaL_error(L, "roll: shifts and dims must have the same length, got %d and %d", ns, nd);
    for (int i = 0; i < nd; i++) dims[i] = mtl_dim(L, dv[i], t->ndim, "roll");
  } else if (ns != 1) {
    luaL_error(L, "roll: without dims, shifts must be a single number (got %d values)", ns);
  }
  mt_args a = {.i = {nd}, .ni = 17};
  for (int j = 0; j < (nd ? nd : 1); j++) {
    a.i[1 + j] = shifts[j];
    a.i[9 + j] = nd ? dims[j] : 0;
  }
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  MTL_CHECK(L, mtg_call(MT_OP_roll, (const mt_tensor *const *)&t, 1, &a, &res, 1));
  return push_out(L, res, given, opt);
}

static int l_rot90(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "rot90");
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt), dims[2] = {0, 1};
  lua_Integer k = opt_int(L, 2, last, opt, "k", 1, "rot90");
  mtl_getarg(L, 3, last, opt, "dims");
  if (!lua_isnil(L, -1)) {
    int64_t v[MT_MAXDIM];
    int top = lua_gettop(L);
    int n = int_list(L, top, top, v, MT_MAXDIM, "rot90", "dims");
    if (n != 2) luaL_error(L, "rot90: dims must hold exactly 2 dimensions, got %d", n);
    dims[0] = mtl_dim(L, v[0], t->ndim, "rot90");
    dims[1] = mtl_dim(L, v[1], t->ndim, "rot90");
  }
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  MTL_CHECK(L, mtg_rot90(t, k, dims[0], dims[1], &res));
  return push_out(L, res, given, opt);
}

/* ---- triangles and diagonals ---- */

static int tri_impl(lua_State *L, const char *op, int upper, int inplace) {
  mt_tensor *t = mtl_check_tensor(L, 1, op);
  int opt = mtl_options_index(L, 2);
  lua_Integer k = opt_int(L, 2, last_pos(L, opt), opt, "diagonal", 0, op);
  mt_tensor *given = inplace ? t : mtl_opt_out(L, opt), *res = given;
  mt_args a = {.i = {k}, .ni = 1};
  MTL_CHECK(L, mtg_call(upper ? MT_OP_triu : MT_OP_tril, (const mt_tensor *const *)&t, 1, &a, &res, 1));
  if (inplace) {
    lua_settop(L, 1);
    return 1;
  }
  return push_out(L, res, given, opt);
}
static int l_tril(lua_State *L) { return tri_impl(L, "tril", 0, 0); }
static int l_triu(lua_State *L) { return tri_impl(L, "triu", 1, 0); }
static int l_tril_(lua_State *L) { return tri_impl(L, "tril_", 0, 1); }
static int l_triu_(lua_State *L) { return tri_impl(L, "triu_", 1, 1); }

static int l_diag(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "diag");
  int opt = mtl_options_index(L, 2);
  lua_Integer k = opt_int(L, 2, last_pos(L, opt), opt, "diagonal", 0, "diag");
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  mt_args a = {.i = {k}, .ni = 1};
  MTL_CHECK(L, mtg_call(MT_OP_diag, (const mt_tensor *const *)&t, 1, &a, &res, 1));
  return push_out(L, res, given, opt);
}

static int l_diagonal(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "diagonal"), *o = NULL;
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt);
  lua_Integer off = opt_int(L, 2, last, opt, "offset", 0, "diagonal");
  if (t->ndim < 2) luaL_error(L, "diagonal: expected a tensor with at least 2 dimensions, got %d", t->ndim);
  int d0 = mtl_dim(L, opt_int(L, 3, last, opt, "dim1", 1, "diagonal"), t->ndim, "diagonal");
  int d1 = mtl_dim(L, opt_int(L, 4, last, opt, "dim2", 2, "diagonal"), t->ndim, "diagonal");
  return push_view(L, mtg_diagonal(t, off, d0, d1, &o), &o);
}

static int l_diag_embed(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "diag_embed");
  int opt = mtl_options_index(L, 2), last = last_pos(L, opt);
  lua_Integer off = opt_int(L, 2, last, opt, "offset", 0, "diag_embed");
  int d0 = insert_dim(L, opt_int(L, 3, last, opt, "dim1", -2, "diag_embed"), t->ndim, "diag_embed");
  int d1 = insert_dim(L, opt_int(L, 4, last, opt, "dim2", -1, "diag_embed"), t->ndim, "diag_embed");
  mt_tensor *given = mtl_opt_out(L, opt), *res = given;
  mt_args a = {.i = {off, d0, d1}, .ni = 3};
  MTL_CHECK(L, mtg_call(MT_OP_diag_embed, (const mt_tensor *const *)&t, 1, &a, &res, 1));
  return push_out(L, res, given, opt);
}

/* ---- one result per input: atleast_nd, meshgrid ---- */

static int atleast_impl(lua_State *L, const char *op, int rank) {
  int n, top = lua_gettop(L);
  mt_tensor **ts = tensor_list(L, 1, top, 1, op, &n);
  if (n == 0) luaL_error(L, "%s: expected at least one tensor", op);
  luaL_checkstack(L, n, op);
  int table = lua_type(L, 1) == LUA_TTABLE;
  for (int i = 0; i < n; i++) {
    mt_tensor *o = NULL;
    if (ts[i]->ndim >= rank) { /* x itself, as in PyTorch */
      if (table)
        lua_rawgeti(L, 1, i + 1);
      else
        lua_pushvalue(L, 1 + i);
      continue;
    }
    push_view(L, mtg_atleast(ts[i], rank, &o), &o);
  }
  return n;
}
static int l_atleast_1d(lua_State *L) { return atleast_impl(L, "atleast_1d", 1); }
static int l_atleast_2d(lua_State *L) { return atleast_impl(L, "atleast_2d", 2); }
static int l_atleast_3d(lua_State *L) { return atleast_impl(L, "atleast_3d", 3); }

static int l_meshgrid(lua_State *L) {
  int opt = mtl_options_index(L, 1), n;
  int last = last_pos(L, opt), xy = 0;
  if (opt) {
    mtl_optfield(L, opt, "indexing");
    const char *s = lua_tostring(L, -1);
    if (s && strcmp(s, "xy") == 0)
      xy = 1;
    else if (s && strcmp(s, "ij") != 0)
      luaL_error(L, "meshgrid: indexing must be 'ij' or 'xy', got '%s'", s);
    else if (!s && !lua_isnil(L, -1))
      luaL_error(L, "meshgrid: indexing must be 'ij' or 'xy', got a %s", luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  mt_tensor **ts = tensor_list(L, 1, last, 1, "meshgrid", &n);
  if (n > MT_MAXDIM) luaL_error(L, "meshgrid: at most %d tensors, got %d", MT_MAXDIM, n);
  mt_tensor *outs[MT_MAXDIM] = {0};
  luaL_checkstack(L, n, "meshgrid");
  MTL_CHECK(L, mtg_meshgrid(ts, n, xy, outs));
  for (int i = 0; i < n; i++) mtl_push_tensor(L, outs[i]);
  return n;
}

static const mtl_reg regs[] = {
    {"view", l_view, MTL_METHOD, "x:view(sizes...) -- a view with a new shape (one size may be -1); no copy"},
    {"view_as", l_view_as, MTL_METHOD, "x:view_as(other) -- x:view(other's shape)"},
    {"reshape", l_reshape, MTL_BOTH, "torch.reshape(x, sizes...) -- a view with a new shape, or a copy if needed"},
    {"reshape_as", l_reshape_as, MTL_METHOD, "x:reshape_as(other) -- x:reshape(other's shape)"},
    {"flatten", l_flatten, MTL_BOTH, "torch.flatten(x[, start_dim=1, end_dim=-1]) -- merge dims start..end into one",
     "start_dim end_dim"},
    {"ravel", l_ravel, MTL_BOTH, "torch.ravel(x) -- x as a 1-D tensor (a view when possible)"},
    {"unflatten", l_unflatten, MTL_BOTH, "torch.unflatten(x, dim, sizes) -- split dim into sizes (one may be -1)"},
    {"squeeze", l_squeeze, MTL_BOTH, "torch.squeeze(x[, dim]) -- drop size-1 dims (all, or dim / a table of dims)",
     "dim"},
    {"unsqueeze", l_unsqueeze, MTL_BOTH, "torch.unsqueeze(x, dim) -- insert a size-1 dim at position dim", "dim"},
    {"permute", l_permute, MTL_BOTH, "torch.permute(x, dims...) -- reorder dims (numbers or one table)"},
    {"transpose", l_transpose, MTL_BOTH, "torch.transpose(x, dim0, dim1) -- swap two dims (a view)"},
    {"swapaxes", l_transpose, MTL_BOTH, "torch.swapaxes(x, dim0, dim1) -- alias of transpose"},
    {"swapdims", l_transpose, MTL_BOTH, "torch.swapdims(x, dim0, dim1) -- alias of transpose"},
    {"t", l_t, MTL_BOTH, "torch.t(x) -- transpose of a tensor with at most 2 dims"},
    {"movedim", l_movedim, MTL_BOTH, "torch.movedim(x, source, destination) -- move dims (numbers or tables)"},
    {"moveaxis", l_movedim, MTL_BOTH, "torch.moveaxis(x, source, destination) -- alias of movedim"},
    {"expand", l_expand, MTL_METHOD, "x:expand(sizes...) -- broadcast view to a larger shape (-1 keeps a size)"},
    {"expand_as", l_expand_as, MTL_METHOD, "x:expand_as(other) -- x:expand(other's shape)"},
    {"broadcast_to", l_broadcast_to, MTL_BOTH, "torch.broadcast_to(x, shape) -- broadcast view of x with shape"},
    {"broadcast_tensors", l_broadcast_tensors, MTL_FN,
     "torch.broadcast_tensors(a, b, ...) -- views broadcast to a common shape, one return value each"},
    {"tile", l_tile, MTL_BOTH,
     "torch.tile(x, reps...) -- repeat x along each dim (numpy rules: fewer reps pad with 1s)", "out"},
    {"repeat", l_repeat, MTL_METHOD,
     "x['repeat'](x, reps...) -- Tensor.repeat: at least x:dim() counts, x padded with leading dims", "out"},
    {"narrow", l_narrow, MTL_BOTH,
     "torch.narrow(x, dim, start, length) -- view of length elements from start (1-based)"},
    {"select", l_select, MTL_BOTH,
     "torch.select(x, dim, index) -- view at index (1-based, negative from the end) of dim"},
    {"unfold", l_unfold, MTL_METHOD,
     "x:unfold(dim, size, step) -- view of all windows of size along dim, as a new last dim"},
    {"split", l_split, MTL_BOTH,
     "torch.split(x, size_or_sizes[, dim=1]) -- a table of views: pieces of size each, or of the listed sizes", "dim"},
    {"chunk", l_chunk, MTL_BOTH, "torch.chunk(x, chunks[, dim=1]) -- a table of at most chunks views of equal size",
     "dim"},
    {"tensor_split", l_tensor_split, MTL_BOTH,
     "torch.tensor_split(x, n_or_indices[, dim=1]) -- a table of views: n near-equal parts, or parts starting at "
     "the given 1-based indices", "dim"},
    {"unbind", l_unbind, MTL_BOTH, "torch.unbind(x[, dim=1]) -- a table of the slices of x along dim", "dim"},
    {"cat", l_cat, MTL_FN, "torch.cat(tensors[, dim=1][, {out=}]) -- concatenate a table of tensors along dim",
     "dim out"},
    {"concat", l_concat, MTL_FN, "torch.concat(tensors[, dim=1]) -- alias of cat", "dim out"},
    {"concatenate", l_concat, MTL_FN, "torch.concatenate(tensors[, dim=1]) -- alias of cat", "dim out"},
    {"stack", l_stack, MTL_FN, "torch.stack(tensors[, dim=1][, {out=}]) -- join same-shape tensors along a new dim",
     "dim out"},
    {"hstack", l_hstack, MTL_FN, "torch.hstack(tensors) -- cat along dim 2 (dim 1 for 1-D tensors)", "out"},
    {"vstack", l_vstack, MTL_FN, "torch.vstack(tensors) -- cat of atleast_2d tensors along dim 1", "out"},
    {"dstack", l_dstack, MTL_FN, "torch.dstack(tensors) -- cat of atleast_3d tensors along dim 3", "out"},
    {"flip", l_flip, MTL_BOTH, "torch.flip(x, dims) -- copy with the order reversed along dims", "dims out"},
    {"fliplr", l_fliplr, MTL_BOTH, "torch.fliplr(x) -- flip dim 2 (left/right)", "out"},
    {"flipud", l_flipud, MTL_BOTH, "torch.flipud(x) -- flip dim 1 (up/down)", "out"},
    {"roll", l_roll, MTL_BOTH, "torch.roll(x, shifts[, dims]) -- rotate elements along dims (flattened without dims)",
     "shifts dims out"},
    {"rot90", l_rot90, MTL_BOTH,
     "torch.rot90(x[, k=1, dims={1, 2}]) -- rotate k quarter turns from dims[1] to dims[2]", "k dims out"},
    {"tril", l_tril, MTL_BOTH, "torch.tril(x[, diagonal=0]) -- lower triangle of the last two dims, rest zero",
     "diagonal out"},
    {"triu", l_triu, MTL_BOTH, "torch.triu(x[, diagonal=0]) -- upper triangle of the last two dims, rest zero",
     "diagonal out"},
    {"tril_", l_tril_, MTL_METHOD, "x:tril_([diagonal=0]) -- tril in place", "diagonal"},
    {"triu_", l_triu_, MTL_METHOD, "x:triu_([diagonal=0]) -- triu in place", "diagonal"},
    {"diag", l_diag, MTL_BOTH, "torch.diag(x[, diagonal=0]) -- 1-D: a matrix with x on a diagonal; 2-D: a diagonal",
     "diagonal out"},
    {"diagonal", l_diagonal, MTL_BOTH,
     "torch.diagonal(x[, offset=0, dim1=1, dim2=2]) -- view of a diagonal, as the last dim", "offset dim1 dim2"},
    {"diag_embed", l_diag_embed, MTL_BOTH,
     "torch.diag_embed(x[, offset=0, dim1=-2, dim2=-1]) -- matrices with the last dim of x on a diagonal",
     "offset dim1 dim2 out"},
    {"atleast_1d", l_atleast_1d, MTL_FN, "torch.atleast_1d(x, ...) -- x (each) with at least 1 dim"},
    {"atleast_2d", l_atleast_2d, MTL_FN, "torch.atleast_2d(x, ...) -- x (each) with at least 2 dims"},
    {"atleast_3d", l_atleast_3d, MTL_FN, "torch.atleast_3d(x, ...) -- x (each) with at least 3 dims"},
    {"meshgrid", l_meshgrid, MTL_FN,
     "torch.meshgrid(x, y, ...[, {indexing='ij'}]) -- coordinate grids (views), one return value per input",
     "indexing"},
    {NULL, NULL, 0, NULL}};

void mtl_open_shape(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
