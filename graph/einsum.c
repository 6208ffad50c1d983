/* einsum.c -- recorded einsum. The equation is parsed (ellipsis dims get
 * letters of their own) and contracted left to right, one recorded node
 * per step with one or two operands, so that a node's saved tensors and its
 * subscripts (packed into n->i) fit in a node. The gradient of an operand
 * is itself an einsum of the incoming gradient and the other operand,
 * with helper operands for what the forward step did implicitly: a ones
 * vector for a subscript summed away, an identity for a repeated subscript
 * (a diagonal), a size-1 ones for a size-1 dim that was broadcast. Bad
 * equations and shapes get the engine's own errors. */
#include <string.h>

#include "linalg_int.h"

#define NLETTERS 52 /* A-Z are 0..25, a-z 26..51 (the engine's order) */
#define MAXOPS 64

typedef struct labels {
  int n;
  int lab[MT_MAXDIM];
} labels;

static int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  return -1;
}

static char letter(int id) { return id < 26 ? (char)('A' + id) : (char)('a' + id - 26); }

/* Reads one subscript list up to ',', '-' or the end; *ell is the position
 * of "..." or -1. Returns false on anything malformed. */
static bool read_list(const char **pp, labels *l, int *ell) {
  const char *p = *pp;
  l->n = 0;
  *ell = -1;
  for (; *p && *p != ',' && *p != '-'; p++) {
    if (*p == ' ') continue;
    if (*p == '.') {
      if (p[1] != '.' || p[2] != '.' || *ell >= 0) return false;
      *ell = l->n;
      p += 2;
      continue;
    }
    int id = letter_id(*p);
    if (id < 0 || l->n >= MT_MAXDIM) return false;
    l->lab[l->n++] = id;
  }
  *pp = p;
  return true;
}

/* Parses eq for ops[0..n): each operand's labels (one per dim) and the
 * output's, all letter ids (the ellipsis dims are given unused letters,
 * aligned from the right as the engine aligns them). False when the
 * equation is malformed or does not fit the operands, or when the letters
 * run out. */
static bool parse(const char *eq, mt_tensor *const *ops, int n, labels *in, labels *out) {
  int ell[MAXOPS], max_ell = 0, count[NLETTERS + MT_MAXDIM] = {0};
  const char *p = eq;
  for (int k = 0; k < n; k++) {
    labels raw;
    if (!read_list(&p, &raw, &ell[k])) return false;
    int e = ops[k]->ndim - raw.n;
    if (e < 0 || (ell[k] < 0 && e != 0)) return false;
    if (e > max_ell) max_ell = e;
    in[k] = raw;
    if (k < n - 1) {
      if (*p != ',') return false;
      p++;
    }
  }
  if (*p == ',') return false;
  for (int k = 0; k < n; k++) { /* expand the ellipsis: labels NLETTERS + d */
    labels raw = in[k];
    int e = ops[k]->ndim - raw.n, q = 0;
    for (int j = 0; j <= raw.n; j++) {
      if (j == ell[k])
        for (int d = 0; d < e; d++) in[k].lab[q++] = NLETTERS + max_ell - e + d;
      if (j < raw.n) in[k].lab[q++] = raw.lab[j];
    }
    in[k].n = q;
    for (int j = 0; j < q; j++) count[in[k].lab[j]]++;
  }
  out->n = 0;
  if (*p == '-') {
    if (p[1] != '>') return false;
    p += 2;
    labels raw;
    int oell;
    if (!read_list(&p, &raw, &oell) || *p) return false;
    for (int j = 0; j <= raw.n; j++) {
      if (j == oell)
        for (int d = 0; d < max_ell; d++) {
          if (out->n >= MT_MAXDIM) return false;
          out->lab[out->n++] = NLETTERS + d;
        }
      if (j == raw.n) break;
      if (!count[raw.lab[j]] || out->n >= MT_MAXDIM) return false;
      for (int q = 0; q < out->n; q++)
        if (out->lab[q] == raw.lab[j]) return false;
      out->lab[out->n++] = raw.lab[j];
    }
  } else {
    if (*p) return false;
    for (int d = 0; d < max_ell; d++) out->lab[out->n++] = NLETTERS + d;
    for (int l = 0; l < NLETTERS; l++)
      if (count[l] == 1) {
        if (out->n >= MT_MAXDIM) return false;
        out->lab[out->n++] = l;
      }
  }
  /* give the ellipsis dims unused letters */
  int map[MT_MAXDIM], next = 0;
  for (int d = 0; d < max_ell; d++) {
    while (next < NLETTERS && count[next]) next++;
    if (next == NLETTERS) return false;
    map[d] = next++;
  }
  for (int k = 0; k <= n; k++) {
    labels *l = k < n ? &in[k] : out;
    for (int j = 0; j < l->n; j++)
      if (l->lab[j] >= NLETTERS) l->lab[j] = map[l->lab[j] - NLETTERS];
  }
  return true;
}

/* Appends the letters of l to buf at *pos. */
static void put_labels(char *buf, int *pos, const labels *l) {
  for (int j = 0; j < l->n; j++) buf[(*pos)++] = letter(l->lab[j]);
}

static int64_t pack(const labels *l) {
  uint64_t v = 0;
  for (int j = 0; j < l->n; j++) v |= (uint64_t)l->lab[j] << (8 * j);
  return (int64_t)v;
}

static void unpack(int64_t v, int n, labels *l) {
  l->n = n;
  for (int j = 0; j < n; j++) l->lab[j] = (int)(((uint64_t)v >> (8 * j)) & 0xff);
}

/* Node arguments (einsum's engine entry, tensor/call.c): i[0] operands (1
 * or 2), i[1..3] label counts of a, b and the output, i[4..6] their packed
 * labels. */
static void node_labels(const mtg_node *n, labels *a, labels *b, labels *o) {
  unpack(n->i[4], (int)n->i[1], a);
  unpack(n->i[5], (int)n->i[2], b);
  unpack(n->i[6], (int)n->i[3], o);
}

/* The gradient of operand t of an einsum step (see the file comment):
 * einsum(g, other operand, helpers) -> the operand's labels, where a
 * label that must not tie to the others gets a fresh letter. */
static mt_tensor *operand_grad(mtg_scope *s, mtg_node *n, int t, const mt_tensor *g, mt_tensor *other) {
  if (!g || (n->i[0] == 2 && !other)) return NULL;
  labels l[2], o;
  node_labels(n, &l[0], &l[1], &o);
  const labels *tl = &l[t], *ol = n->i[0] == 2 ? &l[1 - t] : NULL;
  const mtg_meta_shape *tm = &n->in[t];
  mt_dtype dt = (mt_dtype)g->dtype;
  int64_t present[NLETTERS] = {0}; /* largest size of each label among g and the other operand */
  bool used[NLETTERS] = {0};
  for (int j = 0; j < o.n; j++) {
    used[o.lab[j]] = true;
    if (g->shape[j] > present[o.lab[j]]) present[o.lab[j]] = g->shape[j];
  }
  for (int j = 0; ol && j < ol->n; j++) {
    used[ol->lab[j]] = true;
    if (other->shape[j] > present[ol->lab[j]]) present[ol->lab[j]] = other->shape[j];
  }
  for (int j = 0; j < tl->n; j++) used[tl->lab[j]] = true;
  mt_tensor *ops[2 + 2 * MT_MAXDIM];
  labels oplab[2 + 2 * MT_MAXDIM], res = {0};
  int nops = 0, fresh = 0;
  ops[nops] = (mt_tensor *)g;
  oplab[nops++] = o;
  if (ol) {
    ops[nops] = other;
    oplab[nops++] = *ol;
  }
  bool seen[NLETTERS] = {0};
  for (int d = 0; d < tl->n; d++) {
    int lab = tl->lab[d];
    int64_t size = tm->shape[d];
    bool repeat = seen[lab], broadcast = size == 1 && present[lab] > 1;
    seen[lab] = true;
    if (!repeat && !broadcast) { /* the label itself; ones where the others lack its size */
      res.lab[res.n++] = lab;
      if (present[lab] < size) {
        ops[nops] = mtg_dl_ones(s, &size, 1, dt);
        oplab[nops++] = (labels){1, {lab}};
        present[lab] = size;
      }
      continue;
    }
    while (fresh < NLETTERS && used[fresh]) fresh++;
    if (fresh == NLETTERS) {
      if (MTG_DL_LIVE(s))
        s->st = mt_fail(MT_EARG, "einsum: the equation uses too many subscripts to compute its gradient");
      return NULL;
    }
    used[fresh] = true;
    res.lab[res.n++] = fresh;
    if (size == 1) { /* broadcast, or a repeated size-1 dim: summed */
      ops[nops] = mtg_dl_ones(s, &size, 1, dt);
      oplab[nops++] = (labels){1, {fresh}};
    } else { /* the diagonal of a repeated label */
      ops[nops] = mtg_dl_mask(s, size, dt, MTG_DL_EYE);
      oplab[nops++] = (labels){2, {lab, fresh}};
    }
  }
  char eq[(2 + 2 * MT_MAXDIM) * (MT_MAXDIM + 1) + MT_MAXDIM + 4];
  int pos = 0;
  for (int k = 0; k < nops; k++) {
    if (k) eq[pos++] = ',';
    put_labels(eq, &pos, &oplab[k]);
  }
  eq[pos++] = '-';
  eq[pos++] = '>';
  put_labels(eq, &pos, &res);
  eq[pos] = 0;
  return mtg_dl_einsum(s, eq, ops, nops);
}

static mt_status d_einsum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int nin = (int)n->i[0];
  mt_tensor *a = nin == 2 && mtg_needs(n, 1) ? mtg_d_saved(s, 0) : NULL;
  mt_tensor *b = nin == 2 && mtg_needs(n, 0) ? mtg_d_saved(s, 1) : NULL;
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, operand_grad(s, n, 0, go[0], b));
  if (nin == 2 && mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, operand_grad(s, n, 1, go[0], a));
  return mtg_scope_end(s, gin, n->nin);
}

/* One recorded step: "a[,b]->o" on x (and y), through einsum's engine
 * entry with the subscripts packed as the node keeps them. */
static mt_status step(const labels *la, const labels *lb, const labels *lo, const mt_tensor *x, const mt_tensor *y,
                      mt_tensor **out) {
  const mt_tensor *ins[2] = {x, y};
  int nin = y ? 2 : 1;
  mt_args args = {.i = {nin, la->n, lb ? lb->n : 0, lo->n, pack(la), lb ? pack(lb) : 0, pack(lo)}, .ni = 7};
  return mtg_call(MT_OP_einsum, ins, nin, &args, out, 1);
}

/* The engine's message for an equation that the steps could not run. */
static mt_status engine_error(const char *eq, mt_tensor *const *ops, int n, mt_status st) {
  mt_tensor *r = NULL;
  mt_status st2 = mt_einsum(eq, ops, n, &r);
  mt_release(r);
  if (st2) return st2;
  if (st) return st;
  return mt_fail(MT_EARG, "einsum: the equation '%s' cannot be recorded for autograd (too many subscripts)", eq);
}

mt_status mtg_einsum(const char *eq, mt_tensor *const *ops, int n, mt_tensor **out) {
  if (!mtg_any_requires_grad((const mt_tensor *const *)ops, n)) return mt_einsum(eq, ops, n, out);
  if (*out)
    return mt_fail(MT_EARG, "einsum: out= cannot be used when an input requires grad (the result would have no "
                            "history); drop out= or use torch.no_grad()");
  labels in[MAXOPS], o;
  if (n < 1 || n > MAXOPS || !parse(eq, ops, n, in, &o)) return engine_error(eq, ops, n, MT_OK);
  labels acc = in[0];
  mt_tensor *t = NULL;
  mt_status st = MT_OK;
  if (n == 1) {
    st = step(&in[0], NULL, &o, ops[0], NULL, &t);
  } else {
    t = mt_retain(ops[0]);
    for (int k = 1; k < n && !st; k++) {
      labels res = {0};
      if (k == n - 1) {
        res = o;
      } else { /* keep the labels still needed: by the output or a later operand */
        bool keep[NLETTERS] = {0}, taken[NLETTERS] = {0};
        for (int j = 0; j < o.n; j++) keep[o.lab[j]] = true;
        for (int q = k + 1; q < n; q++)
          for (int j = 0; j < in[q].n; j++) keep[in[q].lab[j]] = true;
        for (int side = 0; side < 2; side++) {
          const labels *l = side ? &in[k] : &acc;
          for (int j = 0; j < l->n; j++) {
            int lab = l->lab[j];
            if (!keep[lab] || taken[lab]) continue;
            if (res.n == MT_MAXDIM) {
              st = mt_fail(MT_ESHAPE, "einsum: an intermediate result would have more than %d dimensions", MT_MAXDIM);
              break;
            }
            taken[lab] = true;
            res.lab[res.n++] = lab;
          }
        }
      }
      mt_tensor *r = NULL;
      if (!st) st = step(&acc, &in[k], &res, t, ops[k], &r);
      mt_release(t);
      t = r;
      acc = res;
    }
  }
  if (st) {
    mt_release(t);
    return engine_error(eq, ops, n, st);
  }
  *out = t;
  return MT_OK;
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_einsum] = {d_einsum, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
};

const mtg_deriv *mtg_deriv_einsum(mt_op op) { return table[op].fn ? &table[op] : NULL; }
