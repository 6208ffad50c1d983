/* reduce.c -- reductions over a set of dims: sum, prod, mean, amax, amin,
 * all, any, max/min/argmax/argmin. x's dims split into kept and reduced
 * groups, and one of three layouts runs: rows (reduced elements contiguous;
 * long rows cut in chunks run in parallel), columns (innermost kept dim
 * contiguous), or a contiguous copy with the reduced dims last, then rows. */
#include "cplx.h"
#include <stdlib.h>
#include <string.h>

#include "cpu/reduce_kernels.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"

#define CHUNK (1 << 16) /* elements per task when a long row is split */
#define GRAIN (1 << 15) /* at least this many elements of work per task */
#define COL_BLOCK 256   /* outputs accumulated together in column layout */

typedef struct plan {
  const char *base; /* x's first element */
  size_t es;
  int nk, nr; /* kept and reduced dims after merging, outermost first */
  int64_t ksize[MT_MAXDIM], kstride[MT_MAXDIM];
  int64_t rsize[MT_MAXDIM], rstride[MT_MAXDIM];
  int64_t nout, nred; /* outputs, reduced elements per output */
} plan;


/* order_free: the reduced dims may be visited in any order (all but the arg
 * kinds), so they are sorted by stride to merge as many as possible. */
static void make_plan(const mt_tensor *x, uint32_t mask, bool order_free, plan *p) {
  int rd[MT_MAXDIM], nrd = 0;
  p->base = mt_data(x);
  p->es = mt_elsize(x);
  p->nk = p->nr = 0;
  p->nout = p->nred = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (mask & (1u << d)) {
      p->nred *= x->shape[d];
      if (x->shape[d] != 1) rd[nrd++] = d;
    } else {
      p->nout *= x->shape[d];
      if (x->shape[d] != 1) mt_push_dim(p->ksize, p->kstride, &p->nk, x->shape[d], x->strides[d]);
    }
  }
  if (order_free)
    for (int i = 1; i < nrd; i++)
      for (int j = i; j > 0 && x->strides[rd[j - 1]] < x->strides[rd[j]]; j--) {
        int t = rd[j];
        rd[j] = rd[j - 1];
        rd[j - 1] = t;
      }
  for (int i = 0; i < nrd; i++) mt_push_dim(p->rsize, p->rstride, &p->nr, x->shape[rd[i]], x->strides[rd[i]]);
}

/* Element offset of output o, counting only the first `upto` kept dims. */
static int64_t kept_offset(const plan *p, int64_t o, int upto) {
  int64_t off = 0;
  for (int d = upto - 1; d >= 0; d--) {
    off += (o % p->ksize[d]) * p->kstride[d];
    o /= p->ksize[d];
  }
  return off;
}

typedef struct job {
  const plan *p;
  const mt_rkernel *k;
  char *vals;    /* one 8-byte slot (double or int64) per output */
  int64_t *idx;  /* arg kinds: one index per output, else NULL */
  mt_racc *part; /* split rows: one partial per chunk */
  int64_t cpr;   /* split rows: chunks per row */
  int64_t kb;    /* columns: outputs per block */
  int64_t nkb;   /* columns: blocks per outer output */
} job;

/* indices leave 1-based */
static void store(const job *j, int64_t o, const mt_racc *a) {
  memcpy(j->vals + o * 8, &a->v, 8);
  if (j->idx) j->idx[o] = a->idx + 1;
}

static void rows_task(void *ctx, int64_t b, int64_t e) {
  const job *j = ctx;
  const plan *p = j->p;
  for (int64_t o = b; o < e; o++) {
    mt_racc a = j->k->identity;
    j->k->row(p->base + kept_offset(p, o, p->nk) * (int64_t)p->es, p->nred, &a);
    store(j, o, &a);
  }
}

static void chunks_task(void *ctx, int64_t b, int64_t e) {
  const job *j = ctx;
  const plan *p = j->p;
  for (int64_t t = b; t < e; t++) {
    int64_t o = t / j->cpr, start = (t % j->cpr) * CHUNK;
    int64_t len = p->nred - start < CHUNK ? p->nred - start : CHUNK;
    mt_racc a = j->k->identity;
    j->k->row(p->base + (kept_offset(p, o, p->nk) + start) * (int64_t)p->es, len, &a);
    if (a.idx >= 0) a.idx += start;
    j->part[t] = a;
  }
}

/* Column layout: a block of kb outputs along the innermost kept dim starts at
 * the identity and takes one kernel call per reduced element. */
static void cols_task(void *ctx, int64_t b, int64_t e) {
  const job *j = ctx;
  const plan *p = j->p;
  int64_t K = p->ksize[p->nk - 1];
  for (int64_t t = b; t < e; t++) {
    int64_t o = t / j->nkb, jb = (t % j->nkb) * j->kb;
    int64_t n = K - jb < j->kb ? K - jb : j->kb;
    char *acc = j->vals + (o * K + jb) * 8;
    for (int64_t i = 0; i < n; i++) memcpy(acc + i * 8, &j->k->identity.v, 8);
    const char *src = p->base + (kept_offset(p, o, p->nk - 1) + jb) * (int64_t)p->es;
    int64_t ri[MT_MAXDIM] = {0}, roff = 0;
    for (int64_t r = 0; r < p->nred; r++) {
      j->k->col(acc, src + roff * (int64_t)p->es, n);
      for (int d = p->nr - 1; d >= 0; d--) {
        roff += p->rstride[d];
        if (++ri[d] < p->rsize[d]) break;
        roff -= p->rsize[d] * p->rstride[d];
        ri[d] = 0;
      }
    }
  }
}

static mt_status run_rows(job *j) {
  const plan *p = j->p;
  if (p->nred >= 4 * CHUNK && p->nout < 64) {
    j->cpr = (p->nred + CHUNK - 1) / CHUNK;
    int64_t ntask = p->nout * j->cpr;
    j->part = malloc((size_t)ntask * sizeof *j->part);
    if (!j->part) return mt_fail(MT_ENOMEM, "out of memory");
    mt_status st = mt_parallel_for(ntask, 1, chunks_task, j);
    for (int64_t o = 0; !st && o < p->nout; o++) {
      mt_racc a = j->part[o * j->cpr];
      for (int64_t c = 1; c < j->cpr; c++) j->k->combine(&a, &j->part[o * j->cpr + c]);
      store(j, o, &a);
    }
    free(j->part);
    return st;
  }
  int64_t grain = GRAIN / (p->nred > 0 ? p->nred : 1);
  return mt_parallel_for(p->nout, grain > 0 ? grain : 1, rows_task, j);
}

/* Reduces x over mask with kernel k: vals (8-byte slots) and idx (or NULL)
 * receive one entry per output, in row-major order of the kept dims. */
static mt_status run_reduce(const mt_tensor *x, uint32_t mask, const mt_rkernel *k, bool order_free, char *vals,
                            int64_t *idx) {
  plan p;
  make_plan(x, mask, order_free, &p);
  if (p.nout == 0) return MT_OK;
  job j = {&p, k, vals, idx, NULL, 0, 0, 0};
  if (p.nr == 0 || (p.nr == 1 && p.rstride[0] == 1)) return run_rows(&j);
  if (k->col && p.nk > 0 && p.kstride[p.nk - 1] == 1 && p.ksize[p.nk - 1] >= 16) {
    int64_t K = p.ksize[p.nk - 1];
    j.kb = K < COL_BLOCK ? K : COL_BLOCK;
    j.nkb = (K + j.kb - 1) / j.kb;
    int64_t work = p.nred * j.kb, grain = work > 0 ? GRAIN / work : GRAIN;
    return mt_parallel_for(p.nout / K * j.nkb, grain > 0 ? grain : 1, cols_task, &j);
  }
  /* any other layout: copy with the kept dims first, the reduced ones last */
  int64_t sh[MT_MAXDIM], str[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < p.nk; i++) sh[n] = p.ksize[i], str[n++] = p.kstride[i];
  for (int i = 0; i < p.nr; i++) sh[n] = p.rsize[i], str[n++] = p.rstride[i];
  mt_tensor *v = NULL, *c = NULL;
  mt_status st = mt_as_strided(x, n, sh, str, x->offset, &v);
  if (!st) st = mt_contiguous(v, &c);
  if (!st) st = run_reduce(c, ((1u << n) - 1) & ~((1u << p.nk) - 1), k, order_free, vals, idx);
  mt_release(v);
  mt_release(c);
  return st;
}

static bool is_arg(mt_rkind kind) { return kind == MT_R_ARGMAX || kind == MT_R_ARGMIN; }

/* The max-like kinds have no value for an empty reduction. */
static mt_status check_nonempty(const char *op, const mt_tensor *x, uint32_t mask, int ndims) {
  if (ndims == 0 && mt_numel(x) == 0 && x->ndim > 0)
    return mt_fail(MT_ESHAPE, "%s: the input is empty; give a dim to reduce over", op);
  for (int d = 0; d < x->ndim; d++)
    if ((mask & (1u << d)) && x->shape[d] == 0)
      return mt_fail(MT_ESHAPE, "%s: cannot reduce dimension %d of size 0 (there is no identity value)", op, d + 1);
  return MT_OK;
}

/* The common path of the primitives: reduces x over dims with kernel kind,
 * divides by the count for a mean, converts the values to outdt and gives
 * them to *values (if values is not NULL) and the positions to *indices
 * (arg kinds). */
static mt_status reduce_op(const char *op, mt_rkind kind, const mt_tensor *x, const int *dims, int ndims, bool keepdim,
                           mt_dtype outdt, bool mean, mt_tensor **values, mt_tensor **indices) {
  uint32_t mask;
  mt_status st = mt_dims_mask(op, dims, ndims, x->ndim, &mask);
  if (st) return st;
  if (kind != MT_R_SUM && kind != MT_R_PROD && (st = check_nonempty(op, x, mask, ndims))) return st;
  mt_tensor *xin = NULL, *acc = NULL, *idx = NULL, *r = NULL, *v = NULL;
  bool cuda = mt_tdevice(x).type == MT_CUDA; /* its kernels read half types as they are */
  if (cuda)
    xin = mt_retain((mt_tensor *)x);
  else if ((st = mt_upcast_half(x, &xin)))
    return st;
  bool half = xin->dtype == MT_FLOAT16 || xin->dtype == MT_BFLOAT16;
  const mt_rkernel *k = mt_cpu_reduce_kernel(kind, half ? MT_FLOAT32 : (mt_dtype)xin->dtype);
  int64_t kshape[MT_MAXDIM], fshape[MT_MAXDIM];
  int kn = mt_reduced_shape(x, mask, true, kshape), fn = mt_reduced_shape(x, mask, keepdim, fshape);
  if (!k) st = mt_fail(MT_EDTYPE, "%s: not supported for %s tensors", op, mt_dtype_name((mt_dtype)x->dtype));
  if (!st) st = mt_empty(kshape, kn, k->is_float ? MT_FLOAT64 : MT_INT64, mt_tdevice(x), &acc);
  if (!st && is_arg(kind)) st = mt_empty(kshape, kn, MT_INT64, mt_tdevice(x), &idx);
  double n = (double)(mt_numel(x) / (mt_numel(acc) > 0 ? mt_numel(acc) : 1));
  if (mt_numel(x) == 0) n = 0;
  if (!st && cuda) {
    st = mt_cuda_reduce(kind, xin, mask, mean ? n : 1, acc, idx);
    mean = false;
  } else if (!st) {
    st = run_reduce(xin, mask, k, !is_arg(kind), mt_data(acc), idx ? (int64_t *)(void *)mt_data(idx) : NULL);
  }
  if (!st && mean) {
    double *a = (double *)(void *)mt_data(acc);
    for (int64_t i = 0, m = mt_numel(acc); i < m; i++) a[i] /= n;
  }
  bool fresh = values && !*values;
  if (!st && values) {
    if (!(st = mt_to_dtype(acc, outdt, false, &v)) && !(st = mt_reshape_new(v, fshape, fn, &r)))
      st = mt_deliver(op, r, values), r = NULL;
  }
  if (!st && idx) {
    if (!(st = mt_reshape_new(idx, fshape, fn, &r))) st = mt_deliver(op, r, indices), r = NULL;
    if (st && fresh) { /* do not hand out half a result */
      mt_release(*values);
      *values = NULL;
    }
  }
  mt_release(r);
  mt_release(v);
  mt_release(idx);
  mt_release(acc);
  mt_release(xin);
  return st;
}

/* x cast to dtype (if >= 0), a new reference. */
static mt_status cast_arg(const mt_tensor *x, int dtype, mt_tensor **out) {
  return mt_to_dtype(x, dtype >= 0 ? (mt_dtype)dtype : (mt_dtype)x->dtype, false, out);
}

/* sum or mean of complex xc: the same reduction of its [..., 2] pairs
 * (every dim but the pairs' when dims are not given), seen as complex. */
static mt_status complex_sum(const char *op, const mt_tensor *xc, const int *dims, int ndims, bool keepdim, bool mean,
                             mt_tensor **out) {
  int all[MT_MAXDIM];
  if (ndims == 0) {
    if (xc->ndim == 0) return mt_deliver(op, mt_retain((mt_tensor *)xc), out);
    for (int i = 0; i < xc->ndim; i++) all[i] = i;
    dims = all, ndims = xc->ndim;
  }
  int wrapped[MT_MAXDIM];
  mt_status st = MT_OK;
  for (int i = 0; i < ndims && !st; i++) st = mt_wrap_dim(op, dims[i], xc->ndim, &wrapped[i]);
  mt_tensor *p = NULL, *r = NULL, *c = NULL;
  mt_dtype part = mt_complex_part((mt_dtype)xc->dtype);
  if (!st) st = mt_complex_pairs(xc, &p);
  if (!st) st = reduce_op(op, MT_R_SUM, p, wrapped, ndims, keepdim, part, mean, &r, NULL);
  if (!st) st = mt_contiguous(r, &c);
  mt_tensor *v = NULL;
  if (!st) st = mt_view_as_complex(c, &v);
  mt_release(p), mt_release(r), mt_release(c);
  if (!st) {
    mt_release(v->base); /* a result of its own, not a view for autograd */
    v->base = NULL;
    return mt_deliver(op, v, out);
  }
  return st;
}

static mt_status sum_like(const char *op, mt_rkind kind, const mt_tensor *x, const int *dims, int ndims, bool keepdim,
                          int dtype, mt_tensor **out) {
  mt_tensor *xc = NULL;
  mt_status st = cast_arg(x, dtype, &xc);
  if (st) return st;
  if (mt_is_complex((mt_dtype)xc->dtype)) {
    st = kind == MT_R_SUM ? complex_sum(op, xc, dims, ndims, keepdim, false, out)
                          : mt_fail(MT_EDTYPE, "%s: %s tensors are not supported", op, mt_dtype_name((mt_dtype)xc->dtype));
    mt_release(xc);
    return st;
  }
  mt_dtype outdt = mt_is_floating((mt_dtype)xc->dtype) || dtype >= 0 ? (mt_dtype)xc->dtype : MT_INT64;
  st = reduce_op(op, kind, xc, dims, ndims, keepdim, outdt, false, out, NULL);
  mt_release(xc);
  return st;
}

mt_status mt_sum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  return sum_like("sum", MT_R_SUM, x, dims, ndims, keepdim, dtype, out);
}

mt_status mt_prod(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  return sum_like("prod", MT_R_PROD, x, dims, ndims, keepdim, dtype, out);
}

mt_status mt_mean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  mt_dtype dt = dtype >= 0 ? (mt_dtype)dtype : (mt_dtype)x->dtype;
  if (!mt_is_inexact(dt))
    return mt_fail(MT_EDTYPE, "mean: needs a floating dtype, got %s (convert with x:float() or pass dtype=)",
                   mt_dtype_name(dt));
  mt_tensor *xc = NULL;
  mt_status st = cast_arg(x, dtype, &xc);
  if (!st && mt_is_complex(dt)) st = complex_sum("mean", xc, dims, ndims, keepdim, true, out);
  else if (!st) st = reduce_op("mean", MT_R_SUM, xc, dims, ndims, keepdim, dt, true, out, NULL);
  mt_release(xc);
  return st;
}

mt_status mt_amax(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out) {
  return reduce_op("amax", MT_R_MAX, x, dims, ndims, keepdim, (mt_dtype)x->dtype, false, out, NULL);
}

mt_status mt_amin(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out) {
  return reduce_op("amin", MT_R_MIN, x, dims, ndims, keepdim, (mt_dtype)x->dtype, false, out, NULL);
}

mt_status mt_max_all(const mt_tensor *x, mt_tensor **out) {
  return reduce_op("max", MT_R_MAX, x, NULL, 0, false, (mt_dtype)x->dtype, false, out, NULL);
}

mt_status mt_min_all(const mt_tensor *x, mt_tensor **out) {
  return reduce_op("min", MT_R_MIN, x, NULL, 0, false, (mt_dtype)x->dtype, false, out, NULL);
}

/* all = prod and any = sum over x != 0 (both defined on empty input); the int64 result becomes bool (and
 * uint8 again for uint8 inputs, as in PyTorch). */
static mt_status all_any(const char *op, mt_rkind kind, const mt_tensor *x, const int *dims, int ndims, bool keepdim,
                         mt_tensor **out) {
  mt_tensor *xb = NULL, *zero = NULL, *r = NULL, *ru = NULL;
  mt_status st = MT_OK;
  if (x->dtype == MT_BOOL) {
    xb = mt_retain((mt_tensor *)x);
  } else if (!(st = mt_scalar_tensor(mt_sint(0), (mt_dtype)x->dtype, &zero))) {
    st = mt_binary(MT_OP_ne, x, zero, &xb);
  }
  if (!st) st = reduce_op(op, kind, xb, dims, ndims, keepdim, MT_BOOL, false, &r, NULL);
  if (!st && x->dtype == MT_UINT8) {
    if (!(st = mt_to_dtype(r, MT_UINT8, false, &ru))) {
      mt_release(r);
      r = ru;
    }
  }
  if (!st) st = mt_deliver(op, r, out), r = NULL;
  mt_release(r);
  mt_release(xb);
  mt_release(zero);
  return st;
}

mt_status mt_all(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out) {
  return all_any("all", MT_R_PROD, x, dims, ndims, keepdim, out);
}

mt_status mt_any(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out) {
  return all_any("any", MT_R_SUM, x, dims, ndims, keepdim, out);
}

mt_status mt_max_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  return reduce_op("max", MT_R_ARGMAX, x, &dim, 1, keepdim, (mt_dtype)x->dtype, false, values, indices);
}

mt_status mt_min_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  return reduce_op("min", MT_R_ARGMIN, x, &dim, 1, keepdim, (mt_dtype)x->dtype, false, values, indices);
}

mt_status mt_argmax(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **out) {
  return reduce_op("argmax", MT_R_ARGMAX, x, dim, dim ? 1 : 0, keepdim, MT_INT64, false, NULL, out);
}

mt_status mt_argmin(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **out) {
  return reduce_op("argmin", MT_R_ARGMIN, x, dim, dim ? 1 : 0, keepdim, MT_INT64, false, NULL, out);
}
