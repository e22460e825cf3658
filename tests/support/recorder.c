#include "recorder.h"

#include <string.h>

void recorder_init(recorder *r) {
  memset(r, 0, sizeof(*r));
  pthread_mutex_init(&r->lock, NULL);
}

void recorder_destroy(recorder *r) { pthread_mutex_destroy(&r->lock); }

void recorder_on_event(const lagscope_event *event, void *user) {
  recorder *r = user;
  pthread_mutex_lock(&r->lock);
  if (r->counts[LAGSCOPE_EVENT_HANG_BEGAN] + r->counts[LAGSCOPE_EVENT_METRICS] +
              r->counts[LAGSCOPE_EVENT_HANG_ENDED] + r->counts[LAGSCOPE_EVENT_ERROR] > 0 &&
      event->sequence <= r->last_sequence)
    r->out_of_order++;
  r->last_sequence = event->sequence;
  if (event->type > 0 && (int)event->type < RECORDER_TYPES) r->counts[event->type]++;
  if (event->type == LAGSCOPE_EVENT_HANG_BEGAN && r->began_len < RECORDER_HANGS_MAX)
    r->began[r->began_len++] = *event;
  if (event->type == LAGSCOPE_EVENT_HANG_ENDED && r->ended_len < RECORDER_HANGS_MAX)
    r->ended[r->ended_len++] = *event;
  if (event->type == LAGSCOPE_EVENT_METRICS) r->last_metrics = *event->payload.metrics;
  pthread_mutex_unlock(&r->lock);
}

int recorder_count(recorder *r, lagscope_event_type type) {
  if (type <= 0 || (int)type >= RECORDER_TYPES) return 0;
  pthread_mutex_lock(&r->lock);
  int n = r->counts[type];
  pthread_mutex_unlock(&r->lock);
  return n;
}
