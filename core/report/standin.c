/*
 * The stand-in sampler: samples the main thread while the monitor does slow work during a hang
 * (a report's symbols read and written with fsync), so that the samples cover the whole hang.
 * The first symbol lookups of a large program can take seconds (libdw indexing its DWARF), and
 * a report is written each second: without a stand-in, the samples of a hang stopped there (the
 * demo under TSan: its first hang sampled to 257 ms of 581). One thread, parked between slow
 * works, started at the first; it captures into buffers of its own, which the recorder takes
 * once it is parked again, so that nothing of the recorder's is shared. Captures stay
 * serialised: the monitor captures nothing between lagscope__standin_start and _stop.
 * lagscope's own threads only wait on its lock, never the app's.
 */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

enum standin_want { STANDIN_PARK, STANDIN_SAMPLE, STANDIN_QUIT };

struct lagscope__standin {
  pthread_mutex_t lock;
  pthread_cond_t changed; /* want or busy changed */
  _Atomic int want;       /* enum standin_want: the monitor's, written under lock */
  int busy;               /* the stand-in is not parked: it may be capturing */
  lagscope__wakeup *wake; /* cuts its wait for the next sample short */
  lagscope__thread *thread;
  uint64_t interval_ns;
  uint64_t timeout_ns;
  /* Its own while busy; the monitor's once it is parked again. */
  lagscope__stack *samples;
  int *results; /* each sample's capture result */
  uint32_t count, capacity;
  uint32_t dropped; /* samples due while it was full */
};

/* One sample into the next slot, or none when full. Stand-in thread, busy. */
static void take_sample(lagscope__standin *s) {
  if (s->count == s->capacity) {
    s->dropped++;
    return;
  }
  lagscope__stack *out = &s->samples[s->count];
  s->results[s->count] = lagscope__capture_stack(lagscope__main_thread_watched(), out, s->timeout_ns);
  s->count++;
}

/* Waits until the next sample is due (every interval from the start, not from the last
 * capture's end), or less when told to stop; 1 when it should sample. Lock held. */
static int wait_interval(lagscope__standin *s, uint64_t *next_ns) {
  uint64_t now = lagscope__now_ns();
  *next_ns = *next_ns == 0 ? now + s->interval_ns : *next_ns + s->interval_ns;
  if (*next_ns < now) *next_ns = now; /* behind (a slow capture): at once */
  pthread_mutex_unlock(&s->lock);
  while (lagscope__wakeup_wait_until(s->wake, *next_ns) &&
         atomic_load(&s->want) == STANDIN_SAMPLE) {
  } /* a post left from an earlier stop: not this one's */
  pthread_mutex_lock(&s->lock);
  return s->want == STANDIN_SAMPLE;
}

static void standin_main(void *arg) {
  lagscope__standin *s = arg;
  uint64_t next_ns = 0; /* the next sample's time; 0: an interval after the start */
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (s->want == STANDIN_PARK) {
      s->busy = 0;
      next_ns = 0;
      pthread_cond_broadcast(&s->changed);
      pthread_cond_wait(&s->changed, &s->lock);
    }
    if (s->want == STANDIN_QUIT) break;
    s->busy = 1;
    if (!wait_interval(s, &next_ns)) continue;
    pthread_mutex_unlock(&s->lock);
    take_sample(s);
    pthread_mutex_lock(&s->lock);
  }
  s->busy = 0;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}

lagscope__standin *lagscope__standin_new(uint32_t capacity, uint64_t interval_ns,
                                         uint64_t timeout_ns) {
  lagscope__standin *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return NULL;
  memset(s, 0, sizeof(*s));
  s->interval_ns = interval_ns;
  s->timeout_ns = timeout_ns;
  s->capacity = capacity;
  s->samples = lagscope__alloc(capacity * sizeof(*s->samples));
  s->results = lagscope__alloc(capacity * sizeof(*s->results));
  s->wake = lagscope__wakeup_new();
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->changed, NULL);
  if (s->samples == NULL || s->results == NULL || s->wake == NULL ||
      lagscope__thread_start(&s->thread, "lagscope-stand", standin_main, s) != LAGSCOPE_OK) {
    s->thread = NULL;
    lagscope__standin_free(s);
    return NULL;
  }
  return s;
}

void lagscope__standin_free(lagscope__standin *s) {
  if (s == NULL) return;
  if (s->thread != NULL) {
    pthread_mutex_lock(&s->lock);
    atomic_store(&s->want, STANDIN_QUIT);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    lagscope__wakeup_post(s->wake);
    lagscope__thread_join(s->thread);
  }
  pthread_cond_destroy(&s->changed);
  pthread_mutex_destroy(&s->lock);
  lagscope__wakeup_free(s->wake);
  lagscope__dealloc(s->samples);
  lagscope__dealloc(s->results);
  lagscope__dealloc(s);
}

void lagscope__standin_start(lagscope__standin *s) {
  pthread_mutex_lock(&s->lock);
  s->count = s->dropped = 0;
  atomic_store(&s->want, STANDIN_SAMPLE);
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}

uint32_t lagscope__standin_stop(lagscope__standin *s, const lagscope__stack **samples,
                                const int **results, uint32_t *dropped) {
  pthread_mutex_lock(&s->lock);
  atomic_store(&s->want, STANDIN_PARK);
  pthread_mutex_unlock(&s->lock);
  lagscope__wakeup_post(s->wake); /* out of its wait for the next sample */
  pthread_mutex_lock(&s->lock);
  while (s->busy) pthread_cond_wait(&s->changed, &s->lock); /* a capture under way ends */
  uint32_t count = s->count;
  *dropped = s->dropped;
  pthread_mutex_unlock(&s->lock);
  *samples = s->samples;
  *results = s->results;
  return count;
}

/* ---- the switch, as the hang recorder throws it ---- */

/* The stand-in keeps this many samples of one slow work (3 s at 10 ms; later ones are counted
 * as dropped): the first symbol lookups of a large program are the longest. It and its
 * buffers (~1 KiB a sample) go when no hang has needed them for the recorder's keep_ns. */
#define STANDIN_SAMPLES 300

void lagscope__standin_switch_on(lagscope__standin_switch *w, uint64_t interval_ns,
                                 uint64_t timeout_ns) {
  if (w->on) return;
  if (w->standin == NULL) w->standin = lagscope__standin_new(STANDIN_SAMPLES, interval_ns, timeout_ns);
  if (w->standin == NULL) return; /* the samples pause meanwhile, as they did */
  lagscope__standin_start(w->standin);
  w->on = 1;
}

uint32_t lagscope__standin_switch_off(lagscope__standin_switch *w, const lagscope__stack **samples,
                                      const int **results, uint32_t *dropped) {
  *samples = NULL;
  *results = NULL;
  *dropped = 0;
  if (!w->on) return 0;
  w->on = 0;
  w->used_ns = lagscope__now_ns();
  return lagscope__standin_stop(w->standin, samples, results, dropped);
}

void lagscope__standin_switch_tidy(lagscope__standin_switch *w, uint64_t now_ns, uint64_t keep_ns) {
  uint64_t idle = now_ns > w->used_ns ? now_ns - w->used_ns : 0; /* a use after now was read */
  if (w->standin == NULL || idle < keep_ns) return;
  lagscope__standin_free(w->standin);
  w->standin = NULL;
}

void lagscope__standin_switch_free(lagscope__standin_switch *w) {
  lagscope__standin_free(w->standin);
  w->standin = NULL;
}
