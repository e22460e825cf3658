/* The benchmarks' main-loop post queue, as a real event loop has one. post_main is called on
 * lagscope's monitor thread (the one producer); the main loop is the one consumer. A tiny
 * lock-free ring plus an eventfd that wakes the loop's ppoll, so that a ping is answered at
 * once rather than at the next frame. One per process (each benchmark is one file). */
#ifndef LAGSCOPE_BENCH_POST_H
#define LAGSCOPE_BENCH_POST_H

#include <lagscope.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define BENCH_POST_SLOTS 16u

typedef struct bench_post {
  lagscope_main_fn fn;
  void *arg;
} bench_post;

static struct {
  bench_post slots[BENCH_POST_SLOTS];
  _Atomic uint32_t head, tail; /* written by producer / consumer */
  int wake_fd;                 /* the loop polls it */
} bench_post_queue = {.wake_fd = -1};

/* 0, or -1 with errno when the eventfd could not be made. */
static int bench_post_open(void) {
  bench_post_queue.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return bench_post_queue.wake_fd < 0 ? -1 : 0;
}

static void bench_post_close(void) {
  if (bench_post_queue.wake_fd >= 0) close(bench_post_queue.wake_fd);
  bench_post_queue.wake_fd = -1;
}

/* lagscope's post_main hook. */
static int bench_post_main(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  uint32_t head = atomic_load_explicit(&bench_post_queue.head, memory_order_relaxed);
  if (head - atomic_load_explicit(&bench_post_queue.tail, memory_order_acquire) ==
      BENCH_POST_SLOTS)
    return -1;
  bench_post_queue.slots[head % BENCH_POST_SLOTS] = (bench_post){fn, arg};
  atomic_store_explicit(&bench_post_queue.head, head + 1, memory_order_release);
  /* The ping is queued whether or not the wake-up is written: at worst the loop runs it at
   * its next frame, so a failed write is not a refusal. */
  uint64_t one = 1;
  ssize_t written = write(bench_post_queue.wake_fd, &one, sizeof one);
  (void)written;
  return 0;
}

/* Main thread: runs everything posted; returns how many. */
static unsigned bench_post_drain(void) {
  uint64_t count;
  if (read(bench_post_queue.wake_fd, &count, sizeof count) < 0 && errno != EAGAIN) return 0;
  unsigned ran = 0;
  uint32_t tail = atomic_load_explicit(&bench_post_queue.tail, memory_order_relaxed);
  while (tail != atomic_load_explicit(&bench_post_queue.head, memory_order_acquire)) {
    bench_post p = bench_post_queue.slots[tail % BENCH_POST_SLOTS];
    atomic_store_explicit(&bench_post_queue.tail, ++tail, memory_order_release);
    p.fn(p.arg);
    ran++;
  }
  return ran;
}

#endif /* LAGSCOPE_BENCH_POST_H */
