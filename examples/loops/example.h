/* What the four loop examples share: their command line and how they tell a hang. Each example
 * shows one way to hook lagscope into a main loop (docs/guide.md "GTK / GLib", "SDL2", "Qt",
 * "Your own loop"); everything here is the same in all four and beside the point. */
#ifndef LAGSCOPE_EXAMPLE_H
#define LAGSCOPE_EXAMPLE_H

#if !defined(__cplusplus) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif

#include <lagscope.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct example_options {
  unsigned stall_ms; /* --stall-ms N: one stall of N ms, 1 s after the start (default 0: none) */
  unsigned seconds;  /* --seconds S: quit after S s (default 0: when the window closes) */
  int no_server;     /* --no-server: no viewer */
} example_options;

static inline example_options example_parse(int argc, char **argv) {
  example_options o = {0, 0, 0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-server") == 0) {
      o.no_server = 1;
    } else if (i + 1 < argc && strcmp(argv[i], "--stall-ms") == 0) {
      o.stall_ms = (unsigned)strtoul(argv[++i], NULL, 10);
    } else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0) {
      o.seconds = (unsigned)strtoul(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "usage: %s [--stall-ms N] [--seconds S] [--no-server]\n", argv[0]);
      exit(2);
    }
  }
  return o;
}

/* On a lagscope thread: each hang, one line on stdout. */
static inline void example_on_event(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type != LAGSCOPE_EVENT_HANG_ENDED) return;
  printf("hang: %.0f ms\n", (double)e->as.hang_ended.duration_ns / 1e6);
  fflush(stdout);
}

/* The stall: the CPU busy for ms, as a slow handler would be. */
static inline void example_stall(unsigned ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000.0 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

/* lagscope_start with the example's options and the loop's hook; says why when it fails. */
static inline int example_start(const example_options *o, lagscope_config *config) {
  config->on_event = example_on_event;
  if (o->no_server) config->server = 0;
  int rc = lagscope_start(config);
  if (rc != LAGSCOPE_OK) fprintf(stderr, "lagscope_start: %s\n", lagscope_strerror(rc));
  return rc;
}

#endif
