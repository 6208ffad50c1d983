/* crc32c.c -- CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected
 * 0x82F63B78). Uses the SSE4.2 crc32 instruction where the compiler targets
 * it (the build's -march=x86-64-v3 does), else a byte-wise table. */
#include "crc32c.h"

#include <string.h>

#if defined(__SSE4_2__)
#include <nmmintrin.h>

static uint32_t crc_update(uint32_t c, const unsigned char *p, size_t n) {
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    c64 = _mm_crc32_u64(c64, w);
  }
  c = (uint32_t)c64;
  for (; n; n--) c = _mm_crc32_u8(c, *p++);
  return c;
}

#else

static uint32_t table[256];
static int table_ready;

static void make_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    table[i] = c;
  }
  table_ready = 1;
}

static uint32_t crc_update(uint32_t c, const unsigned char *p, size_t n) {
  if (!table_ready) make_table(); /* idempotent: racing threads write the same values */
  for (; n; n--) c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return c;
}

#endif

uint32_t mtd_crc32c(uint32_t crc, const void *p, size_t n) {
  return ~crc_update(~crc, (const unsigned char *)p, n);
}

uint32_t mtd_crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
