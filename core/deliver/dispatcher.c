/*
 * Delivery: the dispatcher thread takes each event off the bus and hands it to every
 * subscriber's queue (each subscriber has a delivery thread of its own, so that a slow one holds
 * up nobody) and to the consumers that run on the dispatcher thread (the HUD).
 *
 * Consumers are what plugs into the core from outside core/: the HUD, the viewer, Darwin's
 * overlay. The build lists them (lagscope__consumers), so that core/ names none of them.
 *
 * Contents
 *   1. subscribers: one queue and one delivery thread each
 *   2. consumers: started, resumed and stopped with lagscope
 *   3. the dispatcher thread: bus -> every subscriber's queue and the inline consumers
 *   4. the dispatcher's life
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>

#define NS_PER_MS 1000000u
#define IDLE_WAIT_NS (10u * 1000u * NS_PER_MS) /* consumers are woken; this is a backstop */
#define CONSUMERS_MAX 8

struct lagscope__subscriber {
  lagscope_subscription id;
  lagscope_event_fn fn;
  void *user;
  lagscope__bus queue;
  lagscope__thread *thread;
  _Atomic int stopping; /* deliver what is queued, then exit */
  _Atomic int discard;  /* unsubscribed: deliver nothing more */
  struct lagscope__subscriber *next;
};
typedef struct lagscope__subscriber subscriber;

typedef struct consumer_slot {
  const lagscope__consumer *consumer;
  void *state;
  lagscope_subscription subscription; /* OWN_THREAD: its delivery */
} consumer_slot;

struct lagscope__dispatcher {
  lagscope__bus bus;
  uint32_t subscriber_capacity;
  lagscope__thread *thread;
  _Atomic int stopping;

  pthread_mutex_t subscribers_lock; /* the list; held while the dispatcher fans out */
  subscriber *subscribers;
  lagscope_subscription next_subscription_id;
  _Atomic uint64_t subscriber_drops;

  consumer_slot consumers[CONSUMERS_MAX]; /* filled before the thread starts */
  size_t consumers_len;
};

/* ---- 1. subscribers -------------------------------------------------------------------------- */

/* The subscriber whose callback this thread is running, to refuse a self-unsubscribe. */
static _Thread_local subscriber *delivering_for;

static void subscriber_main(void *arg) {
  subscriber *s = arg;
  delivering_for = s;
  for (;;) {
    lagscope_event e;
    while (lagscope__bus_take(&s->queue, &e)) {
      if (!atomic_load_explicit(&s->discard, memory_order_acquire)) s->fn(&e, s->user);
      lagscope_release(e.payload.any);
    }
    if (atomic_load_explicit(&s->stopping, memory_order_acquire)) break;
    lagscope__bus_wait(&s->queue, lagscope__now_ns() + IDLE_WAIT_NS);
  }
  delivering_for = NULL;
}

static void subscriber_free(subscriber *s) {
  lagscope__bus_destroy(&s->queue);
  lagscope__dealloc(s);
}

int lagscope__dispatcher_subscribe(lagscope__dispatcher *d, lagscope_event_fn fn, void *user,
                                   lagscope_subscription *out) {
  subscriber *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return LAGSCOPE_ENOMEM;
  int rc = lagscope__bus_init_queue(&s->queue, d->subscriber_capacity);
  if (rc != LAGSCOPE_OK) {
    lagscope__dealloc(s);
    return rc;
  }
  s->fn = fn;
  s->user = user;
  rc = lagscope__thread_start(&s->thread, "lagscope-sub", subscriber_main, s);
  if (rc != LAGSCOPE_OK) {
    subscriber_free(s);
    return rc;
  }
  pthread_mutex_lock(&d->subscribers_lock);
  s->id = ++d->next_subscription_id;
  /* Before the subscriber is linked: its callback may read the id from its first event on. */
  if (out != NULL) *out = s->id;
  s->next = d->subscribers;
  d->subscribers = s;
  pthread_mutex_unlock(&d->subscribers_lock);
  return LAGSCOPE_OK;
}

int lagscope__dispatcher_unlink(lagscope__dispatcher *d, lagscope_subscription id,
                                lagscope__subscriber **out) {
  pthread_mutex_lock(&d->subscribers_lock);
  subscriber **link = &d->subscribers;
  while (*link != NULL && (*link)->id != id) link = &(*link)->next;
  subscriber *s = *link;
  if (s != NULL && s != delivering_for) *link = s->next;
  pthread_mutex_unlock(&d->subscribers_lock);
  *out = s;
  if (s == NULL) return LAGSCOPE_ENOENT;
  return s == delivering_for ? LAGSCOPE_EDEADLK : LAGSCOPE_OK;
}

/* Stops an unlinked subscriber; with discard, events still queued are not delivered. */
static void subscriber_stop(subscriber *s, int discard) {
  atomic_store_explicit(&s->discard, discard, memory_order_release);
  atomic_store_explicit(&s->stopping, 1, memory_order_release);
  lagscope__bus_wake(&s->queue);
  lagscope__thread_join(s->thread);
  subscriber_free(s);
}

void lagscope__subscriber_stop(lagscope__subscriber *s) { subscriber_stop(s, 1); }

/* ---- 2. consumers ----------------------------------------------------------------------------- */

void lagscope__dispatcher_start_consumers(lagscope__dispatcher *d, const lagscope_config *config) {
  for (size_t i = 0; lagscope__consumers[i] != NULL && d->consumers_len < CONSUMERS_MAX; i++) {
    const lagscope__consumer *c = lagscope__consumers[i];
    char why[256] = "";
    void *state = NULL;
    int rc = c->start(config, d, &state, why, sizeof(why));
    lagscope_subscription id = 0;
    if (rc == LAGSCOPE_OK && state != NULL && c->delivery == LAGSCOPE__DELIVER_OWN_THREAD) {
      rc = lagscope__dispatcher_subscribe(d, c->on_event, state, &id);
      if (rc != LAGSCOPE_OK) {
        c->stop(state);
        snprintf(why, sizeof(why), "%s", lagscope_strerror(rc));
      }
    }
    if (rc != LAGSCOPE_OK) {
      lagscope__publish_error(rc, "%s not started: %s", c->name,
                              why[0] != '\0' ? why : lagscope_strerror(rc));
      continue;
    }
    if (state != NULL) d->consumers[d->consumers_len++] = (consumer_slot){c, state, id};
  }
}

/* Those with a delivery thread of their own: their subscription first, so that nothing feeds
 * one while it closes. */
static void stop_threaded_consumers(lagscope__dispatcher *d) {
  for (size_t i = d->consumers_len; i-- > 0;) {
    consumer_slot *slot = &d->consumers[i];
    if (slot->consumer->delivery != LAGSCOPE__DELIVER_OWN_THREAD) continue;
    subscriber *s;
    if (lagscope__dispatcher_unlink(d, slot->subscription, &s) == LAGSCOPE_OK) subscriber_stop(s, 1);
    slot->consumer->stop(slot->state); /* the dispatcher may be resuming it: its lock decides */
  }
}

/* After the dispatcher thread is joined. */
static void stop_other_consumers(lagscope__dispatcher *d) {
  for (size_t i = d->consumers_len; i-- > 0;) {
    consumer_slot *slot = &d->consumers[i];
    if (slot->consumer->delivery != LAGSCOPE__DELIVER_OWN_THREAD) slot->consumer->stop(slot->state);
  }
  d->consumers_len = 0;
}

/* Set from any thread (Darwin: the main thread, on return to the foreground); the dispatcher
 * resumes the consumers when it next wakes (each metrics tick at the latest), since resuming
 * may join threads (the viewer's listener): never on the main thread. */
static _Atomic int resume_wanted;

void lagscope__app_resumed(void) { atomic_store(&resume_wanted, 1); }

static void resume_consumers(lagscope__dispatcher *d) {
  if (!atomic_exchange(&resume_wanted, 0)) return;
  for (size_t i = 0; i < d->consumers_len; i++)
    if (d->consumers[i].consumer->resume != NULL) d->consumers[i].consumer->resume(d->consumers[i].state);
}

/* ---- 3. the dispatcher thread ------------------------------------------------------------------ */

static void fan_out(lagscope__dispatcher *d, const lagscope_event *e) {
  pthread_mutex_lock(&d->subscribers_lock);
  for (subscriber *s = d->subscribers; s != NULL; s = s->next) {
    lagscope_retain(e->payload.any);
    if (lagscope__bus_publish(&s->queue, e) != LAGSCOPE_OK)
      atomic_fetch_add_explicit(&d->subscriber_drops, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&d->subscribers_lock);
  for (size_t i = 0; i < d->consumers_len; i++) {
    const lagscope__consumer *c = d->consumers[i].consumer;
    if (c->delivery == LAGSCOPE__DELIVER_INLINE) c->on_event(e, d->consumers[i].state);
  }
}

/* The inline consumers' own work (the HUD redraws here, off the main thread); returns the
 * earliest time one of them wants to run again. */
static uint64_t tick_consumers(lagscope__dispatcher *d, uint64_t now, uint64_t wake) {
  for (size_t i = 0; i < d->consumers_len; i++) {
    const lagscope__consumer *c = d->consumers[i].consumer;
    if (c->delivery != LAGSCOPE__DELIVER_INLINE || c->tick == NULL) continue;
    uint64_t want = c->tick(d->consumers[i].state, now);
    if (want < wake) wake = want;
  }
  return wake;
}

static void dispatcher_main(void *arg) {
  lagscope__dispatcher *d = arg;
  for (;;) {
    lagscope_event e;
    while (lagscope__bus_take(&d->bus, &e)) {
      fan_out(d, &e);
      lagscope_release(e.payload.any);
    }
    if (atomic_load_explicit(&d->stopping, memory_order_acquire)) break;
    resume_consumers(d);
    uint64_t now = lagscope__now_ns();
    lagscope__bus_wait(&d->bus, tick_consumers(d, now, now + IDLE_WAIT_NS));
  }
}

/* ---- 4. the dispatcher's life ---------------------------------------------------------------- */

int lagscope__dispatcher_new(const lagscope_config *config, lagscope__dispatcher **out) {
  lagscope__dispatcher *d = lagscope__alloc(sizeof(*d));
  if (d == NULL) return LAGSCOPE_ENOMEM;
  d->subscriber_capacity = config->subscriber_capacity;
  pthread_mutex_init(&d->subscribers_lock, NULL);
  int rc = lagscope__bus_init(&d->bus, config->bus_capacity);
  if (rc != LAGSCOPE_OK) {
    pthread_mutex_destroy(&d->subscribers_lock);
    lagscope__dealloc(d);
    return rc;
  }
  *out = d;
  return LAGSCOPE_OK;
}

int lagscope__dispatcher_start(lagscope__dispatcher *d) {
  return lagscope__thread_start(&d->thread, "lagscope-bus", dispatcher_main, d);
}

void lagscope__dispatcher_stop(lagscope__dispatcher *d) {
  stop_threaded_consumers(d); /* the viewer: closing connections takes a while, and is no hang */
  if (d->thread != NULL) {
    atomic_store_explicit(&d->stopping, 1, memory_order_release);
    lagscope__bus_wake(&d->bus);
    lagscope__thread_join(d->thread);
    d->thread = NULL;
  }
  stop_other_consumers(d);
}

void lagscope__dispatcher_free(lagscope__dispatcher *d) {
  if (d == NULL) return;
  for (subscriber *s = d->subscribers, *next; s != NULL; s = next) {
    next = s->next;
    subscriber_stop(s, 0);
  }
  lagscope__bus_destroy(&d->bus);
  pthread_mutex_destroy(&d->subscribers_lock);
  lagscope__dealloc(d);
}

lagscope__bus *lagscope__dispatcher_bus(lagscope__dispatcher *d) { return &d->bus; }

uint64_t lagscope__dispatcher_dropped(lagscope__dispatcher *d) {
  return lagscope__bus_dropped(&d->bus) +
         atomic_load_explicit(&d->subscriber_drops, memory_order_relaxed);
}

void lagscope__dispatcher_wake(lagscope__dispatcher *d) { lagscope__bus_wake(&d->bus); }
