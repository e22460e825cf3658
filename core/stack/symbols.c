/*
 * Addresses to names: the half both ports share. One lock around the port's index
 * (core/linux/symbols.c, core/darwin/symbols.c), since the monitor symbolicates while the
 * viewer's capture requests may too; and the rule for return addresses.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>

struct lagscope__symbols {
  pthread_mutex_t lock;
  lagscope__symbol_index *index;
};

lagscope__symbols *lagscope__symbols_new(void) {
  lagscope__symbols *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return NULL;
  s->index = lagscope__symbol_index_new();
  if (s->index == NULL || pthread_mutex_init(&s->lock, NULL) != 0) {
    lagscope__symbol_index_free(s->index);
    lagscope__dealloc(s);
    return NULL;
  }
  return s;
}

void lagscope__symbols_free(lagscope__symbols *s) {
  if (s == NULL) return;
  lagscope__symbol_index_free(s->index);
  pthread_mutex_destroy(&s->lock);
  lagscope__dealloc(s);
}

int lagscope__symbols_resolve(lagscope__symbols *s, uintptr_t address, int is_return,
                              lagscope__stack_frame *out) {
  memset(out, 0, sizeof(*out));
  out->address = address;
  out->build_id = "";
  /* A return address points after the call: the call itself is one byte before. */
  uintptr_t lookup = is_return && address > 0 ? address - 1 : address;
  pthread_mutex_lock(&s->lock);
  int rc = lagscope__symbol_index_resolve(s->index, address, lookup, out);
  pthread_mutex_unlock(&s->lock);
  return rc;
}

size_t lagscope__symbols_memory(const lagscope__symbols *s) {
  pthread_mutex_t *lock = (pthread_mutex_t *)&s->lock; /* a read under the lock, of a const view */
  pthread_mutex_lock(lock);
  size_t bytes = sizeof(*s) + lagscope__symbol_index_memory(s->index);
  pthread_mutex_unlock(lock);
  return bytes;
}
