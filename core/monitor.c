/*
 * The monitor thread: the watchdog, the frame meter, the usage reader and the hang recorder, one
 * step at a time; and the viewer's "capture now" requests, served between two steps.
 *
 * Contents
 *   1. state that outlives a start/stop, and the monitor's own
 *   2. the monitor thread
 *   3. the monitor's life
 */
#define _GNU_SOURCE
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_MS 1000000u
#define HANG_SAMPLE_EVENT_NS (100u * NS_PER_MS) /* the stream's live stack, at most this often */
/* A hang's report is written at its start and again while it lasts, so that a kill (by the
 * user, a harness, iOS's watchdog, the OOM killer) leaves it on disk up to the last write: each
 * second, or less often when writes are slow, so that they take at most a tenth of the
 * monitor's time (a write stops sampling while it runs; tests/bench/bench_report_save). */
#define REPORT_SAVE_EVERY_NS (1000ull * NS_PER_MS)
#define REPORT_SAVE_COST_SHARE 10
/* PSS (Linux: smaps_rollup walks every mapping; measured 2026-11: 0.8 ms with 500 of them, and
 * 8 % of the monitor's time in an idle GTK app even when read every 10 s) at most this often;
 * RSS, from statm, at every sample. Threads' names are read afresh every DETAIL_INTERVAL_NS. */
#define PSS_INTERVAL_NS (60000ull * NS_PER_MS)
#define DETAIL_INTERVAL_NS (10000ull * NS_PER_MS)
/* A monitor awake anyway (every two frame budgets while frames flow, every ping interval
 * while they do not) takes the metrics sample up to this early, rather than waking for it
 * alone: each wake-up costs CPU (measured 2026-11 on a virtual machine: ~40 us). The cadence
 * stays. At most a quarter of the sample interval early, so that a short interval is not
 * sampled at every wake-up. */
#define USAGE_EARLY_NS (50ull * NS_PER_MS)

/* ---- 1. state ------------------------------------------------------------------------------- */

/* The last ping's number, carried from one start to the next (see lagscope__watchdog_init):
 * written by the monitor thread as it ends, read by the next lagscope__monitor_new after the
 * join. */
static uint64_t last_ping_seq;

/* The latest metrics, kept past stop so that a host can still read them. */
static pthread_mutex_t latest_lock = PTHREAD_MUTEX_INITIALIZER;
static lagscope_metrics latest_metrics;
static int have_latest_metrics;

struct lagscope__monitor {
  const lagscope_config *config; /* the instance's; outlives the monitor */
  lagscope__dispatcher *dispatcher;
  lagscope__main_signals *signals; /* what the main thread writes (core/detect/main_thread.c) */
  lagscope__wakeup *wakeup;
  lagscope__thread *thread;
  _Atomic int monitor_stopping;

  /* Monitor thread only. */
  lagscope__watchdog watchdog;
  lagscope__watchdog_input watchdog_input; /* what the monitor tells it at each run */
  uint64_t queued_before_ns; /* the monitor's run-queue wait, read before a sleep (0: unknown) */
  uint64_t queued_read_ns;   /* when it was read */
  uint64_t main_cpu_before_ns; /* the watched thread's CPU time, read before a sleep */
  uint64_t main_cpu_read_ns;   /* when it was read (0: unknown) */
  lagscope__frame_meter frames;
  lagscope__usage readings[2];
  int usage_current;
  char last_usage_error[256];
  int last_usage_error_detail; /* found by a read with detail, which a lighter one cannot clear */
  uint64_t pss_due_ns;           /* the next sample reads PSS from then on */
  uint64_t detail_due_ns;        /* the next sample reads threads' names from then on */
  _Atomic uint64_t hangs;
  _Atomic int hang_in_progress;
  lagscope__hang_recorder *hang_recorder;
  lagscope_metrics last_metrics; /* the context a hang's report calls "before" */
  int have_last_metrics;
  int wrong_thread_reported; /* ETHREAD said once per start */
  int refresh_said;          /* the first measured display rate logged */
  uint64_t next_hang_sample_event_ns;
  uint64_t next_report_save_ns; /* the hang's report is written again from then on */
  int hang_startup;             /* the hang began before the main thread's first sign of life */
  uint64_t loop_note_seq;     /* the ping whose post noted the main thread's wait (0: none) */
  uint64_t loop_note_ns;      /* when it was posted */
  uint64_t next_loop_note_ns; /* the next look at the loop's wait */
  uint32_t loop_note_misses;  /* looks in a row that found it waiting on no fd */

  /* The viewer's requests to capture every thread now, served by the monitor thread (one
   * capture at a time per process). */
  pthread_mutex_t capture_serial; /* one request at a time */
  pthread_mutex_t capture_lock;   /* the mailbox below */
  lagscope__wakeup *capture_done;
  _Atomic int capture_requested;
  int capture_answered;
  char *capture_result;
};

/* ---- 2. the monitor thread --------------------------------------------------------------------- */

/* The hang's report as it stands, its duration so far. The next write is a second after the
 * one planned (no drift), or later when this one was slow. first: the hang's first. */
static void save_hang_report(lagscope__monitor *in, uint64_t now, int first) {
  uint64_t duration = lagscope__watchdog_hang_duration(&in->watchdog, now);
  uint64_t cost = lagscope__hang_recorder_save(in->hang_recorder, duration);
  uint64_t planned = in->next_report_save_ns;
  uint64_t next = !first && planned + REPORT_SAVE_EVERY_NS > now ? planned + REPORT_SAVE_EVERY_NS
                                                                 : now + REPORT_SAVE_EVERY_NS;
  uint64_t slow = now + cost * REPORT_SAVE_COST_SHARE;
  in->next_report_save_ns = slow > next ? slow : next;
}

static void publish_hang_sample(lagscope__monitor *in, uint64_t now) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_SAMPLE};
  e.payload.stack_json =
      lagscope__hang_recorder_latest_stack(in->hang_recorder, &e.as.hang_sample.sample_count);
  if (e.payload.stack_json == NULL) return;
  e.as.hang_sample.hang_id = in->watchdog.hang_id;
  e.as.hang_sample.elapsed_ns = now - in->watchdog.hang_start_ns;
  lagscope__publish(&e);
}

static void publish_hang_began(lagscope__monitor *in) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_BEGAN};
  uint64_t now = lagscope__now_ns();
  e.as.hang_began.hang_id = in->watchdog.hang_id;
  e.as.hang_began.start_ns = in->watchdog.hang_start_ns;
  e.as.hang_began.start_wall_ms =
      lagscope__wall_ms() - (int64_t)((now - in->watchdog.hang_start_ns) / NS_PER_MS);
  e.as.hang_began.threshold_ms = in->config->hang_threshold_ms;
  /* Start-up: the main thread has not shown life in this process yet (a toolkit building its
   * first window before its loop runs). Real, and said so: a budget may treat it apart. */
  in->hang_startup = atomic_load_explicit(&in->signals->alive_ns, memory_order_acquire) == 0;
  e.as.hang_began.startup = in->hang_startup;
  atomic_fetch_add_explicit(&in->hangs, 1, memory_order_relaxed);
  atomic_store_explicit(&in->hang_in_progress, 1, memory_order_relaxed);
  lagscope__publish(&e);
  /* Published first, so that the stream shows the hang before its stacks are gathered; then
   * the live stack, before the report is written (the first symbol lookups can be slow: the
   * write is then quick). */
  if (in->hang_recorder == NULL) return;
  lagscope__hang_recorder_begin(in->hang_recorder, e.as.hang_began.hang_id,
                                e.as.hang_began.start_ns, e.as.hang_began.start_wall_ms,
                                in->hang_startup, in->have_last_metrics ? &in->last_metrics : NULL,
                                &in->readings[in->usage_current]);
  lagscope__hang_recorder_slow_begin(in->hang_recorder);
  publish_hang_sample(in, now);
  in->next_hang_sample_event_ns = now + HANG_SAMPLE_EVENT_NS;
  save_hang_report(in, lagscope__now_ns(), 1); /* on disk before anything else can go wrong */
  lagscope__hang_recorder_slow_end(in->hang_recorder);
}

static void publish_hang_ended(lagscope__monitor *in, uint64_t duration_ns, uint64_t end_ns) {
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_ENDED};
  e.as.hang_ended.hang_id = in->watchdog.hang_id;
  e.as.hang_ended.start_ns = in->watchdog.hang_start_ns;
  e.as.hang_ended.duration_ns = duration_ns;
  e.as.hang_ended.startup = in->hang_startup;
  atomic_store_explicit(&in->hang_in_progress, 0, memory_order_relaxed);
  if (in->hang_recorder != NULL)
    e.payload.report = lagscope__hang_recorder_end(in->hang_recorder, duration_ns, end_ns);
  /* Idle: the main thread waited in its own loop, which did not run the ping (a modal loop).
   * Reported, and by default not a hang. */
  int idle = e.payload.report != NULL &&
             strcmp(lagscope__hang_report_kind(e.payload.report), "idle") == 0;
  e.as.hang_ended.counted = !idle || in->config->hang_count_idle;
  if (!e.as.hang_ended.counted) atomic_fetch_sub_explicit(&in->hangs, 1, memory_order_relaxed);
  lagscope__publish(&e);
}

/* The monitor could not watch for a while with no hang open (its own slow work, a CPU it
 * waited for): said, so that a stall that went unseen then is not silent. */
static void publish_blind(lagscope__monitor *in, const lagscope__watchdog_step *step) {
  (void)in;
  lagscope_event e = {.type = LAGSCOPE_EVENT_MONITOR_BLIND};
  e.as.monitor_blind.start_ns = step->blind_since_ns;
  e.as.monitor_blind.duration_ns = step->blind_ns;
  e.as.monitor_blind.busy_ns = step->blind_busy_ns;
  lagscope__publish(&e);
}

/* The main thread was late and answered before the threshold: a hitch when it lasted
 * hitch_report_ms, with the samples taken while it was late. */
static void publish_hitch(lagscope__monitor *in, const lagscope__watchdog_step *step) {
  uint64_t min_ns = (uint64_t)in->config->hitch_report_ms * NS_PER_MS;
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


/* The viewer's "Capture now", on the monitor thread between two steps. Returns 1 if it
 * captured (slow work), 0 if nothing was asked. */
static int serve_capture_request(lagscope__monitor *in) {
  if (!atomic_load_explicit(&in->capture_requested, memory_order_acquire)) return 0;
  char *json = NULL;
  int rc = in->hang_recorder != NULL
               ? lagscope__hang_recorder_capture_now(in->hang_recorder,
                                                     &in->readings[in->usage_current], &json)
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
  lagscope__dealloc(json); /* nobody waits for it any more */
  return 1;
}

int lagscope__monitor_capture_now(lagscope__monitor *in, char **json, uint64_t timeout_ns) {
  *json = NULL;
  if (atomic_load(&in->monitor_stopping)) return LAGSCOPE_ENOTRUNNING;
  pthread_mutex_lock(&in->capture_serial);
  pthread_mutex_lock(&in->capture_lock);
  in->capture_answered = 0;
  in->capture_result = NULL;
  atomic_store_explicit(&in->capture_requested, 1, memory_order_release);
  pthread_mutex_unlock(&in->capture_lock);
  lagscope__wakeup_post(in->wakeup);
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
  if (!answered) return LAGSCOPE_ETIMEDOUT;
  return *json != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
}

/* The ping the step decided, owed from when it is really posted: the step's slow work came
 * between (under load a report's fsync took 400 ms, and an idle GLib program, its ping not yet
 * posted, was told "Blocked 394 ms in poll() on anon_inode:[eventfd]"). */
static void post_ping(lagscope__monitor *in, uint64_t now) {
  void *arg = (void *)(uintptr_t)in->watchdog.ping_seq;
  lagscope__watchdog_posted(&in->watchdog, lagscope__now_ns());
  if (in->config->post_main(lagscope__main_thread_answer_ping, arg, in->config->post_main_user) == 0) return;
  lagscope__watchdog_post_failed(&in->watchdog, now);
  /* Said once, then every 100th time, so that a host whose queue is full is not flooded. */
  if (in->watchdog.post_failures % 100 == 1)
    lagscope__publish_error(LAGSCOPE_EPOST,
                            "post_main refused the ping (%u times so far); the watchdog "
                            "cannot see the main thread until it accepts",
                            in->watchdog.post_failures);
}

/* What the watchdog learnt about the host's hooks, said once (then every 100th time). */
static void report_hook_problems(lagscope__monitor *in, const lagscope__watchdog_step *step) {
  if (step->ping_lost && in->watchdog.lost_pings % 100 == 1)
    lagscope__publish_error(LAGSCOPE_ELOST,
                            "ping %llu was never run although the main thread ran on for %u ms "
                            "after it was posted (%u lost so far): the host's queue dropped it, "
                            "as an event loop does that drains posted events it does not know "
                            "(SDL: while (SDL_PollEvent(&e)); discards them). Another was posted; "
                            "frames still end hangs. Run every function post_main is given.",
                            (unsigned long long)in->watchdog.lost_ping_seq,
                            in->config->hang_threshold_ms, in->watchdog.lost_pings);
  int32_t wrong = lagscope__main_thread_take_wrong_caller();
  if (wrong != 0 && !in->wrong_thread_reported) {
    in->wrong_thread_reported = 1;
    lagscope__publish_error(LAGSCOPE_ETHREAD,
                            "thread %d called lagscope_frame or lagscope_heartbeat, or ran the "
                            "ping, but lagscope was started on thread %d, the one it watches: "
                            "ignored. Call lagscope_start on the main thread, and make post_main "
                            "run the function on it (GLib: g_idle_add_full, not "
                            "g_main_context_invoke, which runs it on the caller's thread when "
                            "the loop is not running).",
                            (int)wrong, (int)lagscope__main_thread_watched());
  }
}

/* Reads the OS's figures; reports a failure once until it changes or goes away. PSS, which
 * costs the most to read, only every PSS_INTERVAL_NS; between, the last one is carried. */
static int read_usage(lagscope__monitor *in, lagscope__usage *out,
                          const lagscope__usage *previous) {
  char why[256] = "";
  uint64_t now = lagscope__now_ns();
  int with_pss = previous == NULL || now >= in->pss_due_ns;
  if (with_pss) in->pss_due_ns = now + PSS_INTERVAL_NS;
  /* A thread that names itself after its first sample shows its new name within
   * DETAIL_INTERVAL_NS. */
  int with_detail = previous == NULL || now >= in->detail_due_ns;
  if (with_detail) in->detail_due_ns = now + DETAIL_INTERVAL_NS;
  unsigned what = (with_pss ? LAGSCOPE__USAGE_PSS : 0u) | (with_detail ? LAGSCOPE__USAGE_DETAIL : 0u);
  int rc = lagscope__usage_read(out, previous, what, why, sizeof(why));
  if (!with_pss) out->pss_bytes = previous->pss_bytes;
  int detail = (what & LAGSCOPE__USAGE_DETAIL) != 0;
  if (rc == LAGSCOPE_OK) {
    /* A fault only a read with detail sees (a thread's stat) is gone only when one says so:
     * not said again at every such read. */
    if (detail || !in->last_usage_error_detail) in->last_usage_error[0] = '\0';
  } else if (strcmp(why, in->last_usage_error) != 0) {
    snprintf(in->last_usage_error, sizeof(in->last_usage_error), "%s", why);
    in->last_usage_error_detail = detail;
    lagscope__publish_error(rc, "sampler: %s", why);
  }
  return rc;
}

/* The start-up's log line said the configured rate; the first one measured is logged once (a
 * later change, as ProMotion's, shows in the metrics only: a line at each would flood). */
static void say_measured_refresh(lagscope__monitor *in, uint32_t hz) {
  if (hz == 0 || in->refresh_said) return;
  in->refresh_said = 1;
  char line[128];
  snprintf(line, sizeof(line), "display %u Hz, measured (%u Hz was the configured rate)", hz,
           in->config->refresh_hz);
  lagscope__log_line(in->config, line);
}

static void publish_metrics(lagscope__monitor *in, uint64_t now) {
  lagscope_metrics *m = lagscope__payload_new(sizeof(*m), NULL);
  if (m == NULL) return;
  m->time_ns = now;
  m->wall_ms = lagscope__wall_ms();
  /* The real rate where the platform measures it (Darwin's display link, 10 to 120 Hz under
   * ProMotion; Linux, the RandR mode read by the X11 overlay's thread): frames are judged
   * against it, not against config.refresh_hz (0: not measured). */
  uint32_t measured_hz = lagscope__platform_refresh_hz();
  lagscope__frame_meter_set_refresh_hz(&in->frames, measured_hz);
  say_measured_refresh(in, measured_hz);
  lagscope__frame_meter_drain(&in->frames, lagscope__frame_ring_shared());
  lagscope__frame_meter_report(&in->frames, now, &m->frames);

  lagscope__usage *previous = &in->readings[in->usage_current];
  lagscope__usage *current = &in->readings[1 - in->usage_current];
  if (read_usage(in, current, previous) == LAGSCOPE_OK || current->threads_len > 0) {
    int32_t own[LAGSCOPE__OWN_THREADS_MAX];
    size_t own_len = lagscope__thread_own_ids(own, LAGSCOPE__OWN_THREADS_MAX);
    lagscope__usage_compute(previous, current, own, own_len, m);
    in->usage_current = 1 - in->usage_current;
  }
  m->hangs = atomic_load_explicit(&in->hangs, memory_order_relaxed);
  m->hang_in_progress = atomic_load_explicit(&in->hang_in_progress, memory_order_relaxed);
  m->events_published = lagscope__bus_published(lagscope__dispatcher_bus(in->dispatcher));
  m->events_dropped = lagscope__dispatcher_dropped(in->dispatcher);
  m->monitor_memory_bytes = lagscope__memory_in_use();
  m->stopped_ms = in->watchdog.stopped_ns / NS_PER_MS;
  m->monitor_starved_ms = in->watchdog.starved_total_ns / NS_PER_MS;
  m->monitor_blind_ms = in->watchdog.blind_total_ns / NS_PER_MS;

  if (m->hang_in_progress && in->hang_recorder != NULL)
    lagscope__hang_recorder_during(in->hang_recorder, m);
  else
    in->last_metrics = *m, in->have_last_metrics = 1;
  lagscope__hang_recorder_retry(in->hang_recorder);
  lagscope__hang_recorder_tidy(in->hang_recorder, now);

  pthread_mutex_lock(&latest_lock);
  latest_metrics = *m;
  have_latest_metrics = 1;
  pthread_mutex_unlock(&latest_lock);

  lagscope_event e = {.type = LAGSCOPE_EVENT_METRICS};
  e.payload.metrics = m;
  lagscope__publish(&e);
}

/* How long the monitor has waited for a CPU, read before it sleeps, so that a wake-up a
 * threshold late can be told apart from a stop: before each sleep while a hang lasts, at most
 * once a second otherwise (a monitor starved before a hang began is no stop either); one small
 * /proc read. A reading up to a second old counts that second's waits as starvation too:
 * microseconds each, but on a loaded machine a stop then looks shorter by as much. */
#define QUEUED_READ_NS (1000ull * NS_PER_MS)

static void note_queued(lagscope__monitor *in, uint64_t now) {
  int fresh = in->queued_read_ns != 0 && now < in->queued_read_ns + QUEUED_READ_NS;
  if (!in->watchdog.hang_active && fresh) return;
  if (lagscope__thread_queued_ns(&in->queued_before_ns) != 0) in->queued_before_ns = 0;
  in->queued_read_ns = now;
}

/* How much of the monitor's lateness it spent waiting for a CPU (for the watchdog). */
static void note_starvation(lagscope__monitor *in, uint64_t now) {
  in->watchdog_input.starved_ns = 0;
  uint64_t queued;
  if (in->queued_before_ns == 0 || now < in->watchdog_input.expected_wake_ns + in->watchdog.threshold_ns ||
      lagscope__thread_queued_ns(&queued) != 0 || queued < in->queued_before_ns)
    return;
  in->watchdog_input.starved_ns = queued - in->queued_before_ns;
}

/* The watched thread's CPU time before each sleep (one clock_gettime on Linux; no allocation,
 * no lock), and again at a wake-up a threshold late: a stop holds that thread too, so its CPU
 * time tells a monitor held alone from a stopped process (lagscope__watchdog_input). */
static void note_main_cpu_before(lagscope__monitor *in, uint64_t now) {
  int known = lagscope__thread_cpu_ns(lagscope__main_thread_watched(), &in->main_cpu_before_ns) == 0;
  in->main_cpu_read_ns = known ? now : 0;
}

static void note_main_cpu_ran(lagscope__monitor *in, uint64_t now) {
  lagscope__watchdog_input *input = &in->watchdog_input;
  input->main_cpu_from_ns = input->main_cpu_ran_ns = 0;
  uint64_t cpu;
  if (in->main_cpu_read_ns == 0 || now < input->expected_wake_ns + in->watchdog.threshold_ns ||
      lagscope__thread_cpu_ns(lagscope__main_thread_watched(), &cpu) != 0 ||
      cpu < in->main_cpu_before_ns)
    return;
  input->main_cpu_from_ns = in->main_cpu_read_ns;
  input->main_cpu_ran_ns = cpu - in->main_cpu_before_ns;
}

/* How often the monitor looks at what the main thread waits on as it posts a ping: until the
 * loop's own fds are known, then seldom (a loop's fds rarely change). While frames flow, the
 * looks come just after a frame, when a slow loop is still at work, not waiting: a look that
 * found no wait is tried again soon, a few times, and the intervals are no whole number of
 * frames at 60 or 120 Hz, so that each try meets the loop at another moment of its frame. */
#define LOOP_NOTE_LEARNING_NS (1005ull * NS_PER_MS)
#define LOOP_NOTE_RETRY_NS (105ull * NS_PER_MS)
#define LOOP_NOTE_RETRIES 8
#define LOOP_NOTE_KNOWN_NS (10000ull * NS_PER_MS)

/* Learns the event loop's own wait (lagscope__loop_wait_*): a ping answered within two frames
 * of its post found the loop waiting for work. Before a post (post_ping): notes the wait; at
 * later steps: its fate. */
static void learn_loop_wait(lagscope__monitor *in, const lagscope__watchdog_step *step, uint64_t now) {
  const lagscope__watchdog *w = &in->watchdog;
  if (in->loop_note_seq != 0) {
    uint64_t answered = atomic_load_explicit(&in->signals->answered_seq, memory_order_acquire);
    uint64_t at = atomic_load_explicit(&in->signals->answered_ns, memory_order_acquire);
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
  int noted = lagscope__loop_wait_note(lagscope__main_thread_watched());
  if (noted < 0) { /* this OS cannot tell: no more looks, nor pings for them */
    in->next_loop_note_ns = in->watchdog_input.ping_anyway_ns = UINT64_MAX;
    return;
  }
  in->loop_note_seq = w->ping_seq;
  in->loop_note_ns = now;
  in->loop_note_misses = noted ? 0 : in->loop_note_misses + 1;
  uint64_t next = lagscope__loop_wait_known()                 ? LOOP_NOTE_KNOWN_NS
                  : !noted && in->loop_note_misses <= LOOP_NOTE_RETRIES ? LOOP_NOTE_RETRY_NS
                                                              : LOOP_NOTE_LEARNING_NS;
  in->next_loop_note_ns = now + next;
  in->watchdog_input.ping_anyway_ns = in->next_loop_note_ns; /* frames spare pings until then */
}

/* The frame meter learns when the main thread was late: its gaps are then late frames, not
 * idle ones. */
static void note_lateness(lagscope__monitor *in, const lagscope__watchdog_step *step, uint64_t now) {
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
  lagscope__monitor *in = arg;
  uint64_t usage_interval = (uint64_t)in->config->usage_interval_ms * NS_PER_MS;
  uint64_t usage_early =
      usage_interval / 4 < USAGE_EARLY_NS ? usage_interval / 4 : USAGE_EARLY_NS;
  uint64_t next_usage = lagscope__now_ns() + usage_interval;
  read_usage(in, &in->readings[in->usage_current], NULL); /* the baseline for CPU deltas */
  lagscope__loop_wait_reset(); /* the loop may not be the last start's */
  in->hang_recorder = lagscope__hang_recorder_new(in->config);
  if (in->hang_recorder != NULL) lagscope__hang_recorder_recover(in->hang_recorder);
  /* The work above is the monitor's own, not a suspension: lateness counts from here. */
  in->watchdog_input.expected_wake_ns = lagscope__now_ns();
  note_main_cpu_before(in, in->watchdog_input.expected_wake_ns);
  while (!atomic_load_explicit(&in->monitor_stopping, memory_order_acquire)) {
    uint64_t now = lagscope__now_ns();
    lagscope__watchdog_step step;
    int was_hung = in->watchdog.hang_active;
    if (lagscope__platform_in_background()) lagscope__watchdog_excuse(&in->watchdog, now);
    note_starvation(in, now);
    note_main_cpu_ran(in, now);
    lagscope__watchdog_run(&in->watchdog, in->signals, &in->watchdog_input, now, &step);
    if (step.blind) publish_blind(in, &step);
    /* Slow work (symbols read, a report written with fsync, every thread captured) can take
     * longer than a threshold: its time is added up, so that the lateness it causes is not
     * taken for a stop. The rest of a step (a sample of the main thread, bounded by
     * MAIN_ANSWER_NS) takes far less than a threshold: a step late by more was stopped in
     * the middle (SIGSTOP lands anywhere, and during a hang most often in a step), and that
     * lateness stays in, for the next step to judge. */
    uint64_t slow_ns = 0, t0 = lagscope__now_ns();
    if (step.late_ended) publish_hitch(in, &step);
    slow_ns += lagscope__now_ns() - t0;
    note_lateness(in, &step, now);
    if (in->hang_recorder != NULL && step.sample_early)
      lagscope__hang_recorder_sample_early(in->hang_recorder);
    else if (in->hang_recorder != NULL && !in->watchdog.hang_active)
      lagscope__hang_recorder_forget_early(in->hang_recorder);
    if (was_hung && in->watchdog.hang_active && in->hang_recorder != NULL) {
      lagscope__hang_recorder_sample(in->hang_recorder);
      t0 = lagscope__now_ns();
      int live = now >= in->next_hang_sample_event_ns, save = now >= in->next_report_save_ns;
      if (live || save) lagscope__hang_recorder_slow_begin(in->hang_recorder);
      if (live) {
        publish_hang_sample(in, now);
        in->next_hang_sample_event_ns = now + HANG_SAMPLE_EVENT_NS;
      }
      if (save) save_hang_report(in, now, 0);
      lagscope__hang_recorder_slow_end(in->hang_recorder);
      slow_ns += lagscope__now_ns() - t0;
    }
    t0 = lagscope__now_ns();
    /* A hang that ended before the monitor looked begins and ends in this step, in order. */
    int unseen = step.hang_began && step.hang_ended && !in->watchdog.hang_active;
    if (unseen) publish_hang_began(in);
    if (step.hang_ended) publish_hang_ended(in, step.duration_ns, step.end_ns);
    if (step.hang_began && !unseen) publish_hang_began(in);
    serve_capture_request(in);
    slow_ns += lagscope__now_ns() - t0;
    report_hook_problems(in, &step);
    learn_loop_wait(in, &step, now);
    if (step.post_ping) post_ping(in, now);
    if (now + usage_early >= next_usage) {
      t0 = lagscope__now_ns();
      publish_metrics(in, now); /* with a final report's retry, written with fsync */
      slow_ns += lagscope__now_ns() - t0;
      next_usage += usage_interval;
      if (next_usage <= now) next_usage = now + usage_interval; /* after a suspension */
    }
    uint64_t wake = step.wake_at_ns < next_usage ? step.wake_at_ns : next_usage;
    uint64_t busy_until = now + slow_ns;
    in->watchdog_input.planned_wake_ns = wake;
    in->watchdog_input.busy_until_ns = busy_until;
    in->watchdog_input.expected_wake_ns = busy_until > wake ? busy_until : wake;
    uint64_t before_sleep = lagscope__now_ns();
    note_queued(in, before_sleep);
    note_main_cpu_before(in, before_sleep);
    lagscope__wakeup_wait_until(in->wakeup, in->watchdog_input.expected_wake_ns);
  }
  /* A hang still open at stop is ended here: its report says how long it had lasted. */
  uint64_t stop_ns = lagscope__now_ns();
  if (in->watchdog.hang_active)
    publish_hang_ended(in, lagscope__watchdog_hang_duration(&in->watchdog, stop_ns), stop_ns);
  /* A last sample, so that the frames since the last one are told: a run that ends between
   * two (a timed benchmark's last frames, then exit) still leaves its true total_frames. */
  publish_metrics(in, stop_ns);
  lagscope__hang_recorder_free(in->hang_recorder);
  in->hang_recorder = NULL;
  last_ping_seq = in->watchdog.ping_seq; /* read by the next start, after the join */
}

/* ---- 3. the monitor's life ------------------------------------------------------------------- */

void lagscope__monitor_free(lagscope__monitor *in) {
  if (in == NULL) return;
  lagscope__wakeup_free(in->wakeup);
  lagscope__wakeup_free(in->capture_done);
  pthread_mutex_destroy(&in->capture_serial);
  pthread_mutex_destroy(&in->capture_lock);
  lagscope__dealloc(in);
}

int lagscope__monitor_new(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                          lagscope__monitor **out) {
  lagscope__monitor *in = lagscope__alloc(sizeof(*in));
  if (in == NULL) return LAGSCOPE_ENOMEM;
  in->config = config;
  in->dispatcher = dispatcher;
  in->signals = lagscope__main_signals_shared();
  pthread_mutex_init(&in->capture_serial, NULL);
  pthread_mutex_init(&in->capture_lock, NULL);
  in->wakeup = lagscope__wakeup_new();
  in->capture_done = lagscope__wakeup_new();
  if (in->wakeup == NULL || in->capture_done == NULL) {
    lagscope__monitor_free(in);
    return LAGSCOPE_ENOMEM;
  }
  uint64_t now = lagscope__now_ns();
  lagscope__watchdog_init(&in->watchdog, config, now, last_ping_seq);
  in->watchdog_input.expected_wake_ns = now;
  /* The first look is planned for the start: a monitor slow to get going (its thread started,
   * stored reports recovered, on a loaded machine) is blind until it looks, and says so. */
  in->watchdog_input.planned_wake_ns = now;
  /* The main thread records where a stall ended: a gap as long as the watchdog's "late". */
  atomic_store_explicit(&in->signals->gap_ns, in->watchdog.late_ns, memory_order_relaxed);
  lagscope__frame_meter_init(&in->frames, config->refresh_hz);
  /* A gap the watchdog could not have seen late (a ping's wait, then lateness) is no proof of
   * idleness; one a frame budget longer is. */
  const lagscope__watchdog *w = &in->watchdog;
  lagscope__frame_meter_set_idle_gap(&in->frames,
                                     w->unpinged_max_ns + w->late_ns + in->frames.period_ns);
  in->frames.read = atomic_load_explicit(&lagscope__frame_ring_shared()->head, memory_order_acquire);
  *out = in;
  return LAGSCOPE_OK;
}

int lagscope__monitor_start(lagscope__monitor *in) {
  return lagscope__thread_start(&in->thread, "lagscope-mon", monitor_main, in);
}

void lagscope__monitor_stop(lagscope__monitor *in) {
  if (in->thread == NULL) return;
  atomic_store_explicit(&in->monitor_stopping, 1, memory_order_release);
  lagscope__wakeup_post(in->wakeup);
  lagscope__thread_join(in->thread);
  in->thread = NULL;
}

int lagscope_metrics_latest(lagscope_metrics *out) {
  if (out == NULL) return LAGSCOPE_EINVAL;
  pthread_mutex_lock(&latest_lock);
  int rc = have_latest_metrics ? LAGSCOPE_OK : LAGSCOPE_ENODATA;
  if (have_latest_metrics) *out = latest_metrics;
  pthread_mutex_unlock(&latest_lock);
  return rc;
}
