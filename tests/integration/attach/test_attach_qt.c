/* lagscope-run on a Qt 5 program (test_attach.c lists the cases): the tests' own qt_stall,
 * stalling 700 ms in a QTimer, is one hang (Qt runs on GLib's loop). Qt under the overlay:
 * test_attach_overlay.c. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

/* Qt 5, unchanged: its loop runs on GLib's dispatcher, so the GLib hooks see it; the 700 ms
 * stall in a QTimer's lambda is one hang naming attach_qt_stall. */
void test_qt_stall(void) {
  skip_without(LAGSCOPE_QT_STALL_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_QT_STALL_PATH, NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  CHECK_MSG(ms >= 600 && ms <= 2000, "hang of %.1f ms for a 700 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "attach_qt_stall"));
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}
