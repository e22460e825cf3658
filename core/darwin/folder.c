/* Folders listed with readdir on a duplicate of the descriptor (closedir closes it; the offset
 * is shared, so the listing starts from the beginning). Darwin's malloc has no per-thread
 * arenas to keep a thread's buffer resident, so opendir's allocation costs nothing after. */
#include "../internal.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

int lagscope__folder_each_name(int dir_fd, int (*visit)(const char *name, void *ctx), void *ctx) {
  int copy = dup(dir_fd);
  DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
  if (d == NULL) {
    int err = errno;
    if (copy >= 0) close(copy);
    return -err;
  }
  rewinddir(d);
  struct dirent *entry;
  while ((entry = readdir(d)) != NULL)
    if (!visit(entry->d_name, ctx)) break;
  closedir(d);
  return 0;
}
