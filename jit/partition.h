/* partition.h -- compiled functions whose results require grad: the
 * captured trace holds the forward and its traced backward, partitioned
 * into a forward graph (which also outputs the residuals the backward
 * reads) and a backward graph run by one autograd node per call
 * (partition.c). */
#ifndef MTJ_PARTITION_H
#define MTJ_PARTITION_H
#include "entry.h"

/* While the capture's trace tr is open, after fn returned results
 * res[0..nres) (NULL: not a tensor): if some require grad (and no
 * backward ran inside fn), traces their backward to the inputs requiring
 * grad and returns the state mtj_aot_compile needs (NULL if none; e->why
 * set when it failed). */
mtj_aot_capture *mtj_aot_trace_backward(mtj_entry *e, mtg_trace *tr, const mt_tensor *const *res, int nres);
void mtj_aot_capture_free(mtj_aot_capture *c);
/* The number of trace entries before the traced backward. */
int mtj_aot_forward_len(const mtj_aot_capture *c);
/* True when the compiled backward reads runtime scalar k. */
bool mtj_aot_uses_scalar(const mtj_aot *a, int k);
/* Compiles the forward part of tr into e->c (inputs ins, outputs outs[0..
 * nout) plus the residuals it appends) and the backward part into e->aot;
 * name: the function's. On failure sets e->why. */
void mtj_aot_compile(const char *name, mtj_entry *e, mtj_aot_capture *c, const mtg_trace *tr,
                     const mt_tensor *const *ins, int nin, const mt_tensor **outs, int nout, const double *sc,
                     const bool *isint, int nsc, const mtj_options *o);
/* After the forward graph ran (outs: its outputs, residuals last): makes
 * the autograd node of the call the history of the results requiring grad
 * (outs entries may be replaced by aliases). */
mt_status mtj_aot_attach(mtj_aot *a, const mt_tensor *const *ins, const double *sc, mt_tensor **outs);
void mtj_aot_release(mtj_aot *a);
/* Writes the backward graph's description (torch.compiler.explain). */
void mtj_aot_explain(const mtj_aot *a, FILE *f);

#endif
