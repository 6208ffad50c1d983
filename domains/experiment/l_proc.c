/* l_proc.c -- torch.experiment._proc: the few POSIX calls the experiment runner needs
 * to run trials as child processes without blocking (spawn with redirected
 * output and extra environment, non-blocking wait, signals), plus mkdir -p,
 * an advisory lock file, isatty and sleep. No policy here: what to run and
 * when is domains/experiment/'s business. Linux (prctl, /proc/self/exe). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mtl.h"

extern char **environ;

static volatile sig_atomic_t term_hits; /* SIGTERM/SIGHUP received after trap_term() */

/* NULL-terminated array of the strings of the Lua list at idx (borrowed:
 * the list must stay on the stack while the array is used). */
static const char **string_list(lua_State *L, int idx, const char *what) {
  lua_Integer n = luaL_len(L, idx);
  if (n < 1) luaL_error(L, "proc.spawn: %s must not be empty", what);
  const char **v = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *v, 0); /* freed by the GC */
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "proc.spawn: %s[%d] must be a string", what, (int)i);
    v[i - 1] = lua_tostring(L, -1); /* the list keeps it alive */
    lua_pop(L, 1);
  }
  v[n] = NULL;
  return v;
}

/* The environment for a child: ours, with the "KEY=value" pairs of the
 * table at idx (string keys and values) added or replacing ours. */
static char **child_env(lua_State *L, int idx) {
  size_t nours = 0, nextra = 0;
  while (environ[nours]) nours++;
  if (idx) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1))
        luaL_error(L, "proc.spawn: env must map names to strings");
      nextra++;
      lua_pop(L, 1);
    }
  }
  char **env = lua_newuserdatauv(L, (nours + nextra + 1) * sizeof *env, 0);
  size_t n = 0;
  for (size_t i = 0; i < nours; i++) {
    const char *eq = strchr(environ[i], '=');
    if (idx && eq) {
      lua_pushlstring(L, environ[i], (size_t)(eq - environ[i]));
      int overridden = lua_rawget(L, idx) != LUA_TNIL;
      lua_pop(L, 1);
      if (overridden) continue;
    }
    env[n++] = environ[i];
  }
  if (idx) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      luaL_checkstack(L, 4, "proc.spawn: environment too large");
      env[n++] = (char *)lua_pushfstring(L, "%s=%s", lua_tostring(L, -2), lua_tostring(L, -1));
      lua_insert(L, -3); /* keep the string on the stack below the key */
      lua_pop(L, 1);
    }
  }
  env[n] = NULL;
  return env;
}

/* In the child, between fork and exec (async-signal-safe calls only):
 * opens path onto fd, truncating. Returns 0 or -1. */
static int redirect(const char *path, int fd) {
  if (path == NULL) return 0;
  int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (f < 0) return -1;
  if (f != fd && (dup2(f, fd) < 0 || close(f) < 0)) return -1;
  return 0;
}

static void child_fail(const char *what, const char *arg) {
  const char *parts[] = {"moontorch: cannot start ", arg, ": ", what, "\n"};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    ssize_t r = write(STDERR_FILENO, parts[i], strlen(parts[i]));
    (void)r;
  }
  _exit(127);
}

/* torch.experiment._proc.spawn{argv = {path, args...}, env = {K = v}, stdout = path,
 * stderr = path} -> pid. The child leads its own process group (Ctrl-C at
 * the terminal reaches only the parent, which decides) and gets SIGTERM when
 * the parent dies, so an interrupted sweep leaves no orphans. A program that
 * cannot be started exits with status 127 and the reason on its stderr. */
static int p_spawn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int top = lua_gettop(L);
  mtl_optfield(L, 1, "argv");
  luaL_argexpected(L, lua_istable(L, -1), 1, "a table with argv = {program, args...}");
  const char **argv = string_list(L, top + 1, "argv");
  int env_idx = 0;
  if (mtl_optfield(L, 1, "env") == LUA_TTABLE) env_idx = lua_gettop(L);
  char **env = child_env(L, env_idx);
  mtl_optfield(L, 1, "stdout");
  mtl_optfield(L, 1, "stderr");
  const char *out = lua_tostring(L, -2), *err = lua_tostring(L, -1);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return luaL_error(L, "proc.spawn: cannot fork: %s", strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(143); /* the parent died before prctl */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (redirect(out, STDOUT_FILENO) < 0 || redirect(err, STDERR_FILENO) < 0) child_fail(strerror(errno), argv[0]);
    execve(argv[0], (char *const *)argv, env);
    child_fail(strerror(errno), argv[0]);
  }
  setpgid(pid, pid); /* also here, so that a kill of the group right away finds it */
  lua_settop(L, top);
  lua_pushinteger(L, pid);
  return 1;
}

/* torch.experiment._proc.wait(pid[, block]) -> nil while the child runs (unless
 * block), else "exited", code or "signaled", signal number; "gone", 0 when
 * pid is no child of ours (already waited for). */
static int p_wait(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  int status, flags = lua_toboolean(L, 2) ? 0 : WNOHANG;
  pid_t r;
  do r = waitpid(pid, &status, flags);
  while (r < 0 && errno == EINTR);
  if (r < 0 && errno == ECHILD) {
    lua_pushliteral(L, "gone");
    lua_pushinteger(L, 0);
    return 2;
  }
  if (r < 0) return luaL_error(L, "proc.wait(%d): %s", (int)pid, strerror(errno));
  if (r == 0) return 0;
  if (WIFEXITED(status)) {
    lua_pushliteral(L, "exited");
    lua_pushinteger(L, WEXITSTATUS(status));
  } else {
    lua_pushliteral(L, "signaled");
    lua_pushinteger(L, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return 2;
}

/* torch.experiment._proc.kill(pid, "TERM"|"KILL"|"INT") signals the child's process
 * group (the child and whatever it started). Returns true if delivered. */
static int p_kill(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  static const char *const names[] = {"TERM", "KILL", "INT", NULL};
  static const int sigs[] = {SIGTERM, SIGKILL, SIGINT};
  int sig = sigs[luaL_checkoption(L, 2, "TERM", names)];
  if (pid <= 1) return luaL_error(L, "proc.kill: bad pid %d", (int)pid);
  int r = kill(-pid, sig);
  if (r < 0 && errno == ESRCH) r = kill(pid, sig);
  lua_pushboolean(L, r == 0);
  return 1;
}

/* torch.experiment._proc.exe() -> the path of the running executable. */
static int p_exe(lua_State *L) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return luaL_error(L, "proc.exe: cannot read /proc/self/exe: %s", strerror(errno));
  lua_pushlstring(L, buf, (size_t)n);
  return 1;
}

static int p_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

/* torch.experiment._proc.sleep(seconds): returns early when a signal arrives. */
static int p_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1);
  if (s > 0) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
  }
  return 0;
}

/* torch.experiment._proc.mkdir(path): creates path and its missing parents (mode
 * 0755); raises "cannot create directory P: reason". */
static int p_mkdir(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  if (len == 0 || len >= PATH_MAX) return luaL_error(L, "cannot create directory '%s': bad path", path);
  char buf[PATH_MAX];
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      struct stat st;
      if (mkdir(buf, 0755) != 0 && (errno != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)))
        return luaL_error(L, "cannot create directory %s: %s", buf, errno == EEXIST ? "a file is in the way" : strerror(errno));
      *p = c;
      if (c == '\0') break;
    }
  }
  return 0;
}

/* torch.experiment._proc.lock(path) -> a handle (file descriptor) if this process now
 * holds the exclusive lock on path (created if needed), false if another
 * holder has it. The lock lasts until unlock(handle) or the process ends:
 * the kernel drops it when the holder dies, so no lock outlives a crash. */
static int p_lock(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return luaL_error(L, "cannot open lock file %s: %s", path, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK) {
      lua_pushboolean(L, 0);
      return 1;
    }
    return luaL_error(L, "cannot lock %s: %s", path, strerror(e));
  }
  lua_pushinteger(L, fd);
  return 1;
}

/* torch.experiment._proc.unlock(handle): releases a lock taken by lock(). */
static int p_unlock(lua_State *L) {
  lua_Integer fd = luaL_checkinteger(L, 1);
  if (fd < 3 || fd > INT_MAX) return luaL_error(L, "proc.unlock: bad handle %d", (int)fd);
  close((int)fd);
  return 0;
}

static void on_term(int sig) {
  (void)sig;
  term_hits++;
}

/* torch.experiment._proc.trap_term(on): while on, SIGTERM and SIGHUP only set a flag
 * that term_requested() reports, so the caller can stop cleanly;
 * trap_term(false) restores the default (the flag is cleared either way). */
static int p_trap_term(lua_State *L) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = lua_toboolean(L, 1) ? on_term : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  term_hits = 0;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  return 0;
}

static int p_term_requested(lua_State *L) {
  lua_pushboolean(L, term_hits > 0);
  return 1;
}

static int p_getpid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

static const mtl_reg proc_regs[] = {
    {"spawn", p_spawn, MTL_FN,
     "torch.experiment._proc.spawn{argv=, env=, stdout=, stderr=} -- start a child process (own process group); its "
     "pid", "argv env stdout stderr"},
    {"wait", p_wait, MTL_FN, "torch.experiment._proc.wait(pid[, block]) -- nil while running, else 'exited', code | 'signaled', sig | 'gone', 0"},
    {"kill", p_kill, MTL_FN, "torch.experiment._proc.kill(pid[, 'TERM'|'KILL'|'INT']) -- signal a child's process group"},
    {"exe", p_exe, MTL_FN, "torch.experiment._proc.exe() -- the path of the running executable"},
    {"isatty", p_isatty, MTL_FN, "torch.experiment._proc.isatty(fd) -- true if the file descriptor is a terminal"},
    {"sleep", p_sleep, MTL_FN, "torch.experiment._proc.sleep(seconds) -- sleep (a signal ends it early)"},
    {"mkdir", p_mkdir, MTL_FN, "torch.experiment._proc.mkdir(path) -- create a directory and its missing parents"},
    {"lock", p_lock, MTL_FN, "torch.experiment._proc.lock(path) -- take an exclusive lock (a handle), false if another holds it"},
    {"unlock", p_unlock, MTL_FN, "torch.experiment._proc.unlock(handle) -- release a lock taken by torch.experiment._proc.lock"},
    {"trap_term", p_trap_term, MTL_FN, "torch.experiment._proc.trap_term(on) -- while on, SIGTERM/SIGHUP set a flag instead of killing"},
    {"term_requested", p_term_requested, MTL_FN, "torch.experiment._proc.term_requested() -- true after SIGTERM/SIGHUP (trapped)"},
    {"getpid", p_getpid, MTL_FN, "torch.experiment._proc.getpid() -- this process's id"},
    {NULL, NULL, 0, NULL}};

/* require "torch.experiment._proc" */
int luaopen_torch_experiment__proc(lua_State *L) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), proc_regs);
  return 1;
}
