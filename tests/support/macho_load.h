/* Test support: a Mach-O file laid out in memory the way dyld lays an image out, for the
 * Mach-O index's tests, tests/tools/macho-symbolicate and bench_macho. One anonymous mapping
 * covers the vm range of every segment (but __PAGEZERO); each segment's file bytes are copied
 * to vmaddr + slide, the rest stays zero; the slide is the mapping's address minus the lowest
 * vmaddr. A page without access on each side catches a read past either end. */
#ifndef LAGSCOPE_TEST_MACHO_LOAD_H
#define LAGSCOPE_TEST_MACHO_LOAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct macho_loaded {
  const void *header;  /* __TEXT's vmaddr + slide */
  size_t mapped_size;  /* bytes readable from header on: the segments' vm range */
  uintptr_t slide;
  uint64_t lowest_vmaddr;
  void *mapping;       /* with the guard pages, for munmap */
  size_t mapping_size;
} macho_loaded;

/* 0, or -1 with a sentence in why (not a 64-bit Mach-O file, a segment outside the file, ...). */
int macho_load(const char *path, macho_loaded *out, char *why, size_t why_size);
/* The same from the file's bytes. */
int macho_load_bytes(const unsigned char *file, size_t size, macho_loaded *out, char *why,
                     size_t why_size);
/* The same for an image whose header starts at byte `at` of the file while every file offset
 * in its load commands counts from the file's start, as in a dyld shared cache. */
int macho_load_cached(const char *path, size_t at, macho_loaded *out, char *why,
                      size_t why_size);
int macho_load_cached_bytes(const unsigned char *file, size_t size, size_t at, macho_loaded *out,
                            char *why, size_t why_size);
void macho_unload(macho_loaded *m);

/* The file's bytes (malloc'ed, freed with free), or NULL with why. */
unsigned char *macho_read_file(const char *path, size_t *size, char *why, size_t why_size);

#endif
