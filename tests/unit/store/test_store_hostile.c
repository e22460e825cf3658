/* The report folder against another local user (issue 12, items 1 to 4): a folder or a folder
 * above it that someone else owns or can write is refused with a sentence that says so; planted
 * links, FIFOs and foreign files are never followed, waited on, counted or deleted; the reader
 * of the viewer serves only what the store would keep; a report whose final write failed is
 * not called ended by termination at the next start. One case per argv[1], each in its own
 * process (alarm() bounds a case that would block). Cases that need a second user make one
 * with setuid() when run as root, and say they skipped that part otherwise. */
#define _DEFAULT_SOURCE /* lchown, symlink */

#include "check.h"
#include "test_files.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VICTIM_UID 65534 /* nobody: the user whose app runs */
#define ATTACKER_UID 4242 /* another local user: no account needed to own files */

static char root[256];

static int file_is(const char *path, const char *text) {
  char buf[256] = "";
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n >= 0 && (size_t)n == strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static void make_dir(char *out, size_t size, const char *name, mode_t mode) {
  test_path_in(out, size, root, name);
  CHECK_MSG(mkdir(out, 0700) == 0, "mkdir %s: %s", out, strerror(errno));
  CHECK(chmod(out, mode) == 0); /* past the umask */
}

static char *report(const char *id, const char *state) {
  char *text = malloc(512);
  snprintf(text, 512, "{\"schema_version\":1,\"id\":\"%s\",\"state\":\"%s\",\"duration_ms\":300}",
           id, state);
  return text;
}

static void expect_refused(const char *dir, const char *words) {
  lagscope__store *s = NULL;
  char why[512] = "";
  CHECK_EQ_INT(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)), LAGSCOPE_ESYS);
  CHECK(s == NULL);
  printf("refused: %s\n", why);
  CHECK_MSG(strstr(why, words) != NULL && strstr(why, dir) != NULL, "why: %s", why);
}

/* ---- item 1: the folder ---- */

static int case_writable_by_others(void) {
  char dir[512], inner[512];
  make_dir(dir, sizeof(dir), "open-to-all", 0777);
  expect_refused(dir, "can be written by other users");
  CHECK(chmod(dir, 0770) == 0);
  expect_refused(dir, "can be written by other users");
  /* A folder above that others can write, not sticky: they could rename ours away. */
  test_path_in(inner, sizeof(inner), dir, "app");
  CHECK(mkdir(inner, 0700) == 0);
  expect_refused(inner, "can be written by other users");
  /* Sticky, as /tmp: fine. */
  CHECK(chmod(dir, 01777) == 0);
  lagscope__store *s = NULL;
  char why[512];
  CHECK_MSG(lagscope__store_open(inner, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  lagscope__store_close(s);
  /* What the store creates is 0700. */
  test_path_in(inner, sizeof(inner), dir, "new/deeper");
  CHECK_MSG(lagscope__store_open(inner, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  lagscope__store_close(s);
  struct stat st;
  CHECK(stat(inner, &st) == 0 && (st.st_mode & 0777) == 0700);
  printf("writable by others: ok\n");
  return 0;
}

/* Another user made the folder first (the attacker); nobody (the victim) must refuse it. */
static int case_other_owner(void) {
  if (geteuid() != 0) {
    printf("skipped: needs root to make a folder of another user (chown, setuid)\n");
    return TEST_SKIP_CODE;
  }
  char shared[512], planted[512], dir[512], link_dir[512], token[512];
  make_dir(shared, sizeof(shared), "shared-tmp", 01777);
  test_path_in(planted, sizeof(planted), shared, "lagscope-65534");
  CHECK(mkdir(planted, 0755) == 0 && chown(planted, ATTACKER_UID, ATTACKER_UID) == 0);
  test_path_in(dir, sizeof(dir), planted, "app");
  CHECK(mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0);
  CHECK(chown(dir, ATTACKER_UID, ATTACKER_UID) == 0);
  test_path_in(token, sizeof(token), dir, "viewer-token");
  test_write_text(token, "0123456789abcdef0123456789abcdef\n");
  /* A folder of the attacker's, 0700 or not, in a folder root owns. */
  char own_dir[512];
  test_path_in(own_dir, sizeof(own_dir), shared, "theirs");
  CHECK(mkdir(own_dir, 0700) == 0 && chown(own_dir, ATTACKER_UID, ATTACKER_UID) == 0);
  /* A link the attacker made, in the sticky folder, to a folder of the victim's. */
  char target[512];
  test_path_in(target, sizeof(target), shared, "target");
  CHECK(mkdir(target, 0700) == 0 && chown(target, VICTIM_UID, VICTIM_UID) == 0);
  test_path_in(link_dir, sizeof(link_dir), shared, "link");
  CHECK(symlink(target, link_dir) == 0 && lchown(link_dir, ATTACKER_UID, ATTACKER_UID) == 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK(setgid(VICTIM_UID) == 0 && setuid(VICTIM_UID) == 0);
    expect_refused(own_dir, "belongs to another user");
    expect_refused(dir, "belongs to another user");
    char below[512];
    test_path_in(below, sizeof(below), planted, "app/reports");
    expect_refused(below, "belongs to another user");
    expect_refused(link_dir, "symbolic link made by another user");
    /* The viewer's token file in it is not read: lagscope__web_token_make would log and go on. */
    int fd = -1;
    char why[512];
    CHECK_EQ_INT(lagscope__folder_open(dir, 0, &fd, why, sizeof(why)), LAGSCOPE_ESYS);
    /* Its own folder in the same sticky place is fine. */
    char mine[512];
    test_path_in(mine, sizeof(mine), shared, "mine/app");
    lagscope__store *s = NULL;
    CHECK_MSG(lagscope__store_open(mine, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
    lagscope__store_close(s);
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  printf("other owner: ok\n");
  return 0;
}

/* A planted .lagscope-probe-<pid> link to a precious file: never truncated. */
static int case_probe_link(void) {
  char dir[512], precious[512], probe[512], name[64];
  make_dir(dir, sizeof(dir), "probe", 0700);
  test_path_in(precious, sizeof(precious), root, "precious");
  test_write_text(precious, "do not truncate me");
  snprintf(name, sizeof(name), ".lagscope-probe-%ld", (long)getpid());
  test_path_in(probe, sizeof(probe), dir, name);
  CHECK(symlink(precious, probe) == 0);
  lagscope__store *s = NULL;
  char why[512];
  CHECK_MSG(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  CHECK(file_is(precious, "do not truncate me"));
  /* A stale temporary file that is a link: the write replaces the link, not its target. */
  char temp[512];
  test_path_in(temp, sizeof(temp), dir, ".r1.json.tmp");
  CHECK(symlink(precious, temp) == 0);
  char *text = report("r1", "ended");
  CHECK_MSG(lagscope__store_write(s, "r1", text, NULL, 0, why, sizeof(why)) == 0, "%s", why);
  CHECK(file_is(precious, "do not truncate me"));
  /* A FIFO as the temporary file: no wait. */
  CHECK(mkfifo(temp, 0600) == 0);
  alarm(10);
  CHECK_MSG(lagscope__store_write(s, "r1", text, NULL, 0, why, sizeof(why)) == 0, "%s", why);
  alarm(0);
  free(text);
  lagscope__store_close(s);
  printf("probe link: ok\n");
  return 0;
}

/* ---- item 2: what the store counts and deletes ---- */

static int case_foreign_files(void) {
  char dir[512], path[512], name[64], why[512];
  make_dir(dir, sizeof(dir), "foreign", 0700);
  for (int i = 0; i < 60; i++) { /* the user's own JSON files */
    snprintf(name, sizeof(name), "user-%02d.json", i);
    test_path_in(path, sizeof(path), dir, name);
    char text[64];
    snprintf(text, sizeof(text), "{\"n\":%d}", i);
    test_write_text(path, text);
  }
  /* 50 MB of a foreign file (sparse: no disk needed), over report_max_bytes by itself. */
  char big[512];
  test_path_in(big, sizeof(big), dir, "big.json");
  int fd = open(big, O_WRONLY | O_CREAT, 0600);
  CHECK(fd >= 0 && ftruncate(fd, 50 * 1024 * 1024) == 0);
  close(fd);
  /* Named as reports are, but not one: begins as a report, then garbage; and a link. */
  char fake[512], linked[512], outside[512];
  test_path_in(fake, sizeof(fake), dir, "20200101T000000.000Z-1-1.json");
  test_write_text(fake, "{\"schema_version\":1,\"id\":\"20200101T000000.000Z-1-1\" garbage");
  test_path_in(outside, sizeof(outside), root, "20200101T000000.000Z-1-2.json");
  char *outside_text = report("20200101T000000.000Z-1-2", "ended");
  test_write_text(outside, outside_text);
  test_path_in(linked, sizeof(linked), dir, "20200101T000000.000Z-1-2.json");
  CHECK(symlink(outside, linked) == 0);
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  CHECK(utimensat(AT_FDCWD, fake, old, 0) == 0);
  CHECK(utimensat(AT_FDCWD, linked, old, AT_SYMLINK_NOFOLLOW) == 0);

  /* Two reports within 32 MiB: the 50 MB file does not push one out. */
  lagscope__store *s = NULL;
  CHECK_MSG(lagscope__store_open(dir, 3, 32u * 1024u * 1024u, &s, why, sizeof(why)) == 0, "%s", why);
  const char *ids[] = {"r1", "r2", "r3", "r4", "r5"};
  for (int i = 0; i < 5; i++) {
    char *text = report(ids[i], "ended");
    CHECK_MSG(lagscope__store_write(s, ids[i], text, NULL, 0, why, sizeof(why)) == 0, "%s", why);
    free(text);
    test_path_in(path, sizeof(path), dir, "r1.json");
    if (i == 1) CHECK_MSG(exists(path), "a valid report went for a foreign file's bytes");
    char mine[64];
    snprintf(mine, sizeof(mine), "%s.json", ids[i]);
    test_path_in(path, sizeof(path), dir, mine);
    struct timespec when[2] = {{2000 + i, 0}, {2000 + i, 0}};
    CHECK(utimensat(AT_FDCWD, path, when, 0) == 0);
  }
  lagscope__store_close(s);
  /* Of the store's own, the three newest stay; nothing else was counted or touched. */
  for (int i = 0; i < 5; i++) {
    char mine[64];
    snprintf(mine, sizeof(mine), "%s.json", ids[i]);
    test_path_in(path, sizeof(path), dir, mine);
    CHECK_MSG(exists(path) == (i >= 2), "%s: %s", mine, exists(path) ? "kept" : "deleted");
  }
  for (int i = 0; i < 60; i++) {
    snprintf(name, sizeof(name), "user-%02d.json", i);
    test_path_in(path, sizeof(path), dir, name);
    CHECK_MSG(exists(path), "the user's %s was deleted", name);
  }
  struct stat st;
  CHECK(stat(big, &st) == 0 && st.st_size == 50 * 1024 * 1024);
  CHECK(exists(fake) && exists(linked) && file_is(outside, outside_text));
  free(outside_text);
  printf("foreign files: ok\n");
  return 0;
}

/* ---- item 3: one reader, for the store and the viewer ---- */

static int case_reader(void) {
  char dir[512], path[512], secret[512], why[512];
  make_dir(dir, sizeof(dir), "reader", 0700);
  lagscope__store *s = NULL;
  CHECK_MSG(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  char *good = report("good", "ended");
  CHECK(lagscope__store_write(s, "good", good, NULL, 0, why, sizeof(why)) == 0);
  lagscope__store_close(s);
  /* A FIFO: read at once, refused (no writer ever comes). */
  test_path_in(path, sizeof(path), dir, "x.json");
  CHECK(mkfifo(path, 0600) == 0);
  /* A link to a file of the user: never served, even though it is a report. */
  test_path_in(secret, sizeof(secret), root, "secret-file");
  char *secret_text = report("secret", "ended");
  test_write_text(secret, secret_text);
  test_path_in(path, sizeof(path), dir, "secret.json");
  CHECK(symlink(secret, path) == 0);
  /* Another document; and one that begins as a report does but is none (listed by its looks,
   * never served). */
  test_path_in(path, sizeof(path), dir, "notes.json");
  test_write_text(path, "{\"mine\":true}");
  test_path_in(path, sizeof(path), dir, "looks.json");
  test_write_text(path, "{\"schema_version\":1,\"id\":\"looks\",\"mine\":true}");

  char *text = NULL;
  size_t len = 0;
  alarm(10);
  CHECK_EQ_INT(lagscope__store_read(dir, "x", &text, &len), LAGSCOPE_EPARSE);
  alarm(0);
  CHECK(text == NULL);
  CHECK_EQ_INT(lagscope__store_read(dir, "secret", &text, &len), LAGSCOPE_EPARSE);
  CHECK(text == NULL);
  CHECK_EQ_INT(lagscope__store_read(dir, "notes", &text, &len), LAGSCOPE_EPARSE);
  CHECK_EQ_INT(lagscope__store_read(dir, "looks", &text, &len), LAGSCOPE_EPARSE);
  CHECK_EQ_INT(lagscope__store_read(dir, "missing", &text, &len), LAGSCOPE_ENOENT);
  CHECK_EQ_INT(lagscope__store_read(dir, "good", &text, &len), LAGSCOPE_OK);
  CHECK(len == strlen(good) && memcmp(text, good, len) == 0);
  lagscope__dealloc(text);

  lagscope__store_entry *entries = NULL;
  size_t count = 0;
  CHECK_EQ_INT(lagscope__store_list(dir, &entries, &count), 0);
  CHECK_EQ_INT(count, 2);
  CHECK(strcmp(entries[0].id, "looks") == 0 && strcmp(entries[1].id, "good") == 0);
  lagscope__dealloc(entries);
  /* A folder of another's making is not read at all. */
  CHECK(chmod(dir, 0777) == 0);
  CHECK_EQ_INT(lagscope__store_read(dir, "good", &text, &len), LAGSCOPE_ESYS);
  CHECK_EQ_INT(lagscope__store_list(dir, &entries, &count), LAGSCOPE_ESYS);
  CHECK(chmod(dir, 0700) == 0);
  /* No folder yet: no reports. */
  test_path_in(path, sizeof(path), dir, "none");
  CHECK_EQ_INT(lagscope__store_list(path, &entries, &count), 0);
  CHECK_EQ_INT(count, 0);
  free(good);
  free(secret_text);
  printf("reader: ok\n");
  return 0;
}

/* ---- item 4: a final write the disk had no room for ---- */

typedef struct seen {
  int found, corrupt;
  char json[1024];
} seen;

static void on_found(void *ctx, const char *id, const char *path, const char *json) {
  (void)id, (void)path;
  seen *s = ctx;
  s->found++;
  snprintf(s->json, sizeof(s->json), "%s", json);
}

static void on_corrupt(void *ctx, const char *path, const char *why) {
  (void)path, (void)why;
  ((seen *)ctx)->corrupt++;
}

static int case_marked_ended(void) {
  char dir[512], why[512];
  make_dir(dir, sizeof(dir), "marked", 0700);
  lagscope__store *s = NULL;
  CHECK_MSG(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  char *first = report("h1", "in_progress");
  CHECK(lagscope__store_write(s, "h1", first, NULL, 0, why, sizeof(why)) == 0);
  int64_t ended_ms = 1700000000123;
  CHECK_EQ_INT(lagscope__store_mark_ended(s, "h1", ended_ms), 0);
  CHECK_EQ_INT(lagscope__store_mark_ended(s, "nothing", ended_ms), LAGSCOPE_ENOENT);
  lagscope__store_close(s);

  CHECK_MSG(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  seen seen = {0};
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, NULL, &seen, NULL), 0);
  CHECK_EQ_INT(seen.found, 1);
  printf("recovered: %s\n", seen.json);
  CHECK(strstr(seen.json, "\"state\":\"ended\"") != NULL);
  CHECK(strstr(seen.json, "termination") == NULL);
  CHECK(strstr(seen.json, "\"final_write_failed\":true") != NULL);
  CHECK(strstr(seen.json, "\"ended_at_wall_ms\":1700000000000") != NULL);
  /* Once final on disk, a second start finds nothing to do. */
  lagscope__store_close(s);
  CHECK_MSG(lagscope__store_open(dir, 10, 0, &s, why, sizeof(why)) == 0, "%s", why);
  seen.found = 0;
  CHECK_EQ_INT(lagscope__store_recover(s, on_found, on_corrupt, NULL, &seen, NULL), 0);
  CHECK_EQ_INT(seen.found, 0);
  lagscope__store_close(s);
  free(first);
  printf("marked ended: ok\n");
  return 0;
}

/* ---- the default folder: out of the shared /tmp ---- */

static void expect_default(const char *expected) {
  lagscope_config c = lagscope_config_default();
  c.app_name = "app";
  char dir[512];
  lagscope__report_dir(&c, "app", dir, sizeof(dir));
  CHECK_MSG(strcmp(dir, expected) == 0, "default folder %s, expected %s", dir, expected);
}

static int case_default_folder(void) {
  char expected[512];
  setenv("TMPDIR", "/var/tmp", 1);
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_STATE_HOME", "/state", 1);
  expect_default("/state/lagscope/app");
  setenv("XDG_STATE_HOME", "relative/state", 1); /* invalid by the XDG spec: ignored */
  expect_default("/home/someone/.local/state/lagscope/app");
  unsetenv("XDG_STATE_HOME");
  expect_default("/home/someone/.local/state/lagscope/app");
  unsetenv("HOME"); /* no home: the shared temporary folder, checked as any other */
  snprintf(expected, sizeof(expected), "/var/tmp/lagscope-%ld/app", (long)getuid());
  expect_default(expected);
  printf("default folder: ok\n");
  return 0;
}

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    char command[600];
    snprintf(command, sizeof(command), "rm -rf '%s'", path);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", path);
  }
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  CHECK(argc == 2);
  umask(022);
  snprintf(root, sizeof(root), "/tmp/lagscope-hostile-XXXXXX");
  CHECK(mkdtemp(root) != NULL);
  CHECK(chmod(root, 0755) == 0); /* the other user of case_other_owner walks through it */
  signal(SIGPIPE, SIG_IGN);
  struct {
    const char *name;
    int (*run)(void);
  } cases[] = {
      {"writable-by-others", case_writable_by_others}, {"other-owner", case_other_owner},
      {"probe-link", case_probe_link},                 {"foreign-files", case_foreign_files},
      {"reader", case_reader},                         {"marked-ended", case_marked_ended},
      {"default-folder", case_default_folder},
  };
  int rc = -1;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    if (strcmp(argv[1], cases[i].name) == 0) rc = cases[i].run();
  CHECK_MSG(rc != -1, "no case %s", argv[1]);
  remove_tree(root);
  return rc;
}
