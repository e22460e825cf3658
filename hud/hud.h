/*
 * What the HUD shows, laid out once for every platform over a lagscope__hud_canvas. The renderer
 * (hud/renderer.c) keeps a lagscope__hud_state from the events and redraws it into a pixel
 * buffer off the main thread; the platform glue shows the latest buffer.
 */
#ifndef LAGSCOPE_HUD_H
#define LAGSCOPE_HUD_H

#include "canvas.h"
#include "lagscope.h"

#include <stdint.h>

/* Everything the layout needs, copied from events; no pointers into lagscope's state. */
typedef struct lagscope__hud_state {
  double refresh_hz;          /* the display's rate: FPS is coloured relative to it */
  double cadence_hz;          /* the app's own steady pace, when slower (0: the display's) */
  double fps;
  int frames_idle;            /* no frame wanted: "idle" instead of an FPS figure */
  float recent_ms[LAGSCOPE_RECENT_FRAMES]; /* frame times, oldest first */
  uint32_t recent_count;
  double cpu_percent;         /* the process, % of one core */
  uint64_t memory_bytes;      /* resident (RSS; iOS: phys_footprint) */
  uint64_t hangs;             /* hangs so far */
  int hang_in_progress;
  double hang_elapsed_ms;     /* how long the current hang has lasted, when in progress */
  double last_hang_ms;        /* the last finished hang's duration; 0 before the first */
  char last_hang_label[64];   /* its kind and target ("lock · keeper"); "" when unknown */
  uint32_t last_hang_repeats; /* hangs so far with its signature: shown as "×14" from 2 */
  int last_hang_startup;      /* it was in the program's start-up: shown as "start-up" */
  uint32_t thread_count;      /* the process's threads */
  double last_hitch_ms;       /* the last hitch's duration; 0 before the first */
  char last_hitch_function[64]; /* where the app was during it; "" when unknown */
  char viewer_url[160];       /* full URL with its token; "" before the viewer exists */
  int expanded;               /* compact (0) or expanded (1) */
} lagscope__hud_state;

/* The HUD's size in points for this state (compact or expanded), so that a buffer can be
 * made to fit. F */
lagscope__hud_rect lagscope__hud_bounds(const lagscope__hud_state *state);

/* Draws the whole HUD at the origin of the canvas, in points. F (backends may allocate). */
void lagscope__hud_draw(lagscope__hud_canvas *canvas, const lagscope__hud_state *state);

/* The colour of an FPS value for a display rate: green near the rate, yellow, then red. F */
lagscope__hud_color lagscope__hud_fps_color(double fps, double refresh_hz);

/* ---- the platform's canvas: hud/cairo_canvas.c (Linux) or hud/coregraphics_canvas.c (iOS,
 * macOS); CMake builds the one of the platform, so this contract has no #if ---- */

/* A canvas drawing into a new ARGB32 (premultiplied, native-endian) buffer of
 * width_points x height_points at scale pixels per point; CoreGraphics: a CGBitmapContext over
 * a buffer the canvas owns (kCGImageAlphaPremultipliedFirst | kCGBitmapByteOrder32Host). NULL
 * when out of memory. A */
lagscope__hud_canvas *lagscope__hud_canvas_new(float width_points, float height_points,
                                              float scale);
void lagscope__hud_canvas_free(lagscope__hud_canvas *canvas);
/* The pixels and their geometry; valid until the canvas is freed. Flushes drawing first. */
const uint32_t *lagscope__hud_canvas_pixels(lagscope__hud_canvas *canvas, int *width, int *height,
                                            int *stride_bytes);
/* Clears every pixel to transparent and drops any clip: call before each redraw. F */
void lagscope__hud_canvas_clear(lagscope__hud_canvas *canvas);
/* Writes the canvas to a PNG file: the cairo canvas only (tests, screenshots). 0 or -1. A */
int lagscope__hud_canvas_write_png(lagscope__hud_canvas *canvas, const char *path);

/* ---- the renderer (hud/renderer.c): the dispatcher thread, but take (main thread) ---- */
typedef struct lagscope__hud lagscope__hud;
lagscope__hud *lagscope__hud_new(const lagscope_config *config); /* A: three pixel buffers */
void lagscope__hud_free(lagscope__hud *h);
void lagscope__hud_on_event(lagscope__hud *h, const lagscope_event *e); /* F */
/* Redraws when due; returns when it next wants to run (UINT64_MAX: not until an event). */
uint64_t lagscope__hud_tick(lagscope__hud *h, uint64_t now_ns);
void lagscope__hud_set_viewer_url(lagscope__hud *h, const char *url);
void lagscope__hud_request_expanded(lagscope__hud *h, int expanded); /* F, any thread */
int lagscope__hud_take(lagscope__hud *h, lagscope_hud_image *out);   /* F, main thread */
/* Marks the HUD as shown by a host; 1 the first time (then wake the dispatcher to draw). F */
int lagscope__hud_want(lagscope__hud *h);

/* ---- the HUD as lagscope's consumer (hud/consumer.c) ---- */
/* lagscope_hud_take for a reader that may race lagscope_stop on another thread (the Darwin
 * overlay's main-queue timer, the X11 overlay's thread): on LAGSCOPE_OK the pixels stay valid, stop or not, until
 * lagscope__hud_release, which must follow promptly (stop waits for it). F */
int lagscope__hud_hold(lagscope_hud_image *out);
void lagscope__hud_release(void);


#endif
