/*
 * demo_causes: every hang names why. For each stall kind of the demo, the report's cause (and
 * the hang_ended line's cause.kind, summary and label) says what the main thread waited for;
 * the label, the one line every list shows, starts with the kind and names the target:
 *   sleep     kind sleep
 *   io        kind io, target the pipe ("pipe:[…]") whose writer is late
 *   net       kind io, target the TCP connection to the late local server, with its peer
 *   open      kind io, target the path openat was given (a FIFO no writer opened yet), made
 *             whole from its folder's fd (issue 32, section 2: "io · openat" named no path)
 *   phases    kind io, told in two phases (a read, then the open: "Blocked … in read() on
 *             pipe:[…], then blocked … in openat() on …"), labelled by the longer, the open
 *   lock      kind lock, owner demo-holder, itself asleep
 *   chain     kind lock, owner demo-chain-a, itself waiting for a lock held by demo-chain-b,
 *             asleep
 *   deadlock  kind deadlock, the cycle main -> demo-deadlock -> main, already in the report
 *             in progress (the hang never ends: the test kills the demo)
 *   modal     kind idle (the main thread waits in its loop's own poll, which does not run the
 *             ping): reported, not counted (hang_ended "counted": false, the metrics' hangs 0)
 */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void start_demo(spawn_proc *p, const char *demo, const char *kind, const char *dir) {
  char *args[] = {(char *)demo, "--headless", "--events", "jsonl", "--stall-kind", (char *)kind,
                  "--stall-ms", "800", "--stall-every", "1.5", "--duration", "2.8",
                  "--report-dir", (char *)dir, "--port", "0", "--bind", "127.0.0.1", NULL};
  CHECK(spawn_start(p, demo, args, SPAWN_INHERIT_STDERR) == 0);
}

/* The first hang's report and its hang_ended line's cause. */
static cJSON *ended_report(const char *demo, const char *kind, char *dir, cJSON **line_cause) {
  static spawn_proc p;
  start_demo(&p, demo, kind, dir);
  cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
  CHECK_MSG(ended != NULL, "%s: no hang_ended", kind);
  *line_cause = cJSON_Duplicate(member(ended, "cause"), 1);
  CHECK_MSG(cJSON_IsTrue(member(ended, "counted")), "%s: a hang not counted", kind);
  cJSON *report = demo_read_json_file(text(ended, "report_path"));
  CHECK_MSG(report != NULL, "%s: the report %s", kind, text(ended, "report_path"));
  cJSON_Delete(ended);
  demo_stop(&p);
  return report;
}

static const cJSON *check_cause(const char *kind, const cJSON *report, const cJSON *line_cause,
                                const char *expected) {
  const cJSON *cause = member(report, "cause");
  printf("%s: %s: %s\n", kind, text(cause, "kind"), text(cause, "summary"));
  CHECK_MSG(strcmp(text(cause, "kind"), expected) == 0, "%s: cause %s, expected %s", kind,
            text(cause, "kind"), expected);
  CHECK_MSG(strcmp(text(line_cause, "kind"), expected) == 0, "%s: the line's cause %s", kind,
            text(line_cause, "kind"));
  CHECK(strcmp(text(line_cause, "summary"), text(cause, "summary")) == 0);
  const char *label = text(cause, "label");
  printf("%s: label %s\n", kind, label);
  CHECK_MSG(strcmp(text(line_cause, "label"), label) == 0, "%s: the line's label %s", kind,
            text(line_cause, "label"));
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "%s · ", expected);
  CHECK_MSG(strncmp(label, prefix, strlen(prefix)) == 0, "%s: label %s", kind, label);
  double share = cJSON_GetNumberValue(member(cause, "share"));
  CHECK_MSG(share >= 0.8, "%s: the cause explains %.2f of the samples", kind, share);
  return cause;
}

static void one_kind(const char *demo, const char *kind) {
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  cJSON *line_cause = NULL;
  cJSON *report = ended_report(demo, kind, dir, &line_cause);
  if (strcmp(kind, "sleep") == 0) {
    check_cause(kind, report, line_cause, "sleep");
  } else if (strcmp(kind, "io") == 0) {
    const cJSON *c = check_cause(kind, report, line_cause, "io");
    CHECK_MSG(strcmp(text(c, "syscall"), "read") == 0, "io: syscall %s", text(c, "syscall"));
    CHECK_MSG(strncmp(text(c, "target"), "pipe:[", 6) == 0, "io: target %s", text(c, "target"));
    CHECK_MSG(strncmp(text(c, "label"), "io · read pipe:[", 17) == 0, "io: label %s",
              text(c, "label"));
  } else if (strcmp(kind, "net") == 0) {
    const cJSON *c = check_cause(kind, report, line_cause, "io");
    const char *target = text(c, "target");
    CHECK_MSG(strncmp(target, "tcp 127.0.0.1:", 14) == 0 && strstr(target, " -> 127.0.0.1:"),
              "net: target %s", target);
  } else if (strcmp(kind, "open") == 0) {
    /* The path openat was given, relative to its folder's fd, named whole. */
    const cJSON *c = check_cause(kind, report, line_cause, "io");
    const char *target = text(c, "target");
    CHECK_MSG(strcmp(text(c, "syscall"), "openat") == 0, "open: syscall %s", text(c, "syscall"));
    CHECK_MSG(target[0] == '/' && strstr(target, "/lagscope-demo-") != NULL &&
                  strcmp(target + strlen(target) - strlen("/demo.fifo"), "/demo.fifo") == 0,
              "open: target %s", target);
    CHECK_MSG(strstr(text(c, "summary"), target) != NULL, "open: summary %s", text(c, "summary"));
  } else if (strcmp(kind, "phases") == 0) {
    /* Told in its two phases, in time order, each with its call and target, and by the
     * dominant one (the open), not by the read it began with (issue 32, section 1). */
    const cJSON *c = check_cause(kind, report, line_cause, "io");
    const cJSON *phases = member(c, "phases");
    CHECK_MSG(cJSON_GetArraySize(phases) == 2, "phases: %d phases", cJSON_GetArraySize(phases));
    const cJSON *read = cJSON_GetArrayItem(phases, 0), *open = cJSON_GetArrayItem(phases, 1);
    const char *fifo = text(open, "target");
    CHECK_MSG(strcmp(text(read, "syscall"), "read") == 0 &&
                  strncmp(text(read, "target"), "pipe:[", 6) == 0,
              "phases: the first is %s on %s", text(read, "syscall"), text(read, "target"));
    CHECK_MSG(strcmp(text(open, "syscall"), "openat") == 0 && strlen(fifo) > 10 &&
                  strcmp(fifo + strlen(fifo) - 10, "/demo.fifo") == 0,
              "phases: the second is %s on %s", text(open, "syscall"), fifo);
    double read_share = cJSON_GetNumberValue(member(read, "share"));
    double open_share = cJSON_GetNumberValue(member(open, "share"));
    printf("phases: read %.2f, open %.2f\n", read_share, open_share);
    CHECK(read_share >= 0.15 && read_share <= 0.45 && open_share >= 0.55 && open_share <= 0.85);
    CHECK(cJSON_GetNumberValue(member(read, "to_ms")) <=
          cJSON_GetNumberValue(member(open, "from_ms")));
    const char *summary = text(c, "summary");
    CHECK_MSG(strncmp(summary, "Blocked ", 8) == 0 && strstr(summary, " in read() on pipe:[") &&
                  strstr(summary, ", then blocked ") && strstr(summary, " in openat() on /"),
              "phases: summary %s", summary);
    CHECK_MSG(strcmp(text(c, "syscall"), "openat") == 0, "phases: syscall %s", text(c, "syscall"));
    CHECK_MSG(strncmp(text(c, "label"), "io · openat /", 14) == 0, "phases: label %s",
              text(c, "label"));
  } else if (strcmp(kind, "lock") == 0) {
    const cJSON *c = check_cause(kind, report, line_cause, "lock");
    const cJSON *owner = member(c, "owner");
    CHECK_MSG(strcmp(text(owner, "name"), "demo-holder") == 0, "lock: owner %s",
              text(owner, "name"));
    CHECK(strcmp(text(member(owner, "cause"), "kind"), "sleep") == 0);
    CHECK(cJSON_GetArraySize(member(owner, "stack")) > 2);
    CHECK_MSG(strcmp(text(c, "label"), "lock · demo-holder") == 0, "lock: label %s",
              text(c, "label"));
  } else if (strcmp(kind, "chain") == 0) {
    const cJSON *c = check_cause(kind, report, line_cause, "lock");
    const cJSON *a = member(c, "owner");
    CHECK_MSG(strcmp(text(a, "name"), "demo-chain-a") == 0, "chain: owner %s", text(a, "name"));
    const cJSON *a_cause = member(a, "cause");
    CHECK(strcmp(text(a_cause, "kind"), "lock") == 0);
    const cJSON *b = member(a_cause, "owner");
    CHECK_MSG(strcmp(text(b, "name"), "demo-chain-b") == 0, "chain: second owner %s",
              text(b, "name"));
    CHECK(strcmp(text(member(b, "cause"), "kind"), "sleep") == 0);
    CHECK(strstr(text(c, "summary"), "demo-chain-b") != NULL);
    CHECK_MSG(strcmp(text(c, "label"), "lock · demo-chain-a") == 0, "chain: label %s",
              text(c, "label"));
  }
  cJSON_Delete(line_cause);
  cJSON_Delete(report);
  demo_remove_dir(dir);
}

/* The in-progress report of a hang that never ends, once it names a deadlock (bounded). */
static cJSON *deadlock_report(const char *dir, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
      if (strstr(e->d_name, ".json") == NULL || e->d_name[0] == '.') continue;
      char path[512];
      snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
      cJSON *r = demo_read_json_file(path);
      if (r != NULL && strcmp(text(member(r, "cause"), "kind"), "deadlock") == 0) {
        closedir(d);
        return r;
      }
      cJSON_Delete(r);
    }
    if (d != NULL) closedir(d);
    usleep(50000);
  }
  return NULL;
}

static void deadlock(const char *demo) {
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  static spawn_proc p;
  start_demo(&p, demo, "deadlock", dir);
  cJSON *began = demo_wait_for(&p, "hang_began", 15000);
  CHECK_MSG(began != NULL, "deadlock: no hang_began");
  cJSON_Delete(began);
  cJSON *report = deadlock_report(dir, 10000);
  CHECK_MSG(report != NULL, "deadlock: no report names the deadlock");
  const cJSON *cause = member(report, "cause");
  printf("deadlock: %s: %s\n", text(report, "state"), text(cause, "summary"));
  CHECK(strcmp(text(report, "state"), "in_progress") == 0);
  const cJSON *cycle = member(cause, "cycle");
  CHECK_EQ_INT(cJSON_GetArraySize(cycle), 2);
  CHECK_EQ_INT((int)cJSON_GetNumberValue(cJSON_GetArrayItem(cycle, 0)), p.pid);
  CHECK(strstr(text(cause, "summary"), "demo-deadlock") != NULL);
  printf("deadlock: label %s\n", text(cause, "label"));
  CHECK_MSG(strncmp(text(cause, "label"), "deadlock · ", 12) == 0 &&
                strstr(text(cause, "label"), "demo-deadlock") != NULL,
            "deadlock: label %s", text(cause, "label"));
  cJSON_Delete(report);
  spawn_signal(&p, SIGKILL);
  spawn_wait(&p, 20000);
  spawn_close(&p);
  demo_remove_dir(dir);
}

/* A modal loop: the main thread waits in its loop's own poll (learnt while the demo ran idle)
 * and does not run the ping for 1 s: idle, reported but not a hang. */
static void modal(const char *demo) {
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  static spawn_proc p;
  char *args[] = {(char *)demo, "--headless", "--events", "jsonl", "--stall-kind", "modal",
                  "--stall-ms", "1000", "--stall-every", "2.5", "--duration", "4.5",
                  "--report-dir", dir, "--port", "0", "--bind", "127.0.0.1", NULL};
  CHECK(spawn_start(&p, demo, args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
  CHECK_MSG(ended != NULL, "modal: no hang_ended");
  const cJSON *cause = member(ended, "cause");
  printf("modal: %s: %s (counted %s)\n", text(cause, "kind"), text(cause, "summary"),
         cJSON_IsTrue(member(ended, "counted")) ? "yes" : "no");
  CHECK_MSG(strcmp(text(cause, "kind"), "idle") == 0, "modal: cause %s", text(cause, "kind"));
  CHECK_MSG(cJSON_IsFalse(member(ended, "counted")), "modal: an idle loop counted as a hang");
  CHECK(cJSON_GetNumberValue(member(ended, "duration_ms")) > 700);
  cJSON *report = demo_read_json_file(text(ended, "report_path"));
  CHECK_MSG(report != NULL, "modal: its report is kept");
  CHECK(strcmp(text(member(report, "cause"), "kind"), "idle") == 0);
  cJSON_Delete(report);
  cJSON_Delete(ended);
  cJSON *metrics = demo_wait_for(&p, "metrics", 5000);
  CHECK_MSG(metrics != NULL, "modal: no metrics after the hang");
  CHECK_MSG(cJSON_GetNumberValue(member(metrics, "hangs")) == 0, "modal: metrics say %g hangs",
            cJSON_GetNumberValue(member(metrics, "hangs")));
  cJSON_Delete(metrics);
  demo_stop(&p);
  demo_remove_dir(dir);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: %s path/to/lagscope-demo", argv[0]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *kinds[] = {"sleep", "io", "net", "open", "phases", "lock", "chain"};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) one_kind(argv[1], kinds[i]);
  deadlock(argv[1]);
  modal(argv[1]);
  printf("ok\n");
  return 0;
}
