/*
 * The internal contract, grouped by concern. Portable modules (the .c files of core/) implement and use
 * what is declared here; each port (core/linux/, later core/darwin/) implements the "port"
 * sections, one file per concern. Names: lagscope__module_verb.
 *
 * Each function says whether it allocates (A), takes a lock (L), or is lock-free and
 * allocation-free (F). Nothing here is async-signal-safe unless it says so.
 */
#ifndef LAGSCOPE_INTERNAL_H
#define LAGSCOPE_INTERNAL_H

#include "lagscope.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAGSCOPE__CACHE_LINE 64

/* ---- memory (core/memory.c) ----------------------------------------------------------------
 * Every lagscope heap allocation goes through these so that the bytes lagscope holds are
 * published in the metrics (monitor_memory_bytes). */
void *lagscope__alloc(size_t size);             /* A: zeroed; NULL when out of memory */
void lagscope__dealloc(void *p);                /* A */
uint64_t lagscope__memory_in_use(void);         /* F */

/* ---- reference-counted payloads (core/memory.c) --------------------------------------------
 * An immutable payload with a hidden header; lagscope_retain/lagscope_release work on it. */
typedef void (*lagscope__payload_destroy_fn)(void *payload);
void *lagscope__payload_new(size_t size, lagscope__payload_destroy_fn destroy); /* A: refs = 1 */
uint32_t lagscope__payload_refs(const void *payload);                        /* F: for tests */

/* ---- port: clock (core/linux/clock.c) ------------------------------------------------------ */
uint64_t lagscope__now_ns(void);     /* F: monotonic, stops nowhere but system sleep */
int64_t lagscope__wall_ms(void);     /* F: Unix time in ms */

/* ---- port: threads and waiting (core/linux/thread.c) --------------------------------------- */
typedef struct lagscope__wakeup lagscope__wakeup; /* a counting semaphore */
lagscope__wakeup *lagscope__wakeup_new(void);     /* A */
void lagscope__wakeup_free(lagscope__wakeup *w);  /* A */
void lagscope__wakeup_post(lagscope__wakeup *w);  /* F: one syscall at most */
/* Waits until posted or until the monotonic deadline; 1 if posted, 0 on timeout. F */
int lagscope__wakeup_wait_until(lagscope__wakeup *w, uint64_t deadline_ns);

typedef struct lagscope__thread lagscope__thread;
/* Starts fn(arg) on a new named thread (name ≤ 15 bytes). Its thread id is registered as one
 * of lagscope's own until joined. A */
int lagscope__thread_start(lagscope__thread **out, const char *name, void (*fn)(void *), void *arg);
void lagscope__thread_join(lagscope__thread *t); /* A: frees t */
/* 1 when the caller is one of lagscope's own threads. F */
int lagscope__thread_is_own(void);
/* The OS id of the calling thread (Linux: gettid). F */
int32_t lagscope__thread_id(void);
/* Writes the ids of lagscope's running threads to out; returns how many. F */
size_t lagscope__thread_own_ids(int32_t *out, size_t max);

/* ---- port: process sampling (core/linux/process.c) ----------------------------------------- */
#define LAGSCOPE__MAX_THREADS 1024 /* threads the sampler tracks; more are counted, not ranked */

typedef struct lagscope__thread_sample {
  int32_t tid;
  char name[LAGSCOPE_THREAD_NAME_MAX];
  uint64_t cpu_ns; /* user + system, since the thread started */
} lagscope__thread_sample;

typedef struct lagscope__process_sample {
  uint64_t time_ns;
  uint64_t cpu_ns;        /* the process, user + system */
  uint64_t rss_bytes;
  uint64_t pss_bytes;
  uint32_t thread_count;  /* all threads, even past LAGSCOPE__MAX_THREADS */
  uint32_t threads_len;   /* entries in threads */
  lagscope__thread_sample threads[LAGSCOPE__MAX_THREADS];
} lagscope__process_sample;

/* Fills *out from the OS. On failure returns a negative code and writes a sentence to why;
 * fields it could read are still filled. A thread that exits mid-read is skipped. No allocation
 * (the sample is the caller's), no lock. */
int lagscope__process_sample_read(lagscope__process_sample *out, char *why, size_t why_size);
/* Tests only: read from this folder instead of /proc/self (NULL: back to /proc/self). */
void lagscope__process_set_root(const char *path);

/* ---- sampler (core/sampler.c): portable math over two process samples ----------------------- */
/* Fills the CPU, memory, thread and busiest-thread fields of *out from two samples; own
 * threads (lagscope's) are summed into monitor_cpu_percent. F */
void lagscope__sampler_compute(const lagscope__process_sample *previous,
                               const lagscope__process_sample *current,
                               const int32_t *own_tids, size_t own_len, lagscope_metrics *out);

/* Parsers for Linux's /proc text, portable so that tests feed them odd input. Each takes a
 * bounded buffer (not NUL-terminated necessarily) and returns 0 or LAGSCOPE_EPARSE. F */
int lagscope__parse_stat(const char *text, size_t len, char *name, size_t name_size,
                         uint64_t *utime_ticks, uint64_t *stime_ticks);
int lagscope__parse_kb_field(const char *text, size_t len, const char *field, uint64_t *bytes);
/* The first decimal number of the text (e.g. /proc/.../schedstat's run time in ns). */
int lagscope__parse_first_u64(const char *text, size_t len, uint64_t *value);

/* ---- frames (core/frames.c) ----------------------------------------------------------------- */
/* The main thread writes timestamps into a single-producer ring; the monitor reads them. */
#define LAGSCOPE__FRAME_RING 1024 /* ≈ 8 s at 120 Hz; the monitor reads every sample interval */

typedef struct lagscope__frame_ring {
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t head; /* frames written, ever */
  _Atomic uint64_t slots[LAGSCOPE__FRAME_RING];
} lagscope__frame_ring;

void lagscope__frame_ring_push(lagscope__frame_ring *ring, uint64_t timestamp_ns); /* F */

/* The monitor's state for frame math. Holds the timestamps of the last second. */
#define LAGSCOPE__FRAME_WINDOW 2048 /* timestamps within one second we can hold (2 kHz) */

typedef struct lagscope__frame_meter {
  uint32_t refresh_hz;
  uint64_t period_ns;
  uint64_t read;               /* ring position read up to */
  uint64_t last_ns;            /* the previous frame's timestamp, 0 before the first */
  /* The frames of the last second: end time and frame time (0 ms for the very first). */
  uint64_t window_ns[LAGSCOPE__FRAME_WINDOW];
  uint64_t window_dt_ns[LAGSCOPE__FRAME_WINDOW];
  uint32_t window_start, window_len;
  float recent_ms[LAGSCOPE_RECENT_FRAMES]; /* ring of the last frame times */
  uint32_t recent_next, recent_count;
  uint64_t total_frames, total_dropped, lost_timestamps;
  uint64_t histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS];
} lagscope__frame_meter;

void lagscope__frame_meter_init(lagscope__frame_meter *m, uint32_t refresh_hz); /* F */
/* Adds one frame's timestamp (monotonic ns, non-decreasing). F */
void lagscope__frame_meter_add(lagscope__frame_meter *m, uint64_t timestamp_ns);
/* Reads every new timestamp from the ring into the meter. F */
void lagscope__frame_meter_drain(lagscope__frame_meter *m, lagscope__frame_ring *ring);
/* Metrics for the second that ends at now_ns. F */
void lagscope__frame_meter_report(lagscope__frame_meter *m, uint64_t now_ns,
                                  lagscope_frame_metrics *out);
lagscope_hitch_band lagscope__hitch_band(double hitch_ms_per_s); /* F */

/* ---- bus (core/bus.c) ------------------------------------------------------------------------
 * A bounded multi-producer queue of events (a ring of sequenced slots: reserve with a CAS,
 * fill, commit). A full queue refuses the event and counts it. Also used, one per subscriber,
 * as that subscriber's own queue. */
typedef struct lagscope__bus_slot {
  _Atomic uint64_t sequence;
  lagscope_event event;
} lagscope__bus_slot;

typedef struct lagscope__bus {
  /* Read-only after init: a line that every publisher and the consumer share without writing. */
  uint64_t mask;
  lagscope__bus_slot *slots;
  lagscope__wakeup *wakeup;
  /* Each written counter on a line of its own, so that publishers, the consumer and drops do
   * not invalidate each other's reads. */
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t head; /* next position to reserve: also the
                                                            number of events accepted, ever */
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t tail; /* next position to take */
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t dropped;
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic int consumer_sleeping; /* is, or is about to be, waiting */
} lagscope__bus;

int lagscope__bus_init(lagscope__bus *bus, uint32_t capacity); /* A; capacity a power of two */
/* Releases the payloads of events never taken, then the slots. A */
void lagscope__bus_destroy(lagscope__bus *bus);
/* Copies *event in and stamps its sequence. The bus owns the payload reference from here on
 * (on EFULL it releases it). 0 or LAGSCOPE_EFULL. F (one futex wake when the consumer sleeps). */
int lagscope__bus_publish(lagscope__bus *bus, const lagscope_event *event);
/* As publish, but keeps event->sequence (a subscriber's queue keeps the bus's order). F */
int lagscope__bus_forward(lagscope__bus *bus, const lagscope_event *event);
/* Single consumer: takes the oldest event into *out (the caller then owns its payload
 * reference). 1 if taken, 0 if empty. F */
int lagscope__bus_take(lagscope__bus *bus, lagscope_event *out);
/* Single consumer: waits until an event may be there or the deadline passes. F */
void lagscope__bus_wait(lagscope__bus *bus, uint64_t deadline_ns);
/* Events accepted, ever. F */
uint64_t lagscope__bus_published(const lagscope__bus *bus);
/* Wakes a waiting consumer (for shutdown). F */
void lagscope__bus_wake(lagscope__bus *bus);

/* ---- events (core/monitor.c) ----------------------------------------------------------------- */
/* Publishes an error event with a formatted message to the running instance's bus. A */
void lagscope__publish_error(int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Logs one line through the configured log hook. A */
void lagscope__log(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- watchdog (core/watchdog.c): the hang state machine, clock passed in for tests ------------ */
typedef struct lagscope__watchdog {
  uint64_t threshold_ns, interval_ns;
  int heartbeat_mode;
  uint64_t ping_seq;        /* last ping posted (0: none yet) */
  uint64_t ping_posted_ns;  /* when it was posted */
  int ping_outstanding;
  uint64_t next_ping_ns;
  uint64_t not_before_ns;   /* a hang cannot start before this: start, or resume after suspension */
  uint64_t hang_id;         /* hangs so far */
  int hang_active;
  uint64_t hang_start_ns;
  uint64_t hang_suspended_ns; /* time the process was stopped during this hang */
  uint64_t expected_wake_ns;  /* when the monitor planned to wake */
  uint32_t post_failures;
} lagscope__watchdog;

/* What the main thread wrote; read by the monitor. */
typedef struct lagscope__main_signals {
  _Alignas(LAGSCOPE__CACHE_LINE) _Atomic uint64_t answered_seq; /* last ping answered */
  _Atomic uint64_t answered_ns;  /* when */
  _Atomic uint64_t alive_ns;     /* last sign of life: a ping answer, frame or heartbeat */
} lagscope__main_signals;

/* What a watchdog step decided. */
typedef struct lagscope__watchdog_step {
  int post_ping;           /* post ping number ping_seq now */
  int hang_began;          /* publish hang_began (hang_id, hang_start_ns) */
  int hang_ended;          /* publish hang_ended (hang_id, start, duration_ns) */
  uint64_t duration_ns;
  int resumed;             /* the monitor woke a whole threshold late: the process was stopped */
  uint64_t wake_at_ns;     /* when the monitor should run the next step */
} lagscope__watchdog_step;

/* last_ping_seq: the last ping number ever posted in this process; new pings count on from it
 * so that a stale ping from an earlier start, still queued, answers none of ours. */
void lagscope__watchdog_init(lagscope__watchdog *w, const lagscope_config *c, uint64_t now_ns,
                             uint64_t last_ping_seq);
/* One step at now_ns given what the main thread wrote. F */
void lagscope__watchdog_run(lagscope__watchdog *w, const lagscope__main_signals *signals,
                            uint64_t now_ns, lagscope__watchdog_step *step);
/* The post of ping ping_seq failed; it is not outstanding. F */
void lagscope__watchdog_post_failed(lagscope__watchdog *w, uint64_t now_ns);

/* How often the monitor looks at a hang in progress (issue 4 samples stacks at this rate). */
#define LAGSCOPE__HANG_TICK_NS (10u * 1000u * 1000u)

/* ---- the running instance (core/monitor.c) ---------------------------------------------------- */
/* Publishes to the running instance's bus; LAGSCOPE_ENOTRUNNING when stopped. F */
int lagscope__publish(const lagscope_event *event);

#endif /* LAGSCOPE_INTERNAL_H */
