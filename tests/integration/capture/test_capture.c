/* Capture of a real thread: the main thread blocks in libc (nanosleep, a held mutex, read,
 * poll) or spins, under three functions of ours; another thread captures it and the stack
 * must contain those functions, in order, down to main, whatever libc was built with.
 * handler-busy and handler-sleep do it in the app's own signal handler, raised by the
 * innermost of the three: the walk must go through the kernel's signal frame (glibc's
 * trampoline and its CFI) to the function the signal interrupted.
 * busy-libc spins calling clock_gettime, as most real busy loops call something: it is
 * captured many times, because under ThreadSanitizer the signal reaches our handler only at
 * such a call, late, and each capture lands at another point of the loop. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "linux/capture.h" /* the snapshot: what the handler copied */

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fds[2];
static _Atomic int blocking, release_main;
static const char *kind;

/* The functions the stack must show. Exported (-rdynamic) so dladdr names them here; the
 * symbolicator's own tests cover static functions. */
/* The app's handler: spins, or sleeps, where the capture finds it. */
__attribute__((noinline)) void capture_test_in_handler(int sig) {
  (void)sig;
  atomic_store(&blocking, 1);
  if (strcmp(kind, "handler-busy") == 0) {
    while (!atomic_load(&release_main)) {}
  } else {
    struct timespec ts = {2, 0};
    nanosleep(&ts, NULL);
  }
  __asm__ volatile("");
}

__attribute__((noinline)) void capture_test_block(void) {
  if (strncmp(kind, "handler-", 8) == 0) {
    raise(SIGUSR2);
    __asm__ volatile("");
    return;
  }
  atomic_store(&blocking, 1);
  if (strcmp(kind, "busy") == 0) {
    while (!atomic_load(&release_main)) {}
  } else if (strcmp(kind, "busy-libc") == 0) {
    struct timespec now;
    while (!atomic_load(&release_main)) clock_gettime(CLOCK_MONOTONIC, &now);
  } else if (strcmp(kind, "nanosleep") == 0) {
    struct timespec ts = {2, 0};
    nanosleep(&ts, NULL);
  } else if (strcmp(kind, "mutex") == 0) {
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
  } else if (strcmp(kind, "read") == 0) {
    char c;
    (void)!read(pipe_fds[0], &c, 1);
  } else if (strcmp(kind, "poll") == 0) {
    struct pollfd p = {.fd = pipe_fds[0], .events = POLLIN};
    poll(&p, 1, 2000);
  }
  __asm__ volatile(""); /* keep the calls above from being tail calls */
}

__attribute__((noinline)) void capture_test_middle(void) {
  capture_test_block();
  __asm__ volatile("");
}

__attribute__((noinline)) void capture_test_outer(void) {
  capture_test_middle();
  __asm__ volatile("");
}

static const char *name_of(uintptr_t address) {
  Dl_info info;
  if (dladdr((void *)(address - 1), &info) == 0 || info.dli_sname == NULL) return "?";
  return info.dli_sname;
}

/* libc's unwind tables, from its .eh_frame_hdr to the end of the segment that holds it
 * (.eh_frame follows the header): the unwinder reads them to step out of libc. */
typedef struct tables {
  uintptr_t libc_base, start, end;
} tables;

static int find_tables(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  tables *t = data;
  if (info->dlpi_addr != t->libc_base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) t->start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t at = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && t->start >= at && t->start < at + ph->p_memsz)
      t->end = at + ph->p_memsz;
  }
  return 1;
}

#define PAGE 4096u
#define TABLE_PAGES_MAX 4096u

/* Which pages of [start, end) are mapped in this process now (/proc/self/pagemap, bit 63). */
static size_t present_pages(const tables *t, uint8_t *present) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  CHECK(fd >= 0);
  size_t n = 0;
  for (uintptr_t page = t->start / PAGE; page * PAGE < t->end && n < TABLE_PAGES_MAX; page++) {
    uint64_t entry = 0;
    CHECK(pread(fd, &entry, sizeof(entry), (off_t)(page * sizeof(entry))) == sizeof(entry));
    present[n++] = (uint8_t)(entry >> 63);
  }
  close(fd);
  return n;
}

/* The handler's own functions (core/linux/capture_signal.c) are none of the frames: under TSan
 * the handler walks from its own registers and drops its own frame, and a second frame of
 * ours once stayed and was told as the app's ('cpu · capture_handler'). Nor are TSan's
 * own, which delivered the signal to the handler from an interceptor: the bottom-up tree's
 * first root was __tsan::CallUserSignalHandler. Named by lagscope's symbolicator, which
 * reads static functions too. */
static void check_no_handler_frame(const lagscope__stack *stack) {
  /* One index for every capture of the run: a new one read the objects' symbols again each
   * time, 40 times for busy-libc (its minute under TSan on a loaded machine). */
  static lagscope__symbol_index *index;
  if (index == NULL) index = lagscope__symbol_index_new();
  CHECK(index != NULL);
  for (uint32_t i = 0; i < stack->depth; i++) {
    lagscope__stack_frame frame;
    memset(&frame, 0, sizeof(frame));
    uintptr_t address = stack->frames[i];
    if (lagscope__symbol_index_resolve(index, address, address - (i > 0), &frame) != 0 ||
        frame.function == NULL)
      continue;
    CHECK_MSG(strcmp(frame.function, "capture_handler") != 0 &&
                  strcmp(frame.function, "claim_and_copy") != 0,
              "%s: frame #%u is lagscope's own %s", kind, i, frame.function);
    CHECK_MSG(strncmp(frame.function, "__tsan::", 8) != 0 &&
                  strncmp(frame.function, "_ZN6__tsan", 10) != 0,
              "%s: frame #%u is TSan's own %s", kind, i, frame.function);
  }
}

extern char **environ;

/* The handler copies the main thread's stack in place up to its frames' end, not to the end of
 * its mapping: above the frames lie argv, the environment and the aux vector, kilobytes the
 * handler copied in the app's time for nothing (the copy ran into the environment's strings). */
static void check_copy_ends_at_frames(void) {
  const lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
  uintptr_t copy_end = s->stack_base + s->stack_len;
  printf("%s: %zu bytes copied, up to %#lx; the environment's first string at %p\n", kind,
         s->stack_len, (unsigned long)copy_end, environ[0] != NULL ? (void *)environ[0] : NULL);
  CHECK_MSG(environ[0] == NULL || copy_end <= (uintptr_t)environ[0],
            "%s: the copy (%zu bytes) runs into the environment's strings", kind, s->stack_len);
}

static void check_one_capture(int spinning) {
  static lagscope__stack stack;
  /* The unwinder reads libc's tables from libc's file: a page of them that was not mapped in
   * the app before is not after (it would stay resident in the app). */
  tables t = {0};
  Dl_info libc;
  CHECK(dladdr((void *)nanosleep, &libc) != 0);
  t.libc_base = (uintptr_t)libc.dli_fbase;
  dl_iterate_phdr(find_tables, &t);
  CHECK(t.start != 0 && t.end > t.start);
  static uint8_t before[TABLE_PAGES_MAX], after[TABLE_PAGES_MAX];
  size_t pages = present_pages(&t, before);
  int rc = lagscope__capture_stack(lagscope__main_thread_id(), &stack, 1000000000u);
  CHECK(present_pages(&t, after) == pages);
  size_t absent = 0, mapped_by_us = 0;
  for (size_t i = 0; i < pages; i++) {
    absent += !before[i];
    mapped_by_us += !before[i] && after[i];
  }
  printf("%s: libc's unwind tables: %zu pages, %zu not mapped before, %zu mapped by the capture\n",
         kind, pages, absent, mapped_by_us);
  CHECK_EQ_INT(mapped_by_us, 0);
  printf("%s: rc %d, walk %s, method %s, %u frames\n", kind, rc, lagscope__walk_name(stack.walk),
         lagscope__method_name(stack.method), stack.depth);
  CHECK_EQ_INT(stack.method, spinning ? LAGSCOPE__METHOD_SIGNAL : LAGSCOPE__METHOD_BLOCKED);
  const char *expected[] = {"capture_test_in_handler", "capture_test_block",
                            "capture_test_middle", "capture_test_outer", "main"};
  size_t next = strncmp(kind, "handler-", 8) == 0 ? 0 : 1, want = 5;
  for (uint32_t i = 0; i < stack.depth; i++) {
    const char *name = name_of(stack.frames[i]);
    printf("  #%u %#lx %s\n", i, (unsigned long)stack.frames[i], name);
    if (next < want && strcmp(name, expected[next]) == 0) next++;
  }
  CHECK_EQ_INT(rc, 0);
  if (spinning) check_no_handler_frame(&stack);
  if (spinning) check_copy_ends_at_frames();
  CHECK_MSG(next == want, "%s: the expected functions in order stop before %s", kind,
            next < want ? expected[next] : "none");
}

static void *capturer(void *arg) {
  (void)arg;
  while (!atomic_load(&blocking)) usleep(1000);
  usleep(50000); /* into the blocking call: this wait is not a guess the test depends on, a
                     capture during the call above it would still show the same callers */
  int spinning = strstr(kind, "busy") != NULL;
  int captures = strcmp(kind, "busy-libc") == 0 ? 40 : 1;
  for (int n = 0; n < captures; n++) check_one_capture(spinning);
  atomic_store(&release_main, 1); /* the holder lets the mutex go */
  (void)!write(pipe_fds[1], "x", 1);
  return NULL;
}

/* Holds the mutex the main thread waits for until the capturer is done (the thread that
 * locks a mutex unlocks it: TSan checks). */
static _Atomic int holding;
static void *holder(void *arg) {
  (void)arg;
  pthread_mutex_lock(&held);
  atomic_store(&holding, 1);
  while (!atomic_load(&release_main)) usleep(1000);
  pthread_mutex_unlock(&held);
  return NULL;
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  kind = argv[1];
  /* A spinning thread needs the signal, which TSan defers to its interceptors; the blocked
   * kinds are read without one, so TSan sees them as they are. */
  if (strcmp(kind, "busy") == 0 || strcmp(kind, "handler-busy") == 0) SKIP_UNDER_TSAN();
  struct sigaction app_handler = {.sa_handler = capture_test_in_handler};
  CHECK(sigaction(SIGUSR2, &app_handler, NULL) == 0);
  CHECK_EQ_INT(lagscope__capture_init(0), 0);
  CHECK(pipe(pipe_fds) == 0);
  pthread_t t;
  pthread_t h;
  if (strcmp(kind, "mutex") == 0) {
    CHECK(pthread_create(&h, NULL, holder, NULL) == 0);
    while (!atomic_load(&holding)) usleep(1000);
  }
  pthread_create(&t, NULL, capturer, NULL);
  capture_test_outer();
  pthread_join(t, NULL);
  if (strcmp(kind, "mutex") == 0) pthread_join(h, NULL);
  return 0;
}
