/* A waiter that a timed-out poll has made runnable, but that gets no CPU for a while (an
 * overloaded machine), is not handed the capture signal: its poll never returns EINTR. The
 * waiter runs under SCHED_IDLE on the same CPU as a real-time spinning thread, so it waits long
 * in the run queue after each 20 ms timeout; captures, one after another for 2 s, catch it
 * there again and again. Before lagscope told a starved thread from a running one, they
 * signalled it and its poll said EINTR. Both threads of the app count their own disturbance:
 * the spinner must still be captured (its CPU time grows, it really runs). */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static _Atomic int32_t waiter_tid, spinner_tid;
static _Atomic int stop;
static _Atomic int polls, interrupted;
static cpu_set_t one_cpu;

static void pin(void) { CHECK(pthread_setaffinity_np(pthread_self(), sizeof one_cpu, &one_cpu) == 0); }

static void *waiter(void *arg) {
  (void)arg;
  pin();
  struct sched_param idle = {0};
  CHECK(pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) == 0);
  atomic_store(&waiter_tid, lagscope__thread_id());
  while (!atomic_load(&stop)) {
    if (poll(NULL, 0, 20) < 0 && errno == EINTR) atomic_fetch_add(&interrupted, 1);
    atomic_fetch_add(&polls, 1);
  }
  return NULL;
}

static _Atomic int realtime; /* 1: the spinner runs SCHED_FIFO; -1: not allowed here */

static void *spinner(void *arg) {
  (void)arg;
  pin();
  /* Real time: the waiter then gets the CPU only in the kernel's real-time throttling window
   * (50 ms a second by default), so it waits long in the run queue. */
  struct sched_param fifo = {.sched_priority = 1};
  atomic_store(&realtime, pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0 ? 1 : -1);
  atomic_store(&spinner_tid, lagscope__thread_id());
  while (!atomic_load(&stop)) {
  }
  return NULL;
}

int main(void) {
  cpu_set_t allowed;
  CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  CPU_ZERO(&one_cpu);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one_cpu);
      break;
    }
  CHECK_EQ_INT(lagscope__capture_init(0), LAGSCOPE_OK);
  pthread_t w, s;
  CHECK(pthread_create(&s, NULL, spinner, NULL) == 0);
  CHECK(pthread_create(&w, NULL, waiter, NULL) == 0);
  while (atomic_load(&waiter_tid) == 0 || atomic_load(&spinner_tid) == 0 || atomic_load(&polls) < 1)
    sched_yield();
  if (atomic_load(&realtime) < 0) {
    atomic_store(&stop, 1);
    pthread_join(w, NULL);
    pthread_join(s, NULL);
    printf("capture_starved: SKIPPED: no SCHED_FIFO here (needs CAP_SYS_NICE)\n");
    return 77;
  }

  static lagscope__stack stack;
  int waiter_captures = 0, waiter_not_taken = 0, spinner_signalled = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    lagscope__capture_stack(atomic_load(&waiter_tid), &stack, 100000000u);
    waiter_captures++;
    waiter_not_taken += stack.method == LAGSCOPE__METHOD_NONE;
    lagscope__capture_stack(atomic_load(&spinner_tid), &stack, 100000000u);
    spinner_signalled += stack.method == LAGSCOPE__METHOD_SIGNAL && stack.depth > 0;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
  atomic_store(&stop, 1);
  pthread_join(w, NULL);
  pthread_join(s, NULL);
  printf("capture_starved: %d captures of the waiter (%d left alone as starved), %d polls, %d "
         "EINTR; the spinner captured by signal %d times\n",
         waiter_captures, waiter_not_taken, atomic_load(&polls), atomic_load(&interrupted),
         spinner_signalled);
  CHECK_MSG(atomic_load(&interrupted) == 0, "the waiter's poll said EINTR %d times",
            atomic_load(&interrupted));
  CHECK_MSG(spinner_signalled > 0, "the spinner, on its CPU all along, was never captured");
  return 0;
}
