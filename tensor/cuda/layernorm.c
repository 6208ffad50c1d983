/* layernorm.c (cuda) -- the fast layer norm of CUDA tensors (layernorm.cu):
 * float32, float16 and bfloat16 inputs in their own dtype, rows of up to
 * MAX_L elements held in registers, float32 statistics; the backward pass
 * writes dx in one pass over x and dy and sums the weight and bias
 * gradients in two stages (per-block partial sums, then a small reduction
 * kernel). tensor/norm.c calls these after its checks; *done stays false
 * where they decline (float64, longer rows, empty tensors, a grad_output of
 * another dtype than the input), and the general kernels of cuda/norm.c
 * run instead. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "cu_api.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_layernorm_cu[];

/* Elements a thread holds (layernorm.cu's NC * VW): 16 with vector
 * accesses, 8 element by element; threads per row at most 1024. */
enum { MAXE = 16, MAXE1 = 8, MAX_TPR = 1024, MAX_L = MAXE * MAX_TPR };
enum { K_FWD, K_BWD, K_PARAM, NK };
static const char *const knames[NK] = {"mt_ln_fwd", "mt_ln_bwd", "mt_ln_param"};

/* A member of the family: storage dtypes of x (dy, dx), of the weight and
 * bias, of the parameter gradients; and how a problem runs: vector width,
 * chunks per thread, threads per row; then threads and rows per block. */
typedef struct plan {
  mt_dtype dt, wd, pd;
  int vw, nc, tpr, threads, rpb;
} plan;

static bool half_or_float(mt_dtype dt) { return dt == MT_FLOAT32 || dt == MT_FLOAT16 || dt == MT_BFLOAT16; }
static int esize(mt_dtype dt) { return dt == MT_FLOAT32 ? 4 : 2; }
static bool aligned(const mt_tensor *t, int64_t n) { return !t || ((uintptr_t)mt_data(t) % (uintptr_t)n) == 0; }

/* Fills p's shape for rows of L elements: of the vector widths that L and
 * the pointers allow (xs: rows of p->dt, ws: parameters of p->wd), the one
 * leaving the fewest lanes idle, the widest among equals. False: rows too
 * long for the registers. */
static bool make_plan(int64_t L, const mt_tensor *const *xs, int nx, const mt_tensor *const *ws, int nw, plan *p) {
  int el = esize(p->dt), best = -1;
  int64_t waste = 0;
  for (int vw = 16 / el; vw >= 1; vw /= 2) {
    bool ok = L % vw == 0;
    for (int i = 0; ok && i < nx; i++) ok = aligned(xs[i], (int64_t)vw * el);
    for (int i = 0; ok && i < nw; i++) ok = aligned(ws[i], (int64_t)vw * esize(p->wd));
    if (!ok || (vw == 1 && best > 0)) continue; /* element by element only when no vector fits */
    int per = vw > 1 ? MAXE : MAXE1, tpr = 32;
    while ((int64_t)tpr * per < L) tpr *= 2;
    if (tpr > MAX_TPR) continue;
    int64_t nc = (L + (int64_t)vw * tpr - 1) / ((int64_t)vw * tpr), w = nc * vw * tpr - L;
    if (best < 0 || w < waste) best = vw, waste = w, p->tpr = tpr, p->nc = (int)nc;
  }
  if (best < 0) return false;
  p->vw = best;
  p->threads = p->tpr == 32 ? 256 : p->tpr;
  p->rpb = p->threads / p->tpr;
  return true;
}

/* Compiled kernels by member (the family's own cache would hash the source
 * on every call). Full: mt_cuda_family's cache still serves. */
typedef struct cached {
  int dev, k;
  plan p;
  void *fn;
} cached;
static cached cache[96];
static int ncached;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_member(const plan *a, const plan *b) {
  return a->dt == b->dt && a->wd == b->wd && a->pd == b->pd && a->vw == b->vw && a->nc == b->nc && a->tpr == b->tpr;
}

/* Kernel k of the member p on dev. */
static mt_status kernel(int dev, const plan *p, int k, void **fn) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ncached; i++)
    if (cache[i].dev == dev && cache[i].k == k && same_member(&cache[i].p, p)) {
      *fn = cache[i].fn;
      pthread_mutex_unlock(&lock);
      mt_cuda_note_mem_hit();
      return MT_OK;
    }
  pthread_mutex_unlock(&lock);
  const mt_cuda_dtinfo *x = mt_cuda_dt(p->dt), *w = mt_cuda_dt(p->wd), *g = mt_cuda_dt(p->pd);
  char defs[512];
  snprintf(defs, sizeof defs,
           "#define TX %s\n#define LD(x) %s\n#define ST(v) %s\n#define TW %s\n#define LW(x) %s\n#define TP %s\n"
           "#define SP(v) %s\n#define VW %d\n#define NC %d\n#define TPR %d\n",
           x->store, x->load, x->write, w->store, w->load, g->store, g->write, p->vw, p->nc, p->tpr);
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_layernorm_cu, knames[k], fn);
  if (st) return st;
  pthread_mutex_lock(&lock);
  if (ncached < (int)(sizeof cache / sizeof cache[0])) cache[ncached++] = (cached){dev, k, *p, *fn};
  pthread_mutex_unlock(&lock);
  return MT_OK;
}

/* Multiprocessors of dev (108 when the driver does not say). */
static int sm_count(int dev) {
  static int n[MT_CUDA_MAXDEV];
  if (!n[dev]) {
    CUdevice d;
    int v = 0;
    if (mt_cu.DeviceGet(&d, dev) != CUDA_SUCCESS ||
        mt_cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) != CUDA_SUCCESS || v <= 0)
      v = 108;
    n[dev] = v;
  }
  return n[dev];
}

/* A contiguous copy of t in dtype d (t itself, retained, when it is one;
 * NULL stays NULL). */
static mt_status as(const mt_tensor *t, mt_dtype d, mt_tensor **out) {
  *out = NULL;
  if (!t) return MT_OK;
  mt_tensor *c = NULL;
  mt_status st = mt_to_dtype(t, d, false, &c);
  if (!st) st = mt_contiguous(c, out);
  mt_release(c);
  return st;
}

/* Weight and bias as the kernels read them (*wc, *bc; NULL stays NULL) and
 * their dtype *wd: their own when both have the same one and it is x's
 * (dt) or float32, else float32. */
static mt_status params(mt_dtype dt, const mt_tensor *w, const mt_tensor *b, mt_tensor **wc, mt_tensor **bc,
                        mt_dtype *wd) {
  mt_dtype d = w ? (mt_dtype)w->dtype : b ? (mt_dtype)b->dtype : MT_FLOAT32;
  if ((w && (mt_dtype)w->dtype != d) || (b && (mt_dtype)b->dtype != d) || (d != dt && d != MT_FLOAT32)) d = MT_FLOAT32;
  *wd = d;
  mt_status st = as(w, d, wc);
  return st || !bc ? st : as(b, d, bc);
}

static dptr P(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }

mt_status mt_cuda_layer_norm(const char *op, const mt_tensor *x, int64_t R, int64_t L, const mt_tensor *weight,
                             const mt_tensor *bias, double eps, const int64_t *sshape, int snd, mt_tensor **out,
                             mt_tensor **mean, mt_tensor **rstd, bool *done) {
  *done = false;
  mt_dtype dt = (mt_dtype)x->dtype;
  if (!half_or_float(dt) || R * L == 0 || L > MAX_L) return MT_OK;
  int dev = mt_tdevice(x).index;
  mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *m = NULL, *rs = NULL;
  plan p = {.dt = dt, .pd = dt};
  mt_status st;
  if ((st = mt_contiguous(x, &xc)) || (st = params(dt, weight, bias, &wc, &bc, &p.wd)) ||
      (st = mt_empty(x->shape, x->ndim, dt, mt_tdevice(x), &y)) ||
      (st = mt_empty(sshape, snd, MT_FLOAT32, mt_tdevice(x), &m)) ||
      (st = mt_empty(sshape, snd, MT_FLOAT32, mt_tdevice(x), &rs)))
    goto done;
  const mt_tensor *xs[] = {xc, y}, *ws[] = {wc, bc};
  if (!make_plan(L, xs, 2, ws, 2, &p)) goto done;
  void *fn = NULL;
  if ((st = kernel(dev, &p, K_FWD, &fn))) goto done;
  dptr px = P(xc), pw = P(wc), pb = P(bc), pm = P(m), pr = P(rs), py = P(y);
  long long r = R;
  int l = (int)L;
  float e = (float)eps;
  void *args[] = {&px, &pw, &pb, &r, &l, &e, &pm, &pr, &py};
  if ((st = mt_cuda_launch_grid(dev, fn, (R + p.rpb - 1) / p.rpb, p.threads, args, op))) goto done;
  *done = true;
  /* mt_deliver consumes what it is given */
  st = mt_deliver(op, y, out);
  y = NULL;
  if (!st && mean) st = mt_deliver(op, m, mean), m = NULL;
  if (!st && rstd) st = mt_deliver(op, rs, rstd), rs = NULL;
done:
  mt_release(xc), mt_release(wc), mt_release(bc), mt_release(y), mt_release(m), mt_release(rs);
  return st;
}

/* Delivers gradient g (L elements) as a parameter's gradient: like's dtype
 * and shape, or dtype dt and 1-D without like. Consumes g. */
static mt_status deliver_param(const char *op, mt_tensor *g, const mt_tensor *like, mt_dtype dt, mt_tensor **out) {
  int64_t n = mt_numel(g);
  mt_tensor *v = NULL, *c = NULL;
  mt_status st = mt_view(g, like ? like->shape : &n, like ? like->ndim : 1, &v);
  mt_release(g);
  if (!st) st = mt_to_dtype(v, like ? (mt_dtype)like->dtype : dt, false, &c);
  mt_release(v);
  return st ? st : mt_deliver(op, c, out);
}

mt_status mt_cuda_layer_norm_backward(const char *op, const mt_tensor *g, const mt_tensor *x, int64_t R, int64_t L,
                                      const mt_tensor *mean, const mt_tensor *rstd, const mt_tensor *weight,
                                      mt_tensor **grad_in, mt_tensor **grad_weight, mt_tensor **grad_bias,
                                      bool *done) {
  *done = false;
  mt_dtype dt = (mt_dtype)x->dtype;
  if (!half_or_float(dt) || g->dtype != x->dtype || R * L == 0 || L > MAX_L) return MT_OK;
  int dev = mt_tdevice(x).index;
  mt_dtype want = weight ? (mt_dtype)weight->dtype : dt; /* the parameter gradients' dtype */
  plan p = {.dt = dt, .pd = want == dt ? dt : MT_FLOAT32};
  mt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *mc = NULL, *rc = NULL, *gx = NULL, *gw = NULL, *gb = NULL;
  mt_tensor *part = NULL;
  mt_status st;
  if ((st = mt_contiguous(x, &xc)) || (st = mt_contiguous(g, &gc)) || (st = params(dt, weight, NULL, &wc, NULL, &p.wd)) ||
      (st = as(mean, MT_FLOAT32, &mc)) || (st = as(rstd, MT_FLOAT32, &rc)) ||
      (grad_in && (st = mt_empty(x->shape, x->ndim, dt, mt_tdevice(x), &gx))) ||
      (grad_weight && (st = mt_empty(&L, 1, p.pd, mt_tdevice(x), &gw))) ||
      (grad_bias && (st = mt_empty(&L, 1, p.pd, mt_tdevice(x), &gb))))
    goto done;
  const mt_tensor *xs[] = {xc, gc, gx}, *ws[] = {wc};
  if (!make_plan(L, xs, 3, ws, 1, &p)) goto done;
  /* one wave of blocks (layernorm.cu's MINB per multiprocessor), each over many rows */
  int resident = (p.nc * p.vw > 12 ? 512 : 768) / p.threads;
  int64_t blocks = (R + p.rpb - 1) / p.rpb, most = (int64_t)sm_count(dev) * (resident > 0 ? resident : 1);
  if (blocks > most) blocks = most;
  int64_t np2 = blocks * 2 * L;
  if ((gw || gb) && (st = mt_empty(&np2, 1, MT_FLOAT32, mt_tdevice(x), &part))) goto done;
  void *fb = NULL, *fp = NULL;
  if ((st = kernel(dev, &p, K_BWD, &fb)) || (part && (st = kernel(dev, &p, K_PARAM, &fp)))) goto done;
  dptr pg = P(gc), px = P(xc), pw = P(wc), pm = P(mc), pr = P(rc), pgx = P(gx), ppart = P(part), pgw = P(gw),
       pgb = P(gb);
  long long r = R;
  int l = (int)L, np = (int)blocks;
  void *args[] = {&pg, &px, &pw, &pm, &pr, &r, &l, &pgx, &ppart};
  if ((st = mt_cuda_launch_grid(dev, fb, blocks, p.threads, args, op))) goto done;
  if (part) {
    void *pargs[] = {&ppart, &np, &l, &pgw, &pgb};
    if ((st = mt_cuda_launch_grid(dev, fp, 2 * ((L + 31) / 32), 256, pargs, op))) goto done;
  }
  *done = true;
  if (grad_in) { /* mt_deliver consumes what it is given */
    st = mt_deliver(op, gx, grad_in);
    gx = NULL;
    if (st) goto done;
  }
  if (gw) {
    st = deliver_param(op, gw, weight, dt, grad_weight);
    gw = NULL;
    if (st) goto done;
  }
  if (gb) {
    st = deliver_param(op, gb, weight, dt, grad_bias);
    gb = NULL;
  }
done:
  mt_release(xc), mt_release(gc), mt_release(wc), mt_release(mc), mt_release(rc), mt_release(gx);
  mt_release(gw), mt_release(gb), mt_release(part);
  return st;
}
