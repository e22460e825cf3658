/* The semaphore lagscope's threads sleep on, and the port's part of threads (ids, names).
 *
 * The wakeup is a futex-backed counting semaphore: posting is an atomic add plus one
 * FUTEX_WAKE, waiting uses an absolute CLOCK_MONOTONIC deadline (FUTEX_WAIT_BITSET), and the
 * atomics give sanitizers the happens-before they need. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* ---- a descriptor table of the thread's own ---- */

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static long close_range_call(unsigned first, unsigned last, unsigned flags) {
#ifdef SYS_close_range
  return syscall(SYS_close_range, first, last, flags);
#else
  (void)first, (void)last, (void)flags;
  errno = ENOSYS;
  return -1;
#endif
}

/* first..last closed in the calling thread's table (one by one before Linux 5.9). */
static void close_span(int first, int last) {
  if (first > last || close_range_call((unsigned)first, (unsigned)last, 0) == 0) return;
  for (int fd = first; fd <= last; fd++) close(fd);
}

static int close_if_above(const char *name, int dir_fd, void *top) {
  int fd = name[0] >= '0' && name[0] <= '9' ? atoi(name) : -1;
  if (fd > *(const int *)top && fd != dir_fd) close(fd);
  return 1;
}

static int is_kept(int fd, const int *keep, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (keep[i] == fd) return 1;
  return 0;
}

/* The smallest kept number at or above from, or past when none. */
static int next_kept(int from, int past, const int *keep, size_t n) {
  int best = past;
  for (size_t i = 0; i < n; i++)
    if (keep[i] >= from && keep[i] < best) best = keep[i];
  return best;
}

/* stderr is left to the thread while it is a terminal or a file (no reader waits for its
 * end) or a sanitizer reports there. */
static int stderr_kept(void) {
  struct stat st;
  return SANITIZED || (fstat(2, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)));
}

/* 0, 1 and 2 never hold the app's pipe open, nor are free for a socket that a stray write to
 * stderr would reach: /dev/null. Without /dev/null (a sandbox) they stay as they were. */
static void stdio_to_null(const int *keep, size_t n) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return;
  int keep_stderr = stderr_kept();
  for (int fd = 0; fd < 3; fd++)
    if (fd != null && !is_kept(fd, keep, n) && !(fd == 2 && keep_stderr)) dup3(null, fd, O_CLOEXEC);
  if (null > 2) close(null);
}

int lagscope__thread_private_fds(const int *keep, size_t n) {
  int top = 2;
  for (size_t i = 0; i < n; i++)
    if (keep[i] > top) top = keep[i];
  /* Closing a range that runs to the end as the table is unshared, the kernel copies only the
   * numbers below it: the app's higher descriptors are never held, not even for a moment. */
  if (close_range_call((unsigned)top + 1, ~0u, CLOSE_RANGE_UNSHARE) != 0) {
    if (unshare(CLONE_FILES) != 0) return LAGSCOPE_ESYS;
    lagscope__linux_each_name("/proc/thread-self/fd", close_if_above, &top);
  }
  for (int from = 3; from <= top;) {
    int kept = next_kept(from, top + 1, keep, n);
    close_span(from, kept - 1);
    from = kept + 1;
  }
  stdio_to_null(keep, n);
  return LAGSCOPE_OK;
}
