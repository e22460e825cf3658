/* lagscope's overlay window as the screen shows it: see overlay_look.h. */
#define _POSIX_C_SOURCE 200809L

#include "overlay_look.h"

#include "check.h"

#include <time.h>

const box overlay_hud_area = {0, 0, 320, 230};
const box overlay_header = {8, 8, 268, 56};
const box overlay_compact_box = {8, 8, 158, 64};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int overlay_is_badge_red(uint32_t p) { return px_r(p) > 170 && px_g(p) < 90 && px_b(p) < 90; }
int overlay_is_panel(uint32_t p) { return px_r(p) < 60 && px_g(p) < 60 && px_b(p) < 60; }
int overlay_is_light(uint32_t p) { return px_r(p) > 140 && px_g(p) > 140 && px_b(p) > 140; }

void overlay_await(Display *d, Window app, int shown, int timeout_ms) {
  uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    Window overlay = screen_find_window(d, OVERLAY_TITLE);
    int ox = 0, oy = 0, ax = 0, ay = 0;
    int viewable = overlay != 0 && screen_window_origin(d, overlay, &ox, &oy);
    if (!shown && !viewable) return;
    if (shown && viewable && screen_window_origin(d, app, &ax, &ay) && ox == ax + 8 && oy == ay + 8)
      return;
    CHECK_MSG(now_ns() < deadline, "the overlay is not %s in %d ms (at %d,%d, app at %d,%d)",
              shown ? "over the window's corner" : "hidden", timeout_ms, ox, oy, ax, ay);
    sleep_ms(20);
  }
}

void overlay_await_shot(Display *d, Window app, int (*pred)(const shot *, const shot *),
                        const shot *arg, shot *out, const char *what, int timeout_ms,
                        const char *fail_png) {
  uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    int ax = -1, ay = -1;
    int seen = screen_window_origin(d, app, &ax, &ay);
    /* The window found by its title may not be mapped yet (a Qt program on a loaded machine
     * maps it a moment later): no shot yet, looked at again until the bound. */
    if (screen_shot_area(d, app, overlay_hud_area, out) != 0) {
      CHECK_MSG(now_ns() < deadline, "no shot in %d ms (viewable %d at %d,%d)", timeout_ms, seen,
                ax, ay);
      sleep_ms(20);
      continue;
    }
    if (pred(out, arg)) return;
    if (now_ns() >= deadline && fail_png != NULL) {
      shot_save_png(out, fail_png);
      printf("saved %s\n", fail_png);
    }
    shot_free(out);
    CHECK_MSG(now_ns() < deadline, "no shot shows %s in %d ms", what, timeout_ms);
    sleep_ms(20);
  }
}

int overlay_hud_shown(const shot *s, const shot *unused) {
  (void)unused;
  return shot_count(s, overlay_compact_box, overlay_is_panel) > 4000 &&
         shot_count(s, overlay_compact_box, overlay_is_light) > 100 &&
         shot_count(s, overlay_header, overlay_is_badge_red) == 0;
}

int overlay_badge_shown(const shot *s, const shot *unused) {
  (void)unused;
  return shot_count(s, overlay_header, overlay_is_badge_red) > 50;
}

int overlay_badge_counted_on(const shot *s, const shot *earlier) {
  box badge = shot_bounds(earlier, overlay_header, overlay_is_badge_red);
  return overlay_badge_shown(s, NULL) && shot_diff(s, earlier, badge, 0) > 20;
}
