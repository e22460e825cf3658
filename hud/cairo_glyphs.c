/*
 * The cairo canvas's glyph images (see cairo_glyphs.h for why): an open-addressed table from
 * (glyph, device size, weight) to an A8 image of the glyph's outline filled at a whole pixel,
 * with a pixel of margin round its ink. The table doubles up to TABLE_MOST entries; full, it
 * starts again empty (a HUD shows a few dozen glyphs; only a stream of new names fills it).
 * The images' bytes are lagscope__alloc's (counted in monitor_memory_bytes); cairo only lends
 * a surface over them while an outline is filled.
 */
#include "cairo_glyphs.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TABLE_FIRST 64u
#define TABLE_MOST 1024u

typedef struct glyph_image {
  unsigned long index;
  double size; /* the font's device size: its scale matrix's xx */
  int weight;
  int used;
  int x, y;              /* the image's top left, from the glyph's origin, device pixels */
  int width, height, stride;
  unsigned char *pixels; /* its coverage, a byte a pixel (lagscope__alloc); NULL: no ink */
} glyph_image;

struct lagscope__hud_glyphs {
  glyph_image *table;
  size_t capacity, count;
};

lagscope__hud_glyphs *lagscope__hud_glyphs_new(void) {
  return lagscope__alloc(sizeof(lagscope__hud_glyphs));
}

/* A */
static void drop_image(glyph_image *e) {
  if (e->pixels != NULL) lagscope__dealloc(e->pixels);
}

/* Every image and the table freed: the set as new. A */
static void drop_all(lagscope__hud_glyphs *g) {
  for (size_t i = 0; i < g->capacity; i++)
    if (g->table[i].used) drop_image(&g->table[i]);
  lagscope__dealloc(g->table);
  g->table = NULL;
  g->capacity = g->count = 0;
}

void lagscope__hud_glyphs_free(lagscope__hud_glyphs *g) {
  if (g == NULL) return;
  drop_all(g);
  lagscope__dealloc(g);
}


/* ---- the table -------------------------------------------------------------------------- */

/* The glyph's slot: its entry's, or the free one where it would go. F */
static size_t slot_of(const lagscope__hud_glyphs *g, unsigned long index, double size,
                      int weight) {
  uint64_t h = (uint64_t)index * 0x9E3779B97F4A7C15u;
  h ^= (uint64_t)(size * 64.0) * 0xC2B2AE3D27D4EB4Fu ^ (uint64_t)weight;
  size_t at = (size_t)(h >> 32) & (g->capacity - 1);
  while (g->table[at].used &&
         !(g->table[at].index == index && g->table[at].size == size && g->table[at].weight == weight))
    at = (at + 1) & (g->capacity - 1);
  return at;
}

/* Room for one more entry: the table made, doubled, or (at its most) emptied. A; -1: no memory */
static int make_room(lagscope__hud_glyphs *g) {
  if (g->capacity != 0 && (g->count + 1) * 4 <= g->capacity * 3) return 0;
  if (g->capacity >= TABLE_MOST) drop_all(g);
  size_t capacity = g->capacity == 0 ? TABLE_FIRST : g->capacity * 2;
  glyph_image *table = lagscope__alloc(capacity * sizeof *table);
  if (table == NULL) return -1;
  glyph_image *old = g->table;
  size_t old_capacity = g->capacity;
  g->table = table;
  g->capacity = capacity;
  for (size_t i = 0; i < old_capacity; i++)
    if (old[i].used)
      g->table[slot_of(g, old[i].index, old[i].size, old[i].weight)] = old[i];
  lagscope__dealloc(old);
  return 0;
}

/* ---- one glyph's image ------------------------------------------------------------------ */

/* The glyph's ink in device pixels (its origin at 0,0), a pixel of margin round it, into e. F */
static void place_image(cairo_t *cr, cairo_scaled_font_t *font, unsigned long index,
                        glyph_image *e) {
  cairo_glyph_t glyph = {index, 0.0, 0.0};
  cairo_text_extents_t ink;
  cairo_scaled_font_glyph_extents(font, &glyph, 1, &ink);
  double x0 = ink.x_bearing, y0 = ink.y_bearing;
  double x1 = x0 + ink.width, y1 = y0 + ink.height;
  cairo_user_to_device_distance(cr, &x0, &y0);
  cairo_user_to_device_distance(cr, &x1, &y1);
  e->x = (int)floor(fmin(x0, x1)) - 1;
  e->y = (int)floor(fmin(y0, y1)) - 1;
  e->width = ink.width > 0.0 && ink.height > 0.0 ? (int)ceil(fmax(x0, x1)) + 1 - e->x : 0;
  e->height = e->width > 0 ? (int)ceil(fmax(y0, y1)) + 1 - e->y : 0;
}

/* Fills the glyph's outline into its coverage bytes, with cr's matrix and scaled font, through
 * a cairo image over them that lasts only as long. A */
static int fill_image(cairo_t *cr, cairo_scaled_font_t *font, unsigned long index,
                      glyph_image *e) {
  e->stride = cairo_format_stride_for_width(CAIRO_FORMAT_A8, e->width);
  if (e->stride <= 0 || e->width > 4096 || e->height > 4096) return -1;
  e->pixels = lagscope__alloc((size_t)e->stride * (size_t)e->height);
  if (e->pixels == NULL) return -1;
  cairo_surface_t *image = cairo_image_surface_create_for_data(e->pixels, CAIRO_FORMAT_A8, e->width,
                                                               e->height, e->stride);
  cairo_t *t = cairo_create(image);
  cairo_matrix_t matrix;
  cairo_get_matrix(cr, &matrix);
  cairo_set_matrix(t, &matrix);
  cairo_set_scaled_font(t, font);
  cairo_glyph_t glyph = {index, -e->x, -e->y}; /* the origin where the image's 0,0 is at e */
  cairo_device_to_user(t, &glyph.x, &glyph.y);
  cairo_glyph_path(t, &glyph, 1);
  cairo_fill(t);
  int ok = cairo_status(t) == CAIRO_STATUS_SUCCESS;
  cairo_destroy(t);
  cairo_surface_flush(image);
  ok = ok && cairo_surface_status(image) == CAIRO_STATUS_SUCCESS;
  cairo_surface_destroy(image);
  return ok ? 0 : -1;
}

/* The glyph's entry, its image made when new; NULL when it cannot be made. A */
static const glyph_image *image_of(lagscope__hud_glyphs *g, cairo_t *cr, cairo_scaled_font_t *font,
                                   double size, int weight, unsigned long index) {
  if (g->capacity != 0) {
    glyph_image *e = &g->table[slot_of(g, index, size, weight)];
    if (e->used) return e;
  }
  if (make_room(g) != 0) return NULL;
  glyph_image e = {index, size, weight, 1, 0, 0, 0, 0, 0, NULL};
  place_image(cr, font, index, &e);
  if (e.width > 0 && fill_image(cr, font, index, &e) != 0) {
    drop_image(&e);
    return NULL;
  }
  g->count++;
  glyph_image *slot = &g->table[slot_of(g, index, size, weight)];
  *slot = e;
  return slot;
}

/* ---- a run of glyphs -------------------------------------------------------------------- */

/* The glyph's entry, NULL when it has none. F */
static const glyph_image *find(const lagscope__hud_glyphs *g, double size, int weight,
                               unsigned long index) {
  if (g->capacity == 0) return NULL;
  const glyph_image *e = &g->table[slot_of(g, index, size, weight)];
  return e->used ? e : NULL;
}

/* The target's pixels and where drawing may land (the clip's box, in device pixels). */
typedef struct target {
  unsigned char *pixels;
  int stride;
  int x0, y0, x1, y1;
  uint32_t color[4]; /* premultiplied, 0..255: a, r, g, b */
} target;

/* a * b / 255, rounded, as pixman's MUL_UN8. F */
static uint32_t mul_un8(uint32_t a, uint32_t b) {
  uint32_t t = a * b + 0x80u;
  return ((t >> 8) + t) >> 8;
}

/* A colour channel as cairo hands it to pixman: 16 bits, premultiplied, then its high byte. F */
static uint32_t channel(double value, double alpha) {
  double v = value * alpha;
  v = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
  return (uint32_t)(v * 65535.0 + 0.5) >> 8;
}

/* The target of cr when it is an ARGB32 image with a solid source; -1 otherwise. F */
static int target_of(cairo_t *cr, target *t) {
  cairo_surface_t *surface = cairo_get_target(cr);
  double r, g, b, a;
  if (cairo_surface_get_type(surface) != CAIRO_SURFACE_TYPE_IMAGE ||
      cairo_image_surface_get_format(surface) != CAIRO_FORMAT_ARGB32 ||
      cairo_pattern_get_rgba(cairo_get_source(cr), &r, &g, &b, &a) != CAIRO_STATUS_SUCCESS)
    return -1;
  cairo_surface_flush(surface);
  t->pixels = cairo_image_surface_get_data(surface);
  t->stride = cairo_image_surface_get_stride(surface);
  double x0, y0, x1, y1;
  cairo_clip_extents(cr, &x0, &y0, &x1, &y1);
  cairo_user_to_device(cr, &x0, &y0);
  cairo_user_to_device(cr, &x1, &y1);
  /* Pixels whose centres are inside the clip's box; the HUD clips to rectangles only. */
  t->x0 = (int)fmax(floor(fmin(x0, x1) + 0.5), 0.0);
  t->y0 = (int)fmax(floor(fmin(y0, y1) + 0.5), 0.0);
  t->x1 = (int)fmin(floor(fmax(x0, x1) + 0.5), cairo_image_surface_get_width(surface));
  t->y1 = (int)fmin(floor(fmax(y0, y1) + 0.5), cairo_image_surface_get_height(surface));
  t->color[0] = channel(1.0, a);
  t->color[1] = channel(r, a);
  t->color[2] = channel(g, a);
  t->color[3] = channel(b, a);
  return t->pixels != NULL ? 0 : -1;
}

/* The colour through the glyph's coverage, over the target, with its top left at (x, y): what
 * pixman's OVER of a solid source through an A8 mask computes. F */
static void stamp(const target *t, const glyph_image *e, int x, int y) {
  int from_x = x < t->x0 ? t->x0 - x : 0, to_x = x + e->width > t->x1 ? t->x1 - x : e->width;
  int from_y = y < t->y0 ? t->y0 - y : 0, to_y = y + e->height > t->y1 ? t->y1 - y : e->height;
  for (int row = from_y; row < to_y; row++) {
    const unsigned char *m = e->pixels + (size_t)row * (size_t)e->stride;
    uint32_t *d = (uint32_t *)(void *)(t->pixels + (size_t)(y + row) * (size_t)t->stride) + x;
    for (int col = from_x; col < to_x; col++) {
      if (m[col] == 0) continue;
      uint32_t sa = mul_un8(t->color[0], m[col]), keep = 255u - sa, out = 0, dst = d[col];
      for (int shift = 24, i = 0; shift >= 0; shift -= 8, i++) {
        uint32_t v = (i == 0 ? sa : mul_un8(t->color[i], m[col])) +
                     mul_un8((dst >> shift) & 0xFFu, keep);
        out |= (v > 255u ? 255u : v) << shift;
      }
      d[col] = out;
    }
  }
}

void lagscope__hud_glyphs_show(lagscope__hud_glyphs *g, cairo_t *cr, int weight,
                               const cairo_glyph_t *glyphs, int count) {
  cairo_scaled_font_t *font = cairo_scaled_font_reference(cairo_get_scaled_font(cr));
  cairo_matrix_t scale, user;
  cairo_scaled_font_get_scale_matrix(font, &scale);
  cairo_get_matrix(cr, &user);
  for (int i = 0; i < count; i++) image_of(g, cr, font, scale.xx, weight, glyphs[i].index);
  target t = {0};
  int stamped = target_of(cr, &t) == 0;
  for (int i = 0; stamped && i < count; i++) {
    const glyph_image *e = find(g, scale.xx, weight, glyphs[i].index);
    double x = glyphs[i].x, y = glyphs[i].y;
    cairo_matrix_transform_point(&user, &x, &y);
    if (e != NULL && e->pixels != NULL) stamp(&t, e, (int)round(x) + e->x, (int)round(y) + e->y);
  }
  if (stamped) cairo_surface_mark_dirty(cairo_get_target(cr));
  for (int i = 0; i < count; i++) { /* no image (no memory, or not an image): the outline */
    if (stamped && find(g, scale.xx, weight, glyphs[i].index) != NULL) continue;
    cairo_glyph_t one = {glyphs[i].index, glyphs[i].x, glyphs[i].y};
    cairo_user_to_device(cr, &one.x, &one.y);
    one.x = round(one.x);
    one.y = round(one.y);
    cairo_device_to_user(cr, &one.x, &one.y);
    cairo_new_path(cr);
    cairo_glyph_path(cr, &one, 1);
    cairo_fill(cr);
  }
  cairo_scaled_font_destroy(font);
}
