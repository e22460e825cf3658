/* Killed while hung: the report written at the hang's start is on disk; the next start marks
 * it as ended by termination and publishes it, once. */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The path of a report in dir whose state is in_progress, waiting up to timeout_ms. */
static int find_in_progress(const char *dir, char *out, size_t size, int timeout_ms) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)timeout_ms * 1000000u;
  while (spawn_now_ns() < deadline) {
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      size_t len = strlen(e->d_name);
      if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
      snprintf(out, size, "%s/%s", dir, e->d_name);
      cJSON *r = demo_read_json_file(out);
      const cJSON *state = cJSON_GetObjectItemCaseSensitive(r, "state");
      int found = cJSON_IsString(state) && strcmp(state->valuestring, "in_progress") == 0;
      cJSON_Delete(r);
      if (found) {
        closedir(d);
        return 1;
      }
    }
    closedir(d);
    usleep(20000); /* polling a folder for a file to appear, bounded by the deadline */
  }
  return 0;
}

static void run_and_expect_recovered(const char *demo, const char *dir, const char *path,
                                     int expect) {
  char *args[] = {(char *)demo, "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", "--duration", "1.5", "--report-dir",
                  (char *)dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, demo, args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *recovered = demo_wait_for(&p, "hang_recovered", 10000);
  if (expect) {
    CHECK_MSG(recovered != NULL, "no hang_recovered line at the next start");
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(recovered, "report_path");
    CHECK(cJSON_IsString(rp) && strcmp(rp->valuestring, path) == 0);
  } else {
    CHECK_MSG(recovered == NULL, "the same hang was recovered twice");
  }
  cJSON_Delete(recovered);
  CHECK_EQ_INT(spawn_wait(&p, 20000), 0);
  spawn_close(&p);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[64], path[512];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {argv[1], "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", "--stall-ms", "20000", "--stall-every", "0.3",
                  "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *began = demo_wait_for(&p, "hang_began", 10000);
  CHECK_MSG(began != NULL, "no hang_began");
  cJSON_Delete(began);
  CHECK_MSG(find_in_progress(dir, path, sizeof(path), 10000), "no in_progress report in %s", dir);
  spawn_signal(&p, SIGKILL);
  CHECK_EQ_INT(spawn_wait(&p, 10000), 128 + SIGKILL);
  spawn_close(&p);

  run_and_expect_recovered(argv[1], dir, path, 1);
  cJSON *r = demo_read_json_file(path);
  const cJSON *state = cJSON_GetObjectItemCaseSensitive(r, "state");
  CHECK_MSG(cJSON_IsString(state) && strcmp(state->valuestring, "ended_by_termination") == 0,
            "the report is not marked ended_by_termination");
  cJSON_Delete(r);
  run_and_expect_recovered(argv[1], dir, path, 0); /* once only */

  demo_remove_dir(dir);
  printf("demo_kill9: recovered %s\n", path);
  return 0;
}
