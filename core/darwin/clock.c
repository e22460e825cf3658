/* Clocks. mach_absolute_time counts while the process is stopped (a debugger, SIGSTOP) and
 * stops only while the machine sleeps, as CLOCK_MONOTONIC does on Linux: the watchdog relies
 * on that to notice that it was itself not running. (mach_continuous_time would also count
 * system sleep, which would make every wake from sleep look like a stop of the process.) */
#include "../internal.h"

#include <mach/kern_return.h>
#include <mach/mach_time.h>
#include <time.h>

/* The timebase is fixed for the machine's life: 1/1 on Intel, 125/3 on Apple silicon. Read
 * once, kept as numer << 32 | denom in one atomic word (0: not read yet); two threads racing
 * to read it store the same value. */
static _Atomic uint64_t timebase_word;

static uint64_t read_timebase(void) {
  uint64_t word = atomic_load_explicit(&timebase_word, memory_order_relaxed);
  if (word != 0) return word;
  mach_timebase_info_data_t tb = {1, 1};
  if (mach_timebase_info(&tb) != KERN_SUCCESS || tb.denom == 0) tb.numer = tb.denom = 1;
  word = (uint64_t)tb.numer << 32 | tb.denom;
  atomic_store_explicit(&timebase_word, word, memory_order_relaxed);
  return word;
}

uint64_t lagscope__now_ns(void) {
  uint64_t word = read_timebase();
  uint64_t numer = word >> 32, denom = word & 0xffffffffu;
  uint64_t t = mach_absolute_time();
  /* Split so that t * numer cannot overflow 64 bits (125 * ticks would after ~4 days). */
  return t / denom * numer + t % denom * numer / denom;
}

int64_t lagscope__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
