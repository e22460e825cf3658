/* export_tool speedscope|trace REPORT.json: prints the report's export on stdout, as the viewer's
 * /api/v1/hangs/{id}/speedscope and /trace answer it. For validate-exports.js and for looking at
 * an export by hand. Exit 1 with the reason when the report is refused, 2 on bad usage. */
#include "cjson_calls.h"
#include "web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_MAX (16u << 20) /* the store's limit on a report file */

static char *read_all(FILE *f) {
  size_t size = 0, capacity = 1 << 16;
  char *text = malloc(capacity);
  while (text != NULL) {
    size += fread(text + size, 1, capacity - size - 1, f);
    if (size < capacity - 1 || capacity > REPORT_MAX) break;
    char *bigger = realloc(text, capacity * 2);
    if (bigger == NULL) free(text);
    text = bigger, capacity *= 2;
  }
  if (text != NULL) text[size] = '\0';
  return text;
}

int main(int argc, char **argv) {
  int speedscope = argc == 3 && strcmp(argv[1], "speedscope") == 0;
  if (argc != 3 || (!speedscope && strcmp(argv[1], "trace") != 0)) {
    fprintf(stderr, "usage: export_tool speedscope|trace REPORT.json\n");
    return 2;
  }
  char why[256] = "out of memory";
  if (lagscope__cjson_load(why, sizeof why) != LAGSCOPE_OK) { /* the viewer loads it so */
    fprintf(stderr, "export_tool: %s\n", why);
    return 1;
  }
  FILE *f = fopen(argv[2], "rb");
  if (f == NULL) {
    perror(argv[2]);
    return 1;
  }
  char *report = read_all(f);
  fclose(f);
  char *out = NULL;
  if (report != NULL)
    out = speedscope ? lagscope__web_export_speedscope(report, why, sizeof why)
                     : lagscope__web_export_chrome_trace(report, why, sizeof why);
  free(report);
  if (out == NULL) {
    fprintf(stderr, "export_tool: %s: %s\n", argv[2], why);
    return 1;
  }
  puts(out);
  lagscope_free(out);
  return 0;
}
