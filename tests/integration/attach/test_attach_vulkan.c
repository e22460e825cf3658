/* lagscope-run on Vulkan programs (test_attach.c lists the cases), through the preload's
 * Vulkan layer (attach/vk_layer.c): Debian's vkcube on Mesa's software Vulkan (lavapipe),
 * which has no loop lagscope hooked before the layer: its presents are frames, the run is
 * watched, and the HUD is blended over its swapchain image (none with --no-hud); vkcube
 * stalled on cue (vk_stall.c, preloaded into it), the hang found whole with its stack; and the
 * tests' vk_thread (vk_thread.c), which presents from a render thread: that thread watched,
 * its hang found, the HUD blended over its frames. */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

/* lavapipe, the one driver that draws under Xvfb: the loader told so (its other drivers
 * fail there, or draw nowhere). */
static void with_lavapipe(void) {
  CHECK(setenv("VK_ICD_FILENAMES", LAGSCOPE_LAVAPIPE_ICD, 1) == 0);
}

/* vkcube's window has no title, and centres itself: it is found on the screen as the bounds
 * of its lit clear colour (the screen around it is black), once a metrics line says the
 * program draws; shot_area of it, into area_shot. */
static void take_corner_shot(void) {
  await_drawn_and_answering();
  await_metrics(metrics_count() + 1);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  shot screen;
  CHECK(screen_shot(d, DefaultRootWindow(d), &screen) == 0);
  XCloseDisplay(d);
  box window = shot_bounds(&screen, (box){0, 0, screen.width, screen.height}, is_lit);
  CHECK_MSG(window.x1 - window.x0 >= shot_area.x1 && window.y1 - window.y0 >= shot_area.y1,
            "vkcube's window not found on the screen (lit bounds %d,%d-%d,%d)", window.x0,
            window.y0, window.x1, window.y1);
  int w = shot_area.x1 - shot_area.x0, h = shot_area.y1 - shot_area.y0;
  area_shot = (shot){.width = w, .height = h, .pixels = calloc((size_t)w * h, 4)};
  CHECK(area_shot.pixels != NULL);
  for (int y = 0; y < h; y++)
    memcpy(area_shot.pixels + y * w,
           screen.pixels + (window.y0 + shot_area.y0 + y) * screen.width + window.x0 + shot_area.x0,
           (size_t)w * 4);
  shot_free(&screen);
}

/* vkcube's first run: watched, its frames counted, where their times come from said. */
static void vkcube_run(const char *err) {
  CHECK_MSG(strstr(err, "not watched") == NULL, "vkcube's run was not watched");
  /* lavapipe (Mesa 22.3) offers neither extension that tells when a frame was shown. */
  CHECK_MSG(strstr(err, "Vulkan frames are timed at each vkQueuePresentKHR call, not when shown "
                        "(the driver has neither VK_KHR_present_wait nor "
                        "VK_GOOGLE_display_timing)") != NULL,
            "lagscope did not say where vkcube's frame times come from");
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 20, "%.0f vkQueuePresentKHR frames counted", frames_counted(all));
  cJSON_Delete(all);
}

void test_vulkan_vkcube_frames_and_hud(void) {
  skip_without(LAGSCOPE_VKCUBE_PATH);
  if (access(LAGSCOPE_LAVAPIPE_ICD, R_OK) != 0) skip_without(LAGSCOPE_LAVAPIPE_ICD);
  make_folder();
  with_screen();
  with_lavapipe();
  /* vkcube's cube stays in the middle of its 500 x 500 window: the HUD's corner is its dark
   * grey clear colour, close enough to the reference's black under the HUD's blend. */
  char *program[] = {LAGSCOPE_VKCUBE_PATH, NULL};
  shot_area = (box){0, 0, 180, 80};
  check_hud_and_none_without(
      &(hud_case){program, 2, take_corner_shot, "vkcube", check_hud_shown, vkcube_run});
  xvfb_stop(&xvfb);
  remove_folder();
}

/* vkcube's main thread spins 1.2 s in attach_vk_stall (vk_stall.c) at its 60th vkQueueSubmit:
 * with its presents the only loop lagscope sees, that is a hang, begun and ended, its cause
 * the CPU and its stack through attach_vk_stall; lagscope-run's summary says it. */
void test_vulkan_vkcube_stall(void) {
  skip_without(LAGSCOPE_VKCUBE_PATH);
  if (access(LAGSCOPE_LAVAPIPE_ICD, R_OK) != 0) skip_without(LAGSCOPE_LAVAPIPE_ICD);
  make_folder();
  with_screen();
  with_lavapipe();
  CHECK(setenv("LD_PRELOAD", LAGSCOPE_VK_STALL_PATH, 1) == 0);
  char *program[] = {LAGSCOPE_VKCUBE_PATH, "--c", "150", NULL};
  char *extra[] = {"--threshold-ms", "400", NULL};
  char err[16384];
  int code = run_to_end(extra, program, err, sizeof err);
  unsetenv("LD_PRELOAD");
  printf("lagscope-run said:\n%s\n", err);
  CHECK_EQ_INT(code, 0);
  cJSON *all = read_events();
  const cJSON *ended = NULL, *e;
  cJSON_ArrayForEach(e, all) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "hang_ended") == 0 &&
        stack_has(cJSON_GetObjectItemCaseSensitive(e, "heaviest_stack"), "attach_vk_stall"))
      ended = e;
  }
  CHECK_MSG(ended != NULL, "no hang through attach_vk_stall in vkcube");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  printf("the stall's hang: %.1f ms\n", ms);
  CHECK_MSG(ms >= 1000 && ms <= 3000, "hang of %.1f ms for a 1200 ms stall", ms);
  CHECK_MSG(strstr(err, "cpu: On the CPU for") != NULL, "lagscope-run's summary says no CPU hang");
  CHECK_MSG(strstr(err, "attach_vk_stall") != NULL, "the summary's stack misses attach_vk_stall");
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* vk_thread (vk_thread.c): its main thread only waits for its render thread, which presents.
 * No other loop is seen, so the presenting thread is the watched one: its 1.2 s spin in
 * vk_thread_stall at its 90th frame is a hang, begun and ended, its cause the CPU and its
 * stack through vk_thread_stall, and the summary says so. */
void test_vulkan_present_thread_stall(void) {
  skip_without(LAGSCOPE_VK_THREAD_PATH);
  if (access(LAGSCOPE_LAVAPIPE_ICD, R_OK) != 0) skip_without(LAGSCOPE_LAVAPIPE_ICD);
  make_folder();
  with_screen();
  with_lavapipe();
  char *program[] = {LAGSCOPE_VK_THREAD_PATH, NULL};
  char *extra[] = {"--threshold-ms", "400", NULL};
  char err[16384];
  int code = run_to_end(extra, program, err, sizeof err);
  printf("lagscope-run said:\n%s\n", err);
  CHECK_MSG(strstr(err, "not watched") == NULL, "vk_thread's run was not watched");
  CHECK_EQ_INT(code, 0);
  cJSON *all = read_events();
  CHECK_MSG(frames_counted(all) >= 100, "%.0f frames counted of vk_thread's 300",
            frames_counted(all));
  /* Under load lavapipe's own waits may be hangs too: the stall's is the one through it. */
  const cJSON *ended = NULL, *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") == 0 &&
        stack_has(cJSON_GetObjectItemCaseSensitive(e, "heaviest_stack"), "vk_thread_stall"))
      ended = e;
  }
  CHECK_MSG(ended != NULL, "no hang through vk_thread_stall in vk_thread's render thread");
  double ms = spawn_json_number(ended, "duration_ms", -1);
  printf("the stall's hang: %.1f ms\n", ms);
  CHECK_MSG(ms >= 1000 && ms <= 3000, "hang of %.1f ms for a 1200 ms stall", ms);
  CHECK_MSG(strstr(err, "cpu: On the CPU for") != NULL, "lagscope-run's summary says no CPU hang");
  CHECK_MSG(strstr(err, "vk_thread_stall") != NULL, "the summary's stack misses vk_thread_stall");
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}

/* vk_thread's first run: watched, its frames counted. */
static void vk_thread_run(const char *err) {
  CHECK_MSG(strstr(err, "not watched") == NULL, "vk_thread's run was not watched");
  cJSON *all = read_events();
  check_no_hang(all);
  CHECK_MSG(frames_counted(all) >= 20, "%.0f frames counted", frames_counted(all));
  cJSON_Delete(all);
}

/* vk_thread's HUD: drawn into the frames its render thread presents on the queue it got from
 * vkGetDeviceQueue2, blended over its light blue (which shows through the HUD's translucent
 * panel and around its rounded corners); none with --no-hud. */
void test_vulkan_present_thread_hud(void) {
  skip_without(LAGSCOPE_VK_THREAD_PATH);
  if (access(LAGSCOPE_LAVAPIPE_ICD, R_OK) != 0) skip_without(LAGSCOPE_LAVAPIPE_ICD);
  make_folder();
  with_screen();
  with_lavapipe();
  CHECK(setenv("VK_THREAD_STALL_AT", "0", 1) == 0);
  CHECK(setenv("VK_THREAD_FRAMES", "100000", 1) == 0);
  char *program[] = {LAGSCOPE_VK_THREAD_PATH, NULL};
  shot_title = "vk_thread";
  shot_area = (box){0, 0, 180, 80};
  check_hud_and_none_without(&(hud_case){program, 1, take_drawn_shot, "vk_thread",
                                         check_hud_blended, vk_thread_run});
  unsetenv("VK_THREAD_STALL_AT");
  unsetenv("VK_THREAD_FRAMES");
  xvfb_stop(&xvfb);
  remove_folder();
}
