/* batch.c -- N copies of one classic-control environment stepped in one
 * call: the struct-of-arrays state, the TimeLimit counters, seeding by a
 * counter-based RNG per copy, and Gymnasium's autoreset modes. It knows no
 * environment's equations (those are in cartpole.c, acrobot.c, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

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
  b->npad = (n + MTD_RL_BLOCK - 1) / MTD_RL_BLOCK * MTD_RL_BLOCK;
  b->state = calloc((size_t)b->npad * env->nstate, sizeof(double));
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

/* SplitMix64's output function: a bijective mix of 64 bits. */
static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15ULL

/* nstate uniforms on [0, 1) for copy i's next reset, counter-based: copy i
 * has the key mix64(seed + i) (0-based i, so copy i of a batch seeded s
 * draws as a single env seeded s + i), and draw k of its episode e is
 * SplitMix64's output number 4e + k + 1 from that key; 53 bits each. */
static void draw_uniforms(const mtd_rl_batch *b, int64_t i, double *u) {
  uint64_t key = mix64(b->seed + (uint64_t)i), ctr = b->episode[i] * MTD_RL_MAXSTATE;
  for (int k = 0; k < b->env->nstate; k++) u[k] = (double)(int64_t)(mix64(key + (ctr + k + 1) * GOLDEN) >> 11) * 0x1p-53;
}

static void load(const mtd_rl_batch *b, int64_t i, double *s) {
  for (int k = 0; k < b->env->nstate; k++) s[k] = b->state[k * b->npad + i];
}

static void store(mtd_rl_batch *b, int64_t i, const double *s) {
  for (int k = 0; k < b->env->nstate; k++) b->state[k * b->npad + i] = s[k];
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

/* Actions i0 .. i0 + m - 1 as the numbers the env's step takes (the first
 * entry of each continuous action), into a[0..m). */
static void gather_actions(const mtd_rl_batch *b, const void *actions, mt_dtype dt, int64_t i0, int m, double *a) {
  if (b->env->n_actions) {
    const int64_t *src = (const int64_t *)actions + i0;
    for (int j = 0; j < m; j++) a[j] = (double)src[j];
    return;
  }
  int64_t d = b->env->action_dim;
  if (dt == MT_FLOAT64) {
    for (int j = 0; j < m; j++) a[j] = ((const double *)actions)[(i0 + j) * d];
  } else {
    for (int j = 0; j < m; j++) a[j] = ((const float *)actions)[(i0 + j) * d];
  }
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
    int64_t bad = 0; /* a branch-free count first: the loop vectorizes */
    for (int64_t i = 0; i < b->n; i++) bad += (a[i] < 1) | (a[i] > e->n_actions);
    for (int64_t i = 0; bad && i < b->n; i++)
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

/* Steps the copies of blocks [lo, hi): Gymnasium's vector-env step with a
 * TimeLimit. A block's lanes past n are stepped too (from zeros, with
 * action 1 or 0) and dropped. */
static void step_range(void *vctx, int64_t lo, int64_t hi) {
  step_ctx *c = vctx;
  mtd_rl_batch *b = c->b;
  const mtd_rl_env *e = b->env;
  const mtd_rl_out *o = c->out;
  const int nobs = e->nobs, ns = e->nstate;
  for (int64_t blk = lo; blk < hi; blk++) {
    const int64_t i0 = blk * MTD_RL_BLOCK;
    const int m = (int)(b->n - i0 < MTD_RL_BLOCK ? b->n - i0 : MTD_RL_BLOCK);
    double a[MTD_RL_BLOCK], rew[MTD_RL_BLOCK], s[MTD_RL_MAXSTATE];
    bool term[MTD_RL_BLOCK];
    gather_actions(b, c->actions, c->dt, i0, m, a);
    for (int j = m; j < MTD_RL_BLOCK; j++) a[j] = e->n_actions > 0; /* padding lanes: a valid action */
    double *col[MTD_RL_MAXSTATE];
    for (int k = 0; k < ns; k++) col[k] = b->state + k * b->npad + i0;
    if (e->step_block) {
      e->step_block(col, a, rew, term);
      for (int k = 0; k < ns; k++)
        for (int j = m; j < MTD_RL_BLOCK; j++) col[k][j] = 0;
    } else {
      for (int j = 0; j < m; j++) {
        rew[j] = 0, term[j] = false;
        if (b->done[i0 + j]) continue;
        load(b, i0 + j, s);
        e->step(s, a[j], &rew[j], &term[j]);
        store(b, i0 + j, s);
      }
    }
    /* the stepped copies' observations, rewards and flags (a done copy's
     * are replaced below) */
    float *obs = o->obs + i0 * nobs;
    if (e->observe_block) {
      e->observe_block(col, obs, m);
    } else {
      for (int j = 0; j < m; j++) load(b, i0 + j, s), e->observe(s, obs + j * nobs);
    }
    if (o->final_obs) memcpy(o->final_obs + i0 * nobs, obs, (size_t)m * nobs * sizeof(float));
    int64_t *elapsed = b->elapsed + i0;
    bool *trunc = o->truncated + i0, *done = (bool *)o->terminated + i0;
    uint8_t *was_done = b->done + i0;
    for (int j = 0; j < m; j++) {
      elapsed[j] += 1;
      trunc[j] = elapsed[j] >= e->max_episode_steps;
      done[j] = term[j]; /* o->terminated */
      o->reward[i0 + j] = (float)rew[j];
    }
    /* the few copies that ended now or before */
    for (int j = 0; j < m; j++) {
      if (!(was_done[j] | term[j] | trunc[j])) continue;
      const int64_t i = i0 + j;
      if (was_done[j]) { /* next_step: this step is the reset */
        reset_one(b, i, s);
        e->observe(s, obs + j * nobs);
        o->reward[i] = 0, o->terminated[i] = false, o->truncated[i] = false;
      } else if (b->mode == MTD_RL_SAME_STEP) { /* final_obs keeps the last observation */
        reset_one(b, i, s);
        e->observe(s, obs + j * nobs);
      } else {
        was_done[j] = 1;
      }
    }
  }
}

mt_status mtd_rl_batch_step(mtd_rl_batch *b, const void *actions, mt_dtype dt, const mtd_rl_out *out) {
  step_ctx c = {b, actions, dt, out};
  return mt_parallel_for(b->npad / MTD_RL_BLOCK, 2048 / MTD_RL_BLOCK, step_range, &c);
}
