/* split.h -- compiled functions with graph breaks (split.c): the op calls
 * recorded at the capture, the trace split into segments at the host
 * reads, each compiled, and the replay state that runs the segments as
 * fn's Lua code reaches them. The bindings wrap the torch C functions and
 * compare the Lua stack with the records; nothing here knows Lua. */
#ifndef MTJ_SPLIT_H
#define MTJ_SPLIT_H
#include "entry.h"

#define MTJ_MAXCARGS 8 /* tensor arguments of a call that are checked */

/* The kind of a value an op call returned. */
enum { MTJ_R_NIL, MTJ_R_BOOL, MTJ_R_NUM, MTJ_R_INT, MTJ_R_TENSOR, MTJ_R_TABLE, MTJ_R_OTHER };

typedef struct mtj_res {
  int8_t kind;
  int id;             /* MTJ_R_TENSOR */
  int8_t ndim, dtype; /* MTJ_R_TENSOR: for a stand-in (ndim -1: none) */
  int64_t shape[MT_MAXDIM];
  double num; /* MTJ_R_NUM, MTJ_R_INT, MTJ_R_BOOL */
  int *ids;   /* MTJ_R_TABLE: an array of tensors */
  int nids;
} mtj_res;

/* A number a call received: argument arg, or field key of the option table
 * at arg. Substituted calls are guarded on it: the capture baked it into a
 * graph, unless it equals fn's number argument sck (then a runtime scalar
 * of the graphs, compared with that argument's value at the call). */
typedef struct mtj_num {
  int8_t arg;
  int8_t sck; /* -1: a constant */
  char key[22];
  double v;
} mtj_num;

/* One recorded op call. */
typedef struct mtj_call {
  const void *fn; /* the wrapped C function */
  int parent;     /* the call it ran inside (-1: none) */
  int n0, n1;     /* trace entries [n0, n1) were made during it */
  bool sync, subst;
  int seg; /* subst: its segment; sync: the first segment after it */
  int nargs;
  int argid[MTJ_MAXCARGS]; /* tensor arguments' ids (-1: not a tensor) */
  int nres;
  mtj_res *res;
  int nnum;
  mtj_num *num;
} mtj_call;

/* ---- recording (capture) ---- */
/* The recorder of a capture of fn whose number arguments were fnum[0..n)
 * (NaN: not a number); NULL when out of memory. */
mtj_rec *mtj_rec_new(const double *fnum, int n);
void mtj_rec_free(mtj_rec *r);
/* A host read inside the innermost open call: a segment ends before it. */
void mtj_rec_sync(mtj_rec *r);
/* Opens a call of fn with n arguments, argt[0..min(n, MTJ_MAXCARGS)) its
 * tensors (NULL: not one), inside the innermost open call. Returns its
 * index, or -1 when it cannot be recorded (the capture then fails). */
int mtj_rec_open(mtj_rec *r, const void *fn, const mt_tensor *const *argt, int n);
/* Argument arg of open call i (or its option field key, else "") is the number v. */
void mtj_rec_number(mtj_rec *r, int i, int arg, const char *key, double v);
/* Closes call i after it ran (index_fn: it is __index or __newindex) with
 * nres results, described next by mtj_rec_result and mtj_rec_table. */
void mtj_rec_close(mtj_rec *r, int i, bool index_fn, int nres);
/* Result k of call i: kind MTJ_R_* but TABLE, num its number or boolean,
 * t the tensor of MTJ_R_TENSOR. */
void mtj_rec_result(mtj_rec *r, int i, int k, int kind, double num, const mt_tensor *t);
/* Result k of call i is an array of n tensors, each then given by
 * mtj_rec_table_item (t NULL: not a tensor, which makes the result
 * MTJ_R_OTHER). */
void mtj_rec_table(mtj_rec *r, int i, int k, int n);
void mtj_rec_table_item(mtj_rec *r, int i, int k, int j, const mt_tensor *t);

/* ---- segments ---- */
/* Splits trace tr at the host reads r saw and compiles each segment
 * (name: fn's; quiet: no warning on another branch). ext[0..*next)
 * receive the tensors the segments read from outside (first[k]: the entry
 * of tr that first reads ext[k], -1: a leaf), to be located by the caller
 * before mtj_split_attach. NULL on failure, with e->why set. */
mtj_split *mtj_split_build(const char *name, bool quiet, mtj_entry *e, mtj_rec *r, const mtg_trace *tr,
                           const double *sc, const bool *isint, const mtj_options *o, const mt_tensor **ext, int *first,
                           int *next);
/* Completes e->split = s, taking over r's calls, once e's inputs ext were
 * located (frees s when e->why is set instead). Number arguments become
 * runtime scalars. */
void mtj_split_attach(mtj_entry *e, mtj_split *s, mtj_rec *r, const mt_tensor *const *ext, int next);
void mtj_split_free(mtj_split *s);
int mtj_split_nseg(const mtj_split *s);
/* True once a replay diverged from the capture (the entry is dropped). */
bool mtj_split_dead(const mtj_split *s);
void mtj_split_explain(const mtj_split *s, FILE *f);

/* ---- replay ---- */
typedef struct mtj_splitrun mtj_splitrun;
/* A replay of e (e->split) on inputs ins with runtime scalars sc
 * [MTJ_MAXARGS + MTJ_MAXSCT]; NULL when out of memory. */
mtj_splitrun *mtj_splitrun_new(const mtj_entry *e, const mt_tensor *const *ins, const double *sc);
void mtj_splitrun_free(mtj_splitrun *p);
/* fn's name (for messages). */
const char *mtj_splitrun_name(const mtj_splitrun *p);
/* True once the call finishes eagerly (it took another branch). */
bool mtj_splitrun_eager(const mtj_splitrun *p);
/* The record of the next op call, which the replay expects to be of fn,
 * and its index i; NULL (why says how it differs) when it is not. */
const mtj_call *mtj_splitrun_next(mtj_splitrun *p, const void *fn, int *i, const char **why);
/* Value id at this replay (NULL: not known yet), and binding it (t retained). */
const mt_tensor *mtj_splitrun_value(const mtj_splitrun *p, int id);
void mtj_splitrun_bind(mtj_splitrun *p, int id, mt_tensor *t);
/* True when number x of a substituted call has at this call the value v
 * it must have (NaN: not a number). */
bool mtj_splitrun_number_ok(const mtj_splitrun *p, const mtj_num *x, double v);
/* fn took another path at call i. When no segment holding call i or a
 * later one ran yet and eager_ok, the rest of the call runs eagerly:
 * returns true (*warn: warn now, once per entry). Else the entry is dead:
 * false, and the caller raises. */
bool mtj_splitrun_diverge(mtj_splitrun *p, int i, bool eager_ok, bool *warn);
/* Runs the segments up to and including last (in order, each once;
 * INT_MAX: all that remain). A segment whose guards fail sets *miss (why:
 * the reason) and stops. */
mt_status mtj_splitrun_segments(mtj_splitrun *p, int last, bool *miss, char *why, size_t n);
/* Index of the op call the replay is at (the last one started). */
int mtj_splitrun_at(const mtj_splitrun *p);
/* Result value id (x: its record): the computed tensor, or a stand-in of
 * the right shape and dtype for a temporary no segment outputs. NULL with
 * an error set when neither exists. */
mt_tensor *mtj_splitrun_result(mtj_splitrun *p, int id, const mtj_res *x);
/* After fn returned: MTJ_END_DONE; MTJ_END_TRAILING: segments no call
 * reached remain (run them, eager_ok false); MTJ_END_DEAD: it returned
 * before the calls the capture saw (why; the entry is dead). */
enum { MTJ_END_DONE, MTJ_END_TRAILING, MTJ_END_DEAD };
int mtj_splitrun_end(mtj_splitrun *p, char *why, size_t n);

#endif
