/* Why a thread was not running: each captured stack classified as one of LAGSCOPE__CAUSES's
 * kinds (cause.h; never deadlock), from what the port says of its system call (Linux: the
 * call's number and class) and from its innermost functions (the lock and wait functions of
 * libc and libpthread; on Darwin the kernel trap the innermost frame names). Portable: tested
 * on Linux with synthetic states for both ports' rules. No allocation, no lock. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *lagscope__cause_kind_name(int kind) {
  switch (kind) {
#define LAGSCOPE__CAUSE_NAME_(name, text, stack, colour, meaning) \
  case LAGSCOPE__CAUSE_##name: return text;
    LAGSCOPE__CAUSES(LAGSCOPE__CAUSE_NAME_)
#undef LAGSCOPE__CAUSE_NAME_
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
 * open-source libpthread, libplatform, libdispatch, CoreFoundation and Libc use them; matched
 * as prefixes, in order (kevent_id before kevent). The file-system calls are the ones a main
 * thread makes through Foundation and SQLite: Libc's fcntl (F_FULLFSYNC, SQLite's commit),
 * stat, rename and fsync wrappers, NSFileManager's directory walk (getattrlistbulk,
 * __getdirentries64). */
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
    {"__select", LAGSCOPE__CAUSE_IO},
    /* libdispatch's sync wait on a workloop-based queue (event_kevent.c,
     * _dispatch_event_loop_wait_for_ownership): kevent_id serves workloops only */
    {"kevent_id", LAGSCOPE__CAUSE_WAIT},           {"kevent", LAGSCOPE__CAUSE_IO},
    {"__open", LAGSCOPE__CAUSE_IO},                {"fsync", LAGSCOPE__CAUSE_IO},
    {"__fsync", LAGSCOPE__CAUSE_IO},               {"__pread", LAGSCOPE__CAUSE_IO},
    {"__pwrite", LAGSCOPE__CAUSE_IO},              {"__fcntl", LAGSCOPE__CAUSE_IO},
    {"__stat64", LAGSCOPE__CAUSE_IO},              {"__lstat64", LAGSCOPE__CAUSE_IO},
    {"__fstat64", LAGSCOPE__CAUSE_IO},             {"stat64", LAGSCOPE__CAUSE_IO},
    {"lstat64", LAGSCOPE__CAUSE_IO},               {"fstat64", LAGSCOPE__CAUSE_IO},
    {"getattrlistbulk", LAGSCOPE__CAUSE_IO},       {"getattrlist", LAGSCOPE__CAUSE_IO},
    {"__getattrlist", LAGSCOPE__CAUSE_IO},         {"__getdirentries64", LAGSCOPE__CAUSE_IO},
    {"__rename", LAGSCOPE__CAUSE_IO},              {"__unlink", LAGSCOPE__CAUSE_IO},
    {"__mkdir", LAGSCOPE__CAUSE_IO},               {"__close_nocancel", LAGSCOPE__CAUSE_IO},
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

/* xnu osfmk/mach/message.h: mach_msg's options, the second argument of both traps
 * (mach_msg_trap's mach_msg_option_t, mach_msg2_trap's mach_msg_option64_t keep the same low
 * bits). The run loop's wait (CF's __CFRunLoopServiceMachPort) only receives; an RPC
 * (CFMessagePortSendRequest, MIG) sends and receives in one call. */
#define MACH_SEND_MSG 0x1u
#define MACH_RCV_MSG 0x2u
#define RUN_LOOP_MIN_FRAMES 2 /* __CFRunLoopServiceMachPort and __CFRunLoopRun at least */

static int in_core_foundation(const char *module) {
  if (module == NULL) return 0;
  const char *slash = strrchr(module, '/');
  return strcmp(slash != NULL ? slash + 1 : module, "CoreFoundation") == 0;
}

/* A frame of CF's run loop: in CoreFoundation's image, nameless (a static in a device's
 * shared cache, dyld's "<redacted>") or named for the run loop (__CFRunLoopServiceMachPort,
 * __CFRunLoopRun, CFRunLoopRunSpecific, iOS 26's and macOS 26's
 * _CFRunLoopRunSpecificWithOptions, CFRunLoopRunInMode); without the image known, its name
 * alone. -1: another function of CoreFoundation (it called mach_msg: not the loop's wait). */
static int run_loop_frame(const char *name, const char *module) {
  int named_loop = name != NULL && strstr(name, "CFRunLoop") != NULL;
  if (!in_core_foundation(module)) return named_loop;
  return name == NULL || named_loop ? 1 : -1;
}

/* The run loop waiting for its next message: a receive-only mach_msg innermost (its
 * mach_msg*, frames), then at least two frames of CF's run loop, decided by CoreFoundation's
 * image and not by one exported name (CFRunLoopRunSpecific is gone from iOS 26's and macOS
 * 26's stacks). mach_msg under app code, a callout or another CF function: a wait. */
static int run_loop_wait(const lagscope__stack *s, const lagscope__frame_names *f) {
  size_t k = 0, own = 0;
  while (k < f->n && f->names[k] != NULL && strncmp(f->names[k], "mach_msg", 8) == 0) k++;
  if (k == 0) return 0;
  uintptr_t options = s->args[1];
  if (strstr(f->names[0], "_trap") != NULL &&
      ((options & MACH_SEND_MSG) != 0 || (options & MACH_RCV_MSG) == 0))
    return 0;
  for (; k < f->n; k++) {
    int loop = run_loop_frame(f->names[k], f->modules != NULL ? f->modules[k] : NULL);
    if (loop < 0) return 0;
    if (loop == 0) break;
    own++;
  }
  return own >= RUN_LOOP_MIN_FRAMES;
}

static lagscope__cause_kind darwin_kind(const lagscope__stack *s, const lagscope__frame_names *f) {
  const char *trap = f->n > 0 ? f->names[0] : NULL;
  if (trap == NULL) return LAGSCOPE__CAUSE_UNKNOWN;
  for (size_t i = 0; i < sizeof(darwin_traps) / sizeof(darwin_traps[0]); i++) {
    if (strncmp(trap, darwin_traps[i].trap, strlen(darwin_traps[i].trap)) != 0) continue;
    if (strncmp(trap, "mach_msg", 8) == 0 && run_loop_wait(s, f)) return LAGSCOPE__CAUSE_IDLE;
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
  /* libpthread's __psynch_rw_rdlock(rwlock, lgen, ugen, rw_wc, flags) and the other rw
   * waits: the lock is the first argument; readers have no one owner. */
  if (strncmp(trap, "__psynch_rw_", 12) == 0) {
    *address = args[0];
    return 1;
  }
  if (strncmp(trap, "__ulock_wait", 12) == 0 && ulock_is_lock(args[0])) {
    uint32_t value = (uint32_t)args[2];
    *address = args[1];
    /* A shared lock's value names a port of another task's space: no owner here. */
    int own_task = (args[0] & UL_OPCODE_MASK) == UL_UNFAIR_LOCK;
    *owner = own_task && value != 0 ? (uint64_t)(value | ULOCK_OWNER_LOW_BITS) : 0;
    *owner_is_port = 1;
    return 1;
  }
  return 0;
}

const char *lagscope__darwin_lock_noun(const char *trap) {
  return trap != NULL && strncmp(trap, "__psynch_rw_", 12) == 0 ? "rwlock" : "mutex";
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
  /* kevent_id with its callers nameless: only libdispatch's sync wait on a workloop blocks
   * a thread of the app there (a worker parks in __workq_kernreturn). */
  if (n > 0 && lagscope__darwin_queue_wait(names[0])) return "a busy dispatch queue (dispatch_sync)";
  return NULL;
}

int lagscope__darwin_queue_wait(const char *trap) {
  return trap != NULL && strcmp(trap, "kevent_id") == 0;
}

/* The fd-argument traps (their first argument), as Libc and libsystem_kernel call them. */
static const char *const fd_traps[] = {
    "__read", "read", "__write", "write", "__pread", "__pwrite", "__fcntl", "fsync", "__fsync",
    "__fstat64", "fstat64", "getattrlistbulk", "__getdirentries64", "__recvfrom", "__sendto",
    "__connect", "__accept", "__close_nocancel",
};
#define FD_LIMIT (1 << 24) /* beyond any descriptor table: not an fd */
/* Darwin's sys/fcntl.h: the commands that make a main thread wait. */
#define DARWIN_F_SETLKW 9
#define DARWIN_F_FULLFSYNC 51
#define DARWIN_F_BARRIERFSYNC 85

static const char *fcntl_command(uintptr_t cmd) {
  switch (cmd) {
    case DARWIN_F_FULLFSYNC: return "F_FULLFSYNC";
    case DARWIN_F_BARRIERFSYNC: return "F_BARRIERFSYNC";
    case DARWIN_F_SETLKW: return "F_SETLKW";
    default: return NULL;
  }
}

void lagscope__darwin_io_target(const char *trap, const uintptr_t *args, char *out, size_t size) {
  if (size == 0) return;
  out[0] = '\0';
  if (trap == NULL) return;
  intptr_t fd = (intptr_t)args[0];
  for (size_t i = 0; i < sizeof(fd_traps) / sizeof(fd_traps[0]); i++) {
    if (strncmp(trap, fd_traps[i], strlen(fd_traps[i])) != 0 || fd < 0 || fd >= FD_LIMIT) continue;
    const char *command = strncmp(trap, "__fcntl", 7) == 0 ? fcntl_command(args[1]) : NULL;
    snprintf(out, size, "fd %d%s%s%s", (int)fd, command != NULL ? " (" : "",
             command != NULL ? command : "", command != NULL ? ")" : "");
    return;
  }
}

lagscope__cause_kind lagscope__classify_stack(const lagscope__stack *s,
                                              const lagscope__frame_names *f) {
  switch ((lagscope__run_state)s->run_state) {
    case LAGSCOPE__RUN_CPU: return LAGSCOPE__CAUSE_CPU;
    case LAGSCOPE__RUN_UNKNOWN:
    case LAGSCOPE__RUN_BLOCKED: return LAGSCOPE__CAUSE_UNKNOWN;
    case LAGSCOPE__RUN_SYSCALL: break;
  }
  if (s->syscall < 0) return darwin_kind(s, f);
  int fd_arg;
  switch (lagscope__syscall_classify(s->syscall, &fd_arg)) {
    case LAGSCOPE__SYSCALL_SLEEP: return LAGSCOPE__CAUSE_SLEEP;
    case LAGSCOPE__SYSCALL_IO: return LAGSCOPE__CAUSE_IO;
    case LAGSCOPE__SYSCALL_POLL: return s->loop_wait ? LAGSCOPE__CAUSE_IDLE : LAGSCOPE__CAUSE_IO;
    case LAGSCOPE__SYSCALL_FUTEX: return futex_kind(f->names, f->n);
    case LAGSCOPE__SYSCALL_WAIT: return LAGSCOPE__CAUSE_WAIT;
    case LAGSCOPE__SYSCALL_OTHER: break;
  }
  return LAGSCOPE__CAUSE_UNKNOWN;
}
