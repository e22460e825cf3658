/* The numbers as JSON text, written without stdio or libm: a measurement's text
 * (lagscope__json_measure_text, the metrics' and reports' 0.001 rounding) reads back (strtod)
 * as exactly libm's round(value * 1000) / 1000, for measurements of every size and sign; and
 * 64-bit integers come out as printf writes them. */
#include "check.h"
#include "cjson_calls.h"
#include "http.h" /* lagscope__web_json_add_u64, the viewer's */
#include "internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double by_libm(double value) { return round(value * 1000.0) / 1000.0; }

static unsigned long texts_checked;

static void same(double value) {
  double theirs = by_libm(value);
  char text[32];
  if (!lagscope__json_measure_text(value, text)) {
    CHECK_MSG(fabs(value) >= 4e12, "%.17g: no text", value);
    return;
  }
  char *end = NULL;
  double back = strtod(text, &end);
  CHECK_MSG(*end == '\0' && back == theirs, "%.17g: \"%s\" reads as %.17g, round() gives %.17g",
            value, text, back, theirs);
  texts_checked++;
}

/* An integer as the event JSON writes it, against printf. */
static void integer_text(uint64_t u, int64_t i) {
  cJSON *o = cJSON_CreateObject();
  lagscope__web_json_add_u64(o, "u", u);
  lagscope__web_json_add_i64(o, "i", i);
  char *printed = cJSON_PrintUnformatted(o), expected[96];
  snprintf(expected, sizeof(expected), "{\"u\":%" PRIu64 ",\"i\":%" PRId64 "}", u, i);
  CHECK_MSG(strcmp(printed, expected) == 0, "%s, printf: %s", printed, expected);
  free(printed);
  cJSON_Delete(o);
}

int main(void) {
  char why[256];
  CHECK_MSG(lagscope__cjson_load(why, sizeof why) == LAGSCOPE_OK, "%s", why); /* the viewer's */
  const double cases[] = {0.0, -0.0, 0.0004, 0.0005, 0.0015, -0.0005, -0.0015, 1.2345678,
                          16.6667, -16.6667, 0.0625, -0.0625, 250.3, 1e6 + 0.0005, 4e12,
                          -4e12, 1e300, -1e300};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) same(cases[i]);
  /* Either side of every half-thousandth up to 10: where adding 0.5 and truncating goes wrong. */
  for (int k = 0; k < 10000; k++) {
    double half = ((double)k + 0.5) / 1000.0;
    same(half), same(-half);
    same(nextafter(half, 0.0)), same(nextafter(half, 1.0)), same(-nextafter(half, 0.0));
  }
  /* Just below 0.0005, one ulp at a time: one of them scales to 0.49999999999999994. */
  double below = 0.0005;
  for (int i = 0; i < 64; i++) below = nextafter(below, 0.0), same(below), same(-below);
  /* A walk over magnitudes from 1e-6 to 1e12, both signs, with fractions that are not round. */
  uint64_t x = 88172645463325252ull; /* xorshift64: the same values on every run */
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double unit = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
    double magnitude = pow(10.0, (double)(i % 19) - 6.0);
    same((i & 1 ? -1.0 : 1.0) * unit * magnitude);
  }
  const uint64_t unsigned_cases[] = {0, 1, 9, 10, 99, 1000, 4294967295u, 9007199254740993ull,
                                     UINT64_MAX};
  const int64_t signed_cases[] = {0, -1, 1, -10, 123456789, INT64_MIN, INT64_MAX};
  for (size_t i = 0; i < sizeof(unsigned_cases) / sizeof(unsigned_cases[0]); i++)
    for (size_t j = 0; j < sizeof(signed_cases) / sizeof(signed_cases[0]); j++)
      integer_text(unsigned_cases[i], signed_cases[j]);
  CHECK(texts_checked > 250000);
  char text[32];
  CHECK(lagscope__json_measure_text(-0.0625, text) && strcmp(text, "-0.063") == 0);
  CHECK(lagscope__json_measure_text(16.6667, text) && strcmp(text, "16.667") == 0);
  CHECK(lagscope__json_measure_text(60.0, text) && strcmp(text, "60") == 0);
  CHECK(lagscope__json_measure_text(0.5, text) && strcmp(text, "0.5") == 0);
  CHECK(!lagscope__json_measure_text(NAN, text) && !lagscope__json_measure_text(1e300, text));
  printf("%lu measurement texts read back as round() has them; 63 integers as printf writes "
         "them\n", texts_checked);
  return 0;
}
