/* jit.h -- the JIT's public API (mtj_ prefix): a recorded trace (graph/
 * trace.h) becomes an IR graph, is optimized and fused, and compiled into
 * one shared object of C kernels; the compiled graph replays on new inputs
 * that pass its guards. jit/ consumes traces only and never calls Lua. */
#ifndef MTJ_JIT_H
#define MTJ_JIT_H
#include <stdio.h>

#include "mt.h"
#include "trace.h"

#define MTJ_MAXIN 512
#define MTJ_MAXOUT 512

typedef struct mtj_compiled mtj_compiled;

typedef struct mtj_options {
  bool dynamic; /* input sizes are kernel arguments (default) instead of constants */
  const mt_tensor *const *sct; /* tensors standing for runtime scalars nsc + j */
  int nsct;
} mtj_options;

/* Builds and compiles the graph of trace tr. ins[0..nin) are the tensors
 * the trace reads from outside (function arguments and captured tensors);
 * wrapped numbers equal to scalars[k] (an integer when sc_int[k]) become
 * runtime scalar k, other wrapped numbers constants. outs[0..nout) are the
 * returned tensors. On failure (an op the JIT does not handle, no C
 * compiler, a compiler error) returns an error whose message says why. */
mt_status mtj_compile(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *scalars,
                      const bool *sc_int, int nsc, const mt_tensor *const *outs, int nout, const mtj_options *o,
                      mtj_compiled **out);
/* Runtime scalars that come as tensors: o->sct[0..o->nsct) are 0-dim tensors
 * the capture handed out for Lua numbers read from tables (a learning rate);
 * the graph reads them as scalar nsc + j, whose value the caller passes. */
/* Tries to make compiled graph c symbolic in the sizes where it differs
 * from old, the same function's graph captured with other sizes (a new
 * batch size); on success c serves both and later sizes (generalize.c). */
mt_status mtj_generalize_compiled(const mtj_compiled *old, mtj_compiled *c);
/* True while c is a generalized graph (automatic dynamic sizes). */
bool mtj_is_generalized(const mtj_compiled *c);
/* True when scalar k feeds the graph (a number argument used by an op). */
bool mtj_uses_scalar(const mtj_compiled *c, int k);
/* The canonical text of the graph (the cache key's main part). */
const char *mtj_text(const mtj_compiled *c);
/* Checks the guards (dtype, rank, sizes equal to 1, equal symbolic sizes,
 * static sizes) against inputs ins; on a miss writes the reason into why. */
bool mtj_guard(const mtj_compiled *c, const mt_tensor *const *ins, char *why, size_t n);
/* Runs the compiled graph: outs[0..nout) receive new references. Inputs
 * the traced function overwrote in place receive their new values at the
 * end, or straight from the kernel that computes them when buffer planning
 * proves nothing reads the old value later (jit/runtime.c, plan_direct). */
mt_status mtj_run(mtj_compiled *c, const mt_tensor *const *ins, const double *scalars, mt_tensor **outs);
void mtj_free(mtj_compiled *c);
/* Writes the IR, the kernels' plan and the generated C source to f. */
void mtj_explain(const mtj_compiled *c, FILE *f);

typedef struct mtj_stats {
  int64_t compiles;   /* graphs built (IR + kernels) */
  int64_t mem_hits;   /* shared objects found in memory */
  int64_t disk_hits;  /* shared objects loaded from the disk cache */
  int64_t cc_runs;    /* C compiler invocations */
  int64_t corrupt;    /* disk entries rejected by their checksum */
  double cc_seconds;  /* time spent in the C compiler */
  int64_t graph_captures, graph_replays, graph_failures; /* CUDA graphs (cudagraph.c) */
} mtj_stats;
mtj_stats mtj_get_stats(void);
/* Forgets the in-memory cache (compiled objects stay loaded) and the stats. */
void mtj_reset(void);

/* ---- internal, shared by the files of jit/ ---- */
typedef struct mtj_graph mtj_graph;
/* Generated C source for graph g (malloc'ed). */
char *mtj_codegen(const mtj_graph *g);
/* The op the last mtj_codegen failed on ("" if none). */
const char *mtj_codegen_error(void);
/* The loaded kernels of source src for cache key text key: from memory,
 * disk or the compiler. fns[0..nk) receive kernel i ("mtj_k<i>"). */
typedef void (*mtj_kernel_fn)(void **a, const int64_t *z, const double *s, int ith, int nth);
mt_status mtj_load(const char *key, const char *src, int nk, mtj_kernel_fn *fns);

#endif
