/*
 * bench_handler_churn — how long the capture handler keeps the main thread, while other threads
 * keep starting and ending (issue 31, item 4). Every thread's start and end maps or unmaps its
 * stack and takes the process's mmap lock for writing; process_vm_readv takes it for reading,
 * so a handler that copied the stack with it waited behind every start and end (9.8 s seen
 * once under ASan and two CPU hogs). The handler now copies the main thread's own stack in
 * place, with plain loads and no system call.
 *
 * The main thread spins; a capturer thread takes its stack through lagscope's own capture
 * (lagscope__capture_raw: the timer on its CPU clock, the handler) and reads the handler's own
 * time from the snapshot (capture.h, handler_ns: the vDSO clock at entry and exit). Figures:
 * median, p99 and the longest, for the in-place copy beside the old checked copy (forced with
 * lagscope__capture_force_checked_copy), interleaved capture by capture, with no churn and with
 * --spawners threads each starting and joining batches of 40 short-lived threads.
 *
 * Usage: bench_handler_churn [--rounds N] [--spawners N]
 */
#define _GNU_SOURCE
#include "bench.h"

#include "internal.h"
#include "linux/capture.h"
#include "linux/linux.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define TIMEOUT_NS (200u * 1000u * 1000u)
#define BATCH 40
#define SPAWNERS_MAX 64

static atomic_int spin_stop, churn_stop;
static _Atomic uint64_t spins;

/* ---- the load: threads that start and end ---- */

static void *leaf(void *arg) {
  struct timespec t = {0, (long)((uintptr_t)arg % 10u) * 1000000L};
  nanosleep(&t, NULL);
  return NULL;
}

static void *spawner(void *arg) {
  (void)arg;
  uintptr_t n = 0;
  while (!atomic_load(&churn_stop)) {
    pthread_t t[BATCH];
    unsigned started = 0;
    for (unsigned i = 0; i < BATCH; i++)
      if (pthread_create(&t[started], NULL, leaf, (void *)n++) == 0) started++;
    for (unsigned i = 0; i < started; i++) pthread_join(t[i], NULL);
  }
  return NULL;
}

static unsigned churn_start(pthread_t *spawners, unsigned count) {
  atomic_store(&churn_stop, 0);
  unsigned started = 0;
  for (unsigned i = 0; i < count; i++)
    if (pthread_create(&spawners[started], NULL, spawner, NULL) == 0) started++;
  return started;
}

static void churn_end(pthread_t *spawners, unsigned count) {
  atomic_store(&churn_stop, 1);
  for (unsigned i = 0; i < count; i++) pthread_join(spawners[i], NULL);
}

/* ---- the measurement, on the capturer thread ---- */

typedef struct handler_times {
  double ms[2][100000]; /* [checked copy][round] */
  size_t len[2];
  unsigned failed;
} handler_times;

static void measure(int32_t main_tid, unsigned rounds, handler_times *out) {
  memset(out->len, 0, sizeof out->len);
  out->failed = 0;
  for (unsigned r = 0; r < rounds; r++) {
    for (int checked = 0; checked < 2; checked++) {
      int mode = (r % 2) ? 1 - checked : checked; /* alternate which goes first */
      lagscope__capture_force_checked_copy(mode);
      int method = 0;
      int rc = lagscope__capture_raw(main_tid, TIMEOUT_NS, &method);
      if (rc != LAGSCOPE_OK || method != LAGSCOPE__METHOD_SIGNAL) {
        out->failed++;
        continue;
      }
      out->ms[mode][out->len[mode]++] = (double)lagscope__capture_the_snapshot.handler_ns / 1e6;
    }
  }
  lagscope__capture_force_checked_copy(0);
}

typedef struct figures {
  double median, p99, max;
} figures;

static figures summarize(double *ms, size_t n) {
  figures f = {0, 0, 0};
  if (n == 0) return f;
  f.median = bench_median(ms, n); /* sorts */
  f.p99 = ms[(size_t)((double)(n - 1) * 0.99)];
  f.max = ms[n - 1];
  return f;
}

static void print_rows(const char *load, handler_times *t) {
  figures in_place = summarize(t->ms[0], t->len[0]);
  figures checked = summarize(t->ms[1], t->len[1]);
  const char *names[3] = {"median", "p99", "longest"};
  double a[3] = {in_place.median, in_place.p99, in_place.max};
  double b[3] = {checked.median, checked.p99, checked.max};
  for (int i = 0; i < 3; i++) {
    char figure[96], value[32], baseline[48], ratio[16];
    snprintf(figure, sizeof figure, "handler, %s, %s (ms)", load, names[i]);
    snprintf(value, sizeof value, "%.4f", a[i]);
    snprintf(baseline, sizeof baseline, "%.4f process_vm_readv", b[i]);
    bench_row(figure, value, baseline, bench_ratio(ratio, sizeof ratio, a[i], b[i]),
              i == 2 ? "no lock: bounded but for preemption" : "");
  }
  if (t->failed) printf("  (%u captures failed or were not by signal)\n", t->failed);
}

typedef struct capturer_args {
  int32_t main_tid;
  unsigned rounds, spawners;
  handler_times quiet, churned;
  unsigned threads_seen;
} capturer_args;

static void *capturer(void *arg) {
  capturer_args *a = arg;
  measure(a->main_tid, a->rounds, &a->quiet);
  pthread_t spawners[SPAWNERS_MAX];
  unsigned started = churn_start(spawners, a->spawners);
  struct timespec settle = {0, 200L * 1000000L};
  nanosleep(&settle, NULL);
  char text[4096];
  if (lagscope__linux_read_small_file("/proc/self/status", text, sizeof text) > 0) {
    const char *threads = strstr(text, "Threads:");
    if (threads != NULL) a->threads_seen = (unsigned)strtoul(threads + 8, NULL, 10);
  }
  measure(a->main_tid, a->rounds, &a->churned);
  churn_end(spawners, started);
  atomic_store(&spin_stop, 1);
  return NULL;
}

int main(int argc, char **argv) {
  static capturer_args a;
  a.rounds = bench_arg_uint(argc, argv, "--rounds", 2000, 10);
  a.spawners = bench_arg_uint(argc, argv, "--spawners", 10, 1);
  if (a.rounds > 100000) a.rounds = 100000;
  if (a.spawners > SPAWNERS_MAX) a.spawners = SPAWNERS_MAX;
  if (lagscope__capture_init(0) != LAGSCOPE_OK) {
    fprintf(stderr, "bench_handler_churn: the capture handler could not be installed\n");
    return 1;
  }
  a.main_tid = (int32_t)getpid();
  pthread_t t;
  if (pthread_create(&t, NULL, capturer, &a) != 0) return 1;
  while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
    atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed); /* on the CPU: by signal */
  pthread_join(t, NULL);

  bench_table_begin("bench_handler_churn: the main thread's time in lagscope's capture handler");
  print_rows("idle", &a.quiet);
  char load[64];
  snprintf(load, sizeof load, "churn (%u threads)", a.threads_seen);
  print_rows(load, &a.churned);
  return a.quiet.len[0] == 0 || a.churned.len[0] == 0 ? 1 : 0;
}
