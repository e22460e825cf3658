/*
 * Addresses to names: the half both ports share. One lock around the port's index
 * (core/linux/symbols.c, core/darwin/symbols.c), since the monitor symbolicates while the
 * viewer's capture requests may too; the rule for return addresses; and whose code a frame is.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>

/* Whether an object is the platform's, remembered by its path: the list's look-up takes a
 * couple of microseconds per frame where the index resolves one in a few hundred nanoseconds.
 * Keyed by a copy of the path, not by its pointer: a Darwin image's path lies in the image,
 * which an unload can unmap and a later load reuse. */
#define PLATFORM_MEMO_SLOTS 16
#define PLATFORM_MEMO_PATH 224
typedef struct platform_memo {
  char path[PLATFORM_MEMO_PATH]; /* "" when empty */
  int platform;
} platform_memo;

struct lagscope__symbols {
  pthread_mutex_t lock;
  lagscope__symbol_index *index;
  const char *own;   /* lagscope's own object (its library, the preload; the program when linked
                        statically); NULL until found */
  int own_looked;
  platform_memo memo[PLATFORM_MEMO_SLOTS];
};

/* The platform's objects (platform_libraries.c) are the system's; everything else the program
 * loaded is its own, wherever it was installed. platform: lagscope__platform_object(f->module). */
static lagscope__code code_by(const lagscope__stack_frame *f, const char *program,
                              const char *own, int platform) {
  if (f->function != NULL && strncmp(f->function, "lagscope_", 9) == 0) return LAGSCOPE__CODE_LAGSCOPE;
  if (f->module == NULL || f->module[0] == '\0') return LAGSCOPE__CODE_SYSTEM;
  int is_program = program != NULL && strcmp(f->module, program) == 0;
  if (own != NULL && !is_program && strcmp(f->module, own) == 0) return LAGSCOPE__CODE_LAGSCOPE;
  return is_program || !platform ? LAGSCOPE__CODE_APP : LAGSCOPE__CODE_SYSTEM;
}

lagscope__code lagscope__code_of(const lagscope__stack_frame *f, const char *program,
                                 const char *own) {
  return code_by(f, program, own, lagscope__platform_object(f->module));
}

/* lagscope__platform_object(module), through the memo. Lock held. */
static int platform_remembered(lagscope__symbols *s, const char *module) {
  if (module == NULL) return 0;
  size_t n = strlen(module);
  if (n == 0 || n >= PLATFORM_MEMO_PATH) return lagscope__platform_object(module);
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)module[i]) * 16777619u;
  platform_memo *m = &s->memo[h % PLATFORM_MEMO_SLOTS];
  if (strcmp(m->path, module) != 0) {
    memcpy(m->path, module, n + 1);
    m->platform = lagscope__platform_object(module);
  }
  return m->platform;
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
  out->code = (uint8_t)code_by(out, lagscope__symbol_index_program(s->index), own,
                               platform_remembered(s, out->module));
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
