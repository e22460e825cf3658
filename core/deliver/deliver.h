/*
 * Delivery: the bus, publishing and logging, events as JSON, and the dispatcher that hands events
 * to subscribers and consumers.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_DELIVER_H
#define LAGSCOPE_DELIVER_H

#include "base/base.h"
#include "port.h"

/* ---- bus (core/deliver/bus.c) ------------------------------------------------------------------------
 * A bounded multi-producer queue of events with one consumer. Publishers never share a line
 * while publishing: each thread publishes into a lane of its own (its ticket, taken at its
 * first publish, picks it), a ring of sequenced slots (reserve with a CAS that only threads
 * sharing the lane contend for, fill, commit). The consumer takes each lane's events in their
 * order, a burst at a time, lane after lane: one thread's events keep its order; events of
 * different threads come in the order the consumer finds them. A full lane refuses the event
 * and counts it. Also used, with one lane, as each subscriber's own queue. */
#define LAGSCOPE__BUS_LANES 8 /* the central bus's; more publishing threads share lanes */

typedef struct lagscope__bus_slot {
  /* The slot's state for its lane position p, against p's lap base b = p & ~mask: b free, b + 1
   * committed. Zero, as mapped, is "free for the first lap": an unused lane is never touched. */
  _Atomic uint64_t sequence;
  lagscope_event event;
} lagscope__bus_slot;

typedef struct lagscope__bus_lane {
  /* Publishers' line: the next position to reserve (also the events accepted, ever) and the
   * refusals. */
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t head;
  _Atomic uint64_t dropped;
  /* The consumer's line: the next position to take. */
  _Alignas(LAGSCOPE__CACHE_LINE) uint64_t tail;
} lagscope__bus_lane;

typedef struct lagscope__bus {
  /* Read-only after init: a line that every publisher and the consumer share without writing. */
  uint64_t mask;                /* a lane's capacity - 1 */
  uint32_t lane_count;          /* LAGSCOPE__BUS_LANES, or 1 for a subscriber's queue */
  int stamps;                   /* take stamps delivery sequences (else keeps the event's) */
  lagscope__bus_slot *slots;    /* lane i's ring is slots[i * capacity ...] */
  lagscope__bus_lane *lanes;
  lagscope__wakeup *wakeup;
  /* The consumer's own: the lane it takes from, how many it took there in a row, and the
   * sequence of the next event it delivers. */
  _Alignas(LAGSCOPE__CACHE_LINE) uint32_t lane_now;
  uint32_t burst_now;
  uint64_t delivered;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic int consumer_sleeping; /* is, or is about to be, waiting */
} lagscope__bus;

/* The central bus: LAGSCOPE__BUS_LANES lanes of `capacity` slots (mapped, touched as used);
 * take stamps each event's sequence in delivery order. A; capacity a power of two */
int lagscope__bus_init(lagscope__bus *bus, uint32_t capacity);
/* A subscriber's queue: one lane of `capacity` slots for one publisher (the dispatcher);
 * take keeps each event's sequence (the central bus's order). A; capacity a power of two */
int lagscope__bus_init_queue(lagscope__bus *bus, uint32_t capacity);
/* Releases the payloads of events never taken, then the slots. A */
void lagscope__bus_destroy(lagscope__bus *bus);
/* Copies *event into the calling thread's lane. The bus owns the payload reference from here
 * on (on EFULL it releases it). 0 or LAGSCOPE_EFULL. F (one futex wake when the consumer
 * sleeps). */
int lagscope__bus_publish(lagscope__bus *bus, const lagscope_event *event);
/* Single consumer: takes the next event into *out (the caller then owns its payload
 * reference). 1 if taken, 0 if every lane is empty. F */
int lagscope__bus_take(lagscope__bus *bus, lagscope_event *out);
/* Single consumer: waits until an event may be there or the deadline passes. F */
void lagscope__bus_wait(lagscope__bus *bus, uint64_t deadline_ns);
/* Events accepted, ever; events refused, ever. F */
uint64_t lagscope__bus_published(const lagscope__bus *bus);
uint64_t lagscope__bus_dropped(const lagscope__bus *bus);
/* Wakes a waiting consumer (for shutdown). F */
void lagscope__bus_wake(lagscope__bus *bus);

/* ---- events as JSON (core/deliver/event_json.c) ---------------------------------------------- */
/* The event as one line of JSON in lagscope's heap (lagscope__dealloc), as lagscope_event_json
 * writes it. NULL when out of memory. A */
char *lagscope__event_text(const lagscope_event *event);
/* A metrics event's text without its arrays (recent_frame_ms, frame_histogram,
 * busiest_threads): what the viewer's window of older ticks serves. NULL when out of memory. A */
char *lagscope__metrics_numbers_text(const lagscope_event *event);

/* ---- publishing and logging (core/deliver/publish.c) --------------------------------------------------- */
/* Points publishing at an instance's bus and logging at its config (lifecycle: before its
 * threads start; NULL, NULL after they are joined). F */
void lagscope__publish_to(lagscope__bus *bus, const lagscope_config *config);
/* lagscope__publish, lagscope__publish_error and lagscope__log, which every stage may call, are
 * declared in base.h ("saying something") and implemented in publish.c. */
void lagscope__log_line(const lagscope_config *config, const char *line); /* F */

/* ---- the dispatcher (core/deliver/dispatcher.c): the bus, the subscribers and the consumers ----------- */
typedef struct lagscope__dispatcher lagscope__dispatcher;
typedef struct lagscope__subscriber lagscope__subscriber;

int lagscope__dispatcher_new(const lagscope_config *config, lagscope__dispatcher **out); /* A */
int lagscope__dispatcher_start(lagscope__dispatcher *d); /* the dispatcher thread. A */
/* Stops the consumers with a thread of their own, joins the dispatcher thread (every event
 * published so far reaches the subscribers' queues), then stops the other consumers. A, L */
void lagscope__dispatcher_stop(lagscope__dispatcher *d);
/* Stops the remaining subscribers, each after it delivered what it has queued. A, L */
void lagscope__dispatcher_free(lagscope__dispatcher *d);
lagscope__bus *lagscope__dispatcher_bus(lagscope__dispatcher *d); /* F */
/* Events lost: the bus's and every subscriber queue's. F */
uint64_t lagscope__dispatcher_dropped(lagscope__dispatcher *d);
void lagscope__dispatcher_wake(lagscope__dispatcher *d); /* F, any thread */
/* A subscriber with a queue and a delivery thread of its own. A, L */
int lagscope__dispatcher_subscribe(lagscope__dispatcher *d, lagscope_event_fn fn, void *user,
                                   lagscope_subscription *out);
/* Unlinks a subscriber for lagscope__subscriber_stop; LAGSCOPE_ENOENT, or LAGSCOPE_EDEADLK
 * from its own callback (left linked). L */
int lagscope__dispatcher_unlink(lagscope__dispatcher *d, lagscope_subscription id,
                                lagscope__subscriber **out);
/* Joins an unlinked subscriber's thread, delivering nothing more, and frees it. A */
void lagscope__subscriber_stop(lagscope__subscriber *s);

/* What plugs into the core from outside core/: the HUD (hud/consumer.c), the viewer
 * (web/consumer.c), Darwin's overlay, the X11 overlay (hud/linux/). The build lists them in lagscope__consumers (a file it
 * generates), so that core/ names none of them. */
typedef enum lagscope__delivery {
  LAGSCOPE__DELIVER_NONE,       /* takes no events */
  LAGSCOPE__DELIVER_INLINE,     /* on_event and tick on the dispatcher thread: quick */
  LAGSCOPE__DELIVER_OWN_THREAD, /* on_event on a delivery thread of its own */
} lagscope__delivery;

typedef struct lagscope__consumer {
  const char *name; /* in messages: "viewer not started: …" */
  lagscope__delivery delivery;
  /* lagscope_start, before lagscope's threads run. 0 with *state NULL: not wanted by this
   * config. A failure is said as an error event, and lagscope runs on without it. */
  int (*start)(const lagscope_config *config, lagscope__dispatcher *dispatcher, void **state,
               char *why, size_t why_size);
  void (*on_event)(const lagscope_event *e, void *state);
  /* INLINE: between events, on the dispatcher thread; returns when it next wants to run
   * (UINT64_MAX: at the next event). NULL: none. */
  uint64_t (*tick)(void *state, uint64_t now_ns);
  /* The app came back to the foreground (lagscope__app_resumed): on the dispatcher thread, and
   * possibly at once with stop. NULL: nothing to renew. */
  void (*resume)(void *state);
  /* lagscope_stop, after the monitor: OWN_THREAD ones before the dispatcher is joined (their
   * delivery thread joined first), the others after. */
  void (*stop)(void *state);
} lagscope__consumer;

extern const lagscope__consumer *const lagscope__consumers[]; /* NULL-terminated */

/* Starts each consumer of lagscope__consumers (before lagscope__dispatcher_start). A */
void lagscope__dispatcher_start_consumers(lagscope__dispatcher *d, const lagscope_config *config);
/* The app is back in the foreground: the consumers' resume soon, on the dispatcher thread
 * (iOS closes a suspended app's listening sockets; Darwin calls this on
 * UIApplicationWillEnterForegroundNotification). Any thread. F */
void lagscope__app_resumed(void);

#endif /* LAGSCOPE_DELIVER_H */
