/*
 * The viewer's routes (docs/viewer-api.md): a request's method, path and query string become a
 * lagscope__web_route, or the status that refuses it. No I/O and no allocation, so it is tested
 * and fuzzed alone. Checks run in the order a client can act on: the URI's size (413), the
 * path (404), the method (405), a report id (404), then the query (400).
 *
 * Strict on purpose: paths are compared byte for byte as civetweb hands them over (it has
 * percent-decoded them and removed dot segments; nothing more is done here, and
 * "/api/v1/status/" with its trailing slash is not "/api/v1/status"), and a query parameter
 * that is unknown, repeated, empty or not plain digits is refused rather than guessed at.
 *
 * The viewer's files are routed from the asset table that the build generates from assets/
 * (web/embed-assets.cmake): "/" is index.html, "/NAME" any other file of the table, compared
 * whole with its name. There is no document root and no folder: a path with a second '/', or
 * naming no file of the table, is 404.
 */
#include "web.h"

#include <string.h>

#define HANGS_PREFIX "/api/v1/hangs/"
#define LIMIT_DEFAULT 20
#define LIMIT_MAX 100
#define OFFSET_MAX 1000000
#define NUMBER_DIGITS_MAX 7 /* enough for OFFSET_MAX; more is refused before it can overflow */

#define INDEX_ASSET "index.html" /* served at "/" and only there */

/* ---- the API's route table ---- */

typedef struct route_entry {
  const char *path;
  lagscope__web_route_kind kind;
} route_entry;

static const route_entry route_table[] = {
    {"/api/v1/status", LAGSCOPE__WEB_ROUTE_STATUS},
    {"/api/v1/metrics", LAGSCOPE__WEB_ROUTE_METRICS},
    {"/api/v1/hangs", LAGSCOPE__WEB_ROUTE_HANGS},
    {"/api/v1/capture", LAGSCOPE__WEB_ROUTE_CAPTURE},
    {"/api/v1/stream", LAGSCOPE__WEB_ROUTE_STREAM},
    {"/api/v1/hitches", LAGSCOPE__WEB_ROUTE_HITCHES},
    {"/metrics", LAGSCOPE__WEB_ROUTE_OPENMETRICS}, /* where Prometheus looks by default */
    {"/api/v1/signatures", LAGSCOPE__WEB_ROUTE_SIGNATURES},
};

/* The sub-resources of one report, after "/api/v1/hangs/{id}". */
typedef struct hang_suffix {
  const char *suffix;
  lagscope__web_route_kind kind;
} hang_suffix;

static const hang_suffix hang_suffixes[] = {
    {"", LAGSCOPE__WEB_ROUTE_HANG},
    {"/speedscope", LAGSCOPE__WEB_ROUTE_HANG_SPEEDSCOPE},
    {"/trace", LAGSCOPE__WEB_ROUTE_HANG_TRACE},
};

/* A refused request carries no id: nothing downstream may act on it. */
static void refuse(lagscope__web_route *out, int status, const char *error) {
  out->status = status;
  out->error = error;
  out->id[0] = '\0';
}

/* strlen that stops counting past max: a huge path costs no more than a long one. */
static size_t length_up_to(const char *s, size_t max) {
  size_t n = 0;
  while (n <= max && s[n] != '\0') n++;
  return n;
}

/* ---- paths ---- */

/* The store's id rules, narrowed to what the router holds: 1..63 bytes of [0-9A-Za-z._-], not
 * starting with '.' and without "..", so an id can never name a path outside the folder. */
static int id_valid(const char *id, size_t n) {
  if (n == 0 || n > LAGSCOPE__WEB_REPORT_ID_MAX || id[0] == '.') return 0;
  for (size_t i = 0; i < n; i++) {
    if (!lagscope__name_char(id[i])) return 0;
    if (id[i] == '.' && i + 1 < n && id[i + 1] == '.') return 0;
  }
  return 1;
}

static int match_table(const char *path, lagscope__web_route *out) {
  for (size_t i = 0; i < sizeof route_table / sizeof route_table[0]; i++) {
    if (strcmp(path, route_table[i].path) != 0) continue;
    out->kind = route_table[i].kind;
    return 1;
  }
  return 0;
}

/* "/" or "/NAME" of a file in the generated asset table. The table's names hold no '/', so a
 * path with another one never matches; index.html has "/" alone, so the page has one address.
 * out->asset points into the table, never into the request. */
static int match_asset(const char *path, lagscope__web_route *out) {
  const lagscope__web_asset *asset = NULL;
  if (strcmp(path, "/") == 0) asset = lagscope__web_asset_find(INDEX_ASSET);
  else if (path[0] == '/' && strcmp(path + 1, INDEX_ASSET) != 0)
    asset = lagscope__web_asset_find(path + 1);
  if (asset == NULL) return 0;
  out->kind = LAGSCOPE__WEB_ROUTE_ASSET;
  out->asset = asset->name;
  return 1;
}

/* "/api/v1/hangs/{id}[/speedscope|/trace]": sets kind, and the id when it is well formed
 * (else leaves it empty and returns 2, so that the caller answers 404 after the method). */
static int match_hang(const char *path, lagscope__web_route *out) {
  size_t prefix = sizeof HANGS_PREFIX - 1;
  if (strncmp(path, HANGS_PREFIX, prefix) != 0) return 0;
  const char *id = path + prefix;
  size_t n = strcspn(id, "/");
  for (size_t i = 0; i < sizeof hang_suffixes / sizeof hang_suffixes[0]; i++) {
    if (strcmp(id + n, hang_suffixes[i].suffix) != 0) continue;
    out->kind = hang_suffixes[i].kind;
    if (!id_valid(id, n)) return 2;
    memcpy(out->id, id, n);
    out->id[n] = '\0';
    return 1;
  }
  return 0;
}

/* ---- methods ---- */

static int route_is_post(lagscope__web_route_kind kind) {
  return kind == LAGSCOPE__WEB_ROUTE_CAPTURE;
}

static int method_allowed(const char *method, lagscope__web_route_kind kind) {
  if (route_is_post(kind)) return strcmp(method, "POST") == 0;
  return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

/* ---- the query ---- */

typedef struct query_seen {
  int limit, offset; /* the parameters already met, to refuse repeats */
} query_seen;

/* A run of 1..7 decimal digits within [min, max]; anything else (a sign, a '%', a space) is
 * malformed. */
static int parse_number(const char *s, size_t n, uint32_t min, uint32_t max, uint32_t *out) {
  if (n == 0 || n > NUMBER_DIGITS_MAX) return 0;
  uint32_t value = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    value = value * 10 + (uint32_t)(s[i] - '0');
  }
  if (value < min || value > max) return 0;
  *out = value;
  return 1;
}

static int token_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* The token is taken whatever its form: a malformed one is simply not the token (401 later,
 * never 400, so that the answer does not say what a token looks like). */
static void take_token(const char *value, size_t n, lagscope__web_route *out) {
  if (out->has_token) {
    refuse(out, 400, "The token parameter is given more than once.");
    return;
  }
  out->has_token = 1;
  if (n != LAGSCOPE__WEB_TOKEN_HEX) return;
  for (size_t i = 0; i < n; i++)
    if (!token_char(value[i])) return;
  memcpy(out->token, value, n);
  out->token[n] = '\0';
}

static void take_limit(const char *value, size_t n, query_seen *seen, lagscope__web_route *out) {
  if (seen->limit++) refuse(out, 400, "The limit parameter is given more than once.");
  else if (n == 0) refuse(out, 400, "The limit parameter is empty.");
  else if (!parse_number(value, n, 1, LIMIT_MAX, &out->limit))
    refuse(out, 400, "The limit parameter must be a whole number from 1 to 100.");
}

static void take_offset(const char *value, size_t n, query_seen *seen, lagscope__web_route *out) {
  if (seen->offset++) refuse(out, 400, "The offset parameter is given more than once.");
  else if (n == 0) refuse(out, 400, "The offset parameter is empty.");
  else if (!parse_number(value, n, 0, OFFSET_MAX, &out->offset))
    refuse(out, 400, "The offset parameter must be a whole number from 0 to 1000000.");
}

static int name_is(const char *name, size_t n, const char *literal) {
  return strlen(literal) == n && memcmp(name, literal, n) == 0;
}

/* One "name=value" (or a bare "name", whose value is empty). */
static void take_param(const char *param, size_t n, query_seen *seen, lagscope__web_route *out) {
  const char *eq = memchr(param, '=', n);
  size_t name_n = eq != NULL ? (size_t)(eq - param) : n;
  const char *value = eq != NULL ? eq + 1 : param + n;
  size_t value_n = n - name_n - (eq != NULL);
  int paged = out->kind == LAGSCOPE__WEB_ROUTE_HANGS;
  if (n == 0) refuse(out, 400, "The query string has an empty parameter ('&&', or '&' at an end).");
  else if (name_is(param, name_n, "token")) take_token(value, value_n, out);
  else if (paged && name_is(param, name_n, "limit")) take_limit(value, value_n, seen, out);
  else if (paged && name_is(param, name_n, "offset")) take_offset(value, value_n, seen, out);
  else if (paged)
    refuse(out, 400, "Unknown query parameter: this route takes limit, offset and token.");
  else refuse(out, 400, "Unknown query parameter: this route takes only token.");
}

/* Splits the query at '&' and stops at the first refusal. "" is no parameter at all. */
static void parse_query(const char *query, lagscope__web_route *out) {
  query_seen seen = {0, 0};
  if (out->kind == LAGSCOPE__WEB_ROUTE_HANGS) out->limit = LIMIT_DEFAULT, out->offset = 0;
  if (query == NULL || query[0] == '\0') return;
  const char *param = query;
  for (;;) {
    size_t n = strcspn(param, "&");
    take_param(param, n, &seen, out);
    if (out->status != 0 || param[n] == '\0') return;
    param += n + 1;
  }
}

/* The token first, whatever else is wrong with the request: access is decided before the
 * route is (an unknown route with the right token is 404, without it 401). Only the first
 * token counts here; parse_query refuses a repeated one later. */
static void find_token(const char *query, lagscope__web_route *out) {
  for (const char *param = query; param != NULL && *param != '\0';) {
    size_t n = strcspn(param, "&");
    if (n > 6 && memcmp(param, "token=", 6) == 0) {
      lagscope__web_route found;
      memset(&found, 0, sizeof found);
      take_token(param + 6, n - 6, &found);
      out->has_token = found.has_token;
      memcpy(out->token, found.token, sizeof out->token);
      return;
    }
    if (param[n] == '\0') return;
    param += n + 1;
  }
}

/* ---- the whole request ---- */

void lagscope__web_route_parse(const char *method, const char *path, const char *query,
                               lagscope__web_route *out) {
  memset(out, 0, sizeof *out);
  if (method == NULL) method = "";
  if (path == NULL) path = "";
  /* The URI as sent is path, '?' and query: over LAGSCOPE__WEB_URI_MAX bytes it is 413. */
  size_t uri = length_up_to(path, LAGSCOPE__WEB_URI_MAX);
  if (query != NULL && uri <= LAGSCOPE__WEB_URI_MAX) {
    uri += 1 + length_up_to(query, LAGSCOPE__WEB_URI_MAX);
  }
  if (uri > LAGSCOPE__WEB_URI_MAX) {
    refuse(out, 413, "The URI is longer than 2048 bytes.");
    return;
  }
  find_token(query, out);
  int hang = 0;
  if (!match_table(path, out) && !match_asset(path, out) &&
      (hang = match_hang(path, out)) == 0) {
    refuse(out, 404, "There is no such page or API route.");
    return;
  }
  if (!method_allowed(method, out->kind)) {
    refuse(out, 405, "This route does not take that method.");
    out->allow = route_is_post(out->kind) ? "POST" : "GET, HEAD";
    return;
  }
  if (hang == 2) {
    refuse(out, 404, "No report has that id.");
    return;
  }
  /* parse_query takes the token again (and refuses a repeated one); if it stops at a bad
   * parameter before reaching it, the token found first still decides access. */
  int has_token = out->has_token;
  char token[sizeof out->token];
  memcpy(token, out->token, sizeof token);
  out->has_token = 0;
  memset(out->token, 0, sizeof out->token);
  parse_query(query, out);
  if (out->status != 0 && !out->has_token) {
    out->has_token = has_token;
    memcpy(out->token, token, sizeof token);
  }
}
