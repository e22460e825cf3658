/*
 * demo_stall_kinds: for each kind of stall the demo makes (busy, lock, alloc), lagscope reports
 * each stall as exactly one hang, began then ended, lasting about as long as the stall.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "spawn.h"

#include <string.h>

#define STALL_MS 600
#define THRESHOLD_MS 250
#define SLACK_MS 300 /* ping interval, frame period and scheduling on a busy 2-core machine */
#define MAX_ITEMS 64
#define RUN_TIMEOUT_MS 20000 /* the demo runs 3 s */

typedef struct run_result {
  int stalls;
  uint64_t stall_end_ns[MAX_ITEMS]; /* started_ns + ms of each demo_stall */
  int hangs_began, hangs_ended;
  uint64_t open_ids[MAX_ITEMS]; /* began, not yet ended */
  int open_len;
} run_result;

static void on_stall(run_result *r, const cJSON *json) {
  CHECK(r->stalls < MAX_ITEMS);
  double started = spawn_json_number(json, "started_ns", -1);
  double ms = spawn_json_number(json, "ms", -1);
  CHECK_MSG(started > 0 && ms == STALL_MS, "demo_stall line without started_ns or ms");
  r->stall_end_ns[r->stalls++] = (uint64_t)started + (uint64_t)ms * 1000000u;
}

static void on_hang_began(run_result *r, const cJSON *json) {
  double id = spawn_json_number(json, "hang_id", -1);
  CHECK_MSG(id >= 1, "hang_began without hang_id");
  CHECK_MSG(r->open_len == 0, "hang %.0f began while hang %llu was still open", id,
            (unsigned long long)r->open_ids[0]);
  r->open_ids[r->open_len++] = (uint64_t)id;
  r->hangs_began++;
}

static void on_hang_ended(run_result *r, const cJSON *json) {
  double id = spawn_json_number(json, "hang_id", -1);
  double ms = spawn_json_number(json, "duration_ms", -1);
  CHECK_MSG(r->open_len == 1 && r->open_ids[0] == (uint64_t)id,
            "hang_ended %.0f does not follow a hang_began with the same hang_id", id);
  CHECK_MSG(ms >= THRESHOLD_MS && ms <= STALL_MS + SLACK_MS,
            "hang %.0f lasted %.1f ms for a %d ms stall", id, ms, STALL_MS);
  r->open_len = 0;
  r->hangs_ended++;
}

static void on_line(run_result *r, const cJSON *json, const char *line) {
  CHECK_MSG(json != NULL, "not a JSON object: %s", line);
  const char *type = spawn_json_type(json);
  CHECK_MSG(type != NULL, "no string \"type\": %s", line);
  if (strcmp(type, "metrics") != 0) printf("demo: %s\n", line);
  if (strcmp(type, "demo_stall") == 0) on_stall(r, json);
  else if (strcmp(type, "hang_began") == 0) on_hang_began(r, json);
  else if (strcmp(type, "hang_ended") == 0) on_hang_ended(r, json);
}

static void run_kind(const char *demo, const char *kind) {
  printf("--- stall kind %s\n", kind);
  char *args[] = {(char *)demo, "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", "--stall-kind", (char *)kind, "--stall-ms",
                  "600", "--stall-every", "1", "--duration", "3", NULL};
  static spawn_proc p;
  static char line[SPAWN_BUFFER];
  CHECK(spawn_start(&p, demo, args, SPAWN_INHERIT_STDERR) == 0);
  run_result r;
  memset(&r, 0, sizeof r);
  uint64_t deadline = spawn_now_ns() + (uint64_t)RUN_TIMEOUT_MS * 1000000u;
  int result;
  for (;;) {
    int left_ms = (int)((deadline - spawn_now_ns()) / 1000000);
    CHECK_MSG(spawn_now_ns() < deadline, "the demo ran past %d ms", RUN_TIMEOUT_MS);
    cJSON *json = spawn_read_json(&p, left_ms, &result, line, sizeof line);
    if (result != SPAWN_LINE) break;
    on_line(&r, json, line);
    cJSON_Delete(json);
  }
  CHECK_MSG(result == SPAWN_EOF, "reading the demo's stdout: result %d", result);
  uint64_t exit_ns = spawn_now_ns();
  int code = spawn_wait(&p, 5000);
  CHECK_MSG(code == 0, "demo exit code %d", code);
  spawn_close(&p);

  int completed = 0;
  for (int i = 0; i < r.stalls; i++) completed += r.stall_end_ns[i] <= exit_ns;
  CHECK_MSG(r.stalls >= 1, "no demo_stall line");
  CHECK_MSG(r.open_len == 0, "hang %llu began and never ended", (unsigned long long)r.open_ids[0]);
  CHECK_MSG(r.hangs_ended == completed && completed >= 1,
            "%d hangs for %d completed stalls (%d stalls)", r.hangs_ended, completed, r.stalls);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: %s path/to/lagscope-demo", argv[0]);
  const char *kinds[] = {"busy", "lock", "alloc"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) run_kind(argv[1], kinds[i]);
  printf("ok\n");
  return 0;
}
