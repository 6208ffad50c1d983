/* files.h -- small host-side helpers shared by the on-disk caches (jit/
 * cache.c for compiled C, tensor/cuda/nvrtc.c for cubins) and the loaders
 * of optional libraries (tensor/cuda/): hashing, directories, dlopen. */
#ifndef MT_FILES_H
#define MT_FILES_H
#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of p[0..n) continuing from h (start: 0xcbf29ce484222325). */
uint64_t mt_fnv1a(const void *p, size_t n, uint64_t h);
/* mkdir -p; 0 on success (or when it exists). path is restored. */
int mt_mkdirs(char *path);
/* $XDG_CACHE_HOME/moontorch/<sub>, else $HOME/.cache/moontorch/<sub>. */
void mt_cache_dir(const char *sub, char *dir, size_t n);
/* dlopen of the library named by environment variable env (when set), else
 * the first of names found in the loader's path or in dirs; NULL if none. */
void *mt_dlopen_first(const char *env, const char *const *names, size_t nnames, const char *const *dirs,
                      size_t ndirs);

#endif
