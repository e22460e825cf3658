/*
 * demo_overload: under overload no stall over the threshold goes unsaid (issue 31, item 7).
 * Two CPU hogs of this test's own, the demo's threads churning (--churn-threads 400: threads
 * that keep starting and ending, each taking the mmap lock), and a 400 ms busy stall every
 * 0.5 s. lagscope's monitor then spends much of its time on its own slow work (every thread
 * captured, reports written), and before this test a stall that began and ended meanwhile
 * was simply missing: 21 of 59 under ASan, with monitor_starved_ms 0. Now each stall (but the
 * last, which the demo's end may cut) is a hang, or lies in a monitor_blind spell that covers
 * enough of it that the rest was shorter than the threshold; and the metrics' monitor_blind_ms
 * holds at least the spells told.
 */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STALL_MS 400.0
#define THRESHOLD_MS 250.0
/* After a blind spell the monitor posts a ping and measures from it: a hang then needs the
 * threshold, plus up to two frame budgets and a look's lateness. */
#define LOOK_SLACK_MS 60.0
#define SPANS_MAX 512

typedef struct span {
  double start_ms, end_ms;
} span;

typedef struct spans {
  span items[SPANS_MAX];
  int len;
} spans;

static void add_span(spans *s, double start_ns, double length_ms) {
  if (s->len < SPANS_MAX)
    s->items[s->len++] = (span){start_ns / 1e6, start_ns / 1e6 + length_ms};
}

static double overlap_ms(span a, span b) {
  double from = a.start_ms > b.start_ms ? a.start_ms : b.start_ms;
  double to = a.end_ms < b.end_ms ? a.end_ms : b.end_ms;
  return to > from ? to - from : 0.0;
}

static double covered_ms(span stall, const spans *by) {
  double sum = 0;
  for (int i = 0; i < by->len; i++) sum += overlap_ms(stall, by->items[i]);
  return sum;
}

static pid_t start_hog(void) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(120); /* never outlives a crashed test */
    for (volatile unsigned long n = 0;; n++) {
    }
  }
  return pid;
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[256];
  demo_temp_dir(dir, sizeof dir);
  pid_t hogs[2] = {start_hog(), start_hog()};
  CHECK(hogs[0] > 0 && hogs[1] > 0);
  char *args[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--stall-ms", "400",
                  "--stall-every", "0.5", "--duration", "8", "--churn-threads", "400",
                  "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  static spans stalls, hangs, blind;
  double blind_metric_ms = 0, blind_told_ms = 0;
  int hitches_long = 0;
  for (;;) {
    int result = 0;
    static char line[1 << 16];
    cJSON *e = spawn_read_json(&p, 60000, &result, line, sizeof line);
    if (e == NULL && result == SPAWN_LINE) continue;
    if (e == NULL) {
      CHECK_MSG(result == SPAWN_EOF, "reading the demo's lines: %d", result);
      break;
    }
    const char *type = spawn_json_type(e);
    if (strcmp(type, "demo_stall") == 0)
      add_span(&stalls, spawn_json_number(e, "started_ns", 0), spawn_json_number(e, "ms", 0));
    if (strcmp(type, "hang_ended") == 0)
      add_span(&hangs, spawn_json_number(e, "start_ns", 0), spawn_json_number(e, "duration_ms", 0));
    if (strcmp(type, "monitor_blind") == 0) {
      double ms = spawn_json_number(e, "duration_ms", 0);
      add_span(&blind, spawn_json_number(e, "start_ns", 0), ms);
      blind_told_ms += ms;
    }
    if (strcmp(type, "hitch") == 0) hitches_long += spawn_json_number(e, "duration_ms", 0) >= THRESHOLD_MS;
    if (strcmp(type, "metrics") == 0) { /* counts every spell told before it, and more */
      blind_metric_ms = spawn_json_number(e, "monitor_blind_ms", -1);
      CHECK_MSG(blind_metric_ms >= blind_told_ms - 1.0, "monitor_blind_ms %.0f, spells told %.0f",
                blind_metric_ms, blind_told_ms);
    }
    cJSON_Delete(e);
  }
  int status = spawn_wait(&p, 30000);
  spawn_close(&p);
  for (int i = 0; i < 2; i++) {
    kill(hogs[i], SIGKILL);
    waitpid(hogs[i], NULL, 0);
  }
  demo_remove_dir(dir);
  CHECK_EQ_INT(status, 0);

  int as_hangs = 0, as_blind = 0;
  for (int i = 0; i + 1 < stalls.len; i++) { /* the last may be cut by the demo's end */
    span s = stalls.items[i];
    if (covered_ms(s, &hangs) > 0) {
      as_hangs++;
      continue;
    }
    double blind_ms = covered_ms(s, &blind);
    if (blind_ms < STALL_MS - THRESHOLD_MS - LOOK_SLACK_MS) { /* the spans, for the log */
      for (int k = 0; k < stalls.len && k < 4; k++)
        printf("stall %d: %.0f..%.0f\n", k + 1, stalls.items[k].start_ms, stalls.items[k].end_ms);
      for (int k = 0; k < hangs.len && k < 4; k++)
        printf("hang %d: %.0f..%.0f\n", k + 1, hangs.items[k].start_ms, hangs.items[k].end_ms);
      for (int k = 0; k < blind.len && k < 6; k++)
        printf("blind %d: %.0f..%.0f\n", k + 1, blind.items[k].start_ms, blind.items[k].end_ms);
      printf("hitches of the threshold or more: %d\n", hitches_long);
      fflush(stdout); /* CHECK aborts: a buffered log would be lost with it */
    }
    CHECK_MSG(blind_ms >= STALL_MS - THRESHOLD_MS - LOOK_SLACK_MS,
              "stall %d (%.0f ms) is no hang, and lagscope said it was blind for only %.0f ms "
              "of it", i + 1, s.end_ms - s.start_ms, blind_ms);
    as_blind++;
  }
  printf("demo_overload: %d stalls: %d hangs, %d in blind spells (%d spells told, %.0f ms; "
         "monitor_blind_ms %.0f); %d hitches of the threshold or more\n",
         stalls.len - 1, as_hangs, as_blind, blind.len, blind_told_ms, blind_metric_ms,
         hitches_long);
  CHECK_MSG(stalls.len >= 8, "only %d stalls in 8 s", stalls.len);
  return 0;
}
