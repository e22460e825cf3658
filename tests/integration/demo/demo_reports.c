#define _GNU_SOURCE
#include "demo_reports.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *demo_wait_for(spawn_proc *p, const char *type, int timeout_ms) {
  static char line[SPAWN_BUFFER];
  uint64_t deadline = spawn_now_ns() + (uint64_t)timeout_ms * 1000000u;
  while (spawn_now_ns() < deadline) {
    int result;
    int left = (int)((deadline - spawn_now_ns()) / 1000000u);
    cJSON *json = spawn_read_json(p, left, &result, line, sizeof(line));
    if (result != SPAWN_LINE) return NULL;
    if (json == NULL) continue;
    const char *t = spawn_json_type(json);
    if (t != NULL && strcmp(t, "metrics") != 0) printf("demo: %.300s\n", line);
    if (t != NULL && strcmp(t, type) == 0) return json;
    cJSON_Delete(json);
  }
  return NULL;
}

size_t demo_functions(const cJSON *frames, const char **out, size_t max) {
  size_t n = 0;
  const cJSON *frame;
  cJSON_ArrayForEach(frame, frames) {
    if (n == max) break;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
    out[n++] = cJSON_IsString(f) ? f->valuestring : NULL;
  }
  return n;
}

int demo_find(const char **names, size_t n, const char *name, int contains) {
  for (size_t i = 0; i < n; i++)
    if (names[i] != NULL && (contains ? strstr(names[i], name) != NULL : strcmp(names[i], name) == 0))
      return (int)i;
  return -1;
}

cJSON *demo_read_json_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  static char text[16 << 20];
  size_t len = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[len] = '\0';
  return cJSON_Parse(text);
}

void demo_temp_dir(char *out, size_t size) {
  snprintf(out, size, "/tmp/lagscope-test-XXXXXX");
  CHECK(mkdtemp(out) != NULL);
}

void demo_remove_dir(const char *dir) {
  char rm[128];
  snprintf(rm, sizeof(rm), "rm -rf %s", dir);
  CHECK(system(rm) == 0);
}

void demo_stop(spawn_proc *p) {
  spawn_signal(p, SIGTERM);
  CHECK_EQ_INT(spawn_wait(p, 20000), 0);
  spawn_close(p);
}
