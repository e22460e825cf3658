/* The main thread captured while it runs on a stack of its own making (issue 42, item 1): the
 * handler copies in place only the main stack's own mapping; any other stack goes the checked
 * way. Each case starts lagscope with a 50 ms threshold, then the main thread spins on the CPU
 * in own_stack_spin (so the capture signal takes it) on:
 *   fiber_mmap      a coroutine stack from mmap between guard pages, via makecontext
 *   fiber_malloc    a coroutine stack from malloc, via makecontext/swapcontext
 *   sigaltstack     a signal handler running on a malloc'd sigaltstack (as crash reporters)
 *   deep_main_stack the main stack itself, grown ~4 MiB deeper than it was at start: the
 *                   handler copies it the checked way until the monitor reads its mapping
 *                   again, then in place
 * until a hang sample shows own_stack_spin (bounded). The first three stacks end just below an
 * unreadable page, as the reporter's lay below a thread stack's guard page, so that a copy past
 * their end faults whatever else is mapped. The process must not crash, a hang must
 * be reported, and its stack must hold own_stack_spin. CMake runs each case as it is and under
 * setarch -R (ASLR off, as gdb and rr run programs), where malloc'd and mmap'd stacks lie
 * ~140 MiB below the main stack: a copy trusted by nearness to it ran off their end (exit 139).
 * Under ThreadSanitizer the fibers are announced to it (__tsan_switch_to_fiber), and the
 * sigaltstack case is skipped: there the app's handler runs with every signal blocked (TSan
 * calls it from its own handler), so lagscope rightly says the capture signal is blocked in
 * the main thread and takes no sample (seen: "blocks lagscope's capture signal", 0 samples). */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"
#include "linux/linux.h"

#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define THRESHOLD_MS 50
#define SPIN_BOUND_NS (30ull * 1000u * 1000u * 1000u) /* TSan on a loaded machine: generous */
#define PAGE 4096u
/* malloc maps it alone, 1 MiB with its header: under 2 MiB, which the kernel would align */
#define STACK_BYTES (1024u * 1024u - PAGE)
#define DEEP_BYTES (4u * 1024u * 1024u)
#define REFRESH_WAIT_NS (1500ull * 1000u * 1000u) /* the monitor reads the mapping once a second */

#ifdef LAGSCOPE_TEST_UNDER_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* ---- what lagscope reported ---- */

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_stack[16384]; /* the last hang sample's stack, for a failure's message */
static _Atomic int hangs_began, hangs_ended, samples, samples_with_spin;
static _Atomic uint64_t spin_seen_ns; /* when a sample first held own_stack_spin */

/* CLOCK_MONOTONIC, as own_stack_spin reads it. */
static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_event(const lagscope_event *event, void *user) {
  (void)user;
  if (event->type == LAGSCOPE_EVENT_HANG_BEGAN) atomic_fetch_add(&hangs_began, 1);
  if (event->type == LAGSCOPE_EVENT_HANG_ENDED) atomic_fetch_add(&hangs_ended, 1);
  if (event->type != LAGSCOPE_EVENT_HANG_SAMPLE || event->payload.stack_json == NULL) return;
  atomic_fetch_add(&samples, 1);
  pthread_mutex_lock(&seen_lock);
  snprintf(last_stack, sizeof(last_stack), "%s", event->payload.stack_json);
  pthread_mutex_unlock(&seen_lock);
  if (strstr(event->payload.stack_json, "\"own_stack_spin\"") != NULL) {
    uint64_t none = 0;
    atomic_compare_exchange_strong(&spin_seen_ns, &none, mono_ns());
    atomic_fetch_add(&samples_with_spin, 1);
  }
}

/* ---- the spin, on whichever stack ---- */

static uint64_t spin_at_least_ns; /* deep_main_stack: spin on this long after the first sight */
static _Atomic uintptr_t spin_sp;  /* where own_stack_spin's frame is */

/* Spins on the CPU until a hang sample holds it (and spin_at_least_ns since), or the bound.
 * Calls clock_gettime (the vDSO) as it spins: under TSan the signal comes at such a call. */
__attribute__((noinline)) void own_stack_spin(void) {
  /* The frame, not a local's address: under ASan a local may live on its heap's fake stack. */
  atomic_store(&spin_sp, (uintptr_t)__builtin_frame_address(0));
  uint64_t deadline = mono_ns() + SPIN_BOUND_NS;
  for (;;) {
    uint64_t seen = atomic_load(&spin_seen_ns); /* before the clock: seen <= now */
    uint64_t now = mono_ns();
    if (now > deadline || (seen != 0 && now - seen >= spin_at_least_ns)) break;
  }
  __asm__ volatile("");
}

/* ---- lagscope around one spin ---- */

static void start_lagscope(void) {
  lagscope_config c = lagscope_config_default();
  c.server = 0; /* no viewer: nothing here reads it */
  c.hang_threshold_ms = THRESHOLD_MS;
  c.on_event = on_event;
  lagscope_heartbeat(); /* heartbeat mode (no post_main): alive from here */
  CHECK_EQ_INT(lagscope_start(&c), 0);
  lagscope_heartbeat();
}

/* The function names of a stack's JSON, innermost first, on one line. */
static void print_functions(const char *json) {
  for (const char *p = json; (p = strstr(p, "\"function\":")) != NULL;) {
    p += strlen("\"function\":");
    const char *end = *p == '"' ? strchr(p + 1, '"') : strpbrk(p, ",}");
    if (end == NULL) break;
    printf(" %.*s", (int)(end - p - (*p == '"')), p + (*p == '"'));
  }
  printf("\n");
}

/* Back on the main stack: heartbeats until the hang ended, then stops; checks the report. */
static void end_and_check(const char *where) {
  uint64_t deadline = lagscope__now_ns() + 20ull * 1000u * 1000u * 1000u;
  while (atomic_load(&hangs_ended) == 0 && lagscope__now_ns() < deadline) {
    lagscope_heartbeat();
    struct timespec ms = {0, 5 * 1000 * 1000};
    nanosleep(&ms, NULL);
  }
  CHECK_EQ_INT(lagscope_stop(), 0);
  pthread_mutex_lock(&seen_lock);
  printf("%s: %d hang(s) began, %d ended, %d samples, %d with own_stack_spin; the last:", where,
         atomic_load(&hangs_began), atomic_load(&hangs_ended), atomic_load(&samples),
         atomic_load(&samples_with_spin));
  print_functions(last_stack);
  pthread_mutex_unlock(&seen_lock);
  CHECK_MSG(atomic_load(&hangs_began) >= 1, "no hang reported while the main thread spun");
  CHECK_MSG(atomic_load(&samples_with_spin) >= 1, "no hang sample held own_stack_spin");
}

/* ---- stacks whose end is followed by an unreadable page ----
 *
 * What crashed was a copy that ran past a stack's end into a page it could not read: with ASLR
 * off the app's stack lay just below a thread stack's guard page. Here that page is made so
 * whatever else the process has mapped: a PROT_NONE page above each stack. */

/* malloc(size) placed just below a PROT_NONE page of ours: a reservation of its mapping's
 * size and a page is made where the kernel would put it (the highest gap that fits), its lower
 * part unmapped again, and malloc's own mapping then takes that gap. Says whether it did. */
static void *malloc_below_fence(size_t size) {
  size_t mapped = (size + 16 + PAGE - 1) / PAGE * PAGE; /* glibc: the chunk's header, a page */
  uint8_t *reserved = mmap(NULL, mapped + PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(reserved != MAP_FAILED);
  CHECK(munmap(reserved, mapped) == 0);
  uint8_t *block = malloc(size);
  CHECK(block != NULL);
  printf("malloc'd stack %p-%p, %s\n", (void *)block, (void *)(block + size),
         (uintptr_t)(block + size + PAGE - 1) / PAGE * PAGE == (uintptr_t)(reserved + mapped)
             ? "an unreadable page above it"
             : "not below the unreadable page (another allocator, or the layout differs)");
  return block;
}

/* ---- fibers: makecontext on a stack from mmap or malloc ---- */

static ucontext_t main_context, fiber_context;
#ifdef LAGSCOPE_TEST_UNDER_TSAN
static void *main_fiber, *spin_fiber;
#endif

static void fiber_entry(void) {
  own_stack_spin();
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  __tsan_switch_to_fiber(main_fiber, 0);
#endif
  swapcontext(&fiber_context, &main_context);
}

static void run_on_fiber(void *stack, size_t size, const char *where) {
  CHECK(getcontext(&fiber_context) == 0);
  fiber_context.uc_stack.ss_sp = stack;
  fiber_context.uc_stack.ss_size = size;
  fiber_context.uc_link = &main_context;
  makecontext(&fiber_context, fiber_entry, 0);
  start_lagscope();
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  main_fiber = __tsan_get_current_fiber();
  spin_fiber = __tsan_create_fiber(0);
  __tsan_switch_to_fiber(spin_fiber, 0);
#endif
  CHECK(swapcontext(&main_context, &fiber_context) == 0);
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  __tsan_destroy_fiber(spin_fiber);
#endif
  uintptr_t sp = atomic_load(&spin_sp), base = (uintptr_t)stack;
  CHECK_MSG(sp >= base && sp < base + size, "own_stack_spin ran at %#lx, not on the fiber",
            (unsigned long)sp);
  end_and_check(where);
}

static void test_fiber_mmap(void) {
  uint8_t *stack = mmap(NULL, STACK_BYTES + 2 * PAGE, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  CHECK(stack != MAP_FAILED); /* a guard page below, as fiber libraries make, and one above */
  CHECK(mprotect(stack + PAGE, STACK_BYTES, PROT_READ | PROT_WRITE) == 0);
  run_on_fiber(stack + PAGE, STACK_BYTES, "fiber_mmap");
  munmap(stack, STACK_BYTES + 2 * PAGE);
}

static void test_fiber_malloc(void) {
  void *stack = malloc_below_fence(STACK_BYTES);
  run_on_fiber(stack, STACK_BYTES, "fiber_malloc");
  free(stack);
}

/* ---- a signal handler on a sigaltstack ---- */

static _Atomic int handler_on_altstack;

static void spin_handler(int sig) {
  (void)sig;
  stack_t now;
  atomic_store(&handler_on_altstack, sigaltstack(NULL, &now) == 0 && (now.ss_flags & SS_ONSTACK));
  own_stack_spin();
}

static void test_sigaltstack(void) {
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  printf("skipped: under ThreadSanitizer the handler runs with the capture signal blocked\n");
  exit(TEST_SKIP_CODE);
#endif
  stack_t alt = {.ss_sp = malloc_below_fence(STACK_BYTES), .ss_size = STACK_BYTES}, old;
  CHECK(sigaltstack(&alt, &old) == 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = spin_handler;
  sa.sa_flags = SA_ONSTACK;
  CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
  start_lagscope();
  raise(SIGUSR2);
  CHECK_MSG(atomic_load(&handler_on_altstack), "the handler did not run on the sigaltstack");
  uintptr_t sp = atomic_load(&spin_sp), base = (uintptr_t)alt.ss_sp;
  CHECK(sp >= base && sp < base + STACK_BYTES);
  end_and_check("sigaltstack");
  alt.ss_flags = SS_DISABLE;
  CHECK(sigaltstack(&alt, NULL) == 0);
  free(alt.ss_sp);
}

/* ---- the main stack, grown after start ---- */

/* DEEP_BYTES of main stack taken (alloca: on the real stack under ASan too) and touched from
 * the top down, as a deep recursion would; then the spin below them. */
__attribute__((noinline)) static void go_deep(void) {
  volatile char *pad = alloca(DEEP_BYTES);
  for (size_t i = DEEP_BYTES; i >= 4096; i -= 4096) pad[i - 1] = 1;
  own_stack_spin();
  __asm__ volatile("" : : "r"(pad) : "memory");
}

static void test_deep_main_stack(void) {
  start_lagscope();
  uintptr_t low = 0, high = 0, here = (uintptr_t)__builtin_frame_address(0);
  uint64_t deadline = lagscope__now_ns() + 10ull * 1000u * 1000u * 1000u;
  while (low == 0 && lagscope__now_ns() < deadline) { /* read as the monitor starts */
    lagscope_heartbeat();
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
    lagscope__capture_main_stack(&low, &high);
  }
  CHECK_MSG(low != 0 && low < here && here < high, "the main stack's mapping not known: %#lx-%#lx",
            (unsigned long)low, (unsigned long)high);
  spin_at_least_ns = REFRESH_WAIT_NS;
  go_deep();
  uintptr_t sp = atomic_load(&spin_sp), now_low;
  lagscope__capture_main_stack(&now_low, &high);
  printf("main stack at start from %#lx, at the spin %#lx, from %#lx after it\n",
         (unsigned long)low, (unsigned long)sp, (unsigned long)now_low);
  CHECK_MSG(sp < low, "the spin was not below the stack as it was at start");
  CHECK_MSG(now_low <= sp, "the mapping was not read again after the stack grew");
  end_and_check("deep_main_stack");
}

static const test_case cases[] = {
    TEST_CASE(fiber_mmap),
    TEST_CASE(fiber_malloc),
    TEST_CASE(sigaltstack),
    TEST_CASE(deep_main_stack),
};

int main(int argc, char **argv) {
  return run_test_case(argc, argv, cases, CASE_COUNT(cases));
}
