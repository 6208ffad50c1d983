/* ir.c -- trace to IR: each traced op becomes primitive nodes as its row's
 * jit column says (tensor/ops.def: elementwise expressions, views, engine
 * calls; composites such as softmax, layer_norm, gelu and clamp are
 * decomposed here), equal
 * nodes are shared as they are made (CSE), and nodes no output needs are
 * dropped (DCE). In-place writes are functionalized: the written tensor,
 * and the bases it is a view of, are bound to new values. Sizes are
 * symbolic: every input dim that is not 1 is a symbol, and dims that must
 * agree under broadcasting share a class. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "strbuf.h"
#include "views.h"

typedef struct builder {
  mtj_graph *g;
  const mtg_trace *tr;
  const mt_tensor **tv; /* tensor -> node map (parallel arrays) */
  int *tn, nt, capt;
  const double *sc;
  const bool *sc_int;
  const mt_tensor *const *sct; /* tensors standing for scalars nsc + j */
  int nsct;
  struct {
    const mt_storage *s;
    const mt_tensor *t;
    int seq; /* the binding index of the write */
  } *wr;     /* in-place writes, to catch later reads through another view */
  int nwr;
  bool dynamic;
  bool cuda;        /* a graph on a CUDA device: float16/bfloat16 values are fine */
  bool need_static; /* a size the JIT cannot keep symbolic: rebuild static */
  char why[256];
} builder;

int mtj_find(mtj_graph *g, int s) {
  while (g->sym_parent[s] != s) s = g->sym_parent[s] = g->sym_parent[g->sym_parent[s]];
  return s;
}

bool mtj_dim_eq(mtj_graph *g, mtj_dim a, mtj_dim b) {
  if (a.sym >= 0 && b.sym >= 0) return mtj_find(g, a.sym) == mtj_find(g, b.sym);
  if (a.sym < 0 && b.sym < 0) return a.c == b.c;
  return false;
}

static bool is_one(mtj_dim d) { return d.sym < 0 && d.c == 1; }

const char *mtj_ctype(int dt) {
  switch (dt) {
  case MT_FLOAT32: return "float";
  case MT_FLOAT64: return "double";
  case MT_INT8: return "int8_t";
  case MT_INT16: return "int16_t";
  case MT_INT32: return "int32_t";
  case MT_INT64: return "int64_t";
  case MT_UINT8: case MT_BOOL: return "uint8_t";
  case MT_UINT16: return "uint16_t";
  default: return NULL;
  }
}

/* Can the graph's kernels hold dtype dt? (The C kernels have no 16-bit floats.) */
static bool dtype_ok(const builder *b, int dt) {
  return mtj_ctype(dt) || (b->cuda && (dt == MT_FLOAT16 || dt == MT_BFLOAT16));
}

static int fail(builder *b, const char *msg, const char *arg) {
  if (!b->why[0]) snprintf(b->why, sizeof b->why, msg, arg);
  return -1;
}

/* Appends node x unless an equal node exists (CSE); returns its id. */
static int add(builder *b, mtj_node x) {
  mtj_graph *g = b->g;
  if (b->why[0]) return -1;
  for (int i = 0; i < MTJ_NA; i++)
    if (x.a[i] < -1) return -1;
  x.kernel = -1;
  if (x.kind != JN_INPUT && !(x.kind == JN_UNARY && x.op == MT_OP_copy))
    for (int i = g->nn - 1; i >= 0; i--) {
      const mtj_node *y = &g->n[i];
      if (y->kind == x.kind && y->op == x.op && y->dtype == x.dtype && y->cdt == x.cdt && y->ndim == x.ndim &&
          !memcmp(y->a, x.a, sizeof x.a) && y->slot == x.slot && y->nattr == x.nattr &&
          !memcmp(y->attr, x.attr, sizeof x.attr) && !memcmp(&y->c, &x.c, sizeof x.c) &&
          !memcmp(y->f, x.f, sizeof x.f) && y->fn == x.fn && y->inplace == x.inplace && y->tag == x.tag) {
        bool same = true;
        for (int d = 0; d < x.ndim && same; d++) same = mtj_dim_eq(g, y->shape[d], x.shape[d]);
        if (same) return i;
      }
    }
  if (g->nn == g->cap) {
    int cap = g->cap ? 2 * g->cap : 64;
    mtj_node *n = realloc(g->n, (size_t)cap * sizeof *n);
    if (!n) return fail(b, "out of memory%s", "");
    g->n = n, g->cap = cap;
  }
  g->n[g->nn] = x;
  return g->nn++;
}

static mtj_node blank(int kind, int op, int dtype) {
  mtj_node x;
  memset(&x, 0, sizeof x);
  x.kind = (int8_t)kind, x.op = (int16_t)op, x.dtype = (int8_t)dtype, x.cdt = (int8_t)dtype;
  for (int k = 0; k < MTJ_NA; k++) x.a[k] = -1;
  x.slot = -1;
  return x;
}

/* Broadcast shape of operands ids[0..n) into x (classes of equal symbols merged). */
static bool broadcast(builder *b, mtj_node *x, const int *ids, int n) {
  mtj_graph *g = b->g;
  int nd = 0;
  for (int i = 0; i < n; i++)
    if (ids[i] >= 0 && g->n[ids[i]].ndim > nd) nd = g->n[ids[i]].ndim;
  x->ndim = (int8_t)nd;
  for (int d = 0; d < nd; d++) {
    mtj_dim r = {-1, 1};
    for (int i = 0; i < n; i++) {
      if (ids[i] < 0) continue;
      const mtj_node *o = &g->n[ids[i]];
      int k = d - (nd - o->ndim);
      if (k < 0) continue;
      mtj_dim e = o->shape[k];
      if (is_one(e)) continue;
      if (is_one(r)) {
        r = e;
      } else if (r.sym >= 0 && e.sym >= 0) {
        g->sym_parent[mtj_find(g, e.sym)] = mtj_find(g, r.sym);
      } else if (!mtj_dim_eq(g, r, e)) {
        b->need_static = true;
        return false;
      }
    }
    x->shape[d] = r;
  }
  return true;
}

static int cnst(builder *b, double v, int dt) {
  mtj_node x = blank(JN_CONST, 0, dt);
  x.c = v;
  return add(b, x);
}

static int cast(builder *b, int a, int dt) {
  if (a < 0) return a;
  if (b->g->n[a].dtype == dt) return a;
  if (b->g->n[a].kind == JN_CONST) { /* the constant converted, of the same shape */
    const mtj_node *k = &b->g->n[a];
    mtj_node x = blank(JN_CONST, 0, dt);
    x.c = dt == MT_BOOL ? (double)(k->c != 0) : mt_is_floating((mt_dtype)dt) ? k->c : trunc(k->c);
    x.ndim = k->ndim;
    memcpy(x.shape, k->shape, sizeof x.shape);
    return add(b, x);
  }
  mtj_node x = blank(JN_CAST, 0, dt);
  x.a[0] = a;
  x.ndim = b->g->n[a].ndim;
  memcpy(x.shape, b->g->n[a].shape, sizeof x.shape);
  return add(b, x);
}

static int un(builder *b, int op, int a, int dt) {
  if (a < 0) return a;
  mtj_node x = blank(JN_UNARY, op, dt);
  x.cdt = b->g->n[a].dtype;
  x.a[0] = a;
  x.ndim = b->g->n[a].ndim;
  memcpy(x.shape, b->g->n[a].shape, sizeof x.shape);
  return add(b, x);
}

/* op(a, c) with dtype dt and compute dtype cdt (operands cast to cdt) */
static int bin(builder *b, int op, int a0, int a1, int dt, int cdt) {
  a0 = cast(b, a0, cdt), a1 = cast(b, a1, cdt);
  if (a0 < 0 || a1 < 0) return -1;
  mtj_node x = blank(JN_BINARY, op, dt);
  x.cdt = (int8_t)cdt;
  x.a[0] = a0, x.a[1] = a1;
  int ids[2] = {a0, a1};
  if (!broadcast(b, &x, ids, 2)) return -1;
  return add(b, x);
}
#define B(op, x, y, dt) bin(b, MT_OP_##op, x, y, dt, dt)
#define C(v, dt) cnst(b, v, dt)

static int where3(builder *b, int c, int x, int y, int dt) {
  x = cast(b, x, dt), y = cast(b, y, dt);
  if (c < 0 || x < 0 || y < 0) return -1;
  mtj_node n = blank(JN_WHERE, MT_OP_where, dt);
  n.a[0] = c, n.a[1] = x, n.a[2] = y;
  int ids[3] = {c, x, y};
  if (!broadcast(b, &n, ids, 3)) return -1;
  return add(b, n);
}

/* Reduction over the trailing nred dims of a, kept as size 1. */
static int reduce(builder *b, int op, int a, int nred, int dt) {
  a = cast(b, a, dt);
  if (a < 0) return -1;
  mtj_node x = blank(JN_REDUCE, op, dt);
  x.a[0] = a;
  x.attr[0] = nred, x.nattr = 1;
  x.ndim = b->g->n[a].ndim;
  memcpy(x.shape, b->g->n[a].shape, sizeof x.shape);
  for (int d = x.ndim - nred; d < x.ndim; d++) x.shape[d] = (mtj_dim){-1, 1};
  return add(b, x);
}

/* A view of a with the given shape (reshape) or permutation. */
static int view(builder *b, int a, const mtj_dim *shape, int nd, const int64_t *perm) {
  if (a < 0) return -1;
  mtj_node x = blank(JN_VIEW, perm ? MT_OP_permute : MT_OP_reshape, b->g->n[a].dtype);
  x.a[0] = a;
  x.ndim = (int8_t)nd;
  memcpy(x.shape, shape, (size_t)nd * sizeof *shape);
  if (perm) {
    x.nattr = nd;
    for (int d = 0; d < nd; d++) x.attr[d] = perm[d];
  }
  return add(b, x);
}

/* Symbolic shape of a traced tensor t from an input shape: in dynamic mode
 * its sizes other than 1 must be the input's in order (a view that only
 * inserts or removes 1s), else the graph needs static sizes. */
static bool relabel(builder *b, const mtj_node *src, const mt_tensor *t, mtj_dim *shape) {
  int k = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 1) {
      shape[d] = (mtj_dim){-1, 1};
      continue;
    }
    if (!b->dynamic) {
      shape[d] = (mtj_dim){-1, t->shape[d]};
      continue;
    }
    while (k < src->ndim && is_one(src->shape[k])) k++;
    if (k >= src->ndim) return b->need_static = true, false;
    shape[d] = src->shape[k++];
  }
  while (k < src->ndim && is_one(src->shape[k])) k++;
  if (b->dynamic && k != src->ndim) return b->need_static = true, false;
  return true;
}

/* The newest binding of t (its index in *seq), or -2. */
static int lookup_seq(builder *b, const mt_tensor *t, int *seq) {
  for (int i = b->nt - 1; i >= 0; i--)
    if (b->tv[i] == t) return *seq = i, b->tn[i];
  return -2;
}

static int lookup(builder *b, const mt_tensor *t) {
  int seq;
  return lookup_seq(b, t, &seq);
}

static void bind(builder *b, const mt_tensor *t, int id) {
  if (id < 0) return;
  if (b->nt == b->capt) {
    int cap = b->capt ? 2 * b->capt : 64;
    const mt_tensor **tv = realloc(b->tv, (size_t)cap * sizeof *tv);
    int *tn = realloc(b->tn, (size_t)cap * sizeof *tn);
    if (tv) b->tv = tv;
    if (tn) b->tn = tn;
    if (!tv || !tn) return (void)fail(b, "out of memory%s", "");
    b->capt = cap;
  }
  b->tv[b->nt] = t, b->tn[b->nt++] = id;
}

/* The node of t's value now: its newest binding, or -2 when t is unbound.
 * A binding older than an in-place write through another tensor of the
 * same storage is stale (a view whose base changed): the JIT declines. */
static int current(builder *b, const mt_tensor *t) {
  int seq = -1, id = lookup_seq(b, t, &seq);
  if (id == -2) return -2;
  for (int k = 0; k < b->nwr; k++)
    if (b->wr[k].s == t->storage && b->wr[k].t != t && b->wr[k].seq > seq)
      return fail(b, "a view is read after its base was written in place (the JIT does not follow that yet)%s", "");
  return id;
}

/* The node of operand t: traced before, a graph input, or a wrapped number. */
static int operand(builder *b, const mt_tensor *t) {
  if (!t) return -1;
  t = mtg_trace_root(b->tr, t);
  int id = current(b, t);
  if (id != -2) return id;
  for (int j = 0; j < b->nsct; j++)
    if (b->sct[j] == t) {
      mtj_node x = blank(JN_SCALAR, 0, t->dtype);
      x.slot = b->g->nsc + j;
      return add(b, x);
    }
  if (!(t->flags & MT_TF_WRAPPED)) return fail(b, "internal: a tensor read by the graph is not among its inputs%s", "");
  double v = mt_get_f64(t, NULL);
  bool isint = t->dtype != MT_FLOAT64;
  for (int k = 0; k < b->g->nsc; k++)
    if (b->sc[k] == v && b->sc_int[k] == isint && t->dtype != MT_BOOL) {
      mtj_node x = blank(JN_SCALAR, 0, t->dtype);
      x.slot = k;
      return add(b, x);
    }
  return cnst(b, v, t->dtype);
}

/* An engine call of the traced op at replay (runtime.c: mt_call through the
 * row's entry), its result's sizes by the row's rule (ops.def's jit column). */
static int extern_op(builder *b, const mtg_trace_entry *e, const int *ops) {
  const mt_opinfo *info = &mt_ops[e->op];
  if (!mt_call_fns[e->op]) return fail(b, "%s is not handled by the JIT yet", info->name);
  mtj_node x = blank(JN_EXTERN, e->op, e->out->dtype);
  for (int i = 0; i < e->nin && i < 3; i++) x.a[i] = ops[i];
  if (e->nin > 3) return fail(b, "%s has too many operands for an extern call", info->name);
  memcpy(x.attr, e->i, sizeof x.attr);
  x.nattr = e->ni;
  memcpy(x.f, e->f, sizeof x.f);
  x.ndim = e->out->ndim;
  /* symbolic result sizes: matmul and reductions keep their operands' dims */
  const mtj_node *a = ops[0] >= 0 ? &b->g->n[ops[0]] : NULL;
  int sizes = MT_J_SIZES(info->jit);
  if (!b->dynamic) {
    for (int d = 0; d < x.ndim; d++) x.shape[d] = (mtj_dim){-1, e->out->shape[d]};
  } else if (sizes == MT_JS_MATMUL && a && ops[1] >= 0 && a->ndim >= 2 && b->g->n[ops[1]].ndim == 2 &&
             x.ndim == a->ndim) {
    const mtj_node *w = &b->g->n[ops[1]];
    if (a->shape[a->ndim - 1].sym >= 0 && w->shape[0].sym >= 0)
      b->g->sym_parent[mtj_find(b->g, w->shape[0].sym)] = mtj_find(b->g, a->shape[a->ndim - 1].sym);
    memcpy(x.shape, a->shape, sizeof x.shape);
    x.shape[x.ndim - 1] = w->shape[1];
  } else if (sizes == MT_JS_REDUCED && a && e->ni >= 2) {
    int k = 0;
    for (int d = 0; d < a->ndim; d++) {
      if (e->i[0] >> d & 1) {
        if (e->i[1]) x.shape[k++] = (mtj_dim){-1, 1};
      } else {
        x.shape[k++] = a->shape[d];
      }
    }
  } else if (sizes == MT_JS_SAME && a) {
    memcpy(x.shape, a->shape, sizeof x.shape);
  } else {
    b->need_static = true;
    return -1;
  }
  return add(b, x);
}

/* A constant of t's shape and dtype (creation ops, fill_). */
static int full(builder *b, const mt_tensor *t, double v) {
  if (b->dynamic) return b->need_static = true, -1;
  mtj_node x = blank(JN_CONST, 0, t->dtype);
  x.c = v;
  x.ndim = (int8_t)t->ndim;
  for (int d = 0; d < t->ndim; d++) x.shape[d] = (mtj_dim){-1, t->shape[d]};
  return add(b, x);
}

/* A replayed engine call (trace.h) and its further outputs (bound here). */
static int call_op(builder *b, const mtg_trace_entry *e, const int *ops) {
  if (b->dynamic) return b->need_static = true, -1;
  if (e->nin > MTJ_NA) return fail(b, "%s has too many operands for an extern call", e->name);
  mtj_node x = blank(JN_EXTERN, -1, e->out->dtype);
  x.fn = e->fn, x.name = e->name, x.inplace = e->inplace;
  if (e->impure) x.tag = (int)(e - b->tr->e) + 1; /* each draw is its own node */
  for (int i = 0; i < e->nin; i++) x.a[i] = ops[i];
  memcpy(x.attr, e->i, sizeof x.attr);
  x.nattr = e->ni;
  memcpy(x.f, e->f, sizeof x.f);
  x.ndim = e->out->ndim;
  for (int d = 0; d < x.ndim; d++) x.shape[d] = (mtj_dim){-1, e->out->shape[d]};
  int id = add(b, x);
  for (int k = 1; k < e->nout && id >= 0; k++) {
    const mt_tensor *t = e->xout[k - 1];
    if (!t) continue;
    mtj_node y = blank(JN_XOUT, -1, t->dtype);
    y.a[0] = id, y.slot = k, y.ndim = (int8_t)t->ndim;
    for (int d = 0; d < t->ndim; d++) y.shape[d] = (mtj_dim){-1, t->shape[d]};
    bind(b, t, add(b, y));
  }
  return id;
}

/* copy_(dst, src) traced in place: src cast to dst's dtype and broadcast to its shape. */
static int copy_into(builder *b, const mt_tensor *dst, int src) {
  int x = cast(b, src, dst->dtype);
  if (x < 0) return -1;
  const mtj_node *s = &b->g->n[x];
  bool same = s->ndim == dst->ndim;
  for (int d = 0; same && d < dst->ndim; d++) same = s->shape[d].sym < 0 && s->shape[d].c == dst->shape[d];
  if (!same) {
    if (b->dynamic) return b->need_static = true, -1;
    mtj_node v = blank(JN_VIEW, MT_OP_expand, dst->dtype);
    v.a[0] = x, v.ndim = (int8_t)dst->ndim;
    for (int d = 0; d < dst->ndim; d++) v.shape[d] = (mtj_dim){-1, dst->shape[d]};
    x = add(b, v);
  }
  return un(b, MT_OP_copy, x, dst->dtype);
}

/* ---- in-place writes through views ---- */

/* The entry before entry i that made t as a view of its first operand (a
 * result sharing the operand's storage), or NULL when the trace did not. */
static const mtg_trace_entry *view_maker(builder *b, int i, const mt_tensor *t) {
  for (int k = i - 1; k >= 0; k--) {
    const mtg_trace_entry *x = &b->tr->e[k];
    if (x->out != t || x->inplace) continue;
    return x->nin >= 1 && x->in[0] && x->in[0] != t && x->in[0]->storage == t->storage ? x : NULL;
  }
  return NULL;
}

/* The new value of the base (node base) of view entry x after the view
 * took value v: shape changes and permutations are undone as views of the
 * IR; views at an offset become a call that writes v into a copy of the
 * base. Views the JIT cannot invert decline. */
static int write_back(builder *b, const mtg_trace_entry *x, int base, int v) {
  const mtj_node *bn = &b->g->n[base];
  if (x->kind == MTG_TE_CALL && x->fn == mtg_rp_view) {
    if (x->i[0] == MT_OP_unfold) return fail(b, "an in-place write through unfold's windows (the JIT does not follow that yet)%s", "");
    if (x->i[0] == MTG_VK_AS_STRIDED && !mt_is_contiguous(x->in[0]))
      return fail(b, "an in-place write through as_strided of a non-contiguous tensor (the JIT does not follow that yet)%s", "");
    if (b->dynamic) return b->need_static = true, -1;
    mtj_node y = blank(JN_EXTERN, -1, bn->dtype);
    y.fn = mtg_rp_view_write, y.name = "view_write", y.inplace = true;
    y.a[0] = base, y.a[1] = v;
    memcpy(y.attr, x->i, sizeof y.attr);
    y.nattr = x->ni;
    y.ndim = bn->ndim;
    memcpy(y.shape, bn->shape, sizeof y.shape);
    return add(b, y);
  }
  if (x->kind == MTG_TE_OP) {
    mtj_dim sh[MT_MAXDIM];
    switch (x->op) {
    case MT_OP_view: case MT_OP_reshape: case MT_OP_squeeze: case MT_OP_unsqueeze:
      memcpy(sh, bn->shape, sizeof sh);
      return view(b, v, sh, bn->ndim, NULL);
    case MT_OP_permute: {
      int nd = (int)x->i[0];
      int64_t inv[MT_MAXDIM];
      for (int d = 0; d < nd; d++) inv[x->i[1 + d]] = d;
      for (int d = 0; d < nd; d++) sh[d] = b->g->n[v].shape[inv[d]];
      return view(b, v, sh, nd, inv);
    }
    default: break;
    }
  }
  return fail(b, "an in-place write through a view made by %s (the JIT does not follow that yet)",
              x->kind == MTG_TE_CALL ? x->name : x->kind == MTG_TE_OP ? mt_ops[x->op].name : "a fill");
}

/* Entry i wrote value id into tensor t in place (functionalized: later
 * reads of t see the new value). When t is a view made in the trace, the
 * write reaches its bases too, up the chain of views, so that reading or
 * returning a base sees it; other views of the same storage made before
 * the write are stale from here on (current() declines them). */
static void write_through(builder *b, int i, const mt_tensor *t, int id) {
  enum { MAXCHAIN = 32 };
  const mt_tensor *ts[MAXCHAIN];
  int ids[MAXCHAIN], n = 1;
  const mt_tensor *r = mtg_trace_root(b->tr, t);
  ts[0] = r, ids[0] = id;
  for (const mtg_trace_entry *x; (x = view_maker(b, i, ts[n - 1]));) {
    if (n == MAXCHAIN) return (void)fail(b, "an in-place write through too long a chain of views%s", "");
    const mt_tensor *p = mtg_trace_root(b->tr, x->in[0]);
    int base = current(b, p);
    if (base == -2) return (void)fail(b, "internal: the base of a view written in place is not in the graph%s", "");
    if (base < 0) return;
    int nv = write_back(b, x, base, ids[n - 1]);
    if (nv < 0) return;
    ts[n] = p, ids[n++] = nv;
  }
  void *w = realloc(b->wr, (size_t)(b->nwr + 1) * sizeof *b->wr);
  if (!w) return (void)fail(b, "out of memory%s", "");
  b->wr = w;
  b->wr[b->nwr].s = r->storage, b->wr[b->nwr].t = r, b->wr[b->nwr].seq = b->nt;
  b->nwr++;
  if (t != r) bind(b, t, id);
  for (int k = 0; k < n; k++) bind(b, ts[k], ids[k]);
}

/* ---- lowering by the row's jit column ---- */

/* An elementwise node (EXPR rows): its code is the row's expression. Unary
 * predicates read their operand as it is; the rest compute in dt (binary)
 * or the entry's compute dtype (comparisons). A row's number parameter
 * travels in f[0]. */
static int ew_node(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int op = e->op;
  const mt_opinfo *info = &mt_ops[op];
  if (info->kind == MT_K_BINARY) return bin(b, op, o[0], o[1], dt, dt);
  if (info->kind == MT_K_COMPARE) return bin(b, op, o[0], o[1], dt, e->cdt);
  int x = (info->flags & MT_F_PRED) ? o[0] : cast(b, o[0], dt);
  if (x < 0) return -1;
  mtj_node n = blank(JN_UNARY, op, dt);
  n.cdt = b->g->n[x].dtype;
  n.a[0] = x;
  n.ndim = b->g->n[x].ndim;
  memcpy(n.shape, b->g->n[x].shape, sizeof n.shape);
  if (op == MT_OP_nan_to_num) memcpy(n.f, e->f, sizeof e->f);
  if (info->param) n.f[0] = e->f[0]; /* the row's number parameter, p0 of its expression */
  return add(b, n);
}

/* A view (VIEW rows): a permutation, an expansion (static sizes) or a
 * shape change that keeps the sizes other than 1. */
static int view_node(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int a = o[0];
  const mt_tensor *out = e->out;
  if (a < 0) return -1;
  mtj_dim sh[MT_MAXDIM];
  if (e->op == MT_OP_permute) {
    int nd = (int)e->i[0];
    for (int d = 0; d < nd; d++) sh[d] = b->g->n[a].shape[e->i[1 + d]];
    return view(b, a, sh, nd, e->i + 1);
  }
  if (e->op == MT_OP_expand) {
    if (b->dynamic) return b->need_static = true, -1;
    for (int d = 0; d < out->ndim; d++) sh[d] = (mtj_dim){-1, out->shape[d]};
    mtj_node x = blank(JN_VIEW, MT_OP_expand, dt);
    x.a[0] = a, x.ndim = out->ndim;
    memcpy(x.shape, sh, sizeof sh);
    return add(b, x);
  }
  if (!relabel(b, &b->g->n[a], out, sh)) return -1;
  return view(b, a, sh, out->ndim, NULL);
}

/* Decompositions (DECOMP rows): dec_<name> builds the op from primitive
 * nodes, or returns DECLINE for an engine call instead. */
#define DECLINE (-100)
typedef int (*decomp_fn)(builder *b, const mtg_trace_entry *e, const int *o, int dt);

/* values are immutable in the IR: a copy is the value itself, except of an input */
static int dec_copy(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int x = cast(b, o[0], dt);
  return x >= 0 && b->g->n[x].kind != JN_INPUT ? x : un(b, MT_OP_copy, x, dt);
}
static int dec_cast(builder *b, const mtg_trace_entry *e, const int *o, int dt) { return cast(b, o[0], dt); }

/* sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x sigmoid(x) */
static int dec_sigmoid(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int x = cast(b, o[0], dt);
  return B(div, C(1, dt), B(add, C(1, dt), un(b, MT_OP_exp, un(b, MT_OP_neg, x, dt), dt), dt), dt);
}
static int dec_silu(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  return B(mul, cast(b, o[0], dt), dec_sigmoid(b, e, o, dt), dt);
}
/* gelu(x) = x/2 (1 + erf(x / sqrt 2)) (codegen_c.c knows this form); the tanh form */
static int dec_gelu(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int x = cast(b, o[0], dt);
  int e1 = un(b, MT_OP_erf, B(mul, x, C(0.70710678118654752440, dt), dt), dt);
  return B(mul, B(mul, x, C(0.5, dt), dt), B(add, e1, C(1, dt), dt), dt);
}
static int dec_gelu_tanh(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int x = cast(b, o[0], dt);
  int x3 = B(mul, B(mul, x, x, dt), x, dt);
  int in = B(mul, C(0.79788456080286535588, dt), B(add, x, B(mul, C(0.044715, dt), x3, dt), dt), dt);
  return B(mul, B(mul, x, C(0.5, dt), dt), B(add, un(b, MT_OP_tanh, in, dt), C(1, dt), dt), dt);
}

static int dec_where(builder *b, const mtg_trace_entry *e, const int *o, int dt) { return where3(b, o[0], o[1], o[2], dt); }
static int dec_clamp(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int x = cast(b, o[0], dt);
  if (o[1] >= 0) x = B(maximum, x, o[1], dt);
  if (o[2] >= 0) x = B(minimum, x, o[2], dt);
  return x;
}
/* lerp: a + w (b - a) for |w| < 1/2, else b - (b - a)(1 - w) (as the engine) */
static int dec_lerp(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  int a = cast(b, o[0], dt), c = cast(b, o[1], dt), w = cast(b, o[2], dt);
  int diff = B(sub, c, a, dt);
  int lo = B(add, a, B(mul, w, diff, dt), dt);
  int hi = B(sub, c, B(mul, diff, B(sub, C(1, dt), w, dt), dt), dt);
  return where3(b, bin(b, MT_OP_lt, un(b, MT_OP_abs, w, dt), C(0.5, dt), MT_BOOL, dt), lo, hi, dt);
}

/* softmax along the last dim of a floating x: exp(x - max) / sum; log_softmax (x - max) - log(sum) */
static int dec_softmax(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  const mt_tensor *x = e->in[0];
  if (!mt_is_floating((mt_dtype)dt) || e->i[0] != x->ndim - 1 || x->ndim == 0) return DECLINE;
  int xi = cast(b, o[0], dt);
  int m = reduce(b, MT_OP_amax, xi, 1, dt);
  int sh = B(sub, xi, m, dt);
  int s = reduce(b, MT_OP_sum, un(b, MT_OP_exp, sh, dt), 1, dt);
  if (e->op == MT_OP_softmax) return B(div, un(b, MT_OP_exp, sh, dt), s, dt);
  return B(sub, sh, un(b, MT_OP_log, s, dt), dt);
}
#define dec_log_softmax dec_softmax

/* sum, mean, prod, amax, amin over trailing dims: a reduce node (then a
 * view dropping the kept 1s); other dims, or mean of integers, an engine call */
static int dec_sum(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  const mt_tensor *x = e->in[0];
  int64_t mask = e->i[0];
  int nred = 0;
  while (nred < x->ndim && (mask >> (x->ndim - 1 - nred) & 1)) nred++;
  bool suffix = x->ndim > 0 && nred > 0 && mask == (((int64_t)1 << x->ndim) - 1) - (((int64_t)1 << (x->ndim - nred)) - 1);
  if (!suffix || (e->op == MT_OP_mean && !mt_is_floating((mt_dtype)dt)) || dt == MT_BOOL) return DECLINE;
  int r = reduce(b, e->op, o[0], nred, dt);
  if (e->i[1] || r < 0) return r;
  mtj_dim sh[MT_MAXDIM];
  memcpy(sh, b->g->n[r].shape, sizeof sh);
  return view(b, r, sh, x->ndim - nred, NULL);
}
#define dec_mean dec_sum
#define dec_prod dec_sum
#define dec_amax dec_sum
#define dec_amin dec_sum

/* layer_norm over the last i[0] dims, eps f[0]: (x - mean) rsqrt(var + eps) weight + bias */
static int dec_layer_norm(builder *b, const mtg_trace_entry *e, const int *o, int dt) {
  if (!mt_is_floating((mt_dtype)dt) || e->in[0]->dtype != dt) return DECLINE;
  int nn = (int)e->i[0], x = o[0];
  int mean = reduce(b, MT_OP_mean, x, nn, dt);
  int d = B(sub, x, mean, dt);
  int var = reduce(b, MT_OP_mean, B(mul, d, d, dt), nn, dt);
  int y = B(mul, d, un(b, MT_OP_rsqrt, B(add, var, C(e->f[0], dt), dt), dt), dt);
  if (o[1] >= 0) y = B(mul, y, o[1], dt);
  if (o[2] >= 0) y = B(add, y, o[2], dt);
  return y;
}

/* The rows' decompositions: the jit column MT_J(DECOMP, ...) names
 * dec_<name>. The column is pasted onto DEC_ (MT_J(...) -> DEC_MT_J(...)),
 * which selects by its lowering word; other lowerings add nothing. */
#define DEC_MT_J(lower, sizes) DEC_##lower
#define DEC_DECOMP(name) [MT_OP_##name] = dec_##name,
#define DEC_EXPR(name)
#define DEC_EXPR_(name)
#define DEC_CALL(name)
#define DEC_NAMED(name)
#define DEC_VIEW(name)
#define DEC_NONE(name)
#define MT_OP(name, kind, arity, flags, dev, ac, jit, entry) DEC_##jit(name)
#define MT_UNARY(name, flags, ac, jit, ...) DEC_##jit(name)
#define MT_UNARY_P(name, flags, ac, jit, ...) DEC_##jit(name)
#define MT_BINARY(name, flags, ac, jit, ...) DEC_##jit(name)
#define MT_COMPARE(...)
static const decomp_fn decomps[MT_NOPS] = {
#include "ops.def"
};
#undef MT_OP
#undef MT_UNARY
#undef MT_UNARY_P
#undef MT_BINARY
#undef MT_COMPARE

/* Appends the nodes of one traced op; returns the node of its result. */
static int lower(builder *b, const mtg_trace_entry *e) {
  int o[MTG_TRACE_NIN];
  for (int i = 0; i < e->nin; i++) {
    o[i] = operand(b, e->in[i]);
    if (o[i] < -1 || (o[i] == -1 && e->in[i])) return -1;
  }
  if (e->kind == MTG_TE_FULL) return full(b, e->out, e->f[0]);
  if (e->kind == MTG_TE_CALL) return call_op(b, e, o);
  if (e->inplace && e->op == MT_OP_copy) return copy_into(b, e->out, o[0]);
  int dt = e->out->dtype, op = e->op;
  if (!dtype_ok(b, dt)) return fail(b, "the JIT does not generate %s code yet", mt_dtype_name((mt_dtype)dt));
  for (int i = 0; i < e->nin; i++)
    if (e->in[i] && !dtype_ok(b, e->in[i]->dtype))
      return fail(b, "the JIT does not generate %s code yet", mt_dtype_name((mt_dtype)e->in[i]->dtype));
  switch (MT_J_LOWER(mt_ops[op].jit)) { /* the row's jit column (ops.def) */
  case MT_J_EXPR: return ew_node(b, e, o, dt);
  case MT_J_DECOMP: {
    int id = decomps[op](b, e, o, dt);
    return id == DECLINE ? extern_op(b, e, o) : id;
  }
  case MT_J_CALL: return extern_op(b, e, o);
  case MT_J_VIEW: return view_node(b, e, o, dt);
  default: return fail(b, "%s is not handled by the JIT yet", mt_ops[op].name);
  }
}

void mtj_graph_free(mtj_graph *g) {
  if (!g) return;
  free(g->n);
  free(g->k);
  free(g->steps);
  free(g->text);
  free(g);
}

static void mark(mtj_graph *g, int i) {
  if (i < 0 || g->n[i].live) return;
  g->n[i].live = true;
  for (int k = 0; k < MTJ_NA; k++) mark(g, g->n[i].a[k]);
}

void mtj_mark_live(mtj_graph *g) {
  for (int i = 0; i < g->nn; i++) g->n[i].live = false;
  for (int k = 0; k < g->nout; k++) mark(g, g->out[k]);
  for (int k = 0; k < g->nwb; k++) mark(g, g->wb[k]);
}

/* The graph's device: its inputs' (or, with none, its traced values'),
 * which must all agree; a CUDA graph gets CUDA kernels. */
/* Whether trace entry x is host-scalar math: a 0-dim CPU value made by an op
 * or fill from 0-dim CPU values only (a runtime learning rate times a
 * constant). It belongs to no device: in a CUDA graph the kernels that read
 * it compute it, as eager CUDA ops read a CPU scalar operand. */
static bool host_scalar(const mtg_trace_entry *x) {
  if (x->kind == MTG_TE_CALL || x->out->ndim != 0 || mt_tdevice(x->out).type != MT_CPU) return false;
  for (int j = 0; j < x->nin; j++)
    if (x->in[j] && (x->in[j]->ndim != 0 || mt_tdevice(x->in[j]).type != MT_CPU)) return false;
  return true;
}

static bool graph_device(builder *b, const mt_tensor *const *ins, int nin) {
  mt_device d = mt_cpu();
  bool set = false;
  for (int k = 0; k < nin; k++) {
    mt_device e = mt_tdevice(ins[k]);
    if (set && !mt_same_device(d, e)) return fail(b, "the graph's inputs are on several devices%s", ""), false;
    d = e, set = true;
  }
  for (int i = 0; i < b->tr->n; i++) {
    const mtg_trace_entry *x = &b->tr->e[i];
    const mt_tensor *t = x->out;
    if (!t || (t->flags & MT_TF_WRAPPED) || host_scalar(x)) continue;
    mt_device e = mt_tdevice(t);
    if (set && !mt_same_device(d, e)) {
      char dd[32], de[32];
      const char *what = x->kind == MTG_TE_CALL ? x->name : x->kind == MTG_TE_OP ? mt_ops[x->op].name : "a fill";
      char msg[250], ins[120] = "";
      for (int j = 0; j < x->nin && strlen(ins) < 80; j++) { /* its operands, to find the op in the source */
        char sd[32], sh[64];
        const mt_tensor *a = x->in[j];
        if (a)
          snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s%s %s", j ? ", " : "", mt_device_str(mt_tdevice(a), sd, sizeof sd),
                   mt_shape_str(a->shape, a->ndim, sh, sizeof sh));
      }
      snprintf(msg, sizeof msg,
               "the graph moves values between devices (%s(%s) makes a value on %s after values on %s)", what, ins,
               mt_device_str(e, de, sizeof de), mt_device_str(d, dd, sizeof dd));
      return fail(b, "%s", msg), false;
    }
    d = e, set = true;
  }
  b->g->dev = d;
  b->cuda = d.type == MT_CUDA;
  return true;
}

static mt_status build_once(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *sc,
                            const bool *sc_int, int nsc, const mt_tensor *const *outs, int nout, bool dynamic,
                            const mtj_options *o, mtj_graph **out, bool *need_static) {
  if (nin > MTJ_MAXIN || nout > MTJ_MAXOUT) return mt_fail(MT_EARG, "the graph has too many inputs or outputs");
  mtj_graph *g = calloc(1, sizeof *g);
  if (!g) return mt_fail(MT_ENOMEM, "out of memory");
  builder B_ = {.g = g, .tr = tr, .sc = sc, .sc_int = sc_int, .dynamic = dynamic, .sct = o ? o->sct : NULL,
                .nsct = o ? o->nsct : 0}, *b = &B_;
  g->nin = nin, g->nsc = nsc, g->is_static = !dynamic;
  g->xs_base = nsc + (o ? o->nsct : 0);
  if (!graph_device(b, ins, nin)) {
    free(g);
    return mt_fail(MT_EARG, "%s", b->why);
  }
  for (int k = 0; k < nin; k++) {
    const mt_tensor *t = ins[k];
    g->in[k].dtype = t->dtype, g->in[k].ndim = t->ndim;
    memcpy(g->in[k].shape, t->shape, sizeof t->shape);
    if (!dtype_ok(b, t->dtype)) fail(b, "the JIT does not generate %s code yet", mt_dtype_name((mt_dtype)t->dtype));
    mtj_node x = blank(JN_INPUT, 0, t->dtype);
    x.slot = k, x.ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
      if (t->shape[d] == 1 || !dynamic) {
        x.shape[d] = (mtj_dim){-1, t->shape[d]};
      } else {
        int s = g->nsym++;
        g->sym_in[s] = k, g->sym_dim[s] = d, g->sym_parent[s] = s;
        x.shape[d] = (mtj_dim){s, 0};
      }
    }
    int id = add(b, x);
    g->in_node[k] = id;
    bind(b, t, id);
  }
  for (int i = 0; i < tr->n && !b->why[0] && !b->need_static; i++) {
    const mtg_trace_entry *e = &tr->e[i];
    int id = lower(b, e);
    if (id < 0) continue;
    if (e->inplace)
      write_through(b, i, e->out, id);
    else
      bind(b, e->out, id);
  }
  /* inputs written in place: their final values are written back (never a stale one) */
  g->nwb = 0;
  for (int k = 0; k < nin && !b->why[0] && !b->need_static; k++) {
    int id = lookup(b, ins[k]);
    if (id >= 0 && !(g->n[id].kind == JN_INPUT && g->n[id].slot == k)) id = current(b, ins[k]);
    if (id >= 0 && !(g->n[id].kind == JN_INPUT && g->n[id].slot == k)) g->wb[g->nwb] = id, g->wb_slot[g->nwb++] = k;
  }
  char dd[32], de[32];
  for (int k = 0; k < nout && !b->why[0] && !b->need_static; k++) {
    int id = current(b, mtg_trace_root(tr, outs[k]));
    if (id == -2) fail(b, "internal: a returned tensor is not in the graph%s", "");
    g->out[k] = id;
    if (id >= 0 && !mt_same_device(mt_tdevice(outs[k]), g->dev)) { /* host-scalar math returned (see host_scalar) */
      char msg[100];
      snprintf(msg, sizeof msg, "the graph returns a %s value from a graph on %s",
               mt_device_str(mt_tdevice(outs[k]), dd, sizeof dd), mt_device_str(g->dev, de, sizeof de));
      fail(b, "%s", msg);
    }
  }
  g->nout = nout;
  free(b->tv);
  free(b->tn);
  free(b->wr);
  *need_static = b->need_static;
  if (b->why[0] || b->need_static) {
    mtj_graph_free(g);
    return b->need_static ? MT_EARG : mt_fail(MT_EARG, "%s", b->why);
  }
  mtj_mark_live(g);
  mtj_rewrite(g);
  *out = g;
  return MT_OK;
}

mt_status mtj_build(const mtg_trace *tr, const mt_tensor *const *ins, int nin, const double *sc, const bool *sc_int,
                    int nsc, const mt_tensor *const *outs, int nout, const mtj_options *o, mtj_graph **out) {
  bool need_static = false, dynamic = o ? o->dynamic : true;
  mt_status st = build_once(tr, ins, nin, sc, sc_int, nsc, outs, nout, dynamic, o, out, &need_static);
  if (st && need_static && dynamic)
    st = build_once(tr, ins, nin, sc, sc_int, nsc, outs, nout, false, o, out, &need_static);
  if (st && need_static) st = mt_fail(MT_EARG, "a view of the graph has sizes the JIT cannot follow");
  return st;
}

/* ---- canonical text ---- */

static void put_shape(mtj_buf *s, mtj_graph *g, const mtj_dim *sh, int nd) {
  mtj_put(s, "[");
  for (int d = 0; d < nd; d++) {
    if (sh[d].sym >= 0)
      mtj_put(s, "%ss%d", d ? "," : "", mtj_find(g, sh[d].sym));
    else
      mtj_put(s, "%s%lld", d ? "," : "", (long long)sh[d].c);
  }
  mtj_put(s, "]");
}

char *mtj_canon(mtj_graph *g) {
  mtj_buf s = {0};
  mtj_put(&s, "graph %s in=%d sc=%d\n", g->is_static ? "static" : "dynamic", g->nin, g->nsc);
  if (g->dev.type == MT_CUDA) mtj_put(&s, "device cuda:%d\n", g->dev.index);
  for (int k = 0; k < g->nin; k++) {
    mtj_put(&s, "in%d %s rank %d ones", k, mt_dtype_name((mt_dtype)g->in[k].dtype), g->in[k].ndim);
    for (int d = 0; d < g->in[k].ndim; d++) mtj_put(&s, "%c", g->in[k].shape[d] == 1 ? '1' : '.');
    mtj_put(&s, "\n");
  }
  for (int i = 0; i < g->nn; i++) {
    const mtj_node *x = &g->n[i];
    if (!x->live) continue;
    static const char *kinds[] = {"input", "scalar", "const", "unary", "binary", "where", "cast", "reduce", "view",
                                  "extern", "xout"};
    mtj_put(&s, "%%%d = %s", i, kinds[x->kind]);
    if (x->fn) mtj_put(&s, ".%s%s", x->name, x->inplace ? "_" : "");
    else if (x->kind != JN_INPUT && x->kind != JN_SCALAR && x->kind != JN_CONST && x->kind != JN_CAST &&
             x->kind != JN_XOUT)
      mtj_put(&s, ".%s", mt_ops[x->op].name);
    if (x->kind == JN_EXTERN && !x->fn && x->op == MT_OP_matmul && x->a[2] >= 0) mtj_put(&s, "+bias");
    if (x->kind == JN_EXTERN && x->act) mtj_put(&s, "+%s", mt_act_name((mt_act)x->act));
    if (x->slot >= 0) mtj_put(&s, " #%d", x->slot);
    if (x->kind == JN_CONST) mtj_put(&s, " %.17g", x->c);
    for (int k = 0; k < MTJ_NA; k++)
      if (x->a[k] >= 0) mtj_put(&s, " %%%d", x->a[k]);
    mtj_put(&s, " : %s", mt_dtype_name((mt_dtype)x->dtype));
    if (x->cdt != x->dtype) mtj_put(&s, "/%s", mt_dtype_name((mt_dtype)x->cdt));
    mtj_put(&s, " ");
    put_shape(&s, g, x->shape, x->ndim);
    for (int k = 0; k < x->nattr; k++) mtj_put(&s, "%s%lld", k ? "," : " {", (long long)x->attr[k]);
    if (x->nattr) mtj_put(&s, "}");
    if ((x->kind == JN_UNARY && (x->c != 0 || x->f[0] != 0 || x->f[1] != 0 || x->f[2] != 0)) || x->kind == JN_EXTERN)
      mtj_put(&s, " (%.17g %.17g %.17g %.17g)", x->c, x->f[0], x->f[1], x->f[2]);
    if (x->kernel >= 0) mtj_put(&s, " k%d%s", x->kernel, x->mat ? " stored" : "");
    mtj_put(&s, "\n");
  }
  for (int k = 0; k < g->nk; k++) {
    mtj_put(&s, "kernel %d F", k);
    put_shape(&s, g, g->k[k].F, g->k[k].ndim);
    mtj_put(&s, " p=%d\n", g->k[k].p);
  }
  mtj_put(&s, "out");
  for (int k = 0; k < g->nout; k++) mtj_put(&s, " %%%d", g->out[k]);
  for (int k = 0; k < g->nwb; k++) mtj_put(&s, " in%d<-%%%d", g->wb_slot[k], g->wb[k]);
  mtj_put(&s, "\n");
  return s.s;
}
