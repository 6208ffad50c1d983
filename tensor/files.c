/* files.c -- see files.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "files.h"

uint64_t mt_fnv1a(const void *p, size_t n, uint64_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

int mt_mkdirs(char *path) {
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      int r = mkdir(path, 0755);
      *p = '/';
      if (r && errno != EEXIST) return -1;
    }
  return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

void mt_cache_dir(const char *sub, char *dir, size_t n) {
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  if (x && *x) snprintf(dir, n, "%s/moontorch/%s", x, sub);
  else snprintf(dir, n, "%s/.cache/moontorch/%s", h && *h ? h : "/tmp", sub);
}

void *mt_dlopen_first(const char *env, const char *const *names, size_t nnames, const char *const *dirs,
                      size_t ndirs) {
  const char *e = env ? getenv(env) : NULL;
  void *h = e && *e ? dlopen(e, RTLD_NOW | RTLD_LOCAL) : NULL;
  for (size_t d = 0; d <= ndirs && !h; d++) /* d == 0: the loader's own path */
    for (size_t i = 0; i < nnames && !h; i++) {
      char path[512];
      snprintf(path, sizeof path, "%s%s", d ? dirs[d - 1] : "", names[i]);
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
  return h;
}
