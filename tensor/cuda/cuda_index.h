/* cuda_index.h -- the CUDA side of the index ops that tensor/index.c and
 * tensor/elementwise.c route to (offsets.c, masks.c). The engine keeps every
 * argument check and result shape; these functions only launch, on tensors
 * already on one CUDA device (0-dim host tensors stand for values where
 * said). Index values are 1-based. */
#ifndef MT_CUDA_INDEX_H
#define MT_CUDA_INDEX_H

#include "cpu/index_kernels.h"
#include "mt.h"

/* off (contiguous int64) += the offsets of idx (int64, broadcast to off's
 * shape) as c says (c->bad is not used). *bad: some value was out of range
 * (one wait for the flag); the caller reports which. */
mt_status mt_cuda_offsets(const char *op, mt_tensor *off, const mt_tensor *idx, const mt_offset_ctx *c, bool *bad);
/* res (contiguous, of src_r's shape and dtype) = src_r[i] at off_r[i]
 * elements further; off_r int64 of src_r's shape (any strides). */
mt_status mt_cuda_gather_off(const char *op, mt_tensor *res, const mt_tensor *src_r, const mt_tensor *off_r);
/* dst_r[i] at off_r[i] elements further = src[i] (mode 0), += src[i] (1)
 * or *= src[i] (2), the last two atomic; src of dst_r's dtype, on its
 * device, broadcast to its shape. Every destination lies in [lo, hi]
 * elements from dst_r's data: mode 0 keeps, of duplicate destinations, the
 * last position's write (row-major), as the CPU does, through a claim
 * buffer of hi - lo + 1 int32. */
mt_status mt_cuda_scatter_off(const char *op, mt_tensor *dst_r, const mt_tensor *src, const mt_tensor *off_r, int mode,
                              int64_t lo, int64_t hi);
/* out = cond ? a : b elementwise; cond (bool or uint8), a and b broadcast to
 * out's shape; a and b have out's dtype and may be 0-dim host tensors. out
 * may be b (masked_fill_). */
mt_status mt_cuda_select3(const char *op, mt_tensor *out, const mt_tensor *cond, const mt_tensor *a,
                          const mt_tensor *b);
/* out = in inside the triangle of the last two dims (col - row <= k, or
 * >= k when upper), zero outside; out and in of one shape and dtype (in may
 * be out). */
mt_status mt_cuda_tri(mt_tensor *out, const mt_tensor *in, int64_t k, bool upper);

/* The true values of a bool mask (any strides): *counts (int64, on the
 * device) gives each chunk's first output slot for mt_cuda_mask_apply and
 * *total their number (one copy down). */
mt_status mt_cuda_mask_count(const char *op, const mt_tensor *mask, mt_tensor **counts, int64_t *total);
/* With counts from mt_cuda_mask_count(mask) and x of mask's shape: mode 0,
 * buf[k] = x at the k-th true position (row-major); 1: x there = buf[k]; 2:
 * buf (int64 [total, ndim]) row k = the 1-based coordinates (x unused). buf
 * is contiguous. */
mt_status mt_cuda_mask_apply(const char *op, int mode, const mt_tensor *mask, const mt_tensor *counts, mt_tensor *x,
                             mt_tensor *buf);

#endif
