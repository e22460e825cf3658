/* lagscope-run on programs that know nothing of lagscope, under Xvfb: the tests' own GTK
 * program that stalls 700 ms in a g_timeout_add callback (one hang naming the callback, exit 3
 * over a 500 ms budget, JUnit XML that names it), the same program without a stall (exit 0),
 * the tests' own SDL2 program idle in SDL_WaitEvent around a 600 ms stall (that one hang only),
 * and Debian's own programs: glxgears (frames counted), gtk3-widget-factory (10 s idle, no
 * hang), SDL2's testsprite2 (frames counted); then the exit status, the environment the
 * program's children see, and bad options.
 *
 * Usage: test_attach CASE (paths come from the build: LAGSCOPE_RUN_PATH and the others). */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "spawn.h"
#include "xvfb.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAIT_MS 30000
#define SKIP 77

static spawn_proc xvfb;
static char folder[256];    /* this case's temporary folder */
static char events[320];    /* --events FILE */
static char junit[320];     /* --junit FILE */

static void make_folder(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(folder, sizeof folder, "%s/lagscope-attach-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  CHECK(mkdtemp(folder) != NULL);
  snprintf(events, sizeof events, "%s/events.jsonl", folder);
  snprintf(junit, sizeof junit, "%s/hangs.xml", folder);
}

static void remove_folder(void) {
  unlink(events);
  unlink(junit);
  rmdir(folder);
}

/* A virtual screen for the case: DISPLAY points at it. */
static void with_screen(void) {
  char display[32], why[4096];
  CHECK_MSG(xvfb_start(&xvfb, LAGSCOPE_XVFB_PATH, display, sizeof display, WAIT_MS, why, sizeof why) == 0,
            "%s", why);
  setenv("DISPLAY", display, 1);
  unsetenv("WAYLAND_DISPLAY");
}

static void skip_without(const char *path) {
  if (access(path, X_OK) == 0) return;
  printf("SKIP: %s is not installed\n", path);
  exit(SKIP);
}

/* The events file's lines, parsed (lines that are not JSON objects fail the test). */
static cJSON *read_events(void) {
  cJSON *all = cJSON_CreateArray();
  FILE *in = fopen(events, "r");
  if (in == NULL) return all;
  char *line = NULL;
  size_t size = 0;
  while (getline(&line, &size, in) > 0) {
    cJSON *json = cJSON_Parse(line);
    CHECK_MSG(cJSON_IsObject(json), "not a JSON object in %s: %.200s", events, line);
    cJSON_AddItemToArray(all, json);
  }
  free(line);
  fclose(in);
  return all;
}

static int count_type(const cJSON *all, const char *type) {
  int n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) n += strcmp(spawn_json_type(e), type) == 0;
  return n;
}

static const cJSON *last_of_type(const cJSON *all, const char *type) {
  const cJSON *e, *found = NULL;
  cJSON_ArrayForEach(e, all) if (strcmp(spawn_json_type(e), type) == 0) found = e;
  return found;
}

/* Waits until the events file holds n metrics lines (at most WAIT_MS). */
static void await_metrics(int n) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, "metrics");
    cJSON_Delete(all);
    if (got >= n) return;
    CHECK_MSG(spawn_now_ns() < deadline, "only %d of %d metrics lines in %d ms", got, n, WAIT_MS);
    spawn_sleep_ms(50);
  }
}

/* lagscope-run's arguments: the viewer on loopback, port 0; the case's events file; extra;
 * "--"; the program's. Returns argv (static). */
static char **run_args(char *const extra[], char *const program[]) {
  static char *argv[64];
  int n = 0;
  char *fixed[] = {LAGSCOPE_RUN_PATH, "--port", "0", "--bind", "127.0.0.1", "--events", events};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) argv[n++] = fixed[i];
  for (int i = 0; extra != NULL && extra[i] != NULL; i++) argv[n++] = extra[i];
  argv[n++] = "--";
  for (int i = 0; program[i] != NULL; i++) argv[n++] = program[i];
  argv[n] = NULL;
  return argv;
}

/* Runs lagscope-run to its end; its exit code, its stderr in err. */
static int run_to_end(char *const extra[], char *const program[], char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  int code = spawn_wait(&p, WAIT_MS);
  spawn_stderr(&p, err, size);
  spawn_close(&p);
  printf("lagscope-run exited %d; its stderr:\n%s\n", code, err);
  return code;
}

/* Runs a program that does not end by itself until n metrics lines came, then SIGTERM to
 * lagscope-run, which passes it on; returns lagscope-run's exit code. */
static int run_for_metrics(char *const program[], int n, char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  await_metrics(n);
  spawn_signal(&p, SIGTERM);
  int code = spawn_wait(&p, WAIT_MS);
  spawn_stderr(&p, err, size);
  spawn_close(&p);
  printf("lagscope-run exited %d; its stderr:\n%s\n", code, err);
  return code;
}

static int stack_has(const cJSON *stack, const char *function) {
  const cJSON *frame;
  cJSON_ArrayForEach(frame, stack) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
    if (cJSON_IsString(f) && strcmp(f->valuestring, function) == 0) return 1;
  }
  return 0;
}

static char *read_file(const char *path) {
  FILE *in = fopen(path, "r");
  CHECK_MSG(in != NULL, "no file %s", path);
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, in);
  text[n] = '\0';
  fclose(in);
  return text;
}

/* No hang began, and the watchdog found nothing wrong with the hooks. */
static void check_no_hang(const cJSON *all) {
  CHECK_EQ_INT(count_type(all, "hang_began"), 0);
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "error") != 0) continue;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
    CHECK_MSG(!cJSON_IsString(code) || (strcmp(code->valuestring, "ELOST") != 0 &&
                                        strcmp(code->valuestring, "ETHREAD") != 0),
              "the watchdog found a hook wrong: %s", cJSON_PrintUnformatted(e));
  }
}

/* The frames the last metrics line counted since the start. */
static double frames_counted(const cJSON *all) {
  return spawn_json_number(last_of_type(all, "metrics"), "total_frames", -1);
}

/* ---- the cases ---------------------------------------------------------------------------- */

static void test_gtk_stall_over_budget(void) {
  make_folder();
  with_screen();
  char *extra[] = {"--budget-ms", "500", "--junit", junit, NULL};
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "700", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(extra, program, err, sizeof err), 3);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  /* A lower bound of the 700 ms stall: from the ping's post, at most a ping interval late. */
  CHECK_MSG(ms >= 600 && ms <= 2000, "hang of %.1f ms for a 700 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "attach_stall_callback"));
  CHECK(strstr(err, "1 hang, 1 over the budget of 500 ms") != NULL);
  CHECK(strstr(err, "attach_stall_callback (gtk_stall.c:") != NULL);
  CHECK(strstr(err, "viewer: http://127.0.0.1:") != NULL);
  const char *xml = read_file(junit);
  CHECK(strstr(xml, "<testsuite name=\"gtk_stall\" tests=\"1\" failures=\"1\">") != NULL);
  CHECK(strstr(xml, "<failure type=\"hang\"") != NULL);
  CHECK(strstr(xml, "attach_stall_callback") != NULL);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

static void test_gtk_clean_within_budget(void) {
  make_folder();
  with_screen();
  char *extra[] = {"--budget-ms", "500", "--junit", junit, NULL};
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "0", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(extra, program, err, sizeof err), 0);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 1, "GTK's frames were not counted (%.0f)", frames_counted(all));
  CHECK(strstr(err, "gtk_stall: no hang") != NULL);
  const char *xml = read_file(junit);
  CHECK(strstr(xml, "failures=\"0\"") != NULL);
  CHECK(strstr(xml, "name=\"no hang over 500 ms\"") != NULL);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

static void test_glxgears_frames(void) {
  skip_without(LAGSCOPE_GLXGEARS_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GLXGEARS_PATH, NULL};
  char err[16384];
  /* SIGTERM passed on: glxgears dies of it, and lagscope-run says so the shell's way. */
  CHECK_EQ_INT(run_for_metrics(program, 4, err, sizeof err), 128 + SIGTERM);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f glXSwapBuffers frames counted", frames_counted(all));
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

static void test_widget_factory_idle(void) {
  skip_without(LAGSCOPE_WIDGET_FACTORY_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_WIDGET_FACTORY_PATH, NULL};
  char err[16384];
  /* 20 metrics lines: 10 s of an idle GTK application answering pings through GLib. */
  CHECK_EQ_INT(run_for_metrics(program, 20, err, sizeof err), 128 + SIGTERM);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK(frames_counted(all) >= 1);
  CHECK(strstr(err, "no hang") != NULL);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

static void test_sdl_testsprite_frames(void) {
  skip_without(LAGSCOPE_TESTSPRITE_PATH);
  make_folder();
  with_screen();
  /* testsprite2 loads icon.bmp from where it runs. */
  char dir[512];
  snprintf(dir, sizeof dir, "%s", LAGSCOPE_TESTSPRITE_PATH);
  *strrchr(dir, '/') = '\0';
  CHECK(chdir(dir) == 0);
  char *program[] = {LAGSCOPE_TESTSPRITE_PATH, NULL};
  char err[16384];
  /* SDL turns SIGTERM into SDL_QUIT: testsprite2 ends cleanly, and that status comes back. */
  CHECK_EQ_INT(run_for_metrics(program, 4, err, sizeof err), 0);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f SDL_RenderPresent frames counted", frames_counted(all));
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* SDL2: a main thread blocked in SDL_WaitEvent for 2 s, twice, is idle; the 600 ms stall
 * between is the one hang. */
static void test_sdl_wait_idle_then_stall(void) {
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_SDL_WAIT_PATH, "--wait-ms", "2000", "--stall-ms", "600", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_began"), 1);
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  CHECK_MSG(ms >= 500 && ms <= 1500, "hang of %.1f ms for a 600 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "attach_sdl_stall"));
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* The program's exit status comes back; its children see neither the preload nor its settings,
 * and an LD_PRELOAD of the user's stays; a program without a loop the hooks know is told. */
static void test_exit_status_and_environment(void) {
  make_folder();
  char env_out[320];
  snprintf(env_out, sizeof env_out, "%s/env.txt", folder);
  setenv("LD_PRELOAD", "libm.so.6", 1);
  char script[512];
  snprintf(script, sizeof script, "env > %s; exit 7", env_out);
  char *program[] = {"/bin/sh", "-c", script, NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 7);
  const char *env = read_file(env_out);
  CHECK_MSG(strstr(env, "LAGSCOPE_RUN_") == NULL, "a setting reached the child:\n%s", env);
  CHECK_MSG(strstr(env, "lagscope-preload") == NULL, "the preload reached the child:\n%s", env);
  CHECK_MSG(strstr(env, "LD_PRELOAD=libm.so.6\n") != NULL, "the user's LD_PRELOAD was lost:\n%s", env);
  CHECK(strstr(err, "no GLib, SDL2, OpenGL (glX, EGL) or Xlib loop was seen in sh") != NULL);
  unlink(env_out);
  remove_folder();
}

static void test_bad_options(void) {
  struct {
    char *argv[8];
    int code;
    const char *says;
  } runs[] = {
      {{LAGSCOPE_RUN_PATH, "--budget-ms", "abc", "--", "true", NULL}, 2, "bad value: --budget-ms abc"},
      {{LAGSCOPE_RUN_PATH, "--port", "70000", "--", "true", NULL}, 2, "bad value: --port 70000"},
      {{LAGSCOPE_RUN_PATH, "--frobnicate", "--", "true", NULL}, 2, "unknown option: --frobnicate"},
      {{LAGSCOPE_RUN_PATH, "--events", NULL}, 2, "option needs a value: --events"},
      {{LAGSCOPE_RUN_PATH, "--no-server", NULL}, 2, "no program to run"},
      {{LAGSCOPE_RUN_PATH, "--no-server", "--", "/nonexistent/program", NULL}, 127,
       "cannot run /nonexistent/program: No such file or directory"},
      {{LAGSCOPE_RUN_PATH, "--no-server", "--junit", "/nonexistent/dir/hangs.xml", "--", "true", NULL},
       1, "cannot write /nonexistent/dir/hangs.xml"},
  };
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    spawn_proc p;
    CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, runs[i].argv, SPAWN_CAPTURE_STDERR) == 0);
    int code = spawn_wait(&p, WAIT_MS);
    char err[4096];
    spawn_stderr(&p, err, sizeof err);
    spawn_close(&p);
    CHECK_MSG(code == runs[i].code, "run %zu: exit %d, not %d: %s", i, code, runs[i].code, err);
    CHECK_MSG(strstr(err, runs[i].says) != NULL, "run %zu said: %s", i, err);
  }
}

static const test_case cases[] = {
    TEST_CASE(gtk_stall_over_budget),
    TEST_CASE(gtk_clean_within_budget),
    TEST_CASE(glxgears_frames),
    TEST_CASE(widget_factory_idle),
    TEST_CASE(sdl_testsprite_frames),
    TEST_CASE(sdl_wait_idle_then_stall),
    TEST_CASE(exit_status_and_environment),
    TEST_CASE(bad_options),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
