/*
 * The primitives every stage uses: messages, the configuration's table, lagscope's counted heap
 * and payloads, sorting, its own threads, and JSON written and checked as text.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_BASE_H
#define LAGSCOPE_BASE_H

#include "lagscope.h"

#include <float.h>
#include <pthread.h> /* pthread_t: lagscope__thread_create */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAGSCOPE__CACHE_LINE 64

/* ---- messages (core/base/names.c) ----------------------------------------------------------------
 * Writes a failure's explanation into the caller's buffer, if there is one; a long path may
 * cut it short, which is fine for a message. F */
void lagscope__explain(char *why, size_t why_size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- saying something: events, errors, log lines (core/deliver/publish.c) ----------------------
 * Any stage may have something to say, as any stage may allocate; where it goes (the running
 * instance's bus, the log hook) is delivery's business. Declared here and implemented by the
 * last stage, deliver, so that a stage that says something depends on this interface and not
 * on delivery: the report stage hands its hangs (hang_ended's, hang_recovered's, hang_lost's)
 * to deliver only as events, through lagscope__publish. */
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

/* ---- names that more than one stage reads (core/base/names.c) ------------------------------------ */
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

/* The state's name in a report's JSON; NULL for none. F */
const char *lagscope__report_state_name(int state);
/* The state a report's JSON names; -1 for a name that is none. F */
int lagscope__report_state_of(const char *name);

/* A character that a report's id, or a folder named after the app, may hold: [A-Za-z0-9._-],
 * safe in a path everywhere (the store, the router and the app's folder name apply it). F */
static inline int lagscope__name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-';
}

/* ---- UTC stamps (core/base/utc_stamp.c) ---------------------------------------------------------- */
/* wall_ms (ms since 1970, UTC) as reports' ids begin: "20261126T170102.345Z", years 0 to 9999.
 * Arithmetic, where gmtime_r would read the zone file into malloc'ed memory. F */
#define LAGSCOPE__UTC_STAMP_SIZE 24
void lagscope__utc_stamp(int64_t wall_ms, char out[LAGSCOPE__UTC_STAMP_SIZE]);
/* The other way: the stamp that text begins with ("20261126T170102.345Z", or without the
 * milliseconds as older ids are) into *wall_ms; 0 when text begins with none. F */
int lagscope__utc_stamp_read(const char *text, int64_t *wall_ms);

/* ---- configuration (core/base/config.c) ------------------------------------------------------------
 * The numeric and on/off fields of lagscope_config, one row each, in the order they are checked.
 * The defaults (lagscope_config_default), the range checks and their messages
 * (lagscope_config_validate) and the status JSON's "config" object (web/api.c) come from it;
 * docs/guide.md's table is checked against it (tests/unit/core/test_config_readme.c).
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
 * (post_main, on_event, log, report_dir, app_name, app_version, server_bind, metrics_token,
 * pushgateway_url and _instance: NULL by default, checked where they need it), and hud_corner,
 * an enum whose message names its constants. */
#define LAGSCOPE__CONFIG_FIELDS(XX)                                                         \
  XX(hang_threshold_ms, uint32_t, 250, RANGE, 10, 60000, "ms", CONFIG)                      \
  XX(ping_interval_ms, uint32_t, 50, AT_MOST, 1, hang_threshold_ms, "ms", CONFIG)           \
  XX(usage_interval_ms, uint32_t, 500, RANGE, 50, 60000, "ms", CONFIG)                      \
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

/* Each row as a number, LAGSCOPE__FIELD_<name>, in the table's order. */
typedef enum lagscope__config_field {
#define LAGSCOPE__FIELD_ENUM_(name, ...) LAGSCOPE__FIELD_##name,
  LAGSCOPE__CONFIG_FIELDS(LAGSCOPE__FIELD_ENUM_)
#undef LAGSCOPE__FIELD_ENUM_
  LAGSCOPE__FIELD_COUNT
} lagscope__config_field;

/* The widest values a row allows, whatever the other fields hold: min..max (RANGE, POW2,
 * ON_OFF, RT_SIGNAL), min..the named field's widest (AT_MOST; less one for BELOW), min..DBL_MAX
 * (AT_LEAST). For what reads a field as text before a config exists (lagscope-run's options,
 * the preload's settings), so that its range is the table's. F */
typedef struct lagscope__config_bounds {
  double min, max;
} lagscope__config_bounds;
static inline lagscope__config_bounds lagscope__config_bounds_of(lagscope__config_field field) {
  lagscope__config_bounds b = {0, 0};
  switch (field) {
#define LAGSCOPE__BOUNDS_RANGE_(lo, hi) (lo), (hi)
#define LAGSCOPE__BOUNDS_POW2_(lo, hi) (lo), (hi)
#define LAGSCOPE__BOUNDS_ON_OFF_(lo, hi) (lo), (hi)
#define LAGSCOPE__BOUNDS_RT_SIGNAL_(lo, hi) (lo), (hi)
#define LAGSCOPE__BOUNDS_AT_MOST_(lo, field) \
  (lo), lagscope__config_bounds_of(LAGSCOPE__FIELD_##field).max
#define LAGSCOPE__BOUNDS_BELOW_(lo, field) \
  (lo), lagscope__config_bounds_of(LAGSCOPE__FIELD_##field).max - 1.0
#define LAGSCOPE__BOUNDS_AT_LEAST_(lo, unused) (lo), DBL_MAX
#define LAGSCOPE__BOUNDS_CASE_(name, type, default_value, check, lo, hi, ...) \
  case LAGSCOPE__FIELD_##name:                                                \
    b = (lagscope__config_bounds){LAGSCOPE__BOUNDS_##check##_(lo, hi)};       \
    break;
    LAGSCOPE__CONFIG_FIELDS(LAGSCOPE__BOUNDS_CASE_)
#undef LAGSCOPE__BOUNDS_CASE_
#undef LAGSCOPE__BOUNDS_RANGE_
#undef LAGSCOPE__BOUNDS_POW2_
#undef LAGSCOPE__BOUNDS_ON_OFF_
#undef LAGSCOPE__BOUNDS_RT_SIGNAL_
#undef LAGSCOPE__BOUNDS_AT_MOST_
#undef LAGSCOPE__BOUNDS_BELOW_
#undef LAGSCOPE__BOUNDS_AT_LEAST_
    case LAGSCOPE__FIELD_COUNT: break;
  }
  return b;
}

/* A credential of the user's (config.metrics_token, LAGSCOPE_METRICS_TOKEN, lagscope-run's
 * --metrics-token): LAGSCOPE__CREDENTIAL_MIN..MAX visible ASCII characters, no space. 0, or
 * LAGSCOPE_EINVAL and what is wrong in *problem (a phrase that never holds the value). Inline
 * for lagscope-run, which links no core. F */
#define LAGSCOPE__CREDENTIAL_MIN 16
#define LAGSCOPE__CREDENTIAL_MAX 128
static inline int lagscope__credential_problem(const char *token, const char **problem) {
  size_t n = 0;
  *problem = NULL;
  for (; token[n] != '\0'; n++)
    if (token[n] <= ' ' || token[n] > '~') /* a byte past 0x7f is negative: caught too */
      *problem = "holds a space or a character that is not visible ASCII";
  if (n < LAGSCOPE__CREDENTIAL_MIN) *problem = "is shorter than 16 characters";
  else if (n > LAGSCOPE__CREDENTIAL_MAX) *problem = "is longer than 128 characters";
  return *problem != NULL ? LAGSCOPE_EINVAL : LAGSCOPE_OK;
}

/* A Pushgateway's address, config.pushgateway_url (web/push.c): "http://HOST[:PORT][/PATH]",
 * HOST a name or an IPv4 address, PORT 80 when not given, PATH a prefix (a gateway behind a
 * proxy's path) without its trailing '/'. Only http: the push speaks no TLS. */
typedef struct lagscope__http_url {
  char host[256];
  uint16_t port;
  char path[256]; /* "" or "/prefix" */
} lagscope__http_url;
/* Parses url into *out: NULL when good, else a static sentence saying what is wrong. Inline
 * (as the bounds above), for lagscope-run, which refuses a bad --pushgateway before the
 * program runs, with the config check's words. F */
static inline const char *lagscope__http_url_parse(const char *url, lagscope__http_url *out) {
  static const char scheme[] = "http://";
  if (url == NULL || url[0] == '\0') return "it is empty";
  size_t i = 0;
  for (; scheme[i] != '\0'; i++) {
    char c = url[i] >= 'A' && url[i] <= 'Z' ? (char)(url[i] - 'A' + 'a') : url[i];
    if (c != scheme[i])
      return c == 's' && i == 4 ? "https is not supported (the push speaks no TLS): give an "
                                  "http:// URL"
                                : "it does not start with http://";
  }
  const char *p = url + i;
  size_t n = 0;
  for (; p[n] != '\0' && p[n] != ':' && p[n] != '/'; n++) {
    char c = p[n];
    if (c == '@') return "a user or password in the URL is not supported";
    if (c == '[') return "an IPv6 address is not supported: give a name or an IPv4 address";
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '-' || c == '_'))
      return "its host has a character a host name cannot have";
  }
  if (n == 0) return "it has no host";
  if (n >= sizeof(out->host)) return "its host is too long";
  for (size_t k = 0; k < n; k++) out->host[k] = p[k];
  out->host[n] = '\0';
  p += n;
  unsigned long port = 80;
  if (*p == ':') {
    port = 0;
    for (p++, n = 0; *p >= '0' && *p <= '9' && n < 6; p++, n++) port = port * 10 + (unsigned long)(*p - '0');
    if (n == 0 || port == 0 || port > 65535 || (*p != '\0' && *p != '/'))
      return "its port is not a number in 1..65535";
  }
  out->port = (uint16_t)port;
  n = 0;
  for (; p[n] != '\0'; n++)
    if (p[n] == '?' || p[n] == '#' || (unsigned char)p[n] <= ' ')
      return "it has a query, a fragment or a space: give the gateway's address only";
  while (n > 0 && p[n - 1] == '/') n--; /* the push adds "/metrics/job/..." */
  if (n >= sizeof(out->path)) return "its path is too long";
  for (size_t k = 0; k < n; k++) out->path[k] = p[k];
  out->path[n] = '\0';
  return NULL;
}

/* config.app_name, or the program's name. F */
void lagscope__app_name(const lagscope_config *config, char *out, size_t size);
/* config.report_dir, or "<lagscope__state_root>/<app_name>", or, without one,
 * "$TMPDIR/lagscope-<uid>/<app_name>" ("/tmp" without TMPDIR); the store checks whichever it
 * is (lagscope__folder_open). F */
void lagscope__report_dir(const lagscope_config *config, const char *app_name, char *out,
                          size_t size);

/* ---- memory (core/base/memory.c) ----------------------------------------------------------------
 * Every heap allocation of lagscope's own goes through these so that the bytes lagscope holds
 * are published in the metrics (monitor_memory_bytes). Not counted, because they allocate
 * with malloc themselves and say nothing: cJSON's trees and printed texts (freed with
 * lagscope_free), libdw's and libelf's symbol tables, cairo's and CoreGraphics' own state,
 * civetweb's connections and threads. */
/* A, L (the runs' lock, never held across a system call): zeroed, cache-line aligned; NULL
 * when out of memory. Not from malloc: what is freed leaves the process (see memory.c). */
void *lagscope__alloc(size_t size);
void lagscope__dealloc(void *p);                /* A */
/* What the heap holds: its runs and its blocks of their own whole, from mapped to unmapped
 * (under ASan, what it asked calloc for). F */
uint64_t lagscope__memory_in_use(void);
/* What callers asked for and have not freed: what an owner that counts its own allocations
 * (lagscope__symbols_memory) adds up to. F */
uint64_t lagscope__memory_asked(void);
/* Blocks smaller than half a page come from runs of this many bytes, one size each. */
#define LAGSCOPE__HEAP_RUN_BYTES 16384
/* The block an allocation of size bytes takes, header included: its size class's block in a
 * run (the runs' free room aside), or its own whole pages; under ASan, what calloc is asked.
 * 0 when too large. For what models the heap from outside (bench_stream). F */
size_t lagscope__memory_block_bytes(size_t size);
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

/* ---- descriptors kept open (core/base/owned_fd.c) ------------------------------------------
 * A descriptor lagscope keeps is known by its number and the file it named when opened (device,
 * inode, access mode): the app may close the number and open its own file on it, and then the
 * number is never lagscope's to use or close again. Every call is F (one fstat, one fcntl). */
typedef struct lagscope__owned_fd {
  int fd; /* -1: none */
  int mode;
  uint64_t device, inode;
} lagscope__owned_fd;
#define LAGSCOPE__OWNED_FD_NONE ((lagscope__owned_fd){.fd = -1})
/* Takes fd as lagscope's: 0, or ESYS (fd is not open; o holds none). */
int lagscope__owned_fd_take(lagscope__owned_fd *o, int fd);
/* 1 when o's number still names the file lagscope opened. */
int lagscope__owned_fd_is_ours(const lagscope__owned_fd *o);
/* The number, when still lagscope's; -1 when it is not (closed, or the app's now). */
int lagscope__owned_fd_get(const lagscope__owned_fd *o);
/* Closes the number when still lagscope's, never the app's file; o holds none after. 1 when it
 * was lagscope's, 0 when it had been lost. */
int lagscope__owned_fd_close(lagscope__owned_fd *o);

/* ---- reference-counted payloads (core/base/memory.c) --------------------------------------------
 * An immutable payload with a hidden header; lagscope_retain/lagscope_release work on it. */
typedef void (*lagscope__payload_destroy_fn)(void *payload);
void *lagscope__payload_new(size_t size, lagscope__payload_destroy_fn destroy); /* A: refs = 1 */
char *lagscope__payload_text(const char *text); /* A: a payload holding a copy; NULL: no memory */
char *lagscope__strdup(const char *text);       /* A: a copy, freed with lagscope__dealloc */
void *lagscope__alloc_array(size_t count, size_t size); /* A: zeroed; NULL on overflow too */
/* qsort's contract, in place (core/base/sort.c): glibc's qsort mallocs a copy of the array. F */
void lagscope__sort(void *items, size_t count, size_t size,
                    int (*compare)(const void *, const void *));
uint32_t lagscope__payload_refs(const void *payload);                        /* F: for tests */


/* ---- threads (core/base/threads.c, portable over pthreads) ---- */
typedef struct lagscope__thread lagscope__thread;
/* Starts fn(arg) on a new named thread (name ≤ 15 bytes), every signal blocked. Its thread id
 * is registered as one of lagscope's own until joined. A */
int lagscope__thread_start(lagscope__thread **out, const char *name, void (*fn)(void *), void *arg);
/* The same with a stack of stack_bytes (virtual: only the pages touched cost memory). A */
int lagscope__thread_start_sized(lagscope__thread **out, const char *name, void (*fn)(void *),
                                 void *arg, size_t stack_bytes);
void lagscope__thread_join(lagscope__thread *t); /* A: frees t */
/* What both of the above start with, for a thread that needs its pthread_t (a timed join: the
 * X11 overlay's): pthread_create with a stack of stack_bytes and every signal blocked from the
 * new thread's first instruction. Nothing is registered: fn adopts itself
 * (lagscope__thread_adopt). LAGSCOPE_OK, LAGSCOPE_ELIMIT (EAGAIN) or LAGSCOPE_ESYS. A: the
 * thread's stack */
int lagscope__thread_create(pthread_t *out, size_t stack_bytes, void *(*fn)(void *), void *arg);
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
/* The thread lagscope_start, called on the calling thread, watches for signs of life. Linux:
 * the caller (its loop is the one that calls start: lagscope-run's preload starts it on the
 * program's main thread, an app on the thread of its loop). Darwin: the process's main
 * thread wherever start is called (pthread_main_np's thread, as its Mach port), because the
 * main queue and the run loop whose pings answer run there. F */
int32_t lagscope__thread_to_watch(void);
#define LAGSCOPE__OWN_THREADS_MAX 512 /* lagscope's threads, the viewer's civetweb ones included */
/* 1 when tid is one of lagscope's running threads. F */
int lagscope__thread_id_is_own(int32_t tid);
/* Writes the ids of lagscope's running threads to out; returns how many. F */
size_t lagscope__thread_own_ids(int32_t *out, size_t max);

/* ---- JSON written as text (core/base/json_writer.c), for documents too large for a cJSON tree --------
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
/* Length of the valid UTF-8 sequence at s (1-4: no overlong form, surrogate or point past
 * U+10FFFF), or 0 when the bytes there are not one (a sequence cut by the NUL too). F */
size_t lagscope__utf8_sequence(const unsigned char *s);
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

/* Numbers as JSON text, without stdio or libm (core/base/json_writer.c). value's decimal
 * digits, NUL-terminated (out: 21 bytes; 22 with a sign); their count. F */
size_t lagscope__json_u64_text(uint64_t value, char *out);
size_t lagscope__json_i64_text(int64_t value, char *out);
/* A value rounded to 0.001, half away from zero, as text, without libm: "12.345", "-0.5", "3"
 * (out: 32 bytes); 0 when the value is too large for thousandths (|value| >= 4e12) or not
 * finite. F */
int lagscope__json_measure_text(double value, char *out);

/* How deep any JSON that lagscope parses may nest: the store refuses a file nested deeper, so
 * that cJSON, which recurses once per level (on a civetweb worker's stack, in the viewer), never
 * meets one; lagscope's own reports nest at most twice a stack's depth and a few levels more
 * (report.h checks that at compile time). */
#define LAGSCOPE__JSON_DEPTH_MAX 300

/* ---- JSON checked without building it (core/base/json_check.c) ---------------------------------------
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

#endif /* LAGSCOPE_BASE_H */
