/* history.c -- the REPL's history: libedit's in-memory list plus the file
 * ~/.moontorch_history, plain text, one line per entry, oldest first. Each
 * entry is appended as soon as it is entered (so a crash loses nothing); at
 * exit the file is cut back to the last MAX_ENTRIES. Never fails loudly:
 * without $HOME or a writable file the history just stays in memory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <histedit.h>

#include "mtr.h"

#define MAX_ENTRIES 1000
#define FILE_NAME ".moontorch_history"

struct mtr_history {
  History *h;
  char *path;   /* NULL: no file */
  FILE *out;    /* opened for appending at the first new entry */
  int lines;    /* lines in the file, as far as this session knows */
};

static char *history_path(void) {
  const char *home = getenv("HOME");
  if (home == NULL || *home == '\0') return NULL;
  size_t n = strlen(home) + sizeof FILE_NAME + 1;
  char *path = malloc(n);
  if (path != NULL) snprintf(path, n, "%s/%s", home, FILE_NAME);
  return path;
}

static void load(mtr_history *hs) {
  FILE *f = fopen(hs->path, "r");
  if (f == NULL) return;
  HistEvent ev;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    hs->lines++;
    if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    if (len > 0) history(hs->h, &ev, H_ENTER, line);
  }
  free(line);
  fclose(f);
}

mtr_history *mtr_history_open(void) {
  mtr_history *hs = calloc(1, sizeof *hs);
  if (hs == NULL) return NULL;
  HistEvent ev;
  hs->h = history_init();
  if (hs->h == NULL) {
    free(hs);
    return NULL;
  }
  history(hs->h, &ev, H_SETSIZE, MAX_ENTRIES);
  history(hs->h, &ev, H_SETUNIQUE, 1);
  hs->path = history_path();
  if (hs->path != NULL) load(hs);
  return hs;
}

struct history *mtr_history_libedit(mtr_history *hs) { return hs ? hs->h : NULL; }

/* Adds a line unless it is blank or repeats the previous entry. */
void mtr_history_add(mtr_history *hs, const char *line) {
  if (hs == NULL || line[strspn(line, " \t")] == '\0' || strchr(line, '\n') != NULL) return;
  HistEvent ev;
  if (history(hs->h, &ev, H_FIRST) == 0 && strcmp(ev.str, line) == 0) return;
  history(hs->h, &ev, H_ENTER, line);
  if (hs->path == NULL) return;
  if (hs->out == NULL) {
    int fd = open(hs->path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    hs->out = fd < 0 ? NULL : fdopen(fd, "a");
    if (hs->out == NULL) {
      if (fd >= 0) close(fd);
      free(hs->path); /* unwritable: keep the history in memory only */
      hs->path = NULL;
      return;
    }
  }
  fprintf(hs->out, "%s\n", line);
  fflush(hs->out);
  hs->lines++;
}

/* Rewrites the file with the entries in memory (the newest MAX_ENTRIES),
 * through a temporary file so that a failure leaves the old one intact. */
static void rewrite(mtr_history *hs) {
  size_t n = strlen(hs->path) + 32;
  char *tmp = malloc(n);
  if (tmp == NULL) return;
  snprintf(tmp, n, "%s.tmp%ld", hs->path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
  if (f == NULL) {
    if (fd >= 0) close(fd);
    free(tmp);
    return;
  }
  HistEvent ev;
  for (int r = history(hs->h, &ev, H_LAST); r == 0; r = history(hs->h, &ev, H_PREV))
    fprintf(f, "%s\n", ev.str);
  if (fclose(f) == 0)
    rename(tmp, hs->path);
  else
    unlink(tmp);
  free(tmp);
}

void mtr_history_close(mtr_history *hs) {
  if (hs == NULL) return;
  if (hs->out != NULL) fclose(hs->out);
  if (hs->path != NULL && hs->lines > MAX_ENTRIES) rewrite(hs);
  history_end(hs->h);
  free(hs->path);
  free(hs);
}
