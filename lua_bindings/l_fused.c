/* l_fused.c -- the fused CUDA paths' Lua side: torch._fused_adam_ (the
 * one-kernel Adam/AdamW step under torch.optim.Adam/AdamW, tensor/optim.c)
 * and the cuBLASLt switch and counters (torch._cublaslt_stats,
 * torch._set_cublaslt_enabled; cuda/blaslt.c). */
#include <math.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"
#include "optim.h"

static double opt_num(lua_State *L, int t, const char *k, double def) {
  mtl_optfield(L, t, k);
  double v = lua_isnil(L, -1) ? def : luaL_checknumber(L, -1);
  lua_pop(L, 1);
  return v;
}

static bool opt_bool(lua_State *L, int t, const char *k) {
  mtl_optfield(L, t, k);
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* The k-th tensor of the list at idx (NULL for a missing entry when allow_nil). */
static mt_tensor *list_tensor(lua_State *L, int idx, lua_Integer k, const char *what, bool allow_nil) {
  const char *op = "_fused_adam_";
  lua_rawgeti(L, idx, k);
  mt_tensor *t = mtl_to_tensor(L, -1);
  if (!t && !(allow_nil && lua_isnil(L, -1)))
    luaL_error(L, "%s: element %d of %s is a %s, not a tensor", op, (int)k, what, luaL_typename(L, -1));
  lua_pop(L, 1); /* the lists keep the tensors alive */
  return t;
}

/* torch._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, opts): one step of
 * each parameter; steps are the step counts after this step; opts: lr, beta1, beta2, eps, weight_decay,
 * amsgrad, maximize, decoupled. */
static int l_fused_adam(lua_State *L) {
  const char *op = "_fused_adam_";
  for (int i = 1; i <= 4; i++) luaL_checktype(L, i, LUA_TTABLE);
  bool has_max = !lua_isnoneornil(L, 5);
  if (has_max) luaL_checktype(L, 5, LUA_TTABLE);
  luaL_checktype(L, 6, LUA_TTABLE);
  luaL_checktype(L, 7, LUA_TTABLE);
  mt_adam_opts o = {opt_num(L, 7, "lr", 1e-3), opt_num(L, 7, "beta1", 0.9), opt_num(L, 7, "beta2", 0.999),
                    opt_num(L, 7, "eps", 1e-8), opt_num(L, 7, "weight_decay", 0), 0, 0,
                    opt_bool(L, 7, "amsgrad"), opt_bool(L, 7, "maximize"), opt_bool(L, 7, "decoupled")};
  if (o.amsgrad && !has_max) return luaL_error(L, "%s: amsgrad needs the list max_exp_avg_sqs", op);
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  for (int i = 2; i <= 6; i++)
    if ((i != 5 || has_max) && (lua_Integer)lua_rawlen(L, i) != n)
      return luaL_error(L, "%s: the lists must have one entry per parameter (%d), argument #%d has %d", op, (int)n,
                        i, (int)lua_rawlen(L, i));
  for (lua_Integer k = 1; k <= n; k++) {
    mt_tensor *p = list_tensor(L, 1, k, "params", false), *g = list_tensor(L, 2, k, "grads", false),
              *m = list_tensor(L, 3, k, "exp_avgs", false), *v = list_tensor(L, 4, k, "exp_avg_sqs", false),
              *vm = has_max ? list_tensor(L, 5, k, "max_exp_avg_sqs", !o.amsgrad) : NULL;
    lua_rawgeti(L, 6, k);
    double step = luaL_checknumber(L, -1);
    lua_pop(L, 1);
    if (step < 1) return luaL_error(L, "%s: step counts start at 1, got %f", op, step);
    o.step_size = o.lr / (1 - pow(o.beta1, step));
    o.bc2_sqrt = sqrt(1 - pow(o.beta2, step));
    MTL_CHECK(L, mt_adam_step_(p, g, m, v, vm, &o));
  }
  return 0;
}

/* torch._cublaslt_stats() -> {loaded, enabled, calls, declined, load_error} */
static int l_lt_stats(lua_State *L) {
  mt_lt_info i = mt_cuda_lt_stats();
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, i.loaded);
  lua_setfield(L, -2, "loaded");
  lua_pushboolean(L, i.enabled);
  lua_setfield(L, -2, "enabled");
  lua_pushinteger(L, (lua_Integer)i.calls);
  lua_setfield(L, -2, "calls");
  lua_pushinteger(L, (lua_Integer)i.declined);
  lua_setfield(L, -2, "declined");
  lua_pushstring(L, i.load_error);
  lua_setfield(L, -2, "load_error");
  return 1;
}

static int l_lt_enable(lua_State *L) {
  luaL_checkany(L, 1);
  mt_cuda_lt_set_enabled(lua_toboolean(L, 1));
  return 0;
}

static const mtl_reg regs[] = {
    {"_fused_adam_", l_fused_adam, MTL_FN,
     "torch._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, opts) -- one Adam/AdamW "
     "step per CUDA parameter in one kernel each (opts: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, "
     "decoupled; steps: the counts after this step)", "lr beta1 beta2 eps weight_decay amsgrad maximize decoupled"},
    {"_cublaslt_stats", l_lt_stats, MTL_FN,
     "torch._cublaslt_stats() -- {loaded, enabled, calls, declined, load_error} of the cuBLASLt epilogue path"},
    {"_set_cublaslt_enabled", l_lt_enable, MTL_FN,
     "torch._set_cublaslt_enabled(on) -- off: linear/addmm on CUDA use cuBLAS and separate kernels"},
    {NULL, NULL, 0, NULL}};

void mtl_open_fused(lua_State *L, int torch_idx, int methods_idx) { mtl_register(L, torch_idx, methods_idx, regs); }
