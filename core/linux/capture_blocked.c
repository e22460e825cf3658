/*
 * A thread blocked in the kernel (a syscall, or stopped), captured without sending it
 * anything: /proc/self/task/TID/syscall says where it will resume (stack pointer, pc) and the
 * syscall with its arguments, its stack is copied into the snapshot while it waits, and the
 * copy is kept only when the thread did not run meanwhile. A futex wait names the lock's
 * owner. Why no signal, in capture.c; the shared names in capture.h.
 */
#define _GNU_SOURCE
#include "capture.h"

#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

/* How often the state is read again when the thread moved during a blocked copy. */
#define BLOCKED_ATTEMPTS 3

/* glibc's pthread_mutex_t, as the installed headers lay it out: the futex word first, the
 * owner's tid in __owner. A thread waiting on the futex of a locked mutex names its owner. */
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0,
               "glibc's pthread_mutex_t: the futex word is not first");
#define MUTEX_OWNER_OFFSET offsetof(pthread_mutex_t, __data.__owner)

/* The owner of the lock whose futex word is at address, as the memory says now: for a PI
 * futex the word itself holds the owner's tid; for a plain one (a default mutex) the mutex's
 * __owner, when the word says locked. 0 when none; the caller checks it is a live thread
 * (the word may be a condition variable's, whose neighbour means nothing). Checked reads. */
static int32_t mutex_owner(uintptr_t address, uintptr_t op) {
  int32_t words[MUTEX_OWNER_OFFSET / sizeof(int32_t) + 1];
  if (lagscope__linux_read_own(address, words, sizeof(words)) != 0) return 0;
  int cmd = (int)(op & FUTEX_CMD_MASK);
  if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_WAIT_REQUEUE_PI)
    return (int32_t)((uint32_t)words[0] & FUTEX_TID_MASK);
  if (words[0] == 0) return 0; /* not locked */
  int32_t owner = words[MUTEX_OWNER_OFFSET / sizeof(int32_t)];
  return owner > 0 ? owner : 0;
}

/* Copies a blocked thread's stack from where the kernel says it will resume, then checks that
 * it did not run meanwhile: its run count (schedstat) unchanged, or where the kernel keeps
 * none, the same syscall, arguments, sp and pc before and after the copy. The state alone
 * could miss a thread that ran and blocked again in the same call (a loop around usleep),
 * whose stack was being written while we copied it. */
enum lagscope__capture_take_result lagscope__capture_take_blocked(int32_t tid,
                                                                  lagscope__stack *out) {
  for (int attempt = 0; attempt < BLOCKED_ATTEMPTS; attempt++) {
    lagscope__linux_thread_state before, after;
    uint64_t runs_before = 0, runs_after = 0;
    int have_runs = lagscope__linux_read_run_count(tid, &runs_before) == LAGSCOPE_OK;
    int rc = lagscope__linux_read_thread_state(tid, &before);
    if (rc == LAGSCOPE_ENOENT) return LAGSCOPE__CAPTURE_TAKE_GONE;
    if (rc != LAGSCOPE_OK || before.running) return LAGSCOPE__CAPTURE_TAKE_RUNNING;
    lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
    s->registers[LAGSCOPE__CFI_PC] = before.pc; /* the only two a blocked walk reads */
    s->registers[LAGSCOPE__CFI_SP] = before.sp;
    lagscope__capture_copy_stack(s);
    if (have_runs) {
      rc = lagscope__linux_read_run_count(tid, &runs_after);
      if (rc == LAGSCOPE_ENOENT) return LAGSCOPE__CAPTURE_TAKE_GONE;
      if (rc != LAGSCOPE_OK || runs_after != runs_before) continue; /* it ran meanwhile */
    } else {
      rc = lagscope__linux_read_thread_state(tid, &after);
      if (rc == LAGSCOPE_ENOENT) return LAGSCOPE__CAPTURE_TAKE_GONE;
      if (rc != LAGSCOPE_OK) return LAGSCOPE__CAPTURE_TAKE_RUNNING;
      if (!lagscope__linux_same_blocked_state(&before, &after)) continue; /* it ran meanwhile */
    }
    out->method = LAGSCOPE__METHOD_BLOCKED;
    out->run_state = before.nr >= 0 ? LAGSCOPE__RUN_SYSCALL : LAGSCOPE__RUN_BLOCKED;
    out->syscall = (int32_t)before.nr;
    memcpy(out->args, before.args, sizeof(out->args));
    if (before.nr == SYS_futex) out->lock_owner = mutex_owner(before.args[0], before.args[1]);
    return LAGSCOPE__CAPTURE_TAKEN;
  }
  return LAGSCOPE__CAPTURE_TAKE_RUNNING;
}
