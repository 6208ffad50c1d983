/* codegen_c.c -- C99 source for a fused graph: one function per kernel,
 *   void mtj_k<i>(void **a, const int64_t *z, const double *s, int ith, int nth)
 * a: buffers read, then buffers written; z: rows, inner length, the sizes of
 * F, then the strides of each strided buffer; s: runtime scalars. A thread
 * takes rows [rows*ith/nth, rows*(ith+1)/nth); each row runs one loop per
 * reduction phase over its inner elements, written so gcc vectorizes it
 * (restrict pointers, unit-stride inner loops, float math from the inline
 * polynomials below instead of libm calls). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"


/* float32 math: exp and log within about 1 ulp (Cephes' coefficients;
 * exp rounds x log2(e) to the integer n by adding 1.5 * 2^23, whose low
 * bits then hold n for 2^n: no float-int conversions, and exp flushes
 * results below 2^-126 to 0),
 * tanh within a few (mj_expf_le0: exp of a - max(a), which needs no
 * overflow case); erf within 1.5 ulp (checked against double erf on
 * every float): x + x*P(x^2) below 0.921875, above it 1 - 2^(h(t) - t^2
 * log2 e) with t = |x| clamped at 3.921875 (where erf rounds to 1), h of
 * degree 5 and 2^f of degree 6 (minimax fits, no special cases: the
 * exponent stays in [-24, -1]). Branch-free so loops vectorize; erf keeps
 * to about 35 vector operations, no division and no blend but the last.
 * gelu (x * Phi(x), Phi the normal CDF) is one rational function instead:
 * Phi(x) = 1/2 + c P(c^2)/Q(c^2) (P and Q of degree 5, a minimax fit to
 * 1.7e-8 after rounding to float), c = min(x, 5.5625) as a signed integer
 * min on the bits (no compare and blend; float Phi rounds to 1 there);
 * below -5.5 Phi is 0 by one mask folded into the last FMA, which also
 * drops what the unclamped c gave there (inf/inf, NaN). 16 vector
 * operations, one a division (docs/jit.md gives its error, measured on
 * every float). */
static const char *prelude =
    "#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"
    "static inline float mj_bits_f(int32_t i){union{int32_t i;float f;}u;u.i=i;return u.f;}\n"
    "static inline int32_t mj_f_bits(float f){union{int32_t i;float f;}u;u.f=f;return u.i;}\n"
    "static inline float mj_exp2i(float k){return mj_bits_f((int32_t)(((uint32_t)mj_f_bits(k)+127u)<<23));}\n"
    "static inline float mj_expf(float x){\n"
    "  float xc=x>88.3762626647949f?88.3762626647949f:(x<-87.3365447504f?-87.3365447504f:x);\n"
    "  float k=xc*1.44269504088896341f+12582912.0f, n=k-12582912.0f;\n"
    "  float r=xc-n*0.693359375f; r=r+n*2.12194440e-4f;\n"
    "  float p=1.9875691500e-4f; p=p*r+1.3981999507e-3f; p=p*r+8.3334519073e-3f; p=p*r+4.1665795894e-2f;\n"
    "  p=p*r+1.6666665459e-1f; p=p*r+5.0000001201e-1f; p=p*r*r+r+1.0f;\n"
    "  float y=p*mj_exp2i(k);\n"
    "  y=x>88.72283935546875f?INFINITY:y; y=x<-87.3365447504f?0.0f:y; return x!=x?x:y;}\n"
    "static inline float mj_expf_le0(float x){\n"
    "  int u=x<-87.3365447504f; float xc=u?-87.3365447504f:x;\n"
    "  float k=xc*1.44269504088896341f+12582912.0f, n=k-12582912.0f;\n"
    "  float r=xc-n*0.693359375f; r=r+n*2.12194440e-4f;\n"
    "  float p=1.9875691500e-4f; p=p*r+1.3981999507e-3f; p=p*r+8.3334519073e-3f; p=p*r+4.1665795894e-2f;\n"
    "  p=p*r+1.6666665459e-1f; p=p*r+5.0000001201e-1f; p=p*r*r+r+1.0f;\n"
    "  return u?0.0f:p*mj_exp2i(k);}\n"
    "static inline float mj_logf(float x){\n"
    "  int sub=x<1.17549435e-38f; float xs=sub?x*8388608.0f:x;\n"
    "  int32_t i=mj_f_bits(xs); int32_t e=((i>>23)&0xff)-126-(sub?23:0); float m=mj_bits_f((i&0x007fffff)|0x3f000000);\n"
    "  int lo=m<0.707106781186547524f; e=lo?e-1:e; m=lo?m+m-1.0f:m-1.0f;\n"
    "  float z=m*m; float p=7.0376836292e-2f; p=p*m-1.1514610310e-1f; p=p*m+1.1676998740e-1f;\n"
    "  p=p*m-1.2420140846e-1f; p=p*m+1.4249322787e-1f; p=p*m-1.6668057665e-1f; p=p*m+2.0000714765e-1f;\n"
    "  p=p*m-2.4999993993e-1f; p=p*m+3.3333331174e-1f; float y=p*m*z;\n"
    "  float fe=(float)e; y=y+fe*-2.12194440e-4f; y=y-0.5f*z; float r=m+y; r=r+fe*0.693359375f;\n"
    "  r=x==INFINITY?INFINITY:r; r=x==0.0f?-INFINITY:r; r=(x<0.0f||x!=x)?NAN:r; return r;}\n"
    "static inline float mj_tanhf(float x){\n"
    "  float a=fabsf(x); float z=x*x;\n"
    "  float p=-5.70498872745e-3f; p=p*z+2.06390887954e-2f; p=p*z-5.37397155531e-2f; p=p*z+1.33314422036e-1f;\n"
    "  p=p*z-3.33332819422e-1f; float sm=x+x*z*p;\n"
    "  float e=mj_expf(2.0f*(a<10.0f?a:10.0f)); float bg=1.0f-2.0f/(e+1.0f); bg=x<0?-bg:bg;\n"
    "  return a<0.625f?sm:bg;}\n"
    "static inline float mj_erff(float x){\n"
    "  float a=fabsf(x), t=a<3.921875f?a:3.921875f, z=t*t;\n"
    "  float p=-5.990836071e-4f; p=p*z+4.993173759e-3f; p=p*z-2.676660754e-2f; p=p*z+1.128181592e-1f;\n"
    "  p=p*z-3.761249483e-1f; p=p*z+1.283791512e-1f; float sm=x*p+x;\n"
    "  float h=-1.773193246e-3f; h=h*t+2.222407609e-2f; h=h*t-1.306815445e-1f; h=h*t+5.027319789e-1f;\n"
    "  h=h*t-1.615287662e+0f; h=h*t-2.935171360e-3f; float g=h-z*1.44269504088896341f;\n"
    "  float n=__builtin_rintf(g), f=g-n;\n"
    "  float q=1.534574403e-4f; q=q*f+1.339992974e-3f; q=q*f+9.618489072e-3f; q=q*f+5.550328642e-2f;\n"
    "  q=q*f+2.402264625e-1f; q=q*f+6.931471825e-1f; q=q*f+1.0f;\n"
    "  float bg=copysignf(1.0f-q*mj_bits_f(((int32_t)n+127)<<23),x);\n"
    "  return a>=0.921875f?bg:sm;}\n"
    "static inline float mj_geluf(float x){\n"
    "  int32_t ib=mj_f_bits(x); ib=ib<0x40b20000?ib:0x40b20000; float c=mj_bits_f(ib), z=c*c;\n"
    "  float p=2.275046434e-08f; p=p*z+6.351976081e-06f; p=p*z+1.688088779e-04f; p=p*z+4.677157039e-03f;\n"
    "  p=p*z+3.385102531e-02f; p=p*z+3.989422347e-01f;\n"
    "  float q=1.197525888e-06f; q=q*z+7.364200326e-05f; q=q*z+1.884349202e-03f; q=q*z+2.864493302e-02f;\n"
    "  q=q*z+2.515178566e-01f; q=q*z+1.0f;\n"
    "  float ph=0.5f+c*(p/q); ph=x<-5.5f?0.0f:ph; return x*ph;}\n"
    "static inline float mj_gelu_bwf(float g,float x){\n"
    "  return g*(0.5f*(1.0f+mj_erff(x*0.70710678118654752440f))+x*0.39894228040143267794f*mj_expf(-0.5f*x*x));}\n"
    "static inline double mj_gelu_bw(double g,double x){\n"
    "  return g*(0.5*(1.0+erf(x*0.70710678118654752440))+x*0.39894228040143267794*exp(-0.5*x*x));}\n"
    "static inline float mj_gelu_tanh_bwf(float g,float x){\n"
    "  float x2=x*x,t=mj_tanhf(0.79788456080286535588f*(x+0.044715f*x2*x));\n"
    "  return g*(0.5f*(1.0f+t)+0.5f*x*(1.0f-t*t)*0.79788456080286535588f*(1.0f+0.134145f*x2));}\n"
    "static inline double mj_gelu_tanh_bw(double g,double x){\n"
    "  double x2=x*x,t=tanh(0.79788456080286535588*(x+0.044715*x2*x));\n"
    "  return g*(0.5*(1.0+t)+0.5*x*(1.0-t*t)*0.79788456080286535588*(1.0+0.134145*x2));}\n"
    "static inline double mj_pymod(double a,double b){double r=fmod(a,b);return (r!=0&&((r<0)!=(b<0)))?r+b:r;}\n"
    "static inline int64_t mj_imod(int64_t a,int64_t b){if(b==-1)return 0;int64_t r=a%b;return (r!=0&&((r<0)!=(b<0)))?r+b:r;}\n"
    "static inline int64_t mj_idiv(int64_t a,int64_t b){if(b==-1)return (int64_t)(0-(uint64_t)a);int64_t q=a/b;"
    "return ((a%b!=0)&&((a<0)!=(b<0)))?q-1:q;}\n"
    "static inline int64_t mj_ipow(int64_t a,int64_t b){if(b<0)return a==1?1:(a==-1?(b%2?-1:1):0);"
    "uint64_t r=1,x=(uint64_t)a;while(b){if(b&1)r*=x;x*=x;b>>=1;}return (int64_t)r;}\n"
    "static inline int64_t mj_shl(int64_t a,int64_t b){return (b<0||b>=64)?0:(int64_t)((uint64_t)a<<b);}\n"
    "static inline int64_t mj_shr(int64_t a,int64_t b){return (b<0||b>=64)?(a<0?-1:0):a>>b;}\n"
    "#define MJ_PART 64\n"
    /* the elementwise dialect of tensor/ops.def's expressions */
    "typedef uint64_t mt_u64;\n"
    "#define MJ_G1(f, ff, x) _Generic((x), float: ff, default: f)(x)\n"
    "#define m_exp(x) MJ_G1(exp, mj_expf, x)\n#define m_log(x) MJ_G1(log, mj_logf, x)\n"
    "#define m_tanh(x) MJ_G1(tanh, mj_tanhf, x)\n#define m_erf(x) MJ_G1(erf, mj_erff, x)\n"
    "#define m_exp2(x) MJ_G1(exp2, exp2f, x)\n#define m_expm1(x) MJ_G1(expm1, expm1f, x)\n"
    "#define m_log2(x) MJ_G1(log2, log2f, x)\n#define m_log10(x) MJ_G1(log10, log10f, x)\n"
    "#define m_log1p(x) MJ_G1(log1p, log1pf, x)\n#define m_sqrt(x) MJ_G1(sqrt, sqrtf, x)\n"
    "#define m_sin(x) MJ_G1(sin, sinf, x)\n#define m_cos(x) MJ_G1(cos, cosf, x)\n#define m_tan(x) MJ_G1(tan, tanf, x)\n"
    "#define m_asin(x) MJ_G1(asin, asinf, x)\n#define m_acos(x) MJ_G1(acos, acosf, x)\n"
    "#define m_atan(x) MJ_G1(atan, atanf, x)\n#define m_sinh(x) MJ_G1(sinh, sinhf, x)\n"
    "#define m_cosh(x) MJ_G1(cosh, coshf, x)\n#define m_erfc(x) MJ_G1(erfc, erfcf, x)\n"
    "#define m_floor(x) MJ_G1(floor, floorf, x)\n#define m_ceil(x) MJ_G1(ceil, ceilf, x)\n"
    "#define m_rint(x) MJ_G1(nearbyint, nearbyintf, x)\n#define m_trunc(x) MJ_G1(trunc, truncf, x)\n"
    "#define m_fabs(x) MJ_G1(fabs, fabsf, x)\n"
    "#define MJ_G2(f, ff, x, y) _Generic((x), float: ff, default: f)(x, y)\n"
    "#define m_pow(x, y) MJ_G2(pow, powf, x, y)\n#define m_atan2(x, y) MJ_G2(atan2, atan2f, x, y)\n"
    "#define m_hypot(x, y) MJ_G2(hypot, hypotf, x, y)\n#define m_fmod(x, y) MJ_G2(fmod, fmodf, x, y)\n"
    "#define m_gelu_bw(g, x) MJ_G2(mj_gelu_bw, mj_gelu_bwf, g, x)\n"
    "#define m_gelu_tanh_bw(g, x) MJ_G2(mj_gelu_tanh_bw, mj_gelu_tanh_bwf, g, x)\n"
    "#define m_pymod mj_pymod\n#define m_fmax_nan MJ_FMAX\n#define m_fmin_nan MJ_FMIN\n"
    "#define m_idiv mj_idiv\n#define m_imod mj_imod\n#define m_ipow mj_ipow\n#define m_shl mj_shl\n#define m_shr mj_shr\n"
    "#define MJ_FMAX(a,b) (((a)!=(a)||(b)!=(b))?(a)+(b):((a)>(b)?(a):(b)))\n"
    "#define MJ_FMIN(a,b) (((a)!=(a)||(b)!=(b))?(a)+(b):((a)<(b)?(a):(b)))\n";

typedef mtj_cg cg;

static bool is_row(cg *c, int i) {
  const mtj_node *x = &c->g->n[i];
  if (x->kind == JN_REDUCE) return true;
  if (c->g->k[c->k].p < 0) return false;
  for (int d = c->p; d < x->ndim; d++)
    if (!(x->shape[d].sym < 0 && x->shape[d].c == 1)) return false;
  return x->ndim == c->ndim;
}

static bool in_kernel(cg *c, int i) { return c->g->n[i].kernel == c->k && c->g->n[i].kind != JN_INPUT; }

static int load_slot(cg *c, int i) {
  for (int k = 0; k < c->a.nload; k++)
    if (c->a.load[k] == i) return k;
  return -1;
}

/* The index expression of load slot k (inner loop when j, else the row's first element). */
static void load_index(cg *c, int k, bool j, char *out, size_t n) {
  switch (c->a.cls[k]) {
  case MTJ_LD_SCALAR: snprintf(out, n, "0"); break;
  case MTJ_LD_FULL: snprintf(out, n, c->a.flat ? "i" : (j ? "row*I+j" : "row*I")); break;
  case MTJ_LD_ROW: snprintf(out, n, "row"); break;
  case MTJ_LD_INNER: snprintf(out, n, j ? "j" : "0"); break;
  default:
    if (c->ndim - c->p == 1)
      snprintf(out, n, j ? "o%d+j*z[%d]" : "o%d", k, 2 + c->ndim + k * c->ndim + c->ndim - 1);
    else
      snprintf(out, n, j ? "o%d+mj_inner%d(j)" : "o%d", k, k);
  }
}

static void emit(cg *c, int i, bool j);

static void opnd(cg *c, int i, char *out, size_t n) {
  const mtj_node *x = &c->g->n[i];
  const char *T = mtj_cg_rtype(x->dtype);
  if (x->kind == JN_CONST) {
    if (x->c != x->c) snprintf(out, n, "((%s)NAN)", T);
    else if (x->c == INFINITY || x->c == -INFINITY) snprintf(out, n, "((%s)(%sINFINITY))", T, x->c < 0 ? "-" : "");
    else snprintf(out, n, "((%s)%.17g)", T, x->c);
  } else if (x->kind == JN_SCALAR) {
    snprintf(out, n, "((%s)s[%d])", T, x->slot);
  } else {
    snprintf(out, n, "v%d", i);
  }
}

/* The compute dtype of node n's expression (float16/bfloat16 compute in float32). */
static int cdt_of(const mtj_node *n) { return n->cdt == MT_FLOAT16 || n->cdt == MT_BFLOAT16 ? MT_FLOAT32 : n->cdt; }

/* Writes expression e (a row's, tensor/ops.def) into o with its names
 * replaced: a and b by the operands x and y, T by the C type T, p0 by the
 * number p. Numbers and other names are copied. False if o is too small. */
static bool subst(const char *e, const char *x, const char *y, const char *T, double p, char *o, size_t sz) {
  size_t n = 0;
  char lit[48];
  snprintf(lit, sizeof lit, "((%s)%.17g)", T, p);
  while (*e) {
    const char *t = e, *rep = NULL;
    if ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '_') {
      while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') || *e == '_') e++;
      size_t len = (size_t)(e - t);
      if (len == 1 && *t == 'a') rep = x;
      else if (len == 1 && *t == 'b') rep = y;
      else if (len == 1 && *t == 'T') rep = T;
      else if (len == 2 && t[0] == 'p' && t[1] == '0') rep = lit;
    } else if ((*e >= '0' && *e <= '9') || (*e == '.' && e[1] >= '0' && e[1] <= '9')) {
      while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || *e == '.' ||
             ((*e == '+' || *e == '-') && (e[-1] == 'e' || e[-1] == 'E')))
        e++;
    } else {
      e++;
    }
    bool paren = rep && rep != T; /* operands keep their grouping; a type name may not have parentheses */
    int k = rep ? snprintf(o + n, sz - n, paren ? "(%s)" : "%s", rep) : snprintf(o + n, sz - n, "%.*s", (int)(e - t), t);
    if (k < 0 || (size_t)k >= sz - n) return false;
    n += (size_t)k;
  }
  return true;
}

/* The C expression of elementwise node n on operands x (and y): its row's
 * expression for the compute dtype, or nan_to_num's form with its three
 * numbers. Results of a bool
 * dtype are made 0 or 1. False when there is none. */
static bool ew_expr(const mtj_node *n, const char *x, const char *y, char *o, size_t sz) {
  int dt = cdt_of(n);
  bool fl = dt == MT_FLOAT32 || dt == MT_FLOAT64;
  const char *T = mtj_ctype(dt);
  const mt_opinfo *info = &mt_ops[n->op];
  switch (n->op) {
  case MT_OP_nan_to_num:
    if (!fl) { snprintf(o, sz, "%s", x); return true; }
    snprintf(o, sz, "(%s!=%s?(%s)%.17g:(%s==INFINITY?(%s)%.17g:(%s==-INFINITY?(%s)%.17g:%s)))", x, x, T, n->f[0], x, T,
             n->f[1], x, T, n->f[2], x);
    return true;
  case MT_OP_bitwise_not:
    if (dt == MT_BOOL) { snprintf(o, sz, "(!%s)", x); return true; }
    break;
  default: break;
  }
  const char *e = fl ? info->fexpr : info->iexpr;
  if (!e || !subst(e, x, y ? y : x, T, n->f[0], o, sz)) return false;
  size_t len = strlen(o);
  if (dt == MT_BOOL && !(info->flags & MT_F_PRED)) { /* bool arithmetic (a + b) must stay 0 or 1 */
    if (len + 8 >= sz) return false;
    memmove(o + 2, o, len + 1);
    o[0] = o[1] = '(';
    memcpy(o + len + 2, ")!=0)", 6);
  }
  return true;
}

static bool failed;
static char failed_what[96]; /* the first op without C code */

const char *mtj_codegen_error(void) { return failed_what; }

/* The operand of binary node i other than a constant equal to v, or -1. */
static int with_const(const mtj_graph *g, int i, int op, double v) {
  const mtj_node *x = &g->n[i];
  if (x->kind != JN_BINARY || x->op != op) return -1;
  for (int k = 0; k < 2; k++) {
    const mtj_node *y = &g->n[x->a[k]];
    if (y->kind == JN_CONST && y->c == v) return x->a[1 - k];
  }
  return -1;
}

/* Is node i lowering's float32 gelu, x*0.5 * (erf(x*sqrt(1/2)) + 1), with
 * every part computed in this kernel? Returns x, or -1. */
static int gelu_of(cg *c, int i) {
  const mtj_graph *g = c->g;
  const mtj_node *m = &g->n[i];
  if (m->kind != JN_BINARY || m->op != MT_OP_mul || cdt_of(m) != MT_FLOAT32) return -1;
  for (int k = 0; k < 2; k++) {
    int half = m->a[k], one = m->a[1 - k];
    int x = with_const(g, half, MT_OP_mul, 0.5), e = with_const(g, one, MT_OP_add, 1.0);
    if (x < 0 || e < 0 || !in_kernel(c, half) || !in_kernel(c, one) || !in_kernel(c, e)) continue;
    const mtj_node *en = &g->n[e];
    if (en->kind != JN_UNARY || en->op != MT_OP_erf || cdt_of(en) != MT_FLOAT32) continue;
    int u = en->a[0];
    if (in_kernel(c, u) && with_const(g, u, MT_OP_mul, (double)0.70710678118654752440f) == x) return x;
    if (in_kernel(c, u) && with_const(g, u, MT_OP_mul, 0.70710678118654752440) == x) return x;
  }
  return -1;
}

/* Is node i a - amax(a) (softmax's shifted input: never above 0, or NaN)? */
static bool below_max(const mtj_graph *g, int i) {
  const mtj_node *x = &g->n[i];
  if (x->kind != JN_BINARY || x->op != MT_OP_sub) return false;
  const mtj_node *m = &g->n[x->a[1]];
  return m->kind == JN_REDUCE && m->op == MT_OP_amax && m->a[0] == x->a[0];
}

/* The rounding of a float to a 16-bit dtype's values ("" for other dtypes). */
static const char *round16(int dt) { return dt == MT_FLOAT16 ? "mj_rh" : dt == MT_BFLOAT16 ? "mj_rb" : ""; }

/* Emits node i (and what it needs) into the current scope: the inner loop
 * (j) or the row scope. Row-level values are emitted in the row scope only. */
static void emit(cg *c, int i, bool j) {
  const mtj_node *x = &c->g->n[i];
  if (x->kind == JN_CONST || x->kind == JN_SCALAR) return;
  bool jj = j && (!in_kernel(c, i) || !is_row(c, i));
  char *done = jj ? c->loop_done : c->row_done;
  if (done[i]) return;
  const char *T = mtj_cg_rtype(x->dtype);
  char ex[1024], o0[64], o1[64], o2[64], ix[96];
  if (!in_kernel(c, i)) { /* a load */
    int k = load_slot(c, i);
    const char *cv = !c->cuda ? "" : x->dtype == MT_FLOAT16 ? "h2f" : x->dtype == MT_BFLOAT16 ? "b2f" : "";
    if (c->vec && jj && (c->a.cls[k] == MTJ_LD_FULL || c->a.cls[k] == MTJ_LD_INNER)) {
      mtj_put(c->b, "      const %s v%d = %s(l%d.v[e_]);\n", T, i, cv, k);
    } else {
      load_index(c, k, jj, ix, sizeof ix);
      mtj_put(c->b, "      const %s v%d = %s(b%d[%s]);\n", T, i, cv, k, ix);
    }
    done[i] = 1;
    return;
  }
  if (x->kind == JN_REDUCE) { /* computed by its loop */
    failed = true;
    return;
  }
  int gx = gelu_of(c, i);
  if (gx >= 0) { /* the whole gelu as one function */
    emit(c, gx, jj);
    opnd(c, gx, o0, sizeof o0);
    mtj_put(c->b, "      const %s v%d = %s(mj_geluf(%s));\n", T, i, round16(x->dtype), o0);
    done[i] = 1;
    return;
  }
  for (int k = 0; k < MTJ_NA; k++)
    if (x->a[k] >= 0) emit(c, x->a[k], jj);
  if (x->a[0] >= 0) opnd(c, x->a[0], o0, sizeof o0);
  if (x->a[1] >= 0) opnd(c, x->a[1], o1, sizeof o1);
  if (x->a[2] >= 0) opnd(c, x->a[2], o2, sizeof o2);
  bool ok = true;
  switch (x->kind) {
  case JN_UNARY:
    ok = ew_expr(x, o0, NULL, ex, sizeof ex);
    if (x->op == MT_OP_exp && x->cdt == MT_FLOAT32 && below_max(c->g, x->a[0])) snprintf(ex, sizeof ex, "mj_expf_le0(%s)", o0);
    break;
  case JN_BINARY:
    if (x->op == MT_OP_div && c->rc_done[x->a[1]]) snprintf(ex, sizeof ex, "(%s*rc%d)", o0, x->a[1]);
    else ok = ew_expr(x, o0, o1, ex, sizeof ex);
    break;
  case JN_WHERE: snprintf(ex, sizeof ex, "(%s?%s:%s)", o0, o1, o2); break;
  case JN_CAST:
    if (x->dtype == MT_BOOL) snprintf(ex, sizeof ex, "(%s!=0)", o0);
    else snprintf(ex, sizeof ex, "(%s)%s", T, o0);
    break;
  default: ok = false;
  }
  if (!ok) {
    if (!failed)
      snprintf(failed_what, sizeof failed_what, "%s (%s)", x->fn ? x->name : mt_ops[x->op].name,
               mt_dtype_name((mt_dtype)x->cdt));
    failed = true;
    snprintf(ex, sizeof ex, "0");
  }
  mtj_put(c->b, "      const %s v%d = %s((%s)%s);\n", T, i, round16(x->dtype), T, ex);
  done[i] = 1;
}

static int phase_of(cg *c, int i, int *memo) {
  if (memo[i] >= 0) return memo[i];
  const mtj_node *x = &c->g->n[i];
  int ph = 0;
  if (in_kernel(c, i)) {
    for (int k = 0; k < MTJ_NA; k++)
      if (x->a[k] >= 0) {
        int q = phase_of(c, x->a[k], memo);
        if (q > ph) ph = q;
      }
    if (x->kind == JN_REDUCE) ph++;
  }
  return memo[i] = ph;
}

/* Emits, in the row scope, every row-level value that node i needs. */
static void emit_row_deps(cg *c, int i) {
  const mtj_node *x = &c->g->n[i];
  if (!in_kernel(c, i) || x->kind == JN_REDUCE) return;
  if (is_row(c, i)) {
    emit(c, i, false);
    return;
  }
  for (int k = 0; k < MTJ_NA; k++)
    if (x->a[k] >= 0) emit_row_deps(c, x->a[k]);
  /* x / r with r per row: one reciprocal per row, a product per element */
  int r = x->a[1];
  if (x->kind == JN_BINARY && x->op == MT_OP_div && (x->cdt == MT_FLOAT32 || x->cdt == MT_FLOAT64) && in_kernel(c, r) &&
      is_row(c, r) && !c->rc_done[r] && c->row_done[r]) {
    const char *T = mtj_ctype(x->cdt);
    mtj_put(c->b, "    const %s rc%d = (%s)1/v%d;\n", T, r, T, r);
    c->rc_done[r] = 1;
  }
}

/* Worth keeping rather than computing twice: a transcendental function
 * (its row's MT_F_COSTLY). */
static bool costly(const mtj_node *x) { return x->kind == JN_UNARY && (mt_ops[x->op].flags & MT_F_COSTLY); }

/* Does value `from` (in the kernel) read value `target`? */
static bool reads(cg *c, int from, int target) {
  if (from == target) return true;
  if (!in_kernel(c, from)) return false;
  for (int k = 0; k < MTJ_NA; k++)
    if (c->g->n[from].a[k] >= 0 && reads(c, c->g->n[from].a[k], target)) return true;
  return false;
}

static bool written_back(const mtj_graph *g, int i);
/* The OpenMP reduction operator of reduction node x. */
static const char *reduce_clause(const mtj_node *x) {
  return x->op == MT_OP_prod ? "*" : x->op == MT_OP_amax ? "max" : x->op == MT_OP_amin ? "min" : "+";
}

/* Is node i a live reduction of this kernel whose input has phase q? */
static bool is_reduce_of(cg *c, int i, int q, int *memo) {
  const mtj_node *x = &c->g->n[i];
  return in_kernel(c, i) && x->live && x->kind == JN_REDUCE && phase_of(c, x->a[0], memo) == q;
}

/* Emits "<acc> = <acc> (op) <val>;" for reduction node i. */
static void reduce_into(cg *c, int i, const char *acc, const char *val) {
  const mtj_node *x = &c->g->n[i];
  if (x->op == MT_OP_amax) mtj_put(c->b, "%s = %s > %s ? %s : %s;\n", acc, acc, val, acc, val);
  else if (x->op == MT_OP_amin) mtj_put(c->b, "%s = %s < %s ? %s : %s;\n", acc, acc, val, acc, val);
  else mtj_put(c->b, "%s %s= %s;\n", acc, x->op == MT_OP_prod ? "*" : "+", val);
}

/* The body of phase q's loop over j: spilled values read back (last
 * phase), reductions updated (into accp<i>[k_] when part), stores. */
static void emit_body(cg *c, int q, int maxq, int *memo, bool part) {
  mtj_graph *g = c->g;
  mtj_buf *b = c->b;
  memset(c->loop_done, 0, (size_t)g->nn);
  if (q == maxq)
    for (int i = 0; i < g->nn; i++)
      if (c->spill[i] >= 0) {
        mtj_put(b, "      const %s v%d = w%d[row*I+j];\n", mtj_ctype(g->n[i].dtype), i, c->spill[i]);
        c->loop_done[i] = 1;
      }
  for (int i = 0; i < g->nn; i++) {
    if (!is_reduce_of(c, i, q, memo)) continue;
    const mtj_node *x = &g->n[i];
    emit(c, x->a[0], true);
    char o[64], acc[32];
    opnd(c, x->a[0], o, sizeof o);
    snprintf(acc, sizeof acc, part ? "accp%d[k_]" : "acc%d", i);
    mtj_put(b, "      ");
    reduce_into(c, i, acc, o);
    if (c->spill[x->a[0]] >= 0 && q < maxq) mtj_put(b, "      w%d[row*I+j] = v%d;\n", c->spill[x->a[0]], x->a[0]);
  }
  for (int l = 0; l < c->a.nstore; l++)
    if (!is_row(c, c->a.store[l]) && phase_of(c, c->a.store[l], memo) == q) {
      emit(c, c->a.store[l], true);
      mtj_put(b, "      w%d[row*I+j] = v%d;\n", l, c->a.store[l]);
    }
}

/* Does node i (in the kernel) compute a costly value, or read one? */
static bool reads_costly(cg *c, int i) {
  if (!in_kernel(c, i)) return false;
  if (costly(&c->g->n[i])) return true;
  for (int k = 0; k < 3; k++)
    if (c->g->n[i].a[k] >= 0 && reads_costly(c, c->g->n[i].a[k])) return true;
  return false;
}

/* Whether phase q's reductions get partial accumulators: only where the
 * row is already in cache (not the first loop, which streams it in) and
 * the loop is cheap (no exp or erf: those, not the additions, set its
 * pace). Measured at 4096x1024 on two threads: partial sums in the first
 * loop or beside exp made layer_norm and softmax 10-25% slower, in
 * layer_norm's second loop 1.2x faster. */
static bool partial_sums(cg *c, int q, int *memo) {
  bool any = false;
  for (int i = 0; i < c->g->nn; i++)
    if (is_reduce_of(c, i, q, memo)) {
      if (reads_costly(c, c->g->n[i].a[0])) return false;
      any = true;
    }
  return any && q > 0;
}

/* After phase q's loop: its reductions become row values v<i>. */
static void finish_phase(cg *c, int q, int *memo) {
  for (int i = 0; i < c->g->nn; i++) {
    if (!is_reduce_of(c, i, q, memo)) continue;
    const mtj_node *x = &c->g->n[i];
    const char *T = mtj_ctype(x->dtype);
    if (x->op == MT_OP_mean) mtj_put(c->b, "    const %s v%d = acc%d / (%s)I;\n", T, i, i, T);
    else mtj_put(c->b, "    const %s v%d = acc%d;\n", T, i, i);
    c->row_done[i] = 1;
  }
}

static void gen_kernel(mtj_graph *g, int k, mtj_buf *b) {
  cg C_ = {.g = g, .k = k, .b = b}, *c = &C_;
  mtj_kernel_args(g, k, &c->a);
  c->ndim = g->k[k].ndim, c->p = c->a.p;
  c->row_done = calloc((size_t)g->nn, 1);
  c->loop_done = calloc((size_t)g->nn, 1);
  c->rc_done = calloc((size_t)g->nn, 1);
  c->spill = malloc((size_t)g->nn * sizeof *c->spill);
  for (int i = 0; i < g->nn; i++) c->spill[i] = -1;
  int *memo = malloc((size_t)g->nn * sizeof *memo);
  for (int i = 0; i < g->nn; i++) memo[i] = -1;
  mtj_put(b, "\nvoid mtj_k%d(void **restrict a, const int64_t *restrict z, const double *restrict s, int ith, int nth) {\n", k);
  mtj_put(b, "  (void)s;\n  const int64_t rows = z[0], I = z[1]; (void)I;\n");
  /* an input the graph writes back may be stored into in place (runtime.c,
   * plan_direct): its load and the store of its new value may alias, so
   * neither is restrict (the loops stay vectorized by their omp simd) */
  for (int l = 0; l < c->a.nload; l++)
    mtj_put(b, "  const %s *%sb%d = a[%d];\n", mtj_ctype(g->n[c->a.load[l]].dtype),
            written_back(g, c->a.load[l]) ? "" : "restrict ", l, l);
  for (int l = 0; l < c->a.nstore; l++)
    mtj_put(b, "  %s *%sw%d = a[%d];\n", mtj_ctype(g->n[c->a.store[l]].dtype),
            written_back(g, c->a.store[l]) ? "" : "restrict ", l, c->a.nload + l);
  if (c->a.flat) {
    mtj_put(b, "  const int64_t n = rows * I, lo = n / nth * ith + (ith < n %% nth ? ith : n %% nth),\n"
           "    hi = lo + n / nth + (ith < n %% nth);\n");
    mtj_put(b, "  for (int64_t i = lo; i < hi; i++) {\n");
    for (int l = 0; l < c->a.nstore; l++) {
      emit(c, c->a.store[l], true);
      mtj_put(b, "      w%d[i] = v%d;\n", l, c->a.store[l]);
    }
    mtj_put(b, "  }\n}\n");
    goto done;
  }
  mtj_put(b, "  const int64_t r0 = rows * ith / nth, r1 = rows * (ith + 1) / nth;\n");
  /* general strided loads: unravel the row (and, for several inner dims, j) */
  for (int l = 0; l < c->a.nload; l++)
    if (c->a.cls[l] == MTJ_LD_GENERAL && c->ndim - c->p > 1) {
      int st = 2 + c->ndim + l * c->ndim;
      mtj_put(b, "#define mj_inner%d(j) ({ int64_t t_ = (j), o_ = 0; for (int d_ = %d; d_ >= %d; d_--) "
             "{ o_ += t_ %% z[2 + d_] * z[%d + d_]; t_ /= z[2 + d_]; } o_; })\n", l, c->ndim - 1, c->p, st);
    }
  mtj_put(b, "  for (int64_t row = r0; row < r1; row++) {\n");
  for (int l = 0; l < c->a.nload; l++)
    if (c->a.cls[l] == MTJ_LD_GENERAL) {
      int st = 2 + c->ndim + l * c->ndim;
      mtj_put(b, "    int64_t o%d = 0; { int64_t t_ = row; for (int d_ = %d; d_ >= 0; d_--) { o%d += t_ %% z[2 + d_] * z[%d + d_]; "
             "t_ /= z[2 + d_]; } }\n", l, c->p - 1, l, st);
    }
  /* phases: loop q accumulates reductions whose input has phase q and
   * stores inner values of phase q */
  int maxq = -1;
  for (int i = 0; i < g->nn; i++) {
    if (!in_kernel(c, i) || !g->n[i].live) continue;
    if (g->n[i].kind == JN_REDUCE) {
      int q = phase_of(c, g->n[i].a[0], memo);
      if (q > maxq) maxq = q;
    }
  }
  for (int l = 0; l < c->a.nstore; l++)
    if (!is_row(c, c->a.store[l])) {
      int q = phase_of(c, c->a.store[l], memo);
      if (q > maxq) maxq = q;
    }
  /* A costly value summed in an earlier loop and read again by the last
   * one (softmax's exp) is written into the output there and read back:
   * the row is still in cache, and exp is not computed twice. */
  for (int l = 0; l < c->a.nstore; l++) {
    int st = c->a.store[l];
    if (is_row(c, st) || phase_of(c, st, memo) != maxq) continue;
    for (int i = 0; i < g->nn; i++) {
      const mtj_node *x = &g->n[i];
      if (!in_kernel(c, i) || !x->live || x->kind != JN_REDUCE) continue;
      int e = x->a[0];
      if (in_kernel(c, e) && costly(&g->n[e]) && !is_row(c, e) && c->spill[e] < 0 && g->n[e].dtype == g->n[st].dtype &&
          phase_of(c, e, memo) < maxq && reads(c, st, e)) {
        c->spill[e] = l;
        break;
      }
    }
  }
  for (int q = 0; q <= maxq; q++) {
    /* row-level values this loop needs */
    for (int i = 0; i < g->nn; i++) {
      if (!in_kernel(c, i) || !g->n[i].live) continue;
      if (g->n[i].kind == JN_REDUCE && phase_of(c, g->n[i].a[0], memo) == q) emit_row_deps(c, g->n[i].a[0]);
    }
    for (int l = 0; l < c->a.nstore; l++)
      if (!is_row(c, c->a.store[l]) && phase_of(c, c->a.store[l], memo) == q) emit_row_deps(c, c->a.store[l]);
    /* accumulators */
    char red[8192] = ""; /* " reduction(op:accN)" for every reduction of the phase (at most MTJ_KNODES) */
    size_t rl = 0;
    for (int i = 0; i < g->nn; i++) {
      const mtj_node *x = &g->n[i];
      if (!in_kernel(c, i) || !x->live || x->kind != JN_REDUCE || phase_of(c, x->a[0], memo) != q) continue;
      const char *T = mtj_ctype(x->dtype);
      bool fl = x->dtype == MT_FLOAT32 || x->dtype == MT_FLOAT64;
      const char *init = x->op == MT_OP_prod ? "1" : x->op == MT_OP_amax ? (fl ? "-INFINITY" : "0") :
                         x->op == MT_OP_amin ? (fl ? "INFINITY" : "0") : "0";
      if (!fl && (x->op == MT_OP_amax || x->op == MT_OP_amin)) { /* integer extrema start from the first element */
        mtj_put(b, "    %s acc%d; { int64_t j = 0; (void)j;\n", T, i);
        memset(c->loop_done, 0, (size_t)g->nn);
        emit(c, x->a[0], true);
        char o[64];
        opnd(c, x->a[0], o, sizeof o);
        mtj_put(b, "      acc%d = %s; }\n", i, o);
      } else {
        mtj_put(b, "    %s acc%d = %s;\n", T, i, init);
      }
      rl += (size_t)snprintf(red + rl, sizeof red - rl, " reduction(%s:acc%d)", reduce_clause(x), i);
    }
    if (!partial_sums(c, q, memo)) {
      mtj_put(b, "#pragma omp simd%s\n    for (int64_t j = 0; j < I; j++) {\n", red);
      emit_body(c, q, maxq, memo, false);
      mtj_put(b, "    }\n");
      finish_phase(c, q, memo);
      continue;
    }
    /* A reduction keeps MJ_PART partial accumulators (several vector
     * registers) over blocks of the row, so consecutive vector adds do not
     * wait for each other; the last partial block runs as a plain loop. */
    mtj_put(b, "    {\n      int64_t j0_ = 0;\n");
    for (int i = 0; i < g->nn; i++)
      if (is_reduce_of(c, i, q, memo))
        mtj_put(b, "      %s accp%d[MJ_PART];\n      for (int k_ = 0; k_ < MJ_PART; k_++) accp%d[k_] = acc%d;\n",
                mtj_ctype(g->n[i].dtype), i, i, i);
    mtj_put(b, "      for (; j0_ + MJ_PART <= I; j0_ += MJ_PART) {\n#pragma omp simd\n"
               "      for (int k_ = 0; k_ < MJ_PART; k_++) {\n      const int64_t j = j0_ + k_;\n");
    emit_body(c, q, maxq, memo, true);
    mtj_put(b, "      }\n      }\n#pragma omp simd%s\n      for (int64_t j = j0_; j < I; j++) {\n", red);
    emit_body(c, q, maxq, memo, false);
    mtj_put(b, "      }\n");
    for (int i = 0; i < g->nn; i++)
      if (is_reduce_of(c, i, q, memo)) { /* a tree of vector ops, not 64 dependent scalar ones */
        char acc[32], part[32];
        snprintf(acc, sizeof acc, "acc%d", i);
        snprintf(part, sizeof part, "accp%d[k_]", i);
        mtj_put(b, "#pragma omp simd reduction(%s:acc%d)\n      for (int k_ = 0; k_ < MJ_PART; k_++) ",
                reduce_clause(&g->n[i]), i);
        reduce_into(c, i, acc, part);
      }
    mtj_put(b, "    }\n");
    finish_phase(c, q, memo);
  }
  for (int l = 0; l < c->a.nstore; l++)
    if (is_row(c, c->a.store[l])) {
      emit(c, c->a.store[l], false);
      mtj_put(b, "    w%d[row] = v%d;\n", l, c->a.store[l]);
    }
  mtj_put(b, "  }\n}\n");
done:
  free(c->row_done);
  free(c->loop_done);
  free(c->rc_done);
  free(c->spill);
  free(memo);
}

/* True for an input that the graph writes back and for a written-back value. */
static bool written_back(const mtj_graph *g, int i) {
  for (int k = 0; k < g->nwb; k++)
    if (g->wb[k] == i || (g->n[i].kind == JN_INPUT && g->n[i].slot == g->wb_slot[k])) return true;
  return false;
}

char *mtj_codegen(const mtj_graph *cg_) {
  mtj_graph *g = (mtj_graph *)cg_;
  mtj_buf b = {0};
  failed = false;
  failed_what[0] = 0;
  mtj_put(&b, "/* generated by moontorch's JIT */\n%s", prelude);
  for (int k = 0; k < g->nk; k++) gen_kernel(g, k, &b);
  if (failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

static bool shape_eq(mtj_graph *g, const mtj_node *x, const mtj_dim *F, int R, int from, int to, bool ones) {
  /* dims [from, to) of x (right-aligned to rank R) equal F's (or are all 1 when ones) */
  for (int d = from; d < to; d++) {
    int k = d - (R - x->ndim);
    mtj_dim e = k >= 0 ? x->shape[k] : (mtj_dim){-1, 1};
    bool one = e.sym < 0 && e.c == 1;
    if (ones ? !one : !mtj_dim_eq(g, e, F[d])) return false;
  }
  return true;
}

mt_status mtj_kernel_args(mtj_graph *g, int k, mtj_kargs *a) {
  memset(a, 0, sizeof *a);
  const mtj_kernel *K = &g->k[k];
  int R = K->ndim;
  a->p = K->p >= 0 ? K->p : (R > 0 ? R - 1 : 0);
  for (int i = 0; i < g->nn; i++) {
    const mtj_node *x = &g->n[i];
    if (!x->live || x->kernel != k) continue;
    if (x->mat) {
      if (a->nstore == MTJ_KSTORE) return mt_fail(MT_EARG, "a fused kernel has too many outputs");
      a->store[a->nstore++] = i;
    }
    for (int q = 0; q < 3; q++) {
      int o = x->a[q];
      if (o < 0) continue;
      const mtj_node *y = &g->n[o];
      if (y->kind == JN_CONST || y->kind == JN_SCALAR || (y->kernel == k && y->kind != JN_INPUT)) continue;
      bool seen = false;
      for (int l = 0; l < a->nload; l++) seen |= a->load[l] == o;
      if (seen) continue;
      if (a->nload == MTJ_KLOAD) return mt_fail(MT_EARG, "a fused kernel reads too many buffers");
      int cls;
      bool strided = y->kind == JN_VIEW && (y->op == MT_OP_permute || y->op == MT_OP_expand);
      if (y->ndim > R) cls = MTJ_LD_GENERAL;
      else if (shape_eq(g, y, K->F, R, 0, R, true)) cls = MTJ_LD_SCALAR;
      else if (strided) cls = MTJ_LD_GENERAL;
      else if (y->ndim == R && shape_eq(g, y, K->F, R, 0, R, false)) cls = MTJ_LD_FULL;
      else if (y->ndim == R && shape_eq(g, y, K->F, R, 0, a->p, false) && shape_eq(g, y, K->F, R, a->p, R, true))
        cls = MTJ_LD_ROW;
      else if (shape_eq(g, y, K->F, R, 0, a->p, true) && shape_eq(g, y, K->F, R, a->p, R, false))
        cls = MTJ_LD_INNER;
      else cls = MTJ_LD_GENERAL;
      a->cls[a->nload] = cls;
      a->load[a->nload++] = o;
    }
  }
  /* sort loads by node id so the argument order is canonical */
  for (int i = 1; i < a->nload; i++)
    for (int j = i; j > 0 && a->load[j] < a->load[j - 1]; j--) {
      int t = a->load[j]; a->load[j] = a->load[j - 1]; a->load[j - 1] = t;
      t = a->cls[j]; a->cls[j] = a->cls[j - 1]; a->cls[j - 1] = t;
    }
  a->flat = K->p < 0;
  for (int l = 0; l < a->nload; l++)
    if (a->cls[l] != MTJ_LD_FULL && a->cls[l] != MTJ_LD_SCALAR) a->flat = false;
  return MT_OK;
}

/* ---- the walker's entry points for codegen_cuda.c (cg.h) ---- */
const char *mtj_cg_rtype(int dt) { return dt == MT_FLOAT16 || dt == MT_BFLOAT16 ? "float" : mtj_ctype(dt); }
void mtj_cg_emit(mtj_cg *c, int i, bool j) { emit(c, i, j); }
void mtj_cg_opnd(mtj_cg *c, int i, char *out, size_t n) { opnd(c, i, out, n); }
int mtj_cg_phase(mtj_cg *c, int i, int *memo) { return phase_of(c, i, memo); }
bool mtj_cg_is_row(mtj_cg *c, int i) { return is_row(c, i); }
bool mtj_cg_in_kernel(mtj_cg *c, int i) { return in_kernel(c, i); }
void mtj_cg_row_deps(mtj_cg *c, int i) { emit_row_deps(c, i); }
void mtj_cg_reset(void) { failed = false, failed_what[0] = 0; }
bool mtj_cg_failed(void) { return failed; }
void mtj_cg_fail(const char *what) {
  if (!failed) snprintf(failed_what, sizeof failed_what, "%s", what);
  failed = true;
}
