/*
 * A thread on the CPU, captured by a real-time signal whose handler copies the registers and
 * the top of the stack into the one snapshot, then returns: a copy, two atomic stores, one
 * futex wake; nothing that allocates or locks. Here: the snapshot and the request word the
 * handler claims, the handler, its installation, and the monitor's side of a request: a
 * one-shot timer on the thread's CPU clock (or, for benchmarks, the signal sent straight
 * away), then a wait for the handler's answer. The design is in capture.c; the shared names
 * in capture.h.
 */
#define _GNU_SOURCE
#include "capture.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- the snapshot and the request: written by the handler, read by the monitor ---- */

#define CAPTURE_SIGNAL_OFFSET 3 /* from SIGRTMIN + 3: glibc keeps the first two for itself */
#define LATE_HANDLER_WAIT_NS (100u * 1000u * 1000u)

/* One request at a time (the monitor's). Its state is one futex word holding the request's
 * generation and its state, so that the handler claims exactly the request its signal was sent
 * for: a signal that arrives after its request was abandoned finds another generation. */
enum request_state { IDLE = 0, REQUESTED, CLAIMED, DONE, ABANDONED };
#define REQUEST_WORD(generation, state) (((uint32_t)(generation) << 3) | (uint32_t)(state))
#define GENERATION_MAX (1u << 28)

lagscope__capture_snapshot lagscope__capture_the_snapshot;
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
/* Under TSan, where its delivery called our handler from: a return address in its runtime.
 * Set by the handler; read by the monitor to find the delivery's frames (capture.c). Only when
 * the runtime is a library of its own (gcc's libtsan.so, clang's -shared-libsan): linked into
 * the program, its code is the app's code too, and no range tells them apart. */
static _Atomic uintptr_t delivered_from;
static int runtime_is_library;

/* ---- the handler: async-signal-safe, no allocation, no lock ---- */

/* Set while the monitor sleeps on the request word (or is about to): the handler's wake is a
 * system call on the app's thread, and the monitor, between two looks at the thread's state,
 * often is not asleep. The monitor sets it, then the kernel reads the word (after a full
 * barrier, futex(2)); the handler stores the word, then reads this: one of the two sees the
 * other's store, so a sleeping monitor is always woken. */
static _Atomic int monitor_waiting;

static void futex_wake(_Atomic uint32_t *word) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The main thread's stack mapping, [main_stack_low, main_stack_high), as /proc/self/maps gave
 * it outside the handler: memory the handler may copy with plain loads, with no system call.
 * process_vm_readv takes the process's mmap lock, which every thread's start and exit takes to
 * write, and under thread churn the main thread waited in the handler for seconds (issue 31,
 * item 4). Only a copy that lies wholly in this mapping is made so: a stack pointer elsewhere
 * (a coroutine's or fiber's stack from malloc or mmap, a signal handler's sigaltstack, another
 * thread) goes the checked way. Nearness to the main stack proves nothing: with ASLR off (gdb,
 * rr) malloc'd and mmap'd stacks lie ~140 MiB below it, and a copy trusted by distance ran off
 * their end (issue 42, item 1). 0: not known.
 *
 * The kernel grows the mapping down as the stack deepens, after it was read: a stack pointer
 * below main_stack_low but within the stack's size limit of it is noted by the handler (it
 * copies the checked way that once), and the monitor reads the mapping again after the capture,
 * outside the handler (refresh_main_stack), at most once a second: the next captures are in
 * place again, and a fiber that merely lies there costs one read of the maps a second. */
static _Atomic uintptr_t main_stack_low, main_stack_high;
/* Where the main thread's frames end: the kernel's start of its stack (argc, then argv, the
 * environment and the aux vector above it: no frames, kilobytes of them under a build's
 * environment), and a little above for the outermost frame's reads. The in-place copy stops
 * there, not at the mapping's end. 0: not known. */
static _Atomic uintptr_t main_stack_frames_end;
#define MAIN_STACK_FRAMES_SLACK 256u
static _Atomic uintptr_t main_stack_growth; /* how far below main_stack_low it may grow */
static _Atomic int main_stack_deeper;        /* set by the handler: a stack pointer in that room */
static _Atomic uint64_t main_stack_read_ns;  /* when the mapping was last read */
#define MAIN_STACK_GROWTH_MAX (256u * 1024u * 1024u) /* the room, when the limit says none */
#define MAIN_STACK_REFRESH_NS (1000u * 1000u * 1000u)

/* startstack, the 28th field of /proc/self/stat (counted after the name's ')'): an address in
 * the main thread's stack mapping, wherever the thread runs now. 0: not known. F */
static uintptr_t main_stack_start(void) {
  char text[1024];
  if (lagscope__linux_read_small_file("/proc/self/stat", text, sizeof(text)) <= 0) return 0;
  const char *p = strrchr(text, ')');
  for (int field = 2; p != NULL && field < 28; field++) p = strchr(p + 1, ' ');
  if (p == NULL) return 0;
  uintptr_t value = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) value = value * 10 + (uintptr_t)(*p - '0');
  return value;
}

/* One line's "low-high" of /proc/self/maps: 1 when it holds address. F */
static int range_holds(const char *head, uintptr_t address, uintptr_t *low, uintptr_t *high) {
  char *end;
  unsigned long long lo = strtoull(head, &end, 16);
  if (*end != '-') return 0;
  unsigned long long hi = strtoull(end + 1, &end, 16);
  if (*end != '\0' || address < lo || address >= hi) return 0;
  *low = (uintptr_t)lo, *high = (uintptr_t)hi;
  return 1;
}

/* The mapping of /proc/self/maps that holds address: 1 with [*low, *high). Read in pieces into
 * a buffer on the stack, each line's first field only. No allocation. */
static int mapping_holding(uintptr_t address, uintptr_t *low, uintptr_t *high) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char piece[4096], head[48];
  size_t head_len = 0; /* SIZE_MAX: past the line's first field */
  int found = 0;
  for (;;) {
    ssize_t got = read(fd, piece, sizeof(piece));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || found) break;
    for (ssize_t i = 0; i < got && !found; i++) {
      if (piece[i] == '\n') {
        head_len = 0;
      } else if (head_len == SIZE_MAX) {
        continue;
      } else if (piece[i] != ' ' && head_len < sizeof(head) - 1) {
        head[head_len++] = piece[i];
      } else {
        head[head_len] = '\0';
        head_len = SIZE_MAX;
        found = range_holds(head, address, low, high);
      }
    }
  }
  close(fd);
  return found;
}

/* The main thread's stack mapping read (again): at init, and on the monitor after the handler
 * found the stack deeper than known. Never on the main thread's handler. No allocation. */
static void note_main_stack(void) {
  uintptr_t start = main_stack_start(), low, high;
  atomic_store_explicit(&main_stack_read_ns, lagscope__now_ns(), memory_order_relaxed);
  if (start == 0 || !mapping_holding(start, &low, &high)) return;
  struct rlimit limit;
  uintptr_t growth = getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
                             limit.rlim_cur < MAIN_STACK_GROWTH_MAX
                         ? (uintptr_t)limit.rlim_cur
                         : MAIN_STACK_GROWTH_MAX;
  atomic_store_explicit(&main_stack_growth, growth, memory_order_relaxed);
  atomic_store_explicit(&main_stack_frames_end,
                        high - start > MAIN_STACK_FRAMES_SLACK ? start + MAIN_STACK_FRAMES_SLACK
                                                               : high,
                        memory_order_relaxed);
  atomic_store_explicit(&main_stack_high, high, memory_order_relaxed);
  atomic_store_explicit(&main_stack_low, low, memory_order_relaxed);
}

/* After a capture, on the monitor: the mapping read again when the handler found the stack
 * deeper than known, at most once every MAIN_STACK_REFRESH_NS. */
static void refresh_main_stack(void) {
  if (!atomic_load_explicit(&main_stack_deeper, memory_order_relaxed)) return;
  uint64_t read_ns = atomic_load_explicit(&main_stack_read_ns, memory_order_relaxed);
  if (lagscope__now_ns() - read_ns < MAIN_STACK_REFRESH_NS) return;
  atomic_store_explicit(&main_stack_deeper, 0, memory_order_relaxed);
  note_main_stack();
}

void lagscope__capture_main_stack(uintptr_t *low, uintptr_t *high) {
  *low = atomic_load(&main_stack_low), *high = atomic_load(&main_stack_high);
}

/* Copies len bytes of the running thread's own stack with plain loads: other frames' bytes,
 * which the sanitizers would call out of bounds. A word at a time (the byte loop it was took
 * ~8x the loads); volatile, so that no memcpy (a sanitizer's interceptor) is made of it.
 * Async-signal-safe. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static void
copy_own_stack(uint8_t *to, uintptr_t from, size_t len) {
  size_t i = 0;
  if (from % sizeof(uintptr_t) == 0 && (uintptr_t)to % sizeof(uintptr_t) == 0) {
    const volatile uintptr_t *words = (const volatile uintptr_t *)from;
    uintptr_t *into = (uintptr_t *)(void *)to;
    for (; i + sizeof(uintptr_t) <= len; i += sizeof(uintptr_t))
      into[i / sizeof(uintptr_t)] = words[i / sizeof(uintptr_t)];
  }
  const volatile uint8_t *source = (const volatile uint8_t *)from;
  for (; i < len; i++) to[i] = source[i];
}

static _Atomic int force_checked_copy;
void lagscope__capture_force_checked_copy(int on) { atomic_store(&force_checked_copy, on); }

/* The stack copied in place when its stack pointer is in the main stack's mapping, up to the
 * end of main's frames: 1 when copied, every byte from that mapping. Whichever thread runs there, the bytes are mapped. */
static int copy_main_stack(lagscope__capture_snapshot *s) {
  uintptr_t sp = s->registers[LAGSCOPE__CFI_SP];
  uintptr_t low = atomic_load_explicit(&main_stack_low, memory_order_relaxed);
  uintptr_t high = atomic_load_explicit(&main_stack_high, memory_order_relaxed);
  if (low == 0 || atomic_load_explicit(&force_checked_copy, memory_order_relaxed)) return 0;
  if (sp < low || sp >= high) {
    if (sp < low && low - sp <= atomic_load_explicit(&main_stack_growth, memory_order_relaxed))
      /* perhaps the stack grew: read it again */
      atomic_store_explicit(&main_stack_deeper, 1, memory_order_relaxed);
    return 0; /* not on the main stack as known: a stack of the app's making, or another's */
  }
  uintptr_t below = sp - low >= LAGSCOPE__CAPTURE_BELOW_SP_BYTES
                        ? LAGSCOPE__CAPTURE_BELOW_SP_BYTES : 0;
  uintptr_t end = atomic_load_explicit(&main_stack_frames_end, memory_order_relaxed);
  if (end <= sp || end > high) end = high; /* a stack pointer above argc: not main's frames */
  size_t len = below + LAGSCOPE__CAPTURE_STACK_COPY_BYTES;
  if (len > end - (sp - below)) len = end - (sp - below); /* up to the frames' end */
  s->stack_base = sp - below;
  copy_own_stack(s->stack, s->stack_base, len);
  s->stack_len = len;
  return 1;
}

/* This process's id, for the checked copy and a queued signal's sender: getpid() is a system
 * call (glibc caches it no more), and the handler made one or two. Set at install, and again
 * in a forked child (pthread_atfork), whose id it would otherwise read the parent's memory by. */
static _Atomic pid_t own_pid;
static void note_own_pid(void) { atomic_store_explicit(&own_pid, getpid(), memory_order_relaxed); }

/* The stack mapping [low, high) of the thread asked now, when it is not the main stack: the
 * checked copy stops at its end rather than reading 32 KiB whatever the stack's depth (what a
 * thread's stack holds above its outermost frame is its TLS, not frames). It only bounds the
 * length of a read the kernel checks: a stale one makes the copy shorter or longer, never
 * unchecked. Set by the monitor before each request from what it learnt after an earlier
 * capture of the same thread (lagscope__capture_learn_stack); 0: not known. */
static _Atomic uintptr_t aimed_low, aimed_high;
static int32_t known_tid;                          /* monitor only: the mapping last learnt */
static uintptr_t known_low, known_high;
/* And where that thread's frames end, learnt from a complete walk (0: not known): above its
 * outermost frame a glibc thread's mapping holds its TLS and thread descriptor, kilobytes
 * that the checked copy read through the kernel on every capture for nothing. */
static uintptr_t known_frames_end;
#define FRAMES_END_SLACK 256u
static uint64_t known_read_ns;

void lagscope__capture_aim(int32_t tid) {
  int known = tid == known_tid && tid != 0;
  uintptr_t high = known && known_frames_end != 0 ? known_frames_end : known_high;
  atomic_store_explicit(&aimed_high, known ? high : 0, memory_order_relaxed);
  atomic_store_explicit(&aimed_low, known ? known_low : 0, memory_order_release);
}

void lagscope__capture_learn_stack(int32_t tid) {
  uintptr_t sp = lagscope__capture_the_snapshot.registers[LAGSCOPE__CFI_SP], low, high;
  if (sp >= atomic_load(&main_stack_low) && sp < atomic_load(&main_stack_high)) return;
  if (tid == known_tid && sp >= known_low && sp < known_high) return; /* as known */
  uint64_t now = lagscope__now_ns();
  if (known_read_ns != 0 && now - known_read_ns < MAIN_STACK_REFRESH_NS) return;
  known_read_ns = now; /* a fiber's stack that keeps moving costs one read of the maps a second */
  if (!mapping_holding(sp, &low, &high)) return;
  known_tid = tid, known_low = low, known_high = high, known_frames_end = 0;
}

void lagscope__capture_learn_frames_end(int32_t tid, int walk) {
  const lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
  uintptr_t sp = s->registers[LAGSCOPE__CFI_SP];
  if (tid != known_tid || sp < known_low || sp >= known_high) return;
  if (walk != LAGSCOPE__WALK_COMPLETE) {
    /* perhaps cut short by a bound learnt from another layout (the tid reused): unlearnt */
    if (known_frames_end != 0 && s->stack_base + s->stack_len >= known_frames_end)
      known_frames_end = 0;
    return;
  }
  if (s->read_high <= sp || known_high - s->read_high <= FRAMES_END_SLACK) return;
  uintptr_t end = s->read_high + FRAMES_END_SLACK;
  if (end > known_frames_end) known_frames_end = end;
}

/* The main thread's own stack mapping read in place, else a read the kernel checks (capture.h),
 * no longer than to the end of the asked thread's stack mapping when it is known. */
void lagscope__capture_copy_stack(lagscope__capture_snapshot *s) {
  if (copy_main_stack(s)) return;
  uintptr_t sp = s->registers[LAGSCOPE__CFI_SP];
  uintptr_t low = atomic_load_explicit(&aimed_low, memory_order_acquire);
  uintptr_t high = atomic_load_explicit(&aimed_high, memory_order_relaxed);
  for (uintptr_t below = LAGSCOPE__CAPTURE_BELOW_SP_BYTES;; below = 0) {
    s->stack_base = sp - below;
    size_t len = below + LAGSCOPE__CAPTURE_STACK_COPY_BYTES;
    if (sp >= low && sp < high && high - s->stack_base < len) len = high - s->stack_base;
    struct iovec local = {s->stack, len};
    struct iovec remote = {(void *)s->stack_base, len};
    pid_t pid = atomic_load_explicit(&own_pid, memory_order_relaxed);
    ssize_t n = process_vm_readv(pid != 0 ? pid : getpid(), &local, 1, &remote, 1, 0);
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
  return info->si_code == SI_QUEUE &&
         info->si_pid == atomic_load_explicit(&own_pid, memory_order_relaxed);
}

/* Handlers entered and left, whatever signal each came for: while they differ one runs, with
 * every signal blocked, and the thread's mask says nothing of the app's (capture.h). */
static _Atomic uint64_t handlers_entered, handlers_left;

uint64_t lagscope__capture_handlers_seen(void) {
  uint64_t left = atomic_load_explicit(&handlers_left, memory_order_acquire);
  uint64_t entered = atomic_load_explicit(&handlers_entered, memory_order_acquire);
  return entered != left ? 0 : entered + 1; /* 0: one runs now */
}

/* The request its signal was sent for claimed, the snapshot taken from registers (the
 * interrupted context's, or under TSan those capture_handler took of itself), the monitor
 * woken. */
static void claim_and_copy(const siginfo_t *info, const ucontext_t *registers,
                           const ucontext_t *interrupted) {
  uint32_t generation = (uint32_t)info->si_value.sival_int;
  uint32_t expected = REQUEST_WORD(generation, REQUESTED);
  if (!atomic_compare_exchange_strong_explicit(&request_word, &expected,
                                               REQUEST_WORD(generation, CLAIMED),
                                               memory_order_acq_rel, memory_order_acquire))
    return; /* a late signal: its request was abandoned */
  uint64_t entered_ns = lagscope__now_ns(); /* the vDSO's clock: no system call */
  lagscope__capture_snapshot *s = &lagscope__capture_the_snapshot;
  s->from_handler = registers != interrupted;
  lagscope__cfi_registers_from_ucontext(registers, s->registers);
  lagscope__capture_copy_stack(s);
  if (interrupted_a_syscall(interrupted))
    atomic_fetch_add_explicit(&interrupted_syscalls, 1, memory_order_relaxed);
  s->handler_ns = lagscope__now_ns() - entered_ns;
  atomic_store_explicit(&request_word, REQUEST_WORD(generation, DONE), memory_order_seq_cst);
  if (atomic_load_explicit(&monitor_waiting, memory_order_seq_cst)) futex_wake(&request_word);
}

/* Under TSan (signals_deferred) the registers are taken here, in the handler's own frame and
 * not in claim_and_copy's: the walk then starts at this function, the one frame capture.c
 * drops, and the stack above it is the interrupted code's (through TSan's delivery). Taken in
 * a callee, the callee's frame was dropped instead and this one was told as the app's
 * ('cpu · capture_handler', web_api under TSan). */
static void capture_handler(int sig, siginfo_t *info, void *context) {
  (void)sig;
  atomic_fetch_add_explicit(&handlers_entered, 1, memory_order_acq_rel);
  if (sent_by_us(info)) {
    int saved_errno = errno;
    ucontext_t here; /* glibc's getcontext: a few stores and a sigprocmask, no lock */
    if (signals_deferred) {
      getcontext(&here);
      atomic_store_explicit(&delivered_from, (uintptr_t)__builtin_return_address(0),
                            memory_order_relaxed);
    }
    claim_and_copy(info, signals_deferred ? &here : context, context);
    errno = saved_errno;
  }
  atomic_fetch_add_explicit(&handlers_left, 1, memory_order_acq_rel);
}

int lagscope__capture_delivery_code(uintptr_t *start, uintptr_t *end) {
  uintptr_t from = atomic_load_explicit(&delivered_from, memory_order_relaxed), table;
  return runtime_is_library && from != 0 &&
         lagscope__linux_object_unwind_table(from, &table, start, end) == 0;
}

/* Whether the sanitizer's runtime that defers signals is a shared library of its own: an
 * object apart from ours whose file is named like one. At install, off the handler. */
static int sanitizer_runtime_is_library(void) {
  Dl_info runtime, ours;
  if (__tsan_init == NULL || dladdr((void *)__tsan_init, &runtime) == 0 ||
      dladdr((void *)capture_handler, &ours) == 0 || runtime.dli_fname == NULL)
    return 0;
  const char *slash = strrchr(runtime.dli_fname, '/');
  const char *name = slash != NULL ? slash + 1 : runtime.dli_fname;
  return runtime.dli_fbase != ours.dli_fbase && strstr(name, ".so") != NULL;
}

uint64_t lagscope__capture_interrupted_syscalls(void) {
  return atomic_load_explicit(&interrupted_syscalls, memory_order_relaxed);
}

/* ---- the handler installed ---- */

int lagscope__capture_handler_is_ours(int sig) {
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
  sigfillset(&sa.sa_mask); /* no other handler of the app runs while ours copies */
  /* but one: the hole makes our handler's mask tell itself from an app's that blocks all */
  sigdelset(&sa.sa_mask, LAGSCOPE__CAPTURE_MASK_HOLE);
  signals_deferred = __tsan_init != NULL;
  runtime_is_library = signals_deferred && sanitizer_runtime_is_library();
  static int atfork_registered;
  note_own_pid();
  if (!atfork_registered) atfork_registered = pthread_atfork(NULL, NULL, note_own_pid) == 0;
  return sigaction(sig, &sa, NULL) == 0 ? LAGSCOPE_OK : LAGSCOPE_ESYS;
}

int lagscope__capture_init(uint32_t wanted) {
  if (wanted != 0 && ((int)wanted < SIGRTMIN || (int)wanted > SIGRTMAX)) return LAGSCOPE_EINVAL;
  if (atomic_load(&main_stack_low) == 0) note_main_stack();
  if (capture_signal != 0 && (wanted == 0 || (int)wanted == capture_signal) &&
      lagscope__capture_handler_is_ours(capture_signal))
    return LAGSCOPE_OK; /* installed by an earlier start */
  if (wanted != 0) {
    if (!lagscope__capture_handler_is_ours((int)wanted) && !handler_is_default((int)wanted))
      return LAGSCOPE_ESIGNAL; /* the app uses this signal: never take it over */
    int rc =
        lagscope__capture_handler_is_ours((int)wanted) ? LAGSCOPE_OK : install_handler((int)wanted);
    if (rc == LAGSCOPE_OK) capture_signal = (int)wanted;
    return rc;
  }
  for (int sig = SIGRTMIN + CAPTURE_SIGNAL_OFFSET; sig <= SIGRTMAX; sig++) {
    if (!handler_is_default(sig) && !lagscope__capture_handler_is_ours(sig)) continue;
    int rc = lagscope__capture_handler_is_ours(sig) ? LAGSCOPE_OK : install_handler(sig);
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
    atomic_store_explicit(&monitor_waiting, 1, memory_order_seq_cst);
    syscall(SYS_futex, &request_word, FUTEX_WAIT_BITSET_PRIVATE, from, &abs, NULL,
            FUTEX_BITSET_MATCH_ANY);
    atomic_store_explicit(&monitor_waiting, 0, memory_order_relaxed);
  }
}

/* After the handler claimed the request: it is copying right now; it is short, wait for it.
 * 1 when the snapshot is whole. */
static int finish(uint32_t generation, lagscope__stack *out) {
  uint32_t word = wait_word_change(REQUEST_WORD(generation, CLAIMED),
                                   lagscope__now_ns() + LATE_HANDLER_WAIT_NS);
  if (word == REQUEST_WORD(generation, DONE)) {
    refresh_main_stack();
    return 1;
  }
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

/* Until the deadline, looked at again every LOOK_AGAIN_NS (capture.h). */
enum lagscope__capture_timer_result lagscope__capture_take_by_timer(int32_t tid,
                                                                    uint64_t deadline_ns,
                                                                    lagscope__stack *out) {
  uint32_t generation = begin_request(), requested = REQUEST_WORD(generation, REQUESTED);
  int timer = arm_timer(tid, generation);
  if (timer < 0) {
    abandon(generation);
    out->walk = thread_gone(tid) ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    return LAGSCOPE__CAPTURE_TIMER_FAILED;
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
  enum lagscope__capture_timer_result result = LAGSCOPE__CAPTURE_TIMER_FAILED;
  if (claimed) {
    result =
        finish(generation, out) ? LAGSCOPE__CAPTURE_TIMER_TAKEN : LAGSCOPE__CAPTURE_TIMER_FAILED;
  } else {
    out->walk = rc == LAGSCOPE_ENOENT ? LAGSCOPE__WALK_EXITED : LAGSCOPE__WALK_NO_REPLY;
    if (rc == LAGSCOPE_OK && !state.running) result = LAGSCOPE__CAPTURE_TIMER_BLOCKED;
  }
  disarm_timer(timer);
  return result;
}

/* The forced way's signal, queued to tid with the request's generation. */
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
int lagscope__capture_take_by_signal(int32_t tid, uint64_t timeout_ns, lagscope__stack *out) {
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
