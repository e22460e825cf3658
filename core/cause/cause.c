/* Why a thread was not running: each captured stack classified as cpu, lock, wait, sleep, io,
 * idle or unknown, from what the port says of its system call (Linux: the call's number and
 * class) and from its innermost functions (the lock and wait functions of libc and libpthread;
 * on Darwin the kernel trap the innermost frame names). Portable: tested on Linux with
 * synthetic states for both ports' rules. No allocation, no lock. */
#include "internal.h"

#include <string.h>

const char *lagscope__cause_kind_name(int kind) {
  switch (kind) {
    case LAGSCOPE__CAUSE_CPU: return "cpu";
    case LAGSCOPE__CAUSE_LOCK: return "lock";
    case LAGSCOPE__CAUSE_WAIT: return "wait";
    case LAGSCOPE__CAUSE_SLEEP: return "sleep";
    case LAGSCOPE__CAUSE_IO: return "io";
    case LAGSCOPE__CAUSE_DEADLOCK: return "deadlock";
    case LAGSCOPE__CAUSE_IDLE: return "idle";
    case LAGSCOPE__CAUSE_UNKNOWN: break;
  }
  return "unknown";
}

static int any_contains(const char *const *names, size_t n, const char *part) {
  for (size_t i = 0; i < n; i++)
    if (names[i] != NULL && strstr(names[i], part) != NULL) return 1;
  return 0;
}

/* A futex wait is a lock when a lock function waits on it (glibc: __lll_lock_wait under
 * pthread_mutex_lock, the rwlock functions, a PI mutex's lock); otherwise it is a condition
 * variable, a semaphore, a join or a barrier: a wait. */
static lagscope__cause_kind futex_kind(const char *const *names, size_t n) {
  static const char *const locks[] = {"mutex_lock", "lll_lock", "mutex_timedlock",
                                      "mutex_clocklock", "rwlock_", "spin_lock"};
  for (size_t i = 0; i < sizeof(locks) / sizeof(locks[0]); i++)
    if (any_contains(names, n, locks[i])) return LAGSCOPE__CAUSE_LOCK;
  return LAGSCOPE__CAUSE_WAIT;
}

/* Darwin: the trap the innermost frame names (libsystem_kernel's stubs), as Apple's
 * open-source libpthread, libplatform and CoreFoundation use them. */
static const struct {
  const char *trap;
  lagscope__cause_kind kind;
} darwin_traps[] = {
    {"__psynch_mutexwait", LAGSCOPE__CAUSE_LOCK},  {"__ulock_wait", LAGSCOPE__CAUSE_WAIT},
    {"__psynch_rw_", LAGSCOPE__CAUSE_LOCK},        {"__psynch_cvwait", LAGSCOPE__CAUSE_WAIT},
    {"semaphore_wait_trap", LAGSCOPE__CAUSE_WAIT}, {"semaphore_timedwait_trap", LAGSCOPE__CAUSE_WAIT},
    {"__semwait_signal", LAGSCOPE__CAUSE_SLEEP},   {"__wait4", LAGSCOPE__CAUSE_WAIT},
    {"__sigwait", LAGSCOPE__CAUSE_WAIT},           {"__workq_kernreturn", LAGSCOPE__CAUSE_WAIT},
    {"mach_msg", LAGSCOPE__CAUSE_WAIT},            {"__read", LAGSCOPE__CAUSE_IO},
    {"read", LAGSCOPE__CAUSE_IO},                  {"__write", LAGSCOPE__CAUSE_IO},
    {"write", LAGSCOPE__CAUSE_IO},                 {"__recvfrom", LAGSCOPE__CAUSE_IO},
    {"__sendto", LAGSCOPE__CAUSE_IO},              {"__connect", LAGSCOPE__CAUSE_IO},
    {"__accept", LAGSCOPE__CAUSE_IO},              {"poll", LAGSCOPE__CAUSE_IO},
    {"__select", LAGSCOPE__CAUSE_IO},              {"kevent", LAGSCOPE__CAUSE_IO},
    {"__open", LAGSCOPE__CAUSE_IO},                {"fsync", LAGSCOPE__CAUSE_IO},
    {"__pread", LAGSCOPE__CAUSE_IO},               {"__pwrite", LAGSCOPE__CAUSE_IO},
};

/* xnu bsd/sys/ulock.h: __ulock_wait's operation is its first argument's low byte. Only the
 * unfair locks have an owner; UL_COMPARE_AND_WAIT and the rest wait for a value to change
 * (libdispatch's thread events under dispatch_sync, its semaphores, groups). */
#define UL_UNFAIR_LOCK 2u
#define UL_UNFAIR_LOCK64_SHARED 4u
#define UL_OPCODE_MASK 0xFFu
/* xnu bsd/sys/ulock.h, ulock_owner_value_to_port_name: a Mach port name ends in 0b11 and user
 * space keeps flags there (libplatform's no-waiters bit 0; libdispatch's shims/lock.h,
 * _dispatch_lock_owner: waiters bit 0, failed-trylock bit 1), so the owner is the value | 3. */
#define ULOCK_OWNER_LOW_BITS 3u

static int ulock_is_lock(uintptr_t operation) {
  uintptr_t op = operation & UL_OPCODE_MASK;
  return op == UL_UNFAIR_LOCK || op == UL_UNFAIR_LOCK64_SHARED;
}

/* The run loop waiting for its next message: the mach_msg family innermost, then at most two
 * of the run loop's own functions (__CFRunLoopServiceMachPort, __CFRunLoopRun: static, so
 * nameless in an iOS device's shared cache, dyld's "<redacted>"), then the exported
 * CFRunLoopRunSpecific that every run (default, modal, tracking mode) goes through. A
 * mach_msg under app code or a run loop callout has more frames between: a wait. Named,
 * __CFRunLoopServiceMachPort is proof enough. */
#define RUN_LOOP_OWN_FRAMES 2
static int run_loop_wait(const char *const *names, size_t n) {
  size_t k = 0, own = 0;
  while (k < n && names[k] != NULL && strncmp(names[k], "mach_msg", 8) == 0) k++;
  if (k == 0) return 0;
  for (; k < n; k++) {
    if (names[k] != NULL && (strcmp(names[k], "CFRunLoopRunSpecific") == 0 ||
                             strcmp(names[k], "__CFRunLoopServiceMachPort") == 0))
      return 1; /* the wait's own function, where it has its name (simulator, macOS) */
    int runloop_own = names[k] == NULL || strncmp(names[k], "__CFRunLoop", 11) == 0;
    if (!runloop_own || ++own > RUN_LOOP_OWN_FRAMES) return 0;
  }
  return 0;
}

static lagscope__cause_kind darwin_kind(const lagscope__stack *s, const char *const *names,
                                        size_t n) {
  const char *trap = n > 0 ? names[0] : NULL;
  if (trap == NULL) return LAGSCOPE__CAUSE_UNKNOWN;
  for (size_t i = 0; i < sizeof(darwin_traps) / sizeof(darwin_traps[0]); i++) {
    if (strncmp(trap, darwin_traps[i].trap, strlen(darwin_traps[i].trap)) != 0) continue;
    if (strncmp(trap, "mach_msg", 8) == 0 && run_loop_wait(names, n)) return LAGSCOPE__CAUSE_IDLE;
    if (strncmp(trap, "__ulock_wait", 12) == 0 && ulock_is_lock(s->args[0]))
      return LAGSCOPE__CAUSE_LOCK;
    return darwin_traps[i].kind;
  }
  return LAGSCOPE__CAUSE_UNKNOWN;
}


int lagscope__darwin_lock_wait(const char *trap, const uintptr_t *args, uintptr_t *address,
                               uint64_t *owner, int *owner_is_port) {
  *address = 0;
  *owner = 0;
  *owner_is_port = 0;
  if (trap == NULL) return 0;
  if (strcmp(trap, "__psynch_mutexwait") == 0) {
    *address = args[0];
    *owner = (uint64_t)args[3];
    return 1;
  }
  if (strncmp(trap, "__ulock_wait", 12) == 0 && (args[0] & UL_OPCODE_MASK) == UL_UNFAIR_LOCK) {
    uint32_t value = (uint32_t)args[2];
    *address = args[1];
    *owner = value != 0 ? (uint64_t)(value | ULOCK_OWNER_LOW_BITS) : 0;
    *owner_is_port = 1;
    return 1;
  }
  return 0;
}

/* libdispatch's waits by the functions on the way (src/queue.c: dispatch_sync reaches
 * _dispatch_sync_f_slow, which waits in __DISPATCH_WAIT_FOR_QUEUE__ on a thread event,
 * _dispatch_thread_event_wait_slow, a UL_COMPARE_AND_WAIT; src/semaphore.c). The exported names
 * survive in a device's shared cache, the static ones only in the simulator's and macOS's. */
static const struct {
  const char *function, *what;
} darwin_waits[] = {
    {"__DISPATCH_WAIT_FOR_QUEUE__", "a busy dispatch queue (dispatch_sync)"},
    {"_dispatch_sync_f_slow", "a busy dispatch queue (dispatch_sync)"},
    {"_dispatch_async_and_wait", "a busy dispatch queue (dispatch_async_and_wait)"},
    {"dispatch_async_and_wait", "a busy dispatch queue (dispatch_async_and_wait)"},
    {"dispatch_barrier_sync", "a busy dispatch queue (dispatch_barrier_sync)"},
    {"dispatch_sync", "a busy dispatch queue (dispatch_sync)"},
    {"dispatch_group_wait", "a dispatch group (dispatch_group_wait)"},
    {"dispatch_semaphore_wait", "a dispatch semaphore (dispatch_semaphore_wait)"},
    {"pthread_join", "a thread to end (pthread_join)"},
};

const char *lagscope__darwin_wait_for(const char *const *names, size_t n) {
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; names[k] != NULL && i < sizeof(darwin_waits) / sizeof(darwin_waits[0]); i++)
      if (strcmp(names[k], darwin_waits[i].function) == 0) return darwin_waits[i].what;
  return NULL;
}

lagscope__cause_kind lagscope__classify_stack(const lagscope__stack *s, const char *const *names,
                                              size_t n) {
  switch ((lagscope__run_state)s->run_state) {
    case LAGSCOPE__RUN_CPU: return LAGSCOPE__CAUSE_CPU;
    case LAGSCOPE__RUN_UNKNOWN:
    case LAGSCOPE__RUN_BLOCKED: return LAGSCOPE__CAUSE_UNKNOWN;
    case LAGSCOPE__RUN_SYSCALL: break;
  }
  if (s->syscall < 0) return darwin_kind(s, names, n);
  int fd_arg;
  switch (lagscope__syscall_classify(s->syscall, &fd_arg)) {
    case LAGSCOPE__SYSCALL_SLEEP: return LAGSCOPE__CAUSE_SLEEP;
    case LAGSCOPE__SYSCALL_IO: return LAGSCOPE__CAUSE_IO;
    case LAGSCOPE__SYSCALL_POLL: return s->loop_wait ? LAGSCOPE__CAUSE_IDLE : LAGSCOPE__CAUSE_IO;
    case LAGSCOPE__SYSCALL_FUTEX: return futex_kind(names, n);
    case LAGSCOPE__SYSCALL_WAIT: return LAGSCOPE__CAUSE_WAIT;
    case LAGSCOPE__SYSCALL_OTHER: break;
  }
  return LAGSCOPE__CAUSE_UNKNOWN;
}
