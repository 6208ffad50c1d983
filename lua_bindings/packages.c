/* packages.c -- where the Lua packages under `torch` live, and the searcher
 * that finds them. In the source tree each package sits in the folder of its
 * job (the map below: torch.nn in nn/, torch.vision in domains/vision/, ...);
 * `make install` writes the same files in Lua's standard layout
 * (PREFIX/share/lua/5.4/torch/...). The C parts of packages (their luaopen_
 * functions, linked into this program) are found by Lua's naming rule:
 * module torch.a._b is luaopen_torch_a__b. Nothing here runs package code. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtl.h"

/* The package map: a module name and the folder (or one .lua file) that
 * holds it, relative to the source tree's root. "=name" makes the module
 * another name of the module `name`. The longest matching module wins, and a
 * file is reachable only under the package whose folder is its nearest. */
static const struct {
  const char *module, *path;
} pkgs[] = {
    {"torch.nn", "nn"},
    {"torch.optim", "nn/optim"},
    {"torch.distributions", "nn/distributions"},
    {"torch.amp", "nn/amp"},
    {"torch.autocast", "=torch.amp.autocast"},
    {"torch.cuda.amp", "nn/amp/cuda.lua"},
    {"torch.utils.data", "nn/data"},
    {"torch.profiler", "lua_bindings/profiler"},
    {"torch.backends", "lua_bindings/backends.lua"},
    {"torch.fft", "lua_bindings/fft"},
    {"torch.vision", "domains/vision"},
    {"torch.audio", "domains/audio"},
    {"torch.rl", "domains/rl"},
    {"torch.experiment", "domains/experiment"},
    {"torch.utils.tensorboard", "domains/experiment/tensorboard"},
    {"torch.plot", "domains/experiment/plot"},
};
#define NPKGS (sizeof pkgs / sizeof pkgs[0])

/* The C parts of packages: the build generates this list (build/gen/
 * cmodules.c) from the luaopen_torch_* functions of nn/ and domains/. */
extern const mtl_cmodule mtl_cmodules[];

static char root[PATH_MAX]; /* the tree the Lua files come from ("" until found) */
static bool installed;      /* root is a standard layout (share/lua/5.4) */

/* snprintf that reports truncation: false when out (of size bytes) was too
 * small for the whole text (a path too long to exist here). */
static bool fmt(char *out, size_t size, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(out, size, f, ap);
  va_end(ap);
  return n >= 0 && (size_t)n < size;
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Sets root from the directory `dir` of this program's binary: the source
 * tree is its parent (build/, build-asan/), an installed tree is
 * PREFIX/share/lua/5.4 for PREFIX/bin/moontorch or
 * PREFIX/lib/lua/5.4/torch.so. */
static bool root_from(const char *dir) {
  char q[PATH_MAX], p[PATH_MAX];
  if (fmt(q, sizeof q, "%s/../nn/init.lua", dir) && is_file(q) && realpath(q, p)) {
    *strrchr(p, '/') = '\0';
    *strrchr(p, '/') = '\0';
    fmt(root, sizeof root, "%s", p);
    installed = false;
    return true;
  }
  static const char *const up[] = {"/../share/lua/5.4", "/../../../share/lua/5.4"};
  for (int i = 0; i < 2; i++) {
    if (fmt(q, sizeof q, "%s%s/torch/nn/init.lua", dir, up[i]) && is_file(q) && realpath(q, p)) {
      *strstr(p, "/torch/nn/init.lua") = '\0';
      fmt(root, sizeof root, "%s", p);
      installed = true;
      return true;
    }
  }
  return false;
}

/* Finds the tree once: next to the binary holding this code (torch.so or
 * the moontorch executable), else MT_PREFIX's installed tree. */
static const char *find_root(void) {
  static bool done;
  if (done) return root[0] ? root : NULL;
  done = true;
  char dir[PATH_MAX] = "";
  Dl_info info;
  if (dladdr((void *)find_root, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
      realpath(info.dli_fname, dir) == NULL)
    dir[0] = '\0';
  if (!dir[0]) {
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    dir[n > 0 ? n : 0] = '\0';
  }
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (dir[0] && root_from(dir)) return root;
#ifdef MT_PREFIX
  if (root_from(MT_PREFIX "/bin")) return root;
#endif
  return NULL;
}

/* The map entry whose module is the longest prefix of name (at a dot), or -1. */
static int entry_of(const char *name) {
  int best = -1;
  size_t blen = 0;
  for (size_t i = 0; i < NPKGS; i++) {
    size_t n = strlen(pkgs[i].module);
    if (strncmp(name, pkgs[i].module, n) == 0 && (name[n] == '\0' || name[n] == '.') && n > blen) best = (int)i, blen = n;
  }
  return best;
}

/* True if the folder path/rel (rel: a/b for module .a.b) lies inside the
 * folder of another package below entry e (so it is not e's to give). */
static bool owned_by_other(int e, const char *rel) {
  char full[PATH_MAX];
  if (!fmt(full, sizeof full, "%s/%s", pkgs[e].path, rel)) return true;
  for (size_t i = 0; i < NPKGS; i++) {
    size_t n = strlen(pkgs[i].path);
    if ((int)i == e || pkgs[i].path[0] == '=' || n <= strlen(pkgs[e].path)) continue;
    const char *p = pkgs[i].path;
    if (strncmp(full, p, n) == 0 && (full[n] == '/' || full[n] == '\0')) return true;
    if (strlen(p) > 4 && strcmp(p + strlen(p) - 4, ".lua") == 0 && strncmp(full, p, n - 4) == 0 && full[n - 4] == '\0')
      return true;
  }
  return false;
}

/* Writes the file of Lua module `name` into out; false if there is none. */
static bool lua_file_of(const char *name, char *out, size_t size) {
  const char *r = find_root();
  if (!r) return false;
  char rel[PATH_MAX];
  if (installed) { /* standard layout: torch/a/b.lua or torch/a/b/init.lua */
    if (!fmt(rel, sizeof rel, "%s", name)) return false;
    for (char *c = rel; *c; c++)
      if (*c == '.') *c = '/';
    if (fmt(out, size, "%s/%s.lua", r, rel) && is_file(out)) return true;
    return fmt(out, size, "%s/%s/init.lua", r, rel) && is_file(out);
  }
  int e = entry_of(name);
  if (e < 0 || pkgs[e].path[0] == '=') return false;
  const char *rest = name + strlen(pkgs[e].module);
  if (strstr(pkgs[e].path, ".lua")) { /* a one-file package */
    return *rest == '\0' && fmt(out, size, "%s/%s", r, pkgs[e].path) && is_file(out);
  }
  if (*rest == '\0') {
    return fmt(out, size, "%s/%s/init.lua", r, pkgs[e].path) && is_file(out);
  }
  if (!fmt(rel, sizeof rel, "%s", rest + 1)) return false;
  for (char *c = rel; *c; c++)
    if (*c == '.') *c = '/';
  if (owned_by_other(e, rel)) return false;
  if (fmt(out, size, "%s/%s/%s.lua", r, pkgs[e].path, rel) && is_file(out)) return true;
  return fmt(out, size, "%s/%s/%s/init.lua", r, pkgs[e].path, rel) && is_file(out);
}

/* The C part luaopen_<name with '.' as '_'>, or NULL. */
static lua_CFunction cmodule_of(const char *name) {
  char sym[256];
  if (!fmt(sym, sizeof sym, "%s", name)) return NULL;
  for (char *c = sym; *c; c++)
    if (*c == '.') *c = '_';
  for (const mtl_cmodule *m = mtl_cmodules; m->name; m++)
    if (strcmp(m->name, sym) == 0) return m->open;
  return NULL;
}

static int alias_loader(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 1, 1);
  return 1;
}

static int namespace_loader(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  return 1;
}

/* A namespace table that the loaded torch module holds and no file makes
 * (torch.utils, torch.cuda): `require "torch.utils"` gives it, as Python's
 * import does. This searcher exists only once luaopen_torch runs; while it
 * is still running torch is not loaded yet, and nothing is found. The walk
 * reads fields raw, loading nothing else. Pushes its loader and name and
 * returns 2, or returns 0 with nothing pushed. */
static int push_namespace(lua_State *L, const char *name) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "torch");
  lua_remove(L, -2);
  for (const char *p = name + 6; *p && lua_istable(L, -1);) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    lua_pushlstring(L, p, n);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    p += n + (dot != NULL);
  }
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushcclosure(L, namespace_loader, 1);
  lua_pushstring(L, name);
  return 2;
}

/* Pushes a loader of module `name` and its second value (a file name, or
 * the name) and returns 2; or returns 0 with nothing pushed. */
static int push_loader(lua_State *L, const char *name) {
  if (strncmp(name, "torch.", 6) != 0) return 0;
  lua_CFunction open = cmodule_of(name);
  if (open) {
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    return 2;
  }
  int e = entry_of(name);
  if (e >= 0 && pkgs[e].path[0] == '=' && strcmp(name, pkgs[e].module) == 0) {
    lua_pushstring(L, pkgs[e].path + 1);
    lua_pushcclosure(L, alias_loader, 1);
    lua_pushstring(L, pkgs[e].path + 1);
    return 2;
  }
  char file[PATH_MAX];
  if (!lua_file_of(name, file, sizeof file)) return push_namespace(L, name);
  if (luaL_loadfilex(L, file, "t") != LUA_OK)
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
  mtl_mark_library(L, -1);
  lua_pushstring(L, file);
  return 2;
}

bool mtl_package_exists(const char *name) {
  if (cmodule_of(name)) return true;
  int e = entry_of(name);
  if (e >= 0 && pkgs[e].path[0] == '=' && strcmp(name, pkgs[e].module) == 0) return true;
  char file[PATH_MAX];
  return lua_file_of(name, file, sizeof file);
}

/* package.searchers entry: torch.* modules from the tree; for other names
 * (and torch.* names it does not have) a message, as Lua's searchers give. */
static int searcher(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  int n = push_loader(L, name);
  if (n) return n;
  if (strncmp(name, "torch.", 6) != 0) return 0;
  const char *r = find_root();
  lua_pushfstring(L, "no package '%s' in moontorch's tree (%s)", name, r ? r : "not found");
  return 1;
}

/* torch._packages() -> {root=, installed=, {module=, path=}...}: the map
 * (paths relative to root; "=name" for another name of a module). */
static int l_packages(lua_State *L) {
  const char *r = find_root();
  lua_createtable(L, (int)NPKGS, 2);
  lua_pushstring(L, r ? r : "");
  lua_setfield(L, -2, "root");
  lua_pushboolean(L, installed);
  lua_setfield(L, -2, "installed");
  for (size_t i = 0; i < NPKGS; i++) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, pkgs[i].module);
    lua_setfield(L, -2, "module");
    lua_pushstring(L, pkgs[i].path);
    lua_setfield(L, -2, "path");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* torch._subpackages(name) -> sorted list of the packages one level below
 * `name` ("torch" -> {"amp", "autocast", "backends", ...}): what a REPL
 * completes before anything is loaded. */
static int l_subpackages(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  size_t n = strlen(name);
  lua_newtable(L);
  int k = 0;
  for (size_t i = 0; i < NPKGS; i++) {
    const char *m = pkgs[i].module;
    if (strncmp(m, name, n) != 0 || m[n] != '.') continue;
    const char *child = m + n + 1, *dot = strchr(child, '.');
    lua_pushlstring(L, child, dot ? (size_t)(dot - child) : strlen(child));
    bool dup = false;
    for (int j = 1; j <= k && !dup; j++) {
      lua_rawgeti(L, -2, j);
      dup = lua_rawequal(L, -1, -2);
      lua_pop(L, 1);
    }
    if (dup) lua_pop(L, 1);
    else lua_rawseti(L, -2, ++k);
  }
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  return 1;
}

void mtl_open_packages(lua_State *L, int torch_idx) {
  lua_getglobal(L, "package");
  if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) { /* ours first: before the C root searcher that would
                                                          * dlopen a second torch.so for torch.* names */
    lua_pushcfunction(L, searcher);
    bool there = false;
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -2) && !there; i++) {
      lua_rawgeti(L, -2, i);
      there = lua_tocfunction(L, -1) == searcher;
      lua_pop(L, 1);
    }
    if (!there) {
      for (lua_Integer i = (lua_Integer)lua_rawlen(L, -2); i >= 2; i--) { /* after preload (1) */
        lua_rawgeti(L, -2, i);
        lua_rawseti(L, -3, i + 1);
      }
      lua_rawseti(L, -2, 2);
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 2);
  static const mtl_reg regs[] = {
      {"_packages", l_packages, MTL_FN,
       "torch._packages() -- the package map: {root=, installed=, {module=, path=}, ...} (where each package's files are)"},
      {"_subpackages", l_subpackages, MTL_FN,
       "torch._subpackages(name) -- sorted names of the packages one level below name (loads nothing)"},
      {NULL, NULL, 0, NULL}};
  mtl_register(L, torch_idx, torch_idx, regs);
}
