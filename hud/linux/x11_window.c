/* The X11 overlay's window (see x11_overlay.c): made once, input-transparent; the program's
 * window it follows, found by _NET_WM_PID; and its place, over that window's corner and stacked
 * just above it, or above the program's own window highest over that corner (a dialog:
 * stack_sibling), never over another program's window. All on the overlay's thread, over its
 * own connection; each call blocks on round trips to the server. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "x11_private.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/shape.h>
#include <xcb/xfixes.h>

typedef lagscope__hud_x11_overlay overlay;

/* ---- making it ---------------------------------------------------------------------------------- */

/* A 32-bit TrueColor visual, or 0. */
static xcb_visualid_t argb_visual(overlay *o) {
  for (xcb_depth_iterator_t d = xcb_screen_allowed_depths_iterator(o->screen); d.rem;
       xcb_depth_next(&d)) {
    if (d.data->depth != 32) continue;
    for (xcb_visualtype_iterator_t v = xcb_depth_visuals_iterator(d.data); v.rem;
         xcb_visualtype_next(&v))
      if (v.data->_class == XCB_VISUAL_CLASS_TRUE_COLOR) return v.data->visual_id;
  }
  return 0;
}

int lagscope__hud_x11_has_compositor(overlay *o) {
  if (o->cm_selection == XCB_ATOM_NONE) return 0;
  xcb_get_selection_owner_reply_t *r =
      xcb_get_selection_owner_reply(o->c, xcb_get_selection_owner(o->c, o->cm_selection), NULL);
  int owned = r != NULL && r->owner != XCB_WINDOW_NONE;
  free(r);
  return owned;
}

int lagscope__hud_x11_make_window(overlay *o) {
  xcb_visualid_t visual = argb_visual(o);
  xcb_colormap_t colormap = 0;
  o->depth = visual != 0 ? 32 : o->screen->root_depth;
  if (visual != 0) {
    colormap = xcb_generate_id(o->c);
    xcb_create_colormap(o->c, XCB_COLORMAP_ALLOC_NONE, colormap, o->screen->root, visual);
  } else {
    visual = o->screen->root_visual;
  }
  o->window = xcb_generate_id(o->c);
  /* No background: the server never clears it to black; what it loses it tells (Expose). */
  uint32_t values[5] = {XCB_BACK_PIXMAP_NONE, 0, 1, XCB_EVENT_MASK_EXPOSURE, colormap};
  uint32_t mask = XCB_CW_BACK_PIXMAP | XCB_CW_BORDER_PIXEL | XCB_CW_OVERRIDE_REDIRECT |
                  XCB_CW_EVENT_MASK;
  if (colormap != 0) mask |= XCB_CW_COLORMAP;
  xcb_create_window(o->c, o->depth, o->window, o->screen->root, 0, 0, 1, 1, 0,
                    XCB_WINDOW_CLASS_INPUT_OUTPUT, visual, mask, values);
  o->gc = xcb_generate_id(o->c);
  xcb_create_gc(o->c, o->gc, o->window, 0, NULL);
  static const char title[] = "lagscope HUD";
  xcb_change_property(o->c, XCB_PROP_MODE_REPLACE, o->window, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
                      8, sizeof(title) - 1, title);
  /* Input-transparent: an empty input region (XFixes 2.0 needs its version asked first). */
  xcb_xfixes_query_version_reply_t *v =
      xcb_xfixes_query_version_reply(o->c, xcb_xfixes_query_version(o->c, 5, 0), NULL);
  int xfixes = v != NULL && v->major_version >= 2;
  free(v);
  if (!xfixes) return 0; /* a window that ate the program's clicks: none at all */
  xcb_xfixes_region_t empty = xcb_generate_id(o->c);
  xcb_xfixes_create_region(o->c, empty, 0, NULL);
  xcb_xfixes_set_window_shape_region(o->c, o->window, XCB_SHAPE_SK_INPUT, 0, 0, empty);
  xcb_xfixes_destroy_region(o->c, empty);
  return 1;
}

/* ---- the program's window, found ---------------------------------------------------------------- */

/* The pid of a window's client (_NET_WM_PID), or 0. */
static uint32_t window_pid(overlay *o, xcb_window_t w) {
  xcb_get_property_reply_t *r = xcb_get_property_reply(
      o->c, xcb_get_property(o->c, 0, w, o->wm_pid, XCB_ATOM_CARDINAL, 0, 1), NULL);
  uint32_t pid = 0;
  if (r != NULL && r->format == 32 && xcb_get_property_value_length(r) >= 4)
    memcpy(&pid, xcb_get_property_value(r), 4);
  free(r);
  return pid;
}

/* The window's ancestor that is a child of the root (a window manager's frame, or itself). */
xcb_window_t lagscope__hud_x11_top_of(overlay *o, xcb_window_t w) {
  for (int depth = 0; depth < 16; depth++) {
    xcb_query_tree_reply_t *r = xcb_query_tree_reply(o->c, xcb_query_tree(o->c, w), NULL);
    if (r == NULL) return XCB_WINDOW_NONE;
    xcb_window_t parent = r->parent;
    free(r);
    if (parent == o->screen->root || parent == XCB_WINDOW_NONE) return w;
    w = parent;
  }
  return w;
}

/* 1 when w is viewable; its size into width, height. */
int lagscope__hud_x11_viewable(overlay *o, xcb_window_t w, int *width, int *height) {
  xcb_get_window_attributes_reply_t *a =
      xcb_get_window_attributes_reply(o->c, xcb_get_window_attributes(o->c, w), NULL);
  int shown = a != NULL && a->map_state == XCB_MAP_STATE_VIEWABLE && !a->override_redirect;
  free(a);
  if (!shown) return 0;
  xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(o->c, xcb_get_geometry(o->c, w), NULL);
  if (g == NULL) return 0;
  *width = g->width;
  *height = g->height;
  free(g);
  return 1;
}

/* The program's biggest viewable window with its pid, among the window manager's clients or,
 * without one, the root's children; else the window its GL swaps drew. */
xcb_window_t lagscope__hud_x11_find_app_window(overlay *o) {
  xcb_window_t *list = NULL;
  int count = 0;
  void *reply = NULL;
  xcb_get_property_reply_t *p = xcb_get_property_reply(
      o->c, xcb_get_property(o->c, 0, o->screen->root, o->client_list, XCB_ATOM_WINDOW, 0, 4096),
      NULL);
  if (p != NULL && p->format == 32 && xcb_get_property_value_length(p) > 0) {
    list = xcb_get_property_value(p);
    count = xcb_get_property_value_length(p) / 4;
    reply = p;
  } else {
    free(p);
    xcb_query_tree_reply_t *t =
        xcb_query_tree_reply(o->c, xcb_query_tree(o->c, o->screen->root), NULL);
    if (t != NULL) {
      list = xcb_query_tree_children(t);
      count = xcb_query_tree_children_length(t);
    }
    reply = t;
  }
  xcb_window_t best = XCB_WINDOW_NONE;
  long best_area = 0;
  uint32_t self = (uint32_t)getpid();
  for (int i = 0; i < count; i++) {
    int w, h;
    if (list[i] == o->window || window_pid(o, list[i]) != self || !lagscope__hud_x11_viewable(o, list[i], &w, &h))
      continue;
    if ((long)w * h > best_area) {
      best = list[i];
      best_area = (long)w * h;
    }
  }
  free(reply);
  int w, h;
  xcb_window_t seen = (xcb_window_t)lagscope__hud_x11_window_seen();
  if (best == XCB_WINDOW_NONE && seen != XCB_WINDOW_NONE && lagscope__hud_x11_viewable(o, seen, &w, &h))
    best = seen; /* a program that sets no _NET_WM_PID (plain Xlib, glxgears) */
  return best;
}

/* ---- stacked above it ---------------------------------------------------------------------------- */

/* The top-level windows (children of the root) that hold the program's clients: a window
 * manager's frames, found from its _NET_CLIENT_LIST (the clients with our _NET_WM_PID), at most
 * max into tops; their count. A frame holds many windows of the manager's own (openbox: 56, the
 * client the last), so it is not told by its children. The pids are asked all at once.
 * Allocates (and frees). */
#define OWN_TOPS_MAX 16
static int own_tops(overlay *o, uint32_t self, xcb_window_t *tops, int max) {
  xcb_get_property_reply_t *p = xcb_get_property_reply(
      o->c, xcb_get_property(o->c, 0, o->screen->root, o->client_list, XCB_ATOM_WINDOW, 0, 4096),
      NULL);
  int count = p != NULL && p->format == 32 ? xcb_get_property_value_length(p) / 4 : 0, found = 0;
  xcb_get_property_cookie_t *asked = count > 0 ? lagscope__alloc((size_t)count * sizeof(*asked)) : NULL;
  if (asked != NULL) {
    xcb_window_t *list = xcb_get_property_value(p);
    for (int i = 0; i < count; i++)
      asked[i] = xcb_get_property(o->c, 0, list[i], o->wm_pid, XCB_ATOM_CARDINAL, 0, 1);
    for (int i = 0; i < count; i++) {
      xcb_get_property_reply_t *r = xcb_get_property_reply(o->c, asked[i], NULL);
      uint32_t pid = 0;
      if (r != NULL && r->format == 32 && xcb_get_property_value_length(r) >= 4)
        memcpy(&pid, xcb_get_property_value(r), 4);
      free(r);
      if (pid != self || found == max) continue;
      xcb_window_t top = lagscope__hud_x11_top_of(o, list[i]);
      if (top != XCB_WINDOW_NONE) tops[found++] = top;
    }
    lagscope__dealloc(asked);
  }
  free(p);
  return found;
}

/* 1 when w, a child of the root, is the program's: its _NET_WM_PID, that of a child of it (a
 * reparenting window manager's frame with few windows), or one of tops (own_tops). */
static int is_own(overlay *o, xcb_window_t w, uint32_t self, const xcb_window_t *tops, int top_count) {
  for (int i = 0; i < top_count; i++)
    if (tops[i] == w) return 1;
  if (window_pid(o, w) == self) return 1;
  xcb_query_tree_reply_t *t = xcb_query_tree_reply(o->c, xcb_query_tree(o->c, w), NULL);
  if (t == NULL) return 0;
  xcb_window_t *children = xcb_query_tree_children(t);
  int n = xcb_query_tree_children_length(t), own = 0;
  for (int i = 0; i < n && i < 8 && !own; i++) own = window_pid(o, children[i]) == self;
  free(t);
  return own;
}

/* 1 when w, a child of the root whose attributes came in a (NULL: none), is viewable
 * (override-redirect too: the program's menus) and meets the rectangle at x, y (the root's
 * coordinates). Frees a. */
static int covers(overlay *o, xcb_window_t w, xcb_get_window_attributes_reply_t *a, int x, int y,
                  int width, int height) {
  int shown = a != NULL && a->map_state == XCB_MAP_STATE_VIEWABLE;
  free(a);
  if (!shown) return 0;
  xcb_get_geometry_reply_t *g = xcb_get_geometry_reply(o->c, xcb_get_geometry(o->c, w), NULL);
  if (g == NULL) return 0;
  int right = g->x + g->width + 2 * g->border_width, bottom = g->y + g->height + 2 * g->border_width;
  int meets = g->x < x + width && x < right && g->y < y + height && y < bottom;
  free(g);
  return meets;
}

/* The window to stack the overlay just above: the followed window's top-level one, or the
 * program's own window highest above it that meets the overlay's rectangle (its dialog over the
 * main window, stuck with it: issue 45). The walk up the stack stops at the first window of
 * another program's over that rectangle: that one hides the HUD, as it hides the program. The
 * windows' attributes are asked all at once (one round trip, not one each). Allocates. */
static xcb_window_t stack_sibling(overlay *o, int x, int y, int width, int height) {
  xcb_query_tree_reply_t *t =
      xcb_query_tree_reply(o->c, xcb_query_tree(o->c, o->screen->root), NULL);
  if (t == NULL) return o->app_top;
  xcb_window_t *children = xcb_query_tree_children(t); /* bottom to top */
  int n = xcb_query_tree_children_length(t), first = 0;
  while (first < n && children[first] != o->app_top) first++;
  first++;
  xcb_window_t sibling = o->app_top, tops[OWN_TOPS_MAX];
  uint32_t self = (uint32_t)getpid();
  int top_count = n > first ? own_tops(o, self, tops, OWN_TOPS_MAX) : 0;
  xcb_get_window_attributes_cookie_t *asked =
      n > first ? lagscope__alloc((size_t)(n - first) * sizeof(*asked)) : NULL;
  if (asked != NULL) {
    for (int i = first; i < n; i++) asked[i - first] = xcb_get_window_attributes(o->c, children[i]);
    int i = first, stop = 0;
    for (; i < n && !stop; i++) {
      xcb_get_window_attributes_reply_t *a =
          xcb_get_window_attributes_reply(o->c, asked[i - first], NULL);
      if (children[i] == o->window) {
        free(a);
        continue;
      }
      if (!covers(o, children[i], a, x, y, width, height)) continue;
      if (is_own(o, children[i], self, tops, top_count))
        sibling = children[i];
      else
        stop = 1;
    }
    for (; i < n; i++) xcb_discard_reply(o->c, asked[i - first].sequence); /* not read */
    lagscope__dealloc(asked);
  }
  free(t);
  return sibling;
}

/* Over the followed window's corner, just above its top-level window in the stack, or above
 * the program's own window that covers that corner (stack_sibling). */
void lagscope__hud_x11_place(overlay *o, const lagscope_hud_image *image, int app_width,
                             int app_height) {
  xcb_translate_coordinates_reply_t *t = xcb_translate_coordinates_reply(
      o->c, xcb_translate_coordinates(o->c, o->app, o->screen->root, 0, 0), NULL);
  if (t == NULL) return;
  int margin = (int)(8 * image->scale);
  int right = image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int x = t->dst_x + (right ? app_width - margin - image->width : margin);
  int y = t->dst_y + (bottom ? app_height - margin - image->height : margin);
  free(t);
  uint32_t values[6] = {(uint32_t)x, (uint32_t)y, (uint32_t)image->width,
                        (uint32_t)image->height,
                        stack_sibling(o, x, y, image->width, image->height), XCB_STACK_MODE_ABOVE};
  xcb_configure_window(o->c, o->window,
                       XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y | XCB_CONFIG_WINDOW_WIDTH |
                           XCB_CONFIG_WINDOW_HEIGHT | XCB_CONFIG_WINDOW_SIBLING |
                           XCB_CONFIG_WINDOW_STACK_MODE,
                       values);
  if (image->width != o->width || image->height != o->height) o->shown = 0; /* cleared: redraw */
  o->x = x, o->y = y, o->width = image->width, o->height = image->height;
}
