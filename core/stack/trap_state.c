/*
 * Whether a suspended Darwin thread was on the CPU or blocked in a trap, decided from what
 * still holds while it is suspended. Portable: the Darwin capture (core/darwin/capture.c)
 * gathers the evidence, this file decides, and tests/unit/core/test_trap_state.c feeds it
 * xnu's values on Linux.
 *
 * Why not THREAD_BASIC_INFO after thread_suspend: xnu parks a suspended thread that was
 * running in thread_apc_ast (osfmk/kern/thread_act.c) with assert_wait(..., THREAD_ABORTSAFE),
 * so retrieve_thread_basic_info (osfmk/kern/thread.c) then says TH_STATE_WAITING for a thread
 * that was spinning. What suspension does not change: the state read just before it, and the
 * saved user registers. A thread blocked in a trap has its pc right after the trap instruction
 * and the trap's number in its number register; a thread on the CPU is anywhere in its code.
 */
#include "internal.h"

#include <string.h>

/* xnu osfmk/mach/thread_info.h: thread_basic_info's run_state. */
#define TH_STATE_RUNNING 1
#define TH_STATE_STOPPED 2
#define TH_STATE_WAITING 3
#define TH_STATE_UNINTERRUPTIBLE 4

/* arm64: "svc #0x80", the only trap libsyscall's stubs make (xnu libsyscall/custom/SYS.h,
 * SWI_SYSCALL 0x80), as a little-endian instruction word. */
#define ARM64_SVC_0X80 0xD4001001u
/* x86_64: "syscall" is 0f 05. */
#define X86_SYSCALL_0 0x0fu
#define X86_SYSCALL_1 0x05u
/* xnu osfmk/mach/i386/syscall_sw.h: the call's class in bits 24 and up (1 Mach, 2 Unix,
 * 3 machine-dependent), its number below. */
#define X86_CLASS_SHIFT 24
#define X86_CLASS_MACH 1u
#define X86_CLASS_MDEP 3u
/* No Darwin call numbers reach this: arm64's x16 holds a Unix number (positive) or a Mach trap
 * (negative, libsyscall's "mov x16, #-N"); x86_64's low 24 bits the number in its class. */
#define TRAP_NUMBER_LIMIT 0x1000

static int arm64_at_trap(const lagscope__trap_evidence *e) {
  uint32_t word = (uint32_t)e->code_before_pc[0] | (uint32_t)e->code_before_pc[1] << 8 |
                  (uint32_t)e->code_before_pc[2] << 16 | (uint32_t)e->code_before_pc[3] << 24;
  int64_t number = (int64_t)e->trap_number;
  return word == ARM64_SVC_0X80 && number > -TRAP_NUMBER_LIMIT && number < TRAP_NUMBER_LIMIT;
}

/* The last two of the four bytes before the pc; rax still the number (the kernel writes the
 * result into it only on the way back). */
static int x86_64_at_trap(const lagscope__trap_evidence *e) {
  uint64_t class = e->trap_number >> X86_CLASS_SHIFT;
  uint64_t number = e->trap_number & ((1u << X86_CLASS_SHIFT) - 1);
  return e->code_before_pc[2] == X86_SYSCALL_0 && e->code_before_pc[3] == X86_SYSCALL_1 &&
         class >= X86_CLASS_MACH && class <= X86_CLASS_MDEP && number < TRAP_NUMBER_LIMIT;
}

int lagscope__trap_evidence_at_trap(const lagscope__trap_evidence *e) {
  if (!e->code_read) return 0;
  return e->isa == LAGSCOPE__ISA_ARM64 ? arm64_at_trap(e) : x86_64_at_trap(e);
}

/* Without the code: the state before suspending alone. */
static lagscope__run_state from_state_before(int th_state) {
  switch (th_state) {
    case TH_STATE_RUNNING: return LAGSCOPE__RUN_CPU;
    case TH_STATE_WAITING:
    case TH_STATE_UNINTERRUPTIBLE: return LAGSCOPE__RUN_SYSCALL;
    case TH_STATE_STOPPED: return LAGSCOPE__RUN_BLOCKED;
    default: return LAGSCOPE__RUN_UNKNOWN;
  }
}

lagscope__run_state lagscope__trap_run_state(const lagscope__trap_evidence *e) {
  if (!e->code_read) return from_state_before(e->th_state_before);
  if (lagscope__trap_evidence_at_trap(e)) return LAGSCOPE__RUN_SYSCALL;
  switch (e->th_state_before) {
    /* Stopped by someone else (a debugger), or an uninterruptible wait outside any trap (a
     * page fault's read): off the CPU, in no call. */
    case TH_STATE_STOPPED:
    case TH_STATE_UNINTERRUPTIBLE: return LAGSCOPE__RUN_BLOCKED;
    /* Running, or a wait that ended between the two reads: a wait returns right after its
     * trap, so a pc elsewhere has run on since. */
    default: return LAGSCOPE__RUN_CPU;
  }
}

/* xnu bsd/sys/event.h, struct kevent_qos_s: ident 0, filter 8 (int16), flags 10, qos 12,
 * udata 16, fflags 24, xflags 28, data 32, ext[4] 40; 72 bytes. bsd/sys/event_private.h:
 * EVFILT_WORKLOOP -17, NOTE_WL_SYNC_WAIT 0x4, ext[EV_EXTIDX_WL_VALUE = 3] the debounce value.
 * libdispatch event/event_kevent.c, _dispatch_kq_fill_workloop_sync_event: udata the wlh (the
 * queue, also kevent_id's first argument), ext[3] the queue's dq_state, whose low 32 bits are
 * its drain lock (queue_internal.h, DISPATCH_QUEUE_DRAIN_OWNER_MASK); the owner is that value
 * with its two flag bits set back (shims/lock.h, _dispatch_lock_owner), as for unfair locks. */
#define KEVENT_QOS_SIZE 72u
#define KEVENT_FILTER_AT 8u
#define KEVENT_UDATA_AT 16u
#define KEVENT_FFLAGS_AT 24u
#define KEVENT_WL_VALUE_AT 64u
#define EVFILT_WORKLOOP (-17)
#define NOTE_WL_SYNC_WAIT 0x4u
#define DLOCK_OWNER_MASK 0xfffffffcu
#define DLOCK_OWNER_LOW_BITS 0x3u

int32_t lagscope__workloop_wait_owner(const uint8_t *copy, uintptr_t base, size_t len,
                                      const uintptr_t *args) {
  uintptr_t at = args[1];
  if (args[0] == 0 || at < base || len < KEVENT_QOS_SIZE || at - base > len - KEVENT_QOS_SIZE)
    return 0;
  const uint8_t *ke = copy + (at - base);
  int16_t filter;
  uint32_t fflags;
  uint64_t udata, value;
  memcpy(&filter, ke + KEVENT_FILTER_AT, sizeof(filter));
  memcpy(&udata, ke + KEVENT_UDATA_AT, sizeof(udata));
  memcpy(&fflags, ke + KEVENT_FFLAGS_AT, sizeof(fflags));
  memcpy(&value, ke + KEVENT_WL_VALUE_AT, sizeof(value));
  if (filter != EVFILT_WORKLOOP || (fflags & NOTE_WL_SYNC_WAIT) == 0 || udata != args[0]) return 0;
  uint32_t lock = (uint32_t)value;
  return (lock & DLOCK_OWNER_MASK) != 0 ? (int32_t)(lock | DLOCK_OWNER_LOW_BITS) : 0;
}
