/* Clocks. CLOCK_MONOTONIC keeps counting while the process is stopped (SIGSTOP, a debugger),
 * which is what lets the watchdog notice that it was itself not running. */
#define _GNU_SOURCE
#include "../internal.h"

#include <time.h>

uint64_t lagscope__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t lagscope__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
