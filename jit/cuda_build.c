/* cuda_build.c -- loads a compiled CUDA graph's kernels. A big graph (a
 * training step: forward, backward and optimizer) has hundreds of kernels,
 * and NVRTC compiles one source on one core: one source for all of them
 * took seconds. The source is cut into chunks of consecutive kernels, each
 * with the common header, and the chunks are compiled on parallel threads
 * (nvrtc.c compiles outside its lock). Each chunk is its own cache entry
 * in memory and on disk. Small graphs stay one source. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg.h"
#include "cuda/mt_cuda.h"

#define MAXCHUNKS 16
#define MINPERCHUNK 16 /* kernels: below this a chunk's header costs more than it saves */

typedef struct {
  int dev, k0, k1; /* kernels [k0, k1) */
  const char *src;
  const size_t *ends;
  void **fns;
  mt_status st;
  char why[400];
} chunk;

/* Compiles chunk c: the header and its kernels as one source, then looks
 * each kernel up (memory hits after the first). */
static void *build_chunk(void *arg) {
  chunk *c = arg;
  size_t head = c->ends[0], from = c->ends[c->k0], to = c->ends[c->k1];
  char *src = malloc(head + (to - from) + 1);
  if (!src) {
    c->st = MT_ENOMEM;
    snprintf(c->why, sizeof c->why, "out of memory");
    return NULL;
  }
  memcpy(src, c->src, head);
  memcpy(src + head, c->src + from, to - from);
  src[head + (to - from)] = 0;
  for (int k = c->k0; k < c->k1 && !c->st; k++) {
    char name[32];
    snprintf(name, sizeof name, "mtj_k%d", k);
    if ((c->st = mt_cuda_kernel(c->dev, src, name, &c->fns[k]))) snprintf(c->why, sizeof c->why, "%s", mt_errmsg());
  }
  free(src);
  return NULL;
}

mt_status mtj_cuda_build(int dev, const char *src, const size_t *ends, int nk, void **fns) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int n = nk / MINPERCHUNK;
  if (n > MAXCHUNKS) n = MAXCHUNKS;
  if (n > ncpu) n = (int)ncpu;
  if (!ends || n < 2) { /* one source */
    for (int k = 0; k < nk; k++) {
      char name[32];
      snprintf(name, sizeof name, "mtj_k%d", k);
      mt_status st = mt_cuda_kernel(dev, src, name, &fns[k]);
      if (st) return st;
    }
    return MT_OK;
  }
  chunk cs[MAXCHUNKS];
  pthread_t th[MAXCHUNKS];
  bool started[MAXCHUNKS] = {false};
  for (int i = 0; i < n; i++) {
    cs[i] = (chunk){dev, (int)((int64_t)nk * i / n), (int)((int64_t)nk * (i + 1) / n), src, ends, fns, MT_OK, ""};
    started[i] = i > 0 && pthread_create(&th[i], NULL, build_chunk, &cs[i]) == 0;
  }
  build_chunk(&cs[0]); /* this thread takes the first chunk */
  for (int i = 1; i < n; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else build_chunk(&cs[i]); /* no thread: built here */
  }
  for (int i = 0; i < n; i++)
    if (cs[i].st) return mt_fail(cs[i].st, "%s", cs[i].why);
  return MT_OK;
}
