/*
 * The canvas: the few drawing operations the HUD's layout needs, as a struct of function
 * pointers. Each maps one to one onto CoreGraphics (CGContextFillRect, CGContextAddPath +
 * CGContextFillPath/StrokePath, CGContextAddLines, CTLineDraw, CTLineGetTypographicBounds,
 * CGContextClipToRect), and onto cairo. Only the backend files include their library.
 *
 * Units are points; the backend scales points to pixels (the HUD's scale factor is an input,
 * so it is legible on a phone). The origin is the top left; y grows downwards.
 */
#ifndef LAGSCOPE_HUD_CANVAS_H
#define LAGSCOPE_HUD_CANVAS_H

#include <stddef.h>
#include <stdint.h>

typedef struct lagscope_color {
  float r, g, b, a; /* 0..1, not premultiplied */
} lagscope_color;

typedef struct lagscope_rect {
  float x, y, width, height;
} lagscope_rect;

typedef struct lagscope_point {
  float x, y;
} lagscope_point;

typedef enum lagscope_font_weight {
  LAGSCOPE_FONT_REGULAR = 0,
  LAGSCOPE_FONT_BOLD = 1
} lagscope_font_weight;

typedef struct lagscope_canvas lagscope_canvas;

typedef struct lagscope_canvas_ops {
  void (*fill_rect)(lagscope_canvas *c, lagscope_rect r, lagscope_color color);
  void (*stroke_rect)(lagscope_canvas *c, lagscope_rect r, float line_width, lagscope_color color);
  void (*fill_round_rect)(lagscope_canvas *c, lagscope_rect r, float radius, lagscope_color color);
  void (*stroke_round_rect)(lagscope_canvas *c, lagscope_rect r, float radius, float line_width,
                            lagscope_color color);
  void (*polyline)(lagscope_canvas *c, const lagscope_point *points, size_t count,
                   float line_width, lagscope_color color);
  /* Draws text with its baseline's left end at (x, y). */
  void (*text)(lagscope_canvas *c, float x, float y, const char *utf8, float size,
               lagscope_font_weight weight, lagscope_color color);
  /* The width the text would take, in points. */
  float (*measure_text)(lagscope_canvas *c, const char *utf8, float size,
                        lagscope_font_weight weight);
  /* Later drawing stays inside r, until reset_clip. */
  void (*clip)(lagscope_canvas *c, lagscope_rect r);
  void (*reset_clip)(lagscope_canvas *c);
} lagscope_canvas_ops;

struct lagscope_canvas {
  const lagscope_canvas_ops *ops;
  void *backend; /* the backend's own state */
};

#endif
