/* mountain_car_continuous.c -- Gymnasium's MountainCarContinuous-v0: a
 * force in [-1, 1], arithmetic in float64 (NumPy 1.x promotes the float32
 * state's scalars) and a state kept in float32 after every step, as
 * Gymnasium stores it; reward 100 at the flag minus 0.1 * action^2. */
#include <math.h>

#include "env.h"

#define MIN_ACTION -1.0
#define MAX_ACTION 1.0
#define MIN_POSITION -1.2
#define MAX_POSITION 0.6
#define MAX_SPEED 0.07
#define GOAL_POSITION 0.45
#define GOAL_VELOCITY 0.0
#define POWER 0.0015

/* position uniform on [-0.6, -0.4), velocity 0 (float64 until the first step) */
static void reset(double *s, const double *u) {
  s[0] = -0.6 + (-0.4 - -0.6) * u[0];
  s[1] = 0.0;
}

static void step(double *s, double a, double *reward, bool *terminated) {
  double position = s[0], velocity = s[1];
  double force = fmin(fmax(a, MIN_ACTION), MAX_ACTION);
  velocity = velocity + (force * POWER - 0.0025 * cos(3 * position));
  if (velocity > MAX_SPEED) velocity = MAX_SPEED;
  if (velocity < -MAX_SPEED) velocity = -MAX_SPEED;
  position = position + velocity;
  if (position > MAX_POSITION) position = MAX_POSITION;
  if (position < MIN_POSITION) position = MIN_POSITION;
  if (position == MIN_POSITION && velocity < 0) velocity = 0;
  *terminated = position >= GOAL_POSITION && velocity >= GOAL_VELOCITY;
  *reward = (*terminated ? 100.0 : 0.0) - pow(a, 2) * 0.1;
  s[0] = (float)position, s[1] = (float)velocity;
}

static void observe(const double *s, float *obs) { obs[0] = (float)s[0], obs[1] = (float)s[1]; }

static const float obs_low[2] = {(float)MIN_POSITION, (float)-MAX_SPEED};
static const float obs_high[2] = {(float)MAX_POSITION, (float)MAX_SPEED};

const mtd_rl_env mtd_rl_mountain_car_continuous = {
    .name = "MountainCarContinuous-v0", .nstate = 2, .nobs = 2, .action_dim = 1, .action_low = MIN_ACTION,
    .action_high = MAX_ACTION, .obs_low = obs_low, .obs_high = obs_high, .max_episode_steps = 999, .reset = reset,
    .step = step, .observe = observe};
