/* l_folder.c -- the C half of torch.vision.datasets' folder datasets:
 * listing a directory (scandir), and a pool of threads that read and decode
 * image files for DataLoader(num_workers > 0), so that decoding runs beside
 * the training loop. Worker threads never touch Lua: each task is a list of
 * paths copied at put() and comes back as C x H x W tensors at take().
 *   torch.vision._folder.scandir(path) -> {{name=, dir=bool}, ...} (unsorted)
 *   torch.vision._folder.load_rgb(path) -> uint8 3 x H x W (PIL's convert("RGB"))
 *   p = torch.vision._folder.decoder(nworkers)   -- threads doing load_rgb
 *   p:put(ticket, {path, ...}); p:take(ticket) -> {tensor, ...}; p:close() */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image.h"
#include "mtl.h"

#define DEC_MT "torch.vision.ImageDecoder"
#define MAXW 32
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

typedef struct task {
  struct task *next;
  lua_Integer ticket;
  char **paths;
  mt_tensor **out;
  int n, claimed, done;
  char err[512];
} task;

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t work, ready;
  task *tasks, *tail;
  pthread_t th[MAXW];
  int nworkers, closing, closed;
} decoder;

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
 * err. No Lua: worker threads call it. */
static int load_rgb(const char *path, mt_tensor **out, char *err, size_t errn) {
  unsigned char *buf = NULL;
  size_t n = 0;
  if (slurp(path, &buf, &n, err, errn)) return -1;
  mt_status st = mtd_decode_rgb8(buf, n, MAX_BYTES, out);
  free(buf);
  if (st) return snprintf(err, errn, "%s: %s", path, mt_errmsg()), -1;
  return 0;
}

/* Decodes every path of t into t->out; stops at the first failure. */
static void run_task(task *t) {
  for (int k = 0; k < t->n; k++)
    if (load_rgb(t->paths[k], &t->out[k], t->err, sizeof t->err)) return;
}

static void *worker(void *arg) {
  decoder *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    task *t = NULL;
    while (!p->closing) {
      for (t = p->tasks; t && t->claimed; t = t->next) {}
      if (t) break;
      pthread_cond_wait(&p->work, &p->mu);
    }
    if (p->closing) break;
    t->claimed = 1;
    pthread_mutex_unlock(&p->mu);
    run_task(t);
    pthread_mutex_lock(&p->mu);
    t->done = 1;
    pthread_cond_broadcast(&p->ready);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static void free_task(task *t) {
  for (int k = 0; k < t->n; k++) {
    if (t->paths) free(t->paths[k]);
    if (t->out) mt_release(t->out[k]);
  }
  free(t->paths);
  free(t->out);
  free(t);
}

static void shutdown_decoder(decoder *p) {
  if (p->closed) return;
  pthread_mutex_lock(&p->mu);
  p->closing = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->th[i], NULL);
  for (task *t = p->tasks, *n; t; t = n) {
    n = t->next;
    free_task(t);
  }
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->ready);
  p->closed = 1;
}

static decoder *check_dec(lua_State *L) {
  decoder *p = luaL_checkudata(L, 1, DEC_MT);
  if (p->closed) luaL_error(L, "image decoder: used after close");
  return p;
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

/* decoder(nworkers) */
static int l_decoder(lua_State *L) {
  lua_Integer nw = luaL_checkinteger(L, 1);
  if (nw < 1 || nw > MAXW) return luaL_error(L, "image decoder: 1 to %d workers, got %d", MAXW, (int)nw);
  decoder *p = lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->ready, NULL);
  luaL_setmetatable(L, DEC_MT);
  for (int i = 0; i < nw; i++) {
    if (pthread_create(&p->th[i], NULL, worker, p) != 0) {
      shutdown_decoder(p);
      return luaL_error(L, "image decoder: cannot start a worker thread");
    }
    p->nworkers++;
  }
  return 1;
}

/* p:put(ticket, {path, ...}) */
static int l_put(lua_State *L) {
  decoder *p = check_dec(L);
  lua_Integer ticket = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  int n = (int)lua_rawlen(L, 3);
  task *t = calloc(1, sizeof *t);
  if (!t || !(t->paths = calloc((size_t)n + 1, sizeof *t->paths)) || !(t->out = calloc((size_t)n + 1, sizeof *t->out))) {
    if (t) free(t->paths), free(t);
    return luaL_error(L, "image decoder: out of memory");
  }
  t->ticket = ticket;
  t->n = n;
  for (int k = 0; k < n; k++) {
    lua_rawgeti(L, 3, k + 1);
    const char *s = lua_tostring(L, -1);
    t->paths[k] = s ? strdup(s) : NULL;
    lua_pop(L, 1);
    if (!t->paths[k]) {
      free_task(t);
      return luaL_error(L, "image decoder: path %d is not a string", k + 1);
    }
  }
  pthread_mutex_lock(&p->mu);
  if (p->tail) p->tail->next = t;
  else p->tasks = t;
  p->tail = t;
  pthread_cond_signal(&p->work);
  pthread_mutex_unlock(&p->mu);
  return 0;
}

/* p:take(ticket) -> {tensor, ...}, waiting for the workers; raises the
 * first file's error */
static int l_take(lua_State *L) {
  decoder *p = check_dec(L);
  lua_Integer ticket = luaL_checkinteger(L, 2);
  task *t = NULL, *prev = NULL;
  pthread_mutex_lock(&p->mu);
  for (t = p->tasks; t && t->ticket != ticket; t = t->next) prev = t;
  while (t && !t->done) pthread_cond_wait(&p->ready, &p->mu);
  if (t) {
    prev = NULL;
    for (task *q = p->tasks; q != t; q = q->next) prev = q;
    if (prev) prev->next = t->next;
    else p->tasks = t->next;
    if (p->tail == t) p->tail = prev;
  }
  pthread_mutex_unlock(&p->mu);
  if (!t) return luaL_error(L, "image decoder: no batch with ticket %d", (int)ticket);
  if (t->err[0]) {
    lua_pushstring(L, t->err);
    free_task(t);
    return lua_error(L);
  }
  lua_createtable(L, t->n, 0);
  for (int k = 0; k < t->n; k++) {
    mtl_push_tensor(L, t->out[k]);
    t->out[k] = NULL;
    lua_rawseti(L, -2, k + 1);
  }
  free_task(t);
  return 1;
}

static int l_close(lua_State *L) {
  shutdown_decoder(luaL_checkudata(L, 1, DEC_MT));
  return 0;
}

static const mtl_reg regs[] = {
    {"scandir", l_scandir, MTL_FN,
     "torch.vision._folder.scandir(path) -- the entries of a directory as {name=, dir=} (internal)"},
    {"load_rgb", l_load_rgb, MTL_FN,
     "torch.vision._folder.load_rgb(path) -- an image file as uint8 3 x H x W RGB, as PIL's convert('RGB') (internal)"},
    {"decoder", l_decoder, MTL_FN,
     "torch.vision._folder.decoder(nworkers) -- threads that load_rgb image files (internal)"},
    {NULL, NULL, 0, NULL}};

/* require "torch.vision._folder" */
int luaopen_torch_vision__folder(lua_State *L) {
  if (luaL_newmetatable(L, DEC_MT)) {
    static const luaL_Reg m[] = {{"put", l_put}, {"take", l_take}, {"close", l_close}, {NULL, NULL}};
    lua_newtable(L);
    luaL_setfuncs(L, m, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
