/*
 * bench_hud — the time to render one HUD update on the dispatcher thread: clear the buffer and
 * lagscope__hud_draw (hud/layout.c over hud/cairo_canvas.c) at scale 2, expanded and compact,
 * beside drawing only the same strings at the same places with cairo alone (cairo_show_text
 * on a surface of the same size, fonts made once, as the canvas does). The difference is what
 * the panel, the graph's bars and the canvas' indirection cost above the text itself. The
 * renderer redraws at most 4 times a second, so the budget is generous; the figure says how
 * much of the dispatcher thread the HUD takes.
 *
 * Usage: bench_hud [--runs N]   timed renders per figure (median)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, in bench.h */
#endif

#include "bench.h"

#include "../../hud/hud.h"
#include "../unit/hud/hud_states.h"

#include <cairo/cairo.h>
#include <math.h>

#define SCALE 2.0f
#define MAX_TEXTS 64

/* ---- the strings one update draws, recorded through a canvas that forwards to cairo ------- */
typedef struct recorded_text {
  float x, y, size;
  lagscope__hud_font_weight weight;
  lagscope__hud_color color;
  char utf8[200];
} recorded_text;

typedef struct recorder {
  lagscope__hud_canvas canvas;
  lagscope__hud_canvas *inner;
  recorded_text texts[MAX_TEXTS];
  int count;
} recorder;

static lagscope__hud_canvas *inner_of(lagscope__hud_canvas *c) {
  return ((recorder *)c->backend)->inner;
}
static void r_fill_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color k) {
  inner_of(c)->ops->fill_rect(inner_of(c), r, k);
}
static void r_stroke_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float w,
                          lagscope__hud_color k) {
  inner_of(c)->ops->stroke_rect(inner_of(c), r, w, k);
}
static void r_fill_round(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad,
                         lagscope__hud_color k) {
  inner_of(c)->ops->fill_round_rect(inner_of(c), r, rad, k);
}
static void r_stroke_round(lagscope__hud_canvas *c, lagscope__hud_rect r, float rad, float w,
                           lagscope__hud_color k) {
  inner_of(c)->ops->stroke_round_rect(inner_of(c), r, rad, w, k);
}
static void r_polyline(lagscope__hud_canvas *c, const lagscope__hud_point *p, size_t n, float w,
                       lagscope__hud_color k) {
  inner_of(c)->ops->polyline(inner_of(c), p, n, w, k);
}
static void r_text(lagscope__hud_canvas *c, float x, float y, const char *s, float size,
                   lagscope__hud_font_weight w, lagscope__hud_color k) {
  recorder *r = c->backend;
  if (r->count < MAX_TEXTS) {
    recorded_text *t = &r->texts[r->count++];
    *t = (recorded_text){x, y, size, w, k, {0}};
    snprintf(t->utf8, sizeof t->utf8, "%s", s);
  }
  inner_of(c)->ops->text(inner_of(c), x, y, s, size, w, k);
}
static float r_measure(lagscope__hud_canvas *c, const char *s, float size,
                       lagscope__hud_font_weight w) {
  return inner_of(c)->ops->measure_text(inner_of(c), s, size, w);
}
static void r_clip(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  inner_of(c)->ops->clip(inner_of(c), r);
}
static void r_reset_clip(lagscope__hud_canvas *c) { inner_of(c)->ops->reset_clip(inner_of(c)); }
static const lagscope__hud_canvas_ops recorder_ops = {
  r_fill_rect, r_stroke_rect, r_fill_round, r_stroke_round, r_polyline,
  r_text, r_measure, r_clip, r_reset_clip,
};

/* ---- the baseline: the same strings, cairo alone ------------------------------------------ */
typedef struct plain_cairo {
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_font_face_t *faces[2];
} plain_cairo;

static int plain_open(plain_cairo *p, lagscope__hud_rect bounds) {
  p->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(bounds.width * SCALE),
                                          (int)ceil(bounds.height * SCALE));
  p->cr = cairo_create(p->surface);
  cairo_scale(p->cr, SCALE, SCALE);
  cairo_font_options_t *options = cairo_font_options_create();
  cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  cairo_set_font_options(p->cr, options);
  cairo_font_options_destroy(options);
  p->faces[0] = cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                                           CAIRO_FONT_WEIGHT_NORMAL);
  p->faces[1] = cairo_toy_font_face_create("DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                                           CAIRO_FONT_WEIGHT_BOLD);
  return cairo_status(p->cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

static void plain_close(plain_cairo *p) {
  cairo_font_face_destroy(p->faces[0]);
  cairo_font_face_destroy(p->faces[1]);
  cairo_destroy(p->cr);
  cairo_surface_destroy(p->surface);
}

static void plain_draw(plain_cairo *p, const recorder *r) {
  cairo_save(p->cr);
  cairo_set_operator(p->cr, CAIRO_OPERATOR_CLEAR);
  cairo_paint(p->cr);
  cairo_restore(p->cr);
  for (int i = 0; i < r->count; i++) {
    const recorded_text *t = &r->texts[i];
    cairo_set_font_face(p->cr, p->faces[t->weight == LAGSCOPE__HUD_FONT_BOLD]);
    cairo_set_font_size(p->cr, t->size);
    cairo_set_source_rgba(p->cr, t->color.r, t->color.g, t->color.b, t->color.a);
    cairo_move_to(p->cr, t->x, t->y);
    cairo_show_text(p->cr, t->utf8);
  }
  cairo_surface_flush(p->surface);
}

/* ---- timing ----------------------------------------------------------------------------- */
typedef struct timing {
  double hud_us, text_us;
  int texts;
} timing;

static timing measure(lagscope__hud_state state, unsigned runs) {
  lagscope__hud_rect bounds = lagscope__hud_bounds(&state);
  lagscope__hud_canvas *canvas = lagscope__hud_canvas_new(bounds.width, bounds.height, SCALE);
  plain_cairo plain;
  if (canvas == NULL || plain_open(&plain, bounds) != 0) exit(1);
  static recorder rec;
  memset(&rec, 0, sizeof rec);
  rec.canvas = (lagscope__hud_canvas){&recorder_ops, &rec};
  rec.inner = canvas;
  lagscope__hud_draw(&rec.canvas, &state); /* the strings, and warm font caches */
  double *hud = malloc(runs * sizeof *hud), *text = malloc(runs * sizeof *text);
  if (hud == NULL || text == NULL) exit(1);
  for (unsigned i = 0; i < runs; i++) { /* interleaved: both see the same machine */
    uint64_t t0 = bench_now_ns();
    lagscope__hud_canvas_clear(canvas);
    lagscope__hud_draw(canvas, &state);
    lagscope__hud_canvas_pixels(canvas, NULL, NULL, NULL); /* flush, as the renderer does */
    uint64_t t1 = bench_now_ns();
    plain_draw(&plain, &rec);
    uint64_t t2 = bench_now_ns();
    hud[i] = (double)(t1 - t0) / 1000.0;
    text[i] = (double)(t2 - t1) / 1000.0;
  }
  timing t = {bench_median(hud, runs), bench_median(text, runs), rec.count};
  free(hud);
  free(text);
  plain_close(&plain);
  lagscope__hud_canvas_free(canvas);
  return t;
}

static void row(const char *figure, timing t) {
  char value[32], baseline[48], ratio[16];
  snprintf(value, sizeof value, "%.1f us", t.hud_us);
  snprintf(baseline, sizeof baseline, "%d strings, cairo: %.1f us", t.texts, t.text_us);
  bench_row(figure, value, baseline, bench_ratio(ratio, sizeof ratio, t.hud_us, t.text_us),
            "well under 250 ms (4 redraws/s)");
}

int main(int argc, char **argv) {
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 2000, 1);
  lagscope__hud_state expanded = hud_test_three_hangs();
  expanded.expanded = 1;
  lagscope__hud_state compact = hud_test_three_hangs();
  lagscope__hud_state hang = hud_test_hang();
  hang.expanded = 1;
  timing te = measure(expanded, runs), tc = measure(compact, runs), th = measure(hang, runs);
  char title[128];
  snprintf(title, sizeof title, "HUD render, one update at scale %.0f (median of %u)",
           (double)SCALE, runs);
  bench_table_begin(title);
  row("clear + draw, expanded (after 3 hangs)", te);
  row("clear + draw, expanded (during a hang)", th);
  row("clear + draw, compact", tc);
  cairo_debug_reset_static_data();
  return 0;
}
