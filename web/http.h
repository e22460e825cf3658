/*
 * Inside the web module: the server's state, one request, and how answers are sent. Shared by
 * server.c (the server's life), request.c (one request, to its answer), access.c (which
 * clients are served), api.c (the JSON routes), stream.c (the live stream) and token.c (the
 * token).
 */
#ifndef LAGSCOPE_WEB_HTTP_H
#define LAGSCOPE_WEB_HTTP_H

#include "web.h"

#include <pthread.h>

struct mg_connection;
struct mg_request_info;

/* ---- cJSON numbers (cjson_numbers.c) ------------------------------------------------------- */
struct cJSON;
/* Exact integers: cJSON's numbers are doubles, exact only to 2^53. A */
void lagscope__web_json_add_u64(struct cJSON *object, const char *name, uint64_t value);
void lagscope__web_json_add_i64(struct cJSON *object, const char *name, int64_t value);

/* ---- the window of older metrics ticks (metrics_tick.c) ------------------------------------ */
/* A metrics event as the viewer's window of older ticks keeps it: its numbers without
 * recent_frame_ms, frame_histogram and busiest_threads, unformatted (176 bytes, where its text
 * took a block of 768). */
typedef struct lagscope__web_metrics_tick {
  uint64_t sequence, time_ns, read_at_ns;
  int64_t wall_ms;
  double refresh_hz, cadence_hz, fps, hitch_ms_per_s, cpu_percent, monitor_cpu_percent;
  uint64_t total_frames, total_dropped, lost_timestamps, rss_bytes, pss_bytes, hangs;
  uint64_t events_published, events_dropped, monitor_memory_bytes, stopped_ms, monitor_starved_ms;
  uint64_t monitor_blind_ms;
  uint32_t frames, dropped, thread_count;
  uint8_t band, idle, hang_in_progress;
} lagscope__web_metrics_tick;
/* The tick of a metrics event (one with its metrics). F */
void lagscope__web_metrics_tick_of(const lagscope_event *event, lagscope__web_metrics_tick *out);
/* The tick as one line of JSON in lagscope's heap: the event's text without those three
 * members. NULL when out of memory. A */
char *lagscope__web_metrics_tick_text(const lagscope__web_metrics_tick *tick);

/* ---- Prometheus's /metrics (openmetrics.c) ------------------------------------------------- */
#define LAGSCOPE__WEB_HANG_BUCKETS 14 /* the hang duration histogram's: 13 bounds and +Inf */
/* What /metrics tells, kept from the events since lagscope started. */
typedef struct lagscope__web_openmetrics {
  uint64_t hangs_by_kind[LAGSCOPE__CAUSE_COUNT]; /* counted hangs ended, by the cause's kind */
  uint64_t hang_buckets[LAGSCOPE__WEB_HANG_BUCKETS]; /* not cumulative: one per hang */
  double hang_seconds_sum;
  uint64_t hitches;
  uint64_t blind_spells;      /* monitor_blind events */
  double blind_seconds_sum;   /* their durations */
  lagscope_metrics latest; /* the last metrics event's */
  int have_latest;
  char app_version[64];    /* config.app_version, "" when unset: set once at start */
} lagscope__web_openmetrics;
/* Counts one event (hang_ended, hitch, metrics; others are ignored). F */
void lagscope__web_openmetrics_count(lagscope__web_openmetrics *m, const lagscope_event *event);
/* The exposition of m for app and pid: OpenMetrics when open_metrics, else the Prometheus text
 * format 0.0.4; freed with lagscope__dealloc; NULL when out of memory. The process's CPU
 * seconds are read when it is written (getrusage). For any web/ file that sends the metrics
 * (the route below; a push): copy web->openmetrics under metrics_lock, then call this. A */
char *lagscope__web_openmetrics_text(const lagscope__web_openmetrics *m, const char *app,
                                     int32_t pid, int open_metrics);

/* ---- the live stream (stream.c) ------------------------------------------------------------- */
#define LAGSCOPE__WEB_STREAM_BACKLOG 256 /* events a client may fall behind before it is dropped */

typedef struct lagscope__web_stream lagscope__web_stream;
lagscope__web_stream *lagscope__web_stream_new(uint32_t max_clients); /* A */
void lagscope__web_stream_free(lagscope__web_stream *s);
/* Wakes every client so that it returns (server stopping). L */
void lagscope__web_stream_close(lagscope__web_stream *s);
/* Lets clients join again after a close, once civetweb's threads are joined (restart). L */
void lagscope__web_stream_reopen(lagscope__web_stream *s);
/* Formats one event as a Server-Sent Event and keeps it for the clients; with none, neither.
 * A, L (allocates under the stream's lock) */
void lagscope__web_stream_publish(lagscope__web_stream *s, const char *type, uint64_t seq,
                                  const char *json);
typedef struct lagscope__web_stream_counts {
  uint32_t clients;
  uint64_t clients_dropped, events_sent, events_dropped, rejected;
} lagscope__web_stream_counts;
void lagscope__web_stream_counts_read(lagscope__web_stream *s,
                                      lagscope__web_stream_counts *out); /* L */

/* ---- the token (token.c) ---------------------------------------------------------------------- */
/* A new random token (32 hex digits) into current; the previous launch's, if its file in dir
 * holds one, into previous (else ""); then this launch's is saved there (mode 0600) for the
 * next. A failure to read or save the file only loses the roll-over. */
int lagscope__web_token_make(const char *dir, char current[LAGSCOPE__WEB_TOKEN_HEX + 1],
                             char previous[LAGSCOPE__WEB_TOKEN_HEX + 1], char *why,
                             size_t why_size);
/* The user's credential for /metrics into out: config.metrics_token (checked at start), else
 * the environment's LAGSCOPE_METRICS_TOKEN when it is one (else logged, without its value, and
 * left out); "" when neither. F */
void lagscope__web_credential_take(const lagscope_config *config,
                                   char out[LAGSCOPE__CREDENTIAL_MAX + 1]);

/* ---- the server's state (server.c) ------------------------------------------------------------ */
#define LAGSCOPE__WEB_METRICS_WINDOW 120 /* ticks the metrics route keeps: a minute at 500 ms */

struct lagscope__web {
  struct mg_context *ctx;   /* NULL until the first client (server.c, section 2) */
  /* The viewer's socket while it is ours (none once civetweb has it), and the pipe whose byte
   * stops the waiter: numbers the app may close and reuse, so checked before each use. */
  lagscope__owned_fd listener, wake_read, wake_write;
  _Atomic int waiter_stop;  /* set before the byte: the waiter also looks each second */
  lagscope__thread *waiter; /* waits for the first client, starts civetweb, returns */
  lagscope__wakeup *listener_go; /* civetweb's listening thread may start (server.c) */
  lagscope__wakeup *serving_stop; /* posted at stop: the viewer's thread stops civetweb */
  lagscope_config config; /* server_bind points into bind */
  char bind[64];
  char report_dir[512];
  char app_name[64];
  int (*capture_now)(char **json, uint64_t timeout_ns);
  char token[LAGSCOPE__WEB_TOKEN_HEX + 1];
  char previous_token[LAGSCOPE__WEB_TOKEN_HEX + 1]; /* "" when none */
  char metrics_token[LAGSCOPE__CREDENTIAL_MAX + 1]; /* the user's, for /metrics; "" when none */
  char url[160];
  uint16_t port;
  int64_t launch_wall_ms;
  uint64_t launch_ns;

  _Atomic uint64_t requests, clients_rejected;
  _Atomic int clients;

  lagscope__web_stream *stream;

  pthread_mutex_t metrics_lock; /* the window of recent metrics ticks */
  lagscope__web_metrics_tick metrics[LAGSCOPE__WEB_METRICS_WINDOW]; /* the older ticks (api.c) */
  char *metrics_latest; /* the newest tick, whole, as JSON */
  uint32_t metrics_next, metrics_count;
  char **hitches;               /* config.hitch_keep hitch events as JSON, under metrics_lock */
  uint32_t hitches_next, hitches_count;
  _Atomic uint64_t hangs;
  _Atomic int hang_in_progress;
  lagscope__web_openmetrics openmetrics; /* /metrics's numbers, under metrics_lock */

  pthread_mutex_t capture_lock; /* the capture route's rate limit */
  uint64_t last_capture_ns;
};

/* The viewer a civetweb connection serves (its context's user data). F */
lagscope__web *lagscope__web_of(const struct mg_connection *conn);

/* ---- one request and its answer (request.c) ------------------------------------------------- */
#define LAGSCOPE__WEB_HEADERS_MAX 16384  /* civetweb's request buffer: request line and headers */
#define LAGSCOPE__WEB_PEER_SCAN_MAX 1024 /* connections looked at among the process's sockets */
typedef struct lagscope__web_request {
  struct mg_connection *conn;
  lagscope__web *web;
  lagscope__web_route route;
  int head_only;           /* HEAD: headers, no body */
  long long content_length;/* -1 when none was given */
  const char *set_cookie;  /* a roll-over: the cookie to set with the answer, or NULL */
  int close;               /* the answer says "Connection: close": what follows on the
                            * connection cannot be told from the refused request's body */
} lagscope__web_request;

/* civetweb's handler for every path: bounds, checks, access, route, answer. Returns 1
 * (handled). A */
int lagscope__web_request_handle(struct mg_connection *conn, void *data);
/* civetweb's own refusals (a malformed request, headers over the limit, a request that timed
 * out) as JSON with the same headers as every other answer. Returns 0: handled. A */
int lagscope__web_request_civetweb_error(struct mg_connection *conn, int status,
                                         const char *message);

/* ---- which clients are served (access.c) ---------------------------------------------------- */
/* The token from the query, a bearer header or the cookie: 1 when one is this launch's, or the
 * previous launch's in the cookie, which is then exchanged (req->set_cookie, written into
 * cookie). F */
int lagscope__web_access_authorize(lagscope__web_request *req, char *cookie, size_t cookie_size);
/* The checks made before access (framing, Host, Origin): 0, or the status that refuses the
 * request, with *message (req->close set when what follows cannot be read). F */
int lagscope__web_access_refusal(lagscope__web_request *req, const struct mg_request_info *info,
                                 const char **message);
/* 1 when more connections than the bound remain, once an address past its share has been cut
 * (waits up to 200 ms for them to go). A, L */
int lagscope__web_access_too_many_clients(lagscope__web *web);
/* Shuts down every connection of an address past bound (0: every connection, at stop). A */
void lagscope__web_access_shut_peers_past(lagscope__web *web, uint32_t bound);
/* civetweb's connection callbacks: counted, and an address past its share cut. A, L */
int lagscope__web_access_connection_opened(const struct mg_connection *conn, void **data);
void lagscope__web_access_connection_closing(const struct mg_connection *conn);

/* ---- answers (reply.c) ---- */
typedef struct lagscope__web_reply {
  int status;
  const char *content_type;    /* NULL: application/json */
  const char *body;
  size_t length;
  const char *location;        /* 303 */
  const char *disposition;     /* Content-Disposition, for downloads */
  const char *allow;           /* 405 */
  int retry_after_s;           /* 429, 503: > 0 adds Retry-After */
  const char *set_cookie;      /* overrides the request's */
} lagscope__web_reply;

/* The headers every answer carries (CSP, nosniff, no framing, no referrer, no caching). */
void lagscope__web_reply_add_security_headers(struct mg_connection *conn);
/* Sends the reply with the security headers. Returns 1 (handled, for civetweb). */
int lagscope__web_reply_send(lagscope__web_request *req, const lagscope__web_reply *reply);
/* {"error": kind, "message": message}, status. Returns 1. */
int lagscope__web_reply_error(lagscope__web_request *req, int status, const char *kind,
                              const char *message);
/* The body as JSON text that the reply takes (freed with lagscope_free after sending). */
int lagscope__web_reply_json(lagscope__web_request *req, int status, char *json);
/* The error kind of a status: "not_found" for 404, and so on; "error" for one without. F */
const char *lagscope__web_reply_kind(int status);

/* ---- the routes (api.c, stream.c) ----------------------------------------------------------------- */
int lagscope__web_api_status(lagscope__web_request *req);
int lagscope__web_api_metrics(lagscope__web_request *req);
int lagscope__web_api_hangs(lagscope__web_request *req);
int lagscope__web_api_signatures(lagscope__web_request *req); /* the hangs by signature */
int lagscope__web_api_hang(lagscope__web_request *req); /* the report, or an export of it */
int lagscope__web_api_capture(lagscope__web_request *req);
int lagscope__web_stream_serve(lagscope__web_request *req);
/* Keeps a metrics event for the metrics route: its text whole, as the newest (taken:
 * lagscope__alloc's), and its tick, for the window of older ticks. A, L */
void lagscope__web_api_keep_metrics(lagscope__web *web, const lagscope_event *event, char *whole);
int lagscope__web_api_hitches(lagscope__web_request *req);
/* GET /metrics; accept: the request's Accept header (may be NULL). A, L */
int lagscope__web_api_openmetrics(lagscope__web_request *req, const char *accept);
/* Keeps a hitch event for the hitches route. A, L */
void lagscope__web_api_keep_hitch(lagscope__web *web, const char *json);

#endif /* LAGSCOPE_WEB_HTTP_H */
