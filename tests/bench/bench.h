/*
 * Small helpers shared by the benchmarks in tests/bench/: a clock, a median, argument parsing
 * and the table every benchmark prints.
 *
 * The project's rule: a benchmark prints figures, each next to a baseline measured in the same
 * run, because absolute times on a shared machine are noisy while ratios hold. No benchmark
 * asserts a speed; it exits 0 when it ran, BENCH_SKIP when lagscope is compiled out, and
 * another non-zero code only when something broke.
 */
#ifndef LAGSCOPE_BENCH_H
#define LAGSCOPE_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CTest's SKIP_RETURN_CODE for every benchmark: lagscope is disabled in this build, so there
 * is nothing to measure (timing a no-op would print a flattering lie). */
#define BENCH_SKIP 77

static inline uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bench_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median resists the outliers a noisy machine produces (a run that was preempted). Sorts
 * values in place. */
static inline double bench_median(double *values, size_t n) {
  if (n == 0) return 0.0;
  qsort(values, n, sizeof *values, bench_compare_doubles);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

/* "--name N" on the command line, else fallback. A bad value is a usage error (exit 2), never
 * silently the default: a quick run that quietly ran at full length would waste CI time. */
static inline unsigned bench_arg_uint(int argc, char **argv, const char *name, unsigned fallback,
                                      unsigned min) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], name) != 0) continue;
    char *end = NULL;
    unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], &end, 10) : 0;
    if (end == NULL || end == argv[i + 1] || *end != '\0' || v < min || v > 100000000ul) {
      fprintf(stderr, "usage: %s %s N (an integer >= %u)\n", argv[0], name, min);
      exit(2);
    }
    return (unsigned)v;
  }
  return fallback;
}

/* The table: figure | value | baseline | ratio | goal. Goal is last so that non-ASCII text
 * there (≤, ≥) does not break the alignment of the other columns. */
static inline void bench_table_begin(const char *title) {
  printf("\n%s\n", title);
  printf("%-44s %14s  %-30s %8s  %s\n", "figure", "value", "baseline", "ratio", "goal");
  printf("%-44s %14s  %-30s %8s  %s\n", "------", "-----", "--------", "-----", "----");
}

static inline void bench_row(const char *figure, const char *value, const char *baseline,
                             const char *ratio, const char *goal) {
  printf("%-44s %14s  %-30s %8s  %s\n", figure, value, baseline, ratio, goal);
}

/* "1.23x", or "-" when there is no meaningful ratio. */
static inline const char *bench_ratio(char *buf, size_t size, double value, double baseline) {
  if (baseline <= 0.0) {
    snprintf(buf, size, "-");
  } else {
    snprintf(buf, size, "%.2fx", value / baseline);
  }
  return buf;
}

#endif /* LAGSCOPE_BENCH_H */
