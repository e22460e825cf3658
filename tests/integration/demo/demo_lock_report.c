/* A stall blocked on a mutex held by another thread: the main thread's heaviest stack shows
 * the lock call and its callers, and the report holds the holder thread's stack too. */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 128

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {argv[1], "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", "--stall-kind", "lock", "--stall-ms", "1000",
                  "--stall-every", "0.5", "--duration", "2.5", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
  CHECK_MSG(ended != NULL, "no hang_ended");

  const char *main_stack[MAX_FRAMES];
  size_t n = demo_functions(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), main_stack,
                            MAX_FRAMES);
  int lock = demo_find(main_stack, n, "pthread_mutex_lock", 1);
  int stall = demo_find(main_stack, n, "demo_stall_lock", 0);
  int main_at = demo_find(main_stack, n, "main", 0);
  CHECK_MSG(lock >= 0, "no pthread_mutex_lock in the main thread's heaviest stack");
  CHECK_MSG(stall > lock && main_at > stall, "the lock call's callers are not in order");

  const cJSON *path = cJSON_GetObjectItemCaseSensitive(ended, "report_path");
  CHECK_MSG(cJSON_IsString(path) && path->valuestring[0] != '\0', "no report_path");
  cJSON *report = demo_read_json_file(path->valuestring);
  CHECK_MSG(report != NULL, "cannot read %s", path->valuestring);
  int holder_found = 0;
  const cJSON *thread;
  cJSON_ArrayForEach(thread, cJSON_GetObjectItemCaseSensitive(report, "threads")) {
    const char *stack[MAX_FRAMES];
    size_t k = demo_functions(cJSON_GetObjectItemCaseSensitive(thread, "stack"), stack, MAX_FRAMES);
    if (demo_find(stack, k, "demo_lock_hold", 0) >= 0) holder_found = 1;
  }
  CHECK_MSG(holder_found, "no thread in the report has demo_lock_hold on its stack");
  cJSON_Delete(report);
  cJSON_Delete(ended);
  demo_stop(&p);
  demo_remove_dir(dir);
  printf("demo_lock_report: lock call, callers and the holder's stack are in the report\n");
  return 0;
}
