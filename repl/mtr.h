/* mtr.h -- what the files of the `moontorch` executable share (prefix mtr_).
 * main.c reads the command line; env.c builds the Lua state; run.c runs code
 * with tracebacks; interrupt.c owns SIGINT; repl.c, input.c, history.c and
 * complete.c make the interactive loop. Nothing outside repl/ includes this. */
#ifndef MTR_H
#define MTR_H

#include <stdbool.h>

#include <lua.h>

#define MTR_PROGNAME "moontorch"

/* ---- env.c ---- */
/* Fills a fresh state: standard libraries, package.path, `torch`, the lazy
 * globals nn/F/optim and `help`. A lua_CFunction: call it protected. */
int mtr_open_env(lua_State *L);
/* Pushes the table of globals still waiting to be loaded (name -> path under
 * torch, e.g. F -> "nn.functional"); empty table once all are resolved. */
void mtr_push_lazy_table(lua_State *L);
/* lua_CFunction(name): loads the lazy global `name`, stores it in _G and
 * returns it; returns nil if its package does not exist. Raises if loading
 * the package fails for another reason. */
int mtr_lazy_load(lua_State *L);

/* ---- run.c ---- */
/* Calls the function below `narg` arguments on the stack, protected, with
 * Ctrl-C armed; on error leaves one message string (with a traceback: a
 * full one if `full_trace`, else only when Lua functions were involved). */
int mtr_docall(lua_State *L, int narg, int nres, bool full_trace);
/* Prints the message on top of the stack to stderr (prefixed with the
 * program name if `prefix`) and pops it. */
void mtr_report(lua_State *L, bool prefix);

/* ---- interrupt.c ---- */
/* Installs the SIGINT handler. In a script (!interactive) a third Ctrl-C
 * during one run ends the process with status 130. */
void mtr_intr_install(bool interactive);
/* Brackets running code in L: Ctrl-C then stops L and the engine. */
void mtr_intr_begin(lua_State *L);
void mtr_intr_end(lua_State *L);
/* True if Ctrl-C hit the code run since the last mtr_intr_begin. */
bool mtr_intr_hit(void);
/* At the prompt: true (once) if Ctrl-C was pressed since the last call. */
bool mtr_intr_take_prompt(void);

/* ---- history.c ---- */
/* Loads ~/.moontorch_history (if $HOME is set) into a libedit History;
 * later lines are appended to the file as they are entered. */
struct history; /* libedit's History */
typedef struct mtr_history mtr_history;
mtr_history *mtr_history_open(void);
struct history *mtr_history_libedit(mtr_history *h);
void mtr_history_add(mtr_history *h, const char *line);
/* Trims the file to the last entries kept and frees h. */
void mtr_history_close(mtr_history *h);

/* ---- input.c ---- */
/* Starts line input on stdin: libedit with completion and history when stdin
 * is a terminal, plain reads otherwise. L is used for completion only. */
void mtr_input_open(lua_State *L);
void mtr_input_close(void);
/* Reads one line without its newline (malloc'd, caller frees). NULL at end of
 * input; then *interrupted tells whether Ctrl-C discarded the line. */
char *mtr_input_line(const char *prompt, bool *interrupted);
/* Adds a line to the history (in memory and in the file). */
void mtr_input_remember(const char *line);

/* ---- complete.c ---- */
typedef struct mtr_matches {
  char **names; /* candidates for the word being completed, sorted, unique */
  int n, cap;
  int typed; /* bytes of that word already typed (a prefix of each name) */
  int start; /* offset in the line where that word starts */
} mtr_matches;
/* Collects completions for the text before the cursor (`line` ends at the
 * cursor): globals and keywords, fields after `a.b.`, methods after `a:`.
 * Only reads tables and metatables raw: never runs user code. */
void mtr_complete(lua_State *L, const char *line, mtr_matches *m);
void mtr_matches_free(mtr_matches *m);

/* ---- repl.c ---- */
/* The interactive loop; returns when the user ends the session. */
void mtr_repl(lua_State *L);

#endif
