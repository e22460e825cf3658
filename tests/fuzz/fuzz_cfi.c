/* libFuzzer target for the DWARF CFI step (core/linux/cfi*.c): the .eh_frame_hdr lookup, the
 * CIE and FDE parsers, the DW_CFA interpreter and the DWARF expression evaluator, on anybody's
 * bytes. The input is an .eh_frame (its first 2 bytes: where the FDE the table points at
 * starts; the next 2: the pc's offset in the code it covers; the rest: the section) followed,
 * past byte 1024 when it is that long, by the stack the rules read. The harness builds the
 * .eh_frame_hdr. Besides the sanitizers' checks:
 *   - every read the step makes goes through the memory function (which refuses anything
 *     outside the input's section and stack), so nothing else is ever touched;
 *   - a step that says STEPPED leaves a known pc and stack pointer.
 * Build and run: tests/fuzz/run-fuzz BUILD_DIR [SECONDS] cfi. */
#define _GNU_SOURCE
#include "linux.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INVARIANT(cond)                                                                 \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "fuzz_cfi: invariant broken: %s (line %d)\n", #cond, __LINE__);   \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

#define SECTION_MAX 1024
#define STACK_MAX 512
#define HDR_BYTES 20 /* the header and its one table entry */

static _Alignas(16) uint8_t hdr_and_section[HDR_BYTES + SECTION_MAX];
static size_t image_len;
static _Alignas(16) uint8_t stack[STACK_MAX];
static size_t stack_len;

static int within(uintptr_t address, size_t bytes, const uint8_t *start, size_t len) {
  uintptr_t lo = (uintptr_t)start;
  return address >= lo && address - lo <= len && bytes <= len - (address - lo);
}

static int read_input(void *context, uintptr_t address, void *out, size_t bytes) {
  (void)context;
  if (!within(address, bytes, hdr_and_section, image_len) &&
      !within(address, bytes, stack, stack_len))
    return -1;
  memcpy(out, (const void *)address, bytes);
  return 0;
}

static void put32(uint8_t *at, uint32_t v) { memcpy(at, &v, 4); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  size_t fde_offset = (size_t)(data[0] | data[1] << 8), pc_offset = (size_t)(data[2] | data[3] << 8);
  data += 4, size -= 4;
  size_t section = size < SECTION_MAX ? size : SECTION_MAX;
  memset(hdr_and_section, 0, sizeof(hdr_and_section));
  memcpy(hdr_and_section + HDR_BYTES, data, section);
  image_len = HDR_BYTES + section;
  stack_len = size - section < STACK_MAX ? size - section : STACK_MAX;
  memcpy(stack, data + section, stack_len);
  /* The header: version 1, eh_frame_ptr pcrel|sdata4, count udata4, table datarel|sdata4;
   * one entry: the code at the FDE's own pc_begin is unknown, so the entry says "from 0". */
  uint8_t *h = hdr_and_section;
  h[0] = 1, h[1] = 0x1b, h[2] = 0x03, h[3] = 0x3b;
  put32(h + 4, (uint32_t)(HDR_BYTES - 4));
  put32(h + 8, 1);
  put32(h + 12, (uint32_t)(int32_t)(0 - (intptr_t)h)); /* initial location: address 0 */
  put32(h + 16, (uint32_t)(HDR_BYTES + fde_offset % (section + 1)));
  lagscope__cfi_memory m = {read_input, NULL};
  lagscope__cfi_fde fde;
  /* Whatever the FDE says it covers: its first byte plus the offset. Find looks it up. */
  uintptr_t pc = 0 + pc_offset;
  if (lagscope__cfi_find((uintptr_t)h, pc, &m, &fde) != 0) {
    /* Parse what the entry points at for any pc: the step on it still runs. */
    return 0;
  }
  lagscope__cfi_frame frame = {.known = ~(uint64_t)0};
  for (int i = 0; i < LAGSCOPE__CFI_REGISTERS; i++) frame.registers[i] = (uintptr_t)stack + 8u * (uintptr_t)i;
  frame.registers[LAGSCOPE__CFI_PC] = pc;
  enum lagscope__cfi_result r = lagscope__cfi_step(&frame, &fde, pc, &m);
  INVARIANT(r == LAGSCOPE__CFI_STEPPED || r == LAGSCOPE__CFI_END || r == LAGSCOPE__CFI_FAILED);
  if (r == LAGSCOPE__CFI_STEPPED)
    INVARIANT((frame.known >> LAGSCOPE__CFI_PC & 1) && (frame.known >> LAGSCOPE__CFI_SP & 1));
  lagscope__cfi_step_frame_pointer(&frame, &m);
  return 0;
}
