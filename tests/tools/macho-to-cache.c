/*
 * macho-to-cache — lays a Mach-O file out as an image in a dyld shared cache is laid out, for
 * the tests of core/darwin/macho.c on Linux:
 *
 *   macho-to-cache [--strip-locals] N IN OUT
 *
 * OUT is N filler bytes, then IN; every file offset in IN's load commands (segments, sections,
 * relocations, symbol and string tables, dysymtab, dyld info, linkedit data such as function
 * starts) gets N added, so that it counts from OUT's start, as the cache builder rewrites them.
 * --strip-locals: the local symbols and debugger entries are blanked (n_type 0), as the cache
 * builder moves them out of the in-memory table. Exit 0, 1 on an unreadable or unknown file,
 * 2 on bad usage.
 */
#include "macho.h"
#include "macho_load.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LC_DYSYMTAB 0xbu
#define LC_CODE_SIGNATURE 0x1du
#define LC_SEGMENT_SPLIT_INFO 0x1eu
#define LC_DYLD_INFO 0x22u
#define LC_DYLD_INFO_ONLY 0x80000022u
#define LC_DATA_IN_CODE 0x29u
#define LC_DYLIB_CODE_SIGN_DRS 0x2bu
#define LC_LINKER_OPTIMIZATION_HINT 0x2eu
#define LC_DYLD_EXPORTS_TRIE 0x80000033u
#define LC_DYLD_CHAINED_FIXUPS 0x80000034u

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Adds n to the 32-bit offset at p, unless it is 0 (no table). */
static void shift32(unsigned char *p, uint32_t n) {
  if (get32(p) != 0) put32(p, get32(p) + n);
}

static void shift_segment(unsigned char *c, uint32_t n) {
  lagscope__segment_command_64 seg;
  memcpy(&seg, c, sizeof(seg));
  if (seg.filesize != 0) seg.fileoff += n;
  memcpy(c, &seg, sizeof(seg));
  for (uint32_t i = 0; i < seg.nsects; i++) {
    unsigned char *s = c + sizeof(seg) + (size_t)i * sizeof(lagscope__section_64);
    shift32(s + offsetof(lagscope__section_64, offset), n);
    shift32(s + offsetof(lagscope__section_64, reloff), n);
  }
}

static void strip_locals(unsigned char *file, const lagscope__symtab_command *st) {
  for (uint32_t i = 0; i < st->nsyms; i++) {
    unsigned char *p = file + st->symoff + (size_t)i * sizeof(lagscope__nlist_64);
    lagscope__nlist_64 n;
    memcpy(&n, p, sizeof(n));
    if ((n.n_type & LAGSCOPE__N_STAB) != 0 || (n.n_type & LAGSCOPE__N_EXT) == 0) {
      memset(&n, 0, sizeof(n));
      memcpy(p, &n, sizeof(n));
    }
  }
}

/* Shifts command c; 0, or -1 when it is outside the commands. */
static int shift_command(unsigned char *file, size_t size, unsigned char *c, uint32_t n,
                         int strip) {
  uint32_t cmd = get32(c), cmdsize = get32(c + 4);
  if (cmd == LAGSCOPE__LC_SEGMENT_64) {
    lagscope__segment_command_64 seg;
    memcpy(&seg, c, sizeof(seg));
    if (cmdsize < sizeof(seg) + (uint64_t)seg.nsects * sizeof(lagscope__section_64)) return -1;
    shift_segment(c, n);
  } else if (cmd == LAGSCOPE__LC_SYMTAB) {
    lagscope__symtab_command st;
    memcpy(&st, c, sizeof(st));
    if (st.symoff > size || st.nsyms > (size - st.symoff) / sizeof(lagscope__nlist_64))
      return -1;
    if (strip) strip_locals(file, &st);
    shift32(c + 8, n), shift32(c + 16, n); /* symoff, stroff */
  } else if (cmd == LC_DYSYMTAB) {
    for (int field = 0; field < 6; field++) /* toc, modtab, extrefsym, indirectsym, extrel, locrel */
      shift32(c + 32 + field * 8, n);
  } else if (cmd == LC_DYLD_INFO || cmd == LC_DYLD_INFO_ONLY) {
    for (int field = 0; field < 5; field++) shift32(c + 8 + field * 8, n); /* rebase ... export */
  } else if (cmd == LC_CODE_SIGNATURE || cmd == LC_SEGMENT_SPLIT_INFO ||
             cmd == LAGSCOPE__LC_FUNCTION_STARTS || cmd == LC_DATA_IN_CODE ||
             cmd == LC_DYLIB_CODE_SIGN_DRS || cmd == LC_LINKER_OPTIMIZATION_HINT ||
             cmd == LC_DYLD_EXPORTS_TRIE || cmd == LC_DYLD_CHAINED_FIXUPS) {
    shift32(c + 8, n); /* dataoff */
  }
  return 0;
}

int main(int argc, char **argv) {
  int strip = argc > 1 && strcmp(argv[1], "--strip-locals") == 0;
  if (argc != 4 + strip) {
    fprintf(stderr, "usage: macho-to-cache [--strip-locals] N IN OUT\n");
    return 2;
  }
  uint32_t n = (uint32_t)strtoul(argv[1 + strip], NULL, 0);
  char why[256] = "";
  size_t size = 0;
  unsigned char *file = macho_read_file(argv[2 + strip], &size, why, sizeof(why));
  lagscope__mach_header_64 mh;
  if (file == NULL || size < sizeof(mh)) {
    fprintf(stderr, "macho-to-cache: %s\n", file == NULL ? why : "too short");
    return 1;
  }
  memcpy(&mh, file, sizeof(mh));
  size_t offset = sizeof(mh), end = sizeof(mh) + (size_t)mh.sizeofcmds;
  int bad = mh.magic != LAGSCOPE__MH_MAGIC_64 || end > size;
  for (uint32_t i = 0; i < mh.ncmds && !bad; i++) {
    uint32_t cmdsize = end - offset >= 8 ? get32(file + offset + 4) : 0;
    bad = cmdsize < 8 || cmdsize > end - offset ||
          shift_command(file, size, file + offset, n, strip) != 0;
    offset += cmdsize;
  }
  FILE *out = bad ? NULL : fopen(argv[3 + strip], "wb");
  int ok = out != NULL;
  for (uint32_t i = 0; ok && i < n; i++) ok = fputc(0xa5, out) != EOF;
  ok = ok && fwrite(file, 1, size, out) == size;
  if (out != NULL) ok = fclose(out) == 0 && ok;
  if (!ok) fprintf(stderr, "macho-to-cache: %s\n", bad ? "not a 64-bit Mach-O file" : "cannot write");
  free(file);
  return ok ? 0 : 1;
}
