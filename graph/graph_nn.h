/* graph_nn.h -- recorded ops of the nn family (graph/nn.c): convolution,
 * pooling and normalization and their backward ops, with the engine's
 * signatures (tensor/nn.h); included by graph.h. */
#ifndef MTG_GRAPH_NN_H
#define MTG_GRAPH_NN_H
#include "nn.h"

/* mtg_call of convolution or conv_transpose (a, b, bias: x, w, bias) or
 * of their backward ops conv_backward_input (g, w; the input's shape) and
 * conv_backward_weight (g, x; the weight's shape; nout 2: the bias
 * gradient too) with tensor/call.c's args (nn.c). */
mt_status mtg_conv(mt_op op, const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, const mt_conv_opts *o,
                   const int64_t *shape, int ndim, mt_tensor **outs, int nout);

/* mtg_call of a pooling op (nn.c; args as mt_pool_words): max_pool,
 * avg_pool (x; the options o), adaptive_avg_pool, adaptive_max_pool (x;
 * nsp and the output size in shape), max_pool_backward (g, ix; the input's
 * shape), avg_pool_backward (g; o and the input's shape),
 * adaptive_avg_pool_backward (g; nsp and the input's shape). The max pools
 * give {out, indices} when nout is 2 (the indices are computed anyway when
 * recording or tracing). */
mt_status mtg_pool(mt_op op, const mt_tensor *x, const mt_tensor *ix, const mt_pool_opts *o, int nsp,
                   const int64_t *shape, int ndim, mt_tensor **outs, int nout);

mt_status mtg_batch_norm(const mt_tensor *x, const mt_tensor *weight, const mt_tensor *bias, mt_tensor *running_mean,
                         mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                         mt_tensor **save_mean, mt_tensor **save_invstd);
mt_status mtg_layer_norm(const mt_tensor *x, int nnorm, const mt_tensor *weight, const mt_tensor *bias, double eps,
                         mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
mt_status mtg_group_norm(const mt_tensor *x, int64_t groups, const mt_tensor *weight, const mt_tensor *bias, double eps,
                         mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
/* mtg_call of a normalization backward op, op batch_norm_backward (arg:
 * training), layer_norm_backward (arg: the number of normalized dims) or
 * group_norm_backward (arg: groups): the wanted ones of grad_in,
 * grad_weight, grad_bias (NULL: not wanted; args as tensor/call.c says). */
mt_status mtg_norm_backward(mt_op op, const mt_tensor *grad_out, const mt_tensor *x, const mt_tensor *weight,
                            const mt_tensor *mean, const mt_tensor *rstd, int64_t arg, mt_tensor **grad_in,
                            mt_tensor **grad_weight, mt_tensor **grad_bias);

#endif
