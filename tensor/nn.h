/* nn.h -- engine ops behind nn's convolution, pooling and normalization
 * layers, forward and backward: conv.c, pool.c, norm.c. Every backward is an
 * engine op of its own, so autograd (graph/) can write derivatives as calls
 * of these. Same conventions as mt.h: mt_status results, `**out` (NULL:
 * allocate). Ops with several results always allocate them (pass pointers
 * to NULL); a NULL pointer for an optional result means "not wanted".
 * Layouts are PyTorch's: input (N, C, *spatial) or unbatched (C, *spatial),
 * 1 to 3 spatial dims. Floating dtypes only; float16/bfloat16 compute in
 * float32. Index values (max pooling) are 1-based flat positions in the
 * input's spatial plane, as index values are everywhere in the engine. */
#ifndef MT_NN_H
#define MT_NN_H

#include "mt.h"

/* ---- convolution (conv.c) ---- */

/* Per spatial dim (entries past the conv's spatial rank are ignored):
 * stride >= 1, padding pad (before) and pad_hi (after) >= 0, dilation >= 1,
 * output_padding (transposed only) smaller than stride or dilation. */
typedef struct mt_conv_opts {
  int64_t stride[3], pad[3], pad_hi[3], dilation[3], output_padding[3];
  int64_t groups;
} mt_conv_opts;

/* stride 1, padding 0, dilation 1, output_padding 0, groups 1 */
void mt_conv_opts_init(mt_conv_opts *o);
/* padding="same" for weight w (Cout, Cin/groups, *k): total dilation*(k-1)
 * per dim, the odd element after (as PyTorch). Strided convs are an error. */
mt_status mt_conv_same_padding(const char *op, const mt_tensor *w, mt_conv_opts *o);

/* y = conv(x, w) + bias: x (N, Cin, *in), w (Cout, Cin/groups, *k), bias
 * (Cout) or NULL; y (N, Cout, *out) with out = (in + pad + pad_hi -
 * dilation*(k-1) - 1) / stride + 1. float32 runs through oneDNN, float64
 * through reference loops. */
mt_status mt_convolution(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                         mt_tensor **out);
/* act(mt_convolution(x, w, bias, o)) in one call: a oneDNN post-op for
 * float32 (the JIT's conv epilogue), else applied after. alpha: act's
 * parameter (leaky_relu's slope). */
mt_status mt_convolution_act(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                             mt_act act, double alpha, mt_tensor **out);
/* Gradient wrt the input of mt_convolution: grad_out (N, Cout, *out), w as
 * above, input_shape the shape of x (ndim entries). */
mt_status mt_conv_backward_input(const mt_tensor *grad_out, const mt_tensor *w, const int64_t *input_shape, int ndim,
                                 const mt_conv_opts *o, mt_tensor **grad_in);
/* Gradients wrt the weight (shape weight_shape) and, when grad_bias is not
 * NULL, the bias (sum of grad_out over N and spatial dims). */
mt_status mt_conv_backward_weight(const mt_tensor *grad_out, const mt_tensor *x, const int64_t *weight_shape, int ndim,
                                  const mt_conv_opts *o, mt_tensor **grad_weight, mt_tensor **grad_bias);
/* Transposed convolution (the adjoint of mt_convolution): x (N, Cin, *in),
 * w (Cin, Cout/groups, *k), bias (Cout) or NULL; out = (in - 1) * stride -
 * pad - pad_hi + dilation*(k-1) + output_padding + 1. Its derivatives are
 * ops above: grad x = mt_convolution(grad, w, NULL, o); grad w =
 * mt_conv_backward_weight(x, grad, w->shape, ..., o) (x plays grad_out);
 * grad bias = sum of grad over N and spatial dims. */
mt_status mt_conv_transpose(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                            mt_tensor **out);
/* Drops the cached oneDNN primitives (cpu/conv_dnnl.c). */
void mt_conv_cache_clear(void);
/* "direct", "gemm", "winograd" or "ref": how a float32 forward conv of these
 * shapes runs (for tests and the docs); NULL with a message on bad input. */
const char *mt_conv_algorithm(const mt_tensor *x, const mt_tensor *w, const mt_conv_opts *o);

/* ---- pooling (pool.c) ---- */

typedef struct mt_pool_opts {
  int nsp;                                          /* spatial dims, 1..3 */
  int64_t kernel[3], stride[3], pad[3], dilation[3]; /* stride 0: = kernel */
  bool ceil_mode, count_include_pad;                /* count_include_pad: avg only */
  int64_t divisor_override;                         /* avg only; 0: none */
} mt_pool_opts;

/* The argument words of the pooling rows (tensor/call.c; also the JIT's
 * attribute words of their traced calls, graph/nn_replay.c): the options
 * (plain pools), the number of spatial dims, and a shape (the backward
 * ops' input shape; the adaptive pools' output size). Word 22 (after
 * them): whether max pooling gives its indices too. */
typedef struct mt_pool_words {
  mt_pool_opts o;
  int64_t nsp, ndim, shape[5];
} mt_pool_words;

/* Max over windows; NaN wins. indices (int64, same shape as the result)
 * may be NULL. */
mt_status mt_max_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **indices);
/* The JIT's compact max pool, for pools whose windows tile the plane (2-D,
 * stride == kernel, no padding, dilation or ceil_mode; float32/64): loc
 * (uint8, the result's shape) holds each maximum's position inside its
 * window, kh * KW + kw, the element PyTorch's index names (NaN and tie
 * rules included); MT_EARG for other pools. The backward scatters
 * grad_out to those positions. */
mt_status mt_max_pool_local(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **loc);
mt_status mt_max_pool_local_backward(const mt_tensor *grad_out, const mt_tensor *loc, const int64_t *input_shape,
                                     int ndim, const mt_pool_opts *o, mt_tensor **grad_in);
/* Scatters grad_out to the positions in indices (of max_pool or
 * adaptive_max_pool with nsp spatial dims), adding where windows share a
 * maximum. */
mt_status mt_max_pool_backward(const mt_tensor *grad_out, const mt_tensor *indices, const int64_t *input_shape,
                               int ndim, int nsp, mt_tensor **grad_in);
/* Mean over windows (no dilation), PyTorch's divisor rules. */
mt_status mt_avg_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out);
mt_status mt_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim,
                               const mt_pool_opts *o, mt_tensor **grad_in);
/* Adaptive pools to output_size (nsp entries, each >= 0): window i spans [floor(i*in/out), ceil((i+1)*in/out)). */
mt_status mt_adaptive_avg_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out);
mt_status mt_adaptive_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim, int nsp,
                                        mt_tensor **grad_in);
mt_status mt_adaptive_max_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out,
                               mt_tensor **indices);

/* ---- normalization (norm.c). Statistics accumulate in float64. ---- */

/* x (N, C, *). training: batch statistics over N and spatial dims (biased
 * variance normalizes; running_var, when given, gets the unbiased one:
 * running = (1 - momentum) * running + momentum * stat, written in place).
 * Not training: running_mean/running_var (required) normalize. weight,
 * bias: (C) or NULL. save_mean and save_invstd (C, float32 for half
 * inputs) are the statistics used -- in eval mode the running ones, as
 * 1/sqrt(var + eps) -- and are what mt_batch_norm_backward needs. */
mt_status mt_batch_norm(const mt_tensor *x, const mt_tensor *weight, const mt_tensor *bias, mt_tensor *running_mean,
                        mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                        mt_tensor **save_mean, mt_tensor **save_invstd);
/* grad_in, grad_weight, grad_bias (each may be NULL: not wanted). training
 * says whether the statistics were the batch's (they then depend on x). */
mt_status mt_batch_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, const mt_tensor *weight,
                                 const mt_tensor *save_mean, const mt_tensor *save_invstd, bool training,
                                 mt_tensor **grad_in, mt_tensor **grad_weight, mt_tensor **grad_bias);
/* Normalizes over the last `nnorm` dims of x; weight/bias have those dims'
 * shape or are NULL. mean and rstd have x's leading dims followed by nnorm
 * 1s (PyTorch's native_layer_norm). */
mt_status mt_layer_norm(const mt_tensor *x, int nnorm, const mt_tensor *weight, const mt_tensor *bias, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
mt_status mt_layer_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, int nnorm, const mt_tensor *mean,
                                 const mt_tensor *rstd, const mt_tensor *weight, mt_tensor **grad_in,
                                 mt_tensor **grad_weight, mt_tensor **grad_bias);
/* x (N, C, *) in `groups` groups of channels; weight/bias (C) or NULL;
 * mean and rstd are (N, groups). */
mt_status mt_group_norm(const mt_tensor *x, int64_t groups, const mt_tensor *weight, const mt_tensor *bias, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
mt_status mt_group_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, int64_t groups, const mt_tensor *mean,
                                 const mt_tensor *rstd, const mt_tensor *weight, mt_tensor **grad_in,
                                 mt_tensor **grad_weight, mt_tensor **grad_bias);

#endif
