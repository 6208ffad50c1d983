/* cartpole.c -- Gymnasium's CartPole-v1 (Barto, Sutton and Anderson's
 * cart-pole): its constants, Euler integration in float64, float32
 * observations. Action 1 pushes left (Gymnasium's 0), 2 pushes right.
 * Stepped in blocks, in loops the compiler vectorizes; sine and cosine
 * by fdlibm's polynomial kernels where the pole is (|theta| <= pi/4: within
 * an ulp of libm's), by libm's own elsewhere. */
#include <math.h>
#include <string.h>

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

/* uniform on [-0.05, 0.05) per component, as np_random.uniform(low, high);
 * written out: a vectorized loop would read u right after its scalar
 * stores (a store-forwarding stall) */
static void reset(double *s, const double *u) {
  s[0] = -0.05 + (0.05 - -0.05) * u[0];
  s[1] = -0.05 + (0.05 - -0.05) * u[1];
  s[2] = -0.05 + (0.05 - -0.05) * u[2];
  s[3] = -0.05 + (0.05 - -0.05) * u[3];
}

/* fdlibm's __kernel_sin and __kernel_cos (their published minimax
 * coefficients) for |x| <= pi/4, written as plain expressions so that a
 * loop over them vectorizes. */
static inline double kernel_sin(double x) {
  const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
               S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
               S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  double z = x * x, v = z * x, r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
  return x + v * (S1 + z * r);
}

static inline double kernel_cos(double x) {
  const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
               C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
               C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  double z = x * x, w = z * z, r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
  double hz = 0.5 * z;
  w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + z * r);
}

static void step_block(double *const *col, const double *a, double *reward, bool *terminated) {
  enum { B = MTD_RL_BLOCK };
  double x[B], x_dot[B], theta[B], theta_dot[B], costheta[B], sintheta[B], force[B];
  memcpy(x, col[0], sizeof x), memcpy(x_dot, col[1], sizeof x_dot);
  memcpy(theta, col[2], sizeof theta), memcpy(theta_dot, col[3], sizeof theta_dot);
  int far = 0;
  for (int j = 0; j < B; j++) {
    sintheta[j] = kernel_sin(theta[j]), costheta[j] = kernel_cos(theta[j]);
    far |= fabs(theta[j]) > M_PI_4;
  }
  if (far) /* each lane's values depend on its own angle only */
    for (int j = 0; j < B; j++)
      if (fabs(theta[j]) > M_PI_4) sintheta[j] = sin(theta[j]), costheta[j] = cos(theta[j]);
  for (int j = 0; j < B; j++) force[j] = a[j] == 2 ? FORCE_MAG : -FORCE_MAG;
  /* on local arrays, so the compiler sees no aliasing and vectorizes */
  for (int j = 0; j < B; j++) {
    double c = costheta[j], s = sintheta[j];
    double temp = (force[j] + POLEMASS_LENGTH * (theta_dot[j] * theta_dot[j]) * s) / TOTAL_MASS;
    double thetaacc = (GRAVITY * s - c * temp) / (LENGTH * (4.0 / 3.0 - MASSPOLE * (c * c) / TOTAL_MASS));
    double xacc = temp - POLEMASS_LENGTH * thetaacc * c / TOTAL_MASS;
    x[j] = x[j] + TAU * x_dot[j]; /* "euler", Gymnasium's default integrator */
    x_dot[j] = x_dot[j] + TAU * xacc;
    theta[j] = theta[j] + TAU * theta_dot[j];
    theta_dot[j] = theta_dot[j] + TAU * thetaacc;
  }
  for (int j = 0; j < B; j++) {
    terminated[j] = (x[j] < -X_THRESHOLD) | (x[j] > X_THRESHOLD) | (theta[j] < -THETA_THRESHOLD) |
                    (theta[j] > THETA_THRESHOLD);
    reward[j] = 1.0;
  }
  memcpy(col[0], x, sizeof x), memcpy(col[1], x_dot, sizeof x_dot);
  memcpy(col[2], theta, sizeof theta), memcpy(col[3], theta_dot, sizeof theta_dot);
}

static void observe(const double *s, float *obs) {
  obs[0] = (float)s[0], obs[1] = (float)s[1], obs[2] = (float)s[2], obs[3] = (float)s[3];
}

static void observe_block(double *const *col, float *obs, int m) {
  for (int j = 0; j < m; j++)
    for (int k = 0; k < 4; k++) obs[j * 4 + k] = (float)col[k][j];
}

static const float obs_high[4] = {(float)(X_THRESHOLD * 2), 3.4028234663852886e38f, (float)(THETA_THRESHOLD * 2),
                                  3.4028234663852886e38f};
static const float obs_low[4] = {-(float)(X_THRESHOLD * 2), -3.4028234663852886e38f, -(float)(THETA_THRESHOLD * 2),
                                 -3.4028234663852886e38f};

const mtd_rl_env mtd_rl_cartpole = {
    .name = "CartPole-v1", .nstate = 4, .nobs = 4, .n_actions = 2, .obs_low = obs_low, .obs_high = obs_high,
    .max_episode_steps = 500, .reset = reset, .step_block = step_block, .observe = observe,
    .observe_block = observe_block};
