/* The semaphore lagscope's threads sleep on, and the port's part of threads (ids, names).
 *
 * Thread ids. Every id lagscope hands around on Darwin (lagscope__thread_id, the usage reader's
 * tids, the capture's target, main_tid in reports) is the thread's Mach port name in this
 * task: what task_threads returns and thread_suspend takes, so the usage reader, the capture and
 * the reports agree without a lookup. pthread_mach_thread_np gives the caller's without adding
 * a port reference (mach_thread_self would, and would need a deallocation each time). A name
 * fits in 32 bits and stays the thread's for its whole life. (pthread_threadid_np's 64-bit id,
 * the one lldb prints, would not fit int32_t once the system's thread counter passes 2^31, and
 * would need a task_threads walk to find the port at every capture.)
 *
 * The wakeup is a dispatch semaphore: a counting semaphore whose signal is an atomic increment
 * plus one kernel wake when someone waits, and whose wait takes a timeout. Our deadline is on
 * lagscope__now_ns's clock (mach_absolute_time), the clock dispatch_time(DISPATCH_TIME_NOW, ..)
 * counts on too; the loop re-reads the clock after each timeout, so an early return costs one
 * more wait, never a wrong answer. */
#include "../internal.h"

#include <dispatch/dispatch.h>
#include <errno.h>
#include <mach/mach.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

struct lagscope__wakeup {
  dispatch_semaphore_t semaphore;
};

lagscope__wakeup *lagscope__wakeup_new(void) {
  lagscope__wakeup *w = lagscope__alloc(sizeof(lagscope__wakeup));
  if (w == NULL) return NULL;
  /* Starts at 0: libdispatch refuses to release a semaphore whose value is below its initial
   * value, and ours never goes below 0. */
  w->semaphore = dispatch_semaphore_create(0);
  if (w->semaphore == NULL) {
    lagscope__dealloc(w);
    return NULL;
  }
  return w;
}

void lagscope__wakeup_free(lagscope__wakeup *w) {
  if (w == NULL) return;
  dispatch_release(w->semaphore);
  lagscope__dealloc(w);
}

void lagscope__wakeup_post(lagscope__wakeup *w) { dispatch_semaphore_signal(w->semaphore); }

int lagscope__wakeup_wait_until(lagscope__wakeup *w, uint64_t deadline_ns) {
  for (;;) {
    uint64_t now = lagscope__now_ns();
    uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
    if (left > (uint64_t)INT64_MAX) left = (uint64_t)INT64_MAX;
    if (dispatch_semaphore_wait(w->semaphore, dispatch_time(DISPATCH_TIME_NOW, (int64_t)left)) == 0)
      return 1;
    if (left == 0) return 0;
  }
}

/* ---- threads (started by core/base/threads.c) ---- */

int32_t lagscope__thread_id(void) { return (int32_t)pthread_mach_thread_np(pthread_self()); }

/* The main thread, noted on it by core/darwin/capture.c (pthread_main_np at load): the main
 * queue's pings are answered there even when start was called on another thread. */
int32_t lagscope__thread_to_watch(void) {
  if (pthread_main_np()) return lagscope__thread_id();
  return lagscope__main_thread_id();
}

/* Darwin's pthread_setname_np names only the calling thread. */
void lagscope__thread_name_self(const char *name) { pthread_setname_np(name); }

/* Not yet: a Darwin app's monitor stack stays as deep as its deepest stall. */
void lagscope__thread_release_stack(void) {}

/* Darwin has no per-thread descriptor table (no unshare): the viewer's threads share the app's
 * and check what they hold before each use where they can (docs/guide.md says what holds). */
int lagscope__thread_private_fds(const int *keep, size_t n) {
  (void)keep;
  (void)n;
  return LAGSCOPE_ENOTSUP;
}
