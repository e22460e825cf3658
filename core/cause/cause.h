/*
 * Causes: why a thread was not running (one stack's cause, cause.c). A hang's verdict over its
 * samples and threads (lock chains, deadlocks, the sentence and label) is the report's, made
 * over its data: core/report/verdict.c.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_CAUSE_H
#define LAGSCOPE_CAUSE_H

#include "base/base.h"
#include "stack/stack.h"
#include "port.h"

/* ---- causes (core/cause/cause.c): why a thread was not running ------------------------------ */
/* The cause kinds, the one list of them: XX(NAME, "name", stack, "colour", "meaning").
 *   NAME     the enum's LAGSCOPE__CAUSE_NAME, numbered in this order (the metrics print in it)
 *   name     the report's cause.kind, the metrics' kind label, the viewer's data-kind
 *   stack    1: one stack can be of it (a sample's kind, a phase's: assets/verdict.js's
 *            PHASE_KINDS); 0: a verdict's only (a deadlock takes a chain)
 *   colour   the viewer's --kind for it (assets/viewer.css, [data-kind="name"])
 *   meaning  its line in docs/hang-report.md's table of kinds
 * tests/unit/viewer/causes.test.mjs checks viewer.css, verdict.js and the docs against this
 * list. A new kind: docs/hacking.md, "Recipe: a new cause kind". */
#define LAGSCOPE__CAUSES(XX)                                                                       \
  XX(CPU, "cpu", 1, "var(--c-cpu)",                                                                \
     "on the CPU: running or ready to run")                                                        \
  XX(LOCK, "lock", 1, "#ff9f43",                                                                   \
     "waiting for a mutex or rwlock")                                                              \
  XX(WAIT, "wait", 1, "var(--c-warn)",                                                             \
     "a condition variable, a semaphore, a join, `waitpid`, a message")                            \
  XX(SLEEP, "sleep", 1, "var(--c-accent)",                                                         \
     "`nanosleep` and friends")                                                                    \
  XX(IO, "io", 1, "var(--c-mem)",                                                                  \
     "`read`, `write`, `recv`, `connect`, `poll` on the app's fds, ...")                           \
  XX(DEADLOCK, "deadlock", 0, "var(--c-bad)",                                                      \
     "a lock chain that comes back to a thread in it (a verdict's, never a sample's)")             \
  XX(IDLE, "idle", 1, "var(--c-good)",                                                             \
     "its own event loop's wait (Darwin: `mach_msg` in the run loop)")                             \
  XX(UNKNOWN, "unknown", 1, "var(--c-muted)",                                                      \
     "none of these: a call not classified, off the CPU in no call (stopped, a page fault),"       \
     " or a state not read")

typedef enum lagscope__cause_kind {
#define LAGSCOPE__CAUSE_ENUM_(name, text, stack, colour, meaning) LAGSCOPE__CAUSE_##name,
  LAGSCOPE__CAUSES(LAGSCOPE__CAUSE_ENUM_)
#undef LAGSCOPE__CAUSE_ENUM_
  LAGSCOPE__CAUSE_COUNT
} lagscope__cause_kind;
/* The kind's name in LAGSCOPE__CAUSES ("cpu", "lock", ...); "unknown" for a number not in it. F */
const char *lagscope__cause_kind_name(int kind);
/* A stack's innermost frames as the classifier reads them: function names (names[0] the
 * innermost; NULL where unknown: Darwin's "<redacted>" statics) and, where known, the path of
 * the image each is in (modules may be NULL; an entry NULL when in none). */
typedef struct lagscope__frame_names {
  const char *const *names;
  const char *const *modules;
  size_t n;
} lagscope__frame_names;
/* One stack's kind (never deadlock: that takes a chain), from its run state, its system call
 * and its innermost frames. F */
lagscope__cause_kind lagscope__classify_stack(const lagscope__stack *s,
                                              const lagscope__frame_names *f);

/* Darwin: the lock a thread blocked in a trap waits for, from the trap (its innermost frame's
 * name) and its arguments, as Apple's open sources call them: libpthread's
 * __psynch_mutexwait(mutex, mgen, ugen, owner's thread id, flags) and libplatform's
 * __ulock_wait(UL_UNFAIR_LOCK | flags, lock, value, timeout), value the owner's thread port
 * with its two low bits used as flags (restored: value | 3, as xnu's ulock.h does); a shared
 * unfair lock (UL_UNFAIR_LOCK64_SHARED) and __psynch_rw_*(rwlock, ...) by address only. 1 when it is one: *address, and *owner (0: not known) as a
 * thread id (*owner_is_port 0) or a port name (1). F */
int lagscope__darwin_lock_wait(const char *trap, const uintptr_t *args, uintptr_t *address,
                               uint64_t *owner, int *owner_is_port);

/* Darwin: "rwlock" for libpthread's __psynch_rw_* waits, else "mutex". F */
const char *lagscope__darwin_lock_noun(const char *trap);

/* Darwin: 1 when the trap is libdispatch's sync wait on a workloop-based queue (kevent_id,
 * from _dispatch_event_loop_wait_for_ownership): its first argument is the queue (the
 * workloop's id is the queue's address), the stack's lock_owner the thread draining it. F */
int lagscope__darwin_queue_wait(const char *trap);

/* Darwin: what a blocked file or socket trap works on, from its arguments: "fd 7", with
 * fcntl's command where it is one that waits ("fd 7 (F_FULLFSYNC)"); "" when the arguments
 * name no fd (path calls: the path is not read, docs/apple.md). F */
void lagscope__darwin_io_target(const char *trap, const uintptr_t *args, char *out, size_t size);

/* Darwin: what a wait (not a lock) waits for, where its frames say: "a busy dispatch queue
 * (dispatch_sync)", a group, a semaphore; NULL when they do not. F */
const char *lagscope__darwin_wait_for(const char *const *names, size_t n);

#endif /* LAGSCOPE_CAUSE_H */
