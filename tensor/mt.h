/* mt.h -- the public C API of the moontorch tensor engine.
 * Plain C, no Lua, no autograd: tensors, dtypes, devices, the op registry and
 * the ops themselves. Every fallible function returns mt_status and sets a
 * thread-local message (mt_errmsg) where the fault is found; nothing longjmps.
 * Output convention: `mt_tensor **out`. If *out is NULL a new tensor is
 * allocated and returned with one reference owned by the caller; otherwise the
 * result is written into *out (its shape must match; dtype is converted). */
#ifndef MT_H
#define MT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_MAXDIM 8
#define MT_VERSION "0.1.0"

/* ---- status and errors (status.c) ---- */
typedef enum mt_status {
  MT_OK = 0,
  MT_EARG,    /* bad argument value */
  MT_ESHAPE,  /* shapes do not fit */
  MT_EDTYPE,  /* dtype not supported / mismatch */
  MT_EINDEX,  /* index out of range */
  MT_EDEVICE, /* device mismatch or unavailable */
  MT_ENOMEM,  /* allocation failed or too large */
  MT_EINTR,   /* interrupted by the user (Ctrl-C) */
  MT_ELINALG, /* numerical failure (singular matrix, ...) */
  MT_EIO      /* file or system error */
} mt_status;

/* Sets the thread-local error message (printf format) and returns st. */
mt_status mt_fail(mt_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *mt_errmsg(void);
/* Writes "AxBxC" (or "scalar" for 0-dim) into buf; returns buf. */
char *mt_shape_str(const int64_t *shape, int ndim, char *buf, size_t n);

/* ---- dtypes (dtype.c) ---- */
typedef enum mt_dtype {
  MT_FLOAT32 = 0,
  MT_FLOAT64,
  MT_FLOAT16,
  MT_BFLOAT16,
  MT_INT8,
  MT_INT16,
  MT_INT32,
  MT_INT64,
  MT_UINT8,
  MT_BOOL,
  MT_UINT16, /* after bool: the older dtypes keep their numbers */
  MT_COMPLEX64,  /* two float32: re, im (docs/api/complex.md) */
  MT_COMPLEX128, /* two float64 */
  MT_NDTYPE
} mt_dtype;

/* Per-dtype facts, indexed by mt_dtype (dtype.c): the sizes and
 * categories (0 bool, 1 integral, 2 floating, 3 complex) are tables so that
 * the hot paths inline them. */
extern const uint8_t mt_dtype_sizes[MT_NDTYPE];
extern const uint8_t mt_dtype_categories[MT_NDTYPE];
static inline size_t mt_dtype_size(mt_dtype d) { return mt_dtype_sizes[d]; }
const char *mt_dtype_name(mt_dtype d); /* "float32", ... */
int mt_dtype_from_name(const char *name); /* -1 if unknown */
static inline bool mt_is_floating(mt_dtype d) { return mt_dtype_categories[d] == 2; }
bool mt_is_integral(mt_dtype d); /* ints, uint8 and uint16, not bool */
static inline bool mt_is_complex(mt_dtype d) { return mt_dtype_categories[d] == 3; }
/* Floating or complex: the dtypes that can require gradients. */
static inline bool mt_is_inexact(mt_dtype d) { return mt_dtype_categories[d] >= 2; }
/* complex64 -> float32, complex128 -> float64; other dtypes unchanged. */
mt_dtype mt_complex_part(mt_dtype d);
/* The complex dtype holding d: float64 -> complex128, float32, float16,
 * bfloat16 and the integers -> complex64; complex dtypes unchanged. */
mt_dtype mt_complex_of(mt_dtype d);
/* Set once any complex tensor exists: the bindings' gate looks for complex
 * arguments only from then on. */
extern bool mt_complex_seen;
/* Category: 0 bool, 1 integer, 2 floating, 3 complex. */
int mt_dtype_category(mt_dtype d);
mt_dtype mt_promote_types(mt_dtype a, mt_dtype b);
mt_dtype mt_default_dtype(void);
mt_status mt_set_default_dtype(mt_dtype d);

/* half-precision conversions (dtype.c) */
float mt_half_to_float(uint16_t h);
uint16_t mt_float_to_half(float f);
float mt_bf16_to_float(uint16_t h);
uint16_t mt_float_to_bf16(float f);

/* ---- scalars: Lua numbers and fill values ---- */
typedef enum mt_scalar_kind { MT_SK_BOOL, MT_SK_INT, MT_SK_FLOAT } mt_scalar_kind;
typedef struct mt_scalar {
  mt_scalar_kind kind;
  union {
    int64_t i;
    double f;
  } v;
} mt_scalar;
static inline mt_scalar mt_sint(int64_t i) { mt_scalar s = {MT_SK_INT, {.i = i}}; return s; }
static inline mt_scalar mt_sfloat(double f) { mt_scalar s = {MT_SK_FLOAT, {.f = f}}; return s; }
static inline mt_scalar mt_sbool(bool b) { mt_scalar s = {MT_SK_BOOL, {.i = b}}; return s; }
static inline double mt_scalar_f(mt_scalar s) { return s.kind == MT_SK_FLOAT ? s.v.f : (double)s.v.i; }
static inline int64_t mt_scalar_i(mt_scalar s) { return s.kind == MT_SK_FLOAT ? (int64_t)s.v.f : s.v.i; }

/* ---- devices ---- */
typedef enum mt_devtype { MT_CPU = 0, MT_CUDA = 1 } mt_devtype;
typedef struct mt_device {
  int8_t type;
  int8_t index;
} mt_device;
static inline mt_device mt_cpu(void) { mt_device d = {MT_CPU, 0}; return d; }
static inline bool mt_same_device(mt_device a, mt_device b) { return a.type == b.type && a.index == b.index; }
/* "cpu", "cuda:0" into buf */
const char *mt_device_str(mt_device d, char *buf, size_t n);

/* ---- storage and tensors (storage.c, tensor.c) ---- */
typedef struct mt_storage {
  void *data;
  size_t nbytes;
  int32_t refs;
  uint32_t version; /* bumped by every in-place write; autograd checks it */
  mt_device device;
  uint8_t borrowed; /* memory owned by the caller (see mt_init_borrowed) */
  uint8_t pinned;   /* CPU memory page-locked by the CUDA driver (pin_memory) */
  uint8_t mapped;   /* CPU memory of an mmap'ed region, unmapped on release (mt_from_mapping) */
} mt_storage;

typedef struct mt_tensor {
  mt_storage *storage;
  int64_t offset; /* in elements */
  int64_t shape[MT_MAXDIM];
  int64_t strides[MT_MAXDIM]; /* in elements */
  int32_t refs;
  int8_t ndim;
  int8_t dtype;  /* mt_dtype */
  uint8_t flags; /* MT_TF_* */
  uint8_t borrowed; /* struct owned by the caller (see mt_init_borrowed) */
  void *autograd; /* owned by graph/; NULL for plain tensors */
  struct mt_tensor *base; /* views: the tensor they were made from (owned), never itself a view */
} mt_tensor;

#define MT_TF_WRAPPED 1 /* a Lua number wrapped as a 0-dim tensor (weak promotion) */

/* Builds in caller-owned memory a contiguous CPU tensor t of `shape`, its
 * storage s and its data (at least numel * itemsize bytes, suitably aligned).
 * The engine never frees any of it: the caller frees the memory once its own
 * reference is the only one left. Only code that keeps no reference to its
 * inputs after returning (plain elementwise ops) may be given such a tensor;
 * everything else gets an ordinary copy (mt_clone). */
void mt_init_borrowed(mt_tensor *t, mt_storage *s, void *data, const int64_t *shape, int ndim, mt_dtype dt);
/* True when t and its storage hold no references but the owner's. */
static inline bool mt_borrowed_unshared(const mt_tensor *t) { return t->refs == 1 && t->storage->refs == 1; }

mt_tensor *mt_retain(mt_tensor *t);
void mt_release(mt_tensor *t);
/* One more (one fewer) reference to a storage; the last release frees it. */
void mt_storage_retain(mt_storage *s);
void mt_storage_release(mt_storage *s);
/* Hook called when a tensor with autograd != NULL is freed (set by graph/). */
extern void (*mt_autograd_free_hook)(mt_tensor *t);

/* Product of sizes with overflow check; -1 on overflow. */
int64_t mt_checked_numel(const int64_t *shape, int ndim);
static inline int64_t mt_numel(const mt_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}
static inline size_t mt_elsize(const mt_tensor *t) { return mt_dtype_size((mt_dtype)t->dtype); }
static inline char *mt_data(const mt_tensor *t) {
  return (char *)t->storage->data + t->offset * (int64_t)mt_elsize(t);
}
static inline mt_device mt_tdevice(const mt_tensor *t) { return t->storage->device; }
bool mt_is_contiguous(const mt_tensor *t);
void mt_contiguous_strides(const int64_t *shape, int ndim, int64_t *strides);
/* Bytes held by all CPU storages, each charged 1 KB extra for the tensor and
 * graph structures around it (for GC pacing and tests). */
int64_t mt_cpu_bytes_in_use(void);

/* An uninitialised CPU tensor in page-locked (pinned) memory, for fast and
 * asynchronous copies to a CUDA device; MT_EDEVICE without a driver. */
mt_status mt_empty_pinned(const int64_t *shape, int ndim, mt_dtype dt, mt_tensor **out);
/* Frees the large blocks the allocator keeps for reuse. */
void mt_empty_cache(void);
/* Allocates an uninitialised tensor. Fails cleanly (MT_ENOMEM) when too large. */
mt_status mt_empty(const int64_t *shape, int ndim, mt_dtype dt, mt_device dev, mt_tensor **out);
/* A contiguous CPU tensor of shape over a region mmap'ed by the caller
 * (maplen bytes at map, at least numel * itemsize); the tensor owns the
 * mapping from then on and munmaps it when its storage is released. On
 * failure the region is unmapped too. */
mt_status mt_from_mapping(void *map, size_t maplen, const int64_t *shape, int ndim, mt_dtype dt, mt_tensor **out);
mt_status mt_empty_like(const mt_tensor *t, mt_tensor **out);
mt_status mt_zeros(const int64_t *shape, int ndim, mt_dtype dt, mt_device dev, mt_tensor **out);
mt_status mt_full(const int64_t *shape, int ndim, mt_scalar v, mt_dtype dt, mt_device dev, mt_tensor **out);
/* A 0-dim tensor holding s; dtype as given. */
mt_status mt_scalar_tensor(mt_scalar s, mt_dtype dt, mt_tensor **out);
/* Creates a view sharing base's storage (new reference). No bounds check
 * beyond the storage size; callers validate their own arguments. The view
 * records the tensor it came from (t->base, for autograd's in-place rules). */
mt_status mt_as_strided(const mt_tensor *base, int ndim, const int64_t *shape, const int64_t *strides,
                        int64_t offset, mt_tensor **out);
/* Like mt_as_strided with t's own geometry, but not a view for autograd:
 * no base is recorded (detach, saved tensors). */
mt_status mt_alias(const mt_tensor *t, mt_tensor **out);
/* Reads element (flat index in logical order) as double / int64. */
double mt_get_f64(const mt_tensor *t, const int64_t *idx);
/* Value of a 1-element tensor. */
mt_status mt_item(const mt_tensor *t, mt_scalar *out);
/* Marks an in-place write to t (bumps its storage version). */
static inline void mt_bump_version(mt_tensor *t) { t->storage->version++; }

/* ---- copying and conversion (copy.c) ---- */
/* Copies between devices go through mt_copy_ too (tensor/cuda/kernels.c);
 * mt_copy_nb_ may return before a copy between pinned host memory and a
 * device has finished (synchronize before reading or reusing it). */
mt_status mt_copy_nb_(mt_tensor *dst, const mt_tensor *src, bool non_blocking);
/* dst[...] = src, broadcasting src to dst's shape, converting dtype. */
mt_status mt_copy_(mt_tensor *dst, const mt_tensor *src);
mt_status mt_fill_(mt_tensor *dst, mt_scalar v);
/* New reference: t itself if already contiguous, else a contiguous copy. */
mt_status mt_contiguous(const mt_tensor *t, mt_tensor **out);
mt_status mt_clone(const mt_tensor *t, mt_tensor **out);
/* New reference: t itself if dtype matches (and !copy), else converted copy. */
mt_status mt_to_dtype(const mt_tensor *t, mt_dtype dt, bool copy, mt_tensor **out);

/* Hands a new result r (owned by the caller) over under the `out`
 * convention: stored in *out when it is NULL, else copied into *out (same
 * shape required, dtype converted) and released. r is consumed on every path. */
mt_status mt_deliver(const char *op, mt_tensor *r, mt_tensor **out);

/* ---- views and shape ops (view.c) ---- dims are 0-based here. */
/* Normalises dim (negative counts from the end) for a rank; MT_EINDEX if out. */
mt_status mt_wrap_dim(const char *op, int64_t dim, int ndim, int *out);
mt_status mt_view(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mt_reshape(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mt_permute(const mt_tensor *t, const int *perm, int n, mt_tensor **out);
mt_status mt_transpose(const mt_tensor *t, int d0, int d1, mt_tensor **out);
mt_status mt_expand(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out);
mt_status mt_squeeze(const mt_tensor *t, int dim /* -1: all */, mt_tensor **out);
mt_status mt_unsqueeze(const mt_tensor *t, int dim, mt_tensor **out);
mt_status mt_narrow(const mt_tensor *t, int dim, int64_t start, int64_t len, mt_tensor **out);
mt_status mt_select(const mt_tensor *t, int dim, int64_t index, mt_tensor **out);
/* Slice [start, stop) with step>0 along dim (already clamped by the caller). */
mt_status mt_slice(const mt_tensor *t, int dim, int64_t start, int64_t stop, int64_t step, mt_tensor **out);
mt_status mt_flatten(const mt_tensor *t, int start, int end, mt_tensor **out);
mt_status mt_unfold(const mt_tensor *t, int dim, int64_t size, int64_t step, mt_tensor **out);
mt_status mt_diagonal(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out);
/* Broadcast shape of two shapes; MT_ESHAPE with message naming op. */
mt_status mt_broadcast_shape(const char *op, const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                             int *nout);

/* ---- the op registry (ops.def, ops.c) ---- */
typedef enum mt_opkind {
  MT_K_UNARY,    /* elementwise, one input */
  MT_K_BINARY,   /* elementwise, two inputs, promoted */
  MT_K_COMPARE,  /* elementwise, two inputs, bool result */
  MT_K_TERNARY,  /* elementwise, three inputs */
  MT_K_REDUCE,   /* reductions over dims */
  MT_K_SCAN,     /* cumulative ops */
  MT_K_MOVEMENT, /* views, cat, flip, ... */
  MT_K_INDEX,    /* gather/scatter/index_select/... */
  MT_K_EXTERN,   /* library kernels: matmul, linalg, sort */
  MT_K_RANDOM,   /* RNG draws */
  MT_K_CREATION  /* zeros, arange, ... */
} mt_opkind;

/* flags */
#define MT_F_DIFF 1      /* differentiable: graph/ must provide a derivative */
#define MT_F_NODIFF 2    /* explicitly not differentiable */
#define MT_F_FLOATOUT 4  /* integer inputs give a float result (exp, sqrt, /) */
#define MT_F_NOBOOL 8    /* bool inputs rejected */
#define MT_F_INTONLY 16  /* integer/bool inputs only (bitwise ops) */
#define MT_F_FLOATONLY 32 /* floating inputs only (no int promotion) */
#define MT_F_PRED 64     /* the result is bool (isnan, comparisons) */
#define MT_F_COSTLY 128  /* transcendental: worth keeping rather than computing twice */

/* Devices a row runs on (ops.def's dev column). */
#define MT_DEV_CPU 1
#define MT_DEV_CUDA 3 /* CPU and CUDA */

/* Autocast policies (PyTorch's names; ops.def's autocast column holds one
 * per device type: MT_AC(cpu, cuda)). */
enum { MT_AC_NONE, MT_AC_LOW, MT_AC_FP32, MT_AC_FP32_OPT, MT_AC_PROMOTE, MT_AC_BANNED };
#define MT_AC_BITS 3
#define MT_AC(cpu, cuda) (MT_AC_##cpu | MT_AC_##cuda << MT_AC_BITS)

/* How the JIT lowers a traced op (ops.def's jit column: MT_J(lowering,
 * sizes)): see ops.def. */
enum { MT_J_NONE, MT_J_EXPR, MT_J_DECOMP, MT_J_CALL, MT_J_VIEW, MT_J_NAMED };
enum { MT_JS_STATIC, MT_JS_SAME, MT_JS_REDUCED, MT_JS_MATMUL };
#define MT_J(lower, sizes) (MT_J_##lower | MT_JS_##sizes << 4)
#define MT_J_LOWER(j) ((j) & 15)
#define MT_J_SIZES(j) ((j) >> 4)

typedef enum mt_op {
#define MT_OP(name, ...) MT_OP_##name,
#include "ops.def"
#undef MT_OP
  MT_NOPS
} mt_op;

typedef struct mt_opinfo {
  const char *name;
  mt_opkind kind;
  int arity;
  unsigned flags;
  uint8_t dev;      /* MT_DEV_* */
  uint8_t autocast; /* MT_AC(cpu, cuda) */
  uint8_t jit;      /* MT_J(lowering, sizes) */
  /* elementwise rows (NULL elsewhere): */
  const char *fexpr, *iexpr; /* the expressions for floating and integer/bool compute types (NULL: none) */
  const char *help;          /* the binding's help text (NULL: not bound by the registry walk) */
  const char *param;         /* MT_UNARY_P: the number parameter's name, and its default */
  double pdefault;
} mt_opinfo;
extern const mt_opinfo mt_ops[MT_NOPS];

/* ---- the uniform engine entry (call.c) ----
 * Every op whose row says ENTRY runs through one signature: its tensor
 * inputs (NULL for an absent optional one), its arguments as numbers, and
 * its outputs under the out convention (outs[k] NULL: a new tensor). What
 * args holds for each op is written above its adapter in call.c; graph/
 * records it as the node's and the trace entry's arguments, so a
 * derivative and the JIT read the same words. */
#define MT_NARGI 24
typedef struct mt_args {
  int64_t i[MT_NARGI]; /* dims, a mask of dims, flags, a dtype (-1: default) */
  double f[3];         /* number arguments */
  int ni, nf;          /* how many of each are meaningful */
} mt_args;
typedef mt_status (*mt_call_fn)(const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **outs);
/* The adapter of each op (NULL: NOENTRY rows). */
extern const mt_call_fn mt_call_fns[MT_NOPS];
/* Runs op: MT_EARG naming the op when it has no entry. */
static inline mt_status mt_call(mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a, mt_tensor **outs) {
  extern mt_status mt_call_missing(mt_op op);
  return mt_call_fns[op] ? mt_call_fns[op](ins, nin, a, outs) : mt_call_missing(op);
}
/* The dims set in mask (bit d: dim d) for a rank, in order; returns their
 * count. mt_dim_mask is the inverse: dims (negative from the end; none:
 * all) as a mask (0 for a 0-dim tensor), or the error naming op for a dim
 * out of range or repeated. */
int mt_mask_dims(int64_t mask, int rank, int *dims);
mt_status mt_dim_mask(const char *op, const int *dims, int ndims, int rank, int64_t *mask);
/* Looks an op up by name; -1 if none. */
int mt_op_find(const char *name);

/* Generic elementwise entry points (elementwise.c). */
mt_status mt_unary(mt_op op, const mt_tensor *x, mt_tensor **out);
/* A unary op with its number parameter *p (rows with one, MT_UNARY_P;
 * NULL: the row's default). */
mt_status mt_unary_p(mt_op op, const mt_tensor *x, const double *p, mt_tensor **out);
/* Engine-internal, shared by the CPU and CUDA paths: the compute dtype of
 * op on dt (or on a and b), or the error naming the op when the dtypes do
 * not suit it (integer-only ops on floats, arithmetic on bools). */
mt_status mt_unary_cdt(mt_op op, mt_dtype dt, mt_dtype *cdt);
mt_status mt_binary_cdt(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_dtype *cdt);
/* True for a same-dtype, same-shape, contiguous floating CPU pair under a
 * plain binary op: the result has a's dtype and shape. */
bool mt_binary_is_plain(mt_op op, const mt_tensor *a, const mt_tensor *b);
/* mt_binary for a plain pair of fewer than 2^15 elements into `out`, a fresh
 * contiguous tensor of their shape and dtype (no checks beyond that). */
mt_status mt_binary_small_into(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor *out);
mt_status mt_binary(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* Result dtype of a binary op under PyTorch promotion (wrapped-number aware). */
mt_dtype mt_result_type(const mt_tensor *a, const mt_tensor *b);

/* Elementwise ops with extra scalar parameters (elementwise.c). */
mt_status mt_clamp(const mt_tensor *x, const mt_tensor *lo, const mt_tensor *hi, mt_tensor **out);
mt_status mt_where(const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
mt_status mt_lerp(const mt_tensor *a, const mt_tensor *b, const mt_tensor *w, mt_tensor **out);
mt_status mt_nan_to_num(const mt_tensor *x, double nan, double posinf, double neginf, mt_tensor **out);
mt_status mt_leaky_relu(const mt_tensor *x, double slope, mt_tensor **out);

/* Activations a library call can apply to its own result (the JIT's
 * epilogues: oneDNN post-ops in cpu/conv_dnnl.c and cpu/matmul_dnnl.c).
 * alpha is leaky_relu's slope; the others take none. */
typedef enum mt_act {
  MT_ACT_NONE,
  MT_ACT_RELU,
  MT_ACT_LEAKY_RELU,
  MT_ACT_TANH,
  MT_ACT_SIGMOID,
  MT_ACT_SILU,
  MT_ACT_GELU,
  MT_ACT_GELU_TANH,
  MT_NACT
} mt_act;
const char *mt_act_name(mt_act act); /* "relu", ...; "" for none */
/* act(x) through the unary ops above (the fallback of a library call that
 * cannot apply act itself); MT_ACT_NONE: a new reference to x. */
mt_status mt_activation(const mt_tensor *x, mt_act act, double alpha, mt_tensor **out);

/* ---- threads and interruption (parallel.c) ---- */
int mt_get_num_threads(void);
void mt_set_num_threads(int n);
/* Runs fn(ctx, begin, end) over [0, n) split in chunks of at least grain,
 * in parallel when n >= grain * 2. Returns MT_EINTR if interrupted. */
typedef void (*mt_range_fn)(void *ctx, int64_t begin, int64_t end);
mt_status mt_parallel_for(int64_t n, int64_t grain, mt_range_fn fn, void *ctx);
/* Runs fn(ctx, ith, nth) on each thread of one team of nth threads (<= 0:
 * all); the JIT's generated kernels split their work by (ith, nth). */
typedef void (*mt_team_fn)(void *ctx, int ith, int nth);
mt_status mt_parallel_team(int nth, mt_team_fn fn, void *ctx);
/* Set asynchronously (signal handler) to ask running ops to stop. */
void mt_interrupt(void);
void mt_clear_interrupt(void);
bool mt_interrupted(void);
/* Polling inside one long kernel loop: add the elements just processed to
 * *since; once per MT_POLL_WORK of them, looks at the flag. True means stop
 * now; the op then returns MT_EINTR (mt_parallel_for does when it sees the
 * flag) and its partial results are dropped. */
#define MT_POLL_WORK ((int64_t)1 << 20)
static inline bool mt_poll(int64_t *since, int64_t work) {
  if ((*since += work) < MT_POLL_WORK) return false;
  *since = 0;
  return mt_interrupted();
}
/* A loop over items of `work` elements each looks at the flag once per
 * this many items (run them in blocks: no cost per item). */
static inline int64_t mt_poll_items(int64_t work) {
  return work >= MT_POLL_WORK ? 1 : MT_POLL_WORK / (work > 0 ? work : 1);
}

#endif
