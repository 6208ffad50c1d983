/* l_spectral.c -- the C half of the power spectrogram's CPU fast path
 * (functional/_stft_real.lua): frames of an already padded signal are
 * windowed, transformed by the engine's FFTW runner (cpu/fft_kernels.h)
 * and reduced to |X|^power, a block of frames at a time so that the
 * scratch stays in cache; no intermediate tensors. The Lua side takes it
 * for CPU float32/float64 inputs outside autograd and torch.compile, and
 * the engine-op path otherwise; this file checks its arguments again and
 * never crashes on bad input.
 *   torch.audio._spectral.power(x [B, T], window [n_fft], hop, power[, pad])
 *     -> [B, frames, n_fft / 2 + 1], frames = (T + 2 pad - n_fft) / hop + 1
 * with pad samples of reflect padding on both sides read in place. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/fft_kernels.h"
#include "mtl.h"

#define FN "torch.audio._spectral.power"

enum { BLOCK = 64 }; /* frames framed, transformed and reduced at once by one thread */

typedef struct {
  const void *x, *w;
  void *out;
  int64_t len, nfft, hop, nf, K, pad; /* pad: reflect padding on both sides, virtual */
  double power;
  bool dbl;
  mt_status st; /* the first failure of a worker (written under no lock: any one suffices) */
} job;

/* reflect(t, n): the sample of a signal of n > pad samples that reflect
 * padding puts at position t (t may be < 0 or >= n) */
static inline int64_t reflect(int64_t t, int64_t n) {
  if (t < 0) return -t;
  if (t >= n) return 2 * (n - 1) - t;
  return t;
}

/* frame_T(j, buf, first, n): frames first .. first+n-1 (global: batch row
 * g / nf, frame g % nf) windowed into the n rows of buf; frames that reach
 * into the virtual reflect padding read mirrored samples */
#define FRAME_FN(T)                                                                  \
  static void frame_##T(const job *j, T *buf, int64_t first, int64_t n) {           \
    const T *w = j->w;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                \
      int64_t g = first + i, start = (g % j->nf) * j->hop - j->pad;                  \
      const T *row = (const T *)j->x + (g / j->nf) * j->len;                         \
      T *dst = buf + i * j->nfft;                                                    \
      if (start >= 0 && start + j->nfft <= j->len)                                   \
        for (int64_t k = 0; k < j->nfft; k++) dst[k] = row[start + k] * w[k];        \
      else                                                                           \
        for (int64_t k = 0; k < j->nfft; k++) dst[k] = row[reflect(start + k, j->len)] * w[k]; \
    }                                                                                \
  }

/* power_T(j, spec, first, n): the n spectra of spec (interleaved re, im)
 * to |X|^power in the output rows first .. first+n-1 */
#define POWER_FN(T, SQRT, POW)                                                       \
  static void power_##T(const job *j, const T *spec, int64_t first, int64_t n) {    \
    T *out = (T *)j->out + first * j->K;                                             \
    T half = (T)(j->power / 2);                                                      \
    for (int64_t i = 0; i < n * j->K; i++) {                                         \
      T re = spec[2 * i], im = spec[2 * i + 1], p = re * re + im * im;               \
      out[i] = j->power == 2 ? p : j->power == 1 ? SQRT(p) : POW(p, half);           \
    }                                                                                \
  }

FRAME_FN(float)
FRAME_FN(double)
POWER_FN(float, sqrtf, powf)
POWER_FN(double, sqrt, pow)

/* range(j, b, e): frames b..e-1, BLOCK at a time through this thread's
 * scratch (the FFT of a block is small enough to run in the calling thread) */
static void range(void *vc, int64_t b, int64_t e) {
  job *j = vc;
  size_t es = j->dbl ? sizeof(double) : sizeof(float);
  void *buf = NULL, *spec = NULL;
  if (posix_memalign(&buf, 64, (size_t)BLOCK * (size_t)j->nfft * es) ||
      posix_memalign(&spec, 64, (size_t)BLOCK * (size_t)j->K * 2 * es)) {
    free(buf);
    j->st = mt_fail(MT_ENOMEM, FN ": out of memory for the frame scratch");
    return;
  }
  for (int64_t first = b; first < e && !j->st; first += BLOCK) {
    int64_t n = e - first < BLOCK ? e - first : BLOCK;
    if (j->dbl) frame_double(j, buf, first, n);
    else frame_float(j, buf, first, n);
    mt_fft_problem p = {.kind = MT_FFT_R2C, .dbl = j->dbl, .sign = -1, .ndim = 2, .nt = 1,
                        .ishape = {n, j->nfft}, .oshape = {n, j->K}, .tdims = {1}, .scale = 1.0};
    mt_status st = mt_fft_cpu_run(&p, buf, spec);
    if (st) {
      j->st = st;
      break;
    }
    if (j->dbl) power_double(j, spec, first, n);
    else power_float(j, spec, first, n);
  }
  free(buf);
  free(spec);
}

/* run(j, total): all total frames of j over the engine's threads */
static mt_status run(job *j, int64_t total) {
  mt_status st = mt_parallel_for(total, BLOCK, range, j);
  return st ? st : j->st;
}

static mt_tensor *check_t(lua_State *L, int idx, int ndim, const char *what) {
  mt_tensor *t = mtl_check_tensor(L, idx, FN);
  if (t->ndim != ndim || mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t) ||
      (t->dtype != MT_FLOAT32 && t->dtype != MT_FLOAT64))
    luaL_error(L, "%s: the %s must be a contiguous %d-D float32/float64 CPU tensor", FN, what, ndim);
  return t;
}

static int l_power(lua_State *L) {
  mt_tensor *x = check_t(L, 1, 2, "signal"), *w = check_t(L, 2, 1, "window");
  lua_Integer hop = luaL_checkinteger(L, 3);
  double power = luaL_checknumber(L, 4);
  lua_Integer pad = luaL_optinteger(L, 5, 0);
  int64_t B = x->shape[0], T = x->shape[1], nfft = w->shape[0];
  if (w->dtype != x->dtype) luaL_error(L, "%s: the window's dtype differs from the signal's", FN);
  if (hop < 1 || nfft < 1 || pad < 0 || (pad > 0 && pad >= T) || T + 2 * pad < nfft || !(power > 0))
    luaL_error(L, "%s: bad sizes (T %I, n_fft %I, hop %I, reflect pad %I, power %f)", FN, (lua_Integer)T,
               (lua_Integer)nfft, hop, pad, power);
  int64_t nf = (T + 2 * pad - nfft) / hop + 1, K = nfft / 2 + 1;
  int64_t shape[3] = {B, nf, K};
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, FN, mt_empty(shape, 3, (mt_dtype)x->dtype, mt_cpu(), &out));
  job j = {.x = mt_data(x), .w = mt_data(w), .out = mt_data(out), .len = T, .nfft = nfft, .hop = hop, .nf = nf,
           .K = K, .pad = pad, .power = power, .dbl = x->dtype == MT_FLOAT64, .st = MT_OK};
  mt_status st = run(&j, B * nf);
  if (st != MT_OK) mtl_fail(L, st, out, NULL, NULL, NULL);
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
    {"power", l_power, MTL_FN,
     "torch.audio._spectral.power(x, window, hop, power[, pad=0]) -- [B, frames, n_fft/2+1]: |rfft(frame * window)|^power "
     "of the frames of a contiguous CPU float32/float64 signal [B, T], reflect-padded by pad on both sides"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._spectral" */
int luaopen_torch_audio__spectral(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
