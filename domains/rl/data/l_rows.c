/* l_rows.c -- torch.rl.data._rows: copies of whole rows (dim 1) of a
 * contiguous CPU tensor at 1-based positions, for the replay storages'
 * sampled gathers and writes. The engine's index_select / index_copy_ do
 * the general case; these are plain memcpy loops for the common one. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "graph.h"
#include "mtl.h"

/* The row count and bytes per row of x, or 0 rows when x is not a
 * contiguous CPU tensor of at least one dim that nothing records. */
static int64_t layout(const mt_tensor *x, size_t *row) {
  if (x->ndim < 1 || mt_tdevice(x).type != MT_CPU || !mt_is_contiguous(x) || mtg_requires_grad(x)) return 0;
  size_t r = mt_elsize(x);
  for (int i = 1; i < x->ndim; i++) r *= (size_t)x->shape[i];
  *row = r;
  return x->shape[0];
}

static const int64_t *check_index(lua_State *L, int idx, const char *fn, int64_t rows, int64_t *n) {
  const mt_tensor *ix = mtl_check_tensor(L, idx, fn);
  if (ix->dtype != MT_INT64 || mt_tdevice(ix).type != MT_CPU || !mt_is_contiguous(ix))
    luaL_error(L, "%s: index must be a contiguous CPU int64 tensor", fn);
  const int64_t *p = (const int64_t *)mt_data(ix);
  *n = mt_numel(ix);
  for (int64_t k = 0; k < *n; k++)
    if (p[k] < 1 || p[k] > rows)
      luaL_error(L, "%s: index %I is out of range 1..%I", fn, (lua_Integer)p[k], (lua_Integer)rows);
  return p;
}

/* gather(x, index) -> the rows x[index[k]] as a new tensor [n, ...], or
 * nil when x is not a contiguous CPU tensor (the caller uses index_select) */
static int l_gather(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "_rows.gather");
  size_t row = 0;
  int64_t rows = layout(x, &row), n = 0;
  if (rows == 0) return 0;
  const int64_t *p = check_index(L, 2, "_rows.gather", rows, &n);
  int64_t shape[MT_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[0] = n;
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, "_rows.gather", mt_empty(shape, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &out));
  const char *src = mt_data(x);
  char *dst = mt_data(out);
  for (int64_t k = 0; k < n; k++) __builtin_prefetch(src + (size_t)(p[k] - 1) * row); /* all misses in flight */
  for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * row, src + (size_t)(p[k] - 1) * row, row);
  mtl_push_tensor(L, out);
  return 1;
}

/* gather_all(xs, index) -> a list: for each tensor of the list xs, its rows
 * at index (as gather), or false for a tensor gather does not take (or past
 * the first MAX_JOBS). The copies of all tensors run as one sequence that
 * prefetches AHEAD rows in advance, so the cache misses of a large storage
 * overlap without the prefetched lines outgrowing the L1 cache. */
#define MAX_JOBS 64
#define AHEAD 32
typedef struct job {
  const char *src;
  char *dst;
  size_t row;
} job;

static int l_gather_all(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int nx = (int)lua_rawlen(L, 1), nj = 0;
  int64_t n = 0;
  const int64_t *p = check_index(L, 2, "_rows.gather_all", INT64_MAX, &n); /* each tensor's bound below */
  job jobs[MAX_JOBS];
  lua_createtable(L, nx, 0);
  for (int j = 1; j <= nx; j++) {
    lua_rawgeti(L, 1, j);
    const mt_tensor *x = mtl_check_tensor(L, -1, "_rows.gather_all");
    lua_pop(L, 1);
    size_t row = 0;
    int64_t rows = layout(x, &row);
    if (rows == 0 || nj == MAX_JOBS) {
      lua_pushboolean(L, 0);
    } else {
      for (int64_t k = 0; k < n; k++)
        if (p[k] > rows)
          return luaL_error(L, "_rows.gather_all: index %I is out of range 1..%I", (lua_Integer)p[k], (lua_Integer)rows);
      int64_t shape[MT_MAXDIM];
      memcpy(shape, x->shape, sizeof shape);
      shape[0] = n;
      mt_tensor *out = NULL;
      MTL_CHECK_OP(L, "_rows.gather_all", mt_empty(shape, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &out));
      jobs[nj++] = (job){mt_data(x), mt_data(out), row};
      mtl_push_tensor(L, out);
    }
    lua_rawseti(L, -2, j);
  }
  int ja = 0; /* the prefetch cursor (ja, ka) runs AHEAD rows before the copies */
  int64_t ka = 0;
  for (int a = 0; a < AHEAD && ja < nj; a++) {
    __builtin_prefetch(jobs[ja].src + (size_t)(p[ka] - 1) * jobs[ja].row);
    if (++ka == n) ka = 0, ja++;
  }
  for (int j = 0; j < nj; j++) {
    const job *b = &jobs[j];
    for (int64_t k = 0; k < n; k++) {
      if (ja < nj) {
        __builtin_prefetch(jobs[ja].src + (size_t)(p[ka] - 1) * jobs[ja].row);
        if (++ka == n) ka = 0, ja++;
      }
      memcpy(b->dst + (size_t)k * b->row, b->src + (size_t)(p[k] - 1) * b->row, b->row);
    }
  }
  return 1;
}

/* scatter(x, index, src) -> true after x[index[k]] = src[k] for every k
 * (src of x's dtype and row shape, contiguous CPU), or nothing when a
 * tensor does not qualify (the caller uses index_copy_) */
static int l_scatter(lua_State *L) {
  mt_tensor *x = mtl_check_tensor(L, 1, "_rows.scatter");
  const mt_tensor *s = mtl_check_tensor(L, 3, "_rows.scatter");
  size_t row = 0, srow = 0;
  int64_t rows = layout(x, &row), srows = layout(s, &srow), n = 0;
  if (rows == 0 || srows == 0 || row != srow || s->dtype != x->dtype || s->ndim != x->ndim) return 0;
  const int64_t *p = check_index(L, 2, "_rows.scatter", rows, &n);
  if (n != srows) return luaL_error(L, "_rows.scatter: %I positions for %I rows", (lua_Integer)n, (lua_Integer)srows);
  char *dst = mt_data(x);
  const char *src = mt_data(s);
  for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)(p[k] - 1) * row, src + (size_t)k * row, row);
  lua_pushboolean(L, 1);
  return 1;
}

/* hugepages(x) -> true when the kernel was asked to back the 2 MiB-aligned
 * part of x's data (a CPU tensor not yet touched) with huge pages: random
 * rows of a large storage then cost far fewer TLB misses. Only advice:
 * nothing changes when the kernel declines. */
static int l_hugepages(lua_State *L) {
  const mt_tensor *x = mtl_check_tensor(L, 1, "_rows.hugepages");
  int ok = 0;
#ifdef MADV_HUGEPAGE
  const size_t huge = (size_t)2 << 20;
  if (mt_tdevice(x).type == MT_CPU && mt_is_contiguous(x)) {
    uintptr_t a = (uintptr_t)mt_data(x), b = a + (size_t)mt_numel(x) * mt_elsize(x);
    uintptr_t lo = (a + huge - 1) & ~(uintptr_t)(huge - 1), hi = b & ~(uintptr_t)(huge - 1);
    if (hi > lo) ok = madvise((void *)lo, hi - lo, MADV_HUGEPAGE) == 0;
  }
#endif
  lua_pushboolean(L, ok);
  return 1;
}

static const mtl_reg regs[] = {
    {"gather_all", l_gather_all, MTL_FN,
     "torch.rl.data._rows.gather_all(xs, index) -- internal: gather of each tensor of the list xs (false where it "
     "does not apply), all rows prefetched first"},
    {"hugepages", l_hugepages, MTL_FN,
     "torch.rl.data._rows.hugepages(x) -- internal: advise huge pages for a large CPU tensor's data (true when "
     "accepted)"},
    {"gather", l_gather, MTL_FN,
     "torch.rl.data._rows.gather(x, index) -- internal: rows of a contiguous CPU tensor at 1-based positions (nil "
     "for other tensors)"},
    {"scatter", l_scatter, MTL_FN,
     "torch.rl.data._rows.scatter(x, index, src) -- internal: x's rows at 1-based positions from src's rows (nil "
     "when a tensor is not contiguous on the CPU)"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl.data._rows" */
int luaopen_torch_rl_data__rows(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
