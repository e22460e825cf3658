/* The viewer's libraries, civetweb and cJSON, loaded at its first client (web/civetweb_calls.h
 * and web/cjson_calls.h say why): dlopen by their sonames, as the build found them, and every
 * function lagscope calls looked up once, in that library (RTLD_LOCAL). They stay loaded:
 * unloading would give nothing back that matters, and a second client soon would load them
 * again. */
#define _GNU_SOURCE
#define LAGSCOPE__VIEWER_LIBRARIES_LOADER
#include "../internal.h"
#include "../../web/cjson_calls.h"
#include "../../web/civetweb_calls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

lagscope__civetweb_table lagscope__civetweb;
lagscope__cjson_table lagscope__cjson;

/* Fills table's entry for each name of a list from library; 0 (and why) at the first missing. */
#define LOOK_UP(name)                                                                          \
  if ((found.entry_##name = (__typeof__(found.entry_##name))dlsym(library, #name)) == NULL) { \
    lagscope__explain(why, why_size, "%s has no %s", soname, #name);                          \
    return 0;                                                                                  \
  }

static int look_up_civetweb(void *library, const char *soname, char *why, size_t why_size) {
  lagscope__civetweb_table found;
  LAGSCOPE__CIVETWEB_CALLS(LOOK_UP)
  lagscope__civetweb = found;
  return 1;
}

static int look_up_cjson(void *library, const char *soname, char *why, size_t why_size) {
  lagscope__cjson_table found;
  LAGSCOPE__CJSON_CALLS(LOOK_UP)
  lagscope__cjson = found;
  return 1;
}
#undef LOOK_UP

typedef struct loadable {
  const char *soname;
  int (*look_up)(void *library, const char *soname, char *why, size_t why_size);
  pthread_mutex_t loading;
  int loaded;
} loadable;

static loadable civetweb = {LAGSCOPE_CIVETWEB_SONAME, look_up_civetweb,
                            PTHREAD_MUTEX_INITIALIZER, 0};
static loadable cjson = {LAGSCOPE_CJSON_SONAME, look_up_cjson, PTHREAD_MUTEX_INITIALIZER, 0};

/* Loads l once, with every entry, or not at all (LAGSCOPE_ESYS and why). */
static int load(loadable *l, char *why, size_t why_size) {
  pthread_mutex_lock(&l->loading);
  if (!l->loaded) {
    void *library = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
      const char *said = dlerror();
      lagscope__explain(why, why_size, "%s could not be loaded: %s", l->soname,
                        said != NULL ? said : "no reason given");
    } else if (l->look_up(library, l->soname, why, why_size)) {
      l->loaded = 1;
    } else {
      dlclose(library);
    }
  }
  int rc = l->loaded ? LAGSCOPE_OK : LAGSCOPE_ESYS;
  pthread_mutex_unlock(&l->loading);
  return rc;
}

int lagscope__civetweb_load(char *why, size_t why_size) { return load(&civetweb, why, why_size); }

int lagscope__cjson_load(char *why, size_t why_size) { return load(&cjson, why, why_size); }
