/* The drawing into the X11 overlay's window (see x11_overlay.c): one pass of the thread finds
 * or follows the program's window, takes the latest image and puts it, when it changed, in
 * bands that fit a request; without a compositor, the window's shape is the image's opaque
 * pixels. */
#include "x11_private.h"

#include <xcb/shape.h>

typedef lagscope__hud_x11_overlay overlay;

static void hide(overlay *o) {
  if (!o->mapped) return;
  xcb_unmap_window(o->c, o->window);
  o->mapped = 0;
}

/* Without a compositor the window's alpha is not blended: its shape is the image's pixels
 * that are not transparent, as rectangles of runs per row. */
static void shape_to(overlay *o, const lagscope_hud_image *image) {
  int n = 0;
  for (int y = 0; y < image->height && n < LAGSCOPE__HUD_X11_MAX_RECTS; y++) {
    const uint32_t *row = (const uint32_t *)((const char *)image->pixels + (size_t)y * image->stride);
    for (int x = 0; x < image->width && n < LAGSCOPE__HUD_X11_MAX_RECTS;) {
      while (x < image->width && (row[x] >> 24) == 0) x++;
      int start = x;
      while (x < image->width && (row[x] >> 24) != 0) x++;
      if (x > start) o->rects[n++] = (xcb_rectangle_t){(int16_t)start, (int16_t)y,
                                                       (uint16_t)(x - start), 1};
    }
  }
  xcb_shape_rectangles(o->c, XCB_SHAPE_SO_SET, XCB_SHAPE_SK_BOUNDING, XCB_CLIP_ORDERING_UNSORTED,
                       o->window, 0, 0, (uint32_t)n, o->rects);
}

/* The image, in bands that fit one request (ZPixmap rows of 32-bit pixels are width * 4). */
static void put(overlay *o, const lagscope_hud_image *image) {
  uint32_t max_bytes = xcb_get_maximum_request_length(o->c) * 4u - 64;
  int rows = (int)(max_bytes / (uint32_t)image->stride); /* the copy's rows are width * 4 */
  if (rows < 1) return;
  for (int y = 0; y < image->height; y += rows) {
    int n = image->height - y < rows ? image->height - y : rows;
    const uint8_t *data = (const uint8_t *)image->pixels + (size_t)y * image->stride;
    xcb_put_image(o->c, XCB_IMAGE_FORMAT_Z_PIXMAP, o->window, o->gc, (uint16_t)image->width,
                  (uint16_t)n, 0, (int16_t)y, 0, o->depth, (uint32_t)(n * image->width * 4), data);
  }
}

/* One pass: find or follow the window, then show the latest image over it. */
void lagscope__hud_x11_update(overlay *o) {
  if (!lagscope__hud_x11_may_take(o)) {
    hide(o);
    return;
  }
  unsigned long target = atomic_load(&o->target);
  if (target != o->app_target) { /* the app named another window */
    o->app = XCB_WINDOW_NONE;
    o->app_target = target;
  }
  int app_width = 0, app_height = 0;
  if (o->app != XCB_WINDOW_NONE && !lagscope__hud_x11_viewable(o, o->app, &app_width, &app_height))
    o->app = XCB_WINDOW_NONE; /* unmapped, minimised or destroyed: found again if it comes back */
  if (o->app == XCB_WINDOW_NONE) {
    o->app = target != 0 ? (xcb_window_t)target : lagscope__hud_x11_find_app_window(o);
    if (o->app == XCB_WINDOW_NONE || !lagscope__hud_x11_viewable(o, o->app, &app_width, &app_height)) {
      o->app = XCB_WINDOW_NONE;
      hide(o);
      return;
    }
  }
  o->app_top = lagscope__hud_x11_top_of(o, o->app);
  if (o->app_top == XCB_WINDOW_NONE || !lagscope__hud_x11_take_image(o)) {
    hide(o);
    return;
  }
  lagscope__hud_x11_place(o, &o->image, app_width, app_height);
  if (!o->mapped) {
    xcb_map_window(o->c, o->window);
    o->mapped = 1;
    o->shown = 0;
  }
  if (o->image.sequence != o->shown) {
    if (o->shaped) shape_to(o, &o->image);
    put(o, &o->image);
    o->shown = o->image.sequence;
  }
}
