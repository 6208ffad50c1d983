/* nn.c -- recorded convolution, pooling and normalization ops (tensor/nn.h)
 * and their derivatives. A forward op's derivative calls the engine's
 * backward op, recorded here too, so create_graph differentiates through
 * it: the conv and pool backward ops are linear in their gradient input and
 * have derivatives of their own (their adjoints). The normalization backward
 * ops have none (derivatives.c says why): under create_graph the norms'
 * derivatives are written with recorded ops instead.
 * Node arguments: the op's options struct copied into n->i (see each op). */
#include <stddef.h>
#include <string.h>

#include "deriv.h"
#include "trace.h"

_Static_assert(sizeof(mt_conv_opts) <= sizeof(((mtg_node *)0)->i), "conv options fit a node's arguments");
_Static_assert(sizeof(mt_pool_words) - 5 * sizeof(int64_t) <= sizeof(((mtg_node *)0)->i),
               "pool options and nsp fit a node's arguments");

/* ---- recording ---- */

/* out= into a given tensor cannot be differentiated (as in PyTorch). nsp > 0
 * names the op as the user called it ("conv2d" for convolution). */
static mt_status no_out_nd(mt_op op, int nsp) {
  const char *name = mt_ops[op].name;
  if (op == MT_OP_convolution) name = "conv";
  return mt_fail(MT_EARG,
                 "%s%.0d%s: out= cannot be used when an input requires grad (the result would have no "
                 "history); drop out= or use torch.no_grad()",
                 name, nsp, nsp > 0 ? "d" : "");
}

static mt_status no_out(mt_op op) { return no_out_nd(op, 0); }
_Static_assert(sizeof(mt_conv_opts) <= 16 * sizeof(int64_t), "conv options fit the args' first 16 words");

/* Makes the node `name` for inputs ins[0..nin) (NULL: no gradient) and
 * outputs outs[0..nout) (NULL: carries none), copies nargs bytes of args
 * into n->i and f into n->f[0], saves saves[k] (inputs or statistics, never
 * attached outputs) in slot k, and attaches the outputs. */
static mt_status record(const char *name, mtg_backward_fn fn, const mt_tensor *const *ins, int nin,
                        mt_tensor *const *outs, int nout, const mt_tensor *const *saves, const void *args, size_t nargs,
                        double f) {
  mtg_node *n = NULL;
  mt_status st = mtg_node_new(name, fn, ins, nin, outs, nout, &n);
  if (st) return st;
  if (nargs) memcpy(n->i, args, nargs);
  n->f[0] = f;
  for (int k = 0; k < MTG_MAXSAVED && !st; k++)
    if (saves && saves[k]) st = mtg_save(n, k, saves[k], false, 0);
  if (st) {
    mtg_node_release(n);
    return st;
  }
  return mtg_attach(n, outs, nout);
}

/* Hands r over to *out, or releases it on error. */
static mt_status finish(mt_status st, mt_tensor *r, mt_tensor **out) {
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

/* ---- derivative scope helpers for this family ---- */

#define LIVE(s) ((s)->st == MT_OK)

/* Saved slot k, or NULL without error when nothing was saved there (an
 * optional weight). A released node still reports its error. */
static mt_tensor *saved_opt(mtg_scope *s, int k) {
  if (!LIVE(s) || (!s->node->released && !s->node->saved[k].t)) return NULL;
  return mtg_d_saved(s, k);
}

static void conv_opts_of(const mtg_node *n, mt_conv_opts *o) { memcpy(o, n->i, sizeof *o); }
static void pool_opts_of(const mtg_node *n, mt_pool_opts *o) { memcpy(o, n->i, sizeof *o); }

static mt_tensor *Dn_conv(mtg_scope *s, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                          const mt_conv_opts *o) {
  if (!LIVE(s) || !x || !w) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_conv(MT_OP_convolution, x, w, b, o, NULL, 0, &r, 1);
  return mtg_track(s, st, r);
}

static mt_tensor *Dn_conv_input(mtg_scope *s, const mt_tensor *g, const mt_tensor *w, const mtg_meta_shape *m,
                                const mt_conv_opts *o) {
  if (!LIVE(s) || !g || !w) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_conv(MT_OP_conv_backward_input, g, w, NULL, o, m->shape, m->ndim, &r, 1);
  return mtg_track(s, st, r);
}

/* Weight gradient (and bias gradient when gb is not NULL), both tracked. */
static mt_tensor *Dn_conv_weight(mtg_scope *s, const mt_tensor *g, const mt_tensor *x, const mtg_meta_shape *m,
                                 const mt_conv_opts *o, mt_tensor **gb) {
  if (!LIVE(s) || !g || !x) return NULL;
  mt_tensor *r[2] = {NULL, NULL};
  mt_status st = mtg_conv(MT_OP_conv_backward_weight, g, x, NULL, o, m->shape, m->ndim, r, gb ? 2 : 1);
  if (gb) *gb = mtg_track(s, st, r[1]);
  return mtg_track(s, st, r[0]);
}

/* g summed over every dim but the channel dim (the bias gradient); nsp
 * spatial dims follow the channel dim. */
static mt_tensor *channel_sum(mtg_scope *s, const mt_tensor *g, int nsp) {
  if (!LIVE(s) || !g) return NULL;
  int dims[MT_MAXDIM], nd = 0, c = g->ndim - nsp - 1;
  for (int i = 0; i < g->ndim; i++)
    if (i != c) dims[nd++] = i;
  return mtg_d_sum(s, g, dims, nd, false);
}

/* ---- convolution ----
 * Recorded by the generic path (call.c; mtg_conv packs the args: i[0..16)
 * the mt_conv_opts, the backward ops' shape after them). Each op saves
 * its first two operands (slots 0 and 1). */

static mt_status d_convolution(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_conv_opts o;
  conv_opts_of(n, &o);
  mt_tensor *x = mtg_d_saved(s, 0), *w = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_conv_input(s, go[0], w, &n->in[0], &o));
  if (mtg_needs(n, 1)) {
    mt_tensor *gb = NULL;
    gin[1] = mtg_keep(s, Dn_conv_weight(s, go[0], x, &n->in[1], &o, mtg_needs(n, 2) ? &gb : NULL));
    if (mtg_needs(n, 2)) gin[2] = mtg_keep(s, gb);
  } else if (mtg_needs(n, 2)) {
    gin[2] = mtg_keep(s, channel_sum(s, go[0], n->in[1].ndim - 2));
  }
  return mtg_scope_end(s, gin, n->nin);
}

/* y = conv_backward_input(a, w) (+ bias) is linear in a and in w: <gg, y> =
 * <conv(gg, w), a>, so d a = conv(gg, w) and d w = conv_backward_weight(a, gg).
 * Serves conv_backward_input (a = g) and conv_transpose (a = x, input 2 the
 * bias, whose gradient is gg summed per channel). */
static mt_status d_transposed(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_conv_opts o;
  conv_opts_of(n, &o);
  mt_tensor *a = mtg_d_saved(s, 0), *w = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_conv(s, go[0], w, NULL, &o));
  if (mtg_needs(n, 1)) gin[1] = mtg_keep(s, Dn_conv_weight(s, a, go[0], &n->in[1], &o, NULL));
  if (n->nin > 2 && mtg_needs(n, 2)) gin[2] = mtg_keep(s, channel_sum(s, go[0], n->in[1].ndim - 2));
  return mtg_scope_end(s, gin, n->nin);
}

/* (gw, gb) = conv_backward_weight(g, x): <ggw, gw> + <ggb, gb> =
 * <conv(x, ggw) + ggb, g>, so d g = conv(x, ggw, ggb) and d x =
 * conv_backward_input(g, ggw). Output 1 (gb) exists when nout == 2. */
static mt_status d_conv_backward_weight(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_conv_opts o;
  conv_opts_of(n, &o);
  mt_tensor *g = mtg_d_saved(s, 0), *x = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_conv(s, x, go[0], n->nout > 1 ? go[1] : NULL, &o));
  if (mtg_needs(n, 1)) gin[1] = mtg_keep(s, Dn_conv_input(s, g, go[0], &n->in[1], &o));
  return mtg_scope_end(s, gin, n->nin);
}

mt_status mtg_conv(mt_op op, const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, const mt_conv_opts *o,
                   const int64_t *shape, int ndim, mt_tensor **outs, int nout) {
  bool fwd = op == MT_OP_convolution || op == MT_OP_conv_transpose;
  const mt_tensor *ins[3] = {a, b, bias};
  int nin = fwd ? 3 : 2;
  bool given = outs[0] || (nout > 1 && outs[1]);
  if (given && mtg_any_requires_grad(ins, nin)) return no_out_nd(op, fwd ? b->ndim - 2 : 0);
  if (ndim > 5)
    return mt_fail(MT_ESHAPE, "%s: expected a shape of at most 5 dimensions, got %d", mt_ops[op].name, ndim);
  mt_args args = {.ni = 23, .nf = 2};
  memcpy(args.i, o, sizeof *o);
  args.i[16] = ndim;
  for (int d = 0; d < ndim; d++) args.i[17 + d] = shape[d];
  args.i[22] = nout > 1;
  return mtg_call(op, ins, nin, &args, outs, nout);
}

/* ---- pooling ----
 * Recorded by the generic path (call.c; mtg_pool packs the args as
 * mt_pool_words: the options from i[0], the number of spatial dims in
 * i[NSP]). Max pools keep their indices in slot 0 (MTG_SAVE_IDX1),
 * max_pool_backward its indices operand in slot 1. */
#define NSP (int)(offsetof(mt_pool_words, nsp) / sizeof(int64_t))

static mt_tensor *Dn_max_pool_backward(mtg_scope *s, const mt_tensor *g, const mt_tensor *ix, const mtg_meta_shape *m,
                                       int nsp) {
  if (!LIVE(s) || !g || !ix) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_pool(MT_OP_max_pool_backward, g, ix, NULL, nsp, m->shape, m->ndim, &r, 1);
  return mtg_track(s, st, r);
}

static mt_status d_max_pool(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *ix = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_max_pool_backward(s, go[0], ix, &n->in[0], (int)n->i[NSP]));
  return mtg_scope_end(s, gin, n->nin);
}

/* The adjoint of max_pool_backward: g (input-shaped) read at the 1-based
 * flat positions ix (output-shaped) of each plane. Its derivative is
 * max_pool_backward again. */
static mt_status pool_gather(const mt_tensor *g, const mt_tensor *ix, int nsp, mt_tensor **out);

static mt_tensor *Dn_pool_gather(mtg_scope *s, const mt_tensor *g, const mt_tensor *ix, int nsp) {
  if (!LIVE(s) || !g || !ix) return NULL;
  mt_tensor *r = NULL;
  mt_status st = pool_gather(g, ix, nsp, &r);
  return mtg_track(s, st, r);
}

static mt_status d_max_pool_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *ix = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_pool_gather(s, go[0], ix, (int)n->i[NSP]));
  return mtg_scope_end(s, gin, n->nin);
}

/* i[0] nsp; slot 1 the indices; in[0] the gathered tensor's shape */
static mt_status d_pool_gather(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *ix = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, Dn_max_pool_backward(s, go[0], ix, &n->in[0], (int)n->i[0]));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status pool_gather(const mt_tensor *g, const mt_tensor *ix, int nsp, mt_tensor **out) {
  int lead = g->ndim - nsp;
  if (lead < 0 || ix->ndim != g->ndim)
    return mt_fail(MT_ESHAPE, "max_pool_backward: gradient and indices ranks differ (internal error)");
  int64_t gs[MT_MAXDIM], is[MT_MAXDIM];
  for (int i = 0; i < lead; i++) gs[i] = g->shape[i], is[i] = ix->shape[i];
  gs[lead] = is[lead] = 1;
  for (int i = lead; i < g->ndim; i++) gs[lead] *= g->shape[i], is[lead] *= ix->shape[i];
  mt_tensor *gf = NULL, *xf = NULL, *rf = NULL, *r = NULL;
  mt_status st = mt_reshape(g, gs, lead + 1, &gf);
  if (!st) st = mt_reshape(ix, is, lead + 1, &xf);
  if (!st) st = mt_gather(gf, lead, xf, &rf);
  if (!st) st = mt_reshape(rf, ix->shape, ix->ndim, &r);
  mt_release(gf), mt_release(xf), mt_release(rf);
  const mt_tensor *ins[1] = {g}, *sv[MTG_MAXSAVED] = {NULL, ix};
  int64_t a = nsp;
  if (!st && mtg_any_requires_grad(ins, 1))
    st = record("MaxPoolGatherBackward0", d_pool_gather, ins, 1, &r, 1, sv, &a, sizeof a, 0);
  return finish(st, r, out);
}

static mt_status d_avg_pool(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_pool_opts o;
  pool_opts_of(n, &o);
  if (mtg_needs(n, 0)) {
    mt_tensor *r = NULL;
    mt_status st = mtg_pool(MT_OP_avg_pool_backward, go[0], NULL, &o, o.nsp, n->in[0].shape, n->in[0].ndim, &r, 1);
    gin[0] = mtg_keep(s, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}

/* avg_pool_backward is the adjoint of avg_pool: its derivative is avg_pool. */
static mt_status d_avg_pool_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_pool_opts o;
  pool_opts_of(n, &o);
  if (mtg_needs(n, 0)) {
    mt_tensor *r = NULL;
    mt_status st = mtg_pool(MT_OP_avg_pool, go[0], NULL, &o, o.nsp, NULL, 0, &r, 1);
    gin[0] = mtg_keep(s, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_adaptive_avg_pool(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) {
    mt_tensor *r = NULL;
    mt_status st = mtg_pool(MT_OP_adaptive_avg_pool_backward, go[0], NULL, NULL, (int)n->i[NSP], n->in[0].shape,
                            n->in[0].ndim, &r, 1);
    gin[0] = mtg_keep(s, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}

/* the adjoint again: adaptive_avg_pool to the gradient's spatial size */
static mt_status d_adaptive_avg_pool_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int nsp = (int)n->i[NSP];
  const mtg_meta_shape *m = &n->in[0];
  if (mtg_needs(n, 0)) {
    mt_tensor *r = NULL;
    mt_status st = mtg_pool(MT_OP_adaptive_avg_pool, go[0], NULL, NULL, nsp, m->shape + m->ndim - nsp, nsp, &r, 1);
    gin[0] = mtg_keep(s, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}

mt_status mtg_pool(mt_op op, const mt_tensor *x, const mt_tensor *ix, const mt_pool_opts *o, int nsp,
                   const int64_t *shape, int ndim, mt_tensor **outs, int nout) {
  const mt_tensor *ins[2] = {x, ix};
  int nin = op == MT_OP_max_pool_backward ? 2 : 1;
  bool maxp = op == MT_OP_max_pool || op == MT_OP_adaptive_max_pool;
  bool fwd = maxp || op == MT_OP_avg_pool || op == MT_OP_adaptive_avg_pool;
  bool rec = mtg_any_requires_grad(ins, 1); /* indices never get gradients */
  if ((outs[0] || (nout > 1 && outs[1])) && rec) return fwd ? no_out_nd(op, nsp) : no_out(op);
  if (ndim > 5)
    return mt_fail(MT_ESHAPE, "%s: expected a shape of at most 5 dimensions, got %d", mt_ops[op].name, ndim);
  mt_pool_words w;
  memset(&w, 0, sizeof w);
  if (o) w.o = *o;
  w.nsp = nsp, w.ndim = ndim;
  for (int d = 0; d < ndim; d++) w.shape[d] = shape[d];
  mt_args a = {.ni = 23};
  memcpy(a.i, &w, sizeof w);
  a.i[22] = maxp && (nout > 1 || rec || MTG_TRACING());
  if (maxp && nout < 2 && a.i[22]) { /* the derivative and the JIT's backward need the indices */
    mt_tensor *r[2] = {outs[0], NULL};
    mt_status st = mtg_call(op, ins, nin, &a, r, 2);
    mt_release(r[1]);
    if (!st) outs[0] = r[0];
    return st;
  }
  return mtg_call(op, ins, nin, &a, outs, nout);
}

/* ---- normalization ----
 * Forward nodes have inputs (x, weight, bias) -- running statistics never
 * get gradients -- and save x (slot 0), weight (slot 1, when given) and the
 * statistics the forward used (slots 2 and 3). i[0]: training (batch norm),
 * nnorm (layer norm) or groups (group norm). The statistics outputs carry
 * no gradient. */

/* Eval-mode batch norm is affine in x (the statistics are constants):
 * under create_graph its gradients are written with recorded elementwise
 * ops, so they can be differentiated again. gx = g w invstd, gw = sum(g (x -
 * mean) invstd), gb = sum(g), sums over every dim but the channels. */
static void eval_batch_norm_grads(mtg_scope *s, mtg_node *n, const mt_tensor *g, const mt_tensor *x, const mt_tensor *w,
                                  const mt_tensor *m, const mt_tensor *r, mt_tensor **gin) {
  int nd = n->in[0].ndim, dims[MT_MAXDIM], nred = 0;
  int64_t cs[MT_MAXDIM] = {n->in[0].shape[1]}; /* (C, 1, ..., 1) broadcasts against (N, C, ...) */
  for (int i = 1; i < nd - 1; i++) cs[i] = 1;
  for (int i = 0; i < nd; i++)
    if (i != 1) dims[nred++] = i;
  mt_tensor *inv = mtg_d_reshape(s, r, cs, nd - 1);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, g, w ? mtg_d_mul(s, inv, mtg_d_reshape(s, w, cs, nd - 1)) : inv));
  if (mtg_needs(n, 1)) {
    mt_tensor *xhat = mtg_d_mul(s, mtg_d_sub(s, x, mtg_d_reshape(s, m, cs, nd - 1)), inv);
    gin[1] = mtg_d_grad_for(s, 1, mtg_d_sum(s, mtg_d_mul(s, g, xhat), dims, nred, false));
  }
  if (mtg_needs(n, 2)) gin[2] = mtg_d_grad_for(s, 2, mtg_d_sum(s, g, dims, nred, false));
}

static mt_tensor *Dn_mean(mtg_scope *s, const mt_tensor *x, const int *dims, int nd) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_reduce(MT_OP_mean, x, dims, nd, true, -1, 0, &r, 1);
  return mtg_track(s, st, r);
}

/* Sum over dims[0..nd) (none: g itself). */
static mt_tensor *sum_or_self(mtg_scope *s, const mt_tensor *g, const int *dims, int nd) {
  if (nd) return mtg_d_sum(s, g, dims, nd, false);
  return LIVE(s) && g ? mtg_track(s, MT_OK, mt_retain((mt_tensor *)g)) : NULL;
}

/* Under create_graph: the gradients of batch norm (training), layer norm
 * and group norm written with recorded ops, the statistics recomputed from
 * x, so that they differentiate again. x is viewed so that the normalized
 * elements of a row lie in dims rdims: gx = rstd (gy - mean(gy) - xhat
 * mean(gy xhat)) with gy = g w; gw = sum(g xhat), gb = sum(g) over pdims. */
static void recorded_norm_grads(mtg_scope *s, mtg_node *n, const mt_tensor *g, const mt_tensor *x, const mt_tensor *w,
                                mt_tensor **gin) {
  const mtg_meta_shape *m = &n->in[0];
  int nd = m->ndim, rnd = nd, wnd = nd - 1, nr = 0, np = 0, rdims[MT_MAXDIM], pdims[MT_MAXDIM];
  int64_t rs[MT_MAXDIM], ws[MT_MAXDIM];
  memcpy(rs, m->shape, sizeof rs);
  for (int i = 0; i < MT_MAXDIM; i++) ws[i] = 1;
  ws[0] = nd > 1 ? m->shape[1] : 1; /* per-channel weights: (C, 1, ..., 1) */
  if (n->i[1] == MT_OP_layer_norm) {
    int lead = nd - (int)n->i[0];
    for (int i = 0; i < nd; i++) {
      if (i < lead)
        pdims[np++] = i;
      else
        rdims[nr++] = i;
    }
    wnd = 0; /* the weight has the normalized dims' shape: broadcasts as it is */
  } else {
    for (int i = 0; i < nd; i++)
      if (i != 1) pdims[np++] = i;
    if (n->i[1] == MT_OP_group_norm) { /* (N, G, C/G * spatial) */
      int64_t numel = 1;
      for (int i = 0; i < nd; i++) numel *= m->shape[i];
      rs[1] = n->i[0], rs[2] = m->shape[0] * n->i[0] != 0 ? numel / (m->shape[0] * n->i[0]) : 0, rnd = 3;
      rdims[nr++] = 2;
    } else {
      memcpy(rdims, pdims, sizeof pdims);
      nr = np;
    }
  }
  mt_tensor *xr = mtg_d_reshape(s, x, rs, rnd), *mu = Dn_mean(s, xr, rdims, nr), *xc = mtg_d_sub(s, xr, mu);
  mt_tensor *rstd = mtg_d_un(s, MT_OP_rsqrt, mtg_d_addc(s, Dn_mean(s, mtg_d_mul(s, xc, xc), rdims, nr), n->f[0]));
  mt_tensor *xhat = mtg_d_reshape(s, mtg_d_mul(s, xc, rstd), m->shape, nd);
  if (mtg_needs(n, 0)) {
    const mt_tensor *wb = w && wnd ? mtg_d_reshape(s, w, ws, wnd) : w;
    mt_tensor *gy = mtg_d_reshape(s, wb ? mtg_d_mul(s, g, wb) : g, rs, rnd), *xh = mtg_d_reshape(s, xhat, rs, rnd);
    mt_tensor *t = mtg_d_sub(s, mtg_d_sub(s, gy, Dn_mean(s, gy, rdims, nr)),
                             mtg_d_mul(s, xh, Dn_mean(s, mtg_d_mul(s, gy, xh), rdims, nr)));
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_reshape(s, mtg_d_mul(s, rstd, t), m->shape, nd));
  }
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, sum_or_self(s, mtg_d_mul(s, g, xhat), pdims, np));
  if (mtg_needs(n, 2)) gin[2] = mtg_d_grad_for(s, 2, sum_or_self(s, g, pdims, np));
}

static mt_status d_norm(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *x = mtg_d_saved(s, 0), *w = saved_opt(s, 1), *m = mtg_d_saved(s, 2), *r = mtg_d_saved(s, 3);
  if (LIVE(s) && mtg_grad_enabled()) { /* create_graph */
    if (n->i[1] == MT_OP_batch_norm && !n->i[0])
      eval_batch_norm_grads(s, n, go[0], x, w, m, r, gin);
    else
      recorded_norm_grads(s, n, go[0], x, w, gin);
  } else if (LIVE(s)) {
    mt_tensor *g[3] = {NULL, NULL, NULL};
    mt_tensor **want[3];
    for (int i = 0; i < 3; i++) want[i] = mtg_needs(n, i) ? &g[i] : NULL;
    mt_op bop = n->i[1] == MT_OP_batch_norm   ? MT_OP_batch_norm_backward
                : n->i[1] == MT_OP_layer_norm ? MT_OP_layer_norm_backward
                                              : MT_OP_group_norm_backward;
    mt_status st = mtg_norm_backward(bop, go[0], x, w, m, r, bop == MT_OP_batch_norm_backward ? n->i[0] != 0 : n->i[0],
                                     want[0], want[1], want[2]);
    if (st)
      s->st = st; /* the op released what it made */
    else
      for (int i = 0; i < 3; i++) gin[i] = g[i];
    if (gin[2] && !w && n->in[2].ndim != 1) { /* layer norm's bias gradient comes 1-D without a weight */
      mt_tensor *b = mtg_d_reshape(s, gin[2], n->in[2].shape, n->in[2].ndim);
      mt_release(gin[2]);
      gin[2] = mtg_keep(s, b);
    }
  }
  return mtg_scope_end(s, gin, n->nin);
}

/* The normalization backward ops have no derivative (see derivatives.c;
 * under create_graph the forward ops' derivatives use recorded ops
 * instead): reaching one in a backward pass is an error, never a silent
 * zero. */
static mt_status d_norm_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  const char *op = mt_ops[n->i[1]].name;
  return mt_fail(MT_EARG,
                 "%s has no derivative: differentiate %.*s itself with create_graph=true instead of "
                 "its backward op",
                 op, (int)(strlen(op) - strlen("_backward")), op);
}

/* Hands the wanted statistics over (want[k] NULL: released). */
static void hand_stats(mt_tensor *const *r, mt_tensor **const *want, int n) {
  for (int k = 0; k < n; k++)
    if (want[k])
      *want[k] = r[k];
    else
      mt_release(r[k]);
}

mt_status mtg_norm(mt_op op, const mt_tensor *x, int64_t arg, const mt_tensor *weight, const mt_tensor *bias,
                   double eps, mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
  const mt_tensor *ins[3] = {x, weight, bias};
  bool stats = mean || rstd || (mtg_grad_enabled() && mtg_any_requires_grad(ins, 3)); /* the node saves them */
  mt_args a = {.i = {arg, op, stats}, .f = {eps}, .ni = 3, .nf = 1};
  mt_tensor *r[3] = {*out, mean ? *mean : NULL, rstd ? *rstd : NULL};
  mt_status st = mtg_call(op, ins, 3, &a, r, stats ? 3 : 1);
  if (st) return st;
  *out = r[0];
  mt_tensor **want[2] = {mean, rstd};
  hand_stats(r + 1, want, 2);
  return MT_OK;
}

mt_status mtg_batch_norm(const mt_tensor *x, const mt_tensor *weight, const mt_tensor *bias, mt_tensor *running_mean,
                         mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                         mt_tensor **save_mean, mt_tensor **save_invstd) {
  const mt_tensor *ins[5] = {x, weight, bias, running_mean, running_var};
  bool stats = save_mean || save_invstd || (mtg_grad_enabled() && mtg_any_requires_grad(ins, 3));
  /* traced, the update is functional: new values as results, then copies */
  bool functional = training && (running_mean || running_var) && MTG_TRACING();
  if (functional && !(running_mean && running_var)) {
    mtg_trace_refuse("batch_norm with only one of running_mean and running_var is not replayed by the JIT");
    functional = false;
  }
  mt_args a = {.i = {training, MT_OP_batch_norm, stats, functional}, .f = {eps, momentum}, .ni = 4, .nf = 2};
  mt_tensor *r[5] = {*out, save_mean ? *save_mean : NULL, save_invstd ? *save_invstd : NULL, NULL, NULL};
  mt_status st = mtg_call(MT_OP_batch_norm, ins, 5, &a, r, functional ? 5 : stats ? 3 : 1);
  if (st) return st;
  if (functional) { /* the copies are traced, so the JIT writes the buffers back */
    bool prev = mtg_set_grad_enabled(false);
    if (!(st = mtg_copy_(running_mean, r[3]))) st = mtg_copy_(running_var, r[4]);
    mtg_set_grad_enabled(prev);
    mt_release(r[3]), mt_release(r[4]);
  }
  if (st) {
    for (int k = 0; k < 3; k++) mt_release(r[k]);
    return st;
  }
  *out = r[0];
  mt_tensor **want[2] = {save_mean, save_invstd};
  hand_stats(r + 1, want, 2);
  return MT_OK;
}

mt_status mtg_norm_backward(mt_op op, const mt_tensor *grad_out, const mt_tensor *x, const mt_tensor *weight,
                            const mt_tensor *mean, const mt_tensor *rstd, int64_t arg, mt_tensor **grad_in,
                            mt_tensor **grad_weight, mt_tensor **grad_bias) {
  const mt_tensor *ins[5] = {grad_out, x, weight, mean, rstd};
  mt_tensor **want[3] = {grad_in, grad_weight, grad_bias};
  mt_args a = {.i = {arg, op}, .ni = 5};
  return mtg_call_wanted(op, ins, 5, &a, 2, want, 3);
}

/* image_resize is linear: its derivative is its adjoint,
 * image_resize_backward (args {ih, iw, mode, antialias}), whose derivative
 * is image_resize again (args {oh, ow, ...}): op applied to the gradient,
 * sized as the node's input */
static mt_status d_resize_by(mt_op op, mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) {
    const mtg_meta_shape *x = &n->in[0];
    mt_args a = {.i = {x->shape[x->ndim - 2], x->shape[x->ndim - 1], n->i[2], n->i[3]}, .ni = 4};
    mt_tensor *r = NULL;
    mt_status st = mtg_call(op, (const mt_tensor *const *)go, 1, &a, &r, 1);
    gin[0] = mtg_keep(s, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}
static mt_status d_image_resize(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return d_resize_by(MT_OP_image_resize_backward, n, go, gin);
}
static mt_status d_image_resize_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return d_resize_by(MT_OP_image_resize, n, go, gin);
}

/* The statistics a recorded norm used (results 1 and 2) into slots 2 and 3. */
static mt_status save_stats(mtg_node *n, const mt_tensor *const *ins, int nin, const mt_args *a,
                            mt_tensor *const *outs, int nout) {
  mt_status st = nout > 2 ? MT_OK : mt_fail(MT_EARG, "%s: statistics missing (internal)", n->name);
  for (int k = 1; k < 3 && !st; k++) st = mtg_save(n, 1 + k, outs[k], false, 0);
  return st;
}

/* x and weight in slots 0 and 1, statistics (save_stats) in 2 and 3 */
#define NORM_SAVES (MTG_SAVE_IN(0) | MTG_SAVE_IN(1) | MTG_NOGRAD(1) | MTG_NOGRAD(2))

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_convolution] = {d_convolution, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
    [MT_OP_conv_transpose] = {d_transposed, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
    [MT_OP_conv_backward_input] = {d_transposed, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
    [MT_OP_conv_backward_weight] = {d_conv_backward_weight, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
    [MT_OP_max_pool] = {d_max_pool, MTG_SAVE_IDX1},
    [MT_OP_max_pool_backward] = {d_max_pool_backward, MTG_SAVE_IN(1)},
    [MT_OP_avg_pool] = {d_avg_pool, 0},
    [MT_OP_avg_pool_backward] = {d_avg_pool_backward, 0},
    [MT_OP_adaptive_avg_pool] = {d_adaptive_avg_pool, 0},
    [MT_OP_adaptive_avg_pool_backward] = {d_adaptive_avg_pool_backward, 0},
    [MT_OP_adaptive_max_pool] = {d_max_pool, MTG_SAVE_IDX1},
    [MT_OP_image_resize] = {d_image_resize, 0},
    [MT_OP_image_resize_backward] = {d_image_resize_backward, 0},
    [MT_OP_batch_norm] = {d_norm, NORM_SAVES | MTG_NOGRAD(3) | MTG_NOGRAD(4), save_stats},
    [MT_OP_layer_norm] = {d_norm, NORM_SAVES, save_stats},
    [MT_OP_group_norm] = {d_norm, NORM_SAVES, save_stats},
    [MT_OP_batch_norm_backward] = {d_norm_backward, 0},
    [MT_OP_layer_norm_backward] = {d_norm_backward, 0},
    [MT_OP_group_norm_backward] = {d_norm_backward, 0},
};

const mtg_deriv *mtg_deriv_nn(mt_op op) { return table[op].fn ? &table[op] : NULL; }
