/* l_summary.c -- torch.utils.tensorboard._summary: the C helpers of torch.utils.tensorboard
 * (domains/experiment/tensorboard/): CRC-32C and TFRecord framing, PNG
 * encoding, histogram statistics, and the few OS calls the writers need
 * (mkdir -p, host name, pid). Not a public API: the writers wrap it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "../../vision/png.h"
#include "mtl.h"

/* crc32c(s) -> the CRC-32C of string s (an integer). */
static int l_crc32c(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  lua_pushinteger(L, mtd_crc32c(0, s, n));
  return 1;
}

/* masked_crc32c(s) -> TFRecord's masked CRC-32C of s. */
static int l_masked_crc32c(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  lua_pushinteger(L, mtd_crc32c_mask(mtd_crc32c(0, s, n)));
  return 1;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* tfrecord(data) -> the record framing data: uint64 length, masked CRC of
 * those 8 bytes, the data, masked CRC of the data (all little-endian). */
static int l_tfrecord(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  unsigned char head[12], tail[4];
  put_le(head, n, 8);
  put_le(head + 8, mtd_crc32c_mask(mtd_crc32c(0, head, 8)), 4);
  put_le(tail, mtd_crc32c_mask(mtd_crc32c(0, s, n)), 4);
  luaL_Buffer b;
  luaL_buffinitsize(L, &b, n + 16);
  luaL_addlstring(&b, (const char *)head, 12);
  luaL_addlstring(&b, s, n);
  luaL_addlstring(&b, (const char *)tail, 4);
  luaL_pushresult(&b);
  return 1;
}

/* png(img) -> PNG bytes of a contiguous uint8 tensor of shape H x W x C. */
static int l_png(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "png");
  if (t->dtype != MT_UINT8 || t->ndim != 3 || !mt_is_contiguous(t))
    return luaL_error(L, "png: expected a contiguous uint8 tensor of shape HxWxC");
  unsigned char *out;
  size_t n;
  if (mtd_png_encode((const uint8_t *)mt_data(t), t->shape[0], t->shape[1], (int)t->shape[2], &out, &n))
    return luaL_error(L, "png: %s", mt_errmsg());
  lua_pushlstring(L, (const char *)out, n);
  free(out);
  return 1;
}

/* Index of the bucket of v among edges e[0..k] (k buckets; numpy's rule:
 * [e[i], e[i+1]) with the last bucket closed), or -1 outside. */
static int64_t bucket_of(double v, const double *e, int64_t k) {
  if (v < e[0] || v > e[k]) return -1;
  if (v == e[k]) return k - 1;
  int64_t lo = 0, hi = k; /* e[lo] <= v < e[hi] */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (e[mid] <= v) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* histogram(values, bins) -> {min=, max=, num=, sum=, sum_squares=,
 * edges={...}, counts={...}}. bins: a count of equal buckets between the
 * minimum and maximum, or a list of increasing edges. Values are read as
 * float64; NaN or infinite values are an error. */
static int l_histogram(lua_State *L) {
  const char *fn = "add_histogram";
  mt_tensor *t = mtl_check_tensor(L, 1, fn);
  int64_t nb = 0;
  double *e = NULL;
  if (lua_type(L, 2) == LUA_TTABLE) {
    nb = (int64_t)lua_rawlen(L, 2) - 1;
    if (nb < 1) return luaL_error(L, "%s: bins must list at least 2 edges", fn);
    e = lua_newuserdatauv(L, (size_t)(nb + 1) * sizeof *e, 0);
    for (int64_t i = 0; i <= nb; i++) {
      lua_rawgeti(L, 2, i + 1);
      int ok;
      e[i] = lua_tonumberx(L, -1, &ok);
      lua_pop(L, 1);
      if (!ok) return luaL_error(L, "%s: bins edge %d is not a number", fn, (int)(i + 1));
      if (i > 0 && !(e[i] > e[i - 1])) return luaL_error(L, "%s: bins edges must increase", fn);
    }
  } else {
    lua_Integer k = luaL_checkinteger(L, 2);
    if (k < 1 || k > 100000000) return luaL_error(L, "%s: bins must be between 1 and 1e8, got %d", fn, (int)k);
    nb = k;
    e = lua_newuserdatauv(L, (size_t)(nb + 1) * sizeof *e, 0);
  }
  int64_t *cnt = lua_newuserdatauv(L, (size_t)nb * sizeof *cnt, 0);
  memset(cnt, 0, (size_t)nb * sizeof *cnt);
  mt_tensor *d = NULL, *c = NULL;
  MTL_CHECK_OP(L, fn, mt_to_dtype(t, MT_FLOAT64, false, &d));
  mt_status st = mt_contiguous(d, &c);
  mt_release(d);
  MTL_CHECK_OP(L, fn, st);
  const double *v = (const double *)mt_data(c);
  int64_t n = mt_numel(c);
  double mn = INFINITY, mx = -INFINITY, sum = 0, sq = 0;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = v[i];
    if (!isfinite(x)) bad = 1;
    mn = x < mn ? x : mn, mx = x > mx ? x : mx;
    sum += x, sq += x * x;
  }
  if (n == 0 || bad) {
    mt_release(c);
    return luaL_error(L, "%s: %s", fn, n == 0 ? "values is empty" : "values contain NaN or infinity");
  }
  if (lua_type(L, 2) != LUA_TTABLE) { /* numpy: equal buckets over [min, max], widened when flat */
    double lo = mn, hi = mx;
    if (lo == hi) lo -= 0.5, hi += 0.5;
    for (int64_t i = 0; i <= nb; i++) e[i] = lo + (hi - lo) * (double)i / (double)nb;
    e[nb] = hi;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t b = bucket_of(v[i], e, nb);
    if (b >= 0) cnt[b]++;
  }
  mt_release(c);
  lua_createtable(L, 0, 7);
  lua_pushnumber(L, mn), lua_setfield(L, -2, "min");
  lua_pushnumber(L, mx), lua_setfield(L, -2, "max");
  lua_pushnumber(L, (double)n), lua_setfield(L, -2, "num");
  lua_pushnumber(L, sum), lua_setfield(L, -2, "sum");
  lua_pushnumber(L, sq), lua_setfield(L, -2, "sum_squares");
  lua_createtable(L, (int)nb + 1, 0);
  for (int64_t i = 0; i <= nb; i++) lua_pushnumber(L, e[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, "edges");
  lua_createtable(L, (int)nb, 0);
  for (int64_t i = 0; i < nb; i++) lua_pushinteger(L, cnt[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, "counts");
  return 1;
}

/* makedirs(path) -> true, or nil and a message: mkdir -p. */
static int l_makedirs(lua_State *L) {
  size_t n;
  const char *path = luaL_checklstring(L, 1, &n);
  char *p = lua_newuserdatauv(L, n + 1, 0);
  memcpy(p, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    char keep = p[i];
    p[i] = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot create directory '%s': %s", p, strerror(errno));
      return 2;
    }
    p[i] = keep;
  }
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    lua_pushnil(L);
    lua_pushfstring(L, "'%s' exists and is not a directory", path);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_hostname(lua_State *L) {
  char h[256];
  if (gethostname(h, sizeof h) != 0) strcpy(h, "localhost");
  h[sizeof h - 1] = '\0';
  lua_pushstring(L, h);
  return 1;
}

/* walltime() -> seconds since the Unix epoch, microsecond resolution. */
static int l_walltime(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) * 1e-6);
  return 1;
}

static int l_getpid(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)getpid());
  return 1;
}

static const mtl_reg regs[] = {
    {"crc32c", l_crc32c, MTL_FN, "torch.utils.tensorboard._summary.crc32c(s) -- CRC-32C (Castagnoli) of string s"},
    {"masked_crc32c", l_masked_crc32c, MTL_FN, "torch.utils.tensorboard._summary.masked_crc32c(s) -- TFRecord's masked CRC-32C of s"},
    {"tfrecord", l_tfrecord, MTL_FN, "torch.utils.tensorboard._summary.tfrecord(data) -- data framed as one TFRecord"},
    {"png", l_png, MTL_FN, "torch.utils.tensorboard._summary.png(img) -- PNG bytes of a contiguous HxWxC uint8 tensor"},
    {"histogram", l_histogram, MTL_FN,
     "torch.utils.tensorboard._summary.histogram(values, bins) -- min, max, num, sum, sum_squares, edges, counts of a tensor"},
    {"makedirs", l_makedirs, MTL_FN, "torch.utils.tensorboard._summary.makedirs(path) -- mkdir -p: true, or nil and a message"},
    {"hostname", l_hostname, MTL_FN, "torch.utils.tensorboard._summary.hostname() -- this machine's host name"},
    {"walltime", l_walltime, MTL_FN, "torch.utils.tensorboard._summary.walltime() -- seconds since the Unix epoch (sub-second)"},
    {"getpid", l_getpid, MTL_FN, "torch.utils.tensorboard._summary.getpid() -- this process's id"},
    {NULL, NULL, 0, NULL}};

/* require "torch.utils.tensorboard._summary" */
int luaopen_torch_utils_tensorboard__summary(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  lua_pushstring(L, "torch.utils.tensorboard._summary -- C helpers of torch.utils.tensorboard (CRC-32C, TFRecord, PNG, histograms)");
  lua_setfield(L, -2, "__help");
  return 1;
}
