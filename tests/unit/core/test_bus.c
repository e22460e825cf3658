/* The bus: order, drop counting, payload reference counts, many publishers at once. */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"

#include <pthread.h>
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

static const test_case cases[] = {
    TEST_CASE(ordering),
    TEST_CASE(drops),
    TEST_CASE(refcounts),
    TEST_CASE(many_publishers),
    TEST_CASE(more_publishers_than_lanes),
    TEST_CASE(queue_keeps_sequences),
    TEST_CASE(busy_lane_does_not_starve_another),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }

