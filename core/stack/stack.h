/*
 * Stacks: a thread's stack captured (the portable half of the port's capture), walked by frame
 * pointers over a copy, and symbolicated.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_STACK_H
#define LAGSCOPE_STACK_H

#include "base/base.h"
#include "port.h"

/* ---- stack walk (core/stack/stack_walk.c): the frame-pointer walk over a copied stack -------------- */
typedef struct lagscope__stack_copy {
  const uint8_t *bytes; /* the copy of [base, base + len) */
  uintptr_t base;       /* the stack pointer it was copied from */
  size_t len;
  int cut;              /* the stack goes on past the copy: a record above it means truncated */
  uintptr_t (*strip)(uintptr_t); /* pointer authentication off a code address; NULL: none */
} lagscope__stack_copy;
typedef struct lagscope__walk_regs {
  uintptr_t pc, lr, fp;
  int has_lr; /* arm64: the link register is a frame candidate */
} lagscope__walk_regs;
/* Fills out->frames (the pc, the link register, each record's return address) and out->walk
 * (complete, truncated: deeper than the copy or than LAGSCOPE__MAX_STACK_FRAMES, bad_frame). A saved
 * fp with bit 60 set (a Swift async frame record) is stripped and followed. F */
void lagscope__stack_walk(const lagscope__stack_copy *c, const lagscope__walk_regs *r,
                          lagscope__stack *out);
uintptr_t lagscope__stack_strip_async(uintptr_t fp); /* F: bit 60 off */
/* A checked read of one word anywhere in the process (Darwin: vm_read_overwrite): 0 and *value,
 * or -1 when the address cannot be read. Must not fault, lock or allocate. */
typedef int (*lagscope__read_word_fn)(uintptr_t address, uintptr_t *value);
/* A Swift task's logical stack, as Swift's backtracer (FramePointerUnwinder.swift) follows it:
 * from out->async_context (set by lagscope__stack_walk: the word below the innermost frame
 * record whose saved fp has bit 60 set), each context's [+8] (the parent's resume function)
 * into out->async_frames, then [+0] (the parent context), until a null, a loop, an unreadable
 * word or LAGSCOPE__MAX_ASYNC_FRAMES. Contexts live on the heap: read with read_word after
 * the thread runs again. strip: pointer authentication off a code address (NULL: none). F */
void lagscope__stack_walk_async(lagscope__stack *out, lagscope__read_word_fn read_word,
                                uintptr_t (*strip)(uintptr_t));

/* ---- capture (core/stack/capture.c): the portable half, over the port's (port.h) ---------------- */
/* Captures tid's stack into *out, waiting at most timeout_ns for a running thread to answer
 * (Linux: at its next tick on a CPU; one that gets none meanwhile is not taken).
 * Sets out->walk, method and run state for every outcome; returns 0 when frames were captured,
 * LAGSCOPE_ESIGNAL when a running thread could not be signalled because the app has put its
 * own handler on the capture signal since (checked before each signal).
 * One capture at a time per process (the callers serialise); no allocation, no lock in the
 * target. L: none the target can hold. */
int lagscope__capture_stack(int32_t tid, lagscope__stack *out, uint64_t timeout_ns);
/* The first half alone, for benchmarks: the thread's registers and stack copied into the
 * snapshot (the raw stack in hand), not unwound, by whichever method the thread's state calls
 * for. 0 when it was copied; *method says how. */
int lagscope__capture_raw(int32_t tid, uint64_t timeout_ns, int *method);

/* ---- a suspended Darwin thread's run state (core/stack/trap_state.c), portable ---------------- */
typedef enum lagscope__isa { LAGSCOPE__ISA_ARM64, LAGSCOPE__ISA_X86_64 } lagscope__isa;
typedef struct lagscope__trap_evidence {
  int isa;                   /* lagscope__isa */
  int th_state_before;       /* THREAD_BASIC_INFO's run_state read before thread_suspend */
  int code_read;             /* code_before_pc holds the 4 bytes just before the saved pc */
  uint8_t code_before_pc[4]; /* arm64: one instruction; x86_64: "syscall" is the last two */
  uint64_t trap_number;      /* the saved number register: arm64 x16, x86_64 rax */
} lagscope__trap_evidence;
/* 1 when the pc is right after a trap instruction with a call number in its register. F */
int lagscope__trap_evidence_at_trap(const lagscope__trap_evidence *e);
/* CPU, SYSCALL (blocked in that trap), BLOCKED (stopped, or a wait outside any trap) or
 * UNKNOWN, from what suspension leaves as it was (not the state read while suspended, which
 * xnu reports as waiting for every suspended thread). F */
lagscope__run_state lagscope__trap_run_state(const lagscope__trap_evidence *e);
/* A thread blocked in libdispatch's sync wait on a workloop-based queue (kevent_id(queue,
 * changelist, 1, ...) from _dispatch_event_loop_wait_for_ownership): the port of the thread
 * that drains the queue, read from the EVFILT_WORKLOOP NOTE_WL_SYNC_WAIT kevent the waiter
 * passed, which lies in its stack copy (copy, its first byte at address base, len bytes);
 * args the trap's. 0 when the arguments are no such wait or the queue had no owner. F */
int32_t lagscope__workloop_wait_owner(const uint8_t *copy, uintptr_t base, size_t len,
                                      const uintptr_t *args);

#define LAGSCOPE__LABEL_MAX 200  /* bytes of a hang's label ("lock · keeper"), with the NUL */

/* ---- symbols (core/stack/symbols.c): addresses to names, over the port's index (port.h) ---------- */
typedef struct lagscope__symbols lagscope__symbols; /* core/stack/symbols.c: a port's index and a lock */
lagscope__symbols *lagscope__symbols_new(void); /* A */
void lagscope__symbols_free(lagscope__symbols *s); /* A */
/* Resolves one address; is_return: a return address (frames[1..]), looked up at address - 1
 * so that a call at a function's end names the caller. Strings stay valid until
 * lagscope__symbols_free. Indexes an object the first time an address falls in it; an address
 * in no known object re-reads the list of loaded objects (dlopen). Returns 0, or ENOENT when
 * the address is in no loaded object (out->module NULL). A, L (its own) */
int lagscope__symbols_resolve(lagscope__symbols *s, uintptr_t address, int is_return,
                              lagscope__stack_frame *out);
size_t lagscope__symbols_memory(const lagscope__symbols *s); /* bytes held by the indexes */
/* Whose code f is (port.h's lagscope__code): lagscope's when its function is lagscope's or it
 * is in own (lagscope's object, unless that is the program); the app's when it is in program
 * (the program's file) or in any object not the platform's (lagscope__platform_object), as a
 * private library in /usr/lib/x86_64-linux-gnu; else the system's. F */
lagscope__code lagscope__code_of(const lagscope__stack_frame *f, const char *program,
                                 const char *own);
/* 1 when module (a loaded object's path) is the platform's: one of the libraries every program
 * shares (the C library, GLib/GTK, Qt, SDL, X11, Wayland, Mesa, ...: the list in
 * core/stack/platform_libraries.c, by file name, wherever loaded), a plugin in one of their
 * folders, the vDSO, or in a folder only the OS writes (lagscope__os_folder). 0 for anything a
 * program brought. F */
int lagscope__platform_object(const char *module);

#endif /* LAGSCOPE_STACK_H */
