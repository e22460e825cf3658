/*
 * Detection: what the main thread writes (display frames, heartbeats, ping answers), the
 * watchdog's state machine over it, the frame meter, and the usage readings' math.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_DETECT_H
#define LAGSCOPE_DETECT_H

#include "base/base.h"
#include "port.h"

/* ---- usage readings (core/detect/usage.c): portable math over two of them ------------------ */
/* Fills the CPU, memory, thread and busiest-thread fields of *out from two readings; own
 * threads (lagscope's) are summed into monitor_cpu_percent. F */
void lagscope__usage_compute(const lagscope__usage *previous,
                               const lagscope__usage *current,
                               const int32_t *own_tids, size_t own_len, lagscope_metrics *out);

/* Parsers for Linux's /proc text, portable so that tests feed them odd input. Each takes a
 * bounded buffer (not NUL-terminated necessarily) and returns 0 or LAGSCOPE_EPARSE. F */
int lagscope__parse_stat(const char *text, size_t len, char *name, size_t name_size,
                         char *state, uint64_t *utime_ticks, uint64_t *stime_ticks);
int lagscope__parse_kb_field(const char *text, size_t len, const char *field, uint64_t *bytes);
/* The first decimal number of the text (e.g. /proc/.../schedstat's run time in ns). */
int lagscope__parse_first_u64(const char *text, size_t len, uint64_t *value);
/* The first count numbers, separated by spaces (statm, schedstat): not sscanf, whose code is
 * libc's scanf machinery, made resident by the first call of an app that has no other use. */
int lagscope__parse_u64s(const char *text, size_t len, uint64_t *values, int count);

/* ---- frames (core/detect/frames.c) ----------------------------------------------------------------- */
/* The main thread writes timestamps into a single-producer ring; the monitor reads them. */
#define LAGSCOPE__FRAME_RING 1024 /* ≈ 8 s at 120 Hz; the monitor reads every sample interval */

typedef struct lagscope__frame_ring {
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t head; /* frames written, ever */
  _Atomic uint64_t slots[LAGSCOPE__FRAME_RING];
} lagscope__frame_ring;

void lagscope__frame_ring_push(lagscope__frame_ring *ring, uint64_t timestamp_ns); /* F */

/* The monitor's state for frame math. Holds the timestamps of the last second. */
#define LAGSCOPE__FRAME_WINDOW 2048 /* timestamps within one second we can hold (2 kHz) */

/* When the main thread owed the watchdog an answer too long (a hitch or a hang): a frame gap
 * that overlaps one is a late frame; a long one that does not is idle (nothing to draw). */
#define LAGSCOPE__LATE_PERIODS 32

typedef struct lagscope__late_period {
  uint64_t start_ns, end_ns;
} lagscope__late_period;

typedef struct lagscope__frame_meter {
  uint32_t refresh_hz;
  uint64_t period_ns;
  /* A gap between frames this long, with the main thread never late in it, is idle; 0: no
   * gap is (the tests' synthetic timestamps). */
  uint64_t idle_gap_ns;
  lagscope__late_period late[LAGSCOPE__LATE_PERIODS]; /* ring of the last ones */
  uint32_t late_next, late_count;
  uint64_t late_since_ns;      /* late (or hung) now since then; 0 when not */
  uint64_t cadence_ns;         /* the app's own steady frame time, when slower (0: the display's) */
  uint64_t read;               /* ring position read up to */
  uint64_t last_ns;            /* the previous frame's timestamp, 0 before the first */
  float recent_ms[LAGSCOPE_RECENT_FRAMES]; /* ring of the last frame times */
  uint32_t recent_next, recent_count;
  uint64_t total_frames, total_dropped, lost_timestamps;
  uint64_t histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS];
  double time_sum_ms; /* the histogram's frame times summed */
  /* The frames of the last second, oldest first from index 0: end time and frame time (0 ms
   * for the very first). Kept at the front, not in a ring, so that only as many pages as a
   * second of frames fills are ever touched (1 KiB at 60 Hz, of 32). Last, as init leaves
   * them untouched. */
  uint32_t window_len;
  uint64_t window_ns[LAGSCOPE__FRAME_WINDOW];
  uint64_t window_dt_ns[LAGSCOPE__FRAME_WINDOW];
} lagscope__frame_meter;

void lagscope__frame_meter_init(lagscope__frame_meter *m, uint32_t refresh_hz); /* F */
/* The display's rate changed (ProMotion, measured by the Darwin display link): frames from now
 * on are judged against it; 0 is ignored. F */
void lagscope__frame_meter_set_refresh_hz(lagscope__frame_meter *m, uint32_t refresh_hz);
/* Frame gaps of idle_gap_ns or more in which the main thread was never late are idle: they
 * count as no frame time at all (an event-driven app drew nothing because nothing changed). F */
void lagscope__frame_meter_set_idle_gap(lagscope__frame_meter *m, uint64_t idle_gap_ns);
/* The main thread was late (a hitch, a hang) from start_ns to end_ns. F */
void lagscope__frame_meter_late(lagscope__frame_meter *m, uint64_t start_ns, uint64_t end_ns);
/* It is late now, since since_ns (0: it is not). F */
void lagscope__frame_meter_late_now(lagscope__frame_meter *m, uint64_t since_ns);
/* Adds one frame's timestamp (monotonic ns, non-decreasing). A gap that overlaps lateness
 * counts from the lateness's start (a stall after an idle minute is the stall, not the
 * minute); a long one that does not is idle. F */
void lagscope__frame_meter_add(lagscope__frame_meter *m, uint64_t timestamp_ns);
/* Reads every new timestamp from the ring into the meter. F */
void lagscope__frame_meter_drain(lagscope__frame_meter *m, lagscope__frame_ring *ring);
/* Metrics for the second that ends at now_ns: idle when no frame came for idle_gap_ns and the
 * main thread is not late; while it is late, the frame in progress counts as late. F */
void lagscope__frame_meter_report(lagscope__frame_meter *m, uint64_t now_ns,
                                  lagscope_frame_metrics *out);
lagscope_hitch_band lagscope__hitch_band(double hitch_ms_per_s); /* F */
/* LAGSCOPE_FRAME_HISTOGRAM_EDGES_MS, once for the meter and the event's JSON. */
extern const double lagscope__histogram_edges_ms[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS - 1];

/* ---- watchdog (core/detect/watchdog.c): the hang state machine, clock passed in for tests ------------ */
typedef struct lagscope__watchdog {
  uint64_t threshold_ns, interval_ns;
  uint64_t hang_tick_ns;    /* how often the monitor runs while a hang lasts */
  uint64_t late_ns;         /* owing an answer this long, the main thread is late: two frames */
  int late;                 /* it was late at the last step, not hung */
  uint64_t late_since_ns;   /* its last sign of life before it was late */
  uint64_t owed_since_ns;   /* at the last step: its last sign of life while it owed (0: none) */
  uint64_t owed_due_ns;     /* and since when it owed the answer (a ping's post) */
  int heartbeat_mode;
  uint64_t ping_seq;        /* last ping posted (0: none yet) */
  uint64_t ping_posted_ns;  /* when it was posted */
  uint64_t ping_alive_ns;   /* the first sign of life seen after its post (0: none yet) */
  int ping_outstanding;
  uint64_t next_ping_ns;
  uint64_t not_before_ns;   /* a hang cannot start before this: start, or resume after suspension */
  uint64_t hang_id;         /* hangs so far */
  int hang_active;
  uint64_t hang_start_ns;
  uint64_t hang_suspended_ns; /* time the process was stopped during this hang */
  uint64_t stopped_ns;        /* time the process was stopped (SIGSTOP, a debugger), ever */
  uint64_t starved_total_ns;  /* time the monitor woke late waiting for a CPU, ever (not excused) */
  /* Lateness of a threshold or more, not waiting for a CPU, while the main thread ran: the
   * monitor alone was held (asleep in the kernel), not the process stopped; ever. */
  uint64_t held_ns;
  /* Time the monitor looked later than it planned with no hang open, busy with its own work or
   * waiting for a CPU, ever: a stall that began and ended then went unseen. */
  uint64_t blind_total_ns;
  uint64_t blind_report_ns;   /* a blind spell this long or longer is told (step.blind) */
  uint32_t post_failures;
  uint64_t pings_spared;      /* pings not posted because frames showed the main thread alive */
  uint64_t unpinged_max_ns;   /* the longest it goes unasked: a ping's interval, or after the
                                 last frame the late time (0 in heartbeat mode) */
  uint32_t lost_pings;        /* pings the main thread outlived without answering */
  uint64_t lost_ping_seq;     /* the last of them */
} lagscope__watchdog;

/* What the monitor tells the watchdog at each run, besides what the main thread wrote. */
typedef struct lagscope__watchdog_input {
  uint64_t expected_wake_ns; /* when the monitor planned to wake (its start, at first) */
  /* When the watchdog asked to look (step.wake_at_ns, or the metrics sample if sooner), before
   * the monitor's own slow work pushed the wake later; 0: no plan yet. */
  uint64_t planned_wake_ns;
  uint64_t busy_until_ns;    /* the monitor's slow work of the last step ended then */
  /* Of the monitor's lateness, the time it waited for a CPU (runnable, not run). A monitor
   * starved by a loaded machine is late without the process having been stopped: that
   * lateness is the hang's, not a suspension. 0 when unknown. */
  uint64_t starved_ns;
  /* The watched thread's CPU time from main_cpu_from_ns (when the monitor read it, before its
   * sleep) to this wake-up, read when the wake-up is a threshold late: a stop holds it still,
   * so more than it could run before a stop and after the continue proves none. 0 when
   * unknown (main_cpu_from_ns 0: not read). */
  uint64_t main_cpu_from_ns;
  uint64_t main_cpu_ran_ns;
  /* A ping is posted from then on even while frames flow (the monitor learns the event loop's
   * wait from the pings it posts); 0: at once. */
  uint64_t ping_anyway_ns;
} lagscope__watchdog_input;

/* What the main thread wrote; read by the monitor. */
typedef struct lagscope__main_signals {
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t answered_seq; /* last ping answered */
  _Atomic uint64_t answered_ns;  /* when */
  _Atomic uint64_t alive_ns;     /* last sign of life: a ping answer, frame or heartbeat */
  _Atomic uint64_t beat_ns;      /* last frame or heartbeat: life the app shows unasked */
  /* The first sign of life after none for gap_ns or more: where a stall ended, however late
   * the monitor looks (its report's build can take longer than the stall). The watchdog sets
   * gap_ns (its "late", two frame budgets); 0: not recorded. */
  _Atomic uint64_t resumed_ns;
  _Atomic uint64_t resumed_from_ns; /* the last sign of life before it: where that gap began */
  _Atomic uint64_t gap_ns;
  _Atomic int idle;              /* between lagscope_idle_begin and _end: owes no answer */
} lagscope__main_signals;

/* What a watchdog step decided. */
typedef struct lagscope__watchdog_step {
  int post_ping;           /* post ping number ping_seq now */
  int hang_began;          /* publish hang_began (hang_id, hang_start_ns) */
  int hang_ended;          /* publish hang_ended (hang_id, start, duration_ns); with hang_began
                              and no hang open: a hang that ended before the monitor looked */
  uint64_t duration_ns;
  uint64_t end_ns;         /* the main thread's answer (or first sign of life) that ended it */
  int resumed;             /* the monitor woke a whole threshold late: the process was stopped */
  int sample_early;        /* late, not hung yet: sample the main thread (the hang's first) */
  int late_ended;          /* it was late and answered before the threshold: a hitch, from
                              late_since_ns for late_duration_ns (to its first sign of life) */
  uint64_t late_since_ns, late_duration_ns;
  int ping_lost;           /* the outstanding ping was lost (lost_pings counts them); another
                              is posted in this step */
  int blind;               /* the monitor looked blind_ns after it planned to, from
                              blind_since_ns, with no hang open: a stall in that spell went
                              unseen. busy_ns of it was its own work, the rest waiting for a CPU */
  uint64_t blind_since_ns, blind_ns, blind_busy_ns;
  uint64_t wake_at_ns;     /* when the monitor should run the next step */
} lagscope__watchdog_step;

/* last_ping_seq: the last ping number ever posted in this process; new pings count on from it
 * so that a stale ping from an earlier start, still queued, answers none of ours. */
void lagscope__watchdog_init(lagscope__watchdog *w, const lagscope_config *c, uint64_t now_ns,
                             uint64_t last_ping_seq);
/* One step at now_ns given what the main thread wrote. F */
void lagscope__watchdog_run(lagscope__watchdog *w, const lagscope__main_signals *signals,
                            const lagscope__watchdog_input *input, uint64_t now_ns,
                            lagscope__watchdog_step *step);
/* The main thread cannot be expected to answer now (the app is in the background): no hang
 * begins before a whole threshold after the last call. A hang already begun goes on. F */
void lagscope__watchdog_excuse(lagscope__watchdog *w, uint64_t now_ns);
/* The open hang's duration if it ended at end_ns: from its start, less the time the process
 * was stopped in it. The one rule for the hang's end, its rewrites and a stop. F */
uint64_t lagscope__watchdog_hang_duration(const lagscope__watchdog *w, uint64_t end_ns);
/* The post of ping ping_seq failed; it is not outstanding. F */
void lagscope__watchdog_post_failed(lagscope__watchdog *w, uint64_t now_ns);
/* The step's ping is posted now, at posted_ns: after the monitor's slow work of the step that
 * decided it (a report written, every thread captured), which the main thread does not owe.
 * F */
void lagscope__watchdog_posted(lagscope__watchdog *w, uint64_t posted_ns);

/* How often the monitor looks at a hang in progress by default (config.hang_sample_interval_ms);
 * it samples the main thread's stack each time. */
#define LAGSCOPE__HANG_TICK_NS (10u * 1000u * 1000u)

/* ---- the main thread's calls (core/detect/main_thread.c) ------------------------------------------------
 * lagscope_frame, lagscope_heartbeat, the idle marks and the ping's answer write here; static,
 * so that a call after stop (a ping a host queue held) finds it. */
lagscope__main_signals *lagscope__main_signals_shared(void); /* F */
lagscope__frame_ring *lagscope__frame_ring_shared(void);     /* F */
/* The thread whose calls count (lifecycle: the one that starts lagscope; lagscope-run's
 * preload may move it to the thread that presents a Vulkan program's frames), and whose stacks
 * a hang samples. F */
void lagscope__main_thread_watch(int32_t thread_id);
int32_t lagscope__main_thread_watched(void); /* F; the process's main thread before the first start */
/* The last other thread that called lagscope_frame, _heartbeat or ran the ping; 0 when none
 * since the last look. F */
int32_t lagscope__main_thread_take_wrong_caller(void);
/* A frame the main thread knows the time of, later than its own call: GDK's presentation time
 * (lagscope-run's GTK 4 hook), a frame or two after the frame was drawn. Pushed as given, or
 * at the last frame's time if earlier (the ring is read in order); no sign of life (the
 * caller gave one when the frame was drawn). Watched thread only, else nothing. F */
void lagscope__main_thread_frame_at(uint64_t timestamp_ns);
/* The function post_main is given; arg is the ping's number. Main thread. F */
void lagscope__main_thread_answer_ping(void *arg);

#endif /* LAGSCOPE_DETECT_H */
