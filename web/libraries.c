/* The viewer's libraries, civetweb and cJSON, loaded at its first client (civetweb_calls.h and
 * cjson_calls.h say why) by the port's loader of libraries (lagscope__lazy_library_load,
 * port.h): by their sonames, as the build found them, and every function lagscope calls looked
 * up once, in that library (RTLD_LOCAL). They stay loaded: unloading would give nothing back
 * that matters, and a second client soon would load them again. A load that failed is tried
 * again at the next call (a restarted viewer's next first client). Where the build names no
 * soname (Apple: both merged into the library) there is nothing to load. */
#include "cjson_calls.h"
#include "civetweb_calls.h"
#include "web.h"

#if defined(LAGSCOPE_CIVETWEB_SONAME)
lagscope__civetweb_table lagscope__civetweb;
static const char *const civetweb_names[] = {LAGSCOPE__CIVETWEB_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library civetweb =
    LAGSCOPE__LAZY_LIBRARY(LAGSCOPE_CIVETWEB_SONAME, civetweb_names, lagscope__civetweb.found, 1);

int lagscope__civetweb_load(char *why, size_t why_size) {
  return lagscope__lazy_library_load(&civetweb, why, why_size);
}
#else
int lagscope__civetweb_load(char *why, size_t why_size) {
  (void)why, (void)why_size;
  return LAGSCOPE_OK;
}
#endif

#if defined(LAGSCOPE_CJSON_SONAME)
lagscope__cjson_table lagscope__cjson;
static const char *const cjson_names[] = {LAGSCOPE__CJSON_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library cjson =
    LAGSCOPE__LAZY_LIBRARY(LAGSCOPE_CJSON_SONAME, cjson_names, lagscope__cjson.found, 1);

int lagscope__cjson_load(char *why, size_t why_size) {
  return lagscope__lazy_library_load(&cjson, why, why_size);
}
#else
int lagscope__cjson_load(char *why, size_t why_size) {
  (void)why, (void)why_size;
  return LAGSCOPE_OK;
}
#endif
