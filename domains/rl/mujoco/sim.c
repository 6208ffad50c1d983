/* sim.c -- N copies of a MuJoCo model stepped on the engine's threads
 * (mt_parallel_team; each thread takes the next copy). Follows Gymnasium's MujocoEnv:
 * ctrl is the action as given (MuJoCo itself clamps it to ctrlrange where
 * ctrllimited), then frame_skip mj_step calls; reset is mj_resetData plus
 * uniform noise, then mj_forward. MuJoCo reports fatal errors through
 * mju_user_error and expects no return: the handler longjmps back to the
 * copy's step on the same thread (the one longjmp outside lua_bindings/,
 * as MuJoCo's own bindings throw), the copy is reset and the step fails. */
#include "sim.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- MuJoCo's error and warning callbacks ---- */
static _Thread_local jmp_buf *tl_jmp; /* set around MuJoCo calls on this thread */
static _Thread_local char tl_msg[512];

static void on_error(const char *msg) {
  snprintf(tl_msg, sizeof tl_msg, "%s", msg);
  if (tl_jmp) longjmp(*tl_jmp, 1);
  fprintf(stderr, "MuJoCo error outside a guarded call: %s\n", msg);
  abort();
}

static void on_warning(const char *msg) { fprintf(stderr, "MujocoEnv: MuJoCo warning: %s\n", msg); }

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void install(void) {
  mju_user_error = on_error;
  mju_user_warning = on_warning;
}
void mtd_mj_init(void) { pthread_once(&init_once, install); }

/* ---- random streams: splitmix64 seeding, xoshiro256** draws ---- */
static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next_u64(uint64_t st[4]) {
  uint64_t r = rotl(st[1] * 5, 7) * 9, t = st[1] << 17;
  st[2] ^= st[0], st[3] ^= st[1], st[1] ^= st[2], st[0] ^= st[3];
  st[2] ^= t, st[3] = rotl(st[3], 45);
  return r;
}

/* uniform in [0, 1) with 53 random bits */
static double next_unit(uint64_t st[4]) { return (double)(next_u64(st) >> 11) * 0x1.0p-53; }

void mtd_mj_seed(mtd_mj_sim *s, int64_t i, uint64_t seed) {
  uint64_t x = seed;
  for (int k = 0; k < 4; k++) s->rng[i][k] = splitmix(&x);
}

/* ---- opening and closing ---- */
mtd_mj_sim *mtd_mj_open(const char *path, int64_t n, char *err, size_t errlen) {
  mtd_mj_init();
  char lerr[1000] = "";
  mtd_mj_sim *s = calloc(1, sizeof *s);
  if (!s) return snprintf(err, errlen, "out of memory"), NULL;
  s->n = n, s->frame_skip = 1, s->failed = -1;
  jmp_buf jb, *prev = tl_jmp;
  tl_jmp = &jb;
  if (setjmp(jb)) {
    tl_jmp = prev;
    snprintf(err, errlen, "%s", tl_msg);
    mtd_mj_close(s);
    return NULL;
  }
  s->m = mj_loadXML(path, NULL, lerr, sizeof lerr);
  if (!s->m) {
    tl_jmp = prev;
    snprintf(err, errlen, "%s", lerr[0] ? lerr : "MuJoCo could not load it");
    mtd_mj_close(s);
    return NULL;
  }
  s->d = calloc((size_t)n, sizeof *s->d);
  s->rng = calloc((size_t)n, sizeof *s->rng);
  s->elapsed = calloc((size_t)n, sizeof *s->elapsed);
  s->autoreset = calloc((size_t)n, 1);
  bool ok = s->d && s->rng && s->elapsed && s->autoreset;
  for (int64_t i = 0; ok && i < n; i++) ok = (s->d[i] = mj_makeData(s->m)) != NULL;
  tl_jmp = prev;
  if (!ok) {
    snprintf(err, errlen, "out of memory for %lld copies", (long long)n);
    mtd_mj_close(s);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) mtd_mj_seed(s, i, (uint64_t)i);
  return s;
}

void mtd_mj_close(mtd_mj_sim *s) {
  if (!s) return;
  for (int64_t i = 0; s->d && i < s->n; i++)
    if (s->d[i]) mj_deleteData(s->d[i]);
  if (s->m) mj_deleteModel(s->m);
  free(s->d), free(s->rng), free(s->elapsed), free(s->autoreset), free(s);
}

/* ---- one copy ---- */
/* copy i's qpos then qvel into row i of obs (float32 or float64) */
static void write_obs(const mtd_mj_sim *s, int64_t i, mt_tensor *obs) {
  const mjData *d = s->d[i];
  int nq = s->m->nq, nv = s->m->nv, k = nq + nv;
  if (obs->dtype == MT_FLOAT64) {
    double *o = (double *)mt_data(obs) + i * k;
    memcpy(o, d->qpos, sizeof(double) * (size_t)nq);
    memcpy(o + nq, d->qvel, sizeof(double) * (size_t)nv);
  } else {
    float *o = (float *)mt_data(obs) + i * k;
    for (int j = 0; j < nq; j++) o[j] = (float)d->qpos[j];
    for (int j = 0; j < nv; j++) o[nq + j] = (float)d->qvel[j];
  }
}

/* Gymnasium's reset_model: qpos0 + U(-noise, noise) per coordinate, then
 * qvel 0 + U(-noise, noise), then mj_forward. MuJoCo errors propagate. */
static void reset_one(mtd_mj_sim *s, int64_t i) {
  mjData *d = s->d[i];
  mj_resetData(s->m, d);
  if (s->noise > 0) {
    double a = s->noise;
    for (int j = 0; j < s->m->nq; j++) d->qpos[j] += -a + 2 * a * next_unit(s->rng[i]);
    for (int j = 0; j < s->m->nv; j++) d->qvel[j] += -a + 2 * a * next_unit(s->rng[i]);
  }
  mj_forward(s->m, d);
  s->elapsed[i] = 0;
  s->autoreset[i] = 0;
}

/* ---- the batch ---- */
typedef struct job {
  mtd_mj_sim *s;
  const uint8_t *mask;
  const mt_tensor *act;
  const double *qpos, *qvel;
  mt_tensor *obs;
  uint8_t *truncated, *was_reset;
  int kind; /* 0 reset, 1 step, 2 set state */
  atomic_llong next; /* the next copy to take */
  pthread_mutex_t lock;
} job;

/* records copy i's MuJoCo error (the first one wins) and resets it */
static void fail(job *j, int64_t i) {
  pthread_mutex_lock(&j->lock);
  if (j->s->failed < 0 || i < j->s->failed) {
    j->s->failed = i;
    snprintf(j->s->err, sizeof j->s->err, "%s", tl_msg);
  }
  pthread_mutex_unlock(&j->lock);
  mj_resetData(j->s->m, j->s->d[i]);
  j->s->autoreset[i] = 1;
}

static void step_one(job *j, int64_t i) {
  mtd_mj_sim *s = j->s;
  mjData *d = s->d[i];
  int nu = s->m->nu;
  if (s->autoreset[i]) {
    reset_one(s, i);
    j->was_reset[i] = 1, j->truncated[i] = 0;
    return;
  }
  if (nu > 0 && j->act->dtype == MT_FLOAT64) {
    memcpy(d->ctrl, (const double *)mt_data(j->act) + i * nu, sizeof(double) * (size_t)nu);
  } else if (nu > 0) {
    const float *a = (const float *)mt_data(j->act) + i * nu;
    for (int k = 0; k < nu; k++) d->ctrl[k] = a[k];
  }
  for (int f = 0; f < s->frame_skip; f++) mj_step(s->m, d);
  s->elapsed[i]++;
  j->was_reset[i] = 0;
  j->truncated[i] = s->max_steps > 0 && s->elapsed[i] >= s->max_steps;
}

/* copy i's part of job j, MuJoCo errors caught (setjmp in its own frame:
 * nothing here changes after it) */
static void guarded(job *j, int64_t i) {
  mtd_mj_sim *s = j->s;
  jmp_buf jb, *prev = tl_jmp;
  tl_jmp = &jb;
  if (setjmp(jb)) {
    tl_jmp = prev;
    fail(j, i);
    write_obs(s, i, j->obs);
    return;
  }
  if (j->kind == 1) {
    step_one(j, i);
  } else if (j->kind == 0) {
    if (!j->mask || j->mask[i]) reset_one(s, i);
  } else {
    memcpy(s->d[i]->qpos, j->qpos + i * s->m->nq, sizeof(double) * (size_t)s->m->nq);
    memcpy(s->d[i]->qvel, j->qvel + i * s->m->nv, sizeof(double) * (size_t)s->m->nv);
    mj_forward(s->m, s->d[i]);
  }
  tl_jmp = prev;
  if (j->kind != 0 || !j->mask || j->mask[i]) write_obs(s, i, j->obs);
}

/* one thread of the team: takes the next copy until none is left (copies
 * cost unequal times, contacts and resets; a busy core gets fewer) */
static void run_thread(void *ctx, int ith, int nth) {
  job *j = ctx;
  for (;;) {
    int64_t i = atomic_fetch_add(&j->next, 1);
    if (i >= j->s->n || mt_interrupted()) return;
    guarded(j, i);
  }
}

/* runs job j over all copies; MT_EARG when a copy's MuJoCo call failed */
static mt_status run(job *j) {
  j->s->failed = -1;
  pthread_mutex_init(&j->lock, NULL);
  int nth = mt_get_num_threads();
  atomic_init(&j->next, 0);
  mt_status st = mt_parallel_team(nth < j->s->n ? nth : (int)j->s->n, run_thread, j);
  if (st == MT_OK && mt_interrupted()) st = mt_fail(MT_EINTR, "interrupted");
  pthread_mutex_destroy(&j->lock);
  if (st == MT_OK && j->s->failed >= 0) st = MT_EARG;
  return st;
}

mt_status mtd_mj_reset(mtd_mj_sim *s, const uint8_t *mask, mt_tensor *obs) {
  job j = {.s = s, .mask = mask, .obs = obs, .kind = 0};
  return run(&j);
}

mt_status mtd_mj_step(mtd_mj_sim *s, const mt_tensor *act, mt_tensor *obs, uint8_t *truncated, uint8_t *was_reset) {
  job j = {.s = s, .act = act, .obs = obs, .truncated = truncated, .was_reset = was_reset, .kind = 1};
  return run(&j);
}

mt_status mtd_mj_set_state(mtd_mj_sim *s, const double *qpos, const double *qvel, mt_tensor *obs) {
  job j = {.s = s, .qpos = qpos, .qvel = qvel, .obs = obs, .kind = 2};
  return run(&j);
}
