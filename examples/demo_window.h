/*
 * The demo's window (SDL2): moving content drawn each frame with lagscope's HUD composited over
 * it, and the window's events serviced from the demo's main loop. Everything here runs on the
 * main thread except demo_window_wake(). Built only when CMake finds SDL2 (DEMO_HAVE_WINDOW).
 */
#ifndef DEMO_WINDOW_H
#define DEMO_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#define DEMO_WINDOW_WIDTH 800
#define DEMO_WINDOW_HEIGHT 480

typedef struct demo_window demo_window;

/* What the user asked for while the loop waited. */
typedef struct demo_window_input {
  int stall; /* the `s` key: stall once */
  int quit;  /* `q`, Escape or the window's close button */
} demo_window_input;

/* Opens the window. NULL when there is no display (or SDL fails), with the reason in why.
 * expanded: the HUD's initial state, toggled by the `h` key. */
demo_window *demo_window_open(const char *title, int expanded, char *why, size_t why_size);

/* Waits up to wait_ns for window events or demo_window_wake(), handles them (keys set *in,
 * `h` toggles the HUD with lagscope_hud_set_expanded) and returns. */
void demo_window_wait(demo_window *w, uint64_t wait_ns, demo_window_input *in);

/* Draws one frame: the moving content at time now_ns, then the latest HUD image over it, and
 * presents it (no vsync: the loop paces itself). */
void demo_window_draw(demo_window *w, uint64_t now_ns);

/* Any thread, e.g. the post_main hook: makes a pending demo_window_wait return soon.
 * Does nothing unless a window is open. */
void demo_window_wake(void);

/* Closes the window and SDL. Call after lagscope_stop, so that no post_main wakes it. */
void demo_window_close(demo_window *w);

#endif
