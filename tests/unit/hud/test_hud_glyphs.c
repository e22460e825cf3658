/*
 * The cairo canvas's text (hud/cairo_glyphs.c), what it costs:
 *   - no pixman glyph cache: cairo_show_text on an image makes one, 256 KiB kept for the life
 *     of the process (counted here by a pixman_glyph_cache_create of the test's own, which
 *     cairo's call reaches before pixman's);
 *   - a redraw fills no outline: each glyph's outline is filled once into its image, so
 *     drawing the same texts again costs no path filling (cairo_glyph_path counted the same
 *     way, the canvas's calls bound to the test's at link time).
 * Both forward to the real function (dlsym RTLD_NEXT). And the table of glyph images, when
 * more glyphs come than it holds, starts again empty and still draws. And the canvas's pixels
 * are lagscope's heap's (counted, given back when the canvas goes), not malloc's.
 */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "hud_states.h"
#include "internal.h"

#include <cairo.h>
#include <dlfcn.h>
#include <fontconfig/fontconfig.h>

static unsigned long glyph_caches_made, outlines_filled;

void *pixman_glyph_cache_create(void); /* pixman.h's, not included: no pixman flags needed */
void *pixman_glyph_cache_create(void) {
  void *(*real)(void) = (void *(*)(void))dlsym(RTLD_NEXT, "pixman_glyph_cache_create");
  glyph_caches_made++;
  return real != NULL ? real() : NULL;
}

void cairo_glyph_path(cairo_t *cr, const cairo_glyph_t *glyphs, int num_glyphs) {
  void (*real)(cairo_t *, const cairo_glyph_t *, int) =
      (void (*)(cairo_t *, const cairo_glyph_t *, int))dlsym(RTLD_NEXT, "cairo_glyph_path");
  outlines_filled += (unsigned long)num_glyphs;
  if (real != NULL) real(cr, glyphs, num_glyphs);
}

static lagscope__hud_canvas *canvas_for(const lagscope__hud_state *s, float scale) {
  lagscope__hud_rect bounds = lagscope__hud_bounds(s);
  lagscope__hud_canvas *canvas = lagscope__hud_canvas_new(bounds.width, bounds.height, scale);
  CHECK(canvas != NULL);
  return canvas;
}

static void draw(lagscope__hud_canvas *canvas, const lagscope__hud_state *s) {
  lagscope__hud_canvas_clear(canvas);
  lagscope__hud_draw(canvas, s);
  lagscope__hud_canvas_pixels(canvas, NULL, NULL, NULL);
}

/* An expanded HUD at scale 2 (its largest buffer): its pixels counted by lagscope's heap while the
 * canvas lives, and given back with it. */
static void test_canvas_pixels_in_lagscope_heap(void) {
  lagscope__hud_state s = hud_test_idle();
  s.expanded = 1;
  uint64_t before = lagscope__memory_asked();
  lagscope__hud_canvas *canvas = canvas_for(&s, 2.0f);
  int width = 0, height = 0, stride = 0;
  CHECK(lagscope__hud_canvas_pixels(canvas, &width, &height, &stride) != NULL);
  uint64_t pixels = (uint64_t)stride * (uint64_t)height;
  CHECK(width > 0 && height > 0 && stride >= width * 4);
  uint64_t held = lagscope__memory_asked() - before;
  CHECK_MSG(held >= pixels, "the canvas holds %llu bytes of lagscope's heap, its pixels are %llu",
            (unsigned long long)held, (unsigned long long)pixels);
  draw(canvas, &s);
  lagscope__hud_canvas_free(canvas);
  CHECK(lagscope__memory_asked() == before);
}

static void test_no_pixman_glyph_cache(void) {
  lagscope__hud_state (*states[])(void) = {hud_test_idle, hud_test_hang, hud_test_three_hangs,
                                           hud_test_low_fps, hud_test_frames_idle};
  for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
    for (int expanded = 0; expanded < 2; expanded++) {
      lagscope__hud_state s = states[i]();
      s.expanded = expanded;
      lagscope__hud_canvas *canvas = canvas_for(&s, 2.0f);
      draw(canvas, &s);
      lagscope__hud_canvas_free(canvas);
    }
  }
  CHECK_MSG(glyph_caches_made == 0, "the HUD's text made pixman's glyph cache (256 KiB for good)");
}

static void test_redraw_fills_no_outline(void) {
  lagscope__hud_state s = hud_test_three_hangs();
  s.expanded = 1;
  lagscope__hud_canvas *canvas = canvas_for(&s, 1.0f);
  draw(canvas, &s);
  unsigned long first = outlines_filled;
  CHECK_MSG(first > 0, "the first draw filled no glyph outline: its text was not drawn");
  draw(canvas, &s);
  fprintf(stderr, "outlines filled: %lu at the first draw, %lu at the second\n", first,
          outlines_filled - first);
  CHECK_MSG(outlines_filled == first, "a redraw of the same texts filled glyph outlines again");
  lagscope__hud_canvas_free(canvas);
}

/* More glyphs than the table holds (1024): it starts again empty, and text is still drawn. */
static void test_full_table_starts_again(void) {
  lagscope__hud_canvas *canvas = lagscope__hud_canvas_new(40.0f, 20.0f, 1.0f);
  CHECK(canvas != NULL);
  lagscope__hud_color white = {1.0f, 1.0f, 1.0f, 1.0f};
  for (int i = 0; i < 1500; i++) { /* each size its own glyphs: 3000 images */
    lagscope__hud_canvas_clear(canvas);
    canvas->ops->text(canvas, 2.0f, 15.0f, "ab", 10.0f + (float)i * 0.001f,
                      LAGSCOPE__HUD_FONT_REGULAR, white);
  }
  int width, height, stride;
  const uint32_t *pixels = lagscope__hud_canvas_pixels(canvas, &width, &height, &stride);
  int inked = 0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (pixels[(size_t)y * (size_t)stride / 4 + (size_t)x] >> 24 != 0) inked++;
  fprintf(stderr, "pixels inked by the last \"ab\": %d\n", inked);
  CHECK_MSG(inked > 20, "after the table started again, the text was not drawn");
  lagscope__hud_canvas_free(canvas);
}

static const test_case cases[] = {
    TEST_CASE(canvas_pixels_in_lagscope_heap),
    TEST_CASE(no_pixman_glyph_cache),
    TEST_CASE(redraw_fills_no_outline),
    TEST_CASE(full_table_starts_again),
};

int main(int argc, char **argv) {
  int rc = run_test_case(argc, argv, cases, CASE_COUNT(cases));
  cairo_debug_reset_static_data();
  FcFini();
  return rc;
}
