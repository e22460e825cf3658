/*
 * lagscope-demo: a small app with a real main loop that stalls on purpose, so that lagscope has
 * something to find. It also documents how a Linux host wires lagscope in:
 *
 *   1. Call lagscope_frame() once per frame.
 *   2. Give lagscope a post_main hook that queues (fn, arg) for the main loop and wakes it
 *      (here: a mutex-protected queue plus an eventfd), or call lagscope_heartbeat() from the
 *      loop instead (--heartbeat).
 *   3. Subscribe to events (config.on_event) and print them.
 *   4. Show the HUD (demo_window.c, SDL2; not in --headless runs or builds without SDL2): on
 *      X11, lagscope_hud_overlay_x11() over the window, so that it counts up live during a
 *      stall; with --hud-mode frame (and where the window is not an X11 one), each frame
 *      lagscope_hud_take() and the image composited over the frame.
 *
 * The stalls run in named, non-inlined functions so that a captured stack shows where the main
 * thread is stuck: demo_stall_busy > demo_busy_middle > demo_busy_spin, demo_stall_lock,
 * demo_stall_alloc.
 *
 * Contents: options, output, the post_main queue, stalls, the main loop, main(). The window is
 * in demo_window.c.
 */
#define _GNU_SOURCE /* ppoll, eventfd */

#include "lagscope.h"
#ifdef DEMO_HAVE_WINDOW
#include "demo_window.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Keep stall functions as real frames: not inlined, not cloned under another name. */
#if defined(__clang__)
#define DEMO_NOINLINE __attribute__((noinline))
#else
#define DEMO_NOINLINE __attribute__((noinline, noclone))
#endif

#define DEMO_NAME "lagscope-demo"
#define DEMO_NS_PER_MS UINT64_C(1000000)
#define DEMO_NS_PER_S UINT64_C(1000000000)
/* How long a shutdown waits for lagscope to report the end of a hang still open. */
#define DEMO_HANG_GRACE_NS (1000 * DEMO_NS_PER_MS)

static uint64_t demo_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * DEMO_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* ---- options ------------------------------------------------------------------------------ */

typedef enum demo_stall_kind {
  DEMO_STALL_BUSY, DEMO_STALL_LOCK, DEMO_STALL_ALLOC, DEMO_STALL_SLEEP, DEMO_STALL_IO,
  DEMO_STALL_CHAIN, DEMO_STALL_DEADLOCK, DEMO_STALL_NET, DEMO_STALL_MODAL, DEMO_STALL_OPEN,
  DEMO_STALL_PHASES
} demo_stall_kind;

static const char *const demo_stall_names[] = {"busy",  "lock",     "alloc", "sleep", "io",
                                               "chain", "deadlock", "net",   "modal", "open",
                                               "phases"};

typedef struct demo_options {
  unsigned fps;
  demo_stall_kind stall_kind;
  unsigned stall_ms;
  double stall_every_s; /* 0: no timer stalls */
  double duration_s;    /* 0: until SIGINT/SIGTERM */
  int headless;
  int events_jsonl;
  int heartbeat;
  unsigned threshold_ms; /* passed to lagscope unchecked: lagscope validates it */
  unsigned refresh_hz;   /* likewise */
  const char *report_dir; /* NULL: lagscope's default */
  float hud_scale;        /* passed to lagscope unchecked */
  lagscope_hud_corner hud_corner;
  int hud_expanded;
  int hud_overlay;        /* -1: the overlay on X11, the frame elsewhere; 0: frame; 1: overlay */
  int no_server;
  unsigned port;          /* the viewer's; passed on, lagscope validates */
  const char *bind;       /* NULL: lagscope's default, every interface */
  unsigned max_clients, max_streams; /* 0: lagscope's defaults */
  unsigned max_reports;   /* the store's bound (config.report_max_count); 0: lagscope's */
  unsigned churn_threads; /* a load: about this many short-lived threads alive (0: none) */
} demo_options;

static void demo_usage(FILE *out) {
  fprintf(out,
          "Usage: " DEMO_NAME " [options]\n"
          "\n"
          "A main loop that stalls on purpose, watched by lagscope " LAGSCOPE_VERSION_STRING ".\n"
          "\n"
          "Options:\n"
          "  --fps N              frames per second of the main loop (default 60)\n"
          "  --stall-kind KIND    busy | lock | alloc | sleep | io | chain | deadlock | net |\n"
          "                       modal | open | phases\n"
          "                       (default busy)\n"
          "  --stall-ms N         length of one stall in ms (default 600)\n"
          "  --stall-every S      stall every S seconds, fractions allowed (default 0: never)\n"
          "  --duration S         stop lagscope and exit 0 after S seconds (default 0: run until\n"
          "                       SIGINT or SIGTERM)\n"
          "  --events jsonl       print every event as one JSON object per line on stdout\n"
          "                       (default: one human line per hang on stderr)\n"
          "  --threshold-ms N     lagscope's hang threshold (default: lagscope's, 250)\n"
          "  --refresh-hz N       the display rate lagscope measures against (default 60)\n"
          "  --report-dir DIR     where lagscope stores hang reports (default: lagscope's,\n"
          "                       ~/.local/state/lagscope/lagscope-demo)\n"
          "  --heartbeat          call lagscope_heartbeat() each loop instead of post_main\n"
          "  --headless           no window, no HUD: the main loop only (also what a build\n"
          "                       without SDL2, or a run without a display, falls back to)\n"
          "  --hud-scale F        HUD pixels per point, 0.5..8 (default 1)\n"
          "  --hud-corner C       tl | tr | bl | br: the HUD's corner (default bl)\n"
          "  --hud-expanded       start with the HUD expanded (graph, CPU, memory)\n"
          "  --hud-mode M         overlay | frame: where the HUD goes. overlay: in lagscope's\n"
          "                       window over the demo's (X11), redrawn by lagscope's thread,\n"
          "                       so its badge counts up live during a stall; frame: drawn\n"
          "                       into each frame, so frozen with it (default: overlay on X11,\n"
          "                       frame elsewhere)\n"
          "  --port N             the LAN viewer's port (default 8080; 0: any free port)\n"
          "  --bind ADDR          the address it listens on (default 0.0.0.0, every interface;\n"
          "                       127.0.0.1: this machine only)\n"
          "  --max-clients N      connections the viewer serves at once (default 32)\n"
          "  --max-streams N      live streams among them (default 16)\n"
          "  --max-reports N      reports the store keeps (default 50)\n"
          "  --no-server          no LAN viewer\n"
          "  --churn-threads N    a load, as a busy app's pools give: about N threads that keep\n"
          "                       starting and ending (default 0)\n"
          "  --help               this text\n"
          "\n"
          "Keys (window): s stalls once, h expands or collapses the HUD, q or Escape quits.\n"
          "Signals: SIGUSR2 stalls once on the next frame; SIGINT and SIGTERM exit cleanly.\n");
}

static int demo_bad_value(const char *name, const char *value, const char *expected) {
  fprintf(stderr, DEMO_NAME ": bad value '%s' for %s: expected %s\n", value, name, expected);
  return -1;
}

/* A whole decimal number in min..max; anything else (sign, junk, overflow) is refused. */
static int demo_parse_uint(const char *name, const char *text, unsigned long min,
                           unsigned long max, unsigned *out) {
  char expected[64];
  snprintf(expected, sizeof expected, "a whole number in %lu..%lu", min, max);
  if (text[0] < '0' || text[0] > '9') return demo_bad_value(name, text, expected);
  errno = 0;
  char *end = NULL;
  unsigned long v = strtoul(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return demo_bad_value(name, text, expected);
  *out = (unsigned)v;
  return 0;
}

/* Seconds as a finite number ≥ 0, fractions allowed (e.g. 1.5). */
static int demo_parse_seconds(const char *name, const char *text, double *out) {
  const char *expected = "a number of seconds >= 0, e.g. 1.5";
  if ((text[0] < '0' || text[0] > '9') && text[0] != '.')
    return demo_bad_value(name, text, expected);
  errno = 0;
  char *end = NULL;
  double v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0 || v > 1e6)
    return demo_bad_value(name, text, expected);
  *out = v;
  return 0;
}

static int demo_parse_stall_kind(const char *name, const char *text, demo_stall_kind *out) {
  for (size_t i = 0; i < sizeof demo_stall_names / sizeof demo_stall_names[0]; i++) {
    if (strcmp(text, demo_stall_names[i]) == 0) {
      *out = (demo_stall_kind)i;
      return 0;
    }
  }
  return demo_bad_value(name, text, "busy, lock, alloc, sleep, io, chain, deadlock or net");
}

/* A finite number > 0 (lagscope checks its range). */
static int demo_parse_float(const char *name, const char *text, float *out) {
  const char *expected = "a number such as 1 or 1.5";
  if ((text[0] < '0' || text[0] > '9') && text[0] != '.')
    return demo_bad_value(name, text, expected);
  errno = 0;
  char *end = NULL;
  double v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !isfinite(v) || v <= 0 || v > 1e6)
    return demo_bad_value(name, text, expected);
  *out = (float)v;
  return 0;
}

static int demo_parse_hud_mode(const char *name, const char *text, int *overlay) {
  if (strcmp(text, "overlay") == 0 || strcmp(text, "frame") == 0) {
    *overlay = strcmp(text, "overlay") == 0;
    return 0;
  }
  return demo_bad_value(name, text, "overlay or frame");
}

static int demo_parse_corner(const char *name, const char *text, lagscope_hud_corner *out) {
  static const char *const names[] = {"tl", "tr", "bl", "br"};
  static const lagscope_hud_corner corners[] = {LAGSCOPE_HUD_TOP_LEFT, LAGSCOPE_HUD_TOP_RIGHT,
                                                LAGSCOPE_HUD_BOTTOM_LEFT,
                                                LAGSCOPE_HUD_BOTTOM_RIGHT};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(text, names[i]) == 0) {
      *out = corners[i];
      return 0;
    }
  }
  return demo_bad_value(name, text, "tl, tr, bl or br");
}

static int demo_parse_events(const char *name, const char *text, int *jsonl) {
  if (strcmp(text, "jsonl") != 0) return demo_bad_value(name, text, "jsonl");
  *jsonl = 1;
  return 0;
}

static const char *const demo_valued_options[] = {
    "--fps", "--stall-kind", "--stall-ms", "--stall-every", "--duration", "--events",
    "--threshold-ms", "--refresh-hz", "--report-dir", "--hud-scale", "--hud-corner", "--hud-mode",
    "--port", "--bind", "--max-clients", "--max-streams", "--max-reports",
    "--churn-threads"};

static int demo_is_valued(const char *name) {
  for (size_t i = 0; i < sizeof demo_valued_options / sizeof demo_valued_options[0]; i++)
    if (strcmp(name, demo_valued_options[i]) == 0) return 1;
  return 0;
}

/* Options that take a value (names from demo_valued_options). */
static int demo_parse_valued(demo_options *o, const char *name, const char *value) {
  if (strcmp(name, "--fps") == 0) return demo_parse_uint(name, value, 1, 1000, &o->fps);
  if (strcmp(name, "--stall-kind") == 0) return demo_parse_stall_kind(name, value, &o->stall_kind);
  if (strcmp(name, "--stall-ms") == 0) return demo_parse_uint(name, value, 1, 600000, &o->stall_ms);
  if (strcmp(name, "--stall-every") == 0) return demo_parse_seconds(name, value, &o->stall_every_s);
  if (strcmp(name, "--duration") == 0) return demo_parse_seconds(name, value, &o->duration_s);
  if (strcmp(name, "--events") == 0) return demo_parse_events(name, value, &o->events_jsonl);
  if (strcmp(name, "--threshold-ms") == 0)
    return demo_parse_uint(name, value, 0, UINT32_MAX, &o->threshold_ms);
  if (strcmp(name, "--refresh-hz") == 0)
    return demo_parse_uint(name, value, 0, UINT32_MAX, &o->refresh_hz);
  if (strcmp(name, "--hud-scale") == 0) return demo_parse_float(name, value, &o->hud_scale);
  if (strcmp(name, "--hud-corner") == 0) return demo_parse_corner(name, value, &o->hud_corner);
  if (strcmp(name, "--hud-mode") == 0) return demo_parse_hud_mode(name, value, &o->hud_overlay);
  if (strcmp(name, "--port") == 0) return demo_parse_uint(name, value, 0, 65535, &o->port);
  if (strcmp(name, "--churn-threads") == 0)
    return demo_parse_uint(name, value, 0, 2000, &o->churn_threads);
  if (strcmp(name, "--max-clients") == 0)
    return demo_parse_uint(name, value, 0, UINT32_MAX, &o->max_clients);
  if (strcmp(name, "--max-streams") == 0)
    return demo_parse_uint(name, value, 0, UINT32_MAX, &o->max_streams);
  if (strcmp(name, "--max-reports") == 0)
    return demo_parse_uint(name, value, 0, UINT32_MAX, &o->max_reports);
  if (strcmp(name, "--bind") == 0) {
    o->bind = value; /* lagscope says what is wrong with it */
    return 0;
  }
  if (strcmp(name, "--report-dir") == 0) {
    if (value[0] == '\0') return demo_bad_value(name, value, "a folder");
    o->report_dir = value;
    return 0;
  }
  return -1; /* not reached: demo_is_valued(name) */
}

/* Flags without a value; returns 1 when name is not one of them. */
static int demo_parse_flag(demo_options *o, const char *name) {
  if (strcmp(name, "--headless") == 0) o->headless = 1;
  else if (strcmp(name, "--heartbeat") == 0) o->heartbeat = 1;
  else if (strcmp(name, "--hud-expanded") == 0) o->hud_expanded = 1;
  else if (strcmp(name, "--no-server") == 0) o->no_server = 1;
  else return 1;
  return 0;
}

/* Returns 0 to run, 1 after --help, -1 on a bad option (already reported). Accepts both
 * "--name value" and "--name=value". */
static int demo_parse_args(int argc, char **argv, demo_options *o) {
  for (int i = 1; i < argc; i++) {
    char name[32];
    const char *arg = argv[i];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (strncmp(arg, "--", 2) != 0 || len >= sizeof name) {
      fprintf(stderr, DEMO_NAME ": unknown option %s (see --help)\n", arg);
      return -1;
    }
    memcpy(name, arg, len);
    name[len] = '\0';
    if (strcmp(name, "--help") == 0) return 1;
    if (demo_parse_flag(o, name) == 0) {
      if (!eq) continue;
      fprintf(stderr, DEMO_NAME ": option %s takes no value (see --help)\n", name);
      return -1;
    }
    if (!demo_is_valued(name)) {
      fprintf(stderr, DEMO_NAME ": unknown option %s (see --help)\n", name);
      return -1;
    }
    const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (!value) {
      fprintf(stderr, DEMO_NAME ": option %s needs a value (see --help)\n", name);
      return -1;
    }
    if (demo_parse_valued(o, name, value) != 0) return -1;
  }
  return 0;
}

/* ---- output ------------------------------------------------------------------------------- *
 * Events arrive on a lagscope thread while the main thread prints its own lines: one mutex keeps
 * lines whole. */

static pthread_mutex_t demo_out_lock = PTHREAD_MUTEX_INITIALIZER;
static int demo_jsonl;

/* 1 from hang_began until hang_ended, so that shutdown can wait for the end to be reported. */
static atomic_int demo_hang_open;

static void demo_print_line(const char *line) {
  pthread_mutex_lock(&demo_out_lock);
  fputs(line, stdout);
  fputc('\n', stdout);
  fflush(stdout); /* a reader (tests, jq) sees each event as it happens */
  pthread_mutex_unlock(&demo_out_lock);
}

/* Every 4th metrics event (2 s at lagscope's default 500 ms): what the HUD will show. */
static void demo_print_metrics(const lagscope_metrics *m) {
  static unsigned seen;
  if (seen++ % 4 != 0) return;
  fprintf(stderr,
          DEMO_NAME ": %.0f fps (%u dropped, hitches %.0f ms/s: %s), cpu %.1f %%, %u threads, "
          "rss %.1f MiB, hangs %" PRIu64 "\n",
          m->frames.fps, m->frames.dropped, m->frames.hitch_ms_per_s,
          lagscope_hitch_band_name(m->frames.band), m->cpu_percent, m->thread_count,
          (double)m->rss_bytes / (1024.0 * 1024.0), m->hangs);
}

static void demo_print_human(const lagscope_event *e) {
  if (e->type == LAGSCOPE_EVENT_HANG_BEGAN)
    fprintf(stderr, DEMO_NAME ": hang %" PRIu64 " began (no answer for %" PRIu32 " ms)\n",
            e->as.hang_began.hang_id, e->as.hang_began.threshold_ms);
  else if (e->type == LAGSCOPE_EVENT_HANG_ENDED)
    fprintf(stderr, DEMO_NAME ": hang %" PRIu64 " ended after %.1f ms%s%s\n",
            e->as.hang_ended.hang_id, (double)e->as.hang_ended.duration_ns / 1e6,
            e->payload.report ? "; report: " : "",
            e->payload.report ? lagscope_report_path(e->payload.report) : "");
  else if (e->type == LAGSCOPE_EVENT_HANG_RECOVERED)
    fprintf(stderr, DEMO_NAME ": a hang of an earlier run never ended (killed while hung): %s\n",
            lagscope_report_path(e->payload.report));
  else if (e->type == LAGSCOPE_EVENT_HANG_LOST)
    fprintf(stderr, DEMO_NAME ": %s\n", e->payload.message);
  else if (e->type == LAGSCOPE_EVENT_SERVER_STARTED)
    fprintf(stderr, DEMO_NAME ": open the viewer at %s\n", e->payload.message);
  else if (e->type == LAGSCOPE_EVENT_METRICS)
    demo_print_metrics(e->payload.metrics);
  else if (e->type == LAGSCOPE_EVENT_ERROR)
    fprintf(stderr, DEMO_NAME ": lagscope error %s: %s\n", lagscope_error_name(e->as.error.code),
            e->payload.message ? e->payload.message : "");
}

/* lagscope's on_event: runs on one of lagscope's threads. */
static void demo_on_event(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type == LAGSCOPE_EVENT_HANG_BEGAN) demo_hang_open = 1;
  if (e->type == LAGSCOPE_EVENT_HANG_ENDED) demo_hang_open = 0;
  if (!demo_jsonl) {
    demo_print_human(e);
    return;
  }
  char *line = lagscope_event_json(e);
  if (!line) {
    fprintf(stderr, DEMO_NAME ": could not format a %s event\n", lagscope_event_type_name(e->type));
    return;
  }
  demo_print_line(line);
  lagscope_free(line);
}

static void demo_print_started(const demo_options *o, int windowed) {
  char line[512];
  snprintf(line, sizeof line,
           "{\"type\":\"demo_started\",\"pid\":%ld,\"stall_kind\":\"%s\",\"stall_ms\":%u,"
           "\"stall_every_s\":%g,\"duration_s\":%g,\"fps\":%u,\"mode\":\"%s\",\"headless\":%s,"
           "\"lagscope_version\":\"%s\"}",
           (long)getpid(), demo_stall_names[o->stall_kind], o->stall_ms, o->stall_every_s,
           o->duration_s, o->fps, o->heartbeat ? "heartbeat" : "post_main",
           windowed ? "false" : "true", LAGSCOPE_VERSION_STRING);
  demo_print_line(line);
}

static void demo_print_stall(demo_stall_kind kind, unsigned ms, uint64_t started_ns) {
  char line[160];
  snprintf(line, sizeof line,
           "{\"type\":\"demo_stall\",\"kind\":\"%s\",\"ms\":%u,\"started_ns\":%" PRIu64 "}",
           demo_stall_names[kind], ms, started_ns);
  demo_print_line(line);
}

/* ---- the post_main queue -------------------------------------------------------------------
 * What a real app's main loop already has: other threads queue work, an eventfd wakes the loop,
 * the loop runs the work on the main thread. With a window the loop waits in SDL instead, which
 * cannot wait on an eventfd: posting then also pushes an SDL event (demo_window_wake). */

#define DEMO_QUEUE_CAPACITY 64 /* lagscope keeps at most one ping in flight; room for more */

typedef struct demo_task {
  lagscope_main_fn fn;
  void *arg;
} demo_task;

typedef struct demo_queue {
  pthread_mutex_t lock;
  demo_task tasks[DEMO_QUEUE_CAPACITY];
  size_t len;
  int wake_fd; /* eventfd: written by posters and by signal handlers */
  void (*also_wake)(void); /* set before lagscope starts: the window's wake-up, or NULL */
} demo_queue;

static demo_queue demo_main_queue = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1};

/* write() is async-signal-safe, so signal handlers use this too. */
static void demo_wake(int fd) {
  uint64_t one = 1;
  ssize_t n = write(fd, &one, sizeof one);
  (void)n; /* a full counter already means "wake up" */
}

/* lagscope's post_main hook: runs on lagscope's monitor thread and must not block, so the lock
 * is only ever held for a copy. */
static int demo_post_main(lagscope_main_fn fn, void *arg, void *user) {
  demo_queue *q = user;
  pthread_mutex_lock(&q->lock);
  int full = q->len == DEMO_QUEUE_CAPACITY;
  if (!full) q->tasks[q->len++] = (demo_task){fn, arg};
  pthread_mutex_unlock(&q->lock);
  if (full) return -1;
  demo_wake(q->wake_fd);
  if (q->also_wake) q->also_wake();
  return 0;
}

/* On the main thread: runs what was queued. Tasks run outside the lock so that they may post. */
static void demo_queue_drain(demo_queue *q) {
  uint64_t count;
  ssize_t n = read(q->wake_fd, &count, sizeof count); /* reset the eventfd */
  (void)n;
  demo_task tasks[DEMO_QUEUE_CAPACITY];
  pthread_mutex_lock(&q->lock);
  size_t len = q->len;
  memcpy(tasks, q->tasks, len * sizeof tasks[0]);
  q->len = 0;
  pthread_mutex_unlock(&q->lock);
  for (size_t i = 0; i < len; i++) tasks[i].fn(tasks[i].arg);
}

/* ---- stalls --------------------------------------------------------------------------------
 * Each stall keeps the main thread from its loop for the given time. Volatile sinks keep the
 * compiler from removing the work; work after each call keeps calls from becoming jumps, so
 * every function stays a frame of its own on the stack. */

static volatile uint64_t demo_sink;
static void *volatile demo_alloc_sink;

DEMO_NOINLINE static uint64_t demo_busy_spin(uint64_t deadline_ns) {
  uint64_t spins = 0;
  while (demo_now_ns() < deadline_ns) spins++;
  return spins;
}

DEMO_NOINLINE static uint64_t demo_busy_middle(uint64_t deadline_ns) {
  uint64_t spins = demo_busy_spin(deadline_ns);
  demo_sink = spins;
  return spins + 1;
}

DEMO_NOINLINE static void demo_stall_busy(unsigned ms) {
  uint64_t spins = demo_busy_middle(demo_now_ns() + ms * DEMO_NS_PER_MS);
  demo_sink += spins;
}

typedef struct demo_lock_holder {
  pthread_mutex_t mutex;
  sem_t held; /* posted once the helper owns mutex */
  unsigned ms;
} demo_lock_holder;

/* The helper thread: owns the mutex for ms, the way a worker holding a shared lock would. */
static void *demo_lock_hold(void *arg) {
  demo_lock_holder *h = arg;
  pthread_setname_np(pthread_self(), "demo-holder"); /* 15 bytes at most */
  pthread_mutex_lock(&h->mutex);
  sem_post(&h->held);
  struct timespec ts = {(time_t)(h->ms / 1000), (long)(h->ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  pthread_mutex_unlock(&h->mutex);
  return NULL;
}

DEMO_NOINLINE static void demo_stall_lock(unsigned ms) {
  demo_lock_holder h = {.mutex = PTHREAD_MUTEX_INITIALIZER, .ms = ms};
  sem_init(&h.held, 0, 0);
  pthread_t helper;
  if (pthread_create(&helper, NULL, demo_lock_hold, &h) != 0) {
    fprintf(stderr, DEMO_NAME ": could not start the lock-holding thread\n");
    sem_destroy(&h.held);
    return;
  }
  while (sem_wait(&h.held) != 0 && errno == EINTR) {
  }
  pthread_mutex_lock(&h.mutex); /* the stall: blocks until the helper lets go */
  demo_sink++;
  pthread_mutex_unlock(&h.mutex);
  pthread_join(helper, NULL);
  sem_destroy(&h.held);
  pthread_mutex_destroy(&h.mutex);
}

DEMO_NOINLINE static void demo_alloc_one(size_t size) {
  unsigned char *p = malloc(size);
  if (!p) return;
  memset(p, (int)(size & 0xff), size);
  demo_alloc_sink = p; /* escapes, so malloc/memset/free cannot be folded away */
  demo_sink += p[size / 2];
  free(p);
}

DEMO_NOINLINE static void demo_stall_alloc(unsigned ms) {
  uint64_t deadline = demo_now_ns() + ms * DEMO_NS_PER_MS;
  size_t size = 1024;
  while (demo_now_ns() < deadline) {
    demo_alloc_one(size);
    size = size >= 1024 * 1024 ? 1024 : size * 2; /* small bins up to mmap-sized blocks */
  }
  demo_sink++;
}

/* Sleeps the whole of ms, whatever interrupts it. */
static void demo_sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

DEMO_NOINLINE static void demo_stall_sleep(unsigned ms) {
  demo_sleep_ms(ms);
  demo_sink++;
}

/* io: the main thread reads a pipe whose writer ("demo-writer") writes after ms. */
typedef struct demo_late_writer {
  int fd;
  unsigned ms;
} demo_late_writer;

static void *demo_write_late(void *arg) {
  demo_late_writer *w = arg;
  pthread_setname_np(pthread_self(), "demo-writer");
  demo_sleep_ms(w->ms);
  if (write(w->fd, "x", 1) != 1) perror(DEMO_NAME ": write");
  return NULL;
}

DEMO_NOINLINE static void demo_stall_io(unsigned ms) {
  int fds[2];
  if (pipe(fds) != 0) return;
  demo_late_writer w = {fds[1], ms};
  pthread_t writer;
  if (pthread_create(&writer, NULL, demo_write_late, &w) == 0) {
    char c;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    pthread_join(writer, NULL);
  }
  close(fds[0]);
  close(fds[1]);
}

/* open: main opens a FIFO for reading, by a path relative to its folder's fd (openat), which
 * waits until "demo-opener" opens it for writing, ms later. */
typedef struct demo_late_opener {
  int folder;
  unsigned ms;
} demo_late_opener;

static void *demo_open_late(void *arg) {
  demo_late_opener *o = arg;
  pthread_setname_np(pthread_self(), "demo-opener");
  demo_sleep_ms(o->ms);
  int fd = openat(o->folder, "demo.fifo", O_WRONLY | O_CLOEXEC);
  if (fd < 0) perror(DEMO_NAME ": open the FIFO for writing");
  else close(fd);
  return NULL;
}

DEMO_NOINLINE static void demo_stall_open(unsigned ms) {
  const char *tmp = getenv("TMPDIR");
  char folder[512];
  snprintf(folder, sizeof folder, "%s/lagscope-demo-XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
  if (mkdtemp(folder) == NULL) return;
  demo_late_opener o = {open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ms};
  pthread_t opener;
  if (o.folder >= 0 && mkfifoat(o.folder, "demo.fifo", 0600) == 0 &&
      pthread_create(&opener, NULL, demo_open_late, &o) == 0) {
    int fd;
    while ((fd = openat(o.folder, "demo.fifo", O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (fd >= 0) close(fd);
    pthread_join(opener, NULL);
    unlinkat(o.folder, "demo.fifo", 0);
  }
  if (o.folder >= 0) close(o.folder);
  rmdir(folder);
}

/* phases: a stall in two phases, as an editor that reads a FIFO and then opens it again: 30 %
 * of ms in a read from a pipe (io), then 70 % in the open of a FIFO (open). */
DEMO_NOINLINE static void demo_stall_phases(unsigned ms) {
  demo_stall_io(ms * 3 / 10);
  demo_stall_open(ms - ms * 3 / 10);
}

/* chain: main waits for mutex A, held by "demo-chain-a", which waits for mutex B, held by
 * "demo-chain-b", which sleeps ms. */
typedef struct demo_chain {
  pthread_mutex_t a, b;
  sem_t a_held, b_held;
  unsigned ms;
} demo_chain;

static void *demo_chain_b(void *arg) {
  demo_chain *c = arg;
  pthread_setname_np(pthread_self(), "demo-chain-b");
  pthread_mutex_lock(&c->b);
  sem_post(&c->b_held);
  demo_sleep_ms(c->ms);
  pthread_mutex_unlock(&c->b);
  return NULL;
}

static void *demo_chain_a(void *arg) {
  demo_chain *c = arg;
  pthread_setname_np(pthread_self(), "demo-chain-a");
  pthread_mutex_lock(&c->a);
  sem_post(&c->a_held);
  pthread_mutex_lock(&c->b); /* held by demo-chain-b */
  pthread_mutex_unlock(&c->b);
  pthread_mutex_unlock(&c->a);
  return NULL;
}

static void demo_sem_wait(sem_t *s) {
  while (sem_wait(s) != 0 && errno == EINTR) {
  }
}

DEMO_NOINLINE static void demo_stall_chain(unsigned ms) {
  demo_chain c = {.a = PTHREAD_MUTEX_INITIALIZER, .b = PTHREAD_MUTEX_INITIALIZER, .ms = ms};
  sem_init(&c.a_held, 0, 0);
  sem_init(&c.b_held, 0, 0);
  pthread_t a, b;
  if (pthread_create(&b, NULL, demo_chain_b, &c) != 0) return;
  demo_sem_wait(&c.b_held);
  if (pthread_create(&a, NULL, demo_chain_a, &c) != 0) {
    pthread_join(b, NULL);
    return;
  }
  demo_sem_wait(&c.a_held);
  pthread_mutex_lock(&c.a); /* the stall: A waits for B, which sleeps */
  pthread_mutex_unlock(&c.a);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  sem_destroy(&c.a_held);
  sem_destroy(&c.b_held);
}

/* deadlock: main takes A then B; "demo-deadlock" takes B then A. Neither ever returns: the
 * demo hangs for good (end it with kill). */
static pthread_mutex_t demo_deadlock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t demo_deadlock_b = PTHREAD_MUTEX_INITIALIZER;
static sem_t demo_deadlock_b_held;

static void *demo_deadlock_other(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "demo-deadlock");
  pthread_mutex_lock(&demo_deadlock_b);
  sem_post(&demo_deadlock_b_held);
  pthread_mutex_lock(&demo_deadlock_a); /* held by the main thread */
  return NULL;
}

DEMO_NOINLINE static void demo_stall_deadlock(void) {
  sem_init(&demo_deadlock_b_held, 0, 0);
  pthread_mutex_lock(&demo_deadlock_a);
  pthread_t other;
  if (pthread_create(&other, NULL, demo_deadlock_other, NULL) != 0) return;
  demo_sem_wait(&demo_deadlock_b_held);
  pthread_mutex_lock(&demo_deadlock_b); /* held by demo-deadlock, which waits for A */
}

/* net: main sends a request to a local server ("demo-server", 127.0.0.1, a port the OS
 * chooses) that answers after ms, and waits in recv(). */
typedef struct demo_server {
  int listener;
  unsigned ms;
} demo_server;

static void *demo_serve_late(void *arg) {
  demo_server *s = arg;
  pthread_setname_np(pthread_self(), "demo-server");
  int c = accept(s->listener, NULL, NULL);
  if (c < 0) return NULL;
  char byte;
  if (read(c, &byte, 1) == 1) {
    demo_sleep_ms(s->ms);
    if (write(c, "y", 1) != 1) perror(DEMO_NAME ": write");
  }
  close(c);
  return NULL;
}

DEMO_NOINLINE static void demo_stall_net(unsigned ms) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  demo_server s = {socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ms};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  pthread_t server;
  if (s.listener < 0 || fd < 0 || bind(s.listener, (struct sockaddr *)&a, sizeof(a)) != 0 ||
      listen(s.listener, 1) != 0 || getsockname(s.listener, (struct sockaddr *)&a, &len) != 0 ||
      pthread_create(&server, NULL, demo_serve_late, &s) != 0) {
    perror(DEMO_NAME ": the local server");
    if (s.listener >= 0) close(s.listener);
    if (fd >= 0) close(fd);
    return;
  }
  char byte;
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && write(fd, "q", 1) == 1)
    while (recv(fd, &byte, 1, 0) < 0 && errno == EINTR) {
    }
  pthread_join(server, NULL);
  close(fd);
  close(s.listener);
}

/* A modal loop, as a dialog's own loop: for ms the main thread waits in the loop's own poll and
 * handles what wakes it (here it drains the wake-up), but runs nothing that was posted, so
 * lagscope's ping waits. The main thread is not stuck: idle, not a hang. (With a window, its
 * loop waits in SDL, so this poll is not the one lagscope saw it idle in: headless only.) */
DEMO_NOINLINE static void demo_stall_modal(unsigned ms) {
  uint64_t end = demo_now_ns() + ms * DEMO_NS_PER_MS;
  for (uint64_t now; (now = demo_now_ns()) < end;) {
    uint64_t left = end - now;
    struct timespec timeout = {(time_t)(left / DEMO_NS_PER_S), (long)(left % DEMO_NS_PER_S)};
    struct pollfd pfd = {.fd = demo_main_queue.wake_fd, .events = POLLIN};
    if (ppoll(&pfd, 1, &timeout, NULL) == 1 && (pfd.revents & POLLIN)) {
      uint64_t count;
      ssize_t n = read(demo_main_queue.wake_fd, &count, sizeof count);
      (void)n;
    }
  }
  demo_wake(demo_main_queue.wake_fd); /* what was posted meanwhile runs when the loop is back */
}

static void demo_stall(const demo_options *o) {
  if (demo_jsonl) demo_print_stall(o->stall_kind, o->stall_ms, demo_now_ns());
  switch (o->stall_kind) {
  case DEMO_STALL_BUSY: demo_stall_busy(o->stall_ms); break;
  case DEMO_STALL_LOCK: demo_stall_lock(o->stall_ms); break;
  case DEMO_STALL_ALLOC: demo_stall_alloc(o->stall_ms); break;
  case DEMO_STALL_SLEEP: demo_stall_sleep(o->stall_ms); break;
  case DEMO_STALL_IO: demo_stall_io(o->stall_ms); break;
  case DEMO_STALL_CHAIN: demo_stall_chain(o->stall_ms); break;
  case DEMO_STALL_DEADLOCK: demo_stall_deadlock(); break;
  case DEMO_STALL_NET: demo_stall_net(o->stall_ms); break;
  case DEMO_STALL_MODAL: demo_stall_modal(o->stall_ms); break;
  case DEMO_STALL_OPEN: demo_stall_open(o->stall_ms); break;
  case DEMO_STALL_PHASES: demo_stall_phases(o->stall_ms); break;
  }
}

/* ---- the main loop ------------------------------------------------------------------------ */

static volatile sig_atomic_t demo_quit_requested;
static volatile sig_atomic_t demo_stall_requested;

static void demo_on_signal(int sig) {
  int saved = errno;
  if (sig == SIGUSR2) demo_stall_requested = 1;
  else demo_quit_requested = 1;
  if (demo_main_queue.wake_fd >= 0) demo_wake(demo_main_queue.wake_fd);
  errno = saved;
}

static int demo_install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = demo_on_signal;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGINT, SIGTERM, SIGUSR2};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], &sa, NULL) != 0) return -1;
  return 0;
}

typedef struct demo_loop {
  const demo_options *options;
#ifdef DEMO_HAVE_WINDOW
  demo_window *window; /* NULL: headless */
#endif
  uint64_t period_ns;
  uint64_t next_frame_ns;
  uint64_t next_stall_ns; /* 0: no timer stalls */
  uint64_t end_ns;        /* 0: no duration */
  uint64_t quit_ns;       /* when shutdown began, 0 before */
} demo_loop;

static void demo_loop_init(demo_loop *l, const demo_options *o, void *window) {
  uint64_t now = demo_now_ns();
  memset(l, 0, sizeof *l);
#ifdef DEMO_HAVE_WINDOW
  l->window = window;
#else
  (void)window;
#endif
  l->options = o;
  l->period_ns = DEMO_NS_PER_S / o->fps;
  l->next_frame_ns = now;
  if (o->stall_every_s > 0) l->next_stall_ns = now + (uint64_t)(o->stall_every_s * 1e9);
  if (o->duration_s > 0) l->end_ns = now + (uint64_t)(o->duration_s * 1e9);
}

/* A stall is due by timer or by SIGUSR2. Timer stalls that would outlast --duration are skipped
 * so that every stall is over, and reported, before the demo exits. */
static int demo_stall_due(demo_loop *l, uint64_t now) {
  if (demo_stall_requested) {
    demo_stall_requested = 0;
    return 1;
  }
  if (l->next_stall_ns == 0 || now < l->next_stall_ns) return 0;
  l->next_stall_ns += (uint64_t)(l->options->stall_every_s * 1e9);
  if (l->next_stall_ns < now) l->next_stall_ns = now; /* fell behind: no burst of catch-up stalls */
  uint64_t stall_end = now + l->options->stall_ms * DEMO_NS_PER_MS;
  return l->end_ns == 0 || stall_end < l->end_ns;
}

/* One frame: maybe stall (the frame's "work"), then draw and present it (with a window). */
static void demo_frame(demo_loop *l) {
  uint64_t now = demo_now_ns();
  if (l->quit_ns == 0 && demo_stall_due(l, now)) demo_stall(l->options);
#ifdef DEMO_HAVE_WINDOW
  if (l->window) demo_window_draw(l->window, demo_now_ns());
#endif
  lagscope_frame();
  now = demo_now_ns();
  l->next_frame_ns += l->period_ns;
  if (l->next_frame_ns < now) l->next_frame_ns = now + l->period_ns; /* late: skip, don't burst */
}

/* Sleeps until the next frame is due or something was posted or a signal came: in ppoll, or with
 * a window in SDL's event wait (which also handles the window's events and keys). */
static void demo_wait(demo_loop *l) {
  uint64_t now = demo_now_ns();
  uint64_t wait_ns = l->next_frame_ns > now ? l->next_frame_ns - now : 0;
#ifdef DEMO_HAVE_WINDOW
  if (l->window) {
    demo_window_input in = {0, 0};
    demo_window_wait(l->window, wait_ns, &in);
    if (in.stall) demo_stall_requested = 1;
    if (in.quit) demo_quit_requested = 1;
    return;
  }
#endif
  struct timespec timeout = {(time_t)(wait_ns / DEMO_NS_PER_S), (long)(wait_ns % DEMO_NS_PER_S)};
  struct pollfd pfd = {.fd = demo_main_queue.wake_fd, .events = POLLIN};
  ppoll(&pfd, 1, &timeout, NULL); /* EINTR is fine: the loop looks at the flags */
}

/* Shutdown starts at --duration or on SIGINT/SIGTERM; it finishes once lagscope has reported the
 * end of any hang still open (bounded), so that each hang_began gets its hang_ended. */
static int demo_should_exit(demo_loop *l) {
  uint64_t now = demo_now_ns();
  if (l->quit_ns == 0 && (demo_quit_requested || (l->end_ns != 0 && now >= l->end_ns)))
    l->quit_ns = now;
  if (l->quit_ns == 0) return 0;
  return !demo_hang_open || now - l->quit_ns >= DEMO_HANG_GRACE_NS;
}

static void demo_run(const demo_options *o, void *window) {
  demo_loop l;
  demo_loop_init(&l, o, window);
  while (!demo_should_exit(&l)) {
    if (demo_now_ns() >= l.next_frame_ns) demo_frame(&l);
    if (o->heartbeat) lagscope_heartbeat();
    demo_wait(&l);
    demo_queue_drain(&demo_main_queue);
  }
}

/* ---- main --------------------------------------------------------------------------------- */

/* The window unless --headless; NULL (headless) also when SDL2 was not built in or there is no
 * display, with a note on stderr. */
static void *demo_open_window(const demo_options *o) {
  if (o->headless) return NULL;
#ifdef DEMO_HAVE_WINDOW
  char why[256];
  demo_window *w = demo_window_open(DEMO_NAME, o->hud_expanded, why, sizeof why);
  if (!w) {
    fprintf(stderr, DEMO_NAME ": no window (%s): running headless\n", why);
    return NULL;
  }
  demo_main_queue.also_wake = demo_window_wake;
  return w;
#else
  fprintf(stderr, DEMO_NAME ": built without SDL2: running headless\n");
  return NULL;
#endif
}

/* Once lagscope runs: the HUD in lagscope's overlay window or in the frames. */
static void demo_show_hud(void *window, const demo_options *o) {
#ifdef DEMO_HAVE_WINDOW
  if (window) demo_window_show_hud(window, o->hud_overlay);
#else
  (void)window, (void)o;
#endif
}

static void demo_close_window(void *window) {
#ifdef DEMO_HAVE_WINDOW
  demo_window_close(window);
#else
  (void)window;
#endif
}

static lagscope_config demo_config(const demo_options *o, int windowed) {
  lagscope_config c = lagscope_config_default();
  c.hud = windowed; /* headless, nobody would show it */
  c.hud_scale = o->hud_scale;
  c.hud_corner = o->hud_corner;
  c.hud_expanded = o->hud_expanded;
  c.hang_threshold_ms = o->threshold_ms;
  c.refresh_hz = o->refresh_hz;
  c.on_event = demo_on_event;
  c.report_dir = o->report_dir;
  c.server = !o->no_server;
  c.server_port = o->port;
  c.server_bind = o->bind;
  if (o->max_clients != 0) c.server_max_clients = o->max_clients;
  if (o->max_streams != 0) c.server_max_stream_clients = o->max_streams;
  if (o->max_reports != 0) c.report_max_count = o->max_reports;
  if (!o->heartbeat) {
    c.post_main = demo_post_main;
    c.post_main_user = &demo_main_queue;
  }
  return c;
}

/* ---- load: threads that start and end --------------------------------------------------------
 * Every thread's start and end maps and unmaps its stack, taking the process's mmap lock for
 * writing: the load under which lagscope must still see every stall (issue 31). Each spawner
 * starts a batch of short-lived threads, waits for them, and starts the next. */

#define DEMO_CHURN_BATCH 40
#define DEMO_CHURN_SPAWNERS_MAX 50

static atomic_int demo_churn_stop;
static pthread_t demo_churn_spawners[DEMO_CHURN_SPAWNERS_MAX];
static unsigned demo_churn_spawner_count;

static void *demo_churn_leaf(void *arg) {
  unsigned ms = (unsigned)(uintptr_t)arg % 20u;
  struct timespec t = {0, (long)ms * 1000000L};
  nanosleep(&t, NULL);
  return NULL;
}

static void *demo_churn_spawner(void *arg) {
  (void)arg;
  uintptr_t n = 0;
  while (!atomic_load(&demo_churn_stop)) {
    pthread_t leaves[DEMO_CHURN_BATCH];
    unsigned started = 0;
    for (unsigned i = 0; i < DEMO_CHURN_BATCH; i++)
      if (pthread_create(&leaves[started], NULL, demo_churn_leaf, (void *)n++) == 0) started++;
    for (unsigned i = 0; i < started; i++) pthread_join(leaves[i], NULL);
  }
  return NULL;
}

static void demo_churn_start(unsigned threads) {
  unsigned spawners = (threads + DEMO_CHURN_BATCH - 1) / DEMO_CHURN_BATCH;
  if (spawners > DEMO_CHURN_SPAWNERS_MAX) spawners = DEMO_CHURN_SPAWNERS_MAX;
  for (unsigned i = 0; i < spawners; i++)
    if (pthread_create(&demo_churn_spawners[demo_churn_spawner_count], NULL, demo_churn_spawner,
                       NULL) == 0)
      demo_churn_spawner_count++;
}

static void demo_churn_end(void) {
  atomic_store(&demo_churn_stop, 1);
  for (unsigned i = 0; i < demo_churn_spawner_count; i++)
    pthread_join(demo_churn_spawners[i], NULL);
}

int main(int argc, char **argv) {
  lagscope_config defaults = lagscope_config_default();
  demo_options o = {.fps = 60, .stall_kind = DEMO_STALL_BUSY, .stall_ms = 600,
                    .threshold_ms = defaults.hang_threshold_ms, .refresh_hz = defaults.refresh_hz,
                    .hud_scale = defaults.hud_scale, .hud_corner = defaults.hud_corner,
                    .hud_overlay = -1,
                    .port = defaults.server_port};
  int parsed = demo_parse_args(argc, argv, &o);
  if (parsed < 0) return 2;
  if (parsed > 0) {
    demo_usage(stdout);
    return 0;
  }
  demo_jsonl = o.events_jsonl;

  demo_main_queue.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (demo_main_queue.wake_fd < 0 || demo_install_signals() != 0) {
    perror(DEMO_NAME ": setup");
    return 1;
  }
  void *window = demo_open_window(&o);
  if (demo_jsonl) demo_print_started(&o, window != NULL);

  lagscope_config config = demo_config(&o, window != NULL);
  int rc = lagscope_start(&config);
  if (rc != 0) {
    fprintf(stderr, DEMO_NAME ": lagscope_start failed: %s (%s)\n", lagscope_strerror(rc),
            lagscope_error_name(rc));
    demo_close_window(window);
    return 1;
  }
  demo_show_hud(window, &o);
  demo_churn_start(o.churn_threads);
  demo_run(&o, window);
  demo_churn_end();
  lagscope_stop();
  demo_close_window(window); /* after lagscope_stop: nothing posts any more */
  int fd = demo_main_queue.wake_fd;
  demo_main_queue.wake_fd = -1; /* a late signal must not write to a closed descriptor */
  close(fd);
  return 0;
}
