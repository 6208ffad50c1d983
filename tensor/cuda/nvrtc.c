/* nvrtc.c -- CUDA C compiled at run time: NVRTC (dlopen'ed like the
 * driver) turns a kernel source into a cubin for the device's exact
 * architecture (sm_90 on an H100), kept in memory (source -> loaded module,
 * per device) and on disk under $XDG_CACHE_HOME/moontorch/cuda (or
 * ~/.cache/moontorch/cuda). The disk key hashes the source, the
 * architecture, the NVRTC version and the options. An entry is one file,
 * a header with its payload's length and checksum followed by the cubin,
 * written to a temporary name and renamed into place; an entry whose
 * checksum does not match is rebuilt, never loaded. Also the launcher. */
#include <dlfcn.h>
#include <errno.h>
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cu_api.h"
#include "files.h"
#include "mt_cuda.h"

mt_nvrtc_api mt_nvrtc;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[300];
static bool loaded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mt_cuda_jitstats stats;

/* the compiler's options after the architecture (gpu_port.h), also hashed
 * into the disk key */
static const char *const rtc_opts[] = {MT_GPU_RTC_OPTS};
#define NOPTS ((int)(sizeof rtc_opts / sizeof *rtc_opts))

/* Tries $MOONTORCH_NVRTC, then the versioned names CUDA installs, in the
 * loader's path and in /usr/local/cuda (HIP: hiprtc, gpu_port.h). */
static void load(void) {
  static const char *names[] = {MT_GPU_RTC_LIBS};
  static const char *dirs[] = {MT_GPU_LIB_DIRS};
  void *h = mt_dlopen_first(MT_GPU_RTC_ENV, names, sizeof names / sizeof *names, dirs, sizeof dirs / sizeof *dirs);
  if (!h) {
    snprintf(load_error, sizeof load_error,
             MT_GPU_RTC_DESC " was not found; install it or set " MT_GPU_RTC_ENV " to its path");
    return;
  }
#define MT_NVRTC_LOAD(R, name, sym, params)                                                                            \
  if (!(*(void **)&mt_nvrtc.name = dlsym(h, MT_SYM(sym)))) {                                                           \
    snprintf(load_error, sizeof load_error, MT_GPU_RTC_DESC " lacks %s", MT_SYM(sym));                                 \
    return;                                                                                                            \
  }
  MT_NVRTC_FUNCS(MT_NVRTC_LOAD)
#undef MT_NVRTC_LOAD
  loaded = true;
}

mt_cuda_jitstats mt_cuda_jit_stats(void) { return stats; }

void mt_cuda_note_mem_hit(void) {
  pthread_mutex_lock(&lock);
  stats.mem_hits++;
  pthread_mutex_unlock(&lock);
}

static uint64_t fnv(const void *p, size_t n, uint64_t h) { return mt_fnv1a(p, n, h); }

static void count(int64_t *c) {
  pthread_mutex_lock(&lock);
  (*c)++;
  pthread_mutex_unlock(&lock);
}

static void cache_dir(char *dir, size_t n) { mt_cache_dir("cuda", dir, n); }

/* The cubin stored at path if its header's length and checksum match. */
static char *read_entry(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned long long len = 0, sum = 0;
  char *buf = NULL;
  if (fscanf(f, "MTCUBIN1 %llu %llx", &len, &sum) == 2 && fgetc(f) == '\n' && len > 0 && len < (1ull << 31)) {
    buf = malloc(len);
    if (buf && (fread(buf, 1, len, f) != len || fgetc(f) != EOF || fnv(buf, len, 0xcbf29ce484222325ull) != sum)) {
      free(buf);
      buf = NULL;
      count(&stats.corrupt);
    }
  } else {
    count(&stats.corrupt);
  }
  fclose(f);
  *n = len;
  return buf;
}

static void write_entry(const char *dir, const char *path, const char *key, const char *bin, size_t n) {
  char d[1024], tmp[1200];
  snprintf(d, sizeof d, "%s", dir);
  if (mt_mkdirs(d)) return; /* the cache is an optimisation: no disk, no cache */
  snprintf(tmp, sizeof tmp, "%s/tmp-%d-%s", dir, (int)getpid(), key);
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  fprintf(f, "MTCUBIN1 %zu %016llx\n", n, (unsigned long long)fnv(bin, n, 0xcbf29ce484222325ull));
  bool ok = fwrite(bin, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path)) remove(tmp);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* MOONTORCH_CUDA_LOG_COMPILES=1: one line on stderr per compile (seconds,
 * source size, its first kernel's name), to see what a cold start costs. */
static void log_compile(const char *src, double dt) {
  static int on = -1;
  if (on < 0) on = getenv("MOONTORCH_CUDA_LOG_COMPILES") && strcmp(getenv("MOONTORCH_CUDA_LOG_COMPILES"), "0") != 0;
  if (!on) return;
  const char *k = strstr(src, "__global__");
  char name[80] = "";
  if (k) {
    const char *e = strchr(k, '(');
    size_t n = e && e - k < 200 ? (size_t)(e - k) : 0;
    const char *b = k + n;
    while (b > k && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    snprintf(name, sizeof name, "%.*s", (int)(k + n - b), b);
  }
  fprintf(stderr, "nvrtc: %.2f s for %zu bytes (%s)\n", dt, strlen(src), name);
}

/* Whether src asks for NVRTC's fast-compile mode ("// MT_FAST_COMPILE" on
 * a line: the JIT's generated kernels, memory-bound, whose compile time is
 * the first compiled step's) and this NVRTC has it (12.8 on). The marker is
 * in the source, so the cache keys differ from a plain compile's. */
static bool fast_compile(const char *src) {
  if (!strstr(src, "// MT_FAST_COMPILE\n") || (getenv("MOONTORCH_JIT_FAST_COMPILE") && !strcmp(getenv("MOONTORCH_JIT_FAST_COMPILE"), "0")))
    return false;
  int vmaj = 0, vmin = 0;
  mt_nvrtc.Version(&vmaj, &vmin);
  return MT_GPU_RTC_FAST_COMPILE && (vmaj > 12 || (vmaj == 12 && vmin >= 8));
}

/* Compiles src for arch ("sm_90") with NVRTC; returns a malloc'ed cubin. */
static mt_status compile(const char *src, const char *arch, char **bin, size_t *n) {
  nvrtcProgram p = NULL;
  nvrtcResult r = mt_nvrtc.CreateProgram(&p, src, "moontorch.cu", 0, NULL, NULL);
  if (r) return mt_fail(MT_EIO, MT_GPU_RTC_NAME " could not create a program: %s", mt_nvrtc.GetErrorString(r));
  char archopt[300];
  snprintf(archopt, sizeof archopt, MT_GPU_ARCH_OPT, arch);
  const char *opts[NOPTS + 2] = {archopt};
  for (int i = 0; i < NOPTS; i++) opts[i + 1] = rtc_opts[i];
  int nopt = NOPTS + 1;
  if (fast_compile(src)) opts[nopt++] = "-Ofc=mid";
  double t0 = now();
  r = mt_nvrtc.CompileProgram(p, nopt, opts);
  double dt = now() - t0;
  pthread_mutex_lock(&lock);
  stats.compile_seconds += dt;
  stats.compiles++;
  pthread_mutex_unlock(&lock);
  log_compile(src, dt);
  mt_status st = MT_OK;
  if (r) {
    size_t ln = 0;
    mt_nvrtc.GetProgramLogSize(p, &ln);
    char *log = malloc(ln + 1);
    if (log) {
      log[0] = 0;
      mt_nvrtc.GetProgramLog(p, log);
      log[ln] = 0;
    }
    char first[400] = "";
    if (log) {
      const char *at = strstr(log, "error");
      snprintf(first, sizeof first, "%s", at ? at : log);
      first[strcspn(first, "\n")] = 0;
    }
    free(log);
    st = mt_fail(MT_EIO, MT_GPU_RTC_NAME " failed to compile a kernel for %s: %s: %s", arch, mt_nvrtc.GetErrorString(r),
                 first);
  } else if ((r = mt_nvrtc.GetCUBINSize(p, n)) || !(*bin = malloc(*n ? *n : 1)) || (r = mt_nvrtc.GetCUBIN(p, *bin))) {
    st = mt_fail(MT_EIO, MT_GPU_RTC_NAME " gave no code for %s%s%s", arch, r ? ": " : "",
                 r ? mt_nvrtc.GetErrorString(r) : "");
  }
  mt_nvrtc.DestroyProgram(&p);
  return st;
}

typedef struct entry {
  uint64_t h1, h2;
  int dev;
  CUmodule mod;
  struct entry *next;
} entry;
#define NSLOT 512
static entry *table[NSLOT];

/* The module of dev in the table with hashes h1, h2, or NULL; the caller
 * holds the lock. */
static CUmodule known(int dev, uint64_t h1, uint64_t h2) {
  for (entry *e = table[(unsigned)((h1 ^ (uint64_t)dev) % NSLOT)]; e; e = e->next)
    if (e->h1 == h1 && e->h2 == h2 && e->dev == dev) return e->mod;
  return NULL;
}

/* The loaded module of src on dev: from memory, the disk cache or NVRTC.
 * The compiler runs outside the lock, so threads compile side by side (the
 * JIT's chunks, lazy fusion's background builds) and lookups never wait for
 * a compile; two threads compiling the same source keep the first module. */
static mt_status get_module(int dev, const char *src, CUmodule *out) {
  uint64_t h1 = fnv(src, strlen(src), 0xcbf29ce484222325ull), h2 = fnv(src, strlen(src), 0x84222325cbf29ce4ull);
  unsigned slot = (unsigned)((h1 ^ (uint64_t)dev) % NSLOT);
  pthread_mutex_lock(&lock);
  CUmodule hit = known(dev, h1, h2);
  if (hit) stats.mem_hits++;
  pthread_mutex_unlock(&lock);
  if (hit) {
    *out = hit;
    return MT_OK;
  }
  pthread_once(&load_once, load);
  if (!loaded) return mt_fail(MT_EDEVICE, "cannot compile CUDA kernels: %s", load_error);
  int vmaj = 0, vmin = 0;
  char arch[256], stamp[400];
  mt_status st = mt_cuda_arch(dev, arch, sizeof arch);
  if (st) return st;
  /* a source that uses Hopper's arch-specific instructions (wgmma) asks for sm_90a */
  if (!strcmp(arch, "sm_90") && strstr(src, "// MT_ARCH_90A\n")) strcat(arch, "a");
  mt_nvrtc.Version(&vmaj, &vmin);
  int len = snprintf(stamp, sizeof stamp, "%s nvrtc %d.%d", arch, vmaj, vmin);
  for (int i = 0; i < NOPTS && len > 0 && (size_t)len < sizeof stamp; i++)
    len += snprintf(stamp + len, sizeof stamp - (size_t)len, " %s", rtc_opts[i]);
  uint64_t k1 = fnv(stamp, strlen(stamp), h1), k2 = fnv(stamp, strlen(stamp), h2);
  char dir[1024], path[1200], key[40];
  cache_dir(dir, sizeof dir);
  snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)k1, (unsigned long long)k2);
  snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
  size_t n = 0;
  char *bin = read_entry(path, &n);
  if (bin) {
    count(&stats.disk_hits);
  } else {
    if ((st = compile(src, arch, &bin, &n))) return st;
    write_entry(dir, path, key, bin, n);
  }
  CUmodule mod = NULL;
  st = mt_cuda_check(mt_cu.ModuleLoadData(&mod, bin), dev, "load a compiled kernel");
  free(bin);
  if (st) return st;
  entry *e = malloc(sizeof *e);
  if (!e) return mt_fail(MT_ENOMEM, "out of memory");
  pthread_mutex_lock(&lock);
  CUmodule first = known(dev, h1, h2);
  if (first) { /* another thread got there first: keep its module (ours stays loaded, unused) */
    free(e);
    mod = first;
  } else {
    *e = (entry){h1, h2, dev, mod, table[slot]};
    table[slot] = e;
  }
  pthread_mutex_unlock(&lock);
  *out = mod;
  return MT_OK;
}

mt_status mt_cuda_kernel(int dev, const char *src, const char *name, void **fn) {
  mt_device d = {MT_CUDA, (int8_t)dev};
  mt_status st = mt_cuda_check_device(d, "kernel");
  if (st) return st;
  CUmodule mod = NULL;
  st = get_module(dev, src, &mod);
  if (st) return st;
  CUfunction f = NULL;
  st = mt_cuda_check(mt_cu.ModuleGetFunction(&f, mod, name), dev, "kernel lookup");
  if (!st) *fn = f;
  return st;
}

mt_status mt_cuda_launch_on(int dev, void *stream, void *fn, int64_t n, void **args, const char *op) {
  if (n <= 0) return MT_OK;
  int64_t blocks = (n + 255) / 256;
  if (blocks > (1 << 16)) blocks = 1 << 16; /* grid-stride loops cover the rest */
  mt_cuda_note_launch(dev, op);
  return mt_cuda_check(mt_cu.LaunchKernel(fn, (unsigned)blocks, 1, 1, 256, 1, 1, 0, stream, args, NULL), dev, op);
}

mt_status mt_cuda_launch(int dev, void *fn, int64_t n, void **args, const char *op) {
  if (n <= 0) return MT_OK;
  return mt_cuda_launch_on(dev, mt_cuda_current_stream(dev).handle, fn, n, args, op);
}

mt_status mt_cuda_launch_grid(int dev, void *fn, int64_t blocks, int threads, void **args, const char *op) {
  if (blocks <= 0) return MT_OK;
  if (blocks > (1 << 20)) blocks = 1 << 20; /* the kernels loop over the rest */
  mt_cuda_stream s = mt_cuda_current_stream(dev);
  mt_cuda_note_launch(dev, op);
  return mt_cuda_check(mt_cu.LaunchKernel(fn, (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0, s.handle, args, NULL),
                       dev, op);
}
