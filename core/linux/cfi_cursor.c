/*
 * Reading for the DWARF CFI step (cfi.h): a cursor over a record of .eh_frame, a window of it
 * at a time, so that a record of any size is read without a buffer its size; the integers
 * and LEB128 numbers of the records, and their encoded pointers. Every byte comes through the
 * caller's read function. No allocation, no lock.
 */
#include "cfi.h"

void lagscope__cfi_cursor_init(lagscope__cfi_cursor *c, const lagscope__cfi_memory *memory,
                               uintptr_t at, uintptr_t end) {
  c->memory = memory;
  c->at = at, c->end = end;
  c->window_start = 0, c->window_len = 0;
  c->failed = at > end;
}

uint8_t lagscope__cfi_next_byte(lagscope__cfi_cursor *c) {
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

/* Refused past the end (cfi.h). */
void lagscope__cfi_skip_bytes(lagscope__cfi_cursor *c, uint64_t len) {
  if (c->failed || c->at > c->end || len > c->end - c->at)
    c->failed = 1;
  else
    c->at += (uintptr_t)len;
}

uint64_t lagscope__cfi_read_unsigned(lagscope__cfi_cursor *c, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; i++) value |= (uint64_t)lagscope__cfi_next_byte(c) << (8 * i);
  return value;
}

uint64_t lagscope__cfi_read_uleb(lagscope__cfi_cursor *c) {
  uint64_t value = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t b = lagscope__cfi_next_byte(c);
    if (shift < 64) value |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80) || c->failed) return value;
  }
}

int64_t lagscope__cfi_read_sleb(lagscope__cfi_cursor *c) {
  uint64_t value = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    b = lagscope__cfi_next_byte(c);
    if (shift < 64) value |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) && !c->failed);
  if (shift < 64 && (b & 0x40)) value |= ~(uint64_t)0 << shift;
  return (int64_t)value;
}

/* The form, then what it is relative to, then an indirection (cfi.h). */
uintptr_t lagscope__cfi_read_encoded(lagscope__cfi_cursor *c, uint8_t encoding,
                                     uintptr_t datarel) {
  if (encoding == LAGSCOPE__CFI_PE_OMIT) return 0;
  uintptr_t field = c->at;
  uint64_t value;
  switch (encoding & 0x0f) {
  case LAGSCOPE__CFI_PE_ABSPTR: value = lagscope__cfi_read_unsigned(c, sizeof(uintptr_t)); break;
  case LAGSCOPE__CFI_PE_ULEB128: value = lagscope__cfi_read_uleb(c); break;
  case LAGSCOPE__CFI_PE_UDATA2: value = lagscope__cfi_read_unsigned(c, 2); break;
  case LAGSCOPE__CFI_PE_UDATA4: value = lagscope__cfi_read_unsigned(c, 4); break;
  case LAGSCOPE__CFI_PE_UDATA8: value = lagscope__cfi_read_unsigned(c, 8); break;
  case LAGSCOPE__CFI_PE_SLEB128: value = (uint64_t)lagscope__cfi_read_sleb(c); break;
  case LAGSCOPE__CFI_PE_SDATA2:
    value = (uint64_t)(int64_t)(int16_t)lagscope__cfi_read_unsigned(c, 2);
    break;
  case LAGSCOPE__CFI_PE_SDATA4:
    value = (uint64_t)(int64_t)(int32_t)lagscope__cfi_read_unsigned(c, 4);
    break;
  case LAGSCOPE__CFI_PE_SDATA8: value = lagscope__cfi_read_unsigned(c, 8); break;
  default: c->failed = 1; return 0;
  }
  switch (encoding & 0x70) {
  case 0: break;
  case LAGSCOPE__CFI_PE_PCREL: value += field; break;
  case LAGSCOPE__CFI_PE_DATAREL:
    if (datarel == 0) c->failed = 1;
    value += datarel;
    break;
  default: c->failed = 1; return 0;
  }
  if (encoding & LAGSCOPE__CFI_PE_INDIRECT) {
    uintptr_t target = 0;
    if (c->memory->read(c->memory->context, (uintptr_t)value, &target, sizeof(target)) != 0)
      c->failed = 1;
    value = target;
  }
  return (uintptr_t)value;
}
