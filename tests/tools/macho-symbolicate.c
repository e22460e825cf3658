/*
 * macho-symbolicate — what atos does with a Mach-O file's symbol table, through lagscope's
 * index (core/darwin/macho.c), for tests and for looking at a file by hand on Linux:
 *
 *   macho-symbolicate [--demangle] [--cache-offset N] FILE ADDR...
 *
 * FILE is laid out in memory the way dyld lays an image out (tests/support/macho_load.c); each
 * ADDR is a file address (the vmaddrs llvm-nm prints), hex with or without 0x. One line per
 * address: "<file's basename> <symbol>+<offset in decimal>", or "<basename> ??" when no
 * function holds it. --demangle: C++ names through __cxa_demangle (libstdc++), as atos shows
 * them. --cache-offset N: the image's Mach-O header starts N bytes (decimal, or hex with 0x)
 * into FILE and every file offset in its load commands counts from FILE's start, as for an
 * image in a dyld shared cache (tests/tools/macho-to-cache makes such files). Exit 0, 1 when
 * FILE cannot be read or indexed, 2 on bad usage.
 */
#include "internal.h"
#include "macho.h"
#include "macho_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *length, int *status); /* libstdc++ */

static int usage(void) {
  fprintf(stderr, "usage: macho-symbolicate [--demangle] [--cache-offset N] FILE ADDR...\n");
  return 2;
}

static int parse_address(const char *text, uint64_t *out) {
  char *end = NULL;
  *out = strtoull(text, &end, 16);
  return end != text && *end == '\0';
}

int main(int argc, char **argv) {
  int first = 1, demangle = 0;
  size_t at = 0;
  for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
    char *end = NULL;
    if (strcmp(argv[first], "--demangle") == 0) {
      demangle = 1;
    } else if (strcmp(argv[first], "--cache-offset") == 0 && first + 1 < argc) {
      at = (size_t)strtoull(argv[++first], &end, 0);
      if (end == argv[first] || *end != '\0') return usage();
    } else {
      return usage();
    }
  }
  if (argc - first < 2) return usage();
  const char *path = argv[first], *base = strrchr(path, '/');
  base = base != NULL ? base + 1 : path;
  char why[256] = "";
  macho_loaded m;
  lagscope__macho_image *img = NULL;
  if (macho_load_cached(path, at, &m, why, sizeof(why)) != 0 ||
      lagscope__macho_image_index(m.header, m.mapped_size, m.slide, path, &img, why,
                                  sizeof(why)) != 0) {
    fprintf(stderr, "macho-symbolicate: %s: %s\n", path, why);
    return 1;
  }
  lagscope__macho_demanglers demanglers = {demangle ? __cxa_demangle : NULL, NULL};
  int rc = 0;
  for (int i = first + 1; i < argc && rc == 0; i++) {
    uint64_t address;
    const char *symbol = NULL;
    uintptr_t start = 0;
    char name[1024];
    if (!parse_address(argv[i], &address)) {
      rc = usage();
    } else if (lagscope__macho_image_lookup(img, (uintptr_t)address + m.slide, &symbol, &start) != 0) {
      printf("%s ??\n", base);
    } else {
      printf("%s %s+%llu\n", base, lagscope__macho_demangle(&demanglers, symbol, name, sizeof(name)),
             (unsigned long long)((uintptr_t)address + m.slide - start));
    }
  }
  lagscope__macho_image_free(img);
  macho_unload(&m);
  return rc;
}
