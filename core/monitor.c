/*
 * The monitor's watch thread (lagscope-mon): pings, the watchdog, the frame meter and the main
 * thread's samples, one step at a time, and nothing slow: what it finds goes as items into the
 * watch ring, which the recorder thread (core/recorder.c, lagscope-rec) drains to capture every
 * thread, symbolicate, judge, write reports and read usage. The watch thread never waits for
 * it: a full ring thins the samples (core/report/watch_ring.c).
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
  lagscope__frame_meter frames;
  lagscope__recorder *recorder; /* the slow side, fed through its ring */
  int early_sent;            /* early samples went to the recorder since it last forgot them */
  int refresh_said;          /* the first measured display rate logged */
  int wrong_thread_reported; /* ETHREAD said once per start */
  uint64_t loop_note_seq;     /* the ping whose post noted the main thread's wait (0: none) */
  uint64_t loop_note_ns;      /* when it was posted */
  uint64_t next_loop_note_ns; /* the next look at the loop's wait */
  uint32_t loop_note_misses;  /* looks in a row that found it waiting on no fd */
  /* What the full watch ring refused (the recorder far behind), owed until it has room: a
   * stall is never missed silently. */
  int start_refused; /* the open hang's start was refused: asked again at each step */
  int end_owed;   /* the hang's end was refused: sent before anything else */
  uint64_t owed_duration_ns, owed_end_ns;
  uint64_t lost_since_ns, lost_until_ns; /* items refused then: a blind spell to tell (0: none) */
  uint64_t lost_counted_ns; /* of it, already in the watchdog's blind total (refused spells) */
};

/* ---- 2. the watch thread --------------------------------------------------------------------- */

static void post_ping(lagscope__monitor *in, uint64_t now) {
  void *arg = (void *)(uintptr_t)in->watchdog.ping_seq;
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

/* ---- the watch ring's items: filled here, never waited for ---- */

/* A slot of the ring for an item of that kind; NULL when full (the recorder counts it), or
 * while a hang's end is owed (nothing may overtake it). F */
static lagscope__watch_item *item_begin(lagscope__monitor *in, int kind) {
  if (in->end_owed && kind != LAGSCOPE__WATCH_ENDED) return NULL;
  return lagscope__watch_ring_reserve(lagscope__recorder_ring(in->recorder), kind);
}

/* A time whose items the ring refused, to be told as a blind spell. counted: of it, already in
 * the watchdog's blind total. F */
static void note_lost(lagscope__monitor *in, uint64_t start_ns, uint64_t end_ns, uint64_t counted) {
  if (in->lost_since_ns == 0 || start_ns < in->lost_since_ns) in->lost_since_ns = start_ns;
  if (end_ns > in->lost_until_ns) in->lost_until_ns = end_ns;
  in->lost_counted_ns += counted;
}

static void item_end(lagscope__monitor *in) {
  lagscope__watch_ring_commit(lagscope__recorder_ring(in->recorder));
  lagscope__recorder_wake(in->recorder);
}

/* An item of times alone; 0 when the ring refused it. F */
static int send_times(lagscope__monitor *in, int kind, uint64_t start_ns, uint64_t duration_ns,
                      uint64_t end_ns) {
  lagscope__watch_item *item = item_begin(in, kind);
  if (item == NULL) return 0;
  item->start_ns = start_ns;
  item->duration_ns = duration_ns;
  item->end_ns = end_ns;
  item_end(in);
  return 1;
}

/* One sample of the main thread, captured into the ring's slot (kind: early or the hang's),
 * unless the ring is filling and thins it. L (one capture at a time) */
static void send_sample(lagscope__monitor *in, int kind) {
  if (kind == LAGSCOPE__WATCH_SAMPLE && in->start_refused) return; /* the recorder knows no hang */
  if (!lagscope__watch_ring_wants_sample(lagscope__recorder_ring(in->recorder))) return;
  lagscope__watch_item *item = item_begin(in, kind);
  if (item == NULL) return;
  item->rc = lagscope__main_thread_sample(&item->u.stack);
  item_end(in);
  if (kind == LAGSCOPE__WATCH_EARLY) in->early_sent = 1;
}

/* The hang the watchdog just saw begin. Start-up: the main thread has not shown life in this
 * process yet (a toolkit building its first window before its loop runs): real, and said so,
 * for a budget to treat apart. F */
static void send_hang_began(lagscope__monitor *in) {
  lagscope__watch_item *item = item_begin(in, LAGSCOPE__WATCH_BEGAN);
  in->early_sent = 0; /* the hang takes them */
  in->start_refused = item == NULL;
  if (item == NULL) return;
  uint64_t now = lagscope__now_ns();
  item->hang_id = in->watchdog.hang_id;
  item->start_ns = in->watchdog.hang_start_ns;
  item->wall_ms = lagscope__wall_ms() - (int64_t)((now - in->watchdog.hang_start_ns) / NS_PER_MS);
  item->startup = atomic_load_explicit(&in->signals->alive_ns, memory_order_acquire) == 0;
  item_end(in);
}

/* The watch thread could not look for a while with no hang open (a CPU it waited for): said,
 * so that a stall that went unseen then is not silent; through the ring, so that the metrics
 * after it count it. F */
static void send_blind(lagscope__monitor *in, const lagscope__watchdog_step *step) {
  lagscope__watch_item *item = item_begin(in, LAGSCOPE__WATCH_BLIND);
  if (item == NULL) {
    note_lost(in, step->blind_since_ns, step->blind_since_ns + step->blind_ns, step->blind_ns);
    return;
  }
  item->start_ns = step->blind_since_ns;
  item->duration_ns = step->blind_ns;
  item->busy_ns = step->blind_busy_ns;
  item_end(in);
}

/* The main thread was late and answered before the threshold: a hitch when it lasted
 * hitch_report_ms, with the samples taken while it was late. F */
static void send_hitch(lagscope__monitor *in, const lagscope__watchdog_step *step) {
  uint64_t min_ns = (uint64_t)in->config->hitch_report_ms * NS_PER_MS;
  if (min_ns == 0 || step->late_duration_ns < min_ns) return;
  if (send_times(in, LAGSCOPE__WATCH_HITCH, step->late_since_ns, step->late_duration_ns, 0))
    in->early_sent = 0; /* the hitch takes them */
  else
    note_lost(in, step->late_since_ns, step->late_since_ns + step->late_duration_ns, 0);
}

/* The hang's end. One whose start the ring refused is a time lost, told as blind; a refused
 * end is owed, sent before any other item. F */
static void send_hang_ended(lagscope__monitor *in, uint64_t duration_ns, uint64_t end_ns) {
  if (in->start_refused) {
    in->start_refused = 0;
    note_lost(in, in->watchdog.hang_start_ns, end_ns, 0);
  } else if (!send_times(in, LAGSCOPE__WATCH_ENDED, 0, duration_ns, end_ns)) {
    in->end_owed = 1;
    in->owed_duration_ns = duration_ns;
    in->owed_end_ns = end_ns;
  }
}

/* What the ring refused, in order once it has room: an owed end; the open hang's start (late,
 * with its true start); the time lost, as a blind spell, counted in the blind total. F */
static void pay_debts(lagscope__monitor *in) {
  if (in->end_owed) {
    in->end_owed = 0;
    if (!send_times(in, LAGSCOPE__WATCH_ENDED, 0, in->owed_duration_ns, in->owed_end_ns)) {
      in->end_owed = 1;
      return;
    }
  }
  if (in->start_refused && in->watchdog.hang_active) send_hang_began(in);
  if (in->lost_until_ns == 0 || in->start_refused) return;
  uint64_t span = in->lost_until_ns - in->lost_since_ns;
  lagscope__watch_item *item = item_begin(in, LAGSCOPE__WATCH_BLIND);
  if (item == NULL) return;
  item->start_ns = in->lost_since_ns;
  item->duration_ns = item->busy_ns = span; /* the recorder's own slow work */
  in->watchdog.blind_total_ns += span > in->lost_counted_ns ? span - in->lost_counted_ns : 0;
  in->lost_since_ns = in->lost_until_ns = in->lost_counted_ns = 0;
  item_end(in);
}

/* The frames and the watchdog's figures; the recorder adds the usage and publishes. F */
static void send_metrics(lagscope__monitor *in, uint64_t now, int last) {
  if (lagscope__recorder_metrics_waiting(in->recorder) && !last) return;
  lagscope__watch_item *item = item_begin(in, LAGSCOPE__WATCH_METRICS);
  if (item == NULL) return;
  lagscope_metrics *m = &item->u.metrics;
  memset(m, 0, sizeof(*m));
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
  m->stopped_ms = in->watchdog.stopped_ns / NS_PER_MS;
  m->monitor_starved_ms = in->watchdog.starved_total_ns / NS_PER_MS;
  m->monitor_blind_ms = in->watchdog.blind_total_ns / NS_PER_MS;
  lagscope__recorder_metrics_sent(in->recorder);
  item_end(in);
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

/* What the step found about the main thread's samples and the hang, to the ring in order: a
 * hang that ended before the watch thread looked begins and ends in this step. L */
static void send_step(lagscope__monitor *in, const lagscope__watchdog_step *step, int was_hung) {
  const lagscope__watchdog *w = &in->watchdog;
  if (step->late_ended) send_hitch(in, step);
  if (step->sample_early) {
    send_sample(in, LAGSCOPE__WATCH_EARLY);
  } else if (!w->hang_active && in->early_sent) {
    in->early_sent = !send_times(in, LAGSCOPE__WATCH_FORGET_EARLY, 0, 0, 0); /* else again */
  }
  if (was_hung && w->hang_active) send_sample(in, LAGSCOPE__WATCH_SAMPLE);
  int unseen = step->hang_began && step->hang_ended && !w->hang_active;
  if (unseen) send_hang_began(in);
  if (step->hang_ended) send_hang_ended(in, step->duration_ns, step->end_ns);
  if (step->hang_began && !unseen) {
    send_hang_began(in);
    send_sample(in, LAGSCOPE__WATCH_SAMPLE); /* the main thread first: it is what is stuck */
  }
  if (w->hang_active) lagscope__recorder_hang_suspended(in->recorder, w->hang_suspended_ns);
}

static void monitor_main(void *arg) {
  lagscope__monitor *in = arg;
  uint64_t usage_interval = (uint64_t)in->config->usage_interval_ms * NS_PER_MS;
  uint64_t usage_early =
      usage_interval / 4 < USAGE_EARLY_NS ? usage_interval / 4 : USAGE_EARLY_NS;
  uint64_t next_usage = lagscope__now_ns() + usage_interval;
  lagscope__loop_wait_reset(); /* the loop may not be the last start's */
  in->watchdog_input.expected_wake_ns = lagscope__now_ns();
  while (!atomic_load_explicit(&in->monitor_stopping, memory_order_acquire)) {
    uint64_t now = lagscope__now_ns();
    lagscope__watchdog_step step;
    int was_hung = in->watchdog.hang_active;
    if (lagscope__platform_in_background()) lagscope__watchdog_excuse(&in->watchdog, now);
    note_starvation(in, now);
    pay_debts(in);
    lagscope__watchdog_run(&in->watchdog, in->signals, &in->watchdog_input, now, &step);
    if (step.blind) send_blind(in, &step);
    note_lateness(in, &step, now);
    /* No slow work here: a sample of the main thread, bounded by its answer's wait, takes far
     * less than a threshold. A step held up past its next planned wake all the same (the
     * capture lock, page faults under load) is its own time, never taken for a stop. */
    send_step(in, &step, was_hung);
    report_hook_problems(in, &step);
    learn_loop_wait(in, &step, now);
    if (step.post_ping) post_ping(in, now);
    if (now + usage_early >= next_usage) {
      send_metrics(in, now, 0);
      next_usage += usage_interval;
      if (next_usage <= now) next_usage = now + usage_interval; /* after a suspension */
    }
    uint64_t wake = step.wake_at_ns < next_usage ? step.wake_at_ns : next_usage;
    in->watchdog_input.planned_wake_ns = wake;
    in->watchdog_input.busy_until_ns = now;
    in->watchdog_input.expected_wake_ns = wake;
    note_queued(in, lagscope__now_ns());
    lagscope__wakeup_wait_until(in->wakeup, in->watchdog_input.expected_wake_ns);
  }
  /* A hang still open at stop is ended here: its report says how long it had lasted. */
  uint64_t stop_ns = lagscope__now_ns();
  if (in->watchdog.hang_active)
    send_hang_ended(in, lagscope__watchdog_hang_duration(&in->watchdog, stop_ns), stop_ns);
  pay_debts(in);
  /* A last sample, so that the frames since the last one are told: a run that ends between
   * two (a timed benchmark's last frames, then exit) still leaves its true total_frames. */
  send_metrics(in, stop_ns, 1);
  last_ping_seq = in->watchdog.ping_seq; /* read by the next start, after the join */
}

/* ---- 3. the monitor's life ------------------------------------------------------------------- */

void lagscope__monitor_free(lagscope__monitor *in) {
  if (in == NULL) return;
  lagscope__recorder_free(in->recorder);
  lagscope__wakeup_free(in->wakeup);
  lagscope__dealloc(in);
}

int lagscope__monitor_new(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                          lagscope__monitor **out) {
  lagscope__monitor *in = lagscope__alloc(sizeof(*in));
  if (in == NULL) return LAGSCOPE_ENOMEM;
  in->config = config;
  in->dispatcher = dispatcher;
  in->signals = lagscope__main_signals_shared();
  in->wakeup = lagscope__wakeup_new();
  in->recorder = lagscope__recorder_new(config, dispatcher);
  if (in->wakeup == NULL || in->recorder == NULL) {
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

/* The recorder first: the watch thread's first items wait in the ring until it drains them. */
int lagscope__monitor_start(lagscope__monitor *in) {
  int rc = lagscope__recorder_start(in->recorder);
  if (rc != LAGSCOPE_OK) return rc;
  rc = lagscope__thread_start(&in->thread, "lagscope-mon", monitor_main, in);
  if (rc != LAGSCOPE_OK) lagscope__recorder_stop(in->recorder);
  return rc;
}

/* The watch thread first: its last items (a hang's end, the final metrics) are in the ring
 * before the recorder drains it and stops. */
void lagscope__monitor_stop(lagscope__monitor *in) {
  if (in->thread == NULL) return;
  atomic_store_explicit(&in->monitor_stopping, 1, memory_order_release);
  lagscope__wakeup_post(in->wakeup);
  lagscope__thread_join(in->thread);
  in->thread = NULL;
  lagscope__recorder_stop(in->recorder);
}

int lagscope__monitor_capture_now(lagscope__monitor *in, char **json, uint64_t timeout_ns) {
  *json = NULL;
  if (atomic_load(&in->monitor_stopping)) return LAGSCOPE_ENOTRUNNING;
  return lagscope__recorder_capture_now(in->recorder, json, timeout_ns);
}
