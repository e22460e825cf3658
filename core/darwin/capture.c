/*
 * Capturing a thread's stack on Darwin, in two halves.
 *
 * 1. The target stopped, for microseconds: thread_suspend, thread_get_state for its registers,
 *    one vm_read_overwrite that copies the top of its stack into a preallocated snapshot,
 *    thread_resume. All four are Mach calls: a message to the kernel on this thread's own
 *    reply port, no lock in user space. Nothing else runs in that window: no malloc or free,
 *    no vm_deallocate, no dyld, objc or pthread call, no logging. The target may hold any of
 *    their locks (KSCrash and Sentry both shipped deadlocks from breaking this rule).
 *    vm_read_overwrite is also the checked read: the kernel refuses an unmapped page instead
 *    of faulting, so a wild stack pointer cannot crash the app.
 * 2. The target running again: a frame-pointer walk over the copy. Apple's ABIs on arm64 and
 *    x86_64 keep frame pointers, so the chain of frame records ([fp] the caller's fp, [fp + 8]
 *    the return address) gives every frame without unwind tables. Return addresses lose their
 *    pointer-authentication bits (arm64e system libraries sign them) by xpaclri, which is a
 *    no-op on hardware without it.
 *
 * What a frame-pointer walk misses: the caller of a function that made no frame record and is
 * stopped at its first instructions or is a leaf (a syscall stub: the common case for a thread
 * waiting). On arm64 that caller is in the link register, which we add as the second frame
 * unless the first record already holds it; a function that made its record and has since
 * called something still has a stale lr, which then shows as one extra frame of the same
 * function. On x86_64 the return address of such a leaf sits at [rsp] among other data, so it
 * is not guessed: the leaf's caller is missing from x86_64 stacks.
 *
 * The stack's bounds come from pthread (pthread_from_mach_thread_np, which takes libpthread's
 * list lock), asked before the thread is suspended, never during.
 */
#include "../internal.h"

#include <mach/mach.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

/* Copied from the stack pointer up: enough for ~100 ordinary frames; a deeper stack ends with
 * LAGSCOPE__WALK_TRUNCATED. 64 KiB copies in a few microseconds; config.stack_copy_kib asks
 * for more (lagscope__capture_set_copy_bytes). */
#define STACK_COPY_BYTES (64u * 1024u)
#define MIN_COPY_BYTES 4096u

typedef struct snapshot {
  uintptr_t pc, lr, fp, sp;
  uintptr_t args[6];        /* a trap's arguments, in their registers (a lock's owner) */
  int has_lr;               /* arm64: the link register is a frame candidate */
  uintptr_t stack_base;     /* = sp */
  size_t stack_len;         /* bytes copied from stack_base */
  int stack_cut;            /* the stack goes on past the copy */
  uintptr_t trap_number;    /* the trap's number register: arm64 x16, x86_64 rax */
  int th_state_before;      /* THREAD_BASIC_INFO's run_state, read before suspending */
  uint8_t *stack;           /* copy_bytes bytes */
  size_t copy_bytes;
} snapshot;

static uint8_t default_stack[STACK_COPY_BYTES];
/* One capture at a time per process (the callers serialise). */
static snapshot the_snapshot = {.stack = default_stack, .copy_bytes = STACK_COPY_BYTES};

/* The frame-pointer walk keeps nothing between captures. */
void lagscope__capture_release_unwinder(void) {}

/* Before the monitor starts (no capture runs). A larger buffer is kept for the process's life,
 * so that a later start never frees one a capture could hold. */
void lagscope__capture_set_copy_bytes(size_t bytes) {
  static uint8_t *large;
  static size_t large_bytes;
  if (bytes <= STACK_COPY_BYTES) {
    the_snapshot.stack = default_stack, the_snapshot.copy_bytes = bytes;
    return;
  }
  if (bytes > large_bytes) {
    uint8_t *grown = lagscope__alloc(bytes);
    if (grown == NULL) return; /* the copy stays as it was */
    lagscope__dealloc(large);
    large = grown, large_bytes = bytes;
  }
  the_snapshot.stack = large, the_snapshot.copy_bytes = bytes;
}
static _Atomic int32_t main_tid;

/* ---- registers ---- */

#if defined(__arm64__) || defined(__aarch64__)
typedef arm_thread_state64_t machine_state;
#define MACHINE_STATE_FLAVOR ARM_THREAD_STATE64
#define MACHINE_STATE_COUNT ARM_THREAD_STATE64_COUNT
static void copy_registers(const machine_state *st, snapshot *s) {
  s->pc = (uintptr_t)arm_thread_state64_get_pc(*st);
  s->lr = (uintptr_t)arm_thread_state64_get_lr(*st);
  s->fp = (uintptr_t)arm_thread_state64_get_fp(*st);
  s->sp = (uintptr_t)arm_thread_state64_get_sp(*st);
  s->has_lr = 1;
  for (int i = 0; i < 6; i++) s->args[i] = (uintptr_t)st->__x[i]; /* x0-x5 at the svc */
  s->trap_number = (uintptr_t)st->__x[16];
}
#define TRAP_ISA LAGSCOPE__ISA_ARM64
/* xpaclri (hint #7) strips the authentication code from x30; a no-op without PAC. */
static uintptr_t strip_pac(uintptr_t value) {
  register uintptr_t x30 __asm__("x30") = value;
  __asm__("hint #7" : "+r"(x30));
  return x30;
}
#elif defined(__x86_64__)
typedef x86_thread_state64_t machine_state;
#define MACHINE_STATE_FLAVOR x86_THREAD_STATE64
#define MACHINE_STATE_COUNT x86_THREAD_STATE64_COUNT
static void copy_registers(const machine_state *st, snapshot *s) {
  s->pc = (uintptr_t)st->__rip;
  s->lr = 0;
  s->fp = (uintptr_t)st->__rbp;
  s->sp = (uintptr_t)st->__rsp;
  s->has_lr = 0;
  /* At the syscall instruction: rdi, rsi, rdx, r10 (the stub moves rcx there), r8, r9. */
  const uintptr_t args[6] = {st->__rdi, st->__rsi, st->__rdx, st->__r10, st->__r8, st->__r9};
  for (int i = 0; i < 6; i++) s->args[i] = args[i];
  s->trap_number = (uintptr_t)st->__rax;
}
#define TRAP_ISA LAGSCOPE__ISA_X86_64
static uintptr_t strip_pac(uintptr_t value) { return value; }
#else
#error "lagscope: capture supports Darwin on arm64 and x86_64"
#endif

/* ---- finding the thread and its stack, before it is stopped ---- */

typedef struct thread_list {
  thread_act_array_t ports;
  mach_msg_type_number_t count;
} thread_list;

/* Our own reference to every thread's port, so that tid's port name stays the same thread
 * until we let go, even if the thread ends meanwhile. */
static int list_threads(thread_list *list) {
  return task_threads(mach_task_self(), &list->ports, &list->count) == KERN_SUCCESS ? 0 : -1;
}

/* After the target runs again: every port, then the array (vm_deallocate). */
static void release_threads(thread_list *list) {
  for (mach_msg_type_number_t i = 0; i < list->count; i++)
    mach_port_deallocate(mach_task_self(), list->ports[i]);
  vm_deallocate(mach_task_self(), (vm_address_t)list->ports,
                list->count * sizeof(thread_act_t));
}

static thread_act_t find_thread(const thread_list *list, int32_t tid) {
  for (mach_msg_type_number_t i = 0; i < list->count; i++)
    if ((int32_t)list->ports[i] == tid) return list->ports[i];
  return MACH_PORT_NULL;
}

typedef struct stack_bounds {
  uintptr_t low, high; /* 0, 0: unknown (not a pthread) */
} stack_bounds;

static stack_bounds thread_stack_bounds(thread_act_t thread) {
  stack_bounds b = {0, 0};
  pthread_t p = pthread_from_mach_thread_np(thread);
  if (p == NULL) return b;
  uintptr_t top = (uintptr_t)pthread_get_stackaddr_np(p); /* Darwin: the highest address */
  size_t size = pthread_get_stacksize_np(p);
  if (top > size) b = (stack_bounds){top - size, top};
  return b;
}

/* ---- the stopped window: Mach calls only ---- */

/* Copies [sp, end) or less, with the kernel's checked read. Without known bounds, halves the
 * length until the read succeeds (the pages above may be unmapped). */
static void copy_stack(snapshot *s, stack_bounds bounds) {
  size_t want = s->copy_bytes;
  int bounded = bounds.high != 0 && s->sp >= bounds.low && s->sp < bounds.high;
  if (bounded && bounds.high - s->sp < want) want = bounds.high - s->sp;
  s->stack_base = s->sp;
  s->stack_len = 0;
  for (size_t len = want; len >= MIN_COPY_BYTES || len == want; len /= 2) {
    vm_size_t got = 0;
    if (vm_read_overwrite(mach_task_self(), (vm_address_t)s->sp, len, (vm_address_t)s->stack,
                          &got) == KERN_SUCCESS) {
      s->stack_len = (size_t)got;
      break;
    }
    if (bounded || len < 2 * MIN_COPY_BYTES) break;
  }
  s->stack_cut = bounded ? s->stack_len < bounds.high - s->sp : s->stack_len == want;
}

/* THREAD_BASIC_INFO's run_state, asked before suspending: once suspended, xnu reports every
 * thread as waiting (core/stack/trap_state.c says why). 0 when it cannot be read. */
static int th_state_of(thread_act_t thread) {
  thread_basic_info_data_t info;
  mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
  if (thread_info(thread, THREAD_BASIC_INFO, (thread_info_t)&info, &count) != KERN_SUCCESS)
    return 0;
  return info.run_state;
}

/* 0 when the snapshot holds the stopped thread's registers and stack. */
static int take_snapshot(thread_act_t thread, stack_bounds bounds, snapshot *s) {
  s->th_state_before = th_state_of(thread);
  if (thread_suspend(thread) != KERN_SUCCESS) return -1;
  machine_state state;
  mach_msg_type_number_t count = MACHINE_STATE_COUNT;
  int rc = -1;
  if (thread_get_state(thread, MACHINE_STATE_FLAVOR, (thread_state_t)&state, &count) ==
      KERN_SUCCESS) {
    copy_registers(&state, s);
    copy_stack(s, bounds);
    rc = 0;
  }
  thread_resume(thread);
  return rc;
}

/* ---- the run state, after the thread runs again: its saved pc and number register ---- */

/* The four bytes before the saved pc, by the kernel's checked read (the pc may be wild). */
static lagscope__run_state snapshot_run_state(const snapshot *s) {
  lagscope__trap_evidence e = {.isa = TRAP_ISA, .th_state_before = s->th_state_before,
                               .trap_number = s->trap_number};
  vm_size_t got = 0;
  e.code_read = s->pc >= sizeof(e.code_before_pc) &&
                vm_read_overwrite(mach_task_self(), (vm_address_t)(s->pc - sizeof(e.code_before_pc)),
                                  sizeof(e.code_before_pc), (vm_address_t)e.code_before_pc,
                                  &got) == KERN_SUCCESS &&
                got == sizeof(e.code_before_pc);
  return lagscope__trap_run_state(&e);
}

/* ---- the walk, after the thread runs again: core/stack/stack_walk.c (Swift async records too) ---- */

/* One word by the kernel's checked read: an async context may have been freed meanwhile. */
static int read_word_checked(uintptr_t address, uintptr_t *value) {
  vm_size_t got = 0;
  return vm_read_overwrite(mach_task_self(), (vm_address_t)address, sizeof(*value),
                           (vm_address_t)value, &got) == KERN_SUCCESS && got == sizeof(*value)
             ? 0 : -1;
}

/* The physical frames from the copy; then, where a frame is a Swift async one, the task's
 * logical callers from its async contexts on the heap. */
static void walk_snapshot(const snapshot *s, lagscope__stack *out) {
  lagscope__stack_copy copy = {s->stack, s->stack_base, s->stack_len, s->stack_cut, strip_pac};
  lagscope__walk_regs regs = {s->pc, s->lr, s->fp, s->has_lr};
  lagscope__stack_walk(&copy, &regs, out);
  lagscope__stack_walk_async(out, read_word_checked, strip_pac);
}

/* ---- the contract ---- */

/* Static initialisers run on the main thread (lagscope is linked into the app): note its port
 * name then, as pthread_main_thread_np is not in every SDK we build against. */
__attribute__((constructor)) static void note_main_thread(void) {
  if (pthread_main_np()) atomic_store(&main_tid, (int32_t)pthread_mach_thread_np(pthread_self()));
}

/* Threads are listed in the order they were made: the first is the main thread. A fallback
 * for a library loaded late (dlopen from another thread). */
static int32_t first_thread(void) {
  thread_list list;
  if (list_threads(&list) != 0) return 0;
  int32_t tid = list.count > 0 ? (int32_t)list.ports[0] : 0;
  release_threads(&list);
  return tid;
}

int32_t lagscope__main_thread_id(void) {
  int32_t tid = atomic_load(&main_tid);
  if (tid == 0) {
    tid = first_thread();
    atomic_store(&main_tid, tid);
  }
  return tid;
}

int lagscope__capture_init(uint32_t wanted) {
  (void)wanted;               /* Mach needs no signal */
  lagscope__main_thread_id(); /* nothing to install */
  return LAGSCOPE_OK;
}

int lagscope__capture_signal(void) { return 0; }

/* Stops tid, copies, resumes. 0, or the walk's outcome when it could not. timeout_ns is not
 * needed: thread_suspend is synchronous, a thread cannot refuse it. */
static int capture_snapshot(int32_t tid, lagscope__walk *walk) {
  thread_list list;
  if (list_threads(&list) != 0) {
    *walk = LAGSCOPE__WALK_NO_REPLY;
    return -1;
  }
  thread_act_t thread = find_thread(&list, tid);
  int rc = -1;
  *walk = LAGSCOPE__WALK_EXITED;
  if (thread != MACH_PORT_NULL) {
    stack_bounds bounds = thread_stack_bounds(thread);
    rc = take_snapshot(thread, bounds, &the_snapshot);
  }
  release_threads(&list); /* only now: the target runs again */
  return rc;
}

/* Suspension interrupts no call. The syscall stays -1: the innermost
 * frame names the trap. */
int lagscope__capture_take(int32_t tid, lagscope__stack *out, uint64_t timeout_ns) {
  (void)timeout_ns;
  if (capture_snapshot(tid, &out->walk) != 0) return LAGSCOPE_ENOENT;
  out->method = LAGSCOPE__METHOD_SUSPEND;
  out->run_state = (uint8_t)snapshot_run_state(&the_snapshot);
  if (out->run_state == LAGSCOPE__RUN_SYSCALL) { /* blocked in a trap: its arguments */
    memcpy(out->args, the_snapshot.args, sizeof(out->args));
    /* a dispatch_sync on a workloop: the queue's owner, from the kevent in the copy */
    out->lock_owner = lagscope__workloop_wait_owner(the_snapshot.stack, the_snapshot.stack_base,
                                                    the_snapshot.stack_len, out->args);
  }
  walk_snapshot(&the_snapshot, out);
  return out->depth > 0 ? LAGSCOPE_OK : LAGSCOPE_EPARSE;
}

int lagscope__capture_take_raw(int32_t tid, uint64_t timeout_ns, lagscope__stack *scratch,
                               int *method) {
  (void)timeout_ns, (void)scratch;
  lagscope__walk walk;
  if (capture_snapshot(tid, &walk) != 0) return LAGSCOPE_ENOENT;
  *method = LAGSCOPE__METHOD_SUSPEND;
  return LAGSCOPE_OK;
}

/* Darwin's blocking calls are traps whose stubs the innermost frame names; the report's
 * classifier reads them there (core/cause/cause.c). */
const char *lagscope__syscall_name(int32_t nr) {
  (void)nr;
  return NULL;
}

lagscope__syscall_class lagscope__syscall_classify(int32_t nr, int *fd_arg) {
  (void)nr;
  *fd_arg = -1;
  return LAGSCOPE__SYSCALL_OTHER;
}

int lagscope__syscall_target_arg(int32_t nr) {
  (void)nr;
  return -1;
}

void lagscope__describe_wait_target(const lagscope__stack *stack, char *out, size_t size) {
  (void)stack;
  if (size > 0) out[0] = '\0'; /* the trap's arguments are not read on Darwin yet */
}

/* Darwin's run loop is known by CoreFoundation's frames over a receive-only mach_msg
 * (core/cause/cause.c): nothing to learn. */
void lagscope__loop_wait_reset(void) {}
int lagscope__loop_wait_note(int32_t tid) {
  (void)tid;
  return -1;
}
void lagscope__loop_wait_confirm(int answered_at_once) { (void)answered_at_once; }
int lagscope__loop_wait_known(void) { return 0; }
int lagscope__loop_wait_is_own(const lagscope__stack *stack) {
  (void)stack;
  return 0;
}
