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
 *   futex wake; nothing that allocates or locks. The stack is copied with process_vm_readv on
 *   our own process, a read that the kernel checks: it stops short at an unmapped page instead
 *   of faulting, so a corrupt stack pointer can never crash the app.
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
 */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The stack bytes copied above the stack pointer: enough for ~64 ordinary frames; a deeper or
 * fatter stack ends with LAGSCOPE__WALK_TRUNCATED. */
#define STACK_COPY_BYTES (32u * 1024u)
/* Also copied: the bytes just below the stack pointer. On x86_64 a function may keep data
 * there (the ABI's 128-byte red zone), and at a `ret` after `leave` gcc's CFI still finds the
 * caller's frame pointer 8 bytes below the stack pointer. The kernel puts the signal frame
 * below that zone, so it is intact when the handler runs. */
#define BELOW_STACK_POINTER_BYTES 128u
#define CAPTURE_SIGNAL_OFFSET 3 /* from SIGRTMIN + 3: glibc keeps the first two for itself */
#define LATE_HANDLER_WAIT_NS (100u * 1000u * 1000u)

/* ---- the snapshot: written by the handler, read by the monitor ---- */

typedef struct snapshot {
  uintptr_t registers[LAGSCOPE__CFI_REGISTERS]; /* in DWARF's numbering (linux.h) */
  uintptr_t stack_base;                /* where the copy starts: at or below the stack pointer */
  size_t stack_len;                    /* bytes copied from stack_base */
  int from_handler;                    /* registers are the handler's own: its frame comes first */
  uint8_t stack[BELOW_STACK_POINTER_BYTES + STACK_COPY_BYTES];
} snapshot;

/* One request at a time (the monitor's). Its state is one futex word holding the request's
 * generation and phase, so that the handler claims exactly the request its signal was sent
 * for: a signal that arrives after its request was abandoned finds another generation. */
enum request_phase { IDLE = 0, REQUESTED, CLAIMED, DONE, ABANDONED };
#define REQUEST_WORD(generation, phase) (((uint32_t)(generation) << 3) | (uint32_t)(phase))
#define GENERATION_MAX (1u << 28)

static snapshot the_snapshot;
static _Atomic uint32_t request_word;
static uint32_t last_generation;
/* The timer whose signal the handler takes (-1: none armed). The kernel's own id: the
 * syscalls are made directly, so that glibc's timer_t bookkeeping is not involved. */
static _Atomic int armed_timer = -1;
/* 0 until the handler is installed; read by the viewer's status too (atomic). */
static _Atomic int capture_signal;
/* Under ThreadSanitizer a signal is not delivered when it arrives: TSan's handler keeps it and
 * calls ours later, at the thread's next intercepted call, with the context saved at arrival.
 * By then the stack below that context's sp has been used again, and a walk from it reads
 * other calls' frames. So there the handler walks from where it runs (found at install). */
static int signals_deferred;
/* Defined when the process runs under TSan. A weak reference, resolved when the object is
 * loaded, rather than dlsym(RTLD_DEFAULT) at start: a name that is not there makes dlsym read
 * the symbol tables of every loaded library, and its pages stay resident (~400 KiB in
 * bench_overhead, most of lagscope's share of the shared-library pages). */
extern void __tsan_init(void) __attribute__((weak));

/* ---- the handler: async-signal-safe, no allocation, no lock ---- */

static void futex_wake(_Atomic uint32_t *word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Copies the stack with a read the kernel checks: it stops short at an unmapped page. From
 * below the stack pointer when that memory is there, else from the stack pointer. */
static void copy_stack(snapshot *s) {
  for (uintptr_t below = BELOW_STACK_POINTER_BYTES;; below = 0) {
    s->stack_base = s->registers[LAGSCOPE__CFI_SP] - below;
    struct iovec local = {s->stack, below + STACK_COPY_BYTES};
    struct iovec remote = {(void *)s->stack_base, below + STACK_COPY_BYTES};
    ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    s->stack_len = n > 0 ? (size_t)n : 0;
    if (s->stack_len > below || below == 0) return;
  }
}

/* Whether the handler cut a system call short: the thread entered one between our look at its
 * state and the signal. The kernel has then already set the call's result to -EINTR and left
 * the pc just after the syscall instruction. Counted, for the tests and benchmarks. */
static _Atomic uint64_t interrupted_syscalls;

__attribute__((no_sanitize("address", "thread", "undefined"))) static int
interrupted_a_syscall(const ucontext_t *uc) {
#if defined(__x86_64__)
  const volatile uint8_t *pc = (const volatile uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
  return (long long)uc->uc_mcontext.gregs[REG_RAX] == -EINTR && pc[-2] == 0x0F && pc[-1] == 0x05;
#else
  const volatile uint8_t *pc = (const volatile uint8_t *)uc->uc_mcontext.pc;
  uint32_t insn = (uint32_t)pc[-4] | (uint32_t)pc[-3] << 8 | (uint32_t)pc[-2] << 16 |
                  (uint32_t)pc[-1] << 24;
  return (long long)uc->uc_mcontext.regs[0] == -EINTR && insn == 0xD4000001u; /* svc #0 */
#endif
}

/* Sent by lagscope: the armed timer, or (benchmarks) a signal queued by this process. */
static int sent_by_us(const siginfo_t *info) {
  if (info->si_code == SI_TIMER)
    return info->si_timerid == atomic_load_explicit(&armed_timer, memory_order_acquire);
  return info->si_code == SI_QUEUE && info->si_pid == getpid();
}

static void capture_handler(int sig, siginfo_t *info, void *context) {
  (void)sig;
  if (!sent_by_us(info)) return;
  int saved_errno = errno;
  uint32_t generation = (uint32_t)info->si_value.sival_int;
  uint32_t expected = REQUEST_WORD(generation, REQUESTED);
  if (atomic_compare_exchange_strong_explicit(&request_word, &expected,
                                              REQUEST_WORD(generation, CLAIMED),
                                              memory_order_acq_rel, memory_order_acquire)) {
    snapshot *s = &the_snapshot;
    s->from_handler = signals_deferred;
    if (signals_deferred) {
      ucontext_t here; /* glibc's getcontext: a few stores and a sigprocmask, no lock */
      getcontext(&here);
      lagscope__cfi_registers_from_ucontext(&here, s->registers);
    } else {
      lagscope__cfi_registers_from_ucontext(context, s->registers);
    }
    copy_stack(s);
    if (interrupted_a_syscall(context))
      atomic_fetch_add_explicit(&interrupted_syscalls, 1, memory_order_relaxed);
    atomic_store_explicit(&request_word, REQUEST_WORD(generation, DONE), memory_order_release);
    futex_wake(&request_word);
  }
  errno = saved_errno;
}

uint64_t lagscope__capture_interrupted_syscalls(void) {
  return atomic_load_explicit(&interrupted_syscalls, memory_order_relaxed);
}

/* ---- reads for the unwinder ---- */

/* [address, address + bytes) within [start, end), written so that no sum can wrap: a
 * corrupt frame hands us addresses near 2^64. */
static int within(uintptr_t address, size_t bytes, uintptr_t start, uintptr_t end) {
  return address >= start && end - start >= bytes && address - start <= end - start - bytes;
}

/* Code bytes of a loaded object, for the stack scan; 0 when [address, address + bytes) is not
 * all in one object's executable segment. */
static int read_code(uintptr_t address, void *out, size_t bytes) {
  uintptr_t start;
  int executable;
  return lagscope__linux_object_segment(address, bytes, &start, &executable) && executable &&
         lagscope__linux_object_read(address, out, bytes) == 0;
}

/* Bytes from the stack copy, or from a loaded object (its file: object_bytes.c): cfi.c's
 * reads. 0, or -1. */
static int read_memory(void *context, uintptr_t address, void *out, size_t bytes) {
  const snapshot *s = context;
  if (within(address, bytes, s->stack_base, s->stack_base + s->stack_len)) {
    memcpy(out, s->stack + (address - s->stack_base), bytes);
    return 0;
  }
  uintptr_t start;
  int executable;
  if (!lagscope__linux_object_segment(address, bytes, &start, &executable)) {
    lagscope__linux_objects_refresh(); /* a dlopen since the last look */
    if (!lagscope__linux_object_segment(address, bytes, &start, &executable)) return -1;
  }
  return lagscope__linux_object_read(address, out, bytes);
}

/* The unwind info for pc, through its object's .eh_frame_hdr (read from its file). 0, or -1
 * when pc is in no object, or its object has no .eh_frame_hdr or no FDE for it. */
static int find_fde(uintptr_t pc, const lagscope__cfi_memory *memory, lagscope__cfi_fde *fde) {
  uintptr_t hdr, start, end;
  if (lagscope__linux_object_unwind_table(pc, &hdr, &start, &end) != 0) {
    lagscope__linux_objects_refresh(); /* a dlopen since the last look */
    if (lagscope__linux_object_unwind_table(pc, &hdr, &start, &end) != 0) return -1;
  }
  return lagscope__cfi_find(hdr, pc, memory, fde);
}

/* The snapshot's stack copy back to the kernel: 32 KiB that an idle app need not keep
 * resident; the next capture faults its pages in again, zeroed. A handler still writing into
 * it (one whose request was abandoned) writes into fresh pages: nothing reads them. */
static void forget_snapshot_pages(void) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)the_snapshot.stack + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)the_snapshot.stack + sizeof(the_snapshot.stack)) & ~(page - 1);
  if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}

void lagscope__capture_release_unwinder(void) {
  lagscope__linux_objects_release(); /* the page cache and the files held open */
  forget_snapshot_pages();
}

/* ---- the walk: CFI, and for a blocked thread a stack scan where CFI cannot go on ---- */

/* How far one scan looks for the next return address: past a frame's locals, even a few KiB
 * of arrays, but not through the whole stack. */
#define SCAN_WORDS_MAX 1024u
/* A saved frame pointer lies above the word that holds it, within a stack's reach. */
#define FRAME_POINTER_REACH (8u * 1024u * 1024u)

#define KNOWN(reg) ((uint64_t)1 << (reg))

/* Only the pc, the stack pointer and perhaps the frame pointer (fp, 0 when unknown) are
 * known: a CFI rule that needs another register fails, and the walk looks further. */
static void set_partial_registers(lagscope__cfi_frame *f, uintptr_t ip, uintptr_t sp,
                                  uintptr_t fp) {
  f->registers[LAGSCOPE__CFI_PC] = ip;
  f->registers[LAGSCOPE__CFI_SP] = sp;
  f->registers[LAGSCOPE__CFI_FP] = fp;
  f->known = KNOWN(LAGSCOPE__CFI_PC) | KNOWN(LAGSCOPE__CFI_SP) |
             (fp != 0 ? KNOWN(LAGSCOPE__CFI_FP) : 0);
}

/* Copies the bytes before ip within its executable segment into code (up to
 * LAGSCOPE__CALL_BYTES_MAX); how many, 0 when ip is in no loaded object's code. */
static size_t code_before(uintptr_t ip, uint8_t *code) {
  uintptr_t start;
  int executable;
  if (!lagscope__linux_object_segment(ip, 1, &start, &executable) || !executable) return 0;
  size_t before = ip - start < LAGSCOPE__CALL_BYTES_MAX ? ip - start : LAGSCOPE__CALL_BYTES_MAX;
  return lagscope__linux_object_read(ip - before, code, before) == 0 ? before : 0;
}

/* Is ip a return address: in a loaded object's executable segment, just after a call? */
static int is_return_address(uintptr_t ip) {
  uint8_t code[LAGSCOPE__CALL_BYTES_MAX];
  size_t before = code_before(ip, code);
  return before > 0 && lagscope__linux_follows_call(code, before);
}

/* Is ip where a signal handler returns to: a trampoline whose unwind info says it is one
 * (augmentation S: glibc's __restore_rt, the vDSO's sigreturn), its FDE begun a byte early so
 * that ip - 1 is in it? A handler's return address follows no call. */
static int is_signal_trampoline(const snapshot *s, uintptr_t ip) {
  lagscope__cfi_memory memory = {read_memory, (void *)s};
  lagscope__cfi_fde fde;
  return (find_fde(ip - 1, &memory, &fde) == 0 && fde.signal_frame) ||
         lagscope__cfi_is_signal_return(ip, &memory);
}

/* A function called directly is entered at or before any pc in it, and not far before. */
#define CALLEE_REACH (16u * 1024u * 1024u)

/* Did the call before return_address enter the function of the frame at callee_ip (whose
 * first byte is callee_start, 0 when unknown)? Only a direct call says: its target, through a
 * PLT stub's GOT slot, is the function's start (or, start unknown, at or shortly before the
 * pc). An indirect call says nothing: 0. This tells a frame's return address from a stale one
 * left in a frame's padding by an earlier call. */
static int calls_callee(uintptr_t return_address, uintptr_t callee_ip, uintptr_t callee_start) {
  uint8_t code[LAGSCOPE__PROLOGUE_BYTES];
  size_t before = code_before(return_address, code);
  uintptr_t target, slot;
  if (!lagscope__linux_direct_call_target(code, before, return_address, &target)) return 0;
  uintptr_t through_slot;
  if (read_code(target, code, sizeof(code)) &&
      lagscope__linux_plt_slot(code, sizeof(code), target, &slot) &&
      lagscope__linux_object_read(slot, &through_slot, sizeof(through_slot)) == 0)
    target = through_slot;
  if (callee_start != 0) return target == callee_start;
  return target <= callee_ip && callee_ip - target < CALLEE_REACH;
}

static int stack_word(const snapshot *s, uintptr_t address, uintptr_t *value) {
  if (!within(address, sizeof(*value), s->stack_base, s->stack_base + s->stack_len)) return 0;
  memcpy(value, s->stack + (address - s->stack_base), sizeof(*value));
  return 1;
}

enum scan_result { SCAN_FOUND, SCAN_NOTHING, SCAN_END_OF_COPY };

/* From `from` up, the first word of the copy that is the return address of a direct call into
 * the frame's function (the frame at callee_ip, callee_start); failing that within the window,
 * the first return address at all (an indirect call, a tail call). Where it lies in *at. */
static enum scan_result scan_for_return_address(const snapshot *s, uintptr_t from,
                                                uintptr_t callee_ip, uintptr_t callee_start,
                                                uintptr_t *at) {
  uintptr_t word_size = sizeof(uintptr_t);
  uintptr_t a = (from + word_size - 1) & ~(word_size - 1), first = 0;
  enum scan_result end = SCAN_NOTHING;
  for (uint32_t n = 0; n < SCAN_WORDS_MAX; n++, a += word_size) {
    uintptr_t value;
    if (!stack_word(s, a, &value)) {
      end = SCAN_END_OF_COPY;
      break;
    }
    int trampoline = is_signal_trampoline(s, value); /* the kernel called a handler */
    if (!trampoline && !is_return_address(value)) continue;
    if (trampoline || calls_callee(value, callee_ip, callee_start)) {
      *at = a;
      return SCAN_FOUND;
    }
    if (first == 0) first = a;
  }
  if (first == 0) return end;
  *at = first;
  return SCAN_FOUND;
}

/* The frame pointer saved just below a return address found at `at`, when the word there looks
 * like one (x86_64 `push rbp` after the call; aarch64's frame record {x29, x30}); else 0. */
static uintptr_t saved_frame_pointer(const snapshot *s, uintptr_t at) {
  uintptr_t fp;
  if (at < sizeof(fp) || !stack_word(s, at - sizeof(fp), &fp)) return 0;
  if (fp <= at || fp - at > FRAME_POINTER_REACH || fp % sizeof(fp) != 0) return 0;
  return fp;
}

/* A function's frame pointer from its prologue: where the frame record of the frame at
 * (start, sp) lies, when the prologue says and a return address is there; else 0. */
static uintptr_t frame_pointer_from_prologue(uintptr_t start, uintptr_t sp, const snapshot *s) {
  uint8_t code[LAGSCOPE__PROLOGUE_BYTES];
  if (start == 0 || !read_code(start, code, sizeof(code))) return 0;
  long offset = lagscope__linux_frame_pointer_offset(code, sizeof(code));
  uintptr_t fp = sp + (uintptr_t)offset, return_address;
  if (offset < 0 || !stack_word(s, fp + sizeof(fp), &return_address)) return 0;
  return is_return_address(return_address) || is_signal_trampoline(s, return_address) ? fp : 0;
}

/* The frame a CFI run stopped at: the last one pushed. */
typedef struct frame_at {
  uintptr_t ip, sp, start; /* start: its function's first byte, 0 when unknown */
  int exact;               /* ip is where the frame is, not a return address after a call */
} frame_at;

/* Walks the snapshot into out; on the monitor thread. registers_known: all of them were copied
 * (the signal's way); else only pc and sp are (a blocked thread), and each frame is checked.
 * Where CFI needs an unknown register (the frame pointer, in code that keeps one), the
 * function's prologue gives its frame pointer; failing that, a scan finds the next return
 * address. */
static void unwind_snapshot(snapshot *s, lagscope__stack *out, int registers_known) {
  out->depth = 0;
  out->frames_scanned = 0;
  out->walk = LAGSCOPE__WALK_BAD_FRAME;
  lagscope__linux_objects_refresh(); /* the loader's list, when it changed or was let go */
  lagscope__cfi_memory memory = {read_memory, s};
  lagscope__cfi_frame frame;
  memcpy(frame.registers, s->registers, sizeof(frame.registers));
  frame.known = ~(uint64_t)0;
  if (!registers_known)
    set_partial_registers(&frame, s->registers[LAGSCOPE__CFI_PC], s->registers[LAGSCOPE__CFI_SP],
                          0);
  frame_at last = {0, s->registers[LAGSCOPE__CFI_SP], 0, 1}, prologue_tried = {0, 0, 0, 0};
  uintptr_t scan_floor = 0;
  int run_from_scan = 0, first_pushed = 0, exact = 1;
  for (;;) { /* one CFI run; then, for a blocked thread, a prologue or a scan, and another run */
    int first = 1;
    for (;;) {
      uintptr_t ip = frame.registers[LAGSCOPE__CFI_PC];
      if (!(frame.known & KNOWN(LAGSCOPE__CFI_PC)) || ip == 0) break;
      if (!first && !registers_known && !exact && !is_return_address(ip) &&
          !is_signal_trampoline(s, ip))
        break;
      if (!(first && first_pushed)) {
        if (out->depth == LAGSCOPE__MAX_STACK_FRAMES) {
          out->walk = LAGSCOPE__WALK_TRUNCATED;
          return;
        }
        out->frames[out->depth++] = ip;
        if (first && run_from_scan) out->frames_scanned++;
      }
      first = 0;
      last.ip = ip;
      last.exact = exact;
      if (frame.known & KNOWN(LAGSCOPE__CFI_SP)) last.sp = frame.registers[LAGSCOPE__CFI_SP];
      /* A return address may follow a call that ends its function: look up the call. */
      uintptr_t lookup = exact ? ip : ip - 1;
      lagscope__cfi_fde fde;
      int have_fde = find_fde(lookup, &memory, &fde) == 0;
      last.start = have_fde ? fde.start : 0;
      /* aarch64's signal return: its CFI would skip the interrupted pc; the ucontext has it. */
      int signal_return = (!have_fde || fde.signal_frame) &&
                          lagscope__cfi_is_signal_return(ip, &memory);
      /* Without unwind info, CFI's fallback is the frame-pointer chain: for a blocked thread,
       * whose frame pointer is a guess, look further instead. */
      if (!registers_known && !have_fde && !signal_return) break;
      enum lagscope__cfi_result step =
          signal_return ? lagscope__cfi_step_signal_return(&frame, &memory)
          : have_fde    ? lagscope__cfi_step(&frame, &fde, lookup, &memory)
                        : lagscope__cfi_step_frame_pointer(&frame, &memory);
      if (step == LAGSCOPE__CFI_END) {
        out->walk = LAGSCOPE__WALK_COMPLETE;
        return;
      }
      if (step == LAGSCOPE__CFI_FAILED) break;
      /* After a signal's trampoline, the pc is where the signal came: not after a call. */
      exact = signal_return || (have_fde && fde.signal_frame);
    }
    if (registers_known) break;
    first_pushed = run_from_scan = 0;
    if (prologue_tried.ip != last.ip || prologue_tried.sp != last.sp) {
      prologue_tried = last;
      uintptr_t fp = frame_pointer_from_prologue(last.start, last.sp, s);
      if (fp != 0) { /* again from the same frame, its frame pointer known */
        set_partial_registers(&frame, last.ip, last.sp, fp);
        exact = last.exact;
        first_pushed = 1;
        continue;
      }
    }
    uintptr_t at = 0, from = last.sp > scan_floor ? last.sp : scan_floor;
    enum scan_result found = scan_for_return_address(s, from, last.ip, last.start, &at);
    if (found == SCAN_END_OF_COPY) last.sp = s->stack_base + s->stack_len;
    if (found != SCAN_FOUND) break;
    uintptr_t return_address = 0;
    stack_word(s, at, &return_address);
    set_partial_registers(&frame, return_address, at + sizeof(at), saved_frame_pointer(s, at));
    exact = 0;
    scan_floor = at + sizeof(at);
    run_from_scan = 1;
  }
  /* The walk left the copied stack: the stack is deeper than the copy, not corrupt. */
  if (s->stack_len == sizeof(s->stack) && last.sp >= s->stack_base + s->stack_len - 64)
    out->walk = LAGSCOPE__WALK_TRUNCATED;
}

/* ---- the requesting side ---- */

int32_t lagscope__main_thread_id(void) { return (int32_t)getpid(); }

/* Is sig's handler ours? */
static int handler_is_ours(int sig) {
  struct sigaction current;
  if (sigaction(sig, NULL, &current) != 0) return 0;
  return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == capture_handler;
}

static int handler_is_default(int sig) {
  struct sigaction current;
  if (sigaction(sig, NULL, &current) != 0) return 0;
  return !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
}

static int install_handler(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = capture_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask); /* nothing interrupts the copy */
  signals_deferred = __tsan_init != NULL;
  return sigaction(sig, &sa, NULL) == 0 ? LAGSCOPE_OK : LAGSCOPE_ESYS;
}

int lagscope__capture_init(uint32_t wanted) {
  if (wanted != 0 && ((int)wanted < SIGRTMIN || (int)wanted > SIGRTMAX)) return LAGSCOPE_EINVAL;
  if (capture_signal != 0 && (wanted == 0 || (int)wanted == capture_signal) &&
      handler_is_ours(capture_signal))
    return LAGSCOPE_OK; /* installed by an earlier start */
  if (wanted != 0) {
    if (!handler_is_ours((int)wanted) && !handler_is_default((int)wanted))
      return LAGSCOPE_ESIGNAL; /* the app uses this signal: never take it over */
    int rc = handler_is_ours((int)wanted) ? LAGSCOPE_OK : install_handler((int)wanted);
    if (rc == LAGSCOPE_OK) capture_signal = (int)wanted;
    return rc;
  }
  for (int sig = SIGRTMIN + CAPTURE_SIGNAL_OFFSET; sig <= SIGRTMAX; sig++) {
    if (!handler_is_default(sig) && !handler_is_ours(sig)) continue;
    int rc = handler_is_ours(sig) ? LAGSCOPE_OK : install_handler(sig);
    if (rc == LAGSCOPE_OK) capture_signal = sig;
    return rc;
  }
  return LAGSCOPE_ESIGNAL;
}

int lagscope__capture_signal(void) { return capture_signal; }

/* The handler walks the live stack: there is no copy to size. */
void lagscope__capture_set_copy_bytes(size_t bytes) { (void)bytes; }

/* ---- asking a thread on the CPU for its registers ----
 *
 * Not by sending the signal straight away: a thread seen running may be inside the kernel on
 * its way into a wait (or just woken from one, waiting for a CPU), and a signal that becomes
 * pending there ends its poll, nanosleep or epoll_wait with EINTR. Measured before this way
 * (poll(1 ms) after 300 us of work, looked at every 2 ms): 123 of 150 signals cut a poll short.
 * Instead, a one-shot timer on the thread's own CPU clock, whose expiry the kernel notices at
 * a tick while the thread runs and turns into the signal on the thread's way back to user space
 * (POSIX_CPU_TIMERS_TASK_WORK: x86_64 since Linux 5.11): the call it was in has its result by
 * then, so nothing is cut short, and a thread that gets no CPU is never signalled. The price:
 * the answer comes at the thread's next tick (4 ms at HZ=250), not in ~50 us. The request
 * word and its generation are the same for both ways. */

/* While the timer has not fired, the thread is looked at again this often: one that has
 * blocked meanwhile is read without the signal instead. */
#define LOOK_AGAIN_NS (1000u * 1000u)

static uint32_t begin_request(void) {
  uint32_t generation = last_generation = last_generation % (GENERATION_MAX - 1) + 1;
  atomic_store_explicit(&request_word, REQUEST_WORD(generation, REQUESTED), memory_order_release);
  return generation;
}

/* The request abandoned, unless the handler claimed it first: 1 when abandoned. A signal that
 * comes later finds the word changed and does nothing. */
static int abandon(uint32_t generation) {
  uint32_t word = REQUEST_WORD(generation, REQUESTED);
  return atomic_compare_exchange_strong(&request_word, &word,
                                        REQUEST_WORD(generation, ABANDONED));
}

/* Waits while the request word still says `from`, until the deadline; returns the word. */
static uint32_t wait_word_change(uint32_t from, uint64_t deadline_ns) {
  for (;;) {
    uint32_t word = atomic_load_explicit(&request_word, memory_order_acquire);
    uint64_t now = lagscope__now_ns();
    if (word != from || now >= deadline_ns) return word;
    struct timespec abs = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    syscall(SYS_futex, &request_word, FUTEX_WAIT_BITSET_PRIVATE, from, &abs, NULL,
            FUTEX_BITSET_MATCH_ANY);
  }
}

/* After the handler claimed the request: it is copying right now; it is short, wait for it.
 * 1 when the snapshot is whole. */
static int finish(uint32_t generation, lagscope__stack *out) {
  uint32_t word = wait_word_change(REQUEST_WORD(generation, CLAIMED),
                                   lagscope__now_ns() + LATE_HANDLER_WAIT_NS);
  if (word == REQUEST_WORD(generation, DONE)) return 1;
  out->walk = LAGSCOPE__WALK_NO_REPLY;
  return 0;
}

static int thread_gone(int32_t tid) {
  return syscall(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH;
}

/* The timer on tid's CPU clock, armed to expire as soon as it has run at all: its id, or -1. */
static int arm_timer(int32_t tid, uint32_t generation) {
  struct sigevent event;
  memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = capture_signal;
  event.sigev_value.sival_int = (int)generation;
  event._sigev_un._tid = tid;
  int id = -1;
  if (syscall(SYS_timer_create, lagscope__linux_thread_cpu_clock(tid), &event, &id) != 0) return -1;
  atomic_store_explicit(&armed_timer, id, memory_order_release);
  struct itimerspec once = {{0, 0}, {0, 1}};
  if (syscall(SYS_timer_settime, id, 0, &once, NULL) != 0) {
    atomic_store_explicit(&armed_timer, -1, memory_order_relaxed);
    syscall(SYS_timer_delete, id);
    return -1;
  }
  return id;
}

static void disarm_timer(int id) {
  atomic_store_explicit(&armed_timer, -1, memory_order_relaxed);
  syscall(SYS_timer_delete, id);
}

enum timer_result { TIMER_TAKEN, TIMER_BLOCKED, TIMER_FAILED };

/* Asks running tid for a snapshot through its CPU clock, until the deadline. TIMER_BLOCKED:
 * it blocked before it answered (take it without the signal); TIMER_FAILED: out->walk says
 * why. */
static enum timer_result take_by_timer(int32_t tid, uint64_t deadline_ns, lagscope__stack *out) {
  uint32_t generation = begin_request(), requested = REQUEST_WORD(generation, REQUESTED);
  int timer = arm_timer(tid, generation);
  if (timer < 0) {
    abandon(generation);
    out->walk = thread_gone(tid) ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    return TIMER_FAILED;
  }
  int claimed = 0, rc = LAGSCOPE_OK;
  lagscope__linux_thread_state state = {.running = 1};
  for (;;) {
    uint64_t now = lagscope__now_ns();
    if (now >= deadline_ns) break; /* no CPU for it all this time: an overloaded machine */
    uint64_t until = deadline_ns - now > LOOK_AGAIN_NS ? now + LOOK_AGAIN_NS : deadline_ns;
    if (wait_word_change(requested, until) != requested) {
      claimed = 1;
      break;
    }
    rc = lagscope__linux_read_thread_state(tid, &state);
    if (rc != LAGSCOPE_OK || !state.running) break; /* gone, or blocked since */
  }
  claimed = claimed || !abandon(generation); /* the handler may have got there meanwhile */
  enum timer_result result = TIMER_FAILED;
  if (claimed) {
    result = finish(generation, out) ? TIMER_TAKEN : TIMER_FAILED;
  } else {
    out->walk = rc == LAGSCOPE_ENOENT ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    if (rc == LAGSCOPE_OK && !state.running) result = TIMER_BLOCKED;
  }
  disarm_timer(timer);
  return result;
}

/* Benchmarks only: every thread gets the signal at once, blocked or not (the old way, as a
 * baseline: it cuts waits short). */
static int force_signal;
void lagscope__capture_force_signal(int on) { force_signal = on; }

static int send_request(int32_t tid, uint32_t generation) {
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  info.si_signo = capture_signal;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_int = (int)generation;
  return (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, capture_signal, &info);
}

/* The forced way: 1 when the snapshot arrived. */
static int take_by_signal(int32_t tid, uint64_t timeout_ns, lagscope__stack *out) {
  uint32_t generation = begin_request(), requested = REQUEST_WORD(generation, REQUESTED);
  if (send_request(tid, generation) != 0) {
    out->walk = errno == ESRCH ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    abandon(generation);
    return 0;
  }
  if (wait_word_change(requested, lagscope__now_ns() + timeout_ns) == requested &&
      abandon(generation)) {
    out->walk = thread_gone(tid) ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    return 0;
  }
  return finish(generation, out);
}

/* How often the state is read again when the thread moved during a blocked copy. */
#define BLOCKED_ATTEMPTS 3

enum take_result { TAKEN, TAKE_RUNNING, TAKE_GONE };

/* glibc's pthread_mutex_t, as the installed headers lay it out: the futex word first, the
 * owner's tid in __owner. A thread waiting on the futex of a locked mutex names its owner. */
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0,
               "glibc's pthread_mutex_t: the futex word is not first");
#define MUTEX_OWNER_OFFSET offsetof(pthread_mutex_t, __data.__owner)

/* The owner of the lock whose futex word is at address, as the memory says now: for a PI
 * futex the word itself holds the owner's tid; for a plain one (a default mutex) the mutex's
 * __owner, when the word says locked. 0 when none; the caller checks it is a live thread
 * (the word may be a condition variable's, whose neighbour means nothing). Checked reads. */
static int32_t mutex_owner(uintptr_t address, uintptr_t op) {
  int32_t words[MUTEX_OWNER_OFFSET / sizeof(int32_t) + 1];
  if (lagscope__linux_read_own(address, words, sizeof(words)) != 0) return 0;
  int cmd = (int)(op & FUTEX_CMD_MASK);
  if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_WAIT_REQUEUE_PI)
    return (int32_t)((uint32_t)words[0] & FUTEX_TID_MASK);
  if (words[0] == 0) return 0; /* not locked */
  int32_t owner = words[MUTEX_OWNER_OFFSET / sizeof(int32_t)];
  return owner > 0 ? owner : 0;
}

/* Copies a blocked thread's stack from where the kernel says it will resume, then checks that
 * it did not run meanwhile: its run count (schedstat) unchanged, or where the kernel keeps
 * none, the same syscall, arguments, sp and pc before and after the copy. The state alone
 * could miss a thread that ran and blocked again in the same call (a loop around usleep),
 * whose stack was being written while we copied it. */
static enum take_result take_blocked(int32_t tid, lagscope__stack *out) {
  for (int attempt = 0; attempt < BLOCKED_ATTEMPTS; attempt++) {
    lagscope__linux_thread_state before, after;
    uint64_t runs_before = 0, runs_after = 0;
    int have_runs = lagscope__linux_read_run_count(tid, &runs_before) == LAGSCOPE_OK;
    int rc = lagscope__linux_read_thread_state(tid, &before);
    if (rc == LAGSCOPE_ENOENT) return TAKE_GONE;
    if (rc != LAGSCOPE_OK || before.running) return TAKE_RUNNING;
    snapshot *s = &the_snapshot;
    s->registers[LAGSCOPE__CFI_PC] = before.pc; /* the only two a blocked walk reads */
    s->registers[LAGSCOPE__CFI_SP] = before.sp;
    copy_stack(s);
    if (have_runs) {
      rc = lagscope__linux_read_run_count(tid, &runs_after);
      if (rc == LAGSCOPE_ENOENT) return TAKE_GONE;
      if (rc != LAGSCOPE_OK || runs_after != runs_before) continue; /* it ran meanwhile */
    } else {
      rc = lagscope__linux_read_thread_state(tid, &after);
      if (rc == LAGSCOPE_ENOENT) return TAKE_GONE;
      if (rc != LAGSCOPE_OK) return TAKE_RUNNING;
      if (!lagscope__linux_same_blocked_state(&before, &after)) continue; /* it ran meanwhile */
    }
    out->method = LAGSCOPE__METHOD_BLOCKED;
    out->run_state = before.nr >= 0 ? LAGSCOPE__RUN_SYSCALL : LAGSCOPE__RUN_BLOCKED;
    out->syscall = (int32_t)before.nr;
    memcpy(out->args, before.args, sizeof(out->args));
    if (before.nr == SYS_futex) out->lock_owner = mutex_owner(before.args[0], before.args[1]);
    return TAKEN;
  }
  return TAKE_RUNNING;
}

/* Every signal a mask can hold: not SIGKILL and SIGSTOP (the kernel refuses them), nor glibc's
 * own 32 and 33, which its sigfillset and pthread_sigmask leave out. */
#define SIGNAL_BIT(n) (1ull << ((n) - 1))
#define ALL_BLOCKABLE (~(SIGNAL_BIT(SIGKILL) | SIGNAL_BIT(SIGSTOP) | SIGNAL_BIT(32) | SIGNAL_BIT(33)))

/* The thread last found blocking the capture signal, and not answering since: while it stays
 * so, a mask that blocks every signal is its own, not our handler's. Capturing thread only:
 * captures are serialised. */
static int32_t blocked_tid;

/* Whether tid blocks the capture signal, before it is asked. A mask that blocks it but not every
 * signal is the app's choice (signalfd's way): 1. One that blocks every signal may be the app's
 * too, or our own handler's (it runs with all blocked), still returning there from the previous
 * capture: 1 only when tid was found blocking it after a request went unanswered. */
static int blocks_capture_signal(int32_t tid) {
  uint64_t mask;
  if (lagscope__linux_signal_mask(tid, &mask) != 0) return 0; /* not known: ask it */
  if (!(mask >> (capture_signal - 1) & 1)) return 0;
  return (mask & ALL_BLOCKABLE) != ALL_BLOCKABLE || tid == blocked_tid;
}

/* After a request went unanswered: whether the mask says why. */
static int unanswered_for_its_mask(int32_t tid) {
  uint64_t mask;
  if (lagscope__linux_signal_mask(tid, &mask) != 0 || !(mask >> (capture_signal - 1) & 1))
    return 0;
  blocked_tid = tid;
  return 1;
}

static int signal_blocked(lagscope__stack *out) {
  out->walk = LAGSCOPE__WALK_SIGNAL_BLOCKED;
  return LAGSCOPE_ESIGNAL;
}

/* The raw stack in the_snapshot, by whichever way the thread's state allows, until the
 * deadline: LAGSCOPE_OK; LAGSCOPE_ENOENT when it could not be taken (out->walk says why);
 * LAGSCOPE_ESIGNAL when a running thread could not be signalled because the app took the
 * signal over, or blocks it in that thread (out->walk SIGNAL_BLOCKED). A thread that blocks
 * while its timer waits is looked at again. */
static int take_any(int32_t tid, uint64_t timeout_ns, lagscope__stack *out) {
  uint64_t deadline = lagscope__now_ns() + timeout_ns;
  out->walk = LAGSCOPE__WALK_NO_REPLY;
  for (;;) {
    enum take_result how = force_signal ? TAKE_RUNNING : take_blocked(tid, out);
    if (how == TAKEN) return LAGSCOPE_OK;
    if (how == TAKE_GONE) {
      out->walk = LAGSCOPE__WALK_EXITED;
      return LAGSCOPE_ENOENT;
    }
    if (capture_signal == 0) return LAGSCOPE_ENOENT;
    if (!handler_is_ours(capture_signal)) return LAGSCOPE_ESIGNAL; /* taken over since start */
    /* Blocked in the thread: it would never answer while it runs, and a sample taken once it
     * sleeps would tell the hang as that sleep. Asked nothing, said. */
    if (blocks_capture_signal(tid)) return signal_blocked(out);
    if (force_signal) {
      if (!take_by_signal(tid, timeout_ns, out)) return LAGSCOPE_ENOENT;
      break;
    }
    enum timer_result got = take_by_timer(tid, deadline, out);
    if (got == TIMER_TAKEN) break;
    if (got == TIMER_FAILED && out->walk == LAGSCOPE__WALK_NO_REPLY && unanswered_for_its_mask(tid))
      return signal_blocked(out);
    if (got == TIMER_FAILED || lagscope__now_ns() >= deadline) return LAGSCOPE_ENOENT;
  }
  out->method = LAGSCOPE__METHOD_SIGNAL;
  out->run_state = LAGSCOPE__RUN_CPU;
  if (tid == blocked_tid) blocked_tid = 0; /* it answers again */
  return LAGSCOPE_OK;
}

int lagscope__capture_take(int32_t tid, lagscope__stack *out, uint64_t timeout_ns) {
  int rc = take_any(tid, timeout_ns, out);
  if (rc != LAGSCOPE_OK) return rc;
  int by_signal = out->method == LAGSCOPE__METHOD_SIGNAL;
  unwind_snapshot(&the_snapshot, out, by_signal);
  if (by_signal && the_snapshot.from_handler && out->depth > 0) /* drop capture_handler */
    memmove(out->frames, out->frames + 1, --out->depth * sizeof(out->frames[0]));
  return out->depth > 0 ? LAGSCOPE_OK : LAGSCOPE_EPARSE;
}

int lagscope__capture_take_raw(int32_t tid, uint64_t timeout_ns, lagscope__stack *scratch,
                               int *method) {
  int rc = take_any(tid, timeout_ns, scratch);
  if (rc != LAGSCOPE_OK) return rc;
  *method = scratch->method;
  return LAGSCOPE_OK;
}
