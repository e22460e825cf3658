/*
 * The cairo canvas's glyph images: each glyph the HUD draws, at each size and weight, filled
 * once from its outline into a small 8-bit coverage image of its own, then stamped from there.
 *
 * Why not cairo_show_text: on an image surface, cairo composites shown glyphs through pixman's
 * glyph cache, a table of 256 KiB made at the first glyph and kept for the life of the process
 * (an X app's own text is drawn by the server, so it never has one). Why not fill the outlines
 * every time: 30 times the CPU of a render. A glyph's image is the fill of its outline at a
 * whole pixel, so stamping it at another whole pixel gives the pixels the fill would. The stamp
 * is a loop of ours (pixman's OVER of a solid colour through an A8 mask, its rounding kept):
 * through cairo_mask_surface each image would be a cairo surface, whose structures alone, three
 * canvases' worth, held some 48 KiB of the drawing thread's malloc arena.
 *
 * Tags as in core/internal.h: A allocates, F neither allocates nor locks. Only the thread that
 * draws on the canvas uses its glyphs.
 */
#ifndef LAGSCOPE_HUD_CAIRO_GLYPHS_H
#define LAGSCOPE_HUD_CAIRO_GLYPHS_H

#include <cairo.h>

typedef struct lagscope__hud_glyphs lagscope__hud_glyphs;

/* An empty set (its table made at the first glyph); NULL when out of memory. A */
lagscope__hud_glyphs *lagscope__hud_glyphs_new(void);
void lagscope__hud_glyphs_free(lagscope__hud_glyphs *g); /* A */

/* Draws glyphs (as cairo_scaled_font_text_to_glyphs gives them, in cr's user space) with cr's
 * scaled font and source, each at the whole device pixel nearest its origin. `weight` tells
 * the faces apart (0 regular, 1 bold). A glyph whose image cannot be made is filled from its
 * outline instead. A */
void lagscope__hud_glyphs_show(lagscope__hud_glyphs *g, cairo_t *cr, int weight,
                               const cairo_glyph_t *glyphs, int count);

#endif
