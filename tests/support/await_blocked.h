/* Waits (bounded: ~10 s) until a thread of this process is blocked in a system call, as
 * /proc/self/task/TID/syscall says, and stays there: the capture tests' condition for "it is
 * in its call". */
#ifndef LAGSCOPE_TEST_AWAIT_BLOCKED_H
#define LAGSCOPE_TEST_AWAIT_BLOCKED_H

#include "check.h"
#include "linux/linux.h"

#include <unistd.h>

/* Blocked, and still in the same call 20 ms later without having run: a thread seen in a
 * passing wait (a lock inside malloc as threads start together, on a loaded machine) is not
 * yet in its call. */
static inline int blocked_and_still(int32_t tid) {
  lagscope__linux_thread_state before, after;
  uint64_t runs_before, runs_after;
  if (lagscope__linux_read_run_count(tid, &runs_before) != 0 ||
      lagscope__linux_read_thread_state(tid, &before) != 0 || before.running || before.nr < 0)
    return 0;
  usleep(20000);
  return lagscope__linux_read_thread_state(tid, &after) == 0 &&
         lagscope__linux_same_blocked_state(&before, &after) &&
         lagscope__linux_read_run_count(tid, &runs_after) == 0 && runs_after == runs_before;
}

static inline void await_blocked(int32_t tid) {
  for (int i = 0; i < 500; i++) { /* ~10 s at most */
    if (blocked_and_still(tid)) return;
    usleep(1000);
  }
  CHECK_MSG(0, "thread %d never blocked", tid);
}

#endif
