/* resample.h -- audio resampling for torch.audio (resample.c): torchaudio's
 * windowed-sinc polyphase filter (functional.resample) as one engine op
 * over [..., time], its adjoint (the derivative), and the filter's design,
 * shared by the CPU and CUDA kernels. */
#ifndef MT_RESAMPLE_H
#define MT_RESAMPLE_H

#include "mt.h"

/* windows of the sinc kernel (the args word of the ops) */
enum { MT_RESAMPLE_HANN, MT_RESAMPLE_KAISER, MT_RESAMPLE_NMETHODS };

/* The op's parameters. orig, new_: the rates (reduced by their gcd
 * inside); lpw: lowpass_filter_width; pad_left: zeros before x (torchaudio:
 * the kernel's width); out_len: output samples kept (torchaudio:
 * ceil(new * len / orig)); design_f32: the filter is designed in float32
 * arithmetic (torchaudio's functional resample of a float32 waveform),
 * else in double. */
typedef struct mt_resample_args {
  int64_t orig, new_, lpw, method, pad_left, out_len;
  double rolloff, beta;
  int64_t design_f32;
} mt_resample_args;

/* The filter: phase p's non-zero taps are those of input samples
 * f * orig + k - pad_left, k in [first[p], first[p] + count[p]), for output
 * f * new + p; taps[p * ntaps + j] (double) is the weight of k = first[p] + j
 * (ntaps: the row stride, at least the most taps a phase has). */
typedef struct mt_resample_plan {
  int64_t orig, new_, width, ntaps;
  int64_t *first, *count;
  double *taps;
} mt_resample_plan;

/* The plan of a (reduced inside); width = ceil(lpw * orig / (min(orig,
 * new) * rolloff)) (torchaudio's kernel has 2 * width + orig taps a phase,
 * of which the plan keeps the non-zero span). Free with mt_resample_plan_free. */
mt_status mt_resample_plan_make(const mt_resample_args *a, mt_resample_plan *p);
void mt_resample_plan_free(mt_resample_plan *p);

/* *out [..., out_len]: y[f * new + p] = sum_k taps[p][k] x[f * orig + k -
 * pad_left] (x zero outside), x floating, CPU or CUDA. Linear in x. */
mt_status mt_audio_resample(const mt_tensor *x, const mt_resample_args *a, mt_tensor **out);
/* *out [..., in_len]: the adjoint of mt_audio_resample (x of in_len
 * samples) applied to g [..., a->out_len]. */
mt_status mt_audio_resample_backward(const mt_tensor *g, const mt_resample_args *a, int64_t in_len,
                                     mt_tensor **out);

#endif
