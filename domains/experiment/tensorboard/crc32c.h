/* crc32c.h -- CRC-32C (Castagnoli), the checksum of TFRecord framing
 * (TensorBoard event files). */
#ifndef MTD_CRC32C_H
#define MTD_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues the CRC-32C crc (0 to start) over p[0..n). The result is the
 * finished checksum: mtd_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t mtd_crc32c(uint32_t crc, const void *p, size_t n);
/* TFRecord's masked form: ((c >> 15) | (c << 17)) + 0xa282ead8. */
uint32_t mtd_crc32c_mask(uint32_t crc);

#endif
