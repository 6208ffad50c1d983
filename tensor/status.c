/* status.c -- the engine's thread-local error message.
 * Engine functions report faults by returning an mt_status after calling
 * mt_fail once, where the fault is found. Nothing here longjmps. */
#include <stdarg.h>
#include <stdio.h>

#include "mt.h"

static _Thread_local char errbuf[1024];

mt_status mt_fail(mt_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return st;
}

const char *mt_errmsg(void) { return errbuf[0] ? errbuf : "unknown error"; }

char *mt_shape_str(const int64_t *shape, int ndim, char *buf, size_t n) {
  if (ndim == 0) {
    snprintf(buf, n, "scalar");
    return buf;
  }
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < ndim && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, i ? "x%lld" : "%lld", (long long)shape[i]);
  return buf;
}

const char *mt_device_str(mt_device d, char *buf, size_t n) {
  if (d.type == MT_CPU)
    snprintf(buf, n, "cpu");
  else
    snprintf(buf, n, "cuda:%d", d.index);
  return buf;
}
