/* fft.h -- the engine's discrete Fourier transforms (fft.c): c2c, r2c and
 * c2r over any set of dims, on complex data held as its real view (a
 * floating tensor whose last dim of size 2 is (re, im)), so they need no
 * complex dtype. torch.fft's functions (lua_bindings/fft.lua) reduce to
 * these three. Kernels: cpu/fft_fftw.c (FFTW), cuda/fft_cufft.c (cuFFT). */
#ifndef MT_FFT_H
#define MT_FFT_H

#include "mt.h"

/* The scale of a transform's result: 1, 1/sqrt(n) or 1/n (n: the product of
 * the transformed dims' logical sizes), PyTorch's fft_norm_mode. */
typedef enum mt_fft_norm { MT_FFT_NORM_NONE = 0, MT_FFT_NORM_SQRT = 1, MT_FFT_NORM_N = 2 } mt_fft_norm;

typedef enum mt_fft_kind { MT_FFT_C2C, MT_FFT_R2C, MT_FFT_C2R } mt_fft_kind;

/* One transform problem: a tensor of rank ndim whose dims listed in tdims
 * (ascending, nt of them) are transformed and the others batched. ishape
 * and oshape are the buffers' shapes: equal for c2c; for r2c oshape's last
 * transformed dim is ishape's / 2 + 1, for c2r the reverse (the logical
 * size is the real side's). sign: -1 forward, +1 backward (c2c). The result
 * is multiplied by scale. */
typedef struct mt_fft_problem {
  mt_fft_kind kind;
  bool dbl; /* float64 (fftw3) or float32 (fftw3f) */
  int sign;
  bool full; /* r2c: oshape is the whole spectrum; the bins past n/2 are filled as conjugates */
  bool inplace; /* the CPU kernels' own passes: in and out are one buffer (c2c) */
  int ndim, nt;
  int64_t ishape[MT_MAXDIM], oshape[MT_MAXDIM];
  int tdims[MT_MAXDIM];
  double scale;
} mt_fft_problem;
/* The complex-to-complex transform of x (real view [..., 2], float32 or
 * float64) over the dims of mask (bits over x's dims but its last):
 * forward (exp(-i...)) or backward, scaled by norm. */
mt_status mt_fft_c2c(const mt_tensor *x, int64_t mask, bool forward, mt_fft_norm norm, mt_tensor **out);
/* The forward transform of real x over the dims of mask: onesided, the last
 * transformed dim of size n gives n / 2 + 1 bins; full, all n (the rest
 * filled by Hermitian symmetry). The result is a real view. */
mt_status mt_fft_r2c(const mt_tensor *x, int64_t mask, mt_fft_norm norm, bool full, mt_tensor **out);
/* The backward transform of Hermitian-half x (real view) over the dims of
 * mask to a real result whose last transformed dim has lastn points (x's
 * must be lastn / 2 + 1); the imaginary parts of its self-conjugate bins are
 * ignored, as FFTW and PyTorch do. */
mt_status mt_fft_c2r(const mt_tensor *x, int64_t mask, int64_t lastn, mt_fft_norm norm, mt_tensor **out);

/* Runs p on CUDA buffers of device dev (cuda/fft_cufft.c). */
mt_status mt_fft_cuda_run(const mt_fft_problem *p, void *in, void *out, mt_device dev);
#endif
