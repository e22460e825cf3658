/* The symbol index is let go once no report has needed it for a while: a hitch of the main
 * thread is recorded (early samples, then the hitch's stack, symbolicated), which makes the
 * index and counts its tables in lagscope's heap; lagscope__hang_recorder_tidy keeps it at 4 s
 * after its last use and lets it go at 6 s (the unwinder's cache and the early samples' ring
 * with it), and the heap is back to what it was before the hitch; the stack pages the hitch's
 * walks used below the recorder's frame are given back too (mincore); the next hitch makes
 * them all again.
 * The recorder runs on a thread of its own: the main thread is the one sampled, busy in
 * spin_main. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

static _Atomic int done, spinning;

__attribute__((noinline)) static void spin_main(void) {
  atomic_store(&spinning, 1);
  while (!atomic_load(&done)) {
  }
}

/* Until the main thread is in spin_main: under ASan its pthread_create waits for the new
 * thread to start, and on a loaded machine the first samples could all find it there. */
static void await_spinning(void) {
  for (int ms = 0; !atomic_load(&spinning); ms++) {
    CHECK_MSG(ms < 10000, "the main thread never reached spin_main");
    struct timespec pause = {0, 1000 * 1000};
    nanosleep(&pause, NULL);
  }
}

/* Resident pages of the calling thread's stack more than 8 KiB below the caller's frame. */
__attribute__((noinline)) static size_t stack_pages_below(void) {
  pthread_attr_t attr;
  void *low;
  size_t size;
  CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
  CHECK(pthread_attr_getstack(&attr, &low, &size) == 0);
  pthread_attr_destroy(&attr);
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)low + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)__builtin_frame_address(0) - 8192) & ~(page - 1);
  static unsigned char resident[1 << 16];
  size_t pages = (end - start) / page, n = 0;
  CHECK(pages <= sizeof(resident));
  CHECK(mincore((void *)start, end - start, resident) == 0);
  for (size_t i = 0; i < pages; i++) n += resident[i] & 1;
  return n;
}

static void *record(void *arg) {
  const char *dir = arg;
  lagscope_config config = lagscope_config_default();
  config.report_dir = dir;
  lagscope__hang_recorder *h = lagscope__hang_recorder_new(&config);
  CHECK(h != NULL);
  await_spinning();
  uint64_t before_hitch = lagscope__memory_in_use();
  uint64_t start = lagscope__now_ns();
  for (int i = 0; i < 5; i++) {
    lagscope__hang_recorder_sample_early(h);
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  uint64_t without_index = lagscope__memory_in_use();
  uint32_t samples;
  const char *cause, *function;
  char *stack = lagscope__hang_recorder_hitch(h, start, lagscope__now_ns() - start, &samples,
                                              &cause, &function);
  CHECK(stack != NULL);
  printf("hitch: %u samples in %s\n", samples, function);
  CHECK_MSG(samples > 0 && strstr(stack, "spin_main") != NULL, "the hitch's stack: %s", stack);
  lagscope_release(stack);
  uint64_t with_index = lagscope__memory_in_use();
  uint64_t used = lagscope__now_ns();
  lagscope__hang_recorder_tidy(h, used + 4 * NS_PER_S);
  CHECK_MSG(lagscope__memory_in_use() == with_index, "the index was let go after 4 s");
  size_t stack_before = stack_pages_below();
  lagscope__hang_recorder_tidy(h, used + 6 * NS_PER_S);
  size_t stack_after = stack_pages_below();
  uint64_t after = lagscope__memory_in_use();
  printf("stack pages resident below the recorder's frame: %zu with the index, %zu after\n",
         stack_before, stack_after);
  CHECK_MSG(stack_before > 2 && stack_after == 0, "the hitch's stack pages were not given back");
  printf("lagscope's heap: %llu bytes before the hitch, %llu with its early samples, %llu with "
         "the index, %llu after 6 s\n",
         (unsigned long long)before_hitch, (unsigned long long)without_index,
         (unsigned long long)with_index, (unsigned long long)after);
  CHECK_MSG(with_index > without_index + 16384 && after + 16384 < with_index,
            "the index's tables were not let go");
  CHECK_MSG(without_index >= before_hitch + sizeof(lagscope__stack) * LAGSCOPE__EARLY_SAMPLES &&
                after == before_hitch,
            "the early samples' ring was not let go: %llu bytes kept",
            (unsigned long long)(after - before_hitch));
  /* The next stall makes both again (the unwinder went with the index): its stack is whole. */
  start = lagscope__now_ns();
  for (int i = 0; i < 5; i++) {
    lagscope__hang_recorder_sample_early(h);
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  stack = lagscope__hang_recorder_hitch(h, start, lagscope__now_ns() - start, &samples, &cause,
                                        &function);
  CHECK(stack != NULL);
  CHECK_MSG(samples > 0 && strstr(stack, "spin_main") != NULL, "the next hitch's stack: %s", stack);
  lagscope_release(stack);
  lagscope__hang_recorder_free(h);
  atomic_store(&done, 1);
  return NULL;
}

int main(void) {
  char dir[] = "/tmp/lagscope-tidy-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, record, dir) == 0);
  spin_main();
  pthread_join(t, NULL);
  char command[64];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  CHECK(system(command) == 0);
  return 0;
}
