/* A stall on cue in a Vulkan program that knows nothing of lagscope, for lagscope-run's tests:
 * preloaded into vkcube (before lagscope-run's own preload), it passes vkcube's vkQueueSubmit
 * calls on and, at the main thread's LAGSCOPE_VK_STALL_AT-th (default 60), first spins on the
 * CPU for LAGSCOPE_VK_STALL_MS (default 1200) in attach_vk_stall: a hang of a Vulkan-only
 * program, between two presents. No Vulkan header: the call's ABI in plain C types. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*queue_submit_fn)(void *queue, uint32_t count, const void *submits, uint64_t fence);

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

__attribute__((noinline)) static void attach_vk_stall(unsigned ms) {
  uint64_t end = now_ms() + ms;
  volatile unsigned long spins = 0;
  while (now_ms() < end) spins++;
}

static unsigned setting(const char *name, unsigned fallback) {
  const char *value = getenv(name);
  return value != NULL && value[0] != '\0' ? (unsigned)strtoul(value, NULL, 10) : fallback;
}

__attribute__((visibility("default"))) int vkQueueSubmit(void *queue, uint32_t count,
                                                         const void *submits, uint64_t fence) {
  static queue_submit_fn real;
  static unsigned calls;
  if (real == NULL) real = (queue_submit_fn)dlsym(RTLD_NEXT, "vkQueueSubmit");
  if (syscall(SYS_gettid) == getpid() &&
      ++calls == setting("LAGSCOPE_VK_STALL_AT", 60))
    attach_vk_stall(setting("LAGSCOPE_VK_STALL_MS", 1200));
  return real(queue, count, submits, fence);
}
