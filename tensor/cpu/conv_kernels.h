/* conv_kernels.h -- CPU convolution kernels (engine-internal): oneDNN for
 * float32 (conv_dnnl.c) and reference loops for float32/float64
 * (conv_ref.c). conv.c checks shapes and hands over contiguous buffers. */
#ifndef MT_CPU_CONV_KERNELS_H
#define MT_CPU_CONV_KERNELS_H

#include "mt.h"

/* One convolution problem in the forward direction: x (N, C, *in) -> y (N,
 * K, *out), weight (K, C/G, *k); nsp spatial dims (1..3). pad_lo/pad_hi
 * are the padding before and after. */
typedef struct mt_conv_problem {
  int nsp;
  int64_t N, C, K, G;
  int64_t in[3], out[3], k[3], stride[3], dil[3], pad_lo[3], pad_hi[3];
} mt_conv_problem;

/* How a float32 problem runs through oneDNN. */
typedef enum mt_conv_algo { MT_CONV_DIRECT, MT_CONV_GEMM, MT_CONV_WINOGRAD, MT_CONV_REF } mt_conv_algo;

/* oneDNN, float32, contiguous buffers. b (fwd) and gb (bwd weights) may be
 * NULL; fwd applies act (alpha: its parameter) to y as a post-op where the
 * chosen implementation does so fast, and says in *act_done (may be NULL)
 * whether it did. MT_EARG (message set) if oneDNN cannot run the problem. */
mt_status mt_dnnl_conv_fwd(const mt_conv_problem *p, const float *x, const float *w, const float *b, mt_act act,
                           double alpha, bool *act_done, float *y);
mt_status mt_dnnl_conv_bwd_data(const mt_conv_problem *p, const float *gy, const float *w, float *gx);
mt_status mt_dnnl_conv_bwd_weights(const mt_conv_problem *p, const float *gy, const float *x, float *gw, float *gb);
/* The algorithm mt_dnnl_conv_fwd picks for p (MT_CONV_REF: oneDNN cannot). */
mt_conv_algo mt_dnnl_conv_fwd_algo(const mt_conv_problem *p);
void mt_dnnl_conv_cache_clear(void);

/* Reference loops (dt MT_FLOAT32 or MT_FLOAT64, sums in double), same
 * buffers as above. */
mt_status mt_ref_conv_fwd(mt_dtype dt, const mt_conv_problem *p, const void *x, const void *w, const void *b, void *y);
mt_status mt_ref_conv_bwd_data(mt_dtype dt, const mt_conv_problem *p, const void *gy, const void *w, void *gx);
mt_status mt_ref_conv_bwd_weights(mt_dtype dt, const mt_conv_problem *p, const void *gy, const void *x, void *gw,
                                  void *gb);

#endif
