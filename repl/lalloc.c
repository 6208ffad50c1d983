/* lalloc.c -- the Lua allocator of the moontorch executable: size-class free
 * lists for small blocks (Lua's objects, tensor userdata), falling back to
 * the C library for the rest. The collector frees garbage in batches larger
 * than malloc's per-thread caches, so recycling blocks here saves most of
 * the allocation cost of eager tensor code. Used by one Lua state at a time. */
#include <stdlib.h>
#include <string.h>

#include "lalloc.h"

#define GRAIN 16
#define NCLASS 32 /* blocks of 16 .. 512 bytes (small tensors live in userdata) */
#ifdef MT_SANITIZE
#define KEEP 0 /* sanitizer builds recycle nothing: ASan sees every use after free */
#else
#define KEEP 8192 /* blocks kept per class at most */
#endif

typedef struct block {
  struct block *next;
} block;

typedef struct {
  block *free[NCLASS];
  int count[NCLASS];
} pools;

static int class_of(size_t n) { return (int)((n + GRAIN - 1) / GRAIN) - 1; }

static void *take(pools *p, size_t n) {
  int c = class_of(n);
  block *b = p->free[c];
  if (b) {
    p->free[c] = b->next;
    p->count[c]--;
    return b;
  }
  return malloc((size_t)(c + 1) * GRAIN);
}

static void give(pools *p, void *ptr, size_t n) {
  int c = class_of(n);
  if (p->count[c] >= KEEP) {
    free(ptr);
    return;
  }
  block *b = ptr;
  b->next = p->free[c];
  p->free[c] = b;
  p->count[c]++;
}

static bool small(size_t n) { return n > 0 && n <= (size_t)NCLASS * GRAIN; }

/* lua_Alloc contract: nsize == 0 frees; ptr == NULL allocates; osize is the
 * old size when ptr != NULL (else a type tag, ignored). */
void *mtr_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  pools *p = ud;
  if (!ptr) osize = 0;
  if (nsize == 0) {
    if (ptr) {
      if (small(osize))
        give(p, ptr, osize);
      else
        free(ptr);
    }
    return NULL;
  }
  if (ptr && small(osize) == small(nsize) && (!small(nsize) || class_of(osize) == class_of(nsize)))
    return small(nsize) ? ptr : realloc(ptr, nsize);
  void *q = small(nsize) ? take(p, nsize) : malloc(nsize);
  if (!q) return NULL;
  if (ptr) {
    memcpy(q, ptr, osize < nsize ? osize : nsize);
    if (small(osize))
      give(p, ptr, osize);
    else
      free(ptr);
  }
  return q;
}

void *mtr_lua_alloc_state(void) { return calloc(1, sizeof(pools)); }

void mtr_lua_alloc_free(void *ud) {
  pools *p = ud;
  if (!p) return;
  for (int c = 0; c < NCLASS; c++)
    while (p->free[c]) {
      block *b = p->free[c];
      p->free[c] = b->next;
      free(b);
    }
  free(p);
}
