/* mt_cuda.h -- the CUDA backend's interface to the rest of the engine and
 * to the Lua bindings. Every function works (and fails cleanly, with a
 * message saying why) on a machine without a GPU or a driver: the driver and
 * NVRTC are loaded with dlopen at first use, never linked. */
#ifndef MT_CUDA_H
#define MT_CUDA_H

#include <stdatomic.h>

#include "mt.h"

#define MT_CUDA_MAXDEV 16

/* ---- devices (device.c) ---- */
/* True when libcuda loads, initialises and reports at least one device. */
bool mt_cuda_available(void);
/* In a forked child (a DataLoader worker): CUDA reports unavailable with
 * `why`, and freeing device or pinned memory inherited from the parent does
 * nothing (the parent's driver state is not the child's to touch). */
void mt_cuda_forbid(const char *why);
extern bool mt_cuda_forbidden;
int mt_cuda_device_count(void);
/* OK when dev names an existing CUDA device (made current for this thread's
 * CUDA calls); else MT_EDEVICE naming op and the valid range. */
mt_status mt_cuda_check_device(mt_device dev, const char *op);
/* The device `cuda` without an index means; set_device changes it. */
int mt_cuda_current_device(void);
mt_status mt_cuda_set_device(int idx);
mt_status mt_cuda_device_name(int idx, char *buf, size_t n);
mt_status mt_cuda_capability(int idx, int *major, int *minor);
/* The architecture kernels are compiled for: "sm_90" (CUDA), the gfx target ID
 * "gfx90a:sramecc+:xnack-" (HIP, make HIP=1). */
mt_status mt_cuda_arch(int idx, char *buf, size_t n);
mt_status mt_cuda_total_memory(int idx, size_t *total, size_t *free);
/* Waits for all work on device idx; reports an earlier asynchronous kernel
 * error naming the last op launched there. */
mt_status mt_cuda_synchronize(int idx);
/* Records the op whose kernel was launched last on dev (for error reports). */
void mt_cuda_note_launch(int dev, const char *op);
/* MT_OK, or a failure whose message names op and the driver's error. */
mt_status mt_cuda_check(int res, int dev, const char *op);

/* ---- streams and events (device.c); handles are opaque ---- */
typedef struct mt_cuda_stream {
  void *handle; /* CUstream; NULL: the device's default (legacy) stream */
  int device;
} mt_cuda_stream;
mt_status mt_cuda_stream_create(int dev, mt_cuda_stream *out);
void mt_cuda_stream_destroy(mt_cuda_stream *s);
mt_status mt_cuda_stream_synchronize(const mt_cuda_stream *s);
/* 1 when all work on s has finished, 0 if not, -1 on error (message set). */
int mt_cuda_stream_query(const mt_cuda_stream *s);
/* The stream new work on dev goes to; set_stream changes it. Asking for it
 * sends dev's waiting elementwise ops first (lazy.c), so that whatever the
 * caller queues comes after them. */
mt_cuda_stream mt_cuda_current_stream(int dev);
/* The current stream's handle without sending anything (the allocator). */
void *mt_cuda_stream_handle(int dev);
void mt_cuda_set_stream(mt_cuda_stream s);
mt_status mt_cuda_event_create(int dev, bool timing, void **out);
void mt_cuda_event_destroy(int dev, void *ev);
mt_status mt_cuda_event_record(void *ev, const mt_cuda_stream *s);
mt_status mt_cuda_event_synchronize(int dev, void *ev);
int mt_cuda_event_query(int dev, void *ev);
mt_status mt_cuda_event_elapsed(int dev, void *start, void *end, float *ms);
/* s waits for ev (recorded on another stream) before later work. */
mt_status mt_cuda_stream_wait_event(const mt_cuda_stream *s, void *ev);

/* ---- the caching allocator (alloc.c) ---- */
/* Device memory of at least n bytes on dev (NULL for n == 0), for use on
 * the device's current stream. On out-of-memory the cache is freed and the
 * allocation retried once before MT_ENOMEM ("CUDA out of memory: ..."). */
mt_status mt_cuda_malloc(int dev, size_t n, void **out);
/* Returns a block to dev's cache. */
void mt_cuda_free(int dev, void *p);
/* Frees every cached (unused) block of every device. */
void mt_cuda_empty_cache(void);
typedef struct mt_cuda_memstats {
  int64_t allocated, peak_allocated, reserved, peak_reserved, num_allocs, num_cache_hits, num_ooms;
} mt_cuda_memstats;
mt_cuda_memstats mt_cuda_memory_stats(int dev);
void mt_cuda_reset_peak(int dev);
/* Page-locked host memory (for fast and asynchronous copies). */
mt_status mt_cuda_host_alloc(size_t n, void **out);
void mt_cuda_host_free(void *p);
/* Bytes allocated by tensors on all devices (the Lua GC paces itself by it). */
int64_t mt_cuda_bytes_in_use(void);
/* Live CUDA storages: the Lua bindings skip their device checks while 0. */
extern _Atomic int64_t mt_cuda_live_storages;

/* ---- kernels and copies (kernels.c, copy_cuda.c) ---- */
/* dst = src for tensors of which at least one is on a CUDA device: host to
 * device, device to host (then synchronous unless non_blocking and the host
 * side is pinned) and device to device, any dtypes and strides, broadcasting
 * src. */
mt_status mt_cuda_copy_(mt_tensor *dst, const mt_tensor *src, bool non_blocking);
mt_status mt_cuda_fill_(mt_tensor *dst, mt_scalar v);
mt_status mt_cuda_unary(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out);
mt_status mt_cuda_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* Host microseconds per launch of an empty one-thread kernel, over n
 * launches sent after a sync (the driver's share of a small op's cost). */
mt_status mt_cuda_launch_cost(int dev, int n, double *us);
/* nan_to_num of a floating CUDA tensor (checked by the caller) */
mt_status mt_cuda_nan_to_num(const mt_tensor *x, double nan, double posinf, double neginf, mt_tensor **out);
/* A copy of t on dev (a new reference to t when already there). */
mt_status mt_cuda_to_device(const mt_tensor *t, mt_device dev, bool non_blocking, mt_tensor **out);
/* The failure "<op>: not implemented on CUDA yet". */
mt_status mt_cuda_unsupported(const char *op);

/* ---- eager elementwise ops that wait to be fused (lazy.c) ----
 * A dense elementwise op (every operand contiguous with the same n elements)
 * is not launched at once: it joins its device's waiting group. The group
 * goes to the GPU as one generated kernel (elementwise.cu, MT_LAZY) when
 * anything else uses the device's stream (mt_cuda_current_stream), when a
 * later op cannot join, or when it is full. Every op's result is written,
 * so the outcome is the eager one; only the number of launches changes. */
/* One operand: a tensor on the kernel's device, or a number (t NULL). */
typedef struct mt_cuda_operand {
  const mt_tensor *t;
  mt_dtype dt;
  double f;
  long long i;
} mt_cuda_operand;
/* The launch geometry of elementwise.cu's kernels (struct mt_geo there). */
typedef struct mt_cuda_geo {
  int32_t nd;
  int32_t pad;
  int64_t n;
  int64_t size[MT_MAXDIM];
  int64_t st[3][MT_MAXDIM];
} mt_cuda_geo;
/* out = expr(in[0][, in[1]]) in compute dtype cdt over n dense elements.
 * expr is a static string of kernels.c's table (its address names it);
 * sint: numbers are read from their integer value; fn: the op's own kernel
 * (an mt_ew_contig member), used when the group is launched op by op. */
typedef struct mt_cuda_ewop {
  const char *name, *expr;
  mt_dtype cdt;
  bool sint;
  int nin;
  mt_tensor *out;
  mt_cuda_operand in[2];
  int64_t n;
  void *fn;
} mt_cuda_ewop;
/* Queues op on dev's waiting group (retaining its storages); false when
 * it cannot wait (the caller launches it now). */
bool mt_cuda_lazy_add(int dev, const mt_cuda_ewop *op);
/* Sends dev's waiting group. Most flushes have no caller to report to, so
 * a failure is kept and reported by the next checked CUDA call
 * (mt_cuda_check) with the group's ops named. */
void mt_cuda_lazy_flush(int dev);
/* Turns waiting on or off (MOONTORCH_CUDA_LAZY=0 starts it off); returns
 * the previous setting. Off sends what waits. */
bool mt_cuda_lazy_enable(bool on);
/* Holds (true) or releases lazy fusion's compiles: while held, group shapes
 * not yet compiled run op by op and are not counted as seen. */
void mt_cuda_lazy_hold(bool on);
typedef struct mt_cuda_lazystats {
  int64_t ops, groups, fused_groups, fused_ops, compiles;
} mt_cuda_lazystats;
mt_cuda_lazystats mt_cuda_lazy_stats(void);
/* A kept flush failure, once (MT_OK if none); mt_cuda_check calls it. */
extern bool mt_cuda_lazy_failed;
mt_status mt_cuda_lazy_failure(void);

/* ---- the other kernel families (reduce.c, index.c, blas.c) ---- */
/* Over mask's dims of x (CUDA): kind is an mt_rkind; acc (float64 for
 * floating x, else int64) and idx (int64 or NULL, arg kinds) are contiguous
 * tensors of the kept shape on x's device; values are divided by div. */
mt_status mt_cuda_reduce(int kind, const mt_tensor *x, uint32_t mask, double div, mt_tensor *acc, mt_tensor *idx);
/* y = softmax (or log_softmax) of contiguous x seen as [O, L, K] along L;
 * y is contiguous of x's shape and dtype (floating). */
mt_status mt_cuda_softmax(const mt_tensor *x, mt_tensor *y, int64_t O, int64_t L, int64_t K, bool lg);
/* out = x gathered along dim at index (1-based int64, same rank as x). */
mt_status mt_cuda_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out);
/* x[dim at index] = src (add: +=), src broadcast to index's shape. */
mt_status mt_cuda_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, bool add);
/* c[i] = alpha * a[i] @ b[i] + beta * c[i] over nb batch dims (a, b expanded
 * to c's batch shape; the last two dims of a and b in a BLAS layout given by
 * their transposition flags and leading dimensions; c contiguous), through
 * cuBLAS. float32, float64, float16, bfloat16 (float32 accumulation). */
mt_status mt_cuda_gemm(const mt_tensor *a, bool ta, int64_t lda, const mt_tensor *b, bool tb, int64_t ldb, mt_tensor *c,
                       int nb, double alpha, double beta);
/* Convolutions and max pools (conv.c), on contiguous floating CUDA
 * tensors; tensor/conv.c and pool.c check shapes and make the results.
 * kind 0: y = conv(a = x, b = w) + y2 (bias, may be NULL); 1: y = grad input
 * from a = grad_out, b = w; 2: y = grad weight (and y2 = grad bias unless
 * NULL) from a = grad_out, b = x. cuDNN runs it where it can (any groups,
 * float16/bfloat16 too), else im2col + cuBLAS (group by group). */
struct mt_conv_problem;
struct mt_pool_problem;
mt_status mt_cuda_conv(int kind, const struct mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                       mt_tensor *y2);
/* cuDNN (cudnn.c): the same directions as mt_cuda_conv without the bias,
 * float32/64/16 and bfloat16, any groups; *done false (and MT_OK) when
 * cuDNN is absent, disabled or declines the problem. */
mt_status mt_cudnn_conv(int kind, const struct mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b,
                        mt_tensor *y, bool *done);
typedef struct mt_cudnn_info {
  bool loaded, enabled;
  int64_t version, convs, declined; /* version as cudnnGetVersion: 91900 */
  int algo[3], math[3];              /* per direction: the last algorithm run (-1: none) and its math type */
  char last_declined[240], load_error[300];
  /* pooling and batch norm (cudnn_ops.c): calls run by cuDNN, calls it
   * could not run (the native kernels did), the route (MT_CUDNN_ROUTE_*) */
  int64_t pools, norms, ops_declined;
  int route;
  char last_ops_declined[160];
} mt_cudnn_info;
mt_cudnn_info mt_cudnn_stats(void);
void mt_cudnn_set_enabled(bool on);
/* cuDNN pooling and batch norm (cudnn_ops.c), on contiguous CUDA tensors
 * of float32, float16 or bfloat16; tensor/pool.c and norm.c check the
 * arguments first and run their native kernels when *done is false (cuDNN
 * absent, switched off, the problem unsupported, or our kernel measured
 * faster for it under the auto route). */
enum { MT_CUDNN_ROUTE_AUTO, MT_CUDNN_ROUTE_CUDNN, MT_CUDNN_ROUTE_NATIVE };
void mt_cudnn_set_route(int route);
void mt_cudnn_ops_stats(mt_cudnn_info *r);
/* Whether mt_cudnn_pool would take p: 2-D or 1-D, not adaptive, no
 * dilation, ceil_mode or divisor_override changing the result, a route
 * that picks cuDNN. */
bool mt_cudnn_pool_takes(const struct mt_pool_problem *p, bool avg, bool back, mt_dtype dt);
/* out = the pool of in (max without indices, or avg) or, back (avg only),
 * the input gradient of gradient in; C the channels (planes = N * C). */
mt_status mt_cudnn_pool(const struct mt_pool_problem *p, bool avg, bool back, int64_t C, const mt_tensor *in,
                        mt_tensor *out, bool *done);
/* mt_batch_norm and mt_batch_norm_backward (training) through cuDNN, same
 * arguments and results (statistics float32). */
mt_status mt_cudnn_batch_norm(const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, mt_tensor *running_mean,
                              mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                              mt_tensor **save_mean, mt_tensor **save_invstd, bool *done);
mt_status mt_cudnn_batch_norm_backward(const mt_tensor *gy, const mt_tensor *x, const mt_tensor *w,
                                       const mt_tensor *save_mean, const mt_tensor *save_invstd, mt_tensor **grad_in,
                                       mt_tensor **grad_weight, mt_tensor **grad_bias, bool *done);
/* Layer norm over rows of L contiguous elements with per-element weight and
 * bias (layernorm.c): the arguments of tensor/norm.c's rows_forward and
 * rows_backward, checked there; statistics float32 of shape (sshape, snd).
 * *done false: declined (another dtype, longer rows, ...), nothing made. */
mt_status mt_cuda_layer_norm(const char *op, const mt_tensor *x, int64_t R, int64_t L, const mt_tensor *weight,
                             const mt_tensor *bias, double eps, const int64_t *sshape, int snd, mt_tensor **out,
                             mt_tensor **mean, mt_tensor **rstd, bool *done);
mt_status mt_cuda_layer_norm_backward(const char *op, const mt_tensor *g, const mt_tensor *x, int64_t R, int64_t L,
                                      const mt_tensor *mean, const mt_tensor *rstd, const mt_tensor *weight,
                                      mt_tensor **grad_in, mt_tensor **grad_weight, mt_tensor **grad_bias,
                                      bool *done);
/* y (and idx, int64 1-based positions in the plane, unless NULL) of a max pool. */
mt_status mt_cuda_max_pool(const struct mt_pool_problem *p, const mt_tensor *x, mt_tensor *y, mt_tensor *idx);
/* gx = zeros plus gy summed at idx (checked to lie in the plane first). */
mt_status mt_cuda_max_pool_backward(int64_t planes, int64_t in_plane, int64_t out_plane, const mt_tensor *gy,
                                    const mt_tensor *idx, mt_tensor *gx);
/* Normalization (norm.c): the CPU loops of cpu/norm_kernels.h on device
 * pointers (contiguous float32/float64 of dt; statistics float64). */
struct mt_rows_problem;
mt_status mt_cuda_bn_fwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const void *w,
                         const void *b, bool stats, double eps, double *mean, double *var, double *invstd, void *y);
mt_status mt_cuda_bn_bwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *gy, const void *x,
                         const void *w, const double *mean, const double *invstd, bool training, void *gx, double *gw,
                         double *gb);
/* invstd = 1 / sqrt(var + eps); run = (1 - m) run + m stat (unbias: * cnt / (cnt - 1)). */
mt_status mt_cuda_bn_invstd(int dev, int64_t C, const double *var, double eps, double *invstd);
mt_status mt_cuda_bn_running(int dev, int64_t C, double *run, const double *stat, double momentum, bool unbias,
                             double cnt);
mt_status mt_cuda_rows_fwd(int dev, mt_dtype dt, const struct mt_rows_problem *p, const void *x, const void *w,
                           const void *b, double eps, double *mean, double *rstd, void *y);
mt_status mt_cuda_rows_bwd(int dev, mt_dtype dt, const struct mt_rows_problem *p, const void *gy, const void *x,
                           const void *w, const double *mean, const double *rstd, void *gx, double *gw, double *gb);
/* Average pools (pool.c): y from x, or (back) gx, zeroed first, from gy;
 * contiguous float32/float64. */
mt_status mt_cuda_avg_pool(const struct mt_pool_problem *p, bool back, const mt_tensor *in, mt_tensor *out);
/* Image resampling (resize.c) by the plan of cpu/resize_kernels.h: out
 * from in, or (back: the adjoint, float) gx from gy; contiguous uint8,
 * float32 or float64. */
struct mt_rs_plan;
mt_status mt_cuda_resize(const struct mt_rs_plan *p, bool back, const mt_tensor *in, mt_tensor *out);
/* c = alpha * a @ b + beta * c for integer dtypes (intmm.c): the layout
 * of mt_cuda_gemm, any strides, wrapping on overflow as on the CPU. */
mt_status mt_cuda_int_gemm(const mt_tensor *a, const mt_tensor *b, mt_tensor *c, int nb, double alpha, double beta);
/* cuBLASLt (blaslt.c): c (m, n; contiguous, float32/float16/bfloat16) =
 * a (m, k) @ b (k, n), operands laid out as for mt_cuda_gemm, then the
 * epilogue: BIAS adds vec (n), BIAS_RELU / BIAS_GELU_TANH then apply the
 * activation (aux, when given for GELU, receives its input, c's shape);
 * BGRAD also writes vec (m) = a summed over k (a weight gradient g^T x with
 * the bias gradient, the columns of g summed). MT_EARG without a message:
 * declined (no Lt, switched off, unsupported, failed): fall back. */
typedef enum mt_lt_epi { MT_LT_PLAIN, MT_LT_BIAS, MT_LT_BIAS_RELU, MT_LT_BIAS_GELU_TANH, MT_LT_BGRAD } mt_lt_epi;
mt_status mt_cuda_lt_product(const mt_tensor *a, bool ta, int64_t lda, const mt_tensor *b, bool tb, int64_t ldb,
                             mt_tensor *c, mt_lt_epi epi, const mt_tensor *vec, mt_tensor *aux);
typedef struct mt_lt_info {
  bool loaded, enabled;
  int64_t calls, declined;
  char load_error[300];
} mt_lt_info;
mt_lt_info mt_cuda_lt_stats(void);
void mt_cuda_lt_set_enabled(bool on);
/* Adam/AdamW on one parameter (adam.c): p, g, m, v (and vmax with amsgrad)
 * contiguous CUDA tensors of one floating dtype and size; see mt_adam_step_. */
struct mt_adam_opts;
mt_status mt_cuda_adam_step_(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                             const struct mt_adam_opts *o);
/* GradScaler: x (contiguous) *= inv_scale; *found = 1 if a result is not finite (cuda/amp.c). */
mt_status mt_cuda_amp_unscale_(mt_tensor *x, double inv_scale, mt_tensor *found);
/* foreach.c: over n contiguous CUDA tensors of one floating dtype: norms
 * (1-D, n elements, their dtype) and total (0-dim, float32; float64 for
 * float64) get the per-tensor norms and the norm of all of them, mode 0
 * ord 2, 1 ord 1, 2 ord inf; two launches per 128 tensors. */
mt_status mt_cuda_foreach_norm(mt_tensor *const *ts, int n, int mode, mt_tensor *norms, mt_tensor *total);
/* ts[i] *= (scale ? *scale (0-dim, on the device) : sv), one launch per 128 tensors. */
mt_status mt_cuda_foreach_scale_(mt_tensor *const *ts, int n, const mt_tensor *scale, double sv);
/* float32 products may use TF32 tensor cores ('high'/'medium') or not ('highest'). */
void mt_cuda_set_tf32(bool allow);
bool mt_cuda_tf32(void);

/* Per dtype: CUDA storage type, compute type, load and store expressions. */
typedef struct mt_cuda_dtinfo {
  const char *store, *compute, *load, *write;
} mt_cuda_dtinfo;
const mt_cuda_dtinfo *mt_cuda_dt(mt_dtype dt);
/* The kernel `name` of defs + common.cu + body (see mt_cuda_kernel). */
mt_status mt_cuda_family(int dev, const char *defs, const char *body, const char *name, void **fn);
/* Counts a kernel found in memory by a front cache (kernels.c). */
void mt_cuda_note_mem_hit(void);
/* Launches fn on `blocks` blocks of `threads` threads on dev's current stream. */
mt_status mt_cuda_launch_grid(int dev, void *fn, int64_t blocks, int threads, void **args, const char *op);

/* ---- random numbers on the device (random.c) ---- */
struct mt_generator;
/* The generator of device dev (seeded with the default seed at start). */
struct mt_generator *mt_cuda_generator(int dev);
/* Seeds every device's generator (torch.manual_seed, cuda.manual_seed_all). */
void mt_cuda_seed_all(uint64_t seed);
/* One draw (see random.cu for the kinds); key and base come from the
 * generator as for a CPU draw. */
typedef struct mt_cuda_rand {
  int kind, bits;
  double a, b;   /* from, scale (uniform double); mean, std; lambd */
  float fa, fs;  /* from, scale (uniform float); mean, std (normal float) */
  int64_t lo;    /* integers: lo + [0, range) */
  uint64_t range; /* 0: 2^64 */
  uint64_t thr;  /* bernoulli: 1 when a word < thr */
  uint32_t key[2];
  uint64_t base; /* first reserved Philox block */
} mt_cuda_rand;
/* Fills contiguous CUDA tensor t (any dtype) with the draw r. */
mt_status mt_cuda_rand_fill(mt_tensor *t, const mt_cuda_rand *r, const char *op);

/* ---- scans and sorts (scan.c, sort.c) ---- */
/* Along dim of contiguous x (float32/float64/integers/bool): kind 0 cumsum,
 * 1 cumprod (y of x's dtype), 2 cummax, 3 cummin (and 1-based yi, int64). */
mt_status mt_cuda_scan(int kind, const mt_tensor *x, int dim, mt_tensor *y, mt_tensor *yi);
/* Sorts each row of contiguous rows [M, L] (stable: NaN largest, equal
 * values by position) and writes its first k values and 1-based positions
 * into contiguous vals, idx [M, k]. */
mt_status mt_cuda_sort_rows(const mt_tensor *rows, bool desc, int64_t k, mt_tensor *vals, mt_tensor *idx);
/* One pick per ascending sorted row of vals/idx [M, L] into pv, pi [M]:
 * mode 0 position p, 1 median, 2 nanmedian, 3 mode (see tensor/sort.c). */
mt_status mt_cuda_pick(int mode, int64_t p, const mt_tensor *vals, const mt_tensor *idx, mt_tensor *pv, mt_tensor *pi);

/* ---- CUDA graphs (graph.c): stream capture and replay ---- */
/* While capturing, blocks freed on dev go to a pool that the graph keeps
 * (its replays write them); off hands the pool over in *pool (alloc.c). */
void mt_cuda_alloc_capture(int dev, bool on, void **pool);
/* True while a CUDA graph is captured on dev (ops then skip host reads). */
bool mt_cuda_capturing(int dev);
/* Returns a graph's pool to dev's cache, for reuse on stream. */
void mt_cuda_alloc_release_pool(int dev, void *pool, void *stream);
typedef struct mt_cuda_graph mt_cuda_graph;
/* Starts capturing the work sent to dev (its current stream becomes a
 * private capture stream until mt_cuda_capture_end). */
mt_status mt_cuda_capture_begin(int dev);
/* Ends the capture; when ok, instantiates the graph into *out (else, or
 * when the capture was invalidated, fails and *out stays NULL). */
mt_status mt_cuda_capture_end(int dev, bool ok, mt_cuda_graph **out);
/* Replays g on its device's current stream. */
mt_status mt_cuda_graph_launch(mt_cuda_graph *g);
void mt_cuda_graph_free(mt_cuda_graph *g);

/* ---- run-time compilation (nvrtc.c) ---- */
/* The kernel `name` of the CUDA C `src`, compiled by NVRTC for dev's exact
 * architecture, cached in memory and on disk. *fn is a CUfunction. */
mt_status mt_cuda_kernel(int dev, const char *src, const char *name, void **fn);
typedef struct mt_cuda_jitstats {
  int64_t compiles, disk_hits, mem_hits, corrupt;
  double compile_seconds;
} mt_cuda_jitstats;
mt_cuda_jitstats mt_cuda_jit_stats(void);
/* Launches fn over n threads (a 1-D grid of 256-thread blocks, grid-stride
 * loops inside) on dev's current stream; checks the launch and names op. */
mt_status mt_cuda_launch(int dev, void *fn, int64_t n, void **args, const char *op);
/* The same on stream (a CUstream) as it is, sending nothing waiting first. */
mt_status mt_cuda_launch_on(int dev, void *stream, void *fn, int64_t n, void **args, const char *op);

/* ---- dense solvers (solver.c, cuSOLVER) ----
 * Each runs over nb column-major matrices stored one after another (float64
 * when dbl, else float32) on dev's current stream; info holds nb device ints
 * (LAPACK's codes: > 0 singular / not positive-definite / no convergence).
 * ipiv: nb * n device ints; tau: nb * min(m, n) elements. */
mt_status mt_cuda_getrf(const char *op, int dev, bool dbl, int n, int64_t nb, void *A, int *ipiv, int *info);
/* B (n x nrhs each) = A^-1 B from getrf's factors. */
mt_status mt_cuda_getrs(const char *op, int dev, bool dbl, int n, int nrhs, int64_t nb, const void *A,
                        const int *ipiv, void *B, int *info);
mt_status mt_cuda_potrf(const char *op, int dev, bool dbl, bool upper, int n, int64_t nb, void *A, int *info);
mt_status mt_cuda_geqrf(const char *op, int dev, bool dbl, int m, int n, int64_t nb, void *A, void *tau, int *info);
/* Q (m x ncols each, holding geqrf's reflectors) made explicit from k reflectors. */
mt_status mt_cuda_orgqr(const char *op, int dev, bool dbl, int m, int ncols, int k, int64_t nb, void *Q,
                        const void *tau, int *info);
/* Eigenvalues (ascending) into W (n each); vectors overwrite A. */
mt_status mt_cuda_syevd(const char *op, int dev, bool dbl, bool vectors, bool upper, int n, int64_t nb, void *A,
                        void *W, int *info);
/* Jacobi SVD: S (min(m, n) each, descending), U (m x (econ ? k : m)), V
 * (n x (econ ? k : n)); A is destroyed. */
mt_status mt_cuda_gesvdj(const char *op, int dev, bool dbl, bool econ, int m, int n, int64_t nb, void *A, void *S,
                         void *U, void *V, int *info);

#endif
