/* l_misc.c -- torch.time, torch.Timer, threads, default dtype/device,
 * torch.cuda (no devices in a CPU build) and torch.help, which prints the
 * one-line help text every registered function carries. */
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* Looks up the help text of the value at idx; pushes it or nil. */
static void push_help_of(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help");
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}

/* Prints the help lines of every function in the table at idx, sorted. */
static void list_table(lua_State *L, int idx, const char *title) {
  idx = lua_absindex(L, idx);
  lua_newtable(L);
  int names = lua_gettop(L);
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1)) {
      lua_pushvalue(L, -2);
      lua_rawseti(L, names, ++n);
    }
    lua_pop(L, 1);
  }
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_remove(L, -2);
  lua_pushvalue(L, names);
  lua_call(L, 1, 0);
  printf("%s (%d functions)\n", title, n);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, names, i);
    lua_pushvalue(L, -1);
    lua_rawget(L, idx);
    push_help_of(L, -1);
    const char *name = lua_tostring(L, -3), *h = lua_tostring(L, -1);
    printf("  %-22s %s\n", name, h ? h : "");
    lua_pop(L, 3);
  }
  lua_pop(L, 1);
}

/* torch.help(x): prints what x is and how to use it. */
static int l_help(lua_State *L) {
  if (lua_isnone(L, 1)) {
    printf("moontorch %s -- help(x) describes x: a function (help(torch.add)), a name (help 'add'),\n"
           "a tensor (lists its methods) or a package (help(torch)).\n",
           MT_VERSION);
    return 0;
  }
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char *name = lua_tostring(L, 1);
    if (strncmp(name, "torch.", 6) == 0) name += 6;
    lua_getfield(L, LUA_REGISTRYINDEX, "mtl.torch");
    lua_getfield(L, -1, name);
    if (lua_isnil(L, -1)) {
      lua_getfield(L, LUA_REGISTRYINDEX, "mtl.methods");
      lua_getfield(L, -1, name);
    }
    if (lua_isnil(L, -1)) {
      printf("no help for '%s': no such torch function or tensor method\n", lua_tostring(L, 1));
      return 0;
    }
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  if (mtl_to_tensor(L, 1)) {
    mt_tensor *t = mtl_to_tensor(L, 1);
    char b[128];
    printf("a Tensor of shape %s, dtype %s; methods:\n", mt_shape_str(t->shape, t->ndim, b, sizeof b),
           mt_dtype_name((mt_dtype)t->dtype));
    lua_getfield(L, LUA_REGISTRYINDEX, "mtl.methods");
    list_table(L, -1, "Tensor methods");
    return 0;
  }
  push_help_of(L, 1);
  if (lua_isstring(L, -1)) {
    printf("%s\n", lua_tostring(L, -1));
    return 0;
  }
  lua_pop(L, 1);
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_getfield(L, 1, "__help");
    if (lua_isstring(L, -1)) printf("%s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    list_table(L, 1, "functions");
    return 0;
  }
  printf("no help for this %s\n", luaL_typename(L, 1));
  return 0;
}

static int l_helptext(lua_State *L) {
  push_help_of(L, 1);
  return 1;
}

static int l_bytes_in_use(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)mt_cpu_bytes_in_use());
  return 1;
}

static const mtl_reg regs[] = {
    {"_cpu_bytes_in_use", l_bytes_in_use, MTL_FN, "torch._cpu_bytes_in_use() -- bytes held by live CPU tensor storages"},
    {"_helptext", l_helptext, MTL_FN, "torch._helptext(f) -- the help text of f as a string, or nil"},
    {"time", l_time, MTL_FN, "torch.time() -- monotonic wall-clock time in seconds (sub-microsecond resolution)"},
    {"Timer", l_timer, MTL_FN, "torch.Timer() -- a stopwatch with :elapsed(), :reset(), :stop(), :resume()"},
    {"set_num_threads", l_set_num_threads, MTL_FN, "torch.set_num_threads(n) -- threads used by CPU ops"},
    {"get_num_threads", l_get_num_threads, MTL_FN, "torch.get_num_threads() -- threads used by CPU ops"},
    {"set_default_dtype", l_set_default_dtype, MTL_FN, "torch.set_default_dtype(d) -- float dtype for new float tensors"},
    {"get_default_dtype", l_get_default_dtype, MTL_FN, "torch.get_default_dtype() -- the default float dtype"},
    {"set_default_device", l_set_default_device, MTL_FN, "torch.set_default_device(dev) -- device for new tensors"},
    {"typename", l_typename, MTL_FN, "torch.typename(v) -- 'torch.FloatTensor' etc. for tensors, else the Lua type",
     MTL_DATA},
    {"help", l_help, MTL_FN, "torch.help(x) -- print the help of a function, name, tensor or package", MTL_DATA},
    {NULL, NULL, 0, NULL}};

void mtl_open_misc(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
  lua_pushvalue(L, torch_idx);
  lua_setfield(L, LUA_REGISTRYINDEX, "mtl.torch");
}
