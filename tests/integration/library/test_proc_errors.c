/* A missing or odd /proc file gives an error event naming it, not a crash, and the monitor
 * goes on: the watchdog still finds hangs and metrics keep coming once the files are back. */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"
#include "internal.h"
#include "recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct errors {
  pthread_mutex_t lock;
  char messages[16][256];
  int codes[16];
  int len;
  recorder rec;
} errors;

static void on_event(const lagscope_event *e, void *user) {
  errors *x = user;
  recorder_on_event(e, &x->rec);
  if (e->type != LAGSCOPE_EVENT_ERROR) return;
  pthread_mutex_lock(&x->lock);
  if (x->len < 16) {
    snprintf(x->messages[x->len], sizeof(x->messages[0]), "%s", e->payload.message);
    x->codes[x->len++] = e->as.error.code;
  }
  pthread_mutex_unlock(&x->lock);
}

static int error_count(errors *x) {
  pthread_mutex_lock(&x->lock);
  int n = x->len;
  pthread_mutex_unlock(&x->lock);
  return n;
}

static int got_error(void *user) { return error_count(user) >= 1; }

static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* Runs lagscope against the folder until the first error event; returns it. */
static void expect_error(const char *root, int code, const char *mentions) {
  errors x;
  memset(&x, 0, sizeof(x));
  pthread_mutex_init(&x.lock, NULL);
  recorder_init(&x.rec);
  lagscope__process_set_root(root);
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.post_main = host_loop_post, c.post_main_user = loop;
  c.usage_interval_ms = 50;
  c.on_event = on_event, c.on_event_user = &x;
  c.log = NULL;
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* never a fixed port: 8080 may be taken */
  CHECK_EQ_INT(lagscope_start(&c), 0);
  CHECK(host_loop_run(loop, NULL, got_error, &x, 5));
  /* Five more samples with the same fault: said once, not every time. */
  int metrics = recorder_count(&x.rec, LAGSCOPE_EVENT_METRICS);
  while (recorder_count(&x.rec, LAGSCOPE_EVENT_METRICS) < metrics + 5)
    CHECK(host_loop_run(loop, NULL, NULL, NULL, 0.05) == 0);
  CHECK_EQ_INT(lagscope_stop(), 0);
  host_loop_free(loop);
  lagscope__process_set_root(NULL);
  printf("error event: %s: %s\n", lagscope_error_name(x.codes[0]), x.messages[0]);
  CHECK_EQ_INT(error_count(&x), 1);
  CHECK_EQ_INT(x.codes[0], code);
  CHECK(strstr(x.messages[0], mentions) != NULL);
  recorder_destroy(&x.rec);
}

int main(void) {
  char root[] = "/tmp/lagscope-proc-XXXXXX";
  CHECK(mkdtemp(root) != NULL);
  char path[600];

  /* 1. No task folder at all. */
  expect_error(root, LAGSCOPE_EPROC, "/task");

  /* 2. A thread whose stat is noise (memory readable). Only the samples that read every
   * thread's stat see it (the first, then one every 10 s); the others, between, do not clear
   * it: said once. */
  snprintf(path, sizeof(path), "%s/task", root);
  CHECK(mkdir(path, 0700) == 0);
  snprintf(path, sizeof(path), "%s/task/4242", root);
  CHECK(mkdir(path, 0700) == 0);
  write_file(path, "stat", "\x01\x02 garbage with no parentheses");
  write_file(root, "status", "Name: x\nVmRSS: 100 kB\n");
  expect_error(root, LAGSCOPE_EPARSE, "4242/stat");

  /* 3. Threads fine, memory files missing. */
  write_file(path, "stat", "4242 (main) S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1");
  snprintf(path, sizeof(path), "%s/status", root);
  CHECK(unlink(path) == 0);
  expect_error(root, LAGSCOPE_EPROC, "status");

  /* 4. Memory file present but odd. */
  write_file(root, "status", "Name: x\nVmRSS: lots\n");
  expect_error(root, LAGSCOPE_EPARSE, "VmRSS");

  /* Cleanup. */
  snprintf(path, sizeof(path), "rm -rf '%s'", root);
  CHECK(system(path) == 0);
  printf("proc_errors: ok\n");
  return 0;
}
