/* l_segment_tree.c -- torch.rl.data._segment_tree: the sum and min segment
 * trees of prioritized replay (PrioritizedSampler in _samplers.lua). A tree
 * of capacity n keeps its leaves in a heap-ordered array of doubles: O(log n)
 * updates and range queries, and a batched prefix-sum search that descends
 * all queries level by level so their memory reads overlap. Indices are
 * 1-based at this interface; values and indices pass as CPU tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mtl.h"

#define TREE_MT "torch.rl.data.SegmentTree"
#define GROUP 8 /* leaves searched by a linear scan at the bottom of scan_lower_bound */

typedef struct segtree {
  int64_t cap;  /* leaves in use: 1..cap */
  int64_t size; /* power of two >= cap: leaves at t[size .. 2 size) */
  int is_min;   /* 0: sums; 1: minima */
  double *t;
} segtree;

static const char *tname(const segtree *s) { return s->is_min ? "MinSegmentTree" : "SumSegmentTree"; }
static double neutral(const segtree *s) { return s->is_min ? HUGE_VAL : 0.0; }
static double combine(const segtree *s, double a, double b) { return s->is_min ? (a < b ? a : b) : a + b; }

static segtree *check_tree(lua_State *L, int idx) {
  segtree *s = luaL_checkudata(L, idx, TREE_MT);
  if (!s->t) luaL_error(L, "SegmentTree: this tree was closed");
  return s;
}

static int tree_close(lua_State *L) {
  segtree *s = luaL_checkudata(L, 1, TREE_MT);
  free(s->t);
  s->t = NULL;
  return 0;
}

/* new(capacity, is_min) -> a tree of `capacity` leaves, all neutral
 * (0 for sums, +inf for minima). */
static int l_new(lua_State *L) {
  lua_Integer cap = luaL_checkinteger(L, 1);
  int is_min = lua_toboolean(L, 2);
  const char *name = is_min ? "MinSegmentTree" : "SumSegmentTree";
  if (cap < 1 || cap > ((lua_Integer)1 << 40))
    return luaL_error(L, "%s: capacity must be between 1 and 2^40, got %I", name, cap);
  segtree *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  luaL_setmetatable(L, TREE_MT);
  s->cap = cap;
  s->is_min = is_min;
  s->size = 1;
  while (s->size < cap) s->size <<= 1;
  size_t bytes = sizeof *s->t * (size_t)(2 * s->size), huge = (size_t)2 << 20;
  if (bytes >= 2 * huge) { /* large trees on huge pages where the kernel agrees: fewer TLB misses per search */
    s->t = aligned_alloc(huge, (bytes + huge - 1) & ~(huge - 1));
#ifdef MADV_HUGEPAGE
    if (s->t) madvise(s->t, (bytes + huge - 1) & ~(huge - 1), MADV_HUGEPAGE);
#endif
  } else { /* cache-line aligned: a group of 8 leaves is one line */
    s->t = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  }
  if (!s->t) return luaL_error(L, "%s: out of memory for %I leaves", name, cap);
  for (int64_t i = 0; i < 2 * s->size; i++) s->t[i] = neutral(s);
  return 1;
}

/* A contiguous CPU tensor of dtype dt at idx (the Lua side converts). */
static const mt_tensor *check_input(lua_State *L, int idx, mt_dtype dt, const char *fn, const char *what) {
  const mt_tensor *t = mtl_check_tensor(L, idx, fn);
  if ((mt_dtype)t->dtype != dt || mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t))
    luaL_error(L, "%s: %s must be a contiguous CPU %s tensor", fn, what, dt == MT_INT64 ? "int64" : "float64");
  return t;
}

static void set_leaf(segtree *s, int64_t i, double v) {
  int64_t p = s->size + i;
  s->t[p] = v;
  for (p >>= 1; p >= 1; p >>= 1) s->t[p] = combine(s, s->t[2 * p], s->t[2 * p + 1]);
}

/* tree:update(index, value): index an int64 tensor of 1-based leaves, value a
 * float64 tensor of as many values or of one (broadcast). Checks every entry
 * before writing any: in range, not NaN, and >= 0 in a sum tree. */
static int l_update(lua_State *L) {
  segtree *s = check_tree(L, 1);
  const char *fn = s->is_min ? "MinSegmentTree.update" : "SumSegmentTree.update";
  const mt_tensor *ix = check_input(L, 2, MT_INT64, fn, "index"), *vx = check_input(L, 3, MT_FLOAT64, fn, "value");
  int64_t n = mt_numel(ix), nv = mt_numel(vx);
  if (nv != n && nv != 1)
    return luaL_error(L, "%s: %I indices but %I values (expected as many, or one)", fn, (lua_Integer)n,
                      (lua_Integer)nv);
  const int64_t *ip = (const int64_t *)mt_data(ix);
  const double *vp = (const double *)mt_data(vx);
  for (int64_t k = 0; k < n; k++) {
    double v = vp[nv == 1 ? 0 : k];
    if (ip[k] < 1 || ip[k] > s->cap)
      return luaL_error(L, "%s: index %I is out of range 1..%I", fn, (lua_Integer)ip[k], (lua_Integer)s->cap);
    if (isnan(v) || (!s->is_min && (v < 0 || isinf(v))))
      return luaL_error(L, "%s: value %f at position %I (values must be %s)", fn, v, (lua_Integer)(k + 1),
                        s->is_min ? "numbers, not NaN" : "finite and non-negative");
  }
  for (int64_t k = 0; k < n; k++) set_leaf(s, ip[k] - 1, vp[nv == 1 ? 0 : k]);
  return 0;
}

/* tree:get(index) -> float64 tensor of the leaves at the 1-based int64 index */
static int l_get(lua_State *L) {
  segtree *s = check_tree(L, 1);
  const mt_tensor *ix = check_input(L, 2, MT_INT64, "SegmentTree.get", "index");
  const int64_t *ip = (const int64_t *)mt_data(ix);
  int64_t n = mt_numel(ix);
  for (int64_t k = 0; k < n; k++)
    if (ip[k] < 1 || ip[k] > s->cap)
      return luaL_error(L, "%s.get: index %I is out of range 1..%I", tname(s), (lua_Integer)ip[k],
                        (lua_Integer)s->cap);
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, "SegmentTree.get", mt_empty(ix->shape, ix->ndim, MT_FLOAT64, mt_cpu(), &out));
  double *op = (double *)mt_data(out);
  for (int64_t k = 0; k < n; k++) op[k] = s->t[s->size + ip[k] - 1];
  mtl_push_tensor(L, out);
  return 1;
}

/* tree:query([lo=1, hi=capacity]) -> the sum (or min) of leaves lo..hi,
 * inclusive; an empty range gives 0 (or +inf). */
static int l_query(lua_State *L) {
  segtree *s = check_tree(L, 1);
  lua_Integer lo = luaL_optinteger(L, 2, 1), hi = luaL_optinteger(L, 3, s->cap);
  if (lo < 1 || hi > s->cap)
    return luaL_error(L, "%s.query: range %I..%I is outside 1..%I", tname(s), lo, hi, (lua_Integer)s->cap);
  double left = neutral(s), right = neutral(s);
  for (int64_t a = s->size + lo - 1, b = s->size + hi; a < b; a >>= 1, b >>= 1) { /* [a, b) */
    if (a & 1) left = combine(s, left, s->t[a++]);
    if (b & 1) right = combine(s, s->t[--b], right);
  }
  lua_pushnumber(L, combine(s, left, right));
  return 1;
}

/* tree:scan_lower_bound(mass[, scale=1, limit=capacity]) -> int64 tensor:
 * for each value m of the float64 tensor mass, the first 1-based leaf i
 * whose prefix sum t[1] + ... + t[i] exceeds m * scale, clamped to limit
 * (uniforms in [0, 1) with scale = the sum draw leaves by weight). Sum
 * trees only. */
static int l_scan(lua_State *L) {
  segtree *s = check_tree(L, 1);
  if (s->is_min) return luaL_error(L, "MinSegmentTree: scan_lower_bound needs a sum tree");
  const mt_tensor *mx = check_input(L, 2, MT_FLOAT64, "SumSegmentTree.scan_lower_bound", "mass");
  int64_t n = mt_numel(mx);
  double scale = luaL_optnumber(L, 3, 1.0);
  lua_Integer limit = luaL_optinteger(L, 4, s->cap);
  if (limit < 1 || limit > s->cap) limit = s->cap;
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, "SumSegmentTree.scan_lower_bound", mt_empty(mx->shape, mx->ndim, MT_INT64, mt_cpu(), &out));
  const double *mp = (const double *)mt_data(mx), *t = s->t;
  int64_t *op = (int64_t *)mt_data(out);
  enum { B = 64 }; /* queries descending together */
  /* the binary descent stops at nodes of `stop` leaves (one cache line of
   * 8 doubles), whose leaves are then summed in turn: one memory miss at
   * the bottom instead of three in a tree larger than the caches */
  int stop = s->size >= GROUP ? GROUP : 1;
  int64_t groups = s->size / stop; /* the first node index at that depth */
  for (int64_t b0 = 0; b0 < n; b0 += B) {
    int m = n - b0 < B ? (int)(n - b0) : B;
    int64_t node[B];
    double r[B];
    for (int q = 0; q < m; q++) node[q] = 1, r[q] = mp[b0 + q] * scale;
    for (int64_t level = s->size; level > stop; level >>= 1)
      for (int q = 0; q < m; q++) {
        int64_t l = 2 * node[q];
        double ls = t[l];
        int go_right = r[q] >= ls;
        r[q] -= ls * (double)go_right; /* arithmetic, not a branch: half of them would mispredict */
        node[q] = l + go_right;
        /* the next level's pair (or the leaf group) while the other queries run */
        __builtin_prefetch(level > 2 * stop ? t + 2 * node[q] : t + s->size + (node[q] - groups) * stop);
      }
    for (int q = 0; q < m; q++) { /* the first leaf of the group whose running sum exceeds r */
      const double *g = t + s->size + (node[q] - groups) * stop;
      double acc = 0;
      int c = 0;
      for (int j = 0; j < stop; j++) acc += g[j], c += acc <= r[q];
      int64_t i = (node[q] - groups) * stop + (c < stop ? c : stop - 1) + 1;
      op[b0 + q] = i > limit ? limit : i;
    }
  }
  mtl_push_tensor(L, out);
  return 1;
}

/* tree:weights(index, p_min, beta) -> float32 tensor of (t[i] / p_min)^-beta
 * for the 1-based int64 index: prioritized replay's importance weights */
static int l_weights(lua_State *L) {
  segtree *s = check_tree(L, 1);
  const mt_tensor *ix = check_input(L, 2, MT_INT64, "SumSegmentTree.weights", "index");
  double p_min = luaL_checknumber(L, 3), beta = luaL_checknumber(L, 4);
  const int64_t *ip = (const int64_t *)mt_data(ix);
  int64_t n = mt_numel(ix);
  for (int64_t k = 0; k < n; k++)
    if (ip[k] < 1 || ip[k] > s->cap)
      return luaL_error(L, "%s.weights: index %I is out of range 1..%I", tname(s), (lua_Integer)ip[k],
                        (lua_Integer)s->cap);
  mt_tensor *out = NULL;
  MTL_CHECK_OP(L, "SumSegmentTree.weights", mt_empty(ix->shape, ix->ndim, MT_FLOAT32, mt_cpu(), &out));
  float *op = (float *)mt_data(out);
  for (int64_t k = 0; k < n; k++) op[k] = (float)pow(s->t[s->size + ip[k] - 1] / p_min, -beta);
  mtl_push_tensor(L, out);
  return 1;
}

/* tree:values() -> float64 tensor of the capacity leaves (a copy) */
static int l_values(lua_State *L) {
  segtree *s = check_tree(L, 1);
  mt_tensor *out = NULL;
  int64_t shape[1] = {s->cap};
  MTL_CHECK_OP(L, "SegmentTree.values", mt_empty(shape, 1, MT_FLOAT64, mt_cpu(), &out));
  memcpy(mt_data(out), s->t + s->size, sizeof(double) * (size_t)s->cap);
  mtl_push_tensor(L, out);
  return 1;
}

/* tree:set_values(v): all leaves from the float64 tensor v of capacity
 * entries, inner nodes rebuilt in O(n) */
static int l_set_values(lua_State *L) {
  segtree *s = check_tree(L, 1);
  const mt_tensor *v = check_input(L, 2, MT_FLOAT64, "SegmentTree.set_values", "values");
  if (mt_numel(v) != s->cap)
    return luaL_error(L, "%s.set_values: %I values for a tree of capacity %I", tname(s), (lua_Integer)mt_numel(v),
                      (lua_Integer)s->cap);
  const double *vp = (const double *)mt_data(v);
  for (int64_t i = 0; i < s->cap; i++)
    if (isnan(vp[i]) || (!s->is_min && vp[i] < 0))
      return luaL_error(L, "%s.set_values: value %f at position %I", tname(s), vp[i], (lua_Integer)(i + 1));
  memcpy(s->t + s->size, vp, sizeof(double) * (size_t)s->cap);
  for (int64_t i = s->size + s->cap; i < 2 * s->size; i++) s->t[i] = neutral(s);
  for (int64_t p = s->size - 1; p >= 1; p--) s->t[p] = combine(s, s->t[2 * p], s->t[2 * p + 1]);
  return 0;
}

static int l_len(lua_State *L) {
  lua_pushinteger(L, check_tree(L, 1)->cap);
  return 1;
}

static int l_tostring(lua_State *L) {
  segtree *s = check_tree(L, 1);
  lua_pushfstring(L, "%s(capacity=%I)", tname(s), (lua_Integer)s->cap);
  return 1;
}

static const luaL_Reg methods[] = {{"update", l_update},
                                   {"get", l_get},
                                   {"query", l_query},
                                   {"scan_lower_bound", l_scan},
                                   {"weights", l_weights},
                                   {"values", l_values},
                                   {"set_values", l_set_values},
                                   {NULL, NULL}};

static const mtl_reg regs[] = {
    {"new", l_new, MTL_FN,
     "torch.rl.data._segment_tree.new(capacity, is_min) -- internal: a sum (or min) segment tree of capacity "
     "leaves"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl.data._segment_tree" */
int luaopen_torch_rl_data__segment_tree(lua_State *L) {
  mtl_new_class(L, TREE_MT, methods, tree_close);
  luaL_getmetatable(L, TREE_MT);
  lua_pushcfunction(L, l_len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, l_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
