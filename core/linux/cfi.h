/* What the DWARF CFI step's files share, and no other file: the cursor every record is read
 * through, the pointer encodings, and the calls the step makes of the evaluator. The rest of
 * the port sees linux.h's lagscope__cfi_ calls. The files, in the order a step needs them:
 *
 *   cfi_cursor.c      reading: a cursor over a record, a window of it at a time; LEB128 and
 *                     encoded pointers
 *   cfi_fde.c         the FDE for a pc, through .eh_frame_hdr's table, with its CIE
 *   cfi.c             the rules (the DW_CFA interpreter) and the step; registers, the signal
 *                     return, the frame-pointer step
 *   cfi_expression.c  DWARF expressions: the subset .eh_frame uses
 *
 * Like linux.h, this header needs nothing of the core (tests and fuzzers build these files
 * alone). Tags as in internal.h: every function here is F, no allocation, no lock. */
#ifndef LAGSCOPE_LINUX_CFI_H
#define LAGSCOPE_LINUX_CFI_H

#include "linux.h"

#include <stddef.h>
#include <stdint.h>

/* ---- cfi_cursor.c ---- */

typedef struct lagscope__cfi_cursor {
  const lagscope__cfi_memory *memory;
  uintptr_t at, end; /* the next byte; the end of what may be read */
  uintptr_t window_start;
  size_t window_len;
  int failed; /* a read failed or went past end: every value after it is 0 */
  uint8_t window[64];
} lagscope__cfi_cursor;

/* A cursor over [at, end) (failed at once when at > end). F */
void lagscope__cfi_cursor_init(lagscope__cfi_cursor *c, const lagscope__cfi_memory *memory,
                               uintptr_t at, uintptr_t end);
/* The next byte, or 0 with c->failed set. F */
uint8_t lagscope__cfi_next_byte(lagscope__cfi_cursor *c);
/* Past len bytes, which must lie before the end: a length near 2^64 would wrap the cursor back
 * and make a loop of any record. F */
void lagscope__cfi_skip_bytes(lagscope__cfi_cursor *c, uint64_t len);
/* bytes bytes, little-endian (both targets). F */
uint64_t lagscope__cfi_read_unsigned(lagscope__cfi_cursor *c, size_t bytes);
uint64_t lagscope__cfi_read_uleb(lagscope__cfi_cursor *c); /* F */
int64_t lagscope__cfi_read_sleb(lagscope__cfi_cursor *c);  /* F */

/* DW_EH_PE_* pointer encodings (LSB): the form in the low nibble, what it is relative to in the
 * high one. */
#define LAGSCOPE__CFI_PE_OMIT 0xff
#define LAGSCOPE__CFI_PE_ABSPTR 0x00
#define LAGSCOPE__CFI_PE_ULEB128 0x01
#define LAGSCOPE__CFI_PE_UDATA2 0x02
#define LAGSCOPE__CFI_PE_UDATA4 0x03
#define LAGSCOPE__CFI_PE_UDATA8 0x04
#define LAGSCOPE__CFI_PE_SLEB128 0x09
#define LAGSCOPE__CFI_PE_SDATA2 0x0a
#define LAGSCOPE__CFI_PE_SDATA4 0x0b
#define LAGSCOPE__CFI_PE_SDATA8 0x0c
#define LAGSCOPE__CFI_PE_PCREL 0x10
#define LAGSCOPE__CFI_PE_DATAREL 0x30
#define LAGSCOPE__CFI_PE_INDIRECT 0x80

/* An encoded pointer at the cursor. datarel: what DW_EH_PE_datarel is relative to (the
 * .eh_frame_hdr; 0 where it means nothing). Relative forms other than pc and data are refused:
 * no compiler writes them in .eh_frame. F */
uintptr_t lagscope__cfi_read_encoded(lagscope__cfi_cursor *c, uint8_t encoding,
                                     uintptr_t datarel);

/* ---- cfi.c ---- */

/* Register reg of frame f, when it is known: 0, or -1. F */
int lagscope__cfi_register_value(const lagscope__cfi_frame *f, uint64_t reg, uintptr_t *value);

/* ---- cfi_expression.c ---- */

/* Evaluates the expression at [at, at + len) for frame f, with `initial` pushed first when
 * push_initial (the CFA, for register rules). 0 and the top of the stack in *out, or -1. F */
int lagscope__cfi_evaluate(const lagscope__cfi_frame *f, const lagscope__cfi_memory *m,
                           uintptr_t at, uint32_t len, int push_initial, uintptr_t initial,
                           uintptr_t *out);

#endif /* LAGSCOPE_LINUX_CFI_H */
