/* Screenshots of an X screen for the tests: see screen.h. */
#define _POSIX_C_SOURCE 200809L

#include "screen.h"

#include <cairo.h>
#include <X11/Xutil.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t screen_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* No X error may abort the test: a window that goes away mid-call is an answer, not a crash. */
static int screen_ignore_error(Display *d, XErrorEvent *e) {
  (void)d;
  (void)e;
  return 0;
}

Display *screen_open(const char *name, int timeout_ms) {
  uint64_t deadline = screen_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    Display *d = XOpenDisplay(name);
    if (d) {
      XSetErrorHandler(screen_ignore_error);
      return d;
    }
    if (screen_now_ns() >= deadline) return NULL;
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
}

static Window screen_find_under(Display *d, Window parent, const char *title, int depth) {
  Window root, up, *children = NULL, found = 0;
  unsigned n = 0;
  if (!XQueryTree(d, parent, &root, &up, &children, &n)) return 0;
  for (unsigned i = 0; i < n && !found; i++) {
    char *name = NULL;
    if (XFetchName(d, children[i], &name) && name) {
      XWindowAttributes a;
      if (strcmp(name, title) == 0 && XGetWindowAttributes(d, children[i], &a) &&
          a.map_state == IsViewable)
        found = children[i];
      XFree(name);
    }
    if (!found && depth > 0) found = screen_find_under(d, children[i], title, depth - 1);
  }
  if (children) XFree(children);
  return found;
}

Window screen_find_window(Display *d, const char *title) {
  return screen_find_under(d, DefaultRootWindow(d), title, 2);
}

Window screen_await_window(Display *d, const char *title, int timeout_ms) {
  uint64_t deadline = screen_now_ns() + (uint64_t)timeout_ms * 1000000u;
  Window w;
  while ((w = screen_find_window(d, title)) == 0 && screen_now_ns() < deadline) {
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return w;
}

int screen_window_origin(Display *d, Window w, int *x, int *y) {
  XWindowAttributes a;
  Window child;
  XSync(d, False);
  if (!XGetWindowAttributes(d, w, &a) || a.map_state != IsViewable) return 0;
  XTranslateCoordinates(d, w, DefaultRootWindow(d), 0, 0, x, y, &child);
  return 1;
}

int screen_shot(Display *d, Window w, shot *out) {
  XWindowAttributes a;
  if (!XGetWindowAttributes(d, w, &a)) return -1;
  return screen_shot_area(d, w, (box){0, 0, a.width, a.height}, out);
}

int screen_shot_area(Display *d, Window w, box area, shot *out) {
  memset(out, 0, sizeof *out);
  Window root = DefaultRootWindow(d), child;
  int x, y;
  if (area.x1 <= area.x0 || area.y1 <= area.y0 ||
      !XTranslateCoordinates(d, w, root, area.x0, area.y0, &x, &y, &child))
    return -1;
  XWindowAttributes a = {.width = area.x1 - area.x0, .height = area.y1 - area.y0};
  XImage *img = XGetImage(d, root, x, y, (unsigned)a.width, (unsigned)a.height, AllPlanes, ZPixmap);
  if (!img) return -1;
  out->width = a.width;
  out->height = a.height;
  out->pixels = malloc((size_t)a.width * (size_t)a.height * sizeof *out->pixels);
  if (!out->pixels) {
    XDestroyImage(img);
    return -1;
  }
  int fast = img->bits_per_pixel == 32 && img->red_mask == 0xff0000 &&
             img->green_mask == 0xff00 && img->blue_mask == 0xff &&
             img->byte_order == (*(const char *)&(int){1} ? LSBFirst : MSBFirst);
  for (int row = 0; row < a.height; row++) {
    uint32_t *dst = out->pixels + (size_t)row * (size_t)a.width;
    if (fast) {
      const uint32_t *src = (const uint32_t *)(img->data + (size_t)row * img->bytes_per_line);
      for (int col = 0; col < a.width; col++) dst[col] = src[col] & 0xffffff;
    } else {
      for (int col = 0; col < a.width; col++) {
        unsigned long p = XGetPixel(img, col, row);
        /* Scale each channel by its mask to 8 bits. */
        unsigned long masks[3] = {img->red_mask, img->green_mask, img->blue_mask};
        uint32_t rgb = 0;
        for (int c = 0; c < 3; c++) {
          unsigned long m = masks[c], v = p & m;
          while (m && !(m & 1)) {
            m >>= 1;
            v >>= 1;
          }
          rgb = rgb << 8 | (uint32_t)(m ? v * 255 / m : 0);
        }
        dst[col] = rgb;
      }
    }
  }
  XDestroyImage(img);
  out->taken_ns = screen_now_ns();
  return 0;
}

void shot_free(shot *s) {
  free(s->pixels);
  s->pixels = NULL;
}

int shot_save_png(const shot *s, const char *path) {
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, s->width, s->height);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) return -1;
  cairo_surface_flush(surface);
  unsigned char *data = cairo_image_surface_get_data(surface);
  int stride = cairo_image_surface_get_stride(surface);
  for (int row = 0; row < s->height; row++)
    memcpy(data + (size_t)row * (size_t)stride, s->pixels + (size_t)row * (size_t)s->width,
           (size_t)s->width * 4); /* RGB24 is 0x00RRGGBB in native order, as shot is */
  cairo_surface_mark_dirty(surface);
  int rc = cairo_surface_write_to_png(surface, path) == CAIRO_STATUS_SUCCESS ? 0 : -1;
  cairo_surface_destroy(surface);
  return rc;
}

static box shot_clip(const shot *s, box b) {
  if (b.x0 < 0) b.x0 = 0;
  if (b.y0 < 0) b.y0 = 0;
  if (b.x1 > s->width) b.x1 = s->width;
  if (b.y1 > s->height) b.y1 = s->height;
  return b;
}

static int box_has(box b, int x, int y) { return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1; }

long shot_count(const shot *s, box b, int (*pred)(uint32_t)) {
  b = shot_clip(s, b);
  long n = 0;
  for (int y = b.y0; y < b.y1; y++)
    for (int x = b.x0; x < b.x1; x++) n += pred(s->pixels[(size_t)y * (size_t)s->width + x]) != 0;
  return n;
}

long shot_diff(const shot *a, const shot *b, box area, int outside) {
  if (a->width != b->width || a->height != b->height) return (long)a->width * a->height;
  long n = 0;
  for (int y = 0; y < a->height; y++) {
    for (int x = 0; x < a->width; x++) {
      if (box_has(area, x, y) == outside) continue;
      size_t i = (size_t)y * (size_t)a->width + x;
      n += a->pixels[i] != b->pixels[i];
    }
  }
  return n;
}

long shot_count_color(const shot *s, uint32_t rgb, int tolerance, box excluded) {
  long n = 0;
  for (int y = 0; y < s->height; y++) {
    for (int x = 0; x < s->width; x++) {
      if (box_has(excluded, x, y)) continue;
      uint32_t p = s->pixels[(size_t)y * (size_t)s->width + x];
      n += abs(px_r(p) - px_r(rgb)) <= tolerance && abs(px_g(p) - px_g(rgb)) <= tolerance &&
           abs(px_b(p) - px_b(rgb)) <= tolerance;
    }
  }
  return n;
}

box shot_bounds(const shot *s, box b, int (*pred)(uint32_t)) {
  b = shot_clip(s, b);
  box r = {b.x1, b.y1, b.x0, b.y0};
  for (int y = b.y0; y < b.y1; y++) {
    for (int x = b.x0; x < b.x1; x++) {
      if (!pred(s->pixels[(size_t)y * (size_t)s->width + x])) continue;
      if (x < r.x0) r.x0 = x;
      if (y < r.y0) r.y0 = y;
      if (x + 1 > r.x1) r.x1 = x + 1;
      if (y + 1 > r.y1) r.y1 = y + 1;
    }
  }
  return r;
}

int shot_longest_run(const shot *s, box b, int (*pred)(uint32_t), int *row) {
  b = shot_clip(s, b);
  int best = 0;
  if (row) *row = -1;
  for (int y = b.y0; y < b.y1; y++) {
    int run = 0;
    for (int x = b.x0; x < b.x1; x++) {
      run = pred(s->pixels[(size_t)y * (size_t)s->width + x]) ? run + 1 : 0;
      if (run > best) {
        best = run;
        if (row) *row = y;
      }
    }
  }
  return best;
}
