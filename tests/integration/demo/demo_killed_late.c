/* A long hang ended by a kill keeps what it had up to the kill (issue 32, section 3): the report
 * is written again while the hang lasts, so the next start recovers it whole to its last write.
 * The demo stalls 10 s; at 2 s into the hang it is stopped (SIGSTOP) for 1.5 s, and at 7.75 s
 * it is killed (SIGKILL): 6.25 s of hang. The report is written each second, so the recovered
 * one lasts at least 5 s, its samples reach 5 s, and the 1.5 s stopped is not counted: at most
 * 6.25 s (counted, it would be over 6.75 s). */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_MS 1000000ull

/* Sleeps until the monotonic clock reads at_ns. */
static void sleep_until(uint64_t at_ns) {
  struct timespec t = {(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {
  }
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--stall-ms", "10000",
                  "--stall-every", "0.3", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *began = demo_wait_for(&p, "hang_began", 10000);
  CHECK_MSG(began != NULL, "no hang_began");
  const cJSON *start = member(began, "start_ns");
  CHECK(cJSON_IsNumber(start));
  uint64_t start_ns = (uint64_t)start->valuedouble;
  cJSON_Delete(began);
  sleep_until(start_ns + 2000 * NS_PER_MS);
  spawn_signal(&p, SIGSTOP);
  sleep_until(start_ns + 3500 * NS_PER_MS);
  spawn_signal(&p, SIGCONT);
  sleep_until(start_ns + 7750 * NS_PER_MS);
  spawn_signal(&p, SIGKILL);
  CHECK_EQ_INT(spawn_wait(&p, 10000), 128 + SIGKILL);
  spawn_close(&p);

  char *again[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--duration", "1.5",
                   "--report-dir", dir, NULL};
  CHECK(spawn_start(&p, argv[1], again, SPAWN_INHERIT_STDERR) == 0);
  cJSON *recovered = demo_wait_for(&p, "hang_recovered", 10000);
  CHECK_MSG(recovered != NULL, "no hang_recovered line at the next start");
  const cJSON *path_member = member(recovered, "report_path");
  CHECK(cJSON_IsString(path_member));
  char path[512];
  snprintf(path, sizeof(path), "%s", path_member->valuestring);
  cJSON_Delete(recovered);
  cJSON *report = demo_read_json_file(path);
  CHECK_MSG(report != NULL, "the report %s", path);
  CHECK_EQ_INT(spawn_wait(&p, 20000), 0);
  spawn_close(&p);

  const cJSON *state = member(report, "state");
  CHECK_MSG(cJSON_IsString(state) && strcmp(state->valuestring, "ended_by_termination") == 0,
            "the report is not marked ended_by_termination");
  const cJSON *duration = member(report, "duration_ms");
  CHECK(cJSON_IsNumber(duration));
  const cJSON *t_ms = member(member(member(report, "samples"), "timeline"), "t_ms");
  int count = cJSON_GetArraySize(t_ms);
  CHECK_MSG(count > 0, "no samples");
  double last = cJSON_GetArrayItem(t_ms, count - 1)->valuedouble;
  printf("recovered %s: %.0f ms, %d samples, the last at %.0f ms\n", path,
         duration->valuedouble, count, last);
  CHECK_MSG(duration->valuedouble >= 5000, "the recovered hang lasts %.0f ms: the report was not "
            "written while the hang lasted", duration->valuedouble);
  CHECK_MSG(duration->valuedouble <= 6250, "the recovered hang lasts %.0f ms of the 6250 it ran: "
            "the time it was stopped was counted", duration->valuedouble);
  CHECK_MSG(last >= 5000, "the samples reach %.0f ms", last);
  cJSON_Delete(report);
  demo_remove_dir(dir);
  return 0;
}
