/* graph.c -- CUDA graphs: the work a compiled graph sends to the device
 * (kernels, cuBLAS products, copies) is captured once from a private
 * stream and replayed with one cuGraphLaunch. Memory freed during the
 * capture goes to a pool the graph keeps until it is destroyed (alloc.c),
 * since its replays still write there; the capture runs in relaxed mode,
 * so the caching allocator may call cuMemAlloc. Work that cannot be
 * captured (a host read, the legacy stream) invalidates the capture and
 * capture_end fails: the caller runs without a graph. */
#include <stdlib.h>

#include "cu_api.h"
#include "mt_cuda.h"

struct mt_cuda_graph {
  CUgraphExec exec;
  int dev;
  void *pool;   /* blocks freed during the capture */
  void *stream; /* where it was last launched (the pool is released for it) */
};

static CUstream capture_streams[MT_CUDA_MAXDEV];
static mt_cuda_stream saved[MT_CUDA_MAXDEV];

mt_status mt_cuda_capture_begin(int dev) {
  mt_device d = {MT_CUDA, (int8_t)dev};
  mt_status st = mt_cuda_check_device(d, "CUDA graph capture");
  if (st) return st;
  if (!capture_streams[dev]) {
    mt_cuda_stream s;
    if ((st = mt_cuda_stream_create(dev, &s))) return st;
    capture_streams[dev] = s.handle;
  }
  st = mt_cuda_check(mt_cu.StreamBeginCapture(capture_streams[dev], CU_STREAM_CAPTURE_MODE_RELAXED), dev,
                     "CUDA graph capture");
  if (st) return st;
  saved[dev] = mt_cuda_current_stream(dev);
  mt_cuda_set_stream((mt_cuda_stream){capture_streams[dev], dev});
  mt_cuda_alloc_capture(dev, true, NULL);
  return MT_OK;
}

mt_status mt_cuda_capture_end(int dev, bool ok, mt_cuda_graph **out) {
  *out = NULL;
  void *pool = NULL;
  mt_cuda_lazy_flush(dev); /* waiting ops belong to the capture, and the blocks they free to its pool */
  mt_cuda_alloc_capture(dev, false, &pool);
  mt_cuda_set_stream(saved[dev]);
  CUgraph g = NULL;
  CUgraphExec e = NULL;
  mt_status st = mt_cuda_check(mt_cu.StreamEndCapture(capture_streams[dev], &g), dev, "CUDA graph capture");
  if (!st && !ok) st = mt_fail(MT_EARG, "CUDA graph capture: the captured work failed");
  if (!st && !g) st = mt_fail(MT_EDEVICE, "CUDA graph capture: no graph");
  if (!st) st = mt_cuda_check(mt_cu.GraphInstantiate(&e, g, 0), dev, "CUDA graph instantiation");
  if (g) mt_cu.GraphDestroy(g);
  mt_cuda_graph *r = st ? NULL : malloc(sizeof *r);
  if (!st && !r) st = mt_fail(MT_ENOMEM, "out of memory");
  if (st) {
    if (e) mt_cu.GraphExecDestroy(e);
    mt_cuda_alloc_release_pool(dev, pool, capture_streams[dev]); /* nothing ran: free for reuse */
    return st;
  }
  *r = (mt_cuda_graph){e, dev, pool, saved[dev].handle};
  *out = r;
  return MT_OK;
}

mt_status mt_cuda_graph_launch(mt_cuda_graph *g) {
  mt_cuda_stream s = mt_cuda_current_stream(g->dev);
  g->stream = s.handle;
  mt_cuda_note_launch(g->dev, "CUDA graph replay");
  return mt_cuda_check(mt_cu.GraphLaunch(g->exec, s.handle), g->dev, "CUDA graph replay");
}

void mt_cuda_graph_free(mt_cuda_graph *g) {
  if (!g) return;
  mt_device d = {MT_CUDA, (int8_t)g->dev};
  if (!mt_cuda_check_device(d, "CUDA graph")) mt_cu.GraphExecDestroy(g->exec); /* deferred while in flight */
  mt_cuda_alloc_release_pool(g->dev, g->pool, g->stream);
  free(g);
}
