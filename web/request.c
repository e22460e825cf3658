/*
 * One request, from civetweb's handler to its answer: the bounds on clients and the checks
 * before access (access.c), the path decoded and routed (routes.c), the token, the body read
 * and dropped or refused, then the route's answer (api.c, stream.c, the viewer's files);
 * civetweb's own refusals answered the same way. Answers are made in reply.c.
 */
#define _GNU_SOURCE
#include "civetweb_calls.h"
#include "http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define BODY_MAX 4096 /* a request body larger than this is refused with 413 */

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
 * reading through a duplicate checked again, as lagscope__web_access_shut_peers_past does. A */
static void stop_reading(lagscope__web *web, const struct mg_request_info *info) {
  struct in_addr client;
  if (inet_pton(AF_INET, info->remote_addr, &client) != 1) return;
  lagscope__peer_socket *found = lagscope__alloc(LAGSCOPE__WEB_PEER_SCAN_MAX * sizeof(*found));
  size_t n =
      found != NULL ? lagscope__net_peer_sockets(web->port, found, LAGSCOPE__WEB_PEER_SCAN_MAX) : 0;
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

int lagscope__web_request_handle(struct mg_connection *conn, void *data) {
  lagscope__web *web = data;
  const struct mg_request_info *info = mg_get_request_info(conn);
  atomic_fetch_add_explicit(&web->requests, 1, memory_order_relaxed);
  lagscope__web_request req = {.conn = conn, .web = web, .content_length = info->content_length};
  req.head_only = strcmp(info->request_method, "HEAD") == 0;
  const char *path = info->local_uri != NULL ? info->local_uri : "";

  if (lagscope__web_access_too_many_clients(web)) {
    atomic_fetch_add_explicit(&web->clients_rejected, 1, memory_order_relaxed);
    return lagscope__web_reply_error(&req, 503, "busy", "too many connections; try again");
  }
  const char *message = NULL;
  int refused = lagscope__web_access_refusal(&req, info, &message);
  if (refused != 0) {
    if (req.close) close_after(info);
    return lagscope__web_reply_error(&req, refused, lagscope__web_reply_kind(refused), message);
  }
  /* civetweb's decoding is off (it would cut "/api/v1/status%00" to "/api/v1/status"). */
  char decoded[LAGSCOPE__WEB_HEADERS_MAX + 1]; /* the request line fits in the headers' bound */
  int path_ok = lagscope__web_path_decode(path, decoded, sizeof(decoded));
  if (!path_ok) decoded[0] = '\0'; /* no route: 404 once access is proven */
  lagscope__web_route_parse(info->request_method, decoded, info->query_string, &req.route);
  if (req.route.status == 413)
    return lagscope__web_reply_error(&req, 413, "too_large", req.route.error);
  char cookie[128];
  if (!lagscope__web_access_authorize(&req, cookie, sizeof(cookie)))
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

/* civetweb's own refusals (a malformed request, headers over the limit, a request that timed
 * out) as JSON with the same headers as every other answer. Returns 0: handled. */
int lagscope__web_request_civetweb_error(struct mg_connection *conn, int status,
                                         const char *message) {
  (void)message; /* civetweb's text may quote the client's bytes: ours only */
  lagscope__web_request req = {.conn = conn, .web = lagscope__web_of(conn)};
  /* civetweb answers 411 to a Content-Length it cannot read as a number (-1, "abc"): a
   * request read no one way, 400 as every other (docs/viewer-api.md, "Request checks"). */
  if (status == 411) status = 400, req.close = 1;
  const char *kind = status == 400 ? "bad_request" : status == 408 ? "timeout"
                   : status == 413 || status == 431 ? "too_large"
                   : lagscope__web_reply_kind(status);
  lagscope__web_reply_error(&req, status, kind, "the server could not read this request");
  return 0;
}
