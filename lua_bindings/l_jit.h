/* l_jit.h -- private to lua_bindings/l_jit*.c: a compiled function's
 * entries (guards, where inputs come from, compiled graph) and the
 * capture state of the thread. */
#ifndef MTL_L_JIT_H
#define MTL_L_JIT_H
#include "graph.h"
#include "jit.h"
#include "mtl.h"

#define MAXARGS 32
#define MAXSCT 16
#define MAXGRADS 512
#define MAXRETRY 2
#define JIT_FN "torch.CompiledFunction"

enum { SRC_ARG, SRC_UPV };
/* uservalues of a compiled function: 1 fn, 2 a table of paths and scalar sources */
enum { UV_FN = 1, UV_AUX = 2 };
enum { RET_OUT, RET_ARG, RET_NIL, RET_BOOL };

typedef struct jarg {
  int type;       /* LUA_T* */
  bool isint;     /* numbers */
  double num;
  int b;          /* booleans */
  char *str;      /* strings (owned) */
  int8_t dtype, ndim;
  uint16_t ones;  /* tensors: dims of size 1 */
  bool candidate; /* a number feeding the graph as a scalar */
} jarg;

typedef struct jit_aot jit_aot;                 /* l_jit_aot.c */
typedef struct jit_split jit_split;             /* l_jit_split.c */
typedef struct jit_rec jit_rec;
typedef struct jit_aot_capture jit_aot_capture;

typedef struct jentry {
  struct jentry *next;
  int nargs;
  jarg arg[MAXARGS];
  bool generalized;
  int nin;
  struct {
    int kind, idx; /* argument index, or the path's index in the aux table */
    mt_tensor *t;  /* the captured tensor (owned), SRC_UPV */
    int alt[3];    /* further paths to the same tensor, guarded too */
    int nalt;
  } src[MTJ_MAXIN];
  int nsct;
  int sct_ref[MAXSCT];  /* aux indices of {table, key} whose number is runtime scalar nargs + j */
  int ngrads;
  struct {
    int leaf; /* input index */
    int out;  /* graph output index, -1: nil */
  } grad[MAXGRADS];
  bool detach;          /* a backward ran inside: results come back without history */
  int nret;
  struct {
    int kind, idx;
  } ret[MTJ_MAXOUT];
  mtj_compiled *c; /* NULL: runs eagerly (why); with aot: the forward graph */
  jit_aot *aot;    /* results require grad: the compiled backward (NULL if not) */
  jit_split *split; /* graph breaks: the segments and the recorded op calls (e->c is NULL) */
  bool grad_mode;  /* grad mode at the capture (guarded) */
  int autocast;    /* mtl_autocast_key() at the capture (guarded): the casts are in the graph */
  uint64_t rg[MTJ_MAXIN / 64]; /* inputs that required grad at the capture (guarded) */
  char why[300];
  unsigned epoch;
} jentry;

typedef struct jfn {
  jentry *entries;
  int ncompiled; /* graphs made for this function (recompile limit) */
  int retries;   /* captures redone because state was made during them */
  char name[96]; /* "compiled fn@file:line", the profiler's name for its graphs */
  int naux;      /* entries used in the aux table */
  bool dynamic, fullgraph, off, gave_up, warned_grad, quiet;
  bool splits;   /* it had a graph break: its captures record op calls */
  bool warned_break;
  int limit;
  char last_reason[200];
} jfn;

/* capture state of this thread (one capture at a time) */
typedef struct jit_capture {
  bool active, fullgraph;
  char brk[300];
  char retry[200];               /* why this capture must be redone next call ("" if not) */
  int nsct;
  mt_tensor *sct[MAXSCT];        /* 0-dim tensors standing for table numbers (owned) */
  jit_aot_capture *aot;          /* the traced backward of results requiring grad (NULL if none) */
  jit_rec *rec;                  /* op calls recorded for a function with graph breaks (NULL if not) */
} jit_capture;
extern _Thread_local jit_capture jit_cap;

/* ---- l_jit_inputs.c ---- */
/* Pushes aux[i] of the compiled function at stack index 1. */
void jit_push_aux(lua_State *L, int i);
/* Stores the value on top of the stack (popped) as a new aux entry; returns its index. */
int jit_add_aux(lua_State *L, jfn *f);
/* Follows path aux[i] from fn; NULL when it no longer leads to a tensor. */
mt_tensor *jit_resolve_path(lua_State *L, int i);
/* The tensor of entry e's input k at this call (fn at index 1, args from 2). */
mt_tensor *jit_source(lua_State *L, const jentry *e, int k);
/* The number aux[i] = {table, key} holds now (NaN if not a number). */
double jit_table_number(lua_State *L, int i);
/* Pushes the table of jit.lua's helpers (loaded once). */
void jit_push_lua(lua_State *L);
/* The external tensors trace tr reads or writes, in order of first use;
 * sets e->why on a tensor made by untraced code. */
int jit_graph_inputs(const mtg_trace *tr, jentry *e, const mt_tensor **ins);
/* Where each graph input comes from at a later call (sets e->src, or e->why). */
void jit_locate_inputs(lua_State *L, jfn *f, jentry *e, const mt_tensor **ins, int nin, int nargs,
                       const mtg_trace *tr);

/* ---- l_jit_aot.c: compiled functions whose results require grad ---- */
/* While the capture's trace is open, after fn returned results at
 * [rbase, rbase + nres): if some require grad (and no backward ran inside
 * fn), traces their backward to the inputs requiring grad and returns the
 * state jit_aot_compile needs (NULL if none; e->why set when it failed). */
jit_aot_capture *jit_aot_trace_backward(lua_State *L, jentry *e, mtg_trace *tr, int rbase, int nres);
void jit_aot_capture_free(jit_aot_capture *c);
/* The number of trace entries before the traced backward. */
int jit_aot_forward_len(const jit_aot_capture *c);
/* True when the compiled backward reads runtime scalar k. */
bool jit_aot_uses_scalar(const jit_aot *a, int k);
/* Compiles the forward part of tr into e->c (inputs ins, outputs outs[0..
 * nout) plus the residuals it appends) and the backward part into e->aot;
 * on failure sets e->why. */
void jit_aot_compile(jfn *f, jentry *e, jit_aot_capture *c, const mtg_trace *tr, const mt_tensor *const *ins,
                     int nin, const mt_tensor **outs, int nout, const double *sc, const bool *isint, int nsc,
                     const mtj_options *o);
/* After the forward graph ran (outs: its outputs, residuals last): makes
 * the autograd node of the call the history of the results requiring grad
 * (outs entries may be replaced by aliases). */
mt_status jit_aot_attach(jit_aot *a, const mt_tensor *const *ins, const double *sc, mt_tensor **outs);
void jit_aot_release(jit_aot *a);
/* Writes the backward graph's description (torch.compiler.explain). */
void jit_aot_explain(const jit_aot *a, FILE *f);

/* ---- l_jit_split.c: functions with graph breaks ---- */
/* Wraps the torch C functions once (torch.profiler.hooks) so that op calls
 * can be recorded and substituted. */
void jit_split_install(lua_State *L);
/* The recorder of a capture of fn called with nargs arguments (from index 2). */
jit_rec *jit_rec_new(lua_State *L, int nargs);
void jit_rec_free(jit_rec *r);
/* A host read inside the innermost recorded call: a segment ends before it. */
void jit_rec_sync(jit_rec *r);
/* Builds e->split from the trace and the recorded calls (or sets e->why). */
void jit_split_build(lua_State *L, jfn *f, jentry *e, jit_rec *r, const mtg_trace *tr, int nargs, const double *sc,
                     const bool *isint, const mtj_options *o);
/* Replays e: runs fn with op calls substituted; returns fn's result count. */
int jit_split_run(lua_State *L, jentry *e, int nargs, const mt_tensor *const *ins, const double *sc);
void jit_split_free(jit_split *s);
int jit_split_nseg(const jit_split *s);
/* True while a function with graph breaks replays (torch.compiler.is_compiling). */
bool jit_split_replaying(void);
/* True once a replay diverged from the capture (the entry is dropped). */
bool jit_split_dead(const jit_split *s);
void jit_split_explain(const jit_split *s, FILE *f);

#endif
