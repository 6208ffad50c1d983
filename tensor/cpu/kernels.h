/* kernels.h -- lookup of CPU elementwise kernels by op and dtype
 * (engine-internal). A kernel runs over iterator operands (out, in...) that
 * all have the dtype it was looked up for, except predicate and comparison
 * kernels, whose output is bool. NULL means the dtype is not supported. */
#ifndef MT_CPU_KERNELS_H
#define MT_CPU_KERNELS_H

#include "iter.h"

mt_loop_fn mt_cpu_unary_kernel(mt_op op, mt_dtype dt);
mt_loop_fn mt_cpu_binary_kernel(mt_op op, mt_dtype dt);

#endif
