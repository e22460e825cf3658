/*
 * The LAN viewer's internal contract: the embedded civetweb server (server.c), one request
 * (request.c), its access rules (access.c, auth.c), its routes (routes.c), the answers (api.c),
 * the live stream (stream.c), the exports (export.c) and the viewer's files compiled in
 * (assets, generated at build time).
 * The API itself is described in docs/viewer-api.md.
 *
 * Everything here runs on civetweb's worker threads or on the web subscriber's thread, never on
 * the main thread or the monitor. (A) allocates, (L) takes a lock, (F) neither.
 *
 * Names: web/ is one module with one prefix, lagscope__web_ (LAGSCOPE__WEB_ for macros), then
 * the concern of the file that defines the name: lagscope__web_route_parse (routes.c),
 * lagscope__web_reply_send (reply.c), lagscope__web_stream_new (stream.c); the server's own are
 * lagscope__web_start and the like (server.c). So are the Linux port's lagscope__linux_ and the
 * HUD's lagscope__hud_. core/'s prefix per file (lagscope__store_ in store.c) would put bare
 * words (route, reply, stream, token, request, asset, json) in the namespace that core/, hud/ and
 * web/ share, where they would not say they are the viewer's, and where lagscope__json_ is
 * already core's JSON writer. Two kinds of name here are not web/'s own: lagscope__civetweb_
 * and lagscope__cjson_ (civetweb_calls.h, cjson_calls.h) are the loader of the viewer's
 * libraries (libraries.c, through the port's lagscope__lazy_library_load), and
 * lagscope__viewer_consumer (consumer.c) is named in cmake/consumers.cmake beside the other
 * consumers.
 */
#ifndef LAGSCOPE_WEB_H
#define LAGSCOPE_WEB_H

#include "../core/internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the server (server.c) ------------------------------------------------------------------ */
typedef struct lagscope__web lagscope__web;

/* What the server needs from the running instance. */
typedef struct lagscope__web_host {
  const lagscope_config *config;  /* copied */
  const char *report_dir;         /* where the store keeps reports; copied */
  const char *app_name;           /* copied */
  /* Captures every thread now, on the monitor thread; *json is freed with lagscope_free.
   * Returns 0, or LAGSCOPE_ETIMEDOUT when the monitor did not answer in time. */
  int (*capture_now)(char **json, uint64_t timeout_ns);
} lagscope__web_host;

/* Starts civetweb with the config's port and address. On failure (port in use, bad address)
 * returns a negative code and a sentence in why; nothing is left running. A */
int lagscope__web_start(const lagscope__web_host *host, lagscope__web **out, char *why,
                        size_t why_size);
/* Every event, from the web's own subscriber thread: fed to the stream and the metrics
 * window. A, L */
void lagscope__web_on_event(const lagscope_event *event, void *web);
/* Closes every connection and joins civetweb's threads. A */
void lagscope__web_stop(lagscope__web *web);
/* Closes the listener and every connection and listens again on the same port with the same
 * token, so the URL stays valid (iOS closes a suspended app's listening sockets: the Darwin
 * port calls this on return to the foreground, off the main thread). When another process
 * took the port meanwhile, the next free one of the nine above it is used and the URL changes
 * (the caller publishes it again). Not from a civetweb thread, nor at once with
 * lagscope__web_stop. 0, or a code and why (all ten taken): the viewer is then off until the
 * next restart. A */
int lagscope__web_restart(lagscope__web *web, char *why, size_t why_size);
/* ---- the push (push.c) ---- */
/* The consumer that PUTs the final /metrics text to config.pushgateway_url at lagscope_stop
 * (cmake/consumers.cmake lists it): counted on the dispatcher thread, sent from lagscope-push
 * within 2 s. */
extern const lagscope__consumer lagscope__push_consumer;
/* ---- addresses (address.c) ---- */
#define LAGSCOPE__WEB_LAN_ADDRESSES_MAX 16
typedef struct lagscope__web_lan_address {
  char interface[16]; /* IF_NAMESIZE */
  char address[16];   /* dotted IPv4 */
} lagscope__web_lan_address;
/* Every IPv4 address of an interface that is up and not loopback, in the system's order, at
 * most max; returns how many. A (getifaddrs) */
int lagscope__web_lan_addresses(lagscope__web_lan_address *out, int max);
/* The addresses a browser can reach the viewer at: bound to every interface (0.0.0.0), those
 * of lagscope__web_lan_addresses; bound to one address, that one alone, with the interface
 * that has it ("lo" for 127.0.0.1; "" when none has: an address of no interface, as
 * 127.0.0.2 on Linux's loopback). Returns how many. A (getifaddrs) */
int lagscope__web_reachable_addresses(const char *bind, lagscope__web_lan_address *out, int max);
/* The address the viewer's URL names: bind itself, or with every interface bound (0.0.0.0) the
 * preferred interface's (Apple: en0; Linux: the default route's), else the first listed, else
 * 127.0.0.1. A */
void lagscope__web_lan_address_pick(const char *bind, char *out, size_t size);

/* The viewer URL with the token, "http://<ip>:<port>/?token=<hex>". F */
const char *lagscope__web_url(const lagscope__web *web);
uint16_t lagscope__web_port(const lagscope__web *web); /* F: the port bound (config 0: chosen) */

/* ---- routes (routes.c): portable, no I/O, fuzzed ------------------------------------------------- */
typedef enum lagscope__web_route_kind {
  LAGSCOPE__WEB_ROUTE_NONE = 0,       /* unknown path: 404 */
  LAGSCOPE__WEB_ROUTE_ASSET,          /* a file of the viewer; asset names which */
  LAGSCOPE__WEB_ROUTE_STATUS,
  LAGSCOPE__WEB_ROUTE_METRICS,
  LAGSCOPE__WEB_ROUTE_HANGS,
  LAGSCOPE__WEB_ROUTE_HANG,
  LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE,
  LAGSCOPE__WEB_ROUTE_HANG_TRACE,
  LAGSCOPE__WEB_ROUTE_CAPTURE,
  LAGSCOPE__WEB_ROUTE_STREAM,
  LAGSCOPE__WEB_ROUTE_HITCHES,
  LAGSCOPE__WEB_ROUTE_OPENMETRICS,    /* /metrics, for Prometheus */
  LAGSCOPE__WEB_ROUTE_SIGNATURES      /* the stored hangs grouped by signature */
} lagscope__web_route_kind;

#define LAGSCOPE__WEB_REPORT_ID_MAX 63 /* bytes of a report id, without the NUL */
#define LAGSCOPE__WEB_TOKEN_HEX 32     /* hex digits of the token */
#define LAGSCOPE__WEB_URI_MAX 2048     /* longer: 413 */

typedef struct lagscope__web_route {
  lagscope__web_route_kind kind;
  int status;       /* 0 when the request may be served; else the HTTP status to answer */
  const char *error;/* with a status: a static sentence saying why */
  const char *allow;/* with 405: the Allow header's value */
  const char *asset;/* ROUTE_ASSET: the file's name, e.g. "index.html" (the asset table's) */
  char id[LAGSCOPE__WEB_REPORT_ID_MAX + 1];  /* ROUTE_HANG*: the report id, checked */
  uint32_t limit, offset;                   /* ROUTE_HANGS: validated, defaults filled in */
  int has_token;                            /* the query had token=... */
  char token[LAGSCOPE__WEB_TOKEN_HEX + 1];  /* its value when exactly 32 hex digits, else "" */
} lagscope__web_route;

/* Parses a request line's method, path (percent-decoded by nobody: as received) and query
 * string (may be NULL) into *out. Never reads past the given NUL-terminated strings; any byte
 * sequence is safe; a NULL method or path is taken as "". Checks in this order, the first
 * failure deciding: URI (path, '?', query) over LAGSCOPE__WEB_URI_MAX bytes 413; unknown path 404
 * (exact match: no trailing slash, no decoding); method 405 (GET and HEAD, or POST for capture);
 * a report id not of the store's form 404; the query 400 (an unknown, repeated, empty or
 * malformed parameter; an empty one from "&&"). On a refusal id is "". F */
void lagscope__web_route_parse(const char *method, const char *path, const char *query,
                               lagscope__web_route *out);

/* ---- access (auth.c) ----------------------------------------------------------------------------- */
/* 1 when a and b (each of any length) are equal; time depends only on the lengths. NULL is
 * equal to nothing. F */
int lagscope__web_token_equal(const char *a, const char *b);
/* The value of cookie name (exact, case-sensitive) in a Cookie header (may be NULL), copied
 * into out; 0, or ENOENT (errno's) with out "" when absent or too long for out. F */
int lagscope__web_cookie_find(const char *header, const char *name, char *out, size_t out_size);
/* The host of a Host header ("name", "name:port", "[v6]:port") lower-cased into out, without
 * the port, the brackets or a final dot; 0 when the header is malformed or too long. F */
int lagscope__web_host_of(const char *header, char *out, size_t out_size);
/* 1 when an Origin header names the viewer's own page: "http://" and exactly the Host header
 * (case-insensitive). "null", another scheme, host or port: 0. F */
int lagscope__web_origin_is_host(const char *origin, const char *host_header);
/* One header of a request, as civetweb gives them (struct mg_header's layout). */
typedef struct lagscope__web_header {
  const char *name, *value;
} lagscope__web_header;
/* Why a request's headers leave its meaning or its body's end to be guessed (a static
 * sentence), or NULL: a repeated Host, Origin, Authorization, Cookie or Transfer-Encoding
 * (which one is meant: a proxy in front may read the other); a Content-Length that is not
 * digits only ("5, 0", "+5", "-1"), or two that disagree; a Transfer-Encoding other than
 * "chunked", or one with a Content-Length. The server answers 400. F */
const char *lagscope__web_framing_problem(const lagscope__web_header *headers, int count);
/* The path as sent (civetweb's decoding is off) percent-decoded into out, which holds at
 * least strlen(raw) + 1 bytes; 0 when it encodes a NUL ("%00", which a C string would cut
 * short) or has a malformed escape. F */
int lagscope__web_path_decode(const char *raw, char *out, size_t out_size);

/* ---- exports (export.c): portable, from a stored report's JSON ---------------------------------- */
/* The report's main-thread samples as a speedscope file (one "sampled" profile in time order,
 * weights in ms), per speedscope's file-format-schema.json. From samples.timeline when the
 * report has one, else from the call tree (one sample per node with self > 0: right
 * proportions, no order in time). Freed with lagscope_free. A; NULL with a sentence in why
 * (may be NULL) when the report is not JSON, not an object, not schema_version 1 or has no
 * call_tree, or its timeline or node ids do not fit its tree. */
char *lagscope__web_export_speedscope(const char *report_json, char *why, size_t why_size);
/* The same samples as Chrome's Trace Event Format (JSON object form): the main thread's stacks
 * over time as nested complete ("X") events, thread names as metadata ("M") events, the hang as
 * one "X" event and every other thread's stack at the start as an instant event. Times are
 * microseconds of Unix time (start.wall_ms). Freed with lagscope_free. A; NULL as above. */
char *lagscope__web_export_chrome_trace(const char *report_json, char *why, size_t why_size);

/* ---- assets (generated into the build folder by web/embed-assets.cmake) ------------------------- */
typedef struct lagscope__web_asset {
  const char *name;         /* "index.html" */
  const char *content_type; /* "text/html; charset=utf-8" */
  const unsigned char *data;
  size_t size;
} lagscope__web_asset;
/* The asset of that name, or NULL. F */
const lagscope__web_asset *lagscope__web_asset_find(const char *name);
/* All of them, one per file of assets/, sorted by name; their count in *count. F */
const lagscope__web_asset *lagscope__web_asset_list(size_t *count);

#endif /* LAGSCOPE_WEB_H */
