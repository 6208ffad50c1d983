/* l_public.c -- the public entry points of the Lua packages (nn, F, optim,
 * data, vision, ...): an error raised inside the library during a call is
 * raised again at the caller's line, naming the public function, so the
 * user reads `train.lua:12: F.mse_loss: ...` instead of a library file and
 * an internal op. Errors positioned in the user's own code pass unchanged.
 * Knows nothing of the packages: they wrap their functions with
 * torch._public, and the package searcher marks the files they come from. */
#include <ctype.h>
#include <string.h>

#include "mtl.h"

#define LIBSRC "mtl.libsrc"     /* registry: short_src of each library chunk -> true */
#define LASTNAMED "mtl.lastnamed" /* registry: the last message a guard produced */

void mtl_mark_library(lua_State *L, int idx) {
  lua_Debug ar;
  lua_pushvalue(L, idx);
  if (!lua_getinfo(L, ">S", &ar)) return;
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBSRC) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LIBSRC);
  }
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, ar.short_src);
  lua_pop(L, 1);
}

/* True if the chunk named src[0..n) (a short_src) is a library file. */
static bool is_library(lua_State *L, const char *src, size_t n) {
  bool lib = false;
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBSRC) == LUA_TTABLE) {
    lua_pushlstring(L, src, n);
    lib = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return lib;
}

/* Splits "chunk:line: body": returns the body and sets *chunk_len, or
 * returns msg itself with *chunk_len = 0 when it carries no position. */
static const char *split_position(const char *msg, size_t *chunk_len) {
  *chunk_len = 0;
  for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
    const char *q = p + 1;
    if (!isdigit((unsigned char)*q)) continue;
    while (isdigit((unsigned char)*q)) q++;
    if (q[0] == ':' && q[1] == ' ') {
      *chunk_len = (size_t)(p - msg);
      return q + 2;
    }
  }
  return msg;
}

/* True if body starts with name[0..n) followed by one of ":( .". */
static bool starts_with(const char *body, const char *name, size_t n) {
  return n && strncmp(body, name, n) == 0 && body[n] && strchr(":( .", body[n]);
}

/* True if body already names the function: it starts with name, or with
 * name without its package ("nn.Linear" -> "Linear"), or without its method
 * ("GradScaler.step" -> "GradScaler", "optim.SGD.step" -> "SGD"). */
static bool names(const char *body, const char *name) {
  const char *dot = strchr(name, '.'), *last = strrchr(name, '.');
  size_t n = strlen(name), head = last ? (size_t)(last - name) : n;
  if (starts_with(body, name, n) || starts_with(body, name, head)) return true;
  if (!dot) return false;
  return starts_with(body, dot + 1, n - (size_t)(dot + 1 - name)) ||
         (last > dot && starts_with(body, dot + 1, (size_t)(last - dot - 1)));
}

/* Pushes the guard's name for this call: upvalue 2, or the string that
 * upvalue 2 (a function) returns for the call's first argument (index 1). */
static const char *guard_name(lua_State *L) {
  if (lua_type(L, lua_upvalueindex(2)) == LUA_TFUNCTION) {
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_pushliteral(L, "?");
    return lua_tostring(L, -1);
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  return lua_tostring(L, -1);
}

/* The error at the top of the stack left the guarded call: raises it again,
 * moved to the caller's line and named, unless the user's code raised it. */
static int rethrow(lua_State *L) {
  if (lua_type(L, -1) != LUA_TSTRING) return lua_error(L);
  int err = lua_gettop(L);
  size_t chunk;
  const char *msg = lua_tostring(L, err), *body = split_position(msg, &chunk);
  if (chunk && !is_library(L, msg, chunk)) return lua_error(L); /* the user's own code */
  lua_getfield(L, LUA_REGISTRYINDEX, LASTNAMED);
  bool named = lua_rawequal(L, -1, err);
  lua_pop(L, 1);
  const char *name = guard_name(L);
  mtl_where(L, 1);
  if (named || !name || names(body, name))
    lua_pushstring(L, body);
  else
    lua_pushfstring(L, "%s: %s", name, body);
  lua_concat(L, 2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, LASTNAMED);
  return lua_error(L);
}

/* Continuation of guard (also after a yield inside fn): stack is the first
 * argument, then fn's results or its error. */
static int guard_done(lua_State *L, int status, lua_KContext ctx) {
  (void)ctx;
  if (status != LUA_OK && status != LUA_YIELD) return rethrow(L);
  return lua_gettop(L) - 1;
}

/* upvalue 1: fn, or the name of a method of the first argument (m(x) calls
 * m:forward(x) without a Lua function in between); upvalue 2: the public
 * name (or a function giving it) */
static int guard(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, 1); /* kept below the call: the name function may want it */
  lua_insert(L, 1);
  if (lua_type(L, lua_upvalueindex(1)) == LUA_TSTRING) {
    if (n < 1) return luaL_error(L, "%s: expected an object to call", lua_tostring(L, lua_upvalueindex(2)));
    lua_getfield(L, 1, lua_tostring(L, lua_upvalueindex(1)));
  } else {
    lua_pushvalue(L, lua_upvalueindex(1));
  }
  lua_insert(L, 2);
  return guard_done(L, lua_pcallk(L, n, LUA_MULTRET, 0, 0, guard_done), 0);
}

/* torch._public(fn, name) -> a function calling fn with its arguments and
 * returning its results; name is a string ("F.mse_loss") or a function of
 * the call's first argument that returns one (a class's instances). fn may
 * be a method name instead: the wrapper calls that method of its first
 * argument (a module's __call = torch._public("forward", ...)). */
static int l_public(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING) luaL_checktype(L, 1, LUA_TFUNCTION);
  if (lua_type(L, 2) != LUA_TFUNCTION) luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, guard, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help"); /* the wrapper keeps fn's help text */
  lua_pushvalue(L, 1);
  if (lua_rawget(L, -2) != LUA_TNIL) {
    lua_pushvalue(L, 3);
    lua_insert(L, -2);
    lua_rawset(L, -3);
  } else {
    lua_pop(L, 1);
  }
  lua_settop(L, 3);
  return 1;
}

/* torch._unwrap(f) -> the function a torch._public wrapper calls (f itself
 * for other values and for method wrappers). */
static int l_unwrap(lua_State *L) {
  lua_settop(L, 1);
  if (lua_tocfunction(L, 1) == guard && lua_getupvalue(L, 1, 1) && !lua_isfunction(L, -1)) lua_pop(L, 1);
  return 1;
}

/* torch._is_library(f_or_src) -> true if the function (or the short_src
 * string) comes from a library file. */
static int l_is_library(lua_State *L) {
  size_t n;
  const char *src;
  lua_Debug ar;
  if (lua_type(L, 1) == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    lua_getinfo(L, ">S", &ar);
    src = ar.short_src, n = strlen(src);
  } else {
    src = luaL_checklstring(L, 1, &n);
  }
  lua_pushboolean(L, is_library(L, src, n));
  return 1;
}

static const mtl_reg regs[] = {
    {"_public", l_public, MTL_FN,
     "torch._public(fn, name) -- fn as a public entry point: errors raised inside the library name `name` at the "
     "caller's line"},
    {"_unwrap", l_unwrap, MTL_FN, "torch._unwrap(f) -- the function a torch._public wrapper calls"},
    {"_is_library", l_is_library, MTL_FN,
     "torch._is_library(f_or_src) -- true if the function (or chunk name) comes from moontorch's Lua packages"},
    {NULL, NULL, 0, NULL}};

void mtl_open_public(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
