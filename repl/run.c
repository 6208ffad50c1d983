/* run.c -- runs Lua code for the script runner and the REPL: a protected call
 * with Ctrl-C armed and a message handler that adds a stack traceback, cut
 * to the frames of the user's code (no frames of the runner itself).
 * Reporting goes to stderr; results are the caller's business. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "mtr.h"

#define TRACE_HEAD 10 /* frames shown before eliding the middle of a deep stack */
#define TRACE_TAIL 11

/* Appends one frame as "\n\tsrc:line: in what" (the format of lua's own
 * tracebacks). */
static void add_frame(luaL_Buffer *b, lua_Debug *ar) {
  lua_State *L = b->L;
  if (ar->currentline > 0)
    lua_pushfstring(L, "\n\t%s:%d: in ", ar->short_src, ar->currentline);
  else
    lua_pushfstring(L, "\n\t%s: in ", ar->short_src);
  luaL_addvalue(b);
  if (strcmp(ar->what, "main") == 0) {
    luaL_addstring(b, "main chunk");
  } else if (*ar->namewhat != '\0') {
    const char *kind = strcmp(ar->namewhat, "global") == 0 ? "function" : ar->namewhat;
    lua_pushfstring(L, "%s '%s'", kind, ar->name);
    luaL_addvalue(b);
  } else if (*ar->what == 'C') {
    luaL_addstring(b, "a C function");
  } else {
    lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
    luaL_addvalue(b);
  }
  if (ar->istailcall) luaL_addstring(b, "\n\t(...tail calls...)");
}

/* Number of frames from `level` down to the last Lua frame: the C frames
 * under it (pcall, the runner) are not the user's. */
static int user_depth(lua_State *L, int level, bool *lua_fn) {
  lua_Debug ar;
  int depth = 0;
  *lua_fn = false;
  for (int i = level; lua_getstack(L, i, &ar); i++) {
    lua_getinfo(L, "S", &ar);
    if (*ar.what != 'C') depth = i - level + 1;
    if (strcmp(ar.what, "Lua") == 0) *lua_fn = true;
  }
  return depth;
}

/* Message handler: turns the error object into a string and appends the
 * traceback. Upvalue 1 is true for a full traceback; otherwise the traceback
 * is left out when only the main chunk and C functions were on the stack,
 * since the message's "stdin:3:" already says where. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  bool lua_fn;
  int depth = user_depth(L, 1, &lua_fn);
  if (depth == 0 || (!lua_fn && !lua_toboolean(L, lua_upvalueindex(1)))) {
    lua_pushstring(L, msg);
    return 1;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, msg);
  luaL_addstring(&b, "\nstack traceback:");
  lua_Debug ar;
  for (int i = 0; i < depth && lua_getstack(L, i + 1, &ar); i++) {
    if (depth > TRACE_HEAD + TRACE_TAIL && i == TRACE_HEAD) {
      int skip = depth - TRACE_HEAD - TRACE_TAIL;
      lua_pushfstring(L, "\n\t...\t(skipping %d levels)", skip);
      luaL_addvalue(&b);
      i += skip - 1;
      continue;
    }
    lua_getinfo(L, "Slnt", &ar);
    add_frame(&b, &ar);
  }
  luaL_pushresult(&b);
  return 1;
}

int mtr_docall(lua_State *L, int narg, int nres, bool full_trace) {
  int base = lua_gettop(L) - narg;
  lua_pushboolean(L, full_trace);
  lua_pushcclosure(L, msghandler, 1);
  lua_insert(L, base);
  mtr_intr_begin(L);
  int status = lua_pcall(L, narg, nres, base);
  mtr_intr_end(L);
  lua_remove(L, base);
  return status;
}

void mtr_report(lua_State *L, bool prefix) {
  const char *msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "(error object is not a string)";
  fflush(stdout);
  if (mtr_intr_hit() && isatty(STDERR_FILENO)) fputc('\n', stderr); /* after the terminal's "^C" */
  if (prefix) fprintf(stderr, "%s: ", MTR_PROGNAME);
  fprintf(stderr, "%s\n", msg);
  fflush(stderr);
  lua_pop(L, 1);
}
