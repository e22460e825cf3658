/* Recovery at start: over the files the folder held when the store opened, each report an
 * earlier run left in progress (the app was killed while hung, or its final write failed) is
 * rewritten as ended and handed over; a file that is no report is said and left alone; the
 * temporary file of a write the process's death cut short is the hang's report when whole,
 * else told as a hang lost with what its head holds (lagscope__store_recover,
 * lagscope__store_recovered_text). Runs on a thread of its own
 * while the monitor writes through the same store (store.c says why that is safe). Part of the
 * store (store.h). */
#define _POSIX_C_SOURCE 200809L

#include "report/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

typedef struct recovery {
  const lagscope__store *s;
  void (*found)(void *ctx, const char *id, const char *path, const char *json);
  void (*corrupt)(void *ctx, const char *path, const char *why);
  void (*lost)(void *ctx, const lagscope__store_lost *hang);
  void *ctx;
} recovery;

static void say_corrupt(const recovery *rc, const char *path, const char *problem) {
  char sentence[300];
  if (rc->corrupt == NULL) return;
  lagscope__explain(sentence, sizeof(sentence), "the file %s", problem);
  rc->corrupt(rc->ctx, path, sentence);
}

/* Why a file read with lagscope__store_read_at (r: its result, not 0 nor ENOENT) is unusable,
 * in why. */
static const char *read_problem(int r, char *why, size_t why_size) {
  if (r == LAGSCOPE_ELIMIT)
    lagscope__explain(why, why_size, "is too large to be a report (over %u MiB)",
                      LAGSCOPE__STORE_MAX_FILE_BYTES / (1024u * 1024u));
  else if (r == LAGSCOPE_EPARSE)
    return "is not a regular file";
  else
    lagscope__explain(why, why_size, "cannot be read: %s", strerror(errno));
  return why;
}

/* Recovers the text of <stem>.json (path): a report in progress is rewritten as ended (by
 * termination, or at ended_wall_ms when its mode marked it) and handed to found(); a final one
 * is handed over only when told (a final write that the process's death cut short: its end
 * was never told); a text that is no report goes to corrupt() with a sentence, the file left
 * as it is. A */
static int recover_text(const recovery *rc, const char *stem, const char *path, const char *text,
                        size_t len, int64_t ended_wall_ms, int hand_final) {
  char why[256];
  char *updated = NULL;
  const char *problem = NULL;
  int r = lagscope__store_recovered_text(text, len, stem, ended_wall_ms, &updated, why,
                                         sizeof(why), &problem);
  if (problem != NULL) {
    say_corrupt(rc, path, problem);
    return LAGSCOPE_OK;
  }
  if (updated == NULL) { /* final already (OK), or out of memory */
    if (r == LAGSCOPE_OK && hand_final && rc->found != NULL) rc->found(rc->ctx, stem, path, text);
    return r;
  }
  /* Handed over even when the rewrite fails, so that the hang is not lost; the file then
   * stays as it was and is found again at the next start. */
  char written[LAGSCOPE__STORE_PATH_MAX];
  int w = lagscope__store_rewrite(rc->s, stem, updated, written, sizeof(written), why, sizeof(why));
  if (rc->found != NULL) rc->found(rc->ctx, stem, path, updated);
  lagscope__dealloc(updated);
  return w != 0 ? LAGSCOPE_ESYS : LAGSCOPE_OK;
}

/* Recovers one listed report file (recover_text). A */
static int recover_file(const recovery *rc, const char *name) {
  const lagscope__store *s = rc->s;
  char path[LAGSCOPE__STORE_PATH_MAX], stem[LAGSCOPE__STORE_MAX_ID + 8], why[256];
  if (lagscope__store_path_join(path, sizeof(path), "%s/%s", s->dir, name) != 0)
    return LAGSCOPE_OK;
  lagscope__store_report_stem(name, stem);

  /* Marked when the hang's final write failed: it ended, it was not terminated. */
  struct stat st;
  int64_t ended_wall_ms = -1;
  if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (st.st_mode & 0777) == LAGSCOPE__STORE_MODE_ENDED)
    ended_wall_ms = (int64_t)st.st_mtime * 1000;

  char *text = NULL;
  size_t len = 0;
  int r =
      lagscope__store_read_at(s->dirfd, name, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, &text, &len);
  if (r == LAGSCOPE_ENOENT) return LAGSCOPE_OK; /* removed meanwhile (bounds of a write) */
  if (r != 0) {
    say_corrupt(rc, path, read_problem(r, why, sizeof(why)));
    return LAGSCOPE_OK;
  }
  r = recover_text(rc, stem, path, text, len, ended_wall_ms, 0);
  lagscope__dealloc(text);
  return r;
}

/* ---- a write cut short ------------------------------------------------------------------------------ */

/* The value of key among the members that the object text[0, n) begins with, as far as they
 * are whole: a report cut short keeps its head. A member counts once a ',' or '}' follows its
 * value (a number at the cut may be cut too). 1 with *value set, 0 when not found whole. F */
static int whole_member(const char *text, size_t n, const char *key, lagscope__json_span *value) {
  size_t i = lagscope__json_skip_space(text, 0, n), end, key_len = strlen(key);
  if (i >= n || text[i] != '{') return 0;
  for (i++;;) {
    i = lagscope__json_skip_space(text, i, n);
    if (i >= n || text[i] != '"' || !lagscope__json_check(text + i, n - i, &end)) return 0;
    size_t key_at = i, key_end = i + end;
    i = lagscope__json_skip_space(text, key_end, n);
    if (i >= n || text[i] != ':') return 0;
    i = lagscope__json_skip_space(text, i + 1, n);
    if (i >= n || !lagscope__json_check(text + i, n - i, &end)) return 0;
    lagscope__json_span v = {i, i + end};
    i = lagscope__json_skip_space(text, v.end, n);
    if (i >= n || (text[i] != ',' && text[i] != '}')) return 0;
    if (key_end - key_at == key_len + 2 && memcmp(text + key_at + 1, key, key_len) == 0) {
      *value = v;
      return 1;
    }
    if (text[i] == '}') return 0;
    i++;
  }
}

/* An integer's JSON text at span v of text into *out; 0 when it is none. F */
static int span_int(const char *text, lagscope__json_span v, int64_t *out) {
  char digits[24];
  size_t len = v.end - v.start;
  if (len == 0 || len >= sizeof(digits)) return 0;
  memcpy(digits, text + v.start, len);
  digits[len] = '\0';
  char *end = NULL;
  errno = 0;
  long long x = strtoll(digits, &end, 10);
  if (errno != 0 || *end != '\0') return 0;
  *out = x;
  return 1;
}

/* A first sample larger than this is none of lagscope's (a stack of 128 frames is ~40 KiB): a
 * planted one does not go into an event. */
#define FIRST_SAMPLE_MAX (256u * 1024u)

/* What the id ("<UTC stamp>-<pid>-<hang id>", make_id in hang_recorder.c) says of the hang. */
static void from_id(const char *id, lagscope__store_lost *l) {
  const char *dash = strchr(id, '-');
  if (dash == NULL) return;
  char *end = NULL;
  long long pid = strtoll(dash + 1, &end, 10);
  if (end == dash + 1 || *end != '-') return;
  const char *number = end + 1;
  unsigned long long hang = strtoull(number, &end, 10);
  if (end == number || *end != '\0' || *number == '-') return;
  l->pid = pid;
  l->hang_id = hang;
}

void lagscope__store_read_head(const char *text, size_t len, const char *stem,
                               lagscope__store_lost *l, char **first) {
  lagscope__json_span v;
  char id[LAGSCOPE__STORE_MAX_ID + 8];
  int64_t version = 0;
  *first = NULL;
  if (!whole_member(text, len, "schema_version", &v) || !span_int(text, v, &version) ||
      version != LAGSCOPE__REPORT_SCHEMA_VERSION || !whole_member(text, len, "id", &v) ||
      !lagscope__json_string_text(text + v.start, v.end - v.start, id, sizeof(id)) ||
      strcmp(id, stem) != 0)
    return; /* not the head of this id's report */
  int64_t wall = 0;
  if (whole_member(text, len, "start", &v) && text[v.start] == '{' &&
      span_int(text, lagscope__json_member_span(text, v, "wall_ms"), &wall) && wall >= 0)
    l->start_wall_ms = wall;
  /* A NUL inside (a raw byte in a string, which the check lets through) would cut the copy
   * short of the object it checked: such a sample is not told (fuzz_store found one). */
  if (whole_member(text, len, "first_sample", &v) && text[v.start] == '{' &&
      v.end - v.start <= FIRST_SAMPLE_MAX && memchr(text + v.start, '\0', v.end - v.start) == NULL) {
    *first = lagscope__alloc(v.end - v.start + 1);
    if (*first != NULL) {
      memcpy(*first, text + v.start, v.end - v.start);
      (*first)[v.end - v.start] = '\0';
    }
  }
}

/* The temporary file of <stem>.json holds no whole report: when <stem>.json is there, a
 * rewrite was cut short and the report as it was before is recovered (said in a log line);
 * otherwise the first write was, and what its head holds goes to lost(). Either way the file
 * is deleted once said (kept without lost()). A */
static void tell_cut_short(const recovery *rc, const char *name, const char *stem,
                           const char *temp, const char *path, const char *text, size_t len) {
  const lagscope__store *s = rc->s;
  struct stat st;
  if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    lagscope__log("report store: %s, a rewrite of %s cut short after %zu bytes by the "
                  "process's death, is deleted: the report as it was before is recovered",
                  path, name, len);
    unlinkat(s->dirfd, temp, 0);
    return;
  }
  if (rc->lost == NULL) return;
  lagscope__store_lost l = {.id = stem, .path = path, .start_wall_ms = -1, .bytes = len};
  from_id(stem, &l);
  char *first = NULL;
  if (text != NULL) lagscope__store_read_head(text, len, stem, &l, &first);
  if (l.start_wall_ms < 0 && !lagscope__utc_stamp_read(stem, &l.start_wall_ms))
    l.start_wall_ms = -1;
  l.first_sample = first;
  rc->lost(rc->ctx, &l);
  lagscope__dealloc(first);
  unlinkat(s->dirfd, temp, 0);
}

/* The temporary file that a write cut short left for <name> ("<id>.json"): a whole report is
 * the hang's latest, renamed over <name> and recovered from its text (*handled: <name> is
 * done); else it is told (tell_cut_short). A */
static int recover_temp(const recovery *rc, const char *name, int *handled) {
  const lagscope__store *s = rc->s;
  char temp[LAGSCOPE__STORE_MAX_ID + 16], path[LAGSCOPE__STORE_PATH_MAX],
      stem[LAGSCOPE__STORE_MAX_ID + 8], why[256];
  *handled = 0;
  lagscope__store_temp_name(name, temp);
  if (lagscope__store_path_join(path, sizeof(path), "%s/%s", s->dir, temp) != 0)
    return LAGSCOPE_OK;
  lagscope__store_report_stem(name, stem);
  /* Another instance of the app, alive, sharing the folder, may be writing it now: left to
   * a later start (a pid reused by another program only delays it). */
  lagscope__store_lost writer = {0};
  from_id(stem, &writer);
  if (writer.pid > 0 && writer.pid != (int64_t)getpid() &&
      (kill((pid_t)writer.pid, 0) == 0 || errno == EPERM))
    return LAGSCOPE_OK;
  char *text = NULL;
  size_t len = 0;
  int r =
      lagscope__store_read_at(s->dirfd, temp, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, &text, &len);
  if (r == LAGSCOPE_ENOENT) return LAGSCOPE_OK;
  if (r != 0) { /* not what a write of the store leaves: said, left alone */
    say_corrupt(rc, path, read_problem(r, why, sizeof(why)));
    return LAGSCOPE_OK;
  }
  int state;
  if (lagscope__store_check_report(text, len, stem, &state, why, sizeof(why)) != NULL) {
    tell_cut_short(rc, name, stem, temp, path, text, len);
    lagscope__dealloc(text);
    return LAGSCOPE_OK;
  }
  /* Whole: written and cut short before its rename. It is newer than <name>, if any. When it
   * cannot be renamed it is handed over all the same and found again next time. */
  char report_path[LAGSCOPE__STORE_PATH_MAX];
  int renamed = renameat(s->dirfd, temp, s->dirfd, name) == 0;
  if (renamed) fsync(s->dirfd); /* best effort: the rewrite below syncs it too */
  lagscope__store_path_join(report_path, sizeof(report_path), "%s/%s", s->dir, name);
  r = recover_text(rc, stem, renamed ? report_path : path, text, len, -1, 1);
  lagscope__dealloc(text);
  *handled = 1;
  return r;
}

int lagscope__store_recover(lagscope__store *s,
                            void (*found)(void *ctx, const char *id, const char *path,
                                          const char *json),
                            void (*corrupt)(void *ctx, const char *path, const char *why),
                            void (*lost)(void *ctx, const lagscope__store_lost *hang),
                            void *ctx, const _Atomic int *stop) {
  if (s == NULL) return LAGSCOPE_EINVAL;
  recovery rc = {s, found, corrupt, lost, ctx};
  int result = s->at_open_rc;
  const char *done = NULL; /* a report recovered from its temporary file (listed just before) */
  for (size_t i = 0; i < s->at_open.len; i++) {
    if (stop != NULL && atomic_load_explicit(stop, memory_order_relaxed)) break;
    const lagscope__store_listed *item = &s->at_open.items[i];
    int r = LAGSCOPE_OK, handled = 0;
    if (item->temp) {
      r = recover_temp(&rc, item->name, &handled);
      done = handled ? item->name : NULL;
    } else if (done == NULL || strcmp(done, item->name) != 0) {
      r = recover_file(&rc, item->name);
    }
    if (r != LAGSCOPE_OK) result = r;
  }
  lagscope__dealloc(s->at_open.items); /* once per open */
  memset(&s->at_open, 0, sizeof(s->at_open));
  s->at_open_rc = LAGSCOPE_OK;
  return result;
}
