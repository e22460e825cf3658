/*
 * The Mach-O image index: the function symbols of one loaded 64-bit Mach-O image, read once
 * from its LC_SYMTAB through __LINKEDIT, sorted, and binary-searched per address. Portable C:
 * it reads memory laid out the way dyld lays an image out, so it compiles and is tested on
 * Linux too (tests/unit/macho/), where images are zig-built Mach-O files mapped by a small loader.
 *
 * The Darwin port feeds it the images dyld reports (_dyld_register_func_for_add_image, or
 * _dyld_image_count/_dyld_get_image_header/_dyld_get_image_vmaddr_slide/_dyld_get_image_name),
 * passing LAGSCOPE__MACHO_SIZE_UNKNOWN: dyld checked and mapped every segment before it
 * reported the image.
 *
 * Which symbols count as functions: defined in a section (N_SECT, not a stab) of __TEXT whose
 * flags say it holds instructions (S_ATTR_PURE_INSTRUCTIONS or S_ATTR_SOME_INSTRUCTIONS), with
 * an address inside that section; external and local alike (static functions stay in the
 * symbol table of an unstripped image). A symbol ends where the next one starts or where its
 * section ends, as atos and llvm-symbolizer see it (nlist has no sizes). At one address one
 * name is kept: external before local, then the smallest by strcmp. Names lose the one leading
 * underscore the C compiler adds ("_main" is shown "main", "__ZN1a1bEv" is "_ZN1a1bEv"), as
 * atos shows them; demangling is a separate step (lagscope__macho_demangle).
 *
 * Each function says whether it allocates (A) or neither allocates nor locks (F). None locks.
 * The Mach-O layouts below come from Apple's documentation of the format (<mach-o/loader.h>,
 * <mach-o/nlist.h>, <mach-o/fat.h>), declared here because Linux has no such headers; the names
 * are prefixed so that a Darwin file can include this header beside Apple's.
 */
#ifndef LAGSCOPE_MACHO_H
#define LAGSCOPE_MACHO_H

#include <stddef.h>
#include <stdint.h>

/* ---- the format ------------------------------------------------------------------------------ */
#define LAGSCOPE__MH_MAGIC 0xfeedfaceu    /* 32-bit image: refused */
#define LAGSCOPE__MH_CIGAM 0xcefaedfeu    /* 32-bit, other byte order */
#define LAGSCOPE__MH_MAGIC_64 0xfeedfacfu
#define LAGSCOPE__MH_CIGAM_64 0xcffaedfeu /* 64-bit, other byte order: refused */
#define LAGSCOPE__FAT_MAGIC 0xcafebabeu   /* fat headers are big-endian: read on a little- */
#define LAGSCOPE__FAT_CIGAM 0xbebafecau   /* endian host as the CIGAM forms */
#define LAGSCOPE__FAT_MAGIC_64 0xcafebabfu
#define LAGSCOPE__FAT_CIGAM_64 0xbfbafecau

#define LAGSCOPE__LC_SYMTAB 0x2u
#define LAGSCOPE__LC_SEGMENT_64 0x19u
#define LAGSCOPE__LC_UUID 0x1bu
#define LAGSCOPE__LC_FUNCTION_STARTS 0x26u /* a linkedit_data_command: ULEB128 deltas */

#define LAGSCOPE__S_ATTR_PURE_INSTRUCTIONS 0x80000000u
#define LAGSCOPE__S_ATTR_SOME_INSTRUCTIONS 0x00000400u

#define LAGSCOPE__N_STAB 0xe0u /* any of these bits: a debugger entry, not a symbol */
#define LAGSCOPE__N_PEXT 0x10u /* private external */
#define LAGSCOPE__N_TYPE 0x0eu
#define LAGSCOPE__N_EXT 0x01u
#define LAGSCOPE__N_SECT 0x0eu /* the N_TYPE of a symbol defined in section n_sect */

#define LAGSCOPE__CPU_TYPE_X86_64 0x01000007
#define LAGSCOPE__CPU_TYPE_ARM64 0x0100000c
#define LAGSCOPE__CPU_SUBTYPE_MASK 0xff000000u /* capability bits above the subtype */
#define LAGSCOPE__CPU_SUBTYPE_ARM64E 2

typedef struct lagscope__linkedit_data_command {
  uint32_t cmd, cmdsize;
  uint32_t dataoff, datasize; /* file offsets, inside __LINKEDIT */
} lagscope__linkedit_data_command;

typedef struct lagscope__mach_header_64 {
  uint32_t magic;
  int32_t cputype;
  int32_t cpusubtype;
  uint32_t filetype;
  uint32_t ncmds;
  uint32_t sizeofcmds; /* bytes of load commands right after this header */
  uint32_t flags;
  uint32_t reserved;
} lagscope__mach_header_64;

typedef struct lagscope__load_command {
  uint32_t cmd;
  uint32_t cmdsize; /* including this header */
} lagscope__load_command;

typedef struct lagscope__segment_command_64 {
  uint32_t cmd, cmdsize;
  char segname[16]; /* NUL-padded, not always NUL-terminated */
  uint64_t vmaddr, vmsize, fileoff, filesize;
  int32_t maxprot, initprot;
  uint32_t nsects; /* lagscope__section_64 records follow */
  uint32_t flags;
} lagscope__segment_command_64;

typedef struct lagscope__section_64 {
  char sectname[16], segname[16];
  uint64_t addr, size;
  uint32_t offset, align, reloff, nreloc, flags, reserved1, reserved2, reserved3;
} lagscope__section_64;

typedef struct lagscope__symtab_command {
  uint32_t cmd, cmdsize;
  uint32_t symoff, nsyms;  /* file offsets: in __LINKEDIT */
  uint32_t stroff, strsize;
} lagscope__symtab_command;

typedef struct lagscope__uuid_command {
  uint32_t cmd, cmdsize;
  uint8_t uuid[16];
} lagscope__uuid_command;

typedef struct lagscope__nlist_64 {
  uint32_t n_strx; /* offset in the string table */
  uint8_t n_type, n_sect; /* n_sect: 1-based over every section of every segment */
  uint16_t n_desc;
  uint64_t n_value;
} lagscope__nlist_64;

_Static_assert(sizeof(lagscope__mach_header_64) == 32, "mach_header_64 layout");
_Static_assert(sizeof(lagscope__segment_command_64) == 72, "segment_command_64 layout");
_Static_assert(sizeof(lagscope__section_64) == 80, "section_64 layout");
_Static_assert(sizeof(lagscope__symtab_command) == 24, "symtab_command layout");
_Static_assert(sizeof(lagscope__uuid_command) == 24, "uuid_command layout");
_Static_assert(sizeof(lagscope__nlist_64) == 16, "nlist_64 layout");

/* ---- the index ------------------------------------------------------------------------------- */
typedef struct lagscope__macho_image lagscope__macho_image;

/* mapped_size for an image dyld mapped: the bytes readable past the header are not known as
 * one range (a shared-cache image's __LINKEDIT lies far from its __TEXT), and dyld already
 * checked the load commands; every read is still checked against the image's own sizes. */
#define LAGSCOPE__MACHO_SIZE_UNKNOWN SIZE_MAX

/* Indexes the image whose mach header is at header, laid out as dyld does: each segment at
 * vmaddr + slide, __LINKEDIT mapped. mapped_size: how many bytes from header on are readable
 * (all segments when the caller mapped them itself), or LAGSCOPE__MACHO_SIZE_UNKNOWN. path is
 * copied (NULL: ""). Every offset and size in the image is checked before it is read: a
 * corrupt, truncated, 32-bit or fat image is refused with LAGSCOPE_EPARSE and a sentence in
 * why. An image without LC_SYMTAB (fully stripped) is indexed with no symbols: its name, UUID
 * and load address still identify its frames. Returns 0, LAGSCOPE_EINVAL, LAGSCOPE_EPARSE or
 * LAGSCOPE_ENOMEM; *out is freed with lagscope__macho_image_free. A */
int lagscope__macho_image_index(const void *header, size_t mapped_size, uintptr_t slide,
                                const char *path, lagscope__macho_image **out, char *why,
                                size_t why_size);
void lagscope__macho_image_free(lagscope__macho_image *img); /* A; NULL is fine */

/* The function holding a run-time address: 0 with its name (valid until the image is freed)
 * and run-time start, or LAGSCOPE_ENOENT when the address is outside __TEXT's instruction
 * sections, before the first symbol, in a symbol whose name the image garbles, or in a function
 * LC_FUNCTION_STARTS lists whose symbol is gone (a shared-cache image keeps only its exported
 * ones in memory: the caller names the image, UUID and offset). Reads only
 * the index, never the image: safe after the image was unloaded. Either out may be NULL. F */
int lagscope__macho_image_lookup(const lagscope__macho_image *img, uintptr_t address,
                                 const char **symbol, uintptr_t *symbol_address);

/* Accessors. F */
int lagscope__macho_image_contains(const lagscope__macho_image *img, uintptr_t address); /* in __TEXT */
const char *lagscope__macho_image_path(const lagscope__macho_image *img);
uintptr_t lagscope__macho_image_load_address(const lagscope__macho_image *img); /* the header */
uintptr_t lagscope__macho_image_slide(const lagscope__macho_image *img);
uint64_t lagscope__macho_image_text_vmaddr(const lagscope__macho_image *img);
/* The 16 bytes of LC_UUID, NULL when the image has none. */
const uint8_t *lagscope__macho_image_uuid(const lagscope__macho_image *img);
/* "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", as atos and dSYM folders write it; "" when none. */
const char *lagscope__macho_image_uuid_string(const lagscope__macho_image *img);
/* For atos -arch: "arm64", "arm64e", "x86_64", or "unknown". */
const char *lagscope__macho_image_arch(const lagscope__macho_image *img);
uint32_t lagscope__macho_image_symbol_count(const lagscope__macho_image *img);
size_t lagscope__macho_image_memory(const lagscope__macho_image *img); /* bytes the index holds */

/* ---- names ----------------------------------------------------------------------------------- */
/* The demanglers, looked up at run time by the caller (dlsym), so that lagscope links neither
 * the C++ nor the Swift runtime; either may be NULL. Both return a malloc'ed string, or NULL
 * when the name is not theirs; it is released with free. */
typedef char *(*lagscope__cxa_demangle_fn)(const char *mangled, char *buf, size_t *length,
                                           int *status);
typedef char *(*lagscope__swift_demangle_fn)(const char *mangled, size_t mangled_length,
                                             char *out, size_t *out_size, uint32_t flags);
typedef struct lagscope__macho_demanglers {
  lagscope__cxa_demangle_fn cxa;     /* __cxa_demangle: names "_Z…" (the symbol "__Z…") */
  lagscope__swift_demangle_fn swift; /* swift_demangle: "$s…", "$S…", "$e…", "_T0…" */
} lagscope__macho_demanglers;

/* A symbol as lookup gives it, demangled into buf (cut short to fit) when it is a C++ or Swift
 * name and that demangler is there; returns buf then, else symbol itself. Kept outside the
 * index so that the index stays small and each caller caches names as it likes. A (the
 * demangler's malloc) */
const char *lagscope__macho_demangle(const lagscope__macho_demanglers *demanglers,
                                     const char *symbol, char *buf, size_t buf_size);

#endif /* LAGSCOPE_MACHO_H */
