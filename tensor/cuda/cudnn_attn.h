/* cudnn_attn.h -- cuDNN's fused attention (cudnn_attn.c) on raw device
 * pointers. Layouts: q, o, do, dq (b, hq, sq, d); k, v, dk, dv (b, hk, skv,
 * d), each with the strides in mt_cudnn_attn.str (contiguous where all
 * zero; the last dim dense: BHSD, BSHD, interleaved qkv all fit); dq_acc
 * float32 (b, hq, sq, d) with strides str[MT_CA_DQACC]; stats and ssum
 * (b, hq, sq) float32 contiguous, stats the natural log-sum-exp
 * of each scaled, masked score row. hk divides hq (GQA: q head h uses k/v
 * head h / (hq / hk)). The causal mask is top-left aligned (query i sees
 * keys j <= i). */
#ifndef MT_CUDNN_ATTN_H
#define MT_CUDNN_ATTN_H

#include "mt.h"

enum { MT_CA_Q, MT_CA_K, MT_CA_V, MT_CA_O, MT_CA_DO, MT_CA_DQ, MT_CA_DK, MT_CA_DV, MT_CA_DQACC, MT_CA_N };

typedef struct mt_cudnn_attn {
  int dev;
  mt_dtype dt; /* float16 or bfloat16 */
  int64_t b, hq, hk, sq, skv, d;
  bool causal;
  float scale;
  const void *bias;                   /* additive mask of dt, NULL: none */
  int64_t bias_dims[4], bias_str[4];  /* (b or 1, hq or 1, sq, skv) and its strides */
  int64_t str[MT_CA_N][4];            /* element strides of each operand's (b, h, s, d); zeros: contiguous */
} mt_cudnn_attn;

/* Why cuDNN attention cannot run on dev at all (NULL: it may): cuDNN
 * missing or too old, a GPU before sm_80. */
const char *mt_cudnn_attn_unavailable(int dev);

/* o and stats from q, k, v. When cuDNN has no engine for the problem it
 * returns MT_OK with why[0] set (the caller runs another backend); the
 * answer is cached per problem, like the execution plans. */
mt_status mt_cudnn_attn_fwd(const mt_cudnn_attn *p, const void *q, const void *k, const void *v, void *o,
                            float *stats, char *why, size_t nwhy);
/* dq, dk, dv from the forward's q, k, v, o, stats and the gradient do of o.
 * ssum (b*hq*sq floats) and dq_acc (b*hq*sq*d floats; zeroed before cuDNN
 * 9.6, which zeroes it itself) are scratch the caller provides. Declines as
 * the forward does. */
mt_status mt_cudnn_attn_bwd(const mt_cudnn_attn *p, const void *q, const void *k, const void *v, const void *o,
                            const void *dout, const float *stats, void *dq, void *dk, void *dv, float *ssum,
                            float *dq_acc, char *why, size_t nwhy);

#endif
