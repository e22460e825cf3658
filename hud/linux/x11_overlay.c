/* The HUD in an X11 window of lagscope's own (see x11_overlay.h).
 *
 * One thread, started when the app asks (lagscope_hud_overlay_x11) or, under lagscope-run, when
 * the program first opens an X display, with its own XCB connection to that display. XCB, not
 * Xlib: Xlib's error handler is one per process (XSetErrorHandler), so an error on a connection
 * of lagscope's would reach the program's handler or replace it; XCB gives each request's error
 * back on its own connection, where lagscope drops it.
 *
 * The window: override-redirect (no window manager frames or moves it), a 32-bit TrueColor
 * visual with a colormap of its own where the server has one (the HUD image is premultiplied
 * ARGB already, as a compositor wants), the screen's own visual otherwise; an empty input
 * region (XFixes), so every click and key goes to the window below; where no compositor runs
 * (no owner of _NET_WM_CM_Sn), its bounding shape is the image's opaque pixels. Every 250 ms,
 * and when a hang begins or ends, it finds the window to follow (the app's, or the program's
 * main window: _NET_WM_PID, on the root's _NET_CLIENT_LIST or its children), follows its
 * position, size and mapping, stacks itself just above it, or above the program's own window
 * highest over its corner (a dialog: stack_sibling), never over another program's window, and puts
 * the HUD image, when it changed. Every 2 s it also reads the display's refresh rate from RandR
 * (x11_refresh.c) for the core, which judges frames against it; where no HUD is shown
 * (lagscope-run's --hud-mode frame or --no-hud) that is all it does, and it makes no window.
 *
 * Contents: 1. who takes the image (lagscope-run's frames or the overlay); 2. the overlay and
 * its life; 3. XCB helpers and the window; 4. drawing; 5. the thread; 6. starting it (the
 * public call, lagscope-run's hook) and the consumer that wakes and stops it. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "x11_overlay.h"
#include "x11_refresh.h"

#include "hud.h" /* lagscope__hud_hold */
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
#include <unistd.h>
#include <xcb/shape.h>
#include <xcb/xcb.h>
#include <xcb/xfixes.h>

#define PERIOD_MS 250  /* at most 4 redraws a second, and the window followed as often */
#define REFRESH_MS 2000 /* the display's rate read again: a window moved to another monitor */
#define STOP_WAIT_MS 1000
#define GRACE_MS 1000  /* lagscope-run's auto mode: a GL or SDL program's first frame claims the HUD first */
#define MAX_RECTS 4096 /* the bounding shape's rectangles; a HUD needs a few hundred */
#define STACK_BYTES (256 * 1024)

/* ---- 1. who takes the image ------------------------------------------------------------------- */

/* lagscope_hud_take has one taker at a time: under lagscope-run, the frame hooks or the overlay. */
enum { TAKER_NONE, TAKER_FRAME, TAKER_OVERLAY };

static atomic_int mode = LAGSCOPE__HUD_AUTO;
static atomic_int taker = TAKER_NONE;
static atomic_ulong seen_window; /* the last window a GL swap drew (glXSwapBuffers' drawable) */
static atomic_int frames_want;
static atomic_int measure_refresh = 1; /* 0: lagscope-run was given the rate */
static atomic_int in_child; /* a child forked without exec: the overlay is the parent's */

void lagscope__hud_x11_set_mode(lagscope__hud_mode m) { atomic_store(&mode, (int)m); }
void lagscope__hud_x11_set_measure_refresh(int on) { atomic_store(&measure_refresh, on); }

void lagscope__hud_x11_saw_window(unsigned long window) {
  atomic_store_explicit(&seen_window, window, memory_order_relaxed);
}

int lagscope__hud_x11_frame_may_draw(void) {
  if (atomic_load(&mode) == LAGSCOPE__HUD_OVERLAY) return 0;
  atomic_store(&frames_want, 1); /* the overlay gives way (auto mode) */
  int expected = TAKER_NONE;
  return atomic_compare_exchange_strong(&taker, &expected, TAKER_FRAME) || expected == TAKER_FRAME;
}

/* ---- 2. the overlay and its life ---------------------------------------------------------------- */

typedef struct overlay {
  /* Shared by the thread and whoever starts, wakes or stops it. */
  _Atomic int refs;     /* the thread's and the starter's: the last to let go frees it */
  pthread_mutex_t lock; /* the wait, stopping, and the thread's use of lagscope's HUD */
  pthread_cond_t wake;  /* on CLOCK_MONOTONIC: wait_period's deadline is monotonic */
  int stopping, woken;  /* under lock */
  _Atomic unsigned long target; /* the window the app named; 0: the program's, found */
  _Atomic int asked;    /* the app asked (lagscope_hud_overlay_x11): no grace, no giving way */
  _Atomic int ended;    /* the thread has returned, or is about to */
  _Atomic int draws;    /* the HUD is shown; 0: the display's rate only (no window) */
  int measures;         /* the display's rate is read (RandR), every REFRESH_MS */
  pthread_t thread;
  char display_name[256];
  /* The thread's alone. */
  xcb_connection_t *c;
  xcb_screen_t *screen;
  xcb_window_t window, app, app_top; /* ours; the one followed; its ancestor under the root */
  unsigned long app_target;          /* the target app was found for */
  xcb_gcontext_t gc;
  uint8_t depth;
  int window_made; /* 1: made; -1: the server cannot (no XFixes 2); 0: not yet wanted */
  int shaped; /* no compositor: the window's shape is the image's opaque pixels */
  int mapped, x, y, width, height;
  uint64_t shown; /* the sequence of the image on screen; 0: to be put again */
  xcb_atom_t client_list, wm_pid, cm_selection;
  /* The last image taken, over pixels of the thread's own (copied while held): nothing the
   * thread does with the X server ever reads lagscope's HUD buffers. */
  lagscope_hud_image image;
  uint32_t *pixels;
  size_t pixels_size;
  xcb_rectangle_t rects[MAX_RECTS];
} overlay;

/* The overlay of the running instance and whether it runs with config.hud on: set by the
 * consumer's start and stop (section 6), read by the calls that start an overlay. */
static pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;
static int lagscope_on;  /* under control: lagscope runs (the consumer started) */
static int hud_on;       /* under control */
static overlay *running; /* under control */

static void release(overlay *o) {
  if (atomic_fetch_sub(&o->refs, 1) != 1) return;
  pthread_cond_destroy(&o->wake);
  pthread_mutex_destroy(&o->lock);
  lagscope__dealloc(o->pixels);
  lagscope__dealloc(o);
}

static void wake(overlay *o) {
  pthread_mutex_lock(&o->lock);
  o->woken = 1;
  pthread_cond_signal(&o->wake);
  pthread_mutex_unlock(&o->lock);
}

/* The thread's copy of the latest image; 0 when there is none (lagscope stopped, config.hud
 * off, no image yet, out of memory).
 *
 * Why a copy: the thread talks to an X server that may stop answering (a stopped or stuck
 * server), and lagscope_stop waits for the thread only a second, then leaves it behind and goes
 * on to free the HUD's buffers. The thread reads those buffers only here, between
 * lagscope__hud_hold and lagscope__hud_release (lagscope_stop waits for the release, and this
 * holds for one memcpy), and under its lock with `stopping` checked: once overlay_stop has set
 * it, a thread left behind never takes an image again, not even from a later lagscope_start's
 * HUD, whose taker it is not. Every request to the server (which may block) uses the copy. */
static int take_image(overlay *o) {
  pthread_mutex_lock(&o->lock);
  lagscope_hud_image held;
  int have = 0;
  if (!o->stopping && lagscope__hud_hold(&held) == LAGSCOPE_OK) {
    have = o->pixels != NULL && held.sequence == o->image.sequence;
    if (!have && held.pixels != NULL && held.width > 0 && held.height > 0 &&
        held.stride >= held.width * 4) {
      size_t row = (size_t)held.width * 4, need = row * (size_t)held.height;
      if (need > o->pixels_size) {
        lagscope__dealloc(o->pixels);
        o->pixels = lagscope__alloc(need);
        o->pixels_size = o->pixels != NULL ? need : 0;
      }
      if (o->pixels != NULL) {
        for (int y = 0; y < held.height; y++)
          memcpy((char *)o->pixels + (size_t)y * row,
                 (const char *)held.pixels + (size_t)y * (size_t)held.stride, row);
        o->image = held;
        o->image.pixels = o->pixels;
        o->image.stride = (int)row;
        have = 1;
      }
    }
    lagscope__hud_release();
  }
  pthread_mutex_unlock(&o->lock);
  return have;
}

/* 1 when the overlay may take the image now; in lagscope-run's auto mode it gives way for good
 * to frames. An app that asked for the overlay has no frame hooks: it always may. */
static int may_take(overlay *o) {
  if (atomic_load(&o->asked)) return 1;
  if (atomic_load(&mode) == LAGSCOPE__HUD_AUTO && atomic_load(&frames_want)) {
    int expected = TAKER_OVERLAY;
    atomic_compare_exchange_strong(&taker, &expected, TAKER_NONE);
    return 0;
  }
  int expected = TAKER_NONE;
  return atomic_compare_exchange_strong(&taker, &expected, TAKER_OVERLAY) ||
         expected == TAKER_OVERLAY;
}

/* ---- 3. XCB helpers and the window ---------------------------------------------------------------- */

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

/* A 32-bit TrueColor visual, or 0. */
static xcb_visualid_t argb_visual(overlay *o) {
  for (xcb_depth_iterator_t d = xcb_screen_allowed_depths_iterator(o->screen); d.rem;
       xcb_depth_next(&d)) {
    if (d.data->depth != 32) continue;
    for (xcb_visualtype_iterator_t v = xcb_depth_visuals_iterator(d.data); v.rem;
         xcb_visualtype_next(&v))
      if (v.data->_class == XCB_VISUAL_CLASS_TRUE_COLOR) return v.data->visual_id;
  }
  return 0;
}

static int has_compositor(overlay *o) {
  if (o->cm_selection == XCB_ATOM_NONE) return 0;
  xcb_get_selection_owner_reply_t *r =
      xcb_get_selection_owner_reply(o->c, xcb_get_selection_owner(o->c, o->cm_selection), NULL);
  int owned = r != NULL && r->owner != XCB_WINDOW_NONE;
  free(r);
  return owned;
}

static int make_window(overlay *o) {
  xcb_visualid_t visual = argb_visual(o);
  xcb_colormap_t colormap = 0;
  o->depth = visual != 0 ? 32 : o->screen->root_depth;
  if (visual != 0) {
    colormap = xcb_generate_id(o->c);
    xcb_create_colormap(o->c, XCB_COLORMAP_ALLOC_NONE, colormap, o->screen->root, visual);
  } else {
    visual = o->screen->root_visual;
  }
  o->window = xcb_generate_id(o->c);
  /* No background: the server never clears it to black; what it loses it tells (Expose). */
  uint32_t values[5] = {XCB_BACK_PIXMAP_NONE, 0, 1, XCB_EVENT_MASK_EXPOSURE, colormap};
  uint32_t mask = XCB_CW_BACK_PIXMAP | XCB_CW_BORDER_PIXEL | XCB_CW_OVERRIDE_REDIRECT |
                  XCB_CW_EVENT_MASK;
  if (colormap != 0) mask |= XCB_CW_COLORMAP;
  xcb_create_window(o->c, o->depth, o->window, o->screen->root, 0, 0, 1, 1, 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, visual, mask, values);
  o->gc = xcb_generate_id(o->c);
  xcb_create_gc(o->c, o->gc, o->window, 0, NULL);
  static const char title[] = "lagscope HUD";
  xcb_change_property(o->c, XCB_PROP_MODE_REPLACE, o->window, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
                      8, sizeof(title) - 1, title);
  /* Input-transparent: an empty input region (XFixes 2.0 needs its version asked first). */
  xcb_xfixes_query_version_reply_t *v =
      xcb_xfixes_query_version_reply(o->c, xcb_xfixes_query_version(o->c, 5, 0), NULL);
  int xfixes = v != NULL && v->major_version >= 2;
  free(v);
  if (!xfixes) return 0; /* a window that ate the program's clicks: none at all */
  xcb_xfixes_region_t empty = xcb_generate_id(o->c);
  xcb_xfixes_create_region(o->c, empty, 0, NULL);
  xcb_xfixes_set_window_shape_region(o->c, o->window, XCB_SHAPE_SK_INPUT, 0, 0, empty);
  xcb_xfixes_destroy_region(o->c, empty);
  return 1;
}

/* The pid of a window's client (_NET_WM_PID), or 0. */
static uint32_t window_pid(overlay *o, xcb_window_t w) {
  xcb_get_property_reply_t *r = xcb_get_property_reply(
      o->c, xcb_get_property(o->c, 0, w, o->wm_pid, XCB_ATOM_CARDINAL, 0, 1), NULL);
  uint32_t pid = 0;
  if (r != NULL && r->format == 32 && xcb_get_property_value_length(r) >= 4)
    memcpy(&pid, xcb_get_property_value(r), 4);
  free(r);
  return pid;
}

/* The window's ancestor that is a child of the root (a window manager's frame, or itself). */
static xcb_window_t top_of(overlay *o, xcb_window_t w) {
  for (int depth = 0; depth < 16; depth++) {
    xcb_query_tree_reply_t *r = xcb_query_tree_reply(o->c, xcb_query_tree(o->c, w), NULL);
    if (r == NULL) return XCB_WINDOW_NONE;
    xcb_window_t parent = r->parent;
    free(r);
    if (parent == o->screen->root || parent == XCB_WINDOW_NONE) return w;
    w = parent;
  }
  return w;
}

/* 1 when w is viewable; its size into width, height. */
static int viewable(overlay *o, xcb_window_t w, int *width, int *height) {
  xcb_get_window_attributes_reply_t *a =
      xcb_get_window_attributes_reply(o->c, xcb_get_window_attributes(o->c, w), NULL);
  int shown = a != NULL && a->map_state == XCB_MAP_STATE_VIEWABLE && !a->override_redirect;
  free(a);
  if (!shown) return 0;
  xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(o->c, xcb_get_geometry(o->c, w), NULL);
  if (g == NULL) return 0;
  *width = g->width;
  *height = g->height;
  free(g);
  return 1;
}

/* The program's biggest viewable window with its pid, among the window manager's clients or,
 * without one, the root's children; else the window its GL swaps drew. */
static xcb_window_t find_app_window(overlay *o) {
  xcb_window_t *list = NULL;
  int count = 0;
  void *reply = NULL;
  xcb_get_property_reply_t *p = xcb_get_property_reply(
      o->c, xcb_get_property(o->c, 0, o->screen->root, o->client_list, XCB_ATOM_WINDOW, 0, 4096),
      NULL);
  if (p != NULL && p->format == 32 && xcb_get_property_value_length(p) > 0) {
    list = xcb_get_property_value(p);
    count = xcb_get_property_value_length(p) / 4;
    reply = p;
  } else {
    free(p);
    xcb_query_tree_reply_t *t =
        xcb_query_tree_reply(o->c, xcb_query_tree(o->c, o->screen->root), NULL);
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
    if (list[i] == o->window || window_pid(o, list[i]) != self || !viewable(o, list[i], &w, &h))
      continue;
    if ((long)w * h > best_area) {
      best = list[i];
      best_area = (long)w * h;
    }
  }
  free(reply);
  int w, h;
  xcb_window_t seen = (xcb_window_t)atomic_load_explicit(&seen_window, memory_order_relaxed);
  if (best == XCB_WINDOW_NONE && seen != XCB_WINDOW_NONE && viewable(o, seen, &w, &h))
    best = seen; /* a program that sets no _NET_WM_PID (plain Xlib, glxgears) */
  return best;
}

/* ---- 4. drawing ------------------------------------------------------------------------------------- */

static void hide(overlay *o) {
  if (!o->mapped) return;
  xcb_unmap_window(o->c, o->window);
  o->mapped = 0;
}

/* Without a compositor the window's alpha is not blended: its shape is the image's pixels
 * that are not transparent, as rectangles of runs per row. */
static void shape_to(overlay *o, const lagscope_hud_image *image) {
  int n = 0;
  for (int y = 0; y < image->height && n < MAX_RECTS; y++) {
    const uint32_t *row = (const uint32_t *)((const char *)image->pixels + (size_t)y * image->stride);
    for (int x = 0; x < image->width && n < MAX_RECTS;) {
      while (x < image->width && (row[x] >> 24) == 0) x++;
      int start = x;
      while (x < image->width && (row[x] >> 24) != 0) x++;
      if (x > start) o->rects[n++] = (xcb_rectangle_t){(int16_t)start, (int16_t)y,
                                                       (uint16_t)(x - start), 1};
    }
  }
  xcb_shape_rectangles(o->c, XCB_SHAPE_SO_SET, XCB_SHAPE_SK_BOUNDING, XCB_CLIP_ORDERING_UNSORTED,
                       o->window, 0, 0, (uint32_t)n, o->rects);
}

/* The image, in bands that fit one request (ZPixmap rows of 32-bit pixels are width * 4). */
static void put(overlay *o, const lagscope_hud_image *image) {
  uint32_t max_bytes = xcb_get_maximum_request_length(o->c) * 4u - 64;
  int rows = (int)(max_bytes / (uint32_t)image->stride); /* the copy's rows are width * 4 */
  if (rows < 1) return;
  for (int y = 0; y < image->height; y += rows) {
    int n = image->height - y < rows ? image->height - y : rows;
    const uint8_t *data = (const uint8_t *)image->pixels + (size_t)y * image->stride;
    xcb_put_image(o->c, XCB_IMAGE_FORMAT_Z_PIXMAP, o->window, o->gc, (uint16_t)image->width,
                  (uint16_t)n, 0, (int16_t)y, 0, o->depth, (uint32_t)(n * image->width * 4), data);
  }
}

/* 1 when w, a child of the root, is the program's: its _NET_WM_PID, or that of a child of it (a
 * window manager's frame holds the client window). */
static int is_own(overlay *o, xcb_window_t w, uint32_t self) {
  if (window_pid(o, w) == self) return 1;
  xcb_query_tree_reply_t *t = xcb_query_tree_reply(o->c, xcb_query_tree(o->c, w), NULL);
  if (t == NULL) return 0;
  xcb_window_t *children = xcb_query_tree_children(t);
  int n = xcb_query_tree_children_length(t), own = 0;
  for (int i = 0; i < n && i < 8 && !own; i++) own = window_pid(o, children[i]) == self;
  free(t);
  return own;
}

/* 1 when w, a child of the root whose attributes came in a (NULL: none), is viewable
 * (override-redirect too: the program's menus) and meets the rectangle at x, y (the root's
 * coordinates). Frees a. */
static int covers(overlay *o, xcb_window_t w, xcb_get_window_attributes_reply_t *a, int x, int y,
                  int width, int height) {
  int shown = a != NULL && a->map_state == XCB_MAP_STATE_VIEWABLE;
  free(a);
  if (!shown) return 0;
  xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(o->c, xcb_get_geometry(o->c, w), NULL);
  if (g == NULL) return 0;
  int right = g->x + g->width + 2 * g->border_width, bottom = g->y + g->height + 2 * g->border_width;
  int meets = g->x < x + width && x < right && g->y < y + height && y < bottom;
  free(g);
  return meets;
}

/* The window to stack the overlay just above: the followed window's top-level one, or the
 * program's own window highest above it that meets the overlay's rectangle (its dialog over the
 * main window, stuck with it: issue 45). The walk up the stack stops at the first window of
 * another program's over that rectangle: that one hides the HUD, as it hides the program. The
 * windows' attributes are asked all at once (one round trip, not one each). Allocates. */
static xcb_window_t stack_sibling(overlay *o, int x, int y, int width, int height) {
  xcb_query_tree_reply_t *t =
      xcb_query_tree_reply(o->c, xcb_query_tree(o->c, o->screen->root), NULL);
  if (t == NULL) return o->app_top;
  xcb_window_t *children = xcb_query_tree_children(t); /* bottom to top */
  int n = xcb_query_tree_children_length(t), first = 0;
  while (first < n && children[first] != o->app_top) first++;
  first++;
  xcb_window_t sibling = o->app_top;
  xcb_get_window_attributes_cookie_t *asked =
      n > first ? lagscope__alloc((size_t)(n - first) * sizeof(*asked)) : NULL;
  if (asked != NULL) {
    for (int i = first; i < n; i++) asked[i - first] = xcb_get_window_attributes(o->c, children[i]);
    uint32_t self = (uint32_t)getpid();
    int i = first, stop = 0;
    for (; i < n && !stop; i++) {
      xcb_get_window_attributes_reply_t *a =
          xcb_get_window_attributes_reply(o->c, asked[i - first], NULL);
      if (children[i] == o->window) {
        free(a);
        continue;
      }
      if (!covers(o, children[i], a, x, y, width, height)) continue;
      if (is_own(o, children[i], self))
        sibling = children[i];
      else
        stop = 1;
    }
    for (; i < n; i++) xcb_discard_reply(o->c, asked[i - first].sequence); /* not read */
    lagscope__dealloc(asked);
  }
  free(t);
  return sibling;
}

/* Over the followed window's corner, just above its top-level window in the stack, or above
 * the program's own window that covers that corner (stack_sibling). */
static void place(overlay *o, const lagscope_hud_image *image, int app_width, int app_height) {
  xcb_translate_coordinates_reply_t *t = xcb_translate_coordinates_reply(
      o->c, xcb_translate_coordinates(o->c, o->app, o->screen->root, 0, 0), NULL);
  if (t == NULL) return;
  int margin = (int)(8 * image->scale);
  int right = image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int x = t->dst_x + (right ? app_width - margin - image->width : margin);
  int y = t->dst_y + (bottom ? app_height - margin - image->height : margin);
  free(t);
  uint32_t values[6] = {(uint32_t)x, (uint32_t)y, (uint32_t)image->width,
                        (uint32_t)image->height,
                        stack_sibling(o, x, y, image->width, image->height), XCB_STACK_MODE_ABOVE};
  xcb_configure_window(o->c, o->window,
                       XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y | XCB_CONFIG_WINDOW_WIDTH |
                           XCB_CONFIG_WINDOW_HEIGHT | XCB_CONFIG_WINDOW_SIBLING |
                           XCB_CONFIG_WINDOW_STACK_MODE,
                       values);
  if (image->width != o->width || image->height != o->height) o->shown = 0; /* cleared: redraw */
  o->x = x, o->y = y, o->width = image->width, o->height = image->height;
}

/* One pass: find or follow the window, then show the latest image over it. */
static void update(overlay *o) {
  if (!may_take(o)) {
    hide(o);
    return;
  }
  unsigned long target = atomic_load(&o->target);
  if (target != o->app_target) { /* the app named another window */
    o->app = XCB_WINDOW_NONE;
    o->app_target = target;
  }
  int app_width = 0, app_height = 0;
  if (o->app != XCB_WINDOW_NONE && !viewable(o, o->app, &app_width, &app_height))
    o->app = XCB_WINDOW_NONE; /* unmapped, minimised or destroyed: found again if it comes back */
  if (o->app == XCB_WINDOW_NONE) {
    o->app = target != 0 ? (xcb_window_t)target : find_app_window(o);
    if (o->app == XCB_WINDOW_NONE || !viewable(o, o->app, &app_width, &app_height)) {
      o->app = XCB_WINDOW_NONE;
      hide(o);
      return;
    }
  }
  o->app_top = top_of(o, o->app);
  if (o->app_top == XCB_WINDOW_NONE || !take_image(o)) {
    hide(o);
    return;
  }
  place(o, &o->image, app_width, app_height);
  if (!o->mapped) {
    xcb_map_window(o->c, o->window);
    o->mapped = 1;
    o->shown = 0;
  }
  if (o->image.sequence != o->shown) {
    if (o->shaped) shape_to(o, &o->image);
    put(o, &o->image);
    o->shown = o->image.sequence;
  }
}

/* ---- 5. the thread ------------------------------------------------------------------------------------ */

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
    o->window_made = make_window(o) ? 1 : -1;
    if (o->window_made < 0) say_failed(o, LAGSCOPE_ENOTSUP, "the server has no XFixes 2");
    o->shaped = o->window_made > 0 && !has_compositor(o);
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
                                               : find_app_window(o);
  if (app != XCB_WINDOW_NONE && viewable(o, app, &width, &height)) {
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

static void *overlay_main(void *arg) {
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
          (atomic_load(&o->asked) || atomic_load(&mode) != LAGSCOPE__HUD_AUTO ||
           ms_since(&begun) >= GRACE_MS))
        update(o);
      xcb_flush(o->c);
    } while (!wait_period(o, atomic_load(&o->draws) ? PERIOD_MS : REFRESH_MS) &&
             !xcb_connection_has_error(o->c));
    say_lost(o);
  }
  int expected = TAKER_OVERLAY;
  atomic_compare_exchange_strong(&taker, &expected, TAKER_NONE);
  if (o->c != NULL) xcb_disconnect(o->c); /* the server destroys the window with it */
  o->c = NULL;
  lagscope__thread_disown();
  atomic_store(&o->ended, 1);
  release(o);
  return NULL;
}

/* Stops the thread and closes its connection, waiting at most STOP_WAIT_MS: a stuck X server
 * must not hold lagscope_stop (and with it the program's exit). The thread is then left
 * behind, said; it owns what it still uses (take_image says why it is safe). */
static void overlay_stop(overlay *o) {
  pthread_mutex_lock(&o->lock);
  o->stopping = 1;
  pthread_cond_signal(&o->wake);
  pthread_mutex_unlock(&o->lock);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += STOP_WAIT_MS / 1000;
  if (pthread_timedjoin_np(o->thread, NULL, &until) != 0) {
    lagscope__log("the HUD overlay's thread did not stop within %d ms (the X server does not "
                  "answer): left behind", STOP_WAIT_MS);
    pthread_detach(o->thread);
  }
  release(o);
}

/* A new overlay and its thread, every signal blocked from its first instruction; NULL with *rc
 * set when it could not be made. Under control. */
static overlay *overlay_start(const char *display, unsigned long window, int asked, int draws,
                              int measures, int *rc) {
  overlay *o = lagscope__alloc(sizeof(*o));
  if (o == NULL) {
    *rc = LAGSCOPE_ENOMEM;
    return NULL;
  }
  memset(o, 0, sizeof(*o));
  const char *name = display != NULL ? display : getenv("DISPLAY");
  snprintf(o->display_name, sizeof(o->display_name), "%s", name != NULL ? name : "");
  atomic_init(&o->refs, 2);
  atomic_init(&o->target, window);
  atomic_init(&o->asked, asked);
  atomic_init(&o->ended, 0);
  atomic_init(&o->draws, draws);
  o->measures = measures;
  pthread_mutex_init(&o->lock, NULL);
  pthread_condattr_t clock;
  pthread_condattr_init(&clock);
  pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
  pthread_cond_init(&o->wake, &clock);
  pthread_condattr_destroy(&clock);
  int created = lagscope__thread_create(&o->thread, STACK_BYTES, overlay_main, o);
  if (created != LAGSCOPE_OK) {
    pthread_cond_destroy(&o->wake);
    pthread_mutex_destroy(&o->lock);
    lagscope__dealloc(o);
    *rc = created;
    return NULL;
  }
  *rc = LAGSCOPE_OK;
  return o;
}

/* ---- 6. starting it, and the consumer that wakes and stops it ------------------------------------- */

/* Starts the thread, or gives the running one more to do: the HUD (draws), a window the app
 * named (asked). The display's rate is read whenever the thread runs, unless given. */
static int show(const char *display, unsigned long window, int asked, int may_draw) {
  if (atomic_load(&in_child)) return LAGSCOPE_ENOTRUNNING;
  int rc = LAGSCOPE_OK;
  pthread_mutex_lock(&control);
  int draws = hud_on && may_draw && (asked || atomic_load(&mode) != LAGSCOPE__HUD_FRAME);
  int measures = atomic_load(&measure_refresh);
  if (!lagscope_on || (asked && !hud_on)) {
    rc = LAGSCOPE_ENOTRUNNING;
  } else if (running != NULL && asked && atomic_load(&running->ended)) {
    /* Its thread ended (it could not connect): the app may ask again, on another display. */
    pthread_join(running->thread, NULL);
    release(running);
    running = overlay_start(display, window, asked, draws, measures, &rc);
  } else if (running != NULL) {
    if (asked) {
      atomic_store(&running->target, window);
      atomic_store(&running->asked, 1);
    }
    if (draws) atomic_store(&running->draws, 1);
    if (asked || draws) wake(running);
  } else if (draws || measures) {
    running = overlay_start(display, window, asked, draws, measures, &rc);
  }
  pthread_mutex_unlock(&control);
  return rc;
}

int lagscope_hud_overlay_x11(const char *display_name, unsigned long window) {
  return show(display_name, window, 1, 1);
}

int lagscope__hud_x11_app_connected(const char *display, int may_draw) {
  return show(display, 0, 0, may_draw);
}

void lagscope__hud_x11_forget_in_child(void) {
  atomic_store(&in_child, 1); /* the parent's overlay serves the parent only */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  control = fresh; /* a parent thread may have held it at the fork */
  running = NULL;
  lagscope_on = hud_on = 0;
  atomic_store(&taker, TAKER_NONE);
}

/* The consumer: no thread or connection of its own; it knows that lagscope runs with
 * config.hud on (only then may an overlay start), wakes the overlay when a hang begins or ends
 * and stops it with lagscope. Dispatcher thread, but start and stop. */
typedef struct x11_consumer {
  int wake_due; /* a hang began or ended: wake the overlay after the HUD redrew */
} x11_consumer;

static x11_consumer the_consumer;

static int consumer_start(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                          void **state, char *why, size_t why_size) {
  (void)dispatcher, (void)why, (void)why_size;
  the_consumer.wake_due = 0;
  pthread_mutex_lock(&control);
  lagscope_on = 1;
  hud_on = config->hud != 0; /* off: no window, only the display's rate (lagscope-run) */
  pthread_mutex_unlock(&control);
  *state = &the_consumer;
  return LAGSCOPE_OK;
}

static void consumer_on_event(const lagscope_event *e, void *state) {
  x11_consumer *c = state;
  if (e->type == LAGSCOPE_EVENT_HANG_BEGAN || e->type == LAGSCOPE_EVENT_HANG_ENDED)
    c->wake_due = 1;
}

/* After the HUD's own tick (it is listed first), which redraws at once when a hang began or
 * ended: the overlay then takes that image, not the one before. */
static uint64_t consumer_tick(void *state, uint64_t now_ns) {
  (void)now_ns;
  x11_consumer *c = state;
  if (!c->wake_due) return UINT64_MAX;
  c->wake_due = 0;
  pthread_mutex_lock(&control);
  if (running != NULL) wake(running);
  pthread_mutex_unlock(&control);
  return UINT64_MAX;
}

/* Before the HUD's stop (consumers stop in reverse order), though the thread's copy makes the
 * order matter to nothing but the last frame shown. */
static void consumer_stop(void *state) {
  (void)state;
  pthread_mutex_lock(&control);
  lagscope_on = hud_on = 0;
  overlay *o = running;
  running = NULL;
  pthread_mutex_unlock(&control);
  if (o != NULL) overlay_stop(o);
}

const lagscope__consumer lagscope__hud_x11_consumer = {
    .name = "X11 HUD overlay",
    .delivery = LAGSCOPE__DELIVER_INLINE,
    .start = consumer_start,
    .on_event = consumer_on_event,
    .tick = consumer_tick,
    .stop = consumer_stop,
};
