/* einsum.c -- torch.einsum: parses the equation (explicit or implicit
 * output, '...' ellipsis, size-1 broadcasting), takes diagonals for repeated
 * subscripts, then contracts the operands left to right, each pair as one
 * batched matmul after permute/reshape. Subscripts no longer needed are
 * summed as a product with a vector of ones, so no reduction kernel is used. */
#include <string.h>

#include "linalg.h"

#define NLETTERS 52                    /* A-Z are 0..25, a-z 26..51 (PyTorch's order) */
#define NLABELS (NLETTERS + MT_MAXDIM) /* then the ellipsis dims */

typedef uint64_t labelset;
#define BIT(l) ((labelset)1 << (l))

/* An operand or intermediate: a tensor (owned) and one label per dim. */
typedef struct term {
  mt_tensor *t;
  int n;
  int lab[MT_MAXDIM];
} term;

static char label_char(int l) { return l < 26 ? (char)('A' + l) : l < NLETTERS ? (char)('a' + l - 26) : '.'; }

static labelset labels_of(const term *t) {
  labelset s = 0;
  for (int i = 0; i < t->n; i++) s |= BIT(t->lab[i]);
  return s;
}

static int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  return -1;
}

/* Reads one subscript list (up to ',' or '-' or the end) into lab; *ell is
 * the position of "..." in it or -1. Returns the number of letters or -1. */
static int parse_subscripts(const char **pp, int *lab, int *ell, int which) {
  const char *p = *pp;
  int n = 0;
  *ell = -1;
  for (; *p && *p != ',' && *p != '-'; p++) {
    if (*p == ' ') continue;
    if (*p == '.') {
      if (p[1] != '.' || p[2] != '.') {
        mt_fail(MT_EARG, "einsum: a '.' in %s is not part of an ellipsis '...'",
                which < 0 ? "the output" : "the subscripts of an operand");
        return -1;
      }
      if (*ell >= 0) {
        mt_fail(MT_EARG, "einsum: more than one ellipsis '...' in one subscript list");
        return -1;
      }
      *ell = n;
      p += 2;
      continue;
    }
    int id = letter_id(*p);
    if (id < 0) {
      mt_fail(MT_EARG, "einsum: invalid subscript '%c' in the equation (subscripts are letters a-z, A-Z)", *p);
      return -1;
    }
    if (n >= MT_MAXDIM) {
      mt_fail(MT_EARG, "einsum: too many subscripts in one list (at most %d)", MT_MAXDIM);
      return -1;
    }
    lab[n++] = id;
  }
  *pp = p;
  return n;
}

/* Sums t over the dims whose labels are in mask (a product with ones). */
static mt_status sum_out(term *t, labelset mask) {
  int perm[MT_MAXDIM], nk = 0, keep_lab[MT_MAXDIM];
  int64_t keep_shape[MT_MAXDIM], inner = 1, outer = 1;
  for (int i = 0; i < t->n; i++)
    if (!(mask & BIT(t->lab[i]))) {
      perm[nk] = i;
      keep_lab[nk] = t->lab[i];
      keep_shape[nk++] = t->t->shape[i];
      outer *= t->t->shape[i];
    }
  if (nk == t->n) return MT_OK;
  for (int i = 0, j = nk; i < t->n; i++)
    if (mask & BIT(t->lab[i])) {
      perm[j++] = i;
      inner *= t->t->shape[i];
    }
  mt_tensor *p = NULL, *m = NULL, *ones = NULL, *v = NULL, *r = NULL;
  int64_t two[2] = {outer, inner};
  mt_status st = mt_permute(t->t, perm, t->n, &p);
  if (!st) st = mt_reshape(p, two, 2, &m);
  if (!st) st = mt_full(&inner, 1, mt_sint(1), (mt_dtype)t->t->dtype, mt_tdevice(t->t), &ones);
  if (!st) st = mt_mv(m, ones, &v);
  if (!st) st = mt_view(v, keep_shape, nk, &r);
  mt_release(p);
  mt_release(m);
  mt_release(ones);
  mt_release(v);
  if (st) return st;
  mt_release(t->t);
  t->t = r;
  t->n = nk;
  memcpy(t->lab, keep_lab, sizeof(int) * (size_t)nk);
  return MT_OK;
}

/* Replaces each repeated label of t by the diagonal over its dims. */
static mt_status take_diagonals(term *t, int which) {
  for (int i = 0; i < t->n; i++)
    for (int j = i + 1; j < t->n; j++) {
      if (t->lab[i] != t->lab[j]) continue;
      if (t->t->shape[i] != t->t->shape[j])
        return mt_fail(MT_ESHAPE,
                       "einsum: subscript '%c' is repeated in operand %d with different sizes (%lld and %lld)",
                       label_char(t->lab[i]), which + 1, (long long)t->t->shape[i], (long long)t->t->shape[j]);
      mt_tensor *d = NULL;
      mt_status st = mt_diagonal(t->t, 0, i, j, &d);
      if (st) return st;
      mt_release(t->t);
      t->t = d;
      int l = t->lab[i], k = 0;
      for (int q = 0; q < t->n; q++)
        if (q != i && q != j) t->lab[k++] = t->lab[q];
      t->lab[k] = l;
      t->n--;
      i = -1; /* start over: dims moved */
      break;
    }
  return MT_OK;
}

static int find(const term *t, int l) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == l) return i;
  return -1;
}

/* Broadcasts a size-1 dim of label l in t to size n (a stride-0 view). */
static mt_status expand_label(term *t, int l, int64_t n) {
  int64_t shape[MT_MAXDIM];
  memcpy(shape, t->t->shape, sizeof(int64_t) * (size_t)t->n);
  shape[find(t, l)] = n;
  mt_tensor *e = NULL;
  mt_status st = mt_expand(t->t, shape, t->n, &e);
  if (st) return st;
  mt_release(t->t);
  t->t = e;
  return MT_OK;
}

/* Contracts a and b into a (b is consumed): labels in both and in keep are
 * batch dims, labels in both but not in keep are summed, the others stay.
 * One bmm of (batch, left, sum) @ (batch, sum, right). */
static mt_status contract(term *a, term *b, labelset keep) {
  labelset both = labels_of(a) & labels_of(b);
  mt_status st;
  /* size-1 against size-n: sum such contracted labels on each side first,
   * expand such batch labels */
  for (int i = 0; i < a->n; i++) {
    int l = a->lab[i], j = find(b, l);
    if (j < 0 || a->t->shape[i] == b->t->shape[j]) continue;
    if (keep & BIT(l)) {
      st = a->t->shape[i] == 1 ? expand_label(a, l, b->t->shape[j]) : expand_label(b, l, a->t->shape[i]);
      if (st) return st;
    } else {
      if ((st = sum_out(a, BIT(l))) || (st = sum_out(b, BIT(l)))) return st;
      both &= ~BIT(l);
      i = -1;
    }
  }
  int pa[MT_MAXDIM], pb[MT_MAXDIM], na = 0, nb = 0, rl[2 * MT_MAXDIM], nr = 0;
  int64_t rs[2 * MT_MAXDIM], bsz = 1, lsz = 1, ssz = 1, rsz = 1;
  for (int i = 0; i < a->n; i++) /* batch */
    if ((both & keep) & BIT(a->lab[i])) {
      pa[na++] = i;
      pb[nb++] = find(b, a->lab[i]);
      rl[nr] = a->lab[i];
      rs[nr++] = a->t->shape[i];
      bsz *= a->t->shape[i];
    }
  for (int i = 0; i < a->n; i++) /* left */
    if (!(both & BIT(a->lab[i]))) {
      pa[na++] = i;
      rl[nr] = a->lab[i];
      rs[nr++] = a->t->shape[i];
      lsz *= a->t->shape[i];
    }
  for (int i = 0; i < a->n; i++) /* summed */
    if ((both & ~keep) & BIT(a->lab[i])) {
      pa[na++] = i;
      pb[nb++] = find(b, a->lab[i]);
      ssz *= a->t->shape[i];
    }
  for (int j = 0; j < b->n; j++) /* right */
    if (!(both & BIT(b->lab[j]))) {
      pb[nb++] = j;
      rl[nr] = b->lab[j];
      rs[nr++] = b->t->shape[j];
      rsz *= b->t->shape[j];
    }
  if (nr > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "einsum: an intermediate result would have %d dimensions (at most %d)", nr, MT_MAXDIM);
  int64_t s3a[3] = {bsz, lsz, ssz}, s3b[3] = {bsz, ssz, rsz};
  mt_tensor *ap = NULL, *bp = NULL, *a3 = NULL, *b3 = NULL, *c3 = NULL, *c = NULL;
  st = mt_permute(a->t, pa, a->n, &ap);
  if (!st) st = mt_permute(b->t, pb, b->n, &bp);
  if (!st) st = mt_reshape(ap, s3a, 3, &a3);
  if (!st) st = mt_reshape(bp, s3b, 3, &b3);
  if (!st) st = mt_bmm(a3, b3, &c3);
  if (!st) st = mt_view(c3, rs, nr, &c);
  mt_release(ap);
  mt_release(bp);
  mt_release(a3);
  mt_release(b3);
  mt_release(c3);
  if (st) return st;
  mt_release(a->t);
  a->t = c;
  a->n = nr;
  memcpy(a->lab, rl, sizeof(int) * (size_t)nr);
  return MT_OK;
}

/* Parses the equation into terms[n] (tensors retained) and the output
 * labels; checks subscript counts and sizes. */
static mt_status parse(const char *eq, mt_tensor *const *ops, int n, term *terms, int *out, int *nout) {
  int nlab[64], ells[64], max_ell = 0, count[NLABELS] = {0}, who[NLABELS];
  int64_t size[NLABELS];
  const char *p = eq;
  int k = 0, nterms = 1;
  for (const char *q = eq; *q && *q != '-'; q++) nterms += *q == ',';
  if (nterms != n)
    return mt_fail(MT_EARG, "einsum: the equation '%s' has %d operand%s but %d tensor%s given", eq, nterms,
                   nterms == 1 ? "" : "s", n, n == 1 ? " was" : "s were");
  for (;; k++) {
    int lab[MT_MAXDIM], ell;
    int m = parse_subscripts(&p, lab, &ell, k);
    if (m < 0) return MT_EARG;
    const mt_tensor *t = ops[k];
    int e = t->ndim - m;
    if ((ell < 0 && e != 0) || e < 0)
      return mt_fail(MT_ESHAPE, "einsum: operand %d has %d dimension%s but the equation gives it %d subscript%s%s",
                     k + 1, t->ndim, t->ndim == 1 ? "" : "s", m, m == 1 ? "" : "s", ell < 0 ? " and no ellipsis" : "");
    ells[k] = ell;
    nlab[k] = m;
    if (e > max_ell) max_ell = e;
    for (int i = 0; i < m; i++) terms[k].lab[i] = lab[i];
    terms[k].n = m;
    if (*p != ',') break;
    p++;
  }
  /* expand each ellipsis into labels NLETTERS.., aligned from the right */
  for (int i = 0; i < n; i++) {
    int m = nlab[i], e = ops[i]->ndim - m, lab[MT_MAXDIM];
    memcpy(lab, terms[i].lab, sizeof lab);
    int q = 0;
    for (int j = 0; j < m; j++) {
      if (j == ells[i])
        for (int d = 0; d < e; d++) terms[i].lab[q++] = NLETTERS + max_ell - e + d;
      terms[i].lab[q++] = lab[j];
    }
    if (ells[i] == m)
      for (int d = 0; d < e; d++) terms[i].lab[q++] = NLETTERS + max_ell - e + d;
    terms[i].n = q;
    for (int j = 0; j < q; j++) {
      int l = terms[i].lab[j];
      int64_t s = ops[i]->shape[j];
      if (count[l]++ == 0 || size[l] == 1) {
        size[l] = s;
        who[l] = i;
      } else if (s != size[l] && who[l] == i) {
        return mt_fail(MT_ESHAPE,
                       "einsum: subscript '%c' is repeated in operand %d with different sizes (%lld and %lld)",
                       label_char(l), i + 1, (long long)size[l], (long long)s);
      } else if (s != 1 && s != size[l]) {
        if (l < NLETTERS)
          return mt_fail(MT_ESHAPE, "einsum: subscript '%c' has size %lld in operand %d but size %lld before",
                         label_char(l), (long long)s, i + 1, (long long)size[l]);
        return mt_fail(MT_ESHAPE, "einsum: the ellipsis dimensions of operand %d (shape %s) do not broadcast", i + 1,
                       mt_shape_str(ops[i]->shape, ops[i]->ndim, (char[128]){0}, 128));
      }
    }
  }
  *nout = 0;
  if (p[0] == '-') {
    if (p[1] != '>') return mt_fail(MT_EARG, "einsum: expected '->' in the equation '%s'", eq);
    p += 2;
    int lab[MT_MAXDIM], ell;
    int m = parse_subscripts(&p, lab, &ell, -1);
    if (m < 0) return MT_EARG;
    if (*p) return mt_fail(MT_EARG, "einsum: unexpected '%c' after the output subscripts", *p);
    labelset seen = 0;
    for (int j = 0; j <= m; j++) {
      if (j == ell)
        for (int d = 0; d < max_ell; d++) out[(*nout)++] = NLETTERS + d;
      if (j == m) break;
      if (seen & BIT(lab[j]))
        return mt_fail(MT_EARG, "einsum: output subscript '%c' appears more than once", label_char(lab[j]));
      if (!count[lab[j]])
        return mt_fail(MT_EARG, "einsum: output subscript '%c' does not appear in any operand", label_char(lab[j]));
      seen |= BIT(lab[j]);
      out[(*nout)++] = lab[j];
    }
  } else { /* implicit: the ellipsis, then subscripts seen once, in order */
    for (int d = 0; d < max_ell; d++) out[(*nout)++] = NLETTERS + d;
    for (int l = 0; l < NLETTERS; l++)
      if (count[l] == 1) out[(*nout)++] = l;
  }
  if (*nout > MT_MAXDIM) return mt_fail(MT_ESHAPE, "einsum: the output would have more than %d dimensions", MT_MAXDIM);
  return MT_OK;
}

mt_status mt_einsum(const char *eq, mt_tensor *const *ops, int n, mt_tensor **out) {
  if (n < 1) return mt_fail(MT_EARG, "einsum: expected at least one operand");
  if (n > 64) return mt_fail(MT_EARG, "einsum: at most 64 operands are supported");
  for (int i = 0; i < n; i++) {
    if (ops[i]->dtype != ops[0]->dtype)
      return mt_fail(MT_EDTYPE,
                     "einsum: expected all operands to have the same dtype, got %s (operand 1) and %s "
                     "(operand %d)",
                     mt_dtype_name((mt_dtype)ops[0]->dtype), mt_dtype_name((mt_dtype)ops[i]->dtype), i + 1);
    if (ops[i]->dtype == MT_BOOL)
      return mt_fail(MT_EDTYPE, "einsum: bool tensors are not supported (convert them with :int() or :float())");
  }
  term terms[64];
  int outl[NLABELS], nout = 0;
  memset(terms, 0, sizeof(term) * (size_t)n);
  mt_status st = parse(eq, ops, n, terms, outl, &nout);
  if (st) return st;
  for (int i = 0; i < n; i++) terms[i].t = mt_retain(ops[i]);
  labelset outset = 0;
  for (int i = 0; i < nout; i++) outset |= BIT(outl[i]);
  labelset later[65]; /* labels of operands i.. */
  later[n] = 0;
  for (int i = n - 1; i >= 0; i--) later[i] = later[i + 1] | labels_of(&terms[i]);
  for (int i = 0; !st && i < n; i++) st = take_diagonals(&terms[i], i);
  term *acc = &terms[0];
  if (!st) st = sum_out(acc, ~(outset | later[1]));
  for (int i = 1; !st && i < n; i++) {
    labelset keep = outset | later[i + 1];
    st = sum_out(&terms[i], ~(keep | labels_of(acc)));
    if (!st) st = contract(acc, &terms[i], keep);
  }
  if (!st) st = sum_out(acc, ~outset);
  mt_tensor *res = NULL;
  if (!st) {
    int perm[MT_MAXDIM];
    for (int i = 0; i < nout; i++) perm[i] = find(acc, outl[i]);
    st = mt_permute(acc->t, perm, nout, &res);
  }
  if (!st) {
    bool alias = false;
    for (int i = 0; i < n; i++) alias = alias || res->storage == ops[i]->storage;
    if (*out) {
      char s1[128], s2[128];
      bool same = (*out)->ndim == res->ndim;
      for (int i = 0; same && i < res->ndim; i++) same = (*out)->shape[i] == res->shape[i];
      st = same ? mt_copy_(*out, res)
                : mt_fail(MT_ESHAPE, "einsum: output of shape %s cannot hold the result of shape %s",
                          mt_shape_str((*out)->shape, (*out)->ndim, s1, sizeof s1),
                          mt_shape_str(res->shape, res->ndim, s2, sizeof s2));
    } else if (alias || !mt_is_contiguous(res)) {
      st = mt_clone(res, out);
    } else {
      *out = mt_retain(res);
    }
  }
  mt_release(res);
  for (int i = 0; i < n; i++) mt_release(terms[i].t);
  return st;
}
