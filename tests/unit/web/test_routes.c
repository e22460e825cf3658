/* The router (web/routes.c) against docs/viewer-api.md: every route, every method rule, the
 * query's parameters and every refusal with its status. */
#include "cases.h"
#include "check.h"
#include "web.h"

#include <string.h>

#define TOKEN "0123456789abcdef0123456789abcdef"
#define ID "20240405T101112.123Z-4242-1"

/* The struct is filled with garbage first: the parser must set every field it reports. */
static lagscope__web_route parse(const char *method, const char *path, const char *query) {
  lagscope__web_route r;
  memset(&r, 0xab, sizeof r);
  lagscope__web_route_parse(method, path, query, &r);
  return r;
}

static void expect_ok(const lagscope__web_route *r, lagscope__web_route_kind kind) {
  CHECK_MSG(r->status == 0, "status %d: %s", r->status, r->error);
  CHECK_EQ_INT(r->kind, kind);
  CHECK(r->error == NULL && r->allow == NULL);
}

/* A refusal with that status, whose sentence mentions `mentions` (when not NULL). */
static void expect_refused(const char *method, const char *path, const char *query, int status,
                           const char *mentions) {
  lagscope__web_route r = parse(method, path, query);
  CHECK_MSG(r.status == status, "%s %s ? %s: status %d, expected %d", method, path,
            query ? query : "(null)", r.status, status);
  CHECK(r.error != NULL && r.error[0] != '\0');
  CHECK_MSG(mentions == NULL || strstr(r.error, mentions) != NULL, "\"%s\" lacks \"%s\"", r.error,
            mentions);
  CHECK((status == 405) == (r.allow != NULL));
  CHECK_EQ_INT(r.id[0], '\0');
}

/* Every file of the generated asset table at "/its-name", index.html at "/" instead. */
static void test_assets(void) {
  size_t count = 0;
  const lagscope__web_asset *assets = lagscope__web_asset_list(&count);
  CHECK(count >= 4);
  for (size_t i = 0; i < count; i++) {
    int index = strcmp(assets[i].name, "index.html") == 0;
    char path[128];
    snprintf(path, sizeof path, "/%s", index ? "" : assets[i].name);
    for (int head = 0; head < 2; head++) {
      lagscope__web_route r = parse(head ? "HEAD" : "GET", path, NULL);
      expect_ok(&r, LAGSCOPE__WEB_ROUTE_ASSET);
      CHECK_MSG(strcmp(r.asset, assets[i].name) == 0, "%s: %s", path, r.asset);
      CHECK(r.asset == assets[i].name); /* the table's name, not the request's bytes */
      CHECK_EQ_INT(r.has_token, 0);
      CHECK_EQ_INT(r.token[0], '\0');
    }
    if (index) continue;
    /* The name whole, at the top, nothing around it. */
    char near[160];
    snprintf(near, sizeof near, "/%s/", assets[i].name);
    expect_refused("GET", near, NULL, 404, NULL);
    snprintf(near, sizeof near, "//%s", assets[i].name);
    expect_refused("GET", near, NULL, 404, NULL);
    snprintf(near, sizeof near, "/assets/%s", assets[i].name);
    expect_refused("GET", near, NULL, 404, NULL);
    snprintf(near, sizeof near, "%s", assets[i].name);
    expect_refused("GET", near, NULL, 404, NULL);
    snprintf(near, sizeof near, "/%.*s", (int)strlen(assets[i].name) - 1, assets[i].name);
    expect_refused("GET", near, NULL, 404, NULL);
  }
  /* The files the page itself loads. */
  static const char *const named[] = {"main.js", "viewer.css", "favicon.svg"};
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    CHECK_MSG(lagscope__web_asset_find(named[i]) != NULL, "%s is not in the asset table", named[i]);
  /* Only the table's names: there is no document root to find other files in, and the page
   * has one address. */
  expect_refused("GET", "/index.html", NULL, 404, NULL);
  expect_refused("GET", "/main.js/", NULL, 404, NULL);
  expect_refused("GET", "//", NULL, 404, NULL);
  expect_refused("GET", "/.", NULL, 404, NULL);
  expect_refused("GET", "/..", NULL, 404, NULL);
  expect_refused("GET", "/../assets/main.js", NULL, 404, NULL);
  expect_refused("GET", "/CMakeLists.txt", NULL, 404, NULL);
  expect_refused("GET", "/web.h", NULL, 404, NULL);
}

static void test_api_routes(void) {
  static const struct {
    const char *path;
    lagscope__web_route_kind kind;
  } routes[] = {{"/api/v1/status", LAGSCOPE__WEB_ROUTE_STATUS},
                {"/api/v1/metrics", LAGSCOPE__WEB_ROUTE_METRICS},
                {"/api/v1/hangs", LAGSCOPE__WEB_ROUTE_HANGS},
                {"/api/v1/stream", LAGSCOPE__WEB_ROUTE_STREAM},
                {"/api/v1/hitches", LAGSCOPE__WEB_ROUTE_HITCHES},
                {"/metrics", LAGSCOPE__WEB_ROUTE_OPENMETRICS},
                {"/api/v1/signatures", LAGSCOPE__WEB_ROUTE_SIGNATURES},
                {"/api/v1/hangs/" ID, LAGSCOPE__WEB_ROUTE_HANG},
                {"/api/v1/hangs/" ID "/speedscope", LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE},
                {"/api/v1/hangs/" ID "/trace", LAGSCOPE__WEB_ROUTE_HANG_TRACE}};
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
    lagscope__web_route get = parse("GET", routes[i].path, NULL);
    lagscope__web_route head = parse("HEAD", routes[i].path, "");
    expect_ok(&get, routes[i].kind);
    expect_ok(&head, routes[i].kind);
    CHECK(get.asset == NULL);
    int hang = routes[i].kind >= LAGSCOPE__WEB_ROUTE_HANG &&
               routes[i].kind <= LAGSCOPE__WEB_ROUTE_HANG_TRACE;
    CHECK(strcmp(get.id, hang ? ID : "") == 0);
    expect_refused("POST", routes[i].path, NULL, 405, NULL);
    CHECK(strcmp(parse("PUT", routes[i].path, NULL).allow, "GET, HEAD") == 0);
  }
  lagscope__web_route capture = parse("POST", "/api/v1/capture", NULL);
  expect_ok(&capture, LAGSCOPE__WEB_ROUTE_CAPTURE);
  for (size_t i = 0; i < 3; i++) {
    const char *method = (const char *[]){"GET", "HEAD", "post"}[i]; /* methods are case-sensitive */
    lagscope__web_route r = parse(method, "/api/v1/capture", NULL);
    CHECK_EQ_INT(r.status, 405);
    CHECK(strcmp(r.allow, "POST") == 0);
  }
  lagscope__web_route root = parse("POST", "/", NULL);
  CHECK(root.status == 405 && strcmp(root.allow, "GET, HEAD") == 0);
  expect_refused(NULL, "/api/v1/status", NULL, 405, NULL);
  expect_refused("", "/api/v1/status", NULL, 405, NULL);
}

static void test_unknown_paths(void) {
  static const char *const paths[] = {
      "/nope", "", "api/v1/status", "/api/v1/status/", "/API/v1/status", "/api/v1/hangs/",
      "/api/v1/hangs/" ID "/", "/api/v1/hangs/" ID "/flame", "/api/v1/hangs/" ID "/trace/",
      "/api/v1/hangs/" ID "/trace/x", "/api/v2/status", "/api/v1/capture/", "/api/v1/status?x",
      "/%61pi/v1/status"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    lagscope__web_route r = parse("GET", paths[i], NULL);
    CHECK_MSG(r.status == 404, "%s: %d", paths[i], r.status);
    CHECK(r.error != NULL && r.allow == NULL);
    CHECK_EQ_INT(r.id[0], '\0');
  }
  CHECK_EQ_INT(parse("GET", "/nope", NULL).kind, LAGSCOPE__WEB_ROUTE_NONE);
  CHECK_EQ_INT(parse("GET", NULL, NULL).status, 404);
  /* An unknown path is 404 whatever the method: 405 only says something about a known route. */
  CHECK_EQ_INT(parse("DELETE", "/nope", NULL).status, 404);
}

static void test_ids(void) {
  char longest[LAGSCOPE__WEB_REPORT_ID_MAX + 32] = "/api/v1/hangs/";
  size_t prefix = strlen(longest);
  memset(longest + prefix, 'a', LAGSCOPE__WEB_REPORT_ID_MAX);
  lagscope__web_route r = parse("GET", longest, NULL);
  expect_ok(&r, LAGSCOPE__WEB_ROUTE_HANG);
  CHECK_EQ_INT(strlen(r.id), LAGSCOPE__WEB_REPORT_ID_MAX);
  strcat(longest, "a"); /* 64 bytes */
  expect_refused("GET", longest, NULL, 404, "id");
  r = parse("GET", "/api/v1/hangs/a_b-C.9/trace", NULL);
  expect_ok(&r, LAGSCOPE__WEB_ROUTE_HANG_TRACE);
  CHECK(strcmp(r.id, "a_b-C.9") == 0);
  static const char *const bad[] = {".hidden", "..", "a..b", "a%2Fb", "a b", "a+b", "a:b",
                                    "\xc3\xa9", "a\\b", "~", "a*"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char path[128];
    snprintf(path, sizeof path, "/api/v1/hangs/%s/speedscope", bad[i]);
    r = parse("GET", path, NULL);
    CHECK_MSG(r.status == 404, "%s: %d", bad[i], r.status);
    CHECK_EQ_INT(r.kind, LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE);
    CHECK_EQ_INT(r.id[0], '\0');
  }
  /* The method is judged before the id, and the id before the query. */
  CHECK_EQ_INT(parse("DELETE", "/api/v1/hangs/.x", NULL).status, 405);
  CHECK_EQ_INT(parse("GET", "/api/v1/hangs/.x", "bogus=1").status, 404);
}

static void test_paging(void) {
  lagscope__web_route r = parse("GET", "/api/v1/hangs", NULL);
  CHECK(r.limit == 20 && r.offset == 0);
  r = parse("GET", "/api/v1/hangs", "limit=1&offset=1000000");
  expect_ok(&r, LAGSCOPE__WEB_ROUTE_HANGS);
  CHECK(r.limit == 1 && r.offset == 1000000);
  r = parse("HEAD", "/api/v1/hangs", "offset=0&limit=100&token=" TOKEN);
  expect_ok(&r, LAGSCOPE__WEB_ROUTE_HANGS);
  CHECK(r.limit == 100 && r.offset == 0 && r.has_token && strcmp(r.token, TOKEN) == 0);
  r = parse("GET", "/api/v1/hangs", "limit=0000007");
  CHECK(r.status == 0 && r.limit == 7 && r.offset == 0);
  r = parse("GET", "/api/v1/hangs", "offset=35");
  CHECK(r.status == 0 && r.limit == 20 && r.offset == 35);

  static const char *const bad_limits[] = {"limit=0", "limit=101", "limit=abc", "limit=-1",
                                           "limit=+5", "limit=5 ", "limit=%35", "limit=00000001",
                                           "limit=5=5", "limit=4294967297", "limit=0x10"};
  for (size_t i = 0; i < sizeof bad_limits / sizeof bad_limits[0]; i++)
    expect_refused("GET", "/api/v1/hangs", bad_limits[i], 400, "limit");
  expect_refused("GET", "/api/v1/hangs", "offset=1000001", 400, "offset");
  expect_refused("GET", "/api/v1/hangs", "offset=-0", 400, "offset");
  expect_refused("GET", "/api/v1/hangs", "limit=", 400, "limit parameter is empty");
  expect_refused("GET", "/api/v1/hangs", "limit", 400, "limit parameter is empty");
  expect_refused("GET", "/api/v1/hangs", "offset=", 400, "offset parameter is empty");
  expect_refused("GET", "/api/v1/hangs", "limit=5&limit=5", 400, "more than once");
  expect_refused("GET", "/api/v1/hangs", "offset=1&limit=2&offset=1", 400, "offset");
  expect_refused("GET", "/api/v1/hangs", "page=2", 400, "limit, offset and token");
  expect_refused("GET", "/api/v1/hangs", "Limit=5", 400, "Unknown");
  expect_refused("GET", "/api/v1/hangs", "limit=5&", 400, "empty parameter");
  expect_refused("GET", "/api/v1/hangs", "&limit=5", 400, "empty parameter");
  expect_refused("GET", "/api/v1/hangs", "=5", 400, "Unknown");
  /* Paging belongs to the list alone. */
  expect_refused("GET", "/api/v1/status", "limit=5", 400, "only token");
  expect_refused("GET", "/api/v1/hangs/" ID, "offset=1", 400, "only token");
}

static void test_tokens(void) {
  static const char *const paths[] = {"/", "/viewer.css", "/api/v1/status", "/api/v1/metrics",
                                      "/api/v1/stream", "/api/v1/hangs/" ID "/trace", "/metrics"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    lagscope__web_route r = parse("GET", paths[i], "token=" TOKEN);
    CHECK_MSG(r.status == 0, "%s: %d", paths[i], r.status);
    CHECK(r.has_token && strcmp(r.token, TOKEN) == 0);
    expect_refused("GET", paths[i], "token=" TOKEN "&x=1", 400, "Unknown");
    expect_refused("GET", paths[i], "x=1", 400, "Unknown");
  }
  lagscope__web_route r = parse("POST", "/api/v1/capture", "token=" TOKEN);
  CHECK(r.status == 0 && r.has_token && strcmp(r.token, TOKEN) == 0);
  /* Not a token's form: present, but empty, so it is simply wrong (401), never a 400. */
  static const char *const malformed[] = {
      "token=", "token", "token=0123456789ABCDEF0123456789abcdef",
      "token=0123456789abcdef0123456789abcde", "token=0123456789abcdef0123456789abcdef0",
      "token=0123456789abcdef0123456789abcdeg", "token=%30123456789abcdef0123456789abcde"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    r = parse("GET", "/api/v1/status", malformed[i]);
    CHECK_MSG(r.status == 0, "%s: %d", malformed[i], r.status);
    CHECK(r.has_token == 1 && r.token[0] == '\0');
  }
  expect_refused("GET", "/", "token=" TOKEN "&token=" TOKEN, 400, "token");
  r = parse("GET", "/", "");
  CHECK(r.status == 0 && r.has_token == 0 && r.token[0] == '\0');
}

static void test_uri_size(void) {
  static char path[LAGSCOPE__WEB_URI_MAX + 2], query[LAGSCOPE__WEB_URI_MAX + 2];
  memset(path, 'a', sizeof path - 1);
  path[0] = '/';
  expect_refused("GET", path, NULL, 413, "2048");          /* 2049 bytes */
  path[LAGSCOPE__WEB_URI_MAX] = '\0';                     /* 2048: not too large, unknown */
  CHECK_EQ_INT(parse("GET", path, NULL).status, 404);
  /* The query counts: path, '?', query. */
  strcpy(path, "/api/v1/status");
  size_t room = LAGSCOPE__WEB_URI_MAX - strlen(path) - 1;
  memset(query, 'a', room);
  memcpy(query, "token=", 6);
  query[room] = '\0';
  lagscope__web_route r = parse("GET", path, query);
  CHECK(r.status == 0 && r.has_token && r.token[0] == '\0'); /* exactly 2048 */
  query[room] = 'a';
  query[room + 1] = '\0';
  expect_refused("GET", path, query, 413, NULL);
}

static const test_case cases[] = {
    TEST_CASE(assets),
    TEST_CASE(api_routes),
    TEST_CASE(unknown_paths),
    TEST_CASE(ids),
    TEST_CASE(paging),
    TEST_CASE(tokens),
    TEST_CASE(uri_size),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
