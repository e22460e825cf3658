/* What the tests' own programs for lagscope-run share (gtk_stall, glib_pings): a clock for
 * their stalls and their numeric options. They know nothing of lagscope. */
#ifndef LAGSCOPE_TEST_ATTACH_SUBJECT_H
#define LAGSCOPE_TEST_ATTACH_SUBJECT_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The monotonic clock in ms. Not inlined, so that a stall's stack names it. */
__attribute__((noinline)) static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The number after option argv[*i], which *i then points at; exits 2 when none follows. */
static unsigned number_after(const char *program, int *i, int argc, char **argv) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: %s needs a value\n", program, argv[*i]);
    exit(2);
  }
  return (unsigned)strtoul(argv[++*i], NULL, 10);
}

#endif
