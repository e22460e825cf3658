/*
 * The loaded objects, for the Linux symbol index (symbols.h): the program, its libraries and
 * the vDSO as the loader lists them (dl_iterate_phdr), each with its path and the build-id its
 * note holds in memory, their PT_LOAD ranges sorted for a binary search. The list is read
 * again when the loader's counters move (dlopen, dlclose) or an address is in no object; an
 * object no longer loaded stays until the index is freed, since its strings were handed out.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* ---- an object's build-id, from its notes in memory ------------------------------------------ */

void lagscope__elf_to_hex(const unsigned char *bytes, size_t len, char *hex, size_t hex_size) {
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
        lagscope__elf_to_hex(name + name_size, note.n_descsz, hex, hex_size);
        return;
      }
      p += sizeof(note) + name_size + desc_size;
      left -= sizeof(note) + name_size + desc_size;
    }
  }
}

/* ---- the loader's list ----------------------------------------------------------------------- */

static lagscope__elf_object *find_loaded(lagscope__symbol_index *s,
                                         const struct dl_phdr_info *info, const char *build_id,
                                         int is_main) {
  for (size_t i = 0; i < s->objects_len; i++) {
    lagscope__elf_object *o = s->objects[i];
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
static void find_vdso_image(lagscope__elf_object *o, const struct dl_phdr_info *info) {
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

static lagscope__elf_object *new_object(lagscope__symbol_index *s,
                                        const struct dl_phdr_info *info, const char *build_id,
                                        int is_main) {
  if (lagscope__elf_grow(s, (void **)&s->objects, &s->objects_cap, s->objects_len,
                         sizeof(lagscope__elf_object *)) != 0)
    return NULL;
  lagscope__elf_object *o = lagscope__elf_hold(s, sizeof(lagscope__elf_object));
  if (o == NULL) return NULL;
  char exe[PATH_MAX];
  const char *path = info->dlpi_name;
  if (is_main) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    path = n > 0 ? exe : "/proc/self/exe";
  }
  o->path = lagscope__elf_hold_string(s, path);
  o->build_id = lagscope__elf_hold_string(s, build_id);
  if (o->path == NULL || o->build_id == NULL) {
    lagscope__elf_let_go_string(s, o->path);
    lagscope__elf_let_go_string(s, o->build_id);
    lagscope__elf_let_go(s, o, sizeof(lagscope__elf_object));
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

static void note_counters(lagscope__symbol_index *s, const struct dl_phdr_info *info,
                          size_t size) {
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
  char build_id[LAGSCOPE__ELF_BUILD_ID_HEX_MAX];
  memory_build_id(info, build_id, sizeof(build_id));
  int is_main = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
  lagscope__elf_object *o = find_loaded(s, info, build_id, is_main);
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
    if (lagscope__elf_grow(s, (void **)&s->ranges, &s->ranges_cap, s->ranges_len,
                           sizeof(lagscope__elf_range)) != 0) {
      ctx->failed = 1;
      return 0;
    }
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    s->ranges[s->ranges_len++] = (lagscope__elf_range){start, start + ph->p_memsz, o};
  }
  return 0;
}

static int compare_ranges(const void *a, const void *b) {
  uintptr_t x = ((const lagscope__elf_range *)a)->start;
  uintptr_t y = ((const lagscope__elf_range *)b)->start;
  return (x > y) - (x < y);
}

/* One loaded again at the same place with the same file comes back (symbols.h). */
void lagscope__elf_read_objects(lagscope__symbol_index *s) {
  s->generation++;
  s->ranges_len = 0;
  read_context ctx = {s, 0};
  dl_iterate_phdr(read_one_object, &ctx);
  for (size_t i = 0; i < s->objects_len; i++)
    if (s->objects[i]->seen != s->generation) s->objects[i]->loaded = 0;
  if (s->ranges_len > 1)
    lagscope__sort(s->ranges, s->ranges_len, sizeof(lagscope__elf_range), compare_ranges);
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

/* By the loader's counters (symbols.h). */
int lagscope__elf_objects_changed(const lagscope__symbol_index *s) {
  if (!s->have_counters) return 0;
  counters c = {0, 0, 0};
  dl_iterate_phdr(read_counters, &c);
  return c.known && (c.adds != s->adds || c.subs != s->subs);
}

lagscope__elf_object *lagscope__elf_find_object(const lagscope__symbol_index *s,
                                                uintptr_t address) {
  size_t lo = 0, hi = s->ranges_len; /* the first range starting after address is in [lo, hi] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->ranges[mid].start <= address) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || address >= s->ranges[lo - 1].end) return NULL;
  return s->ranges[lo - 1].object;
}

void lagscope__elf_free_object(lagscope__symbol_index *s, lagscope__elf_object *o) {
  lagscope__elf_drop_dwarf(o);
  lagscope__elf_let_go(s, o->entries, (size_t)o->count * sizeof(lagscope__elf_entry));
  lagscope__elf_let_go(s, o->names, o->names_size);
  lagscope__elf_let_go(s, o->demangled,
                       (size_t)o->demangled_cap * sizeof(lagscope__elf_demangled));
  lagscope__elf_let_go_string(s, o->path);
  lagscope__elf_let_go_string(s, o->build_id);
  lagscope__elf_let_go(s, o, sizeof(lagscope__elf_object));
}
