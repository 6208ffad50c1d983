// layernorm.cu -- layer norm over rows of L contiguous elements, forward
// and backward, at memory speed: a group of TPR threads (32 * 2^k) owns a
// row and holds it in registers (thread t: chunks k * TPR + t, k < NC, of
// VW elements each), so x and dy are read once and statistics are exact
// two-pass sums in float32. layernorm.c (cuda) prepends:
//   TX      storage type of x, y, dy, dx (float, mt_half, mt_bf16)
//   LD(v)   TX -> float;  ST(f) float -> TX
//   TW      storage type of weight and bias (float or TX); LW(v) -> float
//   TP      storage type of the weight and bias gradients; SP(f) float -> TP
//   VW      elements per vector access (up to 16 bytes; layernorm.c picks
//           the width that L and the pointers' alignment allow)
//   NC      chunks per thread (so NC * VW * TPR >= L)
//   TPR     threads per row: 32 (blocks of 8 rows, 256 threads) or more
//           (a block is one group, one row at a time)
// Weight and bias may be null (1 and 0); mean and rstd are float32, one
// per row. Every thread of a
// block runs the same number of row iterations (rows past R read nothing
// and write nothing), so warps shuffle and blocks synchronise freely.

#define RPB (TPR == 32 ? 8 : 1) // rows per block
#define NT (TPR * RPB)           // threads per block
// blocks of the backward pass that stay on a multiprocessor at once: 768
// threads (512 when a thread holds more than 12 elements: registers)
#define MINB ((NC * VW > 12 ? 512 : 768) / NT > 0 ? (NC * VW > 12 ? 512 : 768) / NT : 1)

struct alignas(VW * sizeof(TX)) ln_vx {
  TX v[VW];
};
struct alignas(VW * sizeof(TW)) ln_vw {
  TW v[VW];
};
struct ln_vf {
  float v[VW];
};

#ifdef __HIP__
__device__ __forceinline__ float ln_xor(float v, int o) { return __shfl_xor(v, o, 32); }
#else
__device__ __forceinline__ float ln_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
#endif

// Sums a and b over the TPR threads of a row group; every thread gets them.
// TPR > 32 only with one group per block (the block's warps meet in shared
// memory).
__device__ __forceinline__ void ln_row_sum2(float &a, float &b) {
  for (int o = 16; o > 0; o >>= 1) a += ln_xor(a, o), b += ln_xor(b, o);
  if (TPR == 32) return;
  __shared__ float sh[2][32];
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads(); // the previous call's readers are done
  if (lane == 0) sh[0][w] = a, sh[1][w] = b;
  __syncthreads();
  a = lane < TPR / 32 ? sh[0][lane] : 0.f;
  b = lane < TPR / 32 ? sh[1][lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) a += ln_xor(a, o), b += ln_xor(b, o);
}

// Loads chunk k (elements e .. e + VW - 1) of a row into v[k * VW ..], or zeros.
__device__ __forceinline__ void ln_load(const TX *row, bool ok, int e, float *v) {
  if (ok) {
    ln_vx c = *(const ln_vx *)(row + e);
#pragma unroll
    for (int j = 0; j < VW; j++) v[j] = LD(c.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < VW; j++) v[j] = 0.f;
  }
}

// Elements e .. e + VW - 1 of a weight or bias (null: dflt).
__device__ __forceinline__ ln_vf ln_param(const TW *p, int e, float dflt) {
  ln_vf r;
  if (p) {
    ln_vw c = *(const ln_vw *)(p + e);
#pragma unroll
    for (int j = 0; j < VW; j++) r.v[j] = LW(c.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < VW; j++) r.v[j] = dflt;
  }
  return r;
}

// y = (x - mean) * rstd * w + b per row; mean[r], rstd[r] saved.
extern "C" __global__ void __launch_bounds__(NT) mt_ln_fwd(const TX *x, const TW *w, const TW *b, long long R,
                                                            int L, float eps, float *mean, float *rstd, TX *y) {
  int t = threadIdx.x % TPR;
  float inv = 1.f / (float)L;
  for (long long r0 = (long long)blockIdx.x * RPB; r0 < R; r0 += (long long)gridDim.x * RPB) {
    long long r = r0 + threadIdx.x / TPR;
    bool ok = r < R;
    const TX *xr = x + (ok ? r : 0) * L;
    float v[NC * VW];
    float s = 0.f, q = 0.f;
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
      ln_load(xr, ok && e < L, e, v + k * VW);
#pragma unroll
      for (int j = 0; j < VW; j++) s += v[k * VW + j];
    }
    ln_row_sum2(s, q);
    float m = s * inv;
    q = 0.f;
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
#pragma unroll
      for (int j = 0; j < VW; j++) {
        float d = e < L ? v[k * VW + j] - m : 0.f;
        q += d * d;
      }
    }
    float unused = 0.f;
    ln_row_sum2(q, unused);
    float rs = 1.f / sqrtf(q * inv + eps);
    if (!ok) continue; // uniform per warp only past this point: no more sums
    if (t == 0) mean[r] = m, rstd[r] = rs;
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
      if (e >= L) continue;
      ln_vf wv = ln_param(w, e, 1.f), bv = ln_param(b, e, 0.f);
      ln_vx o;
#pragma unroll
      for (int j = 0; j < VW; j++) o.v[j] = ST((v[k * VW + j] - m) * rs * wv.v[j] + bv.v[j]);
      *(ln_vx *)(y + r * L + e) = o;
    }
  }
}

// Per row, with xh = (x - mean) * rstd and g = dy * w:
//   dx = rstd * (g - mean(g) - xh * mean(g * xh))       (dx not null)
// and per block, summed over the rows it visited, into part (not null):
//   part[2 * blockIdx.x][e] = sum dy * xh, part[2 * blockIdx.x + 1][e] = sum dy
// (mt_ln_param adds the blocks' rows up).
extern "C" __global__ void __launch_bounds__(NT, MINB)
    mt_ln_bwd(const TX *dy, const TX *x, const TW *w, const float *mean, const float *rstd, long long R, int L,
              TX *dx, float *part) {
  int t = threadIdx.x % TPR, ry = threadIdx.x / TPR;
  float inv = 1.f / (float)L;
  float aw[NC * VW], ab[NC * VW];
#pragma unroll
  for (int i = 0; i < NC * VW; i++) aw[i] = 0.f, ab[i] = 0.f;
  for (long long r0 = (long long)blockIdx.x * RPB; r0 < R; r0 += (long long)gridDim.x * RPB) {
    long long r = r0 + ry;
    bool ok = r < R;
    const TX *xr = x + (ok ? r : 0) * L, *gr = dy + (ok ? r : 0) * L;
    float m = ok ? mean[r] : 0.f, rs = ok ? rstd[r] : 0.f;
    float xv[NC * VW], gv[NC * VW];
    float sa = 0.f, sb = 0.f;
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
      bool in = ok && e < L;
      ln_load(xr, in, e, xv + k * VW);
      ln_load(gr, in, e, gv + k * VW);
      ln_vf wv = ln_param(in ? w : 0, e, 1.f);
#pragma unroll
      for (int j = 0; j < VW; j++) {
        int i = k * VW + j;
        float xh = (xv[i] - m) * rs, g = gv[i] * wv.v[j]; // rows/columns out of range: gv = 0
        xv[i] = xh;
        sa += g, sb += g * xh;
        aw[i] += gv[i] * xh, ab[i] += gv[i];
      }
    }
    ln_row_sum2(sa, sb);
    if (!ok || !dx) continue;
    sa *= inv, sb *= inv;
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
      if (e >= L) continue;
      ln_vf wv = ln_param(w, e, 1.f);
      ln_vx o;
#pragma unroll
      for (int j = 0; j < VW; j++) {
        int i = k * VW + j;
        o.v[j] = ST(rs * (gv[i] * wv.v[j] - sa - xv[i] * sb));
      }
      *(ln_vx *)(dx + r * L + e) = o;
    }
  }
  if (!part) return;
  float *pw = part + (long long)blockIdx.x * 2 * L, *pb = pw + L;
#if TPR > 32 // one group: its sums are the block's
#pragma unroll
  for (int k = 0; k < NC; k++) {
    int e = (k * TPR + t) * VW;
    if (e >= L) continue;
#pragma unroll
    for (int j = 0; j < VW; j++) pw[e + j] = aw[k * VW + j], pb[e + j] = ab[k * VW + j];
  }
#else // the block's rows meet in shared memory (L <= 32 * NC * VW)
  __shared__ float red[RPB * 32 * NC * VW];
  for (int pass = 0; pass < 2; pass++) {
    __syncthreads();
#pragma unroll
    for (int k = 0; k < NC; k++) {
      int e = (k * TPR + t) * VW;
#pragma unroll
      for (int j = 0; j < VW; j++)
        if (e < L) red[ry * L + e + j] = pass ? ab[k * VW + j] : aw[k * VW + j];
    }
    __syncthreads();
    float *out = pass ? pb : pw;
    for (int e = threadIdx.x; e < L; e += NT) {
      float s = 0.f;
      for (int q = 0; q < RPB; q++) s += red[q * L + e];
      out[e] = s;
    }
  }
#endif
}

// dw[e] = sum over np blocks of part[2p][e], db[e] = sum of part[2p + 1][e]
// (null: not wanted). Blocks of 256 threads: 32 columns by 8 slices of the
// blocks, in a fixed order.
extern "C" __global__ void mt_ln_param(const float *part, int np, int L, TP *dw, TP *db) {
  __shared__ float sh[8][33];
  int ncb = (L + 31) / 32, lane = threadIdx.x & 31, sl = threadIdx.x >> 5;
  for (int blk = blockIdx.x; blk < 2 * ncb; blk += gridDim.x) {
    int which = blk / ncb, e = (blk % ncb) * 32 + lane;
    TP *out = which ? db : dw;
    if (!out) continue;
    float s = 0.f;
    if (e < L)
      for (int p = sl; p < np; p += 8) s += part[((long long)p * 2 + which) * L + e];
    sh[sl][lane] = s;
    __syncthreads();
    if (sl == 0 && e < L) {
      float a = 0.f;
      for (int i = 0; i < 8; i++) a += sh[i][lane];
      out[e] = SP(a);
    }
    __syncthreads();
  }
}
