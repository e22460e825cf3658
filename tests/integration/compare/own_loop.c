/* A program with a loop of its own, none of those lagscope-run hooks (GLib, SDL2, GL, Xlib),
 * for run_gate.test.sh: ten turns of 50 ms, the fifth stalling 900 ms, then exit 0. From
 * outside nothing of it can be watched: lagscope-run must say so, not "no hang". */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Not inlined: the stall has a name of its own. */
__attribute__((noinline)) static void own_loop_stall(void) { sleep_ms(900); }

int main(void) {
  for (int turn = 0; turn < 10; turn++) {
    if (turn == 4) own_loop_stall();
    sleep_ms(50);
  }
  return 0;
}
