/* kernels.c -- CUDA elementwise ops, fills, copies and casts through one
 * kernel family (elementwise.cu): for each (op, dtypes, operand kinds) the
 * family's source is prefixed with a few definitions and compiled by NVRTC
 * (nvrtc.c caches it). Each op's expression comes from its registry row;
 * promotion and flags follow the CPU path (elementwise.c). Host <-> device
 * transfers are here too. Nothing reads device memory from the host. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_api.h"
#include "files.h"
#include "mt_cuda.h"

extern const char mt_cuda_elementwise_cu[];
extern const char mt_cuda_common_cu[];

/* Per dtype: storage type, compute type, load and store expressions. */
static const mt_cuda_dtinfo dts[MT_NDTYPE] = {
    [MT_FLOAT32] = {"float", "float", "(x)", "(float)(v)"},
    [MT_FLOAT64] = {"double", "double", "(x)", "(double)(v)"},
    [MT_FLOAT16] = {"mt_half", "float", "h2f(x)", "f2h((float)(v))"},
    [MT_BFLOAT16] = {"mt_bf16", "float", "b2f(x)", "f2b((float)(v))"},
    [MT_INT8] = {"signed char", "signed char", "(x)", "(signed char)(long long)(v)"},
    [MT_INT16] = {"short", "short", "(x)", "(short)(long long)(v)"},
    [MT_INT32] = {"int", "int", "(x)", "(int)(long long)(v)"},
    [MT_INT64] = {"long long", "long long", "(x)", "(long long)(v)"},
    [MT_UINT8] = {"unsigned char", "unsigned char", "(x)", "(unsigned char)(long long)(v)"},
    [MT_BOOL] = {"unsigned char", "bool", "((x) != 0)", "(unsigned char)((v) != 0)"},
    [MT_UINT16] = {"unsigned short", "unsigned short", "(x)", "(unsigned short)(long long)(v)"},
    /* complex: kernels that move elements take them as CUDA's vector pairs;
     * arithmetic on them does not compile (the engine does it by parts,
     * tensor/complex_parts.c) */
    [MT_COMPLEX64] = {"float2", "float2", "(x)", "(v)"},
    [MT_COMPLEX128] = {"double2", "double2", "(x)", "(v)"},
};


const mt_cuda_dtinfo *mt_cuda_dt(mt_dtype dt) { return &dts[dt]; }

/* Members already looked up, by their definitions, family body (a static
 * string: its address names it) and kernel name: launching a known member
 * hashes its few hundred bytes of definitions instead of assembling and
 * hashing the whole source (which cost about 30 us per small op). */
typedef struct member {
  struct member *next;
  uint64_t h;
  const char *body;
  int dev;
  char *defs;
  char name[48];
  void *fn;
} member;
#define NMEMBER 1024
static member *members[NMEMBER];
static pthread_mutex_t members_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t member_hash(int dev, const char *defs, const char *body, const char *name) {
  uint64_t h = mt_fnv1a(name, strlen(name), 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)body ^ (uint64_t)dev);
  return mt_fnv1a(defs, strlen(defs), h);
}

static void *known_member(int dev, const char *defs, const char *body, const char *name, uint64_t h) {
  void *fn = NULL;
  pthread_mutex_lock(&members_lock);
  for (member *m = members[h % NMEMBER]; m && !fn; m = m->next)
    if (m->h == h && m->body == body && m->dev == dev && !strcmp(m->name, name) && !strcmp(m->defs, defs)) fn = m->fn;
  pthread_mutex_unlock(&members_lock);
  return fn;
}

static void remember_member(int dev, const char *defs, const char *body, const char *name, uint64_t h, void *fn) {
  member *m = calloc(1, sizeof *m);
  if (!m || strlen(name) >= sizeof m->name || !(m->defs = strdup(defs))) {
    if (m) free(m->defs);
    free(m);
    return; /* not remembered: found again the slow way next time */
  }
  m->h = h, m->body = body, m->dev = dev, m->fn = fn;
  strcpy(m->name, name);
  pthread_mutex_lock(&members_lock);
  m->next = members[h % NMEMBER];
  members[h % NMEMBER] = m;
  pthread_mutex_unlock(&members_lock);
}

mt_status mt_cuda_family(int dev, const char *defs, const char *body, const char *name, void **fn) {
  uint64_t h = member_hash(dev, defs, body, name);
  if ((*fn = known_member(dev, defs, body, name, h))) return mt_cuda_note_mem_hit(), MT_OK;
  size_t a = strlen(defs), b = strlen(mt_cuda_common_cu), c = strlen(body);
  char *src = malloc(a + b + c + 1);
  if (!src) return mt_fail(MT_ENOMEM, "out of memory");
  memcpy(src, defs, a);
  memcpy(src + a, mt_cuda_common_cu, b);
  memcpy(src + a + b, body, c + 1);
  mt_status st = mt_cuda_kernel(dev, src, name, fn);
  free(src);
  if (!st) remember_member(dev, defs, body, name, h, *fn);
  return st;
}

/* The CUDA expression of op over compute values a, b of type T: its
 * registry row's (tensor/ops.def; the dialect is in elementwise.cu), one
 * for floating T and one for integer and bool T (NULL: none). */
static const char *op_expression(mt_op op, mt_dtype cdt) {
  if (op == MT_OP_bitwise_not && cdt == MT_BOOL) return "!a";
  return mt_is_floating(cdt) ? mt_ops[op].fexpr : mt_ops[op].iexpr;
}

typedef mt_cuda_operand operand;
typedef mt_cuda_geo geo;

/* Strides of t (in elements) broadcast to shape[nd]: 0 where t has size 1
 * or lacks the dimension. */
static void bstrides(const mt_tensor *t, const int64_t *shape, int nd, int64_t *st) {
  for (int d = 0; d < nd; d++) {
    int td = d - (nd - (t ? t->ndim : 0));
    st[d] = (t && td >= 0 && t->shape[td] != 1) ? t->strides[td] : 0;
  }
}

/* Fills g for out and up to two inputs, dropping size-1 dimensions and
 * merging dimensions that are contiguous in every operand. Returns true
 * when every tensor is dense in the same order (the contiguous kernel). */
static bool make_geo(const mt_tensor *o, const operand *in, int nin, geo *g) {
  int64_t st[3][MT_MAXDIM];
  int nd = o->ndim;
  bstrides(o, o->shape, nd, st[0]);
  for (int k = 0; k < 2; k++) bstrides(k < nin ? in[k].t : NULL, o->shape, nd, st[k + 1]);
  memset(g, 0, sizeof *g);
  g->n = mt_numel(o);
  int m = 0;
  for (int d = 0; d < nd; d++) {
    if (o->shape[d] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; k < 3 && merge; k++) merge = g->st[k][m - 1] == st[k][d] * o->shape[d];
    if (merge) {
      g->size[m - 1] *= o->shape[d];
      for (int k = 0; k < 3; k++) g->st[k][m - 1] = st[k][d];
    } else {
      g->size[m] = o->shape[d];
      for (int k = 0; k < 3; k++) g->st[k][m] = st[k][d];
      m++;
    }
  }
  g->nd = m;
  if (m > 1) return false;
  if (m == 0) return true;
  for (int k = 0; k < 3; k++) {
    bool is_tensor = k == 0 || (k - 1 < nin && in[k - 1].t);
    if (is_tensor && g->st[k][0] != 1) return false;
  }
  return true;
}

static mt_status build_ew(const char *name, const char *expr, mt_dtype cdt, mt_tensor *out, const operand *in,
                          int nin, bool contig, int dev, void **fn);

/* What selects an elementwise member: the expression (a static string of
 * the table above, so its address names it), the dtypes and operand kinds.
 * A launch of a member seen before finds its kernel by this key alone,
 * without writing out and hashing the definitions (about 1 us a launch). */
typedef struct {
  const char *expr;
  int8_t dev, out, a, b, cdt, nin, ascalar, bscalar, sint, contig;
} ew_key;
#define NEWKEY 2048
static struct {
  ew_key k;
  void *fn;
} ew_seen[NEWKEY];
static pthread_mutex_t ew_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned ew_slot(const ew_key *k) {
  return (unsigned)(mt_fnv1a(k, sizeof *k, 0xcbf29ce484222325ull) % NEWKEY);
}

static void *ew_lookup(const ew_key *k) {
  unsigned i = ew_slot(k);
  pthread_mutex_lock(&ew_lock);
  void *fn = memcmp(&ew_seen[i].k, k, sizeof *k) == 0 ? ew_seen[i].fn : NULL;
  pthread_mutex_unlock(&ew_lock);
  return fn;
}

static void ew_remember(const ew_key *k, void *fn) {
  unsigned i = ew_slot(k);
  pthread_mutex_lock(&ew_lock);
  ew_seen[i].k = *k, ew_seen[i].fn = fn; /* a collision replaces the older one */
  pthread_mutex_unlock(&ew_lock);
}

/* Builds and launches the family member computing out = expr(a[, b]) in
 * compute dtype cdt. Tensors must be on out's device. keyed: expr is a
 * static string (its address may name the member); an expression written
 * for this call is found by its text instead. */
static mt_status launch_ew(const char *name, const char *expr, mt_dtype cdt, mt_tensor *out, const operand *in,
                           int nin, bool keyed) {
  int dev = mt_tdevice(out).index;
  geo g;
  bool contig = make_geo(out, in, nin, &g);
  ew_key key;
  memset(&key, 0, sizeof key); /* the padding is hashed and compared too */
  key.expr = expr, key.dev = (int8_t)dev, key.out = (int8_t)out->dtype, key.a = (int8_t)in[0].dt;
  key.b = (int8_t)(nin > 1 ? (int)in[1].dt : -1), key.cdt = (int8_t)cdt, key.nin = (int8_t)nin;
  key.ascalar = in[0].t == NULL, key.bscalar = nin > 1 && in[1].t == NULL, key.contig = contig;
  for (int k = 0; k < nin; k++)
    if (!in[k].t) key.sint = !mt_is_floating(in[k].dt);
  void *fn = keyed ? ew_lookup(&key) : NULL;
  if (fn) mt_cuda_note_mem_hit();
  mt_status st = fn ? MT_OK : build_ew(name, expr, cdt, out, in, nin, contig, dev, &fn);
  if (st) return st;
  if (keyed) ew_remember(&key, fn);
  mt_bump_version(out);
  if (contig && keyed) { /* a dense op waits to be fused with the next ones */
    mt_cuda_ewop op = {name, expr, cdt, key.sint, nin, out, {in[0], nin > 1 ? in[1] : in[0]}, g.n, fn};
    if (mt_cuda_lazy_add(dev, &op)) return MT_OK;
  }
  CUdeviceptr po = (CUdeviceptr)(uintptr_t)mt_data(out), pa = 0, pb = 0;
  if (in[0].t) pa = (CUdeviceptr)(uintptr_t)mt_data(in[0].t);
  if (nin > 1 && in[1].t) pb = (CUdeviceptr)(uintptr_t)mt_data(in[1].t);
  double fa = in[0].f, fb = nin > 1 ? in[1].f : 0;
  long long ia = in[0].i, ib = nin > 1 ? in[1].i : 0;
  void *args[] = {&po, &pa, &pb, &fa, &ia, &fb, &ib, &g};
  return mt_cuda_launch(dev, fn, g.n, args, name);
}

/* Writes out the member's definitions and finds (or compiles) its kernel. */
static mt_status build_ew(const char *name, const char *expr, mt_dtype cdt, mt_tensor *out, const operand *in,
                          int nin, bool contig, int dev, void **fn) {
  char src[1024]; /* the member's definitions */
  const char *ta = dts[in[0].dt].store, *tb = nin > 1 ? dts[in[1].dt].store : "char";
  bool sint = false;
  for (int k = 0; k < nin; k++)
    if (!in[k].t) sint = !mt_is_floating(in[k].dt);
  int len = snprintf(src, 1024,
                     "#define TO %s\n#define WO(v) %s\n#define TA %s\n#define LA(x) %s\n#define TB %s\n#define LB(x) %s\n"
                     "#define T %s\n#define EXPR(a, b) (%s)\n#define NIN %d\n#define ASCALAR %d\n#define BSCALAR %d\n"
                     "#define SCALAR_INT %d\n",
                     dts[out->dtype].store, dts[out->dtype].write, ta, dts[in[0].dt].load, tb,
                     nin > 1 ? dts[in[1].dt].load : "(x)", dts[cdt].compute, expr, nin, in[0].t == NULL,
                     nin > 1 && in[1].t == NULL, sint);
  if (len < 0 || (size_t)len >= sizeof src) return mt_fail(MT_EARG, "%s: kernel source too long", name);
  return mt_cuda_family(dev, src, mt_cuda_elementwise_cu, contig ? "mt_ew_contig" : "mt_ew_strided", fn);
}

/* A 0-dim CPU tensor (a Lua number or a CPU scalar) as a by-value operand. */
static operand host_scalar(const mt_tensor *t) {
  operand o = {NULL, (mt_dtype)t->dtype, 0, 0};
  mt_scalar s;
  mt_item(t, &s);
  o.f = mt_scalar_f(s);
  o.i = mt_scalar_i(s);
  return o;
}

static bool is_host_scalar(const mt_tensor *t) { return mt_tdevice(t).type == MT_CPU && t->ndim == 0; }

static mt_status device_mismatch(const char *op, const mt_tensor *a, const mt_tensor *b) {
  char x[32], y[32];
  return mt_fail(MT_EDEVICE, "%s: expected all tensors on the same device, got %s and %s", op,
                 mt_device_str(mt_tdevice(a), x, sizeof x), mt_device_str(mt_tdevice(b), y, sizeof y));
}

/* The result tensor: a fresh one on dev, or *out when given (same shape;
 * if its dtype differs a temporary of dt is used and copied into it). */
static mt_status prepare_out(const char *name, const int64_t *shape, int nd, mt_dtype dt, mt_device dev,
                             mt_tensor **out, mt_tensor **target) {
  mt_tensor *o = *out;
  if (!o) return mt_empty(shape, nd, dt, dev, target);
  bool same = o->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = o->shape[i] == shape[i];
  if (!same) {
    char a[128], b[128];
    return mt_fail(MT_ESHAPE, "%s: out= has shape %s but the result has shape %s", name,
                   mt_shape_str(o->shape, o->ndim, a, sizeof a), mt_shape_str(shape, nd, b, sizeof b));
  }
  if (!mt_same_device(mt_tdevice(o), dev)) {
    char a[32], b[32];
    return mt_fail(MT_EDEVICE, "%s: expected all tensors on the same device, got out= on %s and inputs on %s", name,
                   mt_device_str(mt_tdevice(o), a, sizeof a), mt_device_str(dev, b, sizeof b));
  }
  if ((mt_dtype)o->dtype == dt) {
    *target = mt_retain(o);
    return MT_OK;
  }
  if (mt_dtype_category(dt) > mt_dtype_category((mt_dtype)o->dtype)) /* PyTorch's can_cast, as on the CPU */
    return mt_fail(MT_EDTYPE, "%s: result type %s can't be cast to the output's dtype %s", name, mt_dtype_name(dt),
                   mt_dtype_name((mt_dtype)o->dtype));
  return mt_empty(shape, nd, dt, dev, target);
}

/* Hands the computed target over to *out (copying when it was a temporary). */
static mt_status finish_out(mt_status st, mt_tensor *target, mt_tensor **out) {
  if (st) {
    mt_release(target);
    return st;
  }
  if (!*out) {
    target->storage->version = 0; /* a fresh result, as on the CPU */
    *out = target;
    return MT_OK;
  }
  if (target != *out) st = mt_cuda_copy_(*out, target, false);
  mt_release(target);
  return st;
}

mt_status mt_cuda_unary(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out) {
  const mt_opinfo *info = &mt_ops[op];
  mt_device dev = mt_tdevice(x);
  if (dev.type != MT_CUDA) return device_mismatch(info->name, x, *out);
  mt_status st = mt_cuda_check_device(dev, info->name);
  if (st) return st;
  mt_dtype dt = (mt_dtype)x->dtype, cdt;
  if ((st = mt_unary_cdt(op, dt, &cdt))) return st;
  const char *e = op_expression(op, cdt);
  if (!e) return mt_cuda_unsupported(info->name);
  mt_tensor *target = NULL;
  if ((st = prepare_out(info->name, x->shape, x->ndim, (info->flags & MT_F_PRED) ? MT_BOOL : cdt, dev, out, &target)))
    return st;
  double p0 = p ? *p : info->pdefault; /* an op's number parameter is its operand b (p0 in elementwise.cu) */
  operand in[2] = {{x, dt, 0, 0}, {NULL, MT_FLOAT64, p0, (long long)p0}};
  return finish_out(launch_ew(info->name, e, cdt, target, in, info->param ? 2 : 1, true), target, out);
}

mt_status mt_cuda_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_opinfo *info = &mt_ops[op];
  bool ha = is_host_scalar(a) && mt_tdevice(b).type == MT_CUDA, hb = is_host_scalar(b) && mt_tdevice(a).type == MT_CUDA;
  if (!ha && !hb && !mt_same_device(mt_tdevice(a), mt_tdevice(b))) return device_mismatch(info->name, a, b);
  mt_device dev = ha ? mt_tdevice(b) : mt_tdevice(a);
  if (dev.type != MT_CUDA) return device_mismatch(info->name, a, *out);
  mt_status st = mt_cuda_check_device(dev, info->name);
  if (st) return st;
  mt_dtype cdt;
  if ((st = mt_binary_cdt(op, a, b, &cdt))) return st;
  const char *e = op_expression(op, cdt);
  if (!e) return mt_cuda_unsupported(info->name);
  int64_t shape[MT_MAXDIM];
  int nd = 0;
  if ((st = mt_broadcast_shape(info->name, a->shape, a->ndim, b->shape, b->ndim, shape, &nd))) return st;
  mt_tensor *target = NULL;
  mt_dtype odt = info->kind == MT_K_COMPARE ? MT_BOOL : cdt;
  if ((st = prepare_out(info->name, shape, nd, odt, dev, out, &target))) return st;
  operand in[2] = {{a, (mt_dtype)a->dtype, 0, 0}, {b, (mt_dtype)b->dtype, 0, 0}};
  if (ha) in[0] = host_scalar(a);
  if (hb) in[1] = host_scalar(b);
  return finish_out(launch_ew(info->name, e, cdt, target, in, 2, true), target, out);
}

/* out = expr(x, p) for a floating x and a number p (b in expr), in x's
 * dtype; expr is static when keyed. */
static mt_status param_unary(const char *name, const char *expr, bool keyed, const mt_tensor *x, double p,
                             mt_tensor **out) {
  mt_status st = mt_cuda_check_device(mt_tdevice(x), name);
  if (st) return st;
  mt_dtype dt = (mt_dtype)x->dtype;
  mt_tensor *target = NULL;
  if ((st = prepare_out(name, x->shape, x->ndim, dt, mt_tdevice(x), out, &target))) return st;
  operand in[2] = {{x, dt, 0, 0}, {NULL, MT_FLOAT64, p, (long long)p}};
  return finish_out(launch_ew(name, expr, dt, target, in, 2, keyed), target, out);
}

/* The replacements are written into the expression as literals. */
mt_status mt_cuda_nan_to_num(const mt_tensor *x, double nan, double posinf, double neginf, mt_tensor **out) {
  char e[256];
  snprintf(e, sizeof e, "(a != a ? (T)(%.17g) : a - a != a - a ? (a > (T)0 ? (T)(%.17g) : (T)(%.17g)) : a)", nan,
           posinf, neginf);
  return param_unary("nan_to_num", e, false, x, 0, out);
}

mt_status mt_cuda_launch_cost(int dev, int n, double *us) {
  static const char body[] = "extern \"C\" __global__ void mt_noop(int x) {}\n";
  mt_device d = {MT_CUDA, (int8_t)dev};
  mt_status st = mt_cuda_check_device(d, "_launch_cost");
  void *fn = NULL;
  if (!st) st = mt_cuda_family(dev, "", body, "mt_noop", &fn);
  if (!st) st = mt_cuda_synchronize(dev);
  int x = 0;
  void *args[] = {&x};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n && !st; i++) st = mt_cuda_launch(dev, fn, 1, args, "_launch_cost");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!st) st = mt_cuda_synchronize(dev);
  *us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / (n > 0 ? n : 1);
  return st;
}

mt_status mt_cuda_fill_(mt_tensor *dst, mt_scalar v) {
  mt_status st = mt_cuda_check_device(mt_tdevice(dst), "fill_");
  if (st) return st;
  operand in = {NULL, v.kind == MT_SK_FLOAT ? MT_FLOAT64 : (v.kind == MT_SK_BOOL ? MT_BOOL : MT_INT64),
                mt_scalar_f(v), (long long)mt_scalar_i(v)};
  mt_dtype cdt = (mt_dtype)dst->dtype;
  if (mt_is_floating(in.dt) && !mt_is_floating(cdt)) cdt = MT_FLOAT64; /* the store truncates */
  return launch_ew("fill_", "a", cdt, dst, &in, 1, true);
}

/* ---- copies ---- */

static bool dense(const mt_tensor *t) { return mt_is_contiguous(t); }

static bool same_shape(const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static bool pinned(const mt_tensor *t) { return t->storage->pinned; }

/* Host <-> device copy of dense same-dtype same-shape tensors. */
static mt_status transfer(mt_tensor *dst, const mt_tensor *src, bool non_blocking) {
  bool up = mt_tdevice(dst).type == MT_CUDA;
  int dev = up ? mt_tdevice(dst).index : mt_tdevice(src).index;
  size_t n = (size_t)mt_numel(src) * mt_elsize(src);
  if (n == 0) return MT_OK;
  mt_cuda_stream s = mt_cuda_current_stream(dev);
  CUresult r = up ? mt_cu.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)mt_data(dst), mt_data(src), n, s.handle)
                  : mt_cu.MemcpyDtoHAsync(mt_data(dst), (CUdeviceptr)(uintptr_t)mt_data(src), n, s.handle);
  mt_status st = mt_cuda_check(r, dev, up ? "copy to cuda" : "copy to cpu");
  if (st) return st;
  /* pageable memory: the source may change or the result be read as soon as
   * we return, so wait; pinned memory with non_blocking stays asynchronous */
  if (!(non_blocking && pinned(up ? src : dst)))
    st = mt_cuda_check(mt_cu.StreamSynchronize(s.handle), dev, up ? "copy to cuda" : "copy to cpu");
  return st;
}

mt_status mt_cuda_copy_(mt_tensor *dst, const mt_tensor *src, bool non_blocking) {
  mt_device dd = mt_tdevice(dst), sd = mt_tdevice(src);
  mt_status st;
  if ((st = mt_cuda_check_device(dd, "copy_")) || (st = mt_cuda_check_device(sd, "copy_"))) return st;
  if (dd.type == MT_CUDA && sd.type == MT_CUDA) {
    if (dd.index != sd.index) return mt_cuda_unsupported("copy_ between two GPUs");
    int64_t shape[MT_MAXDIM];
    int nd = 0;
    if ((st = mt_broadcast_shape("copy_", dst->shape, dst->ndim, src->shape, src->ndim, shape, &nd))) return st;
    if (nd != dst->ndim || mt_numel(dst) != mt_checked_numel(shape, nd)) {
      char a[128], b[128];
      return mt_fail(MT_ESHAPE, "copy_: source of shape %s cannot be broadcast to shape %s",
                     mt_shape_str(src->shape, src->ndim, a, sizeof a), mt_shape_str(dst->shape, dst->ndim, b, sizeof b));
    }
    if (dst->dtype == src->dtype && same_shape(dst, src) && dense(dst) && dense(src)) {
      size_t n = (size_t)mt_numel(src) * mt_elsize(src);
      mt_bump_version(dst);
      if (n == 0 || mt_data(dst) == mt_data(src)) return MT_OK;
      mt_cuda_stream s = mt_cuda_current_stream(dd.index);
      return mt_cuda_check(mt_cu.MemcpyDtoDAsync((CUdeviceptr)(uintptr_t)mt_data(dst),
                                              (CUdeviceptr)(uintptr_t)mt_data(src), n, s.handle),
                           dd.index, "copy_");
    }
    operand in = {src, (mt_dtype)src->dtype, 0, 0};
    return launch_ew("copy_", "a", (mt_dtype)src->dtype, dst, &in, 1, true);
  }
  /* between host and device: move the bytes as they are (made dense, in
   * the dtype and shape of dst on the host side), then convert on the
   * device side if needed */
  bool up = dd.type == MT_CUDA;
  if (up && src->ndim == 0 && !same_shape(dst, src)) { /* a host number broadcast: a fill */
    mt_scalar v;
    if ((st = mt_item(src, &v))) return st;
    if (mt_is_floating((mt_dtype)src->dtype)) v = mt_sfloat(mt_scalar_f(v));
    return mt_cuda_fill_(dst, v);
  }
  mt_tensor *h = NULL, *d = NULL;
  if (up) {
    /* host side: src broadcast to dst's shape, dense, in src's dtype */
    if (same_shape(dst, src) && dense(src)) {
      h = mt_retain((mt_tensor *)src);
    } else if (!(st = mt_empty(dst->shape, dst->ndim, (mt_dtype)src->dtype, sd, &h))) {
      st = mt_copy_(h, src);
    }
    if (!st && dst->dtype == src->dtype && dense(dst)) {
      mt_bump_version(dst);
      st = transfer(dst, h, non_blocking && h == src);
    } else if (!st && !(st = mt_empty(dst->shape, dst->ndim, (mt_dtype)src->dtype, dd, &d)) &&
               !(st = transfer(d, h, false))) {
      st = mt_cuda_copy_(dst, d, false);
    }
  } else {
    /* device side: src made dense in dst's dtype and shape, then down */
    if (same_shape(dst, src) && dense(src) && dst->dtype == src->dtype) {
      d = mt_retain((mt_tensor *)src);
    } else if (!(st = mt_empty(dst->shape, dst->ndim, (mt_dtype)dst->dtype, sd, &d))) {
      st = mt_cuda_copy_(d, src, false);
    }
    if (!st && dense(dst)) {
      mt_bump_version(dst);
      st = transfer(dst, d, non_blocking);
    } else if (!st && !(st = mt_empty(dst->shape, dst->ndim, (mt_dtype)dst->dtype, dd, &h)) &&
               !(st = transfer(h, d, false))) {
      st = mt_copy_(dst, h);
    }
  }
  mt_release(h);
  mt_release(d);
  return st;
}

mt_status mt_cuda_to_device(const mt_tensor *t, mt_device dev, bool non_blocking, mt_tensor **out) {
  if (mt_same_device(mt_tdevice(t), dev)) {
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  mt_tensor *o = NULL;
  mt_status st = mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, dev, &o);
  if (!st) st = mt_copy_nb_(o, t, non_blocking); /* complex tensors go by parts (copy.c) */
  if (st) {
    mt_release(o);
    return st;
  }
  o->storage->version = 0;
  *out = o;
  return MT_OK;
}
