/* The bus: order, drop counting, payload reference counts, many publishers at once. */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

static lagscope_event event_with(uint64_t id, const void *payload) {
  lagscope_event e;
  memset(&e, 0, sizeof(e));
  e.type = LAGSCOPE_EVENT_HANG_BEGAN;
  e.as.hang_began.hang_id = id;
  e.payload.any = payload;
  return e;
}

static void test_ordering(void) {
  lagscope__bus bus;
  CHECK_EQ_INT(lagscope__bus_init(&bus, 16), 0);
  lagscope_event e, out;
  for (int lap = 0; lap < 5; lap++) { /* several laps around the ring */
    for (uint64_t i = 0; i < 10; i++) {
      e = event_with(lap * 100 + i, NULL);
      CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), 0);
    }
    for (uint64_t i = 0; i < 10; i++) {
      CHECK(lagscope__bus_take(&bus, &out));
      CHECK_EQ_INT(out.as.hang_began.hang_id, lap * 100 + i);
      CHECK_EQ_INT(out.sequence, lap * 10 + i);
    }
    CHECK(!lagscope__bus_take(&bus, &out));
  }
  lagscope__bus_destroy(&bus);
}

static void test_drops(void) {
  lagscope__bus bus;
  CHECK_EQ_INT(lagscope__bus_init(&bus, 16), 0);
  lagscope_event e = event_with(0, NULL), out;
  for (int i = 0; i < 16; i++) CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), 0);
  for (int i = 0; i < 5; i++) CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), LAGSCOPE_EFULL);
  CHECK_EQ_INT(lagscope__bus_dropped(&bus), 5);
  CHECK_EQ_INT(lagscope__bus_published(&bus), 16);
  CHECK(lagscope__bus_take(&bus, &out));
  CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), 0); /* room again */
  lagscope__bus untouched = bus;
  CHECK_EQ_INT(lagscope__bus_init(&bus, 12), LAGSCOPE_EINVAL); /* not a power of two... */
  CHECK(memcmp(&untouched, &bus, sizeof(bus)) == 0);           /* ...and nothing changed */
  lagscope__bus_destroy(&bus);
}

static int destroyed;
static void count_destroy(void *p) {
  (void)p;
  destroyed++;
}

static void test_refcounts(void) {
  lagscope__bus bus;
  CHECK_EQ_INT(lagscope__bus_init(&bus, 16), 0);
  uint64_t before = lagscope__memory_in_use();
  int *payload = lagscope__payload_new(sizeof(int), count_destroy);
  CHECK(payload != NULL);
  CHECK(lagscope__memory_in_use() > before);
  *payload = 7;
  /* The bus takes the publisher's reference; the consumer receives it. */
  lagscope_event e = event_with(1, payload), out;
  CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), 0);
  CHECK(lagscope__bus_take(&bus, &out));
  CHECK(out.payload.any == payload);
  lagscope_retain(out.payload.any); /* a second owner */
  CHECK_EQ_INT(lagscope__payload_refs(payload), 2);
  lagscope_release(out.payload.any);
  CHECK_EQ_INT(destroyed, 0);
  /* A refused event's payload reference is released by the bus. */
  for (int i = 0; i < 16; i++) {
    lagscope_event filler = event_with(0, NULL);
    lagscope__bus_publish(&bus, &filler);
  }
  CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), LAGSCOPE_EFULL);
  CHECK_EQ_INT(destroyed, 1);
  CHECK_EQ_INT(lagscope__memory_in_use(), before);
  /* Destroying a bus releases what nobody took. */
  while (lagscope__bus_take(&bus, &out)) {}
  int *queued = lagscope__payload_new(sizeof(int), count_destroy);
  e = event_with(2, queued);
  CHECK_EQ_INT(lagscope__bus_publish(&bus, &e), 0);
  lagscope__bus_destroy(&bus);
  CHECK_EQ_INT(destroyed, 2);
}

/* n publishers, one consumer that waits when empty. Every event arrives exactly once, each
 * publisher's in its own order, and sequences strictly increase: with fewer publishers than
 * lanes (each its own) and with more (threads sharing a lane). */
#define MAX_PUBLISHERS 12
#define PER_PUBLISHER 100000

static lagscope__bus shared_bus;

static void *publisher(void *arg) {
  uint64_t who = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < PER_PUBLISHER;) {
    lagscope_event e = event_with(who << 32 | i, NULL);
    if (lagscope__bus_publish(&shared_bus, &e) == 0) i++; /* full: try again (test only) */
  }
  return NULL;
}

static void many_publishers(unsigned n) {
  CHECK_EQ_INT(lagscope__bus_init(&shared_bus, 1024), 0);
  pthread_t threads[MAX_PUBLISHERS];
  for (uintptr_t i = 0; i < n; i++) pthread_create(&threads[i], NULL, publisher, (void *)i);
  uint64_t next[MAX_PUBLISHERS] = {0};
  uint64_t received = 0, last_sequence = 0;
  while (received < (uint64_t)n * PER_PUBLISHER) {
    lagscope_event out;
    if (!lagscope__bus_take(&shared_bus, &out)) {
      lagscope__bus_wait(&shared_bus, lagscope__now_ns() + 1000000000u);
      continue;
    }
    uint64_t who = out.as.hang_began.hang_id >> 32, i = out.as.hang_began.hang_id & 0xffffffffu;
    CHECK(who < n);
    CHECK_EQ_INT(i, next[who]);
    next[who]++;
    CHECK(received == 0 || out.sequence > last_sequence);
    last_sequence = out.sequence;
    received++;
  }
  for (unsigned i = 0; i < n; i++) pthread_join(threads[i], NULL);
  lagscope_event out;
  CHECK(!lagscope__bus_take(&shared_bus, &out));
  CHECK_EQ_INT(lagscope__bus_published(&shared_bus), (uint64_t)n * PER_PUBLISHER);
  lagscope__bus_destroy(&shared_bus);
}

static void test_many_publishers(void) { many_publishers(4); }
static void test_more_publishers_than_lanes(void) { many_publishers(MAX_PUBLISHERS); }

/* A subscriber's queue (one lane) keeps the sequences the central bus gave. */
static void test_queue_keeps_sequences(void) {
  lagscope__bus queue;
  CHECK_EQ_INT(lagscope__bus_init_queue(&queue, 16), 0);
  lagscope_event e = event_with(1, NULL), out;
  e.sequence = 41;
  CHECK_EQ_INT(lagscope__bus_publish(&queue, &e), 0);
  e.sequence = 97;
  CHECK_EQ_INT(lagscope__bus_publish(&queue, &e), 0);
  CHECK(lagscope__bus_take(&queue, &out));
  CHECK_EQ_INT(out.sequence, 41);
  CHECK(lagscope__bus_take(&queue, &out));
  CHECK_EQ_INT(out.sequence, 97);
  CHECK_EQ_INT(lagscope__bus_published(&queue), 2);
  lagscope__bus_destroy(&queue);
}

/* A thread that filled its lane does not keep another thread's event waiting behind all of
 * it: the consumer moves on after a burst. */
static void *publish_one(void *arg) {
  lagscope_event e = event_with(999, NULL);
  CHECK_EQ_INT(lagscope__bus_publish(arg, &e), 0);
  return NULL;
}

static void *fill_lane(void *arg) {
  for (uint64_t i = 0; i < 256; i++) {
    lagscope_event e = event_with(i, NULL);
    CHECK_EQ_INT(lagscope__bus_publish(arg, &e), 0);
  }
  return NULL;
}

static void test_busy_lane_does_not_starve_another(void) {
  lagscope__bus bus;
  CHECK_EQ_INT(lagscope__bus_init(&bus, 256), 0);
  /* Two threads started one after the other take consecutive tickets: two lanes. */
  pthread_t busy, other;
  pthread_create(&busy, NULL, fill_lane, &bus);
  pthread_join(busy, NULL);
  pthread_create(&other, NULL, publish_one, &bus);
  pthread_join(other, NULL);
  lagscope_event out;
  int position = -1;
  for (int taken = 0; lagscope__bus_take(&bus, &out); taken++)
    if (out.as.hang_began.hang_id == 999) position = taken;
  CHECK(position >= 0);
  CHECK(position <= 64); /* behind at most two bursts of the busy lane, not 256 events */
  lagscope__bus_destroy(&bus);
}

/* A publish to a consumer going to sleep wakes it. Each side does a store then a load: the
 * publisher commits its slot and reads consumer_sleeping, the consumer sets consumer_sleeping
 * and re-checks the lanes; without a full fence between the two the processor may let the load
 * pass the store (x86's store buffer), both miss the other's store, and the event waits for
 * the consumer's timed wait (late, never lost). Each trial starts both at once from one flag,
 * each after its own short, varying spin, so that the publish meets the consumer on its way
 * into bus_wait again and again; the test measures each event's delivery. */
#ifdef LAGSCOPE_TEST_UNDER_TSAN
#define WAKE_TRIALS 20000 /* each turn of the spins costs more */
#else
#define WAKE_TRIALS 200000 /* at most */
#endif
#define WAKE_BUDGET_NS 20000000000u    /* or 20 s of them, on a loaded machine */
#define WAKE_TIMED_WAIT_NS 1000000000u /* the consumer's timed wait: 1 s */
#define WAKE_LATE_NS 500000000u        /* an event this late waited for the timed wait */

static lagscope__bus wake_bus;
static _Atomic uint64_t wake_go, wake_done; /* the trial started, the trial delivered */
static uint64_t wake_worst_ns, wake_late, wake_trials_run;

/* Spins while the flag is below `until` (yielding now and then: the other side may need this
 * core), then a few more turns, varying with the seed. F */
static void spin_until(_Atomic uint64_t *flag, uint64_t until, uint32_t *seed) {
  for (uint32_t spins = 1; atomic_load_explicit(flag, memory_order_acquire) < until; spins++)
    if (spins % 4096 == 0) sched_yield();
  *seed = *seed * 1103515245u + 12345u;
  for (volatile uint32_t spin = (*seed >> 16) % 64; spin > 0; spin--) {}
}

static void *wake_consumer(void *arg) {
  uint32_t seed = (uint32_t)(uintptr_t)arg;
  for (uint64_t trial = 1; trial <= WAKE_TRIALS; trial++) {
    spin_until(&wake_go, trial, &seed);
    if (atomic_load_explicit(&wake_go, memory_order_acquire) == UINT64_MAX) break; /* budget */
    lagscope_event out;
    do lagscope__bus_wait(&wake_bus, lagscope__now_ns() + WAKE_TIMED_WAIT_NS);
    while (!lagscope__bus_take(&wake_bus, &out));
    uint64_t latency = lagscope__now_ns() - out.as.hang_began.hang_id;
    if (latency > wake_worst_ns) wake_worst_ns = latency;
    if (latency >= WAKE_LATE_NS) wake_late++;
    wake_trials_run = trial;
    /* One late event is enough: the rest would each cost a timed wait. */
    atomic_store_explicit(&wake_done, wake_late > 0 ? WAKE_TRIALS : trial, memory_order_release);
    if (wake_late > 0) break;
  }
  return NULL;
}

static void test_wake_never_missed(void) {
  CHECK_EQ_INT(lagscope__bus_init(&wake_bus, 16), 0);
  pthread_t consumer;
  pthread_create(&consumer, NULL, wake_consumer, (void *)(uintptr_t)7);
  uint32_t seed = 1;
  uint64_t end = lagscope__now_ns() + WAKE_BUDGET_NS;
  for (uint64_t trial = 1; trial <= WAKE_TRIALS; trial++) {
    spin_until(&wake_done, trial - 1, &seed);
    if (atomic_load_explicit(&wake_done, memory_order_acquire) == WAKE_TRIALS) break;
    if (lagscope__now_ns() >= end) { /* the consumer waits for a trial that will not come */
      atomic_store_explicit(&wake_go, UINT64_MAX, memory_order_release);
      break;
    }
    atomic_store_explicit(&wake_go, trial, memory_order_release);
    spin_until(&wake_go, trial, &seed); /* the varying spin alone */
    lagscope_event e = event_with(lagscope__now_ns(), NULL);
    CHECK_EQ_INT(lagscope__bus_publish(&wake_bus, &e), 0);
  }
  pthread_join(consumer, NULL);
  printf("worst delivery of a single event to a consumer going to sleep: %.3f ms (%llu trials)\n",
         (double)wake_worst_ns / 1e6, (unsigned long long)wake_trials_run);
  CHECK_MSG(wake_late == 0,
            "an event waited %.0f ms, for the consumer's timed wait (%u ms): a wake-up was missed",
            (double)wake_worst_ns / 1e6, WAKE_TIMED_WAIT_NS / 1000000u);
  lagscope__bus_destroy(&wake_bus);
}

static const test_case cases[] = {
    TEST_CASE(ordering),
    TEST_CASE(drops),
    TEST_CASE(refcounts),
    TEST_CASE(many_publishers),
    TEST_CASE(more_publishers_than_lanes),
    TEST_CASE(queue_keeps_sequences),
    TEST_CASE(busy_lane_does_not_starve_another),
    TEST_CASE(wake_never_missed),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }

