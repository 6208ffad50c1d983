/* movement.c -- the derivatives of the movement ops that copy (cat, stack,
 * flip, roll, tril/triu, diag, diag_embed, repeat), which the generic path
 * records (call.c; args as tensor/call.c lays them out), mtg_join (cat and
 * stack), and the composites of tensor/shape.c (hstack, rot90, tile,
 * movedim, meshgrid, ...) rebuilt from recorded ops when autograd needs
 * them. The engine runs the forward; nothing here touches data.
 * Derivatives call recorded ops only, so with create_graph they are
 * differentiated again. */
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

/* Runs op through the generic path with the arguments of node n (a
 * derivative calling the op it differentiates, or its inverse). */
static mt_status call_as(mt_op op, const mtg_node *n, const mt_tensor *x, mt_tensor **out) {
  mt_args a = {.ni = MTG_NARGS};
  memcpy(a.i, n->i, sizeof a.i < sizeof n->i ? sizeof a.i : sizeof n->i);
  return mtg_call(op, &x, 1, &a, out, 1);
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

/* The dim cat uses: wrapped against the first input that is not 1-D empty. */
static int64_t cat_dim(mt_tensor *const *ts, int n, int64_t dim) {
  const mt_tensor *ref = ts[0];
  for (int i = 0; i < n; i++)
    if (!(ts[i]->ndim == 1 && ts[i]->shape[0] == 0)) {
      ref = ts[i];
      break;
    }
  return dim < 0 ? dim + ref->ndim : dim;
}

mt_status mtg_join(mt_op op, mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out) {
  mt_args a = {.i = {n > 0 && dim < 0 ? (op == MT_OP_cat ? cat_dim(ts, n, dim) : dim + ts[0]->ndim + 1) : dim},
               .ni = 1};
  if (n > 0 && a.i[0] < 0) a.i[0] = dim; /* out of range: the engine's message names the dim given */
  return mtg_call(op, (const mt_tensor *const *)ts, n, &a, out, 1);
}

/* hstack, vstack, dstack: the engine's when nothing records; else the cat
 * of the inputs raised to rank dims by recorded reshapes, along dim (dim <
 * 0: dim 1, or 0 for 1-D), with the engine's message when that fails. */
static mt_status cat_atleast(const char *op, mt_tensor *const *ts, int n, int rank, int dim, mt_tensor **out,
                             mt_status (*plain)(mt_tensor *const *, int, mt_tensor **)) {
  bool rec = n > 0 && mtg_any_requires_grad((const mt_tensor *const *)ts, n);
  if (!rec) return plain(ts, n, out);
  if (*out) return no_out(op);
  mt_tensor *tmp[16] = {0}, **v = n <= 16 ? tmp : calloc((size_t)n, sizeof *v);
  mt_status st = v ? MT_OK : mt_fail(MT_ENOMEM, "%s: out of memory", op);
  for (int i = 0; i < n && !st; i++) st = mtg_atleast(ts[i], rank, &v[i]);
  if (!st) st = mtg_join(MT_OP_cat, v, n, dim >= 0 ? dim : v[0]->ndim == 1 ? 0 : 1, out);
  for (int i = 0; v && i < n; i++) mt_release(v[i]);
  if (v != tmp) free(v);
  if (st) { /* the engine's checks and messages */
    mt_tensor *chk = NULL;
    mt_status st2 = plain(ts, n, &chk);
    mt_release(chk);
    if (st2) return st2;
  }
  return st;
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
  return call_as(MT_OP_flip, n, go[0], &gin[0]);
}

/* roll: g rolled back (i[0] = count, 0 for the flattened roll; i[1..8]
 * shifts, negated after reducing them modulo the size; i[9..16] dims). */
static mt_status d_roll(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  const mtg_meta_shape *m = &n->in[0];
  int k = (int)n->i[0];
  mt_args a = {.ni = 17};
  memcpy(a.i, n->i, 17 * sizeof *a.i);
  for (int j = 0; j < (k ? k : 1) && j < MT_MAXDIM; j++) {
    int64_t size = 1;
    if (k)
      size = m->shape[n->i[9 + j]];
    else
      for (int d = 0; d < m->ndim; d++) size *= m->shape[d];
    a.i[1 + j] = size ? -(n->i[1 + j] % size) : 0;
  }
  return mtg_call(MT_OP_roll, (const mt_tensor *const *)go, 1, &a, &gin[0], 1);
}

/* rot90 as tensor/shape.c computes it, from recorded flips and a transpose
 * (made contiguous, like the engine's result). */
mt_status mtg_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  if (!mtg_any_requires_grad(ins, 1)) return mt_rot90(t, k, d0, d1, out);
  if (*out) return no_out("rot90");
  mt_tensor *chk = NULL;
  mt_status st;
  if ((st = mt_rot90(t, k, d0, d1, &chk))) return st; /* the engine's checks and messages */
  mt_release(chk);
  k = ((k % 4) + 4) % 4;
  mt_tensor *f = NULL, *tr = NULL;
  if (k == 0) return mtg_clone(t, out);
  mt_args a = {.i = {2, d0, d1}, .ni = 3};
  if (k == 2) return mtg_call(MT_OP_flip, &t, 1, &a, out, 1);
  a.i[0] = 1;
  a.i[1] = k == 1 ? d1 : d0;
  st = mtg_call(MT_OP_flip, &t, 1, &a, &f, 1);
  if (!st) st = mtg_transpose(f, d0, d1, &tr);
  if (!st) st = mtg_contiguous(tr, out);
  mt_release(f);
  mt_release(tr);
  return st;
}

/* ---- triangles and diagonals ---- */

static mt_status d_tril(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  return call_as(MT_OP_tril, n, go[0], &gin[0]);
}

static mt_status d_triu(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  return call_as(MT_OP_triu, n, go[0], &gin[0]);
}

/* diag: a 1-D input gets the diagonal i[0] of g; a 2-D one gets zeros with
 * g written into that diagonal. */
static mt_status d_diag(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  if (n->in[0].ndim == 1) return mtg_diagonal(go[0], n->i[0], 0, 1, &gin[0]);
  int64_t a[MTG_NARGS] = {MT_OP_diagonal, n->i[0], 0, 1};
  return mtg_view_scatter(&n->in[0], a, go[0], &gin[0]);
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

/* tile: the engine's when nothing records, else repeat with the counts
 * padded with leading 1s to t's rank (numpy's rule) */
mt_status mtg_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out) {
  const mt_tensor *ins[1] = {t};
  if (!mtg_any_requires_grad(ins, 1)) return mt_tile(t, reps, n, out);
  if (*out) return no_out("tile");
  if (n > MT_MAXDIM || n < 0) return mt_tile(t, reps, n, out); /* the engine's message */
  int lead = t->ndim > n ? t->ndim - n : 0;
  mt_args a = {.i = {n + lead}, .ni = 1 + n + lead};
  for (int j = 0; j < n + lead; j++) a.i[1 + j] = j < lead ? 1 : reps[j - lead];
  return mtg_call(MT_OP_repeat, ins, 1, &a, out, 1);
}

/* ---- views built from recorded views ----
 * (recorded too while torch.compile traces, so that the JIT replays them) */

mt_status mtg_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out) {
  if (!t->autograd && !MTG_TRACING()) return mt_movedim(t, src, dst, n, out);
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
  if (!t->autograd && !MTG_TRACING()) return mt_squeeze_dims(t, dims, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_squeeze_dims(t, dims, n, &chk);
  if (!st) st = mtg_view(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out) {
  if (!t->autograd && !MTG_TRACING()) return mt_unflatten(t, dim, sizes, n, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_unflatten(t, dim, sizes, n, &chk);
  if (!st) st = mtg_view(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_atleast(const mt_tensor *t, int rank, mt_tensor **out) {
  if ((!t->autograd && !MTG_TRACING()) || t->ndim >= rank) return mt_atleast(t, rank, out);
  mt_tensor *chk = NULL;
  mt_status st = mt_atleast(t, rank, &chk);
  if (!st) st = mtg_reshape(t, chk->shape, chk->ndim, out);
  mt_release(chk);
  return st;
}

mt_status mtg_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out) {
  if (!t->autograd && !MTG_TRACING()) return mt_broadcast_to(t, shape, n, out);
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
