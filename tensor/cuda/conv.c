/* conv.c (cuda) -- convolutions and max pooling on CUDA tensors. A
 * convolution is im2col (conv.cu) followed by a cuBLAS product per batch
 * chunk; its input gradient is the transposed product followed by col2im,
 * its weight gradient a product per sample summed over the batch. The
 * checks, shapes and dtype handling stay in tensor/conv.c and pool.c; this
 * file sees contiguous float32/float64 tensors only. Grouped convolutions
 * run one ungrouped problem per group. */
#include <stdio.h>
#include <string.h>

#include "../cpu/conv_kernels.h"
#include "../cpu/pool_kernels.h"
#include "../reduce.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_conv_cu[];

/* Match struct mt_cgeo and mt_pgeo in conv.cu. */
typedef struct cgeo {
  int64_t n, C, in[3], out[3], k[3], stride[3], pad[3], dil[3];
} cgeo;
typedef struct pgeo {
  int64_t n, in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int32_t adaptive;
} pgeo;

/* The im2col buffer of one chunk holds at most this many elements. */
#define COL_BUDGET ((int64_t)1 << 25)

static mt_status kernel(int dev, mt_dtype dt, const char *name, void **fn) {
  const char *t = dt == MT_FLOAT64 ? "double" : "float";
  char defs[96];
  snprintf(defs, sizeof defs, "#define TX %s\n#define TA %s\n", t, t);
  return mt_cuda_family(dev, defs, mt_cuda_conv_cu, name, fn);
}

static dptr dp(const mt_tensor *t) { return (dptr)(uintptr_t)mt_data(t); }

/* im2col (col2im when back) between x (cn samples, contiguous) and col. */
static mt_status fold(const struct mt_conv_problem *p, bool back, const mt_tensor *x, const mt_tensor *col, int64_t cn) {
  int dev = mt_tdevice(x).index;
  cgeo g;
  memset(&g, 0, sizeof g);
  g.C = p->C;
  int64_t L = 1, KK = 1, S = 1;
  for (int d = 0; d < 3; d++) {
    g.in[d] = p->in[d], g.out[d] = p->out[d], g.k[d] = p->k[d];
    g.stride[d] = p->stride[d], g.pad[d] = p->pad_lo[d], g.dil[d] = p->dil[d];
    L *= p->out[d], KK *= p->k[d], S *= p->in[d];
  }
  g.n = back ? cn * p->C * S : cn * p->C * KK * L;
  void *fn = NULL;
  mt_status st = kernel(dev, (mt_dtype)x->dtype, back ? "mt_col2im" : "mt_im2col", &fn);
  if (st) return st;
  dptr px = dp(x), pc = dp(col);
  void *args[] = {back ? (void *)&pc : (void *)&px, back ? (void *)&px : (void *)&pc, &g};
  return mt_cuda_launch_grid(dev, fn, (g.n + 255) / 256 < 65536 ? (g.n + 255) / 256 : 65536, 256, args,
                             back ? "conv_backward_input" : "conv2d");
}

/* A view of contiguous t as the 3-D shape (s0, s1, s2). */
static mt_status view3(const mt_tensor *t, int64_t s0, int64_t s1, int64_t s2, mt_tensor **out) {
  int64_t s[3] = {s0, s1, s2};
  return mt_view(t, s, 3, out);
}

/* w2 (r, c) seen as (cn, r, c) (transposed: (cn, c, r)) with batch stride 0. */
static mt_status batch_of(const mt_tensor *w2, bool transposed, int64_t cn, mt_tensor **out) {
  mt_tensor *t = NULL, *u = NULL;
  mt_status st = transposed ? mt_transpose(w2, 0, 1, &t) : (t = mt_retain((mt_tensor *)w2), MT_OK);
  if (!st) st = mt_unsqueeze(t, 0, &u);
  if (!st) {
    int64_t s[3] = {cn, u->shape[1], u->shape[2]};
    st = mt_expand(u, s, 3, out);
  }
  mt_release(t), mt_release(u);
  return st;
}

/* Channels [g * n, (g + 1) * n) of t seen as (d0, c, rest): a view
 * (contiguous when d0 == 1), or a contiguous copy when copy. */
static mt_status group_of(const mt_tensor *t, int64_t d0, int64_t c, int64_t g, int64_t n, bool copy, mt_tensor **out) {
  int64_t s[3] = {d0, c, mt_numel(t) / (d0 * c > 0 ? d0 * c : 1)};
  mt_tensor *v = NULL, *w = NULL;
  mt_status st = mt_view(t, s, 3, &v);
  if (!st) st = mt_narrow(v, 1, g * n, n, &w);
  if (!st && copy) st = mt_contiguous(w, out);
  else if (!st) *out = mt_retain(w);
  mt_release(v), mt_release(w);
  return st;
}

/* groups > 1: one ungrouped problem per group on copies of its channels of
 * the data operands and views of its rows of the weight (and bias). */
static mt_status grouped(int kind, const struct mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b,
                         mt_tensor *y, mt_tensor *y2) {
  struct mt_conv_problem q = *p;
  int64_t G = p->G, Cg = p->C / G, Kg = p->K / G;
  q.G = 1, q.C = Cg, q.K = Kg;
  const mt_tensor *xt = kind == 0 ? a : kind == 2 ? b : y, *wt = kind == 2 ? y : b, *yt = kind == 0 ? y : a;
  mt_status st = MT_OK;
  for (int64_t g = 0; g < G && !st; g++) {
    mt_tensor *xg = NULL, *wg = NULL, *yg = NULL, *bg = NULL, *dst = NULL, *tmp = NULL;
    bool x_out = kind == 1, y_out = kind == 0;
    if ((st = group_of(wt, 1, p->K, g, Kg, false, &wg)) || (y2 && (st = mt_narrow(y2, 0, g * Kg, Kg, &bg))))
      goto next;
    if ((st = group_of(xt, p->N, p->C, g, Cg, !x_out, x_out ? &dst : &xg)) ||
        (st = group_of(yt, p->N, p->K, g, Kg, !y_out, y_out ? &dst : &yg)))
      goto next;
    if (dst && (st = mt_empty(dst->shape, 3, (mt_dtype)dst->dtype, mt_tdevice(dst), &tmp))) goto next;
    if (kind == 0) st = mt_cuda_conv(0, &q, xg, wg, tmp, bg);
    else if (kind == 1) st = mt_cuda_conv(1, &q, yg, wg, tmp, NULL);
    else st = mt_cuda_conv(2, &q, yg, xg, wg, bg);
    if (!st && dst) st = mt_copy_(dst, tmp);
  next:
    mt_release(xg), mt_release(wg), mt_release(yg), mt_release(bg), mt_release(dst), mt_release(tmp);
  }
  return st;
}

mt_status mt_cuda_conv(int kind, const struct mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                       mt_tensor *y2) {
  if (p->G != 1) return grouped(kind, p, a, b, y, y2);
  mt_dtype dt = (mt_dtype)y->dtype;
  int64_t L = p->out[0] * p->out[1] * p->out[2], KK = p->k[0] * p->k[1] * p->k[2];
  int64_t S = p->in[0] * p->in[1] * p->in[2], CKK = p->C * KK, N = p->N;
  int64_t cn = CKK * L > 0 ? COL_BUDGET / (CKK * L) : N;
  if (cn < 1) cn = 1;
  if (cn > N) cn = N;
  /* the operands as matrices: x (N, C*S), w (K, CKK), gy/y (N, K, L) */
  const mt_tensor *xt = kind == 0 ? a : kind == 2 ? b : y, *wt = kind == 2 ? y : b, *yt = kind == 0 ? y : a;
  mt_tensor *x3 = NULL, *w2 = NULL, *y3 = NULL, *wb = NULL, *col = NULL, *part = NULL, *colt = NULL;
  int64_t ws[2] = {p->K, CKK};
  mt_status st;
  if ((st = view3(xt, N, p->C, S, &x3)) || (st = mt_view(wt, ws, 2, &w2)) || (st = view3(yt, N, p->K, L, &y3)) ||
      (kind != 2 && (st = batch_of(w2, kind == 1, cn, &wb))) ||
      (st = mt_empty((int64_t[]){cn, CKK, L}, 3, dt, mt_tdevice(y), &col)) ||
      (kind == 2 && ((st = mt_empty((int64_t[]){cn, p->K, CKK}, 3, dt, mt_tdevice(y), &part)) ||
                     (st = mt_transpose(col, 1, 2, &colt)) || (st = mt_fill_(y, mt_sint(0))))))
    goto done;
  for (int64_t n0 = 0; n0 < N && !st; n0 += cn) {
    int64_t m = N - n0 < cn ? N - n0 : cn;
    mt_tensor *xs = NULL, *ys = NULL, *cs = NULL, *wm = NULL, *ps = NULL, *cts = NULL, *sum = NULL;
    if ((st = mt_narrow(x3, 0, n0, m, &xs)) || (st = mt_narrow(y3, 0, n0, m, &ys)) ||
        (st = mt_narrow(col, 0, 0, m, &cs)))
      goto chunk;
    if (kind == 0) { /* y = w @ im2col(x) */
      if ((st = fold(p, false, xs, cs, m)) || (st = mt_narrow(wb, 0, 0, m, &wm))) goto chunk;
      st = mt_cuda_gemm(wm, false, CKK, cs, false, L, ys, 1, 1.0, 0.0);
    } else if (kind == 1) { /* gx = col2im(w^T @ gy) */
      if ((st = mt_narrow(wb, 0, 0, m, &wm)) || (st = mt_cuda_gemm(wm, true, CKK, ys, false, L, cs, 1, 1.0, 0.0)))
        goto chunk;
      st = fold(p, true, xs, cs, m);
    } else { /* gw += sum over samples of gy @ im2col(x)^T */
      int zero = 0;
      if ((st = fold(p, false, xs, cs, m)) || (st = mt_narrow(part, 0, 0, m, &ps)) ||
          (st = mt_narrow(colt, 0, 0, m, &cts)) || (st = mt_cuda_gemm(ys, false, L, cts, true, L, ps, 1, 1.0, 0.0)) ||
          (st = mt_sum(ps, &zero, 1, false, -1, &sum)))
        goto chunk;
      st = mt_binary(MT_OP_add, w2, sum, &w2);
    }
  chunk:
    mt_release(xs), mt_release(ys), mt_release(cs), mt_release(wm), mt_release(ps), mt_release(cts), mt_release(sum);
  }
  if (!st && y2 && kind == 0) { /* y += bias per channel */
    mt_tensor *bv = NULL;
    if (!(st = view3(y2, 1, p->K, 1, &bv))) st = mt_binary(MT_OP_add, y3, bv, &y3);
    mt_release(bv);
  }
  if (!st && y2 && kind == 2) { /* grad bias: gy summed over samples and positions */
    int dims[2] = {0, 2};
    mt_tensor *s = NULL;
    if (!(st = mt_sum(y3, dims, 2, false, -1, &s))) st = mt_copy_(y2, s);
    mt_release(s);
  }
done:
  mt_release(x3), mt_release(w2), mt_release(y3), mt_release(wb), mt_release(col), mt_release(part), mt_release(colt);
  return st;
}

mt_status mt_cuda_max_pool(const struct mt_pool_problem *p, const mt_tensor *x, mt_tensor *y, mt_tensor *idx) {
  int dev = mt_tdevice(x).index;
  pgeo g;
  memset(&g, 0, sizeof g);
  g.n = p->planes;
  for (int d = 0; d < 3; d++) {
    g.in[d] = p->in[d], g.out[d] = p->out[d], g.k[d] = p->k[d];
    g.stride[d] = p->stride[d], g.pad[d] = p->pad[d], g.dil[d] = p->dil[d];
    g.n *= p->out[d];
  }
  g.adaptive = p->adaptive;
  void *fn = NULL;
  mt_status st = kernel(dev, (mt_dtype)x->dtype, "mt_max_pool", &fn);
  if (st) return st;
  dptr px = dp(x), py = dp(y), pi = idx ? dp(idx) : 0;
  void *args[] = {&px, &py, &pi, &g};
  return mt_cuda_launch_grid(dev, fn, (g.n + 255) / 256 < 65536 ? (g.n + 255) / 256 : 65536, 256, args, "max_pool");
}

mt_status mt_cuda_max_pool_backward(int64_t planes, int64_t in_plane, int64_t out_plane, const mt_tensor *gy,
                                    const mt_tensor *idx, mt_tensor *gx) {
  int dev = mt_tdevice(gy).index;
  int64_t n = planes * out_plane;
  void *fn = NULL;
  mt_status st = mt_fill_(gx, mt_sint(0));
  if (!st && n > 0) {
    mt_tensor *lo = NULL, *hi = NULL;
    mt_scalar a, b;
    if (!(st = mt_amin(idx, NULL, 0, false, &lo)) && !(st = mt_amax(idx, NULL, 0, false, &hi)) &&
        !(st = mt_item(lo, &a)) && !(st = mt_item(hi, &b)) && (mt_scalar_i(a) < 1 || mt_scalar_i(b) > in_plane))
      st = mt_fail(MT_EINDEX, "max_pool_backward: index %lld is outside the input plane of %lld elements",
                   (long long)(mt_scalar_i(a) < 1 ? mt_scalar_i(a) : mt_scalar_i(b)), (long long)in_plane);
    mt_release(lo), mt_release(hi);
  }
  if (st || n == 0) return st;
  if ((st = kernel(dev, (mt_dtype)gy->dtype, "mt_max_pool_bwd", &fn))) return st;
  dptr pg = dp(gy), pi = dp(idx), px = dp(gx);
  long long nn = n, op_ = out_plane, ip = in_plane;
  void *args[] = {&pg, &pi, &px, &nn, &op_, &ip};
  return mt_cuda_launch_grid(dev, fn, (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536, 256, args,
                             "max_pool_backward");
}
