/* Links the macOS library into an executable (tests/builds/darwin/check): it is never run here; the
 * linker proves that every symbol the library imports exists in libSystem's export list or in
 * the project's stubs. It calls the public API and the Darwin hooks so that the objects that
 * hold them are pulled in (the check also force-loads the whole archive). */
/* check-test-viewers: compiled and linked for Darwin, never run. */
#include "internal.h" /* the platform's part of the lifecycle */

#include <stdio.h>

static void on_event(const lagscope_event *event, void *user) {
  (void)user;
  char *json = lagscope_event_json(event);
  if (json != NULL) puts(json);
  lagscope_free(json);
}

int main(void) {
  lagscope_config config = lagscope_config_default();
  lagscope__platform_defaults(&config); /* the main queue as post_main */
  if (lagscope_start(&config) != 0) return 1;
  lagscope_subscription subscription;
  lagscope_subscribe(on_event, NULL, &subscription);
  lagscope_frame();
  lagscope_heartbeat();
  lagscope_metrics metrics;
  lagscope_metrics_latest(&metrics);
  lagscope_hud_image image;
  lagscope_hud_take(&image);
  printf("%d\n", lagscope_hud_overlay_x11(NULL, 0)); /* LAGSCOPE_ENOTSUP: no X11 here */
  char url[256];
  lagscope_viewer_url(url, sizeof(url));
  lagscope__platform_start(&config);
  printf("%d %u\n", lagscope__platform_in_background(),
         lagscope__platform_refresh_hz());
  lagscope__platform_stop();
  lagscope_unsubscribe(subscription);
  return lagscope_stop();
}
