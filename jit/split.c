/* split.c -- compiled functions with graph breaks. A host read inside fn
 * (x:item(), tostring, totable) splits its trace into segments, each
 * compiled as a graph; Lua runs between them, so what it does with the
 * value it read can depend on it.
 *
 * Once a function shows a break, the bindings wrap the torch C functions
 * (lua_bindings/l_jit_split.c) and the capture records each op call here:
 * the function, its tensor arguments and results (as ids), the trace
 * entries it made, and which calls read a value on the host. Calls that
 * made trace entries are substituted at replay: fn runs again in Lua, but
 * such a call returns the tensors its segment computed instead of running.
 * Other calls (queries, setters, the host reads) run for real. A segment
 * runs when the first call that needs it is reached, so every host read
 * sees real values; results of substituted calls have no autograd history
 * (a backward inside fn is a substituted call whose gradients the
 * segments set). The call sequence is checked at replay: a call that is
 * not the one recorded means fn took another path.
 *
 * This file holds the records, the segments and the replay state; it
 * never reads or calls Lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"
#include "split.h"

/* Tensor ids: index into vals; a pointer hash finds a tensor's id. */
typedef struct idmap {
  mt_tensor **vals; /* owned */
  bool *read;       /* capture: its data was read by a call that ran (a host read, a setter) */
  int n, cap;
  int *slot; /* open addressing: id + 1, 0 empty */
  int hcap;
} idmap;

struct mtj_rec {
  double fnum[MTJ_MAXARGS]; /* fn's number arguments at the capture (NaN: not a number) */
  int nfnum;
  mtj_call *calls;
  int ncalls, cap;
  int stack[64], depth;
  idmap ids;
  int *bound, nbound; /* trace positions of the host reads (print and tostring run no recorded call) */
  bool overflow;
};

typedef struct jseg {
  mtj_compiled *c;
  int nin, nout;
  int *in_id, *out_id;
} jseg;

/* A .grad the capture set: leaf's .grad is value grad once segment seg ran. */
typedef struct seg_grad {
  int leaf, grad, seg;
} seg_grad;

struct mtj_split {
  mtj_call *calls;
  int ncalls;
  int nids;
  jseg *seg;
  int nseg;
  int *ext_id; /* entry input k: its id */
  int ngrad;
  seg_grad *grad; /* .grad side effects */
  char name[112];
  bool dead; /* the replay diverged: dropped */
  bool warned_branch;
};

/* The state of one replay. */
struct mtj_splitrun {
  mtj_split *s;
  mt_tensor **vals; /* [nids], owned (in the same allocation) */
  int next;         /* index of the next call */
  int done;         /* segments run */
  double sc[MTJ_MAXARGS + MTJ_MAXSCT];
  bool eager; /* it took another path where no later segment had run: finishing eagerly */
};

/* ---- ids ---- */

static unsigned hash_ptr(const void *p) { return (unsigned)(((uintptr_t)p >> 4) * 2654435761u); }

static int id_find(const idmap *m, const mt_tensor *t) {
  if (!m->hcap) return -1;
  for (unsigned h = hash_ptr(t) & (unsigned)(m->hcap - 1);; h = (h + 1) & (unsigned)(m->hcap - 1)) {
    if (!m->slot[h]) return -1;
    if (m->vals[m->slot[h] - 1] == t) return m->slot[h] - 1;
  }
}

static bool id_grow(idmap *m) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    mt_tensor **v = realloc(m->vals, (size_t)cap * sizeof *v);
    if (!v) return false;
    m->vals = v;
    bool *r = realloc(m->read, (size_t)cap * sizeof *r);
    if (!r) return false;
    m->read = r, m->cap = cap;
  }
  if (2 * (m->n + 1) > m->hcap) {
    int hcap = m->hcap ? 2 * m->hcap : 128;
    int *s = calloc((size_t)hcap, sizeof *s);
    if (!s) return false;
    for (int i = 0; i < m->n; i++) {
      unsigned h = hash_ptr(m->vals[i]) & (unsigned)(hcap - 1);
      while (s[h]) h = (h + 1) & (unsigned)(hcap - 1);
      s[h] = i + 1;
    }
    free(m->slot);
    m->slot = s, m->hcap = hcap;
  }
  return true;
}

/* t's id, made (t retained) when new; -1 when out of memory. */
static int id_of(idmap *m, const mt_tensor *t) {
  int id = id_find(m, t);
  if (id >= 0) return id;
  if (!id_grow(m)) return -1;
  id = m->n++;
  m->vals[id] = mt_retain((mt_tensor *)t);
  m->read[id] = false;
  unsigned h = hash_ptr(t) & (unsigned)(m->hcap - 1);
  while (m->slot[h]) h = (h + 1) & (unsigned)(m->hcap - 1);
  m->slot[h] = id + 1;
  return id;
}

static void id_free(idmap *m) {
  for (int i = 0; i < m->n; i++) mt_release(m->vals[i]);
  free(m->vals);
  free(m->read);
  free(m->slot);
  memset(m, 0, sizeof *m);
}

static void calls_free(mtj_call *c, int n) {
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < c[i].nres; r++) free(c[i].res[r].ids);
    free(c[i].res);
    free(c[i].num);
  }
  free(c);
}

/* ---- recording (capture) ---- */

mtj_rec *mtj_rec_new(const double *fnum, int n) {
  mtj_rec *r = calloc(1, sizeof(mtj_rec));
  if (!r) return NULL;
  r->nfnum = n < MTJ_MAXARGS ? n : MTJ_MAXARGS;
  for (int k = 0; k < r->nfnum; k++) r->fnum[k] = fnum[k];
  return r;
}

void mtj_rec_free(mtj_rec *r) {
  if (!r) return;
  calls_free(r->calls, r->ncalls);
  id_free(&r->ids);
  free(r->bound);
  free(r);
}

void mtj_rec_sync(mtj_rec *r) {
  if (r->depth > 0) r->calls[r->stack[r->depth - 1]].sync = true;
  if (r->nbound % 16 == 0) {
    int *b = realloc(r->bound, (size_t)(r->nbound + 16) * sizeof *b);
    if (!b) {
      r->overflow = true;
      return;
    }
    r->bound = b;
  }
  r->bound[r->nbound++] = mtg_tracing ? mtg_tracing->n : 0;
}

int mtj_rec_open(mtj_rec *r, const void *fn, const mt_tensor *const *argt, int n) {
  if (r->ncalls == r->cap) {
    int cap = r->cap ? 2 * r->cap : 256;
    mtj_call *c = realloc(r->calls, (size_t)cap * sizeof *c);
    if (!c) return r->overflow = true, -1;
    r->calls = c, r->cap = cap;
  }
  if (r->depth == (int)(sizeof r->stack / sizeof *r->stack)) return r->overflow = true, -1;
  int i = r->ncalls++;
  mtj_call *c = &r->calls[i];
  memset(c, 0, sizeof *c);
  c->fn = fn;
  c->parent = r->depth ? r->stack[r->depth - 1] : -1;
  c->n0 = mtg_tracing ? mtg_tracing->n : 0;
  c->nargs = n < MTJ_MAXCARGS ? n : MTJ_MAXCARGS;
  for (int a = 0; a < c->nargs; a++) c->argid[a] = argt[a] ? id_of(&r->ids, argt[a]) : -1;
  r->stack[r->depth++] = i;
  return i;
}

void mtj_rec_number(mtj_rec *r, int i, int arg, const char *key, double v) {
  mtj_call *c = &r->calls[i];
  if (c->nnum % 8 == 0) {
    mtj_num *n = realloc(c->num, (size_t)(c->nnum + 8) * sizeof *n);
    if (!n) {
      r->overflow = true;
      return;
    }
    c->num = n;
  }
  mtj_num *x = &c->num[c->nnum++];
  memset(x, 0, sizeof *x);
  x->arg = (int8_t)arg, x->v = v, x->sck = -1;
  snprintf(x->key, sizeof x->key, "%s", key);
  for (int k = 0; k < r->nfnum; k++)
    if (r->fnum[k] == v) x->sck = (int8_t)k;
}

void mtj_rec_close(mtj_rec *r, int i, bool index_fn, int nres) {
  r->depth--;
  mtj_call *c = &r->calls[i];
  c->n1 = mtg_tracing ? mtg_tracing->n : c->n0;
  if (c->n1 == c->n0) { /* it will run at replay: the tensors it reads must be real */
    bool lookup = index_fn && c->nargs >= 2 && c->argid[1] < 0;
    for (int a = lookup ? 2 : 0; a < c->nargs; a++) /* __index(x, "k") reads no data; __newindex's value is kept */
      if (c->argid[a] >= 0) r->ids.read[c->argid[a]] = true;
  }
  c->res = calloc((size_t)nres + 1, sizeof *c->res);
  if (!c->res) {
    r->overflow = true;
    return;
  }
  c->nres = nres;
}

void mtj_rec_result(mtj_rec *r, int i, int k, int kind, double num, const mt_tensor *t) {
  mtj_call *c = &r->calls[i];
  if (k >= c->nres) return;
  mtj_res *x = &c->res[k];
  x->kind = (int8_t)kind, x->num = num;
  if (kind == MTJ_R_TENSOR) {
    x->id = id_of(&r->ids, t);
    x->ndim = t->ndim, x->dtype = t->dtype;
    memcpy(x->shape, t->shape, sizeof x->shape);
  }
}

void mtj_rec_table(mtj_rec *r, int i, int k, int n) {
  mtj_call *c = &r->calls[i];
  if (k >= c->nres) return;
  mtj_res *x = &c->res[k];
  x->kind = MTJ_R_TABLE;
  x->ids = malloc((size_t)n * sizeof *x->ids);
  x->nids = x->ids ? n : 0;
}

void mtj_rec_table_item(mtj_rec *r, int i, int k, int j, const mt_tensor *t) {
  mtj_call *c = &r->calls[i];
  if (k >= c->nres || j >= c->res[k].nids) return;
  mtj_res *x = &c->res[k];
  x->ids[j] = t ? id_of(&r->ids, t) : -1;
  if (x->ids[j] >= 0) r->ids.read[x->ids[j]] = true; /* tables of results are always computed */
  if (!t) x->kind = MTJ_R_OTHER;
}

/* ---- segments ---- */

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The segment holding trace position pos. */
static int seg_of(const int *bound, int nb, int pos) {
  int s = 0;
  while (s < nb && bound[s] <= pos) s++;
  return s;
}

/* Position of the trace entry that made t (through aliases), -1 if none. */
static int producer(const mtg_trace *tr, const mt_tensor *t) {
  t = mtg_trace_root(tr, t);
  for (int k = tr->n - 1; k >= 0; k--) {
    if (tr->e[k].out == t && !tr->e[k].inplace) return k;
    for (int j = 0; j < tr->e[k].nout - 1; j++)
      if (tr->e[k].xout[j] == t) return k;
  }
  return -1;
}

/* Segment g of tr (bound[0..nb): the segments' starts after the first)
 * as a trace of its own: no .grad side effects, other fields shared. */
static mtg_trace seg_part(const mtg_trace *tr, const int *bound, int nb, int g) {
  int b = g ? bound[g - 1] : 0, end = g < nb ? bound[g] : tr->n;
  mtg_trace part = *tr;
  part.e = tr->e + b, part.n = end - b, part.cap = part.n, part.grads = NULL, part.ngrads = 0;
  return part;
}

/* Classifies the recorded calls: substituted ones (they made trace entries
 * and ran no other recorded call), their segments, the syncs' segments. */
static void classify(mtj_entry *e, mtj_call *calls, int ncalls, const int *bound, int nb) {
  for (int i = 0; i < ncalls && !e->why[0]; i++) {
    mtj_call *c = &calls[i];
    int inner = 0;
    bool leaf = true;
    for (int j = i + 1; j < ncalls && calls[j].parent >= i; j++) /* i's subtree follows it */
      if (calls[j].parent == i) leaf = false, inner += calls[j].n1 - calls[j].n0;
    c->seg = seg_of(bound, nb, c->n0);
    if (c->n1 == c->n0) continue;
    if (!leaf) {
      if (inner != c->n1 - c->n0)
        snprintf(e->why, sizeof e->why, "a C function that calls back into Lua also made ops itself (a hook?)");
      continue;
    }
    if (c->sync || seg_of(bound, nb, c->n1 - 1) != c->seg)
      snprintf(e->why, sizeof e->why, "one op call both read a value on the host and made ops");
    for (int r = 0; r < c->nres && !e->why[0]; r++)
      if (c->res[r].kind == MTJ_R_OTHER)
        snprintf(e->why, sizeof e->why, "an op call returned a Lua value the JIT cannot stand in for");
    c->subst = true;
  }
}

/* need[i] for the tensors Lua saw that the replay must compute: those a
 * call that runs at replay reads, and those still referenced once the
 * capture's fn returned (a result, a table entry, a .grad, optimizer
 * state): references beyond the recorder's one and the trace's. The rest
 * were temporaries: at replay Lua gets a stand-in of the right shape. The
 * caller collected garbage first, so dead userdata hold no reference. */
static void mark_kept(const mtg_trace *tr, idmap *ids, int nvisible, bool *need) {
  int *uses = calloc((size_t)ids->n + 1, sizeof *uses);
  if (!uses) {
    for (int i = 0; i < nvisible; i++) need[i] = true;
    return;
  }
#define USE(t)                                                                                                         \
  do {                                                                                                                 \
    int id_ = (t) ? id_find(ids, (t)) : -1;                                                                            \
    if (id_ >= 0) uses[id_]++;                                                                                         \
  } while (0)
  for (int k = 0; k < tr->n; k++) {
    for (int j = 0; j < tr->e[k].nin; j++) USE(tr->e[k].in[j]);
    USE(tr->e[k].out);
    for (int j = 0; j < MTG_TRACE_NOUT - 1; j++) USE(tr->e[k].xout[j]);
  }
  for (int k = 0; k < tr->ngrads; k++) {
    USE(tr->grads[k].leaf);
    USE(tr->grads[k].grad);
  }
  for (int k = 0; k < 2 * tr->nalias; k++) USE(tr->alias[k]);
  for (int k = 0; k < tr->nfresh; k++) USE(tr->fresh[k]);
#undef USE
  for (int i = 0; i < nvisible; i++) need[i] = ids->read[i] || ids->vals[i]->refs > 1 + uses[i];
  free(uses);
}

/* Adds t to ext[0..*next) unless it is there (first: the entry that reads it). */
static void add_ext(const mt_tensor **ext, int *efirst, int *next, const mt_tensor *t, int first) {
  for (int x = 0; x < *next; x++)
    if (ext[x] == t) return;
  if (*next < MTJ_MAXIN) efirst[*next] = first, ext[(*next)++] = t;
}

/* The inputs of every segment (as ids) and the tensors read from outside
 * the trace (ext), then the .grad side effects, whose leaves are inputs
 * too. Sets e->why on failure. */
static void seg_inputs(mtj_entry *e, mtj_split *s, idmap *ids, const mtg_trace *tr, const int *bound, int nb,
                       const mt_tensor **ext, int *efirst, int *next) {
  for (int g = 0; g < s->nseg && !e->why[0]; g++) {
    mtg_trace part = seg_part(tr, bound, nb, g);
    const mt_tensor *ins[MTJ_MAXIN];
    int first[MTJ_MAXIN];
    int nin = mtj_graph_inputs(&part, e, ins, first);
    jseg *sg = &s->seg[g];
    sg->in_id = malloc((size_t)nin * sizeof *sg->in_id + 1);
    sg->nin = nin;
    for (int k = 0; k < nin && sg->in_id; k++) {
      sg->in_id[k] = id_of(ids, ins[k]);
      if (producer(tr, ins[k]) < 0)
        add_ext(ext, efirst, next, ins[k], first[k] < 0 ? -1 : (int)(part.e - tr->e) + first[k]);
    }
  }
  s->grad = calloc((size_t)tr->ngrads + 1, sizeof *s->grad);
  for (int k = 0; k < tr->ngrads && s->grad && !e->why[0]; k++) {
    const mtg_trace_grad *x = &tr->grads[k];
    if (!x->grad) continue; /* set to nil: the call that did it runs at replay */
    int pos = producer(tr, x->grad);
    if (pos < 0) {
      snprintf(e->why, sizeof e->why, "it sets a .grad to a tensor made outside the traced ops");
      break;
    }
    add_ext(ext, efirst, next, x->leaf, -1);
    s->grad[s->ngrad].leaf = id_of(ids, x->leaf);
    s->grad[s->ngrad].grad = id_of(ids, x->grad);
    s->grad[s->ngrad++].seg = seg_of(bound, nb, pos);
  }
}

/* Each segment's outputs (made in it, and seen by Lua, read by a later
 * segment or a .grad), then its compiled graph. Sets e->why on failure. */
static void seg_compile(mtj_entry *e, mtj_split *s, idmap *ids, int nvisible, const mtg_trace *tr, const int *bound,
                        int nb, const double *sc, const bool *isint, const mtj_options *o) {
  bool *need = calloc((size_t)ids->n + 1, sizeof *need);
  if (need) mark_kept(tr, ids, nvisible, need);
  for (int g = 0; g < s->nseg && need && !e->why[0]; g++)
    for (int k = 0; k < s->seg[g].nin && s->seg[g].in_id; k++) need[s->seg[g].in_id[k]] = true;
  for (int k = 0; k < s->ngrad && need; k++) need[s->grad[k].grad] = true;
  int *pseg = malloc((size_t)ids->n * sizeof *pseg + 1);
  for (int i = 0; i < ids->n && pseg; i++) {
    int pos = producer(tr, ids->vals[i]);
    pseg[i] = pos < 0 ? -1 : seg_of(bound, nb, pos);
  }
  for (int g = 0; g < s->nseg && need && pseg && !e->why[0]; g++) {
    jseg *sg = &s->seg[g];
    sg->out_id = malloc((size_t)ids->n * sizeof *sg->out_id + 1);
    const mt_tensor **outs = malloc((size_t)ids->n * sizeof *outs + 1);
    if (!sg->out_id || !outs) {
      free(outs);
      snprintf(e->why, sizeof e->why, "out of memory");
      break;
    }
    for (int i = 0; i < ids->n; i++)
      if (need[i] && pseg[i] == g && sg->nout < MTJ_MAXOUT) sg->out_id[sg->nout] = i, outs[sg->nout++] = ids->vals[i];
    const mt_tensor *ins[MTJ_MAXIN];
    for (int k = 0; k < sg->nin; k++) ins[k] = ids->vals[sg->in_id[k]];
    mtg_trace part = seg_part(tr, bound, nb, g);
    if (mtj_compile(&part, ins, sg->nin, sc, isint, e->nargs, outs, sg->nout, o, &sg->c))
      snprintf(e->why, sizeof e->why, "graph %d of %d: %s", g + 1, s->nseg, mt_errmsg());
    free(outs);
  }
  if (!e->why[0] && (!need || !pseg || !s->grad)) snprintf(e->why, sizeof e->why, "out of memory");
  free(need), free(pseg);
}

mtj_split *mtj_split_build(const char *name, bool quiet, mtj_entry *e, mtj_rec *r, const mtg_trace *tr,
                           const double *sc, const bool *isint, const mtj_options *o, const mt_tensor **ext, int *first,
                           int *next) {
  *next = 0;
  if (r->overflow) {
    snprintf(e->why, sizeof e->why, "out of memory recording its op calls");
    return NULL;
  }
  mtj_split *s = calloc(1, sizeof *s);
  int *bound = calloc((size_t)r->nbound + 1, sizeof *bound), nb = 0;
  if (!s || !bound) {
    free(s), free(bound);
    snprintf(e->why, sizeof e->why, "out of memory");
    return NULL;
  }
  snprintf(s->name, sizeof s->name, "%s", name);
  s->warned_branch = quiet;
  for (int i = 0; i < r->nbound; i++) /* the segments' starts: sorted, once each */
    if (r->bound[i] > 0 && r->bound[i] < tr->n) bound[nb++] = r->bound[i];
  qsort(bound, (size_t)nb, sizeof *bound, cmp_int);
  int u = 0;
  for (int i = 0; i < nb; i++)
    if (!u || bound[u - 1] != bound[i]) bound[u++] = bound[i];
  nb = u;
  classify(e, r->calls, r->ncalls, bound, nb);
  s->nseg = nb + 1;
  s->seg = calloc((size_t)s->nseg, sizeof *s->seg);
  if (!s->seg && !e->why[0]) snprintf(e->why, sizeof e->why, "out of memory");
  /* ids every later step needs: values Lua saw (made by the trace) are outputs of their segment */
  int nvisible = r->ids.n;
  if (!e->why[0]) seg_inputs(e, s, &r->ids, tr, bound, nb, ext, first, next);
  if (!e->why[0]) seg_compile(e, s, &r->ids, nvisible, tr, bound, nb, sc, isint, o);
  free(bound);
  if (e->why[0]) {
    mtj_split_free(s);
    return NULL;
  }
  return s;
}

void mtj_split_attach(mtj_entry *e, mtj_split *s, mtj_rec *r, const mt_tensor *const *ext, int next) {
  if (!e->why[0]) {
    s->ext_id = malloc((size_t)next * sizeof *s->ext_id + 1);
    if (!s->ext_id) snprintf(e->why, sizeof e->why, "out of memory");
    for (int k = 0; k < next && s->ext_id; k++) {
      s->ext_id[k] = id_find(&r->ids, ext[k]);
      if (e->grad_mode && mtg_requires_grad(ext[k])) e->rg[k / 64] |= 1ull << (k % 64);
    }
  }
  if (e->why[0]) {
    mtj_split_free(s);
    return;
  }
  s->nids = r->ids.n;
  s->calls = r->calls, s->ncalls = r->ncalls; /* handed over */
  r->calls = NULL, r->ncalls = r->cap = 0;
  e->split = s;
  for (int k = 0; k < e->nargs; k++) e->arg[k].candidate = e->arg[k].type == MTJ_TNUMBER;
  e->generalized = true; /* number arguments are runtime scalars; the op calls are guarded on them */
}

void mtj_split_free(mtj_split *s) {
  if (!s) return;
  calls_free(s->calls, s->ncalls);
  for (int k = 0; k < s->nseg; k++) {
    mtj_free(s->seg[k].c);
    free(s->seg[k].in_id);
    free(s->seg[k].out_id);
  }
  free(s->seg);
  free(s->ext_id);
  free(s->grad);
  free(s);
}

int mtj_split_nseg(const mtj_split *s) { return s->nseg; }
bool mtj_split_dead(const mtj_split *s) { return s->dead; }

void mtj_split_explain(const mtj_split *s, FILE *f) {
  for (int g = 0; g < s->nseg; g++) {
    fprintf(f, "\n---- graph %d of %d ----\n", g + 1, s->nseg);
    mtj_explain(s->seg[g].c, f);
  }
}

/* ---- replay ---- */

mtj_splitrun *mtj_splitrun_new(const mtj_entry *e, const mt_tensor *const *ins, const double *sc) {
  mtj_split *s = e->split;
  mtj_splitrun *p = malloc(sizeof *p + ((size_t)s->nids + 1) * sizeof *p->vals); /* vals follow */
  if (!p) return NULL;
  p->s = s;
  p->vals = (mt_tensor **)(p + 1);
  memset(p->vals, 0, ((size_t)s->nids + 1) * sizeof *p->vals);
  p->next = p->done = 0;
  p->eager = false;
  memcpy(p->sc, sc, sizeof p->sc);
  for (int k = 0; k < e->nin; k++)
    if (s->ext_id[k] >= 0) p->vals[s->ext_id[k]] = mt_retain((mt_tensor *)ins[k]);
  return p;
}

void mtj_splitrun_free(mtj_splitrun *p) {
  if (!p) return;
  for (int i = 0; i < p->s->nids; i++) mt_release(p->vals[i]);
  free(p);
}

const char *mtj_splitrun_name(const mtj_splitrun *p) { return p->s->name; }
bool mtj_splitrun_eager(const mtj_splitrun *p) { return p->eager; }
int mtj_splitrun_at(const mtj_splitrun *p) { return p->next - 1; }

const mtj_call *mtj_splitrun_next(mtj_splitrun *p, const void *fn, int *i, const char **why) {
  *i = p->next++;
  if (*i >= p->s->ncalls) return *why = "more op calls than at the capture", NULL;
  const mtj_call *c = &p->s->calls[*i];
  if (c->fn != fn) return *why = "another function than at the capture", NULL;
  return c;
}

const mt_tensor *mtj_splitrun_value(const mtj_splitrun *p, int id) { return p->vals[id]; }

void mtj_splitrun_bind(mtj_splitrun *p, int id, mt_tensor *t) {
  mt_release(p->vals[id]);
  p->vals[id] = mt_retain(t);
}

bool mtj_splitrun_number_ok(const mtj_splitrun *p, const mtj_num *x, double v) {
  double want = x->sck >= 0 ? p->sc[x->sck] : x->v;
  return v == want || (v != v && want != want);
}

bool mtj_splitrun_diverge(mtj_splitrun *p, int i, bool eager_ok, bool *warn) {
  mtj_split *s = p->s;
  *warn = false;
  if (eager_ok && (i >= s->ncalls || p->done <= s->calls[i].seg)) {
    p->eager = true;
    *warn = !s->warned_branch;
    s->warned_branch = true;
    return true;
  }
  s->dead = true;
  return false;
}

mt_status mtj_splitrun_segments(mtj_splitrun *p, int last, bool *miss, char *why, size_t n) {
  mtj_split *s = p->s;
  *miss = false;
  while (p->done <= last && p->done < s->nseg) {
    jseg *g = &s->seg[p->done];
    const mt_tensor *ins[MTJ_MAXIN];
    for (int k = 0; k < g->nin; k++) {
      ins[k] = p->vals[g->in_id[k]];
      if (!ins[k])
        return mt_fail(MT_EARG, "torch.compile: %s: graph %d lacks an input (internal error)", s->name, p->done + 1);
    }
    if (!mtj_guard(g->c, ins, why, n)) return *miss = true, MT_OK;
    mt_tensor *outs[MTJ_MAXOUT] = {0};
    int64_t tok = mtg_profiler_begin(s->name, ins, g->nin);
    mt_status st = mtj_run(g->c, ins, p->sc, outs);
    mtg_profiler_end(tok);
    for (int j = 0; j < g->nout; j++) {
      mt_release(p->vals[g->out_id[j]]);
      p->vals[g->out_id[j]] = outs[j];
      outs[j] = NULL;
    }
    for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
    for (int k = 0; k < s->ngrad && !st; k++)
      if (s->grad[k].seg == p->done) st = mtg_set_grad(p->vals[s->grad[k].leaf], p->vals[s->grad[k].grad]);
    p->done++;
    if (st) return st;
  }
  return MT_OK;
}

mt_tensor *mtj_splitrun_result(mtj_splitrun *p, int id, const mtj_res *x) {
  mt_tensor *t = id >= 0 ? p->vals[id] : NULL;
  if (!t && id >= 0 && x->ndim >= 0) { /* broadcast from one element: Lua only passes it on or asks its size */
    mt_tensor *one = NULL;
    int64_t ones[MT_MAXDIM];
    for (int d = 0; d < x->ndim; d++) ones[d] = 1;
    mt_status st = mt_zeros(ones, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &one);
    if (!st) st = mt_expand(one, x->shape, x->ndim, &t);
    mt_release(one);
    if (st) return NULL;
    p->vals[id] = t;
  }
  if (!t) mt_fail(MT_EARG, "torch.compile: %s: a result was not computed (internal error)", p->s->name);
  return t;
}

int mtj_splitrun_end(mtj_splitrun *p, char *why, size_t n) {
  mtj_split *s = p->s;
  if (p->next < s->ncalls && !p->eager && p->done <= s->calls[p->next].seg)
    p->eager = true; /* returned early, after a host read, before the next graph: nothing of it ran */
  if (p->next != s->ncalls && !p->eager) {
    s->dead = true;
    snprintf(why, n,
             "torch.compile: %s returned after %d of the %d op calls the capture saw; its compiled graphs "
             "are dropped: the next call captures again",
             s->name, p->next, s->ncalls);
    return MTJ_END_DEAD;
  }
  return p->done < s->nseg && !p->eager ? MTJ_END_TRAILING : MTJ_END_DONE;
}
