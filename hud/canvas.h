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

typedef struct lagscope__hud_color {
  float r, g, b, a; /* 0..1, not premultiplied */
} lagscope__hud_color;

typedef struct lagscope__hud_rect {
  float x, y, width, height;
} lagscope__hud_rect;

typedef struct lagscope__hud_point {
  float x, y;
} lagscope__hud_point;

typedef enum lagscope__hud_font_weight {
  LAGSCOPE__HUD_FONT_REGULAR = 0,
  LAGSCOPE__HUD_FONT_BOLD = 1
} lagscope__hud_font_weight;

typedef struct lagscope__hud_canvas lagscope__hud_canvas;

typedef struct lagscope__hud_canvas_ops {
  void (*fill_rect)(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color color);
  void (*stroke_rect)(lagscope__hud_canvas *c, lagscope__hud_rect r, float line_width,
                      lagscope__hud_color color);
  void (*fill_round_rect)(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                          lagscope__hud_color color);
  void (*stroke_round_rect)(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                            float line_width, lagscope__hud_color color);
  void (*polyline)(lagscope__hud_canvas *c, const lagscope__hud_point *points, size_t count,
                   float line_width, lagscope__hud_color color);
  /* Draws text with its baseline's left end at (x, y). */
  void (*text)(lagscope__hud_canvas *c, float x, float y, const char *utf8, float size,
               lagscope__hud_font_weight weight, lagscope__hud_color color);
  /* The width the text would take, in points. */
  float (*measure_text)(lagscope__hud_canvas *c, const char *utf8, float size,
                        lagscope__hud_font_weight weight);
  /* Later drawing stays inside r, until reset_clip. */
  void (*clip)(lagscope__hud_canvas *c, lagscope__hud_rect r);
  void (*reset_clip)(lagscope__hud_canvas *c);
} lagscope__hud_canvas_ops;

struct lagscope__hud_canvas {
  const lagscope__hud_canvas_ops *ops;
  void *backend; /* the backend's own state */
};

#endif
