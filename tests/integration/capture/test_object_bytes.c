/* Loaded objects' bytes as the unwinder reads them (object_bytes.c): from the object's file,
 * leaving the app's pages as they were, but only while the file is the one loaded; a file
 * replaced on disk since (an upgrade) is not read, the mapping is. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "linux.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

typedef struct found {
  const char *name_part; /* in: "/libz.so" */
  char path[512];
  uintptr_t eh_frame_hdr;
  uintptr_t segment_end; /* of the segment holding the header */
  uint64_t segment_offset; /* the file offset of that segment's start */
  uintptr_t segment_start;
} found;

static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  found *f = data;
  if (strstr(info->dlpi_name, f->name_part) == NULL) return 0;
  snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
      f->eh_frame_hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t at = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && f->eh_frame_hdr >= at && f->eh_frame_hdr < at + ph->p_memsz) {
      f->segment_start = at;
      f->segment_end = at + ph->p_memsz;
      f->segment_offset = ph->p_offset;
    }
  }
  return 1;
}

static found find(const char *name_part) {
  found f = {.name_part = name_part};
  dl_iterate_phdr(find_object, &f);
  CHECK_MSG(f.path[0] != '\0' && f.eh_frame_hdr != 0, "no loaded object with %s", name_part);
  return f;
}

static int page_present(uintptr_t address) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  CHECK(fd >= 0);
  uint64_t entry = 0;
  CHECK(pread(fd, &entry, sizeof(entry), (off_t)(address / PAGE * sizeof(entry))) == sizeof(entry));
  close(fd);
  return (int)(entry >> 63);
}

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
  CHECK(in >= 0 && out >= 0);
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof(buf))) > 0) CHECK(write(out, buf, (size_t)n) == n);
  close(in);
  close(out);
}

int main(void) {
  SKIP_UNDER_TSAN(); /* nothing of threads here; TSan maps its shadow over what pagemap shows */
  char dir[] = "/tmp/test_object_bytes.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char a[600], b[600];
  snprintf(a, sizeof(a), "%s/liblagscope_test_a.so", dir);
  snprintf(b, sizeof(b), "%s/liblagscope_test_b.so", dir);
  /* Two system libraries to copy (libdw needs both, so they are here). */
  CHECK(dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL) != NULL);
  CHECK(dlopen("liblzma.so.5", RTLD_NOW | RTLD_LOCAL) != NULL);
  found zlib = find("/libz.so"), lzma = find("/liblzma.so");

  /* A copy of libz, as loaded: its tables come from the file, and its pages stay unmapped. */
  copy_file(zlib.path, a);
  CHECK(dlopen(a, RTLD_NOW | RTLD_LOCAL) != NULL);
  found fa = find("/liblagscope_test_a.so");
  lagscope__linux_objects_refresh();
  uintptr_t probe = 0;
  for (uintptr_t p = (fa.eh_frame_hdr + PAGE) & ~(uintptr_t)(PAGE - 1); p + 64 <= fa.segment_end; p += PAGE)
    if (!page_present(p)) {
      probe = p;
      break;
    }
  CHECK_MSG(probe != 0, "every page of the copy's tables is mapped already");
  uint8_t read_bytes[64], file_bytes[64];
  CHECK_EQ_INT(lagscope__linux_object_read(probe, read_bytes, sizeof(read_bytes)), 0);
  CHECK_MSG(!page_present(probe), "the read mapped the app's page at %#lx", (unsigned long)probe);
  int fd = open(a, O_RDONLY);
  CHECK(pread(fd, file_bytes, sizeof(file_bytes),
              (off_t)(fa.segment_offset + (probe - fa.segment_start))) == sizeof(file_bytes));
  close(fd);
  CHECK(memcmp(read_bytes, file_bytes, sizeof(read_bytes)) == 0);
  CHECK(memcmp(read_bytes, (const void *)probe, sizeof(read_bytes)) == 0); /* maps it, now */

  /* Another copy, replaced on disk by liblzma before lagscope first reads it: the file is not
   * the one loaded, so the bytes come from memory and are libz's. */
  copy_file(zlib.path, b);
  CHECK(dlopen(b, RTLD_NOW | RTLD_LOCAL) != NULL);
  char replacement[620];
  snprintf(replacement, sizeof(replacement), "%s.new", b);
  copy_file(lzma.path, replacement);
  CHECK(rename(replacement, b) == 0);
  lagscope__linux_objects_refresh();
  found fb = find("/liblagscope_test_b.so");
  CHECK_EQ_INT(lagscope__linux_object_read(fb.eh_frame_hdr, read_bytes, sizeof(read_bytes)), 0);
  CHECK(memcmp(read_bytes, (const void *)fb.eh_frame_hdr, sizeof(read_bytes)) == 0);

  /* Outside every object: refused. The vDSO, which has no file: read in place. */
  uint8_t stack_byte = 1;
  CHECK_EQ_INT(lagscope__linux_object_read((uintptr_t)&stack_byte, read_bytes, 1), -1);
  found vdso = find("linux-vdso");
  CHECK_EQ_INT(lagscope__linux_object_read(vdso.eh_frame_hdr, read_bytes, 16), 0);
  CHECK(memcmp(read_bytes, (const void *)vdso.eh_frame_hdr, 16) == 0);

  /* Released: the list of objects and the page cache leave lagscope's heap (and, being
   * mapped blocks of its own, the process), and nothing is known until the next refresh. */
  uint64_t held = lagscope__memory_in_use();
  lagscope__linux_objects_release();
  uint64_t given_back = held - lagscope__memory_in_use();
  CHECK_MSG(given_back >= 64 * 1024, "release gave back only %llu bytes",
            (unsigned long long)given_back);
  CHECK_EQ_INT(lagscope__linux_object_read(probe, read_bytes, 1), -1);
  unlink(a);
  unlink(b);
  rmdir(dir);
  printf("object bytes: from the file at %#lx without mapping it; a replaced file not read\n",
         (unsigned long)probe);
  return 0;
}
