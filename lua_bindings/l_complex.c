/* l_complex.c -- complex tensors in Lua: torch.view_as_real,
 * torch.view_as_complex, torch.real / torch.imag (x.real / x.imag are
 * properties, tensor_ud.c), torch.complex, torch.polar, is_complex, and the
 * list of functions that accept complex tensors: the gate (l_cuda.c) raises
 * "<name>: complex64 tensors are not supported" for every other function
 * given one, so an op without complex kernels never sees complex data. */
#include <string.h>

#include "cplx.h"
#include "graph.h"
#include "mtl.h"

/* Functions that take complex tensors (besides these bindings): metadata,
 * conversions, views and copies (dtype-agnostic by element size), autograd,
 * and the math with complex kernels (tensor/cpu/complex_kernels.c). */
static const char *const complex_ready[] = {
    /* metadata and conversions */
    "size", "stride", "dim", "ndimension", "numel", "nelement", "element_size", "is_contiguous",
    "is_floating_point", "is_tensor", "item", "totable", "tolist", "to", "float", "double", "half", "bfloat16", "long",
    "int", "short", "char", "byte", "bool", "cpu", "cuda", "type", "clone", "contiguous", "copy_", "fill_", "zero_",
    "_version", "_attrs", "detach", "detach_", "requires_grad_", "pin_memory", "is_pinned", "typename",
    "result_type", "can_cast", "promote_types",
    /* creation from a complex tensor */
    "tensor", "empty_like", "zeros_like", "ones_like", "full_like", "new_empty", "new_zeros", "new_ones", "new_full",
    "new_tensor",
    /* views and movement */
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "ravel", "transpose", "swapaxes", "swapdims",
    "t", "permute", "movedim", "moveaxis", "narrow", "select", "squeeze", "unsqueeze", "expand", "expand_as",
    "broadcast_to", "flip", "fliplr", "flipud", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "split",
    "chunk", "unbind", "tensor_split", "roll", "unfold", "diagonal", "as_strided",
    /* index ops that move elements (by size: tensor/cpu/index_kernels.c) */
    "index_select", "masked_fill", "masked_fill_", "masked_select", "where", "gather", "take",
    /* autograd and serialization */
    "backward", "grad", "register_hook", "retain_grad", "no_grad", "enable_grad", "save",
    /* math with complex kernels */
    "add", "sub", "mul", "div", "neg", "negative", "true_divide", "subtract", "multiply", "divide", "abs",
    "absolute", "angle", "exp", "log", "sqrt", "rsqrt", "reciprocal", "pow", "square", "conj", "conj_physical",
    "resolve_conj", "resolve_neg", "sgn", "eq", "ne", "isfinite", "isnan", "isinf", "sum", "mean", "allclose",
    "isclose", "equal",
    /* this file */
    "view_as_real", "view_as_complex", "real", "imag", "complex", "polar", "is_complex", "conj_physical",
    "resolve_conj", "resolve_neg", "_complex_parts", NULL};

bool mtl_complex_ready(const char *name) {
  for (const char *const *p = complex_ready; *p; p++)
    if (strcmp(*p, name) == 0) return true;
  return false;
}

static int l_view_as_real(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "view_as_real"), *o = NULL;
  MTL_CHECK(L, mtg_view_as_real(t, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int l_view_as_complex(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "view_as_complex"), *o = NULL;
  MTL_CHECK(L, mtg_view_as_complex(t, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int part(lua_State *L, const char *name, int k) {
  mt_tensor *t = mtl_check_tensor(L, 1, name), *o = NULL;
  MTL_CHECK_OP(L, name, mtg_complex_part(t, k, &o));
  mtl_push_tensor(L, o);
  return 1;
}
static int l_real(lua_State *L) { return part(L, "real", 0); }
static int l_imag(lua_State *L) { return part(L, "imag", 1); }

static int l_complex(lua_State *L) {
  mt_tensor *re = mtl_check_tensor(L, 1, "complex"), *im = mtl_check_tensor(L, 2, "complex"), *o = NULL;
  MTL_CHECK(L, mtg_complex(re, im, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int l_polar(lua_State *L) {
  mt_tensor *a = mtl_check_tensor(L, 1, "polar"), *b = mtl_check_tensor(L, 2, "polar"), *o = NULL;
  MTL_CHECK(L, mtg_polar(a, b, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int l_conj_physical(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "conj_physical"), *o = NULL;
  MTL_CHECK(L, mtg_unary(MT_OP_conj, t, &o));
  mtl_push_tensor(L, o);
  return 1;
}

/* resolve_conj, resolve_neg: x itself (conjugation is never lazy here) */
static int l_resolve(lua_State *L) {
  mtl_check_tensor(L, 1, "resolve_conj");
  lua_settop(L, 1);
  return 1;
}

/* torch._complex_parts(name, a[, b]): elementwise op `name` computed by
 * parts (the CUDA path) on any device, for tests of its arithmetic */
static int l_complex_parts(lua_State *L) {
  int op = mt_op_find(luaL_checkstring(L, 1));
  if (op < 0) return luaL_error(L, "_complex_parts: unknown op '%s'", lua_tostring(L, 1));
  mt_tensor *a = mtl_check_tensor(L, 2, "_complex_parts"), *b = lua_isnoneornil(L, 3) ? NULL : mtl_check_tensor(L, 3, "_complex_parts");
  mt_tensor *o = NULL;
  MTL_CHECK(L, mt_complex_ew_parts((mt_op)op, a, b, &o));
  mtl_push_tensor(L, o);
  return 1;
}

static int l_is_complex(lua_State *L) {
  lua_pushboolean(L, mt_is_complex((mt_dtype)mtl_check_tensor(L, 1, "is_complex")->dtype));
  return 1;
}

static const mtl_reg regs[] = {
    {"view_as_real", l_view_as_real, MTL_FN,
     "torch.view_as_real(z) -- a complex tensor's [..., 2] real view (re, im last), sharing storage"},
    {"view_as_complex", l_view_as_complex, MTL_FN,
     "torch.view_as_complex(x) -- a float [..., 2] tensor (last stride 1) as a complex view"},
    {"real", l_real, MTL_FN, "torch.real(z) -- the real part as a view (z.real); a real z itself"},
    {"imag", l_imag, MTL_FN, "torch.imag(z) -- the imaginary part as a view (z.imag)"},
    {"complex", l_complex, MTL_FN, "torch.complex(real, imag) -- real + i imag (float32 -> complex64, float64 -> complex128)"},
    {"polar", l_polar, MTL_FN, "torch.polar(abs, angle) -- abs * (cos angle + i sin angle)"},
    {"conj_physical", l_conj_physical, MTL_BOTH, "torch.conj_physical(z) -- the conjugate (= conj: never lazy here)"},
    {"resolve_conj", l_resolve, MTL_BOTH, "torch.resolve_conj(x) -- x (conjugation is never lazy here)"},
    {"resolve_neg", l_resolve, MTL_BOTH, "torch.resolve_neg(x) -- x (negation is never lazy here)"},
    {"_complex_parts", l_complex_parts, MTL_FN, "torch._complex_parts(name, a[, b]) -- an elementwise op on complex operands by parts (the CUDA path), for tests"},
    {"is_complex", l_is_complex, MTL_BOTH, "torch.is_complex(x) -- true for complex64 and complex128 tensors"},
    {NULL, NULL, 0, NULL}};

void mtl_open_complex(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
