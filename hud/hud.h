/*
 * What the HUD shows, laid out once for every platform over a lagscope_canvas. The renderer
 * (hud/renderer.c) keeps a lagscope_hud_state from the events and redraws it into a pixel
 * buffer off the main thread; the platform glue shows the latest buffer.
 */
#ifndef LAGSCOPE_HUD_H
#define LAGSCOPE_HUD_H

#include "canvas.h"
#include "lagscope.h"

#include <stdint.h>

/* Everything the layout needs, copied from events; no pointers into lagscope's state. */
typedef struct lagscope_hud_state {
  double refresh_hz;          /* the display's rate: FPS is coloured relative to it */
  double fps;
  float recent_ms[LAGSCOPE_RECENT_FRAMES]; /* frame times, oldest first */
  uint32_t recent_count;
  double cpu_percent;         /* the process, % of one core */
  uint64_t memory_bytes;      /* resident (RSS; iOS: phys_footprint) */
  uint64_t hangs;             /* hangs so far */
  int hang_in_progress;
  double hang_elapsed_ms;     /* how long the current hang has lasted, when in progress */
  double last_hang_ms;        /* the last finished hang's duration; 0 before the first */
  char viewer_url[160];       /* full URL with its token; "" before the viewer exists */
  int expanded;               /* compact (0) or expanded (1) */
} lagscope_hud_state;

/* The HUD's size in points for this state (compact or expanded), so that a buffer can be
 * made to fit. F */
lagscope_rect lagscope_hud_bounds(const lagscope_hud_state *state);

/* Draws the whole HUD at the origin of the canvas, in points. F (backends may allocate). */
void lagscope_hud_draw(lagscope_canvas *canvas, const lagscope_hud_state *state);

/* The colour of an FPS value for a display rate: green near the rate, yellow, then red. F */
lagscope_color lagscope_hud_fps_color(double fps, double refresh_hz);

/* ---- the cairo backend (hud/cairo_canvas.c, Linux) ---- */

/* A canvas drawing into a new ARGB32 (premultiplied, native-endian) buffer of
 * width_points x height_points at scale pixels per point. NULL when out of memory. A */
lagscope_canvas *lagscope_cairo_canvas_new(float width_points, float height_points, float scale);
void lagscope_cairo_canvas_free(lagscope_canvas *canvas);
/* The pixels and their geometry; valid until the canvas is freed. Flushes drawing first. */
const uint32_t *lagscope_cairo_canvas_pixels(lagscope_canvas *canvas, int *width, int *height,
                                             int *stride_bytes);
/* Clears every pixel to transparent and drops any clip: call before each redraw. F */
void lagscope_cairo_canvas_clear(lagscope_canvas *canvas);
/* Writes the canvas to a PNG file (tests, screenshots). 0 or -1. */
int lagscope_cairo_canvas_write_png(lagscope_canvas *canvas, const char *path);

/* ---- the CoreGraphics backend (hud/coregraphics_canvas.c, iOS and macOS) ---- */

/* The same contract as the cairo backend's functions above, over a CGBitmapContext drawing
 * into a buffer the canvas owns (kCGImageAlphaPremultipliedFirst | kCGBitmapByteOrder32Host). */
lagscope_canvas *lagscope_cg_canvas_new(float width_points, float height_points, float scale);
void lagscope_cg_canvas_free(lagscope_canvas *canvas);
const uint32_t *lagscope_cg_canvas_pixels(lagscope_canvas *canvas, int *width, int *height,
                                          int *stride_bytes);
void lagscope_cg_canvas_clear(lagscope_canvas *canvas);

/* ---- the platform's canvas, as the renderer uses it (Linux: cairo; Apple: CoreGraphics) ---- */
#if !defined(__APPLE__)
#define lagscope_hud_canvas_new lagscope_cairo_canvas_new
#define lagscope_hud_canvas_free lagscope_cairo_canvas_free
#define lagscope_hud_canvas_pixels lagscope_cairo_canvas_pixels
#define lagscope_hud_canvas_clear lagscope_cairo_canvas_clear
#else
#define lagscope_hud_canvas_new lagscope_cg_canvas_new
#define lagscope_hud_canvas_free lagscope_cg_canvas_free
#define lagscope_hud_canvas_pixels lagscope_cg_canvas_pixels
#define lagscope_hud_canvas_clear lagscope_cg_canvas_clear
#endif

#endif
