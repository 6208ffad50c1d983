/* l_soxr.c -- torch.audio's "soxr_hq" resampling through libsoxr (SOXR_HQ,
 * one thread inside soxr). resample() is the whole-signal form: one
 * single-channel resampler per row, the rows in parallel by
 * mt_parallel_for, written straight into the result. stream() is the
 * streaming form (Resampler): rows in groups, one multi-channel resampler
 * each (memory stays bounded for many rows), blocks in, what soxr has
 * ready out, a flush that drains it. soxr treats channels independently,
 * so a row gives the same samples alone, in any batch and on any number of
 * threads. CPU float32/float64 only; the Lua side moves other devices
 * through the host and checks grads. */
#include <math.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>

#include "mtl.h"

#define FN "torch.audio._soxr"
#define MT_SOXR "torch.audio.soxr_stream"

enum { FEED = 8192 }; /* input samples a row per soxr_process call: soxr's buffers stay small */

/* one row's output: grown as soxr delivers (grow), or a fixed span of
 * cap samples that the pump stops filling when it is full */
typedef struct sx_buf {
  char *p;
  int64_t len, cap;
  bool grow;
} sx_buf;

/* a SOXR_HQ resampler of ch channels (split buffers, float32 or float64
 * in and out), or NULL with *e set */
static soxr_t new_resampler(double orig, double nw, unsigned ch, bool f64, soxr_error_t *e) {
  soxr_datatype_t t = f64 ? SOXR_FLOAT64_S : SOXR_FLOAT32_S;
  soxr_io_spec_t io = soxr_io_spec(t, t);
  soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
  soxr_runtime_spec_t rt = soxr_runtime_spec(1);
  *e = NULL;
  soxr_t s = soxr_create(orig, nw, ch, e, &io, &q, &rt);
  if (!s && !*e) *e = "cannot create a resampler";
  return s;
}

/* room for `more` samples after len in bufs b[0..nb) (their lengths are equal) */
static bool reserve(sx_buf *b, int64_t nb, int64_t more, size_t esize) {
  if (b[0].len + more <= b[0].cap) return true;
  int64_t cap = (b[0].len + more) * 2;
  for (int64_t r = 0; r < nb; r++) {
    char *p = realloc(b[r].p, (size_t)cap * esize);
    if (!p) return false;
    b[r].p = p, b[r].cap = cap;
  }
  return true;
}

/* feeds n samples of each of s's nch channels (in[c], or in NULL: drains
 * s) into b[0..nch), FEED at a time; out[] is scratch for nch pointers.
 * Returns NULL or soxr's error. */
static const char *pump(soxr_t s, int64_t nch, const char *const *in, int64_t n, sx_buf *b, double ratio, size_t esize,
                        const void **inp, void **outp) {
  int64_t done_in = 0, chunk = (int64_t)ceil(FEED * ratio) + 1024;
  if (b[0].grow && !reserve(b, nch, (int64_t)ceil((double)n * ratio) + 1024, esize)) return "out of memory";
  for (;;) {
    int64_t room = chunk;
    if (!b[0].grow)
      room = b[0].cap - b[0].len;
    else if (!reserve(b, nch, chunk, esize))
      return "out of memory";
    if (room == 0) return NULL;
    int64_t feed = in ? (n - done_in < FEED ? n - done_in : FEED) : 0;
    for (int64_t c = 0; c < nch; c++) {
      if (in) inp[c] = in[c] + (size_t)done_in * esize;
      outp[c] = b[c].p + (size_t)b[c].len * esize;
    }
    size_t idone = 0, odone = 0;
    soxr_error_t e =
        soxr_process(s, in ? (soxr_in_t)inp : NULL, (size_t)feed, &idone, (soxr_out_t)outp, (size_t)room, &odone);
    if (e) return e;
    if (in && feed > 0 && idone == 0 && odone == 0) return "no progress (internal)";
    done_in += (int64_t)idone;
    for (int64_t c = 0; c < nch; c++) b[c].len += (int64_t)odone;
    if ((in && done_in >= n && (int64_t)odone < room) || (!in && odone == 0)) return NULL;
  }
}

/* ---- the whole signal: resample(x, orig, new, m) ---- */

typedef struct sx_whole {
  const mt_tensor *x; /* [rows, n] */
  mt_tensor *y;       /* [rows, m] */
  int64_t n, m;
  double orig, nw;
  bool f64;
  const char **err; /* per row */
} sx_whole;

/* row r of y: the first m samples soxr gives for row r of x, zeros after
 * them if it gives fewer */
static const char *whole_row(const sx_whole *w, int64_t r) {
  size_t esize = w->f64 ? 8 : 4;
  soxr_error_t e;
  soxr_t s = new_resampler(w->orig, w->nw, 1, w->f64, &e);
  if (!s) return e;
  const char *in = (const char *)mt_data(w->x) + (size_t)(r * w->n) * esize;
  sx_buf b = {(char *)mt_data(w->y) + (size_t)(r * w->m) * esize, 0, w->m, false};
  const void *inp[1];
  void *outp[1];
  const char *err = pump(s, 1, &in, w->n, &b, w->nw / w->orig, esize, inp, outp);
  if (!err) err = pump(s, 1, NULL, 0, &b, w->nw / w->orig, esize, inp, outp);
  soxr_delete(s);
  if (!err && b.len < w->m) memset(b.p + (size_t)b.len * esize, 0, (size_t)(w->m - b.len) * esize);
  return err;
}

static void whole_rows(void *ctx, int64_t b, int64_t e) {
  const sx_whole *w = ctx;
  for (int64_t r = b; r < e; r++) w->err[r] = whole_row(w, r);
}

/* resample(x [rows, n] contiguous CPU float32/float64, orig, new, m) ->
 * [rows, m]: each row's first m output samples (zero-padded) */
static int l_resample(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, FN ".resample");
  double orig = luaL_checknumber(L, 2), nw = luaL_checknumber(L, 3);
  lua_Integer m = luaL_checkinteger(L, 4);
  if (!(orig > 0) || !(nw > 0) || !isfinite(orig) || !isfinite(nw))
    return luaL_error(L, "%s.resample: the frequencies must be positive, got %f and %f", FN, orig, nw);
  if (x->ndim != 2 || mt_tdevice(x).type != MT_CPU || (mt_numel(x) > 0 && !mt_is_contiguous(x)) ||
      (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64))
    return luaL_error(L, "%s.resample: expected a contiguous CPU float32 or float64 tensor [rows, time]", FN);
  if (m < 0) return luaL_error(L, "%s.resample: the output length must be >= 0, got %I", FN, m);
  sx_whole w = {x, NULL, x->shape[1], m, orig, nw, x->dtype == MT_FLOAT64, NULL};
  int64_t rows = x->shape[0], shape[2] = {rows, m};
  if (mt_empty(shape, 2, x->dtype, mt_cpu(), &w.y)) return luaL_error(L, "%s.resample: %s", FN, mt_errmsg());
  mtl_push_tensor(L, w.y); /* owned by Lua from here: freed on any error below */
  if (rows == 0 || m == 0) return 1;
  w.err = calloc((size_t)rows, sizeof(char *));
  if (!w.err) return luaL_error(L, "%s.resample: out of memory", FN);
  /* tasks of at least 2^14 input samples (waking the team for less costs more than it saves) */
  int64_t grain = w.n >= (1 << 14) ? 1 : ((1 << 14) + w.n - 1) / (w.n > 0 ? w.n : 1);
  const char *err = mt_parallel_for(rows, grain, whole_rows, &w) ? mt_errmsg() : NULL;
  for (int64_t r = 0; !err && r < rows; r++) err = w.err[r];
  free(w.err);
  if (err) return luaL_error(L, "%s: soxr: %s", FN, err);
  return 1;
}

/* ---- the stream: stream(orig, new, rows, f64) ---- */

typedef struct sx_stream {
  soxr_t *s; /* a resampler per group: rows [g * rows / ngroups, (g + 1) * rows / ngroups) */
  int64_t rows, ngroups;
  double orig, nw;
  bool f64;
} sx_stream;

/* one call over every group: x (or NULL: drain) of n samples a row */
typedef struct sx_call {
  sx_stream *st;
  const mt_tensor *x;
  int64_t n;
  size_t esize;
  sx_buf *out;      /* per row */
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

/* feeds group g's rows (or, x NULL, drains its resampler) into their buffers */
static const char *pump_group(const sx_call *c, int64_t g, const char **in, const void **inp, void **outp) {
  int64_t r0 = group_start(c->st, g), r1 = group_start(c->st, g + 1);
  for (int64_t r = r0; c->x && r < r1; r++) in[r - r0] = (const char *)mt_data(c->x) + (size_t)(r * c->n) * c->esize;
  return pump(c->st->s[g], r1 - r0, c->x ? in : NULL, c->n, c->out + r0, c->st->nw / c->st->orig, c->esize, inp, outp);
}

static void pump_groups(void *ctx, int64_t b, int64_t e) {
  const sx_call *c = ctx;
  size_t most = (size_t)(c->st->rows / c->st->ngroups + 1);
  const char **in = malloc(sizeof(char *) * most);
  const void **inp = malloc(sizeof(void *) * most);
  void **outp = malloc(sizeof(void *) * most);
  for (int64_t g = b; g < e; g++) c->err[g] = in && inp && outp ? pump_group(c, g, in, inp, outp) : "out of memory";
  free(in), free(inp), free(outp);
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
    if (len) memcpy((char *)mt_data(*y) + (size_t)(r * len) * c->esize, c->out[r].p, (size_t)len * c->esize);
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
  sx_call c = {st,
               x,
               x ? x->shape[1] : 0,
               st->f64 ? 8 : 4,
               calloc((size_t)st->rows, sizeof(sx_buf)),
               calloc((size_t)st->ngroups, sizeof(char *))};
  const char *err = c.out && c.err ? NULL : "out of memory";
  for (int64_t r = 0; !err && r < st->rows; r++) c.out[r].grow = true;
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
  for (int64_t g = 0; g < ng; g++) {
    soxr_error_t e;
    st->s[g] = new_resampler(orig, nw, (unsigned)(group_start(st, g + 1) - group_start(st, g)), f64, &e);
    if (!st->s[g]) return luaL_error(L, "%s: soxr: %s", FN, e);
  }
  return 1;
}

static const luaL_Reg methods[] = {{"process", l_process}, {"clear", l_clear}, {"close", l_close}, {NULL, NULL}};

static const mtl_reg regs[] = {
    {"resample", l_resample, MTL_FN,
     "torch.audio._soxr.resample(x [rows, n], orig, new, m) -- internal (resampling_method='soxr_hq'): each row "
     "through its own libsoxr high-quality resampler, rows in parallel, the first m samples (zero-padded)"},
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
