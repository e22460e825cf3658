/* A blocked call's path argument named (core/linux/wait_target.c, issue 32, section 2), read
 * from our own memory with checked reads: absolute as given; relative, made whole by the call's
 * folder fd or the working folder; a path that ends just before an unmapped page read whole;
 * one that runs into it, or a pointer to nothing, names nothing and does not fault; one longer
 * than the bound cut with "..."; unprintable bytes shown as '?'. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static lagscope__stack blocked_in(long nr, uintptr_t a0, uintptr_t a1) {
  lagscope__stack s;
  memset(&s, 0, sizeof(s));
  s.run_state = LAGSCOPE__RUN_SYSCALL;
  s.syscall = (int32_t)nr;
  s.args[0] = a0;
  s.args[1] = a1;
  return s;
}

static const char *target_of(const lagscope__stack *s) {
  static char out[LAGSCOPE__TARGET_MAX];
  lagscope__describe_wait_target(s, out, sizeof(out));
  printf("  -> \"%s\"\n", out);
  return out;
}

int main(void) {
  long page = sysconf(_SC_PAGESIZE);
  /* Two pages, the second unmapped: a path can end right at the edge. */
  char *pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(pages != MAP_FAILED);
  CHECK(munmap(pages + page, (size_t)page) == 0);

  const char *absolute = "/var/lib/app/save.dat";
  lagscope__stack s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)absolute);
  CHECK(strcmp(target_of(&s), absolute) == 0);

  /* Relative to a folder's fd. */
  int folder = open("/usr", O_RDONLY | O_DIRECTORY);
  CHECK(folder >= 0);
  s = blocked_in(SYS_openat, (uintptr_t)folder, (uintptr_t)"share/doc");
  CHECK(strcmp(target_of(&s), "/usr/share/doc") == 0);
  s = blocked_in(SYS_newfstatat, (uintptr_t)folder, (uintptr_t)"lib");
  CHECK(strcmp(target_of(&s), "/usr/lib") == 0);
  /* Relative to the working folder. */
  CHECK(chdir("/tmp") == 0);
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)"x.fifo");
  CHECK(strcmp(target_of(&s), "/tmp/x.fifo") == 0);
  /* The root as the folder: one slash. */
  int root = open("/", O_RDONLY | O_DIRECTORY);
  s = blocked_in(SYS_openat, (uintptr_t)root, (uintptr_t)"etc");
  CHECK(strcmp(target_of(&s), "/etc") == 0);

  /* Ends just before the unmapped page: read whole. */
  char *edge = pages + page - 6;
  memcpy(edge, "/a/b\001", 6); /* "/a/b?" and its NUL as the page's last byte */
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)edge);
  CHECK(strcmp(target_of(&s), "/a/b?") == 0);
  /* Runs into the unmapped page: nothing, no fault. */
  memset(pages + page - 8, 'x', 8);
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)(pages + page - 8));
  CHECK(strcmp(target_of(&s), "") == 0);
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)(pages + page));
  CHECK(strcmp(target_of(&s), "") == 0);
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, 8);
  CHECK(strcmp(target_of(&s), "") == 0);

  /* Longer than the bound: cut, said. */
  char *longer = malloc(4000);
  CHECK(longer != NULL);
  longer[0] = '/';
  memset(longer + 1, 'd', 3998);
  longer[3999] = '\0';
  s = blocked_in(SYS_openat, (uintptr_t)AT_FDCWD, (uintptr_t)longer);
  const char *t = target_of(&s);
  CHECK(t[0] == '/' && strlen(t) == LAGSCOPE__TARGET_MAX - 1 &&
        strcmp(t + strlen(t) - 4, "d...") == 0);
  free(longer);

  /* A call with no path (read on an fd) is not read as one. */
  s = blocked_in(SYS_read, 0, (uintptr_t)absolute);
  CHECK(strstr(target_of(&s), "var/lib") == NULL);
  close(folder);
  close(root);
  printf("wait paths: ok\n");
  return 0;
}
