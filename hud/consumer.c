/*
 * The HUD as a consumer of lagscope's events (core/deliver/dispatcher.c): made, fed and redrawn on the
 * dispatcher thread, so that not even its buffers are drawn on the thread that started
 * lagscope; the host's main thread only takes finished images (lagscope_hud_take).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "hud.h"
#include "internal.h"

#include <time.h>

typedef struct hud_consumer {
  const lagscope_config *config; /* the instance's; outlives the consumer */
  lagscope__dispatcher *dispatcher;
  _Atomic(lagscope__hud *) hud;  /* made at the dispatcher's first look; NULL until then */
  int make_failed;               /* dispatcher thread */
  _Atomic int expanded_wanted;   /* the last request: 0, 1, or -1 (none); for a HUD made later */
} hud_consumer;

/* The running HUD, for the main thread, which takes no lock: set by start, cleared by stop. */
static _Atomic(hud_consumer *) shown;

/* Readers between taking `shown` and letting it go: stop frees the HUD only when none is
 * left. A reader counts itself before it looks at `shown` and stop clears `shown` before it
 * looks at the count (both sequentially consistent), so either the reader sees NULL and reads
 * nothing, or stop sees the reader and waits for it. */
static _Atomic int readers;

/* Dispatcher thread. A */
static lagscope__hud *hud_made(hud_consumer *c) {
  lagscope__hud *hud = atomic_load_explicit(&c->hud, memory_order_relaxed);
  if (hud != NULL || c->make_failed) return hud;
  hud = lagscope__hud_new(c->config);
  if (hud == NULL) {
    c->make_failed = 1;
    lagscope__publish_error(LAGSCOPE_ENOMEM, "the HUD could not be made: no memory for its "
                            "buffers; lagscope runs on without it");
    return NULL;
  }
  /* Published before the request is read: a request made meanwhile is seen here, or sees the
   * HUD (both sequentially consistent). */
  atomic_store(&c->hud, hud);
  int expanded = atomic_load(&c->expanded_wanted);
  if (expanded >= 0) lagscope__hud_request_expanded(hud, expanded);
  return hud;
}

static int hud_start(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                     void **state, char *why, size_t why_size) {
  (void)why, (void)why_size;
  if (!config->hud) return LAGSCOPE_OK; /* not wanted */
  hud_consumer *c = lagscope__alloc(sizeof(*c));
  if (c == NULL) return LAGSCOPE_ENOMEM;
  c->config = config;
  c->dispatcher = dispatcher;
  atomic_init(&c->expanded_wanted, -1);
  atomic_store(&shown, c);
  *state = c;
  return LAGSCOPE_OK;
}

static void hud_on_event(const lagscope_event *e, void *state) {
  lagscope__hud *hud = hud_made(state);
  if (hud == NULL) return;
  if (e->type == LAGSCOPE_EVENT_SERVER_STARTED) lagscope__hud_set_viewer_url(hud, e->payload.message);
  lagscope__hud_on_event(hud, e);
}

static uint64_t hud_tick(void *state, uint64_t now_ns) {
  lagscope__hud *hud = hud_made(state);
  return hud != NULL ? lagscope__hud_tick(hud, now_ns) : UINT64_MAX;
}

/* After the dispatcher is joined. A held image is copied within microseconds (Darwin's
 * overlay's CFDataCreate, the X11 overlay's memcpy); the main thread holds none while it is
 * hung elsewhere, so the wait ends. */
static void hud_stop(void *state) {
  hud_consumer *c = state;
  atomic_store(&shown, NULL);
  struct timespec pause = {0, 100 * 1000};
  while (atomic_load(&readers) > 0) nanosleep(&pause, NULL);
  lagscope__hud_free(atomic_load(&c->hud));
  lagscope__dealloc(c);
}

const lagscope__consumer lagscope__hud_consumer = {
    .name = "HUD",
    .delivery = LAGSCOPE__DELIVER_INLINE,
    .start = hud_start,
    .on_event = hud_on_event,
    .tick = hud_tick,
    .stop = hud_stop,
};

/* ---- the host's side: any thread, but usually the main one; no lock ---- */

/* The caller counts itself in readers first. */
static int take_counted(lagscope_hud_image *out) {
  hud_consumer *c = atomic_load(&shown);
  if (c == NULL) return LAGSCOPE_ENOTRUNNING;
  lagscope__hud *hud = atomic_load_explicit(&c->hud, memory_order_acquire);
  if (hud == NULL) return LAGSCOPE_ENODATA;
  /* The first take starts the drawing: one wake-up, once; after it, no system call. */
  if (lagscope__hud_want(hud)) lagscope__dispatcher_wake(c->dispatcher);
  return lagscope__hud_take(hud, out);
}

int lagscope_hud_take(lagscope_hud_image *out) {
  if (out == NULL) return LAGSCOPE_EINVAL;
  atomic_fetch_add(&readers, 1);
  int rc = take_counted(out);
  atomic_fetch_sub(&readers, 1);
  return rc;
}

int lagscope__hud_hold(lagscope_hud_image *out) {
  atomic_fetch_add(&readers, 1);
  int rc = take_counted(out);
  if (rc != LAGSCOPE_OK) atomic_fetch_sub(&readers, 1);
  return rc;
}

void lagscope__hud_release(void) { atomic_fetch_sub(&readers, 1); }

int lagscope_hud_set_expanded(int expanded) {
  atomic_fetch_add(&readers, 1);
  hud_consumer *c = atomic_load(&shown);
  int rc = c != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOTRUNNING;
  if (c != NULL) {
    atomic_store(&c->expanded_wanted, expanded ? 1 : 0);
    lagscope__hud *hud = atomic_load(&c->hud);
    if (hud != NULL) lagscope__hud_request_expanded(hud, expanded);
    lagscope__dispatcher_wake(c->dispatcher); /* redrawn at once */
  }
  atomic_fetch_sub(&readers, 1);
  return rc;
}
