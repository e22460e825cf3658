/* Frame math on synthetic timestamps: steady 60 Hz, 120 Hz, and a 200 ms hitch; an
 * event-driven app's idle gaps, a stall after idleness, a frame in progress during a hang. */
#include "cases.h"
#include "check.h"
#include "internal.h"

#define MS 1000000ull
#define SECOND 1000000000ull
#define START (10 * SECOND) /* any monotonic origin */

static void feed(lagscope__frame_meter *m, uint64_t *t, int frames, uint64_t period_ns) {
  for (int i = 0; i < frames; i++) {
    *t += period_ns;
    lagscope__frame_meter_add(m, *t);
  }
}

static void steady(uint32_t hz) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t period = SECOND / hz, t = START;
  lagscope__frame_meter_init(&m, hz);
  feed(&m, &t, (int)hz * 3, period);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.refresh_hz, hz, 0.5);
  CHECK_NEAR(out.fps, hz, 1);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_NEAR(out.hitch_ms_per_s, 0, 1e-9);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_GOOD);
  CHECK_EQ_INT(out.total_frames, hz * 3);
  CHECK_EQ_INT(out.recent_count, LAGSCOPE_RECENT_FRAMES);
  CHECK_NEAR(out.recent_ms[LAGSCOPE_RECENT_FRAMES - 1], 1000.0 / hz, 0.01);
  /* Every frame time falls in the bucket named for its rate: 120 Hz ≤ 10 ms, 60 Hz ≤ 20. */
  int bucket = hz == 120 ? 0 : 2;
  CHECK_EQ_INT(out.histogram[bucket], hz * 3 - 1);
}

/* A display that drops from 120 to 60 Hz (ProMotion): told, the meter judges 16.7 ms frames
 * against 60 Hz and finds none dropped; against 120 Hz each would have missed one refresh. */
static void test_rate_change(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START;
  lagscope__frame_meter_init(&m, 120);
  lagscope__frame_meter_set_refresh_hz(&m, 60);
  feed(&m, &t, 180, SECOND / 60);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.refresh_hz, 60, 0.5);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_NEAR(out.cadence_hz, 0, 1e-9); /* they follow the display */
  /* The same frames, the display still at 120 Hz: a steady 60 of the app's own, judged by it
   * (as a game paced slower than the display is), and said so. */
  lagscope__frame_meter_init(&m, 120);
  t = START;
  feed(&m, &t, 180, SECOND / 60);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.refresh_hz, 120, 0.5);
  CHECK_NEAR(out.cadence_hz, 60, 0.5);
  CHECK_EQ_INT(out.dropped, 0);
}

/* A game at 35 fps by design (Chocolate Doom's tic rate) on a 60 Hz display, paced by a timer
 * (28.6 ms frames) or by vsync (a mix of 1 and 2 refreshes: 10 of 16.7 ms, 25 of 33.3 ms a
 * second): its own pace, 35 Hz, against which no frame is late; every frame against 60 Hz was
 * (hitch band "bad" all the time, issue 32, section 5). A 200 ms hitch in it is judged against
 * the 28.6 ms pace. A 60 fps app that misses some refreshes stays judged by the display. */
static void test_own_cadence(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START, tic = SECOND / 35;
  lagscope__frame_meter_init(&m, 60);
  feed(&m, &t, 105, tic);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.cadence_hz, 35, 0.5);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_NEAR(out.hitch_ms_per_s, 0, 1e-9);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_GOOD);
  CHECK_NEAR(out.fps, 35, 1);

  lagscope__frame_meter_init(&m, 60);
  t = START;
  for (int second = 0; second < 3; second++)
    for (int i = 0; i < 35; i++) { /* 1 refresh every 3.5 frames on average */
      t += (i % 7 == 0 || i % 7 == 4 ? 1 : 2) * (SECOND / 60);
      lagscope__frame_meter_add(&m, t);
    }
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.cadence_hz, 35, 1.5);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_GOOD);

  lagscope__frame_meter_init(&m, 60);
  t = START;
  feed(&m, &t, 70, tic);
  t += 200 * MS;
  lagscope__frame_meter_add(&m, t);
  feed(&m, &t, 20, tic);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.cadence_hz, 35, 0.5);
  CHECK_EQ_INT(out.dropped, 6); /* 200 ms is 7 tics */
  CHECK_NEAR(out.hitch_ms_per_s, 200.0 - 1000.0 / 35, 0.5);

  lagscope__frame_meter_init(&m, 60);
  t = START;
  for (int i = 0; i < 120; i++) { /* every fifth frame misses a refresh */
    t += (i % 5 == 0 ? 2 : 1) * (SECOND / 60);
    lagscope__frame_meter_add(&m, t);
  }
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.cadence_hz, 0, 1e-9);
  CHECK(out.dropped >= 9);
}

/* Jitter of ±20 % never counts as a dropped frame or a hitch. */
static void test_jitter(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START;
  lagscope__frame_meter_init(&m, 60);
  for (int i = 0; i < 120; i++) {
    t += (i % 2 ? 13 : 20) * MS;
    lagscope__frame_meter_add(&m, t);
  }
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_EQ_INT(out.total_dropped, 0);
  CHECK_NEAR(out.hitch_ms_per_s, 0, 1e-9);
}

static void test_hitch_200ms(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t period = SECOND / 60, t = START;
  lagscope__frame_meter_init(&m, 60);
  feed(&m, &t, 120, period);
  t += 200 * MS; /* one frame took 200 ms */
  lagscope__frame_meter_add(&m, t);
  feed(&m, &t, 30, period);
  lagscope__frame_meter_report(&m, t, &out);
  /* 200 ms is 12 periods: the display showed 11 refreshes without a new frame. */
  CHECK_EQ_INT(out.dropped, 11);
  CHECK_EQ_INT(out.total_dropped, 11);
  CHECK_NEAR(out.hitch_ms_per_s, 200.0 - 1000.0 / 60, 0.01);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_BAD);
  /* The last second holds the 30 frames after it, the hitch frame and the frames before it
   * that ended within the second. */
  CHECK_NEAR(out.fps, 1 + 30 + (1000 - 200 - 30 * 1000.0 / 60) / (1000.0 / 60), 1);
  CHECK_EQ_INT(out.histogram[6], 1); /* (100, 250] ms */
  CHECK_NEAR(out.recent_ms[out.recent_count - 31], 200.0, 0.01);
  /* A second later, with frames flowing again, the hitch has left the window. */
  feed(&m, &t, 60, period);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_GOOD);
  CHECK_EQ_INT(out.total_dropped, 11);
}

static void test_bands(void) {
  CHECK_EQ_INT(lagscope__hitch_band(10.0), LAGSCOPE_HITCH_GOOD);
  CHECK_EQ_INT(lagscope__hitch_band(10.1), LAGSCOPE_HITCH_WARNING);
  CHECK_EQ_INT(lagscope__hitch_band(25.0), LAGSCOPE_HITCH_WARNING);
  CHECK_EQ_INT(lagscope__hitch_band(50.0), LAGSCOPE_HITCH_CRITICAL);
  CHECK_EQ_INT(lagscope__hitch_band(50.1), LAGSCOPE_HITCH_BAD);
}

/* The ring: the monitor reads what the main thread pushed, and counts what it missed. */
static void test_ring(void) {
  static lagscope__frame_ring r;
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  lagscope__frame_meter_init(&m, 60);
  uint64_t t = START;
  for (int i = 0; i < LAGSCOPE__FRAME_RING + 100; i++) lagscope__frame_ring_push(&r, t += SECOND / 60);
  lagscope__frame_meter_drain(&m, &r);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_EQ_INT(out.lost_timestamps, 100);
  CHECK_EQ_INT(out.total_frames, LAGSCOPE__FRAME_RING);
  CHECK_NEAR(out.fps, 60, 1);
}

/* The monitor's idle gap at 60 Hz with the default ping (50 ms) and lateness (33 ms). */
#define IDLE_GAP (50 * MS + 33 * MS + SECOND / 60)

/* An event-driven app: a few frames, 2 s of nothing while its main thread answers in time,
 * a few frames. The gap is idle: no frame time, no dropped frame, no hitch; while it lasts
 * the meter says idle, not 0 FPS. */
static void test_idle_gap(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START, period = SECOND / 60;
  lagscope__frame_meter_init(&m, 60);
  lagscope__frame_meter_set_idle_gap(&m, IDLE_GAP);
  feed(&m, &t, 5, period);
  lagscope__frame_meter_report(&m, t + 500 * MS, &out);
  CHECK(out.idle);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_GOOD);
  t += 2 * SECOND;
  lagscope__frame_meter_add(&m, t);
  feed(&m, &t, 5, period);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK(!out.idle);
  CHECK_EQ_INT(out.dropped, 0);
  CHECK_EQ_INT(out.total_dropped, 0);
  CHECK_NEAR(out.hitch_ms_per_s, 0, 1e-9);
  for (uint32_t k = 0; k < out.recent_count; k++) CHECK(out.recent_ms[k] < 20);
  CHECK_EQ_INT(out.histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1], 0);
  /* A gap shorter than the idle gap is a slow frame as before: 80 ms, four refreshes missed. */
  t += 80 * MS;
  lagscope__frame_meter_add(&m, t);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_EQ_INT(out.dropped, 4);
  CHECK_NEAR(out.recent_ms[out.recent_count - 1], 80, 0.01);
}

/* Frames timed by their presentation (lagscope-run's GTK 4 on weston): the last one a few ms
 * ahead of the report's now (the repaint it shows in). The program draws: not idle. */
static void test_presented_ahead(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START, period = SECOND / 40;
  lagscope__frame_meter_init(&m, 60);
  lagscope__frame_meter_set_idle_gap(&m, IDLE_GAP);
  feed(&m, &t, 30, period);
  lagscope__frame_meter_report(&m, t - 4 * MS, &out);
  CHECK(!out.idle);
  CHECK_EQ_INT(out.total_frames, 30);
}

/* Idle for 5 s, then a click whose handler stalls 600 ms (the watchdog saw it late from its
 * ping's post, 20 ms in): the frame after it took the stall, not the 5.6 s since the last one. */
static void test_stall_after_idle(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START, period = SECOND / 60;
  lagscope__frame_meter_init(&m, 60);
  lagscope__frame_meter_set_idle_gap(&m, IDLE_GAP);
  feed(&m, &t, 3, period);
  uint64_t click = t + 5 * SECOND, late_from = click + 20 * MS, answered = click + 600 * MS;
  lagscope__frame_meter_late(&m, late_from, answered);
  t = answered + period;
  lagscope__frame_meter_add(&m, t);
  lagscope__frame_meter_report(&m, t, &out);
  double frame_ms = out.recent_ms[out.recent_count - 1];
  CHECK_NEAR(frame_ms, 580 + 2 * 1000.0 / 60, 0.5);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_BAD);
  CHECK(!out.idle);
}

/* A hang in progress: no frame comes, and the meter says the frame in progress is late, not
 * idle and not GOOD; when the hang ends the next frame takes it. */
static void test_frame_in_progress_during_hang(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START, period = SECOND / 60;
  lagscope__frame_meter_init(&m, 60);
  lagscope__frame_meter_set_idle_gap(&m, IDLE_GAP);
  feed(&m, &t, 120, period);
  uint64_t hang_from = t + 5 * MS;
  lagscope__frame_meter_late_now(&m, hang_from);
  lagscope__frame_meter_report(&m, t + 700 * MS, &out);
  CHECK(!out.idle);
  CHECK_MSG(out.hitch_ms_per_s > 600, "%.1f ms/s", out.hitch_ms_per_s);
  CHECK_EQ_INT(out.band, LAGSCOPE_HITCH_BAD);
  CHECK(out.dropped >= 40);
  lagscope__frame_meter_late_now(&m, 0);
  lagscope__frame_meter_late(&m, hang_from, t + 800 * MS);
  t += 800 * MS + period;
  lagscope__frame_meter_add(&m, t);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_NEAR(out.recent_ms[out.recent_count - 1], 795 + 1000.0 / 60 + 1000.0 / 60, 0.5);
}

/* Ten seconds at 60 Hz, reported every 500 ms as the monitor does: each second's window
 * counts 60 frames, and a rate change mid-way (to 144 Hz) is counted within a second. */
static void test_window_slides(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START;
  lagscope__frame_meter_init(&m, 60);
  for (int report = 0; report < 20; report++) {
    feed(&m, &t, 30, SECOND / 60);
    lagscope__frame_meter_report(&m, t, &out);
    if (report > 0)
      CHECK_MSG(out.fps >= 59 && out.fps <= 61, "report %d: %.0f fps", report, out.fps);
  }
  for (int report = 0; report < 4; report++) {
    feed(&m, &t, 72, SECOND / 144);
    lagscope__frame_meter_report(&m, t, &out);
  }
  CHECK_MSG(out.fps >= 143 && out.fps <= 145, "%.0f fps at 144 Hz", out.fps);
  CHECK_EQ_INT(out.total_frames, 20 * 30 + 4 * 72);
}

/* Past the window's 2048 frames a second (an uncapped loop): the oldest are forgotten, the
 * count stays near the bound, and every frame is in the total. */
static void test_over_2_khz(void) {
  lagscope__frame_meter m;
  lagscope_frame_metrics out;
  uint64_t t = START;
  lagscope__frame_meter_init(&m, 60);
  feed(&m, &t, 3000, SECOND / 3000);
  lagscope__frame_meter_report(&m, t, &out);
  CHECK_MSG(out.fps >= LAGSCOPE__FRAME_WINDOW - LAGSCOPE__FRAME_WINDOW / 32 &&
                out.fps <= LAGSCOPE__FRAME_WINDOW,
            "%.0f fps", out.fps);
  CHECK_EQ_INT(out.total_frames, 3000);
  CHECK_EQ_INT(out.dropped, 0);
}

static void test_steady_60(void) { steady(60); }
static void test_steady_120(void) { steady(120); }

static const test_case cases[] = {
    TEST_CASE(idle_gap),
    TEST_CASE(stall_after_idle),
    TEST_CASE(presented_ahead),
    TEST_CASE(frame_in_progress_during_hang),
    TEST_CASE(steady_60),
    TEST_CASE(steady_120),
    TEST_CASE(rate_change),
    TEST_CASE(own_cadence),
    TEST_CASE(jitter),
    TEST_CASE(hitch_200ms),
    TEST_CASE(bands),
    TEST_CASE(ring),
    TEST_CASE(window_slides),
    TEST_CASE(over_2_khz),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }

