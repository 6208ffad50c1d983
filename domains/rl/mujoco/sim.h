/* sim.h -- a batch of N copies (mjData) of one MuJoCo model (mjModel),
 * stepped together on the engine's threads (torch.rl.envs.MujocoEnv's C
 * part; no Lua here). Each copy has its own random stream, so a copy's
 * trajectory does not depend on N, its place in the batch or the threads. */
#ifndef MTD_MJ_SIM_H
#define MTD_MJ_SIM_H

#include <mujoco/mujoco.h>
#include <stdbool.h>
#include <stdint.h>

#include "mt.h"

typedef struct mtd_mj_sim {
  mjModel *m;
  mjData **d;          /* n copies */
  int64_t n;
  int frame_skip;      /* mj_step calls per env step */
  int64_t max_steps;   /* truncation after this many steps (0: never) */
  double noise;        /* reset noise: uniform in [-noise, noise] on qpos and qvel */
  uint64_t (*rng)[4];  /* xoshiro256** state per copy */
  int64_t *elapsed;    /* steps since the copy's last reset */
  uint8_t *autoreset;  /* the copy ended its episode: its next step resets it */
  int64_t failed;      /* the first copy whose step raised a MuJoCo error (-1: none) */
  char err[512];       /* that error's text */
} mtd_mj_sim;

/* Loads the MJCF (XML) file at path and makes n copies of its data, at
 * the model's initial state. NULL on failure with a message in err. */
mtd_mj_sim *mtd_mj_open(const char *path, int64_t n, char *err, size_t errlen);
void mtd_mj_close(mtd_mj_sim *s);
/* Seeds copy i's stream from seed (splitmix64 of seed: copies seeded
 * seed, seed + 1, ... draw independent streams). */
void mtd_mj_seed(mtd_mj_sim *s, int64_t i, uint64_t seed);
/* Resets the copies with mask[i] (mask NULL: all) to qpos0 and zero
 * velocity plus the reset noise, and writes their rows of obs
 * ([n, nq + nv], float32 or float64, contiguous). */
mt_status mtd_mj_reset(mtd_mj_sim *s, const uint8_t *mask, mt_tensor *obs);
/* One env step of every copy: a copy whose autoreset flag is set is reset
 * instead (was_reset[i] = 1, action ignored); the others take ctrl from
 * their row of act ([n, nu], float32/float64, contiguous) and advance
 * frame_skip steps; truncated[i] = 1 once elapsed reaches max_steps.
 * On a MuJoCo error: MT_EARG, the copy reset, s->failed and s->err set. */
mt_status mtd_mj_step(mtd_mj_sim *s, const mt_tensor *act, mt_tensor *obs, uint8_t *truncated, uint8_t *was_reset);
/* Sets every copy's qpos ([n, nq]) and qvel ([n, nv]), float64
 * contiguous, then mj_forward; writes obs. */
mt_status mtd_mj_set_state(mtd_mj_sim *s, const double *qpos, const double *qvel, mt_tensor *obs);
/* Installs the MuJoCo error and warning handlers (once). */
void mtd_mj_init(void);

#endif
