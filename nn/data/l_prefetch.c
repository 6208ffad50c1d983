/* l_prefetch.c -- background batch assembly for DataLoader(num_workers > 0)
 * over tensor-backed datasets: worker threads copy the rows a batch needs
 * out of the dataset's tensors while the training loop runs. Workers never
 * touch Lua or reference counts: the dataset tensors are retained by the
 * main thread for the prefetcher's life and only read; each batch tensor is
 * made by a worker and handed over whole.
 *   p = torch.utils.data._prefetch.prefetcher({t1, t2, ...}, nworkers)
 *   p:put(ticket, indices)   -- int64 tensor of 1-based row indices
 *   p:take(ticket)           -- blocks; {b1, b2, ...} with bk = tk[indices]
 *   p:close()                -- also __gc / __close */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"

#define PF_MT "torch.Prefetcher"
#define MAXT 8
#define MAXW 32

typedef struct task {
  struct task *next;
  lua_Integer ticket;
  int64_t *idx;
  int64_t n;
  mt_tensor *out[MAXT]; /* results, owned until taken */
  char err[256];
  int claimed, done;
} task;

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t work, ready;
  task *tasks, *tail; /* put and not yet taken, in put order */
  mt_tensor *src[MAXT];
  int nsrc, nworkers;
  pthread_t th[MAXW];
  int closing, closed;
  pid_t owner; /* a forked copy (in a DataLoader worker process) has no threads: it leaves it all alone */
} prefetcher;

/* Copies rows idx[0..n) (1-based) of every source into fresh tensors. */
static void assemble(prefetcher *p, task *t) {
  for (int k = 0; k < p->nsrc; k++) {
    const mt_tensor *s = p->src[k];
    int64_t shape[MT_MAXDIM];
    memcpy(shape, s->shape, sizeof shape);
    shape[0] = t->n;
    if (mt_empty(shape, s->ndim, (mt_dtype)s->dtype, mt_cpu(), &t->out[k])) {
      snprintf(t->err, sizeof t->err, "DataLoader worker: %s", mt_errmsg());
      return;
    }
    size_t row = mt_elsize(s);
    for (int d = 1; d < s->ndim; d++) row *= (size_t)s->shape[d];
    const char *from = mt_data(s);
    char *to = mt_data(t->out[k]);
    for (int64_t j = 0; j < t->n; j++) {
      int64_t i = t->idx[j];
      if (i < 1 || i > s->shape[0]) {
        snprintf(t->err, sizeof t->err, "DataLoader: index %lld out of range for a dataset of %lld samples",
                 (long long)i, (long long)s->shape[0]);
        return;
      }
      memcpy(to + (size_t)j * row, from + (size_t)(i - 1) * row, row);
    }
  }
}

static void *worker(void *arg) {
  prefetcher *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    task *t = NULL;
    while (!p->closing) {
      for (t = p->tasks; t && t->claimed; t = t->next) {}
      if (t) break;
      pthread_cond_wait(&p->work, &p->mu);
    }
    if (p->closing) break;
    t->claimed = 1;
    pthread_mutex_unlock(&p->mu);
    assemble(p, t);
    pthread_mutex_lock(&p->mu);
    t->done = 1;
    pthread_cond_broadcast(&p->ready);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static void free_task(task *t) {
  for (int k = 0; k < MAXT; k++) mt_release(t->out[k]);
  free(t->idx);
  free(t);
}

static void shutdown(prefetcher *p) {
  if (p->closed) return;
  if (p->owner != getpid()) {
    p->closed = 1;
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->closing = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->th[i], NULL);
  for (task *t = p->tasks, *n; t; t = n) {
    n = t->next;
    free_task(t);
  }
  for (int k = 0; k < p->nsrc; k++) mt_release(p->src[k]);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->ready);
  p->closed = 1;
}

static prefetcher *check_pf(lua_State *L) {
  prefetcher *p = luaL_checkudata(L, 1, PF_MT);
  if (p->closed) luaL_error(L, "prefetcher: used after close");
  return p;
}

static int pf_new(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int nsrc = (int)lua_rawlen(L, 1);
  lua_Integer nw = luaL_checkinteger(L, 2);
  if (nsrc < 1 || nsrc > MAXT) return luaL_error(L, "prefetcher: 1 to %d tensors, got %d", MAXT, nsrc);
  if (nw < 1 || nw > MAXW) return luaL_error(L, "prefetcher: 1 to %d workers, got %d", MAXW, (int)nw);
  mt_tensor *src[MAXT] = {0};
  for (int k = 0; k < nsrc; k++) {
    lua_rawgeti(L, 1, k + 1);
    mt_tensor *t = mtl_check_tensor(L, -1, "prefetcher");
    lua_pop(L, 1);
    if (t->ndim == 0) return luaL_error(L, "prefetcher: tensor %d is 0-dim: nothing to index", k + 1);
    if (k && t->shape[0] != src[0]->shape[0]) {
      for (int j = 0; j < k; j++) mt_release(src[j]);
      return luaL_error(L, "prefetcher: tensors have %lld and %lld samples", (long long)src[0]->shape[0],
                        (long long)t->shape[0]);
    }
    mt_status st = mt_is_contiguous(t) ? (src[k] = mt_retain(t), MT_OK) : mt_clone(t, &src[k]);
    if (st) {
      for (int j = 0; j < k; j++) mt_release(src[j]);
      return luaL_error(L, "prefetcher: %s", mt_errmsg());
    }
  }
  prefetcher *p = lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  memcpy(p->src, src, sizeof src);
  p->nsrc = nsrc;
  p->owner = getpid();
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->ready, NULL);
  luaL_setmetatable(L, PF_MT);
  for (int i = 0; i < nw; i++) {
    if (pthread_create(&p->th[i], NULL, worker, p) != 0) {
      shutdown(p);
      return luaL_error(L, "prefetcher: cannot start a worker thread");
    }
    p->nworkers++;
  }
  return 1;
}

static int pf_put(lua_State *L) {
  prefetcher *p = check_pf(L);
  lua_Integer ticket = luaL_checkinteger(L, 2);
  mt_tensor *idx = mtl_check_tensor(L, 3, "prefetcher:put");
  if (idx->dtype != MT_INT64 || idx->ndim != 1) return luaL_error(L, "prefetcher:put: indices must be a 1-D int64 tensor");
  task *t = calloc(1, sizeof *t);
  if (!t || !(t->idx = malloc((size_t)(idx->shape[0] ? idx->shape[0] : 1) * sizeof *t->idx))) {
    free(t);
    return luaL_error(L, "prefetcher:put: out of memory");
  }
  t->ticket = ticket;
  t->n = idx->shape[0];
  mt_tensor *host = NULL; /* indices drawn on a GPU (default device cuda) are read from a host copy */
  if (mt_tdevice(idx).type != MT_CPU && mt_cuda_to_device(idx, mt_cpu(), false, &host)) {
    free(t->idx), free(t);
    return luaL_error(L, "prefetcher:put: %s", mt_errmsg());
  }
  const mt_tensor *hi = host ? host : idx;
  for (int64_t j = 0; j < t->n; j++) t->idx[j] = *(const int64_t *)(mt_data(hi) + j * hi->strides[0] * 8);
  mt_release(host);
  pthread_mutex_lock(&p->mu);
  if (p->tail) p->tail->next = t;
  else p->tasks = t;
  p->tail = t;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
  return 0;
}

static int pf_take(lua_State *L) {
  prefetcher *p = check_pf(L);
  lua_Integer ticket = luaL_checkinteger(L, 2);
  task *t = NULL, *prev = NULL;
  pthread_mutex_lock(&p->mu);
  for (t = p->tasks; t && t->ticket != ticket; t = t->next) prev = t;
  while (t && !t->done) pthread_cond_wait(&p->ready, &p->mu);
  if (t) { /* unlink (the list only changes under the lock) */
    prev = NULL;
    for (task *q = p->tasks; q != t; q = q->next) prev = q;
    if (prev) prev->next = t->next;
    else p->tasks = t->next;
    if (p->tail == t) p->tail = prev;
  }
  pthread_mutex_unlock(&p->mu);
  if (!t) return luaL_error(L, "prefetcher:take: no batch with ticket %d", (int)ticket);
  if (t->err[0]) {
    lua_pushstring(L, t->err);
    free_task(t);
    return lua_error(L);
  }
  lua_createtable(L, p->nsrc, 0);
  for (int k = 0; k < p->nsrc; k++) {
    mtl_push_tensor(L, t->out[k]);
    t->out[k] = NULL;
    lua_rawseti(L, -2, k + 1);
  }
  free_task(t);
  return 1;
}

static int pf_close(lua_State *L) {
  prefetcher *p = luaL_checkudata(L, 1, PF_MT);
  shutdown(p);
  return 0;
}

static const mtl_reg regs[] = {
    {"prefetcher", pf_new, MTL_FN,
     "torch.utils.data._prefetch.prefetcher({tensors...}, nworkers) -- background row gathering for DataLoader (internal)"},
    {NULL, NULL, 0, NULL}};

/* require "torch.utils.data._prefetch" -> {prefetcher=} */
int luaopen_torch_utils_data__prefetch(lua_State *L) {
  static const luaL_Reg m[] = {{"put", pf_put}, {"take", pf_take}, {"close", pf_close}, {NULL, NULL}};
  mtl_new_class(L, PF_MT, m, pf_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
