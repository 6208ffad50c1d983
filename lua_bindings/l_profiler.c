/* l_profiler.c -- torch._profiler: the C half of torch.profiler. While a
 * profile runs, lua/torch/profiler/ swaps every C function of the torch and
 * Tensor tables for a wrapper made here (wrap), so that with profiling off
 * ops pay nothing at all. The wrapper brackets the call with an event of
 * graph/profiler.c; stop() hands the events to Lua as columns. */
#include <stdio.h>
#include <string.h>

#include "mtl.h"
#include "profiler.h"

#define MODE_OP 0
#define MODE_INDEX 1 /* __index/__newindex: string keys are lookups, not ops */
#define MAX_SHAPED 16 /* inputs whose shapes are kept */

static lua_Integer generation; /* bumped per start: invalidates cached name ids */

/* Name id of the wrapper's op for the running profile, cached in upvalues
 * 4 (id) and 5 (generation). */
static int32_t wrapper_id(lua_State *L) {
  if (lua_tointeger(L, lua_upvalueindex(5)) == generation) return (int32_t)lua_tointeger(L, lua_upvalueindex(4));
  int32_t id = mtg_prof_intern(lua_tostring(L, lua_upvalueindex(2)));
  lua_pushinteger(L, id);
  lua_replace(L, lua_upvalueindex(4));
  lua_pushinteger(L, generation);
  lua_replace(L, lua_upvalueindex(5));
  return id;
}

/* The wrapper: upvalues 1 the original function, 2 its op name, 3 the mode,
 * 4-5 the cached name id. Calls the original with all arguments and returns
 * all its results; errors pass through after the event is closed. */
static int wrapped_call(lua_State *L) {
  int n = lua_gettop(L);
  if (!MTG_PROFILING() ||
      (lua_tointeger(L, lua_upvalueindex(3)) == MODE_INDEX && lua_type(L, 2) == LUA_TSTRING)) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
  }
  int32_t id = wrapper_id(L);
  int64_t tok;
  if (mtg_prof->flags & MTG_PROF_SHAPES) {
    int64_t buf[MAX_SHAPED * (MT_MAXDIM + 1)], k = 0;
    int m = n < MAX_SHAPED ? n : MAX_SHAPED;
    for (int i = 1; i <= m; i++) {
      const mt_tensor *t = lua_type(L, i) == LUA_TUSERDATA ? mtl_peek_tensor(L, i) : NULL;
      buf[k++] = t ? t->ndim : -1;
      for (int d = 0; t && d < t->ndim; d++) buf[k++] = t->shape[d];
    }
    tok = mtg_prof_begin_shapes(id, MTG_PROF_OP, buf, k, m);
  } else {
    tok = mtg_prof_begin_id(id, MTG_PROF_OP);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  int st = lua_pcall(L, n, LUA_MULTRET, 0);
  mtg_prof_end(tok);
  if (st != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}

/* wrap(fn, name[, "index"]) -> a function that calls fn, recorded as op
 * `name` while a profile runs on this thread. */
static int l_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checkstring(L, 2);
  const char *mode = luaL_optstring(L, 3, "op");
  lua_settop(L, 2);
  lua_pushinteger(L, strcmp(mode, "index") == 0 ? MODE_INDEX : MODE_OP);
  lua_pushinteger(L, -1);
  lua_pushinteger(L, -1);
  lua_pushcclosure(L, wrapped_call, 5);
  return 1;
}

/* start(record_shapes, profile_memory, cuda) */
static int l_start(lua_State *L) {
  unsigned flags = (lua_toboolean(L, 1) ? MTG_PROF_SHAPES : 0) | (lua_toboolean(L, 2) ? MTG_PROF_MEMORY : 0) |
                   (lua_toboolean(L, 3) ? MTG_PROF_CUDA : 0);
  if (MTG_PROFILING())
    return luaL_error(L, "torch.profiler.profile: a profile is already running; stop it before starting another");
  if (mtg_prof_start(flags) != MT_OK) return luaL_error(L, "torch.profiler.profile: %s", mt_errmsg());
  generation++;
  return 0;
}

static int l_active(lua_State *L) {
  lua_pushboolean(L, MTG_PROFILING());
  return 1;
}

/* range_begin(name) -> token (-1 when no profile runs) */
static int l_range_begin(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_pushinteger(L, MTG_PROFILING() ? mtg_prof_begin_id(mtg_prof_intern(name), MTG_PROF_RANGE) : -1);
  return 1;
}

static int l_range_end(lua_State *L) {
  mtg_prof_end(luaL_checkinteger(L, 1));
  return 0;
}

/* Pushes "[[2, 3], [], [4]]" for the event's encoded input shapes. */
static void push_shapes(lua_State *L, const mtg_profiler *p, const mtg_prof_event *e) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '[');
  const int64_t *s = p->shape_data + e->shapes;
  for (int i = 0; i < e->nshapes; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addchar(&b, '[');
    int64_t nd = *s++;
    for (int64_t d = 0; d < nd; d++) {
      char num[32];
      snprintf(num, sizeof num, d ? ", %lld" : "%lld", (long long)*s++);
      luaL_addstring(&b, num);
    }
    luaL_addchar(&b, ']');
  }
  luaL_addchar(&b, ']');
  luaL_pushresult(&b);
}

static void push_column(lua_State *L, int64_t n) { lua_createtable(L, n > 0x7fffffff ? 0 : (int)n, 0); }

static int box_gc(lua_State *L) {
  mtg_profiler **box = lua_touserdata(L, 1);
  mtg_prof_free(*box);
  *box = NULL;
  return 0;
}

/* stop() -> {names=, name=, kind=, parent=, t0=, t1=, mem=, shapes=,
 * duration=, start_wall=, dropped=}: one list per event field (times in
 * ns from the start, parent 0 at top level), or nil when none runs. */
static int l_stop(lua_State *L) {
  mtg_profiler *p = mtg_prof_stop();
  if (!p) return 0;
  /* the profile is freed through a box on the stack, also on a Lua error */
  mtg_profiler **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = p;
  if (luaL_newmetatable(L, "torch.profile_events")) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_newtable(L);
  int out = lua_gettop(L);
  lua_createtable(L, p->nnames, 0);
  for (int32_t i = 0; i < p->nnames; i++) lua_pushstring(L, p->names[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, out, "names");
  static const char *const cols[] = {"name", "kind", "parent", "t0", "t1", "mem", "cmem", "cuda", "shapes"};
  for (int c = 0; c < 9; c++) {
    push_column(L, p->nev);
    for (int64_t i = 0; i < p->nev; i++) {
      const mtg_prof_event *e = &p->ev[i];
      switch (c) {
      case 0: lua_pushinteger(L, e->name + 1); break;
      case 1: lua_pushinteger(L, e->kind); break;
      case 2: lua_pushinteger(L, e->parent + 1); break;
      case 3: lua_pushinteger(L, e->t0); break;
      case 4: lua_pushinteger(L, e->t1); break;
      case 5: lua_pushinteger(L, e->mem); break;
      case 6: lua_pushinteger(L, e->cmem); break;
      case 7: lua_pushinteger(L, e->cuda_ns); break;
      default:
        if (e->shapes >= 0) push_shapes(L, p, e);
        else lua_pushboolean(L, 0);
      }
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, out, cols[c]);
  }
  lua_pushinteger(L, p->stop_ns), lua_setfield(L, out, "duration");
  lua_pushnumber(L, p->start_wall), lua_setfield(L, out, "start_wall");
  lua_pushboolean(L, p->oom), lua_setfield(L, out, "dropped");
  lua_pushboolean(L, (p->flags & MTG_PROF_MEMORY) != 0), lua_setfield(L, out, "memory");
  lua_pushboolean(L, (p->flags & MTG_PROF_SHAPES) != 0), lua_setfield(L, out, "shapes_recorded");
  lua_pushboolean(L, (p->flags & MTG_PROF_CUDA) != 0), lua_setfield(L, out, "cuda_timed");
  *box = NULL;
  mtg_prof_free(p);
  return 1;
}

static const mtl_reg regs[] = {
    {"start", l_start, MTL_FN, "torch._profiler.start(record_shapes, profile_memory, cuda) -- start recording events (cuda: device times too)"},
    {"stop", l_stop, MTL_FN, "torch._profiler.stop() -- stop recording; the events as a table of columns"},
    {"active", l_active, MTL_FN, "torch._profiler.active() -- true while a profile runs on this thread"},
    {"wrap", l_wrap, MTL_FN, "torch._profiler.wrap(fn, name[, 'index']) -- fn, recorded as op `name` while profiling"},
    {"range_begin", l_range_begin, MTL_FN, "torch._profiler.range_begin(name) -- open a user range: a token"},
    {"range_end", l_range_end, MTL_FN, "torch._profiler.range_end(token) -- close a user range"},
    {NULL, NULL, 0, NULL}};

void mtl_open_profiler(lua_State *L, int torch_idx, int methods_idx) {
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), methods_idx, regs);
  lua_pushstring(L, "torch._profiler -- C half of torch.profiler (event recording)");
  lua_setfield(L, -2, "__help");
  lua_setfield(L, torch_idx, "_profiler");
}
