/* l_soxr.c -- torch.audio's "soxr_hq" resampling through libsoxr: a stream
 * object over the rows of [rows, time] that takes blocks and hands back
 * what soxr has ready, and a flush that drains it. The rows are split in
 * groups, one multi-channel soxr resampler each (its filter designed once
 * for the group), the groups run in parallel by mt_parallel_for. The
 * whole-signal form (functional/_resampling.lua) is one block and a flush,
 * so both give the same samples. CPU float32/float64 only; the Lua side
 * moves other devices through the host and checks grads. */
#include <math.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>

#include "mtl.h"

#define FN "torch.audio._soxr"
#define MT_SOXR "torch.audio.soxr_stream"

typedef struct sx_stream {
  soxr_t *s; /* a resampler per group: rows [g * rows / ngroups, (g + 1) * rows / ngroups) */
  int64_t rows, ngroups;
  double orig, nw;
  bool f64;
} sx_stream;

/* one row's output of one call, grown as soxr delivers */
typedef struct sx_buf {
  char *p;
  int64_t len, cap;
} sx_buf;

/* one call over every group: x (or NULL: drain) of n samples a row */
typedef struct sx_call {
  sx_stream *st;
  const mt_tensor *x;
  int64_t n;
  size_t esize;
  sx_buf *out;
  const char **err; /* per group */
} sx_call;

static int64_t group_start(const sx_stream *st, int64_t g) { return g * st->rows / st->ngroups; }

static void free_resamplers(sx_stream *st) {
  for (int64_t g = 0; st->s && g < st->ngroups; g++)
    if (st->s[g]) soxr_delete(st->s[g]);
  free(st->s);
  st->s = NULL;
}

static sx_stream *check_stream(lua_State *L) {
  sx_stream *st = luaL_checkudata(L, 1, MT_SOXR);
  if (!st->s) luaL_error(L, "%s: the stream is closed", FN);
  return st;
}

/* room for `more` samples after len in rows [r0, r1) (their lengths are equal) */
static bool reserve(sx_buf *b, int64_t r0, int64_t r1, int64_t more, size_t esize) {
  if (b[r0].len + more <= b[r0].cap) return true;
  int64_t cap = (b[r0].len + more) * 2;
  for (int64_t r = r0; r < r1; r++) {
    char *p = realloc(b[r].p, (size_t)cap * esize);
    if (!p) return false;
    b[r].p = p, b[r].cap = cap;
  }
  return true;
}

enum { FEED = 8192 }; /* input samples a row per soxr_process call: soxr's buffers stay small */

/* feeds group g's rows (or, x NULL, drains its resampler) into their
 * buffers, FEED samples at a time */
static const char *pump_group(const sx_call *c, int64_t g, const void **in, void **out) {
  int64_t r0 = group_start(c->st, g), r1 = group_start(c->st, g + 1), done_in = 0;
  int64_t chunk = (int64_t)ceil((double)FEED * c->st->nw / c->st->orig) + 1024;
  if (!reserve(c->out, r0, r1, (int64_t)ceil((double)c->n * c->st->nw / c->st->orig) + 1024, c->esize))
    return "out of memory";
  for (;;) {
    if (!reserve(c->out, r0, r1, chunk, c->esize)) return "out of memory";
    for (int64_t r = r0; r < r1; r++) {
      if (c->x) in[r - r0] = mt_data(c->x) + (size_t)(r * c->n + done_in) * c->esize;
      out[r - r0] = c->out[r].p + (size_t)c->out[r].len * c->esize;
    }
    size_t idone = 0, odone = 0;
    int64_t feed = c->n - done_in < FEED ? c->n - done_in : FEED;
    soxr_error_t e = soxr_process(c->st->s[g], c->x ? (soxr_in_t)in : NULL, c->x ? (size_t)feed : 0, &idone,
                                  (soxr_out_t)out, (size_t)chunk, &odone);
    if (e) return e;
    done_in += (int64_t)idone;
    for (int64_t r = r0; r < r1; r++) c->out[r].len += (int64_t)odone;
    if ((c->x && done_in >= c->n && (int64_t)odone < chunk) || (!c->x && odone == 0)) return NULL;
  }
}

static void pump_groups(void *ctx, int64_t b, int64_t e) {
  const sx_call *c = ctx;
  int64_t most = c->st->rows / c->st->ngroups + 1;
  const void **in = malloc(sizeof(void *) * (size_t)most);
  void **out = malloc(sizeof(void *) * (size_t)most);
  for (int64_t g = b; g < e; g++) c->err[g] = in && out ? pump_group(c, g, in, out) : "out of memory";
  free(in), free(out);
}

/* the rows' outputs as one [rows, len] tensor in *y, or an error message */
static const char *gather(const sx_call *c, mt_tensor **y) {
  for (int64_t g = 0; g < c->st->ngroups; g++)
    if (c->err[g]) return c->err[g];
  int64_t len = c->out[0].len;
  for (int64_t r = 0; r < c->st->rows; r++)
    if (c->out[r].len != len) return "groups of different lengths (internal)";
  int64_t shape[2] = {c->st->rows, len};
  if (mt_empty(shape, 2, c->st->f64 ? MT_FLOAT64 : MT_FLOAT32, mt_cpu(), y)) return mt_errmsg();
  for (int64_t r = 0; r < c->st->rows; r++)
    if (len) memcpy(mt_data(*y) + (size_t)(r * len) * c->esize, c->out[r].p, (size_t)len * c->esize);
  return NULL;
}

/* stream:process(x [rows, n] contiguous CPU, the stream's dtype) -> [rows, m];
 * stream:process() (no x) flushes: the rest soxr holds */
static int l_process(lua_State *L) {
  sx_stream *st = check_stream(L);
  mt_tensor *x = lua_isnoneornil(L, 2) ? NULL : mtl_check_tensor(L, 2, FN ".process");
  if (x && (x->ndim != 2 || x->shape[0] != st->rows || mt_tdevice(x).type != MT_CPU ||
            (x->shape[1] > 0 && !mt_is_contiguous(x)) || x->dtype != (st->f64 ? MT_FLOAT64 : MT_FLOAT32)))
    return luaL_error(L, "%s.process: expected a contiguous CPU %s tensor of %I rows", FN,
                      st->f64 ? "float64" : "float32", (lua_Integer)st->rows);
  sx_call c = {st, x, x ? x->shape[1] : 0, st->f64 ? 8 : 4, calloc((size_t)st->rows, sizeof(sx_buf)),
               calloc((size_t)st->ngroups, sizeof(char *))};
  const char *err = c.out && c.err ? NULL : "out of memory";
  mt_tensor *y = NULL;
  /* short blocks on this thread (waking the team would cost more) */
  int64_t grain = c.n >= (1 << 14) ? 1 : st->ngroups;
  if (!err && mt_parallel_for(st->ngroups, grain, pump_groups, &c)) err = mt_errmsg();
  if (!err) err = gather(&c, &y);
  for (int64_t r = 0; c.out && r < st->rows; r++) free(c.out[r].p);
  free(c.out), free(c.err);
  if (err) {
    mt_release(y);
    return luaL_error(L, "%s: soxr: %s", FN, err);
  }
  mtl_push_tensor(L, y);
  return 1;
}

/* stream:clear(): ready for a new signal */
static int l_clear(lua_State *L) {
  sx_stream *st = check_stream(L);
  for (int64_t g = 0; g < st->ngroups; g++) {
    soxr_error_t e = soxr_clear(st->s[g]);
    if (e) return luaL_error(L, "%s: soxr: %s", FN, e);
  }
  return 0;
}

static int l_close(lua_State *L) {
  free_resamplers(luaL_checkudata(L, 1, MT_SOXR));
  return 0;
}

/* stream(orig, new, rows, f64) -> a soxr_hq resampler of rows channels,
 * in as many groups as threads (at most one a row) */
static int l_stream(lua_State *L) {
  double orig = luaL_checknumber(L, 1), nw = luaL_checknumber(L, 2);
  lua_Integer rows = luaL_checkinteger(L, 3);
  bool f64 = lua_toboolean(L, 4);
  if (!(orig > 0) || !(nw > 0) || !isfinite(orig) || !isfinite(nw))
    return luaL_error(L, "%s: the frequencies must be positive, got %f and %f", FN, orig, nw);
  if (rows < 1 || rows > 1 << 20) return luaL_error(L, "%s: %I rows (1 to 2^20)", FN, rows);
  int64_t ng = mt_get_num_threads();
  if (ng > rows) ng = rows;
  if (ng < 1) ng = 1;
  sx_stream *st = lua_newuserdatauv(L, sizeof *st, 0);
  *st = (sx_stream){NULL, rows, ng, orig, nw, f64};
  luaL_setmetatable(L, MT_SOXR);
  st->s = calloc((size_t)ng, sizeof(soxr_t));
  if (!st->s) return luaL_error(L, "%s: out of memory", FN);
  soxr_datatype_t t = f64 ? SOXR_FLOAT64_S : SOXR_FLOAT32_S;
  soxr_io_spec_t io = soxr_io_spec(t, t);
  soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
  soxr_runtime_spec_t rt = soxr_runtime_spec(1);
  for (int64_t g = 0; g < ng; g++) {
    soxr_error_t e = NULL;
    unsigned ch = (unsigned)(group_start(st, g + 1) - group_start(st, g));
    st->s[g] = soxr_create(orig, nw, ch, &e, &io, &q, &rt);
    if (e || !st->s[g]) return luaL_error(L, "%s: soxr: %s", FN, e ? e : "cannot create a resampler");
  }
  return 1;
}

static const luaL_Reg methods[] = {{"process", l_process}, {"clear", l_clear}, {"close", l_close}, {NULL, NULL}};

static const mtl_reg regs[] = {
    {"stream", l_stream, MTL_FN,
     "torch.audio._soxr.stream(orig, new, rows, f64) -- internal (resampling_method='soxr_hq'): a libsoxr "
     "high-quality resampler of rows channels; :process(x [rows, n]) -> what is ready, :process() flushes, :clear()"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._soxr" */
int luaopen_torch_audio__soxr(lua_State *L) {
  mtl_new_class(L, MT_SOXR, methods, l_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
