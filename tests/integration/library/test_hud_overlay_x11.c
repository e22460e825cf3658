/* lagscope_hud_overlay_x11 where it must make nothing, and where its display cannot be reached.
 * Before lagscope_start, with config.hud = 0 and after lagscope_stop it returns
 * LAGSCOPE_ENOTRUNNING, and no thread or socket appears (no X connection is opened). In a
 * build with the overlay (XCB), asked for a display that nobody serves, it returns at once, an
 * error event names the display, the overlay's thread ends, and lagscope_stop takes it back; in a
 * build without XCB it returns LAGSCOPE_ENOTSUP. The overlay on a real X server, a stuck one
 * included: tests/integration/window (window_overlay_*). */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h" /* test_now_ns, test_thread_count */

#include <dirent.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOBODY ":4711" /* a display no test's Xvfb takes (they pick the lowest free number) */

/* The process's sockets: an X connection would be one (lagscope's own files come and go). */
static int count_sockets(void) {
  DIR *d = opendir("/proc/self/fd");
  CHECK(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[300], target[300];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len <= 0) continue;
    target[len] = '\0';
    n += strncmp(target, "socket:", 7) == 0;
  }
  closedir(d);
  return n;
}

static _Atomic int overlay_errors;

static void on_event(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type != LAGSCOPE_EVENT_ERROR || e->payload.message == NULL) return;
  printf("error event: %s\n", e->payload.message);
  if (strstr(e->payload.message, "no HUD overlay on display " NOBODY) != NULL)
    atomic_fetch_add(&overlay_errors, 1);
}

/* The call makes nothing: same threads, same sockets. */
static void check_inert(const char *when) {
  int threads = test_thread_count(), sockets = count_sockets();
  CHECK_EQ_INT(lagscope_hud_overlay_x11(NULL, 0x400001), LAGSCOPE_ENOTRUNNING);
  CHECK_EQ_INT(lagscope_hud_overlay_x11(NOBODY, 0), LAGSCOPE_ENOTRUNNING);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  CHECK_MSG(test_thread_count() == threads && count_sockets() == sockets,
            "%s: %d threads and %d sockets, then %d and %d", when, threads, sockets,
            test_thread_count(), count_sockets());
  printf("%s: LAGSCOPE_ENOTRUNNING, nothing made\n", when);
}

int main(void) {
  setenv("DISPLAY", NOBODY, 1);
  check_inert("before lagscope_start");

  lagscope_config c = lagscope_config_default();
  c.server = 0;
  c.hud = 0;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  check_inert("with config.hud = 0");
  CHECK_EQ_INT(lagscope_stop(), 0);

  c.hud = 1;
  c.on_event = on_event;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  int threads = test_thread_count();
  uint64_t asked = test_now_ns();
  int rc = lagscope_hud_overlay_x11(NULL, 0x400001); /* $DISPLAY: nobody's */
  double call_ms = (double)(test_now_ns() - asked) / 1e6;
#if LAGSCOPE_TEST_X11_OVERLAY
  CHECK_EQ_INT(rc, LAGSCOPE_OK);
  printf("with config.hud = 1: LAGSCOPE_OK in %.2f ms\n", call_ms);
  CHECK_MSG(call_ms < 100, "the call took %.0f ms: it must not wait for the display", call_ms);
  uint64_t deadline = test_now_ns() + 10000000000ull;
  struct timespec pause = {0, 10 * 1000 * 1000};
  while (atomic_load(&overlay_errors) == 0 && test_now_ns() < deadline) nanosleep(&pause, NULL);
  CHECK_MSG(atomic_load(&overlay_errors) == 1, "no error event naming display " NOBODY);
  /* The thread ended: asking again starts another, which fails the same way. */
  CHECK_EQ_INT(lagscope_hud_overlay_x11(NOBODY, 0), LAGSCOPE_OK);
  while (atomic_load(&overlay_errors) < 2 && test_now_ns() < deadline) nanosleep(&pause, NULL);
  CHECK_EQ_INT(atomic_load(&overlay_errors), 2);
#else
  CHECK_EQ_INT(rc, LAGSCOPE_ENOTSUP);
  printf("built without XCB: LAGSCOPE_ENOTSUP\n");
#endif
  uint64_t stopping = test_now_ns();
  CHECK_EQ_INT(lagscope_stop(), 0);
  double stop_ms = (double)(test_now_ns() - stopping) / 1e6;
  printf("lagscope_stop: %.0f ms\n", stop_ms);
  CHECK_MSG(stop_ms < 900, "lagscope_stop waited %.0f ms for an overlay that had ended", stop_ms);
  CHECK(test_thread_count() < threads + 1);
  check_inert("after lagscope_stop");
  printf("hud_overlay_x11: ok\n");
  return 0;
}
