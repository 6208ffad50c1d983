// nms.cu -- greedy NMS on the GPU (cuda/nms.c), over boxes sorted by
// decreasing score. mt_nms_mask: block (r, c) of 64 x 64 boxes sets bit j
// of word mask[i * words + c] when box i suppresses box j > i (IoU > thr,
// same class when classes are given), one thread per row i. mt_nms_walk:
// one block walks the boxes in order with the removed set in shared memory
// (global scratch past 4096 words): a box not yet removed is kept and ORs
// its row into the set. IoU as the CPU's (cpu/nms_kernels.c): T arithmetic,
// every product rounded on its own (MUL), compared with thr in double. nms.c
// prepends T and MUL.

#define NMS_BITS 64
#define WALK_SHARED 4096

typedef unsigned long long u64;

__device__ __forceinline__ bool nms_over(const T *a, const T *b, double thr) {
  T xx1 = a[0] > b[0] ? a[0] : b[0], yy1 = a[1] > b[1] ? a[1] : b[1];
  T xx2 = a[2] < b[2] ? a[2] : b[2], yy2 = a[3] < b[3] ? a[3] : b[3];
  T w = xx2 - xx1 > 0 ? xx2 - xx1 : (T)0, h = yy2 - yy1 > 0 ? yy2 - yy1 : (T)0;
  T inter = MUL(w, h);
  T aa = MUL(a[2] - a[0], a[3] - a[1]), ab = MUL(b[2] - b[0], b[3] - b[1]);
  T ovr = inter / (aa + ab - inter);
  return (double)ovr > thr;
}

// Blocks loop over the words x words tiles (the launch caps the grid);
// tiles left of the diagonal are never read and skipped.
extern "C" __global__ void mt_nms_mask(const T *boxes, const long long *cls, long long n, long long words,
                                       double thr, u64 *mask) {
  __shared__ T cb[NMS_BITS * 4];
  __shared__ long long cc[NMS_BITS];
  for (long long tile = blockIdx.x; tile < words * words; tile += gridDim.x) {
    long long r = tile / words, c = tile % words;
    if (c < r) continue; // the same for every thread of the block
    long long c0 = c * NMS_BITS, ncol = n - c0 < NMS_BITS ? n - c0 : NMS_BITS;
    __syncthreads(); // the previous tile's reads of cb are done
    if (threadIdx.x < ncol) {
      for (int q = 0; q < 4; q++) cb[threadIdx.x * 4 + q] = boxes[(c0 + threadIdx.x) * 4 + q];
      cc[threadIdx.x] = cls ? cls[c0 + threadIdx.x] : 0;
    }
    __syncthreads();
    long long i = r * NMS_BITS + threadIdx.x;
    if (i >= n) continue;
    const T *bi = boxes + i * 4;
    long long ci = cls ? cls[i] : 0;
    u64 bits = 0;
    for (long long j = r == c ? threadIdx.x + 1 : 0; j < ncol; j++)
      if (cc[j] == ci && nms_over(bi, cb + j * 4, thr)) bits |= 1ull << j;
    mask[i * words + c] = bits;
  }
}

extern "C" __global__ void mt_nms_walk(const u64 *mask, long long n, long long words, const long long *order,
                                       long long *keep, long long *count, u64 *scratch) {
  __shared__ u64 srem[WALK_SHARED];
  u64 *rem = words <= WALK_SHARED ? srem : scratch;
  for (long long w = threadIdx.x; w < words; w += blockDim.x) rem[w] = 0;
  __syncthreads();
  long long nk = 0;
  for (long long i = 0; i < n; i++) {
    long long w = i / NMS_BITS;
    if (rem[w] >> (i % NMS_BITS) & 1) continue; // the same value in every thread
    if (threadIdx.x == 0) keep[nk] = order[i];
    nk++;
    __syncthreads(); // every thread has read rem[w] before it changes
    const u64 *row = mask + i * words;
    for (long long v = w + threadIdx.x; v < words; v += blockDim.x) rem[v] |= row[v];
    __syncthreads();
  }
  if (threadIdx.x == 0) *count = nk;
}
