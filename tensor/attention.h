/* attention.h -- engine ops of scaled dot product attention (attention.c,
 * cpu/attention_kernels.c): the flash forward and backward, and the input
 * checks that the math backend (a composition of recorded ops in
 * graph/attention.c) shares. Same conventions as mt.h. Layouts are
 * PyTorch's: q (..., L, E), k (..., S, E), v (..., S, Ev), out (..., L, Ev).
 * Causal masks are top-left aligned (query i sees keys j <= i, also when
 * L != S, as PyTorch's math path). A row whose keys are all masked gives
 * NaN, as softmax of a row of -inf does in PyTorch's math path. */
#ifndef MT_ATTENTION_H
#define MT_ATTENTION_H

#include "mt.h"

typedef struct mt_sdpa_opts {
  double scale;     /* <= 0 or NaN: 1/sqrt(E) */
  double dropout_p; /* math backend; flash on CUDA (the CPU flash ops require 0) */
  bool is_causal;   /* excludes an explicit mask */
  bool enable_gqa;  /* k, v may have fewer heads (dim -3) than q, dividing them */
  /* Dropout's random stream (flash on CUDA): Philox key and first block,
   * reserved by mt_sdpa_reserve_dropout; a forward without them reserves
   * its own, a backward needs the forward's. */
  bool rng_set;
  uint64_t rng_seed, rng_base;
} mt_sdpa_opts;

/* The facts both backends need, from mt_sdpa_check. */
typedef struct mt_sdpa_dims {
  int64_t L, S, E, Ev;
  int64_t hq, hk; /* heads (dim -3; 1 for rank 2) */
  double scale;   /* the effective scale */
  bool same_batch; /* q, k, v have equal batch dims (but GQA heads): flash can run */
} mt_sdpa_dims;

/* Validates q, k, v, mask (NULL: none) and the options; messages name `op`
 * and say what to change. mask: bool (true = attend) or q's floating dtype
 * (added to the scores), broadcastable to (batch..., L, S). */
mt_status mt_sdpa_check(const char *op, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                        const mt_tensor *mask, const mt_sdpa_opts *o, mt_sdpa_dims *d);

/* The fused backends' output sizes into os (q's batch dims, L, Ev); the batch rank. */
int mt_sdpa_out_shape(const mt_tensor *q, const mt_sdpa_dims *d, int64_t *os);
/* The fused backends' results: on failure everything freed; l to *lse when
 * asked (else freed), r through mt_deliver (out=); the asked-for gradients
 * delivered, the others freed. */
mt_status mt_sdpa_hand_out(const char *op, mt_status st, mt_tensor *r, mt_tensor *l, mt_tensor **out,
                           mt_tensor **lse);
mt_status mt_sdpa_hand_out_grads(const char *op, mt_status st, mt_tensor *rq, mt_tensor *rk, mt_tensor *rv,
                                 mt_tensor **dq, mt_tensor **dk, mt_tensor **dv);

/* Tiled attention with online softmax (never the L x S matrix): out
 * (batch..., L, Ev) and lse (batch..., L), the log-sum-exp of each scaled,
 * masked score row (what the backward needs). float32 and float64; q, k, v
 * batch dims must be equal (GQA heads aside); the mask may broadcast. */
mt_status mt_sdpa_flash(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse);
/* Gradients of mt_sdpa_flash wrt q, k, v (each may be NULL: not wanted,
 * but they are computed together) from dout, the inputs and the forward's
 * out and lse. The mask gets no gradient. */
mt_status mt_sdpa_flash_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                 const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                 const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv);

/* ---- the cuDNN backend (attention_cudnn.c, cuda/cudnn_attn.c) ----
 * CUDA float16/bfloat16, head dims 64 and 128 (256 when no gradient is
 * wanted, grad false), equal q/k/v batch dims (GQA heads aside), no
 * dropout, a bool or additive mask of shape (batch | 1, heads | 1, L, S).
 * Why it cannot take these inputs (NULL: it can; buf holds longer notes). */
const char *mt_sdpa_cudnn_refusal(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                  const mt_sdpa_opts *o, const mt_sdpa_dims *d, bool grad, char *buf, size_t n);
/* out and lse (batch..., L; float32) as mt_sdpa_flash gives them. When
 * cuDNN has no engine for the problem: MT_OK, *out untouched and why set. */
mt_status mt_sdpa_cudnn(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse, char *why, size_t nwhy);
/* The words of the error the engine entries (call.c) give when cuDNN
 * declines: graph/attention.c falls back to the next backend on it. */
#define MT_SDPA_DECLINED "cuDNN declined the problem"
/* dq, dk, dv (each may be NULL) of mt_sdpa_cudnn; declines as it does. */
mt_status mt_sdpa_cudnn_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                 const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                 const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv, char *why,
                                 size_t nwhy);

/* Reserves dropout's random blocks for q's device generator into o (when
 * dropout_p > 0 and none are set): one word per score (batch..., L, S), as
 * mt_bernoulli_ on a tensor of that shape reserves, so flash and math draw
 * the same keep mask from the same generator state. */
void mt_sdpa_reserve_dropout(const mt_tensor *q, const mt_tensor *k, mt_sdpa_opts *o);

/* The CUDA flash kernels (attention_cuda.c): bfloat16 and float16, head
 * dims 64 and 128 (256 forward only), dropout; float32 (64 and 128, no mask
 * nor dropout); lse is float32. Called by
 * mt_sdpa_flash and mt_sdpa_flash_backward for CUDA tensors. */
mt_status mt_sdpa_flash_cuda(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                             const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse);
mt_status mt_sdpa_flash_backward_cuda(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k,
                                      const mt_tensor *v, const mt_tensor *mask, const mt_tensor *out,
                                      const mt_tensor *lse, const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk,
                                      mt_tensor **dv);
/* Why the CUDA flash kernels cannot take these inputs (NULL: they can);
 * `backward`: a gradient will be wanted. float32 runs on the SIMT kernels
 * (head dims 64 and 128; no mask, no dropout). */
const char *mt_sdpa_flash_cuda_refusal(const mt_tensor *q, const mt_tensor *mask, const mt_sdpa_opts *o,
                                       const mt_sdpa_dims *d, bool backward);

/* Tile sizes (queries x keys) of the flash kernels; tests shrink them to
 * exercise partial tiles. Values < 1 restore the defaults. */
void mt_sdpa_set_blocks(int64_t bq, int64_t bk);
void mt_sdpa_get_blocks(int64_t *bq, int64_t *bk);

#endif
