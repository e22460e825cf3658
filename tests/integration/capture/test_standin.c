/* The stand-in sampler (core/report/standin.c) samples the main thread while the monitor is
 * busy: the main thread spins in standin_spin while another thread, playing the monitor, starts
 * the stand-in, does 300 ms of "slow work" (a sleep), and stops it. The stand-in took a sample
 * about every interval (10 ms) all along, each of the main thread in standin_spin, in time
 * order; once stopped it takes none; started again it starts afresh; and with no room left
 * it counts what was due and writes nothing past its room. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define INTERVAL_NS (10u * 1000u * 1000u)
#define ANSWER_NS (50u * 1000u * 1000u)
#define CAPACITY 100

static _Atomic int stop_spinning;

/* Exported (-rdynamic) so that dladdr names it. */
__attribute__((noinline)) void standin_spin(void) {
  while (!atomic_load(&stop_spinning)) {
  }
  __asm__ volatile("");
}

static void sleep_ms(unsigned ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int holds_spin(const lagscope__stack *s) {
  for (uint32_t i = 0; i < s->depth; i++) {
    Dl_info info;
    if (dladdr((void *)(s->frames[i] - (i > 0)), &info) != 0 && info.dli_sname != NULL &&
        strcmp(info.dli_sname, "standin_spin") == 0)
      return 1;
  }
  return 0;
}

/* One slow work of ms with the stand-in on; checks what it took; returns how many, and in
 * *dropped how many were due with no room left. */
static uint32_t slow_work(lagscope__standin *s, unsigned ms, uint32_t *dropped) {
  uint64_t t0 = lagscope__now_ns();
  lagscope__standin_start(s);
  sleep_ms(ms);
  const lagscope__stack *taken;
  const int *results;
  uint32_t n = lagscope__standin_stop(s, &taken, &results, dropped);
  uint64_t t1 = lagscope__now_ns();
  printf("slow work of %u ms (%.1f ms with start and stop): %u samples, %u dropped\n", ms,
         (double)(t1 - t0) / 1e6, n, *dropped);
  int on_spin = 0;
  for (uint32_t i = 0; i < n; i++) {
    CHECK_MSG(results[i] == LAGSCOPE_OK, "sample %u: %s", i, lagscope_strerror(results[i]));
    CHECK_MSG(taken[i].tid == lagscope__main_thread_id(), "sample %u of thread %d", i,
              taken[i].tid);
    CHECK_MSG(taken[i].time_ns >= t0 && taken[i].time_ns <= t1, "sample %u outside the work", i);
    if (i > 0) CHECK_MSG(taken[i].time_ns > taken[i - 1].time_ns, "sample %u out of order", i);
    on_spin += holds_spin(&taken[i]);
  }
  CHECK_MSG(on_spin == (int)n, "%d of %u samples hold standin_spin", on_spin, n);
  return n;
}

static void *monitor(void *arg) {
  (void)arg;
  lagscope__standin *s = lagscope__standin_new(CAPACITY, INTERVAL_NS, ANSWER_NS);
  CHECK(s != NULL);
  uint32_t dropped;
  /* 300 ms at 10 ms: about 29 (the first an interval after the start); a capture of a thread on
   * the CPU waits for its tick (up to 4 ms), and a loaded machine delays more. */
  uint32_t n = slow_work(s, 300, &dropped);
  CHECK_MSG(n >= 10 && n <= 30 && dropped == 0, "%u samples in 300 ms, %u dropped", n, dropped);
  /* Stopped: nothing is taken (the next start finds none of this time). */
  sleep_ms(100);
  n = slow_work(s, 1, &dropped);
  CHECK_MSG(n == 0 && dropped == 0, "%u samples in a slow work of 1 ms: taken while stopped?", n);
  lagscope__standin_free(s);
  /* Room for 5: the rest of a 300 ms work is counted, not written. */
  s = lagscope__standin_new(5, INTERVAL_NS, ANSWER_NS);
  CHECK(s != NULL);
  n = slow_work(s, 300, &dropped);
  CHECK_MSG(n == 5 && dropped >= 5, "room for 5: %u samples, %u dropped", n, dropped);
  lagscope__standin_free(s);
  atomic_store(&stop_spinning, 1);
  return NULL;
}

int main(void) {
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, monitor, NULL) == 0);
  standin_spin();
  pthread_join(t, NULL);
  printf("stand-in: ok\n");
  return 0;
}
