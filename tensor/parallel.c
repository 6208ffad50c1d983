/* parallel.c -- the engine's one thread runtime (OpenMP) and the interrupt
 * flag. Kernels split work with mt_parallel_for; long loops stop between
 * chunks when the user presses Ctrl-C (the REPL calls mt_interrupt). */
#include <omp.h>
#include <signal.h>

#include "mt.h"

static volatile sig_atomic_t interrupt_flag;
static int num_threads;

void mt_interrupt(void) { interrupt_flag = 1; }
void mt_clear_interrupt(void) { interrupt_flag = 0; }
bool mt_interrupted(void) { return interrupt_flag != 0; }

int mt_get_num_threads(void) {
  if (num_threads <= 0) num_threads = omp_get_max_threads();
  return num_threads;
}

void mt_set_num_threads(int n) {
  if (n < 1) n = 1;
  num_threads = n;
  omp_set_num_threads(n);
}

/* Chunks are handed out statically, each thread one contiguous range split in
 * pieces of at most `piece` so that an interrupt is noticed within a piece. */
mt_status mt_parallel_for(int64_t n, int64_t grain, mt_range_fn fn, void *ctx) {
  if (n <= 0) return MT_OK;
  if (grain < 1) grain = 1;
  int nt = mt_get_num_threads();
  if (nt == 1 || n < 2 * grain || omp_in_parallel()) {
    const int64_t piece = grain > (1 << 20) ? grain : (1 << 20);
    for (int64_t b = 0; b < n; b += piece) {
      if (interrupt_flag) return mt_fail(MT_EINTR, "interrupted");
      fn(ctx, b, b + piece < n ? b + piece : n);
    }
    /* a kernel that polls may have stopped inside the last piece */
    return interrupt_flag ? mt_fail(MT_EINTR, "interrupted") : MT_OK;
  }
  int64_t maxt = n / grain;
  if (maxt < nt) nt = (int)maxt;
#pragma omp parallel num_threads(nt)
  {
    int t = omp_get_thread_num(), k = omp_get_num_threads();
    int64_t b = n * t / k, e = n * (t + 1) / k;
    const int64_t piece = (1 << 22);
    for (int64_t s = b; s < e && !interrupt_flag; s += piece) fn(ctx, s, s + piece < e ? s + piece : e);
  }
  if (interrupt_flag) return mt_fail(MT_EINTR, "interrupted");
  return MT_OK;
}

/* Runs fn(ctx, ith, nth) once on each of nth threads of one OpenMP team (the
 * JIT's kernels split their own work by ith/nth); nth <= 0 means all
 * threads. Inside a parallel region, or with one thread, runs fn(ctx, 0, 1). */
mt_status mt_parallel_team(int nth, mt_team_fn fn, void *ctx) {
  int nt = mt_get_num_threads();
  if (nth <= 0 || nth > nt) nth = nt;
  if (interrupt_flag) return mt_fail(MT_EINTR, "interrupted");
  if (nth == 1 || omp_in_parallel()) {
    fn(ctx, 0, 1);
    return MT_OK;
  }
#pragma omp parallel num_threads(nth)
  fn(ctx, omp_get_thread_num(), omp_get_num_threads());
  return MT_OK;
}
