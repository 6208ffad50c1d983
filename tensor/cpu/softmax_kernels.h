/* softmax_kernels.h -- CPU kernels of softmax and log_softmax (engine-
 * internal). A kernel works on contiguous data seen as [L, K] (L values
 * along the softmax dim, K inner columns apart) and handles kn columns
 * starting at x and y. */
#ifndef MT_CPU_SOFTMAX_KERNELS_H
#define MT_CPU_SOFTMAX_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*mt_softmax_fn)(const void *x, void *y, int64_t L, int64_t K, int64_t kn, bool lg);

/* float32 and float64; other dtypes are converted by the caller */
void mt_cpu_softmax_f32(const void *x, void *y, int64_t L, int64_t K, int64_t kn, bool lg);
void mt_cpu_softmax_f64(const void *x, void *y, int64_t L, int64_t K, int64_t kn, bool lg);

#endif
