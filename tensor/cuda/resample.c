/* resample.c (cuda) -- the polyphase resampling filter of tensor/resample.c
 * on CUDA tensors through resample.cu: the plan's non-zero taps packed with
 * their phase tables into one buffer, sent in one asynchronous copy, then
 * one launch (a block per 256 outputs, or inputs for the adjoint, of a
 * row); the tables are cached per filter and device. Inputs are contiguous
 * float32 or float64. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"
#include "cuda_audio.h"
#include "mt_cuda.h"

typedef unsigned long long dptr;

extern const char mt_cuda_resample_cu[];

/* Matches struct mt_rsmpgeo in resample.cu. */
typedef struct rsmpgeo {
  int64_t rows, in_len, out_len, pad_left, orig, nw, kmax, wts, blocks;
} rsmpgeo;

/* The tables of p (weights of wsize bytes) in a new malloc'ed buffer of
 * *bytes; g gets kmax and the weights' offset. NULL when out of memory. */
static void *pack(const mt_resample_plan *p, size_t wsize, rsmpgeo *g, size_t *bytes) {
  int64_t m = 1;
  for (int64_t ph = 0; ph < p->new_; ph++)
    if (p->count[ph] > m) m = p->count[ph];
  size_t wts = ((size_t)p->new_ * 8 + 7) / 8 * 8, n = wts + (size_t)(m * p->new_) * wsize;
  char *buf = calloc(1, n);
  if (!buf) return NULL;
  int32_t *q = (int32_t *)buf;
  for (int64_t ph = 0; ph < p->new_; ph++) q[ph] = (int32_t)p->first[ph], q[p->new_ + ph] = (int32_t)p->count[ph];
  for (int64_t ph = 0; ph < p->new_; ph++)
    for (int64_t k = 0; k < p->count[ph]; k++) {
      double v = p->taps[ph * p->ntaps + k];
      if (wsize == 4) ((float *)(buf + wts))[ph * m + k] = (float)v;
      else ((double *)(buf + wts))[ph * m + k] = v;
    }
  g->kmax = m, g->wts = (int64_t)wts, *bytes = n;
  return buf;
}

/* Uploaded filter tables, by their packed bytes and device: a filter is
 * sent once, and the device copy outlives every call, so a CUDA graph
 * captured around a resample (a compiled graph) replays with valid tables
 * (a per-call upload from a freed host buffer would not). */
enum { MAX_TABLES = 64 };
static struct table {
  int dev;
  size_t bytes;
  void *host;      /* the packed bytes (the key) */
  mt_tensor *tabs; /* their device copy */
} tables[MAX_TABLES];
static int ntables;
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

static mt_status copy_up(mt_device dev, const void *buf, size_t n, mt_tensor **tabs) {
  int64_t len = (int64_t)n;
  mt_status st = mt_empty(&len, 1, MT_UINT8, dev, tabs);
  if (!st) {
    mt_cuda_stream s = mt_cuda_current_stream(dev.index);
    st = mt_cuda_check(mt_cu.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)mt_data(*tabs), buf, n, s.handle), dev.index,
                       "resample");
  }
  return st;
}

/* *tabs: a new reference to the device tables of p (cached; g gets kmax
 * and the weights' offset). Past MAX_TABLES filters, and during a
 * capture, an upload per call; a captured upload's host bytes are never
 * freed (the graph's copy node reads them at each replay). */
static mt_status upload(const mt_resample_plan *p, mt_device dev, size_t wsize, rsmpgeo *g, mt_tensor **tabs) {
  size_t n = 0;
  void *buf = pack(p, wsize, g, &n);
  if (!buf) return mt_fail(MT_ENOMEM, "resample: out of memory for the filter");
  pthread_mutex_lock(&tables_lock);
  for (int i = 0; i < ntables; i++)
    if (tables[i].dev == dev.index && tables[i].bytes == n && memcmp(tables[i].host, buf, n) == 0) {
      *tabs = mt_retain(tables[i].tabs);
      pthread_mutex_unlock(&tables_lock);
      free(buf);
      return MT_OK;
    }
  bool capturing = mt_cuda_capturing(dev.index);
  mt_status st = copy_up(dev, buf, n, tabs);
  if (!st && ntables < MAX_TABLES && !capturing) { /* a captured copy only runs when the graph does */
    tables[ntables++] = (struct table){dev.index, n, buf, mt_retain(*tabs)};
    buf = NULL;
  }
  pthread_mutex_unlock(&tables_lock);
  if (!capturing) free(buf); /* staged by the driver before MemcpyHtoDAsync returned */
  /* while capturing, buf stays allocated: the graph's copy node reads it at every replay */
  return st;
}

mt_status mt_cuda_resample(const mt_resample_plan *p, const mt_rsmp_geo *geo, bool adjoint, const mt_tensor *in,
                           mt_tensor *out) {
  mt_device d = mt_tdevice(in);
  bool f64 = in->dtype == MT_FLOAT64;
  int64_t len = adjoint ? geo->in_len : geo->out_len;
  rsmpgeo g = {geo->rows, geo->in_len, geo->out_len, geo->pad_left, p->orig, p->new_, 0, 0, (len + 255) / 256};
  if (g.blocks == 0) return MT_OK;
  mt_tensor *tabs = NULL;
  void *fn = NULL;
  mt_status st = upload(p, d, f64 ? 8 : 4, &g, &tabs);
  if (!st)
    st = mt_cuda_family(d.index, f64 ? "#define T double\n" : "#define T float\n", mt_cuda_resample_cu,
                        adjoint ? "mt_resample_adj" : "mt_resample_fwd", &fn);
  if (!st) {
    dptr pi = (dptr)(uintptr_t)mt_data(in), po = (dptr)(uintptr_t)mt_data(out), pt = (dptr)(uintptr_t)mt_data(tabs);
    void *args[] = {&pi, &po, &pt, &g};
    st = mt_cuda_launch_grid(d.index, fn, g.rows * g.blocks, 256, args, "resample");
  }
  mt_release(tabs);
  return st;
}
