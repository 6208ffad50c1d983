/* random.h -- counter-based random numbers (Philox4x32-10) and the engine's
 * random ops. A generator is a key (the seed) plus an offset counting the
 * 128-bit Philox blocks already used. Every op reserves its blocks up front,
 * so element i of a draw depends only on (seed, offset, i): the numbers are
 * the same for any thread count. Index VALUES made here are 1-based. */
#ifndef MT_RANDOM_H
#define MT_RANDOM_H

#include "mt.h"

typedef struct mt_generator {
  uint64_t seed;           /* the Philox key: low word, high word */
  _Atomic uint64_t offset; /* next unused block */
} mt_generator;

#define MT_DEFAULT_SEED 67280421310721ULL /* PyTorch's default seed */
#define MT_RNG_STATE_BYTES 16             /* seed, then offset; little-endian */

/* One Philox4x32-10 block: out = philox(ctr, key). */
void mt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The process-wide generator used when an op is given g == NULL. */
mt_generator *mt_default_generator(void);
/* Sets the seed and rewinds the offset to 0. */
void mt_generator_seed(mt_generator *g, uint64_t seed);
/* A 63-bit seed from the operating system (time and address as a fallback). */
uint64_t mt_nondeterministic_seed(void);
/* Reserves nblocks blocks; returns the first. Safe to call from any thread. */
uint64_t mt_generator_reserve(mt_generator *g, uint64_t nblocks);
void mt_generator_get_state(mt_generator *g, uint8_t out[MT_RNG_STATE_BYTES]);
void mt_generator_set_state(mt_generator *g, const uint8_t in[MT_RNG_STATE_BYTES]);

/* In-place draws into t (any layout; g NULL means the default generator). */
/* uniform on [from, to); floating t only */
mt_status mt_uniform_(mt_tensor *t, double from, double to, mt_generator *g);
/* normal(mean, std) by Box-Muller; floating t only, std >= 0 */
mt_status mt_normal_(mt_tensor *t, double mean, double std, mt_generator *g);
/* exponential with rate lambd > 0; floating t only */
mt_status mt_exponential_(mt_tensor *t, double lambd, mt_generator *g);
/* integers uniform on [lo, hi] (both inclusive, so a full int64 range fits);
 * the bounds must be representable in t's dtype */
mt_status mt_random_(mt_tensor *t, int64_t lo, int64_t hi, mt_generator *g);
/* The smallest and largest values mt_random_ may write into dtype dt (for
 * floats +-2^digits, where every integer is exact). */
void mt_random_bounds(mt_dtype dt, int64_t *lo, int64_t *hi);
/* 1 with probability p, else 0; any dtype; 0 <= p <= 1 */
mt_status mt_bernoulli_(mt_tensor *t, double p, mt_generator *g);
/* same with a probability per element: p broadcasts to t's shape */
mt_status mt_bernoulli_tensor_(mt_tensor *t, const mt_tensor *p, mt_generator *g);

/* mean + std * N(0, 1), shaped like broadcast(mean, std), floating dtype of
 * the two (promoted); every std must be >= 0. */
mt_status mt_normal_tensor(const mt_tensor *mean, const mt_tensor *std, mt_generator *g, mt_tensor **out);
/* A random permutation of 1..n as a 1-D tensor of dtype dt. */
mt_status mt_randperm(int64_t n, mt_dtype dt, mt_device dev, mt_generator *g, mt_tensor **out);
/* n category indices (1-based, int64) per row of probs (1-D: k weights, or
 * 2-D: rows x k); weights need not sum to 1. Without replacement n must not
 * exceed the non-zero weights of any row. Output: {n} or {rows, n}. */
mt_status mt_multinomial(const mt_tensor *probs, int64_t n, bool replacement, mt_generator *g, mt_tensor **out);

#endif
