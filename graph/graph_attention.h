/* graph_attention.h -- recorded scaled dot product attention (graph/
 * attention.c): the public op mtg_sdpa, which picks a backend by the
 * selection rule and the per-thread backend switches, the math backend (a
 * composition of recorded ops: any floating dtype, dropout, broadcasting,
 * double backward), and the recorded flash ops of tensor/attention.h. */
#ifndef MTG_GRAPH_ATTENTION_H
#define MTG_GRAPH_ATTENTION_H
#include "attention.h"

enum { MTG_SDPA_MATH = 1, MTG_SDPA_FLASH = 2, MTG_SDPA_CUDNN = 4 }; /* backend bits */

/* The enabled backends (bits above; all by default) of this thread. */
unsigned mtg_sdpa_enabled(void);
/* Sets them; returns the previous set. */
unsigned mtg_sdpa_set_enabled(unsigned bits);
/* The backend mtg_sdpa would run for these inputs (MTG_SDPA_MATH or
 * MTG_SDPA_FLASH); bad inputs, or no enabled backend that can take them,
 * are errors whose message says why each backend was passed over. */
mt_status mtg_sdpa_select(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                          const mt_sdpa_opts *o, int *backend);
/* The same, with a line "backend: why" in notes (n bytes, may be NULL)
 * for each backend preferred to the chosen one but passed over. The order
 * of preference: on CUDA cudnn, flash, math; on the CPU flash, math. */
mt_status mtg_sdpa_select_notes(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                                const mt_sdpa_opts *o, int *backend, char *notes, size_t n);
/* softmax(q k^T * scale + mask) v through the selected backend. */
mt_status mtg_sdpa(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                   const mt_sdpa_opts *o, mt_tensor **out);
/* The math backend alone (the reference). */
mt_status mtg_sdpa_math(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                        const mt_sdpa_opts *o, mt_tensor **out);
mt_status mtg_sdpa_flash(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                         const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse);
mt_status mtg_sdpa_flash_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                  const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                  const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv);
/* The cuDNN backend alone (CUDA float16/bfloat16; attention.h says what it
 * takes): out and lse (float32), recorded like the flash op; an error when
 * cuDNN declines the problem. */
mt_status mtg_sdpa_cudnn(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
                         const mt_sdpa_opts *o, mt_tensor **out, mt_tensor **lse);
mt_status mtg_sdpa_cudnn_backward(const mt_tensor *dout, const mt_tensor *q, const mt_tensor *k, const mt_tensor *v,
                                  const mt_tensor *mask, const mt_tensor *out, const mt_tensor *lse,
                                  const mt_sdpa_opts *o, mt_tensor **dq, mt_tensor **dk, mt_tensor **dv);

#endif
