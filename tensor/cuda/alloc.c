/* alloc.c -- the caching allocator of CUDA device memory, one per device.
 * cuMemAlloc and cuMemFree synchronise the device and cost tens of
 * microseconds, so freed blocks are kept on a free list and handed out
 * again. Sizes are rounded (512 bytes below 1 MB, 2 MB above) so that
 * similar requests share blocks; cached blocks sit in bins by size and
 * stream (a sorted array, so a request finds its block in O(log bins) even
 * when thousands of tensors were just collected), and a cached block serves
 * requests down to half its size (no splitting yet). A block is reused only for work on the stream
 * it was allocated for, so stream order keeps reuse safe without events.
 * Also page-locked host memory for pinned tensors. Nothing here launches
 * kernels (but asking for statistics sends the ops waiting in lazy.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "mt_cuda.h"

_Atomic int64_t mt_cuda_live_storages;
static _Atomic int64_t bytes_in_use;

int64_t mt_cuda_bytes_in_use(void) { return atomic_load_explicit(&bytes_in_use, memory_order_relaxed); }

typedef struct block {
  CUdeviceptr ptr;
  size_t size;
  void *stream;
  struct block *next;
} block;

/* Cached blocks of one size for one stream, most recently freed first. */
typedef struct bin {
  size_t size;
  void *stream;
  block *head;
} bin;

#define NBUCKET 1024
typedef struct devalloc {
  bin *bins;                 /* sorted by size, then stream; empty bins stay */
  int nbins, cap;
  bool capturing;            /* a CUDA graph is being captured (graph.c): frees go to pool */
  block *pool;               /* blocks freed during the capture: the graph's from then on */
  block *live[NBUCKET];      /* blocks in use, hashed by pointer */
  mt_cuda_memstats stats;
} devalloc;

static devalloc heaps[MT_CUDA_MAXDEV];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The index of the first bin of h not below (size, stream). */
static int lower_bound(const devalloc *h, size_t size, void *stream) {
  int lo = 0, hi = h->nbins;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    const bin *b = &h->bins[mid];
    if (b->size < size || (b->size == size && (uintptr_t)b->stream < (uintptr_t)stream)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Takes the smallest cached block of stream that holds size bytes and is at
 * most twice as large (a bigger one would waste too much), or NULL. */
static block *take_cached(devalloc *h, size_t size, void *stream) {
  for (int i = lower_bound(h, size, NULL); i < h->nbins && h->bins[i].size <= 2 * size; i++) {
    bin *b = &h->bins[i];
    if (b->stream == stream && b->head) {
      block *k = b->head;
      b->head = k->next;
      return k;
    }
  }
  return NULL;
}

/* Puts k on its bin (made when new); false when out of host memory. */
static bool cache_block(devalloc *h, block *k) {
  int i = lower_bound(h, k->size, k->stream);
  if (i == h->nbins || h->bins[i].size != k->size || h->bins[i].stream != k->stream) {
    if (h->nbins == h->cap) {
      int cap = h->cap ? 2 * h->cap : 64;
      bin *nb = realloc(h->bins, (size_t)cap * sizeof *nb);
      if (!nb) return false;
      h->bins = nb, h->cap = cap;
    }
    memmove(&h->bins[i + 1], &h->bins[i], (size_t)(h->nbins - i) * sizeof *h->bins);
    h->bins[i] = (bin){k->size, k->stream, NULL};
    h->nbins++;
  }
  k->next = h->bins[i].head;
  h->bins[i].head = k;
  return true;
}

static size_t round_size(size_t n) {
  if (n < ((size_t)1 << 20)) return (n + 511) & ~(size_t)511;
  size_t g = (size_t)2 << 20;
  return (n + g - 1) / g * g;
}

static unsigned bucket(CUdeviceptr p) { return (unsigned)((p >> 9) * 2654435761u) % NBUCKET; }

static void fmt_bytes(size_t n, char *buf, size_t len) {
  if (n >= ((size_t)1 << 30)) snprintf(buf, len, "%.2f GiB", (double)n / (double)((size_t)1 << 30));
  else if (n >= ((size_t)1 << 20)) snprintf(buf, len, "%.2f MiB", (double)n / (double)((size_t)1 << 20));
  else snprintf(buf, len, "%zu bytes", n);
}

/* Frees every cached block of h (lock held, dev's context current). */
static void release_cached(devalloc *h) {
  for (int i = 0; i < h->nbins; i++) {
    for (block *b = h->bins[i].head, *nx; b; b = nx) {
      nx = b->next;
      mt_cu.MemFree(b->ptr);
      h->stats.reserved -= (int64_t)b->size;
      free(b);
    }
    h->bins[i].head = NULL;
  }
}

mt_status mt_cuda_malloc(int dev, size_t n, void **out) {
  *out = NULL;
  if (n == 0) return MT_OK;
  mt_device d = {MT_CUDA, (int8_t)dev};
  mt_status st = mt_cuda_check_device(d, "allocate");
  if (st) return st;
  size_t size = round_size(n);
  void *stream = mt_cuda_stream_handle(dev); /* (not current_stream: that would send waiting ops) */
  devalloc *h = &heaps[dev];
  pthread_mutex_lock(&lock);
  /* while a CUDA graph is captured, blocks freed during the capture come
   * first (best fit, at most twice the size); else the cache's bins */
  block **best = NULL;
  for (block **pb = &h->pool; h->capturing && *pb; pb = &(*pb)->next)
    if ((*pb)->size >= size && (*pb)->size <= 2 * size && (!best || (*pb)->size < (*best)->size)) best = pb;
  block *b = NULL;
  if (best) {
    b = *best;
    *best = b->next;
  } else {
    b = take_cached(h, size, stream);
  }
  if (b) {
    h->stats.num_cache_hits++;
  } else {
    CUdeviceptr p = 0;
    CUresult r = mt_cu.MemAlloc(&p, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) { /* give back the cache, then try once more */
      release_cached(h);
      r = mt_cu.MemAlloc(&p, size);
    }
    if (r == CUDA_SUCCESS) b = malloc(sizeof *b);
    if (!b) {
      if (r == CUDA_SUCCESS) mt_cu.MemFree(p);
      int64_t alloc = h->stats.allocated;
      if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_SUCCESS) h->stats.num_ooms++;
      pthread_mutex_unlock(&lock);
      if (r != CUDA_ERROR_OUT_OF_MEMORY && r != CUDA_SUCCESS) return mt_cuda_check(r, dev, "allocate");
      size_t fr = 0, tot = 0;
      mt_cu.MemGetInfo(&fr, &tot);
      char a[32], b1[32], c[32], t[32];
      fmt_bytes(n, a, sizeof a), fmt_bytes((size_t)alloc, b1, sizeof b1), fmt_bytes(fr, c, sizeof c);
      fmt_bytes(tot, t, sizeof t);
      return mt_fail(MT_ENOMEM, "CUDA out of memory: tried to allocate %s on cuda:%d (%s allocated by tensors, %s "
                     "free of %s)", a, dev, b1, c, t);
    }
    b->ptr = p;
    b->size = size;
    b->stream = stream;
    h->stats.reserved += (int64_t)size;
    if (h->stats.reserved > h->stats.peak_reserved) h->stats.peak_reserved = h->stats.reserved;
  }
  unsigned k = bucket(b->ptr);
  b->next = h->live[k];
  h->live[k] = b;
  h->stats.allocated += (int64_t)b->size;
  atomic_fetch_add(&bytes_in_use, (int64_t)b->size);
  h->stats.num_allocs++;
  if (h->stats.allocated > h->stats.peak_allocated) h->stats.peak_allocated = h->stats.allocated;
  pthread_mutex_unlock(&lock);
  *out = (void *)(uintptr_t)b->ptr;
  return MT_OK;
}

void mt_cuda_free(int dev, void *p) {
  if (!p || dev < 0 || dev >= MT_CUDA_MAXDEV || mt_cuda_forbidden) return;
  devalloc *h = &heaps[dev];
  CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)p;
  pthread_mutex_lock(&lock);
  for (block **pb = &h->live[bucket(ptr)]; *pb; pb = &(*pb)->next)
    if ((*pb)->ptr == ptr) {
      block *b = *pb;
      *pb = b->next;
      h->stats.allocated -= (int64_t)b->size;
      atomic_fetch_sub(&bytes_in_use, (int64_t)b->size);
      if (h->capturing) { /* the graph being captured may still use it when replayed */
        b->next = h->pool;
        h->pool = b;
      } else if (!cache_block(h, b)) { /* no host memory for the bin: give it back */
        mt_cu.MemFree(b->ptr);
        h->stats.reserved -= (int64_t)b->size;
        free(b);
      }
      break;
    }
  pthread_mutex_unlock(&lock);
}

void mt_cuda_empty_cache(void) {
  int n = mt_cuda_device_count();
  for (int d = 0; d < n; d++) {
    mt_device dv = {MT_CUDA, (int8_t)d};
    mt_cuda_lazy_flush(d);
    if (!heaps[d].nbins || mt_cuda_check_device(dv, "empty_cache")) continue;
    pthread_mutex_lock(&lock);
    release_cached(&heaps[d]);
    pthread_mutex_unlock(&lock);
  }
}

mt_cuda_memstats mt_cuda_memory_stats(int dev) {
  mt_cuda_memstats s = {0};
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return s;
  mt_cuda_lazy_flush(dev); /* waiting ops hold their operands: send them, so freed tensors count as freed */
  pthread_mutex_lock(&lock);
  s = heaps[dev].stats;
  pthread_mutex_unlock(&lock);
  return s;
}

void mt_cuda_reset_peak(int dev) {
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return;
  pthread_mutex_lock(&lock);
  heaps[dev].stats.peak_allocated = heaps[dev].stats.allocated;
  heaps[dev].stats.peak_reserved = heaps[dev].stats.reserved;
  pthread_mutex_unlock(&lock);
}

mt_status mt_cuda_host_alloc(size_t n, void **out) {
  mt_device d = {MT_CUDA, (int8_t)mt_cuda_current_device()};
  mt_status st = mt_cuda_check_device(d, "pin_memory");
  if (st) return st;
  return mt_cuda_check(mt_cu.MemHostAlloc(out, n ? n : 1, CU_MEMHOSTALLOC_PORTABLE), d.index, "pin_memory");
}

void mt_cuda_host_free(void *p) {
  if (p && !mt_cuda_forbidden) mt_cu.MemFreeHost(p);
}

bool mt_cuda_capturing(int dev) { return dev >= 0 && dev < MT_CUDA_MAXDEV && heaps[dev].capturing; }

void mt_cuda_alloc_capture(int dev, bool on, void **pool) {
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return;
  pthread_mutex_lock(&lock);
  heaps[dev].capturing = on;
  if (!on && pool) *pool = heaps[dev].pool;
  heaps[dev].pool = NULL;
  pthread_mutex_unlock(&lock);
}

void mt_cuda_alloc_release_pool(int dev, void *pool, void *stream) {
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return;
  pthread_mutex_lock(&lock);
  for (block *b = pool, *nx; b; b = nx) {
    nx = b->next;
    b->stream = stream;
    if (!cache_block(&heaps[dev], b)) {
      mt_cu.MemFree(b->ptr);
      heaps[dev].stats.reserved -= (int64_t)b->size;
      free(b);
    }
  }
  pthread_mutex_unlock(&lock);
}
