/*
 * The embedded civetweb server: its port listens from lagscope's start, civetweb itself starts
 * at the first client (its workers are made all at once) and stops with lagscope; one request
 * handler for every path (there is no document root), access by the per-launch token, security
 * headers on every answer, and bounds on clients, streams, header and body sizes and request
 * time.
 *
 * Answers are made in reply.c, which api.c and stream.c use too.
 *
 * Contents
 *   1. access: the token from the query, a bearer header or the cookie
 *   2. request checks: framing, Host, Origin, the path's escapes
 *   3. the request handler: limits, access, route, dispatch
 *   4. connections: counted, bounded in all and per client address
 *   5. lifecycle: the port, civetweb at the first client, the URL, events, stop, restart
 */
#define _GNU_SOURCE
#include "cjson_calls.h"
#include "civetweb_calls.h"
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX 4096            /* a request body larger than this is refused with 413 */
#define HEADERS_MAX "16384"      /* civetweb's request buffer: request line and headers */
#define HEADERS_MAX_BYTES 16384   /* the same, as a number */
#define REQUEST_TIMEOUT_MS "10000" /* a request must arrive whole within this; writes too */
#define KEEP_ALIVE_MS "2000"     /* an idle keep-alive connection gives its thread back */
#define SPARE_THREADS 2          /* answer 503 to connections past the bound */
#define DEFER_ACCEPT_S 3600       /* a connection that sends nothing waits in the kernel */
#define PEER_SCAN_MAX 1024       /* connections looked at for the bound per address */
/* Over the bound at a request: the connections of a flooding address shut down a moment ago
 * are still counted until their workers close them; they are given this long to go. */
#define BUSY_SETTLE_NS (200u * 1000u * 1000u)
#define PORT_TRIES 10            /* the configured port and the next nine (8080: 8081-8089) */
#define CIVETWEB_OWN_PORT "127.0.0.1:0" /* what civetweb opens, until it is given ours */
#define HAND_OVER_WAIT_NS (5ull * 1000000000u) /* civetweb's listening thread takes our socket */
#define COOKIE_NAME "lagscope_token"
#define COOKIE_MAX_AGE "604800"  /* a week: a browser keeps viewing across launches */

/* ---- 1. access ------------------------------------------------------------------------------------ */

/* Which token the candidate is: 2 this launch's, 1 the previous launch's, 0 neither. */
static int token_kind(const lagscope__web *web, const char *candidate) {
  if (candidate == NULL || candidate[0] == '\0') return 0;
  if (lagscope__web_token_equal(candidate, web->token)) return 2;
  if (web->previous_token[0] != '\0' && lagscope__web_token_equal(candidate, web->previous_token))
    return 1;
  return 0;
}

/* The best of the three places a token may be; a previous launch's, in the cookie only, is
 * exchanged for a new cookie. */
static int authorize(lagscope__web_request *req, char *cookie, size_t cookie_size) {
  const lagscope__web *web = req->web;
  char from_cookie[LAGSCOPE__WEB_TOKEN_HEX + 8] = "";
  lagscope__web_cookie_find(mg_get_header(req->conn, "Cookie"), COOKIE_NAME, from_cookie,
                            sizeof(from_cookie));
  const char *bearer = mg_get_header(req->conn, "Authorization");
  if (bearer != NULL && strncasecmp(bearer, "Bearer ", 7) == 0)
    bearer += 7;
  else
    bearer = NULL;
  /* The previous launch's token only ever came in the cookie the viewer was given: there it
   * is exchanged for this launch's; as a query or bearer token it is refused. */
  int best = token_kind(web, req->route.has_token ? req->route.token : NULL) == 2 ? 2 : 0;
  if (token_kind(web, bearer) == 2) best = 2;
  int kind = token_kind(web, from_cookie);
  if (kind > best) best = kind;
  if (best == 1 || (best == 2 && req->route.has_token)) {
    snprintf(cookie, cookie_size,
             COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=" COOKIE_MAX_AGE,
             web->token);
    req->set_cookie = cookie;
  }
  return best > 0;
}

/* ---- 2. request checks ------------------------------------------------------------------------- */

/* The request's headers, framed without guessing (auth.c): a repeated Host or Origin, or two
 * ways to find the body's end, would let a proxy in front and this server read different
 * requests (request smuggling, a Host check passed by one Host and served by another). F */
static const char *framing_problem(const struct mg_request_info *info) {
  lagscope__web_header headers[sizeof(info->http_headers) / sizeof(info->http_headers[0])];
  int n = info->num_headers;
  if (n < 0) n = 0;
  if ((size_t)n > sizeof(headers) / sizeof(headers[0])) n = (int)(sizeof(headers) / sizeof(headers[0]));
  for (int i = 0; i < n; i++)
    headers[i] = (lagscope__web_header){info->http_headers[i].name, info->http_headers[i].value};
  return lagscope__web_framing_problem(headers, n);
}

/* An IP literal of this device: loopback, the bound address, or an interface's. F */
static int is_own_address(const lagscope__web *web, const char *host) {
  unsigned char want[16], have[16];
  int family = strchr(host, ':') != NULL ? AF_INET6 : AF_INET;
  if (inet_pton(family, host, want) != 1) return -1; /* not an IP literal */
  if (family == AF_INET && want[0] == 127) return 1;
  if (family == AF_INET6 && IN6_IS_ADDR_LOOPBACK((struct in6_addr *)(void *)want)) return 1;
  if (family == AF_INET && inet_pton(AF_INET, web->bind, have) == 1 && memcmp(want, have, 4) == 0)
    return 1;
  struct ifaddrs *list;
  if (getifaddrs(&list) != 0) return 0;
  int found = 0;
  for (struct ifaddrs *i = list; i != NULL && !found; i = i->ifa_next) {
    if (i->ifa_addr == NULL || i->ifa_addr->sa_family != family) continue;
    const void *a = family == AF_INET
                        ? (const void *)&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr
                        : (const void *)&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr;
    found = memcmp(a, want, family == AF_INET ? 4 : 16) == 0;
  }
  freeifaddrs(list);
  return found;
}

/* This device's names: "localhost", its host name, and that name in mDNS's ".local". F */
static int is_own_name(const char *host) {
  if (strcmp(host, "localhost") == 0) return 1;
  char name[256] = "";
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return 0;
  size_t n = strlen(name);
  if (strncasecmp(host, name, n) != 0) return 0;
  return host[n] == '\0' || strcasecmp(host + n, ".local") == 0;
}

/* A page on another site that a DNS name of its own points at this device (DNS rebinding)
 * sends that name as Host: only this device's addresses and names are served. No Host at
 * all (HTTP/1.0) is left to the token. F */
static int host_allowed(const lagscope__web *web, const char *header) {
  if (header == NULL) return 1;
  char host[256];
  if (!lagscope__web_host_of(header, host, sizeof(host))) return 0;
  int own = is_own_address(web, host);
  return own >= 0 ? own : is_own_name(host);
}

/* The checks made before access: 0, or the status that refuses the request. F */
static int request_refusal(lagscope__web_request *req, const struct mg_request_info *info,
                           const char **message) {
  const char *framing = framing_problem(info);
  if (framing != NULL) {
    *message = framing;
    req->close = 1;
    return 400;
  }
  const char *host = mg_get_header(req->conn, "Host");
  if (!host_allowed(req->web, host)) {
    *message = "the Host header names neither an address nor a name of this device";
    return 403;
  }
  /* A POST from a page of another origin (a form, a fetch) must not reach the capture route,
   * token or not: the viewer's own page sends its own origin or none. */
  const char *origin = mg_get_header(req->conn, "Origin");
  if (strcmp(info->request_method, "POST") == 0 && origin != NULL &&
      !lagscope__web_origin_is_host(origin, host)) {
    *message = "a request from another site's page";
    return 403;
  }
  return 0;
}

/* ---- 3. the request handler ----------------------------------------------------------------------- */

static int serve_asset(lagscope__web_request *req) {
  const lagscope__web_asset *asset = lagscope__web_asset_find(req->route.asset);
  if (asset == NULL) return lagscope__web_reply_error(req, 404, "not_found", "no such file");
  lagscope__web_reply reply = {.status = 200, .content_type = asset->content_type,
                               .body = (const char *)asset->data, .length = asset->size};
  return lagscope__web_reply_send(req, &reply);
}

/* GET /?token=...: the cookie, and the same page without the token in the address bar. */
static int redirect_without_token(lagscope__web_request *req, const char *path) {
  lagscope__web_reply reply = {.status = 303, .location = path, .content_type = "text/plain"};
  return lagscope__web_reply_send(req, &reply);
}

static int dispatch(lagscope__web_request *req, const char *path) {
  switch (req->route.kind) {
    case LAGSCOPE__WEB_ROUTE_ASSET:
      return req->route.has_token ? redirect_without_token(req, path) : serve_asset(req);
    case LAGSCOPE__WEB_ROUTE_STATUS: return lagscope__web_api_status(req);
    case LAGSCOPE__WEB_ROUTE_METRICS: return lagscope__web_api_metrics(req);
    case LAGSCOPE__WEB_ROUTE_HANGS: return lagscope__web_api_hangs(req);
    case LAGSCOPE__WEB_ROUTE_HANG:
    case LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE:
    case LAGSCOPE__WEB_ROUTE_HANG_TRACE: return lagscope__web_api_hang(req);
    case LAGSCOPE__WEB_ROUTE_CAPTURE: return lagscope__web_api_capture(req);
    case LAGSCOPE__WEB_ROUTE_STREAM: return lagscope__web_stream_serve(req);
    case LAGSCOPE__WEB_ROUTE_HITCHES: return lagscope__web_api_hitches(req);
    case LAGSCOPE__WEB_ROUTE_SIGNATURES: return lagscope__web_api_signatures(req);
    case LAGSCOPE__WEB_ROUTE_OPENMETRICS:
      return lagscope__web_api_openmetrics(req, mg_get_header(req->conn, "Accept"));
    case LAGSCOPE__WEB_ROUTE_NONE: break;
  }
  return lagscope__web_reply_error(req, 404, "not_found", "no such route");
}

/* No route takes a body: one with a Content-Length is read and dropped, so that the
 * connection can be kept. 0 when it was read; 400 when civetweb could not read it (cut
 * short). */
static int drain_body(struct mg_connection *conn) {
  char buf[1024];
  size_t total = 0;
  for (;;) {
    int n = mg_read(conn, buf, sizeof(buf));
    if (n == 0) return 0;
    if (n < 0) return 400;
    total += (size_t)n;
    if (total > BODY_MAX) return 413;
  }
}

static void bound_peers(lagscope__web *web);

static int over_bound(const lagscope__web *web) {
  return atomic_load_explicit(&web->clients, memory_order_relaxed) >
         (int)web->config.server_max_clients;
}

/* More connections than the bound, even once those of an address past its share have been
 * shut down and closed: a burst of a flooding address's connections, each shut down as it
 * comes, would otherwise count against a client of another address for a moment. One scan
 * (connections that open later are scanned as they open), then the count is watched. */
static int too_many_clients(lagscope__web *web) {
  if (!over_bound(web)) return 0;
  bound_peers(web);
  uint64_t until = lagscope__now_ns() + BUSY_SETTLE_NS;
  while (over_bound(web)) {
    if (lagscope__now_ns() >= until) return 1;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  return 0;
}

/* After a request whose framing was refused, civetweb must not read what follows on the
 * connection as another request: it could be the refused one's body. civetweb has no call to
 * close a server connection, and keeps it alive unless the request's own Connection header says
 * otherwise (its should_keep_alive): that header is made "close" (request_info is civetweb's
 * writable memory, handed out const). The answer says "Connection: close" too (reply.c). */
static void close_after(const struct mg_request_info *info) {
  struct mg_request_info *writable = (struct mg_request_info *)info;
  int max = (int)(sizeof(writable->http_headers) / sizeof(writable->http_headers[0]));
  for (int i = 0; i < writable->num_headers && i < max; i++)
    if (strcasecmp(writable->http_headers[i].name, "Connection") == 0) {
      writable->http_headers[i].value = "close";
      return;
    }
  if (writable->num_headers >= 0 && writable->num_headers < max) {
    writable->http_headers[writable->num_headers].name = "Connection";
    writable->http_headers[writable->num_headers].value = "close";
    writable->num_headers++;
  }
}

/* The request's connection stops reading (its answer is sent): after the handler civetweb
 * reads and drops what is left of the body, and for a chunk size of 7fffffffffffffff it would
 * wait the whole request timeout for bytes that never come, its worker held. civetweb hands
 * out no socket: it is found among the viewer's connections (as the port finds them: Linux
 * only; elsewhere the worker waits) by the client's address and port, and shut down for
 * reading through a duplicate checked again, as in shut_peers_past. A */
static void stop_reading(lagscope__web *web, const struct mg_request_info *info) {
  struct in_addr client;
  if (inet_pton(AF_INET, info->remote_addr, &client) != 1) return;
  lagscope__peer_socket *found = lagscope__alloc(PEER_SCAN_MAX * sizeof(*found));
  size_t n = found != NULL ? lagscope__net_peer_sockets(web->port, found, PEER_SCAN_MAX) : 0;
  for (size_t i = 0; i < n; i++) {
    if (memcmp(found[i].address, &client, sizeof(found[i].address)) != 0) continue;
    int own = fcntl(found[i].fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) continue;
    struct sockaddr_in peer;
    socklen_t len = sizeof(peer);
    lagscope__peer_socket again;
    if (lagscope__net_peer_socket(own, web->port, &again) &&
        getpeername(own, (struct sockaddr *)&peer, &len) == 0 && peer.sin_family == AF_INET &&
        peer.sin_addr.s_addr == client.s_addr && ntohs(peer.sin_port) == info->remote_port)
      shutdown(own, SHUT_RD);
    close(own);
  }
  lagscope__dealloc(found);
}

static int handle_request(struct mg_connection *conn, void *data) {
  lagscope__web *web = data;
  const struct mg_request_info *info = mg_get_request_info(conn);
  atomic_fetch_add_explicit(&web->requests, 1, memory_order_relaxed);
  lagscope__web_request req = {.conn = conn, .web = web, .content_length = info->content_length};
  req.head_only = strcmp(info->request_method, "HEAD") == 0;
  const char *path = info->local_uri != NULL ? info->local_uri : "";

  if (too_many_clients(web)) {
    atomic_fetch_add_explicit(&web->clients_rejected, 1, memory_order_relaxed);
    return lagscope__web_reply_error(&req, 503, "busy", "too many connections; try again");
  }
  const char *message = NULL;
  int refused = request_refusal(&req, info, &message);
  if (refused != 0) {
    if (req.close) close_after(info);
    return lagscope__web_reply_error(&req, refused, lagscope__web_reply_kind(refused), message);
  }
  /* civetweb's decoding is off (it would cut "/api/v1/status%00" to "/api/v1/status"). */
  char decoded[HEADERS_MAX_BYTES + 1]; /* the request line fits in the headers' bound */
  int path_ok = lagscope__web_path_decode(path, decoded, sizeof(decoded));
  if (!path_ok) decoded[0] = '\0'; /* no route: 404 once access is proven */
  lagscope__web_route_parse(info->request_method, decoded, info->query_string, &req.route);
  if (req.route.status == 413)
    return lagscope__web_reply_error(&req, 413, "too_large", req.route.error);
  char cookie[128];
  if (!authorize(&req, cookie, sizeof(cookie)))
    return lagscope__web_reply_error(&req, 401, "unauthorized",
                                     "open the viewer with the URL (and its token) that the app "
                                     "printed in its log or shows on its HUD");
  if (req.route.status != 0)
    return lagscope__web_reply_error(&req, req.route.status,
                                     lagscope__web_reply_kind(req.route.status), req.route.error);
  /* A chunked body's size is known only as civetweb reads it, inside mg_read, which then waits
   * the whole request timeout for the bytes a chunk size promised (7fffffffffffffff: a worker
   * held 10 s): it is refused unread, and the connection closed (what follows is the body). */
  if (mg_get_header(conn, "Transfer-Encoding") != NULL) {
    req.close = 1;
    close_after(info);
    int rc = lagscope__web_reply_error(&req, 413, "too_large",
                                       "a chunked request body is not read: no route takes a "
                                       "body (one of at most 4 KiB with a Content-Length is "
                                       "dropped)");
    stop_reading(web, info);
    return rc;
  }
  int body = req.content_length > BODY_MAX ? 413 : drain_body(conn);
  if (body == 413)
    return lagscope__web_reply_error(&req, 413, "too_large", "the request body is over 4 KiB");
  req.close = body != 0;
  if (req.close) close_after(info);
  if (body != 0)
    return lagscope__web_reply_error(&req, 400, "bad_request",
                                     "the request body is malformed (a chunk size that is not "
                                     "hex digits) or cut short");
  return dispatch(&req, decoded);
}

/* ---- 4. connections ------------------------------------------------------------------------------- */

static lagscope__web *web_of(const struct mg_connection *conn) {
  return mg_get_user_data(mg_get_context(conn));
}

/* Connections one client address may hold: half the bound in all, and at least what one
 * browser needs (every stream and a request). F */
static uint32_t peer_bound(const lagscope__web *web) {
  uint32_t half = web->config.server_max_clients / 2;
  uint32_t browser = web->config.server_max_stream_clients + 1;
  return half > browser ? half : browser;
}

/* Every connection of an address past bound is shut down, so that the worker reading it gets
 * its end at once instead of waiting out a client that sends a byte now and then (bound 0:
 * every connection, at stop).
 * civetweb tells a callback neither the socket nor (before the request) the peer: the
 * process's sockets on the viewer's port are the truth, as the port finds them (Linux:
 * /proc/self/fd; Darwin finds none, and has no bound per address). A */
static void shut_peers_past(lagscope__web *web, uint32_t bound) {
  lagscope__peer_socket *found = lagscope__alloc(PEER_SCAN_MAX * sizeof(*found));
  size_t n = found != NULL ? lagscope__net_peer_sockets(web->port, found, PEER_SCAN_MAX) : 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t same = 0; /* connections of this address met before this one */
    for (size_t j = 0; j < i; j++)
      same += memcmp(found[j].address, found[i].address, sizeof(found[i].address)) == 0;
    if (same < bound) continue;
    /* The number may have been closed and reused by the app since it was looked at: a
     * duplicate holds the socket itself, which is checked again before it is shut down. */
    int own = fcntl(found[i].fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) continue;
    lagscope__peer_socket again;
    if (lagscope__net_peer_socket(own, web->port, &again) &&
        memcmp(again.address, found[i].address, sizeof(again.address)) == 0) {
      shutdown(own, SHUT_RDWR);
      atomic_fetch_add_explicit(&web->clients_rejected, 1, memory_order_relaxed);
    }
    close(own);
  }
  lagscope__dealloc(found);
}

/* One worker scans at a time; a connection that opens during a scan, which that scan may have
 * listed before its socket existed, has it scan again once done. */
static void bound_peers(lagscope__web *web) {
  static pthread_mutex_t scanning = PTHREAD_MUTEX_INITIALIZER;
  static atomic_int wanted;
  atomic_store(&wanted, 1);
  do {
    if (pthread_mutex_trylock(&scanning) != 0) return; /* the scanning worker sees wanted */
    while (atomic_exchange(&wanted, 0)) shut_peers_past(web, peer_bound(web));
    pthread_mutex_unlock(&scanning);
  } while (atomic_load(&wanted)); /* asked for between the last look and the unlock */
}

static int connection_opened(const struct mg_connection *conn, void **data) {
  (void)data;
  lagscope__web *web = web_of(conn);
  int open = atomic_fetch_add_explicit(&web->clients, 1, memory_order_relaxed) + 1;
  /* With no more connections in all than one address may hold, none can be over: no look. */
  if ((uint32_t)open > peer_bound(web)) bound_peers(web);
  return 0;
}

static void connection_closing(const struct mg_connection *conn) {
  atomic_fetch_sub_explicit(&web_of(conn)->clients, 1, memory_order_relaxed);
}

/* civetweb's own refusals (a malformed request, headers over the limit, a request that timed
 * out) as JSON with the same headers as every other answer. Returns 0: handled. */
static int civetweb_error(struct mg_connection *conn, int status, const char *message) {
  (void)message; /* civetweb's text may quote the client's bytes: ours only */
  lagscope__web_request req = {.conn = conn, .web = web_of(conn)};
  /* civetweb answers 411 to a Content-Length it cannot read as a number (-1, "abc"): a
   * request read no one way, 400 as every other (docs/viewer-api.md, "Request checks"). */
  if (status == 411) status = 400, req.close = 1;
  const char *kind = status == 400 ? "bad_request" : status == 408 ? "timeout"
                   : status == 413 || status == 431 ? "too_large"
                   : lagscope__web_reply_kind(status);
  lagscope__web_reply_error(&req, status, kind, "the server could not read this request");
  return 0;
}

/* civetweb's listening thread waits here, before its first wait for a connection, until
 * start_civetweb has registered the handler and put the viewer's socket in place of civetweb's
 * own: a client already waiting is accepted at once, and must not meet civetweb's 404. */
static void hold_listener(lagscope__web *web) {
  lagscope__wakeup_wait_until(web->listener_go, lagscope__now_ns() + HAND_OVER_WAIT_NS);
}

/* civetweb's threads work for lagscope: never captured as the app's, and they take no signal.
 * Type 0 is its listening thread. */
static void *thread_started(const struct mg_context *ctx, int thread_type) {
  lagscope__thread_adopt();
  if (thread_type == 0) hold_listener(mg_get_user_data(ctx));
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

/* A connection that sends nothing is not handed to civetweb (Linux: TCP_DEFER_ACCEPT): it
 * takes no worker, however many there are (civetweb has a worker per connection, and a
 * connection that is silent would hold its worker for the whole request timeout), and it does
 * not start civetweb. The kernel keeps it for DEFER_ACCEPT_S, then hands it over if the client
 * still answers: a short period would only postpone the attack (with 10 s, 60 idle
 * connections took every worker after ~15 s). F */
static void defer_accept(lagscope__web *web) {
  lagscope__net_defer_accept(web->listener.fd, DEFER_ACCEPT_S);
}

/* A listening socket of ours on address:port (SO_REUSEADDR, as civetweb's own would have, so
 * that a port in TIME_WAIT counts as free; close-on-exec): the fd, or -1 with *error. F */
static int listen_on(const char *address, unsigned port, int *error) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  *error = EINVAL;
  if (inet_pton(AF_INET, address, &a.sin_addr) != 1) return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0); /* no SOCK_CLOEXEC: Darwin has none */
  if (fd < 0) return *error = errno, -1;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, SOMAXCONN) == 0) return fd;
  *error = errno;
  close(fd);
  return -1;
}

/* The viewer's socket, listening from now on: on the configured port, or when another program
 * has it on the first free of the next ones (two instrumented apps on one machine both get a
 * viewer); 0: the OS picks. Says which port was taken and why, or why none could be. F */
static int open_listener(lagscope__web *web, char *why, size_t why_size) {
  unsigned first = web->config.server_port, last = first == 0 ? 0 : first + PORT_TRIES - 1;
  if (last > 65535) last = 65535;
  for (unsigned port = first; port <= last; port++) {
    int error = 0, fd = listen_on(web->bind, port, &error);
    if (fd >= 0) {
      struct sockaddr_in a;
      socklen_t n = sizeof(a);
      getsockname(fd, (struct sockaddr *)&a, &n);
      lagscope__owned_fd_take(&web->listener, fd);
      web->port = ntohs(a.sin_port);
      if (port != first)
        lagscope__log("viewer: port %u on %s is in use (EADDRINUSE): using port %u", first,
                      web->bind, port);
      defer_accept(web);
      return LAGSCOPE_OK;
    }
    if (error != EADDRINUSE) {
      lagscope__explain(why, why_size, "cannot listen on %s port %u: %s (errno %d)", web->bind,
                        port, strerror(error), error);
      return LAGSCOPE_ESYS;
    }
  }
  lagscope__explain(why, why_size, "ports %u to %u on %s are all in use (EADDRINUSE)", first,
                    last, web->bind);
  return LAGSCOPE_ESYS;
}

/* The fd number civetweb's listening thread polls becomes a second descriptor of the viewer's
 * socket (civetweb 1.15 takes no socket it did not open): its accepts then take from the
 * viewer's port, and whoever connected before civetweb was up is served. 0 or -1. F */
static int hand_over_listener(lagscope__web *web, lagscope__owned_fd *listener) {
  struct mg_server_port own;
  uint32_t loopback = htonl(INADDR_LOOPBACK); /* civetweb's own: CIVETWEB_OWN_PORT */
  int fd = mg_get_server_ports(web->ctx, 1, &own) == 1
               ? lagscope__net_listening_fd(loopback, htons((uint16_t)own.port)) : -1;
  int ours = lagscope__owned_fd_get(listener);
  if (fd < 0 || ours < 0 || fd == ours || lagscope__net_dup_onto(ours, fd) != 0) return -1;
  lagscope__owned_fd_close(listener); /* the socket is civetweb's now */
  return 0;
}

/* civetweb, listening on a loopback port of its own until its listening thread, held at its
 * start, is given the viewer's socket (listener) in that port's place. F */
static int start_civetweb(lagscope__web *web, lagscope__owned_fd *listener, char *why,
                          size_t why_size) {
  char threads[16];
  snprintf(threads, sizeof(threads), "%u", web->config.server_max_clients + SPARE_THREADS);
  const char *options[] = {
      "listening_ports", CIVETWEB_OWN_PORT,
      "num_threads", threads,
      "request_timeout_ms", REQUEST_TIMEOUT_MS,
      "keep_alive_timeout_ms", KEEP_ALIVE_MS,
      "enable_keep_alive", "yes",
      /* An answer is two writes (headers, body): without this the body waits ~40 ms for the
       * client's delayed ACK (bench_web: 1.4 k requests/s instead of tens of thousands). */
      "tcp_nodelay", "1",
      "max_request_size", HEADERS_MAX,
      "decode_url", "no", /* the handler decodes, and refuses an encoded NUL */
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
  /* Here, not at lagscope_start: not a page of civetweb or cJSON (the API's) until a client. */
  if (lagscope__civetweb_load(why, why_size) != LAGSCOPE_OK ||
      lagscope__cjson_load(why, why_size) != LAGSCOPE_OK)
    return LAGSCOPE_ESYS;
  mg_init_library(0);
  web->ctx = mg_start2(&init, &error);
  if (web->ctx == NULL) {
    mg_exit_library();
    char civetweb_said[160];
    snprintf(civetweb_said, sizeof(civetweb_said), "%.*s", (int)sizeof(civetweb_said) - 1, why);
    lagscope__explain(why, why_size, "civetweb did not start: %s",
                      civetweb_said[0] != '\0' ? civetweb_said : "no reason given");
    return LAGSCOPE_ESYS;
  }
  /* The handler's registration (under civetweb's lock) publishes what is above to the worker
   * threads; before it civetweb would answer 404 by itself. */
  mg_set_request_handler(web->ctx, "/", handle_request, web);
  int handed = hand_over_listener(web, listener);
  lagscope__wakeup_post(web->listener_go); /* whether or not: mg_stop needs it going */
  if (handed == 0) return LAGSCOPE_OK;
  lagscope__explain(why, why_size, "civetweb could not be given the viewer's socket on port %u",
                    (unsigned)web->port);
  mg_stop(web->ctx);
  mg_exit_library();
  web->ctx = NULL;
  return LAGSCOPE_ESYS;
}

/* The waiter's wake pipe: close-on-exec, and neither end ever blocks. 0, or -1 with errno. F */
static int open_wake_pipe(lagscope__web *web) {
  int ends[2];
  if (pipe(ends) != 0) return -1;
  for (int i = 0; i < 2; i++) {
    fcntl(ends[i], F_SETFD, FD_CLOEXEC);
    fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK);
  }
  lagscope__owned_fd_take(&web->wake_read, ends[0]);
  lagscope__owned_fd_take(&web->wake_write, ends[1]);
  return 0;
}

/* The viewer's socket again, on the port it has (its URL stays). Writes the listener alone:
 * the port and the config are read by other threads. 0, or ESYS with why. F */
static int listen_again(lagscope__web *web, char *why, size_t why_size) {
  int error = 0, fd = listen_on(web->bind, web->port, &error);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot listen on %s port %u again: %s", web->bind,
                      (unsigned)web->port, strerror(error));
    return LAGSCOPE_ESYS;
  }
  lagscope__owned_fd_take(&web->listener, fd);
  defer_accept(web);
  return LAGSCOPE_OK;
}

/* The app closed the waiter's socket or pipe (a program that closes every descriptor at
 * start), or opened its own files on their numbers: they are never touched again (a byte
 * written to the pipe's number went into the app's file), and the viewer listens anew on its
 * port, said as an error event. 0, or -1 (said) when it could not. F */
static int waiter_renew(lagscope__web *web) {
  int listener = web->listener.fd, wake = web->wake_read.fd;
  lagscope__owned_fd_close(&web->listener);
  lagscope__owned_fd_close(&web->wake_read);
  lagscope__owned_fd_close(&web->wake_write);
  char why[256] = "";
  int rc = listen_again(web, why, sizeof(why));
  if (rc == LAGSCOPE_OK && open_wake_pipe(web) != 0) {
    lagscope__owned_fd_close(&web->listener);
    rc = LAGSCOPE_ESYS;
    lagscope__explain(why, sizeof(why), "no pipe: %s", strerror(errno));
  }
  if (rc == LAGSCOPE_OK)
    lagscope__publish_error(LAGSCOPE_ESYS, "viewer: the app closed or reused its descriptors "
                            "(socket %d, pipe %d): listening again on port %u", listener, wake,
                            (unsigned)web->port);
  else
    lagscope__publish_error(rc, "viewer stopped: the app closed its descriptors (socket %d, "
                            "pipe %d) and it could not listen again: %s", listener, wake, why);
  return rc == LAGSCOPE_OK ? 0 : -1;
}

static void stop_civetweb(lagscope__web *web);

/* Until a client has sent something (with TCP_DEFER_ACCEPT, not merely connected): 1 then, 0
 * when told to stop (a byte on the wake pipe, or the flag within a second) or when the
 * socket is lost for good. */
static int await_first_client(lagscope__web *web) {
  for (;;) {
    struct pollfd fds[2] = {{.fd = web->listener.fd, .events = POLLIN},
                            {.fd = web->wake_read.fd, .events = POLLIN}};
    int n = poll(fds, 2, 1000);
    if (atomic_load(&web->waiter_stop)) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (!lagscope__owned_fd_is_ours(&web->listener) || !lagscope__owned_fd_is_ours(&web->wake_read) ||
        !lagscope__owned_fd_is_ours(&web->wake_write)) {
      if (waiter_renew(web) != 0) return 0;
      continue;
    }
    if (n < 0 || fds[1].revents != 0) return 0;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return 0; /* closed under us (iOS) */
    if (fds[0].revents & POLLIN) return 1;
  }
}

/* From the first client on, this thread and civetweb's, which it starts, hold their
 * descriptors in a table of their own (Linux): the app may close or reuse any number of its
 * own table, lagscope's among them (a daemon, a test harness), and never reach the viewer's
 * socket or its connections, nor they the app's. The new table holds the socket alone,
 * checked again there (the app may have taken its number in the moment before). 1 when apart; 0 when sharing the app's table (Darwin, said in the
 * guide; a kernel that refuses, said here), the checks before each use then all there is.
 * -1, said in why, when the socket was lost in that moment. F */
static int keep_apart(lagscope__owned_fd *listener, char *why, size_t why_size) {
  int keep[1] = {listener->fd};
  int rc = lagscope__thread_private_fds(keep, 1);
  if (rc == LAGSCOPE_ENOTSUP) return 0;
  if (rc != LAGSCOPE_OK) {
    lagscope__publish_error(rc, "viewer: no descriptor table of its own (%s): an app that closes "
                            "descriptors it did not open can cut the viewer off", strerror(errno));
    return 0;
  }
  if (lagscope__owned_fd_is_ours(listener)) return 1;
  listener->fd = -1;
  lagscope__explain(why, why_size, "the app closed or reused the viewer's socket as its first "
                    "client came");
  return -1;
}

/* civetweb serving until the viewer is told to stop (posted: no descriptor, which the app
 * could have closed in its table; the flag too), then stopped from here: in the table its
 * threads share, where the stop's poke finds their connections. */
static void serve_until_stopped(lagscope__web *web) {
  while (!atomic_load(&web->waiter_stop))
    lagscope__wakeup_wait_until(web->serving_stop, lagscope__now_ns() + 1000000000ull);
  stop_civetweb(web);
}

/* The viewer's own thread: waits for the first client, then starts civetweb and stays until
 * the viewer stops. civetweb starts at the first client, not with lagscope, because its
 * workers are made all at once (server_max_clients + 2 threads, a stack and a malloc arena
 * each: ~0.5 MiB) and an app nobody is viewing should not pay them. */
static void wait_for_first_client(void *arg) {
  lagscope__web *web = arg;
  if (!await_first_client(web)) return;
  /* A copy: in a table of its own it names this thread's descriptor, while web->listener stays
   * the app table's, closed (checked) at stop, as the wake pipe is. */
  lagscope__owned_fd listener = web->listener;
  char why[256] = "";
  int apart = keep_apart(&listener, why, sizeof(why));
  int rc = apart < 0 ? LAGSCOPE_ESYS : start_civetweb(web, &listener, why, sizeof(why));
  if (rc == LAGSCOPE_OK) {
    serve_until_stopped(web);
    return; /* a table of its own goes with its last thread */
  }
  /* Refused at once, not left in the backlog: shut down, since the app's table holds the socket
   * too when this thread has its own. */
  int fd = lagscope__owned_fd_get(&listener);
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  if (!apart) lagscope__owned_fd_close(&listener);
  lagscope__publish_error(rc, "viewer not started: %s", why);
}

/* The waiter started on the listening socket, or why not. F */
static int start_waiting(lagscope__web *web, char *why, size_t why_size) {
  int rc = lagscope__thread_start(&web->waiter, "lagscope-viewer", wait_for_first_client, web);
  if (rc != LAGSCOPE_OK)
    lagscope__explain(why, why_size, "no thread for the viewer: %s", lagscope_strerror(rc));
  return rc;
}

/* The waiter stopped and joined, its wake pipe emptied (a stop may come after it returned). */
static void stop_waiting(lagscope__web *web) {
  if (web->waiter == NULL) return;
  atomic_store(&web->waiter_stop, 1);
  lagscope__wakeup_post(web->serving_stop);
  char byte = 1;
  int wake = lagscope__owned_fd_get(&web->wake_write); /* never the app's file */
  ssize_t written = wake >= 0 ? write(wake, &byte, 1) : -1;
  (void)written; /* a full pipe wakes it as well; without one it looks within a second */
  lagscope__thread_join(web->waiter);
  web->waiter = NULL;
  atomic_store(&web->waiter_stop, 0);
  int drain = lagscope__owned_fd_get(&web->wake_read);
  while (drain >= 0 && read(drain, &byte, 1) == 1) {
  }
}

static void web_free(lagscope__web *web) {
  lagscope__web_stream_free(web->stream);
  for (uint32_t i = 0; web->hitches != NULL && i < web->config.hitch_keep; i++)
    lagscope__dealloc(web->hitches[i]);
  lagscope__dealloc(web->hitches);
  lagscope__dealloc(web->metrics_latest);
  pthread_mutex_destroy(&web->metrics_lock);
  pthread_mutex_destroy(&web->capture_lock);
  lagscope__owned_fd_close(&web->listener);
  lagscope__owned_fd_close(&web->wake_read);
  lagscope__owned_fd_close(&web->wake_write);
  lagscope__wakeup_free(web->listener_go);
  lagscope__wakeup_free(web->serving_stop);
  lagscope__dealloc(web);
}

/* The viewer's URL for its port and token, on the LAN address the bind gives (address.c). */
static void make_url(lagscope__web *web) {
  char address[64];
  lagscope__web_lan_address_pick(web->bind, address, sizeof(address));
  snprintf(web->url, sizeof(web->url), "http://%s:%u/?token=%s", address, (unsigned)web->port,
           web->token);
}

/* The name goes as it is into JSON (the status, the stream's hello) and into a metrics label,
 * which must be UTF-8: control bytes, quotes, backslashes and bytes that are not UTF-8 (a
 * name that is not, a character cut at the bound of web->app_name) become '?'. F */
static void clean_app_name(char *name) {
  for (unsigned char *p = (unsigned char *)name; *p != '\0';) {
    size_t n = lagscope__utf8_sequence(p);
    if (n == 0 || *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') *p = '?', n = 1;
    p += n;
  }
}

int lagscope__web_start(const lagscope__web_host *host, lagscope__web **out, char *why,
                        size_t why_size) {
  *out = NULL;
  lagscope__web *web = lagscope__alloc(sizeof(*web));
  if (web == NULL) return LAGSCOPE_ENOMEM;
  pthread_mutex_init(&web->metrics_lock, NULL);
  pthread_mutex_init(&web->capture_lock, NULL);
  web->listener = web->wake_read = web->wake_write = LAGSCOPE__OWNED_FD_NONE;
  web->config = *host->config;
  snprintf(web->bind, sizeof(web->bind), "%s",
           host->config->server_bind != NULL ? host->config->server_bind : "0.0.0.0");
  web->config.server_bind = web->bind;
  snprintf(web->report_dir, sizeof(web->report_dir), "%s", host->report_dir);
  snprintf(web->app_name, sizeof(web->app_name), "%s", host->app_name);
  clean_app_name(web->app_name);
  web->capture_now = host->capture_now;
  web->launch_wall_ms = lagscope__wall_ms();
  web->launch_ns = lagscope__now_ns();
  web->stream = lagscope__web_stream_new(host->config->server_max_stream_clients);
  web->hitches = lagscope__alloc(sizeof(char *) * web->config.hitch_keep);
  web->listener_go = lagscope__wakeup_new();
  web->serving_stop = lagscope__wakeup_new();
  int rc = web->stream != NULL && web->hitches != NULL && web->listener_go != NULL &&
               web->serving_stop != NULL
               ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
  if (rc == LAGSCOPE_OK && open_wake_pipe(web) != 0) {
    lagscope__explain(why, why_size, "no pipe for the viewer: %s", strerror(errno));
    rc = LAGSCOPE_ESYS;
  }
  if (rc == LAGSCOPE_OK)
    rc = lagscope__web_token_make(web->report_dir, web->token, web->previous_token, why, why_size);
  if (rc == LAGSCOPE_OK) rc = open_listener(web, why, why_size);
  if (rc == LAGSCOPE_OK) rc = start_waiting(web, why, why_size);
  if (rc != LAGSCOPE_OK) {
    web_free(web);
    return rc;
  }
  make_url(web);
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
  if (event->type == LAGSCOPE_EVENT_HANG_ENDED || event->type == LAGSCOPE_EVENT_HITCH ||
      event->type == LAGSCOPE_EVENT_METRICS) {
    pthread_mutex_lock(&web->metrics_lock);
    lagscope__web_openmetrics_count(&web->openmetrics, event);
    pthread_mutex_unlock(&web->metrics_lock);
  }
  char *json = lagscope__event_text(event);
  if (json == NULL) return;
  if (event->type == LAGSCOPE_EVENT_HITCH) lagscope__web_api_keep_hitch(web, json);
  lagscope__web_stream_publish(web->stream, lagscope_event_type_name(event->type), event->sequence,
                               json);
  if (event->type == LAGSCOPE_EVENT_METRICS && event->payload.metrics != NULL)
    lagscope__web_api_keep_metrics(web, event, json); /* takes json */
  else
    lagscope__dealloc(json);
}

/* While mg_stop runs: civetweb's listening thread looks at its stop flag between waits of 2 s
 * for a connection, and a worker between waits of 2 s on its client's socket (a client that
 * sends nothing, or reads nothing of a long answer). A connection now and then makes the
 * listener look at once, and every client's connection is shut down, so that each worker's
 * wait ends at once: lagscope_stop returns in milliseconds, not seconds. */
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
    shut_peers_past(poke->web, 0);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

/* Stops civetweb (its threads joined); web->ctx is NULL after. */
static void stop_civetweb(lagscope__web *web) {
  if (web->ctx == NULL) return;
  lagscope__web_stream_close(web->stream); /* streams return, so that their threads can join */
  stop_poke poke = {.web = web};
  lagscope__thread *poker = NULL;
  lagscope__thread_start(&poker, "lagscope-stop", poke_listener, &poke);
  mg_stop(web->ctx);
  atomic_store(&poke.done, 1);
  if (poker != NULL) lagscope__thread_join(poker);
  mg_exit_library();
  web->ctx = NULL;
}

void lagscope__web_stop(lagscope__web *web) {
  if (web == NULL) return;
  stop_waiting(web);
  stop_civetweb(web);
  web_free(web);
}

/* The listener again, on the port it had (so the URL stays) and with the token it had: iOS
 * closes a suspended app's listening sockets, and civetweb never reopens one. civetweb starts
 * again at the next client. */
int lagscope__web_restart(lagscope__web *web, char *why, size_t why_size) {
  stop_waiting(web);
  stop_civetweb(web);
  lagscope__owned_fd_close(&web->listener);
  lagscope__web_stream_reopen(web->stream);
  uint16_t asked = web->config.server_port, before = web->port;
  web->config.server_port = web->port;
  int rc = open_listener(web, why, why_size);
  web->config.server_port = asked;
  if (rc == LAGSCOPE_OK && web->port != before) make_url(web); /* its port was taken meanwhile */
  if (rc == LAGSCOPE_OK) rc = start_waiting(web, why, why_size);
  return rc;
}

const char *lagscope__web_url(const lagscope__web *web) { return web->url; }
uint16_t lagscope__web_port(const lagscope__web *web) { return web->port; }
