// nms.cu -- greedy NMS on the GPU (cuda/nms.c), in three stages that never
// leave the device:
//  1. rank: the scores sorted by decreasing value (NaN first, equal scores
//     by position: the CPU's stable argsort), as (key, position) pairs with
//     a 64-bit key whose ascending order is that order. mt_nms_rank_block
//     sorts chunks of RANK_CHUNK in shared memory (a bitonic network: the
//     pairs are all distinct, so any correct sort is the stable one), then
//     each mt_nms_rank_merge pass merges runs two by two, every pair finding
//     its place by a binary search in the other run.
//  2. mt_nms_mask: tile (r, c) of 64 x 64 ranked boxes sets bit j of word
//     mask[i * words + c] when box i suppresses box j > i (IoU > thr, same
//     class when classes are given), one thread per row i. Only tiles with
//     c >= r exist; the grid folds the triangle row r with row words-1-r.
//  3. mt_nms_walk: one block walks the 64-box blocks in rank order. Thread 0
//     settles a block from its removed word and the block's diagonal words
//     (jumping from kept box to kept box); then the threads OR the kept
//     rows into the removed words to its right, a (row, word) pair each.
//     The diagonals are fetched WALK_AHEAD blocks ahead. The removed set lives in shared memory
//     (global scratch past WALK_SHARED words).
// IoU as the CPU's (cpu/nms_kernels.c): T arithmetic, every product rounded
// on its own (MUL); the comparison with thr is done in T against TH, the largest T <= thr, which
// gives the CPU's (double)ovr > thr exactly. nms.c prepends T, MUL and S
// (the scores' type).

#define NMS_BITS 64
#define WALK_SHARED 4096
#define RANK_CHUNK 2048

typedef unsigned long long u64;

// ---- 1. rank ----

// The sort key of score v: ascending keys = decreasing scores, NaN first;
// -0 and +0 are one key (equal scores keep their positions' order).
__device__ __forceinline__ u64 rank_key(S s) {
  double v = (double)s;
  if (v != v) return 0;
  if (v == 0) v = 0;
  u64 b = (u64)__double_as_longlong(v);
  b = b >> 63 ? ~b : b | 1ull << 63;
  return ~b;
}

// (ka, ia) before (kb, ib)
__device__ __forceinline__ bool rank_before(u64 ka, int ia, u64 kb, int ib) { return ka < kb || (ka == kb && ia < ib); }

// Sorts each chunk of RANK_CHUNK scores into (key, ix) at the chunk's place
// (blockDim.x == RANK_CHUNK / 2; the tail chunk is padded with pairs that
// sort last and are not written).
extern "C" __global__ void mt_nms_rank_block(const S *scores, int n, u64 *key, int *ix) {
  __shared__ u64 sk[RANK_CHUNK];
  __shared__ int si[RANK_CHUNK];
  int base = blockIdx.x * RANK_CHUNK;
  for (int t = threadIdx.x; t < RANK_CHUNK; t += blockDim.x) {
    int p = base + t;
    sk[t] = p < n ? rank_key(scores[p]) : ~0ull;
    si[t] = p < n ? p : 0x7fffffff;
  }
  __syncthreads();
  for (int s = 2; s <= RANK_CHUNK; s <<= 1)
    for (int j = s >> 1; j > 0; j >>= 1) {
      int t = threadIdx.x, i = (t / j) * 2 * j + t % j, l = i + j;
      bool up = (i & s) == 0;
      u64 ki = sk[i], kl = sk[l];
      int ii = si[i], il = si[l];
      if (up == rank_before(kl, il, ki, ii)) sk[i] = kl, sk[l] = ki, si[i] = il, si[l] = ii;
      __syncthreads();
    }
  for (int t = threadIdx.x; t < RANK_CHUNK && base + t < n; t += blockDim.x) key[base + t] = sk[t], ix[base + t] = si[t];
}

// One merge pass over runs of w sorted pairs: runs 2q and 2q + 1 become one
// run of 2w in (ko, io). Each pair's place is its position in its run plus
// the number of pairs of the other run that go before it.
extern "C" __global__ void mt_nms_rank_merge(const u64 *key, const int *ix, int n, int w, u64 *ko, int *io) {
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
    int run = p / w, lo = (run ^ 1) * w, at = p - run * w + (run & ~1) * w;
    u64 k = key[p];
    int i = ix[p];
    if (lo < n) {
      int hi = lo + w < n ? lo + w : n;
      while (lo < hi) { // the first pair of the other run not before (k, i)
        int mid = lo + (hi - lo) / 2;
        if (rank_before(key[mid], ix[mid], k, i)) lo = mid + 1;
        else hi = mid;
      }
      at += lo - (run ^ 1) * w;
    }
    ko[at] = k, io[at] = i;
  }
}

// ---- 2. the suppression mask ----

// A ranked box and its area, as the mask kernel keeps them (two 16-byte
// loads for float).
struct __align__(16) mt_nbox {
  T x1, y1, x2, y2, area, pad[3];
};

__device__ __forceinline__ mt_nbox nms_box(const T *boxes, int o) {
  mt_nbox b;
  b.x1 = boxes[o * 4LL], b.y1 = boxes[o * 4LL + 1], b.x2 = boxes[o * 4LL + 2], b.y2 = boxes[o * 4LL + 3];
  b.area = MUL(b.x2 - b.x1, b.y2 - b.y1);
  return b;
}

// IoU of candidate c with kept box b > th. fmax and fmin give the values of
// the CPU's ternaries (c > b ? c : b ...) but where a coordinate is NaN,
// and then that box's area, the union and the IoU are NaN whichever way.
// Most pairs do not meet: 0 / u is decided without the division, whose
// slow path a zero dividend takes (0 / u is 0 > th, or NaN for u 0 or NaN).
__device__ __forceinline__ bool nms_over(const mt_nbox &c, const mt_nbox &b, T th) {
  T w = fmax(fmin(c.x2, b.x2) - fmax(c.x1, b.x1), (T)0), h = fmax(fmin(c.y2, b.y2) - fmax(c.y1, b.y1), (T)0);
  T inter = MUL(w, h), u = b.area + c.area - inter;
  if (inter == 0) return th < 0 && u == u && u != 0;
  return inter / u > th;
}

// Bit j: column box j (of ncol) is suppressed by box b (class cb when CLS).
template <bool CLS>
__device__ __forceinline__ u64 nms_bits(const mt_nbox &b, long long cb, const mt_nbox *col, const long long *cc,
                                        int ncol, T th) {
  u64 bits = 0;
  if (ncol == NMS_BITS) {
#pragma unroll
    for (int j = 0; j < NMS_BITS; j++)
      if ((!CLS || cc[j] == cb) && nms_over(col[j], b, th)) bits |= 1ull << j;
  } else {
    for (int j = 0; j < ncol; j++)
      if ((!CLS || cc[j] == cb) && nms_over(col[j], b, th)) bits |= 1ull << j;
  }
  return bits;
}

// The tile (r, c), c >= r, of folded index t: row f pairs with row words-1-f
// (words + 1 tiles together); false for the second half of the middle row.
__device__ __forceinline__ bool nms_tile(long long t, int words, int *r, int *c) {
  int f = (int)(t / (words + 1)), k = (int)(t % (words + 1));
  if (k < words - f) {
    *r = f, *c = f + k;
    return true;
  }
  *r = words - 1 - f, *c = *r + k - (words - f);
  return *r != f;
}

extern "C" __global__ void mt_nms_mask(const T *boxes, const long long *cls, const int *order, int n, int words,
                                       double thr, u64 *mask) {
  __shared__ mt_nbox col[NMS_BITS];
  __shared__ long long cc[NMS_BITS];
  const T th = (T)thr;
  long long tiles = (long long)((words + 1) / 2) * (words + 1);
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int r, c;
    if (!nms_tile(tile, words, &r, &c)) continue; // the same for every thread of the block
    int c0 = c * NMS_BITS, ncol = n - c0 < NMS_BITS ? n - c0 : NMS_BITS;
    __syncthreads(); // the previous tile's reads of col are done
    if (threadIdx.x < ncol) {
      int o = order[c0 + threadIdx.x];
      col[threadIdx.x] = nms_box(boxes, o);
      cc[threadIdx.x] = cls ? cls[o] : 0;
    }
    __syncthreads();
    int i = r * NMS_BITS + threadIdx.x;
    if (i >= n) continue;
    int o = order[i];
    mt_nbox b = nms_box(boxes, o);
    u64 bits = cls ? nms_bits<true>(b, cls[o], col, cc, ncol, th) : nms_bits<false>(b, 0, col, cc, ncol, th);
    if (r == c) bits &= ~0ull << threadIdx.x << 1; // the diagonal tile: boxes j > i only
    mask[(long long)i * words + c] = bits;
  }
}

// ---- 3. the walk ----

// rem[c] |= word c of the rows of block b's kept boxes (ktab: their nk
// bits), for every word c > b: one (row, word) pair per thread, eight at a
// time, ORed in with shared (or global) atomics; consecutive threads read
// consecutive words of a row.
__device__ __forceinline__ void walk_push(const u64 *mask, int words, int b, const int *ktab, int nk, u64 *rem) {
  int ncol = words - b - 1, pairs = nk * ncol;
  const u64 *base = mask + (long long)b * NMS_BITS * words + b + 1;
  for (int p0 = threadIdx.x; p0 < pairs; p0 += 8 * blockDim.x) {
    u64 v[8];
    int c[8];
#pragma unroll
    for (int u = 0; u < 8; u++) {
      int p = p0 + u * blockDim.x, k = p / ncol;
      c[u] = p - k * ncol, v[u] = p < pairs ? base[(long long)ktab[k] * words + c[u]] : 0;
    }
#pragma unroll
    for (int u = 0; u < 8; u++)
      if (v[u]) atomicOr(&rem[b + 1 + c[u]], v[u]);
  }
}

// The kept boxes of block b, into ktab (their bits, in order) and the
// result: R has a bit for each removed or missing box; each box not yet
// removed is kept and removes what its diagonal word says.
__device__ __forceinline__ u64 walk_settle(u64 R, const u64 *diag, int *ktab) {
  u64 kept = 0;
  for (int nk = 0; ~R; nk++) {
    int t = __ffsll((long long)~R) - 1;
    u64 bit = 1ull << t;
    kept |= bit;
    ktab[nk] = t;
    R |= diag[t] | bit;
  }
  return kept;
}

// The diagonal word of block b for its row tid (0 past the boxes).
__device__ __forceinline__ u64 walk_diag(const u64 *mask, int n, int words, int b, int tid) {
  long long i = (long long)b * NMS_BITS + tid;
  return b < words && i < n ? mask[i * words + b] : 0;
}

#define WALK_AHEAD 8 // blocks whose diagonal words are in flight

// keep[0 .. *count) = the 1-based original positions of the kept boxes, in
// rank order. Threads tid < 64 fetch the diagonal words WALK_AHEAD blocks
// ahead (q[a]: block b + 1 + a) so that no step waits for them.
extern "C" __global__ void mt_nms_walk(const u64 *mask, const int *order, int n, int words, long long *keep,
                                       long long *count, u64 *scratch) {
  __shared__ u64 srem[WALK_SHARED];
  __shared__ u64 diag[2][NMS_BITS];
  __shared__ u64 skept;
  __shared__ int ktab[NMS_BITS];
  u64 *rem = words <= WALK_SHARED ? srem : scratch;
  int tid = threadIdx.x;
  bool lane = tid < NMS_BITS;
  for (int w = tid; w < words; w += blockDim.x) rem[w] = 0;
  u64 q[WALK_AHEAD];
#pragma unroll
  for (int a = 0; a < WALK_AHEAD; a++) q[a] = lane ? walk_diag(mask, n, words, a + 1, tid) : 0;
  if (lane) diag[0][tid] = walk_diag(mask, n, words, 0, tid);
  __syncthreads();
  long long nk = 0;
  for (int b = 0; b < words; b++) {
    if (tid == 0) {
      int valid = n - b * NMS_BITS;
      skept = walk_settle(rem[b] | (valid < NMS_BITS ? ~0ull << valid : 0ull), diag[b & 1], ktab);
    }
    __syncthreads();
    u64 kept = skept;
    int i = b * NMS_BITS + tid, nb = __popcll(kept);
    if (lane && (kept >> tid & 1)) keep[nk + __popcll(kept & ((1ull << tid) - 1))] = order[i] + 1LL;
    nk += nb;
    u64 next = lane ? walk_diag(mask, n, words, b + 1 + WALK_AHEAD, tid) : 0;
    if (nb) walk_push(mask, words, b, ktab, nb, rem);
    if (lane) diag[(b + 1) & 1][tid] = q[0];
#pragma unroll
    for (int a = 0; a + 1 < WALK_AHEAD; a++) q[a] = q[a + 1];
    q[WALK_AHEAD - 1] = next;
    __syncthreads();
  }
  if (tid == 0) *count = nk;
}
