/* fft_cufft.c -- the CUDA transforms through cuFFT, loaded with dlopen at
 * first use (libcufft.so.12, .11, .10; $MOONTORCH_CUFFT). fft.c hands over
 * contiguous problems whose transformed dims are the innermost ones, so one
 * "advanced layout" plan (batch = the leading dims) covers each; plans are
 * cached per (type, sizes, batch, device, stream): a plan's work area
 * serves one stream. make HIP=1: reported as not available. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../fft.h"
#include "files.h"
#include "gpu_port.h"
#include "mt_cuda.h"

#ifdef MT_HIP
mt_status mt_fft_cuda_run(const mt_fft_problem *p, void *in, void *out, mt_device dev) {
  return mt_fail(MT_EDEVICE, "fft: cuFFT is not available under HIP (make HIP=1); move the tensor to the CPU");
}
#else

/* cuFFT's C API (cufft.h), declared here so that no toolkit is needed to build */
typedef int cufftHandle;
enum { CUFFT_R2C = 0x2a, CUFFT_C2R = 0x2c, CUFFT_C2C = 0x29, CUFFT_D2Z = 0x6a, CUFFT_Z2D = 0x6c, CUFFT_Z2Z = 0x69 };

static struct {
  int (*Create)(cufftHandle *);
  int (*Destroy)(cufftHandle);
  int (*MakePlanMany64)(cufftHandle, int, long long *, long long *, long long, long long, long long *, long long,
                        long long, int, long long, size_t *);
  int (*SetStream)(cufftHandle, void *);
  int (*ExecC2C)(cufftHandle, void *, void *, int);
  int (*ExecR2C)(cufftHandle, void *, void *);
  int (*ExecC2R)(cufftHandle, void *, void *);
  int (*ExecZ2Z)(cufftHandle, void *, void *, int);
  int (*ExecD2Z)(cufftHandle, void *, void *);
  int (*ExecZ2D)(cufftHandle, void *, void *);
} cf;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[300];
static bool loaded;

static void load(void) {
  static const char *names[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.10", "libcufft.so"};
  static const char *dirs[] = {MT_GPU_LIB_DIRS};
  void *h = mt_dlopen_first("MOONTORCH_CUFFT", names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error, "cuFFT (libcufft.so) was not found; install it or set MOONTORCH_CUFFT");
    return;
  }
  static const char *syms[] = {"cufftCreate",  "cufftDestroy", "cufftMakePlanMany64", "cufftSetStream",
                               "cufftExecC2C", "cufftExecR2C", "cufftExecC2R",        "cufftExecZ2Z",
                               "cufftExecD2Z", "cufftExecZ2D"};
  void **slots = (void **)&cf;
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
    if (!(slots[i] = dlsym(h, syms[i]))) {
      snprintf(load_error, sizeof load_error, "cuFFT lacks %s", syms[i]);
      return;
    }
  loaded = true;
}

static mt_status check(int r, const char *what) {
  if (r == 0) return MT_OK;
  return mt_fail(MT_EARG, "fft: cuFFT %s failed (cufftResult %d)", what, r);
}

typedef struct plan_key {
  int type, rank, dev;
  long long n[MT_MAXDIM], batch;
  void *stream; /* a plan's work area serves one stream: plans are per stream */
} plan_key;

#define MAX_PLANS 128
static struct {
  plan_key key;
  cufftHandle h;
} plans[MAX_PLANS];
static int nplans;

/* The cached plan of k (made when new: dev current); caller holds lock.
 * *owned: the cache is full, destroy it after the run. */
static mt_status plan_of(const plan_key *k, const mt_fft_problem *p, cufftHandle *h, bool *owned) {
  *owned = false;
  for (int i = 0; i < nplans; i++)
    if (memcmp(&plans[i].key, k, sizeof *k) == 0) {
      *h = plans[i].h;
      return MT_OK;
    }
  long long inem[MT_MAXDIM], onem[MT_MAXDIM], idist = 1, odist = 1;
  int base = p->ndim - p->nt;
  for (int t = 0; t < p->nt; t++) {
    inem[t] = p->ishape[base + t], onem[t] = p->oshape[base + t];
    idist *= inem[t], odist *= onem[t];
  }
  size_t work = 0;
  mt_status st = check(cf.Create(h), "plan creation");
  if (!st) st = check(cf.MakePlanMany64(*h, k->rank, (long long *)k->n, inem, 1, idist, onem, 1, odist, k->type,
                                        k->batch, &work),
                      "planning");
  if (!st) st = check(cf.SetStream(*h, k->stream), "stream binding");
  if (st) {
    cf.Destroy(*h);
    return st;
  }
  if (nplans < MAX_PLANS) plans[nplans].key = *k, plans[nplans++].h = *h;
  else *owned = true;
  return MT_OK;
}

static int exec(const plan_key *k, cufftHandle h, void *in, void *out, int sign) {
  switch (k->type) {
  case CUFFT_C2C: return cf.ExecC2C(h, in, out, sign);
  case CUFFT_Z2Z: return cf.ExecZ2Z(h, in, out, sign);
  case CUFFT_R2C: return cf.ExecR2C(h, in, out);
  case CUFFT_D2Z: return cf.ExecD2Z(h, in, out);
  case CUFFT_C2R: return cf.ExecC2R(h, in, out);
  default: return cf.ExecZ2D(h, in, out);
  }
}

/* p: contiguous, transformed dims innermost (fft.c arranges it); the scale
 * is applied by fft.c. */
mt_status mt_fft_cuda_run(const mt_fft_problem *p, void *in, void *out, mt_device dev) {
  pthread_once(&load_once, load);
  if (!loaded) return mt_fail(MT_EDEVICE, "fft: %s", load_error);
  mt_status st = mt_cuda_check_device(dev, "fft");
  if (st) return st;
  plan_key k;
  memset(&k, 0, sizeof k);
  k.rank = p->nt, k.dev = dev.index, k.batch = 1;
  k.type = p->kind == MT_FFT_C2C ? (p->dbl ? CUFFT_Z2Z : CUFFT_C2C)
           : p->kind == MT_FFT_R2C ? (p->dbl ? CUFFT_D2Z : CUFFT_R2C)
                                   : (p->dbl ? CUFFT_Z2D : CUFFT_C2R);
  int base = p->ndim - p->nt;
  for (int d = 0; d < base; d++) k.batch *= p->ishape[d];
  for (int t = 0; t < p->nt; t++) k.n[t] = p->kind == MT_FFT_C2R ? p->oshape[base + t] : p->ishape[base + t];
  if (k.batch == 0) return MT_OK;
  k.stream = mt_cuda_current_stream(dev.index).handle;
  cufftHandle h = 0;
  bool owned = false;
  pthread_mutex_lock(&lock);
  st = plan_of(&k, p, &h, &owned);
  if (!st) st = check(exec(&k, h, in, out, p->sign), "execution");
  if (owned) cf.Destroy(h);
  pthread_mutex_unlock(&lock);
  if (!st) mt_cuda_note_launch(dev.index, "fft");
  return st;
}
#endif
