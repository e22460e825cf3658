/*
 * bench_main_thread — what lagscope costs the app's main thread, in ns per call.
 *
 * The main thread only ever runs lagscope_frame() and the ping answer lagscope hands to the
 * host's post_main hook (lagscope.h promises: a clock read and a few atomic stores). Both are
 * timed here against two baselines measured in the same run, interleaved run by run so that
 * the machine's noise hits all of them alike: a bare clock_gettime(CLOCK_MONOTONIC) (the floor
 * for anything that reads the clock) and an empty non-inlined call (the floor for any call).
 *
 * Usage: bench_main_thread [--runs N] [--calls N]   (median of N runs of --calls calls each)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include <lagscope.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ---- the ping mailbox ----------------------------------------------------------------------
 * Our post_main hook runs on lagscope's monitor thread and leaves the ping here; the benchmark
 * thread (the "main thread") picks it up between timed runs. lagscope never posts a second
 * ping while one is unanswered, so one slot is enough: the hook writes fn/arg, then sets
 * pending (release); the main thread reads them after seeing pending (acquire) and clears
 * pending BEFORE answering, so that the next ping, which can only come after the answer, is
 * never lost. */
static lagscope_main_fn mailbox_fn;
static void *mailbox_arg;
static atomic_int mailbox_pending;

/* The ping the benchmark answers over and over: the latest one received. */
static lagscope_main_fn ping_fn;
static void *ping_arg;

static int capture_post(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  mailbox_fn = fn;
  mailbox_arg = arg;
  atomic_store_explicit(&mailbox_pending, 1, memory_order_release);
  return 0;
}

/* Answers a newly posted ping, if any. Called between timed runs so that the watchdog always
 * sees a responsive main thread: a false hang would start stack sampling (signals to this
 * thread) and spoil the measurement. Returns 1 if a ping was waiting. */
static int answer_pending_ping(void) {
  if (!atomic_load_explicit(&mailbox_pending, memory_order_acquire)) return 0;
  ping_fn = mailbox_fn;
  ping_arg = mailbox_arg;
  atomic_store_explicit(&mailbox_pending, 0, memory_order_release);
  ping_fn(ping_arg);
  return 1;
}

/* Waits for lagscope's first ping (one ping interval, 50 ms by default). */
static int wait_first_ping(uint64_t timeout_ns) {
  uint64_t deadline = bench_now_ns() + timeout_ns;
  while (bench_now_ns() < deadline) {
    if (answer_pending_ping()) return 0;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return -1;
}

/* ---- the subjects --------------------------------------------------------------------------
 * One loop per subject rather than one loop through a function pointer: an extra indirect
 * call per iteration would be part of every figure. Each returns ns per call for one run. */

/* noinline and an empty asm keep the compiler from deleting the call it is the floor of. */
__attribute__((noinline)) static void empty_call(void) { __asm__ volatile(""); }

static double run_frame(unsigned calls) {
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) lagscope_frame();
  return (double)(bench_now_ns() - t0) / calls;
}

static double run_ping_answer(unsigned calls) {
  lagscope_main_fn fn = ping_fn; /* as a host's queue would: an indirect call */
  void *arg = ping_arg;
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) fn(arg);
  return (double)(bench_now_ns() - t0) / calls;
}

static double run_clock(unsigned calls) {
  struct timespec ts;
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)(bench_now_ns() - t0) / calls;
}

static double run_empty(unsigned calls) {
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) empty_call();
  return (double)(bench_now_ns() - t0) / calls;
}

/* The host's per-frame HUD cost: take the latest image (most frames: no new one). */
static double run_hud_take(unsigned calls) {
  lagscope_hud_image image;
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) lagscope_hud_take(&image);
  return (double)(bench_now_ns() - t0) / calls;
}

enum { FRAME, PING, HUD_TAKE, CLOCK, EMPTY, SUBJECTS };
static double (*const subjects[SUBJECTS])(unsigned) = {run_frame, run_ping_answer, run_hud_take,
                                                      run_clock, run_empty};

/* Runs every subject `runs` times, round-robin, and writes each one's median to medians[]. */
static int measure(unsigned runs, unsigned calls, double medians[SUBJECTS]) {
  double *samples = calloc((size_t)runs * SUBJECTS, sizeof *samples);
  if (samples == NULL) return -1;
  for (int s = 0; s < SUBJECTS; s++) subjects[s](calls); /* warm caches and branch predictors */
  for (unsigned r = 0; r < runs; r++) {
    for (int s = 0; s < SUBJECTS; s++) {
      answer_pending_ping();
      samples[(size_t)s * runs + r] = subjects[s](calls);
    }
  }
  for (int s = 0; s < SUBJECTS; s++) medians[s] = bench_median(samples + (size_t)s * runs, runs);
  free(samples);
  return 0;
}

static void print_table(unsigned runs, unsigned calls, const double m[SUBJECTS]) {
  char title[128], value[32], base[48], ratio[16];
  snprintf(title, sizeof title, "main-thread cost, ns per call (median of %u runs x %u calls)",
           runs, calls);
  bench_table_begin(title);

  snprintf(value, sizeof value, "%.2f ns", m[FRAME]);
  snprintf(base, sizeof base, "%.2f ns clock_gettime", m[CLOCK]);
  bench_row("lagscope_frame()", value, base, bench_ratio(ratio, sizeof ratio, m[FRAME], m[CLOCK]),
            "≤ 100 ns");

  snprintf(value, sizeof value, "%.2f ns", m[PING]);
  bench_row("ping answer: fn(arg) from post_main", value, base,
            bench_ratio(ratio, sizeof ratio, m[PING], m[CLOCK]), "≤ 100 ns");

  snprintf(value, sizeof value, "%.2f ns", m[HUD_TAKE]);
  snprintf(base, sizeof base, "%.2f ns empty call", m[EMPTY]);
  bench_row("lagscope_hud_take(): the HUD's buffer", value, base,
            bench_ratio(ratio, sizeof ratio, m[HUD_TAKE], m[EMPTY]), "-");

  snprintf(value, sizeof value, "%.2f ns", m[CLOCK]);
  bench_row("baseline: clock_gettime(CLOCK_MONOTONIC)", value, base,
            bench_ratio(ratio, sizeof ratio, m[CLOCK], m[EMPTY]), "-");

  snprintf(value, sizeof value, "%.2f ns", m[EMPTY]);
  bench_row("baseline: empty non-inlined call", value, "-", "-", "-");
}

/* A false hang during the run would have put stack-sampling signals into the timings. */
static void print_hangs_note(void) {
  lagscope_metrics m;
  if (lagscope_metrics_latest(&m) == 0 && m.hangs > 0) {
    printf("note: lagscope reported %llu hang(s) during the run; figures may be disturbed\n",
           (unsigned long long)m.hangs);
  }
}

int main(int argc, char **argv) {
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 31, 1);
  unsigned calls = bench_arg_uint(argc, argv, "--calls", 100000, 1);

  lagscope_config config = lagscope_config_default();
  config.server_port = 0, config.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  config.post_main = capture_post;
  int rc = lagscope_start(&config);
  if (rc == LAGSCOPE_DISABLED) {
    printf("bench_main_thread: skipped, lagscope is compiled out of this build\n");
    return BENCH_SKIP;
  }
  if (rc != 0) {
    fprintf(stderr, "bench_main_thread: lagscope_start: %s\n", lagscope_strerror(rc));
    return 1;
  }
  if (wait_first_ping(2000000000u) != 0) {
    fprintf(stderr, "bench_main_thread: no ping through post_main within 2 s\n");
    lagscope_stop();
    return 1;
  }

  lagscope_hud_image image; /* the HUD draws its first image at once, off this thread */
  uint64_t hud_deadline = bench_now_ns() + 2000000000u;
  while (lagscope_hud_take(&image) != 0 && bench_now_ns() < hud_deadline) answer_pending_ping();

  double medians[SUBJECTS];
  if (measure(runs, calls, medians) != 0) {
    fprintf(stderr, "bench_main_thread: out of memory\n");
    lagscope_stop();
    return 1;
  }
  print_table(runs, calls, medians);
  print_hangs_note();
  lagscope_stop();
  return 0;
}
