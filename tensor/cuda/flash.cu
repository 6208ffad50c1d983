// flash.cu -- flash attention on tensor cores (FlashAttention-2 structure):
// mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate) through inline PTX,
// ldmatrix from XOR-swizzled shared tiles, cp.async double buffering.
// flash.c (cuda) prepends:
//   TX      storage type (mt_bf16 or mt_half); BF16 1 for bfloat16
//   HD      head dim (64, 128, 256; query and value alike)
//   NW      warps per block (each owns 16 rows: queries forward, keys backward)
//   BK      keys per tile (forward); BQ queries per tile (backward)
//   CAUSAL  1: query i sees keys j <= i (top-left aligned)
//   MASK    0 none, 1 bool (nonzero = attend), 2 additive (TX, added to the scaled scores)
//   DROPOUT 1: keep element (b, i, j) when Philox word (b*L + i)*S + j of the
//           reserved stream is < thr (mt_bernoulli_'s rule), kept values scaled
//           by 1 / (1 - p): the same mask the math backend draws from the
//           same generator state.
// Layouts: q (nb, L, HD), k and v (nkv, S, HD), out (nb, L, HD), lse (nb, L)
// float32 natural log-sum-exp of each scaled, masked score row. Item b uses
// k/v item (b / hq) * (hq / group) + (b % hq) / group (GQA).

#ifdef __HIP__
// AMD GPUs have none of mma.sync, ldmatrix, cp.async: flash.c refuses them
extern "C" __global__ void mt_flash_unavailable() {}
#else

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f
#define NEG_INF (-__int_as_float(0x7f800000))

// ---- PTX helpers ----
__device__ __forceinline__ unsigned sptr(const void *p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
// 16 bytes global -> shared, zero-filled when !ok
__device__ __forceinline__ void cp16(unsigned dst, const void *src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }
__device__ __forceinline__ void ldsm4(unsigned a, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(a));
}
__device__ __forceinline__ void ldsm4t(unsigned a, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(a));
}
// c += a (16x16, row) * b (16x8, col)
__device__ __forceinline__ void mma(float *c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                    unsigned b1) {
#if BF16
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}
// 2^x (approximate, as exp2f under fast math): 2^-inf = 0, NaN stays NaN
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// two floats as a packed pair of TX (lo in the low half)
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
#if BF16
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
}
__device__ __forceinline__ float ldx(TX x) {
#if BF16
  return b2f(x);
#else
  return h2f(x);
#endif
}
__device__ __forceinline__ TX stx(float v) {
#if BF16
  return f2b(v);
#else
  return f2h(v);
#endif
}

// Element (r, c) of a swizzled tile of rows of W halves (W >= 64): the
// 16-byte chunk index is xored with r & 7, so ldmatrix's 8 rows hit 8
// different bank groups.
template <int W> __device__ __forceinline__ int swz(int r, int c) {
  return r * W + ((((c >> 3) ^ (r & 7))) << 3) + (c & 7);
}

// rows [r0, r0 + R) of a (n, HD) matrix into a swizzled tile; rows >= n zero
template <int R, int NT>
__device__ __forceinline__ void load_tile(TX *tile, const TX *g, int r0, int n, int tid) {
  const int CPR = HD / 8;
  unsigned base = sptr(tile);
  static_assert(R * CPR % NT == 0, "tile chunks must divide among the threads");
#pragma unroll
  for (int it = 0; it < R * CPR / NT; it++) {
    int i = it * NT + tid, r = i / CPR, c = (i % CPR) * 8;
    bool ok = r0 + r < n;
    cp16(base + 2 * swz<HD>(r, c), ok ? (const void *)(g + (long long)(r0 + r) * HD + c) : (const void *)g, ok);
  }
}

#if DROPOUT
#define PH_M0 0xD2511F53u
#define PH_M1 0xCD9E8D57u
#define PH_W0 0x9E3779B9u
#define PH_W1 0xBB67AE85u
// word j of Philox4x32-10 block c (as random.cu)
__device__ __forceinline__ unsigned philox_word(unsigned long long c, unsigned k0, unsigned k1, int j) {
  unsigned c0 = (unsigned)c, c1 = (unsigned)(c >> 32), c2 = 0, c3 = 0;
#pragma unroll
  for (int r = 0; r < 10; r++) {
    unsigned hi0 = __umulhi(PH_M0, c0), lo0 = PH_M0 * c0;
    unsigned hi1 = __umulhi(PH_M1, c2), lo1 = PH_M1 * c2;
    unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += PH_W0;
    k1 += PH_W1;
  }
  return j == 0 ? c0 : j == 1 ? c1 : j == 2 ? c2 : c3;
}
// keep element number e of the draw?
__device__ __forceinline__ bool keep_at(unsigned long long e, unsigned long long base, unsigned k0, unsigned k1,
                                        unsigned long long thr) {
  return (unsigned long long)philox_word(base + (e >> 2), k0, k1, (int)(e & 3)) < thr;
}
#endif

struct flash_params {
  const TX *q, *k, *v;
  const void *mask;       // MASK: bool bytes or TX
  const long long *moff;  // per item b: the mask's offset (elements)
  long long mrs, mcs;     // the mask's row and column strides
  TX *out;                // forward output / backward: unused
  float *lse;             // (nb, L)
  const TX *dout;         // backward
  const float *D;         // backward: rowsum(dout * out)
  float *dq;              // backward: fp32 accumulator (nb, L, HD), unscaled
  TX *dk, *dv;            // backward outputs (nkv, S, HD)
  int L, S, hq, group, nb;
  float scale_log2;       // scale * log2(e)
  unsigned k0, k1;        // dropout: Philox key
  unsigned long long base, thr;
  float drop_scale;       // 1 / (1 - p)
};

__device__ __forceinline__ long long kv_item(const flash_params &p, int b) {
  return (long long)(b / p.hq) * (p.hq / p.group) + (b % p.hq) / p.group;
}

// The scaled score in log2 units of (query i, key j) given the raw dot
// product x; -inf where masked or out of range.
__device__ __forceinline__ float score(const flash_params &p, int b, int i, int j, float x) {
  if (j >= p.S || i >= p.L) return NEG_INF;
#if CAUSAL
  if (j > i) return NEG_INF;
#endif
  float s = x * p.scale_log2;
#if MASK == 1
  if (!((const unsigned char *)p.mask)[p.moff[b] + i * p.mrs + j * p.mcs]) return NEG_INF;
#elif MASK == 2
  s += ldx(((const TX *)p.mask)[p.moff[b] + i * p.mrs + j * p.mcs]) * LOG2E;
#endif
  return s;
}

#if defined(WG) && WG
// ================= forward on Hopper's wgmma (sm_90a) =================
// flash.c marks the member so that nvrtc.c compiles it for sm_90a.
// Same algorithm and register layout as mt_flash_fwd (a wgmma accumulator
// of m64nN holds, per warp of the warpgroup, exactly the mma.sync C
// fragments of its 16 rows), but the products are issued by warpgroups
// (4 warps, 64 query rows each) reading Q, K and V straight from shared
// memory: S = Q K^T as m64n{BK}k16 (both operands K-major), O += P V as
// m64n{HD}k16 with P from registers and V MN-major. Tiles use the 128-byte
// swizzle of wgmma: column blocks of 64 elements, each rows x 128 bytes,
// 16-byte chunk c of row r at chunk c ^ (r & 7).
#if BF16
#define WG_T "bf16"
#else
#define WG_T "f16"
#endif
// d (64 x N per warpgroup, in mma.sync's C fragment layout) += A * B: _ss_ both from shared memory
// (tA, tB: 1 = MN-major), _rs_ A from registers (mma.sync's A fragments) and B MN-major
__device__ __forceinline__ void wg_ss_n64_t00(float (*d)[4], unsigned long long da, unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_T "." WG_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0; }"
               : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
               : "l"(da), "l"(db));
}
__device__ __forceinline__ void wg_ss_n64_t11(float (*d)[4], unsigned long long da, unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_T "." WG_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 1; }"
               : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
               : "l"(da), "l"(db));
}
__device__ __forceinline__ void wg_ss_n32_t11(float (*d)[4], unsigned long long da, unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n32k16.f32." WG_T "." WG_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 1, 1; }"
               : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
               : "l"(da), "l"(db));
}
__device__ __forceinline__ void wg_rs_n64(float (*d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                          unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_T "." WG_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1; }"
               : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
}
__device__ __forceinline__ void wg_rs_n128(float (*d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                          unsigned long long db) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_T "." WG_T " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1; }"
               : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db));
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// After wg_wait0: the compiler must not read an accumulator before the wait
// (the wgmma writes it asynchronously); an empty asm that "rewrites" each
// register after the wait orders them.
template <int N> __device__ __forceinline__ void acc_fence(float (*d)[4]) {
#pragma unroll
  for (int i = 0; i < N; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) asm volatile("" : "+f"(d[i][e])::"memory");
}
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// element (r, c) of a tile of R rows in the 128-byte swizzle layout
template <int R> __device__ __forceinline__ int swzb(int r, int c) {
  return (c >> 6) * R * 64 + r * 64 + ((((c >> 3) & 7) ^ (r & 7)) << 3) + (c & 7);
}

template <int R, int NT>
__device__ __forceinline__ void load_tile_b(TX *tile, const TX *g, int r0, int n, int tid) {
  const int CPR = HD / 8;
  static_assert(R * CPR % NT == 0, "tile chunks must divide among the threads");
  unsigned base = sptr(tile);
#pragma unroll
  for (int it = 0; it < R * CPR / NT; it++) {
    int i = it * NT + tid, r = i / CPR, c = (i % CPR) * 8;
    bool ok = r0 + r < n;
    cp16(base + 2 * swzb<R>(r, c), ok ? (const void *)(g + (long long)(r0 + r) * HD + c) : (const void *)g, ok);
  }
}

// shared memory descriptor: 128-byte swizzle, leading / stride byte offsets
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr >> 4) & 0x3FFF) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// MN-major operand (B = V, dO, Q; A = dS^T): lbo = the stride between
// 64-element column blocks along MN, sbo = between 8-row groups along K
// (MNSWAP=1 exchanges the two fields: a tuning knob kept for checking).
__device__ __forceinline__ unsigned long long wg_desc_mn(unsigned addr, unsigned lbo, unsigned sbo) {
#if defined(MNSWAP) && MNSWAP
  return wg_desc(addr, sbo, lbo);
#else
  return wg_desc(addr, lbo, sbo);
#endif
}
#endif // WG helpers

#if !defined(PART) || PART == 0 // flash.c compiles each direction on its own
// ================= forward =================
// Block: NW warps of FM row tiles (16 queries each): BQF queries of item b;
// keys stream in tiles of BK through two shared stages. Grid (query tiles,
// items, items / 65535): a head's query tiles run side by side (its K, V
// stay in L2), the longest causal ones first.
#ifndef FM
#define FM 1
#endif
#define BQF (16 * NW * FM)

extern "C" __global__ void __launch_bounds__(NW * 32) mt_flash_fwd(flash_params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  TX *sq = (TX *)smem, *sk = sq + BQF * HD, *sv = sk + 2 * BK * HD;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tg = lane & 3;
  const int b = blockIdx.z * gridDim.y + blockIdx.y, qt = gridDim.x - 1 - blockIdx.x, q0 = qt * BQF;
  if (b >= p.nb) return;
  const long long kvb = kv_item(p, b);
  const TX *qg = p.q + (long long)b * p.L * HD, *kg = p.k + kvb * p.S * HD, *vg = p.v + kvb * p.S * HD;
  int kend = p.S;
#if CAUSAL
  kend = min(p.S, q0 + BQF);
#endif
  const int nkt = (kend + BK - 1) / BK;
  load_tile<BQF, NW * 32>(sq, qg, q0, p.L, tid);
  load_tile<BK, NW * 32>(sk, kg, 0, p.S, tid);
  load_tile<BK, NW * 32>(sv, vg, 0, p.S, tid);
  cp_commit();

  float o[FM][HD / 8][4];
  float m[FM][2], l[FM][2];
#pragma unroll
  for (int f = 0; f < FM; f++) {
#pragma unroll
    for (int i = 0; i < HD / 8; i++) o[f][i][0] = o[f][i][1] = o[f][i][2] = o[f][i][3] = 0.f;
    m[f][0] = m[f][1] = NEG_INF;
    l[f][0] = l[f][1] = 0.f;
  }
  const int wrow = warp * 16 * FM;  // this warp's first row in the tile
  const int row0 = q0 + wrow + g;   // rows row0 + 16 f + 8 h
  const unsigned sq_a = sptr(sq);

  for (int t = 0; t < nkt; t++) {
    const int st = t & 1, k0 = t * BK;
    if (t + 1 < nkt) {
      load_tile<BK, NW * 32>(sk + (st ^ 1) * BK * HD, kg, k0 + BK, p.S, tid);
      load_tile<BK, NW * 32>(sv + (st ^ 1) * BK * HD, vg, k0 + BK, p.S, tid);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    const unsigned sk_a = sptr(sk + st * BK * HD), sv_a = sptr(sv + st * BK * HD);
    // S = Q K^T for this warp's rows
    float s[FM][BK / 8][4];
#pragma unroll
    for (int f = 0; f < FM; f++)
#pragma unroll
      for (int i = 0; i < BK / 8; i++) s[f][i][0] = s[f][i][1] = s[f][i][2] = s[f][i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
      unsigned a[FM][4];
#pragma unroll
      for (int f = 0; f < FM; f++)
        ldsm4(sq_a + 2 * swz<HD>(wrow + f * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8), a[f][0], a[f][1], a[f][2],
              a[f][3]);
#pragma unroll
      for (int np = 0; np < BK / 16; np++) {
        unsigned b0, b1, b2, b3;
        ldsm4(sk_a + 2 * swz<HD>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 16 + ((lane >> 3) & 1) * 8), b0, b1,
              b2, b3);
#pragma unroll
        for (int f = 0; f < FM; f++) {
          mma(s[f][2 * np], a[f][0], a[f][1], a[f][2], a[f][3], b0, b1);
          mma(s[f][2 * np + 1], a[f][0], a[f][1], a[f][2], a[f][3], b2, b3);
        }
      }
    }
    // scale, mask, online softmax
    bool edge = k0 + BK > p.S || MASK != 0;
#if CAUSAL
    edge = edge || k0 + BK - 1 > q0 + wrow;
#endif
#pragma unroll
    for (int f = 0; f < FM; f++) {
      float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
      for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          int i = row0 + f * 16 + (e >> 1) * 8, j = k0 + nt * 8 + 2 * tg + (e & 1);
          float v = edge ? score(p, b, i, j, s[f][nt][e]) : s[f][nt][e] * p.scale_log2;
          s[f][nt][e] = v;
          mx[e >> 1] = fmaxf(mx[e >> 1], v);
        }
      float alpha[2], mu[2];
#pragma unroll
      for (int h = 0; h < 2; h++) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        float mn = fmaxf(m[f][h], mx[h]);
        mu[h] = mn == NEG_INF ? 0.f : mn;
        alpha[h] = ex2(m[f][h] - mu[h]);
        m[f][h] = mn;
        l[f][h] *= alpha[h];
      }
#pragma unroll
      for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          float pe = ex2(s[f][nt][e] - mu[e >> 1]);
          l[f][e >> 1] += pe;
#if DROPOUT
          int i = row0 + f * 16 + (e >> 1) * 8, j = k0 + nt * 8 + 2 * tg + (e & 1);
          if (i < p.L && j < p.S &&
              !keep_at(((unsigned long long)b * p.L + i) * p.S + j, p.base, p.k0, p.k1, p.thr))
            pe = 0.f;
#endif
          s[f][nt][e] = pe;
        }
#pragma unroll
      for (int i = 0; i < HD / 8; i++) {
        o[f][i][0] *= alpha[0], o[f][i][1] *= alpha[0];
        o[f][i][2] *= alpha[1], o[f][i][3] *= alpha[1];
      }
    }
    // O += P V
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
      unsigned a[FM][4];
#pragma unroll
      for (int f = 0; f < FM; f++) {
        a[f][0] = pack2(s[f][2 * kk][0], s[f][2 * kk][1]), a[f][1] = pack2(s[f][2 * kk][2], s[f][2 * kk][3]);
        a[f][2] = pack2(s[f][2 * kk + 1][0], s[f][2 * kk + 1][1]);
        a[f][3] = pack2(s[f][2 * kk + 1][2], s[f][2 * kk + 1][3]);
      }
#pragma unroll
      for (int np = 0; np < HD / 16; np++) {
        unsigned b0, b1, b2, b3;
        ldsm4t(sv_a + 2 * swz<HD>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, np * 16 + (lane >> 4) * 8), b0, b1,
               b2, b3);
#pragma unroll
        for (int f = 0; f < FM; f++) {
          mma(o[f][2 * np], a[f][0], a[f][1], a[f][2], a[f][3], b0, b1);
          mma(o[f][2 * np + 1], a[f][0], a[f][1], a[f][2], a[f][3], b2, b3);
        }
      }
    }
    __syncthreads(); // the stage is refilled next iteration
  }
  // epilogue: row sums over the quad, normalize, store
  TX *og = p.out + (long long)b * p.L * HD;
#pragma unroll
  for (int f = 0; f < FM; f++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float lt = l[f][h];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      int i = row0 + f * 16 + h * 8;
      if (i >= p.L) continue;
      float inv = 1.f / lt; // lt == 0 (every key masked): 0 * inf = NaN, as the math path
#if DROPOUT
      float sc = inv * p.drop_scale;
#else
      float sc = inv;
#endif
      unsigned *orow = (unsigned *)(og + (long long)i * HD);
#pragma unroll
      for (int nt = 0; nt < HD / 8; nt++) orow[nt * 4 + tg] = pack2(o[f][nt][2 * h] * sc, o[f][nt][2 * h + 1] * sc);
      if (tg == 0) p.lse[(long long)b * p.L + i] = m[f][h] * LN2 + logf(lt);
    }
}


#if defined(WG) && WG
#define BQW (16 * NW)

extern "C" __global__ void __launch_bounds__(NW * 32) mt_flash_fwd_wg(flash_params p) {
  extern __shared__ __align__(1024) unsigned char smem_wg[];
  TX *sq = (TX *)smem_wg, *sk = sq + BQW * HD, *sv = sk + 2 * BK * HD;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tg = lane & 3;
  const int b = blockIdx.z * gridDim.y + blockIdx.y, qt = gridDim.x - 1 - blockIdx.x, q0 = qt * BQW;
  if (b >= p.nb) return;
  const long long kvb = kv_item(p, b);
  const TX *qg = p.q + (long long)b * p.L * HD, *kg = p.k + kvb * p.S * HD, *vg = p.v + kvb * p.S * HD;
  int kend = p.S;
#if CAUSAL
  kend = min(p.S, q0 + BQW);
#endif
  const int nkt = (kend + BK - 1) / BK;
  load_tile_b<BQW, NW * 32>(sq, qg, q0, p.L, tid);
  load_tile_b<BK, NW * 32>(sk, kg, 0, p.S, tid);
  load_tile_b<BK, NW * 32>(sv, vg, 0, p.S, tid);
  cp_commit();

  float o[HD / 8][4];
#pragma unroll
  for (int i = 0; i < HD / 8; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.f, 0.f};
  const int wgr = (warp >> 2) * 64;        // this warpgroup's first row
  const int row0 = q0 + warp * 16 + g;     // this thread's rows: row0, row0 + 8
  const unsigned sq_a = sptr(sq) + wgr * 128;

  for (int t = 0; t < nkt; t++) {
    const int st = t & 1, k0 = t * BK;
    if (t + 1 < nkt) {
      load_tile_b<BK, NW * 32>(sk + (st ^ 1) * BK * HD, kg, k0 + BK, p.S, tid);
      load_tile_b<BK, NW * 32>(sv + (st ^ 1) * BK * HD, vg, k0 + BK, p.S, tid);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    proxy_fence(); // cp.async wrote the tiles through the generic proxy; wgmma reads through the async one
    __syncthreads();
    const unsigned sk_a = sptr(sk + st * BK * HD), sv_a = sptr(sv + st * BK * HD);
    float s[BK / 8][4];
#pragma unroll
    for (int i = 0; i < BK / 8; i++) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
      unsigned off = (kk & 3) * 32; // k16 steps inside a 128-byte swizzle row
      unsigned long long da = wg_desc(sq_a + (kk >> 2) * BQW * 128 + off, 16, 1024);
      unsigned long long db = wg_desc(sk_a + (kk >> 2) * BK * 128 + off, 16, 1024);
      wg_ss_n64_t00(s, da, db);
    }
    wg_commit();
    wg_wait0();
    acc_fence<BK / 8>(s);
    bool edge = k0 + BK > p.S || MASK != 0;
#if CAUSAL
    edge = edge || k0 + BK - 1 > q0 + warp * 16;
#endif
    float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
    for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int i = row0 + (e >> 1) * 8, j = k0 + nt * 8 + 2 * tg + (e & 1);
        float v = edge ? score(p, b, i, j, s[nt][e]) : s[nt][e] * p.scale_log2;
        s[nt][e] = v;
        mx[e >> 1] = fmaxf(mx[e >> 1], v);
      }
    float alpha[2], mu[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      float mn = fmaxf(m[h], mx[h]);
      mu[h] = mn == NEG_INF ? 0.f : mn;
      alpha[h] = ex2(m[h] - mu[h]);
      m[h] = mn;
      l[h] *= alpha[h];
    }
#pragma unroll
    for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        float pe = ex2(s[nt][e] - mu[e >> 1]);
        l[e >> 1] += pe;
#if DROPOUT
        int i = row0 + (e >> 1) * 8, j = k0 + nt * 8 + 2 * tg + (e & 1);
        if (i < p.L && j < p.S && !keep_at(((unsigned long long)b * p.L + i) * p.S + j, p.base, p.k0, p.k1, p.thr))
          pe = 0.f;
#endif
        s[nt][e] = pe;
      }
#pragma unroll
    for (int i = 0; i < HD / 8; i++) {
      o[i][0] *= alpha[0], o[i][1] *= alpha[0];
      o[i][2] *= alpha[1], o[i][3] *= alpha[1];
    }
    // O += P V: V as the MN-major B operand (keys are K: 8-row groups 1024
    // bytes apart; feature column blocks BK * 128 bytes apart)
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
      unsigned a0 = pack2(s[2 * kk][0], s[2 * kk][1]), a1 = pack2(s[2 * kk][2], s[2 * kk][3]);
      unsigned a2 = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), a3 = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      unsigned long long db = wg_desc_mn(sv_a + kk * 16 * 128, BK * 128, 1024);
#if HD == 64
      wg_rs_n64(o, a0, a1, a2, a3, db);
#else
      wg_rs_n128(o, a0, a1, a2, a3, db);
#endif
    }
    wg_commit();
    wg_wait0();
    acc_fence<HD / 8>(o);
    __syncthreads(); // the stage is refilled next iteration
  }
#pragma unroll
  for (int h = 0; h < 2; h++) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  TX *og = p.out + (long long)b * p.L * HD;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    int i = row0 + h * 8;
    if (i >= p.L) continue;
    float inv = 1.f / l[h];
#if DROPOUT
    inv *= p.drop_scale;
#endif
    unsigned *orow = (unsigned *)(og + (long long)i * HD);
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++) orow[nt * 4 + tg] = pack2(o[nt][2 * h] * inv, o[nt][2 * h + 1] * inv);
    if (tg == 0) p.lse[(long long)b * p.L + i] = m[h] * LN2 + logf(l[h]);
  }
}
#endif // WG
#endif
#if !defined(PART) || PART == 1
// ================= backward =================
// D = rowsum(dout * out) per row (fp32), one warp a row; dq zeroed.
extern "C" __global__ void mt_flash_bwd_pre(flash_params p) {
  long long rows = (long long)p.nb * p.L;
  int lane = threadIdx.x & 31;
  long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5, nw = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long r = w; r < rows; r += nw) {
    const TX *a = p.dout + r * HD, *o = p.out + r * HD;
    float d = 0.f;
    for (int e = lane; e < HD; e += 32) {
      d += ldx(a[e]) * ldx(o[e]);
      p.dq[r * HD + e] = 0.f;
    }
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) d += __shfl_xor_sync(0xffffffffu, d, s);
    if (lane == 0) ((float *)p.D)[r] = d;
  }
}

// dq (TX) = scale * the fp32 accumulator
extern "C" __global__ void mt_flash_bwd_post(const float *acc, TX *dq, long long n, float scale) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    dq[i] = stx(acc[i] * scale);
}

// Block: NW warps, BKB = 16 * NW keys of k/v item kvb; loops over the q
// heads of its group and their query tiles of BQ (two shared stages).
// Per tile: S^T = K Q^T, P^T from lse, dP^T = V dO^T, dV += P^T dO,
// dS^T = P^T (dP^T - D), dK += dS^T Q; dS^T goes through shared memory for
// dQ += dS K (fp32 atomics). Grid (nkv, ceil(S / BKB)).
#define BKB (16 * NW)
#define DSW (BQ + 8) // dS^T row stride (halves), padded
#define BWD_SMEM ((2 * BKB * HD + 4 * BQ * HD + BKB * DSW) * 2 + 4 * BQ * 4)

extern "C" __global__ void __launch_bounds__(NW * 32) mt_flash_bwd(flash_params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  TX *sk = (TX *)smem, *sv = sk + BKB * HD, *sq = sv + BKB * HD, *sdo = sq + 2 * BQ * HD, *sds = sdo + 2 * BQ * HD;
  float *slse = (float *)(sds + BKB * DSW), *sD = slse + 2 * BQ;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tg = lane & 3;
  const int kvb = blockIdx.x, j0 = blockIdx.y * BKB;
  const int hk = p.hq / p.group, outer = kvb / hk, h0 = (kvb % hk) * p.group;
  const TX *kg = p.k + (long long)kvb * p.S * HD, *vg = p.v + (long long)kvb * p.S * HD;
  load_tile<BKB, NW * 32>(sk, kg, j0, p.S, tid);
  load_tile<BKB, NW * 32>(sv, vg, j0, p.S, tid);
  const int nqt_all = (p.L + BQ - 1) / BQ;
  int fq = 0;
#if CAUSAL
  fq = min(j0 / BQ, nqt_all);
#endif
  const int nqt = nqt_all - fq, nit = nqt * p.group;

  // stage loader: iteration it -> (head t, query tile)
  auto load_stage = [&](int it, int stg) {
    int b = outer * p.hq + h0 + it / nqt, i0 = (fq + it % nqt) * BQ;
    load_tile<BQ, NW * 32>(sq + stg * BQ * HD, p.q + (long long)b * p.L * HD, i0, p.L, tid);
    load_tile<BQ, NW * 32>(sdo + stg * BQ * HD, p.dout + (long long)b * p.L * HD, i0, p.L, tid);
    for (int r = tid; r < BQ; r += NW * 32) {
      bool ok = i0 + r < p.L;
      slse[stg * BQ + r] = ok ? p.lse[(long long)b * p.L + i0 + r] * LOG2E : 0.f;
      sD[stg * BQ + r] = ok ? p.D[(long long)b * p.L + i0 + r] : 0.f;
    }
  };
  if (nit > 0) load_stage(0, 0);
  cp_commit();

  float dk[HD / 8][4], dv[HD / 8][4];
#pragma unroll
  for (int i = 0; i < HD / 8; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) dk[i][e] = dv[i][e] = 0.f;
  const unsigned sk_a = sptr(sk), sv_a = sptr(sv), sds_a = sptr(sds);
  const int key0 = j0 + warp * 16 + g; // this thread's keys: key0, key0 + 8

  for (int it = 0; it < nit; it++) {
    const int stg = it & 1, b = outer * p.hq + h0 + it / nqt, i0 = (fq + it % nqt) * BQ;
    if (it + 1 < nit) {
      load_stage(it + 1, stg ^ 1);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    const unsigned sq_a = sptr(sq + stg * BQ * HD), sdo_a = sptr(sdo + stg * BQ * HD);
    const float *lse2 = slse + stg * BQ, *Dq = sD + stg * BQ;
    // S^T = K Q^T and dP^T = V dO^T (16 keys x BQ queries per warp)
    float s[BQ / 8][4], dp[BQ / 8][4];
#pragma unroll
    for (int i = 0; i < BQ / 8; i++)
#pragma unroll
      for (int e = 0; e < 4; e++) s[i][e] = dp[i][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
      unsigned a0, a1, a2, a3, c0, c1, c2, c3;
      int ar = warp * 16 + (lane & 15), ac = kk * 16 + (lane >> 4) * 8;
      ldsm4(sk_a + 2 * swz<HD>(ar, ac), a0, a1, a2, a3);
      ldsm4(sv_a + 2 * swz<HD>(ar, ac), c0, c1, c2, c3);
#pragma unroll
      for (int np = 0; np < BQ / 16; np++) {
        unsigned b0, b1, b2, b3;
        int br = np * 16 + (lane & 7) + ((lane >> 4) << 3), bc = kk * 16 + ((lane >> 3) & 1) * 8;
        ldsm4(sq_a + 2 * swz<HD>(br, bc), b0, b1, b2, b3);
        mma(s[2 * np], a0, a1, a2, a3, b0, b1);
        mma(s[2 * np + 1], a0, a1, a2, a3, b2, b3);
        ldsm4(sdo_a + 2 * swz<HD>(br, bc), b0, b1, b2, b3);
        mma(dp[2 * np], c0, c1, c2, c3, b0, b1);
        mma(dp[2 * np + 1], c0, c1, c2, c3, b2, b3);
      }
    }
    // P^T (dropped: pd), dS^T
    bool edge = i0 + BQ > p.L || j0 + BKB > p.S || MASK != 0 || DROPOUT;
#if CAUSAL
    edge = edge || j0 + warp * 16 + 15 > i0;
#endif
#pragma unroll
    for (int nt = 0; nt < BQ / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int c = nt * 8 + 2 * tg + (e & 1), i = i0 + c, j = key0 + (e >> 1) * 8;
        float x = edge ? score(p, b, i, j, s[nt][e]) : s[nt][e] * p.scale_log2;
        float pe = x == NEG_INF ? 0.f : ex2(x - lse2[c]);
        float dpe = dp[nt][e];
#if DROPOUT
        if (pe != 0.f && keep_at(((unsigned long long)b * p.L + i) * p.S + j, p.base, p.k0, p.k1, p.thr)) {
          dpe *= p.drop_scale;
          s[nt][e] = pe * p.drop_scale;
        } else {
          dpe = 0.f;
          s[nt][e] = 0.f;
        }
#else
        s[nt][e] = pe;
#endif
        dp[nt][e] = pe * (dpe - Dq[c]);
      }
    // dV += P^T dO, dK += dS^T Q
#pragma unroll
    for (int kk = 0; kk < BQ / 16; kk++) {
      unsigned a0 = pack2(s[2 * kk][0], s[2 * kk][1]), a1 = pack2(s[2 * kk][2], s[2 * kk][3]);
      unsigned a2 = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), a3 = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      unsigned d0 = pack2(dp[2 * kk][0], dp[2 * kk][1]), d1 = pack2(dp[2 * kk][2], dp[2 * kk][3]);
      unsigned d2 = pack2(dp[2 * kk + 1][0], dp[2 * kk + 1][1]), d3 = pack2(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
      // dS^T to shared for dQ (rows g and g + 8 of this warp's keys)
      unsigned *r0p = (unsigned *)(sds + (warp * 16 + g) * DSW + kk * 16 + 2 * tg);
      unsigned *r8p = (unsigned *)(sds + (warp * 16 + g + 8) * DSW + kk * 16 + 2 * tg);
      r0p[0] = d0, r8p[0] = d1, r0p[4] = d2, r8p[4] = d3;
#pragma unroll
      for (int np = 0; np < HD / 16; np++) {
        unsigned b0, b1, b2, b3;
        int br = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, bc = np * 16 + (lane >> 4) * 8;
        ldsm4t(sdo_a + 2 * swz<HD>(br, bc), b0, b1, b2, b3);
        mma(dv[2 * np], a0, a1, a2, a3, b0, b1);
        mma(dv[2 * np + 1], a0, a1, a2, a3, b2, b3);
        ldsm4t(sq_a + 2 * swz<HD>(br, bc), b0, b1, b2, b3);
        mma(dk[2 * np], d0, d1, d2, d3, b0, b1);
        mma(dk[2 * np + 1], d0, d1, d2, d3, b2, b3);
      }
    }
    __syncthreads();
    // dQ (BQ x HD) += dS K: warps split BQ / 16 row tiles x NGRP column groups
    {
      const int NGRP = NW / (BQ / 16), NCOL = HD / NGRP;
      const int mt = warp % (BQ / 16), cg = warp / (BQ / 16);
      float acc[NCOL / 8][4];
#pragma unroll
      for (int i = 0; i < NCOL / 8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < BKB / 16; kk++) {
        unsigned a0, a1, a2, a3;
        int mi = lane >> 3;
        ldsm4t(sds_a + 2 * ((kk * 16 + (lane & 7) + ((mi >> 1) << 3)) * DSW + mt * 16 + ((mi & 1) << 3)), a0, a1, a2,
               a3);
#pragma unroll
        for (int np = 0; np < NCOL / 16; np++) {
          unsigned b0, b1, b2, b3;
          ldsm4t(sk_a + 2 * swz<HD>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, cg * NCOL + np * 16 + (lane >> 4) * 8),
                 b0, b1, b2, b3);
          mma(acc[2 * np], a0, a1, a2, a3, b0, b1);
          mma(acc[2 * np + 1], a0, a1, a2, a3, b2, b3);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; h++) {
        int i = i0 + mt * 16 + g + h * 8;
        if (i >= p.L) continue;
        float *dqr = p.dq + ((long long)b * p.L + i) * HD + cg * NCOL + 2 * tg;
#pragma unroll
        for (int nt = 0; nt < NCOL / 8; nt++)
          asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};" ::"l"(dqr + nt * 8), "f"(acc[nt][2 * h]),
                       "f"(acc[nt][2 * h + 1])
                       : "memory");
      }
    }
    __syncthreads(); // sds and the stage are rewritten next iteration
  }
  cp_wait<0>(); // (no query tiles: the K, V loads are still in flight)
  // dK (scaled) and dV out
  const float sc = p.scale_log2 / LOG2E;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    int j = key0 + h * 8;
    if (j >= p.S) continue;
    unsigned *kr = (unsigned *)(p.dk + ((long long)kvb * p.S + j) * HD);
    unsigned *vr = (unsigned *)(p.dv + ((long long)kvb * p.S + j) * HD);
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++) {
      kr[nt * 4 + tg] = pack2(dk[nt][2 * h] * sc, dk[nt][2 * h + 1] * sc);
      vr[nt * 4 + tg] = pack2(dv[nt][2 * h], dv[nt][2 * h + 1]);
    }
  }
}

#if defined(WG) && WG
// Backward on wgmma: a block of NW warps (NW / 4 warpgroups, 64 keys each:
// BKW keys of k/v item kvb), query tiles of BQ = 64, two stages. Per tile
// and warpgroup: S^T = K Q^T and dP^T = V dO^T (shared x shared, K-major),
// P^T and dS^T in registers as in mt_flash_bwd, dV += P^T dO and
// dK += dS^T Q (registers x shared, MN-major); dS^T goes to shared memory
// (bf16, 128-byte swizzle) for dQ += dS K, warpgroup w taking columns
// [w HD / NG, (w + 1) HD / NG) over all BKW keys (A = dS MN-major).
#define NG (NW / 4)
#define BKW (64 * NG)
extern "C" __global__ void __launch_bounds__(NW * 32) mt_flash_bwd_wg(flash_params p) {
  static_assert(BQ == 64, "the wgmma backward takes query tiles of 64");
  extern __shared__ __align__(1024) unsigned char smem_wg[];
  TX *sk = (TX *)smem_wg, *sv = sk + BKW * HD, *sq = sv + BKW * HD, *sdo = sq + 2 * BQ * HD, *sds = sdo + 2 * BQ * HD;
  float *slse = (float *)(sds + BKW * BQ), *sD = slse + 2 * BQ;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tg = lane & 3, wg = warp >> 2;
  const int kvb = blockIdx.x, j0 = blockIdx.y * BKW;
  const int hk = p.hq / p.group, outer = kvb / hk, h0 = (kvb % hk) * p.group;
  const TX *kg = p.k + (long long)kvb * p.S * HD, *vg = p.v + (long long)kvb * p.S * HD;
  load_tile_b<BKW, NW * 32>(sk, kg, j0, p.S, tid);
  load_tile_b<BKW, NW * 32>(sv, vg, j0, p.S, tid);
  const int nqt_all = (p.L + BQ - 1) / BQ;
  int fq = 0;
#if CAUSAL
  fq = min(j0 / BQ, nqt_all);
#endif
  const int nqt = nqt_all - fq, nit = nqt * p.group;
  auto load_stage = [&](int it, int stg) {
    int b = outer * p.hq + h0 + it / nqt, i0 = (fq + it % nqt) * BQ;
    load_tile_b<BQ, NW * 32>(sq + stg * BQ * HD, p.q + (long long)b * p.L * HD, i0, p.L, tid);
    load_tile_b<BQ, NW * 32>(sdo + stg * BQ * HD, p.dout + (long long)b * p.L * HD, i0, p.L, tid);
    for (int r = tid; r < BQ; r += NW * 32) {
      bool ok = i0 + r < p.L;
      slse[stg * BQ + r] = ok ? p.lse[(long long)b * p.L + i0 + r] * LOG2E : 0.f;
      sD[stg * BQ + r] = ok ? p.D[(long long)b * p.L + i0 + r] : 0.f;
    }
  };
  if (nit > 0) load_stage(0, 0);
  cp_commit();

  float dk[HD / 8][4], dv[HD / 8][4];
#pragma unroll
  for (int i = 0; i < HD / 8; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) dk[i][e] = dv[i][e] = 0.f;
  const unsigned sk_a = sptr(sk), sv_a = sptr(sv), sds_a = sptr(sds);
  const int key0 = j0 + warp * 16 + g; // this thread's keys: key0, key0 + 8
  const int kl0 = warp * 16 + g;       // the same within the block

  for (int it = 0; it < nit; it++) {
    const int stg = it & 1, b = outer * p.hq + h0 + it / nqt, i0 = (fq + it % nqt) * BQ;
    if (it + 1 < nit) {
      load_stage(it + 1, stg ^ 1);
      cp_commit();
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    proxy_fence();
    __syncthreads();
    const unsigned sq_a = sptr(sq + stg * BQ * HD), sdo_a = sptr(sdo + stg * BQ * HD);
    const float *lse2 = slse + stg * BQ, *Dq = sD + stg * BQ;
    float s[BQ / 8][4], dp[BQ / 8][4];
#pragma unroll
    for (int i = 0; i < BQ / 8; i++)
#pragma unroll
      for (int e = 0; e < 4; e++) s[i][e] = dp[i][e] = 0.f;
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
      unsigned ka = (kk >> 2) * BKW * 128 + wg * 64 * 128 + (kk & 3) * 32, qa = (kk >> 2) * BQ * 128 + (kk & 3) * 32;
      wg_ss_n64_t00(s, wg_desc(sk_a + ka, 16, 1024), wg_desc(sq_a + qa, 16, 1024));
      wg_ss_n64_t00(dp, wg_desc(sv_a + ka, 16, 1024), wg_desc(sdo_a + qa, 16, 1024));
    }
    wg_commit();
    wg_wait0();
    acc_fence<BQ / 8>(s);
    acc_fence<BQ / 8>(dp);
    bool edge = i0 + BQ > p.L || j0 + BKW > p.S || MASK != 0 || DROPOUT;
#if CAUSAL
    edge = edge || j0 + warp * 16 + 15 > i0;
#endif
#pragma unroll
    for (int nt = 0; nt < BQ / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int c = nt * 8 + 2 * tg + (e & 1), i = i0 + c, j = key0 + (e >> 1) * 8;
        float x = edge ? score(p, b, i, j, s[nt][e]) : s[nt][e] * p.scale_log2;
        float pe = x == NEG_INF ? 0.f : ex2(x - lse2[c]);
        float dpe = dp[nt][e];
#if DROPOUT
        if (pe != 0.f && keep_at(((unsigned long long)b * p.L + i) * p.S + j, p.base, p.k0, p.k1, p.thr)) {
          dpe *= p.drop_scale;
          s[nt][e] = pe * p.drop_scale;
        } else {
          dpe = 0.f;
          s[nt][e] = 0.f;
        }
#else
        s[nt][e] = pe;
#endif
        dp[nt][e] = pe * (dpe - Dq[c]);
      }
    // dV += P^T dO, dK += dS^T Q (B MN-major: query rows, feature column blocks BQ * 128 bytes apart)
    wg_fence();
#pragma unroll
    for (int kk = 0; kk < BQ / 16; kk++) {
      unsigned a0 = pack2(s[2 * kk][0], s[2 * kk][1]), a1 = pack2(s[2 * kk][2], s[2 * kk][3]);
      unsigned a2 = pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]), a3 = pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      unsigned d0 = pack2(dp[2 * kk][0], dp[2 * kk][1]), d1 = pack2(dp[2 * kk][2], dp[2 * kk][3]);
      unsigned d2 = pack2(dp[2 * kk + 1][0], dp[2 * kk + 1][1]), d3 = pack2(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
      // dS^T rows kl0 and kl0 + 8, query columns kk * 16 + 2 tg (+ 8)
      *(unsigned *)(sds + swzb<BKW>(kl0, kk * 16 + 2 * tg)) = d0;
      *(unsigned *)(sds + swzb<BKW>(kl0 + 8, kk * 16 + 2 * tg)) = d1;
      *(unsigned *)(sds + swzb<BKW>(kl0, kk * 16 + 8 + 2 * tg)) = d2;
      *(unsigned *)(sds + swzb<BKW>(kl0 + 8, kk * 16 + 8 + 2 * tg)) = d3;
#if HD == 64
      wg_rs_n64(dv, a0, a1, a2, a3, wg_desc_mn(sdo_a + kk * 16 * 128, BQ * 128, 1024));
      wg_rs_n64(dk, d0, d1, d2, d3, wg_desc_mn(sq_a + kk * 16 * 128, BQ * 128, 1024));
#else
      wg_rs_n128(dv, a0, a1, a2, a3, wg_desc_mn(sdo_a + kk * 16 * 128, BQ * 128, 1024));
      wg_rs_n128(dk, d0, d1, d2, d3, wg_desc_mn(sq_a + kk * 16 * 128, BQ * 128, 1024));
#endif
    }
    wg_commit();
    proxy_fence(); // dS^T (ordinary stores) is read by wgmma next
    wg_wait0();
    acc_fence<HD / 8>(dk);
    acc_fence<HD / 8>(dv);
    __syncthreads();
    // dQ (BQ x HD): this warpgroup's columns, over all BKW keys
    {
      const int NC = HD / NG; // 64 or 32 (HD = 128, 64 with two warpgroups)
      float acc[NC / 8][4];
#pragma unroll
      for (int i = 0; i < NC / 8; i++) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
      const unsigned col = wg * NC; // first feature column
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < BKW / 16; kk++) {
        unsigned long long da = wg_desc_mn(sds_a + kk * 16 * 128, BKW * 128, 1024);
        unsigned long long db = wg_desc_mn(sk_a + (col >> 6) * BKW * 128 + (col & 63) * 2 + kk * 16 * 128, BKW * 128, 1024);
#if HD / NG == 64
        wg_ss_n64_t11(acc, da, db);
#elif HD / NG == 32
        wg_ss_n32_t11(acc, da, db);
#else
#error "the wgmma backward needs HD / (NW / 4) of 32 or 64"
#endif
      }
      wg_commit();
      wg_wait0();
      acc_fence<NC / 8>(acc);
#pragma unroll
      for (int h = 0; h < 2; h++) {
        int i = i0 + (warp & 3) * 16 + g + h * 8;
        if (i >= p.L) continue;
        float *dqr = p.dq + ((long long)b * p.L + i) * HD + col + 2 * tg;
#pragma unroll
        for (int nt = 0; nt < NC / 8; nt++)
          asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};" ::"l"(dqr + nt * 8), "f"(acc[nt][2 * h]),
                       "f"(acc[nt][2 * h + 1])
                       : "memory");
      }
    }
    __syncthreads(); // sds and the stage are rewritten next iteration
  }
  cp_wait<0>();
  const float sc = p.scale_log2 / LOG2E;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    int j = key0 + h * 8;
    if (j >= p.S) continue;
    unsigned *kr = (unsigned *)(p.dk + ((long long)kvb * p.S + j) * HD);
    unsigned *vr = (unsigned *)(p.dv + ((long long)kvb * p.S + j) * HD);
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++) {
      kr[nt * 4 + tg] = pack2(dk[nt][2 * h] * sc, dk[nt][2 * h + 1] * sc);
      vr[nt * 4 + tg] = pack2(dv[nt][2 * h], dv[nt][2 * h + 1]);
    }
  }
}
#endif // WG
#endif // PART
#endif // __HIP__
