/* batch.c -- N copies of one classic-control environment stepped in one
 * call: the struct-of-arrays state, the TimeLimit counters, seeding by a
 * counter-based RNG per copy, and Gymnasium's autoreset modes. It knows no
 * environment's equations (those are in cartpole.c, acrobot.c, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "random.h"

static const mtd_rl_env *const all_envs[] = {&mtd_rl_cartpole, &mtd_rl_acrobot, &mtd_rl_mountain_car,
                                             &mtd_rl_mountain_car_continuous, &mtd_rl_pendulum};

const mtd_rl_env *mtd_rl_find(const char *name) {
  for (size_t i = 0; i < sizeof all_envs / sizeof all_envs[0]; i++)
    if (strcmp(all_envs[i]->name, name) == 0) return all_envs[i];
  return NULL;
}

mt_status mtd_rl_batch_new(const mtd_rl_env *env, int64_t n, mtd_rl_autoreset mode, uint64_t seed,
                           mtd_rl_batch **out) {
  *out = NULL;
  if (n <= 0 || n > ((int64_t)1 << 40)) return mt_fail(MT_EARG, "%s: num_envs must be positive, got %lld",
                                                         env->name, (long long)n);
  mtd_rl_batch *b = calloc(1, sizeof *b);
  if (!b) return mt_fail(MT_ENOMEM, "%s: out of memory for %lld envs", env->name, (long long)n);
  b->env = env, b->n = n, b->mode = mode, b->seed = seed;
  b->state = calloc((size_t)n * env->nstate, sizeof(double));
  b->elapsed = calloc((size_t)n, sizeof(int64_t));
  b->episode = calloc((size_t)n, sizeof(uint64_t));
  b->done = calloc((size_t)n, 1);
  if (!b->state || !b->elapsed || !b->episode || !b->done) {
    mtd_rl_batch_free(b);
    return mt_fail(MT_ENOMEM, "%s: out of memory for %lld envs", env->name, (long long)n);
  }
  *out = b;
  return MT_OK;
}

void mtd_rl_batch_free(mtd_rl_batch *b) {
  if (!b) return;
  free(b->state), free(b->elapsed), free(b->episode), free(b->done);
  free(b);
}

/* nstate uniforms on [0, 1) for copy i's next reset: Philox4x32-10 with key
 * seed + i and counter (episode, block, "rl"); 53 bits each. */
static void draw_uniforms(const mtd_rl_batch *b, int64_t i, double *u) {
  uint64_t key64 = b->seed + (uint64_t)i, ep = b->episode[i];
  const uint32_t key[2] = {(uint32_t)key64, (uint32_t)(key64 >> 32)};
  for (int k = 0; k < b->env->nstate; k += 2) {
    const uint32_t ctr[4] = {(uint32_t)ep, (uint32_t)(ep >> 32), (uint32_t)(k / 2), 0x726cU};
    uint32_t r[4];
    mt_philox4x32_10(ctr, key, r);
    for (int j = 0; j < 2 && k + j < b->env->nstate; j++) {
      uint64_t bits = ((uint64_t)r[2 * j + 1] << 32) | r[2 * j];
      u[k + j] = (double)(bits >> 11) * 0x1p-53;
    }
  }
}

static void load(const mtd_rl_batch *b, int64_t i, double *s) {
  for (int k = 0; k < b->env->nstate; k++) s[k] = b->state[k * b->n + i];
}

static void store(mtd_rl_batch *b, int64_t i, const double *s) {
  for (int k = 0; k < b->env->nstate; k++) b->state[k * b->n + i] = s[k];
}

/* Resets copy i into s (and its columns, counters and flags). */
static void reset_one(mtd_rl_batch *b, int64_t i, double *s) {
  double u[MTD_RL_MAXSTATE];
  draw_uniforms(b, i, u);
  b->env->reset(s, u);
  store(b, i, s);
  b->episode[i]++;
  b->elapsed[i] = 0;
  b->done[i] = 0;
}

void mtd_rl_batch_reset(mtd_rl_batch *b, const uint8_t *mask, bool seed_given, uint64_t seed, float *obs) {
  if (seed_given) {
    b->seed = seed;
    memset(b->episode, 0, (size_t)b->n * sizeof(uint64_t));
  }
  const int nobs = b->env->nobs;
  for (int64_t i = 0; i < b->n; i++) {
    double s[MTD_RL_MAXSTATE];
    if (!mask || mask[i]) reset_one(b, i, s);
    else load(b, i, s);
    b->env->observe(s, obs + i * nobs);
  }
}

/* Action i as the number the env's step takes. */
static inline double action_of(const mtd_rl_batch *b, const void *actions, mt_dtype dt, int64_t i) {
  if (b->env->n_actions) return (double)((const int64_t *)actions)[i];
  int64_t j = i * b->env->action_dim;
  return dt == MT_FLOAT64 ? ((const double *)actions)[j] : (double)((const float *)actions)[j];
}

mt_status mtd_rl_batch_check(const mtd_rl_batch *b, const void *actions, mt_dtype dt) {
  const mtd_rl_env *e = b->env;
  if (b->mode == MTD_RL_DISABLED)
    for (int64_t i = 0; i < b->n; i++)
      if (b->done[i])
        return mt_fail(MT_EARG,
                            "%s: env %lld ended (terminated or truncated) and autoreset is disabled: call "
                            "reset() (or reset{reset_mask=...}) before stepping it again",
                            e->name, (long long)i + 1);
  if (e->n_actions) {
    const int64_t *a = actions;
    for (int64_t i = 0; i < b->n; i++)
      if (a[i] < 1 || a[i] > e->n_actions)
        return mt_fail(MT_EARG, "%s: action %lld of env %lld is outside the action spec (1 to %d; actions are "
                                       "1-based)", e->name, (long long)a[i], (long long)i + 1, e->n_actions);
    return MT_OK;
  }
  int64_t m = b->n * e->action_dim;
  for (int64_t j = 0; j < m; j++) {
    double v = dt == MT_FLOAT64 ? ((const double *)actions)[j] : (double)((const float *)actions)[j];
    if (!(v >= e->action_low && v <= e->action_high))
      return mt_fail(MT_EARG, "%s: action %g of env %lld is outside the action spec [%g, %g]", e->name, v,
                          (long long)(j / e->action_dim) + 1, e->action_low, e->action_high);
  }
  return MT_OK;
}

typedef struct step_ctx {
  mtd_rl_batch *b;
  const void *actions;
  mt_dtype dt;
  const mtd_rl_out *out;
} step_ctx;

/* Steps copies [lo, hi): Gymnasium's vector-env step with a TimeLimit. */
static void step_range(void *vctx, int64_t lo, int64_t hi) {
  step_ctx *c = vctx;
  mtd_rl_batch *b = c->b;
  const mtd_rl_env *e = b->env;
  const mtd_rl_out *o = c->out;
  const int nobs = e->nobs;
  for (int64_t i = lo; i < hi; i++) {
    double s[MTD_RL_MAXSTATE], r;
    float *obs = o->obs + i * nobs;
    bool term;
    if (b->done[i]) { /* next_step: this step is the reset */
      reset_one(b, i, s);
      e->observe(s, obs);
      o->reward[i] = 0, o->terminated[i] = false, o->truncated[i] = false;
      if (o->final_obs) memcpy(o->final_obs + i * nobs, obs, nobs * sizeof(float));
      continue;
    }
    load(b, i, s);
    e->step(s, action_of(b, c->actions, c->dt, i), &r, &term);
    bool trunc = ++b->elapsed[i] >= e->max_episode_steps;
    o->reward[i] = (float)r, o->terminated[i] = term, o->truncated[i] = trunc;
    if (!(term || trunc)) {
      store(b, i, s);
      e->observe(s, obs);
      if (o->final_obs) memcpy(o->final_obs + i * nobs, obs, nobs * sizeof(float));
    } else if (b->mode == MTD_RL_SAME_STEP) {
      e->observe(s, o->final_obs + i * nobs);
      reset_one(b, i, s);
      e->observe(s, obs);
    } else {
      store(b, i, s);
      e->observe(s, obs);
      b->done[i] = 1;
    }
  }
}

mt_status mtd_rl_batch_step(mtd_rl_batch *b, const void *actions, mt_dtype dt, const mtd_rl_out *out) {
  step_ctx c = {b, actions, dt, out};
  return mt_parallel_for(b->n, 2048, step_range, &c);
}
