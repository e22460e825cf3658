/*
 * Symbolication on Linux: an address to function, module, build-id and file:line, on the
 * monitor's thread after the captured thread has resumed. Reads top to bottom:
 *
 *   1. memory    — every byte held is counted (lagscope__alloc) and summed for _memory;
 *   2. objects   — the loaded objects (dl_iterate_phdr), their PT_LOAD ranges sorted for a
 *                  binary search, build-ids from their notes in memory; re-read when the
 *                  loader's counters move (dlopen, dlclose) or an address is in no object;
 *   3. index     — once per object, at the first address that falls in it: the function
 *                  symbols of .symtab and .dynsym read from the file (or .symtab from the
 *                  build-id debug file when the object is stripped), sorted 16-byte entries;
 *   4. lookup    — binary search, then the chain of enclosing symbols;
 *   5. names     — C++ names demangled by libstdc++'s __cxa_demangle, found at run time so
 *                  that lagscope never links libstdc++; cached per symbol;
 *   6. lines     — file:line from DWARF through libdw, when the object has debug info; libdw
 *                  is loaded then (dlopen), not with lagscope: most apps' objects have no
 *                  DWARF to read, and its pages (0.4 MiB with its libraries) stay out;
 *   7. the contract of internal.h.
 *
 * Never an invented name: an address past a symbol's size has no function. A symbol of size 0
 * (hand-written assembly without .size) stretches to the next symbol or its section's end only
 * when the object's full .symtab was read and no sized symbol encloses it; from .dynsym alone
 * (a stripped object, whose gaps hold unnamed static functions) it names its first byte only.
 */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define NO_PARENT UINT32_MAX
#define MAX_PARENT_STEPS 64     /* deeper nesting of symbols than this is corrupt, not code */
#define BUILD_ID_HEX_MAX 129    /* 64 bytes of id; GNU ld writes 20 */
#define DEBUG_BUILD_ID_DIR "/usr/lib/debug/.build-id/"

typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

/* One function symbol. start is relative to the object's lowest file address, so 32 bits
 * hold it (an object's address space above 4 GB is not indexed); size 0 names its start only. */
typedef struct entry {
  uint32_t start, size;
  uint32_t name;   /* offset in the object's names */
  uint32_t parent; /* the entry whose range holds this one's start, NO_PARENT when none */
} entry;

typedef struct demangled {
  uint32_t entry_plus_one; /* 0: empty slot */
  const char *name;
} demangled;

typedef struct object {
  char *path;      /* the module: the file's path, /proc/self/exe's target for the program */
  char *build_id;  /* lowercase hex, "" when none */
  /* Identity while loaded (with path and build-id): a dlclose and dlopen of another file at
   * the same address makes a new object. */
  const void *phdr;
  uintptr_t bias;
  int is_main, is_vdso;
  int loaded;            /* in the loader's list at the last read */
  unsigned seen;         /* the read that last saw it */
  int indexed;           /* the index was built (or found impossible) */
  uint64_t base;         /* lowest file address of its PT_LOADs */
  const void *image;     /* the vDSO's ELF image in memory (it has no file) */
  size_t image_size;
  entry *entries;
  uint32_t count;
  char *names;
  size_t names_size;
  demangled *demangled;  /* open addressing on the entry's index */
  uint32_t demangled_cap, demangled_len;
  int dwarf_fd;          /* the file (object or debug file) behind dwarf, -1 when none */
  Elf *dwarf_elf;
  Dwarf *dwarf;
} object;

typedef struct range {
  uintptr_t start, end;
  object *object;
} range;

struct lagscope__symbol_index {
  size_t bytes;                 /* everything below, and this struct */
  object **objects;             /* never moved or freed before _free: their strings are handed out */
  size_t objects_len, objects_cap;
  range *ranges;                /* of loaded objects, sorted by start */
  size_t ranges_len, ranges_cap;
  unsigned generation;          /* reads of the loader's list so far */
  unsigned long long adds, subs; /* the loader's counters at the last read */
  int have_counters;
  lagscope__text_arena names_arena; /* demangled names */
  demangle_fn demangle;
  void *libstdcxx;              /* our reference to libstdc++ when found by dlopen(NOLOAD) */
  int demangle_checked;
  unsigned long long demangle_checked_adds;
};

/* ---- 1. memory ------------------------------------------------------------------------------ */

static void *hold(lagscope__symbol_index *s, size_t size) {
  void *p = lagscope__alloc(size);
  if (p != NULL) s->bytes += size;
  return p;
}

static void let_go(lagscope__symbol_index *s, void *p, size_t size) {
  if (p == NULL) return;
  s->bytes -= size;
  lagscope__dealloc(p);
}

static char *hold_string(lagscope__symbol_index *s, const char *text) {
  size_t len = strlen(text);
  char *copy = hold(s, len + 1);
  if (copy != NULL) memcpy(copy, text, len + 1);
  return copy;
}

static void let_go_string(lagscope__symbol_index *s, char *text) {
  if (text != NULL) let_go(s, text, strlen(text) + 1);
}

/* Makes room for one more element, counted in the index's bytes; 0, or -1 when out of
 * memory. */
static int grow(lagscope__symbol_index *s, void **array, size_t *cap, size_t len, size_t element) {
  size_t before = *cap;
  if (lagscope__grow(array, cap, len, element, 16) != LAGSCOPE_OK) return -1;
  s->bytes += (*cap - before) * element;
  return 0;
}

/* ---- 2. objects ------------------------------------------------------------------------------ */

static void to_hex(const unsigned char *bytes, size_t len, char *hex, size_t hex_size) {
  static const char digits[] = "0123456789abcdef";
  size_t n = 0;
  for (size_t i = 0; i < len && n + 2 < hex_size; i++) {
    hex[n++] = digits[bytes[i] >> 4];
    hex[n++] = digits[bytes[i] & 15];
  }
  hex[n] = '\0';
}

/* Is [vaddr, vaddr + size) inside one of the object's PT_LOADs, so mapped and readable? */
static int is_mapped(const struct dl_phdr_info *info, uint64_t vaddr, uint64_t size) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && size <= ph->p_filesz &&
        vaddr - ph->p_vaddr <= ph->p_filesz - size)
      return 1;
  }
  return 0;
}

/* The NT_GNU_BUILD_ID note, read from the loaded object's memory: it works for objects whose
 * file is gone or replaced, and the vDSO. */
static void memory_build_id(const struct dl_phdr_info *info, char *hex, size_t hex_size) {
  hex[0] = '\0';
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE || !is_mapped(info, ph->p_vaddr, ph->p_filesz)) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    size_t align = ph->p_align == 8 ? 8 : 4, left = ph->p_filesz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) note;
      memcpy(&note, p, sizeof(note));
      size_t name_size = (note.n_namesz + align - 1) & ~(align - 1);
      size_t desc_size = (note.n_descsz + align - 1) & ~(align - 1);
      if (name_size > left - sizeof(note) || desc_size > left - sizeof(note) - name_size) break;
      const unsigned char *name = p + sizeof(note);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        to_hex(name + name_size, note.n_descsz, hex, hex_size);
        return;
      }
      p += sizeof(note) + name_size + desc_size;
      left -= sizeof(note) + name_size + desc_size;
    }
  }
}

static object *find_loaded(lagscope__symbol_index *s, const struct dl_phdr_info *info,
                           const char *build_id, int is_main) {
  for (size_t i = 0; i < s->objects_len; i++) {
    object *o = s->objects[i];
    if (o->bias == info->dlpi_addr && o->phdr == info->dlpi_phdr && o->is_main == is_main &&
        strcmp(o->build_id, build_id) == 0 && (is_main || strcmp(o->path, info->dlpi_name) == 0))
      return o;
  }
  return NULL;
}

/* The vDSO has no file: its whole ELF image is mapped, section headers too, though they lie
 * past its PT_LOAD segment's size (x86_64: headers at 0x15e0..0x1a20, p_filesz 0x1522), in
 * the rest of its last page. open_object copies it with a checked read. */
#define VDSO_IMAGE_MAX (1u << 20)
static void find_vdso_image(object *o, const struct dl_phdr_info *info) {
  uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  for (int i = 0; vdso != 0 && i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || ph->p_offset != 0 || info->dlpi_addr + ph->p_vaddr != vdso)
      continue;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)vdso;
    uint64_t size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
    if (size < ph->p_filesz) size = ph->p_filesz;
    if (size > VDSO_IMAGE_MAX) return;
    o->is_vdso = 1;
    o->image = eh;
    o->image_size = (size_t)size;
  }
}

static object *new_object(lagscope__symbol_index *s, const struct dl_phdr_info *info,
                          const char *build_id, int is_main) {
  if (grow(s, (void **)&s->objects, &s->objects_cap, s->objects_len, sizeof(object *)) != 0)
    return NULL;
  object *o = hold(s, sizeof(object));
  if (o == NULL) return NULL;
  char exe[PATH_MAX];
  const char *path = info->dlpi_name;
  if (is_main) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    path = n > 0 ? exe : "/proc/self/exe";
  }
  o->path = hold_string(s, path);
  o->build_id = hold_string(s, build_id);
  if (o->path == NULL || o->build_id == NULL) {
    let_go_string(s, o->path);
    let_go_string(s, o->build_id);
    let_go(s, o, sizeof(object));
    return NULL;
  }
  o->phdr = info->dlpi_phdr;
  o->bias = info->dlpi_addr;
  o->is_main = is_main;
  o->dwarf_fd = -1;
  o->base = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < o->base)
      o->base = info->dlpi_phdr[i].p_vaddr;
  if (!is_main) find_vdso_image(o, info);
  s->objects[s->objects_len++] = o;
  return o;
}

typedef struct read_context {
  lagscope__symbol_index *s;
  int failed;
} read_context;

static void note_counters(lagscope__symbol_index *s, const struct dl_phdr_info *info, size_t size) {
  if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return;
  s->adds = info->dlpi_adds;
  s->subs = info->dlpi_subs;
  s->have_counters = 1;
}

/* Runs under the loader's lock, which dlopen holds only while it links the new object into
 * the list; allocating here is fine (the loader itself does). */
static int read_one_object(struct dl_phdr_info *info, size_t size, void *data) {
  read_context *ctx = data;
  lagscope__symbol_index *s = ctx->s;
  note_counters(s, info, size);
  if (info->dlpi_phnum == 0) return 0;
  char build_id[BUILD_ID_HEX_MAX];
  memory_build_id(info, build_id, sizeof(build_id));
  int is_main = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
  object *o = find_loaded(s, info, build_id, is_main);
  if (o == NULL) o = new_object(s, info, build_id, is_main);
  if (o == NULL) {
    ctx->failed = 1;
    return 0;
  }
  o->loaded = 1;
  o->seen = s->generation;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || ph->p_memsz == 0) continue;
    if (grow(s, (void **)&s->ranges, &s->ranges_cap, s->ranges_len, sizeof(range)) != 0) {
      ctx->failed = 1;
      return 0;
    }
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    s->ranges[s->ranges_len++] = (range){start, start + ph->p_memsz, o};
  }
  return 0;
}

static int compare_ranges(const void *a, const void *b) {
  uintptr_t x = ((const range *)a)->start, y = ((const range *)b)->start;
  return (x > y) - (x < y);
}

/* Reads the loader's list again. Objects no longer listed stay (their strings were handed out)
 * but leave the ranges; one loaded again at the same place with the same file comes back. */
static void read_objects(lagscope__symbol_index *s) {
  s->generation++;
  s->ranges_len = 0;
  read_context ctx = {s, 0};
  dl_iterate_phdr(read_one_object, &ctx);
  for (size_t i = 0; i < s->objects_len; i++)
    if (s->objects[i]->seen != s->generation) s->objects[i]->loaded = 0;
  if (s->ranges_len > 1) lagscope__sort(s->ranges, s->ranges_len, sizeof(range), compare_ranges);
}

typedef struct counters {
  unsigned long long adds, subs;
  int known;
} counters;

static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
  counters *c = data;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    c->known = 1;
  }
  return 1; /* the first object carries the counters: stop there */
}

/* Has an object been loaded or unloaded since the last read? One lock of the loader's. */
static int objects_changed(const lagscope__symbol_index *s) {
  if (!s->have_counters) return 0;
  counters c = {0, 0, 0};
  dl_iterate_phdr(read_counters, &c);
  return c.known && (c.adds != s->adds || c.subs != s->subs);
}

static object *find_object(const lagscope__symbol_index *s, uintptr_t address) {
  size_t lo = 0, hi = s->ranges_len; /* the first range starting after address is in [lo, hi] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->ranges[mid].start <= address) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || address >= s->ranges[lo - 1].end) return NULL;
  return s->ranges[lo - 1].object;
}

/* ---- 3. index --------------------------------------------------------------------------------- */

/* A symbol as read, before sorting and deduplication. */
typedef struct raw_symbol {
  uint64_t start, size, section_end; /* file addresses */
  const char *name;                  /* in the ELF file's mapping */
  uint32_t order;                    /* read order: .symtab first */
  uint8_t underscores;               /* fewer is the nicer alias: malloc, not __libc_malloc */
  uint8_t rank;                      /* global 2, weak 1, local 0 */
} raw_symbol;

typedef struct raw_list {
  raw_symbol *items;
  size_t len, cap;
} raw_list;

/* Temporary: counted as lagscope's memory while it lives, but not as the index's. */
static int raw_push(raw_list *list, const raw_symbol *symbol) {
  void *items = list->items;
  if (lagscope__grow(&items, &list->cap, list->len, sizeof(raw_symbol), 1024) != LAGSCOPE_OK)
    return -1;
  list->items = items;
  list->items[list->len++] = *symbol;
  return 0;
}

static Elf_Scn *find_section(Elf *elf, GElf_Word type) {
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn)) != NULL) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == type && sh.sh_entsize != 0 &&
        sh.sh_size / sh.sh_entsize > 1)
      return scn;
  }
  return NULL;
}

/* Reads the defined function symbols of one symbol table. 0, or -1 when out of memory. */
static int collect_symbols(Elf *elf, Elf_Scn *table, uint64_t base, raw_list *list) {
  GElf_Shdr sh;
  Elf_Data *data = elf_getdata(table, NULL);
  if (gelf_getshdr(table, &sh) == NULL || data == NULL) return 0;
  size_t n = sh.sh_size / sh.sh_entsize;
  for (size_t i = 1; i < n; i++) {
    GElf_Sym sym;
    if (gelf_getsym(data, (int)i, &sym) == NULL) break;
    int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_shndx >= SHN_LORESERVE || sym.st_value < base ||
        sym.st_value - base > UINT32_MAX || sym.st_size > UINT32_MAX)
      continue;
    const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
    GElf_Shdr section;
    if (name == NULL || name[0] == '\0' ||
        gelf_getshdr(elf_getscn(elf, sym.st_shndx), &section) == NULL)
      continue;
    raw_symbol r = {.start = sym.st_value, .size = sym.st_size,
                    .section_end = section.sh_addr + section.sh_size, .name = name,
                    .order = (uint32_t)list->len,
                    .rank = bind == STB_LOCAL ? 0 : bind == STB_WEAK ? 1 : 2};
    while (name[r.underscores] == '_' && r.underscores < 255) r.underscores++;
    if (raw_push(list, &r) != 0) return -1;
  }
  return 0;
}

/* By start; at one start the larger first (it encloses), then the nicer alias: exported over
 * local (a debug file's .symtab holds odd local aliases), then the one programmers call
 * (getpid, a weak alias, rather than __getpid), then global over weak. */
static int compare_raw(const void *a, const void *b) {
  const raw_symbol *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if ((x->rank > 0) != (y->rank > 0)) return x->rank > 0 ? -1 : 1;
  if (x->underscores != y->underscores) return x->underscores < y->underscores ? -1 : 1;
  if (x->rank != y->rank) return x->rank > y->rank ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

/* One entry per (start, size); a size-0 symbol is dropped where a sized one starts at the same
 * place or encloses it (a label inside a function). Compacts the list in place. */
static size_t dedupe(raw_symbol *r, size_t n, uint32_t *stack) {
  size_t kept = 0, depth = 0;
  for (size_t i = 0; i < n; i++) {
    if (kept > 0 && r[i].start == r[kept - 1].start &&
        (r[i].size == r[kept - 1].size || r[i].size == 0))
      continue;
    while (depth > 0 && r[stack[depth - 1]].start + r[stack[depth - 1]].size <= r[i].start) depth--;
    if (r[i].size == 0 && depth > 0) continue;
    r[kept] = r[i];
    if (r[kept].size > 0) stack[depth++] = (uint32_t)kept;
    kept++;
  }
  return kept;
}

/* A size-0 symbol stretches to the next symbol or its section's end, only when the list is
 * complete (a full .symtab): in .dynsym alone the gap may hold unnamed static functions. */
static void stretch_unsized(raw_symbol *r, size_t n, int complete) {
  if (!complete) return;
  for (size_t i = 0; i < n; i++) {
    if (r[i].size != 0) continue;
    uint64_t end = r[i].section_end;
    if (i + 1 < n && r[i + 1].start < end) end = r[i + 1].start;
    if (end > r[i].start) r[i].size = end - r[i].start;
  }
}

static void link_parents(entry *e, uint32_t n, uint32_t *stack) {
  size_t depth = 0;
  for (uint32_t i = 0; i < n; i++) {
    while (depth > 0 && (uint64_t)e[stack[depth - 1]].start + e[stack[depth - 1]].size <= e[i].start)
      depth--;
    e[i].parent = depth > 0 ? stack[depth - 1] : NO_PARENT;
    if (e[i].size > 0) stack[depth++] = i;
  }
}

/* A .symtab written by ld keeps symbol versions ("memcpy@@GLIBC_2.14"); the name is the part
 * before, as dladdr and .dynsym give it. No C or C++ name holds an '@'. */
static size_t name_length(const char *name) { return strcspn(name, "@"); }

/* Turns the raw list into the object's entries and names. 0, or -1 when out of memory. */
static int build_index(lagscope__symbol_index *s, object *o, raw_list *list, int complete) {
  if (list->len == 0 || list->len >= UINT32_MAX) return 0;
  lagscope__sort(list->items, list->len, sizeof(raw_symbol), compare_raw);
  uint32_t *stack = lagscope__alloc(list->len * sizeof(uint32_t));
  if (stack == NULL) return -1;
  size_t n = dedupe(list->items, list->len, stack);
  stretch_unsized(list->items, n, complete);
  size_t names_size = 0;
  for (size_t i = 0; i < n; i++) names_size += name_length(list->items[i].name) + 1;
  o->entries = hold(s, n * sizeof(entry));
  o->names = names_size <= UINT32_MAX ? hold(s, names_size) : NULL;
  if (o->entries == NULL || o->names == NULL) {
    let_go(s, o->entries, n * sizeof(entry));
    let_go(s, o->names, names_size);
    o->entries = NULL;
    o->names = NULL;
    lagscope__dealloc(stack);
    return -1;
  }
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    const raw_symbol *r = &list->items[i];
    size_t len = name_length(r->name);
    memcpy(o->names + at, r->name, len);
    o->names[at + len++] = '\0';
    o->entries[i] = (entry){(uint32_t)(r->start - o->base), (uint32_t)r->size, (uint32_t)at, 0};
    at += len;
  }
  o->count = (uint32_t)n;
  o->names_size = names_size;
  link_parents(o->entries, o->count, stack);
  lagscope__dealloc(stack);
  return 0;
}

static int open_file(const char *path, int *fd, Elf **elf) {
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  *elf = NULL;
  if (*fd < 0) return -1;
  *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
  if (*elf != NULL && elf_kind(*elf) == ELF_K_ELF) return 0;
  if (*elf != NULL) elf_end(*elf);
  close(*fd);
  *fd = -1;
  *elf = NULL;
  return -1;
}

static void close_file(int fd, Elf *elf) {
  if (elf != NULL) elf_end(elf);
  if (fd >= 0) close(fd);
}

static void file_build_id(Elf *elf, char *hex, size_t hex_size) {
  hex[0] = '\0';
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn)) != NULL) {
    GElf_Shdr sh;
    Elf_Data *data;
    if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE ||
        (data = elf_getdata(scn, NULL)) == NULL)
      continue;
    size_t offset = 0, name_at, desc_at;
    GElf_Nhdr note;
    while (offset < data->d_size &&
           (offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
      const char *bytes = data->d_buf;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          memcmp(bytes + name_at, "GNU", 4) == 0) {
        to_hex((const unsigned char *)bytes + desc_at, note.n_descsz, hex, hex_size);
        return;
      }
    }
  }
}

/* The file says it is the object we have in memory; without a build-id we trust the path. */
static int same_build(Elf *elf, const object *o) {
  if (o->build_id[0] == '\0') return 1;
  char id[BUILD_ID_HEX_MAX];
  file_build_id(elf, id, sizeof(id));
  return strcmp(id, o->build_id) == 0;
}

/* The separate debug file Debian's -dbg packages and debuginfod caches install. */
static int open_debug_file(const object *o, int *fd, Elf **elf) {
  *fd = -1;
  *elf = NULL;
  if (strlen(o->build_id) < 4) return -1;
  char path[sizeof(DEBUG_BUILD_ID_DIR) + BUILD_ID_HEX_MAX + 8];
  snprintf(path, sizeof(path), "%s%.2s/%s.debug", DEBUG_BUILD_ID_DIR, o->build_id, o->build_id + 2);
  if (open_file(path, fd, elf) != 0) return -1;
  if (same_build(*elf, o)) return 0;
  close_file(*fd, *elf);
  *fd = -1;
  *elf = NULL;
  return -1;
}

/* The object's ELF: its file (/proc/self/exe for the program, still right when the file was
 * replaced), or for the vDSO a copy of its image (libelf must not touch read-only pages). */
static Elf *open_object(lagscope__symbol_index *s, const object *o, int *fd, void **copy) {
  *fd = -1;
  *copy = NULL;
  if (o->is_vdso) {
    *copy = hold(s, o->image_size);
    if (*copy == NULL) return NULL;
    if (lagscope__linux_read_own((uintptr_t)o->image, *copy, o->image_size) != 0) {
      let_go(s, *copy, o->image_size); /* not all mapped: no symbols rather than a fault */
      *copy = NULL;
      return NULL;
    }
    Elf *elf = elf_memory(*copy, o->image_size);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF) return elf;
    if (elf != NULL) elf_end(elf);
    return NULL;
  }
  Elf *elf;
  if (open_file(o->is_main ? "/proc/self/exe" : o->path, fd, &elf) != 0) return NULL;
  if (same_build(elf, o)) return elf;
  close_file(*fd, elf); /* replaced on disk since it was loaded: its symbols would lie */
  *fd = -1;
  return NULL;
}

/* 1 when elf has DWARF that can be read in place: a .debug_info section, and no .debug_
 * section compressed (Debian's debug packages, -gz builds), which libdw would inflate whole at
 * dwarf_begin_elf. */
static int has_plain_dwarf(Elf *elf) {
  size_t names;
  if (elf_getshdrstrndx(elf, &names) != 0) return 0;
  int info = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn)) != NULL) {
    GElf_Shdr sh;
    const char *name;
    if (gelf_getshdr(scn, &sh) == NULL || (name = elf_strptr(elf, names, sh.sh_name)) == NULL ||
        strncmp(name, ".debug_", 7) != 0)
      continue;
    if (sh.sh_flags & SHF_COMPRESSED) return 0;
    if (strcmp(name, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS) info = 1;
  }
  return info;
}

/* libdw's functions that lagscope calls, from libdw.so.1 loaded at the first object with DWARF
 * to read (RTLD_LOCAL, never unloaded: its Dwarf handles may live in an index). The loader's
 * lock is taken then, once, on lagscope's thread. NULL when it cannot be loaded: names still,
 * no lines. */
typedef struct libdw_calls {
  Dwarf *(*begin_elf)(Elf *elf, Dwarf_Cmd cmd, Elf_Scn *scn);
  int (*end)(Dwarf *dwarf);
  Dwarf_Die *(*addrdie)(Dwarf *dwarf, Dwarf_Addr address, Dwarf_Die *result);
  Dwarf_Line *(*getsrc_die)(Dwarf_Die *cu, Dwarf_Addr address);
  int (*lineno)(Dwarf_Line *line, int *number);
  const char *(*linesrc)(Dwarf_Line *line, Dwarf_Word *mtime, Dwarf_Word *length);
} libdw_calls;

static libdw_calls libdw;
static int libdw_loaded;
static pthread_once_t libdw_once = PTHREAD_ONCE_INIT;

static void load_libdw(void) {
  void *handle = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) return;
  libdw_calls calls;
  *(void **)&calls.begin_elf = dlsym(handle, "dwarf_begin_elf");
  *(void **)&calls.end = dlsym(handle, "dwarf_end");
  *(void **)&calls.addrdie = dlsym(handle, "dwarf_addrdie");
  *(void **)&calls.getsrc_die = dlsym(handle, "dwarf_getsrc_die");
  *(void **)&calls.lineno = dlsym(handle, "dwarf_lineno");
  *(void **)&calls.linesrc = dlsym(handle, "dwarf_linesrc");
  if (calls.begin_elf == NULL || calls.end == NULL || calls.addrdie == NULL ||
      calls.getsrc_die == NULL || calls.lineno == NULL || calls.linesrc == NULL) {
    dlclose(handle);
    return;
  }
  libdw = calls;
  libdw_loaded = 1;
}

static const libdw_calls *libdw_functions(void) {
  pthread_once(&libdw_once, load_libdw);
  return libdw_loaded ? &libdw : NULL;
}

/* A DWARF reader on elf, unless its DWARF is compressed: names then, but no file:line. libdw
 * would inflate it with the app's malloc (13 MB for Debian's libc debug file), and what it
 * frees stays with the app: the arena keeps the pages, and glibc raises its mmap threshold to
 * the largest freed block, for the app's own allocations too. An app's own -g code is not
 * compressed (unless built with -gz) and keeps its lines. */
static Dwarf *open_dwarf(Elf *elf) {
  if (elf == NULL || !has_plain_dwarf(elf)) return NULL;
  const libdw_calls *dw = libdw_functions();
  return dw != NULL ? dw->begin_elf(elf, DWARF_C_READ, NULL) : NULL;
}

/* Keeps a DWARF reader on whichever file has debug info (the object or its debug file). */
static void keep_dwarf(object *o, int *fd, Elf **elf, int *debug_fd, Elf **debug_elf) {
  Dwarf *dwarf = *fd >= 0 ? open_dwarf(*elf) : NULL;
  if (dwarf != NULL) {
    o->dwarf = dwarf, o->dwarf_elf = *elf, o->dwarf_fd = *fd;
    *elf = NULL, *fd = -1;
    return;
  }
  dwarf = open_dwarf(*debug_elf);
  if (dwarf != NULL) {
    o->dwarf = dwarf, o->dwarf_elf = *debug_elf, o->dwarf_fd = *debug_fd;
    *debug_elf = NULL, *debug_fd = -1;
  }
}

static void index_object(lagscope__symbol_index *s, object *o) {
  o->indexed = 1;
  int fd, debug_fd = -1;
  void *copy;
  Elf *elf = open_object(s, o, &fd, &copy), *debug_elf = NULL;
  if (elf == NULL) {
    let_go(s, copy, o->image_size);
    return; /* module + offset only */
  }
  Elf_Scn *symtab = find_section(elf, SHT_SYMTAB), *dynsym = find_section(elf, SHT_DYNSYM);
  Elf *symtab_elf = elf;
  if (symtab == NULL && !o->is_vdso && open_debug_file(o, &debug_fd, &debug_elf) == 0) {
    symtab = find_section(debug_elf, SHT_SYMTAB);
    symtab_elf = debug_elf;
  }
  raw_list list = {NULL, 0, 0};
  int rc = symtab != NULL ? collect_symbols(symtab_elf, symtab, o->base, &list) : 0;
  if (rc == 0 && dynsym != NULL) rc = collect_symbols(elf, dynsym, o->base, &list);
  if (rc == 0) build_index(s, o, &list, symtab != NULL);
  lagscope__dealloc(list.items);
  if (debug_elf == NULL && !o->is_vdso) open_debug_file(o, &debug_fd, &debug_elf);
  keep_dwarf(o, &fd, &elf, &debug_fd, &debug_elf);
  close_file(fd, elf);
  close_file(debug_fd, debug_elf);
  let_go(s, copy, o->image_size);
}

/* ---- 4. lookup --------------------------------------------------------------------------------- */

/* The innermost symbol that holds the file address, or NULL. */
static const entry *find_entry(const object *o, uint64_t file_address) {
  if (o->count == 0 || file_address < o->base || file_address - o->base > UINT32_MAX) return NULL;
  uint32_t at = (uint32_t)(file_address - o->base);
  uint32_t lo = 0, hi = o->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (o->entries[mid].start <= at) lo = mid + 1;
    else hi = mid;
  }
  uint32_t i = lo == 0 ? NO_PARENT : lo - 1;
  for (int steps = 0; i != NO_PARENT && steps < MAX_PARENT_STEPS; steps++) {
    const entry *e = &o->entries[i];
    if (e->size == 0 ? at == e->start : at - e->start < e->size) return e;
    i = e->parent;
  }
  return NULL;
}

/* ---- 5. names ------------------------------------------------------------------------------------ */

/* libstdc++'s, when the app links it: a weak reference, resolved when lagscope is loaded. Not
 * dlsym(RTLD_DEFAULT): in a C program the name is nowhere, and that failed lookup reads the
 * symbol tables of every loaded library, whose pages then stay resident. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
    __attribute__((weak));

/* Looked up again after a dlopen: a C program may load C++ plugins later (libstdc++ then
 * comes with them, found by name without loading anything). */
static demangle_fn find_demangler(lagscope__symbol_index *s) {
  if (s->demangle != NULL) return s->demangle;
  if (__cxa_demangle != NULL) return s->demangle = __cxa_demangle;
  if (s->demangle_checked && s->demangle_checked_adds == s->adds) return NULL;
  s->demangle_checked = 1;
  s->demangle_checked_adds = s->adds;
  if (s->libstdcxx == NULL) s->libstdcxx = dlopen("libstdc++.so.6", RTLD_NOLOAD | RTLD_LAZY);
  void *f = s->libstdcxx != NULL ? dlsym(s->libstdcxx, "__cxa_demangle") : NULL;
  if (f != NULL) memcpy(&s->demangle, &f, sizeof(f)); /* object to function pointer, as POSIX allows */
  return s->demangle;
}

static uint32_t hash_index(uint32_t i) { return i * 2654435761u; }

static const char *cached_name(const object *o, uint32_t index) {
  if (o->demangled_cap == 0) return NULL;
  uint32_t mask = o->demangled_cap - 1;
  for (uint32_t at = hash_index(index) & mask;; at = (at + 1) & mask) {
    if (o->demangled[at].entry_plus_one == 0) return NULL;
    if (o->demangled[at].entry_plus_one == index + 1) return o->demangled[at].name;
  }
}

static void cache_name(lagscope__symbol_index *s, object *o, uint32_t index, const char *name) {
  if ((o->demangled_len + 1) * 4 > o->demangled_cap * 3) { /* keep it under 3/4 full */
    uint32_t cap = o->demangled_cap ? o->demangled_cap * 2 : 64;
    demangled *bigger = hold(s, cap * sizeof(demangled));
    if (bigger == NULL) return; /* not cached: demangled again next time */
    for (uint32_t i = 0; i < o->demangled_cap; i++) {
      if (o->demangled[i].entry_plus_one == 0) continue;
      uint32_t at = hash_index(o->demangled[i].entry_plus_one - 1) & (cap - 1);
      while (bigger[at].entry_plus_one != 0) at = (at + 1) & (cap - 1);
      bigger[at] = o->demangled[i];
    }
    let_go(s, o->demangled, o->demangled_cap * sizeof(demangled));
    o->demangled = bigger;
    o->demangled_cap = cap;
  }
  uint32_t mask = o->demangled_cap - 1, at = hash_index(index) & mask;
  while (o->demangled[at].entry_plus_one != 0) at = (at + 1) & mask;
  o->demangled[at] = (demangled){index + 1, name};
  o->demangled_len++;
}

static const char *function_name(lagscope__symbol_index *s, object *o, const entry *e) {
  const char *raw = o->names + e->name;
  if (raw[0] != '_' || raw[1] != 'Z') return raw; /* C, or not mangled the Itanium way */
  uint32_t index = (uint32_t)(e - o->entries);
  const char *name = cached_name(o, index);
  if (name != NULL) return name;
  demangle_fn demangle = find_demangler(s);
  if (demangle == NULL) return raw; /* not cached: libstdc++ may come later */
  int status = -1;
  char *plain = demangle(raw, NULL, NULL, &status);
  name = plain != NULL && status == 0 ? lagscope__text_arena_copy(&s->names_arena, plain) : NULL;
  free(plain); /* libstdc++ allocated it with malloc */
  if (name == NULL) name = raw;
  cache_name(s, o, index, name);
  return name;
}

/* ---- 6. lines ----------------------------------------------------------------------------------- */

/* file points into libdw's line table, which lives as long as the object's Dwarf: until _free. */
static void find_line(const object *o, uint64_t file_address, lagscope__stack_frame *out) {
  Dwarf_Die cu;
  if (o->dwarf == NULL || libdw.addrdie(o->dwarf, file_address, &cu) == NULL) return;
  Dwarf_Line *line = libdw.getsrc_die(&cu, file_address); /* loaded: o->dwarf is libdw's */
  int number = 0;
  if (line == NULL || libdw.lineno(line, &number) != 0 || number <= 0) return;
  const char *file = libdw.linesrc(line, NULL, NULL);
  if (file == NULL) return;
  out->file = file;
  out->line = (uint32_t)number;
}

/* ---- 7. the contract ---------------------------------------------------------------------------- */

lagscope__symbol_index *lagscope__symbol_index_new(void) {
  lagscope__symbol_index *s = lagscope__alloc(sizeof(lagscope__symbol_index));
  if (s == NULL) return NULL;
  s->bytes = sizeof(lagscope__symbol_index);
  elf_version(EV_CURRENT); /* libelf refuses to work until told the version; idempotent */
  return s;
}

static void free_object(lagscope__symbol_index *s, object *o) {
  if (o->dwarf != NULL) libdw.end(o->dwarf);
  close_file(o->dwarf_fd, o->dwarf_elf);
  let_go(s, o->entries, (size_t)o->count * sizeof(entry));
  let_go(s, o->names, o->names_size);
  let_go(s, o->demangled, (size_t)o->demangled_cap * sizeof(demangled));
  let_go_string(s, o->path);
  let_go_string(s, o->build_id);
  let_go(s, o, sizeof(object));
}

void lagscope__symbol_index_free(lagscope__symbol_index *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < s->objects_len; i++) free_object(s, s->objects[i]);
  let_go(s, s->objects, s->objects_cap * sizeof(object *));
  let_go(s, s->ranges, s->ranges_cap * sizeof(range));
  lagscope__text_arena_free(&s->names_arena);
  if (s->libstdcxx != NULL) dlclose(s->libstdcxx);
  lagscope__dealloc(s);
}

int lagscope__symbol_index_resolve(lagscope__symbol_index *s, uintptr_t address,
                                   uintptr_t lookup, lagscope__stack_frame *out) {
  int fresh = s->generation == 0 || objects_changed(s);
  if (fresh) read_objects(s);
  object *o = find_object(s, lookup);
  if (o == NULL && !fresh) {
    read_objects(s); /* loaded since, by a loader that keeps no counters */
    o = find_object(s, lookup);
  }
  if (o == NULL) return LAGSCOPE_ENOENT;
  if (!o->indexed) index_object(s, o);
  out->module = o->path;
  out->build_id = o->build_id;
  out->load_address = o->bias;
  out->module_offset = address - o->bias;
  uint64_t file_address = lookup - o->bias;
  const entry *e = find_entry(o, file_address);
  if (e != NULL) {
    out->function = function_name(s, o, e);
    out->function_offset = address - (o->bias + (uintptr_t)o->base + e->start);
  }
  find_line(o, file_address, out);
  return 0;
}


size_t lagscope__symbol_index_memory(const lagscope__symbol_index *s) {
  return s->bytes + s->names_arena.bytes;
}
