/* A library loaded when first needed (port.h says who and why): one lock per library, held
 * while one thread opens it and looks its functions up, so that the others wait for that one
 * result (what pthread_once gave libdw and liblzma, and a mutex the viewer's libraries), and
 * the state published with release, so that a caller who finds it loaded finds the table
 * filled without taking the lock. Never called from a dl_iterate_phdr callback: dlopen takes
 * the loader's lock, which the callback holds (and a TSan report made inside one can deadlock,
 * core/linux/object_bytes.c). */
#define _GNU_SOURCE
#include "../internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

enum { UNTRIED = 0, LOADED, FAILED };

/* Every function of lib looked up in library, into lib->found (read by no one until the
 * library is loaded); 0, and why, at the first one missing. F */
static int look_up(lagscope__lazy_library *lib, void *library, char *why, size_t why_size) {
  for (size_t i = 0; i < lib->count; i++) {
    lib->found[i] = dlsym(library, lib->names[i]);
    if (lib->found[i] == NULL) {
      lagscope__explain(why, why_size, "%s has no %s", lib->soname, lib->names[i]);
      return 0;
    }
  }
  return 1;
}

/* Opens lib and fills its table, or leaves it closed and says why. 1 when loaded. L: the
 * loader's */
static int open_library(lagscope__lazy_library *lib, char *why, size_t why_size) {
  void *library = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *said = dlerror();
    lagscope__explain(why, why_size, "%s could not be loaded: %s", lib->soname,
                      said != NULL ? said : "no reason given");
    return 0;
  }
  if (look_up(lib, library, why, why_size)) return 1;
  dlclose(library);
  return 0;
}

int lagscope__lazy_library_load(lagscope__lazy_library *lib, char *why, size_t why_size) {
  int state = atomic_load_explicit(&lib->state, memory_order_acquire);
  if (state == LOADED) return LAGSCOPE_OK;
  if (state == FAILED && !lib->retry) return LAGSCOPE_ESYS;
  pthread_mutex_lock(&lib->loading);
  state = atomic_load_explicit(&lib->state, memory_order_relaxed);
  if (state == UNTRIED || (state == FAILED && lib->retry)) {
    state = open_library(lib, why, why_size) ? LOADED : FAILED;
    atomic_store_explicit(&lib->state, state, memory_order_release);
  }
  pthread_mutex_unlock(&lib->loading);
  return state == LOADED ? LAGSCOPE_OK : LAGSCOPE_ESYS;
}
