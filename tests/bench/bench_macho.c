/*
 * bench_macho — Mach-O symbolication (core/darwin/macho.c) on a large zig-built arm64 dylib (20000
 * functions by default: build-fixtures --optimize -O0, cached in the build folder), laid out
 * the way dyld does (tests/support/macho_load.c), beside the way the seeds do it, measured in
 * the same run:
 *   - addresses per second: random addresses in __text, through the index (binary search) vs a
 *     linear scan of the image's whole symbol table per address (the best N_SECT symbol <= the
 *     address, as a dladdr replacement walks it); both must name the same function start;
 *   - the index's build time, once per image, and after how many addresses it has paid off;
 *   - the index's memory vs the raw symbol and string tables it was built from.
 *
 * Usage: bench_macho [--functions N] [--addresses N] [--runs N] [--file MACHO]
 *   --file: a 64-bit Mach-O file to use instead of building one. Exit 77 (BENCH_SKIP) when
 *   zig or llvm-nm is missing, so that the fixture cannot be built.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench.h */
#include "bench.h"

#include "internal.h"
#include "macho.h"
#include "macho_load.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef MACHO_FIXTURE_SCRIPT
#error "MACHO_FIXTURE_SCRIPT: the path of tests/unit/macho/build-fixtures"
#endif
#ifndef MACHO_BENCH_DIR
#error "MACHO_BENCH_DIR: where the large fixture is built and kept"
#endif

/* ---- the seeds' way: the whole symbol table, every time -------------------------------------- */
typedef struct table {
  const unsigned char *symbols; /* nlist_64 records in the loaded image */
  uint32_t nsyms;
  const char *strings;
  uint32_t strsize;
  uint64_t text_start, text_end; /* __TEXT,__text, file addresses */
} table;

/* Finds the tables and __text in the loaded image. 0, or -1 when the image has none. */
static int find_table(const macho_loaded *m, table *t) {
  const unsigned char *h = m->header, *cmd = h + sizeof(lagscope__mach_header_64);
  lagscope__mach_header_64 mh;
  memcpy(&mh, h, sizeof(mh));
  lagscope__segment_command_64 linkedit = {0};
  lagscope__symtab_command st = {0};
  for (uint32_t i = 0; i < mh.ncmds; i++) {
    lagscope__segment_command_64 seg;
    memcpy(&seg, cmd, sizeof(lagscope__load_command));
    if (seg.cmd == LAGSCOPE__LC_SYMTAB) memcpy(&st, cmd, sizeof(st));
    if (seg.cmd == LAGSCOPE__LC_SEGMENT_64) {
      memcpy(&seg, cmd, sizeof(seg));
      if (strncmp(seg.segname, "__LINKEDIT", 16) == 0) linkedit = seg;
      for (uint32_t s = 0; s < seg.nsects; s++) {
        lagscope__section_64 sect;
        memcpy(&sect, cmd + sizeof(seg) + s * sizeof(sect), sizeof(sect));
        if (strncmp(sect.sectname, "__text", 16) == 0 && strncmp(sect.segname, "__TEXT", 16) == 0)
          t->text_start = sect.addr, t->text_end = sect.addr + sect.size;
      }
    }
    cmd += seg.cmdsize;
  }
  if (st.nsyms == 0 || linkedit.filesize == 0 || t->text_end == 0) return -1;
  const unsigned char *base = (const unsigned char *)(uintptr_t)(linkedit.vmaddr + m->slide) -
                              linkedit.fileoff;
  t->symbols = base + st.symoff;
  t->nsyms = st.nsyms;
  t->strings = (const char *)base + st.stroff;
  t->strsize = st.strsize;
  return 0;
}

/* The greatest defined, non-stab symbol <= the file address: its address, 0 when none. */
static uint64_t scan(const table *t, uint64_t address, const char **name) {
  uint64_t best = 0;
  for (uint32_t i = 0; i < t->nsyms; i++) {
    lagscope__nlist_64 n;
    memcpy(&n, t->symbols + (size_t)i * sizeof(n), sizeof(n));
    if ((n.n_type & LAGSCOPE__N_STAB) != 0 || (n.n_type & LAGSCOPE__N_TYPE) != LAGSCOPE__N_SECT ||
        n.n_value > address || n.n_value <= best)
      continue;
    best = n.n_value;
    *name = t->strings + n.n_strx;
  }
  return best;
}

/* ---- the fixture ---------------------------------------------------------------------------------- */

/* Builds (once: kept in MACHO_BENCH_DIR) the large dylib; its path, or NULL to skip. */
static const char *large_fixture(unsigned functions, int *skip) {
  static char path[1024];
  char dir[900], command[2048];
  snprintf(dir, sizeof dir, "%s/%u", MACHO_BENCH_DIR, functions);
  snprintf(path, sizeof path, "%s/dylib-aarch64.oracle", dir);
  FILE *built = fopen(path, "r");
  if (built == NULL) {
    fprintf(stderr, "bench_macho: building a dylib of %u functions with zig (once)...\n", functions);
    snprintf(command, sizeof command, "bash '%s' --functions %u --kinds dylib --targets "
             "aarch64-macos --optimize -O0 '%s' >&2", MACHO_FIXTURE_SCRIPT, functions, dir);
    int status = system(command);
    if (WIFEXITED(status) && WEXITSTATUS(status) == BENCH_SKIP) *skip = 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return NULL;
  } else {
    fclose(built);
  }
  snprintf(path, sizeof path, "%s/dylib-aarch64", dir);
  return path;
}

/* ---- the measurements ------------------------------------------------------------------------- */
static volatile uintptr_t sink; /* keeps the lookups from being optimised away */

static double time_index(const lagscope__macho_image *img, const uintptr_t *addresses, size_t n) {
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    lagscope__macho_image_lookup(img, addresses[i], &name, NULL);
    sink += (uintptr_t)name;
  }
  return (double)(bench_now_ns() - start) / (double)n;
}

static double time_scan(const table *t, const uintptr_t *addresses, size_t n, uintptr_t slide) {
  uint64_t start = bench_now_ns();
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    sink += scan(t, addresses[i] - slide, &name) + (uintptr_t)name;
  }
  return (double)(bench_now_ns() - start) / (double)n;
}

/* Both ways must find the same function start for every address. */
static int agree(const lagscope__macho_image *img, const table *t, const uintptr_t *addresses,
                 size_t n, uintptr_t slide) {
  for (size_t i = 0; i < n; i++) {
    const char *ours = NULL, *theirs = NULL;
    uintptr_t start = 0;
    uint64_t scanned = scan(t, addresses[i] - slide, &theirs);
    if (lagscope__macho_image_lookup(img, addresses[i], &ours, &start) != 0 ||
        start - slide != scanned) {
      fprintf(stderr, "bench_macho: 0x%llx: the index says %s, the scan %s\n",
              (unsigned long long)(addresses[i] - slide), ours ? ours : "nothing",
              theirs ? theirs : "nothing");
      return -1;
    }
  }
  return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void) { /* xorshift64*: the same addresses every run */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717u;
}

static void print_table(const char *path, const table *t, const lagscope__macho_image *img,
                        unsigned n, unsigned runs, double index_ns, double scan_ns,
                        double build_ns) {
  char title[1400], value[32], base[64], ratio[16];
  snprintf(title, sizeof title,
           "Mach-O symbolication: %u random addresses in __text, median of %u passes\n"
           "  (%s: %u function symbols indexed from %u symbol table entries)",
           n, runs, path, lagscope__macho_image_symbol_count(img), t->nsyms);
  bench_table_begin(title);
  snprintf(value, sizeof value, "%.2f M/s", 1e3 / index_ns);
  snprintf(base, sizeof base, "%.4f M/s linear scan", 1e3 / scan_ns);
  bench_row("lookup, index (binary search)", value, base,
            bench_ratio(ratio, sizeof ratio, scan_ns, index_ns), "≥ 100x linear scan");
  snprintf(value, sizeof value, "%.1f ns", index_ns);
  snprintf(base, sizeof base, "%.0f ns linear scan", scan_ns);
  bench_row("lookup, time per address", value, base, "-", "-");
  snprintf(value, sizeof value, "%.2f ms", build_ns / 1e6);
  snprintf(base, sizeof base, "= %.0f lookups by linear scan", build_ns / scan_ns);
  bench_row("index build (once per image)", value, base, "-", "- (once per image)");
  size_t held = lagscope__macho_image_memory(img);
  double raw = (double)t->nsyms * sizeof(lagscope__nlist_64) + t->strsize;
  snprintf(value, sizeof value, "%.1f KiB", (double)held / 1024.0);
  snprintf(base, sizeof base, "%.1f KiB raw symtab + strtab", raw / 1024.0);
  bench_row("index memory", value, base, bench_ratio(ratio, sizeof ratio, (double)held, raw),
            "≤ the raw tables");
}

int main(int argc, char **argv) {
  unsigned functions = bench_arg_uint(argc, argv, "--functions", 20000, 10);
  unsigned n = bench_arg_uint(argc, argv, "--addresses", 20000, 16);
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 11, 1);
  const char *path = NULL;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--file") == 0) path = argv[i + 1];
  int skip = 0;
  if (path == NULL) path = large_fixture(functions, &skip);
  if (path == NULL) {
    fprintf(stderr, "bench_macho: %s\n", skip ? "skipped: zig or llvm-nm is missing"
                                              : "the fixture could not be built");
    return skip ? BENCH_SKIP : 1;
  }
  char why[256] = "";
  macho_loaded m;
  table t = {0};
  if (macho_load(path, &m, why, sizeof why) != 0 || find_table(&m, &t) != 0) {
    fprintf(stderr, "bench_macho: %s: %s\n", path, why[0] ? why : "no symbol table or __text");
    return 1;
  }
  double *builds = malloc(runs * sizeof(double)), *ours = malloc(runs * sizeof(double));
  double *theirs = malloc(runs * sizeof(double));
  uintptr_t *addresses = malloc(n * sizeof(uintptr_t));
  if (builds == NULL || ours == NULL || theirs == NULL || addresses == NULL) return 1;
  for (unsigned i = 0; i < n; i++)
    addresses[i] = (uintptr_t)(t.text_start + rng() % (t.text_end - t.text_start)) + m.slide;

  lagscope__macho_image *img = NULL;
  for (unsigned r = 0; r < runs; r++) {
    lagscope__macho_image_free(img);
    uint64_t start = bench_now_ns();
    int rc = lagscope__macho_image_index(m.header, m.mapped_size, m.slide, path, &img, why,
                                         sizeof why);
    builds[r] = (double)(bench_now_ns() - start);
    if (rc != 0) {
      fprintf(stderr, "bench_macho: %s: %s\n", path, why);
      return 1;
    }
  }
  if (agree(img, &t, addresses, n, m.slide) != 0) return 1;
  for (unsigned r = 0; r < runs; r++) {
    ours[r] = time_index(img, addresses, n);
    theirs[r] = time_scan(&t, addresses, n, m.slide);
  }
  print_table(path, &t, img, n, runs, bench_median(ours, runs), bench_median(theirs, runs),
              bench_median(builds, runs));
  lagscope__macho_image_free(img);
  macho_unload(&m);
  free(builds), free(ours), free(theirs), free(addresses);
  return 0;
}
