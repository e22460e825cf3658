/*
 * Which clients the viewer serves, checked before any route (the request handler, request.c,
 * asks): the per-launch token from the query, a bearer header or the cookie; the request's
 * framing, Host and Origin; and the bounds on connections, in all and per client address.
 * The checks that need no server (comparing tokens, reading a cookie, a Host, an Origin) are
 * auth.c's.
 *
 * Contents
 *   1. the token: the query, a bearer header or the cookie
 *   2. request checks: framing, Host, Origin
 *   3. connections: counted, bounded in all and per client address
 */
#define _GNU_SOURCE
#include "civetweb_calls.h"
#include "http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Over the bound at a request: the connections of a flooding address shut down a moment ago
 * are still counted until their workers close them; they are given this long to go. */
#define BUSY_SETTLE_NS (200u * 1000u * 1000u)
#define COOKIE_NAME "lagscope_token"
#define COOKIE_MAX_AGE "604800"  /* a week: a browser keeps viewing across launches */

/* ---- 1. the token --------------------------------------------------------------------------- */

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
int lagscope__web_access_authorize(lagscope__web_request *req, char *cookie,
                                   size_t cookie_size) {
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
  /* The user's credential, constant in time too, on /metrics alone (a scraper's: no viewer). */
  if (req->route.kind == LAGSCOPE__WEB_ROUTE_OPENMETRICS && web->metrics_token[0] != '\0' &&
      bearer != NULL && lagscope__web_token_equal(bearer, web->metrics_token))
    best = 2;
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

/* ---- 2. request checks ---------------------------------------------------------------------- */

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
int lagscope__web_access_refusal(lagscope__web_request *req, const struct mg_request_info *info,
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

/* ---- 3. connections ------------------------------------------------------------------------- */

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
void lagscope__web_access_shut_peers_past(lagscope__web *web, uint32_t bound) {
  lagscope__peer_socket *found = lagscope__alloc(LAGSCOPE__WEB_PEER_SCAN_MAX * sizeof(*found));
  size_t n =
      found != NULL ? lagscope__net_peer_sockets(web->port, found, LAGSCOPE__WEB_PEER_SCAN_MAX) : 0;
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
    while (atomic_exchange(&wanted, 0))
      lagscope__web_access_shut_peers_past(web, peer_bound(web));
    pthread_mutex_unlock(&scanning);
  } while (atomic_load(&wanted)); /* asked for between the last look and the unlock */
}

static int over_bound(const lagscope__web *web) {
  return atomic_load_explicit(&web->clients, memory_order_relaxed) >
         (int)web->config.server_max_clients;
}

/* More connections than the bound, even once those of an address past its share have been
 * shut down and closed: a burst of a flooding address's connections, each shut down as it
 * comes, would otherwise count against a client of another address for a moment. One scan
 * (connections that open later are scanned as they open), then the count is watched. */
int lagscope__web_access_too_many_clients(lagscope__web *web) {
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

int lagscope__web_access_connection_opened(const struct mg_connection *conn, void **data) {
  (void)data;
  lagscope__web *web = lagscope__web_of(conn);
  int open = atomic_fetch_add_explicit(&web->clients, 1, memory_order_relaxed) + 1;
  /* With no more connections in all than one address may hold, none can be over: no look. */
  if ((uint32_t)open > peer_bound(web)) bound_peers(web);
  return 0;
}

void lagscope__web_access_connection_closing(const struct mg_connection *conn) {
  atomic_fetch_sub_explicit(&lagscope__web_of(conn)->clients, 1, memory_order_relaxed);
}
