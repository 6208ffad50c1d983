/* audio.h -- engine ops behind torch.audio: the linear recursive filter of
 * torchaudio's lfilter and the correlation its coefficient gradients need
 * (lfilter.c), and the power spectrogram of its spectral fast path
 * (stft_power.c). Conventions of mt.h: mt_status results,
 * `**out` NULL to allocate. float32 and float64, every operand of one dtype
 * and one device; coefficient rows are [b0 .. b(K-1)] and [a0 .. a(K-1)]. */
#ifndef MT_AUDIO_H
#define MT_AUDIO_H

#include "mt.h"

/* Which parts of the filter run: FULL y = A^-1 B x; FIR y = B x / 1 (a is
 * not read); IIR y = A^-1 x (b is not read). */
typedef enum { MT_LF_FULL = 0, MT_LF_FIR = 1, MT_LF_IIR = 2 } mt_lf_mode;

/* y [N, C, T] from x [N, C, T] through filter c of a, b [C, K] on channel c:
 *   a0 y[t] = sum_k b_k x[t-k] - sum_{k>=1} a_k y[t-k]
 * from zero history, or from zi [N, C, 2(K-1)] (NULL: zeros): the K-1
 * inputs then the K-1 outputs before x's first sample, oldest first
 * (direct form I, what a stream carries from one block to the next).
 * reverse: time runs backwards (y = flip(filter(flip(x))), zi then holds
 * the samples after the end, nearest last). */
mt_status mt_lfilter(const mt_tensor *x, const mt_tensor *a, const mt_tensor *b, const mt_tensor *zi,
                     mt_lf_mode mode, bool reverse, mt_tensor **out);
/* out [C, K]: out[c, k] = sum over n, t of w[n, c, t] x[n, c, t - k]
 * (reverse: x[n, c, t + k]), samples outside x being 0; w, x [N, C, T]. */
mt_status mt_lfilter_corr(const mt_tensor *w, const mt_tensor *x, int64_t K, bool reverse, mt_tensor **out);

/* out [B, frames, n_fft / 2 + 1] = |rfft(frame * w)|^power (power > 0) of
 * the frames x[b, f hop - pad .. f hop - pad + n_fft) of x [B, T], w
 * [n_fft], frames = (T + 2 pad - n_fft) / hop + 1; the pad samples of
 * reflect padding on both sides (0 <= pad < T) are read in place. One
 * pass, no intermediate tensors on the CPU; frames, cuFFT and |.|^power on
 * CUDA. Not recorded by autograd (the caller's fast path runs outside it). */
mt_status mt_stft_power(const mt_tensor *x, const mt_tensor *w, int64_t hop, double power, int64_t pad,
                        mt_tensor **out);

#endif
