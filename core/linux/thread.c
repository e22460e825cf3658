/* The semaphore lagscope's threads sleep on, and the port's part of threads (ids, names).
 *
 * The wakeup is a futex-backed counting semaphore: posting is an atomic add plus one
 * FUTEX_WAKE, waiting uses an absolute CLOCK_MONOTONIC deadline (FUTEX_WAIT_BITSET), and the
 * atomics give sanitizers the happens-before they need. */
#define _GNU_SOURCE
#include "../internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct lagscope__wakeup {
  _Atomic uint32_t count;
};

lagscope__wakeup *lagscope__wakeup_new(void) { return lagscope__alloc(sizeof(lagscope__wakeup)); }

void lagscope__wakeup_free(lagscope__wakeup *w) { lagscope__dealloc(w); }

void lagscope__wakeup_post(lagscope__wakeup *w) {
  atomic_fetch_add_explicit(&w->count, 1, memory_order_release);
  syscall(SYS_futex, &w->count, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static int try_take(lagscope__wakeup *w) {
  uint32_t c = atomic_load_explicit(&w->count, memory_order_acquire);
  while (c > 0) {
    if (atomic_compare_exchange_weak_explicit(&w->count, &c, c - 1, memory_order_acquire,
                                              memory_order_acquire))
      return 1;
  }
  return 0;
}

int lagscope__wakeup_wait_until(lagscope__wakeup *w, uint64_t deadline_ns) {
  for (;;) {
    if (try_take(w)) return 1;
    if (lagscope__now_ns() >= deadline_ns) return 0;
    struct timespec abs = {(time_t)(deadline_ns / 1000000000u),
                           (long)(deadline_ns % 1000000000u)};
    /* Sleeps only while the count is still 0; any post in between makes it return at once. */
    syscall(SYS_futex, &w->count, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL,
            FUTEX_BITSET_MATCH_ANY);
  }
}

/* ---- threads (started by core/base/threads.c) ---- */

int32_t lagscope__thread_id(void) { return (int32_t)syscall(SYS_gettid); }

int32_t lagscope__thread_to_watch(void) { return lagscope__thread_id(); }

void lagscope__thread_name_self(const char *name) { pthread_setname_np(pthread_self(), name); }

/* What stays below the caller's frame: the red zone and the madvise call's own frames. */
#define STACK_KEEP_BELOW_BYTES 4096u

void lagscope__thread_release_stack(void) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void *low;
  size_t size;
  int rc = pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0) return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  uintptr_t start = ((uintptr_t)low + page - 1) & ~(page - 1);
  if (here < start + STACK_KEEP_BELOW_BYTES || here > (uintptr_t)low + size) return;
  uintptr_t end = (here - STACK_KEEP_BELOW_BYTES) & ~(page - 1);
  if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}
