/* The evicted hangs' tally: each report the bounds delete is first counted, by its signature,
 * in <dir>/evicted-hangs, so that the viewer's lists count every hang the folder ever held,
 * not only the reports still kept (issue 44: "counts are true everywhere"). One line a
 * signature, rewritten whole (temporary file, rename) at each eviction, by the writer alone:
 *
 *   lagscope-evicted 1
 *   <signature|-> <count> <total_ms> <max_ms> <first_wall_ms> <last_wall_ms> <kind> <label>
 *
 * "-" holds the reports without a signature, and every signature past TALLY_MAX. The label is
 * the rest of the line (control bytes written as '?'). Part of the store (store.h). */
#define _POSIX_C_SOURCE 200809L

#include "report/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TALLY_MAX 1000            /* signatures with a line of their own */
#define TALLY_MAX_BYTES (1u << 20) /* TALLY_MAX lines of at most ~400 bytes, with room */
#define LINE_BYTES 640 /* a line's bound: each field's, numbers of 64 digits at most */
#define TALLY_HEAD "lagscope-evicted 1\n"

typedef struct tally_line {
  char signature[24], kind[24], label[256];
  uint64_t count;
  double total_ms, max_ms;
  int64_t first_wall_ms, last_wall_ms;
} tally_line;

/* One line of the file read into t; 0 when it is not one. F */
static int line_read(const char *s, tally_line *t) {
  int used = 0;
  memset(t, 0, sizeof(*t));
  if (sscanf(s, "%23s %" SCNu64 " %lf %lf %" SCNd64 " %" SCNd64 " %23s %n", t->signature,
             &t->count, &t->total_ms, &t->max_ms, &t->first_wall_ms, &t->last_wall_ms, t->kind,
             &used) < 7 || used == 0)
    return 0;
  size_t n = strcspn(s + used, "\n");
  if (n >= sizeof(t->label)) n = sizeof(t->label) - 1;
  memcpy(t->label, s + used, n);
  t->label[n] = '\0';
  return 1;
}

/* The hang of a report's text as a line of count 1. F */
static void line_of_report(const char *text, size_t len, tally_line *t) {
  memset(t, 0, sizeof(*t));
  if (!lagscope__json_member_text(text, len, "signature", t->signature, sizeof(t->signature)) ||
      t->signature[0] == '\0' || strchr(t->signature, ' ') != NULL)
    snprintf(t->signature, sizeof(t->signature), "-");
  lagscope__json_span whole = {0, len};
  lagscope__json_span d = lagscope__json_member_span(text, whole, "duration_ms");
  t->total_ms = t->max_ms = d.end > d.start ? strtod(text + d.start, NULL) : 0.0;
  lagscope__json_span start = lagscope__json_member_span(text, whole, "start");
  lagscope__json_span wall = lagscope__json_member_span(text, start, "wall_ms");
  t->first_wall_ms = t->last_wall_ms = wall.end > wall.start ? strtoll(text + wall.start, NULL, 10)
                                                               : 0;
  lagscope__json_span cause = lagscope__json_member_span(text, whole, "cause");
  if (cause.end <= cause.start ||
      !lagscope__json_member_text(text + cause.start, cause.end - cause.start, "kind", t->kind,
                                  sizeof(t->kind)))
    snprintf(t->kind, sizeof(t->kind), "-");
  if (cause.end > cause.start)
    lagscope__json_member_text(text + cause.start, cause.end - cause.start, "label", t->label,
                               sizeof(t->label));
  for (char *c = t->kind; *c != '\0'; c++)
    if ((unsigned char)*c <= ' ') *c = '?';
  for (char *c = t->label; *c != '\0'; c++)
    if ((unsigned char)*c < ' ' || *c == 0x7f) *c = '?';
  t->count = 1;
}

/* The newest kind and label stay: the list's groups say their newest hang's. F */
static void line_add(tally_line *to, const tally_line *hang) {
  to->count += hang->count;
  to->total_ms += hang->total_ms;
  if (hang->max_ms > to->max_ms) to->max_ms = hang->max_ms;
  if (hang->first_wall_ms < to->first_wall_ms) to->first_wall_ms = hang->first_wall_ms;
  if (hang->last_wall_ms >= to->last_wall_ms) {
    to->last_wall_ms = hang->last_wall_ms;
    memcpy(to->kind, hang->kind, sizeof(to->kind));
    memcpy(to->label, hang->label, sizeof(to->label));
  }
}

/* The tally's text with hang added (lagscope__dealloc), from the file's text old (NULL: none);
 * NULL without memory. A */
static char *tally_with(const char *old, const tally_line *hang) {
  size_t lines = 0;
  for (const char *p = old; p != NULL && (p = strchr(p, '\n')) != NULL; p++) lines++;
  if (lines > TALLY_MAX + 1) lines = TALLY_MAX + 1; /* a planted file's further lines dropped */
  tally_line *all = lagscope__alloc_array(lines + 2, sizeof(*all));
  char *out = all != NULL ? lagscope__alloc((lines + 2) * LINE_BYTES + sizeof(TALLY_HEAD)) : NULL;
  if (out == NULL) {
    lagscope__dealloc(all);
    return NULL;
  }
  size_t n = 0;
  const char *p = old != NULL && strncmp(old, TALLY_HEAD, strlen(TALLY_HEAD)) == 0
                      ? old + strlen(TALLY_HEAD) : NULL;
  for (; p != NULL && *p != '\0' && n < lines; p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
    if (line_read(p, &all[n])) n++;
  size_t at = 0;
  while (at < n && strcmp(all[at].signature, hang->signature) != 0) at++;
  if (at == n && n >= TALLY_MAX) /* past the bound: counted under "-" */
    for (at = 0; at < n && strcmp(all[at].signature, "-") != 0; at++) {
    }
  if (at == n) {
    all[n++] = *hang;
    if (n > TALLY_MAX) snprintf(all[at].signature, sizeof(all[at].signature), "-");
  } else {
    line_add(&all[at], hang);
  }
  size_t used = (size_t)sprintf(out, "%s", TALLY_HEAD);
  for (size_t i = 0; i < n; i++) {
    /* a planted file's 1e300 would not fit: such a line is dropped */
    if (!(all[i].total_ms > -1e15 && all[i].total_ms < 1e15 && all[i].max_ms > -1e15 &&
          all[i].max_ms < 1e15))
      continue;
    used += (size_t)snprintf(out + used, LINE_BYTES,
                             "%s %" PRIu64 " %.3f %.3f %" PRId64 " %" PRId64 " %s %s\n",
                             all[i].signature, all[i].count, all[i].total_ms, all[i].max_ms,
                             all[i].first_wall_ms, all[i].last_wall_ms, all[i].kind, all[i].label);
  }
  lagscope__dealloc(all);
  return out;
}

void lagscope__store_tally_add(int dirfd, const char *text, size_t len) {
  tally_line hang;
  line_of_report(text, len, &hang);
  char *old = NULL;
  size_t old_len = 0;
  if (lagscope__store_read_at(dirfd, LAGSCOPE__STORE_TALLY, TALLY_MAX_BYTES, 1, &old, &old_len) !=
      LAGSCOPE_OK)
    old = NULL; /* none yet; one that is not ours is written anew */
  char *now = tally_with(old, &hang);
  lagscope__dealloc(old);
  if (now == NULL) return;
  const char *step = NULL;
  lagscope__store_write_renamed(dirfd, "." LAGSCOPE__STORE_TALLY ".tmp", LAGSCOPE__STORE_TALLY,
                                now, &step);
  lagscope__dealloc(now);
}

int lagscope__store_tally_read(const char *dir, lagscope__store_tally_fn fn, void *ctx) {
  char why[256], *text = NULL;
  size_t len = 0;
  int dirfd = -1;
  int rc = lagscope__folder_open(dir, 0, &dirfd, why, sizeof(why));
  if (rc == LAGSCOPE_ENOENT) return LAGSCOPE_OK;
  if (rc != LAGSCOPE_OK) return rc;
  rc = lagscope__store_read_at(dirfd, LAGSCOPE__STORE_TALLY, TALLY_MAX_BYTES, 1, &text, &len);
  close(dirfd);
  if (rc == LAGSCOPE_ENOENT) return LAGSCOPE_OK; /* nothing evicted yet */
  if (rc != LAGSCOPE_OK) return rc;
  if (strncmp(text, TALLY_HEAD, strlen(TALLY_HEAD)) == 0) {
    tally_line t;
    for (const char *p = text + strlen(TALLY_HEAD); p != NULL && *p != '\0';
         p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL) {
      if (!line_read(p, &t)) continue;
      lagscope__store_tallied e = {.count = t.count, .total_ms = t.total_ms, .max_ms = t.max_ms,
                                   .first_wall_ms = t.first_wall_ms,
                                   .last_wall_ms = t.last_wall_ms,
                                   .signature = strcmp(t.signature, "-") != 0 ? t.signature : NULL,
                                   .kind = strcmp(t.kind, "-") != 0 ? t.kind : NULL,
                                   .label = t.label[0] != '\0' ? t.label : NULL};
      fn(ctx, &e);
    }
  }
  lagscope__dealloc(text);
  return LAGSCOPE_OK;
}
