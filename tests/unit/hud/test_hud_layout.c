/*
 * The HUD's geometry and contents, without reference images:
 *   - lagscope__hud_fps_color's bands (≥ 90 % of the display rate green, ≥ 60 % amber, red);
 *   - lagscope__hud_bounds: compact and expanded sizes;
 *   - nothing drawn outside the bounds: every state drawn through a canvas that shifts it
 *     into the middle of a larger cairo canvas, whose margin must stay fully transparent;
 *   - what is written: through a recording canvas, the texts (the short viewer URL, the hang
 *     pill, the counts) and that every clip is reset.
 */
#include "cases.h"
#include "check.h"
#include "hud_states.h"
#include "internal.h"

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdlib.h>
#include <string.h>

static int same_color(lagscope__hud_color a, lagscope__hud_color b) {
  return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}

/* ---- fps colour bands ------------------------------------------------------------------- */
static void test_fps_color(void) {
  lagscope__hud_color green = lagscope__hud_fps_color(60.0, 60.0);
  lagscope__hud_color amber = lagscope__hud_fps_color(40.0, 60.0);
  lagscope__hud_color red = lagscope__hud_fps_color(20.0, 60.0);
  CHECK(green.g > 0.7f && green.r < 0.5f);
  CHECK(amber.r > 0.9f && amber.g > 0.6f && amber.b < 0.4f);
  CHECK(red.r > 0.9f && red.g < 0.4f);
  CHECK(!same_color(green, amber) && !same_color(amber, red));
  CHECK(same_color(lagscope__hud_fps_color(54.0, 60.0), green));   /* exactly 90 % */
  CHECK(same_color(lagscope__hud_fps_color(53.9, 60.0), amber));
  CHECK(same_color(lagscope__hud_fps_color(36.0, 60.0), amber));   /* exactly 60 % */
  CHECK(same_color(lagscope__hud_fps_color(35.9, 60.0), red));
  CHECK(same_color(lagscope__hud_fps_color(119.0, 120.0), green));
  CHECK(same_color(lagscope__hud_fps_color(100.0, 120.0), amber)); /* fine at 60 Hz, not at 120 */
  CHECK(same_color(lagscope__hud_fps_color(60.0, 120.0), red));
  CHECK(same_color(lagscope__hud_fps_color(0.0, 60.0), red));
  CHECK(same_color(lagscope__hud_fps_color(0.0, 120.0), red));
  CHECK(same_color(lagscope__hud_fps_color(130.0, 120.0), green)); /* above the rate */
  CHECK(same_color(lagscope__hud_fps_color(60.0, 0.0), green));    /* unknown rate: 60 */
}

/* ---- bounds ----------------------------------------------------------------------------- */
static void test_bounds(void) {
  lagscope__hud_state s = hud_test_idle();
  lagscope__hud_rect compact = lagscope__hud_bounds(&s);
  CHECK(compact.x == 0.0f && compact.y == 0.0f);
  CHECK_NEAR(compact.width, 150.0, 10.0);
  CHECK_NEAR(compact.height, 56.0, 6.0);
  s.expanded = 1;
  lagscope__hud_rect expanded = lagscope__hud_bounds(&s);
  CHECK(expanded.x == 0.0f && expanded.y == 0.0f);
  CHECK_NEAR(expanded.width, 260.0, 20.0);
  CHECK_NEAR(expanded.height, 204.0, 20.0);
  s.hang_in_progress = 1; /* the state's contents do not change the size */
  lagscope__hud_rect hung = lagscope__hud_bounds(&s);
  CHECK(hung.width == expanded.width && hung.height == expanded.height);
}

/* ---- a canvas that shifts everything by (dx, dy) onto another canvas ----------------------- */
typedef struct shifted {
  lagscope__hud_canvas canvas;
  lagscope__hud_canvas *inner;
  float dx, dy;
} shifted;

static shifted *shift_of(lagscope__hud_canvas *c) { return c->backend; }
static lagscope__hud_rect move(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  r.x += shift_of(c)->dx;
  r.y += shift_of(c)->dy;
  return r;
}
static void sh_fill_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color k) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->fill_rect(in, move(c, r), k);
}
static void sh_stroke_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float w,
                           lagscope__hud_color k) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->stroke_rect(in, move(c, r), w, k);
}
static void sh_fill_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad,
                               lagscope__hud_color k) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->fill_round_rect(in, move(c, r), rad, k);
}
static void sh_stroke_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad, float w,
                                 lagscope__hud_color k) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->stroke_round_rect(in, move(c, r), rad, w, k);
}
static void sh_polyline(lagscope__hud_canvas *c, const lagscope__hud_point *p, size_t n, float w,
                        lagscope__hud_color k) {
  lagscope__hud_point *moved = malloc((n ? n : 1) * sizeof *moved);
  CHECK(moved != NULL);
  for (size_t i = 0; i < n; i++) {
    moved[i] = (lagscope__hud_point){p[i].x + shift_of(c)->dx, p[i].y + shift_of(c)->dy};
  }
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->polyline(in, moved, n, w, k);
  free(moved);
}
static void sh_text(lagscope__hud_canvas *c, float x, float y, const char *s, float size,
                    lagscope__hud_font_weight w, lagscope__hud_color k) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->text(in, x + shift_of(c)->dx, y + shift_of(c)->dy, s, size, w, k);
}
static float sh_measure(lagscope__hud_canvas *c, const char *s, float size,
                        lagscope__hud_font_weight w) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  return in->ops->measure_text(in, s, size, w);
}
static void sh_clip(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->clip(in, move(c, r));
}
static void sh_reset_clip(lagscope__hud_canvas *c) {
  lagscope__hud_canvas *in = shift_of(c)->inner;
  in->ops->reset_clip(in);
}
static const lagscope__hud_canvas_ops shifted_ops = {
  sh_fill_rect, sh_stroke_rect, sh_fill_round_rect, sh_stroke_round_rect, sh_polyline,
  sh_text, sh_measure, sh_clip, sh_reset_clip,
};

#define MARGIN 16.0f

/* Draws the state shifted by MARGIN into a canvas MARGIN larger on every side, then checks
 * that every pixel outside the bounds is fully transparent and that some inside are not. */
static void check_inside_bounds(lagscope__hud_state state, float scale, const char *what) {
  lagscope__hud_rect b = lagscope__hud_bounds(&state);
  lagscope__hud_canvas *big = lagscope__hud_canvas_new(b.width + 2 * MARGIN, b.height + 2 * MARGIN,
                                                   scale);
  CHECK(big != NULL);
  shifted sh = {{&shifted_ops, NULL}, big, MARGIN, MARGIN};
  sh.canvas.backend = &sh;
  lagscope__hud_draw(&sh.canvas, &state);
  int w, h, stride;
  const uint32_t *px = lagscope__hud_canvas_pixels(big, &w, &h, &stride);
  int x0 = (int)(MARGIN * scale), y0 = (int)(MARGIN * scale);
  int x1 = (int)((MARGIN + b.width) * scale + 0.999f), y1 = (int)((MARGIN + b.height) * scale + 0.999f);
  long outside = 0, inside = 0;
  for (int y = 0; y < h; y++) {
    const uint32_t *row = (const uint32_t *)(const void *)((const char *)px + (size_t)y * (size_t)stride);
    for (int x = 0; x < w; x++) {
      int in = x >= x0 && x < x1 && y >= y0 && y < y1;
      if (!in && (row[x] >> 24) != 0) outside++;
      if (in && (row[x] >> 24) != 0) inside++;
    }
  }
  CHECK_MSG(outside == 0, "%s at scale %g: %ld pixels drawn outside the bounds", what,
            (double)scale, outside);
  CHECK_MSG(inside > (long)((x1 - x0) * (y1 - y0)) / 2, "%s: the panel is missing", what);
  lagscope__hud_canvas_free(big);
}

static void test_nothing_outside(void) {
  lagscope__hud_state (*states[])(void) = {hud_test_idle, hud_test_120hz, hud_test_low_fps,
                                           hud_test_hang, hud_test_three_hangs};
  const float scales[] = {1.0f, 1.5f, 2.0f, 3.0f};
  for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
      for (int expanded = 0; expanded <= 1; expanded++) {
        lagscope__hud_state s = states[i]();
        s.expanded = expanded;
        check_inside_bounds(s, scales[k], expanded ? "expanded" : "compact");
      }
    }
  }
  /* Extremes: huge numbers, a long hang, a URL without a token, full of text. */
  lagscope__hud_state s = hud_test_hang();
  s.fps = 999.0;
  s.refresh_hz = 0.0;
  s.hang_elapsed_ms = 987654.0;
  s.hangs = 123456;
  s.cpu_percent = 1234.5;
  s.memory_bytes = 60000ull * HUD_TEST_MIB;
  s.last_hang_ms = 98765.0;
  memset(s.viewer_url, 'w', sizeof s.viewer_url - 1);
  s.viewer_url[sizeof s.viewer_url - 1] = '\0';
  for (int expanded = 0; expanded <= 1; expanded++) {
    s.expanded = expanded;
    check_inside_bounds(s, 2.0f, "extreme");
    s.hang_in_progress = 0;
    check_inside_bounds(s, 2.0f, "extreme, no hang");
    s.hang_in_progress = 1;
  }
}

/* ---- a canvas that records the texts and clips ------------------------------------------- */
#define MAX_TEXTS 64
typedef struct recorder {
  lagscope__hud_canvas canvas;
  char texts[MAX_TEXTS][200];
  int count;
  int clip_depth;
  int clips;
} recorder;

static void rec_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color k) {
  (void)c, (void)r, (void)k;
}
static void rec_stroke_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float w,
                            lagscope__hud_color k) {
  (void)c, (void)r, (void)w, (void)k;
}
static void rec_round(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad,
                      lagscope__hud_color k) {
  (void)c, (void)r, (void)rad, (void)k;
}
static void rec_stroke_round(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad, float w,
                             lagscope__hud_color k) {
  (void)c, (void)r, (void)rad, (void)w, (void)k;
}
static void rec_polyline(lagscope__hud_canvas *c, const lagscope__hud_point *p, size_t n, float w,
                         lagscope__hud_color k) {
  (void)c, (void)p, (void)n, (void)w, (void)k;
}
static void rec_text(lagscope__hud_canvas *c, float x, float y, const char *s, float size,
                     lagscope__hud_font_weight w, lagscope__hud_color k) {
  (void)x, (void)y, (void)size, (void)w, (void)k;
  recorder *r = c->backend;
  CHECK(r->count < MAX_TEXTS);
  snprintf(r->texts[r->count++], sizeof r->texts[0], "%s", s);
}
static float rec_measure(lagscope__hud_canvas *c, const char *s, float size,
                         lagscope__hud_font_weight w) {
  (void)c, (void)w;
  return 0.6f * size * (float)strlen(s);
}
static void rec_clip(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  (void)r;
  recorder *rec = c->backend;
  rec->clip_depth++;
  rec->clips++;
}
static void rec_reset_clip(lagscope__hud_canvas *c) { ((recorder *)c->backend)->clip_depth = 0; }
static const lagscope__hud_canvas_ops recorder_ops = {
  rec_rect, rec_stroke_rect, rec_round, rec_stroke_round, rec_polyline,
  rec_text, rec_measure, rec_clip, rec_reset_clip,
};

static void record(recorder *r, const lagscope__hud_state *s) {
  memset(r, 0, sizeof *r);
  r->canvas.ops = &recorder_ops;
  r->canvas.backend = r;
  lagscope__hud_draw(&r->canvas, s);
  CHECK_EQ_INT(r->clip_depth, 0);
}

static int wrote(const recorder *r, const char *text) {
  for (int i = 0; i < r->count; i++) {
    if (strcmp(r->texts[i], text) == 0) return 1;
  }
  return 0;
}

static int wrote_containing(const recorder *r, const char *part) {
  for (int i = 0; i < r->count; i++) {
    if (strstr(r->texts[i], part) != NULL) return 1;
  }
  return 0;
}

static void test_texts(void) {
  recorder r;
  lagscope__hud_state s = hud_test_idle();
  record(&r, &s);
  CHECK(wrote(&r, "60") && wrote(&r, "FPS") && wrote(&r, "0") && wrote(&r, "hangs"));
  CHECK(!wrote_containing(&r, "http")); /* the URL only when expanded */
  s.expanded = 1;
  record(&r, &s);
  CHECK(wrote(&r, "http://192.168.1.20:8080/?t=ab12\xE2\x80\xA6")); /* host:port, 4 of the token */
  CHECK(!wrote_containing(&r, "cd34"));
  /* The viewer's own form of the URL, as the server_started event gives it. */
  snprintf(s.viewer_url, sizeof s.viewer_url, "http://10.0.0.7:8080/?token=9f8e7d6c5b4a39281706");
  record(&r, &s);
  CHECK(wrote(&r, "http://10.0.0.7:8080/?token=9f8e\xE2\x80\xA6"));
  CHECK(!wrote_containing(&r, "7d6c"));
  snprintf(s.viewer_url, sizeof s.viewer_url, "%s", HUD_TEST_URL);
  CHECK(wrote(&r, "18 %") && wrote(&r, "142 MiB") && wrote(&r, "16.7 ms"));
  CHECK(r.clips > 0);
  s.viewer_url[0] = '\0';
  record(&r, &s);
  CHECK(!wrote_containing(&r, "http") && !wrote(&r, "VIEWER"));

  s = hud_test_hang();
  record(&r, &s);
  CHECK(wrote(&r, "HANG #2") && wrote(&r, "1.4 s")); /* the second hang, 1.4 s so far */
  s.hang_elapsed_ms = 250.0;
  record(&r, &s);
  CHECK(wrote(&r, "0.3 s") || wrote(&r, "0.2 s"));
  s.expanded = 1;
  record(&r, &s);
  CHECK(wrote(&r, "HANG #2") && wrote(&r, "620 ms")); /* and the last one's length */
  s.hangs = 0; /* the count not in yet: no number */
  record(&r, &s);
  CHECK(wrote(&r, "HANG") && !wrote_containing(&r, "#"));

  s = hud_test_three_hangs();
  s.expanded = 1;
  record(&r, &s);
  CHECK(wrote(&r, "3") && wrote(&r, "820 ms") && wrote(&r, "1.50 GiB"));
  CHECK(wrote(&r, "LAST HITCH") && wrote(&r, "103 ms") &&
        wrote(&r, "image_cache_decode_thumbnail"));
  CHECK(!wrote_containing(&r, "HANG #"));
  CHECK(wrote(&r, "LAST HANG") && wrote(&r, "lock \xC2\xB7 image-loader")); /* why, short */
  CHECK(wrote(&r, "THREADS") && wrote(&r, "27"));
  s.last_hang_ms = 1400.0;
  record(&r, &s);
  CHECK(wrote(&r, "1.4 s"));
  s.last_hang_repeats = 14; /* the same hang again: its count */
  record(&r, &s);
  CHECK(wrote(&r, "lock \xC2\xB7 image-loader \xC3\x97" "14"));
  s.last_hang_repeats = 1;
  record(&r, &s);
  CHECK(wrote(&r, "lock \xC2\xB7 image-loader"));
  s.last_hang_startup = 1; /* before the program's first frame: said (issue 32, section 5) */
  record(&r, &s);
  CHECK(wrote(&r, "start-up \xC2\xB7 lock \xC2\xB7 image-loader"));
  s.last_hang_label[0] = '\0';
  record(&r, &s);
  CHECK(wrote(&r, "start-up"));
}

/* ---- the renderer: a hang_ended event's report label reaches the image ------------------- */

/* A HUD at scale 1, expanded or compact, asked to draw. */
static lagscope__hud *hud_at_scale_one(int expanded) {
  lagscope_config config = lagscope_config_default();
  config.hud_expanded = expanded;
  config.hud_scale = 1.0f;
  lagscope__hud *h = lagscope__hud_new(&config);
  CHECK(h != NULL);
  lagscope__hud_want(h);
  return h;
}

/* The renderer's image, after one hang_ended event carrying a report whose cause is cause_json
 * (NULL: no cause), compared with the layout drawn straight from `expected`: 1 when equal. */
static int renderer_draws_after(const char *cause_json, const lagscope__hud_state *expected,
                                int times);
static int renderer_draws(const char *cause_json, const lagscope__hud_state *expected) {
  return renderer_draws_after(cause_json, expected, 1);
}

/* The same, after `times` such events: the same hang again and again. */
static int renderer_draws_after(const char *cause_json, const lagscope__hud_state *expected,
                                int times) {
  lagscope__hud *h = hud_at_scale_one(1);
  lagscope_hang_report *report = lagscope__hang_report_new("r-1", 1, "", NULL, NULL);
  CHECK(report != NULL);
  if (cause_json != NULL) {
    char *cause = lagscope__alloc(strlen(cause_json) + 1); /* the report frees it */
    CHECK(cause != NULL);
    memcpy(cause, cause_json, strlen(cause_json) + 1);
    lagscope__hang_report_set_cause(report, cause);
  }
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_ENDED};
  e.as.hang_ended.hang_id = 1;
  e.as.hang_ended.duration_ns = 820000000u;
  e.as.hang_ended.counted = 1;
  e.payload.report = report;
  for (int i = 0; i < times; i++) lagscope__hud_on_event(h, &e);
  lagscope__hud_tick(h, 1000000000u);
  lagscope_hud_image image;
  CHECK_EQ_INT(lagscope__hud_take(h, &image), 0);

  lagscope__hud_rect bounds = lagscope__hud_bounds(expected);
  lagscope__hud_canvas *canvas = lagscope__hud_canvas_new(bounds.width, bounds.height, 1.0f);
  lagscope__hud_canvas_clear(canvas);
  lagscope__hud_draw(canvas, expected);
  int width, height, stride;
  const uint32_t *pixels = lagscope__hud_canvas_pixels(canvas, &width, &height, &stride);
  CHECK(image.width <= width && image.height <= height);
  int same = 1;
  for (int y = 0; y < image.height && same; y++)
    same = memcmp((const char *)image.pixels + (size_t)y * (size_t)image.stride,
                  (const char *)pixels + (size_t)y * (size_t)stride,
                  (size_t)image.width * sizeof(uint32_t)) == 0;
  lagscope__hud_canvas_free(canvas);
  lagscope_release(report);
  lagscope__hud_free(h);
  return same;
}

/* The renderer's buffers are the size of the layout they hold, not of the largest: idle, the
 * compact HUD's rows are all a buffer holds (a row of the image is its whole row in the
 * buffer), and a buffer grows when the HUD expands and shrinks back when it folds. */
static void test_renderer_buffers_sized_to_layout(void) {
  lagscope__hud *h = hud_at_scale_one(0);
  uint64_t now = 1000000000u;
  for (int round = 0; round < 3; round++) {
    int expanded = round == 1;
    lagscope__hud_request_expanded(h, expanded);
    lagscope__hud_tick(h, now);
    now += 1000000000u;
    lagscope_hud_image image;
    CHECK_EQ_INT(lagscope__hud_take(h, &image), 0);
    lagscope__hud_state state = {.expanded = expanded};
    lagscope__hud_rect bounds = lagscope__hud_bounds(&state);
    CHECK_EQ_INT(image.width, (int)bounds.width);
    CHECK_EQ_INT(image.height, (int)bounds.height);
    CHECK_MSG(image.stride == image.width * 4,
              "%s HUD: a buffer row of %d bytes for an image row of %d", expanded ? "expanded" : "compact",
              image.stride, image.width * 4);
  }
  lagscope__hud_free(h);
}

static void test_renderer_label(void) {
  lagscope_config config = lagscope_config_default();
  lagscope__hud_state expected;
  memset(&expected, 0, sizeof expected);
  expected.refresh_hz = config.refresh_hz;
  expected.expanded = 1;
  expected.last_hang_ms = 820.0;
  snprintf(expected.last_hang_label, sizeof expected.last_hang_label,
           "lock \xC2\xB7 keeper");
  const char *cause = "{\"kind\":\"lock\",\"summary\":\"Waited\",\"label\":\"lock \xC2\xB7 keeper\"}";
  CHECK_MSG(renderer_draws(cause, &expected), "the HUD does not show the report's label");
  CHECK_MSG(!renderer_draws(NULL, &expected), "a hang without a label drew one");
  /* A label longer than the state holds is cut at a character's start, never inside one. */
  char long_label[200], cause_long[300];
  memset(long_label, 'x', sizeof long_label);
  memcpy(long_label + 62, "\xC2\xB7 tail", 8); /* the dot's two bytes straddle the cut */
  long_label[70] = '\0';
  snprintf(cause_long, sizeof cause_long, "{\"kind\":\"io\",\"label\":\"%s\"}", long_label);
  snprintf(expected.last_hang_label, sizeof expected.last_hang_label, "%.62s", long_label);
  CHECK_MSG(renderer_draws(cause_long, &expected), "a long label was not cut before the dot");
  /* The same hang three times (one signature): "×3". */
  snprintf(expected.last_hang_label, sizeof expected.last_hang_label, "lock \xC2\xB7 keeper");
  expected.last_hang_repeats = 3;
  CHECK_MSG(renderer_draws_after(cause, &expected, 3), "three of one signature: no \"x3\"");
  expected.last_hang_repeats = 2;
  CHECK_MSG(!renderer_draws_after(cause, &expected, 3), "three counted as two");
}

static const test_case cases[] = {
    TEST_CASE(fps_color),
    TEST_CASE(bounds),
    TEST_CASE(texts),
    TEST_CASE(nothing_outside),
    TEST_CASE(renderer_label),
    TEST_CASE(renderer_buffers_sized_to_layout),
};

int main(int argc, char **argv) {
  int rc = run_test_case(argc, argv, cases, CASE_COUNT(cases));
  cairo_debug_reset_static_data();
  FcFini();
  return rc;
}
