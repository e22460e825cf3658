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

int lagscope__linux_follows_call(const uint8_t *code, size_t len_before) {
  if (len_before >= 5 && code[len_before - 5] == 0xE8) return 1; /* call rel32 */
  for (size_t back = 2; back <= 7 && back <= len_before; back++)
    if (indirect_call_length(code + len_before - back, back) == back) return 1;
  return 0;
}
#elif defined(__aarch64__)
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
#else
#error "lagscope: capture supports Linux on x86_64 and aarch64"
#endif
