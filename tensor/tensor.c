/* tensor.c -- storage and tensor lifetime: allocation (with overflow and
 * out-of-memory checks), reference counting, views sharing storage, and
 * creation of filled tensors. No kernels here beyond a fill. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cplx.h"
#include "cuda/mt_cuda.h"
#include "mt.h"

void (*mt_autograd_free_hook)(mt_tensor *t) = NULL;
static _Atomic int64_t cpu_bytes;
/* Each storage is charged this much beyond its data: the tensor structs,
 * autograd state and graph nodes around small tensors are memory too, and
 * the Lua binding's collector pacing goes by this count. */
#define STORAGE_CHARGE 1024

int64_t mt_cpu_bytes_in_use(void) { return atomic_load(&cpu_bytes); }

/* Allocation has three paths, all behind storage_new/storage_release:
 *  - small storages (<= INLINE_MAX bytes) keep their bytes after the header
 *    and are recycled through per-thread free lists by size class;
 *  - large blocks are 64-byte aligned and, when freed, parked in a bounded
 *    cache keyed by size, so that a loop producing same-sized results does
 *    not pay page faults on every op (the kernel zeroes fresh pages);
 *  - tensor structs are recycled through a per-thread free list.
 * A block freed on another thread simply joins that thread's list. */
#define INLINE_MAX 512
#define NCLASS 4 /* data sizes 64, 128, 256, 512 */
/* Sanitizer builds recycle nothing, so that AddressSanitizer sees every
 * use after free. */
#ifdef MT_SANITIZE
#define FREELIST_MAX 0
#else
#define FREELIST_MAX 4096 /* the Lua GC frees garbage in batches */
#endif
#define CACHE_MIN ((size_t)1 << 16)
#define CACHE_SLOTS 64
#ifdef MT_SANITIZE
static size_t cache_cap = 0;
#else
static size_t cache_cap = (size_t)256 << 20; /* bytes parked at most */
#endif

/* The default (global-dynamic) TLS model: torch.so is dlopen'ed by a stock
 * lua5.4, and an initial-exec variable would make the loader reserve the
 * library's whole TLS block in the static TLS area, which is too small
 * ("cannot allocate memory in static TLS block"). The moontorch executable
 * links these objects statically, where the linker relaxes every access to
 * local-exec, so its hot paths pay nothing. */
#define MT_TLS _Thread_local
static MT_TLS void *small_free[NCLASS];
static MT_TLS int small_count[NCLASS];
static MT_TLS mt_tensor *tensor_free;
static MT_TLS int tensor_count;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *ptr;
  size_t size;
} cache[CACHE_SLOTS];
static size_t cache_bytes;

/* A fork (DataLoader workers) while another thread holds the cache lock
 * would leave it locked forever in the child: hold it across fork. */
static void fork_lock(void) { pthread_mutex_lock(&cache_lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&cache_lock); }
__attribute__((constructor)) static void fork_guard(void) { pthread_atfork(fork_lock, fork_unlock, fork_unlock); }

static int size_class(size_t nbytes) {
  int c = 0;
  size_t cap = 64;
  while (cap < nbytes) cap <<= 1, c++;
  return c;
}

/* Takes a parked block of exactly `size` bytes, or NULL. */
static void *cache_take(size_t size) {
  void *p = NULL;
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (cache[i].ptr && cache[i].size == size) {
      p = cache[i].ptr;
      cache[i].ptr = NULL;
      cache_bytes -= size;
      break;
    }
  pthread_mutex_unlock(&cache_lock);
  return p;
}

/* Parks a block for reuse (evicting an older one if full), or frees it. */
static void cache_put(void *p, size_t size) {
  pthread_mutex_lock(&cache_lock);
  if (size <= cache_cap / 2) {
    int slot = -1;
    for (int i = 0; i < CACHE_SLOTS && slot < 0; i++)
      if (!cache[i].ptr) slot = i;
    for (int i = 0; i < CACHE_SLOTS && cache_bytes + size > cache_cap; i++)
      if (cache[i].ptr) {
        free(cache[i].ptr);
        cache_bytes -= cache[i].size;
        cache[i].ptr = NULL;
        if (slot < 0) slot = i;
      }
    if (slot >= 0 && cache_bytes + size <= cache_cap) {
      cache[slot].ptr = p;
      cache[slot].size = size;
      cache_bytes += size;
      p = NULL;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  free(p);
}

void mt_empty_cache(void) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < CACHE_SLOTS; i++) {
    free(cache[i].ptr);
    cache[i].ptr = NULL;
  }
  cache_bytes = 0;
  pthread_mutex_unlock(&cache_lock);
}

/* A storage on a CUDA device: the data pointer is device memory from the
 * caching allocator (tensor/cuda/alloc.c); the host never dereferences it. */
static mt_status storage_new_cuda(size_t nbytes, mt_device dev, mt_storage **out) {
  mt_storage *s = malloc(sizeof(mt_storage));
  if (!s) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = mt_cuda_malloc(dev.index, nbytes, &s->data);
  if (st) {
    free(s);
    return st;
  }
  s->nbytes = nbytes;
  s->refs = 1;
  s->version = 0;
  s->device = dev;
  s->borrowed = 0;
  s->pinned = 0;
  s->mapped = 0;
  atomic_fetch_add(&mt_cuda_live_storages, 1);
  *out = s;
  return MT_OK;
}

static mt_status storage_new(size_t nbytes, mt_device dev, mt_storage **out) {
  if (dev.type == MT_CUDA) return storage_new_cuda(nbytes, dev, out);
  if (dev.type != MT_CPU) {
    char b[32];
    return mt_fail(MT_EDEVICE, "device %s is not available in this build", mt_device_str(dev, b, sizeof b));
  }
  mt_storage *s;
  if (nbytes <= INLINE_MAX) {
    int c = size_class(nbytes);
    if (small_free[c]) {
      s = small_free[c];
      small_free[c] = *(void **)s;
      small_count[c]--;
    } else {
      s = malloc(sizeof(mt_storage) + 64 + ((size_t)64 << c));
      if (!s) return mt_fail(MT_ENOMEM, "out of memory allocating %zu bytes", nbytes);
    }
    s->data = (void *)(((uintptr_t)(s + 1) + 63) & ~(uintptr_t)63);
  } else {
    s = malloc(sizeof(mt_storage));
    if (!s) return mt_fail(MT_ENOMEM, "out of memory allocating %zu bytes", nbytes);
    s->data = nbytes >= CACHE_MIN ? cache_take(nbytes) : NULL;
    if (!s->data && posix_memalign(&s->data, 64, nbytes) != 0) {
      free(s);
      return mt_fail(MT_ENOMEM, "out of memory: cannot allocate %.1f MB for a tensor", (double)nbytes / 1e6);
    }
  }
  s->nbytes = nbytes;
  s->refs = 1;
  s->version = 0;
  s->device = dev;
  s->borrowed = 0;
  s->pinned = 0;
  s->mapped = 0;
  atomic_fetch_add(&cpu_bytes, (int64_t)nbytes + STORAGE_CHARGE);
  *out = s;
  return MT_OK;
}

static void storage_release(mt_storage *s) {
  if (--s->refs > 0 || s->borrowed) return;
  if (s->device.type == MT_CUDA || s->pinned) {
    if (s->pinned) {
      atomic_fetch_sub(&cpu_bytes, (int64_t)s->nbytes + STORAGE_CHARGE);
      mt_cuda_host_free(s->data);
    } else {
      atomic_fetch_sub(&mt_cuda_live_storages, 1);
      mt_cuda_free(s->device.index, s->data);
    }
    free(s);
    return;
  }
  atomic_fetch_sub(&cpu_bytes, (int64_t)s->nbytes + STORAGE_CHARGE);
  if (s->mapped) {
    munmap(s->data, s->nbytes);
    free(s);
    return;
  }
  if (s->nbytes <= INLINE_MAX) {
    int c = size_class(s->nbytes);
    if (small_count[c] < FREELIST_MAX) {
      *(void **)s = small_free[c];
      small_free[c] = s;
      small_count[c]++;
      return;
    }
  } else if (s->nbytes >= CACHE_MIN) {
    cache_put(s->data, s->nbytes);
  } else {
    free(s->data);
  }
  free(s);
}

void mt_storage_retain(mt_storage *s) { s->refs++; }
void mt_storage_release(mt_storage *s) { storage_release(s); }

mt_tensor *mt_retain(mt_tensor *t) {
  if (t) t->refs++;
  return t;
}

void mt_release(mt_tensor *t) {
  if (!t || --t->refs > 0 || t->borrowed) return;
  if (t->autograd && mt_autograd_free_hook) mt_autograd_free_hook(t);
  storage_release(t->storage);
  if (t->base) mt_release(t->base);
  if (tensor_count < FREELIST_MAX) {
    *(mt_tensor **)t = tensor_free;
    tensor_free = t;
    tensor_count++;
    return;
  }
  free(t);
}

int64_t mt_checked_numel(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && n > INT64_MAX / shape[i]) return -1;
    n *= shape[i];
  }
  return n;
}

void mt_contiguous_strides(const int64_t *shape, int ndim, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

bool mt_is_contiguous(const mt_tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] == 1) continue;
    if (t->strides[i] != s) return false;
    s *= t->shape[i];
  }
  return true;
}

/* The fields of a fresh tensor over s, one reference, no views or grads. */
static void init_fields(mt_tensor *t, mt_storage *s, int ndim, mt_dtype dt) {
  t->storage = s;
  t->offset = 0;
  t->refs = 1;
  t->ndim = (int8_t)ndim;
  t->dtype = (int8_t)dt;
  t->flags = 0;
  t->borrowed = 0;
  t->autograd = NULL;
  t->base = NULL;
}

static mt_tensor *tensor_shell(mt_storage *s, int ndim, mt_dtype dt) {
  mt_tensor *t = tensor_free;
  if (t) {
    tensor_free = *(mt_tensor **)t;
    tensor_count--;
  } else if (!(t = malloc(sizeof *t))) {
    return NULL;
  }
  init_fields(t, s, ndim, dt);
  return t;
}

void mt_init_borrowed(mt_tensor *t, mt_storage *s, void *data, const int64_t *shape, int ndim, mt_dtype dt) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  s->data = data;
  s->nbytes = (size_t)n * mt_dtype_size(dt);
  s->refs = 1;
  s->version = 0;
  s->device = mt_cpu();
  s->borrowed = 1;
  s->pinned = 0;
  s->mapped = 0;
  init_fields(t, s, ndim, dt);
  t->borrowed = 1;
  if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
  mt_contiguous_strides(shape, ndim, t->strides);
}

/* *out = a contiguous tensor of shape over all of storage s (whose
 * reference it takes); s is released when out of memory. */
static mt_status wrap_storage(mt_storage *s, const int64_t *shape, int ndim, mt_dtype dt, mt_tensor **out) {
  mt_tensor *t = tensor_shell(s, ndim, dt);
  if (!t) {
    storage_release(s);
    return mt_fail(MT_ENOMEM, "out of memory");
  }
  if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
  mt_contiguous_strides(shape, ndim, t->strides);
  *out = t;
  return MT_OK;
}

mt_status mt_empty(const int64_t *shape, int ndim, mt_dtype dt, mt_device dev, mt_tensor **out) {
  char b[128];
  if (ndim < 0 || ndim > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "tensors have at most %d dimensions, got %d", MT_MAXDIM, ndim);
  int64_t n = mt_checked_numel(shape, ndim);
  if (n < 0) {
    for (int i = 0; i < ndim; i++)
      if (shape[i] < 0)
        return mt_fail(MT_ESHAPE, "negative dimension in shape %s", mt_shape_str(shape, ndim, b, sizeof b));
    return mt_fail(MT_ENOMEM, "shape %s is too large", mt_shape_str(shape, ndim, b, sizeof b));
  }
  size_t es = mt_dtype_size(dt);
  if (mt_is_complex(dt)) mt_complex_seen = true;
  if ((uint64_t)n > (uint64_t)(INT64_MAX / 2) / es)
    return mt_fail(MT_ENOMEM, "shape %s is too large", mt_shape_str(shape, ndim, b, sizeof b));
  size_t nbytes = (size_t)n * es;
  if (nbytes > ((size_t)1 << 46))
    return mt_fail(MT_ENOMEM, "out of memory: cannot allocate %.3g GB for a %s tensor of shape %s",
                   (double)nbytes / 1e9, mt_dtype_name(dt), mt_shape_str(shape, ndim, b, sizeof b));
  mt_storage *s = NULL;
  mt_status st = storage_new(nbytes, dev, &s);
  if (st) {
    if (st == MT_ENOMEM && dev.type == MT_CPU)
      return mt_fail(MT_ENOMEM, "out of memory: cannot allocate %.3g GB for a %s tensor of shape %s",
                     (double)nbytes / 1e9, mt_dtype_name(dt), mt_shape_str(shape, ndim, b, sizeof b));
    return st;
  }
  return wrap_storage(s, shape, ndim, dt, out);
}

mt_status mt_empty_pinned(const int64_t *shape, int ndim, mt_dtype dt, mt_tensor **out) {
  int64_t n = mt_checked_numel(shape, ndim);
  if (n < 0 || ndim > MT_MAXDIM) return mt_empty(shape, ndim, dt, mt_cpu(), out); /* its message */
  size_t nbytes = (size_t)n * mt_dtype_size(dt);
  mt_storage *s = malloc(sizeof(mt_storage));
  if (!s) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = mt_cuda_host_alloc(nbytes, &s->data);
  if (st) {
    free(s);
    return st;
  }
  *s = (mt_storage){.data = s->data, .nbytes = nbytes, .refs = 1, .device = {MT_CPU, 0}, .pinned = 1};
  atomic_fetch_add(&cpu_bytes, (int64_t)nbytes + STORAGE_CHARGE);
  return wrap_storage(s, shape, ndim, dt, out);
}

mt_status mt_from_mapping(void *map, size_t maplen, const int64_t *shape, int ndim, mt_dtype dt, mt_tensor **out) {
  int64_t n = ndim >= 0 && ndim <= MT_MAXDIM ? mt_checked_numel(shape, ndim) : -1;
  mt_storage *s = n >= 0 && (uint64_t)n * mt_dtype_size(dt) <= maplen ? malloc(sizeof(mt_storage)) : NULL;
  if (!s) {
    munmap(map, maplen);
    return n < 0 || (uint64_t)n * mt_dtype_size(dt) > maplen
               ? mt_fail(MT_ESHAPE, "a mapped tensor of %lld elements does not fit its %zu-byte region", (long long)n, maplen)
               : mt_fail(MT_ENOMEM, "out of memory");
  }
  *s = (mt_storage){.data = map, .nbytes = maplen, .refs = 1, .device = {MT_CPU, 0}, .mapped = 1};
  atomic_fetch_add(&cpu_bytes, (int64_t)maplen + STORAGE_CHARGE);
  return wrap_storage(s, shape, ndim, dt, out);
}

mt_status mt_empty_like(const mt_tensor *t, mt_tensor **out) {
  return mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), out);
}

mt_status mt_zeros(const int64_t *shape, int ndim, mt_dtype dt, mt_device dev, mt_tensor **out) {
  mt_status st = mt_empty(shape, ndim, dt, dev, out);
  if (st) return st;
  if (dev.type == MT_CUDA) { /* complex by parts: the fill kernel knows the real dtypes */
    st = mt_is_complex(dt) ? mt_complex_fill_(*out, 0, 0) : mt_cuda_fill_(*out, mt_sint(0));
    if (st) {
      mt_release(*out);
      *out = NULL;
    }
    return st;
  }
  memset((*out)->storage->data, 0, (*out)->storage->nbytes);
  return MT_OK;
}

mt_status mt_full(const int64_t *shape, int ndim, mt_scalar v, mt_dtype dt, mt_device dev, mt_tensor **out) {
  mt_status st = mt_empty(shape, ndim, dt, dev, out);
  if (st) return st;
  st = mt_fill_(*out, v);
  if (st) {
    mt_release(*out);
    *out = NULL;
  }
  return st;
}

mt_status mt_scalar_tensor(mt_scalar s, mt_dtype dt, mt_tensor **out) {
  return mt_full(NULL, 0, s, dt, mt_cpu(), out);
}

mt_status mt_as_strided(const mt_tensor *base, int ndim, const int64_t *shape, const int64_t *strides,
                        int64_t offset, mt_tensor **out) {
  if (ndim < 0 || ndim > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "tensors have at most %d dimensions, got %d", MT_MAXDIM, ndim);
  mt_tensor *t = tensor_shell(base->storage, ndim, (mt_dtype)base->dtype);
  if (!t) return mt_fail(MT_ENOMEM, "out of memory");
  base->storage->refs++;
  if (ndim) {
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
  }
  t->offset = offset;
  t->base = mt_retain(base->base ? base->base : (mt_tensor *)base);
  *out = t;
  return MT_OK;
}

mt_status mt_alias(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *a = NULL;
  mt_status st = mt_as_strided(t, t->ndim, t->shape, t->strides, t->offset, &a);
  if (st) return st;
  mt_release(a->base);
  a->base = NULL;
  a->flags = t->flags;
  *out = a;
  return MT_OK;
}

/* Element at a multi-index as double (any dtype); idx has t->ndim entries. */
double mt_get_f64(const mt_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
  const char *p = mt_data(t) + off * (int64_t)mt_elsize(t);
  switch ((mt_dtype)t->dtype) {
  case MT_FLOAT32: return *(const float *)p;
  case MT_FLOAT64: return *(const double *)p;
  case MT_FLOAT16: return mt_half_to_float(*(const uint16_t *)p);
  case MT_BFLOAT16: return mt_bf16_to_float(*(const uint16_t *)p);
  case MT_INT8: return *(const int8_t *)p;
  case MT_INT16: return *(const int16_t *)p;
  case MT_INT32: return *(const int32_t *)p;
  case MT_INT64: return (double)*(const int64_t *)p;
  case MT_UINT8: return *(const uint8_t *)p;
  case MT_BOOL: return *(const uint8_t *)p != 0;
  case MT_UINT16: return *(const uint16_t *)p;
  case MT_COMPLEX64: return *(const float *)p; /* the real part */
  case MT_COMPLEX128: return *(const double *)p;
  default: return 0;
  }
}

mt_status mt_item(const mt_tensor *t, mt_scalar *out) {
  if (mt_numel(t) != 1) {
    char b[128];
    return mt_fail(MT_ESHAPE, "item: a tensor with %lld elements (shape %s) cannot be converted to a number",
                   (long long)mt_numel(t), mt_shape_str(t->shape, t->ndim, b, sizeof b));
  }
  if (mt_tdevice(t).type != MT_CPU) { /* one element down to the host */
    mt_tensor *h = NULL;
    mt_status st = mt_empty(NULL, 0, (mt_dtype)t->dtype, mt_cpu(), &h);
    mt_tensor *v = NULL;
    if (!st) st = mt_as_strided(t, 0, NULL, NULL, t->offset, &v);
    if (!st) st = mt_copy_(h, v);
    if (!st) st = mt_item(h, out);
    mt_release(v);
    mt_release(h);
    return st;
  }
  int64_t zero[MT_MAXDIM] = {0};
  const char *p = mt_data(t);
  switch ((mt_dtype)t->dtype) {
  case MT_INT64: *out = mt_sint(*(const int64_t *)p); break;
  case MT_INT8: case MT_INT16: case MT_INT32: case MT_UINT8: case MT_UINT16:
    *out = mt_sint((int64_t)mt_get_f64(t, zero)); break;
  case MT_BOOL: *out = mt_sbool(*(const uint8_t *)p != 0); break;
  default: *out = mt_sfloat(mt_get_f64(t, zero)); break;
  }
  return MT_OK;
}
