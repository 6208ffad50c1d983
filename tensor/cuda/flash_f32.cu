// flash_f32.cu -- float32 flash attention on the FP32 units (SIMT FMA, no
// tensor cores: full fp32 products, as the math path's cuBLAS matmuls).
// FlashAttention-2 structure: the forward keeps a tile of queries and its
// output in registers and streams key/value tiles through shared memory
// with an online softmax; the backward keeps a tile of keys' dK and dV in
// registers and streams query tiles, recomputing P from the saved
// log-sum-exp, with dQ added to a zeroed fp32 buffer by atomics.
// flash_f32.c (cuda) prepends:
//   HD      head dim (64 or 128; query and value alike)
//   BQ, BK  forward: queries per block, keys per tile (multiples of 16)
//   BKB, BQB backward: keys per block, queries per tile (multiples of 16)
//   CAUSAL  1: query i sees keys j <= i (top-left aligned)
//   MINB    blocks per SM the compiler must leave registers for (__launch_bounds__)
//   NBUF    backward query tile buffers (2: the next is fetched during this one)
// Blocks are 256 threads, a 16 x 16 grid: ty = tid / 16 picks rows (queries
// forward, keys backward), tx = tid % 16 columns; a thread's rows are
// ty + 16 a, its score columns tx + 16 c and its head-dim columns the float4s
// at 4 tx + 64 g. Shared rows are padded (stride HD + 4 floats) so the
// float4 reads of 16 different rows fall in distinct banks.
// Layouts: q (nb, L, HD), k and v (nkv, S, HD), out (nb, L, HD), lse (nb, L)
// natural log-sum-exp of each scaled, masked score row. Item b uses k/v item
// (b / hq) * (hq / group) + (b % hq) / group (GQA).

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f
#define F32_INF __int_as_float(0x7f800000)
#define QS (HD + 4) // row stride (floats) of the q, k, v, dO tiles
#define OG (HD / 64) // float4 groups of head-dim columns per thread

struct f32_params {
  const float *q, *k, *v;
  float *out, *lse;
  const float *dout;
  float *D, *dq, *dk, *dv;
  int L, S, hq, group, nb;
  float scale, scale_log2;
};

// v combined with the other 15 lanes of its 16-lane row group
#ifdef __HIP__
#define XOR16(v, m) __shfl_xor((v), (m), 16)
#else
#define XOR16(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 16)
#endif
__device__ __forceinline__ float max16(float v) {
#pragma unroll
  for (int m = 1; m < 16; m <<= 1) v = fmaxf(v, XOR16(v, m));
  return v;
}
__device__ __forceinline__ float sum16(float v) {
#pragma unroll
  for (int m = 1; m < 16; m <<= 1) v += XOR16(v, m);
  return v;
}

__device__ __forceinline__ float4 ld4(const float *p) { return *(const float4 *)p; }
__device__ __forceinline__ void fma4(float4 &acc, float s, float4 b) {
  acc.x = fmaf(s, b.x, acc.x), acc.y = fmaf(s, b.y, acc.y), acc.z = fmaf(s, b.z, acc.z), acc.w = fmaf(s, b.w, acc.w);
}
__device__ __forceinline__ float dot4(float acc, float4 a, float4 b) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}
__device__ __forceinline__ float comp(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// Copies into shared memory go through cp.async where there is one (sm_80
// on, not HIP): a tile's copy is issued, committed as a group, and waited
// for (cp_wait<N>: all but the newest N groups done) just before the
// barrier that publishes it; elsewhere they are plain loads and the waits
// no-ops, with the same barriers.
#if !defined(__HIP__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define ASYNC 1
#else
#define ASYNC 0
#endif
// 16 bytes global -> shared; zeros when !ok (src is then not read)
__device__ __forceinline__ void cp16(float *dst, const float *src, bool ok) {
#if ASYNC
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(a), "l"(src), "r"(ok ? 16 : 0) : "memory");
#else
  *(float4 *)dst = ok ? ld4(src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}
__device__ __forceinline__ void cp_commit() {
#if ASYNC
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void cp_wait() {
#if ASYNC
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// rows [r0, r0 + R) of a (n, HD) matrix into a padded tile; rows >= n zero
template <int R> __device__ __forceinline__ void load_rows(float *tile, const float *g, int r0, int n) {
  const int CPR = HD / 4;
#pragma unroll
  for (int it = 0; it < (R * CPR + 255) / 256; it++) {
    int i = it * 256 + (int)threadIdx.x, r = i / CPR, c = (i % CPR) * 4;
    bool ok = r0 + r < n;
    if (i < R * CPR) cp16(&tile[r * QS + c], ok ? g + (long long)(r0 + r) * HD + c : g, ok);
  }
}

// acc += v at p (16-byte aligned, global): one vector reduction on sm_90
__device__ __forceinline__ void red4(float *p, float4 v) {
#if !defined(__HIP__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
#else
  atomicAdd(p, v.x), atomicAdd(p + 1, v.y), atomicAdd(p + 2, v.z), atomicAdd(p + 3, v.w);
#endif
}

__device__ __forceinline__ long long kv_item(long long b, const f32_params &p) {
  int hk = p.hq / p.group;
  return (b / p.hq) * hk + (b % p.hq) / p.group;
}

#if PART == 0
// ---- forward: block (query tile of BQ, item b); grid (ceil(L / BQ), items) ----
#define RM (BQ / 16)   // query rows per thread
#define CN (BK / 16)   // key columns per thread
#define PS (BK + 16)   // row stride of the P tile (rows 16 apart land 16 banks apart)

extern "C" __global__ void __launch_bounds__(256, MINB) mt_flash32_fwd(f32_params p) {
  extern __shared__ float4 smem4[];
  float *sq = (float *)smem4, *sk = sq + BQ * QS, *sv = sk + BK * QS, *sp = sv + BK * QS;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const long long b = blockIdx.y + (long long)blockIdx.z * gridDim.y;
  if (b >= p.nb) return;
#if CAUSAL
  const int q0 = (gridDim.x - 1 - blockIdx.x) * BQ; // the longest rows first
  const int kend = min(p.S, q0 + BQ);
#else
  const int q0 = blockIdx.x * BQ, kend = p.S;
#endif
  const long long kvb = kv_item(b, p);
  const float *kg = p.k + kvb * p.S * HD, *vg = p.v + kvb * p.S * HD;
  // groups: (Q, K_0), V_0, then per tile t: K_{t+1} during its softmax and
  // P V, V_{t+1} during the next tile's scores
  load_rows<BQ>(sq, p.q + b * p.L * HD, q0, p.L);
  load_rows<BK>(sk, kg, 0, p.S);
  cp_commit();
  load_rows<BK>(sv, vg, 0, p.S);
  cp_commit();
  float m[RM], l[RM];
  float4 acc[RM][OG];
#pragma unroll
  for (int a = 0; a < RM; a++) {
    m[a] = -F32_INF, l[a] = 0.f;
#pragma unroll
    for (int g = 0; g < OG; g++) acc[a][g] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  for (int j0 = 0; j0 < kend; j0 += BK) {
    const bool more = j0 + BK < kend;
    cp_wait<1>(); // K_t
    __syncthreads();
    float s[RM][CN];
#pragma unroll
    for (int a = 0; a < RM; a++)
#pragma unroll
      for (int c = 0; c < CN; c++) s[a][c] = 0.f;
#pragma unroll 4
    for (int e = 0; e < HD; e += 4) {
      float4 qa[RM], kc[CN];
#pragma unroll
      for (int a = 0; a < RM; a++) qa[a] = ld4(&sq[(ty + 16 * a) * QS + e]);
#pragma unroll
      for (int c = 0; c < CN; c++) kc[c] = ld4(&sk[(tx + 16 * c) * QS + e]);
#pragma unroll
      for (int a = 0; a < RM; a++)
#pragma unroll
        for (int c = 0; c < CN; c++) s[a][c] = dot4(s[a][c], qa[a], kc[c]);
    }
    __syncthreads(); // K_t read by all: fetch K_{t+1}
    if (more) load_rows<BK>(sk, kg, j0 + BK, p.S), cp_commit();
    // keys past S and (causal) above the diagonal score -inf; only edge tiles test
    bool edge = j0 + BK > p.S;
#if CAUSAL
    edge = edge || j0 + BK - 1 > q0;
#endif
#pragma unroll
    for (int a = 0; a < RM; a++) {
      float mx = -F32_INF;
#pragma unroll
      for (int c = 0; c < CN; c++) {
        float x = s[a][c] * p.scale_log2;
        if (edge) {
          const int col = j0 + tx + 16 * c;
          bool out = col >= p.S;
#if CAUSAL
          out = out || col > q0 + ty + 16 * a;
#endif
          if (out) x = -F32_INF;
        }
        s[a][c] = x;
        mx = fmaxf(mx, x);
      }
      const float mn = fmaxf(m[a], max16(mx));
      const float mu = mn == -F32_INF ? 0.f : mn; // a row with no key yet: exp2(-inf - 0) = 0
      const float alpha = exp2f(m[a] - mu);
      m[a] = mn;
      l[a] *= alpha;
#pragma unroll
      for (int g = 0; g < OG; g++)
        acc[a][g].x *= alpha, acc[a][g].y *= alpha, acc[a][g].z *= alpha, acc[a][g].w *= alpha;
#pragma unroll
      for (int c = 0; c < CN; c++) {
        const float pv = exp2f(s[a][c] - mu);
        l[a] += pv;
        sp[(ty + 16 * a) * PS + tx + 16 * c] = pv;
      }
    }
    if (more)
      cp_wait<1>(); // V_t (K_{t+1} may still fly)
    else
      cp_wait<0>();
    __syncthreads();
    // O += P V
#pragma unroll 2
    for (int j = 0; j < BK; j += 4) {
      float4 pr[RM];
#pragma unroll
      for (int a = 0; a < RM; a++) pr[a] = ld4(&sp[(ty + 16 * a) * PS + j]);
#pragma unroll
      for (int jj = 0; jj < 4; jj++) {
#pragma unroll
        for (int g = 0; g < OG; g++) {
          const float4 vv = ld4(&sv[(j + jj) * QS + 4 * tx + 64 * g]);
#pragma unroll
          for (int a = 0; a < RM; a++) fma4(acc[a][g], comp(pr[a], jj), vv);
        }
      }
    }
    __syncthreads(); // V_t and P read by all: fetch V_{t+1}
    if (more) load_rows<BK>(sv, vg, j0 + BK, p.S), cp_commit();
  }
#pragma unroll
  for (int a = 0; a < RM; a++) {
    const int row = q0 + ty + 16 * a;
    const float lt = sum16(l[a]);
    if (row >= p.L) continue;
    const float inv = 1.f / lt;
    float *og = p.out + (b * p.L + row) * HD;
#pragma unroll
    for (int g = 0; g < OG; g++)
      *(float4 *)&og[4 * tx + 64 * g] =
          make_float4(acc[a][g].x * inv, acc[a][g].y * inv, acc[a][g].z * inv, acc[a][g].w * inv);
    if (tx == 0) p.lse[b * p.L + row] = (m[a] + log2f(lt)) * LN2;
  }
}
#endif

#if PART == 1
// ---- backward ----

// D[r] = sum_e dO[r, e] O[r, e] (16 lanes a row) and dq zeroed: before mt_flash32_bwd
extern "C" __global__ void mt_flash32_bwd_pre(f32_params p) {
  const long long rows = (long long)p.nb * p.L;
  const int sub = threadIdx.x & 15;
  for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 4; r < rows;
       r += ((long long)gridDim.x * blockDim.x) >> 4) {
    float d = 0.f;
#pragma unroll
    for (int g = 0; g < OG; g++) {
      const long long at = r * HD + 4 * sub + 64 * g;
      d = dot4(d, ld4(p.dout + at), ld4(p.out + at));
      *(float4 *)(p.dq + at) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    d = sum16(d);
    if (sub == 0) p.D[r] = d;
  }
}

#define RK (BKB / 16)  // key rows per thread
#define CQ (BQB / 16)  // query columns per thread (scores); query rows per thread (dQ)
#define PS2 (BQB + 16) // row stride of the P^T and dS^T tiles

// Query tile i0 of item b (q, dO, lse in log2 units, D) into shared memory;
// rows past L get lse +inf, so their P is 0.
__device__ __forceinline__ void fetch_q(const f32_params &p, long long b, int i0, float *sq, float *sdo, float *slse,
                                        float *sD) {
  load_rows<BQB>(sq, p.q + b * p.L * HD, i0, p.L);
  load_rows<BQB>(sdo, p.dout + b * p.L * HD, i0, p.L);
  for (int i = threadIdx.x; i < BQB; i += 256) {
    const bool in = i0 + i < p.L;
    slse[i] = in ? p.lse[b * p.L + i0 + i] * LOG2E : F32_INF;
    sD[i] = in ? p.D[b * p.L + i0 + i] : 0.f;
  }
}

// Block: keys [j0, j0 + BKB) of k/v item kvb = blockIdx.x, j0 = blockIdx.y * BKB;
// loops over the q heads of its GQA group and their query tiles of BQB
// (NBUF 2: the next tile is fetched while this one is computed). Per
// tile: S^T = K Q^T and dP^T = V dO^T (registers), P^T = exp2(S^T - lse),
// dS^T = P^T (dP^T - D) scale (shared), dV += P^T dO and dK += dS^T Q
// (registers), dQ += dS K (atomics into the zeroed dq).
extern "C" __global__ void __launch_bounds__(256, MINB) mt_flash32_bwd(f32_params p) {
  extern __shared__ float4 smem4[];
  float *sk = (float *)smem4, *sv = sk + BKB * QS, *sqb = sv + BKB * QS, *sdob = sqb + NBUF * BQB * QS;
  float *sp = sdob + NBUF * BQB * QS, *sds = sp + BKB * PS2, *slseb = sds + BKB * PS2, *sDb = slseb + NBUF * BQB;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const long long kvb = blockIdx.x;
  const int j0 = blockIdx.y * BKB;
  const int hk = p.hq / p.group;
  const long long outer = kvb / hk, h0 = (kvb % hk) * p.group;
  load_rows<BKB>(sk, p.k + kvb * p.S * HD, j0, p.S);
  load_rows<BKB>(sv, p.v + kvb * p.S * HD, j0, p.S);
  float4 dk[RK][OG], dv[RK][OG];
#pragma unroll
  for (int a = 0; a < RK; a++)
#pragma unroll
    for (int g = 0; g < OG; g++) dk[a][g] = dv[a][g] = make_float4(0.f, 0.f, 0.f, 0.f);
  int i_first = 0;
#if CAUSAL
  i_first = (j0 / BQB) * BQB; // tiles wholly above the diagonal see none of these keys
#endif
  const int nqt = i_first < p.L ? (p.L - i_first + BQB - 1) / BQB : 0, nit = nqt * p.group;
  if (NBUF == 2 && nit > 0) fetch_q(p, outer * p.hq + h0, i_first, sqb, sdob, slseb, sDb);
  cp_commit();
  for (int it = 0; it < nit; it++) {
    const long long b = outer * p.hq + h0 + it / nqt;
    const int i0 = i_first + (it % nqt) * BQB, buf = NBUF == 2 ? it & 1 : 0;
    float *sq = sqb + buf * BQB * QS, *sdo = sdob + buf * BQB * QS, *slse = slseb + buf * BQB, *sD = sDb + buf * BQB;
    __syncthreads(); // the previous tile's readers are done
    if (NBUF == 1) {
      fetch_q(p, b, i0, sq, sdo, slse, sD);
      cp_commit();
      cp_wait<0>();
    } else if (it + 1 < nit) {
      const int n = it + 1, nb = (n & 1) * BQB;
      fetch_q(p, outer * p.hq + h0 + n / nqt, i_first + (n % nqt) * BQB, sqb + nb * QS, sdob + nb * QS, slseb + nb,
              sDb + nb);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    float s[RK][CQ], dp[RK][CQ];
#pragma unroll
    for (int a = 0; a < RK; a++)
#pragma unroll
      for (int c = 0; c < CQ; c++) s[a][c] = dp[a][c] = 0.f;
#pragma unroll 2
    for (int e = 0; e < HD; e += 4) {
      float4 ka[RK], va[RK], qc[CQ], dc[CQ];
#pragma unroll
      for (int a = 0; a < RK; a++) ka[a] = ld4(&sk[(ty + 16 * a) * QS + e]), va[a] = ld4(&sv[(ty + 16 * a) * QS + e]);
#pragma unroll
      for (int c = 0; c < CQ; c++) qc[c] = ld4(&sq[(tx + 16 * c) * QS + e]), dc[c] = ld4(&sdo[(tx + 16 * c) * QS + e]);
#pragma unroll
      for (int a = 0; a < RK; a++)
#pragma unroll
        for (int c = 0; c < CQ; c++) s[a][c] = dot4(s[a][c], ka[a], qc[c]), dp[a][c] = dot4(dp[a][c], va[a], dc[c]);
    }
    bool edge = j0 + BKB > p.S;
#if CAUSAL
    edge = edge || j0 + BKB - 1 > i0;
#endif
#pragma unroll
    for (int a = 0; a < RK; a++) {
      const int j = j0 + ty + 16 * a;
#pragma unroll
      for (int c = 0; c < CQ; c++) {
        const int ic = tx + 16 * c;
        float pv = exp2f(s[a][c] * p.scale_log2 - slse[ic]);
        if (edge) {
          bool out = j >= p.S;
#if CAUSAL
          out = out || j > i0 + ic;
#endif
          if (out) pv = 0.f;
        }
        sp[(ty + 16 * a) * PS2 + ic] = pv;
        sds[(ty + 16 * a) * PS2 + ic] = pv * (dp[a][c] - sD[ic]) * p.scale;
      }
    }
    __syncthreads();
    // dV += P^T dO, dK += dS^T Q
#pragma unroll 2
    for (int i = 0; i < BQB; i += 4) {
      float4 pr[RK], dr[RK];
#pragma unroll
      for (int a = 0; a < RK; a++) pr[a] = ld4(&sp[(ty + 16 * a) * PS2 + i]), dr[a] = ld4(&sds[(ty + 16 * a) * PS2 + i]);
#pragma unroll
      for (int ii = 0; ii < 4; ii++) {
#pragma unroll
        for (int g = 0; g < OG; g++) {
          const float4 d4 = ld4(&sdo[(i + ii) * QS + 4 * tx + 64 * g]), q4 = ld4(&sq[(i + ii) * QS + 4 * tx + 64 * g]);
#pragma unroll
          for (int a = 0; a < RK; a++) fma4(dv[a][g], comp(pr[a], ii), d4), fma4(dk[a][g], comp(dr[a], ii), q4);
        }
      }
    }
    // dQ rows i0 + CQ ty + r: sum over this block's keys of dS K
    float4 dq[CQ][OG];
#pragma unroll
    for (int r = 0; r < CQ; r++)
#pragma unroll
      for (int g = 0; g < OG; g++) dq[r][g] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
    for (int j = 0; j < BKB; j++) {
      float dsr[CQ];
#if CQ % 4 == 0
#pragma unroll
      for (int r = 0; r < CQ; r += 4) {
        const float4 t = ld4(&sds[j * PS2 + CQ * ty + r]);
        dsr[r] = t.x, dsr[r + 1] = t.y, dsr[r + 2] = t.z, dsr[r + 3] = t.w;
      }
#else
#pragma unroll
      for (int r = 0; r < CQ; r++) dsr[r] = sds[j * PS2 + CQ * ty + r];
#endif
#pragma unroll
      for (int g = 0; g < OG; g++) {
        const float4 k4 = ld4(&sk[j * QS + 4 * tx + 64 * g]);
#pragma unroll
        for (int r = 0; r < CQ; r++) fma4(dq[r][g], dsr[r], k4);
      }
    }
#pragma unroll
    for (int r = 0; r < CQ; r++) {
      const int row = i0 + CQ * ty + r;
      if (row < p.L)
#pragma unroll
        for (int g = 0; g < OG; g++) red4(p.dq + (b * p.L + row) * HD + 4 * tx + 64 * g, dq[r][g]);
    }
  }
  cp_wait<0>();
#pragma unroll
  for (int a = 0; a < RK; a++) {
    const int j = j0 + ty + 16 * a;
    if (j >= p.S) continue;
#pragma unroll
    for (int g = 0; g < OG; g++) {
      *(float4 *)&p.dk[(kvb * p.S + j) * HD + 4 * tx + 64 * g] = dk[a][g];
      *(float4 *)&p.dv[(kvb * p.S + j) * HD + 4 * tx + 64 * g] = dv[a][g];
    }
  }
}
#endif
