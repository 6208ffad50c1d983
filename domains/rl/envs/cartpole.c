/* cartpole.c -- Gymnasium's CartPole-v1 (Barto, Sutton and Anderson's
 * cart-pole): its constants, Euler integration in float64, float32
 * observations. Action 1 pushes left (Gymnasium's 0), 2 pushes right. */
#include <math.h>

#include "env.h"

#define GRAVITY 9.8
#define MASSCART 1.0
#define MASSPOLE 0.1
#define TOTAL_MASS (MASSPOLE + MASSCART)
#define LENGTH 0.5 /* half the pole's length */
#define POLEMASS_LENGTH (MASSPOLE * LENGTH)
#define FORCE_MAG 10.0
#define TAU 0.02
#define THETA_THRESHOLD (12 * 2 * M_PI / 360)
#define X_THRESHOLD 2.4

/* uniform on [-0.05, 0.05) per component, as np_random.uniform(low, high) */
static void reset(double *s, const double *u) {
  for (int k = 0; k < 4; k++) s[k] = -0.05 + (0.05 - -0.05) * u[k];
}

static void step(double *s, double a, double *reward, bool *terminated) {
  double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
  double force = a == 2 ? FORCE_MAG : -FORCE_MAG;
  double costheta = cos(theta), sintheta = sin(theta);
  double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
  double thetaacc = (GRAVITY * sintheta - costheta * temp) /
                    (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS));
  double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
  x = x + TAU * x_dot; /* "euler", Gymnasium's default integrator */
  x_dot = x_dot + TAU * xacc;
  theta = theta + TAU * theta_dot;
  theta_dot = theta_dot + TAU * thetaacc;
  s[0] = x, s[1] = x_dot, s[2] = theta, s[3] = theta_dot;
  *terminated = x < -X_THRESHOLD || x > X_THRESHOLD || theta < -THETA_THRESHOLD || theta > THETA_THRESHOLD;
  *reward = 1.0;
}

static void observe(const double *s, float *obs) {
  for (int k = 0; k < 4; k++) obs[k] = (float)s[k];
}

static const float obs_high[4] = {(float)(X_THRESHOLD * 2), 3.4028234663852886e38f, (float)(THETA_THRESHOLD * 2),
                                  3.4028234663852886e38f};
static const float obs_low[4] = {-(float)(X_THRESHOLD * 2), -3.4028234663852886e38f, -(float)(THETA_THRESHOLD * 2),
                                 -3.4028234663852886e38f};

const mtd_rl_env mtd_rl_cartpole = {
    .name = "CartPole-v1", .nstate = 4, .nobs = 4, .n_actions = 2, .obs_low = obs_low, .obs_high = obs_high,
    .max_episode_steps = 500, .reset = reset, .step = step, .observe = observe};
