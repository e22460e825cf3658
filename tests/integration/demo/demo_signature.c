/*
 * demo_signature: a stall's signature is the same in two runs of the demo and in a second
 * build of it whose functions all moved (an unrelated function linked first: unrelated.c), and
 * differs for another stall. Each run's hang_ended events and its stored report carry the
 * same "signature", and "signature_frames" names the stall's functions, never lagscope's.
 * Usage: demo_signature path/to/lagscope-demo path/to/lagscope-demo-plus
 */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <stdio.h>
#include <string.h>

#define WAIT_MS 20000 /* the first hang comes after 1 s; bounded for a loaded machine */

typedef struct run_signature {
  char signature[32];
  char stall_offset[32]; /* module_offset of the stall's own function, to prove the build moved */
} run_signature;

static void check_frames(const cJSON *frames, const char *stall_function) {
  int found = 0;
  const cJSON *f;
  cJSON_ArrayForEach(f, frames) {
    CHECK(cJSON_IsString(f));
    CHECK_MSG(strncmp(f->valuestring, "lagscope", 8) != 0, "lagscope's frame %s", f->valuestring);
    found |= strcmp(f->valuestring, stall_function) == 0;
  }
  CHECK_MSG(found, "signature_frames without %s", stall_function);
}

static void stall_offset(const cJSON *stack, const char *stall_function, char *out, size_t size) {
  const cJSON *frame;
  cJSON_ArrayForEach(frame, stack) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(frame, "function");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(frame, "module_offset");
    if (cJSON_IsString(fn) && strcmp(fn->valuestring, stall_function) == 0 && cJSON_IsString(off)) {
      snprintf(out, size, "%s", off->valuestring);
      return;
    }
  }
  CHECK_MSG(0, "no %s in the heaviest stack", stall_function);
}

/* The report file the event names carries the event's signature. */
static void check_report(const cJSON *event, const char *signature) {
  const cJSON *path = cJSON_GetObjectItemCaseSensitive(event, "report_path");
  CHECK(cJSON_IsString(path));
  cJSON *report = demo_read_json_file(path->valuestring);
  CHECK_MSG(report != NULL, "cannot read %s", path->valuestring);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "signature");
  CHECK_MSG(cJSON_IsString(s) && strcmp(s->valuestring, signature) == 0, "report's signature");
  CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(report, "signature_frames")));
  cJSON_Delete(report);
}

/* Two hangs of one run of demo with the stall kind: their signature (the same). */
static run_signature run(const char *demo, const char *kind) {
  printf("--- %s --stall-kind %s\n", demo, kind);
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {(char *)demo, "--headless", "--port", "0", "--bind", "127.0.0.1", "--events",
                  "jsonl", "--stall-kind", (char *)kind, "--stall-ms", "400", "--stall-every",
                  "1", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, demo, args, SPAWN_INHERIT_STDERR) == 0);
  char stall_function[64];
  snprintf(stall_function, sizeof(stall_function), "demo_stall_%s", kind);
  run_signature r = {{0}, {0}};
  for (int i = 0; i < 2; i++) {
    cJSON *e = demo_wait_for(&p, "hang_ended", WAIT_MS);
    CHECK_MSG(e != NULL, "no hang_ended within %d ms", WAIT_MS);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "signature");
    CHECK_MSG(cJSON_IsString(s) && strlen(s->valuestring) == 16, "hang_ended without signature");
    if (i == 0) snprintf(r.signature, sizeof(r.signature), "%s", s->valuestring);
    CHECK_MSG(strcmp(r.signature, s->valuestring) == 0, "one run, two signatures: %s, %s",
              r.signature, s->valuestring);
    check_frames(cJSON_GetObjectItemCaseSensitive(e, "signature_frames"), stall_function);
    stall_offset(cJSON_GetObjectItemCaseSensitive(e, "heaviest_stack"), stall_function,
                 r.stall_offset, sizeof(r.stall_offset));
    check_report(e, r.signature);
    cJSON_Delete(e);
  }
  demo_stop(&p);
  demo_remove_dir(dir);
  printf("signature %s, %s at %s\n", r.signature, stall_function, r.stall_offset);
  return r;
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 3, "usage: %s lagscope-demo lagscope-demo-plus", argv[0]);
  run_signature first = run(argv[1], "sleep"), again = run(argv[1], "sleep");
  run_signature other_build = run(argv[2], "sleep"), lock = run(argv[1], "lock");
  CHECK_MSG(strcmp(first.signature, again.signature) == 0, "two runs: %s, %s", first.signature,
            again.signature);
  CHECK_MSG(strcmp(first.stall_offset, other_build.stall_offset) != 0,
            "the second build did not move demo_stall_sleep (%s): the test proves nothing",
            first.stall_offset);
  CHECK_MSG(strcmp(first.signature, other_build.signature) == 0, "two builds: %s, %s",
            first.signature, other_build.signature);
  CHECK_MSG(strcmp(first.signature, lock.signature) != 0, "sleep and lock: one signature %s",
            lock.signature);
  printf("ok\n");
  return 0;
}
