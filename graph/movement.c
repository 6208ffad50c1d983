/* movement.c -- recorded movement ops that copy (cat, stack, flip, roll,
 * tril/triu, diag, diag_embed, repeat) with their derivatives, and the
 * composites of tensor/shape.c (hstack, rot90, tile, movedim, meshgrid, ...)
 * rebuilt from recorded ops when autograd needs them. The engine runs the
 * forward; nothing here touches data. Derivatives call recorded ops only,
 * so with create_graph they are differentiated again. */
#include <stdlib.h>
#include <string.h>

#include "deriv.h"
#include "trace.h"
#include "views.h"

/* out= into a separate tensor cannot be differentiated (as in PyTorch). */
static mt_status no_out(const char *op) {
  return mt_fail(MT_EARG, "%s: out= cannot be used when an input requires grad (the result would have no "
                          "history); drop out= or use torch.no_grad()", op);
}

/* Refuses out= when the call records (rec) or when out itself is in a graph. */
static mt_status check_out(const char *op, bool rec, mt_tensor *const *out) {
  if (*out && (rec || (mtg_grad_enabled() && mtg_requires_grad(*out)))) return no_out(op);
  return MT_OK;
}

/* Hands out r (a new result) on success, releases it on failure. */
static mt_status finish(mt_status st, mt_tensor *r, mt_tensor **out) {
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

/* Tracks *r in s, set by the call that returned st (read through a pointer,
 * so the read happens after the call: C leaves argument order open). */
static mt_tensor *tracked(mtg_scope *s, mt_status st, mt_tensor **r) { return mtg_track(s, st, *r); }

/* ---- recorded ops inside a derivative scope (results tracked by s) ---- */

static mt_tensor *Dm_slice(mtg_scope *s, const mt_tensor *x, int d, int64_t start, int64_t stop) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_slice(x, d, start, stop, 1, &r), &r);
}

static mt_tensor *Dm_select(mtg_scope *s, const mt_tensor *x, int d, int64_t i) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_select(x, d, i, &r), &r);
}

static mt_tensor *Dm_diagonal(mtg_scope *s, const mt_tensor *x, int64_t off, int d0, int d1) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_diagonal(x, off, d0, d1, &r), &r);
}

/* ---- cat and stack ---- */

/* cat: input j gets its slice of g along dim i[0]. 1-D empty inputs that
 * cat skipped (when the others are not 1-D) get no gradient. Each input
 * has its own scope: cat may have many inputs. */
static mt_status d_cat(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  int d = (int)n->i[0];
  int64_t off = 0;
  for (int j = 0; j < n->nin; j++) {
    const mtg_meta_shape *m = &n->in[j];
    if (m->ndim == 1 && m->shape[0] == 0 && n->out[0].ndim != 1) continue;
    int64_t len = m->shape[d];
    if (mtg_needs(n, j)) {
      mtg_scope S, *s = &S;
      mtg_scope_begin(s, n);
      gin[j] = mtg_d_grad_for(s, j, Dm_slice(s, go[0], d, off, off + len));
      mt_status st = mtg_scope_end(s, gin + j, 1);
      if (st) return st;
    }
    off += len;
  }
  return MT_OK;
}

/* stack: input j gets g's slice j along the new dim i[0]. */
static mt_status d_stack(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  int d = (int)n->i[0];
  for (int j = 0; j < n->nin; j++) {
    if (!mtg_needs(n, j)) continue;
    mtg_scope S, *s = &S;
    mtg_scope_begin(s, n);
    gin[j] = mtg_d_grad_for(s, j, Dm_select(s, go[0], d, j));
    mt_status st = mtg_scope_end(s, gin + j, 1);
    if (st) return st;
  }
  return MT_OK;
}

/* Records the result r of cat or stack (dim d, already wrapped) of ts. */
static mt_status record_join(mt_op op, mtg_backward_fn fn, mt_tensor *const *ts, int n, int d, mt_tensor *r) {
  mtg_node *nd = NULL;
  mt_status st = mtg_node_new(mtg_backward_name(op), fn, (const mt_tensor *const *)ts, n, &r, 1, &nd);
  if (st) return st;
  nd->i[0] = d;
  return mtg_attach(nd, &r, 1);
}

/* The dim cat used: wrapped against the first input that is not 1-D empty. */
static int cat_dim(mt_tensor *const *ts, int n, int64_t dim) {
  const mt_tensor *ref = ts[0];
  for (int i = 0; i < n; i++)
    if (!(ts[i]->ndim == 1 && ts[i]->shape[0] == 0)) {
      ref = ts[i];
      break;
    }
  return (int)(dim < 0 ? dim + ref->ndim : dim);
}

mt_status mtg_cat(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) {
  bool rec = n > 0 && mtg_any_requires_grad((const mt_tensor *const *)ts, n);
  mt_status st = check_out("cat", rec, out);
  if (st) return st;
  if (!rec) return mt_cat(ts, n, dim, out);
  mt_tensor *r = NULL;
  st = mt_cat(ts, n, dim, &r);
  if (!st) st = record_join(MT_OP_cat, d_cat, ts, n, cat_dim(ts, n, dim), r);
  return finish(st, r, out);
}

mt_status mtg_stack(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) {
  bool rec = n > 0 && mtg_any_requires_grad((const mt_tensor *const *)ts, n);
  mt_status st = check_out("stack", rec, out);
  if (st) return st;
  if (!rec) return mt_stack(ts, n, dim, out);
  mt_tensor *r = NULL;
  st = mt_stack(ts, n, dim, &r);
  if (!st) st = record_join(MT_OP_stack, d_stack, ts, n, (int)(dim < 0 ? dim + r->ndim : dim), r);
  return finish(st, r, out);
}

/* hstack, vstack, dstack: the engine computes the result (with its checks
 * and messages); it is recorded as the cat of the inputs raised to rank
 * dims by recorded reshapes, along dim (dim < 0: dim 1, or 0 for 1-D). */
static mt_status cat_atleast(const char *op, mt_tensor *const *ts, int n, int rank, int dim, mt_tensor **out,
                             mt_status (*plain)(mt_tensor *const *, int, mt_tensor **)) {
  bool rec = n > 0 && mtg_any_requires_grad((const mt_tensor *const *)ts, n);
  mt_status st = check_out(op, rec, out);
  if (st) return st;
  if (!rec) return plain(ts, n, out);
  mt_tensor *r = NULL;
  if ((st = plain(ts, n, &r))) return st;
  mt_tensor *tmp[16] = {0}, **v = n <= 16 ? tmp : calloc((size_t)n, sizeof *v);
  if (!v) st = mt_fail(MT_ENOMEM, "%s: out of memory", op);
  for (int i = 0; i < n && !st; i++) st = mtg_atleast(ts[i], rank, &v[i]);
  if (!st) st = record_join(MT_OP_cat, d_cat, v, n, dim >= 0 ? dim : v[0]->ndim == 1 ? 0 : 1, r);
  for (int i = 0; v && i < n; i++) mt_release(v[i]);
  if (v != tmp) free(v);
  return finish(st, r, out);
}

mt_status mtg_hstack(mt_tensor *const *ts, int n, mt_tensor **out) {
  return cat_atleast("hstack", ts, n, 1, -1, out, mt_hstack);
}
mt_status mtg_vstack(mt_tensor *const *ts, int n, mt_tensor **out) {
  return cat_atleast("vstack", ts, n, 2, 0, out, mt_vstack);
}
mt_status mtg_dstack(mt_tensor *const *ts, int n, mt_tensor **out) {
  return cat_atleast("dstack", ts, n, 3, 2, out, mt_dstack);
}

/* ---- flip, roll, rot90 ---- */

/* flip: g flipped back along the same dims (i[0] = count, i[1..] dims). */
static mt_status d_flip(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  int dims[MT_MAXDIM], k = (int)n->i[0];
  for (int j = 0; j < k; j++) dims[j] = (int)n->i[1 + j];
  return mtg_flip(go[0], dims, k, &gin[0]);
}

mt_status mtg_flip(const mt_tensor *t, const int *dims, int n, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("flip", rec, out);
  if (st) return st;
  if (!rec) return mt_flip(t, dims, n, out);
  mt_tensor *r = NULL;
  st = mt_flip(t, dims, n, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(MT_OP_flip), d_flip, ins, 1, r, &st);
  if (nd) { /* mt_flip accepted them: at most ndim distinct dims (or dim 0 of a 0-dim tensor) */
    nd->i[0] = n < MT_MAXDIM ? n : MT_MAXDIM;
    for (int j = 0; j < nd->i[0]; j++) nd->i[1 + j] = dims[j];
  }
  return finish(st, r, out);
}

/* roll: g rolled back (i[0] = count, 0 for the flattened roll; i[1..8]
 * shifts, reduced modulo the size so they can be negated; i[9..16] dims). */
static mt_status d_roll(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  int k = (int)n->i[0], dims[MT_MAXDIM];
  int64_t shifts[MT_MAXDIM];
  for (int j = 0; j < (k ? k : 1); j++) {
    shifts[j] = -n->i[1 + j];
    dims[j] = (int)n->i[9 + j];
  }
  return mtg_roll(go[0], shifts, dims, k, &gin[0]);
}

mt_status mtg_roll(const mt_tensor *t, const int64_t *shifts, const int *dims, int n, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("roll", rec, out);
  if (st) return st;
  if (!rec) return mt_roll(t, shifts, dims, n, out);
  mt_tensor *r = NULL;
  st = mt_roll(t, shifts, dims, n, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(MT_OP_roll), d_roll, ins, 1, r, &st);
  if (nd) {
    int k = n < MT_MAXDIM ? n : MT_MAXDIM;
    nd->i[0] = k;
    for (int j = 0; j < (k ? k : 1); j++) {
      int64_t size = k ? t->shape[dims[j]] : mt_numel(t);
      nd->i[1 + j] = size ? shifts[j] % size : 0;
      nd->i[9 + j] = k ? dims[j] : 0;
    }
  }
  return finish(st, r, out);
}

/* rot90 as tensor/shape.c computes it, from recorded flips and a transpose
 * (made contiguous, like the engine's result). */
mt_status mtg_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("rot90", rec, out);
  if (st) return st;
  mt_tensor *chk = NULL;
  if (!rec) return mt_rot90(t, k, d0, d1, out);
  if ((st = mt_rot90(t, k, d0, d1, &chk))) return st; /* the engine's checks and messages */
  mt_release(chk);
  k = ((k % 4) + 4) % 4;
  int both[2] = {d0, d1};
  mt_tensor *f = NULL, *tr = NULL;
  if (k == 0) return mtg_clone(t, out);
  if (k == 2) return mtg_flip(t, both, 2, out);
  st = mtg_flip(t, k == 1 ? &d1 : &d0, 1, &f);
  if (!st) st = mtg_transpose(f, d0, d1, &tr);
  if (!st) st = mtg_contiguous(tr, out);
  mt_release(f);
  mt_release(tr);
  return st;
}

/* ---- triangles and diagonals ---- */

static mt_status d_tril(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  return mtg_tril(go[0], n->i[0], &gin[0]);
}

static mt_status d_triu(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  return mtg_triu(go[0], n->i[0], &gin[0]);
}

/* tril / triu, also in place (*out == t): the node replaces t's history
 * (through CopySlices when t is a view). */
static mt_status tri(mt_op op, mtg_backward_fn fn, const mt_tensor *t, int64_t k, mt_tensor **out) {
  mt_status (*run)(const mt_tensor *, int64_t, mt_tensor **) = op == MT_OP_tril ? mt_tril : mt_triu;
  const char *name = mt_ops[op].name;
  const mt_tensor *ins[1] = {t};
  bool inplace = *out && *out == t;
  bool rec = mtg_any_requires_grad(ins, 1) || (inplace && mtg_grad_enabled() && t->base && mtg_requires_grad(t->base));
  mt_status st = MT_OK;
  if (inplace) {
    mt_tensor *x = *out;
    if ((st = mtg_check_inplace(name, x)) || (x->base && (st = mtg_check_inplace(name, x->base)))) return st;
    if (!rec) return run(t, k, out);
    mtg_node *f = NULL;
    if ((st = mtg_node_new(mtg_backward_name(op), fn, ins, 1, &x, 1, &f))) return st;
    f->i[0] = k;
    if ((st = run(t, k, out))) {
      mtg_node_release(f);
      return st;
    }
    return mtg_attach_inplace(f, x);
  }
  if ((st = check_out(name, rec, out))) return st;
  if (!rec) return run(t, k, out);
  mt_tensor *r = NULL;
  st = run(t, k, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(op), fn, ins, 1, r, &st);
  if (nd) nd->i[0] = k;
  return finish(st, r, out);
}

mt_status mtg_tril(const mt_tensor *t, int64_t diagonal, mt_tensor **out) {
  return tri(MT_OP_tril, d_tril, t, diagonal, out);
}
mt_status mtg_triu(const mt_tensor *t, int64_t diagonal, mt_tensor **out) {
  return tri(MT_OP_triu, d_triu, t, diagonal, out);
}

/* diag: a 1-D input gets the diagonal i[0] of g; a 2-D one gets zeros with
 * g written into that diagonal. */
static mt_status d_diag(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  if (n->in[0].ndim == 1) return mtg_diagonal(go[0], n->i[0], 0, 1, &gin[0]);
  int64_t a[MTG_NARGS] = {MT_OP_diagonal, n->i[0], 0, 1};
  return mtg_view_scatter(&n->in[0], a, go[0], &gin[0]);
}

mt_status mtg_diag(const mt_tensor *t, int64_t diagonal, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("diag", rec, out);
  if (st) return st;
  if (!rec) return mt_diag(t, diagonal, out);
  mt_tensor *r = NULL;
  st = mt_diag(t, diagonal, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(MT_OP_diag), d_diag, ins, 1, r, &st);
  if (nd) nd->i[0] = diagonal;
  return finish(st, r, out);
}

/* diag_embed: the diagonal (i[0], in dims i[1], i[2]) of g, which is how
 * the engine wrote the input there. */
static mt_status d_diag_embed(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  gin[0] = mtg_d_grad_for(s, 0, Dm_diagonal(s, go[0], n->i[0], (int)n->i[1], (int)n->i[2]));
  return mtg_scope_end(s, gin, n->nin);
}

mt_status mtg_diag_embed(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("diag_embed", rec, out);
  if (st) return st;
  if (!rec) return mt_diag_embed(t, offset, d0, d1, out);
  mt_tensor *r = NULL;
  st = mt_diag_embed(t, offset, d0, d1, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(MT_OP_diag_embed), d_diag_embed, ins, 1, r, &st);
  if (nd) {
    nd->i[0] = offset;
    nd->i[1] = d0;
    nd->i[2] = d1;
  }
  return finish(st, r, out);
}

/* ---- repeat and tile ---- */

/* The sum of the reps blocks of size ps along dim d of g, one slice at a
 * time (for rank-8 results, which cannot be split into one more dim). */
static mt_tensor *block_sum(mtg_scope *s, const mt_tensor *g, int d, int64_t reps, int64_t ps) {
  if (s->st || !g) return NULL;
  mt_tensor *acc = NULL;
  mt_status st = MT_OK;
  if (reps == 0) {
    int64_t sh[MT_MAXDIM];
    memcpy(sh, g->shape, sizeof sh);
    sh[d] = ps;
    st = mt_zeros(sh, g->ndim, (mt_dtype)g->dtype, mt_tdevice(g), &acc);
    if (!st) mtg_trace_full(acc, 0);
  }
  for (int64_t j = 0; j < reps && !st; j++) {
    mt_tensor *p = NULL, *q = NULL;
    st = mtg_slice(g, d, j * ps, (j + 1) * ps, 1, &p);
    if (!st && acc) {
      st = mtg_binary(MT_OP_add, acc, p, &q);
      mt_release(p);
      mt_release(acc);
      acc = q;
    } else if (!st) {
      acc = p;
    }
  }
  return mtg_track(s, st, acc);
}

/* repeat: each dim d of g (i[0] dims, counts i[1..]) is split into
 * (count, size) and summed over the count; then reshaped to the input. */
static mt_status d_repeat(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  const mtg_meta_shape *m = &n->in[0];
  int nr = (int)n->i[0], lead = nr - m->ndim;
  mt_tensor *cur = (mt_tensor *)go[0];
  int64_t sh[MT_MAXDIM + 1];
  memcpy(sh, go[0]->shape, sizeof go[0]->shape);
  for (int d = 0; d < nr && cur; d++) {
    int64_t reps = n->i[1 + d], ps = d < lead ? 1 : m->shape[d - lead];
    if (reps == 1) continue;
    if (nr < MT_MAXDIM) {
      int64_t split[MT_MAXDIM + 1];
      for (int j = 0, k = 0; j < nr; j++) {
        if (j == d) {
          split[k++] = reps;
          split[k++] = ps;
        } else {
          split[k++] = sh[j];
        }
      }
      cur = mtg_d_sum(s, mtg_d_reshape(s, cur, split, nr + 1), &d, 1, false);
    } else {
      cur = block_sum(s, cur, d, reps, ps);
    }
    sh[d] = ps;
  }
  gin[0] = mtg_keep(s, mtg_d_reshape(s, cur, m->shape, m->ndim));
  return mtg_scope_end(s, gin, n->nin);
}

/* Records r = t repeated by reps[0..nr) (nr >= t's rank). */
static mt_status record_repeat(const mt_tensor *t, const int64_t *reps, int nr, mt_tensor *r) {
  const mt_tensor *ins[1] = {t};
  mt_status st;
  mtg_node *nd = mtg_record1(mtg_backward_name(MT_OP_repeat), d_repeat, ins, 1, r, &st);
  if (nd) {
    nd->i[0] = nr;
    for (int j = 0; j < nr; j++) nd->i[1 + j] = reps[j];
  }
  return st;
}

mt_status mtg_repeat(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("repeat", rec, out);
  if (st) return st;
  if (!rec) return mt_repeat(t, reps, n, out);
  mt_tensor *r = NULL;
  st = mt_repeat(t, reps, n, &r);
  if (!st) st = record_repeat(t, reps, n, r);
  return finish(st, r, out);
}

mt_status mtg_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out("tile", rec, out);
  if (st) return st;
  if (!rec) return mt_tile(t, reps, n, out);
  mt_tensor *r = NULL;
  st = mt_tile(t, reps, n, &r);
  if (!st) { /* numpy rule: fewer counts than dims are padded with leading 1s */
    int64_t p[MT_MAXDIM];
    int lead = t->ndim > n ? t->ndim - n : 0;
    for (int j = 0; j < n + lead; j++) p[j] = j < lead ? 1 : reps[j - lead];
    st = record_repeat(t, p, n + lead, r);
  }
  return finish(st, r, out);
}

/* ---- views built from recorded views ---- */

mt_status mtg_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out) {
  if (!t->autograd) return mt_movedim(t, src, dst, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_movedim(t, src, dst, n, &chk); /* the engine's checks and messages */
  if (st) return st;
  mt_release(chk);
  int nd = t->ndim, perm[MT_MAXDIM];
  bool used[MT_MAXDIM] = {0};
  for (int i = 0; i < nd; i++) perm[i] = -1;
  for (int i = 0; i < n && nd; i++) {
    perm[dst[i]] = src[i];
    used[src[i]] = true;
  }
  for (int p = 0, j = 0; p < nd; p++) {
    if (perm[p] >= 0) continue;
    while (used[j]) j++;
    perm[p] = j++;
  }
  return mtg_permute(t, perm, nd, out);
}

/* squeeze and unflatten change only the shape: a recorded view of t with
 * the shape the engine computed. */
mt_status mtg_squeeze_dims(const mt_tensor *t, const int *dims, int n, mt_tensor **out) {
  if (!t->autograd) return mt_squeeze_dims(t, dims, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_squeeze_dims(t, dims, n, &chk);
  if (!st) st = mtg_view(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out) {
  if (!t->autograd) return mt_unflatten(t, dim, sizes, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_unflatten(t, dim, sizes, n, &chk);
  if (!st) st = mtg_view(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_atleast(const mt_tensor *t, int rank, mt_tensor **out) {
  if (!t->autograd || t->ndim >= rank) return mt_atleast(t, rank, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_atleast(t, rank, &chk);
  if (!st) st = mtg_reshape(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out) {
  if (!t->autograd) return mt_broadcast_to(t, shape, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_broadcast_to(t, shape, n, &chk);
  if (!st) st = mtg_expand(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

/* meshgrid: each input reshaped to its axis of the grid, then expanded. */
mt_status mtg_meshgrid(mt_tensor *const *ts, int n, bool xy, mt_tensor **outs) {
  mt_status st = mt_meshgrid(ts, n, xy, outs); /* the engine's checks, and the result when not recording */
  if (st || !mtg_any_requires_grad((const mt_tensor *const *)ts, n)) return st;
  int64_t shape[MT_MAXDIM];
  for (int i = 0; i < n; i++) shape[i] = outs[0]->shape[i];
  for (int i = 0; i < n; i++) {
    mt_release(outs[i]);
    outs[i] = NULL;
  }
  for (int i = 0; i < n && !st; i++) {
    int pos = xy && n >= 2 && i < 2 ? 1 - i : i;
    int64_t sh[MT_MAXDIM];
    for (int j = 0; j < n; j++) sh[j] = j == pos ? shape[pos] : 1;
    mt_tensor *r = NULL;
    st = mtg_reshape(ts[i], sh, n, &r);
    if (!st) st = mtg_expand(r, shape, n, &outs[i]);
    mt_release(r);
  }
  if (st)
    for (int i = 0; i < n; i++) {
      mt_release(outs[i]);
      outs[i] = NULL;
    }
  return st;
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_cat] = {d_cat, 0},   [MT_OP_stack] = {d_stack, 0}, [MT_OP_flip] = {d_flip, 0},
    [MT_OP_roll] = {d_roll, 0}, [MT_OP_tril] = {d_tril, 0},   [MT_OP_triu] = {d_triu, 0},
    [MT_OP_diag] = {d_diag, 0}, [MT_OP_diag_embed] = {d_diag_embed, 0}, [MT_OP_repeat] = {d_repeat, 0},
};

const mtg_deriv *mtg_deriv_movement(mt_op op) { return table[op].fn ? &table[op] : NULL; }
