/* cudnn_attn.c (cuda) -- scaled dot product attention through cuDNN's
 * backend (graph) API: the forward and backward are each one operation
 * graph of matmul, pointwise, reduction and reshape nodes in the pattern
 * cuDNN's fused flash-attention engines recognise (the one NVIDIA's
 * frontend builds for cuDNN 9 before its unified SDPA node):
 *
 *   forward   S = Q K^T * scale (+ bias) (causal: select(row >= col, S, lowest))
 *             m = max_j S; e = exp(S - m); l = sum_j e; stats = m + log l
 *             O = (e / l) V                           (e / l in the io dtype)
 *   backward  D = sum_d dO * O; P = exp(S - stats) with S as above
 *             dV = P^T dO; dS = P * (dO V^T - D) * scale
 *             dK = dS^T Q; dQ_acc = dS K (float32); dQ = dQ_acc
 *
 * Operands are read and written with the strides the caller gives (the
 * plan's key holds them), so strided q/k/v views need no copies.
 * GQA: K and V keep their hk heads; the backward sums dK, dV of each group
 * with a reduction node. Plans are built once per problem (key below) by
 * cuDNN's heuristics (mode A, then fallback) and cached; a problem no
 * engine takes is remembered as declined. Workspace comes from the caching
 * allocator. MOONTORCH_CUDNN_DEBUG=1 prints each refused step. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn_api.h"
#include "cudnn_attn.h"
#include "mt_cuda.h"

/* ---- the backend API's numbers (cudnn_graph.h) ---- */
enum { /* cudnnBackendDescriptorType_t */
  D_POINTWISE = 0, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_PLAN = 5, D_OP_POINTWISE = 13, D_OPGRAPH = 15,
  D_VARPACK = 16, D_TENSOR = 17, D_MATMUL = 18, D_OP_MATMUL = 19, D_REDUCTION = 21, D_OP_REDUCTION = 22,
  D_OP_RESHAPE = 31
};
enum { /* cudnnBackendAttributeType_t */
  T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_VOID_PTR = 6, T_HEUR_MODE = 8,
  T_POINTWISE_MODE = 14, T_DESC = 15, T_REDUCTION_OP = 18
};
enum { /* cudnnBackendAttributeName_t */
  A_PW_MODE = 0, A_PW_MATH_PREC = 1, A_PW_AXIS = 9,
  A_HEUR_MODE = 200, A_HEUR_GRAPH = 201, A_HEUR_RESULTS = 202,
  A_PLAN_HANDLE = 400, A_PLAN_CONFIG = 401, A_PLAN_WORKSPACE = 402,
  A_OPPW_DESC = 750, A_OPPW_X = 751, A_OPPW_B = 752, A_OPPW_Y = 753, A_OPPW_T = 758,
  A_GRAPH_HANDLE = 800, A_GRAPH_OPS = 801,
  A_T_ALIGN = 900, A_T_DTYPE = 901, A_T_DIMS = 902, A_T_STRIDES = 903, A_T_UID = 906, A_T_VIRTUAL = 907,
  A_T_BY_VALUE = 908,
  A_VP_UIDS = 1000, A_VP_PTRS = 1001, A_VP_WORKSPACE = 1003,
  A_MM_COMP = 1500, A_OPMM_A = 1520, A_OPMM_B = 1521, A_OPMM_C = 1522, A_OPMM_DESC = 1523,
  A_RED_OP = 1600, A_RED_COMP = 1601, A_OPRED_X = 1610, A_OPRED_Y = 1611, A_OPRED_DESC = 1612,
  A_RESHAPE_X = 2200, A_RESHAPE_Y = 2201
};
enum { F32 = 0, F16 = 2, I32 = 4, BF16 = 9, BOOL = 11 };                /* cudnnDataType_t */
enum { PW_ADD = 0, PW_MUL = 1, PW_DIV = 6, PW_SUB = 9, PW_EXP = 13, PW_LOG = 15, PW_IDENTITY = 21,
       PW_CMP_GE = 303, PW_GEN_INDEX = 501, PW_SELECT = 601 };         /* cudnnPointwiseMode_t */
enum { RED_ADD = 0, RED_MAX = 3 };                                     /* cudnnReduceTensorOp_t */
enum { HEUR_FALLBACK = 2, HEUR_A = 3 };                                /* cudnnBackendHeurMode_t */

/* tensor uids of the graphs (virtual tensors count up from V0) */
enum { U_Q = 1, U_K, U_V, U_O, U_STATS, U_SCALE, U_BIAS, U_LOWEST, U_DO, U_DQ, U_DK, U_DV, U_ONE, U_SSUM, U_DQACC };
#define V0 100
#define MAXDESC 96
#define MAXOPS 48
#define MAXUIDS 16

/* ---- building a graph ---- */

typedef struct builder {
  const mt_cudnn_fns *f;
  BD keep[MAXDESC]; /* every descriptor made (destroyed with the plan) */
  int nkeep;
  BD ops[MAXOPS];
  int nops;
  int64_t next_uid;
  cudnnStatus_t err;
  char what[96]; /* the step that failed */
} builder;

static bool debug_on(void) {
  const char *e = getenv("MOONTORCH_CUDNN_DEBUG");
  return e && *e && *e != '0';
}

static void failed(builder *g, cudnnStatus_t s, const char *what) {
  if (g->err) return;
  g->err = s;
  snprintf(g->what, sizeof g->what, "%s", what);
  if (debug_on()) {
    char msg[512] = "";
    if (g->f->GetLastErrorString) g->f->GetLastErrorString(msg, sizeof msg);
    fprintf(stderr, "cudnn_attn: %s failed: %s (%d) %s\n", what, g->f->GetErrorString(s), s, msg);
  }
}

static BD make(builder *g, int type) {
  BD d = NULL;
  if (g->err) return NULL;
  if (g->nkeep == MAXDESC) {
    failed(g, 1, "descriptor table full");
    return NULL;
  }
  cudnnStatus_t s = g->f->BackendCreateDescriptor(type, &d);
  if (s) {
    failed(g, s, "create descriptor");
    return NULL;
  }
  return g->keep[g->nkeep++] = d;
}

static void set(builder *g, BD d, int name, int type, int64_t n, const void *v) {
  if (g->err) return;
  cudnnStatus_t s = g->f->BackendSetAttribute(d, name, type, n, v);
  if (s) {
    char what[64];
    snprintf(what, sizeof what, "set attribute %d", name);
    failed(g, s, what);
  }
}

static void fin(builder *g, BD d, const char *what) {
  if (g->err) return;
  cudnnStatus_t s = g->f->BackendFinalize(d);
  if (s) failed(g, s, what);
}

static BD tensor(builder *g, int64_t uid, int dt, const int64_t dims[4], const int64_t strides[4], bool virt,
                 bool by_value) {
  BD t = make(g, D_TENSOR);
  int64_t align = 16;
  set(g, t, A_T_DTYPE, T_DATA_TYPE, 1, &dt);
  set(g, t, A_T_DIMS, T_INT64, 4, dims);
  set(g, t, A_T_STRIDES, T_INT64, 4, strides);
  set(g, t, A_T_UID, T_INT64, 1, &uid);
  set(g, t, A_T_ALIGN, T_INT64, 1, &align);
  set(g, t, A_T_VIRTUAL, T_BOOLEAN, 1, &virt);
  if (by_value) set(g, t, A_T_BY_VALUE, T_BOOLEAN, 1, &by_value);
  fin(g, t, "tensor");
  return t;
}

/* A virtual (intermediate) tensor. */
static BD virt(builder *g, int dt, const int64_t dims[4], const int64_t strides[4]) {
  return tensor(g, g->next_uid++, dt, dims, strides, true, false);
}

static void add_op(builder *g, BD op, const char *what) {
  fin(g, op, what);
  if (g->err) return;
  if (g->nops == MAXOPS) failed(g, 1, "operation table full");
  else g->ops[g->nops++] = op;
}

/* y = mode(x[, b[, t]]) computed in prec; axis >= 0 for GEN_INDEX. */
static void pw(builder *g, int mode, int prec, BD x, BD b, BD t, BD y, int64_t axis) {
  BD d = make(g, D_POINTWISE);
  set(g, d, A_PW_MODE, T_POINTWISE_MODE, 1, &mode);
  set(g, d, A_PW_MATH_PREC, T_DATA_TYPE, 1, &prec);
  if (axis >= 0) set(g, d, A_PW_AXIS, T_INT64, 1, &axis);
  fin(g, d, "pointwise descriptor");
  BD op = make(g, D_OP_POINTWISE);
  set(g, op, A_OPPW_DESC, T_DESC, 1, &d);
  set(g, op, A_OPPW_X, T_DESC, 1, &x);
  if (b) set(g, op, A_OPPW_B, T_DESC, 1, &b);
  if (t) set(g, op, A_OPPW_T, T_DESC, 1, &t);
  set(g, op, A_OPPW_Y, T_DESC, 1, &y);
  add_op(g, op, "pointwise operation");
}

static void reduce(builder *g, int red, BD x, BD y) {
  int comp = F32;
  BD d = make(g, D_REDUCTION);
  set(g, d, A_RED_OP, T_REDUCTION_OP, 1, &red);
  set(g, d, A_RED_COMP, T_DATA_TYPE, 1, &comp);
  fin(g, d, "reduction descriptor");
  BD op = make(g, D_OP_REDUCTION);
  set(g, op, A_OPRED_X, T_DESC, 1, &x);
  set(g, op, A_OPRED_Y, T_DESC, 1, &y);
  set(g, op, A_OPRED_DESC, T_DESC, 1, &d);
  add_op(g, op, "reduction operation");
}

static void matmul(builder *g, BD a, BD b, BD c) {
  int comp = F32;
  BD d = make(g, D_MATMUL);
  set(g, d, A_MM_COMP, T_DATA_TYPE, 1, &comp);
  fin(g, d, "matmul descriptor");
  BD op = make(g, D_OP_MATMUL);
  set(g, op, A_OPMM_A, T_DESC, 1, &a);
  set(g, op, A_OPMM_B, T_DESC, 1, &b);
  set(g, op, A_OPMM_C, T_DESC, 1, &c);
  set(g, op, A_OPMM_DESC, T_DESC, 1, &d);
  add_op(g, op, "matmul operation");
}

static void reshape(builder *g, BD x, BD y) {
  BD op = make(g, D_OP_RESHAPE);
  set(g, op, A_RESHAPE_X, T_DESC, 1, &x);
  set(g, op, A_RESHAPE_Y, T_DESC, 1, &y);
  add_op(g, op, "reshape operation");
}

static void contiguous(const int64_t d[4], int64_t s[4]) {
  s[3] = 1;
  for (int i = 2; i >= 0; i--) s[i] = s[i + 1] * d[i + 1];
}

/* The shapes every graph uses. */
typedef struct shapes {
  int64_t q[4], qs[4];   /* (b, hq, sq, d) */
  int64_t kt[4];         /* K or V seen transposed: (b, hk, d, skv) */
  int64_t kv[4], kvs[4]; /* (b, hk, skv, d) */
  int64_t s[4], ss[4];   /* scores (b, hq, sq, skv) */
  int64_t st[4], sts[4]; /* (b, hq, sq, 1), also row statistics */
  int64_t pt[4], pts[4]; /* scores seen transposed (b, hq, skv, sq) */
  int64_t one[4];
  int64_t io[MT_CA_N][4]; /* the operands' strides (p->str, else contiguous) */
} shapes;

/* (.., rows, d) strides seen as those of the transposed (.., d, rows) */
static const int64_t *transposed(const int64_t s[4], int64_t t[4]) {
  t[0] = s[0], t[1] = s[1], t[2] = s[3], t[3] = s[2];
  return t;
}

static void make_shapes(const mt_cudnn_attn *p, shapes *h) {
  int64_t q[4] = {p->b, p->hq, p->sq, p->d}, kv[4] = {p->b, p->hk, p->skv, p->d};
  int64_t s[4] = {p->b, p->hq, p->sq, p->skv}, st[4] = {p->b, p->hq, p->sq, 1};
  memcpy(h->q, q, sizeof q), memcpy(h->kv, kv, sizeof kv), memcpy(h->s, s, sizeof s), memcpy(h->st, st, sizeof st);
  contiguous(q, h->qs), contiguous(kv, h->kvs), contiguous(s, h->ss);
  int64_t sts[4] = {p->hq * p->sq, p->sq, 1, 1};
  memcpy(h->sts, sts, sizeof sts);
  int64_t kt[4] = {p->b, p->hk, p->d, p->skv};
  memcpy(h->kt, kt, sizeof kt);
  int64_t pt[4] = {p->b, p->hq, p->skv, p->sq}, pts[4] = {h->ss[0], h->ss[1], 1, p->skv};
  memcpy(h->pt, pt, sizeof pt), memcpy(h->pts, pts, sizeof pts);
  for (int i = 0; i < 4; i++) h->one[i] = 1;
  for (int i = 0; i < MT_CA_N; i++) {
    const int64_t *g = p->str[i];
    bool kv = i == MT_CA_K || i == MT_CA_V || i == MT_CA_DK || i == MT_CA_DV;
    if (g[0] || g[1] || g[2] || g[3]) memcpy(h->io[i], g, sizeof h->io[i]);
    else memcpy(h->io[i], kv ? h->kvs : h->qs, sizeof h->io[i]);
  }
}

/* scores * scale (+ bias) (causal: lowest above the diagonal). */
static BD score_mods(builder *g, const mt_cudnn_attn *p, const shapes *h, BD s, BD scale, bool after_stats, BD stats) {
  BD x = virt(g, F32, h->s, h->ss);
  pw(g, PW_MUL, F32, s, scale, NULL, x, -1);
  if (p->bias) {
    BD bias = tensor(g, U_BIAS, p->dt == MT_BFLOAT16 ? BF16 : F16, p->bias_dims, p->bias_str, false, false);
    BD y = virt(g, F32, h->s, h->ss);
    pw(g, PW_ADD, F32, x, bias, NULL, y, -1);
    x = y;
  }
  if (after_stats) {
    BD y = virt(g, F32, h->s, h->ss);
    pw(g, PW_SUB, F32, x, stats, NULL, y, -1);
    x = y;
  }
  if (p->causal) {
    BD row = virt(g, I32, h->s, h->ss), col = virt(g, I32, h->s, h->ss), keep = virt(g, BOOL, h->s, h->ss);
    pw(g, PW_GEN_INDEX, F32, x, NULL, NULL, row, 2);
    pw(g, PW_GEN_INDEX, F32, x, NULL, NULL, col, 3);
    pw(g, PW_CMP_GE, BOOL, row, col, NULL, keep, -1);
    BD lowest = tensor(g, U_LOWEST, F32, h->one, h->one, false, true);
    BD y = virt(g, F32, h->s, h->ss);
    pw(g, PW_SELECT, F32, x, lowest, keep, y, -1);
    x = y;
  }
  return x;
}

static void build_fwd(builder *g, const mt_cudnn_attn *p) {
  shapes h;
  make_shapes(p, &h);
  int io = p->dt == MT_BFLOAT16 ? BF16 : F16;
  int64_t tr[4];
  BD Q = tensor(g, U_Q, io, h.q, h.io[MT_CA_Q], false, false);
  BD KT = tensor(g, U_K, io, h.kt, transposed(h.io[MT_CA_K], tr), false, false);
  BD V = tensor(g, U_V, io, h.kv, h.io[MT_CA_V], false, false), O = tensor(g, U_O, io, h.q, h.io[MT_CA_O], false, false);
  BD ST = tensor(g, U_STATS, F32, h.st, h.sts, false, false);
  BD SC = tensor(g, U_SCALE, F32, h.one, h.one, false, true);
  BD s = virt(g, F32, h.s, h.ss);
  matmul(g, Q, KT, s);
  s = score_mods(g, p, &h, s, SC, false, NULL);
  BD mx = virt(g, F32, h.st, h.sts), sub = virt(g, F32, h.s, h.ss), e = virt(g, F32, h.s, h.ss);
  BD sum = virt(g, F32, h.st, h.sts), lg = virt(g, F32, h.st, h.sts), prob = virt(g, io, h.s, h.ss);
  reduce(g, RED_MAX, s, mx);
  pw(g, PW_SUB, F32, s, mx, NULL, sub, -1);
  pw(g, PW_EXP, F32, sub, NULL, NULL, e, -1);
  reduce(g, RED_ADD, e, sum);
  pw(g, PW_LOG, F32, sum, NULL, NULL, lg, -1);
  pw(g, PW_ADD, F32, mx, lg, NULL, ST, -1);
  pw(g, PW_DIV, F32, e, sum, NULL, prob, -1);
  matmul(g, prob, V, O);
}

/* grad (b, hq, rows, d) of a k/v operand: straight into out, or (GQA)
 * per q head then summed over each group. */
static void grad_kv(builder *g, const mt_cudnn_attn *p, const shapes *h, BD a, BD b, BD out, int io) {
  if (p->hq == p->hk) {
    matmul(g, a, b, out);
    return;
  }
  int64_t full[4] = {p->b, p->hq, p->skv, p->d}, fs[4];
  contiguous(full, fs);
  BD f = virt(g, io, full, fs);
  matmul(g, a, b, f);
  reduce(g, RED_ADD, f, out);
}

static void build_bwd(builder *g, const mt_cudnn_attn *p) {
  shapes h;
  make_shapes(p, &h);
  int io = p->dt == MT_BFLOAT16 ? BF16 : F16;
  int64_t tr[2][4];
  BD Q = tensor(g, U_Q, io, h.q, h.io[MT_CA_Q], false, false);
  BD KT = tensor(g, U_K, io, h.kt, transposed(h.io[MT_CA_K], tr[0]), false, false);
  BD VT = tensor(g, U_V, io, h.kt, transposed(h.io[MT_CA_V], tr[1]), false, false);
  BD O = tensor(g, U_O, io, h.q, h.io[MT_CA_O], false, false);
  BD ST = tensor(g, U_STATS, F32, h.st, h.sts, false, false);
  BD SC = tensor(g, U_SCALE, F32, h.one, h.one, false, true);
  BD ONE = tensor(g, U_ONE, F32, h.one, h.one, false, true);
  BD dO = tensor(g, U_DO, io, h.q, h.io[MT_CA_DO], false, false);
  BD dQ = tensor(g, U_DQ, io, h.q, h.io[MT_CA_DQ], false, false);
  BD dK = tensor(g, U_DK, io, h.kv, h.io[MT_CA_DK], false, false);
  BD dV = tensor(g, U_DV, io, h.kv, h.io[MT_CA_DV], false, false);
  BD SSUM = tensor(g, U_SSUM, F32, h.st, h.sts, false, false);
  BD DQA = tensor(g, U_DQACC, F32, h.q, h.io[MT_CA_DQACC], false, false);
  /* D = rowsum(dO * O) */
  int64_t dos[4] = {p->hq * p->sq * p->d, p->sq * p->d, p->hq * p->d, 1};
  BD t1 = virt(g, F32, h.q, dos), t2 = virt(g, F32, h.st, h.sts);
  pw(g, PW_MUL, F32, dO, O, NULL, t1, -1);
  reduce(g, RED_ADD, t1, t2);
  pw(g, PW_MUL, F32, t2, ONE, NULL, SSUM, -1);
  /* P = exp(S - stats) */
  BD s = virt(g, F32, h.s, h.ss);
  matmul(g, Q, KT, s);
  s = score_mods(g, p, &h, s, SC, true, ST);
  BD P = virt(g, F32, h.s, h.ss);
  pw(g, PW_EXP, F32, s, NULL, NULL, P, -1);
  /* dV = P^T dO */
  BD PT = virt(g, io, h.pt, h.pts);
  reshape(g, P, PT);
  grad_kv(g, p, &h, PT, dO, dV, io);
  /* dS = P * (dO V^T - D) * scale */
  BD dP = virt(g, F32, h.s, h.ss), t3 = virt(g, F32, h.s, h.ss), t4 = virt(g, F32, h.s, h.ss);
  BD dS = virt(g, F32, h.s, h.ss);
  matmul(g, dO, VT, dP);
  pw(g, PW_SUB, F32, dP, SSUM, NULL, t3, -1);
  pw(g, PW_MUL, F32, t3, P, NULL, t4, -1);
  pw(g, PW_MUL, F32, t4, SC, NULL, dS, -1);
  /* dK = dS^T Q */
  BD dST = virt(g, io, h.pt, h.pts);
  reshape(g, dS, dST);
  grad_kv(g, p, &h, dST, Q, dK, io);
  /* dQ = dS K, accumulated in float32 */
  BD K = virt(g, F32, h.kv, h.kvs);
  reshape(g, KT, K);
  matmul(g, dS, K, DQA);
  pw(g, PW_IDENTITY, F32, DQA, NULL, NULL, dQ, -1);
}

/* ---- plans ---- */

typedef struct akey {
  int32_t dev, dir, dt, causal, bias, pad;
  int64_t b, hq, hk, sq, skv, d, bias_dims[4], bias_str[4], str[MT_CA_N][4];
} akey;

typedef struct plan {
  akey k;
  bool used, declined;
  BD plan;
  int64_t ws;
  char why[160];
  BD keep[MAXDESC]; /* the descriptors the plan was built from */
  int nkeep;
} plan;

#define NPLANS 64
static plan plans[NPLANS]; /* looked up linearly; the newest replaces the oldest when full */
static int nplans, oldest;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void make_key(const mt_cudnn_attn *p, int dir, akey *k) {
  memset(k, 0, sizeof *k);
  k->dev = p->dev, k->dir = dir, k->dt = (int32_t)p->dt, k->causal = p->causal, k->bias = p->bias != NULL;
  k->b = p->b, k->hq = p->hq, k->hk = p->hk, k->sq = p->sq, k->skv = p->skv, k->d = p->d;
  if (p->bias) memcpy(k->bias_dims, p->bias_dims, sizeof k->bias_dims), memcpy(k->bias_str, p->bias_str, sizeof k->bias_str);
  memcpy(k->str, p->str, sizeof k->str);
}

static void drop_plan(const mt_cudnn_fns *f, plan *e) {
  if (e->plan) f->BackendDestroyDescriptor(e->plan);
  for (int i = 0; i < e->nkeep; i++) f->BackendDestroyDescriptor(e->keep[i]);
  memset(e, 0, sizeof *e);
}

/* Finalizes the graph of g, asks the heuristics for engine configs and
 * keeps the first whose plan finalizes. */
static void choose_plan(builder *g, cudnnHandle_t hd, plan *e) {
  BD graph = make(g, D_OPGRAPH);
  set(g, graph, A_GRAPH_HANDLE, T_HANDLE, 1, &hd);
  set(g, graph, A_GRAPH_OPS, T_DESC, g->nops, g->ops);
  fin(g, graph, "operation graph");
  int modes[2] = {HEUR_A, HEUR_FALLBACK};
  for (int m = 0; m < 2 && !g->err && !e->plan; m++) {
    BD heur = make(g, D_ENGINEHEUR);
    set(g, heur, A_HEUR_GRAPH, T_DESC, 1, &graph);
    set(g, heur, A_HEUR_MODE, T_HEUR_MODE, 1, &modes[m]);
    fin(g, heur, "heuristics");
    enum { NCFG = 8 };
    BD cfg[NCFG];
    int64_t n = 0;
    for (int i = 0; i < NCFG; i++) cfg[i] = make(g, D_ENGINECFG);
    if (g->err) break;
    cudnnStatus_t s = g->f->BackendGetAttribute(heur, A_HEUR_RESULTS, T_DESC, NCFG, &n, cfg);
    if (s) {
      failed(g, s, "heuristics results");
      break;
    }
    for (int64_t i = 0; i < n && i < NCFG && !e->plan; i++) {
      BD pl = NULL;
      if (g->f->BackendCreateDescriptor(D_PLAN, &pl)) continue;
      cudnnStatus_t a = g->f->BackendSetAttribute(pl, A_PLAN_HANDLE, T_HANDLE, 1, &hd);
      if (!a) a = g->f->BackendSetAttribute(pl, A_PLAN_CONFIG, T_DESC, 1, &cfg[i]);
      if (!a) a = g->f->BackendFinalize(pl);
      int64_t ws = 0, cnt = 0;
      if (!a) a = g->f->BackendGetAttribute(pl, A_PLAN_WORKSPACE, T_INT64, 1, &cnt, &ws);
      if (a) {
        if (debug_on()) {
          char msg[512] = "";
          if (g->f->GetLastErrorString) g->f->GetLastErrorString(msg, sizeof msg);
          fprintf(stderr, "cudnn_attn: engine config %d (heuristics mode %d) refused: %s %s\n", (int)i, modes[m],
                  g->f->GetErrorString(a), msg);
        }
        g->f->BackendDestroyDescriptor(pl);
        continue;
      }
      e->plan = pl, e->ws = ws;
    }
  }
  if (!e->plan && !g->err) snprintf(g->what, sizeof g->what, "no cuDNN engine accepts the graph");
}

/* The cached plan of p in direction dir (0 forward, 1 backward), built on
 * first use; copies the entry's plan, workspace and decline reason. */
static mt_status get_plan(const mt_cudnn_fns *f, const mt_cudnn_attn *p, int dir, cudnnHandle_t hd, BD *out,
                          int64_t *ws, char *why, size_t nwhy) {
  akey k;
  make_key(p, dir, &k);
  pthread_mutex_lock(&lock);
  plan *e = NULL;
  for (int i = 0; i < nplans && !e; i++)
    if (plans[i].used && !memcmp(&plans[i].k, &k, sizeof k)) e = &plans[i];
  if (!e) {
    if (nplans < NPLANS) e = &plans[nplans++];
    else e = &plans[oldest], oldest = (oldest + 1) % NPLANS, drop_plan(f, e);
    builder g;
    memset(&g, 0, sizeof g);
    g.f = f, g.next_uid = V0;
    if (dir == 0) build_fwd(&g, p);
    else build_bwd(&g, p);
    choose_plan(&g, hd, e);
    e->k = k, e->used = true;
    memcpy(e->keep, g.keep, sizeof g.keep), e->nkeep = g.nkeep;
    if (!e->plan) {
      e->declined = true;
      if (g.err) snprintf(e->why, sizeof e->why, "cuDNN refused the graph (%s: %s)", g.what, f->GetErrorString(g.err));
      else snprintf(e->why, sizeof e->why, "%s", g.what);
    }
  }
  *out = e->plan, *ws = e->ws;
  if (e->declined) snprintf(why, nwhy, "%s", e->why);
  pthread_mutex_unlock(&lock);
  return MT_OK;
}

const char *mt_cudnn_attn_unavailable(int dev) {
  const char *why = NULL;
  if (!mt_cudnn_lib(NULL, &why)) return why;
  int maj = 0, min = 0;
  if (mt_cuda_capability(dev, &maj, &min)) return "the GPU's compute capability is unknown";
  if (maj < 8) return "cuDNN fused attention needs compute capability 8.0 or newer";
  if (mt_cudnn_stats().version < 90000) return "cuDNN fused attention needs cuDNN 9";
  return NULL;
}

/* Runs the plan of p (dir) on the uids and pointers given. */
static mt_status run(const mt_cudnn_attn *p, int dir, const int64_t *uids, void **ptrs, int n, char *why,
                     size_t nwhy) {
  const char *op = dir ? "scaled_dot_product_attention backward (cuDNN)" : "scaled_dot_product_attention (cuDNN)";
  why[0] = 0;
  const char *na = mt_cudnn_attn_unavailable(p->dev);
  if (na) {
    snprintf(why, nwhy, "%s", na);
    return MT_OK;
  }
  const mt_cudnn_fns *f = mt_cudnn_lib(NULL, NULL);
  cudnnHandle_t hd = NULL;
  cudnnStatus_t s = mt_cudnn_handle(p->dev, &hd);
  if (s) return mt_fail(MT_EDEVICE, "%s: no cuDNN handle (%s)", op, f->GetErrorString(s));
  BD pl = NULL;
  int64_t wsn = 0;
  mt_status st = get_plan(f, p, dir, hd, &pl, &wsn, why, nwhy);
  if (st || why[0]) return st;
  void *ws = NULL;
  if (wsn > 0 && (st = mt_cuda_malloc(p->dev, (size_t)wsn, &ws))) return st;
  builder g;
  memset(&g, 0, sizeof g);
  g.f = f;
  BD vp = make(&g, D_VARPACK);
  set(&g, vp, A_VP_UIDS, T_INT64, n, uids);
  set(&g, vp, A_VP_PTRS, T_VOID_PTR, n, ptrs);
  set(&g, vp, A_VP_WORKSPACE, T_VOID_PTR, 1, &ws);
  fin(&g, vp, "variant pack");
  if (!g.err) {
    mt_cuda_note_launch(p->dev, op);
    s = f->BackendExecute(hd, pl, vp);
    if (s) failed(&g, s, "execute");
  }
  if (vp) f->BackendDestroyDescriptor(vp);
  if (ws) mt_cuda_free(p->dev, ws);
  if (g.err) return mt_fail(MT_EDEVICE, "%s: %s failed (%s)", op, g.what, f->GetErrorString(g.err));
  return MT_OK;
}

static const float LOWEST = -3.402823466e38f;

mt_status mt_cudnn_attn_fwd(const mt_cudnn_attn *p, const void *q, const void *k, const void *v, void *o,
                            float *stats, char *why, size_t nwhy) {
  float scale = p->scale, lowest = LOWEST;
  int64_t uids[MAXUIDS] = {U_Q, U_K, U_V, U_O, U_STATS, U_SCALE};
  void *ptrs[MAXUIDS] = {(void *)q, (void *)k, (void *)v, o, stats, &scale};
  int n = 6;
  if (p->bias) uids[n] = U_BIAS, ptrs[n++] = (void *)p->bias;
  if (p->causal) uids[n] = U_LOWEST, ptrs[n++] = &lowest;
  return run(p, 0, uids, ptrs, n, why, nwhy);
}

mt_status mt_cudnn_attn_bwd(const mt_cudnn_attn *p, const void *q, const void *k, const void *v, const void *o,
                            const void *dout, const float *stats, void *dq, void *dk, void *dv, float *ssum,
                            float *dq_acc, char *why, size_t nwhy) {
  float scale = p->scale, lowest = LOWEST, one = 1;
  int64_t uids[MAXUIDS] = {U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_ONE, U_DO, U_DQ, U_DK, U_DV, U_SSUM, U_DQACC};
  void *ptrs[MAXUIDS] = {(void *)q, (void *)k, (void *)v, (void *)o, (void *)stats, &scale, &one, (void *)dout,
                         dq, dk, dv, ssum, dq_acc};
  int n = 13;
  if (p->bias) uids[n] = U_BIAS, ptrs[n++] = (void *)p->bias;
  if (p->causal) uids[n] = U_LOWEST, ptrs[n++] = &lowest;
  return run(p, 1, uids, ptrs, n, why, nwhy);
}
