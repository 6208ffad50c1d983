/* png_sums.c -- the checksums of the fast PNG path at memory speed: the
 * CRC-32 of chunks by carry-less multiplication (PCLMULQDQ, where the CPU
 * has it; zlib's crc32 otherwise and for short data) and the zlib stream's
 * Adler-32 with AVX2. Both give exactly zlib's values; nothing else here. */
#include <immintrin.h>
#include <pthread.h>
#include <zlib.h>

#include "png_fast.h"

/* ---- CRC-32 ----
 * The data, as a polynomial over GF(2) in 128-bit blocks (bit-reflected:
 * bit 0 of byte 0 is the highest power), keeps its CRC when a block B is
 * replaced by a polynomial congruent to it modulo P and moved 128k bits on:
 * B's two 64-bit halves times x^(128k+32) and x^(128k-32) mod P (the 32
 * makes up the 64 bits of a half and the factor x that a reflected product
 * carries). Four blocks are folded 512 bits at a time, then one 128, and
 * zlib finishes the last 16 to 31 bytes. */
static struct {
  int ok;         /* the CPU has PCLMULQDQ */
  uint64_t k4[2]; /* fold by 512 bits: low half, high half */
  uint64_t k1[2]; /* fold by 128 bits */
} crc;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* x^n mod P (P = 0x104C11DB7), bit e standing for x^e. */
static uint32_t xpow_mod(unsigned n) {
  uint64_t v = 1;
  for (unsigned i = 0; i < n; i++) {
    v <<= 1;
    if (v >> 32) v ^= 0x104C11DB7ull;
  }
  return (uint32_t)v;
}

/* The multiplier of a fold by x^n: x^n mod P reflected into bits 32..1. */
static uint64_t fold_constant(unsigned n) {
  uint32_t f = xpow_mod(n);
  uint64_t k = 0;
  for (int e = 0; e < 32; e++)
    if (f >> e & 1) k |= 1ull << (32 - e);
  return k;
}

static void crc_init(void) {
  crc.ok = __builtin_cpu_supports("pclmul");
  crc.k4[0] = fold_constant(4 * 128 + 32), crc.k4[1] = fold_constant(4 * 128 - 32);
  crc.k1[0] = fold_constant(128 + 32), crc.k1[1] = fold_constant(128 - 32);
}

/* acc moved onto data's position (k: fold_constant pair) and added to it. */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i acc, __m128i data, __m128i k) {
  __m128i lo = _mm_clmulepi64_si128(acc, k, 0x00), hi = _mm_clmulepi64_si128(acc, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/* CRC-32 of n >= 64 bytes at p. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_folded(const unsigned char *p, size_t n) {
  const __m128i k4 = _mm_loadu_si128((const __m128i *)crc.k4), k1 = _mm_loadu_si128((const __m128i *)crc.k1);
  __m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
  __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
  x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128(-1)); /* the CRC's initial value enters the first 32 bits */
  for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
    x0 = fold(x0, _mm_loadu_si128((const __m128i *)p), k4);
    x1 = fold(x1, _mm_loadu_si128((const __m128i *)(p + 16)), k4);
    x2 = fold(x2, _mm_loadu_si128((const __m128i *)(p + 32)), k4);
    x3 = fold(x3, _mm_loadu_si128((const __m128i *)(p + 48)), k4);
  }
  x3 = fold(fold(fold(x0, x1, k1), x2, k1), x3, k1);
  for (; n >= 16; p += 16, n -= 16) x3 = fold(x3, _mm_loadu_si128((const __m128i *)p), k1);
  unsigned char last[32];
  _mm_storeu_si128((__m128i *)last, x3);
  for (size_t i = 0; i < n; i++) last[16 + i] = p[i];
  /* zlib's crc32(c) is ~raw(~c): from c = ~0 the register starts at 0, the
   * initial value being in the blocks already */
  return (uint32_t)crc32(0xffffffffu, last, (uInt)(16 + n));
}

uint32_t mtd_crc32(const unsigned char *p, size_t n) {
  pthread_once(&crc_once, crc_init);
  if (n >= 64 && crc.ok) return crc_folded(p, n);
  return (uint32_t)crc32_z(0, p, n);
}

/* ---- Adler-32 ----
 * Per block of 32-byte words (short enough that no sum overflows before
 * the modulo): s1 gains the bytes; s2 gains n * s1 + the sum of (n - k) *
 * byte k = 32 * (each word's sum times the words after it) + each word's
 * bytes weighted 32..1. */
#define ADLER_MOD 65521
#define ADLER_WORDS 170 /* 5440 bytes: below zlib's 5552 */

static inline uint32_t hsum32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

uint32_t mtd_adler32(uint32_t adler, const unsigned char *p, size_t n) {
  uint64_t a = adler & 0xffff, b = adler >> 16;
  const __m256i weights = _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
                                           13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  while (n >= 32) {
    size_t words = n / 32 < ADLER_WORDS ? n / 32 : ADLER_WORDS;
    __m256i s1 = zero, s2 = zero, prior = zero;
    for (size_t i = 0; i < words; i++, p += 32) {
      __m256i v = _mm256_loadu_si256((const __m256i *)p);
      prior = _mm256_add_epi32(prior, s1);
      s1 = _mm256_add_epi32(s1, _mm256_sad_epu8(v, zero));
      s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(_mm256_maddubs_epi16(v, weights), ones));
    }
    b += 32 * words * a + 32 * (uint64_t)hsum32(prior) + hsum32(s2);
    a += hsum32(s1);
    a %= ADLER_MOD, b %= ADLER_MOD;
    n -= 32 * words;
  }
  for (size_t i = 0; i < n; i++) a += p[i], b += a;
  return (uint32_t)((b % ADLER_MOD) << 16 | (a % ADLER_MOD));
}
