/* l_print.c -- tostring(x): PyTorch-style tensor summaries. One formatter
 * per tensor (fixed 4 decimals, integer-valued floats as "1.", or scientific
 * when magnitudes span too much), right-aligned columns, rows wrapped at 80
 * characters, and the middle of tensors over 1000 elements elided. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cplx.h"
#include "cuda/mt_cuda.h"
#include "mtl.h"

#define THRESHOLD 1000
#define EDGE 3
#define LINEWIDTH 80

typedef struct {
  mt_dtype dt;
  int mode; /* 0 int, 1 float fixed, 2 float int-valued, 3 sci, 4 bool */
  int width;
  bool summarize;
  /* complex: mode and width are the real parts', these the imaginary
   * parts' (formatted apart, as PyTorch does: "1.0000+2.0000j") */
  int imode, iwidth;
} fmt;

static void format_value(const fmt *f, double v, char *buf, size_t n) {
  if (f->mode == 4) {
    snprintf(buf, n, "%s", v != 0 ? "true" : "false");
  } else if (f->mode == 0) {
    snprintf(buf, n, "%.0f", v);
  } else if (isnan(v)) {
    snprintf(buf, n, "nan");
  } else if (isinf(v)) {
    snprintf(buf, n, v > 0 ? "inf" : "-inf");
  } else if (f->mode == 2) {
    snprintf(buf, n, "%.0f.", v);
  } else if (f->mode == 3) {
    snprintf(buf, n, "%.4e", v);
  } else {
    snprintf(buf, n, "%.4f", v);
  }
}

/* int64 values beyond 2^53 print exactly through this path */
static void format_elem(const fmt *f, const mt_tensor *t, const int64_t *idx, char *buf, size_t n) {
  if (mt_is_complex(f->dt)) { /* the real part right-aligned, the imaginary part signed, then j */
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    const char *p = mt_data(t) + off * (int64_t)mt_elsize(t);
    double re = f->dt == MT_COMPLEX64 ? ((const float *)p)[0] : ((const double *)p)[0];
    double im = f->dt == MT_COMPLEX64 ? ((const float *)p)[1] : ((const double *)p)[1];
    fmt fr = *f, fi = *f;
    fi.mode = f->imode;
    char rb[48], ib[48];
    format_value(&fr, re, rb, sizeof rb);
    format_value(&fi, im, ib, sizeof ib);
    size_t k = 0, pad = strlen(rb) < (size_t)f->width ? (size_t)f->width - strlen(rb) : 0;
    for (; k < pad && k + 1 < n; k++) buf[k] = ' ';
    buf[k] = 0;
    strncat(buf, rb, n - 1 - strlen(buf));
    if (ib[0] != '-') strncat(buf, "+", n - 1 - strlen(buf));
    strncat(buf, ib, n - 1 - strlen(buf));
    strncat(buf, "j", n - 1 - strlen(buf));
    return;
  }
  if (f->dt == MT_INT64) {
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    snprintf(buf, n, "%lld", (long long)((const int64_t *)mt_data(t))[off]);
    return;
  }
  format_value(f, mt_get_f64(t, idx), buf, n);
}

/* Visits the elements that will be shown (edges only when summarizing). */
typedef void (*visit_fn)(void *ctx, const mt_tensor *t, const int64_t *idx);
static void visit(const mt_tensor *t, bool summ, int d, int64_t *idx, visit_fn fn, void *ctx) {
  if (d == t->ndim) {
    fn(ctx, t, idx);
    return;
  }
  int64_t n = t->shape[d];
  for (int64_t i = 0; i < n; i++) {
    if (summ && n > 2 * EDGE && i == EDGE) i = n - EDGE;
    idx[d] = i;
    visit(t, summ, d + 1, idx, fn, ctx);
  }
}

typedef struct {
  double amax, amin;
  bool all_int, any;
  const fmt *f;
  int width;
} stats;

static void stat_elem(void *p, const mt_tensor *t, const int64_t *idx) {
  stats *s = p;
  double v = mt_get_f64(t, idx);
  if (!isfinite(v) || v == 0) return;
  double a = fabs(v);
  if (!s->any || a > s->amax) s->amax = a;
  if (!s->any || a < s->amin) s->amin = a;
  s->any = true;
  if (v != ceil(v)) s->all_int = false;
}

static void width_elem(void *p, const mt_tensor *t, const int64_t *idx) {
  stats *s = p;
  char buf[128];
  format_elem(s->f, t, idx, buf, sizeof buf);
  int w = (int)strlen(buf);
  if (w > s->width) s->width = w;
}

static fmt make_fmt(const mt_tensor *t);

/* A complex tensor's formatter: one for its real parts, one for its
 * imaginary parts (their widths). */
static fmt complex_fmt(const mt_tensor *t) {
  fmt f = {(mt_dtype)t->dtype, 1, 1, mt_numel(t) > THRESHOLD, 1, 1};
  mt_tensor *p = NULL, *re = NULL, *im = NULL;
  if (mt_complex_pairs(t, &p) || mt_select(p, p->ndim - 1, 0, &re) || mt_select(p, p->ndim - 1, 1, &im)) {
    mt_release(p), mt_release(re);
    return f;
  }
  fmt fr = make_fmt(re), fi = make_fmt(im);
  mt_release(p), mt_release(re), mt_release(im);
  f.mode = fr.mode, f.width = fr.width, f.imode = fi.mode, f.iwidth = fi.width + 2;
  return f;
}

static fmt make_fmt(const mt_tensor *t) {
  if (mt_is_complex((mt_dtype)t->dtype)) return complex_fmt(t);
  fmt f = {(mt_dtype)t->dtype, 0, 1, mt_numel(t) > THRESHOLD, 0, 0};
  int64_t idx[MT_MAXDIM] = {0};
  if (t->dtype == MT_BOOL) {
    f.mode = 4;
  } else if (mt_is_floating(f.dt)) {
    stats s = {0, 0, true, false, NULL, 0};
    visit(t, f.summarize, 0, idx, stat_elem, &s);
    if (!s.any)
      f.mode = 2;
    else if (s.all_int)
      f.mode = (s.amax / s.amin > 1000.0 || s.amax > 1e8) ? 3 : 2;
    else
      f.mode = (s.amax / s.amin > 1000.0 || s.amax > 1e8 || s.amin < 1e-4) ? 3 : 1;
  }
  stats w = {0, 0, true, false, &f, 1};
  visit(t, f.summarize, 0, idx, width_elem, &w);
  f.width = w.width;
  return f;
}

/* Writes dimension d of t starting at idx into b; indent = column of '['. */
static void emit(luaL_Buffer *b, const mt_tensor *t, const fmt *f, int d, int64_t *idx, int indent) {
  int64_t n = t->shape[d];
  luaL_addchar(b, '[');
  if (d == t->ndim - 1) {
    /* items are the shown elements plus, when summarizing, one " ..." item;
     * rows wrap after per_line items, as PyTorch's printer does */
    int per_line = (LINEWIDTH - indent) / (f->width + f->iwidth + 2);
    if (per_line < 1) per_line = 1;
    bool elide = f->summarize && n > 2 * EDGE;
    int64_t nitems = elide ? 2 * EDGE + 1 : n;
    for (int64_t k = 0, col = 0; k < nitems; k++, col++) {
      if (k > 0) luaL_addchar(b, ',');
      if (col == per_line) {
        luaL_addchar(b, '\n');
        for (int s = 0; s < indent + 1; s++) luaL_addchar(b, ' ');
        col = 0;
      } else if (k > 0) {
        luaL_addchar(b, ' ');
      }
      if (elide && k == EDGE) {
        luaL_addstring(b, " ...");
        continue;
      }
      idx[d] = elide && k > EDGE ? n - (nitems - k) : k;
      char buf[128];
      format_elem(f, t, idx, buf, sizeof buf);
      for (int s = (int)strlen(buf); s < f->width && !f->iwidth; s++) luaL_addchar(b, ' ');
      luaL_addstring(b, buf);
    }
  } else {
    int blank = t->ndim - d - 1; /* blank lines between sub-blocks */
    for (int64_t i = 0; i < n; i++) {
      if (i > 0) {
        luaL_addchar(b, ',');
        for (int k = 0; k < blank; k++) luaL_addchar(b, '\n');
        for (int k = 0; k < indent + 1; k++) luaL_addchar(b, ' ');
      }
      if (f->summarize && n > 2 * EDGE && i == EDGE) {
        luaL_addstring(b, "...");
        i = n - EDGE;
        luaL_addchar(b, ',');
        for (int k = 0; k < blank; k++) luaL_addchar(b, '\n');
        for (int k = 0; k < indent + 1; k++) luaL_addchar(b, ' ');
      }
      idx[d] = i;
      emit(b, t, f, d + 1, idx, indent + 1);
    }
  }
  luaL_addchar(b, ']');
}

static int t_tostring(lua_State *L) {
  mt_tensor *t = mtl_check_tensor(L, 1, "tostring");
  MTL_JIT_SYNC(L, "tostring");
  const mt_tensor *v = t; /* the values: a host copy of a CUDA tensor */
  if (mt_tdevice(t).type != MT_CPU) {
    mt_tensor *h = NULL;
    MTL_CHECK(L, mt_cuda_to_device(t, mt_cpu(), false, &h));
    mtl_push_tensor(L, h);
    v = h;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "tensor(");
  int64_t numel = mt_numel(t), idx[MT_MAXDIM] = {0};
  fmt f = make_fmt(v);
  if (t->ndim == 0) {
    char buf[128];
    format_elem(&f, v, idx, buf, sizeof buf);
    luaL_addstring(&b, buf);
  } else if (numel == 0) {
    luaL_addstring(&b, "[]");
  } else {
    emit(&b, v, &f, 0, idx, 7);
  }
  /* PyTorch's order: device, size, dtype */
  if (mt_tdevice(t).type != MT_CPU) {
    char buf[32];
    luaL_addstring(&b, ", device='");
    luaL_addstring(&b, mt_device_str(mt_tdevice(t), buf, sizeof buf));
    luaL_addstring(&b, "'");
  }
  if (numel == 0 && t->ndim > 1) {
    luaL_addstring(&b, ", size=(");
    for (int i = 0; i < t->ndim; i++) {
      char buf[32];
      snprintf(buf, sizeof buf, i ? ", %lld" : "%lld", (long long)t->shape[i]);
      luaL_addstring(&b, buf);
    }
    luaL_addstring(&b, ")");
  }
  mt_dtype dt = (mt_dtype)t->dtype;
  if (dt != mt_default_dtype() && dt != MT_INT64 && dt != MT_BOOL && dt != mt_complex_of(mt_default_dtype())) {
    luaL_addstring(&b, ", dtype=");
    luaL_addstring(&b, mt_dtype_name(dt));
  } else if (numel == 0 && dt != mt_default_dtype()) {
    luaL_addstring(&b, ", dtype=");
    luaL_addstring(&b, mt_dtype_name(dt));
  }
  mtl_autograd_suffix(L, t, &b);
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  /* a tensor with attributes may name itself: attrs.__repr(x, text) */
  if (mtl_push_attrs(L, 1)) {
    if (lua_getfield(L, -1, "__repr") == LUA_TFUNCTION) {
      lua_pushvalue(L, 1);
      lua_pushvalue(L, -4);
      lua_call(L, 2, 1);
      return 1;
    }
    lua_pop(L, 2);
  }
  return 1;
}

static const mtl_reg regs[] = {{NULL, NULL, 0, NULL}};

void mtl_open_print(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  luaL_getmetatable(L, MTL_TENSOR);
  lua_pushcfunction(L, t_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushstring(L, MTL_TENSOR);
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
}
