/* cuda_build.c -- loads a compiled CUDA graph's kernels. A big graph (a
 * training step: forward, backward and optimizer) has hundreds of kernels,
 * and NVRTC compiles one source on one core: one source for all of them
 * took seconds. Kernels equal up to their names (the layers of a network
 * repeat them) are compiled once. The distinct ones are cut into chunks,
 * each with the common header, compiled on parallel threads (nvrtc.c
 * compiles outside its lock); each chunk is its own cache entry in memory
 * and on disk. */
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg.h"
#include "cuda/mt_cuda.h"

#define MAXCHUNKS 16
#define MINPERCHUNK 2 /* kernels: a kernel costs ~0.2 s of NVRTC time, the header ~0.05 s */

typedef struct {
  int dev, n;       /* kernels u[0..n) */
  const int *u;     /* their indices in the graph */
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
  size_t len = c->ends[0];
  for (int j = 0; j < c->n; j++) len += c->ends[c->u[j] + 1] - c->ends[c->u[j]];
  char *src = malloc(len + 1), *p = src;
  if (!src) {
    c->st = MT_ENOMEM;
    snprintf(c->why, sizeof c->why, "out of memory");
    return NULL;
  }
  memcpy(p, c->src, c->ends[0]), p += c->ends[0];
  for (int j = 0; j < c->n; j++) {
    size_t from = c->ends[c->u[j]], to = c->ends[c->u[j] + 1];
    memcpy(p, c->src + from, to - from), p += to - from;
  }
  *p = 0;
  for (int j = 0; j < c->n && !c->st; j++) {
    char name[32];
    snprintf(name, sizeof name, "mtj_k%d", c->u[j]);
    if ((c->st = mt_cuda_kernel(c->dev, src, name, &c->fns[c->u[j]]))) snprintf(c->why, sizeof c->why, "%s", mt_errmsg());
  }
  free(src);
  return NULL;
}

typedef struct {
  int pre;  /* the name's letters: index into pre[] */
  long num; /* its digits */
} name_seen;

/* A hash of kernel k's text with every name that ends in digits (v310,
 * mj_a7, mtj_k7, b0 ...) renumbered by first appearance per prefix: the
 * layers of a network give kernels that differ only in those numbers. */
static uint64_t canon_hash(const char *s, size_t n) {
  char pre[32][16];
  int npre = 0, next[32] = {0};
  name_seen seen[256];
  int nseen = 0;
  uint64_t h = 0xcbf29ce484222325ull;
#define MIX(c) (h = (h ^ (unsigned char)(c)) * 0x100000001b3ull)
  for (size_t i = 0; i < n;) {
    bool word = isalpha((unsigned char)s[i]) || s[i] == '_';
    if (!word || (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))) {
      MIX(s[i++]);
      continue;
    }
    size_t a = i;
    while (i < n && (isalpha((unsigned char)s[i]) || s[i] == '_')) i++;
    size_t b = i;
    while (i < n && isdigit((unsigned char)s[i])) i++;
    bool ends_in_digits = i > b && !(i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) && b - a < 16;
    if (!ends_in_digits) {
      while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
      for (size_t j = a; j < i; j++) MIX(s[j]);
      continue;
    }
    int p = 0;
    while (p < npre && !(strlen(pre[p]) == b - a && memcmp(pre[p], s + a, b - a) == 0)) p++;
    if (p == npre && npre < 32) memcpy(pre[npre], s + a, b - a), pre[npre][b - a] = 0, npre++;
    long num = strtol(s + b, NULL, 10), id = -1;
    for (int k = 0; k < nseen && id < 0; k++)
      if (seen[k].pre == p && seen[k].num == num) id = k;
    int ord;
    if (id < 0 && nseen < 256) seen[nseen++] = (name_seen){p, num}, ord = next[p]++;
    else if (id < 0) ord = -1 - (int)num; /* too many names: keep the number itself */
    else {
      ord = 0;
      for (int k = 0; k < id; k++) ord += seen[k].pre == p;
    }
    for (size_t j = a; j < b; j++) MIX(s[j]);
    MIX('#');
    for (int v = ord < 0 ? -ord : ord, d = 0; d < 6; d++, v /= 10) MIX('0' + v % 10);
  }
#undef MIX
  return h;
}

mt_status mtj_cuda_build(int dev, const char *src, const size_t *ends, int nk, void **fns) {
  if (!ends) { /* one source, every kernel */
    for (int k = 0; k < nk; k++) {
      char name[32];
      snprintf(name, sizeof name, "mtj_k%d", k);
      mt_status st = mt_cuda_kernel(dev, src, name, &fns[k]);
      if (st) return st;
    }
    return MT_OK;
  }
  /* one compile per distinct kernel: rep[k] is the first kernel equal to k */
  int *u = malloc((size_t)(nk + 1) * sizeof *u), *rep = malloc((size_t)(nk + 1) * sizeof *rep), nu = 0;
  uint64_t *h = malloc((size_t)(nk + 1) * sizeof *h);
  if (!u || !rep || !h) {
    free(u), free(rep), free(h);
    return mt_fail(MT_ENOMEM, "out of memory");
  }
  for (int k = 0; k < nk; k++) {
    h[k] = canon_hash(src + ends[k], ends[k + 1] - ends[k]);
    rep[k] = k;
    for (int j = 0; j < nu; j++)
      if (h[u[j]] == h[k] && ends[u[j] + 1] - ends[u[j]] == ends[k + 1] - ends[k]) {
        rep[k] = u[j];
        break;
      }
    if (rep[k] == k) u[nu++] = k;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int n = nu / MINPERCHUNK;
  if (n > MAXCHUNKS) n = MAXCHUNKS;
  if (n > ncpu) n = (int)ncpu;
  if (n < 1) n = 1;
  chunk cs[MAXCHUNKS];
  pthread_t th[MAXCHUNKS];
  bool started[MAXCHUNKS] = {false};
  for (int i = 0; i < n; i++) {
    int a = (int)((int64_t)nu * i / n), b = (int)((int64_t)nu * (i + 1) / n);
    cs[i] = (chunk){dev, b - a, u + a, src, ends, fns, MT_OK, ""};
    started[i] = i > 0 && pthread_create(&th[i], NULL, build_chunk, &cs[i]) == 0;
  }
  build_chunk(&cs[0]); /* this thread takes the first chunk */
  for (int i = 1; i < n; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else build_chunk(&cs[i]); /* no thread: built here */
  }
  mt_status st = MT_OK;
  for (int i = 0; i < n && !st; i++)
    if (cs[i].st) st = mt_fail(cs[i].st, "%s", cs[i].why);
  for (int k = 0; k < nk && !st; k++) fns[k] = fns[rep[k]];
  free(u), free(rep), free(h);
  return st;
}
