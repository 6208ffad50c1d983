/* creation.h -- the engine's deterministic creation ops: arange, linspace,
 * logspace and eye. Values equal PyTorch's CPU kernels bit for bit (see
 * creation.c for how). Output convention as in mt.h. */
#ifndef MT_CREATION_H
#define MT_CREATION_H

#include "mt.h"

/* start, start + step, ... up to but excluding end (PyTorch's size rule:
 * ceil((end - start) / step)); arithmetic follows dt. */
mt_status mt_arange(mt_scalar start, mt_scalar end, mt_scalar step, mt_dtype dt, mt_device dev, mt_tensor **out);
/* steps evenly spaced values from start to end, both included. */
mt_status mt_linspace(mt_scalar start, mt_scalar end, int64_t steps, mt_dtype dt, mt_device dev, mt_tensor **out);
/* base ^ linspace(start, end, steps). */
mt_status mt_logspace(mt_scalar start, mt_scalar end, int64_t steps, double base, mt_dtype dt, mt_device dev,
                      mt_tensor **out);
/* n x m with ones on the main diagonal. */
mt_status mt_eye(int64_t n, int64_t m, mt_dtype dt, mt_device dev, mt_tensor **out);

#endif
