/* A thread that works a little between short waits, sampled as a hang's main thread is (a
 * capture every 2 ms): no wait of its may end early. Such a thread is often seen running just
 * as it enters a wait or leaves one, still in the kernel; a signal sent then ended its poll
 * with EINTR: before captures went through the thread's CPU clock, 123 of 150 signals did so
 * here (work 300 us, poll 1 ms). The victim checks each poll itself: its result, errno and how
 * long it lasted. It must still be captured: in its wait, and when it works most of the time,
 * on the CPU with its own function on the stack.
 * Usage: test_capture_between_waits WORK_US */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS 1
#define RUN_NS (2000ull * 1000u * 1000u)
#define CAPTURE_EVERY_NS (2u * 1000u * 1000u)
#define ANSWER_NS (50u * 1000u * 1000u)

static _Atomic int32_t victim_tid;
static _Atomic int stop;
static _Atomic int polls, interrupted, early;
static uint64_t work_ns;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Exported (-rdynamic) so that dladdr names it. */
__attribute__((noinline)) void between_waits_work(void) {
  uint64_t until = now_ns() + work_ns;
  while (now_ns() < until) {}
  __asm__ volatile("");
}

static void *victim(void *arg) {
  (void)arg;
  atomic_store(&victim_tid, lagscope__thread_id());
  while (!atomic_load(&stop)) {
    between_waits_work();
    uint64_t t0 = now_ns();
    int rc = poll(NULL, 0, POLL_MS);
    uint64_t took = now_ns() - t0;
    if (rc < 0 && errno == EINTR) atomic_fetch_add(&interrupted, 1);
    else if (took < POLL_MS * 1000000ull) atomic_fetch_add(&early, 1);
    atomic_fetch_add(&polls, 1);
  }
  return NULL;
}

static int holds_work(const lagscope__stack *s) {
  for (uint32_t i = 0; i < s->depth; i++) {
    Dl_info info;
    if (dladdr((void *)(s->frames[i] - (i > 0)), &info) != 0 && info.dli_sname != NULL &&
        strcmp(info.dli_sname, "between_waits_work") == 0)
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2 && atoi(argv[1]) > 0, "usage: test_capture_between_waits WORK_US");
  work_ns = (uint64_t)atoi(argv[1]) * 1000u;
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, victim, NULL) == 0);
  while (atomic_load(&victim_tid) == 0 || atomic_load(&polls) < 1) sched_yield();

  static lagscope__stack stack;
  int captures = 0, by_signal = 0, blocked = 0, not_taken = 0, signal_at_work = 0;
  uint64_t end = now_ns() + RUN_NS;
  while (now_ns() < end) {
    int rc = lagscope__capture_stack(atomic_load(&victim_tid), &stack, ANSWER_NS);
    captures++;
    if (rc != LAGSCOPE_OK) not_taken++;
    else if (stack.method == LAGSCOPE__METHOD_SIGNAL) by_signal++, signal_at_work += holds_work(&stack);
    else blocked++;
    struct timespec pause = {0, CAPTURE_EVERY_NS};
    nanosleep(&pause, NULL);
  }
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  printf("work %s us, poll %d ms: %d captures (%d on the CPU, %d of them in the work; %d blocked; "
         "%d not taken); %d polls, %d EINTR, %d early\n",
         argv[1], POLL_MS, captures, by_signal, signal_at_work, blocked, not_taken,
         atomic_load(&polls), atomic_load(&interrupted), atomic_load(&early));
  CHECK_MSG(atomic_load(&interrupted) == 0, "a poll said EINTR %d times", atomic_load(&interrupted));
  CHECK_MSG(atomic_load(&early) == 0, "a poll ended early %d times", atomic_load(&early));
  CHECK_MSG(not_taken * 10 <= captures, "%d of %d captures not taken", not_taken, captures);
  CHECK_MSG(blocked > 0, "the victim was never taken in its wait");
  /* Working most of the time: caught at work too, and the stack says so. */
  if (work_ns >= 1000u * 1000u)
    CHECK_MSG(signal_at_work > 0, "%d captures on the CPU, none in between_waits_work", by_signal);
  return 0;
}
