/* l_cuda.c -- torch.cuda (devices, memory statistics, streams, events) and
 * the gate in front of every registered function: its options check
 * (args.c) and the one device check: while CUDA
 * tensors exist, a function that has no CUDA path yet raises "<op>: not
 * implemented on CUDA yet" when given one, and a function that has one
 * raises when its tensors sit on different devices. Nothing else in the
 * bindings needs to think about devices. */
#include <stdlib.h>
#include <string.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"

/* ---- the device gate ---- */

/* Functions with a CUDA path (they take CUDA tensors as they are): every
 * function named after a registry op whose row says MT_DEV_CUDA
 * (tensor/ops.def), and these, which are not registry ops. */
static const char *const cuda_ready[] = {
    /* tensor methods: views, conversions, metadata, in-place fills */
    "bool", "byte", "char", "clone", "copy_", "cpu", "cuda", "detach", "detach_", "dim", "double", "element_size",
    "empty_like", "expand_as", "fill_", "flatten", "float", "full_like", "half", "int", "is_contiguous",
    "is_floating_point", "is_pinned", "is_tensor", "item", "long", "ndimension", "narrow", "nelement", "new_empty",
    "new_full", "new_ones", "new_zeros", "numel", "ones_like", "pin_memory", "ravel", "requires_grad_", "short", "size",
    "stride", "swapaxes", "swapdims", "t", "to", "tolist", "totable", "transpose", "type", "view_as", "zero_",
    "zeros_like", "_version", "bfloat16", "typename", "broadcast_to", "movedim", "moveaxis", "unflatten", "reshape_as",
    "_attrs", /* tensor attributes (tv_tensors): no data touched */
    "decode_jpeg", /* torch.vision.io: nvJPEG (domains/vision/jpeg_cuda.c) checks its devices itself */
    /* in-place and aliased forms of registry ops, compositions of them */
    "clamp_", "clip", "scatter_", "scatter_add_", "index_add_", "index_copy_", "index_fill_", "masked_fill_",
    "masked_scatter_", "put_", "index_put_", "tril_", "triu_", "addmm_", "addmv_", "baddbmm_", "addbmm_", "ger",
    "vdot", "equal", "allclose", "isclose", "result_type", "split", "chunk", "tensor_split", "unbind", "argwhere",
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "tile", "concat", "concatenate", "hstack", "vstack",
    "dstack", "fliplr", "flipud", "rot90", "meshgrid", "vector_norm", "matrix_norm",
    /* convolutions and pools by their torch names (cuda/conv.c, cuda/pool.c); conv_input and conv_weight: torch._backward */
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
    "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "conv_input", "conv_weight",
    "_image_resize", "_image_crop_resize", /* torch.vision's resampling (cuda/resize.c) */
    /* random draws on the device (cuda/random.c) */
    "rand_like", "randn_like", "randint_like", "bernoulli_", "uniform_", "normal_", "exponential_", "random_",
    /* attention: the math backend is recorded ops (graph/attention.c); cuDNN (cuda/cudnn_attn.c), flash (cuda/flash.cu) */
    "scaled_dot_product_attention", "_sdpa_math", "_sdp_selected", "_sdpa_cudnn", "_sdpa_flash",
    /* linear algebra by its torch names (cuda/solver.c through tensor/linalg_cuda.c; lstsq on the host) */
    "inv", "inverse", "det", "logdet", "slogdet", "solve", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh",
    "lstsq", "pinv", "pinverse", "matrix_rank", "cross",
    "_amp_foreach_non_finite_check_and_unscale_", /* GradScaler (tensor/amp.c) */
    "_fused_adam_", /* fused Adam/AdamW (tensor/optim.c, cuda/adam.c) */
    "_foreach_norm", "_foreach_mul_", /* cuda/foreach.c */
    /* autograd: the derivatives use the ops above */
    "backward", "retain_grad", "register_hook", "grad", "no_grad", "enable_grad", "save",
    /* complex tensors (l_complex.c): views and metadata, and compositions of registry ops */
    "view_as_real", "view_as_complex", "real", "imag", "complex", "polar", "is_complex", "conj_physical",
    "resolve_conj", "resolve_neg", "_complex_parts",
    /* compiled graphs run CUDA kernels (jit/codegen_cuda.c) */
    "explain", NULL};
/* ...of which these move data between devices, so may mix them. */
static const char *const cross_device[] = {"copy_", "cpu", "cuda", "to", "pin_memory", "typename", "is_tensor", "_attrs",
                                           "_image_crop_resize", /* its boxes are read on the host */
                                           "decode_jpeg", /* torch.vision.io: CPU bytes to a CUDA image */
                                           "result_type", "no_grad", "enable_grad", "save", NULL};

static bool listed(const char *const *list, const char *name) {
  for (; *list; list++)
    if (strcmp(*list, name) == 0) return true;
  return false;
}

#define GATE_READY 1
#define GATE_CROSS 2
#define GATE_COMPLEX 4  /* takes complex tensors (l_complex.c's list) */
#define GATE_AUTOCAST 3 /* the op's autocast policy (l_autocast.c) sits above this many bits */

/* Calls visit on each tensor among the arguments and in the array part of
 * table arguments (torch.cat({a, b})); stops at the first nonzero result. */
static int scan(lua_State *L, int (*visit)(lua_State *, const mt_tensor *, void *), void *ctx) {
  int top = lua_gettop(L);
  for (int i = 1; i <= top; i++) {
    const mt_tensor *t = mtl_peek_tensor(L, i);
    if (t) {
      int r = visit(L, t, ctx);
      if (r) return r;
    } else if (lua_type(L, i) == LUA_TTABLE && !lua_getmetatable(L, i)) {
      lua_Integer n = (lua_Integer)lua_rawlen(L, i);
      for (lua_Integer k = 1; k <= n && k <= 64; k++) {
        lua_rawgeti(L, i, k);
        const mt_tensor *e = mtl_peek_tensor(L, -1);
        int r = e ? visit(L, e, ctx) : 0;
        lua_pop(L, 1);
        if (r) return r;
      }
    } else if (lua_type(L, i) == LUA_TTABLE) {
      lua_pop(L, 1); /* the metatable */
    }
  }
  return 0;
}

static int is_cuda(lua_State *L, const mt_tensor *t, void *ctx) { return mt_tdevice(t).type == MT_CUDA; }

static int is_complex(lua_State *L, const mt_tensor *t, void *ctx) {
  if (!mt_is_complex((mt_dtype)t->dtype)) return 0;
  *(mt_dtype *)ctx = (mt_dtype)t->dtype;
  return 1;
}

typedef struct {
  bool seen;
  mt_device dev;
  mt_device other;
} mix_state;

/* A 0-dim CPU tensor may go with CUDA tensors (a number), as in PyTorch. */
static int mixes(lua_State *L, const mt_tensor *t, void *ctx) {
  mix_state *m = ctx;
  if (mt_tdevice(t).type == MT_CPU && t->ndim == 0) return 0;
  if (!m->seen) {
    m->seen = true;
    m->dev = mt_tdevice(t);
    return 0;
  }
  if (mt_same_device(m->dev, mt_tdevice(t))) return 0;
  m->other = mt_tdevice(t);
  return 1;
}

/* The gate in front of every registered function: checks the trailing
 * options table against the row's names, then the devices, casts for
 * autocast, and runs the function as the running one (mtl_running). */
static int gate(lua_State *L) {
  const mtl_reg *r = lua_touserdata(L, lua_upvalueindex(1));
  int top = lua_gettop(L);
  if (top && lua_type(L, top) == LUA_TTABLE) mtl_check_options(L, top, r->name, r->opts);
  if (atomic_load_explicit(&mt_cuda_live_storages, memory_order_relaxed) > 0) {
    int flags = (int)lua_tointeger(L, lua_upvalueindex(2));
    if (!(flags & GATE_READY)) {
      if (scan(L, is_cuda, NULL)) return luaL_error(L, "%s: not implemented on CUDA yet", r->name);
    } else if (!(flags & GATE_CROSS)) {
      mix_state m = {false, {0, 0}, {0, 0}};
      if (scan(L, mixes, &m)) {
        char a[32], b[32];
        return luaL_error(L, "%s: expected all tensors on the same device, got %s and %s", r->name,
                          mt_device_str(m.dev, a, sizeof a), mt_device_str(m.other, b, sizeof b));
      }
    }
  }
  mt_dtype cdt;
  if (mt_complex_seen && !((int)lua_tointeger(L, lua_upvalueindex(2)) & GATE_COMPLEX) && scan(L, is_complex, &cdt))
    return luaL_error(L, "%s: %s tensors are not supported", r->name, mt_dtype_name(cdt));
  if (mtl_autocast_mask) {
    int ac = (int)lua_tointeger(L, lua_upvalueindex(2)) >> GATE_AUTOCAST;
    if (ac) mtl_autocast_args(L, ac, r->name);
  }
  const mtl_reg *caller = mtl_running(L);
  mtl_set_running(L, r);
  int n = r->fn(L);
  mtl_set_running(L, caller);
  return n;
}

void mtl_push_gated(lua_State *L, const mtl_reg *r) {
  int op = mt_op_find(r->name);
  bool ready = op >= 0 ? mt_ops[op].dev == MT_DEV_CUDA : listed(cuda_ready, r->name);
  int flags = (ready ? GATE_READY : 0) | (listed(cross_device, r->name) ? GATE_CROSS : 0) |
              (mtl_complex_ready(r->name) ? GATE_COMPLEX : 0) | mtl_autocast_flags(r->name) << GATE_AUTOCAST;
  lua_pushlightuserdata(L, (void *)r);
  lua_pushinteger(L, flags);
  lua_pushcclosure(L, gate, 2);
}

/* ---- torch.cuda ---- */

static int opt_index(lua_State *L, int idx, const char *op) {
  if (lua_isnoneornil(L, idx)) return mt_cuda_current_device();
  if (lua_isinteger(L, idx)) return (int)lua_tointeger(L, idx);
  mt_device d = mtl_check_device(L, idx, op);
  if (d.type != MT_CUDA) luaL_error(L, "%s: expected a CUDA device, got 'cpu'", op);
  return d.index;
}

static int c_is_available(lua_State *L) {
  lua_pushboolean(L, mt_cuda_available());
  return 1;
}

static int c_device_count(lua_State *L) {
  lua_pushinteger(L, mt_cuda_device_count());
  return 1;
}

static int c_current_device(lua_State *L) {
  MTL_CHECK(L, mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)mt_cuda_current_device()}, "current_device"));
  lua_pushinteger(L, mt_cuda_current_device());
  return 1;
}

static int c_set_device(lua_State *L) {
  MTL_CHECK(L, mt_cuda_set_device(opt_index(L, 1, "set_device")));
  return 0;
}

static int c_get_device_name(lua_State *L) {
  char name[256];
  MTL_CHECK(L, mt_cuda_device_name(opt_index(L, 1, "get_device_name"), name, sizeof name));
  lua_pushstring(L, name);
  return 1;
}

static int c_get_device_capability(lua_State *L) {
  int major = 0, minor = 0;
  MTL_CHECK(L, mt_cuda_capability(opt_index(L, 1, "get_device_capability"), &major, &minor));
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, major);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, minor);
  lua_rawseti(L, -2, 2);
  return 1;
}

static int c_synchronize(lua_State *L) {
  MTL_CHECK(L, mt_cuda_synchronize(opt_index(L, 1, "synchronize")));
  return 0;
}

static int c_launch_cost(lua_State *L) {
  double us = 0;
  MTL_CHECK(L, mt_cuda_launch_cost(opt_index(L, 2, "_launch_cost"), (int)luaL_optinteger(L, 1, 200), &us));
  lua_pushnumber(L, us);
  return 1;
}

static int c_mem_get_info(lua_State *L) {
  size_t total = 0, free = 0;
  MTL_CHECK(L, mt_cuda_total_memory(opt_index(L, 1, "mem_get_info"), &total, &free));
  lua_pushinteger(L, (lua_Integer)free);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

static int stat_of(lua_State *L, int which) {
  mt_cuda_memstats s = mt_cuda_memory_stats(opt_index(L, 1, "memory stats"));
  int64_t v[] = {s.allocated, s.peak_allocated, s.reserved, s.peak_reserved};
  lua_pushinteger(L, (lua_Integer)v[which]);
  return 1;
}
static int c_memory_allocated(lua_State *L) { return stat_of(L, 0); }
static int c_max_memory_allocated(lua_State *L) { return stat_of(L, 1); }
static int c_memory_reserved(lua_State *L) { return stat_of(L, 2); }
static int c_max_memory_reserved(lua_State *L) { return stat_of(L, 3); }

static int c_reset_peak_memory_stats(lua_State *L) {
  mt_cuda_reset_peak(opt_index(L, 1, "reset_peak_memory_stats"));
  return 0;
}

static int c_empty_cache(lua_State *L) {
  mt_cuda_empty_cache();
  return 0;
}

/* lazy_fusion([on]) -> whether eager elementwise ops wait to be fused (before setting on) */
static int c_lazy_fusion(lua_State *L) {
  bool was = lua_isnoneornil(L, 1) ? mt_cuda_lazy_enable(true) : mt_cuda_lazy_enable(lua_toboolean(L, 1));
  if (lua_isnoneornil(L, 1)) mt_cuda_lazy_enable(was);
  lua_pushboolean(L, was);
  return 1;
}

static int c_memory_stats(lua_State *L) {
  mt_cuda_memstats s = mt_cuda_memory_stats(opt_index(L, 1, "memory_stats"));
  mt_cuda_jitstats j = mt_cuda_jit_stats();
  lua_newtable(L);
#define FIELD(k, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, k))
  FIELD("allocated_bytes", s.allocated);
  FIELD("peak_allocated_bytes", s.peak_allocated);
  FIELD("reserved_bytes", s.reserved);
  FIELD("peak_reserved_bytes", s.peak_reserved);
  FIELD("num_allocs", s.num_allocs);
  FIELD("num_cache_hits", s.num_cache_hits);
  FIELD("num_ooms", s.num_ooms);
  FIELD("kernel_compiles", j.compiles);
  FIELD("kernel_disk_hits", j.disk_hits);
  FIELD("kernel_mem_hits", j.mem_hits);
  mt_cuda_lazystats z = mt_cuda_lazy_stats();
  FIELD("lazy_ops", z.ops);
  FIELD("lazy_groups", z.groups);
  FIELD("lazy_fused_groups", z.fused_groups);
  FIELD("lazy_fused_ops", z.fused_ops);
  FIELD("lazy_compiles", z.compiles);
#undef FIELD
  lua_pushnumber(L, j.compile_seconds);
  lua_setfield(L, -2, "kernel_compile_seconds");
  return 1;
}

/* Streams: userdata holding an mt_cuda_stream; the default stream has a
 * NULL handle and is never destroyed. */
#define STREAM "torch.cuda.Stream"
#define EVENT "torch.cuda.Event"

static mt_cuda_stream *push_stream(lua_State *L, mt_cuda_stream s, bool owned) {
  mt_cuda_stream *u = lua_newuserdatauv(L, sizeof *u + sizeof(int), 0);
  *u = s;
  *(int *)(u + 1) = owned;
  luaL_setmetatable(L, STREAM);
  return u;
}

static int c_stream(lua_State *L) {
  int dev = mt_cuda_current_device();
  if (lua_type(L, 1) == LUA_TTABLE) {
    mtl_optfield(L, 1, "device");
    if (!lua_isnil(L, -1)) dev = opt_index(L, -1, "Stream");
    lua_pop(L, 1);
  }
  mt_cuda_stream s;
  MTL_CHECK(L, mt_cuda_stream_create(dev, &s));
  push_stream(L, s, true);
  return 1;
}

static int c_current_stream(lua_State *L) {
  int dev = opt_index(L, 1, "current_stream");
  MTL_CHECK(L, mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)dev}, "current_stream"));
  push_stream(L, mt_cuda_current_stream(dev), false);
  return 1;
}

static int c_default_stream(lua_State *L) {
  int dev = opt_index(L, 1, "default_stream");
  MTL_CHECK(L, mt_cuda_check_device((mt_device){MT_CUDA, (int8_t)dev}, "default_stream"));
  push_stream(L, (mt_cuda_stream){NULL, dev}, false);
  return 1;
}

static int c_set_stream(lua_State *L) {
  mt_cuda_stream *s = luaL_checkudata(L, 1, STREAM);
  mt_cuda_set_stream(*s);
  return 0;
}

static int s_synchronize(lua_State *L) {
  MTL_CHECK(L, mt_cuda_stream_synchronize(luaL_checkudata(L, 1, STREAM)));
  return 0;
}

static int s_query(lua_State *L) {
  int r = mt_cuda_stream_query(luaL_checkudata(L, 1, STREAM));
  if (r < 0) MTL_CHECK(L, MT_EDEVICE);
  lua_pushboolean(L, r);
  return 1;
}

static int s_wait_event(lua_State *L) {
  mt_cuda_stream *s = luaL_checkudata(L, 1, STREAM);
  void **e = luaL_checkudata(L, 2, EVENT);
  MTL_CHECK(L, mt_cuda_stream_wait_event(s, e[0]));
  return 0;
}

static int s_gc(lua_State *L) {
  mt_cuda_stream *s = luaL_checkudata(L, 1, STREAM);
  if (*(int *)(s + 1)) mt_cuda_stream_destroy(s);
  *(int *)(s + 1) = 0;
  return 0;
}

static int s_tostring(lua_State *L) {
  mt_cuda_stream *s = luaL_checkudata(L, 1, STREAM);
  lua_pushfstring(L, "torch.cuda.Stream(device=cuda:%d, %s)", s->device, s->handle ? "created" : "default");
  return 1;
}

/* Events: {handle, device} */
static int c_event(lua_State *L) {
  bool timing = false;
  if (lua_type(L, 1) == LUA_TTABLE) {
    mtl_optfield(L, 1, "enable_timing");
    timing = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  int dev = mt_cuda_current_device();
  void **u = lua_newuserdatauv(L, 2 * sizeof(void *), 0);
  u[0] = NULL;
  u[1] = (void *)(intptr_t)dev;
  luaL_setmetatable(L, EVENT);
  MTL_CHECK(L, mt_cuda_event_create(dev, timing, &u[0]));
  return 1;
}

static int e_record(lua_State *L) {
  void **e = luaL_checkudata(L, 1, EVENT);
  int dev = (int)(intptr_t)e[1];
  mt_cuda_stream s = lua_isnoneornil(L, 2) ? mt_cuda_current_stream(dev) : *(mt_cuda_stream *)luaL_checkudata(L, 2, STREAM);
  MTL_CHECK(L, mt_cuda_event_record(e[0], &s));
  return 0;
}

static int e_synchronize(lua_State *L) {
  void **e = luaL_checkudata(L, 1, EVENT);
  MTL_CHECK(L, mt_cuda_event_synchronize((int)(intptr_t)e[1], e[0]));
  return 0;
}

static int e_query(lua_State *L) {
  void **e = luaL_checkudata(L, 1, EVENT);
  int r = mt_cuda_event_query((int)(intptr_t)e[1], e[0]);
  if (r < 0) MTL_CHECK(L, MT_EDEVICE);
  lua_pushboolean(L, r);
  return 1;
}

static int e_elapsed_time(lua_State *L) {
  void **a = luaL_checkudata(L, 1, EVENT), **b = luaL_checkudata(L, 2, EVENT);
  float ms = 0;
  MTL_CHECK(L, mt_cuda_event_elapsed((int)(intptr_t)a[1], a[0], b[0], &ms));
  lua_pushnumber(L, ms);
  return 1;
}

static int e_gc(lua_State *L) {
  void **e = luaL_checkudata(L, 1, EVENT);
  mt_cuda_event_destroy((int)(intptr_t)e[1], e[0]);
  e[0] = NULL;
  return 0;
}

/* x:pin_memory(): a copy of a CPU tensor in page-locked memory */
static int m_pin_memory(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "pin_memory");
  if (mt_tdevice(t).type != MT_CPU) return luaL_error(L, "pin_memory: only CPU tensors can be pinned");
  if (t->storage->pinned) {
    lua_settop(L, 1);
    return 1;
  }
  mt_tensor *o = NULL;
  MTL_CHECK(L, mt_empty_pinned(t->shape, t->ndim, (mt_dtype)t->dtype, &o));
  mt_status st = mt_copy_(o, t);
  if (st) mtl_fail(L, st, o, NULL, NULL, NULL);
  o->storage->version = 0;
  mtl_push_tensor(L, o);
  return 1;
}

static int m_is_pinned(lua_State *L) {
  lua_pushboolean(L, mtl_check_tensor(L, 1, "is_pinned")->storage->pinned);
  return 1;
}

static const mtl_reg cuda_regs[] = {
    {"is_available", c_is_available, MTL_FN, "torch.cuda.is_available() -- true if a CUDA GPU can be used"},
    {"device_count", c_device_count, MTL_FN, "torch.cuda.device_count() -- number of CUDA GPUs"},
    {"current_device", c_current_device, MTL_FN, "torch.cuda.current_device() -- index of the device 'cuda' means"},
    {"set_device", c_set_device, MTL_FN, "torch.cuda.set_device(i) -- make cuda:i the device 'cuda' means"},
    {"get_device_name", c_get_device_name, MTL_FN, "torch.cuda.get_device_name([i]) -- the GPU's name"},
    {"get_device_capability", c_get_device_capability, MTL_FN,
     "torch.cuda.get_device_capability([i]) -- {major, minor} compute capability"},
    {"synchronize", c_synchronize, MTL_FN, "torch.cuda.synchronize([i]) -- wait for all work on the device"},
    {"_launch_cost", c_launch_cost, MTL_FN,
     "torch.cuda._launch_cost([n=200[, i]]) -- host microseconds per launch of an empty kernel (the driver's share)"},
    {"mem_get_info", c_mem_get_info, MTL_FN, "torch.cuda.mem_get_info([i]) -- free, total bytes of the device"},
    {"memory_allocated", c_memory_allocated, MTL_FN, "torch.cuda.memory_allocated([i]) -- bytes held by tensors"},
    {"max_memory_allocated", c_max_memory_allocated, MTL_FN,
     "torch.cuda.max_memory_allocated([i]) -- peak of memory_allocated"},
    {"memory_reserved", c_memory_reserved, MTL_FN,
     "torch.cuda.memory_reserved([i]) -- bytes held by the caching allocator (tensors and cache)"},
    {"max_memory_reserved", c_max_memory_reserved, MTL_FN, "torch.cuda.max_memory_reserved([i]) -- its peak"},
    {"reset_peak_memory_stats", c_reset_peak_memory_stats, MTL_FN,
     "torch.cuda.reset_peak_memory_stats([i]) -- peaks restart from now"},
    {"empty_cache", c_empty_cache, MTL_FN, "torch.cuda.empty_cache() -- give cached unused blocks back to the driver"},
    {"memory_stats", c_memory_stats, MTL_FN,
     "torch.cuda.memory_stats([i]) -- allocator, kernel-cache and lazy-fusion counters"},
    {"lazy_fusion", c_lazy_fusion, MTL_FN,
     "torch.cuda.lazy_fusion([on]) -- whether dense eager elementwise ops wait to go out as one fused kernel "
     "(default true; MOONTORCH_CUDA_LAZY=0 starts it off); with on, sets it and returns the previous setting"},
    {"Stream", c_stream, MTL_FN, "torch.cuda.Stream([{device=}]) -- a new stream", "device"},
    {"current_stream", c_current_stream, MTL_FN, "torch.cuda.current_stream([i]) -- the stream new work goes to"},
    {"default_stream", c_default_stream, MTL_FN, "torch.cuda.default_stream([i]) -- the device's default stream"},
    {"set_stream", c_set_stream, MTL_FN, "torch.cuda.set_stream(s) -- send new work on s's device to s"},
    {"Event", c_event, MTL_FN, "torch.cuda.Event([{enable_timing=}]) -- a marker in a stream", "enable_timing"},
    {NULL, NULL, 0, NULL}};

/* 'highest': float32 products in full float32 (the default); 'high' and
 * 'medium' let cuBLAS use TF32 tensor cores (CPU products are unchanged). */
static int t_set_float32_matmul_precision(lua_State *L) {
  static const char *const names[] = {"highest", "high", "medium", NULL};
  int i = luaL_checkoption(L, 1, NULL, names);
  mt_cuda_set_tf32(i > 0);
  return 0;
}

static int t_get_float32_matmul_precision(lua_State *L) {
  lua_pushstring(L, mt_cuda_tf32() ? "high" : "highest");
  return 1;
}

static const char *const cudnn_routes[] = {"auto", "cudnn", "native", NULL};

/* torch._cudnn([{enabled=, route=}]) -> {available=, enabled=, version=, convs=,
 * declined=, last_declined=, load_error=, last_algorithms=, pools=, norms=,
 * ops_declined=, last_ops_declined=, route=}; enabled turns cuDNN on or off
 * for CUDA convolutions (off: im2col + cuBLAS), pooling and batch norm;
 * route picks for the last two: "auto" (cuDNN where it measured faster),
 * "cudnn" (wherever it takes the problem), "native" (our kernels). */
static int t_cudnn(lua_State *L) {
  if (lua_istable(L, 1) && mtl_optfield(L, 1, "enabled") != LUA_TNIL) mt_cudnn_set_enabled(lua_toboolean(L, -1));
  if (lua_istable(L, 1) && mtl_optfield(L, 1, "route") != LUA_TNIL) {
    const char *r = lua_tostring(L, -1);
    int i = 0;
    while (cudnn_routes[i] && !(r && strcmp(r, cudnn_routes[i]) == 0)) i++;
    if (!cudnn_routes[i])
      return luaL_error(L, "torch._cudnn: route must be 'auto', 'cudnn' or 'native', got %s",
                        r ? r : luaL_typename(L, -1));
    mt_cudnn_set_route(i);
  }
  mt_cudnn_info s = mt_cudnn_stats();
  lua_newtable(L);
  lua_pushboolean(L, s.loaded && mt_cuda_available());
  lua_setfield(L, -2, "available");
  lua_pushboolean(L, s.enabled);
  lua_setfield(L, -2, "enabled");
  lua_pushinteger(L, (lua_Integer)s.version);
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, (lua_Integer)s.convs);
  lua_setfield(L, -2, "convs");
  lua_pushinteger(L, (lua_Integer)s.declined);
  lua_setfield(L, -2, "declined");
  lua_pushstring(L, s.last_declined);
  lua_setfield(L, -2, "last_declined");
  lua_pushstring(L, s.load_error);
  lua_setfield(L, -2, "load_error");
  lua_pushfstring(L, "forward %d, backward data %d, backward filter %d (math types %d %d %d)", s.algo[0], s.algo[1],
                  s.algo[2], s.math[0], s.math[1], s.math[2]);
  lua_setfield(L, -2, "last_algorithms");
  lua_pushinteger(L, (lua_Integer)s.pools);
  lua_setfield(L, -2, "pools");
  lua_pushinteger(L, (lua_Integer)s.norms);
  lua_setfield(L, -2, "norms");
  lua_pushinteger(L, (lua_Integer)s.ops_declined);
  lua_setfield(L, -2, "ops_declined");
  lua_pushstring(L, s.last_ops_declined);
  lua_setfield(L, -2, "last_ops_declined");
  lua_pushstring(L, cudnn_routes[s.route]);
  lua_setfield(L, -2, "route");
  return 1;
}

static const mtl_reg tensor_regs[] = {
    {"_cudnn", t_cudnn, MTL_FN,
     "torch._cudnn([{enabled=, route=}]) -- internal: cuDNN's state and counters (torch.backends.cudnn wraps it)",
     "enabled route"},
    {"set_float32_matmul_precision", t_set_float32_matmul_precision, MTL_FN,
     "torch.set_float32_matmul_precision('highest'|'high'|'medium') -- 'high' lets CUDA float32 matmul use TF32"},
    {"get_float32_matmul_precision", t_get_float32_matmul_precision, MTL_FN,
     "torch.get_float32_matmul_precision() -- 'highest' (the default) or 'high'"},
    {"pin_memory", m_pin_memory, MTL_METHOD, "x:pin_memory() -- a copy in page-locked memory (fast, async copies)"},
    {"is_pinned", m_is_pinned, MTL_METHOD, "x:is_pinned() -- true if x's memory is page-locked"},
    {NULL, NULL, 0, NULL}};

void mtl_open_cuda(lua_State *L, int torch_idx, int methods_idx) {
  static const luaL_Reg stream_m[] = {{"synchronize", s_synchronize}, {"query", s_query},
                                      {"wait_event", s_wait_event}, {NULL, NULL}};
  static const luaL_Reg event_m[] = {{"record", e_record}, {"synchronize", e_synchronize}, {"query", e_query},
                                     {"elapsed_time", e_elapsed_time}, {NULL, NULL}};
  luaL_newmetatable(L, STREAM);
  luaL_newlib(L, stream_m);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, s_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, s_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  luaL_newmetatable(L, EVENT);
  luaL_newlib(L, event_m);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, e_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  mtl_register(L, torch_idx, methods_idx, tensor_regs);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, cuda_regs);
  mtl_open_cuda_random(L, lua_gettop(L), methods_idx);
  lua_setfield(L, torch_idx, "cuda");
}
