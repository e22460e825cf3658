/*
 * A snapshot walked into return addresses, on the monitor thread: DWARF CFI (.eh_frame,
 * cfi.c) over reads of the stack copy or of a loaded object's file (object_bytes.c); for a
 * blocked thread, whose registers but sp and pc are unknown, a function's prologue gives its
 * frame pointer, and failing that a scan of the stack finds the next return address (in code,
 * just after a call), each frame checked. Why this way, in capture.c; the shared names in
 * capture.h.
 */
#define _GNU_SOURCE
#include "capture.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
  lagscope__capture_snapshot *s = context;
  if (within(address, bytes, s->stack_base, s->stack_base + s->stack_len)) {
    memcpy(out, s->stack + (address - s->stack_base), bytes);
    if (address + bytes > s->read_high) s->read_high = address + bytes;
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
  const uint8_t *stack = lagscope__capture_the_snapshot.stack;
  uintptr_t start = ((uintptr_t)stack + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)stack + sizeof(lagscope__capture_the_snapshot.stack)) & ~(page - 1);
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
static int is_signal_trampoline(const lagscope__capture_snapshot *s, uintptr_t ip) {
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

static int stack_word(const lagscope__capture_snapshot *s, uintptr_t address,
                      uintptr_t *value) {
  if (!within(address, sizeof(*value), s->stack_base, s->stack_base + s->stack_len)) return 0;
  memcpy(value, s->stack + (address - s->stack_base), sizeof(*value));
  if (address + sizeof(*value) > s->read_high)
    ((lagscope__capture_snapshot *)s)->read_high = address + sizeof(*value);
  return 1;
}

enum scan_result { SCAN_FOUND, SCAN_NOTHING, SCAN_END_OF_COPY };

/* From `from` up, the first word of the copy that is the return address of a direct call into
 * the frame's function (the frame at callee_ip, callee_start); failing that within the window,
 * the first return address at all (an indirect call, a tail call). Where it lies in *at. */
static enum scan_result scan_for_return_address(const lagscope__capture_snapshot *s,
                                                uintptr_t from, uintptr_t callee_ip,
                                                uintptr_t callee_start, uintptr_t *at) {
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
static uintptr_t saved_frame_pointer(const lagscope__capture_snapshot *s, uintptr_t at) {
  uintptr_t fp;
  if (at < sizeof(fp) || !stack_word(s, at - sizeof(fp), &fp)) return 0;
  if (fp <= at || fp - at > FRAME_POINTER_REACH || fp % sizeof(fp) != 0) return 0;
  return fp;
}

/* A function's frame pointer from its prologue: where the frame record of the frame at
 * (start, sp) lies, when the prologue says and a return address is there; else 0. */
static uintptr_t frame_pointer_from_prologue(uintptr_t start, uintptr_t sp,
                                             const lagscope__capture_snapshot *s) {
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

/* A walk under way: the frame being stepped, the last frame pushed, and how the next CFI run
 * starts (first_pushed: its first frame is the last one pushed, again; run_from_scan: a scan
 * found its first frame; exact: the pc is where the frame is, not a return address). */
typedef struct walk_state {
  lagscope__capture_snapshot *s;
  lagscope__stack *out;
  lagscope__cfi_memory memory;
  lagscope__cfi_frame frame;
  frame_at last, prologue_tried;
  uintptr_t scan_floor; /* a scan starts no lower than the last one's find */
  int registers_known, first_pushed, run_from_scan, exact;
} walk_state;

/* One CFI run from w->frame, each frame pushed into out until CFI cannot go on: 1 when the
 * walk is over (out->walk says how), 0 when it stopped and, for a blocked thread, a prologue
 * or a scan may go on from w->last. */
static int cfi_run(walk_state *w) {
  lagscope__stack *out = w->out;
  int first = 1;
  for (;;) {
    uintptr_t ip = w->frame.registers[LAGSCOPE__CFI_PC];
    if (!(w->frame.known & KNOWN(LAGSCOPE__CFI_PC)) || ip == 0) break;
    if (!first && !w->registers_known && !w->exact && !is_return_address(ip) &&
        !is_signal_trampoline(w->s, ip))
      break;
    if (!(first && w->first_pushed)) {
      if (out->depth == LAGSCOPE__MAX_STACK_FRAMES) {
        out->walk = LAGSCOPE__WALK_TRUNCATED;
        return 1;
      }
      out->frames[out->depth++] = ip;
      if (first && w->run_from_scan) out->frames_scanned++;
    }
    first = 0;
    w->last.ip = ip;
    w->last.exact = w->exact;
    if (w->frame.known & KNOWN(LAGSCOPE__CFI_SP))
      w->last.sp = w->frame.registers[LAGSCOPE__CFI_SP];
    /* A return address may follow a call that ends its function: look up the call. */
    uintptr_t lookup = w->exact ? ip : ip - 1;
    lagscope__cfi_fde fde;
    int have_fde = find_fde(lookup, &w->memory, &fde) == 0;
    w->last.start = have_fde ? fde.start : 0;
    /* aarch64's signal return: its CFI would skip the interrupted pc; the ucontext has it. */
    int signal_return = (!have_fde || fde.signal_frame) &&
                        lagscope__cfi_is_signal_return(ip, &w->memory);
    /* Without unwind info, CFI's fallback is the frame-pointer chain: for a blocked thread,
     * whose frame pointer is a guess, look further instead. */
    if (!w->registers_known && !have_fde && !signal_return) break;
    enum lagscope__cfi_result step =
        signal_return ? lagscope__cfi_step_signal_return(&w->frame, &w->memory)
        : have_fde    ? lagscope__cfi_step(&w->frame, &fde, lookup, &w->memory)
                      : lagscope__cfi_step_frame_pointer(&w->frame, &w->memory);
    if (step == LAGSCOPE__CFI_END) {
      out->walk = LAGSCOPE__WALK_COMPLETE;
      return 1;
    }
    if (step == LAGSCOPE__CFI_FAILED) break;
    /* After a signal's trampoline, the pc is where the signal came: not after a call. */
    w->exact = signal_return || (have_fde && fde.signal_frame);
  }
  return 0;
}

/* For a blocked thread, after a run stopped at w->last: where CFI needs an unknown register
 * (the frame pointer, in code that keeps one), the same frame again with its frame pointer
 * from its function's prologue (tried once a frame); failing that, the next return address a
 * scan finds. 1 when another run starts there, 0 when the walk ends. */
static int look_further(walk_state *w) {
  const lagscope__capture_snapshot *s = w->s;
  w->first_pushed = w->run_from_scan = 0;
  if (w->prologue_tried.ip != w->last.ip || w->prologue_tried.sp != w->last.sp) {
    w->prologue_tried = w->last;
    uintptr_t fp = frame_pointer_from_prologue(w->last.start, w->last.sp, s);
    if (fp != 0) { /* again from the same frame, its frame pointer known */
      set_partial_registers(&w->frame, w->last.ip, w->last.sp, fp);
      w->exact = w->last.exact;
      w->first_pushed = 1;
      return 1;
    }
  }
  uintptr_t at = 0, from = w->last.sp > w->scan_floor ? w->last.sp : w->scan_floor;
  enum scan_result found = scan_for_return_address(s, from, w->last.ip, w->last.start, &at);
  if (found == SCAN_END_OF_COPY) w->last.sp = s->stack_base + s->stack_len;
  if (found != SCAN_FOUND) return 0;
  uintptr_t return_address = 0;
  stack_word(s, at, &return_address);
  set_partial_registers(&w->frame, return_address, at + sizeof(at), saved_frame_pointer(s, at));
  w->exact = 0;
  w->scan_floor = at + sizeof(at);
  w->run_from_scan = 1;
  return 1;
}

/* CFI runs; for a blocked thread, between them, a prologue or a scan (capture.h). */
void lagscope__capture_unwind(lagscope__capture_snapshot *s, lagscope__stack *out,
                              int registers_known) {
  out->depth = 0;
  out->frames_scanned = 0;
  out->walk = LAGSCOPE__WALK_BAD_FRAME;
  s->read_high = 0;
  lagscope__linux_objects_refresh(); /* the loader's list, when it changed or was let go */
  walk_state w = {.s = s, .out = out, .memory = {read_memory, s},
                  .registers_known = registers_known, .exact = 1};
  memcpy(w.frame.registers, s->registers, sizeof(w.frame.registers));
  w.frame.known = ~(uint64_t)0;
  if (!registers_known)
    set_partial_registers(&w.frame, s->registers[LAGSCOPE__CFI_PC],
                          s->registers[LAGSCOPE__CFI_SP], 0);
  w.last = (frame_at){0, s->registers[LAGSCOPE__CFI_SP], 0, 1};
  for (;;) { /* one CFI run; then, for a blocked thread, a prologue or a scan, and another run */
    if (cfi_run(&w)) return;
    if (registers_known || !look_further(&w)) break;
  }
  /* The walk left the copied stack: the stack is deeper than the copy, not corrupt. */
  if (s->stack_len == sizeof(s->stack) && w.last.sp >= s->stack_base + s->stack_len - 64)
    out->walk = LAGSCOPE__WALK_TRUNCATED;
}
