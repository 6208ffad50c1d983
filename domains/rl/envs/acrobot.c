/* acrobot.c -- Gymnasium's Acrobot-v1 (Sutton and Barto's "book" dynamics):
 * one RK4 step of dt 0.2 in float64 from a float32 initial state, angles
 * wrapped to [-pi, pi], velocities bounded. Actions 1, 2, 3 apply torque
 * -1, 0, +1 (Gymnasium's 0, 1, 2). */
#include <math.h>

#include "env.h"

#define DT 0.2
#define LINK_LENGTH_1 1.0
#define LINK_MASS_1 1.0
#define LINK_MASS_2 1.0
#define LINK_COM_POS_1 0.5
#define LINK_COM_POS_2 0.5
#define LINK_MOI 1.0
#define MAX_VEL_1 (4 * M_PI)
#define MAX_VEL_2 (9 * M_PI)

/* uniform on [-0.1, 0.1) per component, then rounded to float32 (Gymnasium
 * draws in float64 and keeps .astype(np.float32)) */
static void reset(double *s, const double *u) {
  s[0] = (float)(-0.1 + (0.1 - -0.1) * u[0]);
  s[1] = (float)(-0.1 + (0.1 - -0.1) * u[1]);
  s[2] = (float)(-0.1 + (0.1 - -0.1) * u[2]);
  s[3] = (float)(-0.1 + (0.1 - -0.1) * u[3]);
}

/* Gymnasium's _dsdt: the derivative of (theta1, theta2, dtheta1, dtheta2)
 * under torque a. */
static void dsdt(const double *s, double a, double *d) {
  const double m1 = LINK_MASS_1, m2 = LINK_MASS_2, l1 = LINK_LENGTH_1, lc1 = LINK_COM_POS_1, lc2 = LINK_COM_POS_2,
               I1 = LINK_MOI, I2 = LINK_MOI, g = 9.8;
  double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
  double d1 = m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * cos(theta2)) + I1 + I2;
  double d2 = m2 * ((lc2 * lc2) + l1 * lc2 * cos(theta2)) + I2;
  double phi2 = m2 * lc2 * g * cos(theta1 + theta2 - M_PI / 2.0);
  double phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * sin(theta2) - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin(theta2) +
                (m1 * lc1 + m2 * l1) * g * cos(theta1 - M_PI / 2) + phi2;
  double ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * sin(theta2) - phi2) /
                    (m2 * (lc2 * lc2) + I2 - (d2 * d2) / d1);
  double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  d[0] = dtheta1, d[1] = dtheta2, d[2] = ddtheta1, d[3] = ddtheta2;
}

/* x moved into [lo, hi] by whole periods (Gymnasium's wrap) */
static double wrap(double x, double lo, double hi) {
  double diff = hi - lo;
  while (x > hi) x = x - diff;
  while (x < lo) x = x + diff;
  return x;
}

static double bound(double x, double lo, double hi) { return fmin(fmax(x, lo), hi); }

static void step(double *s, double a, double *reward, bool *terminated) {
  static const double torques[3] = {-1.0, 0.0, 1.0};
  double torque = torques[(int)a - 1];
  const double dt = DT - 0.0, dt2 = dt / 2.0;
  double k1[4], k2[4], k3[4], k4[4], y[4];
  dsdt(s, torque, k1);
  for (int j = 0; j < 4; j++) y[j] = s[j] + dt2 * k1[j];
  dsdt(y, torque, k2);
  for (int j = 0; j < 4; j++) y[j] = s[j] + dt2 * k2[j];
  dsdt(y, torque, k3);
  for (int j = 0; j < 4; j++) y[j] = s[j] + dt * k3[j];
  dsdt(y, torque, k4);
  for (int j = 0; j < 4; j++) y[j] = s[j] + dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  s[0] = wrap(y[0], -M_PI, M_PI);
  s[1] = wrap(y[1], -M_PI, M_PI);
  s[2] = bound(y[2], -MAX_VEL_1, MAX_VEL_1);
  s[3] = bound(y[3], -MAX_VEL_2, MAX_VEL_2);
  *terminated = -cos(s[0]) - cos(s[1] + s[0]) > 1.0;
  *reward = *terminated ? 0.0 : -1.0;
}

static void observe(const double *s, float *obs) {
  obs[0] = (float)cos(s[0]), obs[1] = (float)sin(s[0]);
  obs[2] = (float)cos(s[1]), obs[3] = (float)sin(s[1]);
  obs[4] = (float)s[2], obs[5] = (float)s[3];
}

static const float obs_high[6] = {1, 1, 1, 1, (float)MAX_VEL_1, (float)MAX_VEL_2};
static const float obs_low[6] = {-1, -1, -1, -1, -(float)MAX_VEL_1, -(float)MAX_VEL_2};

const mtd_rl_env mtd_rl_acrobot = {
    .name = "Acrobot-v1", .nstate = 4, .nobs = 6, .n_actions = 3, .obs_low = obs_low, .obs_high = obs_high,
    .max_episode_steps = 500, .reset = reset, .step = step, .observe = observe};
