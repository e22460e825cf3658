/* lagscope-run's run summary: the hangs its program had, read from the channel file the
 * preload wrote, told on stderr, as JUnit XML and as JSON, and the exit status a hang budget
 * gives. ("verdict" names a hang's cause only: core/report/verdict.h.) */
#ifndef LAGSCOPE_ATTACH_RUN_SUMMARY_H
#define LAGSCOPE_ATTACH_RUN_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loops.h"

/* The exit status when a hang was longer than --budget-ms. */
#define LAGSCOPE_RUN_OVER_BUDGET 3
#define LAGSCOPE_RUN_NOT_WATCHED 2 /* lagscope did not start in the program: no verdict */
/* The program exited 0, but lagscope saw none of the loops it hooks (loops.h: GLib, SDL2, …):
 * nothing was watched, so "no hang" would be a guess (--allow-unwatched: expected, exit 0). */
#define LAGSCOPE_RUN_UNWATCHED 5

typedef struct lagscope__run_hang {
  uint64_t id;
  uint64_t start_ns;  /* monotonic */
  double duration_ms;
  int ended;          /* 0: the program ended during it; duration_ms runs to the exit */
  int startup;        /* in the program's start-up: before its main thread's first sign of
                         life (the events' "app_state": "startup") */
  double stopped_ms;  /* not ended: the time it was stopped before the exit, not counted */
  char *cause;        /* "cpu: On the CPU for 703 ms in f", or "" */
  char *own_frames;   /* the heaviest stack's frames of the program's own code, innermost
                         first, "f (file.c:12) <- g (file.c:40)"; "" when none */
  char signature[17]; /* its signature (hang_ended, or the report of a hang not ended); "" */
  char *name;         /* a name that stays from run to run, for a CI history: the cause's kind
                         and the top own frames' functions, "sleep in f <- g <- main"; "" */
  char *label;        /* the cause's label ("sleep · f"), or "" */
  char *report_path;  /* the report on disk, or "" */
  int recovered;      /* not ended: cause, frames and signature read from its report's last
                         rewrite (the hang recorder rewrites it while the hang lasts) */
  double report_ms;   /* recovered: the duration its report's last rewrite says */
} lagscope__run_hang;

/* When the program was stopped (SIGSTOP, SIGTSTP: lagscope-run, its parent, sees it stop and
 * go on), monotonic: the last LAGSCOPE_RUN_STOPS_KEPT stops, so that a hang the program's end
 * cut short (always the last hang) does not count them. */
#define LAGSCOPE_RUN_STOPS_KEPT 64
typedef struct lagscope__run_stops {
  uint64_t start_ns[LAGSCOPE_RUN_STOPS_KEPT], end_ns[LAGSCOPE_RUN_STOPS_KEPT];
  uint64_t count; /* stops so far; stop i is at i % LAGSCOPE_RUN_STOPS_KEPT */
  int stopped;    /* the last has not ended */
} lagscope__run_stops;

/* The program stopped (stopped: 1) or went on (0) at now_ns. F */
void lagscope__run_stops_note(lagscope__run_stops *stops, uint64_t now_ns, int stopped);
/* How long of [from_ns, to_ns] the program was stopped, as far as the kept stops tell; a stop
 * not ended runs to to_ns. F */
uint64_t lagscope__run_stopped_within(const lagscope__run_stops *stops, uint64_t from_ns,
                                      uint64_t to_ns);

typedef struct lagscope__run_summary {
  lagscope__run_hang *hangs;
  size_t count;
  size_t capacity;
  int loops_known;    /* a run_loops line was read */
  /* Each loop of loops.h the line said was seen (int glib, sdl, gl, x11: its key). */
#define LAGSCOPE__RUN_LOOP_FIELD(id, key, name, brief, hooks) int key;
  LAGSCOPE__RUN_LOOPS(LAGSCOPE__RUN_LOOP_FIELD)
#undef LAGSCOPE__RUN_LOOP_FIELD
  size_t lines;       /* lines read, whatever they held */
  size_t bad_lines;   /* lines that were not the JSON expected: skipped */
  /* Spells in which lagscope could not watch the main thread (monitor_blind events: its own
   * work, or a CPU it waited for, under load), and their time: a stall then may be missing. */
  size_t blind_spells;
  double blind_ms;
  char *not_started;  /* why lagscope did not start in the program (a run_error line); NULL */
  /* The HUD overlay's last failure (an error event of the overlay's: "no HUD overlay on
   * display …", as when the X server died under it); NULL when none. */
  char *overlay_failed;
  int off;            /* it was told not to (LAGSCOPE_AUTOSTART=0: a run_off line) */
  /* The budget of hangs in the start-up (--budget-startup): -1 (as read) the budget's; 0 none
   * is over it. Only where there is a budget. */
  int64_t startup_budget_ms;
  int allow_unwatched; /* --allow-unwatched: a run with no loop seen is expected, no error */
  /* The run_started line of the preload: the run's id, the program's pid, its report folder
   * (where a hang not ended is looked for). "" and 0 when none was read. */
  char run_id[64];
  long pid;
  char *report_dir;
} lagscope__run_summary;

/* Reads the channel file at path (a missing file is no hang). A hang still open at the
 * program's exit (exit_ns, monotonic) lasts until then, less the time stops (may be NULL) says
 * the program was stopped. Allocates; 0, or -1 with errno (ENOMEM) and what was read so far. */
int lagscope__run_summary_read(const char *path, uint64_t exit_ns,
                               const lagscope__run_stops *stops, lagscope__run_summary *out);
void lagscope__run_summary_free(lagscope__run_summary *summary);

/* 1 when an error event's message is the HUD overlay's failure ("no HUD overlay on display
 * …"): the preload passes those on to lagscope-run, which says the last in its summary. F */
int lagscope__run_overlay_error(const char *message);

/* The report of hang h->id of the program pid in report_dir (as lagscope-run finds a hang not
 * ended's): its cause, frames, signature, label and last duration (report_ms) into h, and
 * h->recovered. 0 (found or not), -1 without memory. Allocates: lagscope__run_hang_clear. */
int lagscope__run_find_report(lagscope__run_hang *h, const char *report_dir, long pid);
void lagscope__run_hang_clear(lagscope__run_hang *h);

/* Whether lagscope saw none of the loops it hooks in the program (a run_loops line said so):
 * nothing of it was watched. */
int lagscope__run_unwatched(const lagscope__run_summary *summary);

/* Hangs longer than budget_ms (0: no budget; none is over it). */
size_t lagscope__run_over_budget(const lagscope__run_summary *summary, uint32_t budget_ms);
/* Whether hang h is over budget_ms, or, in the start-up, over the start-up budget when one was
 * given (0: no budget). F */
int lagscope__run_hang_is_over(const lagscope__run_summary *summary, const lagscope__run_hang *h,
                               uint32_t budget_ms);

/* The summary lagscope-run prints: each hang's duration, cause and own frames. */
void lagscope__run_summary_print(FILE *out, const lagscope__run_summary *summary, const char *program,
                           uint32_t budget_ms);

/* JUnit XML: one testcase per hang, failing when over the budget (every hang without one),
 * one passing testcase when none fails; an unwatched run (not allowed) is one testcase with an
 * error. 0, or -1 with a sentence in why. */
int lagscope__run_junit(const char *path, const lagscope__run_summary *summary,
                        const char *program, uint32_t budget_ms, char *why, size_t why_size);

/* text as a JSON string, quoted: '"', '\\' and control characters escaped, what is not UTF-8
 * as U+FFFD, so that any input gives valid JSON. */
void lagscope__put_json_string(FILE *out, const char *text);

/* lagscope-run --json: the run as one JSON object for scripts (docs/guide.md, "In CI"): the
 * program, the run's id, the exit status, whether it was watched, error (NULL, or why there is
 * no verdict), each hang (its stable name, signature, cause, own frames, duration, ended,
 * start-up, over the budget, report), and, when comparison is not NULL, that object's text as
 * the "comparison" member. 0, or -1 with a sentence in why. */
int lagscope__run_json(const char *path, const lagscope__run_summary *summary, const char *program,
                       uint32_t budget_ms, int status, const char *error, const char *comparison,
                       char *why, size_t why_size);

/* text as XML's character data or attribute value (the JUnit files of lagscope-run and
 * lagscope-compare): its five special characters escaped, control characters dropped, and
 * what is not UTF-8 or no character of XML's as U+FFFD, so that any input parses. */
void lagscope__run_put_xml(FILE *out, const char *text);

/* The length of the valid UTF-8 sequence at p (1..4) and its code point in *cp; 0 when p does
 * not start one (a stray or cut byte, an overlong form, a surrogate, past U+10FFFF). */
size_t lagscope__utf8_next(const unsigned char *p, uint32_t *cp);

/* Opens path for a result file (--junit, --summary-md) and empties it: a regular file, a
 * character device (/dev/null, a terminal) or a pipe that has a reader (/dev/stdout into
 * `| tee`). NULL with a sentence in why for what could make the writer wait for ever (a FIFO
 * no one reads) or is no file (a socket, a folder, a block device). Allocates (the FILE). */
FILE *lagscope__output_open(const char *path, char *why, size_t why_size);
/* Closes it: 0, or -1 with a sentence in why when a write failed. */
int lagscope__output_close(FILE *out, char *why, size_t why_size);

#endif
