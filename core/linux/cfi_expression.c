/*
 * DWARF expressions for the CFI step (cfi.h): the subset .eh_frame uses (x86_64's PLT stubs,
 * glibc's signal trampoline), and the arithmetic around it. A stack of 16 values, at most 256
 * operations (DW_OP_bra and DW_OP_skip can make loops), every byte and every dereference
 * through the caller's read function. No allocation, no lock.
 */
#include "cfi.h"

#define EXPRESSION_STACK 16
#define EXPRESSION_STEPS 256 /* a bound for loops made of DW_OP_bra / DW_OP_skip */

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

/* For the operations that push one value (literals, constants, a register plus an offset, and
 * dup, over, pick): 1 and the value in *value. 0 when op is none of them; -1 when it cannot be
 * evaluated (an unknown register, a stack too shallow). */
static int pushed_value(const lagscope__cfi_frame *f, lagscope__cfi_cursor *c, uint8_t op,
                        const uint64_t *stack, unsigned depth, uint64_t *value) {
  uintptr_t reg_value;
  if (op >= 0x30 && op <= 0x4f) { /* lit0..lit31 */
    *value = op - 0x30;
    return 1;
  }
  if (op >= 0x70 && op <= 0x8f) { /* breg0..breg31 */
    if (lagscope__cfi_register_value(f, op - 0x70, &reg_value) != 0) return -1;
    *value = reg_value + (uint64_t)lagscope__cfi_read_sleb(c);
    return 1;
  }
  switch (op) {
  case 0x03: *value = lagscope__cfi_read_unsigned(c, sizeof(uintptr_t)); return 1; /* addr */
  case 0x08: *value = lagscope__cfi_read_unsigned(c, 1); return 1;                /* const1u */
  case 0x09: *value = (uint64_t)(int8_t)lagscope__cfi_read_unsigned(c, 1); return 1;
  case 0x0a: *value = lagscope__cfi_read_unsigned(c, 2); return 1;
  case 0x0b: *value = (uint64_t)(int16_t)lagscope__cfi_read_unsigned(c, 2); return 1;
  case 0x0c: *value = lagscope__cfi_read_unsigned(c, 4); return 1;
  case 0x0d: *value = (uint64_t)(int32_t)lagscope__cfi_read_unsigned(c, 4); return 1;
  case 0x0e: case 0x0f: *value = lagscope__cfi_read_unsigned(c, 8); return 1;
  case 0x10: *value = lagscope__cfi_read_uleb(c); return 1;           /* constu */
  case 0x11: *value = (uint64_t)lagscope__cfi_read_sleb(c); return 1; /* consts */
  case 0x92: {                                                         /* bregx */
    uint64_t reg = lagscope__cfi_read_uleb(c);
    if (lagscope__cfi_register_value(f, reg, &reg_value) != 0) return -1;
    *value = reg_value + (uint64_t)lagscope__cfi_read_sleb(c);
    return 1;
  }
  case 0x12: /* dup */
    if (depth == 0) return -1;
    *value = stack[depth - 1];
    return 1;
  case 0x14: /* over */
    if (depth < 2) return -1;
    *value = stack[depth - 2];
    return 1;
  case 0x15: { /* pick */
    uint8_t i = (uint8_t)lagscope__cfi_read_unsigned(c, 1);
    if (i >= depth) return -1;
    *value = stack[depth - 1 - i];
    return 1;
  }
  default: return 0;
  }
}

/* skip, and bra (skip when the top is not 0, which it pops): never out of the expression,
 * which starts at `at`. 0, or -1. */
static int branch(lagscope__cfi_cursor *c, uintptr_t at, uint8_t op, const uint64_t *stack,
                  unsigned *depth) {
  int16_t skip = (int16_t)lagscope__cfi_read_unsigned(c, 2);
  if (op == 0x28 && *depth == 0) return -1;
  if (op == 0x28 && stack[--*depth] == 0) return 0;
  if ((skip < 0 && (uintptr_t)-skip > c->at - at) ||
      (skip > 0 && (uintptr_t)skip > c->end - c->at))
    return -1; /* out of the expression */
  c->at += (uintptr_t)(intptr_t)skip;
  return 0;
}

/* The operations that work on the stack in place: drop, swap, rot, deref, abs, neg, not,
 * plus_uconst, the branches, nop, and the binary operators. 0, or -1 when it cannot be
 * evaluated. */
static int stack_op(const lagscope__cfi_memory *m, lagscope__cfi_cursor *c, uintptr_t at,
                    uint8_t op, uint64_t *stack, unsigned *depth_io) {
  unsigned depth = *depth_io;
  uint64_t value;
  switch (op) {
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
    stack[depth - 1] += lagscope__cfi_read_uleb(c);
    break;
  case 0x2f: /* skip */
  case 0x28: /* bra: skip when the top is not 0 */
    if (branch(c, at, op, stack, &depth) != 0) return -1;
    break;
  case 0x96: break; /* nop */
  default: {
    if (depth < 2 || binary_op(op, stack[depth - 2], stack[depth - 1], &value) != 0)
      return -1;
    stack[depth - 2] = value;
    depth--;
    break;
  }
  }
  *depth_io = depth;
  return 0;
}

/* One operation at a time, pushed or worked in place (cfi.h). */
int lagscope__cfi_evaluate(const lagscope__cfi_frame *f, const lagscope__cfi_memory *m,
                           uintptr_t at, uint32_t len, int push_initial, uintptr_t initial,
                           uintptr_t *out) {
  uint64_t stack[EXPRESSION_STACK];
  unsigned depth = 0;
  if (push_initial) stack[depth++] = initial;
  lagscope__cfi_cursor c;
  lagscope__cfi_cursor_init(&c, m, at, at + len);
  for (unsigned steps = 0; c.at < c.end; steps++) {
    if (steps == EXPRESSION_STEPS) return -1;
    uint8_t op = lagscope__cfi_next_byte(&c);
    uint64_t value = 0;
    int push = pushed_value(f, &c, op, stack, depth, &value);
    if (push < 0 || (push == 0 && stack_op(m, &c, at, op, stack, &depth) != 0)) return -1;
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
