/*
 * bench_report_save — what rewriting a hang's report while the hang lasts costs (core/monitor.c
 * save_hang_report -> lagscope__hang_recorder_save -> write_report: lagscope__report_json with
 * symbolication, then lagscope__store_write: temporary file, fsync, rename, fsync of the
 * folder), beside what it interrupts, measured in the same run: one main-thread sample
 * (lagscope__capture_stack of a thread spinning in functions of this bench, with the
 * recorder's 50 ms timeout). A save stops sampling while it runs (samples every 10 ms), and
 * the monitor plans the next one at max(1 s, 10 x its cost).
 *
 * For reports of N main-thread samples (25, 100, 1000 and 6000, SAMPLES_MAX: 60 s at 10 ms),
 * built as the recorder builds them: 50 distinct captures of the spinner repeated to N, 10 ms
 * apart, and one capture of each of the bench's threads (the spinner, three blocked helpers;
 * the bench's own thread is the capturer and refused, as the monitor's is). Printed per N:
 * the first save with a fresh lagscope__symbols (cold: every object indexed; the recorder's is
 * often warmer, its live stack resolved first), the median of warm saves, each beside the
 * sample; the share of the monitor's time at the chosen cadence, cost / max(1 s, 10 x cost);
 * the samples a save misses, cost / 10 ms; the JSON and write halves and the report's size.
 * The spinner's stacks are shallow (a call tree of about 14 nodes): an app's deeper, more varied
 * stacks make the tree and its symbols cost more. The store's folder holds this report alone
 * (a real one holds up to 50: the bounds' listing is not measured at scale); its disk is
 * whatever $TMPDIR (or /tmp) is on. A sample of a thread on the CPU waits for its next tick
 * (4 ms at 250 Hz): the baseline is mostly the monitor waiting, a save mostly work and fsync.
 *
 * Usage: bench_report_save [--rounds N]
 *   --rounds: warm saves per N (median); the sample baseline takes 10 captures a round
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"
#include "bench_temp.h"

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000.0
#define SAMPLE_INTERVAL_NS (10u * 1000u * 1000u) /* the recorder's default cadence */
#define MAIN_ANSWER_NS (50u * 1000u * 1000u)     /* hang_recorder.c's timeouts: the main thread */
#define THREAD_ANSWER_NS (20u * 1000u * 1000u)   /* and the others */
#define SAVE_EVERY_NS 1e9                        /* monitor.c: REPORT_SAVE_EVERY_NS */
#define SAVE_COST_SHARE 10.0                     /* monitor.c: REPORT_SAVE_COST_SHARE */
#define DISTINCT 50                              /* distinct captures the samples repeat */
#define HELPERS 3                                /* blocked threads beside the spinner */
#define SAMPLES_MAX 6000                         /* hang_recorder.c's */

/* ---- the "main thread": spins through a few nested paths, so that captures differ ---------- */
static _Atomic int32_t spinner_tid;
static atomic_int spinner_stop;
static volatile uint64_t spin_sink;

__attribute__((noinline)) static void spin_leaf(unsigned n) {
  uint64_t x = spin_sink | 1;
  for (unsigned i = 0; i < n; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  spin_sink = x;
}
__attribute__((noinline)) static void spin_parse(unsigned n) { spin_leaf(n), spin_leaf(n / 2); }
__attribute__((noinline)) static void spin_layout(unsigned n) { spin_parse(n), spin_leaf(n); }
__attribute__((noinline)) static void spin_frame(unsigned round) {
  if (round % 3 == 0) spin_layout(20000);
  else if (round % 3 == 1) spin_parse(20000);
  else spin_leaf(20000);
}

static void *spinner(void *arg) {
  (void)arg;
  atomic_store(&spinner_tid, lagscope__thread_id());
  for (unsigned round = 0; !atomic_load(&spinner_stop); round++) spin_frame(round);
  return NULL;
}

/* ---- helpers: threads an app has, blocked in the kernel ------------------------------------ */
static int helper_pipe[2] = {-1, -1};
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_cond = PTHREAD_COND_INITIALIZER;

static void *helper(void *arg) {
  uintptr_t kind = (uintptr_t)arg;
  char byte;
  struct timespec long_sleep = {3600, 0};
  if (kind == 0) {
    spin_sink += (uint64_t)read(helper_pipe[0], &byte, 1); /* io on a pipe nobody writes */
  } else if (kind == 1) {
    nanosleep(&long_sleep, NULL);
  } else {
    pthread_mutex_lock(&helper_lock); /* a condition nobody signals */
    pthread_cond_wait(&helper_cond, &helper_lock);
    pthread_mutex_unlock(&helper_lock);
  }
  return NULL;
}

static int start_threads(void) {
  pthread_t t;
  if (pipe(helper_pipe) != 0 || pthread_create(&t, NULL, spinner, NULL) != 0) return -1;
  pthread_detach(t);
  for (uintptr_t k = 0; k < HELPERS; k++) {
    if (pthread_create(&t, NULL, helper, (void *)k) != 0) return -1;
    pthread_detach(t);
  }
  while (atomic_load(&spinner_tid) == 0) usleep(1000);
  usleep(50000); /* the helpers into their calls */
  return 0;
}

/* ---- the report's data, as the recorder gathers it ----------------------------------------- */
typedef struct fixture {
  lagscope__stack distinct[DISTINCT];
  lagscope__stack *samples; /* SAMPLES_MAX, the distinct captures repeated */
  lagscope__usage info;     /* every thread, and the stacks below in the same order */
  lagscope__stack threads[LAGSCOPE__MAX_THREADS];
  char targets[(size_t)LAGSCOPE__TARGET_MAX * LAGSCOPE__MAX_THREADS];
  lagscope__report_data data;
} fixture;

/* One capture of every thread but the caller, names and targets read now (capture_threads and
 * describe_targets in hang_recorder.c). */
static void capture_threads(fixture *f) {
  char why[256];
  lagscope__usage_read(&f->info, NULL, LAGSCOPE__USAGE_DETAIL, why, sizeof why);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < f->info.threads_len; i++) {
    lagscope__stack *s = &f->threads[kept];
    int32_t tid = f->info.threads[i].tid;
    lagscope__capture_stack(tid, s, tid == f->data.main_tid ? MAIN_ANSWER_NS : THREAD_ANSWER_NS);
    if (s->walk == LAGSCOPE__WALK_OWN) continue; /* the capturer itself */
    lagscope__describe_wait_target(s, f->targets + (size_t)kept * LAGSCOPE__TARGET_MAX,
                                   LAGSCOPE__TARGET_MAX);
    f->info.threads[kept++] = f->info.threads[i];
  }
  f->info.threads_len = kept;
}

/* One capture of the spinner into s, asked again while unanswered: on a loaded machine the
 * kernel may deliver no request in 50 ms (it checks the CPU-clock timer only at a tick that finds
 * the spinner on its CPU; test_standin measures it), which says nothing of a save's cost.
 * LAGSCOPE_OK, or the last failure. */
static int capture_spinner(int32_t tid, lagscope__stack *s) {
  int rc = LAGSCOPE_ENOENT;
  for (int attempt = 0; attempt < 100; attempt++) {
    rc = lagscope__capture_stack(tid, s, MAIN_ANSWER_NS);
    if (rc != LAGSCOPE_ENOENT || s->walk != LAGSCOPE__WALK_NO_REPLY) break;
  }
  return rc;
}

/* DISTINCT captures of the spinner, a few ms apart, repeated into SAMPLES_MAX samples. */
static int capture_samples(fixture *f) {
  int32_t tid = atomic_load(&spinner_tid);
  for (unsigned i = 0; i < DISTINCT; i++) {
    if (capture_spinner(tid, &f->distinct[i]) != LAGSCOPE_OK) return -1;
    usleep(3000);
  }
  f->samples = malloc(sizeof(lagscope__stack) * SAMPLES_MAX);
  if (f->samples == NULL) return -1;
  for (unsigned i = 0; i < SAMPLES_MAX; i++) {
    f->samples[i] = f->distinct[i % DISTINCT];
    f->samples[i].time_ns = f->distinct[0].time_ns + (uint64_t)i * SAMPLE_INTERVAL_NS;
  }
  return 0;
}

static void data_init(fixture *f) {
  lagscope__report_data *r = &f->data;
  memset(r, 0, sizeof *r);
  char when[LAGSCOPE__UTC_STAMP_SIZE];
  r->start_wall_ms = lagscope__wall_ms();
  lagscope__utc_stamp(r->start_wall_ms, when);
  snprintf(r->id, sizeof r->id, "%s-%d-1", when, (int)lagscope__process_id());
  r->hang_id = 1;
  r->state = LAGSCOPE__REPORT_IN_PROGRESS;
  r->start_ns = f->distinct[0].time_ns;
  r->threshold_ms = 250;
  r->sample_interval_ms = SAMPLE_INTERVAL_NS / 1000000u;
  r->app_name = "bench_report_save";
  r->pid = lagscope__process_id();
  r->main_tid = atomic_load(&spinner_tid);
  r->samples = f->samples;
  r->threads = f->threads;
  r->thread_info = f->info.threads;
  r->thread_targets = f->targets;
}

/* ---- one save, as write_report does it ------------------------------------------------------ */
static int resolve(void *ctx, uintptr_t address, int is_return, lagscope__stack_frame *out) {
  return lagscope__symbols_resolve(ctx, address, is_return, out);
}

typedef struct save_cost {
  double json_ns, write_ns;
  size_t bytes;
} save_cost;

static int save(lagscope__report_data *r, lagscope__symbols *symbols, lagscope__store *store,
                save_cost *cost) {
  char *json = NULL, path[512], why[512];
  uint64_t t0 = bench_now_ns();
  int rc = lagscope__report_json(r, resolve, symbols, &json, NULL);
  uint64_t t1 = bench_now_ns();
  if (rc == LAGSCOPE_OK)
    rc = lagscope__store_write(store, r->id, json, path, sizeof path, why, sizeof why);
  uint64_t t2 = bench_now_ns();
  if (rc != LAGSCOPE_OK) fprintf(stderr, "bench_report_save: save failed (%d): %s\n", rc, why);
  cost->json_ns = (double)(t1 - t0), cost->write_ns = (double)(t2 - t1);
  cost->bytes = json != NULL ? strlen(json) : 0;
  lagscope__dealloc(json);
  return rc;
}

/* count captures of the spinner, each timed into out. */
static void time_samples(double *out, unsigned count) {
  static lagscope__stack s;
  int32_t tid = atomic_load(&spinner_tid);
  for (unsigned i = 0; i < count; i++) {
    uint64_t t0 = bench_now_ns();
    lagscope__capture_stack(tid, &s, MAIN_ANSWER_NS);
    out[i] = (double)(bench_now_ns() - t0);
  }
}

/* ---- per N: a cold save, then warm ones interleaved with the baseline's captures ------------ */
typedef struct result {
  unsigned n;
  save_cost cold;
  double warm_ns, json_ns, write_ns;
  size_t bytes;
} result;

static int measure(fixture *f, lagscope__store *store, unsigned n, unsigned rounds,
                   double *sample_ns, unsigned *sample_len, result *out) {
  double *warm = malloc(rounds * sizeof(double)), *json = malloc(rounds * sizeof(double)),
         *write = malloc(rounds * sizeof(double));
  lagscope__symbols *symbols = lagscope__symbols_new();
  int rc = warm != NULL && json != NULL && write != NULL && symbols != NULL ? 0 : -1;
  f->data.sample_count = n;
  f->data.duration_ns = (uint64_t)n * SAMPLE_INTERVAL_NS;
  out->n = n;
  if (rc == 0) rc = save(&f->data, symbols, store, &out->cold);
  for (unsigned i = 0; rc == 0 && i < rounds; i++) {
    save_cost c;
    rc = save(&f->data, symbols, store, &c);
    warm[i] = c.json_ns + c.write_ns, json[i] = c.json_ns, write[i] = c.write_ns;
    out->bytes = c.bytes;
    time_samples(sample_ns + *sample_len, 10); /* the baseline, under the same noise */
    *sample_len += 10;
  }
  if (rc == 0) {
    out->warm_ns = bench_median(warm, rounds);
    out->json_ns = bench_median(json, rounds);
    out->write_ns = bench_median(write, rounds);
  }
  lagscope__symbols_free(symbols);
  free(warm), free(json), free(write);
  return rc;
}

/* ---- the table ------------------------------------------------------------------------------- */
static double cadence_share(double cost_ns) {
  double slow = SAVE_COST_SHARE * cost_ns;
  return cost_ns / (slow > SAVE_EVERY_NS ? slow : SAVE_EVERY_NS);
}

static void print_result(const result *r, double sample_ns) {
  char figure[64], value[32], base[48], ratio[16];
  snprintf(base, sizeof base, "%.2f ms one sample", sample_ns / NS_PER_MS);
  double cold_ns = r->cold.json_ns + r->cold.write_ns;
  snprintf(figure, sizeof figure, "N=%u: first save (cold symbols)", r->n);
  snprintf(value, sizeof value, "%.2f ms", cold_ns / NS_PER_MS);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, cold_ns, sample_ns), "-");
  snprintf(figure, sizeof figure, "N=%u: save (warm, median)", r->n);
  snprintf(value, sizeof value, "%.2f ms", r->warm_ns / NS_PER_MS);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, r->warm_ns, sample_ns), "-");
  snprintf(figure, sizeof figure, "N=%u:   JSON + symbols | store write", r->n);
  snprintf(value, sizeof value, "%.2f | %.2f ms", r->json_ns / NS_PER_MS, r->write_ns / NS_PER_MS);
  snprintf(base, sizeof base, "%.1f KiB report", (double)r->bytes / 1024.0);
  bench_row(figure, value, base, "-", "-");
  snprintf(figure, sizeof figure, "N=%u:   monitor's time at the cadence", r->n);
  snprintf(value, sizeof value, "%.3f %%", 100.0 * cadence_share(r->warm_ns));
  bench_row(figure, value, "cost / max(1 s, 10 x cost)", "-", "≤ 10 % by construction");
  snprintf(figure, sizeof figure, "N=%u:   samples missed per save", r->n);
  snprintf(value, sizeof value, "%.2f", r->warm_ns / SAMPLE_INTERVAL_NS);
  bench_row(figure, value, "cost / 10 ms", "-", "-");
}

int main(int argc, char **argv) {
  unsigned rounds = bench_arg_uint(argc, argv, "--rounds", 15, 1);
  static const unsigned sizes[] = {25, 100, 1000, SAMPLES_MAX};
  enum { SIZES = sizeof sizes / sizeof sizes[0] };
  static fixture f;
  char dir[512], why[512];
  lagscope__store *store = NULL;
  if (lagscope__capture_init(0) != LAGSCOPE_OK || start_threads() != 0 ||
      capture_samples(&f) != 0) {
    fprintf(stderr, "bench_report_save: cannot capture the spinning thread\n");
    return 1;
  }
  data_init(&f);
  capture_threads(&f);
  f.data.thread_count = f.info.threads_len; /* known once they are captured */
  if (bench_temp_folder(dir, sizeof dir, "bench_report_save") != 0 ||
      lagscope__store_open(dir, 50, 32u << 20, &store, why, sizeof why) != LAGSCOPE_OK) {
    fprintf(stderr, "bench_report_save: no store in %s: %s\n", dir, why);
    return 1;
  }
  double *sample_ns = malloc(SIZES * rounds * 10 * sizeof(double));
  unsigned sample_len = 0;
  result results[SIZES];
  int rc = sample_ns != NULL ? 0 : -1;
  for (unsigned i = 0; rc == 0 && i < SIZES; i++)
    rc = measure(&f, store, sizes[i], rounds, sample_ns, &sample_len, &results[i]);
  lagscope__store_close(store);
  bench_remove_folder(dir);
  atomic_store(&spinner_stop, 1);
  if (rc != 0) return 1;

  double sample = bench_median(sample_ns, sample_len);
  char title[512];
  snprintf(title, sizeof title,
           "a hang's report saved while it lasts (JSON with symbols + atomic write with fsync),\n"
           "  median of %u warm saves, beside one main-thread sample (median of %u captures of a\n"
           "  spinning thread, 50 ms timeout); %u threads in the report; folder under %s",
           rounds, sample_len, f.info.threads_len, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  bench_table_begin(title);
  for (unsigned i = 0; i < SIZES; i++) print_result(&results[i], sample);
  free(sample_ns);
  free(f.samples);
  return 0;
}
