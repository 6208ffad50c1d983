/* attention_cudnn.c -- the cuDNN backend of scaled dot product attention
 * in the engine: which inputs it takes, and the forward and backward ops
 * on tensors around cuda/cudnn_attn.c. Operands go to cuDNN with their own
 * strides when it can read them (strided views such as q, k, v taken from
 * one qkv projection need no copies; contiguous 16-byte aligned copies
 * otherwise); the output is laid out BSHD for non-contiguous queries (as
 * PyTorch's cuDNN backend does: out:transpose(-3, -2) is then contiguous),
 * and the gradients like their inputs (dq, dk, dv in one buffer when q, k,
 * v are views of one). The mask is made an additive one of q's dtype. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "layout.h"
#include "reduce.h"
#include "cuda/cudnn_attn.h"
#include "cuda/mt_cuda.h"

/* The problem's 4-d view: (b, h, s, d) with all leading dims folded into b. */
static void view4(const mt_tensor *t, int64_t *b, int64_t *h) {
  int nd = t->ndim;
  *b = 1, *h = nd >= 3 ? t->shape[nd - 3] : 1;
  for (int i = 0; i < nd - 3; i++) *b *= t->shape[i];
}

/* The mask's dims padded to q's rank; NULL, or why it is not (b|1, h|1, L, S). */
static const char *mask_dims(const mt_tensor *q, const mt_tensor *mask, int64_t L, int64_t S, int64_t dims[4]) {
  int nd = q->ndim, off = nd - mask->ndim;
  if (off < 0) return "the mask has more dims than the query";
  int64_t m[MT_MAXDIM];
  for (int i = 0; i < nd; i++) m[i] = i < off ? 1 : mask->shape[i - off];
  if (m[nd - 2] != L || m[nd - 1] != S) return "the mask broadcasts along L or S (needs its full L x S)";
  bool all = true, none = true;
  for (int i = 0; i < nd - 3; i++) all = all && m[i] == q->shape[i], none = none && m[i] == 1;
  if (!all && !none) return "the mask broadcasts over part of the batch dims";
  int64_t b, h;
  view4(q, &b, &h);
  int64_t mh = nd >= 3 ? m[nd - 3] : 1;
  if (mh != 1 && mh != h) return "the mask's head dim is neither 1 nor the query's";
  dims[0] = none ? 1 : b, dims[1] = mh, dims[2] = L, dims[3] = S;
  return NULL;
}

const char *mt_sdpa_cudnn_refusal(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                  const mt_sdpa_opts *o, const mt_sdpa_dims *d, bool grad, char *buf, size_t n) {
  if (mt_tdevice(q).type != MT_CUDA) return "it runs on CUDA only";
  if (q->dtype != MT_FLOAT16 && q->dtype != MT_BFLOAT16) {
    snprintf(buf, n, "it runs float16 and bfloat16 only (got %s)", mt_dtype_name((mt_dtype)q->dtype));
    return buf;
  }
  if (o->dropout_p > 0) return "it has no dropout (dropout_p > 0)";
  if (!d->same_batch) return "query, key and value batch dims differ (broadcasting)";
  if (d->L == 0 || d->S == 0 || d->E == 0 || d->Ev == 0) return "an input is empty";
  if (d->Ev != d->E) {
    snprintf(buf, n, "value head dim %lld differs from the query's %lld", (long long)d->Ev, (long long)d->E);
    return buf;
  }
  if (d->E != 64 && d->E != 128 && (d->E != 256 || grad)) {
    snprintf(buf, n, "head dim %lld unsupported (64 and 128; 256 without grad)", (long long)d->E);
    return buf;
  }
  if (mask && mask->dtype != MT_BOOL && mask->dtype != q->dtype) return "the mask's dtype is not the query's";
  int64_t dims[4];
  const char *why = mask ? mask_dims(q, mask, d->L, d->S, dims) : NULL;
  if (why) return why;
  int64_t b, h, bk, hk;
  view4(q, &b, &h), view4(k, &bk, &hk);
  if (b * h * d->L > INT32_MAX || b * hk * d->S > INT32_MAX) return "sizes beyond 32 bits";
  (void)v;
  return mt_cudnn_attn_unavailable(mt_tdevice(q).index);
}

/* The strides of t as the problem's (b, h, s, d) when cuDNN can address it
 * in place: leading dims fold into b, the last dim is dense, the other
 * strides are positive multiples of 8 elements, nothing overlaps, the data
 * is 16-byte aligned. Size-1 dims get the extent as stride. */
static bool strides4(const mt_tensor *t, int64_t s[4]) {
  int nd = t->ndim;
  if (nd < 1 || ((uintptr_t)mt_data(t) & 15)) return false;
  int64_t bs = 0, bn = 1;
  for (int i = nd - 4; i >= 0; i--) { /* fold the leading dims */
    if (t->shape[i] == 1) continue;
    if (bn > 1 && t->strides[i] != bs * bn) return false;
    if (bn == 1) bs = t->strides[i];
    bn *= t->shape[i];
  }
  int64_t dims[4] = {bn, nd >= 3 ? t->shape[nd - 3] : 1, nd >= 2 ? t->shape[nd - 2] : 1, t->shape[nd - 1]};
  s[0] = bs, s[1] = nd >= 3 ? t->strides[nd - 3] : 0, s[2] = nd >= 2 ? t->strides[nd - 2] : 0, s[3] = t->strides[nd - 1];
  if (dims[3] > 1 && s[3] != 1) return false;
  s[3] = 1;
  int64_t extent = 1;
  for (int i = 0; i < 4; i++)
    if (dims[i] > 1) extent += (dims[i] - 1) * s[i];
  for (int i = 0; i < 3; i++) {
    if (dims[i] == 1) s[i] = (extent + 7) / 8 * 8;
    if (s[i] <= 0 || s[i] % 8) return false;
  }
  /* no overlap: each of b, h, s (by stride) beyond the reach of the smaller ones */
  int o[3] = {0, 1, 2};
  for (int i = 1; i < 3; i++)
    for (int j = i; j > 0 && s[o[j - 1]] > s[o[j]]; j--) { int x = o[j]; o[j] = o[j - 1], o[j - 1] = x; }
  int64_t reach = dims[3] - 1;
  for (int j = 0; j < 3; j++) {
    if (dims[o[j]] == 1) continue;
    if (s[o[j]] <= reach) return false;
    reach += (dims[o[j]] - 1) * s[o[j]];
  }
  return true;
}

/* t contiguous and 16-byte aligned (a new reference or a copy). */
static mt_status prep(const mt_tensor *t, mt_tensor **out) {
  mt_status st = mt_contiguous(t, out);
  if (!st && ((uintptr_t)mt_data(*out) & 15)) {
    mt_tensor *c = NULL;
    st = mt_clone(*out, &c);
    mt_release(*out);
    *out = c;
  }
  return st;
}

/* t as cuDNN reads it: itself with its strides in s (strides4), else (or
 * when plain) a contiguous aligned copy (s zeroed: contiguous). */
static mt_status operand(const mt_tensor *t, bool plain, int64_t s[4], mt_tensor **out) {
  if (!plain && !mt_is_contiguous(t) && strides4(t, s)) {
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  memset(s, 0, 4 * sizeof *s);
  return prep(t, out);
}

/* Where cuDNN writes tensor *t (a new one): its strides into s; a
 * contiguous tensor replaces *t when cuDNN cannot take them, or when plain. */
static mt_status result_layout(mt_tensor **t, bool plain, int64_t s[4]) {
  if (mt_is_contiguous(*t) || (!plain && strides4(*t, s))) {
    if (mt_is_contiguous(*t)) memset(s, 0, 4 * sizeof *s);
    return MT_OK;
  }
  mt_tensor *c = NULL;
  mt_status st = mt_empty((*t)->shape, (*t)->ndim, (mt_dtype)(*t)->dtype, mt_tdevice(*t), &c);
  mt_release(*t);
  *t = c;
  memset(s, 0, 4 * sizeof *s);
  return st;
}

/* The forward's output for q: contiguous for a contiguous q, else laid out
 * (..., L, H, E) and seen as (..., H, L, E) (BSHD). */
static mt_status new_out(const mt_tensor *q, mt_tensor **out) {
  int nd = q->ndim;
  if (nd < 3 || mt_is_contiguous(q)) return mt_empty(q->shape, nd, (mt_dtype)q->dtype, mt_tdevice(q), out);
  int64_t sh[MT_MAXDIM];
  memcpy(sh, q->shape, sizeof(int64_t) * nd);
  sh[nd - 3] = q->shape[nd - 2], sh[nd - 2] = q->shape[nd - 3];
  mt_tensor *b = NULL;
  mt_status st = mt_empty(sh, nd, (mt_dtype)q->dtype, mt_tdevice(q), &b);
  if (!st) {
    int64_t str[MT_MAXDIM];
    memcpy(str, b->strides, sizeof(int64_t) * nd);
    str[nd - 3] = b->strides[nd - 2], str[nd - 2] = b->strides[nd - 3];
    st = mt_as_strided(b, nd, q->shape, str, b->offset, out);
    if (!st) mt_release((*out)->base), (*out)->base = NULL;
  }
  mt_release(b);
  return st;
}

/* The problem of q, k and the options; the additive mask (NULL: none) is
 * made in *bias. */
static mt_status problem(const mt_tensor *q, const mt_tensor *k, const mt_tensor *mask, const mt_sdpa_opts *o,
                         const mt_sdpa_dims *d, mt_cudnn_attn *p, mt_tensor **bias) {
  memset(p, 0, sizeof *p);
  p->dev = mt_tdevice(q).index, p->dt = (mt_dtype)q->dtype;
  int64_t bk;
  view4(q, &p->b, &p->hq), view4(k, &bk, &p->hk);
  p->sq = d->L, p->skv = d->S, p->d = d->E, p->causal = o->is_causal, p->scale = (float)d->scale;
  *bias = NULL;
  if (!mask) return MT_OK;
  mask_dims(q, mask, d->L, d->S, p->bias_dims);
  mt_status st = MT_OK;
  mt_tensor *add = NULL;
  if (mask->dtype == MT_BOOL) { /* true = attend: 0 there, -inf elsewhere */
    int64_t one = 1;
    mt_tensor *z = NULL, *ninf = NULL;
    st = mt_zeros(&one, 1, (mt_dtype)q->dtype, mt_tdevice(q), &z);
    if (!st) st = mt_full(&one, 1, mt_sfloat(-INFINITY), (mt_dtype)q->dtype, mt_tdevice(q), &ninf);
    if (!st) st = mt_where(mask, z, ninf, &add);
    mt_release(z), mt_release(ninf);
  }
  if (!st) st = prep(add ? add : mask, bias);
  mt_release(add);
  if (st) return st;
  p->bias = mt_data(*bias);
  int64_t *s = p->bias_str, *dm = p->bias_dims;
  s[3] = 1, s[2] = dm[3], s[1] = dm[2] * dm[3], s[0] = dm[1] * dm[2] * dm[3];
  return MT_OK;
}

/* Rows of the mask that attend to no key give NaN in out, as softmax of a
 * row of -inf does in the math and flash backends; cuDNN's engines give
 * other values there. Replaces *out (the lse cuDNN saved is kept for its
 * backward). */
static mt_status nan_masked_rows(const mt_tensor *mask, mt_tensor **out) {
  int last = mask->ndim - 1;
  int64_t one = 1;
  mt_tensor *open = NULL, *seen = NULL, *nan = NULL, *ninf = NULL, *o2 = NULL;
  mt_status st = MT_OK;
  if (mask->dtype == MT_BOOL) {
    open = mt_retain((mt_tensor *)mask);
  } else if (!(st = mt_full(&one, 1, mt_sfloat(-INFINITY), (mt_dtype)mask->dtype, mt_tdevice(mask), &ninf))) {
    st = mt_binary(MT_OP_gt, mask, ninf, &open);
  }
  if (!st) st = mt_any(open, &last, 1, true, &seen); /* (..., L, 1): the row attends somewhere */
  if (!st) st = mt_full(&one, 1, mt_sfloat(NAN), (mt_dtype)(*out)->dtype, mt_tdevice(*out), &nan);
  if (!st) st = mt_where(seen, *out, nan, &o2);
  mt_release(open), mt_release(seen), mt_release(nan), mt_release(ninf);
  if (st) return st;
  mt_release(*out), *out = o2;
  return MT_OK;
}

/* One try of the forward into new *r, *l: operands in place where cuDNN
 * takes their strides, or (plain) all as contiguous copies. */
static mt_status fwd_try(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                         const mt_sdpa_opts *o, const mt_sdpa_dims *d, bool plain, mt_tensor **r, mt_tensor **l,
                         char *why, size_t nwhy) {
  mt_cudnn_attn p;
  mt_tensor *qc = NULL, *kc = NULL, *vc = NULL, *bias = NULL;
  mt_status st = problem(q, k, mask, o, d, &p, &bias);
  if (!st) st = operand(q, plain, p.str[MT_CA_Q], &qc);
  if (!st) st = operand(k, plain, p.str[MT_CA_K], &kc);
  if (!st) st = operand(v, plain, p.str[MT_CA_V], &vc);
  if (!st) st = plain ? mt_empty(q->shape, q->ndim, (mt_dtype)q->dtype, mt_tdevice(q), r) : new_out(q, r);
  if (!st) st = result_layout(r, plain, p.str[MT_CA_O]);
  if (!st) st = mt_empty(q->shape, q->ndim - 1, MT_FLOAT32, mt_tdevice(q), l);
  if (!st) st = mt_cudnn_attn_fwd(&p, mt_data(qc), mt_data(kc), mt_data(vc), mt_data(*r), (float *)mt_data(*l), why, nwhy);
  mt_release(qc), mt_release(kc), mt_release(vc), mt_release(bias);
  if (st || why[0]) mt_release(*r), mt_release(*l), *r = *l = NULL;
  return st;
}

mt_status mt_sdpa_cudnn(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse, char *why, size_t nwhy) {
  static const char *OP = "sdpa_cudnn";
  mt_sdpa_dims d;
  mt_status st = mt_sdpa_check(OP, q, k, v, mask, o, &d);
  if (st) return st;
  char buf[160];
  const char *no = mt_sdpa_cudnn_refusal(q, k, v, mask, o, &d, false, buf, sizeof buf);
  if (no) return mt_fail(MT_EARG, "%s: the cuDNN backend cannot take these inputs: %s", OP, no);
  if ((st = mt_cuda_check_device(mt_tdevice(q), OP))) return st;
  mt_tensor *r = NULL, *l = NULL;
  why[0] = 0;
  st = fwd_try(q, k, v, mask, o, &d, false, &r, &l, why, nwhy);
  if (!st && why[0]) /* no engine for these strides: contiguous copies (plans cached either way) */
    why[0] = 0, st = fwd_try(q, k, v, mask, o, &d, true, &r, &l, why, nwhy);
  if (!st && !why[0] && mask) st = nan_masked_rows(mask, &r);
  if (st || why[0]) {
    mt_release(r), mt_release(l);
    return st;
  }
  if ((st = mt_deliver(OP, r, out))) {
    mt_release(l);
    return st;
  }
  if (lse) *lse = l;
  else mt_release(l);
  return MT_OK;
}

/* dQ_acc (float32, dense) in the order of dq's strides sq (zeros:
 * contiguous, and so is the accumulator). */
static void acc_strides(const int64_t sq[4], mt_cudnn_attn *p) {
  int64_t *a = p->str[MT_CA_DQACC], dims[4] = {p->b, p->hq, p->sq, p->d};
  memset(a, 0, 4 * sizeof *a);
  if (!(sq[0] || sq[1] || sq[2] || sq[3])) return;
  int o[4] = {0, 1, 2, 3}; /* dims by dq's stride, largest first (ties keep their order) */
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && sq[o[j - 1]] < sq[o[j]]; j--) { int x = o[j]; o[j] = o[j - 1], o[j - 1] = x; }
  int64_t st = 1;
  for (int j = 3; j >= 0; j--) a[o[j]] = st, st *= dims[o[j]];
}

/* One try of the backward into new g[0..3): as fwd_try. The gradients are
 * laid out like q, k, v (one buffer when those are views of one), unless
 * plain. */
static mt_status bwd_try(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                         const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse, const mt_sdpa_opts *o,
                         const mt_sdpa_dims *d, bool plain, mt_tensor **g, char *why, size_t nwhy) {
  mt_cudnn_attn p;
  mt_tensor *t[6] = {NULL}, *bias = NULL, *ssum = NULL, *acc = NULL;
  const mt_tensor *in[6] = {q, k, v, out, dout, lse};
  int slot[5] = {MT_CA_Q, MT_CA_K, MT_CA_V, MT_CA_O, MT_CA_DO};
  mt_status st = problem(q, k, mask, o, d, &p, &bias);
  for (int i = 0; i < 5 && !st; i++) st = operand(in[i], plain, p.str[slot[i]], &t[i]);
  if (!st) st = prep(lse, &t[5]);
  const mt_tensor *like[3] = {q, k, v};
  if (!st && plain)
    for (int i = 0; i < 3 && !st; i++) st = mt_empty(like[i]->shape, like[i]->ndim, (mt_dtype)q->dtype, mt_tdevice(q), &g[i]);
  else if (!st) st = mt_empty_pieces_like(like, 3, mt_tdevice(q), g);
  for (int i = 0; i < 3 && !st; i++) st = result_layout(&g[i], plain, p.str[MT_CA_DQ + i]);
  int64_t ns = p.b * p.hq * p.sq, na = ns * p.d;
  if (!st) st = mt_empty(&ns, 1, MT_FLOAT32, mt_tdevice(q), &ssum);
  /* cuDNN zeroes dQ_acc itself from 9.6 on; before, its caller must */
  if (!st) st = (mt_cudnn_stats().version >= 90600 ? mt_empty : mt_zeros)(&na, 1, MT_FLOAT32, mt_tdevice(q), &acc);
  if (!st) acc_strides(p.str[MT_CA_DQ], &p);
  if (!st)
    st = mt_cudnn_attn_bwd(&p, mt_data(t[0]), mt_data(t[1]), mt_data(t[2]), mt_data(t[3]), mt_data(t[4]),
                           (const float *)mt_data(t[5]), mt_data(g[0]), mt_data(g[1]), mt_data(g[2]),
                           (float *)mt_data(ssum), (float *)mt_data(acc), why, nwhy);
  for (int i = 0; i < 6; i++) mt_release(t[i]);
  mt_release(bias), mt_release(ssum), mt_release(acc);
  if (st || why[0])
    for (int i = 0; i < 3; i++) mt_release(g[i]), g[i] = NULL;
  return st;
}

mt_status mt_sdpa_cudnn_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                 const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                 const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv, char *why,
                                 size_t nwhy) {
  static const char *OP = "sdpa_cudnn_backward";
  mt_sdpa_dims d;
  mt_status st = mt_sdpa_check(OP, q, k, v, mask, o, &d);
  if (st) return st;
  char buf[160];
  const char *no = mt_sdpa_cudnn_refusal(q, k, v, mask, o, &d, true, buf, sizeof buf);
  if (no) return mt_fail(MT_EARG, "%s: the cuDNN backend cannot take these inputs: %s", OP, no);
  if (dout->ndim != q->ndim || memcmp(dout->shape, q->shape, sizeof(int64_t) * q->ndim) || dout->dtype != q->dtype ||
      out->dtype != q->dtype || lse->dtype != MT_FLOAT32 || mt_tdevice(dout).type != MT_CUDA)
    return mt_fail(MT_ESHAPE, "%s: grad_out and out must match the query (shape, dtype, device) and lse be float32",
                   OP);
  if ((st = mt_cuda_check_device(mt_tdevice(q), OP))) return st;
  mt_tensor *g[3] = {NULL};
  why[0] = 0;
  st = bwd_try(dout, q, k, v, mask, out, lse, o, &d, false, g, why, nwhy);
  if (!st && why[0]) /* no engine for these strides: contiguous copies */
    why[0] = 0, st = bwd_try(dout, q, k, v, mask, out, lse, o, &d, true, g, why, nwhy);
  mt_tensor **want[3] = {dq, dk, dv};
  for (int i = 0; i < 3; i++) {
    if (!st && !why[0] && want[i]) *want[i] = g[i];
    else mt_release(g[i]);
  }
  return st;
}
