/*
 * Answers: every one carries the security headers; errors are {"error": kind, "message": …}.
 * Used by the request handler (request.c) and the routes (api.c, stream.c), so that none of
 * them calls back into another.
 */
#include "civetweb_calls.h"
#include "http.h"

#include <stdio.h>
#include <string.h>

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

void lagscope__web_reply_add_security_headers(struct mg_connection *conn) {
  for (size_t i = 0; i < sizeof(security_headers) / sizeof(security_headers[0]); i++)
    add_header(conn, security_headers[i][0], security_headers[i][1]);
}

int lagscope__web_reply_send(lagscope__web_request *req, const lagscope__web_reply *reply) {
  struct mg_connection *conn = req->conn;
  char length[24], retry[16];
  snprintf(length, sizeof(length), "%zu", reply->length);
  mg_response_header_start(conn, reply->status);
  add_header(conn, "Content-Type",
             reply->content_type != NULL ? reply->content_type : "application/json; charset=utf-8");
  add_header(conn, "Content-Length", length);
  lagscope__web_reply_add_security_headers(conn);
  add_header(conn, "Location", reply->location);
  add_header(conn, "Content-Disposition", reply->disposition);
  add_header(conn, "Allow", reply->allow);
  if (reply->retry_after_s > 0) {
    snprintf(retry, sizeof(retry), "%d", reply->retry_after_s);
    add_header(conn, "Retry-After", retry);
  }
  add_header(conn, "Set-Cookie", reply->set_cookie != NULL ? reply->set_cookie : req->set_cookie);
  if (req->close) add_header(conn, "Connection", "close");
  mg_response_header_send(conn);
  if (!req->head_only && reply->length > 0) mg_write(conn, reply->body, reply->length);
  return reply->status;
}

int lagscope__web_reply_error(lagscope__web_request *req, int status, const char *kind,
                              const char *message) {
  char body[512];
  /* kind and message are ours, never the client's: no escaping needed but quotes. */
  int n = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", kind, message);
  lagscope__web_reply reply = {.status = status, .body = body};
  reply.length = n > 0 && (size_t)n < sizeof(body) ? (size_t)n : 0;
  if (status == 405) reply.allow = req->route.allow;
  if (status == 503 && strcmp(kind, "busy") == 0) reply.retry_after_s = 1;
  return lagscope__web_reply_send(req, &reply);
}

int lagscope__web_reply_json(lagscope__web_request *req, int status, char *json) {
  if (json == NULL)
    return lagscope__web_reply_error(req, 500, "internal", "out of memory building the answer");
  lagscope__web_reply reply = {.status = status, .body = json, .length = strlen(json)};
  int rc = lagscope__web_reply_send(req, &reply);
  lagscope_free(json);
  return rc;
}

const char *lagscope__web_reply_kind(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 413: return "too_large";
    case 429: return "rate_limited";
    case 503: return "busy";
  }
  return "error";
}
