/* l_memmap.c -- torch.rl.data._memmap: CPU tensors whose data is a file
 * mapped into memory (LazyMemmapStorage). The file is created or resized to
 * exactly the tensor's bytes; the tensor owns the mapping (mt_from_mapping)
 * and unmaps it when freed. Nothing else touches files here. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mtl.h"

/* open(path, shape, dtype[, unlink=false]) -> a tensor of shape and dtype
 * over the file path (created, or grown/shrunk to size; contents of an
 * existing file of the right size are kept, new bytes are zero). With
 * unlink the name is removed at once: the data lives while the tensor does. */
static int l_open(lua_State *L) {
  const char *fn = "LazyMemmapStorage";
  const char *path = luaL_checkstring(L, 1);
  int64_t shape[MT_MAXDIM];
  int ndim = mtl_size(L, 2, 2, shape, fn);
  mt_dtype dt = mtl_check_dtype(L, 3, fn);
  int unlink_now = lua_toboolean(L, 4);
  int64_t n = mt_checked_numel(shape, ndim);
  if (n < 0) return luaL_error(L, "%s: the shape of '%s' is too large", fn, path);
  size_t bytes = (size_t)n * mt_dtype_size(dt), maplen = bytes ? bytes : 1;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return luaL_error(L, "%s: cannot open '%s': %s", fn, path, strerror(errno));
  if (ftruncate(fd, (off_t)maplen) != 0) {
    int e = errno;
    close(fd);
    return luaL_error(L, "%s: cannot size '%s' to %I bytes: %s", fn, path, (lua_Integer)maplen, strerror(e));
  }
  void *map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (unlink_now) unlink(path);
  if (map == MAP_FAILED) return luaL_error(L, "%s: cannot map '%s': %s", fn, path, strerror(e));
  mt_tensor *t = NULL;
  if (mt_from_mapping(map, maplen, shape, ndim, dt, &t) != MT_OK) return luaL_error(L, "%s: %s", fn, mt_errmsg());
  mtl_push_tensor(L, t);
  return 1;
}

static const mtl_reg regs[] = {
    {"open", l_open, MTL_FN,
     "torch.rl.data._memmap.open(path, shape, dtype[, unlink]) -- internal: a CPU tensor over a file mapped into "
     "memory"},
    {NULL, NULL, 0, NULL}};

/* require "torch.rl.data._memmap" */
int luaopen_torch_rl_data__memmap(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
