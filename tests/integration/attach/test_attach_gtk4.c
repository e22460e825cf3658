/* lagscope-run on GTK 4 and Qt 6 programs, on X11 (Xvfb) and on Wayland (weston, headless)
 * (test_attach.c lists the cases): the tests' own gtk4_stall (animating every frame, one 800 ms
 * stall) and qt6_stall (a label repainted every 16 ms, one 800 ms stall): every frame the program
 * drew is counted, at its own cadence, "idle" is false while it animates, and the stall is one
 * hang naming its function; and gtk4-demo's "frames" demo (a frame-rate meter animating every
 * frame): its frames counted, not idle. GSK_RENDERER=cairo: Debian 12's GTK 4 has no Vulkan
 * renderer, and its GL one under Mesa's software GL draws a frame or two and then waits on
 * Xvfb (the program itself draws no more: nothing to count), while on weston it draws on. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

static spawn_proc weston;

/* A headless weston on a socket in the case's folder (XDG_RUNTIME_DIR), WAYLAND_DISPLAY at it,
 * no DISPLAY: the program is a Wayland client only. */
static void with_weston(void) {
  char socket_name[64], socket_path[400], option[96];
  snprintf(socket_name, sizeof socket_name, "lagscope-test-%d", (int)getpid());
  snprintf(socket_path, sizeof socket_path, "%s/%s", folder, socket_name);
  snprintf(option, sizeof option, "--socket=%s", socket_name);
  setenv("XDG_RUNTIME_DIR", folder, 1);
  char *argv[] = {LAGSCOPE_WESTON_PATH, "--backend=headless-backend.so", "--use-pixman",
                  option, "--idle-time=0", NULL};
  CHECK(spawn_start(&weston, LAGSCOPE_WESTON_PATH, argv, SPAWN_CAPTURE_STDERR) == 0);
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while (access(socket_path, F_OK) != 0) {
    CHECK_MSG(spawn_now_ns() < deadline, "weston made no socket %s", socket_path);
    spawn_sleep_ms(20);
  }
  setenv("WAYLAND_DISPLAY", socket_name, 1);
  unsetenv("DISPLAY");
}

static void weston_stop(void) {
  spawn_signal(&weston, SIGTERM);
  spawn_wait(&weston, WAIT_MS);
  spawn_close(&weston);
  unsetenv("WAYLAND_DISPLAY");
}

/* The program's own last line on stdout ("gtk4_stall: N frames …", "qt_stall: N paints …"):
 * its frames and its own rate, read back; lagscope-run's exit code; its stderr in err. */
static int run_own(char *const program[], const char *prefix, double *own_frames,
                   double *own_fps, char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  char line[1024];
  *own_frames = *own_fps = -1;
  while (spawn_read_line(&p, line, sizeof line, WAIT_MS) == SPAWN_LINE) {
    printf("%s\n", line);
    if (strncmp(line, prefix, strlen(prefix)) == 0)
      CHECK(sscanf(line + strlen(prefix), "%lf frames in %*f ms, %lf fps", own_frames, own_fps) == 2 ||
            sscanf(line + strlen(prefix), "%lf paints, %lf per second", own_frames, own_fps) == 2);
  }
  return wait_run(&p, err, size);
}

/* While the program animated (from the metrics line after its first frames to the last line
 * before its end), no line says idle; lagscope's frames are the program's, and so is its rate
 * (the fps of the lines outside the stall's). */
static void check_animated(const cJSON *all, double own_frames, double own_fps) {
  double counted = frames_counted(all);
  printf("the program drew %.0f frames at %.1f fps; lagscope counted %.0f\n", own_frames, own_fps,
         counted);
  CHECK_MSG(own_frames >= 30, "the program drew only %.0f frames", own_frames);
  CHECK_MSG(counted >= own_frames * 0.95 && counted <= own_frames * 1.05 + 2,
            "%.0f frames counted for %.0f drawn", counted, own_frames);
  int lines = 0, idle = 0, steady = 0;
  double fps_sum = 0;
  const cJSON *e, *previous = NULL;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "metrics") != 0) continue;
    double total = spawn_json_number(e, "total_frames", 0);
    int began = previous != NULL && spawn_json_number(previous, "total_frames", 0) > 0;
    /* A line in which lagscope itself could not watch for long (its monitor starved on a
     * loaded machine: over 100 ms of its half second) judges no frame gap: left out. */
    int blind = previous != NULL && spawn_json_number(e, "monitor_blind_ms", 0) >
                                        spawn_json_number(previous, "monitor_blind_ms", 0) + 100;
    previous = e;
    if (!began || total >= counted || blind) continue; /* its start, its end, blind */
    lines++;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "idle"))) {
      idle++;
      printf("idle while animating: %s\n", cJSON_PrintUnformatted(e));
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "hang_in_progress")) &&
        spawn_json_number(e, "dropped", 0) == 0) {
      steady++;
      fps_sum += spawn_json_number(e, "fps", 0);
    }
  }
  CHECK_MSG(lines >= 3 && idle == 0, "%d of %d metrics lines idle while the program animated",
            idle, lines);
  if (steady > 0) {
    double fps = fps_sum / steady;
    printf("fps %.1f in %d steady lines, the program's own %.1f\n", fps, steady, own_fps);
    CHECK_MSG(fps >= own_fps * 0.75 && fps <= own_fps * 1.25 + 2,
              "fps %.1f, the program's own %.1f", fps, own_fps);
  }
}

/* One hang for the 800 ms stall, whole, naming the function that stalled (the start-up, on a
 * loaded machine, may be a real hang of its own: it names no such function). */
static void check_stall(const cJSON *all, const char *function) {
  int named = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") != 0 ||
        !stack_has(cJSON_GetObjectItemCaseSensitive(e, "heaviest_stack"), function))
      continue;
    named++;
    double ms = spawn_json_number(e, "duration_ms", -1);
    CHECK_MSG(ms >= 700 && ms <= 2500, "hang of %.1f ms for an 800 ms stall", ms);
  }
  CHECK_MSG(named == 1, "%d hangs name %s", named, function);
}

static void gtk4_stall_case(void) {
  setenv("GSK_RENDERER", "cairo", 1);
  setenv("GTK_A11Y", "none", 1);
  char *program[] = {LAGSCOPE_GTK4_STALL_PATH, "--run-ms", "6000", "--stall-after-ms", "2500",
                     NULL};
  double frames, fps;
  char err[16384];
  CHECK_EQ_INT(run_own(program, "gtk4_stall: ", &frames, &fps, err, sizeof err), 0);
  cJSON *all = read_events();
  check_animated(all, frames, fps);
  check_stall(all, "attach_gtk4_stall");
  CHECK(strstr(err, " <- attach_gtk4_stall (gtk4_stall.c:") != NULL);
  cJSON_Delete(all);
}

void test_gtk4_frames_x11(void) {
  skip_without(LAGSCOPE_GTK4_STALL_PATH);
  make_folder();
  with_screen();
  gtk4_stall_case();
  xvfb_stop(&xvfb);
  remove_folder();
}

void test_gtk4_frames_wayland(void) {
  skip_without(LAGSCOPE_GTK4_STALL_PATH);
  skip_without(LAGSCOPE_WESTON_PATH);
  make_folder();
  with_weston();
  setenv("GDK_BACKEND", "wayland", 1);
  gtk4_stall_case();
  weston_stop();
  remove_folder();
}

/* gtk4-demo's "frames" demo for 12 metrics lines after its first frame: frames counted at
 * more than 10 a second, the last 6 lines not idle. */
static void gtk4_demo_case(void) {
  setenv("GSK_RENDERER", "cairo", 1);
  setenv("GTK_A11Y", "none", 1);
  char *program[] = {LAGSCOPE_GTK4_DEMO_PATH, "--run=frames", NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  await_drawn_and_answering();
  await_metrics(metrics_count() + 12);
  spawn_signal(&p, SIGTERM);
  char err[16384];
  CHECK_EQ_INT(wait_run(&p, err, sizeof err), 128 + SIGTERM);
  cJSON *all = read_events();
  int n = count_type(all, "metrics"), i = 0, idle = 0;
  double fps_sum = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "metrics") != 0 || i++ < n - 6) continue;
    idle += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "idle"));
    fps_sum += spawn_json_number(e, "fps", 0);
  }
  printf("gtk4-demo frames: %.0f frames counted, %.1f fps in the last 6 lines, %d idle\n",
         frames_counted(all), fps_sum / 6, idle);
  CHECK_MSG(idle == 0 && fps_sum / 6 > 10, "%d of the last 6 lines idle, %.1f fps", idle,
            fps_sum / 6);
  cJSON_Delete(all);
}

void test_gtk4_demo_frames_x11(void) {
  skip_without(LAGSCOPE_GTK4_DEMO_PATH);
  make_folder();
  with_screen();
  gtk4_demo_case();
  xvfb_stop(&xvfb);
  remove_folder();
}

void test_gtk4_demo_frames_wayland(void) {
  skip_without(LAGSCOPE_GTK4_DEMO_PATH);
  skip_without(LAGSCOPE_WESTON_PATH);
  make_folder();
  with_weston();
  setenv("GDK_BACKEND", "wayland", 1);
  gtk4_demo_case();
  weston_stop();
  remove_folder();
}

static void qt6_case(void) {
  char *program[] = {LAGSCOPE_QT6_STALL_PATH, "2500", "800", "6000", NULL};
  double frames, fps;
  char err[16384];
  CHECK_EQ_INT(run_own(program, "qt_stall: ", &frames, &fps, err, sizeof err), 0);
  cJSON *all = read_events();
  check_animated(all, frames, fps);
  check_stall(all, "attach_qt_stall");
  cJSON_Delete(all);
}

void test_qt6_frames_x11(void) {
  skip_without(LAGSCOPE_QT6_STALL_PATH);
  make_folder();
  with_screen();
  setenv("QT_QPA_PLATFORM", "xcb", 1);
  qt6_case();
  xvfb_stop(&xvfb);
  remove_folder();
}

void test_qt6_frames_wayland(void) {
  skip_without(LAGSCOPE_QT6_STALL_PATH);
  skip_without(LAGSCOPE_WESTON_PATH);
  if (access(LAGSCOPE_QT6_WAYLAND_PATH, R_OK) != 0) {
    printf("SKIP: Qt 6's Wayland plugin (qt6-wayland) is not installed\n");
    exit(SKIP);
  }
  make_folder();
  with_weston();
  setenv("QT_QPA_PLATFORM", "wayland", 1);
  qt6_case();
  weston_stop();
  remove_folder();
}

/* Qt 6 on X11 gets the HUD as Qt 5 does: lagscope's overlay window over its window, whose live
 * badge counts up during a 2.5 s stall (test_attach_overlay.c's Qt 5 case, on qt6_stall). On
 * Wayland it gets lagscope's subsurface in its window (wayland.test.js's Qt 6 case). */
void test_overlay_qt6_live_badge(void) {
  skip_without(LAGSCOPE_QT6_STALL_PATH);
  make_folder();
  with_screen();
  setenv("QT_QPA_PLATFORM", "xcb", 1);
  qt_stall_live_badge(LAGSCOPE_QT6_STALL_PATH, "qt6");
  xvfb_stop(&xvfb);
  remove_folder();
}
