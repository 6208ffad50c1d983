/* matmul_dnnl.c -- float32 act(A @ B + bias) through oneDNN's matmul
 * primitive, the bias and the activation applied by the primitive as it
 * writes C (the JIT's matmul epilogue). A primitive is built once per
 * problem (sizes, strides, bias, activation) and kept in a small LRU cache.
 * Plain GEMMs stay in blas.c; shape checks are matmul.c's. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "cpu/blas.h"
#include "cpu/dnnl_act.h"

#define CACHE_SIZE 16

typedef struct key {
  int64_t m, n, k, sa[2], sb[2];
  int64_t bias, act; /* int64 words: no padding inside the key */
  double alpha;
} key;

typedef struct entry {
  key k;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t md[4]; /* src, weights, bias, dst */
  uint64_t used;
} entry;

static struct {
  pthread_once_t once;
  pthread_mutex_t lock; /* held through a call: cache and stream */
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  dnnl_status_t init_status;
  entry *slot[CACHE_SIZE];
  uint64_t clock;
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void init(void) {
  g.init_status = dnnl_engine_create(&g.eng, dnnl_cpu, 0);
  if (g.init_status == dnnl_success) g.init_status = dnnl_stream_create(&g.stream, g.eng, dnnl_stream_default_flags);
}

static void entry_free(entry *e) {
  if (!e) return;
  if (e->prim) dnnl_primitive_destroy(e->prim);
  free(e);
}

/* Builds e's primitive from its key; false if oneDNN cannot. */
static bool build(entry *e) {
  const key *k = &e->k;
  dnnl_dims_t ad = {k->m, k->k}, bd = {k->k, k->n}, cd = {k->m, k->n}, biasd = {1, k->n};
  dnnl_dims_t as = {k->sa[0], k->sa[1]}, bs = {k->sb[0], k->sb[1]};
  if (dnnl_memory_desc_init_by_strides(&e->md[0], 2, ad, dnnl_f32, as) != dnnl_success ||
      dnnl_memory_desc_init_by_strides(&e->md[1], 2, bd, dnnl_f32, bs) != dnnl_success ||
      dnnl_memory_desc_init_by_tag(&e->md[2], 2, biasd, dnnl_f32, dnnl_ab) != dnnl_success ||
      dnnl_memory_desc_init_by_tag(&e->md[3], 2, cd, dnnl_f32, dnnl_ab) != dnnl_success)
    return false;
  dnnl_matmul_desc_t md;
  if (dnnl_matmul_desc_init(&md, &e->md[0], &e->md[1], k->bias ? &e->md[2] : NULL, &e->md[3]) != dnnl_success)
    return false;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  bool ok = dnnl_primitive_attr_create(&attr) == dnnl_success && mt_dnnl_set_act(attr, (mt_act)k->act, k->alpha) &&
            dnnl_primitive_desc_create(&pd, &md, attr, g.eng, NULL) == dnnl_success &&
            dnnl_primitive_create(&e->prim, pd) == dnnl_success;
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* The cached entry for k, built on a miss (evicting the least recently
 * used); NULL with a message when oneDNN cannot. Called with g.lock held. */
static entry *lookup(const key *k) {
  int victim = 0;
  for (int i = 0; i < CACHE_SIZE; i++) {
    entry *e = g.slot[i];
    if (e && memcmp(&e->k, k, sizeof *k) == 0) {
      e->used = ++g.clock;
      return e;
    }
    if (!e || (g.slot[victim] && e->used < g.slot[victim]->used)) victim = i;
  }
  entry *e = calloc(1, sizeof *e);
  if (!e) {
    mt_fail(MT_ENOMEM, "matmul: out of memory");
    return NULL;
  }
  e->k = *k;
  if (!build(e)) {
    entry_free(e);
    mt_fail(MT_EARG, "matmul: oneDNN has no matmul primitive for this problem");
    return NULL;
  }
  entry_free(g.slot[victim]);
  g.slot[victim] = e;
  e->used = ++g.clock;
  return e;
}

mt_status mt_dnnl_linear(int64_t m, int64_t n, int64_t k, const float *a, const int64_t sa[2], const float *b,
                         const int64_t sb[2], const float *bias, mt_act act, double alpha, float *c) {
  pthread_once(&g.once, init);
  if (g.init_status != dnnl_success) return mt_fail(MT_EARG, "matmul: oneDNN could not start");
  key kk;
  memset(&kk, 0, sizeof kk);
  kk.m = m, kk.n = n, kk.k = k;
  kk.sa[0] = sa[0], kk.sa[1] = sa[1], kk.sb[0] = sb[0], kk.sb[1] = sb[1];
  kk.bias = bias != NULL, kk.act = act, kk.alpha = act == MT_ACT_LEAKY_RELU ? alpha : 0;
  pthread_mutex_lock(&g.lock);
  mt_status st = MT_OK;
  dnnl_memory_t mem[4] = {NULL};
  void *buf[4] = {(void *)a, (void *)b, (void *)bias, c};
  static const int args[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
  entry *e = lookup(&kk);
  if (!e) st = MT_EARG;
  dnnl_exec_arg_t ex[4];
  int nex = 0;
  for (int r = 0; r < 4 && !st; r++) {
    if (!buf[r]) continue;
    if (dnnl_memory_create(&mem[r], &e->md[r], g.eng, buf[r]) != dnnl_success)
      st = mt_fail(MT_ENOMEM, "matmul: oneDNN could not wrap a buffer");
    else
      ex[nex++] = (dnnl_exec_arg_t){args[r], mem[r]};
  }
  if (!st) {
    dnnl_status_t ds = dnnl_primitive_execute(e->prim, g.stream, nex, ex);
    if (ds == dnnl_success) ds = dnnl_stream_wait(g.stream);
    if (ds != dnnl_success) st = mt_fail(MT_EARG, "matmul: oneDNN failed (status %d)", (int)ds);
  }
  for (int r = 0; r < 4; r++)
    if (mem[r]) dnnl_memory_destroy(mem[r]);
  pthread_mutex_unlock(&g.lock);
  return st;
}
