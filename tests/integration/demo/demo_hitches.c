/*
 * demo_hitches: stalls shorter than the hang threshold are hitches, each explained. The demo
 * stalls 120 ms (demo_busy_spin) every second: each stall is one hitch event whose heaviest
 * stack names demo_busy_spin, whose duration is from the main thread's last sign of life to its
 * first after (issue 45): at least the stall's, longer by at most a frame (16.7 ms at the
 * demo's 60 Hz) and the loop's wake-up on a loaded machine (20 ms), with a cause; and there
 * is no hang.
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
  int hitches = 0, hangs = 0;
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
    if (strcmp(type, "hitch") == 0) {
      double ms = spawn_json_number(e, "duration_ms", -1);
      const char *names[64];
      size_t n = demo_functions(member(e, "heaviest_stack"), names, 64);
      const cJSON *kind = member(member(e, "cause"), "kind");
      printf("hitch %d: %.1f ms, %zu frames, cause %s\n", hitches + 1, ms, n,
             cJSON_IsString(kind) ? kind->valuestring : "(none)");
      CHECK_MSG(ms >= 120.0 && ms <= 120.0 + 16.7 + 20.0, "a hitch of %.1f ms for a 120 ms stall", ms);
      CHECK_MSG(demo_find(names, n, "demo_busy_spin", 0) >= 0, "no demo_busy_spin in its stack");
      CHECK_MSG(cJSON_IsString(kind) && strcmp(kind->valuestring, "cpu") == 0, "its cause");
      hitches++;
    }
    cJSON_Delete(e);
  }
  CHECK_EQ_INT(spawn_wait(&p, 20000), 0);
  spawn_close(&p);
  CHECK_EQ_INT(hangs, 0);
  CHECK_MSG(hitches >= HITCHES, "%d hitches for 5 stalls", hitches);
  return 0;
}
