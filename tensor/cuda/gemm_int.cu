// gemm_int.cu -- integer matrix products on the GPU (cuBLAS multiplies
// floating types only). blas.c prepends TX, the storage type. For batch
// element z (grid z): C = alpha * A B + beta * C with C (m, n) dense
// row-major at C + z * m * n, A (m, k) at A + z * sa and B (k, n) at
// B + z * sb in matmul.c's layouts (trans: column-major; ld: the stride
// that is not 1). Accumulates in 64 bits and wraps on the store, as the
// CPU does. 16x16 tiles through shared memory.
#define TILE 16

extern "C" __global__ void mt_gemm_int(const TX *A, const TX *B, TX *C, long long m, long long n, long long k,
                                       long long lda, long long ldb, int ta, int tb, long long sa, long long sb,
                                       long long alpha, long long beta) {
  __shared__ long long as[TILE][TILE + 1], bs[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  long long z = blockIdx.z;
  A += z * sa;
  B += z * sb;
  C += z * m * n;
  long long i = (long long)blockIdx.y * TILE + ty, j = (long long)blockIdx.x * TILE + tx;
  long long acc = 0;
  for (long long k0 = 0; k0 < k; k0 += TILE) {
    long long ka = k0 + tx, kb = k0 + ty;
    as[ty][tx] = (i < m && ka < k) ? (long long)A[ta ? ka * lda + i : i * lda + ka] : 0;
    bs[ty][tx] = (kb < k && j < n) ? (long long)B[tb ? j * ldb + kb : kb * ldb + j] : 0;
    __syncthreads();
    for (int q = 0; q < TILE; q++) acc += as[ty][q] * bs[q][tx];
    __syncthreads();
  }
  if (i < m && j < n) {
    long long c = alpha * acc;
    if (beta) c += beta * (long long)C[i * n + j];
    C[i * n + j] = (TX)c;
  }
}
