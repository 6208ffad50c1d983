/* attention.c -- scaled dot product attention in the engine: input checks
 * shared by both backends, and the flash forward and backward ops, which
 * split work into (batch item, query block) or (k/v item, key block) tasks
 * over OpenMP and run cpu/attention_kernels.c on each. No autograd here
 * (graph/attention.c records these ops and composes the math backend). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cpu/attention_kernels.h"
#include "cpu/blas.h"

#define DEFAULT_BQ 64
#define DEFAULT_BK 64

static int64_t block_q = DEFAULT_BQ, block_k = DEFAULT_BK;

void mt_sdpa_set_blocks(int64_t bq, int64_t bk) {
  block_q = bq < 1 ? DEFAULT_BQ : bq;
  block_k = bk < 1 ? DEFAULT_BK : bk;
}

void mt_sdpa_get_blocks(int64_t *bq, int64_t *bk) {
  *bq = block_q;
  *bk = block_k;
}

static int64_t dim_or(const mt_tensor *t, int back, int64_t dflt) {
  return t->ndim >= back ? t->shape[t->ndim - back] : dflt;
}

mt_status mt_sdpa_check(const char *op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                        const mt_tensor *mask, const mt_sdpa_opts *o, mt_sdpa_dims *d) {
  char a[96], b[96], c[96];
  const mt_tensor *qkv[3] = {q, k, v};
  const char *names[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; i++)
    if (qkv[i]->ndim < 2)
      return mt_fail(MT_ESHAPE, "%s: %s must have at least 2 dims (..., seq, features), got shape %s", op, names[i],
                     mt_shape_str(qkv[i]->shape, qkv[i]->ndim, a, sizeof a));
  if (!mt_is_floating((mt_dtype)q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
    return mt_fail(MT_EDTYPE, "%s: query, key and value must share one floating dtype, got %s, %s and %s", op,
                   mt_dtype_name((mt_dtype)q->dtype), mt_dtype_name((mt_dtype)k->dtype),
                   mt_dtype_name((mt_dtype)v->dtype));
  d->L = dim_or(q, 2, 1), d->E = dim_or(q, 1, 1), d->S = dim_or(k, 2, 1), d->Ev = dim_or(v, 1, 1);
  if (dim_or(k, 1, 1) != d->E)
    return mt_fail(MT_ESHAPE,
                   "%s: query and key must have the same head dim (last dim), got query %s and key %s", op,
                   mt_shape_str(q->shape, q->ndim, a, sizeof a), mt_shape_str(k->shape, k->ndim, b, sizeof b));
  if (dim_or(v, 2, 1) != d->S)
    return mt_fail(MT_ESHAPE, "%s: key and value must have the same sequence length (dim -2), got key %s and value %s",
                   op, mt_shape_str(k->shape, k->ndim, a, sizeof a), mt_shape_str(v->shape, v->ndim, b, sizeof b));
  if (!(o->dropout_p >= 0 && o->dropout_p < 1))
    return mt_fail(MT_EARG, "%s: dropout_p must be in [0, 1), got %g", op, o->dropout_p);
  if (o->is_causal && mask)
    return mt_fail(MT_EARG, "%s: pass either attn_mask or is_causal=true, not both (fold the causal mask into "
                   "attn_mask)", op);
  d->hq = dim_or(q, 3, 1), d->hk = dim_or(k, 3, 1);
  if (o->enable_gqa) {
    if (q->ndim < 3 || k->ndim < 3 || v->ndim < 3)
      return mt_fail(MT_ESHAPE, "%s: enable_gqa needs heads in dim -3 (inputs of rank 3 or more)", op);
    if (dim_or(v, 3, 1) != d->hk || d->hk < 1 || d->hq % d->hk)
      return mt_fail(MT_ESHAPE,
                     "%s: with enable_gqa, key and value need the same number of heads (dim -3), dividing the "
                     "query's: got query %s, key %s, value %s",
                     op, mt_shape_str(q->shape, q->ndim, a, sizeof a), mt_shape_str(k->shape, k->ndim, b, sizeof b),
                     mt_shape_str(v->shape, v->ndim, c, sizeof c));
  }
  /* batch dims: equal (GQA heads aside) for flash; else they must broadcast (math) */
  int nb = q->ndim - 2;
  d->same_batch = k->ndim == q->ndim && v->ndim == q->ndim;
  for (int i = 0; d->same_batch && i < nb; i++) {
    bool head = o->enable_gqa && i == nb - 1;
    d->same_batch = head ? k->shape[i] == v->shape[i] : k->shape[i] == q->shape[i] && v->shape[i] == q->shape[i];
  }
  int64_t bs[MT_MAXDIM], ks[MT_MAXDIM], vs[MT_MAXDIM];
  int nbs = 0, nk = k->ndim - 2, nv = v->ndim - 2;
  memcpy(ks, k->shape, sizeof(int64_t) * nk);
  memcpy(vs, v->shape, sizeof(int64_t) * nv);
  if (o->enable_gqa) ks[nk - 1] = vs[nv - 1] = d->hq; /* compared as if repeated */
  mt_status st = mt_broadcast_shape(op, q->shape, nb, ks, nk, bs, &nbs);
  if (!st) st = mt_broadcast_shape(op, bs, nbs, vs, nv, bs, &nbs);
  if (st)
    return mt_fail(MT_ESHAPE, "%s: the batch dims of query %s, key %s and value %s do not broadcast", op,
                   mt_shape_str(q->shape, q->ndim, a, sizeof a), mt_shape_str(k->shape, k->ndim, b, sizeof b),
                   mt_shape_str(v->shape, v->ndim, c, sizeof c));
  if (mask) {
    if (mask->dtype != MT_BOOL && mask->dtype != q->dtype)
      return mt_fail(MT_EDTYPE,
                     "%s: attn_mask must be bool (true = attend) or the query's dtype %s (added to the scores), "
                     "got %s",
                     op, mt_dtype_name((mt_dtype)q->dtype), mt_dtype_name((mt_dtype)mask->dtype));
    int64_t want[MT_MAXDIM], got[MT_MAXDIM];
    int nw = nbs + 2, ng = 0;
    memcpy(want, bs, sizeof(int64_t) * nbs);
    want[nbs] = d->L, want[nbs + 1] = d->S;
    bool ok = mask->ndim <= nw && !mt_broadcast_shape(op, mask->shape, mask->ndim, want, nw, got, &ng) && ng == nw;
    for (int i = 0; ok && i < nw; i++) ok = got[i] == want[i];
    if (!ok)
      return mt_fail(MT_ESHAPE, "%s: attn_mask of shape %s does not broadcast to the scores' shape %s (..., L, S)", op,
                     mt_shape_str(mask->shape, mask->ndim, a, sizeof a), mt_shape_str(want, nw, b, sizeof b));
  }
  d->scale = o->scale > 0 ? o->scale : 1 / sqrt((double)d->E);
  return MT_OK;
}

/* ---- the parallel drivers ---- */

typedef struct task {
  const mt_sdpa_job *j;
  int64_t nblk; /* blocks per item */
  int kind;     /* 0 forward, 1 dk/dv, 2 dq, 3 row dots */
  int failed;
} task;

static void run_tasks(void *ctx, int64_t t0, int64_t t1) {
  task *t = ctx;
  void *scratch = t->kind == 3 ? NULL : malloc(mt_cpu_sdpa_scratch(t->j));
  if (t->kind != 3 && !scratch) {
    t->failed = 1;
    return;
  }
  for (int64_t i = t0; i < t1; i++) {
    int64_t item = i / t->nblk, blk = i % t->nblk;
    switch (t->kind) {
    case 0: mt_cpu_sdpa_fwd(t->j, item, blk, scratch); break;
    case 1: mt_cpu_sdpa_bwd_kv(t->j, item, blk, scratch); break;
    case 2: mt_cpu_sdpa_bwd_q(t->j, item, blk, scratch); break;
    default: mt_cpu_sdpa_rowdot(t->j, item); break;
    }
  }
  free(scratch);
}

static mt_status run(const mt_sdpa_job *j, int kind, int64_t nitems, int64_t nblk) {
  task t = {j, nblk, kind, 0};
  mt_status st = mt_parallel_for(nitems * nblk, 1, run_tasks, &t);
  if (!st && t.failed) st = mt_fail(MT_ENOMEM, "scaled_dot_product_attention: out of memory for tile scratch");
  return st;
}

/* Everything a flash op holds: contiguous inputs and the mask's offsets. */
typedef struct prep {
  mt_tensor *q, *k, *v, *mask;
  int64_t *moff;
  mt_sdpa_job job;
  mt_sdpa_dims d;
} prep;

static void prep_free(prep *p) {
  mt_release(p->q), mt_release(p->k), mt_release(p->v), mt_release(p->mask);
  free(p->moff);
}

static mt_status prepare(const char *op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                         const mt_tensor *mask, const mt_sdpa_opts *o, prep *p) {
  memset(p, 0, sizeof *p);
  mt_status st = mt_sdpa_check(op, q, k, v, mask, o, &p->d);
  if (st) return st;
  if (!p->d.same_batch)
    return mt_fail(MT_ESHAPE, "%s: the flash backend needs query, key and value with equal batch dims (GQA heads "
                   "aside); broadcasting ones run on the math backend", op);
  if (q->dtype != MT_FLOAT32 && q->dtype != MT_FLOAT64)
    return mt_fail(MT_EDTYPE, "%s: the flash backend on the CPU runs float32 and float64, got %s (the math backend takes it)", op,
                   mt_dtype_name((mt_dtype)q->dtype));
  if (o->dropout_p > 0)
    return mt_fail(MT_EARG, "%s: the flash backend on the CPU has no dropout (dropout_p > 0 runs on the math backend)", op);
  if (mt_tdevice(q).type != MT_CPU)
    return mt_fail(MT_EDEVICE, "%s: the flash backend runs on the CPU only", op);
  if ((st = mt_contiguous(q, &p->q)) || (st = mt_contiguous(k, &p->k)) || (st = mt_contiguous(v, &p->v))) {
    prep_free(p);
    return st;
  }
  mt_sdpa_job *j = &p->job;
  int nb = q->ndim - 2;
  j->dt = (mt_dtype)q->dtype;
  j->nb = 1;
  for (int i = 0; i < nb; i++) j->nb *= q->shape[i];
  j->hq = p->d.hq, j->group = o->enable_gqa ? p->d.hq / p->d.hk : 1;
  j->L = p->d.L, j->S = p->d.S, j->E = p->d.E, j->Ev = p->d.Ev;
  j->bq = block_q, j->bk = block_k;
  j->scale = p->d.scale;
  j->causal = o->is_causal;
  j->q = mt_data(p->q), j->k = mt_data(p->k), j->v = mt_data(p->v);
  if (mask) {
    int64_t want[MT_MAXDIM];
    memcpy(want, q->shape, sizeof(int64_t) * nb);
    want[nb] = j->L, want[nb + 1] = j->S;
    if ((st = mt_expand(mask, want, nb + 2, &p->mask))) {
      prep_free(p);
      return st;
    }
    p->moff = malloc(sizeof(int64_t) * (size_t)(j->nb ? j->nb : 1));
    if (!p->moff) {
      prep_free(p);
      return mt_fail(MT_ENOMEM, "%s: out of memory", op);
    }
    for (int64_t b = 0; b < j->nb; b++) {
      int64_t off = 0, r = b;
      for (int d = nb - 1; d >= 0; d--) off += (r % want[d]) * p->mask->strides[d], r /= want[d];
      p->moff[b] = off;
    }
    j->mask_kind = mask->dtype == MT_BOOL ? MT_SDPA_BOOLMASK : MT_SDPA_ADDMASK;
    j->mask = mt_data(p->mask), j->moff = p->moff;
    j->mrs = p->mask->strides[nb], j->mcs = p->mask->strides[nb + 1];
  }
  mt_blas_load();
  return MT_OK;
}

static int64_t nblocks(int64_t n, int64_t b) { return (n + b - 1) / b; }

/* The output's sizes into os (q's batch dims, L, Ev); the batch rank. */
int mt_sdpa_out_shape(const mt_tensor *q, const mt_sdpa_dims *d, int64_t *os) {
  int nb = q->ndim - 2;
  memcpy(os, q->shape, sizeof(int64_t) * nb);
  os[nb] = d->L, os[nb + 1] = d->Ev;
  return nb;
}

/* A fused forward's results, both backends: on failure (st) r and l are
 * freed; l goes to *lse when asked (else freed), r through mt_deliver (out=). */
mt_status mt_sdpa_hand_out(const char *op, mt_status st, mt_tensor *r, mt_tensor *l, mt_tensor **out,
                           mt_tensor **lse) {
  if (st) {
    mt_release(r), mt_release(l);
    return st;
  }
  if (lse)
    *lse = l;
  else
    mt_release(l);
  return mt_deliver(op, r, out);
}

/* A fused backward's gradients: each asked-for one delivered (out=), the
 * rest (and all of them on failure) freed. */
mt_status mt_sdpa_hand_out_grads(const char *op, mt_status st, mt_tensor *rq, mt_tensor *rk, mt_tensor *rv,
                                 mt_tensor **dq, mt_tensor **dk, mt_tensor **dv) {
  if (!st && dq) st = mt_deliver(op, rq, dq), rq = NULL;
  if (!st && dk) st = mt_deliver(op, rk, dk), rk = NULL;
  if (!st && dv) st = mt_deliver(op, rv, dv), rv = NULL;
  mt_release(rq), mt_release(rk), mt_release(rv);
  return st;
}

mt_status mt_sdpa_flash(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse) {
  const char *op = "sdpa_flash";
  if (mt_tdevice(q).type == MT_CUDA) return mt_sdpa_flash_cuda(q, k, v, mask, o, out, lse);
  const mt_tensor *all[4] = {q, k, v, mask};
  for (int i = 0; i < 4; i++) /* the CPU kernel below reads host memory */
    if (all[i] && mt_tdevice(all[i]).type != MT_CPU)
      return mt_fail(MT_EDEVICE, "%s: expected all tensors on the CPU, as the query", op);
  prep p;
  mt_status st = prepare(op, q, k, v, mask, o, &p);
  if (st) return st;
  int64_t os[MT_MAXDIM];
  int nb = mt_sdpa_out_shape(q, &p.d, os);
  mt_tensor *r = NULL, *l = NULL;
  if (!(st = mt_empty(os, nb + 2, p.job.dt, mt_tdevice(q), &r)) &&
      !(st = mt_empty(os, nb + 1, p.job.dt, mt_tdevice(q), &l))) {
    p.job.out = mt_data(r), p.job.lse = mt_data(l);
    st = run(&p.job, 0, p.job.nb, nblocks(p.d.L, p.job.bq));
  }
  prep_free(&p);
  return mt_sdpa_hand_out(op, st, r, l, out, lse);
}

mt_status mt_sdpa_flash_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                 const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                 const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv) {
  const char *op = "sdpa_flash_backward";
  if (mt_tdevice(q).type == MT_CUDA)
    return mt_sdpa_flash_backward_cuda(dout, q, k, v, mask, out, lse, o, dq, dk, dv);
  prep p;
  mt_status st = prepare(op, q, k, v, mask, o, &p);
  if (st) return st;
  int nb = q->ndim - 2;
  char a[96], b[96];
  int64_t os[MT_MAXDIM];
  memcpy(os, q->shape, sizeof(int64_t) * nb);
  os[nb] = p.d.L, os[nb + 1] = p.d.Ev;
  const mt_tensor *chk[3] = {dout, out, lse};
  for (int i = 0; i < 3; i++) {
    int n = i == 2 ? nb + 1 : nb + 2;
    bool ok = chk[i]->ndim == n && chk[i]->dtype == q->dtype;
    for (int d = 0; ok && d < n; d++) ok = chk[i]->shape[d] == os[d];
    if (!ok) {
      prep_free(&p);
      return mt_fail(MT_ESHAPE, "%s: %s of shape %s (%s) does not fit the forward's output %s", op,
                     i == 0 ? "grad_out" : i == 1 ? "out" : "lse", mt_shape_str(chk[i]->shape, chk[i]->ndim, a, sizeof a),
                     mt_dtype_name((mt_dtype)chk[i]->dtype), mt_shape_str(os, n, b, sizeof b));
    }
  }
  mt_tensor *gc = NULL, *oc = NULL, *lc = NULL, *D = NULL, *rq = NULL, *rk = NULL, *rv = NULL;
  mt_device dev = mt_tdevice(q);
  if (!(st = mt_contiguous(dout, &gc)) && !(st = mt_contiguous(out, &oc)) && !(st = mt_contiguous(lse, &lc)) &&
      !(st = mt_empty(os, nb + 1, p.job.dt, dev, &D)) && !(st = mt_empty(q->shape, q->ndim, p.job.dt, dev, &rq)) &&
      !(st = mt_empty(k->shape, k->ndim, p.job.dt, dev, &rk)) &&
      !(st = mt_empty(v->shape, v->ndim, p.job.dt, dev, &rv))) {
    mt_sdpa_job *j = &p.job;
    j->dout = mt_data(gc), j->out = mt_data(oc), j->lse = mt_data(lc), j->D = mt_data(D);
    j->dq = mt_data(rq), j->dk = mt_data(rk), j->dv = mt_data(rv);
    st = run(j, 3, j->nb, 1);
    if (!st && (dk || dv)) st = run(j, 1, j->nb / j->group, nblocks(j->S, j->bk));
    if (!st && dq) st = run(j, 2, j->nb, nblocks(j->L, j->bq));
  }
  prep_free(&p);
  mt_release(gc), mt_release(oc), mt_release(lc), mt_release(D);
  return mt_sdpa_hand_out_grads(op, st, rq, rk, rv, dq, dk, dv);
}
