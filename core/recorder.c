/*
 * The recorder thread (lagscope-rec): the monitor's slow side. It drains the watch ring
 * (core/report/watch_ring.c), which the watch thread (core/monitor.c) fills without ever
 * waiting for it, and does what takes time: every thread captured when a hang begins, symbols,
 * the verdict, reports written with fsync, usage readings and the metrics event, the viewer's
 * "capture now". Events about hangs are published here, in the ring's order.
 *
 * Contents
 *   1. state
 *   2. hangs, hitches and metrics, from the ring's items
 *   3. the thread and its life
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_MS 1000000u
/* The watch thread's items waiting for the recorder: 64 (~100 KiB) hold 640 ms of samples
 * at 10 ms before thinning starts, and more than a second after. */
#define RING_ITEMS 64
#define HANG_SAMPLE_EVENT_NS (100u * NS_PER_MS) /* the stream's live stack, at most this often */
/* A hang's report is written at its start and again while it lasts, so that a kill (by the
 * user, a harness, iOS's watchdog, the OOM killer) leaves it on disk up to the last write: each
 * second, or less often when writes are slow, so that they take at most a tenth of the
 * recorder's time (tests/bench/bench_report_save). */
#define REPORT_SAVE_EVERY_NS (1000ull * NS_PER_MS)
#define REPORT_SAVE_COST_SHARE 10
/* PSS (Linux: smaps_rollup walks every mapping; measured 2026-11: 0.8 ms with 500 of them) at
 * most this often; RSS, from statm, at every sample. Threads' names are read afresh every
 * DETAIL_INTERVAL_NS. */
#define PSS_INTERVAL_NS (60000ull * NS_PER_MS)
#define DETAIL_INTERVAL_NS (10000ull * NS_PER_MS)
#define IDLE_WAIT_NS (1000ull * NS_PER_MS) /* a look at stop and capture requests, at least */

/* ---- 1. state ------------------------------------------------------------------------------ */

struct lagscope__recorder {
  const lagscope_config *config;
  lagscope__dispatcher *dispatcher;
  lagscope__watch_ring ring; /* filled by the watch thread */
  lagscope__wakeup *wakeup;  /* an item came, a capture request, the stop */
  lagscope__thread *thread;
  _Atomic int stopping;
  _Atomic uint64_t hang_suspended_ns; /* the watch thread's: the open hang's stopped time */
  _Atomic int metrics_pending; /* a metrics item not yet published: the next tick waits */
  _Atomic uint64_t hangs;
  _Atomic int hang_in_progress;

  /* Recorder thread only. */
  lagscope__hang_recorder *hang_recorder;
  lagscope__usage readings[2];
  int usage_current;
  char last_usage_error[256];
  int last_usage_error_detail; /* found by a read with detail, which a lighter one cannot clear */
  uint64_t pss_due_ns, detail_due_ns;
  lagscope_metrics last_metrics; /* the context a hang's report calls "before" */
  int have_last_metrics;
  int hang_active, hang_startup;
  uint64_t hang_id, hang_start_ns;
  uint64_t hang_thinned; /* the open hang's samples thinned */
  uint64_t next_hang_sample_event_ns;
  uint64_t next_report_save_ns;

  /* The viewer's requests to capture every thread now (one at a time per process). */
  pthread_mutex_t capture_serial; /* one request at a time */
  pthread_mutex_t capture_lock;   /* the mailbox below */
  lagscope__wakeup *capture_done;
  _Atomic int capture_requested;
  int capture_answered;
  char *capture_result;
};

/* The latest metrics, kept past stop so that a host can still read them. */
static pthread_mutex_t latest_lock = PTHREAD_MUTEX_INITIALIZER;
static lagscope_metrics latest_metrics;
static int have_latest_metrics;

/* ---- 2. hangs, hitches and metrics ------------------------------------------------------------ */

static uint64_t hang_duration(lagscope__recorder *r, uint64_t now) {
  uint64_t length = now > r->hang_start_ns ? now - r->hang_start_ns : 0;
  uint64_t stopped = atomic_load_explicit(&r->hang_suspended_ns, memory_order_relaxed);
  return length > stopped ? length - stopped : 0;
}

/* The hang's report as it stands, its duration so far. The next write is a second after the
 * one planned (no drift), or later when this one was slow. first: the hang's first. A */
static void save_hang_report(lagscope__recorder *r, uint64_t now, int first) {
  uint64_t cost = lagscope__hang_recorder_save(r->hang_recorder, hang_duration(r, now));
  uint64_t planned = r->next_report_save_ns;
  uint64_t next = !first && planned + REPORT_SAVE_EVERY_NS > now ? planned + REPORT_SAVE_EVERY_NS
                                                                 : now + REPORT_SAVE_EVERY_NS;
  uint64_t slow = now + cost * REPORT_SAVE_COST_SHARE;
  r->next_report_save_ns = slow > next ? slow : next;
}

/* The hang's latest sample, for the stream. A */
static void publish_hang_sample(lagscope__recorder *r, uint64_t now) {
  r->next_hang_sample_event_ns = now + HANG_SAMPLE_EVENT_NS;
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_SAMPLE};
  e.payload.stack_json =
      lagscope__hang_recorder_latest_stack(r->hang_recorder, &e.as.hang_sample.sample_count);
  if (e.payload.stack_json == NULL) return;
  e.as.hang_sample.hang_id = r->hang_id;
  e.as.hang_sample.elapsed_ns = now - r->hang_start_ns;
  lagscope__publish(&e);
}

/* Published first, so that the stream shows the hang before its stacks are gathered; then
 * every thread captured, and the report written (on disk before anything else can go
 * wrong). A */
static void hang_began(lagscope__recorder *r, const lagscope__watch_item *item) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_BEGAN};
  e.as.hang_began.hang_id = r->hang_id = item->hang_id;
  e.as.hang_began.start_ns = r->hang_start_ns = item->start_ns;
  e.as.hang_began.start_wall_ms = item->wall_ms;
  e.as.hang_began.threshold_ms = r->config->hang_threshold_ms;
  e.as.hang_began.startup = r->hang_startup = item->startup;
  r->hang_active = 1;
  r->hang_thinned = 0;
  atomic_fetch_add_explicit(&r->hangs, 1, memory_order_relaxed);
  atomic_store_explicit(&r->hang_in_progress, 1, memory_order_relaxed);
  lagscope__publish(&e);
  if (r->hang_recorder == NULL) return;
  lagscope__hang_recorder_begin(r->hang_recorder, item->hang_id, item->start_ns, item->wall_ms,
                                item->startup, r->have_last_metrics ? &r->last_metrics : NULL,
                                &r->readings[r->usage_current]);
  save_hang_report(r, lagscope__now_ns(), 1);
}

/* Samples the watch thread left out while the ring filled, said once per hang in the log (the
 * report's samples.thinned counts them): no error, the hang is still recorded. A */
static void say_thinned(lagscope__recorder *r) {
  if (r->hang_thinned == 0) return;
  lagscope__log("hang %llu: %llu samples of the main thread thinned: the recorder fell behind "
                "(its report's samples.thinned)",
                (unsigned long long)r->hang_id, (unsigned long long)r->hang_thinned);
}

static void hang_ended(lagscope__recorder *r, uint64_t duration_ns, uint64_t end_ns) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_ENDED};
  e.as.hang_ended.hang_id = r->hang_id;
  e.as.hang_ended.start_ns = r->hang_start_ns;
  e.as.hang_ended.duration_ns = duration_ns;
  e.as.hang_ended.startup = r->hang_startup;
  r->hang_active = 0;
  atomic_store_explicit(&r->hang_in_progress, 0, memory_order_relaxed);
  if (r->hang_recorder != NULL)
    e.payload.report = lagscope__hang_recorder_end(r->hang_recorder, duration_ns, end_ns);
  /* Idle: the main thread waited in its own loop, which did not run the ping (a modal loop).
   * Reported, and by default not a hang. */
  int idle = e.payload.report != NULL &&
             strcmp(lagscope__hang_report_kind(e.payload.report), "idle") == 0;
  e.as.hang_ended.counted = !idle || r->config->hang_count_idle;
  if (!e.as.hang_ended.counted) atomic_fetch_sub_explicit(&r->hangs, 1, memory_order_relaxed);
  say_thinned(r);
  lagscope__publish(&e);
}

/* A hitch of hitch_report_ms or more (the watch thread judged), with the samples taken while
 * the main thread was late. A */
static void hitch(lagscope__recorder *r, const lagscope__watch_item *item) {
  if (r->hang_recorder == NULL) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_HITCH};
  e.as.hitch.start_ns = item->start_ns;
  e.as.hitch.duration_ns = item->duration_ns;
  e.payload.stack_json =
      lagscope__hang_recorder_hitch(r->hang_recorder, item->start_ns, item->duration_ns,
                                    &e.as.hitch.sample_count, &e.as.hitch.cause_json,
                                    &e.as.hitch.function);
  if (e.payload.stack_json != NULL) lagscope__publish(&e);
}

/* Reads the OS's figures; reports a failure once until it changes or goes away. PSS, which
 * costs the most to read, only every PSS_INTERVAL_NS; between, the last one is carried. A */
static int read_usage(lagscope__recorder *r, lagscope__usage *out,
                      const lagscope__usage *previous) {
  char why[256] = "";
  uint64_t now = lagscope__now_ns();
  int with_pss = previous == NULL || now >= r->pss_due_ns;
  if (with_pss) r->pss_due_ns = now + PSS_INTERVAL_NS;
  /* A thread that names itself after its first sample shows its new name within
   * DETAIL_INTERVAL_NS. */
  int with_detail = previous == NULL || now >= r->detail_due_ns;
  if (with_detail) r->detail_due_ns = now + DETAIL_INTERVAL_NS;
  unsigned what = (with_pss ? LAGSCOPE__USAGE_PSS : 0u) | (with_detail ? LAGSCOPE__USAGE_DETAIL : 0u);
  int rc = lagscope__usage_read(out, previous, what, why, sizeof(why));
  if (!with_pss) out->pss_bytes = previous->pss_bytes;
  if (rc == LAGSCOPE_OK) {
    /* A fault only a read with detail sees (a thread's stat) is gone only when one says so:
     * not said again at every such read. */
    if (with_detail || !r->last_usage_error_detail) r->last_usage_error[0] = '\0';
  } else if (strcmp(why, r->last_usage_error) != 0) {
    snprintf(r->last_usage_error, sizeof(r->last_usage_error), "%s", why);
    r->last_usage_error_detail = with_detail;
    lagscope__publish_error(rc, "sampler: %s", why);
  }
  return rc;
}

/* The watch thread's figures (frames, the watchdog's), with the usage read now. A */
static void publish_metrics(lagscope__recorder *r, const lagscope_metrics *watched) {
  lagscope_metrics *m = lagscope__payload_new(sizeof(*m), NULL);
  if (m == NULL) return;
  *m = *watched;
  lagscope__usage *previous = &r->readings[r->usage_current];
  lagscope__usage *current = &r->readings[1 - r->usage_current];
  if (read_usage(r, current, previous) == LAGSCOPE_OK || current->threads_len > 0) {
    int32_t own[LAGSCOPE__OWN_THREADS_MAX];
    size_t own_len = lagscope__thread_own_ids(own, LAGSCOPE__OWN_THREADS_MAX);
    lagscope__usage_compute(previous, current, own, own_len, m);
    r->usage_current = 1 - r->usage_current;
  }
  m->hangs = atomic_load_explicit(&r->hangs, memory_order_relaxed);
  m->hang_in_progress = atomic_load_explicit(&r->hang_in_progress, memory_order_relaxed);
  m->events_published = lagscope__bus_published(lagscope__dispatcher_bus(r->dispatcher));
  m->events_dropped = lagscope__dispatcher_dropped(r->dispatcher);
  m->monitor_memory_bytes = lagscope__memory_in_use();
  if (m->hang_in_progress && r->hang_recorder != NULL)
    lagscope__hang_recorder_during(r->hang_recorder, m);
  else
    r->last_metrics = *m, r->have_last_metrics = 1;
  lagscope__hang_recorder_retry(r->hang_recorder);
  lagscope__hang_recorder_tidy(r->hang_recorder, lagscope__now_ns());
  pthread_mutex_lock(&latest_lock);
  latest_metrics = *m;
  have_latest_metrics = 1;
  pthread_mutex_unlock(&latest_lock);
  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS};
  e.payload.metrics = m;
  lagscope__publish(&e);
}

int lagscope__recorder_metrics_waiting(lagscope__recorder *r) {
  return atomic_load_explicit(&r->metrics_pending, memory_order_acquire);
}

void lagscope__recorder_metrics_sent(lagscope__recorder *r) {
  atomic_store_explicit(&r->metrics_pending, 1, memory_order_release);
}

static void publish_blind(const lagscope__watch_item *item) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_MONITOR_BLIND};
  e.as.monitor_blind.start_ns = item->start_ns;
  e.as.monitor_blind.duration_ns = item->duration_ns;
  e.as.monitor_blind.busy_ns = item->busy_ns;
  lagscope__publish(&e);
}

/* Items the full ring refused (the recorder stuck for long): said, never silent; the watch
 * thread tells their hangs late, or their time as a blind spell (core/monitor.c). A */
static void say_lost(uint32_t lost) {
  if (lost == 0) return;
  lagscope__publish_error(LAGSCOPE_ELIMIT, "the recorder fell behind: %u of the watch thread's "
                          "items (hang starts or ends, hitches, metrics) were refused; their "
                          "hangs are told late, or their time as a blind spell", lost);
}

/* One item of the ring, in order. A */
static void handle(lagscope__recorder *r, const lagscope__watch_item *item) {
  lagscope__hang_recorder *h = r->hang_recorder;
  say_lost(item->lost);
  if (r->hang_active) r->hang_thinned += item->thinned;
  if (h != NULL && r->hang_active && item->thinned > 0)
    lagscope__hang_recorder_add_sample(h, NULL, 0, item->thinned);
  switch (item->kind) {
  case LAGSCOPE__WATCH_EARLY:
    if (h != NULL) lagscope__hang_recorder_add_early(h, &item->u.stack, item->rc);
    break;
  case LAGSCOPE__WATCH_FORGET_EARLY:
    if (h != NULL) lagscope__hang_recorder_forget_early(h);
    break;
  case LAGSCOPE__WATCH_BEGAN: hang_began(r, item); break;
  case LAGSCOPE__WATCH_SAMPLE:
    if (h != NULL) lagscope__hang_recorder_add_sample(h, &item->u.stack, item->rc, 0);
    break;
  case LAGSCOPE__WATCH_ENDED: hang_ended(r, item->duration_ns, item->end_ns); break;
  case LAGSCOPE__WATCH_HITCH: hitch(r, item); break;
  case LAGSCOPE__WATCH_METRICS:
    publish_metrics(r, &item->u.metrics);
    atomic_store_explicit(&r->metrics_pending, 0, memory_order_release);
    break;
  case LAGSCOPE__WATCH_BLIND: publish_blind(item); break;
  }
}

/* While a hang lasts: its live stack for the stream, its report on disk again. A */
static void hang_upkeep(lagscope__recorder *r, uint64_t now) {
  if (!r->hang_active || r->hang_recorder == NULL) return;
  if (now >= r->next_hang_sample_event_ns) publish_hang_sample(r, now);
  if (now >= r->next_report_save_ns) save_hang_report(r, now, 0);
}

/* The viewer's "Capture now". A, L (the mailbox's) */
static void serve_capture_request(lagscope__recorder *r) {
  if (!atomic_load_explicit(&r->capture_requested, memory_order_acquire)) return;
  char *json = NULL;
  int rc = r->hang_recorder != NULL
               ? lagscope__hang_recorder_capture_now(r->hang_recorder,
                                                     &r->readings[r->usage_current], &json)
               : LAGSCOPE_ENOMEM;
  pthread_mutex_lock(&r->capture_lock);
  if (atomic_load(&r->capture_requested) && !r->capture_answered) {
    r->capture_result = rc == LAGSCOPE_OK ? json : NULL;
    json = NULL;
    r->capture_answered = 1;
    atomic_store(&r->capture_requested, 0);
    lagscope__wakeup_post(r->capture_done);
  }
  pthread_mutex_unlock(&r->capture_lock);
  lagscope__dealloc(json); /* nobody waits for it any more */
}

int lagscope__recorder_capture_now(lagscope__recorder *r, char **json, uint64_t timeout_ns) {
  *json = NULL;
  if (atomic_load(&r->stopping)) return LAGSCOPE_ENOTRUNNING;
  pthread_mutex_lock(&r->capture_serial);
  pthread_mutex_lock(&r->capture_lock);
  r->capture_answered = 0;
  r->capture_result = NULL;
  atomic_store_explicit(&r->capture_requested, 1, memory_order_release);
  pthread_mutex_unlock(&r->capture_lock);
  lagscope__wakeup_post(r->wakeup);
  /* A post left over from a request that timed out may wake us early: look, and wait on. */
  uint64_t deadline = lagscope__now_ns() + timeout_ns;
  int answered = 0;
  while (!answered && lagscope__now_ns() < deadline && !atomic_load(&r->stopping)) {
    lagscope__wakeup_wait_until(r->capture_done, deadline);
    pthread_mutex_lock(&r->capture_lock);
    answered = r->capture_answered;
    pthread_mutex_unlock(&r->capture_lock);
  }
  pthread_mutex_lock(&r->capture_lock);
  answered = r->capture_answered;
  *json = r->capture_result;
  r->capture_result = NULL;
  atomic_store(&r->capture_requested, 0);
  pthread_mutex_unlock(&r->capture_lock);
  pthread_mutex_unlock(&r->capture_serial);
  if (!answered) return LAGSCOPE_ETIMEDOUT;
  return *json != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
}

/* ---- 3. the thread and its life ------------------------------------------------------------ */

/* Every item waiting, in order; 1 if there was one. A */
static int drain(lagscope__recorder *r) {
  lagscope__watch_item *item;
  int any = 0;
  while ((item = lagscope__watch_ring_peek(&r->ring)) != NULL) {
    handle(r, item);
    lagscope__watch_ring_pop(&r->ring);
    any = 1;
  }
  return any;
}

static uint64_t next_due(const lagscope__recorder *r, uint64_t now) {
  uint64_t due = now + IDLE_WAIT_NS;
  if (!r->hang_active) return due;
  if (r->next_hang_sample_event_ns < due) due = r->next_hang_sample_event_ns;
  return r->next_report_save_ns < due ? r->next_report_save_ns : due;
}

static void recorder_main(void *arg) {
  lagscope__recorder *r = arg;
  read_usage(r, &r->readings[r->usage_current], NULL); /* the baseline for CPU deltas */
  r->hang_recorder = lagscope__hang_recorder_new(r->config);
  if (r->hang_recorder != NULL) lagscope__hang_recorder_recover(r->hang_recorder);
  for (;;) {
    /* Read before the drain: the watch thread has been joined by then, its last items in. */
    int stopping = atomic_load_explicit(&r->stopping, memory_order_acquire);
    drain(r);
    serve_capture_request(r);
    hang_upkeep(r, lagscope__now_ns());
    if (stopping) break;
    lagscope__wakeup_wait_until(r->wakeup, next_due(r, lagscope__now_ns()));
  }
  /* A hang whose end the full ring lost is ended here. */
  uint64_t now = lagscope__now_ns();
  if (r->hang_active) hang_ended(r, hang_duration(r, now), now);
  lagscope__hang_recorder_free(r->hang_recorder);
  r->hang_recorder = NULL;
}

lagscope__watch_ring *lagscope__recorder_ring(lagscope__recorder *r) { return &r->ring; }

void lagscope__recorder_wake(lagscope__recorder *r) { lagscope__wakeup_post(r->wakeup); }

void lagscope__recorder_hang_suspended(lagscope__recorder *r, uint64_t ns) {
  atomic_store_explicit(&r->hang_suspended_ns, ns, memory_order_relaxed);
}

void lagscope__recorder_free(lagscope__recorder *r) {
  if (r == NULL) return;
  lagscope__watch_ring_free(&r->ring);
  lagscope__wakeup_free(r->wakeup);
  lagscope__wakeup_free(r->capture_done);
  pthread_mutex_destroy(&r->capture_serial);
  pthread_mutex_destroy(&r->capture_lock);
  lagscope__dealloc(r);
}

lagscope__recorder *lagscope__recorder_new(const lagscope_config *config,
                                           lagscope__dispatcher *dispatcher) {
  lagscope__recorder *r = lagscope__alloc(sizeof(*r));
  if (r == NULL) return NULL;
  r->config = config;
  r->dispatcher = dispatcher;
  pthread_mutex_init(&r->capture_serial, NULL);
  pthread_mutex_init(&r->capture_lock, NULL);
  r->wakeup = lagscope__wakeup_new();
  r->capture_done = lagscope__wakeup_new();
  if (r->wakeup == NULL || r->capture_done == NULL ||
      lagscope__watch_ring_init(&r->ring, RING_ITEMS) != LAGSCOPE_OK) {
    lagscope__recorder_free(r);
    return NULL;
  }
  return r;
}

int lagscope__recorder_start(lagscope__recorder *r) {
  return lagscope__thread_start(&r->thread, "lagscope-rec", recorder_main, r);
}

void lagscope__recorder_stop(lagscope__recorder *r) {
  if (r->thread == NULL) return;
  atomic_store_explicit(&r->stopping, 1, memory_order_release);
  lagscope__wakeup_post(r->wakeup);
  lagscope__thread_join(r->thread);
  r->thread = NULL;
}

int lagscope_metrics_latest(lagscope_metrics *out) {
  if (out == NULL) return LAGSCOPE_EINVAL;
  pthread_mutex_lock(&latest_lock);
  int rc = have_latest_metrics ? LAGSCOPE_OK : LAGSCOPE_ENODATA;
  if (have_latest_metrics) *out = latest_metrics;
  pthread_mutex_unlock(&latest_lock);
  return rc;
}
