/* adam.c (cuda) -- the fused Adam/AdamW step (adam.cu): one launch per
 * parameter updates the parameter and its moments in one pass. The checks
 * are in tensor/optim.c (mt_adam_step_). */
#include <stdio.h>

#include "mt_cuda.h"
#include "optim.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_adam_cu[];

static void *fns[MT_CUDA_MAXDEV][MT_NDTYPE]; /* the member per device and dtype, once compiled */

mt_status mt_cuda_adam_step_(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                             const mt_adam_opts *o) {
  int dev = mt_tdevice(p).index;
  mt_dtype dt = (mt_dtype)p->dtype;
  void *fn = fns[dev][dt];
  if (!fn) {
    const mt_cuda_dtinfo *d = mt_cuda_dt(dt);
    char defs[512];
    snprintf(defs, sizeof defs, "#define TX %s\n#define CT %s\n#define LOAD(x) %s\n#define WRITE(v) %s\n", d->store,
             d->compute, d->load, d->write);
    mt_status st = mt_cuda_family(dev, defs, mt_cuda_adam_cu, "mt_adam_step", &fn);
    if (st) return st;
    fns[dev][dt] = fn;
  } else {
    mt_cuda_note_mem_hit();
  }
  struct {
    double lr, beta1, beta2, eps, wd, step_size, bc2_sqrt;
  } s = {o->lr, o->beta1, o->beta2, o->eps, o->weight_decay, o->step_size, o->bc2_sqrt};
  dptr pp = (dptr)(uintptr_t)mt_data(p), pg = (dptr)(uintptr_t)mt_data(g), pm = (dptr)(uintptr_t)mt_data(m),
       pv = (dptr)(uintptr_t)mt_data(v), px = vmax ? (dptr)(uintptr_t)mt_data(vmax) : 0;
  long long n = (long long)mt_numel(p);
  int flags = (o->amsgrad ? 1 : 0) | (o->maximize ? 2 : 0) | (o->decoupled ? 4 : 0);
  void *args[] = {&pp, &pg, &pm, &pv, &px, &n, &flags, &s};
  return mt_cuda_launch(dev, fn, n, args, "_fused_adam_");
}
