/* Is this a return address? A word found on a stack is taken for one only when the
 * instruction just before it is a call (Breakpad's stack scanner checks that it lies in code;
 * this also checks the instruction), so that a stale pointer into code, left in a local, is not
 * taken for a frame. Pure functions over bytes the caller read with checked reads. */
#include "linux.h"

#if defined(__x86_64__)
/* The length of a `call r/m64` (FF /2) whose opcode is code[0], or 0 when it is not one. */
static size_t indirect_call_length(const uint8_t *code, size_t available) {
  if (available < 2 || code[0] != 0xFF) return 0;
  uint8_t modrm = code[1];
  if (((modrm >> 3) & 7) != 2) return 0; /* FF /2 is call; /4 jmp, /6 push, ... */
  unsigned mod = modrm >> 6, rm = modrm & 7;
  size_t length = 2;
  if (mod == 3) return length; /* call reg */
  if (rm == 4) {               /* a SIB byte follows */
    if (available < 3) return 0;
    length++;
    if (mod == 0 && (code[2] & 7) == 5) length += 4; /* no base: disp32 */
  } else if (mod == 0 && rm == 5) {
    length += 4; /* [rip + disp32] */
  }
  if (mod == 1) length += 1;
  if (mod == 2) length += 4;
  return length;
}

long lagscope__linux_frame_pointer_offset(const uint8_t *code, size_t len) {
  size_t at = 0;
  if (len >= 4 && code[0] == 0xF3 && code[1] == 0x0F && code[2] == 0x1E && code[3] == 0xFA)
    at = 4; /* endbr64 */
  if (at + 4 > len || code[at] != 0x55) return -1; /* push %rbp */
  at++;
  int mov_rsp_rbp = code[at] == 0x48 && ((code[at + 1] == 0x89 && code[at + 2] == 0xE5) ||
                                         (code[at + 1] == 0x8B && code[at + 2] == 0xEC));
  if (!mov_rsp_rbp) return -1;
  at += 3;
  long offset = 0;
  for (;;) { /* pushes of callee-saved registers (rbx, r12..r15), and register moves between */
    if (at < len && code[at] == 0x53) {
      offset += 8, at += 1;
    } else if (at + 1 < len && code[at] == 0x41 && code[at + 1] >= 0x54 && code[at + 1] <= 0x57) {
      offset += 8, at += 2;
    } else if (at + 2 < len && (code[at] & 0xF0) == 0x40 &&
               (code[at + 1] == 0x89 || code[at + 1] == 0x8B) && code[at + 2] >= 0xC0) {
      at += 3; /* mov %reg64, %reg64 (an argument kept in a callee-saved register) */
    } else if (at + 1 < len && (code[at] == 0x89 || code[at] == 0x8B) && code[at + 1] >= 0xC0) {
      at += 2; /* mov %reg32, %reg32 */
    } else {
      break;
    }
  }
  if (at + 4 <= len && code[at] == 0x48 && code[at + 1] == 0x83 && code[at + 2] == 0xEC)
    return offset + code[at + 3]; /* sub $imm8, %rsp */
  if (at + 7 <= len && code[at] == 0x48 && code[at + 1] == 0x81 && code[at + 2] == 0xEC) {
    uint32_t n = (uint32_t)code[at + 3] | (uint32_t)code[at + 4] << 8 |
                 (uint32_t)code[at + 5] << 16 | (uint32_t)code[at + 6] << 24;
    return n < (1u << 24) ? offset + (long)n : -1; /* sub $imm32, %rsp */
  }
  return offset; /* no locals */
}

int lagscope__linux_follows_call(const uint8_t *code, size_t len_before) {
  if (len_before >= 5 && code[len_before - 5] == 0xE8) return 1; /* call rel32 */
  for (size_t back = 2; back <= 7 && back <= len_before; back++)
    if (indirect_call_length(code + len_before - back, back) == back) return 1;
  return 0;
}
int lagscope__linux_direct_call_target(const uint8_t *code, size_t len_before,
                                       uintptr_t return_address, uintptr_t *target) {
  if (len_before < 5 || code[len_before - 5] != 0xE8) return 0;
  const uint8_t *rel = code + len_before - 4;
  int32_t offset = (int32_t)((uint32_t)rel[0] | (uint32_t)rel[1] << 8 | (uint32_t)rel[2] << 16 |
                             (uint32_t)rel[3] << 24);
  *target = return_address + (uintptr_t)(intptr_t)offset;
  return 1;
}

int lagscope__linux_plt_slot(const uint8_t *code, size_t len, uintptr_t address,
                             uintptr_t *slot) {
  size_t at = 0;
  if (len >= 4 && code[0] == 0xF3 && code[1] == 0x0F && code[2] == 0x1E && code[3] == 0xFA)
    at = 4;                                  /* endbr64 */
  if (at < len && code[at] == 0xF2) at++;    /* bnd */
  if (at + 6 > len || code[at] != 0xFF || code[at + 1] != 0x25) return 0; /* jmp *disp(%rip) */
  const uint8_t *d = code + at + 2;
  int32_t disp = (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
                           (uint32_t)d[3] << 24);
  *slot = address + at + 6 + (uintptr_t)(intptr_t)disp;
  return 1;
}

#elif defined(__aarch64__)
long lagscope__linux_frame_pointer_offset(const uint8_t *code, size_t len) {
  (void)code, (void)len;
  return -1; /* not decoded here: the scan finds aarch64's frame records */
}

int lagscope__linux_follows_call(const uint8_t *code, size_t len_before) {
  if (len_before < 4) return 0;
  const uint8_t *p = code + len_before - 4; /* little-endian instruction words */
  uint32_t insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                  (uint32_t)p[3] << 24;
  if ((insn & 0xFC000000u) == 0x94000000u) return 1; /* bl imm26 */
  if ((insn & 0xFFFFFC1Fu) == 0xD63F0000u) return 1; /* blr xN */
  if ((insn & 0xFEFFF800u) == 0xD63F0800u) return 1; /* blraa/blrab (and blraaz/blrabz) */
  return 0;
}

int lagscope__linux_direct_call_target(const uint8_t *code, size_t len_before,
                                       uintptr_t return_address, uintptr_t *target) {
  if (len_before < 4) return 0;
  const uint8_t *p = code + len_before - 4;
  uint32_t insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                  (uint32_t)p[3] << 24;
  if ((insn & 0xFC000000u) != 0x94000000u) return 0; /* bl imm26 */
  int32_t words = (int32_t)(insn << 6) >> 6;          /* sign-extended imm26 */
  *target = return_address - 4 + (uintptr_t)((intptr_t)words * 4);
  return 1;
}

int lagscope__linux_plt_slot(const uint8_t *code, size_t len, uintptr_t address,
                             uintptr_t *slot) {
  (void)code, (void)len, (void)address, (void)slot;
  return 0; /* aarch64's PLT (adrp, ldr, add, br) is not followed: such calls are accepted */
}
#else
#error "lagscope: capture supports Linux on x86_64 and aarch64"
#endif
