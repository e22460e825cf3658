/* "Your code" in a stripped program (issue 32, section 4): the demo stripped of every symbol
 * (strip --strip-all, as distributions ship programs). Its busy hang is told by the innermost
 * frame of the program, as "lagscope-demo-stripped+0xOFFSET", in the label and the summary
 * alike, and every frame of the program says "code": "app" — never "in main", the outer frame
 * that kept a name (which the report said before). */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {argv[1], "--headless", "--no-server", "--events", "jsonl", "--stall-ms", "600",
                  "--stall-every", "1.5", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
  CHECK_MSG(ended != NULL, "no hang_ended");
  const cJSON *cause = member(ended, "cause");
  const char *label = text(cause, "label"), *summary = text(cause, "summary");
  printf("label: %s\nsummary: %s\n", label, summary);
  const char *told = "lagscope-demo-stripped+0x";
  CHECK_MSG(strncmp(label, "cpu · ", strlen("cpu · ")) == 0 &&
                strncmp(label + strlen("cpu · "), told, strlen(told)) == 0,
            "label %s", label);
  CHECK_MSG(strstr(summary, label + strlen("cpu · ")) != NULL,
            "the summary names another place than the label: %s", summary);
  cJSON *report = demo_read_json_file(text(ended, "report_path"));
  CHECK(report != NULL);
  const cJSON *frame;
  int program_frames = 0;
  cJSON_ArrayForEach(frame, member(report, "heaviest_stack")) {
    const char *module = text(frame, "module");
    if (strstr(module, "/lagscope-demo-stripped") == NULL) continue;
    program_frames++;
    CHECK_MSG(strcmp(text(frame, "code"), "app") == 0, "a frame of the program is %s code",
              text(frame, "code"));
  }
  CHECK(program_frames > 2);
  cJSON_Delete(report);
  cJSON_Delete(ended);
  demo_stop(&p);
  demo_remove_dir(dir);
  return 0;
}
