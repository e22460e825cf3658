/* The release build of lagscope: every call is a no-op. No thread, socket or signal handler
 * can exist because nothing here creates one. Linked instead of the real library when
 * LAGSCOPE_ENABLE is OFF (the default for Release and MinSizeRel builds). */
#include "lagscope.h"

#include <string.h>

/* lagscope_strerror and the other name tables come from names.c, which has no side effects. */

lagscope_config lagscope_config_default(void) {
  lagscope_config c;
  memset(&c, 0, sizeof(c));
  return c;
}

int lagscope_config_validate(const lagscope_config *config, char *why, size_t why_size) {
  (void)config;
  if (why != NULL && why_size > 0) why[0] = '\0';
  return LAGSCOPE_DISABLED;
}

int lagscope_start(const lagscope_config *config) { (void)config; return LAGSCOPE_DISABLED; }
int lagscope_stop(void) { return LAGSCOPE_DISABLED; }
int lagscope_is_running(void) { return 0; }
void lagscope_frame(void) {}
void lagscope_heartbeat(void) {}
void lagscope_idle_begin(void) {}
void lagscope_idle_end(void) {}
void lagscope_retain(const void *payload) { (void)payload; }
void lagscope_release(const void *payload) { (void)payload; }

int lagscope_subscribe(lagscope_event_fn fn, void *user, lagscope_subscription *out) {
  (void)fn;
  (void)user;
  if (out != NULL) *out = 0;
  return LAGSCOPE_DISABLED;
}

int lagscope_unsubscribe(lagscope_subscription id) { (void)id; return LAGSCOPE_DISABLED; }
int lagscope_metrics_latest(lagscope_metrics *out) { (void)out; return LAGSCOPE_DISABLED; }
char *lagscope_event_json(const lagscope_event *event) { (void)event; return NULL; }
void lagscope_free(void *p) { (void)p; }

const char *lagscope_report_id(const lagscope_hang_report *report) { (void)report; return ""; }
const char *lagscope_report_path(const lagscope_hang_report *report) { (void)report; return ""; }
const char *lagscope_report_json(const lagscope_hang_report *report) { (void)report; return ""; }
const char *lagscope_report_cause(const lagscope_hang_report *report) { (void)report; return ""; }
const char *lagscope_report_heaviest_stack(const lagscope_hang_report *report) {
  (void)report;
  return "";
}

int lagscope_hud_take(lagscope_hud_image *out) { (void)out; return LAGSCOPE_DISABLED; }
int lagscope_hud_set_expanded(int expanded) { (void)expanded; return LAGSCOPE_DISABLED; }
int lagscope_hud_overlay_x11(const char *display_name, unsigned long window) {
  (void)display_name, (void)window;
  return LAGSCOPE_DISABLED;
}

int lagscope_viewer_url(char *out, size_t size) {
  if (out != NULL && size > 0) out[0] = '\0';
  return LAGSCOPE_DISABLED;
}
