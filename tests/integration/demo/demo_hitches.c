/*
 * demo_hitches: stalls shorter than the hang threshold are hitches, each explained. The demo
 * stalls 120 ms (demo_busy_spin) every second: each stall is one hitch event measured from the
 * main thread's last sign of life to its first after (issue 45), so it holds the stall the demo
 * said it began (demo_stall's started_ns) and its 120 ms, and is no hang. A hitch with samples
 * names demo_busy_spin in its heaviest stack and "cpu" as its cause; on a loaded machine the
 * monitor may take none in time (then it says no cause), never one from after the stall (a
 * sample whose capture returned after the main thread's first sign of life showed it back in
 * its loop: "ppoll <- demo_wait", cause idle, 4 runs of 6 under three CPU hogs).
 */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define HITCHES 4

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[256];
  demo_temp_dir(dir, sizeof dir);
  char *args[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--stall-ms", "120",
                  "--stall-every", "1", "--duration", "5.5", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  int hitches = 0, sampled = 0, hangs = 0;
  double stall_started_ns = -1;
  for (;;) {
    int result = 0;
    char line[1 << 16];
    cJSON *e = spawn_read_json(&p, 15000, &result, line, sizeof line);
    if (e == NULL && result == SPAWN_LINE) continue; /* not JSON */
    if (e == NULL) {
      CHECK_MSG(result == SPAWN_EOF, "reading the demo's lines: %d", result);
      break; /* the demo exited (--duration) */
    }
    const char *type = spawn_json_type(e);
    hangs += strcmp(type, "hang_began") == 0;
    if (strcmp(type, "demo_stall") == 0) stall_started_ns = spawn_json_number(e, "started_ns", -1);
    if (strcmp(type, "hitch") == 0) {
      double ms = spawn_json_number(e, "duration_ms", -1);
      double start_ns = spawn_json_number(e, "start_ns", -1);
      double samples = spawn_json_number(e, "sample_count", -1);
      const char *names[64];
      size_t n = demo_functions(member(e, "heaviest_stack"), names, 64);
      const cJSON *kind = member(member(e, "cause"), "kind");
      printf("hitch %d: %.1f ms from %.1f ms before the stall, %.0f samples, %zu frames, "
             "cause %s\n", hitches + 1, ms, (stall_started_ns - start_ns) / 1e6, samples, n,
             cJSON_IsString(kind) ? kind->valuestring : "(none)");
      fflush(stdout); /* before a CHECK's abort */
      CHECK_MSG(stall_started_ns > 0 && start_ns <= stall_started_ns &&
                    start_ns + ms * 1e6 >= stall_started_ns + 120e6 && ms < 250.0,
                "a hitch of %.1f ms from %.1f ms before a 120 ms stall", ms,
                (stall_started_ns - start_ns) / 1e6);
      if (samples > 0) {
        CHECK_MSG(demo_find(names, n, "demo_busy_spin", 0) >= 0, "no demo_busy_spin in its stack");
        CHECK_MSG(cJSON_IsString(kind) && strcmp(kind->valuestring, "cpu") == 0, "its cause");
        sampled++;
      } else {
        CHECK_MSG(n == 0 && !cJSON_IsString(kind), "a stack or a cause without samples");
      }
      hitches++;
    }
    cJSON_Delete(e);
  }
  CHECK_EQ_INT(spawn_wait(&p, 20000), 0);
  spawn_close(&p);
  CHECK_EQ_INT(hangs, 0);
  CHECK_MSG(hitches >= HITCHES, "%d hitches for 5 stalls", hitches);
  CHECK_MSG(sampled >= 1, "none of the %d hitches sampled", hitches);
  return 0;
}
