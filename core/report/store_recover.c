/* Recovery at start: over the files the folder held when the store opened, each report an
 * earlier run left in progress (the app was killed while hung, or its final write failed) is
 * rewritten as ended and handed over; a file that is no report is said and left alone
 * (lagscope__store_recover, lagscope__store_recovered_text). Runs on a thread of its own
 * while the monitor writes through the same store (store.c says why that is safe). Part of the
 * store (store.h). */
#define _POSIX_C_SOURCE 200809L

#include "report/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a report's text, rewritten ---------------------------------------------------------------- */

/* Sets a top-level member's value to value_text (adding it when missing); returns new text
 * from lagscope__alloc, NULL on failure. */
static char *set_member(const char *s, const char *key, const char *value_text) {
  size_t n = strlen(s);
  lagscope__json_span v;
  size_t close;
  int empty;
  if (lagscope__json_find_member(s, n, key, &v, &close, &empty) != 0) return NULL;
  size_t vlen = strlen(value_text), klen = strlen(key);
  char *out = lagscope__alloc(n + klen + vlen + 8);
  if (out == NULL) return NULL;
  if (v.end > v.start) {
    memcpy(out, s, v.start);
    memcpy(out + v.start, value_text, vlen);
    memcpy(out + v.start + vlen, s + v.end, n - v.end + 1);
  } else {
    size_t at = 0;
    memcpy(out, s, close), at = close;
    at += (size_t)sprintf(out + at, "%s\"%s\":%s", empty ? "" : ",", key, value_text);
    memcpy(out + at, s + close, n - close + 1);
  }
  return out;
}

/* The report ended by termination: state, ended_by, recovered_at_wall_ms. */
static char *terminated_text(const char *text) {
  char wall[24];
  snprintf(wall, sizeof(wall), "%" PRId64, lagscope__wall_ms());
  char state[40];
  snprintf(state, sizeof(state), "\"%s\"", lagscope__report_state_name(LAGSCOPE__REPORT_TERMINATED));
  char *a = set_member(text, "state", state);
  char *b = a != NULL ? set_member(a, "ended_by", "\"termination\"") : NULL;
  char *c = b != NULL ? set_member(b, "recovered_at_wall_ms", wall) : NULL;
  lagscope__dealloc(a);
  lagscope__dealloc(b);
  return c;
}

/* A report the hang's end could not rewrite (a full disk) but marked: it ended. */
static char *ended_text(const char *text, int64_t ended_wall_ms) {
  char wall[24], ended[24];
  snprintf(wall, sizeof(wall), "%" PRId64, lagscope__wall_ms());
  snprintf(ended, sizeof(ended), "%" PRId64, ended_wall_ms);
  char state[40];
  snprintf(state, sizeof(state), "\"%s\"", lagscope__report_state_name(LAGSCOPE__REPORT_ENDED));
  char *a = set_member(text, "state", state);
  char *b = a != NULL ? set_member(a, "final_write_failed", "true") : NULL;
  char *c = b != NULL ? set_member(b, "ended_at_wall_ms", ended) : NULL;
  char *d = c != NULL ? set_member(c, "recovered_at_wall_ms", wall) : NULL;
  lagscope__dealloc(a);
  lagscope__dealloc(b);
  lagscope__dealloc(c);
  return d;
}

int lagscope__store_recovered_text(const char *text, size_t len, const char *id,
                                   int64_t ended_wall_ms, char **updated, char *why,
                                   size_t why_size, const char **problem) {
  *updated = NULL;
  int state;
  *problem = lagscope__store_valid_id(id)
                 ? lagscope__store_check_report(text, len, id, &state, why, why_size)
                 : "has a name that is not a report id";
  if (*problem != NULL) return LAGSCOPE_EPARSE;
  if (state != LAGSCOPE__REPORT_IN_PROGRESS) return LAGSCOPE_OK;
  *updated = ended_wall_ms >= 0 ? ended_text(text, ended_wall_ms) : terminated_text(text);
  if (*updated == NULL) return LAGSCOPE_ENOMEM;
  /* The rewrite must leave a final report: checked as the next start will. */
  *problem = lagscope__store_check_report(*updated, strlen(*updated), id, &state, why, why_size);
  if (*problem != NULL || state == LAGSCOPE__REPORT_IN_PROGRESS) {
    lagscope__dealloc(*updated);
    *updated = NULL;
    *problem = "is a report in progress whose state the store cannot rewrite";
    return LAGSCOPE_EPARSE;
  }
  return LAGSCOPE_OK;
}

/* ---- the folder's reports, recovered ------------------------------------------------------------ */

/* Recovers one listed file: a report in progress is rewritten as ended (by termination, or at
 * its mtime when its mode marks it) and handed to found(); a file that is no report goes to
 * corrupt() with a sentence and stays as it is. A */
static int recover_file(const lagscope__store *s, const char *name,
                        void (*found)(void *ctx, const char *id, const char *path,
                                      const char *json),
                        void (*corrupt)(void *ctx, const char *path, const char *why),
                        void *ctx) {
  char path[LAGSCOPE__STORE_PATH_MAX], stem[LAGSCOPE__STORE_MAX_ID + 8], why[256];
  char sentence[300];
  if (lagscope__store_path_join(path, sizeof(path), "%s/%s", s->dir, name) != 0)
    return LAGSCOPE_OK;
  lagscope__store_report_stem(name, stem);

  /* Marked when the hang's final write failed: it ended, it was not terminated. */
  struct stat st;
  int64_t ended_wall_ms = -1;
  if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (st.st_mode & 0777) == LAGSCOPE__STORE_MODE_ENDED)
    ended_wall_ms = (int64_t)st.st_mtime * 1000;

  char *text = NULL, *updated = NULL;
  size_t len = 0;
  const char *problem = NULL;
  int r =
      lagscope__store_read_at(s->dirfd, name, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, &text, &len);
  if (r == LAGSCOPE_ENOENT) return LAGSCOPE_OK; /* removed meanwhile (bounds of a write) */
  if (r == LAGSCOPE_ELIMIT) {
    lagscope__explain(why, sizeof(why), "is too large to be a report (over %u MiB)",
                      LAGSCOPE__STORE_MAX_FILE_BYTES / (1024u * 1024u));
    problem = why;
  } else if (r == LAGSCOPE_EPARSE) {
    problem = "is not a regular file";
  } else if (r != 0) {
    lagscope__explain(why, sizeof(why), "cannot be read: %s", strerror(errno));
    problem = why;
  } else {
    r = lagscope__store_recovered_text(text, len, stem, ended_wall_ms, &updated, why,
                                       sizeof(why), &problem);
  }
  lagscope__dealloc(text);
  if (problem != NULL) {
    if (corrupt != NULL) {
      lagscope__explain(sentence, sizeof(sentence), "the file %s", problem);
      corrupt(ctx, path, sentence);
    }
    return LAGSCOPE_OK;
  }
  if (updated == NULL) return r; /* final already (OK), or out of memory */
  /* Handed over even when the rewrite fails, so that the hang is not lost; the file then
   * stays as it was and is found again at the next start. */
  char written[LAGSCOPE__STORE_PATH_MAX];
  int rc = lagscope__store_rewrite(s, stem, updated, written, sizeof(written), why, sizeof(why));
  if (found != NULL) found(ctx, stem, path, updated);
  lagscope__dealloc(updated);
  return rc != 0 ? LAGSCOPE_ESYS : LAGSCOPE_OK;
}

int lagscope__store_recover(lagscope__store *s,
                            void (*found)(void *ctx, const char *id, const char *path,
                                          const char *json),
                            void (*corrupt)(void *ctx, const char *path, const char *why),
                            void *ctx, const _Atomic int *stop) {
  if (s == NULL) return LAGSCOPE_EINVAL;
  int rc = s->at_open_rc;
  for (size_t i = 0; i < s->at_open.len; i++) {
    if (stop != NULL && atomic_load_explicit(stop, memory_order_relaxed)) break;
    int r = recover_file(s, s->at_open.items[i].name, found, corrupt, ctx);
    if (r != LAGSCOPE_OK) rc = r;
  }
  lagscope__dealloc(s->at_open.items); /* once per open */
  memset(&s->at_open, 0, sizeof(s->at_open));
  s->at_open_rc = LAGSCOPE_OK;
  return rc;
}
