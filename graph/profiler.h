/* profiler.h -- the event recorder behind torch.profiler. While a profiler
 * is active on a thread, callers bracket work with begin/end: Lua-called ops
 * (lua_bindings/l_profiler.c), autograd nodes (graph/backward.c), user
 * ranges (torch.profiler.record_function) and, through the two public hook
 * functions below, compiled JIT graphs. With no profiler active the cost of
 * a hook is one thread-local pointer test. */
#ifndef MTG_PROFILER_H
#define MTG_PROFILER_H
#include "mt.h"

enum { MTG_PROF_OP, MTG_PROF_RANGE, MTG_PROF_AUTOGRAD, MTG_PROF_JIT };
#define MTG_PROF_SHAPES 1u /* record input shapes */
#define MTG_PROF_MEMORY 2u /* record bytes allocated (net) */
#define MTG_PROF_CUDA 4u   /* time each event on the current CUDA device's stream too */

typedef struct mtg_prof_event {
  int32_t name;   /* index into the profiler's names */
  int32_t parent; /* enclosing event, -1 at top level */
  int64_t t0, t1; /* ns since the profiler started; t1 < 0 while open */
  int64_t mem;    /* net bytes allocated between begin and end */
  int64_t cmem;   /* the same for CUDA device memory */
  int64_t shapes; /* offset into shape_data, -1 if none */
  int32_t kind;   /* MTG_PROF_* */
  int32_t nshapes;
  int64_t cuda_ns; /* device time between the event's begin and end on the stream (-1: not timed) */
  int64_t cev;     /* its pair of CUDA events in the profiler's cuev (-1: none) */
} mtg_prof_event;

typedef struct mtg_profiler {
  unsigned flags;
  int64_t start_ns, stop_ns; /* CLOCK_MONOTONIC */
  double start_wall;         /* Unix time at start, seconds */
  mtg_prof_event *ev;
  int64_t nev, capev;
  int32_t cur; /* innermost open event, -1 if none */
  int64_t *shape_data; /* per input: ndim (-1: not a tensor), then the dims */
  int64_t nshape, capshape;
  char **names;
  int32_t nnames, capnames;
  int32_t *slots; /* hash of names: index + 1, 0 empty */
  int32_t nslots;
  int64_t mem0;   /* bytes in use at start */
  bool oom;       /* an append failed: later events were dropped */
  void **cuev;    /* MTG_PROF_CUDA: CUDA events, two per timed event (begin, end) */
  int64_t ncuev, capcuev;
  int cudadev;    /* the device they time */
  bool sync;      /* MOONTORCH_PROFILE_SYNC=1: wait for the device at every begin and end */
  int64_t gen;    /* this profile's number, part of its tokens */
} mtg_profiler;

/* The profiler active on this thread, or NULL. */
extern _Thread_local mtg_profiler *mtg_prof;
#define MTG_PROFILING() (mtg_prof != NULL)

/* Starts a profiler on this thread (error if one is active). */
mt_status mtg_prof_start(unsigned flags);
/* Stops the active one, closing open events, and hands it over (NULL if
 * none). Free it with mtg_prof_free. */
mtg_profiler *mtg_prof_stop(void);
void mtg_prof_free(mtg_profiler *p);
/* Index of name in the active profiler's names (copied once), -1 on failure. */
int32_t mtg_prof_intern(const char *name);
/* Opens an event named by index; returns its token (-1: not recorded). */
int64_t mtg_prof_begin_id(int32_t name, int kind);
/* Like mtg_prof_begin_id, with input shapes: shapes[0..n) holds, for each
 * of ninputs inputs, its ndim (-1: not a tensor) followed by its dims. */
int64_t mtg_prof_begin_shapes(int32_t name, int kind, const int64_t *shapes, int64_t n, int ninputs);
/* Closes the event; also closes events opened inside it and left open. */
void mtg_prof_end(int64_t token);

/* ---- the hook API for compiled code (the JIT) ----
 * Bracket the run of a compiled graph so it shows in the profile as one
 * event under its name, with its inputs' shapes:
 *     int64_t tok = mtg_profiler_begin("graph fn@train.lua:12", ins, nin);
 *     ... run ...
 *     mtg_profiler_end(tok);
 * Both are no-ops (one test) when no profiler runs on this thread; ins may
 * hold NULLs; tok is -1 then. */
int64_t mtg_profiler_begin(const char *name, const mt_tensor *const *ins, int nin);
void mtg_profiler_end(int64_t token);

#endif
