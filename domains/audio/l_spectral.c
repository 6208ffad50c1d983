/* l_spectral.c -- the C half of the spectral fast paths
 * (functional/_stft_real.lua, transforms/_mel.lua): the power spectrogram
 * through the engine's one-pass op (mt_stft_power, CPU and CUDA), and the
 * decibel conversion of MFCC / LFCC on the CPU. The Lua side takes them
 * outside autograd and torch.compile; this file checks its arguments again
 * and never crashes on bad input.
 *   torch.audio._spectral.stft_power(x [B, T], window [n_fft], hop, power[, pad])
 *     -> [B, frames, n_fft / 2 + 1], frames = (T + 2 pad - n_fft) / hop + 1
 * with pad samples of reflect padding on both sides read in place. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "mtl.h"

#define FN "torch.audio._spectral.stft_power"

static mt_tensor *check_t(lua_State *L, int idx, int ndim, const char *what) {
  mt_tensor *t = mtl_check_tensor(L, idx, FN);
  if (t->ndim != ndim || !mt_is_contiguous(t) || (t->dtype != MT_FLOAT32 && t->dtype != MT_FLOAT64))
    luaL_error(L, "%s: the %s must be a contiguous %d-D float32/float64 tensor", FN, what, ndim);
  return t;
}

static int l_power(lua_State *L) {
  mt_tensor *x = check_t(L, 1, 2, "signal"), *w = check_t(L, 2, 1, "window");
  lua_Integer hop = luaL_checkinteger(L, 3);
  double power = luaL_checknumber(L, 4);
  lua_Integer pad = luaL_optinteger(L, 5, 0);
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, FN, mt_stft_power(x, w, hop, power, pad, &out));
  mtl_push_tensor(L, out);
  return 1;
}

/* ---- decibels of power spectrograms (MFCC / LFCC's AmplitudeToDB step) */

enum { DB_CHUNK = 16384 }; /* elements a task converts */

typedef struct {
  void *y;
  const void *x;
  int64_t rows, cols, nb; /* nb: chunks per row */
  double mult, amin, top_db;
  double *chunk_max; /* one per chunk */
  bool dbl;
} db_job;

/* db_T(j, b, e): chunks b..e-1 to mult * log10(max(x, amin)), each chunk's
 * maximum noted */
#define DB_FN(T, LOG10)                                                               \
  static void db_##T(void *vc, int64_t b, int64_t e) {                               \
    db_job *j = vc;                                                                   \
    for (int64_t c = b; c < e; c++) {                                                 \
      int64_t row = c / j->nb, lo = (c % j->nb) * DB_CHUNK;                           \
      int64_t hi = lo + DB_CHUNK < j->cols ? lo + DB_CHUNK : j->cols;                 \
      const T *x = (const T *)j->x + row * j->cols;                                   \
      T *y = (T *)j->y + row * j->cols, amin = (T)j->amin, mult = (T)j->mult, m = -INFINITY; \
      for (int64_t i = lo; i < hi; i++) {                                             \
        T v = x[i] > amin ? x[i] : amin;                                              \
        y[i] = mult * LOG10(v);                                                       \
        m = y[i] > m ? y[i] : m;                                                      \
      }                                                                               \
      j->chunk_max[c] = m;                                                            \
    }                                                                                 \
  }                                                                                   \
  static void floor_##T(void *vc, int64_t b, int64_t e) {                            \
    db_job *j = vc;                                                                   \
    for (int64_t c = b; c < e; c++) {                                                 \
      int64_t row = c / j->nb, lo = (c % j->nb) * DB_CHUNK;                           \
      int64_t hi = lo + DB_CHUNK < j->cols ? lo + DB_CHUNK : j->cols;                 \
      double m = -INFINITY;                                                           \
      for (int64_t k = 0; k < j->nb; k++) m = j->chunk_max[row * j->nb + k] > m ? j->chunk_max[row * j->nb + k] : m; \
      T f = (T)(m - j->top_db), *y = (T *)j->y + row * j->cols;                       \
      for (int64_t i = lo; i < hi; i++) y[i] = y[i] > f ? y[i] : f;                   \
    }                                                                                 \
  }

DB_FN(float, log10f)
DB_FN(double, log10)

/* db(x [rows, cols], mult, amin[, top_db]) -> mult * log10(max(x, amin)),
 * floored per row at top_db below the row's maximum when top_db is given */
static int l_db(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, FN);
  if (x->ndim != 2 || mt_tdevice(x).type != MT_CPU || !mt_is_contiguous(x) ||
      (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64))
    luaL_error(L, "torch.audio._spectral.db: x must be a contiguous 2-D float32/float64 CPU tensor");
  double mult = luaL_checknumber(L, 2), amin = luaL_checknumber(L, 3);
  bool floor = !lua_isnoneornil(L, 4);
  double top_db = floor ? luaL_checknumber(L, 4) : 0;
  mt_tensor *y = NULL;
  MTL_CHECK_OP(L, "torch.audio._spectral.db", mt_empty(x->shape, 2, (mt_dtype)x->dtype, mt_cpu(), &y));
  int64_t rows = x->shape[0], cols = x->shape[1], nb = (cols + DB_CHUNK - 1) / DB_CHUNK;
  if (rows * nb == 0) {
    mtl_push_tensor(L, y);
    return 1;
  }
  double *cm = malloc((size_t)(rows * nb) * sizeof *cm);
  if (!cm) mtl_fail(L, mt_fail(MT_ENOMEM, "torch.audio._spectral.db: out of memory"), y, NULL, NULL, NULL);
  bool dbl = x->dtype == MT_FLOAT64;
  db_job j = {.y = mt_data(y), .x = mt_data(x), .rows = rows, .cols = cols, .nb = nb, .mult = mult, .amin = amin,
              .top_db = top_db, .chunk_max = cm, .dbl = dbl};
  mt_status st = mt_parallel_for(rows * nb, 1, dbl ? db_double : db_float, &j);
  if (!st && floor) st = mt_parallel_for(rows * nb, 1, dbl ? floor_double : floor_float, &j);
  free(cm);
  if (st != MT_OK) mtl_fail(L, st, y, NULL, NULL, NULL);
  mtl_push_tensor(L, y);
  return 1;
}

static const mtl_reg regs[] = {
    {"db", l_db, MTL_FN,
     "torch.audio._spectral.db(x, multiplier, amin[, top_db]) -- multiplier * log10(max(x, amin)) of a contiguous "
     "CPU float32/float64 [rows, cols], floored per row at top_db below the row's maximum"},
    {"stft_power", l_power, MTL_FN,
     "torch.audio._spectral.stft_power(x, window, hop, power[, pad=0]) -- [B, frames, n_fft/2+1]: |rfft(frame * window)|^power "
     "of the frames of a contiguous float32/float64 signal [B, T] (CPU or CUDA), reflect-padded by pad on both sides"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._spectral" */
int luaopen_torch_audio__spectral(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
