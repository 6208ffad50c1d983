/* cplx.h -- complex tensors' engine API (complex.c, cpu/complex_kernels.c):
 * views between complex and real layouts, construction from parts, and the
 * elementwise kernels of the ops that accept complex operands. */
#ifndef MT_CPLX_H
#define MT_CPLX_H

#include "iter.h"
#include "mt.h"

/* complex [...] -> real [..., 2] sharing storage (strides doubled, a last
 * stride of 1); a view of t for autograd. */
mt_status mt_view_as_real(const mt_tensor *t, mt_tensor **out);
/* real [..., 2] (float32/float64, last stride 1, other strides even,
 * offset even) -> complex [...] sharing storage. */
mt_status mt_view_as_complex(const mt_tensor *t, mt_tensor **out);
/* The real or imaginary part of complex t as a real view (part 0 or 1). A
 * real t: part 0 is t itself (new reference); part 1 is an error, as in
 * PyTorch. */
mt_status mt_complex_part_view(const mt_tensor *t, int part, mt_tensor **out);
/* Like mt_view_as_real but not a view for autograd (no base): for kernels
 * that treat a complex tensor as pairs of reals. */
mt_status mt_complex_pairs(const mt_tensor *t, mt_tensor **out);
/* re + i im (same real dtype after promotion, broadcast), as torch.complex. */
mt_status mt_complex(const mt_tensor *re, const mt_tensor *im, mt_tensor **out);
/* abs * (cos angle + i sin angle), as torch.polar. */
mt_status mt_polar(const mt_tensor *abs, const mt_tensor *angle, mt_tensor **out);
/* Copies or casts when either side is complex (copy.c calls it): by parts,
 * through real views, so it runs on every device that copies reals. */
mt_status mt_complex_copy_(mt_tensor *dst, const mt_tensor *src, bool non_blocking);
/* fill_ with re + i im. */
mt_status mt_complex_fill_(mt_tensor *dst, double re, double im);

/* Whether elementwise op has complex kernels (cpu/complex_kernels.c; CUDA
 * runs the same set by parts, complex_cuda.c); elementwise.c refuses
 * complex operands of every other op. */
bool mt_complex_op(mt_op op);
/* The CPU kernel of op for complex dtype dt (operands and result in dt,
 * except abs and angle: the real part dtype, predicates: bool). */
mt_loop_fn mt_cpu_complex_kernel(mt_op op, mt_dtype dt);

/* op(a[, b]) for complex operands (b NULL: unary) by parts, with real ops
 * on the real and imaginary parts (complex_parts.c): the CUDA path. */
mt_status mt_complex_ew_parts(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out);

#endif
