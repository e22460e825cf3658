/* Waits (bounded: 10 s) until a thread of this process is blocked in a system call, as
 * /proc/self/task/TID/syscall says: the capture tests' condition for "it is in its call". */
#ifndef LAGSCOPE_TEST_AWAIT_BLOCKED_H
#define LAGSCOPE_TEST_AWAIT_BLOCKED_H

#include "check.h"
#include "linux/linux.h"

#include <unistd.h>

static inline void await_blocked(int32_t tid) {
  for (int i = 0; i < 10000; i++) {
    lagscope__linux_thread_state st;
    if (lagscope__linux_read_thread_state(tid, &st) == 0 && !st.running && st.nr >= 0) return;
    usleep(1000);
  }
  CHECK_MSG(0, "thread %d never blocked", tid);
}

#endif
