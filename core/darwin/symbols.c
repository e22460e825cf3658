/*
 * Symbolication on Darwin: an address to function, image, UUID and load address, on the
 * monitor's thread after the captured thread has resumed. The Mach-O work is core/darwin/macho.c's
 * (portable, tested on Linux); this file knows where the images are. Reads top to bottom:
 *
 *   1. images   — dyld reports every image (already loaded ones at registration) to a
 *                 process-wide table: its header, slide and __TEXT range, appended, never
 *                 moved; an unloaded image is marked and no longer matches an address;
 *   2. index    — per symbolicator, an image's symbol index is built the first time an
 *                 address falls in its __TEXT (lagscope__macho_image_index);
 *   3. names    — C++ names through __cxa_demangle, Swift names through swift_demangle, both
 *                 found at run time (dlsym), so lagscope links neither runtime; cached;
 *   4. the contract of internal.h.
 *
 * Offline file:line: each frame carries the image's path, its UUID (build_id, as atos and
 * dSYM folders write it: "E621E1F8-C36C-...") and its load address (the mach header's run-time
 * address), so `atos -o <dSYM or binary> -arch <arch> -l <load_address> <address>` answers.
 * Darwin gives no file:line at run time (the DWARF is in the dSYM, not on the device).
 */
#include "../internal.h"
#include "macho.h"
#include "platform.h"

#include <dlfcn.h>
#include <mach-o/dyld.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. images ------------------------------------------------------------------------------ */

/* Images loaded over the process's life, unloaded ones included: an app has ~300 (macOS) to
 * ~900 (iOS, with the shared cache's); past this, later images are not symbolicated. */
#define IMAGES_MAX 4096

typedef struct image_slot {
  uintptr_t header, slide;
  const char *path; /* LC_ID_DYLIB's name in the image, the executable's path, or NULL */
  uintptr_t text_start, text_end;
  _Atomic int unloaded;
} image_slot;

static image_slot image_slots[IMAGES_MAX];
static _Atomic uint32_t image_count; /* slots filled; a slot is complete before it is counted */
static pthread_once_t images_once = PTHREAD_ONCE_INIT;
static char executable_path[1024]; /* written once, before dyld reports the executable */
static void *found_cxa, *found_swift; /* the demanglers, looked up once with the images */

#define IMAGE_EXECUTABLE 0x2u /* MH_EXECUTE */
#define IMAGE_ID_DYLIB 0xdu   /* LC_ID_DYLIB */

/* A dylib's install name from its LC_ID_DYLIB (a dylib_command: cmd, cmdsize, name offset,
 * ...), NUL-terminated within the command; the executable's saved path; else NULL. Reads
 * memory only, never asks dyld (no dladdr): the monitor must not wait for dyld's lock, which a
 * main thread hung in dlopen or an initializer holds, and this runs in dyld's callback. */
static const char *image_path(const lagscope__mach_header_64 *h) {
  if (h->filetype == IMAGE_EXECUTABLE) return executable_path[0] != '\0' ? executable_path : NULL;
  const unsigned char *cmd = (const unsigned char *)(h + 1);
  const unsigned char *cmds_end = cmd + h->sizeofcmds;
  for (uint32_t i = 0; i < h->ncmds && cmd + sizeof(lagscope__load_command) <= cmds_end; i++) {
    const lagscope__load_command *lc = (const void *)cmd;
    if (lc->cmdsize < sizeof(*lc) || lc->cmdsize > (size_t)(cmds_end - cmd)) return NULL;
    uint32_t offset;
    if (lc->cmd == IMAGE_ID_DYLIB && lc->cmdsize >= 12) {
      memcpy(&offset, cmd + 8, sizeof(offset));
      if (offset >= lc->cmdsize || memchr(cmd + offset, '\0', lc->cmdsize - offset) == NULL)
        return NULL;
      return (const char *)cmd + offset;
    }
    cmd += lc->cmdsize;
  }
  return NULL;
}

/* __TEXT's run-time range from the load commands dyld already checked. Reads memory only: this
 * runs inside dyld's callback, with dyld's lock held. */
static int text_range(const struct mach_header *mh, intptr_t slide, uintptr_t *start,
                      uintptr_t *end) {
  const lagscope__mach_header_64 *h = (const void *)mh;
  if (h->magic != LAGSCOPE__MH_MAGIC_64) return 0;
  const unsigned char *cmd = (const unsigned char *)(h + 1);
  const unsigned char *cmds_end = cmd + h->sizeofcmds;
  for (uint32_t i = 0; i < h->ncmds && cmd + sizeof(lagscope__load_command) <= cmds_end; i++) {
    const lagscope__load_command *lc = (const void *)cmd;
    if (lc->cmdsize < sizeof(*lc)) return 0;
    if (lc->cmd == LAGSCOPE__LC_SEGMENT_64 && lc->cmdsize >= sizeof(lagscope__segment_command_64)) {
      const lagscope__segment_command_64 *seg = (const void *)cmd;
      if (strncmp(seg->segname, "__TEXT", sizeof(seg->segname)) == 0) {
        *start = (uintptr_t)(seg->vmaddr + (uint64_t)slide);
        *end = *start + (uintptr_t)seg->vmsize;
        return 1;
      }
    }
    cmd += lc->cmdsize;
  }
  return 0;
}

static void on_image_added(const struct mach_header *mh, intptr_t slide) {
  uint32_t n = atomic_load_explicit(&image_count, memory_order_relaxed); /* dyld serialises us */
  uintptr_t start, end;
  if (n >= IMAGES_MAX || !text_range(mh, slide, &start, &end)) return;
  image_slots[n] = (image_slot){(uintptr_t)mh, (uintptr_t)slide, image_path((const void *)mh),
                                start, end, 0};
  atomic_store_explicit(&image_count, n + 1, memory_order_release);
}

static void on_image_removed(const struct mach_header *mh, intptr_t slide) {
  (void)slide;
  uint32_t n = atomic_load_explicit(&image_count, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++)
    if (image_slots[i].header == (uintptr_t)mh) atomic_store(&image_slots[i].unloaded, 1);
}

/* Once per process: dyld has no way to unregister, so the table outlives every lagscope_stop.
 * Registering takes dyld's lock: lagscope__platform_prepare does it on lagscope_start's thread,
 * before the monitor thread exists, so that it never does. */
static void register_with_dyld(void) {
  uint32_t size = sizeof(executable_path);
  if (_NSGetExecutablePath(executable_path, &size) != 0) executable_path[0] = '\0';
  /* dlsym's names lack the C underscore: "__cxa_demangle" is the symbol ___cxa_demangle. */
  found_cxa = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  found_swift = dlsym(RTLD_DEFAULT, "swift_demangle");
  _dyld_register_func_for_remove_image(on_image_removed);
  _dyld_register_func_for_add_image(on_image_added); /* calls back for every image loaded so far */
}

/* The loaded image whose __TEXT holds address; -1 when none. */
static int32_t find_slot(uintptr_t address) {
  uint32_t n = atomic_load_explicit(&image_count, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    const image_slot *s = &image_slots[i];
    if (address >= s->text_start && address < s->text_end && !atomic_load(&s->unloaded))
      return (int32_t)i;
  }
  return -1;
}

/* ---- 2. index ------------------------------------------------------------------------------- */

#define NAME_MAX_BYTES 1024 /* a demangled name is cut here */

typedef struct cached_image {
  lagscope__macho_image *image; /* NULL: not indexed (yet, or it could not be) */
  int tried;
} cached_image;

typedef struct demangled {
  const char *symbol; /* the index's name: its pointer is the key */
  const char *name;
} demangled;

struct lagscope__symbol_index {
  size_t bytes;               /* this struct and the tables (indexes and names counted apart) */
  cached_image images[IMAGES_MAX];
  lagscope__macho_demanglers demanglers;
  demangled *names;           /* open addressing on the symbol's pointer */
  uint32_t names_cap, names_len;
  lagscope__text_arena names_arena; /* demangled names */
};

static lagscope__macho_image *image_at(lagscope__symbol_index *s, int32_t slot) {
  cached_image *c = &s->images[slot];
  if (c->tried) return c->image;
  c->tried = 1;
  const image_slot *img = &image_slots[slot];
  char why[256];
  if (lagscope__macho_image_index((const void *)img->header, LAGSCOPE__MACHO_SIZE_UNKNOWN,
                                  img->slide, img->path, &c->image, why, sizeof(why)) != LAGSCOPE_OK)
    c->image = NULL;
  return c->image;
}

/* ---- 3. names ------------------------------------------------------------------------------- */

/* Found at registration (dlsym, like dladdr, may wait for dyld's lock: not on the monitor). */
static void find_demanglers(lagscope__symbol_index *s) {
  void *cxa = found_cxa, *swift = found_swift;
  /* A data pointer to a function pointer: POSIX guarantees dlsym's results convert. */
  memcpy(&s->demanglers.cxa, &cxa, sizeof(cxa));
  memcpy(&s->demanglers.swift, &swift, sizeof(swift));
}

static uint32_t hash_pointer(const char *p) {
  uintptr_t v = (uintptr_t)p;
  return (uint32_t)((v >> 3) ^ (v >> 19)) * 2654435761u;
}

static const char *cached_name(const lagscope__symbol_index *s, const char *symbol) {
  if (s->names_cap == 0) return NULL;
  for (uint32_t i = hash_pointer(symbol) & (s->names_cap - 1);; i = (i + 1) & (s->names_cap - 1)) {
    if (s->names[i].symbol == NULL) return NULL;
    if (s->names[i].symbol == symbol) return s->names[i].name;
  }
}

static void insert_name(demangled *table, uint32_t cap, const char *symbol, const char *name) {
  uint32_t i = hash_pointer(symbol) & (cap - 1);
  while (table[i].symbol != NULL) i = (i + 1) & (cap - 1);
  table[i] = (demangled){symbol, name};
}

/* Keeps the table at most half full; a failed growth only forgoes the cache. */
static int grow_names(lagscope__symbol_index *s) {
  if ((s->names_len + 1) * 2 <= s->names_cap) return 1;
  uint32_t cap = s->names_cap == 0 ? 256 : s->names_cap * 2;
  demangled *table = lagscope__alloc((size_t)cap * sizeof(demangled));
  if (table == NULL) return 0;
  for (uint32_t i = 0; i < s->names_cap; i++)
    if (s->names[i].symbol != NULL) insert_name(table, cap, s->names[i].symbol, s->names[i].name);
  lagscope__dealloc(s->names);
  s->bytes += ((size_t)cap - s->names_cap) * sizeof(demangled);
  s->names = table;
  s->names_cap = cap;
  return 1;
}

static const char *function_name(lagscope__symbol_index *s, const char *symbol) {
  const char *name = cached_name(s, symbol);
  if (name != NULL) return name;
  char buf[NAME_MAX_BYTES];
  name = lagscope__macho_demangle(&s->demanglers, symbol, buf, sizeof(buf));
  if (name == symbol) return symbol; /* not mangled: the index's own string lives as long */
  const char *copy = lagscope__text_arena_copy(&s->names_arena, name);
  if (copy == NULL) return symbol;
  if (grow_names(s)) {
    insert_name(s->names, s->names_cap, symbol, copy);
    s->names_len++;
  }
  return copy;
}

/* ---- 4. the contract ------------------------------------------------------------------------ */

void lagscope__platform_images_register(void) { pthread_once(&images_once, register_with_dyld); }

lagscope__symbol_index *lagscope__symbol_index_new(void) {
  lagscope__platform_images_register(); /* done already when lagscope_start ran */
  lagscope__symbol_index *s = lagscope__alloc(sizeof(lagscope__symbol_index));
  if (s == NULL) return NULL;
  s->bytes = sizeof(lagscope__symbol_index);
  find_demanglers(s);
  return s;
}

void lagscope__symbol_index_free(lagscope__symbol_index *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < IMAGES_MAX; i++) lagscope__macho_image_free(s->images[i].image);
  lagscope__dealloc(s->names);
  lagscope__text_arena_free(&s->names_arena);
  lagscope__dealloc(s);
}

int lagscope__symbol_index_resolve(lagscope__symbol_index *s, uintptr_t address,
                                   uintptr_t lookup, lagscope__stack_frame *out) {
  int32_t slot = find_slot(lookup);
  if (slot < 0) return LAGSCOPE_ENOENT;
  lagscope__macho_image *img = image_at(s, slot);
  uintptr_t header = image_slots[slot].header;
  out->load_address = header;
  out->module_offset = address - header;
  if (img == NULL) { /* a refused image: where the address is, without a name */
    out->module = "";
    return 0;
  }
  out->module = lagscope__macho_image_path(img);
  out->build_id = lagscope__macho_image_uuid_string(img);
  const char *symbol;
  uintptr_t start;
  if (lagscope__macho_image_lookup(img, lookup, &symbol, &start) == 0) {
    out->function = function_name(s, symbol);
    out->function_offset = address - start;
  }
  return 0;
}


const char *lagscope__symbol_index_module(lagscope__symbol_index *s, uintptr_t address) {
  (void)s;
  int32_t slot = find_slot(address); /* the slot's path, saved when dyld reported it */
  return slot >= 0 ? image_slots[slot].path : NULL;
}

/* Apple's folders, sealed by System Integrity Protection (and read-only on iOS): only the OS
 * installs there, so everything in them is the platform's (an app's own frameworks and dylibs
 * are in its bundle). */
int lagscope__os_folder(const char *module) {
  return strncmp(module, "/System/", 8) == 0 || strncmp(module, "/usr/lib/", 9) == 0;
}

const char *lagscope__symbol_index_program(lagscope__symbol_index *s) {
  (void)s;
  return executable_path[0] != '\0' ? executable_path : NULL;
}

size_t lagscope__symbol_index_memory(const lagscope__symbol_index *s) {
  size_t bytes = s->bytes + s->names_arena.bytes;
  for (size_t i = 0; i < IMAGES_MAX; i++)
    if (s->images[i].image != NULL) bytes += lagscope__macho_image_memory(s->images[i].image);
  return bytes;
}
