/* nn_internal.h -- the recorded nn ops of nn.c before tracing; nn_replay.c
 * wraps each in the public mtg_ entry point that also appends a JIT trace
 * entry able to replay it. */
#ifndef MTG_NN_INTERNAL_H
#define MTG_NN_INTERNAL_H
#include "graph.h"

mt_status mtg_untraced_max_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **indices);
mt_status mtg_untraced_max_pool_backward(const mt_tensor *grad_out, const mt_tensor *indices,
                                         const int64_t *input_shape, int ndim, int nsp, mt_tensor **grad_in);
mt_status mtg_untraced_avg_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out);
mt_status mtg_untraced_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim,
                                 const mt_pool_opts *o, mt_tensor **grad_in);
mt_status mtg_untraced_adaptive_avg_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out);
mt_status mtg_untraced_adaptive_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim,
                                                  int nsp, mt_tensor **grad_in);
#endif
