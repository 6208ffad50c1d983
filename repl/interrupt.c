/* interrupt.c -- Ctrl-C. While code runs, SIGINT sets a Lua hook that raises
 * "interrupted" at the next instruction (as stock lua.c does) and raises the
 * engine's flag so long C ops stop too; at the prompt it only sets a flag for
 * the line editor. The handler only stores flags and calls async-safe code. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "mt.h"
#include "mtr.h"

static lua_State *volatile running;         /* state running code, or NULL */
static volatile sig_atomic_t hits;          /* Ctrl-C presses during this run */
static volatile sig_atomic_t prompt_hit;    /* Ctrl-C pressed at the prompt */
static volatile sig_atomic_t script_mode;   /* no session to go back to */

/* Hook set by the handler: removes itself and raises "interrupted" in the
 * next Lua function to run. It does not raise inside C functions: one of them
 * may be the message handler of an error already on its way (a C op that
 * stopped on the engine's flag), and raising there would lose that error. */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  if (ar->event != LUA_HOOKCOUNT && lua_getinfo(L, "S", ar) && *ar->what == 'C') return;
  lua_sethook(L, NULL, 0, 0);
  lua_pushliteral(L, "interrupted");
  lua_error(L);
}

/* Stops the code running in L: the hook for Lua code, the engine's flag
 * for C ops. Called in the handler, or when running starts. */
static void stop(lua_State *L) {
  hits++;
  mt_interrupt();
  lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void on_sigint(int sig) {
  (void)sig;
  lua_State *L = running;
  if (L == NULL) {
    prompt_hit = 1;
    return;
  }
  stop(L);
  if (script_mode && hits >= 3) {
    static const char msg[] = "\n" MTR_PROGNAME ": interrupted 3 times, exiting now\n";
    ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)r;
    _exit(130);
  }
}

void mtr_intr_install(bool interactive) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a blocking read must return EINTR */
  sigaction(SIGINT, &sa, NULL);
  script_mode = !interactive;
}

/* Removes our hook, not one the user set with debug.sethook. */
static void clear_hook(lua_State *L) {
  if (lua_gethook(L) == stop_hook) lua_sethook(L, NULL, 0, 0);
}

/* A Ctrl-C pressed after the command's line was read but before it starts
 * (the prompt's flag is still set) stops the command at once. */
void mtr_intr_begin(lua_State *L) {
  clear_hook(L);
  mt_clear_interrupt();
  hits = 0;
  running = L;
  if (prompt_hit) {
    prompt_hit = 0;
    stop(L);
  }
}

/* Also clears what a late Ctrl-C left behind, so that it cannot hit the next
 * command or a completion. mtr_intr_hit() still reports it. */
void mtr_intr_end(lua_State *L) {
  running = NULL;
  clear_hook(L);
  mt_clear_interrupt();
  prompt_hit = 0;
}

bool mtr_intr_hit(void) { return hits > 0; }

bool mtr_intr_take_prompt(void) {
  bool hit = prompt_hit != 0;
  prompt_hit = 0;
  return hit;
}
