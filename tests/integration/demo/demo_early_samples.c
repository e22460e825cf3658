/*
 * demo_early_samples: a hang's report starts near the stall's start, not at the threshold. The
 * demo stalls 600 ms (demo_busy_spin) three times; each report's first main-thread sample is
 * taken within 75 ms of the ping the monitor posted (two frame budgets late, then the monitor's
 * next look: 50 ms on an idle machine; the bound leaves room for a loaded one), shows
 * demo_busy_spin, and the samples before the threshold are there (before, the first was at
 * 250 ms). The hang starts at the main thread's last sign of life, its last frame, and the
 * monitor posts its ping up to two frame budgets after that frame: so the first sample is within
 * 75 ms plus two frame budgets of the hang's start.
 */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define HANGS 3
#define FRAME_BUDGET_MS (1000.0 / 60.0)
#define FIRST_SAMPLE_MS (75.0 + 2 * FRAME_BUDGET_MS) /* from the last frame: see above */

/* whole: the samples must reach the hang's end. The first hang of a process also loads libdw
 * (dlopen) for its report's file:line, and the loader's lock, held meanwhile, stops every
 * capture's look at the loaded objects: a few ms, but ~250 ms under TSan (measured 2026-11),
 * so the first hang's samples may pause there. */
static void check_report(const char *path, int whole) {
  cJSON *report = demo_read_json_file(path);
  CHECK_MSG(report != NULL, "the report %s", path);
  const cJSON *samples = member(report, "samples");
  const cJSON *t_ms = member(member(samples, "timeline"), "t_ms");
  /* Samples all through the stall, the stand-in's while the monitor symbolicates and writes:
   * one every 10 ms on an idle machine (about 55); under TSan each capture costs more (20 seen
   * without the stand-in), so the bound is one per 50 ms, and the last near the end. */
  int count = cJSON_GetArraySize(t_ms);
  CHECK_MSG(count > 0 && cJSON_IsNumber(member(report, "duration_ms")), "%s: no samples or duration",
            path);
  double duration = member(report, "duration_ms")->valuedouble;
  CHECK_MSG(count >= duration / 50.0, "%s: %d samples in %.0f ms", path, count, duration);
  double last = cJSON_GetArrayItem(t_ms, count - 1)->valuedouble;
  CHECK_MSG(!whole || last >= duration - 100.0, "%s: the last sample is at %.1f ms of %.0f", path,
            last, duration);
  double first = cJSON_GetArrayItem(t_ms, 0)->valuedouble;
  int before_threshold = 0;
  for (int i = 0; i < cJSON_GetArraySize(t_ms); i++)
    before_threshold += cJSON_GetArrayItem(t_ms, i)->valuedouble < 250.0;
  printf("%s: first sample at %.1f ms, %d samples before the threshold\n", path, first,
         before_threshold);
  CHECK_MSG(first <= FIRST_SAMPLE_MS, "the first sample is %.1f ms after the hang's start", first);
  /* About 20 on an idle machine; a monitor starved by a heavily loaded one takes fewer (7 seen
   * at a load of 10 on 2 cores), and without early samples there were none. */
  CHECK_MSG(before_threshold >= 3, "only %d samples before the threshold", before_threshold);
  const char *names[64];
  size_t n = demo_functions(member(report, "heaviest_stack"), names, 64);
  CHECK_MSG(demo_find(names, n, "demo_busy_spin", 0) >= 0,
            "no demo_busy_spin in the heaviest stack");
  cJSON_Delete(report);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[256];
  demo_temp_dir(dir, sizeof dir);
  char *args[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--stall-ms", "600",
                  "--stall-every", "1.5", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  for (int i = 0; i < HANGS; i++) {
    cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
    CHECK_MSG(ended != NULL, "hang %d: no hang_ended", i + 1);
    const cJSON *path = member(ended, "report_path");
    CHECK(cJSON_IsString(path));
    check_report(path->valuestring, i > 0);
    cJSON_Delete(ended);
  }
  demo_stop(&p);
  return 0;
}
