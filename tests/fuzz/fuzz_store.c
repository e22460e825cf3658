/* libFuzzer target for the store's reader on file contents (core/report/store*.c): what a
 * report file in the folder may hold is anybody's bytes. The input is "<id>\n<file bytes>" (no
 * newline: the id "fuzz" and all of it the file). Each input is checked in memory (the check,
 * and what recovery would write back) and read back from a real file through
 * lagscope__store_read, the viewer's reader. Besides the sanitizers' checks:
 *   - the reader serves a file exactly when the check accepts it, byte for byte;
 *   - the JSON check accepts nothing cJSON refuses;
 *   - recovery rewrites only a report in progress, and what it writes is a valid report that
 *     is final (so a second start leaves it alone), ended or ended by termination as marked;
 *   - read as the head of a report cut short, it gives a first sample only as a whole object.
 * Build and run: tests/fuzz/run-fuzz BUILD_DIR [SECONDS] store. */
#define _GNU_SOURCE
#include "internal.h"
#include "report/store.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INVARIANT(cond)                                                                   \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "fuzz_store: invariant broken: %s (line %d)\n", #cond, __LINE__);   \
      abort();                                                                            \
    }                                                                                     \
  } while (0)

/* What the store needs of the rest of core, without the monitor (core/base/names.c is built in). */
int64_t lagscope__wall_ms(void) { return 1700000000000; }
void lagscope__log(const char *format, ...) { (void)format; }
int lagscope__utc_stamp_read(const char *text, int64_t *wall_ms) {
  (void)text, (void)wall_ms;
  return 0;
}

static char folder[64];

static void remove_folder(void) { rmdir(folder); } /* each input's file is gone already */

static void make_folder(void) {
  if (folder[0] != '\0') return;
  snprintf(folder, sizeof(folder), "/tmp/lagscope-fuzz-store-XXXXXX");
  INVARIANT(mkdtemp(folder) != NULL);
  atexit(remove_folder);
}

/* The rewrite of recovery is a final, valid report of the same id. */
static void check_rewrite(const char *updated, const char *id, const char *state) {
  char why[256];
  size_t len = strlen(updated);
  INVARIANT(lagscope__store_check(updated, len, id, why, sizeof(why)) == NULL);
  INVARIANT(strstr(updated, state) != NULL);
  char *again = NULL;
  const char *problem = NULL;
  INVARIANT(lagscope__store_recovered_text(updated, len, id, -1, &again, why, sizeof(why),
                                           &problem) == LAGSCOPE_OK);
  INVARIANT(again == NULL && problem == NULL);
}

/* The store checks JSON without cJSON (core/base/json_check.c): never more lenient than cJSON.
 * What it accepts as one value, cJSON parses as one value, to its last byte. */
static void check_json(const char *text, size_t len) {
  size_t end = 0;
  if (!lagscope__json_check(text, len, &end)) return;
  INVARIANT(end <= len);
  const char *parsed_end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, end, &parsed_end, 0);
  INVARIANT(doc != NULL);
  INVARIANT(parsed_end == text + end);
  cJSON_Delete(doc);
}

static void check_text(const char *text, size_t len, const char *id) {
  char why[256];
  check_json(text, len);
  const char *problem = lagscope__store_check(text, len, id, why, sizeof(why));
  for (int marked = 0; marked < 2; marked++) {
    char *updated = NULL;
    const char *recover_problem = NULL;
    int rc = lagscope__store_recovered_text(text, len, id, marked ? 1700000000000 : -1, &updated,
                                            why, sizeof(why), &recover_problem);
    /* Not a report: recovery says so too. A report: rewritten, final already, or (keys with
     * escapes) refused with a sentence. */
    if (problem != NULL) INVARIANT(rc == LAGSCOPE_EPARSE && recover_problem != NULL);
    INVARIANT((rc == LAGSCOPE_EPARSE) == (recover_problem != NULL));
    if (rc == LAGSCOPE_EPARSE) INVARIANT(updated == NULL);
    if (updated != NULL) {
      INVARIANT(strstr(text, "in_progress") != NULL);
      check_rewrite(updated, id, marked ? "\"ended\"" : "\"ended_by_termination\"");
      lagscope__dealloc(updated);
    }
  }
}

/* The text as the head of a report cut short (a temporary file recovery finds): what it says
 * of the hang is a start of its own or none, and a first sample that is a whole JSON object. */
static void check_head(const char *text, size_t len, const char *id) {
  lagscope__store_lost l = {.start_wall_ms = -1};
  char *first = NULL;
  lagscope__store_read_head(text, len, id, &l, &first);
  INVARIANT(l.start_wall_ms >= -1);
  if (first == NULL) return;
  cJSON *o = cJSON_Parse(first);
  INVARIANT(cJSON_IsObject(o));
  cJSON_Delete(o);
  lagscope__dealloc(first);
}

static void check_file(const char *text, size_t len, const char *id) {
  char name[200], why[256];
  snprintf(name, sizeof(name), "%s/%s.json", folder, id);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  INVARIANT(fd >= 0);
  INVARIANT(write(fd, text, len) == (ssize_t)len);
  close(fd);
  char *served = NULL;
  size_t served_len = 0;
  int rc = lagscope__store_read(folder, id, &served, &served_len);
  int valid = lagscope__store_check(text, len, id, why, sizeof(why)) == NULL;
  INVARIANT((rc == LAGSCOPE_OK) == valid);
  if (rc == LAGSCOPE_OK) INVARIANT(served_len == len && memcmp(served, text, len) == 0);
  else INVARIANT(served == NULL);
  lagscope__dealloc(served);
  unlink(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  make_folder();
  char id[130] = "fuzz";
  const uint8_t *newline = memchr(data, '\n', size < sizeof(id) ? size : sizeof(id));
  size_t skip = 0;
  if (newline != NULL) {
    size_t id_len = (size_t)(newline - data);
    memcpy(id, data, id_len);
    id[id_len] = '\0';
    skip = id_len + 1;
  }
  /* An exact heap copy: ASan sees a read past the end. */
  size_t len = size - skip;
  char *text = malloc(len + 1);
  INVARIANT(text != NULL);
  memcpy(text, data + skip, len);
  text[len] = '\0';
  check_text(text, len, id);
  check_head(text, len, id);
  /* File names the store accepts: a valid id with no '/' (the reader refuses the others). */
  if (id[0] != '\0' && strchr(id, '/') == NULL && strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._-") == strlen(id) && id[0] != '.' && strstr(id, "..") == NULL)
    check_file(text, len, id);
  free(text);
  return 0;
}
