/* What the Linux capture's files share, and no other file: the snapshot a capture fills and
 * the steps the dispatch calls. The rest of the core sees port.h's lagscope__capture_ calls.
 *
 *   capture.c          the dispatch: which way a thread is taken, then the walk (the design)
 *   capture_signal.c   a thread on the CPU: the signal handler, the snapshot it writes, the
 *                      request word it claims, the timer on the thread's CPU clock
 *   capture_blocked.c  a thread blocked in the kernel: its stack copied while it waits
 *   capture_walk.c     a snapshot walked into return addresses: DWARF CFI, prologues, a scan
 *
 * One capture at a time, on the monitor thread; only the handler runs elsewhere. Tags as in
 * internal.h: A allocates, F neither allocates nor locks. */
#ifndef LAGSCOPE_LINUX_CAPTURE_H
#define LAGSCOPE_LINUX_CAPTURE_H

#include "../internal.h"
#include "linux.h"

#include <stddef.h>
#include <stdint.h>

/* The stack bytes copied above the stack pointer: enough for ~64 ordinary frames; a deeper or
 * fatter stack ends with LAGSCOPE__WALK_TRUNCATED. */
#define LAGSCOPE__CAPTURE_STACK_COPY_BYTES (32u * 1024u)
/* Also copied: the bytes just below the stack pointer. On x86_64 a function may keep data
 * there (the ABI's 128-byte red zone), and at a `ret` after `leave` gcc's CFI still finds the
 * caller's frame pointer 8 bytes below the stack pointer. The kernel puts the signal frame
 * below that zone, so it is intact when the handler runs. */
#define LAGSCOPE__CAPTURE_BELOW_SP_BYTES 128u

/* The one signal our handler leaves unblocked (SIGRTMAX on Linux): while it runs, or while the
 * kernel delivers its signal or returns from it, the thread's mask blocks every signal but
 * this one, which an app that blocks signals does not choose; an app's handler for it would
 * run below our frame, not in the bytes we copy. Unless the app blocks it too: then the mask
 * blocks all, and only the handler counts (lagscope__capture_handlers_seen) tell. */
#define LAGSCOPE__CAPTURE_MASK_HOLE 64

/* ---- the snapshot: written by the handler or the blocked path, read by the walk ---- */

typedef struct lagscope__capture_snapshot {
  uintptr_t registers[LAGSCOPE__CFI_REGISTERS]; /* in DWARF's numbering (linux.h) */
  uintptr_t stack_base;                /* where the copy starts: at or below the stack pointer */
  size_t stack_len;                    /* bytes copied from stack_base */
  int from_handler;                    /* registers are the handler's own: its frame comes first */
  uint64_t handler_ns;                 /* how long the handler kept the thread (0: no handler) */
  uintptr_t read_high;                 /* the walk's highest read of the copy: the frames' end */
  uint8_t stack[LAGSCOPE__CAPTURE_BELOW_SP_BYTES + LAGSCOPE__CAPTURE_STACK_COPY_BYTES];
} lagscope__capture_snapshot;

/* The one snapshot (capture_signal.c). */
extern lagscope__capture_snapshot lagscope__capture_the_snapshot;

/* ---- capture_signal.c ---- */

/* Copies the stack from s's stack pointer into s: in place when it lies in the main thread's
 * stack mapping (read at init, outside the handler), up to the end of its frames (where argc
 * is); anywhere else (a fiber, a sigaltstack, another thread) with a read the kernel checks,
 * which stops short at an unmapped page, and at the asked thread's frames' end once learnt. From below the stack pointer when that memory is there, else from the
 * stack pointer. Async-signal-safe. F */
void lagscope__capture_copy_stack(lagscope__capture_snapshot *s);
/* Is sig's handler ours? F */
int lagscope__capture_handler_is_ours(int sig);
/* One more than how many of our handlers have run, whatever signal each came for; 0 while one
 * runs (its mask blocks every signal: not the app's). Two equal non-zero readings around a read
 * of a thread's mask: no handler ran meanwhile. F */
uint64_t lagscope__capture_handlers_seen(void);
/* Under a sanitizer that defers signals to its own interceptors (TSan), the code of its runtime,
 * whose frames lie between our handler's and the app's: 1 with [*start, *end) when known (the
 * runtime is a library of its own and a handler has run). F */
int lagscope__capture_delivery_code(uintptr_t *start, uintptr_t *end);
/* Before a capture of tid: its stack mapping's end, when learnt, bounds the checked copy. F */
void lagscope__capture_aim(int32_t tid);
/* After a capture of tid (the snapshot in hand, on the monitor): the mapping that holds its
 * stack pointer learnt, when not the main stack's and not known yet; at most one read of
 * /proc/self/maps a second. F */
void lagscope__capture_learn_stack(int32_t tid);
/* After the walk of a capture of tid by its signal: where its frames end (the walk's highest
 * read), learnt when the walk was complete; forgotten when a copy cut there left a walk
 * incomplete. The next checked copies stop there. F */
void lagscope__capture_learn_frames_end(int32_t tid, int walk);

enum lagscope__capture_timer_result {
  LAGSCOPE__CAPTURE_TIMER_TAKEN,
  LAGSCOPE__CAPTURE_TIMER_BLOCKED,
  LAGSCOPE__CAPTURE_TIMER_FAILED
};
/* Asks running tid for a snapshot through its CPU clock, until the deadline (waiting on the
 * request word meanwhile). TIMER_BLOCKED: it blocked before it answered (take it without the
 * signal); TIMER_FAILED: out->walk says why. F */
enum lagscope__capture_timer_result lagscope__capture_take_by_timer(int32_t tid,
                                                                    uint64_t deadline_ns,
                                                                    lagscope__stack *out);
/* The forced way (lagscope__capture_force_signal): the signal sent straight away; 1 when the
 * snapshot arrived within timeout_ns, else 0 with out->walk saying why. F */
int lagscope__capture_take_by_signal(int32_t tid, uint64_t timeout_ns, lagscope__stack *out);

/* ---- capture_blocked.c ---- */

enum lagscope__capture_take_result {
  LAGSCOPE__CAPTURE_TAKEN,
  LAGSCOPE__CAPTURE_TAKE_RUNNING,
  LAGSCOPE__CAPTURE_TAKE_GONE
};
/* A blocked thread's stack copied into the snapshot from where the kernel says it will resume,
 * checked not to have run meanwhile; out gets the method, run state, syscall and lock owner.
 * TAKE_RUNNING: it is running (or kept moving), take it by its signal. F */
enum lagscope__capture_take_result lagscope__capture_take_blocked(int32_t tid,
                                                                  lagscope__stack *out);

/* ---- capture_walk.c ---- */

/* Walks the snapshot into out; on the monitor thread. registers_known: all of them were copied
 * (the signal's way); else only pc and sp are (a blocked thread), and each frame is checked.
 * Reads the loaded objects' list again when it changed (object_bytes.c). A */
void lagscope__capture_unwind(lagscope__capture_snapshot *s, lagscope__stack *out,
                              int registers_known);

#endif /* LAGSCOPE_LINUX_CAPTURE_H */
