/* l_misc.c -- torch.time, torch.Timer, threads, default dtype/device,
 * torch.cuda (no devices in a CPU build) and torch.help, which shows the
 * entries of the API reference (docs/api/, compiled in; help.lua finds
 * them), paged in a terminal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cuda/mt_cuda.h"
#include "mtl.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int l_time(lua_State *L) {
  lua_pushnumber(L, now());
  return 1;
}

/* Timer: a table {start=, total=, running=} with methods */
static int timer_elapsed(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "_total");
  double total = lua_tonumber(L, -1);
  lua_getfield(L, 1, "_start");
  if (!lua_isnil(L, -1)) total += now() - lua_tonumber(L, -1);
  lua_pushnumber(L, total);
  return 1;
}

static int timer_reset(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushnumber(L, 0);
  lua_setfield(L, 1, "_total");
  lua_pushnumber(L, now());
  lua_setfield(L, 1, "_start");
  lua_settop(L, 1);
  return 1;
}

static int timer_stop(lua_State *L) {
  timer_elapsed(L);
  lua_setfield(L, 1, "_total");
  lua_pushnil(L);
  lua_setfield(L, 1, "_start");
  lua_settop(L, 1);
  return 1;
}

static int timer_resume(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "_start");
  if (lua_isnil(L, -1)) {
    lua_pushnumber(L, now());
    lua_setfield(L, 1, "_start");
  }
  lua_settop(L, 1);
  return 1;
}

static int timer_tostring(lua_State *L) {
  timer_elapsed(L);
  lua_pushfstring(L, "torch.Timer(%f s)", lua_tonumber(L, -1));
  return 1;
}

static int l_timer(lua_State *L) {
  lua_newtable(L);
  if (luaL_newmetatable(L, "torch.Timer")) {
    static const luaL_Reg m[] = {{"elapsed", timer_elapsed}, {"reset", timer_reset}, {"stop", timer_stop},
                                 {"resume", timer_resume}, {NULL, NULL}};
    luaL_newlib(L, m);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, timer_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
  return timer_reset(L);
}

static int l_set_num_threads(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 1) return luaL_error(L, "set_num_threads: number of threads must be at least 1, got %d", (int)n);
  mt_set_num_threads((int)n);
  return 0;
}

static int l_get_num_threads(lua_State *L) {
  lua_pushinteger(L, mt_get_num_threads());
  return 1;
}

static int l_set_default_dtype(lua_State *L) {
  MTL_CHECK(L, mt_set_default_dtype(mtl_check_dtype(L, 1, "set_default_dtype")));
  return 0;
}

static int l_get_default_dtype(lua_State *L) {
  mtl_push_dtype(L, mt_default_dtype());
  return 1;
}

static int l_set_default_device(lua_State *L) {
  mt_device d = mtl_check_device(L, 1, "set_default_device");
  MTL_CHECK(L, mt_cuda_check_device(d, "set_default_device"));
  mtl_set_default_device(d);
  return 0;
}


static int l_typename(lua_State *L) {
  mt_tensor *t = mtl_to_tensor(L, 1);
  if (t) {
    lua_getfield(L, LUA_REGISTRYINDEX, "mtl.methods");
    lua_getfield(L, -1, "type");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
  }
  lua_pushstring(L, luaL_typename(L, 1));
  return 1;
}

/* Looks up the code help text of the value at idx; pushes it or nil. */
static void push_help_of(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help");
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}

extern const char mtl_help_lua[];   /* lua_bindings/help.lua */
extern const char mtl_api_docs[];   /* the pages of docs/api, joined (Makefile) */

/* Pushes help.lua's function table, run once with (torch, the reference). */
static void push_help_module(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "mtl.helpmod") == LUA_TTABLE) return;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, mtl_help_lua, strlen(mtl_help_lua), "=torch/help.lua") != LUA_OK) lua_error(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.torch");
  lua_pushstring(L, mtl_api_docs);
  lua_call(L, 2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.helpmod");
}

/* Lines a help text may print when stdout is not a terminal before it is
 * cut with a hint (in a terminal a longer text goes to the pager). */
#define HELP_MAX_LINES 40

/* Shows text: through $PAGER (default `less -R`) when stdout is a terminal
 * and the text is taller than it; cut after HELP_MAX_LINES lines with a
 * hint when stdout is not a terminal (unless all); else printed whole. */
static void show(const char *text, size_t len, const char *again, bool all) {
  int lines = 0;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  fflush(stdout);
  if (isatty(STDOUT_FILENO)) {
    struct winsize ws;
    int rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 ? ws.ws_row : 24;
    const char *pager = getenv("PAGER");
    if (!pager || !*pager) pager = "less -R";
    if (lines >= rows - 1 && strcmp(pager, "cat") != 0) {
      void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* quitting the pager early must not kill us */
      FILE *p = popen(pager, "w");
      if (p) {
        fwrite(text, 1, len, p);
        pclose(p);
        signal(SIGPIPE, old);
        return;
      }
      signal(SIGPIPE, old);
    }
  } else if (!all && lines > HELP_MAX_LINES) {
    size_t cut = 0;
    for (int n = 0; n < HELP_MAX_LINES - 1; cut++) n += text[cut] == '\n';
    fwrite(text, 1, cut, stdout);
    printf("... %d more lines: %s%s prints them all (in a terminal they are paged)\n", lines - (HELP_MAX_LINES - 1),
           again ? again : "help(x", again ? "" : ", {all=true})");
    fflush(stdout);
    return;
  }
  fwrite(text, 1, len, stdout);
  fflush(stdout);
}

/* torch.help([x][, {all=}]): prints what x is and how to use it (the text
 * comes from help.lua and the reference). */
static int l_help(lua_State *L) {
  int nargs = lua_gettop(L);
  bool all = false;
  if (nargs >= 2 && lua_istable(L, 2)) {
    lua_getfield(L, 2, "all");
    all = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  if (nargs > 1) nargs = 1;
  push_help_module(L);
  lua_getfield(L, -1, "text");
  for (int i = 1; i <= nargs; i++) lua_pushvalue(L, i);
  lua_call(L, nargs, 2);
  size_t len;
  const char *text = luaL_checklstring(L, -2, &len);
  const char *again = NULL;
  if (lua_isstring(L, -1)) {
    /* "help(torch.nn)" -> "help(torch.nn, {all=true})" */
    const char *h = lua_tostring(L, -1);
    size_t n = strlen(h);
    if (n > 0 && h[n - 1] == ')') again = lua_pushfstring(L, "%s, {all=true})", lua_pushlstring(L, h, n - 1));
    else again = lua_pushfstring(L, "help(%s, {all=true})", h + (strncmp(h, "help ", 5) == 0 ? 5 : 0));
  }
  show(text, len, again, all);
  return 0;
}

static int l_helptext(lua_State *L) {
  push_help_of(L, 1);
  return 1;
}

/* torch._api(): help.lua's functions (the reference's index, its checks). */
static int l_api(lua_State *L) {
  push_help_module(L);
  return 1;
}

static int l_bytes_in_use(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_cpu_bytes_in_use());
  return 1;
}

static const mtl_reg regs[] = {
    {"_cpu_bytes_in_use", l_bytes_in_use, MTL_FN, "torch._cpu_bytes_in_use() -- bytes held by live CPU tensor storages"},
    {"_helptext", l_helptext, MTL_FN, "torch._helptext(f) -- the help text of f as a string, or nil"},
    {"_api", l_api, MTL_FN, "torch._api() -- the index of the API reference (lua_bindings/help.lua): entries, checks, help texts"},
    {"time", l_time, MTL_FN, "torch.time() -- monotonic wall-clock time in seconds (sub-microsecond resolution)"},
    {"Timer", l_timer, MTL_FN, "torch.Timer() -- a stopwatch with :elapsed(), :reset(), :stop(), :resume()"},
    {"set_num_threads", l_set_num_threads, MTL_FN, "torch.set_num_threads(n) -- threads used by CPU ops"},
    {"get_num_threads", l_get_num_threads, MTL_FN, "torch.get_num_threads() -- threads used by CPU ops"},
    {"set_default_dtype", l_set_default_dtype, MTL_FN, "torch.set_default_dtype(d) -- float dtype for new float tensors"},
    {"get_default_dtype", l_get_default_dtype, MTL_FN, "torch.get_default_dtype() -- the default float dtype"},
    {"set_default_device", l_set_default_device, MTL_FN, "torch.set_default_device(dev) -- device for new tensors"},
    {"typename", l_typename, MTL_FN, "torch.typename(v) -- 'torch.FloatTensor' etc. for tensors, else the Lua type",
     MTL_DATA},
    {"help", l_help, MTL_FN,
     "torch.help([x][, {all=false}]) -- explain x: a function, class, instance, tensor, package or name (a string)",
     MTL_DATA},
    {NULL, NULL, 0, NULL}};

void mtl_open_misc(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_pushvalue(L, torch_idx);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.torch");
}
