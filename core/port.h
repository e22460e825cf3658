/*
 * The port contract: everything an OS family implements, in its own folder (core/linux/,
 * core/darwin/; one file per concern), and all the portable core may ask of the OS. As libuv's
 * uv-common.h and its unix/ and win/ folders: the portable half of a concern (core/stack/capture.c,
 * core/stack/symbols.c, core/base/config.c's names) calls the port's half declared here. Included by
 * internal.h; it needs only lagscope.h and internal.h's memory section.
 */
#ifndef LAGSCOPE_PORT_H
#define LAGSCOPE_PORT_H

#include "lagscope.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* ---- clock (core/linux/clock.c) ----------------------------------------------------------- */
uint64_t lagscope__now_ns(void);     /* F: monotonic, stops nowhere but system sleep */
int64_t lagscope__wall_ms(void);     /* F: Unix time in ms */

/* ---- randomness (core/linux/random.c) ---------------------------------------------------- */
/* Fills out from the OS's random source (Linux: getrandom; Darwin: arc4random_buf). 0, or
 * LAGSCOPE_ESYS. F */
int lagscope__random_bytes(void *out, size_t size);

/* ---- threads and waiting (core/linux/thread.c) --------------------------------------- */
typedef struct lagscope__wakeup lagscope__wakeup; /* a counting semaphore */
lagscope__wakeup *lagscope__wakeup_new(void);     /* A */
void lagscope__wakeup_free(lagscope__wakeup *w);  /* A */
void lagscope__wakeup_post(lagscope__wakeup *w);  /* F: one syscall at most */
/* Waits until posted or until the monotonic deadline; 1 if posted, 0 on timeout. F */
int lagscope__wakeup_wait_until(lagscope__wakeup *w, uint64_t deadline_ns);
/* Names the calling thread (≤ 15 bytes; the pthread call differs by OS). F */
void lagscope__thread_name_self(const char *name);
/* Gives back the calling thread's stack pages below its current frame, which a deep call
 * (a stall's unwinding and symbolication) left resident for the thread's life; later calls
 * fault in zeroed pages as they need them. Linux: MADV_DONTNEED, the bounds from
 * pthread_getattr_np (which mallocs its CPU set: only on a thread that already has an arena,
 * the monitor's); Darwin: nothing. A */
void lagscope__thread_release_stack(void);
/* The calling thread, and every thread it starts from then on, get a descriptor table of
 * their own, apart from the app's: the app's close or reuse of a number never reaches what
 * they hold, nor theirs the app's. The new table holds only keep[0..n) (each at its number;
 * the app's other descriptors are closed in it at once, none held open) and, on 0, 1 and 2,
 * /dev/null (2 stays the app's stderr while it is a terminal or a file, which no reader waits
 * to end, and in a sanitizer build, whose reports go there). LAGSCOPE_OK; LAGSCOPE_ENOTSUP
 * where the OS has no such table (Darwin: the thread goes on sharing the app's); ESYS. F */
int lagscope__thread_private_fds(const int *keep, size_t n);

/* ---- the platform's part of the lifecycle (core/linux/platform.c, core/darwin/platform.c)
 * What Darwin does for the app that a Linux host does itself: the main dispatch queue answers
 * pings, a display link counts frames, the app's background state excuses stalls. Linux's
 * versions do nothing. ---- */
/* Fills in what the platform supplies when the config leaves it out (Darwin: post_main). F */
void lagscope__platform_defaults(lagscope_config *config);
/* From lagscope_start before any of lagscope's threads exists, on its caller's thread (Darwin:
 * registers for dyld's image notices, which takes dyld's lock and may call dlsym: never on
 * the monitor, which may stop a thread holding that lock). Idempotent. A, L: dyld's */
void lagscope__platform_prepare(void);
/* From lagscope_start, after the threads started (Darwin: schedules the display link and the
 * background observers on the main thread, never waited for). 0, or LAGSCOPE_EALREADY
 * (Darwin: not stopped since the last start). A */
int lagscope__platform_start(const lagscope_config *config);
void lagscope__platform_stop(void); /* idempotent; never waits for the main thread */
/* 1 while the app is in the background (iOS), when a stalled main thread is no hang. F */
int lagscope__platform_in_background(void);
/* The display's rate as measured (Darwin's display link, 10 to 120 Hz under ProMotion; Linux:
 * what lagscope__linux_set_refresh_hz was told, the X11 overlay's RandR reading); 0 when not
 * measured, and config.refresh_hz (or the last rate measured) stands. F */
uint32_t lagscope__platform_refresh_hz(void);

/* ---- folders (core/linux/folder.c, core/darwin/folder.c) ---------------------------------- */
/* Calls visit with each name in the folder open at dir_fd, from its start ("." and ".." too),
 * until it returns 0; dir_fd's offset is moved (one user at a time). 0, or -errno when the
 * folder cannot be read: not a lagscope code (those lie below -4095), the caller makes it one
 * (the store: LAGSCOPE_ESYS, saying strerror). Linux: no allocation (opendir's buffer is 32 KiB
 * from malloc, which gives the calling thread a glibc arena of its own, resident in the app
 * from then on). */
int lagscope__folder_each_name(int dir_fd, int (*visit)(const char *name, void *ctx), void *ctx);

/* ---- process sampling (core/linux/process.c) ----------------------------------------- */
#define LAGSCOPE__MAX_THREADS 1024 /* threads the usage reader tracks; more counted, not ranked */

typedef struct lagscope__thread_usage {
  int32_t tid;
  char name[LAGSCOPE_THREAD_NAME_MAX];
  char state;      /* Linux's letter: R running, S sleeping, D disk wait, T stopped, ... */
  uint64_t cpu_ns; /* user + system, since the thread started */
  uint64_t system_id; /* the id lock owners are recorded by: Linux the tid; Darwin the thread
                         id (pthread_threadid_np's), where tid is the thread's port name */
} lagscope__thread_usage;

typedef struct lagscope__usage {
  uint64_t time_ns;
  uint64_t cpu_ns;        /* the process, user + system */
  uint64_t rss_bytes;
  uint64_t pss_bytes;
  uint32_t thread_count;  /* all threads, even past LAGSCOPE__MAX_THREADS */
  uint32_t threads_len;   /* entries in threads */
  lagscope__thread_usage threads[LAGSCOPE__MAX_THREADS];
} lagscope__usage;

/* What lagscope__usage_read reads beyond the process's CPU, RSS and every thread's
 * CPU time. */
#define LAGSCOPE__USAGE_PSS 1u     /* the proportional set size, which costs far more where the
                                    * OS walks every mapping for it (Linux: smaps_rollup; measured
                                    * 2026-11: 0.8 ms with 500 mappings); without, pss_bytes is 0 */
#define LAGSCOPE__USAGE_DETAIL 2u  /* each thread's name and state read afresh (Linux: two files
                                    * a thread); without, a thread's CPU is one system call, its
                                    * name is previous's for the same id (read only for a new
                                    * one) and its state is '\0' */

/* Fills *out from the OS. On failure returns a negative code and writes a sentence to why;
 * fields it could read are still filled. A thread that exits mid-read is skipped. what:
 * LAGSCOPE__SAMPLE_* bits; previous (may be NULL) lends names to a sample without DETAIL. No
 * allocation (the sample is the caller's), no lock. */
int lagscope__usage_read(lagscope__usage *out,
                                  const lagscope__usage *previous, unsigned what,
                                  char *why, size_t why_size);
/* How long the calling thread has waited, runnable, for a CPU since it started (Linux:
 * /proc/thread-self/schedstat). LAGSCOPE_ENOENT where the OS does not say. No allocation. */
int lagscope__thread_queued_ns(uint64_t *out);
/* The CPU time thread tid (an id as lagscope__thread_id gives) has run so far (Linux: its CPU
 * clock, one clock_gettime; Darwin: thread_info THREAD_BASIC_INFO, user + system). A stop
 * (SIGSTOP, a debugger) holds it still. LAGSCOPE_ENOENT when the thread is gone or the OS does
 * not say. No allocation, no lock. */
int lagscope__thread_cpu_ns(int32_t tid, uint64_t *out);
/* The program's short name as the OS has it (Linux: /proc/self/comm; Darwin: getprogname),
 * "" when unknown. F */
void lagscope__process_raw_name(char *out, size_t size);
int32_t lagscope__process_id(void); /* F */
long lagscope__user_id(void);       /* F */
/* Where this user's state lives by the platform's convention, for the default report folder
 * (Linux: "$XDG_STATE_HOME/lagscope", else "$HOME/.local/state/lagscope"); "" when the
 * platform has none or the environment names none (Darwin: $TMPDIR is per user, and per app
 * in a sandbox). F */
void lagscope__state_root(char *out, size_t size);
/* Tests only: read from this folder instead of /proc/self (NULL: back to /proc/self). */
void lagscope__process_set_root(const char *path);

/* ---- capture (core/linux/capture*.c, core/darwin/capture.c; the portable half: core/stack/capture.c)
 * Takes one thread's stack without disturbing it. Linux: a thread blocked in a system call is
 * read without a signal (its syscall, stack pointer and pc from /proc, its stack from memory);
 * only a thread on the CPU gets the real-time signal, whose handler copies registers and stack
 * into a preallocated buffer, async-signal-safe. Darwin: thread_suspend, copy, resume. Nothing
 * that can take a lock runs while a thread is stopped. */
#define LAGSCOPE__MAX_STACK_FRAMES 128
#define LAGSCOPE__MAX_ASYNC_FRAMES 32 /* a Swift task's logical callers kept (async contexts) */

/* How a stack walk ended, once: XX(NAME, "name in a report"). In order: reached the outermost
 * frame; LAGSCOPE__MAX_STACK_FRAMES reached first; an unreadable or corrupt frame ended it; the thread
 * did not answer in time; the thread is gone; one of lagscope's threads (never stopped); the
 * thread ran on the CPU with the capture signal blocked (its mask: an app that reads signals
 * with signalfd blocks them), so it could not be asked. */
#define LAGSCOPE__WALKS(XX)                                                                    \
  XX(COMPLETE, "complete") XX(TRUNCATED, "truncated") XX(BAD_FRAME, "bad_frame")              \
  XX(NO_REPLY, "no_reply") XX(EXITED, "exited") XX(OWN, "own")                                \
  XX(SIGNAL_BLOCKED, "signal_blocked")

typedef enum lagscope__walk {
#define LAGSCOPE__WALK_ENUM_(name, text) LAGSCOPE__WALK_##name,
  LAGSCOPE__WALKS(LAGSCOPE__WALK_ENUM_)
#undef LAGSCOPE__WALK_ENUM_
  LAGSCOPE__WALK_COUNT
} lagscope__walk;

/* The walk's name in a report (core/base/names.c); "unknown" for none. F */
const char *lagscope__walk_name(int walk);

/* How a stack was taken, XX(NAME, "its name in a report"), from 0:
 *   NONE     not taken (own thread, gone, ...)
 *   SIGNAL   Linux: the thread ran our handler (it was on the CPU)
 *   BLOCKED  Linux: read while blocked in the kernel, no signal sent
 *   SUSPEND  Darwin: thread_suspend, copy, thread_resume */
#define LAGSCOPE__METHODS(XX) \
  XX(NONE, "none") XX(SIGNAL, "signal") XX(BLOCKED, "blocked") XX(SUSPEND, "suspend")

typedef enum lagscope__capture_method {
#define LAGSCOPE__METHOD_ENUM_(name, text) LAGSCOPE__METHOD_##name,
  LAGSCOPE__METHODS(LAGSCOPE__METHOD_ENUM_)
#undef LAGSCOPE__METHOD_ENUM_
  LAGSCOPE__METHOD_COUNT
} lagscope__capture_method;
/* The method's name in a report (core/base/names.c); "unknown" for none. F */
const char *lagscope__method_name(int method);

/* What the thread was doing when its stack was taken. */
typedef enum lagscope__run_state {
  LAGSCOPE__RUN_UNKNOWN = 0,
  LAGSCOPE__RUN_CPU,     /* running or runnable */
  LAGSCOPE__RUN_SYSCALL, /* blocked in a system call: syscall (Linux: its number; Darwin: -1,
                            the call is the innermost frame, a kernel trap) and args */
  LAGSCOPE__RUN_BLOCKED  /* off the CPU but in no system call (stopped, a page fault) */
} lagscope__run_state;

typedef struct lagscope__stack {
  int32_t tid;
  lagscope__walk walk;
  uint8_t method;          /* lagscope__capture_method */
  uint8_t run_state;       /* lagscope__run_state */
  uint16_t frames_scanned; /* frames found by scanning the stack, not by unwind info */
  uint8_t loop_wait;       /* blocked in the event loop's own wait (lagscope__loop_wait_is_own,
                              set when captured): idle, not io */
  int32_t syscall;         /* LAGSCOPE__RUN_SYSCALL: the call's number, -1 when unknown */
  int32_t lock_owner;      /* a futex wait on a locked pthread mutex: the owner's tid as the
                              mutex records it when captured (0: none); Darwin: a dispatch_sync
                              on a workloop-based queue, the port of the thread draining it;
                              not yet checked to be a live thread */
  uint32_t depth;
  uint64_t time_ns;                       /* when captured: the capture's start */
  uint64_t done_ns; /* when the capture returned: the stack is the thread's at some moment
                       between the two (a signal's handler runs when the thread is scheduled) */
  uintptr_t args[6];                      /* LAGSCOPE__RUN_SYSCALL: its raw arguments */
  /* A Swift task's logical callers where a frame is async (Darwin; core/stack/stack_walk.c):
   * the context of the innermost async frame as the walk found it (0: none), then each
   * parent's resume function along the async context chain, innermost first. */
  uintptr_t async_context;
  uint32_t async_depth;
  uintptr_t async_frames[LAGSCOPE__MAX_ASYNC_FRAMES];
  uintptr_t frames[LAGSCOPE__MAX_STACK_FRAMES]; /* [0] the PC, then return addresses, innermost first */
} lagscope__stack;

/* ---- what a blocked thread waits for (core/linux/thread_state.c, wait_target.c, loop_wait.c) ---- */
/* A system call's name ("nanosleep", "futex", ...) from its number; NULL when the port does
 * not know it (Darwin: the innermost frame names it). F */
const char *lagscope__syscall_name(int32_t nr);

#define LAGSCOPE__TARGET_MAX 160 /* bytes of a wait target's description */

/* What a blocking system call waits for, by its number. */
typedef enum lagscope__syscall_class {
  LAGSCOPE__SYSCALL_OTHER = 0,
  LAGSCOPE__SYSCALL_SLEEP, /* nanosleep, clock_nanosleep */
  LAGSCOPE__SYSCALL_IO,    /* read, write, recv, send, connect, accept, open, fsync, ... */
  LAGSCOPE__SYSCALL_POLL,  /* poll, ppoll, select, pselect, epoll_wait: io on the fds waited on */
  LAGSCOPE__SYSCALL_FUTEX, /* a lock or a wait: the innermost functions say which */
  LAGSCOPE__SYSCALL_WAIT   /* wait4, waitid, sigtimedwait, pause, ... */
} lagscope__syscall_class;
/* The call's class, and the argument that is its file descriptor (-1: none). F */
lagscope__syscall_class lagscope__syscall_classify(int32_t nr, int *fd_arg);
/* The argument that names what the call waits on: its file descriptor, else its path (openat's
 * path, not its folder's fd, which is AT_FDCWD for every relative open); -1 for neither or a
 * call the port does not know (Darwin). Tells two waits of one call apart. F */
int lagscope__syscall_target_arg(int32_t nr);
/* The event loop's own wait (Linux: core/linux/loop_wait.c; Darwin: nothing to learn, its run
 * loop is known by name). Learnt from the loop: what the main thread waits on as a ping is
 * posted, kept when the ping is answered at once; an fd in two such waits is the loop's own.
 * Monitor thread only. No allocation, no lock. */
void lagscope__loop_wait_reset(void);               /* forget: a new start */
/* before a ping: what tid waits on now; 1 when it waits on fds, 0 when not now (running,
 * another call), -1 when this OS cannot tell (no learning, no ping for it) */
int lagscope__loop_wait_note(int32_t tid);
void lagscope__loop_wait_confirm(int answered_at_once); /* that ping's fate */
int lagscope__loop_wait_known(void);                /* 1 once some fd is known as the loop's */
/* 1 when the stack is blocked in a poll, select or epoll_wait on nothing but the loop's own
 * fds: the loop waits and does not run lagscope's ping (idle). Call when captured. */
int lagscope__loop_wait_is_own(const lagscope__stack *stack);

/* What a blocked call waits on, as a person reads it: an fd's path, "pipe:[8812]", a socket
 * with its peer ("tcp 127.0.0.1:41234 -> 127.0.0.1:5432"), the fds a poll or epoll waits on.
 * Writes "" when nothing can be said. Reads /proc (Linux). A (none kept), no lock. */
void lagscope__describe_wait_target(const lagscope__stack *stack, char *out, size_t size);

/* The bytes each capture copies of a stopped thread's stack (config.stack_copy_kib), set by
 * lagscope_start before the monitor starts (Darwin); Linux walks the live stack and ignores
 * it. A */
void lagscope__capture_set_copy_bytes(size_t bytes);
/* Prepares capture. Linux: installs the handler on `wanted` (0: the first real-time signal
 * from SIGRTMIN+3 that has no handler). LAGSCOPE_EINVAL when wanted is no real-time signal,
 * LAGSCOPE_ESIGNAL when it is the app's (or none is free): threads on the CPU are then not
 * captured, blocked ones still are. A */
int lagscope__capture_init(uint32_t wanted);
/* The signal in use, 0 when none. F */
int lagscope__capture_signal(void);
int32_t lagscope__main_thread_id(void); /* F: the process's main thread */
/* The port's half, after core/stack/capture.c reset *out and refused lagscope's threads and the
 * caller: takes the stack, with the same results as lagscope__capture_stack. */
int lagscope__capture_take(int32_t tid, lagscope__stack *out, uint64_t timeout_ns);
/* Lets go of what the unwinder keeps between captures, made again at the next one (Linux: the
 * loaded objects' page cache and open files, and the pages of the snapshot's stack copy;
 * Darwin: nothing). Only where captures are made (the monitor's thread). A */
void lagscope__capture_release_unwinder(void);
/* lagscope__capture_raw's port half, for a thread already known not to be refused; scratch is
 * a reset record the port may use. */
int lagscope__capture_take_raw(int32_t tid, uint64_t timeout_ns, lagscope__stack *scratch,
                               int *method);

/* ---- symbols (core/linux/symbols.c: ELF and DWARF; core/darwin/symbols.c: Mach-O) ----------
 * Addresses to names, off the captured thread. */
#define LAGSCOPE__FRAME_INLINED 4 /* inlined functions kept per frame, innermost first */
typedef struct lagscope__stack_frame {
  uintptr_t address;         /* as captured */
  const char *function;      /* demangled, NULL when unknown (never invented) */
  uintptr_t function_offset; /* address - the function's start, when function is known */
  const char *module;        /* path of the loaded object; NULL when in none */
  const char *build_id;      /* lowercase hex; "" when the object has none */
  uintptr_t load_address;    /* the object's load bias */
  uintptr_t module_offset;   /* address - load_address: the file address, for offline tools */
  const char *file;          /* source file from DWARF; NULL when unknown */
  uint32_t line;             /* 0 when unknown */
  uint8_t code;              /* lagscope__code: whose code it is (core/stack/symbols.c) */
  /* From DWARF, for a signature that survives the optimiser (core/report/signature.c): the
   * functions inlined at the address, innermost first (NULL past the last), and the function
   * this frame called that is not the frame above it (a tail call removed that frame). */
  const char *inlined[LAGSCOPE__FRAME_INLINED];
  const char *tail_called;
} lagscope__stack_frame;

/* Whose code a frame is, by one rule for every place a hang names "your code" (the label, the
 * summary, the hang list, the HUD, lagscope-run): the app's (the program and the libraries it
 * ships), the system's (the OS's libraries, the vDSO, memory in no object), or lagscope's own
 * (its library, the preload and its hooks, its functions linked into the program). */
typedef enum lagscope__code {
  LAGSCOPE__CODE_SYSTEM = 0,
  LAGSCOPE__CODE_APP,
  LAGSCOPE__CODE_LAGSCOPE
} lagscope__code;

/* The port's half (core/linux/symbols.c: ELF and DWARF; core/darwin/symbols.c: dyld's images
 * and Mach-O), called under lagscope__symbols' lock. */
typedef struct lagscope__symbol_index lagscope__symbol_index;
lagscope__symbol_index *lagscope__symbol_index_new(void); /* A */
void lagscope__symbol_index_free(lagscope__symbol_index *index); /* A */
/* Fills *out (cleared, with address and build_id "") for address, looked up at lookup (address
 * - 1 for a return address). As lagscope__symbols_resolve. A */
int lagscope__symbol_index_resolve(lagscope__symbol_index *index, uintptr_t address,
                                   uintptr_t lookup, lagscope__stack_frame *out);
size_t lagscope__symbol_index_memory(const lagscope__symbol_index *index); /* F */
/* The program's file (Linux: the main object's path as its frames name it; Darwin: the
 * executable's); NULL until known. Valid while the index lives. F */
const char *lagscope__symbol_index_program(lagscope__symbol_index *index);
/* The file of the object address is in, as its frames name it, without indexing the object;
 * NULL when in none. Valid while the index lives. F */
const char *lagscope__symbol_index_module(lagscope__symbol_index *index, uintptr_t address);
/* 1 when module's path is in a folder that only the OS installs into, so that every object
 * there is the platform's (Darwin: /System/ and /usr/lib/, sealed by System Integrity
 * Protection). Linux: none, since distributions install programs' private libraries in
 * /usr/lib too (core/stack/platform_libraries.c tells the platform's by name there). F */
int lagscope__os_folder(const char *module);

/* ---- a library loaded when first needed (core/linux/lazy_library.c) ---------------------------
 * Where the build loads a library at run time instead of linking it (Linux: the viewer's
 * civetweb and cJSON, web/libraries.c; libdw and liblzma, core/linux/symbols_dwarf.c and
 * symbols_minidebug.c), so that an app maps none of its pages until lagscope needs it: opened
 * by its soname (RTLD_NOW | RTLD_LOCAL: its names never stand in for the app's, nor the app's
 * for its), every function of a list looked up in it, and kept for the life of the process
 * (what was looked up may be in use anywhere). Apple builds link what they use and call none
 * of this: a port implements it only where its build sets a library's soname.
 *
 * The user lists the functions as an X-macro, XX(name) each, with their declarations (the
 * library's header) in scope:
 *   #define LIBDW_CALLS(XX) XX(dwarf_begin_elf) XX(dwarf_end)
 *   static LAGSCOPE__LAZY_TABLE(LIBDW_CALLS) libdw;             (libdw.call.dwarf_end(...))
 *   static const char *const libdw_names[] = {LIBDW_CALLS(LAGSCOPE__LAZY_NAME)};
 *   static lagscope__lazy_library libdw_library =
 *       LAGSCOPE__LAZY_LIBRARY("libdw.so.1", libdw_names, libdw.found, 0);
 * The table is a union: the loader fills found, the callers call through call, each entry
 * typed as its function's declaration (a union may be read through another member: C11
 * 6.5.2.3; a function's address from dlsym is a void *, as POSIX has it). */
typedef struct lagscope__lazy_library {
  const char *soname;
  const char *const *names; /* the functions, in the order of found */
  size_t count;
  void **found;             /* count addresses, to be read once loaded */
  int retry;                /* 1: a failed load is tried again at the next call; 0: final */
  pthread_mutex_t loading;  /* held while one thread loads: the others wait for its result */
  _Atomic int state;        /* lazy_library.c's: 0 until tried */
} lagscope__lazy_library;
#define LAGSCOPE__LAZY_LIBRARY(soname, names, found, retry)                                  \
  {(soname), (names), sizeof(names) / sizeof((names)[0]), (found), (retry),                   \
   PTHREAD_MUTEX_INITIALIZER, 0}
#define LAGSCOPE__LAZY_NAME(name) #name,
#define LAGSCOPE__LAZY_ENTRY(name) __typeof__(&name) name;
#define LAGSCOPE__LAZY_ONE(name) +1
#define LAGSCOPE__LAZY_TABLE(calls)                                                           \
  union {                                                                                     \
    void *found[0 calls(LAGSCOPE__LAZY_ONE)];                                                 \
    struct {                                                                                  \
      calls(LAGSCOPE__LAZY_ENTRY)                                                             \
    } call;                                                                                   \
  }
/* Loads lib, once it succeeds for good: LAGSCOPE_OK when every function was found (lib->found
 * filled, and seen filled by the caller); LAGSCOPE_ESYS when the library cannot be opened or
 * lacks one of them, said in why at the try that failed ("<soname> could not be loaded:
 * <dlerror>", "<soname> has no <name>"; why may be NULL), the library closed again. Any thread,
 * but never inside a dl_iterate_phdr callback (dlopen takes the loader's lock, which the
 * callback holds). L: lib's lock, and the dynamic loader's while it loads */
int lagscope__lazy_library_load(lagscope__lazy_library *lib, char *why, size_t why_size);

/* ---- network (core/linux/net.c, core/darwin/net.c): what the viewer needs of the OS ---- */
/* The interface whose address the viewer's URL names (Linux: the default route's; Darwin:
 * en0); "" when none is known. F */
void lagscope__net_preferred_interface(char *out, size_t size);
/* One TCP connection the process accepted, live (not yet shut down by either side). */
typedef struct lagscope__peer_socket {
  int fd;
  unsigned char address[4]; /* the peer's; the viewer listens on IPv4 only */
} lagscope__peer_socket;
/* 1, with its peer, when fd is such a connection accepted on port; else 0. F */
int lagscope__net_peer_socket(int fd, uint16_t port, lagscope__peer_socket *out);
/* Up to max of them among the process's open fds; how many. 0 where the port cannot tell
 * (Darwin: the viewer then has no bound per client address). F */
size_t lagscope__net_peer_sockets(uint16_t port, lagscope__peer_socket *out, size_t max);
/* The kernel holds a connection to the listening socket fd until it sends something, for up to
 * seconds (Linux: TCP_DEFER_ACCEPT; Darwin: nothing). F */
void lagscope__net_defer_accept(int fd, int seconds);
/* The process's listening socket bound to exactly address:port (IPv4, both in network order),
 * or -1 (Linux: through /proc/self/fd; Darwin: every fd below the table's size). F */
int lagscope__net_listening_fd(uint32_t address, uint16_t port);
/* Whether fd is that socket; portable (core/net.c), what both ports ask of each fd. F */
int lagscope__net_is_listening_on(int fd, uint32_t address, uint16_t port);
/* Makes fd number onto a second descriptor of from's socket, close-on-exec from the start where
 * the OS can (Linux: dup3; Darwin: dup2, then the flag); what onto was is closed. 0, or -1 with
 * errno. F */
int lagscope__net_dup_onto(int from, int onto);

#endif /* LAGSCOPE_PORT_H */
