/* Random bytes from the kernel, for the viewer's per-launch token. getrandom(2) blocks only
 * until the kernel's pool is first initialised, long before any app runs. */
#define _GNU_SOURCE
#include "../internal.h"

#include <errno.h>
#include <sys/random.h>

int lagscope__random_bytes(void *out, size_t size) {
  unsigned char *p = out;
  while (size > 0) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return LAGSCOPE_ESYS;
    p += n;
    size -= (size_t)n;
  }
  return LAGSCOPE_OK;
}
