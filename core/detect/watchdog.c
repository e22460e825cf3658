/* The watchdog's state machine: when to ping, when a hang begins and ends, and when the
 * monitor was itself not running. Pure logic over a clock passed in, so tests can drive it.
 *
 * A stall is measured from the main thread's last sign of life (a ping answer, a frame, a
 * heartbeat) to its first after, whatever the monitor was doing: a stall longer than the
 * threshold is always a hang, even when the monitor only looked after it ended. The stall
 * cannot have begun earlier, so the duration is an upper bound, by the time between that sign
 * and the stall's start: at most a frame period while frames flow, at most the ping interval
 * otherwise. It is proven a stall only once the main thread owed an answer for "late" (two
 * frame budgets) after a ping's post: an idle loop answers at once, and the quiet before the
 * post is no stall.
 *
 * The main thread's answer is only a few atomic stores, with no wake-up: the monitor looks at
 * it when the threshold would expire, and every hang_tick_ns while a hang lasts; the
 * answer's own timestamp gives the hang's exact end.
 *
 * While frames (or heartbeats) come, they prove the main thread alive and no ping is posted:
 * a ping costs the app a wake-up of its loop and the monitor a context switch, 20 times a
 * second. A ping is due when the frames would be late (two frame budgets after the last). */
#include "internal.h"

#include <string.h>

#define NS_PER_MS 1000000u
/* While frames flow, the monitor looks this long after the moment they would be late: a frame
 * due exactly then (two budgets after the last, in a steady loop) has come, so each look finds
 * one and the next is two budgets on, not one. */
#define FRAME_JITTER_NS (2u * NS_PER_MS)

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void lagscope__watchdog_init(lagscope__watchdog *w, const lagscope_config *c, uint64_t now_ns,
                             uint64_t last_ping_seq) {
  memset(w, 0, sizeof(*w));
  w->threshold_ns = (uint64_t)c->hang_threshold_ms * NS_PER_MS;
  w->interval_ns = (uint64_t)c->ping_interval_ms * NS_PER_MS;
  w->hang_tick_ns = (uint64_t)c->hang_sample_interval_ms * NS_PER_MS;
  /* Two frame budgets; never more than half the threshold, so a hang has early samples. */
  w->late_ns = 2000000000ull / (c->refresh_hz > 0 ? c->refresh_hz : 60);
  if (w->late_ns > w->threshold_ns / 2) w->late_ns = w->threshold_ns / 2;
  w->heartbeat_mode = c->post_main == NULL;
  w->unpinged_max_ns =
      w->heartbeat_mode ? 0 : max_u64(w->interval_ns, w->late_ns + FRAME_JITTER_NS);
  /* A stall longer than the threshold goes unseen when the monitor is blind for more than
   * the part of it past the threshold: told from a quarter of the threshold on. */
  w->blind_report_ns = w->threshold_ns / 4;
  w->ping_seq = last_ping_seq;
  w->next_ping_ns = now_ns;
  w->not_before_ns = now_ns;
}

/* The main thread came back from a gap, or answered a ping, between from and to: it ran. */
static int main_ran_between(const lagscope__main_signals *signals, uint64_t from, uint64_t to) {
  uint64_t resumed = atomic_load_explicit(&signals->resumed_ns, memory_order_acquire);
  uint64_t answered = atomic_load_explicit(&signals->answered_ns, memory_order_acquire);
  return (resumed > from && resumed < to) || (answered > from && answered < to);
}

/* The main thread's CPU time proves it ran while the monitor was late, even when it showed no
 * sign of life (stalled from the start): a stop holds it too, so from the monitor's reading
 * before its sleep it can have run only until the planned wake-up (a stop that held the
 * monitor past it began no later) and after the continue (while the monitor waited for a
 * CPU). More than that, with a quarter threshold's margin for the clocks' grain, and the
 * process was not stopped. A main thread blocked meanwhile proves nothing this way. F */
static int main_ran_on_cpu(const lagscope__watchdog *w, const lagscope__watchdog_input *input) {
  uint64_t from = input->main_cpu_from_ns;
  if (from == 0 || from > input->expected_wake_ns) return 0;
  uint64_t could = input->expected_wake_ns - from + input->starved_ns + w->blind_report_ns;
  return input->main_cpu_ran_ns > could;
}

/* The monitor woke a whole threshold after it meant to, and not because it waited for a CPU:
 * the process was stopped (SIGSTOP, a debugger, the OS suspending it), so that time says
 * nothing about the main thread. Unless the main thread ran meanwhile (its first sign of life
 * after a gap, or an answer, well before the monitor's wake-up: after a stop both run again
 * from the same moment; or its CPU time, main_ran_on_cpu): then the monitor alone was held,
 * asleep in the kernel (a page fault waiting for the memory map's lock while the app's threads
 * start and end, under ASan most of all; or in its own step: a capture's wait, the capture
 * lock; or its start-up), and that lateness is blindness, told, or the open hang's. The
 * length of the monitor's own step proves nothing: during a hang it is most of the time in a
 * step (sampling the main thread), and a stop lands there as often as anywhere
 * (demo_killed_late: a SIGSTOP of 1.5 s counted in the hang). */
static void notice_suspension(lagscope__watchdog *w, const lagscope__main_signals *signals,
                              const lagscope__watchdog_input *input, uint64_t now_ns,
                              lagscope__watchdog_step *step) {
  if (now_ns <= input->expected_wake_ns) return;
  uint64_t late = now_ns - input->expected_wake_ns;
  uint64_t starved = input->starved_ns;
  uint64_t stopped = late > starved ? late - starved : 0;
  w->starved_total_ns += late < starved ? late : starved;
  if (stopped < w->threshold_ns) return;
  uint64_t resumed_by = now_ns - starved - w->blind_report_ns; /* stopped >= threshold > it */
  if (main_ran_between(signals, input->expected_wake_ns, resumed_by) ||
      main_ran_on_cpu(w, input)) {
    w->held_ns += stopped;
    return;
  }
  w->stopped_ns += stopped;
  step->resumed = 1;
  if (w->hang_active) w->hang_suspended_ns += stopped;
  w->not_before_ns = now_ns;
}

/* The monitor looked later than it planned, with no hang open to cover the time (a hang's own
 * stand-in samples it, and its end is the main thread's timestamp): busy with its own slow work
 * (every thread captured, a report written), or waiting for a CPU. A stall that began and ended
 * in that spell was not seen, and the watchdog says so rather than nothing. A stop (resumed)
 * is no blindness: the main thread was stopped too. */
static void notice_blindness(lagscope__watchdog *w, const lagscope__watchdog_input *input,
                             uint64_t now_ns, lagscope__watchdog_step *step) {
  uint64_t from = input->planned_wake_ns;
  if (step->hang_ended && step->end_ns > from) from = step->end_ns; /* seen up to its end */
  if (step->resumed || w->hang_active || from == 0 || now_ns <= from) return;
  uint64_t blind = now_ns - from;
  w->blind_total_ns += blind;
  if (blind < w->blind_report_ns) return;
  step->blind = 1;
  step->blind_since_ns = from;
  step->blind_ns = blind;
  uint64_t busy_until = min_u64(input->busy_until_ns, now_ns);
  step->blind_busy_ns = busy_until > from ? busy_until - from : 0;
}

uint64_t lagscope__watchdog_hang_duration(const lagscope__watchdog *w, uint64_t end_ns) {
  uint64_t length = end_ns > w->hang_start_ns ? end_ns - w->hang_start_ns : 0;
  return length > w->hang_suspended_ns ? length - w->hang_suspended_ns : 0;
}

/* The main thread's last sign of life while it owes an answer (a stall is measured from
 * there); 0 if it owes none. */
static uint64_t pending_since(const lagscope__watchdog *w, uint64_t alive_ns) {
  if (!w->heartbeat_mode && !w->ping_outstanding) return 0;
  return max_u64(alive_ns, w->not_before_ns);
}

/* Since when it owes the answer: a ping's post, or its last sign of life in heartbeat mode;
 * 0 if it owes none. */
static uint64_t pending_due(const lagscope__watchdog *w, uint64_t since) {
  if (since == 0 || w->heartbeat_mode) return since;
  return max_u64(since, w->ping_posted_ns);
}

/* The first sign of life after since, when the main thread recorded it (the first after a
 * gap); else alive_ns, the latest, which the monitor sees at most one look after the first. */
static uint64_t first_alive_after(const lagscope__main_signals *signals, uint64_t since,
                                  uint64_t alive_ns) {
  uint64_t resumed = atomic_load_explicit(&signals->resumed_ns, memory_order_acquire);
  return resumed > since && resumed <= alive_ns ? resumed : alive_ns;
}

/* Ends a hang at the main thread's first answer, or at its first sign of life after the stall:
 * a hang never outlives a presented frame or a heartbeat, even when its ping was lost, nor
 * lasts longer because the monitor was busy (building the hang's report) when it ended. */
static void check_answer(lagscope__watchdog *w, const lagscope__main_signals *signals,
                         uint64_t alive_ns, lagscope__watchdog_step *step) {
  uint64_t answered = atomic_load_explicit(&signals->answered_seq, memory_order_acquire);
  int ping_answered = !w->heartbeat_mode && w->ping_outstanding && answered >= w->ping_seq;
  if (ping_answered) w->ping_outstanding = 0;
  if (!w->hang_active) return;
  /* The first sign of life after the start, as the start is the last before it: a frame
   * before the answer ends it there. The answer's own time when alive_ns was read before it. */
  uint64_t end_ns = alive_ns > w->hang_start_ns
                        ? first_alive_after(signals, w->hang_start_ns, alive_ns) : 0;
  if (ping_answered) {
    uint64_t at = atomic_load_explicit(&signals->answered_ns, memory_order_acquire);
    if (at > w->hang_start_ns && (end_ns == 0 || at < end_ns)) end_ns = at;
  }
  if (end_ns == 0) return;
  step->hang_ended = 1;
  step->end_ns = end_ns;
  step->duration_ns = lagscope__watchdog_hang_duration(w, end_ns);
  w->hang_active = 0;
}

/* A stall that ended before the monitor saw it reach the threshold (it looked late, waiting
 * for a CPU or busy with its own work): a hang all the same, over the gap in the main
 * thread's signs of life that it recorded, when that gap began after the last step's look,
 * no later than the answer was owed, and lasted "late" past it (proof that it was stalled,
 * not idle, which answers at once). Opened here, ended by check_answer at the gap's end. */
static void check_unseen_hang(lagscope__watchdog *w, const lagscope__main_signals *signals,
                              uint64_t alive_ns, lagscope__watchdog_step *step) {
  uint64_t since = w->owed_since_ns, due = w->owed_due_ns;
  if (w->hang_active || since == 0 || step->resumed || since < w->not_before_ns) return;
  uint64_t end = atomic_load_explicit(&signals->resumed_ns, memory_order_acquire);
  uint64_t from = atomic_load_explicit(&signals->resumed_from_ns, memory_order_relaxed);
  if (end <= since || end > alive_ns || from < since || from > due || from >= end ||
      end - from < w->threshold_ns || end < due + w->late_ns)
    return;
  w->hang_active = 1;
  w->hang_id++;
  w->hang_start_ns = from;
  w->hang_suspended_ns = 0;
  w->late = 0; /* a hang, not a hitch */
  step->hang_began = 1;
}

/* A ping that the main thread outlived by a whole threshold, showing life (frames, or answers
 * to other pings) without answering it, was lost: the host's queue dropped it (an event loop
 * that drains posted events it does not know, a full queue that discards). Another is due now. */
static void check_lost_ping(lagscope__watchdog *w, uint64_t now_ns, uint64_t alive_ns,
                            lagscope__watchdog_step *step) {
  if (w->heartbeat_mode || !w->ping_outstanding || alive_ns <= w->ping_posted_ns) return;
  /* Lost when the main thread ran on a whole threshold after it was first seen alive since
   * the post: a ping posted during a stall is run by the loop just after the frame that ends
   * the stall, and that frame alone, however long after the post, proves nothing. */
  if (w->ping_alive_ns == 0) w->ping_alive_ns = alive_ns;
  if (alive_ns - w->ping_alive_ns < w->threshold_ns) return;
  w->ping_outstanding = 0;
  w->next_ping_ns = now_ns;
  w->lost_pings++;
  w->lost_ping_seq = w->ping_seq;
  step->ping_lost = 1;
}

void lagscope__watchdog_excuse(lagscope__watchdog *w, uint64_t now_ns) {
  if (now_ns > w->not_before_ns) w->not_before_ns = now_ns;
}

void lagscope__watchdog_run(lagscope__watchdog *w, const lagscope__main_signals *signals,
                            const lagscope__watchdog_input *input, uint64_t now_ns,
                            lagscope__watchdog_step *step) {
  memset(step, 0, sizeof(*step));
  notice_suspension(w, signals, input, now_ns, step);
  uint64_t alive = atomic_load_explicit(&signals->alive_ns, memory_order_acquire);
  check_unseen_hang(w, signals, alive, step);
  check_answer(w, signals, alive, step);
  notice_blindness(w, input, now_ns, step);
  check_lost_ping(w, now_ns, alive, step);

  uint64_t since = pending_since(w, alive), due = pending_due(w, since);
  int idle = atomic_load_explicit(&signals->idle, memory_order_acquire); /* waits for input */
  /* How long the main thread has owed an answer, and shown no life: 0 when it owes none, or
   * is idle. Stalled (late) once it owed it for "late"; the stall counts from its last sign. */
  uint64_t owed_ns = !idle && due != 0 && now_ns >= due ? now_ns - due : 0;
  uint64_t stalled_ns = owed_ns >= w->late_ns ? now_ns - since : 0;
  if (!w->hang_active && !step->hang_began && stalled_ns >= w->threshold_ns) {
    w->hang_active = 1;
    w->hang_id++;
    w->hang_start_ns = since;
    w->hang_suspended_ns = 0;
    step->hang_began = 1;
  }

  /* Late, not hung yet: the stall's first samples, so that its report starts near its start.
   * Late before and not now, without a hang: the main thread answered in time; that stall was
   * a hitch, ended at its first sign of life. */
  int late = !w->hang_active && owed_ns >= w->late_ns;
  step->sample_early = late;
  if (w->late && !late && !w->hang_active && alive > w->late_since_ns) {
    step->late_ended = 1;
    step->late_since_ns = w->late_since_ns;
    step->late_duration_ns = first_alive_after(signals, w->late_since_ns, alive) - w->late_since_ns;
  }
  if (late && !w->late) w->late_since_ns = since;
  w->late = late;
  int was_outstanding = w->ping_outstanding;

  if (!w->heartbeat_mode && !w->ping_outstanding && now_ns >= w->next_ping_ns) {
    uint64_t beat = atomic_load_explicit(&signals->beat_ns, memory_order_acquire);
    int frames_flow = beat + w->late_ns > now_ns && now_ns < input->ping_anyway_ns &&
                      !step->ping_lost; /* a lost one is replaced at once */
    if (frames_flow) { /* spared: looked at again when the next frame is due to be late */
      w->pings_spared++;
      w->next_ping_ns = min_u64(beat + w->late_ns + FRAME_JITTER_NS, input->ping_anyway_ns);
    } else {
      w->ping_seq++;
      w->ping_posted_ns = now_ns;
      w->ping_alive_ns = 0;
      w->ping_outstanding = 1;
      w->next_ping_ns = now_ns + w->interval_ns;
      step->post_ping = 1;
      since = pending_since(w, alive);
      due = pending_due(w, since);
    }
  }
  w->owed_since_ns = !idle && !w->hang_active ? since : 0;
  w->owed_due_ns = due;

  if (w->hang_active)
    step->wake_at_ns = now_ns + w->hang_tick_ns;
  else if (w->heartbeat_mode)
    step->wake_at_ns = since + w->threshold_ns;
  else if (w->ping_outstanding) /* look for the answer at the next ping time, at the latest
                                   when the threshold expires */
    step->wake_at_ns = min_u64(max_u64(since + w->threshold_ns, due + w->late_ns),
                               max_u64(w->next_ping_ns, now_ns + w->interval_ns / 2));
  else
    step->wake_at_ns = w->next_ping_ns;
  /* Late: look every tick. Owing an answer since before this step: look when it becomes late
   * (a ping posted now is looked at by the plan above, answered or not). */
  if (late)
    step->wake_at_ns = min_u64(step->wake_at_ns, now_ns + w->hang_tick_ns);
  else if (!w->hang_active && !idle && due != 0 && due + w->late_ns > now_ns &&
           (w->heartbeat_mode || was_outstanding))
    step->wake_at_ns = min_u64(step->wake_at_ns, due + w->late_ns);
  /* Idle owes nothing: look again at the ping interval, not at a deadline already past. */
  if (idle && !w->hang_active)
    step->wake_at_ns = max_u64(step->wake_at_ns, now_ns + w->interval_ns);
}

void lagscope__watchdog_posted(lagscope__watchdog *w, uint64_t posted_ns) {
  if (!w->ping_outstanding || posted_ns <= w->ping_posted_ns) return;
  w->ping_posted_ns = posted_ns;
  if (w->owed_due_ns != 0 && w->owed_due_ns < posted_ns) w->owed_due_ns = posted_ns;
}

void lagscope__watchdog_post_failed(lagscope__watchdog *w, uint64_t now_ns) {
  w->ping_outstanding = 0;
  w->post_failures++;
  w->next_ping_ns = now_ns + w->interval_ns;
}
