/*
 * One step of a stack walk with DWARF call frame information: the .eh_frame every Linux object
 * carries (LSB's exception frames; DWARF 5, section 6.4), found through .eh_frame_hdr's sorted
 * table. Given a frame's registers and the FDE of its function, the caller's registers.
 *
 * Ours rather than libunwind's: the walk already found FDEs itself and read every byte from the
 * objects' files; what libunwind still gave (this interpreter) cost ~190 KiB of every app's RSS
 * (its code and data mapped, a 28 KiB cache in its .bss, a 26 KiB address space on the heap).
 * Handled: CIE versions 1, 3 and 4 with the augmentations compilers write (z R P L S B G), every
 * DW_CFA instruction of DWARF 5 and GNU's, CFA and register expressions (x86_64's PLT stubs,
 * glibc's signal trampoline), aarch64's signed return addresses and its kernel's signal return
 * (whose CFI does not give the interrupted pc: the ucontext does). Not handled: .debug_frame
 * (objects without .eh_frame_hdr walk by frame pointer or stack scan, capture_walk.c).
 *
 * No allocation, no lock: every byte comes through the caller's read function, a small window
 * at a time, so a record of any size is read without a buffer its size.
 *
 * The files (cfi.h): this one holds the rules (the DW_CFA interpreter) and the step; the
 * cursor, the FDE's lookup and the expressions are in cfi_cursor.c, cfi_fde.c and
 * cfi_expression.c.
 */
#define _GNU_SOURCE /* ucontext's register names */
#include "cfi.h"

#include <string.h>

/* ---- registers: a ucontext in DWARF's numbering ---- */

void lagscope__cfi_registers_from_ucontext(const ucontext_t *uc,
                                           uintptr_t registers[LAGSCOPE__CFI_REGISTERS]) {
#if defined(__x86_64__)
  static const int order[LAGSCOPE__CFI_REGISTERS] = {
      REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP, REG_R8,
      REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
  for (int i = 0; i < LAGSCOPE__CFI_REGISTERS; i++)
    registers[i] = (uintptr_t)uc->uc_mcontext.gregs[order[i]];
#else
  for (int i = 0; i < 31; i++) registers[i] = (uintptr_t)uc->uc_mcontext.regs[i];
  registers[LAGSCOPE__CFI_SP] = (uintptr_t)uc->uc_mcontext.sp;
  registers[LAGSCOPE__CFI_PC] = (uintptr_t)uc->uc_mcontext.pc;
#endif
}

int lagscope__cfi_register_value(const lagscope__cfi_frame *f, uint64_t reg, uintptr_t *value) {
  if (reg >= LAGSCOPE__CFI_REGISTERS || !(f->known & ((uint64_t)1 << reg))) return -1;
  *value = f->registers[reg];
  return 0;
}

/* ---- the rules: the table row for one pc ---- */

enum rule_kind {
  SAME = 0, /* no rule: the value the callee has (callee-saved, or not changed) */
  UNDEFINED,
  OFFSET,        /* saved at CFA + n */
  VAL_OFFSET,    /* is CFA + n */
  REGISTER,      /* in register n */
  EXPRESSION,    /* saved at the address the expression computes */
  VAL_EXPRESSION /* is what the expression computes */
};

typedef struct rule {
  uint8_t kind;
  uint32_t expression_len;
  int64_t value; /* n, or the expression's address */
} rule;

typedef struct row {
  rule registers[LAGSCOPE__CFI_REGISTERS];
  rule cfa; /* REGISTER (register + offset in cfa_offset) or VAL_EXPRESSION */
  int64_t cfa_offset;
  int ra_signed; /* aarch64: the return address is signed (pointer authentication) */
} row;

#define REMEMBER_DEPTH 4

typedef struct interpreter {
  const lagscope__cfi_fde *fde; /* and its CIE's factors */
  const row *initial; /* after the CIE's instructions: DW_CFA_restore goes back to it */
  row row;
  row remembered[REMEMBER_DEPTH];
  unsigned remembered_len;
  uintptr_t location, target; /* the row's pc; the pc whose row we want */
} interpreter;

static void set_rule(interpreter *in, uint64_t column, uint8_t kind, int64_t value) {
  if (column < LAGSCOPE__CFI_REGISTERS) /* others (vector registers) never hold an address */
    in->row.registers[column] = (rule){.kind = kind, .value = value};
}

static void set_expression(interpreter *in, uint64_t column, uint8_t kind,
                           lagscope__cfi_cursor *c) {
  uint64_t len = lagscope__cfi_read_uleb(c);
  if (column < LAGSCOPE__CFI_REGISTERS)
    in->row.registers[column] = (rule){kind, (uint32_t)len, (int64_t)c->at};
  lagscope__cfi_skip_bytes(c, len);
}

/* n times a factor, wrapping as the hardware does: damaged records must not be undefined
 * behaviour. */
static int64_t factored(int64_t n, int64_t factor) {
  return (int64_t)((uint64_t)n * (uint64_t)factor);
}

enum { STOP = 1 }; /* the row for the target pc is complete */

static int advance(interpreter *in, uint64_t delta) {
  uintptr_t next = in->location + (uintptr_t)(delta * in->fde->code_align);
  if (next > in->target) return STOP;
  in->location = next;
  return 0;
}

/* The CFA's rule: def_cfa and its forms (op). 0, or -1 for another op. */
static int define_cfa(interpreter *in, lagscope__cfi_cursor *c, uint8_t op) {
  int64_t data_align = in->fde->data_align;
  switch (op) {
  case 0x0c: /* def_cfa */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)lagscope__cfi_read_uleb(c)};
    in->row.cfa_offset = (int64_t)lagscope__cfi_read_uleb(c);
    return 0;
  case 0x0d: /* def_cfa_register */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)lagscope__cfi_read_uleb(c)};
    return 0;
  case 0x0e: /* def_cfa_offset */
    in->row.cfa_offset = (int64_t)lagscope__cfi_read_uleb(c);
    return 0;
  case 0x0f: { /* def_cfa_expression */
    uint64_t len = lagscope__cfi_read_uleb(c);
    in->row.cfa = (rule){VAL_EXPRESSION, (uint32_t)len, (int64_t)c->at};
    lagscope__cfi_skip_bytes(c, len);
    return 0;
  }
  case 0x12: /* def_cfa_sf */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)lagscope__cfi_read_uleb(c)};
    in->row.cfa_offset = factored(lagscope__cfi_read_sleb(c), data_align);
    return 0;
  case 0x13: /* def_cfa_offset_sf */
    in->row.cfa_offset = factored(lagscope__cfi_read_sleb(c), data_align);
    return 0;
  default: return -1;
  }
}

/* A register's rule (op, with its register as an operand). 0, or -1 for one we do not know
 * (its length unknown). */
static int register_rule(interpreter *in, lagscope__cfi_cursor *c, uint8_t op) {
  int64_t data_align = in->fde->data_align;
  uint64_t reg = 0;
  switch (op) {
  case 0x05: /* offset_extended */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, OFFSET, factored((int64_t)lagscope__cfi_read_uleb(c), data_align));
    return 0;
  case 0x06: /* restore_extended */
    reg = lagscope__cfi_read_uleb(c);
    if (reg < LAGSCOPE__CFI_REGISTERS) in->row.registers[reg] = in->initial->registers[reg];
    return 0;
  case 0x07: set_rule(in, lagscope__cfi_read_uleb(c), UNDEFINED, 0); return 0; /* undefined */
  case 0x08: set_rule(in, lagscope__cfi_read_uleb(c), SAME, 0); return 0;      /* same_value */
  case 0x09:                                                                    /* register */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, REGISTER, (int64_t)lagscope__cfi_read_uleb(c));
    return 0;
  case 0x10: reg = lagscope__cfi_read_uleb(c); set_expression(in, reg, EXPRESSION, c); return 0;
  case 0x11: /* offset_extended_sf */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, OFFSET, factored(lagscope__cfi_read_sleb(c), data_align));
    return 0;
  case 0x14: /* val_offset */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, VAL_OFFSET, factored((int64_t)lagscope__cfi_read_uleb(c), data_align));
    return 0;
  case 0x15: /* val_offset_sf */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, VAL_OFFSET, factored(lagscope__cfi_read_sleb(c), data_align));
    return 0;
  case 0x16:
    reg = lagscope__cfi_read_uleb(c);
    set_expression(in, reg, VAL_EXPRESSION, c);
    return 0;
  case 0x2f: /* GNU_negative_offset_extended */
    reg = lagscope__cfi_read_uleb(c);
    set_rule(in, reg, OFFSET,
             factored((int64_t)(0 - lagscope__cfi_read_uleb(c)), data_align));
    return 0;
  default: return -1;
  }
}

/* Runs one DW_CFA instruction. 0, STOP, or -1 for one we do not know (its length unknown). */
static int run_instruction(interpreter *in, lagscope__cfi_cursor *c) {
  uint8_t op = lagscope__cfi_next_byte(c);
  switch (op >> 6) { /* the three with an operand in the opcode */
  case 1: return advance(in, op & 0x3f);
  case 2:
    set_rule(in, op & 0x3f, OFFSET,
             factored((int64_t)lagscope__cfi_read_uleb(c), in->fde->data_align));
    return 0;
  case 3:
    if ((op & 0x3f) < LAGSCOPE__CFI_REGISTERS)
      in->row.registers[op & 0x3f] = in->initial->registers[op & 0x3f];
    return 0;
  }
  switch (op) {
  case 0x00: return 0; /* nop */
  case 0x01: /* set_loc */
    in->location = lagscope__cfi_read_encoded(c, in->fde->encoding, 0);
    return 0;
  case 0x02: return advance(in, lagscope__cfi_read_unsigned(c, 1)); /* advance_loc1 */
  case 0x03: return advance(in, lagscope__cfi_read_unsigned(c, 2)); /* advance_loc2 */
  case 0x04: return advance(in, lagscope__cfi_read_unsigned(c, 4)); /* advance_loc4 */
  case 0x0a: /* remember_state */
    if (in->remembered_len == REMEMBER_DEPTH) return -1;
    in->remembered[in->remembered_len++] = in->row;
    return 0;
  case 0x0b: /* restore_state: the whole row, CFA rule too, as GCC's unwinder does */
    if (in->remembered_len == 0) return -1;
    in->row = in->remembered[--in->remembered_len];
    return 0;
  case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13:
    return define_cfa(in, c, op);
  case 0x2d: in->row.ra_signed = !in->row.ra_signed; return 0; /* AARCH64_negate_ra_state */
  case 0x2e: lagscope__cfi_read_uleb(c); return 0; /* GNU_args_size: for landing pads */
  default: return register_rule(in, c, op);
  }
}

/* Runs [at, end) until the row for the target pc is complete. 0, or -1. */
static int run_instructions(interpreter *in, const lagscope__cfi_memory *m, uintptr_t at,
                            uintptr_t end) {
  lagscope__cfi_cursor c;
  lagscope__cfi_cursor_init(&c, m, at, end);
  while (c.at < c.end) {
    int rc = run_instruction(in, &c);
    if (c.failed || rc < 0) return -1;
    if (rc == STOP) return 0;
  }
  return 0;
}

/* ---- the step ---- */

static uintptr_t strip_signature(uintptr_t return_address) {
#if defined(__aarch64__)
  /* xpaclri (hint #7): a no-op on a CPU without pointer authentication. */
  register uintptr_t lr __asm__("x30") = return_address;
  __asm__("hint #7" : "+r"(lr));
  return lr;
#else
  return return_address;
#endif
}

/* The caller's value of column reg under rule r; 0, or -1 when it cannot be known. */
static int recover(const lagscope__cfi_frame *f, const lagscope__cfi_memory *m, rule r,
                   uint64_t reg, uintptr_t cfa, uintptr_t *value) {
  uintptr_t address;
  switch (r.kind) {
  case SAME: return lagscope__cfi_register_value(f, reg, value);
  case OFFSET: address = cfa + (uintptr_t)r.value; break;
  case VAL_OFFSET: *value = cfa + (uintptr_t)r.value; return 0;
  case REGISTER: return lagscope__cfi_register_value(f, (uint64_t)r.value, value);
  case EXPRESSION:
    if (lagscope__cfi_evaluate(f, m, (uintptr_t)r.value, r.expression_len, 1, cfa,
                               &address) != 0)
      return -1;
    break;
  case VAL_EXPRESSION:
    return lagscope__cfi_evaluate(f, m, (uintptr_t)r.value, r.expression_len, 1, cfa, value);
  default: return -1; /* UNDEFINED */
  }
  return m->read(m->context, address, value, sizeof(*value)) == 0 ? 0 : -1;
}

enum lagscope__cfi_result lagscope__cfi_step(lagscope__cfi_frame *frame,
                                             const lagscope__cfi_fde *fde, uintptr_t pc,
                                             const lagscope__cfi_memory *m) {
  row initial;
  memset(&initial, 0, sizeof(initial));
  interpreter in = {.fde = fde, .initial = &initial, .location = fde->start, .target = pc};
  memset(&in.row, 0, sizeof(in.row));
  if (run_instructions(&in, m, fde->cie_instructions, fde->cie_instructions_end) != 0)
    return LAGSCOPE__CFI_FAILED;
  initial = in.row;
  in.remembered_len = 0;
  in.location = fde->start;
  if (run_instructions(&in, m, fde->instructions, fde->instructions_end) != 0)
    return LAGSCOPE__CFI_FAILED;
  const row *r = &in.row;

  uintptr_t cfa;
  if (r->cfa.kind == REGISTER) {
    if (lagscope__cfi_register_value(frame, (uint64_t)r->cfa.value, &cfa) != 0)
      return LAGSCOPE__CFI_FAILED;
    cfa += (uintptr_t)r->cfa_offset;
  } else if (r->cfa.kind != VAL_EXPRESSION ||
             lagscope__cfi_evaluate(frame, m, (uintptr_t)r->cfa.value, r->cfa.expression_len, 0,
                                    0, &cfa) != 0) {
    return LAGSCOPE__CFI_FAILED;
  }
  if (r->registers[fde->return_address].kind == UNDEFINED) return LAGSCOPE__CFI_END;

  lagscope__cfi_frame caller = {.known = 0};
  for (uint64_t reg = 0; reg < LAGSCOPE__CFI_REGISTERS; reg++) {
    uintptr_t value;
    if (r->registers[reg].kind == UNDEFINED ||
        recover(frame, m, r->registers[reg], reg, cfa, &value) != 0)
      continue; /* unknown in the caller: a later rule that needs it fails */
    caller.registers[reg] = value;
    caller.known |= (uint64_t)1 << reg;
  }
  uintptr_t return_address;
  if (!(caller.known & ((uint64_t)1 << fde->return_address))) return LAGSCOPE__CFI_FAILED;
  return_address = caller.registers[fde->return_address];
  if (r->ra_signed) return_address = strip_signature(return_address);
  /* the usual case: the CFA is the caller's sp */
  if (r->registers[LAGSCOPE__CFI_SP].kind == SAME) {
    caller.registers[LAGSCOPE__CFI_SP] = cfa;
    caller.known |= (uint64_t)1 << LAGSCOPE__CFI_SP;
  } else if (!(caller.known & ((uint64_t)1 << LAGSCOPE__CFI_SP))) {
    return LAGSCOPE__CFI_FAILED; /* a frame without a stack pointer is no frame to go on from */
  }
  caller.registers[LAGSCOPE__CFI_PC] = return_address;
  caller.known |= (uint64_t)1 << LAGSCOPE__CFI_PC;
  *frame = caller;
  return LAGSCOPE__CFI_STEPPED;
}

#if defined(__aarch64__)
/* The kernel's signal return, where a handler returns to (the vDSO's __kernel_rt_sigreturn;
 * qemu-user writes the same two instructions): mov x8, #139 (rt_sigreturn); svc #0. */
#define SIGRETURN_MOV_X8 0xd2801168u
#define SIGRETURN_SVC 0xd4000001u
/* Its sp is the kernel's struct rt_sigframe: a siginfo (128 bytes), then the ucontext, whose
 * uc_mcontext (a sigcontext: fault_address, regs[31], sp, pc) starts 176 bytes in
 * (arch/arm64/include/uapi/asm/ucontext.h, sigcontext.h). */
#define SIGFRAME_REGS (128u + 176u + 8u)

int lagscope__cfi_is_signal_return(uintptr_t pc, const lagscope__cfi_memory *m) {
  uint32_t code[2];
  return m->read(m->context, pc, code, sizeof(code)) == 0 && code[0] == SIGRETURN_MOV_X8 &&
         code[1] == SIGRETURN_SVC;
}

enum lagscope__cfi_result lagscope__cfi_step_signal_return(lagscope__cfi_frame *frame,
                                                           const lagscope__cfi_memory *m) {
  uintptr_t sp, saved[33]; /* x0..x30, sp, pc */
  if (lagscope__cfi_register_value(frame, LAGSCOPE__CFI_SP, &sp) != 0 ||
      m->read(m->context, sp + SIGFRAME_REGS, saved, sizeof(saved)) != 0)
    return LAGSCOPE__CFI_FAILED;
  memcpy(frame->registers, saved, sizeof(saved));
  frame->known = ((uint64_t)1 << 33) - 1;
  return LAGSCOPE__CFI_STEPPED;
}
#else
/* x86_64: glibc's __restore_rt has CFI for all of it (augmentation S, expressions). */
int lagscope__cfi_is_signal_return(uintptr_t pc, const lagscope__cfi_memory *m) {
  (void)pc, (void)m;
  return 0;
}

enum lagscope__cfi_result lagscope__cfi_step_signal_return(lagscope__cfi_frame *frame,
                                                           const lagscope__cfi_memory *m) {
  (void)frame, (void)m;
  return LAGSCOPE__CFI_FAILED;
}
#endif

/* Without unwind info: the frame record the frame pointer points at, {caller's fp, return
 * address} on both targets, with the caller's sp just above it. */
enum lagscope__cfi_result lagscope__cfi_step_frame_pointer(lagscope__cfi_frame *frame,
                                                           const lagscope__cfi_memory *m) {
  uintptr_t fp, record[2];
  if (lagscope__cfi_register_value(frame, LAGSCOPE__CFI_FP, &fp) != 0) return LAGSCOPE__CFI_FAILED;
  if (fp == 0) return LAGSCOPE__CFI_END; /* the outermost frame clears it */
  if (m->read(m->context, fp, record, sizeof(record)) != 0 || record[0] <= fp)
    return LAGSCOPE__CFI_FAILED; /* a caller's frame lies above its callee's */
  lagscope__cfi_frame caller = *frame;
  caller.registers[LAGSCOPE__CFI_FP] = record[0];
  caller.registers[LAGSCOPE__CFI_SP] = fp + sizeof(record);
  caller.registers[LAGSCOPE__CFI_PC] = strip_signature(record[1]);
  caller.known |= (uint64_t)1 << LAGSCOPE__CFI_FP | (uint64_t)1 << LAGSCOPE__CFI_SP |
                  (uint64_t)1 << LAGSCOPE__CFI_PC;
  *frame = caller;
  return LAGSCOPE__CFI_STEPPED;
}
