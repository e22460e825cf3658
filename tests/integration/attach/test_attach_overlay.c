/* lagscope-run's overlay (test_attach.c lists the cases): the HUD in a window of lagscope's
 * over the program's, live during a hang, on GTK 3, Qt 5, SDL2 and glxgears; none with
 * --no-hud; said once under Wayland without X; stacked just above its program's window. The
 * overlay over l3afpad's dialog: test_attach_editors.c. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

/* gtk_stall, which never heard of lagscope, stalls 2.5 s: the overlay shows the HUD over its
 * window while the main thread is stuck, its red badge counting (two shots, two counts); after
 * it, no badge and the last-hang line. A click on the button under the HUD reaches the program;
 * the overlay follows the window when it moves and goes when it is unmapped. */
void test_overlay_gtk_live_badge(void) {
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
void test_overlay_qt_live_badge(void) {
  skip_without(LAGSCOPE_QT_STALL_PATH);
  make_folder();
  with_screen();
  qt_stall_live_badge(LAGSCOPE_QT_STALL_PATH, "qt");
  remove_folder();
}

/* --hud-mode overlay on an SDL2 program, which opens its display through dlsym (no XOpenDisplay
 * hook sees it): its window on SDL's x11 driver starts the overlay, and during a 2.5 s stall
 * the badge counts up over it (two shots, two counts). */
void test_overlay_sdl_mode(void) {
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
void test_overlay_none_without_hud(void) {
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
void test_overlay_glxgears_mode(void) {
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

/* Wayland without X: nothing said at the start any more (the HUD is a subsurface of the
 * program's window once it connects: attach_wayland shows it), with or without --no-hud. */
void test_overlay_wayland_said(void) {
  make_folder();
  unsetenv("DISPLAY");
  setenv("WAYLAND_DISPLAY", "wayland-lagscope-test", 1);
  char *program[] = {"/bin/true", NULL};
  char err[16384];
  char *allowed[] = {"--allow-unwatched", NULL}; /* true has no loop: expected here */
  CHECK_EQ_INT(run_to_end(allowed, program, err, sizeof err), 0);
  CHECK_MSG(strstr(err, "Wayland without X") == NULL, "the old sentence said: %s", err);
  char *no_hud[] = {"--no-hud", "--allow-unwatched", NULL};
  CHECK_EQ_INT(run_to_end(no_hud, program, err, sizeof err), 0);
  CHECK(strstr(err, "Wayland without X") == NULL);
  unsetenv("WAYLAND_DISPLAY");
  remove_folder();
}

/* The overlay is stacked just above its program's window, never above another program's: a
 * second program's window mapped over the corner hides the HUD (for more than four of the
 * overlay's periods), and raising the first window brings it back. */
void test_overlay_stacked_with_its_window(void) {
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
