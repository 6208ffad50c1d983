/* call.c -- the uniform engine entry: mt_call(op, ins, nin, args, outs)
 * reaches each op with a row marked ENTRY in ops.def through its adapter
 * call_<name> here, which unpacks the arguments and calls the op's own mt_
 * function. graph/'s generic recorder and the JIT's engine calls (replay)
 * go through it; it adds one indirect call and never allocates. The
 * comment above each adapter is the op's argument layout. */
#include <string.h>

#include "attention.h"
#include "audio.h"
#include "fft.h"
#include "linalg.h"
#include "nn.h"
#include "index.h"
#include "reduce_util.h"
#include "resample.h"
#include "resize.h"
#include "shape.h"
#include "vision.h"

mt_status mt_call_missing(mt_op op) {
  return mt_fail(MT_EARG, "%s: the engine has no uniform entry for this op (internal)", mt_ops[op].name);
}

mt_status mt_dim_mask(const char *op, const int *dims, int ndims, int rank, int64_t *mask) {
  uint32_t m = 0;
  mt_status st = mt_dims_mask(op, dims, ndims, rank, &m);
  *mask = m;
  return st;
}

int mt_mask_dims(int64_t mask, int rank, int *dims) {
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (mask >> d & 1) dims[n++] = d;
  return n;
}

/* ---- elementwise: every elementwise row (f[0]: a unary row's parameter) ---- */
static mt_status call_unary(mt_op op, const mt_tensor *const *in, const mt_args *a, mt_tensor **outs) {
  return mt_unary_p(op, in[0], a && a->nf ? a->f : NULL, &outs[0]);
}
static mt_status call_binary(mt_op op, const mt_tensor *const *in, mt_tensor **outs) {
  return mt_binary(op, in[0], in[1], &outs[0]);
}

/* clamp(x, lo, hi), where(cond, a, b), lerp(a, b, w): three tensors (clamp's
 * lo or hi may be NULL); no args */
static mt_status call_clamp(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_clamp(in[0], in[1], in[2], &outs[0]);
}
static mt_status call_where(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_where(in[0], in[1], in[2], &outs[0]);
}
static mt_status call_lerp(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_lerp(in[0], in[1], in[2], &outs[0]);
}
/* f = {nan, posinf, neginf} */
static mt_status call_nan_to_num(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_nan_to_num(in[0], a->f[0], a->f[1], a->f[2], &outs[0]);
}
/* i = {dtype, copy} */
static mt_status call_cast(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_to_dtype(in[0], (mt_dtype)a->i[0], a->i[1] != 0, &outs[0]);
}

/* ---- reductions over dims: i = {dim mask, keepdim, dtype, all}; f[0] the
 * number (var: correction, norm: p). all: no dims were listed (the mask
 * has every dim; the engine's messages differ) ---- */
#define DIMS                                                                                                           \
  int dims[MT_MAXDIM], nd = a->i[3] ? 0 : mt_mask_dims(a->i[0], in[0]->ndim, dims);                                    \
  bool keep = a->i[1] != 0
#define SUMLIKE(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    DIMS;                                                                                                              \
    return mt_##name(in[0], dims, nd, keep, (int)a->i[2], &outs[0]);                                                   \
  }
SUMLIKE(sum)
SUMLIKE(mean)
SUMLIKE(prod)
SUMLIKE(nansum)
SUMLIKE(nanmean)
#define AMAXLIKE(name)                                                                                                 \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    DIMS;                                                                                                              \
    return mt_##name(in[0], dims, nd, keep, &outs[0]);                                                                 \
  }
/* argmax / argmin: the one dim of the mask, or every dim (a->i[3]) */
#define ARGLIKE(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    DIMS;                                                                                                              \
    return mt_##name(in[0], nd ? &dims[0] : NULL, keep, &outs[0]);                                                     \
  }
ARGLIKE(argmax)
ARGLIKE(argmin)
AMAXLIKE(amax)
AMAXLIKE(amin)
AMAXLIKE(logsumexp)
#define VARLIKE(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    DIMS;                                                                                                              \
    return mt_##name(in[0], dims, nd, a->f[0], keep, &outs[0]);                                                        \
  }
VARLIKE(var)
VARLIKE(std)
/* outs = {var or std, mean} */
#define VARMEAN(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    DIMS;                                                                                                              \
    return mt_##name(in[0], dims, nd, a->f[0], keep, &outs[0], &outs[1]);                                              \
  }
VARMEAN(var_mean)
VARMEAN(std_mean)
static mt_status call_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  DIMS;
  return mt_norm(in[0], a->f[0], dims, nd, keep, (int)a->i[2], &outs[0]);
}
/* i = {mask of the one dim, or of all dims: no dim, keepdim}; outs = {min, max} */
static mt_status call_aminmax(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  DIMS;
  return mt_aminmax(in[0], nd == 1 ? dims : NULL, keep, &outs[0], &outs[1]);
}

/* ---- along one dim: i = {dim (0-based), dtype} ---- */
#define DIMLIKE(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    return mt_##name(in[0], (int)a->i[0], (int)a->i[1], &outs[0]);                                                     \
  }
DIMLIKE(softmax)
DIMLIKE(log_softmax)
DIMLIKE(cumsum)
DIMLIKE(cumprod)

/* ---- values picked along a dim with their 1-based indices: i = {dim,
 * keepdim, ...}, outs = {values, indices}. max, min, median and nanmedian
 * with i[5] set are the forms of all elements: outs = {value} ---- */
#define PICK(name, call)                                                                                               \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    const mt_tensor *x = in[0];                                                                                        \
    int dim = (int)a->i[0];                                                                                            \
    bool keep = a->i[1] != 0;                                                                                          \
    (void)keep;                                                                                                        \
    return call;                                                                                                       \
  }
PICK(max, a->i[5] ? mt_max_all(x, &outs[0]) : mt_max_dim(x, dim, keep, &outs[0], &outs[1]))
PICK(min, a->i[5] ? mt_min_all(x, &outs[0]) : mt_min_dim(x, dim, keep, &outs[0], &outs[1]))
PICK(median, a->i[5] ? mt_median_all(x, false, &outs[0]) : mt_median_dim(x, dim, keep, false, &outs[0], &outs[1]))
PICK(nanmedian, a->i[5] ? mt_median_all(x, true, &outs[0]) : mt_median_dim(x, dim, keep, true, &outs[0], &outs[1]))
PICK(mode, mt_mode(x, dim, keep, &outs[0], &outs[1]))
PICK(cummax, mt_cummax(x, dim, &outs[0], &outs[1]))
PICK(cummin, mt_cummin(x, dim, &outs[0], &outs[1]))
/* i[2] descending, i[3] stable */
PICK(sort, mt_sort(x, dim, a->i[2] != 0, a->i[3] != 0, &outs[0], &outs[1]))
/* i[2] k, i[3] largest, i[4] sorted */
PICK(topk, mt_topk(x, a->i[2], dim, a->i[3] != 0, a->i[4] != 0, &outs[0], &outs[1]))
/* i[2] k */
PICK(kthvalue, mt_kthvalue(x, a->i[2], dim, keep, &outs[0], &outs[1]))

/* ---- products: two tensors, no args (kron: i = {the larger rank}, for its
 * derivative); add-products: (input, m1, m2), f = {beta, alpha} ---- */
#define PRODUCT(name)                                                                                                  \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    return mt_##name(in[0], in[1], &outs[0]);                                                                          \
  }
PRODUCT(matmul)
PRODUCT(mm)
PRODUCT(bmm)
PRODUCT(mv)
PRODUCT(dot)
PRODUCT(inner)
PRODUCT(outer)
PRODUCT(kron)
#define ADDPRODUCT(name)                                                                                               \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    return mt_##name(in[0], in[1], in[2], a->f[0], a->f[1], &outs[0]);                                                 \
  }
ADDPRODUCT(addmm)
ADDPRODUCT(addmv)
ADDPRODUCT(baddbmm)
ADDPRODUCT(addbmm)

/* ---- linear algebra: inv, det (no args); solve(a, b): i = {left};
 * cholesky: i = {upper}; pinv: i = {hermitian}, f = {atol, rtol};
 * cross(a, b): i = {dim} ---- */
static mt_status call_linalg_inv(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_inv(in[0], &outs[0]);
}
static mt_status call_linalg_det(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_det(in[0], &outs[0]);
}
static mt_status call_linalg_solve(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_solve(in[0], in[1], a->i[0] != 0, &outs[0]);
}
static mt_status call_linalg_cholesky(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_cholesky(in[0], a->i[0] != 0, &outs[0]);
}
static mt_status call_linalg_pinv(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_pinv(in[0], a->f[0], a->f[1], a->i[0] != 0, &outs[0]);
}
static mt_status call_linalg_cross(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_cross(in[0], in[1], (int)a->i[0], &outs[0]);
}

/* slogdet: outs = {sign, logabsdet}. qr: i = {mode: 0 reduced, 1 complete,
 * 2 r}, outs = {q, r}. svd: i = {full_matrices, values only}, outs = {u, s,
 * vh} (values only: u and vh stay NULL). eigh: i = {uplo ('L' or 'U'),
 * values only}, outs = {w, v}. lstsq(a, b): i = {driver: 0 the default, 1
 * gelsy, 2 gelsd}, f = {rcond}, outs = {solution, residuals, rank, sv} */
static mt_status call_linalg_slogdet(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_slogdet(in[0], &outs[0], &outs[1]);
}
static mt_status call_linalg_qr(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  static const char *const modes[3] = {"reduced", "complete", "r"};
  return mt_linalg_qr(in[0], modes[a->i[0] >= 0 && a->i[0] < 3 ? a->i[0] : 0], &outs[0], &outs[1]);
}
static mt_status call_linalg_svd(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  bool values = a->i[1] != 0;
  return mt_linalg_svd(in[0], a->i[0] != 0, values ? NULL : &outs[0], &outs[1], values ? NULL : &outs[2]);
}
static mt_status call_linalg_eigh(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_linalg_eigh(in[0], (char)a->i[0], &outs[0], a->i[1] ? NULL : &outs[1]);
}
static mt_status call_linalg_lstsq(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  static const char *const drivers[3] = {NULL, "gelsy", "gelsd"};
  return mt_linalg_lstsq(in[0], in[1], a->f[0], drivers[a->i[0] >= 0 && a->i[0] < 3 ? a->i[0] : 0], &outs[0], &outs[1],
                         &outs[2], &outs[3]);
}
/* vector_norm: the reductions' layout, f[0] the ord. matrix_norm: i = {d0,
 * d1, keepdim, kind: 0 'fro', 1 'nuc', 2 the number f[0]} */
static mt_status call_linalg_vector_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  DIMS;
  return mt_linalg_vector_norm(in[0], a->f[0], dims, nd, keep, (int)a->i[2], &outs[0]);
}
static mt_status call_linalg_matrix_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  const char *sord = a->i[3] == 0 ? "fro" : a->i[3] == 1 ? "nuc" : NULL;
  return mt_linalg_matrix_norm(in[0], sord, a->f[0], (int)a->i[0], (int)a->i[1], a->i[2] != 0, &outs[0]);
}

/* einsum of one or two operands with packed subscripts (graph/einsum.c's
 * steps): i = {operands, the subscript counts of a, b and the result, their
 * subscripts one byte each (0..25 A-Z, 26..51 a-z)} */
static int put_subscripts(char *eq, int pos, int64_t packed, int64_t count) {
  for (int j = 0; j < count && j < MT_MAXDIM; j++) {
    int id = (int)(((uint64_t)packed >> (8 * j)) & 0xff);
    eq[pos++] = (char)(id < 26 ? 'A' + id : 'a' + (id - 26) % 26);
  }
  return pos;
}
static mt_status call_einsum(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  char eq[3 * MT_MAXDIM + 4];
  int pos = put_subscripts(eq, 0, a->i[4], a->i[1]);
  if (a->i[0] == 2) {
    eq[pos++] = ',';
    pos = put_subscripts(eq, pos, a->i[5], a->i[2]);
  }
  eq[pos++] = '-';
  eq[pos++] = '>';
  eq[put_subscripts(eq, pos, a->i[6], a->i[3])] = 0;
  return mt_einsum(eq, (mt_tensor *const *)in, a->i[0] == 2 ? 2 : 1, &outs[0]);
}

/* ---- convolution(x, w, bias), conv_transpose(x, w, bias): i[0..16) the
 * mt_conv_opts, f = {act, alpha}: an activation applied to the result (the
 * JIT folds one in; 0: none). conv_backward_input(g, w),
 * conv_backward_weight(g, x): i[0..16) the options, i[16] the rank and
 * i[17..22) the sizes of the input or weight, i[22] whether the bias
 * gradient is wanted (outs = {gw, gb}) ---- */
_Static_assert(sizeof(mt_conv_opts) == 16 * sizeof(int64_t), "conv options are 16 argument words");
static mt_conv_opts conv_opts(const mt_args *a) {
  mt_conv_opts o;
  memcpy(&o, a->i, sizeof o);
  return o;
}
static mt_status call_convolution(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_conv_opts o = conv_opts(a);
  return mt_convolution_act(in[0], in[1], n > 2 ? in[2] : NULL, &o, (mt_act)a->f[0], a->f[1], &outs[0]);
}
static mt_status call_conv_transpose(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_conv_opts o = conv_opts(a);
  return mt_conv_transpose(in[0], in[1], n > 2 ? in[2] : NULL, &o, &outs[0]);
}
static mt_status call_conv_backward_input(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_conv_opts o = conv_opts(a);
  return mt_conv_backward_input(in[0], in[1], &a->i[17], (int)a->i[16], &o, &outs[0]);
}
static mt_status call_conv_backward_weight(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_conv_opts o = conv_opts(a);
  return mt_conv_backward_weight(in[0], in[1], &a->i[17], (int)a->i[16], &o, &outs[0], a->i[22] ? &outs[1] : NULL);
}

/* ---- pooling: the words of mt_pool_words (tensor/nn.h), i[22] whether
 * max pooling gives its indices (outs = {out, indices}). max_pool(x),
 * avg_pool(x): the options; max_pool_backward(g, indices),
 * avg_pool_backward(g): the input's rank and shape (avg: and the options);
 * adaptive_avg_pool(x), adaptive_max_pool(x): nsp and the output size;
 * adaptive_avg_pool_backward(g): nsp and the input's rank and shape ---- */
_Static_assert(sizeof(mt_pool_words) <= 22 * sizeof(int64_t), "pool words fit before word 22");
static mt_pool_words pool_words(const mt_args *a) {
  mt_pool_words w;
  memcpy(&w, a->i, sizeof w);
  return w;
}
static mt_status call_max_pool(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_max_pool(in[0], &w.o, &outs[0], a->i[22] ? &outs[1] : NULL);
}
static mt_status call_max_pool_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_max_pool_backward(in[0], in[1], w.shape, (int)w.ndim, (int)w.nsp, &outs[0]);
}
static mt_status call_avg_pool(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_avg_pool(in[0], &w.o, &outs[0]);
}
static mt_status call_avg_pool_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_avg_pool_backward(in[0], w.shape, (int)w.ndim, &w.o, &outs[0]);
}
static mt_status call_adaptive_avg_pool(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_adaptive_avg_pool(in[0], (int)w.nsp, w.shape, &outs[0]);
}
static mt_status call_adaptive_avg_pool_backward(const mt_tensor *const *in, int n, const mt_args *a,
                                                 mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_adaptive_avg_pool_backward(in[0], w.shape, (int)w.ndim, (int)w.nsp, &outs[0]);
}
static mt_status call_adaptive_max_pool(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_pool_words w = pool_words(a);
  return mt_adaptive_max_pool(in[0], (int)w.nsp, w.shape, &outs[0], a->i[22] ? &outs[1] : NULL);
}

/* ---- sdpa_flash(q, k, v, mask), sdpa_cudnn(q, k, v, mask): f = {scale,
 * dropout_p}, i = {is_causal, enable_gqa, dropout's stream set, its seed,
 * its first block, whether lse is wanted}; outs = {out, lse}.
 * sdpa_flash_backward, sdpa_cudnn_backward (dout, q, k, v, mask, out, lse):
 * the same words, then i[5..8) whether dq, dk, dv are wanted; outs the
 * wanted ones in that order (packed: a trace cannot hold a NULL result
 * between others). cuDNN's "no engine for the problem" is an error whose
 * message holds MT_SDPA_DECLINED ---- */
static mt_sdpa_opts sdpa_opts(const mt_args *a) {
  return (mt_sdpa_opts){.scale = a->f[0], .dropout_p = a->f[1], .is_causal = a->i[0] != 0,
                        .enable_gqa = a->i[1] != 0, .rng_set = a->i[2] != 0, .rng_seed = (uint64_t)a->i[3],
                        .rng_base = (uint64_t)a->i[4]};
}
static mt_status cudnn_declined(const char *op, mt_status st, const char *why) {
  return !st && why[0] ? mt_fail(MT_EARG, "%s: " MT_SDPA_DECLINED ": %s", op, why) : st;
}
static mt_status call_sdpa_flash(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_sdpa_opts o = sdpa_opts(a);
  return mt_sdpa_flash(in[0], in[1], in[2], in[3], &o, &outs[0], a->i[5] ? &outs[1] : NULL);
}
static mt_status call_sdpa_cudnn(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_sdpa_opts o = sdpa_opts(a);
  char why[200] = "";
  mt_status st = mt_sdpa_cudnn(in[0], in[1], in[2], in[3], &o, &outs[0], a->i[5] ? &outs[1] : NULL, why, sizeof why);
  return cudnn_declined("sdpa_cudnn", st, why);
}
/* the wanted gradients' places in outs, packed */
static void sdpa_grad_slots(const mt_args *a, mt_tensor **outs, mt_tensor **slot[3]) {
  for (int i = 0, k = 0; i < 3; i++) slot[i] = a->i[5 + i] ? &outs[k++] : NULL;
}
static mt_status call_sdpa_flash_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_sdpa_opts o = sdpa_opts(a);
  mt_tensor **g[3];
  sdpa_grad_slots(a, outs, g);
  return mt_sdpa_flash_backward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], &o, g[0], g[1], g[2]);
}
static mt_status call_sdpa_cudnn_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_sdpa_opts o = sdpa_opts(a);
  mt_tensor **g[3];
  sdpa_grad_slots(a, outs, g);
  char why[200] = "";
  mt_status st = mt_sdpa_cudnn_backward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], &o, g[0], g[1], g[2], why,
                                        sizeof why);
  return cudnn_declined("sdpa_cudnn_backward", st, why);
}

/* batch_norm(x, weight, bias, running_mean, running_var): i = {training,
 * the op, whether the statistics are wanted, where training updates the
 * running statistics: 0 in place in operands 3 and 4, 1 into results 3 and
 * 4 (their updated clones: the functional form the JIT replays)}, f = {eps,
 * momentum}; outs = {out, save_mean, save_invstd (when wanted or form 1),
 * the new running_mean and running_var (form 1)} */
static mt_status call_batch_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  bool functional = a->i[3] != 0, stats = a->i[2] || functional;
  /* form 0 writes the caller's running statistics, as mt_batch_norm does */
  mt_tensor *rm = (mt_tensor *)in[3], *rv = (mt_tensor *)in[4];
  mt_status st = MT_OK;
  if (functional && !(st = mt_clone(in[3], &outs[3])) && !(st = mt_clone(in[4], &outs[4])))
    rm = outs[3], rv = outs[4];
  if (!st)
    st = mt_batch_norm(in[0], in[1], in[2], rm, rv, a->i[0] != 0, a->f[1], a->f[0], &outs[0], stats ? &outs[1] : NULL,
                       stats ? &outs[2] : NULL);
  if (st && functional)
    for (int k = 3; k < 5; k++) mt_release(outs[k]), outs[k] = NULL;
  return st;
}

/* layer_norm(x, weight, bias): i = {number of normalized dims, the op,
 * whether the statistics are wanted}, f = {eps}; outs = {out, mean, rstd}
 * (the last two when wanted) */
static mt_status call_layer_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  bool stats = a->i[2] != 0;
  return mt_layer_norm(in[0], (int)a->i[0], in[1], in[2], a->f[0], &outs[0], stats ? &outs[1] : NULL,
                       stats ? &outs[2] : NULL);
}

/* group_norm(x, weight, bias): i = {groups, the op, whether the statistics
 * are wanted}, f = {eps}; outs = {out, mean, rstd} (the last two when
 * wanted) */
static mt_status call_group_norm(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  bool stats = a->i[2] != 0;
  return mt_group_norm(in[0], a->i[0], in[1], in[2], a->f[0], &outs[0], stats ? &outs[1] : NULL,
                       stats ? &outs[2] : NULL);
}

/* batch_norm_backward, layer_norm_backward, group_norm_backward (g, x,
 * weight, mean, rstd): i = {training | number of normalized dims | groups,
 * the op, whether grad_in, grad_weight, grad_bias are wanted}; outs the
 * wanted ones in that order (packed) */
static void norm_grad_slots(const mt_args *a, mt_tensor **outs, mt_tensor **slot[3]) {
  for (int i = 0, k = 0; i < 3; i++) slot[i] = a->i[2 + i] ? &outs[k++] : NULL;
}
static mt_status call_batch_norm_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_tensor **g[3];
  norm_grad_slots(a, outs, g);
  return mt_batch_norm_backward(in[0], in[1], in[2], in[3], in[4], a->i[0] != 0, g[0], g[1], g[2]);
}
static mt_status call_layer_norm_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_tensor **g[3];
  norm_grad_slots(a, outs, g);
  return mt_layer_norm_backward(in[0], in[1], (int)a->i[0], in[3], in[4], in[2], g[0], g[1], g[2]);
}
static mt_status call_group_norm_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_tensor **g[3];
  norm_grad_slots(a, outs, g);
  return mt_group_norm_backward(in[0], in[1], a->i[0], in[3], in[4], in[2], g[0], g[1], g[2]);
}

/* ---- movement ops that copy. cat(ts...): i = {dim (wrapped against the
 * first input that is not 1-D empty)}; stack(ts...): i = {dim of the
 * result}; flip: i = {count, dims...}; roll: i = {count (0: the flattened
 * roll), shifts i[1..8], dims i[9..16]}; tril, triu, diag: i = {diagonal};
 * diag_embed: i = {offset, d0, d1}; repeat: i = {count, reps...} ---- */
static mt_status call_cat(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_cat((mt_tensor *const *)in, n, a->i[0], &outs[0]);
}
static mt_status call_stack(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_stack((mt_tensor *const *)in, n, a->i[0], &outs[0]);
}
static mt_status call_flip(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  int dims[MT_NARGI - 1], k = (int)(a->i[0] < MT_NARGI - 1 ? a->i[0] : MT_NARGI - 1);
  for (int j = 0; j < k; j++) dims[j] = (int)a->i[1 + j];
  return mt_flip(in[0], dims, k, &outs[0]);
}
static mt_status call_roll(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  int dims[MT_MAXDIM], k = (int)(a->i[0] < MT_MAXDIM ? a->i[0] : MT_MAXDIM);
  for (int j = 0; j < k; j++) dims[j] = (int)a->i[9 + j];
  return mt_roll(in[0], &a->i[1], dims, k, &outs[0]);
}
static mt_status call_tril(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_tril(in[0], a->i[0], &outs[0]);
}
static mt_status call_triu(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_triu(in[0], a->i[0], &outs[0]);
}
static mt_status call_diag(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_diag(in[0], a->i[0], &outs[0]);
}
static mt_status call_diag_embed(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_diag_embed(in[0], a->i[0], (int)a->i[1], (int)a->i[2], &outs[0]);
}
static mt_status call_repeat(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_repeat(in[0], &a->i[1], (int)(a->i[0] < MT_NARGI - 1 ? a->i[0] : MT_NARGI - 1), &outs[0]);
}

/* ---- index ops. Inputs: x, then the index or mask, then src (NULL when
 * absent); a number argument v is i = {.., kind (mt_scalar_kind), integer
 * value}, f[0] its float value. Gathers: index_select, gather: i = {dim};
 * take, masked_select: none. The writing ops write outs[0]: x itself when
 * outs[0] == x (in place), else a copy of x (a new tensor when NULL).
 * scatter: i = {dim, kind, int, reduce} (src NULL: the value v);
 * scatter_add: i = {dim}; index_add: i = {dim, kind, int} (v: alpha);
 * index_copy: i = {dim}; index_fill: i = {dim, kind, int}; put: i =
 * {accumulate}; masked_fill: i = {0, kind, int}; masked_scatter: none.
 * Advanced indexing, index(x, idx...) and index_put(x, values, idx...):
 * i = {n, accumulate, labels given, labels[0..n)} (NULL idx: a whole
 * dim) ---- */
static mt_scalar num_arg(const mt_args *a) {
  mt_scalar v = {(mt_scalar_kind)a->i[1], {.i = a->i[2]}};
  if (v.kind == MT_SK_FLOAT) v.v.f = a->f[0];
  return v;
}
/* outs[0] ready for an in-place write of x's value (see above) */
static mt_status write_target(const mt_tensor *x, mt_tensor **outs) {
  if (outs[0] == x) return MT_OK;
  return outs[0] ? mt_copy_(outs[0], x) : mt_clone(x, &outs[0]);
}
#define WRITER(name, call)                                                                                             \
  static mt_status call_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {                \
    bool fresh = !outs[0];                                                                                             \
    mt_status st = write_target(in[0], outs);                                                                          \
    if (!st) st = call;                                                                                                \
    if (st && fresh) {                                                                                                 \
      mt_release(outs[0]);                                                                                             \
      outs[0] = NULL;                                                                                                  \
    }                                                                                                                  \
    return st;                                                                                                         \
  }
WRITER(scatter, n > 2 && in[2] ? mt_scatter_(outs[0], (int)a->i[0], in[1], in[2], (mt_reduce)a->i[3])
                               : mt_scatter_value_(outs[0], (int)a->i[0], in[1], num_arg(a), (mt_reduce)a->i[3]))
WRITER(scatter_add, mt_scatter_(outs[0], (int)a->i[0], in[1], in[2], MT_REDUCE_ADD))
WRITER(index_add, mt_index_add_(outs[0], (int)a->i[0], in[1], in[2], num_arg(a)))
WRITER(index_copy, mt_index_copy_(outs[0], (int)a->i[0], in[1], in[2]))
WRITER(index_fill, mt_index_fill_(outs[0], (int)a->i[0], in[1], num_arg(a)))
WRITER(put, mt_put_(outs[0], in[1], in[2], a->i[0] != 0))
WRITER(masked_fill, mt_masked_fill_(outs[0], in[1], num_arg(a)))
WRITER(masked_scatter, mt_masked_scatter_(outs[0], in[1], in[2]))
static mt_status call_index_select(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_index_select(in[0], (int)a->i[0], in[1], &outs[0]);
}
static mt_status call_gather(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_gather(in[0], (int)a->i[0], in[1], &outs[0]);
}
static mt_status call_take(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_take(in[0], in[1], &outs[0]);
}
static mt_status call_masked_select(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_masked_select(in[0], in[1], &outs[0]);
}
/* the labels of advanced indexing's args, or NULL */
static const int *index_labels(const mt_args *a, int *labels) {
  for (int d = 0; d < a->i[0] && d < MT_MAXDIM; d++) labels[d] = (int)a->i[3 + d];
  return a->i[2] ? labels : NULL;
}
static mt_status call_index(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  int labels[MT_MAXDIM];
  return mt_index(in[0], (mt_tensor *const *)in + 1, (int)a->i[0], index_labels(a, labels), &outs[0]);
}
static mt_status put_index(const mt_tensor *const *in, const mt_args *a, mt_tensor *x) {
  int labels[MT_MAXDIM];
  return mt_index_put_(x, (mt_tensor *const *)in + 2, (int)a->i[0], index_labels(a, labels), in[1], a->i[1] != 0);
}
WRITER(index_put, put_index(in, a, outs[0]))

/* ---- image resampling (resize.h): image_resize(x), i = {oh, ow, mode,
 * antialias}; image_resize_backward(g), i = {ih, iw, mode, antialias};
 * image_crop_resize(x, boxes), i = {oh, ow, mode, antialias} ---- */
static mt_status call_image_resize(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_image_resize(in[0], a->i[0], a->i[1], (int)a->i[2], a->i[3] != 0, &outs[0]);
}
static mt_status call_image_resize_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_image_resize_backward(in[0], a->i[0], a->i[1], (int)a->i[2], a->i[3] != 0, &outs[0]);
}
static mt_status call_image_crop_resize(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_image_crop_resize(in[0], in[1], a->i[0], a->i[1], (int)a->i[2], a->i[3] != 0, &outs[0]);
}

/* ---- audio resampling (resample.h): audio_resample(x) and
 * audio_resample_backward(g): i = {orig, new, lowpass_filter_width,
 * method, pad_left, out_len, in_len (the backward's), design_f32}, f =
 * {rolloff, beta} ---- */
static mt_resample_args resample_args(const mt_args *a) {
  return (mt_resample_args){a->i[0], a->i[1], a->i[2], a->i[3], a->i[4], a->i[5], a->f[0], a->f[1], a->i[7]};
}
static mt_status call_audio_resample(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_resample_args r = resample_args(a);
  return mt_audio_resample(in[0], &r, &outs[0]);
}
static mt_status call_audio_resample_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_resample_args r = resample_args(a);
  return mt_audio_resample_backward(in[0], &r, a->i[6], &outs[0]);
}

/* the elementwise rows' adapters: the generic ones above with the op */
#define MT_OP(...)
#define MT_UNARY_P(name, ...)                                                                                          \
  static mt_status call_un_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {             \
    return call_unary(MT_OP_##name, in, a, outs);                                                                      \
  }
/* ---- vision (vision.h): roi_align(x, rois) and roi_align_backward(g,
 * rois): i = {ph, pw, sampling_ratio, aligned, N, C, H, W} (the last four:
 * the input's shape, read by the backward), f = {spatial_scale};
 * roi_pool(x, rois): the same words, results out and argmax;
 * roi_pool_backward(g, argmax): i[4..8) the input's shape; nms(boxes,
 * scores, idxs or NULL): f = {iou_threshold} ---- */
static mt_roi_opts roi_opts(const mt_args *a) {
  mt_roi_opts o = {a->i[0], a->i[1], a->i[2], a->i[3] != 0, a->f[0]};
  return o;
}
static mt_status call_roi_align(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_roi_opts o = roi_opts(a);
  return mt_roi_align(in[0], in[1], &o, &outs[0]);
}
static mt_status call_roi_align_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_roi_opts o = roi_opts(a);
  return mt_roi_align_backward(in[0], in[1], a->i + 4, &o, &outs[0]);
}
static mt_status call_roi_pool(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  mt_roi_opts o = roi_opts(a);
  return mt_roi_pool(in[0], in[1], &o, &outs[0], &outs[1]);
}
static mt_status call_roi_pool_backward(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_roi_pool_backward(in[0], in[1], a->i + 4, &outs[0]);
}
static mt_status call_nms(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_nms(in[0], in[1], n > 2 ? in[2] : NULL, a->f[0], &outs[0]);
}
/* color_jitter(x, factors, order) and image_equalize(x): no words */
static mt_status call_color_jitter(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_color_jitter(in[0], in[1], in[2], &outs[0]);
}
static mt_status call_image_equalize(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_image_equalize(in[0], &outs[0]);
}
/* ---- audio (audio.h): lfilter(x, a, b[, zi]): i = {mode, reverse};
 * lfilter_corr(w, x): i = {K, reverse} ---- */
static mt_status call_lfilter(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_lfilter(in[0], in[1], in[2], n > 3 ? in[3] : NULL, (mt_lf_mode)a->i[0], a->i[1] != 0, &outs[0]);
}
static mt_status call_lfilter_corr(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_lfilter_corr(in[0], in[1], a->i[0], a->i[1] != 0, &outs[0]);
}

/* ---- fft (fft.h): fft_c2c i = {dims mask, forward, norm}; fft_r2c i =
 * {dims mask, norm, two-sided}; fft_c2r i = {dims mask, last dim's points, norm} ---- */
static mt_status call_fft_c2c(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_fft_c2c(in[0], a->i[0], a->i[1] != 0, (mt_fft_norm)a->i[2], &outs[0]);
}
static mt_status call_fft_r2c(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_fft_r2c(in[0], a->i[0], (mt_fft_norm)a->i[1], a->i[2] != 0, &outs[0]);
}
static mt_status call_fft_c2r(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {
  return mt_fft_c2r(in[0], a->i[0], a->i[1], (mt_fft_norm)a->i[2], &outs[0]);
}

#define MT_BINARY(name, ...)                                                                                           \
  static mt_status call_bin_##name(const mt_tensor *const *in, int n, const mt_args *a, mt_tensor **outs) {            \
    return call_binary(MT_OP_##name, in, outs);                                                                        \
  }
#define MT_COMPARE(name, ...) MT_BINARY(name)
#include "ops.def"
#undef MT_OP
#undef MT_UNARY_P
#undef MT_BINARY
#undef MT_COMPARE

/* ---- the table: a row's entry column picks call_<name> (ENTRY) or NULL
 * (NOENTRY) by pasting the column onto ENTRY_ ---- */
#define ENTRY_ENTRY(name) call_##name
#define ENTRY_NOENTRY(name) NULL
#define MT_OP(name, kind, arity, flags, dev, ac, jit, entry) [MT_OP_##name] = ENTRY_##entry(name),
#define MT_UNARY_P(name, ...) [MT_OP_##name] = call_un_##name,
#define MT_BINARY(name, ...) [MT_OP_##name] = call_bin_##name,
#define MT_COMPARE(name, ...) [MT_OP_##name] = call_bin_##name,
const mt_call_fn mt_call_fns[MT_NOPS] = {
#include "ops.def"
};
