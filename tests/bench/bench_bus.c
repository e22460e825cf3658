/*
 * bench_bus — the internal event bus (internal.h, core/deliver/bus.c: a lane per publishing
 * thread) against two baselines measured in the same run: the bus as it was before its lanes
 * (one ring of sequenced slots that every publisher reserves in with a CAS: "one ring") and the
 * obvious alternative, a mutex + condition variable bounded queue.
 *
 * Every queue gets the same capacity (the default bus_capacity), the same event struct, the
 * same rules (never block a publisher, drop and count when full, wake the consumer only when
 * it waits) and is called the same way, through function pointers. Figures:
 *   - publish cost with one publisher and no contention: fill the queue, then drain it
 *     (untimed), median over many runs;
 *   - publish cost with one publisher and a live consumer;
 *   - throughput with 1, 2, 4 and 8 publishers and 1 consumer, and the drops.
 * Throughput is events accepted and delivered per second. The consumer takes them all and
 * checks that nothing is lost or duplicated, that each publisher's events come in its order
 * and that sequences increase; the benchmark exits 1 if not.
 *
 * Usage: bench_bus [--millis N] [--runs N]
 *   --millis: ms of each throughput figure per queue (split in runs); --runs: publish-cost fills
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAPACITY 256u      /* lagscope's default bus_capacity */
#define BURST 64           /* publishes between two looks at the stop flag */
#define WAIT_NS 1000000u   /* the consumer's wait when empty; publishers wake it earlier */
/* Throughput runs per figure, alternating the two queues so that the machine's noise over
 * time hits both alike. */
#define SLICES 5

/* ---- the interface both queues implement ------------------------------------------------ */
typedef struct queue_ops {
  const char *name;
  void *(*create)(uint32_t capacity);
  void (*destroy)(void *q);
  int (*publish)(void *q, const lagscope_event *event); /* 0 or LAGSCOPE_EFULL */
  int (*take)(void *q, lagscope_event *out);            /* 1 taken, 0 empty */
  void (*wait)(void *q, uint64_t timeout_ns);           /* until maybe non-empty or timeout */
  void (*wake)(void *q);                                /* for shutdown */
} queue_ops;

/* ---- lagscope's bus behind that interface ------------------------------------------------- */
static void *bus_create(uint32_t capacity) {
  /* The struct is cache-line aligned (_Alignas), so its size is a multiple of the line. */
  lagscope__bus *bus = aligned_alloc(LAGSCOPE__CACHE_LINE, sizeof *bus);
  if (bus == NULL) return NULL;
  if (lagscope__bus_init(bus, capacity) != 0) {
    free(bus);
    return NULL;
  }
  return bus;
}

static void bus_destroy(void *q) {
  lagscope__bus_destroy(q);
  free(q);
}

static int bus_publish(void *q, const lagscope_event *e) { return lagscope__bus_publish(q, e); }
static int bus_take(void *q, lagscope_event *out) { return lagscope__bus_take(q, out); }
static void bus_wake(void *q) { lagscope__bus_wake(q); }
static void bus_wait(void *q, uint64_t timeout_ns) {
  lagscope__bus_wait(q, lagscope__now_ns() + timeout_ns); /* the bus's own clock */
}

static const queue_ops bus_ops = {"bus",    bus_create, bus_destroy, bus_publish,
                                  bus_take, bus_wait,   bus_wake};

/* ---- baseline 1: the bus before its lanes ---------------------------------------------------
 * One ring of sequenced slots for every publisher (Vyukov's bounded queue), as core/deliver/bus.c
 * was until its lanes: each publish is a CAS on the one head line all publishers share. */
typedef struct one_ring {
  uint64_t mask;
  lagscope__bus_slot *slots;
  lagscope__wakeup *wakeup;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t head;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t tail;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t dropped;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic int consumer_sleeping;
} one_ring;

static void *ring_create(uint32_t capacity) {
  one_ring *r = aligned_alloc(LAGSCOPE__CACHE_LINE, sizeof *r);
  if (r == NULL) return NULL;
  memset(r, 0, sizeof *r);
  r->slots = calloc(capacity, sizeof *r->slots);
  r->wakeup = lagscope__wakeup_new();
  if (r->slots == NULL || r->wakeup == NULL) {
    free(r->slots);
    if (r->wakeup != NULL) lagscope__wakeup_free(r->wakeup);
    free(r);
    return NULL;
  }
  r->mask = capacity - 1;
  for (uint64_t i = 0; i < capacity; i++) atomic_init(&r->slots[i].sequence, i);
  return r;
}

static void ring_destroy(void *q) {
  one_ring *r = q;
  lagscope__wakeup_free(r->wakeup);
  free(r->slots);
  free(r);
}

static int ring_publish(void *q, const lagscope_event *event) {
  one_ring *r = q;
  uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
  lagscope__bus_slot *slot;
  for (;;) {
    slot = &r->slots[pos & r->mask];
    int64_t diff = (int64_t)(atomic_load_explicit(&slot->sequence, memory_order_acquire) - pos);
    if (diff == 0) {
      if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed))
        break;
    } else if (diff < 0) {
      atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
      return LAGSCOPE_EFULL;
    } else {
      pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    }
  }
  slot->event = *event;
  slot->event.sequence = pos;
  atomic_store_explicit(&slot->sequence, pos + 1, memory_order_release);
  if (atomic_load_explicit(&r->consumer_sleeping, memory_order_seq_cst) &&
      atomic_exchange_explicit(&r->consumer_sleeping, 0, memory_order_seq_cst))
    lagscope__wakeup_post(r->wakeup);
  return 0;
}

static lagscope__bus_slot *ring_ready(one_ring *r, uint64_t pos) {
  lagscope__bus_slot *slot = &r->slots[pos & r->mask];
  return atomic_load_explicit(&slot->sequence, memory_order_acquire) == pos + 1 ? slot : NULL;
}

static int ring_take(void *q, lagscope_event *out) {
  one_ring *r = q;
  uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
  lagscope__bus_slot *slot = ring_ready(r, pos);
  if (slot == NULL) return 0;
  *out = slot->event;
  atomic_store_explicit(&slot->sequence, pos + r->mask + 1, memory_order_release);
  atomic_store_explicit(&r->tail, pos + 1, memory_order_relaxed);
  return 1;
}

static void ring_wait(void *q, uint64_t timeout_ns) {
  one_ring *r = q;
  atomic_store_explicit(&r->consumer_sleeping, 1, memory_order_seq_cst);
  if (ring_ready(r, atomic_load_explicit(&r->tail, memory_order_relaxed)) == NULL)
    lagscope__wakeup_wait_until(r->wakeup, lagscope__now_ns() + timeout_ns);
  atomic_store_explicit(&r->consumer_sleeping, 0, memory_order_seq_cst);
}

static void ring_wake(void *q) { lagscope__wakeup_post(((one_ring *)q)->wakeup); }

static const queue_ops ring_ops = {"one ring", ring_create, ring_destroy, ring_publish,
                                   ring_take,  ring_wait,   ring_wake};

/* ---- the baseline: a mutex + condvar bounded queue ------------------------------------------
 * Written plainly, as one would without a lock-free ring, and given the same advantages: a
 * power-of-two ring, a consumer that is signalled only when it waits, one signal per wait. */
typedef struct mutex_queue {
  pthread_mutex_t lock;
  pthread_cond_t nonempty;
  bool consumer_waiting;
  uint64_t mask;
  uint64_t head, tail; /* positions written and taken, ever; head - tail = events queued */
  uint64_t dropped;
  lagscope_event *events;
} mutex_queue;

static void *mq_create(uint32_t capacity) {
  mutex_queue *q = calloc(1, sizeof *q);
  if (q == NULL) return NULL;
  q->events = calloc(capacity, sizeof *q->events);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* deadlines immune to wall-clock jumps */
  if (q->events == NULL || pthread_mutex_init(&q->lock, NULL) != 0 ||
      pthread_cond_init(&q->nonempty, &attr) != 0) {
    pthread_condattr_destroy(&attr);
    free(q->events);
    free(q);
    return NULL;
  }
  pthread_condattr_destroy(&attr);
  q->mask = capacity - 1;
  return q;
}

static void mq_destroy(void *opaque) {
  mutex_queue *q = opaque;
  pthread_cond_destroy(&q->nonempty);
  pthread_mutex_destroy(&q->lock);
  free(q->events);
  free(q);
}

static int mq_publish(void *opaque, const lagscope_event *event) {
  mutex_queue *q = opaque;
  pthread_mutex_lock(&q->lock);
  if (q->head - q->tail > q->mask) { /* full: drop and count, like the bus */
    q->dropped++;
    pthread_mutex_unlock(&q->lock);
    return LAGSCOPE_EFULL;
  }
  lagscope_event *slot = &q->events[q->head & q->mask];
  *slot = *event;
  slot->sequence = q->head++;
  bool wake = q->consumer_waiting;
  q->consumer_waiting = false; /* one signal per wait, not one per publisher */
  pthread_mutex_unlock(&q->lock);
  if (wake) pthread_cond_signal(&q->nonempty);
  return 0;
}

static int mq_take(void *opaque, lagscope_event *out) {
  mutex_queue *q = opaque;
  pthread_mutex_lock(&q->lock);
  int taken = q->head != q->tail;
  if (taken) *out = q->events[q->tail++ & q->mask];
  pthread_mutex_unlock(&q->lock);
  return taken;
}

static void mq_wait(void *opaque, uint64_t timeout_ns) {
  mutex_queue *q = opaque;
  uint64_t deadline = bench_now_ns() + timeout_ns;
  struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
  pthread_mutex_lock(&q->lock);
  if (q->head == q->tail) { /* one wait; the caller loops, so a spurious wake-up is harmless */
    q->consumer_waiting = true;
    pthread_cond_timedwait(&q->nonempty, &q->lock, &ts);
    q->consumer_waiting = false;
  }
  pthread_mutex_unlock(&q->lock);
}

static void mq_wake(void *opaque) {
  mutex_queue *q = opaque;
  pthread_mutex_lock(&q->lock);
  pthread_cond_signal(&q->nonempty);
  pthread_mutex_unlock(&q->lock);
}

static const queue_ops mutex_ops = {"mutex+condvar", mq_create, mq_destroy, mq_publish,
                                    mq_take,         mq_wait,   mq_wake};

/* ---- what is published ---------------------------------------------------------------------
 * A payload-less event (payload NULL, as for hang events), so that the figures are the
 * queue's and not the reference counting's. */
static lagscope_event sample_event(void) {
  lagscope_event e;
  memset(&e, 0, sizeof e);
  e.type = LAGSCOPE_EVENT_HANG_BEGAN;
  e.time_ns = bench_now_ns();
  e.as.hang_began.hang_id = 1;
  e.as.hang_began.threshold_ms = 250;
  return e;
}

/* ---- (a) publish cost without contention ------------------------------------------------- */

/* Fills an empty queue (timed), then drains it (untimed). Returns ns per publish, or a
 * negative value if an event was refused or lost, which would be a bug: the queue was empty. */
static double one_fill(const queue_ops *ops, void *q, uint32_t capacity) {
  lagscope_event e = sample_event(), out;
  int refused = 0;
  uint64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < capacity; i++) refused |= ops->publish(q, &e);
  uint64_t elapsed = bench_now_ns() - t0;
  uint32_t taken = 0;
  while (ops->take(q, &out)) taken++;
  return refused || taken != capacity ? -1.0 : (double)elapsed / capacity;
}

/* Median ns per publish over `runs` fills, or a negative value when the queue misbehaved. */
static double publish_cost(const queue_ops *ops, unsigned runs) {
  void *q = ops->create(CAPACITY);
  double *samples = calloc(runs, sizeof *samples);
  double result = -1.0;
  if (q != NULL && samples != NULL) {
    one_fill(ops, q, CAPACITY); /* warm the slots into the cache, as a running app has them */
    result = 0.0;
    for (unsigned r = 0; r < runs && result == 0.0; r++) {
      samples[r] = one_fill(ops, q, CAPACITY);
      if (samples[r] < 0) result = -1.0;
    }
    if (result == 0.0) result = bench_median(samples, runs);
  }
  free(samples);
  if (q != NULL) ops->destroy(q);
  return result;
}

/* ---- (b) throughput: N publishers, 1 consumer --------------------------------------------- */
#define MAX_PUBLISHERS 8
#define WHO_SHIFT 40 /* an event's hang_id: publisher << WHO_SHIFT | its count of accepted events */

typedef struct run {
  const queue_ops *ops;
  void *q;
  unsigned publishers;
  pthread_barrier_t start;  /* everyone starts together */
  atomic_bool stop;         /* publishers: stop publishing */
  atomic_bool consumer_stop;/* consumer: drain what is left and stop */
  uint64_t taken;           /* consumer's count */
  bool order_broken;        /* a publisher's events out of its order, or sequences not rising */
} run;

typedef struct publisher {
  pthread_t thread;
  run *run;
  uint64_t who;
  uint64_t attempts, accepted;
} publisher;

static void *publisher_main(void *arg) {
  publisher *p = arg;
  const queue_ops *ops = p->run->ops;
  lagscope_event e = sample_event();
  uint64_t attempts = 0, accepted = 0;
  pthread_barrier_wait(&p->run->start);
  while (!atomic_load_explicit(&p->run->stop, memory_order_relaxed)) {
    for (int i = 0; i < BURST; i++) {
      e.as.hang_began.hang_id = p->who << WHO_SHIFT | accepted;
      accepted += ops->publish(p->run->q, &e) == 0;
    }
    attempts += BURST;
  }
  p->attempts = attempts;
  p->accepted = accepted;
  return NULL;
}

/* Takes everything, checking each publisher's order and that sequences strictly increase (the
 * bus's delivery order). */
static void *consumer_main(void *arg) {
  run *r = arg;
  lagscope_event e;
  uint64_t taken = 0, last = 0, next[MAX_PUBLISHERS] = {0};
  pthread_barrier_wait(&r->start);
  for (;;) {
    /* Read the flag before draining: publishers are joined before it is set, so the drain
     * that follows seeing it is the last one needed. */
    bool done = atomic_load(&r->consumer_stop);
    while (r->ops->take(r->q, &e)) {
      uint64_t who = e.as.hang_began.hang_id >> WHO_SHIFT;
      uint64_t count = e.as.hang_began.hang_id & ((1ull << WHO_SHIFT) - 1);
      if ((taken > 0 && e.sequence <= last) || who >= r->publishers || count != next[who])
        r->order_broken = true;
      else
        next[who]++;
      last = e.sequence;
      taken++;
    }
    if (done) break;
    r->ops->wait(r->q, WAIT_NS);
  }
  r->taken = taken;
  return NULL;
}

typedef struct throughput {
  double seconds;
  uint64_t attempts, accepted, taken;
  bool broken; /* lost, duplicated or reordered events */
} throughput;

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) { /* interrupted by a signal: sleep the rest */
  }
}

/* The others would wait at the start barrier forever without this thread: give up loudly. */
static void start_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
  if (pthread_create(t, NULL, fn, arg) != 0) {
    fprintf(stderr, "bench_bus: cannot start a thread\n");
    exit(1);
  }
}

/* Starts the consumer and n publishers, lets them run for `millis`, stops and joins them. */
static int measure_throughput(const queue_ops *ops, unsigned n, unsigned millis, throughput *out) {
  run r = {.ops = ops, .q = ops->create(CAPACITY), .publishers = n};
  publisher pubs[MAX_PUBLISHERS];
  pthread_t consumer;
  if (r.q == NULL || n > MAX_PUBLISHERS) return -1;
  pthread_barrier_init(&r.start, NULL, n + 2);
  start_thread(&consumer, consumer_main, &r);
  for (unsigned i = 0; i < n; i++) {
    pubs[i] = (publisher){.run = &r, .who = i};
    start_thread(&pubs[i].thread, publisher_main, &pubs[i]);
  }
  pthread_barrier_wait(&r.start);
  uint64_t t0 = bench_now_ns();
  sleep_ns((uint64_t)millis * 1000000u);
  atomic_store(&r.stop, true);
  *out = (throughput){.seconds = (double)(bench_now_ns() - t0) / 1e9};
  for (unsigned i = 0; i < n; i++) {
    pthread_join(pubs[i].thread, NULL);
    out->attempts += pubs[i].attempts;
    out->accepted += pubs[i].accepted;
  }
  atomic_store(&r.consumer_stop, true);
  ops->wake(r.q);
  pthread_join(consumer, NULL);
  out->taken = r.taken;
  out->broken = r.order_broken || r.taken != out->accepted;
  pthread_barrier_destroy(&r.start);
  ops->destroy(r.q);
  return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */
#define QUEUES 3      /* the bus, one ring, mutex+condvar */
#define COUNTS 4      /* 1, 2, 4 and 8 publishers */
static const queue_ops *const queues[QUEUES] = {&bus_ops, &ring_ops, &mutex_ops};
static const unsigned publisher_counts[COUNTS] = {1, 2, 4, 8};

typedef struct results {
  double cost[QUEUES];                  /* ns per publish, no contention */
  throughput rate[COUNTS][QUEUES];      /* n publishers, 1 consumer */
} results;

static double per_second(const throughput *t) { return (double)t->accepted / t->seconds; }
static double ns_per_attempt(const throughput *t) { return t->seconds * 1e9 / (double)t->attempts; }
static double drop_percent(const throughput *t) {
  return t->attempts ? 100.0 * (double)(t->attempts - t->accepted) / (double)t->attempts : 0.0;
}

static void row_ns(const char *figure, const double ns[QUEUES], const char *goal) {
  char value[32], base[64], ratio[16];
  snprintf(value, sizeof value, "%.1f ns", ns[0]);
  snprintf(base, sizeof base, "%.1f one ring · %.1f mutex", ns[1], ns[2]);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, ns[0], ns[1]), goal);
}

static void row_rate(const char *figure, const throughput t[QUEUES], const char *goal) {
  char value[32], base[64], ratio[16];
  snprintf(value, sizeof value, "%.2f M/s", per_second(&t[0]) / 1e6);
  snprintf(base, sizeof base, "%.2f one ring · %.2f mutex", per_second(&t[1]) / 1e6,
           per_second(&t[2]) / 1e6);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, per_second(&t[0]), per_second(&t[1])),
            goal);
}

static void row_drops(const char *figure, const throughput t[QUEUES]) {
  char value[32], base[64];
  snprintf(value, sizeof value, "%.1f %%", drop_percent(&t[0]));
  snprintf(base, sizeof base, "%.1f %% one ring · %.1f %% mutex", drop_percent(&t[1]),
           drop_percent(&t[2]));
  bench_row(figure, value, base, "-", "- (full queue drops, counted)");
}

static void print_table(const results *r, unsigned runs, unsigned millis) {
  char title[240], figure[64], value[32], base[64], ratio[16];
  snprintf(title, sizeof title,
           "event bus (a lane per publisher) vs one ring (the bus before its lanes) and a\n"
           "  mutex+condvar queue (capacity %u; publish cost: median of %u fills; with consumer:\n"
           "  median of %u runs of %u ms; ratio: the bus against one ring)",
           CAPACITY, runs, SLICES, millis / SLICES);
  bench_table_begin(title);
  row_ns("publish, 1 publisher, no consumer", r->cost, "≤ 100 ns");
  double wall[QUEUES];
  for (int q = 0; q < QUEUES; q++) wall[q] = ns_per_attempt(&r->rate[0][q]);
  row_ns("publish, 1 publisher + live consumer (wall)", wall, "≤ 100 ns");
  for (int c = 0; c < COUNTS; c++) {
    snprintf(figure, sizeof figure, "delivered, %u publisher%s + 1 consumer", publisher_counts[c],
             publisher_counts[c] == 1 ? "" : "s");
    row_rate(figure, r->rate[c], publisher_counts[c] == 4 ? "≥ 5 M events/s" : "-");
  }
  /* The second bound: more publishers never deliver less than one did. */
  double one = per_second(&r->rate[0][0]);
  for (int c = 1; c < COUNTS; c++) {
    double many = per_second(&r->rate[c][0]);
    snprintf(figure, sizeof figure, "bus, %u publishers against 1", publisher_counts[c]);
    snprintf(value, sizeof value, "%.2f M/s", many / 1e6);
    snprintf(base, sizeof base, "%.2f M/s with 1 publisher", one / 1e6);
    bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, many, one), "≥ 1.00x");
  }
  row_drops("dropped, 4 publishers (% of publishes)", r->rate[2]);
  printf("(median 4-publisher run: bus %llu published, %llu dropped; one ring %llu published, %llu "
         "dropped)\n",
         (unsigned long long)r->rate[2][0].accepted,
         (unsigned long long)(r->rate[2][0].attempts - r->rate[2][0].accepted),
         (unsigned long long)r->rate[2][1].accepted,
         (unsigned long long)(r->rate[2][1].attempts - r->rate[2][1].accepted));
}

/* The run with the median delivery rate is the one reported, so that one slowed (or lucky)
 * run does not become the figure. */
static throughput median_slice(throughput *slices, unsigned n) {
  for (unsigned i = 1; i < n; i++) { /* insertion sort by delivery rate: n is tiny */
    throughput t = slices[i];
    unsigned j = i;
    for (; j > 0 && per_second(&slices[j - 1]) > per_second(&t); j--) slices[j] = slices[j - 1];
    slices[j] = t;
  }
  return slices[n / 2];
}

/* Every queue with n publishers and one consumer, `millis` ms in all for each, in turns so that
 * the machine's noise over time hits all alike. Returns -1, with a message, when a queue could
 * not be made or lost, duplicated or reordered events. */
static int measure_throughputs(unsigned n, unsigned millis, throughput out[QUEUES]) {
  throughput slices[QUEUES][SLICES];
  for (unsigned i = 0; i < SLICES; i++) {
    for (int q = 0; q < QUEUES; q++) {
      if (measure_throughput(queues[q], n, millis / SLICES, &slices[q][i]) != 0) {
        fprintf(stderr, "bench_bus: %s: could not create the queue\n", queues[q]->name);
        return -1;
      }
      if (slices[q][i].broken) {
        fprintf(stderr, "bench_bus: %s, %u publishers: lost, duplicated or reordered events\n",
                queues[q]->name, n);
        return -1;
      }
    }
  }
  for (int q = 0; q < QUEUES; q++) out[q] = median_slice(slices[q], SLICES);
  return 0;
}

static void *do_nothing(void *arg) { return arg; }

/* glibc skips the atomic instructions of pthread_mutex_lock while a process has never had a
 * second thread: that would flatter the baseline's single-publisher figure (lagscope always
 * has threads). One short-lived thread ends that mode for good. */
static void become_multithreaded(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, do_nothing, NULL) == 0) pthread_join(t, NULL);
}

int main(int argc, char **argv) {
  unsigned millis = bench_arg_uint(argc, argv, "--millis", 1000, 10);
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 201, 1);
  static results r;
  become_multithreaded();
  for (int q = 0; q < QUEUES; q++) {
    r.cost[q] = publish_cost(queues[q], runs);
    if (r.cost[q] < 0) {
      fprintf(stderr, "bench_bus: %s refused or lost events while not full\n", queues[q]->name);
      return 1;
    }
  }
  for (int c = 0; c < COUNTS; c++)
    if (measure_throughputs(publisher_counts[c], millis, r.rate[c]) != 0) return 1;
  print_table(&r, runs, millis);
  return 0;
}
