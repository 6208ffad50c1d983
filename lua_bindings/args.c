/* args.c -- argument conventions of the Lua API: 1-based dims, optional
 * arguments given positionally or in one trailing options table by
 * PyTorch's names, shapes as varargs or a table, dtype/device values. */
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"

int mtl_is_options(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  if (lua_getmetatable(L, idx)) { /* dtype, device, Size objects are not options */
    lua_pop(L, 1);
    return 0;
  }
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int str = lua_type(L, -2) == LUA_TSTRING;
    lua_pop(L, 1);
    if (str) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

int mtl_options_index(lua_State *L, int first) {
  int top = lua_gettop(L);
  if (top >= first && mtl_is_options(L, top)) return top;
  return 0;
}

void mtl_getarg(lua_State *L, int pos, int last_pos, int opt, const char *name) {
  if (pos > 0 && pos <= last_pos && !lua_isnoneornil(L, pos)) {
    lua_pushvalue(L, pos);
    return;
  }
  if (opt) {
    lua_getfield(L, opt, name);
    return;
  }
  lua_pushnil(L);
}

int64_t mtl_opt_int(lua_State *L, int pos, int last_pos, int opt, const char *name, int64_t dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  int64_t v = dflt;
  if (!lua_isnil(L, -1)) {
    int ok;
    v = (int64_t)lua_tointegerx(L, -1, &ok);
    if (!ok) {
      if (lua_type(L, -1) == LUA_TNUMBER)
        luaL_error(L, "argument '%s' must be an integer, got %s", name, lua_tostring(L, -1));
      luaL_error(L, "argument '%s' must be an integer, got %s", name, luaL_typename(L, -1));
    }
  }
  lua_pop(L, 1);
  return v;
}

double mtl_opt_num(lua_State *L, int pos, int last_pos, int opt, const char *name, double dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  double v = dflt;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "argument '%s' must be a number, got %s", name, luaL_typename(L, -1));
    v = lua_tonumber(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

int mtl_opt_bool(lua_State *L, int pos, int last_pos, int opt, const char *name, int dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  int v = dflt;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      luaL_error(L, "argument '%s' must be a boolean, got %s", name, luaL_typename(L, -1));
    v = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

mt_dtype mtl_check_dtype(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    if (strncmp(s, "torch.", 6) == 0) s += 6;
    int d = mt_dtype_from_name(s);
    if (d < 0) {
      static const struct { const char *alias; mt_dtype d; } al[] = {
          {"float", MT_FLOAT32}, {"double", MT_FLOAT64}, {"half", MT_FLOAT16}, {"long", MT_INT64},
          {"int", MT_INT32},     {"short", MT_INT16},    {"uint8", MT_UINT8},  {"byte", MT_UINT8}};
      for (size_t i = 0; i < sizeof al / sizeof *al; i++)
        if (strcmp(s, al[i].alias) == 0) return al[i].d;
      luaL_error(L, "%s: unknown dtype '%s'", op, lua_tostring(L, idx));
    }
    return (mt_dtype)d;
  }
  if (lua_type(L, idx) == LUA_TTABLE && luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
    int is = strcmp(lua_tostring(L, -1), "torch.dtype") == 0;
    lua_pop(L, 1);
    if (is) {
      lua_getfield(L, idx, "_id");
      mt_dtype d = (mt_dtype)lua_tointeger(L, -1);
      lua_pop(L, 1);
      return d;
    }
  }
  luaL_error(L, "%s: expected a dtype (e.g. torch.float32), got %s", op, luaL_typename(L, idx));
  return MT_FLOAT32;
}

mt_dtype mtl_opt_dtype(lua_State *L, int pos, int last_pos, int opt, const char *name, mt_dtype dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  mt_dtype d = dflt;
  if (!lua_isnil(L, -1)) d = mtl_check_dtype(L, -1, name);
  lua_pop(L, 1);
  return d;
}

mt_device mtl_check_device(lua_State *L, int idx, const char *op) {
  const char *s = NULL;
  if (lua_type(L, idx) == LUA_TSTRING) {
    s = lua_tostring(L, idx);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    lua_getfield(L, idx, "_str");
    s = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  if (!s) luaL_error(L, "%s: expected a device ('cpu', 'cuda', 'cuda:1'), got %s", op, luaL_typename(L, idx));
  mt_device d = {MT_CPU, 0};
  if (strcmp(s, "cpu") == 0) return d;
  if (strncmp(s, "cuda", 4) == 0 && (s[4] == 0 || s[4] == ':')) {
    d.type = MT_CUDA;
    d.index = (int8_t)mt_cuda_current_device();
    if (s[4] == ':') {
      char *end;
      long i = strtol(s + 5, &end, 10);
      if (*end || i < 0 || i > 127) luaL_error(L, "%s: bad device '%s'", op, s);
      d.index = (int8_t)i;
    }
    return d;
  }
  luaL_error(L, "%s: unknown device '%s' (expected 'cpu', 'cuda' or 'cuda:N')", op, s);
  return d;
}

static mt_device default_device; /* cpu */
mt_device mtl_default_device(void) { return default_device; }
void mtl_set_default_device(mt_device d) { default_device = d; }

mt_device mtl_opt_device(lua_State *L, int pos, int last_pos, int opt, const char *name) {
  mtl_getarg(L, pos, last_pos, opt, name);
  mt_device d = default_device;
  if (!lua_isnil(L, -1)) d = mtl_check_device(L, -1, name);
  lua_pop(L, 1);
  return d;
}

mt_tensor *mtl_opt_out(lua_State *L, int opt) {
  if (!opt) return NULL;
  lua_getfield(L, opt, "out");
  mt_tensor *t = lua_isnil(L, -1) ? NULL : mtl_check_tensor(L, -1, "out=");
  lua_pop(L, 1);
  return t;
}

int mtl_dim(lua_State *L, lua_Integer d, int ndim, const char *op) {
  int n = ndim > 0 ? ndim : 1;
  if (d == 0 || d > n || d < -n)
    return luaL_error(L, "%s: dimension %d out of range (tensor has %d dimension%s; use 1..%d or -%d..-1)", op, (int)d,
                      ndim, ndim == 1 ? "" : "s", n, n);
  return (int)(d > 0 ? d - 1 : d + n);
}

static int64_t shape_entry(lua_State *L, int idx, const char *op) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "%s: sizes must be integers, got %s", op,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return (int64_t)v;
}

int mtl_shape(lua_State *L, int idx, int last, int64_t *shape, const char *op) {
  int n = 0;
  if (idx <= last && lua_type(L, idx) == LUA_TTABLE && !mtl_is_options(L, idx)) {
    n = (int)lua_rawlen(L, idx);
    if (n > MT_MAXDIM) luaL_error(L, "%s: tensors have at most %d dimensions, got %d", op, MT_MAXDIM, n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, idx, i + 1);
      shape[i] = shape_entry(L, -1, op);
      lua_pop(L, 1);
    }
    return n;
  }
  for (int i = idx; i <= last; i++) {
    if (n >= MT_MAXDIM) luaL_error(L, "%s: tensors have at most %d dimensions", op, MT_MAXDIM);
    shape[n++] = shape_entry(L, i, op);
  }
  return n;
}

int mtl_size(lua_State *L, int idx, int last, int64_t *shape, const char *op) {
  int n = mtl_shape(L, idx, last, shape, op);
  for (int i = 0; i < n; i++)
    if (shape[i] < 0) luaL_error(L, "%s: negative dimension %d in size (dimension %d)", op, (int)shape[i], i + 1);
  return n;
}

void mtl_push_shape(lua_State *L, const int64_t *shape, int ndim) {
  lua_createtable(L, ndim, 0);
  for (int i = 0; i < ndim; i++) {
    lua_pushinteger(L, (lua_Integer)shape[i]);
    lua_rawseti(L, -2, i + 1);
  }
  /* shapes print as torch.Size */
  luaL_setmetatable(L, "torch.Size");
}
