/* A suspended Darwin thread's run state (core/stack/trap_state.c), fed what xnu gives:
 * - thread_basic_info's run_state values (osfmk/mach/thread_info.h: TH_STATE_RUNNING 1,
 *   STOPPED 2, WAITING 3, UNINTERRUPTIBLE 4); after thread_suspend a running thread reads
 *   WAITING (osfmk/kern/thread_act.c, thread_apc_ast: assert_wait(..., THREAD_ABORTSAFE);
 *   osfmk/kern/thread.c, retrieve_thread_basic_info), which is why the state before counts;
 * - the trap instructions libsyscall's stubs make: arm64 "svc #0x80" (libsyscall/custom/SYS.h,
 *   SWI_SYSCALL) = d4001001, x86_64 "syscall" = 0f 05;
 * - the number registers: arm64 x16, a Unix call positive (read = 3, bsd/kern/syscalls.master),
 *   a Mach trap negative (mach_msg2_trap = -47, osfmk/kern/syscall_sw.c); x86_64 rax with the
 *   class in bits 24 and up (osfmk/mach/i386/syscall_sw.h: SYSCALL_CLASS_UNIX 2, MACH 1). */
#include "check.h"
#include "internal.h"

#include <string.h>

enum { RUNNING = 1, STOPPED = 2, WAITING = 3, UNINTERRUPTIBLE = 4 };
static const uint8_t svc_0x80[4] = {0x01, 0x10, 0x00, 0xd4}; /* little-endian d4001001 */
static const uint8_t arm64_add[4] = {0x00, 0x04, 0x00, 0x91}; /* add x0, x0, #1 */
static const uint8_t x86_syscall[4] = {0x89, 0xca, 0x0f, 0x05}; /* (mov r10, rcx) syscall */
static const uint8_t x86_loop[4] = {0x48, 0xff, 0xc0, 0xeb};    /* inc rax; jmp */

static lagscope__run_state state(int isa, int before, const uint8_t *code, uint64_t number) {
  lagscope__trap_evidence e = {.isa = isa, .th_state_before = before, .code_read = code != NULL,
                               .trap_number = number};
  if (code != NULL) memcpy(e.code_before_pc, code, 4);
  return lagscope__trap_run_state(&e);
}

int main(void) {
  const int arm = LAGSCOPE__ISA_ARM64, x86 = LAGSCOPE__ISA_X86_64;
  /* Defect 1: a spinning main thread. Read after suspension xnu says WAITING, but before it
   * RUNNING, and its pc is in its own loop: on the CPU, never "blocked in a syscall". */
  CHECK_EQ_INT(state(arm, RUNNING, arm64_add, 0x1234), LAGSCOPE__RUN_CPU);
  CHECK_EQ_INT(state(x86, RUNNING, x86_loop, 0), LAGSCOPE__RUN_CPU);
  /* A running thread whose x16 still holds a number (it made a call earlier): not at a trap. */
  CHECK_EQ_INT(state(arm, RUNNING, arm64_add, 3), LAGSCOPE__RUN_CPU);
  /* Blocked in read (3) or in mach_msg2_trap (-47): the pc right after svc #0x80. */
  CHECK_EQ_INT(state(arm, WAITING, svc_0x80, 3), LAGSCOPE__RUN_SYSCALL);
  CHECK_EQ_INT(state(arm, WAITING, svc_0x80, (uint64_t)(int64_t)-47), LAGSCOPE__RUN_SYSCALL);
  CHECK_EQ_INT(state(x86, WAITING, x86_syscall, 0x2000003), LAGSCOPE__RUN_SYSCALL);
  CHECK_EQ_INT(state(x86, UNINTERRUPTIBLE, x86_syscall, 0x100002f), LAGSCOPE__RUN_SYSCALL);
  /* It entered the trap between the two reads: the registers win. */
  CHECK_EQ_INT(state(arm, RUNNING, svc_0x80, 3), LAGSCOPE__RUN_SYSCALL);
  /* After syscall returns, rax is the result, not a classed number: running on. */
  CHECK_EQ_INT(state(x86, RUNNING, x86_syscall, 5), LAGSCOPE__RUN_CPU);
  /* svc with a number register no call uses (a wild value): not a trap. */
  CHECK_EQ_INT(state(arm, RUNNING, svc_0x80, 0x7fff00001234), LAGSCOPE__RUN_CPU);
  /* A wait that ended between the reads (pc elsewhere): running. */
  CHECK_EQ_INT(state(arm, WAITING, arm64_add, 0), LAGSCOPE__RUN_CPU);
  /* Stopped by someone else, or uninterruptible outside a trap (a page fault): blocked. */
  CHECK_EQ_INT(state(arm, STOPPED, arm64_add, 0), LAGSCOPE__RUN_BLOCKED);
  CHECK_EQ_INT(state(x86, UNINTERRUPTIBLE, x86_loop, 0), LAGSCOPE__RUN_BLOCKED);
  /* The code could not be read: the state before suspending alone. */
  CHECK_EQ_INT(state(arm, RUNNING, NULL, 0), LAGSCOPE__RUN_CPU);
  CHECK_EQ_INT(state(arm, WAITING, NULL, 3), LAGSCOPE__RUN_SYSCALL);
  CHECK_EQ_INT(state(arm, 0, NULL, 0), LAGSCOPE__RUN_UNKNOWN);
  /* And what the classifier then says of a spinning thread whose innermost frame is read(). */
  lagscope__stack s;
  memset(&s, 0, sizeof(s));
  s.run_state = (uint8_t)state(arm, RUNNING, arm64_add, 3);
  s.syscall = -1;
  const char *names[] = {"read_config_loop", "main"};
  lagscope__frame_names f = {names, NULL, 2};
  CHECK_EQ_INT(lagscope__classify_stack(&s, &f), LAGSCOPE__CAUSE_CPU);
  /* Issue 46, defect 1: the owner of a workloop-based queue a dispatch_sync waits on, from the
   * kevent_qos_s the waiter passed to kevent_id, in its stack copy, filled as libdispatch's
   * _dispatch_kq_fill_workloop_sync_event fills it (event_kevent.c): ident the waiter, filter
   * EVFILT_WORKLOOP (-17), fflags NOTE_WL_SYNC_WAIT (4), udata the queue (kevent_id's first
   * argument), ext[3] the queue's dq_state, its drain owner 0x1a03 with the waiters bit (0x1a01). */
  uint8_t copy[256] = {0};
  const uintptr_t base = 0x16f5a2b00, queue = 0x600002d8c000;
  uint8_t *ke = copy + 0x80;
  const uint64_t ident = 0x103, udata = queue, dq_state = 0x0020000000001a01ull;
  const int16_t filter = -17;
  const uint32_t fflags = 0x4 | 0x80; /* NOTE_WL_SYNC_WAIT | NOTE_WL_DISCOVER_OWNER */
  memcpy(ke, &ident, 8), memcpy(ke + 8, &filter, 2), memcpy(ke + 16, &udata, 8);
  memcpy(ke + 24, &fflags, 4), memcpy(ke + 64, &dq_state, 8);
  uintptr_t args[6] = {queue, base + 0x80, 1, base + 0x80, 1, 0};
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0x1a03);
  /* Not such a wait: another queue, another filter, a wake, a kevent outside the copy or cut
   * by its end, a queue without a drain owner. */
  args[0] = queue + 0x80;
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  args[0] = queue;
  args[1] = base + sizeof(copy) - 40;
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  args[1] = base - 8;
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  args[1] = (uintptr_t)-8;
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  args[1] = base + 0x80;
  const uint32_t wake = 0x8; /* NOTE_WL_SYNC_WAKE */
  memcpy(ke + 24, &wake, 4);
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  memcpy(ke + 24, &fflags, 4);
  const int16_t evfilt_read = -1;
  memcpy(ke + 8, &evfilt_read, 2);
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  memcpy(ke + 8, &filter, 2);
  const uint64_t no_owner = 0x0020000000000001ull; /* waiters bit alone */
  memcpy(ke + 64, &no_owner, 8);
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, sizeof(copy), args), 0);
  CHECK_EQ_INT(lagscope__workloop_wait_owner(copy, base, 0, args), 0);
  printf("a suspended thread's run state from xnu's evidence: ok\n");
  return 0;
}
