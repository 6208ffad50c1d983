/* cudnn.c (cuda) -- convolutions through cuDNN's convolution API, loaded
 * with dlopen at first use ($MOONTORCH_CUDNN, then libcudnn.so.9 or .8 on
 * the loader path and in /usr/local/cuda). One handle per device, bound to
 * the current stream at each call; descriptors are made per call, the
 * algorithm is chosen once per problem (cuDNN's heuristics, the first
 * deterministic one that fits the workspace cap) and cached. float32 runs
 * in full precision (FMA math) unless set_float32_matmul_precision allows
 * TF32. A problem cuDNN cannot run is declined (*done false): cuda/conv.c
 * then takes its im2col + cuBLAS path. The optional cudnn_ops entries
 * (pooling, batch norm) are loaded here too and used by cudnn_ops.c
 * through mt_cudnn_lib / mt_cudnn_handle. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/conv_kernels.h"
#include "cudnn_api.h"
#include "files.h"
#include "mt_cuda.h"

static mt_cudnn_fns dn;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[300];
static bool loaded;
static size_t version;
static cudnnHandle_t handles[MT_CUDA_MAXDEV];
static _Atomic bool enabled = true;
static _Atomic int64_t n_convs, n_declined;
static char last_declined[240]; /* under lock */
static _Atomic int last_algo[3] = {-1, -1, -1}, last_math[3];

/* The largest workspace an algorithm may ask for. */
#define WS_CAP ((size_t)1 << 30)

static void load(void) {
  static const char *names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
  static const char *dirs[] = {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                               "/usr/lib/x86_64-linux-gnu/"};
  void *h = mt_dlopen_first("MOONTORCH_CUDNN", names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             "cuDNN (libcudnn.so.9) was not found; install cuDNN 9 or set MOONTORCH_CUDNN to its path");
    return;
  }
#define MT_CUDNN_LOAD(R, name, sym, params)                                                                            \
  if (!(*(void **)&dn.name = dlsym(h, sym))) {                                                                         \
    snprintf(load_error, sizeof load_error, "cuDNN lacks %s", sym);                                                    \
    return;                                                                                                            \
  }
  MT_CUDNN_FUNCS(MT_CUDNN_LOAD)
#undef MT_CUDNN_LOAD
#define MT_CUDNN_LOAD_OPTIONAL(R, name, sym, params) *(void **)&dn.name = dlsym(h, sym);
  MT_CUDNN_OPS_FUNCS(MT_CUDNN_LOAD_OPTIONAL)
#undef MT_CUDNN_LOAD_OPTIONAL
  *(void **)&dn.GetLastErrorString = dlsym(h, "cudnnGetLastErrorString");
  version = dn.GetVersion();
  if (version < 8000) {
    snprintf(load_error, sizeof load_error, "cuDNN %zu is too old (8 or 9 needed)", version);
    return;
  }
  loaded = true;
}

void mt_cudnn_set_enabled(bool on) { enabled = on; }

mt_cudnn_info mt_cudnn_stats(void) {
  pthread_once(&load_once, load);
  mt_cudnn_info r;
  memset(&r, 0, sizeof r);
  r.loaded = loaded, r.enabled = enabled, r.version = loaded ? (int64_t)version : 0;
  r.convs = n_convs, r.declined = n_declined;
  for (int i = 0; i < 3; i++) r.algo[i] = last_algo[i], r.math[i] = last_math[i];
  pthread_mutex_lock(&lock);
  snprintf(r.last_declined, sizeof r.last_declined, "%s", last_declined);
  pthread_mutex_unlock(&lock);
  snprintf(r.load_error, sizeof r.load_error, "%s", loaded ? "" : load_error);
  mt_cudnn_ops_stats(&r);
  return r;
}

/* Records why cuDNN did not run a problem; the first time, says so on stderr. */
static void decline(const char *op, const char *why) {
  static _Atomic bool told;
  n_declined++;
  pthread_mutex_lock(&lock);
  snprintf(last_declined, sizeof last_declined, "%s: %s", op, why);
  pthread_mutex_unlock(&lock);
  if (!told) {
    told = true;
    fprintf(stderr, "note: %s: %s; using im2col + cuBLAS (said once)\n", op, why);
  }
}

static const char *kind_name(int kind) {
  return kind == 0 ? "convolution" : kind == 1 ? "conv_backward_input" : "conv_backward_weight";
}

/* ---- the algorithm chosen per problem ---- */

typedef struct key {
  int32_t dev, kind, dt, tf32;
  int64_t N, C, K, G, in[3], k[3], stride[3], dil[3], pad[3];
} key;

typedef struct choice {
  key k;
  bool used;
  int algo, math; /* algo -1: cuDNN declined the problem */
  size_t ws;
} choice;

#define NCHOICE 512
static choice choices[NCHOICE]; /* open addressing; emptied when full */

static uint64_t hash_key(const key *k) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *b = (const unsigned char *)k;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* The cached choice for k (*hit false: none yet). */
static bool find_choice(const key *k, choice *out) {
  bool hit = false;
  pthread_mutex_lock(&lock);
  for (uint64_t i = hash_key(k) % NCHOICE, n = 0; n < NCHOICE && choices[i].used; i = (i + 1) % NCHOICE, n++)
    if (memcmp(&choices[i].k, k, sizeof *k) == 0) {
      *out = choices[i], hit = true;
      break;
    }
  pthread_mutex_unlock(&lock);
  return hit;
}

/* Stores c, replacing the entry of its key if there is one. */
static void keep_choice(const choice *c) {
  pthread_mutex_lock(&lock);
  uint64_t i = hash_key(&c->k) % NCHOICE, n = 0;
  for (; n < NCHOICE && choices[i].used && memcmp(&choices[i].k, &c->k, sizeof c->k); i = (i + 1) % NCHOICE, n++) {}
  if (n == NCHOICE) memset(choices, 0, sizeof choices), i = hash_key(&c->k) % NCHOICE;
  choices[i] = *c;
  choices[i].used = true;
  pthread_mutex_unlock(&lock);
}

/* ---- descriptors ---- */

typedef struct descs {
  TD x, y;
  FD w;
  CD c;
} descs;

static void free_descs(descs *d) {
  if (d->x) dn.DestroyTensorDescriptor(d->x);
  if (d->y) dn.DestroyTensorDescriptor(d->y);
  if (d->w) dn.DestroyFilterDescriptor(d->w);
  if (d->c) dn.DestroyConvolutionDescriptor(d->c);
}

static int data_type(mt_dtype dt) {
  switch (dt) {
  case MT_FLOAT32: return MT_CUDNN_DATA_FLOAT;
  case MT_FLOAT64: return MT_CUDNN_DATA_DOUBLE;
  case MT_FLOAT16: return MT_CUDNN_DATA_HALF;
  case MT_BFLOAT16: return MT_CUDNN_DATA_BFLOAT16;
  default: return -1;
  }
}

/* Contiguous strides of dims[0..n). */
static void strides_of(const int *dims, int n, int *s) {
  s[n - 1] = 1;
  for (int i = n - 2; i >= 0; i--) s[i] = s[i + 1] * dims[i + 1];
}

static bool fits(const int64_t *v, int n) {
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    if (v[i] > 0x7fffffff) return false;
    total *= v[i];
  }
  return total <= 0x7fffffff;
}

/* Describes p (x, w, y in the forward direction) to cuDNN: 1-D problems as
 * 2-D ones of height 1. Returns NULL, or why cuDNN cannot take p. */
static const char *make_descs(const mt_conv_problem *p, int ty, descs *d, cudnnStatus_t *err) {
  int s = p->nsp == 3 ? 3 : 2, off = 3 - s;
  int64_t xd[5] = {p->N, p->C}, yd[5] = {p->N, p->K}, wd[5] = {p->K, p->C / p->G};
  int pad[3], str[3], dil[3];
  for (int i = 0; i < s; i++) {
    if (p->pad_lo[off + i] != p->pad_hi[off + i]) return "asymmetric padding";
    xd[2 + i] = p->in[off + i], yd[2 + i] = p->out[off + i], wd[2 + i] = p->k[off + i];
    pad[i] = (int)p->pad_lo[off + i], str[i] = (int)p->stride[off + i], dil[i] = (int)p->dil[off + i];
    if (p->pad_lo[off + i] > 0x7fffffff || p->stride[off + i] > 0x7fffffff || p->dil[off + i] > 0x7fffffff)
      return "sizes beyond 32 bits";
  }
  if (!fits(xd, s + 2) || !fits(yd, s + 2) || !fits(wd, s + 2)) return "tensors of 2^31 elements or more";
  int xi[5], yi[5], wi[5], xs[5], ys[5];
  for (int i = 0; i < s + 2; i++) xi[i] = (int)xd[i], yi[i] = (int)yd[i], wi[i] = (int)wd[i];
  strides_of(xi, s + 2, xs), strides_of(yi, s + 2, ys);
  int compute = ty == MT_CUDNN_DATA_DOUBLE ? MT_CUDNN_DATA_DOUBLE : MT_CUDNN_DATA_FLOAT;
  if ((*err = dn.CreateTensorDescriptor(&d->x)) || (*err = dn.CreateTensorDescriptor(&d->y)) ||
      (*err = dn.CreateFilterDescriptor(&d->w)) || (*err = dn.CreateConvolutionDescriptor(&d->c)) ||
      (*err = dn.SetTensorNdDescriptor(d->x, ty, s + 2, xi, xs)) ||
      (*err = dn.SetTensorNdDescriptor(d->y, ty, s + 2, yi, ys)) ||
      (*err = dn.SetFilterNdDescriptor(d->w, ty, MT_CUDNN_TENSOR_NCHW, s + 2, wi)) ||
      (*err = dn.SetConvolutionNdDescriptor(d->c, s, pad, str, dil, MT_CUDNN_CROSS_CORRELATION, compute)) ||
      (*err = dn.SetConvolutionGroupCount(d->c, (int)p->G)))
    return "descriptors refused";
  return NULL;
}

/* The workspace algo needs under math (set on d->c), or a failure. */
static cudnnStatus_t workspace(cudnnHandle_t h, int kind, const descs *d, int algo, size_t *bytes) {
  return kind == 0   ? dn.FwdWorkspace(h, d->x, d->w, d->c, d->y, algo, bytes)
         : kind == 1 ? dn.BwdDataWorkspace(h, d->w, d->y, d->c, d->x, algo, bytes)
                     : dn.BwdFilterWorkspace(h, d->x, d->y, d->c, d->w, algo, bytes);
}

/* Picks the algorithm for kind on d: cuDNN's heuristic order, skipping
 * failures, nondeterministic ones (backward), tensor-core math for float32
 * without TF32 and workspaces over WS_CAP. c->algo -1 when none is left. */
static void choose(cudnnHandle_t h, int kind, mt_dtype dt, bool tf32, const descs *d, choice *c) {
  bool strict = dt == MT_FLOAT32 && !tf32;
  int base = strict ? MT_CUDNN_FMA_MATH
             : dt == MT_FLOAT32 || dt == MT_FLOAT64 ? MT_CUDNN_DEFAULT_MATH
                                                    : MT_CUDNN_TENSOR_OP_MATH;
  mt_cudnn_perf perf[16];
  int n = 0;
  c->algo = -1;
  if (dn.SetConvolutionMathType(d->c, base)) return;
  cudnnStatus_t s = kind == 0   ? dn.GetFwdAlgos(h, d->x, d->w, d->c, d->y, 16, &n, perf)
                    : kind == 1 ? dn.GetBwdDataAlgos(h, d->w, d->y, d->c, d->x, 16, &n, perf)
                                : dn.GetBwdFilterAlgos(h, d->x, d->y, d->c, d->w, 16, &n, perf);
  if (s) return;
  for (int i = 0; i < n && i < 16; i++) {
    const mt_cudnn_perf *q = &perf[i];
    if (q->status || (kind != 0 && q->determinism != MT_CUDNN_DETERMINISTIC)) continue;
    if (strict && (q->mathType == MT_CUDNN_TENSOR_OP_MATH || q->mathType == MT_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      continue;
    int math = strict ? MT_CUDNN_FMA_MATH : q->mathType;
    size_t bytes = 0;
    if (dn.SetConvolutionMathType(d->c, math) || workspace(h, kind, d, q->algo, &bytes) || bytes > WS_CAP) continue;
    c->algo = q->algo, c->math = math, c->ws = bytes;
    return;
  }
}

cudnnStatus_t mt_cudnn_handle(int dev, cudnnHandle_t *out) {
  cudnnStatus_t s = 0;
  pthread_mutex_lock(&lock);
  if (!handles[dev]) s = dn.Create(&handles[dev]);
  pthread_mutex_unlock(&lock);
  if (!s) s = dn.SetStream(handles[dev], mt_cuda_current_stream(dev).handle);
  *out = handles[dev];
  return s;
}

const mt_cudnn_fns *mt_cudnn_lib(size_t *ver, const char **why) {
  pthread_once(&load_once, load);
  if (ver) *ver = version;
  if (why) *why = !loaded ? load_error : !enabled ? "cuDNN is switched off (torch.backends.cudnn.enabled = false)" : NULL;
  return loaded && enabled ? &dn : NULL;
}

/* The cache key of problem p in direction kind. */
static void make_key(const mt_conv_problem *p, int kind, mt_dtype dt, int dev, bool tf32, key *k) {
  memset(k, 0, sizeof *k);
  k->dev = dev, k->kind = kind, k->dt = (int32_t)dt, k->tf32 = dt == MT_FLOAT32 && tf32;
  k->N = p->N, k->C = p->C, k->K = p->K, k->G = p->G;
  for (int i = 0; i < 3; i++) {
    k->in[i] = p->in[i], k->k[i] = p->k[i], k->stride[i] = p->stride[i], k->dil[i] = p->dil[i];
    k->pad[i] = p->pad_lo[i] == p->pad_hi[i] ? p->pad_lo[i] : -1 - p->pad_hi[i]; /* asymmetric: its own key */
  }
}

/* Runs the chosen algorithm: y = the direction's result from a and b
 * (fwd: x, w; data: gy, w; filter: gy, x), overwritten (beta 0). */
static cudnnStatus_t run_algo(cudnnHandle_t h, int kind, mt_dtype dt, const descs *d, const choice *c, void *ws,
                              const mt_tensor *a, const mt_tensor *b, mt_tensor *y) {
  double one64 = 1, zero64 = 0;
  float one32 = 1, zero32 = 0;
  const void *one = dt == MT_FLOAT64 ? (const void *)&one64 : (const void *)&one32;
  const void *zero = dt == MT_FLOAT64 ? (const void *)&zero64 : (const void *)&zero32;
  const void *pa = mt_data(a), *pb = mt_data(b);
  void *py = mt_data(y);
  return kind == 0   ? dn.Forward(h, one, d->x, pa, d->w, pb, d->c, c->algo, ws, c->ws, zero, d->y, py)
         : kind == 1 ? dn.BackwardData(h, one, d->w, pb, d->y, pa, d->c, c->algo, ws, c->ws, zero, d->x, py)
                     : dn.BackwardFilter(h, one, d->x, pb, d->y, pa, d->c, c->algo, ws, c->ws, zero, d->w, py);
}

mt_status mt_cudnn_conv(int kind, const mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                        bool *done) {
  const char *op = kind_name(kind);
  *done = false;
  if (!enabled) return MT_OK;
  pthread_once(&load_once, load);
  mt_dtype dt = (mt_dtype)y->dtype;
  int ty = data_type(dt);
  if (!loaded || ty < 0) {
    decline(op, loaded ? "dtype not supported by cuDNN" : load_error);
    return MT_OK;
  }
  int dev = mt_tdevice(y).index;
  bool tf32 = mt_cuda_tf32();
  key k;
  make_key(p, kind, dt, dev, tf32, &k);
  choice c = {.k = k, .algo = -1};
  bool hit = find_choice(&k, &c);
  if (hit && c.algo < 0) {
    n_declined++;
    return MT_OK;
  }
  cudnnHandle_t h = NULL;
  mt_status st = MT_OK;
  descs d = {0};
  cudnnStatus_t err = mt_cudnn_handle(dev, &h);
  const char *why = err ? "no handle" : make_descs(p, ty, &d, &err);
  if (!why && !hit) {
    choose(h, kind, dt, tf32, &d, &c);
    keep_choice(&c);
    if (c.algo < 0) why = "no deterministic algorithm within the workspace cap";
  }
  if (!why && dn.SetConvolutionMathType(d.c, c.math)) why = "math type refused";
  void *ws = NULL;
  if (!why && c.ws && (st = mt_cuda_malloc(dev, c.ws, &ws))) {
    free_descs(&d);
    return st;
  }
  if (!why) {
    mt_cuda_note_launch(dev, op);
    if ((err = run_algo(h, kind, dt, &d, &c, ws, a, b, y))) why = "the call failed";
  }
  if (ws) mt_cuda_free(dev, ws);
  free_descs(&d);
  if (why) {
    char msg[200];
    if (err) snprintf(msg, sizeof msg, "cuDNN declined (%s: %s)", why, dn.GetErrorString(err));
    else snprintf(msg, sizeof msg, "cuDNN declined (%s)", why);
    decline(op, msg);
    if (err) { /* a choice that fails: decline this problem from now on */
      c.algo = -1;
      keep_choice(&c);
    }
    return MT_OK;
  }
  n_convs++;
  last_algo[kind] = c.algo;
  last_math[kind] = c.math;
  *done = true;
  return MT_OK;
}
