/*
 * The cairo canvas (Linux): the canvas ops of canvas.h over a cairo ARGB32 image surface.
 * Points in, pixels out: the context is scaled once at creation, so every op takes points.
 *
 * Text uses cairo's toy API with one font family, grey antialiasing and no hinting, so that
 * the same state renders to the same pixels on every machine with the same font package (the
 * reference images in tests/unit/hud depend on it).
 */
#include "cairo_glyphs.h"
#include "hud.h"
#include "internal.h"

#include <cairo.h>
#include <math.h>
#include <stdlib.h>

/* Debian's fonts-dejavu-core: the same glyphs on every machine of this kind. */
#define LAGSCOPE__HUD_FONT_FAMILY "DejaVu Sans"

#define HALF_PI 1.57079632679489661923 /* M_PI is POSIX, not C11 */

typedef struct cairo_backend {
  lagscope__hud_canvas canvas; /* first: the canvas handed out is this struct */
  cairo_surface_t *surface;
  unsigned char *pixels;       /* the surface's bytes: lagscope__alloc's (see canvas_new) */
  cairo_t *cr;
  cairo_font_face_t *faces[2]; /* by lagscope__hud_font_weight */
  int clip_depth;              /* cairo_save calls made by clip, undone by reset_clip */
  lagscope__hud_glyphs *glyphs; /* the images of the glyphs drawn so far */
} cairo_backend;

static cairo_t *context_of(lagscope__hud_canvas *c) { return ((cairo_backend *)c->backend)->cr; }

static void set_color(cairo_t *cr, lagscope__hud_color color) {
  cairo_set_source_rgba(cr, color.r, color.g, color.b, color.a);
}

/* ---- shapes ----------------------------------------------------------------------------- */
static void round_rect_path(cairo_t *cr, lagscope__hud_rect r, float radius) {
  double limit = fmin(r.width, r.height) / 2.0;
  double rad = radius < 0.0f ? 0.0 : fmin(radius, limit);
  double x0 = r.x, y0 = r.y, x1 = r.x + r.width, y1 = r.y + r.height;
  cairo_new_sub_path(cr);
  cairo_arc(cr, x1 - rad, y0 + rad, rad, -HALF_PI, 0.0);
  cairo_arc(cr, x1 - rad, y1 - rad, rad, 0.0, HALF_PI);
  cairo_arc(cr, x0 + rad, y1 - rad, rad, HALF_PI, 2.0 * HALF_PI);
  cairo_arc(cr, x0 + rad, y0 + rad, rad, 2.0 * HALF_PI, 3.0 * HALF_PI);
  cairo_close_path(cr);
}

static void op_fill_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color color) {
  cairo_t *cr = context_of(c);
  cairo_rectangle(cr, r.x, r.y, r.width, r.height);
  set_color(cr, color);
  cairo_fill(cr);
}

static void op_stroke_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float line_width,
                           lagscope__hud_color color) {
  cairo_t *cr = context_of(c);
  cairo_rectangle(cr, r.x, r.y, r.width, r.height);
  cairo_set_line_width(cr, line_width);
  set_color(cr, color);
  cairo_stroke(cr);
}

static void op_fill_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                               lagscope__hud_color color) {
  cairo_t *cr = context_of(c);
  round_rect_path(cr, r, radius);
  set_color(cr, color);
  cairo_fill(cr);
}

static void op_stroke_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                                 float line_width, lagscope__hud_color color) {
  cairo_t *cr = context_of(c);
  round_rect_path(cr, r, radius);
  cairo_set_line_width(cr, line_width);
  set_color(cr, color);
  cairo_stroke(cr);
}

static void op_polyline(lagscope__hud_canvas *c, const lagscope__hud_point *points, size_t count,
                        float line_width, lagscope__hud_color color) {
  if (count < 2) return;
  cairo_t *cr = context_of(c);
  cairo_move_to(cr, points[0].x, points[0].y);
  for (size_t i = 1; i < count; i++) cairo_line_to(cr, points[i].x, points[i].y);
  cairo_set_line_width(cr, line_width);
  set_color(cr, color);
  cairo_stroke(cr);
}

/* ---- text ------------------------------------------------------------------------------- */
static void use_font(lagscope__hud_canvas *c, float size, lagscope__hud_font_weight weight) {
  cairo_backend *b = c->backend;
  cairo_set_font_face(b->cr, b->faces[weight == LAGSCOPE__HUD_FONT_BOLD ? 1 : 0]);
  cairo_set_font_size(b->cr, size);
}

static void op_text(lagscope__hud_canvas *c, float x, float y, const char *utf8, float size,
                    lagscope__hud_font_weight weight, lagscope__hud_color color) {
  cairo_t *cr = context_of(c);
  use_font(c, size, weight);
  set_color(cr, color);
  /* Stamped from images of their outlines filled (cairo_glyphs.h): never pixman's glyph
   * cache, which cairo_show_text would make. */
  cairo_glyph_t *glyphs = NULL;
  int count = 0;
  if (cairo_scaled_font_text_to_glyphs(cairo_get_scaled_font(cr), x, y, utf8, -1, &glyphs, &count,
                                       NULL, NULL, NULL) != CAIRO_STATUS_SUCCESS)
    return;
  cairo_new_path(cr);
  lagscope__hud_glyphs_show(((cairo_backend *)c->backend)->glyphs, cr, (int)weight, glyphs, count);
  cairo_glyph_free(glyphs);
}

static float op_measure_text(lagscope__hud_canvas *c, const char *utf8, float size,
                             lagscope__hud_font_weight weight) {
  cairo_text_extents_t extents;
  use_font(c, size, weight);
  cairo_text_extents(context_of(c), utf8, &extents);
  return (float)extents.x_advance;
}

/* ---- clipping --------------------------------------------------------------------------- */
static void op_clip(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  cairo_backend *b = c->backend;
  cairo_save(b->cr);
  b->clip_depth++;
  cairo_rectangle(b->cr, r.x, r.y, r.width, r.height);
  cairo_clip(b->cr);
}

static void op_reset_clip(lagscope__hud_canvas *c) {
  cairo_backend *b = c->backend;
  for (; b->clip_depth > 0; b->clip_depth--) cairo_restore(b->cr);
}

static const lagscope__hud_canvas_ops cairo_ops = {
  .fill_rect = op_fill_rect,
  .stroke_rect = op_stroke_rect,
  .fill_round_rect = op_fill_round_rect,
  .stroke_round_rect = op_stroke_round_rect,
  .polyline = op_polyline,
  .text = op_text,
  .measure_text = op_measure_text,
  .clip = op_clip,
  .reset_clip = op_reset_clip,
};

/* ---- life cycle ------------------------------------------------------------------------- */

/* Grey antialiasing, no hinting: the same pixels wherever the font is the same. */
static void set_reproducible_font_options(cairo_t *cr) {
  cairo_font_options_t *options = cairo_font_options_create();
  cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  cairo_set_font_options(cr, options);
  cairo_font_options_destroy(options);
}

static int make_faces(cairo_backend *b) {
  b->faces[0] = cairo_toy_font_face_create(LAGSCOPE__HUD_FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL,
                                           CAIRO_FONT_WEIGHT_NORMAL);
  b->faces[1] = cairo_toy_font_face_create(LAGSCOPE__HUD_FONT_FAMILY, CAIRO_FONT_SLANT_NORMAL,
                                           CAIRO_FONT_WEIGHT_BOLD);
  return cairo_font_face_status(b->faces[0]) == CAIRO_STATUS_SUCCESS &&
                 cairo_font_face_status(b->faces[1]) == CAIRO_STATUS_SUCCESS
             ? 0
             : -1;
}

lagscope__hud_canvas *lagscope__hud_canvas_new(float width_points, float height_points,
                                              float scale) {
  if (!(width_points > 0.0f) || !(height_points > 0.0f) || !(scale > 0.0f)) return NULL;
  double w = ceil((double)width_points * scale), h = ceil((double)height_points * scale);
  if (w > 32767.0 || h > 32767.0) return NULL; /* cairo's image limit */
  cairo_backend *b = lagscope__alloc(sizeof *b);
  if (b == NULL) return NULL;
  b->canvas.ops = &cairo_ops;
  b->canvas.backend = b;
  /* The pixels from lagscope's heap, not pixman's malloc: counted in monitor_memory_bytes, and
   * given back to the system when the canvas goes (a buffer remade for another layout). From
   * malloc they went to the drawing thread's glibc arena, which gives back only its free top,
   * above a threshold that grows with the app's largest free: an expanded HUD's three 212 KiB
   * buffers (scale 1) could stay resident after it went back to compact. */
  int stride = cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, (int)w);
  b->pixels = stride > 0 ? lagscope__alloc((size_t)stride * (size_t)h) : NULL;
  if (b->pixels == NULL) {
    lagscope__dealloc(b);
    return NULL;
  }
  b->surface =
      cairo_image_surface_create_for_data(b->pixels, CAIRO_FORMAT_ARGB32, (int)w, (int)h, stride);
  b->cr = cairo_create(b->surface);
  b->glyphs = lagscope__hud_glyphs_new();
  if (cairo_status(b->cr) != CAIRO_STATUS_SUCCESS || make_faces(b) != 0 || b->glyphs == NULL) {
    lagscope__hud_canvas_free(&b->canvas);
    return NULL;
  }
  cairo_scale(b->cr, scale, scale);
  cairo_set_line_join(b->cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(b->cr, CAIRO_LINE_CAP_BUTT);
  set_reproducible_font_options(b->cr);
  lagscope__hud_canvas_clear(&b->canvas);
  return &b->canvas;
}

void lagscope__hud_canvas_free(lagscope__hud_canvas *canvas) {
  if (canvas == NULL) return;
  cairo_backend *b = canvas->backend;
  for (int i = 0; i < 2; i++) {
    if (b->faces[i] != NULL) cairo_font_face_destroy(b->faces[i]);
  }
  lagscope__hud_glyphs_free(b->glyphs);
  if (b->cr != NULL) cairo_destroy(b->cr);
  if (b->surface != NULL) {
    cairo_surface_finish(b->surface); /* cairo never touches the pixels again */
    cairo_surface_destroy(b->surface);
  }
  lagscope__dealloc(b->pixels);
  lagscope__dealloc(b);
}

void lagscope__hud_canvas_clear(lagscope__hud_canvas *canvas) {
  cairo_t *cr = context_of(canvas);
  op_reset_clip(canvas);
  cairo_save(cr);
  cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR);
  cairo_paint(cr);
  cairo_restore(cr);
}

const uint32_t *lagscope__hud_canvas_pixels(lagscope__hud_canvas *canvas, int *width, int *height,
                                             int *stride_bytes) {
  cairo_backend *b = canvas->backend;
  cairo_surface_flush(b->surface);
  if (width != NULL) *width = cairo_image_surface_get_width(b->surface);
  if (height != NULL) *height = cairo_image_surface_get_height(b->surface);
  if (stride_bytes != NULL) *stride_bytes = cairo_image_surface_get_stride(b->surface);
  return (const uint32_t *)(const void *)cairo_image_surface_get_data(b->surface);
}

int lagscope__hud_canvas_write_png(lagscope__hud_canvas *canvas, const char *path) {
  cairo_backend *b = canvas->backend;
  cairo_surface_flush(b->surface);
  return cairo_surface_write_to_png(b->surface, path) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}
