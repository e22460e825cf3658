/*
 * bench_bus — the internal event bus (internal.h, core/deliver/bus.c) against the obvious alternative,
 * a mutex + condition variable bounded queue, measured in the same run.
 *
 * Both queues get the same capacity (the default bus_capacity), the same event struct, the
 * same rules (never block a publisher, drop and count when full, wake the consumer only when
 * it waits) and are called the same way, through function pointers. Figures:
 *   - publish cost with one publisher and no contention: fill the queue, then drain it
 *     (untimed), median over many runs;
 *   - publish cost and throughput with one publisher and a live consumer;
 *   - throughput with 4 publishers and 1 consumer over ~1 s, and the drops.
 * Throughput is events accepted and delivered per second (the consumer takes them all; the
 * benchmark checks that nothing is lost or reordered, and exits 1 if something is).
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
typedef struct run {
  const queue_ops *ops;
  void *q;
  pthread_barrier_t start;  /* everyone starts together */
  atomic_bool stop;         /* publishers: stop publishing */
  atomic_bool consumer_stop;/* consumer: drain what is left and stop */
  uint64_t taken;           /* consumer's count */
  bool order_broken;        /* consumer saw a sequence go backwards or repeat */
} run;

typedef struct publisher {
  pthread_t thread;
  run *run;
  uint64_t attempts, accepted;
} publisher;

static void *publisher_main(void *arg) {
  publisher *p = arg;
  const queue_ops *ops = p->run->ops;
  lagscope_event e = sample_event();
  uint64_t attempts = 0, accepted = 0;
  pthread_barrier_wait(&p->run->start);
  while (!atomic_load_explicit(&p->run->stop, memory_order_relaxed)) {
    for (int i = 0; i < BURST; i++) accepted += ops->publish(p->run->q, &e) == 0;
    attempts += BURST;
  }
  p->attempts = attempts;
  p->accepted = accepted;
  return NULL;
}

/* Takes everything, checking that sequences strictly increase (the bus's delivery order). */
static void *consumer_main(void *arg) {
  run *r = arg;
  lagscope_event e;
  uint64_t taken = 0, last = 0;
  pthread_barrier_wait(&r->start);
  for (;;) {
    /* Read the flag before draining: publishers are joined before it is set, so the drain
     * that follows seeing it is the last one needed. */
    bool done = atomic_load(&r->consumer_stop);
    while (r->ops->take(r->q, &e)) {
      if (taken > 0 && e.sequence <= last) r->order_broken = true;
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
  run r = {.ops = ops, .q = ops->create(CAPACITY)};
  publisher pubs[8];
  pthread_t consumer;
  if (r.q == NULL || n > 8) return -1;
  pthread_barrier_init(&r.start, NULL, n + 2);
  start_thread(&consumer, consumer_main, &r);
  for (unsigned i = 0; i < n; i++) {
    pubs[i] = (publisher){.run = &r};
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
typedef struct results {
  double cost;           /* ns per publish, no contention */
  throughput one, four;  /* 1 and 4 publishers, 1 consumer */
} results;

static double per_second(const throughput *t) { return (double)t->accepted / t->seconds; }
static double ns_per_attempt(const throughput *t) { return t->seconds * 1e9 / (double)t->attempts; }
static double drop_percent(const throughput *t) {
  return t->attempts ? 100.0 * (double)(t->attempts - t->accepted) / (double)t->attempts : 0.0;
}

static void row_ns(const char *figure, double bus, double mutex, const char *goal) {
  char value[32], base[48], ratio[16];
  snprintf(value, sizeof value, "%.1f ns", bus);
  snprintf(base, sizeof base, "%.1f ns %s", mutex, mutex_ops.name);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, bus, mutex), goal);
}

static void row_rate(const char *figure, double bus, double mutex, const char *goal) {
  char value[32], base[48], ratio[16];
  snprintf(value, sizeof value, "%.2f M/s", bus / 1e6);
  snprintf(base, sizeof base, "%.2f M/s %s", mutex / 1e6, mutex_ops.name);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, bus, mutex), goal);
}

static void row_drops(const char *figure, const throughput *bus, const throughput *mutex) {
  char value[32], base[48];
  snprintf(value, sizeof value, "%.1f %%", drop_percent(bus));
  snprintf(base, sizeof base, "%.1f %% %s", drop_percent(mutex), mutex_ops.name);
  bench_row(figure, value, base, "-", "- (full queue drops, counted)");
}

static void print_table(const results *bus, const results *mq, unsigned runs, unsigned millis) {
  char title[200];
  snprintf(title, sizeof title,
           "event bus vs mutex+condvar queue (capacity %u; publish cost: median of %u fills;\n"
           "  with consumer: median of %u runs of %u ms)",
           CAPACITY, runs, SLICES, millis / SLICES);
  bench_table_begin(title);
  row_ns("publish, 1 publisher, no consumer", bus->cost, mq->cost, "≤ 100 ns");
  row_ns("publish, 1 publisher + live consumer (wall)", ns_per_attempt(&bus->one),
         ns_per_attempt(&mq->one), "≤ 100 ns");
  row_rate("delivered, 1 publisher + 1 consumer", per_second(&bus->one), per_second(&mq->one),
           "-");
  row_drops("dropped, 1 publisher (% of publishes)", &bus->one, &mq->one);
  row_rate("delivered, 4 publishers + 1 consumer", per_second(&bus->four), per_second(&mq->four),
           "≥ 5 M events/s");
  row_drops("dropped, 4 publishers (% of publishes)", &bus->four, &mq->four);
  printf("(median 4-publisher run: bus %llu published, %llu dropped; %s %llu published, %llu dropped)\n",
         (unsigned long long)bus->four.accepted,
         (unsigned long long)(bus->four.attempts - bus->four.accepted), mutex_ops.name,
         (unsigned long long)mq->four.accepted,
         (unsigned long long)(mq->four.attempts - mq->four.accepted));
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

/* Both queues with n publishers and one consumer, `millis` ms in all for each. Returns -1,
 * with a message, when a queue could not be made or lost, duplicated or reordered events. */
static int measure_throughputs(unsigned n, unsigned millis, throughput *bus, throughput *mq) {
  const queue_ops *ops[2] = {&bus_ops, &mutex_ops};
  throughput slices[2][SLICES];
  for (unsigned i = 0; i < SLICES; i++) {
    for (int q = 0; q < 2; q++) {
      if (measure_throughput(ops[q], n, millis / SLICES, &slices[q][i]) != 0) {
        fprintf(stderr, "bench_bus: %s: could not create the queue\n", ops[q]->name);
        return -1;
      }
      if (slices[q][i].broken) {
        fprintf(stderr, "bench_bus: %s lost, duplicated or reordered events\n", ops[q]->name);
        return -1;
      }
    }
  }
  *bus = median_slice(slices[0], SLICES);
  *mq = median_slice(slices[1], SLICES);
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
  results bus, mq;
  become_multithreaded();
  bus.cost = publish_cost(&bus_ops, runs);
  mq.cost = publish_cost(&mutex_ops, runs);
  if (bus.cost < 0 || mq.cost < 0) {
    fprintf(stderr, "bench_bus: a queue refused or lost events while not full\n");
    return 1;
  }
  if (measure_throughputs(1, millis, &bus.one, &mq.one) != 0 ||
      measure_throughputs(4, millis, &bus.four, &mq.four) != 0)
    return 1;
  print_table(&bus, &mq, runs, millis);
  return 0;
}
