/* alloc.c -- the caching allocator of CUDA device memory, one per device.
 * cuMemAlloc and cuMemFree synchronise the device and cost tens of
 * microseconds, so freed blocks are kept on a free list and handed out
 * again. Sizes are rounded (512 bytes below 1 MB, 2 MB above) so that
 * similar requests share blocks; a cached block serves requests down to half
 * its size (no splitting yet). A block is reused only for work on the stream
 * it was allocated for, so stream order keeps reuse safe without events.
 * Also page-locked host memory for pinned tensors. Nothing here launches
 * kernels. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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

#define NBUCKET 1024
typedef struct devalloc {
  block *free_list;          /* cached blocks, unsorted */
  bool capturing;            /* a CUDA graph is being captured (graph.c): frees go to pool */
  block *pool;               /* blocks freed during the capture: the graph's from then on */
  block *live[NBUCKET];      /* blocks in use, hashed by pointer */
  mt_cuda_memstats stats;
} devalloc;

static devalloc heaps[MT_CUDA_MAXDEV];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
  for (block *b = h->free_list, *nx; b; b = nx) {
    nx = b->next;
    cu.MemFree(b->ptr);
    h->stats.reserved -= (int64_t)b->size;
    free(b);
  }
  h->free_list = NULL;
}

mt_status mt_cuda_malloc(int dev, size_t n, void **out) {
  *out = NULL;
  if (n == 0) return MT_OK;
  mt_device d = {MT_CUDA, (int8_t)dev};
  mt_status st = mt_cuda_check_device(d, "allocate");
  if (st) return st;
  size_t size = round_size(n);
  void *stream = mt_cuda_current_stream(dev).handle;
  devalloc *h = &heaps[dev];
  pthread_mutex_lock(&lock);
  /* best fit among cached blocks of this stream (or, while capturing, of
   * the capture's pool), at most twice the size */
  block **best = NULL;
  for (block **pb = &h->pool; h->capturing && *pb; pb = &(*pb)->next)
    if ((*pb)->size >= size && (*pb)->size <= 2 * size && (!best || (*pb)->size < (*best)->size)) best = pb;
  bool pooled = best != NULL;
  for (block **pb = &h->free_list; !pooled && *pb; pb = &(*pb)->next) {
    block *b = *pb;
    if (b->stream == stream && b->size >= size && b->size <= 2 * size && (!best || b->size < (*best)->size))
      best = pb;
  }
  block *b = NULL;
  if (best) {
    b = *best;
    *best = b->next;
    h->stats.num_cache_hits++;
  } else {
    CUdeviceptr p = 0;
    CUresult r = cu.MemAlloc(&p, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) { /* give back the cache, then try once more */
      release_cached(h);
      r = cu.MemAlloc(&p, size);
    }
    if (r == CUDA_SUCCESS) b = malloc(sizeof *b);
    if (!b) {
      if (r == CUDA_SUCCESS) cu.MemFree(p);
      int64_t alloc = h->stats.allocated;
      if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_SUCCESS) h->stats.num_ooms++;
      pthread_mutex_unlock(&lock);
      if (r != CUDA_ERROR_OUT_OF_MEMORY && r != CUDA_SUCCESS) return mt_cuda_check(r, dev, "allocate");
      size_t fr = 0, tot = 0;
      cu.MemGetInfo(&fr, &tot);
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
  if (!p || dev < 0 || dev >= MT_CUDA_MAXDEV) return;
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
      } else {
        b->next = h->free_list;
        h->free_list = b;
      }
      break;
    }
  pthread_mutex_unlock(&lock);
}

void mt_cuda_empty_cache(void) {
  int n = mt_cuda_device_count();
  for (int d = 0; d < n; d++) {
    mt_device dv = {MT_CUDA, (int8_t)d};
    if (!heaps[d].free_list || mt_cuda_check_device(dv, "empty_cache")) continue;
    pthread_mutex_lock(&lock);
    release_cached(&heaps[d]);
    pthread_mutex_unlock(&lock);
  }
}

mt_cuda_memstats mt_cuda_memory_stats(int dev) {
  mt_cuda_memstats s = {0};
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return s;
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
  return mt_cuda_check(cu.MemHostAlloc(out, n ? n : 1, CU_MEMHOSTALLOC_PORTABLE), d.index, "pin_memory");
}

void mt_cuda_host_free(void *p) {
  if (p) cu.MemFreeHost(p);
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
    b->next = heaps[dev].free_list;
    heaps[dev].free_list = b;
  }
  pthread_mutex_unlock(&lock);
}
