/* What the store accepts as a report, and the viewer's reading: a report file's text checked
 * in place (lagscope__store_check_report, lagscope__store_check), and the reports listed and
 * read while the monitor writes (lagscope__store_list, lagscope__store_read), which need no
 * store open. Part of the store (store.h); no state of its own. */
#define _POSIX_C_SOURCE 200809L

#include "report/store.h"

#include <string.h>
#include <unistd.h>

/* ---- the check --------------------------------------------------------------------------------- */

/* Text a JSON parser should see: no NUL and no control characters outside strings' escapes
 * (JSON allows only tab, newline and carriage return between tokens, and none raw in strings). */
static int looks_binary(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return 1;
  }
  return 0;
}

/* How the brackets of s[0, n) nest, strings skipped: the deepest level reached, and whether
 * the text ends inside a string or with an object or array still open. */
typedef struct nesting {
  long deepest;
  int ends_open;
} nesting;

static nesting nesting_of(const char *s, size_t n) {
  nesting out = {0, 0};
  long depth = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') {
      for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
      if (i >= n) { /* no closing quote */
        out.ends_open = 1;
        return out;
      }
    } else if (s[i] == '{' || s[i] == '[') {
      if (++depth > out.deepest) out.deepest = depth;
    } else if (s[i] == '}' || s[i] == ']') {
      depth--;
    }
  }
  out.ends_open = depth > 0;
  return out;
}

/* Why text is not JSON the store reads: nested past the bound every parse of it keeps to (a
 * viewer's cJSON recursing on a small stack), cut short, or not JSON at all. */
static const char *why_not_json(const char *text, size_t len, size_t end, char *why,
                                size_t why_size) {
  nesting n = nesting_of(text, len);
  if (n.deepest > LAGSCOPE__JSON_DEPTH_MAX)
    lagscope__explain(why, why_size,
                      "nests %ld levels deep, and lagscope reads no JSON deeper than %d levels",
                      n.deepest, LAGSCOPE__JSON_DEPTH_MAX);
  else if (n.ends_open)
    lagscope__explain(why, why_size, "ends in the middle of the JSON (truncated at byte %zu)", len);
  else
    lagscope__explain(why, why_size, "is not valid JSON (error near byte %zu of %zu)", end, len);
  return why;
}

/* Checked in place (core/base/json_check.c), never built as a cJSON tree: every stored report
 * is read at each start. Members are found by their bytes: a key written with escapes is not
 * read. */
const char *lagscope__store_check_report(const char *text, size_t len, const char *stem,
                                         int *state, char *why, size_t why_size) {
  *state = -1;
  if (len == 0) return "is empty (the write never happened or the disk lost it)";
  if (looks_binary(text, len)) return "holds binary data, not JSON text";
  size_t end = 0;
  if (!lagscope__json_check(text, len, &end)) return why_not_json(text, len, end, why, why_size);
  if (lagscope__json_skip_space(text, end, len) < len) {
    lagscope__explain(why, why_size, "has bytes after the JSON document (from byte %zu of %zu)",
                      end, len);
    return why;
  }
  lagscope__json_span version;
  size_t close;
  int empty;
  char id[LAGSCOPE__STORE_MAX_ID + 1], state_name[32];
  if (lagscope__json_find_member(text, len, "schema_version", &version, &close, &empty) != 0)
    return "is JSON but not an object, so not a lagscope report";
  if (version.end == version.start) return "has no schema_version, so it is not a lagscope report";
  size_t version_len = version.end - version.start;
  if (version_len != 1 || text[version.start] != '0' + LAGSCOPE__REPORT_SCHEMA_VERSION) {
    if (text[version.start] == '-' || (text[version.start] >= '0' && text[version.start] <= '9'))
      lagscope__explain(why, why_size,
                        "has schema_version %.*s, and this lagscope reads version %d only",
                        version_len > 24 ? 24 : (int)version_len, text + version.start,
                        LAGSCOPE__REPORT_SCHEMA_VERSION);
    else
      lagscope__explain(why, why_size, "has a schema_version that is not a number");
    return why;
  }
  if (!lagscope__json_member_text(text, len, "id", id, sizeof(id)) || id[0] == '\0')
    return "has no id";
  if (strcmp(id, stem) != 0) {
    lagscope__explain(why, why_size, "has the id \"%.*s\" but its file name says \"%s\"",
                      LAGSCOPE__STORE_MAX_ID, id, stem);
    return why;
  }
  if (!lagscope__json_member_text(text, len, "state", state_name, sizeof(state_name)))
    return "has no state";
  *state = lagscope__report_state_of(state_name);
  if (*state < 0) {
    lagscope__explain(why, why_size, "has an unknown state \"%.*s\"", 32, state_name);
    return why;
  }
  return NULL;
}

const char *lagscope__store_check(const char *text, size_t len, const char *id, char *why,
                                 size_t why_size) {
  int state;
  return lagscope__store_valid_id(id)
             ? lagscope__store_check_report(text, len, id, &state, why, why_size)
             : "has a name that is not a report id";
}

/* ---- reading, for the viewer ------------------------------------------------------------------- */

static int by_name_descending(const void *a, const void *b) {
  return -lagscope__store_by_name(a, b);
}

int lagscope__store_list(const char *dir, lagscope__store_entry **entries, size_t *count) {
  *entries = NULL;
  *count = 0;
  lagscope__store_listing l = {0};
  char why[256];
  int dirfd = -1;
  int rc = lagscope__folder_open(dir, 0, &dirfd, why, sizeof(why));
  if (rc == LAGSCOPE_ENOENT) return 0; /* no folder yet: no report yet */
  if (rc != 0) return rc;
  rc = lagscope__store_list_dir(dirfd, dir, &l, 0, 1, why, sizeof(why));
  close(dirfd);
  if (rc != 0 || l.len == 0) {
    lagscope__dealloc(l.items);
    return rc;
  }
  /* ids start with the UTC time */
  lagscope__sort(l.items, l.len, sizeof(lagscope__store_listed), by_name_descending);
  lagscope__store_entry *out = lagscope__alloc(sizeof(*out) * l.len);
  if (out == NULL) {
    lagscope__dealloc(l.items);
    return LAGSCOPE_ENOMEM;
  }
  for (size_t i = 0; i < l.len; i++) {
    size_t stem = strlen(l.items[i].name) - strlen(".json");
    if (stem >= sizeof(out->id)) continue;
    memcpy(out[*count].id, l.items[i].name, stem);
    out[*count].id[stem] = '\0';
    out[*count].bytes = l.items[i].size;
    (*count)++;
  }
  lagscope__dealloc(l.items);
  *entries = out;
  return 0;
}

int lagscope__store_read(const char *dir, const char *id, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  char name[LAGSCOPE__STORE_MAX_ID + 8], why[256];
  if (!lagscope__store_valid_id(id) ||
      lagscope__store_path_join(name, sizeof(name), "%s.json", id) != 0)
    return LAGSCOPE_ENOENT;
  int dirfd = -1;
  int rc = lagscope__folder_open(dir, 0, &dirfd, why, sizeof(why));
  if (rc != 0) return rc;
  rc = lagscope__store_read_at(dirfd, name, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, text, len);
  close(dirfd);
  if (rc != 0) return rc;
  if (lagscope__store_check(*text, *len, id, why, sizeof(why)) == NULL) return LAGSCOPE_OK;
  lagscope__dealloc(*text); /* not a report: the viewer serves only what the store would keep */
  *text = NULL;
  *len = 0;
  return LAGSCOPE_EPARSE;
}
