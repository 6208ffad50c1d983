/* hiprtc_check.c -- `make HIP=1` runs this over the kernel family members
 * that scripts/hip_kernels.sh assembles, to prove the run-time path of the
 * HIP build: hiprtc loaded and called through gpu_port.h's table, with the
 * options nvrtc.c passes, compiles each source (definitions + common.cu +
 * family, as mt_cuda_family makes it) for each architecture given. hiprtc
 * needs no GPU for this. Usage: hiprtc_check "gfx90a gfx940" FILE...
 * Exit status 0 when every file compiles for every architecture. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_api.h"

#ifndef MT_HIP
#error "hiprtc_check.c is part of the HIP build: compile with -DMT_HIP"
#endif

mt_nvrtc_api mt_nvrtc;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static int load(void) {
  static const char *const names[] = {MT_GPU_RTC_LIBS};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) return fprintf(stderr, "hiprtc_check: %s not found\n", MT_GPU_RTC_DESC), 1;
#define MT_NVRTC_LOAD(R, name, sym, params)                                                                            \
  if (!(*(void **)&mt_nvrtc.name = dlsym(h, MT_SYM(sym))))                                                             \
    return fprintf(stderr, "hiprtc_check: %s lacks %s\n", MT_GPU_RTC_DESC, MT_SYM(sym)), 1;
  MT_NVRTC_FUNCS(MT_NVRTC_LOAD)
#undef MT_NVRTC_LOAD
  return 0;
}

/* Compiles src for arch with nvrtc.c's options; prints the log on failure. */
static int compile(const char *path, const char *src, const char *arch) {
  static const char *const extra[] = {MT_GPU_RTC_OPTS};
  enum { NX = sizeof extra / sizeof *extra };
  char archopt[300];
  snprintf(archopt, sizeof archopt, MT_GPU_ARCH_OPT, arch);
  const char *opts[NX + 1] = {archopt};
  for (int i = 0; i < NX; i++) opts[i + 1] = extra[i];
  nvrtcProgram p = NULL;
  nvrtcResult r = mt_nvrtc.CreateProgram(&p, src, "moontorch.cu", 0, NULL, NULL);
  if (r) return fprintf(stderr, "hiprtc_check: %s: %s\n", path, mt_nvrtc.GetErrorString(r)), 1;
  r = mt_nvrtc.CompileProgram(p, NX + 1, opts);
  size_t n = 0;
  if (!r) r = mt_nvrtc.GetCUBINSize(p, &n);
  if (r || n == 0) {
    size_t ln = 0;
    mt_nvrtc.GetProgramLogSize(p, &ln);
    char *log = malloc(ln + 1);
    if (log) {
      log[0] = 0;
      mt_nvrtc.GetProgramLog(p, log);
      log[ln] = 0;
    }
    fprintf(stderr, "hiprtc_check: %s does not compile for %s: %s\n%s\n", path, arch,
            r ? mt_nvrtc.GetErrorString(r) : "empty code object", log ? log : "");
    free(log);
  }
  mt_nvrtc.DestroyProgram(&p);
  return r || n == 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: hiprtc_check \"ARCH...\" FILE...\n"), 2;
  if (load()) return 1;
  int failed = 0;
  for (int i = 2; i < argc; i++) {
    char *src = slurp(argv[i]);
    if (!src) return fprintf(stderr, "hiprtc_check: cannot read %s\n", argv[i]), 1;
    char archs[512];
    snprintf(archs, sizeof archs, "%s", argv[1]);
    for (char *a = strtok(archs, " "); a; a = strtok(NULL, " ")) failed |= compile(argv[i], src, a);
    free(src);
  }
  return failed;
}
