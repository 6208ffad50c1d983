/* l_mujoco.c -- torch.rl._mujoco: the Lua face of sim.c for
 * torch.rl.envs.MujocoEnv (domains/rl/envs/_mujoco.lua), which allocates
 * the tensors and checks the user's arguments first; the checks here keep
 * a wrong call from reaching MuJoCo with bad memory. Positional arguments,
 * CPU tensors only. */
#include <math.h>
#include <string.h>

#include "mtl.h"
#include "sim.h"

#define FN "MujocoEnv"
#define MT_SIM "torch.rl.mujoco_sim"

typedef struct ud {
  mtd_mj_sim *s;
} ud;

static mtd_mj_sim *check_sim(lua_State *L) {
  ud *u = luaL_checkudata(L, 1, MT_SIM);
  if (!u->s) luaL_error(L, "%s: the environment is closed", FN);
  return u->s;
}

/* the tensor at idx: CPU, contiguous, a dtype of `dtypes` (bit per
 * mt_dtype), shape [rows, cols] (cols < 0: 1-D [rows]) */
static mt_tensor *check_buf(lua_State *L, int idx, const char *what, unsigned dtypes, int64_t rows, int64_t cols) {
  mt_tensor *t = mtl_check_tensor(L, idx, FN);
  bool shape_ok = cols < 0 ? (t->ndim == 1 && t->shape[0] == rows)
                           : (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols);
  if (!shape_ok) {
    if (cols < 0) luaL_error(L, "%s: %s must have shape [%I], got %d dims", FN, what, (lua_Integer)rows, t->ndim);
    luaL_error(L, "%s: %s must have shape [%I, %I] (num_envs, %s)", FN, what, (lua_Integer)rows,
               (lua_Integer)cols, what);
  }
  if (mt_tdevice(t).type != MT_CPU || (!mt_is_contiguous(t) && mt_numel(t) > 0) || !(dtypes & (1u << t->dtype)))
    luaL_error(L, "%s: %s must be a contiguous CPU tensor of a supported dtype", FN, what);
  return t;
}
#define F32_64 ((1u << MT_FLOAT32) | (1u << MT_FLOAT64))
#define BOOLS (1u << MT_BOOL)

static int fail(lua_State *L, mtd_mj_sim *s, mt_status st, const char *op) {
  if (st == MT_EARG && s->failed >= 0)
    return luaL_error(L, "%s.%s: env %I: MuJoCo error: %s (that env was reset)", FN, op, (lua_Integer)s->failed + 1,
                      s->err);
  return luaL_error(L, "%s.%s: %s", FN, op, mt_errmsg());
}

/* _mujoco.open(path, n, frame_skip, max_steps, noise) -> sim */
static int l_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2), fs = luaL_checkinteger(L, 3), ms = luaL_checkinteger(L, 4);
  double noise = luaL_checknumber(L, 5);
  if (n < 1 || n > (1 << 20)) return luaL_error(L, "%s: num_envs must be 1 to 2^20, got %I", FN, n);
  if (fs < 1 || fs > (1 << 20)) return luaL_error(L, "%s: frame_skip must be 1 to 2^20, got %I", FN, fs);
  if (ms < 0) return luaL_error(L, "%s: max_episode_steps must be >= 0, got %I", FN, ms);
  if (!(noise >= 0) || !isfinite(noise))
    return luaL_error(L, "%s: reset_noise_scale must be a finite number >= 0, got %f", FN, noise);
  ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = NULL;
  luaL_setmetatable(L, MT_SIM);
  char err[1024];
  u->s = mtd_mj_open(path, n, err, sizeof err);
  if (!u->s) return luaL_error(L, "%s: cannot load the model '%s': %s", FN, path, err);
  u->s->frame_skip = (int)fs, u->s->max_steps = ms, u->s->noise = noise;
  return 1;
}

/* sim:reset(obs[, seed[, mask]]): seed (an integer) reseeds copy i with
 * seed + i - 1; mask (bool [n]) resets only those copies */
static int l_reset(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  mt_tensor *obs = check_buf(L, 2, "observation", F32_64, s->n, s->m->nq + s->m->nv);
  if (!lua_isnoneornil(L, 3)) {
    if (!lua_isinteger(L, 3)) return luaL_error(L, "%s.reset: seed must be an integer, got %s", FN, luaL_typename(L, 3));
    lua_Integer seed = lua_tointeger(L, 3);
    for (int64_t i = 0; i < s->n; i++) mtd_mj_seed(s, i, (uint64_t)seed + (uint64_t)i);
  }
  const uint8_t *mask = NULL;
  if (!lua_isnoneornil(L, 4)) mask = (const uint8_t *)mt_data(check_buf(L, 4, "reset mask", BOOLS, s->n, -1));
  mt_status st = mtd_mj_reset(s, mask, obs);
  if (st != MT_OK) return fail(L, s, st, "reset");
  return 0;
}

/* sim:step(actions [n, nu], obs, truncated (bool [n]), was_reset (bool [n])) */
static int l_step(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  mt_tensor *act = check_buf(L, 2, "actions", F32_64, s->n, s->m->nu);
  mt_tensor *obs = check_buf(L, 3, "observation", F32_64, s->n, s->m->nq + s->m->nv);
  uint8_t *tr = (uint8_t *)mt_data(check_buf(L, 4, "truncated", BOOLS, s->n, -1));
  uint8_t *rs = (uint8_t *)mt_data(check_buf(L, 5, "was_reset", BOOLS, s->n, -1));
  int64_t na = s->n * s->m->nu;
  for (int64_t k = 0; k < na; k++) {
    double v = act->dtype == MT_FLOAT64 ? ((const double *)mt_data(act))[k] : ((const float *)mt_data(act))[k];
    if (!isfinite(v))
      return luaL_error(L, "%s.step: action [%I, %I] is %f: actions must be finite", FN,
                        (lua_Integer)(k / s->m->nu + 1), (lua_Integer)(k % s->m->nu + 1), v);
  }
  mt_status st = mtd_mj_step(s, act, obs, tr, rs);
  if (st != MT_OK) return fail(L, s, st, "step");
  return 0;
}

/* sim:set_done(done (bool [n])): those copies reset at their next step */
static int l_set_done(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  const uint8_t *d = (const uint8_t *)mt_data(check_buf(L, 2, "done", BOOLS, s->n, -1));
  for (int64_t i = 0; i < s->n; i++) s->autoreset[i] = d[i] != 0;
  return 0;
}

/* sim:set_state(qpos [n, nq], qvel [n, nv], obs), float64 */
static int l_set_state(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  mt_tensor *qp = check_buf(L, 2, "qpos", 1u << MT_FLOAT64, s->n, s->m->nq);
  mt_tensor *qv = check_buf(L, 3, "qvel", 1u << MT_FLOAT64, s->n, s->m->nv);
  mt_tensor *obs = check_buf(L, 4, "observation", F32_64, s->n, s->m->nq + s->m->nv);
  mt_status st = mtd_mj_set_state(s, (const double *)mt_data(qp), (const double *)mt_data(qv), obs);
  if (st != MT_OK) return fail(L, s, st, "set_state");
  return 0;
}

/* sim:get(field, out [n, k] float64): copies each copy's "qpos", "qvel",
 * "ctrl", "xpos" (bodies x 3) or "time" (k = 1) into out */
static int l_get(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  static const char *const names[] = {"qpos", "qvel", "ctrl", "xpos", "time", NULL};
  int f = luaL_checkoption(L, 2, NULL, names);
  const mjModel *m = s->m;
  int64_t k = f == 0 ? m->nq : f == 1 ? m->nv : f == 2 ? m->nu : f == 3 ? 3 * (int64_t)m->nbody : 1;
  double *o = (double *)mt_data(check_buf(L, 3, names[f], 1u << MT_FLOAT64, s->n, k));
  for (int64_t i = 0; i < s->n; i++) {
    const mjData *d = s->d[i];
    const double *src = f == 0 ? d->qpos : f == 1 ? d->qvel : f == 2 ? d->ctrl : f == 3 ? d->xpos : &d->time;
    memcpy(o + i * k, src, sizeof(double) * (size_t)k);
  }
  return 0;
}

/* sim:info() -> {nq, nv, nu, na, nbody, timestep, frame_skip, bodies =
 * {names}, actuators = {names}, ctrlrange = {{lo, hi}...} (limited ones;
 * others {-inf, inf}), qpos0 = {...}, gravity = {x, y, z}} */
static void push_names(lua_State *L, const mjModel *m, int type, int count, const char *field) {
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    const char *nm = mj_id2name(m, type, i);
    lua_pushstring(L, nm ? nm : "");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, field);
}

static void push_numbers(lua_State *L, const double *v, int count, const char *field) {
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) lua_pushnumber(L, v[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, field);
}

static int l_info(lua_State *L) {
  mtd_mj_sim *s = check_sim(L);
  const mjModel *m = s->m;
  lua_createtable(L, 0, 14);
  static const char *const ints[] = {"nq", "nv", "nu", "na", "nbody"};
  const int vals[] = {m->nq, m->nv, m->nu, m->na, m->nbody};
  for (int i = 0; i < 5; i++) lua_pushinteger(L, vals[i]), lua_setfield(L, -2, ints[i]);
  lua_pushnumber(L, m->opt.timestep), lua_setfield(L, -2, "timestep");
  lua_pushinteger(L, s->frame_skip), lua_setfield(L, -2, "frame_skip");
  push_names(L, m, mjOBJ_BODY, m->nbody, "bodies");
  push_names(L, m, mjOBJ_ACTUATOR, m->nu, "actuators");
  lua_createtable(L, m->nu, 0);
  for (int i = 0; i < m->nu; i++) {
    bool lim = m->actuator_ctrllimited[i] && !(m->opt.disableflags & mjDSBL_CLAMPCTRL);
    lua_createtable(L, 2, 0);
    lua_pushnumber(L, lim ? m->actuator_ctrlrange[2 * i] : -HUGE_VAL), lua_rawseti(L, -2, 1);
    lua_pushnumber(L, lim ? m->actuator_ctrlrange[2 * i + 1] : HUGE_VAL), lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "ctrlrange");
  push_numbers(L, m->qpos0, m->nq, "qpos0");
  push_numbers(L, m->opt.gravity, 3, "gravity");
  lua_pushstring(L, mj_versionString()), lua_setfield(L, -2, "mujoco_version");
  return 1;
}

static int l_close(lua_State *L) {
  ud *u = luaL_checkudata(L, 1, MT_SIM);
  mtd_mj_close(u->s);
  u->s = NULL;
  return 0;
}

static const luaL_Reg methods[] = {{"reset", l_reset},         {"step", l_step}, {"set_done", l_set_done},
                                   {"set_state", l_set_state}, {"get", l_get},   {"info", l_info},
                                   {"close", l_close},         {NULL, NULL}};

static const mtl_reg regs[] = {
    {"open", l_open, MTL_FN,
     "torch.rl._mujoco.open(xml_path, num_envs, frame_skip, max_episode_steps, reset_noise_scale) -- internal "
     "(torch.rl.envs.MujocoEnv): num_envs copies of a MuJoCo model; :reset, :step, :set_done, :set_state, :get, "
     ":info, :close"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl._mujoco" */
int luaopen_torch_rl__mujoco(lua_State *L) {
  mtd_mj_init();
  mtl_new_class(L, MT_SIM, methods, l_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
