/* graph.h -- the recording layer's public API (mtg_ prefix): grad mode, the
 * autograd state of tensors, recorded versions of the engine's ops, and the
 * backward engine. It sits between tensor/ (which knows nothing of it) and
 * lua_bindings/; it holds no Lua. Recorded ops have the engine's signatures:
 * mtg_X(args) runs mt_X(args) and, when grad mode is on and an input
 * requires grad, appends a node to the graph of the outputs. */
#ifndef MTG_GRAPH_H
#define MTG_GRAPH_H
#include "attention.h"
#include "index.h"
#include "linalg.h"
#include "mt.h"
#include "nn.h"
#include "reduce.h"
#include "shape.h"

typedef struct mtg_node mtg_node;

/* ---- grad mode (per thread) ---- */
bool mtg_grad_enabled(void);
/* Sets grad mode; returns the previous setting. */
bool mtg_set_grad_enabled(bool on);

/* ---- autograd state of a tensor ---- */
bool mtg_requires_grad(const mt_tensor *t);
/* Leaves only (else an error naming the tensor's grad_fn); floating dtypes only. */
mt_status mtg_set_requires_grad(mt_tensor *t, bool on);
/* A leaf: no grad_fn (user-created, or detached). */
bool mtg_is_leaf(const mt_tensor *t);
/* The accumulated gradient (borrowed), or NULL. */
mt_tensor *mtg_grad(const mt_tensor *t);
/* Replaces t's gradient (g may be NULL; a new reference is taken). */
mt_status mtg_set_grad(mt_tensor *t, mt_tensor *g);
/* The node that produced t, or NULL; its display name ("MulBackward0"). */
mtg_node *mtg_grad_fn(const mt_tensor *t);
const char *mtg_node_name(const mtg_node *n);
/* Non-leaf t keeps its gradient in .grad during backward. */
mt_status mtg_retain_grad(mt_tensor *t);
bool mtg_retains_grad(const mt_tensor *t);
/* A new tensor sharing t's storage, outside any graph. */
mt_status mtg_detach(const mt_tensor *t, mt_tensor **out);
/* Cuts t out of its graph in place (t becomes a leaf not requiring grad). */
mt_status mtg_detach_(mt_tensor *t);

/* A hook sees the gradient flowing into t and may replace it: it sets
 * *replace to a new reference, or leaves it NULL to keep the gradient. The
 * context is freed with free_ctx when the hook's graph node goes away. */
typedef mt_status (*mtg_hook_fn)(void *ctx, const mt_tensor *grad, mt_tensor **replace);
mt_status mtg_register_hook(mt_tensor *t, mtg_hook_fn fn, void *ctx, void (*free_ctx)(void *));

/* A node whose backward is a callback: fn gets ctx, the gradients of the
 * node's nout outputs (never NULL: missing ones are zero-filled) and sets
 * gin[i] (a new reference, or NULL for no gradient) for each of its nin
 * inputs. mtg_record_custom makes the node with inputs ins (NULL entries
 * and inputs not requiring grad get no gradient) and makes outs its
 * outputs. The node owns ctx from the call on (freed with ctx_free with
 * its saved tensors, also on failure). Compiled graphs use it for their
 * compiled backward. */
typedef mt_status (*mtg_custom_fn)(void *ctx, mt_tensor *const *gout, int nout, mt_tensor **gin, int nin);
mt_status mtg_record_custom(const char *name, mtg_custom_fn fn, void *ctx, void (*ctx_free)(void *),
                            const mt_tensor *const *ins, int nin, mt_tensor *const *outs, int nout);

/* ---- backward ---- */
typedef struct mtg_backward_opts {
  bool retain_graph;
  bool create_graph; /* record the backward pass itself (higher-order grads) */
  bool allow_unused; /* autograd.grad: an input the outputs do not reach gives NULL */
} mtg_backward_opts;

/* Backpropagates from outputs[0..n) seeded with grads[i] (NULL: a scalar
 * output seeded with 1). With inputs == NULL, gradients accumulate into the
 * .grad of the leaves (tensor:backward()); otherwise nothing is accumulated
 * and the gradient of each inputs[i] is returned in results[i] (new
 * references; NULL for unreached inputs when allow_unused). */
mt_status mtg_backward(mt_tensor *const *outputs, mt_tensor *const *grads, int n, mt_tensor *const *inputs,
                       int ninputs, mtg_backward_opts opts, mt_tensor **results);

/* ---- derivative coverage (derivatives.c) ---- */
/* 1: op has a derivative; 0: explicitly marked as having none (with the
 * reason in *why); -1: differentiable op lacking a derivative (a bug). */
int mtg_derivative_status(mt_op op, const char **why);

/* ---- recorded ops (same contracts as the engine's mt_ functions) ---- */
mt_status mtg_unary(mt_op op, const mt_tensor *x, mt_tensor **out);
mt_status mtg_unary_p(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out);
mt_status mtg_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* Any elementwise op through its engine entry (mt_call; args as tensor/
 * call.c lays them out: clamp(x, lo, hi), where(cond, a, b), lerp(a, b, w),
 * nan_to_num(x) f = {nan, posinf, neginf}), recorded with the in-place and
 * out= rules of the elementwise ops (*out == ins[0]: in place). */
mt_status mtg_ew(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **out);
/* where(cond, a, b) as mtg_ew (a thin form: derivatives use it often) */
static inline mt_status mtg_where(const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_tensor *ins[3] = {cond, a, b};
  return mtg_ew(MT_OP_where, ins, 3, NULL, out);
}
mt_status mtg_copy_(mt_tensor *dst, const mt_tensor *src);
mt_status mtg_fill_(mt_tensor *dst, mt_scalar v);
mt_status mtg_to_dtype(const mt_tensor *t, mt_dtype dt, bool copy, mt_tensor **out);
mt_status mtg_contiguous(const mt_tensor *t, mt_tensor **out);
mt_status mtg_clone(const mt_tensor *t, mt_tensor **out);

/* views and shape */
mt_status mtg_as_strided(const mt_tensor *base, int ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset, mt_tensor **out);
mt_status mtg_view(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mtg_reshape(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mtg_permute(const mt_tensor *t, const int *perm, int n, mt_tensor **out);
mt_status mtg_transpose(const mt_tensor *t, int d0, int d1, mt_tensor **out);
mt_status mtg_expand(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mtg_squeeze(const mt_tensor *t, int dim, mt_tensor **out);
mt_status mtg_unsqueeze(const mt_tensor *t, int dim, mt_tensor **out);
mt_status mtg_narrow(const mt_tensor *t, int dim, int64_t start, int64_t len, mt_tensor **out);
mt_status mtg_select(const mt_tensor *t, int dim, int64_t index, mt_tensor **out);
/* The t->shape[dim] select views of t along dim (0-based) into outs, made
 * by one node whose backward stacks their gradients (PyTorch's unbind). */
mt_status mtg_unbind(const mt_tensor *t, int dim, mt_tensor **outs);
mt_status mtg_slice(const mt_tensor *t, int dim, int64_t start, int64_t stop, int64_t step, mt_tensor **out);
mt_status mtg_flatten(const mt_tensor *t, int start, int end, mt_tensor **out);
mt_status mtg_unfold(const mt_tensor *t, int dim, int64_t size, int64_t step, mt_tensor **out);
mt_status mtg_diagonal(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out);

/* matmul (1-D operands recorded as views, linalg.c) */
mt_status mtg_matmul(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* einsum, contracted left to right in recorded steps of one or two
 * operands (einsum.c; each step is einsum's engine entry) */
mt_status mtg_einsum(const char *equation, mt_tensor *const *ops, int n, mt_tensor **out);

/* mtg_call of max, min, median or nanmedian in the form of all elements
 * (a 0-dim result; the gradient split evenly among ties). */
mt_status mtg_all_elements(mt_op op, const mt_tensor *x, mt_tensor **out);

/* ---- the generic recording path (call.c) ---- */
/* Runs op through its engine entry (mt_call; tensor/call.c says what args
 * holds for each op) into outs[0..nout) under the out convention, and
 * records it like every such op: a node with the op's derivative when grad
 * mode is on and an input requires grad (out= is then an error), a trace
 * entry while the JIT traces (ops it can lower). */
mt_status mtg_call(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **outs, int nout);
/* mtg_call of an op that gives only the wanted ones of its nwant (<= 8)
 * results, packed (a NULL result between others could not be traced: the
 * backward ops): want[k] NULL is not wanted; args word first + k says
 * which are. Nothing wanted: MT_OK, nothing run. */
mt_status mtg_call_wanted(mt_op op, const mt_tensor *const *ins, int nin, mt_args *a, int first,
                          mt_tensor **const *want, int nwant);

/* mtg_call of a reduction over dims of x (none: all; negative from the
 * end): args {mask of dims, keepdim, dtype (-1: default), no dims listed},
 * f[0] = num
 * (var's correction, norm's p); nout results (var_mean: var, mean). */
mt_status mtg_reduce(mt_op op, const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, double num,
                     mt_tensor **outs, int nout);
/* mtg_call of an op along one dim of x (negative from the end; softmax,
 * cumsum): args {dim, dtype (-1: default)}. */
mt_status mtg_along(mt_op op, const mt_tensor *x, int dim, int dtype, mt_tensor **out);

/* mtg_call of cat or stack (op) of ts[0..n) along dim (negative from the
 * end): args {dim, wrapped as the op wraps it} (movement.c). */
mt_status mtg_join(mt_op op, mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out);

/* mtg_call of an index op (index.c; tensor/call.c's layout): x, its index
 * or mask, src (NULL: none, or scatter's value form), dim, a number v
 * (scatter's value, index_add's alpha, the fills' value) and the op's flag
 * (scatter: the reduction, put: accumulate); *out == x writes x in place
 * (scatter with src and reduce add is scatter_add). */
mt_status mtg_index_op(mt_op op, const mt_tensor *x, const mt_tensor *index, const mt_tensor *src, int dim,
                       mt_scalar v, int flag, mt_tensor **out);
/* mtg_call of advanced indexing: x[indices] (values NULL: index), or
 * x[indices] = values (+= when accumulate; index_put, in place when *out
 * == x); indices[d] NULL for a whole dim, labels as mt_index's. */
mt_status mtg_index_adv(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels,
                        const mt_tensor *values, bool accumulate, mt_tensor **out);

/* ---- composites of recorded ops (movement.c): the engine's function of
 * tensor/shape.c when nothing records, else built from recorded ops (with
 * the engine's checks and messages), so they are differentiable ---- */
mt_status mtg_hstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_vstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_dstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mtg_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out);
mt_status mtg_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out);
/* views */
mt_status mtg_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out);
mt_status mtg_squeeze_dims(const mt_tensor *t, const int *dims, int n, mt_tensor **out);
mt_status mtg_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out);
mt_status mtg_atleast(const mt_tensor *t, int rank, mt_tensor **out);
mt_status mtg_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out);
mt_status mtg_meshgrid(mt_tensor *const *ts, int n, bool xy, mt_tensor **outs);

/* ---- scaled dot product attention (attention.c) ---- */
enum { MTG_SDPA_MATH = 1, MTG_SDPA_FLASH = 2, MTG_SDPA_CUDNN = 4 }; /* backend bits */
/* The enabled backends (bits above; all by default) of this thread. */
unsigned mtg_sdpa_enabled(void);
/* Sets them; returns the previous set. */
unsigned mtg_sdpa_set_enabled(unsigned bits);
/* The backend mtg_sdpa would run for these inputs (a bit above); bad
 * inputs, or no enabled backend that can take them, are errors whose
 * message says why each backend was passed over. */
mt_status mtg_sdpa_select(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                          const mt_sdpa_opts *o, int *backend);
/* The same, with a line "backend: why" in notes (n bytes, may be NULL)
 * for each backend preferred to the chosen one but passed over. The order
 * of preference: on CUDA cudnn, flash, math; on the CPU flash, math. */
mt_status mtg_sdpa_select_notes(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                const mt_sdpa_opts *o, int *backend, char *notes, size_t n);
/* softmax(q k^T * scale + mask) v through the selected backend; when cuDNN
 * declines the problem, through the next one. */
mt_status mtg_sdpa(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                   const mt_sdpa_opts *o, mt_tensor **out);
/* The math backend alone (the reference; recorded ops). */
mt_status mtg_sdpa_math(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out);
/* mtg_call of a fused backend's forward, op sdpa_flash or sdpa_cudnn
 * (tensor/attention.h says what each takes): out and lse (may be NULL: not
 * wanted). The dropout stream is reserved here, so the node keeps it. An
 * error when cuDNN declines (its message holds MT_SDPA_DECLINED). */
mt_status mtg_sdpa_fused(mt_op op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                         const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse);
/* mtg_call of its backward op, sdpa_flash_backward or sdpa_cudnn_backward:
 * the wanted ones of dq, dk, dv (NULL: not wanted). */
mt_status mtg_sdpa_fused_backward(mt_op op, const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k,
                                  const mt_tensor *v, const mt_tensor *mask, const mt_tensor *out,
                                  const mt_tensor *lse, const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk,
                                  mt_tensor **dv);

/* ---- convolution, pooling, normalization (nn.c) ---- */
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

/* mtg_call of batch_norm (tensor/nn.h says what it takes): out and, when
 * wanted (not NULL), save_mean and save_invstd. Training updates
 * running_mean and running_var in place; while tracing, as results of the
 * call copied into them (so the JIT writes the buffers back). */
mt_status mtg_batch_norm(const mt_tensor *x, const mt_tensor *weight, const mt_tensor *bias, mt_tensor *running_mean,
                         mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                         mt_tensor **save_mean, mt_tensor **save_invstd);
/* mtg_call of layer_norm (arg: the number of normalized dims) or
 * group_norm (arg: groups): out and, when wanted (not NULL), mean and rstd. */
mt_status mtg_norm(mt_op op, const mt_tensor *x, int64_t arg, const mt_tensor *weight, const mt_tensor *bias,
                   double eps, mt_tensor **out, mt_tensor **mean, mt_tensor **rstd);
/* mtg_call of a normalization backward op, op batch_norm_backward (arg:
 * training), layer_norm_backward (arg: the number of normalized dims) or
 * group_norm_backward (arg: groups): the wanted ones of grad_in,
 * grad_weight, grad_bias (NULL: not wanted; args as tensor/call.c says). */
mt_status mtg_norm_backward(mt_op op, const mt_tensor *grad_out, const mt_tensor *x, const mt_tensor *weight,
                            const mt_tensor *mean, const mt_tensor *rstd, int64_t arg, mt_tensor **grad_in,
                            mt_tensor **grad_weight, mt_tensor **grad_bias);

/* Complex views and constructions, recorded (complex.c): view_as_real,
 * view_as_complex, the real (part 0) or imaginary (part 1) part as a view,
 * torch.complex and torch.polar. */
mt_status mtg_view_as_real(const mt_tensor *t, mt_tensor **out);
mt_status mtg_view_as_complex(const mt_tensor *t, mt_tensor **out);
mt_status mtg_complex_part(const mt_tensor *t, int part, mt_tensor **out);
mt_status mtg_complex(const mt_tensor *re, const mt_tensor *im, mt_tensor **out);
mt_status mtg_polar(const mt_tensor *abs, const mt_tensor *angle, mt_tensor **out);

#endif
