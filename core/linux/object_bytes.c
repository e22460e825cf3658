/*
 * Loaded objects' bytes for the unwinder and the stack scan (.eh_frame, code), read from each
 * object's file through a small cache of its pages, not through the app's mappings.
 *
 * Why not the mappings: a page of the app's mapping that lagscope reads becomes resident in
 * the app, with the kernel's fault-around (up to 64 KiB around it): after one stall of a GTK
 * app, 2 MiB of .eh_frame and code that the app itself never needed stayed resident. And a
 * mapping can go while it is read (a dlclose on another thread), where a read of the file
 * cannot fault.
 *
 * Only segments an object maps read-only come from its file: their bytes in memory are the
 * file's. Writable segments (.data, .got: relocated), the vDSO (it has no file) and an object
 * whose file is no longer the one loaded (replaced by an upgrade: its program headers or notes
 * differ from those in memory) are read in place, with checked reads.
 *
 * Monitor thread only: no lock. The list of objects is allocated at the first refresh, the
 * cache's pages at the first read from a file; both are freed, and the files held open closed,
 * by lagscope__linux_objects_release.
 */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEGMENTS_MAX 1024
#define OBJECTS_MAX 512
#define PATHS_BYTES (64u * 1024u) /* every object's path, NUL-terminated */
#define NOTE_BYTES_MAX 4096u      /* notes compared with the file's, at most */
#define PAGE_BYTES 4096u
#define CACHE_SETS 16u
#define CACHE_WAYS 4u /* 64 pages, 256 KiB: a GTK stack's unwind tables hit it ~9 in 10 times */
#define FILES_OPEN 4u /* few: the app's descriptors stay below FD_SETSIZE as they would */

enum source { UNCHECKED, FROM_FILE, IN_PLACE };

typedef struct object {
  const ElfW(Phdr) *phdr; /* as in memory, for the comparison with the file */
  int phnum;
  uintptr_t bias;
  uint32_t path;          /* offset in paths; NO_PATH when it has no file */
  enum source source;
  uintptr_t eh_frame_hdr; /* 0: none */
} object;

typedef struct segment {
  uintptr_t start, end, file_end; /* file_end: past it (a segment's .bss) the file has nothing */
  uint64_t file_offset;           /* of start */
  uint32_t object;
  uint8_t executable, writable;
} segment;

typedef struct cached_page {
  uint32_t object_plus_one; /* 0: empty */
  uint32_t length;          /* short at the file's end */
  uint64_t page;            /* file offset / PAGE_BYTES */
  uint64_t used;            /* the clock at the last hit: the set's oldest goes first */
} cached_page;

typedef struct open_file {
  uint32_t object_plus_one; /* 0: empty */
  lagscope__owned_fd fd; /* checked before each use: the app may take its number */
  uint64_t used;
} open_file;

#define NO_PATH UINT32_MAX

/* The loader's list as last read, and the cache's entries: lagscope__alloc'd at the first
 * refresh and freed by release, so that an idle app keeps none of it resident. */
typedef struct object_list {
  segment segments[SEGMENTS_MAX]; /* sorted by start */
  size_t segments_len;
  object objects[OBJECTS_MAX];
  size_t objects_len;
  char paths[PATHS_BYTES];
  size_t paths_len;
  cached_page pages[CACHE_SETS * CACHE_WAYS];
} object_list;

static object_list *list; /* NULL until the first refresh, and after a release */
static uint8_t *page_bytes; /* CACHE_SETS * CACHE_WAYS pages; lagscope__alloc, NULL until used */
static open_file files[FILES_OPEN];
static uint64_t clock_now;
static unsigned long long loader_adds, loader_subs; /* the loader's counters at the last look */

/* ---- the loader's list ---- */

/* A byte of a name the loader hands out. dlopen wrote it under the loader's lock, which
 * dl_iterate_phdr holds while its callback runs: TSan does not see that lock and would report
 * a race from inside the callback, and a report made there, with the loader's lock held, can
 * deadlock TSan's own locks against a thread waiting for the loader (seen under TSan: the
 * stand-in's walk listing objects while the monitor dlopens libdw). So these reads are not
 * instrumented; nothing else is left out. */
__attribute__((no_sanitize("thread"))) static char loader_byte(const char *s, size_t i) {
  return ((const volatile char *)s)[i];
}

static uint32_t keep_path(const char *path) {
  size_t len = 1;
  while (loader_byte(path, len - 1) != '\0') len++;
  if (len > PATHS_BYTES - list->paths_len) return NO_PATH; /* read in place */
  for (size_t i = 0; i < len; i++) list->paths[list->paths_len + i] = loader_byte(path, i);
  list->paths_len += len;
  return (uint32_t)(list->paths_len - len);
}

static int add_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size, (void)data;
  if (list->objects_len == OBJECTS_MAX) return 1;
  object *o = &list->objects[list->objects_len];
  *o = (object){.phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum, .bias = info->dlpi_addr,
                .path = NO_PATH, .source = IN_PLACE};
  uintptr_t lowest = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_GNU_EH_FRAME) o->eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || list->segments_len == SEGMENTS_MAX)
      continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (start < lowest) lowest = start;
    list->segments[list->segments_len++] = (segment){
        .start = start, .end = start + ph->p_memsz, .file_end = start + ph->p_filesz,
        .file_offset = ph->p_offset, .object = (uint32_t)list->objects_len,
        .executable = (ph->p_flags & PF_X) != 0, .writable = (ph->p_flags & PF_W) != 0};
  }
  /* The program's entry has no name: its file is /proc/self/exe. The vDSO's is no file. */
  int is_vdso = lowest == (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  const char *path = list->objects_len == 0 && loader_byte(info->dlpi_name, 0) == '\0'
                         ? "/proc/self/exe"
                         : info->dlpi_name;
  if (!is_vdso && loader_byte(path, 0) == '/') {
    o->path = keep_path(path);
    if (o->path != NO_PATH) o->source = UNCHECKED;
  }
  list->objects_len++;
  return 0;
}

static int by_start(const void *a, const void *b) {
  const segment *x = a, *y = b;
  return (x->start > y->start) - (x->start < y->start);
}

static void forget_files(void) {
  for (size_t i = 0; i < FILES_OPEN; i++) {
    if (files[i].object_plus_one != 0) lagscope__owned_fd_close(&files[i].fd);
    files[i] = (open_file){0};
  }
  if (list != NULL) memset(list->pages, 0, sizeof(list->pages));
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
  unsigned long long *counters = data;
  if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) return 1;
  counters[0] = info->dlpi_adds, counters[1] = info->dlpi_subs;
  return 1; /* the first entry says */
}

void lagscope__linux_objects_refresh(void) {
  unsigned long long counters[2] = {0, 0};
  dl_iterate_phdr(read_counters, counters);
  if (list != NULL && counters[0] == loader_adds && counters[1] == loader_subs) return;
  forget_files(); /* object numbers change */
  if (list == NULL && (list = lagscope__alloc(sizeof(*list))) == NULL) return; /* none known */
  list->segments_len = list->objects_len = list->paths_len = 0;
  dl_iterate_phdr(add_object, NULL);
  lagscope__sort(list->segments, list->segments_len, sizeof(segment), by_start);
  loader_adds = counters[0], loader_subs = counters[1];
}

void lagscope__linux_objects_release(void) {
  forget_files();
  lagscope__dealloc(page_bytes);
  page_bytes = NULL;
  lagscope__dealloc(list);
  list = NULL;
}

/* [address, address + bytes) within [start, end), written so that no sum can wrap: a
 * corrupt frame hands us addresses near 2^64. */
static int within(uintptr_t address, size_t bytes, uintptr_t start, uintptr_t end) {
  return address >= start && end - start >= bytes && address - start <= end - start - bytes;
}

static const segment *segment_of(uintptr_t address, size_t bytes) {
  if (list == NULL) return NULL;
  const segment *segments = list->segments;
  size_t lo = 0, hi = list->segments_len;
  while (lo < hi) { /* the last segment starting at or before address */
    size_t mid = lo + (hi - lo) / 2;
    if (segments[mid].start <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || !within(address, bytes, segments[lo - 1].start, segments[lo - 1].end))
    return NULL;
  return &segments[lo - 1];
}

int lagscope__linux_object_segment(uintptr_t address, size_t bytes, uintptr_t *start,
                                   int *executable) {
  const segment *s = segment_of(address, bytes);
  if (s == NULL) return 0;
  *start = s->start;
  *executable = s->executable;
  return 1;
}

int lagscope__linux_object_unwind_table(uintptr_t ip, uintptr_t *eh_frame_hdr,
                                        uintptr_t *segment_start, uintptr_t *segment_end) {
  const segment *s = segment_of(ip, 1);
  if (s == NULL || list->objects[s->object].eh_frame_hdr == 0) return -1;
  *eh_frame_hdr = list->objects[s->object].eh_frame_hdr;
  *segment_start = s->start;
  *segment_end = s->end;
  return 0;
}

/* ---- files ---- */

static int read_exactly(int fd, void *out, size_t size, uint64_t offset) {
  return pread(fd, out, size, (off_t)offset) == (ssize_t)size ? 0 : -1;
}

/* 1 when the file is the one loaded: the same program headers, and the same notes (the
 * build-id) as in memory. Reads the headers and notes in memory, which the loader touched. */
static int is_loaded_file(int fd, const object *o) {
  ElfW(Ehdr) header;
  if (read_exactly(fd, &header, sizeof(header), 0) != 0 ||
      memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_phnum != o->phnum ||
      header.e_phentsize != sizeof(ElfW(Phdr)) || o->phnum > 64)
    return 0;
  ElfW(Phdr) in_file[64], in_memory[64];
  size_t phdr_bytes = (size_t)o->phnum * sizeof(ElfW(Phdr));
  if (read_exactly(fd, in_file, phdr_bytes, header.e_phoff) != 0 ||
      lagscope__linux_read_own((uintptr_t)o->phdr, in_memory, phdr_bytes) != 0 ||
      memcmp(in_file, in_memory, phdr_bytes) != 0)
    return 0;
  for (int i = 0; i < o->phnum; i++) {
    const ElfW(Phdr) *ph = &in_file[i];
    if (ph->p_type != PT_NOTE) continue;
    uint8_t note_file[NOTE_BYTES_MAX], note_memory[NOTE_BYTES_MAX];
    size_t n = ph->p_filesz < NOTE_BYTES_MAX ? (size_t)ph->p_filesz : NOTE_BYTES_MAX;
    if (read_exactly(fd, note_file, n, ph->p_offset) != 0 ||
        lagscope__linux_read_own(o->bias + ph->p_vaddr, note_memory, n) != 0 ||
        memcmp(note_file, note_memory, n) != 0)
      return 0;
  }
  return 1;
}

/* The object's file, open; -1 when it has none or it is not the one loaded (the object is
 * read in place from then on). */
static int file_of(uint32_t index) {
  object *o = &list->objects[index];
  if (o->source == IN_PLACE) return -1;
  open_file *slot = &files[0];
  for (size_t i = 0; i < FILES_OPEN; i++) {
    if (files[i].object_plus_one == index + 1) {
      int fd = lagscope__owned_fd_get(&files[i].fd);
      if (fd < 0) { /* the app closed or reused its number: opened anew below */
        files[i] = (open_file){0};
        slot = &files[i];
        break;
      }
      files[i].used = ++clock_now;
      return fd;
    }
    if (files[i].used < slot->used) slot = &files[i];
  }
  int fd = open(list->paths + o->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
                  (o->source == UNCHECKED && !is_loaded_file(fd, o)))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    o->source = IN_PLACE;
    return -1;
  }
  o->source = FROM_FILE;
  if (slot->object_plus_one != 0) lagscope__owned_fd_close(&slot->fd);
  *slot = (open_file){.object_plus_one = index + 1, .used = ++clock_now};
  lagscope__owned_fd_take(&slot->fd, fd);
  return fd;
}

/* The cached page of the object's file, read if needed; NULL when it cannot be. */
static const uint8_t *page_of(uint32_t index, uint64_t page, uint32_t *length) {
  cached_page *pages = list->pages;
  size_t set = (size_t)((page * 31u + index) % CACHE_SETS), victim = set * CACHE_WAYS;
  for (size_t way = set * CACHE_WAYS; way < (set + 1) * CACHE_WAYS; way++) {
    if (pages[way].object_plus_one == index + 1 && pages[way].page == page) {
      pages[way].used = ++clock_now;
      *length = pages[way].length;
      return page_bytes + way * PAGE_BYTES;
    }
    if (pages[way].used < pages[victim].used) victim = way;
  }
  if (page_bytes == NULL &&
      (page_bytes = lagscope__alloc((size_t)CACHE_SETS * CACHE_WAYS * PAGE_BYTES)) == NULL)
    return NULL;
  int fd = file_of(index);
  if (fd < 0) return NULL;
  uint8_t *bytes = page_bytes + victim * PAGE_BYTES;
  ssize_t n = pread(fd, bytes, PAGE_BYTES, (off_t)(page * PAGE_BYTES));
  if (n <= 0) {
    pages[victim] = (cached_page){0};
    return NULL;
  }
  pages[victim] = (cached_page){.object_plus_one = index + 1, .length = (uint32_t)n,
                                .page = page, .used = ++clock_now};
  *length = (uint32_t)n;
  return bytes;
}

/* Bytes of a read-only segment from the file, page by page. */
static int read_from_file(const segment *s, uintptr_t address, uint8_t *out, size_t size) {
  uint64_t offset = s->file_offset + (address - s->start);
  while (size > 0) {
    uint32_t length;
    const uint8_t *page = page_of(s->object, offset / PAGE_BYTES, &length);
    size_t at = (size_t)(offset % PAGE_BYTES);
    if (page == NULL || at >= length) return -1;
    size_t n = length - at < size ? length - at : size;
    memcpy(out, page + at, n);
    out += n, size -= n, offset += n;
  }
  return 0;
}

/* Bytes of a segment where it is mapped, with plain byte loads: sanitizers have no business
 * here (TSan keeps no shadow for the vDSO) and memcpy would be intercepted. A load, not a
 * checked read (a system call each): the stack scan reads a GOT slot for every call it
 * checks. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static void
load_in_place(uintptr_t address, uint8_t *out, size_t size) {
  const volatile uint8_t *p = (const volatile uint8_t *)address;
  for (size_t i = 0; i < size; i++) out[i] = p[i];
}

int lagscope__linux_object_read(uintptr_t address, void *out, size_t size) {
  const segment *s = segment_of(address, size);
  if (s == NULL) return -1;
  int in_file = !s->writable && within(address, size, s->start, s->file_end);
  if (in_file && list->objects[s->object].source != IN_PLACE &&
      read_from_file(s, address, out, size) == 0)
    return 0;
  load_in_place(address, out, size);
  return 0;
}
