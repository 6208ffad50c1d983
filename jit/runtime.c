/* runtime.c -- a compiled graph: building it (trace -> IR -> fusion ->
 * C -> loaded kernels), checking its guards against new inputs, and
 * replaying it: kernels run on the engine's thread team, views and extern
 * ops call the engine, intermediates are freed after their last step. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "reduce.h"
#include "linalg.h"
#include "nn.h"

struct mtj_compiled {
  mtj_graph *g;
  char *src;
  mtj_kernel_fn *fns;
  mtj_kargs *args; /* per kernel */
};

bool mtj_uses_scalar(const mtj_compiled *c, int k) {
  for (int i = 0; i < c->g->nn; i++)
    if (c->g->n[i].live && c->g->n[i].kind == JN_SCALAR && c->g->n[i].slot == k) return true;
  return false;
}

const char *mtj_text(const mtj_compiled *c) { return c->g->text; }

void mtj_free(mtj_compiled *c) {
  if (!c) return;
  mtj_graph_free(c->g);
  free(c->src);
  free(c->fns);
  free(c->args);
  free(c);
}

mt_status mtj_compile(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *scalars,
                      const bool *sc_int, int nsc, const mt_tensor *const *outs, int nout, const mtj_options *o,
                      mtj_compiled **out) {
  mtj_compiled *c = calloc(1, sizeof *c);
  if (!c) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = mtj_build(tr, ins, nin, scalars, sc_int, nsc, outs, nout, o ? o->dynamic : true, &c->g);
  if (!st) st = mtj_fuse(c->g);
  if (!st) {
    c->args = calloc((size_t)c->g->nk + 1, sizeof *c->args);
    c->fns = calloc((size_t)c->g->nk + 1, sizeof *c->fns);
    if (!c->args || !c->fns) st = mt_fail(MT_ENOMEM, "out of memory");
  }
  for (int k = 0; !st && k < c->g->nk; k++) st = mtj_kernel_args(c->g, k, &c->args[k]);
  if (!st) {
    c->g->text = mtj_canon(c->g);
    c->src = mtj_codegen(c->g);
    if (!c->g->text || !c->src) st = mt_fail(MT_EARG, "an op of the graph has no C form for its dtype yet");
  }
  if (!st && c->g->nk) st = mtj_load(c->g->text, c->src, c->g->nk, c->fns);
  if (st) {
    mtj_free(c);
    return st;
  }
  *out = c;
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
    if (mt_tdevice(t).type != MT_CPU) {
      snprintf(why, n, "input %d is not on the CPU", k + 1);
      return false;
    }
    for (int d = 0; d < t->ndim; d++)
      if ((t->shape[d] == 1) != (m->shape[d] == 1) || (g->is_static && t->shape[d] != m->shape[d])) {
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

static mt_status run_extern(const mtj_node *x, mt_tensor *const *v, mt_tensor **out) {
  const mt_tensor *a = x->a[0] >= 0 ? v[x->a[0]] : NULL, *b = x->a[1] >= 0 ? v[x->a[1]] : NULL,
                  *c = x->a[2] >= 0 ? v[x->a[2]] : NULL;
  int dims[MT_MAXDIM], nd = 0;
  if (a && mt_ops[x->op].kind == MT_K_REDUCE)
    for (int d = 0; d < a->ndim; d++)
      if (x->attr[0] >> d & 1) dims[nd++] = d;
  switch (x->op) {
  case MT_OP_matmul: return mt_matmul(a, b, out);
  case MT_OP_sum: return mt_sum(a, dims, nd, x->attr[1], (int)x->attr[2], out);
  case MT_OP_mean: return mt_mean(a, dims, nd, x->attr[1], (int)x->attr[2], out);
  case MT_OP_amax: return mt_amax(a, dims, nd, x->attr[1], out);
  case MT_OP_amin: return mt_amin(a, dims, nd, x->attr[1], out);
  case MT_OP_softmax: return mt_softmax(a, (int)x->attr[0], (int)x->attr[1], out);
  case MT_OP_log_softmax: return mt_log_softmax(a, (int)x->attr[0], (int)x->attr[1], out);
  case MT_OP_layer_norm: return mt_layer_norm(a, (int)x->attr[0], b, c, x->f[0], out, NULL, NULL);
  default: return mt_fail(MT_EARG, "internal: the JIT has no extern call for %s", mt_ops[x->op].name);
  }
}

mt_status mtj_run(mtj_compiled *c, const mt_tensor *const *ins, const double *scalars, mt_tensor **outs) {
  mtj_graph *g = c->g;
  mt_tensor **v = calloc((size_t)g->nn, sizeof *v);
  if (!v) return mt_fail(MT_ENOMEM, "out of memory");
  mt_status st = MT_OK;
  for (int i = 0; i < g->nn && !st; i++)
    if (g->n[i].live && g->n[i].kind == JN_INPUT) st = mt_contiguous(ins[g->n[i].slot], &v[i]);
  int nth_max = mt_get_num_threads();
  for (int si = 0; si < g->nsteps && !st; si++) {
    const mtj_step *sp = &g->steps[si];
    if (sp->kernel < 0) {
      const mtj_node *x = &g->n[sp->node];
      int64_t shape[MT_MAXDIM];
      for (int d = 0; d < x->ndim; d++) shape[d] = dim_value(g, x->shape[d], ins);
      mt_tensor *src = v[x->a[0]], *r = NULL;
      if (x->kind == JN_VIEW) {
        if (x->op == MT_OP_permute) {
          int perm[MT_MAXDIM];
          for (int d = 0; d < x->ndim; d++) perm[d] = (int)x->attr[d];
          st = mt_permute(src, perm, x->ndim, &r);
        } else if (x->op == MT_OP_expand) {
          st = mt_expand(src, shape, x->ndim, &r);
        } else {
          st = mt_reshape(src, shape, x->ndim, &r);
        }
        v[sp->node] = r;
      } else {
        st = run_extern(x, v, &r);
        if (!st) st = mt_contiguous(r, &v[sp->node]);
        mt_release(r);
      }
    } else {
      const mtj_kernel *K = &g->k[sp->kernel];
      const mtj_kargs *a = &c->args[sp->kernel];
      void *ptr[96];
      int64_t z[2 + MT_MAXDIM + 64 * MT_MAXDIM];
      int64_t rows = 1, inner = 1;
      for (int d = 0; d < K->ndim; d++) {
        z[2 + d] = dim_value(g, K->F[d], ins);
        if (d < a->p) rows *= z[2 + d];
        else inner *= z[2 + d];
      }
      z[0] = rows, z[1] = inner;
      for (int l = 0; l < a->nload; l++) {
        const mt_tensor *t = v[a->load[l]];
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
        st = mt_empty(shape, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &v[a->store[l]]);
        if (!st) ptr[a->nload + l] = mt_data(v[a->store[l]]);
      }
      if (st) break;
      int64_t work = rows * inner, units = a->flat ? work : rows;
      int nth = (int)(work / 32768 + 1);
      if (nth > nth_max) nth = nth_max;
      if (nth > units) nth = units > 0 ? (int)units : 1;
      if (work > 0) {
        int64_t ns = nth > 1 ? 8 * (int64_t)nth : 1; /* 8 slices a thread */
        team_ctx t = {c->fns[sp->kernel], ptr, z, scalars, (int)(ns < units ? ns : units), 0};
        st = mt_parallel_team(nth, team_run, &t);
      }
    }
    /* free values whose last reader was this step */
    for (int i = 0; i < g->nn; i++)
      if (v[i] && g->n[i].last_step == si && g->n[i].kind != JN_INPUT) {
        mt_release(v[i]);
        v[i] = NULL;
      }
  }
  for (int k = 0; k < g->nout && !st; k++) outs[k] = mt_retain(v[g->out[k]]);
  for (int i = 0; i < g->nn; i++) mt_release(v[i]);
  free(v);
  return st;
}

void mtj_explain(const mtj_compiled *c, FILE *f) {
  fprintf(f, "-- IR (after decomposition, CSE, DCE and fusion) --\n%s", c->g->text);
  fprintf(f, "-- %d kernel(s), %d step(s) --\n", c->g->nk, c->g->nsteps);
  fprintf(f, "-- generated C --\n%s", c->src);
}
