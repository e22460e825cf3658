/*
 * lagscope — see why your app's main thread stalls, live, from inside a debug build.
 *
 * This is the one public header. Everything the app can call is here.
 *
 * Threads. lagscope runs its own threads: a monitor thread (watchdog, frame math, usage reader), a
 * dispatcher thread (delivers events) and one delivery thread per subscriber. The main thread
 * only ever runs lagscope_frame(), lagscope_heartbeat() and the ping that lagscope posts through
 * the host's post_main hook; each of those is a clock read and a few atomic stores: no lock, no
 * allocation, no system call other than the vDSO clock.
 *
 * Errors. Every call that can fail returns 0 or a negative lagscope_error code;
 * lagscope_strerror() names it. There is no global "last error".
 *
 * Release builds. Built with LAGSCOPE_ENABLE=OFF (the default for CMAKE_BUILD_TYPE=Release or
 * MinSizeRel) every function below is a no-op returning LAGSCOPE_DISABLED (or nothing, or
 * a constant string); no thread, socket or signal handler ever exists.
 *
 * Ownership, once for all: an event and everything it points to is valid only during the
 * callback that receives it. To keep a payload past the callback, lagscope_retain() it and
 * lagscope_release() it when done. Strings returned by lagscope_event_json() are freed with
 * lagscope_free().
 */
#ifndef LAGSCOPE_H
#define LAGSCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports exactly the functions this header declares, each marked LAGSCOPE_EXTERN;
 * everything else is built hidden (the test install_exports,
 * tests/builds/install/check-exports, checks a shared build). */
#if defined(__GNUC__) || defined(__clang__)
#define LAGSCOPE_EXTERN __attribute__((visibility("default")))
#else
#define LAGSCOPE_EXTERN
#endif

/* ---- version ------------------------------------------------------------------------------ */

/* Semantic versioning. Before 1.0 the ABI may change with any MINOR release. */
#define LAGSCOPE_VERSION_MAJOR 0
#define LAGSCOPE_VERSION_MINOR 1
#define LAGSCOPE_VERSION_PATCH 0
#define LAGSCOPE_VERSION_HEX                                                                  \
  ((LAGSCOPE_VERSION_MAJOR << 16) | (LAGSCOPE_VERSION_MINOR << 8) | LAGSCOPE_VERSION_PATCH)
#define LAGSCOPE_STRINGIFY_(x) #x
#define LAGSCOPE_STRINGIFY(x) LAGSCOPE_STRINGIFY_(x)
#define LAGSCOPE_VERSION_STRING                                                               \
  LAGSCOPE_STRINGIFY(LAGSCOPE_VERSION_MAJOR)                                                   \
  "." LAGSCOPE_STRINGIFY(LAGSCOPE_VERSION_MINOR) "." LAGSCOPE_STRINGIFY(LAGSCOPE_VERSION_PATCH)

/* The version of the library actually linked, as LAGSCOPE_VERSION_HEX. */
LAGSCOPE_EXTERN unsigned lagscope_version(void);

/* ---- errors ------------------------------------------------------------------------------- */

/* One list makes both the enum and lagscope_strerror()/lagscope_error_name().
 *
 * The codes lie below -4095, where no -errno can be (Linux returns a failed system call as
 * -4095..-1; errno values elsewhere are smaller still): a -errno that reached an int meant for
 * them (a port call returns one where its comment says so, for its caller to turn into a
 * code) is never taken for one of them, and lagscope_error_name() calls it "UNKNOWN". Codes
 * equal to -errno where one exists (libuv's rule) were not taken: most of these have no errno
 * twin, the others would differ between Linux and Darwin, and an unconverted -ENOENT would
 * pass for LAGSCOPE_ENOENT. (unit_errors checks every code against -1..-4095.) */
#define LAGSCOPE_ERROR_MAP(XX)                                                                 \
  XX(DISABLED, -5001, "lagscope is compiled out of this build (release configuration)")       \
  XX(EINVAL, -5002, "invalid argument")                                                       \
  XX(ENOMEM, -5003, "out of memory")                                                          \
  XX(EALREADY, -5004, "lagscope is already running")                                          \
  XX(ENOTRUNNING, -5005, "lagscope is not running")                                           \
  XX(EFULL, -5006, "queue full: the event was dropped and counted")                           \
  XX(ENODATA, -5007, "no data yet")                                                           \
  XX(ESYS, -5008, "a system call failed")                                                     \
  XX(EPROC, -5009, "a /proc file is missing or unreadable")                                   \
  XX(EPARSE, -5010, "a file did not have the expected format")                                \
  XX(EDEADLK, -5011, "would deadlock: called from one of lagscope's own threads")             \
  XX(ELIMIT, -5012, "a configured limit was reached")                                         \
  XX(ENOENT, -5013, "no such item")                                                           \
  XX(EPOST, -5014, "the host's post_main hook refused the ping")                              \
  XX(ESIGNAL, -5015, "the capture signal is handled by the app, or none is free")             \
  XX(ELOST, -5016, "the host's queue lost a ping: the main thread ran on without running it") \
  XX(ETHREAD, -5017, "called on a thread other than the one that started lagscope")           \
  XX(ETIMEDOUT, -5018, "lagscope's own thread did not answer in time")                        \
  XX(ENOTSUP, -5019, "not supported on this platform or by this build")

typedef enum lagscope_error {
  LAGSCOPE_OK = 0,
#define LAGSCOPE_ERROR_ENUM_(name, value, text) LAGSCOPE_##name = (value),
  LAGSCOPE_ERROR_MAP(LAGSCOPE_ERROR_ENUM_)
#undef LAGSCOPE_ERROR_ENUM_
} lagscope_error;

/* A sentence for an error code (never NULL; unknown codes get "unknown error"). */
LAGSCOPE_EXTERN const char *lagscope_strerror(int code);
/* The code's name without prefix, e.g. "EINVAL" (never NULL). */
LAGSCOPE_EXTERN const char *lagscope_error_name(int code);

/* ---- configuration ------------------------------------------------------------------------ */

/* A function for the main thread; lagscope hands one to post_main. */
typedef void (*lagscope_main_fn)(void *arg);

/* The host's hook to run fn(arg) soon on its main thread (e.g. push onto its main-loop queue).
 * Called on the monitor thread; must not block. Return 0 when queued, anything else when not.
 * lagscope never posts a second ping while one is unanswered, and arg stays valid forever
 * (even after lagscope_stop), so a queue may run it late. */
typedef int (*lagscope_post_main_fn)(lagscope_main_fn fn, void *arg, void *user);

/* Where the HUD sits on the screen. */
typedef enum lagscope_hud_corner {
  LAGSCOPE_HUD_TOP_LEFT = 0,
  LAGSCOPE_HUD_TOP_RIGHT = 1,
  LAGSCOPE_HUD_BOTTOM_LEFT = 2,
  LAGSCOPE_HUD_BOTTOM_RIGHT = 3
} lagscope_hud_corner;

struct lagscope_event;
typedef void (*lagscope_event_fn)(const struct lagscope_event *event, void *user);

/* Receives one log line (no trailing newline). Default: stderr, prefixed "lagscope: ". */
typedef void (*lagscope_log_fn)(const char *line, void *user);

typedef struct lagscope_config {
  /* No answer from the main thread for this long is a hang. Default 250 (Apple's hang
   * definition). Range 10..60000 ms. */
  uint32_t hang_threshold_ms;
  /* How often the watchdog pings the main thread (post_main mode). Default 50. Range
   * 1..hang_threshold_ms. Smaller finds a hang's start more precisely and costs more posts. */
  uint32_t ping_interval_ms;
  /* How often CPU, memory, threads and frame metrics are read and published (a metrics
   * event). Default 500. Range 50..60000 ms. */
  union {
    uint32_t usage_interval_ms;
    /* Deprecated: usage_interval_ms's old name, kept so that code written before the rename
     * compiles unchanged (the same storage). A "sample" is a stack's: hang_sample_interval_ms. */
    uint32_t sample_interval_ms;
  };
  /* While a hang lasts, the main thread's stack is sampled this often. Default 10. Range
   * 1..1000 ms. */
  uint32_t hang_sample_interval_ms;
  /* Linux: the real-time signal that captures a thread running on the CPU (a thread blocked
   * in the kernel is read without one). Default 0: the first of SIGRTMIN+3..SIGRTMAX that the
   * app does not handle, chosen at start. A number in SIGRTMIN..SIGRTMAX: that one; if the app
   * handles it, running threads are not captured (an error event says so). Ignored on Darwin. */
  uint32_t capture_signal;
  /* Darwin: how much of a stopped thread's stack each capture copies, from its stack pointer
   * up, in KiB. A deeper stack (SwiftUI, AttributeGraph) keeps its innermost frames and says
   * "truncated". Default 64. Range 16..1024. Linux walks the live stack and ignores it. */
  uint32_t stack_copy_kib;
  /* The display's refresh rate, the frame budget's source, where none is measured (Apple's
   * display link, and the X11 overlay's RandR reading replace it). Default 60. Range 1..1000 Hz. */
  uint32_t refresh_hz;
  /* Slots in each lane of the central event queue (each publishing thread has a lane; 8 lanes,
   * more threads share them); a full lane drops (counted). Default 256. A power of two in
   * 16..65536. */
  uint32_t bus_capacity;
  /* Slots in each subscriber's own queue; a slow subscriber loses events (counted) and never
   * holds up the others. Default 256. A power of two in 16..65536. */
  uint32_t subscriber_capacity;
  /* Watchdog mode. With post_main set, the monitor pings through it. With NULL (heartbeat
   * mode) the host calls lagscope_heartbeat() from its loop at least every few ms of
   * activity, and lagscope_frame() counts as a heartbeat too. Default NULL. */
  lagscope_post_main_fn post_main;
  void *post_main_user;
  /* Optional subscriber registered atomically with start, so it misses no event. Default NULL. */
  lagscope_event_fn on_event;
  void *on_event_user;
  /* The folder for hang reports, created if missing. Default NULL:
   * "$TMPDIR/lagscope-<uid>/<app_name>" ("/tmp" without TMPDIR). */
  const char *report_dir;
  /* Reports kept; the oldest go first. Default 50. Range 1..100000. */
  uint32_t report_max_count;
  /* Bytes of reports kept; the oldest go first. Default 32 MiB. At least 64 KiB. */
  uint64_t report_max_bytes;
  /* The app's name in reports and the default report folder. Default NULL: the program's
   * name (Linux: /proc/self/comm). */
  const char *app_name;
  /* The on-screen HUD: drawn off the main thread at most 4 times a second (and at once when
   * a hang begins); the host shows it with lagscope_hud_take(). Default 1 (on). */
  int hud;
  /* Pixels per point: 1 on a desktop, 2 or 3 on a phone. Default 1. Range 0.5..8. */
  float hud_scale;
  /* Which corner the host should place it in (returned with each image). Default bottom left
   * (clear of a window's menu bar and of its title bar's buttons). */
  lagscope_hud_corner hud_corner;
  /* Start expanded (graph, CPU, memory, URL) rather than compact. Default 0. */
  int hud_expanded;
  /* Where log lines go. Default NULL: stderr. */
  lagscope_log_fn log;
  void *log_user;
  /* The LAN viewer: an HTTP server inside the app (civetweb) serving the viewer page and a
   * read-only JSON API behind a per-launch token (docs/guide.md "The viewer", docs/viewer-api.md).
   * Default 1 (on). A server that cannot start (port in use) is logged and published as an
   * error event; lagscope runs on without it. */
  int server;
  /* Its TCP port. Default 8080. 0: any free port (lagscope_viewer_url says which). */
  uint32_t server_port;
  /* The IPv4 address it listens on: NULL or "0.0.0.0" for every interface (the default: the
   * device is on a LAN), "127.0.0.1" for this machine only, or one local address. */
  const char *server_bind;
  /* Connections served at once; more are answered 503. Default 16. Range 2..256. */
  uint32_t server_max_clients;
  /* Of those, live streams (the viewer's event stream) at once. Default 8. Range
   * 1..server_max_clients - 1 (one is always left for the API). */
  uint32_t server_max_stream_clients;
  /* A stall of the main thread this long (ms) that ends before hang_threshold_ms is a hitch:
   * a hitch event with its heaviest stack and cause. 0: off (and none at or past the
   * threshold). Default 50. Range 0..60000. */
  uint32_t hitch_report_ms;
  /* Hitch events the viewer keeps in memory, the latest (GET /api/v1/hitches, the marks under
   * its frame-time chart). Default 32. Range 1..1024. */
  uint32_t hitch_keep;
  /* A hang whose cause is idle (the main thread waited in its own event loop's wait, which did
   * not run lagscope's ping: a modal or nested loop) is reported but not counted as a hang (the
   * hang count, the HUD, lagscope-run's budget): 0. 1: counted like any other. Default 0. */
  int hang_count_idle;
  /* The app's version, for /metrics' lagscope_build_info (the app's name is app_name's).
   * Default NULL: "" (lagscope cannot know it). Copied at start. */
  const char *app_version;
  /* A credential of the user's that GET /metrics also accepts as a bearer token, besides the
   * viewer's per-launch token: fixed across launches and instances, for a team's Prometheus.
   * 16..128 visible ASCII characters (no space); never logged. Default NULL: the environment's
   * LAGSCOPE_METRICS_TOKEN, else none. Copied at start. */
  const char *metrics_token;
  /* A Prometheus Pushgateway that lagscope_stop pushes the final metrics to (the /metrics text,
   * docs/viewer-api.md), so that a run too short to be scraped (a CI job) still counts: PUT
   * <url>/metrics/job/<app name>/instance/<pushgateway_instance>. "http://HOST[:PORT][/PATH]";
   * https is not supported (lagscope_config_validate refuses it). NULL (the default): no push.
   * The push has 2 s in all, on a thread of lagscope's; a gateway that is down or slow costs
   * one log line, never the app's exit. */
  const char *pushgateway_url;
  /* The push's instance label: NULL (the default) for "<host name>:<pid>". */
  const char *pushgateway_instance;
} lagscope_config;

/* The defaults above. */
LAGSCOPE_EXTERN lagscope_config lagscope_config_default(void);

/* 0 if every field is in range; else LAGSCOPE_EINVAL and, if why is not NULL, a sentence
 * naming the first bad field, its value and the allowed range. Takes no lock. */
LAGSCOPE_EXTERN int lagscope_config_validate(const lagscope_config *config, char *why,
                                             size_t why_size);

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* Validates config (NULL: defaults), then starts the monitor and dispatcher threads.
 * A bad config logs why and returns LAGSCOPE_EINVAL; nothing starts. Returns LAGSCOPE_EALREADY
 * when running. Safe from any thread. The thread watched is the caller on Linux (call it on
 * the thread of the loop to watch) and the process's main thread on iOS and macOS, wherever
 * it is called. */
LAGSCOPE_EXTERN int lagscope_start(const lagscope_config *config);

/* Stops every thread lagscope started and joins them; events published before the call are
 * delivered first. Idempotent: LAGSCOPE_ENOTRUNNING when not running. Safe from any thread
 * except lagscope's own (from a callback it returns LAGSCOPE_EDEADLK). */
LAGSCOPE_EXTERN int lagscope_stop(void);

/* 1 while running, 0 otherwise. */
LAGSCOPE_EXTERN int lagscope_is_running(void);

/* ---- main-thread calls (no lock, no allocation) --------------------------------------------- */

/* Call once per frame on the main thread, when the frame is handed to the display. */
LAGSCOPE_EXTERN void lagscope_frame(void);

/* Heartbeat mode: call from the main loop, each iteration. A no-op in post_main mode except
 * that it also proves the main thread alive. */
LAGSCOPE_EXTERN void lagscope_heartbeat(void);

/* Around a wait for input in the main loop (poll, an event queue's wait): between begin and
 * end the main thread is idle, not hung, however long it waits; a hang in progress ends at
 * begin. Any loop, heartbeat or post_main mode. A clock read and atomic stores each. */
LAGSCOPE_EXTERN void lagscope_idle_begin(void);
LAGSCOPE_EXTERN void lagscope_idle_end(void);

/* ---- events ------------------------------------------------------------------------------- */

/* Every event type, once: XX(NAME, value, "name in JSON"). In order:
 *   HANG_BEGAN      the main thread has not answered for hang_threshold_ms
 *   HANG_ENDED      the main thread answered
 *   METRICS         every usage_interval_ms, and once more at stop (the frames since the
 *                   last metrics counted): payload.metrics
 *   ERROR           something failed and was survived: payload.message
 *   HANG_RECOVERED  at start: a hang of an earlier run that never ended (the app was killed
 *                   while hung): payload.report
 *   HANG_SAMPLE     while a hang lasts, at most every 100 ms: the main thread's latest stack,
 *                   payload.stack_json
 *   SERVER_STARTED  the viewer listens: payload.message is its URL
 *   HITCH           a stall of hitch_report_ms or more that ended before the threshold:
 *                   payload.stack_json, its heaviest stack
 *   MONITOR_BLIND   lagscope could not watch the main thread for a quarter of the threshold
 *                   or more, with no hang open (its own slow work under load, or waiting for
 *                   a CPU): a stall that began and ended then was not seen. No payload
 *   HANG_LOST       at start: a hang of an earlier run whose process died while its first
 *                   report was being written, so that no whole report of it is left: what
 *                   is known of it (as.hang_lost); payload.message says it in a sentence */
#define LAGSCOPE_EVENT_TYPES(XX)              \
  XX(HANG_BEGAN, 1, "hang_began")             \
  XX(HANG_ENDED, 2, "hang_ended")             \
  XX(METRICS, 3, "metrics")                   \
  XX(ERROR, 4, "error")                       \
  XX(HANG_RECOVERED, 5, "hang_recovered")     \
  XX(HANG_SAMPLE, 6, "hang_sample")           \
  XX(SERVER_STARTED, 7, "server_started")     \
  XX(HITCH, 8, "hitch")                       \
  XX(MONITOR_BLIND, 9, "monitor_blind")       \
  XX(HANG_LOST, 10, "hang_lost")

typedef enum lagscope_event_type {
#define LAGSCOPE_EVENT_ENUM_(name, value, text) LAGSCOPE_EVENT_##name = value,
  LAGSCOPE_EVENT_TYPES(LAGSCOPE_EVENT_ENUM_)
#undef LAGSCOPE_EVENT_ENUM_
} lagscope_event_type;

/* The type's name in JSON (the third column above); "unknown" otherwise. */
LAGSCOPE_EXTERN const char *lagscope_event_type_name(int type);

/* Apple's bands of hitch time, in order from 0: XX(NAME, "name in JSON", floor in ms per s).
 * A second's hitch_ms_per_s is in the last band whose floor it is above: GOOD up to 10 ms/s,
 * WARNING up to 25, CRITICAL up to 50, BAD above. */
#define LAGSCOPE_HITCH_BANDS(XX)         \
  XX(GOOD, "good", 0.0)                  \
  XX(WARNING, "warning", 10.0)           \
  XX(CRITICAL, "critical", 25.0)         \
  XX(BAD, "bad", 50.0)

typedef enum lagscope_hitch_band {
#define LAGSCOPE_HITCH_BAND_ENUM_(name, text, floor_ms_per_s) LAGSCOPE_HITCH_##name,
  LAGSCOPE_HITCH_BANDS(LAGSCOPE_HITCH_BAND_ENUM_)
#undef LAGSCOPE_HITCH_BAND_ENUM_
} lagscope_hitch_band;

/* The band's name in JSON (the second column above); "unknown" otherwise. */
LAGSCOPE_EXTERN const char *lagscope_hitch_band_name(int band);

#define LAGSCOPE_RECENT_FRAMES 120       /* frame times kept for the HUD's graph */
#define LAGSCOPE_FRAME_HISTOGRAM_BUCKETS 10
#define LAGSCOPE_BUSIEST_THREADS 8
#define LAGSCOPE_THREAD_NAME_MAX 16      /* bytes, with the NUL; Linux's comm length */

/* Upper bounds in ms of each histogram bucket but the last (which is open). Chosen a little
 * above 120, 90, 60, 30 and 20 Hz frame times so that jitter stays in its bucket. */
#define LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS {10.0, 12.5, 20.0, 40.0, 60.0, 100.0, 250.0, 500.0, 1000.0}

typedef struct lagscope_thread_cpu {
  int32_t tid;
  char name[LAGSCOPE_THREAD_NAME_MAX];
  double cpu_percent; /* of one core, over the last sample interval */
} lagscope_thread_cpu;

typedef struct lagscope_frame_metrics {
  double refresh_hz;          /* the display's rate: measured where the platform can (Apple's
                                 display link; the X11 overlay's RandR reading), else
                                 config.refresh_hz */
  double fps;                 /* frames presented in the last second (see idle) */
  uint32_t frames;            /* frames in the last second */
  uint32_t dropped;           /* frames missed in the last second against the refresh period */
  double hitch_ms_per_s;      /* time frames were late in the last second, in ms per s; a frame
                                 still in progress while the main thread is late counts */
  lagscope_hitch_band band;   /* hitch_ms_per_s in Apple's bands */
  uint64_t total_frames;      /* since start */
  uint64_t total_dropped;     /* since start */
  uint64_t lost_timestamps;   /* frames the monitor could not read in time (ring overrun) */
  /* Frame times since start by bucket, bounds in LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS. */
  uint64_t histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS];
  /* The last recent_count frame times in ms, oldest first. */
  float recent_ms[LAGSCOPE_RECENT_FRAMES];
  uint32_t recent_count;
  /* 1: no frame wanted. The app drew nothing for a while (about 100 ms at 60 Hz) and its main
   * thread answered in time: an event-driven app with nothing to draw, not 0 FPS. Idle gaps
   * are left out of the frame times, the histogram and the dropped frames. */
  int idle;
  /* The app's own steady pace when it draws slower than the display by design (a game at
   * 35 fps, a video at 30), in frames per second; 0 when its frames follow the display. When
   * set, dropped and hitch_ms_per_s are judged against it, not against refresh_hz. */
  double cadence_hz;
  /* The frame times of histogram summed, in ms: its sum (its count is the buckets'). */
  double time_sum_ms;
} lagscope_frame_metrics;

typedef struct lagscope_metrics {
  uint64_t time_ns;           /* monotonic clock when sampled */
  int64_t wall_ms;            /* Unix time in ms when sampled */
  lagscope_frame_metrics frames;
  double cpu_percent;         /* the whole process, % of one core (may exceed 100) */
  uint32_t thread_count;
  uint64_t rss_bytes;         /* resident set */
  uint64_t pss_bytes;         /* proportional set (0 where the OS has none) */
  lagscope_thread_cpu busiest[LAGSCOPE_BUSIEST_THREADS]; /* by CPU, busiest first */
  uint32_t busiest_count;
  uint64_t hangs;             /* hangs that began since start */
  int hang_in_progress;       /* 1 while the main thread is hung */
  uint64_t events_published;  /* accepted by the bus since start */
  uint64_t events_dropped;    /* refused by a full bus, plus those a slow subscriber lost */
  double monitor_cpu_percent; /* lagscope's own threads, % of one core */
  uint64_t monitor_memory_bytes; /* heap lagscope holds: its runs and mappings whole */
  /* Since start: time the whole process was stopped (SIGSTOP, a debugger's breakpoint), which
   * no hang counts; and time lagscope's monitor woke late because it waited for a CPU (a
   * loaded machine), which hangs do count. */
  uint64_t stopped_ms;
  uint64_t monitor_starved_ms;
  /* Since start: time lagscope looked later than it meant to with no hang open (its own slow
   * work, or a CPU it waited for): stalls in it went unseen (MONITOR_BLIND events tell each
   * spell of a quarter of the threshold or more). */
  uint64_t monitor_blind_ms;
} lagscope_metrics;

/* A hang report: immutable, reference-counted (lagscope_retain/lagscope_release). */
typedef struct lagscope_hang_report lagscope_hang_report;
/* Its id, unique across launches ("<start, UTC>-<pid>-<n>"). */
LAGSCOPE_EXTERN const char *lagscope_report_id(const lagscope_hang_report *report);
/* The stored file's path; "" when it could not be stored. */
LAGSCOPE_EXTERN const char *lagscope_report_path(const lagscope_hang_report *report);
/* The whole report as JSON (docs/hang-report.md). */
LAGSCOPE_EXTERN const char *lagscope_report_json(const lagscope_hang_report *report);
/* Its cause as JSON, {"kind", "summary", "label"} (docs/hang-report.md, "The cause"), and its
 * heaviest main-thread stack, a JSON array of frames innermost first; "" when it has none.
 * A hang_recovered's report too: both read from its file. No allocation. */
LAGSCOPE_EXTERN const char *lagscope_report_cause(const lagscope_hang_report *report);
LAGSCOPE_EXTERN const char *lagscope_report_heaviest_stack(const lagscope_hang_report *report);

typedef struct lagscope_event {
  lagscope_event_type type;
  uint64_t sequence; /* position in the bus: strictly increasing in delivery order */
  uint64_t time_ns;  /* monotonic clock when published */
  union {
    struct {
      uint64_t hang_id;       /* 1, 2, ... per start */
      /* Monotonic: the later of the unanswered ping's post time and the main thread's last
       * sign of life (ping answer, frame, heartbeat). The stall began no later, so the
       * duration is a lower bound of it, a few ms short at most with frames flowing. */
      uint64_t start_ns;
      int64_t start_wall_ms;  /* the same moment, Unix time in ms */
      uint32_t threshold_ms;
      /* 1: the program's start-up: the main thread had shown no sign of life yet in this
       * process (no frame, heartbeat or ping answer), as a toolkit building its first window.
       * JSON: "app_state": "startup" (else "running"); "phase" in versions before the rename,
       * which lagscope's readers still accept. */
      int startup;
    } hang_began;
    struct {
      uint64_t hang_id;
      uint64_t start_ns;
      uint64_t duration_ns;   /* start to the main thread's answer, time suspended excluded */
      /* 1: a hang. 0: its cause is idle (config.hang_count_idle off): reported, not counted. */
      int counted;
      int startup;            /* as hang_began's */
    } hang_ended;
    struct {
      int code;               /* a lagscope_error */
    } error;
    struct {
      uint64_t hang_id;
      uint32_t sample_count;  /* main-thread samples so far */
      uint64_t elapsed_ns;    /* since the hang's start */
    } hang_sample;
    struct {
      uint32_t port;          /* the port bound (config 0: the one the OS chose) */
    } server_started;
    struct {
      uint64_t start_ns;      /* as a hang's: a lower bound of the stall's start */
      uint64_t duration_ns;   /* to the main thread's first sign of life seen after it */
      uint32_t sample_count;  /* main-thread samples taken while it was late */
      /* {"kind": ..., "summary": ...} as hang_ended's; NULL when no sample. */
      const char *cause_json;
      /* Where the app was: the heaviest stack's innermost function of the app's own code
       * (else the innermost named); "" when none. Both live in the payload's block: valid as
       * long as payload.stack_json is. */
      const char *function;
    } hitch;
    struct {
      uint64_t start_ns;      /* when the monitor meant to look (monotonic) */
      uint64_t duration_ns;   /* until it did */
      uint64_t busy_ns;       /* of which its own slow work; the rest it waited for a CPU */
    } monitor_blind;
    struct {
      uint64_t hang_id;       /* its number in its process (from its id); 0: not known */
      int64_t pid;            /* its process (from its id); 0: not known */
      int64_t start_wall_ms;  /* when it began, Unix time in ms; -1: not known */
      uint64_t bytes;         /* how much of its report was written when the process died */
      /* Its report's id and the temporary file it was found in; its first sample, {"t_ms",
       * "state", "stack"} as a report's "first_sample" (docs/hang-report.md), or NULL when
       * the process died before it was written whole. All three live in the payload's block:
       * valid as long as payload.message is. */
      const char *report_id;
      const char *path;
      const char *first_sample;
    } hang_lost;
  } as;
  union {
    const lagscope_metrics *metrics; /* LAGSCOPE_EVENT_METRICS */
    const char *message;             /* ERROR: what failed, in a sentence; SERVER_STARTED: the
                                        viewer's URL with its token; HANG_LOST: what was lost,
                                        in a sentence */
    const char *stack_json;          /* HANG_SAMPLE: the stack, innermost frame first, as a JSON
                                        array of frames (docs/hang-report.md, "A frame");
                                        HITCH: its heaviest stack, the same way ("[]": none) */
    const lagscope_hang_report *report; /* HANG_ENDED (NULL if it could not be built), HANG_RECOVERED */
    const void *any;                 /* NULL for the other types */
  } payload;
} lagscope_event;

/* Keep a payload past the callback (payload.any of an event); lock-free. */
LAGSCOPE_EXTERN void lagscope_retain(const void *payload);
/* Give it back; the last release frees it. NULL is ignored. */
LAGSCOPE_EXTERN void lagscope_release(const void *payload);

typedef uint32_t lagscope_subscription;

/* Calls fn(event, user) on a thread of its own for every event from now on, in bus order.
 * A slow callback delays only itself: past subscriber_capacity queued events it loses events
 * (counted in events_dropped). Writes the id to *out if out is not NULL, before fn can be
 * called (fn may read it from its first event on). Requires running. */
LAGSCOPE_EXTERN int lagscope_subscribe(lagscope_event_fn fn, void *user,
                                       lagscope_subscription *out);

/* After it returns, fn is never called again for that id. From the subscriber's own callback
 * it returns LAGSCOPE_EDEADLK. */
LAGSCOPE_EXTERN int lagscope_unsubscribe(lagscope_subscription id);

/* Copies the latest metrics. LAGSCOPE_ENODATA before the first sample. Takes a short lock;
 * not for the main thread's hot path. */
LAGSCOPE_EXTERN int lagscope_metrics_latest(lagscope_metrics *out);

/* ---- the HUD --------------------------------------------------------------------------------- */

typedef struct lagscope_hud_image {
  /* Premultiplied ARGB, one uint32_t per pixel in native byte order (cairo's ARGB32;
   * CoreGraphics' kCGImageAlphaPremultipliedFirst | kCGBitmapByteOrder32Host). */
  const uint32_t *pixels;
  int width, height;          /* pixels */
  int stride;                 /* bytes per row */
  float scale;                /* pixels per point */
  lagscope_hud_corner corner; /* where the host should place it */
  uint64_t sequence;          /* grows with each new image: redraw only when it changed */
} lagscope_hud_image;

/* Main thread: the latest finished HUD image. Lock-free, no allocation, no system call: it only
 * swaps a buffer index. The pixels stay valid until the next lagscope_hud_take or
 * lagscope_stop. Nothing is drawn until the first call asks for it (an app that shows no HUD
 * pays nothing): that call returns LAGSCOPE_ENODATA, and the first image follows within
 * milliseconds. LAGSCOPE_ENOTRUNNING when stopped or with config.hud off. */
LAGSCOPE_EXTERN int lagscope_hud_take(lagscope_hud_image *out);

/* Any thread: compact (0) or expanded (1); redrawn at once. */
LAGSCOPE_EXTERN int lagscope_hud_set_expanded(int expanded);

/* Any thread (X11: Linux, or XWayland): the HUD live over an X11 window of the app's, in a
 * window of lagscope's own, drawn by a thread of lagscope's on a display connection of its own
 * (never the app's Display or thread), so that it is redrawn while the main thread is stuck:
 * during a hang its badge counts up. display_name is what XOpenDisplay takes (NULL: $DISPLAY);
 * window is the one to follow: the HUD sits at its config.hud_corner, just above it in the
 * stack, and follows it when it moves, and goes while it is unmapped; 0 follows the process's
 * biggest viewable window (_NET_WM_PID). A later call points it at another window (the display
 * stays the first call's). lagscope_stop ends it, waiting at most about a second for an X
 * server that does not answer. The overlay is then the HUD's one taker: do not call
 * lagscope_hud_take while it shows it. Returns at once: the connection is opened on lagscope's
 * thread, and a failure there is an error event. LAGSCOPE_ENOTRUNNING when stopped or with
 * config.hud off (nothing is made, no connection opened), LAGSCOPE_ENOTSUP on iOS and macOS and
 * where the library was built without XCB (libxcb, libxcb-xfixes, libxcb-shape, libxcb-randr).
 * Its connection also reads the display's refresh rate from RandR every 2 s, which then
 * replaces config.refresh_hz as the frames' budget. */
LAGSCOPE_EXTERN int lagscope_hud_overlay_x11(const char *display_name, unsigned long window);

/* ---- the viewer ------------------------------------------------------------------------------ */

/* Copies the viewer's URL with this launch's token, "http://<lan-ip>:<port>/?token=<hex>", into
 * out. LAGSCOPE_ENOTRUNNING when stopped, LAGSCOPE_ENOENT when the server is off or did not
 * start, LAGSCOPE_ELIMIT when size is too small (out then holds ""). Any thread. */
LAGSCOPE_EXTERN int lagscope_viewer_url(char *out, size_t size);

/* The event as one line of JSON (no newline), with a "type" field: see docs/guide.md "Events".
 * Free with lagscope_free(). NULL when out of memory or disabled. */
LAGSCOPE_EXTERN char *lagscope_event_json(const lagscope_event *event);

/* Frees what lagscope handed out (lagscope_event_json). NULL is ignored. */
LAGSCOPE_EXTERN void lagscope_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* LAGSCOPE_H */
