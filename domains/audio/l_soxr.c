/* l_soxr.c -- torch.audio's "soxr_hq" resampling through libsoxr: a stream
 * object (one soxr resampler, a channel per row of [rows, time]) that
 * takes blocks and hands back what soxr has ready, and a flush that drains
 * it. The whole-signal form (functional/_resampling.lua) is one block and
 * a flush, so both give the same samples. CPU float32/float64 only; the
 * Lua side moves other devices through the host and checks grads. */
#include <math.h>
#include <soxr.h>
#include <stdlib.h>
#include <string.h>

#include "mtl.h"

#define FN "torch.audio._soxr"
#define MT_SOXR "torch.audio.soxr_stream"

typedef struct sx_stream {
  soxr_t s;
  int64_t rows;
  double orig, nw;
  bool f64;
} sx_stream;

/* per-channel output buffers of one call, grown as soxr delivers */
typedef struct sx_out {
  char **ch;
  int64_t len, cap, rows;
  size_t esize;
} sx_out;

static void out_free(sx_out *o) {
  for (int64_t r = 0; o->ch && r < o->rows; r++) free(o->ch[r]);
  free(o->ch);
}

/* room for `more` samples after len in every channel; false when out of memory */
static bool out_reserve(sx_out *o, int64_t more) {
  if (o->len + more <= o->cap) return true;
  int64_t cap = (o->len + more) * 2;
  for (int64_t r = 0; r < o->rows; r++) {
    void *p = realloc(o->ch[r], (size_t)cap * o->esize);
    if (!p) return false;
    o->ch[r] = p;
  }
  o->cap = cap;
  return true;
}

static sx_stream *check_stream(lua_State *L) {
  sx_stream *st = luaL_checkudata(L, 1, MT_SOXR);
  if (!st->s) luaL_error(L, "%s: the stream is closed", FN);
  return st;
}

/* feeds n samples of each row of x (or, x NULL, drains soxr) into o */
static const char *pump(sx_stream *st, const mt_tensor *x, int64_t n, sx_out *o) {
  const void **in = NULL;
  void **out = malloc(sizeof(void *) * (size_t)st->rows);
  if (x) in = malloc(sizeof(void *) * (size_t)st->rows);
  if (!out || (x && !in)) {
    free(out), free(in);
    return "out of memory";
  }
  const char *err = NULL;
  int64_t done_in = 0, chunk = (int64_t)ceil((double)n * st->nw / st->orig) + 1024;
  for (;;) {
    if (!out_reserve(o, chunk)) {
      err = "out of memory";
      break;
    }
    for (int64_t r = 0; r < st->rows; r++) {
      if (x) in[r] = mt_data(x) + (size_t)(r * n + done_in) * o->esize;
      out[r] = o->ch[r] + (size_t)o->len * o->esize;
    }
    size_t idone = 0, odone = 0;
    soxr_error_t e = soxr_process(st->s, x ? (soxr_in_t)in : NULL, x ? (size_t)(n - done_in) : 0, &idone,
                                  (soxr_out_t)out, (size_t)chunk, &odone);
    if (e) {
      err = e;
      break;
    }
    done_in += (int64_t)idone, o->len += (int64_t)odone;
    if ((x && done_in >= n && (int64_t)odone < chunk) || (!x && odone == 0)) break;
  }
  free(out), free(in);
  return err;
}

/* stream:process(x [rows, n] contiguous CPU, the stream's dtype) -> [rows, m];
 * stream:process() (no x) flushes: the rest soxr holds */
static int l_process(lua_State *L) {
  sx_stream *st = check_stream(L);
  mt_tensor *x = lua_isnoneornil(L, 2) ? NULL : mtl_check_tensor(L, 2, FN ".process");
  int64_t n = 0;
  if (x) {
    if (x->ndim != 2 || x->shape[0] != st->rows || mt_tdevice(x).type != MT_CPU ||
        (x->shape[1] > 0 && !mt_is_contiguous(x)) ||
        x->dtype != (st->f64 ? MT_FLOAT64 : MT_FLOAT32))
      return luaL_error(L, "%s.process: expected a contiguous CPU %s tensor of %I rows", FN,
                        st->f64 ? "float64" : "float32", (lua_Integer)st->rows);
    n = x->shape[1];
  }
  sx_out o = {calloc((size_t)st->rows, sizeof(char *)), 0, 0, st->rows, st->f64 ? 8 : 4};
  const char *err = o.ch ? pump(st, x, n, &o) : "out of memory";
  mt_tensor *y = NULL;
  int64_t shape[2] = {st->rows, o.len};
  if (!err && mt_empty(shape, 2, st->f64 ? MT_FLOAT64 : MT_FLOAT32, mt_cpu(), &y)) err = mt_errmsg();
  for (int64_t r = 0; !err && r < st->rows; r++)
    memcpy(mt_data(y) + (size_t)(r * o.len) * o.esize, o.ch[r], (size_t)o.len * o.esize);
  out_free(&o);
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
  soxr_error_t e = soxr_clear(st->s);
  if (e) return luaL_error(L, "%s: soxr: %s", FN, e);
  return 0;
}

static int l_close(lua_State *L) {
  sx_stream *st = luaL_checkudata(L, 1, MT_SOXR);
  if (st->s) soxr_delete(st->s);
  st->s = NULL;
  return 0;
}

/* stream(orig, new, rows, f64) -> a soxr_hq resampler of rows channels */
static int l_stream(lua_State *L) {
  double orig = luaL_checknumber(L, 1), nw = luaL_checknumber(L, 2);
  lua_Integer rows = luaL_checkinteger(L, 3);
  bool f64 = lua_toboolean(L, 4);
  if (!(orig > 0) || !(nw > 0) || !isfinite(orig) || !isfinite(nw))
    return luaL_error(L, "%s: the frequencies must be positive, got %f and %f", FN, orig, nw);
  if (rows < 1 || rows > 1 << 20) return luaL_error(L, "%s: %I rows (1 to 2^20)", FN, rows);
  sx_stream *st = lua_newuserdatauv(L, sizeof *st, 0);
  *st = (sx_stream){NULL, rows, orig, nw, f64};
  luaL_setmetatable(L, MT_SOXR);
  soxr_datatype_t t = f64 ? SOXR_FLOAT64_S : SOXR_FLOAT32_S;
  soxr_io_spec_t io = soxr_io_spec(t, t);
  soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
  soxr_runtime_spec_t rt = soxr_runtime_spec(0);
  soxr_error_t e = NULL;
  st->s = soxr_create(orig, nw, (unsigned)rows, &e, &io, &q, &rt);
  if (e || !st->s) return luaL_error(L, "%s: soxr: %s", FN, e ? e : "cannot create a resampler");
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
  luaL_newmetatable(L, MT_SOXR);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_close);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, l_close);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
