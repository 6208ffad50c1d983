/* env.c -- builds the Lua state that scripts and the REPL run in: standard
 * libraries, the `torch` module and global (its packages are found by
 * lua_bindings/packages.c's searcher), the globals nn, F and optim (loaded on first
 * use through _G's __index) and `help`. Startup time is measured: nothing
 * here may load a package eagerly or touch the disk beyond a few stat calls. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "mtl.h"
#include "mtr.h"

#ifndef MT_PREFIX
#define MT_PREFIX "/usr/local"
#endif

#define LAZY_KEY "moontorch.lazy" /* registry: lazy global name -> path */

/* Globals defined on first use, and where they live under torch. */
static const char *const lazy_globals[][2] = {
    {"nn", "nn"},
    {"F", "nn.functional"},
    {"optim", "optim"},
};

void mtr_push_lazy_table(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, LAZY_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
}

/* lua_CFunction(path): torch.<path> with each step a plain (possibly lazy)
 * field access, starting from package.loaded.torch. */
static int resolve_path(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "torch");
  while (*path != '\0' && !lua_isnil(L, -1)) {
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    lua_pushlstring(L, path, len);
    lua_gettable(L, -2);
    path += len + (dot != NULL);
  }
  return 1;
}

/* True for require's "module 'torch.x' not found" error: the package does
 * not exist (yet), which is no error for a lazy global. */
static bool is_missing_module(const char *msg) {
  return msg != NULL && strstr(msg, "module 'torch.") != NULL && strstr(msg, "' not found") != NULL;
}

int mtr_lazy_load(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  mtr_push_lazy_table(L);
  if (lua_getfield(L, -1, name) != LUA_TSTRING) return 0;
  int lazy = lua_gettop(L) - 1, path = lua_gettop(L);
  lua_pushnil(L); /* not lazy while loading: no recursion */
  lua_setfield(L, lazy, name);
  lua_pushcfunction(L, resolve_path);
  lua_pushvalue(L, path);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    if (is_missing_module(lua_tostring(L, -1))) return 0;
    lua_pushvalue(L, path); /* keep it lazy: a later use retries */
    lua_setfield(L, lazy, name);
    return luaL_error(L, "could not load torch.%s (for the global '%s'): %s", lua_tostring(L, path), name,
                      lua_tostring(L, -1));
  }
  if (lua_isnil(L, -1)) return 0;
  lua_pushvalue(L, -1);
  lua_setglobal(L, name);
  return 1;
}

/* _G's __index(_G, key): the lazy globals; nil for any other name. */
static int lazy_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_pushcfunction(L, mtr_lazy_load);
  lua_pushvalue(L, 2);
  lua_call(L, 1, 1);
  return 1;
}

static void set_lazy_globals(lua_State *L) {
  lua_createtable(L, 0, 3);
  for (size_t i = 0; i < sizeof lazy_globals / sizeof lazy_globals[0]; i++) {
    lua_pushstring(L, lazy_globals[i][1]);
    lua_setfield(L, -2, lazy_globals[i][0]);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, LAZY_KEY);
  lua_pushglobaltable(L);
  if (!lua_getmetatable(L, -1)) lua_newtable(L);
  lua_pushcfunction(L, lazy_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

/* t[key] without metamethods (torch's __index may load packages). */
static int rawget_field(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, key);
  return lua_rawget(L, idx);
}

/* help(x) when the bindings provide none. */
static int help_fallback(lua_State *L) {
  if (lua_isnone(L, 1)) {
    printf("help(x) describes x; in the REPL, ?x does the same and :help lists REPL commands.\n");
    return 0;
  }
  printf("no help for %s\n", luaL_tolstring(L, 1, NULL));
  return 0;
}

/* Global help: the bindings' own if they define one (globally or as
 * torch.help), else the fallback. */
static void set_help(lua_State *L) {
  int top = lua_gettop(L);
  if (lua_getglobal(L, "help") == LUA_TNIL) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "torch");
    if (!lua_istable(L, -1) || rawget_field(L, -1, "help") != LUA_TFUNCTION)
      lua_pushcfunction(L, help_fallback);
    lua_setglobal(L, "help");
  }
  lua_settop(L, top);
}

int mtr_open_env(lua_State *L) {
  luaL_openlibs(L);
  luaL_requiref(L, "torch", luaopen_torch, 1);
  lua_pop(L, 1);
  set_lazy_globals(L);
  set_help(L);
  return 0;
}
