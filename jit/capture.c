/* capture.c -- the capture state of this thread while torch.compile runs a
 * function under a trace: its graph break, the reason to capture again,
 * the runtime scalars read from tables, the traced backward and the op
 * call recorder. It holds state only: the bindings drive the capture and
 * raise the errors, and nothing here calls Lua. */
#include <stdio.h>

#include "entry.h"
#include "partition.h"
#include "split.h"

_Thread_local mtj_capture mtj_cap;

void mtj_capture_begin(bool fullgraph, mtj_rec *rec) {
  mtj_cap.fullgraph = fullgraph;
  mtj_cap.brk[0] = mtj_cap.retry[0] = 0;
  mtj_cap.active = true;
  mtj_cap.nsct = 0;
  mtj_cap.rec = rec;
}

void mtj_capture_clear(void) {
  for (int j = 0; j < mtj_cap.nsct; j++) mt_release(mtj_cap.sct[j]);
  mtj_cap.nsct = 0;
  mtj_cap.active = false;
  mtj_aot_capture_free(mtj_cap.aot);
  mtj_cap.aot = NULL;
  mtj_rec_free(mtj_cap.rec);
  mtj_cap.rec = NULL;
}

bool mtj_capture_host_read(void) {
  if (mtj_cap.rec) mtj_rec_sync(mtj_cap.rec);
  return !mtj_cap.brk[0];
}

bool mtj_capture_break(const char *where, const char *what) {
  snprintf(mtj_cap.brk, sizeof mtj_cap.brk, "%s%s() reads a tensor's value on the host",
           where && *where ? where : "?: ", what);
  if (mtj_cap.fullgraph) return true;
  if (!mtj_cap.rec) mtg_trace_refuse("graph break: %s", mtj_cap.brk); /* captured again with op calls recorded */
  return false;
}

bool mtj_capture_scalar(mt_tensor *t) {
  if (mtj_cap.nsct == MTJ_MAXSCT) {
    mt_release(t);
    return false;
  }
  mtj_cap.sct[mtj_cap.nsct++] = t;
  return true;
}

void mtj_capture_again(const char *why) {
  if (mtj_cap.active && !mtj_cap.retry[0]) snprintf(mtj_cap.retry, sizeof mtj_cap.retry, "%s", why);
}
