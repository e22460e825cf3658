/*
 * The CoreGraphics canvas (iOS, macOS): the canvas ops of canvas.h over a CGBitmapContext that
 * draws into a buffer this file owns, in the layout lagscope_hud_image promises: premultiplied
 * ARGB32 in native byte order (kCGImageAlphaPremultipliedFirst | kCGBitmapByteOrder32Host).
 *
 * Coordinates: the canvas has its origin at the top left with y growing downwards; CoreGraphics
 * has it at the bottom left with y growing upwards. The context's CTM is flipped and scaled once
 * at creation (translate by the height, scale by (scale, -scale)), so every op takes points in
 * the canvas's own coordinates, exactly as the cairo backend does. Core Text draws glyphs
 * through the text matrix, which the flip would turn upside down; each text op sets a text
 * matrix that flips them back.
 *
 * The font is Helvetica (Helvetica-Bold for bold), by name: it is on every iOS and macOS
 * version, its digits all have the same advance as DejaVu Sans' do on Linux (so the FPS number
 * does not jitter sideways four times a second), and it is a public name. The system UI font's
 * private names (".AppleSystemUIFont", ".SFNS-*") are not for CTFontCreateWithName: Core Text
 * logs a warning for them and may substitute Times.
 */
#include "hud.h"
#include "internal.h"

#include <CoreFoundation/CoreFoundation.h>
#include <CoreGraphics/CoreGraphics.h>
#include <CoreText/CoreText.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FONT_REGULAR "Helvetica"
#define FONT_BOLD "Helvetica-Bold"
#define FONT_CACHE_SIZE 8 /* the layout uses a handful of (size, weight) pairs */
#define MAX_PIXELS 32767.0 /* the same image limit as the cairo backend */

typedef struct cached_font {
  float size;
  lagscope__hud_font_weight weight;
  CTFontRef font; /* NULL: an empty slot */
} cached_font;

typedef struct cg_backend {
  lagscope__hud_canvas canvas; /* first: the canvas handed out is this struct */
  uint32_t *pixels;       /* owned here; the context draws into it */
  int width, height, stride;
  CGContextRef cg;
  int clip_depth;         /* CGContextSaveGState calls made by clip, undone by reset_clip */
  cached_font fonts[FONT_CACHE_SIZE];
  int next_evict;         /* round robin when the cache is full */
} cg_backend;

static CGContextRef context_of(lagscope__hud_canvas *c) { return ((cg_backend *)c->backend)->cg; }

static CGRect cg_rect(lagscope__hud_rect r) {
  CGRect out = {{r.x, r.y}, {r.width, r.height}};
  return out;
}

static void set_fill(CGContextRef cg, lagscope__hud_color color) {
  CGContextSetRGBFillColor(cg, color.r, color.g, color.b, color.a);
}

static void set_stroke(CGContextRef cg, lagscope__hud_color color) {
  CGContextSetRGBStrokeColor(cg, color.r, color.g, color.b, color.a);
}

/* ---- shapes ----------------------------------------------------------------------------- */

/* CGPathCreateWithRoundedRect requires each corner radius to be at most half the side it
 * sits on (it asserts otherwise), so clamp as the cairo backend does. NULL when out of memory. */
static CGPathRef round_rect_path(lagscope__hud_rect r, float radius) {
  double limit = fmin(r.width, r.height) / 2.0;
  double rad = radius < 0.0f ? 0.0 : fmin(radius, limit);
  if (!(rad >= 0.0)) rad = 0.0; /* NaN sizes */
  return CGPathCreateWithRoundedRect(cg_rect(r), rad, rad, NULL);
}

static void op_fill_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, lagscope__hud_color color) {
  CGContextRef cg = context_of(c);
  set_fill(cg, color);
  CGContextFillRect(cg, cg_rect(r));
}

static void op_stroke_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float line_width,
                           lagscope__hud_color color) {
  CGContextRef cg = context_of(c);
  set_stroke(cg, color);
  CGContextStrokeRectWithWidth(cg, cg_rect(r), line_width);
}

static void op_fill_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                               lagscope__hud_color color) {
  CGContextRef cg = context_of(c);
  CGPathRef path = round_rect_path(r, radius);
  if (path == NULL) return;
  set_fill(cg, color);
  CGContextBeginPath(cg);
  CGContextAddPath(cg, path);
  CGContextFillPath(cg);
  CGPathRelease(path);
}

static void op_stroke_round_rect(lagscope__hud_canvas *c, lagscope__hud_rect r, float radius,
                                 float line_width, lagscope__hud_color color) {
  CGContextRef cg = context_of(c);
  CGPathRef path = round_rect_path(r, radius);
  if (path == NULL) return;
  set_stroke(cg, color);
  CGContextSetLineWidth(cg, line_width);
  CGContextBeginPath(cg);
  CGContextAddPath(cg, path);
  CGContextStrokePath(cg);
  CGPathRelease(path);
}

static void op_polyline(lagscope__hud_canvas *c, const lagscope__hud_point *points, size_t count,
                        float line_width, lagscope__hud_color color) {
  if (count < 2) return;
  CGContextRef cg = context_of(c);
  CGContextBeginPath(cg);
  CGContextMoveToPoint(cg, points[0].x, points[0].y);
  for (size_t i = 1; i < count; i++) CGContextAddLineToPoint(cg, points[i].x, points[i].y);
  set_stroke(cg, color);
  CGContextSetLineWidth(cg, line_width);
  CGContextStrokePath(cg);
}

/* ---- text ------------------------------------------------------------------------------- */

static CTFontRef create_font(float size, lagscope__hud_font_weight weight) {
  CFStringRef name = CFStringCreateWithCString(
      kCFAllocatorDefault, weight == LAGSCOPE__HUD_FONT_BOLD ? FONT_BOLD : FONT_REGULAR,
      kCFStringEncodingUTF8);
  if (name == NULL) return NULL;
  CTFontRef font = CTFontCreateWithName(name, size, NULL);
  CFRelease(name);
  return font;
}

/* Fonts are costly to make and the layout asks for the same few again and again. The cache
 * owns its fonts; NULL when out of memory. */
static CTFontRef font_for(cg_backend *b, float size, lagscope__hud_font_weight weight) {
  for (int i = 0; i < FONT_CACHE_SIZE; i++) {
    cached_font *f = &b->fonts[i];
    if (f->font != NULL && f->size == size && f->weight == weight) return f->font;
  }
  CTFontRef font = create_font(size, weight);
  if (font == NULL) return NULL;
  cached_font *slot = &b->fonts[b->next_evict];
  b->next_evict = (b->next_evict + 1) % FONT_CACHE_SIZE;
  if (slot->font != NULL) CFRelease(slot->font);
  slot->size = size;
  slot->weight = weight;
  slot->font = font;
  return font;
}

/* A line of text in the font, coloured by the context's fill colour (so no CGColor has to be
 * made per call). The caller releases it; NULL when the text is not valid UTF-8 or memory ran
 * out. */
static CTLineRef make_line(lagscope__hud_canvas *c, const char *utf8, float size,
                           lagscope__hud_font_weight weight) {
  CTFontRef font = font_for(c->backend, size, weight);
  if (font == NULL || utf8 == NULL) return NULL;
  CFStringRef string = CFStringCreateWithCString(kCFAllocatorDefault, utf8, kCFStringEncodingUTF8);
  if (string == NULL) return NULL;
  const void *keys[] = {kCTFontAttributeName, kCTForegroundColorFromContextAttributeName};
  const void *values[] = {font, kCFBooleanTrue};
  CFDictionaryRef attributes =
      CFDictionaryCreate(kCFAllocatorDefault, keys, values, 2, &kCFTypeDictionaryKeyCallBacks,
                         &kCFTypeDictionaryValueCallBacks);
  CTLineRef line = NULL;
  if (attributes != NULL) {
    CFAttributedStringRef text = CFAttributedStringCreate(kCFAllocatorDefault, string, attributes);
    if (text != NULL) {
      line = CTLineCreateWithAttributedString(text);
      CFRelease(text);
    }
    CFRelease(attributes);
  }
  CFRelease(string);
  return line;
}

static void op_text(lagscope__hud_canvas *c, float x, float y, const char *utf8, float size,
                    lagscope__hud_font_weight weight, lagscope__hud_color color) {
  CTLineRef line = make_line(c, utf8, size, weight);
  if (line == NULL) return;
  CGContextRef cg = context_of(c);
  /* The CTM is flipped (y down); flip the glyphs back upright. The text matrix is not part
   * of the graphics state, so it is set every time rather than trusted. */
  CGAffineTransform upright = {1.0, 0.0, 0.0, -1.0, 0.0, 0.0};
  CGContextSetTextMatrix(cg, upright);
  CGContextSetTextPosition(cg, x, y); /* the baseline's left end, as canvas.h asks */
  set_fill(cg, color);
  CTLineDraw(line, cg);
  CFRelease(line);
}

static float op_measure_text(lagscope__hud_canvas *c, const char *utf8, float size,
                             lagscope__hud_font_weight weight) {
  CTLineRef line = make_line(c, utf8, size, weight);
  if (line == NULL) return 0.0f;
  double width = CTLineGetTypographicBounds(line, NULL, NULL, NULL);
  CFRelease(line);
  return (float)width;
}

/* ---- clipping --------------------------------------------------------------------------- */
static void op_clip(lagscope__hud_canvas *c, lagscope__hud_rect r) {
  cg_backend *b = c->backend;
  CGContextSaveGState(b->cg);
  b->clip_depth++;
  CGContextClipToRect(b->cg, cg_rect(r));
}

static void op_reset_clip(lagscope__hud_canvas *c) {
  cg_backend *b = c->backend;
  for (; b->clip_depth > 0; b->clip_depth--) CGContextRestoreGState(b->cg);
}

static const lagscope__hud_canvas_ops coregraphics_ops = {
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

static CGContextRef make_context(cg_backend *b) {
  CGColorSpaceRef rgb = CGColorSpaceCreateDeviceRGB();
  if (rgb == NULL) return NULL;
  CGContextRef cg = CGBitmapContextCreate(
      b->pixels, (size_t)b->width, (size_t)b->height, 8, (size_t)b->stride, rgb,
      (uint32_t)kCGImageAlphaPremultipliedFirst | (uint32_t)kCGBitmapByteOrder32Host);
  CGColorSpaceRelease(rgb); /* the context keeps its own reference */
  return cg;
}

/* Points in, canvas coordinates: flip y and scale once, so that ops never think of pixels. */
static void set_canvas_coordinates(CGContextRef cg, int height_pixels, float scale) {
  CGContextTranslateCTM(cg, 0.0, (CGFloat)height_pixels);
  CGContextScaleCTM(cg, scale, -scale);
  CGContextSetLineJoin(cg, kCGLineJoinRound); /* as the cairo backend */
  CGContextSetLineCap(cg, kCGLineCapButt);
}

void lagscope__hud_canvas_free(lagscope__hud_canvas *canvas) {
  if (canvas == NULL) return;
  cg_backend *b = canvas->backend;
  for (int i = 0; i < FONT_CACHE_SIZE; i++) {
    if (b->fonts[i].font != NULL) CFRelease(b->fonts[i].font);
  }
  if (b->cg != NULL) CGContextRelease(b->cg);
  lagscope__dealloc(b->pixels);
  lagscope__dealloc(b);
}

lagscope__hud_canvas *lagscope__hud_canvas_new(float width_points, float height_points,
                                              float scale) {
  if (!(width_points > 0.0f) || !(height_points > 0.0f) || !(scale > 0.0f)) return NULL;
  double w = ceil((double)width_points * scale), h = ceil((double)height_points * scale);
  if (w > MAX_PIXELS || h > MAX_PIXELS) return NULL;
  cg_backend *b = lagscope__alloc(sizeof *b);
  if (b == NULL) return NULL;
  b->canvas.ops = &coregraphics_ops;
  b->canvas.backend = b;
  b->width = (int)w;
  b->height = (int)h;
  b->stride = b->width * 4;
  b->pixels = lagscope__alloc_array((size_t)b->height, (size_t)b->stride); /* zero: transparent */
  if (b->pixels != NULL) b->cg = make_context(b);
  if (b->cg == NULL) {
    lagscope__hud_canvas_free(&b->canvas);
    return NULL;
  }
  set_canvas_coordinates(b->cg, b->height, scale);
  return &b->canvas;
}

/* The buffer is ours and the context draws into it synchronously, so clearing is a memset:
 * exact, and independent of the CTM. */
void lagscope__hud_canvas_clear(lagscope__hud_canvas *canvas) {
  cg_backend *b = canvas->backend;
  op_reset_clip(canvas);
  CGContextFlush(b->cg);
  memset(b->pixels, 0, (size_t)b->height * (size_t)b->stride);
}

const uint32_t *lagscope__hud_canvas_pixels(lagscope__hud_canvas *canvas, int *width, int *height,
                                          int *stride_bytes) {
  cg_backend *b = canvas->backend;
  CGContextFlush(b->cg);
  if (width != NULL) *width = b->width;
  if (height != NULL) *height = b->height;
  if (stride_bytes != NULL) *stride_bytes = b->stride;
  return b->pixels;
}
