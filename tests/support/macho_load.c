/* Lays a Mach-O file out as dyld would (macho_load.h). Its own checks are enough to never read
 * outside the file; the index under test does the thorough ones. */
#define _DEFAULT_SOURCE
#include "macho_load.h"

#include "macho.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_SPAN ((uint64_t)1 << 30) /* a test image larger than 1 GB of vm is a broken one */

unsigned char *macho_read_file(const char *path, size_t *size, char *why, size_t why_size) {
  FILE *f = fopen(path, "rb");
  unsigned char *bytes = NULL;
  long length = -1;
  if (f != NULL && fseek(f, 0, SEEK_END) == 0) length = ftell(f);
  if (length >= 0 && fseek(f, 0, SEEK_SET) == 0) bytes = malloc(length > 0 ? (size_t)length : 1);
  if (bytes != NULL && fread(bytes, 1, (size_t)length, f) != (size_t)length) {
    free(bytes);
    bytes = NULL;
  }
  if (f != NULL) fclose(f);
  if (bytes == NULL) snprintf(why, why_size, "cannot read %s", path);
  *size = (size_t)(length > 0 ? length : 0);
  return bytes;
}

/* Calls fn for each LC_SEGMENT_64 but __PAGEZERO (no access, no bytes: dyld only reserves it). */
typedef void segment_fn(const lagscope__segment_command_64 *seg, void *ctx);

/* The header is at file + at (0, or an image's offset in a shared-cache file); segment file
 * offsets count from the file's start either way. */
static int each_segment(const unsigned char *file, size_t size, size_t at, segment_fn *fn,
                        void *ctx, char *why, size_t why_size) {
  lagscope__mach_header_64 mh;
  if (at > size) {
    snprintf(why, why_size, "the image's offset %zu is past the file's %zu bytes", at, size);
    return -1;
  }
  const unsigned char *image = file + at;
  size_t image_size = size - at;
  if (image_size < sizeof(mh) ||
      (memcpy(&mh, image, sizeof(mh)), mh.magic != LAGSCOPE__MH_MAGIC_64)) {
    snprintf(why, why_size, "not a 64-bit Mach-O file (a fat file needs a slice: lipo -thin)");
    return -1;
  }
  size_t offset = sizeof(mh), end = sizeof(mh) + (size_t)mh.sizeofcmds;
  if (end > image_size) {
    snprintf(why, why_size, "the load commands run past the end of the file");
    return -1;
  }
  for (uint32_t i = 0; i < mh.ncmds; i++) {
    lagscope__load_command lc = {0, 0};
    if (end - offset >= sizeof(lc)) memcpy(&lc, image + offset, sizeof(lc));
    if (lc.cmdsize < sizeof(lc) || lc.cmdsize > end - offset) {
      snprintf(why, why_size, "load command %u is outside the load commands", i);
      return -1;
    }
    lagscope__segment_command_64 seg;
    if (lc.cmd == LAGSCOPE__LC_SEGMENT_64 && lc.cmdsize >= sizeof(seg)) {
      memcpy(&seg, image + offset, sizeof(seg));
      if (seg.filesize > seg.vmsize || seg.fileoff > size || seg.filesize > size - seg.fileoff) {
        snprintf(why, why_size, "segment %.16s is outside the file", seg.segname);
        return -1;
      }
      if (!(seg.initprot == 0 && seg.filesize == 0) && seg.vmsize != 0) fn(&seg, ctx);
    }
    offset += lc.cmdsize;
  }
  return 0;
}

typedef struct span {
  uint64_t lowest, highest, text;
  int overflow;
} span;

static void measure(const lagscope__segment_command_64 *seg, void *ctx) {
  span *s = ctx;
  if (seg->vmaddr > UINT64_MAX - seg->vmsize) s->overflow = 1;
  if (seg->vmaddr < s->lowest) s->lowest = seg->vmaddr;
  if (seg->vmaddr + seg->vmsize > s->highest) s->highest = seg->vmaddr + seg->vmsize;
  if (strncmp(seg->segname, "__TEXT", 16) == 0) s->text = seg->vmaddr;
}

typedef struct copy_context {
  const unsigned char *file;
  unsigned char *region;
  uint64_t lowest;
} copy_context;

static void copy_segment(const lagscope__segment_command_64 *seg, void *ctx) {
  copy_context *c = ctx;
  memcpy(c->region + (seg->vmaddr - c->lowest), c->file + seg->fileoff, seg->filesize);
}

int macho_load_bytes(const unsigned char *file, size_t size, macho_loaded *out, char *why,
                     size_t why_size) {
  return macho_load_cached_bytes(file, size, 0, out, why, why_size);
}

int macho_load_cached_bytes(const unsigned char *file, size_t size, size_t at, macho_loaded *out,
                            char *why, size_t why_size) {
  memset(out, 0, sizeof(*out));
  span s = {UINT64_MAX, 0, UINT64_MAX, 0};
  if (each_segment(file, size, at, measure, &s, why, why_size) != 0) return -1;
  if (s.overflow || s.text == UINT64_MAX || s.highest - s.lowest > MAX_SPAN) {
    snprintf(why, why_size, "no __TEXT segment, or segments spread over more than 1 GB");
    return -1;
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t length = (size_t)(s.highest - s.lowest);
  size_t rounded = (length + page - 1) / page * page;
  unsigned char *mapping = mmap(NULL, rounded + 2 * page, PROT_NONE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED || mprotect(mapping + page, rounded, PROT_READ | PROT_WRITE) != 0) {
    snprintf(why, why_size, "cannot map %zu bytes", rounded);
    if (mapping != MAP_FAILED) munmap(mapping, rounded + 2 * page);
    return -1;
  }
  copy_context c = {file, mapping + page, s.lowest};
  each_segment(file, size, at, copy_segment, &c, why, why_size);
  out->slide = (uintptr_t)c.region - (uintptr_t)s.lowest; /* modulo 2^64: may be "negative" */
  out->header = c.region + (s.text - s.lowest);
  out->mapped_size = length - (size_t)(s.text - s.lowest);
  out->lowest_vmaddr = s.lowest;
  out->mapping = mapping;
  out->mapping_size = rounded + 2 * page;
  return 0;
}

int macho_load(const char *path, macho_loaded *out, char *why, size_t why_size) {
  return macho_load_cached(path, 0, out, why, why_size);
}

int macho_load_cached(const char *path, size_t at, macho_loaded *out, char *why,
                      size_t why_size) {
  size_t size = 0;
  unsigned char *file = macho_read_file(path, &size, why, why_size);
  if (file == NULL) return -1;
  int rc = macho_load_cached_bytes(file, size, at, out, why, why_size);
  free(file);
  return rc;
}

void macho_unload(macho_loaded *m) {
  if (m->mapping != NULL) munmap(m->mapping, m->mapping_size);
  memset(m, 0, sizeof(*m));
}
