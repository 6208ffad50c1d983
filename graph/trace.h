/* trace.h -- capture of recorded ops for the JIT. While a trace is active on
 * a thread, every traced mtg_ op appends an entry (op, attributes, input and
 * output tensors) after it ran. graph/ only collects; jit/ interprets the
 * entries. With no trace active the cost is one thread-local pointer test. */
#ifndef MTG_TRACE_H
#define MTG_TRACE_H
#include "mt.h"

#define MTG_TRACE_NIN 4
#define MTG_TRACE_NI 12

typedef struct mtg_trace_entry {
  int op;                            /* mt_op */
  int nin;
  mt_tensor *in[MTG_TRACE_NIN];      /* owned references; NULL for absent operands */
  mt_tensor *out;                    /* owned reference */
  int64_t i[MTG_TRACE_NI];           /* int attributes (per op: see jit/ir.c) */
  int ni;
  double f[3];
  int8_t cdt;                        /* compute dtype of comparisons, else -1 */
} mtg_trace_entry;

typedef struct mtg_trace {
  mtg_trace_entry *e;
  int n, cap;
  char why[256];          /* first reason the trace cannot be compiled ("" if none) */
  mt_tensor **fresh;      /* tensors made by untraced code during the trace (owned) */
  char (*fresh_what)[64]; /* what made each of them */
  int nfresh, capfresh;
} mtg_trace;

/* The trace active on this thread, or NULL. */
extern _Thread_local mtg_trace *mtg_tracing;
#define MTG_TRACING() (mtg_tracing != NULL)

/* Starts a trace on this thread (error if one is active). */
mt_status mtg_trace_begin(void);
/* Ends the active trace and hands it to the caller (NULL if none). */
mtg_trace *mtg_trace_end(void);
void mtg_trace_free(mtg_trace *t);

/* Appends an entry after op ran: ins[0..nin) its tensor operands, out its
 * result. given is *out as the caller passed it: non-NULL means out= or in
 * place, which marks the trace as not compilable. */
void mtg_trace_op(int op, const mt_tensor *given, const mt_tensor *const *ins, int nin, const mt_tensor *out,
                  const int64_t *iargs, int ni, const double *f, int nf);
/* Marks the active trace as not compilable (first reason wins). */
void mtg_trace_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A tensor made by code the trace does not see (creation ops, untraced ops). */
void mtg_trace_fresh(const mt_tensor *t, const char *what);
/* True when t is the output of an entry of trace tr. */
bool mtg_trace_produced(const mtg_trace *tr, const mt_tensor *t);

#endif
