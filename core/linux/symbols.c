/* Symbolication on Linux (stub: filled in by the symbols work of issue 4). */
#define _GNU_SOURCE
#include "../internal.h"

#include <string.h>

struct lagscope__symbols {
  int unused;
};

lagscope__symbols *lagscope__symbols_new(void) { return lagscope__alloc(sizeof(lagscope__symbols)); }
void lagscope__symbols_free(lagscope__symbols *s) { lagscope__dealloc(s); }

int lagscope__symbols_resolve(lagscope__symbols *s, uintptr_t address, int is_return,
                              lagscope__frame_info *out) {
  (void)s, (void)is_return;
  memset(out, 0, sizeof(*out));
  out->address = address;
  out->build_id = "";
  return LAGSCOPE_ENOENT;
}

size_t lagscope__symbols_memory(const lagscope__symbols *s) { (void)s; return 0; }
