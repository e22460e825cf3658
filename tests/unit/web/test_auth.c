/* Access checks (web/auth.c): the token comparison and finding the token's cookie. Headers are
 * copied to heap blocks of their exact size, so that under AddressSanitizer a read past the
 * NUL is an error. */
#include "cases.h"
#include "check.h"
#include "web.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *exact_copy(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  CHECK(copy != NULL);
  memcpy(copy, s, n);
  return copy;
}

static int equal(const char *a, const char *b) {
  char *x = exact_copy(a), *y = exact_copy(b);
  int result = lagscope__web_token_equal(x, y);
  CHECK_EQ_INT(result, lagscope__web_token_equal(y, x)); /* symmetric */
  free(x);
  free(y);
  return result;
}

static void test_token_equal(void) {
  const char *token = "0123456789abcdef0123456789abcdef";
  CHECK_EQ_INT(equal(token, token), 1);
  CHECK_EQ_INT(equal(token, "0123456789abcdef0123456789abcdef"), 1);
  CHECK_EQ_INT(equal(token, "1123456789abcdef0123456789abcdef"), 0); /* first byte */
  CHECK_EQ_INT(equal(token, "0123456789abcdef0123456789abcdee"), 0); /* last byte */
  CHECK_EQ_INT(equal(token, "0123456789ABCDEF0123456789ABCDEF"), 0);
  /* Different lengths, including a prefix of the other: never equal. */
  CHECK_EQ_INT(equal(token, "0123456789abcdef0123456789abcde"), 0);
  CHECK_EQ_INT(equal(token, "0123456789abcdef0123456789abcdef0"), 0);
  CHECK_EQ_INT(equal(token, ""), 0);
  CHECK_EQ_INT(equal("a", ""), 0);
  CHECK_EQ_INT(equal("", ""), 1);
  CHECK_EQ_INT(equal("\xff", "\xff"), 1);
  CHECK_EQ_INT(equal("\xff", "\x7f"), 0);
  /* NULL is nobody's token, not even NULL's. */
  CHECK_EQ_INT(lagscope__web_token_equal(NULL, token), 0);
  CHECK_EQ_INT(lagscope__web_token_equal(token, NULL), 0);
  CHECK_EQ_INT(lagscope__web_token_equal(NULL, NULL), 0);
}

/* Finds lagscope_token in header; returns the code, the value in out. */
static int find(const char *header, char *out, size_t out_size) {
  char *copy = exact_copy(header);
  memset(out, '#', out_size);
  int rc = lagscope__web_cookie_find(copy, "lagscope_token", out, out_size);
  free(copy);
  CHECK(rc == 0 || rc == ENOENT);
  if (out_size > 0) CHECK_EQ_INT(out[rc == 0 ? strlen(out) : 0], '\0');
  return rc;
}

static void expect_value(const char *header, const char *value) {
  char out[64];
  int rc = find(header, out, sizeof out);
  CHECK_MSG(rc == 0, "[%s]: ENOENT, expected \"%s\"", header, value);
  CHECK_MSG(strcmp(out, value) == 0, "[%s]: \"%s\", expected \"%s\"", header, out, value);
}

static void expect_absent(const char *header) {
  char out[64];
  CHECK_MSG(find(header, out, sizeof out) == ENOENT, "[%s]: found \"%s\"", header, out);
  CHECK_EQ_INT(out[0], '\0');
}

static void test_cookie_find(void) {
  expect_value("a=1; lagscope_token=abc; b=2", "abc");
  expect_value("lagscope_token=abc; b=2", "abc");
  expect_value("a=1; lagscope_token=abc", "abc");
  expect_value("lagscope_token=abc", "abc");
  expect_value("a=1;lagscope_token=abc;b=2", "abc");       /* no spaces */
  expect_value("a=1;   lagscope_token = abc  ; b=2", "abc"); /* extra spaces */
  expect_value("a=1;\tlagscope_token=abc\t", "abc");
  expect_value("lagscope_token=abc;", "abc");
  expect_value("lagscope_token=\"abc\"", "abc"); /* RFC 6265's quoted form */
  expect_value("lagscope_token=a=b", "a=b");     /* only the first '=' separates */
  expect_value("lagscope_token=", "");           /* present, empty: the caller refuses it */
  expect_value("lagscope_token=first; lagscope_token=second", "first");
  /* The exact name only, not one that ends or begins with it. */
  expect_value("xlagscope_token=bad; lagscope_token=good", "good");
  expect_value("lagscope_token_old=bad; lagscope_token=good", "good");
  expect_absent("xlagscope_token=bad");
  expect_absent("lagscope_tokenx=bad");
  expect_absent("lagscope_token_old=bad");
  expect_absent("LAGSCOPE_TOKEN=bad"); /* cookie names are case-sensitive */
  expect_absent("a=lagscope_token=bad");
  expect_absent("lagscope_token; b=2"); /* no '=': a name without a value is no cookie */
  expect_absent("a=1; b=2");
  expect_absent("");
  expect_absent(";;; ;");
  expect_absent("=");

  char out[8];
  CHECK_EQ_INT(lagscope__web_cookie_find(NULL, "lagscope_token", out, sizeof out), ENOENT);
  CHECK_EQ_INT(out[0], '\0');
  CHECK_EQ_INT(lagscope__web_cookie_find("a=1", NULL, out, sizeof out), ENOENT);
  CHECK_EQ_INT(lagscope__web_cookie_find("=1", "", out, sizeof out), ENOENT);
  CHECK_EQ_INT(lagscope__web_cookie_find("a=1", "a", NULL, 8), ENOENT);
  out[0] = 'x';
  CHECK_EQ_INT(lagscope__web_cookie_find("a=1", "a", out, 0), ENOENT);
  CHECK_EQ_INT(out[0], 'x'); /* out_size 0: nothing written */
  CHECK_EQ_INT(lagscope__web_cookie_find("a=1", "a", out, sizeof out), 0);
  CHECK(strcmp(out, "1") == 0);
}

/* A value that does not fit is treated as absent, never cut short (a cut token could match). */
static void test_cookie_bounds(void) {
  char out[5];
  CHECK_EQ_INT(find("lagscope_token=abcd", out, sizeof out), 0);
  CHECK(strcmp(out, "abcd") == 0);
  CHECK_EQ_INT(find("lagscope_token=abcde", out, sizeof out), ENOENT);
  CHECK_EQ_INT(out[0], '\0');
  CHECK_EQ_INT(find("lagscope_token=abcdefgh; lagscope_token=ok", out, sizeof out), 0);
  CHECK(strcmp(out, "ok") == 0);
  CHECK_EQ_INT(find("lagscope_token=", out, 1), 0);
  CHECK_EQ_INT(find("lagscope_token=a", out, 1), ENOENT);
}

static int host(const char *header, const char *want) {
  char out[64] = "x";
  char *copy = exact_copy(header);
  int ok = lagscope__web_host_of(copy, out, sizeof out);
  free(copy);
  if (!ok) return want == NULL && out[0] == '\0';
  return want != NULL && strcmp(out, want) == 0;
}

/* The Host header's host: lower-cased, without port, brackets or final dot; junk refused. */
static void test_host_of(void) {
  CHECK(host("127.0.0.1:8080", "127.0.0.1"));
  CHECK(host("127.0.0.1", "127.0.0.1"));
  CHECK(host("LocalHost.:80", "localhost"));
  CHECK(host("[::1]:8080", "::1"));
  CHECK(host("[fe80::1]", "fe80::1"));
  CHECK(host("my-laptop.local", "my-laptop.local"));
  CHECK(host("", NULL));
  CHECK(host(":8080", NULL));
  CHECK(host("127.0.0.1:", NULL));
  CHECK(host("127.0.0.1:port", NULL));
  CHECK(host("127.0.0.1:123456", NULL));
  CHECK(host("127.0.0.1:80@evil.example", NULL));
  CHECK(host("evil.example/x", NULL));
  CHECK(host("[::1", NULL));
  CHECK(host("[::1]x", NULL));
  CHECK(host("a b", NULL));
  CHECK(host("[a.b]", NULL) || host("[a.b]", "a.b")); /* not an address: the server refuses it */
  CHECK(host("0123456789012345678901234567890123456789012345678901234567890123456789", NULL));
  char out[4];
  CHECK_EQ_INT(lagscope__web_host_of(NULL, out, sizeof out), 0);
  CHECK_EQ_INT(lagscope__web_host_of("a", NULL, 0), 0);
}

static void test_origin(void) {
  CHECK_EQ_INT(lagscope__web_origin_is_host("http://127.0.0.1:8080", "127.0.0.1:8080"), 1);
  CHECK_EQ_INT(lagscope__web_origin_is_host("HTTP://LOCALHOST:8080", "localhost:8080"), 1);
  CHECK_EQ_INT(lagscope__web_origin_is_host("http://127.0.0.1:8081", "127.0.0.1:8080"), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host("https://127.0.0.1:8080", "127.0.0.1:8080"), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host("null", "127.0.0.1:8080"), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host("http://evil.example", "127.0.0.1:8080"), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host("http://127.0.0.1:8080", NULL), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host("http://", ""), 0);
  CHECK_EQ_INT(lagscope__web_origin_is_host(NULL, "127.0.0.1"), 0);
}

static int decode(const char *raw, const char *want) {
  char out[64] = "x";
  int ok = lagscope__web_path_decode(raw, out, sizeof out);
  if (!ok) return want == NULL;
  return want != NULL && strcmp(out, want) == 0;
}

/* An encoded NUL would cut the path short ("/viewer.js%00.html" served viewer.js): refused. */
static void test_path_decode(void) {
  CHECK(decode("/api/v1/status", "/api/v1/status"));
  CHECK(decode("/api/v1/stat%75s", "/api/v1/status"));
  CHECK(decode("/viewer%2Ejs", "/viewer.js"));
  CHECK(decode("/api/v1/status%00", NULL));
  CHECK(decode("/viewer.js%00.html", NULL));
  CHECK(decode("/%2", NULL));
  CHECK(decode("/%", NULL));
  CHECK(decode("/%zz", NULL));
  CHECK(decode("/%0g", NULL));
  CHECK(decode("", ""));
  char small[4];
  CHECK_EQ_INT(lagscope__web_path_decode("/abcd", small, sizeof small), 0); /* never cut short */
  CHECK_EQ_INT(lagscope__web_path_decode("/ab", small, sizeof small), 1);
  CHECK_EQ_INT(lagscope__web_path_decode(NULL, small, sizeof small), 0);
}

/* The framing of a request's headers (issue 31, item 10): which Host or Origin is meant, where
 * the body ends. Each list ends with a NULL name. */
static const char *framing(const char *const *pairs) {
  lagscope__web_header headers[16];
  int n = 0;
  for (; pairs[2 * n] != NULL; n++) headers[n] = (lagscope__web_header){pairs[2 * n], pairs[2 * n + 1]};
  return lagscope__web_framing_problem(headers, n);
}

static void test_framing(void) {
  const char *fine[] = {"Host", "127.0.0.1:8080", "Origin", "http://127.0.0.1:8080",
                        "Authorization", "Bearer x", "Cookie", "a=b", "Content-Length", "5",
                        "content-length", "5", "Accept", "*/*", "Accept", "text/html", NULL};
  CHECK(framing(fine) == NULL);
  const char *chunked[] = {"Host", "h", "Transfer-Encoding", "Chunked", NULL};
  CHECK(framing(chunked) == NULL);
  const char *none[] = {NULL};
  CHECK(framing(none) == NULL);
  /* Repeated, in any case: refused, whether or not the values agree. */
  const char *hosts[] = {"Host", "127.0.0.1", "host", "evil.example", NULL};
  CHECK(framing(hosts) != NULL && strstr(framing(hosts), "Host") != NULL);
  const char *same_hosts[] = {"Host", "127.0.0.1", "Host", "127.0.0.1", NULL};
  CHECK(framing(same_hosts) != NULL);
  const char *origins[] = {"Origin", "http://127.0.0.1", "ORIGIN", "http://evil.example", NULL};
  CHECK(framing(origins) != NULL && strstr(framing(origins), "Origin") != NULL);
  const char *auths[] = {"Authorization", "Bearer a", "Authorization", "Bearer b", NULL};
  CHECK(framing(auths) != NULL);
  const char *cookies[] = {"Cookie", "a=b", "Cookie", "c=d", NULL};
  CHECK(framing(cookies) != NULL);
  const char *encodings[] = {"Transfer-Encoding", "chunked", "Transfer-Encoding", "chunked", NULL};
  CHECK(framing(encodings) != NULL);
  /* Content-Length: digits only, and two must agree. */
  const char *bad_lengths[] = {"5, 0", "5,5", "+5", "-1", "", " 5", "5 ", "0x5", "5a",
                               "1234567890123456789", NULL};
  for (int i = 0; bad_lengths[i] != NULL; i++) {
    const char *one[] = {"Content-Length", bad_lengths[i], NULL};
    CHECK(framing(one) != NULL);
  }
  const char *disagree[] = {"Content-Length", "0", "Content-Length", "4", NULL};
  CHECK(strstr(framing(disagree), "disagree") != NULL);
  const char *both[] = {"Content-Length", "4", "Transfer-Encoding", "chunked", NULL};
  CHECK(framing(both) != NULL);
  const char *gzip[] = {"Transfer-Encoding", "gzip, chunked", NULL};
  CHECK(framing(gzip) != NULL);
  const char *identity[] = {"Transfer-Encoding", "identity", NULL};
  CHECK(framing(identity) != NULL);
  lagscope__web_header h = {"Content-Length", NULL};
  CHECK(lagscope__web_framing_problem(&h, 1) != NULL);
}

static const test_case cases[] = {
    TEST_CASE(token_equal),
    TEST_CASE(cookie_find),
    TEST_CASE(cookie_bounds),
    TEST_CASE(host_of),
    TEST_CASE(origin),
    TEST_CASE(path_decode),
    TEST_CASE(framing),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
