// adam.cu -- one Adam/AdamW step over one contiguous parameter: the moment
// updates, the bias correction and the parameter update in one pass, in
// the order of the unfused ops of lua/torch/optim/adam.lua (so results agree
// to rounding). adam.c prepends TX (storage type), CT (compute type),
// LOAD(x) and WRITE(v). flags: 1 amsgrad, 2 maximize, 4 decoupled weight
// decay (AdamW). s[]: lr, beta1, beta2, eps, weight_decay, step_size
// (lr / (1 - beta1^step)), bc2_sqrt (sqrt(1 - beta2^step)).

__device__ __forceinline__ float a_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double a_sqrt(double x) { return sqrt(x); }

struct mt_adam_scalars {
  double lr, beta1, beta2, eps, wd, step_size, bc2_sqrt;
};

extern "C" __global__ void mt_adam_step(TX *p, const TX *g, TX *m, TX *v, TX *vmax, long long n, int flags,
                                        mt_adam_scalars s) {
  long long step = (long long)gridDim.x * blockDim.x;
  CT beta1 = (CT)s.beta1, beta2 = (CT)s.beta2, eps = (CT)s.eps, wd = (CT)s.wd, bc2 = (CT)s.bc2_sqrt;
  CT decay = (CT)(1 - s.lr * s.wd), nstep = (CT)(-s.step_size), c1 = (CT)(1 - s.beta1), c2 = (CT)(1 - s.beta2);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    CT gi = LOAD(g[i]), pi = LOAD(p[i]);
    if (flags & 2) gi = -gi;
    if (flags & 4)
      pi = pi * decay;
    else if (s.wd != 0)
      gi = gi + wd * pi;
    CT mi = LOAD(m[i]) * beta1 + c1 * gi;
    CT vi = LOAD(v[i]) * beta2 + gi * c2 * gi;
    m[i] = WRITE(mi);
    v[i] = WRITE(vi);
    CT d = vi;
    if (flags & 1) {
      CT mx = LOAD(vmax[i]);
      d = mx > vi || mx != mx ? mx : vi;
      vmax[i] = WRITE(d);
    }
    CT denom = a_sqrt(d) / bc2 + eps;
    p[i] = WRITE(pi + mi * nstep / denom);
  }
}
