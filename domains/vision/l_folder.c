/* l_folder.c -- the C half of torch.vision.datasets' folder datasets:
 * listing a directory and loading an image file as torchvision's default
 * loader does (with DataLoader(num_workers > 0) this runs in the worker
 * processes, nn/data/l_workers.c).
 *   torch.vision._folder.scandir(path) -> {{name=, dir=bool}, ...} (unsorted)
 *   torch.vision._folder.load_rgb(path) -> uint8 3 x H x W (PIL's convert("RGB")) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image.h"
#include "mtl.h"

#define MAX_BYTES ((size_t)1 << 30)

/* scandir(path): the entries of a directory but . and .., each with
 * dir = true when it is (or links to) a directory. */
static int l_scandir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  DIR *d = opendir(path);
  if (!d) return luaL_error(L, "%s: %s", path, strerror(errno));
  lua_newtable(L);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    char *full = malloc(len);
    if (!full) {
      closedir(d);
      return luaL_error(L, "scandir: out of memory");
    }
    snprintf(full, len, "%s/%s", path, e->d_name);
    struct stat st;
    int isdir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
    free(full);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, e->d_name);
    lua_setfield(L, -2, "name");
    lua_pushboolean(L, isdir);
    lua_setfield(L, -2, "dir");
    lua_rawseti(L, -2, ++n);
  }
  closedir(d);
  return 1;
}

/* Reads the whole file at path into *buf (malloc'ed) of *n bytes; on error
 * writes the reason into err. */
static int slurp(const char *path, unsigned char **buf, size_t *n, char *err, size_t errn) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, errn, "%s: %s", path, strerror(errno)), -1;
  size_t cap = 1 << 16, len = 0;
  unsigned char *p = malloc(cap);
  for (size_t got = 1; p && got;) {
    if (len == cap) {
      unsigned char *q = realloc(p, cap *= 2);
      if (!q) free(p);
      p = q;
      if (!p) break;
    }
    got = fread(p + len, 1, cap - len, f);
    len += got;
  }
  int bad = !p || ferror(f);
  fclose(f);
  if (bad) {
    free(p);
    return snprintf(err, errn, "%s: %s", path, p ? "read error" : "out of memory"), -1;
  }
  *buf = p, *n = len;
  return 0;
}

/* The image file at path as a uint8 3 x H x W RGB tensor *out (a view of
 * H x W x 3 pixels, as decode_image's); on error writes "path: reason" into
 * err. */
static int load_rgb(const char *path, mt_tensor **out, char *err, size_t errn) {
  unsigned char *buf = NULL;
  size_t n = 0;
  if (slurp(path, &buf, &n, err, errn)) return -1;
  mt_status st = mtd_decode_rgb8(buf, n, MAX_BYTES, out);
  free(buf);
  if (st) return snprintf(err, errn, "%s: %s", path, mt_errmsg()), -1;
  return 0;
}

/* load_rgb(path) */
static int l_load_rgb(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char err[512];
  mt_tensor *t = NULL;
  if (load_rgb(path, &t, err, sizeof err)) return luaL_error(L, "%s", err);
  mtl_push_tensor(L, t);
  return 1;
}

static const mtl_reg regs[] = {
    {"scandir", l_scandir, MTL_FN,
     "torch.vision._folder.scandir(path) -- the entries of a directory as {name=, dir=} (internal)"},
    {"load_rgb", l_load_rgb, MTL_FN,
     "torch.vision._folder.load_rgb(path) -- an image file as uint8 3 x H x W RGB, as PIL's convert('RGB') (internal)"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._folder" */
int luaopen_torch_vision__folder(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
