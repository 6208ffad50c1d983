/* trace.h -- capture of recorded ops for the JIT. While a trace is active on
 * a thread, every traced mtg_ op appends an entry (op, attributes, input and
 * output tensors) after it ran. graph/ only collects; jit/ interprets the
 * entries. With no trace active the cost is one thread-local pointer test. */
#ifndef MTG_TRACE_H
#define MTG_TRACE_H
#include "mt.h"

#define MTG_TRACE_NIN 8
#define MTG_TRACE_NI 32
#define MTG_TRACE_NOUT 5

/* An op the JIT cannot express in its IR runs through the engine when the
 * graph replays: fn recomputes outs[0..nout) from ins with the attributes
 * the entry recorded (a: int64 words, f: doubles). In-place entries get
 * outs[0] preset to a private copy of ins[0], which fn updates. */
typedef mt_status (*mtg_replay_fn)(const int64_t *a, const double *f, const mt_tensor *const *ins, mt_tensor **outs);

enum { MTG_TE_OP, MTG_TE_CALL, MTG_TE_FULL };

typedef struct mtg_trace_entry {
  int op;                            /* mt_op (MTG_TE_OP) */
  int kind;                          /* MTG_TE_*: an IR op, an extern call, a constant fill */
  int nin;
  mt_tensor *in[MTG_TRACE_NIN];      /* owned references; NULL for absent operands */
  mt_tensor *out;                    /* owned reference (the written tensor when inplace) */
  mt_tensor *xout[MTG_TRACE_NOUT - 1]; /* MTG_TE_CALL: further outputs (owned) */
  int nout;
  bool inplace;                      /* out is an existing tensor the op overwrote */
  bool impure;                       /* draws random numbers: never merged with an equal call */
  mtg_replay_fn fn;                  /* MTG_TE_CALL */
  const char *name;                  /* MTG_TE_CALL: the op's name (static string) */
  int64_t i[MTG_TRACE_NI];           /* int attributes (per op: see jit/ir.c) */
  int ni;
  double f[3];
  int8_t cdt;                        /* compute dtype of comparisons, else -1 */
} mtg_trace_entry;

/* A leaf's .grad set during the capture (last one wins). */
typedef struct mtg_trace_grad {
  mt_tensor *leaf, *grad; /* owned; grad NULL: set to nil */
} mtg_trace_grad;

typedef struct mtg_trace {
  mtg_trace_entry *e;
  int n, cap;
  mtg_trace_grad *grads;
  int ngrads, capgrads;
  bool backward_ran;      /* the autograd engine ran during the capture */
  mt_tensor **alias;      /* pairs (alias, original), owned: aliases stand for their original */
  int nalias, capalias;
  struct mtg_trace_ver {
    const mt_storage *s;
    uint32_t v;
  } *ver;                 /* storage versions after the last traced use: an untraced in-place write shows up */
  int nver, capver;
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
 * place; the entry then overwrites that tensor (the JIT functionalizes it). */
void mtg_trace_op(int op, const mt_tensor *given, const mt_tensor *const *ins, int nin, const mt_tensor *out,
                  const int64_t *iargs, int ni, const double *f, int nf);
/* Appends an extern call: fn replays it (see mtg_replay_fn); args are
 * nbytes of plain data (no pointers) copied into the entry's int words. */
void mtg_trace_call(const char *name, mtg_replay_fn fn, bool inplace, const mt_tensor *const *ins, int nin,
                    mt_tensor *const *outs, int nout, const void *args, size_t nbytes, const double *f, int nf);
/* t was just made filled with v (zeros for gradients, ones for a seed). */
void mtg_trace_full(const mt_tensor *t, double v);
/* dst is a new tensor object for src's value (an alias autograd saves). */
void mtg_trace_alias(const mt_tensor *dst, const mt_tensor *src);
/* t:bernoulli_(p) drew from the default generator (the JIT replays the draw
 * in the same order, so a compiled step consumes the RNG as eager does). */
void mtg_trace_bernoulli_(const mt_tensor *t, double p);
/* t was made by arange(start, end, step) (replayed by the JIT). */
void mtg_trace_arange(const mt_tensor *t, mt_scalar start, mt_scalar end, mt_scalar step);
/* leaf's .grad became grad (NULL: nil). */
void mtg_trace_set_grad(const mt_tensor *leaf, const mt_tensor *grad);
/* Marks the active trace as not compilable (first reason wins). */
void mtg_trace_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A tensor made by code the trace does not see (creation ops, untraced ops). */
void mtg_trace_fresh(const mt_tensor *t, const char *what);
/* The tensor t stands for: t, or the original of an alias chain. */
const mt_tensor *mtg_trace_root(const mtg_trace *tr, const mt_tensor *t);
/* True when t is the output of an entry of trace tr. */
bool mtg_trace_produced(const mtg_trace *tr, const mt_tensor *t);

#endif
