/* pendulum.c -- Gymnasium's Pendulum-v1 (g = 10): a torque in [-2, 2],
 * float64 state (angle, angular velocity), reward -(angle^2 + 0.1 thdot^2
 * + 0.001 u^2) with the angle normalized to [-pi, pi); it never terminates. */
#include <math.h>

#include "env.h"

#define MAX_SPEED 8.0
#define MAX_TORQUE 2.0
#define DT 0.05
#define G 10.0
#define M 1.0
#define L 1.0

/* angle uniform on [-pi, pi), velocity on [-1, 1) */
static void reset(double *s, const double *u) {
  s[0] = -M_PI + (M_PI - -M_PI) * u[0];
  s[1] = -1.0 + (1.0 - -1.0) * u[1];
}

/* x mod m with the sign of m, as NumPy's % on float64 */
static double pymod(double x, double m) {
  double r = fmod(x, m);
  if (r != 0) {
    if ((m < 0) != (r < 0)) r += m;
  } else {
    r = copysign(0.0, m);
  }
  return r;
}

static double angle_normalize(double x) { return pymod(x + M_PI, 2 * M_PI) - M_PI; }

static void step(double *s, double a, double *reward, bool *terminated) {
  double th = s[0], thdot = s[1];
  double u = fmin(fmax(a, -MAX_TORQUE), MAX_TORQUE);
  double an = angle_normalize(th);
  double costs = an * an + 0.1 * (thdot * thdot) + 0.001 * (u * u);
  double newthdot = thdot + (3 * G / (2 * L) * sin(th) + 3.0 / (M * (L * L)) * u) * DT;
  newthdot = fmin(fmax(newthdot, -MAX_SPEED), MAX_SPEED);
  double newth = th + newthdot * DT;
  s[0] = newth, s[1] = newthdot;
  *terminated = false;
  *reward = -costs;
}

static void observe(const double *s, float *obs) {
  obs[0] = (float)cos(s[0]), obs[1] = (float)sin(s[0]), obs[2] = (float)s[1];
}

static const float obs_high[3] = {1, 1, (float)MAX_SPEED};
static const float obs_low[3] = {-1, -1, -(float)MAX_SPEED};

const mtd_rl_env mtd_rl_pendulum = {
    .name = "Pendulum-v1", .nstate = 2, .nobs = 3, .action_dim = 1, .action_low = -MAX_TORQUE,
    .action_high = MAX_TORQUE, .obs_low = obs_low, .obs_high = obs_high, .max_episode_steps = 200, .reset = reset,
    .step = step, .observe = observe};
