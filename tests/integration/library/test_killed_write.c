/* A process killed (SIGKILL) inside its hang's first report write (issue 42, item 4): at each
 * step of the write, made deterministic by the store's test hook (lagscope__store_test_hook),
 * a child hangs and dies there; the next start on the same folder must tell the hang, never
 * delete what was written without a word:
 *   created     the temporary file made, nothing written: hang_lost, its id and start
 *   cut_head    the text cut inside its head (a death in write(), which leaves a prefix):
 *               hang_lost, its id and start (from the id), no first sample
 *   cut_body    cut after the head: hang_lost with the head's start and first sample
 *   written     written whole, not synced: hang_recovered, the stack and the cause
 *   synced      synced, not renamed: hang_recovered likewise
 * The temporary file is gone once told; a recovered report is on disk as <id>.json. */
#define _GNU_SOURCE

#include "cases.h"
#include "check.h"
#include "host_loop.h"
#include "internal.h"
#include "test_files.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char root[256], reports[300];
static const char *kill_at;  /* the child's: the step it dies at */
static int cut_after_head;   /* the child's: with kill_at "sync", where the text is cut */
static int cut_in_head;

/* The text written so far to the temporary file (its fd is write-only). */
static char *written_text(const char *temp, size_t *len) {
  char path[600];
  test_path_in(path, sizeof(path), reports, temp);
  int fd = open(path, O_RDONLY);
  struct stat st;
  CHECK(fd >= 0 && fstat(fd, &st) == 0);
  char *text = calloc(1, (size_t)st.st_size + 1);
  CHECK(text != NULL && pread(fd, text, (size_t)st.st_size, 0) == st.st_size);
  close(fd);
  *len = (size_t)st.st_size;
  return text;
}

/* The child's hook: dies at its step of the first write, after cutting the text to what a
 * death inside write() leaves (a prefix) when asked. */
static int die_in_write(const char *step, const char *temp, int fd) {
  if (strcmp(step, kill_at) != 0) return 0;
  if (cut_after_head || cut_in_head) {
    size_t len;
    char *text = written_text(temp, &len);
    /* The member after the head: its first bytes are kept, a number cut. */
    const char *next = strstr(text, ",\"duration_ms\":");
    CHECK_MSG(next != NULL, "no duration_ms in %.300s", text);
    off_t cut = cut_in_head ? 40 : (off_t)(next - text) + 17;
    CHECK(ftruncate(fd, cut) == 0);
    free(text);
  }
  raise(SIGKILL);
  return 0;
}

/* In the stacks as the function the main thread was in. */
__attribute__((noinline)) static void killed_writer_stall(void) {
  test_stall_busy(5000);
  __asm__ volatile("" ::: "memory");
}

/* The child: heartbeats, then a hang; its first report write kills it. */
static void child(void) {
  lagscope__store_test_hook(die_in_write);
  lagscope_config c = lagscope_config_default();
  c.report_dir = reports;
  c.hud = 0;
  c.server = 0;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  for (int i = 0; i < 30; i++) {
    lagscope_heartbeat();
    struct timespec beat = {0, 10 * 1000 * 1000};
    nanosleep(&beat, NULL);
  }
  killed_writer_stall();
  _exit(3); /* the hook never ran: no first write within 5 s */
}

static void run_child(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) child();
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
            "the child was not killed in its write (status %d)", status);
}

/* What the next start tells: the lines of hang_lost and hang_recovered events. */
static pthread_mutex_t told_lock = PTHREAD_MUTEX_INITIALIZER;
static char told[1 << 16], told_report[1 << 20];
static char told_cause[4096], told_stack[1 << 16]; /* the C accessors' */
static _Atomic int lost_count, recovered_count;

static void keep_told(const lagscope_event *e, void *user) {
  (void)user;
  if (e->type != LAGSCOPE_EVENT_HANG_LOST && e->type != LAGSCOPE_EVENT_HANG_RECOVERED) return;
  char *json = lagscope_event_json(e);
  CHECK(json != NULL);
  pthread_mutex_lock(&told_lock);
  size_t used = strlen(told);
  snprintf(told + used, sizeof(told) - used, "%s\n", json);
  if (e->type == LAGSCOPE_EVENT_HANG_RECOVERED) { /* its report, with the stack and the cause */
    snprintf(told_report, sizeof(told_report), "%s", lagscope_report_json(e->payload.report));
    snprintf(told_cause, sizeof(told_cause), "%s", lagscope_report_cause(e->payload.report));
    snprintf(told_stack, sizeof(told_stack), "%s",
             lagscope_report_heaviest_stack(e->payload.report));
  }
  pthread_mutex_unlock(&told_lock);
  lagscope_free(json);
  if (e->type == LAGSCOPE_EVENT_HANG_LOST) atomic_fetch_add(&lost_count, 1);
  else atomic_fetch_add(&recovered_count, 1);
}

/* The only temporary file the child left: its name. */
static void find_temp(char *name, size_t size) {
  DIR *d = opendir(reports);
  CHECK(d != NULL);
  struct dirent *e;
  name[0] = '\0';
  while ((e = readdir(d)) != NULL)
    if (strstr(e->d_name, ".json.tmp") != NULL) snprintf(name, size, "%s", e->d_name);
  closedir(d);
  CHECK_MSG(name[0] != '\0', "the child left no temporary file in %s", reports);
}

/* A start on the folder, stopped once it told a hang of an earlier run (10 s at most): the
 * one event it told, parsed, of the type expected (what is for the messages). */
static cJSON *listen_once(lagscope_event_type expected, const char *what) {
  lagscope_config c = lagscope_config_default();
  c.report_dir = reports;
  c.hud = 0;
  c.server = 0;
  c.on_event = keep_told;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  uint64_t until = test_now_ns() + 10ull * 1000000000u;
  while (atomic_load(&lost_count) + atomic_load(&recovered_count) == 0 && test_now_ns() < until) {
    lagscope_heartbeat();
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  CHECK_EQ_INT(lagscope_stop(), 0);
  printf("told: %s", told);
  CHECK_MSG(atomic_load(&lost_count) + atomic_load(&recovered_count) == 1,
            "the next start told %d hang_lost and %d hang_recovered for %s (expected one %s)",
            atomic_load(&lost_count), atomic_load(&recovered_count), what,
            lagscope_event_type_name((int)expected));
  cJSON *e = cJSON_Parse(told);
  CHECK(e != NULL);
  CHECK_MSG(strcmp(cJSON_GetObjectItem(e, "type")->valuestring,
                   lagscope_event_type_name((int)expected)) == 0,
            "told %s", told);
  return e;
}

/* The next start on the folder: the one event it tells, parsed; the temporary file gone. */
static cJSON *next_start(lagscope_event_type expected, char *id, size_t id_size) {
  char temp[256], path[600];
  find_temp(temp, sizeof(temp));
  snprintf(id, id_size, "%.*s", (int)(strlen(temp) - strlen(".json.tmp") - 1), temp + 1);
  test_path_in(path, sizeof(path), reports, temp);
  cJSON *e = listen_once(expected, temp);
  CHECK_MSG(access(path, F_OK) != 0, "%s is still there once told", path);
  return e;
}

/* A hang_lost's fields: its id, its process and number from the id, its start (the id's
 * stamp, to the ms) and the bytes written. */
static void check_lost(cJSON *e, const char *id, int with_first_sample) {
  CHECK(strcmp(cJSON_GetObjectItem(e, "report_id")->valuestring, id) == 0);
  CHECK(cJSON_GetObjectItem(e, "hang_id")->valuedouble == 1);
  CHECK(cJSON_GetObjectItem(e, "pid")->valuedouble > 0);
  int64_t stamp = 0;
  CHECK(lagscope__utc_stamp_read(id, &stamp));
  CHECK_MSG(cJSON_GetObjectItem(e, "start_wall_ms")->valuedouble == (double)stamp,
            "start %f, the id says %lld", cJSON_GetObjectItem(e, "start_wall_ms")->valuedouble,
            (long long)stamp);
  CHECK(strstr(cJSON_GetObjectItem(e, "message")->valuestring, "is lost") != NULL);
  cJSON *first = cJSON_GetObjectItem(e, "first_sample");
  if (!with_first_sample) {
    CHECK_MSG(cJSON_IsNull(first), "a first sample from a cut head: %s", told);
    return;
  }
  CHECK_MSG(cJSON_IsObject(first), "no first sample: %s", told);
  CHECK(cJSON_IsNumber(cJSON_GetObjectItem(first, "t_ms")));
  CHECK(cJSON_IsString(cJSON_GetObjectItem(first, "state")));
  cJSON *stack = cJSON_GetObjectItem(first, "stack");
  CHECK(cJSON_IsArray(stack) && cJSON_GetArraySize(stack) > 0);
  char *text = cJSON_PrintUnformatted(stack);
  CHECK_MSG(strstr(text, "killed_writer_stall") != NULL, "first sample: %s", text);
  free(text);
}

static void test_created(void) {
  kill_at = "write";
  run_child();
  char id[200];
  cJSON *e = next_start(LAGSCOPE_EVENT_HANG_LOST, id, sizeof(id));
  check_lost(e, id, 0);
  CHECK(cJSON_GetObjectItem(e, "bytes")->valuedouble == 0);
  cJSON_Delete(e);
}

static void test_cut_head(void) {
  kill_at = "sync";
  cut_in_head = 1;
  run_child();
  char id[200];
  cJSON *e = next_start(LAGSCOPE_EVENT_HANG_LOST, id, sizeof(id));
  check_lost(e, id, 0);
  CHECK(cJSON_GetObjectItem(e, "bytes")->valuedouble == 40);
  cJSON_Delete(e);
}

static void test_cut_body(void) {
  kill_at = "sync";
  cut_after_head = 1;
  run_child();
  char id[200];
  cJSON *e = next_start(LAGSCOPE_EVENT_HANG_LOST, id, sizeof(id));
  check_lost(e, id, 1);
  cJSON_Delete(e);
}

/* A hang_recovered event's own fields (not only its report's): the cause as a hang_ended's
 * (kind, summary, label) and the heaviest stack, with the function the main thread was in. */
static void check_event_cause(cJSON *e) {
  cJSON *cause = cJSON_GetObjectItem(e, "cause");
  CHECK_MSG(cJSON_IsObject(cause), "the event has no cause: %.400s", told);
  cJSON *summary = cJSON_GetObjectItem(cause, "summary");
  CHECK_MSG(cJSON_IsString(summary) && summary->valuestring[0] != '\0', "cause: %.400s", told);
  CHECK(strcmp(cJSON_GetObjectItem(cause, "kind")->valuestring, "cpu") == 0);
  CHECK(cJSON_IsString(cJSON_GetObjectItem(cause, "label")));
  cJSON *stack = cJSON_GetObjectItem(e, "heaviest_stack");
  CHECK_MSG(cJSON_IsArray(stack), "the event has no heaviest_stack: %.400s", told);
  char *text = cJSON_PrintUnformatted(stack);
  CHECK_MSG(strstr(text, "killed_writer_stall") != NULL, "the event's stack: %.400s", text);
  free(text);
  CHECK(cJSON_IsString(cJSON_GetObjectItem(e, "signature")));
  /* and to the app's callback, as lagscope_report_cause and lagscope_report_heaviest_stack */
  cJSON *c = cJSON_Parse(told_cause);
  CHECK_MSG(cJSON_IsObject(c) && cJSON_IsString(cJSON_GetObjectItem(c, "summary")),
            "lagscope_report_cause: \"%.300s\"", told_cause);
  cJSON_Delete(c);
  CHECK_MSG(told_stack[0] == '[' && strstr(told_stack, "killed_writer_stall") != NULL,
            "lagscope_report_heaviest_stack: \"%.300s\"", told_stack);
}

/* A whole report in the temporary file: the hang, recovered as any killed while hung. */
static void check_recovered(void) {
  char id[200];
  cJSON *e = next_start(LAGSCOPE_EVENT_HANG_RECOVERED, id, sizeof(id));
  CHECK(strcmp(cJSON_GetObjectItem(e, "report_id")->valuestring, id) == 0);
  cJSON *report = cJSON_Parse(told_report);
  CHECK_MSG(report != NULL, "the event's report: %.300s", told_report);
  CHECK(strcmp(cJSON_GetObjectItem(report, "state")->valuestring, "ended_by_termination") == 0);
  char *stack = cJSON_PrintUnformatted(cJSON_GetObjectItem(report, "heaviest_stack"));
  CHECK_MSG(strstr(stack, "killed_writer_stall") != NULL, "heaviest stack: %s", stack);
  free(stack);
  cJSON *cause = cJSON_GetObjectItem(report, "cause");
  CHECK_MSG(cJSON_IsObject(cause) && strcmp(cJSON_GetObjectItem(cause, "kind")->valuestring,
                                            "cpu") == 0, "cause: %.300s", told_report);
  printf("recovered: %s\n", cJSON_GetObjectItem(cause, "summary")->valuestring);
  cJSON_Delete(report);
  check_event_cause(e);
  char name[256], path[600];
  snprintf(name, sizeof(name), "%s.json", id);
  test_path_in(path, sizeof(path), reports, name);
  CHECK(strcmp(cJSON_GetObjectItem(e, "report_path")->valuestring, path) == 0);
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "no report %s", path);
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[len] = '\0';
  CHECK_MSG(strstr(text, "\"state\":\"ended_by_termination\"") != NULL, "on disk: %.300s", text);
  cJSON_Delete(e);
}

static void test_written(void) {
  kill_at = "sync";
  run_child();
  check_recovered();
}

static void test_synced(void) {
  kill_at = "rename";
  run_child();
  check_recovered();
}

/* Killed while hung, its report written and in progress: the next start's hang_recovered
 * tells the stack and the cause, in the event itself (issue 45, item 6). */
static void test_killed_hung(void) {
  kill_at = "none"; /* the hook lets every write through */
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) child();
  char name[256] = "";
  uint64_t until = test_now_ns() + 20ull * 1000000000u;
  while (name[0] == '\0' && test_now_ns() < until) { /* the hang's report, in progress */
    DIR *d = opendir(reports);
    struct dirent *f;
    while (d != NULL && (f = readdir(d)) != NULL) {
      size_t n = strlen(f->d_name);
      if (n > 5 && f->d_name[0] != '.' && strcmp(f->d_name + n - 5, ".json") == 0)
        snprintf(name, sizeof(name), "%s", f->d_name);
    }
    if (d != NULL) closedir(d);
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  CHECK(kill(pid, SIGKILL) == 0);
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(name[0] != '\0', "the child wrote no report in %s", reports);
  CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
            "the child was not killed while hung (status %d)", status);
  cJSON *e = listen_once(LAGSCOPE_EVENT_HANG_RECOVERED, name);
  check_event_cause(e);
  printf("recovered: %s\n",
         cJSON_GetObjectItem(cJSON_GetObjectItem(e, "cause"), "summary")->valuestring);
  cJSON_Delete(e);
}

static const test_case cases[] = {
    TEST_CASE(created),
    TEST_CASE(cut_head),
    TEST_CASE(cut_body),
    TEST_CASE(written),
    TEST_CASE(synced),
    TEST_CASE(killed_hung),
};

int main(int argc, char **argv) {
  snprintf(root, sizeof(root), "/tmp/lagscope-killed-XXXXXX");
  CHECK(mkdtemp(root) != NULL);
  test_path_in(reports, sizeof(reports), root, "reports");
  int rc = run_test_case(argc, argv, cases, CASE_COUNT(cases));
  char command[600];
  snprintf(command, sizeof(command), "rm -rf '%s'", root);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", root);
  return rc;
}
