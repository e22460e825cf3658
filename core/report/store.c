/* The report store: one JSON file per hang in a folder, written atomically and kept within
 * bounds; at start, reports a killed process left in progress are closed and handed over.
 * POSIX file calls only (these files build for Linux, macOS and iOS alike). Layout, atomicity
 * and recovery in docs/hang-report.md, "The store". This file: the store opened and closed,
 * a report written (temporary file, fsync, rename) or marked ended, and the bounds kept after
 * each write. The folder and its listing are in store_folder.c, the check of a report file and
 * the viewer's reading in store_check.c, recovery in store_recover.c (store.h).
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

#include "report/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    lagscope__explain(why, why_size, "cannot write in the report folder %s: %s", s->dir,
                      strerror(errno));
    return LAGSCOPE_ESYS;
  }
  close(fd);
  unlinkat(s->dirfd, probe, 0);
  return LAGSCOPE_OK;
}

int lagscope__store_open(const char *dir, uint32_t max_reports, uint64_t max_bytes,
                         lagscope__store **out, char *why, size_t why_size) {
  if (out != NULL) *out = NULL;
  if (out == NULL || dir == NULL || dir[0] == '\0') {
    lagscope__explain(why, why_size, "the report folder is not set");
    return LAGSCOPE_EINVAL;
  }
  /* Room for "/.<id>.json.tmp" after the folder. */
  if (strlen(dir) + LAGSCOPE__STORE_MAX_ID + 16 >= LAGSCOPE__STORE_PATH_MAX) {
    lagscope__explain(why, why_size,
                      "the report folder's path is too long (%zu bytes; at most %d)", strlen(dir),
                      LAGSCOPE__STORE_PATH_MAX - LAGSCOPE__STORE_MAX_ID - 17);
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

  int dirfd = -1;
  int rc = lagscope__folder_open(s->dir, 1, &dirfd, why, why_size);
  if (rc == LAGSCOPE_ENOENT) rc = LAGSCOPE_ESYS;
  s->dirfd = dirfd;
  if (rc == 0) rc = lagscope__owned_fd_take(&s->folder, dirfd);
  if (rc == 0) rc = probe_writable(s, why, why_size);
  if (rc != 0) {
    if (dirfd >= 0) close(dirfd);
    lagscope__dealloc(s);
    return rc;
  }
  /* What an earlier run left, listed before this start writes anything: the reports for
   * recovery (never one of this run's), and the temporary files of writes cut short. */
  s->at_open_rc = lagscope__store_list_dir(s->dirfd, s->dir, &s->at_open, 1, 0, NULL, 0);
  if (s->at_open.len > 1)
    lagscope__sort(s->at_open.items, s->at_open.len, sizeof(lagscope__store_listed),
                   lagscope__store_by_name);
  *out = s;
  return 0;
}

void lagscope__store_close(lagscope__store *s) {
  if (s == NULL) return;
  lagscope__owned_fd_close(&s->folder); /* never the app's file on a reused number */
  lagscope__dealloc(s->at_open.items);
  lagscope__dealloc(s->known);
  lagscope__dealloc(s);
}

/* The folder's descriptor, checked: when the app has closed its number or opened its own file
 * there, the number is left alone and the folder opened anew, with the same checks. 0, or
 * ESYS with why. The writer's (the monitor): recovery, running beside it at start, reads
 * s->dirfd as it is. A */
static int folder_ready(lagscope__store *s, char *why, size_t why_size) {
  if (lagscope__owned_fd_is_ours(&s->folder)) return LAGSCOPE_OK;
  int lost = s->folder.fd, dirfd = -1;
  s->folder = LAGSCOPE__OWNED_FD_NONE;
  int rc = lagscope__folder_open(s->dir, 1, &dirfd, why, why_size);
  if (rc == LAGSCOPE_OK) rc = lagscope__owned_fd_take(&s->folder, dirfd);
  if (rc != LAGSCOPE_OK) {
    if (dirfd >= 0) close(dirfd);
    char said[256];
    snprintf(said, sizeof(said), "%s", why != NULL ? why : "");
    lagscope__explain(why, why_size, "the app closed or reused the report folder's descriptor "
                      "%d, and the folder could not be opened again: %s", lost, said);
    return LAGSCOPE_ESYS;
  }
  s->dirfd = dirfd;
  s->reopened++;
  return LAGSCOPE_OK;
}

uint32_t lagscope__store_reopened(const lagscope__store *s) { return s != NULL ? s->reopened : 0; }
const char *lagscope__store_dir(const lagscope__store *s) { return s != NULL ? s->dir : ""; }

/* ---- bounds ------------------------------------------------------------------------------------ */

static int by_age(const void *a, const void *b) { /* oldest first; ties: by name */
  const lagscope__store_listed *x = a, *y = b;
  if (x->mtime != y->mtime) return x->mtime < y->mtime ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* What the bounds evict first: idle hangs' reports (not counted as hangs), then by age. */
static int by_eviction(const void *a, const void *b) {
  const lagscope__store_listed *x = a, *y = b;
  if (x->uncounted != y->uncounted) return x->uncounted ? -1 : 1;
  return by_age(a, b);
}

/* 1 when the file holds a whole, valid report of its name (*state: its state): checked before
 * a file is deleted, so that one that merely begins like a report stays. */
static int holds_report(int dirfd, const char *name, int *state) {
  char *text = NULL, stem[LAGSCOPE__STORE_MAX_ID + 8], why[256];
  size_t len = 0;
  if (lagscope__store_read_at(dirfd, name, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, &text, &len) != 0)
    return 0;
  lagscope__store_report_stem(name, stem);
  int valid = lagscope__store_check_report(text, len, stem, state, why, sizeof(why)) == NULL;
  lagscope__dealloc(text);
  return valid;
}

static int known_by_name(const void *a, const void *b) {
  return strcmp(((const lagscope__store_known *)a)->name, ((const lagscope__store_known *)b)->name);
}

/* What the last bounds learnt of f, when f has not changed since; NULL otherwise. F */
static const lagscope__store_known *known_before(const lagscope__store *s,
                                                 const lagscope__store_listed *f) {
  size_t low = 0, high = s->known_len;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    int order = strcmp(s->known[mid].name, f->name);
    if (order == 0) {
      const lagscope__store_known *k = &s->known[mid];
      return k->inode == f->inode && k->size == f->size && k->mtime == f->mtime ? k : NULL;
    }
    if (order < 0) low = mid + 1;
    else high = mid;
  }
  return NULL;
}

/* Whether each listed file holds a whole, valid report, and its state: from what the last
 * bounds learnt when the file has not changed, else read and checked now. Returns what is
 * known now (every listed file, by name; what is gone is forgotten), NULL without memory. A */
static lagscope__store_known *learn_files(const lagscope__store *s, lagscope__store_listing *l) {
  lagscope__store_known *now = lagscope__alloc_array(l->len > 0 ? l->len : 1, sizeof(*now));
  if (now == NULL) return NULL;
  for (size_t i = 0; i < l->len; i++) {
    lagscope__store_listed *f = &l->items[i];
    const lagscope__store_known *before = known_before(s, f);
    lagscope__store_known *k = &now[i];
    if (before != NULL) {
      *k = *before;
    } else {
      *k = (lagscope__store_known){.inode = f->inode, .size = f->size, .mtime = f->mtime};
      memcpy(k->name, f->name, sizeof(k->name));
      k->state = -1;
      k->valid = holds_report(s->dirfd, f->name, &k->state);
    }
    f->valid = k->valid, f->state = k->state;
  }
  if (l->len > 1) lagscope__sort(now, l->len, sizeof(*now), known_by_name);
  return now;
}

/* Deletes the report name, counted first in the evicted hangs' tally (store_tally.c): 1 when it
 * is gone. A */
static int evict(lagscope__store *s, const char *name) {
  char *text = NULL;
  size_t len = 0;
  int read = lagscope__store_read_at(s->dirfd, name, LAGSCOPE__STORE_MAX_FILE_BYTES, 1, &text,
                                     &len) == LAGSCOPE_OK;
  int gone = unlinkat(s->dirfd, name, 0) == 0 || errno == ENOENT;
  if (gone && read) lagscope__store_tally_add(s->dirfd, text, len);
  lagscope__dealloc(text);
  return gone;
}

/* Deletes reports while there are more than max_reports or more than max_bytes, idle hangs'
 * first (an idle hang never costs a hang its place), then the oldest; never keep (the file
 * just written), nor a report in progress: an earlier run's that recovery (on its own thread)
 * has not published yet, or a hang still going on. Only the store's own, whole, valid reports
 * count or go: a file that merely begins like one (truncated, planted), another name, a link
 * or a special file neither counts against the bounds nor goes, and each is read once, not at
 * every write (s->known). Best effort: the write itself has succeeded. The writer's alone. A */
static void enforce_bounds(lagscope__store *s, const char *keep) {
  if (s->max_reports == 0 && s->max_bytes == 0) return;
  lagscope__store_listing l = {0};
  lagscope__store_known *now = NULL;
  if (lagscope__store_list_dir(s->dirfd, s->dir, &l, 0, 1, NULL, 0) != 0 ||
      (now = learn_files(s, &l)) == NULL) {
    lagscope__dealloc(l.items);
    return;
  }
  lagscope__dealloc(s->known);
  s->known = now, s->known_len = s->known_capacity = l.len;
  uint64_t count = 0, bytes = 0;
  for (size_t i = 0; i < l.len; i++)
    if (l.items[i].valid) count++, bytes += l.items[i].size;
  if (l.len > 1) lagscope__sort(l.items, l.len, sizeof(lagscope__store_listed), by_eviction);
  for (size_t i = 0; i < l.len; i++) {
    int over = (s->max_reports != 0 && count > s->max_reports) ||
               (s->max_bytes != 0 && bytes > s->max_bytes);
    if (!over) break;
    const lagscope__store_listed *f = &l.items[i];
    if (!f->valid || f->state == LAGSCOPE__REPORT_IN_PROGRESS || strcmp(f->name, keep) == 0)
      continue;
    if (!evict(s, f->name)) continue;
    count--;
    bytes -= f->size;
  }
  lagscope__dealloc(l.items);
}

/* ---- write ------------------------------------------------------------------------------------- */

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

static _Atomic(lagscope__store_hook_fn) test_hook;

void lagscope__store_test_hook(lagscope__store_hook_fn fn) { atomic_store(&test_hook, fn); }

/* The test hook's word on a step: 0, or -1 with errno set to its. */
static int hooked(const char *step, const char *temp, int fd) {
  lagscope__store_hook_fn fn = atomic_load_explicit(&test_hook, memory_order_relaxed);
  int err = fn != NULL ? fn(step, temp, fd) : 0;
  if (err == 0) return 0;
  errno = err;
  return -1;
}

/* Writes json to the temporary file temp of the folder dirfd, syncs it and renames it to name:
 * 0, or -1 with errno and *step the call that failed ("create", "write", "sync", "close",
 * "rename"), the temporary file removed when it was made. O_EXCL and O_NOFOLLOW: a stale or
 * planted temporary file (a link, a FIFO) is removed, never written through. */
int lagscope__store_write_renamed(int dirfd, const char *temp, const char *name,
                                  const char *json, const char **step) {
  *step = "create";
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = hooked("create", temp, -1) == 0 ? openat(dirfd, temp, flags, 0600) : -1;
  if (fd < 0 && errno == EEXIST && unlinkat(dirfd, temp, 0) == 0)
    fd = openat(dirfd, temp, flags, 0600);
  int failed = fd < 0;
  if (!failed && (fchmod(fd, 0600) != 0 || hooked("write", temp, fd) != 0)) {
    /* whatever the umask: 0400 is the ended mark */
    int err = errno;
    close(fd);
    errno = err;
    failed = 1;
  } else if (!failed) {
    *step = "write";
    failed = write_all(fd, json, strlen(json)) != 0;
    if (!failed) *step = "sync", failed = hooked("sync", temp, fd) != 0 || fsync_retry(fd) != 0;
    int err = errno;
    if (close(fd) != 0 && !failed) *step = "close", failed = 1, err = errno;
    errno = err;
  }
  if (!failed)
    *step = "rename", failed = hooked("rename", temp, -1) != 0 ||
                               renameat(dirfd, temp, dirfd, name) != 0;
  if (failed) {
    int err = errno;
    if (fd >= 0) unlinkat(dirfd, temp, 0);
    errno = err;
    return -1;
  }
  return 0;
}

/* Writes <id>.json whole (a temporary file, synced, renamed over it, the folder synced): 0, or
 * EINVAL / ESYS with why; *keeps the file's name for the bounds. No bounds kept here. A */
static int write_report(const lagscope__store *s, const char *id, const char *json,
                        char *path_out, size_t path_size, char *name_out, char *why,
                        size_t why_size) {
  if (s == NULL || id == NULL || json == NULL) {
    lagscope__explain(why, why_size, "no store, report id or report text given");
    return LAGSCOPE_EINVAL;
  }
  if (!lagscope__store_valid_id(id)) {
    lagscope__explain(why, why_size,
            "invalid report id \"%.*s\": use 1 to %d of A-Z a-z 0-9 . _ -, not starting with "
            "'.' and without \"..\"",
            LAGSCOPE__STORE_MAX_ID, id, LAGSCOPE__STORE_MAX_ID);
    return LAGSCOPE_EINVAL;
  }
  char final_path[LAGSCOPE__STORE_PATH_MAX], name[LAGSCOPE__STORE_MAX_ID + 8],
      temp[LAGSCOPE__STORE_MAX_ID + 16];
  lagscope__store_path_join(name, sizeof(name), "%s.json", id);
  lagscope__store_temp_name(name, temp);
  /* open() checked the folder's length against the longest id. */
  lagscope__store_path_join(final_path, sizeof(final_path), "%s/%s", s->dir, name);
  if (path_out != NULL && strlen(final_path) >= path_size) {
    lagscope__explain(why, why_size,
                      "no room for the report's path (%zu bytes) in the caller's buffer",
                      strlen(final_path) + 1);
    return LAGSCOPE_EINVAL;
  }
  const char *step = NULL;
  if (lagscope__store_write_renamed(s->dirfd, temp, name, json, &step) != 0) {
    lagscope__explain(why, why_size,
                      "cannot %s the report %s (%s/%s): %s; the previous file, if any, is intact",
                      step, final_path, s->dir, temp, strerror(errno));
    return LAGSCOPE_ESYS;
  }
  /* The rename is durable once the folder is synced. Some file systems cannot sync a folder
   * (EINVAL, ENOTSUP): the file is there; nothing more can be done. */
  if (fsync_retry(s->dirfd) != 0 && errno != EINVAL && errno != ENOTSUP && errno != EBADF) {
    lagscope__explain(why, why_size,
                      "the report %s is written but its folder could not be synced: %s",
                      final_path, strerror(errno));
    if (path_out != NULL) snprintf(path_out, path_size, "%s", final_path);
    memcpy(name_out, name, sizeof(name));
    return LAGSCOPE_ESYS;
  }
  if (path_out != NULL) snprintf(path_out, path_size, "%s", final_path);
  memcpy(name_out, name, sizeof(name));
  return 0;
}

int lagscope__store_write(lagscope__store *s, const char *id, const char *json, char *path_out,
                          size_t path_size, char *why, size_t why_size) {
  char name[LAGSCOPE__STORE_MAX_ID + 8] = "";
  int rc = s != NULL ? folder_ready(s, why, why_size) : LAGSCOPE_OK;
  if (rc == LAGSCOPE_OK)
    rc = write_report(s, id, json, path_out, path_size, name, why, why_size);
  if (name[0] != '\0') enforce_bounds(s, name); /* written, if not synced */
  return rc;
}

int lagscope__store_rewrite(const lagscope__store *s, const char *id, const char *json,
                            char *path_out, size_t path_size, char *why, size_t why_size) {
  char name[LAGSCOPE__STORE_MAX_ID + 8];
  return write_report(s, id, json, path_out, path_size, name, why, why_size);
}



int lagscope__store_mark_ended(lagscope__store *s, const char *id, int64_t ended_wall_ms) {
  char name[LAGSCOPE__STORE_MAX_ID + 8];
  if (s == NULL || folder_ready(s, NULL, 0) != LAGSCOPE_OK || !lagscope__store_valid_id(id) ||
      lagscope__store_path_join(name, sizeof(name), "%s.json", id) != 0)
    return LAGSCOPE_EINVAL;
  struct timespec times[2] = {
      {.tv_nsec = UTIME_OMIT},
      {(time_t)(ended_wall_ms / 1000), (long)(ended_wall_ms % 1000) * 1000000L}};
  if (utimensat(s->dirfd, name, times, AT_SYMLINK_NOFOLLOW) != 0 ||
      fchmodat(s->dirfd, name, LAGSCOPE__STORE_MODE_ENDED, 0) != 0)
    return errno == ENOENT ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
  return LAGSCOPE_OK;
}
