/* fft_fftw.c -- the CPU transforms through FFTW's guru64 interface: one
 * plan covers every transformed dim and the batch dims in place (no
 * copies), plans are cached per problem under one lock (FFTW's planner is
 * not thread-safe; executing a plan on new arrays is), and big batches are
 * split over the engine's threads, each running the plan of its chunk; a
 * multi-dim transform of too small a batch runs as 1-D passes instead. */
#include <fftw3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fft_kernels.h"

/* A cache key: everything FFTW's plan depends on. Zero-filled before use
 * so memcmp compares it. */
typedef struct plan_key {
  int kind, dbl, sign, rank, hrank, unaligned, measure, inplace;
  fftw_iodim64 dims[MT_MAXDIM], hdims[MT_MAXDIM];
} plan_key;

typedef struct plan_entry {
  plan_key key;
  void *plan; /* fftw_plan or fftwf_plan */
} plan_entry;

#define MAX_PLANS 512
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static plan_entry plans[MAX_PLANS];
static int nplans;
static bool measure;

void mt_fft_set_measure(bool on) { measure = on; }

int mt_fft_plan_count(void) {
  pthread_mutex_lock(&lock);
  int n = nplans;
  pthread_mutex_unlock(&lock);
  return n;
}

static void destroy(bool dbl, void *plan) {
  if (dbl) fftw_destroy_plan((fftw_plan)plan);
  else fftwf_destroy_plan((fftwf_plan)plan);
}

void mt_fft_clear_plans(void) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nplans; i++) destroy(plans[i].key.dbl, plans[i].plan);
  nplans = 0;
  pthread_mutex_unlock(&lock);
}

/* Bytes spanned by an array of these dims (elements of esize bytes). */
static size_t span(const fftw_iodim64 *d, int n, const fftw_iodim64 *h, int nh, bool out, size_t esize) {
  int64_t last = 0;
  for (int k = 0; k < n; k++) last += (d[k].n - 1) * (out ? d[k].os : d[k].is);
  for (int k = 0; k < nh; k++) last += (h[k].n - 1) * (out ? h[k].os : h[k].is);
  return (size_t)(last + 1) * esize;
}

/* Creates the plan of key k on arrays in, out (FFTW_ESTIMATE does not touch
 * them; FFTW_MEASURE plans on scratch arrays instead, one for both sides of
 * an in-place plan). Caller holds lock. */
static void *make_plan(const plan_key *k, void *in, void *out) {
  unsigned flags = (k->measure ? FFTW_MEASURE : FFTW_ESTIMATE) | (k->unaligned ? FFTW_UNALIGNED : 0);
  size_t real = k->dbl ? sizeof(double) : sizeof(float);
  size_t ies = k->kind == MT_FFT_R2C ? real : 2 * real, oes = k->kind == MT_FFT_C2R ? real : 2 * real;
  void *si = NULL, *so = NULL;
  if (k->measure) {
    si = fftw_malloc(span(k->dims, k->rank, k->hdims, k->hrank, false, ies));
    so = k->inplace ? NULL : fftw_malloc(span(k->dims, k->rank, k->hdims, k->hrank, true, oes));
    if (!si || (!so && !k->inplace)) {
      fftw_free(si), fftw_free(so);
      return NULL;
    }
    in = si, out = k->inplace ? si : so;
  }
  void *p = NULL;
  const fftw_iodim64 *d = k->dims, *h = k->hdims;
  const fftwf_iodim64 *df = (const fftwf_iodim64 *)d, *hf = (const fftwf_iodim64 *)h;
  if (k->dbl) {
    if (k->kind == MT_FFT_C2C) p = fftw_plan_guru64_dft(k->rank, d, k->hrank, h, in, out, k->sign, flags);
    else if (k->kind == MT_FFT_R2C) p = fftw_plan_guru64_dft_r2c(k->rank, d, k->hrank, h, in, out, flags);
    else p = fftw_plan_guru64_dft_c2r(k->rank, d, k->hrank, h, in, out, flags);
  } else {
    if (k->kind == MT_FFT_C2C) p = fftwf_plan_guru64_dft(k->rank, df, k->hrank, hf, in, out, k->sign, flags);
    else if (k->kind == MT_FFT_R2C) p = fftwf_plan_guru64_dft_r2c(k->rank, df, k->hrank, hf, in, out, flags);
    else p = fftwf_plan_guru64_dft_c2r(k->rank, df, k->hrank, hf, in, out, flags);
  }
  fftw_free(si), fftw_free(so);
  return p;
}

/* The cached plan of k, made on in/out when new; *owned set when the cache
 * is full and the caller must destroy it after use. NULL: FFTW declined. */
static void *get_plan(const plan_key *k, void *in, void *out, bool *owned) {
  *owned = false;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nplans; i++)
    if (memcmp(&plans[i].key, k, sizeof *k) == 0) {
      void *p = plans[i].plan;
      pthread_mutex_unlock(&lock);
      return p;
    }
  void *p = make_plan(k, in, out);
  if (p && nplans < MAX_PLANS) plans[nplans].key = *k, plans[nplans++].plan = p;
  else if (p) *owned = true;
  pthread_mutex_unlock(&lock);
  return p;
}

static void execute(bool dbl, mt_fft_kind kind, void *plan, void *in, void *out) {
  if (dbl) {
    if (kind == MT_FFT_C2C) fftw_execute_dft((fftw_plan)plan, in, out);
    else if (kind == MT_FFT_R2C) fftw_execute_dft_r2c((fftw_plan)plan, in, out);
    else fftw_execute_dft_c2r((fftw_plan)plan, in, out);
  } else {
    if (kind == MT_FFT_C2C) fftwf_execute_dft((fftwf_plan)plan, in, out);
    else if (kind == MT_FFT_R2C) fftwf_execute_dft_r2c((fftwf_plan)plan, in, out);
    else fftwf_execute_dft_c2r((fftwf_plan)plan, in, out);
  }
}

/* Two-sided r2c: out (complex, shape oshape) holds bins 0..n/2 of the last
 * transformed dim; each later bin k is the conjugate of the bin at the
 * mirrored index (n_j - k_j) mod n_j of every transformed dim j. Fills the
 * indices [b, e) of batch dim split (all of them when split < 0): the
 * mirror never leaves a batch index, so chunks fill independently. */
#define FILL(T)                                                                                                        \
  static void fill_##T(const mt_fft_problem *p, T *o, int split, int64_t b, int64_t e) {                              \
    int nd = p->ndim, last = p->tdims[p->nt - 1];                                                                     \
    int64_t str[MT_MAXDIM] = {0}, k[MT_MAXDIM], lo[MT_MAXDIM], hi[MT_MAXDIM], s = 1, rows = 1;                        \
    int64_t n = p->oshape[last], half = n / 2 + 1;                                                                    \
    bool is_t[MT_MAXDIM] = {false};                                                                                   \
    for (int t = 0; t < p->nt; t++) is_t[p->tdims[t]] = true;                                                          \
    for (int d = nd - 1; d >= 0; d--) {                                                                               \
      str[d] = s, s *= p->oshape[d];                                                                                  \
      lo[d] = d == split ? b : 0, hi[d] = d == split ? e : p->oshape[d], k[d] = lo[d];                                \
      if (d != last) rows *= hi[d] - lo[d];                                                                           \
    }                                                                                                                 \
    int64_t sl = str[last];                                                                                           \
    for (int64_t r = 0; r < rows; r++) { /* k runs over every dim but last */                                         \
      int64_t dst = 0, src = 0;                                                                                       \
      for (int d = 0; d < nd; d++)                                                                                    \
        if (d != last) dst += k[d] * str[d], src += (is_t[d] ? (p->oshape[d] - k[d]) % p->oshape[d] : k[d]) * str[d]; \
      for (int64_t j = half; j < n; j++) {                                                                            \
        int64_t a = dst + j * sl, c = src + (n - j) * sl;                                                             \
        o[2 * a] = o[2 * c], o[2 * a + 1] = -o[2 * c + 1];                                                            \
      }                                                                                                               \
      for (int d = nd - 1; d >= 0; d--) {                                                                             \
        if (d == last) continue;                                                                                      \
        if (++k[d] < hi[d]) break;                                                                                    \
        k[d] = lo[d];                                                                                                 \
      }                                                                                                               \
    }                                                                                                                 \
  }
FILL(float)
FILL(double)

/* A run split into chunks of the batch dim `split`: chunk t covers indices
 * [t * len, ...) of it, with plan[0] (full chunks) or plan[1] (the last),
 * then scales and fills its own output while it is in cache. */
typedef struct run_ctx {
  const mt_fft_problem *p;
  int split;
  char *in, *out;
  int64_t len, n, istep, ostep; /* chunk length; the dim's size; byte steps per index */
  int64_t outer;                /* the product of the dims before split */
  void *plan[2];
} run_ctx;

/* Multiplies the reals in bytes [b, e) of out by the problem's scale. */
static void scale_bytes(const run_ctx *c, int64_t b, int64_t e) {
  if (c->p->dbl) {
    double *d = (double *)(c->out + b), s = c->p->scale;
    for (int64_t i = 0, m = (e - b) / (int64_t)sizeof(double); i < m; i++) d[i] *= s;
  } else {
    float *d = (float *)(c->out + b), s = (float)c->p->scale;
    for (int64_t i = 0, m = (e - b) / (int64_t)sizeof(float); i < m; i++) d[i] *= s;
  }
}

static void run_chunks(void *vctx, int64_t b, int64_t e) {
  run_ctx *c = vctx;
  const mt_fft_problem *p = c->p;
  for (int64_t t = b; t < e; t++) {
    int64_t start = t * c->len, len = start + c->len <= c->n ? c->len : c->n - start;
    execute(p->dbl, p->kind, len == c->len ? c->plan[0] : c->plan[1], c->in + start * c->istep,
            c->out + start * c->ostep);
    if (p->scale != 1) /* the chunk's output: one contiguous run per index of the dims before split */
      for (int64_t o = 0; o < c->outer; o++) {
        int64_t base = o * c->n * c->ostep;
        scale_bytes(c, base + start * c->ostep, base + (start + len) * c->ostep);
      }
    if (p->full && p->dbl) fill_double(p, (double *)c->out, c->split, start, start + len);
    else if (p->full) fill_float(p, (float *)c->out, c->split, start, start + len);
  }
}

/* Fills the key's transform and batch dims from p (strides in elements
 * of each side); the batch dim `split` gets extent len. */
static void fill_key(const mt_fft_problem *p, int split, int64_t len, plan_key *k) {
  int64_t is = 1, os = 1, istr[MT_MAXDIM], ostr[MT_MAXDIM];
  for (int d = p->ndim - 1; d >= 0; d--) istr[d] = is, ostr[d] = os, is *= p->ishape[d], os *= p->oshape[d];
  memset(k, 0, sizeof *k);
  k->kind = p->kind, k->dbl = p->dbl, k->sign = p->kind == MT_FFT_C2C ? p->sign : 0, k->measure = measure;
  k->inplace = p->inplace;
  bool is_t[MT_MAXDIM] = {false};
  for (int t = 0; t < p->nt; t++) {
    int d = p->tdims[t];
    is_t[d] = true;
    int64_t n = p->kind == MT_FFT_C2R ? p->oshape[d] : p->ishape[d];
    k->dims[k->rank++] = (fftw_iodim64){n, istr[d], ostr[d]};
  }
  for (int d = 0; d < p->ndim; d++)
    if (!is_t[d]) k->hdims[k->hrank++] = (fftw_iodim64){d == split ? len : p->ishape[d], istr[d], ostr[d]};
}

/* The chunk length for splitting n indices (istep, ostep bytes apart) over
 * nth threads: about n / nth, rounded up so that every chunk starts at the
 * base's alignment modulo 16 bytes: FFTW then keeps its aligned SIMD code
 * for all of them (one misaligned chunk would force FFTW_UNALIGNED). */
static int64_t chunk_len(int64_t n, int64_t istep, int64_t ostep, int nth) {
  if (nth <= 1 || n <= 1) return n;
  int64_t gi = 16, go = 16; /* gcd(step, 16) */
  while (istep % gi) gi /= 2;
  while (ostep % go) go /= 2;
  int64_t mi = 16 / gi, mo = 16 / go, m = mi > mo ? mi : mo; /* powers of two: lcm = max */
  int64_t len = (n + nth - 1) / nth;
  len = (len + m - 1) / m * m;
  return len < n ? len : n;
}

/* Runs p from in to out (the same buffer when p->inplace), split over the
 * largest batch dim; each chunk scales and fills its own output. */
static mt_status run_batched(const mt_fft_problem *p, void *in, void *out) {
  int64_t total = 1, onumel = 1;
  for (int d = 0; d < p->ndim; d++) total *= p->ishape[d] > p->oshape[d] ? p->ishape[d] : p->oshape[d];
  for (int d = 0; d < p->ndim; d++) onumel *= p->oshape[d];
  if (total == 0) return MT_OK;
  /* the batch dim to split: the largest */
  int split = -1;
  bool is_t[MT_MAXDIM] = {false};
  for (int t = 0; t < p->nt; t++) is_t[p->tdims[t]] = true;
  for (int d = 0; d < p->ndim; d++)
    if (!is_t[d] && (split < 0 || p->ishape[d] > p->ishape[split])) split = d;
  size_t real = p->dbl ? sizeof(double) : sizeof(float);
  size_t ies = p->kind == MT_FFT_R2C ? real : 2 * real, oes = p->kind == MT_FFT_C2R ? real : 2 * real;
  run_ctx c = {p, split, in, out, 1, 1, 0, onumel * (int64_t)oes, 1, {NULL, NULL}};
  if (split >= 0) {
    int64_t is = 1, os = 1;
    for (int d = p->ndim - 1; d > split; d--) is *= p->ishape[d], os *= p->oshape[d];
    for (int d = 0; d < split; d++) c.outer *= p->oshape[d];
    c.istep = is * (int64_t)ies, c.ostep = os * (int64_t)oes;
    c.n = p->ishape[split];
  }
  c.len = chunk_len(c.n, c.istep, c.ostep, split >= 0 && total >= 32768 ? mt_get_num_threads() : 1);
  int64_t n = c.n, len = c.len, chunks = (n + len - 1) / len;
  bool unaligned = false;
  for (int64_t t = 0; t < chunks; t++)
    unaligned |= fftw_alignment_of((double *)(c.in + t * len * c.istep)) != 0 ||
                 fftw_alignment_of((double *)(c.out + t * len * c.ostep)) != 0;
  plan_key k[2];
  bool owned[2] = {false, false};
  int64_t lens[2] = {len, n - (chunks - 1) * len};
  mt_status st = MT_OK;
  for (int i = 0; i < 2 && !st; i++) {
    if (i == 1 && lens[1] == len) {
      c.plan[1] = c.plan[0];
      break;
    }
    fill_key(p, split, lens[i], &k[i]);
    k[i].unaligned = unaligned;
    c.plan[i] = get_plan(&k[i], in, out, &owned[i]);
    if (!c.plan[i]) st = mt_fail(MT_EARG, "fft: FFTW could not plan this transform");
  }
  if (!st) st = mt_parallel_for(chunks, 1, run_chunks, &c);
  pthread_mutex_lock(&lock); /* destroying touches the planner's state too */
  for (int i = 0; i < 2; i++)
    if (owned[i]) destroy(p->dbl, c.plan[i]);
  pthread_mutex_unlock(&lock);
  return st;
}

/* The sub-problem of p over its transformed dims [t0, t1) (kind, shapes and
 * scale set by the caller). */
static mt_fft_problem pass_of(const mt_fft_problem *p, int t0, int t1) {
  mt_fft_problem q = *p;
  q.nt = t1 - t0;
  for (int t = t0; t < t1; t++) q.tdims[t - t0] = p->tdims[t];
  q.full = false, q.inplace = false, q.scale = 1;
  return q;
}

mt_status mt_fft_cpu_run(const mt_fft_problem *p, void *in, void *out) {
  int64_t batch = 1, total = 1;
  bool is_t[MT_MAXDIM] = {false};
  for (int t = 0; t < p->nt; t++) is_t[p->tdims[t]] = true;
  for (int d = 0; d < p->ndim; d++) {
    total *= p->ishape[d] > p->oshape[d] ? p->ishape[d] : p->oshape[d];
    if (!is_t[d]) batch *= p->ishape[d];
  }
  /* A multi-dim transform with fewer batched transforms than threads runs as
   * 1-D passes, each split over all its other dims, so that every thread has
   * work (FFTW's n-dim plan is faster on one thread: 15-25% at 1024 x 1024).
   * The passes round differently from the n-dim plan, so such results depend
   * on the thread count (deterministic for each). */
  int nth = mt_get_num_threads();
  if (p->nt < 2 || p->full || p->inplace || batch >= nth || total < 32768) return run_batched(p, in, out);
  /* r2c, c2c: the last transformed dim into out, then the others in place
   * there (complex, out's shape); c2r: the others in place on in (its own
   * copy), then the last into out. The scale goes with the second pass. */
  mt_fft_problem a = pass_of(p, 0, p->nt - 1), b = pass_of(p, p->nt - 1, p->nt);
  a.kind = MT_FFT_C2C, a.inplace = true;
  if (p->kind == MT_FFT_C2R) {
    for (int d = 0; d < p->ndim; d++) a.oshape[d] = a.ishape[d];
    b.scale = p->scale;
    mt_status st = run_batched(&a, in, in);
    return st ? st : run_batched(&b, in, out);
  }
  for (int d = 0; d < p->ndim; d++) a.ishape[d] = a.oshape[d];
  a.scale = p->scale;
  mt_status st = run_batched(&b, in, out);
  return st ? st : run_batched(&a, out, out);
}
