/* softmax.c -- softmax and log_softmax along one dim. x (cast to dtype=,
 * half types computed in float32) is made contiguous and seen as [O, L, K];
 * tasks take one outer index and a block of inner columns, so the common
 * last-dim case is one vectorized row per task. */
#include "cpu/softmax_kernels.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"

#define COLS 256 /* columns per task; softmax_kernels.c relies on it */

typedef struct sm_job {
  mt_softmax_fn fn;
  const char *x;
  char *y;
  size_t es;
  int64_t L, K, nkb;
  bool lg;
} sm_job;

static void sm_range(const sm_job *j, int64_t b, int64_t e) {
  for (int64_t t = b; t < e; t++) {
    int64_t o = t / j->nkb, k0 = (t % j->nkb) * COLS;
    int64_t off = (o * j->L * j->K + k0) * (int64_t)j->es;
    j->fn(j->x + off, j->y + off, j->L, j->K, j->K - k0 < COLS ? j->K - k0 : COLS, j->lg);
  }
}

/* Tasks [b, e) in blocks, looking at the flag between them: stops when
 * Ctrl-C was pressed (mt_parallel_for reports it). */
static void sm_task(void *ctx, int64_t b, int64_t e) {
  const sm_job *j = ctx;
  int64_t per = mt_poll_items(j->L * (j->K < COLS ? j->K : COLS)); /* tasks between two looks at the flag */
  for (int64_t t0 = b; t0 < e && !(t0 > b && mt_interrupted()); t0 += per)
    sm_range(j, t0, e - t0 > per ? t0 + per : e);
}

/* CUDA: x in dt, made contiguous, one kernel (half types computed in float32). */
static mt_status softmax_cuda(const char *op, const mt_tensor *x, int dim, mt_dtype dt, bool lg, mt_tensor **out) {
  mt_tensor *xt = NULL, *xc = NULL, *y = NULL;
  mt_status st;
  int64_t O = 1, L = x->ndim ? x->shape[dim] : 1, K = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) O *= x->shape[d];
    if (d > dim) K *= x->shape[d];
  }
  if (!(st = mt_to_dtype(x, dt, false, &xt)) && !(st = mt_contiguous(xt, &xc)) &&
      !(st = mt_empty(x->shape, x->ndim, dt, mt_tdevice(x), &y))) {
    if (O > 0 && L > 0 && K > 0) st = mt_cuda_softmax(xc, y, O, L, K, lg);
    if (!st) st = mt_deliver(op, y, out), y = NULL;
  }
  mt_release(xt);
  mt_release(xc);
  mt_release(y);
  return st;
}

static mt_status softmax_impl(const char *op, const mt_tensor *x, int dim, int dtype, bool lg, mt_tensor **out) {
  mt_status st = mt_wrap_dim(op, dim, x->ndim, &dim);
  if (st) return st;
  mt_dtype dt = dtype >= 0 ? (mt_dtype)dtype : (mt_dtype)x->dtype;
  if (!mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: needs a floating tensor, got %s (convert with x:float() or pass dtype=)", op,
                   mt_dtype_name(dt));
  mt_tensor *xt = NULL, *xu = NULL, *xc = NULL, *y = NULL, *r = NULL;
  if (mt_tdevice(x).type == MT_CUDA) return softmax_cuda(op, x, dim, dt, lg, out);
  if ((st = mt_to_dtype(x, dt, false, &xt)) || (st = mt_upcast_half(xt, &xu)) || (st = mt_contiguous(xu, &xc)) ||
      (st = mt_empty(x->shape, x->ndim, (mt_dtype)xc->dtype, mt_tdevice(x), &y)))
    goto done;
  int64_t O = 1, L = x->ndim ? x->shape[dim] : 1, K = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) O *= x->shape[d];
    if (d > dim) K *= x->shape[d];
  }
  if (O > 0 && L > 0 && K > 0) {
    sm_job j = {xc->dtype == MT_FLOAT64 ? mt_cpu_softmax_f64 : mt_cpu_softmax_f32,
                mt_data(xc),
                mt_data(y),
                mt_elsize(xc),
                L,
                K,
                (K + COLS - 1) / COLS,
                lg};
    int64_t work = L * (K < COLS ? K : COLS), grain = work >= (1 << 14) ? 1 : (1 << 14) / work;
    if ((st = mt_parallel_for(O * j.nkb, grain, sm_task, &j))) goto done;
  }
  if (!(st = mt_to_dtype(y, dt, false, &r))) st = mt_deliver(op, r, out);
done:
  mt_release(xt);
  mt_release(xu);
  mt_release(xc);
  mt_release(y);
  return st;
}

mt_status mt_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  return softmax_impl("softmax", x, dim, dtype, false, out);
}

mt_status mt_log_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  return softmax_impl("log_softmax", x, dim, dtype, true, out);
}
