/*
 * The running instance: lifecycle, the monitor thread, the dispatcher thread and the
 * subscribers, and the main thread's few calls.
 *
 * Contents
 *   1. state that outlives a start/stop (what the main thread writes into)
 *   2. main-thread calls: lagscope_frame, lagscope_heartbeat, the ping answer
 *   3. the instance and its logging/publishing helpers
 *   4. subscribers: one queue and one delivery thread each
 *   5. the dispatcher thread: bus -> every subscriber's queue
 *   6. the monitor thread: watchdog, frames, sampler
 *   7. lifecycle: start, stop, subscribe, unsubscribe, metrics
 */
#define _GNU_SOURCE
#include "internal.h"
#include "../web/web.h"
#if defined(__APPLE__)
#include "../hud/darwin/overlay.h"
#include "darwin/platform.h"
#endif

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_MS 1000000u
#define IDLE_WAIT_NS (10u * 1000u * NS_PER_MS) /* consumers are woken; this is a backstop */
#define LOG_LINE_MAX 512
#define HANG_SAMPLE_EVENT_NS (100u * NS_PER_MS) /* the stream's live stack, at most this often */
/* PSS (Linux: smaps_rollup walks every mapping, 0.8 ms with 500) at most this often; RSS, from
 * statm, at every sample. */
#define PSS_INTERVAL_NS (10000ull * NS_PER_MS)

/* ---- 1. state that outlives a start/stop ------------------------------------------------------
 * The main thread may run a ping that a host queue held past lagscope_stop, and it calls
 * lagscope_frame whether or not lagscope runs: what it touches is static, never freed. */

static lagscope__main_signals main_signals;
static lagscope__frame_ring frame_ring;
static uint64_t last_ping_seq; /* under lifecycle_lock; see lagscope__watchdog_init */

/* The latest metrics, kept past stop so that a host can still read them. */
static pthread_mutex_t latest_lock = PTHREAD_MUTEX_INITIALIZER;
static lagscope_metrics latest_metrics;
static int have_latest_metrics;

/* The thread whose calls prove the main thread alive: the one that started lagscope. A call
 * from another thread (a render thread's frame, a hook that runs the ping where it was posted,
 * as GLib's g_main_context_invoke does when the loop is not running) says nothing about it:
 * it is ignored, and the monitor reports the thread once. Each thread's id is read once and
 * kept, so that these calls stay free of system calls. */
static _Atomic int32_t watched_thread; /* 0 before the first start */
static _Atomic int32_t wrong_thread;   /* the last other thread that called; 0 once reported */
static _Thread_local int32_t own_thread;

static int on_watched_thread(void) {
  if (own_thread == 0) own_thread = lagscope__thread_id();
  int32_t watched = atomic_load_explicit(&watched_thread, memory_order_relaxed);
  if (watched == 0 || own_thread == watched) return 1;
  atomic_store_explicit(&wrong_thread, own_thread, memory_order_relaxed);
  return 0;
}

/* ---- 2. main-thread calls: a clock read and atomic stores ------------------------------------ */

void lagscope_frame(void) {
  if (!on_watched_thread()) return;
  uint64_t now = lagscope__now_ns();
  lagscope__frame_ring_push(&frame_ring, now);
  atomic_store_explicit(&main_signals.alive_ns, now, memory_order_release);
}

void lagscope_heartbeat(void) {
  if (!on_watched_thread()) return;
  atomic_store_explicit(&main_signals.alive_ns, lagscope__now_ns(), memory_order_release);
}

/* Idle: alive at begin (which ends a hang), owing nothing until end, alive again at end so
 * that the threshold counts from there. */
static void set_idle(int idle) {
  if (!on_watched_thread()) return;
  atomic_store_explicit(&main_signals.alive_ns, lagscope__now_ns(), memory_order_release);
  atomic_store_explicit(&main_signals.idle, idle, memory_order_release);
}

void lagscope_idle_begin(void) { set_idle(1); }
void lagscope_idle_end(void) { set_idle(0); }

/* Runs on the main thread through the host's post_main. arg is the ping's number. */
static void answer_ping(void *arg) {
  uint64_t seq = (uint64_t)(uintptr_t)arg;
  if (!on_watched_thread()) return; /* not an answer: the watchdog posts again once it is lost */
  uint64_t now = lagscope__now_ns();
  /* The time first, then the number: a monitor that sees the number sees its time. */
  atomic_store_explicit(&main_signals.answered_ns, now, memory_order_release);
  if (seq > atomic_load_explicit(&main_signals.answered_seq, memory_order_relaxed))
    atomic_store_explicit(&main_signals.answered_seq, seq, memory_order_release);
  atomic_store_explicit(&main_signals.alive_ns, now, memory_order_release);
}

/* ---- 3. the instance ---------------------------------------------------------------------- */

typedef struct subscriber {
  lagscope_subscription id;
  lagscope_event_fn fn;
  void *user;
  lagscope__bus queue;
  lagscope__thread *thread;
  _Atomic int stopping; /* deliver what is queued, then exit */
  _Atomic int discard;  /* unsubscribed: deliver nothing more */
  struct subscriber *next;
} subscriber;

typedef struct instance {
  lagscope_config config;
  lagscope__bus bus;
  lagscope__wakeup *monitor_wakeup;
  lagscope__thread *monitor_thread, *dispatcher_thread;
  _Atomic int monitor_stopping, dispatcher_stopping;

  pthread_mutex_t subscribers_lock; /* the list; held while the dispatcher fans out */
  subscriber *subscribers;
  lagscope_subscription next_subscription_id;
  _Atomic uint64_t subscriber_drops;

  /* Monitor thread only. */
  lagscope__watchdog watchdog;
  uint64_t queued_before_ns; /* the monitor's run-queue wait before its last sleep in a hang */
  lagscope__frame_meter frames;
  lagscope__process_sample samples[2];
  int sample_current;
  char last_sample_error[256];
  int last_sample_error_detail; /* found by a read with detail, which a lighter one cannot clear */
  uint64_t pss_due_ns;           /* the next sample reads PSS from then on */
  _Atomic uint64_t hangs;
  _Atomic int hang_in_progress;
  lagscope__hang_recorder *hang_recorder;
  /* Made, drawn and freed by the dispatcher thread; NULL with config.hud off. The main thread
   * only takes images from it. */
  _Atomic(lagscope__hud *) hud;
  /* The viewer's listener restart (dispatcher thread) against web_stop (stopping thread). */
  pthread_mutex_t web_lock;
  lagscope_metrics last_metrics; /* the context a hang's report calls "before" */
  int have_last_metrics;
  int wrong_thread_reported; /* ETHREAD said once per start (monitor thread) */
  uint64_t next_hang_sample_event_ns;
  uint64_t loop_note_seq;     /* the ping whose post noted the main thread's wait (0: none) */
  uint64_t loop_note_ns;      /* when it was posted */
  uint64_t next_loop_note_ns; /* the next look at the loop's wait */

  /* The viewer, and its requests to capture every thread now, served by the monitor thread
   * (one capture at a time per process). */
  lagscope__web *web;
  lagscope_subscription web_subscription;
  pthread_mutex_t capture_serial;  /* one request at a time */
  pthread_mutex_t capture_lock;    /* the mailbox below */
  lagscope__wakeup *capture_done;
  _Atomic int capture_requested;
  int capture_answered;
  char *capture_result;
} instance;

typedef enum lifecycle_state { STOPPED, RUNNING, STOPPING } lifecycle_state;

static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lifecycle_changed = PTHREAD_COND_INITIALIZER;
static _Atomic int lifecycle = STOPPED;
/* Set before lagscope's threads start and cleared after they are joined, so they may use it
 * without a lock. */
static instance *running;

static void log_to_stderr(const char *line, void *user) {
  (void)user;
  fprintf(stderr, "lagscope: %s\n", line);
}

static void log_line(const lagscope_config *config, const char *line) {
  if (config != NULL && config->log != NULL)
    config->log(line, config->log_user);
  else
    log_to_stderr(line, NULL);
}

void lagscope__log(const char *format, ...) {
  char line[LOG_LINE_MAX];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  log_line(running != NULL ? &running->config : NULL, line);
}

int lagscope__publish(const lagscope_event *event) {
  if (running == NULL) {
    lagscope_release(event->payload.any);
    return LAGSCOPE_ENOTRUNNING;
  }
  lagscope_event e = *event;
  e.time_ns = lagscope__now_ns();
  return lagscope__bus_publish(&running->bus, &e);
}

void lagscope__publish_error(int code, const char *format, ...) {
  char message[LOG_LINE_MAX];
  va_list args;
  va_start(args, format);
  int len = vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (len < 0) return;
  lagscope__log("%s", message);
  char *copy = lagscope__payload_text(message);
  if (copy == NULL) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_ERROR};
  e.as.error.code = code;
  e.payload.message = copy;
  lagscope__publish(&e);
}

/* ---- 4. subscribers -------------------------------------------------------------------------- */

/* The subscriber whose callback this thread is running, to refuse a self-unsubscribe. */
static _Thread_local subscriber *delivering_for;

static void subscriber_main(void *arg) {
  subscriber *s = arg;
  delivering_for = s;
  for (;;) {
    lagscope_event e;
    while (lagscope__bus_take(&s->queue, &e)) {
      if (!atomic_load_explicit(&s->discard, memory_order_acquire)) s->fn(&e, s->user);
      lagscope_release(e.payload.any);
    }
    if (atomic_load_explicit(&s->stopping, memory_order_acquire)) break;
    lagscope__bus_wait(&s->queue, lagscope__now_ns() + IDLE_WAIT_NS);
  }
  delivering_for = NULL;
}

static void subscriber_free(subscriber *s) {
  lagscope__bus_destroy(&s->queue);
  lagscope__dealloc(s);
}

/* Starts a subscriber and links it in. Caller holds lifecycle_lock. */
static int subscriber_add(instance *in, lagscope_event_fn fn, void *user,
                          lagscope_subscription *out) {
  subscriber *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return LAGSCOPE_ENOMEM;
  int rc = lagscope__bus_init(&s->queue, in->config.subscriber_capacity);
  if (rc != LAGSCOPE_OK) {
    lagscope__dealloc(s);
    return rc;
  }
  s->fn = fn;
  s->user = user;
  rc = lagscope__thread_start(&s->thread, "lagscope-sub", subscriber_main, s);
  if (rc != LAGSCOPE_OK) {
    subscriber_free(s);
    return rc;
  }
  pthread_mutex_lock(&in->subscribers_lock);
  s->id = ++in->next_subscription_id;
  s->next = in->subscribers;
  in->subscribers = s;
  pthread_mutex_unlock(&in->subscribers_lock);
  if (out != NULL) *out = s->id;
  return LAGSCOPE_OK;
}

/* Stops an unlinked subscriber; with discard, events still queued are not delivered. */
static void subscriber_stop(subscriber *s, int discard) {
  atomic_store_explicit(&s->discard, discard, memory_order_release);
  atomic_store_explicit(&s->stopping, 1, memory_order_release);
  lagscope__bus_wake(&s->queue);
  lagscope__thread_join(s->thread);
  subscriber_free(s);
}

/* ---- 5. the dispatcher thread --------------------------------------------------------------- */

static void fan_out(instance *in, const lagscope_event *e) {
  pthread_mutex_lock(&in->subscribers_lock);
  for (subscriber *s = in->subscribers; s != NULL; s = s->next) {
    lagscope_retain(e->payload.any);
    if (lagscope__bus_forward(&s->queue, e) != LAGSCOPE_OK)
      atomic_fetch_add_explicit(&in->subscriber_drops, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&in->subscribers_lock);
}

/* The HUD is made here, so that not even its buffers are drawn on the thread that started
 * lagscope. */
static lagscope__hud *make_hud(instance *in) {
  if (!in->config.hud) return NULL;
  lagscope__hud *hud = lagscope__hud_new(&in->config);
  if (hud == NULL)
    lagscope__publish_error(LAGSCOPE_ENOMEM, "the HUD could not be made: no memory for its "
                            "buffers; lagscope runs on without it");
  atomic_store_explicit(&in->hud, hud, memory_order_release);
  return hud;
}

/* Set from any thread (Darwin: the main thread, on return to the foreground); the dispatcher
 * restarts the viewer's listener when it next wakes (each metrics tick at the latest), since
 * the restart joins civetweb's threads: never on the main thread. */
static _Atomic int viewer_restart_wanted;

void lagscope__viewer_restart_soon(void) { atomic_store(&viewer_restart_wanted, 1); }

static void restart_viewer(instance *in) {
  if (!atomic_exchange(&viewer_restart_wanted, 0)) return;
  char why[256] = "";
  pthread_mutex_lock(&in->web_lock);
  int rc = in->web != NULL ? lagscope__web_restart(in->web, why, sizeof(why)) : LAGSCOPE_OK;
  pthread_mutex_unlock(&in->web_lock);
  if (rc != LAGSCOPE_OK) lagscope__publish_error(rc, "viewer not restarted: %s", why);
}

static void dispatcher_main(void *arg) {
  instance *in = arg;
  lagscope__hud *hud = make_hud(in);
  for (;;) {
    lagscope_event e;
    while (lagscope__bus_take(&in->bus, &e)) {
      fan_out(in, &e);
      if (hud != NULL && e.type == LAGSCOPE_EVENT_SERVER_STARTED)
        lagscope__hud_set_viewer_url(hud, e.payload.message);
      if (hud != NULL) lagscope__hud_on_event(hud, &e);
      lagscope_release(e.payload.any);
    }
    if (atomic_load_explicit(&in->dispatcher_stopping, memory_order_acquire)) break;
    restart_viewer(in);
    uint64_t now = lagscope__now_ns(), wake = now + IDLE_WAIT_NS;
    if (hud != NULL) {
      uint64_t hud_wake = lagscope__hud_tick(hud, now); /* redraws here, off the main thread */
      if (hud_wake < wake) wake = hud_wake;
    }
    lagscope__bus_wait(&in->bus, wake);
  }
}

/* ---- the platform: what Darwin does for the app that a Linux host does itself ---- */
#if defined(__APPLE__)
/* The main dispatch queue answers pings, a display link counts frames. */
static void platform_defaults(lagscope_config *c) {
  if (c->post_main == NULL) c->post_main = lagscope__platform_post_main;
}
/* The HUD on screen too: an overlay window shows lagscope_hud_take's images. */
static void platform_start(const lagscope_config *c) {
  lagscope__platform_start(c);
  if (c->hud) lagscope__overlay_start();
}
static void platform_stop(void) {
  lagscope__overlay_stop();
  lagscope__platform_stop();
}
static int app_in_background(void) { return lagscope__platform_in_background(); }
/* The display link measures the real rate (10 to 120 Hz under ProMotion): frames are judged
 * against it, not against config.refresh_hz. */
static void measured_refresh(lagscope__frame_meter *m) {
  lagscope__frame_meter_set_refresh_hz(m, lagscope__platform_refresh_hz());
}
#else
static void platform_defaults(lagscope_config *c) { (void)c; }
static void platform_start(const lagscope_config *c) { (void)c; }
static void platform_stop(void) {}
static int app_in_background(void) { return 0; }
static void measured_refresh(lagscope__frame_meter *m) { (void)m; }
#endif

/* ---- 6. the monitor thread -------------------------------------------------------------------- */

static void publish_hang_began(instance *in) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_BEGAN};
  uint64_t now = lagscope__now_ns();
  e.as.hang_began.hang_id = in->watchdog.hang_id;
  e.as.hang_began.start_ns = in->watchdog.hang_start_ns;
  e.as.hang_began.start_wall_ms =
      lagscope__wall_ms() - (int64_t)((now - in->watchdog.hang_start_ns) / NS_PER_MS);
  e.as.hang_began.threshold_ms = in->config.hang_threshold_ms;
  atomic_fetch_add_explicit(&in->hangs, 1, memory_order_relaxed);
  atomic_store_explicit(&in->hang_in_progress, 1, memory_order_relaxed);
  lagscope__publish(&e);
  /* Published first, so that the stream shows the hang before its stacks are gathered. */
  if (in->hang_recorder != NULL)
    lagscope__hang_recorder_begin(in->hang_recorder, e.as.hang_began.hang_id,
                                  e.as.hang_began.start_ns, e.as.hang_began.start_wall_ms,
                                  in->have_last_metrics ? &in->last_metrics : NULL,
                                  &in->samples[in->sample_current]);
}

static void publish_hang_ended(instance *in, uint64_t duration_ns) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_ENDED};
  e.as.hang_ended.hang_id = in->watchdog.hang_id;
  e.as.hang_ended.start_ns = in->watchdog.hang_start_ns;
  e.as.hang_ended.duration_ns = duration_ns;
  atomic_store_explicit(&in->hang_in_progress, 0, memory_order_relaxed);
  if (in->hang_recorder != NULL)
    e.payload.report = lagscope__hang_recorder_end(in->hang_recorder, duration_ns);
  /* Idle: the main thread waited in its own loop, which did not run the ping (a modal loop).
   * Reported, and by default not a hang. */
  int idle = e.payload.report != NULL &&
             strcmp(lagscope__hang_report_kind(e.payload.report), "idle") == 0;
  e.as.hang_ended.counted = !idle || in->config.hang_count_idle;
  if (!e.as.hang_ended.counted) atomic_fetch_sub_explicit(&in->hangs, 1, memory_order_relaxed);
  lagscope__publish(&e);
}

/* The main thread was late and answered before the threshold: a hitch when it lasted
 * hitch_report_ms, with the samples taken while it was late. */
static void publish_hitch(instance *in, const lagscope__watchdog_step *step) {
  uint64_t min_ns = (uint64_t)in->config.hitch_report_ms * NS_PER_MS;
  if (in->hang_recorder == NULL || min_ns == 0 || step->late_duration_ns < min_ns) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_HITCH};
  e.as.hitch.start_ns = step->late_since_ns;
  e.as.hitch.duration_ns = step->late_duration_ns;
  e.payload.stack_json =
      lagscope__hang_recorder_hitch(in->hang_recorder, step->late_since_ns,
                                    step->late_duration_ns, &e.as.hitch.sample_count,
                                    &e.as.hitch.cause_json, &e.as.hitch.function);
  if (e.payload.stack_json != NULL) lagscope__publish(&e);
}

static void publish_hang_sample(instance *in, uint64_t now) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_SAMPLE};
  e.payload.stack_json =
      lagscope__hang_recorder_latest_stack(in->hang_recorder, &e.as.hang_sample.sample_count);
  if (e.payload.stack_json == NULL) return;
  e.as.hang_sample.hang_id = in->watchdog.hang_id;
  e.as.hang_sample.elapsed_ns = now - in->watchdog.hang_start_ns;
  lagscope__publish(&e);
}

/* The viewer's "Capture now", on the monitor thread between two steps. Returns 1 if it
 * captured (slow work), 0 if nothing was asked. */
static int serve_capture_request(instance *in) {
  if (!atomic_load_explicit(&in->capture_requested, memory_order_acquire)) return 0;
  char *json = NULL;
  int rc = in->hang_recorder != NULL
               ? lagscope__hang_recorder_capture_now(in->hang_recorder,
                                                     &in->samples[in->sample_current], &json)
               : LAGSCOPE_ENOMEM;
  pthread_mutex_lock(&in->capture_lock);
  if (atomic_load(&in->capture_requested) && !in->capture_answered) {
    in->capture_result = rc == LAGSCOPE_OK ? json : NULL;
    json = NULL;
    in->capture_answered = 1;
    atomic_store(&in->capture_requested, 0);
    lagscope__wakeup_post(in->capture_done);
  }
  pthread_mutex_unlock(&in->capture_lock);
  lagscope_free(json); /* nobody waits for it any more */
  return 1;
}

/* From a web thread: asks the monitor to capture every thread, waits for the answer. */
static int capture_now(char **json, uint64_t timeout_ns) {
  instance *in = running; /* the web is stopped before the instance is freed */
  *json = NULL;
  if (in == NULL || atomic_load(&in->monitor_stopping)) return LAGSCOPE_ENOTRUNNING;
  pthread_mutex_lock(&in->capture_serial);
  pthread_mutex_lock(&in->capture_lock);
  in->capture_answered = 0;
  in->capture_result = NULL;
  atomic_store_explicit(&in->capture_requested, 1, memory_order_release);
  pthread_mutex_unlock(&in->capture_lock);
  lagscope__wakeup_post(in->monitor_wakeup);
  /* A post left over from a request that timed out may wake us early: look, and wait on. */
  uint64_t deadline = lagscope__now_ns() + timeout_ns;
  int answered = 0;
  while (!answered && lagscope__now_ns() < deadline && !atomic_load(&in->monitor_stopping)) {
    lagscope__wakeup_wait_until(in->capture_done, deadline);
    pthread_mutex_lock(&in->capture_lock);
    answered = in->capture_answered;
    pthread_mutex_unlock(&in->capture_lock);
  }
  pthread_mutex_lock(&in->capture_lock);
  answered = in->capture_answered;
  *json = in->capture_result;
  in->capture_result = NULL;
  atomic_store(&in->capture_requested, 0);
  pthread_mutex_unlock(&in->capture_lock);
  pthread_mutex_unlock(&in->capture_serial);
  if (!answered) return LAGSCOPE_ELIMIT;
  return *json != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
}

static void post_ping(instance *in, uint64_t now) {
  void *arg = (void *)(uintptr_t)in->watchdog.ping_seq;
  if (in->config.post_main(answer_ping, arg, in->config.post_main_user) == 0) return;
  lagscope__watchdog_post_failed(&in->watchdog, now);
  /* Said once, then every 100th time, so that a host whose queue is full is not flooded. */
  if (in->watchdog.post_failures % 100 == 1)
    lagscope__publish_error(LAGSCOPE_EPOST,
                            "post_main refused the ping (%u times so far); the watchdog "
                            "cannot see the main thread until it accepts",
                            in->watchdog.post_failures);
}

/* What the watchdog learnt about the host's hooks, said once (then every 100th time). */
static void report_hook_problems(instance *in, const lagscope__watchdog_step *step) {
  if (step->ping_lost && in->watchdog.lost_pings % 100 == 1)
    lagscope__publish_error(LAGSCOPE_ELOST,
                            "ping %llu was never run although the main thread ran on for %u ms "
                            "after it was posted (%u lost so far): the host's queue dropped it, "
                            "as an event loop does that drains posted events it does not know "
                            "(SDL: while (SDL_PollEvent(&e)); discards them). Another was posted; "
                            "frames still end hangs. Run every function post_main is given.",
                            (unsigned long long)in->watchdog.lost_ping_seq,
                            in->config.hang_threshold_ms, in->watchdog.lost_pings);
  int32_t wrong = atomic_exchange_explicit(&wrong_thread, 0, memory_order_relaxed);
  if (wrong != 0 && !in->wrong_thread_reported) {
    in->wrong_thread_reported = 1;
    lagscope__publish_error(LAGSCOPE_ETHREAD,
                            "thread %d called lagscope_frame or lagscope_heartbeat, or ran the "
                            "ping, but lagscope was started on thread %d, the one it watches: "
                            "ignored. Call lagscope_start on the main thread, and make post_main "
                            "run the function on it (GLib: g_idle_add_full, not "
                            "g_main_context_invoke, which runs it on the caller's thread when "
                            "the loop is not running).",
                            (int)wrong, (int)atomic_load(&watched_thread));
  }
}

/* Reads the OS's figures; reports a failure once until it changes or goes away. PSS, which
 * costs the most to read, only every PSS_INTERVAL_NS; between, the last one is carried. */
static int sample_process(instance *in, lagscope__process_sample *out,
                          const lagscope__process_sample *previous) {
  char why[256] = "";
  uint64_t now = lagscope__now_ns();
  int with_pss = previous == NULL || now >= in->pss_due_ns;
  if (with_pss) in->pss_due_ns = now + PSS_INTERVAL_NS;
  /* Threads' names are read afresh as seldom as PSS (a thread that names itself after its
   * first sample shows its new name within PSS_INTERVAL_NS). */
  unsigned what = with_pss ? LAGSCOPE__SAMPLE_PSS | LAGSCOPE__SAMPLE_DETAIL : 0;
  int rc = lagscope__process_sample_read(out, previous, what, why, sizeof(why));
  if (!with_pss) out->pss_bytes = previous->pss_bytes;
  int detail = (what & LAGSCOPE__SAMPLE_DETAIL) != 0;
  if (rc == LAGSCOPE_OK) {
    /* A fault only a read with detail sees (a thread's stat) is gone only when one says so:
     * not said again at every such read. */
    if (detail || !in->last_sample_error_detail) in->last_sample_error[0] = '\0';
  } else if (strcmp(why, in->last_sample_error) != 0) {
    snprintf(in->last_sample_error, sizeof(in->last_sample_error), "%s", why);
    in->last_sample_error_detail = detail;
    lagscope__publish_error(rc, "sampler: %s", why);
  }
  return rc;
}

static void publish_metrics(instance *in, uint64_t now) {
  lagscope_metrics *m = lagscope__payload_new(sizeof(*m), NULL);
  if (m == NULL) return;
  m->time_ns = now;
  m->wall_ms = lagscope__wall_ms();
  measured_refresh(&in->frames);
  lagscope__frame_meter_drain(&in->frames, &frame_ring);
  lagscope__frame_meter_report(&in->frames, now, &m->frames);

  lagscope__process_sample *previous = &in->samples[in->sample_current];
  lagscope__process_sample *current = &in->samples[1 - in->sample_current];
  if (sample_process(in, current, previous) == LAGSCOPE_OK || current->threads_len > 0) {
    int32_t own[LAGSCOPE__OWN_THREADS_MAX];
    size_t own_len = lagscope__thread_own_ids(own, LAGSCOPE__OWN_THREADS_MAX);
    lagscope__sampler_compute(previous, current, own, own_len, m);
    in->sample_current = 1 - in->sample_current;
  }
  m->hangs = atomic_load_explicit(&in->hangs, memory_order_relaxed);
  m->hang_in_progress = atomic_load_explicit(&in->hang_in_progress, memory_order_relaxed);
  m->events_published = lagscope__bus_published(&in->bus);
  m->events_dropped = atomic_load_explicit(&in->bus.dropped, memory_order_relaxed) +
                      atomic_load_explicit(&in->subscriber_drops, memory_order_relaxed);
  m->monitor_memory_bytes = lagscope__memory_in_use();
  m->stopped_ms = in->watchdog.stopped_ns / NS_PER_MS;
  m->monitor_starved_ms = in->watchdog.starved_total_ns / NS_PER_MS;

  if (m->hang_in_progress && in->hang_recorder != NULL)
    lagscope__hang_recorder_during(in->hang_recorder, m);
  else
    in->last_metrics = *m, in->have_last_metrics = 1;
  lagscope__hang_recorder_retry(in->hang_recorder);

  pthread_mutex_lock(&latest_lock);
  latest_metrics = *m;
  have_latest_metrics = 1;
  pthread_mutex_unlock(&latest_lock);

  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS};
  e.payload.metrics = m;
  lagscope__publish(&e);
}

/* How much of the monitor's lateness it spent waiting for a CPU (for the watchdog). */
static void note_starvation(instance *in, uint64_t now) {
  in->watchdog.starved_ns = 0;
  uint64_t queued;
  if (in->queued_before_ns == 0 || now < in->watchdog.expected_wake_ns + in->watchdog.threshold_ns ||
      lagscope__thread_queued_ns(&queued) != 0 || queued < in->queued_before_ns)
    return;
  in->watchdog.starved_ns = queued - in->queued_before_ns;
}

/* How often the monitor looks at what the main thread waits on as it posts a ping: until the
 * loop's own fds are known, then seldom (a loop's fds rarely change). */
#define LOOP_NOTE_LEARNING_NS (1000ull * NS_PER_MS)
#define LOOP_NOTE_KNOWN_NS (10000ull * NS_PER_MS)

/* Learns the event loop's own wait (lagscope__loop_wait_*): a ping answered within two frames
 * of its post found the loop waiting for work. Before a post (post_ping): notes the wait; at
 * later steps: its fate. */
static void learn_loop_wait(instance *in, const lagscope__watchdog_step *step, uint64_t now) {
  const lagscope__watchdog *w = &in->watchdog;
  if (in->loop_note_seq != 0) {
    uint64_t answered = atomic_load_explicit(&main_signals.answered_seq, memory_order_acquire);
    uint64_t at = atomic_load_explicit(&main_signals.answered_ns, memory_order_acquire);
    if (answered >= in->loop_note_seq) {
      lagscope__loop_wait_confirm(at >= in->loop_note_ns && at - in->loop_note_ns <= w->late_ns);
      in->loop_note_seq = 0;
    } else if (now - in->loop_note_ns > w->late_ns) {
      lagscope__loop_wait_confirm(0);
      in->loop_note_seq = 0;
    }
  }
  if (!step->post_ping || in->loop_note_seq != 0 || w->hang_active || w->late ||
      now < in->next_loop_note_ns)
    return;
  lagscope__loop_wait_note(lagscope__main_thread_id());
  in->loop_note_seq = w->ping_seq;
  in->loop_note_ns = now;
  in->next_loop_note_ns =
      now + (lagscope__loop_wait_known() ? LOOP_NOTE_KNOWN_NS : LOOP_NOTE_LEARNING_NS);
}

/* The frame meter learns when the main thread was late: its gaps are then late frames, not
 * idle ones. */
static void note_lateness(instance *in, const lagscope__watchdog_step *step, uint64_t now) {
  const lagscope__watchdog *w = &in->watchdog;
  if (step->late_ended)
    lagscope__frame_meter_late(&in->frames, step->late_since_ns,
                               step->late_since_ns + step->late_duration_ns);
  if (step->hang_ended) lagscope__frame_meter_late(&in->frames, w->hang_start_ns, now);
  lagscope__frame_meter_late_now(&in->frames, w->hang_active ? w->hang_start_ns
                                              : w->late         ? w->late_since_ns
                                                                : 0);
}

static void monitor_main(void *arg) {
  instance *in = arg;
  uint64_t sample_interval = (uint64_t)in->config.sample_interval_ms * NS_PER_MS;
  uint64_t next_sample = lagscope__now_ns() + sample_interval;
  sample_process(in, &in->samples[in->sample_current], NULL); /* the baseline for CPU deltas */
  lagscope__loop_wait_reset(); /* the loop may not be the last start's */
  in->hang_recorder = lagscope__hang_recorder_new(&in->config);
  if (in->hang_recorder != NULL) lagscope__hang_recorder_recover(in->hang_recorder);
  while (!atomic_load_explicit(&in->monitor_stopping, memory_order_acquire)) {
    uint64_t now = lagscope__now_ns();
    lagscope__watchdog_step step;
    int was_hung = in->watchdog.hang_active;
    if (app_in_background()) lagscope__watchdog_excuse(&in->watchdog, now);
    note_starvation(in, now);
    lagscope__watchdog_run(&in->watchdog, &main_signals, now, &step);
    if (step.late_ended) publish_hitch(in, &step);
    note_lateness(in, &step, now);
    if (in->hang_recorder != NULL && step.sample_early)
      lagscope__hang_recorder_sample_early(in->hang_recorder);
    else if (in->hang_recorder != NULL && !in->watchdog.hang_active)
      lagscope__hang_recorder_forget_early(in->hang_recorder);
    if (was_hung && in->watchdog.hang_active && in->hang_recorder != NULL) {
      lagscope__hang_recorder_sample(in->hang_recorder);
      if (now >= in->next_hang_sample_event_ns) {
        publish_hang_sample(in, now);
        in->next_hang_sample_event_ns = now + HANG_SAMPLE_EVENT_NS;
      }
    }
    if (step.hang_ended) publish_hang_ended(in, step.duration_ns);
    if (step.hang_began) {
      publish_hang_began(in);
      in->next_hang_sample_event_ns = 0; /* the first live stack at the next step */
    }
    int slow_work = serve_capture_request(in);
    slow_work |= was_hung || in->watchdog.hang_active || step.late_ended || step.sample_early ||
                 lagscope__hang_recorder_unsaved(in->hang_recorder);
    report_hook_problems(in, &step);
    learn_loop_wait(in, &step, now);
    if (step.post_ping) post_ping(in, now);
    if (now >= next_sample) {
      publish_metrics(in, now);
      next_sample += sample_interval;
      if (next_sample <= now) next_sample = now + sample_interval; /* after a suspension */
    }
    uint64_t wake = step.wake_at_ns < next_sample ? step.wake_at_ns : next_sample;
    /* A step with slow work (a report symbolicated and written with fsync, a capture) can
     * take longer than a threshold, and a wake-up late by that much is not a suspension: the
     * lateness counts from its end. Any other step takes microseconds, so a step that ends
     * past its wake-up was stopped in the middle (SIGSTOP lands anywhere): that lateness
     * stays in, for the next step to judge. */
    uint64_t done = lagscope__now_ns();
    in->watchdog.expected_wake_ns = slow_work && done > wake ? done : wake;
    /* While a hang lasts, how long the monitor waits for a CPU is noted before each sleep,
     * so a late wake-up can be told apart from a stop (one small /proc read per sample). */
    in->queued_before_ns = 0;
    if (in->watchdog.hang_active && lagscope__thread_queued_ns(&in->queued_before_ns) != 0)
      in->queued_before_ns = 0;
    lagscope__wakeup_wait_until(in->monitor_wakeup, in->watchdog.expected_wake_ns);
  }
  /* A hang still open at stop is ended here: its report says how long it had lasted. */
  if (in->watchdog.hang_active)
    publish_hang_ended(in, lagscope__now_ns() - in->watchdog.hang_start_ns);
  lagscope__hang_recorder_free(in->hang_recorder);
  in->hang_recorder = NULL;
  last_ping_seq = in->watchdog.ping_seq; /* read by the next start, after the join */
}

static void web_stop(instance *in);
static void wait_for_hud_readers(void);
/* running, for lagscope_hud_take, which takes no lock: set before RUNNING, cleared at STOPPING. */
static _Atomic(instance *) hud_instance;
static subscriber *subscriber_unlink(instance *in, lagscope_subscription id);

/* ---- 7. lifecycle ------------------------------------------------------------------------------ */

static void instance_free(instance *in) {
  for (subscriber *s = in->subscribers, *next; s != NULL; s = next) {
    next = s->next;
    subscriber_stop(s, 0);
  }
  lagscope__bus_destroy(&in->bus);
  lagscope__hud_free(atomic_load(&in->hud));
  lagscope__wakeup_free(in->monitor_wakeup);
  lagscope__wakeup_free(in->capture_done);
  pthread_mutex_destroy(&in->subscribers_lock);
  pthread_mutex_destroy(&in->capture_serial);
  pthread_mutex_destroy(&in->web_lock);
  pthread_mutex_destroy(&in->capture_lock);
  lagscope__dealloc(in);
}

static int instance_new(const lagscope_config *config, instance **out) {
  instance *in = lagscope__alloc(sizeof(*in));
  if (in == NULL) return LAGSCOPE_ENOMEM;
  in->config = *config;
#if defined(__APPLE__)
  lagscope__capture_set_copy_bytes((size_t)config->stack_copy_kib * 1024u); /* no monitor yet */
#endif
  pthread_mutex_init(&in->subscribers_lock, NULL);
  pthread_mutex_init(&in->capture_serial, NULL);
  pthread_mutex_init(&in->web_lock, NULL);
  pthread_mutex_init(&in->capture_lock, NULL);
  int rc = lagscope__bus_init(&in->bus, config->bus_capacity);
  in->monitor_wakeup = lagscope__wakeup_new();
  in->capture_done = lagscope__wakeup_new();
  if (rc == LAGSCOPE_OK && (in->monitor_wakeup == NULL || in->capture_done == NULL))
    rc = LAGSCOPE_ENOMEM;
  if (rc == LAGSCOPE_OK && config->on_event != NULL)
    rc = subscriber_add(in, config->on_event, config->on_event_user, NULL);

  if (rc != LAGSCOPE_OK) {
    instance_free(in);
    return rc;
  }
  uint64_t now = lagscope__now_ns();
  lagscope__watchdog_init(&in->watchdog, config, now, last_ping_seq);
  lagscope__frame_meter_init(&in->frames, config->refresh_hz);
  /* A gap the watchdog could not have seen late (a ping's wait, then lateness) is no proof of
   * idleness; one a frame budget longer is. */
  const lagscope__watchdog *w = &in->watchdog;
  lagscope__frame_meter_set_idle_gap(&in->frames, (w->heartbeat_mode ? 0 : w->interval_ns) +
                                                      w->late_ns + in->frames.period_ns);
  in->frames.read = atomic_load_explicit(&frame_ring.head, memory_order_acquire);
  *out = in;
  return LAGSCOPE_OK;
}

/* Stops the monitor first (no new events), then lets the dispatcher and each subscriber
 * deliver everything already published before they exit. */
static void instance_shutdown(instance *in) {
  if (in->monitor_thread != NULL) {
    atomic_store_explicit(&in->monitor_stopping, 1, memory_order_release);
    lagscope__wakeup_post(in->monitor_wakeup);
    lagscope__thread_join(in->monitor_thread);
  }
  web_stop(in); /* after the monitor: closing connections takes a while, and is no hang */
  if (in->dispatcher_thread != NULL) {
    atomic_store_explicit(&in->dispatcher_stopping, 1, memory_order_release);
    lagscope__bus_wake(&in->bus);
    lagscope__thread_join(in->dispatcher_thread);
  }
}

/* ---- the viewer ---- */

/* Starts the LAN viewer and its subscriber; a failure is said and lagscope runs on. Caller
 * holds lifecycle_lock, with the threads running. */
static void web_start(instance *in) {
  if (!in->config.server) return;
  char app_name[64], report_dir[512], why[256] = "";
  lagscope__app_name(&in->config, app_name, sizeof(app_name));
  lagscope__report_dir(&in->config, app_name, report_dir, sizeof(report_dir));
  lagscope__web_host host = {&in->config, report_dir, app_name, capture_now};
  pthread_mutex_lock(&in->web_lock); /* the dispatcher may be about to restart it */
  int rc = lagscope__web_start(&host, &in->web, why, sizeof(why));
  if (rc == LAGSCOPE_OK)
    rc = subscriber_add(in, lagscope__web_on_event, in->web, &in->web_subscription);
  if (rc != LAGSCOPE_OK) {
    if (in->web != NULL || why[0] == '\0') snprintf(why, sizeof(why), "%s", lagscope_strerror(rc));
    lagscope__web_stop(in->web);
    in->web = NULL;
  }
  pthread_mutex_unlock(&in->web_lock);
  if (rc != LAGSCOPE_OK) {
    lagscope__publish_error(rc, "viewer not started: %s", why);
    return;
  }
  const char *url = lagscope__web_url(in->web);
  lagscope__log("viewer: %s", url);
  char *message = lagscope__payload_text(url);
  if (message == NULL) return;
  lagscope_event e = {.type = LAGSCOPE_EVENT_SERVER_STARTED};
  e.as.server_started.port = lagscope__web_port(in->web);
  e.payload.message = message;
  lagscope__publish(&e);
}

/* Its subscriber first, so that nothing feeds the server while it closes. */
static void web_stop(instance *in) {
  if (in->web == NULL) return;
  subscriber *s = subscriber_unlink(in, in->web_subscription);
  if (s != NULL) subscriber_stop(s, 1);
  pthread_mutex_lock(&in->web_lock);
  lagscope__web_stop(in->web);
  in->web = NULL;
  pthread_mutex_unlock(&in->web_lock);
}

int lagscope_viewer_url(char *out, size_t size) {
  if (out == NULL || size == 0) return LAGSCOPE_EINVAL;
  out[0] = '\0';
  pthread_mutex_lock(&lifecycle_lock);
  int rc = LAGSCOPE_ENOTRUNNING;
  if (atomic_load(&lifecycle) == RUNNING) {
    rc = LAGSCOPE_ENOENT;
    if (running->web != NULL) {
      const char *url = lagscope__web_url(running->web);
      rc = strlen(url) < size ? LAGSCOPE_OK : LAGSCOPE_ELIMIT;
      if (rc == LAGSCOPE_OK) memcpy(out, url, strlen(url) + 1);
    }
  }
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

static void wait_while_stopping(void) {
  while (atomic_load(&lifecycle) == STOPPING) pthread_cond_wait(&lifecycle_changed, &lifecycle_lock);
}

static void log_started(const lagscope_config *c) {
  char line[LOG_LINE_MAX];
  snprintf(line, sizeof(line),
           "started (version " LAGSCOPE_VERSION_STRING "): %s mode, hang threshold %u ms, "
           "display %u Hz",
           c->post_main != NULL ? "post_main" : "heartbeat", c->hang_threshold_ms, c->refresh_hz);
  log_line(c, line);
}

int lagscope_start(const lagscope_config *config) {
  lagscope_config c = config != NULL ? *config : lagscope_config_default();
  char why[256];
  if (lagscope_config_validate(&c, why, sizeof(why)) != LAGSCOPE_OK) {
    char line[LOG_LINE_MAX];
    snprintf(line, sizeof(line), "not started: %s", why);
    log_line(&c, line);
    return LAGSCOPE_EINVAL;
  }
  platform_defaults(&c);
  pthread_mutex_lock(&lifecycle_lock);
  wait_while_stopping();
  if (atomic_load(&lifecycle) == RUNNING) {
    pthread_mutex_unlock(&lifecycle_lock);
    return LAGSCOPE_EALREADY;
  }
  instance *in;
  int rc = instance_new(&c, &in);
  if (rc == LAGSCOPE_OK) {
    running = in;
    atomic_store(&watched_thread, lagscope__thread_id());
    atomic_store(&wrong_thread, 0);
    rc = lagscope__thread_start(&in->dispatcher_thread, "lagscope-bus", dispatcher_main, in);
    /* The viewer before the monitor, which would see the caller's time in civetweb's start-up
     * as a hang of the main thread. */
    if (rc == LAGSCOPE_OK) web_start(in);
    if (rc == LAGSCOPE_OK)
      rc = lagscope__thread_start(&in->monitor_thread, "lagscope-mon", monitor_main, in);
    if (rc != LAGSCOPE_OK) {
      instance_shutdown(in);
      instance_free(in);
      running = NULL;
    }
  }
  if (rc == LAGSCOPE_OK) {
    atomic_store(&hud_instance, running);
    atomic_store(&lifecycle, RUNNING);
    log_started(&c);
    platform_start(&c);
  }
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

int lagscope_stop(void) {
  if (lagscope__thread_is_own()) return LAGSCOPE_EDEADLK;
  pthread_mutex_lock(&lifecycle_lock);
  wait_while_stopping();
  if (atomic_load(&lifecycle) != RUNNING) {
    pthread_mutex_unlock(&lifecycle_lock);
    return LAGSCOPE_ENOTRUNNING;
  }
  atomic_store(&lifecycle, STOPPING);
  atomic_store(&hud_instance, NULL);
  platform_stop();
  instance *in = running;
  /* Joined without the lock, so that a callback calling into lagscope meanwhile does not
   * deadlock; it finds lagscope stopping. */
  pthread_mutex_unlock(&lifecycle_lock);
  wait_for_hud_readers(); /* the main queue's overlay may be copying the pixels */
  instance_shutdown(in);
  instance_free(in);
  pthread_mutex_lock(&lifecycle_lock);
  running = NULL;
  atomic_store(&lifecycle, STOPPED);
  pthread_cond_broadcast(&lifecycle_changed);
  pthread_mutex_unlock(&lifecycle_lock);
  return LAGSCOPE_OK;
}

int lagscope_is_running(void) { return atomic_load(&lifecycle) == RUNNING; }

int lagscope_subscribe(lagscope_event_fn fn, void *user, lagscope_subscription *out) {
  if (fn == NULL) return LAGSCOPE_EINVAL;
  pthread_mutex_lock(&lifecycle_lock);
  int rc = atomic_load(&lifecycle) == RUNNING ? subscriber_add(running, fn, user, out)
                                              : LAGSCOPE_ENOTRUNNING;
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}

static subscriber *subscriber_unlink(instance *in, lagscope_subscription id) {
  pthread_mutex_lock(&in->subscribers_lock);
  subscriber **link = &in->subscribers;
  while (*link != NULL && (*link)->id != id) link = &(*link)->next;
  subscriber *s = *link;
  if (s != NULL && s != delivering_for) *link = s->next;
  pthread_mutex_unlock(&in->subscribers_lock);
  return s;
}

int lagscope_unsubscribe(lagscope_subscription id) {
  pthread_mutex_lock(&lifecycle_lock);
  if (!lagscope__thread_is_own()) wait_while_stopping();
  if (atomic_load(&lifecycle) != RUNNING) {
    pthread_mutex_unlock(&lifecycle_lock);
    return LAGSCOPE_ENOTRUNNING;
  }
  subscriber *s = subscriber_unlink(running, id);
  pthread_mutex_unlock(&lifecycle_lock);
  if (s == NULL) return LAGSCOPE_ENOENT;
  if (s == delivering_for) return LAGSCOPE_EDEADLK;
  subscriber_stop(s, 1);
  return LAGSCOPE_OK;
}

int lagscope_metrics_latest(lagscope_metrics *out) {
  if (out == NULL) return LAGSCOPE_EINVAL;
  pthread_mutex_lock(&latest_lock);
  int rc = have_latest_metrics ? LAGSCOPE_OK : LAGSCOPE_ENODATA;
  if (have_latest_metrics) *out = latest_metrics;
  pthread_mutex_unlock(&latest_lock);
  return rc;
}

/* ---- the HUD: the host's side ---- */

/* Readers between lagscope__hud_hold and lagscope__hud_release: stop frees the HUD only when
 * none is left. A reader counts itself before it looks at the lifecycle and stop marks STOPPING
 * before it looks at the count (both sequentially consistent), so either the reader sees
 * STOPPING and reads nothing, or stop sees the reader and waits for it. */
static _Atomic int hud_readers;

int lagscope__hud_hold(lagscope_hud_image *out) {
  atomic_fetch_add(&hud_readers, 1);
  int rc = lagscope_hud_take(out);
  if (rc != LAGSCOPE_OK) atomic_fetch_sub(&hud_readers, 1);
  return rc;
}

void lagscope__hud_release(void) { atomic_fetch_sub(&hud_readers, 1); }

/* A held image is copied within microseconds (the overlay's CFDataCreate); the main thread
 * holds none while it is hung elsewhere, so this ends. F */
static void wait_for_hud_readers(void) {
  struct timespec pause = {0, 100 * 1000};
  while (atomic_load(&hud_readers) > 0) nanosleep(&pause, NULL);
}

int lagscope_hud_take(lagscope_hud_image *out) {
  if (out == NULL) return LAGSCOPE_EINVAL;
  /* No lock: the main thread calls this; a stop on another thread is waited out by
   * lagscope__hud_hold's readers count, and the instance is read through an atomic. */
  instance *in = atomic_load(&hud_instance);
  if (atomic_load(&lifecycle) != RUNNING || in == NULL) return LAGSCOPE_ENOTRUNNING;
  lagscope__hud *hud = atomic_load_explicit(&in->hud, memory_order_acquire);
  if (hud == NULL) return in->config.hud ? LAGSCOPE_ENODATA : LAGSCOPE_ENOTRUNNING;
  /* The first take starts the drawing: one wake-up, once; after it, no system call. */
  if (lagscope__hud_want(hud)) lagscope__bus_wake(&in->bus);
  return lagscope__hud_take(hud, out);
}

int lagscope_hud_set_expanded(int expanded) {
  pthread_mutex_lock(&lifecycle_lock);
  int rc = LAGSCOPE_ENOTRUNNING;
  lagscope__hud *hud = running != NULL ? atomic_load(&running->hud) : NULL;
  if (atomic_load(&lifecycle) == RUNNING && hud != NULL) {
    lagscope__hud_request_expanded(hud, expanded);
    lagscope__bus_wake(&running->bus); /* the dispatcher redraws at once */
    rc = LAGSCOPE_OK;
  }
  pthread_mutex_unlock(&lifecycle_lock);
  return rc;
}
