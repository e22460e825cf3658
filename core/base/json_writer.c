/* JSON written straight into text, for documents too large to build as a cJSON tree first: a
 * hang report's call tree and every thread's stack are tens of thousands of items, and as cJSON
 * items they were a megabyte of small mallocs at once, which glibc then kept in the monitor's
 * arena for the life of the app. Here the only memory is the text itself, in lagscope's heap
 * (its own mappings past a few KiB, returned when freed).
 *
 * No nesting is tracked: a separator is needed exactly when the text so far does not end a
 * "{", a "[" or a key's ":". Strings are escaped as cJSON escapes them, and bytes that are not
 * valid UTF-8 become U+FFFD so that what the OS hands us (paths, thread names, symbols) keeps
 * the document valid. After a failed allocation every call does nothing and finish says so. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Room for `more` bytes and the NUL after them; 0, or -1 (and failed) when none was given. A */
static int reserve(lagscope__json_writer *w, size_t more) {
  if (w->failed) return -1;
  if (w->len + more + 1 <= w->cap) return 0;
  size_t cap = w->cap != 0 ? w->cap : 256;
  while (cap < w->len + more + 1) {
    if (cap > SIZE_MAX / 2) {
      w->failed = 1;
      return -1;
    }
    cap *= 2;
  }
  char *bigger = lagscope__alloc(cap);
  if (bigger == NULL) {
    w->failed = 1;
    return -1;
  }
  if (w->text != NULL) memcpy(bigger, w->text, w->len + 1);
  lagscope__dealloc(w->text);
  w->text = bigger;
  w->cap = cap;
  return 0;
}

static void put_bytes(lagscope__json_writer *w, const char *bytes, size_t n) {
  if (reserve(w, n) != 0) return;
  memcpy(w->text + w->len, bytes, n);
  w->len += n;
  w->text[w->len] = '\0';
}

static void put_text(lagscope__json_writer *w, const char *text) {
  put_bytes(w, text, strlen(text));
}

size_t lagscope__utf8_sequence(const unsigned char *s) {
  if (s[0] < 0x80) return 1;
  size_t n;
  uint32_t min;
  if ((s[0] & 0xE0) == 0xC0) n = 2, min = 0x80;
  else if ((s[0] & 0xF0) == 0xE0) n = 3, min = 0x800;
  else if ((s[0] & 0xF8) == 0xF0) n = 4, min = 0x10000;
  else return 0;
  uint32_t c = s[0] & (0x7F >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
    c = (c << 6) | (s[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  return n;
}

/* Numbers are written as text, not by cJSON: it prints each with sprintf and reads it
 * back with sscanf, and on an idle app's path (a metrics event each sample interval) those are
 * the only callers of libc's formatting code, whose pages they make resident (measured
 * 2026-11: 64 KiB of them, and ~1 µs a number). */

size_t lagscope__json_u64_text(uint64_t value, char *out) {
  char reversed[20];
  size_t n = 0;
  do {
    reversed[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < n; i++) out[i] = reversed[n - 1 - i];
  out[n] = '\0';
  return n;
}

size_t lagscope__json_i64_text(int64_t value, char *out) {
  if (value >= 0) return lagscope__json_u64_text((uint64_t)value, out);
  out[0] = '-';
  return 1 + lagscope__json_u64_text(0 - (uint64_t)value, out + 1);
}

/* A measurement rounded to 0.001, as thousandths: "12.345", "-0.5", "3"; 0 when it is too
 * large for that (then lagscope__jw_measure writes all its digits). Measurements as decimals
 * people read: 0.001 is finer than any of them is accurate. Rounded by hand, half away from
 * zero as round() does: round() would be libm's only call on an idle app's path (a metrics
 * event each sample interval), and its first call makes libm's pages resident. The text
 * reads back as round(value * 1000) / 1000 (unit_json_numbers). F */
int lagscope__json_measure_text(double value, char *out) {
  double scaled = value * 1000.0;
  if (!(fabs(scaled) < 4e15)) return 0; /* NaN too */
  int64_t thousandths = (int64_t)scaled; /* toward zero, then half away from zero */
  double fraction = scaled - (double)thousandths;
  if (fraction >= 0.5) thousandths++;
  else if (fraction <= -0.5) thousandths--; /* not scaled + 0.5: 0.49999999999999994 + 0.5 is 1 */
  uint64_t magnitude = thousandths < 0 ? 0 - (uint64_t)thousandths : (uint64_t)thousandths;
  size_t n = 0;
  if (thousandths < 0) out[n++] = '-';
  n += lagscope__json_u64_text(magnitude / 1000, out + n);
  unsigned fraction_digits = (unsigned)(magnitude % 1000);
  if (fraction_digits != 0) {
    out[n++] = '.';
    for (unsigned unit = 100; unit > 0 && fraction_digits != 0; unit /= 10) {
      out[n++] = (char)('0' + fraction_digits / unit);
      fraction_digits %= unit;
    }
  }
  out[n] = '\0';
  return 1;
}

/* text as a JSON string, quotes included. A */
static void put_string(lagscope__json_writer *w, const char *text) {
  static const char hex[] = "0123456789abcdef";
  put_bytes(w, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0';) {
    size_t n = lagscope__utf8_sequence(p);
    if (n == 0) {
      put_bytes(w, "\xEF\xBF\xBD", 3);
      p++;
      continue;
    }
    char escaped[6] = {'\\', 0, '0', '0', 0, 0};
    size_t escaped_len = 2;
    switch (*p) {
      case '"': escaped[1] = '"'; break;
      case '\\': escaped[1] = '\\'; break;
      case '\b': escaped[1] = 'b'; break;
      case '\f': escaped[1] = 'f'; break;
      case '\n': escaped[1] = 'n'; break;
      case '\r': escaped[1] = 'r'; break;
      case '\t': escaped[1] = 't'; break;
      default:
        if (*p >= 0x20) {
          put_bytes(w, (const char *)p, n);
          p += n;
          continue;
        }
        escaped[1] = 'u', escaped[4] = hex[*p >> 4], escaped[5] = hex[*p & 15];
        escaped_len = 6;
    }
    put_bytes(w, escaped, escaped_len);
    p++;
  }
  put_bytes(w, "\"", 1);
}

/* The separator the next value needs, and its key when it is an object's member. A */
static void put_key(lagscope__json_writer *w, const char *key) {
  if (w->len > 0) {
    char last = w->text[w->len - 1];
    if (last != '{' && last != '[' && last != ':') put_bytes(w, ",", 1);
  }
  if (key == NULL) return;
  put_string(w, key);
  put_bytes(w, ":", 1);
}

void lagscope__jw_begin_object(lagscope__json_writer *w, const char *key) {
  put_key(w, key);
  put_bytes(w, "{", 1);
}

void lagscope__jw_end_object(lagscope__json_writer *w) { put_bytes(w, "}", 1); }

void lagscope__jw_begin_array(lagscope__json_writer *w, const char *key) {
  put_key(w, key);
  put_bytes(w, "[", 1);
}

void lagscope__jw_end_array(lagscope__json_writer *w) { put_bytes(w, "]", 1); }

void lagscope__jw_string(lagscope__json_writer *w, const char *key, const char *text) {
  put_key(w, key);
  if (text != NULL) put_string(w, text);
  else put_text(w, "null");
}

void lagscope__jw_hex(lagscope__json_writer *w, const char *key, uintptr_t value) {
  char text[2 + 2 * sizeof(uintptr_t) + 3], reversed[2 * sizeof(uintptr_t)];
  size_t n = 0, len = 0;
  do {
    reversed[n++] = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value != 0);
  text[len++] = '"', text[len++] = '0', text[len++] = 'x';
  while (n > 0) text[len++] = reversed[--n];
  text[len++] = '"';
  put_key(w, key);
  put_bytes(w, text, len);
}

void lagscope__jw_u64(lagscope__json_writer *w, const char *key, uint64_t value) {
  char text[24];
  lagscope__json_u64_text(value, text);
  put_key(w, key);
  put_text(w, text);
}

void lagscope__jw_i64(lagscope__json_writer *w, const char *key, int64_t value) {
  put_key(w, key);
  if (value < 0) put_bytes(w, "-", 1);
  char text[24];
  lagscope__json_u64_text(value < 0 ? 0 - (uint64_t)value : (uint64_t)value, text);
  put_text(w, text);
}

/* A measurement to 0.001 (lagscope__json_measure_text); null when it is not a number. */
void lagscope__jw_measure(lagscope__json_writer *w, const char *key, double value) {
  char text[40];
  put_key(w, key);
  if (value != value || value - value != 0.0) { /* NaN or infinite */
    put_text(w, "null");
    return;
  }
  if (!lagscope__json_measure_text(value, text)) /* beyond 4e12: no fraction to round */
    snprintf(text, sizeof(text), "%1.17g", value);
  put_text(w, text);
}

void lagscope__jw_bool(lagscope__json_writer *w, const char *key, int value) {
  put_key(w, key);
  put_text(w, value ? "true" : "false");
}

void lagscope__jw_null(lagscope__json_writer *w, const char *key) {
  put_key(w, key);
  put_text(w, "null");
}

void lagscope__jw_raw(lagscope__json_writer *w, const char *key, const char *json) {
  put_key(w, key);
  put_text(w, json);
}

char *lagscope__jw_finish(lagscope__json_writer *w) {
  if (w->failed || reserve(w, 0) != 0) {
    lagscope__jw_discard(w);
    return NULL;
  }
  char *text = w->text;
  size_t length = w->len + 1, cap = w->cap;
  *w = (lagscope__json_writer){0};
  /* Kept at its length: a small text (a metrics tick, of which the viewer keeps a minute) or
   * one that uses half of its block or less. */
  if (length < 65536 || length <= cap / 2) {
    char *exact = lagscope__alloc(length);
    if (exact != NULL) {
      memcpy(exact, text, length);
      lagscope__dealloc(text);
      text = exact;
    }
  }
  return text;
}

void lagscope__jw_discard(lagscope__json_writer *w) {
  lagscope__dealloc(w->text);
  *w = (lagscope__json_writer){0};
}
