/* The Linux port's own internals, shared by its files (and its tests); the port contract the
 * portable core sees is in ../internal.h. */
#ifndef LAGSCOPE_LINUX_H
#define LAGSCOPE_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>

/* ---- process.c: small reads ---- */

/* Reads a small file (/proc) whole into buf, up to size - 1 bytes, NUL-terminated. The
 * length, or -errno. No allocation. */
ssize_t lagscope__linux_read_small_file(const char *path, char *buf, size_t size);
/* folder.c: calls visit with each name in the folder at path ("." and ".." too) until it
 * returns 0; dir_fd is the listing's own descriptor (one to skip in /proc/self/fd). As
 * lagscope__folder_each_name: 0, or -errno when the folder cannot be read. No allocation. */
int lagscope__linux_each_name(const char *path, int (*visit)(const char *name, int dir_fd,
                                                          void *ctx),
                              void *ctx);
/* A checked read of this process's own memory (process_vm_readv): an unmapped page makes it
 * fail, never fault. 0 when all size bytes were read, else -1. No allocation; signal-safe. */
int lagscope__linux_read_own(uintptr_t address, void *out, size_t size);

/* ---- thread_state.c: what /proc/self/task/TID/syscall says ---- */

typedef struct lagscope__linux_thread_state {
  int running;        /* 1: on the CPU or runnable ("running"): only a signal can take it */
  long nr;            /* the blocking syscall's number; -1: off the CPU but in no syscall */
  uintptr_t args[6];  /* its raw arguments, when nr >= 0 */
  uintptr_t sp, pc;   /* the user stack pointer and pc, when not running */
} lagscope__linux_thread_state;

/* A call on a path (open, openat, stat, ...): which argument is the path (-1: none), and in
 * *dirfd_arg which is the folder a relative one is in (-1: the working folder). F */
int lagscope__linux_syscall_path_arg(int32_t nr, int *dirfd_arg);

/* Parses the file's one line. 0, or -1 when it is not in the kernel's format. F */
int lagscope__linux_parse_syscall(const char *text, lagscope__linux_thread_state *out);
/* Reads tid's state. 0; LAGSCOPE_ENOENT when the thread is gone; LAGSCOPE_ESYS when the file
 * cannot be read or parsed. No allocation, no lock. */
int lagscope__linux_read_thread_state(int32_t tid, lagscope__linux_thread_state *out);
/* How many times tid has been given a CPU (the third field of /proc/self/task/TID/schedstat):
 * unchanged between two reads, the thread did not run in between. 0; LAGSCOPE_ENOENT when
 * the thread is gone; LAGSCOPE_ESYS when the kernel keeps no such count. */
int lagscope__linux_read_run_count(int32_t tid, uint64_t *count);
/* The signals tid blocks now (the SigBlk mask of /proc/self/task/TID/status; bit n-1 for signal
 * n): 0, or -1 when it cannot be read (the thread gone, a kernel without the line). No
 * allocation. */
int lagscope__linux_signal_mask(int32_t tid, uint64_t *mask);
/* The mask in a status file's text: 0 with *mask, or -1 when it has no SigBlk line. F */
int lagscope__linux_parse_sigblk(const char *text, uint64_t *mask);
/* tid's CPU-time clock, for clock_gettime and timer_create: what glibc's
 * pthread_getcpuclockid makes from a tid. F */
clockid_t lagscope__linux_thread_cpu_clock(int32_t tid);
/* 1 when a and b describe the same blocked moment (same call, arguments, sp and pc). F */
int lagscope__linux_same_blocked_state(const lagscope__linux_thread_state *a,
                                       const lagscope__linux_thread_state *b);

/* ---- stack_scan.c: return addresses found without unwind info ---- */

/* 1 when the instruction that ends just before address is a call, read from code (the
 * len_before bytes before address, code[len_before - 1] the last one): x86_64 `call rel32` and
 * `call r/m64` in every encoding; aarch64 `bl`, `blr` and their pointer-authenticated forms. F */
int lagscope__linux_follows_call(const uint8_t *code, size_t len_before);
/* The bytes lagscope__linux_follows_call looks at, at most. */
#define LAGSCOPE__CALL_BYTES_MAX 8
/* A function that keeps a frame pointer sets it in its prologue; code holds the function's
 * first len bytes. x86_64: `[endbr64] push %rbp; mov %rsp,%rbp; [push %rbx/%r12..%r15 and
 * register moves]...; [sub $N,%rsp]` gives the bytes from the stack pointer in its body (at its calls) up to the
 * frame pointer: rbp = sp + the result. -1 when the prologue is of another form (and always on
 * aarch64, whose frame records the scan finds). F */
long lagscope__linux_frame_pointer_offset(const uint8_t *code, size_t len);
#define LAGSCOPE__PROLOGUE_BYTES 24
/* When the call that ends just before return_address is a direct one (x86_64 `call rel32`,
 * aarch64 `bl`), 1 and its target in *target. F */
int lagscope__linux_direct_call_target(const uint8_t *code, size_t len_before,
                                       uintptr_t return_address, uintptr_t *target);
/* When the code at address (len bytes of it in code) is a PLT stub's jump through a GOT slot
 * (x86_64 `[endbr64] [bnd] jmp *disp(%rip)`), 1 and the slot's address in *slot. F */
int lagscope__linux_plt_slot(const uint8_t *code, size_t len, uintptr_t address,
                             uintptr_t *slot);

/* ---- cfi*.c: one step of a stack walk with DWARF call frame information ---- */

/* Registers in DWARF's numbering for the architecture, the pc among them: x86_64 rax..r15 (0-15)
 * and the return address column, rip (16); aarch64 x0..x30, sp (31), pc (32). */
#if defined(__x86_64__)
#define LAGSCOPE__CFI_REGISTERS 17
#define LAGSCOPE__CFI_PC 16
#define LAGSCOPE__CFI_SP 7
#define LAGSCOPE__CFI_FP 6
#elif defined(__aarch64__)
#define LAGSCOPE__CFI_REGISTERS 33
#define LAGSCOPE__CFI_PC 32
#define LAGSCOPE__CFI_SP 31
#define LAGSCOPE__CFI_FP 29
#endif

/* A ucontext's registers (a signal's, getcontext's) in that numbering. A copy: signal-safe. F */
void lagscope__cfi_registers_from_ucontext(const ucontext_t *uc,
                                           uintptr_t registers[LAGSCOPE__CFI_REGISTERS]);

/* A frame's registers; bit n of known: registers[n] holds a value. */
typedef struct lagscope__cfi_frame {
  uintptr_t registers[LAGSCOPE__CFI_REGISTERS];
  uint64_t known;
} lagscope__cfi_frame;

/* Where every byte comes from: 0 when [address, address + bytes) was copied into out, else -1
 * (never a fault). */
typedef struct lagscope__cfi_memory {
  int (*read)(void *context, uintptr_t address, void *out, size_t bytes);
  void *context;
} lagscope__cfi_memory;

/* A function's unwind info: an FDE with what the step needs of its CIE. */
typedef struct lagscope__cfi_fde {
  uintptr_t start, end; /* the code it covers */
  int signal_frame;     /* a signal's return trampoline (augmentation S): the next pc is exact */
  uintptr_t instructions, instructions_end, cie_instructions, cie_instructions_end;
  uint64_t code_align;
  int64_t data_align;
  uint32_t return_address; /* its column */
  uint8_t encoding;        /* of the FDE's addresses */
} lagscope__cfi_fde;

enum lagscope__cfi_result {
  LAGSCOPE__CFI_STEPPED, /* the frame is now its caller */
  LAGSCOPE__CFI_END,     /* the outermost frame: the rules say there is no caller */
  LAGSCOPE__CFI_FAILED   /* a byte or a register that was needed could not be read */
};

/* The FDE covering pc, from the .eh_frame_hdr at eh_frame_hdr (its sorted table). 0, or -1
 * when there is none or it cannot be read. F */
int lagscope__cfi_find(uintptr_t eh_frame_hdr, uintptr_t pc, const lagscope__cfi_memory *m,
                       lagscope__cfi_fde *fde);
/* frame (its function's FDE: fde) becomes its caller. pc: where to look in the FDE's table,
 * the frame's pc, less 1 when it is a return address (the call may be the function's last
 * instruction). A register the rules cannot recover is unknown in the caller. F */
enum lagscope__cfi_result lagscope__cfi_step(lagscope__cfi_frame *frame,
                                             const lagscope__cfi_fde *fde, uintptr_t pc,
                                             const lagscope__cfi_memory *m);
/* Whether pc is the kernel's signal return (aarch64: the vDSO's __kernel_rt_sigreturn, whose CFI
 * gives back x29 and x30 only, not the interrupted pc; x86_64: never, glibc's __restore_rt has
 * whole CFI). F */
int lagscope__cfi_is_signal_return(uintptr_t pc, const lagscope__cfi_memory *m);
/* frame, at the kernel's signal return, becomes the interrupted frame: every register from the
 * signal frame's ucontext. F */
enum lagscope__cfi_result lagscope__cfi_step_signal_return(lagscope__cfi_frame *frame,
                                                           const lagscope__cfi_memory *m);
/* Without unwind info: through the frame record the frame pointer points at. END when the
 * frame pointer is 0 (the outermost frame clears it). F */
enum lagscope__cfi_result lagscope__cfi_step_frame_pointer(lagscope__cfi_frame *frame,
                                                           const lagscope__cfi_memory *m);

/* ---- object_bytes.c: loaded objects' bytes, from their files (monitor thread only) ---- */

/* Reads the loader's list again when it changed (dlopen, dlclose) or was never read. */
void lagscope__linux_objects_refresh(void);
/* Closes the files, frees the page cache (256 KiB) and forgets the list. */
void lagscope__linux_objects_release(void);
/* 1 when [address, address + bytes) lies in one readable segment of an object of the list:
 * where it starts in *start, whether it is code in *executable. F */
int lagscope__linux_object_segment(uintptr_t address, size_t bytes, uintptr_t *start,
                                   int *executable);
/* Copies [address, address + bytes) of such a segment: a read-only segment's from the file
 * (its page cache), anything else in place. 0, or -1 when it is in no such segment. Allocates
 * the cache once. */
int lagscope__linux_object_read(uintptr_t address, void *out, size_t bytes);
/* The .eh_frame_hdr of the object whose segment holds ip, and that segment's range. 0, or -1
 * when ip is in no object or its object has none. F */
int lagscope__linux_object_unwind_table(uintptr_t ip, uintptr_t *eh_frame_hdr,
                                        uintptr_t *segment_start, uintptr_t *segment_end);

/* ---- platform.c: the display's rate, from whoever measured it ---- */

/* The display's refresh rate as measured outside the core: the X11 overlay's thread reads the
 * X server's RandR mode of the CRTC that shows the program's window (hud/linux/x11_refresh.c).
 * lagscope__platform_refresh_hz returns it from then on, and the monitor judges frames against
 * it instead of config.refresh_hz. 0, or a rate outside refresh_hz's range (1..1000), is "not
 * measured": frames stay judged against the last rate measured, or config.refresh_hz when none
 * was. Reset to 0 by lagscope_stop. Any thread; one atomic store. F */
void lagscope__linux_set_refresh_hz(uint32_t hz);

/* ---- capture_signal.c, capture.c ---- */

/* How many times a capture's signal cut a system call short: none since it is raised by the
 * thread's CPU clock on its way back to user space; the forced way below does. F */
uint64_t lagscope__capture_interrupted_syscalls(void);
/* Benchmarks and walk tests only: 1 sends every thread the signal straight away, blocked or
 * not (the way before blocked threads were read without one, and before the CPU clock raised
 * it), for a baseline in the same run, or many captures quickly. Not thread-safe. F */
void lagscope__capture_force_signal(int on);
/* Benchmarks only: 1 copies the main thread's stack in the handler with process_vm_readv too,
 * as before it was read in place (issue 31, item 4), for a baseline in the same run. F */
void lagscope__capture_force_checked_copy(int on);

/* Tests only: the main thread's stack mapping as the handler knows it, [*low, *high), which it
 * copies in place (0, 0: not known). F */
void lagscope__capture_main_stack(uintptr_t *low, uintptr_t *high);

#endif
