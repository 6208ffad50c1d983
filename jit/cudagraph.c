/* cudagraph.c -- a compiled graph on a CUDA device replayed as one CUDA
 * graph: its kernels, engine calls (cuBLAS products, convolutions) and
 * copies cost one cuGraphLaunch instead of a launch (and the host work
 * around it) each.
 *
 * A CUDA graph bakes in every pointer, size and scalar it was captured
 * with, so:
 * - it is captured once two runs in a row had the same input sizes and
 *   scalars (the first run records them);
 * - an input whose data pointer was the same in both runs (a parameter, an
 *   optimizer's state) is read in place; any other input (a new batch) is
 *   staged: the graph reads its own buffer, filled by a device copy before
 *   each replay (and copied back after it when the graph writes the input);
 * - a replay needs the recorded sizes, scalars and in-place pointers; after
 *   3 misses in a row the graph is dropped and captured again later;
 * - the graph's results live in its own buffers, which the next replay
 *   overwrites: each replay returns copies (one per distinct result, so a
 *   result that is also a value saved for backward stays one tensor);
 * - memory freed while capturing stays the graph's (alloc.c's pool), so no
 *   other tensor is given memory that a replay writes;
 * - graphs that draw random numbers (dropout masks are drawn on the host)
 *   or whose capture fails (an op reading a value on the host) run their
 *   steps as before, without a graph, and so do graphs whose replays
 *   would copy more than 16 MiB (staged inputs and results): their
 *   kernels' time hides the launches. MOONTORCH_CUDA_GRAPHS=0 turns
 *   capture off. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "cuda/mt_cuda.h"

struct mtj_replay {
  bool off;              /* never captured */
  int calls, misses;     /* runs with the recorded sizes and scalars; replays missed in a row */
  int nin, nout, nsc;
  const void **ptr;      /* per input: its data pointer in the last run (then: the one read in place) */
  int64_t *shape;        /* per input: its sizes in the last run */
  double *sc;            /* the scalars of the last run */
  mt_cuda_graph *graph;
  mt_tensor **stage;     /* per input: the graph's own buffer, or NULL (read in place) */
  mt_tensor **gout;      /* the graph's results */
};

static int64_t n_captures, n_replays, n_failed;

/* Graphs whose replays would copy more bytes (staged inputs, results) run without one. */
#define MAX_COPY ((size_t)16 << 20)

void mtj_replay_stats(int64_t *captures, int64_t *replays, int64_t *failed) {
  *captures = n_captures, *replays = n_replays, *failed = n_failed;
}

void mtj_replay_reset_stats(void) { n_captures = n_replays = n_failed = 0; }

/* Drops r's graph and buffers (keeps its records). */
static void drop_graph(mtj_replay *r) {
  mt_cuda_graph_free(r->graph);
  r->graph = NULL;
  for (int k = 0; k < r->nin; k++) mt_release(r->stage[k]), r->stage[k] = NULL;
  for (int k = 0; k < r->nout; k++) mt_release(r->gout[k]), r->gout[k] = NULL;
}

void mtj_replay_free(mtj_replay *r) {
  if (!r) return;
  drop_graph(r);
  free(r->ptr);
  free(r->shape);
  free(r->sc);
  free(r->stage);
  free(r->gout);
  free(r);
}

/* Whether graph g can be captured at all. */
static bool capturable(const mtj_graph *g) {
  const char *e = getenv("MOONTORCH_CUDA_GRAPHS");
  if (e && strcmp(e, "0") == 0) return false;
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].live && g->n[i].tag) return false; /* a random draw: a replay would repeat it */
  return g->nin <= MTJ_MAXIN && g->nout <= MTJ_MAXOUT;
}

static mtj_replay *make(const mtj_graph *g) {
  mtj_replay *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->nin = g->nin, r->nout = g->nout, r->nsc = g->xs_base; /* scalars the caller passes (sizes follow from shapes) */
  r->ptr = calloc((size_t)g->nin + 1, sizeof *r->ptr);
  r->shape = calloc((size_t)g->nin * MT_MAXDIM + 1, sizeof *r->shape);
  r->sc = calloc((size_t)r->nsc + 1, sizeof *r->sc);
  r->stage = calloc((size_t)g->nin + 1, sizeof *r->stage);
  r->gout = calloc((size_t)g->nout + 1, sizeof *r->gout);
  if (!r->ptr || !r->shape || !r->sc || !r->stage || !r->gout) {
    mtj_replay_free(r);
    return NULL;
  }
  r->off = !capturable(g);
  return r;
}

/* Same sizes and scalars as recorded? */
static bool same_call(const mtj_replay *r, const mt_tensor *const *ins, const double *sc) {
  for (int k = 0; k < r->nin; k++)
    for (int d = 0; d < ins[k]->ndim; d++)
      if (ins[k]->shape[d] != r->shape[k * MT_MAXDIM + d]) return false;
  for (int k = 0; k < r->nsc; k++)
    if (memcmp(&sc[k], &r->sc[k], sizeof *sc)) return false;
  return true;
}

static void record(mtj_replay *r, const mt_tensor *const *ins, const double *sc) {
  for (int k = 0; k < r->nin; k++) {
    r->ptr[k] = mt_data(ins[k]);
    for (int d = 0; d < ins[k]->ndim; d++) r->shape[k * MT_MAXDIM + d] = ins[k]->shape[d];
  }
  if (r->nsc) memcpy(r->sc, sc, (size_t)r->nsc * sizeof *sc);
}

/* Can the graph serve this call? (Its in-place inputs where it read them.) */
static bool replayable(const mtj_replay *r, const mt_tensor *const *ins, const double *sc) {
  if (!same_call(r, ins, sc)) return false;
  for (int k = 0; k < r->nin; k++)
    if (!r->stage[k] && (mt_data(ins[k]) != r->ptr[k] || !mt_is_contiguous(ins[k]))) return false;
  return true;
}

/* One replay: staged inputs in, the graph, written inputs back, copies of the results out. */
static mt_status replay(mtj_replay *r, const mtj_graph *g, const mt_tensor *const *ins, mt_tensor **outs) {
  mt_status st = MT_OK;
  for (int k = 0; k < r->nin && !st; k++)
    if (r->stage[k]) st = mt_copy_(r->stage[k], ins[k]);
  if (!st) st = mt_cuda_graph_launch(r->graph);
  for (int j = 0; j < g->nwb && !st; j++) {
    int k = g->wb_slot[j];
    if (r->stage[k]) st = mt_copy_((mt_tensor *)ins[k], r->stage[k]);
  }
  for (int k = 0; k < r->nout && !st; k++) { /* results that were one tensor stay one (autograd's saved results) */
    int j = 0;
    while (j < k && r->gout[j] != r->gout[k]) j++;
    if (j < k) outs[k] = mt_retain(outs[j]);
    else st = mt_clone(r->gout[k], &outs[k]);
  }
  if (!st) n_replays++;
  return st;
}

/* Captures the graph: inputs that kept their pointer are read in place, the others staged. */
static bool capture(mtj_replay *r, const mtj_graph *g, mtj_steps_fn steps, void *c, const mt_tensor *const *ins,
                    const double *sc) {
  const mt_tensor *in2[MTJ_MAXIN];
  mt_status st = MT_OK;
  for (int k = 0; k < r->nin; k++) in2[k] = ins[k];
  for (int k = 0; k < r->nin && !st; k++) {
    if (mt_data(ins[k]) != r->ptr[k] || !mt_is_contiguous(ins[k])) {
      st = mt_empty(ins[k]->shape, ins[k]->ndim, (mt_dtype)ins[k]->dtype, g->dev, &r->stage[k]);
      in2[k] = r->stage[k];
    }
  }
  mt_tensor *outs[MTJ_MAXOUT] = {0};
  if (!st) st = mt_cuda_capture_begin(g->dev.index);
  if (!st) {
    mt_status run = steps(c, in2, sc, outs);
    st = mt_cuda_capture_end(g->dev.index, run == MT_OK, &r->graph);
  }
  for (int k = 0; k < r->nout; k++) r->gout[k] = outs[k];
  for (int k = 0; k < r->nin; k++) r->ptr[k] = mt_data(in2[k]);
  if (st || !r->graph) {
    drop_graph(r);
    r->off = true; /* runs its steps from now on */
    n_failed++;
    return false;
  }
  /* copies of large results (or inputs) would cost more than the launches a graph saves */
  size_t bytes = 0;
  for (int k = 0; k < r->nout; k++) bytes += (size_t)mt_numel(r->gout[k]) * mt_dtype_size((mt_dtype)r->gout[k]->dtype);
  for (int k = 0; k < r->nin; k++)
    if (r->stage[k]) bytes += (size_t)mt_numel(r->stage[k]) * mt_dtype_size((mt_dtype)r->stage[k]->dtype);
  if (bytes > MAX_COPY) {
    drop_graph(r);
    r->off = true;
    return false;
  }
  n_captures++;
  return true;
}

int mtj_replay_run(mtj_replay **rp, const mtj_graph *g, mtj_steps_fn steps, void *c, const mt_tensor *const *ins,
                   const double *sc, mt_tensor **outs, mt_status *st) {
  if (!*rp && !(*rp = make(g))) return 0;
  mtj_replay *r = *rp;
  if (r->off) return 0;
  if (r->graph) {
    if (replayable(r, ins, sc)) {
      r->misses = 0;
      *st = replay(r, g, ins, outs);
      return 1;
    }
    if (++r->misses < 3) return 0;
    drop_graph(r); /* the calls changed: record them again */
    r->calls = 0;
  }
  if (r->calls == 0 || !same_call(r, ins, sc)) {
    record(r, ins, sc);
    r->calls = 1;
    return 0;
  }
  if (!capture(r, g, steps, c, ins, sc)) return 0;
  *st = replay(r, g, ins, outs);
  return 1;
}
