/*
 * bench_capture — capturing a stalled thread's stack (internal.h, core/linux/capture.c) beside
 * the floor it is built on, a bare timer round trip to the same thread, measured in the same
 * run. The victim is a thread that recursed 64 deep through a noinline function and spins at
 * the bottom doing fixed units of work, counting them. Figures:
 *   - capture latency, request -> raw stack in hand (lagscope__capture_raw: registers and
 *     32 KiB of stack copied by the signal handler), median and p99, beside the floor: our own
 *     handler on another real-time signal that only stores a word and wakes a futex, raised the
 *     same way (a one-shot timer on the victim's CPU clock, which fires at its next tick on a
 *     CPU) and waited on the same way (futex). Also, for scale, the same handler reached by a
 *     signal sent straight away (rt_tgsigqueueinfo), the way captures went before: ~100 times
 *     faster, but it cuts short a call the thread has just entered. The full capture
 *     (lagscope__capture_stack: the same, then libunwind walks the copy) is shown too, with its
 *     depth, checked to reach the victim's 64 recursive frames. The four are interleaved
 *     sample by sample so that the machine's noise hits them alike;
 *   - the victim's lost work per capture, on each path of the handler's copy: the checked one
 *     (the victim thread) and the in-place one (then main() itself is the victim, 64 frames
 *     deep, and a thread of its own captures it). A capturer takes a capture at each absolute
 *     1 ms tick (one that waits for the victim's own tick skips the ticks it overran); runs
 *     with bare timer signals instead, the floor, and runs with the same ticks and nothing,
 *     alternate with them to cancel drift. Counted in the victim's own CPU time, which its
 *     signal's delivery and the handler are charged to, and not in wall time, which on a
 *     loaded machine is mostly other processes': its stall (the CPU time of the gap in its
 *     work the signal made, less the unit of work the gap held) and its lost work over a run
 *     (expected units at the rate without signals, minus those done, per capture). With the
 *     handler's own time and bytes on each path;
 *   - gdb -p PID -batch -ex 'thread apply all bt' against a forked process running the same
 *     victim, for scale (skipped with a note when gdb is missing or cannot attach).
 * A few component costs (a getpid syscall, process_vm_readv vs memcpy of 32 KiB) are printed
 * to show where the capture's time goes above the floor.
 *
 * Usage: bench_capture [--rounds N] [--millis N] [--trials N] [--gdb-runs N]
 *   --rounds: latency samples of each kind; --millis: length of one lost-time run;
 *   --trials: lost-time runs with captures (and with bare signals); --gdb-runs: gdb timings
 *   (0 skips gdb)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include "internal.h"
#include "linux/capture.h" /* the snapshot: what the handler copied, how long it ran */
#include "linux/linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEPTH 64                        /* the victim's recursion */
#define WORK_UNIT 32                    /* xorshift steps per counted unit of work */
#define TIMEOUT_NS (100u * 1000u * 1000u) /* a capture or round trip that takes this is broken */
#define GAP_NS (100u * 1000u)           /* between two latency samples: the victim runs on */
#define TICK_NS (1000u * 1000u)         /* at most 1000 captures/s */
#define FLOOR_SIGNAL_OFFSET 5           /* SIGRTMIN + 5: lagscope's capture uses + 3 */
#define COPY_BYTES (32u * 1024u)        /* what capture_signal.c's handler copies */

/* ---- the victim: 64 frames deep, then units of work, counted -------------------------------- */
static _Atomic uint64_t work_done;      /* units finished; written by the victim only */
static atomic_int victim_stop;
static _Atomic int32_t victim_tid;
static _Atomic uintptr_t recursion_return; /* the return address of a recursive call */

/* The victim's gaps: a unit of work that took more than GAP_MIN_NS of its own CPU time over
 * the usual was interrupted (by a signal, or by an interrupt); its start and end (wall clock)
 * and the CPU time it took go into a ring that the capturer reads after each run, to find the
 * gap each of its signals caused. CPU time, not wall time: on a loaded machine the victim is
 * preempted for milliseconds, alike with and without captures, and that is not lost to us.
 * The kernel's delivery of a signal and the handler run on the victim's CPU time. */
#define GAP_MIN_NS 1000u
#define GAPS_MAX 65536u /* far more than one run's gaps */
typedef struct gap {
  uint64_t start, end, cpu;
} gap;
static gap gaps[GAPS_MAX];
static _Atomic uint32_t gaps_len; /* ever recorded; gaps[i % GAPS_MAX] */

static uint64_t own_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t spin(void) {
  uint64_t x = 88172645463325252ull, n = 0, before = bench_now_ns(), cpu_before = own_cpu_ns();
  uint64_t usual = UINT64_MAX; /* the least CPU time a unit took */
  while (!atomic_load_explicit(&victim_stop, memory_order_relaxed)) {
    for (int i = 0; i < WORK_UNIT; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    atomic_store_explicit(&work_done, ++n, memory_order_relaxed);
    uint64_t now = bench_now_ns(), cpu = own_cpu_ns(); /* part of the unit */
    if (cpu - cpu_before < usual) usual = cpu - cpu_before;
    if (cpu - cpu_before > usual + GAP_MIN_NS) {
      uint32_t i = atomic_load_explicit(&gaps_len, memory_order_relaxed);
      gaps[i % GAPS_MAX] = (gap){before, now, cpu - cpu_before};
      atomic_store_explicit(&gaps_len, i + 1, memory_order_release);
    }
    before = now, cpu_before = cpu;
  }
  return x;
}

/* Not a tail call, and the asm after it keeps the compiler from turning it into a loop. */
__attribute__((noinline)) static uint64_t recurse(int depth) {
  volatile uint64_t pad = (uint64_t)depth;
  uint64_t r;
  if (depth > 1) {
    r = recurse(depth - 1);
  } else {
    /* This frame's return address is the one every recursive call returns to. */
    atomic_store(&recursion_return, (uintptr_t)__builtin_return_address(0));
    r = spin();
  }
  __asm__ volatile("" : : "r"(&pad) : "memory");
  return r + pad;
}

static void *victim_main(void *arg) {
  (void)arg;
  atomic_store(&victim_tid, (int32_t)syscall(SYS_gettid));
  uint64_t r = recurse(DEPTH);
  __asm__ volatile("" : : "r"(r));
  return NULL;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) { /* a signal: sleep the rest */
  }
}

/* Starts the victim and waits until it works at the bottom of its recursion. */
static int start_victim(pthread_t *t) {
  if (pthread_create(t, NULL, victim_main, NULL) != 0) return -1;
  uint64_t deadline = bench_now_ns() + 2000000000u;
  while (atomic_load(&work_done) == 0) {
    if (bench_now_ns() > deadline) return -1;
    sleep_ns(1000000u);
  }
  return 0;
}

/* ---- the floor: a bare timer round trip to the same thread ---------------------------------- */
static _Atomic uint32_t floor_word;
static int floor_signal;
static pid_t own_pid;
static uid_t own_uid;

static void floor_handler(int sig, siginfo_t *info, void *context) {
  (void)sig, (void)context;
  if (info->si_code != SI_QUEUE && info->si_code != SI_TIMER) return;
  int saved_errno = errno;
  atomic_store_explicit(&floor_word, (uint32_t)info->si_value.sival_int, memory_order_release);
  syscall(SYS_futex, &floor_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  errno = saved_errno;
}

static int floor_init(void) {
  floor_signal = SIGRTMIN + FLOOR_SIGNAL_OFFSET;
  own_pid = getpid();
  own_uid = getuid();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = floor_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART; /* as capture_signal.c's handler */
  sigfillset(&sa.sa_mask);
  return sigaction(floor_signal, &sa, NULL);
}

/* Waits for the handler's answer to generation. 0 when it came. */
static int floor_wait(uint32_t generation) {
  uint64_t deadline = bench_now_ns() + TIMEOUT_NS;
  for (;;) {
    uint32_t word = atomic_load_explicit(&floor_word, memory_order_acquire);
    if (word == generation) return 0;
    if (bench_now_ns() > deadline) return -1;
    struct timespec abs = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    syscall(SYS_futex, &floor_word, FUTEX_WAIT_BITSET_PRIVATE, word, &abs, NULL,
            FUTEX_BITSET_MATCH_ANY);
  }
}

static uint32_t next_generation(void) {
  static uint32_t generation;
  return generation = generation % 0x7fffffffu + 1;
}

/* A one-shot timer on tid's CPU clock, as capture_signal.c arms it, raises the signal; waits for the handler's answer. 0 when it came. */
static int floor_round_trip(int32_t tid) {
  uint32_t generation = next_generation();
  struct sigevent event;
  memset(&event, 0, sizeof event);
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = floor_signal;
  event.sigev_value.sival_int = (int)generation;
  event._sigev_un._tid = tid;
  int timer;
  clockid_t clock = lagscope__linux_thread_cpu_clock(tid);
  if (syscall(SYS_timer_create, clock, &event, &timer) != 0) return -1;
  struct itimerspec once = {{0, 0}, {0, 1}};
  int rc = syscall(SYS_timer_settime, timer, 0, &once, NULL) == 0 ? floor_wait(generation) : -1;
  syscall(SYS_timer_delete, timer);
  return rc;
}

/* The signal sent straight away (the way before), waited on the same way. 0 when it came. */
static int direct_signal_round_trip(int32_t tid) {
  uint32_t generation = next_generation();
  siginfo_t info;
  memset(&info, 0, sizeof info);
  info.si_signo = floor_signal;
  info.si_code = SI_QUEUE;
  info.si_pid = own_pid;
  info.si_uid = own_uid;
  info.si_value.sival_int = (int)generation;
  if (syscall(SYS_rt_tgsigqueueinfo, own_pid, tid, floor_signal, &info) != 0) return -1;
  return floor_wait(generation);
}

/* ---- latency -------------------------------------------------------------------------------- */
enum { FLOOR = 0, RAW, FULL, DIRECT, KINDS };

typedef struct latency {
  double median, p99; /* ns */
} latency;

static latency summarize(double *samples, size_t n) {
  latency l = {bench_median(samples, n), 0.0}; /* sorts */
  size_t i = (size_t)((double)n * 0.99);
  l.p99 = samples[i < n ? i : n - 1];
  return l;
}

typedef struct walk_check {
  lagscope__stack stack;     /* the last full capture */
  unsigned recursive_frames; /* frames that return into recurse from recurse: 63 expected */
  unsigned bad;              /* full captures with fewer than DEPTH frames or a failed walk */
} walk_check;

static unsigned count_recursive(const lagscope__stack *s) {
  uintptr_t ret = atomic_load(&recursion_return);
  unsigned n = 0;
  for (uint32_t i = 0; i < s->depth; i++) n += s->frames[i] == ret;
  return n;
}

/* A capture or round trip that got no answer within TIMEOUT_NS: a loaded machine's (the
 * kernel's CPU-clock timer fires only at a tick that finds the victim on a CPU). Counted and
 * left out, not a failure, unless most of them go so. */
static unsigned unanswered;

/* The handler's own time in each capture by the signal (claim to answer: registers and the
 * stack copy, no delivery, no wake), and the bytes it copied. */
static double *handler_samples;
static size_t handler_len, copied_bytes;

static void note_handler(void) {
  const lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
  if (handler_samples != NULL && s->handler_ns != 0) {
    handler_samples[handler_len++] = (double)s->handler_ns;
    copied_bytes = s->stack_len;
  }
}

static int unanswered_rc(int kind, int rc) {
  return kind == FLOOR || kind == DIRECT ? rc == -1 : rc == LAGSCOPE_ENOENT;
}

/* One sample of each kind per round, in a rotating order. Returns -1 when one failed. */
static int measure_latency(int32_t tid, unsigned rounds, latency out[KINDS], walk_check *check) {
  double *samples[KINDS];
  size_t n[KINDS] = {0};
  int rc = 0;
  for (int k = 0; k < KINDS; k++) samples[k] = calloc(rounds, sizeof(double));
  for (int k = 0; k < KINDS; k++)
    if (samples[k] == NULL) rc = -1;
  memset(check, 0, sizeof *check);
  for (unsigned r = 0; r < rounds && rc == 0; r++) {
    for (int j = 0; j < KINDS && rc == 0; j++) {
      int kind = (int)((r + (unsigned)j) % KINDS);
      sleep_ns(GAP_NS);
      uint64_t t0 = bench_now_ns();
      if (kind == FLOOR) {
        rc = floor_round_trip(tid);
      } else if (kind == DIRECT) {
        rc = direct_signal_round_trip(tid);
      } else if (kind == RAW) {
        int method;
        rc = lagscope__capture_raw(tid, TIMEOUT_NS, &method);
      } else {
        rc = lagscope__capture_stack(tid, &check->stack, TIMEOUT_NS);
      }
      if (rc != 0 && unanswered_rc(kind, rc) && ++unanswered <= rounds) {
        rc = 0;
        continue;
      }
      samples[kind][n[kind]++] = (double)(bench_now_ns() - t0);
      if ((kind == RAW || kind == FULL) && rc == 0) note_handler();
      if (kind == FULL && rc == 0) {
        int walk = check->stack.walk;
        if (check->stack.depth < DEPTH ||
            (walk != LAGSCOPE__WALK_COMPLETE && walk != LAGSCOPE__WALK_TRUNCATED)) {
          check->bad++;
          fprintf(stderr, "bench_capture: bad capture: rc %d, walk %s, depth %u, pc %#lx\n", rc,
                  lagscope__walk_name(walk), check->stack.depth,
                  (unsigned long)(check->stack.depth ? check->stack.frames[0] : 0));
        }
      }
      if (rc != 0)
        fprintf(stderr, "bench_capture: %s failed (%d)\n",
                kind == FLOOR    ? "timer round trip"
                : kind == DIRECT ? "signal round trip"
                : kind == RAW    ? "raw capture"
                                 : "capture",
                rc);
    }
  }
  for (int k = 0; k < KINDS; k++)
    if (n[k] == 0) rc = -1;
  if (rc == 0) {
    check->recursive_frames = count_recursive(&check->stack);
    for (int k = 0; k < KINDS; k++) out[k] = summarize(samples[k], n[k]);
  }
  for (int k = 0; k < KINDS; k++) free(samples[k]);
  return rc == 0 ? 0 : -1;
}

/* ---- the victim's lost time ------------------------------------------------------------------ */
enum { NONE = 0, WITH_FLOOR, WITH_CAPTURE, MODES };

typedef struct rate_run {
  double rate;      /* units of work per ns of the victim's CPU time */
  double seconds;   /* the victim's CPU time over the run */
  unsigned actions; /* signals or captures that completed */
  int failed;
} rate_run;

/* Each action's stall of the victim: the CPU time of its gap, less the unit of work the gap
 * also held. Appended to stalls (room for one per tick). */
typedef struct stall_log {
  double *ns;
  size_t len;
  double *handler_ns;  /* WITH_CAPTURE: the handler's own time in each capture */
  size_t handler_len, bytes, in_place; /* the bytes it copied last; captures copied in place */
} stall_log;

/* After a capture in a lost-time run: the handler's time and copy, and whether the copy was
 * made in place (its stack pointer in the main thread's stack mapping). */
static void note_path(stall_log *log) {
  const lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
  uintptr_t low, high, sp = s->registers[LAGSCOPE__CFI_SP];
  lagscope__capture_main_stack(&low, &high);
  if (s->handler_ns == 0) return;
  log->handler_ns[log->handler_len++] = (double)s->handler_ns;
  log->bytes = s->stack_len;
  log->in_place += sp >= low && sp < high;
}

/* One unit of work, as the last run without actions measured it: a gap holds one unit of work
 * besides the time the victim lost, and that unit is not lost. */
static double unit_now_ns;

static void add_stalls(const uint64_t *sent, const uint64_t *returned, unsigned actions,
                       uint32_t first_gap, stall_log *log) {
  uint32_t last_gap = atomic_load_explicit(&gaps_len, memory_order_acquire);
  if (last_gap - first_gap > GAPS_MAX) first_gap = last_gap - GAPS_MAX; /* overwritten */
  uint32_t g = first_gap;
  for (unsigned a = 0; a < actions; a++) {
    while (g < last_gap && gaps[g % GAPS_MAX].end <= sent[a]) g++; /* gaps before it */
    /* The signal's gap: the last that began before the handler woke the capturer. The ones
     * before it in the window are the machine's (the window holds the wait for the victim's
     * tick, milliseconds); every action's window holds them alike. */
    double stalled = 0;
    for (uint32_t h = g; h < last_gap && gaps[h % GAPS_MAX].start < returned[a]; h++)
      stalled = (double)gaps[h % GAPS_MAX].cpu - unit_now_ns;
    log->ns[log->len++] = stalled > 0 ? stalled : 0;
  }
}

static void add_ns(struct timespec *t, uint64_t ns) {
  t->tv_nsec += (long)ns;
  while (t->tv_nsec >= 1000000000L) {
    t->tv_nsec -= 1000000000L;
    t->tv_sec++;
  }
}

/* The victim's CPU time: its lost work is counted against the time it ran, so that the other
 * processes of a loaded machine, which take its CPU away alike with and without captures, do
 * not count. The kernel's delivery of a signal and the handler are charged to it. */
static uint64_t cpu_now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs `millis` ms of absolute 1 ms ticks, doing `mode`'s action at each, and measures the
 * victim's work rate over that time. */
static rate_run measure_rate(int32_t tid, int mode, unsigned millis, uint64_t *sent,
                             uint64_t *returned, stall_log *log) {
  rate_run run = {0};
  lagscope__stack stack;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  add_ns(&next, TICK_NS);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
  }
  uint32_t first_gap = atomic_load(&gaps_len);
  clockid_t victim_clock = lagscope__linux_thread_cpu_clock(tid);
  uint64_t c0 = atomic_load(&work_done), t0 = cpu_now_ns(victim_clock), end_wall = bench_now_ns();
  uint64_t end = end_wall + (uint64_t)millis * TICK_NS;
  for (unsigned i = 0; i < millis; i++) {
    do add_ns(&next, TICK_NS); /* the ticks an action overran are skipped */
    while ((uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec < bench_now_ns());
    if ((uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec > end) break;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
    }
    int rc = 0, skipped = 0;
    uint64_t before = bench_now_ns();
    if (mode == WITH_FLOOR) rc = floor_round_trip(tid);
    if (mode == WITH_CAPTURE) rc = lagscope__capture_stack(tid, &stack, TIMEOUT_NS);
    if (rc != 0 && unanswered_rc(mode == WITH_FLOOR ? FLOOR : FULL, rc) && ++unanswered <= millis)
      rc = 0, skipped = 1; /* see unanswered */
    if (rc != 0) run.failed = 1;
    if (mode != NONE && rc == 0 && !skipped) {
      sent[run.actions] = before;
      returned[run.actions++] = bench_now_ns();
      if (mode == WITH_CAPTURE) note_path(log);
    }
  }
  uint64_t c1 = atomic_load(&work_done), t1 = cpu_now_ns(victim_clock);
  sleep_ns(100000u); /* the last gap is recorded */
  if (mode != NONE) add_stalls(sent, returned, run.actions, first_gap, log);
  run.seconds = (double)(t1 - t0) / 1e9;
  run.rate = (double)(c1 - c0) / (double)(t1 - t0);
  if (mode == NONE && c1 > c0) unit_now_ns = 1.0 / run.rate;
  return run;
}

typedef struct lost_time {
  double per_action_ns[MODES]; /* median over trials; [NONE] unused */
  double rate_ratio[MODES];    /* median rate with / rate without */
  latency stall[MODES];        /* the victim's gap per action, less its unit of work */
  double unit_ns;              /* one unit of work, without captures */
  double handler_ns;           /* median of the captures' handler_ns */
  size_t bytes, in_place, captures; /* the handler's last copy; captures copied in place */
} lost_time;

/* Lost ns per action for a run, against the mean of the runs without actions around it. */
static double lost_ns(const rate_run *with, double rate_without) {
  if (with->actions == 0 || rate_without <= 0) return 0.0;
  return (1.0 - with->rate / rate_without) * with->seconds * 1e9 / with->actions;
}

/* N F N C N F N C ... N: each run with actions is compared with its two neighbours. */
static int measure_lost_time(int32_t tid, unsigned millis, unsigned trials, lost_time *out) {
  unsigned runs = 4 * trials + 1;
  rate_run *r = calloc(runs, sizeof *r);
  double *lost[MODES], *ratio[MODES], *units = calloc(2 * trials + 1, sizeof(double));
  uint64_t *sent = calloc(millis, sizeof(uint64_t)), *returned = calloc(millis, sizeof(uint64_t));
  stall_log logs[MODES];
  int rc = r != NULL && units != NULL && sent != NULL && returned != NULL ? 0 : -1;
  for (int m = 0; m < MODES; m++) {
    logs[m] = (stall_log){calloc((size_t)trials * millis, sizeof(double)), 0,
                          calloc((size_t)trials * millis, sizeof(double)), 0, 0, 0};
    if (logs[m].ns == NULL || logs[m].handler_ns == NULL) rc = -1;
    lost[m] = calloc(trials, sizeof(double));
    ratio[m] = calloc(trials, sizeof(double));
    if (lost[m] == NULL || ratio[m] == NULL) rc = -1;
  }
  for (unsigned i = 0; i < runs && rc == 0; i++) {
    int mode = i % 2 == 0 ? NONE : (i / 2) % 2 == 0 ? WITH_FLOOR : WITH_CAPTURE;
    r[i] = measure_rate(tid, mode, millis, sent, returned, &logs[mode]);
    if (r[i].failed) {
      fprintf(stderr, "bench_capture: a %s failed during the lost-time runs\n",
              mode == WITH_FLOOR ? "timer round trip" : "capture");
      rc = -1;
    }
  }
  if (rc == 0) {
    unsigned n[MODES] = {0};
    for (unsigned i = 0; i < runs; i += 2) units[i / 2] = 1.0 / r[i].rate;
    for (unsigned i = 1; i < runs; i += 2) {
      int mode = (i / 2) % 2 == 0 ? WITH_FLOOR : WITH_CAPTURE;
      double without = (r[i - 1].rate + r[i + 1].rate) / 2.0;
      lost[mode][n[mode]] = lost_ns(&r[i], without);
      ratio[mode][n[mode]++] = r[i].rate / without;
    }
    out->unit_ns = bench_median(units, 2 * trials + 1);
    for (int m = WITH_FLOOR; m < MODES; m++) {
      out->per_action_ns[m] = bench_median(lost[m], n[m]);
      out->rate_ratio[m] = bench_median(ratio[m], n[m]);
      out->stall[m] = summarize(logs[m].ns, logs[m].len);
    }
    stall_log *c = &logs[WITH_CAPTURE];
    out->handler_ns = bench_median(c->handler_ns, c->handler_len);
    out->bytes = c->bytes, out->in_place = c->in_place, out->captures = c->handler_len;
  }
  for (int m = 0; m < MODES; m++) {
    free(logs[m].handler_ns);
    free(logs[m].ns);
    free(lost[m]);
    free(ratio[m]);
  }
  free(units);
  free(sent);
  free(returned);
  free(r);
  return rc;
}

/* The main thread as the victim (the in-place path), measured from a thread of its own. */
typedef struct main_run {
  unsigned millis, trials;
  lost_time *out;
  int rc;
} main_run;

static void *measure_main_victim(void *arg) {
  main_run *run = arg;
  uint64_t deadline = bench_now_ns() + 2000000000u;
  run->rc = -1;
  while (atomic_load(&work_done) == 0 && bench_now_ns() < deadline) sleep_ns(1000000u);
  if (atomic_load(&work_done) != 0)
    run->rc = measure_lost_time(atomic_load(&victim_tid), run->millis, run->trials, run->out);
  atomic_store(&victim_stop, 1);
  return NULL;
}

static int measure_main_thread(unsigned millis, unsigned trials, lost_time *out) {
  main_run run = {millis, trials, out, -1};
  atomic_store(&victim_stop, 0);
  atomic_store(&work_done, 0);
  pthread_t measurer;
  if (pthread_create(&measurer, NULL, measure_main_victim, &run) != 0) return -1;
  victim_main(NULL); /* until the measurer stops it */
  pthread_join(measurer, NULL);
  if (run.rc == 0 && out->in_place < out->captures)
    fprintf(stderr, "bench_capture: %zu of %zu captures of the main thread were not in place\n",
            out->captures - out->in_place, out->captures);
  return run.rc;
}

/* ---- where the time goes: the handler's syscalls, alone, on this thread ----------------------- */
typedef struct components {
  double getpid_ns, vm_readv_ns, memcpy_ns; /* medians */
  double handler_ns;                         /* median of the captures' handler_ns */
} components;

static uint8_t copy_source[COPY_BYTES], copy_target[COPY_BYTES];

static double time_per_call(int what, unsigned calls) {
  uint64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < calls; i++) {
    if (what == 0) {
      __asm__ volatile("" : : "r"(getpid()));
    } else if (what == 1) {
      struct iovec local = {copy_target, COPY_BYTES}, remote = {copy_source, COPY_BYTES};
      if (process_vm_readv(own_pid, &local, 1, &remote, 1, 0) != (ssize_t)COPY_BYTES) return -1;
    } else {
      memcpy(copy_target, copy_source, COPY_BYTES);
      __asm__ volatile("" : : "r"(copy_target) : "memory");
    }
  }
  return (double)(bench_now_ns() - t0) / calls;
}

static int measure_components(components *out) {
  enum { RUNS = 31, CALLS = 200 };
  double samples[3][RUNS];
  memset(copy_source, 1, sizeof copy_source);
  memset(copy_target, 2, sizeof copy_target);
  for (int r = 0; r < RUNS; r++)
    for (int w = 0; w < 3; w++)
      if ((samples[w][r] = time_per_call(w, CALLS)) < 0) return -1;
  out->getpid_ns = bench_median(samples[0], RUNS);
  out->vm_readv_ns = bench_median(samples[1], RUNS);
  out->memcpy_ns = bench_median(samples[2], RUNS);
  out->handler_ns = handler_len > 0 ? bench_median(handler_samples, handler_len) : 0.0;
  return 0;
}

/* ---- gdb against a forked victim -------------------------------------------------------------- */
typedef struct gdb_result {
  int ran;          /* 0: skipped, see note */
  char note[160];
  double median_ns;
  unsigned frames;  /* the deepest frame number gdb printed, + 1 */
} gdb_result;

static int find_gdb(char *path, size_t size) {
  const char *env = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", env != NULL ? env : "/usr/bin:/bin");
  for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir != NULL;
       dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, size, "%s/gdb", dir);
    if (access(path, X_OK) == 0) return 0;
  }
  return -1;
}

/* The victim process: the same 64-deep spinning thread; ends when the benchmark does. */
static pid_t fork_victim_process(void) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(0);
  pthread_t t;
  if (start_victim(&t) != 0) _exit(1);
  for (;;) pause();
}

/* Runs gdb once; returns its wall time in ns, or -1. frames: deepest "#N" + 1 in its output. */
static double run_gdb(const char *gdb, pid_t victim, unsigned *frames) {
  char pid_text[32];
  snprintf(pid_text, sizeof pid_text, "%d", (int)victim);
  char *args[] = {(char *)gdb, "-nx", "-batch", "-p", pid_text, "-ex", "thread apply all bt",
                  NULL};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  unsetenv("DEBUGINFOD_URLS"); /* no network lookups of debug info */
  pid_t child;
  uint64_t t0 = bench_now_ns();
  int rc = posix_spawn(&child, gdb, &actions, NULL, args, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return -1;
  }
  /* Reads the output as it comes (a full pipe would stall gdb), keeping the deepest "#N". */
  char buf[8192], line[512];
  size_t line_len = 0;
  unsigned deepest = 0;
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] != '\n') {
        if (line_len + 1 < sizeof line) line[line_len++] = buf[i];
        continue;
      }
      line[line_len] = '\0';
      unsigned number;
      if (sscanf(line, "#%u ", &number) == 1 && number + 1 > deepest) deepest = number + 1;
      line_len = 0;
    }
  }
  close(pipe_fds[0]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  double elapsed = (double)(bench_now_ns() - t0);
  *frames = deepest;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && deepest > 0 ? elapsed : -1;
}

static void measure_gdb(unsigned runs, gdb_result *out) {
  memset(out, 0, sizeof *out);
  char gdb[4200];
  if (runs == 0) {
    snprintf(out->note, sizeof out->note, "gdb skipped (--gdb-runs 0)");
    return;
  }
  if (find_gdb(gdb, sizeof gdb) != 0) {
    snprintf(out->note, sizeof out->note, "gdb skipped: no gdb on PATH");
    return;
  }
  pid_t victim = fork_victim_process();
  if (victim < 0) {
    snprintf(out->note, sizeof out->note, "gdb skipped: fork failed");
    return;
  }
  sleep_ns(200000000u); /* the victim reaches the bottom of its recursion */
  double samples[16];
  unsigned n = 0, frames = 0;
  for (unsigned i = 0; i < runs && n < 16; i++) {
    double t = run_gdb(gdb, victim, &frames);
    if (t < 0) break;
    samples[n++] = t;
    out->frames = frames;
  }
  kill(victim, SIGKILL);
  waitpid(victim, NULL, 0);
  if (n == 0) {
    snprintf(out->note, sizeof out->note,
             "gdb skipped: it could not attach or printed no frames (ptrace not permitted?)");
    return;
  }
  out->ran = 1;
  out->median_ns = bench_median(samples, n);
  snprintf(out->note, sizeof out->note, "gdb: median of %u run(s), %u frames in its deepest bt",
           n, out->frames);
}

/* ---- the table -------------------------------------------------------------------------------- */
static void row_us(const char *figure, double value_ns, double base_ns, const char *base_name,
                   const char *goal) {
  char value[32], base[64], ratio[16];
  snprintf(value, sizeof value, "%.2f us", value_ns / 1e3);
  snprintf(base, sizeof base, "%.2f us %s", base_ns / 1e3, base_name);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, value_ns, base_ns), goal);
}

/* The two paths of the handler's copy: a thread's stack read through the kernel's check
 * (bench_capture's victim thread), and the main thread's read in place (main() as the victim). */
enum { CHECKED = 0, IN_PLACE, PATHS };

/* One path's rows: lost time, stall, throughput, and the handler's share, each beside the
 * floor of the same runs. */
static void lost_rows(const lost_time *l, int in_place) {
  const char *path = in_place ? "in place (main thread)" : "checked copy (a thread)";
  char figure[96], value[48], base[64];
  snprintf(figure, sizeof figure, "%s: victim lost time per capture", path);
  row_us(figure, l->per_action_ns[WITH_CAPTURE], l->per_action_ns[WITH_FLOOR],
         "per timer signal", "≤ 5 us");
  snprintf(figure, sizeof figure, "%s: victim stall per capture, median", path);
  row_us(figure, l->stall[WITH_CAPTURE].median, l->stall[WITH_FLOOR].median, "per timer signal",
         "≤ 5 us");
  snprintf(figure, sizeof figure, "%s: victim stall per capture, p99", path);
  row_us(figure, l->stall[WITH_CAPTURE].p99, l->stall[WITH_FLOOR].p99, "per timer signal", "-");
  snprintf(figure, sizeof figure, "%s: victim throughput loss", path);
  snprintf(value, sizeof value, "%.3f %%", 100.0 * (1.0 - l->rate_ratio[WITH_CAPTURE]));
  snprintf(base, sizeof base, "%.3f %% timer signals", 100.0 * (1.0 - l->rate_ratio[WITH_FLOOR]));
  bench_row(figure, value, base, "-", "≤ 0.5 %");
  snprintf(figure, sizeof figure, "%s: of which the handler's body, median", path);
  snprintf(value, sizeof value, "%.2f us", l->handler_ns / 1e3);
  snprintf(base, sizeof base, "%zu B copied; %zu of %zu in place", l->bytes, l->in_place,
           l->captures);
  bench_row(figure, value, base, "-", "-");
}

static void print_tables(unsigned rounds, const latency lat[KINDS], const walk_check *check,
                         const gdb_result *gdb, unsigned millis, unsigned trials,
                         const lost_time lost[PATHS], const components *parts) {
  char title[300], value[48], base[64], ratio[16];
  snprintf(title, sizeof title,
           "stack capture of a thread spinning %d frames deep vs a bare timer round trip to it\n"
           "  (%u samples of each, interleaved; floor: own handler on SIGRTMIN+%d, store + futex "
           "wake,\n  raised by a one-shot timer on the thread's CPU clock, as a capture is)",
           DEPTH, rounds, FLOOR_SIGNAL_OFFSET);
  bench_table_begin(title);
  row_us("raw capture (request -> stack in hand), median", lat[RAW].median, lat[FLOOR].median,
         "timer round trip", "≤ 1.5x floor");
  row_us("raw capture, p99", lat[RAW].p99, lat[FLOOR].p99, "timer round trip", "≤ 1.5x floor");
  row_us("full capture (raw + libunwind), median", lat[FULL].median, lat[FLOOR].median,
         "timer round trip", "-");
  row_us("full capture, p99", lat[FULL].p99, lat[FLOOR].p99, "timer round trip", "-");
  row_us("signal sent straight away (before; cuts calls short), median", lat[DIRECT].median,
         lat[FLOOR].median, "timer round trip", "-");
  snprintf(value, sizeof value, "%u frames", check->stack.depth);
  snprintf(base, sizeof base, "%u of %u recursive frames", check->recursive_frames, DEPTH - 1);
  char goal[64];
  snprintf(goal, sizeof goal, "≥ %d, walk %s, %u bad of %u", DEPTH,
           lagscope__walk_name(check->stack.walk), check->bad, rounds);
  bench_row("full capture depth (last sample)", value, base, "-", goal);
  if (gdb->ran) {
    row_us("gdb -p + thread apply all bt (wall)", gdb->median_ns, lat[FULL].median,
           "full capture", "-");
  }
  printf("(%s)\n", gdb->note);

  snprintf(title, sizeof title,
           "the victim's lost time per capture, one at each 1 ms tick, on each path of the "
           "handler's copy\n  (per path %u runs of %u ms with captures and %u with bare timer "
           "signals, the floor, alternated with\n  runs with the same ticks and no signal; "
           "medians)",
           trials, millis, trials);
  bench_table_begin(title);
  for (int p = 0; p < PATHS; p++) lost_rows(&lost[p], p == IN_PLACE);
  snprintf(value, sizeof value, "%.2f us", lost[IN_PLACE].stall[WITH_FLOOR].median / 1e3);
  bench_row("of which a bare timer signal's delivery, return and wake (the floor)", value,
            "-", "-", "-");
  printf("(stall: the victim's own gap in its work, by its clock, less the unit of work it "
         "held;\n lost time: expected minus done units of work over the run, per capture)\n");

  bench_table_begin("where a capture's time goes: the handler's syscalls alone, on this thread "
                    "(median of 31 x 200 calls)");
  snprintf(value, sizeof value, "%.2f us", parts->vm_readv_ns / 1e3);
  snprintf(base, sizeof base, "%.2f us memcpy", parts->memcpy_ns / 1e3);
  bench_row("process_vm_readv of 32 KiB", value, base,
            bench_ratio(ratio, sizeof ratio, parts->vm_readv_ns, parts->memcpy_ns), "-");
  snprintf(value, sizeof value, "%.2f us", parts->getpid_ns / 1e3);
  bench_row("getpid() (the handler calls none: cached)", value, "-", "-", "-");
  snprintf(value, sizeof value, "%.2f us", parts->handler_ns / 1e3);
  snprintf(base, sizeof base, "%zu bytes of stack copied", copied_bytes);
  bench_row("handler body in latency runs, median (claim, registers, copy)", value, base,
            "-", "-");
  row_us("unwinding (full - raw capture, medians)", lat[FULL].median - lat[RAW].median,
         lat[FLOOR].median, "timer round trip", "-");
  printf("(victim work unit: %.1f ns; %u requests unanswered within %u ms, left out)\n",
         lost[CHECKED].unit_ns, unanswered, TIMEOUT_NS / 1000000u);
}

int main(int argc, char **argv) {
  unsigned rounds = bench_arg_uint(argc, argv, "--rounds", 2000, 10);
  unsigned millis = bench_arg_uint(argc, argv, "--millis", 1000, 10);
  unsigned trials = bench_arg_uint(argc, argv, "--trials", 7, 1);
  unsigned gdb_runs = bench_arg_uint(argc, argv, "--gdb-runs", 3, 0);

  /* gdb first, before this process has threads to fork with, and while nothing else runs. */
  gdb_result gdb;
  measure_gdb(gdb_runs, &gdb);

  int rc = lagscope__capture_init(0);
  if (rc != 0) {
    fprintf(stderr, "bench_capture: lagscope__capture_init: %s\n", lagscope_strerror(rc));
    return 1;
  }
  if (floor_init() != 0) {
    perror("bench_capture: sigaction");
    return 1;
  }
  pthread_t victim;
  if (start_victim(&victim) != 0) {
    fprintf(stderr, "bench_capture: the victim thread did not start\n");
    return 1;
  }
  int32_t tid = atomic_load(&victim_tid);

  handler_samples = calloc(2 * (size_t)rounds, sizeof(double));
  latency lat[KINDS];
  walk_check check;
  lost_time lost[PATHS];
  components parts;
  int failed = measure_latency(tid, rounds, lat, &check) != 0 ||
               measure_lost_time(tid, millis, trials, &lost[CHECKED]) != 0 ||
               measure_components(&parts) != 0;

  atomic_store(&victim_stop, 1);
  pthread_join(victim, NULL);
  /* The in-place path: the main thread is the victim, a thread of its own measures. */
  if (!failed) failed = measure_main_thread(millis, trials, &lost[IN_PLACE]) != 0;
  if (failed) return 1;
  print_tables(rounds, lat, &check, &gdb, millis, trials, lost, &parts);
  if (check.bad > 0 || check.recursive_frames != DEPTH - 1) {
    fprintf(stderr, "bench_capture: a capture did not reach the victim's %d recursive frames\n",
            DEPTH);
    return 1;
  }
  return 0;
}
