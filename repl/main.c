/* main.c -- the `moontorch` command: reads the command line the way stock
 * `lua` does (-e, -l, -i, -v, -W, -, --), builds the state (env.c) and runs
 * -e/-l in order, then the script with its `arg` table, then the REPL when
 * asked for (-i, also after an error, to look at what went wrong) or when
 * nothing else was given on a terminal. `moontorch sweep ...` hands its
 * arguments to the Lua package torch.experiment instead. Exit status: 0, 1
 * on an error (message and traceback on stderr), 130 after Ctrl-C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "mt.h"
#include "lalloc.h"
#include "mtr.h"

typedef struct options {
  int argc;
  char **argv;
  int script;       /* index of the script in argv; 0: none */
  bool interactive; /* -i */
  bool version;     /* -v */
  bool has_code;    /* some -e or -l */
  bool warnings;    /* -W */
  bool sweep;       /* `moontorch sweep ...`: argv[2..] go to torch.experiment.main */
  int exit_status;  /* set by pmain */
} options;

static const char usage_text[] =
    "usage: " MTR_PROGNAME " [options] [script [args...]]\n"
    "       " MTR_PROGNAME " sweep SPEC.lua [--jobs N] [--resume] ...  (sweep --help)\n"
    "Runs a Lua 5.4 script with torch loaded (globals torch, nn, F, optim),\n"
    "or starts the interactive REPL when there is nothing to run.\n"
    "  -e code        run code (may be given several times)\n"
    "  -l name        require module name into a global named after its last\n"
    "                 part (-l torch.nn sets nn); -l g=name sets global g\n"
    "  -i             start the REPL after the script and -e code\n"
    "  -v, --version  print the version\n"
    "  -W             turn warnings on\n"
    "  -h, --help     print this help\n"
    "  --             stop handling options\n"
    "  -              read the script from stdin\n"
    "The script gets its arguments in the global table `arg` (arg[0] is the\n"
    "script's name) and as `...`. Without a script or -e, standard input is\n"
    "run as a script when it is not a terminal. A script named sweep in the\n"
    "current directory runs as ./sweep.\n";

static void print_version(void) { printf("%s %s (%s)\n", MTR_PROGNAME, MT_VERSION, LUA_VERSION); }

/* Reads the options into o. Returns 0, or 1 if the command line is wrong
 * (message printed), or -1 if it asked for --help (text printed). */
static int collect_args(options *o) {
  for (int i = 1; i < o->argc; i++) {
    const char *a = o->argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      o->script = i;
      return 0;
    }
    if (strcmp(a, "--") == 0) {
      o->script = i + 1 < o->argc ? i + 1 : 0;
      return 0;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage_text, stdout);
      return -1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
      o->version = true;
    } else if (strcmp(a, "-i") == 0) {
      o->interactive = true;
    } else if (strcmp(a, "-W") == 0) {
      o->warnings = true;
    } else if (strcmp(a, "-E") == 0) {
      /* lua's "ignore environment variables": we read none anyway */
    } else if (a[1] == 'e' || a[1] == 'l') {
      if (a[2] == '\0' && (i + 1 >= o->argc || o->argv[i + 1][0] == '-')) {
        fprintf(stderr, "%s: '%s' needs an argument: %s\n", MTR_PROGNAME, a,
                a[1] == 'e' ? "the code to run" : "the name of a module");
        return 1;
      }
      if (a[2] == '\0') i++;
      o->has_code = true;
    } else {
      fprintf(stderr, "%s: unknown option '%s' (%s --help lists the options)\n", MTR_PROGNAME, a, MTR_PROGNAME);
      return 1;
    }
  }
  return 0;
}

/* Reports a failed run (message on top of the stack) and returns the exit
 * status it deserves. */
static int failure(lua_State *L) {
  mtr_report(L, true);
  return mtr_intr_hit() ? 130 : 1;
}

/* Runs the function on top of the stack with narg arguments above it. */
static int run(lua_State *L, int narg) {
  return mtr_docall(L, narg, 0, true) == LUA_OK ? 0 : failure(L);
}

static int run_string(lua_State *L, const char *code) {
  if (luaL_loadbuffer(L, code, strlen(code), "=(command line)") != LUA_OK) return failure(L);
  return run(L, 0);
}

/* -l [global=]module: global = require(module); without "global=", the
 * global is named after the module's last dotted part. */
static int run_library(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '='), *module = eq ? eq + 1 : spec;
  const char *dot = strrchr(module, '.');
  if (eq)
    lua_pushlstring(L, spec, (size_t)(eq - spec));
  else
    lua_pushstring(L, dot ? dot + 1 : module);
  lua_getglobal(L, "require");
  lua_pushstring(L, module);
  if (mtr_docall(L, 1, 1, true) != LUA_OK) return failure(L);
  lua_setglobal(L, lua_tostring(L, -2));
  lua_pop(L, 1);
  return 0;
}

/* Runs the -e and -l options in their order on the command line. */
static int run_options(lua_State *L, const options *o) {
  int end = o->script ? o->script : o->argc;
  for (int i = 1; i < end; i++) {
    const char *a = o->argv[i];
    if (a[0] != '-' || (a[1] != 'e' && a[1] != 'l')) continue;
    const char *value = a[2] != '\0' ? a + 2 : o->argv[++i];
    int status = a[1] == 'e' ? run_string(L, value) : run_library(L, value);
    if (status != 0) return status;
  }
  return 0;
}

/* The global `arg`: arg[0] is the script, arg[1..] its arguments, negative
 * indices the interpreter and its options (as in stock lua). */
static void create_arg_table(lua_State *L, const options *o) {
  int script = o->script;
  lua_createtable(L, o->argc - script - 1 > 0 ? o->argc - script - 1 : 0, script + 1);
  for (int i = 0; i < o->argc; i++) {
    lua_pushstring(L, o->argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Runs the script (NULL: stdin) with arguments argv[first..]. */
static int run_script(lua_State *L, const char *path, const options *o, int first) {
  if (luaL_loadfile(L, path) != LUA_OK) return failure(L);
  int narg = 0;
  for (int i = first; i > 0 && i < o->argc; i++, narg++) lua_pushstring(L, o->argv[i]);
  return run(L, narg);
}

/* `moontorch sweep args...`: status = torch.experiment.main({args...}). */
static int run_sweep(lua_State *L, const options *o) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "torch.experiment");
  if (mtr_docall(L, 1, 1, true) != LUA_OK) return failure(L);
  lua_getfield(L, -1, "main");
  lua_remove(L, -2);
  lua_createtable(L, o->argc - 2, 0);
  for (int i = 2; i < o->argc; i++) {
    lua_pushstring(L, o->argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  if (mtr_docall(L, 1, 1, true) != LUA_OK) return failure(L);
  int status = (int)luaL_optinteger(L, -1, 0);
  lua_pop(L, 1);
  return status;
}

/* Everything that needs the Lua state, run protected. */
static int pmain(lua_State *L) {
  options *o = lua_touserdata(L, 1);
  lua_pushcfunction(L, mtr_open_env);
  lua_call(L, 0, 0);
  if (o->sweep) {
    o->exit_status = run_sweep(L, o);
    return 0;
  }
  create_arg_table(L, o);
  /* Eager tensor code makes many short-lived userdata: the generational
   * collector frees them in small, frequent batches that the allocators'
   * free lists absorb (2.8k -> 1.9k instructions per small op). Switching
   * after start-up makes the libraries old at once. */
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (o->warnings) lua_warning(L, "@on", 0);
  if (o->version) print_version();
  int status = run_options(L, o);
  if (status == 0 && o->script) {
    const char *path = o->argv[o->script];
    bool from_stdin = strcmp(path, "-") == 0 && strcmp(o->argv[o->script - 1], "--") != 0;
    status = run_script(L, from_stdin ? NULL : path, o, o->script + 1);
  }
  bool nothing_given = !o->script && !o->has_code && !o->version;
  if (o->interactive || (nothing_given && isatty(STDIN_FILENO))) { /* -i: even after an error, to inspect it */
    mtr_intr_install(true);
    mtr_repl(L);
  } else if (status == 0 && nothing_given) {
    status = run_script(L, NULL, o, 0);
  }
  o->exit_status = status;
  return 0;
}

static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "%s: unprotected error: %s\n", MTR_PROGNAME, msg ? msg : "(error object is not a string)");
  return 0;
}

/* Lua warnings: off until "@on", as in luaL_newstate; multi-part messages
 * are printed as they come. */
static void warnf(void *ud, const char *msg, int tocont) {
  static bool on, cont;
  (void)ud;
  if (!cont && msg[0] == '@') {
    if (strcmp(msg, "@on") == 0) on = true;
    if (strcmp(msg, "@off") == 0) on = false;
    return;
  }
  if (on) fprintf(stderr, "%s%s%s", cont ? "" : "Lua warning: ", msg, tocont ? "" : "\n");
  cont = tocont != 0;
}

/* The allocator's pools outlive the state; they are freed at process exit,
 * which also covers os.exit() (it closes the state and calls exit()). */
static void *pools;

static void free_pools(void) {
  mtr_lua_alloc_free(pools);
  pools = NULL;
}

/* A Lua state on the executable's pooled allocator (see lalloc.c). */
static lua_State *new_state(void) {
  pools = mtr_lua_alloc_state();
  if (!pools) return NULL;
  atexit(free_pools);
  lua_State *L = lua_newstate(mtr_lua_alloc, pools);
  if (!L) return NULL;
  lua_atpanic(L, panic);
  lua_setwarnf(L, warnf, NULL);
  return L;
}

int main(int argc, char **argv) {
  options o = {.argc = argc, .argv = argv, .sweep = argc >= 2 && strcmp(argv[1], "sweep") == 0};
  int bad = o.sweep ? 0 : collect_args(&o);
  if (bad != 0) return bad < 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  lua_State *L = new_state();
  if (L == NULL) {
    fprintf(stderr, "%s: not enough memory to start\n", MTR_PROGNAME);
    return EXIT_FAILURE;
  }
  mtr_intr_install(false);
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &o);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) o.exit_status = failure(L);
  lua_close(L);
  return o.exit_status;
}
