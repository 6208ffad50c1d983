/* random.c (cuda) -- the per-device generators and the launch of the
 * Philox draw kernel (random.cu). tensor/random.c keeps the checks, picks
 * the generator and reserves the blocks exactly as for a CPU draw, then
 * hands the contiguous destination here; the kernel makes the numbers the
 * CPU would make from the same (seed, offset). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "../random.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_random_cu[];

/* One generator per device, seeded like the CPU's until told otherwise. */
static mt_generator gens[MT_CUDA_MAXDEV];
static _Atomic int gens_ready;

static void init_gens(void) {
  if (atomic_load(&gens_ready)) return;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (!atomic_load(&gens_ready)) {
    for (int i = 0; i < MT_CUDA_MAXDEV; i++) mt_generator_seed(&gens[i], MT_DEFAULT_SEED);
    atomic_store(&gens_ready, 1);
  }
  pthread_mutex_unlock(&lock);
}

mt_generator *mt_cuda_generator(int dev) {
  init_gens();
  return &gens[dev >= 0 && dev < MT_CUDA_MAXDEV ? dev : 0];
}

void mt_cuda_seed_all(uint64_t seed) {
  init_gens();
  for (int i = 0; i < MT_CUDA_MAXDEV; i++) mt_generator_seed(&gens[i], seed);
}

mt_status mt_cuda_rand_fill(mt_tensor *t, const mt_cuda_rand *r, const char *op) {
  int dev = mt_tdevice(t).index;
  mt_status st = mt_cuda_check_device(mt_tdevice(t), op);
  if (st) return st;
  mt_dtype dt = (mt_dtype)t->dtype;
  const mt_cuda_dtinfo *di = mt_cuda_dt(dt);
  char defs[256]; /* the store expressions name their value v */
  snprintf(defs, sizeof defs, "#define TX %s\n#define WRITE(v) (%s)\n#define KIND %d\n#define BITS %d\n", di->store,
           di->write, r->kind, r->bits);
  void *fn = NULL;
  if ((st = mt_cuda_family(dev, defs, mt_cuda_random_cu, "mt_rand", &fn))) return st;
  dptr po = (dptr)(uintptr_t)mt_data(t);
  long long n = (long long)mt_numel(t), lo = r->lo;
  unsigned k0 = r->key[0], k1 = r->key[1];
  unsigned long long base = r->base, range = r->range, thr = r->thr;
  double a = r->a, b = r->b;
  float fa = r->fa, fs = r->fs;
  void *args[] = {&po, &n, &k0, &k1, &base, &a, &b, &fa, &fs, &lo, &range, &thr};
  int epu = r->kind == 1 || r->kind == 3 || r->kind == 6 || (r->kind == 4 && r->bits == 53) ? 8 : 16;
  int64_t units = (n + epu - 1) / epu;
  return mt_cuda_launch_grid(dev, fn, (units + 255) / 256, 256, args, op);
}
