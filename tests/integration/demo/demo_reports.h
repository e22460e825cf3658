/* Helpers shared by the tests that read the demo's hang reports. */
#ifndef DEMO_REPORTS_H
#define DEMO_REPORTS_H

#include "spawn.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stddef.h>

/* An object's member by name (NULL when o is no object or has none). */
static inline const cJSON *member(const cJSON *o, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(o, name);
}
/* A member's string, "" when it is none. */
static inline const char *text(const cJSON *o, const char *name) {
  const cJSON *v = member(o, name);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* Reads JSON lines until one of the given type arrives (NULL after timeout_ms or EOF); the
 * caller cJSON_Deletes it. Prints every line but metrics. */
cJSON *demo_wait_for(spawn_proc *p, const char *type, int timeout_ms);
/* The "function" of each frame of a JSON array of frames, innermost first; NULL for none. */
size_t demo_functions(const cJSON *frames, const char **out, size_t max);
/* Index of the first entry equal to name (or containing it, with contains), or -1. */
int demo_find(const char **names, size_t n, const char *name, int contains);
/* A whole file as a parsed JSON object, or NULL. */
cJSON *demo_read_json_file(const char *path);
/* A fresh temporary folder (mkdtemp). */
void demo_temp_dir(char *out, size_t size);
/* Removes a folder demo_temp_dir made, and what is in it. */
void demo_remove_dir(const char *dir);
/* Stops the demo with SIGTERM and checks it exits 0 (bounded), then closes p. */
void demo_stop(spawn_proc *p);

#endif
