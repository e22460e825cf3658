/*
 * An object's function symbols, for the Linux symbol index (symbols.h): once per object, at
 * the first address that falls in it, .symtab and .dynsym read from its file (or .symtab from
 * the build-id debug file when the object is stripped, else from its MiniDebugInfo,
 * symbols_minidebug.c; the vDSO from a copy of its image) into
 * sorted 16-byte entries, each linked to the one that encloses it; then the lookup, a binary
 * search and the chain of enclosing symbols.
 *
 * Never an invented name: an address past a symbol's size has no function. A symbol of size 0
 * (hand-written assembly without .size) stretches to the next symbol or its section's end only
 * when the object's full .symtab was read and no sized symbol encloses it; from .dynsym alone
 * (a stripped object, whose gaps hold unnamed static functions) it names its first byte only.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_PARENT_STEPS 64     /* deeper nesting of symbols than this is corrupt, not code */
#define DEBUG_BUILD_ID_DIR "/usr/lib/debug/.build-id/"
#define DEBUG_PATH_MAX 4160 /* a debug file's path: a folder of PATH_MAX, and the name */

/* ---- the symbols read, sorted and linked ----------------------------------------------------- */

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

static void link_parents(lagscope__elf_entry *e, uint32_t n, uint32_t *stack) {
  size_t depth = 0;
  for (uint32_t i = 0; i < n; i++) {
    while (depth > 0 && (uint64_t)e[stack[depth - 1]].start + e[stack[depth - 1]].size <= e[i].start)
      depth--;
    e[i].parent = depth > 0 ? stack[depth - 1] : LAGSCOPE__ELF_NO_PARENT;
    if (e[i].size > 0) stack[depth++] = i;
  }
}

/* A .symtab written by ld keeps symbol versions ("memcpy@@GLIBC_2.14"); the name is the part
 * before, as dladdr and .dynsym give it. No C or C++ name holds an '@'. */
static size_t name_length(const char *name) { return strcspn(name, "@"); }

/* Turns the raw list into the object's entries and names. 0, or -1 when out of memory. */
static int build_index(lagscope__symbol_index *s, lagscope__elf_object *o, raw_list *list,
                       int complete) {
  if (list->len == 0 || list->len >= UINT32_MAX) return 0;
  lagscope__sort(list->items, list->len, sizeof(raw_symbol), compare_raw);
  uint32_t *stack = lagscope__alloc(list->len * sizeof(uint32_t));
  if (stack == NULL) return -1;
  size_t n = dedupe(list->items, list->len, stack);
  stretch_unsized(list->items, n, complete);
  size_t names_size = 0;
  for (size_t i = 0; i < n; i++) names_size += name_length(list->items[i].name) + 1;
  o->entries = lagscope__elf_hold(s, n * sizeof(lagscope__elf_entry));
  o->names = names_size <= UINT32_MAX ? lagscope__elf_hold(s, names_size) : NULL;
  if (o->entries == NULL || o->names == NULL) {
    lagscope__elf_let_go(s, o->entries, n * sizeof(lagscope__elf_entry));
    lagscope__elf_let_go(s, o->names, names_size);
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
    o->entries[i] =
        (lagscope__elf_entry){(uint32_t)(r->start - o->base), (uint32_t)r->size, (uint32_t)at, 0};
    at += len;
  }
  o->count = (uint32_t)n;
  o->names_size = names_size;
  link_parents(o->entries, o->count, stack);
  lagscope__dealloc(stack);
  return 0;
}

/* ---- the object's file, and its debug file --------------------------------------------------- */

/* The ELF file at path, read in (mapped) with no descriptor kept: *fd is -1 on return. */
static int open_file(const char *path, int *fd, Elf **elf) {
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  *elf = NULL;
  if (*fd < 0) return -1;
  *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
  if (*elf != NULL && elf_kind(*elf) == ELF_K_ELF) {
    /* Read in (mapped already, as a rule) and let go of the descriptor now: a descriptor kept
     * for as long as the index lives could be closed by the app and its number reused, and
     * libelf would then read, and elf_end close, the app's file. */
    elf_cntl(*elf, ELF_C_FDREAD);
    elf_cntl(*elf, ELF_C_FDDONE);
    close(*fd);
    *fd = -1;
    return 0;
  }
  if (*elf != NULL) elf_end(*elf);
  close(*fd);
  *fd = -1;
  *elf = NULL;
  return -1;
}

void lagscope__elf_close_file(int fd, Elf *elf) {
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
        lagscope__elf_to_hex((const unsigned char *)bytes + desc_at, note.n_descsz, hex,
                             hex_size);
        return;
      }
    }
  }
}

/* The file says it is the object we have in memory; without a build-id we trust the path. */
static int same_build(Elf *elf, const lagscope__elf_object *o) {
  if (o->build_id[0] == '\0') return 1;
  char id[LAGSCOPE__ELF_BUILD_ID_HEX_MAX];
  file_build_id(elf, id, sizeof(id));
  return strcmp(id, o->build_id) == 0;
}

/* Opens path as o's debug file: 0 when it is there and of o's build. */
static int open_debug_path(const lagscope__elf_object *o, const char *path, int *fd, Elf **elf) {
  if (open_file(path, fd, elf) != 0) return -1;
  if (same_build(*elf, o)) return 0;
  lagscope__elf_close_file(*fd, *elf);
  *fd = -1;
  *elf = NULL;
  return -1;
}

/* The file name a .gnu_debuglink section names (the section: the name, NUL, padding, a CRC),
 * into out; 0 when there is none, or it is no plain file name. */
static int debuglink_name(Elf *elf, char *out, size_t size) {
  size_t names;
  if (elf_getshdrstrndx(elf, &names) != 0) return 0;
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    const char *name = gelf_getshdr(scn, &shdr) != NULL ? elf_strptr(elf, names, shdr.sh_name) : NULL;
    if (name == NULL || strcmp(name, ".gnu_debuglink") != 0) continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (data == NULL || data->d_buf == NULL) return 0;
    size_t n = strnlen(data->d_buf, data->d_size);
    if (n == 0 || n == data->d_size || n >= size || memchr(data->d_buf, '/', n) != NULL) return 0;
    memcpy(out, data->d_buf, n + 1);
    return 1;
  }
  return 0;
}

/* The separate debug file: by build-id where Debian's -dbgsym packages and debuginfod caches
 * put it, else where the object's .gnu_debuglink says, as gdb looks for it (beside the
 * object, in its .debug folder, under /usr/lib/debug). The file must be of the object's build. */
static int open_debug_file(const lagscope__elf_object *o, Elf *object_elf, int *fd, Elf **elf) {
  *fd = -1;
  *elf = NULL;
  char path[DEBUG_PATH_MAX];
  if (strlen(o->build_id) >= 4) {
    snprintf(path, sizeof(path), "%s%.2s/%s.debug", DEBUG_BUILD_ID_DIR, o->build_id,
             o->build_id + 2);
    if (open_debug_path(o, path, fd, elf) == 0) return 0;
  }
  char name[256];
  const char *slash = strrchr(o->path, '/');
  if (object_elf == NULL || slash == NULL || !debuglink_name(object_elf, name, sizeof(name)))
    return -1;
  int dir = (int)(slash - o->path);
  static const char *const places[] = {"%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s"};
  for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
    snprintf(path, sizeof(path), places[i], dir, o->path, name);
    if (strcmp(path, o->path) != 0 && open_debug_path(o, path, fd, elf) == 0) return 0;
  }
  return -1;
}

/* The object's ELF: its file (/proc/self/exe for the program, still right when the file was
 * replaced), or for the vDSO a copy of its image (libelf must not touch read-only pages). */
static Elf *open_object(lagscope__symbol_index *s, const lagscope__elf_object *o, int *fd,
                        void **copy) {
  *fd = -1;
  *copy = NULL;
  if (o->is_vdso) {
    *copy = lagscope__elf_hold(s, o->image_size);
    if (*copy == NULL) return NULL;
    if (lagscope__linux_read_own((uintptr_t)o->image, *copy, o->image_size) != 0) {
      /* not all mapped: no symbols rather than a fault */
      lagscope__elf_let_go(s, *copy, o->image_size);
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
  /* replaced on disk since it was loaded: its symbols would lie */
  lagscope__elf_close_file(*fd, elf);
  *fd = -1;
  return NULL;
}

/* The symbols of the object's file and of its debug file, then a DWARF reader (symbols.h). */
void lagscope__elf_index_object(lagscope__symbol_index *s, lagscope__elf_object *o) {
  o->indexed = 1;
  int fd, debug_fd = -1;
  void *copy;
  Elf *elf = open_object(s, o, &fd, &copy), *debug_elf = NULL;
  if (elf == NULL) {
    lagscope__elf_let_go(s, copy, o->image_size);
    return; /* module + offset only */
  }
  Elf_Scn *symtab = find_section(elf, SHT_SYMTAB), *dynsym = find_section(elf, SHT_DYNSYM);
  Elf *symtab_elf = elf;
  if (symtab == NULL && !o->is_vdso && open_debug_file(o, elf, &debug_fd, &debug_elf) == 0) {
    symtab = find_section(debug_elf, SHT_SYMTAB);
    symtab_elf = debug_elf;
  }
  /* No .symtab anywhere else: the one MiniDebugInfo keeps (Fedora), of the functions .dynsym
   * lacks. Read into the index now, and let go with the list. */
  lagscope__elf_minidebug mini = {NULL, 0, NULL};
  if (symtab == NULL && !o->is_vdso && lagscope__elf_open_minidebug(elf, &mini) == 0) {
    symtab = find_section(mini.elf, SHT_SYMTAB);
    symtab_elf = mini.elf;
  }
  raw_list list = {NULL, 0, 0};
  int rc = symtab != NULL ? collect_symbols(symtab_elf, symtab, o->base, &list) : 0;
  if (rc == 0 && dynsym != NULL) rc = collect_symbols(elf, dynsym, o->base, &list);
  if (rc == 0) build_index(s, o, &list, symtab != NULL);
  lagscope__dealloc(list.items);
  lagscope__elf_close_minidebug(&mini);
  if (debug_elf == NULL && !o->is_vdso) open_debug_file(o, elf, &debug_fd, &debug_elf);
  lagscope__elf_keep_dwarf(o, &fd, &elf, &debug_fd, &debug_elf);
  lagscope__elf_close_file(fd, elf);
  lagscope__elf_close_file(debug_fd, debug_elf);
  lagscope__elf_let_go(s, copy, o->image_size);
}

/* ---- lookup ---------------------------------------------------------------------------------- */

/* A binary search, then the chain of enclosing symbols (symbols.h). */
const lagscope__elf_entry *lagscope__elf_find_entry(const lagscope__elf_object *o,
                                                    uint64_t file_address) {
  if (o->count == 0 || file_address < o->base || file_address - o->base > UINT32_MAX)
    return NULL;
  uint32_t at = (uint32_t)(file_address - o->base);
  uint32_t lo = 0, hi = o->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (o->entries[mid].start <= at) lo = mid + 1;
    else hi = mid;
  }
  uint32_t i = lo == 0 ? LAGSCOPE__ELF_NO_PARENT : lo - 1;
  for (int steps = 0; i != LAGSCOPE__ELF_NO_PARENT && steps < MAX_PARENT_STEPS; steps++) {
    const lagscope__elf_entry *e = &o->entries[i];
    if (e->size == 0 ? at == e->start : at - e->start < e->size) return e;
    i = e->parent;
  }
  return NULL;
}
