/* l_structure.c -- nested Lua values <-> the JSON structure description that
 * torch.save keeps in the safetensors metadata (docs/serialization.md).
 * Encoding collects the tensors to write; decoding rebuilds the value from
 * data only (nothing is executed) and checks every reference. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "mtl.h"

#define MAX_NESTING 100 /* Lua table levels; 3 JSON levels each stay under MT_JSON_MAXDEPTH */

/* Memory that must be freed even when a Lua error unwinds: a userdata box. */
typedef struct box {
  mt_buf json, path;
  mt_json_doc doc;
} box;

static int box_gc(lua_State *L) {
  box *b = luaL_checkudata(L, 1, "mtl.structure_box");
  mt_buf_free(&b->json);
  mt_buf_free(&b->path);
  mt_json_free(&b->doc);
  return 0;
}

static box *push_box(lua_State *L) {
  box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  if (luaL_newmetatable(L, "mtl.structure_box")) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

/* ---- encoding ---- */
typedef struct enc {
  lua_State *L;
  box *b;
  int seen, names, items, visiting; /* stack slots: tensor->name, name->true, {name, tensor} list, table->true */
  int depth;
} enc;

static const char *where(enc *e) { return e->b->path.n ? e->b->path.p : "the top level"; }

static void put_hex(mt_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    char two[2] = {hex[(unsigned char)s[i] >> 4], hex[(unsigned char)s[i] & 15]};
    mt_buf_put(b, two, 2);
  }
}

/* Strings are JSON strings when valid UTF-8, else {"bytes": hex}. */
static void enc_string(mt_buf *j, const char *s, size_t n) {
  if (mt_utf8_valid(s, n)) {
    mt_buf_json_string(j, s, n);
  } else {
    mt_buf_puts(j, "{\"bytes\":\"");
    put_hex(j, s, n);
    mt_buf_puts(j, "\"}");
  }
}

static void enc_number(lua_State *L, int i, mt_buf *j) {
  if (lua_isinteger(L, i)) {
    mt_buf_printf(j, "%lld", (long long)lua_tointeger(L, i));
    return;
  }
  double d = lua_tonumber(L, i);
  if (isnan(d))
    mt_buf_puts(j, "{\"float\":\"nan\"}");
  else if (isinf(d))
    mt_buf_puts(j, d > 0 ? "{\"float\":\"inf\"}" : "{\"float\":\"-inf\"}");
  else
    mt_buf_json_double(j, d);
}

/* Appends ".key" (or "key" at the top) to the path; returns the old length. */
static size_t path_push(enc *e, int key) {
  mt_buf *p = &e->b->path;
  size_t old = p->n;
  if (old) mt_buf_put(p, ".", 1);
  lua_State *L = e->L;
  if (lua_type(L, key) == LUA_TSTRING) {
    size_t n;
    const char *s = lua_tolstring(L, key, &n);
    mt_buf_put(p, s, n);
  } else if (lua_type(L, key) == LUA_TBOOLEAN) {
    mt_buf_puts(p, lua_toboolean(L, key) ? "true" : "false");
  } else if (lua_isinteger(L, key)) {
    mt_buf_printf(p, "%lld", (long long)lua_tointeger(L, key));
  } else {
    mt_buf_printf(p, "%.14g", lua_tonumber(L, key));
  }
  return old;
}

static void path_pop(enc *e, size_t old) {
  e->b->path.n = old;
  if (e->b->path.p) e->b->path.p[old] = 0;
}

/* A tensor name derived from the path, unused so far (pushed). */
static void push_new_name(enc *e) {
  lua_State *L = e->L;
  const mt_buf *p = &e->b->path;
  const char *base = p->n && mt_utf8_valid(p->p, p->n) && strcmp(p->p, "__metadata__") != 0 ? p->p : "tensor";
  lua_pushstring(L, base);
  for (int k = 2;; k++) {
    lua_pushvalue(L, -1);
    if (lua_rawget(L, e->names) == LUA_TNIL) {
      lua_pop(L, 1);
      return;
    }
    lua_pop(L, 2);
    lua_pushfstring(L, "%s#%d", base, k);
  }
}

static void enc_tensor(enc *e, int i) {
  lua_State *L = e->L;
  lua_pushvalue(L, i);
  if (lua_rawget(L, e->seen) == LUA_TNIL) { /* first time: choose its name */
    lua_pop(L, 1);
    push_new_name(e);
    lua_pushvalue(L, i);
    lua_pushvalue(L, -2);
    lua_rawset(L, e->seen);
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 1);
    lua_rawset(L, e->names);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, i);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, e->items, (lua_Integer)lua_rawlen(L, e->items) + 1);
  }
  size_t n;
  const char *name = lua_tolstring(L, -1, &n);
  mt_buf_puts(&e->b->json, "{\"tensor\":");
  mt_buf_json_string(&e->b->json, name, n);
  mt_buf_puts(&e->b->json, "}");
  lua_pop(L, 1);
}

static void enc_value(enc *e, int i);

typedef struct keyref {
  int type; /* 0 boolean, 1 number, 2 string */
  int isint;
  lua_Integer i;
  lua_Number d;
  const char *s;
  size_t len;
  int slot; /* index in the keys list */
} keyref;

static int cmp_keys(const void *pa, const void *pb) {
  const keyref *a = pa, *b = pb;
  if (a->type != b->type) return a->type - b->type;
  if (a->type == 0) return (int)a->i - (int)b->i;
  if (a->type == 1) {
    if (a->isint && b->isint) return (a->i > b->i) - (a->i < b->i);
    double x = a->isint ? (double)a->i : a->d, y = b->isint ? (double)b->i : b->d;
    if (x != y) return x < y ? -1 : 1;
    return b->isint - a->isint;
  }
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->s, b->s, n);
  return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A table that is not a sequence 1..n: {"map": [[key, value], ...]} with the
 * keys sorted, so that equal tables give equal files. t is the table's slot. */
static void enc_map(enc *e, int t, lua_Integer count) {
  lua_State *L = e->L;
  lua_createtable(L, (int)count, 0);
  int keys = lua_gettop(L);
  keyref *k = lua_newuserdatauv(L, sizeof *k * (size_t)(count ? count : 1), 0);
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    int kt = lua_type(L, -1);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN)
      luaL_error(L, "torch.save: table keys must be strings, numbers or booleans; found a %s key in %s",
                 luaL_typename(L, -1), where(e));
    keyref *r = &k[n];
    memset(r, 0, sizeof *r);
    r->type = kt == LUA_TBOOLEAN ? 0 : kt == LUA_TNUMBER ? 1 : 2;
    if (kt == LUA_TBOOLEAN) r->i = lua_toboolean(L, -1);
    if (kt == LUA_TNUMBER) r->isint = lua_isinteger(L, -1), r->i = lua_tointeger(L, -1), r->d = lua_tonumber(L, -1);
    if (kt == LUA_TSTRING) r->s = lua_tolstring(L, -1, &r->len);
    lua_pushvalue(L, -1);
    lua_rawseti(L, keys, ++n); /* keeps the key (and its string) alive */
    r->slot = (int)n;
  }
  qsort(k, (size_t)n, sizeof *k, cmp_keys);
  mt_buf *j = &e->b->json;
  mt_buf_puts(j, "{\"map\":[");
  for (lua_Integer x = 0; x < n; x++) {
    lua_rawgeti(L, keys, k[x].slot);
    int key = lua_gettop(L);
    mt_buf_puts(j, x ? ",[" : "[");
    if (k[x].type == 0)
      mt_buf_puts(j, k[x].i ? "true" : "false");
    else if (k[x].type == 1)
      enc_number(L, key, j);
    else
      enc_string(j, k[x].s, k[x].len);
    mt_buf_put(j, ",", 1);
    size_t old = path_push(e, key);
    lua_pushvalue(L, key);
    lua_rawget(L, t);
    enc_value(e, lua_gettop(L));
    path_pop(e, old);
    mt_buf_put(j, "]", 1);
    lua_pop(L, 2);
  }
  mt_buf_puts(j, "]}");
  lua_pop(L, 2);
}

static void enc_table(enc *e, int t) {
  lua_State *L = e->L;
  if (++e->depth > MAX_NESTING)
    luaL_error(L, "torch.save: tables nested deeper than %d levels (at %s)", MAX_NESTING, where(e));
  luaL_checkstack(L, 10, "torch.save: tables nested too deeply");
  lua_pushvalue(L, t);
  if (lua_rawget(L, e->visiting) != LUA_TNIL)
    luaL_error(L, "torch.save: the table at %s contains itself; cyclic tables cannot be saved", where(e));
  lua_pop(L, 1);
  lua_pushvalue(L, t);
  lua_pushboolean(L, 1);
  lua_rawset(L, e->visiting);
  lua_Integer len = (lua_Integer)lua_rawlen(L, t), count = 0;
  int seq = 1;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    count++;
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > len) seq = 0;
  }
  if (seq && count == len) {
    mt_buf_puts(&e->b->json, "{\"list\":[");
    for (lua_Integer x = 1; x <= len; x++) {
      if (x > 1) mt_buf_put(&e->b->json, ",", 1);
      lua_pushinteger(L, x);
      size_t old = path_push(e, lua_gettop(L));
      lua_rawgeti(L, t, x);
      enc_value(e, lua_gettop(L));
      path_pop(e, old);
      lua_pop(L, 2);
    }
    mt_buf_puts(&e->b->json, "]}");
  } else {
    enc_map(e, t, count);
  }
  lua_pushvalue(L, t);
  lua_pushnil(L);
  lua_rawset(L, e->visiting);
  e->depth--;
}

static void enc_value(enc *e, int i) {
  lua_State *L = e->L;
  mt_buf *j = &e->b->json;
  switch (lua_type(L, i)) {
  case LUA_TNUMBER:
    enc_number(L, i, j);
    return;
  case LUA_TBOOLEAN:
    mt_buf_puts(j, lua_toboolean(L, i) ? "true" : "false");
    return;
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, i, &n);
    enc_string(j, s, n);
    return;
  }
  case LUA_TTABLE:
    enc_table(e, i);
    return;
  default:
    if (mtl_to_tensor(L, i)) {
      enc_tensor(e, i);
      return;
    }
    luaL_error(L,
               "torch.save: cannot save a %s (at %s); only tensors, numbers, strings, booleans and tables can be saved",
               luaL_typename(L, i), where(e));
  }
}

/* A table of string keys and tensor values only: saved as a plain state dict. */
static int is_flat_state_dict(lua_State *L, int t) {
  if (lua_type(L, t) != LUA_TTABLE) return 0;
  int flat = 1;
  lua_pushnil(L);
  while (flat && lua_next(L, t)) {
    size_t n = 0;
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : NULL;
    flat = k && mtl_to_tensor(L, -1) && mt_utf8_valid(k, n) && strcmp(k, "__metadata__") != 0;
    lua_pop(L, 1);
  }
  if (!flat) lua_pop(L, 1); /* the key left by the interrupted traversal */
  return flat;
}

/* Pushes the {name, tensor} list of a flat state dict, sorted by name. */
static void push_flat_items(lua_State *L, int t) {
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) lua_pop(L, 1), n++;
  keyref *k = lua_newuserdatauv(L, sizeof *k * (size_t)(n ? n : 1), 0);
  lua_Integer x = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    memset(&k[x], 0, sizeof k[x]);
    k[x].type = 2;
    k[x].s = lua_tolstring(L, -1, &k[x].len); /* anchored in t, which is not modified */
    x++;
  }
  qsort(k, (size_t)n, sizeof *k, cmp_keys);
  lua_createtable(L, (int)n, 0);
  for (x = 0; x < n; x++) {
    lua_createtable(L, 2, 0);
    lua_pushlstring(L, k[x].s, k[x].len);
    lua_pushvalue(L, -1);
    lua_rawget(L, t);
    lua_rawseti(L, -3, 2);
    lua_rawseti(L, -2, 1);
    lua_rawseti(L, -2, x + 1);
  }
  lua_remove(L, -2);
}

void mtl_encode_structure(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (is_flat_state_dict(L, idx)) {
    push_flat_items(L, idx);
    lua_pushnil(L);
    return;
  }
  if (!mtl_to_tensor(L, idx) && !lua_istable(L, idx))
    luaL_error(L, "torch.save: expected a tensor or a table to save, got a %s", luaL_typename(L, idx));
  box *b = push_box(L);
  int boxi = lua_gettop(L);
  enc e = {L, b, 0, 0, 0, 0, 0};
  for (int k = 0; k < 4; k++) lua_newtable(L);
  e.seen = boxi + 1, e.names = boxi + 2, e.items = boxi + 3, e.visiting = boxi + 4;
  mt_buf_puts(&b->json, "{\"version\":1,\"root\":");
  enc_value(&e, idx);
  mt_buf_puts(&b->json, "}");
  if (b->json.oom) luaL_error(L, "torch.save: out of memory describing the table");
  lua_pushvalue(L, e.items);
  lua_pushlstring(L, b->json.p, b->json.n);
  lua_replace(L, boxi + 1);
  lua_replace(L, boxi);
  lua_settop(L, boxi + 1);
}

/* ---- decoding ---- */
typedef struct dec {
  lua_State *L;
  int tensors;
  const char *path;
} dec;

static int bad(dec *d, const char *what) {
  return luaL_error(d->L, "torch.load: %s: bad structure metadata (%s)", d->path, what);
}

static int hexdigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void dec_value(dec *d, const mt_json *v);

/* The map on top of the stack, if it carries "__torch_class" = "torch.pkg.Name"
 * (a library class that saved its raw fields, e.g. torch.rl.TensorDict), is
 * replaced by Name.__load(map). Only torch.* names are looked up, through
 * require, so a file can reach library classes only. */
static void revive(dec *d) {
  lua_State *L = d->L;
  int t = lua_gettop(L);
  lua_pushliteral(L, "__torch_class");
  if (lua_rawget(L, t) != LUA_TSTRING) {
    lua_pop(L, 1);
    return;
  }
  size_t n;
  const char *cls = lua_tolstring(L, -1, &n), *dot = strrchr(cls, '.');
  int ok = n > 6 && !strncmp(cls, "torch.", 6) && dot && dot > cls + 5 && dot[1];
  for (size_t i = 0; ok && i < n; i++) ok = cls[i] == '.' || cls[i] == '_' || isalnum((unsigned char)cls[i]);
  if (!ok) bad(d, "__torch_class must name a torch.* class");
  lua_getglobal(L, "require");
  lua_pushlstring(L, cls, (size_t)(dot - cls));
  lua_call(L, 1, 1);
  if (lua_type(L, -1) != LUA_TTABLE || lua_getfield(L, -1, dot + 1) == LUA_TNIL || !lua_istable(L, -1) ||
      lua_getfield(L, -1, "__load") != LUA_TFUNCTION)
    luaL_error(L, "torch.load: %s: the file holds a %s, which this moontorch cannot load", d->path, cls);
  lua_pushvalue(L, t);
  lua_call(L, 1, 1);
  lua_replace(L, t);
  lua_settop(L, t);
}

/* Objects with a single tag: tensor, float, bytes, list, map. */
static void dec_tagged(dec *d, const mt_json *v) {
  lua_State *L = d->L;
  const mt_json *m = v->child;
  if (v->len != 1) bad(d, "an object must have exactly one of tensor, float, bytes, list, map");
  if (!strcmp(m->key, "tensor") && m->type == MT_JSTR) {
    lua_pushlstring(L, m->s, m->len);
    if (lua_rawget(L, d->tensors) == LUA_TNIL)
      luaL_error(L, "torch.load: %s: bad structure metadata (it refers to a tensor '%s' that is not in the file)",
                 d->path, m->s);
  } else if (!strcmp(m->key, "float") && m->type == MT_JSTR) {
    if (!strcmp(m->s, "inf"))
      lua_pushnumber(L, HUGE_VAL);
    else if (!strcmp(m->s, "-inf"))
      lua_pushnumber(L, -HUGE_VAL);
    else if (!strcmp(m->s, "nan"))
      lua_pushnumber(L, NAN);
    else
      bad(d, "float must be inf, -inf or nan");
  } else if (!strcmp(m->key, "bytes") && m->type == MT_JSTR) {
    if (m->len % 2) bad(d, "odd number of hex digits in bytes");
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, m->len / 2 + 1);
    for (size_t i = 0; i < m->len; i += 2) {
      int hi = hexdigit(m->s[i]), lo = hexdigit(m->s[i + 1]);
      if (hi < 0 || lo < 0) bad(d, "bad hex digit in bytes");
      p[i / 2] = (char)(hi << 4 | lo);
    }
    luaL_pushresultsize(&b, m->len / 2);
  } else if (!strcmp(m->key, "list") && m->type == MT_JARR) {
    luaL_checkstack(L, 4, "torch.load: structure nested too deeply");
    lua_createtable(L, m->len > INT32_MAX ? 0 : (int)m->len, 0);
    lua_Integer i = 0;
    for (const mt_json *x = m->child; x; x = x->next) {
      dec_value(d, x);
      lua_rawseti(L, -2, ++i);
    }
  } else if (!strcmp(m->key, "map") && m->type == MT_JARR) {
    luaL_checkstack(L, 4, "torch.load: structure nested too deeply");
    lua_createtable(L, 0, m->len > INT32_MAX ? 0 : (int)m->len);
    for (const mt_json *x = m->child; x; x = x->next) {
      if (x->type != MT_JARR || x->len != 2) bad(d, "map entries must be [key, value] pairs");
      const mt_json *k = x->child;
      int ok =
          k->type == MT_JSTR || k->type == MT_JINT || k->type == MT_JNUM || k->type == MT_JBOOL ||
          (k->type == MT_JOBJ && k->len == 1 && (!strcmp(k->child->key, "bytes") || !strcmp(k->child->key, "float")));
      if (!ok) bad(d, "map keys must be strings, numbers or booleans");
      dec_value(d, k);
      if (lua_type(L, -1) == LUA_TNUMBER && isnan(lua_tonumber(L, -1))) bad(d, "nan cannot be a table key");
      dec_value(d, k->next);
      lua_rawset(L, -3);
    }
    revive(d);
  } else {
    bad(d, "unknown tag");
  }
}

static void dec_value(dec *d, const mt_json *v) {
  lua_State *L = d->L;
  switch (v->type) {
  case MT_JINT:
    lua_pushinteger(L, v->i);
    return;
  case MT_JNUM:
    lua_pushnumber(L, v->d);
    return;
  case MT_JSTR:
    lua_pushlstring(L, v->s, v->len);
    return;
  case MT_JBOOL:
    lua_pushboolean(L, v->b);
    return;
  case MT_JOBJ:
    dec_tagged(d, v);
    return;
  default:
    bad(d, v->type == MT_JNULL ? "null is not a value" : "a bare list where a value was expected");
  }
}

void mtl_decode_structure(lua_State *L, const char *json, size_t n, int tensors_idx, const char *path) {
  tensors_idx = lua_absindex(L, tensors_idx);
  box *b = push_box(L);
  int boxi = lua_gettop(L);
  dec d = {L, tensors_idx, path};
  if (mt_json_parse(json, n, &b->doc)) luaL_error(L, "torch.load: %s: bad structure metadata: %s", path, mt_errmsg());
  const mt_json *root = b->doc.root, *ver = mt_json_get(root, "version"), *val = mt_json_get(root, "root");
  if (!ver || ver->type != MT_JINT || !val) bad(&d, "version and root expected");
  if (ver->i != 1)
    luaL_error(L, "torch.load: %s: written by a newer moontorch (structure version %I; this one reads 1)", path,
               (lua_Integer)ver->i);
  dec_value(&d, val);
  lua_remove(L, boxi);
}
