/* lagscope-run on OpenGL programs (test_attach.c lists the cases): Debian's glxgears (glX:
 * frames counted, the HUD drawn into its frame and compared with a reference, none with
 * --no-hud) and es2gears_x11 (the same over EGL and OpenGL ES 2). SDL2's GL windows:
 * test_attach_sdl.c. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

void test_glxgears_frames_and_hud(void) {
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
void test_es2gears_egl_hud(void) {
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

/* A program presenting with eglSwapBuffersWithDamageKHR, which it got from eglGetProcAddress
 * (egl_damage, on a stand-in EGL: Mesa's software one has no such swap): every swap is a frame
 * lagscope counts, the GL loop is seen (the program is watched), and its 800 ms stall is one
 * hang naming attach_egl_stall. */
void test_egl_swap_with_damage(void) {
  make_folder();
  char *program[] = {LAGSCOPE_EGL_DAMAGE_PATH, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(NULL, program), SPAWN_CAPTURE_STDERR) == 0);
  char line[256];
  unsigned swaps = 0;
  while (spawn_read_line(&p, line, sizeof line, WAIT_MS) == SPAWN_LINE)
    if (sscanf(line, "egl_damage: %u swaps with damage", &swaps) == 1) printf("%s\n", line);
  char err[16384];
  CHECK_EQ_INT(wait_run(&p, err, sizeof err), 0);
  cJSON *all = read_events();
  double counted = frames_counted(all);
  printf("%u swaps with damage, %.0f frames counted\n", swaps, counted);
  CHECK_MSG(swaps == 150 && counted == swaps, "%.0f frames counted for %u swaps", counted, swaps);
  CHECK_EQ_INT(count_type(all, "hang_ended"), 1);
  CHECK(stack_has(cJSON_GetObjectItemCaseSensitive(last_of_type(all, "hang_ended"), "heaviest_stack"),
                  "attach_egl_stall"));
  cJSON_Delete(all);
  remove_folder();
}
