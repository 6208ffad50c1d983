/* ir.h -- the JIT's graph IR, shared by jit/ files only. A node is a
 * primitive op over symbolic shapes; passes (ir.c, fuse.c) fill in the
 * kernel partition that codegen_c.c and runtime.c read. */
#ifndef MTJ_IR_H
#define MTJ_IR_H
#include "jit.h"

#define MTJ_NA 8 /* operands of a node */
#define MTJ_MAXPATCH 64
#define MTJ_MAXXS 16

/* A dimension: a symbol (sym >= 0: a size class of input dims) or a constant. */
typedef struct mtj_dim {
  int32_t sym;
  int64_t c;
} mtj_dim;

typedef enum mtj_kind {
  JN_INPUT,  /* graph input tensor `slot` */
  JN_SCALAR, /* runtime scalar `slot` (a Lua number argument) */
  JN_CONST,  /* constant c */
  JN_UNARY,  /* op(a0) in compute dtype cdt; params in c, f */
  JN_BINARY, /* op(a0, a1), including comparisons */
  JN_WHERE,  /* a0 ? a1 : a2 */
  JN_CAST,   /* a0 converted to dtype */
  JN_REDUCE, /* op (sum, mean, prod, amax, amin) over the trailing attr[0] dims, kept as 1 */
  JN_VIEW,   /* a view of a0 (attr[0]: reshape or permute, then the permutation) */
  JN_EXTERN, /* an engine op on materialized operands (attr: the trace entry's; fn: a replayed call) */
  JN_XOUT    /* output `slot` (>= 1) of the extern call a0 */
} mtj_kind;

typedef struct mtj_node {
  int8_t kind, dtype, cdt, ndim;
  int16_t op; /* mt_op */
  int a[MTJ_NA]; /* operands (-1: none); compute nodes use 3, extern calls up to MTJ_NA */
  mtj_dim shape[MT_MAXDIM];
  double c, f[3];
  int64_t attr[MTG_TRACE_NI];
  int nattr, slot;
  mtg_replay_fn fn;  /* EXTERN of a replayed call (trace.h), else NULL */
  const char *name;  /* its op name */
  bool inplace;      /* the call updates a private copy of a0 */
  int tag;           /* distinct for calls that draw random numbers (no CSE) */
  int8_t act;        /* EXTERN: an activation (mt_act) the call applies to its result, its parameter in c
                        (rewrite.c); a matmul with a2 also adds that bias row */
  /* filled by the passes */
  bool live, mat; /* mat: materialized into a buffer */
  int kernel;     /* kernel index, or -1 */
  int step;       /* VIEW/EXTERN: their step */
  int last_step;  /* last step that reads the buffer */
} mtj_node;

typedef struct mtj_input {
  int8_t dtype, ndim;
  int64_t shape[MT_MAXDIM]; /* as captured (checked when static) */
} mtj_input;

/* A fused kernel: iteration space F (ndim dims), rows = dims [0, p), inner = [p, ndim). */
#define MTJ_KNODES 64 /* nodes per kernel: bounds its loads and stores (MTJ_KLOAD, MTJ_KSTORE) */

typedef struct mtj_kernel {
  int ndim, p; /* p < 0: no reduction (codegen picks ndim - 1) */
  int nnodes;
  mtj_dim F[MT_MAXDIM];
  int step;
} mtj_kernel;

typedef struct mtj_step {
  int kernel; /* >= 0: a kernel, else node */
  int node;
} mtj_step;

struct mtj_graph {
  mtj_node *n;
  int nn, cap;
  int nin, nsc;
  mtj_input in[MTJ_MAXIN];
  int out[MTJ_MAXOUT], nout;
  int wb[MTJ_MAXIN], wb_slot[MTJ_MAXIN], nwb; /* node wb[j] is the new value of input wb_slot[j] */
  int in_node[MTJ_MAXIN]; /* the input node of each input */
  /* generalized graphs (generalize.c): sizes in extern attributes and constants from symbols */
  bool generalized;
  struct {
    int node, word, sym;
  } patch[MTJ_MAXPATCH]; /* attr[word] of extern `node` is the size of symbol sym */
  int npatch;
  int xs_base, nxs;      /* runtime scalars from symbols: slots xs_base + k */
  int xs_sym[MTJ_MAXXS];
  bool xs_inv[MTJ_MAXXS]; /* 1/size instead of size */
  int nsym;
  int sym_in[MTJ_MAXIN * MT_MAXDIM], sym_dim[MTJ_MAXIN * MT_MAXDIM], sym_parent[MTJ_MAXIN * MT_MAXDIM];
  bool is_static;
  mt_device dev; /* where the graph runs (ir.c: its inputs' device); CUDA graphs get CUDA kernels */
  mtj_kernel *k;
  int nk;
  mtj_step *steps;
  int nsteps;
  char *text; /* canonical text */
};

int mtj_find(mtj_graph *g, int s);                       /* symbol class representative */
bool mtj_dim_eq(mtj_graph *g, mtj_dim a, mtj_dim b);
/* Trace -> IR with decompositions and CSE; DCE. Error message on failure. */
mt_status mtj_build(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *sc, const bool *sc_int,
                    int nsc, const mt_tensor *const *outs, int nout, const mtj_options *o, mtj_graph **out);
void mtj_graph_free(mtj_graph *g);
/* Marks live the nodes the outputs and write-backs need (DCE), clearing the rest. */
void mtj_mark_live(mtj_graph *g);
/* Makes static graph g2 symbolic where its sizes differ from g1's, an
 * equal graph captured with other sizes (generalize.c); g2 then needs
 * fusion again. On failure g2 is left half-changed: pass a copy. */
mt_status mtj_generalize(const mtj_graph *g1, mtj_graph *g2);
/* Algebraic rewrites of a marked graph (rewrite.c). */
void mtj_rewrite(mtj_graph *g);
/* Partition into kernels and steps (fuse.c). */
mt_status mtj_fuse(mtj_graph *g);
/* Canonical text of g (after fusion), malloc'ed. */
char *mtj_canon(mtj_graph *g);
const char *mtj_ctype(int dtype); /* C type of a dtype, NULL if unsupported */

#endif

/* ---- kernel arguments (codegen_c.c; the runtime passes them in this order) ---- */
#define MTJ_KLOAD 256
#define MTJ_KSTORE 128
enum { MTJ_LD_SCALAR, MTJ_LD_FULL, MTJ_LD_ROW, MTJ_LD_INNER, MTJ_LD_GENERAL };
typedef struct mtj_kargs {
  int p;                   /* split of F used by the kernel */
  int load[MTJ_KLOAD], nload;   /* buffers read (node ids) */
  int cls[MTJ_KLOAD];           /* their MTJ_LD_ class */
  int store[MTJ_KSTORE], nstore; /* values written (node ids) */
  bool flat;               /* one flat loop over all elements */
} mtj_kargs;
mt_status mtj_kernel_args(mtj_graph *g, int k, mtj_kargs *a);

/* ---- CUDA graph replay of a compiled graph on a CUDA device (cudagraph.c) ---- */
typedef struct mtj_replay mtj_replay;
typedef mt_status (*mtj_steps_fn)(void *c, const mt_tensor *const *ins, const double *sc, mt_tensor **outs);
/* Serves a run of compiled graph g (whose steps are steps(c, ...)) from its
 * CUDA graph in *r (made on first use), capturing it when the calls have
 * settled: returns 1 with the run's status in *st, or 0 when the caller
 * must run the steps itself. */
int mtj_replay_run(mtj_replay **r, const mtj_graph *g, mtj_steps_fn steps, void *c, const mt_tensor *const *ins,
                   const double *sc, mt_tensor **outs, mt_status *st);
void mtj_replay_free(mtj_replay *r);
/* Counts of CUDA graphs captured, replays, and captures that failed. */
void mtj_replay_stats(int64_t *captures, int64_t *replays, int64_t *failed);
void mtj_replay_reset_stats(void);
