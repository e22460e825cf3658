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
  CHECK_EQ_INT(atomic_load(&bus.dropped), 5);
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

/* 4 publishers, one consumer that waits when empty. Every event arrives exactly once, each
 * publisher's in its own order, and sequences strictly increase. */
#define PUBLISHERS 4
#define PER_PUBLISHER 200000

static lagscope__bus shared_bus;

static void *publisher(void *arg) {
  uint64_t who = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < PER_PUBLISHER;) {
    lagscope_event e = event_with(who << 32 | i, NULL);
    if (lagscope__bus_publish(&shared_bus, &e) == 0) i++; /* full: try again (test only) */
  }
  return NULL;
}

static void test_many_publishers(void) {
  CHECK_EQ_INT(lagscope__bus_init(&shared_bus, 1024), 0);
  pthread_t threads[PUBLISHERS];
  for (uintptr_t i = 0; i < PUBLISHERS; i++)
    pthread_create(&threads[i], NULL, publisher, (void *)i);
  uint64_t next[PUBLISHERS] = {0};
  uint64_t received = 0, last_sequence = 0;
  while (received < (uint64_t)PUBLISHERS * PER_PUBLISHER) {
    lagscope_event out;
    if (!lagscope__bus_take(&shared_bus, &out)) {
      lagscope__bus_wait(&shared_bus, lagscope__now_ns() + 1000000000u);
      continue;
    }
    uint64_t who = out.as.hang_began.hang_id >> 32, i = out.as.hang_began.hang_id & 0xffffffffu;
    CHECK(who < PUBLISHERS);
    CHECK_EQ_INT(i, next[who]);
    next[who]++;
    CHECK(received == 0 || out.sequence > last_sequence);
    last_sequence = out.sequence;
    received++;
  }
  for (int i = 0; i < PUBLISHERS; i++) pthread_join(threads[i], NULL);
  lagscope_event out;
  CHECK(!lagscope__bus_take(&shared_bus, &out));
  CHECK_EQ_INT(lagscope__bus_published(&shared_bus), (uint64_t)PUBLISHERS * PER_PUBLISHER);
  lagscope__bus_destroy(&shared_bus);
}

static const test_case cases[] = {
    TEST_CASE(ordering),
    TEST_CASE(drops),
    TEST_CASE(refcounts),
    TEST_CASE(many_publishers),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }

