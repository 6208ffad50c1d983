/* l_envs.c -- torch.rl.envs._core: the batched classic-control envs of
 * batch.c as Lua handles, for the Lua side (envs/init.lua), which checks the user's
 * arguments (shapes, dtypes, devices) and names the env in errors; here
 * only dense CPU tensors of the right dtype pass. */
#include <string.h>

#include "env.h"
#include "mtl.h"

#define BATCH_MT "torch.rl.envs.Batch"

typedef struct batch_ud {
  mtd_rl_batch *b;
} batch_ud;

static mtd_rl_batch *check_batch(lua_State *L) {
  batch_ud *u = luaL_checkudata(L, 1, BATCH_MT);
  if (!u->b) luaL_error(L, "torch.rl.envs: the env was closed");
  return u->b;
}

/* A new [d0(, d1)] CPU tensor of dt, pushed; its data returned. */
static void *push_new(lua_State *L, int64_t d0, int64_t d1, mt_dtype dt) {
  int64_t shape[2] = {d0, d1};
  mt_tensor *t = NULL;
  MTL_CHECK_OP(L, "torch.rl.envs", mt_empty(shape, d1 ? 2 : 1, dt, mt_cpu(), &t));
  mtl_push_tensor(L, t);
  return mt_data(t);
}

/* The tensor at idx, which must be dense, on the CPU, of dtype dt (or dt2)
 * with numel elements. */
static const mt_tensor *check_dense(lua_State *L, int idx, mt_dtype dt, int dt2, int64_t numel, const char *what) {
  const mt_tensor *t = mtl_check_tensor(L, idx, "torch.rl.envs");
  if (mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t) || ((int)t->dtype != (int)dt && (int)t->dtype != dt2) ||
      mt_numel(t) != numel)
    luaL_error(L, "torch.rl.envs: internal: %s must be a dense CPU tensor of %lld elements", what, (long long)numel);
  return t;
}

/* _core.new(name, num_envs, autoreset_mode, seed) -> handle */
static int l_new(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const mtd_rl_env *e = mtd_rl_find(name);
  if (!e) return luaL_error(L, "torch.rl.envs: unknown environment '%s'", name);
  int64_t n = luaL_checkinteger(L, 2);
  int mode = mtl_check_choice(L, 3, "torch.rl.envs", "autoreset_mode", "next_step same_step disabled");
  uint64_t seed = (uint64_t)luaL_checkinteger(L, 4);
  batch_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->b = NULL;
  luaL_setmetatable(L, BATCH_MT);
  if (mtd_rl_batch_new(e, n, (mtd_rl_autoreset)mode, seed, &u->b) != MT_OK) return luaL_error(L, "%s", mt_errmsg());
  return 1;
}

/* b:reset(seed|nil, mask|nil) -> obs [n, nobs] float32 */
static int b_reset(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  bool seeded = !lua_isnoneornil(L, 2);
  uint64_t seed = seeded ? (uint64_t)luaL_checkinteger(L, 2) : 0;
  const uint8_t *mask = NULL;
  if (!lua_isnoneornil(L, 3)) mask = (const uint8_t *)mt_data(check_dense(L, 3, MT_BOOL, -1, b->n, "reset_mask"));
  float *obs = push_new(L, b->n, b->env->nobs, MT_FLOAT32);
  mtd_rl_batch_reset(b, mask, seeded, seed, obs);
  return 1;
}

/* The actions at idx when they are exactly what the stepper reads (a dense
 * CPU tensor: int64 [n] for discrete envs, float32/float64 [n, action_dim]
 * for continuous ones), else NULL. */
static const mt_tensor *exact_actions(lua_State *L, int idx, const mtd_rl_batch *b) {
  const mt_tensor *a = mtl_peek_tensor(L, idx);
  const mtd_rl_env *e = b->env;
  if (!a || mt_tdevice(a).type != MT_CPU || !mt_is_contiguous(a)) return NULL;
  if (e->n_actions) return a->dtype == MT_INT64 && a->ndim == 1 && a->shape[0] == b->n ? a : NULL;
  bool fl = a->dtype == MT_FLOAT32 || a->dtype == MT_FLOAT64;
  return fl && a->ndim == 2 && a->shape[0] == b->n && a->shape[1] == e->action_dim ? a : NULL;
}

/* Output k of a step: a new tensor pushed, or entry k of the out list at
 * index out (0: none), which must be a dense CPU tensor of dt with numel
 * elements (envs/init.lua checks it first; here only its memory counts). */
static void *push_out(lua_State *L, int out, int k, int64_t d0, int64_t d1, mt_dtype dt) {
  if (!out) return push_new(L, d0, d1, dt);
  lua_rawgeti(L, out, k);
  const mt_tensor *t = mtl_peek_tensor(L, -1);
  if (!t || mt_tdevice(t).type != MT_CPU || !mt_is_contiguous(t) || t->dtype != (int8_t)dt ||
      mt_numel(t) != d0 * (d1 ? d1 : 1))
    luaL_error(L, "torch.rl.envs: internal: out[%d] must be a dense CPU tensor of %lld elements", k,
               (long long)(d0 * (d1 ? d1 : 1)));
  return mt_data(t);
}

/* b:step(actions[, out]) -> obs, reward, terminated, truncated[, final_obs]
 * (new tensors, or the tensors of the list out, written in place), or false
 * alone when the actions need converting first (the Lua side checks and
 * converts them, with messages naming the env) */
static int b_step(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  const mtd_rl_env *e = b->env;
  const mt_tensor *a = exact_actions(L, 2, b);
  if (!a) return lua_pushboolean(L, 0), 1;
  int out = lua_istable(L, 3) ? 3 : 0;
  lua_settop(L, 3);
  mt_dtype dt = (mt_dtype)a->dtype;
  if (mtd_rl_batch_check(b, mt_data(a), dt) != MT_OK) return luaL_error(L, "%s", mt_errmsg());
  mtd_rl_out o;
  o.obs = push_out(L, out, 1, b->n, e->nobs, MT_FLOAT32);
  o.reward = push_out(L, out, 2, b->n, 0, MT_FLOAT32);
  o.terminated = push_out(L, out, 3, b->n, 0, MT_BOOL);
  o.truncated = push_out(L, out, 4, b->n, 0, MT_BOOL);
  o.final_obs = b->mode == MTD_RL_SAME_STEP ? push_out(L, out, 5, b->n, e->nobs, MT_FLOAT32) : NULL;
  MTL_CHECK_OP(L, e->name, mtd_rl_batch_step(b, mt_data(a), dt, &o));
  return o.final_obs ? 5 : 4;
}

/* b:state() -> float64 [n, nstate] (Gymnasium's env.state of each copy) */
static int b_state(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  int ns = b->env->nstate;
  double *s = push_new(L, b->n, ns, MT_FLOAT64);
  for (int64_t i = 0; i < b->n; i++)
    for (int k = 0; k < ns; k++) s[i * ns + k] = b->state[k * b->npad + i];
  return 1;
}

/* b:set_state(s[, elapsed]) -- s float64 [n, nstate], elapsed int64 [n]
 * (TimeLimit's counts; default: kept); the copies become steppable */
static int b_set_state(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  int ns = b->env->nstate;
  const double *s = (const double *)mt_data(check_dense(L, 2, MT_FLOAT64, -1, b->n * ns, "state"));
  const int64_t *el = NULL;
  if (!lua_isnoneornil(L, 3)) el = (const int64_t *)mt_data(check_dense(L, 3, MT_INT64, -1, b->n, "elapsed"));
  for (int64_t i = 0; i < b->n; i++) {
    for (int k = 0; k < ns; k++) b->state[k * b->npad + i] = s[i * ns + k];
    if (el) b->elapsed[i] = el[i];
    b->done[i] = 0;
  }
  return 0;
}

/* b:elapsed() -> int64 [n]: steps since each copy's reset */
static int b_elapsed(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  int64_t *t = push_new(L, b->n, 0, MT_INT64);
  memcpy(t, b->elapsed, (size_t)b->n * sizeof(int64_t));
  return 1;
}

/* b:done() -> bool [n]: ended and not yet reset */
static int b_done(lua_State *L) {
  mtd_rl_batch *b = check_batch(L);
  bool *t = push_new(L, b->n, 0, MT_BOOL);
  for (int64_t i = 0; i < b->n; i++) t[i] = b->done[i];
  return 1;
}

static int b_close(lua_State *L) {
  batch_ud *u = luaL_checkudata(L, 1, BATCH_MT);
  mtd_rl_batch_free(u->b);
  u->b = NULL;
  return 0;
}

static void set_floats(lua_State *L, const char *k, const float *v, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) lua_pushnumber(L, v[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, k);
}

/* _core.info(name) -> the env's constants as a table, or nil */
static int l_info(lua_State *L) {
  const mtd_rl_env *e = mtd_rl_find(luaL_checkstring(L, 1));
  if (!e) return 0;
  lua_newtable(L);
  lua_pushstring(L, e->name), lua_setfield(L, -2, "name");
  lua_pushinteger(L, e->nstate), lua_setfield(L, -2, "nstate");
  lua_pushinteger(L, e->nobs), lua_setfield(L, -2, "nobs");
  lua_pushinteger(L, e->n_actions), lua_setfield(L, -2, "n_actions");
  lua_pushinteger(L, e->action_dim), lua_setfield(L, -2, "action_dim");
  lua_pushnumber(L, e->action_low), lua_setfield(L, -2, "action_low");
  lua_pushnumber(L, e->action_high), lua_setfield(L, -2, "action_high");
  lua_pushinteger(L, e->max_episode_steps), lua_setfield(L, -2, "max_episode_steps");
  set_floats(L, "obs_low", e->obs_low, e->nobs);
  set_floats(L, "obs_high", e->obs_high, e->nobs);
  return 1;
}

static const luaL_Reg batch_methods[] = {{"reset", b_reset},         {"step", b_step},       {"state", b_state},
                                         {"set_state", b_set_state}, {"elapsed", b_elapsed}, {"done", b_done},
                                         {"close", b_close},         {NULL, NULL}};

static const mtl_reg regs[] = {
    {"new", l_new, MTL_FN,
     "torch.rl.envs._core.new(name, num_envs, autoreset_mode, seed) -- internal: a batch of classic-control envs"},
    {"info", l_info, MTL_FN, "torch.rl.envs._core.info(name) -- internal: an env's constants, or nil"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl.envs._core" */
int luaopen_torch_rl_envs__core(lua_State *L) {
  mtl_new_class(L, BATCH_MT, batch_methods, b_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
