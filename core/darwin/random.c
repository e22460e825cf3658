/* Random bytes for the viewer's per-launch token. arc4random_buf draws from the kernel's
 * generator, never fails and never blocks. */
#include "../internal.h"

#include <stdlib.h>

int lagscope__random_bytes(void *out, size_t size) {
  arc4random_buf(out, size);
  return LAGSCOPE_OK;
}
