/* Exact 64-bit integers in the viewer's cJSON documents: cJSON's numbers are doubles, exact
 * only to 2^53, so counters and clocks go in as raw number text (core/base/json_writer.c's). */
#include "http.h"

#include "cjson_calls.h"

void lagscope__web_json_add_u64(cJSON *object, const char *name, uint64_t value) {
  char text[24];
  lagscope__json_u64_text(value, text);
  cJSON_AddRawToObject(object, name, text);
}

void lagscope__web_json_add_i64(cJSON *object, const char *name, int64_t value) {
  char text[24];
  lagscope__json_i64_text(value, text);
  cJSON_AddRawToObject(object, name, text);
}
