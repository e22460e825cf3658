/* One CTest per test case. A test file lists its cases once, each on a line of its own:
 *
 *   static const test_case cases[] = {
 *     TEST_CASE(open),
 *     TEST_CASE(write_and_ids),
 *   };
 *   int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
 *
 * and tests/cases.cmake's lagscope_add_test_cases() reads those lines, so that CMake adds one
 * test per case (`PREFIX_open`, …) running `program open`: a failing case aborts its own
 * process only, and the others still run and report. `program` alone runs every case. */
#ifndef LAGSCOPE_TEST_CASES_H
#define LAGSCOPE_TEST_CASES_H

#include <stdio.h>
#include <string.h>

typedef struct test_case {
  const char *name;
  void (*run)(void);
} test_case;

#define TEST_CASE(name) {#name, test_##name}
#define CASE_COUNT(cases) (sizeof(cases) / sizeof((cases)[0]))

/* Runs the case argv[1] names, or all of them; 2 for a name that is not a case. */
static inline int run_test_case(int argc, char **argv, const test_case *cases, size_t count) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (size_t i = 0; i < count; i++) {
    if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) continue;
    printf("case %s\n", cases[i].name);
    cases[i].run();
    if (argc > 1) return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "%s: no test case named \"%s\"\n", argv[0], argv[1]);
    return 2;
  }
  return 0;
}

#endif
