/*
 * The Mach-O image index (macho.h). Reads top to bottom:
 *
 *   1. reading   — every read of the image is a checked copy: offsets and sizes in the image
 *                  are never trusted, only compared with the bounds already proven;
 *   2. commands  — the load commands: __TEXT, __LINKEDIT, LC_SYMTAB, LC_UUID, the sections;
 *   3. tables    — the symbol and string tables, proven to lie inside __LINKEDIT;
 *   4. index     — the function symbols, sorted by address, one per address, each ending at
 *                  the next or at its section's end; their names copied (the index outlives
 *                  nothing it points into);
 *   5. lookup    — binary search;
 *   6. accessors and names.
 */
#include "macho.h"

#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECTIONS 255   /* n_sect is one byte, 1-based: later sections hold no symbols */
#define UNNAMED UINT32_MAX /* an entry whose name the image garbles: it only ends the one before */

/* One function: offsets from __TEXT's vmaddr (__TEXT is refused past 4 GB, so 32 bits hold
 * them), [start, end); name is an offset in the image's names. */
typedef struct entry {
  uint32_t start, end, name;
} entry;

struct lagscope__macho_image {
  uintptr_t header, slide;
  uint64_t text_vmaddr, text_vmsize;
  int32_t cputype, cpusubtype;
  int has_uuid;
  uint8_t uuid[16];
  char uuid_string[37];
  char *path;
  entry *entries; /* sorted by start, not overlapping */
  uint32_t count;
  char *names;
  size_t names_size;
  size_t bytes; /* everything above, and this struct */
};

/* ---- 1. reading --------------------------------------------------------------------------------- */

typedef struct section_info {
  uint64_t addr, end; /* file (unslid) addresses */
  int is_code;        /* in __TEXT, flagged as holding instructions */
} section_info;

/* What the load commands say, as far as the index needs it. */
typedef struct layout {
  const unsigned char *header;
  size_t mapped_size;
  uintptr_t slide;
  lagscope__mach_header_64 mh;
  int have_text, have_linkedit, have_symtab, have_uuid, have_starts;
  lagscope__segment_command_64 text, linkedit;
  lagscope__symtab_command symtab;
  lagscope__linkedit_data_command starts; /* LC_FUNCTION_STARTS */
  uint8_t uuid[16];
  section_info sections[MAX_SECTIONS]; /* ordinal n at [n - 1] */
  uint32_t section_count;
  const unsigned char *symbols, *strings; /* proven: nsyms records, strsize bytes */
  const unsigned char *starts_data;       /* proven: datasize bytes; NULL when none */
} layout;

/* Is [offset, offset + size) inside [0, limit)? Written so that nothing overflows. */
static int inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

/* The name of a segment or section: 16 bytes, NUL-padded, not always NUL-terminated. */
static int name_is(const char name[16], const char *expected) {
  return strncmp(name, expected, 16) == 0;
}

/* ---- 2. commands -------------------------------------------------------------------------------- */

static int read_header(layout *l, char *why, size_t why_size) {
  if (l->mapped_size < sizeof(lagscope__mach_header_64)) {
    lagscope__explain(why, why_size, "only %zu bytes are mapped: too few for a Mach-O header",
                      l->mapped_size);
    return -1;
  }
  memcpy(&l->mh, l->header, sizeof(l->mh));
  uint32_t magic = l->mh.magic;
  if (magic == LAGSCOPE__MH_MAGIC_64) return 0;
  if (magic == LAGSCOPE__MH_MAGIC || magic == LAGSCOPE__MH_CIGAM)
    lagscope__explain(why, why_size, "a 32-bit Mach-O image (magic 0x%08x): only 64-bit images "
                      "are indexed", magic);
  else if (magic == LAGSCOPE__FAT_CIGAM || magic == LAGSCOPE__FAT_MAGIC ||
           magic == LAGSCOPE__FAT_CIGAM_64 || magic == LAGSCOPE__FAT_MAGIC_64)
    lagscope__explain(why, why_size, "a fat (universal) file, not one image: index the slice of "
                      "one architecture, as dyld loads it");
  else if (magic == LAGSCOPE__MH_CIGAM_64)
    lagscope__explain(why, why_size, "a Mach-O image of the other byte order (magic 0x%08x)",
                      magic);
  else
    lagscope__explain(why, why_size, "not a Mach-O image: magic 0x%08x, not 0x%08x", magic,
                      LAGSCOPE__MH_MAGIC_64);
  return -1;
}

/* Records the sections of one segment command; nsects was proven to fit in cmdsize. */
static void read_sections(layout *l, const unsigned char *command,
                          const lagscope__segment_command_64 *seg) {
  int in_text = name_is(seg->segname, "__TEXT");
  for (uint32_t i = 0; i < seg->nsects && l->section_count < MAX_SECTIONS; i++) {
    lagscope__section_64 s;
    memcpy(&s, command + sizeof(*seg) + (size_t)i * sizeof(s), sizeof(s));
    section_info *info = &l->sections[l->section_count++];
    info->addr = s.addr;
    info->end = s.addr + s.size;
    /* Code only where __TEXT's own range holds the whole section: an entry is then an offset
     * from __TEXT's vmaddr that fits in 32 bits. */
    info->is_code = in_text && name_is(s.segname, "__TEXT") &&
                    (s.flags & (LAGSCOPE__S_ATTR_PURE_INSTRUCTIONS |
                                LAGSCOPE__S_ATTR_SOME_INSTRUCTIONS)) != 0 &&
                    s.addr >= seg->vmaddr && inside(s.addr - seg->vmaddr, s.size, seg->vmsize);
  }
}

static int read_segment(layout *l, const unsigned char *command, uint32_t cmdsize, uint32_t index,
                        char *why, size_t why_size) {
  lagscope__segment_command_64 seg;
  if (cmdsize < sizeof(seg)) {
    lagscope__explain(why, why_size, "load command %u (LC_SEGMENT_64) has cmdsize %u, less than "
                      "a segment command's %zu bytes", index, cmdsize, sizeof(seg));
    return -1;
  }
  memcpy(&seg, command, sizeof(seg));
  if (seg.nsects > (cmdsize - sizeof(seg)) / sizeof(lagscope__section_64)) {
    lagscope__explain(why, why_size, "segment %.16s claims %u sections, more than its cmdsize "
                      "%u holds", seg.segname, seg.nsects, cmdsize);
    return -1;
  }
  int is_text = name_is(seg.segname, "__TEXT"), is_linkedit = name_is(seg.segname, "__LINKEDIT");
  if ((is_text && l->have_text) || (is_linkedit && l->have_linkedit)) {
    lagscope__explain(why, why_size, "two %.16s segments", seg.segname);
    return -1;
  }
  if (is_text) l->text = seg, l->have_text = 1;
  if (is_linkedit) l->linkedit = seg, l->have_linkedit = 1;
  read_sections(l, command, &seg);
  return 0;
}

/* LC_SYMTAB, LC_UUID and LC_FUNCTION_STARTS: a fixed size each. */
static int read_fixed(layout *l, const unsigned char *command, uint32_t cmd, uint32_t cmdsize,
                      char *why, size_t why_size) {
  int symtab = cmd == LAGSCOPE__LC_SYMTAB, starts = cmd == LAGSCOPE__LC_FUNCTION_STARTS;
  const char *name = symtab ? "LC_SYMTAB" : starts ? "LC_FUNCTION_STARTS" : "LC_UUID";
  size_t need = symtab ? sizeof(lagscope__symtab_command)
                : starts ? sizeof(lagscope__linkedit_data_command)
                         : sizeof(lagscope__uuid_command);
  int *have = symtab ? &l->have_symtab : starts ? &l->have_starts : &l->have_uuid;
  if (*have) {
    lagscope__explain(why, why_size, "two %s commands", name);
    return -1;
  }
  if (cmdsize < need) {
    lagscope__explain(why, why_size, "%s has cmdsize %u, less than its %zu bytes", name, cmdsize,
                      need);
    return -1;
  }
  *have = 1;
  if (symtab) {
    memcpy(&l->symtab, command, sizeof(l->symtab));
  } else if (starts) {
    memcpy(&l->starts, command, sizeof(l->starts));
  } else {
    lagscope__uuid_command u;
    memcpy(&u, command, sizeof(u));
    memcpy(l->uuid, u.uuid, sizeof(l->uuid));
  }
  return 0;
}

static int read_commands(layout *l, char *why, size_t why_size) {
  size_t header_size = sizeof(lagscope__mach_header_64);
  if (!inside(header_size, l->mh.sizeofcmds, l->mapped_size)) {
    lagscope__explain(why, why_size, "the load commands (sizeofcmds %u) run past the %zu mapped "
                      "bytes", l->mh.sizeofcmds, l->mapped_size);
    return -1;
  }
  const unsigned char *commands = l->header + header_size;
  size_t offset = 0;
  for (uint32_t i = 0; i < l->mh.ncmds; i++) {
    lagscope__load_command lc;
    if (!inside(offset, sizeof(lc), l->mh.sizeofcmds)) {
      lagscope__explain(why, why_size, "load command %u of %u starts past sizeofcmds %u", i,
                        l->mh.ncmds, l->mh.sizeofcmds);
      return -1;
    }
    memcpy(&lc, commands + offset, sizeof(lc));
    if (lc.cmdsize < sizeof(lc) || !inside(offset, lc.cmdsize, l->mh.sizeofcmds)) {
      lagscope__explain(why, why_size, "load command %u has cmdsize %u: it must be at least 8 "
                        "and end within sizeofcmds %u", i, lc.cmdsize, l->mh.sizeofcmds);
      return -1;
    }
    int rc = 0;
    if (lc.cmd == LAGSCOPE__LC_SEGMENT_64)
      rc = read_segment(l, commands + offset, lc.cmdsize, i, why, why_size);
    else if (lc.cmd == LAGSCOPE__LC_SYMTAB || lc.cmd == LAGSCOPE__LC_UUID ||
             lc.cmd == LAGSCOPE__LC_FUNCTION_STARTS)
      rc = read_fixed(l, commands + offset, lc.cmd, lc.cmdsize, why, why_size);
    if (rc != 0) return -1;
    offset += lc.cmdsize;
  }
  return 0;
}

/* __TEXT holds the header and the load commands, and the header is where vmaddr + slide says.
 * __TEXT's fileoff is not checked: in the dyld shared cache, where every system library lives,
 * it is the image's offset in the cache file, and every other file offset (__LINKEDIT's, the
 * tables') counts from the cache file's start too; the header's place in memory is the proof. */
static int check_text(const layout *l, char *why, size_t why_size) {
  const lagscope__segment_command_64 *t = &l->text;
  if (!l->have_text) {
    lagscope__explain(why, why_size, "no __TEXT segment");
    return -1;
  }
  if ((uintptr_t)t->vmaddr + l->slide != (uintptr_t)l->header) {
    lagscope__explain(why, why_size, "the header is not at __TEXT's vmaddr 0x%llx + slide 0x%llx:"
                      " a wrong slide?", (unsigned long long)t->vmaddr,
                      (unsigned long long)l->slide);
    return -1;
  }
  if (t->filesize > t->vmsize || t->vmsize > UINT32_MAX ||
      !inside(0, sizeof(lagscope__mach_header_64) + (uint64_t)l->mh.sizeofcmds, t->filesize)) {
    lagscope__explain(why, why_size, "__TEXT (fileoff %llu, filesize %llu, vmsize %llu) does not "
                      "hold the header and load commands, or is larger than 4 GB",
                      (unsigned long long)t->fileoff, (unsigned long long)t->filesize,
                      (unsigned long long)t->vmsize);
    return -1;
  }
  return 0;
}

/* ---- 3. tables ---------------------------------------------------------------------------------- */

/* __LINKEDIT's file bytes at run time: where they are, checked against the mapping. */
static const unsigned char *linkedit_bytes(const layout *l, char *why, size_t why_size) {
  const lagscope__segment_command_64 *le = &l->linkedit;
  if (!l->have_linkedit) {
    lagscope__explain(why, why_size, "LC_SYMTAB but no __LINKEDIT segment to hold it");
    return NULL;
  }
  if (le->filesize > le->vmsize || le->fileoff > UINT64_MAX - le->filesize) {
    lagscope__explain(why, why_size, "__LINKEDIT's filesize %llu is more than its vmsize %llu "
                      "(or its fileoff %llu overflows)", (unsigned long long)le->filesize,
                      (unsigned long long)le->vmsize, (unsigned long long)le->fileoff);
    return NULL;
  }
  uintptr_t start = (uintptr_t)le->vmaddr + l->slide;
  uint64_t from_header = (uint64_t)(start - (uintptr_t)l->header);
  if (l->mapped_size != LAGSCOPE__MACHO_SIZE_UNKNOWN &&
      !inside(from_header, le->filesize, l->mapped_size)) {
    lagscope__explain(why, why_size, "__LINKEDIT (vmaddr 0x%llx, filesize %llu) is not inside "
                      "the %zu mapped bytes", (unsigned long long)le->vmaddr,
                      (unsigned long long)le->filesize, l->mapped_size);
    return NULL;
  }
  return (const unsigned char *)start;
}

/* The function starts, when the image has them inside __LINKEDIT: they end each symbol at the
 * next function even where that function's own symbol is gone (a shared-cache image keeps only
 * its exported symbols in memory). Outside __LINKEDIT they are ignored: symbols still work. */
static void find_starts(layout *l, const unsigned char *bytes) {
  const lagscope__linkedit_data_command *fs = &l->starts;
  uint64_t fileoff = l->linkedit.fileoff, filesize = l->linkedit.filesize;
  if (l->have_starts && fs->dataoff >= fileoff &&
      inside(fs->dataoff - fileoff, fs->datasize, filesize))
    l->starts_data = bytes + (fs->dataoff - fileoff);
}

/* Finds both tables, proven to lie inside __LINKEDIT's file bytes. */
static int find_tables(layout *l, char *why, size_t why_size) {
  if (!l->have_symtab) return 0;
  const unsigned char *bytes = linkedit_bytes(l, why, why_size);
  if (bytes == NULL) return -1;
  find_starts(l, bytes);
  const lagscope__symtab_command *st = &l->symtab;
  uint64_t fileoff = l->linkedit.fileoff, filesize = l->linkedit.filesize;
  uint64_t symbols_size = (uint64_t)st->nsyms * sizeof(lagscope__nlist_64);
  if (st->symoff < fileoff || !inside(st->symoff - fileoff, symbols_size, filesize) ||
      st->stroff < fileoff || !inside(st->stroff - fileoff, st->strsize, filesize)) {
    lagscope__explain(why, why_size, "the symbol table (symoff %u, nsyms %u) or string table "
                      "(stroff %u, strsize %u) is outside __LINKEDIT (fileoff %llu, filesize "
                      "%llu)", st->symoff, st->nsyms, st->stroff, st->strsize,
                      (unsigned long long)fileoff, (unsigned long long)filesize);
    return -1;
  }
  l->symbols = bytes + (st->symoff - fileoff);
  l->strings = bytes + (st->stroff - fileoff);
  return 0;
}

/* ---- 4. index ----------------------------------------------------------------------------------- */

/* A function symbol as read, before sorting and deduplication. */
typedef struct candidate {
  uint64_t start, section_end; /* file addresses */
  const char *name;            /* in the string table; NULL when garbled */
  uint32_t index;              /* in the symbol table: the last tie-break */
  int external;
} candidate;

/* What an iOS device's shared cache leaves of a local symbol's name: dyld's cache builder moves
 * the local symbols out and points their names at this one string (OptimizerLinkedit.cpp). */
#define REDACTED_NAME "<redacted>"

/* The symbol's name, proven NUL-terminated within the string table; NULL when it is not, or
 * when the cache redacted it: a nameless entry, which still ends the function before it. */
static const char *symbol_name(const layout *l, uint32_t strx) {
  uint32_t size = l->symtab.strsize;
  if (strx == 0 || strx >= size) return NULL;
  const char *name = (const char *)l->strings + strx;
  if (memchr(name, '\0', size - strx) == NULL || name[0] == '\0') return NULL;
  return strcmp(name, REDACTED_NAME) != 0 ? name : NULL;
}

/* Symbol i, when it is a function by macho.h's rule. 1 and *c filled, else 0. */
static int read_candidate(const layout *l, uint32_t i, candidate *c) {
  lagscope__nlist_64 n;
  memcpy(&n, l->symbols + (size_t)i * sizeof(n), sizeof(n));
  if ((n.n_type & LAGSCOPE__N_STAB) != 0 || (n.n_type & LAGSCOPE__N_TYPE) != LAGSCOPE__N_SECT ||
      n.n_sect == 0 || n.n_sect > l->section_count)
    return 0;
  const section_info *s = &l->sections[n.n_sect - 1];
  if (!s->is_code || n.n_value < s->addr || n.n_value >= s->end) return 0;
  c->start = n.n_value;
  c->section_end = s->end;
  c->name = symbol_name(l, n.n_strx);
  c->index = i;
  c->external = (n.n_type & LAGSCOPE__N_EXT) != 0 && (n.n_type & LAGSCOPE__N_PEXT) == 0;
  return 1;
}

/* By address; at one address the name to keep first: named, external, smallest, first. */
static int compare_candidates(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if ((x->name != NULL) != (y->name != NULL)) return x->name != NULL ? -1 : 1;
  if (x->external != y->external) return x->external ? -1 : 1;
  int order = x->name != NULL ? strcmp(x->name, y->name) : 0;
  if (order != 0) return order;
  return (x->index > y->index) - (x->index < y->index);
}

/* One ULEB128 number from [*p, end): 0 and *p moved on, or -1 when it runs past end or 64 bits. */
static int read_uleb(const unsigned char **p, const unsigned char *end, uint64_t *value) {
  *value = 0;
  for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char byte = *(*p)++;
    *value |= (uint64_t)(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return 0;
  }
  return -1;
}

/* The function starts as nameless candidates (each only ends the one before), into list when
 * it is not NULL; returns how many. Starts outside __TEXT's code sections are skipped. */
static size_t read_starts(const layout *l, candidate *list, size_t room) {
  if (l->starts_data == NULL) return 0;
  const unsigned char *p = l->starts_data, *end = p + l->starts.datasize;
  uint64_t address = l->text.vmaddr, delta;
  size_t n = 0;
  while (read_uleb(&p, end, &delta) == 0 && delta != 0 && delta <= l->text.vmsize &&
         address - l->text.vmaddr <= l->text.vmsize - delta) {
    address += delta;
    for (uint32_t s = 0; s < l->section_count; s++) {
      const section_info *info = &l->sections[s];
      if (!info->is_code || address < info->addr || address >= info->end) continue;
      if (list != NULL && n < room)
        list[n] = (candidate){address, info->end, NULL, UINT32_MAX, 0};
      n++;
      break;
    }
  }
  return n < room || list == NULL ? n : room;
}

/* The candidates, sorted; NULL with *count 0 when there are none or memory ran out (*oom). */
static candidate *collect(const layout *l, size_t *count, int *oom) {
  size_t n = 0, starts = read_starts(l, NULL, 0);
  candidate c;
  for (uint32_t i = 0; i < l->symtab.nsyms; i++) n += (size_t)read_candidate(l, i, &c);
  *count = 0;
  if (n + starts == 0) return NULL;
  candidate *list = lagscope__alloc((n + starts) * sizeof(candidate));
  if (list == NULL) {
    *oom = 1;
    return NULL;
  }
  for (uint32_t i = 0; i < l->symtab.nsyms && *count < n; i++)
    *count += (size_t)read_candidate(l, i, &list[*count]);
  *count += read_starts(l, list + *count, starts);
  lagscope__sort(list, *count, sizeof(candidate), compare_candidates);
  return list;
}

/* Keeps the first candidate at each address, in place; returns how many remain. */
static size_t dedupe(candidate *list, size_t n) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (kept == 0 || list[i].start != list[kept - 1].start) list[kept++] = list[i];
  return kept;
}

/* C compilers put an underscore before every C name; atos shows names without it. */
static const char *shown(const char *name) { return name[0] == '_' ? name + 1 : name; }

static void *hold(lagscope__macho_image *img, size_t size) {
  void *p = lagscope__alloc(size);
  if (p != NULL) img->bytes += size;
  return p;
}

/* Fills the entries and copies the names. 0, or -1 when out of memory. */
static int build_entries(lagscope__macho_image *img, const candidate *list, size_t n) {
  size_t names_size = 0;
  for (size_t i = 0; i < n; i++) {
    size_t length = list[i].name != NULL ? strlen(shown(list[i].name)) + 1 : 0;
    if (length > SIZE_MAX - names_size) return -1;
    names_size += length;
  }
  if (names_size >= UNNAMED) return -1; /* names are 32-bit offsets */
  img->entries = hold(img, n * sizeof(entry));
  img->names = hold(img, names_size ? names_size : 1);
  if (img->entries == NULL || img->names == NULL) return -1;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    entry *e = &img->entries[i];
    uint64_t end = i + 1 < n && list[i + 1].start < list[i].section_end ? list[i + 1].start
                                                                        : list[i].section_end;
    e->start = (uint32_t)(list[i].start - img->text_vmaddr);
    e->end = (uint32_t)(end - img->text_vmaddr);
    e->name = UNNAMED;
    if (list[i].name == NULL) continue;
    const char *name = shown(list[i].name);
    size_t length = strlen(name) + 1;
    memcpy(img->names + used, name, length);
    e->name = (uint32_t)used;
    used += length;
  }
  img->count = (uint32_t)n;
  img->names_size = names_size;
  return 0;
}

static int build_index(lagscope__macho_image *img, const layout *l) {
  int oom = 0;
  size_t n = 0;
  candidate *list = collect(l, &n, &oom);
  n = dedupe(list, n);
  int rc = oom ? -1 : build_entries(img, list, n);
  lagscope__dealloc(list);
  return rc;
}

static void format_uuid(const uint8_t uuid[16], char out[37]) {
  static const char digits[] = "0123456789ABCDEF";
  size_t o = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = digits[uuid[i] >> 4];
    out[o++] = digits[uuid[i] & 15];
  }
  out[o] = '\0';
}

static lagscope__macho_image *new_image(const layout *l, const char *path) {
  lagscope__macho_image *img = lagscope__alloc(sizeof(*img));
  if (img == NULL) return NULL;
  img->bytes = sizeof(*img);
  img->header = (uintptr_t)l->header;
  img->slide = l->slide;
  img->text_vmaddr = l->text.vmaddr;
  img->text_vmsize = l->text.vmsize;
  img->cputype = l->mh.cputype;
  img->cpusubtype = l->mh.cpusubtype;
  img->has_uuid = l->have_uuid;
  memcpy(img->uuid, l->uuid, sizeof(img->uuid));
  if (l->have_uuid) format_uuid(l->uuid, img->uuid_string);
  size_t length = strlen(path != NULL ? path : "") + 1;
  img->path = hold(img, length);
  if (img->path != NULL) memcpy(img->path, path != NULL ? path : "", length);
  return img;
}

int lagscope__macho_image_index(const void *header, size_t mapped_size, uintptr_t slide,
                                const char *path, lagscope__macho_image **out, char *why,
                                size_t why_size) {
  if (out == NULL || header == NULL) {
    lagscope__explain(why, why_size, "no image (header or out is NULL)");
    return LAGSCOPE_EINVAL;
  }
  *out = NULL;
  layout *l = lagscope__alloc(sizeof(layout)); /* 6 KB of sections: not on a thread's stack */
  if (l == NULL) return LAGSCOPE_ENOMEM;
  l->header = header;
  l->mapped_size = mapped_size;
  l->slide = slide;
  int rc = LAGSCOPE_EPARSE;
  if (read_header(l, why, why_size) == 0 && read_commands(l, why, why_size) == 0 &&
      check_text(l, why, why_size) == 0 && find_tables(l, why, why_size) == 0) {
    lagscope__macho_image *img = new_image(l, path);
    rc = img != NULL && img->path != NULL && build_index(img, l) == 0 ? 0 : LAGSCOPE_ENOMEM;
    if (rc == 0) *out = img;
    else lagscope__macho_image_free(img);
    if (rc != 0) lagscope__explain(why, why_size, "out of memory for the index");
  }
  lagscope__dealloc(l);
  return rc;
}

void lagscope__macho_image_free(lagscope__macho_image *img) {
  if (img == NULL) return;
  lagscope__dealloc(img->entries);
  lagscope__dealloc(img->names);
  lagscope__dealloc(img->path);
  lagscope__dealloc(img);
}

/* ---- 5. lookup ---------------------------------------------------------------------------------- */

int lagscope__macho_image_lookup(const lagscope__macho_image *img, uintptr_t address,
                                 const char **symbol, uintptr_t *symbol_address) {
  if (img == NULL || !lagscope__macho_image_contains(img, address)) return LAGSCOPE_ENOENT;
  uint32_t offset = (uint32_t)(address - img->header);
  size_t lo = 0, hi = img->count; /* the first entry starting after offset is in [lo, hi] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (img->entries[mid].start <= offset) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return LAGSCOPE_ENOENT;
  const entry *e = &img->entries[lo - 1];
  if (offset >= e->end || e->name == UNNAMED) return LAGSCOPE_ENOENT;
  if (symbol != NULL) *symbol = img->names + e->name;
  if (symbol_address != NULL) *symbol_address = img->header + e->start;
  return 0;
}

/* ---- 6. accessors and names --------------------------------------------------------------------- */

int lagscope__macho_image_contains(const lagscope__macho_image *img, uintptr_t address) {
  return img != NULL && address - img->header < img->text_vmsize;
}

const char *lagscope__macho_image_path(const lagscope__macho_image *img) { return img->path; }
uintptr_t lagscope__macho_image_load_address(const lagscope__macho_image *img) { return img->header; }
uintptr_t lagscope__macho_image_slide(const lagscope__macho_image *img) { return img->slide; }
uint64_t lagscope__macho_image_text_vmaddr(const lagscope__macho_image *img) {
  return img->text_vmaddr;
}
const uint8_t *lagscope__macho_image_uuid(const lagscope__macho_image *img) {
  return img->has_uuid ? img->uuid : NULL;
}
const char *lagscope__macho_image_uuid_string(const lagscope__macho_image *img) {
  return img->uuid_string;
}
uint32_t lagscope__macho_image_symbol_count(const lagscope__macho_image *img) { return img->count; }
size_t lagscope__macho_image_memory(const lagscope__macho_image *img) { return img->bytes; }

const char *lagscope__macho_image_arch(const lagscope__macho_image *img) {
  int32_t subtype = (int32_t)((uint32_t)img->cpusubtype & ~LAGSCOPE__CPU_SUBTYPE_MASK);
  if (img->cputype == LAGSCOPE__CPU_TYPE_X86_64) return "x86_64";
  if (img->cputype == LAGSCOPE__CPU_TYPE_ARM64)
    return subtype == LAGSCOPE__CPU_SUBTYPE_ARM64E ? "arm64e" : "arm64";
  return "unknown";
}

static int is_swift(const char *name) {
  return strncmp(name, "$s", 2) == 0 || strncmp(name, "$S", 2) == 0 ||
         strncmp(name, "$e", 2) == 0 || strncmp(name, "_T0", 3) == 0;
}

/* Copies a demangler's result into buf, cut short to fit, and frees it. */
static const char *take(char *demangled, char *buf, size_t buf_size) {
  snprintf(buf, buf_size, "%s", demangled);
  free(demangled);
  return buf;
}

const char *lagscope__macho_demangle(const lagscope__macho_demanglers *demanglers,
                                     const char *symbol, char *buf, size_t buf_size) {
  if (demanglers == NULL || symbol == NULL || buf == NULL || buf_size == 0) return symbol;
  char *demangled = NULL;
  if (demanglers->cxa != NULL && strncmp(symbol, "_Z", 2) == 0) {
    int status = -1;
    demangled = demanglers->cxa(symbol, NULL, NULL, &status);
    if (status != 0) free(demangled), demangled = NULL;
  } else if (demanglers->swift != NULL && is_swift(symbol)) {
    demangled = demanglers->swift(symbol, strlen(symbol), NULL, NULL, 0);
  }
  return demangled != NULL ? take(demangled, buf, buf_size) : symbol;
}
