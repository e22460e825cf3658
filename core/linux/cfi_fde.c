/*
 * Finding the unwind info for a pc, for the DWARF CFI step (cfi.h): .eh_frame_hdr's sorted
 * table searched for the FDE that covers it, then the FDE and its CIE parsed into what a step
 * needs (the code it covers, the factors, the return address column, where the instructions
 * lie). CIE versions 1, 3 and 4 with the augmentations compilers write (z R P L S B G); no
 * 64-bit .eh_frame. No allocation, no lock.
 */
#include "cfi.h"

#include <string.h>

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
  lagscope__cfi_cursor c;
  lagscope__cfi_cursor_init(&c, m, record, record + 8);
  uint32_t length = (uint32_t)lagscope__cfi_read_unsigned(&c, 4);
  if (c.failed || length == 0 || length == 0xffffffffu) return -1; /* no 64-bit .eh_frame */
  c.end = record + 4 + length;
  if (lagscope__cfi_read_unsigned(&c, 4) != 0) return -1; /* an FDE, not a CIE */
  uint8_t version = lagscope__cfi_next_byte(&c);
  if (version != 1 && version != 3 && version != 4) return -1;
  char augmentation[8];
  size_t len = 0;
  for (uint8_t b; (b = lagscope__cfi_next_byte(&c)) != 0 && !c.failed;) {
    if (len + 1 == sizeof(augmentation)) return -1;
    augmentation[len++] = (char)b;
  }
  augmentation[len] = '\0';
  if (version == 4 && (lagscope__cfi_next_byte(&c) != sizeof(uintptr_t) ||
                       lagscope__cfi_next_byte(&c) != 0))
    return -1; /* address size, segment selector size */
  fde->encoding = LAGSCOPE__CFI_PE_ABSPTR;
  fde->signal_frame = 0;
  fde->code_align = lagscope__cfi_read_uleb(&c);
  fde->data_align = lagscope__cfi_read_sleb(&c);
  fde->return_address =
      version == 1 ? lagscope__cfi_next_byte(&c) : (uint32_t)lagscope__cfi_read_uleb(&c);
  *has_augmentation_data = augmentation[0] == 'z';
  if (augmentation[0] == 'z') {
    uint64_t data_len = lagscope__cfi_read_uleb(&c);
    uintptr_t data_start = c.at;
    lagscope__cfi_skip_bytes(&c, data_len);
    uintptr_t data_end = c.at;
    c.at = data_start;
    for (const char *a = augmentation + 1; *a != '\0' && c.at < data_end && !c.failed; a++) {
      switch (*a) {
      case 'R': fde->encoding = lagscope__cfi_next_byte(&c); break;
      case 'L': lagscope__cfi_next_byte(&c); break; /* the LSDA's encoding: exceptions only */
      case 'P': /* the personality routine */
        lagscope__cfi_read_encoded(&c, lagscope__cfi_next_byte(&c), 0);
        break;
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
  lagscope__cfi_cursor c;
  lagscope__cfi_cursor_init(&c, m, record, record + 8);
  uint32_t length = (uint32_t)lagscope__cfi_read_unsigned(&c, 4);
  uint32_t cie_offset = (uint32_t)lagscope__cfi_read_unsigned(&c, 4);
  int has_augmentation_data;
  if (c.failed || length == 0 || length == 0xffffffffu || cie_offset == 0 ||
      parse_cie(m, record + 4 - cie_offset, fde, &has_augmentation_data) != 0)
    return -1;
  c.end = record + 4 + length;
  fde->start = lagscope__cfi_read_encoded(&c, fde->encoding, 0);
  /* The range is a length: the form without what it is relative to. */
  fde->end = fde->start + lagscope__cfi_read_encoded(&c, fde->encoding & 0x0f, 0);
  if (has_augmentation_data) {
    lagscope__cfi_skip_bytes(&c, lagscope__cfi_read_uleb(&c));
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
      head[1] != (LAGSCOPE__CFI_PE_PCREL | LAGSCOPE__CFI_PE_SDATA4) ||
      head[2] != LAGSCOPE__CFI_PE_UDATA4 ||
      head[3] != (LAGSCOPE__CFI_PE_DATAREL | LAGSCOPE__CFI_PE_SDATA4))
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
