/*
 * Capturing a thread's stack on Linux without changing what the thread does.
 *
 * Which way depends on the thread, decided right before, from /proc/self/task/TID/syscall:
 *
 * - A thread blocked in the kernel (a syscall, or stopped) is not sent anything: the kernel
 *   says where it will resume (stack pointer, pc) and the syscall with its arguments, and its
 *   stack is read from memory while it waits. A signal would end its nanosleep, poll, select or
 *   epoll_wait with EINTR whatever SA_RESTART says (signal(7)): the app would change and the
 *   stall being measured would be cut short. The file is read again after the copy: when it
 *   says the same, the thread did not move and the copy is whole.
 * - A thread on the CPU gets a real-time signal whose handler copies the registers and the top
 *   of the stack into a preallocated snapshot, then returns: a copy, two atomic stores, one
 *   futex wake; nothing that allocates or locks. A stack pointer in the main thread's own stack
 *   mapping (read from /proc/self/maps at start) is copied in place, within that mapping, with
 *   no system call; any other (a fiber's, a sigaltstack's, another thread's) with
 *   process_vm_readv on our own process, a read that the kernel checks: it stops short at an
 *   unmapped page instead of faulting, so a corrupt stack pointer can never crash the app.
 *
 * Then, on the monitor thread, the snapshot is walked with DWARF CFI (.eh_frame, cfi.c), so
 * frames of libc built without frame pointers unwind to the app's callers. Every read comes
 * from the stack copy, or from a loaded object's readable segment, read from the object's file
 * (object_bytes.c) so that the app's pages stay as they were; anything else is refused. A
 * blocked thread's other registers are unknown (the kernel gives sp and pc only), so a frame
 * whose CFA needs one fails to unwind, and the walk goes on by scanning the stack for a word
 * that is a return address (in code, just after a call), as Breakpad's stack scanner does; the
 * frame pointer saved beside it, when it looks like one, lets CFI take over again. Every frame
 * of a blocked walk is checked the same way.
 *
 * The walk was libunwind's remote interface until its cost showed: ~190 KiB of every app's RSS
 * for an interpreter of a few hundred lines, the one part of it we still used (cfi.c says).
 *
 * The files: this one is the dispatch (which way, then the walk); capture_signal.c the handler,
 * its snapshot and the request; capture_blocked.c the blocked thread's copy; capture_walk.c the
 * walk (capture.h).
 */
#define _GNU_SOURCE
#include "capture.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

int32_t lagscope__main_thread_id(void) { return (int32_t)getpid(); }

/* Benchmarks only: every thread gets the signal at once, blocked or not (the old way, as a
 * baseline: it cuts waits short). */
static int force_signal;
void lagscope__capture_force_signal(int on) { force_signal = on; }

/* Every signal a mask can hold: not SIGKILL and SIGSTOP (the kernel refuses them), nor glibc's
 * own 32 and 33, which its sigfillset and pthread_sigmask leave out. */
#define SIGNAL_BIT(n) (1ull << ((n) - 1))
#define ALL_BLOCKABLE (~(SIGNAL_BIT(SIGKILL) | SIGNAL_BIT(SIGSTOP) | SIGNAL_BIT(32) | SIGNAL_BIT(33)))

/* The thread last found blocking the capture signal, and not answering since: while it stays
 * so, a mask that blocks every signal is its own, not our handler's. Capturing thread only:
 * captures are serialised. */
static int32_t blocked_tid;

/* Our handler's mask, with the app's blocking none of the rest: it runs on tid now, or the
 * kernel is delivering or returning from its signal (capture.h). */
static int handler_mask(uint64_t mask) {
  return (mask & ALL_BLOCKABLE) == (ALL_BLOCKABLE & ~SIGNAL_BIT(LAGSCOPE__CAPTURE_MASK_HOLE));
}

/* Whether tid blocks the capture signal, before it is asked. A mask that blocks it but not every
 * signal is the app's choice (signalfd's way): 1; not our handler's, which leaves one hole. One
 * that blocks every signal may be the app's too, or our own handler's (the app blocking the
 * hole too), still returning there from the previous capture: 1 only when tid was found
 * blocking it after a request went unanswered. F */
static int blocks_capture_signal(int32_t tid) {
  uint64_t mask;
  int sig = lagscope__capture_signal();
  if (lagscope__linux_signal_mask(tid, &mask) != 0) return 0; /* not known: ask it */
  if (!(mask >> (sig - 1) & 1) || handler_mask(mask)) return 0;
  return (mask & ALL_BLOCKABLE) != ALL_BLOCKABLE || tid == blocked_tid;
}

/* After a request went unanswered: whether the mask says why. Not while our handler runs (a
 * late signal of this request, on a loaded machine), whose mask, taken for the app's, told a
 * thread that never blocked anything as signal_blocked from then on (test_standin, 6 copies at
 * once): its hole says so, or, when the app blocks that too, a handler of ours counted around
 * the read. The counts alone missed the kernel's delivery and return, before and after the
 * handler's code. F */
static int unanswered_for_its_mask(int32_t tid) {
  uint64_t mask;
  int sig = lagscope__capture_signal();
  uint64_t handlers = lagscope__capture_handlers_seen();
  if (lagscope__linux_signal_mask(tid, &mask) != 0 || !(mask >> (sig - 1) & 1)) return 0;
  if (handler_mask(mask)) return 0; /* ours */
  if ((mask & ALL_BLOCKABLE) == ALL_BLOCKABLE &&
      (handlers == 0 || handlers != lagscope__capture_handlers_seen()))
    return 0; /* perhaps our handler's mask */
  blocked_tid = tid;
  return 1;
}

static int signal_blocked(lagscope__stack *out) {
  out->walk = LAGSCOPE__WALK_SIGNAL_BLOCKED;
  return LAGSCOPE_ESIGNAL;
}

/* The raw stack in the snapshot, by whichever way the thread's state allows, until the
 * deadline: LAGSCOPE_OK; LAGSCOPE_ENOENT when it could not be taken (out->walk says why);
 * LAGSCOPE_ESIGNAL when a running thread could not be signalled because the app took the
 * signal over, or blocks it in that thread (out->walk SIGNAL_BLOCKED). A thread that blocks
 * while its timer waits is looked at again. */
static int take_any(int32_t tid, uint64_t timeout_ns, lagscope__stack *out) {
  uint64_t deadline = lagscope__now_ns() + timeout_ns;
  out->walk = LAGSCOPE__WALK_NO_REPLY;
  for (;;) {
    enum lagscope__capture_take_result how =
        force_signal ? LAGSCOPE__CAPTURE_TAKE_RUNNING : lagscope__capture_take_blocked(tid, out);
    if (how == LAGSCOPE__CAPTURE_TAKEN) return LAGSCOPE_OK;
    if (how == LAGSCOPE__CAPTURE_TAKE_GONE) {
      out->walk = LAGSCOPE__WALK_EXITED;
      return LAGSCOPE_ENOENT;
    }
    if (lagscope__capture_signal() == 0) return LAGSCOPE_ENOENT;
    if (!lagscope__capture_handler_is_ours(lagscope__capture_signal()))
      return LAGSCOPE_ESIGNAL; /* taken over since start */
    /* Blocked in the thread: it would never answer while it runs, and a sample taken once it
     * sleeps would tell the hang as that sleep. Asked nothing, said. */
    if (blocks_capture_signal(tid)) return signal_blocked(out);
    if (force_signal) {
      if (!lagscope__capture_take_by_signal(tid, timeout_ns, out)) return LAGSCOPE_ENOENT;
      break;
    }
    enum lagscope__capture_timer_result got = lagscope__capture_take_by_timer(tid, deadline, out);
    if (got == LAGSCOPE__CAPTURE_TIMER_TAKEN) break;
    if (got == LAGSCOPE__CAPTURE_TIMER_FAILED && out->walk == LAGSCOPE__WALK_NO_REPLY &&
        unanswered_for_its_mask(tid))
      return signal_blocked(out);
    if (got == LAGSCOPE__CAPTURE_TIMER_FAILED || lagscope__now_ns() >= deadline)
      return LAGSCOPE_ENOENT;
  }
  out->method = LAGSCOPE__METHOD_SIGNAL;
  out->run_state = LAGSCOPE__RUN_CPU;
  if (tid == blocked_tid) blocked_tid = 0; /* it answers again */
  return LAGSCOPE_OK;
}

/* After capture_handler's frame: under TSan, its delivery's (CallUserSignalHandler and the
 * calls that lead there from the interceptor that found the signal pending), told as the app's
 * innermost frames. Dropped up to the interceptor, kept: the call the app made. F */
static void drop_delivery_frames(lagscope__stack *out) {
  uintptr_t start, end;
  if (!lagscope__capture_delivery_code(&start, &end)) return;
  uint32_t n = 0;
  while (n + 1 < out->depth && out->frames[n] - start < end - start &&
         out->frames[n + 1] - start < end - start)
    n++;
  memmove(out->frames, out->frames + n, (out->depth -= n) * sizeof(out->frames[0]));
}

int lagscope__capture_take(int32_t tid, lagscope__stack *out, uint64_t timeout_ns) {
  lagscope__capture_aim(tid);
  int rc = take_any(tid, timeout_ns, out);
  if (rc != LAGSCOPE_OK) return rc;
  lagscope__capture_learn_stack(tid);
  int by_signal = out->method == LAGSCOPE__METHOD_SIGNAL;
  lagscope__capture_unwind(&lagscope__capture_the_snapshot, out, by_signal);
  if (by_signal) lagscope__capture_learn_frames_end(tid, out->walk);
  /* drop capture_handler, and the sanitizer's delivery above it */
  if (by_signal && lagscope__capture_the_snapshot.from_handler && out->depth > 0) {
    memmove(out->frames, out->frames + 1, --out->depth * sizeof(out->frames[0]));
    drop_delivery_frames(out);
  }
  return out->depth > 0 ? LAGSCOPE_OK : LAGSCOPE_EPARSE;
}

int lagscope__capture_take_raw(int32_t tid, uint64_t timeout_ns, lagscope__stack *scratch,
                               int *method) {
  lagscope__capture_aim(tid);
  int rc = take_any(tid, timeout_ns, scratch);
  if (rc != LAGSCOPE_OK) return rc;
  lagscope__capture_learn_stack(tid);
  *method = scratch->method;
  return LAGSCOPE_OK;
}
