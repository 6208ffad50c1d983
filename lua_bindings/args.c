/* args.c -- argument conventions of the Lua API: 1-based dims, optional
 * arguments given positionally or in one trailing options table by
 * PyTorch's names, shapes as varargs or a table, dtype/device values. */
#include <stdarg.h>
#include <stdbool.h>
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

/* ---- error positions ---- */

/* True if the function of the frame ar is the global pcall or xpcall: a
 * protected call is where a position search stops, as Lua's own does. */
static bool is_pcall(lua_State *L, lua_Debug *ar) {
  lua_getinfo(L, "f", ar);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_getfield(L, -1, "pcall");
  lua_getfield(L, -2, "xpcall");
  bool p = lua_rawequal(L, -1, -4) || lua_rawequal(L, -2, -4);
  lua_pop(L, 4);
  return p;
}

void mtl_where(lua_State *L, int level) {
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar); level++) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
    if (*ar.what != 'C' || is_pcall(L, &ar)) break; /* no line information, or a protected call */
  }
  lua_pushliteral(L, "");
}

int mtl_error(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mtl_where(L, 1);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  return lua_error(L);
}

/* ---- option names: the one checker of trailing options tables ---- */

static bool audit; /* the options audit is on (below) */

/* True if the space-separated list spec holds the word name[0..n). */
static bool spec_has(const char *spec, const char *name, size_t n) {
  for (const char *w = spec; w && *w;) {
    while (*w == ' ') w++;
    size_t k = strcspn(w, " ");
    if (k == n && memcmp(w, name, n) == 0) return true;
    w += k;
  }
  return false;
}

/* Edit distance of a and b (insertions, deletions, substitutions and swaps
 * of neighbours count 1; case differences count 0), for short words. */
static int distance(const char *a, size_t na, const char *b, size_t nb) {
  enum { W = 48 };
  if (na >= W || nb >= W) return W;
  int d[W][W];
  for (size_t i = 0; i <= na; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= nb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= na; i++)
    for (size_t j = 1; j <= nb; j++) {
      int cost = (a[i - 1] | 32) != (b[j - 1] | 32);
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[na][nb];
}

bool mtl_closest_word(const char *words, const char *s, size_t n, char *out, size_t size) {
  int best = 1 << 20;
  size_t bk = 0;
  const char *bw = NULL;
  for (const char *w = words; w && *w;) {
    while (*w == ' ') w++;
    size_t k = strcspn(w, " ");
    if (k) {
      int dist = distance(s, n, w, k);
      /* a typo: one edit in a short word, two in a longer one, three in a long one */
      int limit = (n < k ? n : k) <= 4 ? 1 : (n < k ? n : k) <= 8 ? 2 : 3;
      if (dist <= limit && dist < best) best = dist, bw = w, bk = k;
    }
    w += k;
  }
  if (!bw || bk + 1 > size) return false;
  memcpy(out, bw, bk);
  out[bk] = '\0';
  return true;
}

/* Appends "'a', 'b' or 'c'" (the words of list) to b. */
static void add_words(luaL_Buffer *b, const char *list) {
  int count = 0, i = 0;
  for (const char *w = list; *w; w += strcspn(w, " "), w += strspn(w, " ")) count += *w != ' ';
  for (const char *w = list + strspn(list, " "); *w; i++) {
    size_t k = strcspn(w, " ");
    luaL_addstring(b, i == 0 ? "'" : i == count - 1 ? " or '" : ", '");
    luaL_addlstring(b, w, k);
    luaL_addchar(b, '\'');
    w += k;
    w += strspn(w, " ");
  }
}

/* Raises the error for the unknown option `key` of fname. */
static int unknown_option(lua_State *L, const char *fname, const char *key, const char *spec) {
  char near[64];
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  mtl_where(L, 1);
  luaL_addvalue(&b);
  lua_pushfstring(L, "%s: unknown option '%s'", fname, key);
  luaL_addvalue(&b);
  int n = 0;
  for (const char *w = spec ? spec : ""; *w; w += strcspn(w, " "), w += strspn(w, " ")) n += *w != ' ';
  if (n == 0) {
    lua_pushfstring(L, " (%s takes no options)", fname);
    luaL_addvalue(&b);
  } else if (mtl_closest_word(spec, key, strlen(key), near, sizeof near)) {
    lua_pushfstring(L, " (did you mean '%s'?)", near);
    luaL_addvalue(&b);
  } else if (n <= 12) {
    luaL_addstring(&b, n == 1 ? " (its only option is " : " (valid options: ");
    add_words(&b, spec);
    luaL_addchar(&b, ')');
  } else {
    lua_pushfstring(L, " (it has %d options; help(%s) lists them)", n, fname);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return lua_error(L);
}

void mtl_check_options(lua_State *L, int idx, const char *fname, const char *spec) {
  if (lua_type(L, idx) != LUA_TTABLE || (spec && spec[0] == '*')) return;
  /* a long list is data (torch.tensor's), not options: no need to walk it */
  if (lua_rawlen(L, idx) >= 256) return;
  if (lua_getmetatable(L, idx)) { /* dtype, device, Size objects, class instances */
    lua_pop(L, 1);
    return;
  }
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    size_t n;
    const char *key = lua_tolstring(L, -1, &n);
    if (!spec_has(spec, key, n) && !(audit && strcmp(key, "__audit") == 0))
      unknown_option(L, fname, key, spec);
  }
}

int mtl_check_choice(lua_State *L, int idx, const char *fname, const char *what, const char *choices) {
  size_t n = 0;
  const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
  int i = 0;
  for (const char *w = choices + strspn(choices, " "); s && *w; i++) {
    size_t k = strcspn(w, " ");
    if (k == n && memcmp(w, s, n) == 0) return i;
    w += k;
    w += strspn(w, " ");
  }
  char near[64];
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  mtl_where(L, 1);
  luaL_addvalue(&b);
  if (s)
    lua_pushfstring(L, "%s: unknown %s '%s' (", fname, what, s);
  else
    lua_pushfstring(L, "%s: %s must be a string, got %s (", fname, what, luaL_typename(L, idx));
  luaL_addvalue(&b);
  if (s && mtl_closest_word(choices, s, n, near, sizeof near)) {
    lua_pushfstring(L, "did you mean '%s'? ", near);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, "expected ");
  add_words(&b, choices);
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return lua_error(L);
}

/* ---- the options audit (a test instrument) ----
 * While on, every option a gated function reads from its options table is
 * checked against the names its mtl_reg row declares; undeclared reads
 * are collected in the registry table "mtl.audit" ("fname: name" -> true)
 * and all reads in "mtl.audit_reads". */
static void audit_read(lua_State *L, const char *name) {
  const mtl_reg *r = mtl_running(L);
  if (!r) return;
  bool declared = r->opts && (r->opts[0] == '*' || spec_has(r->opts, name, strlen(name)));
  lua_pushfstring(L, "%s: %s", r->name, name);
  lua_getfield(L, LUA_REGISTRYINDEX, declared ? "mtl.audit_reads" : "mtl.audit");
  if (lua_istable(L, -1)) {
    lua_pushvalue(L, -2);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_pop(L, 2);
}

/* torch._options_audit(on) -> when turning it off: the undeclared reads
 * and all declared reads seen, two sorted lists of "fname: name". */
static int l_options_audit(lua_State *L) {
  bool on = lua_toboolean(L, 1);
  if (on) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "mtl.audit");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "mtl.audit_reads");
    audit = true;
    return 0;
  }
  audit = false;
  const char *keys[] = {"mtl.audit", "mtl.audit_reads"};
  for (int k = 0; k < 2; k++) {
    lua_newtable(L);
    int n = 0;
    if (lua_getfield(L, LUA_REGISTRYINDEX, keys[k]) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -4, ++n);
      }
    }
    lua_pop(L, 1);
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
  }
  return 2;
}

/* torch._check_options(fname, opts, names) -> opts: the checker for Lua
 * functions; names is space-separated (as mtl_reg.opts) or a list. */
static int l_check_options(lua_State *L) {
  const char *fname = luaL_checkstring(L, 1);
  if (lua_istable(L, 3)) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, 3); i <= n; i++) {
      lua_rawgeti(L, 3, i);
      luaL_addchar(&b, ' ');
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_replace(L, 3);
  }
  mtl_check_options(L, 2, fname, luaL_optstring(L, 3, NULL));
  lua_settop(L, 2);
  return 1;
}

/* torch._check_choice(fname, what, value, choices) -> value: an option's
 * value must be one of the space-separated choices. */
static int l_check_choice(lua_State *L) {
  mtl_check_choice(L, 3, luaL_checkstring(L, 1), luaL_checkstring(L, 2), luaL_checkstring(L, 4));
  lua_settop(L, 3);
  return 1;
}

/* torch._closest(word, words) -> the closest of the space-separated words
 * (or of a list) when near enough to be a typo of word, else nil. */
static int l_closest(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  if (lua_istable(L, 2)) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1, m = (lua_Integer)lua_rawlen(L, 2); i <= m; i++) {
      if (lua_rawgeti(L, 2, i) != LUA_TSTRING) { lua_pop(L, 1); continue; }
      luaL_addchar(&b, ' ');
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_replace(L, 2);
  }
  char near[64];
  if (mtl_closest_word(luaL_checkstring(L, 2), s, n, near, sizeof near)) lua_pushstring(L, near);
  else lua_pushnil(L);
  return 1;
}

static const mtl_reg option_regs[] = {
    {"_check_options", l_check_options, MTL_FN,
     "torch._check_options(fname, opts, names) -- raises on a key of opts that is not among names (space-separated "
     "or a list), naming fname and the closest valid name; returns opts", MTL_DATA},
    {"_check_choice", l_check_choice, MTL_FN,
     "torch._check_choice(fname, what, value, choices) -- raises unless value is one of the space-separated choices"},
    {"_closest", l_closest, MTL_FN,
     "torch._closest(word, words) -- the closest of words to word when it looks like a typo, or nil"},
    {"_options_audit", l_options_audit, MTL_FN,
     "torch._options_audit(on) -- tests: check option reads against the declared names; off returns the undeclared "
     "reads and all reads"},
    {NULL, NULL, 0, NULL}};

void mtl_open_options(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, option_regs);
}

int mtl_optfield(lua_State *L, int opt, const char *name) {
  if (audit) audit_read(L, name);
  return lua_getfield(L, opt, name);
}

/* ---- reading arguments ---- */

void mtl_getarg(lua_State *L, int pos, int last_pos, int opt, const char *name) {
  if (opt && audit) audit_read(L, name);
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

/* Raises "<fname>: argument 'name' must be <want>, got <the value at the
 * top>", fname being the running function (none outside one). */
static int arg_error(lua_State *L, const char *name, const char *want) {
  const mtl_reg *r = mtl_running(L);
  const char *got = lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1);
  return luaL_error(L, "%s%sargument '%s' must be %s, got %s", r ? r->name : "", r ? ": " : "", name, want, got);
}

int64_t mtl_opt_int(lua_State *L, int pos, int last_pos, int opt, const char *name, int64_t dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  int64_t v = dflt;
  if (!lua_isnil(L, -1)) {
    int ok;
    v = (int64_t)lua_tointegerx(L, -1, &ok);
    if (!ok) arg_error(L, name, "an integer");
  }
  lua_pop(L, 1);
  return v;
}

double mtl_opt_num(lua_State *L, int pos, int last_pos, int opt, const char *name, double dflt) {
  mtl_getarg(L, pos, last_pos, opt, name);
  double v = dflt;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      arg_error(L, name, "a number");
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
      arg_error(L, name, "a boolean");
    v = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

static const struct {
  const char *alias;
  mt_dtype d;
} dtype_aliases[] = {{"float", MT_FLOAT32}, {"double", MT_FLOAT64}, {"half", MT_FLOAT16}, {"long", MT_INT64},
                     {"int", MT_INT32},     {"short", MT_INT16},    {"uint8", MT_UINT8},  {"byte", MT_UINT8},
                     {"cfloat", MT_COMPLEX64}, {"cdouble", MT_COMPLEX128}};

int mtl_dtype_from_string(const char *s) {
  if (strncmp(s, "torch.", 6) == 0) s += 6;
  int d = mt_dtype_from_name(s);
  for (size_t i = 0; d < 0 && i < sizeof dtype_aliases / sizeof *dtype_aliases; i++)
    if (strcmp(s, dtype_aliases[i].alias) == 0) d = (int)dtype_aliases[i].d;
  return d;
}

void mtl_push_dtype_names(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int d = 0; d < MT_NDTYPE; d++) {
    luaL_addstring(&b, mt_dtype_name((mt_dtype)d));
    luaL_addchar(&b, ' ');
  }
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof *dtype_aliases; i++) {
    luaL_addstring(&b, dtype_aliases[i].alias);
    luaL_addchar(&b, ' ');
  }
  luaL_pushresult(&b);
}

/* Raises "<op>: unknown dtype 'x'" with the closest dtype name. */
static int unknown_dtype(lua_State *L, int idx, const char *op) {
  const char *s = lua_tostring(L, idx), *bare = strncmp(s, "torch.", 6) == 0 ? s + 6 : s;
  char near[32];
  mtl_push_dtype_names(L);
  if (mtl_closest_word(lua_tostring(L, -1), bare, strlen(bare), near, sizeof near))
    return luaL_error(L, "%s: unknown dtype '%s' (did you mean '%s'?)", op, s, near);
  return luaL_error(L, "%s: unknown dtype '%s' (dtypes: %s)", op, s, lua_tostring(L, -1));
}

mt_dtype mtl_check_dtype(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    int d = mtl_dtype_from_string(lua_tostring(L, idx));
    if (d < 0) unknown_dtype(L, idx, op);
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
  if (!lua_isnil(L, -1)) d = mtl_check_dtype(L, -1, mtl_running(L) ? mtl_running(L)->name : name);
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
  if (!lua_isnil(L, -1)) d = mtl_check_device(L, -1, mtl_running(L) ? mtl_running(L)->name : name);
  lua_pop(L, 1);
  return d;
}

mt_tensor *mtl_opt_out(lua_State *L, int opt) {
  if (!opt) return NULL;
  mtl_optfield(L, opt, "out");
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
