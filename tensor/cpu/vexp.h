/* vexp.h -- a fast AVX2 exp for arguments <= 0 (softmax, attention), shared
 * by cpu/softmax_kernels.c and cpu/attention_kernels.c. Engine-internal. */
#ifndef MT_CPU_VEXP_H
#define MT_CPU_VEXP_H
#include <immintrin.h>

/* exp for softmax's arguments x - max <= 0, within about 2 ulp: 2^n * e^r
 * with n = round(x / ln 2), r = x - n ln 2 (split in two parts), and e^r from
 * a degree-7 polynomial (Cephes' expf coefficients). Below -87.3 the result
 * is 0 (exactly 0 for -inf, as masked softmax needs); about 4x faster than
 * SLEEF's 1-ulp expf, which dominated softmax. NaN stays NaN (a row of
 * -inf minus its max -inf: PyTorch's softmax gives NaN there). */
static inline __m256 mt_vexp_f32(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ), nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  x = _mm256_max_ps(x, lo);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  return _mm256_or_ps(_mm256_andnot_ps(under, y), nan);
}

#endif
