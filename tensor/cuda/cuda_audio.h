/* cuda_audio.h -- CUDA kernels of the audio ops (resample.c in tensor/cuda,
 * kernels in resample.cu). tensor/resample.c checks the arguments and
 * hands over contiguous float32 or float64 tensors. */
#ifndef MT_CUDA_AUDIO_H
#define MT_CUDA_AUDIO_H

#include "../cpu/resample_kernels.h"

/* out = the filter of p over in (rows of g), or (adjoint) its adjoint:
 * in [rows, out_len] -> out [rows, in_len], as the CPU kernels. */
mt_status mt_cuda_resample(const mt_resample_plan *p, const mt_rsmp_geo *g, bool adjoint, const mt_tensor *in,
                           mt_tensor *out);

#endif
