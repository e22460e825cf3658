/* What the Linux symbol index's files share, and no other file: the index, its objects and
 * their entries, and the calls each file makes of another. The rest of the core sees only
 * port.h's lagscope__symbol_index_ calls. Names lagscope__elf_ (the Darwin index's are
 * lagscope__macho_). The files, in the order a lookup needs them:
 *
 *   symbols.c          the contract (port.h), the index's counted memory, C++ names demangled
 *   symbols_objects.c  the loaded objects (dl_iterate_phdr), their ranges and build-ids
 *   symbols_elf.c      an object's function symbols (.symtab, .dynsym) read from its file or
 *                      its debug file into sorted entries, and the lookup over them
 *   symbols_minidebug.c  MiniDebugInfo: the .symtab in an object's .gnu_debugdata (xz), read
 *                      when it has no other; liblzma loaded at the first object with one
 *   symbols_dwarf.c    file:line from DWARF through libdw, loaded at the first object with some
 *
 * On the monitor's thread only (port.h). Tags as in internal.h: A allocates, L takes a lock
 * (the loader's), F neither. */
#ifndef LAGSCOPE_LINUX_SYMBOLS_H
#define LAGSCOPE_LINUX_SYMBOLS_H

#include "../internal.h"
#include "linux.h"

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define LAGSCOPE__ELF_NO_PARENT UINT32_MAX
#define LAGSCOPE__ELF_BUILD_ID_HEX_MAX 129 /* 64 bytes of id; GNU ld writes 20 */

typedef char *(*lagscope__elf_demangle_fn)(const char *mangled, char *buf, size_t *len,
                                           int *status);

/* One function symbol. start is relative to the object's lowest file address, so 32 bits
 * hold it (an object's address space above 4 GB is not indexed); size 0 names its start only. */
typedef struct lagscope__elf_entry {
  uint32_t start, size;
  uint32_t name;   /* offset in the object's names */
  uint32_t parent; /* the entry whose range holds this one's start, NO_PARENT when none */
} lagscope__elf_entry;

typedef struct lagscope__elf_demangled {
  uint32_t entry_plus_one; /* 0: empty slot */
  const char *name;
} lagscope__elf_demangled;

typedef struct lagscope__elf_object {
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
  lagscope__elf_entry *entries;
  uint32_t count;
  char *names;
  size_t names_size;
  lagscope__elf_demangled *demangled; /* open addressing on the entry's index */
  uint32_t demangled_cap, demangled_len;
  int dwarf_fd;          /* the file (object or debug file) behind dwarf, -1 when none */
  Elf *dwarf_elf;
  Dwarf *dwarf;
} lagscope__elf_object;

typedef struct lagscope__elf_range {
  uintptr_t start, end;
  lagscope__elf_object *object;
} lagscope__elf_range;

struct lagscope__symbol_index {
  size_t bytes;                 /* everything below, and this struct */
  /* Never moved or freed before _free: their strings are handed out. */
  lagscope__elf_object **objects;
  size_t objects_len, objects_cap;
  lagscope__elf_range *ranges;  /* of loaded objects, sorted by start */
  size_t ranges_len, ranges_cap;
  unsigned generation;          /* reads of the loader's list so far */
  unsigned long long adds, subs; /* the loader's counters at the last read */
  int have_counters;
  lagscope__text_arena names_arena; /* demangled names */
  lagscope__elf_demangle_fn demangle;
  void *libstdcxx;              /* our reference to libstdc++ when found by dlopen(NOLOAD) */
  int demangle_checked;
  unsigned long long demangle_checked_adds;
};

/* ---- symbols.c: the index's memory, every byte counted in its bytes ---- */

void *lagscope__elf_hold(lagscope__symbol_index *s, size_t size);          /* A */
void lagscope__elf_let_go(lagscope__symbol_index *s, void *p, size_t size); /* A; p may be NULL */
char *lagscope__elf_hold_string(lagscope__symbol_index *s, const char *text); /* A: a copy */
void lagscope__elf_let_go_string(lagscope__symbol_index *s, char *text);   /* A; may be NULL */
/* Makes room for one more element, counted in the index's bytes; 0, or -1 when out of
 * memory. A */
int lagscope__elf_grow(lagscope__symbol_index *s, void **array, size_t *cap, size_t len,
                       size_t element);

/* ---- symbols_objects.c: the loaded objects ---- */

/* bytes as lowercase hex, cut to fit hex_size with its NUL. F */
void lagscope__elf_to_hex(const unsigned char *bytes, size_t len, char *hex, size_t hex_size);
/* Reads the loader's list again. Objects no longer listed stay (their strings were handed out)
 * but leave the ranges; one loaded again at the same place with the same file comes back. A, L */
void lagscope__elf_read_objects(lagscope__symbol_index *s);
/* Has an object been loaded or unloaded since the last read? One lock of the loader's. L */
int lagscope__elf_objects_changed(const lagscope__symbol_index *s);
/* The loaded object whose PT_LOAD holds address, or NULL. F */
lagscope__elf_object *lagscope__elf_find_object(const lagscope__symbol_index *s,
                                                uintptr_t address);
/* Frees an object with its index, names and DWARF reader. A */
void lagscope__elf_free_object(lagscope__symbol_index *s, lagscope__elf_object *o);

/* ---- symbols_elf.c: an object's symbols ---- */

/* Builds o's index at the first address that falls in it (o->indexed set, even when it cannot
 * be built: module + offset only), and keeps a DWARF reader when it has debug info. A, L */
void lagscope__elf_index_object(lagscope__symbol_index *s, lagscope__elf_object *o);
/* The innermost symbol that holds the file address, or NULL. F */
const lagscope__elf_entry *lagscope__elf_find_entry(const lagscope__elf_object *o,
                                                    uint64_t file_address);
/* Ends elf (may be NULL) and closes fd (may be -1). A: libelf frees its memory */
void lagscope__elf_close_file(int fd, Elf *elf);

/* ---- symbols_minidebug.c: MiniDebugInfo (.gnu_debugdata) ---- */

/* The bounds on one object's section, against a hostile or corrupt one: what it may weigh
 * compressed, and what it may decompress to: generous for a section that holds only function
 * symbols and their names. */
#ifndef LAGSCOPE__MINIDEBUG_MAX_PACKED
#define LAGSCOPE__MINIDEBUG_MAX_PACKED (16u << 20)
#endif
#ifndef LAGSCOPE__MINIDEBUG_MAX_BYTES
#define LAGSCOPE__MINIDEBUG_MAX_BYTES (32u << 20)
#endif

/* The ELF inside an object's .gnu_debugdata: its decompressed bytes and libelf's view of them. */
typedef struct lagscope__elf_minidebug {
  unsigned char *bytes; /* lagscope's heap */
  size_t size;
  Elf *elf;
} lagscope__elf_minidebug;

/* Decompresses the xz stream in (at most LAGSCOPE__MINIDEBUG_MAX_PACKED bytes) into *out, of
 * exactly *out_size bytes (freed with lagscope__dealloc). 0; ELIMIT past max bytes or the
 * decoder's memory bound, EPARSE when it is no complete xz stream, ENOMEM, ENOENT without
 * liblzma (not found at run time, or lagscope built without lzma.h). A, L (the heap's; the
 * loader's at the first call) */
int lagscope__elf_unxz(const void *in, size_t in_size, size_t max, unsigned char **out,
                       size_t *out_size);
/* Opens the ELF in elf's .gnu_debugdata section into *out, to read its .symtab. 0, ENOENT when
 * there is no such section, or lagscope__elf_unxz's error (EPARSE too when what it holds is
 * no ELF). Closed with _close_minidebug. A, L as _unxz */
int lagscope__elf_open_minidebug(Elf *elf, lagscope__elf_minidebug *out);
void lagscope__elf_close_minidebug(lagscope__elf_minidebug *m); /* A; may be closed twice */

/* ---- symbols_dwarf.c: file:line ---- */

/* Keeps a DWARF reader on whichever file has debug info (the object or its debug file): the
 * kept file's fd and Elf move into o (set to -1 and NULL here). Loads libdw the first time. A, L */
void lagscope__elf_keep_dwarf(lagscope__elf_object *o, int *fd, Elf **elf, int *debug_fd,
                              Elf **debug_elf);
/* out's file and line for the file address, when o has a DWARF reader and it knows the
 * address; file points into libdw's line table, which lives as long as o's reader. A */
void lagscope__elf_find_line(const lagscope__elf_object *o, uint64_t file_address,
                             lagscope__stack_frame *out);
/* out's inlined (the functions inlined at the file address, innermost first) and, for a
 * return address (0: the frame is the innermost), tail_called: the function its call site
 * names when that is defined in the same unit. Names live as long as o's reader. F */
void lagscope__elf_find_inlines(const lagscope__elf_object *o, uint64_t file_address,
                                uint64_t return_address, lagscope__stack_frame *out);
/* Ends o's DWARF reader and closes its file, if it has one. A */
void lagscope__elf_drop_dwarf(lagscope__elf_object *o);

#endif /* LAGSCOPE_LINUX_SYMBOLS_H */
