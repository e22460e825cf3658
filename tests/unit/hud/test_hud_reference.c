/*
 * The HUD as pixels: fixed states rendered with the cairo canvas and compared with the
 * reference PNGs in tests/unit/hud/reference/. A pixel differs when one of its channels is more
 * than MAX_CHANNEL_DIFF apart; a render fails when more than MAX_DIFFERENT_SHARE of its pixels
 * differ (antialiasing and rounding move a few pixels; a real layout change moves many).
 *
 * Usage: test_hud_reference --reference DIR [--out DIR]   compare, and write each render to out
 *        test_hud_reference --update DIR                  write the references (look at them!)
 */
#include "check.h"
#include "hud_states.h"

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_CHANNEL_DIFF 48
#define MAX_DIFFERENT_SHARE 0.005

typedef struct reference_case {
  const char *name;
  lagscope__hud_state (*state)(void);
  int expanded;
  float scale;
} reference_case;

static lagscope__hud_state state_no_url(void) {
  lagscope__hud_state s = hud_test_idle();
  s.viewer_url[0] = '\0';
  s.refresh_hz = 0.0; /* unknown rate: no budget line, FPS judged against 60 */
  return s;
}

static lagscope__hud_state hud_test_fps_58(void) {
  lagscope__hud_state s = hud_test_idle();
  s.fps = 58.0; /* still green: only the digits change */
  return s;
}

static const reference_case cases[] = {
  {"idle_compact", hud_test_idle, 0, 2.0f},
  {"idle_expanded", hud_test_idle, 1, 2.0f},
  {"hz120_expanded", hud_test_120hz, 1, 2.0f},
  {"frames_idle_compact", hud_test_frames_idle, 0, 2.0f},
  {"low_fps_compact", hud_test_low_fps, 0, 2.0f},
  {"low_fps_expanded", hud_test_low_fps, 1, 2.0f},
  {"hang_compact", hud_test_hang, 0, 2.0f},
  {"hang_expanded", hud_test_hang, 1, 2.0f},
  {"three_hangs_compact", hud_test_three_hangs, 0, 2.0f},
  {"three_hangs_expanded", hud_test_three_hangs, 1, 2.0f},
  {"no_url_expanded", state_no_url, 1, 2.0f},
  {"scale1_expanded", hud_test_three_hangs, 1, 1.0f},
  {"scale3_expanded", hud_test_three_hangs, 1, 3.0f},
};
#define CASES (sizeof cases / sizeof cases[0])

static lagscope__hud_canvas *render(const reference_case *rc) {
  lagscope__hud_state state = rc->state();
  state.expanded = rc->expanded;
  lagscope__hud_rect bounds = lagscope__hud_bounds(&state);
  lagscope__hud_canvas *canvas = lagscope__hud_canvas_new(bounds.width, bounds.height, rc->scale);
  CHECK(canvas != NULL);
  lagscope__hud_draw(canvas, &state);
  return canvas;
}

static void png_path(char *out, size_t size, const char *dir, const char *name) {
  int n = snprintf(out, size, "%s/%s.png", dir, name);
  CHECK(n > 0 && (size_t)n < size);
}

static uint32_t pixel_at(const unsigned char *data, int stride, int x, int y) {
  return *(const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride + (size_t)x * 4u);
}

static int pixels_differ(uint32_t a, uint32_t b) {
  for (int shift = 0; shift < 32; shift += 8) {
    int ca = (int)((a >> shift) & 0xffu), cb = (int)((b >> shift) & 0xffu);
    if (ca - cb > MAX_CHANNEL_DIFF || cb - ca > MAX_CHANNEL_DIFF) return 1;
  }
  return 0;
}

/* Compares the render with its reference; prints the counts; 0 when within tolerance. */
static int compare(lagscope__hud_canvas *canvas, const char *reference_path, const char *name) {
  cairo_surface_t *ref = cairo_image_surface_create_from_png(reference_path);
  if (cairo_surface_status(ref) != CAIRO_STATUS_SUCCESS) {
    printf("%-24s FAIL: cannot read %s (make it with --update)\n", name, reference_path);
    cairo_surface_destroy(ref);
    return -1;
  }
  int w, h, stride;
  const uint32_t *pixels = lagscope__hud_canvas_pixels(canvas, &w, &h, &stride);
  int rw = cairo_image_surface_get_width(ref), rh = cairo_image_surface_get_height(ref);
  int rc = 0;
  if (rw != w || rh != h) {
    printf("%-24s FAIL: %dx%d, reference %dx%d\n", name, w, h, rw, rh);
    rc = -1;
  } else {
    cairo_surface_flush(ref);
    const unsigned char *ref_data = cairo_image_surface_get_data(ref);
    int ref_stride = cairo_image_surface_get_stride(ref);
    long differing = 0;
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        differing += pixels_differ(pixel_at((const unsigned char *)pixels, stride, x, y),
                                   pixel_at(ref_data, ref_stride, x, y));
      }
    }
    long limit = (long)((double)w * h * MAX_DIFFERENT_SHARE);
    rc = differing > limit ? -1 : 0;
    printf("%-24s %s: %dx%d, %ld pixels differ (limit %ld)\n", name, rc ? "FAIL" : "ok", w, h,
           differing, limit);
  }
  cairo_surface_destroy(ref);
  return rc;
}

/* The tolerance is not so loose that it passes a real change: a different FPS number, and the
 * hang pill instead of the count, both fail against the idle reference. */
static int check_tolerance_catches_a_change(const char *reference) {
  char path[4096];
  png_path(path, sizeof path, reference, "idle_compact");
  const reference_case changes[] = {{"must differ: fps 58", hud_test_fps_58, 0, 2.0f},
                                    {"must differ: hang", hud_test_hang, 0, 2.0f}};
  int missed = 0;
  for (size_t i = 0; i < 2; i++) {
    lagscope__hud_canvas *canvas = render(&changes[i]);
    int rc = compare(canvas, path, changes[i].name);
    lagscope__hud_canvas_free(canvas);
    if (rc == 0) {
      printf("%s: the comparison did not notice the change\n", changes[i].name);
      missed++;
    }
  }
  return missed;
}

static const char *arg_value(int argc, char **argv, const char *name) {
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *update = arg_value(argc, argv, "--update");
  const char *reference = arg_value(argc, argv, "--reference");
  const char *out = arg_value(argc, argv, "--out");
  if (update == NULL && reference == NULL) {
    fprintf(stderr, "usage: %s --reference DIR [--out DIR] | --update DIR\n", argv[0]);
    return 2;
  }
  if (out != NULL) mkdir(out, 0777);
  if (update != NULL) mkdir(update, 0777);
  int failures = 0;
  char path[4096];
  for (size_t i = 0; i < CASES; i++) {
    lagscope__hud_canvas *canvas = render(&cases[i]);
    if (out != NULL) {
      png_path(path, sizeof path, out, cases[i].name);
      CHECK(lagscope__hud_canvas_write_png(canvas, path) == 0);
    }
    if (update != NULL) {
      png_path(path, sizeof path, update, cases[i].name);
      CHECK(lagscope__hud_canvas_write_png(canvas, path) == 0);
      printf("wrote %s\n", path);
    } else {
      png_path(path, sizeof path, reference, cases[i].name);
      failures += compare(canvas, path, cases[i].name) != 0;
    }
    lagscope__hud_canvas_free(canvas);
  }
  if (update == NULL) failures += check_tolerance_catches_a_change(reference);
  /* cairo and fontconfig keep caches for the process' life; drop them so LSan sees only ours. */
  cairo_debug_reset_static_data();
  FcFini();
  CHECK_MSG(failures == 0, "%d of %zu renders differ from their reference", failures, CASES);
  return 0;
}
