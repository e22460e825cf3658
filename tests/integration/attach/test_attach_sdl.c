/* lagscope-run on SDL2 programs (test_attach.c lists the cases): SDL2's testgl2 (the HUD in
 * its GL frame), testsprite2 (frames counted; the HUD drawn through its SDL_Renderer, every
 * other pixel of its frame as it draws alone), testvulkan (the HUD blended over its Vulkan frame by the preload's layer), the
 * tests' own sdl_state (renderer state it set once, kept) and sdl_wait (idle in SDL_WaitEvent
 * around a 600 ms stall: that one hang only), and a program that exits on its last frame. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

/* SDL2's GL windows: SDL swaps through its own pointer, so the HUD is drawn in the
 * SDL_GL_SwapWindow hook (SDL's GetProcAddress, its drawable size); testgl2's cube stays
 * away from the top-left corner. */
void test_sdl_testgl2_hud(void) {
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

void test_sdl_testsprite_frames(void) {
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
void test_sdl_frames_then_exit(void) {
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
void test_sdl_renderer_hud(void) {
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
void test_sdl_renderer_state_kept(void) {
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

/* SDL2's testvulkan draws with Vulkan (Mesa's software lavapipe here): the preload's Vulkan
 * layer blends the HUD over its swapchain image (attach/vk_hud.c). It clears its window to one
 * colour that changes every frame, which shows through the HUD's translucent parts. With
 * --no-hud the corner is the program's own. */
static void testvulkan_run(const char *err) {
  (void)err;
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 2, "%.0f frames counted", frames_counted(all));
  cJSON_Delete(all);
}

void test_sdl_vulkan_hud(void) {
  skip_without(LAGSCOPE_TESTVULKAN_PATH);
  make_folder();
  with_screen();
  char *program[] = {LAGSCOPE_TESTVULKAN_PATH, NULL};
  shot_title = LAGSCOPE_TESTVULKAN_PATH;
  shot_area = (box){0, 0, 180, 80};
  check_hud_and_none_without(&(hud_case){program, 1, take_drawn_shot, "testvulkan",
                                         check_hud_blended, testvulkan_run});
  xvfb_stop(&xvfb);
  remove_folder();
}

/* SDL2: a main thread blocked in SDL_WaitEvent for 2 s, twice, is idle; the 600 ms stall
 * between is the one hang. */
void test_sdl_wait_idle_then_stall(void) {
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
