/*
 * The embedded civetweb server: started and stopped with lagscope, one request handler for
 * every path (there is no document root), access by the per-launch token, security headers on
 * every answer, and bounds on clients, streams, header and body sizes and request time.
 *
 * Contents
 *   1. answers: the headers every answer carries
 *   2. access: the token from the query, a bearer header or the cookie
 *   3. the request handler: limits, access, route, dispatch
 *   4. connections: counted, bounded
 *   5. lifecycle: options, the URL, start, events, stop
 */
#define _GNU_SOURCE
#include "http.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX 4096            /* a request body larger than this is refused with 413 */
#define HEADERS_MAX "16384"      /* civetweb's request buffer: request line and headers */
#define REQUEST_TIMEOUT_MS "10000" /* a request must arrive whole within this; writes too */
#define KEEP_ALIVE_MS "2000"     /* an idle keep-alive connection gives its thread back */
#define SPARE_THREADS 2          /* answer 503 to connections past the bound */
#define COOKIE_NAME "lagscope_token"
#define COOKIE_MAX_AGE "604800"  /* a week: a browser keeps viewing across launches */

/* ---- 1. answers --------------------------------------------------------------------------------- */

static const char *const security_headers[][2] = {
    {"Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
     "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
    {"Cache-Control", "no-store"},
};

static void add_header(struct mg_connection *conn, const char *name, const char *value) {
  if (value != NULL) mg_response_header_add(conn, name, value, -1);
}

void lagscope__reply_add_security_headers(struct mg_connection *conn) {
  for (size_t i = 0; i < sizeof(security_headers) / sizeof(security_headers[0]); i++)
    add_header(conn, security_headers[i][0], security_headers[i][1]);
}

int lagscope__reply_send(lagscope__request *req, const lagscope__reply *reply) {
  struct mg_connection *conn = req->conn;
  char length[24], retry[16];
  snprintf(length, sizeof(length), "%zu", reply->length);
  mg_response_header_start(conn, reply->status);
  add_header(conn, "Content-Type",
             reply->content_type != NULL ? reply->content_type : "application/json; charset=utf-8");
  add_header(conn, "Content-Length", length);
  lagscope__reply_add_security_headers(conn);
  add_header(conn, "Location", reply->location);
  add_header(conn, "Content-Disposition", reply->disposition);
  add_header(conn, "Allow", reply->allow);
  if (reply->retry_after_s > 0) {
    snprintf(retry, sizeof(retry), "%d", reply->retry_after_s);
    add_header(conn, "Retry-After", retry);
  }
  add_header(conn, "Set-Cookie", reply->set_cookie != NULL ? reply->set_cookie : req->set_cookie);
  mg_response_header_send(conn);
  if (!req->head_only && reply->length > 0) mg_write(conn, reply->body, reply->length);
  return reply->status;
}

int lagscope__reply_error(lagscope__request *req, int status, const char *kind,
                          const char *message) {
  char body[512];
  /* kind and message are ours, never the client's: no escaping needed but quotes. */
  int n = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", kind, message);
  lagscope__reply reply = {.status = status, .body = body};
  reply.length = n > 0 && (size_t)n < sizeof(body) ? (size_t)n : 0;
  if (status == 405) reply.allow = req->route.allow;
  if (status == 503) reply.retry_after_s = 1;
  return lagscope__reply_send(req, &reply);
}

int lagscope__reply_json(lagscope__request *req, int status, char *json) {
  if (json == NULL)
    return lagscope__reply_error(req, 500, "internal", "out of memory building the answer");
  lagscope__reply reply = {.status = status, .body = json, .length = strlen(json)};
  int rc = lagscope__reply_send(req, &reply);
  lagscope_free(json);
  return rc;
}

static const char *error_kind(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 413: return "too_large";
    case 429: return "rate_limited";
    case 503: return "busy";
  }
  return "error";
}

/* ---- 2. access ------------------------------------------------------------------------------------ */

/* Which token the candidate is: 2 this launch's, 1 the previous launch's, 0 neither. */
static int token_kind(const lagscope__web *web, const char *candidate) {
  if (candidate == NULL || candidate[0] == '\0') return 0;
  if (lagscope__token_equal(candidate, web->token)) return 2;
  if (web->previous_token[0] != '\0' && lagscope__token_equal(candidate, web->previous_token))
    return 1;
  return 0;
}

/* The best of the three places a token may be; a previous launch's is exchanged by a cookie. */
static int authorize(lagscope__request *req, char *cookie, size_t cookie_size) {
  const lagscope__web *web = req->web;
  char from_cookie[LAGSCOPE__TOKEN_HEX + 8] = "";
  lagscope__cookie_find(mg_get_header(req->conn, "Cookie"), COOKIE_NAME, from_cookie,
                        sizeof(from_cookie));
  const char *bearer = mg_get_header(req->conn, "Authorization");
  if (bearer != NULL && strncasecmp(bearer, "Bearer ", 7) == 0)
    bearer += 7;
  else
    bearer = NULL;
  int best = token_kind(web, req->route.has_token ? req->route.token : NULL);
  int kind = token_kind(web, bearer);
  if (kind > best) best = kind;
  kind = token_kind(web, from_cookie);
  if (kind > best) best = kind;
  if (best == 1 || (best == 2 && req->route.has_token)) {
    snprintf(cookie, cookie_size,
             COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=" COOKIE_MAX_AGE,
             web->token);
    req->set_cookie = cookie;
  }
  return best > 0;
}

/* ---- 3. the request handler ----------------------------------------------------------------------- */

static int serve_asset(lagscope__request *req) {
  const lagscope__asset *asset = lagscope__asset_find(req->route.asset);
  if (asset == NULL) return lagscope__reply_error(req, 404, "not_found", "no such file");
  lagscope__reply reply = {.status = 200, .content_type = asset->content_type,
                           .body = (const char *)asset->data, .length = asset->size};
  return lagscope__reply_send(req, &reply);
}

/* GET /?token=...: the cookie, and the same page without the token in the address bar. */
static int redirect_without_token(lagscope__request *req, const char *path) {
  lagscope__reply reply = {.status = 303, .location = path, .content_type = "text/plain"};
  return lagscope__reply_send(req, &reply);
}

static int dispatch(lagscope__request *req, const char *path) {
  switch (req->route.kind) {
    case LAGSCOPE__ROUTE_ASSET:
      return req->route.has_token ? redirect_without_token(req, path) : serve_asset(req);
    case LAGSCOPE__ROUTE_STATUS: return lagscope__api_status(req);
    case LAGSCOPE__ROUTE_METRICS: return lagscope__api_metrics(req);
    case LAGSCOPE__ROUTE_HANGS: return lagscope__api_hangs(req);
    case LAGSCOPE__ROUTE_HANG:
    case LAGSCOPE__ROUTE_HANG_SPEEDSCOPE:
    case LAGSCOPE__ROUTE_HANG_TRACE: return lagscope__api_hang(req);
    case LAGSCOPE__ROUTE_CAPTURE: return lagscope__api_capture(req);
    case LAGSCOPE__ROUTE_STREAM: return lagscope__stream_serve(req);
    case LAGSCOPE__ROUTE_NONE: break;
  }
  return lagscope__reply_error(req, 404, "not_found", "no such route");
}

/* No route takes a body: it is read and dropped, so that the connection can be kept; 0 when it
 * is over BODY_MAX (sent chunked, with no length to refuse it by). */
static int drain_body(struct mg_connection *conn) {
  char buf[1024];
  size_t total = 0;
  for (;;) {
    int n = mg_read(conn, buf, sizeof(buf));
    if (n <= 0) return 1;
    total += (size_t)n;
    if (total > BODY_MAX) return 0;
  }
}

static int handle_request(struct mg_connection *conn, void *data) {
  lagscope__web *web = data;
  const struct mg_request_info *info = mg_get_request_info(conn);
  atomic_fetch_add_explicit(&web->requests, 1, memory_order_relaxed);
  lagscope__request req = {.conn = conn, .web = web, .content_length = info->content_length};
  req.head_only = strcmp(info->request_method, "HEAD") == 0;
  const char *path = info->local_uri != NULL ? info->local_uri : "";

  if (atomic_load_explicit(&web->clients, memory_order_relaxed) > (int)web->config.server_max_clients) {
    atomic_fetch_add_explicit(&web->clients_rejected, 1, memory_order_relaxed);
    return lagscope__reply_error(&req, 503, "busy", "too many connections; try again");
  }
  lagscope__route_parse(info->request_method, path, info->query_string, &req.route);
  if (req.route.status == 413)
    return lagscope__reply_error(&req, 413, "too_large", req.route.error);
  char cookie[128];
  if (!authorize(&req, cookie, sizeof(cookie)))
    return lagscope__reply_error(&req, 401, "unauthorized",
                                 "open the viewer with the URL (and its token) that the app "
                                 "printed in its log or shows on its HUD");
  if (req.route.status != 0)
    return lagscope__reply_error(&req, req.route.status, error_kind(req.route.status),
                                 req.route.error);
  if (req.content_length > BODY_MAX || !drain_body(conn))
    return lagscope__reply_error(&req, 413, "too_large", "the request body is over 4 KiB");
  return dispatch(&req, path);
}

/* ---- 4. connections ------------------------------------------------------------------------------- */

static lagscope__web *web_of(const struct mg_connection *conn) {
  return mg_get_user_data(mg_get_context(conn));
}

static int connection_opened(const struct mg_connection *conn, void **data) {
  (void)data;
  atomic_fetch_add_explicit(&web_of(conn)->clients, 1, memory_order_relaxed);
  return 0;
}

static void connection_closing(const struct mg_connection *conn) {
  atomic_fetch_sub_explicit(&web_of(conn)->clients, 1, memory_order_relaxed);
}

/* civetweb's own refusals (a malformed request, headers over the limit, a request that timed
 * out) as JSON with the same headers as every other answer. Returns 0: handled. */
static int civetweb_error(struct mg_connection *conn, int status, const char *message) {
  (void)message; /* civetweb's text may quote the client's bytes: ours only */
  lagscope__request req = {.conn = conn, .web = web_of(conn)};
  const char *kind = status == 400 ? "bad_request" : status == 408 ? "timeout"
                   : status == 413 || status == 431 ? "too_large" : error_kind(status);
  lagscope__reply_error(&req, status, kind, "the server could not read this request");
  return 0;
}

/* civetweb's threads work for lagscope: never captured as the app's, and they take no signal. */
static void *thread_started(const struct mg_context *ctx, int thread_type) {
  (void)ctx;
  (void)thread_type;
  lagscope__thread_adopt();
  return NULL;
}

static void thread_ending(const struct mg_context *ctx, int thread_type, void *data) {
  (void)ctx;
  (void)thread_type;
  (void)data;
  lagscope__thread_disown();
}

/* civetweb's own messages (a client that timed out, a bad request line) would go to stderr:
 * they are the clients' business, not the app's. */
static int quiet(const struct mg_connection *conn, const char *message) {
  (void)conn;
  (void)message;
  return 1;
}

/* ---- 5. lifecycle --------------------------------------------------------------------------------- */

static int start_civetweb(lagscope__web *web, char *why, size_t why_size) {
  char ports[96], threads[16];
  snprintf(ports, sizeof(ports), "%s:%u", web->bind, (unsigned)web->config.server_port);
  snprintf(threads, sizeof(threads), "%u", web->config.server_max_clients + SPARE_THREADS);
  const char *options[] = {
      "listening_ports", ports,
      "num_threads", threads,
      "request_timeout_ms", REQUEST_TIMEOUT_MS,
      "keep_alive_timeout_ms", KEEP_ALIVE_MS,
      "enable_keep_alive", "yes",
      /* An answer is two writes (headers, body): without this the body waits ~40 ms for the
       * client's delayed ACK (bench_web: 1.4 k requests/s instead of tens of thousands). */
      "tcp_nodelay", "1",
      "max_request_size", HEADERS_MAX,
      "enable_directory_listing", "no",
      "access_control_allow_origin", "",
      "access_control_allow_methods", "",
      "access_control_allow_headers", "",
      "enable_auth_domain_check", "no",
      NULL};
  struct mg_callbacks callbacks;
  memset(&callbacks, 0, sizeof(callbacks));
  callbacks.init_connection = connection_opened;
  callbacks.connection_close = connection_closing;
  callbacks.log_message = quiet;
  callbacks.http_error = civetweb_error;
  callbacks.init_thread = thread_started;
  callbacks.exit_thread = thread_ending;
  struct mg_init_data init = {.callbacks = &callbacks, .user_data = web,
                              .configuration_options = options};
  struct mg_error_data error = {.text = why, .text_buffer_size = why_size};
  web->ctx = mg_start2(&init, &error);
  if (web->ctx == NULL) return LAGSCOPE_ESYS;
  struct mg_server_port bound[1];
  if (mg_get_server_ports(web->ctx, 1, bound) < 1) {
    lagscope__explain(why, why_size, "civetweb started but reports no port");
    return LAGSCOPE_ESYS;
  }
  web->port = (uint16_t)bound[0].port;
  /* Last: the handler's registration (under civetweb's lock) publishes what is above to the
   * worker threads; until then civetweb answers 404 by itself. */
  mg_set_request_handler(web->ctx, "/", handle_request, web);
  return LAGSCOPE_OK;
}

static void web_free(lagscope__web *web) {
  lagscope__stream_free(web->stream);
  for (uint32_t i = 0; i < LAGSCOPE__METRICS_WINDOW; i++) lagscope__dealloc(web->metrics[i]);
  lagscope__dealloc(web->metrics_latest);
  pthread_mutex_destroy(&web->metrics_lock);
  pthread_mutex_destroy(&web->capture_lock);
  lagscope__dealloc(web);
}

int lagscope__web_start(const lagscope__web_host *host, lagscope__web **out, char *why,
                        size_t why_size) {
  *out = NULL;
  lagscope__web *web = lagscope__alloc(sizeof(*web));
  if (web == NULL) return LAGSCOPE_ENOMEM;
  pthread_mutex_init(&web->metrics_lock, NULL);
  pthread_mutex_init(&web->capture_lock, NULL);
  web->config = *host->config;
  snprintf(web->bind, sizeof(web->bind), "%s",
           host->config->server_bind != NULL ? host->config->server_bind : "0.0.0.0");
  web->config.server_bind = web->bind;
  snprintf(web->report_dir, sizeof(web->report_dir), "%s", host->report_dir);
  snprintf(web->app_name, sizeof(web->app_name), "%s", host->app_name);
  for (char *p = web->app_name; *p != '\0'; p++) /* it goes into JSON as is */
    if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\') *p = '?';
  web->capture_now = host->capture_now;
  web->launch_wall_ms = lagscope__wall_ms();
  web->launch_ns = lagscope__now_ns();
  web->stream = lagscope__stream_new(host->config->server_max_stream_clients);
  int rc = web->stream != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
  if (rc == LAGSCOPE_OK)
    rc = lagscope__token_make(web->report_dir, web->token, web->previous_token, why, why_size);
  if (rc == LAGSCOPE_OK) {
    mg_init_library(0);
    rc = start_civetweb(web, why, why_size);
    if (rc != LAGSCOPE_OK) {
      if (web->ctx != NULL) mg_stop(web->ctx);
      mg_exit_library();
    }
  }
  if (rc != LAGSCOPE_OK) {
    web_free(web);
    return rc;
  }
  char address[64];
  lagscope__lan_address_pick(web->bind, address, sizeof(address)); /* address.c */
  snprintf(web->url, sizeof(web->url), "http://%s:%u/?token=%s", address, (unsigned)web->port,
           web->token);
  *out = web;
  return LAGSCOPE_OK;
}

void lagscope__web_on_event(const lagscope_event *event, void *data) {
  lagscope__web *web = data;
  if (event->type == LAGSCOPE_EVENT_HANG_BEGAN) {
    atomic_fetch_add(&web->hangs, 1);
    atomic_store(&web->hang_in_progress, 1);
  } else if (event->type == LAGSCOPE_EVENT_HANG_ENDED) {
    atomic_store(&web->hang_in_progress, 0);
  }
  char *json = lagscope_event_json(event);
  if (json == NULL) return;
  if (event->type == LAGSCOPE_EVENT_METRICS) lagscope__api_keep_metrics(web, json);
  lagscope__stream_publish(web->stream, lagscope_event_type_name(event->type), event->sequence,
                           json);
  lagscope_free(json);
}

/* civetweb's listening thread looks at its stop flag between waits of 2 s for a connection:
 * while mg_stop runs, a connection now and then makes it look at once. */
typedef struct stop_poke {
  lagscope__web *web;
  _Atomic int done;
} stop_poke;

static void poke_listener(void *arg) {
  stop_poke *poke = arg;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(poke->web->port)};
  const char *host = strcmp(poke->web->bind, "0.0.0.0") == 0 ? "127.0.0.1" : poke->web->bind;
  inet_pton(AF_INET, host, &to.sin_addr);
  while (!atomic_load(&poke->done)) {
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* no SOCK_CLOEXEC: Darwin has none */
    if (fd >= 0) {
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      connect(fd, (struct sockaddr *)&to, sizeof(to));
      close(fd);
    }
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

/* Stops civetweb (its threads joined); web->ctx is NULL after. */
static void stop_civetweb(lagscope__web *web) {
  if (web->ctx == NULL) return;
  lagscope__stream_close(web->stream); /* streams return, so that their threads can join */
  stop_poke poke = {.web = web};
  lagscope__thread *poker = NULL;
  lagscope__thread_start(&poker, "lagscope-stop", poke_listener, &poke);
  mg_stop(web->ctx);
  atomic_store(&poke.done, 1);
  if (poker != NULL) lagscope__thread_join(poker);
  web->ctx = NULL;
}

void lagscope__web_stop(lagscope__web *web) {
  if (web == NULL) return;
  stop_civetweb(web);
  mg_exit_library();
  web_free(web);
}

/* The listener again, on the port it had (so the URL stays) and with the token it had: iOS
 * closes a suspended app's listening sockets, and civetweb never reopens one. */
int lagscope__web_restart(lagscope__web *web, char *why, size_t why_size) {
  stop_civetweb(web);
  lagscope__stream_reopen(web->stream);
  uint16_t asked = web->config.server_port;
  web->config.server_port = web->port;
  int rc = start_civetweb(web, why, why_size);
  web->config.server_port = asked;
  if (rc != LAGSCOPE_OK && web->ctx != NULL) mg_stop(web->ctx);
  if (rc != LAGSCOPE_OK) web->ctx = NULL;
  return rc;
}

const char *lagscope__web_url(const lagscope__web *web) { return web->url; }
uint16_t lagscope__web_port(const lagscope__web *web) { return web->port; }
