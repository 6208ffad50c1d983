/* cg.h -- the kernel walker the two code generators share (codegen_c.c
 * defines it; codegen_cuda.c reuses it): the state of one fused kernel
 * being emitted and the functions that emit a node's value and its
 * operands. C and CUDA C differ only in the kernel skeletons (loops,
 * threads, reductions) and in how a value is loaded: CUDA holds float16
 * and bfloat16 values as float, rounded to their dtype after each op as
 * the engine's eager ops round their results. */
#ifndef MTJ_CG_H
#define MTJ_CG_H
#include "ir.h"
#include "strbuf.h"

typedef struct mtj_cg {
  mtj_graph *g;
  int k;
  mtj_kargs a;
  mtj_buf *b;
  char *row_done, *loop_done;
  char *rc_done; /* rc<i> = 1/v<i> emitted in the row scope */
  int *spill;    /* spill[i] = l: value i is kept in output w<l> between loops (C only) */
  int ndim, p;
  bool cuda; /* CUDA C: 16-bit floats computed in float, loads converted */
  bool vec;  /* CUDA vector path: full and inner loads read l<k>.v[e_] (preloaded float4-style) */
} mtj_cg;

/* Emits node i (and what it needs) into the inner loop (j) or the row scope. */
void mtj_cg_emit(mtj_cg *c, int i, bool j);
/* The C operand naming node i's value (v<i>, a constant, a scalar). */
void mtj_cg_opnd(mtj_cg *c, int i, char *out, size_t n);
/* The reduction phase of node i: how many reductions of the kernel precede it. */
int mtj_cg_phase(mtj_cg *c, int i, int *memo);
/* Is node i a per-row value (constant along the kernel's inner dims)? */
bool mtj_cg_is_row(mtj_cg *c, int i);
/* Is node i computed by this kernel (not loaded)? */
bool mtj_cg_in_kernel(mtj_cg *c, int i);
/* Emits, in the row scope, every row-level value that node i needs. */
void mtj_cg_row_deps(mtj_cg *c, int i);
/* The register type of dtype dt (float for float16/bfloat16). */
const char *mtj_cg_rtype(int dt);
/* Clears / reads the code generators' failure flag (an op without code). */
void mtj_cg_reset(void);
bool mtj_cg_failed(void);
void mtj_cg_fail(const char *what);

/* CUDA C source for graph g (malloc'ed; NULL on failure, mtj_codegen_error
 * says why). ends (unless NULL) gets a malloc'ed array: ends[0] where the
 * common header stops, ends[k + 1] where kernel k's code stops (each
 * kernel's code stands alone after the header). */
char *mtj_codegen_cuda(const mtj_graph *g, size_t **ends);
/* Loads kernels mtj_k0..mtj_k<nk-1> of src (split by ends as above) on dev
 * into fns, compiling chunks of them on parallel threads (cuda_build.c). */
mt_status mtj_cuda_build(int dev, const char *src, const size_t *ends, int nk, void **fns);

#endif
