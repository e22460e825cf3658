/* The X11 overlay's thread (see x11_overlay.c): its own XCB connection, a pass every 250 ms or
 * when woken (x11_draw.c), the display's refresh rate read every 2 s for the core (RandR,
 * x11_refresh.c), and the connection's loss said once. Started by x11_overlay.c's
 * overlay_start, every signal blocked (lagscope__thread_create). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "x11_private.h"
#include "x11_refresh.h"

#include "internal.h"
#include "linux/linux.h" /* lagscope__linux_set_refresh_hz */
#include "lagscope.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERIOD_MS 250  /* at most 4 redraws a second, and the window followed as often */
#define REFRESH_MS 2000 /* the display's rate read again: a window moved to another monitor */
#define GRACE_MS 1000  /* lagscope-run's auto mode: a GL or SDL program's first frame claims the HUD first */

typedef lagscope__hud_x11_overlay overlay;

static long ms_since(const struct timespec *then) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - then->tv_sec) * 1000L + (now.tv_nsec - then->tv_nsec) / 1000000L;
}

/* Waits until the period (ms) ends or a wake; 1 when stopping. */
static int wait_period(overlay *o, long period_ms) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += period_ms * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&o->lock);
  while (!o->stopping && !o->woken &&
         pthread_cond_timedwait(&o->wake, &o->lock, &until) != ETIMEDOUT) {
  }
  o->woken = 0;
  int stop = o->stopping;
  pthread_mutex_unlock(&o->lock);
  return stop;
}

static xcb_atom_t atom(overlay *o, const char *name) {
  xcb_intern_atom_reply_t *r =
      xcb_intern_atom_reply(o->c, xcb_intern_atom(o->c, 0, (uint16_t)strlen(name), name), NULL);
  xcb_atom_t a = r != NULL ? r->atom : XCB_ATOM_NONE;
  free(r);
  return a;
}

/* Errors of requests sent unchecked come back as events on this connection: dropped. An
 * exposure (the window's pixels lost) makes the next pass put the image again. */
static void drain_events(overlay *o) {
  xcb_generic_event_t *e;
  while ((e = xcb_poll_for_event(o->c)) != NULL) {
    if ((e->response_type & 0x7f) == XCB_EXPOSE) o->shown = 0;
    free(e);
  }
}

static int connect_display(overlay *o) {
  int screen_number = 0;
  o->c = xcb_connect(o->display_name[0] != '\0' ? o->display_name : NULL, &screen_number);
  if (xcb_connection_has_error(o->c)) return 0;
  xcb_screen_iterator_t s = xcb_setup_roots_iterator(xcb_get_setup(o->c));
  for (int i = 0; i < screen_number && s.rem; i++) xcb_screen_next(&s);
  if (!s.rem) return 0;
  o->screen = s.data;
  o->client_list = atom(o, "_NET_CLIENT_LIST");
  o->wm_pid = atom(o, "_NET_WM_PID");
  char cm[32];
  snprintf(cm, sizeof(cm), "_NET_WM_CM_S%d", screen_number);
  o->cm_selection = atom(o, cm);
  return 1;
}

/* Said as an error event, unless the overlay is being stopped: then lagscope_stop may be past
 * the point where it frees what publishing and logging use. */
static void say_failed(overlay *o, int code, const char *why) {
  pthread_mutex_lock(&o->lock);
  if (!o->stopping)
    lagscope__publish_error(code, LAGSCOPE__HUD_X11_FAILED " on display %s: %s",
                            o->display_name[0] != '\0' ? o->display_name : "$DISPLAY", why);
  pthread_mutex_unlock(&o->lock);
}

/* The connection broke (the X server died, or closed it): said once, and the thread ends, so
 * that it neither spins on a dead socket nor leaves the HUD's absence unsaid. The app's own
 * connection is the app's business; lagscope goes on without an overlay. */
static void say_lost(overlay *o) {
  int error = xcb_connection_has_error(o->c);
  if (error == 0) return;
  char why[200];
  snprintf(why, sizeof(why), "the connection to the X server was lost (%s, XCB error %d): the "
           "overlay is gone, lagscope goes on without it",
           error == XCB_CONN_ERROR ? "the server died or closed it" : "a broken stream", error);
  say_failed(o, LAGSCOPE_ESYS, why);
}

/* The window, made the first time the HUD is to be shown; 0 when the server cannot have it. */
static int window_ready(overlay *o) {
  if (o->window_made == 0) {
    o->window_made = lagscope__hud_x11_make_window(o) ? 1 : -1;
    if (o->window_made < 0) say_failed(o, LAGSCOPE_ENOTSUP, "the server has no XFixes 2");
    o->shaped = o->window_made > 0 && !lagscope__hud_x11_has_compositor(o);
  }
  return o->window_made > 0;
}

/* The display's rate where the program's window is (none viewable yet: the primary output's),
 * told to the core, which judges the next frames against it (x11_refresh.h). */
static void read_refresh(overlay *o) {
  int x = 0, y = 0, width = 0, height = 0;
  unsigned long target = atomic_load(&o->target);
  xcb_window_t app = o->app != XCB_WINDOW_NONE ? o->app
                     : target != 0             ? (xcb_window_t)target
                                               : lagscope__hud_x11_find_app_window(o);
  if (app != XCB_WINDOW_NONE && lagscope__hud_x11_viewable(o, app, &width, &height)) {
    xcb_translate_coordinates_reply_t *t = xcb_translate_coordinates_reply(
        o->c, xcb_translate_coordinates(o->c, app, o->screen->root, 0, 0), NULL);
    if (t != NULL)
      x = t->dst_x, y = t->dst_y;
    else
      width = height = 0;
    free(t);
  } else {
    width = height = 0;
  }
  lagscope__linux_set_refresh_hz(
      lagscope__hud_x11_refresh_hz(o->c, o->screen->root, x, y, width, height));
}

void *lagscope__hud_x11_thread_main(void *arg) {
  overlay *o = arg;
  /* One of lagscope's own, as civetweb's threads: never captured, its CPU lagscope's; every
   * signal blocked since it was made (a capture's signal would cut its waits short). */
  lagscope__thread_adopt();
  lagscope__thread_name_self("lagscope-x11");
  /* Its X connection in a descriptor table of its own (it uses no other descriptor): an app
   * that closes every descriptor and opens its own on the numbers (a daemon, a test harness)
   * never gets X protocol written into its file, nor its bytes read as X events. */
  if (lagscope__thread_private_fds(NULL, 0) != LAGSCOPE_OK)
    lagscope__publish_error(LAGSCOPE_ESYS, "the HUD overlay's X connection shares the app's "
                            "descriptors (no table of its own: %s): an app that closes "
                            "descriptors it did not open can cut it off", strerror(errno));
  if (!connect_display(o)) {
    say_failed(o, LAGSCOPE_ESYS, "cannot connect");
  } else {
    if (o->measures) o->measures = lagscope__hud_x11_refresh_begin(o->c); /* RandR 1.3, or none */
    struct timespec begun, refreshed = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &begun);
    int read_once = 0;
    do {
      drain_events(o);
      if (o->measures && (!read_once || ms_since(&refreshed) >= REFRESH_MS)) {
        read_refresh(o);
        clock_gettime(CLOCK_MONOTONIC, &refreshed);
        read_once = 1;
      }
      if (atomic_load(&o->draws) && window_ready(o) &&
          (atomic_load(&o->asked) || lagscope__hud_x11_mode() != LAGSCOPE__HUD_AUTO ||
           ms_since(&begun) >= GRACE_MS))
        lagscope__hud_x11_update(o);
      xcb_flush(o->c);
    } while (!wait_period(o, atomic_load(&o->draws) ? PERIOD_MS : REFRESH_MS) &&
             !xcb_connection_has_error(o->c));
    say_lost(o);
  }
  lagscope__hud_x11_stop_taking();
  if (o->c != NULL) xcb_disconnect(o->c); /* the server destroys the window with it */
  o->c = NULL;
  lagscope__thread_disown();
  atomic_store(&o->ended, 1);
  lagscope__hud_x11_release(o);
  return NULL;
}
