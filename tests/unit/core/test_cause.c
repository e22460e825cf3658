/* The classifier (core/cause/cause.c) on synthetic thread states: Linux's syscalls with the
 * functions libc waits in, Darwin's kernel traps by name (the run loop's mach_msg is idle),
 * and the /proc/self/task/TID/syscall parser (core/linux/thread_state.c) fed odd lines. The
 * kinds' names against their list, LAGSCOPE__CAUSES; a new kind gets its EXPECT lines here
 * (docs/hacking.md, "Recipe: a new cause kind"). */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "linux/linux.h"

#include <string.h>
#include <sys/syscall.h>

static lagscope__stack stack(int run_state, int32_t syscall_nr) {
  lagscope__stack s;
  memset(&s, 0, sizeof(s));
  s.run_state = (uint8_t)run_state;
  s.syscall = syscall_nr;
  return s;
}

static const char *kind_of(int run_state, int32_t nr, const char *const *names, size_t n) {
  lagscope__stack s = stack(run_state, nr);
  s.args[1] = 0x906; /* a mach_msg that only receives, as CF's run loop waits */
  lagscope__frame_names f = {names, NULL, n};
  return lagscope__cause_kind_name(lagscope__classify_stack(&s, &f));
}

/* Darwin frames with their images, as a device symbolicates them ("K" libsystem_kernel, "CF"
 * CoreFoundation, "UI" UIKitCore, "" the app), and mach_msg's options (its second argument). */
#define CF_PATH "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
static const char *darwin_kind_of(uintptr_t options, const char *const *names,
                                  const char *const *images, size_t n) {
  const char *modules[16];
  for (size_t k = 0; k < n && k < 16; k++)
    modules[k] = strcmp(images[k], "CF") == 0   ? CF_PATH
                 : strcmp(images[k], "K") == 0  ? "/usr/lib/system/libsystem_kernel.dylib"
                 : strcmp(images[k], "UI") == 0 ? "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore"
                                                : "/private/var/containers/Bundle/Application/X/App.app/App";
  lagscope__stack s = stack(LAGSCOPE__RUN_SYSCALL, -1);
  s.args[1] = options;
  lagscope__frame_names f = {names, modules, n};
  return lagscope__cause_kind_name(lagscope__classify_stack(&s, &f));
}

#define EXPECT_DARWIN(kind, options, ...)                                                   \
  do {                                                                                     \
    const char *pairs_[] = {__VA_ARGS__};                                                  \
    const char *names_[8], *images_[8];                                                    \
    size_t n_ = sizeof(pairs_) / sizeof(pairs_[0]) / 2;                                    \
    for (size_t k_ = 0; k_ < n_; k_++) names_[k_] = pairs_[2 * k_], images_[k_] = pairs_[2 * k_ + 1]; \
    const char *got_ = darwin_kind_of(options, names_, images_, n_);                       \
    CHECK_MSG(strcmp(got_, kind) == 0, "line %d: %s expected, %s classified", __LINE__, kind, got_); \
  } while (0)

/* A Darwin __ulock_wait with its operation (the first argument) as libplatform and
 * libdispatch pass it: UL_UNFAIR_LOCK 2, UL_COMPARE_AND_WAIT 1 (xnu bsd/sys/ulock.h), with
 * ULF_NO_ERRNO (0x01000000) set as both do. */
static const char *ulock_kind(uintptr_t operation, const char *const *names, size_t n) {
  lagscope__stack s = stack(LAGSCOPE__RUN_SYSCALL, -1);
  s.args[0] = operation;
  lagscope__frame_names f = {names, NULL, n};
  return lagscope__cause_kind_name(lagscope__classify_stack(&s, &f));
}

/* LAGSCOPE__CAUSES (cause.h): the enum numbered from 0 in the list's order, each kind's name
 * the list's and its own, a number outside the list "unknown". */
static void check_names(void) {
  int k = 0;
#define CHECK_NAME_(name, text, stack, colour, meaning)                                       \
  CHECK_EQ_INT(LAGSCOPE__CAUSE_##name, k);                                                    \
  CHECK_MSG(strcmp(lagscope__cause_kind_name(k), text) == 0, "kind %d is %s, the list's %s", k, \
            lagscope__cause_kind_name(k), text);                                              \
  k++;
  LAGSCOPE__CAUSES(CHECK_NAME_)
#undef CHECK_NAME_
  CHECK_EQ_INT(k, LAGSCOPE__CAUSE_COUNT);
  for (int a = 0; a < k; a++)
    for (int b = a + 1; b < k; b++)
      CHECK_MSG(strcmp(lagscope__cause_kind_name(a), lagscope__cause_kind_name(b)) != 0,
                "kinds %d and %d are both %s", a, b, lagscope__cause_kind_name(a));
  CHECK(strcmp(lagscope__cause_kind_name(LAGSCOPE__CAUSE_COUNT), "unknown") == 0);
  CHECK(strcmp(lagscope__cause_kind_name(-1), "unknown") == 0);
}

#define EXPECT(kind, run_state, nr, ...)                                                   \
  do {                                                                                     \
    const char *names_[] = {__VA_ARGS__};                                                  \
    const char *got_ = kind_of(run_state, nr, names_, sizeof(names_) / sizeof(names_[0])); \
    CHECK_MSG(strcmp(got_, kind) == 0, "%s expected, %s classified", kind, got_);          \
  } while (0)

int main(void) {
  const int cpu = LAGSCOPE__RUN_CPU, sys = LAGSCOPE__RUN_SYSCALL;
  check_names();
  /* Linux: the call's class, and for a futex the functions that wait on it. */
  EXPECT("cpu", cpu, -1, "spin");
  EXPECT("sleep", sys, SYS_clock_nanosleep, "clock_nanosleep", "nanosleep", "main");
  EXPECT("io", sys, SYS_read, "read", "main");
  EXPECT("io", sys, SYS_ppoll, "ppoll", "main");
  lagscope__stack own_wait = stack(sys, SYS_ppoll); /* on the event loop's own fds */
  own_wait.loop_wait = 1;
  lagscope__frame_names none = {NULL, NULL, 0};
  CHECK(lagscope__classify_stack(&own_wait, &none) == LAGSCOPE__CAUSE_IDLE);
  EXPECT("io", sys, SYS_recvfrom, "recvfrom", "main");
  EXPECT("lock", sys, SYS_futex, "__GI___lll_lock_wait", "pthread_mutex_lock", "main");
  EXPECT("lock", sys, SYS_futex, "__futex_abstimed_wait_common", "pthread_rwlock_wrlock", "f");
  EXPECT("wait", sys, SYS_futex, "__futex_abstimed_wait_common", "pthread_cond_wait", "main");
  EXPECT("wait", sys, SYS_futex, "__futex_abstimed_wait_common", "sem_wait", "main");
  EXPECT("wait", sys, SYS_futex, NULL, NULL);
  EXPECT("wait", sys, SYS_wait4, "wait4", "main");
  EXPECT("unknown", sys, SYS_getpid, "getpid");
  EXPECT("unknown", LAGSCOPE__RUN_BLOCKED, -1, "main");
  EXPECT("unknown", LAGSCOPE__RUN_UNKNOWN, -1, "main");
  /* Darwin: no number; the innermost frame is the trap. */
  EXPECT("lock", sys, -1, "__psynch_mutexwait", "_pthread_mutex_firstfit_lock_wait", "main");
  /* Defect 3: only an unfair lock's __ulock_wait is a lock (xnu bsd/sys/ulock.h, the
   * operation's low byte). libplatform's _os_unfair_lock_lock_slow: UL_UNFAIR_LOCK; libdispatch's
   * _dispatch_thread_event_wait_slow (src/shims/lock.c), reached from dispatch_sync on a busy
   * queue through __DISPATCH_WAIT_FOR_QUEUE__ (src/queue.c): UL_COMPARE_AND_WAIT, a wait. */
  const char *unfair_names[] = {"__ulock_wait2", "_os_unfair_lock_lock_slow", "main"};
  CHECK(strcmp(ulock_kind(0x01000002, unfair_names, 3), "lock") == 0);
  const char *sync_names[] = {"__ulock_wait", "_dlock_wait", "_dispatch_thread_event_wait_slow",
                              "__DISPATCH_WAIT_FOR_QUEUE__", "_dispatch_sync_f_slow", "refresh"};
  CHECK(strcmp(ulock_kind(0x01000001, sync_names, 6), "wait") == 0);
  CHECK(strcmp(ulock_kind(0x01000002, sync_names, 6), "lock") == 0); /* the operation decides */
  CHECK(strcmp(lagscope__darwin_wait_for(sync_names, 6), "a busy dispatch queue (dispatch_sync)") == 0);
  /* On a device the statics are nameless ("<redacted>"), dispatch_sync exported. */
  const char *device_sync[] = {"__ulock_wait", NULL, NULL, NULL, "dispatch_sync", "refresh"};
  CHECK(strcmp(lagscope__darwin_wait_for(device_sync, 6), "a busy dispatch queue (dispatch_sync)") == 0);
  const char *no_hint[] = {"__ulock_wait", NULL, "refresh"};
  CHECK(lagscope__darwin_wait_for(no_hint, 3) == NULL);
  EXPECT("wait", sys, -1, "__psynch_cvwait", "_pthread_cond_wait", "main");
  EXPECT("sleep", sys, -1, "__semwait_signal", "nanosleep", "usleep");
  EXPECT("io", sys, -1, "read", "main");
  EXPECT("idle", sys, -1, "mach_msg2_trap", "mach_msg2_internal", "mach_msg_overwrite",
         "mach_msg", "__CFRunLoopServiceMachPort", "__CFRunLoopRun");
  EXPECT("wait", sys, -1, "mach_msg2_trap", "mach_msg2_internal", "mach_msg", "my_rpc");
  /* Issue 46, defect 2: the run loop by CoreFoundation's image and a receive-only mach_msg,
   * not by one exported name. iOS 26 and macOS 26 show _CFRunLoopRunSpecificWithOptions where
   * CFRunLoopRunSpecific was; on a device CF's statics are nameless. */
  const uintptr_t rcv = 0x906, send_rcv = 0x903;
  EXPECT_DARWIN("idle", rcv, "mach_msg2_trap", "K", "mach_msg2_internal", "K", "mach_msg_overwrite", "K",
                "mach_msg", "K", NULL, "CF", NULL, "CF", "_CFRunLoopRunSpecificWithOptions", "CF",
                "GSEventRunModal", "UI");
  EXPECT_DARWIN("idle", rcv, "mach_msg2_trap", "K", "mach_msg", "K", NULL, "CF", NULL, "CF", NULL, "CF",
                NULL, "CF", "GSEventRunModal", "UI"); /* every CF frame nameless */
  EXPECT_DARWIN("idle", rcv, "mach_msg_trap", "K", "mach_msg", "K", "__CFRunLoopServiceMachPort", "CF",
                "__CFRunLoopRun", "CF", "CFRunLoopRunSpecific", "CF", "CFRunLoopRunInMode", "CF");
  /* An RPC from CF (CFMessagePortSendRequest sends and receives in one mach_msg): a wait, by
   * its options, and by its name where it has one. */
  EXPECT_DARWIN("wait", send_rcv, "mach_msg2_trap", "K", "mach_msg", "K", NULL, "CF", NULL, "CF",
                "_CFRunLoopRunSpecificWithOptions", "CF");
  EXPECT_DARWIN("wait", rcv, "mach_msg2_trap", "K", "mach_msg", "K", "CFMessagePortSendRequest", "CF",
                "my_rpc", "");
  /* One CF frame, or mach_msg under the app's code or a UIKit function: a wait. */
  EXPECT_DARWIN("wait", rcv, "mach_msg2_trap", "K", "mach_msg", "K", NULL, "CF", "my_rpc", "");
  EXPECT_DARWIN("wait", rcv, "mach_msg2_trap", "K", "mach_msg", "K", "my_rpc", "", NULL, "CF", NULL, "CF");
  EXPECT_DARWIN("wait", rcv, "mach_msg2_trap", "K", "mach_msg", "K", NULL, "UI", NULL, "CF", NULL, "CF");
  /* Images not known: the run loop's names alone. */
  EXPECT("wait", sys, -1, "mach_msg2_trap", "mach_msg", NULL, NULL, NULL, "CFRunLoopRunSpecific");
  EXPECT("wait", sys, -1, "mach_msg2_trap", "mach_msg", "my_rpc", "CFRunLoopRunSpecific");
  EXPECT("wait", sys, -1, "mach_msg2_trap", "mach_msg", NULL, NULL);
  /* Defect 1: kevent_id is libdispatch's sync wait on a workloop (event_kevent.c), not io;
   * kevent on the app's kqueue stays io. */
  EXPECT("wait", sys, -1, "kevent_id", NULL, NULL, "dispatch_sync", "refresh");
  EXPECT("io", sys, -1, "kevent", "my_loop");
  EXPECT("io", sys, -1, "kevent64", "my_loop");
  const char *device_kevent[] = {"kevent_id", NULL, NULL, NULL, NULL, "refresh"};
  CHECK(strcmp(lagscope__darwin_wait_for(device_kevent, 6), "a busy dispatch queue (dispatch_sync)") == 0);
  CHECK(lagscope__darwin_queue_wait("kevent_id") && !lagscope__darwin_queue_wait("kevent") &&
        !lagscope__darwin_queue_wait(NULL));
  /* Defect 3: the file-system traps a main thread blocks in, as Libc and Foundation call them. */
  EXPECT("io", sys, -1, "__fcntl", "fcntl", "unixSync");
  EXPECT("io", sys, -1, "__fcntl_nocancel", "fcntl");
  EXPECT("io", sys, -1, "__stat64", "stat", "main");
  EXPECT("io", sys, -1, "getattrlistbulk", "main");
  EXPECT("io", sys, -1, "__getdirentries64", "readdir", "main");
  EXPECT("io", sys, -1, "__rename", "rename", "main");
  EXPECT("io", sys, -1, "__fsync_nocancel", "fsync", "main");
  char target[64];
  const uintptr_t fullfsync[6] = {7, 51, 0, 0, 0, 0}, barrier[6] = {9, 85, 0, 0, 0, 0},
                  getpath[6] = {9, 50, 0, 0, 0, 0}, path_call[6] = {0x16f5a2000, 0x16f5a3000, 0, 0, 0, 0};
  lagscope__darwin_io_target("__fcntl", fullfsync, target, sizeof(target));
  CHECK_MSG(strcmp(target, "fd 7 (F_FULLFSYNC)") == 0, "%s", target);
  lagscope__darwin_io_target("__fcntl_nocancel", barrier, target, sizeof(target));
  CHECK(strcmp(target, "fd 9 (F_BARRIERFSYNC)") == 0);
  lagscope__darwin_io_target("__fcntl", getpath, target, sizeof(target));
  CHECK(strcmp(target, "fd 9") == 0);
  lagscope__darwin_io_target("__fsync_nocancel", fullfsync, target, sizeof(target));
  CHECK(strcmp(target, "fd 7") == 0);
  lagscope__darwin_io_target("__getdirentries64", barrier, target, sizeof(target));
  CHECK(strcmp(target, "fd 9") == 0);
  lagscope__darwin_io_target("__stat64", path_call, target, sizeof(target));
  CHECK(target[0] == '\0'); /* a path: not read (docs/apple.md) */
  lagscope__darwin_io_target("__read", path_call, target, sizeof(target)); /* no fd: an address */
  CHECK(target[0] == '\0');
  lagscope__darwin_io_target(NULL, fullfsync, target, sizeof(target));
  CHECK(target[0] == '\0');
  EXPECT("unknown", sys, -1, NULL);

  /* Darwin: the lock a trap waits for, and its owner, from the trap's arguments. */
  uintptr_t address;
  uint64_t owner;
  int is_port;
  const uintptr_t mutexwait[6] = {0x1000, 1, 2, 7001, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__psynch_mutexwait", mutexwait, &address, &owner, &is_port));
  CHECK(address == 0x1000 && owner == 7001 && !is_port);
  const uintptr_t unfair[6] = {0x01000002, 0x2000, 0x302, 0, 0, 0}; /* bit 0 cleared: waiters */
  CHECK(lagscope__darwin_lock_wait("__ulock_wait2", unfair, &address, &owner, &is_port));
  CHECK(address == 0x2000 && owner == 0x303 && is_port);
  /* Defect 2: libdispatch's locks (dispatch_once's gate, swift_once under it) store the owner
   * as port & ~3 with waiters in bit 0 and a failed trylock in bit 1 (src/shims/lock.h,
   * DLOCK_OWNER_MASK, _dispatch_lock_owner: value | 3); xnu restores it the same way
   * (bsd/sys/ulock.h, ulock_owner_value_to_port_name). Port 0x1a03 with waiters: 0x1a01;
   * without: 0x1a00. Both name 0x1a03, never 0x1a01. */
  const uintptr_t once_waiters[6] = {0x01000002, 0x4000, 0x1a01, 0, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__ulock_wait", once_waiters, &address, &owner, &is_port));
  CHECK(owner == 0x1a03 && is_port);
  const uintptr_t once_plain[6] = {0x01000002, 0x4000, 0x1a00, 0, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__ulock_wait", once_plain, &address, &owner, &is_port));
  CHECK(owner == 0x1a03);
  const uintptr_t compare_and_wait[6] = {0x01000001, 0x3000, 5, 0, 0, 0}; /* not a lock */
  CHECK(!lagscope__darwin_lock_wait("__ulock_wait", compare_and_wait, &address, &owner, &is_port));
  const uintptr_t unowned[6] = {2, 0x2000, 0, 0, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__ulock_wait", unowned, &address, &owner, &is_port) && owner == 0);
  /* Issue 46, defect 5: a pthread rwlock by its first argument (libpthread's
   * __psynch_rw_rdlock(rwlock, lgen, ugen, rw_wc, flags)); a shared unfair lock
   * (UL_UNFAIR_LOCK64_SHARED 4) by its address, its value naming no port of this task. */
  const uintptr_t rwlock[6] = {0x16f5a2d00, 0x300, 0x200, 0x100, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__psynch_rw_rdlock", rwlock, &address, &owner, &is_port));
  CHECK(address == 0x16f5a2d00 && owner == 0);
  CHECK(strcmp(lagscope__darwin_lock_noun("__psynch_rw_wrlock"), "rwlock") == 0);
  CHECK(strcmp(lagscope__darwin_lock_noun("__psynch_mutexwait"), "mutex") == 0);
  const uintptr_t shared[6] = {0x01000004, 0x5000, 0x1a02, 0, 0, 0};
  CHECK(lagscope__darwin_lock_wait("__ulock_wait2", shared, &address, &owner, &is_port));
  CHECK(address == 0x5000 && owner == 0);
  CHECK(!lagscope__darwin_lock_wait("__psynch_cvwait", mutexwait, &address, &owner, &is_port));
  CHECK(!lagscope__darwin_lock_wait(NULL, mutexwait, &address, &owner, &is_port));

  /* The syscall file's three forms, and lines that are not. */
  lagscope__linux_thread_state st;
  CHECK_EQ_INT(lagscope__linux_parse_syscall("running\n", &st), 0);
  CHECK(st.running);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("230 0x0 0x0 0x7ffc1 0x7ffc2 0x0 0x0 0x7ffcc8 "
                                             "0x7fb9ed697503\n", &st), 0);
  CHECK(!st.running && st.nr == 230 && st.args[2] == 0x7ffc1 && st.sp == 0x7ffcc8 &&
        st.pc == 0x7fb9ed697503);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("-1 0x7ffc 0x4011\n", &st), 0);
  CHECK(st.nr == -1 && st.sp == 0x7ffc && st.pc == 0x4011);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("", &st), -1);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("7 0x1 0x2\n", &st), -1);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("-2 0x1 0x2\n", &st), -1);
  CHECK_EQ_INT(lagscope__linux_parse_syscall("1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 junk", &st), -1);
  printf("the classifier and the syscall parser: ok\n");
  return 0;
}
