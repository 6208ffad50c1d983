/* fft_cufft.c -- the CUDA transforms through cuFFT (placeholder until the
 * dlopen'ed path lands): reports that CUDA tensors are not supported. */
#include "../fft.h"

mt_status mt_fft_cuda_run(const mt_fft_problem *p, void *in, void *out, mt_device dev) {
  (void)p, (void)in, (void)out, (void)dev;
  return mt_fail(MT_EDEVICE, "fft: CUDA tensors are not supported yet (cuFFT)");
}
