/* env.h -- Gymnasium's classic-control environments in C, with no Lua and
 * no tensors: one mtd_rl_env per environment (its constants, reset, step
 * and observation, in its own file) and a batch of N copies stepped in one
 * call (batch.c). States are float64, in struct-of-arrays form; discrete
 * actions are 1-based (CartPole's 1 is Gymnasium's 0, "push left"). */
#ifndef MTD_RL_ENV_H
#define MTD_RL_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "mt.h"

#define MTD_RL_MAXSTATE 4
#define MTD_RL_MAXOBS 6
/* copies per block of a threaded step: enough independent lanes for the
 * vector loops to run at the divider's throughput, not its latency */
#define MTD_RL_BLOCK 32

/* One environment's definition. The functions see one copy's state s
 * (MTD_RL_MAXSTATE doubles, a local copy of its column entries). */
typedef struct mtd_rl_env {
  const char *name;          /* Gymnasium's id: "CartPole-v1" */
  int nstate, nobs;          /* float64 state size, float32 observation size */
  int n_actions;             /* discrete: actions 1..n_actions; 0: continuous */
  int action_dim;            /* continuous: size of one action */
  double action_low, action_high; /* continuous: the bounds of every entry */
  const float *obs_low, *obs_high; /* nobs each: Gymnasium's observation Box */
  int64_t max_episode_steps; /* Gymnasium's TimeLimit */
  /* s from nstate uniforms u on [0, 1) (Gymnasium's reset distribution) */
  void (*reset)(double *s, const double *u);
  /* advances s by action a (the 1-based index, or the first entry of a
   * continuous action); sets the reward and whether the episode ended */
  void (*step)(double *s, double a, double *reward, bool *terminated);
  /* optional, instead of step: advances MTD_RL_BLOCK copies at once, their
   * component k at col[k][0..MTD_RL_BLOCK) (vectorized; every lane is
   * computed the same way, whatever the batch size or thread count) */
  void (*step_block)(double *const *col, const double *a, double *reward, bool *terminated);
  /* the float32 observation of s */
  void (*observe)(const double *s, float *obs);
  /* optional: the observations of a block's first m lanes (as step_block's
   * col) into obs [m, nobs] */
  void (*observe_block)(double *const *col, float *obs, int m);
} mtd_rl_env;

extern const mtd_rl_env mtd_rl_cartpole, mtd_rl_acrobot, mtd_rl_mountain_car, mtd_rl_mountain_car_continuous,
    mtd_rl_pendulum;

/* The environment with Gymnasium id `name`, or NULL. */
const mtd_rl_env *mtd_rl_find(const char *name);

/* Gymnasium's autoreset modes for vector envs: the step after a done one
 * returns the reset observation (next_step); the done step returns it and
 * keeps the last one as final observation (same_step); or none, when
 * stepping a done copy is an error until it is reset (disabled). */
typedef enum { MTD_RL_NEXT_STEP, MTD_RL_SAME_STEP, MTD_RL_DISABLED } mtd_rl_autoreset;

/* N copies of one environment. */
typedef struct mtd_rl_batch {
  const mtd_rl_env *env;
  int64_t n;
  mtd_rl_autoreset mode;
  int64_t npad;        /* n rounded up to whole blocks */
  double *state;       /* nstate columns of npad: component k of copy i at [k * npad + i] */
  int64_t *elapsed;    /* steps since the copy's last reset (TimeLimit) */
  uint64_t *episode;   /* resets of copy i since seeding: its RNG counter */
  uint8_t *done;       /* ended and not yet reset */
  uint64_t seed;       /* copy i (0-based) draws from the key mix64(seed + i): batch.c */
} mtd_rl_batch;

mt_status mtd_rl_batch_new(const mtd_rl_env *env, int64_t n, mtd_rl_autoreset mode, uint64_t seed,
                           mtd_rl_batch **out);
void mtd_rl_batch_free(mtd_rl_batch *b);

/* Resets the copies whose mask entry is nonzero (mask NULL: all), writing
 * every copy's observation to obs [n, nobs]. seed_given: reseed first (the
 * episode counters of all copies restart at 0). */
void mtd_rl_batch_reset(mtd_rl_batch *b, const uint8_t *mask, bool seed_given, uint64_t seed, float *obs);

/* The outputs of one batched step, each with n rows (final_obs only in
 * same_step mode, else NULL). */
typedef struct mtd_rl_out {
  float *obs, *reward, *final_obs;
  bool *terminated, *truncated;
} mtd_rl_out;

/* Checks the actions of one step (int64 indices for discrete envs, else n
 * rows of action_dim floats: f32 or f64) before anything moves: returns
 * MT_EARG with a message naming the env, the copy and the value for an
 * action outside the spec, or for a done copy when autoreset is disabled. */
mt_status mtd_rl_batch_check(const mtd_rl_batch *b, const void *actions, mt_dtype dt);
/* Steps every copy (after mtd_rl_batch_check), threaded over the engine's
 * pool for large n; copy i's results depend on nothing but its own state,
 * action and RNG stream, so they are the same for any thread count. */
mt_status mtd_rl_batch_step(mtd_rl_batch *b, const void *actions, mt_dtype dt, const mtd_rl_out *out);

#endif
