/* profiler.c -- the event recorder of torch.profiler (see profiler.h). It
 * only appends timestamped, nested events to growable arrays; aggregation,
 * tables and trace files are the Lua package's job (lua/torch/profiler/).
 * Memory failures drop events (marking the profile) and never fail an op. */
#include "profiler.h"

#include "cuda/mt_cuda.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

_Thread_local mtg_profiler *mtg_prof;

/* Tokens are (generation << 32) | event index, so that a token left over
 * from an earlier profile cannot close an event of the current one. */
static _Atomic int64_t generations;
#define TOKEN(p, k) (((p)->gen << 32) | (k))

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Grows *p (of *cap elements of size sz) to hold need; false on failure. */
static bool grow(void **p, int64_t *cap, int64_t need, size_t sz) {
  if (need <= *cap) return true;
  int64_t c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * sz);
  if (!q) return false;
  *p = q, *cap = c;
  return true;
}

mt_status mtg_prof_start(unsigned flags) {
  if (mtg_prof) return mt_fail(MT_EARG, "profiler: a profiler is already running on this thread");
  mtg_profiler *p = calloc(1, sizeof *p);
  if (!p) return mt_fail(MT_ENOMEM, "profiler: out of memory");
  p->flags = flags;
  p->cur = -1;
  if (flags & MTG_PROF_CUDA) {
    p->cudadev = mt_cuda_current_device();
    const char *sync = getenv("MOONTORCH_PROFILE_SYNC");
    p->sync = sync && strcmp(sync, "0") != 0;
    mt_status st = mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)p->cudadev}, "profiler");
    if (st) {
      free(p);
      return st;
    }
  }
  p->gen = (atomic_fetch_add(&generations, 1) + 1) & 0x7fffffff;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  p->start_wall = (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
  p->mem0 = mt_cpu_bytes_in_use();
  p->start_ns = now_ns();
  mtg_prof = p;
  return MT_OK;
}

/* MTG_PROF_CUDA: records CUDA event `which` (0 begin, 1 end) of e on the
 * device's current stream, making the pair at begin. Failures leave e untimed. */
static void cuda_mark(mtg_profiler *p, mtg_prof_event *e, int which) {
  if (!which) {
    e->cev = -1;
    if (!grow((void **)&p->cuev, &p->capcuev, p->ncuev + 2, sizeof *p->cuev)) return;
    void **pair = p->cuev + p->ncuev;
    pair[0] = pair[1] = NULL;
    if (mt_cuda_event_create(p->cudadev, true, &pair[0]) || mt_cuda_event_create(p->cudadev, true, &pair[1])) {
      if (pair[0]) mt_cuda_event_destroy(p->cudadev, pair[0]);
      return;
    }
    e->cev = p->ncuev;
    p->ncuev += 2;
  }
  if (e->cev < 0) return;
  mt_cuda_stream s = mt_cuda_current_stream(p->cudadev);
  if (mt_cuda_event_record(p->cuev[e->cev + which], &s)) e->cev = -1;
  if (p->sync) mt_cuda_stream_synchronize(&s); /* CPU times then hold the device's time too */
}

/* Closes the open events from the innermost down to (excluding) stop. */
static void close_open(mtg_profiler *p, int32_t stop) {
  while (p->cur >= 0 && p->cur != stop) {
    mtg_prof_event *e = &p->ev[p->cur];
    if (p->flags & MTG_PROF_CUDA) cuda_mark(p, e, 1);
    e->t1 = now_ns() - p->start_ns;
    if (p->flags & MTG_PROF_MEMORY) e->mem = mt_cpu_bytes_in_use() - e->mem, e->cmem = mt_cuda_bytes_in_use() - e->cmem;
    p->cur = e->parent;
  }
}

mtg_profiler *mtg_prof_stop(void) {
  mtg_profiler *p = mtg_prof;
  if (!p) return NULL;
  close_open(p, -1);
  p->stop_ns = now_ns() - p->start_ns;
  mtg_prof = NULL;
  for (int64_t i = 0; i < p->nev; i++) { /* device times, once the device has run it all */
    mtg_prof_event *e = &p->ev[i];
    float ms = 0;
    if (e->cev >= 0 && !mt_cuda_event_synchronize(p->cudadev, p->cuev[e->cev + 1]) &&
        !mt_cuda_event_elapsed(p->cudadev, p->cuev[e->cev], p->cuev[e->cev + 1], &ms))
      e->cuda_ns = (int64_t)((double)ms * 1e6);
  }
  return p;
}

void mtg_prof_free(mtg_profiler *p) {
  if (!p) return;
  for (int32_t i = 0; i < p->nnames; i++) free(p->names[i]);
  free(p->names);
  free(p->slots);
  free(p->ev);
  free(p->shape_data);
  for (int64_t i = 0; i < p->ncuev; i++) mt_cuda_event_destroy(p->cudadev, p->cuev[i]);
  free(p->cuev);
  free(p);
}

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* Rebuilds the name hash with room for twice the names. */
static bool rehash(mtg_profiler *p) {
  int32_t n = p->nslots ? p->nslots * 2 : 256;
  int32_t *s = calloc((size_t)n, sizeof *s);
  if (!s) return false;
  for (int32_t i = 0; i < p->nnames; i++) {
    uint32_t h = hash_str(p->names[i]) & (uint32_t)(n - 1);
    while (s[h]) h = (h + 1) & (uint32_t)(n - 1);
    s[h] = i + 1;
  }
  free(p->slots);
  p->slots = s, p->nslots = n;
  return true;
}

int32_t mtg_prof_intern(const char *name) {
  mtg_profiler *p = mtg_prof;
  if (!p) return -1;
  if (2 * (p->nnames + 1) > p->nslots && !rehash(p)) return -1;
  uint32_t mask = (uint32_t)p->nslots - 1, h = hash_str(name) & mask;
  for (; p->slots[h]; h = (h + 1) & mask)
    if (strcmp(p->names[p->slots[h] - 1], name) == 0) return p->slots[h] - 1;
  int64_t cap = p->capnames;
  if (!grow((void **)&p->names, &cap, p->nnames + 1, sizeof *p->names)) return -1;
  p->capnames = (int32_t)cap;
  char *copy = strdup(name);
  if (!copy) return -1;
  p->names[p->nnames] = copy;
  p->slots[h] = p->nnames + 1;
  return p->nnames++;
}

/* Opens event `name`; shapes (n int64 entries, already encoded as in
 * shape_data, for ninputs inputs) are copied. Returns the token or -1. */
static int64_t begin(mtg_profiler *p, int32_t name, int kind, const int64_t *shapes, int64_t n, int ninputs) {
  if (name < 0 || p->oom) return -1;
  if (p->nev >= 0x7fffffff) { /* parents are int32 */
    p->oom = true;
    return -1;
  }
  if (!grow((void **)&p->ev, &p->capev, p->nev + 1, sizeof *p->ev) ||
      (n && !grow((void **)&p->shape_data, &p->capshape, p->nshape + n, sizeof *p->shape_data))) {
    p->oom = true;
    return -1;
  }
  int64_t k = p->nev++;
  mtg_prof_event *e = &p->ev[k];
  e->name = name, e->kind = kind, e->parent = p->cur;
  e->shapes = -1, e->nshapes = 0;
  if (n) {
    memcpy(p->shape_data + p->nshape, shapes, (size_t)n * sizeof *shapes);
    e->shapes = p->nshape, e->nshapes = ninputs;
    p->nshape += n;
  }
  p->cur = (int32_t)k;
  e->mem = (p->flags & MTG_PROF_MEMORY) ? mt_cpu_bytes_in_use() : 0;
  e->cmem = (p->flags & MTG_PROF_MEMORY) ? mt_cuda_bytes_in_use() : 0;
  e->t1 = -1;
  e->cuda_ns = -1, e->cev = -1;
  if (p->flags & MTG_PROF_CUDA) cuda_mark(p, e, 0);
  e->t0 = now_ns() - p->start_ns;
  return TOKEN(p, k);
}

int64_t mtg_prof_begin_id(int32_t name, int kind) {
  mtg_profiler *p = mtg_prof;
  return p ? begin(p, name, kind, NULL, 0, 0) : -1;
}

int64_t mtg_prof_begin_shapes(int32_t name, int kind, const int64_t *shapes, int64_t n, int ninputs) {
  mtg_profiler *p = mtg_prof;
  return p ? begin(p, name, kind, shapes, n, ninputs) : -1;
}

void mtg_prof_end(int64_t token) {
  mtg_profiler *p = mtg_prof;
  if (!p || token < 0 || (token >> 32) != p->gen) return;
  token &= 0xffffffff;
  if (token >= p->nev) return;
  mtg_prof_event *e = &p->ev[token];
  if (e->t1 >= 0) return; /* already closed (by an enclosing end) */
  close_open(p, (int32_t)token);
  /* the end mark sends the event's waiting CUDA work (compiling it the first
   * time): that is the event's own cost, so the clock reads after it */
  if (p->flags & MTG_PROF_CUDA) cuda_mark(p, e, 1);
  e->t1 = now_ns() - p->start_ns;
  if (p->flags & MTG_PROF_MEMORY) e->mem = mt_cpu_bytes_in_use() - e->mem;
  p->cur = e->parent;
}

int64_t mtg_profiler_begin(const char *name, const mt_tensor *const *ins, int nin) {
  mtg_profiler *p = mtg_prof;
  if (!p) return -1;
  int32_t id = mtg_prof_intern(name);
  if (!(p->flags & MTG_PROF_SHAPES) || nin <= 0) return begin(p, id, MTG_PROF_JIT, NULL, 0, 0);
  int64_t buf[16 * (MT_MAXDIM + 1)];
  int64_t n = 0;
  int k = nin < 16 ? nin : 16;
  for (int i = 0; i < k; i++) {
    const mt_tensor *t = ins[i];
    buf[n++] = t ? t->ndim : -1;
    for (int d = 0; t && d < t->ndim; d++) buf[n++] = t->shape[d];
  }
  return begin(p, id, MTG_PROF_JIT, buf, n, k);
}

void mtg_profiler_end(int64_t token) { mtg_prof_end(token); }
