/*
 * demo_sigstop: a process that is stopped (SIGSTOP, a debugger, the background) is not hung.
 * Runs the demo with no stalls, stops it for 2 s, continues it, and checks that lagscope never
 * reported a hang while metrics keep coming, and that they count the 2 s as stopped_ms.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "spawn.h"

#include <signal.h>
#include <string.h>

#define READ_TIMEOUT_MS 10000

/* Reads lines until the next "metrics" line (bounded), whose stopped_ms it returns. Fails on
 * any hang_began. */
static double read_until_metrics(spawn_proc *p) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)READ_TIMEOUT_MS * 1000000u;
  for (;;) {
    CHECK_MSG(spawn_now_ns() < deadline, "no metrics line within %d ms", READ_TIMEOUT_MS);
    int result;
    cJSON *json = spawn_read_json(p, READ_TIMEOUT_MS, &result, NULL, 0);
    CHECK_MSG(result == SPAWN_LINE, "reading the demo's stdout: result %d", result);
    CHECK_MSG(json != NULL, "a line of stdout is not a JSON object");
    const char *type = spawn_json_type(json);
    CHECK(type != NULL);
    CHECK_MSG(strcmp(type, "hang_began") != 0, "a stopped process was reported as hung");
    int is_metrics = strcmp(type, "metrics") == 0;
    if (!is_metrics) printf("demo: %s\n", type);
    double stopped_ms = spawn_json_number(json, "stopped_ms", -1);
    cJSON_Delete(json);
    if (is_metrics) return stopped_ms;
  }
}

/* After SIGTERM: the rest of stdout, still without a hang. */
static void read_until_eof(spawn_proc *p) {
  int result;
  do {
    cJSON *json = spawn_read_json(p, READ_TIMEOUT_MS, &result, NULL, 0);
    if (result != SPAWN_LINE) break;
    CHECK(json != NULL && spawn_json_type(json) != NULL);
    CHECK_MSG(strcmp(spawn_json_type(json), "hang_began") != 0, "hang reported at shutdown");
    cJSON_Delete(json);
  } while (result == SPAWN_LINE);
  CHECK_MSG(result == SPAWN_EOF, "stdout did not close after SIGTERM: result %d", result);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: %s path/to/lagscope-demo", argv[0]);
  char *args[] = {argv[1], "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", NULL};
  spawn_proc *p = calloc(1, sizeof *p);
  CHECK(p != NULL);
  CHECK(spawn_start(p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);

  CHECK_EQ_INT(read_until_metrics(p), 0);
  CHECK(spawn_signal(p, SIGSTOP) == 0);
  spawn_sleep_ms(2000); /* the stimulus: 2 s stopped, 8 times the hang threshold */
  CHECK(spawn_signal(p, SIGCONT) == 0);
  double stopped_ms = 0;
  for (int i = 0; i < 3; i++) stopped_ms = read_until_metrics(p);
  /* The metrics count the time excused: about the 2 s (the monitor learns of it when it
   * wakes, up to its plan's length after). */
  printf("stopped_ms %.0f after 2 s stopped\n", stopped_ms);
  CHECK_MSG(stopped_ms >= 1500 && stopped_ms <= 2600, "stopped_ms %.0f", stopped_ms);

  CHECK(spawn_signal(p, SIGTERM) == 0);
  read_until_eof(p);
  int code = spawn_wait(p, READ_TIMEOUT_MS);
  CHECK_MSG(code == 0, "demo exit code %d after SIGTERM", code);
  spawn_close(p);
  free(p);
  printf("ok\n");
  return 0;
}
