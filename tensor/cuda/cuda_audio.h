/* cuda_audio.h -- CUDA kernels of the audio filter ops (cuda/lfilter.c,
 * kernels in lfilter.cu). tensor/lfilter.c checks the arguments and hands
 * over contiguous tensors of one floating dtype. */
#ifndef MT_CUDA_AUDIO_H
#define MT_CUDA_AUDIO_H

#include "../cpu/lfilter_kernels.h"

/* y = lfilter(x, a, b, zi) (zi may be NULL): a thread per channel. */
mt_status mt_cuda_lfilter(const mt_lf_geo *g, const mt_tensor *x, const mt_tensor *a, const mt_tensor *b,
                          const mt_tensor *zi, mt_tensor *y);
/* out [C, K] = lfilter_corr(w, x): a block per (c, k), reduced in double. */
mt_status mt_cuda_lfilter_corr(const mt_lf_geo *g, const mt_tensor *w, const mt_tensor *x, mt_tensor *out);

#endif
