/* The report store: one JSON file per hang in a folder, written atomically and kept within
 * bounds; at start, reports a killed process left in progress are closed and handed over.
 * POSIX file calls only (this file builds for Linux, macOS and iOS alike). Layout, atomicity
 * and recovery in docs/hang-report.md, "The store".
 *
 *   <dir>/<id>.json          a report (id: [A-Za-z0-9._-], not starting with '.')
 *   <dir>/.<id>.json.tmp     a report being written; left behind only by an interrupted write
 *
 * Two threads may use one store: at start, recovery (a thread of its own) rewrites the reports
 * an earlier run left while the monitor writes new ones. Apart from recovery's own list of
 * what the folder held at open, a store does not change once open, and every file is written
 * whole by a rename: each thread sees a file whole or not at all. Bounds never delete a
 * report in progress, so none goes before recovery has published it; a report that bounds
 * delete as recovery reads it (an ended one: nothing to recover) is skipped. The viewer only
 * reads, through lagscope__store_list and _read. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* UTIME_OMIT on older glibc */
#define _DARWIN_C_SOURCE /* O_DIRECTORY, O_NOFOLLOW beside _POSIX_C_SOURCE */

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* A file larger than this is not one of ours (a report's tree is bounded well below). */
#define STORE_MAX_FILE_BYTES (16u * 1024u * 1024u)
#define STORE_MAX_ID 128
#define STORE_PATH_MAX 1024
/* A report whose final write failed (a full disk) is marked by its mode, which needs no space:
 * the store writes reports 0600. */
#define STORE_MODE_ENDED 0400

/* A report file found by listing the folder. */
typedef struct listed {
  char name[STORE_MAX_ID + 8];
  time_t mtime;
  uint64_t size;
  int uncounted; /* an idle hang's ("counted":false): evicted before any other */
} listed;

typedef struct listing {
  listed *items;
  size_t len, capacity;
} listing;

struct lagscope__store {
  char dir[STORE_PATH_MAX];
  int dirfd;            /* the folder, checked once: every file is opened relative to it */
  uint32_t max_reports; /* 0: no limit */
  uint64_t max_bytes;   /* 0: no limit */
  /* The files found at open, by name, for recovery alone (which empties it); the listing's
   * error, if it failed. */
  listing at_open;
  int at_open_rc;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int path_join(char *out, size_t size, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(out, size, format, args);
  va_end(args);
  return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* ---- the folder -------------------------------------------------------------------------------- */

/* A folder on the way to the report folder may belong to root or to us; one that others can
 * write must be sticky (as /tmp is), so that nobody else can rename our entries in it. */
static const char *unsafe_parent(const struct stat *st, char *why, size_t why_size) {
  if (!S_ISDIR(st->st_mode)) return strerror(ENOTDIR);
  if (st->st_uid != 0 && st->st_uid != geteuid()) {
    lagscope__explain(why, why_size, "belongs to another user (uid %ld)", (long)st->st_uid);
    return why;
  }
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st->st_mode & S_ISVTX) == 0) {
    lagscope__explain(why, why_size, "can be written by other users (mode %03o, not sticky)",
                      (unsigned)(st->st_mode & 07777));
    return why;
  }
  return NULL;
}

/* The report folder itself: ours, and nobody else may write in it. */
static const char *unsafe_folder(const struct stat *st, char *why, size_t why_size) {
  if (!S_ISDIR(st->st_mode)) return strerror(ENOTDIR);
  if (st->st_uid != geteuid()) {
    lagscope__explain(why, why_size, "belongs to another user (uid %ld, not %ld)",
                      (long)st->st_uid, (long)geteuid());
    return why;
  }
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    lagscope__explain(why, why_size, "can be written by other users (mode %03o; chmod go-w)",
                      (unsigned)(st->st_mode & 07777));
    return why;
  }
  return NULL;
}

/* Opens component name of the folder at, creating it (0700) when asked; a symbolic link is
 * followed only when root or we made it. Returns the fd or -1 with errno. */
static int open_component(int at, const char *name, int create, int *was_link) {
  struct stat st;
  *was_link = 0;
  if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT || !create) return -1;
    if (mkdirat(at, name, 0700) != 0 && errno != EEXIST) return -1;
    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  }
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW;
  if (S_ISLNK(st.st_mode)) {
    *was_link = 1;
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
      errno = EPERM;
      return -1;
    }
    flags &= ~O_NOFOLLOW;
  }
  return openat(at, name, flags);
}

int lagscope__folder_open(const char *dir, int create, int *out, char *why, size_t why_size) {
  *out = -1;
  char path[STORE_PATH_MAX], reason[160];
  if (dir == NULL || path_join(path, sizeof(path), "%s", dir) != 0 || path[0] == '\0') {
    lagscope__explain(why, why_size, "the folder path is empty or too long: %.80s",
                      dir != NULL ? dir : "(null)");
    return LAGSCOPE_EINVAL;
  }
  int fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot open the folder %s: %s", path, strerror(errno));
    return LAGSCOPE_ESYS;
  }
  /* Each component relative to the one before: nothing can swap a folder on the way. */
  char *p = path;
  while (*p == '/') p++;
  for (;;) {
    char *end = p + strcspn(p, "/");
    char *next = end;
    while (*next == '/') next++;
    int last = *next == '\0';
    char saved = *end;
    *end = '\0';
    const char *problem = NULL;
    int rc = LAGSCOPE_ESYS;
    if (*p != '\0' && strcmp(p, ".") != 0) {
      int was_link = 0;
      int child = open_component(fd, p, create, &was_link);
      struct stat st;
      if (child < 0) {
        int err = errno;
        if (err == ENOENT) rc = LAGSCOPE_ENOENT;
        if (err == EPERM && was_link)
          problem = "is a symbolic link made by another user";
        else if (err == EACCES && fstatat(fd, p, &st, 0) == 0) /* say whose it is */
          problem = last ? unsafe_folder(&st, reason, sizeof(reason))
                         : unsafe_parent(&st, reason, sizeof(reason));
        if (problem == NULL) problem = strerror(err == ELOOP ? ENOTDIR : err);
      } else if (fstat(child, &st) != 0) {
        problem = strerror(errno);
      } else {
        problem = last ? unsafe_folder(&st, reason, sizeof(reason))
                       : unsafe_parent(&st, reason, sizeof(reason));
      }
      close(fd);
      fd = child;
    } else if (last) {
      struct stat st;
      problem = fstat(fd, &st) != 0 ? strerror(errno) : unsafe_folder(&st, reason, sizeof(reason));
    }
    if (problem != NULL) {
      lagscope__explain(why, why_size, "%s the report folder %s: %s: %s",
                        rc == LAGSCOPE_ENOENT ? "cannot open" : "refusing", dir, path, problem);
      *end = saved;
      if (fd >= 0) close(fd);
      return rc;
    }
    *end = saved;
    if (last) break;
    p = next;
  }
  *out = fd;
  return LAGSCOPE_OK;
}

/* ---- open ------------------------------------------------------------------------------------ */

/* A probe file shows that the folder is writable (access() says yes to root on a read-only
 * mount). O_EXCL: a planted file or link of that name is removed, never written through. */
static int probe_writable(const lagscope__store *s, char *why, size_t why_size) {
  char probe[64];
  snprintf(probe, sizeof(probe), ".lagscope-probe-%ld", (long)getpid());
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = openat(s->dirfd, probe, flags, 0600);
  if (fd < 0 && errno == EEXIST && unlinkat(s->dirfd, probe, 0) == 0)
    fd = openat(s->dirfd, probe, flags, 0600);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot write in the report folder %s: %s", s->dir, strerror(errno));
    return LAGSCOPE_ESYS;
  }
  close(fd);
  unlinkat(s->dirfd, probe, 0);
  return LAGSCOPE_OK;
}

static int list_dir(int dirfd, const char *dir, listing *l, int remove_temps, int own_only,
                    char *why, size_t why_size);
static int by_name(const void *a, const void *b);

int lagscope__store_open(const char *dir, uint32_t max_reports, uint64_t max_bytes,
                         lagscope__store **out, char *why, size_t why_size) {
  if (out != NULL) *out = NULL;
  if (out == NULL || dir == NULL || dir[0] == '\0') {
    lagscope__explain(why, why_size, "the report folder is not set");
    return LAGSCOPE_EINVAL;
  }
  /* Room for "/.<id>.json.tmp" after the folder. */
  if (strlen(dir) + STORE_MAX_ID + 16 >= STORE_PATH_MAX) {
    lagscope__explain(why, why_size, "the report folder's path is too long (%zu bytes; at most %d)",
            strlen(dir), STORE_PATH_MAX - STORE_MAX_ID - 17);
    return LAGSCOPE_EINVAL;
  }
  lagscope__store *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) {
    lagscope__explain(why, why_size, "out of memory opening the report folder %s", dir);
    return LAGSCOPE_ENOMEM;
  }
  snprintf(s->dir, sizeof(s->dir), "%s", dir);
  size_t len = strlen(s->dir);
  while (len > 1 && s->dir[len - 1] == '/') s->dir[--len] = '\0';
  s->max_reports = max_reports;
  s->max_bytes = max_bytes;

  int rc = lagscope__folder_open(s->dir, 1, &s->dirfd, why, why_size);
  if (rc == LAGSCOPE_ENOENT) rc = LAGSCOPE_ESYS;
  if (rc == 0) rc = probe_writable(s, why, why_size);
  if (rc != 0) {
    if (s->dirfd >= 0) close(s->dirfd);
    lagscope__dealloc(s);
    return rc;
  }
  /* What an earlier run left, listed before this start writes anything: the reports for
   * recovery (never one of this run's), the temporary files of interrupted writes deleted. */
  s->at_open_rc = list_dir(s->dirfd, s->dir, &s->at_open, 1, 0, NULL, 0);
  if (s->at_open.len > 1) lagscope__sort(s->at_open.items, s->at_open.len, sizeof(listed), by_name);
  *out = s;
  return 0;
}

void lagscope__store_close(lagscope__store *s) {
  if (s == NULL) return;
  close(s->dirfd);
  lagscope__dealloc(s->at_open.items);
  lagscope__dealloc(s);
}

/* ---- reading one file -------------------------------------------------------------------------- */

/* Reads the regular file name in the folder dirfd, never following a link nor waiting on a
 * FIFO or device: at most limit bytes (*text NUL-terminated, lagscope__alloc). Returns 0;
 * LAGSCOPE_ENOENT; LAGSCOPE_EPARSE when it is not a regular file; LAGSCOPE_ELIMIT when larger
 * than limit (with whole) or, without whole, reads the first limit bytes only; LAGSCOPE_ESYS
 * (errno set). */
static int read_at(int dirfd, const char *name, size_t limit, int whole, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  struct stat before, st;
  if (fstatat(dirfd, name, &before, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
  if (!S_ISREG(before.st_mode)) return LAGSCOPE_EPARSE;
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno == ENOENT ? LAGSCOPE_ENOENT : errno == ELOOP ? LAGSCOPE_EPARSE : LAGSCOPE_ESYS;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return LAGSCOPE_ESYS;
  }
  if (!S_ISREG(st.st_mode)) { /* swapped since the fstatat */
    close(fd);
    return LAGSCOPE_EPARSE;
  }
  if (whole && (uint64_t)st.st_size > limit) {
    close(fd);
    return LAGSCOPE_ELIMIT;
  }
  size_t capacity = (uint64_t)st.st_size < limit ? (size_t)st.st_size + 1 : limit + (whole ? 1 : 0);
  char *buf = lagscope__alloc(capacity + 1);
  if (buf == NULL) {
    close(fd);
    errno = ENOMEM;
    return LAGSCOPE_ENOMEM;
  }
  size_t used = 0;
  while (used < capacity) {
    ssize_t n = read(fd, buf + used, capacity - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      lagscope__dealloc(buf);
      errno = err;
      return LAGSCOPE_ESYS;
    }
    if (n == 0) break;
    used += (size_t)n;
  }
  close(fd);
  if (whole && used > limit) { /* it grew meanwhile */
    lagscope__dealloc(buf);
    return LAGSCOPE_ELIMIT;
  }
  buf[used] = '\0';
  *text = buf;
  *len = used;
  return 0;
}

int lagscope__folder_read(int dirfd, const char *name, size_t limit, char **text, size_t *len) {
  return read_at(dirfd, name, limit, 1, text, len);
}

/* ---- listing ----------------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

static int valid_id(const char *id);

/* "<id>.json" with a valid id: the store's own name pattern. */
static int is_report_name(const char *name) {
  size_t len = strlen(name);
  if (len >= sizeof(((listed *)0)->name) || !ends_with(name, ".json")) return 0;
  char stem[STORE_MAX_ID + 8];
  memcpy(stem, name, len - 5);
  stem[len - 5] = '\0';
  return valid_id(stem);
}

/* ".<id>.json.tmp": a write of the store that did not finish. */
static int is_temp_name(const char *name) {
  size_t len = strlen(name);
  if (name[0] != '.' || !ends_with(name, ".json.tmp") || len - 5 >= sizeof(((listed *)0)->name))
    return 0;
  char report[STORE_MAX_ID + 8];
  memcpy(report, name + 1, len - 5);
  report[len - 5] = '\0';
  return is_report_name(report);
}

static int listing_push(listing *l, const listed *item) {
  void *items = l->items;
  if (lagscope__grow(&items, &l->capacity, l->len, sizeof(listed), 64) != LAGSCOPE_OK)
    return LAGSCOPE_ENOMEM;
  l->items = items;
  l->items[l->len++] = *item;
  return 0;
}

/* How every report the store writes begins (core/report/report_json.c puts these members first, and a
 * recovery's rewrite keeps every byte before them): a cheap sign that a file is one of ours.
 * *uncounted: the header goes on with "counted":false (an idle hang's report). */
#define UNCOUNTED_MEMBER ",\"counted\":false"
static int has_report_header(int dirfd, const char *name, int *uncounted) {
  char expected[STORE_MAX_ID + 64];
  size_t stem = strlen(name) - strlen(".json");
  int n = snprintf(expected, sizeof(expected), "{\"schema_version\":%d,\"id\":\"%.*s\"",
                   LAGSCOPE__REPORT_SCHEMA_VERSION, (int)stem, name);
  char *text = NULL;
  size_t len = 0, more = strlen(UNCOUNTED_MEMBER);
  *uncounted = 0;
  if (n <= 0 || read_at(dirfd, name, (size_t)n + more, 0, &text, &len) != 0) return 0;
  int ours = len >= (size_t)n && memcmp(text, expected, (size_t)n) == 0;
  *uncounted = ours && len == (size_t)n + more && memcmp(text + n, UNCOUNTED_MEMBER, more) == 0;
  lagscope__dealloc(text);
  return ours;
}

/* The files with the store's name pattern in the folder: regular files (not followed), within
 * the size bound; with own_only, only those that begin as a report does. With remove_temps,
 * the store's stale temporary files are deleted on the way. */
typedef struct list_walk {
  int dirfd, remove_temps, own_only, rc;
  listing *l;
} list_walk;

static int note_name(const char *name, void *ctx) {
  list_walk *w = ctx;
  struct stat st;
  if (w->remove_temps && is_temp_name(name)) {
    if (fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      unlinkat(w->dirfd, name, 0);
    return 1;
  }
  if (!is_report_name(name)) return 1;
  if (fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return 1;
  int uncounted = 0;
  if (w->own_only && ((uint64_t)st.st_size > STORE_MAX_FILE_BYTES ||
                      !has_report_header(w->dirfd, name, &uncounted)))
    return 1;
  listed item = {.mtime = st.st_mtime, .size = (uint64_t)st.st_size, .uncounted = uncounted};
  memcpy(item.name, name, strlen(name) + 1); /* is_report_name checked the length */
  w->rc = listing_push(w->l, &item);
  return w->rc == 0;
}

static int list_dir(int dirfd, const char *dir, listing *l, int remove_temps, int own_only,
                    char *why, size_t why_size) {
  list_walk w = {dirfd, remove_temps, own_only, 0, l};
  int err = lagscope__folder_each_name(dirfd, note_name, &w);
  if (err != 0) {
    lagscope__explain(why, why_size, "cannot list the report folder %s: %s", dir, strerror(-err));
    return LAGSCOPE_ESYS;
  }
  if (w.rc != 0) lagscope__explain(why, why_size, "out of memory listing the report folder %s", dir);
  return w.rc;
}

static int by_age(const void *a, const void *b) { /* oldest first; ties: by name */
  const listed *x = a, *y = b;
  if (x->mtime != y->mtime) return x->mtime < y->mtime ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* What the bounds evict first: idle hangs' reports (not counted as hangs), then by age. */
static int by_eviction(const void *a, const void *b) {
  const listed *x = a, *y = b;
  if (x->uncounted != y->uncounted) return x->uncounted ? -1 : 1;
  return by_age(a, b);
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const listed *)a)->name, ((const listed *)b)->name);
}

static const char *check_report(const char *text, size_t len, const char *stem, int *state,
                                char *why, size_t why_size);

/* The id of a report's file name ("<id>.json", which is_report_name checked). */
static void report_stem(const char *name, char stem[STORE_MAX_ID + 8]) {
  size_t len = strlen(name) - strlen(".json");
  memcpy(stem, name, len);
  stem[len] = '\0';
}

/* 1 when the file holds a whole, valid report of its name (*state: its state): checked before
 * a file is deleted, so that one that merely begins like a report stays. */
static int holds_report(int dirfd, const char *name, int *state) {
  char *text = NULL, stem[STORE_MAX_ID + 8], why[256];
  size_t len = 0;
  if (read_at(dirfd, name, STORE_MAX_FILE_BYTES, 1, &text, &len) != 0) return 0;
  report_stem(name, stem);
  int valid = check_report(text, len, stem, state, why, sizeof(why)) == NULL;
  lagscope__dealloc(text);
  return valid;
}

/* Deletes reports while there are more than max_reports or more than max_bytes, idle hangs'
 * first (an idle hang never costs a hang its place), then the oldest; never keep (the file
 * just written), nor a report in progress: an earlier run's that recovery (on its own thread)
 * has not published yet, or a hang still going on. Only the store's own reports count or go:
 * files of another name, links, special files and files that are not whole reports stay
 * untouched. Best effort: the write itself has succeeded. */
static void enforce_bounds(const lagscope__store *s, const char *keep) {
  if (s->max_reports == 0 && s->max_bytes == 0) return;
  listing l = {0};
  if (list_dir(s->dirfd, s->dir, &l, 0, 1, NULL, 0) != 0) {
    lagscope__dealloc(l.items);
    return;
  }
  uint64_t count = l.len, bytes = 0;
  for (size_t i = 0; i < l.len; i++) bytes += l.items[i].size;
  if (l.len > 1) lagscope__sort(l.items, l.len, sizeof(listed), by_eviction);
  for (size_t i = 0; i < l.len; i++) {
    int over = (s->max_reports != 0 && count > s->max_reports) ||
               (s->max_bytes != 0 && bytes > s->max_bytes);
    if (!over) break;
    if (strcmp(l.items[i].name, keep) == 0) continue;
    int state = -1;
    int report = holds_report(s->dirfd, l.items[i].name, &state);
    if (report && state == LAGSCOPE__REPORT_IN_PROGRESS) continue;
    if (report && unlinkat(s->dirfd, l.items[i].name, 0) != 0 && errno != ENOENT) continue;
    count--; /* deleted, or not a report: not counted either way */
    bytes -= l.items[i].size;
  }
  lagscope__dealloc(l.items);
}

/* ---- write ------------------------------------------------------------------------------------- */

static int valid_id(const char *id) {
  size_t len = strlen(id);
  if (len == 0 || len > STORE_MAX_ID || id[0] == '.' || strstr(id, "..") != NULL) return 0;
  for (const char *p = id; *p != '\0'; p++)
    if (!lagscope__name_char(*p)) return 0;
  return 1;
}

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) { /* no progress and no error: call it a full disk */
      errno = ENOSPC;
      return -1;
    }
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

static int fsync_retry(int fd) {
  int r;
  do r = fsync(fd);
  while (r != 0 && errno == EINTR);
  return r;
}

int lagscope__store_write(const lagscope__store *s, const char *id, const char *json,
                          char *path_out, size_t path_size, char *why, size_t why_size) {
  if (s == NULL || id == NULL || json == NULL) {
    lagscope__explain(why, why_size, "no store, report id or report text given");
    return LAGSCOPE_EINVAL;
  }
  if (!valid_id(id)) {
    lagscope__explain(why, why_size,
            "invalid report id \"%.*s\": use 1 to %d of A-Z a-z 0-9 . _ -, not starting with "
            "'.' and without \"..\"",
            STORE_MAX_ID, id, STORE_MAX_ID);
    return LAGSCOPE_EINVAL;
  }
  char final_path[STORE_PATH_MAX], name[STORE_MAX_ID + 8], temp[STORE_MAX_ID + 16];
  path_join(name, sizeof(name), "%s.json", id);
  path_join(temp, sizeof(temp), ".%s.tmp", name);
  /* open() checked the folder's length against the longest id. */
  path_join(final_path, sizeof(final_path), "%s/%s", s->dir, name);
  if (path_out != NULL && strlen(final_path) >= path_size) {
    lagscope__explain(why, why_size, "no room for the report's path (%zu bytes) in the caller's buffer",
            strlen(final_path) + 1);
    return LAGSCOPE_EINVAL;
  }

  /* O_EXCL and O_NOFOLLOW: a stale or planted temporary file (a link, a FIFO) is removed,
   * never written through. */
  const char *step = "create";
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = openat(s->dirfd, temp, flags, 0600);
  if (fd < 0 && errno == EEXIST && unlinkat(s->dirfd, temp, 0) == 0)
    fd = openat(s->dirfd, temp, flags, 0600);
  int failed = fd < 0;
  if (!failed) failed = fchmod(fd, 0600) != 0; /* whatever the umask: 0400 is the ended mark */
  if (!failed) {
    step = "write";
    failed = write_all(fd, json, strlen(json)) != 0;
    if (!failed) step = "sync", failed = fsync_retry(fd) != 0;
    int err = errno;
    if (close(fd) != 0 && !failed) step = "close", failed = 1, err = errno;
    errno = err;
  }
  if (!failed) step = "rename", failed = renameat(s->dirfd, temp, s->dirfd, name) != 0;
  if (failed) {
    int err = errno;
    if (fd >= 0) unlinkat(s->dirfd, temp, 0);
    lagscope__explain(why, why_size, "cannot %s the report %s (%s/%s): %s; the previous file, if any, is intact",
            step, final_path, s->dir, temp, strerror(err));
    return LAGSCOPE_ESYS;
  }
  /* The rename is durable once the folder is synced. Some file systems cannot sync a folder
   * (EINVAL, ENOTSUP): the file is there; nothing more can be done. */
  if (fsync_retry(s->dirfd) != 0 && errno != EINVAL && errno != ENOTSUP && errno != EBADF) {
    lagscope__explain(why, why_size, "the report %s is written but its folder could not be synced: %s",
            final_path, strerror(errno));
    enforce_bounds(s, name);
    if (path_out != NULL) snprintf(path_out, path_size, "%s", final_path);
    return LAGSCOPE_ESYS;
  }
  enforce_bounds(s, name);
  if (path_out != NULL) snprintf(path_out, path_size, "%s", final_path);
  return 0;
}

int lagscope__store_mark_ended(lagscope__store *s, const char *id, int64_t ended_wall_ms) {
  char name[STORE_MAX_ID + 8];
  if (s == NULL || !valid_id(id) || path_join(name, sizeof(name), "%s.json", id) != 0)
    return LAGSCOPE_EINVAL;
  struct timespec times[2] = {{.tv_nsec = UTIME_OMIT},
                              {(time_t)(ended_wall_ms / 1000), (long)(ended_wall_ms % 1000) * 1000000L}};
  if (utimensat(s->dirfd, name, times, AT_SYMLINK_NOFOLLOW) != 0 ||
      fchmodat(s->dirfd, name, STORE_MODE_ENDED, 0) != 0)
    return errno == ENOENT ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
  return LAGSCOPE_OK;
}

/* ---- recover ----------------------------------------------------------------------------------- */

/* ---- reading, for the viewer ------------------------------------------------------------------- */

static int by_name_descending(const void *a, const void *b) { return -by_name(a, b); }

int lagscope__store_list(const char *dir, lagscope__store_entry **entries, size_t *count) {
  *entries = NULL;
  *count = 0;
  listing l = {0};
  char why[256];
  int dirfd = -1;
  int rc = lagscope__folder_open(dir, 0, &dirfd, why, sizeof(why));
  if (rc == LAGSCOPE_ENOENT) return 0; /* no folder yet: no report yet */
  if (rc != 0) return rc;
  rc = list_dir(dirfd, dir, &l, 0, 1, why, sizeof(why));
  close(dirfd);
  if (rc != 0 || l.len == 0) {
    lagscope__dealloc(l.items);
    return rc;
  }
  lagscope__sort(l.items, l.len, sizeof(listed), by_name_descending); /* ids start with the UTC time */
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
  char name[STORE_MAX_ID + 8], why[256];
  if (!valid_id(id) || path_join(name, sizeof(name), "%s.json", id) != 0) return LAGSCOPE_ENOENT;
  int dirfd = -1;
  int rc = lagscope__folder_open(dir, 0, &dirfd, why, sizeof(why));
  if (rc != 0) return rc;
  rc = read_at(dirfd, name, STORE_MAX_FILE_BYTES, 1, text, len);
  close(dirfd);
  if (rc != 0) return rc;
  if (lagscope__store_check(*text, *len, id, why, sizeof(why)) == NULL) return LAGSCOPE_OK;
  lagscope__dealloc(*text); /* not a report: the viewer serves only what the store would keep */
  *text = NULL;
  *len = 0;
  return LAGSCOPE_EPARSE;
}

/* Text a JSON parser should see: no NUL and no control characters outside strings' escapes
 * (JSON allows only tab, newline and carriage return between tokens, and none raw in strings). */
static int looks_binary(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return 1;
  }
  return 0;
}

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

/* Why a report file is unusable, or NULL when it is fine (*state is then its state). Checked
 * in place (core/base/json_check.c), never built as a cJSON tree: every stored report is read at
 * each start. Members are found by their bytes: a key written with escapes is not read. */
static const char *check_report(const char *text, size_t len, const char *stem, int *state,
                                char *why, size_t why_size) {
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
  char id[STORE_MAX_ID + 1], state_name[32];
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
                      STORE_MAX_ID, id, stem);
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
  return valid_id(id) ? check_report(text, len, id, &state, why, why_size)
                      : "has a name that is not a report id";
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
  *problem = valid_id(id) ? check_report(text, len, id, &state, why, why_size)
                          : "has a name that is not a report id";
  if (*problem != NULL) return LAGSCOPE_EPARSE;
  if (state != LAGSCOPE__REPORT_IN_PROGRESS) return LAGSCOPE_OK;
  *updated = ended_wall_ms >= 0 ? ended_text(text, ended_wall_ms) : terminated_text(text);
  if (*updated == NULL) return LAGSCOPE_ENOMEM;
  /* The rewrite must leave a final report: checked as the next start will. */
  *problem = check_report(*updated, strlen(*updated), id, &state, why, why_size);
  if (*problem != NULL || state == LAGSCOPE__REPORT_IN_PROGRESS) {
    lagscope__dealloc(*updated);
    *updated = NULL;
    *problem = "is a report in progress whose state the store cannot rewrite";
    return LAGSCOPE_EPARSE;
  }
  return LAGSCOPE_OK;
}

/* Recovers one listed file: a report in progress is rewritten as ended (by termination, or at
 * its mtime when its mode marks it) and handed to found(); a file that is no report goes to
 * corrupt() with a sentence and stays as it is. A */
static int recover_file(const lagscope__store *s, const char *name,
                        void (*found)(void *ctx, const char *id, const char *path,
                                      const char *json),
                        void (*corrupt)(void *ctx, const char *path, const char *why),
                        void *ctx) {
  char path[STORE_PATH_MAX], stem[STORE_MAX_ID + 8], why[256], sentence[300];
  if (path_join(path, sizeof(path), "%s/%s", s->dir, name) != 0) return LAGSCOPE_OK;
  report_stem(name, stem);

  /* Marked when the hang's final write failed: it ended, it was not terminated. */
  struct stat st;
  int64_t ended_wall_ms = -1;
  if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (st.st_mode & 0777) == STORE_MODE_ENDED)
    ended_wall_ms = (int64_t)st.st_mtime * 1000;

  char *text = NULL, *updated = NULL;
  size_t len = 0;
  const char *problem = NULL;
  int r = read_at(s->dirfd, name, STORE_MAX_FILE_BYTES, 1, &text, &len);
  if (r == LAGSCOPE_ENOENT) return LAGSCOPE_OK; /* removed meanwhile (bounds of a write) */
  if (r == LAGSCOPE_ELIMIT) {
    lagscope__explain(why, sizeof(why), "is too large to be a report (over %u MiB)",
                      STORE_MAX_FILE_BYTES / (1024u * 1024u));
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
  char written[STORE_PATH_MAX];
  int rc = lagscope__store_write(s, stem, updated, written, sizeof(written), why, sizeof(why));
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
