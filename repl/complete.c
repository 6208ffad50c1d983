/* complete.c -- what Tab can complete: globals and keywords, fields after
 * `a.b.`, methods after `a:` (through metatables: __index tables and the
 * __methods and __properties tables that tensors' metatable carries),
 * sub-packages not loaded yet, REPL commands after `:`. It only reads: raw
 * lookups, lua_next, metatables, directory listings. It never calls __index
 * functions or other user code; the one exception is loading a lazy global
 * (nn, F, optim) that the user is completing into, which is our own package. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "mtr.h"

#define MAX_CHAIN 8     /* __index hops followed */
#define MAX_KEYS 20000  /* keys read from one table */

static const char *const keywords[] = {
    "and",  "break", "do",     "else", "elseif", "end",   "false", "for",   "function", "goto", "if",
    "in",   "local", "nil",    "not",  "or",     "repeat", "return", "then", "true",     "until", "while",
    NULL,
};

static const char *const commands[] = {":help", ":time on", ":time off", ":quit", NULL};

/* What is being completed. */
typedef struct query {
  mtr_matches *m;
  const char *typed; /* the word's last part, already typed */
  size_t ntyped;
  bool methods;      /* after ':': only functions */
} query;

static bool is_ident_char(int c) { return isalnum((unsigned char)c) || c == '_'; }

static bool is_ident(const char *s, size_t n) {
  if (n == 0 || isdigit((unsigned char)s[0])) return false;
  for (size_t i = 0; i < n; i++)
    if (!is_ident_char(s[i])) return false;
  return true;
}

/* Adds name if it extends what was typed. Names starting with '_' are
 * offered only when the user typed the '_'. */
static void add(query *q, const char *name, size_t len) {
  mtr_matches *m = q->m;
  if (len < q->ntyped || memcmp(name, q->typed, q->ntyped) != 0) return;
  if (name[0] == '_' && q->ntyped == 0) return;
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    char **names = realloc(m->names, (size_t)cap * sizeof *names);
    if (names == NULL) return;
    m->names = names;
    m->cap = cap;
  }
  char *copy = malloc(len + 1);
  if (copy == NULL) return;
  memcpy(copy, name, len);
  copy[len] = '\0';
  m->names[m->n++] = copy;
}

/* Adds the identifier keys of the table at idx (functions only for methods). */
static void add_keys(lua_State *L, int idx, query *q) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  for (int i = 0; i < MAX_KEYS && lua_next(L, idx); i++) {
    size_t len;
    if (lua_type(L, -2) == LUA_TSTRING && (!q->methods || lua_isfunction(L, -1))) {
      const char *key = lua_tolstring(L, -2, &len);
      if (is_ident(key, len)) add(q, key, len);
    }
    lua_pop(L, 1);
  }
}

/* Pushes t[key] for the table at idx, without metamethods. */
static int raw_field(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, key);
  return lua_rawget(L, idx);
}

/* ---- sub-packages not loaded yet ----
 * A lazy package (torch, torch.utils, torch.cuda: made by torch._package;
 * its metatable's __package names it) loads <pkg>.<k> on first access, so
 * such names exist before they are keys. The package map knows them:
 * torch._subpackages(pkg), read from the loaded torch module (not the
 * global, which a user may rebind). */

/* Pushes the set (name -> true) of the sub-packages of the lazy package
 * pkg ("torch.utils"); empty if torch is not loaded or the call fails. */
static void push_subpackages(lua_State *L, const char *pkg, bool loaded) {
  (void)loaded; /* the map answers for loaded packages and stand-ins alike */
  lua_newtable(L);
  int set = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (raw_field(L, -1, "torch") != LUA_TTABLE || raw_field(L, -1, "_subpackages") != LUA_TFUNCTION) {
    lua_settop(L, set);
    return;
  }
  lua_pushstring(L, pkg);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
      lua_pushboolean(L, 1);
      lua_rawset(L, set);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, set);
}

/* The name of the lazy package whose table (or stand-in) is at idx, or
 * NULL; *loaded tells a real package from a stand-in for one not loaded. */
static const char *package_name(lua_State *L, int idx, bool *loaded) {
  const char *name = NULL;
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return NULL;
  if (raw_field(L, -1, "__package") == LUA_TSTRING) name = lua_tostring(L, -1); /* the metatable keeps it */
  lua_pop(L, 1);
  *loaded = raw_field(L, -1, "__unloaded") == LUA_TNIL;
  lua_pop(L, 2);
  return name;
}

/* Adds the sub-packages of the lazy package at idx (if it is one). */
static void add_subpackages(lua_State *L, int idx, query *q) {
  bool loaded;
  const char *pkg = package_name(L, idx, &loaded);
  if (pkg == NULL) return;
  push_subpackages(L, pkg, loaded);
  add_keys(L, -1, q);
  lua_pop(L, 1);
}

/* Adds the keys reachable from the value at idx: its own (if a table), its
 * metatable's __methods, and the same for each __index that is a table. */
static void add_reachable(lua_State *L, int idx, query *q) {
  lua_pushvalue(L, idx);
  for (int hop = 0; hop < MAX_CHAIN; hop++) {
    if (lua_istable(L, -1)) add_keys(L, -1, q);
    if (!lua_getmetatable(L, -1)) break;
    if (raw_field(L, -1, "__methods") == LUA_TTABLE) add_keys(L, -1, q);
    lua_pop(L, 1);
    if (raw_field(L, -1, "__properties") == LUA_TTABLE) add_keys(L, -1, q); /* true values: not after ':' */
    lua_pop(L, 1);
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    lua_replace(L, -3); /* value <- metatable.__index */
    lua_pop(L, 1);
    if (!lua_istable(L, -1)) break;
  }
  lua_pop(L, 1);
}

/* Pushes obj[key] (obj at idx) found by raw lookups along the __index
 * chain of tables; nil if not found that way. */
static void safe_field(lua_State *L, int idx, const char *key) {
  lua_pushvalue(L, idx);
  for (int hop = 0; hop < MAX_CHAIN; hop++) {
    if (lua_istable(L, -1)) {
      lua_pushstring(L, key);
      if (lua_rawget(L, -2) != LUA_TNIL) {
        lua_remove(L, -2);
        return;
      }
      lua_pop(L, 1);
    }
    if (!lua_getmetatable(L, -1)) break;
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    lua_replace(L, -3);
    lua_pop(L, 1);
    if (!lua_istable(L, -1)) break;
  }
  lua_pop(L, 1);
  lua_pushnil(L);
}

/* Loads the lazy global whose package is pkg ("torch.nn" for nn) and pushes
 * it; pushes nil if pkg is not one of them (or does not load). */
static void load_lazy_package(lua_State *L, const char *pkg) {
  if (strncmp(pkg, "torch.", 6) != 0) {
    lua_pushnil(L);
    return;
  }
  mtr_push_lazy_table(L);
  lua_pushnil(L);
  while (lua_next(L, -2)) { /* global name -> path under torch */
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING && strcmp(pkg + 6, lua_tostring(L, -1)) == 0) {
      lua_pop(L, 1);
      lua_pushcfunction(L, mtr_lazy_load);
      lua_insert(L, -2);
      if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        lua_pop(L, 1);
        lua_pushnil(L);
      }
      lua_remove(L, -2); /* the lazy table */
      return;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
}

/* Pushes parent.name, which raw lookups did not find, if it is a package
 * not loaded yet: typed is what the user typed for it ("torch.nn.functional").
 * The packages of nn, F and optim are loaded (as completing nn. does); a
 * sub-package of a lazy package gets a stand-in (a table whose metatable
 * names the package and says it is not loaded). Else pushes nil. */
static void push_unloaded(lua_State *L, int parent, const char *name, const char *typed) {
  parent = lua_absindex(L, parent);
  load_lazy_package(L, typed);
  if (!lua_isnil(L, -1)) return;
  lua_pop(L, 1);
  bool loaded;
  const char *pkg = package_name(L, parent, &loaded);
  if (pkg == NULL) {
    lua_pushnil(L);
    return;
  }
  push_subpackages(L, pkg, loaded);
  int exists = raw_field(L, -1, name) != LUA_TNIL;
  lua_pop(L, 2);
  if (!exists) {
    lua_pushnil(L);
    return;
  }
  const char *full = lua_pushfstring(L, "%s.%s", pkg, name);
  load_lazy_package(L, full);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  lua_newtable(L); /* the stand-in */
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__package");
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "__unloaded");
  lua_setmetatable(L, -2);
  lua_remove(L, -2);
}

/* Pushes the global `name`; a lazy global (nn, F, optim) is loaded first. */
static void safe_global(lua_State *L, const char *name) {
  lua_pushglobaltable(L);
  safe_field(L, -1, name);
  lua_remove(L, -2);
  if (!lua_isnil(L, -1)) return;
  lua_pop(L, 1);
  lua_pushcfunction(L, mtr_lazy_load);
  lua_pushstring(L, name);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
}

/* Pushes the value named by path ("a.b.c", n bytes), or nil. */
static bool push_path(lua_State *L, const char *path, size_t n) {
  char name[256];
  size_t i = 0;
  bool first = true;
  while (i <= n) {
    size_t j = i;
    while (j < n && path[j] != '.') j++;
    if (!is_ident(path + i, j - i) || j - i >= sizeof name) {
      if (!first) lua_pop(L, 1);
      return false;
    }
    memcpy(name, path + i, j - i);
    name[j - i] = '\0';
    if (first) {
      safe_global(L, name);
    } else {
      safe_field(L, -1, name);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        char typed[256];
        snprintf(typed, sizeof typed, "%.*s", (int)j, path);
        push_unloaded(L, -1, name, typed);
      }
      lua_remove(L, -2);
    }
    first = false;
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    i = j + 1;
  }
  return true;
}

/* True if position `end` of line is inside a string literal (a quote count
 * heuristic: good enough to avoid completing inside "text"). */
static bool in_string(const char *line, size_t end) {
  char quote = 0;
  for (size_t i = 0; i < end; i++) {
    if (quote && line[i] == '\\' && i + 1 < end)
      i++;
    else if (quote && line[i] == quote)
      quote = 0;
    else if (!quote && (line[i] == '"' || line[i] == '\''))
      quote = line[i];
  }
  return quote != 0;
}

static void complete_globals(lua_State *L, query *q) {
  for (int i = 0; keywords[i]; i++) add(q, keywords[i], strlen(keywords[i]));
  lua_pushglobaltable(L);
  add_reachable(L, -1, q);
  lua_pop(L, 1);
  mtr_push_lazy_table(L);
  add_keys(L, -1, q);
  lua_pop(L, 1);
}

/* Fills q->m for the word that ends the line. */
static void complete_line(lua_State *L, const char *line, query *q) {
  mtr_matches *m = q->m;
  size_t end = strlen(line), start = end;
  while (start > 0 && (is_ident_char(line[start - 1]) || line[start - 1] == '.' || line[start - 1] == ':')) start--;
  const char *word = line + start;
  size_t nword = end - start;
  if (line[strspn(line, " \t")] == ':') { /* a REPL command */
    q->typed = line + strspn(line, " \t");
    q->ntyped = strlen(q->typed);
    m->start = (int)(q->typed - line);
    for (int i = 0; commands[i]; i++) add(q, commands[i], strlen(commands[i]));
    return;
  }
  if (in_string(line, start) || (nword > 0 && isdigit((unsigned char)word[0]))) return;
  const char *sep = NULL;
  for (size_t i = 0; i < nword; i++)
    if (word[i] == '.' || word[i] == ':') sep = word + i;
  q->typed = sep ? sep + 1 : word;
  q->ntyped = nword - (size_t)(q->typed - word);
  m->start = (int)(q->typed - line);
  if (sep == NULL) {
    complete_globals(L, q);
    return;
  }
  if (memchr(word, ':', (size_t)(sep - word)) != NULL) return; /* ':' only last */
  q->methods = *sep == ':';
  if (!push_path(L, word, (size_t)(sep - word))) return;
  add_reachable(L, -1, q);
  if (!q->methods) add_subpackages(L, -1, q);
  lua_pop(L, 1);
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void sort_unique(mtr_matches *m) {
  qsort(m->names, (size_t)m->n, sizeof *m->names, cmp_names);
  int k = 0;
  for (int i = 0; i < m->n; i++) {
    if (k > 0 && strcmp(m->names[k - 1], m->names[i]) == 0)
      free(m->names[i]);
    else
      m->names[k++] = m->names[i];
  }
  m->n = k;
}

/* lua_CFunction(line, matches) run protected: a memory error in Lua must not
 * unwind through the line editor. */
static int complete_protected(lua_State *L) {
  const char *line = lua_touserdata(L, 1);
  query q = {.m = lua_touserdata(L, 2)};
  complete_line(L, line, &q);
  q.m->typed = (int)q.ntyped;
  return 0;
}

void mtr_complete(lua_State *L, const char *line, mtr_matches *m) {
  memset(m, 0, sizeof *m);
  int top = lua_gettop(L);
  lua_pushcfunction(L, complete_protected);
  lua_pushlightuserdata(L, (void *)line);
  lua_pushlightuserdata(L, m);
  int status = lua_pcall(L, 2, 0, 0);
  lua_settop(L, top);
  if (status != LUA_OK) /* out of memory: offer nothing rather than half */
    mtr_matches_free(m);
  else
    sort_unique(m);
}

void mtr_matches_free(mtr_matches *m) {
  for (int i = 0; i < m->n; i++) free(m->names[i]);
  free(m->names);
  memset(m, 0, sizeof *m);
}
