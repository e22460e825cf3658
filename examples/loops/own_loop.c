/* Your own loop: lagscope in heartbeat mode around poll() (docs/guide.md "Your own loop").
 *
 * No post_main: the loop calls lagscope_heartbeat() on every pass, and marks its wait for
 * input with lagscope_idle_begin()/lagscope_idle_end(), so that a loop asleep in poll() for a
 * minute is idle, not hung. A pass that takes longer than the threshold is a hang. Here the
 * input is standard input and a timer; the work is a line counter. */
#include "example.h"

#include <poll.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  example_options o = example_parse(argc, argv);
  lagscope_config config = lagscope_config_default();
  config.hud = 0; /* no screen to show it on */
  if (example_start(&o, &config) != LAGSCOPE_OK) return 1; /* on this, the main, thread */

  double start = now_ms();
  int stalled = 0, input_open = 1;
  long lines = 0;
  for (;;) {
    lagscope_heartbeat();
    double elapsed = now_ms() - start;
    if (o.seconds && elapsed >= o.seconds * 1000.0) break;
    if (o.stall_ms && !stalled && elapsed >= 1000) {
      stalled = 1;
      example_stall(o.stall_ms); /* a slow handler: the one hang */
      continue;
    }
    struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
    lagscope_idle_begin();
    int ready = poll(&in, input_open ? 1 : 0, 100);
    lagscope_idle_end();
    if (ready > 0) {
      char buf[4096];
      ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) input_open = 0;
      for (ssize_t i = 0; i < n; i++) lines += buf[i] == '\n';
    }
  }
  lagscope_stop();
  fprintf(stderr, "own_loop: %ld lines read\n", lines);
  return 0;
}
