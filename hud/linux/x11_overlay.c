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
 * Here: 1. who takes the image (lagscope-run's frames or the overlay); 2. the overlay and its
 * life; 3. starting it (the public call, lagscope-run's hook) and the consumer that wakes and
 * stops it. The window is x11_window.c's, the drawing into it x11_draw.c's, the thread
 * x11_thread.c's; x11_private.h is what they share. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "x11_private.h"

#include "hud.h" /* lagscope__hud_hold */
#include "internal.h"
#include "lagscope.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STOP_WAIT_MS 1000
#define STACK_BYTES (256 * 1024)

typedef lagscope__hud_x11_overlay overlay;

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

lagscope__hud_mode lagscope__hud_x11_mode(void) { return (lagscope__hud_mode)atomic_load(&mode); }

unsigned long lagscope__hud_x11_window_seen(void) {
  return atomic_load_explicit(&seen_window, memory_order_relaxed);
}

void lagscope__hud_x11_stop_taking(void) {
  int expected = TAKER_OVERLAY;
  atomic_compare_exchange_strong(&taker, &expected, TAKER_NONE);
}

/* ---- 2. the overlay and its life ---------------------------------------------------------------- */

/* The overlay of the running instance and whether it runs with config.hud on: set by the
 * consumer's start and stop (section 3), read by the calls that start an overlay. */
static pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;
static int lagscope_on;  /* under control: lagscope runs (the consumer started) */
static int hud_on;       /* under control */
static overlay *running; /* under control */

void lagscope__hud_x11_release(overlay *o) {
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

/* The copy is remade whenever the image's size changes, not only when it grows: kept at its
 * largest, an expanded HUD's copy (212 KiB at scale 1, 848 KiB at 2) stayed in the app after the
 * HUD went back to compact (33 KiB). */
int lagscope__hud_x11_copy_image(overlay *o, const lagscope_hud_image *held) {
  size_t row = (size_t)held->width * 4, need = row * (size_t)held->height;
  if (need != o->pixels_size) {
    lagscope__dealloc(o->pixels);
    o->pixels = lagscope__alloc(need);
    o->pixels_size = o->pixels != NULL ? need : 0;
  }
  if (o->pixels == NULL) return 0;
  for (int y = 0; y < held->height; y++)
    memcpy((char *)o->pixels + (size_t)y * row,
           (const char *)held->pixels + (size_t)y * (size_t)held->stride, row);
  o->image = *held;
  o->image.pixels = o->pixels;
  o->image.stride = (int)row;
  return 1;
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
int lagscope__hud_x11_take_image(overlay *o) {
  pthread_mutex_lock(&o->lock);
  lagscope_hud_image held;
  int have = 0;
  if (!o->stopping && lagscope__hud_hold(&held) == LAGSCOPE_OK) {
    have = o->pixels != NULL && held.sequence == o->image.sequence;
    if (!have && held.pixels != NULL && held.width > 0 && held.height > 0 &&
        held.stride >= held.width * 4)
      have = lagscope__hud_x11_copy_image(o, &held);
    lagscope__hud_release();
  }
  pthread_mutex_unlock(&o->lock);
  return have;
}

/* 1 when the overlay may take the image now; in lagscope-run's auto mode it gives way for good
 * to frames. An app that asked for the overlay has no frame hooks: it always may. */
int lagscope__hud_x11_may_take(overlay *o) {
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

/* Stops the thread and closes its connection, waiting at most STOP_WAIT_MS: a stuck X server
 * must not hold lagscope_stop (and with it the program's exit). The thread is then left
 * behind, said; it owns what it still uses (lagscope__hud_x11_take_image says why it is safe). */
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
  lagscope__hud_x11_release(o);
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
  int created = lagscope__thread_create(&o->thread, STACK_BYTES, lagscope__hud_x11_thread_main, o);
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

/* ---- 3. starting it, and the consumer that wakes and stops it ------------------------------------- */

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
    lagscope__hud_x11_release(running);
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
