/* lagscope__json_rounded (the metrics' and reports' 0.001 rounding, written without libm)
 * against libm's round(): the same result for measurements of every size and sign. */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static double by_libm(double value) { return round(value * 1000.0) / 1000.0; }

static void same(double value) {
  double ours = lagscope__json_rounded(value), theirs = by_libm(value);
  CHECK_MSG(ours == theirs, "%.17g: %.17g, round() gives %.17g", value, ours, theirs);
}

int main(void) {
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
  printf("lagscope__json_rounded agrees with round() on 250 146 values\n");
  return 0;
}
