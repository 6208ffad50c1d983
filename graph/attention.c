/* attention.c -- recorded scaled dot product attention: the selection rule
 * and backend switches (policy: mtg_sdpa picks a backend, falls back when
 * cuDNN declines), the math backend written with recorded ops (so autograd
 * and double backward come free), and the packing of the fused backends'
 * ops (flash, cuDNN), rows recorded and traced by mtg_call (call.c), with
 * their derivatives. A fused node's derivative calls its backward op; under
 * create_graph it is written with recorded math ops instead, so the
 * backward ops themselves need none (derivatives.c says so). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "creation.h"
#include "deriv.h"
#include "trace.h"
#include "random.h"

#define LIVE(s) ((s)->st == MT_OK)

static _Thread_local unsigned disabled; /* backend bits switched off on this thread */

#define ALL_BACKENDS (MTG_SDPA_MATH | MTG_SDPA_FLASH | MTG_SDPA_CUDNN)

unsigned mtg_sdpa_enabled(void) { return ALL_BACKENDS & ~disabled; }

unsigned mtg_sdpa_set_enabled(unsigned bits) {
  unsigned old = mtg_sdpa_enabled();
  disabled = ALL_BACKENDS & ~bits;
  return old;
}

static const char *OP = "scaled_dot_product_attention";

/* Why flash cannot take these inputs (NULL: it can). */
static const char *flash_refusal(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                 const mt_sdpa_opts *o, const mt_sdpa_dims *d) {
  if (mt_tdevice(q).type == MT_CUDA) { /* the CUDA kernels (tensor/attention_cuda.c) */
    const mt_tensor *qkv[3] = {q, k, v};
    const char *why = mt_sdpa_flash_cuda_refusal(q, mask, o, d, mtg_grad_enabled() && mtg_any_requires_grad(qkv, 3));
    if (why) return why;
  } else {
    if (q->dtype != MT_FLOAT32 && q->dtype != MT_FLOAT64) return "it runs float32 and float64 only";
    if (mt_tdevice(q).type != MT_CPU) return "it runs on the CPU only";
    if (o->dropout_p > 0) return "it has no dropout (dropout_p > 0)";
  }
  if (!d->same_batch) return "query, key and value batch dims differ (broadcasting)";
  if (mask && mtg_requires_grad(mask)) return "the attention mask requires grad";
  if (d->L == 0 || d->S == 0 || d->E == 0 || d->Ev == 0) return "an input is empty";
  return NULL;
}

/* Why cuDNN cannot take these inputs (NULL: it can; buf holds longer reasons). */
static const char *cudnn_refusal(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                 const mt_sdpa_opts *o, const mt_sdpa_dims *d, char *buf, size_t n) {
  const mt_tensor *ins[3] = {q, k, v};
  bool grad = mtg_grad_enabled() && mtg_any_requires_grad(ins, 3);
  if (mask && mtg_requires_grad(mask)) return "the attention mask requires grad";
  return mt_sdpa_cudnn_refusal(q, k, v, mask, o, d, grad, buf, n);
}

/* Appends "name: why" as a line of notes. */
static void add_note(char *notes, size_t n, const char *name, const char *why) {
  size_t used = notes ? strlen(notes) : 0;
  if (notes && used < n) snprintf(notes + used, n - used, "%s%s: %s", used ? "\n" : "", name, why);
}

mt_status mtg_sdpa_select_notes(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                const mt_sdpa_opts *o, int *backend, char *notes, size_t n) {
  mt_sdpa_dims d;
  mt_status st = mt_sdpa_check(OP, q, k, v, mask, o, &d);
  if (st) return st;
  if (notes && n) notes[0] = 0;
  unsigned on = mtg_sdpa_enabled();
  char buf[160], err[400] = "";
  const char *names[2] = {"cudnn", "flash"}, *whys[2] = {NULL, NULL};
  int bits[2] = {MTG_SDPA_CUDNN, MTG_SDPA_FLASH};
  for (int i = mt_tdevice(q).type == MT_CUDA ? 0 : 1; i < 2; i++) {
    bool enabled = (on & bits[i]) != 0;
    whys[i] = !enabled ? "is disabled"
              : i == 0 ? cudnn_refusal(q, k, v, mask, o, &d, buf, sizeof buf)
                       : flash_refusal(q, k, v, mask, o, &d);
    if (!whys[i]) {
      *backend = bits[i];
      return MT_OK;
    }
    add_note(notes, n, names[i], enabled ? whys[i] : "disabled by torch.backends.sdp_kernel");
    size_t used = strlen(err);
    snprintf(err + used, sizeof err - used, "%s %s; ", names[i], whys[i]);
  }
  if (on & MTG_SDPA_MATH) {
    *backend = MTG_SDPA_MATH;
    return MT_OK;
  }
  return mt_fail(MT_EARG, "%s: no enabled backend can run these inputs: %smath is disabled (enable it with "
                 "torch.backends.sdp_kernel{math=true})",
                 OP, err);
}

mt_status mtg_sdpa_select(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                          const mt_sdpa_opts *o, int *backend) {
  return mtg_sdpa_select_notes(q, k, v, mask, o, backend, NULL, 0);
}

/* ---- the math composition (also the create_graph derivative of flash) ---- */

static mt_tensor *Da_softmax(mtg_scope *s, const mt_tensor *x) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_along(MT_OP_softmax, x, -1, -1, &r);
  return mtg_track(s, st, r);
}

/* k or v (..., Hk, S, F) repeated to q's heads (..., Hk * g, S, F), each head g times in a row */
static mt_tensor *gqa_repeat(mtg_scope *s, const mt_tensor *t, int64_t g) {
  if (!LIVE(s) || !t || g == 1) return (mt_tensor *)t;
  int nd = t->ndim;
  int64_t sh[MT_MAXDIM + 1], rs[MT_MAXDIM];
  memcpy(sh, t->shape, sizeof(int64_t) * (nd - 2));
  sh[nd - 2] = g, sh[nd - 1] = t->shape[nd - 2], sh[nd] = t->shape[nd - 1];
  memcpy(rs, t->shape, sizeof(int64_t) * nd);
  rs[nd - 3] *= g;
  return mtg_d_reshape(s, mtg_d_expand(s, mtg_d_unsqueeze(s, t, nd - 2), sh, nd + 1), rs, nd);
}

/* The gradient of a repeated head tensor summed back to (..., Hk, S, F). */
static mt_tensor *gqa_reduce(mtg_scope *s, const mt_tensor *t, int64_t g) {
  if (!LIVE(s) || !t || g == 1) return (mt_tensor *)t;
  int nd = t->ndim;
  int64_t sh[MT_MAXDIM + 1];
  memcpy(sh, t->shape, sizeof(int64_t) * (nd - 3));
  sh[nd - 3] = t->shape[nd - 3] / g, sh[nd - 2] = g, sh[nd - 1] = t->shape[nd - 2], sh[nd] = t->shape[nd - 1];
  int dim = nd - 2;
  return mtg_d_sum(s, mtg_d_reshape(s, t, sh, nd + 1), &dim, 1, false);
}

/* 0, 1, ..., n - 1 (int64) on dev, traced as an arange. */
static mt_tensor *arange_of(mtg_scope *s, int64_t n, mt_device dev) {
  if (!LIVE(s)) return NULL;
  mt_tensor *r = NULL;
  mt_scalar a = mt_sint(0), b = mt_sint(n), c = mt_sint(1);
  mt_status st = mt_arange(a, b, c, MT_INT64, dev, &r);
  if (!st && MTG_TRACING()) mtg_trace_arange(r, a, b, c);
  return mtg_track(s, st, r);
}

/* softmax(q kk^T * scale + mask) with the causal or given mask applied. */
static mt_tensor *attn_probs(mtg_scope *s, const mt_tensor *q, const mt_tensor *kk, const mt_tensor *mask,
                             bool causal, double scale, int64_t L, int64_t S) {
  if (!LIVE(s)) return NULL;
  int nd = kk->ndim;
  mt_tensor *sc = mtg_d_scale(s, mtg_d_matmul(s, q, mtg_d_transpose(s, kk, nd - 2, nd - 1)), scale);
  if (!LIVE(s)) return NULL;
  mt_tensor *neg = mtg_d_num(s, -INFINITY, (mt_dtype)sc->dtype);
  if (causal) { /* key j <= query i, as arange(S) <= arange(L)^T: ops a trace (and the JIT) replays */
    int64_t col[2] = {L, 1}, row[2] = {1, S};
    sc = mtg_d_where(s, mtg_d_bin(s, MT_OP_le, mtg_d_reshape(s, arange_of(s, S, mt_tdevice(q)), row, 2),
                          mtg_d_reshape(s, arange_of(s, L, mt_tdevice(q)), col, 2)),
                 sc, neg);
  } else if (mask && mask->dtype == MT_BOOL) {
    sc = mtg_d_where(s, mask, sc, neg);
  } else if (mask) {
    sc = mtg_d_add(s, sc, mask);
  }
  return Da_softmax(s, sc);
}

static int64_t group_of(const mt_tensor *q, const mt_tensor *k, bool gqa) {
  return gqa ? q->shape[q->ndim - 3] / k->shape[k->ndim - 3] : 1;
}

mt_status mtg_sdpa_math(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out) {
  mt_sdpa_dims d;
  mt_status st = mt_sdpa_check(OP, q, k, v, mask, o, &d);
  if (st) return st;
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, NULL);
  int64_t g = group_of(q, k, o->enable_gqa);
  mt_tensor *p = attn_probs(s, q, gqa_repeat(s, k, g), mask, o->is_causal, d.scale, d.L, d.S);
  if (LIVE(s) && o->dropout_p > 0) { /* keep with probability 1 - p, scale by 1 / (1 - p), torch RNG */
    mt_tensor *keep = NULL;
    st = mt_empty(p->shape, p->ndim, (mt_dtype)p->dtype, mt_tdevice(p), &keep);
    if (!st) st = mt_bernoulli_(keep, 1 - o->dropout_p, NULL);
    p = mtg_d_scale(s, mtg_d_mul(s, p, mtg_track(s, st, keep)), 1 / (1 - o->dropout_p));
  }
  mt_tensor *r = mtg_keep(s, mtg_d_matmul(s, p, gqa_repeat(s, v, g)));
  st = mtg_scope_end(s, NULL, 0);
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver(OP, r, out);
}

/* ---- the fused backends' ops (flash; cuDNN: CUDA float16/bfloat16) ----
 * Rows with engine entries (tensor/call.c's layout), recorded and traced
 * by mtg_call: sdpa_flash and sdpa_cudnn (q, k, v, mask; results out and
 * lse) save q, k, v, mask (slots 0-3, the mask when given), lse (4) and
 * out (5); lse gets no gradient. Node arguments: i[0] is_causal, i[1]
 * enable_gqa, i[2] the dropout stream is set, i[3] its seed, i[4] its
 * first block; f[0] the scale, f[1] dropout_p. */
#define SLOT_LSE (MTG_SLOT_OUT - 1)

static void opts_of(const mtg_node *n, mt_sdpa_opts *o) {
  *o = (mt_sdpa_opts){.scale = n->f[0], .dropout_p = n->f[1], .is_causal = n->i[0] != 0, .enable_gqa = n->i[1] != 0,
                      .rng_set = n->i[2] != 0, .rng_seed = (uint64_t)n->i[3], .rng_base = (uint64_t)n->i[4]};
}

/* The argument words of o (tensor/call.c's layout; f[0] the scale as given). */
static mt_args args_of(const mt_sdpa_opts *o) {
  return (mt_args){.i = {o->is_causal, o->enable_gqa, o->rng_set, (int64_t)o->rng_seed, (int64_t)o->rng_base},
                   .f = {o->scale, o->dropout_p},
                   .ni = 8,
                   .nf = 2};
}

/* Dropout's keep mask of the flash forward, scaled by 1 / (1 - p), as a
 * tensor of the scores' shape: drawn again from the forward's stream (the
 * kernel keeps element e when mt_bernoulli_ would). NULL: no dropout. */
static mt_tensor *dropout_scale(mtg_scope *s, const mt_sdpa_opts *o, const mt_tensor *p) {
  if (!LIVE(s) || !(o->dropout_p > 0)) return NULL;
  mt_generator g;
  mt_generator_seed(&g, o->rng_seed);
  g.offset = o->rng_base;
  mt_tensor *keep = NULL;
  mt_status st = mt_empty(p->shape, p->ndim, (mt_dtype)p->dtype, mt_tdevice(p), &keep);
  if (!st) st = mt_bernoulli_(keep, 1 - o->dropout_p, &g);
  return mtg_d_scale(s, mtg_track(s, st, keep), 1 / (1 - o->dropout_p));
}

static mt_tensor *saved_opt(mtg_scope *s, int k) {
  if (!LIVE(s) || (!s->node->released && !s->node->saved[k].t)) return NULL;
  return mtg_d_saved(s, k);
}

/* Under create_graph: the gradients of attention written with recorded ops
 * (p recomputed from q and k), so they differentiate again. */
static void math_grads(mtg_scope *s, mtg_node *n, const mt_tensor *g, const mt_tensor *q, const mt_tensor *k,
                       const mt_tensor *v, const mt_tensor *mask, mt_tensor **gin) {
  if (!LIVE(s)) return;
  mt_sdpa_opts o;
  opts_of(n, &o);
  int nd = q->ndim, last = nd - 1;
  int64_t gq = group_of(q, k, o.enable_gqa);
  mt_tensor *kk = gqa_repeat(s, k, gq), *vv = gqa_repeat(s, v, gq);
  mt_tensor *p = attn_probs(s, q, kk, mask, o.is_causal, o.scale, q->shape[nd - 2], k->shape[nd - 2]);
  mt_tensor *drop = dropout_scale(s, &o, p), *pd = drop ? mtg_d_mul(s, p, drop) : p;
  if (mtg_needs(n, 2))
    gin[2] = mtg_d_grad_for(s, 2, gqa_reduce(s, mtg_d_matmul(s, mtg_d_transpose(s, pd, nd - 2, last), g), gq));
  if (!mtg_needs(n, 0) && !mtg_needs(n, 1)) return;
  mt_tensor *dp = mtg_d_matmul(s, g, mtg_d_transpose(s, vv, nd - 2, last));
  if (drop) dp = mtg_d_mul(s, dp, drop);
  mt_tensor *ds = mtg_d_mul(s, p, mtg_d_sub(s, dp, mtg_d_sum(s, mtg_d_mul(s, dp, p), &last, 1, true)));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_scale(s, mtg_d_matmul(s, ds, kk), o.scale));
  if (mtg_needs(n, 1))
    gin[1] = mtg_d_grad_for(
        s, 1, gqa_reduce(s, mtg_d_scale(s, mtg_d_matmul(s, mtg_d_transpose(s, ds, nd - 2, last), q), o.scale), gq));
}

static bool is_declined(void) { return strstr(mt_errmsg(), MT_SDPA_DECLINED) != NULL; }

/* The derivative of both fused forwards: their backward op (run without
 * grad), or under create_graph -- and for cuDNN when it declines the
 * backward problem -- the gradients written with recorded math ops. */
static mt_status d_fused(mt_op bop, mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *q = mtg_d_saved(s, 0), *k = mtg_d_saved(s, 1), *v = mtg_d_saved(s, 2), *mask = saved_opt(s, 3);
  bool math = mtg_grad_enabled();
  if (LIVE(s) && !math) {
    mt_tensor *out = mtg_d_saved(s, MTG_SLOT_OUT), *lse = mtg_d_saved(s, SLOT_LSE);
    mt_sdpa_opts o;
    opts_of(n, &o);
    mt_tensor *g[3] = {NULL, NULL, NULL};
    if (LIVE(s)) {
      mt_status st = mtg_sdpa_fused_backward(bop, go[0], q, k, v, mask, out, lse, &o, mtg_needs(n, 0) ? &g[0] : NULL,
                                             mtg_needs(n, 1) ? &g[1] : NULL, mtg_needs(n, 2) ? &g[2] : NULL);
      if (st && bop == MT_OP_sdpa_cudnn_backward && is_declined())
        math = true; /* the recorded math ops below, run without grad */
      else if (st)
        s->st = st;
      else
        for (int i = 0; i < 3; i++) gin[i] = g[i];
    }
  }
  if (LIVE(s) && math) math_grads(s, n, go[0], q, k, v, mask, gin);
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_sdpa_flash(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return d_fused(MT_OP_sdpa_flash_backward, n, go, gin);
}
static mt_status d_sdpa_cudnn(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return d_fused(MT_OP_sdpa_cudnn_backward, n, go, gin);
}

/* The fused backward ops have no derivative (derivatives.c): reaching one
 * in a backward pass is an error, never a silent zero. */
static mt_status no_derivative(const char *op) {
  return mt_fail(MT_EARG, "%s has no derivative: differentiate scaled_dot_product_attention itself with "
                 "create_graph=true instead of its backward op", op);
}
static mt_status d_sdpa_flash_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return no_derivative("sdpa_flash_backward");
}
static mt_status d_sdpa_cudnn_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return no_derivative("sdpa_cudnn_backward");
}

mt_status mtg_sdpa_fused(mt_op op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                         const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse) {
  const char *name = mt_ops[op].name;
  mt_sdpa_dims d;
  mt_status st = mt_sdpa_check(name, q, k, v, mask, o, &d);
  if (st) return st;
  const mt_tensor *ins[4] = {q, k, v, mask};
  bool rec = mtg_grad_enabled() && mtg_any_requires_grad(ins, 4);
  if (rec && mask && mtg_requires_grad(mask))
    return mt_fail(MT_EARG, "%s: the %s backend gives no gradient for attn_mask; use the math backend", name,
                   op == MT_OP_sdpa_cudnn ? "cuDNN" : "flash");
  mt_sdpa_opts ro = *o;
  ro.scale = d.scale; /* the derivative's math reads it */
  mt_sdpa_reserve_dropout(q, k, &ro); /* dropout's stream, kept by the node for the backward */
  mt_args a = args_of(&ro);
  a.i[5] = lse || rec || MTG_TRACING();
  mt_tensor *r[2] = {*out, NULL};
  st = mtg_call(op, ins, 4, &a, r, a.i[5] ? 2 : 1);
  if (!st && MTG_TRACING() && ro.dropout_p > 0)
    mtg_trace_refuse("%s with dropout is not replayed by the JIT (its random stream is per call)", name);
  if (st) return st;
  *out = r[0];
  if (lse) *lse = r[1];
  else mt_release(r[1]);
  return MT_OK;
}

mt_status mtg_sdpa_fused_backward(mt_op op, const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k,
                                  const mt_tensor *v, const mt_tensor *mask, const mt_tensor *out,
                                  const mt_tensor *lse, const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk,
                                  mt_tensor **dv) {
  const mt_tensor *ins[7] = {dout, q, k, v, mask, out, lse};
  mt_tensor **want[3] = {dq, dk, dv};
  mt_args a = args_of(o);
  return mtg_call_wanted(op, ins, 7, &a, 5, want, 3);
}

mt_status mtg_sdpa(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                   const mt_sdpa_opts *o, mt_tensor **out) {
  int backend = 0;
  mt_status st = mtg_sdpa_select(q, k, v, mask, o, &backend);
  if (st) return st;
  if (backend == MTG_SDPA_CUDNN) { /* when cuDNN declines, the next backend runs (said once on stderr) */
    st = mtg_sdpa_fused(MT_OP_sdpa_cudnn, q, k, v, mask, o, out, NULL);
    if (!st || !is_declined()) return st;
    static _Atomic bool told;
    if (!told) {
      told = true;
      const char *why = strstr(mt_errmsg(), MT_SDPA_DECLINED ": ");
      fprintf(stderr, "note: %s: cuDNN declined (%s); using the next backend (said once)\n", OP,
              why ? why + strlen(MT_SDPA_DECLINED ": ") : mt_errmsg());
    }
    unsigned old = mtg_sdpa_set_enabled(mtg_sdpa_enabled() & ~MTG_SDPA_CUDNN);
    st = mtg_sdpa_select(q, k, v, mask, o, &backend);
    mtg_sdpa_set_enabled(old);
    if (st) return st;
  }
  if (backend == MTG_SDPA_FLASH) return mtg_sdpa_fused(MT_OP_sdpa_flash, q, k, v, mask, o, out, NULL);
  return mtg_sdpa_math(q, k, v, mask, o, out);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_sdpa_flash] = {d_sdpa_flash, MTG_SAVE_IN(0) | MTG_SAVE_IN(1) | MTG_SAVE_IN(2) | MTG_SAVE_IN(3) | MTG_SAVE_OUT |
                                            MTG_SAVE_OUT1 | MTG_NOGRAD(1)},
    [MT_OP_sdpa_cudnn] = {d_sdpa_cudnn, MTG_SAVE_IN(0) | MTG_SAVE_IN(1) | MTG_SAVE_IN(2) | MTG_SAVE_IN(3) | MTG_SAVE_OUT |
                                            MTG_SAVE_OUT1 | MTG_NOGRAD(1)},
    [MT_OP_sdpa_flash_backward] = {d_sdpa_flash_backward, 0},
    [MT_OP_sdpa_cudnn_backward] = {d_sdpa_cudnn_backward, 0},
};

const mtg_deriv *mtg_deriv_attention(mt_op op) { return table[op].fn ? &table[op] : NULL; }
