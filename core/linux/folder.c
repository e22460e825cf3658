/* Folders listed without allocating: getdents64 into a buffer on the stack. opendir's buffer is
 * 32 KiB from malloc, and a thread's first malloc gives it a glibc arena of its own, which
 * stays resident in the app; the usage reader lists the threads twice a second, the store its
 * folder at each hang. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

typedef int (*name_visit)(const char *name, int dir_fd, void *ctx);

/* Each entry of the folder open at fd, from where its offset is. */
static int each_entry(int fd, name_visit visit, void *ctx) {
  _Alignas(struct dirent64) char buf[4096];
  for (;;) {
    ssize_t n = getdents64(fd, buf, sizeof(buf));
    if (n <= 0) return n < 0 ? -errno : 0;
    for (ssize_t at = 0; at < n;) {
      const struct dirent64 *e = (const struct dirent64 *)(buf + at);
      if (!visit(e->d_name, fd, ctx)) return 0;
      at += e->d_reclen;
    }
  }
}

int lagscope__linux_each_name(const char *path, name_visit visit, void *ctx) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = each_entry(fd, visit, ctx);
  close(fd);
  return rc;
}

typedef struct plain_visit {
  int (*visit)(const char *name, void *ctx);
  void *ctx;
} plain_visit;

static int visit_plain(const char *name, int dir_fd, void *ctx) {
  (void)dir_fd;
  const plain_visit *p = ctx;
  return p->visit(name, p->ctx);
}

int lagscope__folder_each_name(int dir_fd, int (*visit)(const char *name, void *ctx), void *ctx) {
  if (lseek(dir_fd, 0, SEEK_SET) < 0) return -errno;
  plain_visit p = {visit, ctx};
  return each_entry(dir_fd, visit_plain, &p);
}
