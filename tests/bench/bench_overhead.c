/*
 * bench_overhead — what lagscope at its defaults costs a running app, in CPU and memory.
 *
 * An idle 60 Hz main loop, the kind a Linux host has: wait (ppoll) until the next frame
 * deadline or until something is posted to the main thread, run what was posted, and at each
 * deadline present a frame. It runs twice, each time in a fresh child forked from this
 * process so that both start from the same memory image:
 *   1. baseline: the loop alone, lagscope never started;
 *   2. lagscope: the same loop with lagscope started at its defaults, plus the post_main hook
 *      a Linux host supplies (it feeds the loop's queue), and lagscope_frame() per frame.
 * Each child measures its own process CPU over the loop (CLOCK_PROCESS_CPUTIME_ID, as % of one
 * core), its main thread's CPU, and its resident memory (Rss at the end from smaps_rollup, VmHWM peak), and
 * reads lagscope's own figures (monitor_cpu_percent, monitor_memory_bytes). An idle loop makes
 * the overhead as visible as it can be: anything the app does on top only hides it.
 *
 * Usage: bench_overhead [--seconds N] [--heartbeat] [--hitch-ms M [--hitch-seconds S]]
 *                       [--no-viewer] [--smaps-dir DIR]
 *   --seconds      N seconds per child (default 30)
 *   --heartbeat    heartbeat mode: no post_main, the frames prove the main thread alive
 *   --hitch-ms     one frame a second works M ms on the CPU, in both children: what lagscope
 *                  costs an app that hitches (samples from the stall's first milliseconds, a
 *                  hitch event a second, symbolicated)
 *   --hitch-seconds  hitches only in the first S seconds, then idle: what lagscope keeps after
 *   --no-viewer    lagscope without its viewer (config.server = 0): what the viewer costs
 *   --smaps-dir    each child's mappings at the end, in DIR/baseline.smaps and
 *                  DIR/lagscope.smaps: where the memory goes
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"
#include "bench_post.h"

#include <lagscope.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRAME_NS (1000000000u / 60u)

static uint64_t hitch_ns; /* --hitch-ms: one frame a second works this long */
static uint64_t hitch_seconds; /* --hitch-seconds: only during the first this many (0: all) */

/* ---- the loop ------------------------------------------------------------------------------- */
typedef struct loop_stats {
  uint64_t frames, posts_run;
} loop_stats;

/* Sleeps in ppoll until the deadline or a post, whichever is first. */
static void wait_until(uint64_t deadline_ns) {
  uint64_t now = bench_now_ns();
  if (now >= deadline_ns) return;
  uint64_t left = deadline_ns - now;
  struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
  struct pollfd fd = {.fd = bench_post_queue.wake_fd, .events = POLLIN};
  ppoll(&fd, 1, &timeout, NULL);
}

static loop_stats run_loop(uint64_t seconds, bool with_lagscope) {
  loop_stats stats = {0, 0};
  uint64_t now = bench_now_ns(), end = now + seconds * 1000000000u;
  uint64_t deadline = now + FRAME_NS;
  while (now < end) {
    wait_until(deadline);
    stats.posts_run += bench_post_drain();
    now = bench_now_ns();
    if (now < deadline) continue; /* woken by a post: back to waiting for the frame */
    int hitching = hitch_ns != 0 && (hitch_seconds == 0 || stats.frames < hitch_seconds * 60);
    if (hitching && stats.frames % 60 == 59) { /* a frame's work, on the CPU */
      uint64_t until = bench_now_ns() + hitch_ns;
      while (bench_now_ns() < until) {
      }
      now = bench_now_ns();
    }
    if (with_lagscope) lagscope_frame();
    stats.frames++;
    deadline += FRAME_NS;
    if (deadline <= now) deadline = now + FRAME_NS; /* fell behind: skip, don't burst */
  }
  return stats;
}

/* ---- what each child measures --------------------------------------------------------------- */
typedef struct child_result {
  int status;                /* 0, BENCH_SKIP, or 1 (a message went to stderr) */
  double seconds;            /* wall time of the loop */
  double process_cpu_pct;    /* the whole process over the loop, % of one core */
  double main_cpu_pct;       /* the main thread alone */
  uint64_t rss_kib, hwm_kib; /* Rss at the end (smaps_rollup), VmHWM (peak, approximate) */
  uint64_t anon_kib, file_kib; /* its parts: Anonymous (heaps, stacks), the rest (mapped files) */
  uint64_t uss_kib;            /* pages no other process has: Private_Clean + Private_Dirty */
  uint64_t pss_file_kib;       /* mapped files, each page divided by the processes mapping it */
  uint64_t pss_kib;            /* all of it so: Pss (anonymous pages count whole) */
  loop_stats loop;
  bool have_metrics;
  lagscope_metrics metrics;  /* lagscope's latest sample, taken at the end */
  uint64_t hitch_events;     /* lagscope's hitch events (with --hitch-ms) */
} child_result;

static _Atomic uint64_t hitch_events;
static void count_hitches(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type == LAGSCOPE_EVENT_HITCH) atomic_fetch_add(&hitch_events, 1);
}

static uint64_t cpu_clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A /proc file's text (its first size - 1 bytes), "" when it cannot be read. */
static void read_proc(const char *path, char *text, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, text, size - 1) : -1;
  if (fd >= 0) close(fd);
  text[n > 0 ? n : 0] = '\0';
}

/* The number after "Name:" in the text (KiB in these files), 0 when missing. */
static uint64_t kib_field(const char *text, const char *name) {
  const char *at = strstr(text, name);
  return at != NULL ? strtoull(at + strlen(name), NULL, 10) : 0;
}

/* The resident memory, from /proc/self/smaps_rollup: a walk of the page tables, exact. The
 * RSS lines of /proc/self/status are per-CPU counters read without summing (proc(5): "some of
 * these values are inaccurate"): off by up to 256 KiB here, a quarter of the goal. The peak is
 * only there (VmHWM). Without stdio: the measure must not touch pages that only one child
 * would. */
static void read_memory(child_result *r) {
  char status[4096], rollup[4096];
  read_proc("/proc/self/status", status, sizeof status);
  r->hwm_kib = kib_field(status, "VmHWM:");
  read_proc("/proc/self/smaps_rollup", rollup, sizeof rollup);
  r->rss_kib = kib_field(rollup, "\nRss:");
  r->anon_kib = kib_field(rollup, "\nAnonymous:");
  r->file_kib = r->rss_kib - r->anon_kib; /* mapped files (and shared memory) */
  /* What the machine pays: a page of libc that lagscope's code touched is also resident for
   * the parent and every other process, and counts in RSS but not here. */
  r->uss_kib = kib_field(rollup, "Private_Clean:") + kib_field(rollup, "Private_Dirty:");
  r->pss_file_kib = kib_field(rollup, "\nPss_File:");
  r->pss_kib = kib_field(rollup, "\nPss:");
}

static bool heartbeat_mode;
static bool no_viewer; /* --no-viewer */
static const char *smaps_dir; /* --smaps-dir: where each child leaves its /proc/self/smaps */

/* Where the memory is: the child's mappings at the end, as DIR/baseline.smaps or
 * DIR/lagscope.smaps, to compare by hand. Read whole before anything is written, and without
 * stdio, as read_memory: what the copy touches must be the same in both children. */
static void copy_smaps(bool with_lagscope) {
  if (smaps_dir == NULL) return;
  static char text[4 << 20];
  size_t length = 0;
  int in = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  ssize_t n;
  while (in >= 0 && length < sizeof text && (n = read(in, text + length, sizeof text - length)) > 0)
    length += (size_t)n;
  if (in >= 0) close(in);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.smaps", smaps_dir, with_lagscope ? "lagscope" : "baseline");
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || write(out, text, length) != (ssize_t)length)
    fprintf(stderr, "bench_overhead: could not write %s\n", path);
  if (out >= 0) close(out);
}

static int start_lagscope(void) {
  lagscope_config config = lagscope_config_default();
  config.server_port = 0, config.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  config.post_main = heartbeat_mode ? NULL : bench_post_main; /* the rest at its default */
  config.on_event = count_hitches;
  if (no_viewer) config.server = 0;
  int rc = lagscope_start(&config);
  if (rc == LAGSCOPE_DISABLED) return BENCH_SKIP;
  if (rc != 0) fprintf(stderr, "bench_overhead: lagscope_start: %s\n", lagscope_strerror(rc));
  return rc == 0 ? 0 : 1;
}

/* The body of one child: optionally start lagscope, run the loop, measure. */
static child_result measure_child(uint64_t seconds, bool with_lagscope) {
  child_result r;
  memset(&r, 0, sizeof r);
  bench_post_open();
  if (bench_post_queue.wake_fd < 0) {
    perror("bench_overhead: eventfd");
    r.status = 1;
    return r;
  }
  if (with_lagscope && (r.status = start_lagscope()) != 0) return r;

  /* Steady state only: lagscope_start's one-off cost is not what an app pays each second. */
  uint64_t wall0 = bench_now_ns(), proc0 = cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t main0 = cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID);
  r.loop = run_loop(seconds, with_lagscope);
  double wall = (double)(bench_now_ns() - wall0);
  r.seconds = wall / 1e9;
  r.process_cpu_pct = 100.0 * (double)(cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - proc0) / wall;
  r.main_cpu_pct = 100.0 * (double)(cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID) - main0) / wall;
  read_memory(&r);
  copy_smaps(with_lagscope);
  if (with_lagscope) {
    r.have_metrics = lagscope_metrics_latest(&r.metrics) == 0;
    lagscope_stop();
    r.hitch_events = atomic_load(&hitch_events);
  }
  bench_post_close();
  return r;
}

/* Forks a child that runs measure_child and sends its result back through a pipe. */
static int run_child(uint64_t seconds, bool with_lagscope, child_result *out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(NULL); /* or the child would print our buffered output a second time */
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    child_result r = measure_child(seconds, with_lagscope);
    ssize_t n = write(fds[1], &r, sizeof r);
    _exit(n == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], out, sizeof *out);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != (ssize_t)sizeof *out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_overhead: the %s child failed\n", with_lagscope ? "lagscope" : "baseline");
    return -1;
  }
  return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */
/* Rounds what prints as zero to zero, so the table never shows "-0.000 %". */
static double tidy(double x) { return x > -0.0005 && x < 0.0005 ? 0.0 : x; }

static void row_pct(const char *figure, double value, double baseline, const char *goal) {
  char v[32], b[48], ratio[16];
  value = tidy(value);
  baseline = tidy(baseline);
  snprintf(v, sizeof v, "%.3f %%", value);
  snprintf(b, sizeof b, "%.3f %% without", baseline);
  bench_row(figure, v, b, bench_ratio(ratio, sizeof ratio, value, baseline), goal);
}

static void row_kib(const char *figure, double value, double baseline, const char *goal) {
  char v[32], b[48], ratio[16];
  snprintf(v, sizeof v, "%.0f KiB", value);
  snprintf(b, sizeof b, "%.0f KiB without", baseline);
  bench_row(figure, v, b, bench_ratio(ratio, sizeof ratio, value, baseline), goal);
}

static void row_plain(const char *figure, const char *value, const char *goal) {
  bench_row(figure, value, "-", "-", goal);
}

static void print_lagscope_rows(const child_result *with) {
  char v[48];
  if (!with->have_metrics) {
    row_plain("lagscope's own figures", "no sample yet", "-");
    return;
  }
  const lagscope_metrics *m = &with->metrics;
  snprintf(v, sizeof v, "%.3f %%", m->monitor_cpu_percent);
  row_plain("monitor_cpu_percent (lagscope, last sample)", v, "≤ 0.2 % of one core");
  snprintf(v, sizeof v, "%.0f KiB", (double)m->monitor_memory_bytes / 1024.0);
  row_plain("monitor_memory_bytes (lagscope's heap)", v, "≤ 1 MiB");
  snprintf(v, sizeof v, "%.1f", m->frames.fps);
  row_plain("fps seen by lagscope", v, "60");
  snprintf(v, sizeof v, "%llu", (unsigned long long)m->hangs);
  row_plain("hangs reported (an idle loop has none)", v, "0");
  snprintf(v, sizeof v, "%llu / %llu", (unsigned long long)m->events_published,
           (unsigned long long)m->events_dropped);
  row_plain("events published / dropped", v, "-");
}

static void print_table(const child_result *base, const child_result *with) {
  char title[160], v[48];
  if (hitch_ns != 0)
    snprintf(title, sizeof title,
             "lagscope overhead at defaults%s, 60 Hz loop with a %llu ms hitch every second "
             "(%.1f s each, with vs without)",
             no_viewer ? " but the viewer" : "", (unsigned long long)(hitch_ns / 1000000u),
             with->seconds);
  else
    snprintf(title, sizeof title,
             "lagscope overhead at defaults%s, idle 60 Hz loop (%.1f s each, with vs without)",
             no_viewer ? " but the viewer" : "", with->seconds);
  bench_table_begin(title);
  row_pct("process CPU, % of one core", with->process_cpu_pct, base->process_cpu_pct, "-");
  snprintf(v, sizeof v, "%.3f %%", tidy(with->process_cpu_pct - base->process_cpu_pct));
  row_plain("CPU overhead (difference)", v, "≤ 0.2 % of one core");
  row_pct("  main thread CPU", with->main_cpu_pct, base->main_cpu_pct, "-");
  row_pct("  other threads CPU (process - main)", with->process_cpu_pct - with->main_cpu_pct,
          base->process_cpu_pct - base->main_cpu_pct,
          hitch_ns != 0 ? "≤ 1 % of one core" : "-");
  row_kib("RSS at the end (smaps_rollup)", (double)with->rss_kib, (double)base->rss_kib, "-");
  row_kib("RSS peak (VmHWM, approximate)", (double)with->hwm_kib, (double)base->hwm_kib, "-");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->rss_kib - (double)base->rss_kib);
  row_plain("RSS overhead (difference at the end)", v, "≤ 1 MiB (1024 KiB)");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->anon_kib - (double)base->anon_kib);
  row_plain("  anonymous: heaps, stacks", v, "-");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->file_kib - (double)base->file_kib);
  row_plain("  library pages, shared", v, "-");
  /* The same pages as the machine pays for them: libc's code that lagscope's threads run is
   * resident for every process already, and counts whole in RSS, a share in Pss. */
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->pss_file_kib - (double)base->pss_file_kib);
  row_plain("  library pages, proportional (Pss_File)", v, "-");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->pss_kib - (double)base->pss_kib);
  row_plain("Pss overhead (difference)", v, "≤ 1 MiB (1024 KiB)");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->uss_kib - (double)base->uss_kib);
  row_plain("private memory overhead (USS difference)", v, "-");
  snprintf(v, sizeof v, "%+.0f KiB", (double)with->hwm_kib - (double)base->hwm_kib);
  row_plain("peak RSS overhead (difference, approximate)", v, "-");
  print_lagscope_rows(with);
  snprintf(v, sizeof v, "%llu / %llu", (unsigned long long)with->loop.frames,
           (unsigned long long)base->loop.frames);
  row_plain("frames presented (with / without)", v, "60 per s");
  snprintf(v, sizeof v, "%llu", (unsigned long long)with->loop.posts_run);
  row_plain("pings answered via post_main", v, "-");
  if (hitch_ns != 0) {
    snprintf(v, sizeof v, "%llu", (unsigned long long)with->hitch_events);
    row_plain("hitch events (one a second)", v, "-");
  }
  printf("note: the difference carries the main thread's run-to-run noise; \"other threads\" is\n"
         "      lagscope's own threads measured directly (the baseline has none).\n");
}

int main(int argc, char **argv) {
  unsigned seconds = bench_arg_uint(argc, argv, "--seconds", 30, 1);
  for (int i = 1; i < argc; i++) heartbeat_mode |= strcmp(argv[i], "--heartbeat") == 0;
  for (int i = 1; i < argc; i++) no_viewer |= strcmp(argv[i], "--no-viewer") == 0;
  hitch_ns = (uint64_t)bench_arg_uint(argc, argv, "--hitch-ms", 0, 0) * 1000000u;
  hitch_seconds = bench_arg_uint(argc, argv, "--hitch-seconds", 0, 0);
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--smaps-dir") == 0) smaps_dir = argv[i + 1];
  child_result base, with;
  printf("bench_overhead: %u s without lagscope, then %u s with it...\n", seconds, seconds);
  if (run_child(seconds, false, &base) != 0) return 1;
  if (run_child(seconds, true, &with) != 0) return 1;
  if (with.status == BENCH_SKIP) {
    printf("bench_overhead: skipped, lagscope is compiled out of this build\n");
    return BENCH_SKIP;
  }
  if (base.status != 0 || with.status != 0) return 1;
  print_table(&base, &with);
  return 0;
}
