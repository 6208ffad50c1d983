/* mountain_car.c -- Gymnasium's MountainCar-v0 (Moore's mountain car) in
 * float64: actions 1, 2, 3 accelerate left, not at all, right (Gymnasium's
 * 0, 1, 2); reward -1 per step until the car reaches the flag. */
#include <math.h>

#include "env.h"

#define MIN_POSITION -1.2
#define MAX_POSITION 0.6
#define MAX_SPEED 0.07
#define GOAL_POSITION 0.5
#define GOAL_VELOCITY 0.0
#define FORCE 0.001
#define GRAVITY 0.0025

/* position uniform on [-0.6, -0.4), velocity 0 */
static void reset(double *s, const double *u) {
  s[0] = -0.6 + (-0.4 - -0.6) * u[0];
  s[1] = 0.0;
}

static double clip(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static void step(double *s, double a, double *reward, bool *terminated) {
  double position = s[0], velocity = s[1];
  velocity = velocity + ((a - 2) * FORCE + cos(3 * position) * (-GRAVITY));
  velocity = clip(velocity, -MAX_SPEED, MAX_SPEED);
  position = position + velocity;
  position = clip(position, MIN_POSITION, MAX_POSITION);
  if (position == MIN_POSITION && velocity < 0) velocity = 0;
  *terminated = position >= GOAL_POSITION && velocity >= GOAL_VELOCITY;
  *reward = -1.0;
  s[0] = position, s[1] = velocity;
}

static void observe(const double *s, float *obs) { obs[0] = (float)s[0], obs[1] = (float)s[1]; }

static const float obs_low[2] = {(float)MIN_POSITION, (float)-MAX_SPEED};
static const float obs_high[2] = {(float)MAX_POSITION, (float)MAX_SPEED};

const mtd_rl_env mtd_rl_mountain_car = {
    .name = "MountainCar-v0", .nstate = 2, .nobs = 2, .n_actions = 3, .obs_low = obs_low, .obs_high = obs_high,
    .max_episode_steps = 200, .reset = reset, .step = step, .observe = observe};
