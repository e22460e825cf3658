/*
 * file:line for the Linux symbol index (symbols.h), from DWARF through libdw: a reader kept
 * per object on whichever of its files has debug info that can be read in place (the object
 * or its build-id debug file), and the line of an address looked up in it. libdw is loaded at
 * the first object with DWARF to read (dlopen), not with lagscope: most apps' objects have no
 * DWARF to read, and its pages (0.4 MiB with its libraries) stay out.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <dwarf.h>
#include <gelf.h>
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
 * to read (lagscope__lazy_library_load: RTLD_LOCAL, never unloaded: its Dwarf handles may live
 * in an index). The loader's lock is taken then, once, on lagscope's thread. Tried once: when it
 * cannot be loaded, names still, no lines. */
#define LIBDW_CALLS(XX)                                                                      \
  XX(dwarf_begin_elf) XX(dwarf_end) XX(dwarf_addrdie) XX(dwarf_getsrc_die) XX(dwarf_lineno)   \
  XX(dwarf_linesrc) XX(dwarf_child) XX(dwarf_siblingof) XX(dwarf_haspc) XX(dwarf_tag)          \
  XX(dwarf_diename) XX(dwarf_attr) XX(dwarf_hasattr) XX(dwarf_formref_die) XX(dwarf_formaddr)

static LAGSCOPE__LAZY_TABLE(LIBDW_CALLS) libdw;
static const char *const libdw_names[] = {LIBDW_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library libdw_library =
    LAGSCOPE__LAZY_LIBRARY("libdw.so.1", libdw_names, libdw.found, 0);

/* ---- an object's reader ---------------------------------------------------------------------- */

/* A DWARF reader on elf, unless its DWARF is compressed: names then, but no file:line. libdw
 * would inflate it with the app's malloc (13 MB for Debian's libc debug file), and what it
 * frees stays with the app: the arena keeps the pages, and glibc raises its mmap threshold to
 * the largest freed block, for the app's own allocations too. An app's own -g code is not
 * compressed (unless built with -gz) and keeps its lines. */
static Dwarf *open_dwarf(Elf *elf) {
  if (elf == NULL || !has_plain_dwarf(elf)) return NULL;
  if (lagscope__lazy_library_load(&libdw_library, NULL, 0) != LAGSCOPE_OK) return NULL;
  return libdw.call.dwarf_begin_elf(elf, DWARF_C_READ, NULL);
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
  if (o->dwarf != NULL) libdw.call.dwarf_end(o->dwarf);
  lagscope__elf_close_file(o->dwarf_fd, o->dwarf_elf);
}

/* ---- lines ----------------------------------------------------------------------------------- */

/* file points into libdw's line table, which lives as long as the object's Dwarf: until _free. */
void lagscope__elf_find_line(const lagscope__elf_object *o, uint64_t file_address,
                             lagscope__stack_frame *out) {
  Dwarf_Die cu;
  if (o->dwarf == NULL || libdw.call.dwarf_addrdie(o->dwarf, file_address, &cu) == NULL) return;
  /* libdw is loaded: o->dwarf is its */
  Dwarf_Line *line = libdw.call.dwarf_getsrc_die(&cu, file_address);
  int number = 0;
  if (line == NULL || libdw.call.dwarf_lineno(line, &number) != 0 || number <= 0) return;
  const char *file = libdw.call.dwarf_linesrc(line, NULL, NULL);
  if (file == NULL) return;
  out->file = file;
  out->line = (uint32_t)number;
}

/* ---- inlined functions and tail calls ------------------------------------------------------- */

#define SCOPE_DEPTH 16 /* nested scopes followed: inlining deeper than this is cut */

/* The scopes that hold pc, outermost first (a subprogram, its blocks and inlined subroutines),
 * walked from the CU's DIE without allocating (dwarf_getscopes mallocs). Returns how many. */
static int scopes_at(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die scopes[SCOPE_DEPTH]) {
  int depth = 0;
  Dwarf_Die parent = *cu, child;
  while (depth < SCOPE_DEPTH && libdw.call.dwarf_child(&parent, &child) == 0) {
    int found = 0;
    do {
      int tag = libdw.call.dwarf_tag(&child);
      if (tag == DW_TAG_namespace || tag == DW_TAG_module) { /* no range: C++ definitions in it */
        Dwarf_Die inner;
        if (libdw.call.dwarf_child(&child, &inner) == 0) {
          parent = child, found = 1;
          break;
        }
      } else if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
                  tag == DW_TAG_lexical_block) &&
                 libdw.call.dwarf_haspc(&child, pc) == 1) {
        scopes[depth++] = child;
        parent = child, found = 1;
        break;
      }
    } while (libdw.call.dwarf_siblingof(&child, &child) == 0);
    if (!found) break;
  }
  return depth;
}

/* The function the call returning to return_pc called, when scope holds that call's call site
 * (DWARF 5's DW_TAG_call_site, GCC's older GNU form) and the callee is defined in this unit:
 * one declared only may be any object's (memcpy is an IFUNC's variant below). NULL otherwise. */
static const char *callee_at(Dwarf_Die *scope, Dwarf_Addr return_pc) {
  Dwarf_Die child;
  if (libdw.call.dwarf_child(scope, &child) != 0) return NULL;
  do {
    int tag = libdw.call.dwarf_tag(&child);
    if (tag != DW_TAG_call_site && tag != DW_TAG_GNU_call_site) continue;
    Dwarf_Attribute a;
    Dwarf_Addr at;
    int gnu = tag == DW_TAG_GNU_call_site;
    if (libdw.call.dwarf_attr(&child, gnu ? DW_AT_low_pc : DW_AT_call_return_pc, &a) == NULL ||
        libdw.call.dwarf_formaddr(&a, &at) != 0 || at != return_pc)
      continue;
    Dwarf_Die origin;
    if (libdw.call.dwarf_attr(&child, gnu ? DW_AT_abstract_origin : DW_AT_call_origin, &a) == NULL ||
        libdw.call.dwarf_formref_die(&a, &origin) == NULL ||
        libdw.call.dwarf_hasattr(&origin, DW_AT_declaration))
      return NULL;
    return libdw.call.dwarf_diename(&origin);
  } while (libdw.call.dwarf_siblingof(&child, &child) == 0);
  return NULL;
}

/* Names point into libdw's string section, which lives as long as the object's Dwarf. */
void lagscope__elf_find_inlines(const lagscope__elf_object *o, uint64_t file_address,
                                uint64_t return_address, lagscope__stack_frame *out) {
  Dwarf_Die cu, scopes[SCOPE_DEPTH];
  if (o->dwarf == NULL || libdw.call.dwarf_addrdie(o->dwarf, file_address, &cu) == NULL) return;
  int depth = scopes_at(&cu, file_address, scopes);
  uint32_t n = 0;
  for (int i = depth - 1; i >= 0 && n < LAGSCOPE__FRAME_INLINED; i--) {
    if (libdw.call.dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    const char *name = libdw.call.dwarf_diename(&scopes[i]);
    if (name != NULL) out->inlined[n++] = name;
  }
  if (return_address != 0 && depth > 0)
    out->tail_called = callee_at(&scopes[depth - 1], return_address);
}
