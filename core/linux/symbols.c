/*
 * Symbolication on Linux: an address to function, module, build-id and file:line, on the
 * monitor's thread after the captured thread has resumed. A lookup, in the order of the files
 * (symbols.h):
 *
 *   1. objects   — the loaded objects (dl_iterate_phdr), their PT_LOAD ranges sorted for a
 *                  binary search, build-ids from their notes in memory; re-read when the
 *                  loader's counters move (dlopen, dlclose) or an address is in no object
 *                  (symbols_objects.c);
 *   2. index     — once per object, at the first address that falls in it: the function
 *                  symbols of .symtab and .dynsym read from the file (or .symtab from the
 *                  build-id debug file when the object is stripped, else from its
 *                  MiniDebugInfo, symbols_minidebug.c), sorted 16-byte entries; then a binary
 *                  search and the chain of enclosing symbols (symbols_elf.c);
 *   3. names     — C++ names demangled by libstdc++'s __cxa_demangle, found at run time so
 *                  that lagscope never links libstdc++; cached per symbol (here);
 *   4. lines     — file:line from DWARF through libdw, when the object has debug info; libdw
 *                  is loaded then (dlopen), not with lagscope: most apps' objects have no
 *                  DWARF to read, and its pages (0.4 MiB with its libraries) stay out
 *                  (symbols_dwarf.c).
 *
 * Here too: the index's memory, every byte held counted (lagscope__alloc) and summed for
 * _memory, and the contract of internal.h.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory ---------------------------------------------------------------------------------- */

void *lagscope__elf_hold(lagscope__symbol_index *s, size_t size) {
  void *p = lagscope__alloc(size);
  if (p != NULL) s->bytes += size;
  return p;
}

void lagscope__elf_let_go(lagscope__symbol_index *s, void *p, size_t size) {
  if (p == NULL) return;
  s->bytes -= size;
  lagscope__dealloc(p);
}

char *lagscope__elf_hold_string(lagscope__symbol_index *s, const char *text) {
  size_t len = strlen(text);
  char *copy = lagscope__elf_hold(s, len + 1);
  if (copy != NULL) memcpy(copy, text, len + 1);
  return copy;
}

void lagscope__elf_let_go_string(lagscope__symbol_index *s, char *text) {
  if (text != NULL) lagscope__elf_let_go(s, text, strlen(text) + 1);
}

/* lagscope__grow, counted (symbols.h). */
int lagscope__elf_grow(lagscope__symbol_index *s, void **array, size_t *cap, size_t len,
                       size_t element) {
  size_t before = *cap;
  if (lagscope__grow(array, cap, len, element, 16) != LAGSCOPE_OK) return -1;
  s->bytes += (*cap - before) * element;
  return 0;
}

/* ---- names ----------------------------------------------------------------------------------- */

/* libstdc++'s, when the app links it: a weak reference, resolved when lagscope is loaded. Not
 * dlsym(RTLD_DEFAULT): in a C program the name is nowhere, and that failed lookup reads the
 * symbol tables of every loaded library, whose pages then stay resident. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
    __attribute__((weak));

/* Looked up again after a dlopen: a C program may load C++ plugins later (libstdc++ then
 * comes with them, found by name without loading anything). */
static lagscope__elf_demangle_fn find_demangler(lagscope__symbol_index *s) {
  if (s->demangle != NULL) return s->demangle;
  if (__cxa_demangle != NULL) return s->demangle = __cxa_demangle;
  if (s->demangle_checked && s->demangle_checked_adds == s->adds) return NULL;
  s->demangle_checked = 1;
  s->demangle_checked_adds = s->adds;
  if (s->libstdcxx == NULL) s->libstdcxx = dlopen("libstdc++.so.6", RTLD_NOLOAD | RTLD_LAZY);
  void *f = s->libstdcxx != NULL ? dlsym(s->libstdcxx, "__cxa_demangle") : NULL;
  /* object to function pointer, as POSIX allows */
  if (f != NULL) memcpy(&s->demangle, &f, sizeof(f));
  return s->demangle;
}

static uint32_t hash_index(uint32_t i) { return i * 2654435761u; }

static const char *cached_name(const lagscope__elf_object *o, uint32_t index) {
  if (o->demangled_cap == 0) return NULL;
  uint32_t mask = o->demangled_cap - 1;
  for (uint32_t at = hash_index(index) & mask;; at = (at + 1) & mask) {
    if (o->demangled[at].entry_plus_one == 0) return NULL;
    if (o->demangled[at].entry_plus_one == index + 1) return o->demangled[at].name;
  }
}

static void cache_name(lagscope__symbol_index *s, lagscope__elf_object *o, uint32_t index,
                       const char *name) {
  if ((o->demangled_len + 1) * 4 > o->demangled_cap * 3) { /* keep it under 3/4 full */
    uint32_t cap = o->demangled_cap ? o->demangled_cap * 2 : 64;
    lagscope__elf_demangled *bigger = lagscope__elf_hold(s, cap * sizeof(lagscope__elf_demangled));
    if (bigger == NULL) return; /* not cached: demangled again next time */
    for (uint32_t i = 0; i < o->demangled_cap; i++) {
      if (o->demangled[i].entry_plus_one == 0) continue;
      uint32_t at = hash_index(o->demangled[i].entry_plus_one - 1) & (cap - 1);
      while (bigger[at].entry_plus_one != 0) at = (at + 1) & (cap - 1);
      bigger[at] = o->demangled[i];
    }
    lagscope__elf_let_go(s, o->demangled, o->demangled_cap * sizeof(lagscope__elf_demangled));
    o->demangled = bigger;
    o->demangled_cap = cap;
  }
  uint32_t mask = o->demangled_cap - 1, at = hash_index(index) & mask;
  while (o->demangled[at].entry_plus_one != 0) at = (at + 1) & mask;
  o->demangled[at] = (lagscope__elf_demangled){index + 1, name};
  o->demangled_len++;
}

static const char *function_name(lagscope__symbol_index *s, lagscope__elf_object *o,
                                 const lagscope__elf_entry *e) {
  const char *raw = o->names + e->name;
  if (raw[0] != '_' || raw[1] != 'Z') return raw; /* C, or not mangled the Itanium way */
  uint32_t index = (uint32_t)(e - o->entries);
  const char *name = cached_name(o, index);
  if (name != NULL) return name;
  lagscope__elf_demangle_fn demangle = find_demangler(s);
  if (demangle == NULL) return raw; /* not cached: libstdc++ may come later */
  int status = -1;
  char *plain = demangle(raw, NULL, NULL, &status);
  name = plain != NULL && status == 0 ? lagscope__text_arena_copy(&s->names_arena, plain) : NULL;
  free(plain); /* libstdc++ allocated it with malloc */
  if (name == NULL) name = raw;
  cache_name(s, o, index, name);
  return name;
}

/* ---- the contract ---------------------------------------------------------------------------- */

lagscope__symbol_index *lagscope__symbol_index_new(void) {
  lagscope__symbol_index *s = lagscope__alloc(sizeof(lagscope__symbol_index));
  if (s == NULL) return NULL;
  s->bytes = sizeof(lagscope__symbol_index);
  elf_version(EV_CURRENT); /* libelf refuses to work until told the version; idempotent */
  return s;
}

void lagscope__symbol_index_free(lagscope__symbol_index *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < s->objects_len; i++) lagscope__elf_free_object(s, s->objects[i]);
  lagscope__elf_let_go(s, s->objects, s->objects_cap * sizeof(lagscope__elf_object *));
  lagscope__elf_let_go(s, s->ranges, s->ranges_cap * sizeof(lagscope__elf_range));
  lagscope__text_arena_free(&s->names_arena);
  if (s->libstdcxx != NULL) dlclose(s->libstdcxx);
  lagscope__dealloc(s);
}

int lagscope__symbol_index_resolve(lagscope__symbol_index *s, uintptr_t address,
                                   uintptr_t lookup, lagscope__stack_frame *out) {
  int fresh = s->generation == 0 || lagscope__elf_objects_changed(s);
  if (fresh) lagscope__elf_read_objects(s);
  lagscope__elf_object *o = lagscope__elf_find_object(s, lookup);
  if (o == NULL && !fresh) {
    lagscope__elf_read_objects(s); /* loaded since, by a loader that keeps no counters */
    o = lagscope__elf_find_object(s, lookup);
  }
  if (o == NULL) return LAGSCOPE_ENOENT;
  if (!o->indexed) lagscope__elf_index_object(s, o);
  out->module = o->path;
  out->build_id = o->build_id;
  out->load_address = o->bias;
  out->module_offset = address - o->bias;
  uint64_t file_address = lookup - o->bias;
  const lagscope__elf_entry *e = lagscope__elf_find_entry(o, file_address);
  if (e != NULL) {
    out->function = function_name(s, o, e);
    out->function_offset = address - (o->bias + (uintptr_t)o->base + e->start);
  }
  lagscope__elf_find_line(o, file_address, out);
  lagscope__elf_find_inlines(o, file_address, lookup != address ? address - o->bias : 0, out);
  return 0;
}

const char *lagscope__symbol_index_module(lagscope__symbol_index *s, uintptr_t address) {
  if (s->generation == 0 || lagscope__elf_objects_changed(s)) lagscope__elf_read_objects(s);
  lagscope__elf_object *o = lagscope__elf_find_object(s, address);
  return o != NULL ? o->path : NULL;
}

/* No folder of Linux holds the OS's objects alone: Debian installs mousepad's private
 * libmousepad.so.0 in /usr/lib/x86_64-linux-gnu beside GTK. The platform's are told by name. */
int lagscope__os_folder(const char *module) {
  (void)module;
  return 0;
}

const char *lagscope__symbol_index_program(lagscope__symbol_index *s) {
  for (size_t i = 0; i < s->objects_len; i++)
    if (s->objects[i]->is_main) return s->objects[i]->path;
  return NULL;
}

size_t lagscope__symbol_index_memory(const lagscope__symbol_index *s) {
  return s->bytes + s->names_arena.bytes;
}
