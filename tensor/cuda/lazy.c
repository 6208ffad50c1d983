/* lazy.c -- eager elementwise ops on a GPU wait to be fused. A launch costs
 * the host about 3-4 us in the driver alone, more than the rest of a small
 * op, so dense elementwise ops (kernels.c, launch_ew) join a waiting group
 * per device instead of launching. The group goes out as one kernel when
 * the stream is wanted for anything else (mt_cuda_current_stream, syncs,
 * events, copies, cuBLAS...), when an op cannot join (another length or
 * stream, an operand overlapping a written buffer at another place) or
 * when it is full.
 *
 * The fused kernel (elementwise.cu under MT_LAZY) runs the group's ops for
 * one element per thread, in order, each buffer read once into a variable
 * of its storage type and written back once at the end. Every result is
 * written and rounded to its dtype as the op alone would, so the outcome
 * is exactly the eager one. Buffers the group uses share only exact
 * places (same address, dtype and length): element e of every operand is
 * then touched by thread e alone, and in-place chains stay correct.
 *
 * A group's kernel is generated for its shape of ops (which ops, dtypes,
 * operand kinds, which buffer each reads and writes), not its addresses or
 * numbers, which are arguments. The first time a shape is seen its ops go
 * out one by one with their own kernels; from the second time it is
 * compiled (NVRTC, cached in memory and on disk) and launched once, so a
 * sequence met once (a REPL line, a test) never waits for a compiler. (A
 * background compiling thread was tried: a compile still under way when
 * the process exits races the driver's and cuBLAS's own exit handlers.) */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "files.h"
#include "mt_cuda.h"

extern const char mt_cuda_elementwise_cu[];

#define MAXOPS 32
#define MAXBUF 48
#define MAXNUM 32

/* A buffer of the group: n elements of dt at ptr, its storage retained. */
typedef struct {
  CUdeviceptr ptr;
  size_t bytes;
  mt_storage *st;
  int8_t dt;
  bool written;
} lbuf;

/* A waiting op; operand codes: >= 0 a buffer, < 0 the number -1 - code. */
typedef struct {
  const char *expr, *name;
  void *fn;
  int8_t cdt, nin, sint, out, in[2];
} lop;

typedef struct {
  void *stream;
  int64_t n;
  int nops, nbuf, nnum;
  lop ops[MAXOPS];
  lbuf bufs[MAXBUF];
  double f[MAXNUM];
  long long i[MAXNUM];
} group;

static group groups[MT_CUDA_MAXDEV];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int enabled = -1; /* -1: not read from the environment yet */
static mt_cuda_lazystats stats;
bool mt_cuda_lazy_failed;
static char failure[400];
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER; /* apart: mt_cuda_check reads it mid-flush */

/* while set (a torch.compile capture, whose eager ops run once), no group
 * shape is counted or compiled: known ones are used, new ones go op by op */
static bool held;

/* ---- fused kernels by the group's shape ---- */

/* The shape of one op in a group's key (addresses and numbers left out). */
typedef struct {
  const char *expr;
  int8_t cdt, nin, sint, out, in0, in1, pad[2];
} keyop;

typedef struct {
  uint64_t h;
  size_t len;
  unsigned char *key;
  int seen;
  bool bad; /* it did not compile: its groups go out op by op */
  void *fn;
} shape_entry;
#define NSHAPE 4096
static shape_entry shapes[NSHAPE];

/* The key of g's shape on dev into key; returns its length. */
static size_t group_key(int dev, const group *g, unsigned char *key) {
  size_t len = 0;
  for (int k = 0; k < g->nops; k++) {
    const lop *o = &g->ops[k];
    keyop ko;
    memset(&ko, 0, sizeof ko);
    ko.expr = o->expr, ko.cdt = o->cdt, ko.nin = o->nin, ko.sint = o->sint;
    ko.out = o->out, ko.in0 = o->in[0], ko.in1 = o->in[1];
    memcpy(key + len, &ko, sizeof ko);
    len += sizeof ko;
  }
  for (int b = 0; b < g->nbuf; b++) key[len++] = (unsigned char)g->bufs[b].dt;
  key[len++] = (unsigned char)g->nbuf;
  key[len++] = (unsigned char)g->nnum;
  key[len++] = (unsigned char)dev;
  return len;
}

/* Appends printf-style text to the growing source *s (length *n, capacity *cap). */
static bool put(char **s, size_t *n, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool put(char **s, size_t *n, size_t *cap, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*s + *n, *cap - *n, fmt, ap);
    va_end(ap);
    if (k < 0) return false;
    if ((size_t)k < *cap - *n) {
      *n += (size_t)k;
      return true;
    }
    char *t = realloc(*s, *cap * 2);
    if (!t) return false;
    *s = t, *cap *= 2;
  }
}

/* One operand of op o as a T value. */
static bool put_operand(char **s, size_t *n, size_t *cap, const group *g, const lop *o, int code) {
  if (code >= 0) return put(s, n, cap, "(T)LZL%d(s%d)", g->bufs[code].dt, code);
  return put(s, n, cap, o->sint ? "(T)LZ_I(%d)" : "(T)LZ_F(%d)", -1 - code);
}

/* The definitions that make elementwise.cu's mt_lazy run g's ops (malloc'ed). */
static char *group_source(const group *g) {
  size_t n = 0, cap = 8192;
  char *s = malloc(cap);
  bool ok = s != NULL;
  if (ok) ok = put(&s, &n, &cap, "#define MT_LAZY 1\n#define LZ_NW %d\n#define LZ_F0 %d\n#define LZ_I0 %d\n",
                   1 + g->nbuf + 2 * g->nnum, 1 + g->nbuf, 1 + g->nbuf + g->nnum);
  for (int d = 0; ok && d < MT_NDTYPE; d++) {
    const mt_cuda_dtinfo *t = mt_cuda_dt((mt_dtype)d);
    ok = put(&s, &n, &cap, "#define LZL%d(x) %s\n#define LZW%d(v) %s\n", d, t->load, d, t->write);
  }
  bool seen[MAXBUF] = {false};
  if (ok) ok = put(&s, &n, &cap, "#define LZ_BODY");
  for (int k = 0; ok && k < g->nops; k++) {
    const lop *o = &g->ops[k];
    for (int j = 0; ok && j < o->nin; j++) {
      int b = o->in[j];
      if (b >= 0 && !seen[b]) {
        const char *ty = mt_cuda_dt((mt_dtype)g->bufs[b].dt)->store;
        ok = put(&s, &n, &cap, " %s s%d = LZ_P(%d, %s)[e];", ty, b, b, ty);
        seen[b] = true;
      }
    }
    if (ok && !seen[o->out]) {
      ok = put(&s, &n, &cap, " %s s%d;", mt_cuda_dt((mt_dtype)g->bufs[o->out].dt)->store, o->out);
      seen[o->out] = true;
    }
    if (ok) ok = put(&s, &n, &cap, " { typedef %s T; T a = ", mt_cuda_dt((mt_dtype)o->cdt)->compute);
    if (ok) ok = put_operand(&s, &n, &cap, g, o, o->in[0]);
    if (ok) ok = put(&s, &n, &cap, "; T b = ");
    if (ok) ok = o->nin > 1 ? put_operand(&s, &n, &cap, g, o, o->in[1]) : put(&s, &n, &cap, "a");
    if (ok) ok = put(&s, &n, &cap, "; (void)b; s%d = LZW%d((%s)); }", o->out, g->bufs[o->out].dt, o->expr);
  }
  for (int b = 0; ok && b < g->nbuf; b++)
    if (g->bufs[b].written)
      ok = put(&s, &n, &cap, " LZ_P(%d, %s)[e] = s%d;", b, mt_cuda_dt((mt_dtype)g->bufs[b].dt)->store, b);
  if (ok) ok = put(&s, &n, &cap, "\n");
  if (!ok) free(s);
  return ok ? s : NULL;
}

/* The fused kernel of g's shape, or NULL: not seen before (counted now),
 * or it does not compile. */
static void *fused_kernel(int dev, const group *g) {
  unsigned char key[MAXOPS * sizeof(keyop) + MAXBUF + 8];
  size_t len = group_key(dev, g, key);
  uint64_t h = mt_fnv1a(key, len, 0xcbf29ce484222325ull);
  shape_entry *e = &shapes[h % NSHAPE];
  if (!(e->key && e->h == h && e->len == len && !memcmp(e->key, key, len))) { /* new, or replacing a collision */
    free(e->key);
    memset(e, 0, sizeof *e);
    if (!(e->key = malloc(len))) return NULL;
    memcpy(e->key, key, len);
    e->h = h, e->len = len;
  }
  if (e->fn || e->bad || held) return e->fn;
  if (++e->seen < 2) return NULL;
  char *src = group_source(g);
  stats.compiles++;
  if (!src || mt_cuda_family(dev, src, mt_cuda_elementwise_cu, "mt_lazy", &e->fn)) {
    e->bad = true, e->fn = NULL; /* its ops still run, one by one */
    fprintf(stderr, "moontorch: note: a fused group of %d elementwise ops did not compile (%s); it runs op by op\n",
            g->nops, src ? mt_errmsg() : "out of memory");
  }
  free(src);
  return e->fn;
}

/* ---- sending a group ---- */

static mt_status launch_fused(int dev, const group *g, void *fn) {
  unsigned long long w[2 + MAXBUF + 2 * MAXNUM];
  w[0] = (unsigned long long)g->n;
  for (int b = 0; b < g->nbuf; b++) w[1 + b] = (unsigned long long)g->bufs[b].ptr;
  for (int j = 0; j < g->nnum; j++) {
    memcpy(&w[1 + g->nbuf + j], &g->f[j], sizeof(double));
    w[1 + g->nbuf + g->nnum + j] = (unsigned long long)g->i[j];
  }
  char name[48];
  snprintf(name, sizeof name, "%d fused ops (%s ...)", g->nops, g->ops[0].name);
  void *args[] = {w};
  stats.fused_groups++;
  stats.fused_ops += g->nops;
  return mt_cuda_launch_on(dev, g->stream, fn, g->n, args, name);
}

/* Op k of g with its own kernel, as launch_ew would have launched it. */
static mt_status launch_one(int dev, const group *g, const lop *o) {
  CUdeviceptr po = g->bufs[o->out].ptr, p[2] = {0, 0};
  double f[2] = {0, 0};
  long long i[2] = {0, 0};
  for (int j = 0; j < o->nin; j++) {
    if (o->in[j] >= 0) p[j] = g->bufs[o->in[j]].ptr;
    else f[j] = g->f[-1 - o->in[j]], i[j] = g->i[-1 - o->in[j]];
  }
  mt_cuda_geo geo;
  memset(&geo, 0, sizeof geo);
  geo.n = g->n;
  void *args[] = {&po, &p[0], &p[1], &f[0], &i[0], &f[1], &i[1], &geo};
  return mt_cuda_launch_on(dev, g->stream, o->fn, g->n, args, o->name);
}

static void keep_failure(void) {
  pthread_mutex_lock(&failure_lock);
  snprintf(failure, sizeof failure, "%s", mt_errmsg());
  mt_cuda_lazy_failed = true;
  pthread_mutex_unlock(&failure_lock);
}

/* Sends dev's group and empties it; the caller holds the lock. */
static void flush_locked(int dev) {
  group *g = &groups[dev];
  if (!g->nops) return;
  stats.groups++;
  void *fn = g->nops > 1 ? fused_kernel(dev, g) : NULL;
  mt_status st = MT_OK;
  if (fn) st = launch_fused(dev, g, fn);
  for (int k = 0; !fn && !st && k < g->nops; k++) st = launch_one(dev, g, &g->ops[k]);
  if (st) keep_failure();
  for (int b = 0; b < g->nbuf; b++) mt_storage_release(g->bufs[b].st);
  g->nops = g->nbuf = g->nnum = 0;
}

void mt_cuda_lazy_flush(int dev) {
  if (dev < 0 || dev >= MT_CUDA_MAXDEV || !groups[dev].nops) return;
  pthread_mutex_lock(&lock);
  flush_locked(dev);
  pthread_mutex_unlock(&lock);
}

/* ---- joining a group ---- */

static bool overlap(CUdeviceptr p, size_t n, CUdeviceptr q, size_t m) { return p < q + m && q < p + n; }

/* The buffer of g that is exactly t (-1: none); *clash when t overlaps
 * another buffer in a way the fused kernel cannot keep in order: a write
 * over any other, or a read of another one that the group writes. */
static int find_buffer(const group *g, const mt_tensor *t, int64_t n, bool write, bool *clash) {
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)mt_data(t);
  size_t bytes = (size_t)n * mt_elsize(t);
  int found = -1;
  for (int b = 0; b < g->nbuf; b++) {
    const lbuf *x = &g->bufs[b];
    if (x->ptr == p && x->dt == t->dtype) found = b;
    else if (overlap(p, bytes, x->ptr, x->bytes) && (write || x->written)) *clash = true;
  }
  return found;
}

/* True when the op's own operands overlap each other but not exactly
 * where it writes (it then goes out alone, as before). */
static bool self_overlap(const mt_cuda_ewop *op) {
  CUdeviceptr po = (CUdeviceptr)(uintptr_t)mt_data(op->out);
  size_t no = (size_t)op->n * mt_elsize(op->out);
  for (int j = 0; j < op->nin; j++) {
    const mt_tensor *t = op->in[j].t;
    if (!t) continue;
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)mt_data(t);
    if (overlap(po, no, p, (size_t)op->n * mt_elsize(t)) && !(p == po && t->dtype == op->out->dtype)) return true;
  }
  return false;
}

/* The buffer of g from index `from` on that is exactly t (-1: none). */
static int same_buffer(const group *g, int from, const mt_tensor *t) {
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)mt_data(t);
  for (int b = from; b < g->nbuf; b++)
    if (g->bufs[b].ptr == p && g->bufs[b].dt == t->dtype) return b;
  return -1;
}

static int add_buffer(group *g, const mt_tensor *t) {
  lbuf *x = &g->bufs[g->nbuf];
  x->ptr = (CUdeviceptr)(uintptr_t)mt_data(t);
  x->bytes = (size_t)g->n * mt_elsize(t);
  x->st = t->storage;
  x->dt = t->dtype;
  x->written = false;
  mt_storage_retain(t->storage);
  return g->nbuf++;
}

/* The code of operand in, adding its buffer (found: its buffer, or -1). */
static int code_of(group *g, const mt_cuda_operand *in, int found) {
  if (in->t) return found >= 0 ? found : add_buffer(g, in->t);
  g->f[g->nnum] = in->f;
  g->i[g->nnum] = in->i;
  return -1 - g->nnum++;
}

static bool is_enabled(void) {
  if (enabled < 0) {
    const char *v = getenv("MOONTORCH_CUDA_LAZY");
    enabled = !(v && !strcmp(v, "0"));
  }
  return enabled;
}

bool mt_cuda_lazy_add(int dev, const mt_cuda_ewop *op) {
  if (!is_enabled() || op->n <= 0 || dev < 0 || dev >= MT_CUDA_MAXDEV || self_overlap(op)) return false;
  void *stream = mt_cuda_stream_handle(dev);
  pthread_mutex_lock(&lock);
  group *g = &groups[dev];
  int found[3] = {-1, -1, -1}; /* the buffers of in[0], in[1] and out already in the group */
  bool clash = false;
  for (int j = 0; j < op->nin; j++)
    if (op->in[j].t) found[j] = find_buffer(g, op->in[j].t, op->n, false, &clash);
  found[2] = find_buffer(g, op->out, op->n, true, &clash);
  if (g->nops && (clash || g->stream != stream || g->n != op->n || g->nbuf + 3 > MAXBUF || g->nnum + 2 > MAXNUM)) {
    flush_locked(dev);
    found[0] = found[1] = found[2] = -1;
  }
  g->stream = stream, g->n = op->n;
  lop *o = &g->ops[g->nops];
  o->expr = op->expr, o->name = op->name, o->fn = op->fn;
  o->cdt = (int8_t)op->cdt, o->nin = (int8_t)op->nin, o->sint = op->sint;
  int first_new = g->nbuf; /* operands of this op may share a buffer added just now (x + x, x:add_(y)) */
  for (int j = 0; j < op->nin; j++) {
    if (op->in[j].t && found[j] < 0) found[j] = same_buffer(g, first_new, op->in[j].t);
    o->in[j] = (int8_t)code_of(g, &op->in[j], found[j]);
  }
  if (op->nin < 2) o->in[1] = o->in[0];
  if (found[2] < 0) found[2] = same_buffer(g, first_new, op->out);
  o->out = (int8_t)(found[2] >= 0 ? found[2] : add_buffer(g, op->out));
  g->bufs[o->out].written = true;
  g->nops++;
  stats.ops++;
  if (g->nops == MAXOPS) flush_locked(dev);
  pthread_mutex_unlock(&lock);
  return true;
}

void mt_cuda_lazy_hold(bool on) { held = on; }

bool mt_cuda_lazy_enable(bool on) {
  bool was = is_enabled();
  if (!on)
    for (int d = 0; d < MT_CUDA_MAXDEV; d++) mt_cuda_lazy_flush(d);
  enabled = on;
  return was;
}

mt_cuda_lazystats mt_cuda_lazy_stats(void) {
  pthread_mutex_lock(&lock);
  mt_cuda_lazystats s = stats;
  pthread_mutex_unlock(&lock);
  return s;
}

mt_status mt_cuda_lazy_failure(void) {
  pthread_mutex_lock(&failure_lock);
  bool was = mt_cuda_lazy_failed;
  mt_cuda_lazy_failed = false;
  char msg[sizeof failure];
  snprintf(msg, sizeof msg, "%s", failure);
  pthread_mutex_unlock(&failure_lock);
  return was ? mt_fail(MT_EDEVICE, "%s", msg) : MT_OK;
}
