/* conv_dnnl.c -- float32 convolution through oneDNN: forward, grad input
 * and grad weight. A primitive is built once per problem (shapes, options,
 * direction, bias, fused activation) and kept in a small LRU cache; calls
 * then only wrap the caller's buffers and run. A forward primitive can apply
 * an activation to its result as a oneDNN post-op (the JIT's epilogues). Formats are oneDNN's choice (`any`) with
 * reorders to and from PyTorch's plain layout, except where the plain
 * layout measured faster (docs/conv.md); temporaries come from the engine's
 * allocator, which recycles large blocks. No shape checks here: conv.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "cpu/conv_kernels.h"
#include "cpu/dnnl_act.h"

#define CACHE_SIZE 32

enum { FWD, BWD_DATA, BWD_WEIGHTS };
/* Tensor roles: A = src (diff_src), W = weights (diff_weights), D = dst
 * (diff_dst); which are outputs depends on the direction. */
enum { A, W, D, NROLE };

typedef struct entry {
  /* key */
  mt_conv_problem p;
  int kind;
  bool bias;
  mt_act act; /* forward: the post-op activation (MT_ACT_NONE: none) */
  double alpha;
  bool act_done; /* the primitive applies act (false: left to the caller) */
  /* value */
  mt_conv_algo algo;
  dnnl_primitive_t prim, reorder[NROLE]; /* reorder[r]: NULL if none */
  dnnl_memory_desc_t md[NROLE], user[NROLE], bias_md, scratch_md;
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
  for (int r = 0; r < NROLE; r++)
    if (e->reorder[r]) dnnl_primitive_destroy(e->reorder[r]);
  free(e);
}

void mt_dnnl_conv_cache_clear(void) {
  pthread_mutex_lock(&g.lock);
  for (int i = 0; i < CACHE_SIZE; i++) entry_free(g.slot[i]), g.slot[i] = NULL;
  pthread_mutex_unlock(&g.lock);
}

/* The algorithm for a forward problem, from the measurements in
 * docs/conv.md: few input channels per group (the first layer of a
 * network): im2col + GEMM on the plain layout, which skips two reorders;
 * large 3x3 stride-1 layers: Winograd (MOONTORCH_CONV_WINOGRAD=0 turns it
 * off); everything else: oneDNN's direct kernels in blocked layouts.
 * MOONTORCH_CONV_ALGO=direct|gemm|winograd forces one where it applies. */
static mt_conv_algo pick_fwd(const mt_conv_problem *p) {
  const char *force = getenv("MOONTORCH_CONV_ALGO");
  if (force && strcmp(force, "direct") == 0) return MT_CONV_DIRECT;
  if (force && strcmp(force, "gemm") == 0) return MT_CONV_GEMM;
  int64_t cg = p->C / p->G, kg = p->K / p->G, sp = p->out[0] * p->out[1] * p->out[2];
  /* a 2-D problem sits in dims 1 and 2 of the 3-D view */
  bool wino_shape = p->nsp == 2 && p->G == 1 && p->k[1] == 3 && p->k[2] == 3 && p->stride[1] == 1 &&
                    p->stride[2] == 1 && p->dil[1] == 1 && p->dil[2] == 1;
  if (force && strcmp(force, "winograd") == 0) return wino_shape ? MT_CONV_WINOGRAD : MT_CONV_DIRECT;
  if (cg <= 4 && p->G == 1) return MT_CONV_GEMM;
  const char *w = getenv("MOONTORCH_CONV_WINOGRAD");
  bool wino_ok = !(w && strcmp(w, "0") == 0);
  if (wino_ok && wino_shape && cg >= 64 && kg >= 64 && sp >= 28 * 28) return MT_CONV_WINOGRAD;
  return MT_CONV_DIRECT;
}

static void plain_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims, bool any) {
  static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  dnnl_dims_t d;
  for (int i = 0; i < nd; i++) d[i] = dims[i];
  dnnl_memory_desc_init_by_tag(md, nd, d, dnnl_f32, any ? dnnl_format_tag_any : tags[nd - 1]);
}

/* Plain (PyTorch) descriptors of the three roles; any: format `any`. */
static void role_mds(const mt_conv_problem *p, bool any, dnnl_memory_desc_t *md) {
  int64_t a[5] = {p->N, p->C}, d[5] = {p->N, p->K}, w[6];
  int nw = 0;
  if (p->G > 1) w[nw++] = p->G;
  w[nw++] = p->K / p->G;
  w[nw++] = p->C / p->G;
  for (int i = 0; i < p->nsp; i++) {
    a[2 + i] = p->in[3 - p->nsp + i];
    d[2 + i] = p->out[3 - p->nsp + i];
    w[nw++] = p->k[3 - p->nsp + i];
  }
  plain_md(&md[A], p->nsp + 2, a, any);
  plain_md(&md[W], nw, w, any);
  plain_md(&md[D], p->nsp + 2, d, any);
}

static dnnl_status_t make_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to, dnnl_primitive_t *r) {
  dnnl_primitive_desc_t pd;
  dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, g.eng, to, g.eng, NULL);
  if (s != dnnl_success) return s;
  s = dnnl_primitive_create(r, pd);
  dnnl_primitive_desc_destroy(pd);
  return s;
}

/* Operation descriptor of direction kind for descriptors md (roles). */
static dnnl_status_t op_desc(const mt_conv_problem *p, int kind, dnnl_alg_kind_t alg, const dnnl_memory_desc_t *md,
                             const dnnl_memory_desc_t *bias, dnnl_convolution_desc_t *cd) {
  dnnl_dims_t st, dil, pl, pr;
  for (int i = 0; i < p->nsp; i++) {
    int j = 3 - p->nsp + i;
    st[i] = p->stride[j], dil[i] = p->dil[j] - 1, pl[i] = p->pad_lo[j], pr[i] = p->pad_hi[j];
  }
  if (kind == FWD)
    return dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_training, alg, &md[A], &md[W], bias, &md[D], st,
                                                      dil, pl, pr);
  if (kind == BWD_DATA)
    return dnnl_dilated_convolution_backward_data_desc_init(cd, alg, &md[A], &md[W], &md[D], st, dil, pl, pr);
  return dnnl_dilated_convolution_backward_weights_desc_init(cd, alg, &md[A], &md[W], bias, &md[D], st, dil, pl, pr);
}

/* True when pd's implementation applies post-ops slowly: oneDNN's GEMM
 * convolution (picked for few input channels) runs an eltwise post-op
 * about 12x slower than the convolution itself (measured: 64x1x28x28 ->
 * 32 channels, 3x3, 2 threads: 0.33 ms plain, 4.2 ms with relu), where a
 * separate pass costs about 0.1 ms. */
static bool slow_post_op(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl) return true;
  return strstr(impl, "gemm") != NULL || strstr(impl, "ref") != NULL;
}

/* Builds the primitive (and reorders) of e's key; false if oneDNN cannot. */
static bool build(entry *e) {
  const mt_conv_problem *p = &e->p;
  bool any = e->algo != MT_CONV_GEMM;
  dnnl_alg_kind_t alg = e->algo == MT_CONV_WINOGRAD ? dnnl_convolution_winograd : dnnl_convolution_direct;
  dnnl_memory_desc_t want[NROLE];
  role_mds(p, false, e->user);
  role_mds(p, any, want);
  int64_t kdim = p->K;
  plain_md(&e->bias_md, 1, &kdim, false);
  const dnnl_memory_desc_t *bias = e->bias ? &e->bias_md : NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL, hint = NULL;
  dnnl_convolution_desc_t cd;
  bool ok = false;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return false;
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (!mt_dnnl_set_act(attr, e->act, e->alpha)) goto done;
  if (e->kind != FWD) { /* backward primitives need the forward one as a hint */
    dnnl_convolution_desc_t fd;
    if (op_desc(p, FWD, alg, want, e->kind == BWD_WEIGHTS ? bias : NULL, &fd) != dnnl_success ||
        dnnl_primitive_desc_create(&hint, &fd, NULL, g.eng, NULL) != dnnl_success)
      goto done;
  }
  if (op_desc(p, e->kind, alg, want, bias, &cd) != dnnl_success ||
      dnnl_primitive_desc_create(&pd, &cd, attr, g.eng, hint) != dnnl_success)
    goto done;
  e->act_done = true;
  if (e->act != MT_ACT_NONE && slow_post_op(pd)) { /* the primitive without it; the caller applies it */
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;
    dnnl_primitive_attr_destroy(attr);
    attr = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success) goto done;
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (dnnl_primitive_desc_create(&pd, &cd, attr, g.eng, hint) != dnnl_success) goto done;
    e->act_done = false;
  }
  static const dnnl_query_t q[3][NROLE] = {
      {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md},
      {dnnl_query_diff_src_md, dnnl_query_weights_md, dnnl_query_diff_dst_md},
      {dnnl_query_src_md, dnnl_query_diff_weights_md, dnnl_query_diff_dst_md}};
  static const bool is_out[3][NROLE] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  for (int r = 0; r < NROLE; r++) {
    e->md[r] = *dnnl_primitive_desc_query_md(pd, q[e->kind][r], 0);
    if (dnnl_memory_desc_equal(&e->md[r], &e->user[r])) continue;
    bool out = is_out[e->kind][r];
    if (make_reorder(out ? &e->md[r] : &e->user[r], out ? &e->user[r] : &e->md[r], &e->reorder[r]) != dnnl_success)
      goto done;
  }
  e->scratch_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  ok = dnnl_primitive_create(&e->prim, pd) == dnnl_success;
done:
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (hint) dnnl_primitive_desc_destroy(hint);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* The cached entry for (p, kind, bias, act, alpha), built on a miss
 * (evicting the least recently used); NULL with a message when oneDNN
 * cannot run it. Called with g.lock held. */
static entry *lookup(const mt_conv_problem *p, int kind, bool bias, mt_act act, double alpha) {
  entry key;
  memset(&key, 0, sizeof key);
  key.p = *p;
  key.kind = kind;
  key.bias = bias;
  key.act = act;
  key.alpha = act == MT_ACT_LEAKY_RELU ? alpha : 0;
  int victim = 0;
  for (int i = 0; i < CACHE_SIZE; i++) {
    entry *e = g.slot[i];
    if (e && e->kind == kind && e->bias == bias && e->act == key.act && e->alpha == key.alpha &&
        memcmp(&e->p, &key.p, sizeof key.p) == 0) {
      e->used = ++g.clock;
      return e;
    }
    if (!e || (g.slot[victim] && e->used < g.slot[victim]->used)) victim = i;
  }
  entry *e = calloc(1, sizeof *e);
  if (!e) {
    mt_fail(MT_ENOMEM, "convolution: out of memory");
    return NULL;
  }
  *e = key;
  e->algo = kind == FWD ? pick_fwd(p) : MT_CONV_DIRECT;
  bool ok = build(e);
  if (!ok && e->algo != MT_CONV_DIRECT) { /* e.g. Winograd unavailable on this CPU */
    entry_free(e);
    if (!(e = calloc(1, sizeof *e))) return NULL;
    *e = key;
    e->algo = MT_CONV_DIRECT;
    ok = build(e);
  }
  if (!ok) {
    entry_free(e);
    mt_fail(MT_EARG, "convolution: oneDNN has no implementation for this problem");
    return NULL;
  }
  entry_free(g.slot[victim]);
  g.slot[victim] = e;
  e->used = ++g.clock;
  return e;
}

/* A temporary of md's size (engine allocator: 64-byte aligned, recycled). */
static mt_status temp(const dnnl_memory_desc_t *md, mt_tensor **t, dnnl_memory_t *m) {
  int64_t n = (int64_t)((dnnl_memory_desc_get_size(md) + 3) / 4);
  mt_status st = mt_empty(&n, 1, MT_FLOAT32, mt_cpu(), t);
  if (st) return st;
  if (dnnl_memory_create(m, md, g.eng, mt_data(*t)) != dnnl_success)
    return mt_fail(MT_ENOMEM, "convolution: oneDNN could not wrap a buffer");
  return MT_OK;
}

static dnnl_status_t run_reorder(dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dnnl_primitive_execute(r, g.stream, 2, args);
}

/* Runs direction kind on the caller's plain buffers buf[role] (bias: bias
 * or grad bias, may be NULL; act: forward only). */
static mt_status run(const mt_conv_problem *p, int kind, void *const buf[NROLE], void *bias, mt_act act, double alpha,
                     bool *act_done) {
  pthread_once(&g.once, init);
  if (g.init_status != dnnl_success) return mt_fail(MT_EARG, "convolution: oneDNN could not start");
  static const int arg[3][NROLE] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                    {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST},
                                    {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST}};
  static const bool is_out[3][NROLE] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  pthread_mutex_lock(&g.lock);
  mt_status st = MT_OK;
  dnnl_status_t ds = dnnl_success;
  mt_tensor *tmp[NROLE + 1] = {NULL};
  dnnl_memory_t user[NROLE] = {NULL}, inner[NROLE] = {NULL}, bm = NULL, sm = NULL;
  entry *e = lookup(p, kind, bias != NULL, act, alpha);
  if (!e) {
    st = MT_EARG;
    goto done;
  }
  if (act_done) *act_done = e->act_done;
  for (int r = 0; r < NROLE && !st; r++) {
    if (dnnl_memory_create(&user[r], &e->user[r], g.eng, buf[r]) != dnnl_success) {
      st = mt_fail(MT_ENOMEM, "convolution: oneDNN could not wrap a buffer");
    } else if (e->reorder[r]) {
      st = temp(&e->md[r], &tmp[r], &inner[r]);
      if (!st && !is_out[kind][r]) ds = run_reorder(e->reorder[r], user[r], inner[r]);
    }
  }
  if (!st && bias && dnnl_memory_create(&bm, &e->bias_md, g.eng, bias) != dnnl_success)
    st = mt_fail(MT_ENOMEM, "convolution: oneDNN could not wrap a buffer");
  if (!st) st = temp(&e->scratch_md, &tmp[NROLE], &sm);
  if (!st && ds == dnnl_success) {
    dnnl_exec_arg_t args[5];
    int n = 0;
    for (int r = 0; r < NROLE; r++) args[n++] = (dnnl_exec_arg_t){arg[kind][r], inner[r] ? inner[r] : user[r]};
    if (bm) args[n++] = (dnnl_exec_arg_t){kind == FWD ? DNNL_ARG_BIAS : DNNL_ARG_DIFF_BIAS, bm};
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, sm};
    ds = dnnl_primitive_execute(e->prim, g.stream, n, args);
    for (int r = 0; r < NROLE && ds == dnnl_success; r++)
      if (e->reorder[r] && is_out[kind][r]) ds = run_reorder(e->reorder[r], inner[r], user[r]);
    if (ds == dnnl_success) ds = dnnl_stream_wait(g.stream);
  }
  if (!st && ds != dnnl_success) st = mt_fail(MT_EARG, "convolution: oneDNN failed (status %d)", (int)ds);
done:
  for (int r = 0; r < NROLE; r++) {
    if (user[r]) dnnl_memory_destroy(user[r]);
    if (inner[r]) dnnl_memory_destroy(inner[r]);
  }
  if (bm) dnnl_memory_destroy(bm);
  if (sm) dnnl_memory_destroy(sm);
  for (int r = 0; r <= NROLE; r++) mt_release(tmp[r]);
  pthread_mutex_unlock(&g.lock);
  return st;
}

mt_status mt_dnnl_conv_fwd(const mt_conv_problem *p, const float *x, const float *w, const float *b, mt_act act,
                           double alpha, bool *act_done, float *y) {
  void *buf[NROLE] = {(void *)x, (void *)w, y};
  return run(p, FWD, buf, (void *)b, act, alpha, act_done);
}

mt_status mt_dnnl_conv_bwd_data(const mt_conv_problem *p, const float *gy, const float *w, float *gx) {
  void *buf[NROLE] = {gx, (void *)w, (void *)gy};
  return run(p, BWD_DATA, buf, NULL, MT_ACT_NONE, 0, NULL);
}

mt_status mt_dnnl_conv_bwd_weights(const mt_conv_problem *p, const float *gy, const float *x, float *gw, float *gb) {
  void *buf[NROLE] = {(void *)x, gw, (void *)gy};
  return run(p, BWD_WEIGHTS, buf, gb, MT_ACT_NONE, 0, NULL);
}

mt_conv_algo mt_dnnl_conv_fwd_algo(const mt_conv_problem *p) {
  pthread_once(&g.once, init);
  if (g.init_status != dnnl_success) return MT_CONV_REF;
  pthread_mutex_lock(&g.lock);
  entry *e = lookup(p, FWD, false, MT_ACT_NONE, 0);
  mt_conv_algo a = e ? e->algo : MT_CONV_REF;
  pthread_mutex_unlock(&g.lock);
  return a;
}
