/* private_stall's code, in its private library (libprivate_stall.so.0): a GLib main loop, one
 * stall of --stall-ms (default 700) spinning on the CPU in private_stall_callback after 1000 ms,
 * then it quits. The hang must name private_stall_callback, not the program's main. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned stall_ms = 700;

static double clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Not inlined, so that the stack holds it by name; the spin is its own code, not clock_ms's. */
__attribute__((noinline)) static gboolean private_stall_callback(gpointer loop) {
  double end = clock_ms() + stall_ms;
  volatile unsigned long spins = 0;
  for (;;) {
    for (int i = 0; i < 100000; i++) spins++;
    if (clock_ms() >= end) break;
  }
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

__attribute__((visibility("default"))) int private_stall_main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stall-ms") == 0 && i + 1 < argc) {
      stall_ms = (unsigned)strtoul(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "private_stall: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(1000, private_stall_callback, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  return 0;
}
