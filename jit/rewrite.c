/* rewrite.c -- algebraic rewrites of a built IR graph (after DCE marks),
 * in this order: (1) relu before max pooling is moved after it, (2) the
 * bias add and activation after a convolution or a matmul are folded into
 * the library call as its epilogue. (1) goes first: it applies only in
 * training graphs (it needs relu's backward) and there it removes two
 * passes over the large tensor (relu and its backward), where (2) would
 * remove only the forward one; the conv's reader is then the pool and (2)
 * leaves it. In inference graphs (1) never applies and (2) folds the relu.
 * MOONTORCH_JIT_REWRITE=0 turns both off, MOONTORCH_JIT_EPILOGUE=0 (2) only.
 *
 * (1) relu before max pooling: maxpool(relu(x)) == relu(maxpool(x)) (relu is
 * monotonic), and so are their gradients: the gradient reaches a window's
 * first maximum when that maximum is above 0, else nothing. Computing relu
 * and its backward on the pooled tensor instead of the full one saves two
 * passes over the larger tensor (4x for 2x2 pooling). The rewrite applies
 * when the relu's output is read only by the pool and by its own backward
 * (relu_backward), and that backward's gradient comes only from the pool's
 * backward with the pool's indices. Slots are reused so creation order
 * stays a valid schedule:
 *   R = relu(X)           ->  R  = max_pool(X)          (indices I follow R)
 *   P = max_pool(R)       ->  P  = relu(R)
 *   G = max_pool_bw(g, I) ->  G  = relu_backward(g, P)
 *   B = relu_bw(G, R)     ->  B  = max_pool_bw(G, I)
 *
 * (2) epilogues: a float32 convolution whose result only an activation
 * reads becomes one call applying it (a oneDNN post-op: relu, leaky_relu,
 * tanh, sigmoid, silu, gelu, gelu_tanh; the composite ones are found in their
 * decomposition from ir.c); a float32 matmul (..., k) @ (k, n) whose result
 * only a bias add of an (n) row reads takes the bias, and the activation
 * after it if any (oneDNN's matmul primitive). A value something else
 * also reads (gelu's backward reads its input) is not folded. The call
 * moves into the slot of the last node it replaces (its operands all come
 * earlier) and the replaced nodes die.
 *
 * (3) compact max pools (after (1), which moves pools): a max pool whose
 * windows tile the plane (the 2x2 of CNNs) and whose indices only its
 * backward reads keeps, per output, the position of its maximum inside
 * its window in one byte instead of an 8-byte flat index
 * (mt_max_pool_local): an eighth of the index traffic, written by the
 * forward and read back by the backward. Under MOONTORCH_JIT_REWRITE=0. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "replay_pool.h"

static bool is_call(const mtj_node *x, const char *name) {
  return x->live && x->kind == JN_EXTERN && x->fn && strcmp(x->name, name) == 0;
}

/* Readers of node i among live nodes, graph outputs and write-backs. */
static int readers(const mtj_graph *g, int i) {
  int n = 0;
  for (int j = 0; j < g->nn; j++)
    if (g->n[j].live)
      for (int k = 0; k < MTJ_NA; k++) n += g->n[j].a[k] == i;
  for (int k = 0; k < g->nout; k++) n += g->out[k] == i;
  for (int k = 0; k < g->nwb; k++) n += g->wb[k] == i;
  return n;
}

/* The live node reading i through operand k with a test, or -1. */
static int reader(const mtj_graph *g, int i, int k, bool (*ok)(const mtj_node *)) {
  for (int j = 0; j < g->nn; j++)
    if (g->n[j].live && g->n[j].a[k] == i && ok(&g->n[j])) return j;
  return -1;
}

static bool is_pool(const mtj_node *x) { return is_call(x, "max_pool"); }
static bool is_pool_bw(const mtj_node *x) { return is_call(x, "max_pool_backward"); }
static bool is_relu_bw(const mtj_node *x) { return x->kind == JN_BINARY && x->op == MT_OP_relu_backward; }
static bool is_index(const mtj_node *x) { return x->kind == JN_XOUT && x->slot == 1; }

static void swap_relu_pool(mtj_graph *g, int r) {
  mtj_node *R = &g->n[r];
  int p = reader(g, r, 0, is_pool), bw = reader(g, r, 1, is_relu_bw);
  if (p < 0 || bw < 0 || readers(g, r) != 2 || !mt_is_floating((mt_dtype)R->dtype)) return;
  int ix = reader(g, p, 0, is_index);
  int gb = g->n[bw].a[0];
  if (ix < 0 || gb < 0 || !is_pool_bw(&g->n[gb]) || g->n[gb].a[1] != ix || readers(g, gb) != 1) return;
  if (!(r < p && p < ix && ix < gb && gb < bw)) return;
  mtj_node oldR = *R, oldP = g->n[p], oldG = g->n[gb], oldB = g->n[bw];
  /* R <- max_pool(X) */
  g->n[r] = oldP;
  g->n[r].a[0] = oldR.a[0];
  /* P <- relu(R) at the pooled shape */
  g->n[p] = oldR;
  g->n[p].a[0] = r;
  g->n[p].ndim = oldP.ndim;
  memcpy(g->n[p].shape, oldP.shape, sizeof oldP.shape);
  g->n[ix].a[0] = r;
  /* G <- relu_backward(g, P) at the pooled shape */
  g->n[gb] = oldB;
  g->n[gb].a[0] = oldG.a[0];
  g->n[gb].a[1] = p;
  g->n[gb].ndim = oldP.ndim;
  memcpy(g->n[gb].shape, oldP.shape, sizeof oldP.shape);
  /* B <- max_pool_backward(G, I) at the input's shape */
  g->n[bw] = oldG;
  g->n[bw].a[0] = gb;
}

/* ---- (2) epilogues ---- */

/* A float32 product with fewer multiply-adds than this keeps its fused
 * kernel: for 64x128 @ 128x10 (Fashion-MNIST's last layer) OpenBLAS plus the
 * kernel took 1.5 us and the matmul primitive with its epilogue 4.7, while
 * 64x3136 @ 3136x128 went from 220 to 147 us and 128x784 @ 784x256 from
 * 158 to 135 (2 threads, medians; docs/jit.md). Judged on the captured sizes. */
#define EPI_MIN_WORK (64.0 * 64.0 * 64.0)

static bool is_f32(const mtj_node *x) { return x->live && x->dtype == MT_FLOAT32 && x->cdt == MT_FLOAT32; }

static bool is_const(const mtj_graph *g, int i, double v) {
  return i >= 0 && g->n[i].kind == JN_CONST && g->n[i].ndim == 0 && g->n[i].c == v;
}

/* The live float32 node op(a) (unary) or op(a, b) (binary; b < 0: a
 * constant cb instead; a < 0: a constant ca first), or -1. */
static int node_of(const mtj_graph *g, int kind, int op, int a, double ca, int b, double cb) {
  for (int j = 0; j < g->nn; j++) {
    const mtj_node *x = &g->n[j];
    if (!is_f32(x) || x->kind != kind || x->op != op) continue;
    if (a >= 0 ? x->a[0] != a : !is_const(g, x->a[0], ca)) continue;
    if (kind == JN_UNARY || (b >= 0 ? x->a[1] == b : is_const(g, x->a[1], cb))) return j;
  }
  return -1;
}
/* op(a), op(a, b), op(a, constant c), op(constant c, b); -1 when an operand is missing */
#define UN(op, a) ((a) < 0 ? -1 : node_of(g, JN_UNARY, MT_OP_##op, a, 0, -1, 0))
#define BIN(op, a, b) ((a) < 0 || (b) < 0 ? -1 : node_of(g, JN_BINARY, MT_OP_##op, a, 0, b, 0))
#define BINC(op, a, c) ((a) < 0 ? -1 : node_of(g, JN_BINARY, MT_OP_##op, a, 0, -1, c))
#define CBIN(op, c, b) ((b) < 0 ? -1 : node_of(g, JN_BINARY, MT_OP_##op, -1, c, b, 0))

/* Operand references from nodes s[0..ns) to node i. */
static int refs(const mtj_graph *g, const int *s, int ns, int i) {
  int n = 0;
  for (int j = 0; j < ns; j++)
    for (int k = 0; k < MTJ_NA; k++) n += g->n[s[j]].a[k] == i;
  return n;
}

/* True when the nodes s[0..ns) (all >= 0; the last is the root) are the
 * only readers of x and of each other: nothing outside needs x or a value
 * inside but the root's. */
static bool closed(const mtj_graph *g, int x, const int *s, int ns) {
  for (int j = 0; j < ns; j++)
    if (s[j] < 0) return false;
  if (refs(g, s, ns, x) != readers(g, x)) return false;
  for (int j = 0; j + 1 < ns; j++)
    if (refs(g, s, ns, s[j]) != readers(g, s[j])) return false;
  return true;
}

/* The activation that alone reads x, as ir.c lowers it: its kind in *act
 * (parameter *alpha) and its nodes in s[0..*ns) (at most 9), the root last;
 * false if none. */
static bool find_act(const mtj_graph *g, int x, mt_act *act, double *alpha, int *s, int *ns) {
  *alpha = 0;
  int r;
  if ((r = UN(relu, x)) >= 0 && (s[0] = r, closed(g, x, s, 1))) return *act = MT_ACT_RELU, *ns = 1, true;
  if ((r = UN(leaky_relu, x)) >= 0 && (s[0] = r, closed(g, x, s, 1)))
    return *act = MT_ACT_LEAKY_RELU, *alpha = g->n[r].f[0], *ns = 1, true;
  if ((r = UN(tanh, x)) >= 0 && (s[0] = r, closed(g, x, s, 1))) return *act = MT_ACT_TANH, *ns = 1, true;
  /* sigmoid: 1 / (1 + exp(-x)); silu: x * sigmoid(x) */
  s[0] = UN(neg, x), s[1] = UN(exp, s[0]), s[2] = CBIN(add, 1, s[1]), s[3] = CBIN(div, 1, s[2]);
  s[4] = BIN(mul, x, s[3]);
  if (closed(g, x, s, 5)) return *act = MT_ACT_SILU, *ns = 5, true;
  if (closed(g, x, s, 4)) return *act = MT_ACT_SIGMOID, *ns = 4, true;
  /* gelu: (x * 0.5) * (erf(x * (1/sqrt 2)) + 1) */
  s[0] = BINC(mul, x, 0.70710678118654752440), s[1] = UN(erf, s[0]), s[2] = BINC(add, s[1], 1);
  s[3] = BINC(mul, x, 0.5), s[4] = BIN(mul, s[3], s[2]);
  if (closed(g, x, s, 5)) return *act = MT_ACT_GELU, *ns = 5, true;
  /* gelu_tanh: (x * 0.5) * (tanh(c * (x + 0.044715 * (x * x * x))) + 1), c = sqrt(2/pi) */
  s[0] = BIN(mul, x, x), s[1] = BIN(mul, s[0], x), s[2] = CBIN(mul, 0.044715, s[1]), s[3] = BIN(add, x, s[2]);
  s[4] = CBIN(mul, 0.79788456080286535588, s[3]), s[5] = UN(tanh, s[4]), s[6] = BINC(add, s[5], 1);
  s[7] = BINC(mul, x, 0.5), s[8] = BIN(mul, s[7], s[6]);
  if (closed(g, x, s, 9)) return *act = MT_ACT_GELU_TANH, *ns = 9, true;
  return false;
}

/* Size of dim d as captured (a symbol's value in the first capture). */
static int64_t captured(const mtj_graph *g, mtj_dim d) {
  return d.sym < 0 ? d.c : g->in[g->sym_in[d.sym]].shape[g->sym_dim[d.sym]];
}

/* Moves call x into slot r, the last of the nodes dead[0..nd) it replaces
 * (applying act, adding bias b >= 0 for a matmul); x and the others die. */
static void fold(mtj_graph *g, int x, const int *dead, int nd, int b, mt_act act, double alpha) {
  mtj_node y = g->n[x];
  if (b >= 0) y.a[2] = b;
  y.act = (int8_t)act, y.c = alpha;
  for (int j = 0; j + 1 < nd; j++) g->n[dead[j]].live = false;
  g->n[dead[nd - 1]] = y;
  g->n[x].live = false;
}

static void conv_epilogue(mtj_graph *g, int x) {
  mtj_node *c = &g->n[x];
  int s[12], ns;
  mt_act act;
  double alpha;
  if (!is_call(c, "convolution") || c->inplace || c->act || !is_f32(c)) return;
  if (find_act(g, x, &act, &alpha, s + 1, &ns)) fold(g, x, s + 1, ns, -1, act, alpha);
}

static void matmul_epilogue(mtj_graph *g, int x) {
  const mtj_node *m = &g->n[x];
  if (m->kind != JN_EXTERN || m->fn || m->op != MT_OP_matmul || m->act || m->a[0] < 0 || m->a[1] < 0 || m->a[2] >= 0 ||
      !is_f32(m))
    return;
  const mtj_node *a = &g->n[m->a[0]], *w = &g->n[m->a[1]];
  if (a->ndim < 2 || w->ndim != 2 || m->ndim != a->ndim) return;
  double work = (double)captured(g, a->shape[a->ndim - 1]) * (double)captured(g, w->shape[1]);
  for (int d = 0; d + 1 < m->ndim; d++) work *= (double)captured(g, m->shape[d]);
  if (work <= EPI_MIN_WORK || readers(g, x) != 1) return;
  int y = -1, b = -1;
  for (int j = x + 1; j < g->nn && y < 0; j++) {
    const mtj_node *n = &g->n[j];
    if (!is_f32(n) || n->kind != JN_BINARY || n->op != MT_OP_add || n->ndim != m->ndim) continue;
    if (n->a[0] == x || n->a[1] == x) y = j, b = n->a[0] == x ? n->a[1] : n->a[0];
  }
  if (y < 0 || b == x || !is_f32(&g->n[b]) || g->n[b].ndim != 1 ||
      !mtj_dim_eq(g, g->n[b].shape[0], m->shape[m->ndim - 1]))
    return;
  int s[12] = {y}, ns = 0;
  mt_act act = MT_ACT_NONE;
  double alpha = 0;
  if (!find_act(g, y, &act, &alpha, s + 1, &ns)) act = MT_ACT_NONE, ns = 0;
  /* CUDA: cuBLASLt applies the bias, relu and GELU (cuda/blaslt.c); other
   * activations stay in a generated kernel */
  if (g->dev.type != MT_CPU && act != MT_ACT_RELU && act != MT_ACT_GELU && act != MT_ACT_GELU_TANH)
    act = MT_ACT_NONE, ns = 0;
  fold(g, x, s, ns + 1, b, act, alpha);
}

/* (3): pool p takes the compact form when every reader of its indices is
 * a max_pool_backward reading them as its indices. */
static void compact_pool(mtj_graph *g, int p) {
  mtj_node *P = &g->n[p];
  if (!is_pool(P) || !mtg_pool_tiles(P->attr) || (P->dtype != MT_FLOAT32 && P->dtype != MT_FLOAT64)) return;
  int ix = reader(g, p, 0, is_index), nbw = 0;
  if (ix >= 0) {
    for (int j = 0; j < g->nn; j++) {
      const mtj_node *y = &g->n[j];
      bool reads = false;
      for (int k = 0; k < MTJ_NA; k++) reads |= y->live && y->a[k] == ix;
      if (!reads) continue;
      if (!is_pool_bw(y) || y->a[1] != ix || y->a[0] == ix) return;
      nbw++;
    }
    if (readers(g, ix) != nbw) return; /* also a graph output */
    g->n[ix].dtype = g->n[ix].cdt = MT_UINT8;
    for (int j = 0; j < g->nn; j++)
      if (is_pool_bw(&g->n[j]) && g->n[j].a[1] == ix) {
        mtg_pool_local_backward_attrs(P->attr, g->n[j].attr);
        g->n[j].fn = mtg_rp_max_pool_local_backward;
        g->n[j].name = "max_pool_local_backward";
      }
  }
  P->fn = mtg_rp_max_pool_local;
  P->name = "max_pool_local";
}

void mtj_rewrite(mtj_graph *g) {
  const char *off = getenv("MOONTORCH_JIT_REWRITE"), *epi = getenv("MOONTORCH_JIT_EPILOGUE");
  if (off && strcmp(off, "0") == 0) return;
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].live && g->n[i].kind == JN_UNARY && g->n[i].op == MT_OP_relu) swap_relu_pool(g, i);
  /* the rest call CPU kernels (compact pools) and oneDNN (epilogues); on
   * CUDA only a matmul's bias and activation fold (into one cuBLASLt call) */
  if (g->dev.type != MT_CPU) {
    for (int i = 0, nn = g->nn; i < nn && !(epi && strcmp(epi, "0") == 0); i++)
      if (g->n[i].live) matmul_epilogue(g, i);
    mtj_mark_live(g);
    return;
  }
  for (int i = 0; i < g->nn; i++) compact_pool(g, i);
  if (epi && strcmp(epi, "0") == 0) return;
  int nn = g->nn;
  for (int i = 0; i < nn; i++) {
    if (!g->n[i].live) continue;
    conv_epilogue(g, i);
    matmul_epilogue(g, i);
  }
  mtj_mark_live(g);
}
