/*
 * window_overlay: lagscope's HUD overlay window (hud/linux/x11_overlay.c, lagscope_hud_overlay_x11)
 * under Xvfb, seen through screenshots of the X screen (tests/support/overlay_look.h).
 *
 *   demo_live_badge  the demo with its default --hud-mode (overlay on X11) stalls 2.5 s: the
 *                    overlay sits over its window's corner; during the stall two shots show
 *                    the red badge with two different counts while the rest of the window stays
 *                    the frame from before the stall (the main thread presents nothing); after
 *                    it, the HUD without a badge. Shots: out/overlay_demo_*.png.
 *   stuck_server     overlay_app shows the overlay over a window of the test's, then the X
 *                    server is stopped (SIGSTOP) while lagscope stops: lagscope_stop returns
 *                    within 1.5 s (the overlay's thread, stuck in a reply, is left behind and
 *                    said), the server resumes, the thread runs on without touching lagscope's
 *                    freed HUD (ASan would abort the program), and the program exits 0. Shot:
 *                    out/overlay_stuck_shown.png.
 *   server_died      overlay_app shows the overlay, then the X server is killed (SIGKILL): an
 *                    error event names the display lost, the program lives on (lagscope_stop
 *                    and its exit as usual) and spends next to no CPU meanwhile: the overlay's
 *                    thread ended, no spin on the dead socket (issue 42, item 8).
 *   closed_fds       overlay_app shows the overlay, then closes every descriptor from 3 up (its
 *                    X connection's among them) and opens files of its own on those numbers:
 *                    over the overlay's next passes (6 at least) lagscope writes nothing into
 *                    them and closes none, and the overlay is still shown (issue 42, item 2).
 *
 * Usage: window_overlay CASE (paths come from the build).
 */
#define _GNU_SOURCE

#include "cases.h"
#include "check.h"
#include "demo_env.h"
#include "overlay_look.h"
#include "spawn.h"
#include "xvfb.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAIT_MS 10000
#define SKIP 77

static spawn_proc xvfb;
static char display[32];

static void skip_without(const char *path) {
  if (access(path, X_OK) == 0) return;
  printf("SKIP: %s is not built\n", path);
  exit(SKIP);
}

static void with_screen(void) {
  char why[4096];
  CHECK_MSG(xvfb_start(&xvfb, WINDOW_XVFB_PATH, display, sizeof display, WAIT_MS, why, sizeof why) == 0,
            "%s", why);
  setenv("DISPLAY", display, 1);
  unsetenv("WAYLAND_DISPLAY");
  printf("Xvfb on display %s\n", display);
}

static void save(const shot *s, const char *name) {
  char path[4096];
  CHECK_MSG(mkdir(WINDOW_OUT, 0755) == 0 || errno == EEXIST, "cannot make %s", WINDOW_OUT);
  snprintf(path, sizeof path, "%s/%s", WINDOW_OUT, name);
  CHECK_MSG(shot_save_png(s, path) == 0, "could not write %s", path);
  printf("saved %s\n", path);
}

/* ---- the demo ------------------------------------------------------------------------------- */

typedef struct demo_run {
  spawn_proc p;
  int hang_began, hang_ended;
} demo_run;

/* The next line of the demo's stdout within timeout_ms, hangs counted; NULL on timeout. */
static cJSON *read_event(demo_run *r, int timeout_ms) {
  int result;
  char line[SPAWN_BUFFER];
  cJSON *json = spawn_read_json(&r->p, timeout_ms, &result, line, sizeof line);
  if (result == SPAWN_TIMEOUT) return NULL;
  CHECK_MSG(result == SPAWN_LINE && json != NULL, "the demo's stdout: result %d: %s", result, line);
  const char *type = spawn_json_type(json);
  CHECK_MSG(type != NULL, "no type: %s", line);
  if (strcmp(type, "metrics") != 0) printf("demo: %.200s\n", line);
  r->hang_began += strcmp(type, "hang_began") == 0;
  r->hang_ended += strcmp(type, "hang_ended") == 0;
  return json;
}

/* The lines written so far, without waiting. */
static void read_pending(demo_run *r) {
  cJSON *json;
  while ((json = read_event(r, 0)) != NULL) cJSON_Delete(json);
}

static cJSON *wait_for(demo_run *r, const char *type) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    uint64_t now = spawn_now_ns();
    CHECK_MSG(now < deadline, "no %s line within %d ms", type, WAIT_MS);
    cJSON *json = read_event(r, (int)((deadline - now) / 1000000u) + 1);
    if (json == NULL) continue;
    if (strcmp(spawn_json_type(json), type) == 0) return json;
    cJSON_Delete(json);
  }
}

static void test_demo_live_badge(void) {
  skip_without(WINDOW_DEMO_PATH);
  with_screen();
  demo_env_for_window();
  /* The default --hud-mode: the overlay, SDL's window being an X11 one. */
  char *args[] = {WINDOW_DEMO_PATH, "--port", "0", "--bind", "127.0.0.1", "--events", "jsonl",
                  "--stall-every", "3", "--stall-ms", "2500", "--duration", "7", "--hud-corner", "tl",
                  NULL}; /* the corner where the shots look */
  demo_run r = {0};
  CHECK(spawn_start(&r.p, WINDOW_DEMO_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  cJSON *started = wait_for(&r, "demo_started");
  CHECK_MSG(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(started, "headless")),
            "the demo runs headless: no window under Xvfb");
  cJSON_Delete(started);

  Display *d = screen_open(display, WAIT_MS);
  CHECK_MSG(d != NULL, "cannot open display %s", display);
  Window app = screen_await_window(d, "lagscope-demo", WAIT_MS);
  CHECK_MSG(app != 0, "no window titled lagscope-demo");
  overlay_await(d, app, 1, WAIT_MS);
  printf("the overlay is over the demo's window, 8 px from its corner\n");
  const char *fail = WINDOW_OUT "/overlay_demo_not_as_awaited.png";
  shot before, during1, during2, after, frame1, frame2;
  overlay_await_shot(d, app, overlay_hud_shown, NULL, &before, "the HUD", WAIT_MS, fail);
  save(&before, "overlay_demo_1_before.png");

  cJSON_Delete(wait_for(&r, "hang_began"));
  overlay_await_shot(d, app, overlay_badge_shown, NULL, &during1, "the hang badge", WAIT_MS, fail);
  CHECK(screen_shot(d, app, &frame1) == 0);
  overlay_await_shot(d, app, overlay_badge_counted_on, &during1, &during2,
                     "the badge counting on", WAIT_MS, fail);
  CHECK(screen_shot(d, app, &frame2) == 0);
  read_pending(&r);
  CHECK_MSG(r.hang_ended == 0, "the second shot came after the stall");
  save(&frame1, "overlay_demo_2_hang_1.png");
  save(&frame2, "overlay_demo_3_hang_2.png");
  /* The window's own pixels, the HUD's corner aside: the frame from before the stall in both. */
  long changed = shot_diff(&frame1, &frame2, overlay_hud_area, 1);
  long badge_changed = shot_diff(&during1, &during2, overlay_header, 0);
  printf("during the stall: the badge's header changed %ld px, the rest of the window %ld px\n",
         badge_changed, changed);
  CHECK_MSG(changed == 0, "the demo's frame changed during the stall (%ld px)", changed);

  cJSON_Delete(wait_for(&r, "hang_ended"));
  overlay_await_shot(d, app, overlay_hud_shown, NULL, &after, "the HUD without a badge", WAIT_MS,
                     fail);
  save(&after, "overlay_demo_4_after.png");
  shot_free(&before);
  shot_free(&during1);
  shot_free(&during2);
  shot_free(&after);
  shot_free(&frame1);
  shot_free(&frame2);

  cJSON *json;
  int result = SPAWN_TIMEOUT;
  char line[SPAWN_BUFFER];
  while ((json = spawn_read_json(&r.p, WAIT_MS, &result, line, sizeof line)) != NULL ||
         result == SPAWN_LINE)
    cJSON_Delete(json);
  CHECK_MSG(result == SPAWN_EOF, "reading the demo's stdout: result %d", result);
  int code = spawn_wait(&r.p, WAIT_MS);
  char err[16384];
  spawn_stderr(&r.p, err, sizeof err);
  printf("the demo's stderr:\n%s", err);
  CHECK_MSG(code == 0, "the demo exited with %d", code);
  CHECK(strstr(err, "the HUD is in lagscope's overlay window") != NULL);
  spawn_close(&r.p);
  XCloseDisplay(d);
  xvfb_stop(&xvfb);
}

/* ---- a stuck X server --------------------------------------------------------------------------- */

static void test_stuck_server(void) {
  with_screen();
  Display *d = screen_open(display, WAIT_MS);
  CHECK_MSG(d != NULL, "cannot open display %s", display);
  /* The test's own window, mid grey (neither the HUD's dark panel nor its light text). */
  Window w = XCreateSimpleWindow(d, DefaultRootWindow(d), 60, 60, 400, 300, 0, 0, 0x808080);
  XStoreName(d, w, "overlay_app");
  XMapWindow(d, w);
  XSync(d, False);
  CHECK(screen_await_window(d, "overlay_app", WAIT_MS) == w);

  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)w);
  char *args[] = {WINDOW_OVERLAY_APP_PATH, id, NULL};
  spawn_proc app;
  CHECK(spawn_start(&app, WINDOW_OVERLAY_APP_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  int result;
  cJSON *json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "overlay") == 0, "no overlay line");
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  overlay_await(d, w, 1, WAIT_MS);
  shot s;
  overlay_await_shot(d, w, overlay_hud_shown, NULL, &s, "the HUD", WAIT_MS,
                     WINDOW_OUT "/overlay_stuck_not_as_awaited.png");
  save(&s, "overlay_stuck_shown.png");
  shot_free(&s);

  /* The server stops answering; the overlay's next pass (every 250 ms) waits for a reply. */
  XSync(d, False);
  CHECK(kill(xvfb.pid, SIGSTOP) == 0);
  spawn_sleep_ms(700);
  uint64_t asked = spawn_now_ns();
  CHECK(spawn_signal(&app, SIGUSR1) == 0);
  json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  double waited_ms = (double)(spawn_now_ns() - asked) / 1e6;
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "stopped") == 0, "no stopped line");
  double stop_ms = spawn_json_number(json, "ms", -1);
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  printf("with the X server stopped, lagscope_stop took %.0f ms (%.0f ms seen from here)\n",
         stop_ms, waited_ms);
  CHECK_MSG(stop_ms >= 0 && stop_ms <= 1500, "lagscope_stop took %.0f ms", stop_ms);

  /* The server answers again: the thread left behind gets its reply and runs on, then ends. */
  CHECK(kill(xvfb.pid, SIGCONT) == 0);
  spawn_sleep_ms(800);
  CHECK(spawn_signal(&app, SIGUSR2) == 0);
  int code = spawn_wait(&app, WAIT_MS);
  char err[16384];
  spawn_stderr(&app, err, sizeof err);
  printf("overlay_app's stderr:\n%s", err);
  CHECK_MSG(code == 0, "overlay_app exited with %d", code);
  CHECK_MSG(strstr(err, "left behind") != NULL, "the thread left behind was not said");
  spawn_close(&app);
  overlay_await(d, w, 0, WAIT_MS); /* its connection closed with the program */
  XCloseDisplay(d);
  xvfb_stop(&xvfb);
}

/* The program's CPU time so far (utime + stime from /proc), in ms. */
static double cpu_ms(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "no %s: the program is gone", path);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *after = strrchr(text, ')'); /* the name may hold spaces */
  CHECK(after != NULL);
  char state;
  unsigned long long utime, stime;
  CHECK(sscanf(after + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &utime,
               &stime) == 3);
  CHECK_MSG(state != 'Z', "the program is a zombie: it died");
  return (double)(utime + stime) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* The next line of overlay_app's of the given type; its error events on the way are kept in
 * errors. */
static cJSON *read_type(spawn_proc *app, const char *type, char *errors, size_t size) {
  for (;;) {
    int result;
    cJSON *json = spawn_read_json(app, WAIT_MS, &result, NULL, 0);
    CHECK_MSG(json != NULL, "no %s line", type);
    if (strcmp(spawn_json_type(json), type) == 0) return json;
    if (strcmp(spawn_json_type(json), "error") == 0) {
      cJSON *message = cJSON_GetObjectItemCaseSensitive(json, "message");
      size_t used = strlen(errors);
      snprintf(errors + used, size - used, "%s\n",
               cJSON_IsString(message) ? message->valuestring : "?");
    }
    cJSON_Delete(json);
  }
}

static void test_server_died(void) {
  with_screen();
  Display *d = screen_open(display, WAIT_MS);
  CHECK_MSG(d != NULL, "cannot open display %s", display);
  Window w = XCreateSimpleWindow(d, DefaultRootWindow(d), 60, 60, 400, 300, 0, 0, 0x808080);
  XStoreName(d, w, "overlay_app");
  XMapWindow(d, w);
  XSync(d, False);
  CHECK(screen_await_window(d, "overlay_app", WAIT_MS) == w);
  char id[32], errors[8192] = "";
  snprintf(id, sizeof id, "%lu", (unsigned long)w);
  char *args[] = {WINDOW_OVERLAY_APP_PATH, id, NULL};
  spawn_proc app;
  CHECK(spawn_start(&app, WINDOW_OVERLAY_APP_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  cJSON *json = read_type(&app, "overlay", errors, sizeof errors);
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  overlay_await(d, w, 1, WAIT_MS);
  XCloseDisplay(d); /* the test's own connection goes first: Xlib would exit on its loss */

  /* The X server dies under the overlay. */
  CHECK(kill(xvfb.pid, SIGKILL) == 0);
  uint64_t died = spawn_now_ns();
  xvfb_stop(&xvfb);
  /* Said within a few periods of the overlay's (250 ms): awaited through the stop below,
   * after a second and a half in which the program must stay alive and nearly idle. */
  spawn_sleep_ms(500);
  double before = cpu_ms(app.pid);
  spawn_sleep_ms(1000);
  double spent = cpu_ms(app.pid) - before;
  printf("overlay_app's CPU in the second after the X server died: %.0f ms\n", spent);
  CHECK_MSG(spent < 200, "overlay_app spent %.0f ms of CPU in a second: a spin", spent);
  CHECK(spawn_signal(&app, SIGUSR1) == 0);
  json = read_type(&app, "stopped", errors, sizeof errors);
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  printf("error events from overlay_app (%.0f ms after the server died):\n%s",
         (double)(spawn_now_ns() - died) / 1e6, errors);
  char named[64];
  snprintf(named, sizeof named, "no HUD overlay on display %s: ", display);
  CHECK_MSG(strstr(errors, named) != NULL && strstr(errors, "X server was lost") != NULL,
            "no error event said that display %s was lost", display);
  CHECK(spawn_signal(&app, SIGUSR2) == 0);
  int code = spawn_wait(&app, WAIT_MS);
  CHECK_MSG(code == 0, "overlay_app exited with %d", code);
  spawn_close(&app);
}

static void test_closed_fds(void) {
  with_screen();
  Display *d = screen_open(display, WAIT_MS);
  CHECK_MSG(d != NULL, "cannot open display %s", display);
  Window w = XCreateSimpleWindow(d, DefaultRootWindow(d), 60, 60, 400, 300, 0, 0, 0x808080);
  XStoreName(d, w, "overlay_app");
  XMapWindow(d, w);
  XSync(d, False);
  CHECK(screen_await_window(d, "overlay_app", WAIT_MS) == w);
  char folder[] = "/tmp/lagscope-overlay-fds-XXXXXX";
  CHECK(mkdtemp(folder) != NULL);
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)w);
  char *args[] = {WINDOW_OVERLAY_APP_PATH, id, folder, NULL};
  spawn_proc app;
  CHECK(spawn_start(&app, WINDOW_OVERLAY_APP_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  int result;
  cJSON *json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "overlay") == 0, "no overlay line");
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  overlay_await(d, w, 1, WAIT_MS);

  CHECK(spawn_signal(&app, SIGUSR1) == 0);
  json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "closed") == 0, "no closed line");
  cJSON_Delete(json);
  /* Nothing to await: what is checked is that nothing happens to the app's files while the
   * overlay makes its passes (every 250 ms, each a request at least). */
  spawn_sleep_ms(1500);
  overlay_await(d, w, 1, WAIT_MS);
  CHECK(spawn_signal(&app, SIGUSR1) == 0);
  json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "stopped") == 0, "no stopped line");
  CHECK_EQ_INT(spawn_json_number(json, "rc", -1), 0);
  cJSON_Delete(json);
  json = spawn_read_json(&app, WAIT_MS, &result, NULL, 0);
  CHECK_MSG(json != NULL && strcmp(spawn_json_type(json), "files") == 0, "no files line");
  double written = spawn_json_number(json, "written", -1), closed = spawn_json_number(json, "closed", -1);
  cJSON_Delete(json);
  printf("lagscope wrote %.0f bytes into the app's files and closed %.0f of them\n", written, closed);
  CHECK(spawn_signal(&app, SIGUSR2) == 0);
  int code = spawn_wait(&app, WAIT_MS);
  char err[16384];
  spawn_stderr(&app, err, sizeof err);
  printf("overlay_app's stderr:\n%s", err);
  CHECK_MSG(written == 0, "lagscope wrote %.0f bytes into the app's files", written);
  CHECK_MSG(closed == 0, "lagscope closed %.0f of the app's files", closed);
  CHECK_MSG(code == 0, "overlay_app exited with %d", code);
  spawn_close(&app);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", folder);
  CHECK(system(command) == 0);
  XCloseDisplay(d);
  xvfb_stop(&xvfb);
}

static const test_case cases[] = {
    TEST_CASE(demo_live_badge),
    TEST_CASE(stuck_server),
    TEST_CASE(server_died),
    TEST_CASE(closed_fds),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
