/* The report store: folder creation and its errors, atomic writes that keep the old file when
 * the disk is "full" (RLIMIT_FSIZE: portable, and it stops root too, unlike chmod), bounds by
 * count and bytes, recovery of reports left in progress, corrupt files of every kind, invalid
 * ids, stale temporary files, and a report from report_json.c going through the whole cycle. */
#define _POSIX_C_SOURCE 200809L

#include "cases.h"
#include "check.h"
#include "test_files.h"
#include "internal.h"
#include "report/store.h" /* what the bounds learnt */

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[256];

/* ---- file helpers ---- */

/* The whole file, NUL-terminated (malloc); NULL when missing. */
static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  CHECK(fread(text, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  text[size] = '\0';
  if (len != NULL) *len = (size_t)size;
  return text;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The folder's entries, the evicted hangs' tally left out (the bounds write it as they delete). */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
        strcmp(e->d_name, LAGSCOPE__STORE_TALLY) != 0)
      n++;
  closedir(d);
  return n;
}

static void set_mtime(const char *dir, const char *name, time_t when) {
  char path[512];
  test_path_in(path, sizeof(path), dir, name);
  struct timespec times[2] = {{when, 0}, {when, 0}};
  CHECK_MSG(utimensat(AT_FDCWD, path, times, 0) == 0, "utimensat %s: %s", path, strerror(errno));
}

static void make_dir(char *out, size_t size, const char *name) {
  test_path_in(out, size, root, name);
  CHECK(mkdir(out, 0700) == 0);
}

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char child[512];
      test_path_in(child, sizeof(child), path, e->d_name);
      remove_tree(child);
    }
    if (d != NULL) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* A report-shaped document of about size bytes. */
static char *report_text(const char *id, const char *state, size_t size) {
  char *text = malloc(size + 256);
  int n = snprintf(text, 256,
                   "{\"schema_version\":1,\"id\":\"%s\",\"state\":\"%s\","
                   "\"start\":{\"monotonic_ns\":18446744073709551615},\"pad\":\"",
                   id, state);
  size_t at = (size_t)n;
  while (at + 2 < size) text[at++] = 'x';
  text[at++] = '"', text[at++] = '}', text[at] = '\0';
  return text;
}

static void store_write_ok(lagscope__store *s, const char *id, const char *json) {
  char path[512], why[256] = "";
  int rc = lagscope__store_write(s, id, json, path, sizeof(path), why, sizeof(why));
  CHECK_MSG(rc == 0, "write %s: %d: %s", id, rc, why);
}

/* ---- tests ---- */

static void test_open(void) {
  char dir[512], why[512];
  lagscope__store *s = NULL;
  test_path_in(dir, sizeof(dir), root, "open/a/b/c/");
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), 0);
  CHECK(s != NULL);
  lagscope__store_close(s);
  struct stat st;
  test_path_in(dir, sizeof(dir), root, "open/a/b/c");
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_EQ_INT(st.st_mode & 0777, 0700);
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), 0); /* exists: fine */
  lagscope__store_close(s);

  /* A parent that is a regular file. */
  char file[512];
  test_path_in(file, sizeof(file), root, "open/plain");
  test_write_bytes(file, "x", 1);
  test_path_in(dir, sizeof(dir), file, "reports");
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), LAGSCOPE_ESYS);
  CHECK(s == NULL);
  printf("parent is a file: %s\n", why);
  CHECK(strstr(why, file) != NULL && strstr(why, strerror(ENOTDIR)) != NULL);
  /* The folder itself a regular file. */
  CHECK_EQ_INT(lagscope__store_open(file, 10, 0, &s, why, sizeof(why)), LAGSCOPE_ESYS);
  printf("folder is a file: %s\n", why);
  CHECK(strstr(why, file) != NULL && strstr(why, strerror(ENOTDIR)) != NULL);
  /* Not writable: chmod stops everyone but root. */
  if (geteuid() != 0) {
    test_path_in(dir, sizeof(dir), root, "open/readonly");
    CHECK(mkdir(dir, 0500) == 0);
    CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), LAGSCOPE_ESYS);
    printf("read-only folder: %s\n", why);
    CHECK(strstr(why, dir) != NULL && strstr(why, strerror(EACCES)) != NULL);
    chmod(dir, 0700);
  }
  CHECK_EQ_INT(lagscope__store_open("", 10, 0, &s, why, sizeof(why)), LAGSCOPE_EINVAL);
  CHECK_EQ_INT(lagscope__store_open(NULL, 10, 0, &s, NULL, 0), LAGSCOPE_EINVAL);
  printf("open: ok\n");
}

static void test_write_and_ids(void) {
  char dir[512], path[512], why[512];
  make_dir(dir, sizeof(dir), "write");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), 0);
  const char *first = "{\"schema_version\":1,\"id\":\"r-1.x_Y\",\"state\":\"in_progress\"}";
  CHECK_EQ_INT(lagscope__store_write(s, "r-1.x_Y", first, path, sizeof(path), why, sizeof(why)), 0);
  char expected[512];
  test_path_in(expected, sizeof(expected), dir, "r-1.x_Y.json");
  CHECK(strcmp(path, expected) == 0);
  char *text = read_text(path, NULL);
  CHECK(text != NULL && strcmp(text, first) == 0);
  free(text);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
  const char *second = "{\"schema_version\":1,\"id\":\"r-1.x_Y\",\"state\":\"ended\"}";
  CHECK_EQ_INT(lagscope__store_write(s, "r-1.x_Y", second, path, sizeof(path), why, sizeof(why)), 0);
  text = read_text(path, NULL);
  CHECK(strcmp(text, second) == 0);
  free(text);
  CHECK_EQ_INT(count_entries(dir), 1); /* no temporary file left */

  char long_id[200];
  memset(long_id, 'a', sizeof(long_id) - 1);
  long_id[sizeof(long_id) - 1] = '\0';
  const char *bad[] = {"", "..", "a..b", "../x", "a/b", "/abs", ".hidden", "a b", "caf\xc3\xa9",
                       "x\n", long_id};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    why[0] = '\0';
    CHECK_EQ_INT(lagscope__store_write(s, bad[i], first, path, sizeof(path), why, sizeof(why)),
                 LAGSCOPE_EINVAL);
    CHECK(strstr(why, "invalid report id") != NULL);
  }
  printf("invalid id: %s\n", why);
  CHECK_EQ_INT(count_entries(dir), 1);
  /* A path buffer too small: refused before anything is written. */
  char small[8];
  CHECK_EQ_INT(lagscope__store_write(s, "other", first, small, sizeof(small), why, sizeof(why)),
               LAGSCOPE_EINVAL);
  CHECK_EQ_INT(count_entries(dir), 1);
  CHECK_EQ_INT(lagscope__store_write(s, "nopath", first, NULL, 0, NULL, 0), 0);
  CHECK_EQ_INT(count_entries(dir), 2);
  lagscope__store_close(s);
  printf("write and ids: ok\n");
}

/* A full disk, a vanished folder, a name taken by a folder: each fails cleanly and the
 * previous report is intact, with no temporary file left. */
static void test_write_failures(void) {
  char dir[512], path[512], temp[512], why[512];
  make_dir(dir, sizeof(dir), "full");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), 0);
  char *old = report_text("keep", "in_progress", 300);
  store_write_ok(s, "keep", old);

  struct rlimit saved, limit;
  CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  limit = saved;
  limit.rlim_cur = 4096;
  signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  char *big = report_text("keep", "ended", 64 * 1024);
  int rc = lagscope__store_write(s, "keep", big, path, sizeof(path), why, sizeof(why));
  CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  CHECK_EQ_INT(rc, LAGSCOPE_ESYS);
  printf("full disk: %s\n", why);
  CHECK(strstr(why, strerror(EFBIG)) != NULL && strstr(why, "keep.json") != NULL);
  test_path_in(path, sizeof(path), dir, "keep.json");
  test_path_in(temp, sizeof(temp), dir, ".keep.json.tmp");
  char *now = read_text(path, NULL);
  CHECK(now != NULL && strcmp(now, old) == 0);
  free(now);
  CHECK(!exists(temp));
  CHECK_EQ_INT(count_entries(dir), 1);

  /* The target name is a folder: rename fails. */
  char taken[512];
  test_path_in(taken, sizeof(taken), dir, "taken.json");
  CHECK(mkdir(taken, 0700) == 0);
  char inside[512];
  test_path_in(inside, sizeof(inside), taken, "x");
  test_write_bytes(inside, "x", 1);
  rc = lagscope__store_write(s, "taken", old, path, sizeof(path), why, sizeof(why));
  CHECK_EQ_INT(rc, LAGSCOPE_ESYS);
  printf("name taken by a folder: %s\n", why);
  CHECK(strstr(why, "rename") != NULL);
  test_path_in(temp, sizeof(temp), dir, ".taken.json.tmp");
  CHECK(!exists(temp) && exists(inside));

  /* The folder moved and a file put in its place: the store keeps writing in the folder it
   * opened and checked (every file relative to its fd), never in what now has the name. */
  char moved[512], moved_keep[512];
  test_path_in(moved, sizeof(moved), root, "full-moved");
  CHECK(rename(dir, moved) == 0);
  test_write_bytes(dir, "not a folder", 12);
  rc = lagscope__store_write(s, "keep", big, path, sizeof(path), why, sizeof(why));
  CHECK_MSG(rc == 0, "write after the folder moved: %s", why);
  test_path_in(moved_keep, sizeof(moved_keep), moved, "keep.json");
  now = read_text(moved_keep, NULL);
  CHECK(now != NULL && strcmp(now, big) == 0);
  free(now);
  now = read_text(dir, NULL);
  CHECK(now != NULL && strcmp(now, "not a folder") == 0);
  free(now);
  unlink(dir);
  CHECK(rename(moved, dir) == 0);

  free(old);
  free(big);
  lagscope__store_close(s);
  printf("write failures: ok\n");
}

/* A small valid report under id: what the bounds count. */
static void store_report_ok(lagscope__store *s, const char *id, size_t size) {
  char *text = report_text(id, "ended", size);
  store_write_ok(s, id, text);
  free(text);
}

/* A report of the signature sig, duration_ms ms, started at wall_ms, for the tally. */
static char *signed_report(const char *id, const char *sig, double ms, long long wall_ms) {
  char *text = malloc(512);
  snprintf(text, 512,
           "{\"schema_version\":1,\"id\":\"%s\",\"state\":\"ended\",\"start\":{\"wall_ms\":%lld},"
           "\"duration_ms\":%.3f,\"cause\":{\"kind\":\"sleep\",\"label\":\"sleep \\u00b7 nap\"},"
           "\"signature\":\"%s\"}",
           id, wall_ms, ms, sig);
  return text;
}

typedef struct tallied_seen {
  int lines;
  lagscope__store_tallied sig, none; /* the signature's line, the "-" line (strings dropped) */
  char label[64];
} tallied_seen;

static void tally_seen(void *ctx, const lagscope__store_tallied *t) {
  tallied_seen *seen = ctx;
  seen->lines++;
  if (t->signature == NULL) {
    seen->none = *t;
    return;
  }
  seen->sig = *t;
  snprintf(seen->label, sizeof(seen->label), "%s", t->label != NULL ? t->label : "");
}

/* Each report the bounds delete is counted in the evicted hangs' tally, by its signature: the
 * viewer's lists count every hang (issue 44). */
static void test_bounds_tally(void) {
  char dir[512], why[512];
  make_dir(dir, sizeof(dir), "tally");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 2, 0, &s, why, sizeof(why)), 0);
  const char *sig = "0123456789abcdef";
  char planted[512]; /* a file of that name that is no tally: written anew */
  test_path_in(planted, sizeof(planted), dir, LAGSCOPE__STORE_TALLY);
  test_write_text(planted, "- 999999 1e300 1e300 0 0 x y\n");
  for (int i = 1; i <= 5; i++) {
    char id[16], name[24];
    snprintf(id, sizeof(id), "r%d", i);
    snprintf(name, sizeof(name), "r%d.json", i);
    char *text = signed_report(id, sig, 100.25 * i, 1000LL * i);
    store_write_ok(s, id, text);
    free(text);
    set_mtime(dir, name, 1000 * i);
  }
  store_report_ok(s, "u1", 200); /* no signature: the "-" line, when it goes */
  set_mtime(dir, "u1.json", 500);
  store_report_ok(s, "u2", 200);
  tallied_seen seen = {0};
  CHECK_EQ_INT(lagscope__store_tally_read(dir, tally_seen, &seen), 0);
  CHECK_EQ_INT(seen.lines, 2);
  CHECK_EQ_INT((int)seen.sig.count, 4); /* r1..r4 went: r5 and u2 are kept */
  CHECK(seen.sig.total_ms > 1002.49 && seen.sig.total_ms < 1002.51);
  CHECK(seen.sig.max_ms > 400.99 && seen.sig.max_ms < 401.01);
  CHECK_EQ_INT((int)seen.sig.first_wall_ms, 1000);
  CHECK_EQ_INT((int)seen.sig.last_wall_ms, 4000);
  CHECK(strcmp(seen.label, "sleep \xc2\xb7 nap") == 0);
  CHECK_EQ_INT((int)seen.none.count, 1);
  lagscope__store_close(s);
}

static void test_bounds_by_count(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "count");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 3, 0, &s, why, sizeof(why)), 0);
  store_report_ok(s, "r1", 200);
  store_report_ok(s, "r2", 200);
  store_report_ok(s, "r3", 200);
  set_mtime(dir, "r1.json", 1000);
  set_mtime(dir, "r2.json", 3000);
  set_mtime(dir, "r3.json", 2000);
  store_report_ok(s, "r4", 200); /* four: the oldest, r1, goes */
  test_path_in(path, sizeof(path), dir, "r1.json");
  CHECK(!exists(path));
  CHECK_EQ_INT(count_entries(dir), 3);
  set_mtime(dir, "r4.json", 4000);
  store_report_ok(s, "r5", 200); /* r3 (2000) is now the oldest */
  test_path_in(path, sizeof(path), dir, "r3.json");
  CHECK(!exists(path));
  /* Every other report newer than the one being written: it still stays; of the others
   * (same time) the first by name goes. */
  time_t future = time(NULL) + 100000;
  set_mtime(dir, "r2.json", future);
  set_mtime(dir, "r4.json", future);
  set_mtime(dir, "r5.json", future);
  store_report_ok(s, "r6", 200);
  const char *left[] = {"r4.json", "r5.json", "r6.json"};
  for (int i = 0; i < 3; i++) {
    test_path_in(path, sizeof(path), dir, left[i]);
    CHECK_MSG(exists(path), "%s was removed", left[i]);
  }
  CHECK_EQ_INT(count_entries(dir), 3);
  /* Temporary files and other files are not reports: never counted or removed. */
  char other[512];
  test_path_in(other, sizeof(other), dir, "notes.txt");
  test_write_bytes(other, "hello", 5);
  store_report_ok(s, "r7", 200);
  CHECK(exists(other));
  CHECK_EQ_INT(count_entries(dir), 4);
  lagscope__store_close(s);
  printf("bounds by count: ok\n");
}

/* An idle hang's report ("counted":false, third as core/report/report_json.c writes it) goes before any
 * counted one, however new: an idle hang never costs a hang its place. */
static void test_bounds_idle_first(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "idle");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 3, 0, &s, why, sizeof(why)), 0);
  const char *idle = "{\"schema_version\":1,\"id\":\"r2\",\"counted\":false,\"state\":\"ended\","
                     "\"start\":{\"monotonic_ns\":1}}";
  const char *counted = "{\"schema_version\":1,\"id\":\"r3\",\"counted\":true,\"state\":\"ended\","
                        "\"start\":{\"monotonic_ns\":1}}";
  store_report_ok(s, "r1", 200);
  store_write_ok(s, "r2", idle);
  store_write_ok(s, "r3", counted);
  set_mtime(dir, "r1.json", 1000); /* the oldest */
  set_mtime(dir, "r2.json", 3000); /* the newest, but idle */
  set_mtime(dir, "r3.json", 2000);
  store_report_ok(s, "r4", 200);
  test_path_in(path, sizeof(path), dir, "r2.json");
  CHECK_MSG(!exists(path), "the idle report stayed");
  const char *left[] = {"r1.json", "r3.json", "r4.json"};
  for (int i = 0; i < 3; i++) {
    test_path_in(path, sizeof(path), dir, left[i]);
    CHECK_MSG(exists(path), "%s was removed before the idle report", left[i]);
  }
  store_report_ok(s, "r5", 200); /* no idle one left: the oldest goes, as before */
  test_path_in(path, sizeof(path), dir, "r1.json");
  CHECK(!exists(path));
  lagscope__store_close(s);
  printf("bounds, idle first: ok\n");
}

static void test_bounds_by_bytes(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "bytes");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 0, 3000, &s, why, sizeof(why)), 0);
  store_report_ok(s, "b1", 1000);
  store_report_ok(s, "b2", 1000);
  store_report_ok(s, "b3", 1000);
  set_mtime(dir, "b1.json", 100);
  set_mtime(dir, "b2.json", 200);
  set_mtime(dir, "b3.json", 300);
  CHECK_EQ_INT(count_entries(dir), 3); /* 3000 bytes: at the bound, not over */
  store_report_ok(s, "b4", 1000);
  test_path_in(path, sizeof(path), dir, "b1.json");
  CHECK(!exists(path));
  CHECK_EQ_INT(count_entries(dir), 3);
  /* One report larger than the bound: every other goes, it stays. */
  store_report_ok(s, "b5", 5000);
  CHECK_EQ_INT(count_entries(dir), 1);
  test_path_in(path, sizeof(path), dir, "b5.json");
  CHECK(exists(path));
  lagscope__store_close(s);
  printf("bounds by bytes: ok\n");
}

/* ---- recover ---- */

#define MAX_SEEN 32
typedef struct seen {
  int found, corrupt;
  char found_id[MAX_SEEN][160];
  char found_json[MAX_SEEN][512];
  char corrupt_path[MAX_SEEN][512];
  char corrupt_why[MAX_SEEN][1600];
} seen;

static void on_found(void *ctx, const char *id, const char *path, const char *json) {
  seen *s = ctx;
  CHECK(s->found < MAX_SEEN);
  CHECK(strstr(path, id) != NULL);
  snprintf(s->found_id[s->found], sizeof(s->found_id[0]), "%s", id);
  snprintf(s->found_json[s->found], sizeof(s->found_json[0]), "%s", json);
  s->found++;
}

static void on_corrupt(void *ctx, const char *path, const char *why) {
  seen *s = ctx;
  CHECK(s->corrupt < MAX_SEEN);
  snprintf(s->corrupt_path[s->corrupt], sizeof(s->corrupt_path[0]), "%s", path);
  snprintf(s->corrupt_why[s->corrupt], sizeof(s->corrupt_why[0]), "%s", why);
  s->corrupt++;
}

/* A start: the store opened on dir, and what it found recovered into *got (cleared first). */
static lagscope__store *open_and_recover(const char *dir, uint32_t max_reports, seen *got) {
  lagscope__store *s;
  char why[512];
  CHECK_MSG(lagscope__store_open(dir, max_reports, 0, &s, why, sizeof(why)) == 0, "%s", why);
  memset(got, 0, sizeof(*got));
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, NULL, got, NULL), 0);
  return s;
}

typedef struct kept {
  const char *name;
  char *bytes;
  size_t len;
} kept;

static void test_recover(void) {
  char dir[512], path[512];
  make_dir(dir, sizeof(dir), "recover");
  const char *progress =
      "{\"schema_version\":1,\"id\":\"20240101T000000Z-7-1\",\"hang_id\":1,"
      "\"state\":\"in_progress\",\"start\":{\"wall_ms\":1704067200000,"
      "\"monotonic_ns\":18446744073709551615},\"duration_ms\":1.5e3,\"heaviest_stack\":[]}";
  test_path_in(path, sizeof(path), dir, "20240101T000000Z-7-1.json");
  test_write_bytes(path, progress, strlen(progress));
  const char *ended = "{ \"schema_version\": 1, \"id\": \"done\", \"state\": \"ended\" }\n";
  test_path_in(path, sizeof(path), dir, "done.json");
  test_write_bytes(path, ended, strlen(ended));

  /* Corrupt files, one of each kind. */
  struct {
    const char *name;
    const char *text;
    const char *expect; /* in the sentence */
  } bad[] = {
      {"empty.json", "", "is empty"},
      {"truncated.json", "{\"schema_version\":1,\"id\":\"truncated\",\"state\":\"in_pro", "truncated"},
      {"garbage.json", "hello, world", "not valid JSON"},
      {"schema.json", "{\"schema_version\":2,\"id\":\"schema\",\"state\":\"in_progress\"}",
       "schema_version 2"},
      {"noschema.json", "{\"id\":\"noschema\",\"state\":\"in_progress\"}", "no schema_version"},
      {"noid.json", "{\"schema_version\":1,\"state\":\"in_progress\"}", "no id"},
      {"nostate.json", "{\"schema_version\":1,\"id\":\"nostate\"}", "no state"},
      {"otherid.json", "{\"schema_version\":1,\"id\":\"someone\",\"state\":\"in_progress\"}",
       "file name"},
      {"array.json", "[1,2,3]", "not an object"},
      {"trailing.json", "{\"schema_version\":1,\"id\":\"trailing\",\"state\":\"ended\"} x",
       "after the JSON"},
      {"binary.json", NULL, "binary"},
      {"huge.json", NULL, "too large"},
  };
  const size_t bad_count = sizeof(bad) / sizeof(bad[0]);
  kept before[16];
  for (size_t i = 0; i < bad_count; i++) {
    test_path_in(path, sizeof(path), dir, bad[i].name);
    if (strcmp(bad[i].name, "binary.json") == 0) {
      unsigned char noise[4096];
      uint64_t x = 0x9E3779B97F4A7C15ULL;
      for (size_t j = 0; j < sizeof(noise); j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[j] = (unsigned char)x;
      }
      test_write_bytes(path, noise, sizeof(noise));
    } else if (strcmp(bad[i].name, "huge.json") == 0) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      CHECK(fd >= 0);
      CHECK(write(fd, "{", 1) == 1);
      CHECK(ftruncate(fd, 17 * 1024 * 1024) == 0);
      close(fd);
    } else {
      test_write_bytes(path, bad[i].text, strlen(bad[i].text));
    }
    before[i].name = bad[i].name;
    before[i].bytes = read_text(path, &before[i].len);
  }
  char stale[512], notes[512];
  test_path_in(stale, sizeof(stale), dir, ".20240101T000000Z-7-2.json.tmp");
  test_write_bytes(stale, "{\"half", 6);
  test_path_in(notes, sizeof(notes), dir, "notes.txt");
  test_write_bytes(notes, "mine", 4);

  uint64_t memory = lagscope__memory_in_use();
  static seen got;
  lagscope__store *s = open_and_recover(dir, 100, &got);

  /* The report in progress: reported once, rewritten as ended by termination, every other
   * byte kept (the 64-bit clock exact). */
  CHECK_EQ_INT(got.found, 1);
  CHECK(strcmp(got.found_id[0], "20240101T000000Z-7-1") == 0);
  test_path_in(path, sizeof(path), dir, "20240101T000000Z-7-1.json");
  char *now = read_text(path, NULL);
  CHECK(strcmp(now, got.found_json[0]) == 0);
  printf("recovered: %s\n", now);
  cJSON *doc = cJSON_Parse(now);
  CHECK(doc != NULL);
  CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(doc, "state")->valuestring,
               "ended_by_termination") == 0);
  CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(doc, "ended_by")->valuestring, "termination") == 0);
  CHECK(cJSON_GetObjectItemCaseSensitive(doc, "recovered_at_wall_ms")->valuedouble >
        1704067200000.0);
  cJSON_Delete(doc);
  CHECK(strstr(now, "\"monotonic_ns\":18446744073709551615") != NULL);
  CHECK(strstr(now, "\"duration_ms\":1.5e3") != NULL);
  CHECK(strncmp(now, progress, strlen("{\"schema_version\":1,\"id\":\"20240101T000000Z-7-1\","
                                      "\"hang_id\":1,\"state\":")) == 0);
  free(now);
  test_path_in(path, sizeof(path), dir, "done.json");
  now = read_text(path, NULL);
  CHECK(strcmp(now, ended) == 0);
  free(now);

  /* Each corrupt file once, with its path and a sentence of its own; all left as they were. */
  CHECK_EQ_INT(got.corrupt, (long long)bad_count);
  for (size_t i = 0; i < bad_count; i++) {
    int hits = 0;
    for (int j = 0; j < got.corrupt; j++) {
      if (strcmp(strrchr(got.corrupt_path[j], '/') + 1, bad[i].name) != 0) continue;
      hits++;
      printf("corrupt: %s: %s\n", got.corrupt_path[j], got.corrupt_why[j]);
      const char *said = got.corrupt_why[j];
      CHECK_MSG(strstr(said, bad[i].expect) != NULL, "%s: \"%s\" lacks \"%s\"",
                bad[i].name, got.corrupt_why[j], bad[i].expect);
    }
    CHECK_MSG(hits == 1, "%s reported %d times", bad[i].name, hits);
    test_path_in(path, sizeof(path), dir, bad[i].name);
    size_t len;
    char *after = read_text(path, &len);
    CHECK(after != NULL && len == before[i].len && memcmp(after, before[i].bytes, len) == 0);
    free(after);
  }
  for (int i = 0; i < got.corrupt; i++)
    for (int j = i + 1; j < got.corrupt; j++)
      CHECK_MSG(strcmp(got.corrupt_why[i], got.corrupt_why[j]) != 0, "the same sentence twice: %s",
                got.corrupt_why[i]);
  CHECK(exists(stale)); /* a write cut short, told to nobody here (no lost()): kept */
  CHECK(exists(notes));

  /* Recovery is once per open: the store's list of what it found is gone. */
  memset(&got, 0, sizeof(got));
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, NULL, &got, NULL), 0);
  CHECK_EQ_INT(got.found + got.corrupt, 0);
  lagscope__store_close(s);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory); /* nothing of the store's left behind */
  /* The next start: nothing more in progress; the corrupt files are still reported, still
   * untouched. */
  s = open_and_recover(dir, 100, &got);
  CHECK_EQ_INT(got.found, 0);
  CHECK_EQ_INT(got.corrupt, (long long)bad_count);
  for (size_t i = 0; i < bad_count; i++) free(before[i].bytes);
  lagscope__store_close(s);
  printf("recover: ok\n");
}

/* What recovery told: found() and corrupt() into got (the first member: their ctx), lost()
 * into the rest. */
typedef struct told {
  seen got;
  int lost;
  lagscope__store_lost hang;
  char id[160], path[512], first[4096];
} told;

static void on_lost(void *ctx, const lagscope__store_lost *l) {
  told *t = ctx;
  t->lost++;
  t->hang = *l;
  snprintf(t->id, sizeof(t->id), "%s", l->id);
  snprintf(t->path, sizeof(t->path), "%s", l->path);
  snprintf(t->first, sizeof(t->first), "%s", l->first_sample != NULL ? l->first_sample : "");
  t->hang.id = t->hang.path = t->hang.first_sample = NULL; /* the store's, gone after */
}

/* Temporary files that writes cut short by the process's death left (issue 42, item 4): a
 * whole report is the hang's, recovered from it; a cut one, with no report of its id, is told
 * lost with what its head holds; a cut rewrite of a report that is there leaves that report to
 * be recovered as it was. Each is gone once said; none goes unsaid. */
static void test_recover_cut_short(void) {
  char dir[512], path[512], whole_temp[512], head_temp[512], empty_temp[512], rewrite_temp[512];
  make_dir(dir, sizeof(dir), "recover-cut");
  const char *whole =
      "{\"schema_version\":1,\"id\":\"20240101T000000Z-999999997-3\",\"hang_id\":3,"
      "\"state\":\"in_progress\",\"start\":{\"wall_ms\":1704067200000,\"monotonic_ns\":5},"
      "\"first_sample\":null,\"heaviest_stack\":[]}";
  test_path_in(whole_temp, sizeof(whole_temp), dir, ".20240101T000000Z-999999997-3.json.tmp");
  test_write_bytes(whole_temp, whole, strlen(whole));
  /* Cut after its head: its start (not the id's, to show which is read) and first sample. */
  const char *head =
      "{\"schema_version\":1,\"id\":\"20240101T000000.250Z-999999997-4\",\"counted\":true,"
      "\"hang_id\":4,\"state\":\"in_progress\",\"start\":{\"wall_ms\":1704067200251,"
      "\"monotonic_ns\":5},\"first_sample\":{\"t_ms\":2.5,\"state\":\"read\",\"stack\":"
      "[{\"address\":\"0x1\",\"function\":\"stuck_here\",\"module\":null}]},\"duration_m";
  test_path_in(head_temp, sizeof(head_temp), dir, ".20240101T000000.250Z-999999997-4.json.tmp");
  test_write_bytes(head_temp, head, strlen(head));
  /* A rewrite cut short: the report it was replacing is there, in progress. */
  const char *progress =
      "{\"schema_version\":1,\"id\":\"20240101T000000Z-999999997-5\",\"hang_id\":5,"
      "\"state\":\"in_progress\",\"heaviest_stack\":[]}";
  test_path_in(path, sizeof(path), dir, "20240101T000000Z-999999997-5.json");
  test_write_bytes(path, progress, strlen(progress));
  test_path_in(rewrite_temp, sizeof(rewrite_temp), dir, ".20240101T000000Z-999999997-5.json.tmp");
  test_write_bytes(rewrite_temp, progress, 30);

  lagscope__store *s;
  char why[512];
  CHECK_MSG(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)) == 0, "%s", why);
  static told t;
  memset(&t, 0, sizeof(t));
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, on_lost, &t, NULL), 0);
  lagscope__store_close(s);
  CHECK_EQ_INT(t.got.corrupt, 0);
  /* The whole one, and the report whose rewrite was cut, each recovered once. */
  CHECK_EQ_INT(t.got.found, 2);
  CHECK(strcmp(t.got.found_id[0], "20240101T000000Z-999999997-3") == 0);
  CHECK(strcmp(t.got.found_id[1], "20240101T000000Z-999999997-5") == 0);
  for (int i = 0; i < 2; i++)
    CHECK_MSG(strstr(t.got.found_json[i], "\"state\":\"ended_by_termination\"") != NULL, "%s",
              t.got.found_json[i]);
  test_path_in(path, sizeof(path), dir, "20240101T000000Z-999999997-3.json");
  char *now = read_text(path, NULL);
  CHECK(now != NULL && strcmp(now, t.got.found_json[0]) == 0);
  free(now);
  /* The cut one: its id, process, number, the head's start and first sample, its size. */
  CHECK_EQ_INT(t.lost, 1);
  CHECK(strcmp(t.id, "20240101T000000.250Z-999999997-4") == 0 && strcmp(t.path, head_temp) == 0);
  CHECK_EQ_INT(t.hang.pid, 999999997);
  CHECK_EQ_INT(t.hang.hang_id, 4);
  CHECK_EQ_INT(t.hang.start_wall_ms, 1704067200251);
  CHECK_EQ_INT(t.hang.bytes, strlen(head));
  CHECK_MSG(strstr(t.first, "\"function\":\"stuck_here\"") != NULL && t.first[0] == '{' &&
                t.first[strlen(t.first) - 1] == '}',
            "first sample: %s", t.first);
  CHECK(!exists(whole_temp) && !exists(head_temp) && !exists(rewrite_temp));

  /* Cut inside its head, or empty (a death between the file's creation and its text): the
   * id's start, no first sample. */
  const char *cuts[] = {"{\"schema_version\":1,\"id\":\"20240101T000000.250Z-999999998-1\",\"hang_id\":1,"
                        "\"start\":{\"wall_ms\":17", ""};
  for (int i = 0; i < 2; i++) {
    test_path_in(empty_temp, sizeof(empty_temp), dir, ".20240101T000000.250Z-999999998-1.json.tmp");
    test_write_bytes(empty_temp, cuts[i], strlen(cuts[i]));
    CHECK_MSG(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)) == 0, "%s", why);
    memset(&t, 0, sizeof(t));
    CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, on_lost, &t, NULL), 0);
    lagscope__store_close(s);
    CHECK_EQ_INT(t.got.found + t.got.corrupt, 0);
    CHECK_EQ_INT(t.lost, 1);
    CHECK_EQ_INT(t.hang.start_wall_ms, 1704067200250);
    CHECK_EQ_INT(t.hang.pid, 999999998);
    CHECK_EQ_INT(t.hang.bytes, strlen(cuts[i]));
    CHECK(t.first[0] == '\0');
    CHECK(!exists(empty_temp));
  }
  /* A temporary file that is a link or a FIFO is no write of the store's: left alone. */
  char target[512];
  test_path_in(target, sizeof(target), dir, "notes.txt");
  test_write_bytes(target, "mine", 4);
  CHECK(symlink(target, empty_temp) == 0);
  CHECK(mkfifo(head_temp, 0600) == 0);
  CHECK_MSG(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)) == 0, "%s", why);
  memset(&t, 0, sizeof(t));
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, on_lost, &t, NULL), 0);
  lagscope__store_close(s);
  CHECK_EQ_INT(t.got.found + t.got.corrupt + t.lost, 0);
  CHECK(exists(target) && exists(head_temp));
  /* One of a process alive (another instance of the app, sharing the folder, may be writing
   * it): left alone, told by a later start. */
  char alive[128];
  snprintf(alive, sizeof(alive), ".20240101T000000Z-%ld-1.json.tmp", (long)getppid());
  test_path_in(path, sizeof(path), dir, alive);
  test_write_bytes(path, "{\"sche", 6);
  CHECK_MSG(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)) == 0, "%s", why);
  memset(&t, 0, sizeof(t));
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, on_lost, &t, NULL), 0);
  lagscope__store_close(s);
  CHECK_EQ_INT(t.got.found + t.got.corrupt + t.lost, 0);
  CHECK(exists(path));
  printf("recover cut short: ok\n");
}

/* A report in progress never goes: an earlier run's, not yet published by recovery (which
 * runs while the new run writes), or a hang still going on. The next oldest goes instead, and
 * the recovered report (ended by termination) goes when its turn comes. */
static void test_bounds_keep_in_progress(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "in-progress");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 2, 0, &s, why, sizeof(why)), 0);
  char *dead = report_text("p1", "in_progress", 200);
  store_write_ok(s, "p1", dead);
  store_report_ok(s, "p2", 200);
  set_mtime(dir, "p1.json", 1000); /* the oldest */
  set_mtime(dir, "p2.json", 2000);
  store_report_ok(s, "p3", 200);
  test_path_in(path, sizeof(path), dir, "p1.json");
  CHECK_MSG(exists(path), "a report in progress was deleted");
  test_path_in(path, sizeof(path), dir, "p2.json");
  CHECK_MSG(!exists(path), "the oldest report not in progress stayed");
  lagscope__store_close(s);
  /* The next start recovers it; past the bound, it then goes as the oldest. */
  static seen got;
  s = open_and_recover(dir, 2, &got);
  CHECK_EQ_INT(got.found, 1);
  set_mtime(dir, "p1.json", 1000);
  store_report_ok(s, "p4", 200);
  test_path_in(path, sizeof(path), dir, "p1.json");
  CHECK_MSG(!exists(path), "the recovered report stayed past the bound");
  CHECK_EQ_INT(count_entries(dir), 2);
  free(dead);
  lagscope__store_close(s);
  printf("bounds, in progress kept: ok\n");
}

/* Files that begin as a report does but are not one (cut short, planted) neither count against
 * the bounds nor go (issue 31, item 8): with a bound of 2 and 5 such files newer than the
 * reports, the store deleted the previous run's report and this run's first one. And a file
 * already checked is not read again at the next write. */
static void test_bounds_ignore_non_reports(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "non-reports");
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 2, 0, &s, why, sizeof(why)), 0);
  store_report_ok(s, "old", 200);
  set_mtime(dir, "old.json", 1000); /* the previous run's */
  for (int i = 0; i < 5; i++) {
    char name[32], *text = report_text("x", "ended", 300);
    snprintf(name, sizeof(name), "cut%d.json", i);
    snprintf(text, 300, "{\"schema_version\":1,\"id\":\"cut%d\",\"state\":\"ended\",\"pad\":\"xx", i);
    test_path_in(path, sizeof(path), dir, name);
    test_write_bytes(path, text, strlen(text)); /* cut short: no closing quote or brace */
    free(text);
    set_mtime(dir, name, 5000 + i);
  }
  store_report_ok(s, "new", 200); /* two reports: within the bound */
  test_path_in(path, sizeof(path), dir, "old.json");
  CHECK_MSG(exists(path), "the previous run's report went for files that are no reports");
  test_path_in(path, sizeof(path), dir, "cut0.json");
  CHECK_MSG(exists(path), "a file that is no report was deleted");
  CHECK_EQ_INT(count_entries(dir), 7);
  /* A third report: the oldest report goes, never a file that is no report. */
  store_report_ok(s, "third", 200);
  test_path_in(path, sizeof(path), dir, "old.json");
  CHECK_MSG(!exists(path), "past the bound, the oldest report stayed");
  CHECK_EQ_INT(count_entries(dir), 7);
  /* What the bounds learnt is kept for the next write, every file of the last listing: the
   * five, "old" (deleted after it), "new" and "third". */
  CHECK_MSG(s->known_len == 8, "the bounds know %zu files", s->known_len);
  lagscope__store_close(s);
  printf("bounds ignore files that are no reports: ok\n");
}

/* A report in progress that cannot be rewritten (full disk): still handed over, so the hang
 * is not lost, ESYS returned, and the file unchanged for the next start. */
static void test_recover_full_disk(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "recover-full");
  char *progress = report_text("big", "in_progress", 16 * 1024);
  test_path_in(path, sizeof(path), dir, "big.json");
  test_write_bytes(path, progress, strlen(progress));
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)), 0);
  struct rlimit saved, limit;
  CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  limit = saved;
  limit.rlim_cur = 4096;
  signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  static seen got;
  memset(&got, 0, sizeof(got));
  int rc = lagscope__store_recover(s, on_found, on_corrupt, NULL, &got, NULL);
  CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  CHECK_EQ_INT(rc, LAGSCOPE_ESYS);
  CHECK_EQ_INT(got.found, 1);
  CHECK_EQ_INT(got.corrupt, 0);
  char *now = read_text(path, NULL);
  CHECK(strcmp(now, progress) == 0);
  CHECK_EQ_INT(count_entries(dir), 1);
  free(now);
  free(progress);
  lagscope__store_close(s);
  printf("recover on a full disk: ok\n");
}

/* report_json.c → store → recover: a report written in progress comes back ended by termination. */
static void test_report_cycle(void) {
  char dir[512], why[512], path[512];
  make_dir(dir, sizeof(dir), "cycle");
  static lagscope__stack samples[3];
  for (int i = 0; i < 3; i++) {
    samples[i].tid = 1;
    samples[i].depth = 2;
    samples[i].frames[0] = 0x1000 + (uintptr_t)i;
    samples[i].frames[1] = 0x2000;
  }
  lagscope__report_data r = {0};
  snprintf(r.id, sizeof(r.id), "20240101T000000Z-99-3");
  r.hang_id = 3;
  r.state = LAGSCOPE__REPORT_IN_PROGRESS;
  r.start_ns = 1234567890123456789ULL;
  r.samples = samples;
  r.sample_count = 3;
  char *json = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, NULL, NULL, &json, NULL), 0);
  lagscope__store *s;
  CHECK_EQ_INT(lagscope__store_open(dir, 100, 0, &s, why, sizeof(why)), 0);
  CHECK_EQ_INT(lagscope__store_write(s, r.id, json, path, sizeof(path), why, sizeof(why)), 0);
  lagscope__dealloc(json);
  lagscope__store_close(s);

  /* The next launch. */
  static seen got;
  s = open_and_recover(dir, 100, &got);
  CHECK_EQ_INT(got.found, 1);
  CHECK_EQ_INT(got.corrupt, 0);
  char *now = read_text(path, NULL);
  cJSON *doc = cJSON_Parse(now);
  CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(doc, "state")->valuestring,
               "ended_by_termination") == 0);
  CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(
                   cJSON_GetObjectItemCaseSensitive(doc, "call_tree"), "count")->valueint, 3);
  CHECK(strstr(now, "\"monotonic_ns\":1234567890123456789") != NULL);
  cJSON_Delete(doc);
  free(now);
  lagscope__store_close(s);
  printf("report cycle: ok\n");
}

static const test_case cases[] = {
    TEST_CASE(open),
    TEST_CASE(write_and_ids),
    TEST_CASE(write_failures),
    TEST_CASE(bounds_by_count),
    TEST_CASE(bounds_tally),
    TEST_CASE(bounds_idle_first),
    TEST_CASE(bounds_keep_in_progress),
    TEST_CASE(bounds_ignore_non_reports),
    TEST_CASE(bounds_by_bytes),
    TEST_CASE(recover),
    TEST_CASE(recover_full_disk),
    TEST_CASE(recover_cut_short),
    TEST_CASE(report_cycle),
};

int main(int argc, char **argv) {
  snprintf(root, sizeof(root), "/tmp/lagscope-store-XXXXXX");
  CHECK(mkdtemp(root) != NULL);
  uint64_t memory = lagscope__memory_in_use();
  int rc = run_test_case(argc, argv, cases, CASE_COUNT(cases));
  CHECK_EQ_INT(lagscope__memory_in_use(), memory);
  remove_tree(root);
  return rc;
}
