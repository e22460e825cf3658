/* JSON checked and read without being built: the store reads every report in its folder at
 * each start and before serving one, and as cJSON items a large report was tens of megabytes of
 * small mallocs, kept by glibc in the reading thread's arena for the life of the app. Here a
 * scan with a bit per nesting level says whether the text is JSON, and where it stops being
 * so; a second, smaller scanner finds a member or an element of text already known to be JSON.
 *
 * Never more lenient than cJSON (every text accepted here cJSON parses too): numbers follow
 * JSON's grammar exactly, escapes are the eight of JSON and \u with four hex digits whose
 * surrogates pair up, nesting stops at LAGSCOPE__JSON_DEPTH_MAX levels, and a UTF-8 byte order mark, which
 * cJSON skips, is refused. A string may hold raw bytes of any value, as in cJSON. No
 * allocation, no lock. */
#include "internal.h"

#include <string.h>

#define NESTING_MAX LAGSCOPE__JSON_DEPTH_MAX /* base.h: every parse keeps to it */

typedef struct scan {
  const unsigned char *s;
  size_t i, n;
} scan;

static void skip_space(scan *c) {
  while (c->i < c->n &&
         (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
    c->i++;
}

static int hex_value(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* The UTF-16 unit of "\uXXXX" at i (i at the backslash); -1 when it is not one. */
static long utf16_unit(const scan *c, size_t i) {
  if (i + 6 > c->n || c->s[i] != '\\' || c->s[i + 1] != 'u') return -1;
  long unit = 0;
  for (size_t k = 2; k < 6; k++) {
    int v = hex_value(c->s[i + k]);
    if (v < 0) return -1;
    unit = unit * 16 + v;
  }
  return unit;
}

/* The code point of the \u escape at i and its length (6, or 12 for a surrogate pair); 0 when
 * it is not a valid one. */
static size_t code_point(const scan *c, size_t i, uint32_t *out) {
  long unit = utf16_unit(c, i);
  if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return 0;
  if (unit < 0xD800 || unit > 0xDBFF) {
    *out = (uint32_t)unit;
    return 6;
  }
  long low = utf16_unit(c, i + 6);
  if (low < 0xDC00 || low > 0xDFFF) return 0;
  *out = 0x10000 + (((uint32_t)unit - 0xD800) << 10) + ((uint32_t)low - 0xDC00);
  return 12;
}

/* Past the string at c->i (at its quote); 0 when it is not one. */
static int skip_string(scan *c) {
  for (c->i++; c->i < c->n;) {
    unsigned char ch = c->s[c->i];
    if (ch == '"') {
      c->i++;
      return 1;
    }
    if (ch != '\\') {
      c->i++;
      continue;
    }
    if (c->i + 1 >= c->n) return 0;
    ch = c->s[c->i + 1];
    if (ch == 'u') {
      uint32_t point;
      size_t len = code_point(c, c->i, &point);
      if (len == 0) return 0;
      c->i += len;
    } else if (ch == '"' || ch == '\\' || ch == '/' || ch == 'b' || ch == 'f' || ch == 'n' ||
               ch == 'r' || ch == 't') {
      c->i += 2;
    } else {
      return 0;
    }
  }
  return 0;
}

static size_t digits(scan *c) {
  size_t from = c->i;
  while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
  return c->i - from;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int skip_number(scan *c) {
  if (c->s[c->i] == '-') c->i++;
  if (c->i < c->n && c->s[c->i] == '0') c->i++;
  else if (digits(c) == 0) return 0;
  if (c->i < c->n && c->s[c->i] == '.') {
    c->i++;
    if (digits(c) == 0) return 0;
  }
  if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
    c->i++;
    if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
    if (digits(c) == 0) return 0;
  }
  return 1;
}

static int skip_word(scan *c, const char *word) {
  size_t len = strlen(word);
  if (c->n - c->i < len || memcmp(c->s + c->i, word, len) != 0) return 0;
  c->i += len;
  return 1;
}

/* A scalar at c->i: a string, number, true, false or null. */
static int skip_scalar(scan *c) {
  unsigned char ch = c->s[c->i];
  if (ch == '"') return skip_string(c);
  if (ch == '-' || (ch >= '0' && ch <= '9')) return skip_number(c);
  return skip_word(c, "true") || skip_word(c, "false") || skip_word(c, "null");
}

/* An object's key and its colon, from c->i. */
static int skip_key(scan *c) {
  skip_space(c);
  if (c->i >= c->n || c->s[c->i] != '"' || !skip_string(c)) return 0;
  skip_space(c);
  if (c->i >= c->n || c->s[c->i] != ':') return 0;
  c->i++;
  return 1;
}

int lagscope__json_check(const char *text, size_t len, size_t *end) {
  scan c = {(const unsigned char *)text, 0, len};
  unsigned char is_object[NESTING_MAX / 8 + 1]; /* a bit per open level */
  int depth = 0;
  for (;;) {
    /* A value. */
    skip_space(&c);
    if (c.i >= c.n) break;
    unsigned char ch = c.s[c.i];
    if (ch == '{' || ch == '[') {
      if (depth == NESTING_MAX) break;
      if (ch == '{') is_object[depth / 8] |= (unsigned char)(1u << (depth % 8));
      else is_object[depth / 8] &= (unsigned char)~(1u << (depth % 8));
      depth++;
      c.i++;
      skip_space(&c);
      if (c.i < c.n && c.s[c.i] == (ch == '{' ? '}' : ']')) {
        c.i++;
        depth--;
      } else {
        if (ch == '{' && !skip_key(&c)) break;
        continue; /* the container's first value */
      }
    } else if (!skip_scalar(&c)) {
      break;
    }
    /* After a value: close what ends here, or go on to the next value. */
    for (;;) {
      if (depth == 0) {
        *end = c.i;
        return 1;
      }
      int object = (is_object[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
      skip_space(&c);
      if (c.i >= c.n) break;
      if (c.s[c.i] == (object ? '}' : ']')) {
        c.i++;
        depth--;
        continue;
      }
      if (c.s[c.i] != ',') break;
      c.i++;
      if (object && !skip_key(&c)) break;
      goto next_value;
    }
    break;
  next_value:;
  }
  *end = c.i;
  return 0;
}

/* UTF-8 of point into out; its length. */
static size_t utf8_of(uint32_t point, char *out) {
  if (point < 0x80) return out[0] = (char)point, 1;
  if (point < 0x800) {
    out[0] = (char)(0xC0 | (point >> 6)), out[1] = (char)(0x80 | (point & 0x3F));
    return 2;
  }
  if (point < 0x10000) {
    out[0] = (char)(0xE0 | (point >> 12)), out[1] = (char)(0x80 | ((point >> 6) & 0x3F));
    out[2] = (char)(0x80 | (point & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (point >> 18)), out[1] = (char)(0x80 | ((point >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((point >> 6) & 0x3F)), out[3] = (char)(0x80 | (point & 0x3F));
  return 4;
}

int lagscope__json_string_text(const char *json, size_t len, char *out, size_t size) {
  scan c = {(const unsigned char *)json, 0, len};
  if (size == 0 || len < 2 || json[0] != '"' || !skip_string(&c) || c.i != len) return 0;
  size_t at = 0;
  for (size_t i = 1; i + 1 < len;) {
    char piece[4];
    size_t piece_len = 1;
    if (json[i] != '\\') {
      piece[0] = json[i++];
    } else if (json[i + 1] == 'u') {
      uint32_t point;
      size_t escape_len = code_point(&c, i, &point);
      piece_len = utf8_of(point, piece);
      i += escape_len;
    } else {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      piece[0] = to[strchr(from, json[i + 1]) - from];
      i += 2;
    }
    if (at + piece_len >= size) return 0;
    memcpy(out + at, piece, piece_len);
    at += piece_len;
  }
  out[at] = '\0';
  return 1;
}

/* ---- reading JSON known to be well-formed ---- */

size_t lagscope__json_skip_space(const char *s, size_t i, size_t n) {
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  return i;
}

static size_t skip_quoted(const char *s, size_t i, size_t n) { /* s[i] == '"' */
  for (i++; i < n; i++) {
    if (s[i] == '\\') i++;
    else if (s[i] == '"') return i + 1;
  }
  return n;
}

/* Where the value that starts at s[i] ends. */
static size_t skip_value(const char *s, size_t i, size_t n) {
  if (i >= n) return n;
  if (s[i] == '"') return skip_quoted(s, i, n);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < n) {
      char c = s[i];
      if (c == '"') {
        i = skip_quoted(s, i, n);
        continue;
      }
      if (c == '{' || c == '[') depth++;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      i++;
    }
    return n;
  }
  while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
         s[i] != '\n' && s[i] != '\r')
    i++;
  return i;
}

int lagscope__json_find_member(const char *s, size_t n, const char *key,
                               lagscope__json_span *value, size_t *close, int *empty) {
  size_t klen = strlen(key);
  *value = (lagscope__json_span){0, 0};
  *empty = 1;
  size_t i = lagscope__json_skip_space(s, 0, n);
  if (i >= n || s[i] != '{') return -1;
  i = lagscope__json_skip_space(s, i + 1, n);
  while (i < n && s[i] != '}') {
    if (s[i] != '"') return -1;
    size_t key_end = skip_quoted(s, i, n);
    int match = key_end - i == klen + 2 && memcmp(s + i + 1, key, klen) == 0;
    i = lagscope__json_skip_space(s, key_end, n);
    if (i >= n || s[i] != ':') return -1;
    i = lagscope__json_skip_space(s, i + 1, n);
    size_t end = skip_value(s, i, n);
    if (match && value->end == 0) *value = (lagscope__json_span){i, end}; /* the first, as cJSON */
    *empty = 0;
    i = lagscope__json_skip_space(s, end, n);
    if (i < n && s[i] == ',') i = lagscope__json_skip_space(s, i + 1, n);
  }
  if (i >= n) return -1;
  *close = i;
  return 0;
}

lagscope__json_span lagscope__json_member_span(const char *s, lagscope__json_span object,
                                               const char *key) {
  lagscope__json_span v;
  size_t close;
  int empty;
  if (lagscope__json_find_member(s + object.start, object.end - object.start, key, &v, &close,
                                 &empty) != 0 ||
      v.end == v.start)
    return (lagscope__json_span){0, 0};
  return (lagscope__json_span){object.start + v.start, object.start + v.end};
}

int lagscope__json_member_text(const char *s, size_t n, const char *key, char *out, size_t size) {
  lagscope__json_span v;
  size_t close;
  int empty;
  return lagscope__json_find_member(s, n, key, &v, &close, &empty) == 0 && v.end > v.start &&
         lagscope__json_string_text(s + v.start, v.end - v.start, out, size);
}

int lagscope__json_next_element(const char *s, size_t n, size_t *at, lagscope__json_span *element) {
  size_t i = lagscope__json_skip_space(s, *at, n);
  if (*at == 0) { /* the array's opening bracket */
    if (i >= n || s[i] != '[') return 0;
    i = lagscope__json_skip_space(s, i + 1, n);
  } else if (i < n && s[i] == ',') {
    i = lagscope__json_skip_space(s, i + 1, n);
  }
  if (i >= n || s[i] == ']') return 0;
  size_t end = skip_value(s, i, n);
  if (end == i) return 0;
  *element = (lagscope__json_span){i, end};
  *at = end;
  return 1;
}
