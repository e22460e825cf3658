/*
 * Addresses to names: the half both ports share. One lock around the port's index
 * (core/linux/symbols.c, core/darwin/symbols.c), since the monitor symbolicates while the
 * viewer's capture requests may too; the rule for return addresses; and whose code a frame is.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>

struct lagscope__symbols {
  pthread_mutex_t lock;
  lagscope__symbol_index *index;
  const char *own;   /* lagscope's own object (its library, the preload; the program when linked
                        statically); NULL until found */
  int own_looked;
};

/* The platform's objects (platform_libraries.c) are the system's; everything else the program
 * loaded is its own, wherever it was installed. */
lagscope__code lagscope__code_of(const lagscope__stack_frame *f, const char *program,
                                 const char *own) {
  if (f->function != NULL && strncmp(f->function, "lagscope_", 9) == 0) return LAGSCOPE__CODE_LAGSCOPE;
  if (f->module == NULL || f->module[0] == '\0') return LAGSCOPE__CODE_SYSTEM;
  int is_program = program != NULL && strcmp(f->module, program) == 0;
  if (own != NULL && !is_program && strcmp(f->module, own) == 0) return LAGSCOPE__CODE_LAGSCOPE;
  if (is_program || !lagscope__platform_object(f->module)) return LAGSCOPE__CODE_APP;
  return LAGSCOPE__CODE_SYSTEM;
}

/* lagscope's own object: the one this very function is in, as the index names it, not indexed
 * for it (nor asked of dladdr, which would wait for the loader's lock that a main thread hung
 * in dlopen holds). Lock held. */
static const char *own_object(lagscope__symbols *s) {
  if (!s->own_looked) {
    s->own_looked = 1;
    s->own = lagscope__symbol_index_module(s->index, (uintptr_t)&lagscope__code_of);
  }
  return s->own;
}

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
  const char *own = own_object(s);
  out->code = (uint8_t)lagscope__code_of(out, lagscope__symbol_index_program(s->index), own);
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
