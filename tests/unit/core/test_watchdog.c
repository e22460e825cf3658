/* The watchdog's state machine on a simulated clock: the main thread's signals are written
 * by the test, so every case is exact. */
#include "cases.h"
#include "check.h"
#include "internal.h"

#include <string.h>

#define MS 1000000ull

static lagscope__main_signals signals;

static void answer(uint64_t seq, uint64_t at) {
  atomic_store(&signals.answered_ns, at);
  atomic_store(&signals.answered_seq, seq);
  atomic_store(&signals.alive_ns, at);
}

/* What the monitor would tell the watchdog: its planned wake-up, starvation, pings anyway. */
static lagscope__watchdog_input input;

static void reset(lagscope__watchdog *w, int heartbeat) {
  memset(&signals, 0, sizeof(signals));
  lagscope_config c = lagscope_config_default();
  static int any;
  c.post_main = heartbeat ? NULL : (lagscope_post_main_fn)(void (*)(void))&any;
  lagscope__watchdog_init(w, &c, 1000 * MS, 0);
  input = (lagscope__watchdog_input){.expected_wake_ns = 1000 * MS};
}

/* Runs a step at `now` as the monitor would, waking when asked. */
static void step_at(lagscope__watchdog *w, uint64_t now, lagscope__watchdog_step *s) {
  lagscope__watchdog_run(w, &signals, &input, now, s);
  input.expected_wake_ns = s->wake_at_ns;
}

static void test_prompt_answers_never_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t now = 1000 * MS;
  for (int i = 0; i < 100; i++) {
    step_at(&w, now, &s);
    CHECK(!s.hang_began && !s.hang_ended && !s.resumed);
    if (s.post_ping) answer(w.ping_seq, now + 2 * MS);
    CHECK(s.wake_at_ns > now);
    now = s.wake_at_ns;
  }
  CHECK(w.ping_seq > 10); /* it kept pinging at the interval */
}

static void test_a_stall_is_one_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 1000 * MS;
  step_at(&w, t0, &s);
  CHECK(s.post_ping);
  /* The main thread stalls 600 ms and answers at t0 + 600 ms. */
  uint64_t now = s.wake_at_ns;
  int began = 0, ended = 0;
  uint64_t duration = 0;
  while (now < t0 + 1000 * MS) {
    if (now >= t0 + 600 * MS && atomic_load(&signals.answered_seq) < w.ping_seq)
      answer(w.ping_seq, t0 + 600 * MS);
    step_at(&w, now, &s);
    if (s.hang_began) {
      began++;
      CHECK(now - t0 >= 250 * MS);
      CHECK(now - t0 < 250 * MS + LAGSCOPE__HANG_TICK_NS + 50 * MS);
      CHECK_EQ_INT(w.hang_start_ns, t0);
    }
    if (s.hang_ended) ended++, duration = s.duration_ns;
    if (s.post_ping && now > t0 + 600 * MS) answer(w.ping_seq, now + MS);
    now = s.wake_at_ns;
  }
  CHECK_EQ_INT(began, 1);
  CHECK_EQ_INT(ended, 1);
  CHECK_EQ_INT(duration, 600 * MS);
  CHECK_EQ_INT(w.hang_id, 1);
}

/* Frames after the ping was posted move the hang's start: the main thread was alive then. */
static void test_frames_move_the_start(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 1000 * MS;
  step_at(&w, t0, &s);
  atomic_store(&signals.alive_ns, t0 + 100 * MS); /* a frame, then the stall */
  uint64_t now = s.wake_at_ns;
  for (;;) {
    step_at(&w, now, &s);
    CHECK(!s.resumed);
    if (s.hang_began) break;
    CHECK(now < t0 + 350 * MS);
    now = s.wake_at_ns;
  }
  CHECK_EQ_INT(now, t0 + 350 * MS); /* woken exactly when the threshold expired */
  CHECK_EQ_INT(w.hang_start_ns, t0 + 100 * MS);
}

/* The monitor wakes 2 s late: the process was stopped. No hang, even though the ping is
 * still unanswered when it looks. */
static void test_suspension_is_not_a_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 1000 * MS;
  step_at(&w, t0, &s);
  uint64_t late = s.wake_at_ns + 2000 * MS;
  step_at(&w, late, &s);
  CHECK(s.resumed);
  CHECK(!s.hang_began);
  CHECK_MSG(w.stopped_ns >= 2000 * MS && w.stopped_ns <= 2000 * MS + w.threshold_ns,
            "stopped %llu ms", (unsigned long long)(w.stopped_ns / MS));
  answer(w.ping_seq, late + 1 * MS);
  step_at(&w, s.wake_at_ns, &s);
  CHECK(!s.hang_began && !s.hang_ended);
}

/* A hang during which the process is stopped for 2 s: that time is not in its duration. */
static void test_suspension_inside_a_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 1000 * MS;
  step_at(&w, t0, &s);
  uint64_t now = s.wake_at_ns;
  while (!w.hang_active) step_at(&w, now, &s), now = s.wake_at_ns;
  uint64_t late = now + 2000 * MS;
  step_at(&w, late, &s);
  CHECK(s.resumed && w.hang_active);
  answer(w.ping_seq, late + 100 * MS);
  step_at(&w, late + 110 * MS, &s);
  CHECK(s.hang_ended);
  uint64_t stopped = late - now;
  CHECK_EQ_INT(s.duration_ns, late + 100 * MS - t0 - stopped);
}

/* The same lateness inside a hang, but the monitor was runnable the whole time (a loaded
 * machine starved it): nothing was stopped, the hang keeps every millisecond. */
static void test_starvation_inside_a_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 1000 * MS;
  step_at(&w, t0, &s);
  uint64_t now = s.wake_at_ns;
  while (!w.hang_active) step_at(&w, now, &s), now = s.wake_at_ns;
  uint64_t late = now + 2000 * MS;
  input.starved_ns = 2000 * MS - 5 * MS; /* queued for the CPU nearly all of it */
  step_at(&w, late, &s);
  input.starved_ns = 0;
  CHECK(!s.resumed && w.hang_active);
  /* Counted as starvation, not as stopped time. */
  CHECK_EQ_INT(w.stopped_ns, 0);
  CHECK_EQ_INT(w.starved_total_ns, 2000 * MS - 5 * MS);
  answer(w.ping_seq, late + 100 * MS);
  step_at(&w, late + 110 * MS, &s);
  CHECK(s.hang_ended);
  CHECK_EQ_INT(s.duration_ns, late + 100 * MS - t0);
}

static void test_heartbeat_mode(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 1);
  uint64_t t0 = 1000 * MS;
  atomic_store(&signals.alive_ns, t0);
  step_at(&w, t0, &s);
  CHECK(!s.post_ping);
  CHECK_EQ_INT(s.wake_at_ns, t0 + 2000 * MS / 60); /* when it would be late: two frames */
  atomic_store(&signals.alive_ns, t0 + 200 * MS); /* heartbeats came, then stopped */
  step_at(&w, t0 + 250 * MS, &s);
  CHECK(!s.hang_began);
  CHECK(s.sample_early); /* late by 50 ms: sampled, and again at the next tick */
  CHECK_EQ_INT(s.wake_at_ns, t0 + 260 * MS);
  step_at(&w, t0 + 450 * MS, &s);
  CHECK(s.hang_began);
  step_at(&w, s.wake_at_ns, &s);
  CHECK(!s.hang_ended);
  uint64_t now = s.wake_at_ns;
  while (!s.hang_ended) { /* the monitor looks every hang tick; heartbeats resume at 900 ms */
    if (now >= t0 + 900 * MS) atomic_store(&signals.alive_ns, t0 + 900 * MS);
    step_at(&w, now, &s);
    CHECK(!s.resumed);
    now = s.wake_at_ns;
  }
  CHECK_EQ_INT(s.duration_ns, 700 * MS);
}

/* A monitor that looks late (it was building the hang's report) still ends the hang, and a
 * hitch, where the main thread's first sign of life after the stall was (its resumed_ns), not
 * at the latest heartbeat it sees. */
static void test_a_busy_monitor_ends_a_stall_where_it_ended(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  uint64_t t0 = 1000 * MS;
  for (int resumed_before = 0; resumed_before <= 1; resumed_before++) {
    reset(&w, 1);
    atomic_store(&signals.alive_ns, t0);
    /* 1: a resumption from before the stall, which says nothing about it: the latest sign. */
    if (resumed_before) atomic_store(&signals.resumed_ns, t0 - 5 * MS);
    uint64_t now = t0;
    for (step_at(&w, now, &s); !s.hang_began; step_at(&w, now, &s)) now = s.wake_at_ns;
    /* Heartbeats resume at 700 ms and go on; the monitor, busy with the hang's report until
     * 1200 ms (monitor.c moves its expected wake-up to the work's end), looks then. */
    if (!resumed_before) atomic_store(&signals.resumed_ns, t0 + 700 * MS);
    atomic_store(&signals.alive_ns, t0 + 1190 * MS);
    input.expected_wake_ns = t0 + 1200 * MS;
    lagscope__watchdog_run(&w, &signals, &input, t0 + 1200 * MS, &s);
    CHECK(s.hang_ended && !s.resumed);
    CHECK_EQ_INT(s.duration_ns, (resumed_before ? 1190 : 700) * MS);
  }
  /* A hitch: late from t0, resumed at 90 ms, looked at after 200 ms of heartbeats. */
  reset(&w, 1);
  atomic_store(&signals.alive_ns, t0);
  uint64_t now = t0;
  for (step_at(&w, now, &s); !s.sample_early; step_at(&w, now, &s)) now = s.wake_at_ns;
  atomic_store(&signals.resumed_ns, t0 + 90 * MS);
  atomic_store(&signals.alive_ns, t0 + 200 * MS);
  input.expected_wake_ns = t0 + 210 * MS;
  lagscope__watchdog_run(&w, &signals, &input, t0 + 210 * MS, &s);
  CHECK(s.late_ended && !s.hang_began);
  CHECK_EQ_INT(s.late_duration_ns, 90 * MS);
}

/* A ping from an earlier start, answered late, does not answer the new instance's ping. */
static void test_stale_ping(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  lagscope_config c = lagscope_config_default();
  c.post_main = (lagscope_post_main_fn)(void (*)(void))&s;
  lagscope__watchdog_init(&w, &c, 1000 * MS, 41);
  step_at(&w, 1000 * MS, &s);
  CHECK(s.post_ping);
  CHECK_EQ_INT(w.ping_seq, 42);
  answer(41, 1001 * MS); /* alive at 1001 ms, but ping 42 stays unanswered */
  uint64_t now = s.wake_at_ns;
  while (!s.hang_began && now < 1400 * MS) step_at(&w, now, &s), now = s.wake_at_ns;
  CHECK(s.hang_began);
  CHECK_EQ_INT(w.hang_start_ns, 1001 * MS);
}

/* An app in the background owes no answer: excused, an unanswered ping starts no hang; once
 * the excuses stop, the threshold counts from the last one. */
static void test_excused_is_not_a_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t now = 1000 * MS;
  step_at(&w, now, &s);
  CHECK(s.post_ping); /* never answered */
  for (; now < 2000 * MS; now += 10 * MS) {
    lagscope__watchdog_excuse(&w, now);
    step_at(&w, now, &s);
    CHECK(!s.hang_began);
  }
  uint64_t last_excuse = now - 10 * MS;
  while (!s.hang_began && now < 3000 * MS) step_at(&w, now, &s), now = s.wake_at_ns;
  CHECK(s.hang_began);
  CHECK_EQ_INT(w.hang_start_ns, last_excuse);
}

/* The host's queue drops a ping while frames flow: once the main thread has run on for a whole
 * threshold after the post, the ping is lost; another is posted at once, and no hang began. */
static void test_a_lost_ping_is_posted_again(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t now = 1000 * MS;
  step_at(&w, now, &s);
  CHECK(s.post_ping);
  uint64_t dropped = w.ping_seq, posted = now;
  int lost = 0;
  for (now += 16 * MS; now < 1600 * MS; now += 16 * MS) { /* 60 Hz frames, the ping not run */
    atomic_store(&signals.alive_ns, now - MS);
    step_at(&w, now, &s);
    CHECK(!s.hang_began);
    if (s.ping_lost) {
      lost++;
      CHECK(now - MS - posted >= 250 * MS); /* not before a whole threshold of frames */
      CHECK(s.post_ping && w.ping_seq == dropped + 1);
    }
    if (s.post_ping && w.ping_seq != dropped) answer(w.ping_seq, now + MS); /* run at once */
  }
  CHECK_EQ_INT(lost, 1);
  CHECK_EQ_INT(w.lost_pings, 1);
}

/* A ping posted during a stall is run just after the frame that ends the stall: the monitor
 * may look between the two, and that frame, 600 ms after the post, is no sign that the ping was
 * dropped (a false ELOST, seen under TSan in integration_hang_start-600). */
static void test_a_ping_posted_in_a_stall_is_not_lost(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t now = 1000 * MS;
  atomic_store(&signals.alive_ns, now);
  step_at(&w, now, &s);
  CHECK(s.post_ping);
  uint64_t posted_seq = w.ping_seq;
  /* The stall: no sign of life for 600 ms; the monitor looks on (a hang begins). */
  for (now += 10 * MS; now < 1600 * MS; now += 10 * MS) step_at(&w, now, &s);
  /* The stall's last frame, then the monitor, then the loop runs the ping. */
  atomic_store(&signals.alive_ns, 1600 * MS);
  step_at(&w, 1601 * MS, &s);
  CHECK_MSG(!s.ping_lost, "the ping was called lost at the frame that ended the stall");
  int ended = s.hang_ended; /* the frame ends the hang */
  answer(posted_seq, 1602 * MS);
  step_at(&w, 1610 * MS, &s);
  CHECK(!s.ping_lost && (ended || s.hang_ended));
  CHECK_EQ_INT(w.lost_pings, 0);
}

/* A stall while the ping is lost: the hang ends at the first frame after it, though the ping
 * is never answered. (Before, such a hang lasted until stop.) */
static void test_no_hang_outlives_a_frame(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t now = 1000 * MS;
  step_at(&w, now, &s);
  CHECK(s.post_ping); /* dropped by the host: never answered */
  atomic_store(&signals.alive_ns, 1010 * MS); /* a frame, then a 700 ms stall */
  int began = 0, ended = 0;
  uint64_t duration = 0;
  for (now = s.wake_at_ns; now < 2500 * MS; now = s.wake_at_ns) {
    if (ended) /* frames flow, pings are run */
      atomic_store(&signals.alive_ns, now - MS);
    else if (now >= 1710 * MS) /* the first frame after the stall */
      atomic_store(&signals.alive_ns, 1710 * MS);
    step_at(&w, now, &s);
    began += s.hang_began;
    if (s.hang_ended) ended++, duration = s.duration_ns;
    if (ended && s.post_ping) answer(w.ping_seq, now + MS);
  }
  CHECK_EQ_INT(began, 1);
  CHECK_EQ_INT(ended, 1);
  CHECK_EQ_INT(duration, 700 * MS);
}

/* Heartbeat mode, the main loop waits 2 s for input between idle_begin and idle_end: no hang,
 * and the monitor keeps a steady pace (no wake-up in the past); after the end, the threshold
 * counts from it. */
static void test_idle_is_not_a_hang(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 1);
  atomic_store(&signals.alive_ns, 1000 * MS);
  atomic_store(&signals.idle, 1);
  uint64_t now = 1000 * MS;
  int steps = 0;
  for (; now < 3000 * MS; now = s.wake_at_ns, steps++) {
    step_at(&w, now, &s);
    CHECK(!s.hang_began);
    CHECK(s.wake_at_ns >= now + 10 * MS);
  }
  CHECK(steps < 100);
  atomic_store(&signals.alive_ns, 3000 * MS); /* idle_end, then a stall */
  atomic_store(&signals.idle, 0);
  while (!s.hang_began && now < 4000 * MS) step_at(&w, now, &s), now = s.wake_at_ns;
  CHECK(s.hang_began);
  CHECK_EQ_INT(w.hang_start_ns, 3000 * MS);
}

/* A ping is owed from its real post: the monitor decided it in a step whose slow work (a report
 * written) took 400 ms before the post; the main thread, waiting in its loop since long before
 * (no sign of life for 2 s), answers 1 ms after the post, and the monitor's next look comes
 * before that. No lateness, no hang; before, the ping was owed from the decision: "hang began"
 * at the look, from the last sign of life 2 s earlier. */
static void test_a_ping_is_owed_from_its_post(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  uint64_t t0 = 3000 * MS;
  atomic_store(&signals.alive_ns, 1000 * MS);
  step_at(&w, t0, &s);
  CHECK(s.post_ping);
  uint64_t posted = t0 + 400 * MS;
  lagscope__watchdog_posted(&w, posted);
  lagscope__watchdog_posted(&w, t0 + 100 * MS); /* never earlier */
  CHECK_EQ_INT(w.ping_posted_ns, posted);
  input.expected_wake_ns = posted + MS / 2; /* the monitor looks again at once */
  step_at(&w, posted + MS / 2, &s);
  CHECK_MSG(!s.hang_began && !s.sample_early, "a ping owed from its decision, 400 ms before its "
                                              "post: hang_began %d, sampled early %d",
            s.hang_began, s.sample_early);
  answer(w.ping_seq, posted + MS);
  step_at(&w, s.wake_at_ns, &s);
  CHECK(!s.hang_began && !s.late_ended);
}

/* Post_main mode, the main thread stalls just after answering: the monitor does not wake more
 * often while pings are answered, and samples the stall from 50 ms on, every tick, until the
 * hang begins (its report starts with those samples), at its last answer. */
static void test_a_late_main_thread_is_sampled_early(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  memset(&s, 0, sizeof(s));
  reset(&w, 0);
  uint64_t now = 1000 * MS, stall = 0, first_early = 0, last_answer = 0;
  int wakes = 0, early = 0;
  for (; now < 3000 * MS && !s.hang_began; now = s.wake_at_ns, wakes++) {
    step_at(&w, now, &s);
    if (s.sample_early && first_early == 0) first_early = now;
    early += s.sample_early;
    if (s.post_ping && now < 2000 * MS) answer(w.ping_seq, last_answer = now + MS);
    else if (s.post_ping && stall == 0) stall = now; /* this ping is never answered */
    CHECK(!s.sample_early || stall != 0);
  }
  CHECK(wakes < 2 + 1000 / 50 + 30); /* a ping each 50 ms while answered, ticks while late */
  CHECK(s.hang_began);
  CHECK_EQ_INT(w.hang_start_ns, last_answer); /* its last sign of life, before the post */
  CHECK(first_early - stall <= 60 * MS);
  CHECK(early >= 15); /* every 10 ms from then to the threshold */
}

/* A stall that ends before the threshold ends the lateness once: a hitch, from the main
 * thread's last answer to its answer of the ping it stalled (120 ms after that ping's post);
 * a stall that becomes a hang is no hitch. */
static void test_late_then_answered_is_a_hitch(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  memset(&s, 0, sizeof(s));
  reset(&w, 0);
  uint64_t now = 1000 * MS, posted = 0, last_answer = 0;
  int hitches = 0;
  for (; now < 2000 * MS; now = s.wake_at_ns) {
    if (posted != 0 && now >= posted + 120 * MS && atomic_load(&signals.answered_seq) < w.ping_seq)
      answer(w.ping_seq, posted + 120 * MS);
    step_at(&w, now, &s);
    CHECK(!s.hang_began);
    if (s.late_ended) {
      hitches++;
      CHECK_EQ_INT(s.late_since_ns, last_answer);
      CHECK_EQ_INT(s.late_duration_ns, posted + 120 * MS - last_answer);
    }
    if (s.post_ping && posted == 0 && now >= 1300 * MS) posted = now; /* this one stalls */
    else if (s.post_ping && posted == 0) answer(w.ping_seq, last_answer = now + MS);
    else if (s.post_ping) answer(w.ping_seq, now + MS);
  }
  CHECK_EQ_INT(hitches, 1);
  reset(&w, 0); /* the first ping never answered: a hang, and no hitch */
  for (now = 1000 * MS; now < 2000 * MS; now = s.wake_at_ns) {
    step_at(&w, now, &s);
    CHECK(!s.late_ended);
    if (s.post_ping && now > 1400 * MS) answer(w.ping_seq, now + MS);
  }
}

/* Frames at 60 Hz: no ping is posted while they come (a ping would wake the app's loop), the
 * monitor looks once per two frames, not more; a learning ping still goes out when the monitor
 * asks for one (ping_anyway_ns); when the frames stop, a ping is posted about two budgets
 * after the last one, and a stall is measured from the last frame. */
static void test_frames_spare_pings(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  input.ping_anyway_ns = 1500 * MS; /* one learning ping, then none */
  uint64_t frame_ns = 1000000000ull / 60, next_frame = 1000 * MS, now = 1000 * MS;
  uint64_t stall_at = 3000 * MS, posted_after_stall = 0, last_frame = 0;
  int pings = 0, wakes = 0, began = 0;
  while (now < 4000 * MS) {
    for (; next_frame <= now && next_frame < stall_at; next_frame += frame_ns) {
      last_frame = next_frame;
      atomic_store(&signals.alive_ns, next_frame);
      atomic_store(&signals.beat_ns, next_frame);
    }
    step_at(&w, now, &s);
    wakes += now < stall_at;
    began += s.hang_began;
    if (s.post_ping) {
      pings++;
      if (now < stall_at) {
        answer(w.ping_seq, next_frame); /* run by the loop with the next frame */
        if (now >= 1500 * MS && input.ping_anyway_ns <= now) input.ping_anyway_ns = UINT64_MAX;
      } else if (posted_after_stall == 0) {
        posted_after_stall = now;
      }
    }
    CHECK(s.wake_at_ns > now);
    now = s.wake_at_ns;
  }
  /* The learning one, then the one when the frames stopped. */
  CHECK_MSG(pings == 2, "%d pings", pings);
  CHECK(w.pings_spared > 50);
  printf("%d pings, %d looks in 2 s of frames\n", pings, wakes);
  CHECK_MSG(wakes <= 2000 / 33 + 5, "%d looks in 2 s of frames", wakes); /* 30 a second */
  CHECK_MSG(posted_after_stall > last_frame && posted_after_stall - last_frame <= 2 * frame_ns + 5 * MS,
            "ping %llu ms after the last frame",
            (unsigned long long)((posted_after_stall - last_frame) / MS));
  CHECK_EQ_INT(began, 1);
  CHECK_EQ_INT(w.hang_start_ns, last_frame);
}

/* Frames flow and a ping is lost: its replacement is posted at once, frames or not. */
static void test_a_lost_ping_is_replaced_while_frames_flow(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  reset(&w, 0);
  input.ping_anyway_ns = UINT64_MAX;
  uint64_t now = 1000 * MS;
  step_at(&w, now, &s);
  CHECK(s.post_ping); /* dropped */
  int lost = 0, replaced = 0;
  for (now += 16 * MS; now < 1600 * MS; now += 16 * MS) {
    atomic_store(&signals.alive_ns, now - MS);
    atomic_store(&signals.beat_ns, now - MS);
    step_at(&w, now, &s);
    CHECK(!s.hang_began);
    lost += s.ping_lost;
    if (s.post_ping) {
      CHECK(s.ping_lost); /* the only ping posted while frames flow */
      replaced++;
      answer(w.ping_seq, now + MS);
    }
  }
  CHECK_EQ_INT(lost, 1);
  CHECK_EQ_INT(replaced, 1);
}

/* The monitor looked later than it planned with no hang open (its own slow work, a CPU it
 * waited for): a blind spell, told from when it planned to look, or from the end of a hang
 * that ended in it; not when the process was stopped, nor while a hang stays open. */
static void test_a_blind_monitor_says_so(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  uint64_t t0 = 1000 * MS;
  reset(&w, 0);
  step_at(&w, t0, &s);
  answer(w.ping_seq, t0 + 1 * MS);
  /* Planned to look at the next wake; busy with its own work until 300 ms after it, then
   * 100 ms more waiting for a CPU (starved: no stop). */
  uint64_t planned = s.wake_at_ns;
  input = (lagscope__watchdog_input){.expected_wake_ns = planned + 300 * MS,
                                     .planned_wake_ns = planned,
                                     .busy_until_ns = planned + 300 * MS,
                                     .starved_ns = 100 * MS};
  lagscope__watchdog_run(&w, &signals, &input, planned + 400 * MS, &s);
  CHECK(s.blind && !s.resumed && !s.hang_began);
  CHECK_EQ_INT(s.blind_since_ns, planned);
  CHECK_EQ_INT(s.blind_ns, 400 * MS);
  CHECK_EQ_INT(s.blind_busy_ns, 300 * MS);
  CHECK_EQ_INT(w.blind_total_ns, 400 * MS);
  /* A spell shorter than a quarter of the threshold is counted, not told. */
  uint64_t now = planned + 400 * MS;
  answer(w.ping_seq, now);
  input = (lagscope__watchdog_input){.expected_wake_ns = now + 10 * MS, .planned_wake_ns = now};
  lagscope__watchdog_run(&w, &signals, &input, now + 30 * MS, &s);
  CHECK(!s.blind);
  CHECK_EQ_INT(w.blind_total_ns, 430 * MS);

  /* A stop (a whole threshold late, not starved) is no blindness. */
  reset(&w, 0);
  step_at(&w, t0, &s);
  answer(w.ping_seq, t0 + 1 * MS);
  planned = s.wake_at_ns;
  input = (lagscope__watchdog_input){
      .expected_wake_ns = planned, .planned_wake_ns = planned, .starved_ns = now - planned};
  lagscope__watchdog_run(&w, &signals, &input, planned + 2000 * MS, &s);
  CHECK(s.resumed && !s.blind);
  CHECK_EQ_INT(w.blind_total_ns, 0);

  /* A hang open through the slow work (its own report): not blind while it lasts; blind from
   * the main thread's answer that ended it. */
  reset(&w, 0);
  now = t0;
  for (step_at(&w, now, &s); !s.hang_began; step_at(&w, now, &s)) now = s.wake_at_ns;
  planned = s.wake_at_ns;
  input = (lagscope__watchdog_input){.expected_wake_ns = planned + 500 * MS,
                                     .planned_wake_ns = planned,
                                     .busy_until_ns = planned + 500 * MS};
  lagscope__watchdog_run(&w, &signals, &input, planned + 500 * MS, &s);
  CHECK(!s.blind && !s.hang_ended); /* still hung: the hang's own samples cover it */
  answer(w.ping_seq, planned + 600 * MS);
  uint64_t busy_end = planned + 1500 * MS;
  input = (lagscope__watchdog_input){.expected_wake_ns = busy_end,
                                     .planned_wake_ns = planned + 510 * MS,
                                     .busy_until_ns = busy_end};
  lagscope__watchdog_run(&w, &signals, &input, busy_end, &s);
  CHECK(s.hang_ended && s.blind);
  CHECK_EQ_INT(s.blind_since_ns, planned + 600 * MS);
  CHECK_EQ_INT(s.blind_ns, 900 * MS);
}

/* Issues 45 and 47: a stall is measured from the main thread's last sign of life (its last
 * answer, at t0) to its first after, whatever the monitor did. Its 300 ms stall (threshold
 * 250) ends before a starved monitor looks: a hang of 300 ms from t0, never nothing or a
 * hitch, whether the monitor saw it late first or not at all. An idle loop that answers a
 * ping posted late at once stalled for nothing: no hang. */
static void run_starved(lagscope__watchdog *w, uint64_t planned, uint64_t now,
                        lagscope__watchdog_step *s) {
  input = (lagscope__watchdog_input){
      .expected_wake_ns = planned, .planned_wake_ns = planned, .starved_ns = now - planned};
  lagscope__watchdog_run(w, &signals, &input, now, s);
}

static void test_a_stall_counts_from_the_last_sign_of_life(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  for (int seen_late = 0; seen_late <= 1; seen_late++) {
    reset(&w, 0);
    step_at(&w, 1000 * MS, &s);
    CHECK(s.post_ping);
    uint64_t t0 = 1001 * MS;
    answer(w.ping_seq, t0); /* then the stall, to t0 + 300 ms */
    step_at(&w, s.wake_at_ns, &s);
    CHECK(s.post_ping);
    uint64_t planned = s.wake_at_ns;
    if (seen_late) { /* one look while late, then starved */
      run_starved(&w, planned, planned, &s);
      CHECK(s.sample_early && !s.hang_began);
      planned = s.wake_at_ns;
    }
    answer(w.ping_seq, t0 + 300 * MS);
    atomic_store(&signals.resumed_from_ns, t0); /* the gap, as the main thread records it */
    atomic_store(&signals.resumed_ns, t0 + 300 * MS);
    run_starved(&w, planned, t0 + 250 * MS + 40 * MS + 60 * MS, &s);
    CHECK_MSG(s.hang_began && s.hang_ended && !s.late_ended,
              "seen late %d: began %d ended %d hitch %d of %llu ms", seen_late, s.hang_began,
              s.hang_ended, s.late_ended, (unsigned long long)(s.late_duration_ns / MS));
    CHECK_EQ_INT(w.hang_start_ns, t0);
    CHECK_EQ_INT(s.end_ns, t0 + 300 * MS);
    CHECK_EQ_INT(s.duration_ns, 300 * MS);
    CHECK(!w.hang_active);
    CHECK_EQ_INT(w.hang_id, 1);
  }
  reset(&w, 0); /* idle: answers at t0, and at once to a ping posted 290 ms later */
  step_at(&w, 1000 * MS, &s);
  answer(w.ping_seq, 1001 * MS);
  run_starved(&w, s.wake_at_ns, 1291 * MS, &s);
  CHECK(s.post_ping);
  answer(w.ping_seq, 1291 * MS + MS / 2);
  atomic_store(&signals.resumed_from_ns, 1001 * MS); /* a gap, but no stall */
  atomic_store(&signals.resumed_ns, 1291 * MS + MS / 2);
  run_starved(&w, s.wake_at_ns, 1400 * MS, &s);
  CHECK(!s.hang_began && !s.hang_ended && !s.late_ended);
}

/* Issue 47, seen under ASan with threads starting and ending: the monitor saw a stall late,
 * then slept 640 ms in the kernel (not queued for a CPU), and the main thread came back from
 * its 500 ms stall in the middle of that. Not a stop: the stall is a hang from its last sign of
 * life, not a hitch; and with no stall, that time is blindness, told. A real stop (the main
 * thread shows life only as the monitor wakes) is still excused. */
/* A step at now, planned at planned, none of the lateness queued for a CPU. */
static void run_held(lagscope__watchdog *w, uint64_t planned, uint64_t now,
                     lagscope__watchdog_step *s) {
  input = (lagscope__watchdog_input){.expected_wake_ns = planned, .planned_wake_ns = planned};
  lagscope__watchdog_run(w, &signals, &input, now, s);
}

static void test_a_held_monitor_is_no_stop(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  for (int stalled = 0; stalled <= 1; stalled++) {
    reset(&w, 0);
    step_at(&w, 1000 * MS, &s);
    CHECK(s.post_ping);
    uint64_t t0 = 1001 * MS;
    answer(w.ping_seq, t0);
    step_at(&w, s.wake_at_ns, &s);
    CHECK(s.post_ping);
    uint64_t planned = s.wake_at_ns;
    if (stalled) { /* one look while late */
      run_starved(&w, planned, planned, &s);
      CHECK(s.sample_early);
      planned = s.wake_at_ns;
      atomic_store(&signals.resumed_from_ns, t0);
      atomic_store(&signals.resumed_ns, t0 + 500 * MS);
      atomic_store(&signals.alive_ns, planned + 630 * MS);
    } else {
      answer(w.ping_seq, planned - 5 * MS + 100 * MS); /* an answer in the middle */
    }
    run_held(&w, planned, planned + 640 * MS, &s);
    CHECK_MSG(!s.resumed, "stalled %d: taken for a stop (stopped %llu ms)", stalled,
              (unsigned long long)(w.stopped_ns / MS));
    CHECK_EQ_INT(w.stopped_ns, 0);
    CHECK_EQ_INT(w.held_ns, 640 * MS);
    if (stalled) {
      CHECK_MSG(s.hang_began && s.hang_ended && !s.late_ended, "began %d ended %d hitch %d",
                s.hang_began, s.hang_ended, s.late_ended);
      CHECK_EQ_INT(w.hang_start_ns, t0);
      CHECK_EQ_INT(s.duration_ns, 500 * MS);
    } else {
      CHECK(s.blind && !s.hang_began);
      CHECK_EQ_INT(s.blind_ns, 640 * MS);
    }
  }
  /* Stopped: the main thread answers only as the process runs again, with the monitor. */
  reset(&w, 0);
  step_at(&w, 1000 * MS, &s);
  answer(w.ping_seq, 1001 * MS);
  step_at(&w, s.wake_at_ns, &s);
  uint64_t planned = s.wake_at_ns;
  answer(w.ping_seq, planned + 639 * MS);
  run_held(&w, planned, planned + 640 * MS, &s);
  CHECK(s.resumed && !s.blind && !s.hang_began);
  CHECK_EQ_INT(w.held_ns, 0);
}

/* Issue 47, the watch split's start-up under TSan: the main thread stalled from its start (no
 * sign of life, ever) while the monitor was held asleep past a threshold, not queued for a
 * CPU. The main thread's CPU time ran on meanwhile: no stop, a hang from the start. A real
 * stop holds the main thread's CPU too: excused, whatever the main thread shows after. */
static void held_at_start(lagscope__watchdog *w, lagscope__watchdog_step *s, uint64_t ran) {
  reset(w, 0);
  step_at(w, 1000 * MS, s);
  CHECK(s->post_ping);
  uint64_t planned = s->wake_at_ns;
  input = (lagscope__watchdog_input){.expected_wake_ns = planned, .planned_wake_ns = planned,
                                     .main_cpu_from_ns = 1000 * MS, .main_cpu_ran_ns = ran};
  lagscope__watchdog_run(w, &signals, &input, planned + 640 * MS, s);
}

static void test_main_cpu_proves_a_held_monitor(void) {
  lagscope__watchdog w;
  lagscope__watchdog_step s;
  held_at_start(&w, &s, 500 * MS); /* on the CPU most of the 640 ms */
  CHECK_MSG(!s.resumed, "taken for a stop (stopped %llu ms)",
            (unsigned long long)(w.stopped_ns / MS));
  CHECK_EQ_INT(w.held_ns, 640 * MS);
  CHECK(s.hang_began && w.hang_active);
  CHECK_EQ_INT(w.hang_start_ns, 1000 * MS);
  /* Stopped: it ran at most until the planned wake-up (frozen after), and a margin for the
   * clocks' grain; exactly that much is still a stop. */
  uint64_t ran = 0;
  for (int at_bound = 0; at_bound <= 1; at_bound++) {
    held_at_start(&w, &s, ran);
    CHECK_MSG(s.resumed && !s.hang_began, "ran %llu ms: no stop",
              (unsigned long long)(ran / MS));
    CHECK_EQ_INT(w.stopped_ns, 640 * MS);
    CHECK_EQ_INT(w.held_ns, 0);
    ran = input.expected_wake_ns - input.main_cpu_from_ns + w.blind_report_ns;
  }
  /* Unknown (the OS did not say, from 0): as before, a stop. */
  reset(&w, 0);
  step_at(&w, 1000 * MS, &s);
  uint64_t planned = s.wake_at_ns;
  input = (lagscope__watchdog_input){.expected_wake_ns = planned, .planned_wake_ns = planned,
                                     .main_cpu_ran_ns = 500 * MS};
  lagscope__watchdog_run(&w, &signals, &input, planned + 640 * MS, &s);
  CHECK(s.resumed && !s.hang_began);
}

/* The main thread records its gaps, and the watchdog takes one it did not see for a stall: an
 * idle spell (lagscope_idle_begin to _end) is none. */
static void test_an_idle_spell_is_no_gap(void) {
  lagscope__main_signals *m = lagscope__main_signals_shared();
  atomic_store(&m->gap_ns, 1); /* any gap */
  lagscope_idle_begin();
  uint64_t began = atomic_load(&m->alive_ns), resumed = atomic_load(&m->resumed_ns);
  while (lagscope__now_ns() <= began) {} /* the clock moves on */
  lagscope_idle_end();
  CHECK(atomic_load(&m->alive_ns) > began);
  CHECK_EQ_INT(atomic_load(&m->resumed_ns), resumed);
  atomic_store(&m->gap_ns, 0);
}

static const test_case cases[] = {
    TEST_CASE(an_idle_spell_is_no_gap),
    TEST_CASE(a_stall_counts_from_the_last_sign_of_life),
    TEST_CASE(a_blind_monitor_says_so),
    TEST_CASE(frames_spare_pings),
    TEST_CASE(a_lost_ping_is_replaced_while_frames_flow),
    TEST_CASE(late_then_answered_is_a_hitch),
    TEST_CASE(a_late_main_thread_is_sampled_early),
    TEST_CASE(idle_is_not_a_hang),
    TEST_CASE(a_lost_ping_is_posted_again),
    TEST_CASE(a_ping_posted_in_a_stall_is_not_lost),
    TEST_CASE(no_hang_outlives_a_frame),
    TEST_CASE(prompt_answers_never_hang),
    TEST_CASE(a_stall_is_one_hang),
    TEST_CASE(frames_move_the_start),
    TEST_CASE(suspension_is_not_a_hang),
    TEST_CASE(suspension_inside_a_hang),
    TEST_CASE(starvation_inside_a_hang),
    TEST_CASE(heartbeat_mode),
    TEST_CASE(a_busy_monitor_ends_a_stall_where_it_ended),
    TEST_CASE(stale_ping),
    TEST_CASE(excused_is_not_a_hang),
    TEST_CASE(a_held_monitor_is_no_stop),
    TEST_CASE(a_ping_is_owed_from_its_post),
    TEST_CASE(main_cpu_proves_a_held_monitor),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
