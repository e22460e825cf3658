/*
 * The Mach-O index (core/darwin/macho.c) on broken images: a real zig-built image, laid out the way
 * dyld does, then copied into a heap block of exactly its size (so that AddressSanitizer sees a
 * read past it) and damaged one field at a time: bad magic, 32-bit and fat files, truncated
 * mappings, load commands past sizeofcmds, a symbol table outside __LINKEDIT, nsyms huge, a
 * wrong slide... Each must be refused with a sentence; a garbled name or a stab must cost only
 * that symbol. Then a few thousand random byte flips in the commands and the symbol table:
 * refused or indexed, never a read out of bounds. Run under -fsanitize=address,undefined.
 *
 * Usage: test_macho_corrupt FILE   (exit 77 when FILE is missing)
 */
#include "check.h"
#include "internal.h"
#include "macho.h"
#include "macho_load.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char *pristine; /* the image as loaded */
static unsigned char *image;           /* its damaged copy: exactly size bytes on the heap */
static size_t size;
static uint64_t lowest;                /* __TEXT's vmaddr */

static uintptr_t slide_of(const unsigned char *at) { return (uintptr_t)at - (uintptr_t)lowest; }

static void restore(void) { memcpy(image, pristine, size); }

/* Offsets in the image of the command cmd (and segment segname), or 0. */
static size_t find_command(uint32_t cmd, const char *segname) {
  lagscope__mach_header_64 mh;
  memcpy(&mh, image, sizeof(mh));
  size_t offset = sizeof(mh);
  for (uint32_t i = 0; i < mh.ncmds; i++) {
    lagscope__segment_command_64 seg;
    memcpy(&seg, image + offset, sizeof(lagscope__load_command));
    if (seg.cmd == cmd && segname == NULL) return offset;
    if (seg.cmd == cmd) {
      memcpy(&seg, image + offset, sizeof(seg));
      if (strncmp(seg.segname, segname, 16) == 0) return offset;
    }
    offset += seg.cmdsize;
  }
  CHECK_MSG(0, "command 0x%x %s not found", cmd, segname ? segname : "");
  return 0;
}

/* A field of a struct at offset, read and written through memcpy (offsets are unaligned). */
static uint32_t get32(size_t at) {
  uint32_t v;
  memcpy(&v, image + at, 4);
  return v;
}
static void put32(size_t at, uint32_t v) { memcpy(image + at, &v, 4); }
static uint64_t get64(size_t at) {
  uint64_t v;
  memcpy(&v, image + at, 8);
  return v;
}
static void put64(size_t at, uint64_t v) { memcpy(image + at, &v, 8); }

#define FIELD(type, member) offsetof(type, member)

/* Indexes the damaged copy: must be refused with a sentence that contains words. */
static void expect_refused(const char *what, size_t mapped, uintptr_t slide, const char *words) {
  lagscope__macho_image *img = (lagscope__macho_image *)1;
  char why[256] = "";
  int rc = lagscope__macho_image_index(image, mapped, slide, "damaged", &img, why, sizeof(why));
  CHECK_MSG(rc == LAGSCOPE_EPARSE && img == NULL, "%s: not refused (rc %d)", what, rc);
  CHECK_MSG(strstr(why, words) != NULL, "%s: the sentence \"%s\" does not say \"%s\"", what, why,
            words);
  printf("%-40s refused: %s\n", what, why);
  restore();
}

static lagscope__macho_image *expect_indexed(const char *what) {
  lagscope__macho_image *img = NULL;
  char why[256] = "";
  int rc = lagscope__macho_image_index(image, size, slide_of(image), "damaged", &img, why,
                                       sizeof(why));
  CHECK_MSG(rc == 0, "%s: refused: %s", what, why);
  return img;
}

static void bad_headers(void) {
  uintptr_t slide = slide_of(image);
  uint32_t sizeofcmds = get32(FIELD(lagscope__mach_header_64, sizeofcmds));
  expect_refused("16 bytes mapped", 16, slide, "too few");
  expect_refused("commands cut short", sizeof(lagscope__mach_header_64) + sizeofcmds - 1, slide,
                 "past the");
  put32(0, 0x12345678);
  expect_refused("bad magic", size, slide, "not a Mach-O image");
  put32(0, LAGSCOPE__MH_MAGIC);
  expect_refused("32-bit", size, slide, "32-bit");
  put32(0, LAGSCOPE__FAT_CIGAM);
  expect_refused("fat", size, slide, "fat");
  put32(0, LAGSCOPE__MH_CIGAM_64);
  expect_refused("byte-swapped", size, slide, "byte order");
  put32(FIELD(lagscope__mach_header_64, sizeofcmds), UINT32_MAX);
  expect_refused("sizeofcmds huge", size, slide, "sizeofcmds");
  put32(FIELD(lagscope__mach_header_64, ncmds), get32(FIELD(lagscope__mach_header_64, ncmds)) + 3);
  expect_refused("ncmds past sizeofcmds", size, slide, "starts past sizeofcmds");
  size_t first = sizeof(lagscope__mach_header_64);
  put32(first + FIELD(lagscope__load_command, cmdsize), 0);
  expect_refused("cmdsize 0", size, slide, "cmdsize 0");
  put32(first + FIELD(lagscope__load_command, cmdsize), sizeofcmds + 8);
  expect_refused("cmdsize past sizeofcmds", size, slide, "end within sizeofcmds");
  expect_refused("wrong slide", size, slide + 4096, "wrong slide");
}

static void bad_segments(void) {
  uintptr_t slide = slide_of(image);
  size_t text = find_command(LAGSCOPE__LC_SEGMENT_64, "__TEXT");
  size_t linkedit = find_command(LAGSCOPE__LC_SEGMENT_64, "__LINKEDIT");
  put32(text + FIELD(lagscope__segment_command_64, nsects), 1000);
  expect_refused("nsects past cmdsize", size, slide, "sections");
  put32(text + FIELD(lagscope__segment_command_64, cmdsize), 20);
  expect_refused("segment command too short", size, slide, "less than");
  memcpy(image + linkedit + FIELD(lagscope__segment_command_64, segname), "__TEXT", 7);
  expect_refused("two __TEXT", size, slide, "two __TEXT");
  put64(text + FIELD(lagscope__segment_command_64, vmsize), (uint64_t)1 << 33);
  expect_refused("__TEXT of 8 GB", size, slide, "4 GB");
  memcpy(image + text + FIELD(lagscope__segment_command_64, segname), "__TEXX", 7);
  expect_refused("no __TEXT", size, slide, "no __TEXT");
  uint64_t filesize = get64(linkedit + FIELD(lagscope__segment_command_64, filesize));
  put64(linkedit + FIELD(lagscope__segment_command_64, vmsize), filesize - 1);
  expect_refused("__LINKEDIT filesize > vmsize", size, slide, "more than its vmsize");
  uint64_t vmaddr = get64(linkedit + FIELD(lagscope__segment_command_64, vmaddr));
  put64(linkedit + FIELD(lagscope__segment_command_64, vmaddr), vmaddr + size);
  expect_refused("__LINKEDIT past the mapping", size, slide, "mapped bytes");
  put64(linkedit + FIELD(lagscope__segment_command_64, vmaddr), vmaddr);
  expect_refused("the mapping ends inside __LINKEDIT", (size_t)(vmaddr - lowest + filesize - 1),
                 slide, "mapped bytes");
}

static void bad_symtab(void) {
  uintptr_t slide = slide_of(image);
  size_t symtab = find_command(LAGSCOPE__LC_SYMTAB, NULL);
  size_t linkedit = find_command(LAGSCOPE__LC_SEGMENT_64, "__LINKEDIT");
  uint32_t fileoff = (uint32_t)get64(linkedit + FIELD(lagscope__segment_command_64, fileoff));
  uint32_t filesize = (uint32_t)get64(linkedit + FIELD(lagscope__segment_command_64, filesize));
  put32(symtab + FIELD(lagscope__symtab_command, symoff), fileoff - 16);
  expect_refused("symoff before __LINKEDIT", size, slide, "outside __LINKEDIT");
  put32(symtab + FIELD(lagscope__symtab_command, symoff), fileoff + filesize - 8);
  expect_refused("symoff at __LINKEDIT's end", size, slide, "outside __LINKEDIT");
  put32(symtab + FIELD(lagscope__symtab_command, nsyms), 0x7fffffff);
  expect_refused("nsyms huge", size, slide, "outside __LINKEDIT");
  put32(symtab + FIELD(lagscope__symtab_command, stroff), UINT32_MAX - 4);
  expect_refused("stroff past __LINKEDIT", size, slide, "outside __LINKEDIT");
  put32(symtab + FIELD(lagscope__symtab_command, strsize), filesize + 1);
  expect_refused("strsize past __LINKEDIT", size, slide, "outside __LINKEDIT");
  put32(symtab + FIELD(lagscope__symtab_command, cmdsize), 16);
  expect_refused("LC_SYMTAB too short", size, slide, "LC_SYMTAB");
  put32(symtab + FIELD(lagscope__symtab_command, cmd), LAGSCOPE__LC_UUID);
  expect_refused("two LC_UUID", size, slide, "two LC_UUID");
}

/* The symbol (not stab) named name (with its underscore): its offset in the image. */
static size_t find_nlist(const char *name) {
  size_t symtab = find_command(LAGSCOPE__LC_SYMTAB, NULL);
  size_t linkedit = find_command(LAGSCOPE__LC_SEGMENT_64, "__LINKEDIT");
  uint64_t base = get64(linkedit + FIELD(lagscope__segment_command_64, vmaddr)) - lowest -
                  get64(linkedit + FIELD(lagscope__segment_command_64, fileoff));
  size_t symbols = base + get32(symtab + FIELD(lagscope__symtab_command, symoff));
  size_t strings = base + get32(symtab + FIELD(lagscope__symtab_command, stroff));
  for (uint32_t i = 0; i < get32(symtab + FIELD(lagscope__symtab_command, nsyms)); i++) {
    size_t at = symbols + i * sizeof(lagscope__nlist_64);
    if ((image[at + FIELD(lagscope__nlist_64, n_type)] & LAGSCOPE__N_STAB) == 0 &&
        strcmp((const char *)image + strings + get32(at), name) == 0)
      return at;
  }
  CHECK_MSG(0, "%s not in the symbol table", name);
  return 0;
}

/* The offset in the image of the name of the symbol at nlist offset at. */
static size_t strings_of(size_t at) {
  size_t symtab = find_command(LAGSCOPE__LC_SYMTAB, NULL);
  size_t linkedit = find_command(LAGSCOPE__LC_SEGMENT_64, "__LINKEDIT");
  uint64_t base = get64(linkedit + FIELD(lagscope__segment_command_64, vmaddr)) - lowest -
                  get64(linkedit + FIELD(lagscope__segment_command_64, fileoff));
  return base + get32(symtab + FIELD(lagscope__symtab_command, stroff)) + get32(at);
}

static const char *lookup(const lagscope__macho_image *img, uintptr_t file_address) {
  const char *name = NULL;
  int rc = lagscope__macho_image_lookup(img, file_address + slide_of(image), &name, NULL);
  return rc == 0 ? name : "(nothing)";
}

/* Damage that costs one symbol, not the image. */
static void bad_symbols(void) {
  size_t f1 = find_nlist("_f1"), table = find_nlist("_fixture_table");
  uint64_t f1_address = get64(f1 + FIELD(lagscope__nlist_64, n_value));
  uint8_t text_ordinal = image[f1 + FIELD(lagscope__nlist_64, n_sect)];

  put32(f1 + FIELD(lagscope__nlist_64, n_strx), UINT32_MAX); /* a name outside the strings */
  lagscope__macho_image *img = expect_indexed("f1's name outside the string table");
  CHECK(strcmp(lookup(img, f1_address + 2), "(nothing)") == 0); /* not its neighbour's */
  CHECK(strcmp(lookup(img, f1_address - 1), "(nothing)") != 0);
  lagscope__macho_image_free(img);
  restore();

  /* A symbol moved into the middle of f1: a local one counts, a stab does not. */
  put64(table + FIELD(lagscope__nlist_64, n_value), f1_address + 4);
  image[table + FIELD(lagscope__nlist_64, n_sect)] = text_ordinal;
  image[table + FIELD(lagscope__nlist_64, n_type)] = LAGSCOPE__N_SECT;
  img = expect_indexed("a local symbol inside f1");
  CHECK(strcmp(lookup(img, f1_address + 4), "fixture_table") == 0);
  lagscope__macho_image_free(img);
  image[table + FIELD(lagscope__nlist_64, n_type)] = 0x2e; /* N_BNSYM: a stab with N_SECT's bits */
  img = expect_indexed("a stab inside f1");
  CHECK(strcmp(lookup(img, f1_address + 4), "f1") == 0);
  lagscope__macho_image_free(img);
  image[table + FIELD(lagscope__nlist_64, n_type)] = LAGSCOPE__N_SECT;
  image[table + FIELD(lagscope__nlist_64, n_sect)] = 200; /* no such section */
  img = expect_indexed("a symbol in section 200");
  CHECK(strcmp(lookup(img, f1_address + 4), "f1") == 0);
  lagscope__macho_image_free(img);
  restore();

  /* An iOS device's shared cache: dyld's cache builder points the names of the local symbols
   * it moves out at the one string "<redacted>" (dyld, cache-builder's OptimizerLinkedit.cpp,
   * the local symbols' copy, copyLocalSymbols). Such a symbol inside f1 is nameless: an address
   * after it has no name (never "<redacted>", never f1's), and it still ends f1. */
  put64(table + FIELD(lagscope__nlist_64, n_value), f1_address + 4);
  image[table + FIELD(lagscope__nlist_64, n_sect)] = text_ordinal;
  image[table + FIELD(lagscope__nlist_64, n_type)] = LAGSCOPE__N_SECT;
  memcpy(image + strings_of(table), "<redacted>", sizeof("<redacted>"));
  img = expect_indexed("a <redacted> symbol inside f1");
  CHECK_MSG(strcmp(lookup(img, f1_address + 6), "(nothing)") == 0, "%s",
            lookup(img, f1_address + 6));
  CHECK(strcmp(lookup(img, f1_address + 2), "f1") == 0);
  lagscope__macho_image_free(img);
  restore();

  /* Stripped of LC_SYMTAB: no names, but still an image with a UUID. */
  put32(find_command(LAGSCOPE__LC_SYMTAB, NULL), 0x7fff);
  img = expect_indexed("no LC_SYMTAB");
  CHECK(lagscope__macho_image_symbol_count(img) == 0);
  CHECK(lagscope__macho_image_uuid_string(img)[0] != '\0');
  CHECK(strcmp(lookup(img, f1_address), "(nothing)") == 0);
  lagscope__macho_image_free(img);
  restore();
  printf("%-40s indexed: one symbol lost at most\n", "garbled names, stabs, bad n_sect");
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void) {
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717u;
}

/* Random flips in the load commands or the symbol table: refused or indexed, nothing else. */
static void fuzz(int rounds) {
  size_t commands = sizeof(lagscope__mach_header_64) +
                    get32(FIELD(lagscope__mach_header_64, sizeofcmds));
  size_t symbols = find_nlist("_f1");
  int refused = 0;
  for (int r = 0; r < rounds; r++) {
    int flips = 1 + (int)(rng() % 4);
    for (int i = 0; i < flips; i++) {
      size_t at = r % 2 ? rng() % commands : symbols - 4096 + rng() % 8192;
      image[at % size] ^= (unsigned char)(1u << (rng() % 8));
    }
    lagscope__macho_image *img = NULL;
    char why[256] = "";
    int rc = lagscope__macho_image_index(image, size, slide_of(image), "fuzz", &img, why,
                                         sizeof(why));
    CHECK_MSG(rc == 0 || (rc == LAGSCOPE_EPARSE && why[0] != '\0'), "round %d: rc %d", r, rc);
    refused += rc != 0;
    for (int i = 0; img != NULL && i < 64; i++)
      (void)lagscope__macho_image_lookup(img, (uintptr_t)image + rng() % size, NULL, NULL);
    lagscope__macho_image_free(img);
    restore();
  }
  printf("%-40s %d of %d refused, the rest indexed, no read out of bounds\n", "random flips",
         refused, rounds);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: test_macho_corrupt FILE");
  char why[256] = "";
  FILE *exists = fopen(argv[1], "rb");
  if (exists == NULL) {
    printf("skipped: %s was not built (the macho_fixtures test builds it; it needs zig and "
           "llvm-nm)\n", argv[1]);
    return TEST_SKIP_CODE;
  }
  fclose(exists);
  macho_loaded m;
  CHECK_MSG(macho_load(argv[1], &m, why, sizeof(why)) == 0, "%s", why);
  pristine = m.header;
  size = m.mapped_size;
  lowest = m.lowest_vmaddr;
  image = malloc(size);
  CHECK(image != NULL);
  restore();
  uint64_t memory_before = lagscope__memory_in_use();

  lagscope__macho_image *img = expect_indexed("the undamaged copy");
  lagscope__macho_image_free(img);
  CHECK(lagscope__macho_image_index(NULL, size, 0, "", &img, why, sizeof(why)) == LAGSCOPE_EINVAL);
  bad_headers();
  bad_segments();
  bad_symtab();
  bad_symbols();
  fuzz(4000);

  CHECK_EQ_INT(lagscope__memory_in_use(), memory_before);
  free(image);
  macho_unload(&m);
  return 0;
}
