/* wire.c -- Lua values as bytes for DataLoader worker processes (see
 * wire.h). A value is a tag byte and its payload:
 *   N nil, F false, T true, I int64, D double, S u64 length + bytes,
 *   L a function that is a field of a loaded module: S module, S key,
 *   A u64 pair count + (key, value) pairs,
 *   X tensor: u8 dtype, u8 ndim, i64 shape[ndim], u64 nbytes, u8 where
 *     (0: the bytes follow; 1: u64 offset of a page-aligned region of the
 *     memfd), then its attributes (a table, or N).
 * Both ends are the same executable on the same machine: native byte
 * order, no versioning. */
#define _GNU_SOURCE
#include "wire.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_DEPTH 100
#define PAGE ((uint64_t)4096)

/* ---- encoding ---- */
typedef struct enc {
  lua_State *L;
  mt_buf *b;
  int *fd;
  uint64_t *fdlen;
  const char *who;
  int depth;
  char path[200]; /* where the value being encoded sits, for messages */
} enc;

static void put_u8(mt_buf *b, uint8_t v) { mt_buf_put(b, &v, 1); }
static void put_u64(mt_buf *b, uint64_t v) { mt_buf_put(b, &v, 8); }

static const char *where(const enc *e) { return e->path[0] ? e->path : "the top level"; }

static void refuse(enc *e, const char *what) {
  luaL_error(e->L,
             "%s: a %s cannot be sent back from a worker process (found at %s); samples may hold tensors, numbers, "
             "strings, booleans and plain tables",
             e->who, what, where(e));
}

static void enc_value(enc *e, int idx);

static char index_key; /* registry: {function = {module, key}} over package.loaded */

/* Pushes the registry's index of module functions, made anew when fresh. */
static void push_fn_index(lua_State *L, int fresh) {
  if (!fresh && lua_rawgetp(L, LUA_REGISTRYINDEX, &index_key) == LUA_TTABLE) return;
  if (!fresh) lua_pop(L, 1);
  lua_newtable(L);
  int idx = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushnil(L);
  while (lua_next(L, -2)) { /* module name, module */
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) { /* key, value */
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION) {
          lua_pushvalue(L, -1);
          if (lua_rawget(L, idx) == LUA_TNIL) {
            lua_pushvalue(L, -2); /* the function */
            lua_createtable(L, 2, 0);
            lua_pushvalue(L, -7); /* module name */
            lua_rawseti(L, -2, 1);
            lua_pushvalue(L, -5); /* key */
            lua_rawseti(L, -2, 2);
            lua_rawset(L, idx);
          }
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &index_key);
}

/* A function travels as the module field it is (looked up again with
 * the modules loaded since, before giving up). */
static void enc_function(enc *e, int idx) {
  lua_State *L = e->L;
  for (int fresh = 0; fresh < 2; fresh++) {
    push_fn_index(L, fresh);
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TTABLE) {
      put_u8(e->b, 'L');
      for (int k = 1; k <= 2; k++) {
        size_t n;
        lua_rawgeti(L, -1, k);
        const char *s = lua_tolstring(L, -1, &n);
        put_u8(e->b, 'S');
        put_u64(e->b, n);
        mt_buf_put(e->b, s, n);
        lua_pop(L, 1);
      }
      lua_pop(L, 2);
      return;
    }
    lua_pop(L, 2);
  }
  refuse(e, "function (one that is no field of a loaded module)");
}

/* Writes n bytes at off of the memfd, making it on first use. */
static void fd_write(enc *e, const char *p, size_t n, uint64_t off) {
  if (*e->fd < 0 && (*e->fd = memfd_create("moontorch-batch", MFD_CLOEXEC)) < 0)
    luaL_error(e->L, "%s: cannot make a shared memory file for a batch: %s", e->who, strerror(errno));
  while (n > 0) {
    ssize_t w = pwrite(*e->fd, p, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) luaL_error(e->L, "%s: cannot write a batch to shared memory: %s", e->who, strerror(errno));
    p += w, n -= (size_t)w, off += (uint64_t)w;
  }
}

static void enc_tensor(enc *e, int idx) {
  lua_State *L = e->L;
  mt_tensor *t = mtl_to_tensor(L, idx);
  if (mt_tdevice(t).type != MT_CPU) {
    char d[32];
    luaL_error(L, "%s: a tensor on %s cannot be sent back from a worker process (found at %s); workers make CPU "
               "tensors: move batches to the GPU in the main loop", e->who, mt_device_str(mt_tdevice(t), d, sizeof d),
               where(e));
  }
  mt_tensor *c = NULL;
  if (mt_contiguous(t, &c)) luaL_error(L, "%s: %s", e->who, mt_errmsg());
  mtl_push_tensor(L, c); /* anchors the copy while writing */
  size_t nbytes = (size_t)mt_numel(c) * mt_elsize(c);
  put_u8(e->b, 'X');
  put_u8(e->b, (uint8_t)c->dtype);
  put_u8(e->b, (uint8_t)c->ndim);
  mt_buf_put(e->b, c->shape, (size_t)c->ndim * sizeof c->shape[0]);
  put_u64(e->b, nbytes);
  if (nbytes >= WIRE_BIG) {
    uint64_t off = (*e->fdlen + PAGE - 1) / PAGE * PAGE;
    fd_write(e, mt_data(c), nbytes, off);
    *e->fdlen = off + nbytes;
    put_u8(e->b, 1);
    put_u64(e->b, off);
  } else {
    put_u8(e->b, 0);
    mt_buf_put(e->b, mt_data(c), nbytes);
  }
  lua_pop(L, 1);
  if (mtl_push_attrs(L, idx)) {
    enc_value(e, lua_gettop(L));
    lua_pop(L, 1);
  } else {
    put_u8(e->b, 'N');
  }
}

/* Appends ".key" / "[key]" to the path; returns the old length. */
static size_t path_push(enc *e, int key) {
  size_t old = strlen(e->path);
  lua_State *L = e->L;
  if (lua_type(L, key) == LUA_TSTRING)
    snprintf(e->path + old, sizeof e->path - old, "%s%s", old ? "." : "", lua_tostring(L, key));
  else if (lua_isinteger(L, key))
    snprintf(e->path + old, sizeof e->path - old, "[%lld]", (long long)lua_tointeger(L, key));
  else
    snprintf(e->path + old, sizeof e->path - old, "[%s]", luaL_typename(L, key));
  return old;
}

static void enc_table(enc *e, int idx) {
  lua_State *L = e->L;
  if (lua_getmetatable(L, idx)) refuse(e, "table with a metatable (a class instance)");
  if (++e->depth > MAX_DEPTH)
    luaL_error(L, "%s: a sample nests tables more than %d deep (a cycle?) at %s", e->who, MAX_DEPTH, where(e));
  luaL_checkstack(L, 8, "mtn_wire_encode");
  uint64_t count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) lua_pop(L, 1), count++;
  put_u8(e->b, 'A');
  put_u64(e->b, count);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int top = lua_gettop(L);
    int kt = lua_type(L, top - 1);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN) refuse(e, "table key that is not a string, number or boolean");
    size_t old = path_push(e, top - 1);
    enc_value(e, top - 1);
    enc_value(e, top);
    e->path[old] = 0;
    lua_pop(L, 1);
  }
  e->depth--;
}

static void enc_value(enc *e, int idx) {
  lua_State *L = e->L;
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    put_u8(e->b, 'N');
    return;
  case LUA_TBOOLEAN:
    put_u8(e->b, lua_toboolean(L, idx) ? 'T' : 'F');
    return;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      put_u8(e->b, 'I');
      put_u64(e->b, (uint64_t)lua_tointeger(L, idx));
    } else {
      double d = lua_tonumber(L, idx);
      put_u8(e->b, 'D');
      mt_buf_put(e->b, &d, 8);
    }
    return;
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    put_u8(e->b, 'S');
    put_u64(e->b, n);
    mt_buf_put(e->b, s, n);
    return;
  }
  case LUA_TTABLE:
    enc_table(e, idx);
    return;
  case LUA_TFUNCTION:
    enc_function(e, idx);
    return;
  default:
    if (mtl_peek_tensor(L, idx)) {
      enc_tensor(e, idx);
      return;
    }
    refuse(e, luaL_typename(L, idx));
  }
}

void mtn_wire_encode(lua_State *L, int idx, mt_buf *msg, int *fd, uint64_t *fdlen, const char *who) {
  enc e = {L, msg, fd, fdlen, who, 0, {0}};
  enc_value(&e, lua_absindex(L, idx));
}

/* ---- decoding ---- */
typedef struct dec {
  lua_State *L;
  const char *p, *end;
  int fd;
  uint64_t fdlen;
  const char *who;
  int depth;
} dec;

static void bad(dec *d, const char *why) { luaL_error(d->L, "%s: a malformed message from a worker: %s", d->who, why); }

static void take(dec *d, void *out, size_t n) {
  if ((size_t)(d->end - d->p) < n) bad(d, "truncated");
  memcpy(out, d->p, n);
  d->p += n;
}

static uint8_t get_u8(dec *d) {
  uint8_t v;
  take(d, &v, 1);
  return v;
}

static uint64_t get_u64(dec *d) {
  uint64_t v;
  take(d, &v, 8);
  return v;
}

static void dec_value(dec *d);

static void dec_tensor(dec *d) {
  lua_State *L = d->L;
  int dt = get_u8(d), ndim = get_u8(d);
  if (dt >= MT_NDTYPE || ndim > MT_MAXDIM) bad(d, "a tensor of unknown dtype or rank");
  int64_t shape[MT_MAXDIM];
  take(d, shape, (size_t)ndim * sizeof shape[0]);
  uint64_t nbytes = get_u64(d);
  int64_t n = mt_checked_numel(shape, ndim);
  if (n < 0 || (uint64_t)n * mt_dtype_size((mt_dtype)dt) != nbytes) bad(d, "a tensor whose size does not match its shape");
  mt_tensor *t = NULL;
  if (get_u8(d) == 1) {
    uint64_t off = get_u64(d);
    if (d->fd < 0 || off % PAGE || off > d->fdlen || nbytes > d->fdlen - off || nbytes == 0) bad(d, "a shared tensor outside its file");
    void *map = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, d->fd, (off_t)off);
    if (map == MAP_FAILED) luaL_error(L, "%s: cannot map a batch from a worker: %s", d->who, strerror(errno));
    if (mt_from_mapping(map, nbytes, shape, ndim, (mt_dtype)dt, &t)) luaL_error(L, "%s: %s", d->who, mt_errmsg());
  } else {
    if ((uint64_t)(d->end - d->p) < nbytes) bad(d, "truncated tensor data");
    if (mt_empty(shape, ndim, (mt_dtype)dt, mt_cpu(), &t)) luaL_error(L, "%s: %s", d->who, mt_errmsg());
    memcpy(mt_data(t), d->p, nbytes);
    d->p += nbytes;
  }
  mtl_push_tensor(L, t);
  dec_value(d); /* the attributes */
  if (lua_istable(L, -1)) mtl_set_attrs(L, -2, -1);
  lua_pop(L, 1);
}

static void dec_value(dec *d) {
  lua_State *L = d->L;
  luaL_checkstack(L, 4, "mtn_wire_decode");
  switch (get_u8(d)) {
  case 'N':
    lua_pushnil(L);
    return;
  case 'F':
    lua_pushboolean(L, 0);
    return;
  case 'T':
    lua_pushboolean(L, 1);
    return;
  case 'I':
    lua_pushinteger(L, (lua_Integer)get_u64(d));
    return;
  case 'D': {
    double v;
    take(d, &v, 8);
    lua_pushnumber(L, v);
    return;
  }
  case 'S': {
    uint64_t n = get_u64(d);
    if ((uint64_t)(d->end - d->p) < n) bad(d, "truncated string");
    lua_pushlstring(L, d->p, (size_t)n);
    d->p += n;
    return;
  }
  case 'A': {
    uint64_t count = get_u64(d);
    if (count > (uint64_t)(d->end - d->p) / 2) bad(d, "a table larger than its message");
    if (++d->depth > MAX_DEPTH) bad(d, "tables nested too deep");
    lua_createtable(L, 0, (int)(count < 1u << 20 ? count : 1u << 20));
    for (uint64_t i = 0; i < count; i++) {
      dec_value(d);
      dec_value(d);
      if (lua_isnil(L, -2)) bad(d, "a nil table key");
      lua_rawset(L, -3);
    }
    d->depth--;
    return;
  }
  case 'X':
    dec_tensor(d);
    return;
  case 'L': { /* package.loaded[module][key] */
    dec_value(d);
    dec_value(d);
    if (!lua_isstring(L, -2) || !lua_isstring(L, -1)) bad(d, "a function name that is no string");
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushvalue(L, -3);
    if (lua_rawget(L, -2) != LUA_TTABLE) bad(d, "a function of a module this process has not loaded");
    lua_pushvalue(L, -3);
    if (lua_rawget(L, -2) != LUA_TFUNCTION) bad(d, "a module field that is no function here");
    lua_replace(L, -5);
    lua_pop(L, 3);
    return;
  }
  default:
    bad(d, "an unknown tag");
  }
}

void mtn_wire_decode(lua_State *L, const char *msg, size_t n, int fd, uint64_t fdlen, const char *who) {
  dec d = {L, msg, msg + n, fd, fdlen, who, 0};
  dec_value(&d);
  if (d.p != d.end) bad(&d, "bytes left after the value");
}
