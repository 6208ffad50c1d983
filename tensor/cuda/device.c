/* device.c -- the CUDA driver loaded at run time: dlopen of libcuda.so.1,
 * device discovery, one primary context per device (made current for the
 * calling thread before each use), the current device and stream, streams,
 * events, synchronisation and the error messages of driver results. It
 * must not assume a driver exists: without one every entry fails with a
 * message saying so, and mt_cuda_available() is false. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cu_api.h"
#include "files.h"
#include "mt_cuda.h"

mt_cu_api mt_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int ndev;
static CUdevice devs[MT_CUDA_MAXDEV];
static CUcontext ctxs[MT_CUDA_MAXDEV];
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static int current_dev;
static CUstream current_streams[MT_CUDA_MAXDEV];
static char last_op[MT_CUDA_MAXDEV][48];
static _Thread_local int thread_ctx = -1; /* device whose context this thread has current */

/* The name (CUDA_ERROR_...) or the description of a result; NULL if unknown. */
static const char *err_text(CUresult r, bool name) {
  const char *s = NULL;
#ifdef MT_HIP
  if (name ? !mt_cu.ErrorName : !mt_cu.ErrorString) return NULL;
  s = name ? mt_cu.ErrorName(r) : mt_cu.ErrorString(r);
#else
  if (name ? !mt_cu.GetErrorName : !mt_cu.GetErrorString) return NULL;
  (name ? mt_cu.GetErrorName : mt_cu.GetErrorString)(r, &s);
#endif
  return s;
}

/* Opens the driver and resolves every entry point; records why not. */
static void load(void) {
  static const char *const libs[] = {MT_GPU_DRIVER_LIBS};
  void *h = mt_dlopen_first(MT_GPU_DRIVER_ENV, libs, sizeof libs / sizeof *libs, NULL, 0);
  if (!h) {
    snprintf(load_error, sizeof load_error, "no " MT_GPU_DRIVER_DESC " found (%s could not be loaded)", libs[0]);
    return;
  }
#define MT_CU_LOAD(R, name, sym, params)                                                                               \
  if (!(*(void **)&mt_cu.name = dlsym(h, MT_SYM(sym)))) {                                                              \
    snprintf(load_error, sizeof load_error, "the " MT_GPU_DRIVER_DESC " lacks %s (too old?)", MT_SYM(sym));            \
    return;                                                                                                            \
  }
  MT_CU_FUNCS(MT_CU_LOAD)
#undef MT_CU_LOAD
  CUresult r = mt_cu.Init(0);
  if (r != CUDA_SUCCESS) {
    const char *s = err_text(r, false);
    snprintf(load_error, sizeof load_error, "the " MT_GPU_DRIVER_DESC " failed to initialise: %s",
             s ? s : "unknown error");
    return;
  }
  int n = 0;
  if (mt_cu.DeviceGetCount(&n) != CUDA_SUCCESS || n <= 0) {
    snprintf(load_error, sizeof load_error, "the " MT_GPU_DRIVER_DESC " reports no GPU");
    return;
  }
  if (n > MT_CUDA_MAXDEV) n = MT_CUDA_MAXDEV;
  for (int i = 0; i < n; i++)
    if (mt_cu.DeviceGet(&devs[i], i) != CUDA_SUCCESS) n = i;
  ndev = n;
}

bool mt_cuda_forbidden;

void mt_cuda_forbid(const char *why) {
  mt_cuda_forbidden = true;
  snprintf(load_error, sizeof load_error, "%s", why);
}

bool mt_cuda_available(void) {
  if (mt_cuda_forbidden) return false;
  pthread_once(&load_once, load);
  return ndev > 0;
}

int mt_cuda_device_count(void) { return mt_cuda_available() ? ndev : 0; }

static const char *errname(CUresult r) {
  const char *n = err_text(r, true), *s = err_text(r, false);
  static _Thread_local char buf[256];
  snprintf(buf, sizeof buf, "%s (%s)", s ? s : "unknown error", n ? n : "?");
  return buf;
}

mt_status mt_cuda_check(int res, int dev, const char *op) {
  if (res == CUDA_SUCCESS) return mt_cuda_lazy_failed ? mt_cuda_lazy_failure() : MT_OK;
  if (res == CUDA_ERROR_OUT_OF_MEMORY) return mt_fail(MT_ENOMEM, "%s: CUDA out of memory", op);
  if (dev >= 0 && dev < MT_CUDA_MAXDEV && last_op[dev][0])
    return mt_fail(MT_EDEVICE, "%s: CUDA error: %s; it may come from an earlier asynchronous kernel (the last op "
                   "launched on cuda:%d was %s)", op, errname(res), dev, last_op[dev]);
  return mt_fail(MT_EDEVICE, "%s: CUDA error: %s", op, errname(res));
}

void mt_cuda_note_launch(int dev, const char *op) {
  if (dev >= 0 && dev < MT_CUDA_MAXDEV) snprintf(last_op[dev], sizeof last_op[dev], "%s", op);
}

/* Makes dev's primary context current for this thread (retaining it on
 * first use). */
static mt_status use_device(int dev, const char *op) {
  if (thread_ctx == dev) return MT_OK;
  pthread_mutex_lock(&ctx_lock);
  CUresult r = ctxs[dev] ? CUDA_SUCCESS : mt_cu.DevicePrimaryCtxRetain(&ctxs[dev], devs[dev]);
  pthread_mutex_unlock(&ctx_lock);
  if (r == CUDA_SUCCESS) r = mt_cu.CtxSetCurrent(ctxs[dev]);
  if (r != CUDA_SUCCESS) return mt_cuda_check(r, -1, op);
  thread_ctx = dev;
  return MT_OK;
}

mt_status mt_cuda_check_device(mt_device dev, const char *op) {
  if (dev.type != MT_CUDA) return MT_OK;
  if (!mt_cuda_available())
    return mt_fail(MT_EDEVICE, "%s: CUDA is not available: %s (torch.cuda.is_available() is false)", op,
                   load_error);
  if (dev.index < 0 || dev.index >= ndev)
    return mt_fail(MT_EDEVICE, "%s: CUDA device index %d is out of range: this machine has %d CUDA device%s (0..%d)",
                   op, dev.index, ndev, ndev == 1 ? "" : "s", ndev - 1);
  return use_device(dev.index, op);
}

static mt_status check_index(int idx, const char *op) {
  mt_device d = {MT_CUDA, (int8_t)(idx < 0 || idx > 127 ? 127 : idx)};
  return mt_cuda_check_device(d, op);
}

int mt_cuda_current_device(void) { return current_dev; }

mt_status mt_cuda_set_device(int idx) {
  mt_status st = check_index(idx, "set_device");
  if (!st) current_dev = idx;
  return st;
}

mt_status mt_cuda_device_name(int idx, char *buf, size_t n) {
  mt_status st = check_index(idx, "get_device_name");
  if (st) return st;
  return mt_cuda_check(mt_cu.DeviceGetName(buf, (int)n, devs[idx]), idx, "get_device_name");
}

mt_status mt_cuda_capability(int idx, int *major, int *minor) {
  mt_status st = check_index(idx, "get_device_capability");
  if (!st) st = mt_cuda_check(mt_cu.DeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, devs[idx]),
                              idx, "get_device_capability");
  if (!st) st = mt_cuda_check(mt_cu.DeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, devs[idx]),
                              idx, "get_device_capability");
  return st;
}

mt_status mt_cuda_arch(int idx, char *buf, size_t n) {
#ifdef MT_HIP
  /* hipDeviceProp_t is 792 bytes in ROCm 5.2; later 5.x releases (the
   * layout ROCm 6 keeps for this symbol) appended fields: room to spare */
  _Alignas(16) char prop[4 * MT_HIP_PROP_SIZE];
  mt_status st = check_index(idx, "get_arch");
  if (!st) st = mt_cuda_check(mt_cu.GetDeviceProperties(prop, idx), idx, "get_arch");
  if (!st) snprintf(buf, n, "%.*s", 255, prop + MT_HIP_PROP_ARCH_OFFSET);
  return st;
#else
  int major = 0, minor = 0;
  mt_status st = mt_cuda_capability(idx, &major, &minor);
  if (!st) snprintf(buf, n, "sm_%d%d", major, minor);
  return st;
#endif
}

mt_status mt_cuda_total_memory(int idx, size_t *total, size_t *free) {
  mt_status st = check_index(idx, "mem_get_info");
  if (!st) st = mt_cuda_check(mt_cu.MemGetInfo(free, total), idx, "mem_get_info");
  return st;
}

mt_status mt_cuda_synchronize(int idx) {
  mt_status st = check_index(idx, "synchronize");
  if (!st) mt_cuda_lazy_flush(idx);
  if (!st) st = mt_cuda_check(mt_cu.CtxSynchronize(), idx, "synchronize");
  return st;
}

/* ---- streams ---- */

mt_status mt_cuda_stream_create(int dev, mt_cuda_stream *out) {
  mt_status st = check_index(dev, "Stream");
  CUstream s = NULL;
  if (!st) st = mt_cuda_check(mt_cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING), dev, "Stream");
  if (st) return st;
  out->handle = s;
  out->device = dev;
  return MT_OK;
}

void mt_cuda_stream_destroy(mt_cuda_stream *s) {
  if (!s->handle || check_index(s->device, "Stream")) return;
  mt_cuda_lazy_flush(s->device);
  if (current_streams[s->device] == s->handle) current_streams[s->device] = NULL;
  mt_cu.StreamDestroy(s->handle);
  s->handle = NULL;
}

mt_status mt_cuda_stream_synchronize(const mt_cuda_stream *s) {
  mt_status st = check_index(s->device, "stream:synchronize");
  if (!st) mt_cuda_lazy_flush(s->device);
  if (!st) st = mt_cuda_check(mt_cu.StreamSynchronize(s->handle), s->device, "stream:synchronize");
  return st;
}

int mt_cuda_stream_query(const mt_cuda_stream *s) {
  if (check_index(s->device, "stream:query")) return -1;
  mt_cuda_lazy_flush(s->device);
  CUresult r = mt_cu.StreamQuery(s->handle);
  if (r == CUDA_SUCCESS) return 1;
  if (r == CUDA_ERROR_NOT_READY) return 0;
  mt_cuda_check(r, s->device, "stream:query");
  return -1;
}

void *mt_cuda_stream_handle(int dev) { return dev >= 0 && dev < MT_CUDA_MAXDEV ? current_streams[dev] : NULL; }

mt_cuda_stream mt_cuda_current_stream(int dev) {
  mt_cuda_lazy_flush(dev);
  mt_cuda_stream s = {mt_cuda_stream_handle(dev), dev};
  return s;
}

void mt_cuda_set_stream(mt_cuda_stream s) {
  if (s.device < 0 || s.device >= MT_CUDA_MAXDEV) return;
  mt_cuda_lazy_flush(s.device);
  current_streams[s.device] = s.handle;
}

mt_status mt_cuda_stream_wait_event(const mt_cuda_stream *s, void *ev) {
  mt_status st = check_index(s->device, "wait_event");
  if (!st) mt_cuda_lazy_flush(s->device);
  if (!st) st = mt_cuda_check(mt_cu.StreamWaitEvent(s->handle, ev, 0), s->device, "wait_event");
  return st;
}

/* ---- events ---- */

mt_status mt_cuda_event_create(int dev, bool timing, void **out) {
  mt_status st = check_index(dev, "Event");
  CUevent e = NULL;
  if (!st) st = mt_cuda_check(mt_cu.EventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING), dev, "Event");
  if (!st) *out = e;
  return st;
}

void mt_cuda_event_destroy(int dev, void *ev) {
  if (ev && !check_index(dev, "Event")) mt_cu.EventDestroy(ev);
}

mt_status mt_cuda_event_record(void *ev, const mt_cuda_stream *s) {
  mt_status st = check_index(s->device, "event:record");
  if (!st) mt_cuda_lazy_flush(s->device);
  if (!st) st = mt_cuda_check(mt_cu.EventRecord(ev, s->handle), s->device, "event:record");
  return st;
}

mt_status mt_cuda_event_synchronize(int dev, void *ev) {
  mt_status st = check_index(dev, "event:synchronize");
  if (!st) st = mt_cuda_check(mt_cu.EventSynchronize(ev), dev, "event:synchronize");
  return st;
}

int mt_cuda_event_query(int dev, void *ev) {
  if (check_index(dev, "event:query")) return -1;
  CUresult r = mt_cu.EventQuery(ev);
  if (r == CUDA_SUCCESS) return 1;
  if (r == CUDA_ERROR_NOT_READY) return 0;
  mt_cuda_check(r, dev, "event:query");
  return -1;
}

mt_status mt_cuda_event_elapsed(int dev, void *start, void *end, float *ms) {
  mt_status st = check_index(dev, "elapsed_time");
  if (!st) st = mt_cuda_check(mt_cu.EventElapsedTime(ms, start, end), dev, "elapsed_time");
  return st;
}

mt_status mt_cuda_unsupported(const char *op) { return mt_fail(MT_EDEVICE, "%s: not implemented on CUDA yet", op); }
