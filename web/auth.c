/*
 * The viewer's access checks that need no server: comparing a token without leaking, through
 * timing, how much of it was right, finding the token's cookie in a Cookie header, and reading
 * the Host, Origin and request target that the server checks before any route.
 */
#include "web.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

/* Every byte of the longer string is compared, and the loop never stops early: a guess that
 * shares a longer prefix with the token takes no longer to refuse. A string past its end
 * compares as NUL bytes, and a length difference alone makes the result 0. */
int lagscope__web_token_equal(const char *a, const char *b) {
  if (a == NULL || b == NULL) return 0;
  size_t a_n = strlen(a), b_n = strlen(b);
  size_t n = a_n > b_n ? a_n : b_n;
  size_t diff = a_n ^ b_n;
  for (size_t i = 0; i < n; i++) {
    unsigned char x = i < a_n ? (unsigned char)a[i] : 0;
    unsigned char y = i < b_n ? (unsigned char)b[i] : 0;
    diff |= (size_t)(x ^ y);
  }
  return diff == 0;
}

static int cookie_space(char c) { return c == ' ' || c == '\t'; }

/* The pair [s, s + n) with surrounding spaces removed. */
static void trim(const char **s, size_t *n) {
  while (*n > 0 && cookie_space(**s)) (*s)++, (*n)--;
  while (*n > 0 && cookie_space((*s)[*n - 1])) (*n)--;
}

/* RFC 6265 lets a value be wrapped in double quotes, which are not part of it. */
static void unquote(const char **s, size_t *n) {
  if (*n >= 2 && (*s)[0] == '"' && (*s)[*n - 1] == '"') (*s)++, *n -= 2;
}

/* One "name=value" pair of the header; 1 when it is the cookie wanted and was copied. */
static int cookie_pair(const char *pair, size_t n, const char *name, char *out, size_t out_size) {
  const char *eq = memchr(pair, '=', n);
  if (eq == NULL) return 0;
  const char *key = pair, *value = eq + 1;
  size_t key_n = (size_t)(eq - pair), value_n = n - key_n - 1;
  trim(&key, &key_n);
  if (key_n != strlen(name) || memcmp(key, name, key_n) != 0) return 0;
  trim(&value, &value_n);
  unquote(&value, &value_n);
  if (value_n >= out_size) return 0; /* too long to be the token: treated as absent */
  memcpy(out, value, value_n);
  out[value_n] = '\0';
  return 1;
}

/* Pairs are separated by ';' (RFC 6265's "; ", spaces tolerated). The first pair of that exact
 * name wins, as browsers send the most specific cookie first. */
int lagscope__web_cookie_find(const char *header, const char *name, char *out, size_t out_size) {
  if (out == NULL || out_size == 0) return ENOENT;
  out[0] = '\0';
  if (header == NULL || name == NULL || name[0] == '\0') return ENOENT;
  const char *pair = header;
  for (;;) {
    size_t n = strcspn(pair, ";");
    if (cookie_pair(pair, n, name, out, out_size)) return 0;
    if (pair[n] == '\0') return ENOENT;
    pair += n + 1;
  }
}

/* ---- Host, Origin, the request target ---- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static int port_valid(const char *p) {
  if (*p == '\0') return 1; /* no port */
  if (*p != ':') return 0;
  size_t n = strspn(p + 1, "0123456789");
  return n >= 1 && n <= 5 && p[1 + n] == '\0';
}

int lagscope__web_host_of(const char *header, char *out, size_t out_size) {
  if (out == NULL || out_size == 0) return 0;
  out[0] = '\0';
  if (header == NULL) return 0;
  const char *start = header, *end;
  if (*header == '[') { /* an IPv6 literal */
    start = header + 1;
    end = strchr(start, ']');
    if (end == NULL || !port_valid(end + 1)) return 0;
  } else {
    end = header + strcspn(header, ":");
    if (!port_valid(end)) return 0;
  }
  size_t n = (size_t)(end - start);
  if (n > 0 && start[n - 1] == '.' && *header != '[') n--; /* "host." is "host" */
  if (n == 0 || n >= out_size) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = lower(start[i]);
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             (*header == '[' && c == ':');
    if (!ok) {
      out[0] = '\0';
      return 0;
    }
    out[i] = c;
  }
  out[n] = '\0';
  return 1;
}

int lagscope__web_origin_is_host(const char *origin, const char *host_header) {
  if (origin == NULL || host_header == NULL || host_header[0] == '\0') return 0;
  if (strncasecmp(origin, "http://", 7) != 0) return 0;
  return strcasecmp(origin + 7, host_header) == 0;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int lagscope__web_path_decode(const char *raw, char *out, size_t out_size) {
  if (raw == NULL || out == NULL || out_size == 0) return 0;
  size_t j = 0;
  for (size_t i = 0; raw[i] != '\0'; i++) {
    if (j + 1 >= out_size) return 0;
    char c = raw[i];
    if (c == '%') {
      int hi = hex_value(raw[i + 1]), lo = hi < 0 ? -1 : hex_value(raw[i + 2]);
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return 0;
      c = (char)(hi * 16 + lo);
      i += 2;
    }
    out[j++] = c;
  }
  out[j] = '\0';
  return 1;
}

/* ---- framing: which header a request means, where its body ends -------------------------------- */

/* The headers that may come once: each sentence names it. */
static const char *const single_headers[][2] = {
    {"Host", "the request repeats its Host header"},
    {"Origin", "the request repeats its Origin header"},
    {"Authorization", "the request repeats its Authorization header"},
    {"Cookie", "the request repeats its Cookie header"},
    {"Transfer-Encoding", "the request repeats its Transfer-Encoding header"},
};

/* 1 when s is 1 to 18 decimal digits (no sign, space or list: RFC 9110's 1*DIGIT, and no
 * value that would overflow a 64-bit length). */
static int digits_only(const char *s) {
  size_t n = strspn(s, "0123456789");
  return n >= 1 && n <= 18 && s[n] == '\0';
}

const char *lagscope__web_framing_problem(const lagscope__web_header *headers, int count) {
  const char *length = NULL, *encoding = NULL;
  for (int i = 0; i < count; i++) {
    const char *name = headers[i].name != NULL ? headers[i].name : "";
    const char *value = headers[i].value != NULL ? headers[i].value : "";
    for (size_t k = 0; k < sizeof(single_headers) / sizeof(single_headers[0]); k++) {
      if (strcasecmp(name, single_headers[k][0]) != 0) continue;
      for (int j = 0; j < i; j++)
        if (headers[j].name != NULL && strcasecmp(headers[j].name, name) == 0)
          return single_headers[k][1];
    }
    if (strcasecmp(name, "Content-Length") == 0) {
      if (!digits_only(value)) return "the request's Content-Length is not a number of bytes";
      if (length != NULL && strcmp(length, value) != 0)
        return "the request has Content-Length headers that disagree";
      length = value;
    } else if (strcasecmp(name, "Transfer-Encoding") == 0) {
      encoding = value;
    }
  }
  if (encoding != NULL && strcasecmp(encoding, "chunked") != 0)
    return "the request's Transfer-Encoding is not \"chunked\"";
  if (encoding != NULL && length != NULL)
    return "the request has both a Content-Length and a Transfer-Encoding";
  return NULL;
}
