/* cfi*.c, the DWARF CFI step, on its own.
 *
 * self: this program walks its own stack from getcontext, through the .eh_frame its compiler
 * and libc's wrote, and must meet the return addresses its functions saw
 * (__builtin_return_address) in order, then end where the rules say the stack ends; then the
 * same from a signal handler, through the signal frame (x86_64: glibc's __restore_rt and its
 * CFI; aarch64: the kernel's sigreturn and the ucontext). It builds for x86_64 (here) and for
 * aarch64 (tests/builds/cross runs it under qemu-aarch64, with pointer authentication on).
 *
 * rules (x86_64): hand-made .eh_frame records for what compilers write rarely or in places a
 * test cannot stop in: a PLT stub's CFA expression, a signal trampoline's register expressions
 * (augmentation S), remember/restore_state, val_offset, register rules, an undefined return
 * address; and damaged records, which must fail without a read outside them. */
#define _GNU_SOURCE
#include "linux.h"

#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static int failures;
#define EXPECT(cond, ...)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      failures++;                                                                            \
      fprintf(stderr, "%s:%d: EXPECT(%s) failed: ", __FILE__, __LINE__, #cond);              \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fputc('\n', stderr);                                                                   \
    }                                                                                        \
  } while (0)

/* ---- self: our own stack, real tables ---- */

/* Readable memory: a loaded object's segments, or the stack near the walk. Checked first, so
 * that a wrong address fails the read instead of faulting (qemu-user cannot use
 * process_vm_readv on guest addresses). */
typedef struct readable {
  uintptr_t stack_low, stack_high;
} readable;

typedef struct in_segment {
  uintptr_t address;
  size_t bytes;
  int found;
} in_segment;

static int segment_holds(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  in_segment *q = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && q->address >= start &&
        q->address - start <= ph->p_memsz && q->bytes <= ph->p_memsz - (q->address - start))
      q->found = 1;
  }
  return q->found;
}

/* A readable mapping of /proc/self/maps holds [address, address + bytes): qemu-user's signal
 * trampoline is in a page of its own, in no loaded object. */
static int mapped_readable(uintptr_t address, size_t bytes) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof(line), maps) != NULL) {
    unsigned long start, end;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && perms[0] == 'r' &&
        address >= start && address < end && bytes <= end - address)
      found = 1;
  }
  fclose(maps);
  return found;
}

static int read_self(void *context, uintptr_t address, void *out, size_t bytes) {
  const readable *r = context;
  int ok = address >= r->stack_low && address < r->stack_high && bytes <= r->stack_high - address;
  if (!ok) {
    in_segment q = {address, bytes, 0};
    dl_iterate_phdr(segment_holds, &q);
    ok = q.found || mapped_readable(address, bytes);
  }
  if (!ok) return -1;
  memcpy(out, (const void *)address, bytes);
  return 0;
}

typedef struct eh_table {
  uintptr_t pc, hdr;
} eh_table;

static int find_hdr(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  eh_table *t = data;
  uintptr_t hdr = 0;
  int holds = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_GNU_EH_FRAME) hdr = start;
    if (ph->p_type == PT_LOAD && t->pc >= start && t->pc - start < ph->p_memsz) holds = 1;
  }
  if (holds) t->hdr = hdr;
  return holds;
}

#define SELF_FRAMES 32
static uintptr_t expected[3]; /* the return addresses into self_middle, self_outer, main */
static uintptr_t walked[SELF_FRAMES];
static int walked_len, walk_ended;

static void walk_from(const ucontext_t *uc) {
  lagscope__cfi_frame f = {.known = ((uint64_t)1 << LAGSCOPE__CFI_REGISTERS) - 1};
  lagscope__cfi_registers_from_ucontext(uc, f.registers);
  uintptr_t sp = f.registers[LAGSCOPE__CFI_SP];
  readable r = {sp - 256, sp + 256 * 1024};
  lagscope__cfi_memory m = {read_self, &r};
  walked_len = walk_ended = 0;
  for (int exact = 1; walked_len < SELF_FRAMES;) {
    uintptr_t pc = f.registers[LAGSCOPE__CFI_PC];
    walked[walked_len++] = pc;
    uintptr_t lookup = exact ? pc : pc - 1;
    eh_table t = {lookup, 0};
    lagscope__cfi_fde fde;
    dl_iterate_phdr(find_hdr, &t);
    int have_fde = t.hdr != 0 && lagscope__cfi_find(t.hdr, lookup, &m, &fde) == 0;
    /* as capture_walk.c: the kernel's signal return by its code, where its CFI is not enough */
    int signal_return = (!have_fde || fde.signal_frame) && lagscope__cfi_is_signal_return(pc, &m);
    if (!have_fde && !signal_return) {
      printf("  no FDE for %#lx\n", (unsigned long)pc);
      return;
    }
    enum lagscope__cfi_result step = signal_return ? lagscope__cfi_step_signal_return(&f, &m)
                                                   : lagscope__cfi_step(&f, &fde, lookup, &m);
    if (step == LAGSCOPE__CFI_END) {
      walk_ended = 1;
      return;
    }
    if (step != LAGSCOPE__CFI_STEPPED) {
      printf("  step failed at %#lx\n", (unsigned long)pc);
      return;
    }
    exact = signal_return || fde.signal_frame;
  }
}

__attribute__((noinline)) static void self_inner(void) {
  expected[0] = (uintptr_t)__builtin_return_address(0);
  ucontext_t uc;
  getcontext(&uc);
  walk_from(&uc);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void self_middle(void) {
  expected[1] = (uintptr_t)__builtin_return_address(0);
  self_inner();
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void self_outer(void) {
  expected[2] = (uintptr_t)__builtin_return_address(0);
  self_middle();
  __asm__ volatile("" ::: "memory");
}

/* From a signal handler: raised by sig_inner, whose callers the walk must still meet. */
static uintptr_t sig_expected[2]; /* the return addresses into sig_middle, sig_outer */

static void on_signal(int sig) {
  (void)sig;
  ucontext_t uc;
  getcontext(&uc);
  walk_from(&uc);
}

__attribute__((noinline)) static void sig_inner(void) {
  sig_expected[0] = (uintptr_t)__builtin_return_address(0);
  raise(SIGUSR1);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void sig_middle(void) {
  sig_expected[1] = (uintptr_t)__builtin_return_address(0);
  sig_inner();
  __asm__ volatile("" ::: "memory");
}

/* The last walk met the `count` return addresses in order, and ended where the rules say
 * (_start, a thread's start). */
static void check_walk(const char *name, const uintptr_t *want, int count) {
  int next = 0;
  for (int i = 0; i < walked_len; i++) {
    printf("  #%d %#lx\n", i, (unsigned long)walked[i]);
    if (next < count && walked[i] == want[next]) next++;
  }
  EXPECT(next == count, "%s: %d of the %d return addresses met in order", name, next, count);
  EXPECT(walk_ended, "%s: the walk did not end where the rules say", name);
  printf("%s: %d frames, %s\n", name, walked_len, walk_ended ? "ended" : "cut");
}

static void test_signal_handler(void) {
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGUSR1, &sa, NULL);
  sig_middle();
  check_walk("handler", sig_expected, 2);
}

static void test_self(void) {
  self_outer();
  check_walk("self", expected, 3);
}

/* ---- rules: hand-made records (x86_64's register numbers) ---- */

#if defined(__x86_64__)
/* One .eh_frame_hdr, one CIE and one FDE in a buffer; the FDE covers [code, code + 0x100),
 * a made-up address near the buffer (pcrel sdata4 must reach it), never read. */
static _Alignas(16) uint8_t image[1024];
static size_t image_len;
static uintptr_t code;
static uint8_t fake_stack[512];
static int reads_outside;

static int read_image(void *context, uintptr_t address, void *out, size_t bytes) {
  (void)context;
  uintptr_t lo = (uintptr_t)image, hi = lo + image_len;
  uintptr_t slo = (uintptr_t)fake_stack, shi = slo + sizeof(fake_stack);
  if ((address >= lo && address <= hi && bytes <= hi - address) ||
      (address >= slo && address <= shi && bytes <= shi - address)) {
    memcpy(out, (const void *)address, bytes);
    return 0;
  }
  reads_outside++;
  return -1;
}

static void put(size_t *at, const void *bytes, size_t n) {
  memcpy(image + *at, bytes, n);
  *at += n;
}
static void put32(size_t *at, uint32_t v) { put(at, &v, 4); }

/* cie_program / fde_program: instructions; augmentation "zR" or "zRS". Returns the hdr. */
static uintptr_t build(const char *augmentation, const uint8_t *cie_program, size_t cie_len,
                       const uint8_t *fde_program, size_t fde_len) {
  memset(image, 0, sizeof(image));
  code = (uintptr_t)image + 0x10000;
  size_t at = 64; /* the CIE */
  size_t cie_at = at;
  uint8_t cie_head[] = {1}; /* version */
  size_t length_at = at;
  put32(&at, 0); /* length, later */
  put32(&at, 0); /* CIE id */
  put(&at, cie_head, 1);
  put(&at, augmentation, strlen(augmentation) + 1);
  uint8_t factors[] = {1, 0x78, 16, 1, 0x1b}; /* code 1, data -8, ra 16, aug len 1, pcrel|sdata4 */
  put(&at, factors, sizeof(factors));
  put(&at, cie_program, cie_len);
  uint32_t length = (uint32_t)(at - length_at - 4);
  memcpy(image + length_at, &length, 4);
  size_t fde_at = at;
  put32(&at, 0); /* length, later */
  put32(&at, (uint32_t)(at - cie_at)); /* CIE pointer: from this field back to the CIE */
  int32_t begin = (int32_t)(code - ((uintptr_t)image + at));
  put32(&at, (uint32_t)begin);
  put32(&at, 0x100);
  uint8_t no_data = 0;
  put(&at, &no_data, 1);
  put(&at, fde_program, fde_len);
  length = (uint32_t)(at - fde_at - 4);
  memcpy(image + fde_at, &length, 4);
  image_len = at;
  /* the header at 0: version, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
  size_t h = 0;
  uint8_t head[] = {1, 0x1b, 0x03, 0x3b};
  put(&h, head, 4);
  put32(&h, (uint32_t)(cie_at - h));
  put32(&h, 1);
  put32(&h, (uint32_t)(int32_t)(code - (uintptr_t)image));
  put32(&h, (uint32_t)fde_at);
  return (uintptr_t)image;
}

/* The usual CIE: CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t usual_cie[] = {0x0c, 7, 8, 0x90, 1};

static enum lagscope__cfi_result step_at(uintptr_t hdr, uintptr_t pc, lagscope__cfi_frame *f) {
  lagscope__cfi_memory m = {read_image, NULL};
  lagscope__cfi_fde fde;
  if (lagscope__cfi_find(hdr, pc, &m, &fde) != 0) return (enum lagscope__cfi_result)-1;
  return lagscope__cfi_step(f, &fde, pc, &m);
}

static lagscope__cfi_frame frame_with(uintptr_t pc, uintptr_t sp) {
  lagscope__cfi_frame f = {.known = (1u << 17) - 1};
  for (int i = 0; i < 17; i++) f.registers[i] = 0x1000 + (uintptr_t)i;
  f.registers[LAGSCOPE__CFI_PC] = pc;
  f.registers[LAGSCOPE__CFI_SP] = sp;
  return f;
}

static void put_word(size_t offset, uintptr_t value) {
  memcpy(fake_stack + offset, &value, sizeof(value));
}

static void test_plt_expression(void) {
  /* binutils' x86_64 PLT: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
  static const uint8_t program[] = {0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
                                    0x33, 0x24, 0x22};
  uintptr_t hdr = build("zR", usual_cie, sizeof(usual_cie), program, sizeof(program));
  uintptr_t sp = (uintptr_t)fake_stack + 64;
  put_word(64, 0x1111); /* [rsp]: the return address while pushing nothing */
  put_word(72, 0x2222); /* [rsp + 8]: after the stub's push */
  lagscope__cfi_frame f = frame_with(code + 0x20 + 6, sp); /* (rip & 15) = 6: CFA rsp + 8 */
  EXPECT(step_at(hdr, code + 0x26, &f) == LAGSCOPE__CFI_STEPPED, "plt: step");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0x1111, "plt low: pc %#lx", (unsigned long)f.registers[16]);
  EXPECT(f.registers[LAGSCOPE__CFI_SP] == sp + 8, "plt low: sp");
  f = frame_with(code + 0x20 + 11, sp); /* (rip & 15) = 11: after the push, CFA rsp + 16 */
  EXPECT(step_at(hdr, code + 0x2b, &f) == LAGSCOPE__CFI_STEPPED, "plt: step");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0x2222, "plt high: pc %#lx", (unsigned long)f.registers[16]);
  EXPECT(f.registers[LAGSCOPE__CFI_SP] == sp + 16, "plt high: sp");
}

static void test_signal_frame(void) {
  /* glibc's __restore_rt: CFA = [rsp + 160]; each register at rsp + its ucontext offset. */
  static const uint8_t program[] = {
      0x0f, 4, 0x77, 0xa0, 0x01, 0x06, /* def_cfa_expression: breg7 160; deref */
      0x10, 6, 3, 0x77, 0xf8, 0x00,    /* rbp: expression breg7 120 */
      0x10, 7, 3, 0x77, 0xa0, 0x01,    /* rsp: expression breg7 160 */
      0x10, 16, 3, 0x77, 0xa8, 0x01};  /* rip: expression breg7 168 */
  uintptr_t hdr = build("zRS", (const uint8_t[]){0}, 1, program, sizeof(program));
  uintptr_t sp = (uintptr_t)fake_stack;
  put_word(120, 0x7777);    /* the interrupted rbp */
  put_word(160, sp + 400);  /* its rsp */
  put_word(168, 0x5555);    /* its rip */
  lagscope__cfi_memory m = {read_image, NULL};
  lagscope__cfi_fde fde;
  EXPECT(lagscope__cfi_find(hdr, code + 1, &m, &fde) == 0 && fde.signal_frame, "S: found");
  lagscope__cfi_frame f = frame_with(code + 1, sp);
  EXPECT(step_at(hdr, code + 1, &f) == LAGSCOPE__CFI_STEPPED, "S: step");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0x5555, "S: pc");
  EXPECT(f.registers[LAGSCOPE__CFI_SP] == sp + 400, "S: sp from its rule, not the CFA");
  EXPECT(f.registers[LAGSCOPE__CFI_FP] == 0x7777, "S: rbp");
}

static void test_state_rules(void) {
  /* push rbp (rbp at CFA-16), remember, an epilogue's rules, restore: at 0x30 the body's row
   * again. Also val_offset (rbx = CFA - 24), register (r12 in r13), undefined r14. */
  static const uint8_t program[] = {
      0x41, 0x0e, 16, 0x86, 2,  /* +1: cfa rsp+16; rbp at cfa-16 */
      0x14, 3, 3,               /* val_offset rbx: CFA - 24 */
      0x09, 12, 13,             /* r12 is in r13 */
      0x07, 14,                 /* r14 undefined */
      0x0a,                     /* remember */
      0x4f, 0x0e, 8, 0xc6,      /* +15: cfa rsp+8; restore rbp (the CIE's: same value) */
      0x60,                     /* +32 */
      0x0b};                    /* restore_state */
  uintptr_t hdr = build("zR", usual_cie, sizeof(usual_cie), program, sizeof(program));
  uintptr_t sp = (uintptr_t)fake_stack + 128;
  put_word(128, 0xaaaa); /* [CFA - 16]: saved rbp */
  put_word(136, 0xbbbb); /* [CFA - 8]: return address */
  lagscope__cfi_frame f = frame_with(code + 0x05, sp);
  EXPECT(step_at(hdr, code + 0x05, &f) == LAGSCOPE__CFI_STEPPED, "state: step in the body");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0xbbbb && f.registers[6] == 0xaaaa, "state: body");
  EXPECT(f.registers[3] == sp + 16 - 24, "val_offset");
  EXPECT(f.registers[12] == 0x1000 + 13, "register rule");
  EXPECT(!(f.known & (1u << 14)), "undefined r14 is unknown in the caller");
  f = frame_with(code + 0x12, sp + 8); /* in the epilogue: CFA rsp + 8, rbp as is */
  EXPECT(step_at(hdr, code + 0x12, &f) == LAGSCOPE__CFI_STEPPED, "state: epilogue");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0xbbbb && f.registers[6] == 0x1006, "epilogue row");
  f = frame_with(code + 0x40, sp); /* after restore_state: the body's row */
  EXPECT(step_at(hdr, code + 0x40, &f) == LAGSCOPE__CFI_STEPPED, "state: restored");
  EXPECT(f.registers[LAGSCOPE__CFI_PC] == 0xbbbb && f.registers[6] == 0xaaaa, "restored row");
  f = frame_with(code + 0x100, sp); /* past the FDE's range */
  EXPECT(step_at(hdr, code + 0x100, &f) == (enum lagscope__cfi_result)-1, "outside: no FDE");
}

static void test_end_and_unknown(void) {
  static const uint8_t undefined_ra[] = {0x07, 16};
  uintptr_t hdr = build("zR", usual_cie, sizeof(usual_cie), undefined_ra, sizeof(undefined_ra));
  lagscope__cfi_frame f = frame_with(code, (uintptr_t)fake_stack);
  EXPECT(step_at(hdr, code, &f) == LAGSCOPE__CFI_END, "undefined return address: the end");
  static const uint8_t cfa_rbp[] = {0x0c, 6, 16}; /* CFA = rbp + 16: rbp unknown */
  hdr = build("zR", usual_cie, sizeof(usual_cie), cfa_rbp, sizeof(cfa_rbp));
  f = frame_with(code, (uintptr_t)fake_stack);
  f.known &= ~(1u << 6);
  EXPECT(step_at(hdr, code, &f) == LAGSCOPE__CFI_FAILED, "a CFA from an unknown register");
}

/* Damaged records: every byte of a valid FDE program changed in turn, and lengths that lie.
 * Whatever happens, nothing is read outside the records (ASan would see it too). */
static void test_damaged(void) {
  static const uint8_t program[] = {0x41, 0x0e, 16, 0x86, 2, 0x0a, 0x4f, 0x0e, 8, 0x0b,
                                    0x0f, 4, 0x77, 0xa0, 0x01, 0x06};
  uint8_t damaged[sizeof(program)];
  unsigned stepped = 0;
  reads_outside = 0;
  for (size_t i = 0; i < sizeof(program); i++) {
    for (unsigned value = 0; value < 256; value += 7) {
      memcpy(damaged, program, sizeof(program));
      damaged[i] = (uint8_t)value;
      uintptr_t hdr = build("zR", usual_cie, sizeof(usual_cie), damaged, sizeof(damaged));
      lagscope__cfi_frame f = frame_with(code + 0x20, (uintptr_t)fake_stack + 64);
      stepped += step_at(hdr, code + 0x20, &f) == LAGSCOPE__CFI_STEPPED;
    }
  }
  /* A length past the end of the records. */
  uintptr_t hdr = build("zR", usual_cie, sizeof(usual_cie), program, sizeof(program));
  uint32_t huge = 0x7fffffff;
  memcpy(image + 64, &huge, 4);
  lagscope__cfi_frame f = frame_with(code, (uintptr_t)fake_stack);
  EXPECT(step_at(hdr, code, &f) != LAGSCOPE__CFI_STEPPED, "a CIE longer than the image");
  printf("damaged: %u of %zu variants still stepped; reads refused: %d\n", stepped,
         sizeof(program) * 37, reads_outside);
  /* The reads refused were refused by read_image, never made: that is the point. */
}
#endif

int main(void) {
  test_self();
  test_signal_handler();
#if defined(__x86_64__)
  test_plt_expression();
  test_signal_frame();
  test_state_rules();
  test_end_and_unknown();
  test_damaged();
#endif
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
