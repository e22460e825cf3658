/*
 * bench_blocked — taking the stack of a thread blocked in the kernel without a signal
 * (core/linux/capture_blocked.c: /proc/self/task/TID/syscall, a checked copy; capture_walk.c:
 * a walk that scans where registers are unknown) beside the signal capture that a thread on
 * the CPU gets, and beside the same blocked threads taken by signal, the way every thread was
 * taken before. Figures:
 *   1. latency: a thread blocked 64 frames deep in nanosleep, raw (request -> stack in hand)
 *      and full (with the walk), median and p99, beside the signal capture of a thread spinning
 *      64 frames deep, interleaved sample by sample;
 *   2. what a capture costs the blocked thread: the CPU time it ran (schedstat) and the
 *      EINTRs its nanosleep returned, per capture, blocked vs by signal;
 *   3. capturing every thread at a hang's start with 50 and 500 threads, all blocked on a
 *      condition variable but 2 spinning: wall time, blocked vs every thread by signal;
 *   4. signals that cut a system call short in the runs that were not forced to signal (the
 *      window between the look at a thread's state and the signal's arrival).
 * Usage: bench_blocked [--rounds N] [--captures N] [--threads-max N]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include "internal.h"
#include "linux/linux.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 64
#define TIMEOUT_NS (100u * 1000u * 1000u)

/* ---- victims ---- */

static atomic_int stop_spinning;
static _Atomic uint64_t sleeper_eintr;

__attribute__((noinline)) static void spin_at_bottom(void) {
  while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed)) {}
}

__attribute__((noinline)) static void sleep_at_bottom(void) {
  for (;;) {
    struct timespec ts = {3600, 0};
    if (nanosleep(&ts, NULL) != 0 && errno == EINTR) atomic_fetch_add(&sleeper_eintr, 1);
  }
}

__attribute__((noinline)) static void recurse(int depth, void (*bottom)(void)) {
  volatile int pad = depth;
  if (depth > 1) recurse(depth - 1, bottom);
  else bottom();
  __asm__ volatile("" : : "r"(&pad) : "memory");
}

typedef struct victim {
  void (*bottom)(void);
  int depth;
  _Atomic int32_t tid;
} victim;

static void *victim_main(void *arg) {
  victim *v = arg;
  atomic_store(&v->tid, lagscope__thread_id());
  recurse(v->depth, v->bottom);
  return NULL;
}

/* Starts a victim and waits until it is where it should be: blocked or on the CPU. */
static int32_t start_victim(victim *v, int blocked) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  if (pthread_create(&t, &attr, victim_main, v) != 0) return 0;
  pthread_attr_destroy(&attr);
  while (atomic_load(&v->tid) == 0) usleep(100);
  for (int i = 0; i < 10000; i++) {
    lagscope__linux_thread_state st;
    if (lagscope__linux_read_thread_state(atomic_load(&v->tid), &st) == 0 &&
        (blocked ? !st.running && st.nr >= 0 : 1))
      return atomic_load(&v->tid);
    usleep(100);
  }
  return 0;
}

/* ---- 1. latency ---- */

enum { BLOCKED_RAW, BLOCKED_FULL, SIGNAL_RAW, SIGNAL_FULL, KINDS };
static const char *kind_names[KINDS] = {"blocked raw", "blocked full", "signal raw", "signal full"};

typedef struct latency {
  double median, p99;
} latency;

static latency summarize(double *v, size_t n) {
  latency l = {bench_median(v, n), 0};
  size_t i = (size_t)((double)n * 0.99);
  l.p99 = v[i < n ? i : n - 1];
  return l;
}

static int measure_latency(int32_t sleeper, int32_t spinner, unsigned rounds, latency out[KINDS],
                           int methods[KINDS], uint32_t depth[KINDS]) {
  double *samples[KINDS];
  for (int k = 0; k < KINDS; k++) samples[k] = calloc(rounds, sizeof(double));
  static lagscope__stack stack;
  int rc = 0;
  for (unsigned r = 0; r < rounds && rc == 0; r++) {
    for (int j = 0; j < KINDS && rc == 0; j++) {
      int k = (int)((r + (unsigned)j) % KINDS);
      int32_t tid = k < SIGNAL_RAW ? sleeper : spinner;
      uint64_t t0 = bench_now_ns();
      if (k == BLOCKED_RAW || k == SIGNAL_RAW) {
        rc = lagscope__capture_raw(tid, TIMEOUT_NS, &methods[k]);
      } else {
        rc = lagscope__capture_stack(tid, &stack, TIMEOUT_NS);
        methods[k] = stack.method;
        depth[k] = stack.depth;
      }
      samples[k][r] = (double)(bench_now_ns() - t0);
      if (rc != 0) fprintf(stderr, "bench_blocked: %s failed (%d)\n", kind_names[k], rc);
    }
  }
  for (int k = 0; k < KINDS; k++) {
    if (rc == 0) out[k] = summarize(samples[k], rounds);
    free(samples[k]);
  }
  return rc;
}

/* ---- 2. the blocked thread's cost ---- */

static uint64_t on_cpu_ns(int32_t tid) {
  char path[64], text[128];
  snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
  FILE *f = fopen(path, "r");
  unsigned long long ns = 0;
  if (f != NULL) {
    if (fgets(text, sizeof text, f) != NULL) sscanf(text, "%llu", &ns);
    fclose(f);
  }
  return ns;
}

typedef struct victim_cost {
  double cpu_ns_per_capture;
  double eintr_per_capture;
} victim_cost;

static victim_cost measure_cost(int32_t sleeper, unsigned captures, int by_signal) {
  static lagscope__stack stack;
  lagscope__capture_force_signal(by_signal);
  uint64_t cpu0 = on_cpu_ns(sleeper), eintr0 = atomic_load(&sleeper_eintr);
  for (unsigned i = 0; i < captures; i++) {
    lagscope__capture_stack(sleeper, &stack, TIMEOUT_NS);
    usleep(200); /* the victim goes back to sleep */
  }
  lagscope__capture_force_signal(0);
  usleep(10000);
  victim_cost c = {(double)(on_cpu_ns(sleeper) - cpu0) / captures,
                   (double)(atomic_load(&sleeper_eintr) - eintr0) / captures};
  return c;
}

/* ---- 3. every thread at a hang's start ---- */

static pthread_mutex_t park_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int parked;

static void park_at_bottom(void) {
  pthread_mutex_lock(&park_mutex);
  atomic_fetch_add(&parked, 1);
  for (;;) pthread_cond_wait(&park_cond, &park_mutex);
}

static double capture_all_ms(int32_t *tids, unsigned n, int by_signal, unsigned *complete) {
  static lagscope__stack stack;
  lagscope__capture_force_signal(by_signal);
  *complete = 0;
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < n; i++) {
    lagscope__capture_stack(tids[i], &stack, 20u * 1000u * 1000u);
    *complete += stack.walk == LAGSCOPE__WALK_COMPLETE;
  }
  double ms = (double)(bench_now_ns() - t0) / 1e6;
  lagscope__capture_force_signal(0);
  return ms;
}

int main(int argc, char **argv) {
  unsigned rounds = bench_arg_uint(argc, argv, "--rounds", 2000, 10);
  unsigned captures = bench_arg_uint(argc, argv, "--captures", 500, 10);
  unsigned threads_max = bench_arg_uint(argc, argv, "--threads-max", 500, 50);
  if (lagscope__capture_init(0) != 0) {
    fprintf(stderr, "bench_blocked: capture unavailable\n");
    return 1;
  }
  static victim sleeper_v = {sleep_at_bottom, DEPTH, 0}, spinner_v = {spin_at_bottom, DEPTH, 0};
  int32_t sleeper = start_victim(&sleeper_v, 1), spinner = start_victim(&spinner_v, 0);
  if (sleeper == 0 || spinner == 0) {
    fprintf(stderr, "bench_blocked: the victims did not start\n");
    return 1;
  }
  uint64_t interrupted = lagscope__capture_interrupted_syscalls(), forced = 0;

  latency lat[KINDS];
  int methods[KINDS] = {0};
  uint32_t depth[KINDS] = {0};
  if (measure_latency(sleeper, spinner, rounds, lat, methods, depth) != 0) return 1;
  char title[256], value[64], base[64], ratio[16];
  snprintf(title, sizeof title,
           "capture of a thread blocked %d frames deep in nanosleep (no signal) vs the signal\n"
           "  capture of a thread spinning %d frames deep (%u samples each, interleaved)",
           DEPTH, DEPTH, rounds);
  bench_table_begin(title);
  const char *figures[KINDS] = {"raw", "full (with the walk)", "", ""};
  for (int k = BLOCKED_RAW; k <= BLOCKED_FULL; k++) {
    for (int p = 0; p < 2; p++) {
      double v = p == 0 ? lat[k].median : lat[k].p99, b = p == 0 ? lat[k + 2].median : lat[k + 2].p99;
      char figure[96];
      snprintf(figure, sizeof figure, "blocked capture %s, %s", figures[k], p == 0 ? "median" : "p99");
      snprintf(value, sizeof value, "%.2f us", v / 1e3);
      snprintf(base, sizeof base, "%.2f us by signal", b / 1e3);
      bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, v, b), "-");
    }
  }
  snprintf(value, sizeof value, "%u frames, %s", depth[BLOCKED_FULL],
           lagscope__method_name(methods[BLOCKED_FULL]));
  snprintf(base, sizeof base, "%u frames, %s", depth[SIGNAL_FULL],
           lagscope__method_name(methods[SIGNAL_FULL]));
  bench_row("depth and method of the last full capture", value, base, "-", "≥ 64, blocked");

  victim_cost blocked = measure_cost(sleeper, captures, 0);
  uint64_t before_forced = lagscope__capture_interrupted_syscalls();
  victim_cost signalled = measure_cost(sleeper, captures, 1);
  forced += lagscope__capture_interrupted_syscalls() - before_forced;
  snprintf(title, sizeof title,
           "what a capture costs the blocked thread (%u captures, then %u by signal)", captures,
           captures);
  bench_table_begin(title);
  snprintf(value, sizeof value, "%.2f us", blocked.cpu_ns_per_capture / 1e3);
  snprintf(base, sizeof base, "%.2f us by signal", signalled.cpu_ns_per_capture / 1e3);
  bench_row("its CPU time per capture", value, base, "-", "0 (it never runs)");
  snprintf(value, sizeof value, "%.3f", blocked.eintr_per_capture);
  snprintf(base, sizeof base, "%.3f by signal", signalled.eintr_per_capture);
  bench_row("EINTR from its nanosleep per capture", value, base, "-", "0");

  bench_table_begin("every thread captured at a hang's start (all blocked on a condition "
                    "variable but 2 spinning)");
  int32_t *tids = calloc(threads_max, sizeof(int32_t));
  victim *vs = calloc(threads_max, sizeof(victim));
  unsigned started = 0;
  for (unsigned n = 50; n <= threads_max; n = n == 50 ? threads_max : threads_max + 1) {
    for (; started < n; started++) {
      int spins = started < 2;
      vs[started] = (victim){spins ? spin_at_bottom : park_at_bottom, 8, 0};
      tids[started] = start_victim(&vs[started], !spins);
      if (tids[started] == 0) return 1;
    }
    unsigned complete_blocked, complete_signal;
    double ms_blocked = capture_all_ms(tids, n, 0, &complete_blocked);
    before_forced = lagscope__capture_interrupted_syscalls();
    double ms_signal = capture_all_ms(tids, n, 1, &complete_signal);
    forced += lagscope__capture_interrupted_syscalls() - before_forced;
    char figure[64];
    snprintf(figure, sizeof figure, "%u threads", n);
    snprintf(value, sizeof value, "%.1f ms (%u complete)", ms_blocked, complete_blocked);
    snprintf(base, sizeof base, "%.1f ms (%u) all by signal", ms_signal, complete_signal);
    bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, ms_blocked, ms_signal),
              "-");
  }
  uint64_t all = lagscope__capture_interrupted_syscalls() - interrupted;
  printf("(system calls cut short by a capture's signal: %llu when threads are taken by their "
         "state, %llu when every capture was forced to signal)\n",
         (unsigned long long)(all - forced), (unsigned long long)forced);
  atomic_store(&stop_spinning, 1);
  free(tids); /* the victims stay: their threads are parked on them until the process ends */
  return 0;
}
