/* entry.h -- torch.compile's per-call-shape entries (guards, where the
 * graph inputs come from, the compiled graphs) and the capture state of
 * the thread, in plain C: jit/{capture,guard,entry,inputs}.c. The Lua
 * bindings (lua_bindings/l_jit*.c) describe Lua values for it; nothing
 * here knows Lua. */
#ifndef MTJ_ENTRY_H
#define MTJ_ENTRY_H
#include <stdio.h>

#include "graph.h"
#include "jit.h"

#define MTJ_MAXARGS 32   /* arguments of a compiled function */
#define MTJ_MAXSCT 16    /* runtime scalars read from tables (torch.compiler.scalar) */
#define MTJ_MAXGRADS 512 /* .grad fields one compiled call sets */

/* The type of a Lua value, numbered as Lua numbers its types (the
 * bindings check that they agree). */
enum {
  MTJ_TNIL,
  MTJ_TBOOLEAN,
  MTJ_TLIGHTUSERDATA,
  MTJ_TNUMBER,
  MTJ_TSTRING,
  MTJ_TTABLE,
  MTJ_TFUNCTION,
  MTJ_TUSERDATA,
  MTJ_TTHREAD
};
/* Where a graph input comes from: argument idx, or path idx of the
 * function's table of paths (kept by the bindings). */
enum { MTJ_SRC_ARG, MTJ_SRC_UPV };
/* What a result is: graph output idx, argument idx, nil, boolean idx. */
enum { MTJ_RET_OUT, MTJ_RET_ARG, MTJ_RET_NIL, MTJ_RET_BOOL };

/* One argument of a call, as the guards see it. */
typedef struct mtj_arg {
  int type;   /* MTJ_T* */
  bool isint; /* numbers */
  double num;
  int b;     /* booleans */
  char *str; /* strings: owned in an entry, borrowed in a call's description */
  int8_t dtype, ndim;
  uint16_t ones;  /* tensors: dims of size 1 */
  bool candidate; /* a number feeding the graph as a scalar */
} mtj_arg;

typedef struct mtj_aot mtj_aot;                 /* partition.h */
typedef struct mtj_aot_capture mtj_aot_capture; /* partition.h */
typedef struct mtj_split mtj_split;             /* split.h */
typedef struct mtj_rec mtj_rec;                 /* split.h */

typedef struct mtj_entry {
  struct mtj_entry *next;
  int nargs;
  mtj_arg arg[MTJ_MAXARGS];
  bool generalized;
  int nin;
  struct {
    int kind, idx; /* MTJ_SRC_*: argument index, or the path's index */
    mt_tensor *t;  /* the captured tensor (owned), MTJ_SRC_UPV */
    int alt[3];    /* further paths to the same tensor, guarded too */
    int nalt;
  } src[MTJ_MAXIN];
  int nsct;
  int sct_ref[MTJ_MAXSCT]; /* the bindings' {table, key} whose number is runtime scalar nargs + j */
  int ngrads;
  struct {
    int leaf; /* input index */
    int out;  /* graph output index, -1: nil */
  } grad[MTJ_MAXGRADS];
  bool detach; /* a backward ran inside: results come back without history */
  int nret;
  struct {
    int kind, idx; /* MTJ_RET_* */
  } ret[MTJ_MAXOUT];
  mtj_compiled *c;             /* NULL: runs eagerly (why); with aot: the forward graph */
  mtj_aot *aot;                /* results require grad: the compiled backward (NULL if not) */
  mtj_split *split;            /* graph breaks: the segments and the recorded op calls (c is NULL) */
  bool grad_mode;              /* grad mode at the capture (guarded) */
  int autocast;                /* the autocast key at the capture (guarded): the casts are in the graph */
  uint64_t rg[MTJ_MAXIN / 64]; /* inputs that required grad at the capture (guarded) */
  char why[300];
  unsigned epoch;
} mtj_entry;

/* The capture state of this thread (one capture at a time; capture.c). */
typedef struct mtj_capture {
  bool active, fullgraph;
  char brk[300];   /* the graph break ("" if none) */
  char retry[200]; /* why this capture must be redone next call ("" if not) */
  int nsct;
  mt_tensor *sct[MTJ_MAXSCT]; /* 0-dim tensors standing for table numbers (owned) */
  mtj_aot_capture *aot;       /* the traced backward of results requiring grad (NULL if none) */
  mtj_rec *rec;               /* op calls recorded for a function with graph breaks (NULL if not) */
} mtj_capture;
extern _Thread_local mtj_capture mtj_cap;

/* ---- capture.c ---- */
/* Starts a capture (rec: its op call recorder, owned from now, or NULL). */
void mtj_capture_begin(bool fullgraph, mtj_rec *rec);
/* Ends it: frees its scalars, traced backward and recorder. */
void mtj_capture_clear(void);
/* A host read during the capture: true when it is the capture's first
 * break, whose place the caller then passes to mtj_capture_break. */
bool mtj_capture_host_read(void);
/* Records the first break (where: "file:line: "; what: the reading
 * function). True under fullgraph=true: the caller raises mtj_cap.brk. */
bool mtj_capture_break(const char *where, const char *what);
/* Keeps 0-dim tensor t (reference taken over) as the capture's next
 * runtime scalar; false (t released) when there are MTJ_MAXSCT already. */
bool mtj_capture_scalar(mt_tensor *t);
/* Asks for the capture to be redone on the next call (first reason kept). */
void mtj_capture_again(const char *why);

/* ---- guard.c ---- */
/* The name Lua gives type t ("number", "userdata", ...). */
const char *mtj_type_name(int t);
/* The guards on the arguments a[0..nargs) of a call: 1 e matches, 0 a miss
 * (reason in why), 2 only number arguments that may become runtime
 * scalars differ. */
int mtj_match_args(const mtj_entry *e, const mtj_arg *a, int nargs, char *why, size_t n);
/* The guards on the graph inputs ins (resolved for this call) and the
 * state (grad mode, autocast key); false on a miss (reason in why). */
bool mtj_match_inputs(const mtj_entry *e, const mt_tensor *const *ins, int autocast, char *why, size_t n);
/* A static graph e that equals an earlier entry's of list (same epoch)
 * but for sizes: that entry's graph becomes one with dynamic sizes
 * serving both (automatic dynamic sizes). True when done (e keeps the
 * old graph, to be freed with it). */
bool mtj_generalize_into(mtj_entry *list, mtj_entry *e, unsigned epoch);

/* ---- inputs.c ---- */
/* The external tensors trace tr reads or writes, in order of first use:
 * operands no earlier entry made, tensors written in place, leaves whose
 * .grad was set; first[k] (if first) the entry that first reads ins[k]
 * (-1: a leaf). Sets e->why on a tensor made by untraced code. */
int mtj_graph_inputs(const mtg_trace *tr, mtj_entry *e, const mt_tensor **ins, int *first);
/* Sets e->why: tensor t, first read by entry first of tr, was found
 * neither among the arguments nor through the upvalues. */
void mtj_unlocated(mtj_entry *e, const mtg_trace *tr, int first, const mt_tensor *t);

/* ---- entry.c ---- */
/* A new entry for a call with arguments a[0..nargs) (strings copied), or NULL. */
mtj_entry *mtj_entry_new(const mtj_arg *a, int nargs, unsigned epoch);
void mtj_entry_free(mtj_entry *e);
/* Notes the state the capture ran in (guarded at later calls). */
void mtj_entry_state(mtj_entry *e, const mtg_trace *tr, const mt_tensor *const *ins, int nin, int autocast);
/* Result r of fn: a Lua value of type type (b: a boolean's value, t: a
 * tensor or NULL), argt[0..nargs) the tensor arguments (NULL: none).
 * Sets e->ret[r], appending a graph output to outs, or sets e->why. */
void mtj_entry_result(mtj_entry *e, const mtg_trace *fwd, int r, int type, bool b, const mt_tensor *t,
                      const mt_tensor *const *argt, int nargs, const mt_tensor **outs, int *nout);
/* The gradients the capture set on leaves: more graph outputs. */
void mtj_entry_grads(mtj_entry *e, const mtg_trace *tr, const mt_tensor *const *ins, int nin, const mt_tensor **outs,
                     int *nout);
/* The runtime scalars of e's number arguments (NaN elsewhere). */
void mtj_entry_scalars(const mtj_entry *e, double *sc, bool *isint);
/* Compiles tr into e->c (and, when the capture traced a backward, e->aot);
 * name: the function's, for the profiler. On failure sets e->why. */
void mtj_entry_compile(mtj_entry *e, const char *name, const mtg_trace *tr, const mt_tensor *const *ins, int nin,
                       const mt_tensor **outs, int nout, const double *sc, const bool *isint, const mtj_options *o);
/* True when e's graph is the same as near's (another number value). */
bool mtj_entry_same_graph(const mtj_entry *near, const mtj_entry *e);
/* Replays compiled e on inputs ins with scalars sc: outs[0..MTJ_MAXOUT)
 * receive the graph's outputs (release them); sets the leaves' .grad. */
mt_status mtj_entry_run(const mtj_entry *e, const char *name, const mt_tensor *const *ins, const double *sc,
                        mt_tensor **outs);
/* torch.compiler.explain's text for e (brk: the graph break or "";
 * last: the last recompile reason or ""). */
void mtj_entry_explain(const mtj_entry *e, const char *brk, const char *last, FILE *f);

#endif
