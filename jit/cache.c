/* cache.c -- compiling generated C into a shared object and caching it: in
 * memory (key -> loaded handle) and on disk under $XDG_CACHE_HOME/moontorch/
 * jit (or ~/.cache/moontorch/jit). The key hashes the canonical IR, the
 * generated C (so a changed code generator never loads an old object), the
 * compiler flags (target included), the CPU's identity and the compiler's
 * version line. A disk entry is
 * <key>.so plus <key>.sum (a hash of the .so's bytes), each written to a
 * temporary file and renamed into place; an entry whose hash does not match
 * is rebuilt, never loaded. The compiler is $CC, else cc; one runs at a time. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "files.h"
#include "ir.h"

#define CFLAGS "-O3 -fno-math-errno -fno-trapping-math -fopenmp-simd -shared -fPIC -w"

/* The target: kernels are built on the machine that runs them, so for the
 * host's own instruction set (-march=native: AVX-512 where there is some),
 * unless MOONTORCH_JIT_MARCH names another (x86-64-v3 for AVX2). Because
 * "native" means a different thing on another CPU sharing the cache
 * directory, the key also hashes the CPU's identity and feature bits. */
static const char *target_flags(void) {
  static char flags[128];
  if (!flags[0]) {
    const char *m = getenv("MOONTORCH_JIT_MARCH");
    if (!m || !*m || strspn(m, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(m)) m = "native";
    snprintf(flags, sizeof flags, "-march=%s", m);
  }
  return flags;
}

static void cpu_identity(char *out, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, l1[4] = {0}, l7[4] = {0}, vendor[3] = {0};
  if (!__get_cpuid(0, &a, &vendor[0], &vendor[2], &vendor[1])) a = 0;
  if (a >= 1) __get_cpuid(1, &l1[0], &l1[1], &l1[2], &l1[3]);
  if (a >= 7) __cpuid_count(7, 0, l7[0], l7[1], l7[2], l7[3]);
  snprintf(out, n, "%.12s %x %x %x %x %x %x", (const char *)vendor, l1[0], l1[2], l1[3], l7[1], l7[2], l7[3]);
#else
  snprintf(out, n, "unknown cpu");
#endif
}

static mtj_stats stats;

typedef struct entry {
  char key[40];
  void *handle;
  struct entry *next;
} entry;
static entry *mem;

mtj_stats mtj_get_stats(void) {
  mtj_stats s = stats;
  mtj_replay_stats(&s.graph_captures, &s.graph_replays, &s.graph_failures);
  return s;
}

void mtj_reset(void) {
  memset(&stats, 0, sizeof stats);
  mtj_replay_reset_stats();
  while (mem) { /* handles stay loaded: compiled functions may still use them */
    entry *n = mem->next;
    free(mem);
    mem = n;
  }
}

/* 64-bit FNV-1a with a seed; two seeds make the 128-bit keys. */
static uint64_t fnv(const void *p, size_t n, uint64_t h) { return mt_fnv1a(p, n, h); }

static const char *compiler(void) {
  const char *cc = getenv("CC");
  return cc && *cc ? cc : "cc";
}

static const char *cache_dir(void) {
  static char dir[1024];
  mt_cache_dir("jit", dir, sizeof dir);
  return dir;
}

static char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, len = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 65536;
      char *b = realloc(buf, cap);
      if (!b) break;
      buf = b;
    }
    size_t k = fread(buf + len, 1, cap - len, f);
    len += k;
    if (k == 0) break;
  }
  fclose(f);
  *n = len;
  return buf;
}

/* The compiler binary as "path size mtime" (found on PATH when its name has
 * no '/'), so a changed compiler gives another stamp; "" if not found. */
static void cc_stamp(const char *cc, char *out, size_t n) {
  struct stat st;
  char buf[1200];
  const char *path = strchr(cc, '/') ? "" : getenv("PATH");
  out[0] = 0;
  if (!path) return;
  for (const char *p = path;;) {
    size_t len = strcspn(p, ":");
    if (strchr(cc, '/')) snprintf(buf, sizeof buf, "%s", cc);
    else snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, cc);
    if ((len || strchr(cc, '/')) && stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
      snprintf(out, n, "%s %lld %lld.%09ld", buf, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
               (long)st.st_mtim.tv_nsec);
      return;
    }
    if (!p[len] || strchr(cc, '/')) return;
    p += len + 1;
  }
}

/* The first line of `cc --version` (cached per compiler name). Running the
 * compiler costs milliseconds, so the line is also kept in the cache
 * directory as cc-<hash of the binary's stamp>.ver: a warm start from the
 * disk cache runs no compiler at all. */
static const char *cc_version(void) {
  static char name[256], line[256];
  const char *cc = compiler();
  if (strcmp(name, cc) == 0) return line;
  snprintf(name, sizeof name, "%s", cc);
  line[0] = 0;
  char stamp[1400], dir[1024], vf[1200], tmp[1300];
  cc_stamp(cc, stamp, sizeof stamp);
  snprintf(dir, sizeof dir, "%s", cache_dir());
  unsigned long long sh = fnv(stamp, strlen(stamp), 0xcbf29ce484222325ull);
  snprintf(vf, sizeof vf, "%s/cc-%016llx.ver", dir, sh);
  size_t n = 0;
  char *known = stamp[0] ? read_all(vf, &n) : NULL;
  if (known && n > 1 && n < sizeof line && known[n - 1] == '\n') {
    memcpy(line, known, n - 1);
    line[n - 1] = 0;
    free(known);
    return line;
  }
  free(known);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "'%s' --version 2>/dev/null", cc);
  FILE *f = strchr(cc, '\'') ? NULL : popen(cmd, "r");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    pclose(f);
  }
  line[strcspn(line, "\n")] = 0;
  snprintf(tmp, sizeof tmp, "%s.tmp-%d", vf, (int)getpid());
  if (stamp[0] && line[0] && !mt_mkdirs(dir) && (f = fopen(tmp, "w"))) { /* written whole, then renamed */
    bool ok = fprintf(f, "%s\n", line) > 0;
    if (fclose(f) || !ok || rename(tmp, vf)) remove(tmp);
  }
  return line;
}

static uint64_t file_hash(const char *path, bool *ok) {
  size_t n = 0;
  char *b = read_all(path, &n);
  *ok = b != NULL;
  uint64_t h = b ? fnv(b, n, 0xcbf29ce484222325ull) : 0;
  free(b);
  return h;
}

/* Loads path if its checksum file matches; NULL otherwise. */
static void *load_checked(const char *so, const char *sum) {
  bool ok;
  uint64_t h = file_hash(so, &ok);
  if (!ok) return NULL;
  FILE *f = fopen(sum, "r");
  unsigned long long want = 0;
  int got = f ? fscanf(f, "%llx", &want) : 0;
  if (f) fclose(f);
  if (got != 1 || want != h) {
    stats.corrupt++;
    return NULL;
  }
  return dlopen(so, RTLD_NOW | RTLD_LOCAL);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static mt_status bind_all(void *h, int nk, mtj_kernel_fn *fns) {
  for (int i = 0; i < nk; i++) {
    char name[32];
    snprintf(name, sizeof name, "mtj_k%d", i);
    void *f = dlsym(h, name);
    if (!f) return mt_fail(MT_EIO, "the compiled graph lacks kernel %s", name);
    memcpy(&fns[i], &f, sizeof f);
  }
  return MT_OK;
}

mt_status mtj_load(const char *text, const char *src, int nk, mtj_kernel_fn *fns) {
  const char *ver = cc_version();
  uint64_t h1 = fnv(text, strlen(text), 0xcbf29ce484222325ull), h2 = fnv(text, strlen(text), 0x84222325cbf29ce4ull);
  const char *tf = target_flags();
  char cpu[160];
  cpu_identity(cpu, sizeof cpu);
  h1 = fnv(src, strlen(src), h1), h2 = fnv(src, strlen(src), h2); /* a new code generator: new entries */
  h1 = fnv(CFLAGS, sizeof CFLAGS, h1), h2 = fnv(CFLAGS, sizeof CFLAGS, h2);
  h1 = fnv(tf, strlen(tf), h1), h2 = fnv(tf, strlen(tf), h2);
  h1 = fnv(cpu, strlen(cpu), h1), h2 = fnv(cpu, strlen(cpu), h2);
  h1 = fnv(ver, strlen(ver), h1), h2 = fnv(ver, strlen(ver), h2);
  char key[40];
  snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
  for (entry *e = mem; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      stats.mem_hits++;
      return bind_all(e->handle, nk, fns);
    }
  char dir[1024], so[1200], sum[1200];
  snprintf(dir, sizeof dir, "%s", cache_dir());
  snprintf(so, sizeof so, "%s/%s.so", dir, key);
  snprintf(sum, sizeof sum, "%s/%s.sum", dir, key);
  void *h = load_checked(so, sum);
  if (h) {
    stats.disk_hits++;
  } else {
    if (!ver[0]) return mt_fail(MT_EIO, "no working C compiler ('%s --version' failed; set CC)", compiler());
    if (mt_mkdirs(dir)) return mt_fail(MT_EIO, "cannot create the JIT cache directory %s", dir);
    if (strchr(dir, '\'') || strchr(compiler(), '\''))
      return mt_fail(MT_EIO, "the cache directory or compiler name contains a quote");
    char c[1200], tso[1200], tsum[1200], err[1200], cmd[4096];
    int pid = (int)getpid();
    snprintf(c, sizeof c, "%s/tmp-%d-%s.c", dir, pid, key);
    snprintf(tso, sizeof tso, "%s/tmp-%d-%s.so", dir, pid, key);
    snprintf(tsum, sizeof tsum, "%s/tmp-%d-%s.sum", dir, pid, key);
    snprintf(err, sizeof err, "%s/tmp-%d-%s.err", dir, pid, key);
    FILE *f = fopen(c, "w");
    if (!f) return mt_fail(MT_EIO, "cannot write %s", c);
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' " CFLAGS " %s -o '%s' '%s' -lm 2>'%s'", compiler(), tf, tso, c, err);
    double t0 = now();
    int rc = system(cmd);
    stats.cc_seconds += now() - t0;
    stats.cc_runs++;
    if (rc != 0) {
      size_t n = 0;
      char *msg = read_all(err, &n);
      char first[200] = "";
      if (msg) { /* the first line that says "error", else the first line */
        const char *at = strstr(msg, "error");
        while (at && at > msg && at[-1] != '\n') at--;
        snprintf(first, sizeof first, "%s", at ? at : msg);
        first[strcspn(first, "\n")] = 0;
      }
      free(msg);
      remove(c), remove(err), remove(tso);
      return mt_fail(MT_EIO, "the C compiler '%s' failed (status %d)%s%s", compiler(), rc, first[0] ? ": " : "",
                     first);
    }
    remove(c), remove(err);
    bool ok;
    uint64_t fh = file_hash(tso, &ok);
    f = fopen(tsum, "w");
    if (!ok || !f) {
      if (f) fclose(f);
      remove(tso);
      return mt_fail(MT_EIO, "cannot write the JIT cache entry in %s", dir);
    }
    fprintf(f, "%016llx\n", (unsigned long long)fh);
    fclose(f);
    if (rename(tso, so) || rename(tsum, sum)) {
      remove(tso), remove(tsum);
      return mt_fail(MT_EIO, "cannot rename the JIT cache entry into %s", dir);
    }
    h = load_checked(so, sum);
    if (!h) return mt_fail(MT_EIO, "cannot load the compiled graph: %s", dlerror() ? dlerror() : so);
  }
  entry *e = calloc(1, sizeof *e);
  if (e) {
    snprintf(e->key, sizeof e->key, "%s", key);
    e->handle = h;
    e->next = mem;
    mem = e;
  }
  return bind_all(h, nk, fns);
}
