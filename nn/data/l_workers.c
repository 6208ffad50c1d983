/* l_workers.c -- DataLoader worker processes, as PyTorch's: each worker is a
 * fork of the loading process, so it holds the dataset, its transforms and
 * every Lua value as they were at the fork, and runs __getitem__ and the
 * collate function itself; batches come back through a socket, their big
 * tensors through shared memory mapped by the parent (wire.c).
 *   pool = torch.utils.data._workers.spawn(n, fn)
 *       forks n workers; worker i (1-based) runs fn(i, chan) and exits
 *   pool:order(i, order)        the epoch's sample order (int64) to worker i
 *   pool:put(i, ticket)         worker i makes batch number `ticket`
 *   pool:take(i[, timeout_s])   -> ticket, ok, batch-or-message (blocks)
 *   pool:pending(i)             puts to worker i not taken yet
 *   pool:pid(i), pool:close()   (close also on __gc / __close)
 * In a worker:
 *   chan:recv() -> "order", tensor | "batch", ticket | nil when the parent
 *                  closed the pool or died
 *   chan:send(ticket, true, batch) | chan:send(ticket, false, message)
 *                  -> false when the main process has closed the pool
 * Workers ignore Ctrl-C (the parent stops them), die with their parent,
 * run the engine on one thread and may not use CUDA. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"
#include "wire.h"

#define POOL_MT "torch.WorkerPool"
#define CHAN_MT "torch.WorkerChannel"
#define MAXW 64
#define MAGIC 0x4d545744u /* "MTWD" */

enum { K_ORDER = 1, K_BATCH, K_RESULT, K_ERROR };

typedef struct hdr {
  uint32_t magic, kind;
  int64_t ticket;
  uint64_t len;   /* payload bytes after the header */
  uint64_t fdlen; /* bytes of the memfd sent with the header (0: none) */
} hdr;

typedef struct pool {
  pid_t owner; /* the process that forked the workers; copies in workers do nothing */
  int n;
  int sock[MAXW];
  pid_t pid[MAXW];
  int pending[MAXW];
  int closed;
} pool;

/* Parent-side sockets of every open pool of this process: a new worker
 * closes them, so that closing a pool is seen by its own workers only. */
static int open_socks[1024];
static int n_open_socks;

static void track(int fd) {
  if (n_open_socks < (int)(sizeof open_socks / sizeof *open_socks)) open_socks[n_open_socks++] = fd;
}

static void untrack(int fd) {
  for (int i = 0; i < n_open_socks; i++)
    if (open_socks[i] == fd) {
      open_socks[i] = open_socks[--n_open_socks];
      return;
    }
}

/* ---- messages ---- */
static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    c += w, n -= (size_t)w;
  }
  return 0;
}

/* 1 when all n bytes came, 0 at end of stream before any, -1 on error. */
static int read_all(int fd, void *p, size_t n) {
  char *c = p;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, c + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return got ? -1 : 0;
    got += (size_t)r;
  }
  return 1;
}

/* Sends the header (with fd attached when fd >= 0) and the payload. */
static int send_msg(int sock, uint32_t kind, int64_t ticket, const void *payload, size_t len, int fd, uint64_t fdlen) {
  hdr h = {MAGIC, kind, ticket, len, fd >= 0 ? fdlen : 0};
  struct iovec iov = {&h, sizeof h};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0) {
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t w;
  do w = sendmsg(sock, &m, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0) return -1;
  if ((size_t)w < sizeof h && write_all(sock, (char *)&h + w, sizeof h - (size_t)w)) return -1;
  return len ? write_all(sock, payload, len) : 0;
}

/* Reads a header and the fd that came with it (-1 if none): 1, 0 at end
 * of stream, -1 on error or a bad header. */
static int recv_hdr(int sock, hdr *h, int *fd) {
  *fd = -1;
  struct iovec iov = {h, sizeof *h};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
  ssize_t r;
  do r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r <= 0) return r == 0 ? 0 : -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(c), sizeof *fd);
  if ((size_t)r < sizeof *h && read_all(sock, (char *)h + r, sizeof *h - (size_t)r) != 1) return -1;
  return h->magic == MAGIC ? 1 : -1;
}

/* What a message in flight owns, freed even when a Lua error unwinds. */
typedef struct box {
  mt_buf buf;
  char *payload;
  int fd;
} box;

static void box_free(box *b) {
  mt_buf_free(&b->buf);
  free(b->payload);
  b->payload = NULL;
  if (b->fd >= 0) close(b->fd);
  b->fd = -1;
}

static int box_gc(lua_State *L) {
  box_free(luaL_checkudata(L, 1, "torch.WorkerBox"));
  return 0;
}

static box *push_box(lua_State *L) {
  box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  b->fd = -1;
  if (luaL_newmetatable(L, "torch.WorkerBox")) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

/* Reads a message's payload into b->payload (NUL-terminated). */
static int read_payload(int sock, const hdr *h, box *b) {
  if (h->len > ((uint64_t)1 << 40)) return -1;
  b->payload = malloc((size_t)h->len + 1);
  if (!b->payload) return -1;
  b->payload[h->len] = 0;
  return h->len ? (read_all(sock, b->payload, (size_t)h->len) == 1 ? 0 : -1) : 0;
}

/* ---- the worker's side ---- */
static int *check_chan(lua_State *L) { return luaL_checkudata(L, 1, CHAN_MT); }

static int chan_recv(lua_State *L) {
  int sock = *check_chan(L);
  hdr h;
  int fd;
  box *b = push_box(L);
  int r = recv_hdr(sock, &h, &fd);
  b->fd = fd;
  if (r <= 0 || read_payload(sock, &h, b)) return 0; /* the parent is gone: stop */
  if (h.kind == K_ORDER) {
    int64_t n = (int64_t)(h.len / 8);
    mt_tensor *t = NULL;
    if (mt_empty(&n, 1, MT_INT64, mt_cpu(), &t)) return luaL_error(L, "DataLoader worker: %s", mt_errmsg());
    memcpy(mt_data(t), b->payload, (size_t)n * 8);
    lua_pushliteral(L, "order");
    mtl_push_tensor(L, t);
    return 2;
  }
  lua_pushliteral(L, "batch");
  lua_pushinteger(L, h.ticket);
  return 2;
}

static int chan_send(lua_State *L) {
  int sock = *check_chan(L);
  lua_Integer ticket = luaL_checkinteger(L, 2);
  int ok = lua_toboolean(L, 3);
  lua_settop(L, 4);
  box *b = push_box(L);
  uint64_t fdlen = 0;
  if (ok) {
    mtn_wire_encode(L, 4, &b->buf, &b->fd, &fdlen, "DataLoader worker");
  } else {
    size_t n;
    const char *s = luaL_tolstring(L, 4, &n);
    mt_buf_put(&b->buf, s, n);
  }
  int bad = send_msg(sock, ok ? K_RESULT : K_ERROR, ticket, b->buf.p, b->buf.n, b->fd, fdlen);
  box_free(b);
  lua_pushboolean(L, !bad); /* false: the main process closed the pool */
  return 1;
}

/* In a fresh worker: runs fn(i, chan) and exits; never returns. */
static void worker_main(lua_State *L, pool *p, int i, int sock, int fn) {
  for (int j = 0; j < n_open_socks; j++) close(open_socks[j]);
  n_open_socks = 0;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != p->owner) _exit(1); /* the parent died before prctl */
  signal(SIGINT, SIG_IGN);
  mt_set_num_threads(1);
  mt_cuda_forbid("CUDA cannot be used in a DataLoader worker process (a fork of the main process); "
                 "move batches to the GPU in the main loop");
  lua_pushvalue(L, fn);
  lua_pushinteger(L, i + 1);
  int *c = lua_newuserdatauv(L, sizeof *c, 0);
  *c = sock;
  luaL_setmetatable(L, CHAN_MT);
  int st = lua_pcall(L, 2, 0, 0);
  if (st != LUA_OK) fprintf(stderr, "DataLoader worker %d: %s\n", i + 1, lua_tostring(L, -1));
  fflush(NULL);
  _exit(st == LUA_OK ? 0 : 1);
}

/* ---- the parent's side ---- */
static pool *check_pool(lua_State *L) {
  pool *p = luaL_checkudata(L, 1, POOL_MT);
  if (p->closed) luaL_error(L, "DataLoader: the worker processes were shut down");
  return p;
}

static int check_worker(lua_State *L, pool *p, int arg) {
  lua_Integer i = luaL_checkinteger(L, arg);
  if (i < 1 || i > p->n) luaL_error(L, "DataLoader: no worker %d (there are %d)", (int)i, p->n);
  return (int)i - 1;
}

/* Waits up to ms for pid to exit; true when it has (status in *status). */
static int reap(pid_t pid, int ms, int *status) {
  for (int t = 0;; t++) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return 1;
    if (t >= ms) return 0;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

/* Closes the sockets (workers see the end of their stream and exit), gives
 * them half a second, then kills those still busy. Only in the owner. */
static void shut(pool *p) {
  if (p->closed) return;
  p->closed = 1;
  if (getpid() != p->owner) return;
  for (int i = 0; i < p->n; i++) {
    untrack(p->sock[i]);
    close(p->sock[i]);
  }
  int status;
  for (int i = 0; i < p->n; i++)
    if (!reap(p->pid[i], 500, &status)) {
      kill(p->pid[i], SIGKILL);
      reap(p->pid[i], 1000, &status);
    }
}

static int pool_close(lua_State *L) {
  shut(luaL_checkudata(L, 1, POOL_MT));
  return 0;
}

static int spawn(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (n < 1 || n > MAXW) return luaL_error(L, "DataLoader: num_workers must be 1..%d for worker processes, got %d", MAXW, (int)n);
  pool *p = lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  p->owner = getpid();
  luaL_setmetatable(L, POOL_MT);
  for (int i = 0; i < n; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
      shut(p);
      return luaL_error(L, "DataLoader: cannot make a socket for worker %d: %s", i + 1, strerror(errno));
    }
    fflush(NULL); /* output buffered so far is printed once, not once per process */
    pid_t pid = fork();
    if (pid < 0) {
      int e = errno;
      close(sv[0]), close(sv[1]);
      shut(p);
      return luaL_error(L, "DataLoader: cannot start worker process %d: %s", i + 1, strerror(e));
    }
    if (pid == 0) {
      close(sv[0]);
      worker_main(L, p, i, sv[1], 2);
    }
    close(sv[1]);
    p->sock[i] = sv[0], p->pid[i] = pid, p->n++;
    track(sv[0]);
  }
  return 1;
}

static int pool_order(lua_State *L) {
  pool *p = check_pool(L);
  int i = check_worker(L, p, 2);
  mt_tensor *o = mtl_check_tensor(L, 3, "DataLoader");
  mt_tensor *c = NULL;
  if (o->dtype != MT_INT64 || o->ndim != 1 || mt_tdevice(o).type != MT_CPU)
    return luaL_error(L, "DataLoader: a sample order must be a 1-D int64 CPU tensor");
  if (mt_contiguous(o, &c)) return luaL_error(L, "DataLoader: %s", mt_errmsg());
  int bad = send_msg(p->sock[i], K_ORDER, 0, mt_data(c), (size_t)c->shape[0] * 8, -1, 0);
  mt_release(c);
  if (bad) return luaL_error(L, "DataLoader: cannot reach worker %d (pid %d): %s", i + 1, (int)p->pid[i], strerror(errno));
  return 0;
}

static int pool_put(lua_State *L) {
  pool *p = check_pool(L);
  int i = check_worker(L, p, 2);
  lua_Integer ticket = luaL_checkinteger(L, 3);
  if (send_msg(p->sock[i], K_BATCH, ticket, NULL, 0, -1, 0))
    return luaL_error(L, "DataLoader: cannot reach worker %d (pid %d): %s", i + 1, (int)p->pid[i], strerror(errno));
  p->pending[i]++;
  return 0;
}

/* Raises the error for a worker whose stream ended: how it exited. */
static int worker_died(lua_State *L, pool *p, int i) {
  int status = 0;
  pid_t pid = p->pid[i];
  int gone = reap(pid, 1000, &status);
  shut(p);
  if (gone && WIFSIGNALED(status))
    return luaL_error(L, "DataLoader: worker %d (pid %d) was killed by signal %d (%s)", i + 1, (int)pid,
                      WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (gone && WIFEXITED(status))
    return luaL_error(L, "DataLoader: worker %d (pid %d) exited unexpectedly with status %d", i + 1, (int)pid,
                      WEXITSTATUS(status));
  return luaL_error(L, "DataLoader: worker %d (pid %d) stopped answering", i + 1, (int)pid);
}

static int pool_take(lua_State *L) {
  pool *p = check_pool(L);
  int i = check_worker(L, p, 2);
  double timeout = luaL_optnumber(L, 3, 0);
  if (p->pending[i] <= 0) return luaL_error(L, "DataLoader: worker %d has no batch to give", i + 1);
  if (timeout > 0) {
    struct pollfd pf = {p->sock[i], POLLIN, 0};
    int r;
    do r = poll(&pf, 1, timeout * 1000 > 2e9 ? -1 : (int)(timeout * 1000));
    while (r < 0 && errno == EINTR);
    if (r == 0) {
      char secs[32];
      snprintf(secs, sizeof secs, "%g", timeout);
      shut(p);
      return luaL_error(L, "DataLoader: timed out after %s s waiting for a batch from worker %d (pid %d)", secs, i + 1,
                        (int)p->pid[i]);
    }
  }
  hdr h;
  int fd;
  box *b = push_box(L);
  int r = recv_hdr(p->sock[i], &h, &fd);
  b->fd = fd;
  if (r <= 0 || (h.kind != K_RESULT && h.kind != K_ERROR) || read_payload(p->sock[i], &h, b)) return worker_died(L, p, i);
  p->pending[i]--;
  lua_pushinteger(L, h.ticket);
  if (h.kind == K_ERROR) {
    lua_pushboolean(L, 0);
    lua_pushlstring(L, b->payload, (size_t)h.len);
    return 3;
  }
  lua_pushboolean(L, 1);
  mtn_wire_decode(L, b->payload, (size_t)h.len, b->fd, h.fdlen, "DataLoader");
  return 3;
}

static int pool_pending(lua_State *L) {
  pool *p = check_pool(L);
  lua_pushinteger(L, p->pending[check_worker(L, p, 2)]);
  return 1;
}

static int pool_pid(lua_State *L) {
  pool *p = luaL_checkudata(L, 1, POOL_MT);
  lua_pushinteger(L, p->pid[check_worker(L, p, 2)]);
  return 1;
}

static int pool_closed(lua_State *L) {
  lua_pushboolean(L, ((pool *)luaL_checkudata(L, 1, POOL_MT))->closed);
  return 1;
}

static const mtl_reg regs[] = {
    {"spawn", spawn, MTL_FN,
     "torch.utils.data._workers.spawn(n, fn) -- fork n DataLoader worker processes running fn(i, chan) (internal)"},
    {NULL, NULL, 0, NULL}};

/* require "torch.utils.data._workers" -> {spawn=} */
int luaopen_torch_utils_data__workers(lua_State *L) {
  static const luaL_Reg pm[] = {{"order", pool_order}, {"put", pool_put},     {"take", pool_take},
                                {"pending", pool_pending}, {"pid", pool_pid}, {"close", pool_close},
                                {"closed", pool_closed}, {NULL, NULL}};
  static const luaL_Reg cm[] = {{"recv", chan_recv}, {"send", chan_send}, {NULL, NULL}};
  mtl_new_class(L, POOL_MT, pm, pool_close);
  mtl_new_class(L, CHAN_MT, cm, NULL);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
