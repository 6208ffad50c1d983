/* runtime.c -- a compiled graph: building it (trace -> IR -> fusion ->
 * C -> loaded kernels), checking its guards against new inputs, and
 * replaying it: kernels run on the engine's thread team, views and extern
 * ops call the engine, intermediates are freed after their last step. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cg.h"
#include "cuda/mt_cuda.h"
#include "reduce.h"
#include "linalg.h"
#include "nn.h"

#define MAXSC_RUN 96

struct mtj_compiled {
  mtj_graph *g;
  char *src;
  mtj_kernel_fn *fns;
  mtj_kargs *args; /* per kernel */
  int *direct;     /* per node: the input slot its kernel stores into in place, or -1 */
  int **frees;     /* per step: the values no later step reads, -1 ended */
  bool *copy_view; /* per node: a permutation to make contiguous before kernels read it */
  bool cuda;       /* a graph on a CUDA device: cufn[k] (CUfunction) instead of fns */
  void **cufn;
  mtj_replay *replay; /* its CUDA graph (cudagraph.c) */
};

bool mtj_uses_scalar(const mtj_compiled *c, int k) {
  for (int i = 0; i < c->g->nn; i++)
    if (c->g->n[i].live && c->g->n[i].kind == JN_SCALAR && c->g->n[i].slot == k) return true;
  return false;
}

const char *mtj_text(const mtj_compiled *c) { return c->g->text; }

void mtj_free(mtj_compiled *c) {
  if (!c) return;
  if (c->frees)
    for (int s = 0; s < c->g->nsteps; s++) free(c->frees[s]);
  free(c->frees);
  free(c->direct);
  free(c->copy_view);
  mtj_graph_free(c->g);
  free(c->src);
  free(c->fns);
  free(c->cufn);
  free(c->args);
  mtj_replay_free(c->replay);
  free(c);
}

/* The last step that reads node i or a view of it (views share its buffer). */
static int alias_last(const mtj_graph *g, int i) {
  int last = g->n[i].last_step;
  for (int j = i + 1; j < g->nn; j++)
    if (g->n[j].live && g->n[j].kind == JN_VIEW && g->n[j].a[0] == i) {
      int l = alias_last(g, j);
      if (l > last) last = l;
    }
  return last;
}

/* The node whose buffer view chain i reads (i itself when not a view). */
static int view_root(const mtj_graph *g, int i) {
  while (g->n[i].kind == JN_VIEW) i = g->n[i].a[0];
  return i;
}

/* Buffer planning for write-backs: a value written back into input slot s
 * is stored by its kernel straight into that input's buffer when nothing
 * reads the old value (or a view of it) after that kernel, and the kernel
 * itself reads it only at the element it writes. The final copy is then
 * skipped (the runtime falls back to a fresh buffer when the input is not
 * contiguous or its shape differs). */
static void plan_direct(mtj_compiled *c) {
  mtj_graph *g = c->g;
  for (int i = 0; i < g->nn; i++) c->direct[i] = -1;
  for (int j = 0; j < g->nwb; j++) {
    int w = g->wb[j], s = g->wb_slot[j], in = -1;
    const mtj_node *x = &g->n[w];
    if (x->kind == JN_REDUCE || x->kernel < 0 || !x->mat || c->direct[w] >= 0) continue;
    bool is_out = false;
    for (int k = 0; k < g->nout; k++) is_out |= g->out[k] == w;
    for (int i = 0; i < g->nn && in < 0; i++)
      if (g->n[i].live && g->n[i].kind == JN_INPUT && g->n[i].slot == s) in = i;
    if (is_out || (in >= 0 && g->n[in].dtype != x->dtype)) continue;
    int step = g->k[x->kernel].step;
    if (in >= 0) {
      int last = alias_last(g, in);
      if (last > step) continue;
      if (last == step) { /* read by this very kernel: only at the element it stores (each element's loads
                             precede its store; reductions store a row after reading it) */
        const mtj_kargs *a = &c->args[x->kernel];
        bool ok = true, scalar_space = g->k[x->kernel].ndim == 0;
        for (int l = 0; l < a->nload && ok; l++)
          if (a->load[l] == in) ok = a->cls[l] == MTJ_LD_FULL || (scalar_space && a->cls[l] == MTJ_LD_SCALAR);
          else if (view_root(g, a->load[l]) == in) ok = false; /* a view of it read here */
        if (!ok) continue;
      }
    }
    c->direct[w] = s;
  }
}

/* Permutations that fused kernels read are made contiguous when the graph
 * runs: a kernel reads a transposed operand with a large stride, element by
 * element beside its other streams (Adam's update of a linear layer's
 * weight reads the weight's gradient that way, the matmul having made it
 * transposed), while the engine's copy transposes it once. Kernels take
 * their operands' strides at run time, so either layout works. */
static mt_status plan_views(mtj_compiled *c) {
  mtj_graph *g = c->g;
  c->copy_view = calloc((size_t)g->nn + 1, sizeof *c->copy_view);
  if (!c->copy_view) return mt_fail(MT_ENOMEM, "out of memory");
  for (int i = 0; i < g->nn; i++) {
    const mtj_node *x = &g->n[i];
    if (!x->live || x->kernel < 0) continue;
    for (int k = 0; k < MTJ_NA; k++) {
      int a = x->a[k];
      if (a >= 0 && g->n[a].kind == JN_VIEW && g->n[a].op == MT_OP_permute && g->n[a].ndim >= 2)
        c->copy_view[a] = true;
    }
  }
  return MT_OK;
}

/* Per step, the values whose last reader it is (freed after it runs). */
static mt_status plan_frees(mtj_compiled *c) {
  mtj_graph *g = c->g;
  c->frees = calloc((size_t)g->nsteps + 1, sizeof *c->frees);
  if (!c->frees) return mt_fail(MT_ENOMEM, "out of memory");
  for (int s = 0; s < g->nsteps; s++) {
    int n = 0;
    for (int i = 0; i < g->nn; i++) n += g->n[i].live && g->n[i].last_step == s && g->n[i].kind != JN_INPUT;
    c->frees[s] = malloc((size_t)(n + 1) * sizeof **c->frees);
    if (!c->frees[s]) return mt_fail(MT_ENOMEM, "out of memory");
    n = 0;
    for (int i = 0; i < g->nn; i++)
      if (g->n[i].live && g->n[i].last_step == s && g->n[i].kind != JN_INPUT) c->frees[s][n++] = i;
    c->frees[s][n] = -1;
  }
  return MT_OK;
}

/* MOONTORCH_JIT_CUDA_DUMP=dir: CPU graphs also write the CUDA C the GPU
 * generator makes for them into dir/<hash>.cu (to check that source with
 * nvcc on a machine without a GPU). */
static void dump_cuda(mtj_graph *g) {
  const char *dir = getenv("MOONTORCH_JIT_CUDA_DUMP");
  if (!dir || !*dir) return;
  char *src = mtj_codegen_cuda(g, NULL);
  if (!src) {
    fprintf(stderr, "jit: no CUDA code: %s\n", mtj_codegen_error());
    return;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *p = src; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  char path[1024];
  snprintf(path, sizeof path, "%s/%016llx.cu", dir, (unsigned long long)h);
  FILE *f = fopen(path, "w");
  if (f) fputs(src, f), fclose(f);
  free(src);
}

/* Fusion, kernel arguments, buffer planning, C source and loaded kernels
 * of c's graph (fields filled in c; c->g is built). */
static mt_status finish_compiled(mtj_compiled *c) {
  size_t *ends = NULL; /* where each kernel's CUDA code stops (for a parallel build) */
  mt_status st = mtj_fuse(c->g);
  if (!st) {
    c->args = calloc((size_t)c->g->nk + 1, sizeof *c->args);
    c->fns = calloc((size_t)c->g->nk + 1, sizeof *c->fns);
    if (!c->args || !c->fns) st = mt_fail(MT_ENOMEM, "out of memory");
  }
  for (int k = 0; !st && k < c->g->nk; k++) st = mtj_kernel_args(c->g, k, &c->args[k]);
  if (!st && !(c->direct = malloc((size_t)c->g->nn * sizeof *c->direct))) st = mt_fail(MT_ENOMEM, "out of memory");
  if (!st) plan_direct(c), st = plan_frees(c);
  if (!st) st = plan_views(c);
  c->cuda = c->g->dev.type == MT_CUDA;
  if (!st) {
    c->g->text = mtj_canon(c->g);
    c->src = c->cuda ? mtj_codegen_cuda(c->g, &ends) : mtj_codegen(c->g);
    if (!c->g->text || !c->src)
      st = mt_fail(MT_EARG, "the JIT has no %s code for %s yet", c->cuda ? "CUDA" : "C",
                   mtj_codegen_error()[0] ? mtj_codegen_error() : "an op of the graph");
  }
  if (!st) dump_cuda(c->g);
  if (!st && c->cuda) {
    if (!(c->cufn = calloc((size_t)c->g->nk + 1, sizeof *c->cufn))) st = mt_fail(MT_ENOMEM, "out of memory");
    if (!st) st = mtj_cuda_build(c->g->dev.index, c->src, ends, c->g->nk, c->cufn);
  } else if (!st && c->g->nk) {
    st = mtj_load(c->g->text, c->src, c->g->nk, c->fns);
  }
  free(ends);
  return st;
}

mt_status mtj_compile(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *scalars,
                      const bool *sc_int, int nsc, const mt_tensor *const *outs, int nout, const mtj_options *o,
                      mtj_compiled **out) {
  mtj_compiled *c = calloc(1, sizeof *c);
  if (!c) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = mtj_build(tr, ins, nin, scalars, sc_int, nsc, outs, nout, o, &c->g);
  if (!st) st = finish_compiled(c);
  if (st) {
    mtj_free(c);
    return st;
  }
  *out = c;
  return MT_OK;
}

/* A copy of g's nodes and tables, without kernels, steps or text. */
static mtj_graph *graph_copy(const mtj_graph *g) {
  mtj_graph *h = malloc(sizeof *h);
  if (!h) return NULL;
  *h = *g;
  h->k = NULL, h->nk = 0, h->steps = NULL, h->nsteps = 0, h->text = NULL;
  h->n = malloc((size_t)g->cap * sizeof *h->n);
  if (!h->n) {
    free(h);
    return NULL;
  }
  memcpy(h->n, g->n, (size_t)g->nn * sizeof *h->n);
  return h;
}

bool mtj_is_generalized(const mtj_compiled *c) { return c && c->g->generalized; }

mt_status mtj_generalize_compiled(const mtj_compiled *old, mtj_compiled *c) {
  mtj_graph *h = graph_copy(c->g);
  if (!h) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = mtj_generalize(old->g, h);
  mtj_compiled t = {.g = h};
  if (!st) st = finish_compiled(&t);
  if (st) {
    mtj_compiled *tp = malloc(sizeof *tp);
    if (tp) *tp = t, mtj_free(tp);
    else mtj_graph_free(h);
    return st;
  }
  mtj_compiled prev = *c;
  *c = t;
  mtj_compiled *pp = malloc(sizeof *pp);
  if (pp) *pp = prev, mtj_free(pp);
  return MT_OK;
}

bool mtj_guard(const mtj_compiled *c, const mt_tensor *const *ins, char *why, size_t n) {
  const mtj_graph *g = c->g;
  for (int k = 0; k < g->nin; k++) {
    const mt_tensor *t = ins[k];
    const mtj_input *m = &g->in[k];
    if (t->dtype != m->dtype) {
      snprintf(why, n, "input %d: dtype %s, compiled for %s", k + 1, mt_dtype_name((mt_dtype)t->dtype),
               mt_dtype_name((mt_dtype)m->dtype));
      return false;
    }
    if (t->ndim != m->ndim) {
      snprintf(why, n, "input %d: rank %d, compiled for rank %d", k + 1, t->ndim, m->ndim);
      return false;
    }
    if (!mt_same_device(mt_tdevice(t), g->dev)) {
      char a[32], b[32];
      snprintf(why, n, "input %d is on %s, compiled for %s", k + 1, mt_device_str(mt_tdevice(t), a, sizeof a),
               mt_device_str(g->dev, b, sizeof b));
      return false;
    }
    const mtj_node *xn = &g->n[g->in_node[k]];
    for (int d = 0; d < t->ndim; d++)
      if ((t->shape[d] == 1) != (m->shape[d] == 1) || (g->is_static && t->shape[d] != m->shape[d]) ||
          (g->generalized && xn->shape[d].sym < 0 && t->shape[d] != xn->shape[d].c)) {
        snprintf(why, n, "input %d: size %lld of dim %d, compiled for %s%lld", k + 1, (long long)t->shape[d], d + 1,
                 g->is_static ? "" : (m->shape[d] == 1 ? "" : "sizes other than 1, not "),
                 (long long)(g->is_static || m->shape[d] == 1 ? m->shape[d] : 1));
        return false;
      }
  }
  /* dims in one symbol class must agree (broadcasting) */
  for (int s = 0; s < g->nsym; s++) {
    int r = mtj_find((mtj_graph *)g, s);
    if (ins[g->sym_in[s]]->shape[g->sym_dim[s]] != ins[g->sym_in[r]]->shape[g->sym_dim[r]]) {
      snprintf(why, n, "sizes that must match differ (input %d dim %d vs input %d dim %d)", g->sym_in[s] + 1,
               g->sym_dim[s] + 1, g->sym_in[r] + 1, g->sym_dim[r] + 1);
      return false;
    }
  }
  return true;
}

static int64_t dim_value(const mtj_graph *g, mtj_dim d, const mt_tensor *const *ins) {
  if (d.sym < 0) return d.c;
  return ins[g->sym_in[d.sym]]->shape[g->sym_dim[d.sym]];
}

/* A kernel's work is cut into nslices slices (its (ith, nth) arguments);
 * the team's threads take the next free slice until none is left, so a
 * thread the OS runs late (a busy machine) does not hold the others up. */
typedef struct team_ctx {
  mtj_kernel_fn fn;
  void **a;
  const int64_t *z;
  const double *s;
  int nslices, next;
} team_ctx;

static void team_run(void *ctx, int ith, int nth) {
  team_ctx *t = ctx;
  (void)ith, (void)nth;
  for (int k; (k = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED)) < t->nslices;)
    t->fn(t->a, t->z, t->s, k, t->nslices);
}

/* The value of node i: computed, or a constant made into a tensor now. */
static mt_tensor *value(const mtj_graph *g, mt_tensor **v, int i, const mt_tensor *const *ins, mt_status *st) {
  if (i < 0 || v[i] || *st) return i < 0 ? NULL : v[i];
  const mtj_node *x = &g->n[i];
  if (x->kind != JN_CONST) {
    *st = mt_fail(MT_EARG, "internal: the JIT read a value before it was computed");
    return NULL;
  }
  int64_t shape[MT_MAXDIM];
  for (int d = 0; d < x->ndim; d++) shape[d] = dim_value(g, x->shape[d], ins);
  *st = mt_full(shape, x->ndim, mt_sfloat(x->c), (mt_dtype)x->dtype, g->dev, &v[i]);
  return v[i];
}

/* A replayed engine call (trace.h): its outputs go to v[node] and to the
 * live XOUT nodes that name it. */
static mt_status run_call(const mtj_graph *g, int node, mt_tensor **v, const mt_tensor *const *ins) {
  const mtj_node *x = &g->n[node];
  mt_status st = MT_OK;
  const mt_tensor *in[MTJ_NA];
  for (int k = 0; k < MTJ_NA; k++) in[k] = value(g, v, x->a[k], ins, &st);
  mt_tensor *outs[MTG_TRACE_NOUT] = {0};
  int64_t attr[MTG_TRACE_NI];
  memcpy(attr, x->attr, sizeof attr);
  for (int k = 0; k < g->npatch; k++) /* sizes a generalized graph passes to the engine op */
    if (g->patch[k].node == node) attr[g->patch[k].word] = dim_value(g, (mtj_dim){g->patch[k].sym, 0}, ins);
  double f[3] = {x->f[0], x->f[1], x->f[2]};
  if (x->act) f[0] = x->act, f[1] = x->c; /* a folded activation (rewrite.c; nn_replay.c's rp_convolution) */
  if (!st && x->inplace) st = mt_clone(in[0], &outs[0]);
  if (!st) st = x->fn(attr, f, in, outs);
  if (!st && g->generalized) { /* the sizes the graph assumed for the result */
    bool same = outs[0]->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++) same = outs[0]->shape[d] == dim_value(g, x->shape[d], ins);
    if (!same) st = mt_fail(MT_ESHAPE, "torch.compile: %s gave a result of other sizes than the graph with dynamic "
                                       "sizes assumed (internal; MOONTORCH_JIT=0 runs eagerly)", x->name);
  }
  if (!st) {
    st = mt_contiguous(outs[0], &v[node]);
    for (int i = 0; i < g->nn && !st; i++) {
      const mtj_node *y = &g->n[i];
      if (y->live && y->kind == JN_XOUT && y->a[0] == node && y->slot < MTG_TRACE_NOUT && outs[y->slot])
        st = mt_contiguous(outs[y->slot], &v[i]);
    }
  }
  for (int k = 0; k < MTG_TRACE_NOUT; k++) mt_release(outs[k]);
  return st;
}

/* An engine call node: the op through its uniform entry (mt_call) with the
 * traced arguments; a matmul that took a bias or an activation from
 * rewrite.c runs as one fused call. */
static mt_status run_extern(const mtj_node *x, mt_tensor *const *v, mt_tensor **out) {
  const mt_tensor *in[3] = {x->a[0] >= 0 ? v[x->a[0]] : NULL, x->a[1] >= 0 ? v[x->a[1]] : NULL,
                            x->a[2] >= 0 ? v[x->a[2]] : NULL};
  if (x->op == MT_OP_matmul && (in[2] || x->act)) return mt_matmul_act(in[0], in[1], in[2], (mt_act)x->act, x->c, out);
  mt_args a = {.ni = x->nattr < MT_NARGI ? x->nattr : MT_NARGI, .nf = 3};
  memcpy(a.i, x->attr, (size_t)a.ni * sizeof *a.i);
  memcpy(a.f, x->f, sizeof a.f);
  mt_tensor *outs[MTG_TRACE_NOUT] = {*out};
  mt_status st = mt_call((mt_op)x->op, in, 3, &a, outs);
  *out = outs[0];
  for (int k = 1; k < MTG_TRACE_NOUT; k++) mt_release(outs[k]);
  return st;
}

/* MOONTORCH_JIT_PROFILE=1: seconds spent per kind of step, printed at
 * exit, with the engine calls by name and the slowest kernels one by one.
 * On CUDA every step is followed by a device sync, so a step's time is its
 * host work plus its GPU work, not overlapped (and the run is slower). */
static int prof_on = -1;
static double prof_s[4]; /* kernels, engine calls and views, write-backs, whole runs */
static int64_t prof_runs;
static const char *prof_names[4] = {"kernels", "engine calls", "write-backs", "whole runs"};

typedef struct {
  char name[64];
  double s;
} prof_row;
static prof_row prof_ops[64];   /* engine calls by name */
static prof_row prof_k[512];    /* kernels by graph and index */
static const void *prof_kg[512]; /* the graph of prof_k[i] */
static int prof_kn[512];         /* its kernel index */

/* Adds seconds dt to row `name` of rows[0..n) (the first free or equal row). */
static void prof_add(prof_row *rows, int n, const char *name, double dt) {
  for (int k = 0; k < n; k++) {
    if (!rows[k].name[0]) snprintf(rows[k].name, sizeof rows[k].name, "%s", name);
    if (strcmp(rows[k].name, name) == 0) {
      rows[k].s += dt;
      return;
    }
  }
}

static void prof_op(const char *name, double dt) { prof_add(prof_ops, 64, name, dt); }

static int prof_cmp(const void *a, const void *b) {
  double x = ((const prof_row *)a)->s, y = ((const prof_row *)b)->s;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void prof_print(void) {
  double per = 1e3 / (double)(prof_runs ? prof_runs : 1);
  fprintf(stderr, "jit profile: %lld runs;", (long long)prof_runs);
  for (int k = 0; k < 4; k++) fprintf(stderr, " %s %.3f ms/run;", prof_names[k], prof_s[k] * per);
  fprintf(stderr, "\n");
  qsort(prof_ops, 64, sizeof *prof_ops, prof_cmp);
  for (int k = 0; k < 64 && prof_ops[k].name[0]; k++) fprintf(stderr, "  %-40s %.3f ms/run\n", prof_ops[k].name, prof_ops[k].s * per);
  qsort(prof_k, 512, sizeof *prof_k, prof_cmp);
  fprintf(stderr, "  slowest kernels:\n");
  for (int k = 0; k < 25 && prof_k[k].name[0]; k++) fprintf(stderr, "  %-40s %.3f ms/run\n", prof_k[k].name, prof_k[k].s * per);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static mt_status run_steps(void *cv, const mt_tensor *const *ins, const double *scalars, mt_tensor **outs);

/* Launches CUDA kernel k of c: its one argument is the struct mj_a<k>
 * (codegen_cuda.c) -- the buffers, z with the vector flag last, the scalars. */
static mt_status launch_cuda(mtj_compiled *c, int k, void **ptr, int64_t *z, const double *sc, int64_t rows,
                             int64_t inner) {
  const mtj_graph *g = c->g;
  const mtj_kernel *K = &g->k[k];
  const mtj_kargs *a = &c->args[k];
  int na = a->nload + a->nstore, R = K->ndim, nz = 2 + R + a->nload * R + 1, ns = g->xs_base + g->nxs;
  int naa = na > 0 ? na : 1;
  uint64_t w[520] = {0};
  if (naa + nz + (ns > 0 ? ns : 1) > 520) return mt_fail(MT_EARG, "internal: a CUDA kernel's arguments are too large");
  /* vectors of 4: a row of a broadcast operand must hold whole vectors, and every vector operand be aligned */
  bool vec = K->p < 0 && (a->flat || inner % 4 == 0);
  for (int l = 0; l < na && vec; l++) {
    int cls = l < a->nload ? a->cls[l] : MTJ_LD_FULL;
    int dt = g->n[l < a->nload ? a->load[l] : a->store[l - a->nload]].dtype;
    if (cls == MTJ_LD_GENERAL) vec = false;
    else if ((cls == MTJ_LD_FULL || cls == MTJ_LD_INNER) && (uintptr_t)ptr[l] % (4 * mt_dtype_size((mt_dtype)dt)))
      vec = false;
  }
  z[nz - 1] = vec;
  memcpy(w, ptr, (size_t)na * sizeof *w);
  memcpy(w + naa, z, (size_t)nz * sizeof *w);
  if (ns > 0) memcpy(w + naa + nz, sc, (size_t)ns * sizeof *w);
  void *params[1] = {w};
  if (K->p < 0) {
    int64_t groups = (rows * inner + 3) / 4;
    return mt_cuda_launch_grid(g->dev.index, c->cufn[k], (groups + 255) / 256, 256, params, "compiled graph");
  }
  int threads = 32;
  while (threads < inner && threads < 256) threads *= 2;
  return mt_cuda_launch_grid(g->dev.index, c->cufn[k], rows, threads, params, "compiled graph");
}

mt_status mtj_run(mtj_compiled *c, const mt_tensor *const *ins, const double *scalars, mt_tensor **outs) {
  mt_status st;
  if (c->cuda && mtj_replay_run(&c->replay, c->g, run_steps, c, ins, scalars, outs, &st)) return st;
  return run_steps(c, ins, scalars, outs);
}

/* Step sp that is not a kernel: an engine call, a view, an extern op
 * (its value goes to v[sp->node]). */
static mt_status run_node_step(mtj_compiled *c, const mtj_step *sp, mt_tensor **v, const mt_tensor *const *ins) {
  mtj_graph *g = c->g;
  const mtj_node *x = &g->n[sp->node];
  int64_t shape[MT_MAXDIM];
  for (int d = 0; d < x->ndim; d++) shape[d] = dim_value(g, x->shape[d], ins);
  mt_status st = MT_OK;
  mt_tensor *src = value(g, v, x->a[0], ins, &st), *r = NULL;
  if (st || x->kind == JN_XOUT) return st; /* an extra output is set by its call */
  if (x->fn) return run_call(g, sp->node, v, ins);
  if (x->kind == JN_VIEW) {
    if (x->op == MT_OP_permute) {
      int perm[MT_MAXDIM];
      for (int d = 0; d < x->ndim; d++) perm[d] = (int)x->attr[d];
      st = mt_permute(src, perm, x->ndim, &r);
      if (!st && c->copy_view[sp->node] && !mt_is_contiguous(r)) { /* see plan_views */
        mt_tensor *t = NULL;
        st = mt_contiguous(r, &t);
        mt_release(r);
        r = t;
      }
    } else if (x->op == MT_OP_expand) {
      st = mt_expand(src, shape, x->ndim, &r);
    } else {
      st = mt_reshape(src, shape, x->ndim, &r);
    }
    v[sp->node] = r;
    return st;
  }
  st = run_extern(x, v, &r);
  if (!st) st = mt_contiguous(r, &v[sp->node]);
  mt_release(r);
  return st;
}

/* Kernel step sp: its operands' pointers and strides, its results made
 * (or the inputs they update in place), then the C kernel on a team of up
 * to nth_max threads or the CUDA kernel on the current stream. */
static mt_status run_kernel_step(mtj_compiled *c, const mtj_step *sp, mt_tensor **v, const mt_tensor *const *ins,
                                 const double *sc, int nth_max) {
  mtj_graph *g = c->g;
  const mtj_kernel *K = &g->k[sp->kernel];
  const mtj_kargs *a = &c->args[sp->kernel];
  void *ptr[MTJ_KLOAD + MTJ_KSTORE];
  int64_t z[2 + MT_MAXDIM + MTJ_KLOAD * MT_MAXDIM];
  int64_t rows = 1, inner = 1;
  for (int d = 0; d < K->ndim; d++) {
    z[2 + d] = dim_value(g, K->F[d], ins);
    if (d < a->p) rows *= z[2 + d];
    else inner *= z[2 + d];
  }
  z[0] = rows, z[1] = inner;
  mt_status st = MT_OK;
  mt_tensor *moved[MTJ_KLOAD] = {NULL}; /* host values a CUDA kernel reads, copied up for this launch */
  for (int l = 0; l < a->nload && !st; l++) {
    const mt_tensor *t = v[a->load[l]];
    if (c->cuda && mt_tdevice(t).type != MT_CUDA) {
      /* an extern op's host result (a 0-dim statistic, a host-made
       * constant): a kernel must never get a host address */
      if ((st = mt_cuda_to_device(t, g->dev, false, &moved[l]))) break;
      t = moved[l];
    }
    ptr[l] = mt_data(t);
    if (a->cls[l] == MTJ_LD_GENERAL) /* strides aligned to F, 0 where broadcast */
      for (int d = 0; d < K->ndim; d++) {
        int e = d - (K->ndim - t->ndim);
        z[2 + K->ndim + l * K->ndim + d] = e < 0 || t->shape[e] == 1 ? 0 : t->strides[e];
      }
  }
  for (int l = 0; l < a->nstore && !st; l++) {
    const mtj_node *x = &g->n[a->store[l]];
    int64_t shape[MT_MAXDIM];
    for (int d = 0; d < x->ndim; d++) shape[d] = dim_value(g, x->shape[d], ins);
    int s = c->direct[a->store[l]];
    mt_tensor *t = s >= 0 ? (mt_tensor *)ins[s] : NULL;
    bool same = t && t->ndim == x->ndim && t->dtype == x->dtype && mt_is_contiguous(t);
    for (int d = 0; same && d < x->ndim; d++) same = t->shape[d] == shape[d];
    if (same) v[a->store[l]] = mt_retain(t); /* stored in place into the input it updates */
    else st = mt_empty(shape, x->ndim, (mt_dtype)x->dtype, g->dev, &v[a->store[l]]);
    if (!st) ptr[a->nload + l] = mt_data(v[a->store[l]]);
  }
  if (c->cuda) {
    if (!st) st = launch_cuda(c, sp->kernel, ptr, z, sc, rows, inner);
    for (int l = 0; l < a->nload; l++) mt_release(moved[l]); /* stream order keeps them until the kernel ran */
    return st;
  }
  int64_t work = rows * inner, units = a->flat ? work : rows;
  if (st || work <= 0) return st;
  int nth = (int)(work / 32768 + 1);
  if (nth > nth_max) nth = nth_max;
  if (nth > units) nth = units > 0 ? (int)units : 1;
  int64_t ns = nth > 1 ? 8 * (int64_t)nth : 1; /* 8 slices a thread */
  team_ctx t = {c->fns[sp->kernel], ptr, z, sc, (int)(ns < units ? ns : units), 0};
  return mt_parallel_team(nth, team_run, &t);
}

/* MOONTORCH_JIT_PROFILE: adds step sp's dt seconds to its row: an engine
 * call by name, a kernel by its graph and index (named by its shape). */
static void prof_step(const mtj_compiled *c, const mtj_step *sp, const mt_tensor *const *ins, double dt) {
  const mtj_graph *g = c->g;
  prof_s[sp->kernel < 0 ? 1 : 0] += dt;
  if (sp->kernel < 0) {
    const mtj_node *x = &g->n[sp->node];
    prof_op(x->fn ? x->name : x->kind == JN_VIEW ? "(views)" : x->kind == JN_XOUT ? "(xout)" : mt_ops[x->op].name, dt);
    return;
  }
  for (int i = 0; i < 512; i++) {
    if (!prof_kg[i]) {
      const mtj_kernel *K = &g->k[sp->kernel];
      long long rows = 1, inner = 1;
      for (int d = 0; d < K->ndim; d++) *(d < c->args[sp->kernel].p ? &rows : &inner) *= dim_value(g, K->F[d], ins);
      prof_kg[i] = g, prof_kn[i] = sp->kernel;
      if (K->p < 0) snprintf(prof_k[i].name, sizeof prof_k[i].name, "kernel %d: elementwise %lld", sp->kernel, rows * inner);
      else snprintf(prof_k[i].name, sizeof prof_k[i].name, "kernel %d: %lld rows x %lld", sp->kernel, rows, inner);
    }
    if (prof_kg[i] == g && prof_kn[i] == sp->kernel) {
      prof_k[i].s += dt;
      return;
    }
  }
}

/* Runs the steps of c (kernels, engine calls, views, write-backs). */
static mt_status run_steps(void *cv, const mt_tensor *const *ins, const double *scalars, mt_tensor **outs) {
  mtj_compiled *c = cv;
  mtj_graph *g = c->g;
  if (prof_on < 0) {
    const char *e = getenv("MOONTORCH_JIT_PROFILE");
    prof_on = e && *e && strcmp(e, "0") != 0;
    if (prof_on) atexit(prof_print);
  }
  double t_run = prof_on ? now_s() : 0, t0 = t_run;
  mt_tensor **v = calloc((size_t)g->nn, sizeof *v);
  if (!v) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = MT_OK;
  for (int i = 0; i < g->nn && !st; i++)
    if (g->n[i].live && g->n[i].kind == JN_INPUT) st = mt_contiguous(ins[g->n[i].slot], &v[i]);
  int nth_max = mt_get_num_threads();
  /* scalars: the caller's, then sizes a generalized graph reads as numbers */
  double scbuf[MAXSC_RUN];
  const double *sc = scalars;
  if (g->nxs && g->xs_base + g->nxs <= MAXSC_RUN) {
    memcpy(scbuf, scalars, (size_t)g->xs_base * sizeof *scbuf);
    for (int k = 0; k < g->nxs; k++) {
      double v = (double)dim_value(g, (mtj_dim){g->xs_sym[k], 0}, ins);
      scbuf[g->xs_base + k] = g->xs_inv[k] ? 1 / v : v;
    }
    sc = scbuf;
  }
  for (int si = 0; si < g->nsteps && !st; si++) {
    const mtj_step *sp = &g->steps[si];
    if (prof_on) t0 = now_s();
    st = sp->kernel < 0 ? run_node_step(c, sp, v, ins) : run_kernel_step(c, sp, v, ins, sc, nth_max);
    if (st) break;
    if (prof_on && c->cuda) st = mt_cuda_synchronize(g->dev.index);
    if (prof_on) prof_step(c, sp, ins, now_s() - t0);
    /* free values whose last reader was this step */
    for (const int *f = c->frees[si]; *f >= 0; f++) {
      mt_release(v[*f]);
      v[*f] = NULL;
    }
  }
  for (int k = 0; k < g->nout && !st; k++) outs[k] = mt_retain(value(g, v, g->out[k], ins, &st));
  if (prof_on) t0 = now_s();
  /* inputs the function wrote in place get their new values last */
  for (int k = 0; k < g->nwb && !st; k++) {
    mt_tensor *dst = (mt_tensor *)ins[g->wb_slot[k]], *src = value(g, v, g->wb[k], ins, &st);
    if (!st && mt_data(dst) != mt_data(src)) st = mt_copy_(dst, src);
  }
  for (int i = 0; i < g->nn; i++) mt_release(v[i]);
  free(v);
  if (prof_on) prof_s[2] += now_s() - t0, prof_s[3] += now_s() - t_run, prof_runs++;
  return st;
}

void mtj_explain(const mtj_compiled *c, FILE *f) {
  fprintf(f, "-- IR (after decomposition, CSE, DCE and fusion) --\n%s", c->g->text);
  fprintf(f, "-- %d kernel(s), %d step(s) --\n", c->g->nk, c->g->nsteps);
  if (c->g->nwb) {
    fprintf(f, "-- write-backs (in-place updates of inputs) --\n");
    for (int k = 0; k < c->g->nwb; k++)
      fprintf(f, "in%d <- %%%d: %s\n", c->g->wb_slot[k], c->g->wb[k],
              c->direct[c->g->wb[k]] == c->g->wb_slot[k] ? "stored in place by its kernel" : "copied at the end");
  }
  fprintf(f, "-- generated %s --\n%s", c->cuda ? "CUDA C" : "C", c->src);
}
