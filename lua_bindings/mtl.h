/* mtl.h -- the Lua bindings' interface (the only layer besides repl/ that
 * includes Lua headers). luaopen_torch builds the `torch` module table.
 * Binding files register functions through mtl_reg tables so that every
 * public function carries a one-line help text. */
#ifndef MTL_H
#define MTL_H

#include <lauxlib.h>
#include <lua.h>

#include "mt.h"
#include "trace.h"

int luaopen_torch(lua_State *L);

/* luaL_where for the bindings: pushes "chunk:line: " of the nearest Lua
 * function at level or above, skipping C functions in between (the op
 * wrappers of the JIT and the profiler sit between a user's line and the
 * op), or "" when there is none. */
void mtl_where(lua_State *L, int level);
/* luaL_error with mtl_where's position: the bindings' errors name the
 * user's line even when a C wrapper calls the op. Every binding file gets
 * it through this macro. */
int mtl_error(lua_State *L, const char *fmt, ...);
#define luaL_error mtl_error

/* Where a registered function goes. */
#define MTL_FN 1     /* torch.name */
#define MTL_METHOD 2 /* x:name() */
#define MTL_BOTH 3

/* A row may leave out `opts` (NULL: the function takes no options table);
 * -Wextra would call that a missing initializer. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

typedef struct mtl_reg {
  const char *name;
  lua_CFunction fn;
  int where;
  const char *help; /* one line: signature -- what it does */
  /* The names its trailing options table may hold, space-separated
   * (PyTorch's names of its parameters); the gate checks every call's
   * table against them. NULL: no options; MTL_DATA: the trailing table is
   * data, never checked. */
  const char *opts;
} mtl_reg;
#define MTL_DATA "*"

/* Registers a NULL-terminated table into torch (at index torch_idx) and the
 * Tensor method table (at methods_idx), recording help texts. */
void mtl_register(lua_State *L, int torch_idx, int methods_idx, const mtl_reg *regs);
/* Creates the metatable `name` of a handle userdata once: __index is a table
 * of methods, and close (if not NULL) is both __gc and __close, so it must
 * be safe to call twice. Leaves the stack as it was. */
void mtl_new_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close);
/* l_cuda.c: pushes r's function behind the gate: the options check and
 * the device check (r must outlive the Lua state: mtl_reg tables are
 * static). */
void mtl_push_gated(lua_State *L, const mtl_reg *r);
/* The registered function running in L (the gate sets it around each
 * call; NULL outside): argument errors name it, and the options audit
 * checks its reads against its declared names. Unreliable after an error
 * was caught, until the next gated call: use it for messages only. */
static inline const mtl_reg *mtl_running(lua_State *L) { return *(const mtl_reg **)lua_getextraspace(L); }
static inline void mtl_set_running(lua_State *L, const mtl_reg *r) { *(const mtl_reg **)lua_getextraspace(L) = r; }
/* The device of new tensors when no device= is given (set_default_device). */
mt_device mtl_default_device(void);
void mtl_set_default_device(mt_device d);
/* Records a help text for the value at the top of the stack. */
void mtl_set_help(lua_State *L, const char *text);

/* ---- tensors as userdata (tensor_ud.c) ---- */
#define MTL_TENSOR "torch.Tensor"
/* Pushes a new userdata owning the reference t (steals it). */
void mtl_push_tensor(lua_State *L, mt_tensor *t);
/* Returns the tensor at idx or raises "op: argument #n must be a tensor". */
mt_tensor *mtl_check_tensor(lua_State *L, int idx, const char *op);
/* NULL if the value at idx is not a tensor. */
mt_tensor *mtl_to_tensor(lua_State *L, int idx);
/* The tensor at idx for reading its metadata only (shape, dtype), without
 * the side effects of mtl_to_tensor (an inline tensor stays inline); NULL
 * for other values and closed tensors. Keep no reference to it. */
const mt_tensor *mtl_peek_tensor(lua_State *L, int idx);
/* Tensor at idx, or a wrapped 0-dim tensor for a Lua number/boolean
 * (new reference either way: release it). Raises on other types. */
mt_tensor *mtl_tensor_or_scalar(lua_State *L, int idx, const char *op);
/* Raises unless the value at idx is a tensor, number or boolean. Call it on
 * every operand before taking references with mtl_tensor_or_scalar, so that
 * a bad later operand cannot leak an earlier reference. */
void mtl_check_operand(lua_State *L, int idx, const char *op);
/* Raises a Lua error with the engine's message, after releasing `owned`
 * (up to 4 tensors, NULLs ignored). Never returns. */
/* Pushes op(arg 1, arg 2) (tensors or numbers, recorded for autograd);
 * need_tensor: refuse two numbers, naming `name`. */
int mtl_push_binary(lua_State *L, mt_op op, const char *name, bool need_tensor);
int mtl_fail(lua_State *L, mt_status st, mt_tensor *o1, mt_tensor *o2, mt_tensor *o3, mt_tensor *o4);
/* Checks st: on error behaves like mtl_fail with nothing owned. */
#define MTL_CHECK(L, st)                                                                                               \
  do {                                                                                                                 \
    mt_status st_ = (st);                                                                                              \
    if (st_ != MT_OK) mtl_fail((L), st_, NULL, NULL, NULL, NULL);                                                      \
  } while (0)

/* l_index.c: x[key] and x[key] = v for non-string keys (stack: x, key[, v]). */
int mtl_index_get(lua_State *L);
int mtl_index_set(lua_State *L);

/* Like MTL_CHECK for engine calls whose messages do not know the op (the
 * allocator's): the error reads "op: message". */
#define MTL_CHECK_OP(L, op, st)                                                                                        \
  do {                                                                                                                 \
    if ((st) != MT_OK) luaL_error((L), "%s: %s", (op), mt_errmsg());                                                   \
  } while (0)

/* After an allocating engine call: raises on error; else pushes the out=
 * tensor of the options table at opt when one was given, or the new res. */
int mtl_push_result(lua_State *L, mt_status st, mt_tensor *res, int opt, const mt_tensor *given);

/* ---- arguments (args.c) ---- */
/* True if the value at idx is a plain table with at least one string key
 * (an options table), as opposed to a list like {1, 2}. */
int mtl_is_options(lua_State *L, int idx);
/* Index of the trailing options table among args [first, top], or 0. */
int mtl_options_index(lua_State *L, int first);
/* Optional argument `name` at position pos (if pos <= last positional) or in
 * the options table opt (0 if none). Pushes the value (nil if absent). */
void mtl_getarg(lua_State *L, int pos, int last_pos, int opt, const char *name);
/* Pushes opt[name] (opt: an options table index, nonzero): the only way a
 * binding reads an option outside mtl_getarg, so the audit sees it. */
int mtl_optfield(lua_State *L, int opt, const char *name);
/* Raises unless every string key of the table at idx (an options table:
 * tables with a metatable or without string keys pass) is a word of spec
 * (see mtl_reg.opts): "<fname>: unknown option 'dtyp' (did you mean
 * 'dtype'?)", or the valid names when none is close. */
void mtl_check_options(lua_State *L, int idx, const char *fname, const char *spec);
/* The position in the space-separated list `choices` of the string at idx
 * (0-based); raises "<fname>: unknown <what> 'x' (expected 'a', 'b' or 'c')"
 * with the closest choice when one is near. */
int mtl_check_choice(lua_State *L, int idx, const char *fname, const char *what, const char *choices);
/* The closest word of the space-separated list `words` to s[0..n), when
 * near enough to be a typo of it (written to out); false if none is. */
bool mtl_closest_word(const char *words, const char *s, size_t n, char *out, size_t size);
int64_t mtl_opt_int(lua_State *L, int pos, int last_pos, int opt, const char *name, int64_t dflt);
double mtl_opt_num(lua_State *L, int pos, int last_pos, int opt, const char *name, double dflt);
int mtl_opt_bool(lua_State *L, int pos, int last_pos, int opt, const char *name, int dflt);
/* dtype option: torch.float32 value or name string; dflt if absent. */
mt_dtype mtl_opt_dtype(lua_State *L, int pos, int last_pos, int opt, const char *name, mt_dtype dflt);
mt_dtype mtl_check_dtype(lua_State *L, int idx, const char *op);
/* The dtype named s ("float64", "torch.float64", "double"), or -1. */
int mtl_dtype_from_string(const char *s);
/* Pushes the dtype names and their aliases, space-separated. */
void mtl_push_dtype_names(lua_State *L);
mt_device mtl_check_device(lua_State *L, int idx, const char *op);
mt_device mtl_opt_device(lua_State *L, int pos, int last_pos, int opt, const char *name);
/* `out=` option: the tensor or NULL (borrowed). */
mt_tensor *mtl_opt_out(lua_State *L, int opt);
/* Converts a 1-based Lua dim (negative from the end) to 0-based for rank
 * ndim; raises "op: dimension d out of range (tensor has n dims)". */
int mtl_dim(lua_State *L, lua_Integer d, int ndim, const char *op);
/* Reads a shape from varargs (2, 3) or a table ({2, 3}) or a torch.Size-like
 * table starting at idx; returns ndim. Raises on bad entries. */
int mtl_shape(lua_State *L, int idx, int last, int64_t *shape, const char *op);
/* Like mtl_shape, for sizes of new tensors: negative entries are errors. */
int mtl_size(lua_State *L, int idx, int last, int64_t *shape, const char *op);
/* requires_grad=true in the options table at opt (0: none) is applied to
 * the tensor at tidx. */
void mtl_apply_requires_grad(lua_State *L, int opt, int tidx);
/* Pushes a Lua table holding t's shape. */
void mtl_push_shape(lua_State *L, const int64_t *shape, int ndim);
/* Pushes the dtype value (the object torch.float32 etc.). */
void mtl_push_dtype(lua_State *L, mt_dtype dt);
void mtl_push_device(lua_State *L, mt_device d);

/* ---- binding groups, each in its own file; called by luaopen_torch ---- */
void mtl_open_tensor(lua_State *L, int torch_idx, int methods_idx);   /* tensor_ud.c: core, metamethods */
/* Pushes the attribute table of the tensor at idx (torch._attrs) and returns
 * true, or pushes nothing and returns false when it has none. */
bool mtl_push_attrs(lua_State *L, int idx);
/* Sets the attribute table of the tensor at tidx to the table at aidx. */
void mtl_set_attrs(lua_State *L, int tidx, int aidx);
void mtl_open_math(lua_State *L, int torch_idx, int methods_idx);     /* l_math.c: elementwise */
void mtl_open_shape(lua_State *L, int torch_idx, int methods_idx);    /* l_shape.c: views, cat, ... */
void mtl_open_index(lua_State *L, int torch_idx, int methods_idx);    /* l_index.c: slicing, gather, ... */
void mtl_open_reduce(lua_State *L, int torch_idx, int methods_idx);   /* l_reduce.c: reductions, sort */
void mtl_open_linalg(lua_State *L, int torch_idx, int methods_idx);   /* l_linalg.c: matmul, linalg */
void mtl_open_random(lua_State *L, int torch_idx, int methods_idx);   /* l_random.c: RNG, creation */
void mtl_open_print(lua_State *L, int torch_idx, int methods_idx);    /* l_print.c: tostring */
void mtl_open_pprint(lua_State *L, int torch_idx, int methods_idx);   /* l_pprint.c: pformat, pprint */
/* l_pprint.c: torch.pformat(v[, opts]) as a lua_CFunction: the REPL shows
 * its results with it. */
int mtl_pformat(lua_State *L);
void mtl_open_misc(lua_State *L, int torch_idx, int methods_idx);     /* l_misc.c: time, threads, help */
void mtl_open_cuda(lua_State *L, int torch_idx, int methods_idx);     /* l_cuda.c: torch.cuda, device checks */
void mtl_open_cuda_random(lua_State *L, int cuda_idx, int methods_idx); /* l_cuda_random.c: its generators */
void mtl_open_autograd(lua_State *L, int torch_idx, int methods_idx); /* l_autograd.c: autograd */

/* l_autograd.c: the autograd properties of tensors (requires_grad, grad,
 * grad_fn, is_leaf, retains_grad). Return 1 if k is one (value pushed /
 * assigned from stack index v), else 0. */
int mtl_autograd_getprop(lua_State *L, mt_tensor *t, const char *k);
int mtl_autograd_setprop(lua_State *L, mt_tensor *t, const char *k, int v);
/* Appends ", grad_fn=<...>" or ", requires_grad=true" for printing. */
void mtl_autograd_suffix(lua_State *L, mt_tensor *t, luaL_Buffer *b);
void mtl_open_create(lua_State *L, int torch_idx, int methods_idx);   /* l_create.c: tensor, zeros, ... */
void mtl_open_nn(lua_State *L, int torch_idx, int methods_idx);       /* l_nn.c: conv, pooling, norms */
void mtl_open_vision(lua_State *L, int torch_idx, int methods_idx);   /* l_vision.c: torch._vision (roi ops, nms) */
void mtl_open_fft(lua_State *L, int torch_idx, int methods_idx);      /* l_fft.c: torch._fft, torch.stft, windows */
void mtl_open_attention(lua_State *L, int torch_idx, int methods_idx); /* l_attention.c: SDPA */
void mtl_open_serialize(lua_State *L, int torch_idx, int methods_idx); /* l_serialize.c: save, load */

void mtl_open_jit(lua_State *L, int torch_idx, int methods_idx);      /* l_jit.c: torch.compile, torch.compiler */
void mtl_open_profiler(lua_State *L, int torch_idx, int methods_idx); /* l_profiler.c: torch._profiler */
void mtl_open_autocast(lua_State *L, int torch_idx, int methods_idx); /* l_autocast.c: autocast state, policies */
void mtl_open_amp(lua_State *L, int torch_idx, int methods_idx);      /* l_amp.c: GradScaler's fused op */
void mtl_open_foreach(lua_State *L, int torch_idx, int methods_idx);  /* l_foreach.c: _foreach_norm, _foreach_mul_ */
void mtl_open_fused(lua_State *L, int torch_idx, int methods_idx);    /* l_fused.c: fused Adam, cuBLASLt */
void mtl_open_complex(lua_State *L, int torch_idx, int methods_idx);  /* l_complex.c: complex views, constructors */
/* Whether the function `name` accepts complex tensors (l_complex.c's list;
 * the gate refuses them for every other one). */
bool mtl_complex_ready(const char *name);
void mtl_open_options(lua_State *L, int torch_idx, int methods_idx);  /* args.c: torch._check_options, the audit */
void mtl_open_public(lua_State *L, int torch_idx, int methods_idx);   /* l_public.c: torch._public */
/* l_public.c: records that the Lua chunk (function) at idx is a library
 * file: errors raised in it are the library's, not the user's. */
void mtl_mark_library(lua_State *L, int idx);

/* ---- autocast (l_autocast.c) ---- */
/* Nonzero while an autocast region is enabled for some device type (bit 1
 * cpu, bit 2 cuda): the one load callers make before anything else. */
extern int mtl_autocast_mask;
/* The autocast state that decides casts (enabled device types and their
 * dtypes) as one int: torch.compile guards on it. */
int mtl_autocast_key(void);
/* The autocast policy of the op `name` (0: none), looked up once, at registration. */
int mtl_autocast_flags(const char *name);
/* Casts the call's arguments on the stack in place per flags (nonzero). */
void mtl_autocast_args(lua_State *L, int flags, const char *name);
#define MTL_AUTOCAST(L, flags, name)                                                                                   \
  do {                                                                                                                 \
    if (mtl_autocast_mask && (flags)) mtl_autocast_args((L), (flags), (name));                                       \
  } while (0)

/* l_jit.c: hooks for the capture of a compiled function. A host sync
 * (item, totable, tostring) ends the graph: a graph break, reported once
 * with its Lua line (an error under fullgraph=true). A tensor handed to Lua
 * that no traced op made is remembered (the JIT cannot replay its maker). */
void mtl_jit_sync(lua_State *L, const char *what);
void mtl_jit_pushed(lua_State *L, mt_tensor *t);
#define MTL_JIT_SYNC(L, what)                                                                                          \
  do {                                                                                                                 \
    if (MTG_TRACING()) mtl_jit_sync((L), (what));                                                                      \
  } while (0)

/* ---- packages (packages.c) ---- */
/* A C part of a package: module torch.a._b opens with luaopen_torch_a__b
 * (name: "torch_a__b"). The build lists them (build/gen/cmodules.c). */
typedef struct mtl_cmodule {
  const char *name;
  lua_CFunction open;
} mtl_cmodule;
/* Puts the searcher of torch.* packages into package.searchers and
 * registers torch._packages and torch._subpackages. */
void mtl_open_packages(lua_State *L, int torch_idx);
/* True if module `name` (torch.x.y) exists in the tree or as a C part. */
bool mtl_package_exists(const char *name);

/* ---- nested tables in checkpoints (l_structure.c) ---- */
/* For torch.save: pushes the {name, tensor} list to write and the structure
 * description of the value at idx (a JSON string), or nil instead of the
 * description for a flat name->tensor table (a plain state dict). Raises
 * "torch.save: ..." for values that cannot be saved. */
void mtl_encode_structure(lua_State *L, int idx);
/* For torch.load: pushes the value described by json[0..n), taking tensors
 * by name from the table at tensors_idx. Raises naming path when the
 * description is malformed or refers to a missing tensor. */
void mtl_decode_structure(lua_State *L, const char *json, size_t n, int tensors_idx, const char *path);

#endif
