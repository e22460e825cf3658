/* The HUD in an X11 window of lagscope's own (see x11_overlay.h).
 *
 * One thread, started when the program first opens an X display, with its own XCB connection
 * to that display. XCB, not Xlib: Xlib's error handler is one per process (XSetErrorHandler),
 * so an error on a connection of lagscope's would reach the program's handler or replace it;
 * XCB gives each request's error back on its own connection, where lagscope drops it.
 *
 * The window: override-redirect (no window manager frames or moves it), a 32-bit TrueColor
 * visual with a colormap of its own where the server has one (the HUD image is premultiplied
 * ARGB already, as a compositor wants), the screen's own visual otherwise; an empty input
 * region (XFixes), so every click and key goes to the window below; where no compositor runs
 * (no owner of _NET_WM_CM_Sn), its bounding shape is the image's opaque pixels. Every 250 ms,
 * and when a hang begins or ends, it finds the program's main window (_NET_WM_PID, on the root's
 * _NET_CLIENT_LIST or its children), follows its position, size and mapping, stacks itself just
 * above it (never above other windows) and puts the HUD image, when it changed. */
#define _GNU_SOURCE
#include "x11_overlay.h"

#include "lagscope.h"
#include "internal.h" /* lagscope__thread_name_self, lagscope__thread_adopt */
#include "preload.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xcb/shape.h>
#include <xcb/xcb.h>
#include <xcb/xfixes.h>

#define PERIOD_MS 250  /* at most 4 redraws a second, and the window followed as often */
#define STOP_WAIT_MS 1000
#define GRACE_MS 1000   /* auto mode: a GL or SDL program's first frame claims the HUD first */
#define MAX_RECTS 4096 /* the bounding shape's rectangles; a HUD needs a few hundred */

/* Who takes the HUD image: lagscope_hud_take has one taker at a time. */
enum { TAKER_NONE, TAKER_FRAME, TAKER_OVERLAY };

static atomic_int mode = LAGSCOPE__HUD_AUTO;
static atomic_int taker = TAKER_NONE;
static atomic_ulong seen_window; /* the last window a GL swap drew (glXSwapBuffers' drawable) */
static atomic_int started, frames_want, ready; /* ready: the thread and its wait set up */
static char display_name[256];
static pthread_t thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the thread's wait only */
static pthread_cond_t wake; /* on CLOCK_MONOTONIC: set up before the thread starts */
static int stopping, woken; /* under lock */

typedef struct overlay {
  xcb_connection_t *c;
  xcb_screen_t *screen;
  xcb_window_t window, app, app_top; /* ours; the program's; its ancestor under the root */
  xcb_gcontext_t gc;
  uint8_t depth;
  int shaped; /* no compositor: the window's shape is the image's opaque pixels */
  int mapped, x, y, width, height;
  uint64_t sequence;
  xcb_atom_t client_list, wm_pid, cm_selection;
  xcb_rectangle_t rects[MAX_RECTS];
} overlay;

static overlay o; /* the thread's */

void lagscope__overlay_set_mode(lagscope__hud_mode m) { atomic_store(&mode, (int)m); }

/* ---- who takes the image ---------------------------------------------------------------------- */

void lagscope__overlay_saw_window(unsigned long window) {
  atomic_store_explicit(&seen_window, window, memory_order_relaxed);
}

int lagscope__overlay_frame_may_draw(void) {
  if (atomic_load(&mode) == LAGSCOPE__HUD_OVERLAY) return 0;
  atomic_store(&frames_want, 1); /* the overlay gives way (auto mode) */
  int expected = TAKER_NONE;
  return atomic_compare_exchange_strong(&taker, &expected, TAKER_FRAME) || expected == TAKER_FRAME;
}

/* 1 when the overlay may take the image now; in auto mode it gives way for good to frames. */
static int overlay_may_take(void) {
  if (atomic_load(&mode) == LAGSCOPE__HUD_AUTO && atomic_load(&frames_want)) {
    int expected = TAKER_OVERLAY;
    atomic_compare_exchange_strong(&taker, &expected, TAKER_NONE);
    return 0;
  }
  int expected = TAKER_NONE;
  return atomic_compare_exchange_strong(&taker, &expected, TAKER_OVERLAY) ||
         expected == TAKER_OVERLAY;
}

/* ---- small XCB helpers ------------------------------------------------------------------------- */

static xcb_atom_t atom(const char *name) {
  xcb_intern_atom_reply_t *r =
      xcb_intern_atom_reply(o.c, xcb_intern_atom(o.c, 0, (uint16_t)strlen(name), name), NULL);
  xcb_atom_t a = r != NULL ? r->atom : XCB_ATOM_NONE;
  free(r);
  return a;
}

/* Errors of requests sent unchecked come back as events on this connection: dropped. An
 * exposure (the window's pixels lost) makes the next pass put the image again. */
static void drain_events(void) {
  xcb_generic_event_t *e;
  while ((e = xcb_poll_for_event(o.c)) != NULL) {
    if ((e->response_type & 0x7f) == XCB_EXPOSE) o.sequence = 0;
    free(e);
  }
}

/* A 32-bit TrueColor visual, or 0. */
static xcb_visualid_t argb_visual(void) {
  for (xcb_depth_iterator_t d = xcb_screen_allowed_depths_iterator(o.screen); d.rem;
       xcb_depth_next(&d)) {
    if (d.data->depth != 32) continue;
    for (xcb_visualtype_iterator_t v = xcb_depth_visuals_iterator(d.data); v.rem;
         xcb_visualtype_next(&v))
      if (v.data->_class == XCB_VISUAL_CLASS_TRUE_COLOR) return v.data->visual_id;
  }
  return 0;
}

static int has_compositor(void) {
  if (o.cm_selection == XCB_ATOM_NONE) return 0;
  xcb_get_selection_owner_reply_t *r =
      xcb_get_selection_owner_reply(o.c, xcb_get_selection_owner(o.c, o.cm_selection), NULL);
  int owned = r != NULL && r->owner != XCB_WINDOW_NONE;
  free(r);
  return owned;
}

/* ---- the window ---------------------------------------------------------------------------------- */

static int make_window(void) {
  xcb_visualid_t visual = argb_visual();
  xcb_colormap_t colormap = 0;
  o.depth = visual != 0 ? 32 : o.screen->root_depth;
  if (visual != 0) {
    colormap = xcb_generate_id(o.c);
    xcb_create_colormap(o.c, XCB_COLORMAP_ALLOC_NONE, colormap, o.screen->root, visual);
  } else {
    visual = o.screen->root_visual;
  }
  o.window = xcb_generate_id(o.c);
  /* No background: the server never clears it to black; what it loses it tells (Expose). */
  uint32_t values[5] = {XCB_BACK_PIXMAP_NONE, 0, 1, XCB_EVENT_MASK_EXPOSURE, colormap};
  uint32_t mask = XCB_CW_BACK_PIXMAP | XCB_CW_BORDER_PIXEL | XCB_CW_OVERRIDE_REDIRECT |
                  XCB_CW_EVENT_MASK;
  if (colormap != 0) mask |= XCB_CW_COLORMAP;
  xcb_create_window(o.c, o.depth, o.window, o.screen->root, 0, 0, 1, 1, 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, visual, mask, values);
  o.gc = xcb_generate_id(o.c);
  xcb_create_gc(o.c, o.gc, o.window, 0, NULL);
  static const char title[] = "lagscope HUD";
  xcb_change_property(o.c, XCB_PROP_MODE_REPLACE, o.window, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                      sizeof(title) - 1, title);
  /* Input-transparent: an empty input region (XFixes 2.0 needs its version asked first). */
  xcb_xfixes_query_version_reply_t *v =
      xcb_xfixes_query_version_reply(o.c, xcb_xfixes_query_version(o.c, 5, 0), NULL);
  int xfixes = v != NULL && v->major_version >= 2;
  free(v);
  if (!xfixes) return 0; /* a window that ate the program's clicks: none at all */
  xcb_xfixes_region_t empty = xcb_generate_id(o.c);
  xcb_xfixes_create_region(o.c, empty, 0, NULL);
  xcb_xfixes_set_window_shape_region(o.c, o.window, XCB_SHAPE_SK_INPUT, 0, 0, empty);
  xcb_xfixes_destroy_region(o.c, empty);
  return 1;
}

/* The pid of a window's client (_NET_WM_PID), or 0. */
static uint32_t window_pid(xcb_window_t w) {
  xcb_get_property_reply_t *r = xcb_get_property_reply(
      o.c, xcb_get_property(o.c, 0, w, o.wm_pid, XCB_ATOM_CARDINAL, 0, 1), NULL);
  uint32_t pid = 0;
  if (r != NULL && r->format == 32 && xcb_get_property_value_length(r) >= 4)
    memcpy(&pid, xcb_get_property_value(r), 4);
  free(r);
  return pid;
}

/* The window's ancestor that is a child of the root (a window manager's frame, or itself). */
static xcb_window_t top_of(xcb_window_t w) {
  for (int depth = 0; depth < 16; depth++) {
    xcb_query_tree_reply_t *r = xcb_query_tree_reply(o.c, xcb_query_tree(o.c, w), NULL);
    if (r == NULL) return XCB_WINDOW_NONE;
    xcb_window_t parent = r->parent;
    free(r);
    if (parent == o.screen->root || parent == XCB_WINDOW_NONE) return w;
    w = parent;
  }
  return w;
}

/* 1 when w is viewable; its size into width, height. */
static int viewable(xcb_window_t w, int *width, int *height) {
  xcb_get_window_attributes_reply_t *a =
      xcb_get_window_attributes_reply(o.c, xcb_get_window_attributes(o.c, w), NULL);
  int shown = a != NULL && a->map_state == XCB_MAP_STATE_VIEWABLE && !a->override_redirect;
  free(a);
  if (!shown) return 0;
  xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(o.c, xcb_get_geometry(o.c, w), NULL);
  if (g == NULL) return 0;
  *width = g->width;
  *height = g->height;
  free(g);
  return 1;
}

/* The program's biggest viewable window with its pid, among the window manager's clients or,
 * without one, the root's children; else the window its GL swaps drew. */
static xcb_window_t find_app_window(void) {
  xcb_window_t *list = NULL;
  int count = 0;
  void *reply = NULL;
  xcb_get_property_reply_t *p = xcb_get_property_reply(
      o.c, xcb_get_property(o.c, 0, o.screen->root, o.client_list, XCB_ATOM_WINDOW, 0, 4096),
      NULL);
  if (p != NULL && p->format == 32 && xcb_get_property_value_length(p) > 0) {
    list = xcb_get_property_value(p);
    count = xcb_get_property_value_length(p) / 4;
    reply = p;
  } else {
    free(p);
    xcb_query_tree_reply_t *t =
        xcb_query_tree_reply(o.c, xcb_query_tree(o.c, o.screen->root), NULL);
    if (t != NULL) {
      list = xcb_query_tree_children(t);
      count = xcb_query_tree_children_length(t);
    }
    reply = t;
  }
  xcb_window_t best = XCB_WINDOW_NONE;
  long best_area = 0;
  uint32_t self = (uint32_t)getpid();
  for (int i = 0; i < count; i++) {
    int w, h;
    if (list[i] == o.window || window_pid(list[i]) != self || !viewable(list[i], &w, &h)) continue;
    if ((long)w * h > best_area) {
      best = list[i];
      best_area = (long)w * h;
    }
  }
  free(reply);
  int w, h;
  xcb_window_t seen = (xcb_window_t)atomic_load_explicit(&seen_window, memory_order_relaxed);
  if (best == XCB_WINDOW_NONE && seen != XCB_WINDOW_NONE && viewable(seen, &w, &h))
    best = seen; /* a program that sets no _NET_WM_PID (plain Xlib, glxgears) */
  return best;
}

/* ---- drawing ------------------------------------------------------------------------------------- */

static void hide(void) {
  if (!o.mapped) return;
  xcb_unmap_window(o.c, o.window);
  o.mapped = 0;
}

/* Without a compositor the window's alpha is not blended: its shape is the image's pixels
 * that are not transparent, as rectangles of runs per row. */
static void shape_to(const lagscope_hud_image *image) {
  int n = 0;
  for (int y = 0; y < image->height && n < MAX_RECTS; y++) {
    const uint32_t *row = (const uint32_t *)((const char *)image->pixels + (size_t)y * image->stride);
    for (int x = 0; x < image->width && n < MAX_RECTS;) {
      while (x < image->width && (row[x] >> 24) == 0) x++;
      int start = x;
      while (x < image->width && (row[x] >> 24) != 0) x++;
      if (x > start) o.rects[n++] = (xcb_rectangle_t){(int16_t)start, (int16_t)y,
                                                      (uint16_t)(x - start), 1};
    }
  }
  xcb_shape_rectangles(o.c, XCB_SHAPE_SO_SET, XCB_SHAPE_SK_BOUNDING, XCB_CLIP_ORDERING_UNSORTED,
                       o.window, 0, 0, (uint32_t)n, o.rects);
}

/* The image, in bands that fit one request (ZPixmap rows of 32-bit pixels are width * 4). */
static void put(const lagscope_hud_image *image) {
  uint32_t max_bytes = xcb_get_maximum_request_length(o.c) * 4u - 64;
  int rows = image->stride == image->width * 4 ? (int)(max_bytes / (uint32_t)image->stride) : 1;
  if (rows < 1) return;
  for (int y = 0; y < image->height; y += rows) {
    int n = image->height - y < rows ? image->height - y : rows;
    const uint8_t *data = (const uint8_t *)image->pixels + (size_t)y * image->stride;
    xcb_put_image(o.c, XCB_IMAGE_FORMAT_Z_PIXMAP, o.window, o.gc, (uint16_t)image->width,
                  (uint16_t)n, 0, (int16_t)y, 0, o.depth, (uint32_t)(n * image->width * 4), data);
  }
}

/* Over the program's window's corner, just above its top-level window in the stack. */
static void place(const lagscope_hud_image *image, int app_width, int app_height) {
  xcb_translate_coordinates_reply_t *t = xcb_translate_coordinates_reply(
      o.c, xcb_translate_coordinates(o.c, o.app, o.screen->root, 0, 0), NULL);
  if (t == NULL) return;
  int margin = (int)(8 * image->scale);
  int right = image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int x = t->dst_x + (right ? app_width - margin - image->width : margin);
  int y = t->dst_y + (bottom ? app_height - margin - image->height : margin);
  free(t);
  uint32_t values[6] = {(uint32_t)x, (uint32_t)y, (uint32_t)image->width,
                        (uint32_t)image->height, o.app_top, XCB_STACK_MODE_ABOVE};
  xcb_configure_window(o.c, o.window,
                       XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y | XCB_CONFIG_WINDOW_WIDTH |
                           XCB_CONFIG_WINDOW_HEIGHT | XCB_CONFIG_WINDOW_SIBLING |
                           XCB_CONFIG_WINDOW_STACK_MODE,
                       values);
  if (image->width != o.width || image->height != o.height) o.sequence = 0; /* cleared: redraw */
  o.x = x, o.y = y, o.width = image->width, o.height = image->height;
}

/* One pass: find or follow the window, then show the latest image over it. */
static void update(void) {
  if (!overlay_may_take()) {
    hide();
    return;
  }
  int app_width = 0, app_height = 0;
  if (o.app != XCB_WINDOW_NONE && !viewable(o.app, &app_width, &app_height))
    o.app = XCB_WINDOW_NONE; /* unmapped, minimised or destroyed: found again if it comes back */
  if (o.app == XCB_WINDOW_NONE) {
    o.app = find_app_window();
    if (o.app == XCB_WINDOW_NONE || !viewable(o.app, &app_width, &app_height)) {
      o.app = XCB_WINDOW_NONE;
      hide();
      return;
    }
  }
  o.app_top = top_of(o.app);
  lagscope_hud_image image;
  if (o.app_top == XCB_WINDOW_NONE || lagscope_hud_take(&image) != LAGSCOPE_OK ||
      image.pixels == NULL || image.width <= 0 || image.height <= 0 ||
      image.stride < image.width * 4) {
    hide();
    return;
  }
  place(&image, app_width, app_height);
  if (!o.mapped) {
    xcb_map_window(o.c, o.window);
    o.mapped = 1;
    o.sequence = 0;
  }
  if (image.sequence != o.sequence) {
    if (o.shaped) shape_to(&image);
    put(&image);
    o.sequence = image.sequence;
  }
}

/* ---- the thread ------------------------------------------------------------------------------------ */

static long ms_since(const struct timespec *then) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - then->tv_sec) * 1000L + (now.tv_nsec - then->tv_nsec) / 1000000L;
}

/* Waits until the period ends or a wake; 1 when stopping. */
static int wait_period(void) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += PERIOD_MS * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&lock);
  while (!stopping && !woken && pthread_cond_timedwait(&wake, &lock, &until) != ETIMEDOUT) {
  }
  woken = 0;
  int stop = stopping;
  pthread_mutex_unlock(&lock);
  return stop;
}

static int connect_display(void) {
  int screen_number = 0;
  o.c = xcb_connect(display_name[0] != '\0' ? display_name : NULL, &screen_number);
  if (xcb_connection_has_error(o.c)) return 0;
  xcb_screen_iterator_t s = xcb_setup_roots_iterator(xcb_get_setup(o.c));
  for (int i = 0; i < screen_number && s.rem; i++) xcb_screen_next(&s);
  if (!s.rem) return 0;
  o.screen = s.data;
  o.client_list = atom("_NET_CLIENT_LIST");
  o.wm_pid = atom("_NET_WM_PID");
  char cm[32];
  snprintf(cm, sizeof(cm), "_NET_WM_CM_S%d", screen_number);
  o.cm_selection = atom(cm);
  return 1;
}

static void *overlay_main(void *unused) {
  (void)unused;
  /* One of lagscope's own, as civetweb's threads: never captured, its CPU lagscope's, every
   * signal blocked (a capture's signal would cut its waits short). */
  lagscope__thread_adopt();
  lagscope__thread_name_self("lagscope-x11hud");
  if (!connect_display() || !make_window()) {
    fprintf(stderr, "lagscope: no HUD overlay on display %s: %s\n",
            display_name[0] != '\0' ? display_name : "$DISPLAY",
            o.c == NULL || xcb_connection_has_error(o.c) ? "cannot connect"
                                                          : "the server has no XFixes 2");
  } else {
    o.shaped = !has_compositor();
    struct timespec begun;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    do {
      drain_events();
      if (atomic_load(&mode) != LAGSCOPE__HUD_AUTO || ms_since(&begun) >= GRACE_MS) update();
      xcb_flush(o.c);
    } while (!wait_period() && !xcb_connection_has_error(o.c));
  }
  atomic_store(&taker, TAKER_NONE);
  if (o.c != NULL) xcb_disconnect(o.c); /* the server destroys the window with it */
  o.c = NULL;
  lagscope__thread_disown();
  return NULL;
}

void lagscope__overlay_app_connected(const char *display) {
  if (atomic_load(&mode) == LAGSCOPE__HUD_FRAME || !lagscope__preload_hud_wanted() ||
      !lagscope_is_running())
    return;
  if (atomic_exchange(&started, 1)) return;
  const char *name = display != NULL ? display : getenv("DISPLAY");
  snprintf(display_name, sizeof(display_name), "%s", name != NULL ? name : "");
  pthread_condattr_t clock;
  pthread_condattr_init(&clock);
  pthread_condattr_setclock(&clock, CLOCK_MONOTONIC); /* wait_period's deadline is monotonic */
  pthread_cond_init(&wake, &clock);
  pthread_condattr_destroy(&clock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  if (pthread_create(&thread, &attr, overlay_main, NULL) != 0)
    atomic_store(&started, 0);
  else
    atomic_store(&ready, 1);
  pthread_attr_destroy(&attr);
}

void lagscope__overlay_wake(void) {
  if (!atomic_load(&ready)) return;
  pthread_mutex_lock(&lock);
  woken = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
}

void lagscope__overlay_forget_in_child(void) {
  atomic_store(&ready, 0);
  atomic_store(&started, 1); /* the parent's overlay serves the parent only */
  atomic_store(&taker, TAKER_NONE);
}

void lagscope__overlay_stop(void) {
  if (!atomic_exchange(&ready, 0)) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += STOP_WAIT_MS / 1000;
  if (pthread_timedjoin_np(thread, NULL, &until) != 0) {
    /* Stuck in a reply from a server that does not answer: left behind, the exit goes on. */
    fprintf(stderr, "lagscope: the HUD overlay's thread did not stop within %d ms: left behind\n",
            STOP_WAIT_MS);
    pthread_detach(thread);
  }
}
