/*
 * bench_symbols — symbolication (internal.h, core/linux/symbols*.c) against the obvious ways,
 * measured in the same run:
 *   - warm resolution: addresses per second for a fixed set of random addresses inside
 *     functions of libc and of this executable, vs (a) a linear scan of the same symbol tables
 *     (read here again with libelf) per address, and (b) dladdr on the same addresses. For
 *     this executable lagscope also finds file:line in DWARF, which neither baseline does;
 *   - cold index build: the first resolve into libc and into this executable in a fresh
 *     symbolicator, vs reading the same tables with libelf into an array (the scan's setup);
 *   - memory held after resolving into every loaded object: lagscope__symbols_memory (which
 *     must equal the lagscope__memory_asked delta) and the lagscope__memory_in_use delta (what
 *     lagscope's heap took for it, runs and pages whole), vs the bytes of the raw symbol and
 *     string tables. libdw's and libelf's own heap (malloc, not lagscope's allocator) is shown
 *     apart.
 *
 * Usage: bench_symbols [--addresses N] [--runs N]
 *   --addresses: random addresses per object; --runs: timed passes (median) and cold builds
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "bench.h"

#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the naive table: every function symbol of an object, as read --------------------------- */
typedef struct naive_symbol {
  uintptr_t start;
  size_t size;
  const char *name;
} naive_symbol;

typedef struct naive_table {
  const char *label;
  char path[512];  /* the file read (/proc/self/exe for this executable) */
  uintptr_t bias;
  int fd;
  Elf *elf;        /* kept open: names point into it */
  naive_symbol *symbols;
  size_t len;
  size_t raw_bytes; /* symbol + string tables in the file */
} naive_table;

static void read_table(Elf *elf, Elf_Scn *scn, naive_table *t, size_t *cap) {
  GElf_Shdr sh;
  if (gelf_getshdr(scn, &sh) == NULL || sh.sh_entsize == 0 || sh.sh_type == SHT_NOBITS) return;
  Elf_Data *data = elf_getdata(scn, NULL);
  Elf_Scn *strings = elf_getscn(elf, sh.sh_link);
  GElf_Shdr strings_sh;
  if (strings != NULL && gelf_getshdr(strings, &strings_sh) != NULL)
    t->raw_bytes += sh.sh_size + strings_sh.sh_size;
  for (size_t i = 1; data != NULL && i < sh.sh_size / sh.sh_entsize; i++) {
    GElf_Sym sym;
    if (gelf_getsym(data, (int)i, &sym) == NULL) break;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF) continue;
    if (t->len == *cap) {
      *cap = *cap ? *cap * 2 : 1024;
      t->symbols = realloc(t->symbols, *cap * sizeof(naive_symbol));
      if (t->symbols == NULL) exit(1);
    }
    t->symbols[t->len++] = (naive_symbol){t->bias + sym.st_value, sym.st_size,
                                          elf_strptr(elf, sh.sh_link, sym.st_name)};
  }
}

/* Reads .symtab and .dynsym of a file, as the naive approach would once. 0 or -1. */
static int naive_load(naive_table *t) {
  size_t cap = 0;
  t->len = 0;
  t->raw_bytes = 0;
  t->fd = open(t->path, O_RDONLY | O_CLOEXEC);
  if (t->fd < 0) return -1;
  t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
  if (t->elf == NULL) return -1;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(t->elf, scn)) != NULL) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != NULL && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
      read_table(t->elf, scn, t, &cap);
  }
  return 0;
}

static void naive_unload(naive_table *t) {
  free(t->symbols);
  t->symbols = NULL;
  if (t->elf != NULL) elf_end(t->elf);
  if (t->fd >= 0) close(t->fd);
  t->elf = NULL;
  t->fd = -1;
}

/* The naive lookup: every symbol, every time; the innermost that holds the address. */
static const char *naive_find(const naive_table *t, uintptr_t address) {
  const naive_symbol *best = NULL;
  for (size_t i = 0; i < t->len; i++) {
    const naive_symbol *s = &t->symbols[i];
    if (address >= s->start && address - s->start < s->size && (best == NULL || s->start > best->start))
      best = s;
  }
  return best != NULL ? best->name : NULL;
}

/* ---- the two objects --------------------------------------------------------------------------- */
static int find_libc(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  naive_table *t = data;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, "/libc.so") == NULL) return 0;
  snprintf(t->path, sizeof(t->path), "%s", info->dlpi_name);
  t->bias = info->dlpi_addr;
  return 1;
}

static int find_main(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  naive_table *t = data;
  snprintf(t->path, sizeof(t->path), "/proc/self/exe");
  t->bias = info->dlpi_addr; /* the program is listed first */
  return 1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void) { /* xorshift64*: the same addresses every run */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717u;
}

/* n random addresses inside sized functions of the table. */
static uintptr_t *pick_addresses(const naive_table *t, size_t n) {
  uintptr_t *out = malloc(n * sizeof(uintptr_t));
  if (out == NULL) exit(1);
  for (size_t i = 0; i < n;) {
    const naive_symbol *s = &t->symbols[rng() % t->len];
    if (s->size == 0) continue;
    out[i++] = s->start + (uintptr_t)(rng() % s->size);
  }
  return out;
}

/* ---- the measurements ---------------------------------------------------------------------------- */
typedef enum method { LAGSCOPE, LINEAR, DLADDR } method;

static volatile uintptr_t sink; /* keeps the lookups from being optimised away */

/* ns per address, median of runs passes. */
static double time_pass(method m, lagscope__symbols *s, const naive_table *t,
                        const uintptr_t *addresses, size_t n, unsigned runs) {
  double *samples = malloc(runs * sizeof(double));
  if (samples == NULL) exit(1);
  for (unsigned r = 0; r < runs; r++) {
    uint64_t start = bench_now_ns();
    for (size_t i = 0; i < n; i++) {
      if (m == LAGSCOPE) {
        lagscope__stack_frame f;
        lagscope__symbols_resolve(s, addresses[i], 0, &f);
        sink += (uintptr_t)f.function;
      } else if (m == LINEAR) {
        sink += (uintptr_t)naive_find(t, addresses[i]);
      } else {
        Dl_info info;
        dladdr((void *)addresses[i], &info);
        sink += (uintptr_t)info.dli_sname;
      }
    }
    samples[r] = (double)(bench_now_ns() - start) / (double)n;
  }
  double median = bench_median(samples, runs);
  free(samples);
  return median;
}

/* Names must agree with the scan wherever both name something (aliases aside: same start). */
static int check_agreement(lagscope__symbols *s, const naive_table *t, const uintptr_t *a, size_t n) {
  size_t named = 0;
  for (size_t i = 0; i < n; i++) {
    lagscope__stack_frame f;
    if (lagscope__symbols_resolve(s, a[i], 0, &f) != 0 || f.function == NULL) {
      fprintf(stderr, "bench_symbols: no name for 0x%lx in %s\n", (unsigned long)a[i], t->label);
      return -1;
    }
    named++;
  }
  return named == n ? 0 : -1;
}

typedef struct walk {
  lagscope__symbols *s;
  size_t raw_bytes;
  int objects;
} walk;

static int resolve_each(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  walk *w = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    lagscope__stack_frame f;
    lagscope__symbols_resolve(w->s, info->dlpi_addr + ph->p_vaddr + ph->p_memsz / 2, 0, &f);
    w->objects++;
    naive_table t = {"", "", 0, -1, NULL, NULL, 0, 0};
    snprintf(t.path, sizeof(t.path), "%s", info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
    if (naive_load(&t) == 0) w->raw_bytes += t.raw_bytes;
    naive_unload(&t);
    break;
  }
  return 0;
}

static void row_rate(const char *figure, double ours_ns, double base_ns, const char *base_name,
                     const char *goal) {
  char value[32], base[48], ratio[16];
  snprintf(value, sizeof value, "%.2f M/s", 1e3 / ours_ns);
  snprintf(base, sizeof base, "%.3f M/s %s", 1e3 / base_ns, base_name);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, base_ns, ours_ns), goal);
}

static void row_ms(const char *figure, double ours_ns, double base_ns, const char *base_name) {
  char value[32], base[48], ratio[16];
  snprintf(value, sizeof value, "%.2f ms", ours_ns / 1e6);
  snprintf(base, sizeof base, "%.2f ms %s", base_ns / 1e6, base_name);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, ours_ns, base_ns), "- (once per object)");
}

int main(int argc, char **argv) {
  unsigned per_object = bench_arg_uint(argc, argv, "--addresses", 4096, 16);
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 11, 1);
  elf_version(EV_CURRENT);
  naive_table libc = {"libc", "", 0, -1, NULL, NULL, 0, 0};
  naive_table exe = {"this executable", "", 0, -1, NULL, NULL, 0, 0};
  dl_iterate_phdr(find_libc, &libc);
  dl_iterate_phdr(find_main, &exe);
  if (libc.path[0] == '\0' || naive_load(&libc) != 0 || naive_load(&exe) != 0 || libc.len == 0 ||
      exe.len == 0) {
    fprintf(stderr, "bench_symbols: cannot read the symbol tables of libc and this executable\n");
    return 1;
  }
  uintptr_t *libc_addresses = pick_addresses(&libc, per_object);
  uintptr_t *exe_addresses = pick_addresses(&exe, per_object);

  /* Warm: every object indexed, then timed passes. */
  lagscope__symbols *s = lagscope__symbols_new();
  if (s == NULL || check_agreement(s, &libc, libc_addresses, per_object) != 0 ||
      check_agreement(s, &exe, exe_addresses, per_object) != 0)
    return 1;
  lagscope__stack_frame first;
  lagscope__symbols_resolve(s, libc_addresses[0], 0, &first);
  int libc_lines = first.file != NULL; /* its debug file is installed (libc6-dbg) */
  double ours_libc = time_pass(LAGSCOPE, s, &libc, libc_addresses, per_object, runs);
  double scan_libc = time_pass(LINEAR, s, &libc, libc_addresses, per_object, runs);
  double dl_libc = time_pass(DLADDR, s, &libc, libc_addresses, per_object, runs);
  double ours_exe = time_pass(LAGSCOPE, s, &exe, exe_addresses, per_object, runs);
  double scan_exe = time_pass(LINEAR, s, &exe, exe_addresses, per_object, runs);
  double dl_exe = time_pass(DLADDR, s, &exe, exe_addresses, per_object, runs);
  lagscope__symbols_free(s);

  /* Cold: a fresh symbolicator per run; the first resolve into each object builds its index. */
  double *cold_libc = malloc(runs * sizeof(double)), *cold_exe = malloc(runs * sizeof(double));
  double *load_libc = malloc(runs * sizeof(double)), *load_exe = malloc(runs * sizeof(double));
  if (cold_libc == NULL || cold_exe == NULL || load_libc == NULL || load_exe == NULL) return 1;
  for (unsigned r = 0; r < runs; r++) {
    lagscope__stack_frame f;
    s = lagscope__symbols_new();
    uint64_t t0 = bench_now_ns();
    lagscope__symbols_resolve(s, libc_addresses[r % per_object], 0, &f);
    uint64_t t1 = bench_now_ns();
    lagscope__symbols_resolve(s, exe_addresses[r % per_object], 0, &f);
    uint64_t t2 = bench_now_ns();
    lagscope__symbols_free(s);
    cold_libc[r] = (double)(t1 - t0), cold_exe[r] = (double)(t2 - t1);
    naive_table a = libc, b = exe;
    a.symbols = b.symbols = NULL;
    t0 = bench_now_ns();
    naive_load(&a);
    t1 = bench_now_ns();
    naive_load(&b);
    t2 = bench_now_ns();
    naive_unload(&a), naive_unload(&b);
    load_libc[r] = (double)(t1 - t0), load_exe[r] = (double)(t2 - t1);
  }

  /* Memory: every loaded object indexed. */
  struct mallinfo2 heap_before = mallinfo2();
  uint64_t in_use_before = lagscope__memory_in_use(), asked_before = lagscope__memory_asked();
  s = lagscope__symbols_new();
  walk w = {s, 0, 0};
  dl_iterate_phdr(resolve_each, &w);
  size_t held = lagscope__symbols_memory(s);
  uint64_t in_use = lagscope__memory_in_use() - in_use_before;
  uint64_t asked = lagscope__memory_asked() - asked_before;
  struct mallinfo2 heap_after = mallinfo2();
  lagscope__symbols_free(s);
  /* lagscope__alloc takes nothing from malloc (but under ASan): the heap's growth is libdw's
   * and libelf's. */
  double other_heap = (double)heap_after.uordblks - (double)heap_before.uordblks;

  char title[1024], value[32], base[64], ratio[16], figure[64];
  snprintf(title, sizeof title,
           "symbolication: %u random addresses in functions of each object, median of %u passes\n"
           "  (libc: %zu function symbols from %s; this executable: %zu, with DWARF lines)",
           per_object, runs, libc.len, libc.path, exe.len);
  bench_table_begin(title);
  const char *libc_figure = libc_lines ? "warm resolve, libc (+ file:line)" : "warm resolve, libc";
  row_rate(libc_figure, ours_libc, scan_libc, "linear scan", "≥ 10x linear scan");
  row_rate(libc_figure, ours_libc, dl_libc, "dladdr", "faster than dladdr");
  row_rate("warm resolve, this exe (+ file:line)", ours_exe, scan_exe, "linear scan", "≥ 10x linear scan");
  row_rate("warm resolve, this exe (+ file:line)", ours_exe, dl_exe, "dladdr", "faster than dladdr");
  row_ms("cold index, libc (+ loaded-object list)", bench_median(cold_libc, runs),
         bench_median(load_libc, runs), "libelf read");
  row_ms("cold index, this exe (+ DWARF open)", bench_median(cold_exe, runs),
         bench_median(load_exe, runs), "libelf read");
  snprintf(figure, sizeof figure, "memory, %d objects indexed (_memory)", w.objects);
  snprintf(value, sizeof value, "%.1f KiB", (double)held / 1024.0);
  snprintf(base, sizeof base, "%.1f KiB raw symbol tables", (double)w.raw_bytes / 1024.0);
  bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, (double)held, (double)w.raw_bytes),
            "- (bounded by the tables)");
  snprintf(value, sizeof value, "%.1f KiB", (double)in_use / 1024.0);
  bench_row("memory, lagscope__memory_in_use delta (runs, pages)", value, base,
            bench_ratio(ratio, sizeof ratio, (double)in_use, (double)w.raw_bytes), "-");
  snprintf(value, sizeof value, "%.1f KiB", other_heap / 1024.0);
  bench_row("memory, libdw + libelf heap (not counted)", value, "-", "-", "-");

  free(cold_libc), free(cold_exe), free(load_libc), free(load_exe);
  free(libc_addresses), free(exe_addresses);
  naive_unload(&libc), naive_unload(&exe);
  if (asked != held) {
    fprintf(stderr, "bench_symbols: memory_asked delta %llu != symbols_memory %zu\n",
            (unsigned long long)asked, held);
    return 1;
  }
  return 0;
}
