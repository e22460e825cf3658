/* A virtual X screen for tests: Xvfb on a display number it picks itself. */
#ifndef LAGSCOPE_TEST_XVFB_H
#define LAGSCOPE_TEST_XVFB_H

#include <stddef.h>

#include "spawn.h"

/* Starts Xvfb (path) with a 1024x768x24 screen and no TCP, waits at most timeout_ms until it
 * accepts connections (-displayfd: it writes its number then) and puts ":N" in display.
 * 0, or -1 with why (Xvfb's stderr) in why. */
int xvfb_start(spawn_proc *xvfb, const char *path, char *display, size_t size, int timeout_ms,
               char *why, size_t why_size);

/* Ends it (SIGTERM, then at most 5 s). */
void xvfb_stop(spawn_proc *xvfb);

#endif
