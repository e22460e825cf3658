/* civetweb and cJSON are merged into the library on Apple (cmake/apple.cmake): nothing to load. */
#include "../internal.h"
#include "../../web/cjson_calls.h"
#include "../../web/civetweb_calls.h"

int lagscope__civetweb_load(char *why, size_t why_size) {
  (void)why, (void)why_size;
  return LAGSCOPE_OK;
}

int lagscope__cjson_load(char *why, size_t why_size) {
  (void)why, (void)why_size;
  return LAGSCOPE_OK;
}
