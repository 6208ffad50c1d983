/* repl.c -- the interactive loop. Reads a command (one line, or more lines
 * while the code is incomplete), handles `:commands` and `?x`, runs it and
 * prints its results the way lua's REPL does (an expression is tried first
 * as `return <line>`; a trailing ';' keeps it quiet), optionally timed.
 * Lines come from input.c; running and error messages from run.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "mt.h"
#include "mtl.h"
#include "mtr.h"

#define PROMPT "> "
#define PROMPT2 ">> "
#define CHUNKNAME "=stdin"

typedef enum { CMD_RUN, CMD_SKIP, CMD_QUIT } cmd_kind;

static bool show_time; /* :time on */

static const char help_text[] =
    "REPL commands:\n"
    "  :help           this list\n"
    "  :time on|off    show how long each command takes\n"
    "  :quit           leave (Ctrl-D on an empty line does the same)\n"
    "Tips:\n"
    "  an expression prints its value; end the line with ';' to keep it quiet\n"
    "  ?x or help(x)   show the help text of x (a function, module or tensor)\n"
    "  Tab             complete names, fields (t.na) and methods (x:su)\n"
    "  Ctrl-C          stop a running command, or discard the line being typed\n"
    "  each command runs as its own chunk: `local` variables last one command,\n"
    "  so use globals for what you want to keep\n";

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_time(double s) {
  if (s >= 1.0)
    printf("(%.2f s)\n", s);
  else if (s >= 1e-3)
    printf("(%.2f ms)\n", s * 1e3);
  else
    printf("(%.1f us)\n", s * 1e6);
}

static bool is_blank(const char *s) { return s[strspn(s, " \t\r")] == '\0'; }

/* Runs a `:command`. */
static cmd_kind repl_command(const char *line) {
  char name[32] = "", arg[32] = "";
  sscanf(line, " :%31s %31s", name, arg);
  if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0) return CMD_QUIT;
  if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0 || strcmp(name, "?") == 0) {
    fputs(help_text, stdout);
  } else if (strcmp(name, "time") == 0 && (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0)) {
    show_time = strcmp(arg, "on") == 0;
    printf("timing is %s\n", show_time ? "on: each command's wall time is printed" : "off");
  } else if (strcmp(name, "time") == 0) {
    printf("timing is %s; use :time on or :time off\n", show_time ? "on" : "off");
  } else {
    printf("unknown REPL command ':%s' (:help lists the commands)\n", name);
  }
  return CMD_SKIP;
}

/* `?x` -> `help(x)`; `?x:m` -> `help(x.m)`. Returns a malloc'd line. */
static char *rewrite_help(const char *line) {
  const char *arg = line + strspn(line, " \t") + 1;
  arg += strspn(arg, " \t");
  size_t n = strlen(arg);
  while (n > 0 && isspace((unsigned char)arg[n - 1])) n--;
  char *out = malloc(n + 8);
  if (out == NULL) return NULL;
  snprintf(out, n + 8, "help(%.*s)", (int)n, arg);
  if (strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:") >= n)
    for (char *c = out + 5; *c != ')'; c++)
      if (*c == ':') *c = '.';
  return out;
}

/* True if the error on top of the stack says the code merely stops early:
 * more lines would complete it. */
static bool incomplete(lua_State *L, int status) {
  static const char eof[] = "<eof>";
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  return status == LUA_ERRSYNTAX && msg != NULL && len >= sizeof eof - 1 &&
         strcmp(msg + len - (sizeof eof - 1), eof) == 0;
}

/* Compiles code, as `return <code>` if that is valid (so an expression's
 * values come back), else as is. Pushes the function or the error. */
static int compile(lua_State *L, const char *code) {
  const char *ret = lua_pushfstring(L, "return %s", code);
  int status = luaL_loadbuffer(L, ret, strlen(ret), CHUNKNAME);
  lua_remove(L, -2);
  if (status == LUA_OK) return status;
  lua_pop(L, 1);
  return luaL_loadbuffer(L, code, strlen(code), CHUNKNAME);
}

/* Appends "\n" and line to *chunk (malloc'd). */
static bool append_line(char **chunk, const char *line) {
  size_t a = strlen(*chunk), b = strlen(line);
  char *grown = realloc(*chunk, a + b + 2);
  if (grown == NULL) return false;
  grown[a] = '\n';
  memcpy(grown + a + 1, line, b + 1);
  *chunk = grown;
  return true;
}

/* Compiles *chunk, reading more lines while it is incomplete. Pushes the
 * function (CMD_RUN) or reports the error / drops the input (CMD_SKIP). */
static cmd_kind compile_chunk(lua_State *L, char **chunk) {
  for (;;) {
    int status = compile(L, *chunk);
    if (status == LUA_OK) return CMD_RUN;
    if (!incomplete(L, status)) {
      mtr_report(L, false);
      return CMD_SKIP;
    }
    bool ctrl_c;
    char *line = mtr_input_line(PROMPT2, &ctrl_c);
    if (line == NULL) {
      if (ctrl_c) { /* Ctrl-C drops the whole pending command */
        lua_pop(L, 1);
        fputs("^C\n", stdout);
      } else {
        fputs("\n", stdout);
        mtr_report(L, false);
      }
      return CMD_SKIP;
    }
    lua_pop(L, 1);
    mtr_input_remember(line);
    bool ok = append_line(chunk, line);
    free(line);
    if (!ok) return CMD_SKIP;
  }
}

/* Reads the next command. CMD_RUN leaves the compiled function on the stack
 * and sets *quiet when its results must not be printed. */
static cmd_kind read_command(lua_State *L, bool *quiet) {
  bool ctrl_c;
  char *line = mtr_input_line(PROMPT, &ctrl_c);
  if (line == NULL) {
    fputs(ctrl_c ? "^C\n" : "\n", stdout);
    return ctrl_c ? CMD_SKIP : CMD_QUIT;
  }
  mtr_input_remember(line);
  const char *start = line + strspn(line, " \t");
  cmd_kind kind = CMD_SKIP;
  if (is_blank(line)) {
    free(line);
  } else if (*start == ':') {
    kind = repl_command(line);
    free(line);
  } else {
    if (*start == '?') {
      char *help = rewrite_help(line);
      free(line);
      line = help;
    }
    if (line == NULL) return CMD_SKIP;
    kind = compile_chunk(L, &line);
    size_t n = strlen(line);
    while (n > 0 && isspace((unsigned char)line[n - 1])) n--;
    *quiet = n > 0 && line[n - 1] == ';';
    free(line);
  }
  return kind;
}

/* lua_CFunction(...): turns each argument into its text with torch.pformat
 * (tables nested and sorted, tensors in them summarized) and hands the
 * texts to the global print, so a user's own print still gets the output. */
static int show_values(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  for (int i = 1; i <= n; i++) {
    lua_pushcfunction(L, mtl_pformat);
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
    lua_replace(L, i);
  }
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  lua_call(L, n, 0);
  return 0;
}

/* Prints the values on the stack above `base`. */
static void print_results(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_pushcfunction(L, show_values);
  lua_insert(L, base + 1);
  if (mtr_docall(L, n, 0, false) != LUA_OK) {
    lua_pushfstring(L, "error printing the result (%s)", lua_tostring(L, -1));
    lua_remove(L, -2);
    mtr_report(L, false);
  }
}

/* Runs the compiled command on top of the stack and shows the outcome. */
static void run_command(lua_State *L, bool quiet) {
  int base = lua_gettop(L) - 1;
  double t0 = now();
  int status = mtr_docall(L, 0, LUA_MULTRET, false);
  double t1 = now();
  if (status == LUA_OK) {
    if (!quiet) print_results(L, base);
  } else {
    mtr_report(L, false);
  }
  lua_settop(L, base);
  if (show_time) print_time(t1 - t0);
  fflush(stdout);
}

void mtr_repl(lua_State *L) {
  mtr_input_open(L);
  printf("moontorch %s (%s) -- :help for help, Ctrl-D to quit\n", MT_VERSION, LUA_VERSION);
  for (;;) {
    bool quiet = false;
    cmd_kind kind = read_command(L, &quiet);
    if (kind == CMD_QUIT) break;
    if (kind == CMD_RUN) run_command(L, quiet);
  }
  mtr_input_close();
}
