/* libFuzzer target for what the server feeds untrusted bytes to: the router, the cookie parser,
 * the token comparison, and the Host, Origin and path checks. The input is
 * "method\npath\nquery" (no second newline: no query); the same bytes also serve as a Cookie
 * header, a Host header, a path, and as two tokens. Besides the sanitizers'
 * checks, every answer must keep the router's promises (web/web.h, docs/viewer-api.md).
 * Build and run: tests/fuzz/run-fuzz BUILD_DIR [SECONDS]. */
#include "web.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INVARIANT(cond)                                                         \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "fuzz_routes: invariant broken: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                  \
    }                                                                           \
  } while (0)

/* A heap copy of exactly n bytes plus the NUL, so that ASan sees a read past the end. */
static char *copy_text(const uint8_t *data, size_t n) {
  char *s = malloc(n + 1);
  if (s == NULL) abort();
  memcpy(s, data, n);
  s[n] = '\0';
  return s;
}

static int id_well_formed(const char *id) {
  size_t n = strlen(id);
  if (n == 0 || n > LAGSCOPE__WEB_REPORT_ID_MAX || id[0] == '.' || strstr(id, "..") != NULL) {
    return 0;
  }
  return strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._-") == n;
}

static int is_hang_route(lagscope__web_route_kind kind) {
  return kind == LAGSCOPE__WEB_ROUTE_HANG || kind == LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE ||
         kind == LAGSCOPE__WEB_ROUTE_HANG_TRACE;
}

static void check_route(const lagscope__web_route *r, const char *path, const char *query) {
  INVARIANT(r->status == 0 || r->status == 400 || r->status == 404 || r->status == 405 ||
            r->status == 413);
  INVARIANT((r->status != 0) == (r->error != NULL));
  INVARIANT((r->status == 405) == (r->allow != NULL));
  INVARIANT(r->status != 0 || r->kind != LAGSCOPE__WEB_ROUTE_NONE);
  if (r->status == 0) INVARIANT((r->kind == LAGSCOPE__WEB_ROUTE_ASSET) == (r->asset != NULL));
  /* An asset route names a file of the table, at "/" (index.html) or "/" and its name. */
  if (r->asset != NULL) {
    INVARIANT(lagscope__web_asset_find(r->asset) != NULL);
    INVARIANT(strcmp(path, "/") == 0 ? strcmp(r->asset, "index.html") == 0
                                     : path[0] == '/' && strcmp(path + 1, r->asset) == 0);
  }
  INVARIANT(memchr(r->id, '\0', sizeof r->id) != NULL);
  if (r->id[0] != '\0') INVARIANT(r->status == 0 && is_hang_route(r->kind) && id_well_formed(r->id));
  if (r->status == 0 && is_hang_route(r->kind)) INVARIANT(id_well_formed(r->id));
  if (r->status == 0 && r->kind == LAGSCOPE__WEB_ROUTE_HANGS)
    INVARIANT(r->limit >= 1 && r->limit <= 100 && r->offset <= 1000000);
  INVARIANT(r->token[0] == '\0' ||
            (r->has_token && strlen(r->token) == LAGSCOPE__WEB_TOKEN_HEX &&
             strspn(r->token, "0123456789abcdef") == LAGSCOPE__WEB_TOKEN_HEX));
  if (r->token[0] != '\0') INVARIANT(query != NULL && strstr(query, r->token) != NULL);
  size_t uri = strlen(path) + (query != NULL ? 1 + strlen(query) : 0);
  INVARIANT((r->status == 413) == (uri > LAGSCOPE__WEB_URI_MAX));
}

static void fuzz_router(const char *text) {
  char *method = (char *)text, *path = strchr(method, '\n');
  char *query = NULL;
  if (path == NULL) return;
  *path++ = '\0';
  query = strchr(path, '\n');
  if (query != NULL) *query++ = '\0';
  lagscope__web_route r;
  memset(&r, 0xab, sizeof r);
  lagscope__web_route_parse(method, path, query, &r);
  check_route(&r, path, query);
  lagscope__web_route again;
  lagscope__web_route_parse(method, path, query, &again); /* no hidden state */
  INVARIANT(again.status == r.status && again.kind == r.kind && strcmp(again.id, r.id) == 0);
}

static void fuzz_cookie(const char *header) {
  char out[LAGSCOPE__WEB_TOKEN_HEX + 1];
  memset(out, 0x5a, sizeof out);
  int rc = lagscope__web_cookie_find(header, "lagscope_token", out, sizeof out);
  INVARIANT(rc == 0 || rc == ENOENT);
  INVARIANT(memchr(out, '\0', sizeof out) != NULL);
  if (rc == 0) INVARIANT(strstr(header, out) != NULL && strstr(header, "lagscope_token") != NULL);
  else INVARIANT(out[0] == '\0');
  char tiny[1];
  rc = lagscope__web_cookie_find(header, "a", tiny, sizeof tiny);
  INVARIANT((rc == 0 || rc == ENOENT) && tiny[0] == '\0');
}

/* Two tokens: the input's halves. Equality must be exactly strcmp's, and symmetric. */
static void fuzz_tokens(const uint8_t *data, size_t size) {
  char *a = copy_text(data, size / 2), *b = copy_text(data + size / 2, size - size / 2);
  int equal = lagscope__web_token_equal(a, b);
  INVARIANT(equal == (strcmp(a, b) == 0));
  INVARIANT(equal == lagscope__web_token_equal(b, a));
  INVARIANT(lagscope__web_token_equal(a, a) == 1);
  free(a);
  free(b);
}

/* The Host header's host: lower case, only a host name's or an address's characters, and
 * never longer than the header; the path decoder: never longer than its input, never a NUL. */
static void fuzz_request_checks(const char *text) {
  char host[64];
  memset(host, 0x5a, sizeof host);
  if (lagscope__web_host_of(text, host, sizeof host)) {
    INVARIANT(host[0] != '\0' && strlen(host) <= strlen(text));
    INVARIANT(strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789-.:") == strlen(host));
  } else {
    INVARIANT(host[0] == '\0');
  }
  size_t n = strlen(text);
  char *path = malloc(n + 1);
  if (path == NULL) abort();
  if (lagscope__web_path_decode(text, path, n + 1)) {
    INVARIANT(strlen(path) <= n);
    INVARIANT(strstr(text, "%00") == NULL);
  }
  free(path);
  int same = lagscope__web_origin_is_host(text, text + n / 2);
  INVARIANT(same == 0 || same == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = copy_text(data, size);
  fuzz_request_checks(text);
  fuzz_cookie(text);
  fuzz_router(text); /* last: it cuts text at its newlines */
  free(text);
  fuzz_tokens(data, size);
  return 0;
}
