/* Records the events a subscriber receives, so tests can await a condition with a bound. */
#ifndef LAGSCOPE_TEST_RECORDER_H
#define LAGSCOPE_TEST_RECORDER_H

#include "lagscope.h"

#include <pthread.h>

#define RECORDER_HANGS_MAX 64

/* One more than the event types, which LAGSCOPE_EVENT_TYPES numbers 1..their count
 * (core/base/names.c checks it): an array by type, index 0 unused. */
#define RECORDER_ONE_TYPE_(name, value, text) +1
enum { RECORDER_TYPES = 1 LAGSCOPE_EVENT_TYPES(RECORDER_ONE_TYPE_) };
#undef RECORDER_ONE_TYPE_

typedef struct recorder {
  pthread_mutex_t lock;
  int counts[RECORDER_TYPES]; /* by lagscope_event_type */
  lagscope_event began[RECORDER_HANGS_MAX], ended[RECORDER_HANGS_MAX];
  int began_len, ended_len;
  uint64_t last_sequence;
  int out_of_order;
  lagscope_metrics last_metrics;
} recorder;

void recorder_init(recorder *r);
void recorder_destroy(recorder *r);
void recorder_on_event(const lagscope_event *event, void *user); /* a lagscope_event_fn */
int recorder_count(recorder *r, lagscope_event_type type);

#endif
