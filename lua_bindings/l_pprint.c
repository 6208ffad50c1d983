/* l_pprint.c -- torch.pformat and torch.pprint: any Lua value as readable
 * text, for the REPL's auto-print. Tables nest, keys sorted (array part
 * first, then numbers, then strings in natural order), long tables elided
 * with a count, cycles marked, tensors inside tables summarized in one line
 * ("Tensor 3x4 float32"), objects with __tostring shown through it. Tables
 * are read raw (no __index or __pairs runs); only __tostring is called. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mtl.h"

#define DEF_WIDTH 80
#define DEF_DEPTH 5
#define DEF_ITEMS 20 /* entries shown per table before eliding */
#define BUDGET 400   /* entries shown in all, over every table */
#define MAX_STR 120  /* bytes of a string key shown */
#define MIN_STR 40   /* room for a string value, however little the line has left */

typedef struct pp {
  lua_State *L;
  int width, depth, items;
  int budget; /* entries that may still be shown */
  int open;   /* stack index: table -> path, for the tables being printed */
} pp;

/* A key of a table other than its array part, for sorting. The key itself
 * stays anchored in the keys table at `slot`, so `s` stays valid. */
typedef struct key {
  int rank; /* 0 number, 1 string, 2 boolean, 3 anything else */
  lua_Integer i;
  double d;
  bool is_int;
  const char *s;
  size_t len;
  int slot;
} key;

static void render(pp *p, int idx, int path, int ind, int col, int level);

/* ---- small texts ---- */

/* The escape of byte c inside a quoted string (c itself if none). */
static const char *escape(unsigned char c, char buf[8]) {
  if (c == '"' || c == '\\')
    snprintf(buf, 8, "\\%c", c);
  else if (c == '\n')
    snprintf(buf, 8, "\\n");
  else if (c == '\t')
    snprintf(buf, 8, "\\t");
  else if (c == '\r')
    snprintf(buf, 8, "\\r");
  else if (c < 32 || c == 127)
    snprintf(buf, 8, "\\%d", c);
  else
    buf[0] = (char)c, buf[1] = '\0';
  return buf;
}

/* Appends s as a quoted string with escapes. If that takes more than
 * `room` characters, it is cut at a character start and its length noted:
 * "abc..." (300 bytes). */
static void add_quoted(luaL_Buffer *b, const char *s, size_t len, size_t room) {
  char buf[8], note[48];
  size_t full = 2;
  for (size_t i = 0; i < len && full <= room; i++) full += strlen(escape((unsigned char)s[i], buf));
  size_t nl = (size_t)snprintf(note, sizeof note, "...\" (%zu bytes)", len);
  size_t limit = full <= room ? full : room > nl + 1 ? room - nl : 1, out = 1;
  luaL_addchar(b, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    escape(c, buf);
    if (full > room && (c & 0xC0) != 0x80 && out + strlen(buf) > limit) {
      luaL_addstring(b, note);
      return;
    }
    luaL_addstring(b, buf);
    out += strlen(buf);
  }
  luaL_addchar(b, '"');
}

static void push_quoted(lua_State *L, const char *s, size_t len, size_t room) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  add_quoted(&b, s, len, room);
  luaL_pushresult(&b);
}

/* lua_CFunction(v): tostring(v) with __tostring and __name honoured. */
static int tostring_raw(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

/* Pushes tostring(value at idx); an error in its __tostring becomes the text
 * "<error in __tostring: ...>" rather than stopping the whole print. */
static void push_tostring(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, tostring_raw);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    lua_pushfstring(L, "<error in __tostring: %s>", msg ? msg : "(not a string)");
    lua_remove(L, -2);
  }
}

/* Pushes the one-line summary of tensor t: "Tensor 3x4 float32", with the
 * device when not the CPU and "requires_grad" when it does. */
static void push_summary(lua_State *L, const mt_tensor *t) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "Tensor ");
  char buf[48];
  if (t->ndim == 0) luaL_addstring(&b, "0-dim");
  for (int d = 0; d < t->ndim; d++) {
    snprintf(buf, sizeof buf, d ? "x%lld" : "%lld", (long long)t->shape[d]);
    luaL_addstring(&b, buf);
  }
  luaL_addchar(&b, ' ');
  luaL_addstring(&b, mt_dtype_name((mt_dtype)t->dtype));
  if (mt_tdevice(t).type != MT_CPU) {
    luaL_addchar(&b, ' ');
    luaL_addstring(&b, mt_device_str(mt_tdevice(t), buf, sizeof buf));
  }
  if (mtg_requires_grad(t)) luaL_addstring(&b, " requires_grad");
  luaL_pushresult(&b);
}

/* True if a string key can be shown bare (state dict names such as
 * "layers.1.weight"): printable, no separators or quotes, not a number. */
static bool bare_key(lua_State *L, const char *s, size_t len) {
  if (len == 0) return false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c <= ' ' || c >= 127 || strchr(":\"',[]{}=\\", c)) return false;
  }
  if (lua_stringtonumber(L, s) == 0) return true;
  lua_pop(L, 1);
  return false;
}

/* Pushes the text of the key at idx: bare or quoted strings, other keys in
 * brackets ("[10]", "[true]", "[table: 0x...]"). */
static void push_key(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  size_t len;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tolstring(L, idx, &len);
    if (bare_key(L, s, len))
      lua_pushvalue(L, idx);
    else
      push_quoted(L, s, len, MAX_STR);
    return;
  }
  const mt_tensor *t = mtl_peek_tensor(L, idx);
  if (t)
    push_summary(L, t);
  else
    push_tostring(L, idx);
  lua_pushfstring(L, "[%s]", lua_tostring(L, -1));
  lua_remove(L, -2);
}

/* Pushes the path of a child of the table whose path is `parent`:
 * parent.name, parent[3] or parent["odd key"]. */
static void push_child_path(lua_State *L, const char *parent, int key_idx) {
  key_idx = lua_absindex(L, key_idx);
  size_t len;
  if (lua_type(L, key_idx) == LUA_TSTRING) {
    const char *s = lua_tolstring(L, key_idx, &len);
    bool ident = len > 0 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == len &&
                 !(s[0] >= '0' && s[0] <= '9');
    if (ident) {
      lua_pushfstring(L, "%s.%s", parent, s);
    } else {
      push_quoted(L, s, len, 40);
      lua_pushfstring(L, "%s[%s]", parent, lua_tostring(L, -1));
      lua_remove(L, -2);
    }
  } else if (lua_type(L, key_idx) == LUA_TNUMBER) {
    lua_pushvalue(L, key_idx); /* lua_tostring would turn the key itself into a string */
    lua_pushfstring(L, "%s[%s]", parent, lua_tostring(L, -1));
    lua_remove(L, -2);
  } else {
    lua_pushfstring(L, "%s[?]", parent);
  }
}

/* ---- key order ---- */

/* Natural order: digit runs compare as numbers ("layer2" < "layer10"),
 * everything else byte by byte; ties broken by plain byte order. */
static int natural_cmp(const char *a, size_t na, const char *b, size_t nb) {
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t si = i, sj = j;
      while (si < na && a[si] == '0') si++;
      while (sj < nb && b[sj] == '0') sj++;
      size_t ei = si, ej = sj;
      while (ei < na && a[ei] >= '0' && a[ei] <= '9') ei++;
      while (ej < nb && b[ej] >= '0' && b[ej] <= '9') ej++;
      if (ei - si != ej - sj) return ei - si < ej - sj ? -1 : 1;
      int c = memcmp(a + si, b + sj, ei - si);
      if (c != 0) return c;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
      i++;
      j++;
    }
  }
  if (i < na || j < nb) return i < na ? 1 : -1;
  size_t n = na < nb ? na : nb;
  int c = memcmp(a, b, n);
  return c != 0 ? c : (na > nb) - (na < nb);
}

static int key_cmp(const void *pa, const void *pb) {
  const key *a = pa, *b = pb;
  if (a->rank != b->rank) return a->rank - b->rank;
  if (a->rank == 0) {
    if (a->is_int && b->is_int) return (a->i > b->i) - (a->i < b->i);
    return (a->d > b->d) - (a->d < b->d);
  }
  if (a->rank == 1) return natural_cmp(a->s, a->len, b->s, b->len);
  if (a->rank == 2) return (int)a->i - (int)b->i;
  return a->slot - b->slot; /* other keys: in the order met */
}

/* Raises "interrupted" on Ctrl-C, looking once per 64K entries read
 * (printing a table of millions of entries takes a while). */
static void check_interrupt(lua_State *L, lua_Integer n) {
  if ((n & 0xFFFF) == 0 && mt_interrupted()) luaL_error(L, "interrupted");
}

/* Fills *e from the key on top of the stack; slot: where it is anchored. */
static void read_key(lua_State *L, key *e, int slot) {
  memset(e, 0, sizeof *e);
  e->slot = slot;
  switch (lua_type(L, -1)) {
  case LUA_TNUMBER:
    e->rank = 0;
    e->is_int = lua_isinteger(L, -1);
    e->i = lua_tointeger(L, -1);
    e->d = lua_tonumber(L, -1);
    break;
  case LUA_TSTRING:
    e->rank = 1;
    e->s = lua_tolstring(L, -1, &e->len);
    break;
  case LUA_TBOOLEAN:
    e->rank = 2;
    e->i = lua_toboolean(L, -1);
    break;
  default:
    e->rank = 3;
  }
}

/* A bounded heap of keys: with sign 1 its root is the largest (it keeps
 * the smallest keys offered), with sign -1 the smallest. */
typedef struct heap {
  key *a;
  lua_Integer n, cap;
  int sign;
} heap;

static bool above(const heap *h, lua_Integer i, lua_Integer j) { return h->sign * key_cmp(&h->a[i], &h->a[j]) > 0; }

static void swap_keys(key *a, key *b) {
  key t = *a;
  *a = *b;
  *b = t;
}

/* Offers e; returns true if the heap kept it. */
static bool heap_offer(heap *h, const key *e) {
  if (h->cap == 0) return false;
  lua_Integer i;
  if (h->n < h->cap) {
    i = h->n++;
    h->a[i] = *e;
    for (; i > 0 && above(h, i, (i - 1) / 2); i = (i - 1) / 2) swap_keys(&h->a[i], &h->a[(i - 1) / 2]);
    return true;
  }
  if (h->sign * key_cmp(e, &h->a[0]) >= 0) return false;
  h->a[0] = *e;
  for (i = 0;;) {
    lua_Integer c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && above(h, c + 1, c)) c++;
    if (!above(h, c, i)) break;
    swap_keys(&h->a[i], &h->a[c]);
    i = c;
  }
  return true;
}

/* The keys of a table outside its array part, as far as a print needs
 * them: the `cap` smallest and the `cap / 4` largest in key order, each
 * part sorted. A table with no more than cap such keys has all of them in
 * the first part. Memory stays O(cap), time O(n log cap), one pass. */
typedef struct keyset {
  lua_Integer n;      /* keys outside the array part */
  key *small, *large; /* sorted */
  lua_Integer nsmall, nlarge;
} keyset;

/* Fills ks from the table at t with array part 1..narr. Pushes the key
 * storage (a userdata) and a table anchoring the keys kept, so that their
 * strings stay valid while they are shown. */
static void collect_keys(lua_State *L, int t, lua_Integer narr, lua_Integer cap, keyset *ks) {
  key *all = lua_newuserdatauv(L, (size_t)(cap + cap / 4 + 1) * sizeof *all, 0);
  lua_newtable(L);
  int anchor = lua_gettop(L), slot = 0;
  heap small = {all, 0, cap, 1}, large = {all + cap, 0, cap / 4, -1};
  lua_Integer seen = 0, n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    check_interrupt(L, ++seen);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= narr) continue;
    n++;
    key e;
    read_key(L, &e, slot + 1);
    bool kept = heap_offer(&small, &e);
    kept = heap_offer(&large, &e) || kept;
    if (kept) {
      lua_pushvalue(L, -1);
      lua_rawseti(L, anchor, ++slot);
    }
  }
  qsort(small.a, (size_t)small.n, sizeof *all, key_cmp);
  qsort(large.a, (size_t)large.n, sizeof *all, key_cmp);
  *ks = (keyset){n, small.a, large.a, small.n, large.n};
}

/* Key number r (0-based, in key order) of ks: one of the smallest or one
 * of the largest kept. */
static const key *key_at(const keyset *ks, lua_Integer r) {
  if (r < ks->nsmall && (ks->n <= ks->nsmall || r < ks->n - ks->nlarge)) return &ks->small[r];
  return &ks->large[ks->nlarge - (ks->n - r)];
}

/* ---- tables ---- */

/* Length of the array part: t[1..n] all non-nil. */
static lua_Integer array_len(lua_State *L, int t) {
  lua_Integer n = 0;
  while (lua_rawgeti(L, t, n + 1) != LUA_TNIL) {
    lua_pop(L, 1);
    check_interrupt(L, ++n);
  }
  lua_pop(L, 1);
  return n;
}

/* Pushes an entry of the table at t, whose path string is at `path`: the
 * key k (anchored at its slot in `anchor`), or the array index i when k is
 * NULL. Pushes the key's text (none for the array part), then the value's.
 * Returns true if it pushed a key; sets *atom when the value is a number,
 * boolean or string. */
static bool push_entry(pp *p, int t, int path, const key *k, int anchor, lua_Integer i, int ind, int level,
                       bool *atom) {
  lua_State *L = p->L;
  if (k)
    lua_rawgeti(L, anchor, k->slot);
  else
    lua_pushinteger(L, i);
  int top = lua_gettop(L); /* top: the key, top + 1: the child's path, top + 2: the value */
  lua_pushvalue(L, top);
  int type = lua_rawget(L, t);
  *atom = type == LUA_TNUMBER || type == LUA_TBOOLEAN || type == LUA_TSTRING;
  if (type == LUA_TTABLE)
    push_child_path(L, lua_tostring(L, path), top);
  else
    lua_pushnil(L);
  lua_insert(L, top + 1);
  size_t klen = 0;
  if (k) {
    push_key(L, top);
    klen = lua_rawlen(L, -1) + 2;
    lua_replace(L, top);
  }
  render(p, top + 2, top + 1, ind + 2, ind + 2 + (int)klen, level + 1);
  int keep = k ? top + 1 : top;
  lua_replace(L, keep);
  lua_settop(L, keep);
  return k != NULL;
}

/* Joins the n item texts above `base` (each "key", "value" or just
 * "value", has_key[] telling) into the table's text: one line if it fits in
 * the width left after `col` and no item spans lines, else one item per
 * line, indented by ind + 2, with the closing brace at ind; unkeyed numbers,
 * booleans and strings (packable[]) are packed several to a line. */
static void join_items(pp *p, int base, int n, const bool *has_key, const bool *packable, int ind, int col) {
  lua_State *L = p->L;
  size_t total = 2;
  bool flat = true;
  for (int e = 0, s = base + 1; e < n; e++) {
    size_t kl = 0, vl;
    if (has_key[e]) lua_tolstring(L, s++, &kl);
    const char *v = lua_tolstring(L, s++, &vl);
    if (memchr(v, '\n', vl)) flat = false;
    total += (has_key[e] ? kl + 2 : 0) + vl + 2;
  }
  if (col >= p->width || total > (size_t)(p->width - col)) flat = false;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '{');
  int linelen = p->width; /* no packing onto the line of the brace */
  for (int e = 0, s = base + 1; e < n; e++) {
    size_t kl = 0, vl;
    const char *k = has_key[e] ? lua_tolstring(L, s++, &kl) : NULL;
    const char *v = lua_tolstring(L, s++, &vl);
    bool one_line = !memchr(v, '\n', vl), atom = !k && one_line && packable[e];
    if (e > 0) luaL_addchar(&b, ',');
    if (flat) {
      if (e > 0) luaL_addchar(&b, ' ');
    } else if (atom && linelen + 2 + (int)vl <= p->width) {
      luaL_addchar(&b, ' ');
      linelen += 2 + (int)vl;
    } else {
      luaL_addchar(&b, '\n');
      for (int i = 0; i < ind + 2; i++) luaL_addchar(&b, ' ');
      linelen = atom ? ind + 2 + (int)vl : p->width; /* other items stand alone */
    }
    if (k) {
      luaL_addlstring(&b, k, kl);
      luaL_addstring(&b, ": ");
    }
    luaL_addlstring(&b, v, vl);
  }
  if (!flat) {
    luaL_addchar(&b, '\n');
    for (int i = 0; i < ind; i++) luaL_addchar(&b, ' ');
  }
  luaL_addchar(&b, '}');
  luaL_pushresult(&b);
}

/* Pushes the text of the plain table at t with its path at `path` (already
 * known to be neither folded nor a cycle); ind, col, level as for render.
 * Tables longer than p->items show their first and last entries around a
 * "... (N more)" item. */
static void render_table(pp *p, int t, int path, int ind, int col, int level) {
  lua_State *L = p->L;
  lua_Integer narr = array_len(L, t);
  keyset ks;
  collect_keys(L, t, narr, p->items, &ks);
  int anchor = lua_gettop(L);
  lua_Integer total = narr + ks.n, head = total, tail = 0;
  if (total > p->items) {
    tail = p->items / 4;
    head = p->items - tail;
  }
  if (head + tail > p->budget) { /* the output as a whole is long: keep a little */
    head = p->budget > 1 ? p->budget - 1 : 1;
    tail = p->budget > 1 ? 1 : 0;
  }
  p->budget -= (int)(head + tail);
  bool gap = head + tail < total;
  int n = (int)(head + tail) + gap; /* items, the "... (N more)" one included */
  luaL_checkstack(L, 2 * n + LUA_MINSTACK, "pformat: too many entries");
  bool *has_key = lua_newuserdatauv(L, 2 * (size_t)n, 0), *atom = has_key + n;
  int base = lua_gettop(L);
  for (int i = 0; i < n; i++) {
    if (gap && i == head) {
      has_key[i] = false;
      atom[i] = true;
      lua_pushfstring(L, "... (%I more)", (LUAI_UACINT)(total - head - tail));
      continue;
    }
    /* entry e: t[e + 1] in the array part, else key number e - narr */
    lua_Integer e = i < head ? i : total - tail + (i - head - gap);
    const key *k = e < narr ? NULL : key_at(&ks, e - narr);
    has_key[i] = push_entry(p, t, path, k, anchor, e + 1, ind, level, &atom[i]);
  }
  join_items(p, base, n, has_key, atom, ind, col);
  lua_replace(L, anchor - 1); /* over the keys */
  lua_settop(L, anchor - 1);
}

/* Re-indents the multi-line text on top of the stack: every line after the
 * first gets `ind` more spaces (a __tostring result nested in a table). */
static void indent_lines(lua_State *L, int ind) {
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  if (ind <= 0 || !memchr(s, '\n', len)) return;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < len; i++) {
    luaL_addchar(&b, s[i]);
    if (s[i] == '\n')
      for (int k = 0; k < ind; k++) luaL_addchar(&b, ' ');
  }
  luaL_pushresult(&b);
  lua_remove(L, -2);
}

/* Pushes the text of the value at idx. `path` is the stack index of its
 * path string ("root.a[2]", used to name cycles; read only for tables),
 * `ind` the indentation of the line it starts on, `col` the column where it
 * starts, `level` its depth (0: the value printed, where strings print raw
 * and tensors in full, as print shows them). */
static void render(pp *p, int idx, int path, int ind, int col, int level) {
  lua_State *L = p->L;
  idx = lua_absindex(L, idx);
  const mt_tensor *t = mtl_peek_tensor(L, idx);
  int type = lua_type(L, idx);
  if (t && level > 0 && t->ndim > 0) {
    push_summary(L, t);
    return;
  }
  if (type == LUA_TSTRING && level > 0) {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    push_quoted(L, s, len, p->width - col - 1 > MIN_STR ? (size_t)(p->width - col - 1) : MIN_STR);
    return;
  }
  if (type != LUA_TTABLE || luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
    if (type == LUA_TTABLE) lua_pop(L, 1);
    push_tostring(L, idx);
    indent_lines(L, ind);
    return;
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, p->open) == LUA_TSTRING) { /* a table printed further up */
    lua_pushfstring(L, "<cycle: %s>", lua_tostring(L, -1));
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  const char *name = NULL; /* a class name from the metatable's __name */
  if (luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
    if (lua_type(L, -1) == LUA_TSTRING) name = lua_tostring(L, -1); /* the metatable keeps it */
    lua_pop(L, 1);
  }
  int prefix = name ? (int)strlen(name) + 1 : 0;
  if (level >= p->depth || p->budget <= 0) {
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) lua_pop(L, 1), check_interrupt(L, ++n);
    if (n > 0)
      lua_pushfstring(L, "{... %I %s}", (LUAI_UACINT)n, n == 1 ? "entry" : "entries");
    else
      lua_pushliteral(L, "{}");
  } else {
    lua_pushvalue(L, idx);
    lua_pushvalue(L, path);
    lua_rawset(L, p->open);
    render_table(p, idx, path, ind, col + prefix, level);
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, p->open);
  }
  if (name) {
    lua_pushfstring(L, "%s %s", name, lua_tostring(L, -1));
    lua_remove(L, -2);
  }
}

/* Reads the options table at idx (0: none) into p. */
static void read_options(lua_State *L, int idx, pp *p) {
  p->width = DEF_WIDTH;
  p->depth = DEF_DEPTH;
  p->items = DEF_ITEMS;
  if (idx == 0 || lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  mtl_check_options(L, idx, "pformat", "width depth max_items");
  static const char *const names[] = {"width", "depth", "max_items"};
  int *fields[] = {&p->width, &p->depth, &p->items};
  static const int lows[] = {20, 1, 2};
  for (int i = 0; i < 3; i++) {
    if (lua_getfield(L, idx, names[i]) != LUA_TNIL) {
      lua_Integer v = luaL_checkinteger(L, -1);
      if (v < lows[i] || v > 100000)
        luaL_error(L, "pformat: %s must be in %d..100000, got %I", names[i], lows[i], (LUAI_UACINT)v);
      *fields[i] = (int)v;
    }
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1);
    bool known = false;
    for (int i = 0; i < 3; i++) known = known || (lua_type(L, -1) == LUA_TSTRING && strcmp(k, names[i]) == 0);
    if (!known) luaL_error(L, "pformat: unknown option '%s' (options are width, depth, max_items)", k);
  }
}

int mtl_pformat(lua_State *L) {
  luaL_checkany(L, 1);
  pp p = {L, 0, 0, 0, BUDGET, 0};
  read_options(L, lua_gettop(L) >= 2 ? 2 : 0, &p);
  p.budget = BUDGET > p.items ? BUDGET : p.items;
  lua_settop(L, 1);
  lua_newtable(L);
  p.open = lua_gettop(L);
  lua_pushliteral(L, "root");
  render(&p, 1, 3, 0, 0, 0);
  return 1;
}

/* torch.pprint(...): pformat of each value, tab-separated, then a newline. */
static int l_pprint(lua_State *L) {
  int n = lua_gettop(L);
  for (int i = 1; i <= n; i++) {
    lua_pushcfunction(L, mtl_pformat);
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (i > 1) lua_writestring("\t", 1);
    lua_writestring(s, len);
    lua_pop(L, 1);
  }
  lua_writeline();
  return 0;
}

static const mtl_reg regs[] = {
    {"pformat", mtl_pformat, MTL_FN,
     "torch.pformat(v[, {width=80, depth=5, max_items=20}]) -- v as readable text: nested tables with sorted keys, "
     "tensors summarized, long tables elided, cycles marked (what the REPL prints)",
     MTL_DATA /* argument 1 is any value; the options (argument 2) are checked by read_options */},
    {"pprint", l_pprint, MTL_FN, "torch.pprint(...) -- prints each value as torch.pformat shows it", MTL_DATA},
    {NULL, NULL, 0, NULL}};

void mtl_open_pprint(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
