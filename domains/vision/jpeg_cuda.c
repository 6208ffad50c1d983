/* jpeg_cuda.c -- JPEG decoding on CUDA devices through NVIDIA's nvJPEG,
 * loaded with dlopen at first use ($MOONTORCH_NVJPEG, then libnvjpeg.so.13,
 * .12, .11 or .so on the loader path and in /usr/local/cuda). One nvJPEG
 * handle and its decode states per device, made at first use and reused,
 * used under one lock (states are not thread-safe). Batches go to the
 * GPU's hardware JPEG engines (A100, H100/H200: NVJPEG_BACKEND_HARDWARE)
 * for the images they support, the rest to the default backend. Pixels go straight into
 * planar C x H x W uint8 tensors of the engine's CUDA allocator, on the
 * device's current stream. No Lua here; nothing links against nvJPEG. */
#include "jpeg_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "files.h"
#include "image.h"

/* ---- our declarations of the nvJPEG entry points we call, written from
 * its documented interface (nvjpeg.h is not needed to build) ---- */
typedef int nvjpegStatus_t; /* 0 is NVJPEG_STATUS_SUCCESS */
typedef struct nvjpegHandle *nvjpegHandle_t;
typedef struct nvjpegJpegState *nvjpegJpegState_t;
typedef struct nvjpegJpegStream *nvjpegJpegStream_t;
enum { NVJPEG_BACKEND_HARDWARE = 3 }; /* nvjpegBackend_t */
typedef struct {
  unsigned char *channel[4];
  size_t pitch[4];
} nvjpegImage_t;
enum { NVJPEG_OUTPUT_Y = 2, NVJPEG_OUTPUT_RGB = 3 };         /* nvjpegOutputFormat_t */
enum { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 }; /* libraryPropertyType */

#define NVJPEG_FUNCS(X)                                                                                                \
  X(CreateSimple, "nvjpegCreateSimple", (nvjpegHandle_t * h))                                                          \
  X(Destroy, "nvjpegDestroy", (nvjpegHandle_t h))                                                                      \
  X(StateCreate, "nvjpegJpegStateCreate", (nvjpegHandle_t h, nvjpegJpegState_t * s))                                   \
  X(StateDestroy, "nvjpegJpegStateDestroy", (nvjpegJpegState_t s))                                                     \
  X(GetImageInfo, "nvjpegGetImageInfo",                                                                                \
    (nvjpegHandle_t h, const unsigned char *d, size_t n, int *ncomp, int *subsampling, int *w, int *hh))               \
  X(Decode, "nvjpegDecode",                                                                                            \
    (nvjpegHandle_t h, nvjpegJpegState_t s, const unsigned char *d, size_t n, int fmt, nvjpegImage_t *out,             \
     void *stream))                                                                                                    \
  X(BatchedInitialize, "nvjpegDecodeBatchedInitialize",                                                                \
    (nvjpegHandle_t h, nvjpegJpegState_t s, int batch, int max_cpu_threads, int fmt))                                  \
  X(DecodeBatched, "nvjpegDecodeBatched",                                                                              \
    (nvjpegHandle_t h, nvjpegJpegState_t s, const unsigned char *const *d, const size_t *n, nvjpegImage_t *out,        \
     void *stream))                                                                                                    \
  X(GetProperty, "nvjpegGetProperty", (int type, int *value))

/* entry points of the hardware path: optional (older libraries lack them) */
#define NVJPEG_HW_FUNCS(X)                                                                                             \
  X(CreateEx, "nvjpegCreateEx", (int backend, void *dev_alloc, void *pinned_alloc, unsigned flags, nvjpegHandle_t *h)) \
  X(StreamCreate, "nvjpegJpegStreamCreate", (nvjpegHandle_t h, nvjpegJpegStream_t * s))                                \
  X(StreamDestroy, "nvjpegJpegStreamDestroy", (nvjpegJpegStream_t s))                                                  \
  X(ParseHeader, "nvjpegJpegStreamParseHeader",                                                                        \
    (nvjpegHandle_t h, const unsigned char *d, size_t n, nvjpegJpegStream_t s))                                        \
  X(BatchedSupported, "nvjpegDecodeBatchedSupported", (nvjpegHandle_t h, nvjpegJpegStream_t s, int *unsupported))

#define NVJPEG_FIELD(name, sym, params) nvjpegStatus_t(*name) params;
static struct {
  NVJPEG_FUNCS(NVJPEG_FIELD)
} nv;
static struct {
  NVJPEG_HW_FUNCS(NVJPEG_FIELD)
  int ok; /* all found */
} hwf;
#undef NVJPEG_FIELD

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char load_error[400];
static int version; /* 0 until loaded */

/* per device: the handle, a state for single images and one per output
 * format for batches (with the batch size it was initialised for); the
 * same for the hardware backend (hw_tried: made, or found missing) */
typedef struct gpu {
  nvjpegHandle_t h;
  nvjpegJpegState_t one, batch[2];
  int batch_n[2];
  nvjpegHandle_t hw;
  nvjpegJpegState_t hw_batch[2];
  int hw_n[2], hw_tried;
  nvjpegJpegStream_t stream; /* for reading headers on the hardware handle */
} gpu;
static gpu gpus[MT_CUDA_MAXDEV];

static void load(void) {
  static const char *names[] = {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11", "libnvjpeg.so"};
  static const char *dirs[] = {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                               "/usr/lib/x86_64-linux-gnu/"};
  void *h = mt_dlopen_first("MOONTORCH_NVJPEG", names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    const char *env = getenv("MOONTORCH_NVJPEG");
    snprintf(load_error, sizeof load_error,
             "nvJPEG was not found (tried %s%slibnvjpeg.so.13, .so.12, .so.11 and .so on the loader path and in "
             "/usr/local/cuda/lib64, /usr/local/cuda/targets/x86_64-linux/lib, /usr/lib/x86_64-linux-gnu); install "
             "the CUDA toolkit's nvJPEG or set MOONTORCH_NVJPEG to the library's path",
             env && *env ? env : "", env && *env ? ", " : "");
    return;
  }
#define NVJPEG_LOAD(name, sym, params)                                                                                 \
  if (!(*(void **)&nv.name = dlsym(h, sym))) {                                                                         \
    snprintf(load_error, sizeof load_error, "the nvJPEG library found lacks %s", sym);                                 \
    return;                                                                                                            \
  }
  NVJPEG_FUNCS(NVJPEG_LOAD)
#undef NVJPEG_LOAD
  hwf.ok = 1;
#define NVJPEG_HW_LOAD(name, sym, params)                                                                              \
  if (!(*(void **)&hwf.name = dlsym(h, sym))) hwf.ok = 0;
  NVJPEG_HW_FUNCS(NVJPEG_HW_LOAD)
#undef NVJPEG_HW_LOAD
  int major = 0, minor = 0, patch = 0;
  nv.GetProperty(MAJOR_VERSION, &major), nv.GetProperty(MINOR_VERSION, &minor), nv.GetProperty(PATCH_LEVEL, &patch);
  version = major * 1000 + minor * 10 + patch;
  if (!version) version = 1;
}

int mtd_nvjpeg_version(const char **why) {
  pthread_once(&load_once, load);
  if (why) *why = version ? "" : load_error;
  return version;
}

static const char *status_name(nvjpegStatus_t s) {
  static const char *names[] = {"success", "not initialized", "invalid parameter", "bad JPEG",
                                "JPEG not supported", "allocator failure", "execution failed", "architecture mismatch",
                                "internal error", "implementation not supported", "incomplete bitstream"};
  return s >= 0 && s < (int)(sizeof names / sizeof *names) ? names[s] : "unknown error";
}

/* MT_OK, or a failure naming what nvJPEG said about image k (0: none). */
static mt_status check(nvjpegStatus_t s, const char *what, int k) {
  if (s == 0) return MT_OK;
  if (k) return mt_fail(MT_EIO, "nvJPEG: image %d: %s failed (%s, status %d)", k, what, status_name(s), s);
  return mt_fail(MT_EIO, "nvJPEG: %s failed (%s, status %d)", what, status_name(s), s);
}

static void drop_states(gpu *g) {
  if (g->one) nv.StateDestroy(g->one);
  for (int f = 0; f < 2; f++)
    if (g->batch[f]) nv.StateDestroy(g->batch[f]);
  g->one = g->batch[0] = g->batch[1] = NULL;
  g->batch_n[0] = g->batch_n[1] = 0;
}

/* The hardware backend's handle, states and header stream, made at first
 * use; a GPU without JPEG engines (or an old library) leaves g->hw NULL. */
static void get_hw(gpu *g) {
  if (g->hw_tried) return;
  g->hw_tried = 1;
  if (!hwf.ok || hwf.CreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &g->hw) != 0) {
    g->hw = NULL;
    return;
  }
  int bad = hwf.StreamCreate(g->hw, &g->stream) != 0;
  for (int f = 0; f < 2 && !bad; f++) bad = nv.StateCreate(g->hw, &g->hw_batch[f]) != 0;
  if (bad) { /* no hardware path then */
    for (int f = 0; f < 2; f++)
      if (g->hw_batch[f]) nv.StateDestroy(g->hw_batch[f]);
    if (g->stream) hwf.StreamDestroy(g->stream);
    nv.Destroy(g->hw);
    g->hw = NULL, g->stream = NULL, g->hw_batch[0] = g->hw_batch[1] = NULL;
  }
}

/* The handle and states of device dev (made current), created at first use. */
static mt_status get_gpu(int dev, gpu **out) {
  gpu *g = &gpus[dev];
  mt_status st = g->h ? MT_OK : check(nv.CreateSimple(&g->h), "creating a handle", 0);
  if (!st && !g->one) st = check(nv.StateCreate(g->h, &g->one), "creating a decode state", 0);
  for (int f = 0; f < 2 && !st; f++)
    if (!g->batch[f]) st = check(nv.StateCreate(g->h, &g->batch[f]), "creating a decode state", 0);
  if (st) drop_states(g);
  *out = g;
  return st;
}

/* Reads image k's header: its size and output channels for mode; allocates
 * its C x H x W tensor on dev and points dst's planes into it. */
static mt_status prepare(gpu *g, const unsigned char *p, size_t n, int k, int mode, int dev, size_t max_bytes,
                         mt_tensor **t, nvjpegImage_t *dst, int *fmt) {
  if (n < 3 || p[0] != 0xFF || p[1] != 0xD8 || p[2] != 0xFF)
    return mt_fail(MT_EARG, "nvJPEG: image %d: not a JPEG file (wrong signature)", k);
  int ncomp = 0, sub = 0, w[4] = {0}, h[4] = {0};
  mt_status st = check(nv.GetImageInfo(g->h, p, n, &ncomp, &sub, w, h), "reading the header", k);
  if (st) return st;
  if (ncomp != 1 && ncomp != 3)
    return mt_fail(MT_EARG, "nvJPEG: image %d: %d color components are not supported (1 or 3 on CUDA)", k, ncomp);
  if (w[0] < 1 || h[0] < 1) return mt_fail(MT_EIO, "nvJPEG: image %d: the image has no pixels", k);
  int c = mode == MTD_GRAY ? 1 : mode == MTD_RGB ? 3 : ncomp;
  if ((uint64_t)w[0] * (uint64_t)h[0] * 4 > max_bytes)
    return mt_fail(MT_EARG, "nvJPEG: image %d: an image of %d x %d pixels is too large", k, h[0], w[0]);
  int64_t shape[3] = {c, h[0], w[0]};
  st = mt_empty(shape, 3, MT_UINT8, (mt_device){MT_CUDA, (int8_t)dev}, t);
  if (st) return st;
  memset(dst, 0, sizeof *dst);
  for (int i = 0; i < c; i++) dst->channel[i] = (unsigned char *)mt_data(*t) + (size_t)i * h[0] * w[0];
  for (int i = 0; i < c; i++) dst->pitch[i] = (size_t)w[0];
  *fmt = c == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_RGB;
  return MT_OK;
}

/* Decodes one by one (a single image, or a failed batch to find the image
 * at fault). */
static mt_status decode_each(gpu *g, const unsigned char *const *data, const size_t *n, int count, nvjpegImage_t *dst,
                             const int *fmt, void *stream) {
  for (int i = 0; i < count; i++) {
    mt_status st = check(nv.Decode(g->h, g->one, data[i], n[i], fmt[i], &dst[i], stream), "decoding", i + 1);
    if (st) return st;
  }
  return MT_OK;
}

/* Decodes bd/bn into bdst as one batch of m on handle h with state s
 * (initialised for *sn images; re-initialised when m differs). */
static mt_status run_batch(nvjpegHandle_t h, nvjpegJpegState_t s, int *sn, int f, const unsigned char **bd,
                           size_t *bn, nvjpegImage_t *bdst, int m, void *stream) {
  if (m == 0) return MT_OK;
  mt_status st = MT_OK;
  if (*sn != m) {
    st = check(nv.BatchedInitialize(h, s, m, 1, f), "setting up a batch", 0);
    *sn = st ? 0 : m;
  }
  if (!st) st = check(nv.DecodeBatched(h, s, bd, bn, bdst, stream), "decoding a batch", 0);
  return st;
}

/* True when the JPEG engines decode the image (its header says so). */
static int hw_supports(gpu *g, const unsigned char *p, size_t n) {
  int unsupported = 1;
  return hwf.ParseHeader(g->hw, p, n, g->stream) == 0 && hwf.BatchedSupported(g->hw, g->stream, &unsupported) == 0 &&
         unsupported == 0;
}

/* Decodes the images of output format f (index fi): those the JPEG engines
 * support as one hardware batch, the others (or all, when the hardware
 * batch fails) as one batch of the default backend. The arrays are scratch
 * of count entries. */
static mt_status decode_group(gpu *g, int f, int fi, const unsigned char *const *data, const size_t *n, int count,
                              nvjpegImage_t *dst, const int *fmt, const char *hwok, void *stream,
                              const unsigned char **bd, size_t *bn, nvjpegImage_t *bdst) {
  int m = 0, hw = 0; /* bd[0, hw): hardware; bd[hw, m): default */
  for (int pass = 1; pass >= 0; pass--) {
    for (int i = 0; i < count; i++)
      if (fmt[i] == f && hwok[i] == pass) bd[m] = data[i], bn[m] = n[i], bdst[m] = dst[i], m++;
    if (pass) hw = m;
  }
  int from = hw;
  if (hw && run_batch(g->hw, g->hw_batch[fi], &g->hw_n[fi], f, bd, bn, bdst, hw, stream)) {
    g->hw_n[fi] = 0;
    from = 0; /* the hardware failed: everything through the default backend */
  }
  return run_batch(g->h, g->batch[fi], &g->batch_n[fi], f, bd + from, bn + from, bdst + from, m - from, stream);
}

/* Decodes every image into dst: one alone, more as a batch per format. */
static mt_status decode_all(gpu *g, const unsigned char *const *data, const size_t *n, int count, nvjpegImage_t *dst,
                            const int *fmt, void *stream) {
  if (count == 1) return decode_each(g, data, n, 1, dst, fmt, stream);
  const unsigned char **bd = malloc(count * sizeof *bd);
  size_t *bn = malloc(count * sizeof *bn);
  nvjpegImage_t *bdst = malloc(count * sizeof *bdst);
  char *hwok = calloc((size_t)count, 1);
  mt_status st = bd && bn && bdst && hwok ? MT_OK : mt_fail(MT_ENOMEM, "nvJPEG: out of memory");
  if (!st) {
    get_hw(g);
    for (int i = 0; i < count && g->hw; i++) hwok[i] = (char)hw_supports(g, data[i], n[i]);
  }
  if (!st) st = decode_group(g, NVJPEG_OUTPUT_Y, 0, data, n, count, dst, fmt, hwok, stream, bd, bn, bdst);
  if (!st) st = decode_group(g, NVJPEG_OUTPUT_RGB, 1, data, n, count, dst, fmt, hwok, stream, bd, bn, bdst);
  free(bd), free(bn), free(bdst), free(hwok);
  if (st && st != MT_ENOMEM) { /* one by one: names the image at fault */
    drop_states(g);
    st = get_gpu((int)(g - gpus), &g);
    if (!st) st = decode_each(g, data, n, count, dst, fmt, stream);
  }
  return st;
}

mt_status mtd_jpeg_decode_cuda(const unsigned char *const *data, const size_t *n, int count, int mode, int dev,
                               size_t max_bytes, mt_tensor **out) {
  if (mode != MTD_UNCHANGED && mode != MTD_GRAY && mode != MTD_RGB)
    return mt_fail(MT_EARG, "nvJPEG: mode must be UNCHANGED, GRAY or RGB on CUDA");
  if (dev < 0 || dev >= MT_CUDA_MAXDEV) return mt_fail(MT_EDEVICE, "nvJPEG: no CUDA device %d", dev);
  mt_status st = mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)dev}, "nvJPEG");
  if (st) return st;
  if (!mtd_nvjpeg_version(NULL)) return mt_fail(MT_EDEVICE, "%s", load_error);
  if (count == 0) return MT_OK;
  mt_tensor **t = calloc(count ? count : 1, sizeof *t);
  nvjpegImage_t *dst = malloc((count ? count : 1) * sizeof *dst);
  int *fmt = malloc((count ? count : 1) * sizeof *fmt);
  if (!t || !dst || !fmt) st = mt_fail(MT_ENOMEM, "nvJPEG: out of memory");
  pthread_mutex_lock(&lock);
  gpu *g = NULL;
  if (!st) st = get_gpu(dev, &g);
  for (int i = 0; i < count && !st; i++) st = prepare(g, data[i], n[i], i + 1, mode, dev, max_bytes, &t[i], &dst[i], &fmt[i]);
  if (!st) st = decode_all(g, data, n, count, dst, fmt, mt_cuda_current_stream(dev).handle);
  if (st && g) drop_states(g); /* made afresh at the next call */
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < count && t; i++) {
    if (st && t[i]) mt_release(t[i]);
    else if (!st) out[i] = t[i];
  }
  free(t), free(dst), free(fmt);
  return st;
}
