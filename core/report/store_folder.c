/* The report folder, as the store reaches it: the folder opened component by component and
 * refused unless it is safe (lagscope__folder_open), a file read from it without following a
 * link or waiting on a FIFO (lagscope__folder_read, lagscope__store_read_at), the store's
 * names, and the listing of the files that are the store's (lagscope__store_list_dir).
 *
 *   <dir>/<id>.json          a report (id: [A-Za-z0-9._-], not starting with '.')
 *   <dir>/.<id>.json.tmp     a report being written; left behind only by a write the process's
 *                            death cut short, for recovery (store_recover.c)
 *
 * Part of the store (store.h); no state of its own. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* S_ISVTX on glibc */
#define _DARWIN_C_SOURCE /* O_DIRECTORY, O_NOFOLLOW beside _POSIX_C_SOURCE */

#include "report/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lagscope__store_path_join(char *out, size_t size, const char *format, ...) {
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

/* Steps from the folder fd (closed on the way) into its component name, opened as
 * open_component does and checked as the report folder itself when last, else as a folder
 * above it. Returns the component's fd, or -1 when it could not be opened; *problem says what
 * is wrong with it (left NULL when nothing), *rc is set to LAGSCOPE_ENOENT when it is missing. */
static int step_into(int fd, const char *name, int create, int last, const char **problem,
                     int *rc, char *reason, size_t reason_size) {
  int was_link = 0;
  int child = open_component(fd, name, create, &was_link);
  struct stat st;
  if (child < 0) {
    int err = errno;
    if (err == ENOENT) *rc = LAGSCOPE_ENOENT;
    if (err == EPERM && was_link)
      *problem = "is a symbolic link made by another user";
    else if (err == EACCES && fstatat(fd, name, &st, 0) == 0) /* say whose it is */
      *problem = last ? unsafe_folder(&st, reason, reason_size)
                      : unsafe_parent(&st, reason, reason_size);
    if (*problem == NULL) *problem = strerror(err == ELOOP ? ENOTDIR : err);
  } else if (fstat(child, &st) != 0) {
    *problem = strerror(errno);
  } else {
    *problem = last ? unsafe_folder(&st, reason, reason_size)
                    : unsafe_parent(&st, reason, reason_size);
  }
  close(fd);
  return child;
}

int lagscope__folder_open(const char *dir, int create, int *out, char *why, size_t why_size) {
  *out = -1;
  char path[LAGSCOPE__STORE_PATH_MAX], reason[160];
  if (dir == NULL || lagscope__store_path_join(path, sizeof(path), "%s", dir) != 0 ||
      path[0] == '\0') {
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
      fd = step_into(fd, p, create, last, &problem, &rc, reason, sizeof(reason));
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

/* ---- reading one file -------------------------------------------------------------------------- */

/* The file read whole or its first limit bytes (store.h). */
int lagscope__store_read_at(int dirfd, const char *name, size_t limit, int whole, char **text,
                            size_t *len) {
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
  size_t capacity =
      (uint64_t)st.st_size < limit ? (size_t)st.st_size + 1 : limit + (whole ? 1 : 0);
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
  return lagscope__store_read_at(dirfd, name, limit, 1, text, len);
}

/* ---- the store's names ------------------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int lagscope__store_valid_id(const char *id) {
  size_t len = strlen(id);
  if (len == 0 || len > LAGSCOPE__STORE_MAX_ID || id[0] == '.' || strstr(id, "..") != NULL)
    return 0;
  for (const char *p = id; *p != '\0'; p++)
    if (!lagscope__name_char(*p)) return 0;
  return 1;
}

/* "<id>.json" with a valid id: the store's own name pattern. */
static int is_report_name(const char *name) {
  size_t len = strlen(name);
  if (len >= sizeof(((lagscope__store_listed *)0)->name) || !ends_with(name, ".json")) return 0;
  char stem[LAGSCOPE__STORE_MAX_ID + 8];
  memcpy(stem, name, len - 5);
  stem[len - 5] = '\0';
  return lagscope__store_valid_id(stem);
}

/* ".<id>.json.tmp": a write of the store that did not finish. */
static int is_temp_name(const char *name) {
  size_t len = strlen(name);
  if (name[0] != '.' || !ends_with(name, ".json.tmp") ||
      len - 5 >= sizeof(((lagscope__store_listed *)0)->name))
    return 0;
  char report[LAGSCOPE__STORE_MAX_ID + 8];
  memcpy(report, name + 1, len - 5);
  report[len - 5] = '\0';
  return is_report_name(report);
}

/* The id of a report's file name ("<id>.json", which is_report_name checked). */
void lagscope__store_report_stem(const char *name, char stem[LAGSCOPE__STORE_MAX_ID + 8]) {
  size_t len = strlen(name) - strlen(".json");
  memcpy(stem, name, len);
  stem[len] = '\0';
}

/* ---- listing ----------------------------------------------------------------------------------- */

static int listing_push(lagscope__store_listing *l, const lagscope__store_listed *item) {
  void *items = l->items;
  if (lagscope__grow(&items, &l->capacity, l->len, sizeof(lagscope__store_listed), 64) !=
      LAGSCOPE_OK)
    return LAGSCOPE_ENOMEM;
  l->items = items;
  l->items[l->len++] = *item;
  return 0;
}

/* How every report the store writes begins (core/report/report_json.c puts these members
 * first, and a recovery's rewrite keeps every byte before them): a cheap sign that a file is
 * one of ours. *uncounted: the header goes on with "counted":false (an idle hang's report). */
#define UNCOUNTED_MEMBER ",\"counted\":false"
static int has_report_header(int dirfd, const char *name, int *uncounted) {
  char expected[LAGSCOPE__STORE_MAX_ID + 64];
  size_t stem = strlen(name) - strlen(".json");
  int n = snprintf(expected, sizeof(expected), "{\"schema_version\":%d,\"id\":\"%.*s\"",
                   LAGSCOPE__REPORT_SCHEMA_VERSION, (int)stem, name);
  char *text = NULL;
  size_t len = 0, more = strlen(UNCOUNTED_MEMBER);
  *uncounted = 0;
  if (n <= 0 || lagscope__store_read_at(dirfd, name, (size_t)n + more, 0, &text, &len) != 0)
    return 0;
  int ours = len >= (size_t)n && memcmp(text, expected, (size_t)n) == 0;
  *uncounted = ours && len == (size_t)n + more && memcmp(text + n, UNCOUNTED_MEMBER, more) == 0;
  lagscope__dealloc(text);
  return ours;
}

/* A walk of the folder for lagscope__store_list_dir (store.h). */
typedef struct list_walk {
  int dirfd, temps, own_only, rc;
  lagscope__store_listing *l;
} list_walk;

static int note_name(const char *name, void *ctx) {
  list_walk *w = ctx;
  struct stat st;
  if (w->temps && is_temp_name(name)) {
    if (fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return 1;
    lagscope__store_listed item = {.mtime = st.st_mtime, .size = (uint64_t)st.st_size,
                                   .inode = (uint64_t)st.st_ino, .temp = 1};
    size_t len = strlen(name) - strlen(".tmp") - 1; /* is_temp_name checked it fits */
    memcpy(item.name, name + 1, len);
    item.name[len] = '\0';
    w->rc = listing_push(w->l, &item);
    return w->rc == 0;
  }
  if (!is_report_name(name)) return 1;
  if (fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return 1;
  int uncounted = 0;
  if (w->own_only && ((uint64_t)st.st_size > LAGSCOPE__STORE_MAX_FILE_BYTES ||
                      !has_report_header(w->dirfd, name, &uncounted)))
    return 1;
  lagscope__store_listed item = {
      .mtime = st.st_mtime, .size = (uint64_t)st.st_size, .uncounted = uncounted,
      .inode = (uint64_t)st.st_ino};
  memcpy(item.name, name, strlen(name) + 1); /* is_report_name checked the length */
  w->rc = listing_push(w->l, &item);
  return w->rc == 0;
}

int lagscope__store_list_dir(int dirfd, const char *dir, lagscope__store_listing *l,
                             int temps, int own_only, char *why, size_t why_size) {
  list_walk w = {dirfd, temps, own_only, 0, l};
  int err = lagscope__folder_each_name(dirfd, note_name, &w);
  if (err != 0) {
    lagscope__explain(why, why_size, "cannot list the report folder %s: %s", dir, strerror(-err));
    return LAGSCOPE_ESYS;
  }
  if (w.rc != 0)
    lagscope__explain(why, why_size, "out of memory listing the report folder %s", dir);
  return w.rc;
}

int lagscope__store_by_name(const void *a, const void *b) {
  const lagscope__store_listed *x = a, *y = b;
  int order = strcmp(x->name, y->name);
  return order != 0 ? order : y->temp - x->temp;
}

void lagscope__store_temp_name(const char *name, char temp[LAGSCOPE__STORE_MAX_ID + 16]) {
  snprintf(temp, LAGSCOPE__STORE_MAX_ID + 16, ".%s.tmp", name);
}

