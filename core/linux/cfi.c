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
 */
#define _GNU_SOURCE /* ucontext's register names */
#include "linux.h"

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

/* ---- reading: a cursor over a record, a window of it at a time ---- */

typedef struct cursor {
  const lagscope__cfi_memory *memory;
  uintptr_t at, end; /* the next byte; the end of what may be read */
  uintptr_t window_start;
  size_t window_len;
  int failed; /* a read failed or went past end: every value after it is 0 */
  uint8_t window[64];
} cursor;

static void cursor_init(cursor *c, const lagscope__cfi_memory *memory, uintptr_t at,
                        uintptr_t end) {
  c->memory = memory;
  c->at = at, c->end = end;
  c->window_start = 0, c->window_len = 0;
  c->failed = at > end;
}

static uint8_t next_byte(cursor *c) {
  if (c->failed || c->at >= c->end) {
    c->failed = 1;
    return 0;
  }
  if (c->at < c->window_start || c->at - c->window_start >= c->window_len) {
    size_t len = c->end - c->at < sizeof(c->window) ? (size_t)(c->end - c->at) : sizeof(c->window);
    if (c->memory->read(c->memory->context, c->at, c->window, len) != 0) {
      c->failed = 1;
      return 0;
    }
    c->window_start = c->at, c->window_len = len;
  }
  return c->window[c->at++ - c->window_start];
}

/* Past len bytes, which must lie before the end: a length near 2^64 would wrap the cursor back
 * and make a loop of any record. */
static void skip_bytes(cursor *c, uint64_t len) {
  if (c->failed || c->at > c->end || len > c->end - c->at)
    c->failed = 1;
  else
    c->at += (uintptr_t)len;
}

static uint64_t read_unsigned(cursor *c, size_t bytes) { /* little-endian, both targets */
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; i++) value |= (uint64_t)next_byte(c) << (8 * i);
  return value;
}

static uint64_t read_uleb(cursor *c) {
  uint64_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t b = next_byte(c);
    if (shift < 64) value |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80) || c->failed) return value;
  }
}

static int64_t read_sleb(cursor *c) {
  uint64_t value = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    b = next_byte(c);
    if (shift < 64) value |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) && !c->failed);
  if (shift < 64 && (b & 0x40)) value |= ~(uint64_t)0 << shift;
  return (int64_t)value;
}

/* DW_EH_PE_* pointer encodings (LSB): the form in the low nibble, what it is relative to in the
 * high one. */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* An encoded pointer at the cursor. datarel: what DW_EH_PE_datarel is relative to (the
 * .eh_frame_hdr; 0 where it means nothing). Relative forms other than pc and data are refused:
 * no compiler writes them in .eh_frame. */
static uintptr_t read_encoded(cursor *c, uint8_t encoding, uintptr_t datarel) {
  if (encoding == PE_OMIT) return 0;
  uintptr_t field = c->at;
  uint64_t value;
  switch (encoding & 0x0f) {
  case PE_ABSPTR: value = read_unsigned(c, sizeof(uintptr_t)); break;
  case PE_ULEB128: value = read_uleb(c); break;
  case PE_UDATA2: value = read_unsigned(c, 2); break;
  case PE_UDATA4: value = read_unsigned(c, 4); break;
  case PE_UDATA8: value = read_unsigned(c, 8); break;
  case PE_SLEB128: value = (uint64_t)read_sleb(c); break;
  case PE_SDATA2: value = (uint64_t)(int64_t)(int16_t)read_unsigned(c, 2); break;
  case PE_SDATA4: value = (uint64_t)(int64_t)(int32_t)read_unsigned(c, 4); break;
  case PE_SDATA8: value = read_unsigned(c, 8); break;
  default: c->failed = 1; return 0;
  }
  switch (encoding & 0x70) {
  case 0: break;
  case PE_PCREL: value += field; break;
  case PE_DATAREL:
    if (datarel == 0) c->failed = 1;
    value += datarel;
    break;
  default: c->failed = 1; return 0;
  }
  if (encoding & PE_INDIRECT) {
    uintptr_t target = 0;
    if (c->memory->read(c->memory->context, (uintptr_t)value, &target, sizeof(target)) != 0)
      c->failed = 1;
    value = target;
  }
  return (uintptr_t)value;
}

/* ---- finding the FDE: .eh_frame_hdr's binary search table ---- */

#define HDR_VERSION 1
#define HDR_BYTES 12 /* version, three encodings, eh_frame_ptr (sdata4), fde_count (udata4) */
#define TABLE_ENTRY_BYTES 8 /* initial location, FDE address: sdata4 relative to the header */

static int read_entry(const lagscope__cfi_memory *m, uintptr_t table, uint32_t i,
                      int32_t entry[2]) {
  return m->read(m->context, table + (uintptr_t)i * TABLE_ENTRY_BYTES, entry, TABLE_ENTRY_BYTES);
}

/* ---- CIE and FDE ---- */

/* The CIE at record into fde's CIE fields. 0, or -1 when it is not one we can read. */
static int parse_cie(const lagscope__cfi_memory *m, uintptr_t record, lagscope__cfi_fde *fde,
                     int *has_augmentation_data) {
  cursor c;
  cursor_init(&c, m, record, record + 8);
  uint32_t length = (uint32_t)read_unsigned(&c, 4);
  if (c.failed || length == 0 || length == 0xffffffffu) return -1; /* no 64-bit .eh_frame */
  c.end = record + 4 + length;
  if (read_unsigned(&c, 4) != 0) return -1; /* an FDE, not a CIE */
  uint8_t version = next_byte(&c);
  if (version != 1 && version != 3 && version != 4) return -1;
  char augmentation[8];
  size_t len = 0;
  for (uint8_t b; (b = next_byte(&c)) != 0 && !c.failed;) {
    if (len + 1 == sizeof(augmentation)) return -1;
    augmentation[len++] = (char)b;
  }
  augmentation[len] = '\0';
  if (version == 4 && (next_byte(&c) != sizeof(uintptr_t) || next_byte(&c) != 0))
    return -1; /* address size, segment selector size */
  fde->encoding = PE_ABSPTR;
  fde->signal_frame = 0;
  fde->code_align = read_uleb(&c);
  fde->data_align = read_sleb(&c);
  fde->return_address = version == 1 ? next_byte(&c) : (uint32_t)read_uleb(&c);
  *has_augmentation_data = augmentation[0] == 'z';
  if (augmentation[0] == 'z') {
    uint64_t data_len = read_uleb(&c);
    uintptr_t data_start = c.at;
    skip_bytes(&c, data_len);
    uintptr_t data_end = c.at;
    c.at = data_start;
    for (const char *a = augmentation + 1; *a != '\0' && c.at < data_end && !c.failed; a++) {
      switch (*a) {
      case 'R': fde->encoding = next_byte(&c); break;
      case 'L': next_byte(&c); break; /* the LSDA's encoding: exceptions only */
      case 'P': read_encoded(&c, next_byte(&c), 0); break; /* the personality routine */
      default: c.at = data_end; break; /* unknown: its data is skipped, the length says */
      }
    }
    fde->signal_frame = strchr(augmentation, 'S') != NULL; /* S, B, G: no data */
    c.at = data_end;
  } else if (augmentation[0] != '\0') {
    return -1; /* "eh" (a pointer before the factors) and others: gone since gcc 3 */
  }
  fde->cie_instructions = c.at;
  fde->cie_instructions_end = c.end;
  return c.failed || fde->return_address >= LAGSCOPE__CFI_REGISTERS ? -1 : 0;
}

/* The FDE at record, and its CIE. 0, or -1. */
static int parse_fde(const lagscope__cfi_memory *m, uintptr_t record, lagscope__cfi_fde *fde) {
  cursor c;
  cursor_init(&c, m, record, record + 8);
  uint32_t length = (uint32_t)read_unsigned(&c, 4);
  uint32_t cie_offset = (uint32_t)read_unsigned(&c, 4);
  int has_augmentation_data;
  if (c.failed || length == 0 || length == 0xffffffffu || cie_offset == 0 ||
      parse_cie(m, record + 4 - cie_offset, fde, &has_augmentation_data) != 0)
    return -1;
  c.end = record + 4 + length;
  fde->start = read_encoded(&c, fde->encoding, 0);
  /* The range is a length: the form without what it is relative to. */
  fde->end = fde->start + read_encoded(&c, fde->encoding & 0x0f, 0);
  if (has_augmentation_data) {
    skip_bytes(&c, read_uleb(&c));
  }
  fde->instructions = c.at;
  fde->instructions_end = c.end;
  return c.failed || c.at > c.end || fde->end < fde->start ? -1 : 0;
}

int lagscope__cfi_find(uintptr_t eh_frame_hdr, uintptr_t pc, const lagscope__cfi_memory *m,
                       lagscope__cfi_fde *fde) {
  uint8_t head[HDR_BYTES];
  /* The form every linker writes, the one a binary search can use. */
  if (m->read(m->context, eh_frame_hdr, head, sizeof(head)) != 0 || head[0] != HDR_VERSION ||
      head[1] != (PE_PCREL | PE_SDATA4) || head[2] != PE_UDATA4 ||
      head[3] != (PE_DATAREL | PE_SDATA4))
    return -1;
  uint32_t count;
  memcpy(&count, head + 8, sizeof(count));
  uintptr_t table = eh_frame_hdr + HDR_BYTES;
  uint32_t low = 0, high = count; /* the last entry starting at or before pc */
  while (high - low > 1) {
    uint32_t mid = low + (high - low) / 2;
    int32_t entry[2];
    if (read_entry(m, table, mid, entry) != 0) return -1;
    if (eh_frame_hdr + (uintptr_t)(intptr_t)entry[0] <= pc)
      low = mid;
    else
      high = mid;
  }
  int32_t entry[2];
  if (count == 0 || read_entry(m, table, low, entry) != 0 ||
      parse_fde(m, eh_frame_hdr + (uintptr_t)(intptr_t)entry[1], fde) != 0)
    return -1;
  return pc >= fde->start && pc < fde->end ? 0 : -1;
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

static void set_expression(interpreter *in, uint64_t column, uint8_t kind, cursor *c) {
  uint64_t len = read_uleb(c);
  if (column < LAGSCOPE__CFI_REGISTERS)
    in->row.registers[column] = (rule){kind, (uint32_t)len, (int64_t)c->at};
  skip_bytes(c, len);
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

/* Runs one DW_CFA instruction. 0, STOP, or -1 for one we do not know (its length unknown). */
static int run_instruction(interpreter *in, cursor *c) {
  uint8_t op = next_byte(c);
  int64_t data_align = in->fde->data_align;
  switch (op >> 6) { /* the three with an operand in the opcode */
  case 1: return advance(in, op & 0x3f);
  case 2: set_rule(in, op & 0x3f, OFFSET, factored((int64_t)read_uleb(c), data_align)); return 0;
  case 3:
    if ((op & 0x3f) < LAGSCOPE__CFI_REGISTERS)
      in->row.registers[op & 0x3f] = in->initial->registers[op & 0x3f];
    return 0;
  }
  uint64_t reg;
  switch (op) {
  case 0x00: return 0;                                          /* nop */
  case 0x01: in->location = read_encoded(c, in->fde->encoding, 0); return 0; /* set_loc */
  case 0x02: return advance(in, read_unsigned(c, 1));           /* advance_loc1 */
  case 0x03: return advance(in, read_unsigned(c, 2));           /* advance_loc2 */
  case 0x04: return advance(in, read_unsigned(c, 4));           /* advance_loc4 */
  case 0x05:                                                    /* offset_extended */
    reg = read_uleb(c);
    set_rule(in, reg, OFFSET, factored((int64_t)read_uleb(c), data_align));
    return 0;
  case 0x06: /* restore_extended */
    reg = read_uleb(c);
    if (reg < LAGSCOPE__CFI_REGISTERS) in->row.registers[reg] = in->initial->registers[reg];
    return 0;
  case 0x07: set_rule(in, read_uleb(c), UNDEFINED, 0); return 0; /* undefined */
  case 0x08: set_rule(in, read_uleb(c), SAME, 0); return 0;      /* same_value */
  case 0x09:                                                     /* register */
    reg = read_uleb(c);
    set_rule(in, reg, REGISTER, (int64_t)read_uleb(c));
    return 0;
  case 0x0a: /* remember_state */
    if (in->remembered_len == REMEMBER_DEPTH) return -1;
    in->remembered[in->remembered_len++] = in->row;
    return 0;
  case 0x0b: /* restore_state: the whole row, CFA rule too, as GCC's unwinder does */
    if (in->remembered_len == 0) return -1;
    in->row = in->remembered[--in->remembered_len];
    return 0;
  case 0x0c: /* def_cfa */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)read_uleb(c)};
    in->row.cfa_offset = (int64_t)read_uleb(c);
    return 0;
  case 0x0d: /* def_cfa_register */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)read_uleb(c)};
    return 0;
  case 0x0e: in->row.cfa_offset = (int64_t)read_uleb(c); return 0; /* def_cfa_offset */
  case 0x0f: {                                                      /* def_cfa_expression */
    uint64_t len = read_uleb(c);
    in->row.cfa = (rule){VAL_EXPRESSION, (uint32_t)len, (int64_t)c->at};
    skip_bytes(c, len);
    return 0;
  }
  case 0x10: reg = read_uleb(c); set_expression(in, reg, EXPRESSION, c); return 0;
  case 0x11: /* offset_extended_sf */
    reg = read_uleb(c);
    set_rule(in, reg, OFFSET, factored(read_sleb(c), data_align));
    return 0;
  case 0x12: /* def_cfa_sf */
    in->row.cfa = (rule){.kind = REGISTER, .value = (int64_t)read_uleb(c)};
    in->row.cfa_offset = factored(read_sleb(c), data_align);
    return 0;
  case 0x13: in->row.cfa_offset = factored(read_sleb(c), data_align); return 0; /* def_cfa_offset_sf */
  case 0x14:                                                           /* val_offset */
    reg = read_uleb(c);
    set_rule(in, reg, VAL_OFFSET, factored((int64_t)read_uleb(c), data_align));
    return 0;
  case 0x15: /* val_offset_sf */
    reg = read_uleb(c);
    set_rule(in, reg, VAL_OFFSET, factored(read_sleb(c), data_align));
    return 0;
  case 0x16: reg = read_uleb(c); set_expression(in, reg, VAL_EXPRESSION, c); return 0;
  case 0x2d: in->row.ra_signed = !in->row.ra_signed; return 0; /* AARCH64_negate_ra_state */
  case 0x2e: read_uleb(c); return 0;                  /* GNU_args_size: for landing pads */
  case 0x2f: /* GNU_negative_offset_extended */
    reg = read_uleb(c);
    set_rule(in, reg, OFFSET, factored((int64_t)(0 - read_uleb(c)), data_align));
    return 0;
  default: return -1;
  }
}

/* Runs [at, end) until the row for the target pc is complete. 0, or -1. */
static int run_instructions(interpreter *in, const lagscope__cfi_memory *m, uintptr_t at,
                            uintptr_t end) {
  cursor c;
  cursor_init(&c, m, at, end);
  while (c.at < c.end) {
    int rc = run_instruction(in, &c);
    if (c.failed || rc < 0) return -1;
    if (rc == STOP) return 0;
  }
  return 0;
}

/* ---- DWARF expressions: the subset .eh_frame uses, and the arithmetic around it ---- */

#define EXPRESSION_STACK 16
#define EXPRESSION_STEPS 256 /* a bound for loops made of DW_OP_bra / DW_OP_skip */

static int register_value(const lagscope__cfi_frame *f, uint64_t reg, uintptr_t *value) {
  if (reg >= LAGSCOPE__CFI_REGISTERS || !(f->known & ((uint64_t)1 << reg))) return -1;
  *value = f->registers[reg];
  return 0;
}

static int binary_op(uint8_t op, uint64_t a, uint64_t b, uint64_t *out) {
  switch (op) { /* a is the second entry, b the top */
  case 0x1a: *out = a & b; return 0;
  case 0x1b: /* div: INT64_MIN / -1 would trap */
    if (b == 0 || (int64_t)b == -1) return -1;
    *out = (uint64_t)((int64_t)a / (int64_t)b);
    return 0;
  case 0x1c: *out = a - b; return 0;
  case 0x1d: if (b == 0) return -1; *out = a % b; return 0;
  case 0x1e: *out = a * b; return 0;
  case 0x21: *out = a | b; return 0;
  case 0x22: *out = a + b; return 0;
  case 0x24: *out = b < 64 ? a << b : 0; return 0;
  case 0x25: *out = b < 64 ? a >> b : 0; return 0;
  case 0x26: *out = (uint64_t)((int64_t)a >> (b < 63 ? b : 63)); return 0;
  case 0x27: *out = a ^ b; return 0;
  case 0x29: *out = a == b; return 0;
  case 0x2a: *out = (int64_t)a >= (int64_t)b; return 0;
  case 0x2b: *out = (int64_t)a > (int64_t)b; return 0;
  case 0x2c: *out = (int64_t)a <= (int64_t)b; return 0;
  case 0x2d: *out = (int64_t)a < (int64_t)b; return 0;
  case 0x2e: *out = a != b; return 0;
  default: return -1;
  }
}

/* Evaluates the expression at [at, at + len) for frame f, with `initial` pushed first (the CFA,
 * for register rules). 0 and the top of the stack in *out, or -1. */
static int evaluate(const lagscope__cfi_frame *f, const lagscope__cfi_memory *m, uintptr_t at,
                    uint32_t len, int push_initial, uintptr_t initial, uintptr_t *out) {
  uint64_t stack[EXPRESSION_STACK];
  unsigned depth = 0;
  if (push_initial) stack[depth++] = initial;
  cursor c;
  cursor_init(&c, m, at, at + len);
  for (unsigned steps = 0; c.at < c.end; steps++) {
    if (steps == EXPRESSION_STEPS) return -1;
    uint8_t op = next_byte(&c);
    uint64_t value = 0;
    uintptr_t reg_value;
    int push = 1;
    if (op >= 0x30 && op <= 0x4f) { /* lit0..lit31 */
      value = op - 0x30;
    } else if (op >= 0x70 && op <= 0x8f) { /* breg0..breg31 */
      if (register_value(f, op - 0x70, &reg_value) != 0) return -1;
      value = reg_value + (uint64_t)read_sleb(&c);
    } else {
      push = 0;
      switch (op) {
      case 0x03: value = read_unsigned(&c, sizeof(uintptr_t)), push = 1; break; /* addr */
      case 0x08: value = read_unsigned(&c, 1), push = 1; break;                /* const1u */
      case 0x09: value = (uint64_t)(int8_t)read_unsigned(&c, 1), push = 1; break;
      case 0x0a: value = read_unsigned(&c, 2), push = 1; break;
      case 0x0b: value = (uint64_t)(int16_t)read_unsigned(&c, 2), push = 1; break;
      case 0x0c: value = read_unsigned(&c, 4), push = 1; break;
      case 0x0d: value = (uint64_t)(int32_t)read_unsigned(&c, 4), push = 1; break;
      case 0x0e: case 0x0f: value = read_unsigned(&c, 8), push = 1; break;
      case 0x10: value = read_uleb(&c), push = 1; break;           /* constu */
      case 0x11: value = (uint64_t)read_sleb(&c), push = 1; break; /* consts */
      case 0x92: {                                                  /* bregx */
        uint64_t reg = read_uleb(&c);
        if (register_value(f, reg, &reg_value) != 0) return -1;
        value = reg_value + (uint64_t)read_sleb(&c), push = 1;
        break;
      }
      case 0x12: /* dup */
        if (depth == 0) return -1;
        value = stack[depth - 1], push = 1;
        break;
      case 0x14: /* over */
        if (depth < 2) return -1;
        value = stack[depth - 2], push = 1;
        break;
      case 0x15: { /* pick */
        uint8_t i = (uint8_t)read_unsigned(&c, 1);
        if (i >= depth) return -1;
        value = stack[depth - 1 - i], push = 1;
        break;
      }
      case 0x13: /* drop */
        if (depth == 0) return -1;
        depth--;
        break;
      case 0x16: /* swap */
        if (depth < 2) return -1;
        value = stack[depth - 1], stack[depth - 1] = stack[depth - 2], stack[depth - 2] = value;
        break;
      case 0x17: /* rot */
        if (depth < 3) return -1;
        value = stack[depth - 1];
        stack[depth - 1] = stack[depth - 2], stack[depth - 2] = stack[depth - 3];
        stack[depth - 3] = value;
        break;
      case 0x06: { /* deref */
        uintptr_t word;
        if (depth == 0 || m->read(m->context, (uintptr_t)stack[depth - 1], &word, sizeof(word)))
          return -1;
        stack[depth - 1] = word;
        break;
      }
      case 0x19: /* abs */
        if (depth == 0) return -1;
        if ((int64_t)stack[depth - 1] < 0) stack[depth - 1] = -stack[depth - 1];
        break;
      case 0x1f: /* neg */
        if (depth == 0) return -1;
        stack[depth - 1] = -stack[depth - 1];
        break;
      case 0x20: /* not */
        if (depth == 0) return -1;
        stack[depth - 1] = ~stack[depth - 1];
        break;
      case 0x23: /* plus_uconst */
        if (depth == 0) return -1;
        stack[depth - 1] += read_uleb(&c);
        break;
      case 0x2f: /* skip */
      case 0x28: { /* bra: skip when the top is not 0 */
        int16_t skip = (int16_t)read_unsigned(&c, 2);
        if (op == 0x28 && depth == 0) return -1;
        if (op == 0x28 && stack[--depth] == 0) break;
        if ((skip < 0 && (uintptr_t)-skip > c.at - at) || (skip > 0 && (uintptr_t)skip > c.end - c.at))
          return -1; /* out of the expression */
        c.at += (uintptr_t)(intptr_t)skip;
        break;
      }
      case 0x96: break; /* nop */
      default: {
        if (depth < 2 || binary_op(op, stack[depth - 2], stack[depth - 1], &value) != 0)
          return -1;
        stack[depth - 2] = value;
        depth--;
        break;
      }
      }
    }
    if (c.failed || c.at > c.end) return -1;
    if (push) {
      if (depth == EXPRESSION_STACK) return -1;
      stack[depth++] = value;
    }
  }
  if (depth == 0) return -1;
  *out = (uintptr_t)stack[depth - 1];
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
  case SAME: return register_value(f, reg, value);
  case OFFSET: address = cfa + (uintptr_t)r.value; break;
  case VAL_OFFSET: *value = cfa + (uintptr_t)r.value; return 0;
  case REGISTER: return register_value(f, (uint64_t)r.value, value);
  case EXPRESSION:
    if (evaluate(f, m, (uintptr_t)r.value, r.expression_len, 1, cfa, &address) != 0) return -1;
    break;
  case VAL_EXPRESSION: return evaluate(f, m, (uintptr_t)r.value, r.expression_len, 1, cfa, value);
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
    if (register_value(frame, (uint64_t)r->cfa.value, &cfa) != 0) return LAGSCOPE__CFI_FAILED;
    cfa += (uintptr_t)r->cfa_offset;
  } else if (r->cfa.kind != VAL_EXPRESSION ||
             evaluate(frame, m, (uintptr_t)r->cfa.value, r->cfa.expression_len, 0, 0, &cfa) != 0) {
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
  if (r->registers[LAGSCOPE__CFI_SP].kind == SAME) { /* the usual case: the CFA is the caller's sp */
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
  if (register_value(frame, LAGSCOPE__CFI_SP, &sp) != 0 ||
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
  if (register_value(frame, LAGSCOPE__CFI_FP, &fp) != 0) return LAGSCOPE__CFI_FAILED;
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
