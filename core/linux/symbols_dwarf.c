/*
 * file:line for the Linux symbol index (symbols.h), from DWARF through libdw: a reader kept
 * per object on whichever of its files has debug info that can be read in place (the object
 * or its build-id debug file), and the line of an address looked up in it. libdw is loaded at
 * the first object with DWARF to read (dlopen), not with lagscope: most apps' objects have no
 * DWARF to read, and its pages (0.4 MiB with its libraries) stay out.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <dlfcn.h>
#include <gelf.h>
#include <pthread.h>
#include <string.h>

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

/* ---- libdw, loaded when needed --------------------------------------------------------------- */

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

/* ---- an object's reader ---------------------------------------------------------------------- */

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
void lagscope__elf_keep_dwarf(lagscope__elf_object *o, int *fd, Elf **elf, int *debug_fd,
                              Elf **debug_elf) {
  Dwarf *dwarf = open_dwarf(*elf); /* NULL without one */
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

void lagscope__elf_drop_dwarf(lagscope__elf_object *o) {
  if (o->dwarf != NULL) libdw.end(o->dwarf);
  lagscope__elf_close_file(o->dwarf_fd, o->dwarf_elf);
}

/* ---- lines ----------------------------------------------------------------------------------- */

/* file points into libdw's line table, which lives as long as the object's Dwarf: until _free. */
void lagscope__elf_find_line(const lagscope__elf_object *o, uint64_t file_address,
                             lagscope__stack_frame *out) {
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
