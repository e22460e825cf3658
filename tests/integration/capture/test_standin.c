/* The stand-in sampler (core/report/standin.c) samples the main thread while the monitor is
 * busy: the main thread spins in standin_spin while another thread, playing the monitor, starts
 * the stand-in, does 300 ms of "slow work" (a sleep), and stops it. The stand-in took a sample
 * about every interval (10 ms) all along, each of the main thread in standin_spin, in time
 * order; once stopped it takes none; started again it starts afresh; and with no room left
 * it counts what was due and writes nothing past its room.
 *
 * A sample may go unanswered (LAGSCOPE_ENOENT, walk no_reply) on a loaded machine: the request
 * to a thread on the CPU is a timer on its CPU clock, which the kernel checks only at a tick
 * that finds the thread running, and a spinning thread sharing its CPU with a dozen others ran
 * 3 to 15 ms of CPU in 50 ms with no tick catching it (6 copies of this test at once: every
 * run had 1 to 4 such samples). That is the kernel's delivery, not the stand-in's, and the
 * hang recorder counts such a sample as unseen; what the stand-in owes is the attempt, in its
 * time, said as unanswered. */
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
static int answered_total; /* answered samples of every slow work so far */
static uint64_t last_work_ns; /* the last slow work's time, with its start and stop */

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
  last_work_ns = t1 - t0;
  printf("slow work of %u ms (%.1f ms with start and stop): %u samples, %u dropped\n", ms,
         (double)(t1 - t0) / 1e6, n, *dropped);
  int on_spin = 0, answered = 0;
  for (uint32_t i = 0; i < n; i++) {
    int unanswered = results[i] == LAGSCOPE_ENOENT && taken[i].walk == LAGSCOPE__WALK_NO_REPLY;
    CHECK_MSG(results[i] == LAGSCOPE_OK || unanswered, "sample %u: %s (walk %s)", i,
              lagscope_strerror(results[i]), lagscope__walk_name(taken[i].walk));
    CHECK_MSG(taken[i].tid == lagscope__main_thread_id(), "sample %u of thread %d", i,
              taken[i].tid);
    /* none before it was due: the first an interval after the start */
    CHECK_MSG(taken[i].time_ns >= t0 + INTERVAL_NS && taken[i].time_ns <= t1,
              "sample %u at %.1f ms of a work of %.1f ms", i,
              (double)(taken[i].time_ns - t0) / 1e6, (double)(t1 - t0) / 1e6);
    if (i > 0) CHECK_MSG(taken[i].time_ns > taken[i - 1].time_ns, "sample %u out of order", i);
    if (unanswered) continue;
    answered++;
    on_spin += holds_spin(&taken[i]);
  }
  if (answered < (int)n) printf("  %d of them unanswered (no tick found the thread running)\n", (int)n - answered);
  CHECK_MSG(on_spin == answered, "%d of %d answered samples hold standin_spin", on_spin, answered);
  answered_total += answered;
  return n;
}

static void *monitor(void *arg) {
  (void)arg;
  lagscope__standin *s = lagscope__standin_new(CAPACITY, INTERVAL_NS, ANSWER_NS);
  CHECK(s != NULL);
  uint32_t dropped;
  /* 300 ms at 10 ms: about 29 (the first an interval after the start, none before it was due:
   * slow_work checks); a capture of a thread on the CPU waits for its tick (up to 4 ms), an
   * unanswered one its 50 ms, and a loaded machine runs the stand-in late too: 6 copies at once
   * saw 2 samples in 300 ms. How many is the machine's; that it sampled, and no more often than
   * due, the stand-in's. */
  uint32_t n = slow_work(s, 300, &dropped);
  CHECK_MSG(n >= 1 && n <= 30 && dropped == 0, "%u samples in 300 ms, %u dropped", n, dropped);
  /* Some answered: awaited, work after work, as 6 copies at once saw every sample of one
   * work unanswered (4 runs of 180). */
  for (int work = 1; answered_total == 0 && work < 10; work++) n = slow_work(s, 300, &dropped);
  CHECK_MSG(answered_total > 0, "no sample answered in 10 works of 300 ms");
  /* Stopped: nothing is taken (the next start finds none of this time). A work of 1 ms that a
   * loaded machine stretched past an interval may hold some, due and taken in it (slow_work
   * checks that none came before it was due). */
  sleep_ms(100);
  n = slow_work(s, 1, &dropped);
  CHECK_MSG(n <= last_work_ns / INTERVAL_NS && dropped == 0,
            "%u samples in a slow work of 1 ms: taken while stopped?", n);
  lagscope__standin_free(s);
  /* Room for 5: the rest of a work is counted, not written. Awaited, work after work, until
   * one outlasted its room (5 unanswered take 300 ms; 6 copies at once once took 5 in 600). */
  s = lagscope__standin_new(5, INTERVAL_NS, ANSWER_NS);
  CHECK(s != NULL);
  for (int work = 0; work < 10; work++) {
    n = slow_work(s, 600, &dropped);
    CHECK_MSG(n <= 5, "room for 5: %u samples", n);
    if (n == 5 && dropped >= 1) break;
  }
  CHECK_MSG(n == 5 && dropped >= 1, "room for 5: %u samples, %u dropped", n, dropped);
  lagscope__standin_free(s);
  atomic_store(&stop_spinning, 1);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* all of it, when a check aborts */
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, monitor, NULL) == 0);
  standin_spin();
  pthread_join(t, NULL);
  printf("stand-in: ok\n");
  return 0;
}
