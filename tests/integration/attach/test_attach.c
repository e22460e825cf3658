/* lagscope-run on programs that know nothing of lagscope, under Xvfb: the tests' own GTK
 * program that stalls 1200 ms in a g_timeout_add callback (one hang naming the callback, exit 3
 * over a 500 ms budget, JUnit XML that names it), the same program without a stall (exit 0),
 * the tests' own SDL2 program idle in SDL_WaitEvent around a 600 ms stall (that one hang only),
 * the tests' own SDL_Renderer program that relies on renderer state it set once (the HUD
 * drawn, the rest of its frame as it draws alone),
 * the tests' own Qt 5 program stalling 700 ms in a QTimer (one hang: Qt runs on GLib's loop),
 * and Debian's own programs: glxgears (frames counted, the HUD drawn into its frame and
 * compared with a reference, none with --no-hud), es2gears_x11 (the same over EGL), gtk3-demo (a
 * modal dialog's nested loop for 10 s, then every window unmapped: no hang), gtk3-widget-factory (10 s idle, no
 * hang), SDL2's testsprite2 (frames counted; the HUD drawn through its SDL_Renderer, every
 * other pixel of its frame as it draws alone), SDL2's testvulkan (no HUD there, said once),
 * l3afpad opening FIFOs through its Open dialog (one hang in two phases, read() then openat(),
 * and one in openat() alone, each told alike by the event, report, viewer, summary and JUnit);
 * the display's rate read from RandR (Xvfb set to a 75 Hz mode: the metrics say 75); then the
 * exit status, the environment the
 * program's children see, and bad options.
 *
 * Usage: test_attach CASE (paths come from the build: LAGSCOPE_RUN_PATH and the others). */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "spawn.h"
#include "overlay_look.h"
#include "screen.h"
#include "xvfb.h"

#include <X11/Xatom.h>
#include <cairo.h>
#if LAGSCOPE_ATTACH_RANDR
#include <xcb/randr.h>
#include <xcb/xcb.h>
#endif

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 30000
#define OVERLAY_WAIT_MS 6000 /* within the program's 8 s after its stall */
#define SKIP 77
/* The share of the HUD's pixels, its FPS figure left out, that must match the reference within
 * 16 levels per channel: measured 100 % with the HUD over black, 98.9 % with a gear's edge
 * behind it, 1.7 % without it. */
#define HUD_MATCH 0.90

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

/* The case's folder and what its runs left in it (reports, their state files). */
static void remove_folder(void) {
  char command[400];
  snprintf(command, sizeof command, "rm -rf '%s'", folder);
  CHECK(system(command) == 0);
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

static int metrics_count(void) {
  cJSON *all = read_events();
  int got = count_type(all, "metrics");
  cJSON_Delete(all);
  return got;
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

/* Waits for lagscope-run to end and closes it: its exit code, its stderr in err (printed). */
static int wait_run(spawn_proc *p, char *err, size_t size) {
  int code = spawn_wait(p, WAIT_MS);
  spawn_stderr(p, err, size);
  spawn_close(p);
  printf("lagscope-run exited %d; its stderr:\n%s\n", code, err);
  return code;
}

/* Runs lagscope-run to its end; its exit code, its stderr in err. */
static int run_to_end(char *const extra[], char *const program[], char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  int code = wait_run(&p, err, size);
  return code;
}

/* Runs a program that does not end by itself until n metrics lines came, then calls look (if
 * given) while it still runs, then SIGTERM to lagscope-run, which passes it on; returns
 * lagscope-run's exit code. */
static int run_for_metrics(char *const extra[], char *const program[], int n, void (*look)(void),
                           char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  await_metrics(n);
  if (look != NULL) look();
  spawn_signal(&p, SIGTERM);
  int code = wait_run(&p, err, size);
  return code;
}

/* A frame of the stack is function (C), or function with its parameters (C++, demangled). */
static int stack_has(const cJSON *stack, const char *function) {
  const cJSON *frame;
  size_t n = strlen(function);
  cJSON_ArrayForEach(frame, stack) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
    if (cJSON_IsString(f) && strncmp(f->valuestring, function, n) == 0 &&
        (f->valuestring[n] == '\0' || f->valuestring[n] == '('))
      return 1;
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

/* The watchdog found nothing wrong with the hooks: no lost ping, no answer off the main
 * thread. */
static void check_hooks_right(const cJSON *all) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "error") != 0) continue;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
    CHECK_MSG(!cJSON_IsString(code) || (strcmp(code->valuestring, "ELOST") != 0 &&
                                        strcmp(code->valuestring, "ETHREAD") != 0),
              "the watchdog found a hook wrong: %s", cJSON_PrintUnformatted(e));
  }
}

/* The wall clock in ms, as events' start_wall_ms (CLOCK_REALTIME). */
static int64_t wall_ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No hang began from since_wall_ms on, and the hooks were right. */
static void check_no_hang_since(const cJSON *all, int64_t since_wall_ms) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_began") != 0) continue;
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(e, "start_wall_ms");
    CHECK_MSG(cJSON_IsNumber(start), "a hang_began without start_wall_ms");
    CHECK_MSG(start->valuedouble < (double)since_wall_ms, "a hang began %.0f ms after the mark: %s",
              start->valuedouble - (double)since_wall_ms, cJSON_PrintUnformatted(e));
  }
  check_hooks_right(all);
}

/* No hang began at all, and the hooks were right. */
static void check_no_hang(const cJSON *all) { check_no_hang_since(all, INT64_MIN); }

/* The frames the last metrics line counted since the start. */
static double frames_counted(const cJSON *all) {
  return spawn_json_number(last_of_type(all, "metrics"), "total_frames", -1);
}

/* ---- the cases ---------------------------------------------------------------------------- */

static void test_gtk_stall_over_budget(void) {
  make_folder();
  with_screen();
  char reports[320];
  snprintf(reports, sizeof reports, "%s/reports", folder);
  char *extra[] = {"--budget-ms", "500", "--junit", junit, "--report-dir", reports, NULL};
  /* 1200 ms: the hang is in progress from its 250 ms threshold to the stall's end, and that
   * must outlast the 500 ms metrics interval (less its 50 ms of earliness) for a metrics line
   * to fall inside it wherever the app's start puts the stall; 700 ms missed it under load. */
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "1200", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(extra, program, err, sizeof err), 3);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  /* A lower bound of the 1200 ms stall: from the ping's post, at most a ping interval late. */
  CHECK_MSG(ms >= 1100 && ms <= 2500, "hang of %.1f ms for a 1200 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "attach_stall_callback"));
  /* --report-dir: the report is there. */
  const cJSON *report_path = cJSON_GetObjectItemCaseSensitive(ended, "report_path");
  CHECK(cJSON_IsString(report_path) && strncmp(report_path->valuestring, reports, strlen(reports)) == 0);
  CHECK_MSG(access(report_path->valuestring, R_OK) == 0, "no report at %s", report_path->valuestring);
  /* An event-driven app: idle while it waits (its window drawn once), never idle while hung,
   * and then its frame in progress is late (band bad). */
  int idle_seen = 0, hung_seen = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "metrics") != 0) continue;
    int idle = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "idle"));
    int hung = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "hang_in_progress"));
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(e, "hitch_band");
    idle_seen += idle;
    if (!hung) continue;
    hung_seen++;
    CHECK_MSG(!idle && cJSON_IsString(band) && strcmp(band->valuestring, "bad") == 0,
              "during the hang: %s", cJSON_PrintUnformatted(e));
  }
  CHECK_MSG(idle_seen > 0 && hung_seen > 0, "%d metrics idle, %d during the hang", idle_seen, hung_seen);
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

/* 1 when frame's module ends in module_tail. */
static int in_module(const cJSON *frame, const char *module_tail) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(frame, "module");
  size_t len = cJSON_IsString(m) ? strlen(m->valuestring) : 0, n = strlen(module_tail);
  return len >= n && strcmp(m->valuestring + len - n, module_tail) == 0;
}

/* gtk_stall shipped as Fedora ships programs (make-minidebuginfo: stripped, its static
 * functions' symbols in an xz-compressed .gnu_debugdata): under lagscope-run its hang names
 * attach_stall_callback, a static function, and every frame of the program is named and the
 * app's code; the same program without the section gives its frames as module + offset,
 * unnamed and still the app's (issue 32, section 4). */
static void run_stripped(const char *program_path, const char *module_tail, int named) {
  char *program[] = {(char *)program_path, "--stall-ms", "700", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *stack =
      cJSON_GetObjectItemCaseSensitive(last_of_type(all, "hang_ended"), "heaviest_stack");
  int frames = 0;
  const cJSON *frame;
  cJSON_ArrayForEach(frame, stack) {
    if (!in_module(frame, module_tail)) continue;
    frames++;
    const cJSON *function = cJSON_GetObjectItemCaseSensitive(frame, "function");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(frame, "code");
    CHECK_MSG(cJSON_IsString(code) && strcmp(code->valuestring, "app") == 0, "not the app's: %s",
              cJSON_PrintUnformatted(frame));
    CHECK_MSG(cJSON_IsString(function) == named, "%s: %s", named ? "unnamed" : "named",
              cJSON_PrintUnformatted(frame));
  }
  printf("%s: %d frames, %s\n", module_tail, frames, cJSON_PrintUnformatted(stack));
  CHECK_MSG(frames >= 2, "%d frames in %s", frames, module_tail);
  CHECK_EQ_INT(stack_has(stack, "attach_stall_callback"), named);
  CHECK_EQ_INT(strstr(err, "attach_stall_callback") != NULL, named);
  cJSON_Delete(all);
}

static void test_gtk_stall_minidebuginfo(void) {
  skip_without(LAGSCOPE_GTK_STALL_MDI_PATH);
  make_folder();
  with_screen();
  run_stripped(LAGSCOPE_GTK_STALL_MDI_PATH, "/gtk_stall.mdi", 1);
  remove_folder();
  make_folder();
  run_stripped(LAGSCOPE_GTK_STALL_MDI_PATH ".bare", "/gtk_stall.mdi.bare", 0);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* A program built as Debian builds mousepad (issue 45, item 1): its main only calls its private
 * library, which the loader names by a path in /usr/lib/ (private_stall.c). Its hang names the
 * library's stalling function: the library is the program's own code, as the program is; its
 * signature is made of both; GLib's and libc's frames stay the system's. */
static void test_private_library_own_code(void) {
  make_folder();
  char *program[] = {LAGSCOPE_PRIVATE_STALL_PATH, "--stall-ms", "700", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  const cJSON *stack = cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack");
  int in_library = 0, glib = 0;
  const cJSON *frame;
  cJSON_ArrayForEach(frame, stack) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(frame, "code");
    const cJSON *module = cJSON_GetObjectItemCaseSensitive(frame, "module");
    CHECK(cJSON_IsString(code));
    if (in_module(frame, "/libprivate_stall.so.0")) {
      in_library++;
      /* The setup holds: the loader names the library by a path in /usr/lib/. */
      CHECK_MSG(strncmp(module->valuestring, "/usr/lib/", 9) == 0, "%s", module->valuestring);
      CHECK_MSG(strcmp(code->valuestring, "app") == 0, "not the app's: %s",
                cJSON_PrintUnformatted(frame));
    } else if (in_module(frame, "/libglib-2.0.so.0")) {
      glib++;
      CHECK_MSG(strcmp(code->valuestring, "system") == 0, "not the system's: %s",
                cJSON_PrintUnformatted(frame));
    }
  }
  printf("%d frames in the library, %d in GLib: %s\n", in_library, glib,
         cJSON_PrintUnformatted(stack));
  CHECK_MSG(in_library >= 2 && glib >= 1, "%d frames in the library, %d in GLib", in_library, glib);
  const cJSON *frames = cJSON_GetObjectItemCaseSensitive(ended, "signature_frames");
  const cJSON *first = cJSON_GetArrayItem(frames, 0);
  CHECK_MSG(cJSON_IsString(first) && strcmp(first->valuestring, "private_stall_callback") == 0,
            "signature_frames %s", cJSON_PrintUnformatted(frames));
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(ended, "cause");
  const cJSON *label = cJSON_GetObjectItemCaseSensitive(cause, "label");
  CHECK_MSG(cJSON_IsString(label) && strstr(label->valuestring, "private_stall_callback") != NULL,
            "label %s", cJSON_PrintUnformatted(cause));
  /* lagscope-run's summary names it too, and its frames go on to the program's main. */
  CHECK_MSG(strstr(err, "    in private_stall_callback") != NULL, "%s", err);
  CHECK(strstr(err, "<- private_stall_main") != NULL && strstr(err, "<- main") != NULL);
  cJSON_Delete(all);
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

/* ---- the HUD in a GL program's own frame: glxgears (glX), es2gears_x11 (EGL, GLES 2) ------- */

/* The HUD, compact at scale 1, is 150 x 56 px, 8 px from its corner. The reference is a shot
 * of the top-left corner of glxgears's window, looked at: the HUD at (8, 8) over black. */
#define HUD_W 150
#define HUD_H 56
#define REFERENCE LAGSCOPE_ATTACH_REFERENCE "/glxgears_hud.png"
/* The FPS figure changes; it is left out of the comparison (in HUD coordinates). */
static const box fps_figure = {4, 2, 96, 38};

static const char *shot_title;   /* the window to shoot */
static box shot_area;            /* where, in the window */
static shot area_shot;

static int is_lit(uint32_t p) { return px_r(p) + px_g(p) + px_b(p) > 24; }
static int inside(box b, int x, int y) { return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1; }

static void take_area_shot(void) {
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window w = 0;
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while ((w = screen_find_window(d, shot_title)) == 0 && spawn_now_ns() < deadline) spawn_sleep_ms(20);
  CHECK_MSG(w != 0, "no window titled %s", shot_title);
  CHECK(screen_shot_area(d, w, shot_area, &area_shot) == 0);
  XCloseDisplay(d);
}

/* The share of the HUD's pixels (at hud in s), its FPS figure left out, within tolerance per
 * channel of the reference's. */
static double reference_match(const shot *s, box hud, int tolerance) {
  cairo_surface_t *ref = cairo_image_surface_create_from_png(REFERENCE);
  CHECK_MSG(cairo_surface_status(ref) == CAIRO_STATUS_SUCCESS, "cannot read %s", REFERENCE);
  CHECK(cairo_image_surface_get_width(ref) >= 8 + HUD_W && cairo_image_surface_get_height(ref) >= 8 + HUD_H);
  const unsigned char *data = cairo_image_surface_get_data(ref);
  int stride = cairo_image_surface_get_stride(ref);
  long same = 0, compared = 0;
  for (int y = 0; y < HUD_H; y++) {
    for (int x = 0; x < HUD_W; x++) {
      if (inside(fps_figure, x, y)) continue;
      compared++;
      uint32_t a = s->pixels[(hud.y0 + y) * s->width + hud.x0 + x];
      uint32_t b = ((const uint32_t *)(data + (8 + y) * stride))[8 + x];
      same += abs(px_r(a) - px_r(b)) <= tolerance && abs(px_g(a) - px_g(b)) <= tolerance &&
              abs(px_b(a) - px_b(b)) <= tolerance;
    }
  }
  cairo_surface_destroy(ref);
  return (double)same / (double)compared;
}

static void save_artifact(const shot *s, const char *name) {
  char path[512];
  mkdir(LAGSCOPE_ATTACH_OUT, 0755);
  snprintf(path, sizeof path, "%s/%s", LAGSCOPE_ATTACH_OUT, name);
  CHECK(shot_save_png(s, path) == 0);
  printf("saved %s\n", path);
}

/* The HUD is at hud in the shot (shot coordinates), showing what the reference shows. */
static void check_hud_shown(const shot *s, box hud) {
  box panel = shot_bounds(s, (box){0, 0, s->width, s->height}, is_lit);
  printf("HUD expected at %d,%d-%d,%d; lit pixels' bounds %d,%d-%d,%d\n", hud.x0, hud.y0, hud.x1,
         hud.y1, panel.x0, panel.y0, panel.x1, panel.y1);
  double match = reference_match(s, hud, 16);
  printf("the HUD matches the reference at %.1f %% of its pixels\n", match * 100);
  CHECK_MSG(match >= HUD_MATCH, "the HUD differs from the reference: %.1f %% alike", match * 100);
}

static void test_glxgears_frames_and_hud(void) {
  skip_without(LAGSCOPE_GLXGEARS_PATH);
  make_folder();
  with_screen();
  /* A window taller than wide keeps the gears (scaled to its width, centred) out of the
   * top-left corner: the HUD there is over black, as in the reference. */
  char *program[] = {LAGSCOPE_GLXGEARS_PATH, "-geometry", "300x600", NULL};
  shot_title = "glxgears";
  shot_area = (box){0, 0, 180, 80};
  char err[16384];
  /* SIGTERM passed on: glxgears dies of it, and lagscope-run says so the shell's way. */
  CHECK_EQ_INT(run_for_metrics(NULL, program, 4, take_area_shot, err, sizeof err), 128 + SIGTERM);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f glXSwapBuffers frames counted", frames_counted(all));
  cJSON_Delete(all);
  save_artifact(&area_shot, "glxgears_hud.png");
  box hud = {8, 8, 8 + HUD_W, 8 + HUD_H};
  box lit = shot_bounds(&area_shot, shot_area, is_lit);
  CHECK_MSG(abs(lit.x0 - hud.x0) <= 1 && abs(lit.y0 - hud.y0) <= 1 && abs(lit.x1 - hud.x1) <= 2 &&
                abs(lit.y1 - hud.y1) <= 2,
            "the HUD is not where it belongs (8 px from the corner, 150 x 56)");
  check_hud_shown(&area_shot, hud);
  shot_free(&area_shot);

  /* --no-hud: nothing drawn in the corner, and the same comparison fails. */
  char *extra[] = {"--no-hud", NULL};
  CHECK_EQ_INT(run_for_metrics(extra, program, 2, take_area_shot, err, sizeof err), 128 + SIGTERM);
  save_artifact(&area_shot, "glxgears_no_hud.png");
  CHECK_EQ_INT(shot_count(&area_shot, shot_area, is_lit), 0);
  double match = reference_match(&area_shot, hud, 16);
  printf("without the HUD: %.1f %% alike\n", match * 100);
  CHECK(match < HUD_MATCH);
  shot_free(&area_shot);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* EGL and OpenGL ES 2 (no vertex array objects: vertex attribute 0 saved and restored), the
 * HUD in the bottom-right corner, where es2gears's 300 x 300 window is black; the gears still
 * drawn right around it (their colours on screen). */
static void test_es2gears_egl_hud(void) {
  skip_without(LAGSCOPE_ES2GEARS_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_ES2GEARS_PATH, NULL};
  char *extra[] = {"--hud-corner", "br", NULL};
  shot_title = "es2gears";
  shot_area = (box){0, 0, 300, 300};
  char err[16384];
  CHECK_EQ_INT(run_for_metrics(extra, program, 4, take_area_shot, err, sizeof err), 128 + SIGTERM);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f eglSwapBuffers frames counted", frames_counted(all));
  cJSON_Delete(all);
  save_artifact(&area_shot, "es2gears_hud.png");
  check_hud_shown(&area_shot, (box){300 - 8 - HUD_W, 300 - 8 - HUD_H, 300 - 8, 300 - 8});
  /* The gears: red, green and blue, lit, each over many pixels. */
  long red = 0, green = 0, blue = 0;
  for (int i = 0; i < area_shot.width * area_shot.height; i++) {
    uint32_t p = area_shot.pixels[i];
    red += px_r(p) > 120 && px_g(p) < 60 && px_b(p) < 60;
    green += px_g(p) > 120 && px_r(p) < 60 && px_b(p) < 60;
    blue += px_b(p) > 120 && px_r(p) < 60 && px_g(p) < 60;
  }
  printf("gear pixels: red %ld, green %ld, blue %ld\n", red, green, blue);
  CHECK(red > 2000 && green > 1000 && blue > 1000);
  shot_free(&area_shot);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* SDL2's GL windows: SDL swaps through its own pointer, so the HUD is drawn in the
 * SDL_GL_SwapWindow hook (SDL's GetProcAddress, its drawable size); testgl2's cube stays
 * away from the top-left corner. */
static void test_sdl_testgl2_hud(void) {
  skip_without(LAGSCOPE_TESTGL2_PATH);
  make_folder();
  with_screen();
  char dir[512];
  snprintf(dir, sizeof dir, "%s", LAGSCOPE_TESTGL2_PATH);
  *strrchr(dir, '/') = '\0';
  CHECK(chdir(dir) == 0);
  char *program[] = {LAGSCOPE_TESTGL2_PATH, NULL};
  shot_title = LAGSCOPE_TESTGL2_PATH; /* SDL's tests name the window after argv[0] */
  shot_area = (box){0, 0, 180, 80};
  char err[16384];
  CHECK_EQ_INT(run_for_metrics(NULL, program, 4, take_area_shot, err, sizeof err), 0);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f SDL_GL_SwapWindow frames counted", frames_counted(all));
  cJSON_Delete(all);
  save_artifact(&area_shot, "testgl2_hud.png");
  check_hud_shown(&area_shot, (box){8, 8, 8 + HUD_W, 8 + HUD_H});
  shot_free(&area_shot);
  xvfb_stop(&xvfb);
  remove_folder();
}

static int hangs_began(void) {
  cJSON *all = read_events();
  int n = count_type(all, "hang_began");
  cJSON_Delete(all);
  return n;
}

/* Waits (bounded) until a metrics line says the app drew a frame and is not hung. */
static void await_drawn_and_answering(void) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    const cJSON *last = last_of_type(all, "metrics");
    int ready = last != NULL && frames_counted(all) >= 1 &&
                !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(last, "hang_in_progress"));
    cJSON_Delete(all);
    if (ready) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no frame drawn with the main thread answering in %d ms", WAIT_MS);
    spawn_sleep_ms(50);
  }
}

/* 10 s of an idle GTK application answering pings through GLib: no hang. Its start-up is not
 * idle: GTK builds the whole window inside g_application_run's activate, on the main thread,
 * which on a loaded machine is a real hang of its own (352 ms under two CPU hogs); the idle
 * time is what follows its first frame. */
static void test_widget_factory_idle(void) {
  skip_without(LAGSCOPE_WIDGET_FACTORY_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_WIDGET_FACTORY_PATH, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  await_drawn_and_answering();
  await_metrics(metrics_count() + 1);
  int at_start = hangs_began();
  await_metrics(metrics_count() + 20);
  int after_idle = hangs_began();
  spawn_signal(&p, SIGTERM);
  char err[16384];
  int code = wait_run(&p, err, sizeof err);
  printf("start-up: %d hang(s); 10 s idle after it: %d\n", at_start, after_idle - at_start);
  CHECK_EQ_INT(code, 128 + SIGTERM);
  CHECK_EQ_INT(after_idle, at_start);
  cJSON *all = read_events();
  check_hooks_right(all);
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
  CHECK_EQ_INT(run_for_metrics(NULL, program, 4, NULL, err, sizeof err), 0);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 60, "%.0f SDL_RenderPresent frames counted", frames_counted(all));
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* A program that presents its last frame and exits at once (a timedemo's end) between two
 * samples: lagscope's stop at exit publishes a last metrics line, whose total_frames is every
 * frame it presented (issue 45, item 9). */
static void test_sdl_frames_then_exit(void) {
  make_folder();
  with_screen();
  enum { FRAMES = 45 };
  char *program[] = {LAGSCOPE_SDL_STATE_PATH, "software", "frames", "45", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  double total = frames_counted(all);
  printf("the last metrics line counted %.0f frames of %d\n", total, FRAMES);
  CHECK_MSG(total == FRAMES, "the last metrics line counted %.0f frames of %d", total, FRAMES);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* ---- SDL_Renderer: the HUD through the renderer, the program's frame otherwise its own ---- */

/* Waits (bounded) until the window titled shot_title shows the same pixels twice 100 ms
 * apart, most of them lit: a program drawing a still frame has drawn it (a window is black
 * before its first frame). */
static void take_still_shot(void) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  shot before = {0};
  for (;;) {
    take_area_shot();
    long area = (long)(shot_area.x1 - shot_area.x0) * (shot_area.y1 - shot_area.y0);
    int still = before.pixels != NULL && shot_diff(&before, &area_shot, shot_area, 0) == 0 &&
                shot_count(&area_shot, shot_area, is_lit) > area / 2;
    shot_free(&before);
    if (still) return;
    CHECK_MSG(spawn_now_ns() < deadline, "%s never showed a still frame in %d ms", shot_title,
              WAIT_MS);
    before = area_shot;
    memset(&area_shot, 0, sizeof area_shot);
    spawn_sleep_ms(100);
  }
}

/* testsprite2 alone (no lagscope): its still frame in out. SDL makes SIGTERM an SDL_QUIT. */
static void shoot_alone(char *const program[], shot *out) {
  spawn_proc p;
  CHECK(spawn_start(&p, program[0], program, SPAWN_CAPTURE_STDERR) == 0);
  take_still_shot();
  *out = area_shot;
  memset(&area_shot, 0, sizeof area_shot);
  spawn_signal(&p, SIGTERM);
  CHECK_EQ_INT(spawn_wait(&p, WAIT_MS), 0);
  spawn_close(&p);
}

/* The same program under lagscope-run with extra options: its still frame in area_shot, taken
 * once a metrics line says it drew (awaited, not assumed: Mesa's software GL can take seconds
 * for a first frame on a loaded machine); the presents after it counted. */
static void shoot_under_lagscope(char *const extra[], char *const program[], char *err,
                                 size_t size) {
  unlink(events); /* this run's events only */
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  await_drawn_and_answering();
  take_still_shot();
  await_metrics(metrics_count() + 1);
  spawn_signal(&p, SIGTERM); /* SDL makes it SDL_QUIT: a clean end */
  int code = wait_run(&p, err, size);
  CHECK_EQ_INT(code, 0);
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 3, "%.0f SDL_RenderPresent frames counted",
            frames_counted(all));
  cJSON_Delete(all);
}

/* With the HUD: every pixel outside hud is the program's own, and the HUD changed most of
 * those inside, up to its edges. */
static void check_renderer_hud(const shot *alone, const shot *with, box hud) {
  long outside = shot_diff(alone, with, hud, 1);
  long inside = shot_diff(alone, with, hud, 0);
  long area = (long)(hud.x1 - hud.x0) * (hud.y1 - hud.y0);
  printf("pixels changed: %ld outside the HUD's box, %ld of its %ld inside\n", outside, inside,
         area);
  CHECK_MSG(outside == 0, "lagscope changed %ld pixels of the program's own frame", outside);
  CHECK_MSG(inside >= area / 2, "the HUD is missing: %ld of %ld pixels changed", inside, area);
  shot changed = *with;
  uint32_t *marks = calloc((size_t)with->width * (size_t)with->height, sizeof *marks);
  CHECK(marks != NULL);
  for (int i = 0; i < with->width * with->height; i++)
    marks[i] = alone->pixels[i] != with->pixels[i] ? 0xffffff : 0;
  changed.pixels = marks;
  box drawn = shot_bounds(&changed, (box){0, 0, with->width, with->height}, is_lit);
  free(marks);
  printf("HUD expected at %d,%d-%d,%d; changed pixels' bounds %d,%d-%d,%d\n", hud.x0, hud.y0,
         hud.x1, hud.y1, drawn.x0, drawn.y0, drawn.x1, drawn.y1);
  CHECK_MSG(abs(drawn.x0 - hud.x0) <= 2 && abs(drawn.y0 - hud.y0) <= 2 &&
                abs(drawn.x1 - hud.x1) <= 2 && abs(drawn.y1 - hud.y1) <= 2,
            "the HUD is not where it belongs (8 px from the corner, 150 x 56)");
}

/* One run of program (a still frame) alone and under lagscope-run with extra, compared; the
 * shots saved as name_alone.png and name.png. hud empty: no HUD, nothing may change. */
static void compare_runs(char *const extra[], char *const program[], const char *name, box hud) {
  shot alone;
  shoot_alone(program, &alone);
  char err[16384], file[128];
  shoot_under_lagscope(extra, program, err, sizeof err);
  CHECK_MSG(strstr(err, "no HUD") == NULL, "lagscope said the HUD is absent");
  snprintf(file, sizeof file, "%s_alone.png", name);
  save_artifact(&alone, file);
  snprintf(file, sizeof file, "%s.png", name);
  save_artifact(&area_shot, file);
  if (hud.x1 > hud.x0) {
    check_renderer_hud(&alone, &area_shot, hud);
  } else {
    long changed = shot_diff(&alone, &area_shot, shot_area, 0);
    printf("without the HUD: %ld pixels changed\n", changed);
    CHECK_EQ_INT(changed, 0);
  }
  shot_free(&alone);
  shot_free(&area_shot);
}

/* testsprite2 held still (--iterations 0) with options, compared by compare_runs. */
static void compare_testsprite(char *const extra[], char *const options[], const char *name,
                               box hud) {
  char *program[16] = {LAGSCOPE_TESTSPRITE_PATH, "--iterations", "0"};
  int n = 3;
  for (int i = 0; options[i] != NULL; i++) program[n++] = options[i];
  program[n] = NULL;
  compare_runs(extra, program, name, hud);
}

/* SDL2's testsprite2 draws with SDL_Renderer: the HUD is copied into its frame at
 * SDL_RenderPresent through a texture of the preload's own. Its frame held still, every pixel
 * outside the HUD's box is the one testsprite2 draws alone: on Mesa's GL renderer with a
 * logical size (320 x 240 scaled to the 640 x 480 window: the logical size, scale and viewport
 * put back each frame), on SDL's software renderer (no premultiplied blending there: the
 * straight-alpha path), in the bottom-right corner, and with --no-hud nothing changed at all. */
static void test_sdl_renderer_hud(void) {
  skip_without(LAGSCOPE_TESTSPRITE_PATH);
  make_folder();
  with_screen();
  char dir[512];
  snprintf(dir, sizeof dir, "%s", LAGSCOPE_TESTSPRITE_PATH);
  *strrchr(dir, '/') = '\0';
  CHECK(chdir(dir) == 0); /* testsprite2 loads icon.bmp from where it runs */
  shot_title = LAGSCOPE_TESTSPRITE_PATH;
  shot_area = (box){0, 0, 640, 480};
  box top_left = {8, 8, 8 + HUD_W, 8 + HUD_H};
  box bottom_right = {640 - 8 - HUD_W, 480 - 8 - HUD_H, 640 - 8, 480 - 8};
  char *logical[] = {"--renderer", "opengl", "--logical", "320x240", NULL};
  char *software[] = {"--renderer", "software", NULL};
  char *corner[] = {"--hud-corner", "br", NULL};
  char *no_hud[] = {"--no-hud", "--allow-unwatched", NULL};
  compare_testsprite(NULL, logical, "testsprite_gl_logical_hud", top_left);
  compare_testsprite(NULL, software, "testsprite_software_hud", top_left);
  compare_testsprite(corner, software, "testsprite_software_br_hud", bottom_right);
  compare_testsprite(no_hud, logical, "testsprite_no_hud", (box){0, 0, 0, 0});
  xvfb_stop(&xvfb);
  remove_folder();
}

/* The tests' own sdl_state relies in every frame on renderer state it set once: the
 * window's fractional scale, viewport and clip rect, and a texture target left set across the
 * present with a clip of its own. The HUD (drawn on the window, the target switched away and
 * back) must leave every pixel outside its box as the program draws alone, on the default
 * (Mesa's GL) and the software renderer. */
static void test_sdl_renderer_state_kept(void) {
  make_folder();
  with_screen();
  shot_title = "sdl_state";
  shot_area = (box){0, 0, 400, 300};
  box top_left = {8, 8, 8 + HUD_W, 8 + HUD_H};
  char *accelerated[] = {LAGSCOPE_SDL_STATE_PATH, NULL};
  char *software[] = {LAGSCOPE_SDL_STATE_PATH, "software", NULL};
  compare_runs(NULL, accelerated, "sdl_state_hud", top_left);
  compare_runs(NULL, software, "sdl_state_software_hud", top_left);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* SDL2's testvulkan draws with Vulkan (Mesa's software lavapipe here), where lagscope-run
 * draws no HUD: that is said once on stderr, and the program runs as ever (frames of its loop
 * seen, no hang); with --no-hud nothing is said. */
static void test_sdl_vulkan_no_hud_said(void) {
  skip_without(LAGSCOPE_TESTVULKAN_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_TESTVULKAN_PATH, NULL};
  const char *said = "no HUD in this program's frames: it draws with Vulkan";
  /* Each run ends once its window is on screen (a shot of its corner awaits it). */
  shot_title = LAGSCOPE_TESTVULKAN_PATH;
  shot_area = (box){0, 0, 16, 16};
  char err[16384];
  CHECK_EQ_INT(run_for_metrics(NULL, program, 2, take_area_shot, err, sizeof err), 0);
  shot_free(&area_shot);
  const char *first = strstr(err, said);
  CHECK_MSG(first != NULL, "lagscope did not say why the HUD is absent");
  CHECK_MSG(strstr(first + 1, said) == NULL, "said more than once");
  cJSON *all = read_events();
  check_no_hang(all);
  cJSON_Delete(all);
  char *extra[] = {"--no-hud", NULL};
  unlink(events); /* this run's metrics only */
  CHECK_EQ_INT(run_for_metrics(extra, program, 2, take_area_shot, err, sizeof err), 0);
  shot_free(&area_shot);
  CHECK_MSG(strstr(err, said) == NULL, "said with --no-hud");
  xvfb_stop(&xvfb);
  remove_folder();
}

/* A GLib loop that calls g_main_loop_run once and nothing else lagscope hooks: each ping is
 * answered by lagscope's own source in that loop, so its 500 ms stall is one hang that ends,
 * naming glib_pings_stall; and posting the pings (a wake-up of the loop) allocated nothing in
 * GLib on lagscope's threads (a g_idle_add per ping did, 2 blocks each). */
static void test_glib_pings_allocate_nothing(void) {
  make_folder();
  char *program[] = {LAGSCOPE_GLIB_PINGS_PATH, "--stall-ms", "500", "--idle-ms", "1500", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  check_hooks_right(all);
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  /* Timed from the ping's post to its answer, as an input event posted with it would wait:
   * usually from up to a ping interval into the stall; but a ping posted while the loop slept,
   * just before the stall's timeout, is dispatched after it (the older source of the same
   * priority), and the main thread's scheduling delays (its wake-up, a preemption before it
   * answers) count too. 505.4 ms was seen once in CI. */
  CHECK_MSG(ms >= 400 && ms <= 550, "hang of %.1f ms for a 500 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "glib_pings_stall"));
  CHECK_MSG(strstr(err, "glib_pings: lagscope's threads allocated 0 times through GLib") != NULL,
            "lagscope's threads allocated in GLib (stderr above)");
  cJSON_Delete(all);
  remove_folder();
}

/* Qt 5, unchanged: its loop runs on GLib's dispatcher, so the GLib hooks see it; the 700 ms
 * stall in a QTimer's lambda is one hang naming attach_qt_stall. */
static void test_qt_stall(void) {
  skip_without(LAGSCOPE_QT_STALL_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_QT_STALL_PATH, NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(NULL, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  const cJSON *ended = last_of_type(all, "hang_ended");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  CHECK_MSG(ms >= 600 && ms <= 2000, "hang of %.1f ms for a 700 ms stall", ms);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), "attach_qt_stall"));
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
  char *extra[] = {"--threshold-ms", "400", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(extra, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_EQ_INT(count_type(all, "hang_began"), 1);
  CHECK_EQ_INT(spawn_json_number(last_of_type(all, "hang_began"), "threshold_ms", 0), 400);
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
/* ---- gtk3-demo: a modal dialog's nested loop, then every window unmapped ---------------------- */

/* Runs xdotool with args; it must succeed. */
static void xdotool(char *const args[]) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_XDOTOOL_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  int code = spawn_wait(&p, WAIT_MS);
  char err[2048];
  spawn_stderr(&p, err, sizeof err);
  spawn_close(&p);
  CHECK_MSG(code == 0, "xdotool %s failed (%d): %s", args[1], code, err);
}

/* Top-level windows on the screen that can be seen. */
static int viewable_windows(Display *d) {
  Window root, parent, *children = NULL;
  unsigned n = 0;
  int viewable = 0;
  XSync(d, False);
  if (!XQueryTree(d, DefaultRootWindow(d), &root, &parent, &children, &n)) return -1;
  for (unsigned i = 0; i < n; i++) {
    XWindowAttributes a;
    if (XGetWindowAttributes(d, children[i], &a) && a.map_state == IsViewable) viewable++;
  }
  XFree(children);
  return viewable;
}

static void await_viewable(Display *d, int want) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  int got;
  while ((got = viewable_windows(d)) != want && spawn_now_ns() < deadline) spawn_sleep_ms(20);
  CHECK_MSG(got == want, "%d windows can be seen, not %d", got, want);
}

/* gtk3-demo's "Dialogs and Message Boxes": its first button opens a message box that runs
 * gtk_dialog_run, a nested main loop, for 10 s; then every window of the program is unmapped
 * (what minimizing does, with no window manager here) for 5 s. The pings go through both
 * loops: no hang, no lost ping. */
static void test_gtk3_demo_modal_and_hidden(void) {
  skip_without(LAGSCOPE_GTK3_DEMO_PATH);
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GTK3_DEMO_PATH, "--run=dialog", NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  await_metrics(2);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while (!screen_find_window(d, "Dialogs and Message Boxes") && spawn_now_ns() < deadline)
    spawn_sleep_ms(20);
  /* From here: gtk3-demo's start-up (its CSS parsed on the main thread) is a real hang on a
   * loaded machine (1066 ms seen at a load of 10); this case is about the modal and the
   * hidden windows. */
  int64_t shown_wall_ms = wall_ms_now();
  int before = viewable_windows(d);
  char *press[] = {LAGSCOPE_XDOTOOL_PATH, "search", "--sync", "--name", "^Dialogs and Message Boxes$",
                   "windowfocus", "--sync", "key", "space", NULL};
  xdotool(press);
  await_viewable(d, before + 1); /* the message box */
  printf("the modal message box is open\n");
  await_metrics(metrics_count() + 20);
  char *unmap[] = {LAGSCOPE_XDOTOOL_PATH, "search", "--class", "gtk3-demo", "windowunmap", "%@", NULL};
  xdotool(unmap);
  await_viewable(d, 0);
  printf("every window unmapped\n");
  await_metrics(metrics_count() + 10);
  XCloseDisplay(d);
  spawn_signal(&p, SIGTERM);
  char err[16384];
  int code = wait_run(&p, err, sizeof err);
  CHECK_EQ_INT(code, 128 + SIGTERM);
  cJSON *all = read_events();
  check_no_hang_since(all, shown_wall_ms);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

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

/* The one child of parent (lagscope-run's program), waiting (bounded) for it; -1 when none. */
static pid_t child_of(pid_t parent) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)parent, (int)parent);
  const char *text = read_file(path);
  return atoi(text) > 0 ? (pid_t)atoi(text) : -1;
}

/* Waits (bounded) until the events file holds a hang_began. */
static void await_hang_began(void) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while (hangs_began() == 0) {
    CHECK_MSG(spawn_now_ns() < deadline, "no hang_began in %d ms", WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* A hang the program's end cut short counts to the end, less the time the program was stopped
 * (issue 32, section 3: a cut-short hang of 123520 ms counted its 2999 ms stopped). gtk_stall
 * stalls 20 s; once the hang began it is stopped for 1.5 s, goes on for 1 s, and is ended
 * (SIGTERM to lagscope-run, passed on). */
static void test_stopped_time_of_a_cut_short_hang(void) {
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "20000", NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  await_hang_began();
  uint64_t began = spawn_now_ns();
  pid_t child = child_of(p.pid);
  CHECK_MSG(child > 0, "lagscope-run %d has no child", (int)p.pid);
  CHECK(kill(child, SIGSTOP) == 0);
  spawn_sleep_ms(1500);
  CHECK(kill(child, SIGCONT) == 0);
  spawn_sleep_ms(1000);
  spawn_signal(&p, SIGTERM);
  int code = spawn_wait(&p, WAIT_MS);
  double ran_ms = (double)(spawn_now_ns() - began) / 1e6;
  char err[16384];
  spawn_stderr(&p, err, sizeof err);
  spawn_close(&p);
  printf("lagscope-run exited %d after %.0f ms; its stderr:\n%s\n", code, ran_ms, err);
  CHECK_EQ_INT(code, 128 + SIGTERM);
  const char *line = strstr(err, "hang 1: ");
  CHECK_MSG(line != NULL, "no hang in the summary");
  double counted = 0, stopped = 0;
  CHECK_MSG(sscanf(line, "hang 1: %lf ms (the program ended during it; %lf ms stopped not counted)",
                   &counted, &stopped) == 2, "the summary's line: %.200s", line);
  CHECK_MSG(stopped >= 1400 && stopped <= 1700, "%.0f ms stopped, of 1500", stopped);
  /* From the hang's start (the threshold, 250 ms, before it was seen) to the end, less the
   * stop: ran_ms + 250 - 1500, give or take the program's exit and the looks' granularity. */
  CHECK_MSG(counted >= ran_ms - 1500 && counted <= ran_ms + 250 - 1400 + 300,
            "%.0f ms counted of %.0f ms run with 1500 stopped", counted, ran_ms);
  remove_folder();
  xvfb_stop(&xvfb);
}

/* lagscope-run never harms the program or passes a gate it could not watch (issue 31, items 3,
 * 6, 9): lagscope failing to start in the program is exit 2 with the reason, not "no hang"; an
 * --events FIFO that no one reads neither blocks the program's exit nor loses the run (it
 * blocked in open() for ever); an unsafe TMPDIR (writable by others, not sticky) is not used
 * for the private folder; the events file is made 0600 (it holds the viewer's token). */
static void test_never_harms_or_guesses(void) {
  make_folder();
  char err[16384];
  char *program[] = {"true", NULL};
  /* 1. Not started: a bad address for the viewer. */
  char *bad_bind[] = {"--no-server", "--budget-ms", "100", NULL};
  spawn_proc p;
  char *argv[] = {LAGSCOPE_RUN_PATH, "--bind", "nonsense", "--budget-ms", "100", "--", "true", NULL};
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, argv, SPAWN_CAPTURE_STDERR) == 0);
  int code = spawn_wait(&p, WAIT_MS);
  spawn_stderr(&p, err, sizeof err);
  spawn_close(&p);
  printf("--bind nonsense: exit %d: %s\n", code, err);
  CHECK_MSG(code == 2, "exit %d with lagscope not started", code);
  CHECK_MSG(strstr(err, "lagscope did not start in true: ") != NULL && strstr(err, "nonsense") != NULL &&
            strstr(err, "no hang") == NULL, "said: %s", err);
  /* Told not to start: the program's own status, and no verdict. */
  setenv("LAGSCOPE_AUTOSTART", "0", 1);
  code = run_to_end(bad_bind, program, err, sizeof err);
  unsetenv("LAGSCOPE_AUTOSTART");
  CHECK_MSG(code == 0 && strstr(err, "lagscope was off in true") != NULL && strstr(err, "no hang") == NULL,
            "exit %d: %s", code, err);

  /* 2. --events is a FIFO with no reader. */
  char fifo[400];
  snprintf(fifo, sizeof fifo, "%s/events.fifo", folder);
  CHECK(mkfifo(fifo, 0600) == 0);
  /* The viewer on loopback: its server_started event is one to write. */
  char *fifo_argv[] = {LAGSCOPE_RUN_PATH, "--port", "0", "--bind", "127.0.0.1", "--allow-unwatched",
                       "--events", fifo, "--", "true", NULL};
  uint64_t t0 = spawn_now_ns();
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, fifo_argv, SPAWN_CAPTURE_STDERR) == 0);
  code = spawn_wait(&p, WAIT_MS);
  spawn_stderr(&p, err, sizeof err);
  spawn_close(&p);
  uint64_t took_ms = (spawn_now_ns() - t0) / 1000000u;
  printf("--events FIFO: exit %d after %llu ms: %s\n", code, (unsigned long long)took_ms, err);
  CHECK_MSG(code == 0 && took_ms < 5000, "exit %d after %llu ms", code, (unsigned long long)took_ms);
  CHECK_MSG(strstr(err, "events not written to") != NULL && strstr(err, "no one reads") != NULL, "%s", err);

  /* 3. An unsafe TMPDIR: the private folder goes to /tmp instead, said; the events file is
   * made 0600. */
  char unsafe[400];
  snprintf(unsafe, sizeof unsafe, "%s/open-to-all", folder);
  CHECK(mkdir(unsafe, 0700) == 0 && chmod(unsafe, 0777) == 0);
  const char *tmp_before = getenv("TMPDIR");
  char saved[512] = "";
  if (tmp_before != NULL) snprintf(saved, sizeof saved, "%s", tmp_before);
  setenv("TMPDIR", unsafe, 1);
  char *allowed[] = {"--allow-unwatched", NULL}; /* true has no loop: expected here */
  code = run_to_end(allowed, program, err, sizeof err); /* the viewer's server_started: an event */
  if (saved[0] != '\0') setenv("TMPDIR", saved, 1);
  else unsetenv("TMPDIR");
  CHECK_MSG(code == 0 && strstr(err, "TMPDIR is not safe") != NULL, "exit %d: %s", code, err);
  char listing[600];
  snprintf(listing, sizeof listing, "test -z \"$(ls -A '%s')\"", unsafe);
  CHECK_MSG(system(listing) == 0, "lagscope-run made something in the unsafe TMPDIR %s", unsafe);
  struct stat st;
  CHECK_MSG(stat(events, &st) == 0 && (st.st_mode & 0777) == 0600, "the events file's mode %o",
            (unsigned)(st.st_mode & 0777));
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
      {{LAGSCOPE_RUN_PATH, "--refresh-hz", "0", "--", "true", NULL}, 2,
       "bad value: --refresh-hz 0 (a whole number in 1..1000)"},
      {{LAGSCOPE_RUN_PATH, "--frobnicate", "--", "true", NULL}, 2, "unknown option: --frobnicate"},
      {{LAGSCOPE_RUN_PATH, "--hud-corner", "middle", "--", "true", NULL}, 2,
       "bad value (tl, tr, bl or br): middle"},
      {{LAGSCOPE_RUN_PATH, "--events", NULL}, 2, "option needs a value: --events"},
      {{LAGSCOPE_RUN_PATH, "--no-server", NULL}, 2, "no program to run"},
      {{LAGSCOPE_RUN_PATH, "--no-server", "--", "/nonexistent/program", NULL}, 127,
       "cannot run /nonexistent/program: No such file or directory"},
      {{LAGSCOPE_RUN_PATH, "--no-server", "--junit", "/nonexistent/dir/hangs.xml", "--", "true", NULL},
       1, "cannot write --junit /nonexistent/dir/hangs.xml: No such file or directory"},
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

/* ---- the overlay: the HUD in a window of lagscope's, live during a hang ---------------------- */

static Window await_window(Display *d, const char *title) {
  Window w = screen_await_window(d, title, WAIT_MS);
  CHECK_MSG(w != 0, "no window '%s' in %d ms", title, WAIT_MS);
  return w;
}

static void await_type(const char *type) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, type);
    cJSON_Delete(all);
    if (got > 0) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no %s in %d ms", type, WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* The overlay over the app's corner (1) or hidden (0), and shots of that corner until pred
 * holds (tests/support/overlay_look.h), bounded; a shot that never did is saved. */
static void await_overlay(Display *d, Window app, int shown) { overlay_await(d, app, shown, WAIT_MS); }

/* lagscope-run starts program (extra: its options, NULL-ended, or NULL), and the test waits
 * until the program's window, found by title, has lagscope's overlay over it. */
static Window start_under_overlay(spawn_proc *p, char **extra, char **program, const char *title,
                                  Display **d) {
  CHECK(spawn_start(p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(*d != NULL);
  Window app = await_window(*d, title);
  await_overlay(*d, app, 1);
  return app;
}

static void await_shot(Display *d, Window app, int (*pred)(const shot *, const shot *),
                       const shot *arg, shot *out, const char *what) {
  mkdir(LAGSCOPE_ATTACH_OUT, 0755);
  overlay_await_shot(d, app, pred, arg, out, what, OVERLAY_WAIT_MS,
                     LAGSCOPE_ATTACH_OUT "/overlay-gtk-not-as-awaited.png");
}

/* Waits (bounded) until there are more than n events of type. */
static void await_more(const char *type, int n) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, type);
    cJSON_Delete(all);
    if (got > n) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no new %s in %d ms", type, WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* During a hang of the program's, after `ended` hangs ended: two shots of the overlay's badge
 * with two different counts, both before that hang ended, saved as overlay-NAME-hang-1.png
 * and -2.png. */
static void await_live_badge_after(Display *d, Window app, const char *name, int ended) {
  shot during1, during2;
  await_more("hang_began", ended);
  await_shot(d, app, overlay_badge_shown, NULL, &during1, "the hang badge");
  await_shot(d, app, overlay_badge_counted_on, &during1, &during2, "the badge counting on");
  cJSON *all = read_events();
  CHECK_MSG(count_type(all, "hang_ended") == ended, "the second shot came after the hang");
  cJSON_Delete(all);
  char file[64];
  snprintf(file, sizeof file, "overlay-%s-hang-1.png", name);
  save_artifact(&during1, file);
  snprintf(file, sizeof file, "overlay-%s-hang-2.png", name);
  save_artifact(&during2, file);
  shot_free(&during1);
  shot_free(&during2);
}

static void await_live_badge(Display *d, Window app, const char *name) {
  await_live_badge_after(d, app, name, 0);
}

/* The expanded HUD's "LAST HANG" row (hud/layout.c: baseline 164, 8 from the corner). */
static const box last_hang_row = {18, 156, 258, 178};

/* The layout's warning colour, in which a last hang's duration is written. */
static int is_warn(uint32_t p) { return px_r(p) > 200 && px_g(p) > 120 && px_b(p) < 110; }

/* No badge, and the last-hang line says a duration (none before the hang). */
static int last_hang_shown(const shot *s, const shot *before) {
  return !overlay_badge_shown(s, NULL) && shot_count(s, last_hang_row, is_warn) > 20 &&
         shot_count(before, last_hang_row, is_warn) == 0;
}

/* No badge, and the last-hang line says a duration, not the one it said before (a hang of the
 * program's start-up, if it had one). */
static int last_hang_changed(const shot *s, const shot *before) {
  return !overlay_badge_shown(s, NULL) && shot_count(s, last_hang_row, is_warn) > 20 &&
         shot_diff(s, before, last_hang_row, 0) > 20;
}

/* gtk_stall, which never heard of lagscope, stalls 2.5 s: the overlay shows the HUD over its
 * window while the main thread is stuck, its red badge counting (two shots, two counts); after
 * it, no badge and the last-hang line. A click on the button under the HUD reaches the program;
 * the overlay follows the window when it moves and goes when it is unmapped. */
static void test_overlay_gtk_live_badge(void) {
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--button", "--stall-after-ms", "4000",
                     "--stall-ms", "2500", "--quit-after-ms", "8000", NULL};
  spawn_proc p;
  char *expanded[] = {"--hud-expanded", NULL};
  Display *d = NULL;
  Window app = start_under_overlay(&p, expanded, program, "gtk_stall", &d);
  shot before, after;
  await_shot(d, app, overlay_hud_shown, NULL, &before, "the HUD");
  save_artifact(&before, "overlay-gtk-before.png");

  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)app);
  char *click[] = {LAGSCOPE_XDOTOOL_PATH, "mousemove", "--window", id, "40", "16", "click", "1", NULL};
  xdotool(click);
  await_window(d, "gtk_stall clicked"); /* the click went through the HUD to the button */
  printf("the click under the HUD reached the program\n");

  await_live_badge(d, app, "gtk");

  await_type("hang_ended");
  await_shot(d, app, last_hang_shown, &before, &after, "the last-hang line without a badge");
  save_artifact(&after, "overlay-gtk-after.png");

  char *move[] = {LAGSCOPE_XDOTOOL_PATH, "windowmove", "--sync", id, "200", "150", NULL};
  xdotool(move);
  int ax = 0, ay = 0;
  CHECK(screen_window_origin(d, app, &ax, &ay) && ax == 200 && ay == 150);
  await_overlay(d, app, 1);
  printf("the overlay followed the moved window\n");
  char *unmap[] = {LAGSCOPE_XDOTOOL_PATH, "windowunmap", "--sync", id, NULL};
  xdotool(unmap);
  await_overlay(d, app, 0);
  printf("the overlay went with the unmapped window\n");

  shot_free(&before);
  shot_free(&after);
  XCloseDisplay(d);
  char err[16384];
  int code = wait_run(&p, err, sizeof err);
  CHECK_EQ_INT(code, 0);
  remove_folder();
}

/* Qt 5 widgets, unchanged: during a 2.5 s stall the overlay's badge counts up over its window. */
static void test_overlay_qt_live_badge(void) {
  skip_without(LAGSCOPE_QT_STALL_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_QT_STALL_PATH, "3000", "2500", NULL};
  spawn_proc p;
  Display *d = NULL;
  Window app = start_under_overlay(&p, NULL, program, "qt_stall", &d);
  await_live_badge(d, app, "qt");
  XCloseDisplay(d);
  char err[16384];
  int code = wait_run(&p, err, sizeof err);
  CHECK_EQ_INT(code, 0);
  remove_folder();
}

/* --hud-mode overlay on an SDL2 program, which opens its display through dlsym (no XOpenDisplay
 * hook sees it): its window on SDL's x11 driver starts the overlay, and during a 2.5 s stall
 * the badge counts up over it (two shots, two counts). */
static void test_overlay_sdl_mode(void) {
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_SDL_WAIT_PATH, "--wait-ms", "2500", "--stall-ms", "2500", NULL};
  char *extra[] = {"--hud-mode", "overlay", NULL};
  spawn_proc p;
  Display *d = NULL;
  Window app = start_under_overlay(&p, extra, program, "sdl_wait", &d);
  shot before;
  await_shot(d, app, overlay_hud_shown, NULL, &before, "the HUD");
  await_live_badge(d, app, "sdl");
  shot_free(&before);
  XCloseDisplay(d);
  char err[16384];
  CHECK_EQ_INT(wait_run(&p, err, sizeof err), 0);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* --no-hud: the program's display gets no window of lagscope's. */
static void test_overlay_none_without_hud(void) {
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "0", "--stall-after-ms", "1500",
                     "--quit-after-ms", "1500", NULL};
  char *no_hud[] = {"--no-hud", "--allow-unwatched", NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(no_hud, program), SPAWN_CAPTURE_STDERR) == 0);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  await_window(d, "gtk_stall");
  /* Till the program's window goes (3 s, past the overlay's first second): never a window of
   * lagscope's. */
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while (screen_find_window(d, "gtk_stall") != 0) {
    CHECK_MSG(screen_find_window(d, OVERLAY_TITLE) == 0, "an overlay window with --no-hud");
    CHECK_MSG(spawn_now_ns() < deadline, "gtk_stall still there after %d ms", WAIT_MS);
    spawn_sleep_ms(50);
  }
  XCloseDisplay(d);
  CHECK_EQ_INT(spawn_wait(&p, WAIT_MS), 0);
  spawn_close(&p);
  remove_folder();
}

/* --hud-mode overlay on a GL program: glxgears (which sets no _NET_WM_PID: the window its swaps
 * drew is the one) gets the HUD in lagscope's window over its corner, as the reference shows it
 * over black, and none in its frames. */
static void test_overlay_glxgears_mode(void) {
  skip_without(LAGSCOPE_GLXGEARS_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_GLXGEARS_PATH, "-geometry", "300x600", NULL};
  char *extra[] = {"--hud-mode", "overlay", NULL};
  spawn_proc p;
  Display *d = NULL;
  Window app = start_under_overlay(&p, extra, program, "glxgears", &d);
  await_metrics(2);
  shot s;
  CHECK(screen_shot_area(d, app, (box){0, 0, 180, 80}, &s) == 0);
  save_artifact(&s, "overlay-glxgears.png");
  check_hud_shown(&s, (box){8, 8, 8 + HUD_W, 8 + HUD_H});
  shot_free(&s);
  XCloseDisplay(d);
  spawn_signal(&p, SIGTERM);
  CHECK_EQ_INT(spawn_wait(&p, WAIT_MS), 128 + SIGTERM);
  spawn_close(&p);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* Wayland without X: said once that no overlay can exist there and the viewer is the way; not
 * said with --no-hud. */
static void test_overlay_wayland_said(void) {
  make_folder();
  unsetenv("DISPLAY");
  setenv("WAYLAND_DISPLAY", "wayland-lagscope-test", 1);
  char *program[] = {"/bin/true", NULL};
  char err[16384];
  char *allowed[] = {"--allow-unwatched", NULL}; /* true has no loop: expected here */
  CHECK_EQ_INT(run_to_end(allowed, program, err, sizeof err), 0);
  const char *said = strstr(err, "Wayland without X");
  CHECK_MSG(said != NULL && strstr(said + 1, "Wayland without X") == NULL, "not said once: %s", err);
  CHECK(strstr(err, "the viewer shows it") != NULL);
  char *no_hud[] = {"--no-hud", "--allow-unwatched", NULL};
  CHECK_EQ_INT(run_to_end(no_hud, program, err, sizeof err), 0);
  CHECK(strstr(err, "Wayland without X") == NULL);
  unsetenv("WAYLAND_DISPLAY");
  remove_folder();
}

/* The overlay is stacked just above its program's window, never above another program's: a
 * second program's window mapped over the corner hides the HUD (for more than four of the
 * overlay's periods), and raising the first window brings it back. */
static void test_overlay_stacked_with_its_window(void) {
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  char *watched[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "0", "--stall-after-ms", "20000", NULL};
  spawn_proc p, other;
  Display *d = NULL;
  Window app = start_under_overlay(&p, NULL, watched, "gtk_stall", &d);
  shot s;
  await_shot(d, app, overlay_hud_shown, NULL, &s, "the HUD");
  shot_free(&s);
  /* Another program (no lagscope), its window mapped last: on top, at the same corner. */
  char *unwatched[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "0", "--stall-after-ms", "20000", NULL};
  CHECK(spawn_start(&other, LAGSCOPE_GTK_STALL_PATH, unwatched, SPAWN_CAPTURE_STDERR) == 0);
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  int hidden_since_ms = -1;
  uint64_t first_hidden = 0;
  for (;;) {
    CHECK(screen_shot_area(d, app, overlay_hud_area, &s) == 0);
    int panel = shot_count(&s, overlay_compact_box, overlay_is_panel) > 500;
    shot_free(&s);
    if (panel) {
      CHECK_MSG(first_hidden == 0, "the HUD came back over the other program's window");
    } else if (first_hidden == 0) {
      first_hidden = spawn_now_ns();
    } else {
      hidden_since_ms = (int)((spawn_now_ns() - first_hidden) / 1000000u);
      if (hidden_since_ms > 1100) break;
    }
    CHECK_MSG(spawn_now_ns() < deadline, "the other window never hid the HUD in %d ms", WAIT_MS);
    spawn_sleep_ms(50);
  }
  printf("the other program's window hid the HUD for %d ms\n", hidden_since_ms);
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)app);
  char *raise[] = {LAGSCOPE_XDOTOOL_PATH, "windowraise", id, NULL};
  xdotool(raise);
  await_shot(d, app, overlay_hud_shown, NULL, &s, "the HUD over its raised window");
  save_artifact(&s, "overlay-gtk-raised.png");
  shot_free(&s);
  XCloseDisplay(d);
  spawn_signal(&other, SIGTERM);
  spawn_wait(&other, WAIT_MS);
  spawn_close(&other);
  spawn_signal(&p, SIGTERM);
  CHECK_EQ_INT(spawn_wait(&p, WAIT_MS), 128 + SIGTERM);
  spawn_close(&p);
  remove_folder();
}

/* ---- l3afpad: a GTK editor opening a FIFO (issue 32, sections 1, 2 and 6) ------------------- */

/* What the main thread of process pid is blocked in, from /proc/PID/syscall: its call's number
 * and first two arguments; 0, or -1 while it runs (or the file cannot be read). */
static int main_thread_call(pid_t pid, long *nr, unsigned long *arg0, unsigned long *arg1) {
  char path[64], text[256];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
  FILE *in = fopen(path, "r");
  if (in == NULL) return -1;
  size_t n = fread(text, 1, sizeof text - 1, in);
  fclose(in);
  text[n] = '\0';
  return sscanf(text, "%ld %lx %lx", nr, arg0, arg1) == 3 ? 0 : -1;
}

/* The path pid's descriptor fd is open on ("" when it has none). */
static void fd_target(pid_t pid, unsigned long fd, char *out, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/fd/%lu", (int)pid, fd);
  ssize_t n = readlink(link, out, size - 1);
  out[n > 0 ? n : 0] = '\0';
}

/* The NUL-terminated string at address in pid's memory (we are its ancestor: allowed to read
 * it, as Yama's default rule says); "" when it cannot be read. */
static void string_at(pid_t pid, unsigned long address, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  out[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = pread(fd, out, size - 1, (off_t)address);
  close(fd);
  out[n > 0 ? n : 0] = '\0';
}

/* The whole screen, saved as name: what the program showed when it did not do as awaited. */
static void save_screen(const char *name) {
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  shot s;
  if (d != NULL && screen_shot(d, DefaultRootWindow(d), &s) == 0) {
    save_artifact(&s, name);
    shot_free(&s);
  }
  if (d != NULL) XCloseDisplay(d);
}

/* Waits (bounded) until pid's main thread is blocked in read() on a descriptor open on path
 * (want_read), or in openat() of path; the moment it was seen so, in spawn_now_ns's ns. */
static uint64_t await_blocked_on(pid_t pid, int want_read, const char *path) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  char target[512] = "";
  long nr = -1;
  for (;;) {
    unsigned long arg0 = 0, arg1 = 0;
    if (main_thread_call(pid, &nr, &arg0, &arg1) == 0) {
      if (want_read && nr == SYS_read) fd_target(pid, arg0, target, sizeof target);
      else if (!want_read && nr == SYS_openat) string_at(pid, arg1, target, sizeof target);
      else target[0] = '\0';
      if (target[0] != '\0' && strcmp(target, path) == 0) return spawn_now_ns();
    }
    if (spawn_now_ns() >= deadline) save_screen("l3afpad-not-blocked.png");
    CHECK_MSG(spawn_now_ns() < deadline, "the program never blocked in %s() on %s in %d ms (last: call %ld on '%s')",
              want_read ? "read" : "openat", path, WAIT_MS, nr, target);
    spawn_sleep_ms(2);
  }
}

/* Sleeps until at_ns (spawn_now_ns's clock). */
static void sleep_until(uint64_t at_ns) {
  uint64_t now = spawn_now_ns();
  if (at_ns > now) spawn_sleep_ms((int)((at_ns - now + 999999u) / 1000000u));
}

/* Dark pixels: the label of a sensitive button (an insensitive one is grey). */
static int is_dark(uint32_t p) { return px_r(p) < 90 && px_g(p) < 90 && px_b(p) < 90; }

/* The text of the PRIMARY selection (what is selected in an entry on the screen), converted
 * for window w: 1, or 0 when no one owns it or it did not come within a second. */
static int primary_text(Display *d, Window w, char *out, size_t size) {
  Atom utf8 = XInternAtom(d, "UTF8_STRING", False), into = XInternAtom(d, "LAGSCOPE_TEST_PRIMARY", False);
  XConvertSelection(d, XA_PRIMARY, utf8, into, w, CurrentTime);
  XFlush(d);
  uint64_t deadline = spawn_now_ns() + 1000 * 1000000ull;
  XEvent ev;
  while (!XCheckTypedWindowEvent(d, w, SelectionNotify, &ev)) {
    if (spawn_now_ns() >= deadline) return 0;
    spawn_sleep_ms(5);
  }
  if (ev.xselection.property == None) return 0;
  Atom type;
  int format;
  unsigned long items, left;
  unsigned char *data = NULL;
  int got = XGetWindowProperty(d, w, into, 0, (long)(size / 4), True, AnyPropertyType, &type, &format,
                               &items, &left, &data) == Success && data != NULL && format == 8;
  if (got) snprintf(out, size, "%.*s", (int)items, (const char *)data);
  if (data != NULL) XFree(data);
  return got;
}

/* Opens path in l3afpad's window win as a user does: File > Open (Ctrl+O), the path typed into
 * the dialog's location entry (Ctrl+L), Return. Each step waits for what GTK shows, since GTK
 * takes the keys in its own time:
 *   - the entry's text is then selected (Ctrl+A), which GTK offers as the PRIMARY selection:
 *     when that text ends with the file's name, GTK has taken every key typed, and it must be
 *     the whole path;
 *   - the dialog's Open button is sensitive: GTK makes it so 150 ms after the entry last
 *     changed (a timeout of its file chooser), from the entry's text. A Return before that does
 *     nothing (the default button is insensitive), and a second Return could reach the editor's
 *     text once the dialog is gone. The dialog, larger than the screen, is made 900 x 700 at the
 *     corner, so that its Open button (bottom right) can be seen: its label dark when sensitive,
 *     none of those pixels dark while it is not. */
static void l3afpad_open(Display *d, Window win, const char *path) {
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)win);
  char *open_dialog[] = {LAGSCOPE_XDOTOOL_PATH, "windowfocus", "--sync", id, "key", "ctrl+o", NULL};
  xdotool(open_dialog);
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  Window dialog;
  int x, y;
  while ((dialog = screen_find_window(d, "Open")) == 0 || !screen_window_origin(d, dialog, &x, &y)) {
    CHECK_MSG(spawn_now_ns() < deadline, "no Open dialog in %d ms", WAIT_MS);
    spawn_sleep_ms(20);
  }
  char dialog_id[32];
  snprintf(dialog_id, sizeof dialog_id, "%lu", (unsigned long)dialog);
  char *fit[] = {LAGSCOPE_XDOTOOL_PATH, "windowsize", "--sync", dialog_id, "900", "700",
                 "windowmove", "--sync", dialog_id, "0", "0", NULL};
  xdotool(fit);
  /* `type` takes every argument after it as text: it comes last. */
  char *type_path[] = {LAGSCOPE_XDOTOOL_PATH, "windowfocus", "--sync", dialog_id, "key", "ctrl+l",
                       "type", (char *)path, NULL};
  char *retype[] = {LAGSCOPE_XDOTOOL_PATH, "type", (char *)path, NULL};
  char *select_all[] = {LAGSCOPE_XDOTOOL_PATH, "key", "ctrl+a", NULL};
  const char *name = strrchr(path, '/');
  Window asker = XCreateSimpleWindow(d, DefaultRootWindow(d), 0, 0, 1, 1, 0, 0, 0);
  for (int attempt = 1;; attempt++) {
    xdotool(attempt == 1 ? type_path : retype);
    xdotool(select_all);
    /* The entry's whole text, once GTK took the keys up to Ctrl+A: it ends with the file's
     * name. It may lack the path's first keys: GTK gives the entry the focus after Ctrl+L in
     * an idle callback, and on a loaded machine the first "/" went elsewhere. Typed again over
     * the selection, into the entry that has the focus now. */
    char selected[512] = "";
    size_t len = 0;
    while (!primary_text(d, asker, selected, sizeof selected) || (len = strlen(selected)) < strlen(name) ||
           strcmp(selected + len - strlen(name), name) != 0) {
      if (spawn_now_ns() >= deadline) save_screen("l3afpad-path-not-typed.png");
      CHECK_MSG(spawn_now_ns() < deadline, "the Open dialog's entry never held %s in %d ms (selected: '%s')",
                path, WAIT_MS, selected);
      spawn_sleep_ms(20);
    }
    if (strcmp(selected, path) == 0) break;
    printf("the Open dialog's entry held '%s': typed again\n", selected);
    CHECK_MSG(attempt < 3, "the Open dialog's entry held '%s', not %s, %d times", selected, path, attempt);
  }
  XDestroyWindow(d, asker);
  const box open_button = {900 - 95, 700 - 45, 900 - 5, 700 - 5};
  for (;;) {
    shot s;
    long dark = 0;
    if (screen_shot_area(d, dialog, open_button, &s) == 0) {
      dark = shot_count(&s, (box){0, 0, s.width, s.height}, is_dark);
      shot_free(&s);
    }
    if (dark >= 20) break;
    if (spawn_now_ns() >= deadline) save_screen("l3afpad-open-not-sensitive.png");
    CHECK_MSG(spawn_now_ns() < deadline, "the Open button never became sensitive in %d ms (%ld dark pixels)",
              WAIT_MS, dark);
    spawn_sleep_ms(20);
  }
  char *enter[] = {LAGSCOPE_XDOTOOL_PATH, "key", "Return", NULL};
  xdotool(enter);
}

/* The hang_ended of the hang that covered at_ns (spawn_now_ns's clock, CLOCK_MONOTONIC as
 * the events' start_ns), or NULL. */
static const cJSON *hang_covering(const cJSON *all, uint64_t at_ns) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") != 0) continue;
    double start = spawn_json_number(e, "start_ns", -1), length = spawn_json_number(e, "duration_ns", -1);
    if (start >= 0 && length >= 0 && start <= (double)at_ns && (double)at_ns <= start + length) return e;
  }
  return NULL;
}

/* Waits (bounded) until the hang that covered at_ns has ended; its hang_id. The program's other
 * hangs, if any (its first frame, or its dialog built on a loaded machine), are its own. */
static int await_hang_over(uint64_t at_ns) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    const cJSON *ended = hang_covering(all, at_ns);
    int id = ended != NULL ? (int)spawn_json_number(ended, "hang_id", -1) : -1;
    cJSON_Delete(all);
    if (id > 0) return id;
    CHECK_MSG(spawn_now_ns() < deadline, "no hang ended over the block in %d ms", WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* The hang_ended of hang id, or NULL. */
static const cJSON *hang_ended_of(const cJSON *all, int id) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all)
    if (strcmp(spawn_json_type(e), "hang_ended") == 0 && (int)spawn_json_number(e, "hang_id", -1) == id)
      return e;
  return NULL;
}

static const char *string_of(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  CHECK_MSG(cJSON_IsString(item), "no string \"%s\" in %s", name, cJSON_PrintUnformatted(object));
  return item->valuestring;
}

/* The whole file at path (a report passes read_file's 64 KiB). Allocates. */
static char *read_whole(const char *path) {
  FILE *in = fopen(path, "r");
  CHECK_MSG(in != NULL, "no file %s", path);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  CHECK(out != NULL);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
  return text;
}

/* GET path from the viewer at 127.0.0.1:port with the token as a bearer: the status, and the
 * body in body (NUL-terminated, cut to size). */
static int viewer_get(int port, const char *token, const char *path, char *body, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(fd >= 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  struct timeval limit = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  CHECK_MSG(connect(fd, (struct sockaddr *)&to, sizeof to) == 0, "no viewer on port %d", port);
  char request[1024];
  int len = snprintf(request, sizeof request,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Connection: close\r\n\r\n", path, token);
  CHECK(write(fd, request, (size_t)len) == len);
  static char reply[1 << 20];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof reply - 1 && (n = read(fd, reply + got, sizeof reply - 1 - got)) > 0) got += (size_t)n;
  close(fd);
  reply[got] = '\0';
  const char *start = strstr(reply, "\r\n\r\n");
  snprintf(body, size, "%s", start != NULL ? start + 4 : "");
  return got > 12 ? atoi(reply + 9) : -1;
}

/* The report of hang n as the viewer serves it while the program
 * runs (GET /api/v1/hangs/ID, the token as a bearer). */
static cJSON *viewer_report(int n) {
  cJSON *all = read_events();
  const cJSON *started = last_of_type(all, "server_started");
  const cJSON *ended = hang_ended_of(all, n);
  CHECK(started != NULL && ended != NULL);
  const char *token = strstr(string_of(started, "url"), "token=");
  CHECK(token != NULL);
  char api[256];
  static char body[1 << 20];
  snprintf(api, sizeof api, "/api/v1/hangs/%s", string_of(ended, "report_id"));
  int status = viewer_get((int)spawn_json_number(started, "port", -1), token + 6, api, body, sizeof body);
  CHECK_MSG(status == 200, "the viewer answered %d to %s: %.200s", status, api, body);
  cJSON *served = cJSON_Parse(body);
  CHECK_MSG(served != NULL, "the viewer's %s is not JSON: %.200s", api, body);
  cJSON_Delete(all);
  return served;
}

/* text with XML's special characters escaped, as lagscope-run's JUnit file writes it. */
static void xml_escaped(const char *text, char *out, size_t size) {
  size_t n = 0;
  for (const char *p = text; *p && n + 7 < size; p++) {
    const char *with = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                     : *p == '"' ? "&quot;" : *p == '\'' ? "&apos;" : NULL;
    if (with != NULL) n += (size_t)snprintf(out + n, size - n, "%s", with);
    else out[n++] = *p;
  }
  out[n] = '\0';
}

/* The line of lagscope-run's summary that starts with prefix (its newline cut), in out. */
static void summary_line(const char *err, const char *prefix, char *out, size_t size) {
  const char *line = strstr(err, prefix);
  CHECK_MSG(line != NULL, "no \"%s\" in lagscope-run's summary", prefix);
  size_t n = strcspn(line, "\n");
  snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), line);
}

/* A hang of l3afpad's as lagscope told it, checked against what the test did: its event, its
 * report and the viewer's copy, lagscope-run's summary and JUnit message agree on the
 * cause (the same sentence, kind and label, the same phases) and on the program's own frames
 * (l3afpad's, never lagscope's hook). phases: the calls expected, in order, with the path
 * each was blocked on and the time the test saw it blocked. */
typedef struct expected_phase {
  const char *call;
  const char *path;
  double seen_ms;
} expected_phase;

static void check_l3afpad_hang(const cJSON *all, int n, const expected_phase *want, int want_count,
                               const char *err, const char *xml, const cJSON *served) {
  const cJSON *ended = hang_ended_of(all, n);
  CHECK(ended != NULL);
  double ms = spawn_json_number(ended, "duration_ms", -1);
  double seen = 0;
  for (int i = 0; i < want_count; i++) seen += want[i].seen_ms;
  /* A hang counts from the post of the first ping the main thread did not answer: up to a
   * ping interval (50 ms), and the monitor's own delay on a loaded machine, after the block
   * began; it ends when the loop answers again, after what l3afpad does between and after its
   * calls (reading what was written, closing the file, its title). */
  printf("hang %d: %.0f ms; the test saw it blocked %.0f ms\n", n, ms, seen);
  CHECK_MSG(ms >= seen - 150 && ms <= seen + 500, "hang %d of %.0f ms, blocked %.0f ms", n, ms, seen);
  CHECK_EQ_INT(strcmp(string_of(ended, "phase"), "running"), 0);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(ended, "cause");
  const char *summary = string_of(cause, "summary");
  const char *label = string_of(cause, "label");
  printf("hang %d: kind %s, label \"%s\", summary \"%s\"\n", n, string_of(cause, "kind"), label, summary);
  CHECK_EQ_INT(strcmp(string_of(cause, "kind"), "io"), 0);

  /* The summary sentence: each phase in order, "Blocked N ms in call() on PATH", joined by
   * ", then blocked"; N near what the test saw. */
  const char *at = summary;
  int dominant = 0;
  for (int i = 0; i < want_count; i++) {
    if (want[i].seen_ms > want[dominant].seen_ms) dominant = i;
    char head[32], tail[600];
    snprintf(head, sizeof head, "%s", i == 0 ? "Blocked " : ", then blocked ");
    CHECK_MSG(strncmp(at, head, strlen(head)) == 0, "phase %d of \"%s\" does not begin \"%s\"", i, summary, head);
    at += strlen(head);
    char *end = NULL;
    double phase_ms = strtod(at, &end);
    CHECK_MSG(end != at, "no duration in phase %d of \"%s\"", i, summary);
    snprintf(tail, sizeof tail, " ms in %s() on %s", want[i].call, want[i].path);
    CHECK_MSG(strncmp(end, tail, strlen(tail)) == 0, "phase %d of \"%s\" is not \"N%s\"", i, summary, tail);
    at = end + strlen(tail);
    /* The phase's time by the samples' clock (the first from the hang's start, each to the
     * next's first sample): the test's own time, give or take the hang's late start (above),
     * the time around the calls and a sample of 10 ms. */
    CHECK_MSG(phase_ms >= want[i].seen_ms - 150 && phase_ms <= want[i].seen_ms + 300,
              "phase %d: %.0f ms in %s(), the test saw %.0f ms", i, phase_ms, want[i].call, want[i].seen_ms);
  }
  /* Then the hang's time no phase told (what l3afpad does around its calls), when any:
   * " (and N ms elsewhere)", N within the hang's time the test did not see blocked. */
  if (strncmp(at, " (and ", 6) == 0) {
    char *end = NULL;
    double rest = strtod(at + 6, &end);
    CHECK_MSG(end != at + 6 && strcmp(end, " ms elsewhere)") == 0, "\"%s\" ends \"%s\"", summary, at);
    CHECK_MSG(rest >= 1 && rest <= ms - seen + 150, "%.0f ms elsewhere in a hang of %.0f ms, %.0f seen blocked",
              rest, ms, seen);
    at = end + strlen(end);
  }
  CHECK_MSG(*at == '\0', "more phases than %d in \"%s\"", want_count, summary);
  /* The label is the dominant phase's. */
  char want_label[600];
  snprintf(want_label, sizeof want_label, "io \xC2\xB7 %s %s", want[dominant].call, want[dominant].path);
  CHECK_MSG(strcmp(label, want_label) == 0, "label \"%s\", not \"%s\"", label, want_label);

  /* The report: the same cause, and its phases told one by one, in order. */
  const char *report_path = string_of(ended, "report_path");
  char *report_text = read_whole(report_path);
  cJSON *report = cJSON_Parse(report_text);
  free(report_text);
  CHECK_MSG(report != NULL, "the report %s is not JSON", report_path);
  const cJSON *report_cause = cJSON_GetObjectItemCaseSensitive(report, "cause");
  CHECK_EQ_INT(strcmp(string_of(report_cause, "summary"), summary), 0);
  CHECK_EQ_INT(strcmp(string_of(report_cause, "label"), label), 0);
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(report_cause, "phases");
  char *told = cJSON_PrintUnformatted(phases);
  printf("hang %d: the report's phases %s\n", n, told);
  free(told);
  if (want_count >= 2) {
    CHECK_EQ_INT(cJSON_GetArraySize(phases), want_count);
    double last_from = -1;
    for (int i = 0; i < want_count; i++) {
      const cJSON *p = cJSON_GetArrayItem(phases, i);
      CHECK_EQ_INT(strcmp(string_of(p, "kind"), "io"), 0);
      CHECK_EQ_INT(strcmp(string_of(p, "syscall"), want[i].call), 0);
      CHECK_EQ_INT(strcmp(string_of(p, "target"), want[i].path), 0);
      double share_ms = spawn_json_number(p, "share", -1) * ms, phase_ms = spawn_json_number(p, "ms", -1);
      CHECK_MSG(share_ms >= want[i].seen_ms - 150 && share_ms <= want[i].seen_ms + 300,
                "phase %d's share: %.0f ms, the test saw %.0f ms", i, share_ms, want[i].seen_ms);
      CHECK_MSG(phase_ms >= want[i].seen_ms - 150 && phase_ms <= want[i].seen_ms + 300 &&
                    spawn_json_number(p, "to_ms", -1) - spawn_json_number(p, "from_ms", -1) - phase_ms < 0.01 &&
                    spawn_json_number(p, "to_ms", -1) - spawn_json_number(p, "from_ms", -1) - phase_ms > -0.01,
                "phase %d: %.0f ms, the test saw %.0f ms", i, phase_ms, want[i].seen_ms);
      double from = spawn_json_number(p, "from_ms", -1);
      CHECK_MSG(from > last_from, "phase %d begins at %.0f ms, not after %.0f", i, from, last_from);
      last_from = from;
    }
  } else { /* one phase: the hang's single call, which the cause names itself */
    CHECK_EQ_INT(strcmp(string_of(report_cause, "syscall"), want[0].call), 0);
    CHECK_EQ_INT(strcmp(string_of(report_cause, "target"), want[0].path), 0);
  }
  /* The viewer served that report (asked while l3afpad ran): the same verdict. */
  const cJSON *served_cause = cJSON_GetObjectItemCaseSensitive(served, "cause");
  CHECK_EQ_INT(strcmp(string_of(served_cause, "summary"), summary), 0);
  char *a = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(served_cause, "phases"));
  char *b = cJSON_PrintUnformatted(phases);
  CHECK_MSG(strcmp(a, b) == 0, "the viewer's phases %s, the report's %s", a, b);
  free(a);
  free(b);

  /* The program's own frames: l3afpad's (Debian strips it: module+offset), never a frame of
   * lagscope's (its g_main_loop_run hook is on every GTK stack). */
  const cJSON *frame;
  int own = 0;
  cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack")) {
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(frame, "code");
    if (!cJSON_IsString(code) || strcmp(code->valuestring, "app") != 0) continue;
    own++;
    CHECK_MSG(in_module(frame, "/l3afpad"), "the app's frame is not l3afpad's: %s", cJSON_PrintUnformatted(frame));
  }
  CHECK_MSG(own >= 2, "%d frames of l3afpad's own", own);

  /* lagscope-run's summary: "  hang N: D ms, over budget, io: SENTENCE" and "    in FRAMES",
   * the frames l3afpad's; the JUnit message the same cause and frames. */
  char prefix[32], line[1024], frames_line[1024], cause_text[900];
  snprintf(prefix, sizeof prefix, "  hang %d: ", n);
  summary_line(err, prefix, line, sizeof line);
  snprintf(cause_text, sizeof cause_text, ", over budget, io: %s", summary);
  CHECK_MSG(strstr(line, cause_text) != NULL, "the summary's \"%s\" does not say \"%s\"", line, cause_text);
  CHECK_MSG(strstr(line, "(start-up)") == NULL, "a hang long after the start-up: %s", line);
  const char *next = strstr(err, line) + strlen(line) + 1;
  CHECK_MSG(strncmp(next, "    in ", 7) == 0, "no own frames after \"%s\"", line);
  summary_line(next, "    in ", frames_line, sizeof frames_line);
  const char *frames = frames_line + 7;
  CHECK_MSG(strncmp(frames, "l3afpad", 7) == 0 && strstr(frames, "hooks.c") == NULL &&
                strstr(frames, "lagscope") == NULL && strstr(frames, "g_main_loop_run") == NULL,
            "the own frames are not l3afpad's: %s", frames);
  char message[2048], escaped[4096];
  snprintf(message, sizeof message, "a hang of %.0f ms, over the budget; io: %s; in %s", ms, summary, frames);
  xml_escaped(message, escaped, sizeof escaped);
  CHECK_MSG(strstr(xml, escaped) != NULL, "the JUnit file does not say \"%s\"", escaped);
  cJSON_Delete(report);
}

/* A GTK program's settings, recent files and caches in the case's folder (no dconf: no D-Bus
 * session here), not the user's: l3afpad's and mousepad's. */
static void gtk_settings_in_folder(void) {
  setenv("XDG_CONFIG_HOME", folder, 1);
  setenv("XDG_DATA_HOME", folder, 1);
  setenv("XDG_CACHE_HOME", folder, 1);
  setenv("GSETTINGS_BACKEND", "memory", 1);
}

/* Debian's mousepad, whose code is all in its private library
 * /usr/lib/<triplet>/libmousepad.so.0 and whose main only calls into it (issue 45, item 1):
 * given a FIFO on its command line, it blocks opening it on its main thread, in
 * mousepad_file_open, until the test opens the FIFO's other end. The hang names
 * mousepad_file_open, the library's frames are the app's, and the signature holds them. */
static void test_mousepad_own_code(void) {
  skip_without(LAGSCOPE_MOUSEPAD_PATH);
  make_folder();
  with_screen();
  gtk_settings_in_folder();
  char fifo[400];
  snprintf(fifo, sizeof fifo, "%s/fifo.txt", folder);
  CHECK(mkfifo(fifo, 0600) == 0);
  char *program[] = {LAGSCOPE_MOUSEPAD_PATH, "--disable-server", fifo, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  pid_t app = -1;
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while ((app = child_of(p.pid)) <= 0) {
    CHECK_MSG(spawn_now_ns() < deadline, "lagscope-run %d has no child", (int)p.pid);
    spawn_sleep_ms(10);
  }
  /* 2.5 s blocked: the hang may have begun in its start-up's drawing, on the CPU (430 ms
   * here, more under load); the wait must outweigh it in the heaviest stack. */
  uint64_t in_open = await_blocked_on(app, 0, fifo);
  sleep_until(in_open + 2500 * 1000000ull);
  uint64_t opening = spawn_now_ns();
  int writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC); /* its reader waits: this passes */
  CHECK(writer >= 0);
  static const char text[] = "written into the FIFO by the test\n";
  CHECK(write(writer, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  CHECK(close(writer) == 0);
  int id = await_hang_over(opening);
  spawn_signal(&p, SIGTERM); /* passed on: mousepad ends */
  char err[32768];
  wait_run(&p, err, sizeof err);
  cJSON *all = read_events();
  const cJSON *ended = hang_ended_of(all, id);
  CHECK(ended != NULL);
  const cJSON *stack = cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack");
  int in_library = 0;
  const cJSON *frame;
  cJSON_ArrayForEach(frame, stack) {
    if (!in_module(frame, "/libmousepad.so.0")) continue;
    in_library++;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(frame, "code");
    CHECK_MSG(cJSON_IsString(code) && strcmp(code->valuestring, "app") == 0, "not the app's: %s",
              cJSON_PrintUnformatted(frame));
  }
  printf("%d frames in libmousepad.so.0: %s\n", in_library, cJSON_PrintUnformatted(stack));
  CHECK_MSG(in_library >= 2, "%d frames in libmousepad.so.0", in_library);
  const cJSON *frames = cJSON_GetObjectItemCaseSensitive(ended, "signature_frames");
  const cJSON *first = cJSON_GetArrayItem(frames, 0);
  CHECK_MSG(cJSON_IsString(first) && strcmp(first->valuestring, "mousepad_file_open") == 0,
            "signature_frames %s", cJSON_PrintUnformatted(frames));
  CHECK_MSG(strstr(err, "    in mousepad_file_open <- ") != NULL, "%s", err);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* Issue 45, item 7: l3afpad stuck while its Open dialog (900 x 700 at the screen's corner, a
 * transient window mapped above the main window) covers the HUD's corner. The stall: GTK reads
 * its bookmarks file again on the main thread when it changes (the dialog's side pane shows
 * them); the test puts a FIFO there with no writer, and GTK's open() waits for one. The badge is
 * seen over the dialog, counting, while the dialog is viewable over that corner. */
static void test_overlay_l3afpad_over_its_dialog(void) {
  skip_without(LAGSCOPE_L3AFPAD_PATH);
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  gtk_settings_in_folder();
  char gtk_dir[320], bookmarks[340], fifo[340];
  snprintf(gtk_dir, sizeof gtk_dir, "%s/gtk-3.0", folder);
  snprintf(bookmarks, sizeof bookmarks, "%s/bookmarks", gtk_dir);
  snprintf(fifo, sizeof fifo, "%s/fifo", folder);
  char fifo_link[340], plain[340];
  snprintf(fifo_link, sizeof fifo_link, "%s/fifo-link", folder);
  snprintf(plain, sizeof plain, "%s/plain", folder);
  CHECK(mkdir(gtk_dir, 0700) == 0 && mkfifo(fifo, 0600) == 0 && link(fifo, fifo_link) == 0);
  FILE *empty = fopen(plain, "w");
  CHECK(empty != NULL && fclose(empty) == 0);
  char *program[] = {LAGSCOPE_L3AFPAD_PATH, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window win = await_window(d, "(Untitled)");
  await_drawn_and_answering();
  await_overlay(d, win, 1);
  pid_t app = child_of(p.pid);
  CHECK_MSG(app > 0, "lagscope-run %d has no child", (int)p.pid);
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)win);
  char *open_dialog[] = {LAGSCOPE_XDOTOOL_PATH, "windowfocus", "--sync", id, "key", "ctrl+o", NULL};
  xdotool(open_dialog);
  Window dialog = await_window(d, "Open");
  char dialog_id[32];
  snprintf(dialog_id, sizeof dialog_id, "%lu", (unsigned long)dialog);
  char *fit[] = {LAGSCOPE_XDOTOOL_PATH, "windowsize", "--sync", dialog_id, "900", "700",
                 "windowmove", "--sync", dialog_id, "0", "0", NULL};
  xdotool(fit);
  await_drawn_and_answering();
  /* The program's hangs until now (building the dialog, on a loaded machine), awaited until
   * all ended: the next one is the stall's. */
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  int began, ended;
  for (;;) {
    cJSON *all = read_events();
    began = count_type(all, "hang_began"), ended = count_type(all, "hang_ended");
    cJSON_Delete(all);
    if (began == ended) break;
    CHECK_MSG(spawn_now_ns() < deadline, "%d hangs began, %d ended, after %d ms", began, ended, WAIT_MS);
    spawn_sleep_ms(20);
  }
  CHECK(rename(fifo, bookmarks) == 0);
  await_blocked_on(app, 0, bookmarks);
  /* The dialog covers the HUD's corner of the main window, viewable, above it. */
  int dx = -1, dy = -1, wx = -1, wy = -1;
  XWindowAttributes a;
  CHECK(screen_window_origin(d, dialog, &dx, &dy) && XGetWindowAttributes(d, dialog, &a));
  CHECK(screen_window_origin(d, win, &wx, &wy));
  CHECK_MSG(a.map_state == IsViewable && dx <= wx + overlay_hud_area.x0 && dy <= wy + overlay_hud_area.y0 &&
                dx + a.width >= wx + overlay_hud_area.x1 && dy + a.height >= wy + overlay_hud_area.y1,
            "the dialog (%dx%d at %d,%d) does not cover the HUD's corner of the window at %d,%d",
            a.width, a.height, dx, dy, wx, wy);
  printf("the Open dialog, %dx%d at %d,%d, covers the window's corner at %d,%d\n", a.width, a.height, dx,
         dy, wx, wy);
  await_live_badge_after(d, win, "l3afpad-dialog", ended);
  /* An empty file in its place (GTK may read it again, on the monitor's next event), then a
   * writer for the FIFO it waits on: its open passes, its read finds the end. */
  CHECK(rename(plain, bookmarks) == 0);
  int writer = open(fifo_link, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  CHECK(writer >= 0);
  close(writer);
  await_more("hang_ended", ended);
  char *quit[] = {LAGSCOPE_XDOTOOL_PATH, "key", "Escape", "windowfocus", "--sync", id, "key", "ctrl+q", NULL};
  xdotool(quit);
  XCloseDisplay(d);
  char err[32768];
  CHECK_EQ_INT(wait_run(&p, err, sizeof err), 0); /* l3afpad's own: no budget given */
  remove_folder();
}

/* Debian's l3afpad (GTK 3, stripped), unchanged, opens FIFOs through File > Open as a user
 * would. Opening one, it reads it on the main thread, then opens it again for writing (fopen
 * "a": can the file be saved?); either call blocks while the other end is not there:
 *   1. fifo_read.txt, a writer already there (the test holds it open): l3afpad blocks in
 *      read() until the test writes, 1.5 s after it saw it blocked, then in openat() for
 *      writing until the test opens it for reading, 1.0 s later: one hang in two phases,
 *      "Blocked 1500 ms in read() on …/fifo_read.txt, then blocked 1000 ms in openat() on
 *      …/fifo_read.txt", labelled by the read;
 *   2. fifo_open.txt, no writer (a reader held by the test, so that the second open passes):
 *      l3afpad blocks 1.2 s in openat() until the test opens it for writing: one phase,
 *      "Blocked 1200 ms in openat() on …/fifo_open.txt".
 * Each time as lagscope-run's event, report, viewer, summary and JUnit message tell it (the
 * same sentence and l3afpad's own frames), its length and phases against the test's clock; the
 * HUD over the window shows the last hang. Then Ctrl+Q: l3afpad's clean exit, exit 3 over
 * --budget-ms 500. */
static void test_l3afpad_fifo_phases(void) {
  skip_without(LAGSCOPE_L3AFPAD_PATH);
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  gtk_settings_in_folder();
  char fifo_read[400], fifo_open[400], reports[320];
  snprintf(fifo_read, sizeof fifo_read, "%s/fifo_read.txt", folder);
  snprintf(fifo_open, sizeof fifo_open, "%s/fifo_open.txt", folder);
  snprintf(reports, sizeof reports, "%s/reports", folder);
  CHECK(mkfifo(fifo_read, 0600) == 0 && mkfifo(fifo_open, 0600) == 0);
  char *extra[] = {"--budget-ms", "500", "--junit", junit, "--report-dir", reports, "--hud-expanded", NULL};
  char *program[] = {LAGSCOPE_L3AFPAD_PATH, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window win = await_window(d, "(Untitled)");
  await_drawn_and_answering(); /* its start-up over: what follows is the FIFOs' */
  await_overlay(d, win, 1);
  shot before, after;
  await_shot(d, win, overlay_hud_shown, NULL, &before, "the HUD");
  pid_t app = child_of(p.pid);
  CHECK_MSG(app > 0, "lagscope-run %d has no child", (int)p.pid);

  /* 1. read() then openat(). */
  int writer = open(fifo_read, O_RDWR | O_CLOEXEC); /* a writer: l3afpad's open does not wait */
  CHECK(writer >= 0);
  l3afpad_open(d, win, fifo_read);
  uint64_t in_read = await_blocked_on(app, 1, fifo_read);
  sleep_until(in_read + 1500 * 1000000ull);
  uint64_t reading = spawn_now_ns(); /* still in read(): inside the hang, wherever it began */
  static const char text[] = "written into the FIFO by the test\n";
  CHECK(write(writer, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  CHECK(close(writer) == 0); /* and the end of the file: no writer left */
  uint64_t wrote = spawn_now_ns();
  uint64_t in_open = await_blocked_on(app, 0, fifo_read);
  sleep_until(in_open + 1000 * 1000000ull);
  uint64_t opening = spawn_now_ns();
  int reader = open(fifo_read, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* its open for writing passes */
  CHECK(reader >= 0);
  uint64_t opened = spawn_now_ns();
  int first_id = await_hang_over(reading);
  close(reader);
  expected_phase first[] = {{"read", fifo_read, (double)(wrote - in_read) / 1e6},
                            {"openat", fifo_read, (double)(opened - in_open) / 1e6}};
  await_shot(d, win, last_hang_changed, &before, &after, "the last-hang line");
  save_artifact(&after, "l3afpad-fifo-hud.png");
  shot_free(&after);

  /* 2. openat() of a FIFO without a writer. */
  reader = open(fifo_open, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* l3afpad's open for writing passes */
  CHECK(reader >= 0);
  l3afpad_open(d, win, fifo_open);
  uint64_t in_open2 = await_blocked_on(app, 0, fifo_open);
  sleep_until(in_open2 + 1200 * 1000000ull);
  uint64_t opening2 = spawn_now_ns();
  writer = open(fifo_open, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  CHECK(writer >= 0);
  uint64_t opened2 = spawn_now_ns();
  CHECK(write(writer, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  close(writer);
  int second_id = await_hang_over(opening2);
  close(reader);
  expected_phase second[] = {{"openat", fifo_open, (double)(opened2 - in_open2) / 1e6}};

  /* The viewer's copies of both reports, while l3afpad runs; then Ctrl+Q: nothing to save,
   * l3afpad quits. */
  cJSON *served1 = viewer_report(first_id), *served2 = viewer_report(second_id);
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)win);
  char *quit[] = {LAGSCOPE_XDOTOOL_PATH, "windowfocus", "--sync", id, "key", "ctrl+q", NULL};
  xdotool(quit);
  shot_free(&before);
  XCloseDisplay(d);
  char err[32768];
  int code = wait_run(&p, err, sizeof err);
  CHECK_EQ_INT(code, 3); /* l3afpad's 0, over the budget */
  cJSON *all = read_events();
  check_hooks_right(all);
  /* One hang over both of the first FIFO's calls, and the second's alone. The program's other
   * hangs, if a loaded machine gave it any (its first frame, its dialog), are counted too. */
  int hangs = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) /* an idle "hang" (counted: false) is none */
    hangs += strcmp(spawn_json_type(e), "hang_ended") == 0 &&
             !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(e, "counted"));
  printf("%d hangs: the FIFOs' %d and %d\n", hangs, first_id, second_id);
  CHECK_MSG(second_id > first_id && hang_covering(all, opening) == hang_ended_of(all, first_id),
            "the first FIFO's read and openat are not one hang");
  char header[96];
  snprintf(header, sizeof header, "lagscope-run: l3afpad: %d hangs, ", hangs);
  CHECK_MSG(strstr(err, header) != NULL, "the summary does not begin \"%s\"", header);
  static char xml[65536];
  snprintf(xml, sizeof xml, "%s", read_file(junit));
  check_l3afpad_hang(all, first_id, first, 2, err, xml, served1);
  check_l3afpad_hang(all, second_id, second, 1, err, xml, served2);
  cJSON_Delete(served1);
  cJSON_Delete(served2);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* Waits (bounded) until a report in folder, rewritten while its hang lasts, holds text and also. */
static void await_report_holding(const char *dir, const char *text, const char *also) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d != NULL && !found && (e = readdir(d)) != NULL) {
      char path[700];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      size_t n = strlen(e->d_name);
      found = e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0 &&
              strstr(read_file(path), text) != NULL && strstr(read_file(path), also) != NULL;
    }
    if (d != NULL) closedir(d);
    if (found) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no report in %s holds %s after %d ms", dir, text, WAIT_MS);
    spawn_sleep_ms(50);
  }
}

/* A Debian program killed during a hang (issue 44, item 2; a CI job's timeout does this): l3afpad
 * blocked in read() on a FIFO, SIGKILL once its report on disk says so. lagscope-run's summary
 * and JUnit still tell the cause and l3afpad's own frames, from the report's last rewrite, and
 * say it did not end (before: "hang N: 2300 ms (the program ended during it)" alone). */
static void test_l3afpad_killed_in_hang(void) {
  skip_without(LAGSCOPE_L3AFPAD_PATH);
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  setenv("XDG_CONFIG_HOME", folder, 1);
  setenv("XDG_DATA_HOME", folder, 1);
  setenv("XDG_CACHE_HOME", folder, 1);
  setenv("GSETTINGS_BACKEND", "memory", 1);
  char fifo[400], reports[320];
  snprintf(fifo, sizeof fifo, "%s/fifo_killed.txt", folder);
  snprintf(reports, sizeof reports, "%s/reports", folder);
  CHECK(mkfifo(fifo, 0600) == 0);
  char *extra[] = {"--budget-ms", "500", "--junit", junit, "--report-dir", reports, "--no-hud", NULL};
  char *program[] = {LAGSCOPE_L3AFPAD_PATH, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window win = await_window(d, "(Untitled)");
  await_drawn_and_answering();
  pid_t app = child_of(p.pid);
  CHECK_MSG(app > 0, "lagscope-run %d has no child", (int)p.pid);
  int writer = open(fifo, O_RDWR | O_CLOEXEC); /* a writer: l3afpad's open does not wait */
  CHECK(writer >= 0);
  l3afpad_open(d, win, fifo);
  uint64_t in_read = await_blocked_on(app, 1, fifo);
  sleep_until(in_read + 1500 * 1000000ull); /* a hang over the 500 ms budget */
  /* The cause, in a rewrite while it lasts: its report in progress names the FIFO. */
  await_report_holding(reports, "\"state\":\"in_progress\"", "fifo_killed.txt");
  CHECK(kill(app, SIGKILL) == 0);
  char err[16384];
  int code = wait_run(&p, err, sizeof err);
  printf("killed in its hang: exit %d\n%s", code, err);
  CHECK_EQ_INT(code, 3); /* over the budget, not ended */
  CHECK_MSG(strstr(err, "(the program ended during it), over budget, io: Blocked") != NULL, "%s", err);
  CHECK_MSG(strstr(err, "\n    in l3afpad") != NULL, "no own frames of l3afpad: %s", err);
  CHECK_MSG(strstr(err, "not ended: its cause and frames as of its report's last rewrite, ") != NULL, "%s", err);
  const char *xml = read_file(junit);
  CHECK_MSG(strstr(xml, "(not ended: the program ended during it); io: Blocked") != NULL, "%s", xml);
  CHECK_MSG(strstr(xml, "<property name=\"not_ended\" value=\"1\"/>") != NULL, "%s", xml);
  close(writer);
  XCloseDisplay(d);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* ---- the display's rate: read from RandR ------------------------------------------------------- */

#if LAGSCOPE_ATTACH_RANDR
/* The connection that set the screen's mode: kept open till the case ends, as Xvfb puts its
 * CRTC back to its own mode (no timings) when the connection that made the mode closes (seen
 * with Xvfb 21.1). */
static xcb_connection_t *mode_setter;

/* Sets Xvfb's one CRTC to a 1024x768 mode with the timings of VESA's CVT at 75 Hz (82 MHz,
 * 1360 x 805 in all: 74.9 Hz, which xrandr shows as 74.90). Xvfb's own mode has a clock and
 * totals of 0: no rate. */
static void set_screen_to_75_hz(void) {
  int screen_number = 0;
  mode_setter = xcb_connect(getenv("DISPLAY"), &screen_number);
  CHECK(!xcb_connection_has_error(mode_setter));
  xcb_window_t root = xcb_setup_roots_iterator(xcb_get_setup(mode_setter)).data->root;
  free(xcb_randr_query_version_reply(mode_setter, xcb_randr_query_version(mode_setter, 1, 3), NULL));
  xcb_randr_get_screen_resources_current_reply_t *r = xcb_randr_get_screen_resources_current_reply(
      mode_setter, xcb_randr_get_screen_resources_current(mode_setter, root), NULL);
  CHECK(r != NULL && r->num_crtcs >= 1 && r->num_outputs >= 1);
  xcb_randr_crtc_t crtc = xcb_randr_get_screen_resources_current_crtcs(r)[0];
  xcb_randr_output_t output = xcb_randr_get_screen_resources_current_outputs(r)[0];
  static const char name[] = "1024x768_75";
  xcb_randr_mode_info_t mode = {.width = 1024, .height = 768, .dot_clock = 82000000,
                                .hsync_start = 1088, .hsync_end = 1192, .htotal = 1360,
                                .vsync_start = 771, .vsync_end = 775, .vtotal = 805,
                                .name_len = sizeof name - 1};
  xcb_randr_create_mode_reply_t *made = xcb_randr_create_mode_reply(
      mode_setter, xcb_randr_create_mode(mode_setter, root, mode, sizeof name - 1, name), NULL);
  CHECK(made != NULL);
  CHECK(xcb_request_check(mode_setter, xcb_randr_add_output_mode_checked(mode_setter, output,
                                                                         made->mode)) == NULL);
  xcb_randr_set_crtc_config_reply_t *set = xcb_randr_set_crtc_config_reply(
      mode_setter,
      xcb_randr_set_crtc_config(mode_setter, crtc, XCB_CURRENT_TIME, r->config_timestamp, 0, 0,
                                made->mode, XCB_RANDR_ROTATION_ROTATE_0, 1, &output),
      NULL);
  CHECK_MSG(set != NULL && set->status == XCB_RANDR_SET_CONFIG_SUCCESS, "the 75 Hz mode not set");
  free(set);
  free(made);
  free(r);
}

/* The refresh_hz of the metrics lines of one run of gtk_stall (3 s) under lagscope-run with
 * extra: at least two lines, every one says want; when read, lines before the first reading
 * may say the config's 60, none after it. */
static void check_refresh(char *const extra[], double want, int read) {
  unlink(events);
  char *program[] = {LAGSCOPE_GTK_STALL_PATH, "--stall-ms", "0", "--stall-after-ms", "1500",
                     "--quit-after-ms", "1500", NULL};
  char err[16384];
  CHECK_EQ_INT(run_to_end(extra, program, err, sizeof err), 0);
  cJSON *all = read_events();
  CHECK_MSG(count_type(all, "metrics") >= 2, "%d metrics lines", count_type(all, "metrics"));
  const cJSON *e;
  int got = 0;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "metrics") != 0) continue;
    double hz = spawn_json_number(e, "refresh_hz", -1);
    printf("metrics: refresh_hz %.0f\n", hz);
    got |= hz == want;
    CHECK_MSG(hz == want || (read && !got && hz == 60), "refresh_hz %.0f, not %.0f", hz, want);
  }
  CHECK_MSG(got, "no metrics line says refresh_hz %.0f", want);
  double last = spawn_json_number(last_of_type(all, "metrics"), "refresh_hz", -1);
  CHECK_MSG(last == want, "the last metrics line says refresh_hz %.0f, not %.0f", last, want);
  /* The log: the start-up's line says the configured rate, until measured; the rate read is
   * said once it is known (issue 45, item 9), and no rate is said measured that was not. */
  char started[64], measured[64];
  snprintf(started, sizeof started, ", display %.0f Hz until measured", read ? 60.0 : want);
  snprintf(measured, sizeof measured, "lagscope: display %.0f Hz, measured", want);
  CHECK_MSG(strstr(err, started) != NULL, "no \"%s\" in lagscope-run's stderr", started);
  CHECK_EQ_INT(strstr(err, measured) != NULL, read);
  CHECK_EQ_INT(strstr(err, " Hz, measured") != NULL, read);
  cJSON_Delete(all);
}
#endif

/* Xvfb's own mode has no timings: no rate read, the config's 60 Hz. With a 75 Hz mode set
 * through RandR, the metrics say 75 (74.9 rounded) in the default mode and with --no-hud (the
 * rate is read whatever the HUD), and so does the log once read; --refresh-hz 50 is taken as
 * given, nothing read. */
static void test_refresh_from_randr(void) {
#if !LAGSCOPE_ATTACH_RANDR
  printf("SKIP: built without xcb-randr (and the preload without reading the rate)\n");
  exit(SKIP);
#else
  make_folder();
  with_screen();
  check_refresh(NULL, 60, 0);
  set_screen_to_75_hz();
  check_refresh(NULL, 75, 1);
  char *no_hud[] = {"--no-hud", "--allow-unwatched", NULL};
  check_refresh(no_hud, 75, 1);
  char *given[] = {"--refresh-hz", "50", NULL};
  check_refresh(given, 50, 0);
  xcb_disconnect(mode_setter);
  xvfb_stop(&xvfb);
  remove_folder();
#endif
}

static const test_case cases[] = {
    TEST_CASE(gtk_stall_over_budget),
    TEST_CASE(gtk_clean_within_budget),
    TEST_CASE(gtk_stall_minidebuginfo),
    TEST_CASE(private_library_own_code),
    TEST_CASE(mousepad_own_code),
    TEST_CASE(glxgears_frames_and_hud),
    TEST_CASE(es2gears_egl_hud),
    TEST_CASE(sdl_testgl2_hud),
    TEST_CASE(widget_factory_idle),
    TEST_CASE(gtk3_demo_modal_and_hidden),
    TEST_CASE(sdl_testsprite_frames),
    TEST_CASE(sdl_frames_then_exit),
    TEST_CASE(sdl_renderer_hud),
    TEST_CASE(sdl_renderer_state_kept),
    TEST_CASE(sdl_vulkan_no_hud_said),
    TEST_CASE(sdl_wait_idle_then_stall),
    TEST_CASE(qt_stall),
    TEST_CASE(glib_pings_allocate_nothing),
    TEST_CASE(exit_status_and_environment),
    TEST_CASE(bad_options),
    TEST_CASE(never_harms_or_guesses),
    TEST_CASE(stopped_time_of_a_cut_short_hang),
    TEST_CASE(overlay_gtk_live_badge),
    TEST_CASE(overlay_qt_live_badge),
    TEST_CASE(overlay_sdl_mode),
    TEST_CASE(overlay_none_without_hud),
    TEST_CASE(overlay_glxgears_mode),
    TEST_CASE(overlay_wayland_said),
    TEST_CASE(overlay_stacked_with_its_window),
    TEST_CASE(l3afpad_fifo_phases),
    TEST_CASE(l3afpad_killed_in_hang),
    TEST_CASE(overlay_l3afpad_over_its_dialog),
    TEST_CASE(refresh_from_randr),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
