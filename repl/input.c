/* input.c -- reading REPL lines. On a terminal: libedit (emacs keys, ~/.editrc
 * honoured) with history, Tab completion from complete.c, and Ctrl-C that
 * discards the line. Otherwise: plain reads, prompts still printed, like lua.
 * This file only reads lines; what they mean is repl.c's business. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#include <wchar.h>

#include <histedit.h>

#include "mtr.h"

static EditLine *el;        /* NULL: stdin is not a terminal */
static mtr_history *hist;
static lua_State *comp_L;   /* state that completion looks into */
static const char *prompt = "";
static bool ctrl_c;         /* read_key stopped because of Ctrl-C */
static volatile sig_atomic_t resumed; /* SIGCONT: back from Ctrl-Z */

static void on_sigcont(int sig) {
  (void)sig;
  resumed = 1;
}

static char *get_prompt(EditLine *e) {
  (void)e;
  return (char *)prompt;
}

/* Waits until stdin has input; false if Ctrl-C was pressed at the prompt
 * first. SIGINT is blocked but inside pselect, so a Ctrl-C that comes after
 * the prompt is drawn but before the wait begins still ends the wait (with
 * a plain blocking read it would be seen only after the next key). After a
 * Ctrl-Z + fg the line is redrawn. */
static bool wait_key(EditLine *e) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &old);
  bool key = true;
  for (;;) {
    if (mtr_intr_take_prompt()) {
      key = false;
      break;
    }
    fd_set in;
    FD_ZERO(&in);
    FD_SET(STDIN_FILENO, &in);
    int r = pselect(STDIN_FILENO + 1, &in, NULL, NULL, NULL, &old);
    if (r >= 0 || errno != EINTR) break; /* input, or an error read() will report */
    if (resumed) el_set(e, EL_REFRESH);
    resumed = 0;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return key;
}

/* libedit's character reader: one character from stdin (UTF-8 decoded).
 * Returns -1 when Ctrl-C was pressed, which ends el_gets with no line;
 * other interrupted reads retry, redrawing the line after a Ctrl-Z + fg. */
static int read_key(EditLine *e, wchar_t *wc) {
  char buf[MB_LEN_MAX];
  size_t n = 0;
  for (;;) {
    if (!wait_key(e)) {
      ctrl_c = true;
      return -1;
    }
    ssize_t r = read(STDIN_FILENO, buf + n, 1);
    if (r == 0) return 0;
    if (r < 0 && errno == EINTR && !mtr_intr_take_prompt()) {
      if (resumed) el_set(e, EL_REFRESH);
      resumed = 0;
      continue;
    }
    if (r < 0) {
      ctrl_c = errno == EINTR;
      return -1;
    }
    n++;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t k = mbrtowc(wc, buf, n, &st);
    if (k == (size_t)-2 && n < sizeof buf) continue; /* more bytes to come */
    if (k == (size_t)-1 || k == (size_t)-2) {
      n = 0; /* invalid byte sequence: drop it */
      continue;
    }
    return 1;
  }
}

/* Asks before a list taller than the terminal; true if the user wants it. */
static bool confirm_long_list(EditLine *e, int n, int rows) {
  int height = 24;
  if (el_get(e, EL_GETTC, "li", &height, NULL) != 0 || height < 5) height = 24;
  if (rows <= height - 2) return true;
  printf("\nDisplay all %d possibilities? (y or n) ", n);
  fflush(stdout);
  char c = 0;
  while (el_getc(e, &c) == 1 && c != 'y' && c != 'Y' && c != 'n' && c != 'N' && c != 3 && c != 7) {
  }
  ctrl_c = false; /* a Ctrl-C here only answers the question */
  return c == 'y' || c == 'Y';
}

/* Prints the candidates in columns under the line, like ls. */
static void list_matches(EditLine *e, const mtr_matches *m) {
  int width = 80;
  if (el_get(e, EL_GETTC, "co", &width, NULL) != 0 || width < 20) width = 80;
  size_t longest = 0;
  for (int i = 0; i < m->n; i++)
    if (strlen(m->names[i]) > longest) longest = strlen(m->names[i]);
  int colw = (int)longest + 2, cols = width / colw > 0 ? width / colw : 1;
  int rows = (m->n + cols - 1) / cols;
  if (!confirm_long_list(e, m->n, rows)) {
    fputc('\n', stdout);
    return;
  }
  fputc('\n', stdout);
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      int i = c * rows + r;
      if (i >= m->n) break;
      bool last = c == cols - 1 || i + rows >= m->n;
      printf("%-*s", last ? 0 : colw, m->names[i]);
    }
    fputc('\n', stdout);
  }
  fflush(stdout);
}

/* Longest prefix shared by all candidates. */
static size_t common_prefix(const mtr_matches *m) {
  size_t len = strlen(m->names[0]);
  for (int i = 1; i < m->n; i++) {
    size_t k = 0;
    while (k < len && m->names[i][k] == m->names[0][k]) k++;
    len = k;
  }
  return len;
}

/* Tab: inserts the part all candidates share; if there is none to add,
 * lists them. At the start of a line it indents instead. */
static unsigned char on_tab(EditLine *e, int ch) {
  (void)ch;
  const LineInfo *li = el_line(e);
  char *text = strndup(li->buffer, (size_t)(li->cursor - li->buffer));
  if (text == NULL) return CC_ERROR;
  unsigned char ret = CC_REFRESH;
  if (text[strspn(text, " \t")] == '\0') {
    el_insertstr(e, "  ");
    free(text);
    return ret;
  }
  mtr_matches m;
  mtr_complete(comp_L, text, &m);
  size_t common = m.n > 0 ? common_prefix(&m) : 0;
  if (m.n == 0) {
    ret = CC_REFRESH_BEEP;
  } else if (common > (size_t)m.typed) {
    char *add = strndup(m.names[0] + m.typed, common - (size_t)m.typed);
    if (add != NULL) el_insertstr(e, add);
    free(add);
  } else if (m.n > 1) {
    list_matches(e, &m);
    ret = CC_REDISPLAY;
  }
  mtr_matches_free(&m);
  free(text);
  return ret;
}

/* Key bindings beyond libedit's emacs defaults: what bash users expect. */
static void bind_keys(EditLine *e) {
  static const char *const binds[][2] = {
      {"^I", "mtr-complete"},           {"^R", "em-inc-search-prev"},
      {"^W", "ed-delete-prev-word"},    {"\\e\\177", "ed-delete-prev-word"},
      {"\\e[1;5D", "ed-prev-word"},     {"\\e[1;5C", "em-next-word"},
      {"\\e[H", "ed-move-to-beg"},      {"\\e[F", "ed-move-to-end"},
      {"\\e[1~", "ed-move-to-beg"},     {"\\e[4~", "ed-move-to-end"},
      {"\\eOH", "ed-move-to-beg"},      {"\\eOF", "ed-move-to-end"},
      {"\\e[3~", "ed-delete-next-char"},
  };
  /* the wide call keeps our static strings; the narrow one leaks copies */
  el_wset(e, EL_ADDFN, L"mtr-complete", L"complete the name before the cursor", on_tab);
  for (size_t i = 0; i < sizeof binds / sizeof binds[0]; i++) el_set(e, EL_BIND, binds[i][0], binds[i][1], NULL);
}

/* Multibyte editing needs a UTF-8 LC_CTYPE; a plain "C" locale is taken as
 * UTF-8 too (as Python does), since terminals today send UTF-8. Only
 * LC_CTYPE changes: number formatting stays as Lua expects. */
static void set_ctype(void) {
  const char *name = setlocale(LC_CTYPE, "");
  if (name == NULL || strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0) setlocale(LC_CTYPE, "C.UTF-8");
}

void mtr_input_open(lua_State *L) {
  comp_L = L;
  if (!isatty(STDIN_FILENO)) return;
  set_ctype();
  el = el_init(MTR_PROGNAME, stdin, stdout, stderr);
  if (el == NULL) return;
  struct sigaction sa = {.sa_handler = on_sigcont}; /* no SA_RESTART: read_key must see it */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCONT, &sa, NULL);
  hist = mtr_history_open();
  el_set(el, EL_EDITOR, "emacs");
  el_set(el, EL_SIGNAL, 1);
  el_set(el, EL_PROMPT, get_prompt);
  el_set(el, EL_GETCFN, read_key);
  if (hist != NULL) el_set(el, EL_HIST, history, mtr_history_libedit(hist));
  bind_keys(el);
  el_source(el, NULL); /* the user's ~/.editrc may override the above */
}

void mtr_input_close(void) {
  if (el != NULL) el_end(el);
  mtr_history_close(hist);
  el = NULL;
  hist = NULL;
}

/* A line from a pipe or file, prompt printed as lua does. */
static char *plain_line(const char *p, bool *interrupted) {
  fputs(p, stdout);
  fflush(stdout);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len = getline(&line, &cap, stdin);
  if (len < 0) {
    free(line);
    *interrupted = errno == EINTR && mtr_intr_take_prompt();
    clearerr(stdin);
    return NULL;
  }
  if (len > 0 && line[len - 1] == '\n') line[len - 1] = '\0';
  return line;
}

char *mtr_input_line(const char *p, bool *interrupted) {
  *interrupted = false;
  mtr_intr_take_prompt(); /* forget a Ctrl-C from before this prompt */
  if (el == NULL) return plain_line(p, interrupted);
  prompt = p;
  ctrl_c = false;
  fflush(stdout);
  el_set(el, EL_PREP_TERM, 1); /* editing mode before the prompt shows: keys typed
                                  right after it are not echoed by the terminal too */
  int count;
  const char *s = el_gets(el, &count);
  if (s == NULL) {
    *interrupted = ctrl_c;
    return NULL;
  }
  char *line = strdup(s);
  if (line != NULL) line[strcspn(line, "\n")] = '\0';
  return line;
}

void mtr_input_remember(const char *line) {
  if (el != NULL) mtr_history_add(hist, line);
}
