/* attention_cuda.c -- the flash attention ops on CUDA tensors: checks what
 * the kernels take (bfloat16 / float16, head dims 64 and 128, 256 forward
 * only; float32 on the SIMT kernels, head dims 64 and 128, no mask nor
 * dropout), makes the inputs contiguous and 16-byte aligned, lays the mask's
 * per-item offsets out on the device, reserves dropout's random stream, and
 * launches cuda/flash.cu through cuda/flash.c (float32: cuda/flash_f32.cu
 * through cuda/flash_f32.c). lse is float32 here (a 16-bit lse would cost
 * the backward its accuracy). */
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cuda/flash.h"
#include "cuda/mt_cuda.h"
#include "random.h"

const char *mt_sdpa_flash_cuda_refusal(const mt_tensor *q, const mt_tensor *mask, const mt_sdpa_opts *o,
                                       const mt_sdpa_dims *d, bool backward) {
  if (!mt_cuda_flash_available(mt_tdevice(q).index))
    return "it has no kernel for this GPU (it needs compute capability 8.0 or newer)";
  if (q->dtype == MT_FLOAT32) { /* the SIMT kernels of cuda/flash_f32.cu */
    if (mask) return "float32 on the GPU takes no attn_mask (math runs it)";
    if (o->dropout_p > 0) return "float32 on the GPU has no dropout (math runs it)";
    if (d->E != d->Ev || (d->E != 64 && d->E != 128))
      return "float32 on the GPU takes head dims 64 and 128, equal for query and value";
  } else if (q->dtype != MT_BFLOAT16 && q->dtype != MT_FLOAT16) {
    return "on the GPU it runs bfloat16, float16 and float32 (float64 takes math)";
  }
  if (d->E != d->Ev || (d->E != 64 && d->E != 128 && d->E != 256))
    return "on the GPU it takes head dims 64, 128 and 256, equal for query and value";
  if (d->E == 256 && backward) return "head dim 256 has no backward on the GPU";
  if (d->L > (1 << 30) || d->S > (1 << 30)) return "the sequence is too long for the GPU kernel";
  return NULL;
}

void mt_sdpa_reserve_dropout(const mt_tensor *q, const mt_tensor *k, mt_sdpa_opts *o) {
  if (!(o->dropout_p > 0) || o->rng_set) return;
  int64_t L = q->ndim >= 2 ? q->shape[q->ndim - 2] : 1, S = k->ndim >= 2 ? k->shape[k->ndim - 2] : 1;
  int64_t nb = 1;
  for (int i = 0; i < q->ndim - 2; i++) nb *= q->shape[i];
  mt_generator *g = mt_tdevice(q).type == MT_CUDA ? mt_cuda_generator(mt_tdevice(q).index) : mt_default_generator();
  uint64_t n = (uint64_t)nb * (uint64_t)L * (uint64_t)S;
  o->rng_seed = g->seed;
  o->rng_base = mt_generator_reserve(g, (n + 3) / 4);
  o->rng_set = true;
}

/* A contiguous copy of t (or t itself) whose data is 16-byte aligned. */
static mt_status dense_aligned(const mt_tensor *t, mt_tensor **out) {
  mt_status st = mt_contiguous(t, out);
  if (st || ((uintptr_t)mt_data(*out) & 15) == 0) return st;
  mt_tensor *c = NULL;
  if (!(st = mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), &c))) st = mt_cuda_copy_(c, *out, false);
  mt_release(*out);
  *out = c;
  if (st) mt_release(c), *out = NULL;
  return st;
}

/* What both directions hold: aligned inputs, the expanded mask and its
 * device offsets, and the kernel's arguments. */
typedef struct cprep {
  mt_tensor *q, *k, *v, *mask, *moff;
  mt_cuda_flash f;
  mt_sdpa_dims d;
} cprep;

static void cprep_free(cprep *p) {
  mt_release(p->q), mt_release(p->k), mt_release(p->v), mt_release(p->mask), mt_release(p->moff);
}

static mt_status same_dev(const char *op, const mt_tensor *t, const char *name, mt_device dev) {
  if (!t || mt_same_device(mt_tdevice(t), dev)) return MT_OK;
  char a[32], b[32];
  return mt_fail(MT_EDEVICE, "%s: %s is on %s but query is on %s", op, name, mt_device_str(mt_tdevice(t), a, sizeof a),
                 mt_device_str(dev, b, sizeof b));
}

static mt_status mask_offsets(const char *op, const mt_tensor *q, const mt_tensor *mask, cprep *p) {
  int nb = q->ndim - 2;
  int64_t want[MT_MAXDIM];
  memcpy(want, q->shape, sizeof(int64_t) * nb);
  want[nb] = p->d.L, want[nb + 1] = p->d.S;
  mt_status st = mt_expand(mask, want, nb + 2, &p->mask);
  if (st) return st;
  int64_t n = p->f.nb ? p->f.nb : 1;
  mt_tensor *h = NULL;
  if ((st = mt_empty(&n, 1, MT_INT64, mt_cpu(), &h))) return st;
  int64_t *off = (int64_t *)mt_data(h);
  for (int64_t b = 0; b < n; b++) {
    int64_t o = 0, r = b;
    for (int d = nb - 1; d >= 0; d--) o += (r % want[d]) * p->mask->strides[d], r /= want[d];
    off[b] = o;
  }
  st = mt_cuda_to_device(h, mt_tdevice(q), false, &p->moff);
  mt_release(h);
  if (st) return st;
  p->f.mask_kind = mask->dtype == MT_BOOL ? 1 : 2;
  p->f.mask = mt_data(p->mask), p->f.moff = (const int64_t *)mt_data(p->moff);
  p->f.mrs = p->mask->strides[nb], p->f.mcs = p->mask->strides[nb + 1];
  (void)op;
  return MT_OK;
}

static mt_status cprepare(const char *op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                          const mt_tensor *mask, const mt_sdpa_opts *o, bool backward, cprep *p) {
  memset(p, 0, sizeof *p);
  mt_status st = mt_sdpa_check(op, q, k, v, mask, o, &p->d);
  if (st) return st;
  mt_device dev = mt_tdevice(q);
  if ((st = mt_cuda_check_device(dev, op)) || (st = same_dev(op, k, "key", dev)) ||
      (st = same_dev(op, v, "value", dev)) || (st = same_dev(op, mask, "attn_mask", dev)))
    return st;
  if (!p->d.same_batch)
    return mt_fail(MT_ESHAPE, "%s: the flash backend needs query, key and value with equal batch dims (GQA heads "
                   "aside); broadcasting ones run on the math backend", op);
  const char *why = mt_sdpa_flash_cuda_refusal(q, mask, o, &p->d, backward);
  if (why) return mt_fail(MT_EDTYPE, "%s: the flash backend cannot take these inputs: %s", op, why);
  if ((st = dense_aligned(q, &p->q)) || (st = dense_aligned(k, &p->k)) || (st = dense_aligned(v, &p->v))) {
    cprep_free(p);
    return st;
  }
  mt_cuda_flash *f = &p->f;
  f->dev = dev.index, f->dt = (mt_dtype)q->dtype;
  f->nb = 1;
  for (int i = 0; i < q->ndim - 2; i++) f->nb *= q->shape[i];
  f->hq = p->d.hq, f->group = o->enable_gqa ? p->d.hq / p->d.hk : 1;
  f->nkv = f->nb / f->group;
  f->L = p->d.L, f->S = p->d.S, f->E = p->d.E;
  f->scale = p->d.scale, f->causal = o->is_causal;
  f->q = mt_data(p->q), f->k = mt_data(p->k), f->v = mt_data(p->v);
  f->dropout_p = o->dropout_p;
  if (o->dropout_p > 0) {
    mt_sdpa_opts r = *o;
    if (backward && !r.rng_set)
      st = mt_fail(MT_EARG, "%s: dropout's random stream of the forward is missing (rng_set)", op);
    mt_sdpa_reserve_dropout(q, k, &r);
    f->seed = r.rng_seed, f->base = r.rng_base;
  }
  if (!st && mask) st = mask_offsets(op, q, mask, p);
  if (st) cprep_free(p);
  return st;
}

mt_status mt_sdpa_flash_cuda(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                             const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse) {
  const char *op = "sdpa_flash";
  cprep p;
  mt_status st = cprepare(op, q, k, v, mask, o, false, &p);
  if (st) return st;
  int64_t os[MT_MAXDIM];
  int nb = mt_sdpa_out_shape(q, &p.d, os);
  mt_tensor *r = NULL, *l = NULL;
  if (!(st = mt_empty(os, nb + 2, p.f.dt, mt_tdevice(q), &r)) &&
      !(st = mt_empty(os, nb + 1, MT_FLOAT32, mt_tdevice(q), &l))) {
    p.f.out = mt_data(r), p.f.lse = (float *)mt_data(l);
    st = p.f.dt == MT_FLOAT32 ? mt_cuda_flash_f32_fwd(&p.f) : mt_cuda_flash_fwd(&p.f);
  }
  cprep_free(&p);
  return mt_sdpa_hand_out(op, st, r, l, out, lse);
}

mt_status mt_sdpa_flash_backward_cuda(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k,
                                      const mt_tensor *v, const mt_tensor *mask, const mt_tensor *out,
                                      const mt_tensor *lse, const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk,
                                      mt_tensor **dv) {
  const char *op = "sdpa_flash_backward";
  cprep p;
  mt_status st = cprepare(op, q, k, v, mask, o, true, &p);
  if (st) return st;
  int nb = q->ndim - 2;
  char a[96], b[96];
  int64_t os[MT_MAXDIM];
  memcpy(os, q->shape, sizeof(int64_t) * nb);
  os[nb] = p.d.L, os[nb + 1] = p.d.Ev;
  const mt_tensor *chk[3] = {dout, out, lse};
  for (int i = 0; i < 3 && !st; i++) {
    int n = i == 2 ? nb + 1 : nb + 2;
    bool ok = chk[i]->ndim == n && chk[i]->dtype == (i == 2 ? MT_FLOAT32 : q->dtype) &&
              mt_same_device(mt_tdevice(chk[i]), mt_tdevice(q));
    for (int d = 0; ok && d < n; d++) ok = chk[i]->shape[d] == os[d];
    if (!ok)
      st = mt_fail(MT_ESHAPE, "%s: %s of shape %s (%s) does not fit the forward's output %s", op,
                   i == 0 ? "grad_out" : i == 1 ? "out" : "lse", mt_shape_str(chk[i]->shape, chk[i]->ndim, a, sizeof a),
                   mt_dtype_name((mt_dtype)chk[i]->dtype), mt_shape_str(os, n, b, sizeof b));
  }
  mt_tensor *gc = NULL, *oc = NULL, *lc = NULL, *D = NULL, *acc = NULL, *rq = NULL, *rk = NULL, *rv = NULL;
  mt_device dev = mt_tdevice(q);
  bool f32 = p.f.dt == MT_FLOAT32; /* its dq is its own fp32 accumulator */
  if (!st && !(st = dense_aligned(dout, &gc)) && !(st = dense_aligned(out, &oc)) && !(st = mt_contiguous(lse, &lc)) &&
      !(st = mt_empty(os, nb + 1, MT_FLOAT32, dev, &D)) &&
      (f32 || !(st = mt_empty(q->shape, q->ndim, MT_FLOAT32, dev, &acc))) &&
      !(st = mt_empty(q->shape, q->ndim, p.f.dt, dev, &rq)) && !(st = mt_empty(k->shape, k->ndim, p.f.dt, dev, &rk)) &&
      !(st = mt_empty(v->shape, v->ndim, p.f.dt, dev, &rv))) {
    mt_cuda_flash *f = &p.f;
    f->dout = mt_data(gc), f->out = mt_data(oc), f->lse = (float *)mt_data(lc);
    f->D = (float *)mt_data(D), f->dq_acc = acc ? (float *)mt_data(acc) : NULL;
    f->dq = mt_data(rq), f->dk = mt_data(rk), f->dv = mt_data(rv);
    st = f32 ? mt_cuda_flash_f32_bwd(f) : mt_cuda_flash_bwd(f);
  }
  cprep_free(&p);
  mt_release(gc), mt_release(oc), mt_release(lc), mt_release(D), mt_release(acc);
  return mt_sdpa_hand_out_grads(op, st, rq, rk, rv, dq, dk, dv);
}
