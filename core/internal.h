/*
 * The internal contract, grouped by concern. Portable modules (the .c files of core/)
 * implement and use what is declared here; what each port (core/linux/, core/darwin/)
 * implements, one file per concern, is in port.h, which this includes. Names:
 * lagscope__module_verb.
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

/* ---- messages (core/error.c) ----------------------------------------------------------------
 * Writes a failure's explanation into the caller's buffer, if there is one; a long path may
 * cut it short, which is fine for a message. F */
void lagscope__explain(char *why, size_t why_size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- configuration (core/config.c) ------------------------------------------------------------
 * The numeric and on/off fields of lagscope_config, one row each, in the order they are checked.
 * The defaults (lagscope_config_default), the range checks and their messages
 * (lagscope_config_validate) and the status JSON's "config" object (web/api.c) come from it;
 * the README's table is checked against it (tests/unit/core/test_config_readme.c).
 *
 *   XX(name, type, default, check, min, max, unit, status)
 *
 * type    the field's C type; config.c holds it to lagscope.h's struct at compile time.
 * check   how min and max bound the field:
 *           RANGE      min..max
 *           POW2       a power of two in min..max (queue capacities: masks, not modulo)
 *           AT_MOST    min..the field that max names (an earlier row, so already checked)
 *           BELOW      min..the field that max names, less one
 *           AT_LEAST   min or more (max is 0, unused)
 *           RT_SIGNAL  0 or a real-time signal's number, at most max here; which numbers are
 *                      real-time only the running system knows, so lagscope_start checks that
 *           ON_OFF     not checked: any non-zero value is on (0..1 says what it means)
 * unit    what the number counts, for messages ("" for a plain count).
 * status  the field in the status JSON's "config" object (docs/viewer-api.md): CONFIG its
 *         value, IN_USE the value in effect that it only asks for (the signal chosen, the port
 *         bound), NONE left out.
 *
 * By hand, because a row cannot say them: the strings, hooks and their user pointers
 * (post_main, on_event, log, report_dir, app_name, server_bind: NULL by default, checked where
 * they need it), and hud_corner, an enum whose message names its constants. */
#define LAGSCOPE__CONFIG_FIELDS(XX)                                                         \
  XX(hang_threshold_ms, uint32_t, 250, RANGE, 10, 60000, "ms", CONFIG)                      \
  XX(ping_interval_ms, uint32_t, 50, AT_MOST, 1, hang_threshold_ms, "ms", CONFIG)           \
  XX(sample_interval_ms, uint32_t, 500, RANGE, 50, 60000, "ms", CONFIG)                     \
  XX(hang_sample_interval_ms, uint32_t, 10, RANGE, 1, 1000, "ms", CONFIG)                   \
  XX(hitch_report_ms, uint32_t, 50, RANGE, 0, 60000, "ms", CONFIG)                          \
  XX(hitch_keep, uint32_t, 32, RANGE, 1, 1024, "", CONFIG)                                  \
  XX(hang_count_idle, int, 0, RANGE, 0, 1, "", CONFIG)                                      \
  XX(capture_signal, uint32_t, 0, RT_SIGNAL, 0, 64, "", IN_USE)                             \
  XX(stack_copy_kib, uint32_t, 64, RANGE, 16, 1024, "KiB", NONE)                            \
  XX(refresh_hz, uint32_t, 60, RANGE, 1, 1000, "Hz", CONFIG)                                \
  XX(report_max_count, uint32_t, 50, RANGE, 1, 100000, "", CONFIG)                          \
  XX(report_max_bytes, uint64_t, 32u * 1024u * 1024u, AT_LEAST, 64u * 1024u, 0, "bytes",    \
     CONFIG)                                                                                \
  XX(bus_capacity, uint32_t, 256, POW2, 16, 65536, "", NONE)                               \
  XX(subscriber_capacity, uint32_t, 256, POW2, 16, 65536, "", NONE)                         \
  XX(hud, int, 1, ON_OFF, 0, 1, "", NONE)                                                   \
  XX(hud_scale, float, 1.0f, RANGE, 0.5f, 8.0f, "pixels per point", NONE)                   \
  XX(hud_expanded, int, 0, ON_OFF, 0, 1, "", NONE)                                          \
  XX(server, int, 1, ON_OFF, 0, 1, "", NONE)                                                \
  XX(server_port, uint32_t, 8080, RANGE, 0, 65535, "", IN_USE)                              \
  XX(server_max_clients, uint32_t, 16, RANGE, 2, 256, "", CONFIG)                           \
  XX(server_max_stream_clients, uint32_t, 8, BELOW, 1, server_max_clients, "", CONFIG)

/* config.app_name, or the program's name. F */
void lagscope__app_name(const lagscope_config *config, char *out, size_t size);
/* config.report_dir, or "<lagscope__state_root>/<app_name>", or, without one,
 * "$TMPDIR/lagscope-<uid>/<app_name>" ("/tmp" without TMPDIR); the store checks whichever it
 * is (lagscope__folder_open). F */
void lagscope__report_dir(const lagscope_config *config, const char *app_name, char *out,
                          size_t size);

/* ---- memory (core/memory.c) ----------------------------------------------------------------
 * Every heap allocation of lagscope's own goes through these so that the bytes lagscope holds
 * are published in the metrics (monitor_memory_bytes). Not counted, because they allocate
 * with malloc themselves and say nothing: cJSON's trees and printed texts (freed with
 * lagscope_free), libdw's and libelf's symbol tables, cairo's and CoreGraphics' own state,
 * civetweb's connections and threads. */
/* A, L (the runs' lock, never held across a system call): zeroed, cache-line aligned; NULL
 * when out of memory. Not from malloc: what is freed leaves the process (see memory.c). */
void *lagscope__alloc(size_t size);
void lagscope__dealloc(void *p);                /* A */
uint64_t lagscope__memory_in_use(void);         /* F */
/* Room for one more item after len: *items, of *capacity items of item_size bytes, grows
 * (to `first`, then doubling) when full, its items kept. 0, or LAGSCOPE_ENOMEM with the
 * array as it was. A */
int lagscope__grow(void **items, size_t *capacity, size_t len, size_t item_size, size_t first);
/* The same, never past `most` items (LAGSCOPE_ENOMEM once full). A */
int lagscope__grow_upto(void **items, size_t *capacity, size_t len, size_t item_size,
                        size_t first, size_t most);
/* Texts kept together until the arena is freed (the symbol indexes' demangled names): copies
 * go into chunks of 16 KiB, so that thousands of short names cost a few allocations. Zeroed is
 * empty. */
typedef struct lagscope__text_arena {
  struct lagscope__text_chunk *chunks;
  size_t bytes; /* held, chunks whole */
} lagscope__text_arena;
const char *lagscope__text_arena_copy(lagscope__text_arena *a, const char *text); /* A; NULL: no memory */
void lagscope__text_arena_free(lagscope__text_arena *a);                         /* A */

/* ---- reference-counted payloads (core/memory.c) --------------------------------------------
 * An immutable payload with a hidden header; lagscope_retain/lagscope_release work on it. */
typedef void (*lagscope__payload_destroy_fn)(void *payload);
void *lagscope__payload_new(size_t size, lagscope__payload_destroy_fn destroy); /* A: refs = 1 */
char *lagscope__payload_text(const char *text); /* A: a payload holding a copy; NULL: no memory */
char *lagscope__strdup(const char *text);       /* A: a copy, freed with lagscope__dealloc */
void *lagscope__alloc_array(size_t count, size_t size); /* A: zeroed; NULL on overflow too */
/* qsort's contract, in place (core/sort.c): glibc's qsort mallocs a copy of the array. F */
void lagscope__sort(void *items, size_t count, size_t size,
                    int (*compare)(const void *, const void *));
uint32_t lagscope__payload_refs(const void *payload);                        /* F: for tests */

#include "port.h" /* what each OS folder implements */

/* ---- threads (core/threads.c, portable over pthreads) ---- */
typedef struct lagscope__thread lagscope__thread;
/* Starts fn(arg) on a new named thread (name ≤ 15 bytes), every signal blocked. Its thread id
 * is registered as one of lagscope's own until joined. A */
int lagscope__thread_start(lagscope__thread **out, const char *name, void (*fn)(void *), void *arg);
void lagscope__thread_join(lagscope__thread *t); /* A: frees t */
/* Port: names the calling thread (≤ 15 bytes; the pthread call differs by OS). F */
void lagscope__thread_name_self(const char *name);
/* Which threads are lagscope's: a started thread enters before its function and leaves
 * after. F */
void lagscope__own_thread_enter(void);
void lagscope__own_thread_leave(void);
/* A thread lagscope did not start but runs for it (civetweb's): from now on it counts as one
 * of lagscope's own (never captured, its CPU is lagscope's) and takes no signal. Call on the
 * thread itself; disown before it exits. F */
void lagscope__thread_adopt(void);
void lagscope__thread_disown(void);
/* 1 when the caller is one of lagscope's own threads. F */
int lagscope__thread_is_own(void);
/* The OS id of the calling thread (Linux: gettid). F */
int32_t lagscope__thread_id(void);
/* Port: gives back the calling thread's stack pages below its current frame, which a deep call
 * (a stall's unwinding and symbolication) left resident for the thread's life; later calls
 * fault in zeroed pages as they need them. Linux: MADV_DONTNEED, the bounds from
 * pthread_getattr_np (which mallocs its CPU set: only on a thread that already has an arena,
 * the monitor's); Darwin: nothing. A */
void lagscope__thread_release_stack(void);
#define LAGSCOPE__OWN_THREADS_MAX 512 /* lagscope's threads, the viewer's civetweb ones included */
/* 1 when tid is one of lagscope's running threads. F */
int lagscope__thread_id_is_own(int32_t tid);
/* Writes the ids of lagscope's running threads to out; returns how many. F */
size_t lagscope__thread_own_ids(int32_t *out, size_t max);

/* ---- sampler (core/sampler.c): portable math over two process samples ----------------------- */
/* Fills the CPU, memory, thread and busiest-thread fields of *out from two samples; own
 * threads (lagscope's) are summed into monitor_cpu_percent. F */
void lagscope__sampler_compute(const lagscope__process_sample *previous,
                               const lagscope__process_sample *current,
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
  uint64_t read;               /* ring position read up to */
  uint64_t last_ns;            /* the previous frame's timestamp, 0 before the first */
  float recent_ms[LAGSCOPE_RECENT_FRAMES]; /* ring of the last frame times */
  uint32_t recent_next, recent_count;
  uint64_t total_frames, total_dropped, lost_timestamps;
  uint64_t histogram[LAGSCOPE_FRAME_HISTOGRAM_BUCKETS];
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

/* ---- JSON helpers shared by json.c and report.c (defined in json.c) ------------------------------ */
struct cJSON;
/* Exact integers: cJSON's numbers are doubles, exact only to 2^53. A */
void lagscope__json_add_u64(struct cJSON *object, const char *name, uint64_t value);
void lagscope__json_add_i64(struct cJSON *object, const char *name, int64_t value);
/* A value rounded to 0.001, half away from zero, without libm. No allocation, no lock. */
double lagscope__json_rounded(double value);
/* A measurement rounded to 0.001 (finer than any is accurate); null when not finite. A */
void lagscope__json_add_measure(struct cJSON *object, const char *name, double value);
/* Its text, without stdio: "12.345", "-0.5", "3" (out: 32 bytes); 0 when the value is too large
 * for thousandths (|value| >= 4e12) or not finite. F */
int lagscope__json_measure_text(double value, char *out);
/* The event as one line of JSON in lagscope's heap (lagscope__dealloc), as lagscope_event_json
 * writes it. NULL when out of memory. A */
char *lagscope__event_text(const lagscope_event *event);
/* A metrics event as the viewer's window of older ticks keeps it: its numbers without
 * recent_frame_ms, frame_histogram and busiest_threads, unformatted (176 bytes, where its text
 * took a block of 768). */
typedef struct lagscope__metrics_tick {
  uint64_t sequence, time_ns, sampled_ns;
  int64_t wall_ms;
  double refresh_hz, fps, hitch_ms_per_s, cpu_percent, monitor_cpu_percent;
  uint64_t total_frames, total_dropped, lost_timestamps, rss_bytes, pss_bytes, hangs;
  uint64_t events_published, events_dropped, monitor_memory_bytes, stopped_ms, monitor_starved_ms;
  uint32_t frames, dropped, thread_count;
  uint8_t band, idle, hang_in_progress;
} lagscope__metrics_tick;
/* The tick of a metrics event (one with its metrics). F */
void lagscope__metrics_tick_of(const lagscope_event *event, lagscope__metrics_tick *out);
/* The tick as one line of JSON in lagscope's heap: the event's text without those three
 * members. NULL when out of memory. A */
char *lagscope__metrics_tick_text(const lagscope__metrics_tick *tick);

/* value's decimal digits, NUL-terminated (out: 21 bytes); their count. F */
size_t lagscope__json_u64_text(uint64_t value, char *out);

/* ---- JSON written as text (core/json_writer.c), for documents too large for a cJSON tree --------
 * Every call appends one value; key is its member name inside an object, NULL inside an array
 * or at the top. The text lives in lagscope's heap. After a failed allocation the calls do
 * nothing and finish returns NULL. Each call may allocate (A); no lock. */
typedef struct lagscope__json_writer {
  char *text; /* NUL-terminated; NULL before the first value */
  size_t len, cap;
  int failed;
} lagscope__json_writer;
void lagscope__jw_begin_object(lagscope__json_writer *w, const char *key);
void lagscope__jw_end_object(lagscope__json_writer *w);
void lagscope__jw_begin_array(lagscope__json_writer *w, const char *key);
void lagscope__jw_end_array(lagscope__json_writer *w);
/* A string; null when text is NULL; bytes that are not UTF-8 become U+FFFD. */
void lagscope__jw_string(lagscope__json_writer *w, const char *key, const char *text);
/* An address as the string "0x..." (lowercase hex). */
void lagscope__jw_hex(lagscope__json_writer *w, const char *key, uintptr_t value);
void lagscope__jw_u64(lagscope__json_writer *w, const char *key, uint64_t value);
void lagscope__jw_i64(lagscope__json_writer *w, const char *key, int64_t value);
/* A measurement rounded to 0.001; null when not finite. */
void lagscope__jw_measure(lagscope__json_writer *w, const char *key, double value);
void lagscope__jw_bool(lagscope__json_writer *w, const char *key, int value);
void lagscope__jw_null(lagscope__json_writer *w, const char *key);
/* Text that is JSON already, copied as it is. */
void lagscope__jw_raw(lagscope__json_writer *w, const char *key, const char *json);
/* The text (freed with lagscope__dealloc), the writer emptied; NULL (and the text freed) when an
 * allocation failed. */
char *lagscope__jw_finish(lagscope__json_writer *w);
/* Frees the text, if any. No allocation. */
void lagscope__jw_discard(lagscope__json_writer *w);

/* ---- JSON checked without building it (core/json_check.c) ---------------------------------------
 * No allocation, no lock: a report file is checked in place, however large. */
/* 1 when text[0, len) begins with one JSON value (after whitespace): *end is where the value
 * ends. 0 when it does not: *end is where it went wrong.
 * Never accepts what cJSON would not parse. F */
int lagscope__json_check(const char *text, size_t len, size_t *end);
/* The JSON string json[0, len) (quotes included) decoded into out, NUL-terminated; 0 when it
 * is not exactly one string or does not fit. F */
int lagscope__json_string_text(const char *json, size_t len, char *out, size_t size);
/* Reading text already known to be JSON (lagscope__json_check accepted it, or lagscope wrote
 * it): values are found by their bytes, nothing is parsed or copied, so a rewrite keeps every
 * other byte (64-bit integers stay exact). A key written with escapes is not found. */
typedef struct lagscope__json_span {
  size_t start, end; /* a value's bytes; start == end: none */
} lagscope__json_span;
/* i moved past JSON whitespace. F */
size_t lagscope__json_skip_space(const char *s, size_t i, size_t n);
/* In the object s[0, n): the first value of key (an empty span when there is none), where
 * the closing brace is, and whether the object has no member. 0, or -1 when s is not an
 * object. F */
int lagscope__json_find_member(const char *s, size_t n, const char *key,
                               lagscope__json_span *value, size_t *close, int *empty);
/* The value of key in the object s[object) (an empty span when there is none or object is
 * not one), as a span of s itself. F */
lagscope__json_span lagscope__json_member_span(const char *s, lagscope__json_span object,
                                               const char *key);
/* The string value of the object's key, decoded into out; 0 when it is missing, not a string
 * or longer than size. F */
int lagscope__json_member_text(const char *s, size_t n, const char *key, char *out, size_t size);
/* The elements of the array s[0, n), one per call: *at starts at 0 and is moved on; 1 with
 * *element set, 0 at the end (or when s is not an array). F */
int lagscope__json_next_element(const char *s, size_t n, size_t *at, lagscope__json_span *element);

/* ---- autostart (core/autostart.c): starting without the app's code ---------------------------- */
/* A setting's text: 0 for "0", "no", "false", "off"; 1 for "1", "yes", "true", "on" (any case);
 * -1 for NULL or anything else. F */
int lagscope__autostart_setting(const char *text);
/* Whether lagscope starts itself: the environment's LAGSCOPE_AUTOSTART (environment, NULL when
 * unset) decides when it is a setting, else the app's own (app_setting: Info.plist's
 * LagscopeAutoStart on Apple, 0 or 1; -1 when it has none), else yes. why gets the reason (""
 * for the default; a setting that is not one is said and ignored). F */
int lagscope__autostart_wanted(const char *environment, int app_setting, char *why,
                               size_t why_size);

/* ---- watchdog (core/watchdog.c): the hang state machine, clock passed in for tests ------------ */
typedef struct lagscope__watchdog {
  uint64_t threshold_ns, interval_ns;
  uint64_t hang_tick_ns;    /* how often the monitor runs while a hang lasts */
  uint64_t late_ns;         /* owing an answer this long, the main thread is late: two frames */
  int late;                 /* it was late at the last step, not hung */
  uint64_t late_since_ns;   /* since when it owed the answer then */
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
  uint64_t stopped_ns;        /* time the process was stopped (SIGSTOP, a debugger), ever */
  uint64_t starved_total_ns;  /* time the monitor woke late waiting for a CPU, ever (not excused) */
  uint64_t expected_wake_ns;  /* when the monitor planned to wake */
  /* Set by the caller before a run: of the monitor's lateness, the time it waited for a CPU
   * (runnable, not run). A monitor starved by a loaded machine is late without the process
   * having been stopped: that lateness is the hang's, not a suspension. 0 when unknown. */
  uint64_t starved_ns;
  uint32_t post_failures;
  uint64_t pings_spared;      /* pings not posted because frames showed the main thread alive */
  uint64_t unpinged_max_ns;   /* the longest it goes unasked: a ping's interval, or after the
                                 last frame the late time (0 in heartbeat mode) */
  /* A ping is posted from then on even while frames flow (the monitor learns the event loop's
   * wait from the pings it posts); 0: at once. */
  uint64_t ping_anyway_ns;
  uint32_t lost_pings;        /* pings the main thread outlived without answering */
  uint64_t lost_ping_seq;     /* the last of them */
} lagscope__watchdog;

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
  _Atomic uint64_t gap_ns;
  _Atomic int idle;              /* between lagscope_idle_begin and _end: owes no answer */
} lagscope__main_signals;

/* What a watchdog step decided. */
typedef struct lagscope__watchdog_step {
  int post_ping;           /* post ping number ping_seq now */
  int hang_began;          /* publish hang_began (hang_id, hang_start_ns) */
  int hang_ended;          /* publish hang_ended (hang_id, start, duration_ns) */
  uint64_t duration_ns;
  int resumed;             /* the monitor woke a whole threshold late: the process was stopped */
  int sample_early;        /* late, not hung yet: sample the main thread (the hang's first) */
  int late_ended;          /* it was late and answered before the threshold: a hitch, from
                              late_since_ns for late_ns_total (to its first sign of life) */
  uint64_t late_since_ns, late_duration_ns;
  int ping_lost;           /* the outstanding ping was lost (lost_pings counts them); another
                              is posted in this step */
  uint64_t wake_at_ns;     /* when the monitor should run the next step */
} lagscope__watchdog_step;

/* last_ping_seq: the last ping number ever posted in this process; new pings count on from it
 * so that a stale ping from an earlier start, still queued, answers none of ours. */
void lagscope__watchdog_init(lagscope__watchdog *w, const lagscope_config *c, uint64_t now_ns,
                             uint64_t last_ping_seq);
/* One step at now_ns given what the main thread wrote. F */
void lagscope__watchdog_run(lagscope__watchdog *w, const lagscope__main_signals *signals,
                            uint64_t now_ns, lagscope__watchdog_step *step);
/* The main thread cannot be expected to answer now (the app is in the background): no hang
 * begins before a whole threshold after the last call. A hang already begun goes on. F */
void lagscope__watchdog_excuse(lagscope__watchdog *w, uint64_t now_ns);
/* The post of ping ping_seq failed; it is not outstanding. F */
void lagscope__watchdog_post_failed(lagscope__watchdog *w, uint64_t now_ns);

/* How often the monitor looks at a hang in progress by default (config.hang_sample_interval_ms);
 * it samples the main thread's stack each time. */
#define LAGSCOPE__HANG_TICK_NS (10u * 1000u * 1000u)

/* ---- frame walk (core/frame_walk.c): the frame-pointer walk over a copied stack -------------- */
typedef struct lagscope__stack_copy {
  const uint8_t *bytes; /* the copy of [base, base + len) */
  uintptr_t base;       /* the stack pointer it was copied from */
  size_t len;
  int cut;              /* the stack goes on past the copy: a record above it means truncated */
  uintptr_t (*strip)(uintptr_t); /* pointer authentication off a code address; NULL: none */
} lagscope__stack_copy;
typedef struct lagscope__frame_regs {
  uintptr_t pc, lr, fp;
  int has_lr; /* arm64: the link register is a frame candidate */
} lagscope__frame_regs;
/* Fills out->frames (the pc, the link register, each record's return address) and out->walk
 * (complete, truncated: deeper than the copy or than LAGSCOPE__MAX_FRAMES, bad_frame). A saved
 * fp with bit 60 set (a Swift async frame record) is stripped and followed. F */
void lagscope__frame_walk(const lagscope__stack_copy *c, const lagscope__frame_regs *r,
                          lagscope__stack *out);
uintptr_t lagscope__frame_strip_async(uintptr_t fp); /* F: bit 60 off */

/* ---- capture (core/capture.c): the portable half, over the port's (port.h) ---------------- */
/* Captures tid's stack into *out, waiting at most timeout_ns for a running thread to answer
 * (Linux: at its next tick on a CPU; one that gets none meanwhile is not taken).
 * Sets out->walk, method and run state for every outcome; returns 0 when frames were captured,
 * LAGSCOPE_ESIGNAL when a running thread could not be signalled because the app has put its
 * own handler on the capture signal since (checked before each signal).
 * One capture at a time per process (the callers serialise); no allocation, no lock in the
 * target. L: none the target can hold. */
int lagscope__capture_stack(int32_t tid, lagscope__stack *out, uint64_t timeout_ns);
/* The first half alone, for benchmarks: the thread's registers and stack copied into the
 * snapshot (the raw stack in hand), not unwound, by whichever method the thread's state calls
 * for. 0 when it was copied; *method says how. */
int lagscope__capture_raw(int32_t tid, uint64_t timeout_ns, int *method);

#define LAGSCOPE__LABEL_MAX 200  /* bytes of a hang's label ("lock · keeper"), with the NUL */

/* ---- causes (core/cause.c): why a thread was not running -------------------------------------- */
typedef enum lagscope__cause_kind {
  LAGSCOPE__CAUSE_CPU = 0, /* on the CPU */
  LAGSCOPE__CAUSE_LOCK,    /* waiting for a mutex or rwlock */
  LAGSCOPE__CAUSE_WAIT,    /* a condition variable, semaphore, join, waitpid, a message */
  LAGSCOPE__CAUSE_SLEEP,   /* nanosleep and friends */
  LAGSCOPE__CAUSE_IO,      /* read, write, recv, connect, poll on the app's fds, ... */
  LAGSCOPE__CAUSE_DEADLOCK,/* a lock chain that comes back to a thread in it */
  LAGSCOPE__CAUSE_IDLE,    /* its own event loop's wait (Darwin: mach_msg in the run loop) */
  LAGSCOPE__CAUSE_UNKNOWN
} lagscope__cause_kind;
#define LAGSCOPE__CAUSE_COUNT 8
/* "cpu", "lock", "wait", "sleep", "io", "deadlock", "idle", "unknown". F */
const char *lagscope__cause_kind_name(int kind);
/* One stack's kind (never deadlock: that takes a chain), from its run state, its system call
 * and names, the function names of its innermost frames (names[0] the innermost; NULL where
 * unknown). F */
lagscope__cause_kind lagscope__classify_stack(const lagscope__stack *s, const char *const *names,
                                              size_t n);

/* Darwin: the lock a thread blocked in a trap waits for, from the trap (its innermost frame's
 * name) and its arguments, as Apple's open sources call them: libpthread's
 * __psynch_mutexwait(mutex, mgen, ugen, owner's thread id, flags) and libplatform's
 * __ulock_wait(UL_UNFAIR_LOCK | flags, lock, value, timeout), value the owner's thread port
 * with bit 0 (no waiters) cleared. 1 when it is one: *address, and *owner (0: not known) as a
 * thread id (*owner_is_port 0) or a port name (1). F */
int lagscope__darwin_lock_wait(const char *trap, const uintptr_t *args, uintptr_t *address,
                               uint64_t *owner, int *owner_is_port);

/* ---- symbols (core/symbols.c): addresses to names, over the port's index (port.h) ---------- */
typedef struct lagscope__symbols lagscope__symbols; /* core/symbols.c: a port's index and a lock */
lagscope__symbols *lagscope__symbols_new(void); /* A */
void lagscope__symbols_free(lagscope__symbols *s); /* A */
/* Resolves one address; is_return: a return address (frames[1..]), looked up at address - 1
 * so that a call at a function's end names the caller. Strings stay valid until
 * lagscope__symbols_free. Indexes an object the first time an address falls in it; an address
 * in no known object re-reads the list of loaded objects (dlopen). Returns 0, or ENOENT when
 * the address is in no loaded object (out->module NULL). A, L (its own) */
int lagscope__symbols_resolve(lagscope__symbols *s, uintptr_t address, int is_return,
                              lagscope__frame_info *out);
size_t lagscope__symbols_memory(const lagscope__symbols *s); /* bytes held by the indexes */

/* ---- reports (core/report.c): one hang, as JSON ------------------------------------------------ */
#define LAGSCOPE__REPORT_SCHEMA_VERSION 1

/* A report's states, once: XX(NAME, "state in its JSON"). In order: written at the hang's
 * first capture; the main thread answered; found in progress at the next start (the app was
 * killed while hung). */
#define LAGSCOPE__REPORT_STATES(XX)                                                            \
  XX(IN_PROGRESS, "in_progress") XX(ENDED, "ended") XX(TERMINATED, "ended_by_termination")

typedef enum lagscope__report_state {
#define LAGSCOPE__REPORT_STATE_ENUM_(name, text) LAGSCOPE__REPORT_##name,
  LAGSCOPE__REPORT_STATES(LAGSCOPE__REPORT_STATE_ENUM_)
#undef LAGSCOPE__REPORT_STATE_ENUM_
  LAGSCOPE__REPORT_STATE_COUNT
} lagscope__report_state;

/* The state's name in a report's JSON; NULL for none (core/error.c). F */
const char *lagscope__report_state_name(int state);
/* The state a report's JSON names; -1 for a name that is none. F */
int lagscope__report_state_of(const char *name);

/* What a report is made from: everything the recorder (core/hang.c) gathered for one hang (or
 * a hitch, or a capture); the report module only reads it. Two names for the pipeline: the
 * recorder gathers, the report (this, its JSON, the stored file, the public
 * lagscope_hang_report) tells. */
typedef struct lagscope__report_data {
  char id[64];                 /* unique across launches: "<start wall time>-<pid>-<hang id>" */
  uint64_t hang_id;
  lagscope__report_state state;
  int64_t start_wall_ms;
  uint64_t start_ns;
  uint64_t duration_ns;        /* so far, while in progress */
  uint32_t threshold_ms, sample_interval_ms;
  int count_idle;              /* config.hang_count_idle: an idle hang is counted too */
  const char *app_name;
  int32_t pid, main_tid;
  const lagscope__stack *samples; /* the main thread, every sample_interval_ms */
  uint32_t sample_count;
  uint64_t samples_dropped;    /* past the sample buffer's capacity */
  const lagscope__stack *threads; /* every thread, captured once at the start */
  const lagscope__thread_sample *thread_info; /* names, CPU time; same order as threads */
  /* What each blocked thread waited on, named when it was captured (the fd may be closed by
   * the time the report is written): thread_count strings of LAGSCOPE__TARGET_MAX; NULL when
   * none. */
  const char *thread_targets;
  /* The same for the main thread's samples: the last blocked call named, and its key. */
  char sample_target[LAGSCOPE__TARGET_MAX];
  int32_t sample_target_syscall;
  uintptr_t sample_target_arg;
  uint32_t thread_count;
  uint64_t thread_cpu_window_ns;  /* over which thread_info CPU is compared to before */
  const lagscope__thread_sample *thread_info_before; /* may be NULL */
  uint32_t thread_count_before;
  lagscope_metrics before;     /* the last metrics before the hang */
  lagscope_metrics during;     /* sampled during it (zero when none yet) */
  int have_during;
} lagscope__report_data;

typedef int (*lagscope__resolve_fn)(void *ctx, uintptr_t address, int is_return,
                                    lagscope__frame_info *out);

/* The report as JSON text (schema in README "Hang reports"), and the heaviest main-thread
 * stack alone as a JSON array of frames, innermost first. Either out pointer may be NULL.
 * Both are freed with lagscope__dealloc. A */
int lagscope__report_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                          void *ctx, char **report_json, char **heaviest_stack_json);

/* Every thread of r (threads, thread_info, main_tid, start_wall_ms as "wall_ms", duration_ns
 * as how long the capture took), for the viewer's "Capture now":
 * {"wall_ms", "duration_ms", "main_thread_tid", "thread_count", "threads": [as in a report]}.
 * Freed with lagscope__dealloc. A */
int lagscope__report_threads_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                                  void *ctx, char **out);
/* One stack as a JSON array of frames, innermost first. Freed with lagscope__dealloc. A */
int lagscope__report_stack_json(const lagscope__stack *stack, lagscope__resolve_fn resolve,
                                void *ctx, char **out);

/* The verdict alone, {"kind", "summary", "label"}, for the hang_ended and hitch events (the
 * report's "cause" has the details). heaviest_json: the report's heaviest stack (its telling
 * function names a cpu, sleep or wait hang in the label, as in the report); NULL: the main
 * thread's one stack says. Freed with lagscope__dealloc. A */
int lagscope__report_cause_json(const lagscope__report_data *r, const char *heaviest_json,
                                lagscope__resolve_fn resolve, void *ctx, char **out);

/* Of a stack as lagscope writes it (a JSON array of frames, stack[0, n)), the frame that best
 * says where the app was: the innermost in the app's own code (the module of "main"), else
 * the innermost with a name, else the innermost. 1 with its span in *frame; 0 for an empty
 * array. Read in place: no allocation. F */
int lagscope__report_telling_frame(const char *stack, size_t n, lagscope__json_span *frame);
/* That frame's function of a NUL-terminated stack (NULL: none), decoded into out; 0 and ""
 * when there is none. F */
int lagscope__report_telling_function(const char *stack, char *out, size_t size);

/* The public, immutable, reference-counted report that events carry. A */
lagscope_hang_report *lagscope__hang_report_new(const char *id, uint64_t hang_id,
                                                const char *path, char *json,
                                                char *heaviest_stack_json); /* takes both: lagscope__alloc's */
/* The heaviest main-thread stack as a JSON array; NULL when none. F */
const char *lagscope__hang_report_heaviest_stack(const lagscope_hang_report *report);
/* Gives the report its verdict (lagscope__report_cause_json's; taken) and keeps its label. A */
void lagscope__hang_report_set_cause(lagscope_hang_report *report, char *cause_json);
/* {"kind", "summary", "label"}; NULL when none. F */
const char *lagscope__hang_report_cause(const lagscope_hang_report *report);
/* The cause's label ("lock · keeper"); "" when none. F */
const char *lagscope__hang_report_label(const lagscope_hang_report *report);
/* The cause's kind ("lock", "idle", ...); "" when none. F */
const char *lagscope__hang_report_kind(const lagscope_hang_report *report);

/* ---- store (core/store.c): reports on disk, never lost ------------------------------------------- */
typedef struct lagscope__store lagscope__store;
/* A character that a report's id, or a folder named after the app, may hold: [A-Za-z0-9._-],
 * safe in a path everywhere (the store, the router and the app's folder name apply it). F */
static inline int lagscope__name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-';
}
/* Opens (creating with its parents, 0700) the folder, refused unless it is ours and nobody else
 * can write it or a folder above it (see lagscope__folder_open); lists the reports it holds,
 * for recovery, and deletes the temporary files interrupted writes left. A */
int lagscope__store_open(const char *dir, uint32_t max_reports, uint64_t max_bytes,
                         lagscope__store **out, char *why, size_t why_size);
void lagscope__store_close(lagscope__store *s);
/* Writes <dir>/<id>.json atomically (temporary file, fsync, rename, fsync of the folder), then
 * removes the oldest reports past the bounds (never the one just written). Writes the final
 * path to path_out. On failure (full disk, read-only folder) returns LAGSCOPE_ESYS with why;
 * the old file, if any, is intact. A */
int lagscope__store_write(const lagscope__store *s, const char *id, const char *json,
                          char *path_out, size_t path_size, char *why, size_t why_size);
/* At start, over the files the folder held at open (never a report of this run), once per
 * open: each report still in progress is rewritten as ended by termination and handed to
 * found(); each unreadable, truncated, non-JSON or other-schema file to corrupt() with a
 * sentence, and left alone. Stops between two files once *stop is set (stop may be NULL).
 * Returns ESYS when a report could not be rewritten (handed over all the same), ENOMEM, or
 * the listing's error. May run on its own thread while another writes through s. A */
int lagscope__store_recover(lagscope__store *s,
                            void (*found)(void *ctx, const char *id, const char *path,
                                          const char *json),
                            void (*corrupt)(void *ctx, const char *path, const char *why),
                            void *ctx, const _Atomic int *stop);

/* A report whose final write failed (a full disk): marks <id>.json, without needing space, as
 * ended at ended_wall_ms, so that the next start does not call it ended by termination. F */
int lagscope__store_mark_ended(lagscope__store *s, const char *id, int64_t ended_wall_ms);

/* Opens the folder dir component by component (openat), creating missing ones with mode 0700
 * when create is set, and returns its fd in *out (O_CLOEXEC). Refused (ESYS, with why) unless
 * the folder belongs to this user and nobody else can write it, and every folder above it
 * belongs to root or this user and is not writable by others unless sticky (as /tmp); a
 * symbolic link on the way is followed only when root or this user made it. ENOENT when it
 * is missing and create is not set. F */
int lagscope__folder_open(const char *dir, int create, int *out, char *why, size_t why_size);
/* A regular file of the folder dirfd (never a link, FIFO or device: EPARSE), of at most limit
 * bytes (ELIMIT); *text NUL-terminated, free with lagscope__dealloc. ENOENT, ESYS. A */
int lagscope__folder_read(int dirfd, const char *name, size_t limit, char **text, size_t *len);

/* Why text is not a report the store would keep as <id>.json (a sentence to follow "the
 * file"), or NULL when it is one. A */
const char *lagscope__store_check(const char *text, size_t len, const char *id, char *why,
                                  size_t why_size);
/* What recovery makes of <id>.json's text: EPARSE with *problem when it is no report; else
 * *updated is the rewritten text (lagscope__dealloc), or NULL when the report is final
 * already. ended_wall_ms >= 0: the file was marked ended (lagscope__store_mark_ended). A */
int lagscope__store_recovered_text(const char *text, size_t len, const char *id,
                                   int64_t ended_wall_ms, char **updated, char *why,
                                   size_t why_size, const char **problem);

/* Reading while the monitor writes (the viewer): no store needed. */
typedef struct lagscope__store_entry {
  char id[64];
  uint64_t bytes;
} lagscope__store_entry;
/* The reports in dir (regular files of the store's name that begin as its reports do), newest
 * first (ids begin with their UTC start time); a missing folder is an empty list. Free *entries with lagscope__dealloc. A */
int lagscope__store_list(const char *dir, lagscope__store_entry **entries, size_t *count);
/* One report's text (free with lagscope__dealloc), read with the store's checks: ENOENT for an
 * id of no file or not of the id's form, EPARSE for a file that is not a report the store
 * would keep (a link, a FIFO, another document), ELIMIT for a file past the store's size
 * bound, ESYS otherwise (a folder that lagscope__folder_open refuses). A */
int lagscope__store_read(const char *dir, const char *id, char **text, size_t *len);

/* ---- hangs (core/hang.c): one hang recorded, on the monitor thread --------------------------- */
/* wall_ms (ms since 1970, UTC) as reports' ids begin: "20261126T170102.345Z", years 0 to 9999.
 * Arithmetic, where gmtime_r would read the zone file into malloc'ed memory. F */
#define LAGSCOPE__UTC_STAMP_SIZE 24
void lagscope__utc_stamp(int64_t wall_ms, char out[LAGSCOPE__UTC_STAMP_SIZE]);
typedef struct lagscope__hang_recorder lagscope__hang_recorder;
/* Opens the report store (errors become error events) and prepares capture. A */
lagscope__hang_recorder *lagscope__hang_recorder_new(const lagscope_config *config);
void lagscope__hang_recorder_free(lagscope__hang_recorder *h);
/* Writes again a final report the disk had no room for, every few seconds at most. A */
void lagscope__hang_recorder_retry(lagscope__hang_recorder *h);
/* Lets the symbol index go when no report has needed it for 30 s (and no hang is on), so
 * that its memory goes back to the system; joins recovery's thread once it is done. A */
void lagscope__hang_recorder_tidy(lagscope__hang_recorder *h, uint64_t now_ns);
/* 1 if a final report waits for room on the disk (the next retry writes). F */
int lagscope__hang_recorder_unsaved(const lagscope__hang_recorder *h);
/* Publishes hang_recovered for reports an earlier run left in progress (and an error event
 * for each file that is no report), from a thread of its own that ends when done; stopped
 * and joined by lagscope__hang_recorder_free. When no thread can be started, recovers before
 * returning. A */
void lagscope__hang_recorder_recover(lagscope__hang_recorder *h);
/* The hang began: captures the main thread, then every thread, and writes the report. A */
void lagscope__hang_recorder_begin(lagscope__hang_recorder *h, uint64_t hang_id,
                                   uint64_t start_ns, int64_t start_wall_ms,
                                   const lagscope_metrics *before,
                                   const lagscope__process_sample *sample_before);
void lagscope__hang_recorder_sample(lagscope__hang_recorder *h); /* one main-thread sample */
/* The main thread is late but not hung yet: one sample into a ring of the last
 * LAGSCOPE__EARLY_SAMPLES (allocated at the first), which the next hang's report starts with,
 * those taken at or after its start. Forget: it answered in time; the ring is emptied. A/F */
void lagscope__hang_recorder_sample_early(lagscope__hang_recorder *h);
void lagscope__hang_recorder_forget_early(lagscope__hang_recorder *h);
/* A hitch: the ring's samples from start_ns on, as its heaviest stack, in a payload (for a
 * hitch event's stack_json) that also holds its cause and telling function, *cause_json
 * (NULL without samples) and *function ("" when none) pointing into it. Empties the ring. NULL when out of memory. A */
char *lagscope__hang_recorder_hitch(lagscope__hang_recorder *h, uint64_t start_ns,
                                    uint64_t duration_ns, uint32_t *sample_count,
                                    const char **cause_json, const char **function);
#define LAGSCOPE__EARLY_SAMPLES 64 /* 640 ms at 10 ms: a threshold's worth, at most 1000 ms */
void lagscope__hang_recorder_during(lagscope__hang_recorder *h, const lagscope_metrics *m);
/* While a hang lasts: the main thread's latest sample as a JSON array of frames, in a payload
 * (lagscope__payload_new) for a hang_sample event; NULL when there is none. A */
char *lagscope__hang_recorder_latest_stack(lagscope__hang_recorder *h, uint32_t *sample_count);
/* Captures every thread now (lagscope's own excepted) into buffers of its own, an active hang's
 * untouched, and returns them as lagscope__report_threads_json does; before (may be NULL) is
 * the sampler's last sample, for CPU. A */
int lagscope__hang_recorder_capture_now(lagscope__hang_recorder *h,
                                        const lagscope__process_sample *before, char **out);
/* The hang ended: the final report, stored; the payload for hang_ended (NULL on failure). A */
lagscope_hang_report *lagscope__hang_recorder_end(lagscope__hang_recorder *h,
                                                  uint64_t duration_ns);

/* ---- publishing and logging (core/publish.c) --------------------------------------------------- */
/* Points publishing at an instance's bus and logging at its config (lifecycle: before its
 * threads start; NULL, NULL after they are joined). F */
void lagscope__publish_to(lagscope__bus *bus, const lagscope_config *config);
/* Publishes to the running instance's bus; LAGSCOPE_ENOTRUNNING when stopped. F */
int lagscope__publish(const lagscope_event *event);
/* Publishes an error event with a formatted message to the running instance's bus. A */
void lagscope__publish_error(int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Logs one line through the configured log hook (stderr without one). F */
void lagscope__log(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void lagscope__log_line(const lagscope_config *config, const char *line); /* F */

/* ---- the main thread's calls (core/main_thread.c) ------------------------------------------------
 * lagscope_frame, lagscope_heartbeat, the idle marks and the ping's answer write here; static,
 * so that a call after stop (a ping a host queue held) finds it. */
lagscope__main_signals *lagscope__main_signals_shared(void); /* F */
lagscope__frame_ring *lagscope__frame_ring_shared(void);     /* F */
/* The thread whose calls count (lifecycle: the one that starts lagscope). F */
void lagscope__main_thread_watch(int32_t thread_id);
int32_t lagscope__main_thread_watched(void); /* F; 0 before the first start */
/* The last other thread that called lagscope_frame, _heartbeat or ran the ping; 0 when none
 * since the last look. F */
int32_t lagscope__main_thread_take_wrong_caller(void);
/* The function post_main is given; arg is the ping's number. Main thread. F */
void lagscope__main_thread_answer_ping(void *arg);

/* ---- the dispatcher (core/dispatcher.c): the bus, the subscribers and the consumers ----------- */
typedef struct lagscope__dispatcher lagscope__dispatcher;
typedef struct lagscope__subscriber lagscope__subscriber;

int lagscope__dispatcher_new(const lagscope_config *config, lagscope__dispatcher **out); /* A */
int lagscope__dispatcher_start(lagscope__dispatcher *d); /* the dispatcher thread. A */
/* Stops the consumers with a thread of their own, joins the dispatcher thread (every event
 * published so far reaches the subscribers' queues), then stops the other consumers. A, L */
void lagscope__dispatcher_stop(lagscope__dispatcher *d);
/* Stops the remaining subscribers, each after it delivered what it has queued. A, L */
void lagscope__dispatcher_free(lagscope__dispatcher *d);
lagscope__bus *lagscope__dispatcher_bus(lagscope__dispatcher *d); /* F */
/* Events lost: the bus's and every subscriber queue's. F */
uint64_t lagscope__dispatcher_dropped(lagscope__dispatcher *d);
void lagscope__dispatcher_wake(lagscope__dispatcher *d); /* F, any thread */
/* A subscriber with a queue and a delivery thread of its own. A, L */
int lagscope__dispatcher_subscribe(lagscope__dispatcher *d, lagscope_event_fn fn, void *user,
                                   lagscope_subscription *out);
/* Unlinks a subscriber for lagscope__subscriber_stop; LAGSCOPE_ENOENT, or LAGSCOPE_EDEADLK
 * from its own callback (left linked). L */
int lagscope__dispatcher_unlink(lagscope__dispatcher *d, lagscope_subscription id,
                                lagscope__subscriber **out);
/* Joins an unlinked subscriber's thread, delivering nothing more, and frees it. A */
void lagscope__subscriber_stop(lagscope__subscriber *s);

/* What plugs into the core from outside core/: the HUD (hud/consumer.c), the viewer
 * (web/consumer.c), Darwin's overlay. The build lists them in lagscope__consumers (a file it
 * generates), so that core/ names none of them. */
typedef enum lagscope__delivery {
  LAGSCOPE__DELIVER_NONE,       /* takes no events */
  LAGSCOPE__DELIVER_INLINE,     /* on_event and tick on the dispatcher thread: quick */
  LAGSCOPE__DELIVER_OWN_THREAD, /* on_event on a delivery thread of its own */
} lagscope__delivery;

typedef struct lagscope__consumer {
  const char *name; /* in messages: "viewer not started: …" */
  lagscope__delivery delivery;
  /* lagscope_start, before lagscope's threads run. 0 with *state NULL: not wanted by this
   * config. A failure is said as an error event, and lagscope runs on without it. */
  int (*start)(const lagscope_config *config, lagscope__dispatcher *dispatcher, void **state,
               char *why, size_t why_size);
  void (*on_event)(const lagscope_event *e, void *state);
  /* INLINE: between events, on the dispatcher thread; returns when it next wants to run
   * (UINT64_MAX: at the next event). NULL: none. */
  uint64_t (*tick)(void *state, uint64_t now_ns);
  /* The app came back to the foreground (lagscope__app_resumed): on the dispatcher thread, and
   * possibly at once with stop. NULL: nothing to renew. */
  void (*resume)(void *state);
  /* lagscope_stop, after the monitor: OWN_THREAD ones before the dispatcher is joined (their
   * delivery thread joined first), the others after. */
  void (*stop)(void *state);
} lagscope__consumer;

extern const lagscope__consumer *const lagscope__consumers[]; /* NULL-terminated */

/* Starts each consumer of lagscope__consumers (before lagscope__dispatcher_start). A */
void lagscope__dispatcher_start_consumers(lagscope__dispatcher *d, const lagscope_config *config);
/* The app is back in the foreground: the consumers' resume soon, on the dispatcher thread
 * (iOS closes a suspended app's listening sockets; Darwin calls this on
 * UIApplicationWillEnterForegroundNotification). Any thread. F */
void lagscope__app_resumed(void);

/* ---- the monitor (core/monitor.c): watchdog, frames, sampler, hangs, on a thread of its own --- */
typedef struct lagscope__monitor lagscope__monitor;
/* config and dispatcher outlive the monitor. A */
int lagscope__monitor_new(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                          lagscope__monitor **out);
int lagscope__monitor_start(lagscope__monitor *m); /* A */
void lagscope__monitor_stop(lagscope__monitor *m); /* joins: a hang still open ends here */
void lagscope__monitor_free(lagscope__monitor *m);
/* Asks the monitor thread to capture every thread now and waits up to timeout_ns; *json is
 * freed with lagscope__dealloc. LAGSCOPE_ETIMEDOUT when it did not answer in time. Any other
 * thread; one request at a time. A, L */
int lagscope__monitor_capture_now(lagscope__monitor *m, char **json, uint64_t timeout_ns);

/* ---- the instance's life (core/lifecycle.c) ------------------------------------------------------ */
/* lagscope__monitor_capture_now on the running instance, for consumers (the viewer). A, L */
int lagscope__capture_now(char **json, uint64_t timeout_ns);

#endif /* LAGSCOPE_INTERNAL_H */
