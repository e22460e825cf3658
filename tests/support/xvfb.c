/* A virtual X screen for tests. */
#include "xvfb.h"

#include <signal.h>
#include <stdio.h>

int xvfb_start(spawn_proc *xvfb, const char *path, char *display, size_t size, int timeout_ms,
               char *why, size_t why_size) {
  char *args[] = {(char *)path, "-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten",
                  "tcp", NULL};
  if (spawn_start(xvfb, path, args, SPAWN_CAPTURE_STDERR) != 0) {
    snprintf(why, why_size, "cannot run %s", path);
    return -1;
  }
  char line[64];
  int result = spawn_read_line(xvfb, line, sizeof line, timeout_ms);
  if (result != SPAWN_LINE) {
    char err[2048];
    spawn_wait(xvfb, 1000);
    spawn_stderr(xvfb, err, sizeof err);
    snprintf(why, why_size, "Xvfb did not report its display (result %d): %s", result, err);
    spawn_close(xvfb);
    return -1;
  }
  snprintf(display, size, ":%s", line);
  return 0;
}

void xvfb_stop(spawn_proc *xvfb) {
  spawn_signal(xvfb, SIGTERM);
  spawn_wait(xvfb, 5000);
  spawn_close(xvfb);
}
