/* civetweb loaded at the viewer's first client (web/civetweb_calls.h says why): dlopen by its
 * soname, as the build found it, and every function the viewer calls looked up once. The
 * library stays loaded: unloading it would give nothing back that matters, and a second
 * client soon would load it again. */
#define _GNU_SOURCE
#define LAGSCOPE__CIVETWEB_LOADER
#include "../internal.h"
#include "../../web/civetweb_calls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

lagscope__civetweb_table lagscope__civetweb;
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

/* Every entry, or none (0 and why). Under loading. */
static int look_up_all(void *library, char *why, size_t why_size) {
  lagscope__civetweb_table found;
#define LOOK_UP(name)                                                                          \
  if ((found.entry_##name = (__typeof__(found.entry_##name))dlsym(library, #name)) == NULL) { \
    lagscope__explain(why, why_size, "civetweb (%s) has no %s", LAGSCOPE_CIVETWEB_SONAME,      \
                      #name);                                                                  \
    return 0;                                                                                  \
  }
  LAGSCOPE__CIVETWEB_CALLS(LOOK_UP)
#undef LOOK_UP
  lagscope__civetweb = found;
  return 1;
}

int lagscope__civetweb_load(char *why, size_t why_size) {
  pthread_mutex_lock(&loading);
  if (!loaded) {
    void *library = dlopen(LAGSCOPE_CIVETWEB_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
      const char *said = dlerror();
      lagscope__explain(why, why_size, "civetweb could not be loaded: %s",
                        said != NULL ? said : LAGSCOPE_CIVETWEB_SONAME);
    } else if (look_up_all(library, why, why_size)) {
      loaded = 1;
    } else {
      dlclose(library);
    }
  }
  int rc = loaded ? LAGSCOPE_OK : LAGSCOPE_ESYS;
  pthread_mutex_unlock(&loading);
  return rc;
}
