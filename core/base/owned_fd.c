/* Descriptors that lagscope keeps open for a while (the store's folder, the viewer's socket and
 * wake pipe) are checked before each use: the app may close any descriptor, lagscope's among
 * them (a daemon closes 3..1023 at start), and open its own files on the same numbers. A
 * number is lagscope's only while it still names the file it opened: the same device, inode
 * and access mode. Writing to, polling or closing a number that is no longer lagscope's would
 * act on the app's file, so a lost one is never touched again: the caller says so and opens
 * another. Between the check and the call the app could still close and reuse the number; the
 * window is a system call wide, and nothing closes it but a kernel of another design.
 * POSIX calls only. */
#include "internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int identity_of(int fd, uint64_t *device, uint64_t *inode, int *mode) {
  struct stat st;
  int flags = fcntl(fd, F_GETFL);
  if (fd < 0 || flags < 0 || fstat(fd, &st) != 0) return -1;
  *device = (uint64_t)st.st_dev, *inode = (uint64_t)st.st_ino, *mode = flags & O_ACCMODE;
  return 0;
}

int lagscope__owned_fd_take(lagscope__owned_fd *o, int fd) {
  o->fd = -1;
  if (identity_of(fd, &o->device, &o->inode, &o->mode) != 0) return LAGSCOPE_ESYS;
  o->fd = fd;
  return LAGSCOPE_OK;
}

int lagscope__owned_fd_is_ours(const lagscope__owned_fd *o) {
  uint64_t device, inode;
  int mode;
  return o->fd >= 0 && identity_of(o->fd, &device, &inode, &mode) == 0 &&
         device == o->device && inode == o->inode && mode == o->mode;
}

int lagscope__owned_fd_get(const lagscope__owned_fd *o) {
  return lagscope__owned_fd_is_ours(o) ? o->fd : -1;
}

int lagscope__owned_fd_close(lagscope__owned_fd *o) {
  int ours = lagscope__owned_fd_is_ours(o);
  if (ours) close(o->fd);
  o->fd = -1;
  return ours;
}
