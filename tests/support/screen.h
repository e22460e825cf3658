/*
 * Screenshots of an X screen for the tests (integration/window, integration/attach): finds a
 * top-level window by its title, copies
 * the screen's pixels where it is (XGetImage on the root window: what is really on screen, not
 * what the app drew off screen), saves them as PNG (cairo) and measures them.
 */
#ifndef WINDOW_SCREEN_H
#define WINDOW_SCREEN_H

#include <stdint.h>

#include <X11/Xlib.h>

/* Pixels as 0x00RRGGBB, row after row. */
typedef struct shot {
  int width, height;
  uint32_t *pixels;
  uint64_t taken_ns; /* CLOCK_MONOTONIC, when the copy finished */
} shot;

typedef struct box {
  int x0, y0, x1, y1; /* x1, y1 exclusive; empty when x1 <= x0 */
} box;

/* Opens the display, retrying until timeout_ms. NULL when it never answered. */
Display *screen_open(const char *name, int timeout_ms);

/* The top-level window titled title (WM_NAME), or 0. */
Window screen_find_window(Display *d, const char *title);
/* The same, looked for until it is there; 0 after timeout_ms. */
Window screen_await_window(Display *d, const char *title, int timeout_ms);
/* Window w's top-left corner on the root; 0 when it is not viewable (or gone). */
int screen_window_origin(Display *d, Window w, int *x, int *y);

/* Copies the screen's pixels under window w. 0 or -1. */
int screen_shot(Display *d, Window w, shot *out);
/* Only the part of window w in area (window coordinates); the shot is area's size. */
int screen_shot_area(Display *d, Window w, box area, shot *out);
void shot_free(shot *s);
int shot_save_png(const shot *s, const char *path);

static inline int px_r(uint32_t p) { return (int)(p >> 16 & 0xff); }
static inline int px_g(uint32_t p) { return (int)(p >> 8 & 0xff); }
static inline int px_b(uint32_t p) { return (int)(p & 0xff); }

/* Pixels in b (clipped to s) for which pred holds. */
long shot_count(const shot *s, box b, int (*pred)(uint32_t));
/* Pixels that differ between a and b (same size) inside area, or outside it when outside. */
long shot_diff(const shot *a, const shot *b, box area, int outside);
/* Pixels within tolerance of rgb, outside the excluded box. */
long shot_count_color(const shot *s, uint32_t rgb, int tolerance, box excluded);
/* The bounding box of the pixels in b for which pred holds (empty when none). */
box shot_bounds(const shot *s, box b, int (*pred)(uint32_t));
/* The longest horizontal run of pixels for which pred holds, in b; *row gets its row. */
int shot_longest_run(const shot *s, box b, int (*pred)(uint32_t), int *row);

#endif
